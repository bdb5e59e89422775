/* AVX-512 ingest kernel: NV12 rows as planar R, G, B floats, 16 pixels a step (the refiner's
 * guidance, read once per full-resolution row). The scalar definition's operations
 * (ingest_kernels.h, hr__yuv_px) lane by lane in the same order, no FMA (ISO C: -ffp-contract=off),
 * so it agrees with the scalar and SSE2 paths bit for bit; test_ingest_resample checks it.
 * Picked at run time when the CPU has AVX-512F/BW; empty where GCC or clang cannot target it. */
#include "ingest/ingest_kernels.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && !defined(HR_INGEST_NO_AVX512)
#include <immintrin.h>

#define HR__AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx2")))

HR__AVX512 static int row_planar_nv12(const hr_frame *f, int y, float *r, float *g, float *b) {
  const hr__ingest_rows rows = hr__ingest_rows_at(f, y);
  const hr__yuv_k k = hr__yuv_coeffs(f->fmt);
  const __m512 yo = _mm512_set1_ps((float)k.yo), ys = _mm512_set1_ps(k.ys), c128 = _mm512_set1_ps(128.0f);
  const __m512 rv = _mm512_set1_ps(k.rv), gu = _mm512_set1_ps(k.gu), gv = _mm512_set1_ps(k.gv), bu = _mm512_set1_ps(k.bu);
  const __m512 zero = _mm512_setzero_ps(), one = _mm512_set1_ps(1.0f);
  const __m512i dup = _mm512_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7);
  const __m512i m8 = _mm512_set1_epi32(0xff);
  const int w = f->width;
  int x = 0;
  for (; x + 16 <= w; x += 16) {
    const __m512i Y = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(const void *)(rows.p0 + x)));
    /* 8 (cb, cr) pairs as 16-bit values, each pair's value given to its two pixels */
    const __m256i c8 = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(const void *)(rows.c1 + x)));
    const __m512i C = _mm512_permutexvar_epi32(dup, _mm512_castsi256_si512(c8));
    const __m512 u = _mm512_sub_ps(_mm512_cvtepi32_ps(_mm512_and_si512(C, m8)), c128);
    const __m512 v = _mm512_sub_ps(_mm512_cvtepi32_ps(_mm512_srli_epi32(C, 8)), c128);
    const __m512 yy = _mm512_mul_ps(_mm512_sub_ps(_mm512_cvtepi32_ps(Y), yo), ys);
    /* clamp as hr__clamp01: max(0, v) then min(1, v), in this operand order */
    const __m512 R = _mm512_min_ps(one, _mm512_max_ps(zero, _mm512_add_ps(yy, _mm512_mul_ps(rv, v))));
    const __m512 G = _mm512_min_ps(one, _mm512_max_ps(zero, _mm512_sub_ps(_mm512_sub_ps(yy, _mm512_mul_ps(gu, u)), _mm512_mul_ps(gv, v))));
    const __m512 B = _mm512_min_ps(one, _mm512_max_ps(zero, _mm512_add_ps(yy, _mm512_mul_ps(bu, u))));
    _mm512_storeu_ps(r + x, R);
    _mm512_storeu_ps(g + x, G);
    _mm512_storeu_ps(b + x, B);
  }
  return x;
}

int hr__ingest_avx512_row_planar(const hr_frame *f, int y, float *r, float *g, float *b) {
  /* libgcc initialises the CPU model before main; the check is a load and a test */
  if (!hr__fmt_is_nv12(f->fmt) || !__builtin_cpu_supports("avx512f") || !__builtin_cpu_supports("avx512bw") ||
      !__builtin_cpu_supports("avx512vl"))
    return 0;
  return row_planar_nv12(f, y, r, g, b);
}
#else
int hr__ingest_avx512_row_planar(const hr_frame *f, int y, float *r, float *g, float *b) {
  (void)f; (void)y; (void)r; (void)g; (void)b;
  return 0;
}
#endif
