/* Unit tests of libheadroom_io's pure parts: TUM timestamps and lists, raw input formats, depth
 * scaling, YUYV -> NV12 and the V4L2 format choice (no camera needed). */
#include <stdint.h>
#include <linux/videodev2.h>
#include "hr_test.h"
#include "io/io_internal.h"
#include "io/tum.h"

static void test_timestamps(void) {
  int64_t ns = 0;
  const char *end = NULL;
  CHECK_EQ_INT(hr__tum_parse_timestamp("1700000000.005854", &end, &ns), HR_OK);
  CHECK_EQ_INT(ns, 1700000000005854000LL);
  CHECK(*end == 0);
  /* 10th digit rounds: 0.005854129|79126 -> 5854130 ns. */
  CHECK_EQ_INT(hr__tum_parse_timestamp("0.00585412979126", NULL, &ns), HR_OK);
  CHECK_EQ_INT(ns, 5854130);
  CHECK_EQ_INT(hr__tum_parse_timestamp("00.0154299736023", NULL, &ns), HR_OK);
  CHECK_EQ_INT(ns, 15429974);
  /* Exact where a double is not: 1305031102.175304000 has no exact double. */
  CHECK_EQ_INT(hr__tum_parse_timestamp("1305031102.175304", NULL, &ns), HR_OK);
  CHECK_EQ_INT(ns, 1305031102175304000LL);
  CHECK_EQ_INT(hr__tum_parse_timestamp("1305031102.999999999", NULL, &ns), HR_OK);
  CHECK_EQ_INT(ns, 1305031102999999999LL);
  CHECK_EQ_INT(hr__tum_parse_timestamp("1.9999999995", NULL, &ns), HR_OK);
  CHECK_EQ_INT(ns, 2000000000LL);
  CHECK_EQ_INT(hr__tum_parse_timestamp("-0.5", NULL, &ns), HR_OK);
  CHECK_EQ_INT(ns, -500000000LL);
  CHECK_EQ_INT(hr__tum_parse_timestamp(".25", NULL, &ns), HR_OK);
  CHECK_EQ_INT(ns, 250000000LL);
  CHECK_EQ_INT(hr__tum_parse_timestamp("7.", NULL, &ns), HR_OK);
  CHECK_EQ_INT(ns, 7000000000LL);
  CHECK_EQ_INT(hr__tum_parse_timestamp("1.5e-3", &end, &ns), HR_OK);
  CHECK_EQ_INT(ns, 1500000);
  CHECK(*end == 0);
  CHECK_EQ_INT(hr__tum_parse_timestamp("12abc", &end, &ns), HR_OK);
  CHECK(*end == 'a');
  CHECK_EQ_INT(hr__tum_parse_timestamp("abc", NULL, &ns), HR_ECORRUPT);
  CHECK_EQ_INT(hr__tum_parse_timestamp("", NULL, &ns), HR_ECORRUPT);
  CHECK_EQ_INT(hr__tum_parse_timestamp(".", NULL, &ns), HR_ECORRUPT);
  CHECK_EQ_INT(hr__tum_parse_timestamp("-", NULL, &ns), HR_ECORRUPT);
  CHECK_EQ_INT(hr__tum_parse_timestamp("9223372036.854775807", NULL, &ns), HR_OK);
  CHECK_EQ_INT(ns, INT64_MAX);
  CHECK_EQ_INT(hr__tum_parse_timestamp("9223372036.854775808", NULL, &ns), HR_ERANGE);
  CHECK_EQ_INT(hr__tum_parse_timestamp("99999999999999999999999", NULL, &ns), HR_ERANGE);
  CHECK_EQ_INT(hr__tum_parse_timestamp("1e300", NULL, &ns), HR_ERANGE);
}

static void test_list_parse(void) {
  const char *txt =
      "# color images\r\n"
      "   # timestamp filename\n"
      "\n"
      "1700000000.005854 rgb/rgb00002.png\r\n"
      "\t1700000000.012920\trgb/rgb00003.png  extra columns ignored\n"
      "1700000000.028350 /abs/rgb00004.png";   /* no final newline */
  hr_tum_list l;
  char err[256] = "";
  CHECK_EQ_INT(hr__tum_list_parse(txt, strlen(txt), "/data/tum", "rgb.txt", &l, err, sizeof err), HR_OK);
  CHECK_EQ_INT(l.n, 3);
  if (l.n == 3) {
    CHECK_EQ_INT(l.v[0].ts_ns, 1700000000005854000LL);
    CHECK(strcmp(l.v[0].path, "/data/tum/rgb/rgb00002.png") == 0);
    CHECK_EQ_INT(l.v[0].line, 4);
    CHECK(strcmp(l.v[1].path, "/data/tum/rgb/rgb00003.png") == 0);
    CHECK_EQ_INT(l.v[1].line, 5);
    CHECK(strcmp(l.v[2].path, "/abs/rgb00004.png") == 0);
    CHECK_EQ_INT(l.v[2].ts_ns, 1700000000028350000LL);
  }
  hr__tum_list_free(&l);
  hr__tum_list_free(&l);   /* harmless twice */
  hr__tum_list_free(NULL);

  CHECK_EQ_INT(hr__tum_list_parse("", 0, NULL, "x", &l, err, sizeof err), HR_OK);
  CHECK_EQ_INT(l.n, 0);

  const char *bad = "# c\n1.0 a.png\n1.5x b.png\n";
  CHECK_EQ_INT(hr__tum_list_parse(bad, strlen(bad), NULL, "depth.txt", &l, err, sizeof err), HR_ECORRUPT);
  CHECKF(strstr(err, "depth.txt line 3") && strstr(err, "1.5x"), "%s", err);
  CHECK_EQ_INT(l.n, 0);
  CHECK(l.v == NULL);

  const char *nopath = "1.0 a.png\n2.0   \n";
  CHECK_EQ_INT(hr__tum_list_parse(nopath, strlen(nopath), NULL, "rgb.txt", &l, err, sizeof err), HR_ECORRUPT);
  CHECKF(strstr(err, "line 2") && strstr(err, "no file"), "%s", err);

  const char nul[] = "1.0 a.png\n2.0 b\0.png\n";
  CHECK_EQ_INT(hr__tum_list_parse(nul, sizeof nul - 1, NULL, "rgb.txt", &l, err, sizeof err), HR_ECORRUPT);
  CHECKF(strstr(err, "line 2"), "%s", err);

  /* Not NUL-terminated input: the parser must stop at len. */
  char raw[12];
  memcpy(raw, "3.5 img.png#", 12);
  CHECK_EQ_INT(hr__tum_list_parse(raw, 11, NULL, "x", &l, err, sizeof err), HR_OK);
  CHECK_EQ_INT(l.n, 1);
  if (l.n == 1) CHECK(strcmp(l.v[0].path, "img.png") == 0);
  hr__tum_list_free(&l);
}

/* Light fuzzing of the list parser (the real harness is a libFuzzer target over the same entry
 * point): random byte edits of a valid list must parse or fail cleanly, never crash (run under
 * ASan), and a success must hold only well-formed entries. */
static void test_list_fuzz(void) {
  const char *seed = "# c\n1700000000.005854 rgb/a.png\n 1.5e-3\tb.png x\n\n-0.25 /c.png\r\n";
  size_t n = strlen(seed);
  char buf[256];
  uint32_t r = 12345;
  int ok = 0, bad_entries = 0;
  for (int it = 0; it < 20000; it++) {
    memcpy(buf, seed, n);
    size_t len = n;
    int edits = 1 + (int)((r = r * 1664525u + 1013904223u) >> 29);
    for (int e = 0; e < edits; e++) {
      r = r * 1664525u + 1013904223u;
      size_t at = (r >> 8) % len;
      int op = (int)(r >> 30);
      static const char alphabet[] = "0123456789.eE+- \t\r\n#a/\0\xff";
      char c = alphabet[(r >> 16) % (sizeof alphabet - 1)];
      if (op == 0 && len > 1) { memmove(buf + at, buf + at + 1, len - at - 1); len--; }
      else if (op == 1 && len < sizeof buf) { memmove(buf + at + 1, buf + at, len - at); buf[at] = c; len++; }
      else buf[at] = c;
    }
    hr_tum_list l;
    char err[128];
    if (hr__tum_list_parse(buf, len, (it & 1) ? "/base" : NULL, "fuzz", &l, err, sizeof err) == HR_OK) {
      ok++;
      for (int i = 0; i < l.n; i++) bad_entries += !l.v[i].path[0] || strpbrk(l.v[i].path, " \t\r\n") != NULL;
    }
    hr__tum_list_free(&l);
  }
  CHECK(ok > 100);
  CHECK_EQ_INT(bad_entries, 0);
}

static void test_input_format(void) {
  hr_pixfmt f;
  int w, h;
  double fps;
  char err[256];
  CHECK_EQ_INT(hr__parse_input_format("nv12:1920x1440@60", &f, &w, &h, &fps, err, sizeof err), HR_OK);
  CHECK(f == HR_PIX_NV12_FULL && w == 1920 && h == 1440 && fps == 60);
  CHECK_EQ_INT(hr__parse_input_format("bgra:641x479@29.97", &f, &w, &h, &fps, err, sizeof err), HR_OK);
  CHECK(f == HR_PIX_BGRA && w == 641 && h == 479 && fabs(fps - 29.97) < 1e-9);
  CHECK_EQ_INT(hr__parse_input_format("RGB24:8x2", &f, &w, &h, &fps, err, sizeof err), HR_OK);
  CHECK(f == HR_PIX_RGB24 && fps == 0);
  CHECK_EQ_INT(hr__parse_input_format("nv12v:4x4", &f, &w, &h, &fps, err, sizeof err), HR_OK);
  CHECK(f == HR_PIX_NV12_VIDEO);
  CHECK_EQ_INT(hr__parse_input_format("nv12:1919x1080@30", &f, &w, &h, &fps, err, sizeof err), HR_EINVAL);
  CHECKF(strstr(err, "even") && strstr(err, "1919x1080"), "%s", err);
  CHECK_EQ_INT(hr__parse_input_format("i420:640x481", &f, &w, &h, &fps, err, sizeof err), HR_EINVAL);
  CHECK_EQ_INT(hr__parse_input_format("yuv9:640x480", &f, &w, &h, &fps, err, sizeof err), HR_EINVAL);
  CHECKF(strstr(err, "unknown pixel format 'yuv9'"), "%s", err);
  CHECK_EQ_INT(hr__parse_input_format("nv12", &f, &w, &h, &fps, err, sizeof err), HR_EINVAL);
  CHECK_EQ_INT(hr__parse_input_format("nv12:640", &f, &w, &h, &fps, err, sizeof err), HR_EINVAL);
  CHECK_EQ_INT(hr__parse_input_format("nv12:0x480", &f, &w, &h, &fps, err, sizeof err), HR_EINVAL);
  CHECK_EQ_INT(hr__parse_input_format("nv12:640x480@", &f, &w, &h, &fps, err, sizeof err), HR_EINVAL);
  CHECK_EQ_INT(hr__parse_input_format("nv12:640x480@-5", &f, &w, &h, &fps, err, sizeof err), HR_EINVAL);
  CHECK_EQ_INT(hr__parse_input_format("nv12:640x480@30fps", &f, &w, &h, &fps, err, sizeof err), HR_EINVAL);
  CHECK_EQ_INT(hr__parse_input_format("rgbf32:4x4", &f, &w, &h, &fps, err, sizeof err), HR_EINVAL);
  CHECK_EQ_INT(hr__frame_bytes(HR_PIX_NV12_FULL, 1920, 1440), 4147200);
  CHECK_EQ_INT(hr__frame_bytes(HR_PIX_BGRA, 3, 3), 36);
  CHECK_EQ_INT(hr__frame_bytes(HR_PIX_I420_VIDEO, 3, 4), 0);
}

static void test_depth_lut(void) {
  uint16_t *lut = (uint16_t *)1;
  CHECK_EQ_INT(hr__depth_lut_make(1000.0, &lut), HR_OK);
  CHECK(lut == NULL);   /* values kept as they are */
  uint16_t px[4] = {0, 1234, 65535, 7};
  hr__depth_apply_lut(px, 4, NULL);
  CHECK(px[1] == 1234 && px[2] == 65535);
  CHECK_EQ_INT(hr__depth_lut_make(5000.0, &lut), HR_OK);   /* TUM */
  CHECK(lut != NULL);
  if (lut) {
    CHECK_EQ_INT(lut[0], 0);
    CHECK_EQ_INT(lut[2], 0);       /* 0.4 mm */
    CHECK_EQ_INT(lut[3], 1);       /* 0.6 mm */
    CHECK_EQ_INT(lut[5000], 1000);
    CHECK_EQ_INT(lut[5002], 1000);
    CHECK_EQ_INT(lut[5003], 1001);
    CHECK_EQ_INT(lut[65535], 13107);
    free(lut);
  }
  CHECK_EQ_INT(hr__depth_lut_make(500.0, &lut), HR_OK);    /* 2 mm a unit: saturates */
  if (lut) {
    CHECK_EQ_INT(lut[100], 200);
    CHECK_EQ_INT(lut[32767], 65534);
    CHECK_EQ_INT(lut[40000], 65535);
    free(lut);
  }
}

static void test_yuyv(void) {
  /* 4x2 YUYV: row 0 and row 1 chroma averaged (rounded up at .5). */
  const uint8_t src[2][8] = {{10, 100, 11, 200, 12, 50, 13, 60},
                             {20, 101, 21, 203, 22, 50, 23, 61}};
  uint8_t y[2][4], uv[4];
  hr__yuyv_to_nv12(&src[0][0], 8, 4, 2, &y[0][0], 4, uv, 4);
  const uint8_t ey[2][4] = {{10, 11, 12, 13}, {20, 21, 22, 23}};
  CHECK(memcmp(y, ey, 8) == 0);
  CHECK_EQ_INT(uv[0], 101);   /* (100+101+1)/2 */
  CHECK_EQ_INT(uv[1], 202);   /* (200+203+1)/2 */
  CHECK_EQ_INT(uv[2], 50);
  CHECK_EQ_INT(uv[3], 61);    /* (60+61+1)/2 */
  /* Strided source and destination. */
  uint8_t s2[4][12], y2[4][6], uv2[2][6];
  for (int r = 0; r < 4; r++)
    for (int i = 0; i < 12; i++) s2[r][i] = (uint8_t)(r * 16 + i);
  memset(y2, 0xee, sizeof y2);
  memset(uv2, 0xee, sizeof uv2);
  hr__yuyv_to_nv12(&s2[0][0], 12, 4, 4, &y2[0][0], 6, &uv2[0][0], 6);
  CHECK_EQ_INT(y2[3][3], 3 * 16 + 6);
  CHECK_EQ_INT(y2[3][4], 0xee);    /* padding untouched */
  CHECK_EQ_INT(uv2[1][0], (2 * 16 + 1 + 3 * 16 + 1 + 1) / 2);
  CHECK_EQ_INT(uv2[1][4], 0xee);
}

static void test_v4l2_pick(void) {
  const uint32_t a[] = {V4L2_PIX_FMT_MJPEG, V4L2_PIX_FMT_YUYV, V4L2_PIX_FMT_NV12};
  CHECK_EQ_INT(hr__v4l2_pick_fourcc(a, 3), 2);
  CHECK_EQ_INT(hr__v4l2_pick_fourcc(a, 2), 1);
  CHECK_EQ_INT(hr__v4l2_pick_fourcc(a, 1), 0);
  const uint32_t b[] = {V4L2_PIX_FMT_H264, V4L2_PIX_FMT_RGB24};
  CHECK_EQ_INT(hr__v4l2_pick_fourcc(b, 2), -1);
  CHECK_EQ_INT(hr__v4l2_pick_fourcc(b, 0), -1);
  CHECK(hr__v4l2_nv12_fmt(V4L2_QUANTIZATION_DEFAULT, V4L2_COLORSPACE_SRGB) == HR_PIX_NV12_VIDEO);
  CHECK(hr__v4l2_nv12_fmt(V4L2_QUANTIZATION_DEFAULT, V4L2_COLORSPACE_REC709) == HR_PIX_NV12_VIDEO);
  CHECK(hr__v4l2_nv12_fmt(V4L2_QUANTIZATION_DEFAULT, V4L2_COLORSPACE_JPEG) == HR_PIX_NV12_FULL);
  CHECK(hr__v4l2_nv12_fmt(V4L2_QUANTIZATION_FULL_RANGE, V4L2_COLORSPACE_SRGB) == HR_PIX_NV12_FULL);
  CHECK(hr__v4l2_nv12_fmt(V4L2_QUANTIZATION_LIM_RANGE, V4L2_COLORSPACE_JPEG) == HR_PIX_NV12_VIDEO);
}

static void test_params(void) {
  hr_source_params p;
  hr_source_params_default(&p);
  CHECK(p.input_format == NULL && p.stream == HR_SOURCE_STREAM_COLOR);
  CHECK(p.depth_scale == 1000.0 && p.fps == 30.0 && p.pool_size == 3);
  hr_source_params_default(NULL);
  hr_source_destroy(NULL);
  CHECK(hr_source_frame_count(NULL) == -1);
  CHECK(hr_source_describe(NULL) != NULL);
  CHECK(hr_source_last_error(NULL) != NULL);
  hr_frame f;
  CHECK_EQ_INT(hr_source_read(NULL, &f), HR_EINVAL);
  hr_source *s = (hr_source *)1;
  char err[256];
  CHECK_EQ_INT(hr_source_open("", NULL, &s, err, sizeof err), HR_EINVAL);
  CHECK(s == NULL);
  CHECK_EQ_INT(hr_source_open("x", NULL, NULL, err, sizeof err), HR_EINVAL);
  p.pool_size = 0;
  CHECK_EQ_INT(hr_source_open("/tmp", &p, &s, err, sizeof err), HR_EINVAL);
  CHECKF(strstr(err, "pool_size"), "%s", err);
  hr_source_params_default(&p);
  p.depth_scale = 0;
  CHECK_EQ_INT(hr_source_open("/tmp", &p, &s, err, sizeof err), HR_EINVAL);
  hr_source_params_default(&p);
  p.fps = -1;
  CHECK_EQ_INT(hr_source_open("/tmp", &p, &s, err, sizeof err), HR_EINVAL);
}

int main(void) {
  test_timestamps();
  test_list_parse();
  test_list_fuzz();
  test_input_format();
  test_depth_lut();
  test_yuyv();
  test_v4l2_pick();
  test_params();
  return hr_test_finish("test_io_units");
}
