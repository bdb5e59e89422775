/* Frame descriptor helpers: pixel-format facts and validation of caller-supplied planes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "headroom.h"
#include "ingest/ingest.h"

int hr_pixfmt_bpp(hr_pixfmt fmt) {
  switch (fmt) {
    case HR_PIX_NV12_FULL: case HR_PIX_NV12_VIDEO: case HR_PIX_I420_FULL: case HR_PIX_I420_VIDEO:
    case HR_PIX_GRAY8: return 1;
    case HR_PIX_BGRA: return 4;
    case HR_PIX_RGB24: return 3;
    case HR_PIX_RGBF32: return 12;
    case HR_PIX_DEPTH16_MM: return 2;
    case HR_PIX_DEPTH32F_M: return 4;
    default: return 0;
  }
}

const char *hr_pixfmt_name(hr_pixfmt fmt) {
  switch (fmt) {
    case HR_PIX_NV12_FULL: return "nv12";
    case HR_PIX_NV12_VIDEO: return "nv12v";
    case HR_PIX_I420_FULL: return "i420";
    case HR_PIX_I420_VIDEO: return "i420v";
    case HR_PIX_BGRA: return "bgra";
    case HR_PIX_RGB24: return "rgb24";
    case HR_PIX_GRAY8: return "gray8";
    case HR_PIX_RGBF32: return "rgbf32";
    case HR_PIX_DEPTH16_MM: return "depth16";
    case HR_PIX_DEPTH32F_M: return "depth32f";
    default: return "none";
  }
}

hr_status hr_frame_validate(const hr_frame *f, char *why, size_t why_len) {
#define FAIL(...) do { if (why && why_len) snprintf(why, why_len, __VA_ARGS__); return HR_EINVAL; } while (0)
  if (!f) FAIL("frame is NULL");
  int bpp = hr_pixfmt_bpp(f->fmt);
  if (!bpp) FAIL("unknown pixel format %d", (int)f->fmt);
  if (f->width <= 0 || f->height <= 0 || f->width > 16384 || f->height > 16384)
    FAIL("frame size %dx%d out of range (1..16384)", f->width, f->height);
  if (!f->planes[0]) FAIL("%s frame: plane 0 is NULL", hr_pixfmt_name(f->fmt));
  if (f->strides[0] < (ptrdiff_t)f->width * bpp)
    FAIL("%s frame: stride %td smaller than a row (%d bytes)", hr_pixfmt_name(f->fmt), f->strides[0],
         f->width * bpp);
  if (f->fmt == HR_PIX_NV12_FULL || f->fmt == HR_PIX_NV12_VIDEO) {
    if ((f->width & 1) || (f->height & 1)) FAIL("NV12 frame %dx%d: width and height must be even", f->width, f->height);
    if (!f->planes[1]) FAIL("NV12 frame: CbCr plane is NULL");
    if (f->strides[1] < (ptrdiff_t)f->width) FAIL("NV12 frame: CbCr stride %td smaller than width %d", f->strides[1], f->width);
  }
  if (f->fmt == HR_PIX_I420_FULL || f->fmt == HR_PIX_I420_VIDEO) {
    if ((f->width & 1) || (f->height & 1)) FAIL("I420 frame %dx%d: width and height must be even", f->width, f->height);
    if (!f->planes[1] || !f->planes[2]) FAIL("I420 frame: U or V plane is NULL");
    if (f->strides[1] < (ptrdiff_t)f->width / 2 || f->strides[2] < (ptrdiff_t)f->width / 2)
      FAIL("I420 frame: chroma stride smaller than width/2 (%d)", f->width / 2);
  }
  return HR_OK;
#undef FAIL
}

hr_status hr_frame_copy(const hr_frame *in, void **buf, size_t *cap, hr_frame *out) {
  if (!in || !buf || !cap || !out || hr_frame_validate(in, NULL, 0)) return HR_EINVAL;
  size_t rows[3] = {(size_t)in->height, (size_t)(in->height + 1) / 2, (size_t)(in->height + 1) / 2};
  size_t row_bytes[3] = {(size_t)in->width * (size_t)hr_pixfmt_bpp(in->fmt), 0, 0};
  int planes = 1;
  if (in->fmt == HR_PIX_NV12_FULL || in->fmt == HR_PIX_NV12_VIDEO) { planes = 2; row_bytes[1] = (size_t)(in->width + 1) / 2 * 2; }
  if (in->fmt == HR_PIX_I420_FULL || in->fmt == HR_PIX_I420_VIDEO) { planes = 3; row_bytes[1] = row_bytes[2] = (size_t)(in->width + 1) / 2; }
  size_t need = 0;
  for (int p = 0; p < planes; p++) need += rows[p] * row_bytes[p];
  if (need > *cap) {
    free(*buf);
    *buf = malloc(need);
    *cap = *buf ? need : 0;
    if (!*buf) return HR_ENOMEM;
  }
  uint8_t *dst = *buf;
  *out = *in;
  size_t off = 0;
  for (int p = 0; p < planes; p++) {
    for (size_t y = 0; y < rows[p]; y++)
      memcpy(dst + off + y * row_bytes[p], (const uint8_t *)in->planes[p] + (ptrdiff_t)y * in->strides[p], row_bytes[p]);
    out->planes[p] = dst + off;
    out->strides[p] = (ptrdiff_t)row_bytes[p];
    off += rows[p] * row_bytes[p];
  }
  return HR_OK;
}

void hr_frame_row_rgbf(const hr_frame *f, int y, float *dst) { hr__ingest_row_rgbf(f, y, dst); }
