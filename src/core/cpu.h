/* Which of our own AVX-512 paths this process may take. HR_NO_AVX512=1 (read once) takes none, as
 * on an AVX2-only CPU, so the fallbacks run and are tested on an AVX-512 machine too
 * (tests/cli/no_avx512.sh). XNNPACK chooses its own kernels (cpuinfo) and is not affected. */
#ifndef HR_CORE_CPU_H
#define HR_CORE_CPU_H
int hr__cpu_avx512f(void);     /* AVX-512F */
int hr__cpu_avx512bwvl(void);  /* AVX-512F, BW and VL */
#endif
