/* 16 NV12 pixels as R, G, B floats in AVX-512 registers: the scalar definition's operations
 * (ingest_kernels.h, hr__yuv_px) lane by lane in the same order, no FMA, clamped as hr__clamp01
 * (max(0, v) then min(1, v), in this operand order), so results equal the scalar path's bit for bit.
 * Included only by files that target AVX-512 (ingest_avx512.c, session/kernels_avx512.c): they
 * define HR__AVX512 and include <immintrin.h> first. */
#ifndef HR_INGEST_NV12_AVX512_H
#define HR_INGEST_NV12_AVX512_H
#include "ingest/ingest_kernels.h"

typedef struct hr__nv12_k16 { __m512 yo, ys, c128, rv, gu, gv, bu, zero, one; __m512i dup, m8; } hr__nv12_k16;

HR__AVX512 static inline hr__nv12_k16 hr__nv12_k16_make(hr_pixfmt fmt) {
  const hr__yuv_k k = hr__yuv_coeffs(fmt);
  hr__nv12_k16 c;
  c.yo = _mm512_set1_ps((float)k.yo); c.ys = _mm512_set1_ps(k.ys); c.c128 = _mm512_set1_ps(128.0f);
  c.rv = _mm512_set1_ps(k.rv); c.gu = _mm512_set1_ps(k.gu); c.gv = _mm512_set1_ps(k.gv); c.bu = _mm512_set1_ps(k.bu);
  c.zero = _mm512_setzero_ps(); c.one = _mm512_set1_ps(1.0f);
  c.dup = _mm512_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7);
  c.m8 = _mm512_set1_epi32(0xff);
  return c;
}

/* Pixels [x, x + 16) of the rows (x even): luma from rows.p0, interleaved chroma from rows.c1. */
HR__AVX512 static inline void hr__nv12_rgb16(const hr__nv12_k16 *c, const hr__ingest_rows *rows, int x, __m512 *R, __m512 *G,
                                             __m512 *B) {
  const __m512i Y = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(const void *)(rows->p0 + x)));
  /* 8 (cb, cr) pairs as 16-bit values, each pair's value given to its two pixels */
  const __m256i c8 = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(const void *)(rows->c1 + x)));
  const __m512i C = _mm512_permutexvar_epi32(c->dup, _mm512_castsi256_si512(c8));
  const __m512 u = _mm512_sub_ps(_mm512_cvtepi32_ps(_mm512_and_si512(C, c->m8)), c->c128);
  const __m512 v = _mm512_sub_ps(_mm512_cvtepi32_ps(_mm512_srli_epi32(C, 8)), c->c128);
  const __m512 yy = _mm512_mul_ps(_mm512_sub_ps(_mm512_cvtepi32_ps(Y), c->yo), c->ys);
  *R = _mm512_min_ps(c->one, _mm512_max_ps(c->zero, _mm512_add_ps(yy, _mm512_mul_ps(c->rv, v))));
  *G = _mm512_min_ps(c->one, _mm512_max_ps(c->zero, _mm512_sub_ps(_mm512_sub_ps(yy, _mm512_mul_ps(c->gu, u)), _mm512_mul_ps(c->gv, v))));
  *B = _mm512_min_ps(c->one, _mm512_max_ps(c->zero, _mm512_add_ps(yy, _mm512_mul_ps(c->bu, u))));
}
#endif
