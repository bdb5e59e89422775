/* The Vulkan backend end to end on RVM (lavapipe here; HR_VULKAN_DEVICE picks another device):
 * 128x96 frames of a real clip at ratio 0.5, state carried over 6 frames, against XNNPACK (fp32:
 * mean |d alpha| <= 1e-5, max <= 1e-3 per frame), in RGB24 and NV12 (converted on the GPU); state
 * saved on Vulkan and loaded on XNNPACK (and back) continues within the same bounds; reset,
 * replan (frames of the old size then arrive as an RGBF32 input), suspend/resume, stateless mode;
 * the device probe for an automatic choice never names a CPU device (llvmpipe) unless asked; without
 * Vulkan in the build, the backend must refuse with HR_ENOTSUP and say why. */
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

static hr_session *make(hr_model *m, hr_backend be, hr_status *st) { return hr_test_rvm_session(m, be, W, H, 0.5f, st); }

/* Push f to both; compare alpha. */
static void compare(hr_session *a, hr_session *b, const hr_frame *f, const char *what, int i) {
  double mean, mx;
  if (hr_test_alpha_diff(a, b, f, what, i, &mean, &mx)) return;
  printf("%s frame %d: mean |d alpha| %.3g, max %.3g\n", what, i, mean, mx);
  CHECKF(mean <= 1e-5 && mx <= 1e-3, "%s frame %d: mean %.3g max %.3g", what, i, mean, mx);
}

/* the state views of both sessions agree within the alpha bounds' max */
static void state_views_agree(hr_session *x, hr_session *v, const char *what) {
  const float *pa[8], *pb[8]; size_t la[8], lb[8];
  int na = hr_session_state_views(x, pa, la, 8), nb = hr_session_state_views(v, pb, lb, 8);
  CHECKF(na == 4 && nb == 4, "%s: %d and %d state views", what, na, nb);
  for (int k = 0; k < na && k < nb; k++) {
    double mx = 0;
    CHECK(la[k] == lb[k]);
    for (size_t j = 0; j < la[k] && la[k] == lb[k]; j++) { double d = fabs((double)pa[k][j] - pb[k][j]); if (d > mx || d != d) mx = d; }
    CHECKF(mx <= 1e-3, "%s: state r%d differs by %g", what, k + 1, mx);
  }
}

int main(void) {
  char mp[1024], dp[1024], err[512];
  if (!hr_test_path("HR_MODEL_DIR", "rvm.json", mp, sizeof mp)) SKIP("HR_MODEL_DIR unset");
  if (!hr_test_path("HR_DATA_DIR", "sam2-bedroom/frames", dp, sizeof dp)) SKIP("HR_DATA_DIR unset");
  hr_test_vulkan_env(1);   /* lavapipe, under the validation layer: no message allowed */
  hr_model *m;
  if (hr_model_load(mp, &m, err, sizeof err)) FATAL("cannot load %s: %s", mp, err);
  hr_status st;
  hr_session *v = make(m, HR_BACKEND_VULKAN, &st);
#ifndef HR_HAVE_VULKAN
  CHECK_EQ_INT(st, HR_ENOTSUP);
  CHECK(v == NULL);
  hr_model_destroy(m);
  return hr_test_finish("test_vulkan_rvm (no Vulkan in this build: refusal checked)");
#else
  if (st == HR_ENOTSUP) {
    /* only an environment without the device (no lavapipe installed) may skip */
    hr_session_params p; hr_session_params_default(&p); (void)p;
    SKIP("no Vulkan device named '%s' here", getenv("HR_VULKAN_DEVICE"));
  }
  if (st) FATAL("Vulkan session: %s", hr_status_name(st));
  /* frames: the clip's first NF frames, sampled down to WxH (nearest), and their NV12 (BT.601 full range) */
  if (hr_test_small_frames(dp, W, H, NF, rgb[0], nv12[0], fr_rgb, fr_nv12, err, sizeof err)) FATAL("%s: %s", dp, err);

  hr_session *x = make(m, HR_BACKEND_XNNPACK, &st);
  if (st) FATAL("XNNPACK session: %s", hr_status_name(st));
  /* RGB24, state carried */
  for (int i = 0; i < NF; i++) compare(x, v, &fr_rgb[i], "rgb24", i);
  {  /* the same with the dispatch folds off (on by default: vk_backend.c fold_on) */
    setenv("HR_VK_FOLDS", "0", 1);
    hr_session *vf = make(m, HR_BACKEND_VULKAN, &st), *xf = make(m, HR_BACKEND_XNNPACK, &st);
    unsetenv("HR_VK_FOLDS");
    if (!vf || !xf) FATAL("sessions with HR_VK_FOLDS=0: %s", hr_status_name(st));
    for (int i = 0; i < NF; i++) compare(xf, vf, &fr_rgb[i], "rgb24, HR_VK_FOLDS=0", i);
    for (int i = 0; i < 2; i++) compare(xf, vf, &fr_nv12[i], "nv12, HR_VK_FOLDS=0", i);
    hr_session_destroy(vf);
    hr_session_destroy(xf);
  }
  {  /* the direct 3x3 kernel on every stride-1 3x3 convolution (16- and 32-channel workgroups in
      * turn), then split along the input channels (a reduction after): on a GPU the tuner picks
      * them for the decoder's large layers, here it is off (lavapipe), so they are forced */
    const char *forced[2] = {"direct", "dsplit"};
    for (int k = 0; k < 2; k++) {
      setenv("HR_VK_CONV", forced[k], 1);
      hr_session *vd = make(m, HR_BACKEND_VULKAN, &st), *xd = make(m, HR_BACKEND_XNNPACK, &st);
      unsetenv("HR_VK_CONV");
      if (!vd || !xd) FATAL("sessions with HR_VK_CONV=%s: %s", forced[k], hr_status_name(st));
      char what[64];
      snprintf(what, sizeof what, "rgb24, HR_VK_CONV=%s", forced[k]);
      for (int i = 0; i < 4; i++) compare(xd, vd, &fr_rgb[i], what, i);
      hr_session_destroy(vd);
      hr_session_destroy(xd);
    }
  }
  {  /* the foreground output too (fgf.comp's four channels a pixel): fgr and alpha within the bounds */
    hr_session_params pf;
    hr_session_params_default(&pf);
    pf.width = W; pf.height = H; pf.downsample_ratio = 0.5f; pf.threads = 1; pf.want_fgr = true;
    hr_session *xg = NULL, *vg = NULL;
    CHECK_EQ_INT(hr_session_create(m, &pf, &xg), HR_OK);
    pf.backend = HR_BACKEND_VULKAN;
    CHECK_EQ_INT(hr_session_create(m, &pf, &vg), HR_OK);
    if (!xg || !vg) FATAL("sessions with want_fgr");
    for (int i = 0; i < 2; i++) {
      hr_outputs ox, ov;
      CHECK_EQ_INT(hr_session_push(xg, &fr_rgb[i], &ox), HR_OK);
      CHECK_EQ_INT(hr_session_push(vg, &fr_rgb[i], &ov), HR_OK);
      CHECK(ox.fgr && ov.fgr && ox.alpha && ov.alpha);
      if (!ox.fgr || !ov.fgr || !ox.alpha || !ov.alpha) break;
      double sf = 0, mf = 0, sa = 0, ma = 0;
      for (int k = 0; k < W * H * 3; k++) { double d = fabs((double)ox.fgr[k] - ov.fgr[k]); sf += d; if (d > mf || d != d) mf = d; }
      for (int k = 0; k < W * H; k++) { double d = fabs((double)ox.alpha[k] - ov.alpha[k]); sa += d; if (d > ma || d != d) ma = d; }
      sf /= W * H * 3; sa /= W * H;
      printf("want_fgr frame %d: fgr mean |d| %.3g max %.3g; alpha mean %.3g max %.3g\n", i, sf, mf, sa, ma);
      CHECKF(sf <= 1e-5 && mf <= 1e-3 && sa <= 1e-5 && ma <= 1e-3, "want_fgr frame %d: fgr %.3g / %.3g, alpha %.3g / %.3g", i, sf, mf, sa, ma);
    }
    hr_session_destroy(xg);
    hr_session_destroy(vg);
  }
  /* Vulkan state -> XNNPACK: both continue from the Vulkan session's state */
  hr_test_state_xfer(v, x);
  for (int i = 0; i < 2; i++) compare(x, v, &fr_rgb[NF - 1 - i], "vk->xnn state", i);
  /* XNNPACK state -> Vulkan */
  hr_test_state_xfer(x, v);
  compare(x, v, &fr_rgb[0], "xnn->vk state", 0);
  /* reset both, then NV12 frames (converted on the GPU) */
  CHECK_EQ_INT(hr_session_reset(x), HR_OK);
  CHECK_EQ_INT(hr_session_reset(v), HR_OK);
  for (int i = 0; i < 3; i++) compare(x, v, &fr_nv12[i], "nv12", i);
  /* the state views (health) read the device state: equal to XNNPACK's within the bounds. The
   * first read copies it once and has the frame's command buffer copy it from then on: the views
   * after the next frames come from that copy, and a state transfer either way goes through it */
  state_views_agree(x, v, "after 3 NV12 frames");
  compare(x, v, &fr_nv12[3], "nv12, state copied by the frame", 0);
  state_views_agree(x, v, "copied by the frame");
  compare(x, v, &fr_nv12[2], "nv12, state copied by the frame", 1);
  hr_test_state_xfer(v, x);
  compare(x, v, &fr_nv12[1], "vk->xnn state, copied by the frame", 0);
  hr_test_state_xfer(x, v);
  state_views_agree(x, v, "xnn->vk state written");
  compare(x, v, &fr_nv12[0], "xnn->vk state, copied by the frame", 0);
  state_views_agree(x, v, "after the transfers");
  /* replan both to 96x72: frames of the old size are now resampled on the CPU into an RGBF32
   * input, which the GPU ingests as such; then suspend and resume */
  CHECK_EQ_INT(hr_session_replan(x, 96, 72, 0.5f), HR_OK);
  hr_status rs = hr_session_replan(v, 96, 72, 0.5f);
  CHECKF(rs == HR_OK, "replan: %s", hr_session_last_error(v));
  for (int i = 0; i < 2; i++) compare(x, v, &fr_rgb[i], "replanned 96x72, 128x96 frames", i);
  CHECK_EQ_INT(hr_session_suspend(v), HR_OK);
  CHECK_EQ_INT(hr_session_suspend(x), HR_OK);
  CHECK_EQ_INT(hr_session_resume(v, 0, 0, 0), HR_OK);
  CHECK_EQ_INT(hr_session_resume(x, 0, 0, 0), HR_OK);
  compare(x, v, &fr_nv12[3], "resumed", 0);
  hr_session_destroy(x);
  hr_session_destroy(v);
  /* stateless on both */
  hr_session_params p;
  hr_session_params_default(&p);
  p.width = W; p.height = H; p.downsample_ratio = 0.5f; p.threads = 1; p.stateless = true;
  CHECK_EQ_INT(hr_session_create(m, &p, &x), HR_OK);
  p.backend = HR_BACKEND_VULKAN;
  CHECK_EQ_INT(hr_session_create(m, &p, &v), HR_OK);
  for (int i = 0; i < 2; i++) compare(x, v, &fr_rgb[i + 2], "stateless", i);
  hr_session_destroy(x);
  hr_session_destroy(v);
  /* the probe for an automatic choice: never a CPU device unless named; llvmpipe when named */
  char desc[512];
  const char *dev = getenv("HR_VULKAN_DEVICE");
  char named[64];
  snprintf(named, sizeof named, "%s", dev ? dev : "");
  unsetenv("HR_VULKAN_DEVICE");
  hr_status ps = hr__vk_probe(desc, sizeof desc);
  printf("probe, no device named: %s: %s\n", hr_status_name(ps), desc);
  CHECKF(ps == HR_OK ? strstr(desc, "(CPU)") == NULL && strstr(desc, "llvmpipe") == NULL : strstr(desc, "no GPU") != NULL, "probe: %s", desc);
  if (named[0]) {
    setenv("HR_VULKAN_DEVICE", named, 1);
    ps = hr__vk_probe(desc, sizeof desc);
    printf("probe, HR_VULKAN_DEVICE=%s: %s: %s\n", named, hr_status_name(ps), desc);
    CHECKF(ps == HR_OK && strcasestr(desc, named), "probe of the named device: %s", desc);
  }
  /* a device that does not exist: a clear refusal */
  setenv("HR_VULKAN_DEVICE", "no-such-gpu", 1);
  CHECK_EQ_INT(hr_session_create(m, &p, &v), HR_ENOTSUP);
  CHECKF(hr__vk_validation_messages() == 0, "%d validation messages", hr__vk_validation_messages());
  hr_model_destroy(m);
  return hr_test_finish("test_vulkan_rvm");
#endif
}
