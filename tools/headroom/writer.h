/* The output thread of `headroom run`: delivered frames are copied into one of a few slots and the
 * sinks (PNG, raw, depth, overlay, telemetry, report) run on a thread of their own, so writing never
 * holds up the live loop. A frame is delivered when it got a slot; with --realtime a frame that finds
 * no free slot is dropped before inference (newest wins, counted), without it the loop waits. */
#ifndef HR_CLI_WRITER_H
#define HR_CLI_WRITER_H
#include <pthread.h>
#include "run.h"

#define WRITER_SLOTS 4

typedef struct writer_slot {
  hr_stream_result res;        /* the stream's result, its pointers moved into this slot */
  float *alpha, *raw, *input_f, *fgr; /* copies: alpha, the model's own output (stateless models), model input, foreground */
  uint8_t *alpha8;             /* instead of alpha when the 8-bit matte is all the sinks read (writer_alpha8_wanted) */
  int has_alpha8;              /* this frame's alpha8 is filled (the stream was not suspended) */
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
  int alpha8;                  /* slots keep the matte as 8 bits (writer_alpha8_wanted) */
  int alpha_unread;            /* no sink reads the matte (--no-alpha, no other output of it): no copy */
  int failed;                  /* a sink failed: the message is in err, the loop stops */
  char err[1024];
  int64_t written;             /* frames every sink took */
  hr_stats *st_out;            /* the writer's time a frame */
} writer;

/* Whether the slots carry the matte as 8 bits, the stream's own
 * (hr_stream_result.alpha_u8: 0 at or below 0, 255 at or above 1, else round(255 a), ties to even):
 * yes when the alpha PNGs and the compositors (--composite, --out-video, --v4l2-out, which blend
 * with the bytes) are the only outputs that read the matte (no raw, input dump, foreground,
 * overlay, report or depth). Then each slot holds W x H bytes instead of W x H floats,
 * hr_stream_result.alpha in the slot is NULL and writer_alpha8() gives the 8-bit matte (NULL for a
 * suspended frame); the alpha PNG sink then keeps no buffer of its own. writer_start takes it from
 * the options; sinks may ask before (at open). */
int writer_alpha8_wanted(const run_opts *o);
/* 1 when no sink reads the float matte (the alpha PNGs and compositors at most, as 8 bits): the stream need not make it. */
int writer_float_unread(const run_opts *o);
/* The 8-bit matte of a frame handed to the sinks by this writer, or NULL (floats in the slots, suspended). */
const uint8_t *writer_alpha8(const run_frame *f);

/* Allocate the slots for frames of the run (model size w x h) and start the thread. 0 on success. */
int writer_start(writer *w, run_cfg *cfg, void **data_ctx, void **record_ctx, hr_stats *st_out);
/* A free slot: waits for one when wait, else NULL when none is free. */
writer_slot *writer_acquire(writer *w, int wait);
/* Copy what the sinks need of r into the slot (r's views are valid only until the next push). 0; -1
 * out of memory; -2 the slots take the 8-bit matte and r has none. */
int writer_fill(writer *w, writer_slot *s, const hr_stream_result *r, int64_t index, int64_t done);
void writer_submit(writer *w);
/* Write what is queued, stop the thread, free the slots. NULL-safe on a writer never started. */
void writer_finish(writer *w);
/* A sink failed (message copied into buf). */
int writer_failed(writer *w, char *buf, size_t n);
#endif
