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
#include "hr_test.h"
#ifdef HR_HAVE_VULKAN
#include "backend/backend.h"
#endif

#define W 128
#define H 96
#define NF 6

static uint8_t rgb[NF][W * H * 3], nv12[NF][W * H * 3 / 2];
static hr_frame fr_rgb[NF], fr_nv12[NF];
static double worst_mean, worst_max;

static hr_session *make(hr_model *m, hr_backend be, hr_status *st) {
  hr_session_params p;
  hr_session_params_default(&p);
  p.width = W; p.height = H; p.downsample_ratio = 0.5f; p.threads = 1; p.backend = be;
  hr_session *s = NULL;
  *st = hr_session_create(m, &p, &s);
  return s;
}

/* Push f to both; compare alpha. */
static void compare(hr_session *a, hr_session *b, const hr_frame *f, const char *what, int i) {
  hr_outputs oa, ob;
  CHECK_EQ_INT(hr_session_push(a, f, &oa), HR_OK);
  hr_status st = hr_session_push(b, f, &ob);
  CHECKF(st == HR_OK, "%s frame %d: %s: %s", what, i, hr_status_name(st), hr_session_last_error(b));
  if (st) return;
  CHECK(oa.width == ob.width && oa.height == ob.height);
  int npx = oa.width * oa.height;
  double sum = 0, mx = 0;
  for (int k = 0; k < npx; k++) {
    double d = fabs((double)oa.alpha[k] - ob.alpha[k]);
    sum += d; if (d > mx || d != d) mx = d;
  }
  double mean = sum / npx;
  printf("fp16 %s frame %d: mean |d alpha| %.3g, max %.3g\n", what, i, mean, mx);
  CHECKF(mean <= 1e-3 && mx <= 0.05, "%s frame %d: mean %.3g max %.3g", what, i, mean, mx);
  if (mean > worst_mean) worst_mean = mean;
  if (mx > worst_max) worst_max = mx;
}

static void xfer_state(hr_session *from, hr_session *to) {
  size_t n = hr_session_state_size(from), wr = 0;
  uint8_t *b = malloc(n);
  CHECK_EQ_INT(hr_session_state_save(from, b, n, &wr), HR_OK);
  hr_status st = hr_session_state_load(to, b, n);
  CHECKF(st == HR_OK, "state load: %s", hr_session_last_error(to));
  free(b);
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
  hr_source *src;
  if (hr_source_open(dp, NULL, &src, err, sizeof err)) FATAL("cannot open %s: %s", dp, err);
  for (int i = 0; i < NF; i++) {
    hr_frame f;
    if (hr_source_read(src, &f)) FATAL("read frame %d: %s", i, hr_source_last_error(src));
    if (f.fmt != HR_PIX_RGB24 && f.fmt != HR_PIX_BGRA) FATAL("frames are %s", hr_pixfmt_name(f.fmt));
    int bpp = f.fmt == HR_PIX_RGB24 ? 3 : 4;
    for (int y = 0; y < H; y++)
      for (int x = 0; x < W; x++) {
        const uint8_t *s = (const uint8_t *)f.planes[0] + (ptrdiff_t)(y * f.height / H) * f.strides[0] + (x * f.width / W) * bpp;
        uint8_t *d = rgb[i] + (y * W + x) * 3;
        if (bpp == 3) { d[0] = s[0]; d[1] = s[1]; d[2] = s[2]; } else { d[0] = s[2]; d[1] = s[1]; d[2] = s[0]; }
        double Y = 0.299 * d[0] + 0.587 * d[1] + 0.114 * d[2];
        nv12[i][y * W + x] = (uint8_t)(Y + 0.5);
        if (!(x & 1) && !(y & 1)) {
          double cb = 128 + (d[2] - Y) / 1.772, cr = 128 + (d[0] - Y) / 1.402;
          uint8_t *c = nv12[i] + W * H + (y / 2) * W + x;
          c[0] = (uint8_t)(cb < 0 ? 0 : cb > 255 ? 255 : cb + 0.5);
          c[1] = (uint8_t)(cr < 0 ? 0 : cr > 255 ? 255 : cr + 0.5);
        }
      }
    fr_rgb[i] = (hr_frame){.fmt = HR_PIX_RGB24, .width = W, .height = H, .planes = {rgb[i]}, .strides = {W * 3}, .ts_ns = i * 33000000LL};
    fr_nv12[i] = (hr_frame){.fmt = HR_PIX_NV12_FULL, .width = W, .height = H, .planes = {nv12[i], nv12[i] + W * H},
                            .strides = {W, W}, .ts_ns = i * 33000000LL};
  }
  hr_source_destroy(src);

  hr_session *x = make(m, HR_BACKEND_XNNPACK, &st);
  if (st) FATAL("XNNPACK session: %s", hr_status_name(st));
  for (int i = 0; i < NF; i++) compare(x, v, &fr_rgb[i], "rgb24", i);
  /* Vulkan fp16 state -> XNNPACK: both continue from the Vulkan session's (fp16-rounded) state */
  xfer_state(v, x);
  for (int i = 0; i < 2; i++) compare(x, v, &fr_rgb[NF - 1 - i], "vk->xnn state", i);
  /* XNNPACK state -> Vulkan fp16 */
  xfer_state(x, v);
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
