/* The tail's coefficient lag offline (issue 15, tail-every-frame): on a raw NV12 clip the network
 * runs on every frame (state carried, the split API the stream's tail mode uses); for each lag k,
 * frame t's guidance gets frame t-k's coefficients (A, b), as they come (plain) and warped by the
 * motion from frame t-k to frame t (src/stream/motion.h), and the matte is compared with frame t's
 * own (its own coefficients): the share of pixels off by > 0.1 (both quantised to 8 bits, as
 * bench/live_quality.c counts: |d| > 25 of 255) and mean |d|. Also the motion's cost per frame (the
 * current frame's luma, the estimate and the warp; median, one thread, the thread's CPU time: on a
 * loaded machine wall time counts other processes' turns).
 *
 *   tail_lag MODEL CLIP.nv12 WxH [--ratio 0.25] [--frames N] [--lags 1,2,4,6,8] [--threads 2]
 *     [--skip 8 (frames before the first one measured: the state warms up)] [--label NAME]
 *     [--cache FILE (every frame's coefficients: read when the file exists, else written)]
 *
 * Internals (hr__split_*, hr__fgf_*, hr__motion_*): a developer bench, built like ingest_bench.
 *
 * 2026-12-06, sam2-bedroom at 1920x1440, ratio 0.171 (326x244 coefficients), lags 1/2/3/4/6: plain
 * 3.52/5.23/6.39/7.27/8.55% off, warped 2.08/2.68/3.10/3.43/3.88%. Two variants tried and not kept:
 * the older frame's low-resolution alpha warped and A, b fitted again against the current frame's
 * image (the model's 3x3 box; exact at lag 0): 2.22/2.83/3.27/3.60/4.05%, worse; motion cells of 2
 * grid pixels instead of 4 (CS in motion.c): 2.07% at lag 1, 3.08% at lag 3, for 1.5x the motion's
 * time. What is left at lag 1 lies along the whole silhouette of a fast-moving child.
 * 2026-12-07: of the warped matte's pixels off, the share where it is the higher one ("over"): 52% at
 * lag 1, 48% at lag 3 (bedroom, r0.171): not the trailing edge's uncovered background alone (backward
 * warping's occlusion would give mostly "over"). The warp resampled with Catmull-Rom instead of
 * bilinear: 2.10 / 3.13% at lags 1 / 3 against 2.08 / 3.12, not kept. */
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "headroom.h"
#include "session/kernels.h"
#include "session/session_impl.h"
#include "stream/motion.h"

#define MAXLAG 16

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}
/* this thread's CPU time: the motion's cost without the time other processes take the core away */
static double cpu_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}
static uint8_t q8(float a) { return (uint8_t)(a <= 0.f ? 0 : a >= 1.f ? 255 : a * 255.f + 0.5f); }
static int cmpd(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return (x > y) - (x < y); }

typedef struct acc { long long off, over, px; double sad; } acc;
static void compare(const float *a, const uint8_t *ref, size_t n, acc *s) {
  long long o = 0, ov = 0;
  double d = 0;
  for (size_t i = 0; i < n; i++) { int e = (int)q8(a[i]) - (int)ref[i]; d += abs(e); o += abs(e) > 25; ov += e > 25; }
  s->off += o; s->over += ov; s->px += (long long)n; s->sad += d;
}

int main(int argc, char **argv) {
  if (argc < 4) { fprintf(stderr, "usage: tail_lag MODEL CLIP.nv12 WxH [options]\n"); return 2; }
  int W = 0, H = 0, frames = 0, threads = 2, skip = 8, lags[MAXLAG], nl = 0;
  double ratio = 0.25;
  const char *lagstr = "1,2,4,6,8", *label = "", *cache = NULL;
  if (sscanf(argv[3], "%dx%d", &W, &H) != 2 || W <= 0 || H <= 0) { fprintf(stderr, "tail_lag: bad size '%s'\n", argv[3]); return 2; }
  for (int i = 4; i + 1 < argc; i += 2) {
    const char *a = argv[i], *v = argv[i + 1];
    if (!strcmp(a, "--ratio")) ratio = atof(v);
    else if (!strcmp(a, "--frames")) frames = atoi(v);
    else if (!strcmp(a, "--lags")) lagstr = v;
    else if (!strcmp(a, "--threads")) threads = atoi(v);
    else if (!strcmp(a, "--skip")) skip = atoi(v);
    else if (!strcmp(a, "--label")) label = v;
    else if (!strcmp(a, "--cache")) cache = v;
    else { fprintf(stderr, "tail_lag: unknown option %s\n", a); return 2; }
  }
  char lb[128];
  snprintf(lb, sizeof lb, "%s", lagstr);
  int maxlag = 0;
  for (char *t = strtok(lb, ","); t && nl < MAXLAG; t = strtok(NULL, ",")) {
    lags[nl] = atoi(t);
    if (lags[nl] < 1 || lags[nl] >= MAXLAG) { fprintf(stderr, "tail_lag: lag %s out of 1..%d\n", t, MAXLAG - 1); return 2; }
    if (lags[nl] > maxlag) maxlag = lags[nl];
    nl++;
  }
  int fd = open(argv[2], O_RDONLY);
  struct stat sb;
  if (fd < 0 || fstat(fd, &sb)) { perror(argv[2]); return 1; }
  const size_t fbytes = (size_t)W * H * 3 / 2, px = (size_t)W * H;
  int n = (int)(sb.st_size / (off_t)fbytes);
  if (frames > 0 && frames < n) n = frames;
  if (n <= skip + maxlag) { fprintf(stderr, "tail_lag: %d frames are too few\n", n); return 1; }
  const uint8_t *clip = mmap(NULL, (size_t)n * fbytes, PROT_READ, MAP_PRIVATE, fd, 0);
  if (clip == MAP_FAILED) { perror("mmap"); return 1; }
  char err[512];
  hr_model *mo = NULL;
  if (hr_model_load(argv[1], &mo, err, sizeof err)) { fprintf(stderr, "tail_lag: %s\n", err); return 1; }
  hr_session_params sp;
  hr_session_params_default(&sp);
  sp.width = W; sp.height = H; sp.downsample_ratio = (float)ratio; sp.threads = threads;
  hr_session *s = NULL;
  if (hr_session_create_err(mo, &sp, &s, err, sizeof err)) { fprintf(stderr, "tail_lag: %s\n", err); return 1; }
  hr__split_info si;
  if (!hr__split_query(s, &si)) { fprintf(stderr, "tail_lag: this plan cannot run split\n"); return 1; }
  const size_t lr = (size_t)si.lr_h * si.lr_w;
  hr__fgf g;
  hr__motion mm;
  if (hr__fgf_init(&g, si.lr_h, si.lr_w, H, W, 1, 0) || hr__motion_init(&mm, si.lr_h, si.lr_w, H, W)) { fprintf(stderr, "tail_lag: init\n"); return 1; }
  g.alpha_only_coef = 1;
  const int ring = maxlag + 1;
  float *coef = malloc(sizeof(float) * lr * 2 * ring), *warped = malloc(sizeof(float) * lr * 2), *alpha = malloc(sizeof(float) * px);
  uint8_t *lum = malloc(lr * ring), *own = malloc(px);
  double *cost = malloc(sizeof(double) * (size_t)n * nl), *motion = calloc((size_t)nl, sizeof(double));
  acc plain[MAXLAG], warp[MAXLAG];
  memset(plain, 0, sizeof plain); memset(warp, 0, sizeof warp);
  if (!coef || !warped || !alpha || !lum || !own || !cost || !motion) { fprintf(stderr, "tail_lag: out of memory\n"); return 1; }
  FILE *cf = cache ? fopen(cache, "rb") : NULL;
  const int cread = cf != NULL;
  if (cache && !cf && !(cf = fopen(cache, "wb"))) { perror(cache); return 1; }
  int nc = 0, counted[MAXLAG] = {0};
  double tnet = 0;
  for (int t = 0; t < n; t++) {
    const uint8_t *y = clip + (size_t)t * fbytes;
    hr_frame f = {.fmt = HR_PIX_NV12_VIDEO, .width = W, .height = H, .planes = {y, y + px}, .strides = {W, W}, .ts_ns = t * 16666667LL};
    float *A = coef + (size_t)(t % ring) * lr * 2;
    double t0 = now_ms();
    if (cread) {
      if (fread(A, sizeof(float), lr * 2, cf) != lr * 2) { fprintf(stderr, "tail_lag: %s: short (frame %d)\n", cache, t); return 1; }
    } else {
      if (hr__split_run_src(s, &si, &f, 0) || hr__split_run_net(s, &si, A, A + lr)) { fprintf(stderr, "tail_lag: frame %d: %s\n", t, hr_session_last_error(s)); return 1; }
      if (cf && fwrite(A, sizeof(float), lr * 2, cf) != lr * 2) { perror(cache); return 1; }
    }
    tnet += now_ms() - t0;
    unsigned csr = hr__ftz_begin();
    hr__fgf_run(&g, &f, A, A + lr, alpha, NULL, si.clip, NULL);
    for (size_t i = 0; i < px; i++) own[i] = q8(alpha[i]);
    uint8_t *lt = lum + (size_t)(t % ring) * lr;
    double tl = cpu_ms();
    hr__motion_luma(&mm, &f, lt);
    tl = cpu_ms() - tl;
    if (t >= skip + maxlag)
      for (int k = 0; k < nl; k++) {
        const int o = t - lags[k];
        const float *Ao = coef + (size_t)(o % ring) * lr * 2;
        hr__fgf_run(&g, &f, Ao, Ao + lr, alpha, NULL, si.clip, NULL);
        compare(alpha, own, px, &plain[k]);
        double t1 = cpu_ms();
        motion[k] += hr__motion_estimate(&mm, lum + (size_t)(o % ring) * lr, lt);
        const float *srcp[2] = {Ao, Ao + lr};
        float *dstp[2] = {warped, warped + lr};
        hr__motion_warp(&mm, srcp, dstp, 2);
        cost[nc++] = cpu_ms() - t1 + tl;
        hr__fgf_run(&g, &f, warped, warped + lr, alpha, NULL, si.clip, NULL);
        compare(alpha, own, px, &warp[k]);
        counted[k]++;
      }
    hr__ftz_end(csr);
  }
  if (cf) fclose(cf);
  qsort(cost, (size_t)nc, sizeof *cost, cmpd);
  printf("%s%sclip %dx%d, processing ratio %.3f, coefficients %dx%d, %d frames (measured from frame %d), network %.0f ms a frame (%d threads)\n",
         label, *label ? ": " : "", W, H, ratio, si.lr_w, si.lr_h, n, skip + maxlag, tnet / n, threads);
  printf("%s%smotion per frame (luma + estimate + warp, 1 thread, its CPU time): median %.2f ms, p90 %.2f ms, max %.2f ms\n", label, *label ? ": " : "",
         cost[nc / 2], cost[(int)(nc * 0.9)], cost[nc - 1]);
  for (int k = 0; k < nl; k++) {
    const acc *p = &plain[k], *w = &warp[k];
    double po = 100.0 * p->off / p->px, wo = 100.0 * w->off / w->px;
    printf("%s%slag %2d: plain off>0.1 %6.2f%% mean|d| %.4f | warped off>0.1 %6.2f%% (%.0f%% of them over) mean|d| %.4f | change %+.0f%% (mean motion %.2f lr px, %d frames)\n",
           label, *label ? ": " : "", lags[k], po, p->sad / p->px / 255, wo, w->off ? 100.0 * w->over / w->off : 0.0, w->sad / w->px / 255, po > 0 ? 100 * (wo - po) / po : 0.0,
           motion[k] / counted[k], counted[k]);
  }
  free(coef); free(warped); free(alpha); free(lum); free(own); free(cost); free(motion);
  hr__fgf_free(&g);
  hr__motion_free(&mm);
  hr_session_destroy(s);
  hr_model_destroy(mo);
  munmap((void *)clip, (size_t)n * fbytes);
  close(fd);
  return 0;
}
