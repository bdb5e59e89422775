/* Session health monitor: per-frame signals, the health state machine, reasons and reset requests. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "headroom.h"
#include "health/health_internal.h"
#include "session/kernels.h"

#define HR__ENT_BINS 1024
#define HR__FAIL_RING 32          /* most resets remembered for the FAILED rule (fail_resets < this) */
#define HR__SOFT_WIN 10           /* frames in the soft-cause windows */
#define HR__DEPTH_WIN 30

/* Causes judged only while HEALTHY / DEGRADED: the outputs are expected to move during warm-up and
 * recalibration. */
#define HR__SOFT_CAUSES (HR_HEALTH_CAUSE_LOW_CONFIDENCE | HR_HEALTH_CAUSE_INCONSISTENT | \
                         HR_HEALTH_CAUSE_STATE_SATURATED)
/* Hard evidence of bad input or a dead output: acted on in every state. */
#define HR__INPUT_CAUSES (HR_HEALTH_CAUSE_INPUT_BLACK | HR_HEALTH_CAUSE_INPUT_SATURATED | \
                          HR_HEALTH_CAUSE_INPUT_FROZEN | HR_HEALTH_CAUSE_INPUT_NOISE | \
                          HR_HEALTH_CAUSE_STUCK_OUTPUT)

struct hr_health {
  hr_health_params p;
  /* alpha sampling */
  int alpha_w, alpha_h, stride, n_samples, cap;
  float *prev;                    /* cap samples of the previous alpha */
  bool prev_valid;
  float ent_lut[HR__ENT_BINS + 1];
  /* input */
  float *thumb, *thumb_prev;      /* tw * th each */
  bool have_thumb;
  float *mtmp;                    /* tw * th: per-cell |luma change|, then its row-wise 3-max */
  float *anchor;                  /* tw * th: first thumbnail of the current (near-)repeat run */
  int exact_run;                  /* consecutive inputs that repeat the previous one bit for bit */
  uint8_t *moving;                /* tw * th: 1 where the input moved (3 x 3 max of the change) */
  bool moving_fresh;              /* the map belongs to an input observed since the last output */
  float hf_prev;
  int run_black, run_white, run_noise;
  int64_t ts_prev;                /* timestamp of the previous input (0: none) */
  int ts_stuck_run;               /* consecutive inputs whose timestamp did not advance */
  /* state statistics */
  double rms_ema[HR_HEALTH_MAX_STATE];
  int ema_n[HR_HEALTH_MAX_STATE];
  /* state machine */
  hr_health_state state;
  int64_t frames_in_state;
  uint32_t causes;
  uint32_t hist_lowconf, hist_incons, hist_sat, hist_depth;
  int run_lowconf, run_stuck;
  int recover_run, settle_run;
  bool not_settling;
  bool gov_shed;
  bool mem_on;                    /* MEMORY_PRESSURE: measured headroom under mem_low */
  int64_t mem_headroom, mem_low;
  bool pend_cut, pend_depth;
  int64_t resets[HR__FAIL_RING];
  int n_resets;                   /* total requested, ring index = n % HR__FAIL_RING */
  float confidence;
  bool conf_init;
  char recal_why[HR_HEALTH_REASON_LEN];
  char gov_detail[64];
  char susp_detail[64];
  char fail_reason[HR_HEALTH_REASON_LEN];
  char reason[HR_HEALTH_REASON_LEN];
  char err[160];
  double cost_in_us;
  hr_health_signals sig;
  hr_health_callback cb;
  void *cb_user;
};

/* ------------------------------------------------------------------------------------------- */

static double hr__now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

static int hr__popc(uint32_t x) { return __builtin_popcount(x); }

const char *hr_health_state_name(hr_health_state s) {
  switch (s) {
    case HR_HEALTH_WARMING_UP: return "warming-up";
    case HR_HEALTH_HEALTHY: return "healthy";
    case HR_HEALTH_DEGRADED: return "degraded";
    case HR_HEALTH_RECALIBRATING: return "recalibrating";
    case HR_HEALTH_SUSPENDED: return "suspended";
    case HR_HEALTH_FAILED: return "failed";
  }
  return "unknown";
}

const char *hr_health_cause_name(uint32_t c) {
  switch (c) {
    case HR_HEALTH_CAUSE_NONFINITE: return "nonfinite";
    case HR_HEALTH_CAUSE_STATE_RUNAWAY: return "state-runaway";
    case HR_HEALTH_CAUSE_LOW_CONFIDENCE: return "low-confidence";
    case HR_HEALTH_CAUSE_INCONSISTENT: return "inconsistent";
    case HR_HEALTH_CAUSE_STUCK_OUTPUT: return "stuck-output";
    case HR_HEALTH_CAUSE_INPUT_BLACK: return "input-black";
    case HR_HEALTH_CAUSE_INPUT_SATURATED: return "input-saturated";
    case HR_HEALTH_CAUSE_INPUT_FROZEN: return "input-frozen";
    case HR_HEALTH_CAUSE_INPUT_NOISE: return "input-noise";
    case HR_HEALTH_CAUSE_STATE_SATURATED: return "state-saturated";
    case HR_HEALTH_CAUSE_DEPTH_MISALIGNED: return "depth-misaligned";
    case HR_HEALTH_CAUSE_GOV_SHED: return "gov-shed";
    case HR_HEALTH_CAUSE_MEMORY_PRESSURE: return "memory-pressure";
    case HR_HEALTH_CAUSE_NOT_SETTLING: return "not-settling";
  }
  return "unknown";
}

const char *hr_health_event_name(hr_health_event ev) {
  switch (ev) {
    case HR_HEALTH_EVENT_STATE_RESET: return "state-reset";
    case HR_HEALTH_EVENT_REPLANNED: return "replanned";
    case HR_HEALTH_EVENT_SCENE_CUT: return "scene-cut";
    case HR_HEALTH_EVENT_GOV_SUSPEND: return "gov-suspend";
    case HR_HEALTH_EVENT_GOV_RESUME: return "gov-resume";
    case HR_HEALTH_EVENT_GOV_SHED: return "gov-shed";
    case HR_HEALTH_EVENT_GOV_RESTORED: return "gov-restored";
    case HR_HEALTH_EVENT_DEPTH_MISALIGNED: return "depth-misaligned";
  }
  return "unknown";
}

void hr_health_params_default(hr_health_params *p) {
  if (!p) return;
  memset(p, 0, sizeof *p);
  p->thumb_width = 64;
  p->thumb_height = 48;
  p->sample_stride = 0;
  p->max_samples = 240 * 180;
  p->full_scan = true;
  p->warmup_frames = 10;
  p->recover_frames = 10;
  p->settle_frames = 8;
  p->settle_timeout_frames = 90;
  p->input_frames = 3;
  p->frozen_frames = 3;
  p->frozen_level = 0.03f;
  p->frozen_share = 0.002f;
  p->fail_resets = 3;
  p->fail_window_frames = 300;
  p->band_lo = 0.1f;
  p->band_hi = 0.9f;
  p->uncertain_max = 0.20f;
  p->mad_base = 0.03f;
  p->mad_gain = 1.5f;
  p->iou_base = 0.75f;
  p->iou_gain = 4.0f;
  p->stuck_eps = 1e-6f;
  p->stuck_input_min = 0.004f;
  p->black_level = 0.06f;
  p->white_level = 0.96f;
  p->noise_hf = 0.12f;
  p->state_bound = 1.0f;
  p->state_sat_max = 0.9f;
  p->runaway_factor = 4.0f;
  p->depth_miss_max = 5;
  p->motion_level = 0.02f;
  p->state_names = NULL;
}

static hr_status hr__check_params(const hr_health_params *p, char *why, size_t n) {
#define BAD(...) do { if (why && n) snprintf(why, n, __VA_ARGS__); return HR_EINVAL; } while (0)
  if (p->thumb_width < 8 || p->thumb_width > 256 || p->thumb_height < 8 || p->thumb_height > 256)
    BAD("thumbnail %dx%d out of range (8..256 each)", p->thumb_width, p->thumb_height);
  if (p->sample_stride < 0 || p->sample_stride > 4096) BAD("sample_stride %d out of range (0..4096)", p->sample_stride);
  if (p->max_samples < 64 || p->max_samples > (1 << 24)) BAD("max_samples %d out of range (64..16M)", p->max_samples);
  if (p->warmup_frames < 0 || p->recover_frames < 1 || p->settle_frames < 1 || p->input_frames < 1 ||
      p->frozen_frames < 1 || p->settle_timeout_frames < p->settle_frames)
    BAD("frame counts must be >= 1 (warmup >= 0, settle_timeout >= settle)");
  if (p->fail_resets < 0 || p->fail_resets >= HR__FAIL_RING) BAD("fail_resets %d out of range (0..%d)", p->fail_resets, HR__FAIL_RING - 1);
  if (p->fail_window_frames < 1) BAD("fail_window_frames must be >= 1");
  if (!(p->band_lo >= 0.0f && p->band_lo < p->band_hi && p->band_hi <= 1.0f)) BAD("uncertain band (%g, %g) invalid", p->band_lo, p->band_hi);
  if (!(p->uncertain_max > 0.0f && p->uncertain_max <= 1.0f)) BAD("uncertain_max %g out of (0,1]", p->uncertain_max);
  if (!(p->mad_base > 0.0f) || !(p->mad_gain >= 0.0f) || !(p->iou_base <= 1.0f) || !(p->iou_gain >= 0.0f))
    BAD("consistency thresholds invalid (mad_base > 0, gains >= 0, iou_base <= 1)");
  if (!(p->stuck_eps >= 0.0f) || !(p->stuck_input_min > 0.0f)) BAD("stuck thresholds invalid");
  if (!(p->black_level > 0.0f && p->black_level < p->white_level && p->white_level < 1.0f)) BAD("black/white levels invalid");
  if (!(p->noise_hf > 0.0f)) BAD("noise_hf must be > 0");
  if (!(p->motion_level > 0.0f)) BAD("motion_level must be > 0");
  if (!(p->frozen_level >= 0.0f && p->frozen_level <= 1.0f) || !(p->frozen_share >= 0.0f && p->frozen_share < 1.0f))
    BAD("frozen_level %g / frozen_share %g out of range ([0,1] / [0,1))", p->frozen_level, p->frozen_share);
  if (!(p->state_bound >= 0.0f) || !(p->state_sat_max > 0.0f) || !(p->runaway_factor > 1.0f)) BAD("state thresholds invalid");
  if (p->depth_miss_max < 1 || p->depth_miss_max > HR__DEPTH_WIN) BAD("depth_miss_max %d out of range (1..30)", p->depth_miss_max);
  return HR_OK;
#undef BAD
}

/* Samples along one axis for stride s: positions off, off + s, ... below n, off = min(s/2, n-1). */
static int hr__axis_count(int n, int s) {
  int off = s / 2 < n - 1 ? s / 2 : n - 1;
  return (n - off + s - 1) / s;
}

static int64_t hr__sample_count(int w, int h, int s) { return (int64_t)hr__axis_count(w, s) * hr__axis_count(h, s); }

/* Pick the stride for a w x h alpha that fits cap samples. */
static void hr__set_geometry(hr_health *h, int w, int hh) {
  int s = h->p.sample_stride > 0 ? h->p.sample_stride : 1;
  while (hr__sample_count(w, hh, s) > h->cap) s++;
  h->alpha_w = w;
  h->alpha_h = hh;
  h->stride = s;
  h->n_samples = (int)hr__sample_count(w, hh, s);
  h->prev_valid = false;
}

static const char *hr__state_name_i(const hr_health *h, int i, char *buf, size_t n) {
  if (h->p.state_names && h->p.state_names[i]) return h->p.state_names[i];
  snprintf(buf, n, "state[%d]", i);
  return buf;
}

/* Clear everything but params, buffers, LUT and callback. */
static void hr__clear(hr_health *h) {
  h->prev_valid = false;
  h->have_thumb = false;
  h->moving_fresh = false;
  h->hf_prev = -1.0f;
  h->run_black = h->run_white = h->run_noise = 0;
  h->ts_prev = 0;
  h->ts_stuck_run = 0;
  h->exact_run = 0;
  memset(h->rms_ema, 0, sizeof h->rms_ema);
  memset(h->ema_n, 0, sizeof h->ema_n);
  h->state = HR_HEALTH_WARMING_UP;
  h->frames_in_state = 0;
  h->causes = 0;
  h->hist_lowconf = h->hist_incons = h->hist_sat = h->hist_depth = 0;
  h->run_lowconf = h->run_stuck = 0;
  h->recover_run = h->settle_run = 0;
  h->not_settling = h->gov_shed = h->mem_on = h->pend_cut = h->pend_depth = false;
  h->n_resets = 0;
  h->confidence = 0.0f;
  h->conf_init = false;
  h->recal_why[0] = h->gov_detail[0] = h->susp_detail[0] = h->fail_reason[0] = 0;
  h->cost_in_us = 0.0;
  memset(&h->sig, 0, sizeof h->sig);
  h->sig.luma_mean = h->sig.input_mad = h->sig.hf = h->sig.frozen_changed = -1.0f;
  h->sig.alpha_mad = h->sig.alpha_maxdiff = h->sig.mask_iou = h->sig.mask_iou_still = -1.0f;
  h->sig.sample_stride = h->stride;
  h->sig.n_samples = h->n_samples;
  snprintf(h->reason, sizeof h->reason, "warming up: no frames yet");
}

hr_status hr_health_create(const hr_health_params *pp, int alpha_w, int alpha_h, hr_health **out,
                           char *err, size_t err_len) {
  if (out) *out = NULL;
  if (!out) return HR_EINVAL;
  hr_health_params p;
  if (pp) p = *pp; else hr_health_params_default(&p);
  hr_status st = hr__check_params(&p, err, err_len);
  if (st != HR_OK) return st;
  if (alpha_w < 1 || alpha_h < 1 || alpha_w > 16384 || alpha_h > 16384) {
    if (err && err_len) snprintf(err, err_len, "alpha size %dx%d out of range (1..16384)", alpha_w, alpha_h);
    return HR_EINVAL;
  }
  hr_health *h = calloc(1, sizeof *h);
  if (!h) return HR_ENOMEM;
  h->p = p;
  h->cap = p.max_samples;
  if (p.sample_stride > 0) {
    int64_t n = hr__sample_count(alpha_w, alpha_h, p.sample_stride);
    if (n > h->cap) h->cap = (int)(n < (1 << 24) ? n : (1 << 24));
  }
  size_t tn = (size_t)p.thumb_width * p.thumb_height;
  h->prev = malloc(sizeof(float) * (size_t)h->cap);
  h->thumb = malloc(sizeof(float) * tn);
  h->thumb_prev = malloc(sizeof(float) * tn);
  h->mtmp = malloc(sizeof(float) * tn);
  h->anchor = malloc(sizeof(float) * tn);
  h->moving = malloc(tn);
  if (!h->prev || !h->thumb || !h->thumb_prev || !h->mtmp || !h->anchor || !h->moving) {
    hr_health_destroy(h);
    if (err && err_len) snprintf(err, err_len, "out of memory for health buffers");
    return HR_ENOMEM;
  }
  for (int i = 0; i <= HR__ENT_BINS; i++) {
    double q = (double)i / HR__ENT_BINS;
    double e = (q <= 0.0 || q >= 1.0) ? 0.0 : -(q * log2(q) + (1.0 - q) * log2(1.0 - q));
    h->ent_lut[i] = (float)e;
  }
  hr__set_geometry(h, alpha_w, alpha_h);
  hr__clear(h);
  *out = h;
  return HR_OK;
}

void hr_health_destroy(hr_health *h) {
  if (!h) return;
  free(h->prev);
  free(h->thumb);
  free(h->thumb_prev);
  free(h->mtmp);
  free(h->anchor);
  free(h->moving);
  free(h);
}

void hr_health_set_callback(hr_health *h, hr_health_callback cb, void *user) {
  if (!h) return;
  h->cb = cb;
  h->cb_user = user;
}

const char *hr_health_last_error(const hr_health *h) { return h ? h->err : ""; }
hr_health_state hr_health_get_state(const hr_health *h) { return h ? h->state : HR_HEALTH_FAILED; }
const char *hr_health_reason(const hr_health *h) { return h ? h->reason : "no monitor"; }

/* ------------------------------------------------------------------------------------------- */
/* Reasons. */

/* One cause in words, with its numbers. */
static void hr__cause_text(const hr_health *h, uint32_t c, char *b, size_t n) {
  const hr_health_signals *s = &h->sig;
  char nb[32];
  switch (c) {
    case HR_HEALTH_CAUSE_INPUT_BLACK:
      snprintf(b, n, "input black: %.0f%% of the frame below luma %.2f for %d frames",
               100.0 * s->dark_share, h->p.black_level, h->run_black); break;
    case HR_HEALTH_CAUSE_INPUT_SATURATED:
      snprintf(b, n, "input saturated: %.0f%% of the frame above luma %.2f for %d frames",
               100.0 * s->bright_share, h->p.white_level, h->run_white); break;
    case HR_HEALTH_CAUSE_INPUT_NOISE:
      snprintf(b, n, "input noise: pixel-scale variation %.3f (> %.3f) for %d frames",
               s->hf, h->p.noise_hf, h->run_noise); break;
    case HR_HEALTH_CAUSE_INPUT_FROZEN:
      if (h->ts_stuck_run)
        snprintf(b, n, "input stalled: the timestamp did not advance for %d frames", h->ts_stuck_run);
      else if (h->exact_run >= s->frozen_run)
        snprintf(b, n, "input frozen: %d identical frames in a row", s->frozen_run + 1);
      else
        snprintf(b, n, "input frozen: %d near-identical frames in a row (%.2f%% of the picture changed by >= %.0f/255 "
                 "since the first: a stale picture with fresh noise or a lossy re-encode)", s->frozen_run + 1,
                 100.0 * s->frozen_changed, 255.0 * h->p.frozen_level);
      break;
    case HR_HEALTH_CAUSE_STUCK_OUTPUT:
      snprintf(b, n, "output stuck: alpha unchanged for %d frames while the input changes (mean luma change %.3f, "
               "moving in %.0f%% of the frame)", h->run_stuck, s->input_mad, 100.0 * s->moving_share); break;
    case HR_HEALTH_CAUSE_NOT_SETTLING:
      snprintf(b, n, "not settling: outputs still inconsistent %lld frames after %.100s",
               (long long)h->p.settle_timeout_frames, h->recal_why[0] ? h->recal_why : "a reset"); break;
    case HR_HEALTH_CAUSE_INCONSISTENT:
      snprintf(b, n, "low temporal consistency: %d of the last %d frames, mean alpha change %.3f (allowed %.3f), "
               "mask IoU %.2f where the input is still (floor %.2f; %.2f overall)", hr__popc(h->hist_incons), HR__SOFT_WIN,
               s->alpha_mad, s->mad_allow, s->mask_iou_still, s->iou_allow, s->mask_iou); break;
    case HR_HEALTH_CAUSE_LOW_CONFIDENCE:
      snprintf(b, n, "low confidence: %.0f%% uncertain pixels for %d frames", 100.0 * s->uncertain_share,
               h->run_lowconf); break;
    case HR_HEALTH_CAUSE_STATE_SATURATED: {
      int w = 0;
      for (int i = 1; i < s->n_state; i++) if (s->state_sat[i] > s->state_sat[w]) w = i;
      snprintf(b, n, "state saturated: %.0f%% of %s at its bound", 100.0 * s->state_sat[w],
               hr__state_name_i(h, w, nb, sizeof nb));
      break;
    }
    case HR_HEALTH_CAUSE_DEPTH_MISALIGNED:
      snprintf(b, n, "depth misaligned on %d of the last %d frames", hr__popc(h->hist_depth), HR__DEPTH_WIN); break;
    case HR_HEALTH_CAUSE_MEMORY_PRESSURE:
      if (h->mem_headroom < 0)
        snprintf(b, n, "memory pressure: %.0f MB over the ceiling", (double)-h->mem_headroom / 1048576.0);
      else
        snprintf(b, n, "memory pressure: %.0f MB headroom, under %.0f MB", (double)h->mem_headroom / 1048576.0, (double)h->mem_low / 1048576.0);
      break;
    case HR_HEALTH_CAUSE_GOV_SHED:
      snprintf(b, n, "quality reduced by the memory governor%s%s", h->gov_detail[0] ? ": " : "", h->gov_detail); break;
    default:
      snprintf(b, n, "%s", hr_health_cause_name(c)); break;
  }
}

/* Causes in the order they are reported: the most specific first. */
static const uint32_t hr__cause_order[] = {
  HR_HEALTH_CAUSE_INPUT_BLACK, HR_HEALTH_CAUSE_INPUT_SATURATED, HR_HEALTH_CAUSE_INPUT_NOISE,
  HR_HEALTH_CAUSE_INPUT_FROZEN, HR_HEALTH_CAUSE_STUCK_OUTPUT, HR_HEALTH_CAUSE_NOT_SETTLING,
  HR_HEALTH_CAUSE_INCONSISTENT, HR_HEALTH_CAUSE_LOW_CONFIDENCE, HR_HEALTH_CAUSE_STATE_SATURATED,
  HR_HEALTH_CAUSE_DEPTH_MISALIGNED, HR_HEALTH_CAUSE_MEMORY_PRESSURE, HR_HEALTH_CAUSE_GOV_SHED,
};

static void hr__update_reason(hr_health *h) {
  char *b = h->reason;
  const size_t n = sizeof h->reason;
  switch (h->state) {
    case HR_HEALTH_WARMING_UP:
      snprintf(b, n, "warming up: frame %lld of %d", (long long)h->frames_in_state, h->p.warmup_frames);
      return;
    case HR_HEALTH_HEALTHY:
      snprintf(b, n, "healthy");
      return;
    case HR_HEALTH_SUSPENDED:
      snprintf(b, n, "suspended by the memory governor%s%s", h->susp_detail[0] ? ": " : "", h->susp_detail);
      return;
    case HR_HEALTH_FAILED:
      snprintf(b, n, "%s", h->fail_reason);
      return;
    case HR_HEALTH_RECALIBRATING:
      snprintf(b, n, "recalibrating after %.120s: consistent for %d of %d frames",
               h->recal_why[0] ? h->recal_why : "a reset", h->settle_run, h->p.settle_frames);
      return;
    case HR_HEALTH_DEGRADED:
      break;
  }
  uint32_t c = h->causes & ~(HR_HEALTH_CAUSE_NONFINITE | HR_HEALTH_CAUSE_STATE_RUNAWAY);
  if (!c) {
    snprintf(b, n, "recovering: no cause for %d of %d frames", h->recover_run, h->p.recover_frames);
    return;
  }
  size_t k = 0;
  int listed = 0;
  for (size_t i = 0; i < sizeof hr__cause_order / sizeof hr__cause_order[0]; i++) {
    uint32_t bit = hr__cause_order[i];
    if (!(c & bit)) continue;
    if (listed == 0) {
      hr__cause_text(h, bit, b, n);
      k = strlen(b);
    } else if (k + 4 < n) {
      int w = snprintf(b + k, n - k, "%s%s", listed == 1 ? "; also: " : ", ", hr_health_cause_name(bit));
      if (w > 0) k += (size_t)w;
      if (k >= n) k = n - 1;
    }
    listed++;
  }
}

static void hr__transition(hr_health *h, hr_health_state to) {
  hr_health_state from = h->state;
  if (from == to) return;
  h->state = to;
  h->frames_in_state = 0;
  h->recover_run = 0;
  hr__update_reason(h);
  if (h->cb) {
    hr_health_transition t = { from, to, h->sig.frame, h->causes, h->reason };
    h->cb(&t, h->cb_user);
  }
}

/* Enter (or restart) RECALIBRATING: the outputs have no comparable past any more. why replaces the
 * recorded cause when entering, or when override is set. From SUSPENDED only if from_suspended. */
static void hr__recalibrate(hr_health *h, const char *why, bool override, bool from_suspended) {
  h->prev_valid = false;
  h->settle_run = 0;
  h->not_settling = false;
  h->hist_lowconf = h->hist_incons = h->hist_sat = 0;
  h->run_lowconf = h->run_stuck = 0;
  h->causes &= ~(HR__SOFT_CAUSES | HR_HEALTH_CAUSE_NOT_SETTLING | HR_HEALTH_CAUSE_STUCK_OUTPUT);
  memset(h->rms_ema, 0, sizeof h->rms_ema);
  memset(h->ema_n, 0, sizeof h->ema_n);
  if (h->state == HR_HEALTH_FAILED || (h->state == HR_HEALTH_SUSPENDED && !from_suspended)) return;
  if (h->state != HR_HEALTH_RECALIBRATING || override) snprintf(h->recal_why, sizeof h->recal_why, "%s", why);
  if (h->state != HR_HEALTH_RECALIBRATING) {
    hr__transition(h, HR_HEALTH_RECALIBRATING);
  } else {
    h->frames_in_state = 0;
    hr__update_reason(h);
  }
}

void hr_health_reset(hr_health *h) {
  if (!h) return;
  hr_health_state from = h->state;
  hr__clear(h);
  if (from != HR_HEALTH_WARMING_UP && h->cb) {
    hr_health_transition t = { from, HR_HEALTH_WARMING_UP, 0, 0, h->reason };
    h->cb(&t, h->cb_user);
  }
}

/* ------------------------------------------------------------------------------------------- */
/* Input side. */

/* Where the input moved: moving[c] = 1 when the largest |luma change| among cell c and its 8
 * neighbours reaches motion_level (the neighbours cover a matte edge that lags or leads the cell's
 * own change by a cell). mtmp holds the per-cell change on entry. */
static void hr__motion_map(hr_health *h) {
  const int tw = h->p.thumb_width, th = h->p.thumb_height;
  const float lvl = h->p.motion_level;
  float *d = h->mtmp;
  int nmov = 0;
  /* rows: 3-max in place (keep the left neighbour's original value) */
  for (int y = 0; y < th; y++) {
    float *r = d + (size_t)y * tw, left = r[0];
    for (int x = 0; x < tw; x++) {
      const float c = r[x], right = x + 1 < tw ? r[x + 1] : c;
      float m = c > left ? c : left;
      r[x] = m > right ? m : right;
      left = c;
    }
  }
  /* columns: 3-max of the row maxima, thresholded */
  for (int y = 0; y < th; y++) {
    const float *up = d + (size_t)(y > 0 ? y - 1 : y) * tw, *mid = d + (size_t)y * tw;
    const float *dn = d + (size_t)(y + 1 < th ? y + 1 : y) * tw;
    uint8_t *o = h->moving + (size_t)y * tw;
    for (int x = 0; x < tw; x++) {
      const int mv = up[x] >= lvl || mid[x] >= lvl || dn[x] >= lvl;
      o[x] = (uint8_t)mv;
      nmov += mv;
    }
  }
  h->sig.moving_share = (float)nmov / (float)(tw * th);
}

/* Statistics of a new thumbnail: h->thumb holds it, h->thumb_prev the previous one (if have_thumb). */
static void hr__input_stats(hr_health *h, float hf, int64_t ts_ns) {
  const int n = h->p.thumb_width * h->p.thumb_height;
  const float lvl = h->p.frozen_level;
  double sum = 0.0, mad = 0.0;
  int dark = 0, bright = 0, changed = 0;
  bool same = h->have_thumb && hf == h->hf_prev;
  /* A camera's timestamps always advance: an input whose timestamp repeats (or goes back) is a
   * stalled stream re-sending a frame, whatever its pixels (fresh sensor noise, a lossy re-encode
   * of the stale picture). Timestamps of 0 mean "none given" and are not judged. */
  const bool ts_stuck = ts_ns != 0 && h->ts_prev != 0 && ts_ns <= h->ts_prev;
  h->ts_stuck_run = ts_stuck ? h->ts_stuck_run + 1 : 0;
  if (ts_ns != 0) h->ts_prev = ts_ns;   /* a jump back (a looped file) counts once, then advances again */
  for (int i = 0; i < n; i++) {
    float v = h->thumb[i];
    if (!(v >= 0.0f)) v = 0.0f;   /* also NaN */
    if (v > 1.0f) v = 1.0f;
    h->thumb[i] = v;
    sum += v;
    dark += v < h->p.black_level;
    bright += v > h->p.white_level;
    if (h->have_thumb) {
      const float pv = h->thumb_prev[i];
      const float d = fabsf(v - pv);
      mad += d;
      h->mtmp[i] = d;
      same = same && v == pv;
      changed += fabsf(v - h->anchor[i]) >= lvl;
    }
  }
  /* Near-repeat (issue 16, 5b): a stale picture re-sent with fresh sensor noise or through a lossy
   * encoder never repeats bit for bit, but almost no cell of its thumbnail moves away from the
   * run's first frame (the anchor). Judged against the anchor, not the previous frame, so that a
   * slow movement that stays under the level from frame to frame still accumulates and ends the
   * run. A frame that is not a near-repeat becomes the anchor of the next candidate run. */
  const bool near = h->have_thumb && lvl > 0.0f && changed <= (int)(h->p.frozen_share * (float)n);
  hr_health_signals *s = &h->sig;
  if (h->have_thumb) hr__motion_map(h);
  else s->moving_share = 0.0f;
  h->moving_fresh = h->have_thumb;
  s->input_frame++;
  s->ts_ns = ts_ns;
  s->luma_mean = (float)(sum / n);
  s->dark_share = (float)dark / n;
  s->bright_share = (float)bright / n;
  s->input_mad = h->have_thumb ? (float)(mad / n) : -1.0f;
  s->hf = hf;
  s->frozen_changed = h->have_thumb && lvl > 0.0f ? (float)changed / (float)n : -1.0f;
  s->frozen_run = same || near || ts_stuck ? s->frozen_run + 1 : 0;
  h->exact_run = same ? h->exact_run + 1 : 0;
  if (!near) memcpy(h->anchor, h->thumb, sizeof(float) * (size_t)n);
  h->run_black = s->dark_share >= 0.98f ? h->run_black + 1 : 0;
  h->run_white = s->bright_share >= 0.98f ? h->run_white + 1 : 0;
  h->run_noise = (hf >= 0.0f && hf > h->p.noise_hf) ? h->run_noise + 1 : 0;
  h->hf_prev = hf;
  h->have_thumb = true;
}

static void hr__swap_thumbs(hr_health *h) {
  float *t = h->thumb_prev;
  h->thumb_prev = h->thumb;
  h->thumb = t;
}

hr_status hr_health_observe_thumb(hr_health *h, const float *luma, int tw, int th, float hf, int64_t ts_ns) {
  if (!h) return HR_EINVAL;
  if (!luma || tw != h->p.thumb_width || th != h->p.thumb_height) {
    snprintf(h->err, sizeof h->err, "observe_thumb: thumbnail %dx%d does not match the monitor's %dx%d", tw, th,
             h->p.thumb_width, h->p.thumb_height);
    return HR_EINVAL;
  }
  const double t0 = hr__now_us();
  hr__swap_thumbs(h);
  memcpy(h->thumb, luma, sizeof(float) * (size_t)tw * th);
  hr__input_stats(h, hf, ts_ns);
  h->cost_in_us += hr__now_us() - t0;
  return HR_OK;
}

hr_status hr_health_observe_input(hr_health *h, const hr_frame *f) {
  if (!h) return HR_EINVAL;
  const double t0 = hr__now_us();
  float hf = -1.0f;
  /* Computed into the older buffer, which validation protects: it is written only on success. */
  hr_status st = hr_health_thumb_from_frame(f, h->thumb_prev, h->p.thumb_width, h->p.thumb_height, &hf);
  if (st != HR_OK) {
    char why[96] = "";
    if (st == HR_EINVAL && f) hr_frame_validate(f, why, sizeof why);
    snprintf(h->err, sizeof h->err, "observe_input: %s%s%s", hr_status_str(st), why[0] ? ": " : "", why);
    return st;
  }
  hr__swap_thumbs(h);
  hr__input_stats(h, hf, f->ts_ns);
  h->cost_in_us += hr__now_us() - t0;
  return HR_OK;
}

/* ------------------------------------------------------------------------------------------- */
/* Output side. */

/* The two full passes (alpha sum, state statistics) are memory-bound reductions; GCC and Clang
 * vectorise them through vector extensions (SSE2 / NEON), other compilers get the scalar loop. */
#if defined(__GNUC__) || defined(__clang__)
#define HR__VEC 1
#if defined(__SSE__)
#include <xmmintrin.h>
#elif defined(__ARM_NEON) && defined(__aarch64__)
#include <arm_neon.h>
#endif
typedef float hr__v4f __attribute__((vector_size(16)));
typedef int32_t hr__v4i __attribute__((vector_size(16)));
static inline hr__v4f hr__load4(const float *p) { hr__v4f v; memcpy(&v, p, sizeof v); return v; }
#endif

static int64_t hr__count_nonfinite(const float *x, size_t n) {
  int64_t c = 0;
  for (size_t i = 0; i < n; i++) c += !isfinite(x[i]);
  return c;
}

#ifdef HR__VEC
/* Lane-wise max; NaN in a is ignored (maxps / fmaxnm semantics). */
static inline hr__v4f hr__vmax(hr__v4f a, hr__v4f b) {
#if defined(__SSE__)
  return (hr__v4f)_mm_max_ps((__m128)a, (__m128)b);
#elif defined(__ARM_NEON) && defined(__aarch64__)
  return (hr__v4f)vmaxnmq_f32((float32x4_t)a, (float32x4_t)b);
#else
  const hr__v4i g = a > b;
  return (hr__v4f)((g & (hr__v4i)a) | (~g & (hr__v4i)b));
#endif
}
#endif

/* One pass over a state tensor: sum of squares (non-finite if any element is) and max x^2 over
 * every element; the count at |x| >= thr over the first 16 of every 64 elements (one cache line in
 * four: the saturated share is an estimate, the rest are exact). *nsampled gets that count's base. */
static void hr__state_pass(const float *x, size_t n, float thr, double *sumsq, float *maxabs, int64_t *nsat,
                           int64_t *nsampled) {
  double ss = 0.0;
  float m2 = 0.0f;
  int64_t sat = 0, sampled = 0;
  const float thr2 = thr * thr;
  size_t i = 0;
#ifdef HR__VEC
  hr__v4f mx = { 0 };
  const hr__v4f vthr = { thr2, thr2, thr2, thr2 };
  while (i + 64 <= n) {
    const size_t end = n - i > 8192 ? i + 8192 : i + ((n - i) & ~(size_t)63);
    hr__v4f s0 = { 0 }, s1 = { 0 }, s2 = { 0 }, s3 = { 0 };
    hr__v4i c = { 0 };
    for (; i < end; i += 64) {
      for (int j = 0; j < 16; j += 4) {   /* the sampled line: also count saturation */
        const hr__v4f v = hr__load4(x + i + j), q = v * v;
        s0 += q;
        mx = hr__vmax(q, mx);
        c -= (q >= vthr);
      }
      for (int j = 16; j < 64; j += 16) {
        const hr__v4f a = hr__load4(x + i + j), b = hr__load4(x + i + j + 4);
        const hr__v4f d = hr__load4(x + i + j + 8), e = hr__load4(x + i + j + 12);
        const hr__v4f qa = a * a, qb = b * b, qd = d * d, qe = e * e;
        s0 += qa; s1 += qb; s2 += qd; s3 += qe;
        mx = hr__vmax(hr__vmax(qa, qb), mx);
        mx = hr__vmax(hr__vmax(qd, qe), mx);
      }
      sampled += 16;
    }
    const hr__v4f t = (s0 + s1) + (s2 + s3);
    ss += (double)((t[0] + t[1]) + (t[2] + t[3]));
    sat += c[0] + c[1] + c[2] + c[3];
  }
  for (int k = 0; k < 4; k++) m2 = mx[k] > m2 ? mx[k] : m2;
#endif
  for (; i < n; i++) {   /* the tail (all of it without vector extensions), every element sampled */
    const float q = x[i] * x[i];
    ss += q;
    m2 = q > m2 ? q : m2;
    sat += q >= thr2;
    sampled++;
  }
  *sumsq = ss;
  *maxabs = sqrtf(m2);
  *nsat = sat;
  *nsampled = sampled;
}

/* Sample accumulators of one frame. */
typedef struct hr__acc {
  int64_t unc, fg, partial, inter, uni, nonfinite;
  int64_t xmov;               /* mask disagreements in cells where the input moved */
  double ent, dsum, ssum;
  float dmax;
  int k;                      /* samples so far = index into h->prev */
} hr__acc;

/* The motion-map row over alpha row y of an alpha height rows high; NULL without a map. */
static inline const uint8_t *hr__mrow(const hr_health *h, int y, int height, bool motion) {
  return motion ? h->moving + (int64_t)y * h->p.thumb_height / height * h->p.thumb_width : NULL;
}

/* Sample one alpha row at x = offx, offx + S, ...: confidence counts, and the temporal comparison
 * against (then replacement of) the previous frame's samples. mrow (NULL: no motion map) is the
 * row of h->moving that covers this alpha row; a mask disagreement is looked up there (only those
 * few samples pay for the lookup). */
static inline __attribute__((always_inline)) void hr__sample_row_any(hr_health *h, const float *row, const uint8_t *row8,
                                                                     int width, int offx, int S, bool temporal,
                                                                     const uint8_t *mrow, hr__acc *A) {
  const float lo = h->p.band_lo, hi = h->p.band_hi;
  float *prev = h->prev + A->k;
  int32_t unc = 0, fg_n = 0, partial = 0, inter = 0, uni = 0, nonfinite = 0, k = 0, xmov = 0;
  const int64_t tw = h->p.thumb_width;
  float ent = 0.0f, dsum = 0.0f, ssum = 0.0f, dmax = A->dmax;
  for (int x = offx; x < width; x += S, k++) {
    float a = row ? row[x] : (float)row8[x] / 255.0f;
    if (!(a >= 0.0f)) { nonfinite += !(a == a) || isinf(a); a = 0.0f; }  /* NaN, -Inf, < 0 */
    if (a > 1.0f) { nonfinite += isinf(a); a = 1.0f; }
    ssum += a;
    unc += (a > lo) & (a < hi);
    partial += (a > 0.0f) & (a < 1.0f);
    const int fg = a > 0.5f;
    fg_n += fg;
    ent += h->ent_lut[(int)(a * HR__ENT_BINS + 0.5f)];
    if (temporal) {
      const float p = prev[k];
      const float d = fabsf(a - p);
      dsum += d;
      dmax = d > dmax ? d : dmax;
      const int pfg = p > 0.5f;
      inter += fg & pfg;
      uni += fg | pfg;
      if (mrow && fg != pfg) xmov += mrow[(int64_t)x * tw / width];
    }
    prev[k] = a;
  }
  A->unc += unc; A->fg += fg_n; A->partial += partial; A->inter += inter; A->uni += uni; A->xmov += xmov;
  A->nonfinite += nonfinite;
  A->ent += ent; A->dsum += dsum; A->ssum += ssum;
  A->dmax = dmax;
  A->k += k;
}

static void hr__sample_row(hr_health *h, const float *row, int width, int offx, int S, bool temporal,
                           const uint8_t *mrow, hr__acc *A) {
  hr__sample_row_any(h, row, NULL, width, offx, S, temporal, mrow, A);
}
/* The same on the 8-bit matte (the value k / 255). */
static void hr__sample_row8(hr_health *h, const uint8_t *row, int width, int offx, int S, bool temporal,
                            const uint8_t *mrow, hr__acc *A) {
  hr__sample_row_any(h, NULL, row, width, offx, S, temporal, mrow, A);
}

static void hr__fill_verdict(const hr_health *h, hr_health_verdict *v, hr_health_action action, bool changed,
                             bool output_ok) {
  v->state = h->state;
  v->action = action;
  v->causes = h->causes;
  v->confidence = h->state == HR_HEALTH_FAILED ? 0.0f : h->confidence;
  v->output_ok = output_ok && h->state != HR_HEALTH_FAILED;
  v->changed = changed;
  v->frames_in_state = h->frames_in_state;
  v->reason = h->reason;
  v->signals = h->sig;
}

void hr_health_get(const hr_health *h, hr_health_verdict *out) {
  if (!out) return;
  memset(out, 0, sizeof *out);
  if (!h) { out->state = HR_HEALTH_FAILED; out->reason = "no monitor"; return; }
  hr__fill_verdict(h, out, HR_HEALTH_ACTION_NONE, false,
                   h->sig.alpha_nonfinite == 0 && h->sig.state_nonfinite == 0);
}

/* Score of a signal measured as a fraction r of its threshold: 1 up to a quarter of the threshold,
 * 0.5 at the threshold, 0 at twice the threshold, linear in between. */
static float hr__score(float r) {
  if (!(r > 0.25f)) return 1.0f;   /* also NaN */
  if (r < 1.0f) return 1.0f - 0.5f * (r - 0.25f) / 0.75f;
  if (r < 2.0f) return 0.5f - 0.5f * (r - 1.0f);
  return 0.0f;
}

/* Soft cause with a window: on at >= on_at flagged of the last win, off at <= off_at. */
static void hr__window_cause(hr_health *h, uint32_t bit, uint32_t hist, int on_at, int off_at) {
  int k = hr__popc(hist);
  if (k >= on_at) h->causes |= bit;
  else if (k <= off_at) h->causes &= ~bit;
}

static hr_status observe_output(hr_health *h, const float *alpha, const uint8_t *alpha8, int width, int height,
                                const float *const *state, const size_t *state_len, int n_state, const double *pre_sum,
                                int64_t pre_nonfinite, hr_health_verdict *out);

hr_status hr_health_observe_output(hr_health *h, const float *alpha, int width, int height,
                                   const float *const *state, const size_t *state_len, int n_state,
                                   hr_health_verdict *out) {
  return observe_output(h, alpha, NULL, width, height, state, state_len, n_state, NULL, 0, out);
}

hr_status hr__health_observe_output_scanned(hr_health *h, const float *alpha, int width, int height, double sum,
                                            int64_t nonfinite, const float *const *state, const size_t *state_len,
                                            int n_state, hr_health_verdict *out) {
  return observe_output(h, alpha, NULL, width, height, state, state_len, n_state, &sum, nonfinite, out);
}

hr_status hr__health_observe_output_u8(hr_health *h, const uint8_t *alpha8, int width, int height, int64_t byte_sum,
                                       int64_t nonfinite, const float *const *state, const size_t *state_len, int n_state,
                                       hr_health_verdict *out) {
  const double sum = (double)byte_sum / 255.0;
  return observe_output(h, NULL, alpha8, width, height, state, state_len, n_state, &sum, nonfinite, out);
}

bool hr__health_full_scan(const hr_health *h) { return h && h->p.full_scan; }

/* pre_sum: the caller made the full scan's pass (sum and NaN/Inf count of every pixel) while it
 * passed over the matte for its own reasons; only the sampled rows are read here. alpha8 (with
 * pre_sum; alpha NULL): the matte is the 8-bit one, its NaN/Inf count the caller's in every mode. */
static hr_status observe_output(hr_health *h, const float *alpha, const uint8_t *alpha8, int width, int height,
                                const float *const *state, const size_t *state_len, int n_state, const double *pre_sum,
                                int64_t pre_nonfinite, hr_health_verdict *out) {
  if (!h) return HR_EINVAL;
  if ((!alpha && !(alpha8 && pre_sum)) || width < 1 || height < 1 || width > 16384 || height > 16384 || n_state < 0 ||
      n_state > HR_HEALTH_MAX_STATE || (n_state > 0 && (!state || !state_len))) {
    snprintf(h->err, sizeof h->err, "observe_output: bad arguments (alpha %p %dx%d, %d state tensors, max %d)",
             (const void *)alpha, width, height, n_state, HR_HEALTH_MAX_STATE);
    return HR_EINVAL;
  }
  for (int i = 0; i < n_state; i++)
    if (state_len[i] > 0 && !state[i]) {
      snprintf(h->err, sizeof h->err, "observe_output: state tensor %d is NULL", i);
      return HR_EINVAL;
    }
  const double t0 = hr__now_us();
  const hr_health_params *P = &h->p;
  hr_health_signals *s = &h->sig;
  const hr_health_state state_before = h->state;
  hr_health_action action = HR_HEALTH_ACTION_NONE;

  s->frame++;
  h->frames_in_state++;

  /* A new alpha size is a replan the caller did not report. */
  if (width != h->alpha_w || height != h->alpha_h) {
    char why[96];
    snprintf(why, sizeof why, "alpha size change %dx%d -> %dx%d", h->alpha_w, h->alpha_h, width, height);
    hr__set_geometry(h, width, height);
    if (h->state != HR_HEALTH_WARMING_UP) hr__recalibrate(h, why, true, false);
  }
  const bool temporal = h->prev_valid && !h->pend_cut;
  const bool use_map = temporal && h->moving_fresh;   /* motion map of this frame's input */
  h->moving_fresh = false;

  /* --- alpha: the sampled rows, and with full_scan every pixel's sum and NaN/Inf count (the
   * caller's when it passed over the matte itself; else the kernels' one pass, hr__k_alpha_scan) --- */
  const size_t npix = (size_t)width * height;
  const int S = h->stride;
  const int offx = S / 2 < width - 1 ? S / 2 : width - 1, offy = S / 2 < height - 1 ? S / 2 : height - 1;
  hr__acc acc;
  memset(&acc, 0, sizeof acc);
  double a_sum = 0.0;
  if (alpha8) {
    for (int y = offy; y < height; y += S)
      hr__sample_row8(h, alpha8 + (size_t)y * width, width, offx, S, temporal, hr__mrow(h, y, height, use_map), &acc);
    a_sum = *pre_sum;
  } else {
    for (int y = offy; y < height; y += S)
      hr__sample_row(h, alpha + (size_t)y * width, width, offx, S, temporal, hr__mrow(h, y, height, use_map), &acc);
  }
  int64_t a_nonfinite = 0;
  if (alpha8) {
    a_nonfinite = pre_nonfinite;   /* the bytes' sum is finite: the count is the caller's */
  } else if (P->full_scan) {
    if (pre_sum) a_sum = *pre_sum, a_nonfinite = pre_nonfinite;
    else a_nonfinite = hr__k_alpha_scan(NULL, alpha, NULL, (int64_t)npix, &a_sum);
    if (isfinite(a_sum)) a_nonfinite = 0;
  }
  const int k = acc.k;
  const int64_t n_inter = acc.inter, n_union = acc.uni, n_partial = acc.partial;
  const float dmax = acc.dmax;
  const double dsum = acc.dsum;
  const int ns = k > 0 ? k : 1;
  h->prev_valid = true;
  s->sample_stride = S;
  s->n_samples = k;
  s->alpha_nonfinite = P->full_scan || alpha8 ? a_nonfinite : acc.nonfinite;
  s->alpha_mean = P->full_scan && a_nonfinite == 0 ? (float)(a_sum / (double)npix) : (float)(acc.ssum / ns);
  s->uncertain_share = (float)acc.unc / ns;
  s->entropy = (float)(acc.ent / ns);
  s->fg_share = (float)acc.fg / ns;

  /* --- input-derived allowances --- */
  const float in_mad = s->input_mad;   /* -1 without input observation */
  const float motion = in_mad >= 0.0f ? in_mad : 0.02f;
  s->mad_allow = P->mad_base + P->mad_gain * motion;
  float iou_allow = P->iou_base - P->iou_gain * motion;
  s->iou_allow = iou_allow < 0.2f ? 0.2f : iou_allow;
  bool incons = false, iou_judged = false;
  if (temporal) {
    s->alpha_mad = (float)(dsum / ns);
    s->alpha_maxdiff = dmax;
    iou_judged = n_union >= (ns + 199) / 200;
    s->mask_iou = n_union > 0 ? (float)n_inter / (float)n_union : 1.0f;
    /* Disagreements where the input moved are motion, not inconsistency: left out of the union.
     * No overlap at all is never consistent (a mask that vanished or jumped). */
    const int64_t still_union = n_union - acc.xmov;
    s->mask_iou_still = n_union == 0 ? 1.0f : n_inter == 0 ? 0.0f : (float)n_inter / (float)still_union;
    incons = s->alpha_mad > s->mad_allow || (iou_judged && s->mask_iou_still < s->iou_allow);
  } else {
    s->alpha_mad = s->alpha_maxdiff = s->mask_iou = s->mask_iou_still = -1.0f;
  }

  /* --- state --- */
  s->n_state = n_state;
  s->state_nonfinite = 0;
  bool runaway = false, state_sat = false;
  int worst_nf = -1, worst_run = -1;
  int64_t worst_nf_count = 0;
  const float bound = P->state_bound;
  const float sat_thr = bound > 0.0f ? 0.99f * bound : INFINITY;
  for (int i = 0; i < n_state; i++) {
    const size_t n = state_len[i];
    double ss = 0.0;
    float mx = 0.0f;
    int64_t nsat = 0, nsampled = 0, nf = 0;
    if (n) hr__state_pass(state[i], n, sat_thr, &ss, &mx, &nsat, &nsampled);
    if (!isfinite(ss)) {
      nf = hr__count_nonfinite(state[i], n);
      if (nf == 0) runaway = true, worst_run = i;   /* finite values whose squares overflow */
    }
    s->state_nonfinite += nf;
    if (nf > worst_nf_count) worst_nf_count = nf, worst_nf = i;
    const double rms = n && isfinite(ss) ? sqrt(ss / (double)n) : 0.0;
    s->state_rms[i] = (float)rms;
    s->state_maxabs[i] = mx;
    s->state_sat[i] = nsampled ? (float)nsat / (float)nsampled : 0.0f;
    if (s->state_sat[i] > P->state_sat_max) state_sat = true;
    if (bound > 0.0f && mx > 1.05f * bound) runaway = true, worst_run = i;
    /* An RMS jump counts once the average has 10 frames, not on a reported scene cut, and (for a
     * bounded state) only when the RMS is above half the bound: a jump from tiny to small is not a
     * runaway. */
    if (h->ema_n[i] >= 10 && !h->pend_cut && rms > P->runaway_factor * h->rms_ema[i] &&
        rms > (bound > 0.0f ? 0.5 * bound : 1e-3))
      runaway = true, worst_run = i;
    s->state_drift[i] = h->ema_n[i] > 0 && h->rms_ema[i] > 0.0 ? (float)(rms / h->rms_ema[i] - 1.0) : 0.0f;
    if (nf == 0 && isfinite(ss)) {
      h->rms_ema[i] = h->ema_n[i] == 0 ? rms : 0.95 * h->rms_ema[i] + 0.05 * rms;
      h->ema_n[i]++;
    }
  }
  for (int i = n_state; i < HR_HEALTH_MAX_STATE; i++)
    s->state_rms[i] = s->state_drift[i] = s->state_sat[i] = s->state_maxabs[i] = 0.0f;
  const bool nonfinite = s->alpha_nonfinite > 0 || s->state_nonfinite > 0;

  /* --- per-frame flags --- */
  const bool lowconf = s->uncertain_share > P->uncertain_max;
  const int partial_min = ns / 1000 > 1 ? ns / 1000 : 1;
  /* Stuck: the samples are bit-for-bit those of the previous frame (on a non-trivial alpha) while
   * the input moves, globally (input_mad) or anywhere (a cell of the motion map: small people in a
   * wide shot barely move the mean). A frame whose input is still neither adds to the run nor
   * clears it: an unchanged alpha is expected there. */
  const bool a_same = temporal && in_mad >= 0.0f && dmax <= P->stuck_eps && n_partial >= partial_min;
  const bool in_moves = in_mad >= P->stuck_input_min || (use_map && s->moving_share > 0.0f);
  const bool stuck = a_same && in_moves;
  uint32_t flags = 0;
  if (nonfinite) flags |= HR_HEALTH_CAUSE_NONFINITE;
  if (runaway) flags |= HR_HEALTH_CAUSE_STATE_RUNAWAY;
  if (lowconf) flags |= HR_HEALTH_CAUSE_LOW_CONFIDENCE;
  if (incons) flags |= HR_HEALTH_CAUSE_INCONSISTENT;
  if (stuck) flags |= HR_HEALTH_CAUSE_STUCK_OUTPUT;
  if (h->run_black) flags |= HR_HEALTH_CAUSE_INPUT_BLACK;
  if (h->run_white) flags |= HR_HEALTH_CAUSE_INPUT_SATURATED;
  if (h->run_noise) flags |= HR_HEALTH_CAUSE_INPUT_NOISE;
  if (s->frozen_run) flags |= HR_HEALTH_CAUSE_INPUT_FROZEN;
  if (state_sat) flags |= HR_HEALTH_CAUSE_STATE_SATURATED;
  if (h->pend_depth) flags |= HR_HEALTH_CAUSE_DEPTH_MISALIGNED;
  s->flags = flags;

  /* --- confidence: per-frame quality, smoothed --- */
  float q = hr__score(s->uncertain_share / P->uncertain_max);
  if (temporal) {
    float qc = hr__score(s->alpha_mad / s->mad_allow);
    if (iou_judged) {
      const float qi = hr__score((1.0f - s->mask_iou_still) / (1.0f - s->iou_allow));
      qc = qi < qc ? qi : qc;
    }
    q = qc < q ? qc : q;
  }
  if (h->run_black || h->run_white || h->run_noise || s->frozen_run >= 2 || stuck) q = 0.0f;
  if (nonfinite || runaway) q = 0.0f;
  h->confidence = h->conf_init ? 0.7f * h->confidence + 0.3f * q : q;
  h->conf_init = true;

  /* --- causes: sustain and hysteresis --- */
  h->pend_depth = false;
  h->pend_cut = false;
  h->hist_depth = ((h->hist_depth << 1) | ((flags & HR_HEALTH_CAUSE_DEPTH_MISALIGNED) ? 1u : 0u)) & ((1u << HR__DEPTH_WIN) - 1);
  s->depth_miss_30 = hr__popc(h->hist_depth);
  h->run_stuck = stuck ? h->run_stuck + 1 : a_same ? h->run_stuck : 0;
  const bool judge_soft = h->state == HR_HEALTH_HEALTHY || h->state == HR_HEALTH_DEGRADED;
  /* Output quality on a bad input (black, saturated, noise, frozen) is that input's consequence,
   * already named by its cause: those frames count as unflagged in the soft windows, so the soft
   * causes do not outlast the input fault by their window. */
  const bool input_bad = h->run_black || h->run_white || h->run_noise || s->frozen_run;
  const uint32_t wmask = (1u << HR__SOFT_WIN) - 1;
  if (judge_soft) {
    h->hist_lowconf = ((h->hist_lowconf << 1) | (lowconf && !input_bad)) & wmask;
    h->hist_incons = ((h->hist_incons << 1) | (incons && !input_bad)) & wmask;
    h->hist_sat = ((h->hist_sat << 1) | (state_sat && !input_bad)) & wmask;
  } else {
    h->hist_lowconf = h->hist_incons = h->hist_sat = 0;
  }
  h->run_lowconf = lowconf ? h->run_lowconf + 1 : 0;
  uint32_t c = h->causes & (HR__SOFT_CAUSES | HR_HEALTH_CAUSE_DEPTH_MISALIGNED);
  h->causes = c;
  hr__window_cause(h, HR_HEALTH_CAUSE_LOW_CONFIDENCE, h->hist_lowconf, 8, 2);
  hr__window_cause(h, HR_HEALTH_CAUSE_INCONSISTENT, h->hist_incons, 5, 1);
  hr__window_cause(h, HR_HEALTH_CAUSE_STATE_SATURATED, h->hist_sat, 8, 2);
  hr__window_cause(h, HR_HEALTH_CAUSE_DEPTH_MISALIGNED, h->hist_depth, P->depth_miss_max, 1);
  if (h->run_black >= P->input_frames) h->causes |= HR_HEALTH_CAUSE_INPUT_BLACK;
  if (h->run_white >= P->input_frames) h->causes |= HR_HEALTH_CAUSE_INPUT_SATURATED;
  if (h->run_noise >= P->input_frames) h->causes |= HR_HEALTH_CAUSE_INPUT_NOISE;
  if (s->frozen_run >= P->frozen_frames) h->causes |= HR_HEALTH_CAUSE_INPUT_FROZEN;
  if (h->run_stuck >= P->input_frames) h->causes |= HR_HEALTH_CAUSE_STUCK_OUTPUT;
  if (h->gov_shed) h->causes |= HR_HEALTH_CAUSE_GOV_SHED;
  if (h->mem_on) h->causes |= HR_HEALTH_CAUSE_MEMORY_PRESSURE;
  if (nonfinite) h->causes |= HR_HEALTH_CAUSE_NONFINITE;
  if (runaway) h->causes |= HR_HEALTH_CAUSE_STATE_RUNAWAY;

  /* Settling: consecutive judged frames that are consistent and confident. */
  if (temporal) h->settle_run = (!incons && !lowconf && !nonfinite && !runaway) ? h->settle_run + 1 : 0;
  if (h->not_settling && h->settle_run >= P->settle_frames) h->not_settling = false;
  if (h->not_settling) h->causes |= HR_HEALTH_CAUSE_NOT_SETTLING;

  /* --- recovery decisions --- */
  if ((nonfinite || runaway) && h->state != HR_HEALTH_FAILED) {
    char nb[32], what[128];
    if (nonfinite) {
      if (worst_nf >= 0)
        snprintf(what, sizeof what, "NaN/Inf in %s (%lld values%s)", hr__state_name_i(h, worst_nf, nb, sizeof nb),
                 (long long)worst_nf_count, s->alpha_nonfinite ? ", and in alpha" : "");
      else
        snprintf(what, sizeof what, "NaN/Inf in alpha (%lld values)", (long long)s->alpha_nonfinite);
    } else {
      snprintf(what, sizeof what, "runaway state %s (rms %.3g, max |x| %.3g)",
               hr__state_name_i(h, worst_run, nb, sizeof nb), s->state_rms[worst_run], s->state_maxabs[worst_run]);
    }
    int in_window = 0;
    const int n_ring = h->n_resets < HR__FAIL_RING ? h->n_resets : HR__FAIL_RING;
    for (int i = 0; i < n_ring; i++)
      if (s->frame - h->resets[i] < P->fail_window_frames) in_window++;
    if (in_window >= P->fail_resets) {
      snprintf(h->fail_reason, sizeof h->fail_reason, "failed: %s again after %d state resets within %d frames",
               what, in_window, P->fail_window_frames);
      s->resets_in_window = in_window;
      hr__transition(h, HR_HEALTH_FAILED);
    } else {
      h->resets[h->n_resets % HR__FAIL_RING] = s->frame;
      h->n_resets++;
      s->resets_in_window = in_window + 1;
      action = HR_HEALTH_ACTION_RESET_STATE;
      char why[HR_HEALTH_REASON_LEN];
      snprintf(why, sizeof why, "%s (reset %d of %d allowed in %d frames)", what, in_window + 1, P->fail_resets,
               P->fail_window_frames);
      hr__recalibrate(h, why, true, false);
    }
  } else {
    int in_window = 0;
    const int n_ring = h->n_resets < HR__FAIL_RING ? h->n_resets : HR__FAIL_RING;
    for (int i = 0; i < n_ring; i++)
      if (s->frame - h->resets[i] < P->fail_window_frames) in_window++;
    s->resets_in_window = in_window;
    const uint32_t any = h->causes;
    switch (h->state) {
      case HR_HEALTH_WARMING_UP:
        if (any & (HR__INPUT_CAUSES | HR_HEALTH_CAUSE_DEPTH_MISALIGNED | HR_HEALTH_CAUSE_GOV_SHED | HR_HEALTH_CAUSE_MEMORY_PRESSURE))
          hr__transition(h, HR_HEALTH_DEGRADED);
        else if (h->frames_in_state >= P->warmup_frames)
          hr__transition(h, any ? HR_HEALTH_DEGRADED : HR_HEALTH_HEALTHY);
        break;
      case HR_HEALTH_HEALTHY:
        if (any) hr__transition(h, HR_HEALTH_DEGRADED);
        break;
      case HR_HEALTH_DEGRADED:
        h->recover_run = any ? 0 : h->recover_run + 1;
        if (h->recover_run >= P->recover_frames) hr__transition(h, HR_HEALTH_HEALTHY);
        break;
      case HR_HEALTH_RECALIBRATING:
        if (any & HR__INPUT_CAUSES) {
          hr__transition(h, HR_HEALTH_DEGRADED);
        } else if (h->settle_run >= P->settle_frames) {
          hr__transition(h, any ? HR_HEALTH_DEGRADED : HR_HEALTH_HEALTHY);
        } else if (h->frames_in_state >= P->settle_timeout_frames) {
          h->not_settling = true;
          h->causes |= HR_HEALTH_CAUSE_NOT_SETTLING;
          hr__transition(h, HR_HEALTH_DEGRADED);
        }
        break;
      case HR_HEALTH_SUSPENDED:
      case HR_HEALTH_FAILED:
        break;
    }
  }
  hr__update_reason(h);
  const double t1 = hr__now_us();
  s->cost_us = h->cost_in_us + (t1 - t0);
  h->cost_in_us = 0.0;
  if (out) hr__fill_verdict(h, out, action, h->state != state_before, !nonfinite);
  return HR_OK;
}

/* ------------------------------------------------------------------------------------------- */
/* Events. */

void hr_health_observe_memory(hr_health *h, int64_t headroom_bytes, int64_t low_bytes, int64_t hysteresis_bytes) {
  if (!h || headroom_bytes == HR_HEALTH_MEM_UNMEASURED || low_bytes <= 0) return;
  if (hysteresis_bytes < 0) hysteresis_bytes = 0;
  h->mem_headroom = headroom_bytes;
  h->mem_low = low_bytes;
  if (headroom_bytes < low_bytes) h->mem_on = true;
  else if (headroom_bytes >= low_bytes + hysteresis_bytes) h->mem_on = false;
}

hr_status hr_health_note_event(hr_health *h, hr_health_event ev, const char *detail) {
  if (!h) return HR_EINVAL;
  const char *d = detail ? detail : "";
  switch (ev) {
    case HR_HEALTH_EVENT_STATE_RESET:
    case HR_HEALTH_EVENT_REPLANNED: {
      char why[96];
      snprintf(why, sizeof why, "%s%s%s", ev == HR_HEALTH_EVENT_REPLANNED ? "replan" : "state reset",
               d[0] ? ": " : "", d);
      if (h->state == HR_HEALTH_WARMING_UP) {   /* nothing to settle from yet */
        h->prev_valid = false;
        memset(h->ema_n, 0, sizeof h->ema_n);
        break;
      }
      hr__recalibrate(h, why, false, false);
      break;
    }
    case HR_HEALTH_EVENT_SCENE_CUT:
      h->pend_cut = true;
      break;
    case HR_HEALTH_EVENT_GOV_SUSPEND:
      snprintf(h->susp_detail, sizeof h->susp_detail, "%s", d);
      if (h->state != HR_HEALTH_FAILED) hr__transition(h, HR_HEALTH_SUSPENDED);
      break;
    case HR_HEALTH_EVENT_GOV_RESUME:
      if (h->state == HR_HEALTH_SUSPENDED) hr__recalibrate(h, "resume from suspension", true, true);
      break;
    case HR_HEALTH_EVENT_GOV_SHED:
      h->gov_shed = true;
      snprintf(h->gov_detail, sizeof h->gov_detail, "%s", d);
      break;
    case HR_HEALTH_EVENT_GOV_RESTORED:
      h->gov_shed = false;
      h->gov_detail[0] = 0;
      h->causes &= ~HR_HEALTH_CAUSE_GOV_SHED;
      break;
    case HR_HEALTH_EVENT_DEPTH_MISALIGNED:
      h->pend_depth = true;
      break;
    default:
      snprintf(h->err, sizeof h->err, "note_event: unknown event %d", (int)ev);
      return HR_EINVAL;
  }
  hr__update_reason(h);
  return HR_OK;
}

void hr_health_note_session_events(hr_health *h, uint32_t bits) {
  if (!h) return;
  if (bits & HR_EVENT_REPLANNED) hr_health_note_event(h, HR_HEALTH_EVENT_REPLANNED, NULL);
  else if (bits & HR_EVENT_STATE_RESET) hr_health_note_event(h, HR_HEALTH_EVENT_STATE_RESET, NULL);
  if (bits & HR_EVENT_SCENE_CUT) hr_health_note_event(h, HR_HEALTH_EVENT_SCENE_CUT, NULL);
}
