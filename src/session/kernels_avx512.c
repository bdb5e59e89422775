/* AVX-512 kernels for the session: the guided-filter tail's alpha row with the NV12 guidance converted
 * in registers (no planar float rows stored and read back), or float RGB guidance taken apart in registers. Each lane does the operations of the
 * scalar definitions in the same order, no FMA (ISO C: -ffp-contract=off; intrinsics are explicit), so
 * the results equal the portable path's bit for bit. Picked at run time when the CPU has AVX-512F/BW/VL;
 * empty where GCC or clang cannot target it. */
#include "session/kernels_simd.h"
#include <stddef.h>
#include <stdint.h>
#include "ingest/ingest_kernels.h"
#include "core/cpu.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && !defined(HR_KERNELS_NO_AVX512)
#include <immintrin.h>
#include <stdint.h>

#define HR__AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx2")))
#include "ingest/nv12_avx512.h"

/* The alpha of 16 pixels from their R, G, B, as fgf_alpha_row_px (kernels.c) computes it:
 * m = ((R + G) + B) / 3, A and b interpolated between two rows by fy, A m + b, clipped to [0, 1]
 * as `v < 0 ? 0 : v > 1 ? 1 : v` (NaN and -0 kept) when clip is set. */
HR__AVX512 static inline __m512 alpha16(__m512 R, __m512 G, __m512 B, const float *ha0, const float *ha1, const float *hb0,
                                        const float *hb1, __m512 vfy, int clip) {
  const __m512 m = _mm512_div_ps(_mm512_add_ps(_mm512_add_ps(R, G), B), _mm512_set1_ps(3.0f));
  const __m512 a0 = _mm512_loadu_ps(ha0), a1 = _mm512_loadu_ps(ha1);
  const __m512 b0 = _mm512_loadu_ps(hb0), b1 = _mm512_loadu_ps(hb1);
  const __m512 a = _mm512_add_ps(a0, _mm512_mul_ps(_mm512_sub_ps(a1, a0), vfy));
  const __m512 b = _mm512_add_ps(b0, _mm512_mul_ps(_mm512_sub_ps(b1, b0), vfy));
  __m512 o = _mm512_add_ps(_mm512_mul_ps(a, m), b);
  if (clip) {
    const __m512 zero = _mm512_setzero_ps(), one = _mm512_set1_ps(1.0f);
    const __mmask16 lt = _mm512_cmp_ps_mask(o, zero, _CMP_LT_OQ), gt = _mm512_cmp_ps_mask(o, one, _CMP_GT_OQ);
    o = _mm512_mask_mov_ps(_mm512_mask_mov_ps(o, gt, one), lt, zero);
  }
  return o;
}

/* R, G, B as ingest_avx512.c's row_planar_nv12 (nv12_avx512.h), then m = (R + G + B) / 3 and
 * the alpha of fgf_alpha_row: (ha0 + (ha1 - ha0) fy) m + (hb0 + (hb1 - hb0) fy), clipped to [0, 1]
 * as `v < 0 ? 0 : v > 1 ? 1 : v` (NaN and -0 kept) when clip is set. */
HR__AVX512 static int alpha_row_nv12(const hr_frame *f, int y, int W, const float *ha0, const float *ha1, const float *hb0,
                                     const float *hb1, float fy, float *pha, int clip, int stream) {
  const hr__ingest_rows rows = hr__ingest_rows_at(f, y);
  const hr__nv12_k16 c = hr__nv12_k16_make(f->fmt);
  const __m512 vfy = _mm512_set1_ps(fy);
  /* with stream, the matte (H x W floats, larger than the caches at camera sizes) is streamed past
   * the caches when its row is 64-byte aligned: no read for ownership of lines written whole (not
   * for a row read back at once: hr__fgf_run_u8's, read from memory again it cost 1.5 ms a frame) */
  const int nt = stream && ((uintptr_t)pha & 63) == 0;
  int x = 0;
  for (; x + 16 <= W; x += 16) {
    __m512 R, G, B;
    hr__nv12_rgb16(&c, &rows, x, &R, &G, &B);
    const __m512 o = alpha16(R, G, B, ha0 + x, ha1 + x, hb0 + x, hb1 + x, vfy, clip);
    if (nt) _mm512_stream_ps(pha + x, o);
    else _mm512_storeu_ps(pha + x, o);
  }
  if (nt) _mm_sfence();
  return x;
}

/* The permutes that take 16 interleaved R, G, B pixels (48 floats in three vectors) apart: channel c
 * is permutex2var(permutex2var(in0, a[c], in1), b[c], in2). */
/* How far ahead (floats, 6 KB) the float guidance is prefetched: a full-resolution frame (33 MB at
 * 1920x1440) comes from memory; 4.0 -> 3.4-3.6 ms for the tail at 1920x1440 on one AVX-512 core. */
#define HR__PF 1536
typedef struct rgb_split { __m512i a[3], b[3]; } rgb_split;
HR__AVX512 static rgb_split rgb_split_make(void) {
  int32_t ia[3][16], ib[3][16];
  for (int c = 0; c < 3; c++)
    for (int i = 0; i < 16; i++) {
      const int f = 3 * i + c;
      ia[c][i] = f < 32 ? f : 0;               /* from in0:in1 */
      ib[c][i] = f < 32 ? i : 16 + (f - 32);   /* the above (kept) or in2 */
    }
  rgb_split s;
  for (int c = 0; c < 3; c++) { s.a[c] = _mm512_loadu_si512(ia[c]); s.b[c] = _mm512_loadu_si512(ib[c]); }
  return s;
}

/* fgf_alpha_row_px (kernels.c) on a float RGB row read in place: R, G and B of 16 pixels taken apart
 * from three loads (prefetched HR__PF floats ahead), m = ((R + G) + B) / 3, then the alpha as
 * alpha_row_nv12 computes it; the matte streamed past the caches when its row is 64-byte aligned. */
HR__AVX512 static int alpha_row_rgbf(const float *px, int W, const float *ha0, const float *ha1, const float *hb0, const float *hb1, float fy,
                                     float *pha, int clip, int stream) {
  const rgb_split sp = rgb_split_make();
  const __m512 vfy = _mm512_set1_ps(fy);
  const int nt = stream && ((uintptr_t)pha & 63) == 0;
  int x = 0;
  for (; x + 16 <= W; x += 16) {
    const float *p = px + 3 * (size_t)x;
    _mm_prefetch((const char *)(p + HR__PF), _MM_HINT_T0);
    _mm_prefetch((const char *)(p + HR__PF + 16), _MM_HINT_T0);
    _mm_prefetch((const char *)(p + HR__PF + 32), _MM_HINT_T0);
    const __m512 in0 = _mm512_loadu_ps(p), in1 = _mm512_loadu_ps(p + 16), in2 = _mm512_loadu_ps(p + 32);
    const __m512 R = _mm512_permutex2var_ps(_mm512_permutex2var_ps(in0, sp.a[0], in1), sp.b[0], in2);
    const __m512 G = _mm512_permutex2var_ps(_mm512_permutex2var_ps(in0, sp.a[1], in1), sp.b[1], in2);
    const __m512 B = _mm512_permutex2var_ps(_mm512_permutex2var_ps(in0, sp.a[2], in1), sp.b[2], in2);
    const __m512 o = alpha16(R, G, B, ha0 + x, ha1 + x, hb0 + x, hb1 + x, vfy, clip);
    if (nt) _mm512_stream_ps(pha + x, o);
    else _mm512_storeu_ps(pha + x, o);
  }
  if (nt) _mm_sfence();
  return x;
}

/* lr_xrow (kernels.c): 3-channel pixels to 4, the 4th = (((0 + R) + G) + B) / 3, 16 pixels a
 * step: R, G and B gathered into vectors of their own from the three loaded ones, one division for
 * the 16 means, then the four 4-channel vectors put together from the inputs and the means. */
HR__AVX512 static int xrow16(const float *sp, float *xp, int W) {
  int32_t ia[3][16], ib[3][16], od[4][16], om[16];
  for (int c = 0; c < 3; c++)
    for (int i = 0; i < 16; i++) {
      const int f = 3 * i + c;
      ia[c][i] = f < 32 ? f : 0;               /* from in0:in1 */
      ib[c][i] = f < 32 ? i : 16 + (f - 32);   /* the above (kept) or in2 */
    }
  for (int q = 0; q < 4; q++)
    for (int j = 0; j < 4; j++)
      for (int c = 0; c < 4; c++) {
        const int f = 12 * q + 3 * j + c;      /* c = 3: a mean lane, filled below */
        od[q][4 * j + c] = c == 3 ? 0 : q < 2 ? f : f - 16;
      }
  for (int j = 0; j < 16; j++) om[j] = j / 4;  /* lane 4j + 3 of vector q takes mean 4q + j: offset below */
  const __m512i a0 = _mm512_loadu_si512(ia[0]), a1 = _mm512_loadu_si512(ia[1]), a2 = _mm512_loadu_si512(ia[2]);
  const __m512i b0 = _mm512_loadu_si512(ib[0]), b1 = _mm512_loadu_si512(ib[1]), b2 = _mm512_loadu_si512(ib[2]);
  const __m512i d0 = _mm512_loadu_si512(od[0]), d1 = _mm512_loadu_si512(od[1]), d2 = _mm512_loadu_si512(od[2]), d3 = _mm512_loadu_si512(od[3]);
  const __m512i m0 = _mm512_loadu_si512(om), four = _mm512_set1_epi32(4);
  const __m512i m1 = _mm512_add_epi32(m0, four), m2 = _mm512_add_epi32(m1, four), m3 = _mm512_add_epi32(m2, four);
  const __m512 zero = _mm512_setzero_ps(), three = _mm512_set1_ps(3.0f);
  int x = 0;
  for (; x + 16 <= W; x += 16) {
    const float *p = sp + 3 * x;
    const __m512 in0 = _mm512_loadu_ps(p), in1 = _mm512_loadu_ps(p + 16), in2 = _mm512_loadu_ps(p + 32);
    const __m512 r = _mm512_permutex2var_ps(_mm512_permutex2var_ps(in0, a0, in1), b0, in2);
    const __m512 g = _mm512_permutex2var_ps(_mm512_permutex2var_ps(in0, a1, in1), b1, in2);
    const __m512 b = _mm512_permutex2var_ps(_mm512_permutex2var_ps(in0, a2, in1), b2, in2);
    const __m512 m = _mm512_div_ps(_mm512_add_ps(_mm512_add_ps(_mm512_add_ps(zero, r), g), b), three);
    float *o = xp + 4 * x;
    _mm512_storeu_ps(o, _mm512_mask_permutexvar_ps(_mm512_permutex2var_ps(in0, d0, in1), 0x8888, m0, m));
    _mm512_storeu_ps(o + 16, _mm512_mask_permutexvar_ps(_mm512_permutex2var_ps(in0, d1, in1), 0x8888, m1, m));
    _mm512_storeu_ps(o + 32, _mm512_mask_permutexvar_ps(_mm512_permutex2var_ps(in1, d2, in2), 0x8888, m2, m));
    _mm512_storeu_ps(o + 48, _mm512_mask_permutexvar_ps(_mm512_permutex2var_ps(in1, d3, in2), 0x8888, m3, m));
  }
  return x;
}

/* fgf_hrow (kernels.c): ha[x] = a[cs l] + (a[cs r] - a[cs l]) fx[x], l = x0[x], r = x1[x] (the same
 * operations as the runs there), and hb likewise, 16 columns a step: the block's taps lie within 32
 * floats from a[cs x0[first]] when the upsampling is wide enough, so two masked loads (no read past
 * the row's last alpha) and a two-register permute give them; a block whose taps do not fit is done
 * column by column. */
HR__AVX512 static int hrow16(const int32_t *x0, const int32_t *x1, const float *fx, int W, int w, int cs, const float *a, const float *b,
                             float *ha, float *hb) {
  const __m512i vcs = _mm512_set1_epi32(cs);
  int x = 0;
  for (; x + 16 <= W; x += 16) {
    const int base = x0[x], span = x1[x + 15] - base;
    if (span < 0 || span * cs >= 32 || x0[x + 15] < base) {
      for (int i = x; i < x + 16; i++) {
        const float al = a[cs * x0[i]], bl = b[cs * x0[i]];
        ha[i] = al + (a[cs * x1[i]] - al) * fx[i];
        hb[i] = bl + (b[cs * x1[i]] - bl) * fx[i];
      }
      continue;
    }
    const int rem = cs * (w - 1 - base) + 1;   /* floats readable from a + cs*base */
    const __mmask16 mlo = rem >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << rem) - 1);
    const __mmask16 mhi = rem >= 32 ? (__mmask16)0xffff : rem > 16 ? (__mmask16)((1u << (rem - 16)) - 1) : (__mmask16)0;
    const float *pa = a + (ptrdiff_t)cs * base, *pb = b + (ptrdiff_t)cs * base;
    const __m512 alo = _mm512_maskz_loadu_ps(mlo, pa), ahi = _mm512_maskz_loadu_ps(mhi, pa + 16);
    const __m512 blo = _mm512_maskz_loadu_ps(mlo, pb), bhi = _mm512_maskz_loadu_ps(mhi, pb + 16);
    const __m512i vb = _mm512_set1_epi32(base);
    const __m512i li = _mm512_mullo_epi32(_mm512_sub_epi32(_mm512_loadu_si512(x0 + x), vb), vcs);
    const __m512i ri = _mm512_mullo_epi32(_mm512_sub_epi32(_mm512_loadu_si512(x1 + x), vb), vcs);
    const __m512 f = _mm512_loadu_ps(fx + x);
    const __m512 al = _mm512_permutex2var_ps(alo, li, ahi), ar = _mm512_permutex2var_ps(alo, ri, ahi);
    const __m512 bl = _mm512_permutex2var_ps(blo, li, bhi), br = _mm512_permutex2var_ps(blo, ri, bhi);
    _mm512_storeu_ps(ha + x, _mm512_add_ps(al, _mm512_mul_ps(_mm512_sub_ps(ar, al), f)));
    _mm512_storeu_ps(hb + x, _mm512_add_ps(bl, _mm512_mul_ps(_mm512_sub_ps(br, bl), f)));
  }
  return x;
}

/* ---- depthwise convolution (hr__k_dwconv, kernels.h) ----
 * One task = up to 4 channel blocks of 16 (the last one masked) over one output row; each output
 * pixel starts from the bias and adds tap after tap (weights and bias read in place: TF's K x K x C
 * layout has each tap's channels contiguous)
 * with one fused multiply-add each, the taps in XNNPACK's order (column-major: kx outer, ky inner,
 * as its indirection buffer and packed weights lay them out), a tap outside the image adding a zero
 * as XNNPACK's zero buffer does; then max(acc, lo), min(acc, hi). So the values are XNNPACK's
 * (up16x9 / up16x25 avx512f) bit for bit; test_kernels_dw compares them. Then the epilogue, if any
 * (hr__dw_epi: the ops after the convolution, as their own kernels compute them; test_exec_fuse). */
typedef struct dw_task {
  const float *x, *w, *b; float *o;
  int H, W, C, OW, s, dl, pt, pl, nblk;
  float lo, hi;
  const hr__dw_epi *e;  /* never NULL here */
} dw_task;

/* HardSwish with XNNPACK's AVX-512 operations: v * min(max(fma(v, 1/6, 1/2), 0), 1) (hswish16 and
 * the depthwise epilogue: the same bits) */
HR__AVX512 static inline __attribute__((always_inline)) __m512 hswish_v(__m512 v) {
  __m512 a = _mm512_fmadd_ps(v, _mm512_set1_ps(0x1.555556p-3f), _mm512_set1_ps(0.5f));
  a = _mm512_min_ps(_mm512_max_ps(a, _mm512_setzero_ps()), _mm512_set1_ps(1.f));
  return _mm512_mul_ps(a, v);
}

/* y op v as one IEEE operation (v op y where v_first): hr__k_bcast_c's per element */
HR__AVX512 static inline __attribute__((always_inline)) __m512 epi_op(int op, int v_first, __m512 y, __m512 v) {
  switch (op) {
    case HR__EPI_MUL: return _mm512_mul_ps(y, v);
    case HR__EPI_ADD: return _mm512_add_ps(y, v);
    case HR__EPI_SUB: return v_first ? _mm512_sub_ps(v, y) : _mm512_sub_ps(y, v);
    case HR__EPI_DIV: return v_first ? _mm512_div_ps(v, y) : _mm512_div_ps(y, v);
    default: return y;
  }
}

/* One output vector: clamped to [lo, hi], then the epilogue (hr__dw_epi) with the block's operands
 * v1, v2. */
HR__AVX512 static inline __attribute__((always_inline)) __m512 dw_finish(const hr__dw_epi *e, __m512 acc, __m512 vlo, __m512 vhi, __m512 v1,
                                                                          __m512 v2) {
  __m512 y = _mm512_min_ps(_mm512_max_ps(acc, vlo), vhi);
  if (e->op1) y = epi_op(e->op1, e->v1_first, y, v1);
  if (e->op2) y = epi_op(e->op2, e->v2_first, y, v2);
  return e->hswish ? hswish_v(y) : y;
}

/* One tap sum for output pixel (ox) of block blk, every tap checked against the image (the border). */
HR__AVX512 static inline __attribute__((always_inline)) __m512 dw_px_edge(const dw_task *t, const float *xc, const float *wb, __m512 bias,
                                                                           __mmask16 m, int iy0, int ix0, const int K) {
  __m512 acc = bias;
  const size_t rs = (size_t)t->W * (size_t)t->C;
  for (int kx = 0; kx < K; kx++) {
    const int ix = ix0 + kx * t->dl;
    for (int ky = 0; ky < K; ky++) {
      const int iy = iy0 + ky * t->dl;
      const __m512 v = iy >= 0 && iy < t->H && ix >= 0 && ix < t->W ? _mm512_maskz_loadu_ps(m, xc + (size_t)iy * rs + (size_t)ix * (size_t)t->C)
                                                                      : _mm512_setzero_ps();
      acc = _mm512_fmadd_ps(v, _mm512_maskz_loadu_ps(m, wb + (size_t)(ky * K + kx) * (size_t)t->C), acc);
    }
  }
  return acc;
}

/* Output row oy, channel blocks [4 grp, 4 grp + 4): four pixels at a time (four independent chains)
 * where their taps lie inside the image, each block's weights read from the model's rows (TF's layout)
 * (L1-resident: 4 blocks x 26 x 64 bytes for 5x5), the pixels' 4 blocks read as 4 adjacent lines. */
HR__AVX512 static inline __attribute__((always_inline)) void dw_row_k(const dw_task *t, int grp, int oy, const int K) {
  const int nb = t->nblk - HR__DW_GB * grp < HR__DW_GB ? t->nblk - HR__DW_GB * grp : HR__DW_GB;
  const __m512 vlo = _mm512_set1_ps(t->lo), vhi = _mm512_set1_ps(t->hi);
  const int iy0 = oy * t->s - t->pt;
  const size_t rs = (size_t)t->W * (size_t)t->C, cs = (size_t)t->C, ps = (size_t)t->s * cs;
  const int span = (K - 1) * t->dl + 1;  /* input rows and columns one output pixel reads */
  const size_t rd = (size_t)t->dl * rs, cd = (size_t)t->dl * cs;
  const int rows_in = iy0 >= 0 && iy0 + span <= t->H;
  /* the taps whose input row lies in the image: [ky0, ky1). XNNPACK adds a zero for each of the
   * others (acc + 0 * w); they are skipped here, which is the same sum (but for the sign of an
   * exactly zero sum, -0 + +0 = +0). */
  int ky0 = 0, ky1 = K;
  while (ky0 < K && iy0 + ky0 * t->dl < 0) ky0++;
  while (ky1 > ky0 && iy0 + (ky1 - 1) * t->dl >= t->H) ky1--;
  float *orow = t->o + (size_t)oy * (size_t)t->OW * cs;
  for (int ox = 0; ox < t->OW;) {
    const int ix0 = ox * t->s - t->pl;
    const int cols_in = ix0 >= 0 && ox + 3 < t->OW && (ox + 3) * t->s - t->pl + span <= t->W;
    const int four = rows_in && cols_in;
    for (int bi = 0; bi < nb; bi++) {
      const int blk = HR__DW_GB * grp + bi, c0 = blk * 16, rem = t->C - c0;
      const __mmask16 m = rem >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << rem) - 1);
      const float *wb = t->w + c0;  /* tap (ky, kx) at wb + (ky K + kx) C: TF's K x K x C weights */
      const __m512 bias = t->b ? _mm512_maskz_loadu_ps(m, t->b + c0) : _mm512_setzero_ps();
      const __m512 v1 = t->e->op1 ? _mm512_maskz_loadu_ps(m, t->e->v1 + c0) : _mm512_setzero_ps();
      const __m512 v2 = t->e->op2 ? _mm512_maskz_loadu_ps(m, t->e->v2 + c0) : _mm512_setzero_ps();
      const float *xc = t->x + c0;
      float *oo = orow + (size_t)ox * cs + c0;
      if (four) {
        const float *p = xc + (size_t)iy0 * rs + (size_t)ix0 * cs;
        __m512 a0 = bias, a1 = bias, a2 = bias, a3 = bias;
#pragma GCC unroll 5
        for (int kx = 0; kx < K; kx++)
#pragma GCC unroll 5
          for (int ky = 0; ky < K; ky++) {
            const float *q = p + (size_t)ky * rd + (size_t)kx * cd;
            const __m512 wk = _mm512_maskz_loadu_ps(m, wb + (size_t)(ky * K + kx) * cs);
            a0 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, q), wk, a0);
            a1 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, q + ps), wk, a1);
            a2 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, q + 2 * ps), wk, a2);
            a3 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, q + 3 * ps), wk, a3);
          }
        _mm512_mask_storeu_ps(oo, m, dw_finish(t->e, a0, vlo, vhi, v1, v2));
        _mm512_mask_storeu_ps(oo + cs, m, dw_finish(t->e, a1, vlo, vhi, v1, v2));
        _mm512_mask_storeu_ps(oo + 2 * cs, m, dw_finish(t->e, a2, vlo, vhi, v1, v2));
        _mm512_mask_storeu_ps(oo + 3 * cs, m, dw_finish(t->e, a3, vlo, vhi, v1, v2));
      } else if (ox + 3 < t->OW) {
        /* four pixels meeting the border: the rows outside the image skipped (above), and per
         * column tap each pixel's load masked empty where its column is outside (a zero, as
         * XNNPACK's zero buffer gives; nothing read) */
        __m512 a[4] = {bias, bias, bias, bias};
        for (int kx = 0; kx < K; kx++) {
          const float *q[4];
          __mmask16 mk[4];
#pragma GCC unroll 4
          for (int j = 0; j < 4; j++) {
            const int ix = ix0 + j * t->s + kx * t->dl, ok = ix >= 0 && ix < t->W;
            q[j] = ok ? xc + (size_t)ix * cs : xc;
            mk[j] = ok ? m : 0;
          }
          for (int ky = ky0; ky < ky1; ky++) {
            const size_t ro = (size_t)(iy0 + ky * t->dl) * rs;
            const __m512 wk = _mm512_maskz_loadu_ps(m, wb + (size_t)(ky * K + kx) * cs);
#pragma GCC unroll 4
            for (int j = 0; j < 4; j++) a[j] = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(mk[j], q[j] + ro), wk, a[j]);
          }
        }
#pragma GCC unroll 4
        for (int j = 0; j < 4; j++) _mm512_mask_storeu_ps(oo + (size_t)j * cs, m, dw_finish(t->e, a[j], vlo, vhi, v1, v2));
      } else {
        const __m512 acc = dw_px_edge(t, xc, wb, bias, m, iy0, ix0, K);
        _mm512_mask_storeu_ps(oo, m, dw_finish(t->e, acc, vlo, vhi, v1, v2));
      }
    }
    ox += four || ox + 3 < t->OW ? 4 : 1;
  }
}
HR__AVX512 static void dw_row3(const dw_task *t, int grp, int oy) { dw_row_k(t, grp, oy, 3); }
HR__AVX512 static void dw_row5(const dw_task *t, int grp, int oy) { dw_row_k(t, grp, oy, 5); }

HR__AVX512 static void hswish16(float *y, int64_t n) {
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 m = n - i >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (n - i)) - 1);
    _mm512_mask_storeu_ps(y + i, m, hswish_v(_mm512_maskz_loadu_ps(m, y + i)));
  }
}
int hr__k_hswish_ok(void) { return hr__cpu_avx512f(); }
void hr__k_hswish(float *y, int64_t n) { hswish16(y, n); }
/* Outputs n0 .. n0 + 16 G - 1 of a one-pixel 1x1 convolution (kernels.h, hr__matvec), G blocks of
 * 16 side by side (G chains in flight: one chain is bound by the multiply-add's latency, and a row's
 * 16 G weights are read as one run: a single block's 64 bytes a row were read at half the speed of
 * XNNPACK's packed blocks): each output as XNNPACK's f32 GEMM 1x16 AVX-512 kernel computes it,
 * the bias, then acc = x[k] w[k] + acc for k in order, max, min. */
HR__AVX512 static inline __attribute__((always_inline)) void mv_blocks(const hr__matvec *mv, const float *x, float *y, int n0, const int G) {
  __mmask16 m[16];
  __m512 acc[16];
  const size_t N = (size_t)mv->N;
  for (int g = 0; g < G; g++) {
    const int rem = mv->N - n0 - 16 * g;
    m[g] = rem >= 16 ? (__mmask16)0xffff : rem > 0 ? (__mmask16)((1u << rem) - 1) : 0;
    acc[g] = mv->b ? _mm512_maskz_loadu_ps(m[g], mv->b + n0 + 16 * g) : _mm512_setzero_ps();
  }
  const float *w = mv->w + n0;
  for (int k = 0; k < mv->K; k++, w += N) {
    const __m512 xk = _mm512_set1_ps(x[k]);
    for (int g = 0; g < G; g++) acc[g] = _mm512_fmadd_ps(xk, _mm512_maskz_loadu_ps(m[g], w + 16 * g), acc[g]);
  }
  const __m512 vlo = _mm512_set1_ps(mv->lo), vhi = _mm512_set1_ps(mv->hi);
  for (int g = 0; g < G; g++) _mm512_mask_storeu_ps(y + n0 + 16 * g, m[g], _mm512_min_ps(_mm512_max_ps(acc[g], vlo), vhi));
}
HR__AVX512 static void mv_g1(const hr__matvec *m, const float *x, float *y, int n0) { mv_blocks(m, x, y, n0, 1); }
HR__AVX512 static void mv_g2(const hr__matvec *m, const float *x, float *y, int n0) { mv_blocks(m, x, y, n0, 2); }
HR__AVX512 static void mv_g4(const hr__matvec *m, const float *x, float *y, int n0) { mv_blocks(m, x, y, n0, 4); }
HR__AVX512 static void mv_g8(const hr__matvec *m, const float *x, float *y, int n0) { mv_blocks(m, x, y, n0, 8); }
HR__AVX512 static void mv_g16(const hr__matvec *m, const float *x, float *y, int n0) { mv_blocks(m, x, y, n0, 16); }
void hr__k_matvec_block(const hr__matvec *m, const float *x, float *y, int n0, int g) {
  if (g >= 16) mv_g16(m, x, y, n0);
  else if (g >= 8) mv_g8(m, x, y, n0);
  else if (g >= 4) mv_g4(m, x, y, n0);
  else if (g >= 2) mv_g2(m, x, y, n0);
  else mv_g1(m, x, y, n0);
}

int hr__k_dwconv_ok(void) { return hr__cpu_avx512f(); }
void hr__k_dwconv_row(const float *x, const float *w, const float *b, float *o, int H, int W, int C, int OW, int K, int s, int dl, int pt,
                      int pl, float lo, float hi, const hr__dw_epi *e, int grp, int oy) {
  static const hr__dw_epi none;
  const dw_task t = {x, w, b, o, H, W, C, OW, s, dl, pt, pl, (C + 15) / 16, lo, hi, e ? e : &none};
  if (K == 3) dw_row3(&t, grp, oy);
  else dw_row5(&t, grp, oy);
}

int hr__k_fgf_hrow(const int32_t *x0, const int32_t *x1, const float *fx, int W, int w, int cs, const float *a, const float *b, float *ha,
                   float *hb) {
  if (!hr__cpu_avx512f()) return 0;
  return hrow16(x0, x1, fx, W, w, cs, a, b, ha, hb);
}

HR__AVX512 static void stream16(float *dst, const float *src, int64_t n) {
  for (int64_t i = 0; i < n; i += 16) _mm512_stream_ps(dst + i, _mm512_load_ps(src + i));
}
HR__AVX512 static void sfence(void) { _mm_sfence(); }

int hr__k_stream_ok(void) { return hr__cpu_avx512f(); }
void hr__k_stream_copy(float *dst, const float *src, int64_t n) { stream16(dst, src, n); }
void hr__k_stream_fence(void) { sfence(); }

int hr__k_lr_xrow(const float *sp, float *xp, int W) {
  if (!hr__cpu_avx512f()) return 0;
  return xrow16(sp, xp, W);
}

int hr__k_fgf_alpha_row_rgbf(const float *px, int W, const float *ha0, const float *ha1, const float *hb0, const float *hb1, float fy,
                             float *pha, int clip, int stream) {
  if (!hr__cpu_avx512f()) return 0;
  return alpha_row_rgbf(px, W, ha0, ha1, hb0, hb1, fy, pha, clip, stream);
}

int hr__k_fgf_alpha_row_nv12(const hr_frame *f, int y, int W, const float *ha0, const float *ha1, const float *hb0, const float *hb1,
                             float fy, float *pha, int clip, int stream) {
  /* the CPU's features are read once (core/cpu.h: HR_NO_AVX512=1 takes none); the check is a load */
  if (!hr__fmt_is_nv12(f->fmt) || !hr__cpu_avx512bwvl())
    return 0;
  return alpha_row_nv12(f, y, W, ha0, ha1, hb0, hb1, fy, pha, clip, stream);
}
#else
int hr__k_hswish_ok(void) { return 0; }
void hr__k_hswish(float *y, int64_t n) { (void)y; (void)n; }
void hr__k_matvec_block(const hr__matvec *m, const float *x, float *y, int n0, int g) { (void)m; (void)x; (void)y; (void)n0; (void)g; }
int hr__k_dwconv_ok(void) { return 0; }
void hr__k_dwconv_row(const float *x, const float *w, const float *b, float *o, int H, int W, int C, int OW, int K, int s, int dl, int pt,
                      int pl, float lo, float hi, const hr__dw_epi *e, int grp, int oy) {
  (void)e; (void)x; (void)w; (void)b; (void)o; (void)H; (void)W; (void)C; (void)OW; (void)K; (void)s; (void)dl; (void)pt; (void)pl; (void)lo; (void)hi;
  (void)grp; (void)oy;
}
int hr__k_stream_ok(void) { return 0; }
void hr__k_stream_copy(float *dst, const float *src, int64_t n) { (void)dst; (void)src; (void)n; }
void hr__k_stream_fence(void) {}
int hr__k_fgf_hrow(const int32_t *x0, const int32_t *x1, const float *fx, int W, int w, int cs, const float *a, const float *b, float *ha,
                   float *hb) {
  (void)x0; (void)x1; (void)fx; (void)W; (void)w; (void)cs; (void)a; (void)b; (void)ha; (void)hb;
  return 0;
}
int hr__k_lr_xrow(const float *sp, float *xp, int W) {
  (void)sp; (void)xp; (void)W;
  return 0;
}
int hr__k_fgf_alpha_row_rgbf(const float *px, int W, const float *ha0, const float *ha1, const float *hb0, const float *hb1, float fy,
                             float *pha, int clip, int stream) {
  (void)px; (void)W; (void)ha0; (void)ha1; (void)hb0; (void)hb1; (void)fy; (void)pha; (void)clip; (void)stream;
  return 0;
}
int hr__k_fgf_alpha_row_nv12(const hr_frame *f, int y, int W, const float *ha0, const float *ha1, const float *hb0, const float *hb1,
                             float fy, float *pha, int clip, int stream) {
  (void)f; (void)y; (void)W; (void)ha0; (void)ha1; (void)hb0; (void)hb1; (void)fy; (void)pha; (void)clip; (void)stream;
  return 0;
}
#endif
