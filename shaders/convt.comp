#version 450
// Dense convolution as a tiled implicit GEMM: M = output pixels, N = output channels, K = taps x
// input channels. A workgroup of 256 threads computes a BM-pixel x BN-channel tile, each thread T x
// T of it (T = 4: BM * BN = 4096; T = 2: 1024, four times the workgroups for small layers), over K
// in chunks staged in shared memory. BN and T are specialisation constants (0 and 3).
// Push constants as conv.comp (p[19] = 0).
// SPLIT (specialisation constant 4) = 1: split-K across workgroups for the small layers (few
// tiles over a long K: 23x30x960 -> 160 fills 110 of the GPU's workgroup slots): p[31] = S
// workgroups per tile, each over a slice of K, writing its raw sums to the scratch at p[30]
// (S slices of p[0] floats); convred.comp adds the slices, the bias and the epilogue.
#include "common.glsl"
layout(constant_id = 0) const int BN = 64;
layout(constant_id = 3) const int T = 4;
layout(constant_id = 4) const int SPLIT = 0;
const int BM = 256 * T * T / BN;
const int TX = BN / T;
// K in chunks of KC: 32 for the small tiles (T = 2: the small layers, where a chunk's time is the
// loads' latency, not the products), 16 for the large ones (shared memory)
const int KC = T == 2 ? 32 : 16;
const int AN = BM * KC / 256;    // A values a thread loads per chunk
const int BNL = KC * BN / 256;   // B values
// Shared tiles as vectors of T (the products read a thread's T pixels and T channels with one load
// each); rows padded by T floats so a chunk's stores (a column per thread) spread over the banks.
const int SA = (BM + T) / T, SB = (BN + T) / T;
shared vec4 As4[T == 4 ? KC * SA : 1];
shared vec4 Bs4[T == 4 ? KC * SB : 1];
shared vec2 As2[T == 2 ? KC * SA : 1];
shared vec2 Bs2[T == 2 ? KC * SB : 1];
void main() {
  bool fx = f32(1), fw = f32(2), fb = f32(3), fo = f32(4);
  int tid = int(gl_LocalInvocationID.x);
  int OC = p[10], OW = p[9], OH = p[8], H = p[5], W = p[6], C = p[7], KH = p[11], KW = p[12];
  int M = p[0] / OC, K = KH * KW * C;
  int ntn = (OC + BN - 1) / BN;
  int wg = int(gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x);
  int kbeg = 0, kend = K, ks = 0;
  if (SPLIT != 0) {
    int S = p[31], KS = ((K + S - 1) / S + KC - 1) / KC * KC;
    ks = wg % S; wg /= S;
    kbeg = min(K, ks * KS); kend = min(K, kbeg + KS);
  }
  int m0 = (wg / ntn) * BM, n0 = (wg % ntn) * BN;
  int tx = tid % TX, ty = tid / TX;
  // A thread loads the same AN pixels of the tile at every chunk: their top-left tap's offset and
  // row / column are kept in registers (a pixel past M gets a row no tap reaches)
  int kk = tid % KC;
  int abase[AN], apy[AN], apx[AN];
  for (int j = 0; j < AN; j++) {
    int m = m0 + tid / KC + (256 / KC) * j;
    int ox = m % OW, t = m / OW, oy = t % OH, n = t / OH;
    apy[j] = m < M ? oy * p[13] - p[17] : -1000000;
    apx[j] = ox * p[14] - p[18];
    abase[j] = m < M ? p[1] + ((n * H + apy[j]) * W + apx[j]) * C : 0;
  }
  float acc[4][4];
  for (int i = 0; i < T; i++) for (int j = 0; j < T; j++) acc[i][j] = 0.0;
  // The next chunk's loads are issued into registers before this chunk's products, so their
  // latency overlaps the arithmetic (the small layers, few workgroups over a long K, wait on it).
  float ra[AN], rb[BNL];
  for (int k0 = kbeg; k0 < kend + KC; k0 += KC) {
    if (k0 > kbeg) {   // chunk k0 - KC, loaded last round, into shared memory
      for (int j = 0; j < AN; j++) {
        int mi = tid / KC + (256 / KC) * j;
        if (T == 4) As4[kk * SA + mi / 4][mi % 4] = ra[j]; else As2[kk * SA + mi / 2][mi % 2] = ra[j];
      }
      for (int j = 0; j < BNL; j++) {
        int l = tid + 256 * j, kb = l / BN, nn = l % BN;
        if (T == 4) Bs4[kb * SB + nn / 4][nn % 4] = rb[j]; else Bs2[kb * SB + nn / 2][nn % 2] = rb[j];
      }
      barrier();
    }
    if (k0 < kend) {   // chunk k0 from memory into registers
      int k = k0 + kk;
      int tap = k / C, c = k - tap * C, ky = tap / KW, kx = tap - ky * KW;
      int dy = ky * p[15], dx = kx * p[16], toff = (dy * W + dx) * C + c;
      bool kok = k < kend;
      for (int j = 0; j < AN; j++) {
        int iy = apy[j] + dy, ix = apx[j] + dx;
        ra[j] = (kok && uint(iy) < uint(H) && uint(ix) < uint(W)) ? ldu(fx, abase[j] + toff) : 0.0;
      }
      for (int j = 0; j < BNL; j++) {
        int l = tid + 256 * j;
        int nn = l % BN, kb = l / BN, kg = k0 + kb, oc = n0 + nn;
        rb[j] = (kg < kend && oc < OC) ? ldu(fw, p[2] + kg * OC + oc) : 0.0;
      }
    }
    if (k0 > kbeg) {
      for (int q = 0; q < KC; q++) {
        if (T == 4) {
          vec4 a = As4[q * SA + ty], b = Bs4[q * SB + tx];
          for (int i = 0; i < 4; i++) for (int j = 0; j < 4; j++) acc[i][j] += a[i] * b[j];
        } else {
          vec2 a = As2[q * SA + ty], b = Bs2[q * SB + tx];
          for (int i = 0; i < 2; i++) for (int j = 0; j < 2; j++) acc[i][j] += a[i] * b[j];
        }
      }
      barrier();
    }
  }
  for (int i = 0; i < T; i++) {
    int m = m0 + ty * T + i;
    if (m >= M) break;
    for (int j = 0; j < T; j++) {
      int oc = n0 + tx * T + j;
      if (oc >= OC) break;
      if (SPLIT != 0) { stu(false, p[30] + ks * p[0] + m * OC + oc, acc[i][j]); continue; }
      float v = acc[i][j] + (p[3] >= 0 ? ldu(fb, p[3] + oc) : 0.0);
      int oi = m * p[22] + p[23] + oc;
      stu(fo, p[4] + oi, epi(v, oc, oi));
    }
  }
}
