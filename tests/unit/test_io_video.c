/* Video source on tiny committed clips (tests/data/io, a solid 0xC04020 colour): which decoder
 * formats go out in place (yuvj420p, nv12, rgb24) and which are converted with swscale (yuvj422p,
 * odd-sized yuv420p), with the colours checked after conversion. */
#include <stdint.h>
#include <sys/stat.h>
#include "hr_test.h"
#include "headroom/io.h"
#include "io/io_internal.h"

static char base[512];

typedef struct expect {
  const char *file;
  hr_pixfmt fmt;
  int w, h, frames;
  int in_place;
  const char *describe_has;
} expect;

static void px_rgb(const hr_frame *f, int x, int y, int rgb[3]) {
  const uint8_t *p = (const uint8_t *)f->planes[0] + y * f->strides[0] + x * (f->fmt == HR_PIX_BGRA ? 4 : 3);
  if (f->fmt == HR_PIX_BGRA) { rgb[0] = p[2]; rgb[1] = p[1]; rgb[2] = p[0]; }
  else { rgb[0] = p[0]; rgb[1] = p[1]; rgb[2] = p[2]; }
}

static void run(const expect *e) {
  char path[700];
  snprintf(path, sizeof path, "%s/%s", base, e->file);
  hr_source_params p;
  hr_source_params_default(&p);
  p.pool_size = 2;
  hr_source *s = NULL;
  char err[512];
  CHECKF(hr_source_open(path, &p, &s, err, sizeof err) == HR_OK, "%s: %s", e->file, err);
  if (!s) return;
  printf("  %s\n", hr_source_describe(s));
  CHECKF(strstr(hr_source_describe(s), e->describe_has), "%s", hr_source_describe(s));
  hr_frame f, first;
  int n = 0, bad = 0, colour_bad = 0;
  hr_status st;
  while ((st = hr_source_read(s, &f)) == HR_OK) {
    if (n == 0) first = f;
    bad += f.fmt != e->fmt || f.width != e->w || f.height != e->h;
    bad += f.ts_ns != n * 100000000LL;
    bad += hr_frame_validate(&f, NULL, 0) != HR_OK;
    const void *np[3];
    int native = hr__source_native_planes(s, np);
    bad += native != e->in_place || (native && np[0] != f.planes[0]);
    /* Colour 0xC04020: Y = 98.6 full range, 100.7 video range. */
    if (f.fmt == HR_PIX_RGB24 || f.fmt == HR_PIX_BGRA) {
      int c[3];
      for (int k = 0; k < 3; k++) {
        px_rgb(&f, (e->w - 1) * k / 2, (e->h - 1) * k / 2, c);
        colour_bad += abs(c[0] - 0xc0) > 6 || abs(c[1] - 0x40) > 6 || abs(c[2] - 0x20) > 6;
      }
    } else {
      int y = ((const uint8_t *)f.planes[0])[f.strides[0] * (e->h / 2) + e->w / 2];
      int full = f.fmt == HR_PIX_I420_FULL || f.fmt == HR_PIX_NV12_FULL;
      colour_bad += abs(y - (full ? 99 : 101)) > 3;
    }
    n++;
  }
  CHECK_EQ_INT(st, HR_EEOF);
  CHECKF(n == e->frames, "%s: %d frames", e->file, n);
  CHECKF(bad == 0, "%s: %d bad frames", e->file, bad);
  CHECKF(colour_bad == 0, "%s: %d bad colours", e->file, colour_bad);
  (void)first;
  hr_source_stats ss;
  hr_source_get_stats(s, &ss);
  CHECK_EQ_INT(ss.frames, e->frames);
  CHECK_EQ_INT(ss.in_place, e->in_place ? e->frames : 0);
  CHECK_EQ_INT(ss.converted, e->in_place ? 0 : e->frames);
  hr_source_destroy(s);
}

int main(void) {
  const char *src = getenv("HR_SRC_DIR");
  snprintf(base, sizeof base, "%s/tests/data/io", src && *src ? src : ".");
  struct stat sb;
  if (stat(base, &sb) != 0) SKIP("no %s (set HR_SRC_DIR to the source tree)", base);
  const expect cases[] = {
      {"mjpeg420_64x48.avi", HR_PIX_I420_FULL, 64, 48, 5, 1, "i420 "},
      {"nv12_32x24.nut", HR_PIX_NV12_VIDEO, 32, 24, 3, 1, "in place"},
      {"rgb24_64x48.mkv", HR_PIX_RGB24, 64, 48, 5, 1, "in place"},
      {"mjpeg422_64x48.avi", HR_PIX_RGB24, 64, 48, 5, 0, "yuvj422p converted to rgb24 by swscale"},
      {"odd_63x47.mkv", HR_PIX_RGB24, 63, 47, 5, 0, "yuv420p converted to rgb24"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) run(&cases[i]);
  return hr_test_finish("test_io_video");
}
