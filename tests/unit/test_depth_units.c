/* Depth fusion (tools/headroom/run_depth.c) on small synthetic TUM folders: millimetre conversion
 * (scale 5000, 0 and 65535 invalid), nearest resampling, the occlusion threshold at its boundary,
 * dense depth that overflows the pool (forced decisions, pool stalls, yet every fused PNG holds the
 * depth frame it was paired with), unreadable depth files, clocks that never meet, early end of
 * the depth list, write errors, and misuse (order, undrained decisions, after finish). */
#include "../../tools/headroom/run_depth.c"
#include <ftw.h>
#include <unistd.h>
#include "io/tum.h"
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

typedef struct { int64_t index; double dt; int fused; } dec;

/* Feed n color frames at cts with one alpha; collect decisions in order (checked). */
static int feed(depth_ctx *d, const int64_t *cts, int n, const float *alpha, int aw, int ah, dec *out, int *max_lag) {
  int got = 0;
  *max_lag = 0;
  for (int i = 0; i <= n; i++) {
    int st = i < n ? depth_on_color(d, i, cts[i], alpha, aw, ah) : depth_finish(d);
    CHECKF(st == HR_OK, "frame %d: %d (%s)", i, st, d->err);
    while (got < n + 1 && depth_pop(d, &out[got].index, &out[got].dt, &out[got].fused)) {
      CHECK_EQ_INT(out[got].index, got);
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
  char dir[400], out[500];
  snprintf(dir, sizeof dir, "%s/values", root);
  snprintf(out, sizeof out, "%s/out", dir);
  int64_t ts[3] = {1000 * MS, 1033 * MS, 1066 * MS};
  make_folder(dir, ts, 3, 5000, row0, 6, -1);
  /* Alpha 16x12 (twice the depth size), 1 but for its last column. */
  enum { AW = 16, AH = 12 };
  float alpha[AW * AH];
  for (int i = 0; i < AW * AH; i++) alpha[i] = (i % AW) == AW - 1 ? 0.f : 1.f;
  depth_opts o = {dir, 5000, 16, 0.5, out, AW, AH};
  depth_ctx *d = NULL;
  char err[512];
  CHECK_EQ_INT(depth_open(&d, &o, err, sizeof err), HR_OK);
  if (!d) return;
  CHECK_EQ_INT(d->occl_thr, 500);
  int64_t cts[3] = {1000 * MS + 2 * MS, 1033 * MS - 5 * MS, 1066 * MS + 16 * MS};   /* last one: exactly the window */
  dec de[4];
  int lag;
  feed(d, cts, 3, alpha, AW, AH, de, &lag);
  for (int i = 0; i < 3; i++) CHECKF(de[i].fused, "frame %d not fused", i);
  CHECK_NEAR(de[0].dt, -2.0, 1e-9);
  CHECK_NEAR(de[1].dt, 5.0, 1e-9);
  CHECK_NEAR(de[2].dt, -16.0, 1e-9);
  for (int i = 0; i < 3; i++) {
    char p[700];
    snprintf(p, sizeof p, "%s/depth/%06d.png", out, i);
    uint16_t *px = NULL;
    int w, h;
    CHECK_EQ_INT(hr__depth_png_read(p, 1000, &px, &w, &h, err, sizeof err), HR_OK);
    if (!px) continue;
    CHECK(w == AW && h == AH);
    static const uint16_t want0[] = {0, 0, 499, 500, 13107, 1};
    int bad = 0;
    for (int y = 0; y < AH; y++)
      for (int x = 0; x < AW; x++) {
        int sx = x / 2, sy = y / 2;
        uint16_t want = x == AW - 1 ? 0 : sy == 0 && sx < 6 ? want0[sx] : (uint16_t)((5000 + i) / 5.0 + 0.5);
        bad += px[y * AW + x] != want;
      }
    CHECKF(bad == 0, "frame %d: %d pixels off", i, bad);
    free(px);
    /* Occlusion: 0 < mm < 500 -> 255: the 499 mm and 1 mm columns only, and not in alpha's last column. */
    snprintf(p, sizeof p, "%s/occlusion/%06d.png", out, i);
    hr_source *s = NULL;
    hr_frame f;
    CHECK_EQ_INT(hr_source_open(p, NULL, &s, err, sizeof err), HR_OK);
    if (s && hr_source_read(s, &f) == HR_OK) {
      int obad = 0;
      for (int y = 0; y < AH; y++)
        for (int x = 0; x < AW; x++) {
          int sx = x / 2, sy = y / 2;
          int want = x != AW - 1 && sy == 0 && (sx == 2 || sx == 5) ? 255 : 0;
          obad += ((const uint8_t *)f.planes[0])[y * f.strides[0] + 3 * x] != want;
        }
      CHECKF(obad == 0, "frame %d: %d occlusion pixels off", i, obad);
    }
    hr_source_destroy(s);
  }
  /* The newest occlusion mask is available for the overlay. */
  int64_t oi = -1;
  CHECK(depth_last_occlusion(d, &oi) != NULL && oi == 2);
  /* After finish: misuse. */
  CHECK_EQ_INT(depth_on_color(d, 3, 2000 * MS, alpha, AW, AH), HR_EMISUSE);
  char sum[1024];
  depth_summary(d, sum, sizeof sum);
  CHECK(strstr(sum, "3 fused") != NULL);
  printf("  values: %s\n", sum);
  depth_close(d);
}

/* Same size at 1000 units/m (the SIMD path) with a width that leaves tails of every step size:
 * every pixel against the definition, including NaN and exactly-0.5 alpha, 0, 65535 and values
 * on both sides of the occlusion threshold. */
static void test_direct(void) {
  enum { W = 37, H = 5 };
  char dir[400], out[500], err[512], name[700];
  snprintf(dir, sizeof dir, "%s/direct", root);
  snprintf(out, sizeof out, "%s/out", dir);
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
  depth_opts o = {dir, 1000, 16, 0.5, out, W, H};
  depth_ctx *d = NULL;
  CHECK_EQ_INT(depth_open(&d, &o, err, sizeof err), HR_OK);
  if (!d) return;
  CHECK_EQ_INT(depth_on_color(d, 0, 10000 * MS, alpha, W, H), HR_OK);
  CHECK_EQ_INT(depth_finish(d), HR_OK);
  CHECK_EQ_INT(d->fused, 1);
  int bad = 0, obad = 0;
  for (int i = 0; i < W * H; i++) {
    uint16_t want = alpha[i] >= 0.5f && px[i] != 65535 ? px[i] : 0;
    uint8_t wo = want > 0 && want < 500 ? 255 : 0;
    bad += d->dout[i] != want;
    obad += d->occ[i] != wo;
  }
  CHECKF(bad == 0 && obad == 0, "%d depth, %d occlusion pixels off", bad, obad);
  depth_close(d);
}

/* Depth at 500 Hz against color at 30 Hz: ~25 depth frames per color, more than the pool holds.
 * Decisions are forced and reads wait (pool stalls), but every fused PNG must carry the value of
 * the very depth frame its dt names (a recycled pool buffer would show another frame's value). */
static void test_dense(void) {
  enum { ND = 600, NC = 30, AW = 8, AH = 6 };
  char dir[400], out[500];
  snprintf(dir, sizeof dir, "%s/dense", root);
  snprintf(out, sizeof out, "%s/out", dir);
  static int64_t ts[ND];
  for (int j = 0; j < ND; j++) ts[j] = 5000 * MS + j * 2 * MS + 300000;   /* 0.3 ms off the color grid */
  make_folder(dir, ts, ND, 1000, NULL, 0, -1);
  float alpha[AW * AH];
  for (int i = 0; i < AW * AH; i++) alpha[i] = 1.f;
  depth_opts o = {dir, 1000, 16, 0, out, AW, AH};
  depth_ctx *d = NULL;
  char err[512];
  CHECK_EQ_INT(depth_open(&d, &o, err, sizeof err), HR_OK);
  if (!d) return;
  int64_t cts[NC];
  for (int i = 0; i < NC; i++) cts[i] = 5000 * MS + llround(i * 1e9 / 30);
  dec de[NC + 1];
  int lag;
  feed(d, cts, NC, alpha, AW, AH, de, &lag);
  int fused = 0, wrong = 0, far = 0;
  char used[ND] = {0};
  for (int i = 0; i < NC; i++) {
    if (!de[i].fused) continue;
    fused++;
    if (fabs(de[i].dt) > 16) far++;
    int64_t dts = cts[i] + llround(de[i].dt * 1e6);
    int j = (int)((dts - 5000 * MS - 300000) / (2 * MS));
    if (j < 0 || j >= ND || ts[j] != dts || used[j]++) { wrong++; continue; }
    char p[700];
    snprintf(p, sizeof p, "%s/depth/%06d.png", out, i);
    uint16_t *px = NULL;
    int w, h;
    if (hr__depth_png_read(p, 1000, &px, &w, &h, err, sizeof err)) { wrong++; continue; }
    for (int k = 0; k < w * h; k++) if (px[k] != 1000 + j) { wrong++; break; }
    free(px);
  }
  CHECK(fused >= NC - 2);
  CHECKF(far == 0 && wrong == 0, "%d beyond the window, %d fused from the wrong depth frame", far, wrong);
  /* The aligner holds at most DEPTH_HELD_CAP; one more between a push and its forced decision. */
  CHECK(d->held_peak <= DEPTH_HELD_CAP + 1 && d->held_peak < DEPTH_POOL);
  CHECK(d->forced > 0);
  char sum[1024];
  depth_summary(d, sum, sizeof sum);
  printf("  dense: %d of %d fused, lag <= %d; %s\n", fused, NC, lag, sum);
  depth_close(d);
}

/* Clocks that never meet, an unreadable file, the list ending early, a write error. */
static void test_streams(void) {
  enum { N = 20, AW = 8, AH = 6 };
  float alpha[AW * AH];
  for (int i = 0; i < AW * AH; i++) alpha[i] = 1.f;
  int64_t cts[N], ts[N];
  for (int i = 0; i < N; i++) cts[i] = 100000 * MS + i * 33 * MS;
  dec de[N + 1];
  char dir[400], out[500], err[512], sum[1024];
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
    snprintf(out, sizeof out, "%s/out", dir);
    make_folder(dir, ts, cases[c].n, 700, NULL, 0, cases[c].bad);
    depth_opts o = {dir, 0 /* default 1000 */, 16, 0, out, AW, AH};
    depth_ctx *d = NULL;
    CHECK_EQ_INT(depth_open(&d, &o, err, sizeof err), HR_OK);
    if (!d) continue;
    feed(d, cts, N, alpha, AW, AH, de, &lag);
    int fused = 0;
    for (int i = 0; i < N; i++) {
      fused += de[i].fused;
      CHECK(de[i].fused == !isnan(de[i].dt));
    }
    CHECKF(fused == cases[c].want_pairs, "%s: %d fused", cases[c].name, fused);
    CHECKF(lag <= 2, "%s: decisions lag %d frames", cases[c].name, lag);
    CHECK_EQ_INT(d->read_errors, cases[c].bad >= 0);
    depth_summary(d, sum, sizeof sum);
    printf("  %s: lag <= %d; %s\n", cases[c].name, lag, sum);
    depth_close(d);
  }

  /* A write error: the output folder vanishes after open. Reported, the decision still comes. */
  for (int j = 0; j < N; j++) ts[j] = cts[j];
  snprintf(dir, sizeof dir, "%s/writeerr", root);
  snprintf(out, sizeof out, "%s/out", dir);
  make_folder(dir, ts, N, 700, NULL, 0, -1);
  depth_opts o = {dir, 1000, 16, 0, out, AW, AH};
  depth_ctx *d = NULL;
  CHECK_EQ_INT(depth_open(&d, &o, err, sizeof err), HR_OK);
  if (d) {
    nftw(out, rm_cb, 8, FTW_DEPTH | FTW_PHYS);
    int st = depth_on_color(d, 0, cts[0], alpha, AW, AH);
    st = st ? st : depth_on_color(d, 1, cts[1], alpha, AW, AH);
    CHECK_EQ_INT(st, HR_EIO);
    int64_t idx;
    double ms;
    int fu;
    CHECK(depth_pop(d, &idx, &ms, &fu) == 1 && idx == 0 && ms == 0 && fu == 0);
    depth_summary(d, sum, sizeof sum);
    CHECK(strstr(sum, "1 write errors") != NULL && strstr(sum, "cannot write") != NULL);
    printf("  write error: %s\n", sum);
    depth_close(d);
  }
}

static void test_misuse(void) {
  enum { AW = 4, AH = 4, N = 40 };
  char dir[400], out[500], err[512];
  snprintf(dir, sizeof dir, "%s/misuse", root);
  snprintf(out, sizeof out, "%s/out", dir);
  int64_t ts[N];
  for (int j = 0; j < N; j++) ts[j] = 7000 * MS + j * 33 * MS;
  make_folder(dir, ts, N, 700, NULL, 0, -1);
  float alpha[AW * AH] = {0};
  depth_ctx *d = NULL;
  depth_opts o = {dir, 1000, 16, 0, out, AW, AH};
  /* Options. */
  depth_opts b = o; b.spec = NULL;
  CHECK_EQ_INT(depth_open(&d, &b, err, sizeof err), HR_EINVAL);
  b = o; b.scale = -5;
  CHECK_EQ_INT(depth_open(&d, &b, err, sizeof err), HR_EINVAL);
  b = o; b.window_ms = NAN;
  CHECK_EQ_INT(depth_open(&d, &b, err, sizeof err), HR_EINVAL);
  b = o; b.occlude_m = -1;
  CHECK_EQ_INT(depth_open(&d, &b, err, sizeof err), HR_EINVAL);
  b = o; b.out_w = 0;
  CHECK_EQ_INT(depth_open(&d, &b, err, sizeof err), HR_EINVAL);
  b = o; b.spec = "/nonexistent/folder";
  CHECK(depth_open(&d, &b, err, sizeof err) != HR_OK && d == NULL && strstr(err, "depth:"));
  char imgdir[500];   /* a folder of images has no depth stream */
  snprintf(imgdir, sizeof imgdir, "%s/images", root);
  mkdir(imgdir, 0755);
  char img[600];
  snprintf(img, sizeof img, "%s/a.png", imgdir);
  uint8_t px[12] = {0};
  hr_png_write_gray8(img, 4, 3, px, 4);
  b = o; b.spec = imgdir;
  CHECK_EQ_INT(depth_open(&d, &b, err, sizeof err), HR_EINVAL);
  printf("  misuse: '%s'\n", err);
  depth_close(NULL);
  char sum[64];
  depth_summary(NULL, sum, sizeof sum);
  CHECK(!strcmp(sum, "off"));

  CHECK_EQ_INT(depth_open(&d, &o, err, sizeof err), HR_OK);
  if (!d) return;
  CHECK_EQ_INT(depth_pop(d, NULL, NULL, NULL), 0);
  CHECK_EQ_INT(depth_on_color(d, 0, ts[0], alpha, AW, AH), HR_OK);
  CHECK_EQ_INT(depth_on_color(d, 1, ts[0], alpha, AW, AH), HR_EINVAL);   /* not after the previous */
  CHECK_EQ_INT(depth_on_color(d, 1, ts[1], NULL, AW, AH), HR_EINVAL);
  /* Never popping: refused once the queue could overflow, nothing lost. */
  int i = 1, st = HR_OK;
  for (; i < N && (st = depth_on_color(d, i, ts[i], alpha, AW, AH)) == HR_OK; i++) {}
  CHECK_EQ_INT(st, HR_EAGAIN);
  int64_t idx, next = 0;
  while (depth_pop(d, &idx, NULL, NULL)) CHECK_EQ_INT(idx, next++);
  CHECK_EQ_INT(depth_on_color(d, i, ts[i], alpha, AW, AH), HR_OK);
  CHECK_EQ_INT(depth_finish(d), HR_OK);
  CHECK_EQ_INT(depth_finish(d), HR_OK);
  while (depth_pop(d, &idx, NULL, NULL)) CHECK_EQ_INT(idx, next++);
  CHECK_EQ_INT(next, i + 1);
  depth_close(d);
}

/* The pool guard, white-box: with a depth frame still held, a read that would recycle its pool
 * buffer is not made (counted as a stall) and the frame stays intact for its pair. */
static void test_pool_guard(void) {
  enum { AW = 4, AH = 4, N = 6 };
  char dir[400], out[500], err[512];
  snprintf(dir, sizeof dir, "%s/guard", root);
  snprintf(out, sizeof out, "%s/out", dir);
  int64_t ts[N];
  for (int j = 0; j < N; j++) ts[j] = 9000 * MS + j * 33 * MS;
  make_folder(dir, ts, N, 700, NULL, 0, -1);
  float alpha[AW * AH];
  for (int i = 0; i < AW * AH; i++) alpha[i] = 1.f;
  depth_opts o = {dir, 1000, 16, 0, out, AW, AH};
  depth_ctx *d = NULL;
  CHECK_EQ_INT(depth_open(&d, &o, err, sizeof err), HR_OK);
  if (!d) return;
  CHECK_EQ_INT(depth_on_color(d, 0, ts[0], alpha, AW, AH), HR_OK);   /* reads depth 0 (paired) and 1 (held) */
  CHECK_EQ_INT(d->held_n, 1);
  CHECK_EQ_INT(depth_oldest_held(d), 2);
  d->reads = 2 + DEPTH_POOL - 1;          /* pretend 14 more reads happened since: one more would recycle it */
  CHECK_EQ_INT(depth_on_color(d, 1, ts[1], alpha, AW, AH), HR_OK);
  CHECK_EQ_INT(d->pool_stalls, 1);
  CHECK_EQ_INT(d->depth_frames, 2);
  int64_t idx;
  double ms;
  int fu;
  CHECK(depth_pop(d, &idx, &ms, &fu) && idx == 0 && fu);
  CHECK(depth_pop(d, &idx, &ms, &fu) && idx == 1 && fu && ms == 0);   /* depth 1, read before the stall */
  depth_close(d);
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
  test_pool_guard();
  nftw(root, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
  return hr_test_finish("test_depth_units");
}
