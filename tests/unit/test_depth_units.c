/* Depth fusion (the stream's, src/stream/depth.c, fed as the stream and the CLI feed it: depth
 * read from a TUM folder just far enough ahead of each color frame) on small synthetic TUM folders:
 * millimetre conversion (scale 5000, 0 and 65535 invalid), nearest resampling, the occlusion
 * threshold at its boundary, the same-size SIMD path against the definition, dense depth that
 * overflows the aligner (forced decisions, yet every fused frame holds the depth frame it was
 * paired with: a recycled pool slot would show another frame's value), unreadable depth files,
 * clocks that never meet, early end of the depth list, and misuse (bad params, sizes, order,
 * decisions never popped). */
#include <errno.h>
#include <ftw.h>
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
static char root[256];
static int rm_cb(const char *p, const struct stat *sb, int flag, struct FTW *ftw) { (void)sb; (void)flag; (void)ftw; return remove(p); }

enum { DW = 8, DH = 6 };

/* Depth frame j of a folder: every raw value `base + j`, except a first row of special values. */
static void write_depth(const char *dir, int j, uint16_t base, const uint16_t *row0, int nrow0, char *name, size_t n) {
  uint16_t px[DW * DH];
  for (int i = 0; i < DW * DH; i++) px[i] = (uint16_t)(base + j);
  for (int i = 0; i < nrow0; i++) px[i] = row0[i];
  snprintf(name, n, "%s/d%05d.png", dir, j);
  CHECK_EQ_INT(hr_png_write_gray16(name, DW, DH, px, DW * 2), HR_OK);
}

/* A TUM folder with depth frames at ts[j] (ns); `bad` (if >= 0) is a file that is not a PNG. */
static void make_folder(const char *dir, const int64_t *ts, int n, uint16_t base, const uint16_t *row0, int nrow0, int bad) {
  CHECK(mkdir(dir, 0755) == 0);
  char list[600], name[700];
  snprintf(list, sizeof list, "%s/depth.txt", dir);
  FILE *f = fopen(list, "w");
  for (int j = 0; j < n; j++) {
    if (j == bad) {
      snprintf(name, sizeof name, "%s/d%05d.png", dir, j);
      FILE *g = fopen(name, "w");
      fputs("not a png\n", g);
      fclose(g);
    } else {
      write_depth(dir, j, base, row0, nrow0, name, sizeof name);
    }
    fprintf(f, "%lld.%09lld d%05d.png\n", (long long)(ts[j] / 1000000000), (long long)(ts[j] % 1000000000), j);
  }
  fclose(f);
  snprintf(list, sizeof list, "%s/rgb.txt", dir);
  f = fopen(list, "w");
  fclose(f);
}

typedef struct { int64_t index; double dt; int fused; uint16_t px0; } dec;

/* A fusion for mattes of aw x ah over the TUM folder dir (scale, occlusion at occl m). */
static hr__depth *open_fusion(const char *dir, double scale, double occl, int aw, int ah, hr_source **src) {
  hr_source_params srp;
  hr_source_params_default(&srp);
  srp.stream = HR_SOURCE_STREAM_DEPTH;
  srp.depth_scale = 1000;   /* raw values, as the CLI reads them */
  srp.pool_size = 2;
  char err[512];
  *src = NULL;
  CHECK_EQ_INT(hr_source_open(dir, &srp, src, err, sizeof err), HR_OK);
  if (!*src) return NULL;
  hr_stream_params sp;
  hr_stream_params_default(&sp);
  sp.depth = true;
  sp.depth_scale = scale;
  sp.occlude_m = occl;
  hr_pixfmt fmt;
  hr_source_get_format(*src, &fmt, &sp.depth_width, &sp.depth_height);
  hr__depth *d = NULL;
  CHECK_EQ_INT(hr__depth_create(&sp, aw, ah, &d, err, sizeof err), HR_OK);
  return d;
}

static int read_errors;
static uint8_t *keep_occ;      /* when set: each fused frame's occlusion mask, by frame */

/* Feed n color frames at cts with one alpha, depth read ahead; collect decisions in order
 * (checked), with the person depth's first pixel of each fused one. */
static int feed(hr__depth *d, hr_source *src, const int64_t *cts, int n, const float *alpha, int aw, int ah, dec *out, int *max_lag,
                uint16_t *keep0) {
  int got = 0, have = 0, eof = 0;
  int64_t last = 0;
  *max_lag = 0;
  read_errors = 0;
  for (int i = 0; i <= n; i++) {
    hr_stream_depth dd;
    int st;
    if (i < n) {
      while (!eof && (!have || last <= cts[i] + 16 * MS)) {
        hr_frame f;
        int r = hr_source_read(src, &f);
        if (r == HR_EEOF) { eof = 1; hr__depth_push_depth(d, NULL); break; }
        if (r) { read_errors++; continue; }
        have = 1;
        last = f.ts_ns;
        CHECK_EQ_INT(hr__depth_push_depth(d, &f), HR_OK);
      }
      st = hr__depth_push_color(d, i, cts[i], alpha, aw, ah, &dd, NULL);
    } else {
      st = hr__depth_flush(d);
    }
    CHECKF(st == HR_OK, "frame %d: %d (%s)", i, st, hr__depth_last_error(d));
    while (got < n + 1 && hr__depth_pop(d, &dd) == HR_OK) {
      CHECK_EQ_INT(dd.frame, got);
      out[got] = (dec){dd.frame, dd.dt_ms, dd.fused, dd.person_mm ? dd.person_mm[0] : 0};
      if (keep0 && dd.person_mm) memcpy(keep0 + (size_t)got * aw * ah, dd.person_mm, sizeof *keep0 * (size_t)aw * ah);
      if (keep_occ && dd.occlusion) memcpy(keep_occ + (size_t)got * aw * ah, dd.occlusion, (size_t)aw * ah);
      got++;
    }
    if (i < n && i + 1 - got > *max_lag) *max_lag = i + 1 - got;
  }
  CHECK_EQ_INT(got, n);
  return got;
}

static void test_values(void) {
  /* Scale 5000: raw R -> floor(R / 5 + 0.5) mm. Row 0: no reading, outlier, 499.4 mm, 500 mm,
   * 13107 mm, and 65534 * 1000 / 5000 rounds under 65535: kept. */
  static const uint16_t row0[] = {0, 65535, 2497, 2500, 65534, 5};
  char dir[400];
  snprintf(dir, sizeof dir, "%s/values", root);
  int64_t ts[3] = {1000 * MS, 1033 * MS, 1066 * MS};
  make_folder(dir, ts, 3, 5000, row0, 6, -1);
  /* Alpha 16x12 (twice the depth size), 1 but for its last column. */
  enum { AW = 16, AH = 12 };
  float alpha[AW * AH];
  for (int i = 0; i < AW * AH; i++) alpha[i] = (i % AW) == AW - 1 ? 0.f : 1.f;
  hr_source *src = NULL;
  hr__depth *d = open_fusion(dir, 5000, 0.5, AW, AH, &src);
  if (!d) { hr_source_destroy(src); return; }
  int64_t cts[3] = {1000 * MS + 2 * MS, 1033 * MS - 5 * MS, 1066 * MS + 16 * MS};   /* last one: exactly the window */
  dec de[4];
  static uint16_t keep[3 * AW * AH];
  static uint8_t occ[3 * AW * AH];
  int lag;
  keep_occ = occ;
  feed(d, src, cts, 3, alpha, AW, AH, de, &lag, keep);
  keep_occ = NULL;
  for (int i = 0; i < 3; i++) CHECKF(de[i].fused, "frame %d not fused", i);
  CHECK_NEAR(de[0].dt, -2.0, 1e-9);
  CHECK_NEAR(de[1].dt, 5.0, 1e-9);
  CHECK_NEAR(de[2].dt, -16.0, 1e-9);
  static const uint16_t want0[] = {0, 0, 499, 500, 13107, 1};
  for (int i = 0; i < 3; i++) {
    const uint16_t *px = keep + (size_t)i * AW * AH;
    int bad = 0;
    for (int y = 0; y < AH; y++)
      for (int x = 0; x < AW; x++) {
        int sx = x / 2, sy = y / 2;
        uint16_t want = x == AW - 1 ? 0 : sy == 0 && sx < 6 ? want0[sx] : (uint16_t)((5000 + i) / 5.0 + 0.5);
        bad += px[y * AW + x] != want;
      }
    CHECKF(bad == 0, "frame %d: %d pixels off", i, bad);
  }
  /* Occlusion: 0 < mm < 500 -> 255: the 499 mm and 1 mm columns only, and not in alpha's last column. */
  for (int i = 0; i < 3; i++) {
    int obad = 0;
    for (int y = 0; y < AH; y++)
      for (int x = 0; x < AW; x++) {
        int sx = x / 2, sy = y / 2;
        int want = x != AW - 1 && sy == 0 && (sx == 2 || sx == 5) ? 255 : 0;
        obad += occ[(size_t)i * AW * AH + y * AW + x] != want;
      }
    CHECKF(obad == 0, "frame %d: %d occlusion pixels off", i, obad);
  }
  hr_stream_stats ss;
  memset(&ss, 0, sizeof ss);
  hr__depth_stats(d, &ss);
  CHECK_EQ_INT(ss.depth_fused, 3);
  printf("  values: 3 fused at scale 5000 (499.4 -> 499 mm, 65534 -> 13107 mm, 0 and 65535 -> 0), max |dt| %.1f ms\n", ss.depth_max_abs_dt_ms);
  hr__depth_destroy(d);
  hr_source_destroy(src);
}

/* Same size at 1000 units/m (the SIMD path) with a width that leaves tails of every step size:
 * every pixel against the definition, including NaN and exactly-0.5 alpha, 0, 65535 and values
 * on both sides of the occlusion threshold. */
static void test_direct(void) {
  enum { W = 37, H = 5 };
  char dir[400], name[700];
  snprintf(dir, sizeof dir, "%s/direct", root);
  CHECK(mkdir(dir, 0755) == 0);
  uint16_t px[W * H];
  float alpha[W * H];
  for (int i = 0; i < W * H; i++) {
    px[i] = (uint16_t)((i * 997) % 1200);
    if (i % 11 == 0) px[i] = 65535;
    if (i % 13 == 0) px[i] = 0;
    if (i % 17 == 0) px[i] = 499;
    if (i % 19 == 0) px[i] = 500;
    if (i % 23 == 0) px[i] = 1;
    alpha[i] = i % 7 == 0 ? NAN : i % 5 == 0 ? 0.5f : i % 3 == 0 ? 0.4999f : (float)(i % 2);
  }
  snprintf(name, sizeof name, "%s/d.png", dir);
  CHECK_EQ_INT(hr_png_write_gray16(name, W, H, px, W * 2), HR_OK);
  snprintf(name, sizeof name, "%s/depth.txt", dir);
  FILE *f = fopen(name, "w");
  fputs("10.000000000 d.png\n", f);
  fclose(f);
  snprintf(name, sizeof name, "%s/rgb.txt", dir);
  fclose(fopen(name, "w"));
  hr_source *src = NULL;
  hr__depth *d = open_fusion(dir, 1000, 0.5, W, H, &src);
  if (!d) { hr_source_destroy(src); return; }
  hr_frame fr;
  CHECK_EQ_INT(hr_source_read(src, &fr), HR_OK);
  CHECK_EQ_INT(hr__depth_push_depth(d, &fr), HR_OK);
  hr_stream_depth dd;
  CHECK_EQ_INT(hr__depth_push_color(d, 0, 10000 * MS, alpha, W, H, &dd, NULL), HR_OK);
  CHECK(dd.frame == 0 && dd.fused && dd.person_mm && dd.occlusion);   /* dt 0: decided in its own push */
  int bad = 0, obad = 0;
  for (int i = 0; dd.person_mm && i < W * H; i++) {
    uint16_t want = alpha[i] >= 0.5f && px[i] != 65535 ? px[i] : 0;
    uint8_t wo = want > 0 && want < 500 ? 255 : 0;
    bad += dd.person_mm[i] != want;
    obad += dd.occlusion[i] != wo;
  }
  CHECKF(bad == 0 && obad == 0, "%d depth, %d occlusion pixels off", bad, obad);
  hr__depth_destroy(d);
  hr_source_destroy(src);
}

/* Depth at 500 Hz against color at 30 Hz: ~17 depth frames per color, more than the aligner
 * holds. Decisions are forced, but every fused frame must carry the value of the very depth frame
 * its dt names (a recycled pool slot would show another frame's value). */
static void test_dense(void) {
  enum { ND = 600, NC = 30, AW = 8, AH = 6 };
  char dir[400];
  snprintf(dir, sizeof dir, "%s/dense", root);
  static int64_t ts[ND];
  for (int j = 0; j < ND; j++) ts[j] = 5000 * MS + j * 2 * MS + 300000;   /* 0.3 ms off the color grid */
  make_folder(dir, ts, ND, 1000, NULL, 0, -1);
  float alpha[AW * AH];
  for (int i = 0; i < AW * AH; i++) alpha[i] = 1.f;
  hr_source *src = NULL;
  hr__depth *d = open_fusion(dir, 1000, 0, AW, AH, &src);
  if (!d) { hr_source_destroy(src); return; }
  int64_t cts[NC];
  for (int i = 0; i < NC; i++) cts[i] = 5000 * MS + llround(i * 1e9 / 30);
  dec de[NC + 1];
  static uint16_t keep[NC * AW * AH];
  int lag;
  feed(d, src, cts, NC, alpha, AW, AH, de, &lag, keep);
  int fused = 0, wrong = 0, far = 0;
  char used[ND] = {0};
  for (int i = 0; i < NC; i++) {
    if (!de[i].fused) continue;
    fused++;
    if (fabs(de[i].dt) > 16) far++;
    int64_t dts = cts[i] + llround(de[i].dt * 1e6);
    int j = (int)((dts - 5000 * MS - 300000) / (2 * MS));
    if (j < 0 || j >= ND || ts[j] != dts || used[j]++) { wrong++; continue; }
    for (int k = 0; k < AW * AH; k++) if (keep[(size_t)i * AW * AH + k] != 1000 + j) { wrong++; break; }
  }
  hr_stream_stats ss;
  memset(&ss, 0, sizeof ss);
  hr__depth_stats(d, &ss);
  CHECK(fused >= NC - 2);
  CHECKF(far == 0 && wrong == 0, "%d beyond the window, %d fused from the wrong depth frame", far, wrong);
  /* the aligner holds at most POOL - 1; the pool's last slot takes the push that forces one out */
  CHECK(ss.depth_held_peak <= HR_STREAM_DEPTH_POOL);
  CHECK_EQ_INT(ss.depth_refused, 0);
  CHECK(ss.depth_forced > 0);
  printf("  dense: %d of %d fused, lag <= %d, %lld forced, depth held <= %d of %d\n", fused, NC, lag, (long long)ss.depth_forced,
         ss.depth_held_peak, HR_STREAM_DEPTH_POOL);
  hr__depth_destroy(d);
  hr_source_destroy(src);
}

/* Clocks that never meet, an unreadable file, the list ending early. */
static void test_streams(void) {
  enum { N = 20, AW = 8, AH = 6 };
  float alpha[AW * AH];
  for (int i = 0; i < AW * AH; i++) alpha[i] = 1.f;
  int64_t cts[N], ts[N];
  for (int i = 0; i < N; i++) cts[i] = 100000 * MS + i * 33 * MS;
  dec de[N + 1];
  char dir[400];
  int lag;
  static const struct { const char *name; int64_t off; int n, bad, want_pairs; } cases[] = {
      {"future", 100000 * MS, N, -1, 0},   /* depth 100 s after color */
      {"past", -90000 * MS, N, -1, 0},     /* depth 90 s before color */
      {"badfile", 1 * MS, N, 7, N - 1},    /* one unreadable depth file */
      {"short", 2 * MS, 8, -1, 8},         /* the depth list ends after 8 frames */
  };
  for (int c = 0; c < 4; c++) {
    for (int j = 0; j < N; j++) ts[j] = cts[j] + cases[c].off;
    snprintf(dir, sizeof dir, "%s/%s", root, cases[c].name);
    make_folder(dir, ts, cases[c].n, 700, NULL, 0, cases[c].bad);
    hr_source *src = NULL;
    hr__depth *d = open_fusion(dir, 1000, 0, AW, AH, &src);
    if (!d) { hr_source_destroy(src); continue; }
    feed(d, src, cts, N, alpha, AW, AH, de, &lag, NULL);
    int fused = 0;
    for (int i = 0; i < N; i++) {
      fused += de[i].fused;
      CHECK(de[i].fused == !isnan(de[i].dt));
      if (de[i].fused) CHECK_EQ_INT(de[i].px0, 700 + (cases[c].bad >= 0 && i >= cases[c].bad ? i : i));
    }
    CHECKF(fused == cases[c].want_pairs, "%s: %d fused", cases[c].name, fused);
    CHECKF(lag <= 2, "%s: decisions lag %d frames", cases[c].name, lag);
    CHECK_EQ_INT(read_errors, cases[c].bad >= 0);
    printf("  %s: %d of %d fused, lag <= %d, %d read errors\n", cases[c].name, fused, N, lag, read_errors);
    hr__depth_destroy(d);
    hr_source_destroy(src);
  }
}

static void test_misuse(void) {
  enum { AW = 4, AH = 4, N = 40 };
  char dir[400], err[512];
  snprintf(dir, sizeof dir, "%s/misuse", root);
  int64_t ts[N];
  for (int j = 0; j < N; j++) ts[j] = 7000 * MS + j * 33 * MS;
  make_folder(dir, ts, N, 700, NULL, 0, -1);
  float alpha[AW * AH] = {0};
  /* Params. */
  hr_stream_params sp;
  hr_stream_params_default(&sp);
  sp.depth = true; sp.depth_width = DW; sp.depth_height = DH;
  hr__depth *d = NULL;
  hr_stream_params b = sp; b.depth_scale = -5;
  CHECK_EQ_INT(hr__depth_create(&b, AW, AH, &d, err, sizeof err), HR_EINVAL);
  CHECK(d == NULL && strstr(err, "depth_scale"));
  b = sp; b.depth_window_ms = NAN;
  CHECK_EQ_INT(hr__depth_create(&b, AW, AH, &d, err, sizeof err), HR_EINVAL);
  b = sp; b.occlude_m = -1;
  CHECK_EQ_INT(hr__depth_create(&b, AW, AH, &d, err, sizeof err), HR_EINVAL);
  CHECK_EQ_INT(hr__depth_create(&sp, 0, AH, &d, err, sizeof err), HR_EINVAL);
  b = sp; b.depth_width = 0; b.depth_height = 0;   /* the session's frame size, unset here */
  CHECK_EQ_INT(hr__depth_create(&b, AW, AH, &d, err, sizeof err), HR_EINVAL);
  printf("  misuse: '%s'\n", err);
  hr__depth_destroy(NULL);

  hr_source *src = NULL;
  d = open_fusion(dir, 1000, 0, AW, AH, &src);
  if (!d) { hr_source_destroy(src); return; }
  hr_stream_depth dd;
  CHECK_EQ_INT(hr__depth_pop(d, &dd), HR_EAGAIN);
  /* a depth frame of another size or format, and one out of order: refused, nothing changed */
  hr_frame f;
  CHECK_EQ_INT(hr_source_read(src, &f), HR_OK);
  hr_frame g = f;
  g.width = DW / 2;
  CHECK_EQ_INT(hr__depth_push_depth(d, &g), HR_EINVAL);
  g = f; g.fmt = HR_PIX_GRAY8;
  CHECK_EQ_INT(hr__depth_push_depth(d, &g), HR_EINVAL);
  CHECK_EQ_INT(hr__depth_push_depth(d, &f), HR_OK);
  CHECK_EQ_INT(hr__depth_push_depth(d, &f), HR_EINVAL);   /* the same timestamp again */
  CHECK_EQ_INT(hr__depth_push_color(d, 0, ts[0], alpha, AW, AH, &dd, NULL), HR_OK);
  CHECK_EQ_INT(hr__depth_push_color(d, 1, ts[0], alpha, AW, AH, &dd, NULL), HR_EINVAL);   /* not after the previous */
  CHECK(strstr(hr__depth_last_error(d), "not after") != NULL);
  /* No matte (suspended): not paired, nothing queued for it. */
  CHECK_EQ_INT(hr__depth_push_color(d, 1, ts[1], NULL, AW, AH, &dd, NULL), HR_OK);
  hr_stream_stats ss;
  memset(&ss, 0, sizeof ss);
  hr__depth_stats(d, &ss);
  CHECK_EQ_INT(ss.depth_refused, 4);
  CHECK_EQ_INT(ss.depth_colors, 1);
  /* Never popping: each push drops what the one before reported; the ring never overflows and
   * what is popped at the end is in order. */
  int i = 2;
  for (; i < N; i++) {
    CHECK_EQ_INT(hr_source_read(src, &f), HR_OK);
    CHECK_EQ_INT(hr__depth_push_depth(d, &f), HR_OK);
    CHECK_EQ_INT(hr__depth_push_color(d, i, ts[i - 1], alpha, AW, AH, &dd, NULL), HR_OK);
    CHECK(dd.waiting <= HR_STREAM_DEPTH_RING);
  }
  CHECK_EQ_INT(hr__depth_flush(d), HR_OK);
  int64_t prev = -1;
  int popped = 0;
  while (hr__depth_pop(d, &dd) == HR_OK) { CHECK(dd.frame > prev); prev = dd.frame; popped++; }
  CHECK(popped >= 1 && prev == N - 1);
  hr__depth_stats(d, &ss);
  CHECK_EQ_INT(ss.depth_colors, N - 1);
  CHECK_EQ_INT(ss.depth_pairs + ss.depth_unpaired, N - 1);
  printf("  never popped: %d colors, %lld paired, the last %d decisions popped in order\n", N - 1, (long long)ss.depth_pairs, popped);
  hr__depth_destroy(d);
  hr_source_destroy(src);
}

int main(void) {
  snprintf(root, sizeof root, "/tmp/hr_depth_units_XXXXXX");
  if (!mkdtemp(root)) SKIP("mkdtemp: %s", strerror(errno));
  printf("test_depth_units:\n");
  test_values();
  test_direct();
  test_dense();
  test_streams();
  test_misuse();
  nftw(root, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
  return hr_test_finish("test_depth_units");
}
