/* Depth fusion (the stream's, src/stream/depth.c, driven as the stream and the CLI drive it: depth
 * read from a TUM folder just far enough ahead of each color frame) on the real RealSense D435 desk
 * recording, with the depth timestamps shifted (+5 ms, +20 ms), jittered (sigma 6 ms), 30% dropped,
 * or cut short: every pair lies within the window, the pairs are exactly those of an independent
 * nearest-within-window greedy, decisions come out in color order, and the person depth and
 * occlusion masks hold what the depth maps and a synthetic alpha say. */
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "headroom.h"
#include "headroom/io.h"
#include "io/tum.h"
#include "stream/depth.h"
#include "hr_test.h"

#define MS 1000000LL

/* ---- independent reference: every candidate sorted by (|dt|, color ts, depth ts), greedy ---- */
typedef struct { int64_t k, ct, dt; int i, j; } ref_edge;
static int ref_cmp(const void *pa, const void *pb) {
  const ref_edge *x = pa, *y = pb;
  if (x->k != y->k) return x->k < y->k ? -1 : 1;
  if (x->ct != y->ct) return x->ct < y->ct ? -1 : 1;
  return x->dt < y->dt ? -1 : x->dt > y->dt;
}
static int reference(const int64_t *c, int nc, const int64_t *d, int nd, int64_t w, int *match) {
  ref_edge *e = malloc(sizeof *e * (size_t)nc * (size_t)(nd ? nd : 1));
  size_t n = 0;
  for (int i = 0; i < nc; i++)
    for (int j = 0; j < nd; j++) {
      int64_t k = llabs(d[j] - c[i]);
      if (k <= w) e[n++] = (ref_edge){k, c[i], d[j], i, j};
    }
  qsort(e, n, sizeof *e, ref_cmp);
  char *used = calloc((size_t)nd + 1, 1);
  int pairs = 0;
  for (int i = 0; i < nc; i++) match[i] = -1;
  for (size_t t = 0; t < n; t++)
    if (match[e[t].i] < 0 && !used[e[t].j]) { match[e[t].i] = e[t].j; used[e[t].j] = 1; pairs++; }
  free(used);
  free(e);
  return pairs;
}

static uint64_t rng_state = 0x2545F4914F6CDD1Dull;
static uint64_t rng_next(void) { rng_state ^= rng_state << 13; rng_state ^= rng_state >> 7; rng_state ^= rng_state << 17; return rng_state; }
static double rng_unif(void) { return ((double)(rng_next() >> 11) + 0.5) * (1.0 / 9007199254740992.0); }
static double rng_gauss(void) { return sqrt(-2.0 * log(rng_unif())) * cos(6.283185307179586 * rng_unif()); }

typedef struct { int64_t ts; const char *path; } dentry;
static int dentry_cmp(const void *a, const void *b) {
  int64_t x = ((const dentry *)a)->ts, y = ((const dentry *)b)->ts;
  return (x > y) - (x < y);
}

static int rm_cb(const char *p, const struct stat *sb, int flag, struct FTW *ftw) { (void)sb; (void)flag; (void)ftw; return remove(p); }

static uint16_t to_mm(uint16_t v) { return v == 65535 ? 0 : v; }   /* scale 1000 */

static int file_exists(const char *p) { struct stat sb; return stat(p, &sb) == 0; }

static int cmp_u16(const void *a, const void *b) { return (int)*(const uint16_t *)a - (int)*(const uint16_t *)b; }

typedef struct variant {
  const char *name;
  int64_t shift_ns;
  double jitter_ms;     /* gaussian sigma */
  double drop;          /* fraction of depth frames removed */
  int keep_first;       /* keep only the first N depth frames (0 = all) */
  int aw, ah;           /* alpha size */
  double window_ms;
} variant;

static hr_tum_list rgb, dep;
static double occlude_m;
static char tmp_root[256];

static void run_variant(const variant *v, int vi) {
  int nc = rgb.n;
  /* Modified depth list: absolute paths to the real PNGs. */
  dentry *de = malloc(sizeof *de * (size_t)dep.n);
  int nd = 0;
  rng_state = 0x2545F4914F6CDD1Dull + (uint64_t)vi * 7919;
  for (int j = 0; j < dep.n; j++) {
    double u = rng_unif();
    if (v->drop > 0 && u < v->drop) continue;
    if (v->keep_first && nd >= v->keep_first) break;
    int64_t ts = dep.v[j].ts_ns + v->shift_ns;
    if (v->jitter_ms > 0) ts += llround(rng_gauss() * v->jitter_ms * 1e6);
    de[nd++] = (dentry){ts, dep.v[j].path};
  }
  qsort(de, (size_t)nd, sizeof *de, dentry_cmp);
  for (int j = 1; j < nd; j++) if (de[j].ts <= de[j - 1].ts) de[j].ts = de[j - 1].ts + 1;

  char dir[512], path[1024];
  snprintf(dir, sizeof dir, "%s/%s", tmp_root, v->name);
  CHECK(mkdir(dir, 0755) == 0);
  snprintf(path, sizeof path, "%s/depth.txt", dir);
  FILE *f = fopen(path, "w");
  fprintf(f, "# %s: depth of realsense-d435-desk, timestamps modified\n", v->name);
  for (int j = 0; j < nd; j++) {
    CHECK(de[j].path[0] == '/');
    fprintf(f, "%lld.%09lld %s\n", (long long)(de[j].ts / 1000000000), (long long)(de[j].ts % 1000000000), de[j].path);
  }
  fclose(f);
  snprintf(path, sizeof path, "%s/rgb.txt", dir);
  f = fopen(path, "w");
  for (int i = 0; i < nc; i++)
    fprintf(f, "%lld.%09lld %s\n", (long long)(rgb.v[i].ts_ns / 1000000000), (long long)(rgb.v[i].ts_ns % 1000000000), rgb.v[i].path);
  fclose(f);

  int64_t *ct = malloc(sizeof *ct * (size_t)nc), *dt = malloc(sizeof *dt * (size_t)(nd + 1));
  for (int i = 0; i < nc; i++) ct[i] = rgb.v[i].ts_ns;
  for (int j = 0; j < nd; j++) dt[j] = de[j].ts;
  int64_t w_ns = llround(v->window_ms * 1e6);
  int *match = malloc(sizeof *match * (size_t)nc);
  int ref_pairs = reference(ct, nc, dt, nd, w_ns, match);

  /* Alpha: a centred disc (1), a rim at exactly 0.5 (person) and one at 0.49 (not), 0 outside. */
  int aw = v->aw, ah = v->ah;
  float *alpha = malloc(sizeof *alpha * (size_t)aw * (size_t)ah);
  double r = 0.3 * (aw < ah ? aw : ah), rim = 0.01 * (aw < ah ? aw : ah) + 1;
  for (int y = 0; y < ah; y++)
    for (int x = 0; x < aw; x++) {
      double q = hypot(x + 0.5 - aw / 2.0, y + 0.5 - ah / 2.0);
      alpha[(size_t)y * aw + x] = q < r ? 1.f : q < r + rim ? 0.5f : q < r + 2 * rim ? 0.49f : 0.f;
    }

  /* The fusion as the stream makes it, fed as the CLI feeds it (depth read ahead of each color). */
  hr_stream_params sp;
  hr_stream_params_default(&sp);
  sp.depth = true;
  sp.depth_window_ms = v->window_ms;
  sp.occlude_m = occlude_m;
  hr_source_params srp;
  hr_source_params_default(&srp);
  srp.stream = HR_SOURCE_STREAM_DEPTH;
  srp.depth_scale = 1000;
  srp.pool_size = 2;
  hr_source *src = NULL;
  hr__depth *d = NULL;
  char err[512];
  int st = hr_source_open(dir, &srp, &src, err, sizeof err);
  CHECKF(st == HR_OK, "%s: depth source: %s", v->name, err);
  if (st) goto done;
  hr_pixfmt fmt;
  hr_source_get_format(src, &fmt, &sp.depth_width, &sp.depth_height);
  st = hr__depth_create(&sp, aw, ah, &d, err, sizeof err);
  CHECKF(st == HR_OK, "%s: create: %s", v->name, err);
  if (st) goto done;

  int64_t next = 0, popped_fused = 0, last_dts = 0, nread = 0;
  int have = 0, eof = 0;
  double *got_dt = malloc(sizeof *got_dt * (size_t)nc);
  int *got_fused = malloc(sizeof *got_fused * (size_t)nc);
  int max_lag = 0, px_bad = 0, occ_bad = 0, n65535 = 0;
  int64_t occ_on = 0, person_valid = 0;
  uint16_t *valid = malloc(sizeof *valid * (size_t)aw * (size_t)ah * 4);
  size_t nvalid = 0, vcap = (size_t)aw * ah * 4;
  /* the raw depth maps by their (modified) timestamp, for the pixel checks */
  uint16_t **raw = calloc((size_t)nd + 1, sizeof *raw);
  int rw = 0, rh = 0;
  for (int i = 0; i <= nc; i++) {
    hr_stream_depth dd;
    if (i < nc) {
      while (!eof && (!have || last_dts <= ct[i] + w_ns)) {
        hr_frame f;
        int r = hr_source_read(src, &f);
        if (r == HR_EEOF) { eof = 1; CHECK_EQ_INT(hr__depth_push_depth(d, NULL), HR_OK); break; }
        CHECK_EQ_INT(r, HR_OK);
        if (r) break;
        have = 1;
        last_dts = f.ts_ns;
        nread++;
        CHECK_EQ_INT(hr__depth_push_depth(d, &f), HR_OK);
      }
      st = hr__depth_push_color(d, i, ct[i], alpha, aw, ah, &dd, NULL);
      CHECKF(st == HR_OK, "%s: color %d: %d %s", v->name, i, st, hr__depth_last_error(d));
    } else {
      CHECK_EQ_INT(hr__depth_flush(d), HR_OK);
    }
    while (hr__depth_pop(d, &dd) == HR_OK) {
      int64_t idx = dd.frame;
      CHECKF(idx == next, "%s: decision for %lld, expected %lld", v->name, (long long)idx, (long long)next);
      if (idx < 0 || idx >= nc) continue;
      got_dt[idx] = dd.dt_ms;
      got_fused[idx] = dd.fused;
      popped_fused += dd.fused;
      next++;
      int j = match[idx];
      CHECK(dd.fused == (j >= 0) && dd.fused == (dd.person_mm != NULL) && dd.fused == (dd.occlusion != NULL));
      if (j < 0 || !dd.fused || dd.width != aw || dd.height != ah) continue;
      /* values from the paired depth map, nearest sample */
      if (!raw[j] && hr__depth_png_read(de[j].path, 1000, &raw[j], &rw, &rh, err, sizeof err)) { px_bad++; continue; }
      for (int y = 0; y < ah; y++)
        for (int x = 0; x < aw; x++) {
          size_t k = (size_t)y * aw + x;
          int sx = (int)(((2 * (int64_t)x + 1) * rw) / (2 * aw)), sy = (int)(((2 * (int64_t)y + 1) * rh) / (2 * ah));
          uint16_t rv = raw[j][(size_t)sy * rw + sx];
          n65535 += rv == 65535 && alpha[k] >= 0.5f;
          uint16_t want = alpha[k] >= 0.5f ? to_mm(rv) : 0;
          uint16_t got = dd.person_mm[k];
          if (got != want) px_bad++;
          if (got) { person_valid++; if (nvalid < vcap) valid[nvalid++] = got; }
          uint8_t wo = got && got < occlude_m * 1000 ? 255 : 0;
          if (dd.occlusion[k] != wo) occ_bad++;
          occ_on += dd.occlusion[k] == 255;
        }
      free(raw[j]);
      raw[j] = NULL;
    }
    if (i < nc && i + 1 - next > max_lag) max_lag = (int)(i + 1 - next);
  }
  CHECK_EQ_INT(next, nc);

  /* Decisions against the reference greedy, exactly. */
  int bad = 0, over = 0;
  double max_dt = 0;
  for (int i = 0; i < nc && i < next; i++) {
    int j = match[i];
    if (j < 0) { if (!isnan(got_dt[i]) || got_fused[i]) bad++; continue; }
    double want = (double)(dt[j] - ct[i]) / 1e6;
    if (!(fabs(got_dt[i] - want) < 1e-9) || !got_fused[i]) bad++;
    if (fabs(got_dt[i]) > v->window_ms) over++;
    if (fabs(got_dt[i]) > max_dt) max_dt = fabs(got_dt[i]);
  }
  hr_stream_stats ss;
  memset(&ss, 0, sizeof ss);
  hr__depth_stats(d, &ss);
  CHECKF(bad == 0, "%s: %d decisions differ from the reference greedy", v->name, bad);
  CHECKF(over == 0, "%s: %d pairs beyond %g ms", v->name, over, v->window_ms);
  CHECK_EQ_INT(popped_fused, ref_pairs);
  CHECK_EQ_INT(ss.depth_pairs, ref_pairs);
  CHECK_EQ_INT(ss.depth_fused, ref_pairs);
  CHECK_EQ_INT(ss.depth_unpaired, nc - ref_pairs);
  CHECK_EQ_INT(ss.depth_frames, nd);
  CHECK_EQ_INT(nread, nd);
  CHECK_EQ_INT(ss.depth_unused, nd - ref_pairs);
  CHECK_EQ_INT(ss.depth_forced + ss.depth_refused, 0);
  CHECK(ss.depth_held_peak <= HR_STREAM_DEPTH_POOL);
  CHECK(ss.depth_max_abs_dt_ms <= v->window_ms);
  CHECKF(px_bad == 0, "%s: %d depth pixels differ from the nearest depth sample", v->name, px_bad);
  CHECKF(occ_bad == 0, "%s: %d occlusion pixels inconsistent with the person depth", v->name, occ_bad);
  if (ref_pairs) {
    qsort(valid, nvalid, sizeof *valid, cmp_u16);
    unsigned med = nvalid ? valid[nvalid / 2] : 0;
    CHECKF(med >= 300 && med <= 3000, "%s: median person depth %u mm", v->name, med);
    CHECKF(occ_on > 0 && occ_on < person_valid, "%s: %lld occluding of %lld valid person pixels", v->name,
           (long long)occ_on, (long long)person_valid);
    printf("  %-10s alpha %dx%d: %3d pairs, %3d unpaired, max |dt| %6.3f ms (window %g), median %u mm, "
           "occluding %4.1f%%, 65535 in person %d, lag <= %d frames, depth held <= %d, align+fuse %.0f us/frame (worst %.0f)\n",
           v->name, aw, ah, ref_pairs, nc - ref_pairs, max_dt, v->window_ms, med, 100.0 * occ_on / (double)person_valid,
           n65535, max_lag, ss.depth_held_peak, ss.depth_ms * 1e3 / (double)nc, ss.depth_ms_max * 1e3);
  }
  for (int j = 0; j <= nd; j++) free(raw[j]);
  free(raw);
  free(valid);
  free(got_dt);
  free(got_fused);
done:
  hr__depth_destroy(d);
  hr_source_destroy(src);
  free(alpha);
  free(match);
  free(ct);
  free(dt);
  free(de);
}

int main(void) {
  char base[512], p[PATH_MAX + 32], err[512];
  if (!hr_test_path("HR_DATA_DIR", "realsense-d435-desk", base, sizeof base)) SKIP("HR_DATA_DIR is not set");
  snprintf(p, sizeof p, "%s/rgb.txt", base);
  if (!file_exists(p)) SKIP("%s is missing", p);
  /* Absolute paths, so the modified lists in the temp folder point at the real PNGs. */
  char absbase[PATH_MAX];
  if (!realpath(base, absbase)) SKIP("%s: %s", base, strerror(errno));
  snprintf(p, sizeof p, "%s/rgb.txt", absbase);
  CHECK_EQ_INT(hr__tum_list_load(p, true, &rgb, err, sizeof err), HR_OK);
  snprintf(p, sizeof p, "%s/depth.txt", absbase);
  CHECK_EQ_INT(hr__tum_list_load(p, true, &dep, err, sizeof err), HR_OK);
  CHECK(rgb.n == 100 && dep.n == 100);
  if (rgb.n < 2 || dep.n < 2) return hr_test_finish("test_depth_fuse");

  /* Occlusion threshold at the first depth map's median, so both sides of it show up. */
  uint16_t *px = NULL;
  int w = 0, h = 0;
  CHECK_EQ_INT(hr__depth_png_read(dep.v[0].path, 1000, &px, &w, &h, err, sizeof err), HR_OK);
  size_t n = 0;
  for (size_t i = 0; i < (size_t)w * h; i++) if (px[i] && px[i] != 65535) px[n++] = px[i];
  qsort(px, n, sizeof *px, cmp_u16);
  occlude_m = n ? px[n / 2] / 1000.0 : 1.0;
  free(px);
  printf("test_depth_fuse: %d color, %d depth frames %dx%d, occlusion at %.3f m\n", rgb.n, dep.n, w, h, occlude_m);

  snprintf(tmp_root, sizeof tmp_root, "/tmp/hr_depth_fuse_XXXXXX");
  if (!mkdtemp(tmp_root)) SKIP("mkdtemp: %s", strerror(errno));
  static const variant vs[] = {
      {"exact", 0, 0, 0, 0, 640, 480, 16},
      {"shift5", 5 * MS, 0, 0, 0, 640, 480, 16},
      {"shift20", 20 * MS, 0, 0, 0, 640, 480, 16},
      {"jitter6", 0, 6, 0, 0, 640, 480, 16},
      {"drop30", 0, 0, 0.3, 0, 640, 480, 16},
      {"drop30j6", 0, 6, 0.3, 0, 320, 240, 16},   /* and an alpha smaller than the depth */
      {"shift5big", 5 * MS, 0, 0, 0, 800, 600, 16}, /* and one larger */
      {"cut40", 3 * MS, 0, 0, 40, 640, 480, 16},  /* depth list ends early */
  };
  for (int i = 0; i < (int)(sizeof vs / sizeof vs[0]); i++) run_variant(&vs[i], i);
  nftw(tmp_root, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
  hr__tum_list_free(&rgb);
  hr__tum_list_free(&dep);
  return hr_test_finish("test_depth_fuse");
}
