/* Session internals shared by the session, the executor backends and tests. */
#ifndef HR_SESSION_IMPL_H
#define HR_SESSION_IMPL_H
#include <pthreadpool.h>
#include "plan/plan.h"
#include "ingest/ingest.h"

typedef struct hr__exec hr__exec; /* backend state: one kernel per runtime op */

/* Denormals flushed (FTZ | DAZ) on the calling thread while it runs ops: XNNPACK's pool workers
 * flush them, the calling thread does not, and the small ops run there. Returns what
 * hr__ftz_end restores. */
#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
static inline unsigned hr__ftz_begin(void) { unsigned c = _mm_getcsr(); _mm_setcsr(c | 0x8040); return c; }
static inline void hr__ftz_end(unsigned c) { _mm_setcsr(c); }
#else
static inline unsigned hr__ftz_begin(void) { return 0; }
static inline void hr__ftz_end(unsigned c) { (void)c; }
#endif

/* The per-plan fields (plan, arena, state, src_buf, src_ptr, alpha_buf, alpha8, bk, bimpl, op_us, row_scratch,
 * kernel_bytes, kernel_shared_bytes, and ing when frames of another size are declared) form the
 * session's plan bundle: session.c's build() makes a new one in a scratch hr_session and moves it
 * in whole, so nothing may keep a pointer to the hr_session a bundle was made in. */
struct hr_session {
  hr_model *m;
  hr_session_params p;
  hr__plan *plan;
  void *arena;                 /* activations, plan->arena_bytes */
  float *state[8];             /* recurrent state buffers, updated in place */
  float *src_buf;              /* materialised model input (W*H*3), NULL when the frame is read in place */
  const float *src_ptr;        /* what the src value points at for this frame */
  float *alpha_buf;            /* alpha extracted from multi-channel outputs (meet), else NULL */
  uint8_t *alpha8;             /* params.alpha_u8: the 8-bit alpha when the backend makes none itself */
  int alpha8_made;             /* the last run's guided-filter tail wrote alpha8 itself (exec.c K_FGF:
                                  hr__fgf_run_u8); the float alpha was not written */
  int64_t alpha8_bsum, alpha8_bad; /* the last push's 8-bit alpha: the bytes' sum where whoever
                                  made them summed them (that tail, the Vulkan tail), else -1;
                                  its NaN/Inf count behind them (every backend) */
  const struct hr__backend *bk; /* how the plan runs (backend/backend.h) */
  void *bimpl;                 /* the backend's handle for this plan (the CPU one is an hr__exec) */
  pthreadpool_t pool;
  struct hr__op_gate *gate;    /* set by the stream's tail mode: ops yield the pool between them (below) */
  int64_t frame_index;
  uint32_t pending_events;
  int profiling;
  double *op_us;               /* per-op time of the last frame when profiling */
  uint8_t *prev_luma;          /* scene-cut detector: 32x18 thumbnail of the previous frame */
  int have_prev_luma;
  hr__ingest_plan ing;          /* frame size -> model input size resampling tables */
  hr_frame cur;                 /* the frame being pushed (caller's, or a view of src_buf); planes NULL between pushes */
  float *row_scratch;           /* one input row as float RGB (scene-cut detector) */
  int64_t kernel_bytes;        /* measured: this session's own kernel memory (XNNPACK operator structs,
                                  unshared operators, our kernels' tables) */
  int64_t kernel_shared_bytes; /* measured: the model's shared templates this session's clones use */
  int64_t bytes_copied;        /* bytes copied by the library for the last frame (inputs converted) */
  struct { const void *p; size_t n; } reg[16]; /* hr_session_register_memory's ranges (kept across plans) */
  int n_reg;
  char backend_desc[256];       /* hr_session_backend */
  char err[512];
};

/* A run of the executor that another thread may stop between two ops, to use the session's pool
 * itself meanwhile (the stream's tail-every-frame mode: the full-resolution tail on every frame,
 * over the pool, while the network's run on the worker waits at an op boundary). Before each op the
 * executor reads `want`; when it is set it calls yield, which returns once the other thread is done
 * with the pool, and adds the time it waited to paused_ms (the run's own time, for tadapt.h, leaves
 * it out). Only the thread running the ops writes paused_ms. */
typedef struct hr__op_gate {
  int want;                    /* atomic: another thread waits for the pool */
  void (*yield)(struct hr__op_gate *g);
  double paused_ms;
} hr__op_gate;

hr_status hr__exec_create(hr_session *s, hr__exec **out);
/* The pool's threads asleep (a no-op dispatch with PTHREADPOOL_FLAG_YIELD_WORKERS), for a caller
 * that used the session's pool outside a run (see hr__op_gate). */
void hr__exec_park(hr_session *s);
/* The executor's own per-op records for a plan of n_ops ops, in bytes. */
int64_t hr__exec_table_bytes(int n_ops);
void hr__exec_destroy(hr__exec *ex);
/* Run every op of the plan. No allocation. Fails (s->err set) only if an operator reading the
 * caller's frame cannot be bound to it. */
hr_status hr__exec_run(hr_session *s, hr__exec *ex);
/* Ops [i0, i1) only (the split run below). The whole plan and the split's network may run on the
 * calling thread alone when that is measured faster (tadapt.h); its source resize always does. */
hr_status hr__exec_run_range(hr_session *s, hr__exec *ex, int i0, int i1);
/* The same on the calling thread alone, always: for a short range that a caller wants without
 * tail latency (the stream's tail-every-frame source resize: the pool's threads belong to the
 * network's worker, at a lower priority, and a push that shared them waited 7-19 ms for one of
 * them now and then where the range takes ~0.5 ms alone). */
hr_status hr__exec_run_range_alone(hr_session *s, hr__exec *ex, int i0, int i1);
/* The threads the last run of range [i0, i1) used (1: the calling thread alone); 0 when the range
 * does not adapt (the count is fixed: hr_session_params.threads_fixed, or no pool). */
int hr__exec_threads(const hr__exec *ex, int i0, int i1);
/* The CPU engine made the guided filter's A and b as the alpha's planes alone (h x w floats each,
 * at the start of their values; the fused low-resolution group without the foreground), not as
 * 4-channel images. */
int hr__exec_ab_planes(const hr_session *s);
/* The CPU threads the last run of ops [i0, i1) used: as above, else the session's thread count; 0
 * on a device backend. */
int hr__session_threads(const hr_session *s, int i0, int i1);
/* hr_session_replan for the stream's own ends (visiting its rungs at create, stream.c warm_rungs):
 * the same, but the caller made nothing happen, so no event is raised and, on failure, the
 * session's error message is left as it was. */
hr_status hr__session_replan_quiet(hr_session *s, int w, int h, float ratio);
/* hr_session_replan for a change of speed, not of memory (the stream's budget rung changes): the
 * replaced plan's pages are not given back to the OS (no malloc_trim) but stay in the heap, where
 * the next build takes them. Giving them back cost each such replan its pages' faults again: 51-65
 * ms against 6-14 ms on a 2-vCPU VM at 1920x1440 (0.133 - 0.213). What stays is at most what the
 * build held beside the running plan, which the governor admitted (hr__gov_build_fits); the stream
 * gives it back on the governor's RELEASE_CACHES (hr__heap_trim), and a suspend gives back all. */
hr_status hr__session_replan_keep(hr_session *s, int w, int h, float ratio);
/* Free heap pages back to the OS (malloc_trim; nothing elsewhere). */
void hr__heap_trim(void);

/* Split run: the stream's tail-every-frame mode (split.c). RVM's plan ends in the fused guided-
 * filter tail, which turns low-resolution coefficients A and b into the full-resolution matte with
 * the frame as guidance. Split in three: ops [0, src_end) read the frame (its resize to the
 * processing size), ops [src_end, tail) are the network (they read and write the arena and the
 * recurrent state only), and the tail runs apart on any frame with any A and b. */
typedef struct hr__split_info {
  int src_end, tail;           /* op indices as above */
  int lr_h, lr_w;              /* A and b: lr_h x lr_w x 4 floats each in the plan (the alpha is
                                  channel 3) */
  int H, W;                    /* the frame and the matte */
  int clip;                    /* the tail clips alpha to [0, 1] */
} hr__split_info;
/* 1 when the session's plan can run split (CPU backend, virtual input read in place, alpha-only
 * tail as the plan's last op), filling *si; 0 otherwise. */
int hr__split_query(const hr_session *s, hr__split_info *si);
/* The same of a plan alone, whichever backend will run it (hr_model_plan's tail_split). */
int hr__split_plan_query(const hr__plan *p, hr__split_info *si);
/* Ops [0, src_end) on frame f (at the plan's size): the network's input, in the arena; pool: over
 * the session's pool (the caller makes sure no other thread runs it), else on the calling thread
 * alone. */
hr_status hr__split_run_src(hr_session *s, const hr__split_info *si, const hr_frame *f, int pool);
/* Ops [src_end, tail), then the alpha's channel of A and b copied out (lr_h * lr_w floats each: the
 * tail needs no other without the foreground; hr__fgf.alpha_only_coef reads them). No allocation; safe
 * on another thread than the caller's as long as nothing else runs the session meanwhile. */
hr_status hr__split_run_net(hr_session *s, const hr__split_info *si, float *A, float *B);
#endif
