/* The processing-resolution ladder and the frame-budget controller that moves along it. */
#ifndef HR_STREAM_LADDER_H
#define HR_STREAM_LADDER_H
#include "headroom.h"

typedef struct hr__ladder {
  int n;
  float ratio[HR_STREAM_MAX_RUNGS];
  int64_t bytes[HR_STREAM_MAX_RUNGS];  /* planned bytes without weights */
  int64_t build[HR_STREAM_MAX_RUNGS];  /* held beside the running plan while a change to the rung is built
                                          (its kernels and state: hr_session_replan's transient) */
  int budget_rung, gov_rung, cur;      /* the controller's wish, the governor's cap, the rung in use */
  /* tail-every-frame: the lag's error, measured (hr__ladder_lag): the rung the matte's quality asks
   * for at most (0: no cap), the normalised lag error's running mean on the rung in use, its count */
  int lag_rung;
  double lag_mean;
  int lag_n, lag_miss;                 /* and runs in a row without a measure (no edges) */
  int lag_on;                          /* the rung lag_mean is over */
  /* each rung's normalised lag error over its last stay (>= LAG_MIN_RUNS runs; 0: none) and the
   * frame count when it was left: the lag rule's up-step takes it over its prediction */
  double lag_seen[HR_STREAM_MAX_RUNGS];
  int64_t lag_seen_at[HR_STREAM_MAX_RUNGS];
  double recent[64];                   /* frame processing times since the last change (ring) */
  double once[64];                     /* the same, each run of frames over the budget counted once: a
                                          frame over it right after one over it is kept as the budget */
  int n_recent, since_change;
  int ring_rung;                       /* the rung the ring's frames ran on */
  /* each rung's median frame time over its last stay (>= 12 frames; 0: none) and the frame count
   * when it was left: the up-step's prediction (hr__ladder_observe) */
  double med[HR_STREAM_MAX_RUNGS];
  int64_t med_at[HR_STREAM_MAX_RUNGS];
  /* the controller's memory of its up-steps (see hr__ladder_observe) */
  int up_wait;
  int64_t frames, up_at, calm_since;
} hr__ladder;

/* Plan rung k at ratio r0 x {1, .8, .64, .5, .4, .32, .24, .18}[k] for k < max_rungs, stopping at
 * a 64x48 processing size; with tail (1; 2: writing bytes, no float matte), each rung's bytes count
 * the tail every frame's memory too (hr_stream_tail_bytes, _u8). Returns the number of rungs (0:
 * rung 0 cannot be planned; err says why). */
int hr__ladder_build(hr__ladder *l, hr_model *m, const hr_session_params *base, float r0, int max_rungs, int tail, char *err,
                     size_t err_len);
/* One frame's processing time (ms) against the budget: may move budget_rung. */
void hr__ladder_observe(hr__ladder *l, double ms, double budget);
/* Tail-every-frame: one network run's lag meter (hr__tail_out.lag_off / lag_band: the edges' share
 * that the lag moved off, normalised by the soft band's; < 0: the run had no edges to measure on),
 * that run's time and the frame budget (ms), against tau (the normalised error at which the lag
 * costs about what one rung's resolution does): may move lag_rung one rung. */
void hr__ladder_lag(hr__ladder *l, double norm_err, double run_ms, double frame_ms, double tau);
/* The rung the ladder should run on: the lowest of the controller's wish, the governor's cap and
 * the lag meter's. */
static inline int hr__ladder_want(const hr__ladder *l) {
  const int a = l->gov_rung > l->budget_rung ? l->gov_rung : l->budget_rung;
  return l->lag_rung > a ? l->lag_rung : a;
}
/* The rung in use changed: the controller starts its window over. */
void hr__ladder_changed(hr__ladder *l);
#endif
