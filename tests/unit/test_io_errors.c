/* Frame sources on synthetic inputs: raw files and pipes (good, truncated, odd sizes), TUM folders
 * with missing files, image folders with bad or mismatched files, non-video files given as
 * video, and a missing V4L2 device. Every error must name the file and the problem. */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "hr_test.h"
#include "headroom/io.h"
#include "io/io_internal.h"

static char dir[64];

static const char *tmp(const char *name) {
  static char b[8][256];
  static int k;
  k = (k + 1) % 8;
  snprintf(b[k], sizeof b[k], "%s/%s", dir, name);
  return b[k];
}

static void write_file(const char *path, const void *data, size_t n) {
  FILE *f = fopen(path, "wb");
  CHECK(f != NULL);
  if (!f) return;
  CHECK(fwrite(data, 1, n, f) == n);
  fclose(f);
}

static int rm_cb(const char *p, const struct stat *sb, int flag, struct FTW *ftw) {
  return remove(p);
}

static void test_raw_file(void) {
  enum { W = 64, H = 48, FB = W * H * 3 / 2 };
  static uint8_t data[FB * 2 + FB / 2];
  for (size_t i = 0; i < sizeof data; i++) data[i] = (uint8_t)(i / FB * 40 + i % 7);
  write_file(tmp("cam.nv12"), data, sizeof data);
  hr_source_params p;
  hr_source_params_default(&p);
  p.input_format = "nv12:64x48@60";
  p.pool_size = 2;
  hr_source *s = NULL;
  char err[512];
  CHECK_EQ_INT(hr_source_open(tmp("cam.nv12"), &p, &s, err, sizeof err), HR_OK);
  if (!s) { fprintf(stderr, "%s\n", err); return; }
  printf("  %s\n", hr_source_describe(s));
  CHECK_EQ_INT(hr_source_frame_count(s), 2);
  hr_frame f0, f1, f2;
  CHECK_EQ_INT(hr_source_read(s, &f0), HR_OK);
  CHECK(f0.fmt == HR_PIX_NV12_FULL && f0.width == W && f0.height == H && f0.ts_ns == 0);
  CHECK(f0.strides[0] == W && f0.strides[1] == W);
  CHECK((const uint8_t *)f0.planes[1] == (const uint8_t *)f0.planes[0] + W * H);
  CHECK(memcmp(f0.planes[0], data, FB) == 0);
  CHECK_EQ_INT(hr_frame_validate(&f0, NULL, 0), HR_OK);
  CHECK_EQ_INT(hr_source_read(s, &f1), HR_OK);
  CHECK_EQ_INT(f1.ts_ns, 16666667);
  CHECK(memcmp(f1.planes[0], data + FB, FB) == 0);
  CHECK(memcmp(f0.planes[0], data, FB) == 0);   /* pool_size 2: frame 0 still intact */
  memset(&f2, 0x5a, sizeof f2);
  hr_frame before = f2;
  CHECK_EQ_INT(hr_source_read(s, &f2), HR_ECORRUPT);
  CHECK(memcmp(&f2, &before, sizeof f2) == 0);   /* untouched on error */
  CHECKF(strstr(hr_source_last_error(s), "cam.nv12: truncated frame 2: 2304 of 4608 bytes"), "%s",
         hr_source_last_error(s));
  CHECK_EQ_INT(hr_source_read(s, &f2), HR_EEOF);
  CHECK_EQ_INT(hr_source_read(s, &f2), HR_EEOF);
  hr_source_stats st;
  hr_source_get_stats(s, &st);
  CHECK(st.frames == 2 && st.pooled == 2 && st.in_place == 0 && st.bytes_pooled == 2 * FB);
  hr_source_destroy(s);

  /* Odd NV12 sizes are refused at open. */
  p.input_format = "nv12:63x48";
  s = (hr_source *)1;
  CHECK_EQ_INT(hr_source_open(tmp("cam.nv12"), &p, &s, err, sizeof err), HR_EINVAL);
  CHECK(s == NULL);
  CHECKF(strstr(err, "even") && strstr(err, "63x48"), "%s", err);
  /* A missing raw file names itself. */
  p.input_format = "bgra:4x4";
  CHECK_EQ_INT(hr_source_open(tmp("none.bgra"), &p, &s, err, sizeof err), HR_EIO);
  CHECKF(strstr(err, "none.bgra") && strstr(err, "No such file"), "%s", err);
  /* Raw input has no depth stream. */
  p.stream = HR_SOURCE_STREAM_DEPTH;
  CHECK_EQ_INT(hr_source_open(tmp("cam.nv12"), &p, &s, err, sizeof err), HR_EINVAL);
  CHECKF(strstr(err, "depth"), "%s", err);
}

/* Raw BGRA through stdin from a pipe: reads are split across pipe writes. */
static void test_raw_stdin(void) {
  enum { W = 8, H = 4, FB = W * H * 4 };
  int fds[2];
  CHECK(pipe(fds) == 0);
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    uint8_t b[FB * 3];
    for (int i = 0; i < FB * 3; i++) b[i] = (uint8_t)i;
    for (int off = 0; off < FB * 3; off += 50) {   /* dribble: 50 bytes at a time */
      int n = FB * 3 - off < 50 ? FB * 3 - off : 50;
      if (write(fds[1], b + off, (size_t)n) != n) _exit(1);
      usleep(200);
    }
    _exit(0);
  }
  close(fds[1]);
  int saved = dup(0);
  dup2(fds[0], 0);
  close(fds[0]);
  hr_source_params p;
  hr_source_params_default(&p);
  p.input_format = "bgra:8x4@25";
  hr_source *s = NULL;
  char err[512];
  CHECK_EQ_INT(hr_source_open("-", &p, &s, err, sizeof err), HR_OK);
  if (s) {
    printf("  %s\n", hr_source_describe(s));
    CHECK_EQ_INT(hr_source_frame_count(s), -1);
    hr_frame f;
    int n = 0;
    hr_status st;
    while ((st = hr_source_read(s, &f)) == HR_OK) {
      CHECK(f.fmt == HR_PIX_BGRA && f.strides[0] == W * 4 && f.ts_ns == n * 40000000LL);
      CHECK_EQ_INT(((const uint8_t *)f.planes[0])[5], (uint8_t)(n * FB + 5));
      n++;
    }
    CHECK_EQ_INT(st, HR_EEOF);
    CHECK_EQ_INT(n, 3);
    hr_source_destroy(s);
  }
  dup2(saved, 0);
  close(saved);
  int wst = 0;
  waitpid(pid, &wst, 0);
  CHECK(WIFEXITED(wst) && WEXITSTATUS(wst) == 0);
  s = (hr_source *)1;
  CHECK_EQ_INT(hr_source_open("-", NULL, &s, err, sizeof err), HR_EINVAL);   /* no format */
  CHECKF(strstr(err, "input_format"), "%s", err);
  CHECK(s == NULL);
}

static void make_png(const char *path, int w, int h, uint8_t v) {
  uint8_t *px = malloc((size_t)w * h * 3);
  memset(px, v, (size_t)w * h * 3);
  CHECK_EQ_INT(hr_png_write_rgb24(path, w, h, px, w * 3), HR_OK);
  free(px);
}

static void make_depth(const char *path, int w, int h, uint16_t v) {
  uint16_t *px = malloc((size_t)w * h * 2);
  for (int i = 0; i < w * h; i++) px[i] = v;
  CHECK_EQ_INT(hr_png_write_gray16(path, w, h, px, w * 2), HR_OK);
  free(px);
}

static void test_tum(void) {
  mkdir(tmp("tum"), 0700);
  mkdir(tmp("tum/rgb"), 0700);
  mkdir(tmp("tum/depth"), 0700);
  make_png(tmp("tum/rgb/a.png"), 8, 6, 10);
  make_png(tmp("tum/rgb/b.png"), 8, 6, 20);
  make_depth(tmp("tum/depth/a.png"), 8, 6, 5000);
  make_depth(tmp("tum/depth/b.png"), 8, 6, 12345);
  const char *rgb = "# color\n# timestamp filename\n100.000000001 rgb/a.png\n100.5 rgb/b.png\n";
  const char *depth = "# depth\n100.000000001 depth/a.png\n100.5 depth/b.png\n";
  write_file(tmp("tum/rgb.txt"), rgb, strlen(rgb));
  write_file(tmp("tum/depth.txt"), depth, strlen(depth));

  /* Good folder, both streams, with TUM's 5000 units per metre. */
  hr_source_params p;
  hr_source_params_default(&p);
  p.depth_scale = 5000;
  hr_source *s = NULL;
  char err[512];
  CHECK_EQ_INT(hr_source_open(tmp("tum"), &p, &s, err, sizeof err), HR_OK);
  if (s) {
    printf("  %s\n", hr_source_describe(s));
    hr_frame f;
    CHECK_EQ_INT(hr_source_read(s, &f), HR_OK);
    CHECK(f.fmt == HR_PIX_RGB24 && f.width == 8 && f.ts_ns == 100000000001LL);
    CHECK_EQ_INT(((const uint8_t *)f.planes[0])[0], 10);
    CHECK_EQ_INT(hr_source_read(s, &f), HR_OK);
    CHECK_EQ_INT(f.ts_ns, 100500000000LL);
    CHECK_EQ_INT(hr_source_read(s, &f), HR_EEOF);
    hr_source_destroy(s);
  }
  p.stream = HR_SOURCE_STREAM_DEPTH;
  char spec[300];
  snprintf(spec, sizeof spec, "tum:%s", tmp("tum"));
  CHECK_EQ_INT(hr_source_open(spec, &p, &s, err, sizeof err), HR_OK);
  if (s) {
    printf("  %s\n", hr_source_describe(s));
    hr_frame f;
    CHECK_EQ_INT(hr_source_read(s, &f), HR_OK);
    CHECK(f.fmt == HR_PIX_DEPTH16_MM && f.strides[0] == 16);
    CHECK_EQ_INT(((const uint16_t *)f.planes[0])[0], 1000);
    CHECK_EQ_INT(hr_source_read(s, &f), HR_OK);
    CHECK_EQ_INT(((const uint16_t *)f.planes[0])[47], 2469);   /* 12345 / 5 = 2469 */
    hr_source_stats st;
    hr_source_get_stats(s, &st);
    CHECK_EQ_INT(st.converted, 2);
    hr_source_destroy(s);
  }

  /* A listed file is missing: refused at open, naming the list, the line and the file. */
  const char *rgb_bad = "# color\n100.0 rgb/a.png\n\n100.1 rgb/missing.png\n";
  write_file(tmp("tum/rgb.txt"), rgb_bad, strlen(rgb_bad));
  p.stream = HR_SOURCE_STREAM_COLOR;
  s = (hr_source *)1;
  CHECK_EQ_INT(hr_source_open(tmp("tum"), &p, &s, err, sizeof err), HR_EIO);
  CHECK(s == NULL);
  CHECKF(strstr(err, "rgb.txt line 4") && strstr(err, "rgb/missing.png") && strstr(err, "No such file"),
         "%s", err);
  /* Malformed line. */
  const char *rgb_junk = "100.0 rgb/a.png\nhello rgb/b.png\n";
  write_file(tmp("tum/rgb.txt"), rgb_junk, strlen(rgb_junk));
  CHECK_EQ_INT(hr_source_open(spec, &p, &s, err, sizeof err), HR_ECORRUPT);
  CHECKF(strstr(err, "rgb.txt line 2") && strstr(err, "hello"), "%s", err);
  /* Colour PNG listed as depth. */
  const char *depth_bad = "100.0 rgb/a.png\n";
  write_file(tmp("tum/depth.txt"), depth_bad, strlen(depth_bad));
  p.stream = HR_SOURCE_STREAM_DEPTH;
  CHECK_EQ_INT(hr_source_open(spec, &p, &s, err, sizeof err), HR_ENOTSUP);
  CHECKF(strstr(err, "depth.txt line 1") && strstr(err, "16-bit"), "%s", err);
  /* Empty list. */
  write_file(tmp("tum/depth.txt"), "# nothing\n", 10);
  CHECK_EQ_INT(hr_source_open(spec, &p, &s, err, sizeof err), HR_ECORRUPT);
  CHECKF(strstr(err, "lists no frames"), "%s", err);
  /* tum: on a folder without lists. */
  CHECK_EQ_INT(hr_source_open("tum:/nonexistent-hr-dir", &p, &s, err, sizeof err), HR_EIO);
  CHECKF(strstr(err, "/nonexistent-hr-dir/depth.txt"), "%s", err);
}

static void test_images(void) {
  mkdir(tmp("img"), 0700);
  make_png(tmp("img/b.png"), 6, 4, 2);
  make_png(tmp("img/a.PNG"), 6, 4, 1);
  make_png(tmp("img/c.png"), 4, 4, 3);    /* other size */
  write_file(tmp("img/d.png"), "\x89PNG\r\n\x1a\nnot really", 18);   /* corrupt */
  make_png(tmp("img/e.png"), 6, 4, 5);
  write_file(tmp("img/notes.txt"), "ignored", 7);
  write_file(tmp("img/.hidden.png"), "x", 1);
  hr_source_params p;
  hr_source_params_default(&p);
  p.fps = 10;
  p.pool_size = 1;
  hr_source *s = NULL;
  char err[512];
  CHECK_EQ_INT(hr_source_open(tmp("img"), &p, &s, err, sizeof err), HR_OK);
  if (!s) { fprintf(stderr, "%s\n", err); return; }
  printf("  %s\n", hr_source_describe(s));
  CHECK_EQ_INT(hr_source_frame_count(s), 5);
  hr_frame f;
  CHECK_EQ_INT(hr_source_read(s, &f), HR_OK);   /* a.PNG: byte order puts 'a' first */
  CHECK(f.ts_ns == 0 && ((const uint8_t *)f.planes[0])[0] == 1);
  CHECK_EQ_INT(hr_source_read(s, &f), HR_OK);   /* b.png */
  CHECK(f.ts_ns == 100000000 && ((const uint8_t *)f.planes[0])[0] == 2);
  CHECK_EQ_INT(hr_source_read(s, &f), HR_EMISMATCH);   /* c.png is 4x4 */
  CHECKF(strstr(hr_source_last_error(s), "c.png is 4x4, expected 6x4"), "%s", hr_source_last_error(s));
  CHECK_EQ_INT(hr_source_read(s, &f), HR_ECORRUPT);    /* d.png, skipped after */
  CHECKF(strstr(hr_source_last_error(s), "d.png"), "%s", hr_source_last_error(s));
  CHECK_EQ_INT(hr_source_read(s, &f), HR_OK);          /* e.png: frame 4 keeps its time */
  CHECK(f.ts_ns == 400000000 && ((const uint8_t *)f.planes[0])[0] == 5);
  CHECK_EQ_INT(hr_source_read(s, &f), HR_EEOF);
  hr_source_destroy(s);
  /* Images have no depth stream. */
  p.stream = HR_SOURCE_STREAM_DEPTH;
  CHECK_EQ_INT(hr_source_open(tmp("img"), &p, &s, err, sizeof err), HR_EINVAL);
  /* A folder with no images. */
  mkdir(tmp("empty"), 0700);
  CHECK_EQ_INT(hr_source_open(tmp("empty"), NULL, &s, err, sizeof err), HR_EINVAL);
  CHECKF(strstr(err, "empty") && strstr(err, "no .png"), "%s", err);
  /* A JPEG that stops half way decodes with a warning (grey rest), counted. */
}

/* A 16-bit mono WAV of silence: an audio-only file. */
static void make_wav(const char *path) {
  uint8_t b[44 + 3200] = {0};
  uint32_t rate = 16000, data = 3200, riff = 36 + data, fmt_len = 16, byte_rate = rate * 2;
  uint16_t pcm = 1, ch = 1, align = 2, bits = 16;
  memcpy(b, "RIFF", 4); memcpy(b + 4, &riff, 4); memcpy(b + 8, "WAVEfmt ", 8);
  memcpy(b + 16, &fmt_len, 4); memcpy(b + 20, &pcm, 2); memcpy(b + 22, &ch, 2);
  memcpy(b + 24, &rate, 4); memcpy(b + 28, &byte_rate, 4); memcpy(b + 32, &align, 2);
  memcpy(b + 34, &bits, 2); memcpy(b + 36, "data", 4); memcpy(b + 40, &data, 4);
  write_file(path, b, sizeof b);
}

static void test_not_video(void) {
  hr_source *s = (hr_source *)1;
  char err[512];
  make_wav(tmp("tone.wav"));
  CHECK_EQ_INT(hr_source_open(tmp("tone.wav"), NULL, &s, err, sizeof err), HR_ENOTSUP);
  CHECK(s == NULL);
  CHECKF(strstr(err, "tone.wav has no video stream") && strstr(err, "1 audio"), "%s", err);
  const char *text = "This is a plain text file.\nNothing to see.\n";
  write_file(tmp("notes.txt"), text, strlen(text));
  CHECK_EQ_INT(hr_source_open(tmp("notes.txt"), NULL, &s, err, sizeof err), HR_ENOTSUP);
  CHECKF(strstr(err, "notes.txt") && strstr(err, "not a video"), "%s", err);
  write_file(tmp("notes.dat"), text, strlen(text));
  CHECK_EQ_INT(hr_source_open(tmp("notes.dat"), NULL, &s, err, sizeof err), HR_ENOTSUP);
  CHECKF(strstr(err, "notes.dat is not a video"), "%s", err);
  write_file(tmp("empty.mp4"), "", 0);
  CHECK(hr_source_open(tmp("empty.mp4"), NULL, &s, err, sizeof err) < 0);
  CHECKF(strstr(err, "empty.mp4 is not a video"), "%s", err);
  CHECK_EQ_INT(hr_source_open(tmp("missing.mp4"), NULL, &s, err, sizeof err), HR_EIO);
  CHECKF(strstr(err, "missing.mp4") && strstr(err, "No such file"), "%s", err);
  CHECK(s == NULL);
}

static void test_v4l2_missing(void) {
  hr_source *s = (hr_source *)1;
  char err[512];
  CHECK_EQ_INT(hr_source_open("/dev/video97", NULL, &s, err, sizeof err), HR_EIO);
  CHECK(s == NULL);
  CHECKF(strstr(err, "cannot open camera /dev/video97") && strstr(err, "No such file"), "%s", err);
  CHECK_EQ_INT(hr_source_open("v4l2:/dev/null", NULL, &s, err, sizeof err), HR_ENOTSUP);
  CHECKF(strstr(err, "/dev/null is not a V4L2 device"), "%s", err);
  hr_source_params p;
  hr_source_params_default(&p);
  p.input_format = "nv12:641x480";
  CHECK_EQ_INT(hr_source_open("v4l2:/dev/video97", &p, &s, err, sizeof err), HR_EINVAL);
  CHECKF(strstr(err, "even"), "%s", err);
}

int main(void) {
  snprintf(dir, sizeof dir, "/tmp/hr_io_err_XXXXXX");
  if (!mkdtemp(dir)) SKIP("cannot make a temporary folder");
  test_raw_file();
  test_raw_stdin();
  test_tum();
  test_images();
  test_not_video();
  test_v4l2_missing();
  nftw(dir, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
  return hr_test_finish("test_io_errors");
}
