/* The processing-resolution ladder (ratios planned up front) and the frame-budget controller. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "stream/ladder.h"
#include "headroom/stream.h"

int hr__ladder_build(hr__ladder *l, hr_model *m, const hr_session_params *base, float r0, int max_rungs, int tail, char *err,
                     size_t err_len) {
  static const float f[HR_STREAM_MAX_RUNGS] = {1.f, 0.8f, 0.64f, 0.5f, 0.4f, 0.32f, 0.24f, 0.18f};
  memset(l, 0, sizeof *l);
  l->up_wait = 60; l->up_at = -1;
  l->n = max_rungs < 1 ? 1 : max_rungs > HR_STREAM_MAX_RUNGS ? HR_STREAM_MAX_RUNGS : max_rungs;
  for (int k = 0; k < l->n; k++) {
    l->ratio[k] = r0 * f[k];
    hr_session_params p = *base;
    p.downsample_ratio = l->ratio[k];
    hr_plan_info pi;
    char e[256];
    if (hr_model_plan(m, &p, &pi, k ? e : err, k ? sizeof e : err_len)) { l->n = k; break; }
    l->bytes[k] = pi.total_bytes - pi.weight_bytes + (tail == 2 ? hr_stream_tail_bytes_u8(&pi) : tail ? hr_stream_tail_bytes(&pi) : 0);
    l->build[k] = pi.kernel_shared_bytes + pi.kernel_bytes + pi.state_bytes;
    if (pi.proc_width < 64 || pi.proc_height < 48) { l->n = k + 1; break; }
  }
  return l->n;
}

static int cmp_dbl(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return x < y ? -1 : x > y; }

/* q-quantile (nearest rank) of the last m samples of a ring (l->recent or l->once) */
static double ring_q(const hr__ladder *l, const double *ring, int m, double q) {
  double tmp[64];
  for (int i = 0; i < m; i++) tmp[i] = ring[(l->n_recent - 1 - i) % 64];
  qsort(tmp, (size_t)m, sizeof(double), cmp_dbl);
  int k = (int)ceil(q * m) - 1;
  return tmp[k < 0 ? 0 : k >= m ? m - 1 : k];
}

/* The controller's p99 of its 64 frames: the second largest (nearest rank, 63/64). */
#define TAIL_RANK (63.0 / 64)
/* A rung's measured median is used for an up-step's prediction this many frames after it was left
 * (60 s at 60 fps) */
#define UP_SEEN 3600

/* Budget controller on the frame processing time (ms). The first frame after a change is not
 * counted (it carries the new plan's setup). Rung costs are predicted from what the current rung
 * costs, scaled by the processed pixels (ratio^2): part of the cost (ingest, the full-size refiner)
 * does not shrink with the ratio, so the prediction is low for smaller rungs and high for larger
 * ones: down-jumps fall short rather than overshoot, up-steps are cautious.
 *   down, fast: when the last 2 frames are both over twice the budget, the median of the last 4 is
 *     over budget, the p90 of the last 12 is, or the p99 of the last 64 is (the budget bounds the
 *     tail too: in a live loop a frame over the period makes the next one wait, so the latency's
 *     p99 follows the processing time's): on the median, jump to the largest rung predicted (from
 *     it) to fit in 70% of the budget, at least one rung down; on the tail figures and on the last 2
 *     frames alone, one rung. A tail figure says that some frames are slow, not how much the
 *     rung's load is over: scaled by the pixels, a pair at 45 ms among 11 ms frames jumped 3 rungs,
 *     two stalls of 22 and 41 ms among 11 ms frames 2 (test_stream_ladder (5), (7)), and the climb
 *     back is slow by design; if the rung is still over, the rule fires again on the next one's
 *     frames, and a slowdown that lasts moves the median. The p99 of 64 frames is taken as their
 *     second largest (TAIL_RANK), not the largest: one frame over the budget in 64 is an accident
 *     of the host (a page fault, a preemption, a disk flush) that a smaller rung would not have
 *     avoided, and the replan costs more than the frame did (on Vulkan a new plan is pipelines
 *     and tuning: hundreds of ms, tens of frames dropped). Two such frames are a pattern; two in a
 *     row are one accident (the p90 and p99 rules count a run once: on a 2-CPU VM, stalls that
 *     slowed two consecutive frames ~1.6x, every 30-50 frames, walked a 1920x1440 loop at 7-10 ms
 *     a frame from 0.085 down to 0.048; three in a row move the median of 4).
 *   up, slow: after up_wait frames (and at least 64) on a rung, if the rung above is predicted to
 *     fit in 90% of the budget from the p90 of the last 32 frames, and within it from the p99 of
 *     the last 64. The prediction scales them by the pixels (ratio^2), or, when the rung above was
 *     left within the last UP_SEEN frames, by the two rungs' measured medians (that rung's over its
 *     stay, this one's over its last 32 frames), never below half the pixels' growth: ratio^2 ran
 *     high by the costs that do not shrink with the ratio (bedroom at 1920x1440 on 2 CPUs: 0.085 ->
 *     0.107 cost 1.42x, not 1.56x; 0.107 -> 0.133 1.28x), and a loop that a stall stepped down could
 *     not climb back to a rung it had run within the budget (test_stream_ladder (8)). A rung
 *     measured when the host was faster is climbed to and left again: its median is then the slow
 *     one, and up_wait doubles. up_wait starts at 60 frames and doubles (to at
 *     most 1920) whenever a rung reached by an up-step has to be left within 2 x up_wait frames;
 *     it halves back (not below 60) after 8 x up_wait frames without a change.
 * Hysteresis: down when the p90 is over the budget; up only when the rung above is predicted at
 * <= 90% of it (one rung up is 1.25x the ratio, 1.56x the pixels; the prediction runs ~10% high
 * on RVM at 1920x1440, so about 80% in fact), and not sooner than up_wait frames. */
void hr__ladder_observe(hr__ladder *l, double ms, double budget) {
  l->frames++;
  l->since_change++;
  if (l->since_change <= 1) return;
  l->ring_rung = l->cur;
  const int prev_over = l->n_recent > 0 && l->recent[(l->n_recent - 1) % 64] > budget;
  l->once[l->n_recent % 64] = ms > budget && prev_over ? budget : ms;
  l->recent[l->n_recent++ % 64] = ms;
  int n = l->n_recent < 64 ? l->n_recent : 64, cur = l->cur;
  double basis = 0;   /* the cost that calls for a step down, 0: none */
  int one = 0;        /* the basis is the last two frames or a tail figure: one rung */
  if (n >= 2) {
    double a = l->recent[(l->n_recent - 1) % 64], b = l->recent[(l->n_recent - 2) % 64], lo = a < b ? a : b;
    if (lo > 2 * budget) basis = lo, one = 1;
  }
  if (!basis && n >= 4) { double med = ring_q(l, l->recent, 4, 0.5); if (med > budget) basis = med; }
  /* the tail rules count a run of slow frames once: a stall of the host (a preemption) often spans
   * two frames at 60 fps, and is one accident, not two; a slowdown that lasts is the median's */
  if (!basis && n >= 12) { double p90 = ring_q(l, l->once, 12, 0.9); if (p90 > budget) basis = p90, one = 1; }
  if (!basis && n >= 64) { double p99 = ring_q(l, l->once, 64, TAIL_RANK); if (p99 > budget) basis = p99, one = 1; }
  if (basis && l->budget_rung < l->n - 1) {
    int t = cur + 1;
    /* slow frames among others say the host or the content slowed down, not by how much for how
     * long (a hiccup of the host looks the same): one rung; if it lasts, the median of 4 moves on
     * by prediction */
    while (!one && t < l->n - 1 && basis * (l->ratio[t] * l->ratio[t]) / (l->ratio[cur] * l->ratio[cur]) > 0.7 * budget) t++;
    if (t > l->budget_rung) l->budget_rung = t;
    if (l->up_at >= 0 && l->frames - l->up_at < 2 * l->up_wait) l->up_wait = l->up_wait * 2 > 1920 ? 1920 : l->up_wait * 2;
    l->up_at = -1; l->calm_since = l->frames;
    return;
  }
  if (l->up_wait > 60 && l->frames - l->calm_since > 8 * l->up_wait) { l->up_wait /= 2; l->calm_since = l->frames; }
  if (cur > 0 && l->budget_rung >= cur && l->since_change >= l->up_wait && n >= 64) {
    double p90 = ring_q(l, l->recent, 32, 0.9), p99 = ring_q(l, l->recent, 64, TAIL_RANK), up = (l->ratio[cur - 1] * l->ratio[cur - 1]) / (l->ratio[cur] * l->ratio[cur]);
    if (l->med[cur - 1] > 0 && l->frames - l->med_at[cur - 1] <= UP_SEEN) {   /* the rung above, measured */
      const double r = l->med[cur - 1] / ring_q(l, l->recent, 32, 0.5), floor = 1 + 0.5 * (up - 1);
      if (r < up) up = r > floor ? r : floor;
    }
    if (p90 * up <= 0.9 * budget && p99 * up <= budget) {
      l->budget_rung = cur - 1;
      l->up_at = l->calm_since = l->frames;
    }
  }
}

/* The lag meter's rule (issue 15, lever 2: the network's rate against the processing size, by
 * measured quality). On tail-every-frame the matte's error against a larger rung's has two parts:
 * the rung's resolution, which cannot be measured while running (it would take the larger rung's
 * run), and the lag, which can: each run's matte on its own frame against the one shown there
 * (hr__tail_out.lag_off). Normalised by the matte's soft band (lag_band: the edges, which are what
 * the lag moves and what the resolution blurs), it says by how much of the edges' own width the
 * lag moved them. Where that is over tau the lag costs more than a rung's resolution: one rung
 * down (a faster run, a younger matte). Where the rung above is predicted under it, the cap lifts
 * by one (the time rule then decides whether the rung fits). Prediction: the normalised error grows
 * with the run's time to the power LAG_EXP (measured on 2 vCPUs, 1920x1440 NV12 @60, rungs 0.267
 * -> 0.133 at coefficients 5.5 -> 1.1 frames old: bedroom 1.50 / 1.37 / 1.18 / 0.91, vtest 0-199
 * 0.99 / 0.87 / 0.67 (0.267 -> 0.171): about age^0.3). The rule never steps into a rung whose runs are
 * predicted to fit the frame (0.8 x its budget): there the push waits for its own run. */
/* LAG_UP 1.0 instead was tried (vtest 0-199 and 400-599 had been seen held at 0.213 after a step
 * down: 0.87 there, predicted 0.97 at 0.267, where they are best): bedroom then went 0.133 <-> 0.171
 * within a pass (3.07-3.08% over every frame, settled 1-15 frames) and vtest 0-199 still stayed at
 * 0.213 (1.35%). Kept at 0.95: a rare stay one rung low costs vtest ~0.15 points. */
#define LAG_EXP 0.3
/* tau on rung k: tau x LAG_GROW^k. What a step down costs in resolution grows as the ratio falls
 * (bedroom's error with the network on every frame, against the base: 1.45 / 1.90 / 2.56% at 0.213 /
 * 0.171 / 0.133, steps of 0.45 then 0.66 points), so the lag that pays for a step must too. One tau
 * for every rung took bedroom, on a slower day of the 2-vCPU VM (runs of ~18 ms at 0.133), from 0.133
 * (meter 1.16, 3.45-3.49% off at a fixed 0.133) to 0.107 (3.94%); 0.171 there 3.47-3.49% at 1.37.
 * (1 / 0.8)^0.5 a rung: down over 1.10 / 1.23 / 1.37 / 1.54 on rungs 0-3 (0.267 / 0.213 / 0.171 /
 * 0.133 at 1920x1440). Chosen on bedroom and vtest 0-199 (vtest 400-599 and desk held out). */
#define LAG_GROW 1.1180339887
/* hysteresis: down over LAG_DOWN x tau, up where the rung above is predicted under LAG_UP x tau (a
 * change costs the matte its age while the new plan is built and run, up to ~10 frames at 60 fps:
 * vtest's 0.97 at 0.267 on tau alone went 0.267 -> 0.213 -> 0.267 -> 0.213 in 200 frames, 1.45%
 * off against 1.08, the kept coefficients then unwarped) */
#define LAG_DOWN 1.1
#define LAG_UP 0.95
#define LAG_MIN_RUNS 12   /* runs measured on a rung before the rule moves (~0.3-1 s) */
/* A rung's measured error stands for it this many runs after it was left (the controller's frame
 * count: one a run in tail mode; 10-30 s), over the prediction where higher. The prediction from
 * the rung below ran low: on a slower day of the 2-vCPU VM (runs of ~18 ms at 0.133, ~14 at 0.107),
 * bedroom went 0.133 -> 0.107 -> 0.133 six times in 200 frames (at 0.107 predicted 0.92 at 0.133,
 * measured there 1.1-1.2 each time), 3.60% off over every frame (3.78 settled at 0.107). */
#define LAG_SEEN 600
/* The rung the lag mean is over: its measure kept (LAG_SEEN), where it has enough runs */
static void lag_keep(hr__ladder *l) {
  if (l->lag_n >= LAG_MIN_RUNS && l->lag_on >= 0 && l->lag_on < l->n) { l->lag_seen[l->lag_on] = l->lag_mean; l->lag_seen_at[l->lag_on] = l->frames; }
}
/* Rung k's run time over the current rung's (run_ms): measured, k's median over its last stay
 * against run_ms, else by the pixels (ratio^2) */
static double rung_cost(const hr__ladder *l, int k, double run_ms) {
  if (l->med[k] > 0 && run_ms > 0) return l->med[k] / run_ms;
  return (l->ratio[k] * l->ratio[k]) / (l->ratio[l->cur] * l->ratio[l->cur]);
}

void hr__ladder_lag(hr__ladder *l, double e, double run_ms, double frame_ms, double tau) {
  if (!(tau > 0)) return;
  if (!(e >= 0)) {   /* no edges to measure on: the lag costs nothing there, the cap lifts slowly */
    if (++l->lag_miss >= 2 * LAG_MIN_RUNS && l->cur > 0 && l->lag_rung >= l->cur) { l->lag_rung = l->cur - 1; l->lag_miss = 0; }
    return;
  }
  l->lag_miss = 0;
  if (!l->lag_n) l->lag_on = l->cur;
  l->lag_n++;
  l->lag_mean += (e - l->lag_mean) / (l->lag_n < 16 ? l->lag_n : 16);   /* the mean, then a running one over ~16 runs */
  if (l->lag_n < LAG_MIN_RUNS) return;
  const int cur = l->cur;
  if (l->lag_mean > LAG_DOWN * tau * pow(LAG_GROW, cur) && cur + 1 < l->n) {
    /* not into a rung whose runs fit the frame: the push waits for its own run there, so the lag's
     * gain comes as the caller's latency (bedroom at 0.107 on 2 vCPUs, runs of ~10 ms: latency p50
     * 15.1 / p99 21.8 ms against 5-6 / 10-18 at 0.133, and no fewer pixels off) */
    if (run_ms * rung_cost(l, cur + 1, run_ms) > 0.8 * frame_ms && l->lag_rung < cur + 1) l->lag_rung = cur + 1;
    return;
  }
  if (cur > 0 && l->lag_rung >= cur && l->lag_n >= 2 * LAG_MIN_RUNS) {
    /* the rung above's run time (measured, never taken as faster than this one's) */
    double up = rung_cost(l, cur - 1, run_ms);
    if (up < 1) up = 1;
    double pred = l->lag_mean * pow(up, LAG_EXP);
    /* the rung above as measured on its last stay, where that is higher and recent: the prediction
     * ran low there (see LAG_SEEN) */
    if (l->lag_seen[cur - 1] > pred && l->frames - l->lag_seen_at[cur - 1] <= LAG_SEEN) pred = l->lag_seen[cur - 1];
    if (pred <= LAG_UP * tau * pow(LAG_GROW, cur - 1)) {
      lag_keep(l);   /* before lag_n restarts: the change, if the time rule lets it happen, finds none */
      l->lag_rung = cur - 1; l->lag_n = 0;
    }
  }
}

void hr__ladder_changed(hr__ladder *l) {
  lag_keep(l);
  l->lag_n = 0; l->lag_mean = 0;
  /* the rung left: its median over the stay (the ring's last 64 frames) */
  const int n = l->n_recent < 64 ? l->n_recent : 64, k = l->ring_rung;
  if (n >= 12 && k >= 0 && k < l->n) { l->med[k] = ring_q(l, l->recent, n, 0.5); l->med_at[k] = l->frames; }
  l->n_recent = 0; l->since_change = 0;
}
