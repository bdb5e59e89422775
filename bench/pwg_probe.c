/* pwg_probe: our pointwise-convolution kernel (hr__k_pwg_block, kernels_avx512.c; exec.c K_PWG)
 * against XNNPACK's 1x1 convolution on RVM's shapes, one thread (issue 15: the 1x1 convolutions were
 * ~30% of the CPU frame). For each shape (pixels M, input channels K, outputs N) the same random
 * weights (HWIO, read in place by ours) and input go through both, alternating, REPS times; with
 * ROWS=1 ours in its other order (hr__k_pwg_rows: 8 pixels across all the outputs; exec.c takes it
 * for weights under 64K floats), else blocks of 32 outputs over the pixels (hr__k_pwg_block). With
 * COLD=1 a 64 MB buffer is written before each run (the weights and input out of the caches, as in a
 * frame where the ops before evicted them). Prints each one's median, the ratio, and whether the
 * outputs are the same bits (they must be: the GEMM's order of sums).
 *
 *   pwg_probe [M K N]...   (default: RVM 1920x1440 r0.267's 768x160->960, 768x960->160,
 *                           768x672->160, 768x112->672, 49152x16->64, 12288x24->72)
 *
 * Measured 2026-12-07 on the 2-vCPU AMD EPYC VM (Zen 5, AVX-512), 60 reps, medians, XNNPACK / ours:
 * 1.42 / 1.17 ms (1.22x, 768x160->960), 1.49 / 1.21 (1.24x, 768x960->160), 0.98 / 0.79 (1.25x,
 * 768x672->160), 0.70 / 0.57 (1.22x, 768x112->672), 0.92 / 0.59 (1.55x, 49152x16->64), 0.30 / 0.27
 * (1.10x, 12288x24->72); COLD=1 1.21-1.56x. Same bits in every shape. A first version called per tile
 * of 8 rows and stored through masks with every lane on: 1.12-1.18x (1.67x on 49152x16->64).
 * The same day on an H100 machine's host (Xeon, AVX-512, AMX; noisy), blocks: 1.05 / 1.15 / 1.08 /
 * 1.15 / 0.84 / 0.77x; ROWS=1: 1.07 / 1.24 / 1.22 / 1.19 / 1.09 / 1.11x.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <xnnpack.h>
#include "session/kernels_simd.h"

#define REPS 60
static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}
static int cmpd(const void *a, const void *b) {
  const double d = *(const double *)a - *(const double *)b;
  return d < 0 ? -1 : d > 0;
}
static char junk[64 << 20];
static float urand(void) { return (float)((double)rand() / RAND_MAX); }   /* [0, 1] */

static int rows;   /* ROWS=1: hr__k_pwg_rows (8 rows across all the outputs) instead of blocks of 32 outputs over the rows */
static void one(int M, int K, int N, int cold) {
  /* 64-byte aligned, as the engine's arena and the model's weights are */
#define AL(n) aligned_alloc(64, ((size_t)(n) * 4 + 63) & ~(size_t)63)
  float *x = AL((size_t)M * K), *w = AL((size_t)K * N), *wx = AL((size_t)K * N), *b = AL(N), *y = AL((size_t)M * N), *yx = AL((size_t)M * N);
  if (!x || !w || !wx || !b || !y || !yx) { fprintf(stderr, "out of memory\n"); exit(1); }
  srand(1);
  for (size_t i = 0; i < (size_t)M * K; i++) x[i] = urand() - 0.5f;
  for (size_t i = 0; i < (size_t)K * N; i++) w[i] = (urand() - 0.5f) * 0.1f;
  for (int i = 0; i < N; i++) b[i] = urand() - 0.5f;
  for (int n = 0; n < N; n++)
    for (int k = 0; k < K; k++) wx[(size_t)n * K + k] = w[(size_t)k * N + n];   /* XNNPACK's OHWI */
  xnn_operator_t op = NULL;
  if (xnn_create_convolution2d_nhwc_f32(0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, (size_t)K, (size_t)N, (size_t)K, (size_t)N, wx, b, -INFINITY, INFINITY,
                                        0, &op) ||
      xnn_setup_convolution2d_nhwc_f32(op, 1, 1, (size_t)M, x, yx, NULL)) {
    fprintf(stderr, "XNNPACK: cannot make the convolution\n");
    exit(1);
  }
  const hr__pwg g = {x, w, b, y, M, K, N, 0, -INFINITY, INFINITY};
  double tx[REPS], tm[REPS];
  for (int r = 0; r < REPS; r++) {
    if (cold) memset(junk, r, sizeof junk);
    double t0 = now();
    xnn_run_operator(op, NULL);
    tx[r] = now() - t0;
    if (cold) memset(junk, r + 1, sizeof junk);
    t0 = now();
    if (rows) hr__k_pwg_rows(&g, 0, M);
    else for (int n0 = 0; n0 < N; n0 += 32) hr__k_pwg_block(&g, 0, M, n0);
    tm[r] = now() - t0;
  }
  qsort(tx, REPS, sizeof *tx, cmpd);
  qsort(tm, REPS, sizeof *tm, cmpd);
  printf("%6d x %4d -> %4d: XNNPACK %.3f ms, ours %.3f ms (%.2fx), %.0f GFLOP/s; same bits: %s\n", M, K, N, tx[REPS / 2] * 1e3,
         tm[REPS / 2] * 1e3, tx[REPS / 2] / tm[REPS / 2], 2.0 * M * K * N / tm[REPS / 2] / 1e9, memcmp(y, yx, (size_t)M * N * 4) ? "NO" : "yes");
  xnn_delete_operator(op);
  free(x); free(w); free(wx); free(b); free(y); free(yx);
}

int main(int argc, char **argv) {
  if (!hr__k_pwg_ok()) { printf("pwg_probe: this CPU has no AVX-512 (the kernel's only variant)\n"); return 0; }
  if (xnn_initialize(NULL) != xnn_status_success) { fprintf(stderr, "XNNPACK: cannot initialise\n"); return 1; }
  const int cold = getenv("COLD") && atoi(getenv("COLD"));
  rows = getenv("ROWS") && atoi(getenv("ROWS"));
  if (argc > 1) {
    for (int i = 1; i + 2 < argc; i += 3) one(atoi(argv[i]), atoi(argv[i + 1]), atoi(argv[i + 2]), cold);
    return 0;
  }
  static const int shapes[][3] = {{768, 160, 960}, {768, 960, 160}, {768, 672, 160}, {768, 112, 672}, {49152, 16, 64}, {12288, 24, 72}};
  for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) one(shapes[i][0], shapes[i][1], shapes[i][2], cold);
  return 0;
}
