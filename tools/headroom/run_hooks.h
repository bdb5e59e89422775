/* Hooks the live loop (cmd_run.c) calls: depth fusion (run_depth.c) and the overlay video (overlay.c). */
#ifndef HR_RUN_HOOKS_H
#define HR_RUN_HOOKS_H
#include <stddef.h>
#include <stdint.h>
#include "headroom.h"

/* ---- depth fusion (issue 7) ----
 * The stream pairs and fuses (params.depth, stream.h); run_depth.c reads the depth source (a TUM
 * folder) ahead of the color frames, hands the stream's decisions to the output thread and writes
 * there, for a fused frame, DIR/depth/NNNNNN.png (16-bit mm, the person's depth: depth where
 * alpha >= 0.5, else 0) and, with occlude_m > 0, DIR/occlusion/NNNNNN.png (8-bit, 255 where a
 * person pixel lies in front of a virtual object at occlude_m metres). A decision can come one or
 * more color frames later (a later frame may claim a depth frame). */
struct run_opts;
typedef struct depth_ctx depth_ctx;
/* Without o->depth: 0 and *out NULL. Else opens the depth source, makes DIR/depth (and
 * DIR/occlusion) and sets the stream's depth params in p (on, window, scale, occlusion, size). */
int depth_open(depth_ctx **out, const struct run_opts *o, hr_stream_params *p, char *err, size_t err_len);
/* The stream is made: the output thread's buffers for mattes of aw x ah. */
int depth_attach(depth_ctx *d, hr_stream *s, int aw, int ah);
/* Live loop, before pushing a color frame at color_ts: depth frames read and pushed up to the first
 * one beyond color_ts + window. NULL-safe. */
void depth_feed(depth_ctx *d, int64_t color_ts);
/* Live loop, after the push of source frame `index`: the stream's decisions to the output thread. */
void depth_take(depth_ctx *d, const hr_stream_result *r, int64_t index);
/* Output thread: write the decisions taken up to the push of frame `tag`; each one is told to
 * decided (index, dt_ms or NAN, fused = PNGs written). -1 with "cannot write FILE: reason" in err
 * when a PNG could not be written (the rest wait for the next call). */
int depth_write_upto(depth_ctx *d, int64_t tag, void (*decided)(void *, int64_t, double, int), void *listener, char *err, size_t n);
/* After the output thread stopped: the stream decides every pending frame; all written (-1: one
 * or more could not be, err says the last). */
int depth_finish(depth_ctx *d, void (*decided)(void *, int64_t, double, int), void *listener, char *err, size_t n);
/* The occlusion mask (out_w x out_h, 255 = occluding) of the newest fused frame written and its
 * index; NULL without occlusion or before the first one. Output thread. */
const uint8_t *depth_last_occlusion(const depth_ctx *d, int64_t *index);
/* Counters for the run summary. */
void depth_summary(const depth_ctx *d, char *buf, size_t n);
void depth_close(depth_ctx *d);

/* ---- overlay video (issue 8) ----
 * The input frame with the matte drawn over it (tinted person, dimmed background; occlusion in a
 * second tint when given), encoded with FFmpeg's libraries (libx264 if present, else mpeg4). */
typedef struct overlay_ctx overlay_ctx;
int overlay_open(overlay_ctx **out, const char *path, int w, int h, double fps, char *err, size_t err_len);
/* input: any pixel format the frame sources produce; alpha aw x ah (resampled to the frame if sizes differ). */
int overlay_write(overlay_ctx *o, const hr_frame *input, const float *alpha, int aw, int ah, const uint8_t *occlusion);
int overlay_close(overlay_ctx *o);
#endif
