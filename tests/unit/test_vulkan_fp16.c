/* The Vulkan backend with fp16 storage (HR_VK_FP16=1: activations, state and weights stored as
 * fp16 on the device; weights and the guided filter's statistics fp32; every sum fp32) end to end
 * on RVM, lavapipe here: 128x96 frames of a real clip at ratio 0.5, state carried over 6 frames,
 * against XNNPACK (fp32): mean |d alpha| <= 1e-3 per frame (issue 13's fp16 bound; measured 2e-4
 * at worst; the max, 8.4e-3 at worst, is printed and held to 0.05), in RGB24 and NV12; the
 * state saved on Vulkan fp16 and loaded on XNNPACK (and back) continues within the same bounds;
 * the same with every convolution kernel taken in turn.
 * Without Vulkan in the build there is nothing to test (the refusal is test_vulkan_rvm's). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "headroom.h"
#include "headroom/io.h"
#include "hr_test_frames.h"
#ifdef HR_HAVE_VULKAN
#include "backend/backend.h"
#endif

#define W 128
#define H 96
#define NF 6

static uint8_t rgb[NF][W * H * 3], nv12[NF][W * H * 3 / 2];
static hr_frame fr_rgb[NF], fr_nv12[NF];
static double worst_mean, worst_max;

static hr_session *make(hr_model *m, hr_backend be, hr_status *st) { return hr_test_rvm_session(m, be, W, H, 0.5f, st); }

/* Push f to both; compare alpha. */
static void compare(hr_session *a, hr_session *b, const hr_frame *f, const char *what, int i) {
  double mean, mx;
  if (hr_test_alpha_diff(a, b, f, what, i, &mean, &mx)) return;
  printf("fp16 %s frame %d: mean |d alpha| %.3g, max %.3g\n", what, i, mean, mx);
  CHECKF(mean <= 1e-3 && mx <= 0.05, "%s frame %d: mean %.3g max %.3g", what, i, mean, mx);
  if (mean > worst_mean) worst_mean = mean;
  if (mx > worst_max) worst_max = mx;
}

int main(void) {
  char mp[1024], dp[1024], err[512];
  if (!hr_test_path("HR_MODEL_DIR", "rvm.json", mp, sizeof mp)) SKIP("HR_MODEL_DIR unset");
  if (!hr_test_path("HR_DATA_DIR", "sam2-bedroom/frames", dp, sizeof dp)) SKIP("HR_DATA_DIR unset");
#ifndef HR_HAVE_VULKAN
  return hr_test_finish("test_vulkan_fp16 (no Vulkan in this build)");
#else
  hr_test_vulkan_env(1);   /* lavapipe, under the validation layer: no message allowed */
  setenv("HR_VK_FP16", "1", 1);
  hr_model *m;
  if (hr_model_load(mp, &m, err, sizeof err)) FATAL("cannot load %s: %s", mp, err);
  hr_status st;
  hr_session_params p;
  hr_session_params_default(&p);
  p.width = W; p.height = H; p.downsample_ratio = 0.5f; p.threads = 1; p.backend = HR_BACKEND_VULKAN;
  hr_session *v = NULL;
  st = hr_session_create_err(m, &p, &v, err, sizeof err);
  /* lavapipe has 16-bit storage: only a missing device may skip */
  if (st == HR_ENOTSUP && strstr(err, "16-bit")) FATAL("%s", err);
  if (st == HR_ENOTSUP) SKIP("no Vulkan device named '%s' here: %s", getenv("HR_VULKAN_DEVICE"), err);
  if (st) FATAL("Vulkan session: %s: %s", hr_status_name(st), err);
  CHECKF(hr__vk_fp16(v->bimpl), "HR_VK_FP16=1 but the session stores fp32");
  /* frames: the clip's first NF frames, sampled down to WxH (nearest), and their NV12 (BT.601 full range) */
  if (hr_test_small_frames(dp, W, H, NF, rgb[0], nv12[0], fr_rgb, fr_nv12, err, sizeof err)) FATAL("%s: %s", dp, err);

  hr_session *x = make(m, HR_BACKEND_XNNPACK, &st);
  if (st) FATAL("XNNPACK session: %s", hr_status_name(st));
  for (int i = 0; i < NF; i++) compare(x, v, &fr_rgb[i], "rgb24", i);
  /* Vulkan fp16 state -> XNNPACK: both continue from the Vulkan session's (fp16-rounded) state */
  hr_test_state_xfer(v, x);
  for (int i = 0; i < 2; i++) compare(x, v, &fr_rgb[NF - 1 - i], "vk->xnn state", i);
  /* XNNPACK state -> Vulkan fp16 */
  hr_test_state_xfer(x, v);
  for (int i = 0; i < 2; i++) compare(x, v, &fr_rgb[i], "xnn->vk state", i);
  CHECK_EQ_INT(hr_session_reset(x), HR_OK);
  CHECK_EQ_INT(hr_session_reset(v), HR_OK);
  for (int i = 0; i < NF; i++) compare(x, v, &fr_nv12[i], "nv12", i);
  /* every convolution kernel in turn (4x4-blocked, split reduction, tiled 64/32/16 and 2x2, one
   * output per thread: a GPU's tuning may pick any of them, the size heuristic here only some) */
  setenv("HR_VK_CONV", "cycle", 1);
  hr_session *c = NULL;
  st = hr_session_create_err(m, &p, &c, err, sizeof err);
  CHECKF(st == HR_OK, "Vulkan session, kernels cycled: %s", err);
  unsetenv("HR_VK_CONV");
  CHECK_EQ_INT(hr_session_reset(x), HR_OK);
  for (int i = 0; c && i < 3; i++) compare(x, c, &fr_rgb[i], "kernels cycled", i);
  if (c) hr_session_destroy(c);
  printf("fp16 worst frame: mean |d alpha| %.3g, max %.3g\n", worst_mean, worst_max);
  CHECKF(hr__vk_validation_messages() == 0, "%d validation messages", hr__vk_validation_messages());
  hr_session_destroy(x);
  hr_session_destroy(v);
  hr_model_destroy(m);
  return hr_test_finish("test_vulkan_fp16");
#endif
}
