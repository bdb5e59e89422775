/* Quality of the live loop at a frame budget (issue 15, done-when 1), through the public API only:
 * a raw NV12 clip (mapped, frames read in place like camera buffers) replayed at FPS on the wall
 * clock, newest frame wins: when a push ends, the next one takes the newest frame that has
 * "arrived"; frames that arrived meanwhile are dropped. The clip plays twice: the first pass lets
 * the controller settle (and the state warm up), the second is measured. Each delivered matte is taken as 8
 * bits (what an application shows or uploads: the stream's own, hr_stream_result.alpha_u8 with
 * alpha_u8_only, copied into the clip's store; with --float the float matte quantised here by a plain loop, 2-3 ms at
 * 1920x1440; both counted in the loop's time) and compared,
 * after the run, with the base-quality matte of the same frame: the clip run offline, every frame,
 * at the base ratio, state carried (twice as well; the second pass is kept). Reported over the frames after the controller settled (the
 * last rung change + 2): the share of pixels off by > 0.1, mean |d|, delivered fps, dropped
 * share, capture-to-matte latency p50/p99 (and the share off and the p99 over every frame of the
 * measured pass, changes included: what the viewer saw); in tail mode also the coefficients' age and the network
 * runs' own times (p50/p90 over the runs the measured pass used, and how many ran on one thread).
 *
 *   live_quality MODEL CLIP.nv12 WxH [--fps 60] [--frames N] [--threads T] [--budget-ms 16.7]
 *     [--base-threads T (the offline base mattes; default --threads)] [--cpus N|LIST (after the base
 *     mattes, the live runs on CPUs 0..N-1 only, or on those listed, e.g. 0,8: a small machine on a
 *     large one; list two cores, not one core's hyperthreads)]
 *                [--base-ratio 0.266667] [--modes shrink,tail,tail-nowarp] [--net-budget-ms MS] [--label NAME]
 *     [--ratio R (the live runs at this processing ratio, no adaptation: modes compared at one rung)]
 *     [--float (the stream's float matte, quantised here)]
 *     [--pool N (each frame copied, past the caches, into the next of N buffers before its push, as
 *     a camera's driver writes into a ring of buffers; the copy counts in the latency. Default: the
 *     frames read where they lie in the mapped clip, which a VM makes slow to walk: 2 vCPUs, bedroom
 *     at r0.171, the tail mode's posting push spent 2.2 ms on the source resize and the motion's
 *     luma against 0.7 with --pool 8, the others 4.1 against 2.4 ms; the share of pixels off was
 *     3.15 / 3.17% against 3.11 / 3.15%)]
 * LQ_RUNS=1 (env): every network run's own time in the measured pass, in order (tail mode).
 * Modes: shrink (the network on every frame at the rung that fits the budget), tail
 * (tail_every_frame: the network on a worker at its own rate, the tail on every frame, its older
 * coefficients warped along the motion unless HR_TAIL_WARP=0), tail-nowarp (tail with
 * HR_TAIL_WARP=0: the coefficients as they are; for side-by-side runs). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <sched.h>
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
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* n bytes (a multiple of 64, 64-byte aligned dst) written past the caches, as a device writes a
 * frame: non-temporal stores where SSE2 is there */
static void stream_copy(uint8_t *dst, const uint8_t *src, size_t n) {
#if defined(__SSE2__)
  for (size_t i = 0; i + 64 <= n; i += 64)
    for (int k = 0; k < 4; k++) _mm_stream_si128((__m128i *)(dst + i + 16 * k), _mm_loadu_si128((const __m128i *)(src + i + 16 * k)));
  _mm_sfence();
  if (n % 64) memcpy(dst + n - n % 64, src + n - n % 64, n % 64);
#else
  memcpy(dst, src, n);
#endif
}

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec / 1e9;
}

/* How long this thread has waited for a CPU while runnable, ms (Linux schedstat; -1 elsewhere): what
 * the caller's push lost to other threads (the stream's own, or other processes') */
static double runq_ms(void) {
  FILE *f = fopen("/proc/thread-self/schedstat", "r");
  long long run = 0, wait = -1;
  if (f) { if (fscanf(f, "%lld %lld", &run, &wait) != 2) wait = -1; fclose(f); }
  return wait < 0 ? -1 : wait / 1e6;
}
/* this process's CPU time, s */
static double proc_cpu_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return t.tv_sec + t.tv_nsec / 1e9;
}

static void quantise(const float *a, uint8_t *q, size_t n) {
  for (size_t i = 0; i < n; i++) q[i] = (uint8_t)(a[i] <= 0.f ? 0 : a[i] >= 1.f ? 255 : a[i] * 255.f + 0.5f);
}

static int cmpd(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return (x > y) - (x < y); }
/* The p-quantile of v[0..n), on a sorted copy: the per-frame arrays stay in frame order (sorting
 * them in place, as this did before, left the stall and rung-change lines below printing sorted
 * push times against other frames' numbers). */
static double quant(const double *v, int n, double p) {
  if (n <= 0) return NAN;
  double *c = malloc(sizeof *c * (size_t)n);
  if (!c) return NAN;
  memcpy(c, v, sizeof *c * (size_t)n);
  qsort(c, (size_t)n, sizeof *c, cmpd);
  int k = (int)ceil(p * n) - 1;
  double q = c[k < 0 ? 0 : k >= n ? n - 1 : k];
  free(c);
  return q;
}

int main(int argc, char **argv) {
  if (argc < 4) { fprintf(stderr, "usage: live_quality MODEL CLIP.nv12 WxH [options]\n"); return 2; }
  int W = 0, H = 0, frames = 0, threads = 2, base_threads = 0, cpus = 0, float_matte = 0, pool_n = 0;
  const char *cpu_list = NULL;
  double fps = 60, budget = 1000.0 / 60.0, net_budget = 0, base_ratio = 512.0 / 1920.0, fixed_ratio = 0;
  const char *modes = "shrink,tail", *label = "";
  if (sscanf(argv[3], "%dx%d", &W, &H) != 2 || W <= 0 || H <= 0) { fprintf(stderr, "live_quality: bad size '%s'\n", argv[3]); return 2; }
  for (int i = 4; i < argc; i += 2) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : "";
    if (!strcmp(a, "--fps")) fps = atof(v);
    else if (!strcmp(a, "--frames")) frames = atoi(v);
    else if (!strcmp(a, "--threads")) threads = atoi(v);
    else if (!strcmp(a, "--budget-ms")) budget = atof(v);
    else if (!strcmp(a, "--net-budget-ms")) net_budget = atof(v);
    else if (!strcmp(a, "--base-ratio")) base_ratio = atof(v);
    else if (!strcmp(a, "--modes")) modes = v;
    else if (!strcmp(a, "--base-threads")) base_threads = atoi(v);
    else if (!strcmp(a, "--cpus")) { if (strchr(v, ',')) cpu_list = v; else cpus = atoi(v); }
    else if (!strcmp(a, "--label")) label = v;
    else if (!strcmp(a, "--ratio")) fixed_ratio = atof(v);
    else if (!strcmp(a, "--pool")) pool_n = atoi(v);
    else if (!strcmp(a, "--float")) { float_matte = 1; i--; }
    else { fprintf(stderr, "live_quality: unknown option %s\n", a); return 2; }
  }
  int fd = open(argv[2], O_RDONLY);
  struct stat sb;
  if (fd < 0 || fstat(fd, &sb)) { perror(argv[2]); return 1; }
  size_t fbytes = (size_t)W * H * 3 / 2, px = (size_t)W * H;
  int n = (int)(sb.st_size / (off_t)fbytes);
  if (frames > 0 && frames < n) n = frames;
  if (n < 2) { fprintf(stderr, "live_quality: %s holds fewer than 2 %dx%d NV12 frames\n", argv[2], W, H); return 1; }
  const uint8_t *clip = mmap(NULL, (size_t)n * fbytes, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
  if (clip == MAP_FAILED) { perror("mmap"); return 1; }
  hr_frame *fr = calloc((size_t)n, sizeof *fr);
  for (int i = 0; i < n; i++) {
    const uint8_t *y = clip + (size_t)i * fbytes;
    hr_frame f = {.fmt = HR_PIX_NV12_VIDEO, .width = W, .height = H, .planes = {y, y + px}, .strides = {W, W},
                  .ts_ns = (int64_t)(i * 1e9 / fps)};
    fr[i] = f;
  }
  uint8_t *pool = NULL;
  long long npushed = 0;
  if (pool_n > 0) {   /* the pool's buffers made (and their pages touched) before the clock starts */
    pool = aligned_alloc(64, ((size_t)pool_n * fbytes + 63) & ~(size_t)63);
    if (!pool) { fprintf(stderr, "live_quality: out of memory for a pool of %d frames\n", pool_n); return 1; }
    memset(pool, 0, (size_t)pool_n * fbytes);
  }
  char err[512];
  hr_model *m = NULL;
  if (hr_model_load(argv[1], &m, err, sizeof err)) { fprintf(stderr, "live_quality: %s\n", err); return 1; }
  uint8_t *base = malloc((size_t)n * px), *live = malloc((size_t)n * px);
  double *lat = malloc(sizeof(double) * (size_t)n);
  /* per delivered frame: the push, its stages (record), the matte into the store */
  double *pushms = malloc(sizeof(double) * (size_t)n), *qms = malloc(sizeof(double) * (size_t)n), *inms = malloc(sizeof(double) * (size_t)n),
         *infms = malloc(sizeof(double) * (size_t)n), *postms = malloc(sizeof(double) * (size_t)n),
         *chms = malloc(sizeof(double) * (size_t)n), *rqms = malloc(sizeof(double) * (size_t)n), *netms = malloc(sizeof(double) * (size_t)n);
  int *rung = malloc(sizeof(int) * (size_t)n), *got = malloc(sizeof(int) * (size_t)n), *age = malloc(sizeof(int) * (size_t)n);
  if (!base || !live || !lat || !rung || !got || !pushms || !qms || !inms || !infms || !postms || !chms || !rqms || !netms || !age) { fprintf(stderr, "live_quality: out of memory\n"); return 1; }
  /* touched now: an application quantises into a buffer it reuses, it does not fault in 2.8 MB of fresh pages a
   * frame (on a 2-CPU machine that took ~3 ms a frame from the loop being measured) */
  memset(base, 0xff, (size_t)n * px);   /* not 0: GCC makes malloc + memset(0) a calloc, which touches nothing */
  memset(live, 0xff, (size_t)n * px);
  /* the base-quality mattes */
  hr_session_params sp;
  hr_session_params_default(&sp);
  sp.width = W; sp.height = H; sp.downsample_ratio = (float)base_ratio; sp.threads = threads;
  if (base_threads > 0) sp.threads = base_threads;
  hr_session *s = NULL;
  if (hr_session_create_err(m, &sp, &s, err, sizeof err)) { fprintf(stderr, "live_quality: %s\n", err); return 1; }
  double t0 = now_s();
  for (int i = 0; i < 2 * n; i++) {
    hr_outputs o;
    if (hr_session_push(s, &fr[i % n], &o)) { fprintf(stderr, "live_quality: base frame %d: %s\n", i, hr_session_last_error(s)); return 1; }
    if (i >= n) quantise(o.alpha, base + (size_t)(i - n) * px, px);
  }
  hr_plan_info pi;
  hr_session_get_plan(s, &pi);
  printf("%s%sbase %dx%d (ratio %.4f): %d frames, %.0f ms a frame offline, %d threads\n", label, *label ? ": " : "", pi.proc_width,
         pi.proc_height, base_ratio, n, (now_s() - t0) * 1e3 / (2 * n), sp.threads);
  hr_session_destroy(s);
  sp.threads = threads;
  if (cpus > 0 || cpu_list) {   /* threads made from here on (the stream's) inherit the mask */
    cpu_set_t set;
    CPU_ZERO(&set);
    if (cpu_list) {   /* "0,8": those CPUs (e.g. two cores, not one core's two hyperthreads) */
      for (const char *c = cpu_list; *c;) {
        int k = atoi(c);
        if (k < 0 || k >= CPU_SETSIZE) { fprintf(stderr, "--cpus %s: no CPU %d\n", cpu_list, k); return 2; }
        CPU_SET(k, &set);
        const char *e = strchr(c, ',');
        if (!e) break;
        c = e + 1;
      }
    } else {
      for (int c = 0; c < cpus; c++) CPU_SET(c, &set);
    }
    if (sched_setaffinity(0, sizeof set, &set)) { perror("sched_setaffinity"); return 1; }
    printf("%s%slive runs on %d CPUs (%s)\n", label, *label ? ": " : "", CPU_COUNT(&set), cpu_list ? cpu_list : "0..N-1");
  }
  char mbuf[64];
  snprintf(mbuf, sizeof mbuf, "%s", modes);
  for (char *mode = strtok(mbuf, ","); mode; mode = strtok(NULL, ",")) {
    hr_stream_params p;
    hr_stream_params_default(&p);
    p.session = sp;
    p.session.downsample_ratio = 0;   /* rung 0: the auto ratio (processing side ~512) */
    p.budget_ms = budget; p.adapt = true;
    if (fixed_ratio > 0) { p.session.downsample_ratio = (float)fixed_ratio; p.adapt = false; }
    p.tail_every_frame = !strncmp(mode, "tail", 4);
    p.net_budget_ms = net_budget;
    p.session.alpha_u8 = p.alpha_u8_only = !float_matte;   /* the bytes alone (no float matte) */
    hr_stream *st = NULL;
    const char *warp_env = getenv("HR_TAIL_WARP");
    char warp_keep[16] = "";
    if (warp_env) snprintf(warp_keep, sizeof warp_keep, "%s", warp_env);
    if (!strcmp(mode, "tail-nowarp")) setenv("HR_TAIL_WARP", "0", 1);   /* read when the stream is made */
    hr_status cst = hr_stream_create(m, &p, &st, err, sizeof err);
    if (warp_env) setenv("HR_TAIL_WARP", warp_keep, 1);
    else unsetenv("HR_TAIL_WARP");
    if (cst) { fprintf(stderr, "live_quality: %s: %s\n", mode, err); return 1; }
    memset(got, 0, sizeof(int) * (size_t)n);
    int last = -1, delivered = 0, last_change = 0, first = -1;
    double age_sum = 0, last_net = -1, lag_off = 0, lag_band = 0;
    int64_t age_max = 0;
    int nlag = 0;
    int nnet = 0, net1 = 0;
    hr_stream_result r;
    /* one push before the clock starts: the first network run is not a live frame's business */
    hr_stream_push(st, &fr[0], &r);
    t0 = now_s();
    double cpu0 = proc_cpu_s();
    for (int pass = 0;;) {
      double t = now_s() - t0;
      int idx = (int)(t * fps);
      if (idx >= n) {
        if (++pass == 2) break;
        t0 += n / fps; last = -1; delivered = 0; last_change = 0; age_sum = 0; age_max = 0; nnet = net1 = 0; lag_off = lag_band = 0; nlag = 0;   /* the measured pass */
        cpu0 = proc_cpu_s();
        continue;
      }
      if (idx == last) { struct timespec ts = {0, (long)(((last + 1) / fps - t) * 1e9) + 1000}; nanosleep(&ts, NULL); continue; }
      double tp = now_s(), rq0 = runq_ms();
      const hr_frame *fp = &fr[idx];
      hr_frame pf;
      if (pool_n) {   /* the frame into the next buffer of the pool, as a camera's DMA writes it */
        uint8_t *b = pool + (size_t)(npushed % pool_n) * fbytes;
        stream_copy(b, (const uint8_t *)fr[idx].planes[0], fbytes);
        pf = fr[idx]; pf.planes[0] = b; pf.planes[1] = b + px;
        fp = &pf;
      }
      npushed++;
      if (hr_stream_push(st, fp, &r)) { fprintf(stderr, "live_quality: %s frame %d: %s\n", mode, idx, hr_stream_last_error(st)); return 1; }
      if (r.alpha || r.alpha_u8) {
        double tq = now_s();
        if (r.alpha_u8) memcpy(live + (size_t)idx * px, r.alpha_u8, px);
        else quantise(r.alpha, live + (size_t)idx * px, px);
        pushms[delivered] = (tq - tp) * 1e3; qms[delivered] = (now_s() - tq) * 1e3;
        rqms[delivered] = rq0 >= 0 ? runq_ms() - rq0 : -1;
        chms[delivered] = r.change_ms; inms[delivered] = r.record.ingest_ms; infms[delivered] = r.record.infer_ms; postms[delivered] = r.record.post_ms;
        lat[delivered] = (now_s() - t0 - idx / fps) * 1e3;
        rung[delivered] = r.rung;
        age[delivered] = p.tail_every_frame ? (int)r.record.coef_age : 0;
        got[delivered] = idx;
        if (delivered && rung[delivered] != rung[delivered - 1]) last_change = delivered;
        if (p.tail_every_frame) {
          age_sum += (double)r.record.coef_age; if (r.record.coef_age > age_max) age_max = r.record.coef_age;
          if (!isnan(r.record.lag_off)) {
            lag_off += r.record.lag_off; lag_band += r.record.lag_band; nlag++;
            if (getenv("LQ_LAG") && pass) fprintf(stderr, "lag %d %.4f %.4f\n", idx, r.record.lag_off, r.record.lag_band);
          }
          if (r.record.net_ms > 0 && r.record.net_ms != last_net) { netms[nnet++] = last_net = r.record.net_ms; net1 += r.record.threads == 1; }   /* each run once */
        }
        delivered++;
      }
      last = idx;
    }
    const double cpu_pass = proc_cpu_s() - cpu0;
    hr_stream_stats ss;
    hr_stream_get_stats(st, &ss);
    int from = last_change + 2 < delivered ? last_change + 2 : delivered;
    first = from < delivered ? got[from] : n;
    long long off = 0, tot = 0, off_all = 0, tot_all = 0;   /* the settled stretch; every frame of the pass */
    double sad = 0, worst = 0;
    for (int k = 0; k < delivered; k++) {
      const uint8_t *a = live + (size_t)got[k] * px, *b = base + (size_t)got[k] * px;
      long long o = 0;
      double sd = 0;
      for (size_t i = 0; i < px; i++) { int d = abs((int)a[i] - (int)b[i]); sd += d; o += d > 25; }
      off_all += o; tot_all += (long long)px;
      if (k < from) continue;
      off += o; tot += (long long)px; sad += sd;
      if ((double)o / px > worst) worst = (double)o / px;
    }
    int settled = delivered - from, span = from < delivered ? got[delivered - 1] - first + 1 : 0;
    double *ls = lat + from;
    double p50 = quant(ls, settled, 0.5), p99 = quant(ls, settled, 0.99);
    printf("%s%s%-11s settled at ratio %.3f (%d frames from frame %d): off>0.1 %.2f%% (worst frame %.1f%%), mean |d| %.4f, "
           "%.1f fps, dropped %.1f%%, latency p50 %.1f p99 %.1f ms", label, *label ? ": " : "", mode, ss.rung_ratio[ss.rung], settled,
           first, tot ? 100.0 * off / tot : NAN, 100 * worst, tot ? sad / tot / 255 : NAN, settled / ((double)span / fps),
           span ? 100.0 * (1 - (double)settled / span) : NAN, p50, p99);
    printf(" [every frame of the pass, rung changes included: off>0.1 %.2f%%, latency p99 %.1f ms]", tot_all ? 100.0 * off_all / tot_all : NAN,
           quant(lat, delivered, 0.99));
    if (p.tail_every_frame) printf(", network runs %lld, coefficients %.1f frames old on average (max %lld), a run p50 %.1f p90 %.1f ms (%d in the pass, %d on one thread)",
                                   (long long)ss.net_runs, age_sum / (delivered ? delivered : 1), (long long)age_max, quant(netms, nnet, 0.5),
                                   quant(netms, nnet, 0.9), nnet, net1);
    if (p.tail_every_frame && nlag)
      printf(", the lag meter (the stream's own, over the pass's %d measures): off %.2f%% of the grid, soft band %.2f%%", nlag,
             100 * lag_off / nlag, 100 * lag_band / nlag);
    if (p.tail_every_frame && getenv("LQ_RUNS")) {   /* every run's own time, in order (a developer's look) */
      printf("\nruns:");
      for (int k = 0; k < nnet; k++) printf(" %.1f", netms[k]);
    }
    printf("\n%s%s%-11s push p50 %.2f ms (ingest %.2f, infer %.2f, post %.2f), the 8-bit matte into the store %.2f ms (%s)\n", label,
           *label ? ": " : "", mode, quant(pushms + from, settled, 0.5), quant(inms + from, settled, 0.5), quant(infms + from, settled, 0.5),
           quant(postms + from, settled, 0.5), quant(qms + from, settled, 0.5), float_matte ? "quantised here" : "the stream's, copied");
    /* the caller's thread waiting for a CPU inside its pushes (the stream's own threads, or other
     * processes, on its CPU), and the process's CPU over the measured pass (all threads) */
    if (settled && rqms[from] >= 0) {
      double tot_rq = 0;
      int over1 = 0;
      for (int k = from; k < delivered; k++) { tot_rq += rqms[k]; over1 += rqms[k] > 1; }
      printf("%s%s%-11s the caller waited for a CPU in its pushes: p50 %.2f p99 %.2f ms, %d of %d pushes over 1 ms, %.0f ms in all; "
             "process CPU over the pass %.1f s in %.1f s (%.2f CPUs)\n", label, *label ? ": " : "", mode, quant(rqms + from, settled, 0.5),
             quant(rqms + from, settled, 0.99), over1, settled, tot_rq, cpu_pass, n / fps, cpu_pass / (n / fps));
    }
    /* stalls: pushes of the measured pass over twice the median push (the host, or the loop) */
    {
      const double med = quant(pushms, delivered, 0.5);
      int ns = 0;
      double mx = 0;
      for (int k = 0; k < delivered; k++)
        if (pushms[k] > 2 * med) { ns++; if (pushms[k] > mx) mx = pushms[k]; }
      printf("%s%s%-11s pushes over twice the median (%.2f ms): %d of %d, the largest %.1f ms", label, *label ? ": " : "", mode, med, ns,
             delivered, mx);
      /* the first 8 of them: frame, push = change (a decision applied: replan, resume) + ingest +
       * infer (tail mode: the wait for the frame's own network run + the tail) + post */
      for (int k = 0, shown = 0; k < delivered && shown < 8; k++)
        if (pushms[k] > 2 * med) {
          printf("%s %d:%.1f=%.1f+%.1f+%.1f+%.1f", shown++ ? "" : ";", got[k], pushms[k], chms[k], inms[k], infms[k], postms[k]);
        }
      printf("\n");
    }
    /* the measured pass's rung changes, each with the push times of the 3 frames before it */
    for (int k = 1; k < delivered; k++)
      if (rung[k] != rung[k - 1]) {
        printf("%s%s%-11s rung %d -> %d at frame %d after pushes of", label, *label ? ": " : "", mode, rung[k - 1], rung[k], got[k]);
        for (int q = k - 16 < 0 ? 0 : k - 16; q < k; q++) printf(" %.1f", pushms[q]);
        printf(" ms (the last 3: infer/post");
        for (int q = k - 3 < 0 ? 0 : k - 3; q < k; q++) printf(" %.1f/%.1f", infms[q], postms[q]);
        printf(")");
        if (p.tail_every_frame) {   /* the change's cost to the matte: the coefficients' age around it */
          int am = 0, q1 = k + 30 < delivered ? k + 30 : delivered;
          for (int q = k - 20 < 0 ? 0 : k - 20; q < q1; q++) am = age[q] > am ? age[q] : am;
          printf(", coefficients up to %d frames old from 20 frames before to 30 after", am);
        }
        printf("\n");
      }
    hr_stream_destroy(st);
  }
  free(base); free(live); free(lat); free(rung); free(got); free(age); free(fr);
  free(pushms); free(rqms); free(netms); free(qms); free(inms); free(infms); free(postms); free(chms);
  hr_model_destroy(m);
  munmap((void *)clip, (size_t)n * fbytes);
  close(fd);
  return 0;
}
