/* Our Winograd F(4x4, 3x3) convolution (hr__k_wino, wino.c) against XNNPACK's convolution, which it
 * replaces in the engine for 3x3 stride-1 convolutions (plan.c, hr__plan_wino): the operator exec.c
 * would create (TF's HWIO weights turned to OHWI, SAME padding, the clamp of the activation) on the
 * same random input. The sums are reordered by the transforms, so the values are close, not the same
 * bits: within 2e-5 of the output's largest magnitude (RVM's shapes measured 3-9e-6 in
 * bench/wino_probe.c). The split over threads must not change a bit: the calling thread and a pool
 * of 3 give the same output. Nothing outside the output is written. Shapes: RVM's decoder ones at
 * ratio 0.171, and small odd ones where every tile meets the border (sizes not a multiple of 4,
 * channels not a multiple of 16, a 1x1 image), with and without bias, ReLU and ReLU6. And what
 * hr__wino_fits refuses. The epilogue form (hr__k_wino_epi) hands each output row over once, the
 * same bits, and writes nothing to y. The prologue form (hr__k_wino_pro: the input made row by row in
 * the tasks, into rings of 6 rows) gives the same bits, with the epilogue too, and makes every
 * input row, each at most twice (a row two tasks share). Under HR_NO_AVX512=1 the AVX2 variant (cli_no_avx512 runs it so). On a
 * CPU with neither AVX-512F nor AVX2 and FMA the engine keeps XNNPACK: nothing to compare, exit 77. */
#include <math.h>
#include <stdint.h>
#include <string.h>
#include <pthreadpool.h>
#include <xnnpack.h>
#include "hr_test.h"
#include "session/wino.h"

static uint32_t rng = 777;
static uint32_t next(void) { rng = rng * 1664525u + 1013904223u; return rng >> 8; }
static float rndf(float lo, float hi) { return lo + (hi - lo) * (float)(next() & 0xffffff) / 16777215.f; }

#define GUARD 64

/* An epilogue (hr__wino_epi) that copies each row it is handed to where hr__k_wino would have put it,
 * and counts the pixels, so that the rows' mapping to the image can be checked: every pixel once,
 * the same bits as the plain run, y never written. */
typedef struct copy_epi { float *o; int *hits; int K; } copy_epi;
static void copy_row(void *ctx, float *v, int64_t p0, int64_t np) {
  copy_epi *e = ctx;
  memcpy(e->o + p0 * e->K, v, sizeof(float) * (size_t)(np * e->K));
  for (int64_t p = p0; p < p0 + np; p++) __atomic_fetch_add(&e->hits[p], 1, __ATOMIC_RELAXED);
}

/* A prologue (hr__wino_pro) that copies input rows from x and counts how often each is made */
typedef struct copy_pro { const float *x; int *made; int rs, H; } copy_pro;
static void pro_row(void *ctx, int y0, int y1, float *dst) {
  copy_pro *p = ctx;
  if (y0 < 0 || y1 > p->H || y0 >= y1) { __atomic_fetch_add(&p->made[0], 1000, __ATOMIC_RELAXED); return; }
  memcpy(dst, p->x + (size_t)y0 * p->rs, sizeof(float) * (size_t)(y1 - y0) * (size_t)p->rs);
  for (int y = y0; y < y1; y++) __atomic_fetch_add(&p->made[y], 1, __ATOMIC_RELAXED);
}

static void check(pthreadpool_t pool3, int H, int W, int C, int K, int with_bias, int act) {
  const size_t nx = (size_t)H * W * C, no = (size_t)H * W * K;
  float *x = malloc(sizeof(float) * nx), *w = malloc(sizeof(float) * 9 * (size_t)C * K), *wo = malloc(sizeof(float) * 9 * (size_t)C * K);
  float *b = malloc(sizeof(float) * (size_t)K), *want = malloc(sizeof(float) * no);
  float *got1 = malloc(sizeof(float) * (no + GUARD)), *got3 = malloc(sizeof(float) * (no + GUARD));
  for (size_t i = 0; i < nx; i++) x[i] = rndf(-2.f, 2.f);
  const float sc = 1.7f / sqrtf(9.f * (float)C);
  for (size_t i = 0; i < 9 * (size_t)C * K; i++) w[i] = rndf(-sc, sc);
  for (int i = 0; i < K; i++) b[i] = rndf(-0.5f, 0.5f);
  /* HWIO -> OHWI for XNNPACK */
  for (int k = 0; k < K; k++)
    for (int t = 0; t < 9; t++)
      for (int c = 0; c < C; c++) wo[((size_t)k * 9 + t) * C + c] = w[((size_t)t * C + c) * K + k];
  const float lo = act ? 0.f : -INFINITY, hi = act == 2 ? 6.f : INFINITY;
  xnn_operator_t op = NULL;
  CHECK_EQ_INT(xnn_create_convolution2d_nhwc_f32(1, 1, 1, 1, 3, 3, 1, 1, 1, 1, 1, (size_t)C, (size_t)K, (size_t)C, (size_t)K, wo,
                                                 with_bias ? b : NULL, lo, hi, 0, &op),
               xnn_status_success);
  CHECK_EQ_INT(xnn_setup_convolution2d_nhwc_f32(op, 1, (size_t)H, (size_t)W, x, want, NULL), xnn_status_success);
  CHECK_EQ_INT(xnn_run_operator(op, NULL), xnn_status_success);
  xnn_delete_operator(op);

  hr__wino wn;
  CHECK_EQ_INT(hr__wino_init(&wn, w, with_bias ? b : NULL, C, K, lo, hi), HR_OK);
  const int64_t per = hr__wino_scratch_floats(C, K);
  void *smem = malloc(sizeof(float) * (size_t)per * 3 + 64);
  float *scratch = (float *)(((uintptr_t)smem + 63) & ~(uintptr_t)63);
  memset(got1, 0xff, sizeof(float) * (no + GUARD));
  memset(got3, 0xff, sizeof(float) * (no + GUARD));
  hr__k_wino(NULL, &wn, x, got1, H, W, scratch, 1);
  hr__k_wino(pool3, &wn, x, got3, H, W, scratch, 3);
  double mx = 0, md = 0;
  size_t split_bad = 0, guard_bad = 0, below = 0;
  for (size_t i = 0; i < no; i++) {
    if (fabs(want[i]) > mx) mx = fabs(want[i]);
    double d = fabs((double)got1[i] - want[i]);
    if (!(d <= md)) md = d;   /* NaN propagates */
    split_bad += memcmp(&got1[i], &got3[i], sizeof(float)) != 0;
    below += got1[i] < lo || got1[i] > hi;
  }
  const uint32_t ff = 0xffffffffu;
  for (size_t i = no; i < no + GUARD; i++) guard_bad += memcmp(&got1[i], &ff, 4) != 0 || memcmp(&got3[i], &ff, 4) != 0;
  /* the same convolution with an epilogue: the rows it gets are the outputs, each pixel once */
  float *gote = malloc(sizeof(float) * no), *yun = malloc(sizeof(float) * (no + GUARD));
  int *hits = calloc((size_t)H * W, sizeof(int));
  memset(yun, 0xff, sizeof(float) * (no + GUARD));
  copy_epi ce = {gote, hits, K};
  const hr__wino_epi epi = {copy_row, &ce};
  hr__k_wino_epi(pool3, &wn, x, yun, H, W, scratch, 3, &epi);
  size_t epi_bad = 0, hit_bad = 0, y_written = 0;
  for (size_t i = 0; i < no; i++) epi_bad += memcmp(&gote[i], &got1[i], 4) != 0;
  for (size_t i = 0; i < (size_t)H * W; i++) hit_bad += hits[i] != 1;
  for (size_t i = 0; i < no + GUARD; i++) y_written += memcmp(&yun[i], &ff, 4) != 0;
  CHECKF(epi_bad == 0 && hit_bad == 0 && y_written == 0, "%dx%d %d->%d epilogue: %zu outputs differ, %zu pixels not handed over once, %zu floats of y written",
         H, W, C, K, epi_bad, hit_bad, y_written);
  /* the input made by a prologue (copied from x), on the calling thread and on the pool, plain and
   * with the epilogue: the same bits; every row made, none more than twice; x itself never read */
  {
    float *gotp = malloc(sizeof(float) * (no + GUARD)), *gotpe = malloc(sizeof(float) * no);
    const size_t ring_stride = ((size_t)6 * W * C + 15) / 16 * 16;
    void *rmem = malloc(sizeof(float) * ring_stride * 3 + 64);
    float *ring = (float *)(((uintptr_t)rmem + 63) & ~(uintptr_t)63);
    int *made = calloc((size_t)H, sizeof(int));
    size_t pro_bad = 0, pro_epi_bad = 0, rows_bad = 0;
    for (int run = 0; run < 3; run++) {
      copy_pro cp = {x, made, W * C, H};
      const hr__wino_pro pro = {pro_row, &cp, ring, ring_stride};
      memset(made, 0, sizeof(int) * (size_t)H);
      memset(gotp, 0xff, sizeof(float) * (no + GUARD));
      memset(hits, 0, sizeof(int) * (size_t)H * W);
      copy_epi ce2 = {gotpe, hits, K};
      const hr__wino_epi epi2 = {copy_row, &ce2};
      hr__k_wino_pro(run == 0 ? NULL : pool3, &wn, NULL, &pro, run == 2 ? yun : gotp, H, W, scratch, run == 0 ? 1 : 3, run == 2 ? &epi2 : NULL);
      for (int y = 0; y < H; y++) rows_bad += made[y] < 1 || made[y] > 2;
      if (run < 2) {
        for (size_t i = 0; i < no; i++) pro_bad += memcmp(&gotp[i], &got1[i], 4) != 0;
        for (size_t i = no; i < no + GUARD; i++) pro_bad += memcmp(&gotp[i], &ff, 4) != 0;
      } else {
        for (size_t i = 0; i < no; i++) pro_epi_bad += memcmp(&gotpe[i], &got1[i], 4) != 0;
        for (size_t i = 0; i < (size_t)H * W; i++) pro_epi_bad += hits[i] != 1;
      }
    }
    CHECKF(pro_bad == 0 && pro_epi_bad == 0 && rows_bad == 0, "%dx%d %d->%d prologue: %zu outputs differ (%zu with the epilogue), %zu rows made never or more than twice",
           H, W, C, K, pro_bad, pro_epi_bad, rows_bad);
    free(gotp); free(gotpe); free(rmem); free(made);
  }
  free(gote); free(yun); free(hits);
  const double tol = 2e-5 * (mx > 1 ? mx : 1);
  CHECKF(md <= tol, "%dx%d %d->%d bias %d act %d: largest difference %.3g (output's largest %.3g, allowed %.3g)", H, W, C, K, with_bias, act, md,
         mx, tol);
  CHECKF(split_bad == 0, "%dx%d %d->%d: one thread and a pool of 3 differ in %zu of %zu", H, W, C, K, split_bad, no);
  CHECKF(guard_bad == 0, "%dx%d %d->%d: %zu floats written past the output", H, W, C, K, guard_bad);
  CHECKF(below == 0, "%dx%d %d->%d: %zu outputs outside the clamp", H, W, C, K, below);
  hr__wino_free(&wn);
  free(smem); free(x); free(w); free(wo); free(b); free(want); free(got1); free(got3);
}

int main(void) {
  if (!hr__wino_ok()) {
    fprintf(stderr, "SKIP: no AVX-512F nor AVX2+FMA (or HR_WINO=0): the engine keeps XNNPACK's convolutions\n");
    return 77;
  }
  CHECK_EQ_INT(xnn_initialize(NULL), xnn_status_success);
  pthreadpool_t pool3 = pthreadpool_create(3);
  /* RVM's decoder at ratio 0.171 (bench --ops) */
  static const int rvm[][4] = {{123, 164, 59, 32}, {62, 82, 107, 40}, {123, 164, 32, 32}, {31, 41, 171, 80}, {62, 82, 40, 40},
                               {123, 164, 32, 16}, {31, 41, 80, 80}, {62, 82, 40, 20}, {16, 21, 128, 128}, {31, 41, 80, 40}, {16, 21, 128, 64}};
  for (size_t i = 0; i < sizeof rvm / sizeof rvm[0]; i++) check(pool3, rvm[i][0], rvm[i][1], rvm[i][2], rvm[i][3], 1, 1);
  /* odd sizes: partial tiles on both edges, channels off the 16-lane grid, tiny images */
  /* 8x29 and 5x30: 2 blocks of 8 tiles, fewer than the pool's 3 threads, so the pool's run takes
   * blocks of 4 and the calling thread's blocks of 8 (wino.c): the same bits either way */
  static const int odd[][4] = {{1, 1, 3, 5}, {2, 3, 1, 1}, {5, 7, 3, 17}, {9, 13, 35, 16}, {4, 4, 16, 16}, {6, 37, 19, 33}, {33, 5, 48, 31},
                               {8, 29, 20, 24}, {5, 30, 64, 128}};
  for (size_t i = 0; i < sizeof odd / sizeof odd[0]; i++)
    for (int act = 0; act < 3; act++) check(pool3, odd[i][0], odd[i][1], odd[i][2], odd[i][3], act != 1, act);
  /* what it takes and what it leaves to XNNPACK */
  CHECK(hr__wino_fits(3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1));
  CHECK(!hr__wino_fits(3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1));   /* stride 2 */
  CHECK(!hr__wino_fits(3, 3, 1, 1, 2, 2, 1, 1, 1, 1, 1, 1));   /* dilation 2 */
  CHECK(!hr__wino_fits(5, 5, 1, 1, 1, 1, 2, 2, 2, 2, 1, 1));   /* 5x5 */
  CHECK(!hr__wino_fits(1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1));   /* pointwise */
  CHECK(!hr__wino_fits(3, 3, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1));   /* VALID: the output is smaller */
  CHECK(!hr__wino_fits(3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2, 1));   /* groups */
  CHECK(!hr__wino_fits(3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2));   /* batch 2 */
  pthreadpool_destroy(pool3);
  printf("test_kernels_wino: %d checks, %d failures\n", hr_test_checks, hr_test_failures);
  return hr_test_failures ? 1 : 0;
}
