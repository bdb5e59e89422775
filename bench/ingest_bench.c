/* bench/ingest_bench: times the ingest path alone, pinned to one core, on a frame made from a real image:
 *   fused   hr__ingest_resample_rgbf: frame planes -> RVM input at the processing size, colour
 *           conversion fused into TF's half-pixel bilinear resize (what the session runs);
 *   rows    hr__ingest_row_view over every row into one row of scratch: the refiner's full-resolution
 *           guidance, read row by row (what the fused tail adds per frame; 0 work at ratio 1, where
 *           the model reads a materialised input instead);
 *   naive   hr__ingest_naive_rgbf: the whole frame converted to float RGB, then resized (its full
 *           float copy would also serve the guidance, so compare naive with fused + rows too).
 * The frame: the image decoded with hr_source_open (RGB24), upscaled with a half-pixel bilinear
 * filter to WxH, then converted: nv12 / i420 full-range BT.601 (chroma: mean of each 2x2 block),
 * bgra (A = 255), rgb24 as is. Processing size: (int)((float)W * ratio), as RVM's graph computes it
 * (Cast of float shape * ratio). Median of N runs after 5 warm-up runs. */

#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "headroom.h"
#include "headroom/io.h"
#include "ingest/ingest.h"
#include "testframe.h"

static int cmpd(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return x < y ? -1 : x > y; }
static double cli_now_ms(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e3 + t.tv_nsec / 1e6; }

static double median_ms(double *t, int n) {
  qsort(t, (size_t)n, sizeof *t, cmpd);
  return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

int main(int argc, char **argv) {
  const char *fmt_name = NULL, *image = NULL, *clip = NULL;
  int w = 1920, h = 1440, runs = 200, json = 0, cpu = -1;
  float ratio = 0.25f;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--format") && v) { fmt_name = v; i++; }
    else if (!strcmp(a, "--size") && v) { if (sscanf(v, "%dx%d", &w, &h) != 2 || w < 1 || h < 1) { fprintf(stderr, "ingest_bench: --size wants WxH\n"); return 2; } i++; }
    else if (!strcmp(a, "--ratio") && v) { ratio = !strcmp(v, "auto") ? 0 : (float)atof(v); i++; }
    else if ((!strcmp(a, "--runs") || !strcmp(a, "--frames")) && v) { runs = atoi(v); i++; }
    else if (!strcmp(a, "--image") && v) { image = v; i++; }
    else if (!strcmp(a, "--clip") && v) { clip = v; i++; }
    else if (!strcmp(a, "--cpu") && v) { cpu = atoi(v); i++; }
    else if (!strcmp(a, "--json")) json = 1;
    else if (!strcmp(a, "--help")) {
      fprintf(stderr, "usage: ingest_bench --format nv12|i420|bgra|rgb24 [--size WxH (1920x1440)] [--ratio R|auto (0.25)]\n"
                      "       [--runs N (200)] [--image FILE (HR_DATA_DIR/sam2-bedroom/frames/00000.jpg)] [--cpu N] [--json]\n"
                      "       [--clip RAW (the cold line over a raw clip's frames of this size and format)]\n");
      return 0;
    }
    else { fprintf(stderr, "ingest_bench: unknown option: '%s'\n", a); return 2; }
  }
  hr_pixfmt fmt;
  if (!fmt_name) { fprintf(stderr, "ingest_bench: --format wants a format (nv12, i420, bgra, rgb24)\n"); return 2; }
  if (!strcmp(fmt_name, "nv12")) fmt = HR_PIX_NV12_FULL;
  else if (!strcmp(fmt_name, "i420")) fmt = HR_PIX_I420_FULL;
  else if (!strcmp(fmt_name, "bgra")) fmt = HR_PIX_BGRA;
  else if (!strcmp(fmt_name, "rgb24")) fmt = HR_PIX_RGB24;
  else { fprintf(stderr, "ingest_bench: --format format '%s' is not nv12, i420, bgra or rgb24\n", fmt_name); return 2; }
  if (ratio < 0 || ratio > 1) { fprintf(stderr, "ingest_bench: --ratio must be in (0,1] or auto\n"); return 2; }
  if (ratio == 0) { int side = w > h ? w : h; ratio = side > 512 ? 512.f / (float)side : 1.f; }
  if ((fmt == HR_PIX_NV12_FULL || fmt == HR_PIX_I420_FULL) && ((w | h) & 1)) {
    fprintf(stderr, "ingest_bench: %s needs an even size, not %dx%d\n", fmt_name, w, h);
    return 2;
  }
  if (runs < 1) runs = 1;
  int pw = (int)((float)w * ratio), ph = (int)((float)h * ratio);
  if (pw < 1) pw = 1;
  if (ph < 1) ph = 1;
  char def_img[1024];
  if (!image) {
    const char *d = getenv("HR_DATA_DIR");
    snprintf(def_img, sizeof def_img, "%s/sam2-bedroom/frames/00000.jpg", d && *d ? d : "../shared/data");
    image = def_img;
  }
  /* one core: the one given, else the one this thread is on now */
  if (cpu < 0) cpu = sched_getcpu();
  cpu_set_t set; CPU_ZERO(&set); CPU_SET(cpu, &set);
  if (sched_setaffinity(0, sizeof set, &set)) { fprintf(stderr, "ingest_bench: cannot pin to CPU %d\n", cpu); return 1; }

  /* the real frame */
  char err[1024];
  hr_source *src = NULL;
  hr_status st = hr_source_open(image, NULL, &src, err, sizeof err);
  if (st) { fprintf(stderr, "ingest_bench: %s (%s)\n", err, hr_status_name(st)); return 1; }
  hr_frame img;
  st = hr_source_read(src, &img);
  if (st || img.fmt != HR_PIX_RGB24) {
    fprintf(stderr, "ingest_bench: %s: %s\n", image, st ? hr_source_last_error(src) : "not decoded to RGB24");
    hr_source_destroy(src);
    return 1;
  }
  int rc = 1;
  unsigned char *rgb = malloc((size_t)w * h * 3), *buf = NULL;
  float *full = malloc((size_t)w * h * 3 * sizeof(float));
  float *a = malloc((size_t)pw * ph * 3 * sizeof(float)), *b = malloc((size_t)pw * ph * 3 * sizeof(float));
  float *row = malloc((size_t)w * 3 * sizeof(float));
  double *t = malloc((size_t)runs * sizeof(double));
  hr__ingest_plan plan; memset(&plan, 0, sizeof plan);
  hr_frame f; memset(&f, 0, sizeof f); f.fmt = fmt;
  if (!rgb || !full || !a || !b || !row || !t) { fprintf(stderr, "ingest_bench: out of memory\n"); goto out; }
  hr_cli_upscale_rgb24(img.planes[0], img.width, img.height, img.strides[0], rgb, w, h);
  int img_w = img.width, img_h = img.height;
  hr_source_destroy(src); src = NULL;
  if (!(buf = hr_cli_make_frame(rgb, w, h, &f))) { fprintf(stderr, "ingest_bench: out of memory\n"); goto out; }
  char why[256];
  if (hr_frame_validate(&f, why, sizeof why)) { fprintf(stderr, "ingest_bench: %s\n", why); goto out; }
  if ((st = hr__ingest_plan_init(&plan, w, h, pw, ph))) { fprintf(stderr, "ingest_bench: ingest plan: %s\n", hr_status_str(st)); goto out; }

  for (int r = 0; r < 5; r++) { hr__ingest_resample_rgbf(&plan, &f, a, (ptrdiff_t)pw * 3); hr__ingest_naive_rgbf(&f, full, pw, ph, b); }
  for (int r = 0; r < runs; r++) {
    double t0 = cli_now_ms();
    hr__ingest_resample_rgbf(&plan, &f, a, (ptrdiff_t)pw * 3);
    t[r] = cli_now_ms() - t0;
  }
  double fused = median_ms(t, runs);
  hr__ingest_stats stats = plan.last;
  /* "cold": the same with the frame out of the caches, on 4 KiB pages, as a camera frame arrives
   * (a driver's or decoder's buffer, written by DMA or by another core): 16 copies in a mapping
   * without huge pages, taken in turn, 64 MiB of other memory written between runs. With --clip,
   * the frames of a raw clip of this size and format mapped from the page cache instead, as
   * bench/live_quality.c replays one: on this project's 2-vCPU VM, 1920x1440 NV12 -> 288x216,
   * 0.25 ms warm, 0.38 ms cold, 0.34 ms over 16 frames of the clip, 1.6-1.8 ms over its 200
   * (830 MB): the page walks of a VM over the page cache's scattered pages, not the caches (a
   * prefetch of the rows two to sixteen output rows ahead did not help). */
  double cold = -1;
  const size_t fb = (size_t)w * h * (fmt == HR_PIX_BGRA ? 4 : fmt == HR_PIX_RGB24 ? 3 : 1) +
                    (fmt == HR_PIX_NV12_FULL || fmt == HR_PIX_I420_FULL ? (size_t)w * h / 2 : 0);
  const size_t evict_n = (size_t)64 << 20;
  size_t nc = 16;
  unsigned char *evict = malloc(evict_n), *copies = MAP_FAILED;
  if (clip) {
    int fd = open(clip, O_RDONLY);
    struct stat sb;
    if (fd < 0 || fstat(fd, &sb) || (size_t)sb.st_size < fb) {
      fprintf(stderr, "ingest_bench: %s: not a raw clip of %dx%d %s frames\n", clip, w, h, fmt_name);
      if (fd >= 0) close(fd);
      free(evict);
      goto out;
    }
    nc = (size_t)sb.st_size / fb;
    copies = mmap(NULL, nc * fb, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
    close(fd);
  } else {
    copies = mmap(NULL, nc * fb, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (copies != MAP_FAILED) {
      madvise(copies, nc * fb, MADV_NOHUGEPAGE);
      for (size_t c = 0; c < nc; c++) memcpy(copies + c * fb, buf, fb);   /* buf holds the planes back to back */
    }
  }
  if (evict && copies != MAP_FAILED) {
    const int cr = runs < 50 ? runs : 50;
    for (int r = 0; r < cr; r++) {
      hr_frame g = f;
      for (int p = 0; p < 3; p++)
        if (f.planes[p]) g.planes[p] = copies + (r % nc) * fb + ((const unsigned char *)f.planes[p] - buf);
      memset(evict, r, evict_n);
      double t0 = cli_now_ms();
      hr__ingest_resample_rgbf(&plan, &g, a, (ptrdiff_t)pw * 3);
      t[r] = cli_now_ms() - t0;
    }
    cold = median_ms(t, cr);
  }
  free(evict);
  if (copies != MAP_FAILED) munmap(copies, nc * fb);
  /* the refiner's guidance: every full-resolution row, one at a time into the same scratch row */
  volatile float sink = 0;
  int refiner = pw != w || ph != h; /* at the frame's own size the model reads the float input: no refiner */
  for (int r = 0; r < (refiner ? runs : 0); r++) {
    double t0 = cli_now_ms();
    for (int y = 0; y < h; y++) sink += hr__ingest_row_view(&f, y, row)[0];
    t[r] = cli_now_ms() - t0;
  }
  double rows = refiner ? median_ms(t, runs) : 0;
  for (int r = 0; r < runs; r++) {
    double t0 = cli_now_ms();
    hr__ingest_naive_rgbf(&f, full, pw, ph, b);
    t[r] = cli_now_ms() - t0;
  }
  double naive = median_ms(t, runs);
  (void)sink;
  double maxd = 0;
  for (size_t i = 0; i < (size_t)pw * ph * 3; i++) { double d = fabs((double)a[i] - b[i]); if (d > maxd) maxd = d; }
  double load[3] = {0};
  FILE *lf = fopen("/proc/loadavg", "r");
  if (lf) { if (fscanf(lf, "%lf %lf %lf", &load[0], &load[1], &load[2]) != 3) load[0] = load[1] = load[2] = -1; fclose(lf); }
  int met = fused <= 1.0 && naive >= 3 * fused;
  char rows_s[32] = "null", ratio_rows_s[32] = "null";
  if (refiner) { snprintf(rows_s, sizeof rows_s, "%.4f", rows); snprintf(ratio_rows_s, sizeof ratio_rows_s, "%.2f", naive / (fused + rows)); }
  if (json) {
    printf("{\"bench\":\"ingest\",\"format\":\"%s\",\"frame\":\"%dx%d\",\"ratio\":%g,\"proc\":\"%dx%d\",\"runs\":%d,\"cpu\":%d,"
           "\"image\":\"%s\",\"image_size\":\"%dx%d\",\"fused_ms\":%.4f,\"cold_ms\":%.4f,\"rows_ms\":%s,\"naive_ms\":%.4f,"
           "\"ratio_naive_fused\":%.2f,\"ratio_naive_fused_rows\":%s,\"read_bytes\":%zu,\"written_bytes\":%zu,"
           "\"naive_copied_bytes\":%lld,\"max_abs_fused_naive\":%.3g,\"target_met\":%s,\"loadavg\":[%.2f,%.2f,%.2f]}\n",
           fmt_name, w, h, ratio, pw, ph, runs, cpu, image, img_w, img_h, fused, cold, rows_s, naive, naive / fused, ratio_rows_s,
           stats.read_bytes, stats.written_bytes, (long long)w * h * 12 + (long long)pw * ph * 12, maxd, met ? "true" : "false",
           load[0], load[1], load[2]);
  } else {
    printf("ingest %s %dx%d -> %dx%d (ratio %g), CPU %d, %d runs, frame from %s (%dx%d, bilinear upscale)\n", fmt_name, w, h,
           pw, ph, ratio, cpu, runs, image, img_w, img_h);
    printf("fused  %8.3f ms  (reads %zu bytes of planes, writes %zu bytes of float)\n", fused, stats.read_bytes, stats.written_bytes);
    if (cold >= 0) printf("cold   %8.3f ms  (fused, the frame out of the caches, on 4 KiB pages%s)\n", cold, clip ? ", the clip's frames" : "");
    if (refiner) printf("rows   %8.3f ms  (refiner guidance: %d full-resolution rows, one at a time)\n", rows, h);
    else printf("rows        n/a  (ratio 1: no refiner; the model reads the fused output)\n");
    printf("naive  %8.3f ms  (whole-frame float copy %lld bytes, then resize)\n", naive, (long long)w * h * 12);
    printf("ratio  %8.2f x naive/fused", naive / fused);
    if (refiner) printf(", %.2f x naive/(fused+rows)", naive / (fused + rows));
    printf("; max |fused - naive| %.3g\n", maxd);
    printf("target fused <= 1.0 ms and >= 3x faster: %s; load average %.2f %.2f %.2f\n", met ? "met" : "NOT met", load[0], load[1], load[2]);
  }
  rc = 0;
out:
  hr__ingest_plan_free(&plan);
  hr_source_destroy(src);
  free(rgb); free(buf); free(full); free(a); free(b); free(row); free(t);
  return rc;
}
