/* Our sigmoid (kernels.c, hr__k_sigmoid: exec.c runs RVM's Sigmoid ops on it where the Winograd
 * convolution runs, so that the convolution's epilogue makes the same bits as the op) and the
 * Winograd epilogues of the ConvGRU (hr__epi_gates, hr__epi_tanh_gru) against the ops they replace.
 *  - accuracy: against the sigmoid in double over [-90, 90] (steps of 1/256 near 0, then wider),
 *    relative error under 3e-7 (measured 1.7e-7) where the exact value is a normal float; exact 0.5 at 0; 1 and 0
 *    at +-inf; NaN stays NaN; no value outside [0, 1];
 *  - every clone the same bits: the vectorised op (the AVX-512 or AVX2 clone, over a pool of 3)
 *    against one value at a time (hr__sigmoid1, built for the baseline target);
 *  - hr__epi_gates on rows of pre-activations (pixel ranges of odd lengths at odd offsets) gives
 *    z, omzh and the concat bit for bit as hr__k_sigmoid then hr__k_gru_gates, for C = 16, 20, 40,
 *    64 and both channel orders; hr__epi_tanh_gru as hr__k_tanh_gru. */
#include <math.h>
#include <stdint.h>
#include <string.h>
#include <pthreadpool.h>
#include "hr_test.h"
#include "session/kernels.h"

static uint32_t rng = 4242;
static uint32_t next(void) { rng = rng * 1664525u + 1013904223u; return rng >> 8; }
static float rndf(float lo, float hi) { return lo + (hi - lo) * (float)(next() & 0xffffff) / 16777215.f; }

static void accuracy(pthreadpool_t pool) {
  enum { N = 200000 };
  float *x = malloc(sizeof(float) * N), *y = malloc(sizeof(float) * N);
  int n = 0;
  for (int i = -2560; i <= 2560 && n < N; i++) x[n++] = (float)i / 256.f;          /* [-10, 10] by 1/256 */
  for (int i = -9000; i <= 9000 && n < N; i++) x[n++] = (float)i / 100.f;           /* [-90, 90] by 0.01 */
  for (int i = 0; i < 40000 && n < N; i++) x[n++] = rndf(-20.f, 20.f);
  const float spec[] = {0.f, -0.f, 1e-30f, -1e-30f, 80.f, -80.f, 87.5f, -87.5f, 1e30f, -1e30f, INFINITY, -INFINITY};
  for (size_t i = 0; i < sizeof spec / sizeof spec[0]; i++) x[n++] = spec[i];
  const int nan_at = n;
  x[n++] = NAN;
  hr__k_sigmoid(pool, x, y, n);
  double worst = 0, worst_x = 0;
  int clone_bad = 0, range_bad = 0;
  for (int i = 0; i < n; i++) {
    const float one = hr__sigmoid1(x[i]);
    clone_bad += memcmp(&one, &y[i], 4) != 0;
    if (i == nan_at) continue;
    range_bad += !(y[i] >= 0.f && y[i] <= 1.f);
    const double ex = 1.0 / (1.0 + exp(-(double)x[i]));
    if (ex < 0x1p-126) continue;   /* the exact value is below the normal floats */
    const double rel = fabs((double)y[i] - ex) / ex;
    if (rel > worst) { worst = rel; worst_x = x[i]; }
  }
  printf("sigmoid: %d values, largest relative error %.3g at x = %.6g, %d differ from one at a time\n", n, worst, worst_x, clone_bad);
  CHECKF(worst < 3e-7, "sigmoid: relative error %.3g at x = %.9g", worst, worst_x);
  CHECK_EQ_INT(clone_bad, 0);
  CHECK_EQ_INT(range_bad, 0);
  CHECK(y[nan_at] != y[nan_at]);
  CHECK(hr__sigmoid1(0.f) == 0.5f);
  CHECK(hr__sigmoid1(INFINITY) == 1.f);
  CHECK(hr__sigmoid1(-INFINITY) == 0.f);
  free(x); free(y);
}

static void gates(pthreadpool_t pool, int64_t C, int zfirst, int rhfirst) {
  const int64_t P = 777, n = P * C;
  float *pre = malloc(sizeof(float) * 2 * n), *rz = malloc(sizeof(float) * 2 * n), *v = malloc(sizeof(float) * 2 * n);
  float *h = malloc(sizeof(float) * n), *h2 = malloc(sizeof(float) * n), *b = malloc(sizeof(float) * n);
  float *z[2], *omzh[2], *cat[2];
  for (int k = 0; k < 2; k++) {
    z[k] = malloc(sizeof(float) * n); omzh[k] = malloc(sizeof(float) * n); cat[k] = malloc(sizeof(float) * 2 * n);
    memset(z[k], 0xee, sizeof(float) * n); memset(omzh[k], 0xee, sizeof(float) * n); memset(cat[k], 0xee, sizeof(float) * 2 * n);
  }
  for (int64_t i = 0; i < 2 * n; i++) pre[i] = rndf(-9.f, 9.f);
  for (int64_t i = 0; i < n; i++) { h[i] = rndf(-1.f, 1.f); h2[i] = rndf(-1.f, 1.f); b[i] = rndf(-3.f, 3.f); }
  hr__k_gates g = {.C = C, .r_off = zfirst ? C : 0, .z_off = zfirst ? 0 : C, .rh_off = rhfirst ? 0 : C, .b_off = rhfirst ? C : 0,
                   .cat_c = 2 * C, .pixels = P, .k = 1.f};
  /* the ops: the sigmoid, then the gates */
  hr__k_sigmoid(pool, pre, rz, 2 * n);
  hr__k_gates g0 = g;
  g0.rz = rz; g0.h = h; g0.h2 = h2; g0.b = b; g0.z = z[0]; g0.omzh = omzh[0]; g0.cat = cat[0];
  hr__k_gru_gates(pool, &g0);
  /* the epilogue, on runs of pixels of odd lengths (a block row ends at the image's edge) */
  hr__k_gates g1 = g;
  g1.h = h; g1.h2 = h2; g1.b = b; g1.z = z[1]; g1.omzh = omzh[1]; g1.cat = cat[1];
  memcpy(v, pre, sizeof(float) * 2 * n);
  for (int64_t p0 = 0, len = 1; p0 < P; p0 += len, len = len % 37 + 5) {
    const int64_t np = p0 + len > P ? P - p0 : len;
    hr__epi_gates(&g1, v + p0 * 2 * C, p0, np);
  }
  const int bad = memcmp(z[0], z[1], sizeof(float) * n) != 0 || memcmp(omzh[0], omzh[1], sizeof(float) * n) != 0 ||
                  memcmp(cat[0], cat[1], sizeof(float) * 2 * n) != 0;
  CHECKF(!bad, "gates C %lld (z first %d, r h first %d): the epilogue differs from the sigmoid and gates ops", (long long)C, zfirst, rhfirst);
  /* tanh-GRU: y = tanh(v) m + a */
  float *y0 = malloc(sizeof(float) * n), *y1 = malloc(sizeof(float) * n);
  hr__k_tanh_gru(pool, pre, z[0], omzh[0], y0, n);
  memcpy(v, pre, sizeof(float) * n);
  hr__epi_tgru e = {z[0], omzh[0], y1, C};
  for (int64_t p0 = 0, len = 3; p0 < P; p0 += len, len = len % 29 + 7) {
    const int64_t np = p0 + len > P ? P - p0 : len;
    hr__epi_tanh_gru(&e, v + p0 * C, p0, np);
  }
  CHECKF(memcmp(y0, y1, sizeof(float) * n) == 0, "tanh-GRU C %lld: the epilogue differs from hr__k_tanh_gru", (long long)C);
  for (int k = 0; k < 2; k++) { free(z[k]); free(omzh[k]); free(cat[k]); }
  free(pre); free(rz); free(v); free(h); free(h2); free(b); free(y0); free(y1);
}

int main(void) {
  pthreadpool_t pool = pthreadpool_create(3);
  accuracy(pool);
  accuracy(NULL);
  const int64_t cs[] = {16, 20, 40, 64};
  for (int i = 0; i < 4; i++)
    for (int q = 0; q < 4; q++) gates(pool, cs[i], q & 1, q >> 1);
  pthreadpool_destroy(pool);
  return hr_test_finish("test_kernels_gates");
}
