/* headroom sync API: pair timestamped color and depth streams within a time window. Included by headroom.h. */
#ifndef HEADROOM_SYNC_H
#define HEADROOM_SYNC_H
#include "headroom/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------------
 * Aligner: pairs each color frame with the nearest depth frame within a window, live.
 *
 * The rule (offline, exact): candidates are all (color c, depth d) with |d.ts - c.ts| <= window.
 * Sort them by key (|dt|, c.ts, d.ts) ascending; walk the list and take a candidate when neither
 * its color nor its depth is taken yet (TUM associate.py's greedy and tuple-sort tie-break: equal
 * |dt| -> earlier color first, then earlier depth; TUM's bound is strict, ours inclusive). Each color
 * gets at most one depth, each depth serves at most one color. hr_associate_offline() is this rule.
 *
 * Online: frames wait in fixed buffers; after every push the aligner decides what no future frame
 * can change. Future frames of a stream come after its newest timestamp, so a candidate of key k
 * is safe from newcomers when newest_depth - c.ts >= k - 1 and newest_color - d.ts >= k - 1 (ties
 * go to the older frame); a candidate is final when it is safe and every smaller-key candidate
 * sharing a frame is finally refused (a three-valued run of the greedy: taken, refused, unknown).
 * Hold-back: a color frame waits until it is finally paired, or a depth frame later than
 * c.ts + window has arrived and none of its candidates can win (then "no depth"). The result is
 * exactly the offline rule's while no frame is forced. A frame is forced when its buffer is full
 * (push), or when the newest timestamp of either stream is more than max_latency past it: it then
 * takes its partner in the greedy of the frames known now (record flagged, stats.forced_*). Only
 * then can results differ: the forced frame, and frames linked to it through shared candidates.
 * ------------------------------------------------------------------------------------------- */
typedef struct hr_aligner hr_aligner;

typedef struct hr_aligner_params {
  int64_t window_ns;       /* largest |depth.ts - color.ts| of a pair, inclusive; 0..1e9 ns.
                              Default 16000000 (16 ms; TUM's tools use 20 ms). */
  int64_t max_latency_ns;  /* a frame still undecided when the newest timestamp of either stream
                              is more than this past its own is forced; 0 = no limit (capacity
                              only); 0..60e9 ns. Default 200000000 (200 ms: depth may arrive
                              a few frames late without forcing anything). */
  int color_capacity;      /* color frames held: undecided, or decided and waiting behind an older
                              undecided one; 1..1024. Default 32. */
  int depth_capacity;      /* undecided depth frames held; 1..1024. Default 32. */
} hr_aligner_params;

HR_API void hr_aligner_params_default(hr_aligner_params *p);

/* Validates p (HR_EINVAL with a message in err if non-NULL), then allocates everything the
 * aligner will ever use (stats.bytes of it: 14 KiB at the defaults; Nc*Nd*8 + (Nc+Nd)*~100
 * bytes). Pushes, pops and flushes never allocate. On failure *out is NULL. One aligner must be
 * driven by one thread at a time. Cost: ~0.1 us a push at 60 Hz (bench/sync_bench.c); a push
 * walks every held frame, so ~15 us with 1024 frames held. */
HR_API hr_status hr_aligner_create(const hr_aligner_params *p, hr_aligner **out, char *err, size_t err_len);
/* NULL-safe. Frames still held are forgotten (their ids are the caller's to release). */
HR_API void hr_aligner_destroy(hr_aligner *a);

/* What pop hands back. Ids are the caller's handles: the aligner never touches pixels. */
typedef enum hr_aligned_kind {
  HR_ALIGNED_PAIR = 1,          /* color_* and depth_*: |dt_ns| <= window */
  HR_ALIGNED_COLOR_ONLY = 2,    /* color_*: no depth within the window ("no depth") */
  HR_ALIGNED_DEPTH_UNUSED = 3,  /* depth_*: no color took it; the caller may release it */
} hr_aligned_kind;

enum {
  HR_ALIGNED_FORCED_FULL = 1u << 0,     /* decided early: a buffer was full */
  HR_ALIGNED_FORCED_LATENCY = 1u << 1,  /* decided early: max_latency passed */
};

typedef struct hr_aligned_pair {
  hr_aligned_kind kind;
  uint32_t flags;              /* HR_ALIGNED_FORCED_* of the frame(s) of this record, 0 if exact */
  uint64_t color_id, depth_id; /* the ids given to push; 0 for the absent side */
  int64_t color_ts_ns, depth_ts_ns; /* 0 for the absent side */
  int64_t dt_ns;               /* depth_ts_ns - color_ts_ns for a PAIR, else 0 */
} hr_aligned_pair;

/* Push one frame (timestamps: int64 ns, strictly increasing within a stream and within a segment;
 * |ts| <= 2^62). Returns:
 *   HR_OK      accepted; pop until HR_EAGAIN to collect what became final.
 *   HR_EINVAL  ts not after the stream's previous one (never reordered: the message names both
 *              timestamps), or a NULL handle. Nothing changed; counted in stats.refused.
 *   HR_ERANGE  |ts| > 2^62. Nothing changed; counted in stats.refused.
 *   HR_EAGAIN  decided records are waiting: pop them first (a caller that pops until HR_EAGAIN
 *              after every push never sees this). Nothing changed; counted in stats.refused.
 * A full buffer never refuses a push: its oldest undecided frame is forced to make room. */
HR_API hr_status hr_aligner_push_color(hr_aligner *a, int64_t ts_ns, uint64_t id);
HR_API hr_status hr_aligner_push_depth(hr_aligner *a, int64_t ts_ns, uint64_t id);

/* Next final record: HR_OK and *out filled, or HR_EAGAIN when nothing is final yet. Records come
 * in the order they became final; color frames (PAIR, COLOR_ONLY) always in timestamp order;
 * a DEPTH_UNUSED may come before an older color frame's record. */
HR_API hr_status hr_aligner_pop(hr_aligner *a, hr_aligned_pair *out);

/* End of stream: no more frames will come, so everything held is decided by the exact rule (not
 * forced) and queued for pop. The next push starts a new segment: its timestamps are not compared
 * with, nor paired with, those before the flush. */
HR_API hr_status hr_aligner_flush(hr_aligner *a);

/* Counters since create (frames counted when their decision is made, not when popped). */
typedef struct hr_aligner_stats {
  int64_t color_in, depth_in;   /* frames accepted */
  int64_t pairs;                /* color frames paired with a depth frame */
  int64_t color_unmatched;      /* color frames decided with no depth */
  int64_t depth_unused;         /* depth frames released unpaired */
  int64_t forced_full;          /* frames decided early because their buffer was full */
  int64_t forced_latency;       /* frames decided early because max_latency passed */
  int64_t refused;              /* pushes refused (see push) */
  int64_t max_abs_dt_ns;        /* largest |dt| of a pair (<= window) */
  int color_held, depth_held;   /* undecided (or blocked) color frames, undecided depth frames now */
  int color_held_peak, depth_held_peak; /* high-water marks: never above the capacities */
  int queued, queued_peak;      /* records waiting for pop (<= Nc + Nd + 1) */
  size_t bytes;                 /* memory allocated at create, all of it; never grows */
} hr_aligner_stats;

HR_API void hr_aligner_get_stats(const hr_aligner *a, hr_aligner_stats *s);
/* Last error message ("" if none). Owned by the aligner. */
HR_API const char *hr_aligner_last_error(const hr_aligner *a);

/* The offline rule above over whole lists (strictly increasing timestamps, ns). match_out[i] is
 * the index of color[i]'s depth frame, or -1. window 0..1e9 ns. May allocate (freed on return).
 * HR_EINVAL (bad arguments, non-increasing lists), HR_ENOMEM. */
HR_API hr_status hr_associate_offline(const int64_t *color, int nc, const int64_t *depth, int nd,
                               int64_t window_ns, int *match_out);

#ifdef __cplusplus
}
#endif
#endif
