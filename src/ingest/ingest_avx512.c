/* AVX-512 ingest kernels: NV12 rows as planar R, G, B floats, 16 pixels a step (the refiner's
 * guidance, read once per full-resolution row), and the resample's horizontal pass of float RGB rows. The scalar definition's operations
 * (ingest_kernels.h, hr__yuv_px) lane by lane in the same order, no FMA (ISO C: -ffp-contract=off),
 * so it agrees with the scalar and SSE2 paths bit for bit; test_ingest_resample checks it.
 * Picked at run time when the CPU has AVX-512F/BW; empty where GCC or clang cannot target it. */
#include "ingest/ingest_kernels.h"
#include "core/cpu.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && !defined(HR_INGEST_NO_AVX512)
#include <immintrin.h>

#define HR__AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx2")))
#include "ingest/nv12_avx512.h"

HR__AVX512 static int row_planar_nv12(const hr_frame *f, int y, float *r, float *g, float *b) {
  const hr__ingest_rows rows = hr__ingest_rows_at(f, y);
  const hr__nv12_k16 c = hr__nv12_k16_make(f->fmt);
  const int w = f->width;
  int x = 0;
  for (; x + 16 <= w; x += 16) {
    __m512 R, G, B;
    hr__nv12_rgb16(&c, &rows, x, &R, &G, &B);
    _mm512_storeu_ps(r + x, R);
    _mm512_storeu_ps(g + x, G);
    _mm512_storeu_ps(b + x, B);
  }
  return x;
}

/* Horizontal pass of a float RGB row (hpass_rgbf32 in ingest.c), 16 output columns a step: each
 * column's left and right taps gathered per channel (byte offsets: rows need no alignment), then
 * L + (R - L) * frac as the scalar loop. The lines of row `next` that the same columns will read are
 * prefetched meanwhile (the frame comes from memory; at 4x down the next row built is 1 or 3 rows
 * on). Every padded column is written (the plan's tables are padded in bounds). */
HR__AVX512 static void hpass_rgbf32_16(const hr__ingest_plan *p, const uint8_t *row, const uint8_t *next, float *slot) {
  const int wp = p->out_w_pad;
  const __m512i twelve = _mm512_set1_epi32(12), four = _mm512_set1_epi32(4);
  for (int o = 0; o < wp; o += 16) {
    if (next) {
      const ptrdiff_t a = (ptrdiff_t)p->x_lo[o] * 12 & ~(ptrdiff_t)63, e = (ptrdiff_t)p->x_hi[o + 15] * 12 + 12;
      for (ptrdiff_t q = a; q < e; q += 64) _mm_prefetch((const char *)(next + q), _MM_HINT_T0);
    }
    __m512i lo = _mm512_mullo_epi32(_mm512_loadu_si512(p->x_lo + o), twelve);
    __m512i hi = _mm512_mullo_epi32(_mm512_loadu_si512(p->x_hi + o), twelve);
    const __m512 fr = _mm512_loadu_ps(p->x_frac + o);
    for (int c = 0; c < 3; c++) {
      const __m512 L = _mm512_i32gather_ps(lo, row, 1), R = _mm512_i32gather_ps(hi, row, 1);
      _mm512_store_ps(slot + (size_t)c * wp + o, _mm512_add_ps(L, _mm512_mul_ps(_mm512_sub_ps(R, L), fr)));
      lo = _mm512_add_epi32(lo, four);
      hi = _mm512_add_epi32(hi, four);
    }
  }
}

int hr__ingest_avx512_hpass_rgbf32(const hr__ingest_plan *p, const hr_frame *f, int y, int next_y, float *slot) {
  if (!hr__cpu_avx512f() || (int64_t)p->in_w * 12 > INT32_MAX) return 0;
  const uint8_t *row = (const uint8_t *)f->planes[0] + (ptrdiff_t)y * f->strides[0];
  const uint8_t *next = next_y >= 0 ? (const uint8_t *)f->planes[0] + (ptrdiff_t)next_y * f->strides[0] : NULL;
  hpass_rgbf32_16(p, row, next, slot);
  return 1;
}

int hr__ingest_avx512_row_planar(const hr_frame *f, int y, float *r, float *g, float *b) {
  /* the CPU's features are read once (core/cpu.h: HR_NO_AVX512=1 takes none); the check is a load */
  if (!hr__fmt_is_nv12(f->fmt) || !hr__cpu_avx512bwvl())
    return 0;
  return row_planar_nv12(f, y, r, g, b);
}
#else
int hr__ingest_avx512_hpass_rgbf32(const hr__ingest_plan *p, const hr_frame *f, int y, int next_y, float *slot) {
  (void)p; (void)f; (void)y; (void)next_y; (void)slot;
  return 0;
}
int hr__ingest_avx512_row_planar(const hr_frame *f, int y, float *r, float *g, float *b) {
  (void)f; (void)y; (void)r; (void)g; (void)b;
  return 0;
}
#endif
