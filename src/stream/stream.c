/* The live loop as a library object: one session plus the ladder, the budget controller, the
 * governor, the health monitor and fault injection, driven one frame per push. Decisions a frame
 * causes are applied at the start of the next push, so a frame's outputs outlive them. */
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "headroom.h"
#include "headroom/testing.h"
#include "session/session_impl.h"
#include "backend/backend.h"
#include "stream/depth.h"
#include "stream/ladder.h"
#include "stream/tail.h"
#include "session/kernels.h"
#include "health/health_internal.h"
#include "gov/gov_internal.h"

struct hr_stream {
  hr_model *m;
  hr_stream_params p;
  hr_session_params sp;        /* the session's params (size fixed; the ratio follows the rung) */
  hr_session *s;
  hr_gov *gov;
  hr_health *health;
  hr_fault_injector *inj;
  hr__ladder lad;
  /* decisions for the next push */
  int want_suspend;            /* the governor said suspend */
  int want_resume;             /* the governor said resume (at lad.gov_rung) */
  int gov_step;                /* the governor moved its rung: a memory-driven change (release first) */
  int64_t last_h;              /* the headroom the governor measured last (INT64_MAX: no ceiling, or none yet) */
  int rebuild;                 /* health FAILED: start over before the next frame */
  /* where the session is (suspended or not: hr_session_is_suspended) */
  int inj_suspended;           /* suspended by an injected memory-pressure fault */
  int resume_failed;           /* a resume failed: retry every RETRY_FRAMES frames */
  int64_t retry_at;
  int prev_rung;
  int64_t n;                   /* frames pushed */
  void *copy; size_t copy_cap; /* the frame a fault alters */
  hr_frame cur;                /* the frame of the last result */
  hr_stream_stats stats;
  char reason[HR_HEALTH_REASON_LEN];
  int statm_fd;                /* /proc/self/statm for RSS without a governor, -1 if none */
  hr__tailrun tail;            /* tail_every_frame: the network's worker and the tail (tail.h) */
  int tail_on;
  int tail_wait;               /* wait for a frame's own run when it fits the budget (HR_TAIL_WAIT=0: never) */
  double lag_tau;              /* the lag meter's rule (hr__ladder_lag): its tau; 0: off (HR_TAIL_LAG_TAU) */
  double tail_cost_ms;         /* the last push's tail (what a push spends after its wait) */
  /* tail mode: a budget replan built on the worker while pushes go on (the session is the
   * worker's until it is idle again; the next push that finds it so takes the result) */
  int replan_busy;             /* a replan is in flight */
  int replan_rung;             /* the rung it builds */
  hr_status replan_st;         /* what it returned (read once the worker is idle) */
  /* the plan's figures each frame reports, read at plan changes (plan_read), not every frame */
  int proc_w, proc_h;
  float ratio;
  int64_t read_replans;        /* stats.replans and the suspension they were read at */
  int read_suspended;
  hr__depth *depth;            /* depth fusion (depth.h), NULL when off */
  uint8_t *u8;                 /* session.alpha_u8: the 8-bit matte (width x height), made at create */
  char err[512];
};

enum { RETRY_FRAMES = 30, TAIL_NICE = 5 };

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static hr_status fail(hr_stream *s, hr_status st, const char *fmt, ...) {
  va_list ap; va_start(ap, fmt);
  vsnprintf(s->err, sizeof s->err, fmt, ap);
  va_end(ap);
  return st;
}

static void errf(char *err, size_t n, const char *fmt, ...) {
  if (!err || !n) return;
  va_list ap; va_start(ap, fmt);
  vsnprintf(err, n, fmt, ap);
  va_end(ap);
}

int64_t hr_stream_tail_bytes(const hr_plan_info *pi) {
  if (!pi || !pi->tail_split) return 0;
  return hr__tail_bytes(pi->height, pi->width, pi->proc_height, pi->proc_width, hr__tail_warp_on(), 0);   /* A, b: at most proc */
}

int64_t hr_stream_tail_bytes_u8(const hr_plan_info *pi) {
  if (!pi || !pi->tail_split) return 0;
  return hr__tail_bytes(pi->height, pi->width, pi->proc_height, pi->proc_width, hr__tail_warp_on(), 1);
}

void hr_stream_params_default(hr_stream_params *p) {
  memset(p, 0, sizeof *p);
  hr_session_params_default(&p->session);
  p->budget_ms = 1000.0 / 60.0;
  p->max_rungs = HR_STREAM_MAX_RUNGS;
  p->inject_seed = 42;
  p->depth_window_ms = 16;
  p->depth_scale = 1000;
  hr_gov_profile_parse("none", &p->profile, NULL, 0);
}

hr_session *hr_stream_session(hr_stream *s) {
  if (s && s->tail_on) hr__tail_drain(&s->tail);   /* the state is still until the next push */
  return s ? s->s : NULL;
}
hr_gov *hr_stream_governor(hr_stream *s) { return s ? s->gov : NULL; }

hr_status hr_stream_set_budget(hr_stream *s, double budget_ms) {
  if (!s || !(budget_ms > 0) || !isfinite(budget_ms)) return HR_EINVAL;
  s->p.budget_ms = budget_ms;
  return HR_OK;
}
hr_health *hr_stream_health(hr_stream *s) { return s ? s->health : NULL; }
const char *hr_stream_last_error(const hr_stream *s) { return s ? s->err : ""; }

void hr_stream_get_stats(const hr_stream *s, hr_stream_stats *st) {
  memset(st, 0, sizeof *st);
  if (!s) return;
  *st = s->stats;
  st->tail_every_frame = s->tail_on;
  /* runs finished so far (the worker counts them; a drained stream has none in flight) */
  st->net_runs = s->tail_on ? __atomic_load_n(&s->tail.runs, __ATOMIC_ACQUIRE) : s->stats.inferred;
  st->n_rungs = s->lad.n;
  st->rung = s->lad.cur;
  for (int k = 0; k < s->lad.n; k++) st->rung_ratio[k] = s->lad.ratio[k];
  if (s->depth) hr__depth_stats(s->depth, st);
}

void hr_stream_destroy(hr_stream *s) {
  if (!s) return;
  if (s->tail_on) hr__tail_destroy(&s->tail);   /* the worker stops before the session goes */
  hr_session_destroy(s->s);
  hr_health_destroy(s->health);
  hr_fault_destroy(s->inj);
  hr_gov_destroy(s->gov);
  hr__depth_destroy(s->depth);
  free(s->copy);
  free(s->u8);
  if (s->statm_fd >= 0) close(s->statm_fd);
  free(s);
}

/* After a plan change (create, replan, resume, suspend): keep what every frame reports, and tell
 * the governor the device memory of a GPU on the host's RAM (it counts against the ceiling beside
 * the RSS; none while suspended). */
static void plan_read(hr_stream *s) {
  hr_plan_info pi; hr_session_get_plan(s->s, &pi);
  s->proc_w = pi.proc_width; s->proc_h = pi.proc_height; s->ratio = pi.downsample_ratio;
  s->read_replans = s->stats.replans;
  s->read_suspended = hr_session_is_suspended(s->s);
#ifdef HR_HAVE_VULKAN
  if (s->gov && s->s->bk == &hr__backend_vulkan && hr__vk_unified_memory(s->s->bimpl))
    hr_gov_set_device_bytes(s->gov, s->read_suspended ? 0 : (uint64_t)pi.device_bytes);
#endif
}

/* Session creation as a job (run on the network's thread in tail-every-frame mode). */
typedef struct session_job {
  hr_model *m; const hr_session_params *p; hr_session *out; char *why; size_t why_len; hr_status st;
} session_job;
static void make_session(void *arg) {
  session_job *j = arg;
  j->st = hr_session_create_err(j->m, j->p, &j->out, j->why, j->why_len);
}

/* A GPU session that times its convolutions' kernels (vk_backend.c, tune_convs) pays that timing
 * at the first replan to each rung: on the H200 a replan to a rung not seen before took 140-254 ms
 * (tuning 108-224 of it), tens of frames at 60 fps, and one seen before keeps its picks. So a
 * stream that adapts visits the rungs below its first here, once, and comes back: the loop's later
 * steps down (the budget's, the governor's) find their kernels picked. Not where the device shares
 * the host's memory (two plans live during a replan, counted against the ceiling), not on devices
 * that do not tune (lavapipe by default); HR_STREAM_WARM=0: never. Any failure ends the visits
 * where they are (the next push replans back, as after a failed step). */
static void warm_rungs(hr_stream *s) {
#ifdef HR_HAVE_VULKAN
  const char *e = getenv("HR_STREAM_WARM");
  if ((e && *e == '0') || !s->p.adapt || s->tail_on || s->s->bk != &hr__backend_vulkan || !hr__vk_tunes(s->s->bimpl) ||
      hr__vk_unified_memory(s->s->bimpl))
    return;
  const int first = s->lad.cur;
  int at = first;
  for (int k = first + 1; k < s->lad.n; k++) {
    if (hr__session_replan_quiet(s->s, s->sp.width, s->sp.height, s->lad.ratio[k])) break;
    at = k;
  }
  if (at != first && !hr__session_replan_quiet(s->s, s->sp.width, s->sp.height, s->lad.ratio[first])) at = first;
  s->lad.cur = s->prev_rung = at;   /* the first frame reports no replan: the caller made none */
#else
  (void)s;
#endif
}

hr_status hr_stream_create(hr_model *m, const hr_stream_params *pp, hr_stream **out, char *err, size_t err_len) {
  errf(err, err_len, "%s", "");
  if (!m || !out) return HR_EINVAL;
  *out = NULL;
  hr_stream *s = calloc(1, sizeof *s);
  if (!s) { errf(err, err_len, "out of memory"); return HR_ENOMEM; }
  if (pp) s->p = *pp; else hr_stream_params_default(&s->p);
  s->m = m;
  s->sp = s->p.session;
  s->last_h = INT64_MAX;
  s->statm_fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
  hr_status st = HR_OK;
  if (!(s->p.budget_ms > 0) || s->p.max_rungs < 1 || s->p.max_rungs > HR_STREAM_MAX_RUNGS) {
    errf(err, err_len, "stream: budget_ms must be > 0 and max_rungs in 1..%d", HR_STREAM_MAX_RUNGS);
    st = HR_EINVAL; goto fail;
  }
  /* session.alpha_u8: the session makes the float matte (the health monitor, the depth fusion and
   * fault injection read it) and the stream the bytes in the pass the health monitor's full scan
   * makes over it (out_pass); with alpha_u8_only (no depth, no injection) the bytes alone: the
   * session's per frame, the stream's tail's (tail.q8) in tail-every-frame mode */
  const int want_u8 = s->sp.alpha_u8, u8only = want_u8 && s->p.alpha_u8_only && !s->p.depth && !s->p.inject;
  s->sp.alpha_u8 = s->p.session.alpha_u8 = u8only && !s->p.tail_every_frame;
  /* Tail every frame: session.threads counts the caller's thread, which runs the tail on every
   * frame, and the network's pool gets the others (at least one). With the network on all of them
   * the two contended: on 2 vCPUs (bedroom 1920x1440 @60 replayed, r0.133, 3 pairs alternating) the
   * network on 2 threads beside the tail ran as fast as on one (run p50 15-19 ms either way), its
   * pool's threads spinning at each op's join for a thread the tail had put off its CPU (~30% of
   * its CPU time, perf), and the tail waited for a CPU; on 1 thread beside the tail: pixels off
   * 3.11 / 3.60 / 3.34% against 3.64 / 3.49 / 3.43, latency p99 17.2 / 14.4 / 9.3 ms against
   * 26.0 / 25.6 / 24.8, the caller over 1 ms waiting for a CPU in 1-3 pushes of 198 against 35-47,
   * 0.84-1.11 CPUs against 1.09-1.30 (2026-12-07). HR_TAIL_NET_THREADS=N sets the network's count
   * (measurements). */
  if (s->p.tail_every_frame) {
    const int T = s->sp.threads > 0 ? s->sp.threads : hr_cpu_count();
    const char *e = getenv("HR_TAIL_NET_THREADS");
    s->sp.threads = e && atoi(e) > 0 ? atoi(e) : T > 1 ? T - 1 : 1;
  }
  hr_model_info mi; hr_model_get_info(m, &mi);
  if (!s->sp.width) { s->sp.width = mi.fixed_width; s->sp.height = mi.fixed_height; }
  if (s->sp.width <= 0 || s->sp.height <= 0) { errf(err, err_len, "stream: no model input size (set session.width/height)"); st = HR_EINVAL; goto fail; }
  /* the stream's own bytes (made by its pass or its tail), unless the session's are the result */
  if (want_u8 && !s->sp.alpha_u8 && !(s->u8 = malloc((size_t)s->sp.width * (size_t)s->sp.height))) {
    errf(err, err_len, "stream: out of memory for the %dx%d 8-bit matte", s->sp.width, s->sp.height);
    st = HR_ENOMEM; goto fail;
  }
  /* the ladder: rung 0 = the asked ratio (or auto), then smaller */
  float r0 = s->sp.downsample_ratio;
  if (r0 <= 0) { int side = s->sp.width > s->sp.height ? s->sp.width : s->sp.height; r0 = side > 512 ? 512.f / (float)side : 1.f; }
  char perr[512] = "";
  if (!hr__ladder_build(&s->lad, m, &s->sp, r0, mi.has_ratio ? s->p.max_rungs : 1, s->p.tail_every_frame ? 1 + u8only : 0, perr,
                        sizeof perr)) {
    errf(err, err_len, "cannot plan %s at %dx%d: %s", mi.name, s->sp.width, s->sp.height, perr);
    st = HR_EINVAL; goto fail;
  }
  if (s->p.governor) {
    hr_gov_params gp; hr_gov_params_default(&gp);
    gp.profile = s->p.profile;
    gp.ladder.n_rungs = s->lad.n;
    for (int k = 0; k < s->lad.n; k++) {
      gp.ladder.rung_bytes[k] = (uint64_t)s->lad.bytes[k];
      gp.ladder.rung_build_bytes[k] = (uint64_t)s->lad.build[k];
    }
    char gerr[256] = "";
    st = hr_gov_create(&gp, &s->gov, gerr, sizeof gerr);
    if (st) { errf(err, err_len, "governor: %s", gerr); goto fail; }
    hr_gov_candidate cands[HR_STREAM_MAX_RUNGS]; char names[HR_STREAM_MAX_RUNGS][48];
    for (int k = 0; k < s->lad.n; k++) {
      snprintf(names[k], sizeof names[k], "ratio %.3f", s->lad.ratio[k]);
      cands[k].name = names[k]; cands[k].planned_bytes = (uint64_t)s->lad.bytes[k];
    }
    size_t chosen = 0;
    if (!s->p.governor_observe_only &&
        hr_gov_admit_now(s->gov, (uint64_t)mi.weight_bytes, cands, (size_t)s->lad.n, &chosen)) {
      errf(err, err_len, "admission refused: %s", hr_gov_last_error(s->gov));
      st = HR_ENOFIT; goto fail;
    }
    s->lad.gov_rung = (int)chosen;
    hr_gov_ladder_set_rung(hr_gov_get_ladder(s->gov), (int)chosen);
  }
  s->lad.cur = hr__ladder_want(&s->lad);
  s->prev_rung = s->lad.cur;
  hr_session_params sp = s->sp;
  sp.downsample_ratio = s->lad.ratio[s->lad.cur];
  char why[512] = "";
  session_job job = {m, &sp, NULL, why, sizeof why, HR_OK};
  if (s->p.tail_every_frame) {
    /* the network's thread first, at a lower priority; the session (and its pool's threads) is
     * made on it, so the whole network runs below the caller's thread and the tail */
    if (s->sp.want_fgr) { errf(err, err_len, "tail every frame: not with the foreground output"); st = HR_EINVAL; goto fail; }
    const char *nice = getenv("HR_TAIL_NICE");   /* for measurements: the network thread's nice value */
    st = hr__tail_start(&s->tail, nice ? atoi(nice) : TAIL_NICE, err, err_len);
    if (st) goto fail;
    s->tail.q8 = u8only ? s->u8 : NULL;
    s->tail_on = 1;
    const char *w = getenv("HR_TAIL_WAIT");   /* for measurements: 0 = always the newest published */
    s->tail_wait = !w || atoi(w) != 0;
    /* the lag meter's rule: tau 1, the lag moving the edges by their own soft width (ladder.c);
     * HR_TAIL_LAG_TAU=X another (for measurements), 0 the run-time bound alone, as before */
    const char *tau = getenv("HR_TAIL_LAG_TAU");
    s->lag_tau = tau ? atof(tau) : 1.0;
    hr__tail_call(&s->tail, make_session, &job);
  } else {
    make_session(&job);
  }
  s->s = job.out;
  st = job.st;
  if (st) {
    errf(err, err_len, "cannot create session: %s%s%s", hr_status_str(st), why[0] ? ": " : "", why);
    goto fail;
  }
  if (s->tail_on && (st = hr__tail_attach(&s->tail, s->s, err, err_len))) goto fail;
  warm_rungs(s);
  plan_read(s);
  hr_plan_info pi; hr_session_get_plan(s->s, &pi);
  hr_health_params hp;
  if (s->p.health) hp = *s->p.health; else hr_health_params_default(&hp);
  static const char *const names[] = {"r1", "r2", "r3", "r4", "r5", "r6", "r7", "r8"};
  if (!hp.state_names) hp.state_names = names;
  char herr[256] = "";
  st = hr_health_create(&hp, pi.width, pi.height, &s->health, herr, sizeof herr);
  if (st) { errf(err, err_len, "health: %s", herr); goto fail; }
  if (s->p.inject) {
    st = hr_fault_create(s->p.inject, s->p.inject_seed, &s->inj, herr, sizeof herr);
    if (st) { errf(err, err_len, "inject: %s", herr); goto fail; }
  }
  if (s->p.depth && (st = hr__depth_create(&s->p, pi.width, pi.height, &s->depth, err, err_len))) goto fail;
  *out = s;
  return HR_OK;
fail:
  hr_stream_destroy(s);
  return st;
}

/* The network's run-time budget in tail-every-frame mode. The matte's lag is about one network run:
 * it is bounded in time, 66.8 ms (4 frames at 60 fps, where this mode was measured against the
 * processing-size ladder), but never below 0.8 x the frame budget, where a run fits the frame
 * itself and the push waits for it (no lag at all: a 10 fps camera). */
static double net_budget(const hr_stream_params *p) {
  if (p->net_budget_ms > 0) return p->net_budget_ms;
  const double lag = 4 * p->budget_ms < 66.8 ? 4 * p->budget_ms : 66.8;
  return lag > 0.8 * p->budget_ms ? lag : 0.8 * p->budget_ms;
}

/* The session is suspended. While a replan is in flight on the worker it is not (a replan never
 * suspends), and the session's plan pointer is the worker's to swap: it is not read then. */
static int suspended(const hr_stream *s) { return !s->replan_busy && hr_session_is_suspended(s->s); }

/* The health monitor's note of a rung change made. */
static void note_replanned(hr_stream *s, int rung) {
  hr_plan_info pi; hr_session_get_plan(s->s, &pi);
  char detail[96];
  snprintf(detail, sizeof detail, "rung %d of %d, processing %dx%d", rung, s->lad.n, pi.proc_width, pi.proc_height);
  hr_health_note_event(s->health, HR_HEALTH_EVENT_REPLANNED, detail);
}

/* Tail mode: the budget's rung change built on the worker (hr__tail_post), so that no push waits
 * for it: the plan's kernels (tens of ms on two cores) are made while the tail goes on with the
 * newest coefficients, as it does while a network run is slow. */
static void replan_on_worker(void *arg) {
  hr_stream *s = arg;
  s->replan_st = hr__session_replan_keep(s->s, s->sp.width, s->sp.height, s->lad.ratio[s->replan_rung]);
}

/* The replan in flight has finished (the worker is idle): take its result as apply_decisions does
 * its own. Returns the events it raised. */
static uint32_t replan_done(hr_stream *s) {
  hr__ladder *l = &s->lad;
  s->replan_busy = 0;
  if (s->replan_st) {
    s->stats.change_failures++;
    fail(s, s->replan_st, "replan to ratio %.3f failed: %s", l->ratio[s->replan_rung], hr_session_last_error(s->s));
    l->budget_rung = l->cur;   /* do not retry a failing replan every frame */
    return HR_STREAM_EVENT_CHANGE_FAILED;
  }
  l->cur = s->replan_rung; hr__ladder_changed(l); s->stats.replans++;
  note_replanned(s, l->cur);
  return 0;
}

/* A change to rung k built beside the running plan (hr_session_replan) under a governor must fit
 * the headroom it measured last, by the rule of its own step up (hr__gov_build_fits). */
static int build_fits(hr_stream *s, int k) {
  return !s->gov || s->p.governor_observe_only || hr__gov_build_fits(hr_gov_get_ladder(s->gov), s->last_h, k);
}

/* Step 1 of a push: apply what the previous frame decided. Returns the events it raised. */
static uint32_t apply_decisions(hr_stream *s, int pressure) {
  uint32_t ev = 0;
  hr__ladder *l = &s->lad;
  const int gov_hold = s->gov && hr_gov_get_ladder(s->gov)->level == HR_GOV_LEVEL_SUSPEND;
  if (!hr_session_is_suspended(s->s) && (s->want_suspend || pressure)) {
    /* critical headroom: pass frames through; arena, kernels and state go back to the OS */
    hr_session_suspend(s->s);
    s->inj_suspended = pressure && !s->want_suspend;
    hr_health_note_event(s->health, HR_HEALTH_EVENT_GOV_SUSPEND, pressure && !s->want_suspend ? "injected memory pressure" : NULL);
    s->want_suspend = 0;
    return ev;
  }
  s->want_suspend = 0;
  if (hr_session_is_suspended(s->s)) {
    int go = (s->want_resume && !pressure) || (s->inj_suspended && !pressure && !gov_hold) ||
             (s->resume_failed && !pressure && !gov_hold && s->n >= s->retry_at);
    s->want_resume = 0;
    if (!go) return ev;
    int rung = hr__ladder_want(l);
    hr_status st = hr_session_resume(s->s, s->sp.width, s->sp.height, l->ratio[rung]);
    if (st) {
      s->resume_failed = 1; s->retry_at = s->n + RETRY_FRAMES; s->stats.change_failures++;
      fail(s, st, "resume at ratio %.3f failed (still suspended, retrying in %d frames): %s", l->ratio[rung], RETRY_FRAMES,
           hr_session_last_error(s->s));
      return ev | HR_STREAM_EVENT_CHANGE_FAILED;
    }
    s->inj_suspended = s->resume_failed = 0;
    l->cur = rung; hr__ladder_changed(l); s->stats.replans++;
    hr_health_note_event(s->health, HR_HEALTH_EVENT_GOV_RESUME, NULL);
    return ev | HR_STREAM_EVENT_RESUMED;
  }
  if (s->rebuild) {   /* resets did not help: the session starts over (state zeroed), and so does its monitor */
    hr_session_reset(s->s); hr_health_reset(s->health);
    s->stats.rebuilds++; s->rebuild = 0;
    ev |= HR_STREAM_EVENT_REBUILT;
  }
  int want = hr__ladder_want(l);
  if (want != l->cur) {
    /* a step down the governor asked for is made under memory pressure: release the old plan
     * first (suspend, then resume smaller); any other change builds the new plan beside the old
     * one and keeps the old one if that fails */
    int release_first = s->gov_step && want > l->cur;
    if (!release_first && !build_fits(s, want)) {
      /* the budget's change would hold the new rung's build beside the running plan under the
       * governor's critical mark (+ hysteresis): a step up waits for headroom, a step down
       * releases first as the governor's own do (the state starts over) */
      if (want < l->cur) { s->gov_step = 0; return ev; }
      release_first = 1;
    }
    hr_status st;
    if (release_first) {
      hr_session_suspend(s->s);
      st = hr_session_resume(s->s, s->sp.width, s->sp.height, l->ratio[want]);
      if (st) { s->resume_failed = 1; s->retry_at = s->n + RETRY_FRAMES; }
    } else {
      st = hr__session_replan_keep(s->s, s->sp.width, s->sp.height, l->ratio[want]);   /* a change of speed */
    }
    if (st) {
      s->stats.change_failures++;
      /* the session's message says what it kept (the previous plan, or nothing: suspended) */
      if (release_first)
        fail(s, st, "step down to ratio %.3f failed (retrying the resume every %d frames): %s", l->ratio[want], RETRY_FRAMES,
             hr_session_last_error(s->s));
      else
        fail(s, st, "replan to ratio %.3f failed: %s", l->ratio[want], hr_session_last_error(s->s));
      if (!release_first) l->budget_rung = l->cur;   /* do not retry a failing replan every frame */
      s->gov_step = 0;
      return ev | HR_STREAM_EVENT_CHANGE_FAILED;
    }
    l->cur = want; hr__ladder_changed(l); s->stats.replans++;
    note_replanned(s, want);
  }
  s->gov_step = 0;
  return ev;
}

/* The governor: measure this frame's memory, decide now, act at the next push. The health monitor
 * is told the measured headroom (its memory-pressure cause), whatever the governor decides. */
static void govern(hr_stream *s, hr_telemetry_record *rec) {
  if (s->gov) {
    hr_gov_decision d; hr_gov_sample gs;   /* device bytes: set by plan_read */
    if (hr_gov_frame(s->gov, &d, &gs) == HR_OK) {   /* a failed read fills d (no action), not gs */
      rec->rss_bytes = (int64_t)gs.rss_bytes;
      rec->headroom_bytes = gs.available_bytes;
      rec->ceiling_safe_bytes = gs.safe_bytes ? (int64_t)gs.safe_bytes : HR_TELEMETRY_NONE;
      rec->ceiling_kill_bytes = gs.kill_bytes ? (int64_t)gs.kill_bytes : HR_TELEMETRY_NONE;
      s->last_h = gs.available_bytes;
      const hr_gov_ladder_params *lp = &hr_gov_get_ladder(s->gov)->p;   /* health's memory-pressure cause: the shed mark */
      /* over the ceiling already, available < 0: the monitor names it as such (until 2026-12-06 it
       * took any negative for "not measured" and the worst pressure went unnamed: test_stream under
       * TSan, whose shadow memory took the process past a ceiling of its RSS + 60 MB) */
      if (gs.safe_bytes || gs.kill_bytes)
        hr_health_observe_memory(s->health, gs.available_bytes, lp->shed_bytes, lp->hysteresis_bytes);
    }
    if (d.action != HR_GOV_ACTION_NONE) {
      rec->governor_action = hr_gov_action_name(d.action);
      s->stats.governor_actions++;
      if (!s->p.governor_observe_only) {
        if (d.rung != s->lad.gov_rung) s->gov_step = 1;
        s->lad.gov_rung = d.rung;
        if (d.action == HR_GOV_ACTION_SUSPEND) s->want_suspend = 1;
        if (d.action == HR_GOV_ACTION_RESUME) s->want_resume = 1;
        if (d.action == HR_GOV_ACTION_STEP_DOWN) hr_health_note_event(s->health, HR_HEALTH_EVENT_GOV_SHED, NULL);
        /* the pages a change of speed left in the heap (hr__session_replan_keep) go back to the OS */
        if (d.action == HR_GOV_ACTION_RELEASE_CACHES) hr__heap_trim();
        if (d.action == HR_GOV_ACTION_STEP_UP && d.rung == 0) hr_health_note_event(s->health, HR_HEALTH_EVENT_GOV_RESTORED, NULL);
      }
    }
  } else {
    /* RSS only: one pread of statm, opened at create (no stdio, no allocation) */
    char buf[128];
    long pages = 0, res = 0;
    ssize_t k = s->statm_fd >= 0 ? pread(s->statm_fd, buf, sizeof buf - 1, 0) : -1;
    if (k > 0) { buf[k] = 0; if (sscanf(buf, "%ld %ld", &pages, &res) == 2) rec->rss_bytes = (int64_t)res * sysconf(_SC_PAGESIZE); }
  }
}

/* The health monitor's look at the matte, and the 8-bit matte: one pass over every pixel for both
 * (the sum and NaN/Inf count the monitor's full scan wants, and the bytes), over the session's
 * threads when the frame ran on them (pool NULL: this thread; in tail-every-frame mode the
 * network's run has them). */
static void out_pass(hr_stream *s, hr_stream_result *out, pthreadpool_t pool, const float *const *sv, const size_t *sl, int ns,
                     uint32_t *ev) {
  const int w = out->width, h = out->height;
  hr_health_verdict *hv = &out->health;
  uint8_t *q = s->u8 && (int64_t)w * h <= (int64_t)s->sp.width * s->sp.height ? s->u8 : NULL;
  if (!q && !hr__health_full_scan(s->health)) {
    hr_health_observe_output(s->health, out->alpha, w, h, sv, sl, ns, hv);
    return;
  }
  double sum;
  const int64_t bad = hr__k_alpha_scan(pool, out->alpha, q, (int64_t)w * h, &sum);
  if (hr__health_full_scan(s->health)) hr__health_observe_output_scanned(s->health, out->alpha, w, h, sum, bad, sv, sl, ns, hv);
  else hr_health_observe_output(s->health, out->alpha, w, h, sv, sl, ns, hv);
  out->alpha_u8 = q;
  if (q && bad) *ev |= HR_EVENT_NONFINITE;
}

hr_status hr_stream_push(hr_stream *s, const hr_frame *f, hr_stream_result *out) {
  if (!s || !f || !out) return HR_EINVAL;
  char why[256];
  if (hr_frame_validate(f, why, sizeof why)) return fail(s, HR_EINVAL, "bad frame: %s", why);
  const double t0 = now_ms();
  const int64_t n = s->n;
  const uint32_t faults = s->inj ? hr_fault_active(s->inj, n) : 0;
  const int pressure = (faults & HR_FAULT_BIT(HR_FAULT_MEMORY_PRESSURE)) != 0;
  const int64_t replans = s->stats.replans;
  int defer = 0;
  uint32_t ev = 0;
  if (s->tail_on) {
    /* a change waits for the network run in flight: memory-driven ones at once (drain), a rebuild
     * and a resume at the first push that finds the network idle (no frame waits); the budget's
     * rung change is then built on the worker while pushes go on (replan_on_worker), where its
     * build fits the governor's headroom (else apply_decisions: a step up waits, a step down
     * releases first) */
    const int urgent = pressure || s->want_suspend || s->gov_step || suspended(s);
    if (urgent) hr__tail_drain(&s->tail);
    if (s->replan_busy) {
      if (hr__tail_idle(&s->tail)) ev |= replan_done(s);
      else defer = 1;
    }
    const int other = urgent || s->want_resume || s->rebuild;
    const int want = hr__ladder_want(&s->lad);
    if (!defer && (other || want != s->lad.cur) && !hr__tail_idle(&s->tail)) defer = 1;
    else if (!defer && !other && want != s->lad.cur && build_fits(s, want)) {
      s->replan_busy = 1; s->replan_rung = want;
      hr__tail_post(&s->tail, replan_on_worker, s);
      defer = 1;
    }
  }
  if (!defer) ev |= apply_decisions(s, pressure);
  if (s->stats.replans != s->read_replans || suspended(s) != s->read_suspended) plan_read(s);
  if (s->tail_on && !suspended(s) && (s->stats.replans != replans || (ev & HR_STREAM_EVENT_REBUILT))) {
    /* a new plan: the tail's tables follow it; after a budget replan the newest coefficients stay
     * on show until the new plan's first run, after a resume or a rebuild they go (the next push
     * waits for its run) */
    if (hr__tail_prepare(&s->tail, !(ev & (HR_STREAM_EVENT_REBUILT | HR_STREAM_EVENT_RESUMED))))
      fail(s, HR_ENOMEM, "tail every frame: out of memory after a change; running whole frames");
  }
  const double t1 = now_ms();
  memset(out, 0, sizeof *out);
  hr_telemetry_record *rec = &out->record;
  hr_telemetry_record_init(rec);
  out->change_ms = t1 - t0;
  out->depth.frame = -1;
  out->frame = rec->frame = n;
  out->rung = s->lad.cur;
  if (s->lad.cur != s->prev_rung) ev |= HR_STREAM_EVENT_RUNG_CHANGED;
  s->prev_rung = s->lad.cur;
  /* the input, altered by an injected fault when one is active (into the stream's own copy) */
  s->cur = *f;
  if (s->inj) {
    hr_status st = hr_frame_copy(f, &s->copy, &s->copy_cap, &s->cur);
    if (st) return fail(s, st, "out of memory copying a %dx%d frame for fault injection", f->width, f->height);
    hr_fault_apply_input(s->inj, n, &s->cur);
  }
  out->input = &s->cur;
  hr_health_observe_input(s->health, &s->cur);
  hr_health_verdict *hv = &out->health;
  double t_post;               /* from the end of inference: governor, health, controller */
  if (!suspended(s)) {
    const int split = s->tail_on && s->tail.ok && s->cur.width == s->tail.si.W && s->cur.height == s->tail.si.H;
    if (s->tail_on && (!split || (faults & HR_FAULT_BIT(HR_FAULT_NAN_STATE)))) hr__tail_drain(&s->tail);
    if (faults & HR_FAULT_BIT(HR_FAULT_NAN_STATE)) {
      size_t lens[8];
      for (int k = 0; k < s->s->plan->n_state; k++) lens[k] = (size_t)s->s->plan->state_bytes[k] / 4;
      hr_fault_apply_state(s->inj, n, s->s->state, lens, s->s->plan->n_state);
    }
    hr_outputs o;
    hr_status st;
    int64_t q8_sum = -1, q8_bad = 0;   /* o.alpha_u8 (alpha_u8_only): their sum (-1: not known) and NaN/Inf count */
    if (split) {
      hr__tail_out to;
      /* a network run that fits the frame's budget beside this push's own work is waited for:
       * where the network keeps up (a slow camera, a small rung) the matte has no lag. The wait
       * ends by 0.9 x the budget from the push's start, less the tail still to run (the last
       * push's) and the source resize (hr__tail_push counts that one). Waiting also for a run an
       * earlier push posted, when the last run's time says it ends in time, was measured on
       * 2026-12-06 (bedroom at 0.171, 4 pairs: 0.10-0.15 points fewer pixels off, latency p99 16.4-
       * 17.4 ms against 8.9-11.1; with the wait ending at 0.7 x the budget no gain beyond the
       * runs' noise) and not kept */
      const double wait = s->tail_wait ? 0.9 * s->p.budget_ms - (now_ms() - t0) - s->tail_cost_ms : 0;
      /* no run is posted while a replan is to be taken: the session's plan may be the new one,
       * which the tail's split (prepared below, in replan_done's push) does not describe yet */
      st = hr__tail_push(&s->tail, &s->cur, n, !s->replan_busy, wait, &to);
      if (st) return fail(s, st, "frame %lld: %s", (long long)n, s->tail.net_st ? s->tail.net_err : hr_session_last_error(s->s));
      memset(&o, 0, sizeof o);
      o.alpha = o.raw = to.alpha; o.raw_channels = 1;
      o.alpha_u8 = to.alpha_u8; q8_sum = to.byte_sum; q8_bad = to.nonfinite;
      if (q8_bad) o.events |= HR_EVENT_NONFINITE;
      o.width = to.width; o.height = to.height;
      o.ingest_ms = to.src_ms; o.infer_ms = to.wait_ms + to.tail_ms;
      s->tail_cost_ms = to.tail_ms;
      rec->net_ms = to.net_ms;
      o.threads = to.net_threads;
      rec->coef_age = n - to.coef_frame;
      rec->coef_warped = to.warped;
      if (to.lag_off >= 0) { rec->lag_off = to.lag_off; rec->lag_band = to.lag_band; }
      /* the controller sees each network run once: its time against the network's budget */
      if (s->p.adapt && to.new_coef) {
        hr__ladder_observe(&s->lad, to.net_ms, net_budget(&s->p));
        /* and its lag meter, where the run's frame had been shown with older coefficients of its
         * grid; a run whose matte has almost no edges (< 0.2% of the grid: nobody there) counts as
         * one without a measure */
        if (to.lag_off >= 0) hr__ladder_lag(&s->lad, to.lag_band >= 0.002 ? to.lag_off / to.lag_band : -1, to.net_ms, s->p.budget_ms, s->lag_tau);
      }
    } else {
      st = hr_session_push(s->s, &s->cur, &o);
      if (!st && o.alpha_u8) { q8_bad = s->s->alpha8_bad; q8_sum = s->s->alpha8_bsum; }
#ifdef HR_HAVE_VULKAN
      if (!st && s->s->bk == &hr__backend_vulkan) {
        double dms = hr__vk_device_ms(s->s->bimpl);
        if (dms >= 0) rec->device_ms = dms;
      }
#endif
    }
    if (st) return fail(s, st, "frame %lld: %s", (long long)n, hr_session_last_error(s->s));
    ev |= o.events;
    hr_health_note_session_events(s->health, o.events);
    out->alpha = s->inj ? hr_fault_apply_output(s->inj, n, o.alpha, o.width, o.height) : o.alpha;
    out->width = o.width; out->height = o.height;
    out->fgr = o.fgr; out->raw = o.raw; out->raw_channels = o.raw_channels;
    out->model_input = split ? NULL : s->s->src_ptr;
    t_post = now_ms();
    govern(s, rec);
    const float *sv[8]; size_t sl[8];
    /* the state is read only while no network run writes it, and not while a replan is still to
     * be taken (replan_done: the health monitor hears of the new plan first) */
    int ns = (split && !hr__tail_idle(&s->tail)) || s->replan_busy ? 0 : hr_session_state_views(s->s, sv, sl, 8);
    if (o.alpha_u8) {   /* alpha_u8_only: the bytes and their figures came with them */
      const int64_t npx = (int64_t)o.width * o.height;
      out->alpha_u8 = o.alpha_u8;
      hr__health_observe_output_u8(s->health, o.alpha_u8, o.width, o.height, q8_sum >= 0 ? q8_sum : hr__k_u8_sum(o.alpha_u8, npx),
                                   q8_bad, sv, sl, ns, hv);
    } else {
      out_pass(s, out, split ? NULL : o.threads > 1 ? s->s->pool : NULL, sv, sl, ns, &ev);
    }
    if (hv->action == HR_HEALTH_ACTION_RESET_STATE) {
      if (split) s->tail.reset_pending = 1;   /* applied when the next run is posted: no wait here */
      else hr_session_reset(s->s);
      s->stats.health_resets++;
    }
    if (hv->state == HR_HEALTH_FAILED) s->rebuild = 1;
    rec->ingest_ms = o.ingest_ms; rec->infer_ms = o.infer_ms;
    rec->bytes_copied = o.bytes_copied;
    if (o.threads > 0) rec->threads = o.threads;
    rec->state_reset = (o.events & HR_EVENT_STATE_RESET) != 0;
    rec->proc_w = s->proc_w; rec->proc_h = s->proc_h; rec->ratio = s->ratio;
    s->stats.inferred++;
  } else {
    t_post = now_ms();
    govern(s, rec);
    hr_health_get(s->health, hv);
    ev |= HR_STREAM_EVENT_SUSPENDED;
    s->stats.suspended_frames++;
  }
  /* the budget controller, on this frame's processing time (not the change before it) */
  if (s->p.adapt && !suspended(s) && (out->alpha || out->alpha_u8) && !isfinite(rec->net_ms))
    hr__ladder_observe(&s->lad, now_ms() - t1, s->p.budget_ms);
  rec->post_ms = now_ms() - t_post;
  /* the verdict's reason outlives the monitor's next call: keep it with the result */
  snprintf(s->reason, sizeof s->reason, "%s", hv->reason ? hv->reason : "");
  hv->reason = s->reason;
  rec->health = hr_health_state_name(hv->state);
  rec->health_reason = s->reason;
  rec->confidence = out->alpha || out->alpha_u8 ? hv->confidence : NAN;
  if ((unsigned)hv->state < 6) s->stats.health_frames[hv->state]++;
  if (s->depth) {   /* pair this frame's matte (the result's alpha) with depth; fuse what is decided */
    if (hr__depth_push_color(s->depth, n, s->cur.ts_ns, out->alpha, out->width, out->height, &out->depth, rec))
      fail(s, HR_OK, "%s", hr__depth_last_error(s->depth));
    for (int k = hr__depth_take_unpaired(s->depth); k > 0; k--) hr_health_note_event(s->health, HR_HEALTH_EVENT_DEPTH_MISALIGNED, NULL);
  }
  out->events = ev;
  s->stats.frames++;
  s->n++;
  return HR_OK;
}

/* Depth fusion's entry points (the work is in depth.c). */
hr_status hr_stream_push_depth(hr_stream *s, const hr_frame *depth) {
  if (!s) return HR_EINVAL;
  if (!s->depth) return fail(s, HR_EMISUSE, "depth frame pushed into a stream made without params.depth");
  hr_status st = hr__depth_push_depth(s->depth, depth);
  if (st) fail(s, st, "%s", hr__depth_last_error(s->depth));
  for (int k = hr__depth_take_unpaired(s->depth); k > 0; k--) hr_health_note_event(s->health, HR_HEALTH_EVENT_DEPTH_MISALIGNED, NULL);
  return st;
}

hr_status hr_stream_pop_depth(hr_stream *s, hr_stream_depth *out) {
  if (!s || !out) return HR_EINVAL;
  return s->depth ? hr__depth_pop(s->depth, out) : HR_EAGAIN;
}

hr_status hr_stream_flush_depth(hr_stream *s) {
  if (!s) return HR_EINVAL;
  if (!s->depth) return HR_OK;
  hr_status st = hr__depth_flush(s->depth);
  if (st) fail(s, st, "%s", hr__depth_last_error(s->depth));
  for (int k = hr__depth_take_unpaired(s->depth); k > 0; k--) hr_health_note_event(s->health, HR_HEALTH_EVENT_DEPTH_MISALIGNED, NULL);
  return st;
}
