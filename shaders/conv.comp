#version 450
// Convolution (dense or depthwise), NHWC, TF HWIO / HWCM weights, explicit pads, stride, dilation,
// bias and a clamp (fused ReLU / ReLU6); the output may be a channel slice of a wider tensor.
// p: 0 n, 1 in, 2 w, 3 bias (-1 none), 4 out, 5 H, 6 W, 7 C, 8 OH, 9 OW, 10 OC, 11 KH, 12 KW,
// 13 sh, 14 sw, 15 dh, 16 dw, 17 pt, 18 pl, 19 depthwise multiplier (0 = dense), 20 lo, 21 hi,
// 22 out channel stride, 23 out channel offset, 24 activation after the clamp (common.glsl act_post).
#include "common.glsl"
void main() {
  bool fx = f32(1), fw = f32(2), fb = f32(3), fo = f32(4);
  uint i = gid();
  if (i >= uint(p[0])) return;
  int OC = p[10], OW = p[9], OH = p[8], H = p[5], W = p[6], C = p[7], KH = p[11], KW = p[12];
  int oc = int(i % uint(OC)); uint t = i / uint(OC);
  int ox = int(t % uint(OW)); t /= uint(OW);
  int oy = int(t % uint(OH)); int n = int(t / uint(OH));
  float acc = p[3] >= 0 ? ldu(fb, p[3] + oc) : 0.0;
  int M = p[19];
  for (int ky = 0; ky < KH; ky++) {
    int iy = oy * p[13] - p[17] + ky * p[15];
    if (iy < 0 || iy >= H) continue;
    for (int kx = 0; kx < KW; kx++) {
      int ix = ox * p[14] - p[18] + kx * p[16];
      if (ix < 0 || ix >= W) continue;
      int base = p[1] + ((n * H + iy) * W + ix) * C;
      if (M > 0) {
        acc += ldu(fx, base + oc / M) * ldu(fw, p[2] + (ky * KW + kx) * OC + oc);
      } else {
        int wb = p[2] + (ky * KW + kx) * C * OC + oc;
        for (int c = 0; c < C; c++) acc += ldu(fx, base + c) * ldu(fw, wb + c * OC);
      }
    }
  }
  int oi = ((n * OH + oy) * OW + ox) * p[22] + p[23] + oc;
  stu(fo, p[4] + oi, epi(acc, oc, oi));
}
