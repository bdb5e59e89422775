#version 450
// Dense convolution as a tiled implicit GEMM on tensor cores (GL_NV_cooperative_matrix, 16x16x16
// fp16 products with fp32 sums; used only where the device reports that shape): M = output pixels,
// N = output channels, K = taps x input channels. A workgroup of 8 subgroups (32 threads each)
// computes a 128-pixel x BN-channel tile, each subgroup 16 pixels x BN. fp32 storage: every value
// is split into two fp16 values, x = hi + lo / 2048 (hi = fp16(x), lo = fp16((x - hi) * 2048): the
// scale keeps lo out of fp16's subnormals, which the H200 flushes), and a product is
// hi*hi + (lo*hi + hi*lo) / 2048: ~22 bits of each operand. fp16 storage (HR_FP16): hi*hi only.
// BN (16 or 32) is specialisation constant 0. Opt-in (HR_VK_MMA=1): on the H200 it is slower than
// convt.comp on every RVM layer so far (staging and splitting per chunk, 3 products, no prefetch)
// and its alpha is 2.5e-5 from XNNPACK's on average (fp32 storage), not the ~1e-7 of the SIMT kernels.
// Push constants as conv.comp (p[19] = 0).
#extension GL_NV_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#include "common.glsl"
layout(constant_id = 0) const int BN = 32;
const int BM = 128;
const int KC = 32;
const int NB = BN / 16;
const int AN = BM * KC / 256;    // A values a thread loads per chunk
const int BNL = KC * BN / 256;   // B values
const int SA = KC + 8, SB = BN + 8, SC = BN + 4; // row strides, padded against bank conflicts
shared float16_t Ah[BM * SA], Al[BM * SA];
shared float16_t Bh[KC * SB], Bl[KC * SB];
shared float Cs[BM * SC];
shared int Pn[BM], Py[BM], Px[BM];
void main() {
  bool fx = f32(1), fw = f32(2), fb = f32(3), fo = f32(4);
  int tid = int(gl_LocalInvocationID.x), sg = tid / 32;
  int OC = p[10], OW = p[9], OH = p[8], H = p[5], W = p[6], C = p[7], KH = p[11], KW = p[12];
  int M = p[0] / OC, K = KH * KW * C;
  int ntn = (OC + BN - 1) / BN;
  int wg = int(gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x);
  int m0 = (wg / ntn) * BM, n0 = (wg % ntn) * BN;
  for (int l = tid; l < BM; l += 256) {
    int m = m0 + l;
    if (m < M) {
      int ox = m % OW, t = m / OW, oy = t % OH;
      Pn[l] = t / OH; Py[l] = oy * p[13] - p[17]; Px[l] = ox * p[14] - p[18];
    } else {
      Pn[l] = 0; Py[l] = -1000000; Px[l] = 0;
    }
  }
  barrier();
  fcoopmatNV<32, gl_ScopeSubgroup, 16, 16> acc[NB], acl[NB];
  for (int j = 0; j < NB; j++) { acc[j] = fcoopmatNV<32, gl_ScopeSubgroup, 16, 16>(0.0); acl[j] = acc[j]; }
  int kk = tid % KC;
  for (int k0 = 0; k0 < K; k0 += KC) {
    int k = k0 + kk;
    int tap = k / C, c = k - tap * C, ky = tap / KW, kx = tap - ky * KW;
    int dy = ky * p[15], dx = kx * p[16];
    bool kok = k < K;
    for (int j = 0; j < AN; j++) {
      int mi = tid / KC + (256 / KC) * j;
      int iy = Py[mi] + dy, ix = Px[mi] + dx;
      float x = (kok && iy >= 0 && iy < H && ix >= 0 && ix < W) ? ldu(fx, p[1] + ((Pn[mi] * H + iy) * W + ix) * C + c) : 0.0;
      float16_t h = float16_t(x);
      Ah[mi * SA + kk] = h;
#ifndef HR_FP16
      Al[mi * SA + kk] = float16_t((x - float(h)) * 2048.0);
#endif
    }
    for (int j = 0; j < BNL; j++) {
      int l = tid + 256 * j;
      int nn = l % BN, kb = l / BN, kg = k0 + kb, oc = n0 + nn;
      float w = (kg < K && oc < OC) ? ldu(fw, p[2] + kg * OC + oc) : 0.0;
      float16_t h = float16_t(w);
      Bh[kb * SB + nn] = h;
#ifndef HR_FP16
      Bl[kb * SB + nn] = float16_t((w - float(h)) * 2048.0);
#endif
    }
    barrier();
    for (int q = 0; q < KC; q += 16) {
      fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> ah, al, bh, bl;
      coopMatLoadNV(ah, Ah, uint(sg * 16 * SA + q), uint(SA), false);
#ifndef HR_FP16
      coopMatLoadNV(al, Al, uint(sg * 16 * SA + q), uint(SA), false);
#endif
      for (int j = 0; j < NB; j++) {
        coopMatLoadNV(bh, Bh, uint(q * SB + j * 16), uint(SB), false);
        acc[j] = coopMatMulAddNV(ah, bh, acc[j]);
#ifndef HR_FP16
        coopMatLoadNV(bl, Bl, uint(q * SB + j * 16), uint(SB), false);
        acl[j] = coopMatMulAddNV(al, bh, acl[j]);
        acl[j] = coopMatMulAddNV(ah, bl, acl[j]);
#endif
      }
    }
    barrier();
  }
  // the cross terms through shared memory first (a matrix times a scalar crashes glslc 2023.2)
  const int EN = BM * BN / 256;
  float lo[EN];
#ifndef HR_FP16
  for (int j = 0; j < NB; j++) coopMatStoreNV(acl[j], Cs, uint(sg * 16 * SC + j * 16), uint(SC), false);
  barrier();
  for (int q = 0; q < EN; q++) { int e = tid + 256 * q; lo[q] = Cs[(e / BN) * SC + e % BN] * (1.0 / 2048.0); }
  barrier();
#else
  for (int q = 0; q < EN; q++) lo[q] = 0.0;
#endif
  for (int j = 0; j < NB; j++) coopMatStoreNV(acc[j], Cs, uint(sg * 16 * SC + j * 16), uint(SC), false);
  barrier();
  for (int q = 0; q < EN; q++) {
    int e = tid + 256 * q;
    int m = m0 + e / BN, oc = n0 + e % BN;
    if (m >= M || oc >= OC) continue;
    float v = (Cs[(e / BN) * SC + e % BN] + lo[q]) + (p[3] >= 0 ? ldu(fb, p[3] + oc) : 0.0);
    int oi = m * p[22] + p[23] + oc;
    stu(fo, p[4] + oi, epi(v, oc, oi));
  }
}
