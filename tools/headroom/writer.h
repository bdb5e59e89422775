/* The output thread of `headroom run`: delivered frames are copied into one of a few slots and the
 * sinks (PNG, raw, depth, overlay, telemetry, report) run on a thread of their own, so writing never
 * holds up the live loop. A frame is delivered when it got a slot; with --realtime a frame that finds
 * no free slot is dropped before inference (newest wins, counted), without it the loop waits. */
#ifndef HR_CLI_WRITER_H
#define HR_CLI_WRITER_H
#include <pthread.h>
#include "run.h"

#define WRITER_SLOTS 2

typedef struct writer_slot {
  hr_stream_result res;        /* the stream's result, its pointers moved into this slot */
  float *alpha, *raw, *input_f, *fgr; /* copies: alpha, the model's own output (stateless models), model input, foreground */
  hr_frame frame;              /* the input frame (a copy when a sink reads it, else ts only) */
  void *frame_buf; size_t frame_cap;
  char reason[HR_HEALTH_REASON_LEN];
  int64_t index, done;
} writer_slot;

typedef struct writer {
  run_cfg *cfg;
  void **ctx[2];               /* sink contexts: data, record */
  writer_slot slot[WRITER_SLOTS];
  int head, count, busy, stop;
  pthread_t thread;
  int started;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int failed;                  /* a sink failed: the message is in err, the loop stops */
  char err[1024];
  int64_t written;             /* frames every sink took */
  hr_stats *st_out;            /* the writer's time a frame */
} writer;

/* Allocate the slots for frames of the run (model size w x h) and start the thread. 0 on success. */
int writer_start(writer *w, run_cfg *cfg, void **data_ctx, void **record_ctx, hr_stats *st_out);
/* A free slot: waits for one when wait, else NULL when none is free. */
writer_slot *writer_acquire(writer *w, int wait);
/* Copy what the sinks need of r into the slot (r's views are valid only until the next push). */
int writer_fill(writer *w, writer_slot *s, const hr_stream_result *r, int64_t index, int64_t done);
void writer_submit(writer *w);
/* Write what is queued, stop the thread, free the slots. NULL-safe on a writer never started. */
void writer_finish(writer *w);
/* A sink failed (message copied into buf). */
int writer_failed(writer *w, char *buf, size_t n);
#endif
