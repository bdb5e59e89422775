/* The 8-bit matte (hr_session_params.alpha_u8) on real frames of the bedroom clip, state carried:
 *  - XNNPACK, RVM at 320x240 ratio 0.5 on 2 threads and at 1920x1440 ratio 0.25 (NV12, the camera
 *    path): every byte equals round(clamp(a, 0, 1) x 255) of the float matte of a session without
 *    alpha_u8 fed the same frames; alpha and raw are NULL; no HR_EVENT_NONFINITE;
 *  - meet (a two-channel segmenter: the session's softmax, then the 8 bits): the same;
 *  - a frame with NaN pixels (RGBF32, read in place: the guided filter's guidance at those pixels
 *    is NaN, so is the matte there): HR_EVENT_NONFINITE raised, the NaN pixels 0 in the 8 bits;
 *    the same frame through the float session shows NaN there (the event is not raised without
 *    alpha_u8: the float matte shows the NaN itself);
 *  - Vulkan (lavapipe, validation layer on): the guided-filter tail writes the 8 bits into the
 *    read-back buffer itself (no host conversion buffer in the session), each byte within 1 of
 *    XNNPACK's quantised float matte (the float mattes differ by <= 1e-3), the NaN frame raises
 *    the event there too;
 *  - a stream with alpha_u8 (per frame and tail every frame): the float matte as a stream without it
 *    gives, bit for bit, and the bytes its quantisation; the health monitor's verdicts, its NaN
 *    count and mean through the stream's one pass equal those of its own full scan; the NaN frame
 *    raises HR_EVENT_NONFINITE there (not without alpha_u8: the floats show it). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "headroom.h"
#include "headroom/io.h"
#include "headroom/stream.h"
#include "hr_test_frames.h"
#include "session/session_impl.h"
#include "session/kernels.h"
#ifdef HR_HAVE_VULKAN
#include "backend/backend.h"
#endif

#define NF 4

/* headroom run's alpha PNGs' rounding (sinks.c): lrintf, ties to even */
static uint8_t q8(float a) { return (uint8_t)(!(a > 0) ? 0 : a >= 1 ? 255 : lrintf(a * 255.f)); }

static hr_session *session(hr_model *m, hr_backend be, int w, int h, float ratio, int threads, int u8) {
  hr_session_params p;
  hr_session_params_default(&p);
  p.width = w; p.height = h; p.downsample_ratio = ratio; p.threads = threads; p.backend = be; p.alpha_u8 = u8;
  hr_session *s = NULL;
  char err[512] = "";
  hr_status st = hr_session_create_err(m, &p, &s, err, sizeof err);
  CHECKF(st == HR_OK, "create %dx%d r%g backend %d alpha_u8 %d: %s", w, h, ratio, (int)be, u8, err);
  return s;
}

/* Push f to the float session a and the 8-bit session b; every byte within tol of a's quantised
 * matte. Returns how many bytes differ at all. */
static long compare(hr_session *a, hr_session *b, const hr_frame *f, int tol, const char *what, int i) {
  hr_outputs oa, ob;
  CHECK_EQ_INT(hr_session_push(a, f, &oa), HR_OK);
  hr_status st = hr_session_push(b, f, &ob);
  CHECKF(st == HR_OK, "%s frame %d: %s", what, i, hr_session_last_error(b));
  if (st) return -1;
  CHECK(oa.alpha && !oa.alpha_u8 && (oa.events & HR_EVENT_NONFINITE) == 0);
  CHECKF(ob.alpha_u8 && !ob.alpha && !ob.raw, "%s frame %d: alpha_u8 %p alpha %p raw %p", what, i, (void *)ob.alpha_u8,
         (void *)ob.alpha, (void *)ob.raw);
  CHECK_EQ_INT(ob.events & HR_EVENT_NONFINITE, 0);
  CHECK(oa.width == ob.width && oa.height == ob.height);
  if (!ob.alpha_u8 || !oa.alpha) return -1;
  long diff = 0, over = 0, lit = 0;
  int worst = 0;
  for (int k = 0; k < oa.width * oa.height; k++) {
    int d = abs((int)q8(oa.alpha[k]) - (int)ob.alpha_u8[k]);
    diff += d != 0; over += d > tol; lit += ob.alpha_u8[k] > 128;
    if (d > worst) worst = d;
  }
  printf("%s frame %d (%dx%d): %ld bytes differ from the quantised float matte (max %d), %ld above 128\n", what, i, ob.width,
         ob.height, diff, worst, lit);
  CHECKF(over == 0, "%s frame %d: %ld bytes off by more than %d", what, i, over, tol);
  CHECKF(lit > 0, "%s frame %d: no person in the matte", what, i);
  return diff;
}

/* f (RGBF32, w x h) with a 9 x 7 block of NaN pixels at (x0, y0); the float session a shows NaN
 * there and no event, the 8-bit session b 0 there and HR_EVENT_NONFINITE. */
static void nan_frame(hr_session *a, hr_session *b, const hr_frame *rgb, int x0, int y0, const char *what) {
  const int w = rgb->width, h = rgb->height;
  float *px = malloc((size_t)w * h * 12);
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w * 3; x++) px[(size_t)y * w * 3 + x] = ((const uint8_t *)rgb->planes[0])[y * rgb->strides[0] + x] / 255.f;
  for (int y = y0; y < y0 + 7; y++)
    for (int x = x0; x < x0 + 9; x++) px[((size_t)y * w + x) * 3 + 1] = NAN;
  hr_frame f = {.fmt = HR_PIX_RGBF32, .width = w, .height = h, .planes = {px}, .strides = {(ptrdiff_t)w * 12}, .ts_ns = rgb->ts_ns};
  hr_outputs oa, ob;
  if (a) {
    CHECK_EQ_INT(hr_session_push(a, &f, &oa), HR_OK);
    CHECKF(isnan(oa.alpha[(size_t)(y0 + 3) * w + x0 + 4]), "%s: float matte %g at a NaN pixel", what, oa.alpha[(size_t)(y0 + 3) * w + x0 + 4]);
    CHECK_EQ_INT(oa.events & HR_EVENT_NONFINITE, 0);
  }
  hr_status st = hr_session_push(b, &f, &ob);
  CHECKF(st == HR_OK, "%s: %s", what, hr_session_last_error(b));
  if (!st) {
    CHECKF(ob.events & HR_EVENT_NONFINITE, "%s: NaN pixels, no HR_EVENT_NONFINITE (events 0x%x)", what, ob.events);
    CHECK_EQ_INT(ob.alpha_u8[(size_t)(y0 + 3) * w + x0 + 4], 0);
    printf("%s: NaN block -> events 0x%x, byte %d there\n", what, ob.events, ob.alpha_u8[(size_t)(y0 + 3) * w + x0 + 4]);
  }
  free(px);
}

int main(void) {
  char mp[1024], meetp[1024], dp[1024], err[512];
  if (!hr_test_path("HR_MODEL_DIR", "rvm.json", mp, sizeof mp)) SKIP("HR_MODEL_DIR unset");
  if (!hr_test_path("HR_MODEL_DIR", "meet.json", meetp, sizeof meetp)) SKIP("HR_MODEL_DIR unset");
  if (!hr_test_path("HR_DATA_DIR", "sam2-bedroom/frames", dp, sizeof dp)) SKIP("HR_DATA_DIR unset");
  hr_model *m, *meet;
  if (hr_model_load(mp, &m, err, sizeof err)) FATAL("cannot load %s: %s", mp, err);
  if (hr_model_load(meetp, &meet, err, sizeof err)) FATAL("cannot load %s: %s", meetp, err);

  /* the rounding itself: exact ties (fl(v x 255) = k + 0.5) go to the even byte, as lrintf; on the
   * vector path (16 at a time) and the tail of a call alike */
  {
    float v[40];
    uint8_t q[40], want[40];
    int nt = 0;
    for (int k = 1; k < 254 && nt < 20; k++) {
      float t = ((float)k + 0.5f) / 255.f;
      if (t * 255.f == (float)k + 0.5f) { v[nt] = t; want[nt] = (uint8_t)(k % 2 ? k + 1 : k); nt++; }
    }
    CHECKF(nt >= 17, "only %d exact ties found", nt);
    for (int i = 0; i < nt; i++) { v[nt + i] = v[i]; want[nt + i] = want[i]; }
    CHECK_EQ_INT(hr__k_alpha_u8(NULL, v, q, 2 * nt), 0);
    int off = 0;
    for (int i = 0; i < 2 * nt; i++) off += q[i] != want[i] || q[i] != q8(v[i]);
    CHECKF(off == 0, "%d of %d ties rounded otherwise than to even", off, 2 * nt);
  }

  /* XNNPACK at 320x240 r0.5, 2 threads: the bytes equal the float matte's, frame by frame */
  enum { W = 320, H = 240 };
  static uint8_t rgb[NF][W * H * 3], nv12[NF][W * H * 3 / 2];
  hr_frame fr_rgb[NF], fr_nv12[NF];
  if (hr_test_small_frames(dp, W, H, NF, rgb[0], nv12[0], fr_rgb, fr_nv12, err, sizeof err)) FATAL("%s: %s", dp, err);
  hr_session *xa = session(m, HR_BACKEND_XNNPACK, W, H, 0.5f, 2, 0), *xb = session(m, HR_BACKEND_XNNPACK, W, H, 0.5f, 2, 1);
  if (!xa || !xb) FATAL("sessions");
  CHECK(xb->alpha8 != NULL);   /* the CPU converts on the host */
  for (int i = 0; i < NF; i++) CHECK_EQ_INT(compare(xa, xb, &fr_nv12[i], 0, "xnnpack 320x240 nv12", i), 0);
  nan_frame(xa, xb, &fr_rgb[0], 101, 77, "xnnpack NaN frame");
  hr_session_destroy(xa); hr_session_destroy(xb);

  /* meet: 2-channel output, softmax on the host, then the 8 bits */
  {
    hr_session *ma = session(meet, HR_BACKEND_XNNPACK, 0, 0, 0.f, 1, 0), *mb = session(meet, HR_BACKEND_XNNPACK, 0, 0, 0.f, 1, 1);
    if (!ma || !mb) FATAL("meet sessions");
    for (int i = 0; i < 2; i++) CHECK_EQ_INT(compare(ma, mb, &fr_rgb[i], 0, "meet", i), 0);
    hr_session_destroy(ma); hr_session_destroy(mb);
  }

  /* the camera path: 1920x1440 NV12 at ratio 0.25, 2 frames */
  {
    enum { CW = 1920, CH = 1440 };
    uint8_t *big_rgb = malloc((size_t)2 * CW * CH * 3), *big_nv = malloc((size_t)2 * CW * CH * 3 / 2);
    hr_frame br[2], bn[2];
    if (hr_test_small_frames(dp, CW, CH, 2, big_rgb, big_nv, br, bn, err, sizeof err)) FATAL("%s: %s", dp, err);
    hr_session *ba = session(m, HR_BACKEND_XNNPACK, CW, CH, 0.25f, 2, 0), *bb = session(m, HR_BACKEND_XNNPACK, CW, CH, 0.25f, 2, 1);
    if (!ba || !bb) FATAL("1920x1440 sessions");
    for (int i = 0; i < 2; i++) CHECK_EQ_INT(compare(ba, bb, &bn[i], 0, "xnnpack 1920x1440 nv12", i), 0);
    hr_session_destroy(ba); hr_session_destroy(bb);
    free(big_rgb); free(big_nv);
  }

  /* a stream gives the bytes beside the float matte (its health monitor reads floats): two streams
   * fed the same frames, one with alpha_u8; per-frame mode and tail every frame (the tail's matte).
   * A third with alpha_u8_only: the bytes alone, made by the guided-filter tail itself (the session's
   * in per-frame mode, the stream's tail in tail mode), the monitor reading them */
  for (int tail = 0; tail < 2; tail++) {
    hr_stream *sa = NULL, *sb = NULL, *sc = NULL;
    double cmax = 0, mmax = 0;   /* sc's confidence and alpha_mean against the float stream's */
    for (int u8 = 0; u8 < 3; u8++) {
      hr_stream_params sp;
      hr_stream_params_default(&sp);
      sp.session.width = W; sp.session.height = H; sp.session.downsample_ratio = 0.5f; sp.session.threads = 2;
      sp.session.alpha_u8 = u8 > 0; sp.alpha_u8_only = u8 == 2; sp.tail_every_frame = tail;
      sp.budget_ms = 1e5;   /* tail mode: every run fits, each push waits for its own frame's (as
                             * test_stream_tail (5); at 1000 ms a loaded CI host let a push go on
                             * with the last run's coefficients, so the two streams' mattes differed) */
      char serr[256] = "";
      hr_status cst = hr_stream_create(m, &sp, u8 == 2 ? &sc : u8 ? &sb : &sa, serr, sizeof serr);
      CHECKF(cst == HR_OK, "stream (tail %d, alpha_u8 %d): %s", tail, u8, serr);
    }
    if (!sa || !sb || !sc) FATAL("streams");
    long differ = 0, lit = 0;
    for (int i = 0; i < NF + 1; i++) {
      /* the last push: the NaN frame (RGBF32, read in place) */
      float *px = NULL;
      hr_frame f = fr_nv12[i % NF];
      if (i == NF) {
        px = malloc((size_t)W * H * 12);
        for (int k = 0; k < W * H * 3; k++) px[k] = ((const uint8_t *)fr_rgb[0].planes[0])[k] / 255.f;
        for (int y = 77; y < 84; y++)
          for (int x = 101; x < 110; x++) px[((size_t)y * W + x) * 3 + 1] = NAN;
        f = (hr_frame){.fmt = HR_PIX_RGBF32, .width = W, .height = H, .planes = {px}, .strides = {(ptrdiff_t)W * 12}, .ts_ns = fr_nv12[NF - 1].ts_ns + 33000000};
      }
      hr_stream_result ra, rb, rc;
      CHECK_EQ_INT(hr_stream_push(sa, &f, &ra), HR_OK);
      hr_status pst = hr_stream_push(sb, &f, &rb);
      CHECKF(pst == HR_OK, "stream push %d: %s", i, hr_stream_last_error(sb));
      hr_status cst = hr_stream_push(sc, &f, &rc);
      CHECKF(cst == HR_OK, "stream push %d (alpha_u8_only): %s", i, hr_stream_last_error(sc));
      free(px);
      if (cst || !rc.alpha_u8 || rc.alpha || rc.raw) { CHECKF(0, "alpha_u8_only push %d: alpha %p raw %p bytes %p", i, (const void *)rc.alpha, (const void *)rc.raw, (const void *)rc.alpha_u8); break; }
      if (tail) CHECK(rc.record.coef_age == 0);
      /* the same bytes without the float matte ever stored: the tail rounds each row as the pass does */
      if (rb.alpha_u8) CHECK_EQ_INT(memcmp(rc.alpha_u8, rb.alpha_u8, (size_t)rc.width * rc.height) != 0, 0);
      /* the monitor on the bytes: the same verdicts; its mean is the bytes' own */
      CHECK_EQ_INT(rc.health.state, ra.health.state);
      CHECK_EQ_INT((int)rc.health.output_ok, (int)ra.health.output_ok);
      CHECK_EQ_INT(rc.health.signals.alpha_nonfinite, rb.health.signals.alpha_nonfinite);
      CHECK_EQ_INT(rc.events & HR_EVENT_NONFINITE, rb.events & HR_EVENT_NONFINITE);
      {
        double bs = 0;
        for (int k = 0; k < rc.width * rc.height; k++) bs += rc.alpha_u8[k];
        const double bm = bs / 255.0 / (rc.width * rc.height);
        if (!rc.health.signals.alpha_nonfinite)
          CHECKF(fabs(rc.health.signals.alpha_mean - bm) <= 1e-6 * (1 + bm), "alpha_u8_only: alpha_mean %.9g, the bytes' %.9g",
                 rc.health.signals.alpha_mean, bm);
        const double dc = fabs(rc.health.confidence - ra.health.confidence), dm = fabs(rc.health.signals.alpha_mean - ra.health.signals.alpha_mean);
        if (dc > cmax) cmax = dc;
        if (dm > mmax && i < NF) mmax = dm;
      }
      if (pst || !ra.alpha || !rb.alpha) { CHECK(0); break; }
      CHECK(ra.alpha_u8 == NULL && rb.alpha_u8 != NULL);
      if (tail) CHECKF(ra.record.coef_age == 0 && rb.record.coef_age == 0, "push %d: coefficients %lld / %lld frames old", i,
                       (long long)ra.record.coef_age, (long long)rb.record.coef_age);
      CHECK(ra.width == rb.width && ra.height == rb.height);
      if (!rb.alpha_u8) break;
      /* the float mattes are the same computation; the bytes are their quantisation */
      CHECK_EQ_INT(memcmp(ra.alpha, rb.alpha, (size_t)ra.width * ra.height * 4) != 0, 0);
      for (int k = 0; k < rb.width * rb.height; k++) { differ += q8(rb.alpha[k]) != rb.alpha_u8[k]; lit += rb.alpha_u8[k] > 128; }
      /* the monitor saw the same matte through the stream's pass as through its own full scan */
      CHECK_EQ_INT(ra.health.state, rb.health.state);
      CHECK_EQ_INT((int)ra.health.output_ok, (int)rb.health.output_ok);
      CHECK_EQ_INT(ra.health.signals.alpha_nonfinite, rb.health.signals.alpha_nonfinite);
      /* and what it saw is the matte's: its NaN/Inf count and (when there are none) its mean */
      double msum = 0;
      long nonf = 0;
      for (int k = 0; k < rb.width * rb.height; k++) { if (isfinite(rb.alpha[k])) msum += rb.alpha[k]; else nonf++; }
      CHECK_EQ_INT(rb.health.signals.alpha_nonfinite, nonf);
      if (!nonf)
        CHECKF(fabs(rb.health.signals.alpha_mean - msum / (rb.width * rb.height)) <= 1e-6 * (1 + msum / (rb.width * rb.height)),
               "alpha_mean %.9g, the matte's %.9g", rb.health.signals.alpha_mean, msum / (rb.width * rb.height));
      CHECKF(fabsf(ra.health.confidence - rb.health.confidence) <= 1e-5f, "confidence %g vs %g", ra.health.confidence, rb.health.confidence);
      if (i < NF) CHECK_EQ_INT(rb.events & HR_EVENT_NONFINITE, 0);
      else {
        const size_t at = (size_t)80 * W + 105;
        CHECKF(isnan(rb.alpha[at]), "stream NaN frame: float matte %g at a NaN pixel", rb.alpha[at]);
        CHECKF(rb.events & HR_EVENT_NONFINITE, "stream NaN frame: no HR_EVENT_NONFINITE (events 0x%x)", rb.events);
        CHECK_EQ_INT(ra.events & HR_EVENT_NONFINITE, 0);
        CHECK_EQ_INT(rb.alpha_u8[at], 0);
        CHECK(rb.health.signals.alpha_nonfinite >= 63 && !rb.health.output_ok);
        printf("stream (tail %d) NaN frame: events 0x%x, %lld non-finite pixels seen by the monitor in both, output_ok %d\n", tail,
               rb.events, (long long)rb.health.signals.alpha_nonfinite, (int)rb.health.output_ok);
      }
    }
    CHECK_EQ_INT(differ, 0);
    CHECK(lit > 1000);   /* a person is there */
    printf("stream (tail %d): %d frames, bytes = the quantised float matte (%ld differ), %ld above 128\n", tail, NF + 1, differ, lit);
    /* rounding moves each sampled value by <= 1/510: the mean by as much, the confidence a little */
    CHECKF(mmax <= 0.5 / 255 + 1e-6, "alpha_u8_only: alpha_mean off the float stream's by %g", mmax);
    CHECKF(cmax <= 1e-3, "alpha_u8_only: confidence off the float stream's by %g", cmax);
    printf("stream (tail %d, alpha_u8_only): the same bytes and verdicts; alpha_mean within %.2g, confidence within %.2g of the float stream's\n",
           tail, mmax, cmax);
    hr_stream_destroy(sa); hr_stream_destroy(sb); hr_stream_destroy(sc);
  }

#ifdef HR_HAVE_VULKAN
  /* Vulkan (lavapipe) at 128x96 r0.5: the tail's own 8 bits, within 1 of XNNPACK's */
  hr_test_vulkan_env(1);
  {
    enum { VW = 128, VH = 96 };
    static uint8_t vr[NF][VW * VH * 3], vn[NF][VW * VH * 3 / 2];
    hr_frame vfr[NF], vfn[NF];
    if (hr_test_small_frames(dp, VW, VH, NF, vr[0], vn[0], vfr, vfn, err, sizeof err)) FATAL("%s: %s", dp, err);
    hr_status st;
    hr_session *probe = hr_test_rvm_session(m, HR_BACKEND_VULKAN, VW, VH, 0.5f, &st);
    if (st == HR_ENOTSUP) SKIP("no Vulkan device named '%s' here", getenv("HR_VULKAN_DEVICE"));
    hr_session_destroy(probe);
    hr_session *xa = session(m, HR_BACKEND_XNNPACK, VW, VH, 0.5f, 1, 0), *vb = session(m, HR_BACKEND_VULKAN, VW, VH, 0.5f, 1, 1);
    if (!xa || !vb) FATAL("sessions");
    CHECKF(vb->alpha8 == NULL, "the Vulkan session converts on the host (alpha8 %p): the tail should write the 8 bits", (void *)vb->alpha8);
    long d = 0;
    for (int i = 0; i < NF; i++) d += compare(xa, vb, &vfn[i], 1, "vulkan 128x96 nv12", i);
    { /* the tail's own sum of its bytes (the health monitor's mean: the host no longer reads the bytes for it) */
      hr_session *vc = session(m, HR_BACKEND_VULKAN, VW, VH, 0.5f, 1, 1);
      for (int i = 0; vc && i < NF; i++) {
        hr_outputs ov;
        CHECK_EQ_INT(hr_session_push(vc, &vfn[i], &ov), HR_OK);
        int64_t bs = 0;
        for (int k = 0; ov.alpha_u8 && k < VW * VH; k++) bs += ov.alpha_u8[k];
        CHECKF(bs > 0 && vc->alpha8_bsum == bs, "vulkan frame %d: the tail's byte sum %lld, the bytes' %lld", i, (long long)vc->alpha8_bsum,
               (long long)bs);
      }
      hr_session_destroy(vc);
    }
    nan_frame(NULL, vb, &vfr[0], 40, 30, "vulkan NaN frame");
    /* the NaN word is cleared before every frame: after a reset, a clean frame raises nothing */
    CHECK_EQ_INT(hr_session_reset(vb), HR_OK);
    hr_outputs o;
    CHECK_EQ_INT(hr_session_push(vb, &vfn[1], &o), HR_OK);
    CHECKF((o.events & HR_EVENT_NONFINITE) == 0, "a clean frame after the NaN one: events 0x%x", o.events);
    printf("vulkan: %ld bytes of %d differ by 1 from XNNPACK's over %d frames\n", d, VW * VH * NF, NF);
    CHECKF(hr__vk_validation_messages() == 0, "%d validation messages", hr__vk_validation_messages());
    hr_session_destroy(xa); hr_session_destroy(vb);
  }
#endif
  hr_model_destroy(m);
  hr_model_destroy(meet);
  return hr_test_finish("test_session_u8");
}
