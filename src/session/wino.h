/* Winograd F(4x4, 3x3): a 3x3 convolution (stride 1, dilation 1, one group, one pixel of padding on
 * every side, NHWC float, dense channels) with 36 multiplies per 4 x 4 outputs and input channel
 * instead of 144 (Lavin and Gray's F(4x4, 3x3)). XNNPACK 2022 has none; its 3x3 convolution was over
 * half of RVM's frame on the CPU (issue 15) and already near what its GEMM reaches
 * (bench/wino_probe.c: 1.7x on the decoder's shapes on 2 threads, 1.6x on one).
 *
 * Weights: U = G g G^T made once for every (input, output channel) pair, as 36 matrices of Cp x Kp
 * floats (channels padded to 16), and the bias padded to Kp, in one block (hr__wino_pack).
 * A run: the output's 4 x 4 tiles in blocks of HR__WINO_NT along a tile row (a row's last block of 4
 * tiles or fewer made as 4; blocks of 4 where blocks of HR__WINO_NT would be fewer than the
 * threads, the same bits), blocks shared out over
 * HR__WINO_TASKS_PER_THREAD tasks a pool thread (contiguous ranges). A task takes a free scratch slot
 * (one a thread: no two tasks run on one thread at once), transforms each block's 6 x 6 input
 * patches (B^T d B; zeros outside the image) into 36 matrices of NT x Cp there, multiplies each by its
 * U (NT tiles x 32 output channels in registers), transforms back (A^T m A), adds the bias and clamps
 * to [lo, hi]. Scratch: hr__wino_scratch_floats() a slot, the caller's (allocated before run).
 *
 * Values: not XNNPACK's bits. The transforms reorder the sums: on RVM's shapes the largest
 * difference from XNNPACK's output is 3-9e-6 of the output's largest magnitude (wino_probe);
 * the engine's tests compare with XNNPACK's convolution (test_wino) and the model with TF.js
 * (cli_engine_tfjs_golden). AVX-512F, or AVX2 with FMA (8 lanes: the same sums in the same order,
 * the same bits; cli_no_avx512 compares the two on RVM); elsewhere XNNPACK keeps the op. */
#ifndef HR_SESSION_WINO_H
#define HR_SESSION_WINO_H
#include <pthreadpool.h>
#include <stdint.h>
#include "headroom/core.h"

#define HR__WINO_NT 8
/* A run is cut into this many tasks a pool thread (a thread held up by another process leaves
 * less undone; 1 a thread lost ~25% on the 2-vCPU VM, 2, 4 and 8 were within noise) */
#define HR__WINO_TASKS_PER_THREAD 4

typedef struct hr__wino {
  int C, K, Cp, Kp;         /* input and output channels, each padded to 16 */
  float lo, hi;             /* the output clamp */
  const float *U;           /* 36 x Cp x Kp, 64-byte aligned */
  const float *bias;        /* Kp */
  void *mem;                /* the block when the kernel's own (hr__wino_init), else NULL */
} hr__wino;

/* The CPU can run it (AVX-512F, or AVX2 and FMA) and HR_WINO is not "0" (developer switch: XNNPACK
 * keeps every op). */
int hr__wino_ok(void);
/* A convolution of that geometry is one this kernel does (hr__wino_ok aside). */
int hr__wino_fits(int kh, int kw, int sh, int sw, int dh, int dw, int pt, int pb, int pl, int pr, int64_t groups, int64_t batch);
/* Bytes hr__wino_init allocates, and the floats of scratch one task needs, for C -> K channels. */
int64_t hr__wino_bytes(int64_t C, int64_t K);
int64_t hr__wino_scratch_floats(int64_t C, int64_t K);
/* The transformed weights and the padded bias into block (hr__wino_bytes, zeroed), from the filter
 * as TF holds it (HWIO: 3 x 3 x C x K) and K biases or NULL. The engine shares the block between
 * the model's sessions and plans (kcache.h, hr__kcache_acquire_blob). */
void hr__wino_pack(const float *hwio, const float *bias, int C, int K, void *block);
/* The kernel over a block hr__wino_pack filled (borrowed: w->mem stays NULL). */
void hr__wino_set(hr__wino *w, void *block, int C, int K, float lo, float hi);
/* Both, the block the kernel's own (freed by hr__wino_free). HR_ENOMEM. */
hr_status hr__wino_init(hr__wino *w, const float *hwio, const float *bias, int C, int K, float lo, float hi);
void hr__wino_free(hr__wino *w);
/* An epilogue: the ops after the convolution, done on each block's outputs while they are in cache
 * (exec.c fuses them). Each output row of a block (bias added, clamped) is made in the task's
 * scratch, np pixels x K floats dense, and handed to row(ctx, v, p0, np), p0 the image's index of its
 * first pixel (row y, column x: y W + x); row may overwrite v and writes what it makes itself; y
 * is not written. Rows are handed over from every pool thread, each pixel once. */
typedef struct hr__wino_epi {
  void (*row)(void *ctx, float *v, int64_t p0, int64_t np);
  void *ctx;
} hr__wino_epi;

/* A prologue: the input made row by row in the tasks instead of read from x (exec.c fuses the
 * resize-concat before a convolution this way: the rows a task reads are made while they are in
 * its cache, and the whole input is never written). A task takes whole tile rows, in order, and
 * makes the input rows each reads (halo included: 2 rows made twice where two tasks meet) into its
 * ring of 6 rows, rows(ctx, y0, y1, dst) making rows [y0, y1) at dst (W x C floats a row, dense).
 * ring: one ring a scratch slot, ring_stride floats apart (>= 6 W C), the caller's. The products
 * are those of the same input read from x: the same bits. */
typedef struct hr__wino_pro {
  void (*rows)(void *ctx, int y0, int y1, float *dst);
  void *ctx;
  float *ring;
  size_t ring_stride;
} hr__wino_pro;

/* y (H x W x K) = the convolution of x (H x W x C); x and y must not overlap. scratch: slots x
 * hr__wino_scratch_floats floats, 64-byte aligned, slots >= the pool's threads (at most 64); the
 * tasks run on pool (NULL: this thread). */
void hr__k_wino(pthreadpool_t pool, const hr__wino *w, const float *x, float *y, int H, int W, float *scratch, int slots);
/* The same with an epilogue (epi->row gets the outputs; y unused), or as hr__k_wino where epi is NULL.
 * x must not overlap anything the epilogue writes. */
void hr__k_wino_epi(pthreadpool_t pool, const hr__wino *w, const float *x, float *y, int H, int W, float *scratch, int slots,
                    const hr__wino_epi *epi);
/* Either, with the input made by a prologue (pro; x unused) or read from x (pro NULL). What the
 * prologue reads must not overlap what the convolution or its epilogue write, nor the rings. */
void hr__k_wino_pro(pthreadpool_t pool, const hr__wino *w, const float *x, const hr__wino_pro *pro, float *y, int H, int W,
                    float *scratch, int slots, const hr__wino_epi *epi);
#endif
