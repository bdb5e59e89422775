/* clock_probe: how much one core's compute rate falls when every core computes (issue 15, done-when
 * 5: 16 threads >= 10x one). Each thread runs the same chain-free AVX-512 (else AVX2) multiply-add
 * loop on registers only (no memory traffic); the rate per thread with T threads against one
 * thread alone is the ceiling that the host's clocks (turbo on one core, the all-core clock on
 * every core) put on any T-thread speed-up, before memory and synchronisation take their part.
 *
 *   clock_probe [T ...]     (default 1 2 4 8 16, cut at the CPUs online; CLOCK_AVX2=1: the AVX2 loop
 *                            on an AVX-512 CPU)
 * Prints, per T, the median over 5 rounds of the per-thread GFLOP/s and T x that / one thread's. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <immintrin.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define ITERS 20000000L
static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}
static int avx512;
static double flops_per_iter;
__attribute__((target("avx512f"))) static float loop512(float seed) {
  __m512 a[10], m = _mm512_set1_ps(0.999999f), c = _mm512_set1_ps(1e-7f);
  for (int i = 0; i < 10; i++) a[i] = _mm512_set1_ps(seed + (float)i);
  for (long n = 0; n < ITERS; n++) {
#pragma GCC unroll 10
    for (int i = 0; i < 10; i++) a[i] = _mm512_fmadd_ps(a[i], m, c);
  }
  float s = 0;
  for (int i = 0; i < 10; i++) s += _mm512_reduce_add_ps(a[i]);
  return s;
}
__attribute__((target("avx2,fma"))) static float loop256(float seed) {
  __m256 a[10], m = _mm256_set1_ps(0.999999f), c = _mm256_set1_ps(1e-7f);
  for (int i = 0; i < 10; i++) a[i] = _mm256_set1_ps(seed + (float)i);
  for (long n = 0; n < ITERS; n++) {
#pragma GCC unroll 10
    for (int i = 0; i < 10; i++) a[i] = _mm256_fmadd_ps(a[i], m, c);
  }
  float s = 0, o[8];
  for (int i = 0; i < 10; i++) { _mm256_storeu_ps(o, a[i]); for (int l = 0; l < 8; l++) s += o[l]; }
  return s;
}
typedef struct job { pthread_barrier_t *b; double sec; float out; } job;
static void *run(void *p) {
  job *j = p;
  pthread_barrier_wait(j->b);
  double t0 = now();
  j->out = avx512 ? loop512(1.f) : loop256(1.f);
  j->sec = now() - t0;
  return NULL;
}
static int cmpd(const void *a, const void *b) { double d = *(const double *)a - *(const double *)b; return d < 0 ? -1 : d > 0; }
static double rate(int T) {   /* median over 5 rounds of the mean per-thread GFLOP/s */
  double r[5];
  for (int k = 0; k < 5; k++) {
    pthread_t th[256];
    job jb[256];
    pthread_barrier_t b;
    pthread_barrier_init(&b, NULL, (unsigned)T);
    for (int i = 0; i < T; i++) { jb[i].b = &b; pthread_create(&th[i], NULL, run, &jb[i]); }
    double s = 0;
    for (int i = 0; i < T; i++) { pthread_join(th[i], NULL); s += flops_per_iter * ITERS / jb[i].sec / 1e9; }
    pthread_barrier_destroy(&b);
    r[k] = s / T;
  }
  qsort(r, 5, sizeof *r, cmpd);
  return r[2];
}
int main(int argc, char **argv) {
  __builtin_cpu_init();
  avx512 = __builtin_cpu_supports("avx512f") && !(getenv("CLOCK_AVX2") && atoi(getenv("CLOCK_AVX2")));
  flops_per_iter = 10.0 * (avx512 ? 16 : 8) * 2;
  const int ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);
  int ts[32], nt = 0;
  if (argc > 1) for (int i = 1; i < argc && nt < 32; i++) ts[nt++] = atoi(argv[i]);
  else for (int t = 1; t <= 16 && t <= ncpu; t *= 2) ts[nt++] = t;
  const double one = rate(1);
  printf("clock_probe: %s, %d CPUs; 1 thread %.1f GFLOP/s\n", avx512 ? "AVX-512" : "AVX2", ncpu, one);
  for (int i = 0; i < nt; i++) {
    if (ts[i] < 1 || ts[i] > 256) continue;
    const double r = ts[i] == 1 ? one : rate(ts[i]);
    printf("clock_probe: %2d threads: %.1f GFLOP/s a thread (%.3f of one alone), ceiling %.2fx\n", ts[i], r, r / one, ts[i] * r / one);
  }
  return 0;
}
