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
#include "testframe.h"

static int cmpd(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return x < y ? -1 : x > y; }


int cmd_bench(int argc, char **argv) {
  for (int i = 1; i < argc; i++)
    if (!strcmp(argv[i], "--ingest")) {
      fprintf(stderr, "headroom bench: the ingest path alone is timed by its own program: ingest_bench --format FMT (build folder)\n");
      return 2;
    }
  const char *model = NULL, *format = "rgbf32"; int w = 0, h = 0, frames = 20, threads = 0, json = 0, warm = 3, show_ops = 0;
  int alpha_u8 = 0, reg = 0;
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
    else if (!strcmp(a, "--alpha-u8")) alpha_u8 = 1;   /* the 8-bit matte (hr_session_params.alpha_u8) */
    else if (!strcmp(a, "--register")) reg = 1;        /* the frame's memory registered (hr_session_register_memory) */
    else if (!strcmp(a, "--ops")) show_ops = 30;
    else if (!strcmp(a, "--ops-all")) show_ops = 1 << 30;
    else { fprintf(stderr, "headroom bench: unknown option '%s'\n", a); return 2; }
  }
  if (!model) { fprintf(stderr, "headroom bench: --model is required\n"); return 2; }
  if (frames < 1) frames = 1;
  hr_model *m = cli_load_model(model);
  if (!m) return 1;
  hr_session_params p; hr_session_params_default(&p);
  hr_model_info mi; hr_model_get_info(m, &mi);
  p.width = w ? w : mi.fixed_width; p.height = h ? h : mi.fixed_height;
  p.downsample_ratio = ratio; p.threads = threads; p.threads_fixed = threads > 0; p.backend = be;
  p.alpha_u8 = alpha_u8;
  hr_session *s = NULL;
  char cerr[512];
  hr_status cst = hr_session_create_err(m, &p, &s, cerr, sizeof cerr);
  if (cst) { fprintf(stderr, "headroom bench: cannot create session: %s (%s)\n", cerr, hr_status_name(cst)); hr_model_destroy(m); return 1; }
  hr_plan_info pi; hr_session_get_plan(s, &pi);
  const int sthreads = pi.threads;
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
    for (size_t i = 0; i < (size_t)W * H * 3; i++) rgb[i] = hr_cli_clamp_u8(img[i] * 255.f);
    fbuf = hr_cli_make_frame(rgb, W, H, &g);
    free(rgb);
    if (!fbuf) { fprintf(stderr, "headroom bench: out of memory\n"); free(img); hr_session_destroy(s); hr_model_destroy(m); return 1; }
    f = g;
  }
  if (reg) { /* the frame's planes, first byte to last, as a camera pool the application registers */
    const char *lo = f.planes[0], *hi = lo;
    for (int k = 0; k < 3 && f.planes[k]; k++) {
      const int rows = k && (f.fmt == HR_PIX_NV12_FULL || f.fmt == HR_PIX_I420_FULL) ? (H + 1) / 2 : H;
      const char *a = f.planes[k], *e = a + (size_t)f.strides[k] * rows;
      if (a < lo) lo = a;
      if (e > hi) hi = e;
    }
    hr_status rs = hr_session_register_memory(s, lo, (size_t)(hi - lo));
    if (rs) fprintf(stderr, "headroom bench: --register: %s (%s); frames are copied\n", hr_session_last_error(s), hr_status_name(rs));
  }
  hr_outputs out;
  for (int i = 0; i < warm; i++) hr_session_push(s, &f, &out);
  double *t = malloc(sizeof(double) * (size_t)frames);
  hr_session_set_profiling(s, true);
  int nops = pi.n_ops;
  double *op_acc = calloc((size_t)nops + 1, sizeof(double));
  hr_session_set_profiling(s, false);
  int alone = 0;   /* frames the session ran on the calling thread alone (threads_fixed false) */
  for (int i = 0; i < frames; i++) {
    double t0 = cli_now_ms();
    hr_session_push(s, &f, &out);
    t[i] = cli_now_ms() - t0;
    alone += out.threads == 1 && sthreads > 1;
  }
  /* one more pass with per-op timing, to say where the time goes: each op's median over up to 15
   * frames (the mean of 5 moved the non-convolution share by 3-4 points from run to run on a noisy
   * 2-vCPU VM, one slow frame carrying a class) */
  hr_session_set_profiling(s, true);
  const int prof_frames = frames < 15 ? frames : 15;
  double *op_t = malloc(sizeof(double) * (size_t)(nops + 1) * (size_t)prof_frames);
  for (int i = 0; i < prof_frames && op_t; i++) {
    hr_session_push(s, &f, &out);
    for (int k = 0; k < nops; k++) {
      double us = 0;
      hr_session_op_profile(s, k, NULL, NULL, &us, NULL);
      op_t[(size_t)k * (size_t)prof_frames + (size_t)i] = us;
    }
  }
  for (int k = 0; k < nops && op_t; k++) {   /* op_acc: the median, times prof_frames (as the sums were) */
    double *v = op_t + (size_t)k * (size_t)prof_frames;
    qsort(v, (size_t)prof_frames, sizeof(double), cmpd);
    op_acc[k] = (prof_frames & 1 ? v[prof_frames / 2] : 0.5 * (v[prof_frames / 2 - 1] + v[prof_frames / 2])) * prof_frames;
  }
  free(op_t);
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
           "\"frames_alone\":%d,\"alpha_u8\":%d,\"registered\":%d,\"bytes_copied\":%lld,\"median_ms\":%.3f,\"p99_ms\":%.3f,\"fps\":%.2f,\"peak_rss_mb\":%.1f,\"plan_total_mb\":%.1f,\"gflop\":%.3f,\"gflops\":%.2f,\"classes\":{",
           mi.name, W, H, pi.downsample_ratio, pi.proc_width, pi.proc_height, sthreads, frames, alone, alpha_u8, reg,
           (long long)out.bytes_copied, med, p99, 1e3 / med,
           ru.ru_maxrss / 1024.0, pi.total_bytes / 1e6, pi.gflop, gflops);
    for (int c = 0, first = 1; c < NC; c++) {
      if (cus[c] <= 0) continue;
      printf("%s\"%s\":{\"ms\":%.3f,\"gflop\":%.4f,\"gflops\":%.2f}", first ? "" : ",", classes[c], cus[c] / 1e3, cfl[c] / 1e3,
             cus[c] > 0 ? (cfl[c] / 1e3) / (cus[c] / 1e6) : 0);
      first = 0;
    }
    printf("}}\n");
  } else {
    printf("%s %dx%d %s ratio %g (processing %dx%d), %d threads%s, %d frames", mi.name, W, H, format, pi.downsample_ratio, pi.proc_width,
           pi.proc_height, sthreads, p.threads_fixed || sthreads < 2 ? "" : " (or 1 when faster)", frames);
    if (alone) printf(", %d of them on 1 thread (the pool measured slower)", alone);
    if (alpha_u8) printf(", 8-bit matte");
    if (reg) printf(", frame in registered memory (%lld bytes copied a frame)", (long long)out.bytes_copied);
    printf("\n");
    printf("median %.2f ms  p99 %.2f ms  %.1f fps  peak RSS %.1f MB (plan %.1f MB)\n", med, p99, 1e3 / med, ru.ru_maxrss / 1024.0,
           pi.total_bytes / 1e6);
    printf("%.2f GFLOP/frame, %.1f GFLOP/s\n", pi.gflop, gflops);
    printf("%-12s %9s %9s %9s\n", "class", "ms", "GFLOP", "GFLOP/s");
    for (int c = 0; c < NC; c++)
      if (cus[c] > 0) printf("%-12s %9.2f %9.3f %9.1f\n", classes[c], cus[c] / 1e3, cfl[c] / 1e3, (cfl[c] / 1e3) / (cus[c] / 1e6));
  }
  if (show_ops) { /* the most expensive ops (30, or all with --ops-all) */
    for (int r = 0; r < show_ops; r++) {
      int best = -1;
      for (int k = 0; k < nops; k++) if (op_acc[k] >= 0 && (best < 0 || op_acc[k] > op_acc[best])) best = k;
      if (best < 0) break;
      const char *on, *kc; double us, mf;
      hr_session_op_profile(s, best, &on, &kc, &us, &mf);
      printf("op %4d %-28s %-11s %8.3f ms %8.1f MFLOP %7.1f GFLOP/s  %s\n", best, on, kc, op_acc[best] / prof_frames / 1e3, mf,
             mf / (op_acc[best] / prof_frames) * 1e3, hr_session_op_detail(s, best)); /* MFLOP per us = TFLOP/s */
      op_acc[best] = -1;
    }
  }
  hr_session_destroy(s);   /* before the frame's memory: a device may have imported it (--register) */
  free(t); free(op_acc); free(img); free(fbuf);
  hr_model_destroy(m);
  return 0;
}
