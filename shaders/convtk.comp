#version 450
// Dense convolution as a tiled implicit GEMM split along K inside the workgroup: 4 groups of 64
// threads compute the same 32-pixel x 32-channel tile, each over every fourth chunk of 16 of K
// (4 x 4 outputs a thread), and their partial sums are added in shared memory before the
// epilogue. For the small layers (few tiles over a long K: 23x30x960 -> 160), where a tile's time
// is its sequence of chunks, not its arithmetic. Push constants as conv.comp (p[19] = 0).
#include "common.glsl"
const int BM = 32, BN = 32, G = 4, KC = 16;
shared float As[G][KC][BM + 1];
shared float Bs[G][KC][BN + 1];
shared float Red[G - 1][BM * BN]; // groups 1..3: 12 KB, 30 KB in all (lavapipe allows 32)
shared int Pn[BM], Py[BM], Px[BM];
void main() {
  bool fx = f32(1), fw = f32(2), fb = f32(3), fo = f32(4);
  int tid = int(gl_LocalInvocationID.x);
  int g = tid / 64, lt = tid % 64;
  int OC = p[10], OW = p[9], OH = p[8], H = p[5], W = p[6], C = p[7], KH = p[11], KW = p[12];
  int M = p[0] / OC, K = KH * KW * C;
  int ntn = (OC + BN - 1) / BN;
  int wg = int(gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x);
  int m0 = (wg / ntn) * BM, n0 = (wg % ntn) * BN;
  int tx = lt % 8, ty = lt / 8;   // 8 x 8 threads of a group, 4 x 4 outputs each
  if (tid < BM) {
    int m = m0 + tid;
    if (m < M) {
      int ox = m % OW, t = m / OW, oy = t % OH;
      Pn[tid] = t / OH; Py[tid] = oy * p[13] - p[17]; Px[tid] = ox * p[14] - p[18];
    } else {
      Pn[tid] = 0; Py[tid] = -1000000; Px[tid] = 0;
    }
  }
  barrier();
  float acc[4][4];
  for (int i = 0; i < 4; i++) for (int j = 0; j < 4; j++) acc[i][j] = 0.0;
  int kk = lt % KC;
  float ra[8], rb[8];
  // group g takes chunks g, g + 4, ...: rounds of G * KC; the next round's loads are issued before
  // this round's products (as convt.comp)
  for (int r0 = 0; r0 < K + G * KC; r0 += G * KC) {
    if (r0 > 0) {
      for (int j = 0; j < 8; j++) As[g][kk][lt / KC + 4 * j] = ra[j];
      for (int j = 0; j < 8; j++) { int l = lt + 64 * j; Bs[g][l / BN][l % BN] = rb[j]; }
      barrier();
    }
    if (r0 < K) {
      int k0 = r0 + g * KC, k = k0 + kk;
      int tap = k / C, c = k - tap * C, ky = tap / KW, kx = tap - ky * KW;
      int dy = ky * p[15], dx = kx * p[16];
      bool kok = k < K;
      for (int j = 0; j < 8; j++) {
        int mi = lt / KC + 4 * j;
        int iy = Py[mi] + dy, ix = Px[mi] + dx;
        ra[j] = (kok && iy >= 0 && iy < H && ix >= 0 && ix < W) ? ldu(fx, p[1] + ((Pn[mi] * H + iy) * W + ix) * C + c) : 0.0;
      }
      for (int j = 0; j < 8; j++) {
        int l = lt + 64 * j;
        int nn = l % BN, kb = l / BN, kg = k0 + kb, oc = n0 + nn;
        rb[j] = (kg < K && oc < OC) ? ldu(fw, p[2] + kg * OC + oc) : 0.0;
      }
    }
    if (r0 > 0) {
      for (int q = 0; q < KC; q++) {
        float b[4];
        for (int j = 0; j < 4; j++) b[j] = Bs[g][q][tx * 4 + j];
        for (int i = 0; i < 4; i++) {
          float a = As[g][q][ty * 4 + i];
          for (int j = 0; j < 4; j++) acc[i][j] += a * b[j];
        }
      }
      barrier();
    }
  }
  if (g > 0) for (int i = 0; i < 4; i++) for (int j = 0; j < 4; j++) Red[g - 1][(ty * 4 + i) * BN + tx * 4 + j] = acc[i][j];
  barrier();
  // group 0: its own sums and the other groups', bias, epilogue
  if (g == 0)
    for (int i = 0; i < 4; i++) {
      int m = m0 + ty * 4 + i;
      if (m >= M) break;
      for (int j = 0; j < 4; j++) {
        int oc = n0 + tx * 4 + j, e = (ty * 4 + i) * BN + tx * 4 + j;
        if (oc >= OC) break;
        float v = acc[i][j] + Red[0][e] + Red[1][e] + Red[2][e] + (p[3] >= 0 ? ldu(fb, p[3] + oc) : 0.0);
        int oi = m * p[22] + p[23] + oc;
        stu(fo, p[4] + oi, epi(v, oc, oi));
      }
    }
}
