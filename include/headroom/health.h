/* headroom health API: a per-session monitor that turns cheap per-frame signals into a health state,
 * a reason and a recovery action, plus the fault injector that tests and demos use to exercise it. */
#ifndef HEADROOM_HEALTH_H
#define HEADROOM_HEALTH_H
#include "headroom/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------------
 * Session health: no silent degradation. This comment is the reference for the state machine.
 *
 * One hr_health monitor watches one stream. Per frame the session owner makes these calls:
 *
 *   hr_health_observe_input(h, &frame);                 // before or after the push; reads a
 *                                                       // 64x48 luma thumbnail of the input
 *   hr_health_note_session_events(h, out.events);       // HR_EVENT_* bits of this frame's outputs
 *   hr_health_observe_output(h, out.alpha, out.width, out.height, state, state_len, n_state, &v);
 *   if (v.action == HR_HEALTH_ACTION_RESET_STATE) hr_session_reset(s);   // before the next push
 *   if (v.state == HR_HEALTH_FAILED) { rebuild the session (at least hr_session_reset(s));
 *                                      hr_health_reset(h); }           // resets did not help
 *
 * plus hr_health_observe_memory() with the governor's measured headroom every frame (the monitor
 * names memory pressure itself, whatever is done about it), and hr_health_note_event() whenever
 * the governor suspends, resumes or sheds (memory pressure
 * that suspends inference: _GOV_SUSPEND, then _GOV_RESUME once inference runs again), or a depth
 * frame could not be aligned. observe_output is the clock: the state machine advances once per
 * call. The monitor allocates everything at create (thumbnails, motion map, subsampled previous
 * alpha) and never allocates afterwards; it takes no locks. One thread at a time per monitor;
 * monitors are independent.
 *
 * Per-frame signals (hr_health_signals) and what they cost:
 *   input     thumbnail of tw x th cells (default 64 x 48), each the mean of a 4 x 4 grid of
 *             points spread over the cell, plus the mean |difference| of each point and its right
 *             neighbour at full resolution ("hf", pixel-scale high-frequency energy: ~0.011 on the
 *             bedroom camera frames, ~0.018 on vtest.avi, 0.22 (RGB) to 0.38 (gray) on uniform
 *             noise). 2 x 16 x tw x th pixel reads, whatever the frame size (~100k at the
 *             defaults). Gives: mean luma, dark / bright cell shares (black / saturated frames),
 *             mean |luma_t - luma_t-1| (input_mad: the global motion allowance), hf (noise),
 *             and the motion map: a cell "moves" when the largest |luma change| among it and its
 *             8 neighbours reaches motion_level [0.02]
 *             (moving_share = the share of such cells; a mean of 16 points keeps sensor and codec
 *             noise well below it: on vtest.avi, a fixed camera, the median cell changes by
 *             0.0003 a frame and the 90th percentile by 0.003).
 *   output    alpha is read once, row by row: every row is summed (a NaN or Inf anywhere makes the
 *             sum non-finite; only then a second pass counts them), and every stride-th row is also
 *             sampled at every stride-th pixel (stride: the smallest that keeps at most 43200
 *             samples, i.e. 240 x 180; 8 at 1920 x 1440) for everything else: uncertain share
 *             (band_lo < a < band_hi), mean binary entropy (table lookup), foreground share
 *             (a > 0.5), mean and max |a_t - a_t-1|, and the a > 0.5 masks against the previous
 *             frame's: IoU, and IoU "where the input is still" (mask_iou_still: disagreements in
 *             cells of the motion map are left out of the union; only disagreeing samples look
 *             the map up; the alpha is taken to show the observed frame's whole field of view).
 *             The subsample is statistically fine for these area fractions: at 43200 samples the
 *             standard error of a share is below 0.25 percentage points, far inside every
 *             threshold; "stuck" needs all samples unchanged.
 *   state     one full pass per state tensor (sum of squares and max x^2 over every element; the
 *             count at the bound over one cache line in four) gives the RMS, NaN/Inf (the sum of
 *             squares turns non-finite; only then a second pass counts them), max |x|, the
 *             saturated share (estimated from a quarter of the elements) and the drift of the RMS
 *             against its running average (EMA, factor 0.05).
 * Measured cost per frame at 1920x1440 alpha + RVM's state at ratio 0.25 (processing 480x360,
 * 1.06M floats), one core, medians of 40 frames (tests/unit/test_health_monitor.c prints them):
 *   observe_input   0.15-0.21 ms from NV12, 0.25-0.32 ms from RGB24.
 *   observe_output  0.55-0.76 ms on the 2-core build VM; memory-bound (11 MB of alpha and 4.2 MB of
 *                   state are read once); full_scan = false saves 0.2-0.3 ms (alpha NaN/Inf then
 *                   judged on the samples only).
 * NV12 input + output: 0.6-1.0 ms, under 1% of a 100 ms frame. No allocation (tested by counting
 * malloc).
 *
 * Why the masks are compared "where the input is still": on real RVM output the plain IoU of
 * consecutive masks follows motion, not quality. sam2-bedroom (children jumping, 256x144): IoU
 * 0.62-0.75 (median 0.75); vtest.avi (people ~30x80 px walking a few px a frame at 10 fps):
 * 0.18-0.59 (median 0.56 at 768x576), all of it at the moving edges of small masks. Leaving out
 * the disagreements where the input moved gives 0.96-1.00 on every frame of both clips, while a
 * matte that flickers where the input is still, or vanishes (masks that no longer overlap score 0
 * whatever the motion), still scores far below the floor.
 *
 * States and transitions (thresholds are hr_health_params fields, defaults in brackets; checked
 * on RVM's output on sam2-bedroom (frames and mp4, 200 each), vtest.avi (400 frames at 384x288
 * and 768x576): no frame after warm-up leaves HEALTHY; each injected fault is flagged within 3
 * frames and HEALTHY returns 9-10 frames after it ends). The reason (hr_health_reason, the
 * verdict's reason, the callback's) says, per state:
 *   WARMING_UP     the first warmup_frames [10] outputs after create / hr_health_reset(): soft
 *                  output signals (confidence, consistency, state saturation) are measured but not
 *                  judged, the recurrent state is still converging. Hard evidence still counts:
 *                  bad input or stuck output -> DEGRADED, NaN/Inf -> RECALIBRATING (+ reset).
 *                  At the end: -> DEGRADED if any cause is on, else -> HEALTHY.
 *                  Reason: "warming up: frame 3 of 10".
 *   HEALTHY        -> DEGRADED as soon as any cause turns on (each cause has its own sustain rule,
 *                  see hr_health_cause: that is the hysteresis). Reason: "healthy".
 *   DEGRADED       -> HEALTHY after recover_frames [10] consecutive frames with no cause on.
 *                  Reason: the causes on, most specific first, the first with its numbers ("input
 *                  black: 100% of the frame below luma 0.06 for 3 frames; also: stuck-output"), or
 *                  once none is on "recovering: no cause for 4 of 10 frames".
 *   RECALIBRATING  entered on HR_HEALTH_EVENT_STATE_RESET, _REPLANNED, _GOV_RESUME, a change of
 *                  alpha size, and whenever the monitor itself asks for a reset. Leaves when the
 *                  outputs have settled: settle_frames [8] consecutive frames that are temporally
 *                  consistent and not low-confidence -> HEALTHY (or DEGRADED if a cause is on).
 *                  Bad input or stuck output -> DEGRADED at once; not settled after
 *                  settle_timeout_frames [90] -> DEGRADED ("not settling"). Reason: "recalibrating
 *                  after NaN/Inf in r1 (2304 values) (reset 1 of 3 allowed in 300 frames):
 *                  consistent for 5 of 8 frames".
 *   SUSPENDED      between HR_HEALTH_EVENT_GOV_SUSPEND and _GOV_RESUME (from any state but
 *                  FAILED); resume -> RECALIBRATING. Outputs observed while suspended are measured
 *                  (and NaN/Inf still asks for a reset) but change no state. Reason: "suspended by
 *                  the memory governor: DETAIL" (the event's detail).
 *   FAILED         terminal: the monitor needed a reset for NaN/Inf or a runaway state more than
 *                  fail_resets [3] times within fail_window_frames [300] frames. Only
 *                  hr_health_reset() leaves it (-> WARMING_UP), after the caller rebuilt the
 *                  session: the monitor asks for no more resets, so a poisoned state stays poisoned
 *                  until then. Outputs are flagged unusable. Reason: "failed: NaN/Inf in r4 (144
 *                  values) again after 3 state resets within 300 frames".
 * Recovery action: NaN/Inf in alpha or any state tensor, or a runaway state (an element beyond
 * state_bound x 1.05, or an RMS above runaway_factor [4] x its running average and above half the
 * bound; not on a scene-cut frame) -> the verdict's action is HR_HEALTH_ACTION_RESET_STATE on that
 * same frame and the state goes RECALIBRATING; the caller zeroes the recurrent state before the
 * next push and notes HR_HEALTH_EVENT_STATE_RESET (or passes the session's HR_EVENT_STATE_RESET
 * bit through hr_health_note_session_events).
 * Soft evidence on bad input: while the input is black, saturated, noise or frozen, the soft
 * windows (low confidence, inconsistency, state saturation) record the frame as unflagged: the
 * output's trouble is that input's consequence, named by its own cause, and must not outlast it.
 * ------------------------------------------------------------------------------------------- */

typedef struct hr_health hr_health;

typedef enum hr_health_state {
  HR_HEALTH_WARMING_UP = 0,
  HR_HEALTH_HEALTHY,
  HR_HEALTH_DEGRADED,
  HR_HEALTH_RECALIBRATING,
  HR_HEALTH_SUSPENDED,
  HR_HEALTH_FAILED,
} hr_health_state;

/* "warming-up", "healthy", "degraded", "recalibrating", "suspended", "failed"; "unknown" otherwise.
 * Static strings. */
HR_API const char *hr_health_state_name(hr_health_state s);

/* What the caller must do before the next frame. */
typedef enum hr_health_action {
  HR_HEALTH_ACTION_NONE = 0,
  HR_HEALTH_ACTION_RESET_STATE = 1,  /* zero the recurrent state (hr_session_reset) */
} hr_health_action;

/* Causes: why the monitor is not HEALTHY. Bits of hr_health_verdict.causes. Sustain rules (the
 * hysteresis) in brackets; "W of N" = at least W flagged frames among the last N.
 *   NONFINITE        NaN/Inf in alpha or state [same frame] -> reset
 *   STATE_RUNAWAY    state element beyond the bound, or RMS jump [same frame] -> reset
 *   LOW_CONFIDENCE   uncertain share > uncertain_max [on: 8 of 10, off: <= 2 of 10]
 *   INCONSISTENT     mean |da| > mad_base + mad_gain x input_mad, or mask_iou_still < iou_base -
 *                    iou_gain x input_mad, floor 0.2 (judged when the union of the masks is >= 0.5%
 *                    of the samples; without input observation mask_iou_still is the plain IoU)
 *                    [on: 5 of 10, off: <= 1]
 *   STUCK_OUTPUT     max |da| <= stuck_eps on a non-trivial alpha (some samples strictly between 0
 *                    and 1) while the input moves: input_mad >= stuck_input_min or any cell of the
 *                    motion map [input_frames [3] such frames; a frame with an unchanged alpha and
 *                    a still input neither counts nor breaks the run]
 *   INPUT_BLACK      >= 98% of thumbnail cells below black_level [input_frames in a row]
 *   INPUT_SATURATED  >= 98% of cells above white_level [input_frames in a row]
 *   INPUT_FROZEN     thumbnail and hf bit-identical to the previous frame's; or a near-repeat: at
 *                    most frozen_share [0.2%] of the cells differ by >= frozen_level [0.03] from
 *                    the first frame of the run (a stale picture re-sent with fresh sensor noise
 *                    or through a lossy encoder: +-2 noise and a JPEG re-encode at q50 change at
 *                    most 1 cell of 3072 by that much; the stillest stretch of vtest.avi, people
 *                    far away walking slowly, changes >= 11 cells within 3 frames); or a
 *                    timestamp that does not advance (a stalled stream re-sending a frame,
 *                    whatever its pixels); on frozen_frames [3] consecutive frames. A truly
 *                    motionless scene whose thumbnail moves less than that is indistinguishable
 *                    from a frozen camera by its pixels and is flagged too. Timestamps of 0 are
 *                    not judged.
 *   INPUT_NOISE      hf > noise_hf [input_frames in a row]
 *   STATE_SATURATED  some tensor has > state_sat_max of its elements at |x| >= 0.99 bound
 *                    [on: 8 of 10, off: <= 2 of 10]
 *   DEPTH_MISALIGNED HR_HEALTH_EVENT_DEPTH_MISALIGNED on >= depth_miss_max [5] of the last 30
 *                    frames [off: <= 1 of 30]
 *   GOV_SHED         governor runs at reduced quality (between _GOV_SHED and _GOV_RESTORED)
 *   NOT_SETTLING     RECALIBRATING timed out
 * Input-side causes need hr_health_observe_input(); without it they never fire, stuck output is
 * not judged, the motion allowance assumes input_mad = 0.02 and the masks are compared whole. */
typedef enum hr_health_cause {
  HR_HEALTH_CAUSE_NONFINITE        = 1u << 0,
  HR_HEALTH_CAUSE_STATE_RUNAWAY    = 1u << 1,
  HR_HEALTH_CAUSE_LOW_CONFIDENCE   = 1u << 2,
  HR_HEALTH_CAUSE_INCONSISTENT     = 1u << 3,
  HR_HEALTH_CAUSE_STUCK_OUTPUT     = 1u << 4,
  HR_HEALTH_CAUSE_INPUT_BLACK      = 1u << 5,
  HR_HEALTH_CAUSE_INPUT_SATURATED  = 1u << 6,
  HR_HEALTH_CAUSE_INPUT_FROZEN     = 1u << 7,
  HR_HEALTH_CAUSE_INPUT_NOISE      = 1u << 8,
  HR_HEALTH_CAUSE_STATE_SATURATED  = 1u << 9,
  HR_HEALTH_CAUSE_DEPTH_MISALIGNED = 1u << 10,
  HR_HEALTH_CAUSE_GOV_SHED         = 1u << 11,
  HR_HEALTH_CAUSE_NOT_SETTLING     = 1u << 12,
  HR_HEALTH_CAUSE_MEMORY_PRESSURE  = 1u << 13,  /* measured headroom under the low mark
                                                  (hr_health_observe_memory) */
} hr_health_cause;
#define HR_HEALTH_N_CAUSES 13
/* Short name of one cause bit ("nonfinite", "low-confidence", "input-black", ...); "unknown" for
 * anything that is not exactly one known bit. Static strings. */
HR_API const char *hr_health_cause_name(uint32_t cause_bit);

/* Events reported by the caller (hr_health_note_event). STATE_RESET, REPLANNED, GOV_SUSPEND and
 * GOV_RESUME change the state at once (callback included); SCENE_CUT, GOV_SHED, GOV_RESTORED and
 * DEPTH_MISALIGNED are judged at the next hr_health_observe_output(), the frame they belong to. */
typedef enum hr_health_event {
  HR_HEALTH_EVENT_STATE_RESET = 1,  /* recurrent state zeroed (on request, scene cut, user) */
  HR_HEALTH_EVENT_REPLANNED,        /* resolution / ratio changed (implies a state reset) */
  HR_HEALTH_EVENT_SCENE_CUT,        /* hard cut on this frame: its consistency is not judged */
  HR_HEALTH_EVENT_GOV_SUSPEND,      /* governor suspended inference -> SUSPENDED */
  HR_HEALTH_EVENT_GOV_RESUME,       /* governor resumed -> RECALIBRATING */
  HR_HEALTH_EVENT_GOV_SHED,         /* governor lowered quality (step down): cause GOV_SHED on */
  HR_HEALTH_EVENT_GOV_RESTORED,     /* governor back at full quality: cause GOV_SHED off */
  HR_HEALTH_EVENT_DEPTH_MISALIGNED, /* no depth frame within the alignment window for this frame */
} hr_health_event;
/* "state-reset", "replanned", ... ; "unknown". Static strings. */
HR_API const char *hr_health_event_name(hr_health_event ev);

#define HR_HEALTH_MAX_STATE 8        /* state tensors a monitor tracks (RVM has 4) */
#define HR_HEALTH_REASON_LEN 192     /* bytes of a reason string, NUL included */

/* The last frame's signals, for telemetry. -1 marks "not measured" on fields documented so. */
typedef struct hr_health_signals {
  int64_t frame;                 /* outputs observed since create / hr_health_reset, 1-based */
  int64_t input_frame;           /* inputs observed */
  int64_t ts_ns;                 /* timestamp of the last observed input frame (0 if none) */
  /* input (thumbnail) */
  float luma_mean;               /* 0..1; -1 = no input observed */
  float dark_share;              /* share of cells below black_level */
  float bright_share;            /* share of cells above white_level */
  float input_mad;               /* mean |luma_t - luma_t-1| over cells, 0..1; -1 = no previous */
  float hf;                      /* mean |adjacent pixel difference|, 0..1; -1 = not given */
  float moving_share;            /* share of thumbnail cells where the input moved (motion_level) */
  int frozen_run;                /* consecutive frames whose thumbnail repeats the previous one
                                    (bit for bit, or near: see frozen_level), or whose timestamp
                                    does not advance */
  float frozen_changed;          /* share of cells that differ by >= frozen_level from the first
                                    frame of the current near-repeat run; -1 = not judged */
  /* output confidence */
  float alpha_mean;              /* mean alpha (full pass when full_scan, else samples) */
  float uncertain_share;         /* share of samples with band_lo < a < band_hi */
  float entropy;                 /* mean binary entropy of samples, bits (0..1) */
  float fg_share;                /* share of samples with a > 0.5 */
  /* temporal consistency (-1 when there is no comparable previous frame) */
  float alpha_mad;               /* mean |a_t - a_t-1| over samples */
  float alpha_maxdiff;           /* max |a_t - a_t-1| over samples */
  float mask_iou;                /* IoU of a > 0.5 masks; 1 when both (near) empty */
  float mask_iou_still;          /* the same, leaving out disagreements where the input moved
                                    (moving_share); 0 when the masks do not overlap at all */
  float mad_allow;               /* the allowance alpha_mad was judged against */
  float iou_allow;               /* the floor mask_iou_still was judged against */
  /* non-finite values */
  int64_t alpha_nonfinite;       /* NaN/Inf count in alpha (samples only when !full_scan) */
  int64_t state_nonfinite;       /* NaN/Inf count over all state tensors */
  /* state statistics, per tensor (n_state of them) */
  int n_state;
  float state_rms[HR_HEALTH_MAX_STATE];
  float state_drift[HR_HEALTH_MAX_STATE];  /* rms / running average - 1; 0 before the average exists */
  float state_sat[HR_HEALTH_MAX_STATE];    /* share of elements at |x| >= 0.99 state_bound */
  float state_maxabs[HR_HEALTH_MAX_STATE];
  /* bookkeeping */
  int sample_stride;             /* pixels between alpha samples, both directions */
  int n_samples;                 /* alpha samples per frame */
  int resets_in_window;          /* resets the monitor requested within fail_window_frames */
  int depth_miss_30;             /* frames with DEPTH_MISALIGNED among the last 30 */
  uint32_t flags;                /* hr_health_cause bits flagged on this frame (before sustain) */
  double cost_us;                /* time spent in observe_input + observe_output for this frame */
} hr_health_signals;

/* The monitor's answer for one frame. reason is borrowed: valid until the next call on h. */
typedef struct hr_health_verdict {
  hr_health_state state;
  hr_health_action action;       /* do this before the next push */
  uint32_t causes;               /* hr_health_cause bits on now (after sustain / hysteresis) */
  float confidence;              /* 0..1: 1 = crisp, consistent output from sane input; 0.5 = at a
                                    degrade threshold; 0 = unusable (NaN, FAILED). Per frame, each of
                                    uncertain share, mean |da| and 1 - mask_iou_still scores 1 up to
                                    a quarter of its threshold, 0.5 at it, 0 at twice it; bad input,
                                    stuck output, NaN or runaway score 0; the minimum is smoothed
                                    (EMA, 0.3). */
  bool output_ok;                /* false: do not show this alpha (non-finite values, FAILED) */
  bool changed;                  /* the state changed during this call */
  int64_t frames_in_state;       /* observed outputs since the last transition */
  const char *reason;            /* "healthy", "low confidence: 34% uncertain pixels for 12 frames" */
  hr_health_signals signals;     /* copy of the last frame's signals */
} hr_health_verdict;

/* A transition, passed to the callback. Pointers are valid during the callback only. */
typedef struct hr_health_transition {
  hr_health_state from, to;
  int64_t frame;                 /* signals.frame at the transition (0 before the first output) */
  uint32_t causes;
  const char *reason;
} hr_health_transition;
typedef void (*hr_health_callback)(const hr_health_transition *t, void *user);

typedef struct hr_health_params {
  /* thumbnail */
  int thumb_width, thumb_height;   /* cells. Default 64 x 48; 8..256 each. */
  /* alpha sampling */
  int sample_stride;               /* pixels between samples; 0 = auto (smallest stride that keeps
                                      at most max_samples). Default 0. */
  int max_samples;                 /* Default 43200 (240 x 180). Buffers are sized for this. */
  bool full_scan;                  /* NaN/Inf check and mean over every alpha pixel. Default true. */
  /* state machine timing, in observed output frames */
  int warmup_frames;               /* Default 10. */
  int recover_frames;              /* DEGRADED -> HEALTHY after this many clean frames. Default 10. */
  int settle_frames;               /* RECALIBRATING -> HEALTHY after this many consistent frames. Default 8. */
  int settle_timeout_frames;       /* RECALIBRATING -> DEGRADED after this many. Default 90. */
  int input_frames;                /* black / saturated / noise / stuck: frames in a row. Default 3. */
  int frozen_frames;               /* consecutive repeated thumbnails for INPUT_FROZEN. Default 3. */
  float frozen_level;              /* |luma change| (0..1) of a thumbnail cell, against the first
                                      frame of a run, that counts as a real change; 0 = exact
                                      repeats only. Default 0.03 (about 8/255). */
  float frozen_share;              /* a frame is a near-repeat when at most this share of the cells
                                      changed by frozen_level. Default 0.002 (6 of 64x48 cells). */
  int fail_resets;                 /* resets allowed within the window; one more -> FAILED. Default 3. */
  int fail_window_frames;          /* Default 300. */
  /* output thresholds */
  float band_lo, band_hi;          /* uncertain band, exclusive. Default 0.1, 0.9. */
  float uncertain_max;             /* Default 0.20 (share of samples). */
  float mad_base, mad_gain;        /* allowed mean |da| = base + gain x input_mad. Default 0.03, 1.5. */
  float iou_base, iou_gain;        /* floor of mask_iou_still = base - gain x input_mad (min 0.2).
                                      Default 0.75, 4.0. */
  float stuck_eps;                 /* max |da| that counts as identical. Default 1e-6. */
  float stuck_input_min;           /* input_mad that counts as a changing input. Default 0.004. */
  /* input thresholds (luma 0..1) */
  float black_level;               /* Default 0.06. */
  float white_level;               /* Default 0.96. */
  float noise_hf;                  /* Default 0.12. */
  float motion_level;              /* |luma change| of a thumbnail cell (or a neighbour) that marks
                                      input motion there. Default 0.02. */
  /* state */
  float state_bound;               /* |x| bound of the state (RVM's ConvGRU: tanh, 1.0); 0 = none. Default 1.0. */
  float state_sat_max;             /* Default 0.9. */
  float runaway_factor;            /* RMS / running average that counts as runaway. Default 4.0. */
  int depth_miss_max;              /* misaligned frames among the last 30. Default 5. */
  const char *const *state_names;  /* optional names of the state tensors for reasons ("r1"...),
                                      borrowed for the monitor's lifetime; NULL = "state[i]". */
} hr_health_params;

HR_API void hr_health_params_default(hr_health_params *p);

/* Memory as measured on this frame (the governor's hr_gov_sample.available_bytes: the headroom
 * left under the ceiling), against low_bytes, the headroom under which the governor sheds quality
 * (its ladder's shed_bytes). Under low_bytes the cause MEMORY_PRESSURE turns on at once (DEGRADED,
 * even while warming up; the reason gives both figures: "memory pressure: 41 MB headroom, under
 * 80 MB"); it turns off when the headroom is back at low_bytes + hysteresis_bytes or more. This is
 * what the monitor knows of memory by itself, whatever the caller does about it (shed, suspend, or
 * nothing: an observe-only governor). Call it before observe_output for the frame it measured.
 * A negative headroom is the governor's figure past the ceiling (hr_gov_sample.available_bytes goes
 * negative there): pressure, the reason then "memory pressure: 12 MB over the ceiling".
 * headroom_bytes == HR_HEALTH_MEM_UNMEASURED means not measured (nothing changes; before
 * 2026-12-06 any negative value meant that, and the worst pressure went unnamed). A monitor never
 * called here never shows the cause. */
#define HR_HEALTH_MEM_UNMEASURED INT64_MIN
HR_API void hr_health_observe_memory(hr_health *h, int64_t headroom_bytes, int64_t low_bytes, int64_t hysteresis_bytes);

/* Create a monitor for alpha mattes of alpha_w x alpha_h (the size sets the sample stride; another
 * size later is accepted, treated as a replan, with a stride that fits the same buffers). Allocates
 * everything the monitor will use. HR_EINVAL on bad params (message in err), HR_ENOMEM; *out is
 * NULL on error. p may be NULL for defaults. */
HR_API hr_status hr_health_create(const hr_health_params *p, int alpha_w, int alpha_h, hr_health **out,
                           char *err, size_t err_len);
/* NULL-safe. */
HR_API void hr_health_destroy(hr_health *h);
/* Back to WARMING_UP with no history (e.g. after the caller rebuilt a FAILED session). Keeps the
 * callback. */
HR_API void hr_health_reset(hr_health *h);

/* Called synchronously from observe_output / note_event / reset on every state change. NULL to
 * remove. */
HR_API void hr_health_set_callback(hr_health *h, hr_health_callback cb, void *user);

/* Observe one input frame: computes its thumbnail (hr_health_thumb_from_frame) into the monitor.
 * HR_ENOTSUP for depth formats, HR_EINVAL for a bad frame (message in hr_health_last_error); the
 * monitor is unchanged on error. */
HR_API hr_status hr_health_observe_input(hr_health *h, const hr_frame *f);
/* Same, from a thumbnail the caller computed: luma in [0,1], thumb_width x thumb_height of the
 * params, row-major; hf < 0 if unknown (noise is then not judged). ts_ns may be 0. */
HR_API hr_status hr_health_observe_thumb(hr_health *h, const float *luma, int tw, int th, float hf, int64_t ts_ns);

/* Observe one frame's outputs and advance the state machine. alpha: width x height floats, row-major,
 * read during the call only. state: n_state tensors (may be 0 / NULL), state_len[i] floats each.
 * out (may be NULL) gets the verdict. HR_EINVAL on NULL alpha / bad sizes / n_state >
 * HR_HEALTH_MAX_STATE (the monitor is unchanged). */
HR_API hr_status hr_health_observe_output(hr_health *h, const float *alpha, int width, int height,
                                   const float *const *state, const size_t *state_len, int n_state,
                                   hr_health_verdict *out);

/* Report an event. detail (may be NULL) is copied into the reason where it applies, e.g.
 * "rung 2 of 4, 384x288". HR_EINVAL for unknown events. */
HR_API hr_status hr_health_note_event(hr_health *h, hr_health_event ev, const char *detail);
/* Map a session's HR_EVENT_* bits (hr_outputs.events) to note_event: STATE_RESET, REPLANNED,
 * SCENE_CUT. */
HR_API void hr_health_note_session_events(hr_health *h, uint32_t hr_event_bits);

/* Current verdict without observing anything (action NONE, changed false). */
HR_API void hr_health_get(const hr_health *h, hr_health_verdict *out);
HR_API hr_health_state hr_health_get_state(const hr_health *h);
/* Current reason, borrowed until the next call on h. */
HR_API const char *hr_health_reason(const hr_health *h);
/* Last error message ("" if none). */
HR_API const char *hr_health_last_error(const hr_health *h);

/* Luma thumbnail of a frame: tw x th cells in [0,1], each the mean of a 4x4 grid of points over the
 * cell (Rec.601 weights for RGB; the Y plane for NV12/I420, video range expanded). hf (may be
 * NULL) gets the mean |luma(x+1,y) - luma(x,y)| over the same points. Supports RGB24, BGRA, GRAY8,
 * RGBF32, NV12 and I420 (full and video range); HR_ENOTSUP for depth, HR_EINVAL for a bad frame or
 * tw/th outside 1..256. Reads 2 x 16 x tw x th pixels; no allocation. */
HR_API hr_status hr_health_thumb_from_frame(const hr_frame *f, float *luma, int tw, int th, float *hf);

#ifdef __cplusplus
}
#endif
#endif
