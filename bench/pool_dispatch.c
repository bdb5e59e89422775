/* What one operator's dispatch costs on a thread pool, apart from its work (issue 15, done-when 5:
 * 16 threads >= 10x one): pthreadpool_parallelize_1d of T tasks (one a thread) that do nothing, and
 * of T tasks that each sum their own 16 KiB (a small op's share, in the thread's cache), T threads,
 * back to back as the executor's ops are: the median over 21 batches of 200 calls, microseconds a call.
 * At ~120 dispatches a frame (RVM 1920x1440 r0.25: the ops that are not fused away and use the pool),
 * this times 120 is what a frame spends on joins however fast the kernels get.
 *
 *   pool_dispatch [THREADS ...]   (default 2 4 8 16)
 * Then the same sums as OPS ops in one dispatch, joined by a spin barrier (region_us).
 * Built by bench/vulkan_h200.sh prepare into .gl/ (links libpthreadpool only). */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include <pthreadpool.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define SLICE 4096 /* floats a task: 16 KiB */
static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}
static void nop(void *ctx, size_t i) { (void)ctx; (void)i; }
static void sum(void *ctx, size_t i) {
  float *x = (float *)ctx + i * SLICE, s = 0;
  for (int k = 0; k < SLICE; k++) s += x[k];
  x[0] = s * 1e-30f;   /* kept */
}
static int cmp(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return (x > y) - (x < y); }
static double median_us(pthreadpool_t p, pthreadpool_task_1d_t f, void *ctx, size_t n) {
  double r[21];
  for (int b = 0; b < 21; b++) {
    double t0 = now_us();
    for (int c = 0; c < 200; c++) pthreadpool_parallelize_1d(p, f, ctx, n, 0);
    r[b] = (now_us() - t0) / 200;
  }
  qsort(r, 21, sizeof r[0], cmp);
  return r[10];
}
/* The same T sums as one op after another inside a single dispatch, the ops joined by a spin barrier
 * (an atomic count and a generation): what a join would cost if the executor ran a run of its own
 * kernels as one parallel region. Each of the T tasks runs on its own thread (pthreadpool gives
 * every thread its own first item), so all T reach each barrier. */
#define OPS 200
typedef struct region { float *x; int T; _Atomic int count; _Atomic int gen; } region;
static void barrier(region *r) {
  const int g = atomic_load_explicit(&r->gen, memory_order_relaxed);
  if (atomic_fetch_add_explicit(&r->count, 1, memory_order_acq_rel) == r->T - 1) {
    atomic_store_explicit(&r->count, 0, memory_order_relaxed);
    atomic_store_explicit(&r->gen, g + 1, memory_order_release);
  } else {
    while (atomic_load_explicit(&r->gen, memory_order_acquire) == g) {
#if defined(__x86_64__)
      __builtin_ia32_pause();
#endif
    }
  }
}
static void region_task(void *ctx, size_t i) {
  region *r = ctx;
  for (int op = 0; op < OPS; op++) {
    sum(r->x, i);
    barrier(r);
  }
}
static double region_us(pthreadpool_t p, float *x, int T) {
  double v[21];
  for (int b = 0; b < 21; b++) {
    region r = {x, T, 0, 0};
    double t0 = now_us();
    pthreadpool_parallelize_1d(p, region_task, &r, (size_t)T, 0);
    v[b] = (now_us() - t0) / OPS;
  }
  qsort(v, 21, sizeof v[0], cmp);
  return v[10];
}
int main(int argc, char **argv) {
  int def[] = {2, 4, 8, 16}, nt = argc > 1 ? argc - 1 : 4;
  float *x = calloc((size_t)64 * SLICE, sizeof(float));
  if (!x) return 1;
  for (int a = 0; a < nt; a++) {
    int T = argc > 1 ? atoi(argv[a + 1]) : def[a];
    if (T < 1 || T > 64) { fprintf(stderr, "pool_dispatch: threads 1..64, not %s\n", argv[a + 1]); return 2; }
    pthreadpool_t p = pthreadpool_create((size_t)T);
    if (!p) return 1;
    median_us(p, nop, NULL, (size_t)T);   /* warm */
    double e = median_us(p, nop, NULL, (size_t)T), s = median_us(p, sum, x, (size_t)T);
    double s1 = median_us(NULL, sum, x, 1);   /* one slice on the caller alone: the work */
    const double rg = region_us(p, x, T);
    printf("threads %2d: empty dispatch %.2f us, %d x 16 KiB sums %.2f us (one alone %.2f us); in one region, barriers between: %.2f us an op\n",
           T, e, T, s, s1, rg);
    pthreadpool_destroy(p);
  }
  free(x);
  return 0;
}
