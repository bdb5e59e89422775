/* Synthetic camera frames for the benches: an RGB24 picture resampled and converted into a camera
 * format (see testframe.h). Shared by `headroom bench --format` and bench/ingest_bench. */
#include <stdlib.h>
#include <string.h>
#include "testframe.h"

unsigned char hr_cli_clamp_u8(float v) { return v <= 0.f ? 0 : v >= 255.f ? 255 : (unsigned char)(v + 0.5f); }

/* Half-pixel bilinear resample of an RGB24 image (any size to any size), into a dense buffer. */
void hr_cli_upscale_rgb24(const unsigned char *src, int sw, int sh, ptrdiff_t sstride, unsigned char *dst, int dw, int dh) {
  for (int y = 0; y < dh; y++) {
    float fy = ((float)y + 0.5f) * (float)sh / (float)dh - 0.5f;
    if (fy < 0) fy = 0;
    int y0 = (int)fy, y1 = y0 + 1 < sh ? y0 + 1 : sh - 1;
    float wy = fy - (float)y0;
    const unsigned char *r0 = src + (ptrdiff_t)y0 * sstride, *r1 = src + (ptrdiff_t)y1 * sstride;
    unsigned char *o = dst + (size_t)y * dw * 3;
    for (int x = 0; x < dw; x++) {
      float fx = ((float)x + 0.5f) * (float)sw / (float)dw - 0.5f;
      if (fx < 0) fx = 0;
      int x0 = (int)fx, x1 = x0 + 1 < sw ? x0 + 1 : sw - 1;
      float wx = fx - (float)x0;
      for (int c = 0; c < 3; c++) {
        float t = r0[x0 * 3 + c] + (r0[x1 * 3 + c] - r0[x0 * 3 + c]) * wx;
        float b = r1[x0 * 3 + c] + (r1[x1 * 3 + c] - r1[x0 * 3 + c]) * wx;
        o[x * 3 + c] = hr_cli_clamp_u8(t + (b - t) * wy);
      }
    }
  }
}

/* Fill frame f (format already set, size w x h) from a dense RGB24 image; returns the buffer. */
unsigned char *hr_cli_make_frame(const unsigned char *rgb, int w, int h, hr_frame *f) {
  size_t n = (size_t)w * h;
  unsigned char *buf = NULL;
  f->width = w; f->height = h;
  if (f->fmt == HR_PIX_BGRA) {
    if (!(buf = malloc(n * 4))) return NULL;
    for (size_t i = 0; i < n; i++) { buf[4 * i] = rgb[3 * i + 2]; buf[4 * i + 1] = rgb[3 * i + 1]; buf[4 * i + 2] = rgb[3 * i]; buf[4 * i + 3] = 255; }
    f->planes[0] = buf; f->strides[0] = (ptrdiff_t)w * 4;
  } else if (f->fmt == HR_PIX_RGB24) {
    if (!(buf = malloc(n * 3))) return NULL;
    memcpy(buf, rgb, n * 3);
    f->planes[0] = buf; f->strides[0] = (ptrdiff_t)w * 3;
  } else { /* NV12 / I420, full range BT.601 */
    if (!(buf = malloc(n + n / 2))) return NULL;
    unsigned char *Y = buf, *C = buf + n;
    for (size_t i = 0; i < n; i++) Y[i] = hr_cli_clamp_u8(0.299f * rgb[3 * i] + 0.587f * rgb[3 * i + 1] + 0.114f * rgb[3 * i + 2]);
    int cw = w / 2, ch = h / 2;
    for (int y = 0; y < ch; y++)
      for (int x = 0; x < cw; x++) {
        float r = 0, g = 0, b = 0;
        for (int k = 0; k < 4; k++) {
          const unsigned char *p = rgb + ((size_t)(2 * y + k / 2) * w + 2 * x + k % 2) * 3;
          r += p[0]; g += p[1]; b += p[2];
        }
        r *= 0.25f; g *= 0.25f; b *= 0.25f;
        unsigned char cb = hr_cli_clamp_u8(128.f - 0.168736f * r - 0.331264f * g + 0.5f * b);
        unsigned char cr = hr_cli_clamp_u8(128.f + 0.5f * r - 0.418688f * g - 0.081312f * b);
        if (f->fmt == HR_PIX_NV12_FULL) { C[(size_t)y * w + 2 * x] = cb; C[(size_t)y * w + 2 * x + 1] = cr; }
        else { C[(size_t)y * cw + x] = cb; C[n / 4 + (size_t)y * cw + x] = cr; }
      }
    f->planes[0] = Y; f->strides[0] = w;
    if (f->fmt == HR_PIX_NV12_FULL) { f->planes[1] = C; f->strides[1] = w; }
    else { f->planes[1] = C; f->planes[2] = C + n / 4; f->strides[1] = f->strides[2] = cw; }
  }
  return buf;
}

