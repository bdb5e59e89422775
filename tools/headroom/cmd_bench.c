/* `headroom bench`: median / p99 frame time, peak RSS, GFLOP/s, and where the time goes per op class;
 * with --ingest, the ingest path alone (fused vs naive, one core, from a real frame). */
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include "cli.h"
#include "headroom/io.h"
#include "ingest/ingest.h"

static int cmpd(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return x < y ? -1 : x > y; }

static int bench_ingest(int argc, char **argv);
static unsigned char *make_frame(const unsigned char *rgb, int w, int h, hr_frame *f);
static unsigned char clamp_u8(float v);

int cmd_bench(int argc, char **argv) {
  for (int i = 1; i < argc; i++) if (!strcmp(argv[i], "--ingest")) return bench_ingest(argc, argv);
  const char *model = NULL, *format = "rgbf32"; int w = 0, h = 0, frames = 20, threads = 0, json = 0, warm = 3, show_ops = 0;
  float ratio = 0;
  hr_backend be = HR_BACKEND_XNNPACK;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--model") && v) { model = v; i++; }
    else if (!strcmp(a, "--size") && v) { if (!cli_parse_size(v, &w, &h)) { fprintf(stderr, "headroom bench: --size wants WxH\n"); return 2; } i++; }
    else if (!strcmp(a, "--ratio") && v) { ratio = !strcmp(v, "auto") ? 0 : (float)atof(v); i++; }
    else if (!strcmp(a, "--frames") && v) { frames = atoi(v); i++; }
    else if (!strcmp(a, "--warmup") && v) { warm = atoi(v); i++; }
    else if (!strcmp(a, "--threads") && v) { threads = atoi(v); i++; }
    else if (!strcmp(a, "--backend") && v) { be = !strcmp(v, "reference") ? HR_BACKEND_REFERENCE : !strcmp(v, "vulkan") ? HR_BACKEND_VULKAN : HR_BACKEND_XNNPACK; i++; }
    else if (!strcmp(a, "--format") && v) { format = v; i++; }
    else if (!strcmp(a, "--json")) json = 1;
    else if (!strcmp(a, "--ops")) show_ops = 1;
    else { fprintf(stderr, "headroom bench: unknown option '%s'\n", a); return 2; }
  }
  if (!model) { fprintf(stderr, "headroom bench: --model is required\n"); return 2; }
  if (frames < 1) frames = 1;
  hr_model *m = cli_load_model(model);
  if (!m) return 1;
  hr_session_params p; hr_session_params_default(&p);
  hr_model_info mi; hr_model_get_info(m, &mi);
  p.width = w ? w : mi.fixed_width; p.height = h ? h : mi.fixed_height;
  p.downsample_ratio = ratio; p.threads = threads; p.backend = be;
  hr_session *s = NULL;
  if (hr_session_create(m, &p, &s)) { hr_model_destroy(m); return 1; }
  hr_plan_info pi; hr_session_get_plan(s, &pi);
  /* a synthetic but image-like input: smooth gradients with a bright blob (content does not change cost) */
  int W = pi.width, H = pi.height;
  float *img = malloc(sizeof(float) * (size_t)W * H * 3);
  for (int y = 0; y < H; y++) for (int x = 0; x < W; x++) {
    float dx = (x - W * 0.5f) / W, dy = (y - H * 0.45f) / H;
    float b = expf(-(dx * dx + dy * dy) * 12.f);
    float *px = img + ((size_t)y * W + x) * 3;
    px[0] = 0.2f + 0.7f * b; px[1] = 0.3f + 0.5f * b * (float)x / W; px[2] = 0.25f + 0.3f * (float)y / H;
  }
  hr_frame f = {.fmt = HR_PIX_RGBF32, .width = W, .height = H, .planes = {img}, .strides = {(ptrdiff_t)W * 12}};
  /* --format: the same picture in a camera format, read in place as the live loop does */
  unsigned char *fbuf = NULL;
  if (strcmp(format, "rgbf32")) {
    hr_frame g = {.fmt = !strcmp(format, "nv12") ? HR_PIX_NV12_FULL : !strcmp(format, "i420") ? HR_PIX_I420_FULL
                         : !strcmp(format, "bgra") ? HR_PIX_BGRA : !strcmp(format, "rgb24") ? HR_PIX_RGB24 : HR_PIX_NONE};
    unsigned char *rgb = g.fmt && !((g.fmt == HR_PIX_NV12_FULL || g.fmt == HR_PIX_I420_FULL) && ((W | H) & 1)) ? malloc((size_t)W * H * 3) : NULL;
    if (!rgb) {
      fprintf(stderr, "headroom bench: --format wants rgbf32, nv12, i420, bgra or rgb24 (even sizes for nv12/i420), not '%s' at %dx%d\n", format, W, H);
      free(img); hr_session_destroy(s); hr_model_destroy(m); return 2;
    }
    for (size_t i = 0; i < (size_t)W * H * 3; i++) rgb[i] = clamp_u8(img[i] * 255.f);
    fbuf = make_frame(rgb, W, H, &g);
    free(rgb);
    if (!fbuf) { fprintf(stderr, "headroom bench: out of memory\n"); free(img); hr_session_destroy(s); hr_model_destroy(m); return 1; }
    f = g;
  }
  hr_outputs out;
  for (int i = 0; i < warm; i++) hr_session_push(s, &f, &out);
  double *t = malloc(sizeof(double) * (size_t)frames);
  hr_session_set_profiling(s, true);
  int nops = pi.n_ops;
  double *op_acc = calloc((size_t)nops + 1, sizeof(double));
  hr_session_set_profiling(s, false);
  for (int i = 0; i < frames; i++) {
    double t0 = cli_now_ms();
    hr_session_push(s, &f, &out);
    t[i] = cli_now_ms() - t0;
  }
  /* one more pass with per-op timing, to say where the time goes */
  hr_session_set_profiling(s, true);
  int prof_frames = frames < 5 ? frames : 5;
  for (int i = 0; i < prof_frames; i++) {
    hr_session_push(s, &f, &out);
    for (int k = 0; k < nops; k++) { double us; if (hr_session_op_profile(s, k, NULL, NULL, &us, NULL)) op_acc[k] += us; }
  }
  qsort(t, (size_t)frames, sizeof(double), cmpd);
  double med = t[frames / 2], p99 = t[(int)ceil(0.99 * frames) - 1];
  struct rusage ru; getrusage(RUSAGE_SELF, &ru);
  const char *classes[] = {"conv1x1", "conv3x3", "depthwise", "deconv", "elementwise", "resize", "copy", "refiner", "other"};
  enum { NC = 9 };
  double cus[NC] = {0}, cfl[NC] = {0};
  for (int k = 0; k < nops; k++) {
    const char *kc; double mf;
    if (!hr_session_op_profile(s, k, NULL, &kc, NULL, &mf)) continue;
    for (int c = 0; c < NC; c++) if (!strcmp(kc, classes[c])) { cus[c] += op_acc[k] / prof_frames; cfl[c] += mf; }
  }
  double gflops = pi.gflop / (med / 1e3);
  if (json) {
    printf("{\"model\":\"%s\",\"width\":%d,\"height\":%d,\"ratio\":%g,\"proc\":\"%dx%d\",\"threads\":%d,\"frames\":%d,"
           "\"median_ms\":%.3f,\"p99_ms\":%.3f,\"fps\":%.2f,\"peak_rss_mb\":%.1f,\"plan_total_mb\":%.1f,\"gflop\":%.3f,\"gflops\":%.2f,\"classes\":{",
           mi.name, W, H, pi.downsample_ratio, pi.proc_width, pi.proc_height, p.threads, frames, med, p99, 1e3 / med,
           ru.ru_maxrss / 1024.0, pi.total_bytes / 1e6, pi.gflop, gflops);
    for (int c = 0, first = 1; c < NC; c++) {
      if (cus[c] <= 0) continue;
      printf("%s\"%s\":{\"ms\":%.3f,\"gflop\":%.4f,\"gflops\":%.2f}", first ? "" : ",", classes[c], cus[c] / 1e3, cfl[c] / 1e3,
             cus[c] > 0 ? (cfl[c] / 1e3) / (cus[c] / 1e6) : 0);
      first = 0;
    }
    printf("}}\n");
  } else {
    printf("%s %dx%d %s ratio %g (processing %dx%d), %d threads, %d frames\n", mi.name, W, H, format, pi.downsample_ratio, pi.proc_width,
           pi.proc_height, p.threads, frames);
    printf("median %.2f ms  p99 %.2f ms  %.1f fps  peak RSS %.1f MB (plan %.1f MB)\n", med, p99, 1e3 / med, ru.ru_maxrss / 1024.0,
           pi.total_bytes / 1e6);
    printf("%.2f GFLOP/frame, %.1f GFLOP/s\n", pi.gflop, gflops);
    printf("%-12s %9s %9s %9s\n", "class", "ms", "GFLOP", "GFLOP/s");
    for (int c = 0; c < NC; c++)
      if (cus[c] > 0) printf("%-12s %9.2f %9.3f %9.1f\n", classes[c], cus[c] / 1e3, cfl[c] / 1e3, (cfl[c] / 1e3) / (cus[c] / 1e6));
  }
  if (show_ops) { /* the 30 most expensive ops */
    for (int r = 0; r < 30; r++) {
      int best = -1;
      for (int k = 0; k < nops; k++) if (op_acc[k] >= 0 && (best < 0 || op_acc[k] > op_acc[best])) best = k;
      if (best < 0) break;
      const char *on, *kc; double us, mf;
      hr_session_op_profile(s, best, &on, &kc, &us, &mf);
      printf("op %4d %-28s %-11s %8.3f ms %8.1f MFLOP %7.1f GFLOP/s  %s\n", best, on, kc, op_acc[best] / prof_frames / 1e3, mf,
             mf / (op_acc[best] / prof_frames), hr__session_op_detail(s, best));
      op_acc[best] = -1;
    }
  }
  free(t); free(op_acc); free(img); free(fbuf);
  hr_session_destroy(s);
  hr_model_destroy(m);
  return 0;
}

/* ---------------- bench --ingest ----------------
 * Times the ingest path alone, pinned to one core, on a frame made from a real image:
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

static unsigned char clamp_u8(float v) { return v <= 0.f ? 0 : v >= 255.f ? 255 : (unsigned char)(v + 0.5f); }

/* Half-pixel bilinear resample of an RGB24 image (any size to any size), into a dense buffer. */
static void upscale_rgb24(const unsigned char *src, int sw, int sh, ptrdiff_t sstride, unsigned char *dst, int dw, int dh) {
  for (int y = 0; y < dh; y++) {
    float fy = ((float)y + 0.5f) * (float)sh / (float)dh - 0.5f;
    if (fy < 0) fy = 0;
    int y0 = (int)fy, y1 = y0 + 1 < sh ? y0 + 1 : sh - 1;
    float wy = fy - (float)y0;
    const unsigned char *r0 = src + (ptrdiff_t)y0 * sstride, *r1 = src + (ptrdiff_t)y1 * sstride;
    unsigned char *o = dst + (size_t)y * dw * 3;
    for (int x = 0; x < dw; x++) {
      float fx = ((float)x + 0.5f) * (float)sw / (float)dw - 0.5f;
      if (fx < 0) fx = 0;
      int x0 = (int)fx, x1 = x0 + 1 < sw ? x0 + 1 : sw - 1;
      float wx = fx - (float)x0;
      for (int c = 0; c < 3; c++) {
        float t = r0[x0 * 3 + c] + (r0[x1 * 3 + c] - r0[x0 * 3 + c]) * wx;
        float b = r1[x0 * 3 + c] + (r1[x1 * 3 + c] - r1[x0 * 3 + c]) * wx;
        o[x * 3 + c] = clamp_u8(t + (b - t) * wy);
      }
    }
  }
}

/* Fill frame f (format already set, size w x h) from a dense RGB24 image; returns the buffer. */
static unsigned char *make_frame(const unsigned char *rgb, int w, int h, hr_frame *f) {
  size_t n = (size_t)w * h;
  unsigned char *buf = NULL;
  f->width = w; f->height = h;
  if (f->fmt == HR_PIX_BGRA) {
    if (!(buf = malloc(n * 4))) return NULL;
    for (size_t i = 0; i < n; i++) { buf[4 * i] = rgb[3 * i + 2]; buf[4 * i + 1] = rgb[3 * i + 1]; buf[4 * i + 2] = rgb[3 * i]; buf[4 * i + 3] = 255; }
    f->planes[0] = buf; f->strides[0] = (ptrdiff_t)w * 4;
  } else if (f->fmt == HR_PIX_RGB24) {
    if (!(buf = malloc(n * 3))) return NULL;
    memcpy(buf, rgb, n * 3);
    f->planes[0] = buf; f->strides[0] = (ptrdiff_t)w * 3;
  } else { /* NV12 / I420, full range BT.601 */
    if (!(buf = malloc(n + n / 2))) return NULL;
    unsigned char *Y = buf, *C = buf + n;
    for (size_t i = 0; i < n; i++) Y[i] = clamp_u8(0.299f * rgb[3 * i] + 0.587f * rgb[3 * i + 1] + 0.114f * rgb[3 * i + 2]);
    int cw = w / 2, ch = h / 2;
    for (int y = 0; y < ch; y++)
      for (int x = 0; x < cw; x++) {
        float r = 0, g = 0, b = 0;
        for (int k = 0; k < 4; k++) {
          const unsigned char *p = rgb + ((size_t)(2 * y + k / 2) * w + 2 * x + k % 2) * 3;
          r += p[0]; g += p[1]; b += p[2];
        }
        r *= 0.25f; g *= 0.25f; b *= 0.25f;
        unsigned char cb = clamp_u8(128.f - 0.168736f * r - 0.331264f * g + 0.5f * b);
        unsigned char cr = clamp_u8(128.f + 0.5f * r - 0.418688f * g - 0.081312f * b);
        if (f->fmt == HR_PIX_NV12_FULL) { C[(size_t)y * w + 2 * x] = cb; C[(size_t)y * w + 2 * x + 1] = cr; }
        else { C[(size_t)y * cw + x] = cb; C[n / 4 + (size_t)y * cw + x] = cr; }
      }
    f->planes[0] = Y; f->strides[0] = w;
    if (f->fmt == HR_PIX_NV12_FULL) { f->planes[1] = C; f->strides[1] = w; }
    else { f->planes[1] = C; f->planes[2] = C + n / 4; f->strides[1] = f->strides[2] = cw; }
  }
  return buf;
}

static double median_ms(double *t, int n) {
  qsort(t, (size_t)n, sizeof *t, cmpd);
  return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

static int bench_ingest(int argc, char **argv) {
  const char *fmt_name = NULL, *image = NULL;
  int w = 1920, h = 1440, runs = 200, json = 0, cpu = -1;
  float ratio = 0.25f;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--ingest") && v) { fmt_name = v; i++; }
    else if (!strcmp(a, "--size") && v) { if (!cli_parse_size(v, &w, &h)) { fprintf(stderr, "headroom bench: --size wants WxH\n"); return 2; } i++; }
    else if (!strcmp(a, "--ratio") && v) { ratio = !strcmp(v, "auto") ? 0 : (float)atof(v); i++; }
    else if ((!strcmp(a, "--runs") || !strcmp(a, "--frames")) && v) { runs = atoi(v); i++; }
    else if (!strcmp(a, "--image") && v) { image = v; i++; }
    else if (!strcmp(a, "--cpu") && v) { cpu = atoi(v); i++; }
    else if (!strcmp(a, "--json")) json = 1;
    else if (!strcmp(a, "--help")) {
      fprintf(stderr, "usage: headroom bench --ingest nv12|i420|bgra|rgb24 [--size WxH (1920x1440)] [--ratio R|auto (0.25)]\n"
                      "       [--runs N (200)] [--image FILE (HR_DATA_DIR/sam2-bedroom/frames/00000.jpg)] [--cpu N] [--json]\n");
      return 0;
    }
    else { fprintf(stderr, "headroom bench: unknown option for --ingest: '%s'\n", a); return 2; }
  }
  hr_pixfmt fmt;
  if (!fmt_name) { fprintf(stderr, "headroom bench: --ingest wants a format (nv12, i420, bgra, rgb24)\n"); return 2; }
  if (!strcmp(fmt_name, "nv12")) fmt = HR_PIX_NV12_FULL;
  else if (!strcmp(fmt_name, "i420")) fmt = HR_PIX_I420_FULL;
  else if (!strcmp(fmt_name, "bgra")) fmt = HR_PIX_BGRA;
  else if (!strcmp(fmt_name, "rgb24")) fmt = HR_PIX_RGB24;
  else { fprintf(stderr, "headroom bench: --ingest format '%s' is not nv12, i420, bgra or rgb24\n", fmt_name); return 2; }
  if (ratio < 0 || ratio > 1) { fprintf(stderr, "headroom bench: --ratio must be in (0,1] or auto\n"); return 2; }
  if (ratio == 0) { int side = w > h ? w : h; ratio = side > 512 ? 512.f / (float)side : 1.f; }
  if ((fmt == HR_PIX_NV12_FULL || fmt == HR_PIX_I420_FULL) && ((w | h) & 1)) {
    fprintf(stderr, "headroom bench: %s needs an even size, not %dx%d\n", fmt_name, w, h);
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
  if (sched_setaffinity(0, sizeof set, &set)) { fprintf(stderr, "headroom bench: cannot pin to CPU %d\n", cpu); return 1; }

  /* the real frame */
  char err[1024];
  hr_source *src = NULL;
  hr_status st = hr_source_open(image, NULL, &src, err, sizeof err);
  if (st) { fprintf(stderr, "headroom bench: %s (%s)\n", err, hr_status_name(st)); return 1; }
  hr_frame img;
  st = hr_source_read(src, &img);
  if (st || img.fmt != HR_PIX_RGB24) {
    fprintf(stderr, "headroom bench: %s: %s\n", image, st ? hr_source_last_error(src) : "not decoded to RGB24");
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
  if (!rgb || !full || !a || !b || !row || !t) { fprintf(stderr, "headroom bench: out of memory\n"); goto out; }
  upscale_rgb24(img.planes[0], img.width, img.height, img.strides[0], rgb, w, h);
  int img_w = img.width, img_h = img.height;
  hr_source_destroy(src); src = NULL;
  if (!(buf = make_frame(rgb, w, h, &f))) { fprintf(stderr, "headroom bench: out of memory\n"); goto out; }
  char why[256];
  if (hr_frame_validate(&f, why, sizeof why)) { fprintf(stderr, "headroom bench: %s\n", why); goto out; }
  if ((st = hr__ingest_plan_init(&plan, w, h, pw, ph))) { fprintf(stderr, "headroom bench: ingest plan: %s\n", hr_status_str(st)); goto out; }

  for (int r = 0; r < 5; r++) { hr__ingest_resample_rgbf(&plan, &f, a, (ptrdiff_t)pw * 3); hr__ingest_naive_rgbf(&f, full, pw, ph, b); }
  for (int r = 0; r < runs; r++) {
    double t0 = cli_now_ms();
    hr__ingest_resample_rgbf(&plan, &f, a, (ptrdiff_t)pw * 3);
    t[r] = cli_now_ms() - t0;
  }
  double fused = median_ms(t, runs);
  hr__ingest_stats stats = plan.last;
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
           "\"image\":\"%s\",\"image_size\":\"%dx%d\",\"fused_ms\":%.4f,\"rows_ms\":%s,\"naive_ms\":%.4f,"
           "\"ratio_naive_fused\":%.2f,\"ratio_naive_fused_rows\":%s,\"read_bytes\":%zu,\"written_bytes\":%zu,"
           "\"naive_copied_bytes\":%lld,\"max_abs_fused_naive\":%.3g,\"target_met\":%s,\"loadavg\":[%.2f,%.2f,%.2f]}\n",
           fmt_name, w, h, ratio, pw, ph, runs, cpu, image, img_w, img_h, fused, rows_s, naive, naive / fused, ratio_rows_s,
           stats.read_bytes, stats.written_bytes, (long long)w * h * 12 + (long long)pw * ph * 12, maxd, met ? "true" : "false",
           load[0], load[1], load[2]);
  } else {
    printf("ingest %s %dx%d -> %dx%d (ratio %g), CPU %d, %d runs, frame from %s (%dx%d, bilinear upscale)\n", fmt_name, w, h,
           pw, ph, ratio, cpu, runs, image, img_w, img_h);
    printf("fused  %8.3f ms  (reads %zu bytes of planes, writes %zu bytes of float)\n", fused, stats.read_bytes, stats.written_bytes);
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
