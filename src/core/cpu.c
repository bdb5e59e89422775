/* The CPU's AVX-512 features as our kernels may use them (cpu.h): read once, a load afterwards. */
#include <stdatomic.h>
#include <stdlib.h>
#include "core/cpu.h"

static _Atomic int features = -1;   /* bit 0: AVX-512F, bit 1: F+BW+VL; -1 not read yet */

static int read_features(void) {
  int f = atomic_load_explicit(&features, memory_order_relaxed);
  if (f >= 0) return f;
  f = 0;
  const char *off = getenv("HR_NO_AVX512");
  if (!(off && *off && *off != '0')) {
#if defined(__x86_64__) || defined(__i386__)
    if (__builtin_cpu_supports("avx512f")) f |= 1;
    if ((f & 1) && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl")) f |= 2;
#endif
  }
  atomic_store_explicit(&features, f, memory_order_relaxed);   /* racing readers store the same value */
  return f;
}

int hr__cpu_avx512f(void) { return read_features() & 1; }
int hr__cpu_avx512bwvl(void) { return (read_features() >> 1) & 1; }
