/* Aligner cost: ns per push and per pop over synthetic streams, median of 7 runs per scenario.
 * Build and run (no CMake target needed; only the sync and core sources):
 *   gcc -std=c11 -O2 -D_GNU_SOURCE -Iinclude bench/sync_bench.c src/sync/aligner.c src/sync/associate.c \
 *       src/core/status.c src/core/frame.c -lm -o sync_bench && ./sync_bench */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "headroom.h"

#define MS 1000000LL
enum { RUNS = 7 };

static uint64_t rng_state;
static uint64_t rng_next(void) { rng_state ^= rng_state << 13; rng_state ^= rng_state >> 7; rng_state ^= rng_state << 17; return rng_state; }
static double rng_unif(void) { return ((rng_next() >> 11) + 0.5) * (1.0 / 9007199254740992.0); }
static double rng_gauss(void) { return sqrt(-2.0 * log(rng_unif())) * cos(6.283185307179586 * rng_unif()); }
static double now_ns(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e9 + t.tv_nsec; }
static int cmp_d(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return (x > y) - (x < y); }

typedef struct { int stream; int64_t ts; } ev;   /* stream 0 color, 1 depth */

/* Builds a push order: color at period cper; depth at dper with offset, jitter, lag (ns). */
static int build(ev *e, int ncolor, int64_t cper, int64_t dper, int64_t offset, double jitter_ms, int64_t lag,
                 bool depth_on) {
  int n = 0, j = 0;
  int64_t last_d = INT64_MIN;
  int64_t *d = malloc(sizeof(int64_t) * (size_t)(ncolor * (cper / dper + 2) + 16));
  int nd = 0;
  if (depth_on)
    for (int64_t t = offset; t < ncolor * cper; t += dper) {
      int64_t x = t + (int64_t)llround(rng_gauss() * jitter_ms * MS);
      if (x <= last_d) x = last_d + 1;
      d[nd++] = last_d = x;
    }
  for (int i = 0; i < ncolor; i++) {
    int64_t c = i * cper;
    while (j < nd && d[j] + lag <= c) e[n++] = (ev){1, d[j++]};
    e[n++] = (ev){0, c};
  }
  while (j < nd) e[n++] = (ev){1, d[j++]};
  free(d);
  return n;
}

static void scenario(const char *name, int ncolor, int64_t cper, int64_t dper, int64_t offset, double jitter_ms,
                     int64_t lag, bool depth_on, int64_t window, int64_t latency, int cap) {
  ev *e = malloc(sizeof(ev) * (size_t)(ncolor * (cper / dper + 2) + 16));
  rng_state = 0x5EED5EEDull;
  int n = build(e, ncolor, cper, dper, offset, jitter_ms, lag, depth_on);
  hr_aligner_params p;
  hr_aligner_params_default(&p);
  p.window_ns = window;
  p.max_latency_ns = latency;
  p.color_capacity = p.depth_capacity = cap;
  double per_push[RUNS], per_pop[RUNS], per_color[RUNS];
  hr_aligner_stats s = {0};
  for (int r = 0; r < RUNS; r++) {
    hr_aligner *a = NULL;
    if (hr_aligner_create(&p, &a, NULL, 0) != HR_OK) { fprintf(stderr, "create failed\n"); exit(1); }
    hr_aligned_pair o;
    int pops = 0;
    /* Pops are timed as a whole (they are a ring read each); pushes are the rest. */
    double t0 = now_ns(), tpop = 0;
    for (int k = 0; k < n; k++) {
      if (e[k].stream == 0) hr_aligner_push_color(a, e[k].ts, (uint64_t)k);
      else hr_aligner_push_depth(a, e[k].ts, (uint64_t)k);
      if ((k & 15) == 15 || k == n - 1) {   /* drain every 16 pushes: keeps clock reads rare */
        double tp = now_ns();
        while (hr_aligner_pop(a, &o) == HR_OK) pops++;
        tpop += now_ns() - tp;
      }
    }
    hr_aligner_flush(a);
    while (hr_aligner_pop(a, &o) == HR_OK) pops++;
    double total = now_ns() - t0;
    per_push[r] = (total - tpop) / n;
    per_pop[r] = tpop / (pops ? pops : 1);
    per_color[r] = total / ncolor;
    hr_aligner_get_stats(a, &s);
    hr_aligner_destroy(a);
  }
  qsort(per_push, RUNS, sizeof(double), cmp_d);
  qsort(per_pop, RUNS, sizeof(double), cmp_d);
  qsort(per_color, RUNS, sizeof(double), cmp_d);
  printf("%-44s push %7.0f ns  pop %4.0f ns  per color frame %7.0f ns  | pairs %d/%d, forced %lld, peak held %d+%d\n",
         name, per_push[RUNS / 2], per_pop[RUNS / 2], per_color[RUNS / 2], (int)s.pairs, ncolor,
         (long long)(s.forced_full + s.forced_latency), s.color_held_peak, s.depth_held_peak);
  free(e);
}

int main(void) {
  const int N = 200000;
  const int64_t P60 = 16666667, P30 = 33333333;
  printf("aligner cost, median of %d runs, %d color frames per run (window 16 ms unless said)\n", RUNS, N);
  scenario("60 Hz + 60 Hz, jitter 4 ms, defaults", N, P60, P60, 3 * MS, 4.0, 0, true, 16 * MS, 200 * MS, 32);
  scenario("60 Hz + 60 Hz, depth 3 frames late", N, P60, P60, 0, 1.0, 3 * P60, true, 16 * MS, 200 * MS, 32);
  scenario("30 Hz + 30 Hz, offset 7 ms, jitter 1 ms", N, P30, P30, 7 * MS, 1.0, 0, true, 16 * MS, 200 * MS, 32);
  scenario("60 Hz + 30 Hz depth, window 20 ms", N, P60, P30, 2 * MS, 2.0, 0, true, 20 * MS, 200 * MS, 32);
  scenario("60 Hz color, no depth (latency forcing)", N, P60, P60, 0, 0, 0, false, 16 * MS, 200 * MS, 32);
  scenario("60 Hz color + 1 kHz depth (33 candidates)", N / 4, P60, 1000000, 0, 0.1, 0, true, 16 * MS, 200 * MS, 32);
  scenario("60 Hz, no depth, 1024 held, no latency", N / 10, P60, P60, 0, 0, 0, false, 16 * MS, 0, 1024);
  return 0;
}
