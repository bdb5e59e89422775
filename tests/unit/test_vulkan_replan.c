/* A replan on the Vulkan backend (a live loop's rung change) takes over the replaced plan's device,
 * pipelines and tuned kernels instead of making them anew (vk_dev in vk_backend.c: on the H200 a
 * replan took 350-460 ms, 190-255 of them tuning). On lavapipe with the tuner on (HR_VK_TUNE=1),
 * RVM at 64x48 on 4 real bedroom frames:
 *   (1) the first plan makes its own device and times every convolution;
 *   (2) a replan to another ratio takes the device over and times only the convolutions whose
 *       dispatch it has not seen; its mattes equal those of a session created at that ratio with
 *       nothing shared (HR_VK_SHARE=0) within the fp32 bounds (mean 1e-5, max 1e-3: its own
 *       timing may pick other kernels);
 *   (3) back at the first ratio nothing is timed, and the mattes are the first plan's bit for bit
 *       (the state is reset after each replan, which by default carries it over resampled, so
 *       that the same frames give the same output);
 *   (4) destroying the session after replans frees the shared device once (ASan pass: no leak, no
 *       double destroy); the frame staging, frame and read-back buffers (sized by the frame, not
 *       the ratio) are taken over by each replan too, and freed once, and the weights are copied
 *       on the device from the replaced plan (the mattes of (2) and (3) check their values);
 *   (5) a stream that adapts visits its lower rung at create (stream.c, warm_rungs) and comes back
 *       without a replan event or count; its first step down then times nothing. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "headroom.h"
#include "headroom/stream.h"
#include "hr_test_frames.h"
#include "session/session_impl.h"
#include "backend/backend.h"

#define W 64
#define H 48
#define NF 4

static int push_all(hr_session *s, const hr_frame *fr, float *alpha) {
  for (int i = 0; i < NF; i++) {
    hr_outputs o;
    hr_status st = hr_session_push(s, &fr[i], &o);
    CHECKF(st == HR_OK, "frame %d: %s", i, hr_session_last_error(s));
    if (st) return 0;
    CHECK(o.width == W && o.height == H);
    memcpy(alpha + (size_t)i * W * H, o.alpha, sizeof(float) * W * H);
  }
  return 1;
}

int main(void) {
#ifndef HR_HAVE_VULKAN
  SKIP("this build has no Vulkan backend (libvulkan-dev / glslc absent at configure time)");
#else
  char mp[1024], dp[1024], err[512];
  if (!hr_test_path("HR_MODEL_DIR", "rvm.json", mp, sizeof mp)) SKIP("HR_MODEL_DIR unset");
  if (!hr_test_path("HR_DATA_DIR", "sam2-bedroom/frames", dp, sizeof dp)) SKIP("HR_DATA_DIR unset");
  hr_test_vulkan_env(1);
  setenv("HR_VK_TUNE", "1", 1);
  static uint8_t rgb[NF * W * H * 3], nv12[NF * W * H * 3 / 2];
  hr_frame fr[NF], frn[NF];
  const char *why = hr_test_small_frames(dp, W, H, NF, rgb, nv12, fr, frn, err, sizeof err);
  if (why) { CHECKF(0, "%s", why); return hr_test_finish("test_vulkan_replan"); }
  hr_model *m = NULL;
  CHECK_EQ_INT(hr_model_load(mp, &m, err, sizeof err), HR_OK);
  if (!m) return hr_test_finish("test_vulkan_replan");
  static float a0[NF * W * H], a1[NF * W * H], ref[NF * W * H], again[NF * W * H];
  hr_status st;
  hr_session *s = hr_test_rvm_session(m, HR_BACKEND_VULKAN, W, H, 0.25f, &st);
  CHECKF(st == HR_OK, "create: %s", hr_session_last_error(NULL));
  if (!s) { hr_model_destroy(m); return hr_test_finish("test_vulkan_replan"); }
  int timed, kept, same, shared;
  /* (1) each distinct convolution timed once */
  shared = hr__vk_create_stats(s->bimpl, &timed, &kept, &same);
  printf("create at 0.25: shared %d, timed %d, same %d, kept %d\n", shared, timed, same, kept);
  CHECK(!shared && timed > 0 && kept == 0);
  int nb = 0, sb = hr__vk_shared_bufs(s->bimpl, &nb);
  CHECK(sb == 0 && nb == 3);
  CHECK(!hr__vk_consts_copied(s->bimpl));
  const int n_conv = timed + same;
  push_all(s, frn, a0);
  /* (2) */
  CHECK_EQ_INT(hr_session_replan(s, W, H, 0.2f), HR_OK);
  CHECK_EQ_INT(hr_session_reset(s), HR_OK); /* compared with a fresh session below */
  shared = hr__vk_create_stats(s->bimpl, &timed, &kept, &same);
  sb = hr__vk_shared_bufs(s->bimpl, &nb);
  printf("replan to 0.2: shared %d, timed %d, same %d, kept %d; frame staging, frame and read-back buffers taken over: %d of %d\n", shared,
         timed, same, kept, sb, nb);
  CHECK(shared && timed > 0 && kept > 0 && timed + same + kept == n_conv);
  CHECK(sb == 3 && nb == 3);   /* the frame's size did not change: the same buffers */
  printf("replan to 0.2: weights %s\n", hr__vk_consts_copied(s->bimpl) ? "copied on the device from the replaced plan" : "uploaded");
  CHECK(hr__vk_consts_copied(s->bimpl));   /* RVM's weights do not depend on the ratio */
  push_all(s, frn, a1);
  /* the same ratio in a session of its own, nothing shared: its own timing may pick other kernels,
   * so the mattes agree within the Vulkan tests' fp32 bounds, not to the bit */
  setenv("HR_VK_SHARE", "0", 1);
  hr_session *r = hr_test_rvm_session(m, HR_BACKEND_VULKAN, W, H, 0.2f, &st);
  unsetenv("HR_VK_SHARE");
  CHECKF(st == HR_OK, "create at 0.2: %s", hr_session_last_error(NULL));
  if (r) {
    int rs = hr__vk_create_stats(r->bimpl, &timed, &kept, &same);
    CHECK(!rs && timed + same == n_conv && kept == 0);
    push_all(r, frn, ref);
    double sum = 0, mx = 0;
    for (int k = 0; k < NF * W * H; k++) {
      double d = fabs((double)a1[k] - ref[k]);
      sum += d; if (d > mx || d != d) mx = d;
    }
    printf("replanned vs own session at 0.2: mean |d| %.3g, max %.3g\n", sum / (NF * W * H), mx);
    CHECKF(sum / (NF * W * H) <= 1e-5 && mx <= 1e-3, "mean %.3g max %.3g", sum / (NF * W * H), mx);
    hr_session_destroy(r);
  }
  /* (3) */
  CHECK_EQ_INT(hr_session_replan(s, W, H, 0.25f), HR_OK);
  CHECK_EQ_INT(hr_session_reset(s), HR_OK); /* compared with the first visit, from a zero state */
  shared = hr__vk_create_stats(s->bimpl, &timed, &kept, &same);
  printf("replan back to 0.25: shared %d, timed %d, same %d, kept %d\n", shared, timed, same, kept);
  CHECK(shared && timed == 0 && kept == n_conv);
  push_all(s, frn, again);
  int differ = 0;
  for (int k = 0; k < NF * W * H; k++) differ += memcmp(&a0[k], &again[k], sizeof(float)) != 0;
  CHECKF(differ == 0, "%d alpha values differ from the first visit of ratio 0.25", differ);
  /* (4) */
  hr_session_destroy(s);
  /* (5) at 128x96 ratio 0.5: processing 64x48, the ladder's floor, so a ladder of 2 rungs (0.5, 0.4) */
  static uint8_t rgb2[NF * 128 * 96 * 3], nv2[NF * 128 * 96 * 3 / 2];
  hr_frame fr2[NF], frn2[NF];
  why = hr_test_small_frames(dp, 128, 96, NF, rgb2, nv2, fr2, frn2, err, sizeof err);
  CHECKF(!why, "%s", why ? why : "");
  hr_stream_params sp;
  hr_stream_params_default(&sp);
  sp.session.width = 128; sp.session.height = 96; sp.session.downsample_ratio = 0.5f; sp.session.threads = 1;
  sp.session.backend = HR_BACKEND_VULKAN;
  sp.adapt = true; sp.max_rungs = 2; sp.budget_ms = 0.01;   /* no rung keeps it: a step down at once */
  hr_stream *str = NULL;
  if (!why) CHECKF(hr_stream_create(m, &sp, &str, err, sizeof err) == HR_OK, "stream: %s", err);
  if (str) {
    hr_session *ss = hr_stream_session(str);
    shared = hr__vk_create_stats(ss->bimpl, &timed, &kept, &same);
    printf("stream created: shared %d, timed %d, same %d, kept %d, ratio %.3f\n", shared, timed, same, kept, ss->plan->ratio);
    CHECK(shared && timed == 0 && kept > 0 && ss->plan->ratio == 0.5f);
    const int n_conv2 = kept;
    hr_stream_result res;
    int stepped = 0;
    for (int i = 0; i < NF && !stepped; i++) {
      CHECK_EQ_INT(hr_stream_push(str, &frn2[i], &res), HR_OK);
      if (i == 0) CHECK(!(res.events & HR_STREAM_EVENT_RUNG_CHANGED) && !(res.record.state_reset));
      if (res.rung == 1) {
        stepped = 1;
        shared = hr__vk_create_stats(hr_stream_session(str)->bimpl, &timed, &kept, &same);
        printf("stream stepped down at frame %d: shared %d, timed %d, same %d, kept %d\n", i, shared, timed, same, kept);
        CHECK(shared && timed == 0 && kept == n_conv2);
      }
    }
    CHECKF(stepped, "the stream did not step down in %d frames at a 0.01 ms budget", NF);
    hr_stream_stats stt;
    hr_stream_get_stats(str, &stt);
    CHECK_EQ_INT(stt.replans, 1);
    hr_stream_destroy(str);
  }
  hr_model_destroy(m);
  return hr_test_finish("test_vulkan_replan");
#endif
}
