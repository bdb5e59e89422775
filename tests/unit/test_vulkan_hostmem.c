/* Zero-copy frames on the Vulkan backend (hr_session_register_memory; lavapipe here, under the
 * validation layer): NV12 frames of a real clip in a malloc'd pool (not page aligned: the import is
 * rounded out to whole pages) registered with the session are copied to the device by the GPU from
 * where they lie: bytes_copied 0, and every matte bit-identical to a session that copies the same
 * frames through its staging buffer, state carried. A frame of the pool with padded rows (not
 * packed) and a frame outside the pool are copied as before (bytes_copied > 0), same mattes. The
 * registration survives a replan; after unregistering, frames are copied again. Bad calls: NULL,
 * 0 bytes, a 17th range, an unknown pointer. The CPU backend accepts a registration (it reads
 * frames in place anyway). Then the frame beside the network (HR_VK_XQ=1: the ingest reads the
 * frame where it lies, the copy for the tail on another submission; on lavapipe's one queue): the
 * same frames, registered and not, give the same mattes bit for bit as the copying session, and
 * every frame went that way (registered ones read in imported memory). Without Vulkan in the build:
 * the CPU part only. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "headroom.h"
#include "headroom/io.h"
#include "hr_test_frames.h"
#ifdef HR_HAVE_VULKAN
#include "backend/backend.h"
#include "session/session_impl.h"
#endif

#define W 128
#define H 96
#define NF 5

static uint8_t rgb[NF][W * H * 3], nv12[NF][W * H * 3 / 2];
static hr_frame fr_rgb[NF], fr_nv12[NF];

/* Push f to a (copies) and b (registered); the mattes equal bit for bit; b copied zc ? 0 : > 0 bytes. */
static void same(hr_session *a, hr_session *b, const hr_frame *f, int zc, const char *what, int i) {
  hr_outputs oa, ob;
  CHECK_EQ_INT(hr_session_push(a, f, &oa), HR_OK);
  hr_status st = hr_session_push(b, f, &ob);
  CHECKF(st == HR_OK, "%s frame %d: %s", what, i, hr_session_last_error(b));
  if (st) return;
  CHECK(oa.bytes_copied > 0);
  CHECKF(zc ? ob.bytes_copied == 0 : ob.bytes_copied > 0, "%s frame %d: %lld bytes copied", what, i, (long long)ob.bytes_copied);
  long d = 0;
  for (int k = 0; k < oa.width * oa.height; k++) d += memcmp(&oa.alpha[k], &ob.alpha[k], sizeof(float)) != 0;
  printf("%s frame %d: %lld bytes copied (the copying session %lld), %ld of %d alpha values differ\n", what, i,
         (long long)ob.bytes_copied, (long long)oa.bytes_copied, d, oa.width * oa.height);
  CHECK_EQ_INT(d, 0);
}

int main(void) {
  char mp[1024], dp[1024], err[512];
  if (!hr_test_path("HR_MODEL_DIR", "rvm.json", mp, sizeof mp)) SKIP("HR_MODEL_DIR unset");
  if (!hr_test_path("HR_DATA_DIR", "sam2-bedroom/frames", dp, sizeof dp)) SKIP("HR_DATA_DIR unset");
  hr_model *m;
  if (hr_model_load(mp, &m, err, sizeof err)) FATAL("cannot load %s: %s", mp, err);
  if (hr_test_small_frames(dp, W, H, NF, rgb[0], nv12[0], fr_rgb, fr_nv12, err, sizeof err)) FATAL("%s: %s", dp, err);
  hr_status st;

  /* the CPU backend: accepted, nothing changes */
  hr_session *x = hr_test_rvm_session(m, HR_BACKEND_XNNPACK, W, H, 0.5f, &st);
  if (st) FATAL("XNNPACK session: %s", hr_status_name(st));
  CHECK_EQ_INT(hr_session_register_memory(x, nv12, sizeof nv12), HR_OK);
  CHECK_EQ_INT(hr_session_register_memory(x, NULL, 10), HR_EINVAL);
  CHECK_EQ_INT(hr_session_register_memory(x, nv12, 0), HR_EINVAL);
  CHECK_EQ_INT(hr_session_unregister_memory(x, rgb), HR_EINVAL);
  CHECK_EQ_INT(hr_session_unregister_memory(x, nv12), HR_OK);
  hr_session_destroy(x);

#ifndef HR_HAVE_VULKAN
  hr_model_destroy(m);
  return hr_test_finish("test_vulkan_hostmem (no Vulkan in this build: the CPU backend's part)");
#else
  hr_test_vulkan_env(1);
  hr_session *a = hr_test_rvm_session(m, HR_BACKEND_VULKAN, W, H, 0.5f, &st);
  if (st == HR_ENOTSUP) SKIP("no Vulkan device named '%s' here", getenv("HR_VULKAN_DEVICE"));
  if (st) FATAL("Vulkan session: %s", hr_status_name(st));
  hr_session *b = hr_test_rvm_session(m, HR_BACKEND_VULKAN, W, H, 0.5f, &st);
  if (st) FATAL("Vulkan session: %s", hr_status_name(st));

  /* the pool: NF packed NV12 frames, then one frame with rows padded to W + 64, in one malloc */
  const size_t fb = (size_t)W * H * 3 / 2, pad = W + 64;
  uint8_t *pool = malloc(fb * NF + pad * H * 3 / 2);
  hr_frame pf[NF], padded;
  for (int i = 0; i < NF; i++) {
    memcpy(pool + fb * i, nv12[i], fb);
    pf[i] = fr_nv12[i];
    pf[i].planes[0] = pool + fb * i; pf[i].planes[1] = pool + fb * i + (size_t)W * H;
  }
  uint8_t *pp = pool + fb * NF;
  for (int y = 0; y < H; y++) memcpy(pp + pad * y, nv12[0] + (size_t)W * y, W);
  for (int y = 0; y < H / 2; y++) memcpy(pp + pad * H + pad * y, nv12[0] + (size_t)W * H + (size_t)W * y, W);
  padded = fr_nv12[0];
  padded.planes[0] = pp; padded.planes[1] = pp + pad * H; padded.strides[0] = padded.strides[1] = (ptrdiff_t)pad;

  st = hr_session_register_memory(b, pool, fb * NF + pad * H * 3 / 2);
  if (st == HR_ENOTSUP) SKIP("%s", hr_session_last_error(b));   /* a device without VK_EXT_external_memory_host */
  CHECKF(st == HR_OK, "register: %s: %s", hr_status_name(st), hr_session_last_error(b));
  CHECK_EQ_INT(hr_session_register_memory(b, pool, fb * NF + pad * H * 3 / 2), HR_OK); /* again: nothing new */
  for (int i = 0; i < NF; i++) same(a, b, &pf[i], 1, "registered", i);
  same(a, b, &padded, 0, "padded rows", 0);
  same(a, b, &fr_nv12[1], 0, "outside the pool", 1);
  same(a, b, &pf[2], 1, "registered again", 2);

  /* a replan keeps the registration */
  CHECK_EQ_INT(hr_session_replan(a, W, H, 0.25f), HR_OK);
  CHECK_EQ_INT(hr_session_replan(b, W, H, 0.25f), HR_OK);
  for (int i = 0; i < 2; i++) same(a, b, &pf[i], 1, "after a replan", i);

  /* 16 ranges at most */
  static uint8_t many[16][64];
  int ok = 0;
  for (int k = 0; k < 16; k++) ok += hr_session_register_memory(b, many[k], sizeof many[k]) == HR_OK;
  CHECK_EQ_INT(ok, 15);   /* the pool holds the first slot */
  CHECK_EQ_INT(hr_session_register_memory(b, many[15], sizeof many[15]), HR_ERANGE);
  printf("a 17th range: %s\n", hr_session_last_error(b));
  for (int k = 0; k < 15; k++) CHECK_EQ_INT(hr_session_unregister_memory(b, many[k]), HR_OK);

  /* unregistered: copied again */
  CHECK_EQ_INT(hr_session_unregister_memory(b, pool), HR_OK);
  CHECK_EQ_INT(hr_session_unregister_memory(b, pool), HR_EINVAL);
  same(a, b, &pf[3], 0, "unregistered", 3);

  hr_session_destroy(a);
  hr_session_destroy(b);

  /* the frame beside the network: c reads registered frames in place, d the staging buffer */
  setenv("HR_VK_XQ", "1", 1);
  hr_session *c = hr_test_rvm_session(m, HR_BACKEND_VULKAN, W, H, 0.5f, &st);
  hr_session *d = hr_test_rvm_session(m, HR_BACKEND_VULKAN, W, H, 0.5f, &st);
  unsetenv("HR_VK_XQ");
  if (!c || !d) FATAL("Vulkan sessions with HR_VK_XQ=1: %s", hr_status_name(st));
  hr_session *ref = hr_test_rvm_session(m, HR_BACKEND_VULKAN, W, H, 0.5f, &st);
  if (st) FATAL("Vulkan session: %s", hr_status_name(st));
  CHECKF(hr_session_register_memory(c, pool, fb * NF + pad * H * 3 / 2) == HR_OK, "register: %s", hr_session_last_error(c));
  int mode = -1;
  hr__vk_frames_beside(c->bimpl, &mode, NULL);
  CHECK_EQ_INT(mode, 2);   /* lavapipe: one queue family */
  hr_session *ref2 = hr_test_rvm_session(m, HR_BACKEND_VULKAN, W, H, 0.5f, &st);
  if (st) FATAL("Vulkan session: %s", hr_status_name(st));
  int pushes = 0;
  for (int i = 0; i < NF; i++, pushes++) { same(ref, c, &pf[i], 1, "beside, registered", i); same(ref2, d, &pf[i], 0, "beside, copied", i); }
  same(ref, c, &padded, 0, "beside, padded rows", 0);
  same(ref2, d, &padded, 0, "beside, copied, padded rows", 0);
  pushes++;
  CHECK_EQ_INT(hr_session_replan(ref, W, H, 0.25f), HR_OK);
  setenv("HR_VK_XQ", "1", 1);   /* read at every plan's create, as the backend's other switches */
  CHECK_EQ_INT(hr_session_replan(c, W, H, 0.25f), HR_OK);
  unsetenv("HR_VK_XQ");
  for (int i = 0; i < 2; i++) same(ref, c, &pf[i], 1, "beside, after a replan", i);
  int64_t ip = 0, nc = hr__vk_frames_beside(c->bimpl, &mode, &ip), nd = hr__vk_frames_beside(d->bimpl, NULL, NULL);
  printf("beside the network: %lld frames since the replan (%lld in place); the unregistered session %lld of %d\n", (long long)nc,
         (long long)ip, (long long)nd, pushes);
  CHECK_EQ_INT(mode, 2);
  CHECK_EQ_INT((int)nc, 2);
  CHECK_EQ_INT((int)ip, 2);
  CHECK_EQ_INT((int)nd, pushes);
  /* a profiled frame times every op in one command buffer: not beside, same matte */
  hr_session_set_profiling(c, 1);
  hr_session_set_profiling(ref, 1);
  same(ref, c, &pf[3], 1, "beside, profiled", 3);
  CHECK_EQ_INT((int)hr__vk_frames_beside(c->bimpl, NULL, NULL), 2);
  hr_session_destroy(c); hr_session_destroy(d); hr_session_destroy(ref); hr_session_destroy(ref2);

  CHECKF(hr__vk_validation_messages() == 0, "%d validation messages", hr__vk_validation_messages());
  free(pool);
  hr_model_destroy(m);
  return hr_test_finish("test_vulkan_hostmem");
#endif
}
