/* wino_probe: would a Winograd convolution beat XNNPACK's 3x3 convolution on RVM's decoder shapes?
 * (issue 15: the 3x3 convolutions are over half the network, 14.1 of 27.0 ms at 1920x1440 ratio
 * 0.171 and 26.5 of 47.7 at 0.25, and XNNPACK 2022 already runs them at 260-300 GFLOP/s on this
 * project's 2-vCPU AVX-512 machine: only fewer multiplies make them faster. Winograd F(2x2, 3x3)
 * makes 2 x 2 outputs with 16 multiplies instead of 36; F(4x4, 3x3) 4 x 4 with 36 instead of 144.)
 *
 * A standalone measurement, not the engine: for each shape (H W Cin Cout, stride 1, pad 1, ReLU) the
 * same random weights and input go through XNNPACK's convolution, F(2x2, 3x3) and F(4x4, 3x3), all on
 * one pthreadpool, alternating; it reports each one's median time, the ratio to XNNPACK, and the
 * largest difference from XNNPACK's output relative to that output's largest magnitude.
 *
 * The Winograd here: U = G g G^T per (input, output channel) made once (16 or 36 matrices of
 * Cin x Cout, output channels padded to 16). The output's tiles go in blocks of NT along a tile row;
 * each block's input patches (zero outside the image) are transformed (B^T d B) into 16 / 36 matrices
 * of NT x Cin, each multiplied by its U (a register block of NT tiles x 32 output channels, the
 * tiles' values broadcast), then transformed back (A^T m A), the bias added and clamped. Blocks are
 * shared out over the pool's threads (4 tasks a thread), each task with its own scratch (V and M:
 * 36 x NT x (Cin + Cout) floats, in L2). AVX-512 only; -O3 matters (at -O2 GCC left the GEMM's
 * accumulators in memory and F(2x2, 3x3) ran at half XNNPACK's speed).
 *
 * Measured 2026-12-06 on the 2-vCPU AMD EPYC VM (AVX-512), --reps 15, medians, sums over the shapes:
 *   ratio 0.171 shapes (the default), 2 threads: XNNPACK 12.06 ms, F(2x2) 8.47 (1.42x), F(4x4) 7.07
 *     (1.71x); again: 12.05 / 8.32 / 6.85 (1.76x); 1 thread: F(4x4) 1.57x.
 *   ratio 0.25 shapes, 2 threads: XNNPACK 25.25 ms, F(2x2) 18.41 (1.37x), F(4x4) 14.62 (1.73x);
 *     1 thread: 49.24 / 37.88 / 29.91 (1.65x).
 *   Per shape, F(4x4) at 0.25 on 2 threads: 1.95-2.70x on the decoder's inner convolutions
 *     (180x240x59->32 4.58 -> 2.34 ms, 90x120x107->40 2.98 -> 1.34), 1.18x and 1.27x on the two at
 *     the processing size with 16 output channels (360x480x35->16, 16->16), where the transforms
 *     weigh most. Largest relative difference from XNNPACK: F(2x2) 0.5-1.8e-6, F(4x4) 2.7-8.4e-6.
 * Not measured: an AVX2-only machine (XNNPACK's AVX2 kernels are the other side there), and the
 * engine's own wrappers (bands, the fused resize-concat and pointwise epilogues) around these convs.
 *
 * F(4x4, 3x3) is the engine's kernel (hr__k_wino, src/session/wino.c, linked in; since 2026-12-06
 * evening: the probe's own copy, which the engine's started from, is gone); F(2x2, 3x3) the probe's.
 * build: CMake's wino_probe target (build/wino_probe), or
 *   gcc -O3 -std=c11 -mavx512f -mfma -Isrc -Iinclude -Ibuild/include bench/wino_probe.c src/session/wino.c \
 *     src/core/cpu.c -o /tmp/wino_probe -lXNNPACK -lpthreadpool -lm
 * usage: wino_probe [--threads N] [--reps N] [H W CIN COUT]...  (default: the ratio 0.171 shapes)
 * env: WP_PHASE (F(2x2) only: 1 input transform, 2 products, 4 output transform; sums of them) */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <immintrin.h>
#include <math.h>
#include <pthreadpool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <xnnpack.h>
#include "session/wino.h"   /* F(4x4, 3x3): the engine's own (src/session/wino.c), linked in */

#ifndef NT
#define NT 8    /* tiles a GEMM register block holds */
#endif

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

typedef struct wino {
  int H, W, C, K, Cp, Kp;     /* input channels C (padded Cp), output channels K (padded Kp) */
  int TH, TW, bpr, nblk;      /* tiles per column / row, blocks per tile row, blocks */
  float *U;                   /* [16][Cp][Kp] */
  float *bias;                /* Kp */
  float lo, hi;
  float *scratch;             /* per task: V [16][NT][Cp], M [16][NT][Kp] */
  size_t per_task;
  int tasks;
  const float *x; float *y;
} wino;

static void wino_init(wino *w, int H, int W, int C, int K, const float *g /* OHWI */, const float *b, float lo, float hi, int tasks) {
  memset(w, 0, sizeof *w);
  w->H = H; w->W = W; w->C = C; w->K = K;
  w->Cp = (C + 15) / 16 * 16; w->Kp = (K + 15) / 16 * 16;
  w->TH = (H + 1) / 2; w->TW = (W + 1) / 2;
  w->bpr = (w->TW + NT - 1) / NT; w->nblk = w->bpr * w->TH;
  w->lo = lo; w->hi = hi;
  w->U = aligned_alloc(64, sizeof(float) * 16 * w->Cp * w->Kp);
  memset(w->U, 0, sizeof(float) * 16 * w->Cp * w->Kp);
  w->bias = aligned_alloc(64, sizeof(float) * w->Kp);
  memset(w->bias, 0, sizeof(float) * w->Kp);
  for (int k = 0; k < K; k++) w->bias[k] = b[k];
  static const float G[4][3] = {{1, 0, 0}, {.5f, .5f, .5f}, {.5f, -.5f, .5f}, {0, 0, 1}};
  for (int k = 0; k < K; k++)
    for (int c = 0; c < C; c++) {
      float gg[3][3], t[4][3];
      for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) gg[i][j] = g[(((size_t)k * 3 + i) * 3 + j) * C + c];
      for (int i = 0; i < 4; i++)
        for (int j = 0; j < 3; j++) t[i][j] = G[i][0] * gg[0][j] + G[i][1] * gg[1][j] + G[i][2] * gg[2][j];
      for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++)
          w->U[((size_t)(i * 4 + j) * w->Cp + c) * w->Kp + k] = t[i][0] * G[j][0] + t[i][1] * G[j][1] + t[i][2] * G[j][2];
    }
  w->tasks = tasks;
  w->per_task = (size_t)16 * NT * (w->Cp + w->Kp);
  w->scratch = aligned_alloc(64, sizeof(float) * w->per_task * tasks);
}

/* The block's input transform: V[pos][t][c] for its tiles. Along each of the patch's 4 rows the
 * 2 NT + 2 columns are read once; B^T d combines the rows per column (q), then (B^T d) B combines
 * each tile's 4 columns of q. Rows and columns outside the image read as zeros. */
static void in_transform(const wino *w, int ty, int tx0, int nt, float *V) {
  const int C = w->C, Cp = w->Cp, H = w->H, W = w->W;
  const int y0 = 2 * ty - 1, x0 = 2 * tx0 - 1, ncol = 2 * NT + 2;
  const size_t ps = (size_t)NT * Cp;
  const float *row[4];
  for (int r = 0; r < 4; r++) row[r] = y0 + r >= 0 && y0 + r < H ? w->x + (size_t)(y0 + r) * W * C : NULL;
  for (int c = 0; c < Cp; c += 16) {
    const __mmask16 m = C - c >= 16 ? 0xffff : (__mmask16)((1u << (C - c)) - 1);
    __m512 q[4][2 * NT + 2];   /* B^T d per column */
    for (int j = 0; j < ncol; j++) {
      const int xx = x0 + j;
      __m512 d[4];
      for (int r = 0; r < 4; r++)
        d[r] = row[r] && xx >= 0 && xx < W ? _mm512_maskz_loadu_ps(m, row[r] + (size_t)xx * C + c) : _mm512_setzero_ps();
      q[0][j] = _mm512_sub_ps(d[0], d[2]);
      q[1][j] = _mm512_add_ps(d[1], d[2]);
      q[2][j] = _mm512_sub_ps(d[2], d[1]);
      q[3][j] = _mm512_sub_ps(d[1], d[3]);
    }
    for (int t = 0; t < NT; t++) {   /* tiles past the row's end get what the zeros give; not stored */
      const int j = 2 * t;
      for (int r = 0; r < 4; r++) {
        float *o = V + (size_t)(r * 4) * ps + (size_t)t * Cp + c;
        _mm512_store_ps(o, _mm512_sub_ps(q[r][j], q[r][j + 2]));
        _mm512_store_ps(o + ps, _mm512_add_ps(q[r][j + 1], q[r][j + 2]));
        _mm512_store_ps(o + 2 * ps, _mm512_sub_ps(q[r][j + 2], q[r][j + 1]));
        _mm512_store_ps(o + 3 * ps, _mm512_sub_ps(q[r][j + 1], q[r][j + 3]));
      }
    }
  }
  (void)nt;
}

/* M[pos] (NT x Kp) = V[pos] (NT x Cp) U[pos] (Cp x Kp) for each of the npos positions, 32 output
 * channels at a time (16 for the last where Kp is an odd multiple of 16). Both variants use it. */
static void gemm_pos(int npos, int C, int Cp, int Kp, const float *U, const float *V, float *M) {
  for (int p = 0; p < npos; p++) {
    const float *Vp = V + (size_t)p * NT * Cp, *Up = U + (size_t)p * Cp * Kp;
    float *Mp = M + (size_t)p * NT * Kp;
    int k0 = 0;
    for (; k0 + 32 <= Kp; k0 += 32) {
      __m512 a0[NT], a1[NT];
      for (int t = 0; t < NT; t++) a0[t] = a1[t] = _mm512_setzero_ps();
      const float *u = Up + k0;
      for (int c = 0; c < C; c++, u += Kp) {
        const __m512 u0 = _mm512_load_ps(u), u1 = _mm512_load_ps(u + 16);
        for (int t = 0; t < NT; t++) {
          const __m512 v = _mm512_set1_ps(Vp[(size_t)t * Cp + c]);
          a0[t] = _mm512_fmadd_ps(v, u0, a0[t]);
          a1[t] = _mm512_fmadd_ps(v, u1, a1[t]);
        }
      }
      for (int t = 0; t < NT; t++) {
        _mm512_store_ps(Mp + (size_t)t * Kp + k0, a0[t]);
        _mm512_store_ps(Mp + (size_t)t * Kp + k0 + 16, a1[t]);
      }
    }
    if (k0 < Kp) {
      __m512 a0[NT];
      for (int t = 0; t < NT; t++) a0[t] = _mm512_setzero_ps();
      const float *u = Up + k0;
      for (int c = 0; c < C; c++, u += Kp) {
        const __m512 u0 = _mm512_load_ps(u);
        for (int t = 0; t < NT; t++) a0[t] = _mm512_fmadd_ps(_mm512_set1_ps(Vp[(size_t)t * Cp + c]), u0, a0[t]);
      }
      for (int t = 0; t < NT; t++) _mm512_store_ps(Mp + (size_t)t * Kp + k0, a0[t]);
    }
  }
}

static void out_transform(const wino *w, int ty, int tx0, int nt, const float *M) {
  const int K = w->K, Kp = w->Kp, H = w->H, W = w->W;
  const size_t ps = (size_t)NT * Kp;
  const __m512 lo = _mm512_set1_ps(w->lo), hi = _mm512_set1_ps(w->hi);
  for (int t = 0; t < nt; t++) {
    const int oy = 2 * ty, ox = 2 * (tx0 + t);
    for (int k = 0; k < Kp && k < K; k += 16) {
      const __mmask16 msk = K - k >= 16 ? 0xffff : (__mmask16)((1u << (K - k)) - 1);
      __m512 m[16];
      for (int p = 0; p < 16; p++) m[p] = _mm512_load_ps(M + p * ps + (size_t)t * Kp + k);
      __m512 s[2][4];   /* A^T m */
      for (int j = 0; j < 4; j++) {
        s[0][j] = _mm512_add_ps(_mm512_add_ps(m[j], m[4 + j]), m[8 + j]);
        s[1][j] = _mm512_sub_ps(_mm512_sub_ps(m[4 + j], m[8 + j]), m[12 + j]);
      }
      const __m512 b = _mm512_load_ps(w->bias + k);
      for (int i = 0; i < 2; i++) {
        if (oy + i >= H) break;
        __m512 y0 = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(s[i][0], s[i][1]), s[i][2]), b);
        __m512 y1 = _mm512_add_ps(_mm512_sub_ps(_mm512_sub_ps(s[i][1], s[i][2]), s[i][3]), b);
        y0 = _mm512_min_ps(_mm512_max_ps(y0, lo), hi);
        y1 = _mm512_min_ps(_mm512_max_ps(y1, lo), hi);
        float *o = w->y + ((size_t)(oy + i) * W + ox) * K + k;
        _mm512_mask_storeu_ps(o, msk, y0);
        if (ox + 1 < W) _mm512_mask_storeu_ps(o + K, msk, y1);
      }
    }
  }
}

static int phase = 7;
static void wino_task(void *ctx, size_t task) {
  wino *w = ctx;
  float *V = w->scratch + w->per_task * task, *M = V + (size_t)16 * NT * w->Cp;
  const size_t b0 = (size_t)w->nblk * task / w->tasks, b1 = (size_t)w->nblk * (task + 1) / w->tasks;
  for (size_t bi = b0; bi < b1; bi++) {
    const int ty = (int)(bi / w->bpr), tx0 = (int)(bi % w->bpr) * NT;
    const int nt = w->TW - tx0 < NT ? w->TW - tx0 : NT;
    if (phase & 1) in_transform(w, ty, tx0, nt, V);
    if (phase & 2) gemm_pos(16, w->C, w->Cp, w->Kp, w->U, V, M);
    if (phase & 4) out_transform(w, ty, tx0, nt, M);
  }
}

static void wino_run(wino *w, const float *x, float *y, pthreadpool_t pool) {
  w->x = x; w->y = y;
  pthreadpool_parallelize_1d(pool, wino_task, w, (size_t)w->tasks, 0);
}


static float frand(uint32_t *s) { *s = *s * 1664525u + 1013904223u; return (float)((*s >> 8) & 0xffff) / 65536.f - 0.5f; }
static int cmpd(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return (x > y) - (x < y); }

int main(int argc, char **argv) {
  int threads = 2, reps = 30;
  if (getenv("WP_PHASE")) phase = atoi(getenv("WP_PHASE"));
  int shapes[64][4], ns = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--threads") && i + 1 < argc) threads = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
    else if (i + 3 < argc && ns < 64) { for (int q = 0; q < 4; q++) shapes[ns][q] = atoi(argv[i + q]); ns++; i += 3; }
  }
  if (!ns) {   /* RVM's decoder 3x3 convolutions at 1920x1440 ratio 0.171 (bench --ops) */
    static const int d[][4] = {{246, 328, 35, 16}, {123, 164, 59, 32}, {62, 82, 107, 40}, {246, 328, 16, 16},
                               {123, 164, 32, 32}, {31, 41, 171, 80}, {62, 82, 40, 40}, {123, 164, 32, 16},
                               {31, 41, 80, 80}, {62, 82, 40, 20}, {16, 21, 128, 128}, {31, 41, 80, 40}};
    ns = (int)(sizeof d / sizeof d[0]);
    memcpy(shapes, d, sizeof d);
  }
  if (!__builtin_cpu_supports("avx512f")) { fprintf(stderr, "wino_probe: this CPU has no AVX-512F\n"); return 2; }
  if (xnn_initialize(NULL) != xnn_status_success) { fprintf(stderr, "xnn_initialize failed\n"); return 1; }
  pthreadpool_t pool = pthreadpool_create((size_t)threads);
  double tx_all = 0, tw_all = 0, t4_all = 0;
  printf("%-22s %9s %9s %6s %10s %9s %6s %10s\n", "H W Cin Cout", "xnn ms", "F(2,3) ms", "ratio", "max rel d", "F(4,3) ms", "ratio", "max rel d");
  for (int si = 0; si < ns; si++) {
    const int H = shapes[si][0], W = shapes[si][1], C = shapes[si][2], K = shapes[si][3];
    uint32_t seed = 12345u + (uint32_t)si;
    float *g = malloc(sizeof(float) * K * 9 * C), *b = malloc(sizeof(float) * K);
    float *x = malloc(sizeof(float) * H * W * C), *y0 = malloc(sizeof(float) * H * W * K), *y1 = malloc(sizeof(float) * H * W * K),
          *y2 = malloc(sizeof(float) * H * W * K);
    const float sc = 1.f / sqrtf(9.f * C);
    for (int i = 0; i < K * 9 * C; i++) g[i] = frand(&seed) * 2 * sc * 1.7f;
    for (int i = 0; i < K; i++) b[i] = frand(&seed) * 0.2f;
    for (size_t i = 0; i < (size_t)H * W * C; i++) x[i] = frand(&seed) + 0.3f;
    xnn_operator_t op = NULL;
    if (xnn_create_convolution2d_nhwc_f32(1, 1, 1, 1, 3, 3, 1, 1, 1, 1, 1, C, K, C, K, g, b, 0.f, INFINITY, 0, &op) != xnn_status_success ||
        xnn_setup_convolution2d_nhwc_f32(op, 1, H, W, x, y0, pool) != xnn_status_success) {
      fprintf(stderr, "xnnpack conv failed\n");
      return 1;
    }
    wino w;
    int tasks = threads * 4;
    wino_init(&w, H, W, C, K, g, b, 0.f, INFINITY, tasks);
    /* the engine's F(4x4): TF's HWIO weights (g is XNNPACK's OHWI), a scratch slot a thread */
    float *hwio = malloc(sizeof(float) * K * 9 * C);
    for (int k = 0; k < K; k++)
      for (int t = 0; t < 9; t++)
        for (int c = 0; c < C; c++) hwio[((size_t)t * C + c) * K + k] = g[((size_t)k * 9 + t) * C + c];
    hr__wino w4;
    if (hr__wino_init(&w4, hwio, b, C, K, 0.f, INFINITY) != HR_OK) { fprintf(stderr, "hr__wino_init failed\n"); return 1; }
    float *s4 = aligned_alloc(64, (sizeof(float) * (size_t)hr__wino_scratch_floats(C, K) * (size_t)threads + 63) / 64 * 64);
    double tx[256], tw[256], t4[256];
    if (reps > 256) reps = 256;
    for (int r = 0; r < 3; r++) { xnn_run_operator(op, pool); wino_run(&w, x, y1, pool); hr__k_wino(pool, &w4, x, y2, H, W, s4, threads); }
    for (int r = 0; r < reps; r++) {   /* alternating */
      double t0 = now_ms();
      xnn_run_operator(op, pool);
      double t1 = now_ms();
      wino_run(&w, x, y1, pool);
      double t2 = now_ms();
      hr__k_wino(pool, &w4, x, y2, H, W, s4, threads);
      double t3 = now_ms();
      tx[r] = t1 - t0; tw[r] = t2 - t1; t4[r] = t3 - t2;
    }
    qsort(tx, (size_t)reps, sizeof(double), cmpd);
    qsort(tw, (size_t)reps, sizeof(double), cmpd);
    qsort(t4, (size_t)reps, sizeof(double), cmpd);
    double mx = 0, md = 0, md4 = 0;
    for (size_t i = 0; i < (size_t)H * W * K; i++) {
      if (fabsf(y0[i]) > mx) mx = fabsf(y0[i]);
      if (fabsf(y0[i] - y1[i]) > md) md = fabsf(y0[i] - y1[i]);
      if (fabsf(y0[i] - y2[i]) > md4) md4 = fabsf(y0[i] - y2[i]);
    }
    char nm[64];
    snprintf(nm, sizeof nm, "%d %d %d %d", H, W, C, K);
    printf("%-22s %9.3f %9.3f %6.2f %10.2e %9.3f %6.2f %10.2e\n", nm, tx[reps / 2], tw[reps / 2], tx[reps / 2] / tw[reps / 2], mx > 0 ? md / mx : md,
           t4[reps / 2], tx[reps / 2] / t4[reps / 2], mx > 0 ? md4 / mx : md4);
    tx_all += tx[reps / 2]; tw_all += tw[reps / 2]; t4_all += t4[reps / 2];
    xnn_delete_operator(op);
    free(g); free(b); free(x); free(y0); free(y1); free(y2);
    hr__wino_free(&w4); free(s4); free(hwio);
    free(w.U); free(w.bias); free(w.scratch);
  }
  printf("%-22s %9.3f %9.3f %6.2f %10s %9.3f %6.2f\n", "sum", tx_all, tw_all, tx_all / tw_all, "", t4_all, tx_all / t4_all);
  pthreadpool_destroy(pool);
  return 0;
}
