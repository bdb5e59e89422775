/* Streaming stage statistics: quantiles of 10^5 samples against sorting, within the documented 0.5% bound. */
#include <stdint.h>
#include <time.h>
#include "headroom.h"
#include "hr_test.h"

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static double urand(void) {   /* xorshift64*, uniform in (0,1) */
  rng ^= rng >> 12; rng ^= rng << 25; rng ^= rng >> 27;
  return ((rng * 2685821657736338717ull) >> 11) * (1.0 / 9007199254740992.0) + 1e-17;
}
static double nrand(void) { return sqrt(-2 * log(urand())) * cos(6.283185307179586 * urand()); }

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* Nearest-rank quantile of sorted v[0..n). */
static double exact_q(const double *v, int n, double q) {
  int64_t k = (int64_t)ceil(q * n);
  if (k < 1) k = 1;
  if (k > n) k = n;
  return v[k - 1];
}

static void check_against_sort(const char *name, double *v, int n) {
  hr_stats *s = NULL;
  CHECK(hr_stats_create(&s) == HR_OK);
  if (!s) return;
  double sum = 0;
  for (int i = 0; i < n; i++) { hr_stats_add(s, v[i]); sum += v[i]; }
  qsort(v, (size_t)n, sizeof *v, cmp_d);
  CHECK_EQ_INT(hr_stats_count(s), n);
  CHECK_NEAR(hr_stats_mean(s), sum / n, 1e-9 * fabs(sum / n) + 1e-12);
  CHECK(hr_stats_min(s) == v[0]);
  CHECK(hr_stats_max(s) == v[n - 1]);
  const double qs[] = {0, 0.001, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 0.999, 0.9999, 1};
  double worst = 0;
  for (size_t i = 0; i < sizeof qs / sizeof qs[0]; i++) {
    double want = exact_q(v, n, qs[i]), got = hr_stats_quantile(s, qs[i]);
    double err = want >= 0.001 ? fabs(got - want) / want : fabs(got - want);
    double bound = want >= 0.001 ? 0.005 + 1e-9 : 0.001;
    if (want > 10014.0) { err = fabs(got - v[n - 1]); bound = 0; }   /* beyond 10 s: the max */
    if (want >= 0.001 && want <= 10014.0 && err > worst) worst = err;
    CHECKF(err <= bound, "%s q=%g: got %.6f want %.6f (err %.4g)", name, qs[i], got, want, err);
  }
  printf("%-28s n=%d p50=%.4f p95=%.4f p99=%.4f  worst relative error %.3f%%\n", name, n,
         hr_stats_quantile(s, 0.5), hr_stats_quantile(s, 0.95), hr_stats_quantile(s, 0.99), worst * 100);
  hr_stats_destroy(s);
}

int main(void) {
  enum { N = 100000 };
  static double v[N];
  /* Realistic stage times: lognormal around 10 ms with a 2% tail of stalls around 40 ms. */
  for (int i = 0; i < N; i++)
    v[i] = urand() < 0.02 ? 40 * exp(0.5 * nrand()) : 10 * exp(0.15 * nrand());
  check_against_sort("lognormal+tail (ms)", v, N);
  /* Very wide range: 1 µs .. 10 s, log-uniform. */
  for (int i = 0; i < N; i++) v[i] = 0.001 * pow(1e7, urand());
  check_against_sort("log-uniform 1us..10s", v, N);
  /* Heavily quantised input (many exact ties), like a coarse clock. */
  for (int i = 0; i < N; i++) v[i] = floor(urand() * 20) * 0.5;
  check_against_sort("ties (0.5 ms steps)", v, N);
  /* Sub-microsecond and beyond-range values. */
  for (int i = 0; i < N; i++) v[i] = (i % 2) ? 0.0004 * urand() : 20000 + urand() * 1000;
  check_against_sort("out of range both sides", v, N);

  hr_stats *s = NULL, *t = NULL;
  CHECK(hr_stats_create(&s) == HR_OK && hr_stats_create(&t) == HR_OK);
  if (s && t) {
    CHECK(isnan(hr_stats_quantile(s, 0.5)));
    CHECK(isnan(hr_stats_mean(s)) && isnan(hr_stats_min(s)) && isnan(hr_stats_max(s)));
    hr_stats_add(s, NAN);
    hr_stats_add(s, -1);
    hr_stats_add(s, INFINITY);
    CHECK_EQ_INT(hr_stats_count(s), 0);
    CHECK_EQ_INT(hr_stats_ignored(s), 3);
    hr_stats_add(s, 7.0);
    CHECK(hr_stats_quantile(s, 0.5) == 7.0);   /* one sample: clamping to [min,max] makes it exact */
    CHECK(isnan(hr_stats_quantile(s, 1.5)) && isnan(hr_stats_quantile(s, -0.1)));
    for (int i = 1; i <= 100; i++) hr_stats_add(t, i);
    hr_stats_merge(s, t);
    CHECK_EQ_INT(hr_stats_count(s), 101);
    CHECK_NEAR(hr_stats_quantile(s, 0.5), 50, 50 * 0.005);
    hr_stats_reset(s);
    CHECK_EQ_INT(hr_stats_count(s), 0);
    /* Cost of an add. */
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (int i = 0; i < N; i++) hr_stats_add(s, v[i]);
    clock_gettime(CLOCK_MONOTONIC, &b);
    printf("hr_stats_add: %.1f ns per sample\n", ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / N);
  }
  hr_stats_destroy(s);
  hr_stats_destroy(t);
  hr_stats_destroy(NULL);
  return hr_test_finish("test_telemetry_stats");
}
