/* noavx512_preload.so: an AVX-512 host run as an AVX2-only one, for bench/tfjs_compare.sh
 * --no-avx512 (issue 15, done-when 2's AVX2 ratio, where no AVX2-only machine is at hand).
 * LD_PRELOAD'ed, it wraps cpuinfo_initialize and clears cpuinfo's AVX-512 flags after it, so
 * XNNPACK (which reads them once, in its hardware config) takes its AVX2 / FMA3 kernels; the script
 * also sets HR_NO_AVX512=1, which keeps headroom's own kernels on their AVX2 and portable paths.
 * Not emulated: GCC's target_clones loops (HR__CLONES: the guided filter's rows, the resizes, the
 * gates) still take their AVX-512 clones (their resolvers read the CPU before any preload code
 * runs); the cores' clocks and caches are the AVX-512 host's. An estimate, not a measurement on
 * an AVX2 machine.
 * Build: cc -O2 -shared -fPIC -o noavx512_preload.so bench/noavx512_preload.c -ldl -lcpuinfo
 * (cpuinfo.h: Debian's libcpuinfo-dev). Check: XNNPACK's hot loops use ymm registers (perf). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <stdbool.h>
#include <stdio.h>
#include <cpuinfo.h>

bool cpuinfo_initialize(void) {
  bool (*real)(void) = (bool (*)(void))dlsym(RTLD_NEXT, "cpuinfo_initialize");
  if (!real) { fprintf(stderr, "noavx512_preload: no cpuinfo_initialize to wrap\n"); return false; }
  const bool ok = real();
  cpuinfo_isa.avx512f = cpuinfo_isa.avx512pf = cpuinfo_isa.avx512er = cpuinfo_isa.avx512cd = false;
  cpuinfo_isa.avx512dq = cpuinfo_isa.avx512bw = cpuinfo_isa.avx512vl = cpuinfo_isa.avx512ifma = false;
  cpuinfo_isa.avx512vbmi = cpuinfo_isa.avx512vbmi2 = cpuinfo_isa.avx512bitalg = cpuinfo_isa.avx512vpopcntdq = false;
  cpuinfo_isa.avx512vnni = cpuinfo_isa.avx512bf16 = cpuinfo_isa.avx512vp2intersect = false;
  cpuinfo_isa.avx512_4vnniw = cpuinfo_isa.avx512_4fmaps = false;
  return ok;
}
