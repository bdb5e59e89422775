/* Zero heap allocations per frame in headroom's own code on the Vulkan backend (lavapipe here):
 * the malloc family is wrapped, and an allocation counts as ours when its caller lies in this
 * executable (the library is linked in statically); the Vulkan loader's and driver's own (lavapipe
 * allocates at every submit) are counted apart and only reported. Frames pushed: NV12 and RGB24,
 * with a reset and a state save/load between them; then a session giving the 8-bit matte
 * (alpha_u8), its NV12 frame in memory registered with it (the GPU copies it from there). Not under AddressSanitizer, which owns malloc
 * (the frames are then pushed without counting). */
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "headroom.h"
#include "hr_test.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define COUNTING 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define COUNTING 0
#endif
#endif
#ifndef COUNTING
#define COUNTING 1
#endif

static int counting;
static long ours, theirs;
static void *self_base;

#if COUNTING
static __thread int in_hook;
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
static void note(void *ra) {
  if (!__atomic_load_n(&counting, __ATOMIC_RELAXED) || in_hook) return;
  in_hook = 1;
  Dl_info i;
  if (dladdr(ra, &i) && i.dli_fbase == self_base) __atomic_fetch_add(&ours, 1, __ATOMIC_RELAXED);
  else __atomic_fetch_add(&theirs, 1, __ATOMIC_RELAXED);
  in_hook = 0;
}
void *malloc(size_t n) { note(__builtin_return_address(0)); return __libc_malloc(n); }
void *calloc(size_t a, size_t b) { note(__builtin_return_address(0)); return __libc_calloc(a, b); }
void *realloc(void *p, size_t n) { note(__builtin_return_address(0)); return __libc_realloc(p, n); }
void *aligned_alloc(size_t a, size_t n) { note(__builtin_return_address(0)); return __libc_memalign(a, n); }
void *memalign(size_t a, size_t n) { note(__builtin_return_address(0)); return __libc_memalign(a, n); }
int posix_memalign(void **p, size_t a, size_t n) {
  note(__builtin_return_address(0));
  *p = __libc_memalign(a, n);
  return *p ? 0 : 12;
}
#endif

#define W 64
#define H 48

int main(void) {
  char mp[1024], err[512];
  if (!hr_test_path("HR_MODEL_DIR", "rvm.json", mp, sizeof mp)) SKIP("HR_MODEL_DIR unset");
#ifndef HR_HAVE_VULKAN
  (void)err;
  SKIP("this build has no Vulkan backend (libvulkan-dev / glslc absent at configure time)");
#else
  hr_test_vulkan_env(0);   /* lavapipe; no validation layer (it allocates) */
  /* the fence polled rather than waited on (HR_VK_WAIT=spin): no allocation either */
  setenv("HR_VK_WAIT", "spin", 1);
  Dl_info me;
  if (!dladdr((void *)main, &me)) FATAL("dladdr(main) failed");
  self_base = me.dli_fbase;
  hr_model *m;
  if (hr_model_load(mp, &m, err, sizeof err)) FATAL("cannot load %s: %s", mp, err);
  hr_session_params p;
  hr_session_params_default(&p);
  p.width = W; p.height = H; p.downsample_ratio = 0.5f; p.threads = 1; p.backend = HR_BACKEND_VULKAN;
  hr_session *s;
  hr_status st = hr_session_create(m, &p, &s);
  if (st == HR_ENOTSUP) SKIP("no Vulkan device named '%s' here", getenv("HR_VULKAN_DEVICE"));
  if (st) FATAL("Vulkan session: %s", hr_status_name(st));
  static uint8_t nv[W * H * 3 / 2], rgb[W * H * 3];
  for (int k = 0; k < W * H * 3 / 2; k++) nv[k] = (uint8_t)(k * 7 + (k >> 5));
  for (int k = 0; k < W * H * 3; k++) rgb[k] = (uint8_t)(k * 13 + (k >> 4));
  hr_frame fn = {.fmt = HR_PIX_NV12_FULL, .width = W, .height = H, .planes = {nv, nv + W * H}, .strides = {W, W}};
  hr_frame fr = {.fmt = HR_PIX_RGB24, .width = W, .height = H, .planes = {rgb}, .strides = {W * 3}};
  size_t blen = hr_session_state_size(s);
  void *blob = malloc(blen);
  hr_outputs o;
  /* and a session giving the 8-bit matte, its NV12 frame in registered memory (copied by the GPU
   * from where it lies: the upload command re-recorded every frame) */
  hr_session_params p8 = p;
  p8.alpha_u8 = true;
  hr_session *s8;
  CHECK_EQ_INT(hr_session_create(m, &p8, &s8), HR_OK);
  const hr_status rs = hr_session_register_memory(s8, nv, sizeof nv);
  CHECKF(rs == HR_OK || rs == HR_ENOTSUP, "register: %s", hr_session_last_error(s8));
  if (rs) printf("%s\n", hr_session_last_error(s8));   /* a device that cannot import: frames copied */
  /* warm-up: both formats once */
  CHECK_EQ_INT(hr_session_push(s, &fn, &o), HR_OK);
  CHECK_EQ_INT(hr_session_push(s, &fr, &o), HR_OK);
  CHECK_EQ_INT(hr_session_push(s8, &fn, &o), HR_OK);
  CHECK_EQ_INT(hr_session_push(s8, &fr, &o), HR_OK);
  __atomic_store_n(&counting, 1, __ATOMIC_RELAXED);
  for (int i = 0; i < 3; i++) {
    CHECK_EQ_INT(hr_session_push(s, i & 1 ? &fr : &fn, &o), HR_OK);
    CHECK(o.alpha != NULL && o.width == W && o.height == H);
    /* what the stream's health monitor reads after every frame: the state from the device */
    const float *sv[8]; size_t sl[8];
    CHECK(hr_session_state_views(s, sv, sl, 8) == 4);
  }
  CHECK_EQ_INT(hr_session_reset(s), HR_OK);
  CHECK_EQ_INT(hr_session_push(s, &fn, &o), HR_OK);
  for (int i = 0; i < 3; i++) {
    CHECK_EQ_INT(hr_session_push(s8, i & 1 ? &fr : &fn, &o), HR_OK);
    CHECK(o.alpha_u8 != NULL && o.alpha == NULL);
    CHECK_EQ_INT(o.bytes_copied, i & 1 ? W * H * 3 : rs ? W * H * 3 / 2 : 0);
  }
  __atomic_store_n(&counting, 0, __ATOMIC_RELAXED);
  long frames_ours = ours, frames_theirs = theirs;
  /* state save/load may allocate (a transfer buffer): not a per-frame path, only reported */
  size_t wr;
  __atomic_store_n(&counting, 1, __ATOMIC_RELAXED);
  CHECK_EQ_INT(hr_session_state_save(s, blob, blen, &wr), HR_OK);
  CHECK_EQ_INT(hr_session_state_load(s, blob, blen), HR_OK);
  __atomic_store_n(&counting, 0, __ATOMIC_RELAXED);
  printf("4 frames, a reset, 3 frames with alpha_u8 (2 from registered memory): %ld allocations in headroom's code, %ld in the Vulkan loader/driver%s\n", frames_ours, frames_theirs,
         COUNTING ? "" : " (not counted under AddressSanitizer)");
  printf("state save + load: %ld in headroom's code, %ld in the loader/driver\n", ours - frames_ours, theirs - frames_theirs);
  CHECKF(frames_ours == 0, "%ld allocations in headroom's code during frames", frames_ours);
  /* the detector itself: planning allocates in headroom's code, and must be seen doing so */
  hr_plan_info info;
  long before = ours;
  __atomic_store_n(&counting, 1, __ATOMIC_RELAXED);
  CHECK_EQ_INT(hr_model_plan(m, &p, &info, err, sizeof err), HR_OK);
  __atomic_store_n(&counting, 0, __ATOMIC_RELAXED);
  if (COUNTING) CHECKF(ours > before, "planning counted no allocation: the counter is blind");
  free(blob);
  hr_session_destroy(s8);
  hr_session_destroy(s);
  hr_model_destroy(m);
  return hr_test_finish("test_vulkan_noalloc");
#endif
}
