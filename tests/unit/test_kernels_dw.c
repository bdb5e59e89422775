/* Our AVX-512 depthwise convolution (hr__k_dwconv, kernels_avx512.c) against XNNPACK's, which it
 * replaces in the engine: the same operator exec.c would create (depthwise flag, TF's weights, SAME
 * padding, the clamp of the activation), run on the same random input, must give the same bits.
 * RVM's shapes (3x3 and 5x5, strides 1 and 2, dilations 1 and 2, channels a multiple of 16 or not,
 * with and without bias and ReLU) and small odd ones where every pixel meets the border, on the calling thread and
 * over a pool of 3. Also the HardSwish fused after batch norms (hr__k_hswish) against XNNPACK's
 * operator, and the one-pixel 1x1 convolution (hr__k_matvec) against XNNPACK's convolution on a
 * 1x1 image (the operator exec.c would otherwise create: TF's weights turned to O x I), RVM's
 * squeeze-excitation and LR-ASPP shapes and odd ones, with and without bias and ReLU / ReLU6. On a CPU without AVX-512F the engine keeps XNNPACK: nothing to compare, exit 77. */
#include <math.h>
#include <stdint.h>
#include <pthreadpool.h>
#include <xnnpack.h>
#include "hr_test.h"
#include "session/kernels.h"
#include "session/kernels_simd.h"

static uint32_t rng = 4242;
static uint32_t next(void) { rng = rng * 1664525u + 1013904223u; return rng >> 8; }
static float rndf(float lo, float hi) { return lo + (hi - lo) * (float)(next() & 0xffffff) / 16777215.f; }

static void check(pthreadpool_t pool, int H, int W, int C, int K, int s, int dl, int with_bias, int relu) {
  /* TF SAME: out = ceil(in / s), the padding's odd pixel at the bottom / right */
  const int OH = (H + s - 1) / s, OW = (W + s - 1) / s, E = (K - 1) * dl + 1;
  const int th = (OH - 1) * s + E - H > 0 ? (OH - 1) * s + E - H : 0, tw = (OW - 1) * s + E - W > 0 ? (OW - 1) * s + E - W : 0;
  const int pt = th / 2, pl = tw / 2, pb = th - pt, pr = tw - pl;
  const size_t nx = (size_t)H * W * C, no = (size_t)OH * OW * C;
  float *x = malloc(sizeof(float) * nx), *w = malloc(sizeof(float) * (size_t)K * K * C), *b = malloc(sizeof(float) * (size_t)C);
  float *want = malloc(sizeof(float) * no), *got = malloc(sizeof(float) * no);
  for (size_t i = 0; i < nx; i++) x[i] = rndf(-2.f, 2.f);
  for (int i = 0; i < K * K * C; i++) w[i] = rndf(-1.f, 1.f);
  for (int i = 0; i < C; i++) b[i] = rndf(-0.5f, 0.5f);
  const float lo = relu ? 0.f : -INFINITY, hi = INFINITY;
  xnn_operator_t op = NULL;
  CHECK_EQ_INT(xnn_create_convolution2d_nhwc_f32((uint32_t)pt, (uint32_t)pr, (uint32_t)pb, (uint32_t)pl, (uint32_t)K, (uint32_t)K,
                                                 (uint32_t)s, (uint32_t)s, (uint32_t)dl, (uint32_t)dl, (uint32_t)C, 1, 1, (size_t)C, (size_t)C, w,
                                                 with_bias ? b : NULL, lo, hi, XNN_FLAG_DEPTHWISE_CONVOLUTION, &op),
               xnn_status_success);
  CHECK_EQ_INT(xnn_setup_convolution2d_nhwc_f32(op, 1, (size_t)H, (size_t)W, x, want, NULL), xnn_status_success);
  CHECK_EQ_INT(xnn_run_operator(op, NULL), xnn_status_success);
  xnn_delete_operator(op);
  hr__dwconv d;
  CHECK_EQ_INT(hr__dwconv_init(&d, w, with_bias ? b : NULL, H, W, C, OH, OW, K, s, dl, pt, pl, lo, hi), HR_OK);
  memset(got, 0xff, sizeof(float) * no);
  hr__k_dwconv(pool, &d, x, got, NULL);
  size_t bad = 0;
  for (size_t i = 0; i < no; i++) bad += memcmp(&got[i], &want[i], sizeof(float)) != 0;
  CHECKF(bad == 0, "%dx%dx%d %dx%d stride %d dilation %d bias %d relu %d pool %d: %zu of %zu differ", H, W, C, K, K, s, dl, with_bias, relu,
         pool != NULL, bad, no);
  free(x); free(w); free(b); free(want); free(got);
}

/* hr__k_hswish (fused after the batch norm's per-channel ops) against XNNPACK's HardSwish operator:
 * random values over [-8, 8], the kinks (-3, 3), zeros of both signs, an odd count (masked tail). */
static void check_hswish(void) {
  const size_t n = 100003;
  float *x = malloc(sizeof(float) * n), *want = malloc(sizeof(float) * n), *got = malloc(sizeof(float) * n);
  for (size_t i = 0; i < n; i++) x[i] = rndf(-8.f, 8.f);
  x[0] = -0.f; x[1] = 0.f; x[2] = -3.f; x[3] = 3.f; x[4] = nextafterf(-3.f, 0.f); x[5] = nextafterf(3.f, 0.f);
  xnn_operator_t op = NULL;
  CHECK_EQ_INT(xnn_create_hardswish_nc_f32(1, 1, 1, 0, &op), xnn_status_success);
  CHECK_EQ_INT(xnn_setup_hardswish_nc_f32(op, n, x, want, NULL), xnn_status_success);
  CHECK_EQ_INT(xnn_run_operator(op, NULL), xnn_status_success);
  xnn_delete_operator(op);
  memcpy(got, x, sizeof(float) * n);
  hr__k_hswish(got, (int64_t)n);
  size_t bad = 0;
  for (size_t i = 0; i < n; i++) bad += memcmp(&got[i], &want[i], sizeof(float)) != 0;
  CHECKF(bad == 0, "hardswish: %zu of %zu differ from XNNPACK's", bad, n);
  free(x); free(want); free(got);
}

static void check_matvec(pthreadpool_t pool, int K, int N, int with_bias, int act) {
  float *x = malloc(sizeof(float) * (size_t)K), *w = malloc(sizeof(float) * (size_t)K * N), *wt = malloc(sizeof(float) * (size_t)K * N);
  float *b = malloc(sizeof(float) * (size_t)N), *want = malloc(sizeof(float) * (size_t)N), *got = malloc(sizeof(float) * (size_t)N);
  for (int i = 0; i < K; i++) x[i] = rndf(-2.f, 2.f);
  x[0] = -0.f;
  for (int i = 0; i < K * N; i++) w[i] = rndf(-1.f, 1.f);
  for (int k = 0; k < K; k++)
    for (int n = 0; n < N; n++) wt[(size_t)n * K + k] = w[(size_t)k * N + n];
  for (int i = 0; i < N; i++) b[i] = rndf(-0.5f, 0.5f);
  const float lo = act ? 0.f : -INFINITY, hi = act == 2 ? 6.f : INFINITY;
  xnn_operator_t op = NULL;
  CHECK_EQ_INT(xnn_create_convolution2d_nhwc_f32(0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, (size_t)K, (size_t)N, (size_t)K, (size_t)N, wt,
                                                 with_bias ? b : NULL, lo, hi, 0, &op),
               xnn_status_success);
  CHECK_EQ_INT(xnn_setup_convolution2d_nhwc_f32(op, 1, 1, 1, x, want, NULL), xnn_status_success);
  CHECK_EQ_INT(xnn_run_operator(op, NULL), xnn_status_success);
  xnn_delete_operator(op);
  const hr__matvec m = {w, with_bias ? b : NULL, K, N, lo, hi};
  memset(got, 0xff, sizeof(float) * (size_t)N);
  hr__k_matvec(pool, &m, x, got);
  int bad = 0;
  for (int i = 0; i < N; i++) bad += memcmp(&got[i], &want[i], sizeof(float)) != 0;
  CHECKF(bad == 0, "matvec %d -> %d bias %d act %d pool %d: %d of %d differ", K, N, with_bias, act, pool != NULL, bad, N);
  free(x); free(w); free(wt); free(b); free(want); free(got);
}

int main(void) {
  if (!hr__k_dwconv_ok()) {
    printf("test_kernels_dw: no AVX-512F on this CPU: the engine uses XNNPACK's depthwise (skipped)\n");
    return 77;
  }
  CHECK_EQ_INT(xnn_initialize(NULL), xnn_status_success);
  pthreadpool_t pools[2] = {NULL, pthreadpool_create(3)};
  for (int pi = 0; pi < 2; pi++) {
    check(pools[pi], 23, 30, 960, 5, 1, 1, 0, 0);   /* RVM's encoder: no bias (batch norm after) */
    check(pools[pi], 23, 30, 184, 3, 1, 1, 1, 1);   /* 11.5 blocks */
    check(pools[pi], 45, 60, 240, 3, 2, 1, 1, 0);
    check(pools[pi], 90, 120, 72, 5, 2, 1, 1, 1);
    check(pools[pi], 36, 48, 16, 3, 1, 1, 1, 1);
    check(pools[pi], 36, 48, 64, 3, 2, 1, 1, 1);
    check(pools[pi], 7, 5, 40, 5, 1, 1, 1, 0);      /* every pixel meets the border */
    check(pools[pi], 3, 2, 8, 5, 2, 1, 0, 1);       /* narrower than the kernel, under one block */
    check(pools[pi], 9, 11, 33, 3, 2, 1, 1, 1);
    check(pools[pi], 23, 30, 960, 5, 1, 2, 0, 0);   /* RVM's dilated last blocks (SpaceToBatch folded) */
    check(pools[pi], 23, 30, 672, 5, 1, 2, 1, 1);
    check(pools[pi], 11, 9, 24, 3, 1, 3, 1, 0);     /* dilation wider than the image in places */
    /* the three-row bands (HR__DW_TRIPLE): bands of one and two rows (19 = 3 x 6 + 1 with dilation
     * 2: groups of 6 rows), a last chunk of one pixel, a single row, a part block with dilation 2 */
    check(pools[pi], 19, 17, 40, 5, 1, 2, 1, 1);
    check(pools[pi], 20, 9, 16, 3, 1, 1, 0, 0);
    check(pools[pi], 1, 8, 16, 3, 1, 1, 1, 0);
    check(pools[pi], 4, 26, 200, 3, 1, 2, 0, 1);
  }
  for (int pi = 0; pi < 2; pi++) {
    check_matvec(pools[pi], 960, 240, 1, 1);   /* squeeze-excitation: ReLU after the first */
    check_matvec(pools[pi], 240, 960, 1, 0);
    check_matvec(pools[pi], 672, 168, 1, 1);
    check_matvec(pools[pi], 168, 672, 1, 0);
    check_matvec(pools[pi], 480, 120, 1, 2);
    check_matvec(pools[pi], 960, 128, 0, 0);   /* LR-ASPP's pooled branch: no bias */
    check_matvec(pools[pi], 72, 24, 1, 1);
    check_matvec(pools[pi], 17, 33, 1, 2);     /* a masked last block */
    check_matvec(pools[pi], 5, 7, 0, 1);
  }
  check_hswish();
  pthreadpool_destroy(pools[1]);
  return hr_test_finish("test_kernels_dw");
}
