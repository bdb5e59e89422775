#version 450
// Dense convolution as a tiled implicit GEMM: M = output pixels, N = output channels, K = taps x
// input channels. A workgroup computes a 64-pixel x 64-channel tile, each thread 4 x 4 of it, over
// K in chunks of 16 staged in shared memory. Push constants as conv.comp (p[19] = 0).
#include "common.glsl"
shared float As[16][64];
shared float Bs[16][65];
void main() {
  uint tid = gl_LocalInvocationID.x;
  int OC = p[10], OW = p[9], OH = p[8], H = p[5], W = p[6], C = p[7], KH = p[11], KW = p[12];
  int M = p[0] / OC, K = KH * KW * C;
  int ntn = (OC + 63) / 64;
  int wg = int(gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x);
  int m0 = (wg / ntn) * 64, n0 = (wg % ntn) * 64;
  int tx = int(tid % 16u), ty = int(tid / 16u);
  /* this thread's A loads: (kk, m) = (l % 16, l / 16) for l = tid + 256 j */
  int ln[4], liy[4], lix[4], lok[4];
  for (int j = 0; j < 4; j++) {
    int l = int(tid) + 256 * j, m = m0 + l / 16;
    lok[j] = m < M ? 1 : 0;
    int mm = lok[j] != 0 ? m : 0;
    int ox = mm % OW, t = mm / OW, oy = t % OH;
    ln[j] = t / OH;
    liy[j] = oy * p[13] - p[17];
    lix[j] = ox * p[14] - p[18];
  }
  vec4 acc[4] = vec4[4](vec4(0.0), vec4(0.0), vec4(0.0), vec4(0.0));
  for (int k0 = 0; k0 < K; k0 += 16) {
    for (int j = 0; j < 4; j++) {
      int l = int(tid) + 256 * j, kk = l % 16, k = k0 + kk;
      float a = 0.0;
      if (lok[j] != 0 && k < K) {
        int tap = k / C, c = k - tap * C, ky = tap / KW, kx = tap - ky * KW;
        int iy = liy[j] + ky * p[15], ix = lix[j] + kx * p[16];
        if (iy >= 0 && iy < H && ix >= 0 && ix < W) a = d[p[1] + ((ln[j] * H + iy) * W + ix) * C + c];
      }
      As[kk][l / 16] = a;
      int nn = l % 64, kb = l / 64, kg = k0 + kb, oc = n0 + nn;
      Bs[kb][nn] = (kg < K && oc < OC) ? d[p[2] + kg * OC + oc] : 0.0;
    }
    barrier();
    for (int kk = 0; kk < 16; kk++) {
      vec4 b = vec4(Bs[kk][tx * 4], Bs[kk][tx * 4 + 1], Bs[kk][tx * 4 + 2], Bs[kk][tx * 4 + 3]);
      acc[0] += As[kk][ty * 4] * b;
      acc[1] += As[kk][ty * 4 + 1] * b;
      acc[2] += As[kk][ty * 4 + 2] * b;
      acc[3] += As[kk][ty * 4 + 3] * b;
    }
    barrier();
  }
  float lo = pf(20), hi = pf(21);
  for (int i = 0; i < 4; i++) {
    int m = m0 + ty * 4 + i;
    if (m >= M) break;
    for (int j = 0; j < 4; j++) {
      int oc = n0 + tx * 4 + j;
      if (oc >= OC) break;
      float v = acc[i][j] + (p[3] >= 0 ? d[p[3] + oc] : 0.0);
      d[p[4] + m * p[22] + p[23] + oc] = min(max(v, lo), hi);
    }
  }
}
