#version 450
// Dense convolution, 4 output channels x 4 output pixels (along x) per thread: the input value is
// loaded once for 4 channels, the weights (HWIO, O contiguous) once as a vec4 for 4 pixels. Needs
// OC % 4 == 0 and the weights 16-byte aligned. Push constants as conv.comp (p[19] = 0).
#include "common.glsl"
#ifdef HR_FP16
layout(std430, binding = 0) readonly buffer Dev4 { f16vec4 d4[]; };
layout(std430, binding = 3) readonly buffer Dev4w { vec4 d4w[]; };
vec4 w4(bool f, int i) { return f ? d4w[i - F32 / 4] : vec4(d4[i]); }
#else
layout(std430, binding = 0) readonly buffer Dev4 { vec4 d4[]; };
vec4 w4(bool f, int i) { return d4[i]; }
#endif
void main() {
  bool fx = f32(1), fw = f32(2), fb = f32(3), fo = f32(4);
  uint i = gid();
  if (i >= uint(p[0])) return;
  int OC = p[10], OW = p[9], OH = p[8], H = p[5], W = p[6], C = p[7], KH = p[11], KW = p[12];
  int OC4 = OC / 4, OW4 = (OW + 3) / 4;
  int oc4 = int(i % uint(OC4)); uint t = i / uint(OC4);
  int ox0 = int(t % uint(OW4)) * 4; t /= uint(OW4);
  int oy = int(t % uint(OH)); int n = int(t / uint(OH));
  vec4 b = p[3] >= 0 ? vec4(ldu(fb, p[3] + oc4 * 4), ldu(fb, p[3] + oc4 * 4 + 1), ldu(fb, p[3] + oc4 * 4 + 2), ldu(fb, p[3] + oc4 * 4 + 3)) : vec4(0.0);
  vec4 a0 = b, a1 = b, a2 = b, a3 = b;
  for (int ky = 0; ky < KH; ky++) {
    int iy = oy * p[13] - p[17] + ky * p[15];
    if (iy < 0 || iy >= H) continue;
    for (int kx = 0; kx < KW; kx++) {
      int ix0 = ox0 * p[14] - p[18] + kx * p[16], sx = p[14];
      int ix1 = ix0 + sx, ix2 = ix1 + sx, ix3 = ix2 + sx;
      float m0 = (ix0 >= 0 && ix0 < W) ? 1.0 : 0.0, m1 = (ix1 >= 0 && ix1 < W) ? 1.0 : 0.0;
      float m2 = (ix2 >= 0 && ix2 < W) ? 1.0 : 0.0, m3 = (ix3 >= 0 && ix3 < W) ? 1.0 : 0.0;
      int row = p[1] + (n * H + iy) * W * C;
      int b0 = row + clamp(ix0, 0, W - 1) * C, b1 = row + clamp(ix1, 0, W - 1) * C;
      int b2 = row + clamp(ix2, 0, W - 1) * C, b3 = row + clamp(ix3, 0, W - 1) * C;
      int wb = (p[2] + (ky * KW + kx) * C * OC) / 4 + oc4;
      for (int c = 0; c < C; c++) {
        vec4 wv = w4(fw, wb + c * OC4);
        a0 += (ldu(fx, b0 + c) * m0) * wv;
        a1 += (ldu(fx, b1 + c) * m1) * wv;
        a2 += (ldu(fx, b2 + c) * m2) * wv;
        a3 += (ldu(fx, b3 + c) * m3) * wv;
      }
    }
  }
  int ob = ((n * OH + oy) * OW + ox0) * p[22] + p[23] + oc4 * 4, os = p[22];
  vec4 r[4] = vec4[4](a0, a1, a2, a3);
  for (int q = 0; q < 4; q++) {
    if (ox0 + q >= OW) break;
    for (int j = 0; j < 4; j++) stu(fo, p[4] + ob + q * os + j, epi(r[q][j], oc4 * 4 + j, ob + q * os + j));
  }
}
