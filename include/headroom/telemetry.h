/* headroom telemetry API: per-frame JSONL records, streaming stage percentiles, the newest-frame-
 * wins flow limiter between capture and inference. (The HTML run report made from telemetry is
 * headroom/report.h, in its own library.)
 * Included by headroom.h. */
#ifndef HEADROOM_TELEMETRY_H
#define HEADROOM_TELEMETRY_H
#include "headroom/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------------
 * Telemetry records: one JSON object per frame, one line each (JSONL).
 *
 * Nulls. A field that has no value this frame is written as JSON null. In the C record:
 *   - double fields: NaN (or any non-finite value) means null;
 *   - int64 fields that can be null: HR_TELEMETRY_NONE (INT64_MIN) means null. Not -1: headroom is
 *     legitimately negative when the process is above its safe ceiling;
 *   - int fields proc_w/proc_h: 0 means null;
 *   - strings: NULL means null.
 * hr_telemetry_record_init() sets every nullable field to null and everything else to 0/false, so
 * a loop fills only what it measured.
 *
 * JSONL schema (keys in this order, every key always present; version 1):
 *   frame              int     frame index, 0-based, strictly increasing
 *   t_ms               number  ms since the start of the run (monotonic clock)
 *   latency_ms         number|null  capture timestamp -> output delivered
 *   ingest_ms, infer_ms, post_ms, output_ms   number|null  per-stage wall time
 *   rss_bytes          int|null     resident set size after the frame
 *   headroom_bytes     int|null     bytes left before the kill ceiling, as the governor measures
 *                                   them (may be negative); null: no ceiling
 *   ceiling_safe_bytes int|null     the governor's safe (soft) ceiling; null: none
 *   ceiling_kill_bytes int|null     the hard ceiling at which the process would be killed; null: none
 *   governor_action    string|null  what the governor did this frame (hr_gov_action_name():
 *                                   "step_down", "suspend", ...; null or "none": nothing)
 *   state_reset        bool         recurrent state was reset this frame
 *   proc_w, proc_h     int|null     processing (network input) size in pixels
 *   ratio              number|null  downsample ratio in effect
 *   health             string|null  health state (hr_health_state_name(): "healthy", ...)
 *   health_reason      string|null  one-line reason for a non-ok state
 *   confidence         number|null  health confidence in [0,1]
 *   depth_dt_ms        number|null  depth ts - colour ts (signed, ms) of the fused depth frame
 *   depth_fused        bool         a depth frame was fused into this output
 *   dropped            int          frames dropped so far (cumulative, flow limiter + governor)
 *   bytes_copied       int          bytes of frame data copied this frame (0 = zero-copy path)
 *   net_ms             number|null  tail-every-frame mode: the network run whose coefficients
 *                                   made this frame's matte (infer_ms is then the tail's time)
 *   coef_age           int|null     tail-every-frame mode: frames between that run's frame and this
 *   device_ms          number|null  GPU backends: the frame's time on the device (timestamp queries)
 *   coef_warped        bool|null    tail-every-frame mode: that run's coefficients were moved along the
 *                                   motion to this frame (false: this frame's own, or the warp is off
 *                                   (HR_TAIL_WARP=0) or cannot run on this frame's format)
 *   lag_off            number|null  tail-every-frame mode, on a frame whose matte used a network run
 *                                   that had just finished: on that run's coefficient grid, the share
 *                                   of pixels whose alpha, as shown on the run's own frame (older
 *                                   coefficients, warped), was off by > 0.1 from what the run gives
 *                                   there: the lag's error, measured (the controller's input)
 *   lag_band           number|null  with lag_off: the share of the grid in that run's matte's soft
 *                                   band (0.1 < alpha < 0.9): the edges the lag moves
 *   threads            int|null     CPU threads the model ran on (tail-every-frame mode: that
 *                                   network run's); 1 where the session fell back from its pool
 *                                   to the calling thread (hr_session_params.threads_fixed)
 * Numbers: ms with 3 decimals (1 µs), ratio and confidence with 4; strings are JSON-escaped,
 * invalid UTF-8 becomes U+FFFD, and each string is cut (at a character boundary) to at most
 * HR_TELEMETRY_STR_MAX bytes, so one line never exceeds HR_TELEMETRY_LINE_MAX bytes.
 * ------------------------------------------------------------------------------------------- */
#define HR_TELEMETRY_NONE INT64_MIN   /* null for nullable int64 fields */
#define HR_TELEMETRY_STR_MAX 256      /* bytes kept of each string field (before escaping) */
#define HR_TELEMETRY_LINE_MAX 8192    /* upper bound of one formatted line, newline included */

typedef struct hr_telemetry_record {
  int64_t frame;                 /* frame index */
  double t_ms;                   /* ms since start; NaN = null */
  double latency_ms;             /* capture -> output, ms; NaN = null */
  double ingest_ms, infer_ms, post_ms, output_ms; /* stage times, ms; NaN = null */
  int64_t rss_bytes;             /* HR_TELEMETRY_NONE = null */
  int64_t headroom_bytes;        /* may be negative; HR_TELEMETRY_NONE or INT64_MAX (the
                                  * governor's "no ceiling") = null */
  int64_t ceiling_safe_bytes;    /* HR_TELEMETRY_NONE = null */
  int64_t ceiling_kill_bytes;    /* HR_TELEMETRY_NONE = null */
  const char *governor_action;   /* borrowed during the write; NULL = null */
  bool state_reset;
  int proc_w, proc_h;            /* pixels; 0 = null */
  double ratio;                  /* NaN = null */
  const char *health;            /* borrowed; NULL = null */
  const char *health_reason;     /* borrowed; NULL = null */
  double confidence;             /* NaN = null */
  double depth_dt_ms;            /* signed depth - color timestamp of the fused pair, ms; NaN = null (no pair) */
  bool depth_fused;
  int64_t dropped;               /* cumulative */
  int64_t bytes_copied;          /* this frame */
  double net_ms;                 /* NaN = null */
  int64_t coef_age;              /* HR_TELEMETRY_NONE = null */
  double device_ms;              /* NaN = null */
  int64_t threads;               /* CPU threads the model ran on (hr_outputs.threads); HR_TELEMETRY_NONE = null */
  int coef_warped;               /* -1 = null, else 0 or 1 */
  double lag_off, lag_band;      /* shares in [0, 1]; NaN = null */
} hr_telemetry_record;

/* Every nullable field null, the rest 0/false. */
HR_API void hr_telemetry_record_init(hr_telemetry_record *r);

/* Format one record as a JSON line (with trailing '\n') into buf. Returns the line length in bytes
 * (excluding the terminating NUL); buf is always NUL-terminated when n > 0. A buffer of
 * HR_TELEMETRY_LINE_MAX bytes always suffices; with a smaller one the return value is the length
 * needed and the output is truncated (snprintf-style). No allocation. */
HR_API size_t hr_telemetry_format(const hr_telemetry_record *r, char *buf, size_t n);

typedef struct hr_telemetry hr_telemetry;

typedef struct hr_telemetry_params {
  int flush_every;     /* write the buffered lines every N records; 1 = every line as it comes
                        * (what a live loop that must never lose a line wants). Lines are also
                        * written once a second at least (checked at each write) and at close.
                        * 0 = only when the buffer fills, a second passes, or at close. Default 60. */
  size_t buffer_bytes; /* line buffer, allocated at open; at least HR_TELEMETRY_LINE_MAX.
                        * Default 65536. */
  bool append;         /* append to an existing file instead of truncating. Default false. */
} hr_telemetry_params;

HR_API void hr_telemetry_params_default(hr_telemetry_params *p);

/* Open a JSONL telemetry file for writing. path "-" means stdout (not closed by close). p may be
 * NULL for defaults. All memory the writer will ever use is allocated here.
 * Returns HR_OK, HR_EINVAL (NULL path/out), HR_EIO (cannot open; err gets "path: reason"),
 * HR_ENOMEM. On failure *out is NULL. */
HR_API hr_status hr_telemetry_open(const char *path, const hr_telemetry_params *p, hr_telemetry **out,
                            char *err, size_t err_len);

/* Append one record as one line. No heap allocation: lines are formatted into the handle's buffer
 * and written with write(2) (see flush_every). The file only ever holds whole lines: when a write
 * fails or falls short (disk full, a removed folder's file system, a closed pipe) the partial line
 * is cut off again (regular files), the lines still buffered are dropped, and HR_EIO is returned
 * with the reason (strerror) in hr_telemetry_last_error; errno is left set. Later writes are still
 * attempted. One thread at a time. */
HR_API hr_status hr_telemetry_write(hr_telemetry *t, const hr_telemetry_record *r);

/* Write what is buffered now. Same errors as hr_telemetry_write. NULL-safe. */
HR_API hr_status hr_telemetry_flush(hr_telemetry *t);

/* Records whose whole line is in the file (written, not merely buffered). */
HR_API int64_t hr_telemetry_count(const hr_telemetry *t);

/* Last error message of this handle ("" if none). Owned by t. */
HR_API const char *hr_telemetry_last_error(const hr_telemetry *t);

/* Write what is buffered and close; frees t. Returns HR_EIO if buffered lines could not be written
 * (the file still ends with a whole line). NULL-safe (returns HR_OK). */
HR_API hr_status hr_telemetry_close(hr_telemetry *t);

/* ---------------------------------------------------------------------------------------------
 * Stage statistics: streaming quantiles in fixed memory (for bench and the report).
 *
 * A log-bucketed histogram over [1 µs, 10 s] (in ms: [0.001, 10014]) with buckets 1% wide
 * (each bucket's upper edge is 1.01x its lower edge; 1620 buckets), plus one bucket below 1 µs and
 * one above, exact count, sum, min and max: 13 KB, fixed. Adding a sample is O(1) (one log()),
 * never allocates.
 *
 * Quantiles use the nearest-rank definition: q -> the k-th smallest sample, k = max(1, ceil(q*n)).
 * Error bound: for a k-th sample x in [1 µs, 10 s], the result v satisfies |v - x| <= 0.5% of x
 * (the bucket's geometric midpoint, clamped to the exact [min, max]). Below 1 µs the absolute
 * error is < 1 µs; above 10 s the result is the exact max. q = 0 and q = 1 give the exact min/max.
 * NaN, negative and infinite samples are ignored (counted in hr_stats_ignored).
 * ------------------------------------------------------------------------------------------- */
typedef struct hr_stats hr_stats;

HR_API hr_status hr_stats_create(hr_stats **out);
HR_API void hr_stats_destroy(hr_stats *s);               /* NULL-safe */
HR_API void hr_stats_reset(hr_stats *s);                 /* forget all samples */
HR_API void hr_stats_add(hr_stats *s, double ms);        /* one sample, in ms */
/* Add every sample of src into dst (e.g. per-thread stats). */
HR_API void hr_stats_merge(hr_stats *dst, const hr_stats *src);
HR_API int64_t hr_stats_count(const hr_stats *s);
HR_API int64_t hr_stats_ignored(const hr_stats *s);
/* q in [0,1]; NaN if there are no samples or q is out of range. */
HR_API double hr_stats_quantile(const hr_stats *s, double q);
HR_API double hr_stats_mean(const hr_stats *s);          /* NaN if empty */
HR_API double hr_stats_min(const hr_stats *s);           /* exact; NaN if empty */
HR_API double hr_stats_max(const hr_stats *s);           /* exact; NaN if empty */

/* ---------------------------------------------------------------------------------------------
 * Flow limiter: a single-slot "newest frame wins" mailbox between one capture (producer) thread and
 * one inference (consumer) thread, after MediaPipe's FlowLimiterCalculator: the producer never
 * waits; when the consumer is busy, the older unconsumed frame is dropped and counted.
 *
 * Items are opaque non-NULL pointers; the caller owns what they point to. A pool of 3 frame buffers
 * is enough: one being filled by the producer, one in the slot, one being processed. The producer
 * recycles the buffer hr_flow_put hands back (a dropped frame), the consumer returns processed
 * buffers to the producer by its own means (e.g. a second hr_flow, or a locked free list).
 *
 * Accounting: every item put is, exactly once, either returned by hr_flow_take or handed back
 * through hr_flow_put's *replaced (dropped) — or, after hr_flow_close, handed back by put itself
 * (rejected, not counted as dropped) or taken out by hr_flow_take (the close drains). Thread-safe
 * (a pthread mutex + condition variable); any number of producers/consumers work, the design point
 * is one of each. No allocation after create.
 * ------------------------------------------------------------------------------------------- */
typedef struct hr_flow hr_flow;

typedef struct hr_flow_stats {
  int64_t put;       /* items accepted by hr_flow_put */
  int64_t taken;     /* items returned by hr_flow_take */
  int64_t dropped;   /* items replaced before they were taken */
  int64_t rejected;  /* puts after close */
  bool pending;      /* an item is in the slot now */
  bool closed;
} hr_flow_stats;

HR_API hr_status hr_flow_create(hr_flow **out);
/* NULL-safe. No thread may be inside put/take. An item still in the slot is not freed (it is the
 * caller's): take it out first (hr_flow_take with timeout 0) if it owns memory. */
HR_API void hr_flow_destroy(hr_flow *f);

/* Producer: store item (non-NULL) as the newest, never blocking beyond the short critical section.
 * *replaced (replaced may be NULL only if the caller does not care) receives the unconsumed item
 * that was displaced — now dropped and the caller's again — or NULL if the slot was empty.
 * Returns HR_OK; HR_EINVAL (NULL f or item); HR_EEOF if the flow is closed: item is not stored and
 * *replaced = item (hand it back to the pool). Wakes a waiting consumer. */
HR_API hr_status hr_flow_put(hr_flow *f, void *item, void **replaced);

/* Consumer: take the newest item, waiting up to timeout_ns (< 0: forever, 0: do not wait).
 * Returns HR_OK with *item set; HR_EAGAIN on timeout (*item = NULL); HR_EEOF if the flow is closed
 * and the slot is empty (a pending item is still delivered after close); HR_EINVAL. */
HR_API hr_status hr_flow_take(hr_flow *f, void **item, int64_t timeout_ns);

/* Close: further puts are rejected, waiting consumers wake (they get the pending item, if any, then
 * HR_EEOF). Idempotent. NULL-safe. */
HR_API void hr_flow_close(hr_flow *f);

/* Counters, consistent with each other (read under the lock). */
HR_API void hr_flow_get_stats(hr_flow *f, hr_flow_stats *st);

#ifdef __cplusplus
}
#endif
#endif
