/* Ingest benchmark: fused convert+resample vs naive (whole-frame float conversion, then resize) on
 * 1920x1440 frames made from a real image, one core, median of N runs; prints one JSON line.
 *
 * Build and run (from the repository root; needs the ffmpeg CLI on PATH to make the frames):
 *   gcc -std=c11 -O2 -Wall -Wextra -D_GNU_SOURCE -Iinclude -Isrc bench/ingest_bench.c \
 *       src/ingest/ingest.c src/ingest/ingest_sse2.c src/core/frame.c src/core/status.c -lm \
 *       -o build-ingest/ingest_bench
 *   build-ingest/ingest_bench [-i image] [-o OUT_WxOUT_H] [-n runs] [-c cpu]
 * Defaults: image $HR_DATA_DIR/sam2-bedroom/frames/00000.jpg (HR_DATA_DIR defaults to
 * ../shared/data), output 480x360 (RVM's processing size at ratio 0.25), 200 runs, CPU 1.
 * Frames: `ffmpeg -i image -vf scale=1920:1440 -pix_fmt {nv12,yuv420p,bgra,rgb24} -f rawvideo -`.
 *
 * Per format: fused_ms (hr__ingest_resample_rgbf), naive_ms (hr__ingest_naive_rgbf: whole-frame
 * conversion + reference resize), naive_convert_ms (the whole-frame conversion alone), ratio =
 * naive_ms / fused_ms, rows_ms (hr__ingest_row_rgbf over all rows: the refiner's guidance cost per
 * frame, interleaved), rows_planar_ms (hr__ingest_row_planar, the same as three planes),
 * read_bytes / written_bytes (the plan's copy accounting), max_abs (fused vs naive). */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "headroom.h"
#include "ingest/ingest.h"

#define IN_W 1920
#define IN_H 1440

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_d);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static unsigned char *ffmpeg_frame(const char *image, const char *pix_fmt, size_t bytes) {
  char cmd[2048];
  snprintf(cmd, sizeof cmd,
           "ffmpeg -v error -nostdin -i '%s' -vf scale=%d:%d -pix_fmt %s -frames:v 1 -f rawvideo -",
           image, IN_W, IN_H, pix_fmt);
  FILE *p = popen(cmd, "r");
  if (!p) return NULL;
  unsigned char *buf = malloc(bytes);
  size_t got = buf ? fread(buf, 1, bytes, p) : 0;
  int rc = pclose(p);
  if (!buf || got != bytes || rc != 0) {
    fprintf(stderr, "ingest_bench: ffmpeg gave %zu of %zu bytes (%s), rc %d\n", got, bytes, pix_fmt, rc);
    free(buf);
    return NULL;
  }
  return buf;
}

int main(int argc, char **argv) {
  const char *image = NULL;
  char def_img[1024];
  int out_w = 480, out_h = 360, runs = 200, cpu = 1;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "-i")) image = argv[i + 1];
    else if (!strcmp(argv[i], "-o")) sscanf(argv[i + 1], "%dx%d", &out_w, &out_h);
    else if (!strcmp(argv[i], "-n")) runs = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "-c")) cpu = atoi(argv[i + 1]);
    else { fprintf(stderr, "usage: %s [-i image] [-o WxH] [-n runs] [-c cpu]\n", argv[0]); return 2; }
  }
  if (!image) {
    const char *d = getenv("HR_DATA_DIR");
    snprintf(def_img, sizeof def_img, "%s/sam2-bedroom/frames/00000.jpg", d && *d ? d : "../shared/data");
    image = def_img;
  }
  if (runs < 1) runs = 1;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (sched_setaffinity(0, sizeof set, &set) != 0) perror("ingest_bench: sched_setaffinity");

  struct { const char *name, *ff; hr_pixfmt fmt; int nplanes; } fmts[] = {
    {"nv12", "nv12", HR_PIX_NV12_VIDEO, 2},
    {"i420", "yuv420p", HR_PIX_I420_VIDEO, 3},
    {"bgra", "bgra", HR_PIX_BGRA, 1},
    {"rgb24", "rgb24", HR_PIX_RGB24, 1},
  };
  float *full = malloc((size_t)IN_W * IN_H * 3 * sizeof(float));
  float *a = malloc((size_t)out_w * out_h * 3 * sizeof(float));
  float *b = malloc((size_t)out_w * out_h * 3 * sizeof(float));
  double *t = malloc((size_t)runs * sizeof(double));
  hr__ingest_plan plan;
  if (!full || !a || !b || !t || hr__ingest_plan_init(&plan, IN_W, IN_H, out_w, out_h) != HR_OK) {
    fprintf(stderr, "ingest_bench: out of memory or bad size\n");
    return 1;
  }
  printf("{\"bench\":\"ingest\",\"in\":\"%dx%d\",\"out\":\"%dx%d\",\"runs\":%d,\"cpu\":%d,\"image\":\"%s\"",
         IN_W, IN_H, out_w, out_h, runs, cpu, image);
  for (size_t k = 0; k < sizeof fmts / sizeof fmts[0]; k++) {
    hr_frame f = {0};
    f.fmt = fmts[k].fmt;
    f.width = IN_W;
    f.height = IN_H;
    const int bpp = hr_pixfmt_bpp(f.fmt);
    size_t bytes = (size_t)IN_W * IN_H * bpp;
    if (fmts[k].nplanes > 1) bytes += (size_t)IN_W * IN_H / 2;
    unsigned char *buf = ffmpeg_frame(image, fmts[k].ff, bytes);
    if (!buf) return 1;
    f.planes[0] = buf;
    f.strides[0] = (ptrdiff_t)IN_W * bpp;
    if (fmts[k].nplanes == 2) {
      f.planes[1] = buf + (size_t)IN_W * IN_H;
      f.strides[1] = IN_W;
    } else if (fmts[k].nplanes == 3) {
      f.planes[1] = buf + (size_t)IN_W * IN_H;
      f.planes[2] = buf + (size_t)IN_W * IN_H * 5 / 4;
      f.strides[1] = f.strides[2] = IN_W / 2;
    }
    /* Warm up, then time each path. */
    hr__ingest_resample_rgbf(&plan, &f, a, (ptrdiff_t)out_w * 3);
    hr__ingest_naive_rgbf(&f, full, out_w, out_h, b);
    for (int r = 0; r < runs; r++) {
      double t0 = now_ms();
      hr__ingest_resample_rgbf(&plan, &f, a, (ptrdiff_t)out_w * 3);
      t[r] = now_ms() - t0;
    }
    double fused = median(t, runs);
    for (int r = 0; r < runs; r++) {
      double t0 = now_ms();
      hr__ingest_naive_rgbf(&f, full, out_w, out_h, b);
      t[r] = now_ms() - t0;
    }
    double naive = median(t, runs);
    for (int r = 0; r < runs; r++) {
      double t0 = now_ms();
      for (int y = 0; y < IN_H; y++) hr__ingest_row_rgbf(&f, y, full + (size_t)y * IN_W * 3);
      t[r] = now_ms() - t0;
    }
    double conv = median(t, runs);
    /* The refiner's pattern: one row at a time into the same small buffer (stays in cache). */
    for (int r = 0; r < runs; r++) {
      double t0 = now_ms();
      for (int y = 0; y < IN_H; y++) hr__ingest_row_rgbf(&f, y, full);
      t[r] = now_ms() - t0;
    }
    double rows = median(t, runs);
    /* The same as three planes (no interleave). */
    for (int r = 0; r < runs; r++) {
      double t0 = now_ms();
      for (int y = 0; y < IN_H; y++) hr__ingest_row_planar(&f, y, full, full + IN_W, full + 2 * IN_W);
      t[r] = now_ms() - t0;
    }
    double rows_planar = median(t, runs);
    double maxd = 0;
    for (size_t i = 0; i < (size_t)out_w * out_h * 3; i++) {
      double d = a[i] > b[i] ? a[i] - b[i] : b[i] - a[i];
      if (d > maxd) maxd = d;
    }
    printf(",\"%s\":{\"fused_ms\":%.3f,\"naive_ms\":%.3f,\"naive_convert_ms\":%.3f,\"ratio\":%.2f,"
           "\"rows_ms\":%.3f,\"rows_planar_ms\":%.3f,\"read_bytes\":%zu,\"written_bytes\":%zu,\"max_abs\":%.3g}",
           fmts[k].name, fused, naive, conv, naive / fused, rows, rows_planar, plan.last.read_bytes,
           plan.last.written_bytes, maxd);
    free(buf);
  }
  printf("}\n");
  hr__ingest_plan_free(&plan);
  free(full); free(a); free(b); free(t);
  return 0;
}
