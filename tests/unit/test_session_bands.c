/* Convolutions in horizontal bands (plan.h, hr__conv_bands; issue 15): the band layout covers the
 * output once, each band reads only rows of the image with the padding it sees, and at most three
 * band shapes exist, so their indirection is a fraction of the whole convolution's. Then XNNPACK
 * itself: for 3x3 with padding, stride 2 with uneven padding, dilation 2 and VALID, the bands as
 * exec.c runs them (clones of sealed kernel-cache templates, one per band shape, set up on the
 * band's rows, run as the tasks of a two-thread pool) give the whole convolution's output bit
 * for bit. */
#include <math.h>
#include <pthreadpool.h>
#include <stdint.h>
#include <xnnpack.h>
#include "hr_test.h"
#include "plan/plan.h"
#include "session/kcache.h"

static void fill(float *x, size_t n, unsigned s) {
  for (size_t i = 0; i < n; i++) { s = s * 1664525u + 1013904223u; x[i] = (float)(s >> 8) / 16777216.f - 0.5f; }
}

/* ---- layout ------------------------------------------------------------------------------- */
static int n_layouts;
static void check_layout(int64_t ih, int64_t ow, int k, int s, int d, int pt, int pb_same) {
  int64_t eff = (int64_t)(k - 1) * d + 1;
  int64_t oh = pb_same >= 0 ? (ih + pt + pb_same - eff) / s + 1 : (ih - eff) / s + 1; /* pb_same < 0: VALID */
  if (pb_same < 0) pt = 0;
  int64_t pb = (oh - 1) * s + eff - ih - pt;
  int nb = hr__conv_bands(1, ih, oh, ow, k, k, s, d, pt, NULL);
  int64_t whole = oh * ow * k * k * 8;
  if (whole < HR__BAND_MIN_BYTES) { CHECKF(nb == 0, "ih %lld ow %lld: banded below the threshold", (long long)ih, (long long)ow); return; }
  CHECK(hr__conv_bands(2, ih, oh, ow, k, k, s, d, pt, NULL) == 0); /* batches run whole */
  if (!nb) return;
  n_layouts++;
  hr__band *b = calloc((size_t)nb, sizeof *b);
  CHECK(hr__conv_bands(1, ih, oh, ow, k, k, s, d, pt, b) == nb);
  int64_t y = 0, shape_rows = 0;
  int shapes = 0, ok = 1;
  for (int i = 0; i < nb; i++) {
    ok &= b[i].out0 == y && b[i].out_rows > 0;
    ok &= b[i].in0 >= 0 && b[i].in_rows > 0 && b[i].in0 + b[i].in_rows <= ih;
    ok &= b[i].in0 == (y * s - pt < 0 ? 0 : y * s - pt) && b[i].pt >= 0 && b[i].pt <= pt && b[i].pb >= 0 && b[i].pb <= (pb > 0 ? pb : 0);
    ok &= (b[i].in_rows + b[i].pt + b[i].pb - eff) / s + 1 == b[i].out_rows; /* XNNPACK's output height for the band */
    int dup = 0;
    for (int j = 0; j < i && !dup; j++) dup = b[j].in_rows == b[i].in_rows && b[j].pt == b[i].pt && b[j].pb == b[i].pb;
    if (!dup) { shapes++; shape_rows += b[i].out_rows; }
    y += b[i].out_rows;
  }
  ok &= y == oh;
  CHECKF(ok, "ih %lld ow %lld k %d s %d d %d pt %d: the bands do not tile the output", (long long)ih, (long long)ow, k, s, d, pt);
  CHECKF(shapes <= 3, "ih %lld: %d band shapes", (long long)ih, shapes);
  /* fewer bands only when those between the first and the last are one row each */
  CHECKF((nb >= HR__BAND_MIN_COUNT || (nb > 2 && b[1].out_rows == 1)) && nb <= HR__BAND_MAX + 2, "ih %lld: %d bands", (long long)ih, nb);
  CHECKF(shape_rows * 3 <= oh, "ih %lld: bands' shapes hold %lld of %lld rows", (long long)ih, (long long)shape_rows, (long long)oh);
  free(b);
}

/* ---- XNNPACK ------------------------------------------------------------------------------- */
typedef struct geom { const char *name; int ih, iw, c, oc, k, s, d, pt, pb, pl, pr; } geom;
typedef struct key { const geom *g; int64_t in_rows; int pt, pb; } key;
static float *weights, *bias;

static enum xnn_status create(const geom *g, int pt, int pb, xnn_operator_t *op) {
  return xnn_create_convolution2d_nhwc_f32(pt, g->pr, pb, g->pl, g->k, g->k, g->s, g->s, g->d, g->d, 1, g->c, g->oc, g->c, g->oc,
                                           weights, bias, -INFINITY, INFINITY, 0, op);
}
static hr_status build(const void *kp, xnn_operator_t *op) {
  const key *k = kp;
  if (create(k->g, k->pt, k->pb, op) != xnn_status_success) return HR_ENOMEM;
  return xnn_setup_convolution2d_nhwc_f32(*op, 1, (size_t)k->in_rows, k->g->iw, (const float *)(uintptr_t)0x10000000,
                                          (float *)(uintptr_t)0x20000000, NULL) == xnn_status_success ? HR_OK : HR_ENOTSUP;
}
static xnn_operator_t *band_ops;
static void run_band(void *ctx, size_t b) { (void)ctx; xnn_run_operator(band_ops[b], NULL); }

static void check_xnn(hr__kcache *kc, pthreadpool_t pool, const geom *g) {
  int64_t eff = (int64_t)(g->k - 1) * g->d + 1;
  int64_t oh = (g->ih + g->pt + g->pb - eff) / g->s + 1, ow = (g->iw + g->pl + g->pr - eff) / g->s + 1;
  size_t in_n = (size_t)g->ih * g->iw * g->c, out_n = (size_t)(oh * ow * g->oc);
  float *x = malloc(in_n * 4), *whole = calloc(out_n, 4), *banded = calloc(out_n, 4);
  fill(x, in_n, 11);
  xnn_operator_t op = NULL;
  CHECK(create(g, g->pt, g->pb, &op) == xnn_status_success);
  CHECK(xnn_setup_convolution2d_nhwc_f32(op, 1, g->ih, g->iw, x, whole, pool) == xnn_status_success);
  CHECK(xnn_run_operator(op, pool) == xnn_status_success);
  xnn_delete_operator(op);

  int nb = hr__conv_bands(1, g->ih, oh, ow, g->k, g->k, g->s, g->d, g->pt, NULL);
  CHECKF(nb > 0, "%s: not banded", g->name);
  if (nb <= 0) { free(x); free(whole); free(banded); return; }
  hr__band *b = calloc((size_t)nb, sizeof *b);
  hr__kshare **share = calloc((size_t)nb, sizeof *share);
  band_ops = calloc((size_t)nb, sizeof *band_ops);
  hr__conv_bands(1, g->ih, oh, ow, g->k, g->k, g->s, g->d, g->pt, b);
  int64_t shared = 0;
  int n_tmpl0 = 0, n_tmpl1 = 0;
  hr__kcache_bytes(kc, &n_tmpl0);
  for (int i = 0; i < nb; i++) {
    key k;
    memset(&k, 0, sizeof k);
    k.g = g; k.in_rows = b[i].in_rows; k.pt = b[i].pt; k.pb = b[i].pb;
    int64_t bytes = 0;
    CHECK_EQ_INT(hr__kcache_acquire(kc, &k, sizeof k, build, &band_ops[i], &share[i], &bytes), HR_OK);
    int first = 1;
    for (int j = 0; j < i; j++) first &= share[j] != share[i];
    if (first) shared += bytes;
    CHECK(xnn_setup_convolution2d_nhwc_f32(band_ops[i], 1, (size_t)b[i].in_rows, g->iw, x + b[i].in0 * g->iw * g->c,
                                           banded + b[i].out0 * ow * g->oc, NULL) == xnn_status_success);
  }
  hr__kcache_bytes(kc, &n_tmpl1);
  pthreadpool_parallelize_1d(pool, run_band, NULL, (size_t)nb, 0);
  int same = !memcmp(whole, banded, out_n * 4);
  int64_t whole_ind = oh * ow * g->k * g->k * 8;
  printf("%-28s %dx%d -> %lldx%lld: %d bands, %d templates, %lld bytes shared (the whole's indirection alone: %lld); "
         "bit-identical: %s\n", g->name, g->iw, g->ih, (long long)ow, (long long)oh, nb, n_tmpl1 - n_tmpl0, (long long)shared,
         (long long)whole_ind, same ? "yes" : "NO");
  CHECKF(same, "%s: the bands' output differs from the whole convolution's", g->name);
  CHECKF(n_tmpl1 - n_tmpl0 <= 3, "%s: %d templates", g->name, n_tmpl1 - n_tmpl0);
  CHECKF(shared < whole_ind / 2, "%s: the bands hold %lld bytes", g->name, (long long)shared);
  for (int i = 0; i < nb; i++) {
    xnn_delete_operator(band_ops[i]);
    hr__kcache_release(kc, share[i]);
  }
  free(b); free(share); free(band_ops); free(x); free(whole); free(banded);
}

int main(void) {
  /* layout: SAME-like paddings (the graph's), VALID, strides, dilations, sizes from small to 1440 rows */
  static const int ihs[] = {37, 90, 179, 180, 257, 360, 361, 720, 1440};
  for (size_t i = 0; i < sizeof ihs / sizeof *ihs; i++)
    for (int k = 3; k <= 5; k += 2)
      for (int s = 1; s <= 2; s++)
        for (int d = 1; d <= 2; d++) {
          int64_t eff = (int64_t)(k - 1) * d + 1, o = (ihs[i] + s - 1) / s, tot = (o - 1) * s + eff - ihs[i];
          if (tot < 0) tot = 0;
          for (int64_t ow = 120; ow <= 1920; ow *= 2) {
            check_layout(ihs[i], ow, k, s, d, (int)(tot / 2), (int)(tot - tot / 2));
            check_layout(ihs[i], ow, k, s, d, 0, -1);
            check_layout(ihs[i], ow, k, s, d, (int)(tot - tot / 2), (int)(tot / 2)); /* the larger padding on top */
          }
        }
  printf("band layouts checked: %d banded\n", n_layouts);
  CHECK(n_layouts > 100);

  if (xnn_initialize(hr__xnn_allocator()) != xnn_status_success) SKIP("XNNPACK does not initialise on this CPU");
  weights = malloc(sizeof(float) * 5 * 5 * 6 * 8);
  bias = malloc(sizeof(float) * 8);
  fill(weights, 5 * 5 * 6 * 8, 1);
  fill(bias, 8, 2);
  hr__kcache *kc = hr__kcache_create();
  pthreadpool_t pool = pthreadpool_create(2);
  CHECK(kc && pool);
  if (!kc || !pool) return hr_test_finish("test_session_bands");
  hr__kcache_protect(1); /* a band's setup that wrote its template would fault */
  static const geom gs[] = {
      {"3x3 pad 1", 150, 64, 5, 7, 3, 1, 1, 1, 1, 1, 1},
      {"3x3 stride 2 pad 0/1", 300, 128, 3, 8, 3, 2, 1, 0, 1, 0, 1},
      {"3x3 dilation 2 pad 2", 130, 70, 6, 4, 3, 1, 2, 2, 2, 2, 2},
      {"5x5 valid", 140, 60, 4, 6, 5, 1, 1, 0, 0, 0, 0},
  };
  for (size_t i = 0; i < sizeof gs / sizeof *gs; i++) check_xnn(kc, pool, &gs[i]);
  int n = -1;
  hr__kcache_bytes(kc, &n);
  CHECK_EQ_INT(n, 0); /* every template went with its last band */
  hr__kcache_destroy(kc);
  pthreadpool_destroy(pool);
  free(weights); free(bias);
  return hr_test_finish("test_session_bands");
}
