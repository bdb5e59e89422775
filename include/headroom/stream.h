/* headroom stream: the live loop as a library object. One hr_stream owns a session and everything
 * that keeps it alive at frame rate: the processing-resolution ladder and its budget controller,
 * the memory governor, the health monitor, fault injection (a testing hook) and the per-frame
 * telemetry record. Included by headroom.h.
 *
 * One frame, one call: hr_stream_push(frame) -> hr_stream_result. What happens inside a push, in
 * this fixed order:
 *   1. Decisions taken on the previous frame are applied: a new rung (replan), a governor suspend
 *      or resume, a rebuild after health FAILED. This is the only place where the stream frees or
 *      allocates session memory, and it happens only after the caller has had the previous
 *      frame's outputs for as long as it wanted (until this call).
 *   2. The frame is observed (health input checks) and, unless suspended, run through the model.
 *   3. Health judges the output; the governor measures memory; the budget controller looks at how
 *      long the frame took. Their decisions are recorded for step 1 of the next push.
 * So the result of push N — alpha, foreground, raw output, the health verdict and the telemetry
 * record — stays valid until push N+1 (or destroy), whatever rung or governor change frame N
 * caused: outputs of frame N are handed to the caller before any replan frame N asked for.
 *
 * Memory: create plans and allocates (the session at the admitted rung, the monitor, the
 * governor's files). A push in steady state allocates nothing; a rung change or a resume
 * allocates the new plan in step 1 (replan builds the new plan before freeing the old one; a
 * memory-driven step down or resume releases first). Fault injection copies the frame it alters
 * into a buffer that grows once.
 *
 * Threads: one stream is driven by one thread at a time.
 *
 * Depth fusion (params.depth): color and depth frames are paired by timestamp (hr_aligner, sync.h:
 * nearest within depth_window_ms, each depth frame used once, exact while nothing is forced) and for
 * every pair the person's depth is made: the depth value (in mm) where the matte is >= 0.5, else 0,
 * plus an occlusion mask with occlude_m. The stream owns it all: a pool of HR_STREAM_DEPTH_POOL depth
 * frames (hr_stream_push_depth copies into it), one matte-sized ring slot per color frame still
 * undecided or decided and not yet handed out (HR_STREAM_DEPTH_RING), allocated at create.
 * Timing contract:
 *   - Push depth frames as they arrive, through hr_stream_push_depth, from the stream's thread.
 *   - Color frame N is decided as soon as no later frame can change its decision (sync.h's rule):
 *     paired with depth frame d once every depth frame up to ts(N) + |dt| has been pushed and d is
 *     not after ts(N) (a d after ts(N) might lie nearer to frame N+1, so that pair waits for a
 *     later color frame); "no depth" once a depth frame later than ts(N) + window has been pushed
 *     (or the depth stream said it ended) and none of N's candidates can win. So pushing every
 *     depth frame up to the first one beyond ts(N) + window BEFORE hr_stream_push(N) lets push N
 *     decide N whenever its depth frame is not after it (equal timestamps: always); otherwise N
 *     is decided in a later call (typically push N+1, or an hr_stream_push_depth between), and
 *     never later than the aligner's max latency (200 ms of either stream's timestamps past
 *     ts(N): then it is forced, counted in stats.depth_forced).
 *   - hr_stream_result.depth describes one decision: frame N's when push N decided it, else the
 *     newest one decided since the previous push (.frame says which; -1 when none). Every
 *     decision (one per color frame that had a matte, in frame order) is also queued for
 *     hr_stream_pop_depth until the next hr_stream_push; pop them all after each push (and after
 *     hr_stream_flush_depth) to miss none.
 *   - Frames without a matte (suspended) are not paired: their record says depth_fused false. */
#ifndef HEADROOM_STREAM_H
#define HEADROOM_STREAM_H
#include "headroom.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hr_stream hr_stream;

#define HR_STREAM_MAX_RUNGS 8

typedef struct hr_stream_params {
  /* The session: model input size, declared frame size, threads, backend, stateless, fgr, scene
   * cuts (see hr_session_params). downsample_ratio is rung 0 of the ladder (0 = auto: processing
   * side ~512 px). Default hr_session_params_default(). */
  hr_session_params session;
  double budget_ms;            /* frame processing budget in ms. Default 16.7 (60 fps). */
  bool adapt;                  /* the budget controller moves along the ladder to keep the p90 of
                                  the processing time within the budget. Default false. */
  int max_rungs;               /* ladder length, 1..HR_STREAM_MAX_RUNGS; rung k runs at
                                  ratio x {1, .8, .64, .5, .4, .32, .24, .18}[k], down to a
                                  64x48 processing size. Models without a ratio have one rung.
                                  Default 8. */
  /* memory governor */
  bool governor;               /* measure memory every frame and shed along the ladder. Default false. */
  hr_gov_profile profile;      /* ceilings (hr_gov_profile_parse); a cgroup limit is always seen.
                                  Default: none. */
  bool governor_observe_only;  /* measure and decide, but take no action (the kill test's control).
                                  Default false. */
  /* Tail every frame (RVM and other models whose plan ends in a guided-filter tail, CPU backend,
   * frames at the declared size, no foreground): the network runs on a worker thread at whatever
   * rate it reaches, and every push runs only the full-resolution tail on its own frame with the
   * newest low-resolution coefficients the network made (its recurrent state advances once per
   * network run). A push then costs the tail, not the network; the matte follows the frame's
   * edges at once and the person's motion with the network's lag (record.coef_age frames).
   * With adapt, the controller keeps the network's run time within net_budget_ms instead of the
   * frame's time within budget_ms, and steps down a rung where the lag's error, measured on each
   * run (record.lag_off against lag_band: the matte shown on the run's frame against the run's
   * own), moves the matte's edges by more than their own soft width (HR_TAIL_LAG_TAU=0: the
   * run-time bound alone). When the last run took less than 0.9 x budget_ms minus the
   * push's own work, the push waits for its own frame's run (coef_age 0). session.threads then
   * counts the caller's thread too (it runs the tail): the network gets one fewer, at least one
   * (0: hr_cpu_count() - 1), so that the network's threads and the tail never share a CPU.
   * Default false. */
  bool tail_every_frame;
  double net_budget_ms;        /* the network's run-time budget in that mode; 0 = the lag bound:
                                  4 x budget_ms up to 66.8 ms, but at least 0.8 x budget_ms (a run
                                  that fits the frame is waited for). Default 0. */
  /* health */
  const hr_health_params *health; /* NULL = hr_health_params_default() with state names r1..r8 */
  /* Testing hook, not a stable interface: a fault spec for hr_fault_create ("black-input@60:20"),
   * applied to the frames this stream counts. NULL = none. */
  const char *inject;
  uint64_t inject_seed;        /* Default 42. */
  /* Depth fusion (see the top of this file). */
  bool depth;                  /* pair depth frames pushed with hr_stream_push_depth with the color
                                  frames and fuse each pair. Default false. */
  double depth_window_ms;      /* largest |depth ts - color ts| of a pair, inclusive; 0..1000 ms.
                                  Default 16. */
  double depth_scale;          /* units per metre of the pushed 16-bit depth values: 1000 when they
                                  are millimetres (RealSense), 5000 for TUM PNGs read raw. Values 0
                                  and 65535 are no reading. Default 1000. */
  double occlude_m;            /* occlusion mask: person pixels nearer than this many metres; 0 = no
                                  mask. Default 0. */
  int depth_width, depth_height; /* size of the depth frames (the pool is made for it; others are
                                  refused); 0 = the session's frame size (frame_width/height, else
                                  width/height). Default 0. */
  /* With session.alpha_u8: the 8-bit matte alone, as a session gives it (result.alpha and raw
   * NULL on the frames made so): the guided-filter tail writes the bytes itself on the CPU (in
   * tail_every_frame mode too), a GPU backend reads back the bytes, and the health monitor reads
   * them (k / 255), with the NaN/Inf count of the values they were made from. A W x H float matte
   * is then neither stored nor read again each frame (1920x1440: 11 MB; 1.5 ms of a 2-CPU frame).
   * Not with depth or inject (they read the float matte): there it stays. Default false. */
  bool alpha_u8_only;
} hr_stream_params;

/* Defaults as documented above. */
HR_API void hr_stream_params_default(hr_stream_params *p);
/* Host memory that tail_every_frame adds to a plan (pi from hr_model_plan or hr_session_get_plan):
 * the full-size float matte, three slots of the alpha's low-resolution A and b, and the tail's
 * tables for two plans (the one shown and the next); 0 when pi.tail_split is false. The network's
 * thread (its stack, what it pages in) is not counted. The stream's admission counts it. */
HR_API int64_t hr_stream_tail_bytes(const hr_plan_info *pi);
/* The same for a stream whose result is the 8-bit matte alone (session.alpha_u8 and alpha_u8_only,
 * no depth, no fault injection): the tail writes the stream's bytes and has no float matte. */
HR_API int64_t hr_stream_tail_bytes_u8(const hr_plan_info *pi);

/* Build the ladder, admit a rung against the governor's ceiling (the largest that fits), create
 * the session there, the health monitor and the injector. On failure *out is NULL, err holds one
 * line: a planning error, "admission refused: ..." (HR_ENOFIT), HR_ENOMEM, or a bad fault spec. */
HR_API hr_status hr_stream_create(hr_model *m, const hr_stream_params *p, hr_stream **out, char *err, size_t err_len);
/* NULL-safe. */
HR_API void hr_stream_destroy(hr_stream *s);

/* Stream events, in hr_stream_result.events beside the session's HR_EVENT_* bits. */
enum {
  HR_STREAM_EVENT_RUNG_CHANGED = 1u << 8,   /* this frame ran on another rung than the previous one */
  HR_STREAM_EVENT_SUSPENDED    = 1u << 9,   /* no inference on this frame (governor or injected pressure) */
  HR_STREAM_EVENT_RESUMED      = 1u << 10,  /* first inference after a suspension */
  HR_STREAM_EVENT_REBUILT      = 1u << 11,  /* state and monitor started over after health FAILED */
  HR_STREAM_EVENT_CHANGE_FAILED= 1u << 12,  /* a replan or resume failed; hr_stream_last_error says
                                               why; the stream kept its plan (replan) or stays
                                               suspended and retries (resume) */
};

#define HR_STREAM_DEPTH_POOL 16   /* depth frames held by the stream (the aligner may hold 15 undecided) */
#define HR_STREAM_DEPTH_RING 9    /* color frames held: 8 undecided (the aligner's capacity) + 1 */

/* One color frame's depth decision. Views borrowed until the next hr_stream_push (or destroy). */
typedef struct hr_stream_depth {
  int64_t frame;               /* the color frame (hr_stream_result.frame numbering); -1 = none */
  bool paired;                 /* a depth frame lay within the window */
  bool fused;                  /* person_mm made (paired, and the depth frame was read) */
  uint32_t flags;              /* HR_ALIGNED_FORCED_* (sync.h): decided early, may differ from the
                                  exact rule; 0 normally */
  double dt_ms;                /* depth ts - color ts of the pair (signed); NAN unless paired */
  int64_t depth_ts_ns;         /* the paired depth frame's timestamp; 0 unless paired */
  int width, height;           /* of person_mm and occlusion: the session's width x height (the matte) */
  const uint16_t *person_mm;   /* width x height, millimetres where the matte >= 0.5 and the depth
                                  has a reading (nearest depth sample), else 0; NULL unless fused */
  const uint8_t *occlusion;    /* width x height, 255 where 0 < person_mm < occlude_m, else 0; NULL
                                  unless fused with occlude_m > 0 */
  int waiting;                 /* in hr_stream_result only: decisions hr_stream_pop_depth would give now */
} hr_stream_depth;

/* One frame's outcome: borrowed views, valid until the next push on the stream (or destroy). */
typedef struct hr_stream_result {
  const hr_frame *input;       /* the frame as the model saw it: the caller's, or the stream's copy
                                  when a fault altered it */
  const float *alpha;          /* width x height matte; NULL when no inference ran (suspended) */
  int width, height;
  const float *fgr;            /* width x height x 3, NULL unless want_fgr */
  const float *raw;            /* the model's own output (see hr_outputs.raw) */
  int raw_channels;
  const float *model_input;    /* the model's float RGB input (width x height x 3) when the frame was
                                  converted into one; NULL when the frame itself was read in place
                                  (convert its rows with hr_frame_row_rgbf) or nothing ran */
  int64_t frame;               /* frames pushed into this stream before this one */
  uint32_t events;             /* HR_EVENT_* | HR_STREAM_EVENT_* */
  int rung;                    /* rung this frame ran on */
  hr_health_verdict health;    /* reason borrowed like the rest */
  /* Telemetry for this frame. Filled: frame (= the field above; callers may renumber), ingest_ms,
   * infer_ms, post_ms (health + governor + controller), rss_bytes, headroom and ceilings (with a
   * governor), governor_action, state_reset, proc_w, proc_h, ratio, health, health_reason,
   * confidence, bytes_copied. Left to the caller: t_ms, latency_ms, output_ms, dropped, depth. */
  hr_telemetry_record record;
  double change_ms;            /* time spent in step 1 (replan, suspend, resume) before this frame */
  /* With params.depth: one decision (this frame's if this push made it, else the newest made since
   * the previous push; frame -1 when none), see the top of this file. record.depth_dt_ms and
   * record.depth_fused are this frame's when it was decided in this push, else null / false. */
  hr_stream_depth depth;
  /* With params.session.alpha_u8: the matte as 8 bits (round(clamp(a, 0, 1) x 255), ties to even, NaN as 0 and
   * HR_EVENT_NONFINITE raised), width x height, owned by the stream until the next push; else NULL.
   * Unlike a session's, the float alpha is there too (unless params.alpha_u8_only): the bytes are
   * made in the pass the health monitor's full scan makes over the matte, on the session's threads.
   * width x height bytes made at create. */
  const uint8_t *alpha_u8;
} hr_stream_result;

/* Push one frame. The frame is read during the call only (or copied when a fault is injected).
 * Returns HR_OK; HR_EINVAL for a bad frame (nothing changed, message in hr_stream_last_error);
 * another status when the session failed on this frame (message says why; the stream stays
 * usable). A failed rung change is not an error of the push: it is reported through
 * HR_STREAM_EVENT_CHANGE_FAILED. */
HR_API hr_status hr_stream_push(hr_stream *s, const hr_frame *f, hr_stream_result *out);

/* A depth frame (HR_PIX_DEPTH16_MM, depth_width x depth_height, values in 1/depth_scale m, ts_ns
 * strictly increasing), copied into the stream's pool and paired; may decide earlier color frames
 * (pop them). NULL = the depth stream ended: color frames beyond the last depth frame's window are
 * then decided at once, without depth. Returns HR_OK; HR_EMISUSE without params.depth; HR_EINVAL
 * for a bad frame, another size or format, or a timestamp not after the previous one (nothing
 * changed; counted in stats.depth_refused; message in hr_stream_last_error). Never allocates. */
HR_API hr_status hr_stream_push_depth(hr_stream *s, const hr_frame *depth);
/* The next decision waiting (in color frame order): HR_OK and *out filled, HR_EAGAIN when none
 * (also without params.depth). Views valid until the next hr_stream_push. Decisions not popped
 * are dropped by the next hr_stream_push. */
HR_API hr_status hr_stream_pop_depth(hr_stream *s, hr_stream_depth *out);
/* No more color frames for now (end of the stream): every held frame is decided by the exact rule
 * and queued for hr_stream_pop_depth. Later frames of either stream start a new pairing segment. */
HR_API hr_status hr_stream_flush_depth(hr_stream *s);

/* Counters for a run summary. */
typedef struct hr_stream_stats {
  int64_t frames;              /* pushes that returned HR_OK */
  int64_t inferred;            /* of which ran the model */
  int64_t suspended_frames;    /* of which passed through suspended */
  int64_t replans;             /* rung changes and resumes applied */
  int64_t change_failures;     /* rung changes or resumes that failed */
  int64_t governor_actions;    /* governor decisions other than none */
  int64_t health_resets;       /* state resets asked by the health monitor */
  int64_t rebuilds;            /* restarts after health FAILED */
  int64_t net_runs;            /* tail_every_frame: network runs completed (else = inferred) */
  bool tail_every_frame;       /* the mode is on */
  int64_t health_frames[6];    /* frames per hr_health_state */
  int n_rungs, rung;           /* ladder length, rung now */
  float rung_ratio[HR_STREAM_MAX_RUNGS];
  /* depth fusion (params.depth) */
  int64_t depth_frames;        /* depth frames accepted */
  int64_t depth_refused;       /* depth frames refused (size, format, timestamp order) and color
                                  frames the aligner refused (timestamp order) */
  int64_t depth_colors;        /* color frames with a matte given to the pairing */
  int64_t depth_pairs;         /* of which paired within the window */
  int64_t depth_fused;         /* of which fused (= pairs) */
  int64_t depth_unpaired;      /* color frames decided without depth */
  int64_t depth_unused;        /* depth frames no color frame took */
  int64_t depth_forced;        /* decisions forced early (full buffer, max latency) */
  double depth_max_abs_dt_ms;  /* largest |dt| of a pair */
  double depth_ms;             /* time spent pairing and fusing, all frames */
  double depth_ms_max;         /* the most in one call */
  int depth_held_peak;         /* most depth frames held in the pool at once */
} hr_stream_stats;
HR_API void hr_stream_get_stats(const hr_stream *s, hr_stream_stats *st);

/* A new frame budget from the next push on, for a source or display that changes rate (a camera
 * dropping from 60 to 30 fps, a thermal cap); with net_budget_ms 0 the network's lag bound in
 * tail-every-frame mode follows it. The controller keeps what it measured and moves at its own
 * pace. budget_ms > 0 (and finite), else HR_EINVAL. From the thread that pushes. */
HR_API hr_status hr_stream_set_budget(hr_stream *s, double budget_ms);

/* The session, for what the stream does not wrap (state save/load, plan figures). Borrowed; do
 * not replan, suspend, resume or destroy it behind the stream's back. NULL-safe. With
 * tail_every_frame, this first waits for the network run in flight, so the state is still until
 * the next push. */
HR_API hr_session *hr_stream_session(hr_stream *s);
/* The health monitor, to note events the stream cannot see. Borrowed. (With params.depth the
 * stream notes HR_HEALTH_EVENT_DEPTH_MISALIGNED itself for every frame decided without depth.) */
HR_API hr_health *hr_stream_health(hr_stream *s);
/* The governor (NULL without one): to read hr_gov_info or samples. Borrowed. */
HR_API hr_gov *hr_stream_governor(hr_stream *s);
/* Last error message ("" if none). Owned by the stream. */
HR_API const char *hr_stream_last_error(const hr_stream *s);

#ifdef __cplusplus
}
#endif
#endif
