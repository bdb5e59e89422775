/* Aligner on real TUM lists (RealSense D435 desk) with shifted/jittered/dropped depth, and on
 * synthetic independent 30 Hz clocks (offset, drift): online pairs must equal the offline rule. */
#include <stdint.h>
#include <stdbool.h>
#include "headroom.h"
#include "hr_test.h"

#define MS 1000000LL

/* ---- TUM list parsing: "timestamp path" lines, '#' comments; seconds.fraction -> exact ns ---- */
static int parse_tum(const char *text, int64_t *out, int max) {
  int n = 0;
  const char *p = text;
  while (*p) {
    const char *eol = strchr(p, '\n');
    if (!eol) eol = p + strlen(p);
    while (p < eol && (*p == ' ' || *p == '\t')) p++;
    if (p < eol && *p != '#' && *p != '\r') {
      int64_t sec = 0, frac = 0;
      int fd = 0;
      bool ok = false;
      while (p < eol && *p >= '0' && *p <= '9') { sec = sec * 10 + (*p++ - '0'); ok = true; }
      if (p < eol && *p == '.') {
        p++;
        while (p < eol && *p >= '0' && *p <= '9') {
          if (fd < 9) { frac = frac * 10 + (*p - '0'); fd++; }
          p++;
          ok = true;
        }
      }
      if (!ok || n >= max) return -1;
      while (fd < 9) { frac *= 10; fd++; }
      out[n++] = sec * 1000000000LL + frac;
    }
    p = *eol ? eol + 1 : eol;
  }
  return n;
}

static int load_tum(const char *path, int64_t *out, int max) {
  FILE *f = fopen(path, "rb");
  if (!f) return -1;
  static char buf[1 << 20];
  size_t len = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[len] = 0;
  return parse_tum(buf, out, max);
}

/* ---- independent reference: all candidates, sorted by (|dt|, color ts, depth ts), greedy ---- */
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

/* ---- run the aligner over a push order; collect color -> depth index ---- */
typedef struct { int pairs, unmatched, unused, forced, bad_dt, order_err, mismatch; int64_t max_dt; } run_res;

/* order: sequence of (stream, index); stream 0 color, 1 depth. Ids are index + 1000. */
static run_res run_aligner(const hr_aligner_params *p, const int64_t *c, int nc, const int64_t *d, int nd,
                           const int *ostream, const int *oindex, int no, const int *ref) {
  run_res r = {0};
  hr_aligner *a = NULL;
  CHECK_EQ_INT(hr_aligner_create(p, &a, NULL, 0), HR_OK);
  int *match = malloc(sizeof(int) * (size_t)nc), *seen_d = calloc((size_t)nd + 1, sizeof(int));
  for (int i = 0; i < nc; i++) match[i] = -2;
  int next_color = 0;
  hr_aligned_pair o;
  for (int t = 0; t <= no; t++) {
    if (t < no) {
      int s = ostream[t], k = oindex[t];
      hr_status st = s == 0 ? hr_aligner_push_color(a, c[k], (uint64_t)k + 1000)
                            : hr_aligner_push_depth(a, d[k], (uint64_t)k + 1000);
      CHECKF(st == HR_OK, "push %s %d: %s", s ? "depth" : "color", k, hr_aligner_last_error(a));
    } else {
      CHECK_EQ_INT(hr_aligner_flush(a), HR_OK);
    }
    while (hr_aligner_pop(a, &o) == HR_OK) {
      if (o.flags) r.forced++;
      if (o.kind == HR_ALIGNED_DEPTH_UNUSED) {
        int j = (int)o.depth_id - 1000;
        if (j < 0 || j >= nd || seen_d[j]++) r.order_err++;
        r.unused++;
        continue;
      }
      int i = (int)o.color_id - 1000;
      if (i != next_color++) r.order_err++;
      if (i < 0 || i >= nc) continue;
      if (o.kind == HR_ALIGNED_PAIR) {
        int j = (int)o.depth_id - 1000;
        if (j < 0 || j >= nd || seen_d[j]++) { r.order_err++; continue; }
        match[i] = j;
        r.pairs++;
        int64_t adt = llabs(d[j] - c[i]);
        if (adt > p->window_ns || o.dt_ns != d[j] - c[i]) r.bad_dt++;
        if (adt > r.max_dt) r.max_dt = adt;
      } else {
        match[i] = -1;
        r.unmatched++;
      }
    }
  }
  if (next_color != nc) r.order_err++;
  for (int j = 0; j < nd; j++) if (seen_d[j] != 1) r.order_err++;
  for (int i = 0; i < nc; i++) if (match[i] != ref[i]) r.mismatch++;
  hr_aligner_stats s;
  hr_aligner_get_stats(a, &s);
  CHECK_EQ_INT(s.pairs, r.pairs);
  CHECK_EQ_INT(s.color_unmatched, r.unmatched);
  CHECK_EQ_INT(s.depth_unused, r.unused);
  CHECK(s.max_abs_dt_ns == r.max_dt);
  CHECK(s.color_held_peak <= p->color_capacity && s.depth_held_peak <= p->depth_capacity);
  CHECK_EQ_INT(s.color_held + s.depth_held + s.queued, 0);
  hr_aligner_destroy(a);
  free(match);
  free(seen_d);
  return r;
}

/* Push order by arrival time: color arrives at its ts, depth at ts + lag (ties: color first). */
static int make_order(const int64_t *c, int nc, const int64_t *d, int nd, int64_t lag, int *os, int *oi) {
  int i = 0, j = 0, n = 0;
  while (i < nc || j < nd) {
    bool take_c = j >= nd || (i < nc && c[i] <= d[j] + lag);
    os[n] = take_c ? 0 : 1;
    oi[n++] = take_c ? i++ : j++;
  }
  return n;
}
/* "Depth arrives k color frames late": depth j is pushed right after color i0 + k, where i0 is
 * the first color frame not before it (for equal-rate lists: after color j + k). */
static int make_order_late_frames(const int64_t *c, int nc, const int64_t *d, int nd, int k, int *os, int *oi) {
  int n = 0, j = 0, i0 = 0;
  for (int i = 0; i < nc; i++) {
    os[n] = 0; oi[n++] = i;
    for (;;) {
      if (j >= nd) break;
      while (i0 < nc && c[i0] < d[j]) i0++;
      if (i0 + k > i && i < nc - 1) break;
      os[n] = 1; oi[n++] = j++;
    }
  }
  while (j < nd) { os[n] = 1; oi[n++] = j++; }
  return n;
}

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint64_t rng_next(void) { rng_state ^= rng_state << 13; rng_state ^= rng_state >> 7; rng_state ^= rng_state << 17; return rng_state; }
static double rng_unif(void) { return ((rng_next() >> 11) + 0.5) * (1.0 / 9007199254740992.0); }
static double rng_gauss(void) { return sqrt(-2.0 * log(rng_unif())) * cos(6.283185307179586 * rng_unif()); }

static int cmp_i64(const void *a, const void *b) { int64_t x = *(const int64_t *)a, y = *(const int64_t *)b; return (x > y) - (x < y); }
static void make_increasing(int64_t *t, int n) {
  qsort(t, (size_t)n, sizeof *t, cmp_i64);
  for (int i = 1; i < n; i++) if (t[i] <= t[i - 1]) t[i] = t[i - 1] + 1;
}

/* Runs one variant under several push orders and two configurations; prints one line each. */
static void check_variant(const char *name, const int64_t *c, int nc, const int64_t *d, int nd, int64_t w) {
  int *ref = malloc(sizeof(int) * (size_t)nc), *lib = malloc(sizeof(int) * (size_t)nc);
  reference(c, nc, d, nd, w, ref);
  CHECK_EQ_INT(hr_associate_offline(c, nc, d, nd, w, lib), HR_OK);
  for (int i = 0; i < nc; i++) CHECKF(lib[i] == ref[i], "%s: offline helper color %d: %d vs %d", name, i, lib[i], ref[i]);
  int no_max = nc + nd;
  int *os = malloc(sizeof(int) * (size_t)no_max), *oi = malloc(sizeof(int) * (size_t)no_max);
  static const char *order_names[] = {"merged", "depth+50ms", "depth-50ms", "late3frames", "all-color-first", "all-depth-first"};
  for (int ord = 0; ord < 6; ord++) {
    int no;
    switch (ord) {
      case 0: no = make_order(c, nc, d, nd, 0, os, oi); break;
      case 1: no = make_order(c, nc, d, nd, 50 * MS, os, oi); break;
      case 2: no = make_order(c, nc, d, nd, -50 * MS, os, oi); break;
      case 3: no = make_order_late_frames(c, nc, d, nd, 3, os, oi); break;
      case 4: no = make_order(c, nc, d, nd, INT64_MAX / 4, os, oi); break;
      default: no = make_order(c, nc, d, nd, -(INT64_MAX / 4), os, oi); break;
    }
    CHECK_EQ_INT(no, nc + nd);
    /* Exact configuration: buffers bigger than the lists, no latency limit. */
    hr_aligner_params p;
    hr_aligner_params_default(&p);
    p.window_ns = w;
    p.max_latency_ns = 0;
    p.color_capacity = p.depth_capacity = 1024;
    bool extreme = ord >= 4;
    if (!extreme || (nc <= 1024 && nd <= 1024)) {
      run_res r = run_aligner(&p, c, nc, d, nd, os, oi, no, ref);
      CHECKF(r.mismatch == 0 && r.forced == 0 && r.bad_dt == 0 && r.order_err == 0,
             "%s/%s exact: mismatch %d forced %d bad_dt %d order_err %d", name, order_names[ord], r.mismatch,
             r.forced, r.bad_dt, r.order_err);
      if (ord == 0)
        printf("  %-22s window %2lld ms  color %5d depth %5d  pairs %5d  no-depth %5d  unused-depth %5d  max|dt| %.3f ms\n",
               name, (long long)(w / MS), nc, nd, r.pairs, r.unmatched, r.unused, r.max_dt / 1e6);
    }
    if (extreme) continue;
    /* Default configuration (32 + 32 frames, 200 ms latency): live use. */
    hr_aligner_params_default(&p);
    p.window_ns = w;
    run_res r = run_aligner(&p, c, nc, d, nd, os, oi, no, ref);
    CHECKF(r.bad_dt == 0 && r.order_err == 0, "%s/%s default: bad_dt %d order_err %d", name, order_names[ord], r.bad_dt, r.order_err);
    CHECKF(r.forced == 0 && r.mismatch == 0, "%s/%s default params: forced %d mismatch %d", name,
           order_names[ord], r.forced, r.mismatch);
  }
  /* Tight configuration (4 + 4 frames, 50 ms latency): decisions get forced; count what differs. */
  int no = make_order(c, nc, d, nd, 0, os, oi);
  hr_aligner_params p;
  hr_aligner_params_default(&p);
  p.window_ns = w;
  p.max_latency_ns = 50 * MS;
  p.color_capacity = p.depth_capacity = 4;
  run_res r = run_aligner(&p, c, nc, d, nd, os, oi, no, ref);
  CHECKF(r.bad_dt == 0 && r.order_err == 0, "%s tight: bad_dt %d order_err %d", name, r.bad_dt, r.order_err);
  CHECKF(r.forced > 0 || r.mismatch == 0, "%s tight: mismatch %d without forcing", name, r.mismatch);
  no = make_order_late_frames(c, nc, d, nd, 3, os, oi);
  run_res r3 = run_aligner(&p, c, nc, d, nd, os, oi, no, ref);
  CHECKF(r3.bad_dt == 0 && r3.order_err == 0, "%s tight late3: bad_dt %d order_err %d", name, r3.bad_dt, r3.order_err);
  CHECKF(r3.forced > 0 || r3.mismatch == 0, "%s tight late3: mismatch %d without forcing", name, r3.mismatch);
  printf("  %-22s   tight 4+4 frames, 50 ms: merged: forced records %d, colors differing %d; late3: forced %d, differing %d\n",
         "", r.forced, r.mismatch, r3.forced, r3.mismatch);
  free(os); free(oi); free(ref); free(lib);
}

static void test_realsense(void) {
  char path[1024];
  if (!hr_test_path("HR_DATA_DIR", "realsense-d435-desk/rgb.txt", path, sizeof path)) {
    printf("HR_DATA_DIR unset: real TUM lists skipped\n");
    return;
  }
  static int64_t c[4096], d0[4096], d[4096];
  int nc = load_tum(path, c, 4096);
  hr_test_path("HR_DATA_DIR", "realsense-d435-desk/depth.txt", path, sizeof path);
  int nd0 = load_tum(path, d0, 4096);
  if (nc < 0 || nd0 < 0) { printf("realsense lists not readable: skipped\n"); return; }
  CHECK_EQ_INT(nc, 100);
  CHECK_EQ_INT(nd0, 100);
  CHECK_EQ_INT(c[0], 1700000000005854000LL);
  printf("realsense-d435-desk: %d color, %d depth, span %.3f s\n", nc, nd0, (c[nc - 1] - c[0]) / 1e9);
  static const int64_t windows[] = {16 * MS, 20 * MS};
  for (int wi = 0; wi < 2; wi++) {
    int64_t w = windows[wi];
    static const int shifts_ms[] = {0, 5, -5, 15, -15, 17, -17, 30, -30};
    for (int s = 0; s < 9; s++) {
      for (int j = 0; j < nd0; j++) d[j] = d0[j] + shifts_ms[s] * MS;
      char name[64];
      snprintf(name, sizeof name, "shift %+d ms", shifts_ms[s]);
      check_variant(name, c, nc, d, nd0, w);
    }
    rng_state = 0x1234567ull + (uint64_t)wi;
    for (int j = 0; j < nd0; j++) d[j] = d0[j] + (int64_t)llround(rng_gauss() * 4.0 * MS);
    make_increasing(d, nd0);
    check_variant("jitter sigma 4 ms", c, nc, d, nd0, w);
    rng_state = 0xABCDEFull + (uint64_t)wi;
    int nd = 0;
    for (int j = 0; j < nd0; j++) if (rng_unif() >= 0.2) d[nd++] = d0[j];
    check_variant("20% depth dropped", c, nc, d, nd, w);
    nd = 0;
    for (int j = 0; j < nd0; j += 2) d[nd++] = d0[j];
    check_variant("depth half rate", c, nc, d, nd, w);
    nd = 0;
    for (int j = 0; j < nd0; j += 2) d[nd++] = d0[j] + 5 * MS;
    check_variant("half rate, +5 ms", c, nc, d, nd, w);
  }
}

/* Independent 30 Hz clocks written as TUM lists (microsecond stamps) and parsed back. */
static int make_clock_list(char *buf, size_t cap, int n, double t0, double period, double offset, double ppm,
                           double jitter_s, const char *dir) {
  size_t o = (size_t)snprintf(buf, cap, "# %s\n# timestamp filename\n", dir);
  double last = -1;
  for (int i = 0; i < n; i++) {
    double t = t0 + offset + i * period * (1.0 + ppm * 1e-6) + (jitter_s > 0 ? rng_gauss() * jitter_s : 0);
    if (t <= last + 1e-6) t = last + 1e-6;
    last = t;
    o += (size_t)snprintf(buf + o, cap - o, "%.6f %s/%06d.png\n", t, dir, i);
  }
  return (int)o;
}

static void test_clocks(void) {
  enum { N = 18000 };  /* 10 minutes at 30 Hz: 100 ppm drifts 60 ms */
  static char text[N * 40 + 64];
  static int64_t c[N], d[N];
  struct { const char *name; double offset_ms, ppm, jitter_ms; } v[] = {
    {"clocks +7ms +100ppm", 7, 100, 0},
    {"clocks +7ms -100ppm", 7, -100, 0},
    {"clocks -7ms +100ppm j1", -7, 100, 1.0},
  };
  for (int k = 0; k < 3; k++) {
    rng_state = 0xC0FFEEull + (uint64_t)k;
    make_clock_list(text, sizeof text, N, 1700000000.0, 1.0 / 30, 0, 0, 0, "rgb");
    int nc = parse_tum(text, c, N);
    make_clock_list(text, sizeof text, N, 1700000000.0, 1.0 / 30, v[k].offset_ms * 1e-3, v[k].ppm,
                    v[k].jitter_ms * 1e-3, "depth");
    int nd = parse_tum(text, d, N);
    CHECK_EQ_INT(nc, N);
    CHECK_EQ_INT(nd, N);
    check_variant(v[k].name, c, nc, d, nd, 16 * MS);
    check_variant(v[k].name, c, nc, d, nd, 20 * MS);
  }
}

int main(void) {
  int64_t t[4];
  CHECK_EQ_INT(parse_tum("# c\n\n1.5 a.png\n 2.000000001 b\n3 c\n", t, 4), 3);
  CHECK_EQ_INT(t[0], 1500000000LL);
  CHECK_EQ_INT(t[1], 2000000001LL);
  CHECK_EQ_INT(t[2], 3000000000LL);
  test_realsense();
  test_clocks();
  return hr_test_finish("test_sync_tum");
}
