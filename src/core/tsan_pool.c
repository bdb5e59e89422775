/* ThreadSanitizer builds only (cmake -DHR_TSAN=ON, clang): pthreadpool's own synchronisation
 * (atomics and futexes in Debian's libpthreadpool, which is not instrumented) is invisible to TSan,
 * so every task of ours that writes what the caller reads after pthreadpool_parallelize_* returned
 * was reported as a race (test_exec_fuse: resize, broadcast, binary, concat rows). These definitions
 * of the three entry points we call take precedence over the library's (the linker takes them from
 * libheadroom first) and tell TSan what pthreadpool guarantees: the caller's writes before the call
 * happen before every task, every task happens before the call returns. Then they call the real
 * function. In any other build this file is empty. */
#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define HR_TSAN_POOL 1
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define HR_TSAN_POOL 1
#endif

#ifdef HR_TSAN_POOL
#include <dlfcn.h>
#include <pthreadpool.h>
#include <sanitizer/tsan_interface.h>

typedef void (*p1d_fn)(pthreadpool_t, pthreadpool_task_1d_t, void *, size_t, uint32_t);
typedef void (*p1t_fn)(pthreadpool_t, pthreadpool_task_1d_tile_1d_t, void *, size_t, size_t, uint32_t);
typedef void (*p2d_fn)(pthreadpool_t, pthreadpool_task_2d_t, void *, size_t, size_t, uint32_t);

static void *real(void **slot, const char *name) {
  void *f = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
  if (!f) {
    f = dlsym(RTLD_NEXT, name);
    __atomic_store_n(slot, f, __ATOMIC_RELEASE);
  }
  return f;
}

typedef struct job { void *fn, *ctx; } job;

static void t1d(void *p, size_t i) {
  job *j = p;
  __tsan_acquire(j);
  ((pthreadpool_task_1d_t)j->fn)(j->ctx, i);
  __tsan_release(j);
}
static void t1t(void *p, size_t i, size_t n) {
  job *j = p;
  __tsan_acquire(j);
  ((pthreadpool_task_1d_tile_1d_t)j->fn)(j->ctx, i, n);
  __tsan_release(j);
}
static void t2d(void *p, size_t i, size_t k) {
  job *j = p;
  __tsan_acquire(j);
  ((pthreadpool_task_2d_t)j->fn)(j->ctx, i, k);
  __tsan_release(j);
}

static void *r1d, *r1t, *r2d;
void pthreadpool_parallelize_1d(pthreadpool_t pool, pthreadpool_task_1d_t fn, void *ctx, size_t n, uint32_t flags) {
  job j = {(void *)fn, ctx};
  __tsan_release(&j);
  ((p1d_fn)real(&r1d, "pthreadpool_parallelize_1d"))(pool, t1d, &j, n, flags);
  __tsan_acquire(&j);
}
void pthreadpool_parallelize_1d_tile_1d(pthreadpool_t pool, pthreadpool_task_1d_tile_1d_t fn, void *ctx, size_t n, size_t tile, uint32_t flags) {
  job j = {(void *)fn, ctx};
  __tsan_release(&j);
  ((p1t_fn)real(&r1t, "pthreadpool_parallelize_1d_tile_1d"))(pool, t1t, &j, n, tile, flags);
  __tsan_acquire(&j);
}
void pthreadpool_parallelize_2d(pthreadpool_t pool, pthreadpool_task_2d_t fn, void *ctx, size_t ni, size_t nk, uint32_t flags) {
  job j = {(void *)fn, ctx};
  __tsan_release(&j);
  ((p2d_fn)real(&r2d, "pthreadpool_parallelize_2d"))(pool, t2d, &j, ni, nk, flags);
  __tsan_acquire(&j);
}
#else
typedef int hr__tsan_pool_empty; /* ISO C: a translation unit is not empty */
#endif
