/* The source resize in row ranges (hr__ingest_resample_part, run over the session's pool by
 * exec.c) writes exactly what the whole call writes, for any split, every format the camera
 * path uses, downscaling and upscaling; and the AVX-512 NV12 planar row (where the CPU has it)
 * equals the scalar definition bit for bit at widths around its 16-pixel step. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "hr_test.h"
#include "headroom.h"
#include "ingest/ingest.h"
#include "ingest/ingest_kernels.h"

static uint32_t rng = 2718u;
static uint32_t rnd(void) {
  rng ^= rng << 13; rng ^= rng >> 17; rng ^= rng << 5;
  return rng;
}

/* A frame of random bytes: NV12 (two planes), I420 (three) or BGRA (one), dense rows. */
static unsigned char *make_frame(hr_frame *f, hr_pixfmt fmt, int w, int h) {
  memset(f, 0, sizeof *f);
  f->fmt = fmt; f->width = w; f->height = h;
  size_t ybytes = (size_t)w * h * (fmt == HR_PIX_BGRA ? 4 : 1), cbytes = fmt == HR_PIX_BGRA ? 0 : (size_t)w * h / 2;
  unsigned char *buf = malloc(ybytes + cbytes);
  for (size_t i = 0; i < ybytes + cbytes; i++) buf[i] = (unsigned char)rnd();
  f->planes[0] = buf;
  f->strides[0] = (ptrdiff_t)w * (fmt == HR_PIX_BGRA ? 4 : 1);
  if (fmt == HR_PIX_NV12_FULL || fmt == HR_PIX_NV12_VIDEO) { f->planes[1] = buf + ybytes; f->strides[1] = w; }
  if (fmt == HR_PIX_I420_FULL) {
    f->planes[1] = buf + ybytes; f->strides[1] = w / 2;
    f->planes[2] = buf + ybytes + (size_t)w * h / 4; f->strides[2] = w / 2;
  }
  return buf;
}

static void check_parts(hr_pixfmt fmt, int w, int h, int ow, int oh) {
  hr_frame f;
  unsigned char *buf = make_frame(&f, fmt, w, h);
  hr__ingest_plan p;
  CHECK_EQ_INT(hr__ingest_plan_init(&p, w, h, ow, oh), HR_OK);
  size_t n = (size_t)ow * oh * 3;
  float *whole = malloc(n * sizeof(float)), *part = malloc(n * sizeof(float));
  float *rows = aligned_alloc(64, ((size_t)p.out_w_pad * 6 * sizeof(float) + 63) / 64 * 64);
  CHECK_EQ_INT(hr__ingest_resample_rgbf(&p, &f, whole, (ptrdiff_t)ow * 3), HR_OK);
  static const int splits[] = {1, 2, 3, 7, 16};
  for (size_t s = 0; s < sizeof splits / sizeof splits[0]; s++) {
    int parts = splits[s] > oh ? oh : splits[s];
    memset(part, 0xff, n * sizeof(float)); /* NaN: a row no part writes shows */
    for (int k = parts - 1; k >= 0; k--) /* in reverse: no part may depend on another's scratch */
      CHECK_EQ_INT(hr__ingest_resample_part(&p, &f, part, (ptrdiff_t)ow * 3, k, parts, rows), HR_OK);
    CHECKF(!memcmp(whole, part, n * sizeof(float)), "%s %dx%d -> %dx%d in %d parts differs from the whole", hr_pixfmt_name(fmt), w, h,
           ow, oh, parts);
  }
  CHECK_EQ_INT(hr__ingest_resample_part(&p, &f, part, (ptrdiff_t)ow * 3, 2, 2, rows), HR_EINVAL);
  CHECK_EQ_INT(hr__ingest_resample_part(&p, &f, part, (ptrdiff_t)ow * 3, 0, 2, rows + 1), HR_EINVAL);
  free(rows); free(whole); free(part); free(buf);
  hr__ingest_plan_free(&p);
}

static void check_planar_rows(void) {
  static const int widths[] = {16, 18, 30, 32, 46, 1920};
  for (size_t wi = 0; wi < sizeof widths / sizeof widths[0]; wi++)
    for (int v = 0; v < 2; v++) {
      int w = widths[wi], h = 4;
      hr_frame f;
      unsigned char *buf = make_frame(&f, v ? HR_PIX_NV12_VIDEO : HR_PIX_NV12_FULL, w, h);
      /* every byte value in the luma and chroma of the first row */
      for (int x = 0; x < w; x++) ((unsigned char *)f.planes[0])[x] = (unsigned char)(x * 37);
      for (int x = 0; x < w; x++) ((unsigned char *)f.planes[1])[x] = (unsigned char)(x * 101 + 3);
      float *a = malloc(sizeof(float) * 3 * (size_t)w), *b = malloc(sizeof(float) * 3 * (size_t)w);
      for (int y = 0; y < h; y++) {
        hr__ingest_row_planar(&f, y, a, a + w, a + 2 * w);
        hr__ingest_row_planar_scalar(&f, y, 0, b, b + w, b + 2 * w);
        CHECKF(!memcmp(a, b, sizeof(float) * 3 * (size_t)w), "NV12 %s w=%d row %d: planar row differs from the scalar definition",
               v ? "video" : "full", w, y);
      }
      free(a); free(b); free(buf);
    }
}

int main(void) {
  check_parts(HR_PIX_NV12_FULL, 1920, 1440, 480, 360);
  check_parts(HR_PIX_NV12_VIDEO, 640, 480, 123, 92);
  check_parts(HR_PIX_I420_FULL, 320, 240, 640, 480);
  check_parts(HR_PIX_BGRA, 96, 64, 96, 64); /* same size: the plain conversion */
  check_planar_rows();
  return hr_test_finish("test_ingest_parts");
}
