/* Ingest kernels: the per-pixel colour definition shared by the scalar and SIMD paths, and the
 * kernel entry points the driver (ingest.c) dispatches to. Private to src/ingest/. */
#ifndef HR_INGEST_KERNELS_H
#define HR_INGEST_KERNELS_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include "ingest/ingest.h"

#define HR__U8_SCALE (1.0f / 255.0f)

/* BT.601 conversion constants for one range, with the chroma scale folded into the coefficients:
 *   y = (Y - yo) * ys;  u = Cb - 128;  v = Cr - 128   (integers, exact as floats)
 *   R = clamp01(y + rv*v);  G = clamp01(y - gu*u - gv*v);  B = clamp01(y + bu*u)
 * full range ('420f'): yo = 0, ys = 1/255, rv = 1.402/255, gu = 0.344136/255, gv = 0.714136/255,
 * bu = 1.772/255; video range ('420v'): yo = 16, ys = 1/219 (= 255/219/255), and the coefficients
 * over 224 instead of 255 (chroma * 255/224). Each constant is rounded once to float. */
typedef struct hr__yuv_k {
  int yo;
  float ys, rv, gu, gv, bu;
} hr__yuv_k;

static inline bool hr__fmt_is_yuv(hr_pixfmt f) {
  return f == HR_PIX_NV12_FULL || f == HR_PIX_NV12_VIDEO || f == HR_PIX_I420_FULL || f == HR_PIX_I420_VIDEO;
}
static inline bool hr__fmt_is_nv12(hr_pixfmt f) { return f == HR_PIX_NV12_FULL || f == HR_PIX_NV12_VIDEO; }

static inline hr__yuv_k hr__yuv_coeffs(hr_pixfmt fmt) {
  const bool video = fmt == HR_PIX_NV12_VIDEO || fmt == HR_PIX_I420_VIDEO;
  const double cs = video ? 224.0 : 255.0;
  hr__yuv_k k;
  k.yo = video ? 16 : 0;
  k.ys = (float)(1.0 / (video ? 219.0 : 255.0));
  k.rv = (float)(1.402 / cs);
  k.gu = (float)(0.344136 / cs);
  k.gv = (float)(0.714136 / cs);
  k.bu = (float)(1.772 / cs);
  return k;
}

/* v < 0 -> 0, v > 1 -> 1 (NaN passes): the SIMD kernels use max(0, v) then min(1, v) in exactly
 * this operand order, which is bit-identical. */
static inline float hr__clamp01(float v) {
  v = v < 0.0f ? 0.0f : v;
  return v > 1.0f ? 1.0f : v;
}

/* The colour definition for one pixel. Every kernel performs these operations in this order, so
 * all paths agree bit for bit (x86-64: SSE arithmetic, no FMA contraction in ISO C mode). */
static inline void hr__yuv_px(int Y, int U, int V, hr__yuv_k k, float *rgb) {
  const float y = (float)(Y - k.yo) * k.ys, u = (float)(U - 128), v = (float)(V - 128);
  rgb[0] = hr__clamp01(y + k.rv * v);
  rgb[1] = hr__clamp01(y - k.gu * u - k.gv * v);
  rgb[2] = hr__clamp01(y + k.bu * u);
}

/* Row pointers of one input row: plane 0 at row y, chroma rows y/2 (NV12: c1 = CbCr; I420: U, V). */
typedef struct hr__ingest_rows {
  const uint8_t *p0, *c1, *c2;
} hr__ingest_rows;

static inline hr__ingest_rows hr__ingest_rows_at(const hr_frame *f, int y) {
  hr__ingest_rows r;
  r.p0 = (const uint8_t *)f->planes[0] + (ptrdiff_t)y * f->strides[0];
  r.c1 = r.c2 = NULL;
  if (hr__fmt_is_yuv(f->fmt)) r.c1 = (const uint8_t *)f->planes[1] + (ptrdiff_t)(y / 2) * f->strides[1];
  if (f->fmt == HR_PIX_I420_FULL || f->fmt == HR_PIX_I420_VIDEO)
    r.c2 = (const uint8_t *)f->planes[2] + (ptrdiff_t)(y / 2) * f->strides[2];
  return r;
}

/* Row conversion of pixels [x0, width) with the scalar definition (the reference and the tails):
 * interleaved into dst, or planar into r, g, b. */
void hr__ingest_row_scalar(const hr_frame *f, int y, int x0, float *dst);
void hr__ingest_row_planar_scalar(const hr_frame *f, int y, int x0, float *r, float *g, float *b);

/* AVX-512 planar row conversion (NV12 only; 0 for other formats or CPUs without AVX-512F/BW/VL):
 * converts pixels [0, n) for n a multiple of 16 and returns n, the rest is the caller's. */
int hr__ingest_avx512_row_planar(const hr_frame *f, int y, float *r, float *g, float *b);

/* AVX-512 horizontal pass of an RGBF32 row y into the planar slot, every padded column (the same
 * values as hpass_rgbf32), prefetching row next_y (-1: none) meanwhile. 1 when done, 0 where the CPU
 * or the build cannot (the caller's loop then runs). */
int hr__ingest_avx512_hpass_rgbf32(const hr__ingest_plan *p, const hr_frame *f, int y, int next_y, float *slot);

#if defined(__SSE2__)
#define HR__INGEST_HAVE_SSE2 1
/* SSE2 row conversion: converts pixels [0, n) for the largest n it handles (a multiple of 4, or
 * the whole row) and returns n; the caller converts the rest with hr__ingest_row_scalar. */
int hr__ingest_sse2_row(const hr_frame *f, int y, float *dst);
int hr__ingest_sse2_row_planar(const hr_frame *f, int y, float *r, float *g, float *b);
/* SSE2 horizontal pass of input row y into the planar slot (3 x out_w_pad floats) for every
 * column whose taps are vector-safe (see hr__ingest_plan.x_base); the plan's fix-up columns are
 * left for the scalar pass. Returns false for formats it does not handle (RGBF32). */
bool hr__ingest_sse2_hpass(const hr__ingest_plan *p, const hr_frame *f, int y, float *slot);
/* SSE2 vertical pass: dst[3o+c] = t_c[o] + (b_c[o] - t_c[o]) * w for o < out_w (planes wp apart). */
void hr__ingest_sse2_vpass(const float *t, const float *b, int wp, int out_w, float w, float *dst);
#endif

#endif
