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
  int H, W, C, OH, OW, s, dl, pt, pl, nblk, gb;
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

/* One output row of one channel block (16) of HR__DW_PX adjacent pixels from ox on, np of them real
 * (a row's last chunk may have fewer). For the shapes dw_rows3 does not take (stride 2, dilation over
 * 2; not in the engine, which gives stride 2 to XNNPACK: hr__k_dwconv_fits), so kept plain. Every
 * output's taps summed in XNNPACK's order (kx outer, ky inner) for the same bits; each pixel's column
 * tap masked empty where the column is outside the image (a zero, as XNNPACK's zero buffer gives;
 * nothing read) or past the row's end, and the rows outside [ky0, ky1) skipped (XNNPACK adds a zero
 * for each, acc + 0 w: the same sum but for the sign of an exactly zero sum, -0 + +0 = +0). */
#define HR__DW_PX 8
#define HR__DW_EACH(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7)
HR__AVX512 static inline __attribute__((always_inline)) void dw_px_row(const dw_task *t, int blk, int oy, int ox, int np, int ky0, int ky1,
                                                                        const int K) {
  const size_t rs = (size_t)t->W * (size_t)t->C, cs = (size_t)t->C;
  const int iy0 = oy * t->s - t->pt, ix0 = ox * t->s - t->pl, c0 = blk * 16, rem = t->C - c0;
  const __mmask16 m = rem >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << rem) - 1);
  const __m512 bias = t->b ? _mm512_maskz_loadu_ps(m, t->b + c0) : _mm512_setzero_ps();
#define HR__DW_INIT(j) __m512 a##j = bias;
  HR__DW_EACH(HR__DW_INIT)
#undef HR__DW_INIT
  const float *xc = t->x + c0, *wb = t->w + c0;  /* tap (ky, kx) at wb + (ky K + kx) C: TF's K x K x C weights */
  for (int kx = 0; kx < K; kx++) {
    /* pixel j's column for this tap: its pointer, and whether it lies in the image (and the row) */
#define HR__DW_COL(j)                                                      \
  const int cx##j = ix0 + (j) * t->s + kx * t->dl;                         \
  const int ok##j = (j) < np && cx##j >= 0 && cx##j < t->W;                \
  const float *q##j = ok##j ? xc + (size_t)cx##j * cs : xc;                \
  const __mmask16 k##j = ok##j ? m : 0;
    HR__DW_EACH(HR__DW_COL)
#undef HR__DW_COL
    for (int ky = ky0; ky < ky1; ky++) {
      const size_t ro = (size_t)(iy0 + ky * t->dl) * rs;
      const __m512 w = _mm512_maskz_loadu_ps(m, wb + (size_t)(ky * K + kx) * cs);
#define HR__DW_FMA(j) a##j = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(k##j, q##j + ro), w, a##j);
      HR__DW_EACH(HR__DW_FMA)
#undef HR__DW_FMA
    }
  }
  const __m512 vlo = _mm512_set1_ps(t->lo), vhi = _mm512_set1_ps(t->hi);
  float *oo = t->o + ((size_t)oy * (size_t)t->OW + (size_t)ox) * cs + c0;
  const __m512 v1 = t->e->op1 ? _mm512_maskz_loadu_ps(m, t->e->v1 + c0) : _mm512_setzero_ps();
  const __m512 v2 = t->e->op2 ? _mm512_maskz_loadu_ps(m, t->e->v2 + c0) : _mm512_setzero_ps();
#define HR__DW_OUT(j) \
  if ((j) < np) _mm512_mask_storeu_ps(oo + (size_t)(j) * cs, m, dw_finish(t->e, a##j, vlo, vhi, v1, v2));
  HR__DW_EACH(HR__DW_OUT)
#undef HR__DW_OUT
}

/* Three output rows (oy, oy + dl, oy + 2 dl) of eight adjacent pixels of one channel block, stride 1.
 * The kernel is bound by loads (one core here: ~2 G 64-byte loads a second against ~4.4 G FMAs with
 * enough chains in flight): one row at a time costs an input load per FMA; here each input vector
 * loaded serves the three rows (input row iy0 + r dl is tap row r of output row oy, r - 1 of oy + dl,
 * r - 2 of oy + 2 dl): 0.51 loads an FMA for 5x5, and 24 chains. Every output sums its taps in
 * XNNPACK's order (kx outer, ky inner), a tap outside the image adding 0 w as XNNPACK's zero buffer
 * does: the same bits. EDGE (a tap outside the image, fewer than three rows (nrows) or eight pixels
 * (np)): the window the chunk reads is first copied to the stack with zeros outside the image (at
 * most 7 x 16 vectors), and only the real outputs are stored; else the loads read the image where it
 * lies. */
#define HR__DW_WIN_COLS(K, dl) (HR__DW_PX + ((K) - 1) * (dl))
HR__AVX512 static inline __attribute__((always_inline)) void dw_rows3(const dw_task *t, int blk, int oy, int ox, int nrows, int np, const int K,
                                                                       const int EDGE) {
  const size_t rs = (size_t)t->W * (size_t)t->C, cs = (size_t)t->C;
  const int dl = t->dl, c0 = blk * 16, rem = t->C - c0, iy0 = oy - t->pt, ix0 = ox - t->pl;
  const __mmask16 m = rem >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << rem) - 1);
  const float *xp;     /* the chunk's input row 0, column 0 (image or window) */
  size_t xrs, xcs;     /* from one tap row to the next, one column to the next (floats) */
  float win[(5 + 2) * HR__DW_WIN_COLS(5, 2) * 16] __attribute__((aligned(64)));
  if (EDGE) {
    const int wc = HR__DW_WIN_COLS(K, dl);
    for (int r = 0; r < K + 2; r++) {
      const int iy = iy0 + r * dl, yin = iy >= 0 && iy < t->H;
      const float *row = t->x + c0 + (yin ? (size_t)iy * rs : 0);
      for (int c = 0; c < wc; c++) {
        const int ix = ix0 + c, in = yin && ix >= 0 && ix < t->W;
        _mm512_store_ps(win + ((size_t)r * (size_t)wc + (size_t)c) * 16, _mm512_maskz_loadu_ps(in ? m : 0, in ? row + (size_t)ix * cs : row));
      }
    }
    xp = win; xrs = (size_t)wc * 16; xcs = 16;
  } else {
    xp = t->x + c0 + (size_t)iy0 * rs + (size_t)ix0 * cs; xrs = (size_t)dl * rs; xcs = cs;
  }
  const __m512 bias = t->b ? _mm512_maskz_loadu_ps(m, t->b + c0) : _mm512_setzero_ps();
#define HR__DW_INIT(j) __m512 a##j = bias, b##j = bias, d##j = bias;
  HR__DW_EACH(HR__DW_INIT)
#undef HR__DW_INIT
  const float *wb = t->w + c0;
#pragma GCC unroll 1
  for (int kx = 0; kx < K; kx++) {
    const float *wt = wb + (size_t)kx * cs;  /* tap (ky, kx) at wt + ky K C */
    const float *p0 = xp + (size_t)kx * (size_t)dl * xcs;
#define HR__DW_PTR(j) const float *p##j = p0 + (size_t)(j) * xcs;
    HR__DW_PTR(1) HR__DW_PTR(2) HR__DW_PTR(3) HR__DW_PTR(4) HR__DW_PTR(5) HR__DW_PTR(6) HR__DW_PTR(7)
#undef HR__DW_PTR
    __m512 w0 = _mm512_setzero_ps(), w1 = w0, w2 = w0;  /* taps r, r - 1, r - 2 of this column */
    size_t ro = 0;  /* tap row r's offset: opaque to the compiler (below), so that each load is base +
                     * index; otherwise it kept the 56 pixel-row addresses on the stack, a scalar
                     * load before each vector load */
#pragma GCC unroll 7
    for (int r = 0; r < K + 2; r++) {
      w2 = w1; w1 = w0;
      if (r < K) w0 = _mm512_maskz_loadu_ps(m, wt + (size_t)r * (size_t)K * cs);
#define HR__DW_FMA(j)                                                        \
  {                                                                          \
    const __m512 v = _mm512_maskz_loadu_ps(m, p##j + ro);                    \
    if (r < K) a##j = _mm512_fmadd_ps(v, w0, a##j);                          \
    if (r >= 1 && r <= K) b##j = _mm512_fmadd_ps(v, w1, b##j);               \
    if (r >= 2) d##j = _mm512_fmadd_ps(v, w2, d##j);                         \
  }
      HR__DW_EACH(HR__DW_FMA)
#undef HR__DW_FMA
      ro += xrs;
      __asm__("" : "+r"(ro));
    }
  }
  const __m512 vlo = _mm512_set1_ps(t->lo), vhi = _mm512_set1_ps(t->hi);
  const __m512 v1 = t->e->op1 ? _mm512_maskz_loadu_ps(m, t->e->v1 + c0) : _mm512_setzero_ps();
  const __m512 v2 = t->e->op2 ? _mm512_maskz_loadu_ps(m, t->e->v2 + c0) : _mm512_setzero_ps();
  float *oo = t->o + ((size_t)oy * (size_t)t->OW + (size_t)ox) * cs + c0;
  const size_t ors = (size_t)dl * (size_t)t->OW * cs;
#define HR__DW_OUT(j)                                                                                                   \
  if (!EDGE || (j) < np) {                                                                                              \
    _mm512_mask_storeu_ps(oo + (size_t)(j) * cs, m, dw_finish(t->e, a##j, vlo, vhi, v1, v2));                            \
    if (!EDGE || nrows > 1) _mm512_mask_storeu_ps(oo + ors + (size_t)(j) * cs, m, dw_finish(t->e, b##j, vlo, vhi, v1, v2)); \
    if (!EDGE || nrows > 2) _mm512_mask_storeu_ps(oo + 2 * ors + (size_t)(j) * cs, m, dw_finish(t->e, d##j, vlo, vhi, v1, v2)); \
  }
  HR__DW_EACH(HR__DW_OUT)
#undef HR__DW_OUT
}
#undef HR__DW_EACH

/* Task (grp, band): channel blocks [gb grp, gb (grp + 1)). At stride 1, dilation 1 or 2
 * (HR__DW_TRIPLE) a band is three output rows dl apart (dw_rows3): the rows in groups of 3 dl, each
 * group dl bands (band = group dl + phase: rows group 3 dl + phase + {0, dl, 2 dl} below OH),
 * HR__DW_PX pixels at a time, the chunks whose taps all lie in the image read in place. Else (stride
 * 2, which the engine leaves to XNNPACK, hr__k_dwconv_fits; dilation over 2) a band is HR__DW_ROWS
 * rows, done row by row (dw_px_row) with the border's taps masked. */
HR__AVX512 static inline __attribute__((always_inline)) void dw_band_k(const dw_task *t, int grp, int band, const int K) {
  const int nb = t->nblk - t->gb * grp < t->gb ? t->nblk - t->gb * grp : t->gb;
  const int span = (K - 1) * t->dl + 1;  /* input rows and columns one output pixel reads */
  if (HR__DW_TRIPLE(t->s, t->dl)) {
    const int dl = t->dl, oy0 = band / dl * 3 * dl + band % dl;
    const int rows = oy0 >= t->OH ? 0 : oy0 + dl >= t->OH ? 1 : oy0 + 2 * dl >= t->OH ? 2 : 3;
    if (!rows) return;
    const int rows_in = rows == 3 && oy0 - t->pt >= 0 && oy0 + 2 * dl - t->pt + span <= t->H;
    for (int ox = 0; ox < t->OW; ox += HR__DW_PX) {
      const int ix0 = ox - t->pl, np = t->OW - ox < HR__DW_PX ? t->OW - ox : HR__DW_PX;
      if (rows_in && np == HR__DW_PX && ix0 >= 0 && HR__DW_PX - 1 + ix0 + span <= t->W)
        for (int bi = 0; bi < nb; bi++) dw_rows3(t, t->gb * grp + bi, oy0, ox, 3, HR__DW_PX, K, 0);
      else
        for (int bi = 0; bi < nb; bi++) dw_rows3(t, t->gb * grp + bi, oy0, ox, rows, np, K, 1);
    }
    return;
  }
  const int oy0 = band * HR__DW_ROWS, rows = t->OH - oy0 < HR__DW_ROWS ? t->OH - oy0 : HR__DW_ROWS;
  for (int oy = oy0; oy < oy0 + rows; oy++) {
    const int iy0 = oy * t->s - t->pt;
    int ky0 = 0, ky1 = K;  /* the taps whose input row lies in the image */
    while (ky0 < K && iy0 + ky0 * t->dl < 0) ky0++;
    while (ky1 > ky0 && iy0 + (ky1 - 1) * t->dl >= t->H) ky1--;
    for (int ox = 0; ox < t->OW; ox += HR__DW_PX) {
      const int np = t->OW - ox < HR__DW_PX ? t->OW - ox : HR__DW_PX;
      for (int bi = 0; bi < nb; bi++) dw_px_row(t, t->gb * grp + bi, oy, ox, np, ky0, ky1, K);
    }
  }
}
HR__AVX512 static void dw_band3(const dw_task *t, int grp, int band) { dw_band_k(t, grp, band, 3); }
HR__AVX512 static void dw_band5(const dw_task *t, int grp, int band) { dw_band_k(t, grp, band, 5); }

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

/* Pointwise convolution (kernels_simd.h, hr__pwg): 8 rows x NV blocks of 16 outputs in registers,
 * the weights' rows read where they lie (each k's 32 outputs, N floats apart; a block's rows stay in
 * L1 across the rows of x). Each output as XNNPACK's f32 GEMM kernels compute it: the bias, then
 * acc = x[k] w[k] + acc for k in order, max lo, min hi; the HardSwish after as hswish_v (XNNPACK's
 * operator): the same bits as the convolution and the HardSwish on XNNPACK. XNNPACK 2022's 7 x 16
 * kernel reads a weight vector and 7 broadcasts for 7 multiply-adds and streams all the packed
 * weights from L2 for every 7 rows; this one 2 vectors and 8 broadcasts for 16 (bench/pwg_probe.c:
 * 1.10-1.55x on RVM's shapes on the 2-vCPU AVX-512 VM, one thread, the same bits). */
#define HR__PWG_MR 8
/* Rows [m, m1) in tiles of R (m1 - m a multiple of R) of NV blocks of 16 outputs from n0. full:
 * every lane of the blocks on (plain loads and stores: masked ones with every lane on ran the
 * 49152 x 16 -> 64 shape at ~0.6x, the stores the most). The tile loop inside: a call per tile of 8
 * rows cost a fifth of the time where K is 16. */
HR__AVX512 static inline __attribute__((always_inline)) void pwg_rows(const hr__pwg *g, int64_t m, int64_t m1, const int R, int n0,
                                                                      const int NV, const int full, __mmask16 k0, __mmask16 k1) {
  const int K = g->K, N = g->N, hs = g->hs;
  const __m512 b0 = g->b ? _mm512_maskz_loadu_ps(k0, g->b + n0) : _mm512_setzero_ps();
  const __m512 b1 = NV > 1 && g->b ? _mm512_maskz_loadu_ps(k1, g->b + n0 + 16) : _mm512_setzero_ps();
  const __m512 lo = _mm512_set1_ps(g->lo), hi = _mm512_set1_ps(g->hi);
  for (; m < m1; m += R) {
    __m512 a0[HR__PWG_MR], a1[HR__PWG_MR];
#pragma GCC unroll 8
    for (int r = 0; r < R; r++) { a0[r] = b0; a1[r] = b1; }
    const float *x = g->x + m * K, *w = g->w + n0;
    for (int k = 0; k < K; k++, w += N) {
      const __m512 w0 = full ? _mm512_loadu_ps(w) : _mm512_maskz_loadu_ps(k0, w);
      const __m512 w1 = NV < 2 ? w0 : full ? _mm512_loadu_ps(w + 16) : _mm512_maskz_loadu_ps(k1, w + 16);
#pragma GCC unroll 8
      for (int r = 0; r < R; r++) {
        const __m512 v = _mm512_set1_ps(x[(size_t)r * K + k]);
        a0[r] = _mm512_fmadd_ps(v, w0, a0[r]);
        if (NV > 1) a1[r] = _mm512_fmadd_ps(v, w1, a1[r]);
      }
    }
    float *y = g->y + m * N + n0;
#pragma GCC unroll 8
    for (int r = 0; r < R; r++) {
      __m512 o0 = _mm512_min_ps(_mm512_max_ps(a0[r], lo), hi), o1 = _mm512_min_ps(_mm512_max_ps(a1[r], lo), hi);
      if (hs) { o0 = hswish_v(o0); o1 = hswish_v(o1); }
      if (full) {
        _mm512_storeu_ps(y + (size_t)r * N, o0);
        if (NV > 1) _mm512_storeu_ps(y + (size_t)r * N + 16, o1);
      } else {
        _mm512_mask_storeu_ps(y + (size_t)r * N, k0, o0);
        if (NV > 1) _mm512_mask_storeu_ps(y + (size_t)r * N + 16, k1, o1);
      }
    }
  }
}
HR__AVX512 static void pwg_8x2f(const hr__pwg *g, int64_t m, int64_t m1, int n0) { pwg_rows(g, m, m1, 8, n0, 2, 1, 0xffff, 0xffff); }
HR__AVX512 static void pwg_8x2(const hr__pwg *g, int64_t m, int64_t m1, int n0, __mmask16 k0, __mmask16 k1) { pwg_rows(g, m, m1, 8, n0, 2, 0, k0, k1); }
HR__AVX512 static void pwg_1x2(const hr__pwg *g, int64_t m, int64_t m1, int n0, __mmask16 k0, __mmask16 k1) { pwg_rows(g, m, m1, 1, n0, 2, 0, k0, k1); }
HR__AVX512 static void pwg_8x1(const hr__pwg *g, int64_t m, int64_t m1, int n0, __mmask16 k0) { pwg_rows(g, m, m1, 8, n0, 1, 0, k0, 0); }
HR__AVX512 static void pwg_1x1(const hr__pwg *g, int64_t m, int64_t m1, int n0, __mmask16 k0) { pwg_rows(g, m, m1, 1, n0, 1, 0, k0, 0); }
int hr__k_pwg_ok(void) { return hr__cpu_avx512f(); }
HR__AVX512 static void pwg_rows_all(const hr__pwg *g, int64_t m0, int64_t m1) {
  const int N = g->N, nf = N / 32 * 32, rem = N - nf;
  const __mmask16 k0 = rem >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << rem) - 1);
  const __mmask16 k1 = rem > 16 ? (__mmask16)((1u << (rem - 16)) - 1) : 0;
  const int64_t mt = m0 + (m1 - m0) / HR__PWG_MR * HR__PWG_MR;
  for (int64_t m = m0; m < mt; m += HR__PWG_MR) {
    for (int n0 = 0; n0 < nf; n0 += 32) pwg_rows(g, m, m + HR__PWG_MR, 8, n0, 2, 1, 0xffff, 0xffff);
    if (rem > 16) pwg_rows(g, m, m + HR__PWG_MR, 8, nf, 2, 0, k0, k1);
    else if (rem) pwg_rows(g, m, m + HR__PWG_MR, 8, nf, 1, 0, k0, 0);
  }
  for (int64_t m = mt; m < m1; m++) {
    for (int n0 = 0; n0 < nf; n0 += 32) pwg_rows(g, m, m + 1, 1, n0, 2, 0, 0xffff, 0xffff);
    if (rem > 16) pwg_rows(g, m, m + 1, 1, nf, 2, 0, k0, k1);
    else if (rem) pwg_rows(g, m, m + 1, 1, nf, 1, 0, k0, 0);
  }
}
void hr__k_pwg_rows(const hr__pwg *g, int64_t m0, int64_t m1) { pwg_rows_all(g, m0, m1); }
void hr__k_pwg_block(const hr__pwg *g, int64_t m0, int64_t m1, int n0) {
  const int rem = g->N - n0;
  const __mmask16 k0 = rem >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << rem) - 1);
  const __mmask16 k1 = rem >= 32 ? (__mmask16)0xffff : rem > 16 ? (__mmask16)((1u << (rem - 16)) - 1) : 0;
  const int64_t mt = m0 + (m1 - m0) / HR__PWG_MR * HR__PWG_MR;   /* whole tiles of 8 rows, then one by one */
  if (k1 == (__mmask16)0xffff) {
    pwg_8x2f(g, m0, mt, n0);
    pwg_1x2(g, mt, m1, n0, k0, k1);
  } else if (k1) {
    pwg_8x2(g, m0, mt, n0, k0, k1);
    pwg_1x2(g, mt, m1, n0, k0, k1);
  } else {
    pwg_8x1(g, m0, mt, n0, k0);
    pwg_1x1(g, mt, m1, n0, k0);
  }
}

int hr__k_dwconv_ok(void) { return hr__cpu_avx512f(); }
void hr__k_dwconv_band(const float *x, const float *w, const float *b, float *o, int H, int W, int C, int OH, int OW, int K, int s, int dl,
                       int pt, int pl, float lo, float hi, const hr__dw_epi *e, int gb, int grp, int band) {
  static const hr__dw_epi none;
  const dw_task t = {x, w, b, o, H, W, C, OH, OW, s, dl, pt, pl, (C + 15) / 16, gb, lo, hi, e ? e : &none};
  if (K == 3) dw_band3(&t, grp, band);
  else dw_band5(&t, grp, band);
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
int hr__k_pwg_ok(void) { return 0; }
void hr__k_pwg_block(const hr__pwg *g, int64_t m0, int64_t m1, int n0) { (void)g; (void)m0; (void)m1; (void)n0; }
void hr__k_pwg_rows(const hr__pwg *g, int64_t m0, int64_t m1) { (void)g; (void)m0; (void)m1; }
int hr__k_dwconv_ok(void) { return 0; }
void hr__k_dwconv_band(const float *x, const float *w, const float *b, float *o, int H, int W, int C, int OH, int OW, int K, int s, int dl,
                       int pt, int pl, float lo, float hi, const hr__dw_epi *e, int gb, int grp, int band) {
  (void)e; (void)gb; (void)x; (void)w; (void)b; (void)o; (void)H; (void)W; (void)C; (void)OH; (void)OW; (void)K; (void)s; (void)dl; (void)pt; (void)pl;
  (void)lo; (void)hi; (void)grp; (void)band;
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
