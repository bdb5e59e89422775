/* Aligner semantics: tie-breaks, hold-back, refusals, bounded memory under drifting streams, and
 * random streams against an independent implementation of the nearest-within-window rule. */
#include <stdint.h>
#include <stdbool.h>
#include <malloc.h>
#include "headroom.h"
#include "hr_test.h"

#define MS 1000000LL

/* ---- independent reference: all candidates sorted by (|dt|, color ts, depth ts), greedy ---- */
typedef struct { int64_t k, ct, dt; int i, j; } ref_edge;
static int ref_cmp(const void *pa, const void *pb) {
  const ref_edge *x = pa, *y = pb;
  if (x->k != y->k) return x->k < y->k ? -1 : 1;
  if (x->ct != y->ct) return x->ct < y->ct ? -1 : 1;
  return x->dt < y->dt ? -1 : x->dt > y->dt;
}
static void reference(const int64_t *c, int nc, const int64_t *d, int nd, int64_t w, int *match) {
  size_t cap = 1024, n = 0;
  ref_edge *e = malloc(cap * sizeof *e);
  for (int i = 0; i < nc; i++)
    for (int j = 0; j < nd; j++) {
      int64_t k = llabs(d[j] - c[i]);
      if (k > w) continue;
      if (n == cap) { cap *= 2; e = realloc(e, cap * sizeof *e); }
      e[n++] = (ref_edge){k, c[i], d[j], i, j};
    }
  qsort(e, n, sizeof *e, ref_cmp);
  char *used = calloc((size_t)nd + 1, 1);
  for (int i = 0; i < nc; i++) match[i] = -1;
  for (size_t t = 0; t < n; t++)
    if (match[e[t].i] < 0 && !used[e[t].j]) { match[e[t].i] = e[t].j; used[e[t].j] = 1; }
  free(used);
  free(e);
}

static uint64_t rng_state = 0x243F6A8885A308D3ull;
static uint64_t rng_next(void) { rng_state ^= rng_state << 13; rng_state ^= rng_state >> 7; rng_state ^= rng_state << 17; return rng_state; }
static double rng_unif(void) { return ((rng_next() >> 11) + 0.5) * (1.0 / 9007199254740992.0); }
static int64_t rng_range(int64_t lo, int64_t hi) { return lo + (int64_t)(rng_next() % (uint64_t)(hi - lo + 1)); }

static hr_aligner *make(int64_t window, int64_t latency, int cap) {
  hr_aligner_params p;
  hr_aligner_params_default(&p);
  p.window_ns = window;
  p.max_latency_ns = latency;
  p.color_capacity = p.depth_capacity = cap;
  hr_aligner *a = NULL;
  CHECK_EQ_INT(hr_aligner_create(&p, &a, NULL, 0), HR_OK);
  return a;
}

static void test_params(void) {
  hr_aligner_params p;
  hr_aligner_params_default(&p);
  CHECK_EQ_INT(p.window_ns, 16 * MS);
  CHECK_EQ_INT(p.max_latency_ns, 200 * MS);
  CHECK_EQ_INT(p.color_capacity, 32);
  CHECK_EQ_INT(p.depth_capacity, 32);
  char err[256];
  hr_aligner *a = (hr_aligner *)&p;
  hr_aligner_params q = p;
  q.window_ns = -1;
  CHECK_EQ_INT(hr_aligner_create(&q, &a, err, sizeof err), HR_EINVAL);
  CHECK(a == NULL);
  CHECK(strstr(err, "window") != NULL);
  q = p; q.color_capacity = 0;
  CHECK_EQ_INT(hr_aligner_create(&q, &a, err, sizeof err), HR_EINVAL);
  CHECK(strstr(err, "color_capacity") != NULL);
  q = p; q.depth_capacity = 1025;
  CHECK_EQ_INT(hr_aligner_create(&q, &a, err, sizeof err), HR_EINVAL);
  q = p; q.max_latency_ns = -5;
  CHECK_EQ_INT(hr_aligner_create(&q, &a, err, sizeof err), HR_EINVAL);
  CHECK_EQ_INT(hr_aligner_create(NULL, &a, err, sizeof err), HR_EINVAL);
  CHECK_EQ_INT(hr_aligner_create(&p, NULL, err, sizeof err), HR_EINVAL);
  hr_aligner_destroy(NULL);
  hr_aligned_pair o;
  CHECK_EQ_INT(hr_aligner_push_color(NULL, 1, 1), HR_EINVAL);
  CHECK_EQ_INT(hr_aligner_pop(NULL, &o), HR_EINVAL);
  CHECK_EQ_INT(hr_aligner_flush(NULL), HR_EINVAL);
  CHECK_EQ_INT(hr_aligner_create(&p, &a, err, sizeof err), HR_OK);
  hr_aligner_stats s;
  hr_aligner_get_stats(a, &s);
  CHECK(s.bytes > 0 && s.bytes < 64 * 1024);
  CHECK_EQ_INT(hr_aligner_pop(a, &o), HR_EAGAIN);
  hr_aligner_destroy(a);
}

/* Equal |dt|: the earlier color wins, then the earlier depth (aligner and offline helper). */
static void test_ties(void) {
  int64_t c1[] = {0, 10 * MS}, d1[] = {5 * MS};
  int m[2];
  CHECK_EQ_INT(hr_associate_offline(c1, 2, d1, 1, 16 * MS, m), HR_OK);
  CHECK_EQ_INT(m[0], 0);
  CHECK_EQ_INT(m[1], -1);
  int64_t c2[] = {10 * MS}, d2[] = {5 * MS, 15 * MS};
  CHECK_EQ_INT(hr_associate_offline(c2, 1, d2, 2, 16 * MS, m), HR_OK);
  CHECK_EQ_INT(m[0], 0);
  /* window inclusive */
  int64_t c3[] = {0}, d3[] = {16 * MS};
  CHECK_EQ_INT(hr_associate_offline(c3, 1, d3, 1, 16 * MS, m), HR_OK);
  CHECK_EQ_INT(m[0], 0);
  d3[0] = 16 * MS + 1;
  CHECK_EQ_INT(hr_associate_offline(c3, 1, d3, 1, 16 * MS, m), HR_OK);
  CHECK_EQ_INT(m[0], -1);
  int64_t bad[] = {5, 5};
  CHECK_EQ_INT(hr_associate_offline(bad, 2, d3, 1, 16 * MS, m), HR_EINVAL);
  CHECK_EQ_INT(hr_associate_offline(c3, 1, d3, 1, -1, m), HR_EINVAL);
  CHECK_EQ_INT(hr_associate_offline(NULL, 0, NULL, 0, 0, NULL), HR_OK);

  /* Online, both orders of arrival. */
  for (int order = 0; order < 2; order++) {
    hr_aligner *a = make(16 * MS, 0, 8);
    hr_aligned_pair o;
    if (order) CHECK_EQ_INT(hr_aligner_push_depth(a, 5 * MS, 100), HR_OK);
    CHECK_EQ_INT(hr_aligner_push_color(a, 0, 1), HR_OK);
    CHECK_EQ_INT(hr_aligner_push_color(a, 10 * MS, 2), HR_OK);
    if (!order) CHECK_EQ_INT(hr_aligner_push_depth(a, 5 * MS, 100), HR_OK);
    CHECK_EQ_INT(hr_aligner_flush(a), HR_OK);
    CHECK_EQ_INT(hr_aligner_pop(a, &o), HR_OK);
    CHECK(o.kind == HR_ALIGNED_PAIR && o.color_id == 1 && o.depth_id == 100 && o.dt_ns == 5 * MS && o.flags == 0);
    CHECK_EQ_INT(hr_aligner_pop(a, &o), HR_OK);
    CHECK(o.kind == HR_ALIGNED_COLOR_ONLY && o.color_id == 2 && o.color_ts_ns == 10 * MS);
    CHECK_EQ_INT(hr_aligner_pop(a, &o), HR_EAGAIN);
    hr_aligner_destroy(a);
  }
}

/* Hold-back: a pair is final only when no later frame of either stream can come closer. */
static void test_holdback(void) {
  hr_aligner *a = make(16 * MS, 0, 8);
  hr_aligned_pair o;
  CHECK_EQ_INT(hr_aligner_push_color(a, 100 * MS, 1), HR_OK);
  CHECK_EQ_INT(hr_aligner_pop(a, &o), HR_EAGAIN);
  CHECK_EQ_INT(hr_aligner_push_depth(a, 108 * MS, 10), HR_OK);  /* dt 8 ms: a color at 101..115 could be nearer */
  CHECK_EQ_INT(hr_aligner_pop(a, &o), HR_EAGAIN);
  CHECK_EQ_INT(hr_aligner_push_color(a, 110 * MS, 2), HR_OK);   /* nearer to depth 108 (2 ms)... */
  CHECK_EQ_INT(hr_aligner_pop(a, &o), HR_EAGAIN);               /* ...unless a depth at 109..111 comes */
  CHECK_EQ_INT(hr_aligner_push_color(a, 133 * MS, 3), HR_OK);
  CHECK_EQ_INT(hr_aligner_pop(a, &o), HR_EAGAIN);               /* still: no depth after 108 yet */
  CHECK_EQ_INT(hr_aligner_push_depth(a, 115 * MS, 11), HR_OK);  /* (110,108) final; (100,115) at 15 ms final too: */
  CHECK_EQ_INT(hr_aligner_pop(a, &o), HR_OK);                   /* a later depth is >= 116, 16 ms from 100 */
  CHECK(o.kind == HR_ALIGNED_PAIR && o.color_id == 1 && o.depth_id == 11 && o.dt_ns == 15 * MS);
  CHECK_EQ_INT(hr_aligner_pop(a, &o), HR_OK);
  CHECK(o.kind == HR_ALIGNED_PAIR && o.color_id == 2 && o.depth_id == 10 && o.dt_ns == -2 * MS);
  CHECK_EQ_INT(hr_aligner_pop(a, &o), HR_EAGAIN);               /* 133 waits for a depth */
  CHECK_EQ_INT(hr_aligner_push_depth(a, 141 * MS, 12), HR_OK);
  CHECK_EQ_INT(hr_aligner_pop(a, &o), HR_EAGAIN);               /* 133 vs 141 (8 ms): a depth at 134..140 could win */
  CHECK_EQ_INT(hr_aligner_push_depth(a, 175 * MS, 13), HR_OK);
  CHECK_EQ_INT(hr_aligner_pop(a, &o), HR_EAGAIN);               /* a color at 142..148 could take depth 141 */
  CHECK_EQ_INT(hr_aligner_push_color(a, 166 * MS, 4), HR_OK);
  CHECK_EQ_INT(hr_aligner_pop(a, &o), HR_OK);
  CHECK(o.kind == HR_ALIGNED_PAIR && o.color_id == 3 && o.depth_id == 12);
  CHECK_EQ_INT(hr_aligner_pop(a, &o), HR_EAGAIN);
  CHECK_EQ_INT(hr_aligner_flush(a), HR_OK);
  CHECK_EQ_INT(hr_aligner_pop(a, &o), HR_OK);
  CHECK(o.kind == HR_ALIGNED_PAIR && o.color_id == 4 && o.depth_id == 13 && o.dt_ns == 9 * MS);
  CHECK_EQ_INT(hr_aligner_pop(a, &o), HR_EAGAIN);
  /* A new segment after flush: earlier timestamps are fine, nothing pairs across the flush. */
  CHECK_EQ_INT(hr_aligner_push_color(a, 5 * MS, 5), HR_OK);
  CHECK_EQ_INT(hr_aligner_push_depth(a, 40 * MS, 14), HR_OK);
  CHECK_EQ_INT(hr_aligner_pop(a, &o), HR_OK);
  CHECK(o.kind == HR_ALIGNED_COLOR_ONLY && o.color_id == 5);
  CHECK_EQ_INT(hr_aligner_push_color(a, 60 * MS, 6), HR_OK);
  CHECK_EQ_INT(hr_aligner_pop(a, &o), HR_OK);
  CHECK(o.kind == HR_ALIGNED_DEPTH_UNUSED && o.depth_id == 14 && o.depth_ts_ns == 40 * MS);
  hr_aligner_stats s;
  hr_aligner_get_stats(a, &s);
  CHECK_EQ_INT(s.pairs, 4);
  CHECK_EQ_INT(s.color_unmatched, 1);
  CHECK_EQ_INT(s.depth_unused, 1);
  CHECK_EQ_INT(s.max_abs_dt_ns, 15 * MS);
  CHECK_EQ_INT(s.forced_full + s.forced_latency, 0);
  hr_aligner_destroy(a);
}

static void test_refusals(void) {
  hr_aligner *a = make(16 * MS, 0, 4);
  hr_aligned_pair o;
  CHECK_EQ_INT(hr_aligner_push_color(a, 100 * MS, 1), HR_OK);
  CHECK_EQ_INT(hr_aligner_push_color(a, 100 * MS, 2), HR_EINVAL);
  CHECK(strstr(hr_aligner_last_error(a), "not after") != NULL);
  printf("refusal message: %s\n", hr_aligner_last_error(a));
  CHECK_EQ_INT(hr_aligner_push_color(a, 90 * MS, 2), HR_EINVAL);
  CHECK_EQ_INT(hr_aligner_push_depth(a, 50 * MS, 10), HR_OK);    /* streams are independent */
  CHECK_EQ_INT(hr_aligner_push_depth(a, 49 * MS, 11), HR_EINVAL);
  CHECK(strstr(hr_aligner_last_error(a), "depth") != NULL);
  CHECK_EQ_INT(hr_aligner_push_depth(a, (int64_t)1 << 62 | 1, 11), HR_ERANGE);
  CHECK_EQ_INT(hr_aligner_push_depth(a, INT64_MIN, 11), HR_ERANGE);
  hr_aligner_stats s;
  hr_aligner_get_stats(a, &s);
  CHECK_EQ_INT(s.refused, 5);
  CHECK_EQ_INT(s.color_in, 1);
  CHECK_EQ_INT(s.depth_in, 1);
  /* State unchanged by refusals: the stream goes on. */
  CHECK_EQ_INT(hr_aligner_push_depth(a, 101 * MS, 12), HR_OK);
  CHECK_EQ_INT(hr_aligner_flush(a), HR_OK);
  int n = 0, pairs = 0;
  while (hr_aligner_pop(a, &o) == HR_OK) { n++; pairs += o.kind == HR_ALIGNED_PAIR; }
  CHECK_EQ_INT(n, 2);
  CHECK_EQ_INT(pairs, 1);
  hr_aligner_destroy(a);

  /* A caller that never pops: records pile up to Nc + Nd + 1, then push says HR_EAGAIN. */
  a = make(16 * MS, 0, 4);
  int accepted = 0;
  hr_status st = HR_OK;
  for (int i = 0; i < 100 && st == HR_OK; i++) {
    st = hr_aligner_push_color(a, i * 33 * MS, (uint64_t)i);
    if (st == HR_OK) accepted++;
  }
  CHECK_EQ_INT(st, HR_EAGAIN);
  CHECK(strstr(hr_aligner_last_error(a), "pop") != NULL);
  hr_aligner_get_stats(a, &s);
  CHECK(s.queued + s.color_held + s.depth_held <= 9);
  CHECK(s.color_held_peak <= 4);
  CHECK(s.forced_full > 0);
  int popped = 0;
  while (hr_aligner_pop(a, &o) == HR_OK) {
    CHECK(o.kind == HR_ALIGNED_COLOR_ONLY && o.color_id == (uint64_t)popped && (o.flags & HR_ALIGNED_FORCED_FULL));
    popped++;
  }
  CHECK_EQ_INT(hr_aligner_push_color(a, 100 * 33 * MS, 100), HR_OK);
  CHECK_EQ_INT(hr_aligner_flush(a), HR_OK);
  while (hr_aligner_pop(a, &o) == HR_OK) popped++;
  CHECK_EQ_INT(popped, accepted + 1);
  hr_aligner_destroy(a);
}

/* Memory bounded however the streams drift: no depth at all, depth stopping, depth 1 s ahead,
 * color 1 s ahead; with and without a latency limit. */
typedef struct { int64_t pairs, color_only, unused, forced; } drift_res;
static drift_res drive(hr_aligner *a, int n, int64_t color_period, int64_t depth_offset, int depth_until,
                       bool *bounded) {
  drift_res r = {0};
  hr_aligner_params_default(NULL);
  hr_aligned_pair o;
  hr_aligner_stats s;
  int64_t expect_color = 0;
  for (int i = 0; i < n; i++) {
    int64_t t = (int64_t)i * color_period;
    if (hr_aligner_push_color(a, t, (uint64_t)i) != HR_OK) { *bounded = false; break; }
    if (i < depth_until && hr_aligner_push_depth(a, t + depth_offset, (uint64_t)i) != HR_OK) { *bounded = false; break; }
    while (hr_aligner_pop(a, &o) == HR_OK) {
      if (o.kind == HR_ALIGNED_DEPTH_UNUSED) { r.unused++; continue; }
      if ((int64_t)o.color_id != expect_color++) *bounded = false;
      if (o.kind == HR_ALIGNED_PAIR) r.pairs++; else r.color_only++;
      if (o.flags) r.forced++;
    }
    if ((i & 1023) == 0) {
      hr_aligner_get_stats(a, &s);
      if (s.color_held > 32 || s.depth_held > 32 || s.queued > 65) *bounded = false;
    }
  }
  hr_aligner_flush(a);
  while (hr_aligner_pop(a, &o) == HR_OK) {
    if (o.kind == HR_ALIGNED_DEPTH_UNUSED) { r.unused++; continue; }
    if ((int64_t)o.color_id != expect_color++) *bounded = false;
    if (o.kind == HR_ALIGNED_PAIR) r.pairs++; else r.color_only++;
  }
  if (expect_color != n) *bounded = false;
  hr_aligner_get_stats(a, &s);
  if (s.color_held_peak > 32 || s.depth_held_peak > 32 || s.queued_peak > 65) *bounded = false;
  return r;
}

static void test_bounded(void) {
#if !defined(__SANITIZE_ADDRESS__)
  struct mallinfo2 m0 = mallinfo2();
#endif
  struct { const char *name; int n; int64_t offset; int depth_until; int64_t latency; } v[] = {
    {"no depth at all, latency 200 ms", 1000000, 0, 0, 200 * MS},
    {"no depth at all, no latency limit", 1000000, 0, 0, 0},
    {"depth stops after 1000 frames", 200000, 2 * MS, 1000, 200 * MS},
    {"depth stops, no latency limit", 200000, 2 * MS, 1000, 0},
    {"depth 1 s ahead", 200000, 1000 * MS, 200000, 200 * MS},
    {"depth 1 s ahead, no latency limit", 200000, 1000 * MS, 200000, 0},
    {"depth 1 s behind", 200000, -1000 * MS, 200000, 200 * MS},
    {"depth 1 s behind, no latency limit", 200000, -1000 * MS, 200000, 0},
  };
  for (int k = 0; k < 8; k++) {
    hr_aligner *a = make(16 * MS, v[k].latency, 32);
    hr_aligner_stats s0, s1;
    hr_aligner_get_stats(a, &s0);
    bool bounded = true;
    drift_res r = drive(a, v[k].n, 33333333, v[k].offset, v[k].depth_until, &bounded);
    hr_aligner_get_stats(a, &s1);
    CHECKF(bounded, "%s: buffers exceeded or order broken", v[k].name);
    CHECK_EQ_INT(s1.bytes, s0.bytes);
    CHECK_EQ_INT(r.pairs + r.color_only, v[k].n);
    CHECK_EQ_INT(r.pairs + r.unused, v[k].depth_until);
    printf("%-36s: %7d color, pairs %6lld, no-depth %7lld, unused depth %6lld, forced full %lld / latency %lld, "
           "peak held color %d depth %d queued %d, %zu bytes\n",
           v[k].name, v[k].n, (long long)r.pairs, (long long)r.color_only, (long long)r.unused,
           (long long)s1.forced_full, (long long)s1.forced_latency, s1.color_held_peak, s1.depth_held_peak,
           s1.queued_peak, s1.bytes);
    /* 1 s = 30 periods exactly: the offline rule pairs color i+30 with depth i (or i with i+30).
     * Holding 1 s fits 32 frames, so without a latency limit that is what comes out, unforced;
     * with 200 ms the waiting side is forced out first (counted), and nothing pairs. */
    if (k >= 4 && v[k].latency == 0) { CHECK_EQ_INT(r.pairs, v[k].n - 30); CHECK_EQ_INT(r.forced, 0); }
    if (k >= 4 && v[k].latency > 0) { CHECK_EQ_INT(r.pairs, 0); CHECK(s1.forced_latency > 0); }
    if (k == 2 || k == 3) CHECK_EQ_INT(r.pairs, 1000);
    hr_aligner_destroy(a);
  }
#if !defined(__SANITIZE_ADDRESS__)
  /* Nothing allocated per frame: the heap is the same before and after a million pushes. */
  hr_aligner *a = make(16 * MS, 200 * MS, 32);
  struct mallinfo2 m1 = mallinfo2();
  hr_aligned_pair o;
  for (int i = 0; i < 1000000; i++) {
    hr_aligner_push_color(a, (int64_t)i * 16666667, (uint64_t)i);
    if (i % 3) hr_aligner_push_depth(a, (int64_t)i * 16666667 + (i % 7) * MS, (uint64_t)i);
    while (hr_aligner_pop(a, &o) == HR_OK) {}
  }
  struct mallinfo2 m2 = mallinfo2();
  CHECK_EQ_INT(m2.uordblks, m1.uordblks);
  hr_aligner_destroy(a);
  (void)m0;
#endif
}

/* Random streams: rates, jitter, drops, ties on a coarse grid, push orders with random lag. */
static void test_random(void) {
  enum { NMAX = 400 };
  static int64_t c[NMAX], d[NMAX * 3];
  static int ref[NMAX], lib[NMAX], os[NMAX * 4], oi[NMAX * 4];
  static int64_t arr_c[NMAX], arr_d[NMAX * 3];
  int runs = 0, exact_fail = 0, forced_runs = 0, forced_diff_runs = 0, bad = 0;
  for (int seed = 1; seed <= 3000; seed++) {
    rng_state = 0x9E3779B97F4A7C15ull * (uint64_t)seed;
    int64_t grid = (rng_next() & 1) ? MS : 1;                /* coarse grid: many equal |dt| */
    int64_t cper = rng_range(8, 100) * MS, dper = rng_range(4, 100) * MS;
    int64_t w = rng_range(0, 40) * MS;
    if (rng_next() % 8 == 0) w = rng_range(0, 40) * MS + rng_range(0, 999999);
    double jit = rng_unif() * 0.5, drop = rng_unif() * 0.4;
    int nc = (int)rng_range(1, NMAX), nd = 0;
    int64_t t = rng_range(-50, 50) * MS;
    for (int i = 0; i < nc; i++) {
      t += (int64_t)(cper * (1 + jit * (rng_unif() - 0.5)));
      t = t / grid * grid;
      c[i] = i ? (t > c[i - 1] ? t : c[i - 1] + grid) : t;
      t = c[i];
    }
    t = rng_range(-50, 50) * MS;
    while (t < c[nc - 1] + 100 * MS && nd < NMAX * 3) {
      t += (int64_t)(dper * (1 + jit * (rng_unif() - 0.5)));
      int64_t tt = t / grid * grid;
      if (nd && tt <= d[nd - 1]) tt = d[nd - 1] + grid;
      t = tt;
      if (rng_unif() >= drop) d[nd++] = tt;
    }
    reference(c, nc, d, nd, w, ref);
    CHECK_EQ_INT(hr_associate_offline(c, nc, d, nd, w, lib), HR_OK);
    for (int i = 0; i < nc; i++) if (lib[i] != ref[i]) { bad++; break; }
    /* Arrival: ts + per-stream lag + random delay, kept in order within each stream. */
    int64_t lag_c = rng_range(0, 80) * MS, lag_d = rng_range(0, 80) * MS, spread = rng_range(0, 40) * MS;
    for (int i = 0; i < nc; i++) {
      arr_c[i] = c[i] + lag_c + rng_range(0, spread);
      if (i && arr_c[i] < arr_c[i - 1]) arr_c[i] = arr_c[i - 1];
    }
    for (int j = 0; j < nd; j++) {
      arr_d[j] = d[j] + lag_d + rng_range(0, spread);
      if (j && arr_d[j] < arr_d[j - 1]) arr_d[j] = arr_d[j - 1];
    }
    int no = 0;
    for (int i = 0, j = 0; i < nc || j < nd;) {
      bool tc = j >= nd || (i < nc && (arr_c[i] < arr_d[j] || (arr_c[i] == arr_d[j] && (rng_next() & 1))));
      os[no] = tc ? 0 : 1;
      oi[no++] = tc ? i++ : j++;
    }
    for (int cfg = 0; cfg < 2; cfg++) {
      hr_aligner *a = cfg == 0 ? make(w, 0, 1024) : make(w, rng_range(0, 150) * MS, (int)rng_range(1, 8));
      hr_aligner_params_default(NULL);
      static int got[NMAX];
      static char dseen[NMAX * 3];
      memset(dseen, 0, sizeof dseen);
      for (int i = 0; i < nc; i++) got[i] = -2;
      int next = 0, forced = 0, errs = 0;
      hr_aligned_pair o;
      for (int k = 0; k <= no; k++) {
        if (k < no) {
          hr_status st = os[k] == 0 ? hr_aligner_push_color(a, c[oi[k]], (uint64_t)oi[k])
                                    : hr_aligner_push_depth(a, d[oi[k]], (uint64_t)oi[k]);
          if (st != HR_OK) errs++;
        } else {
          hr_aligner_flush(a);
        }
        while (hr_aligner_pop(a, &o) == HR_OK) {
          if (o.flags) forced++;
          if (o.kind == HR_ALIGNED_DEPTH_UNUSED) { if (dseen[o.depth_id]++) errs++; continue; }
          if ((int)o.color_id != next++) errs++;
          if (o.kind == HR_ALIGNED_PAIR) {
            if (dseen[o.depth_id]++) errs++;
            if (llabs(o.dt_ns) > w || o.dt_ns != d[o.depth_id] - c[o.color_id]) errs++;
            got[o.color_id] = (int)o.depth_id;
          } else {
            got[o.color_id] = -1;
          }
        }
      }
      if (next != nc) errs++;
      for (int j = 0; j < nd; j++) if (dseen[j] != 1) errs++;
      int diff = 0;
      for (int i = 0; i < nc; i++) diff += got[i] != ref[i];
      hr_aligner_stats s;
      hr_aligner_get_stats(a, &s);
      if (s.forced_full + s.forced_latency == 0 && forced) errs++;
      bad += errs;
      if (cfg == 0 && (diff || forced)) {
        if (exact_fail < 5) fprintf(stderr, "seed %d: exact config differs at %d colors (forced %d)\n", seed, diff, forced);
        exact_fail++;
      }
      if (cfg == 1) {
        if (forced) forced_runs++;
        if (forced && diff) forced_diff_runs++;
        if (!forced && diff) {
          if (exact_fail < 5) fprintf(stderr, "seed %d: small config differs without forcing\n", seed);
          exact_fail++;
        }
      }
      runs++;
      hr_aligner_destroy(a);
    }
  }
  CHECK_EQ_INT(exact_fail, 0);
  CHECK_EQ_INT(bad, 0);
  printf("random streams: %d runs, exact-config mismatches %d; small buffers: %d runs forced, %d of them differ "
         "from the offline rule\n", runs, exact_fail, forced_runs, forced_diff_runs);
}

int main(void) {
  test_params();
  test_ties();
  test_holdback();
  test_refusals();
  test_bounded();
  test_random();
  return hr_test_finish("test_sync_aligner");
}
