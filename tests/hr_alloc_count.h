/* A counting allocator for the zero-allocations-per-frame tests: include it in exactly one test
 * binary's main file. The malloc family is defined here and forwarded to glibc's own entry points,
 * so every allocation of the process goes through it: the library, XNNPACK, pthreadpool (on any
 * thread). It counts only between count_start() and count_stop(). Not under AddressSanitizer or
 * ThreadSanitizer, which own malloc (HR_COUNTING is then 0 and nothing is counted). */
#ifndef HR_ALLOC_COUNT_H
#define HR_ALLOC_COUNT_H
#include <errno.h>
#include <stddef.h>

/* ---- counting allocator ---------------------------------------------------------------------
 * The malloc family is defined here and forwarded to glibc's own entry points, so every
 * allocation of the process goes through it: the library, XNNPACK, pthreadpool (on any thread).
 * It counts only while `counting` is set. Not under AddressSanitizer, which owns malloc. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define HR_COUNTING 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define HR_COUNTING 0
#endif
#endif
#ifndef HR_COUNTING
#define HR_COUNTING 1
#endif

static int counting;
static long n_alloc, n_free;
static long long bytes_alloc;

#if HR_COUNTING
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void *__libc_valloc(size_t);
extern void *__libc_pvalloc(size_t);
extern void __libc_free(void *);

static void count_alloc(size_t n) {
  if (__atomic_load_n(&counting, __ATOMIC_RELAXED)) {
    __atomic_fetch_add(&n_alloc, 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&bytes_alloc, (long long)n, __ATOMIC_RELAXED);
  }
}
static void count_free(void *p) {
  if (p && __atomic_load_n(&counting, __ATOMIC_RELAXED)) __atomic_fetch_add(&n_free, 1, __ATOMIC_RELAXED);
}
void *malloc(size_t n) { count_alloc(n); return __libc_malloc(n); }
void *calloc(size_t a, size_t b) { count_alloc(a * b); return __libc_calloc(a, b); }
void *realloc(void *p, size_t n) {
  count_alloc(n);
  if (!n) count_free(p);
  return __libc_realloc(p, n);
}
void free(void *p) { count_free(p); __libc_free(p); }
void *memalign(size_t a, size_t n) { count_alloc(n); return __libc_memalign(a, n); }
void *aligned_alloc(size_t a, size_t n) { count_alloc(n); return __libc_memalign(a, n); }
void *valloc(size_t n) { count_alloc(n); return __libc_valloc(n); }
void *pvalloc(size_t n) { count_alloc(n); return __libc_pvalloc(n); }
int posix_memalign(void **out, size_t a, size_t n) {
  if (a < sizeof(void *) || (a & (a - 1))) return EINVAL;
  count_alloc(n);
  void *p = __libc_memalign(a, n);
  if (!p) return ENOMEM;
  *out = p;
  return 0;
}
#endif

static void count_start(void) {
  n_alloc = n_free = 0; bytes_alloc = 0;
  __atomic_store_n(&counting, 1, __ATOMIC_SEQ_CST);
}
static void count_stop(void) { __atomic_store_n(&counting, 0, __ATOMIC_SEQ_CST); }
#endif
