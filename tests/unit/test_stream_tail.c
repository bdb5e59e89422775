/* The stream's tail-every-frame mode (hr_stream_params.tail_every_frame) on real frames:
 * (1) split = whole: with the worker drained after every push, frame 0's matte is the plain
 *     session's bit for bit (the first push waits for its own network run), frame i's is the tail
 *     on frame i with the coefficients a plain session made from frame i-1 (coef_age 1), and after
 *     NF frames the recurrent state equals the plain session's, bit for bit;
 * (2) free-running with the network's budget too small for any rung: the rung changes while
 *     mattes are produced (30 more after it), every result is read whole after its push (ASan sees a freed one), all
 *     in [0, 1], coef_age never negative, the network ran fewer times than frames were pushed;
 *     every matte made from older coefficients had them warped, also across the change (the kept
 *     ones resampled onto the new grid);
 *     the replan is built on the worker: no push spends on the change (hr_stream_result.change_ms)
 *     a quarter of what that replan costs a plain session (timed here, side by side);
 * (3) steady-state pushes allocate nothing, on either thread (positive control counts 1);
 * (4) refusals: with the foreground output, and on a backend that cannot split, create fails
 *     and says why;
 * (5) a network run that fits the frame's budget is waited for: with a budget no run can miss,
 *     every matte is the plain session's of the same frame, bit for bit, coef_age 0 (cases 1 and 2
 *     set a budget no run fits, so that they never wait);
 * (6) motion compensation (on by default; case 1 runs with HR_TAIL_WARP=0): drained after every
 *     push, frame i's matte is the tail on frame i with frame i-1's coefficients warped by the
 *     motion from frame i-1's luma to frame i's (motion.h, computed here apart), bit for bit, and
 *     differs from the unwarped one;
 * (7) on 3 threads (the network's pool 2 of them) the tail takes the session's pool
 *     (src/stream/tail.c pool_take): the network run posted on a frame stops before its first op
 *     while the tail runs over the pool; (1) and (6) hold as they are, bit for bit, the runs were
 *     seen to wait, and (3) holds too;
 * (8) session.threads counts the caller's thread: the network's session gets one fewer (at least
 *     one), so on 2 threads the network runs alone beside the tail (src/stream/stream.c). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "headroom.h"
#include "headroom/io.h"
#include "hr_test_frames.h"
#include "plan/plan.h"
#include "session/kernels.h"
#include "session/session_impl.h"
#include "stream/motion.h"

#include "hr_alloc_count.h"

#define NF 12

static void params(hr_stream_params *p, const hr_frame *f) {
  hr_stream_params_default(p);
  p->session.width = f->width; p->session.height = f->height;
  p->session.downsample_ratio = 0.25f; p->session.threads = 1;
  p->tail_every_frame = true;
}

/* (1), and with warp (6); threads 3: (7); (8) */
static void split_equals_whole(hr_model *m, const hr_frame *fr, int warp, int threads) {
  hr_stream_params p;
  params(&p, &fr[0]);
  p.budget_ms = 0.001;   /* no run fits: the tail never waits for its own frame's */
  p.session.threads = threads;
  hr_stream *st = NULL;
  char err[512];
  setenv("HR_TAIL_WARP", warp ? "1" : "0", 1);   /* read when the stream is made */
  CHECK_EQ_INT(hr_stream_create(m, &p, &st, err, sizeof err), HR_OK);
  unsetenv("HR_TAIL_WARP");
  hr_session *ref = NULL;
  p.session.threads = 1;   /* the plain session on one thread: the engine's bits do not depend on it */
  CHECK_EQ_INT(hr_session_create(m, &p.session, &ref), HR_OK);
  if (!st || !ref) { printf("create: %s\n", err); hr_stream_destroy(st); hr_session_destroy(ref); return; }
  hr__split_info si;
  CHECK(hr__split_query(ref, &si));
  hr__fgf g, g1;
  CHECK_EQ_INT(hr__fgf_init(&g, si.lr_h, si.lr_w, si.H, si.W, 1, 0), HR_OK);
  CHECK_EQ_INT(hr__fgf_init(&g1, si.lr_h, si.lr_w, si.H, si.W, 1, 0), HR_OK);
  g1.alpha_only_coef = 1;   /* the stream's compact A and b */
  size_t n = (size_t)si.H * si.W, lr = (size_t)si.lr_h * si.lr_w;
  float *want = malloc(n * 4), *plain = malloc(n * 4), *wc = malloc(lr * 8);
  uint8_t *lprev = malloc(lr), *lcur = malloc(lr);
  hr__motion mo;
  CHECK_EQ_INT(hr__motion_init(&mo, si.lr_h, si.lr_w, si.H, si.W), HR_OK);
  int differ = 0, ages_ok = 0, unlike_plain = 0, meters = 0, meters_ok = 0;
  for (int i = 0; i < NF; i++) {
    if (i > 0) {
      /* the tail on frame i with what the plain session made of frame i-1 (still in its arena:
       * the tail's inputs are live while it writes, so its output never lies over them) */
      const hr__rop *t = &ref->plan->rops[si.tail];
      hr__tensor A = hr__plan_view(ref->plan, t->in[0], ref->arena, ref->state, NULL);
      hr__tensor B = hr__plan_view(ref->plan, t->in[1], ref->arena, ref->state, NULL);
      /* the session's A and b: h x w x 4, or the alpha's planes where the fused engine made them
       * alone (no foreground: fgflr1) */
      const int planes = hr__exec_ab_planes(ref);
      g.alpha_only_coef = planes;
      hr__fgf_run(&g, &fr[i], A.data, B.data, want, NULL, si.clip, NULL);
      if (warp) {
        /* the alpha's channel of A and b, moved from frame i-1 to i */
        float *a1 = wc, *b1 = wc + lr;
        for (size_t k = 0; k < lr; k++) {
          a1[k] = ((const float *)A.data)[planes ? k : 4 * k + 3];
          b1[k] = ((const float *)B.data)[planes ? k : 4 * k + 3];
        }
        hr__motion_luma(&mo, &fr[i - 1], lprev);
        hr__motion_luma(&mo, &fr[i], lcur);
        hr__motion_estimate(&mo, lprev, lcur);
        float *wa = malloc(lr * 8);
        const float *src[2] = {a1, b1};
        float *dst[2] = {wa, wa + lr};
        hr__motion_warp(&mo, src, dst, 2);
        memcpy(plain, want, n * 4);
        hr__fgf_run(&g1, &fr[i], wa, wa + lr, want, NULL, si.clip, NULL);
        unlike_plain += memcmp(plain, want, n * 4) != 0;
        free(wa);
      }
    }
    hr_outputs o;
    CHECK_EQ_INT(hr_session_push(ref, &fr[i], &o), HR_OK);
    if (i == 0) memcpy(want, o.alpha, n * 4);
    hr_stream_result r;
    CHECK_EQ_INT(hr_stream_push(st, &fr[i], &r), HR_OK);
    if (!r.alpha) { CHECK(r.alpha); break; }
    if (memcmp(r.alpha, want, n * 4)) differ++;
    /* and the telemetry says when the coefficients were moved: an older frame's, with the warp on */
    ages_ok += r.record.coef_age == (i == 0 ? 0 : 1) && r.record.net_ms > 0 && r.record.coef_warped == (warp && i > 0);
    /* the lag meter: from frame 2 on, frame i-1's run (now read) against the matte frame i-1 was
     * shown with (frame i-2's coefficients, warped); none without the warp (no luma on the grid) */
    if (!isnan(r.record.lag_off)) {
      meters++;
      meters_ok += i >= 2 && r.record.lag_off >= 0 && r.record.lag_off <= 1 && r.record.lag_band > 0 && r.record.lag_band <= 1;
    }
    hr_stream_session(st);   /* waits for the network run on frame i */
  }
  /* the state after NF network runs */
  const float *sv[8], *rv[8]; size_t sl[8], rl[8];
  int ns = hr_session_state_views(hr_stream_session(st), sv, sl, 8), nr = hr_session_state_views(ref, rv, rl, 8);
  CHECK_EQ_INT(ns, nr);
  int state_differ = 0;
  for (int k = 0; k < ns && k < nr; k++) state_differ += sl[k] != rl[k] || memcmp(sv[k], rv[k], sl[k] * 4);
  hr_stream_stats ss;
  hr_stream_get_stats(st, &ss);
  /* (7) with a pool the tail took it: each push posted a run and then stopped it before its first
   * op for the tail (hr__op_gate), so the run waited */
  const hr_session *ss_s = hr_stream_session(st);
  const double paused = ss_s->gate ? ss_s->gate->paused_ms : -1;
  /* (8) the network's threads: the caller's one left out */
  hr_plan_info pi;
  hr_session_get_plan(ss_s, &pi);
  printf("(8) %d thread%s asked: the network's session has %d\n", threads, threads > 1 ? "s" : "", pi.threads);
  CHECK_EQ_INT(pi.threads, threads > 1 ? threads - 1 : 1);
  printf("split vs whole%s, %d frames %dx%d ratio 0.25 (A, b at %dx%d), %d thread%s: %d mattes differ, %d of %d coef_age and coef_warped right, "
         "%d of %d state tensors differ, %lld network runs, runs stopped for the tail %.2f ms in all\n",
         warp ? " (6: the previous frame's coefficients warped)" : "", NF, si.W, si.H, si.lr_w, si.lr_h, threads, threads > 1 ? "s" : "",
         differ, ages_ok, NF, state_differ, ns, (long long)ss.net_runs, paused);
  if (threads > 2) CHECK(paused > 0);
  if (warp) {
    printf("(6) %d of %d warped mattes differ from the unwarped ones\n", unlike_plain, NF - 1);
    CHECK_EQ_INT(unlike_plain, NF - 1);
  }
  CHECK_EQ_INT(differ, 0);
  CHECK_EQ_INT(ages_ok, NF);
  printf("lag meter: %d of %d frames measured, %d in range\n", meters, NF, meters_ok);
  CHECK_EQ_INT(meters, warp ? NF - 2 : 0);
  CHECK_EQ_INT(meters_ok, meters);
  CHECK(ns >= 4);
  CHECK_EQ_INT(state_differ, 0);
  CHECK(ss.tail_every_frame);
  CHECK_EQ_INT(ss.net_runs, NF);
  free(want); free(plain); free(wc); free(lprev); free(lcur);
  hr__motion_free(&mo);
  hr__fgf_free(&g1);
  hr__fgf_free(&g);
  hr_stream_destroy(st);
  hr_session_destroy(ref);
}

/* (2) */
static void free_running(hr_model *m, const hr_frame *fr) {
  hr_stream_params p;
  params(&p, &fr[0]);
  p.adapt = true; p.net_budget_ms = 0.01;   /* every network run is over budget: step down */
  p.budget_ms = 0.001;                       /* and none is waited for */
  hr_stream *st = NULL;
  char err[512];
  CHECK_EQ_INT(hr_stream_create(m, &p, &st, err, sizeof err), HR_OK);
  if (!st) { printf("create: %s\n", err); return; }
  int changes = 0, bad = 0, pushes = 0, after = 0, older = 0, unwarped = 0, unwarped_after = 0;
  int64_t max_age = 0;
  double max_change = 0;
  for (int i = 0; i < 400 && after < 30; i++, pushes++) {
    hr_stream_result r;
    CHECK_EQ_INT(hr_stream_push(st, &fr[i % NF], &r), HR_OK);
    if (r.change_ms > max_change) max_change = r.change_ms;
    if (!r.alpha) { bad++; continue; }
    changes += (r.events & HR_STREAM_EVENT_RUNG_CHANGED) != 0;
    after += changes > 0;   /* mattes made after the change, from old and then new coefficients */
    size_t n = (size_t)r.width * r.height;
    for (size_t k = 0; k < n; k++) bad += !(r.alpha[k] >= 0.f && r.alpha[k] <= 1.f);
    if (r.record.coef_age < 0) bad++;
    if (r.record.coef_age > max_age) max_age = r.record.coef_age;
    /* older coefficients are warped to the frame, also those kept over the change (resampled onto
     * the new plan's grid by hr__tail_prepare; before, they were shown unwarped until its first run) */
    if (i > 0 && r.record.coef_age > 0) { older++; unwarped += !r.record.coef_warped; unwarped_after += changes > 0 && !r.record.coef_warped; }
    struct timespec ts = {0, 3000000};   /* 3 ms between frames, so that runs overlap frames */
    nanosleep(&ts, NULL);
  }
  hr_stream_stats ss;
  hr_stream_get_stats(st, &ss);
  printf("free-running, %d pushes: %d rung changes (down to ratio %.3f), %lld network runs, oldest coefficients %lld frames, %d bad values\n",
         pushes, changes, ss.rung_ratio[ss.rung], (long long)ss.net_runs, (long long)max_age, bad);
  CHECK(changes >= 1 && after >= 30);
  CHECK(ss.rung > 0);
  CHECK_EQ_INT(bad, 0);
  CHECK(ss.net_runs >= 2 && ss.net_runs < pushes);
  CHECK(max_age >= 1);
  printf("mattes from older coefficients: %d, of which unwarped %d (%d after the first change)\n", older, unwarped, unwarped_after);
  CHECK(older > 0);
  CHECK_EQ_INT(unwarped, 0);
  /* what the first change costs a session replanned on this thread: the median of 3 */
  hr_session *ref = NULL;
  CHECK_EQ_INT(hr_session_create(m, &p.session, &ref), HR_OK);
  double rt[3] = {0};
  for (int k = 0; ref && k < 3; k++) {
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    CHECK_EQ_INT(hr_session_replan(ref, p.session.width, p.session.height, ss.rung_ratio[1]), HR_OK);
    clock_gettime(CLOCK_MONOTONIC, &b);
    rt[k] = (b.tv_sec - a.tv_sec) * 1e3 + (b.tv_nsec - a.tv_nsec) / 1e6;
    CHECK_EQ_INT(hr_session_replan(ref, p.session.width, p.session.height, ss.rung_ratio[0]), HR_OK);
  }
  hr_session_destroy(ref);
  double med = rt[0] < rt[1] ? (rt[1] < rt[2] ? rt[1] : rt[0] < rt[2] ? rt[2] : rt[0]) : (rt[0] < rt[2] ? rt[0] : rt[1] < rt[2] ? rt[2] : rt[1]);
  printf("the largest change_ms of a push %.3f ms; a replan to ratio %.3f on the caller's thread %.3f ms (median of 3)\n", max_change,
         ss.rung_ratio[1], med);
  CHECKF(max_change < med / 4, "a push spent %.3f ms on a change that costs %.3f ms: the replan was not built on the worker", max_change, med);
  hr_stream_destroy(st);
}

/* (3) */
static void noalloc(hr_model *m, const hr_frame *fr, int u8, int threads) {
  hr_stream_params p;
  params(&p, &fr[0]);
  p.session.threads = threads;
  p.session.alpha_u8 = p.alpha_u8_only = u8;   /* the tail writes the bytes alone */
  hr_stream *st = NULL;
  char err[512];
  CHECK_EQ_INT(hr_stream_create(m, &p, &st, err, sizeof err), HR_OK);
  if (!st) { printf("create: %s\n", err); return; }
  hr_stream_result r;
  for (int i = 0; i < 4; i++) CHECK_EQ_INT(hr_stream_push(st, &fr[i % NF], &r), HR_OK);
  hr_stream_session(st);
  count_start();
  for (int i = 0; i < 40; i++) CHECK_EQ_INT(hr_stream_push(st, &fr[i % NF], &r), HR_OK);
  hr_stream_session(st);   /* the last run counted too */
  count_stop();
  long a = n_alloc, f = n_free;
  count_start();
  CHECK_EQ_INT(hr_stream_push(st, &fr[0], &r), HR_OK);
  void *volatile probe = malloc(100);
  hr_stream_session(st);
  count_stop();
  free(probe);
  long control = n_alloc;
  hr_stream_stats ss;
  hr_stream_get_stats(st, &ss);
  if (u8) CHECK(r.alpha_u8 && !r.alpha);
  printf("tail every frame%s, %d thread%s, 40 pushes (%lld network runs in all): %ld allocations, %ld frees; control %ld\n",
         u8 ? ", the 8-bit matte alone" : "", threads, threads > 1 ? "s" : "", (long long)ss.net_runs, a, f, control);
  if (HR_COUNTING) {
    CHECK_EQ_INT(a, 0);
    CHECK_EQ_INT(f, 0);
    CHECK_EQ_INT(control, 1);
  }
  hr_stream_destroy(st);
}

/* (4) */
static void refusals(hr_model *m, const hr_frame *fr) {
  hr_stream_params p;
  params(&p, &fr[0]);
  p.session.want_fgr = true;
  hr_stream *st = NULL;
  char err[512] = "";
  CHECK_EQ_INT(hr_stream_create(m, &p, &st, err, sizeof err), HR_EINVAL);
  CHECK(st == NULL && strstr(err, "foreground"));
  printf("with the foreground: %s\n", err);
  params(&p, &fr[0]);
  p.session.backend = HR_BACKEND_REFERENCE;
  p.session.downsample_ratio = 0.125f;
  err[0] = 0;
  CHECK_EQ_INT(hr_stream_create(m, &p, &st, err, sizeof err), HR_ENOTSUP);
  CHECK(st == NULL && strstr(err, "tail"));
  printf("reference backend: %s\n", err);
}

/* (5) */
static void waits_when_it_fits(hr_model *m, const hr_frame *fr) {
  hr_stream_params p;
  params(&p, &fr[0]);
  p.budget_ms = 1e5;   /* every run fits: each push waits for its own frame's coefficients */
  hr_stream *st = NULL;
  hr_session *ref = NULL;
  char err[512];
  CHECK_EQ_INT(hr_stream_create(m, &p, &st, err, sizeof err), HR_OK);
  CHECK_EQ_INT(hr_session_create(m, &p.session, &ref), HR_OK);
  if (!st || !ref) { printf("create: %s\n", err); hr_stream_destroy(st); hr_session_destroy(ref); return; }
  int differ = 0, fresh = 0;
  for (int i = 0; i < NF; i++) {
    hr_outputs o;
    CHECK_EQ_INT(hr_session_push(ref, &fr[i], &o), HR_OK);
    hr_stream_result r;
    CHECK_EQ_INT(hr_stream_push(st, &fr[i], &r), HR_OK);
    if (!r.alpha || !o.alpha) { CHECK(r.alpha && o.alpha); break; }
    differ += memcmp(r.alpha, o.alpha, (size_t)o.width * o.height * 4) != 0;
    fresh += r.record.coef_age == 0;
  }
  hr_stream_stats ss;
  hr_stream_get_stats(st, &ss);
  printf("waiting for runs that fit: %d frames, %d mattes differ from the plain session's, %d with coef_age 0, %lld network runs\n",
         NF, differ, fresh, (long long)ss.net_runs);
  CHECK_EQ_INT(differ, 0);
  CHECK_EQ_INT(fresh, NF);
  CHECK_EQ_INT(ss.net_runs, NF);
  hr_stream_destroy(st);
  hr_session_destroy(ref);
}

int main(void) {
  if (!HR_COUNTING) printf("AddressSanitizer build: allocation counting off (ASan owns malloc); the output checks run\n");
  hr_model *m; hr_source *src; hr_frame fr[NF];
  if (!hr_test_rvm_frames(&m, &src, fr, NF)) { hr_source_destroy(src); hr_model_destroy(m); return hr_test_finish("test_stream_tail"); }
  split_equals_whole(m, fr, 0, 1);
  split_equals_whole(m, fr, 1, 1);
  split_equals_whole(m, fr, 1, 2);
  split_equals_whole(m, fr, 1, 3);
  free_running(m, fr);
  noalloc(m, fr, 0, 1);
  noalloc(m, fr, 1, 1);
  noalloc(m, fr, 1, 3);
  refusals(m, fr);
  waits_when_it_fits(m, fr);
  hr_source_destroy(src);
  hr_model_destroy(m);
  return hr_test_finish("test_stream_tail");
}
