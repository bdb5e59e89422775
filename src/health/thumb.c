/* Luma thumbnail of a caller's frame, read in place from a sparse grid: the input side of health. */
#include <math.h>
#include <stdio.h>
#include "headroom.h"

#define HR__THUMB_GRID 4     /* points per cell along each axis */
#define HR__THUMB_MAX 256    /* cells along each axis */

/* Luma in [0,1] of pixel x of a row, one function per format family so that the row loop below is
 * compiled once per format with the conversion inlined. */
static inline float hr__l_rgb24(const uint8_t *row, int x) {
  const uint8_t *p = row + 3 * x;
  return (float)(77 * p[0] + 150 * p[1] + 29 * p[2]) * (1.0f / (256.0f * 255.0f));
}
static inline float hr__l_bgra(const uint8_t *row, int x) {
  const uint8_t *p = row + 4 * x;
  return (float)(77 * p[2] + 150 * p[1] + 29 * p[0]) * (1.0f / (256.0f * 255.0f));
}
static inline float hr__l_y8(const uint8_t *row, int x) { return (float)row[x] * (1.0f / 255.0f); }
static inline float hr__l_yvideo(const uint8_t *row, int x) {
  const float v = ((float)row[x] - 16.0f) * (1.0f / 219.0f);
  return v < 0.0f ? 0.0f : v > 1.0f ? 1.0f : v;
}
static inline float hr__l_rgbf32(const uint8_t *row, int x) {
  const float *p = (const float *)(const void *)row + 3 * x;
  const float v = 0.299f * p[0] + 0.587f * p[1] + 0.114f * p[2];
  if (!(v >= 0.0f)) return 0.0f;   /* also NaN */
  return v > 1.0f ? 1.0f : v;
}

/* Accumulate one grid row: acc[cell] += luma of its points, returns the sum of |right - left|. */
#define HR__ROW_FN(name, LUMA)                                                                     \
  static float name(const uint8_t *row, const int *xs, int gw, int nb, float *acc) {              \
    float hrow = 0.0f;                                                                             \
    for (int i = 0; i < gw; i++) {                                                                 \
      const float a = LUMA(row, xs[i]), b = LUMA(row, xs[i] + nb);                                 \
      acc[i / HR__THUMB_GRID] += a;                                                                \
      hrow += fabsf(b - a);                                                                        \
    }                                                                                              \
    return hrow;                                                                                   \
  }
HR__ROW_FN(hr__row_rgb24, hr__l_rgb24)
HR__ROW_FN(hr__row_bgra, hr__l_bgra)
HR__ROW_FN(hr__row_y8, hr__l_y8)
HR__ROW_FN(hr__row_yvideo, hr__l_yvideo)
HR__ROW_FN(hr__row_rgbf32, hr__l_rgbf32)
#undef HR__ROW_FN

hr_status hr_health_thumb_from_frame(const hr_frame *f, float *luma, int tw, int th, float *hf) {
  if (!f || !luma || tw < 1 || th < 1 || tw > HR__THUMB_MAX || th > HR__THUMB_MAX) return HR_EINVAL;
  if (f->fmt == HR_PIX_DEPTH16_MM || f->fmt == HR_PIX_DEPTH32F_M) return HR_ENOTSUP;
  if (hr_frame_validate(f, NULL, 0) != HR_OK) return HR_EINVAL;
  const int W = f->width, H = f->height;
  const int gw = tw * HR__THUMB_GRID, gh = th * HR__THUMB_GRID;
  int xs[HR__THUMB_MAX * HR__THUMB_GRID];
  /* Point i of the grid sits at the centre of the i-th of gw equal slices of the width; the right
   * neighbour (for hf) must exist, so points stop at W - 2 on frames at least 2 wide. */
  const int xmax = W >= 2 ? W - 2 : 0;
  for (int i = 0; i < gw; i++) {
    int x = (int)(((int64_t)(2 * i + 1) * W) / (2 * (int64_t)gw));
    xs[i] = x > xmax ? xmax : x;
  }
  const int nb = W >= 2 ? 1 : 0;
  const float inv = 1.0f / (HR__THUMB_GRID * HR__THUMB_GRID);
  float (*row_fn)(const uint8_t *, const int *, int, int, float *);
  switch (f->fmt) {
    case HR_PIX_RGB24: row_fn = hr__row_rgb24; break;
    case HR_PIX_BGRA: row_fn = hr__row_bgra; break;
    case HR_PIX_NV12_VIDEO: case HR_PIX_I420_VIDEO: row_fn = hr__row_yvideo; break;
    case HR_PIX_RGBF32: row_fn = hr__row_rgbf32; break;
    default: row_fn = hr__row_y8; break;   /* GRAY8, NV12 / I420 full range: the Y plane as is */
  }
  double hf_sum = 0.0;
  for (int cy = 0; cy < th; cy++) {
    float acc[HR__THUMB_MAX];
    for (int cx = 0; cx < tw; cx++) acc[cx] = 0.0f;
    for (int j = 0; j < HR__THUMB_GRID; j++) {
      const int gy = cy * HR__THUMB_GRID + j;
      const int y = (int)(((int64_t)(2 * gy + 1) * H) / (2 * (int64_t)gh));
      hf_sum += row_fn((const uint8_t *)f->planes[0] + (ptrdiff_t)y * f->strides[0], xs, gw, nb, acc);
    }
    for (int cx = 0; cx < tw; cx++) luma[cy * tw + cx] = acc[cx] * inv;
  }
  if (hf) *hf = nb ? (float)(hf_sum / ((double)gw * gh)) : -1.0f;
  return HR_OK;
}
