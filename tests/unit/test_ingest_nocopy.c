/* Zero-copy ingest, seen from outside the library (issue 16, point 7): ingest_zero_copy.sh trusts the
 * session's own bytes_copied; this test does not. A 1920x1440 NV12 frame (ratio 0.25, the camera
 * path whose first op resamples the caller's planes in place) is pushed 8 times after warm-up, and
 * three instruments that the library cannot influence watch each push:
 *   1. the frame's pages are mprotect()ed PROT_READ before the pushes: a write into the caller's
 *      planes kills the test (SIGSEGV);
 *   2. memcpy and memmove are interposed in this binary (every call of the process, XNNPACK and
 *      the thread pool included, resolves to them): no call may copy >= a quarter of the Y plane,
 *      and no bytes at all may be copied out of the frame's planes; the counting allocator
 *      (hr_alloc_count.h) must see no allocation during the pushes;
 *   3. after the pushes, every writable mapping of the process except the frame's own is searched
 *      for 32 random 64-byte probes of the frame (random bytes: a probe matches only a copy of it).
 *      A copy that survives the push in any buffer (heap, stack, a thread's stack, static storage),
 *      made by memcpy or by a loop, is found.
 * Each instrument is shown to work on a deliberate whole-plane copy in the test itself (positive
 * control). Under AddressSanitizer, memcpy calls of instrumented code go to __asan_memcpy, the
 * allocator is ASan's and its shadow memory may not be read: only instrument 1 runs there (with
 * the pushes themselves checked by ASan); the Release pass runs all three. */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "hr_test.h"
#include "headroom.h"
#include "hr_alloc_count.h"

#define W 1920
#define H 1440
#define YB ((size_t)W * H)
#define UVB ((size_t)W * H / 2)
#define NPROBE 16   /* per plane */
#define PROBE 64

/* ---- memcpy / memmove interposer ------------------------------------------------------------ */
static void *(*real_memcpy)(void *, const void *, size_t);
static void *(*real_memmove)(void *, const void *, size_t);
static const uint8_t *watch_lo, *watch_hi;    /* the frame's mapping */
static int watching;
static long long big_copies, from_frame_bytes;
static size_t largest_copy;

static void note_copy(const void *src, size_t n) {
  if (!__atomic_load_n(&watching, __ATOMIC_RELAXED)) return;
  const uint8_t *s = src;
  if (n >= YB / 4) __atomic_fetch_add(&big_copies, 1, __ATOMIC_RELAXED);
  size_t cur = __atomic_load_n(&largest_copy, __ATOMIC_RELAXED);
  while (n > cur && !__atomic_compare_exchange_n(&largest_copy, &cur, n, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {}
  if (s < watch_hi && s + n > watch_lo) {
    const uint8_t *a = s > watch_lo ? s : watch_lo, *b = s + n < watch_hi ? s + n : watch_hi;
    __atomic_fetch_add(&from_frame_bytes, (long long)(b - a), __ATOMIC_RELAXED);
  }
}
/* Before the constructor below has run (dlsym itself may copy), bytes are moved one at a time;
 * volatile keeps the compiler from turning the loop back into a memcpy call. */
static void *slow_move(void *d, const void *s, size_t n) {
  volatile uint8_t *dd = d;
  const volatile uint8_t *ss = s;
  if (dd < ss) for (size_t i = 0; i < n; i++) dd[i] = ss[i];
  else for (size_t i = n; i-- > 0;) dd[i] = ss[i];
  return d;
}
void *memcpy(void *restrict d, const void *restrict s, size_t n) {
  note_copy(s, n);
  return real_memcpy ? real_memcpy(d, s, n) : slow_move(d, s, n);
}
void *memmove(void *d, const void *s, size_t n) {
  note_copy(s, n);
  return real_memmove ? real_memmove(d, s, n) : slow_move(d, s, n);
}
__attribute__((constructor)) static void find_real(void) {
  void *c = dlsym(RTLD_NEXT, "memcpy"), *m = dlsym(RTLD_NEXT, "memmove");
  real_memcpy = (void *(*)(void *, const void *, size_t))c;
  real_memmove = (void *(*)(void *, const void *, size_t))m;
}

/* ---- memory scan ---------------------------------------------------------------------------- */
/* Probes of the frame found in writable mappings other than the frame's own (regions over 1 GiB,
 * sanitizer reservations, are left out). Returns the number of probes found; *scanned = bytes. */
static int scan(const uint8_t *frame, const size_t *off, int n, size_t *scanned) {
  FILE *f = fopen("/proc/self/maps", "r");
  if (!f) FATAL("cannot read /proc/self/maps");
  static struct { uintptr_t lo, hi; } reg[4096];
  int nr = 0;
  char line[512];
  while (fgets(line, sizeof line, f) && nr < 4096) {
    unsigned long lo, hi;
    char perm[8] = "";
    if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perm) != 3 || perm[0] != 'r' || perm[1] != 'w') continue;
    if (strstr(line, "[vvar") || strstr(line, "[vsyscall]")) continue;
    if (lo < (uintptr_t)watch_hi && hi > (uintptr_t)watch_lo) continue;   /* the frame itself */
    if (hi - lo > ((unsigned long)1 << 30)) continue;
    reg[nr].lo = lo; reg[nr].hi = hi; nr++;
  }
  fclose(f);
  bool found[2 * NPROBE] = { false };
  *scanned = 0;
  for (int r = 0; r < nr; r++) {
    const size_t len = reg[r].hi - reg[r].lo;
    *scanned += len;
    for (int k = 0; k < n; k++)
      if (!found[k] && memmem((const void *)reg[r].lo, len, frame + off[k], PROBE)) found[k] = true;
  }
  int hits = 0;
  for (int k = 0; k < n; k++) hits += found[k];
  return hits;
}

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint64_t next64(void) { rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17; return rng; }

int main(void) {
  char mp[1024], err[512];
  if (!hr_test_path("HR_MODEL_DIR", "rvm.json", mp, sizeof mp)) FATAL("HR_MODEL_DIR unset");
  if (!real_memcpy || !real_memmove) FATAL("dlsym(RTLD_NEXT, memcpy/memmove) failed");
  hr_model *m = NULL;
  if (hr_model_load(mp, &m, err, sizeof err) != HR_OK) FATAL("model: %s", err);
  hr_session_params p;
  hr_session_params_default(&p);
  p.width = W; p.height = H; p.downsample_ratio = 0.25f; p.threads = 2;
  hr_session *s = NULL;
  hr_status st = hr_session_create(m, &p, &s);
  if (st != HR_OK) FATAL("session create: %s", hr_status_name(st));

  /* The frame: one anonymous mapping of random bytes, Y then CbCr. */
  const long pg = sysconf(_SC_PAGESIZE);
  const size_t map_len = (YB + UVB + (size_t)pg - 1) / (size_t)pg * (size_t)pg;
  uint8_t *fm = mmap(NULL, map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (fm == MAP_FAILED) FATAL("mmap");
  for (size_t i = 0; i + 8 <= map_len; i += 8) { uint64_t v = next64(); real_memcpy(fm + i, &v, 8); }
  watch_lo = fm; watch_hi = fm + map_len;
  hr_frame f;
  memset(&f, 0, sizeof f);
  f.fmt = HR_PIX_NV12_FULL; f.width = W; f.height = H;
  f.planes[0] = fm; f.planes[1] = fm + YB; f.strides[0] = f.strides[1] = W;
  size_t off[2 * NPROBE];
  for (int k = 0; k < NPROBE; k++) {
    off[k] = (size_t)(next64() % (YB - PROBE));
    off[NPROBE + k] = YB + (size_t)(next64() % (UVB - PROBE));
  }
  const bool counting_ok = HR_COUNTING;   /* memcpy of instrumented code and malloc are ASan's otherwise */

  /* 1: read-only from here on; warm-up pushes (first-frame work may allocate) */
  if (mprotect(fm, map_len, PROT_READ) != 0) FATAL("mprotect");
  hr_outputs o;
  for (int i = 0; i < 3; i++) CHECK_EQ_INT(hr_session_push(s, &f, &o), HR_OK);
  /* 2: the counted pushes */
  int64_t counter = 0;
  __atomic_store_n(&watching, 1, __ATOMIC_RELAXED);
  count_start();
  for (int i = 0; i < 8; i++) {
    CHECK_EQ_INT(hr_session_push(s, &f, &o), HR_OK);
    counter += o.bytes_copied;
  }
  count_stop();
  __atomic_store_n(&watching, 0, __ATOMIC_RELAXED);
  const long allocs = n_alloc;
  const long long alloc_bytes = bytes_alloc;
  /* 3: the scan */
  size_t scanned = 0;
  const int hits = counting_ok ? scan(fm, off, 2 * NPROBE, &scanned) : 0;
  printf("8 pushes of 1920x1440 NV12 at ratio 0.25 (alpha %dx%d): library's bytes_copied %lld; interposed memcpy/memmove: "
         "%lld bytes out of the frame, %lld calls >= a quarter plane, largest %zu bytes%s; allocations %ld (%lld bytes)%s; "
         "frame probes found elsewhere: %d of %d (%.0f MB of writable memory scanned%s); frame read-only throughout\n",
         o.width, o.height, (long long)counter, from_frame_bytes, big_copies, largest_copy,
         counting_ok ? "" : " (ASan: not seen)", allocs, alloc_bytes, counting_ok ? "" : " (ASan: not counted)", hits,
         2 * NPROBE, scanned / 1048576.0, counting_ok ? "" : ", ASan: no scan");
  CHECK_EQ_INT(counter, 0);
  CHECK_EQ_INT(hits, 0);
  if (counting_ok) {
    CHECK_EQ_INT(from_frame_bytes, 0);
    CHECK_EQ_INT(big_copies, 0);
    CHECK_EQ_INT(allocs, 0);
  }

  /* Positive control: the same instruments on a deliberate whole-plane copy. */
  from_frame_bytes = big_copies = 0;
  __atomic_store_n(&watching, 1, __ATOMIC_RELAXED);
  count_start();
  uint8_t *copy = malloc(YB);
  if (!copy) FATAL("malloc");
  memcpy(copy, fm, YB);
  __asm__ volatile("" : : "r"(copy) : "memory");   /* the copy is used: clang removed the unread one */
  count_stop();
  __atomic_store_n(&watching, 0, __ATOMIC_RELAXED);
  const int chits = counting_ok ? scan(fm, off, 2 * NPROBE, &scanned) : -1;
  printf("control (the test copies the Y plane itself): memcpy %lld bytes out of the frame, %lld big calls; "
         "allocations %ld (%lld bytes); probes found %d of %d (the %d in Y expected; -1: not scanned)\n",
         from_frame_bytes, big_copies, n_alloc, bytes_alloc, chits, 2 * NPROBE, NPROBE);
  if (counting_ok) {
    CHECK(chits >= NPROBE);   /* the Y probes */
    CHECK_EQ_INT(from_frame_bytes, (long long)YB);
    CHECK_EQ_INT(big_copies, 1);
    CHECK(n_alloc == 1 && bytes_alloc >= (long long)YB);
  }
  free(copy);
  munmap(fm, map_len);
  hr_session_destroy(s);
  hr_model_destroy(m);
  return hr_test_finish("test_ingest_nocopy");
}
