/* The stream's tail-every-frame mode: the network runs on a worker thread at whatever rate it
 * reaches; the guided-filter tail runs on the caller's thread on every frame, with the newest
 * low-resolution coefficients (A, b) the network has published and the frame itself as guidance.
 * The recurrent state advances once per network run.
 *
 * Threads: the caller (the stream's push) and one worker. The worker only ever runs the session's
 * network ops and copies A and b into a free slot of three (triple buffering: the slot the tail
 * reads, the newest published one, and the one being written are always different). Everything
 * else that touches the session (replan, suspend, resume, reset, state save or load, fault
 * injection into the state) waits for the worker first (hr__tail_drain); the stream does that.
 *
 * Motion: coefficients made on an older frame are warped to the current one before the tail
 * (motion.h): each job keeps its frame's luma on the coefficients' grid (made when the job is
 * posted); each push makes the current frame's, estimates the motion between the two and moves A
 * and b along it. Off with HR_TAIL_WARP=0 (for comparisons), for frame formats without a luma, and
 * for coefficients kept from a previous plan of another size; a frame's own coefficients are used
 * as they are.
 *
 * Memory: the worker's thread, three coefficient slots (2 x lr_h x lr_w floats each: the alpha's
 * channel of A and b, sized for
 * the largest plan seen), the tail's tables (hr__fgf), the H x W matte, and the motion's buffers
 * (five lr_h x lr_w lumas, the warped A and b, motion.h's tables) are allocated at create
 * and at hr__tail_prepare after a plan change; a frame allocates nothing. */
#ifndef HR_STREAM_TAIL_H
#define HR_STREAM_TAIL_H
#include <pthread.h>
#include "session/session_impl.h"
#include "session/kernels.h"
#include "stream/motion.h"

typedef struct hr__tailrun {
  hr_session *s;               /* borrowed: the stream's session */
  hr__split_info si;
  int ok;                      /* the session's plan runs split (hr__split_query) */
  pthread_t th;
  int started;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int busy, job, quit;         /* under mu */
  void (*call)(void *);        /* a call to make on the worker (hr__tail_call), under mu */
  void *call_arg;
  int nice;                    /* the worker's nice value (Linux) */
  int reset_pending;           /* zero the state before the next run is posted (no wait for the
                                  run in flight; its coefficients are still shown once) */
  int64_t job_frame;           /* the frame the running job came from */
  float *coef[3];              /* A then B, each lr_h x lr_w (the alpha's channel) */
  size_t coef_cap;             /* floats per slot */
  int pub, reading;            /* slot published last (-1: none since prepare), slot the tail reads */
  int64_t coef_frame[3];       /* the frame each slot's coefficients came from */
  int coef_h[3], coef_w[3];    /* and their size (a plan change keeps the old ones on show) */
  double coef_ms[3];           /* how long the network run that made it took */
  int coef_threads[3];         /* and on how many CPU threads (hr_outputs.threads) */
  int64_t runs;                /* network runs completed */
  hr_status net_st;            /* the last run's status; its message in net_err */
  char net_err[256];
  hr__fgf fgf[2];              /* the tail's tables: the current plan's, and the previous plan's
                                  while its coefficients are still on show */
  float *alpha;                /* H x W: the matte the tail writes (the stream's result) */
  uint8_t *q8;                 /* set by the caller (its own, >= H x W bytes): the tail writes the
                                  8-bit matte there instead (hr__fgf_run_u8; alpha unused) */
  size_t alpha_cap;
  /* motion compensation (see above) */
  int warp;                    /* on (HR_TAIL_WARP unset or not 0) */
  hr__motion mo;               /* for the current plan's grid and frame size (mo.mem NULL: none) */
  uint8_t *lum[3];             /* each slot's frame's luma on mo's grid */
  int lum_ok[3];               /* that luma is there (and on mo's grid) */
  uint8_t *lum_job;            /* the posted job's frame's luma (copied to its slot on publish) */
  int lum_job_ok;
  uint8_t *lum_cur;            /* the current frame's, when no job was posted on it */
  float *warped;               /* A then B, warped */
  double warp_px;              /* the last warp's mean motion (grid pixels) */
  /* the lag's own error, measured: the matte shown on a job's frame (its older coefficients, warped)
   * against that job's own, on the coefficients' grid, when the job's run is published */
  uint8_t *shown;              /* the matte shown on the posted job's frame, on mo's grid (8 bits) */
  int64_t shown_frame;         /* that frame (-1: none to compare) */
  /* the pool for the tail (hr__op_gate): the network's run stops between two ops while the caller's
   * tail runs over the session's pool, instead of the two sharing the CPUs */
  hr__op_gate gate;            /* the session's s->gate from attach to destroy (with take_pool) */
  int in_job;                  /* the worker runs a network job (not a call), under mu */
  int parked;                  /* the worker waits in gate.yield, under mu (cleared by the give) */
  unsigned gen;                /* pool gives that released a parked run, under mu */
  int take_pool;               /* on (HR_TAIL_POOL unset or not 0) */
  double give_ms, held_ms;     /* when the caller last gave the pool back (now_ms), and how long it had it */
} hr__tailrun;

/* The tail's output for one frame. */
typedef struct hr__tail_out {
  const float *alpha;          /* H x W, valid until the next apply; NULL with q8: */
  const uint8_t *alpha_u8;     /* q8's bytes, with their sum and the NaN/Inf count behind them */
  int64_t byte_sum, nonfinite;
  int width, height;
  int64_t coef_frame;          /* the frame whose network run made the coefficients used */
  double net_ms;               /* that run's time */
  int net_threads;             /* that run's CPU threads (1: the pool was measured slower) */
  double src_ms, tail_ms;      /* this frame's share on the caller's thread */
  double wait_ms;              /* time spent waiting for coefficients (the first run, or this
                                  frame's own run) */
  int new_coef;                /* the coefficients are newer than the previous frame's: a run
                                  finished since (each run is seen so once) */
  int warped;                  /* the coefficients were moved along the motion since their frame */
  double lag_off, lag_band;    /* with new coefficients whose frame was shown with older ones: the
                                  share of the grid's pixels whose matte then was off by > 0.1 from
                                  the new one (the lag's error), and the share in the new matte's
                                  soft band (0.1 < alpha < 0.9: the edges, what the lag moves);
                                  -1 when this push has no such measure */
} hr__tail_out;

/* Start the worker, at nice value `nice` on Linux (0: as the caller). err gets one line. Reads
 * HR_TAIL_WARP (0: no motion compensation). */
hr_status hr__tail_start(hr__tailrun *t, int nice, char *err, size_t err_len);
/* Run fn(arg) on the worker and wait for it (the stream creates its session there, so that the
 * session's pool threads are made at the worker's priority). */
void hr__tail_call(hr__tailrun *t, void (*fn)(void *), void *arg);
/* The same without waiting: the worker must be idle (hr__tail_idle); it is busy until fn returns
 * (no run is posted meanwhile; the tail shows the newest coefficients). If fn changes the session's
 * plan, the caller must not let hr__tail_push post a run (may_post) until its hr__tail_prepare. */
void hr__tail_post(hr__tailrun *t, void (*fn)(void *), void *arg);
/* Use session s (made through hr__tail_call) and prepare for its plan. HR_ENOTSUP with a message
 * when its plan cannot run split. */
hr_status hr__tail_attach(hr__tailrun *t, hr_session *s, char *err, size_t err_len);
/* After the session's plan changed (drained before): re-read the split, size the buffers and the
 * tail's tables. keep: the newest coefficients stay on show (with their own tables) until the new
 * plan's first run publishes, so a change costs no frame a wait; else they are dropped and the next
 * push waits for a run (also when the slots had to grow). Returns HR_OK with t->ok 0 when the new
 * plan cannot run split. */
hr_status hr__tail_prepare(hr__tailrun *t, int keep);
/* What prepare allocates for H x W frames and h x w coefficients, tables for two plans, with the
 * motion's buffers when warp, and the H x W float matte unless the tail writes bytes (u8: q8 set)
 * (hr_stream_tail_bytes, hr_stream_tail_bytes_u8). */
int64_t hr__tail_bytes(int H, int W, int h, int w, int warp, int u8);
/* Whether the motion warp is on (HR_TAIL_WARP=0 turns it off): read by start, and by what counts
 * the tail's memory. */
int hr__tail_warp_on(void);
/* Wait until the worker is idle. */
void hr__tail_drain(hr__tailrun *t);
/* 1 when no network run is in flight (the session's state may be read). */
int hr__tail_idle(hr__tailrun *t);
/* Frame f (at the plan's size; borrowed for the call): start a network run on it when may_post and
 * the worker is idle (its resize to the processing size runs here, on the caller's thread), then the tail on f
 * with the newest coefficients (waiting for the first run after a prepare). When a run was started
 * on f, wait for f's own coefficients until wait_ms after this call began (the resize counts), if
 * the last run took no longer than what is left (0: never wait). */
hr_status hr__tail_push(hr__tailrun *t, const hr_frame *f, int64_t frame, int may_post, double wait_ms, hr__tail_out *o);
/* Stop the worker and free everything. NULL-safe on a zeroed struct. */
void hr__tail_destroy(hr__tailrun *t);
#endif
