#version 450
// Depthwise convolution, four output pixels of a row a thread (one channel; lanes along the
// channels, so loads coalesce): each weight read once for the four, and at stride 1, dilation 1
// (KW <= 8) each input row's 3 + KW values read once for all four's taps (one output a thread read
// 4 x KW). Push constants as conv.comp (p[19] = the depthwise multiplier); p[0] = outputs, the
// threads are (p[0] / OW) x ceil(OW / 4).
#include "common.glsl"
void main() {
  bool fx = f32(1), fw = f32(2), fb = f32(3), fo = f32(4);
  int OC = p[10], OW = p[9], OH = p[8], H = p[5], W = p[6], C = p[7], KH = p[11], KW = p[12], M = p[19];
  int OWB = (OW + 3) / 4;
  uint i = gid();
  if (i >= uint((p[0] / OW) * OWB)) return;
  int oc = int(i % uint(OC)); uint t = i / uint(OC);
  int ox0 = int(t % uint(OWB)) * 4; t /= uint(OWB);
  int oy = int(t % uint(OH)); int n = int(t / uint(OH));
  float b = p[3] >= 0 ? ldu(fb, p[3] + oc) : 0.0;
  float acc[4] = float[4](b, b, b, b);
  int ci = oc / M, sw = p[14], dl = p[16];
  bool unit = sw == 1 && dl == 1 && KW <= 8;
  for (int ky = 0; ky < KH; ky++) {
    int iy = oy * p[13] - p[17] + ky * p[15];
    if (iy < 0 || iy >= H) continue;
    int rb = p[1] + (n * H + iy) * W * C + ci, wb = p[2] + ky * KW * OC + oc;
    if (unit) {
      float xr[11];
      int ix0 = ox0 - p[18];
      for (int q = 0; q < 11; q++) {
        int ix = ix0 + q;
        xr[q] = (q < 3 + KW && ix >= 0 && ix < W) ? ldu(fx, rb + ix * C) : 0.0;
      }
      for (int kx = 0; kx < 8; kx++) {
        if (kx >= KW) break;
        float wk = ldu(fw, wb + kx * OC);
        for (int j = 0; j < 4; j++) acc[j] += xr[kx + j] * wk;
      }
    } else {
      for (int kx = 0; kx < KW; kx++) {
        float wk = ldu(fw, wb + kx * OC);
        for (int j = 0; j < 4; j++) {
          int ix = (ox0 + j) * sw - p[18] + kx * dl;
          if (ix >= 0 && ix < W) acc[j] += ldu(fx, rb + ix * C) * wk;
        }
      }
    }
  }
  for (int j = 0; j < 4; j++) {
    int ox = ox0 + j;
    if (ox >= OW) break;
    int oi = ((n * OH + oy) * OW + ox) * p[22] + p[23] + oc;
    stu(fo, p[4] + oi, epi(acc[j], oc, oi));
  }
}
