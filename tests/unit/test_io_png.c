/* PNG writers (round trip, strides, atomic replace, failures), the 16-bit depth PNG reader, and
 * PNG decoding of odd inputs (gray, 16-bit, corrupt) through the image source. */
#include <errno.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>
#include "hr_test.h"
#include "headroom/io.h"
#include "io/io_internal.h"
#include "io/tum.h"

static char dir[64];

static const char *tmp(const char *name) {
  static char b[4][256];
  static int k;
  k = (k + 1) % 4;
  snprintf(b[k], sizeof b[k], "%s/%s", dir, name);
  return b[k];
}

static int exists(const char *p) {
  struct stat st;
  return stat(p, &st) == 0;
}

/* Decode a PNG file to RGB24 through the public source API (single-image spec). */
static int read_rgb(const char *path, uint8_t *dst, int w, int h) {
  hr_source *s = NULL;
  char err[512];
  if (hr_source_open(path, NULL, &s, err, sizeof err)) { fprintf(stderr, "%s\n", err); return -1; }
  hr_frame f;
  int ok = hr_source_read(s, &f) == HR_OK && f.fmt == HR_PIX_RGB24 && f.width == w && f.height == h;
  if (ok)
    for (int y = 0; y < h; y++) memcpy(dst + (size_t)y * w * 3, (const uint8_t *)f.planes[0] + y * f.strides[0], (size_t)w * 3);
  CHECK_EQ_INT(hr_source_read(s, &f), HR_EEOF);
  hr_source_destroy(s);
  return ok ? 0 : -1;
}

static void test_rgb24(void) {
  enum { W = 37, H = 23, S = W * 3 + 5 };
  static uint8_t img[H * S], back[W * H * 3];
  for (int y = 0; y < H; y++)
    for (int x = 0; x < S; x++) img[y * S + x] = (uint8_t)(x * 7 + y * 13 + (x >= W * 3 ? 99 : 0));
  const char *p = tmp("rgb.png");
  CHECK_EQ_INT(hr_png_write_rgb24(p, W, H, img, S), HR_OK);
  CHECK(!exists(tmp("rgb.png.tmp")));
  CHECK_EQ_INT(read_rgb(p, back, W, H), 0);
  int diff = 0;
  for (int y = 0; y < H; y++) diff += memcmp(back + y * W * 3, img + y * S, W * 3) != 0;
  CHECK_EQ_INT(diff, 0);
  /* Overwrite in place: a second write replaces the file completely. */
  memset(img, 7, sizeof img);
  CHECK_EQ_INT(hr_png_write_rgb24(p, W, H, img, S), HR_OK);
  CHECK_EQ_INT(read_rgb(p, back, W, H), 0);
  CHECK(back[0] == 7 && back[W * H * 3 - 1] == 7);
}

static void test_gray8(void) {
  enum { W = 16, H = 9, S = 20 };
  uint8_t img[H * S], back[W * H * 3];
  for (int i = 0; i < H * S; i++) img[i] = (uint8_t)(i * 3);
  const char *p = tmp("gray.png");
  CHECK_EQ_INT(hr_png_write_gray8(p, W, H, img, S), HR_OK);
  CHECK_EQ_INT(read_rgb(p, back, W, H), 0);   /* gray g -> (g, g, g) */
  int bad = 0;
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++) {
      const uint8_t *q = back + (y * W + x) * 3;
      uint8_t g = img[y * S + x];
      bad += q[0] != g || q[1] != g || q[2] != g;
    }
  CHECK_EQ_INT(bad, 0);
}

static void test_gray16(void) {
  enum { W = 10, H = 6 };
  uint16_t img[H][W + 3];
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W + 3; x++) img[y][x] = (uint16_t)(y * 10000 + x * 257 + 0x00ff);
  img[0][0] = 0;
  img[5][9] = 65535;
  const char *p = tmp("depth.png");
  CHECK_EQ_INT(hr_png_write_gray16(p, W, H, &img[0][0], (W + 3) * 2), HR_OK);
  uint16_t *px = NULL;
  int w = 0, h = 0;
  char err[256];
  CHECK_EQ_INT(hr__depth_png_read(p, 1000.0, &px, &w, &h, err, sizeof err), HR_OK);
  CHECK(w == W && h == H);
  int bad = 0;
  for (int y = 0; px && y < H; y++)
    for (int x = 0; x < W; x++) bad += px[y * W + x] != img[y][x];
  CHECK_EQ_INT(bad, 0);   /* host-endian in, host-endian out: byte order handled */
  free(px);
  CHECK_EQ_INT(hr__depth_png_read(p, 5000.0, &px, &w, &h, err, sizeof err), HR_OK);
  if (px) {
    CHECK_EQ_INT(px[0], 0);
    CHECK_EQ_INT(px[1], (img[0][1] + 2) / 5);
    CHECK_EQ_INT(px[5 * W + 9], 13107);
  }
  free(px);
  /* The same 16-bit PNG as colour: spng keeps the high byte (v >> 8), as documented. */
  uint8_t rgb[W * H * 3];
  CHECK_EQ_INT(read_rgb(p, rgb, W, H), 0);
  CHECK_EQ_INT(rgb[3], img[0][1] >> 8);
  CHECK_EQ_INT(rgb[(5 * W + 9) * 3], 255);
  CHECK_EQ_INT(rgb[(2 * W + 3) * 3 + 1], img[2][3] >> 8);
  /* An 8-bit PNG is not a depth map. */
  CHECK_EQ_INT(hr__depth_png_read(tmp("gray.png"), 1000.0, &px, &w, &h, err, sizeof err), HR_ENOTSUP);
  CHECKF(strstr(err, "gray.png") && strstr(err, "16-bit"), "%s", err);
  CHECK(px == NULL);
  CHECK_EQ_INT(hr__depth_png_read(tmp("nope.png"), 1000.0, &px, &w, &h, err, sizeof err), HR_EIO);
  CHECKF(strstr(err, "nope.png"), "%s", err);
}

static void test_bad_png(void) {
  /* Signature, IHDR, then garbage: opening names the file and says it is a bad PNG. */
  const char *good = tmp("gray.png");
  FILE *f = fopen(good, "rb");
  uint8_t buf[4096];
  size_t n = f ? fread(buf, 1, sizeof buf, f) : 0;
  if (f) fclose(f);
  CHECK(n > 60);
  const char *p = tmp("bad.png");
  CHECK_EQ_INT(hr_file_write_atomic(p, buf, 40), HR_OK);   /* truncated inside the data */
  hr_source *s = NULL;
  char err[512] = "";
  hr_status st = hr_source_open(p, NULL, &s, err, sizeof err);
  if (st == HR_OK) {   /* the header may still parse: then the read must fail */
    hr_frame fr;
    st = hr_source_read(s, &fr);
    snprintf(err, sizeof err, "%s", hr_source_last_error(s));
    hr_source_destroy(s);
  }
  CHECK_EQ_INT(st, HR_ECORRUPT);
  CHECKF(strstr(err, "bad.png") && strstr(err, "PNG"), "%s", err);
  memcpy(buf + 16, "\xff\xff\xff\xff", 4);   /* IHDR width 4294967295 */
  CHECK_EQ_INT(hr_file_write_atomic(p, buf, n), HR_OK);
  s = NULL;
  CHECK_EQ_INT(hr_source_open(p, NULL, &s, err, sizeof err), HR_ECORRUPT);
  CHECK(s == NULL);
  CHECKF(strstr(err, "bad.png"), "%s", err);
}

static void test_write_failures(void) {
  uint8_t px[12] = {0};
  errno = 0;
  CHECK_EQ_INT(hr_png_write_gray8(tmp("no/such/dir/x.png"), 2, 2, px, 2), HR_EIO);
  CHECK(errno == ENOENT);
  CHECK_EQ_INT(hr_png_write_gray8(NULL, 2, 2, px, 2), HR_EINVAL);
  CHECK_EQ_INT(hr_png_write_gray8(tmp("x.png"), 0, 2, px, 2), HR_EINVAL);
  CHECK_EQ_INT(hr_png_write_rgb24(tmp("x.png"), 2, 2, px, 5), HR_EINVAL);   /* stride < row */
  CHECK_EQ_INT(hr_png_write_gray16(tmp("x.png"), 2, 2, NULL, 4), HR_EINVAL);
  CHECK(!exists(tmp("x.png")) && !exists(tmp("x.png.tmp")));
  CHECK_EQ_INT(hr_file_write_atomic(NULL, px, 1), HR_EINVAL);
  CHECK_EQ_INT(hr_file_write_atomic(tmp("empty.bin"), NULL, 0), HR_OK);
  CHECK(exists(tmp("empty.bin")));
  /* A folder in the way of the rename: fails, the temporary file is removed. */
  mkdir(tmp("adir"), 0700);
  CHECK_EQ_INT(hr_file_write_atomic(tmp("adir"), "abc", 3), HR_EIO);
  CHECK(!exists(tmp("adir.tmp")));
}

int main(void) {
  snprintf(dir, sizeof dir, "/tmp/hr_io_png_XXXXXX");
  if (!mkdtemp(dir)) SKIP("cannot make a temporary folder");
  test_rgb24();
  test_gray8();
  test_gray16();
  test_bad_png();
  test_write_failures();
  const char *names[] = {"rgb.png", "gray.png", "depth.png", "bad.png", "empty.bin"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) unlink(tmp(names[i]));
  rmdir(tmp("adir"));
  rmdir(dir);
  return hr_test_finish("test_io_png");
}
