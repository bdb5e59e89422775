/* AVX-512 ingest kernel: NV12 rows as planar R, G, B floats, 16 pixels a step (the refiner's
 * guidance, read once per full-resolution row). The scalar definition's operations
 * (ingest_kernels.h, hr__yuv_px) lane by lane in the same order, no FMA (ISO C: -ffp-contract=off),
 * so it agrees with the scalar and SSE2 paths bit for bit; test_ingest_resample checks it.
 * Picked at run time when the CPU has AVX-512F/BW; empty where GCC or clang cannot target it. */
#include "ingest/ingest_kernels.h"

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
