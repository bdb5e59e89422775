/* Frame descriptor helpers: pixel-format facts and validation of caller-supplied planes. */
#include <stdio.h>
#include "headroom.h"

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
