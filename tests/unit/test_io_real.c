/* Frame sources on the real recordings in HR_DATA_DIR: the sam2 JPEG folder and its H.264 video,
 * OpenCV's vtest.avi, and the RealSense TUM folder (color + depth). Checks counts, sizes,
 * timestamps, in-place delivery of decoded video, the frame lifetime rule, and prints decode speed. */
#include <stdint.h>
#include <sys/stat.h>
#include <time.h>
#include "hr_test.h"
#include "headroom/io.h"
#include "io/io_internal.h"
#include "io/tum.h"

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int have(const char *p) {
  struct stat st;
  return p && stat(p, &st) == 0;
}

static uint64_t hash_plane(const uint8_t *p, ptrdiff_t stride, int row_bytes, int rows) {
  uint64_t h = 1469598103934665603ull;
  for (int y = 0; y < rows; y++)
    for (int x = 0; x < row_bytes; x += 7) h = (h ^ p[y * stride + x]) * 1099511628211ull;
  return h;
}

static double mean_y(const hr_frame *f) {
  double s = 0;
  for (int y = 0; y < f->height; y++)
    for (int x = 0; x < f->width; x++) s += ((const uint8_t *)f->planes[0])[y * f->strides[0] + x];
  return s / ((double)f->width * f->height);
}

/* BT.601 video-range luma of an RGB24 frame, to compare with the video's Y plane. */
static double mean_y_of_rgb(const hr_frame *f) {
  double s = 0;
  for (int y = 0; y < f->height; y++) {
    const uint8_t *r = (const uint8_t *)f->planes[0] + y * f->strides[0];
    for (int x = 0; x < f->width; x++, r += 3) s += 16 + 219.0 / 255 * (0.299 * r[0] + 0.587 * r[1] + 0.114 * r[2]);
  }
  return s / ((double)f->width * f->height);
}

static double jpeg0_luma = -1;

static void test_jpeg_folder(const char *dir) {
  hr_source *s = NULL;
  char err[512];
  CHECK_EQ_INT(hr_source_open(dir, NULL, &s, err, sizeof err), HR_OK);
  if (!s) { fprintf(stderr, "%s\n", err); return; }
  printf("  %s\n", hr_source_describe(s));
  CHECK_EQ_INT(hr_source_frame_count(s), 200);
  hr_frame f;
  int n = 0, bad = 0;
  hr_status st;
  double t0 = now_ms();
  while ((st = hr_source_read(s, &f)) == HR_OK) {
    bad += f.fmt != HR_PIX_RGB24 || f.width != 960 || f.height != 540 || f.strides[0] != 960 * 3;
    bad += f.ts_ns != (int64_t)llround(n * 1e9 / 30);
    if (n == 0) jpeg0_luma = mean_y_of_rgb(&f);
    n++;
  }
  double ms = now_ms() - t0;
  CHECK_EQ_INT(st, HR_EEOF);
  CHECK_EQ_INT(n, 200);
  CHECK_EQ_INT(bad, 0);
  CHECK(jpeg0_luma > 30 && jpeg0_luma < 220);
  hr_source_stats ss;
  hr_source_get_stats(s, &ss);
  CHECK(ss.frames == 200 && ss.pooled == 200 && ss.in_place == 0 && ss.warnings == 0);
  printf("  SPEED sam2 JPEG 960x540 -> rgb24: %.2f ms/frame (%d frames, read + decode)\n", ms / n, n);
  hr_source_destroy(s);
}

static void test_video(const char *path, const char *name, int w, int h, int64_t count,
                       double fps, int limit, double ref_luma) {
  hr_source *s = NULL;
  char err[512];
  CHECK_EQ_INT(hr_source_open(path, NULL, &s, err, sizeof err), HR_OK);
  if (!s) { fprintf(stderr, "%s\n", err); return; }
  printf("  %s\n", hr_source_describe(s));
  CHECK_EQ_INT(hr_source_frame_count(s), count);
  hr_pixfmt pf;
  int sw, sh;
  hr_source_get_format(s, &pf, &sw, &sh);
  CHECK(pf == HR_PIX_I420_VIDEO && sw == w && sh == h);
  /* Frame lifetime: with pool_size 3 a frame is intact until the 3rd read after it. */
  uint64_t hist_hash[3] = {0};
  hr_frame hist[3];
  int n = 0, bad = 0, not_native = 0, lifetime_bad = 0;
  hr_frame f;
  hr_status st = HR_OK;
  double t0 = now_ms();
  while (n < limit && (st = hr_source_read(s, &f)) == HR_OK) {
    bad += f.fmt != HR_PIX_I420_VIDEO || f.width != w || f.height != h;
    bad += llabs(f.ts_ns - (int64_t)llround(n * 1e9 / fps)) > 1000;
    const void *np[3];
    if (!hr__source_native_planes(s, np) || np[0] != f.planes[0] || np[1] != f.planes[1] || np[2] != f.planes[2])
      not_native++;
    if (n == 0 && ref_luma >= 0) CHECK_NEAR(mean_y(&f), ref_luma, 4.0);
    if (n == 0) CHECK_EQ_INT(hr_frame_validate(&f, NULL, 0), HR_OK);
    /* Frames n-1 and n-2 must still read as they did. */
    for (int k = 1; k <= 2 && k <= n; k++) {
      const hr_frame *o = &hist[(n - k) % 3];
      lifetime_bad += hash_plane(o->planes[0], o->strides[0], o->width, o->height) != hist_hash[(n - k) % 3];
      lifetime_bad += hash_plane(o->planes[2], o->strides[2], o->width / 2, o->height / 2) == 0;
    }
    hist[n % 3] = f;
    hist_hash[n % 3] = hash_plane(f.planes[0], f.strides[0], f.width, f.height);
    n++;
  }
  double ms = now_ms() - t0;
  CHECK_EQ_INT(st, HR_OK);
  CHECK_EQ_INT(n, limit);
  CHECK_EQ_INT(bad, 0);
  CHECK_EQ_INT(not_native, 0);
  CHECK_EQ_INT(lifetime_bad, 0);
  hr_source_stats ss;
  hr_source_get_stats(s, &ss);
  CHECK_EQ_INT(ss.in_place, n);   /* no copy: every frame points into the decoder's AVFrame */
  CHECK_EQ_INT(ss.pooled, 0);
  CHECK_EQ_INT(ss.converted, 0);
  CHECK_EQ_INT(ss.bytes_pooled, 0);
  CHECK_EQ_INT(ss.ts_fixups, 0);
  printf("  SPEED %s %dx%d: %.2f ms/frame (%d frames, demux + decode, in place)\n", name, w, h, ms / n, n);
  if (limit >= count) CHECK_EQ_INT(hr_source_read(s, &f), HR_EEOF);
  hr_source_destroy(s);
}

static int cmp_u16(const void *a, const void *b) {
  return (int)*(const uint16_t *)a - (int)*(const uint16_t *)b;
}

static void test_tum(const char *dir) {
  hr_source_params p;
  hr_source_params_default(&p);
  hr_source *c = NULL, *d = NULL, *d5 = NULL;
  char err[512];
  CHECK_EQ_INT(hr_source_open(dir, &p, &c, err, sizeof err), HR_OK);
  if (!c) { fprintf(stderr, "%s\n", err); return; }
  p.stream = HR_SOURCE_STREAM_DEPTH;
  char spec[512];
  snprintf(spec, sizeof spec, "tum:%s", dir);
  CHECK_EQ_INT(hr_source_open(spec, &p, &d, err, sizeof err), HR_OK);
  p.depth_scale = 5000;   /* as if it were a TUM recording: values / 5 */
  CHECK_EQ_INT(hr_source_open(spec, &p, &d5, err, sizeof err), HR_OK);
  if (!d || !d5) { fprintf(stderr, "%s\n", err); hr_source_destroy(c); hr_source_destroy(d); return; }
  printf("  %s\n  %s\n  %s\n", hr_source_describe(c), hr_source_describe(d), hr_source_describe(d5));
  CHECK_EQ_INT(hr_source_frame_count(c), 100);
  CHECK_EQ_INT(hr_source_frame_count(d), 100);
  static uint16_t vals[640 * 480];
  int n = 0, bad = 0, med_bad = 0, scale_bad = 0;
  double tc = 0, td = 0;
  int64_t prev = INT64_MIN;
  for (;;) {
    hr_frame fc, fd, f5;
    double t0 = now_ms();
    hr_status sc = hr_source_read(c, &fc);
    double t1 = now_ms();
    hr_status sd = hr_source_read(d, &fd);
    tc += t1 - t0;
    td += now_ms() - t1;
    hr_status s5 = hr_source_read(d5, &f5);
    if (sc || sd || s5) {
      CHECK_EQ_INT(sc, HR_EEOF);
      CHECK_EQ_INT(sd, HR_EEOF);
      CHECK_EQ_INT(s5, HR_EEOF);
      break;
    }
    bad += fc.fmt != HR_PIX_RGB24 || fc.width != 640 || fc.height != 480;
    bad += fd.fmt != HR_PIX_DEPTH16_MM || fd.width != 640 || fd.height != 480 || fd.strides[0] != 1280;
    bad += fc.ts_ns != fd.ts_ns || fc.ts_ns <= prev;   /* the lists pair up exactly */
    if (n == 0) CHECK_EQ_INT(fc.ts_ns, 1700000000005854000LL);
    prev = fc.ts_ns;
    const uint16_t *dp = fd.planes[0], *dp5 = f5.planes[0];
    int nv = 0;
    for (int i = 0; i < 640 * 480; i++) {
      if (dp[i] != 0 && dp[i] != 65535) vals[nv++] = dp[i];
      scale_bad += dp5[i] != (uint16_t)((dp[i] + 2) / 5);
    }
    qsort(vals, (size_t)nv, sizeof vals[0], cmp_u16);
    int med = nv ? vals[nv / 2] : 0;
    if (n % 25 == 0) printf("  depth frame %d: %d valid pixels, median %d mm\n", n, nv, med);
    med_bad += nv < 640 * 480 / 4 || med < 300 || med > 3000;
    if (n == 0) {
      /* The single-file reader gives the same values. */
      uint16_t *px = NULL;
      int w, h;
      char e[256];
      char path[600];
      snprintf(path, sizeof path, "%s/depths/depth00002.png", dir);
      CHECK_EQ_INT(hr__depth_png_read(path, 1000, &px, &w, &h, e, sizeof e), HR_OK);
      CHECK(px && w == 640 && h == 480 && memcmp(px, dp, 640 * 480 * 2) == 0);
      free(px);
    }
    n++;
  }
  CHECK_EQ_INT(n, 100);
  CHECK_EQ_INT(bad, 0);
  CHECK_EQ_INT(med_bad, 0);
  CHECK_EQ_INT(scale_bad, 0);
  hr_source_stats ss;
  hr_source_get_stats(d, &ss);
  CHECK(ss.converted == 0 && ss.pooled == 100);
  hr_source_get_stats(d5, &ss);
  CHECK_EQ_INT(ss.converted, 100);
  printf("  SPEED TUM 640x480 color PNG: %.2f ms/frame, depth 16-bit PNG: %.2f ms/frame\n", tc / n, td / n);
  hr_source_destroy(c);
  hr_source_destroy(d);
  hr_source_destroy(d5);
}

static void test_single_image(const char *path) {
  hr_source *s = NULL;
  char err[512];
  CHECK_EQ_INT(hr_source_open(path, NULL, &s, err, sizeof err), HR_OK);
  if (!s) return;
  printf("  %s\n", hr_source_describe(s));
  CHECK_EQ_INT(hr_source_frame_count(s), 1);
  hr_frame f;
  CHECK_EQ_INT(hr_source_read(s, &f), HR_OK);
  CHECK(f.fmt == HR_PIX_RGB24 && f.width == 960 && f.ts_ns == 0);
  CHECK_EQ_INT(hr_source_read(s, &f), HR_EEOF);
  hr_source_destroy(s);
}

int main(void) {
  char b1[512], b2[512], b3[512], b4[512];
  const char *frames = hr_test_path("HR_DATA_DIR", "sam2-bedroom/frames", b1, sizeof b1);
  const char *mp4 = hr_test_path("HR_DATA_DIR", "sam2-bedroom/bedroom.mp4", b2, sizeof b2);
  const char *tum = hr_test_path("HR_DATA_DIR", "realsense-d435-desk", b3, sizeof b3);
  const char *img0 = hr_test_path("HR_DATA_DIR", "sam2-bedroom/frames/00000.jpg", b4, sizeof b4);
  const char *vtest = "/usr/share/doc/opencv-doc/examples/data/vtest.avi";
  int ran = 0;
  if (have(frames)) { test_jpeg_folder(frames); ran++; } else printf("  (no sam2-bedroom/frames)\n");
  if (have(img0)) test_single_image(img0);
  if (have(mp4)) { test_video(mp4, "bedroom.mp4 h264", 960, 540, 200, 30, 200, jpeg0_luma); ran++; }
  else printf("  (no bedroom.mp4)\n");
  if (have(vtest)) { test_video(vtest, "vtest.avi msmpeg4v3", 768, 576, 795, 10, 50, -1); ran++; }
  else printf("  (no %s: apt-get install opencv-doc)\n", vtest);
  if (have(tum)) { test_tum(tum); ran++; } else printf("  (no realsense-d435-desk)\n");
  if (!ran) SKIP("HR_DATA_DIR unset or without the recordings");
  return hr_test_finish("test_io_real");
}
