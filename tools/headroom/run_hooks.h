/* Hooks the live loop (cmd_run.c) calls: depth fusion (run_depth.c) and the overlay video (overlay.c). */
#ifndef HR_RUN_HOOKS_H
#define HR_RUN_HOOKS_H
#include <stddef.h>
#include <stdint.h>
#include "headroom.h"

/* ---- depth fusion (issue 7) ----
 * Color frames are pushed in order as they are processed; depth frames are read from their own
 * source and paired by the aligner (nearest within the window, each depth frame used once). A
 * pairing decision can come one or more color frames later (a later frame may claim a depth frame),
 * so decisions are popped separately; the alpha of an undecided frame is kept in a small ring
 * allocated at open. Outputs for a fused frame: DIR/depth/NNNNNN.png (16-bit mm, the person's depth:
 * depth where alpha >= 0.5, else 0) and, with occlude_m > 0, DIR/occlusion/NNNNNN.png (8-bit, 255
 * where a person pixel lies in front of a virtual object at occlude_m metres). */
typedef struct depth_ctx depth_ctx;
typedef struct depth_opts {
  const char *spec;        /* TUM folder (its depth.txt) or any depth source hr_source_open accepts */
  double scale;            /* depth units per metre in 16-bit PNGs (TUM 5000, RealSense 1000) */
  double window_ms;        /* pairing window, default 16 */
  double occlude_m;        /* 0 = no occlusion mask */
  const char *out_dir;     /* run's output folder */
  int out_w, out_h;        /* alpha size */
} depth_opts;
int depth_open(depth_ctx **out, const depth_opts *o, char *err, size_t err_len);
/* After color frame `index` (timestamp ts_ns) was processed; alpha is valid during the call only. */
int depth_on_color(depth_ctx *d, int64_t index, int64_t ts_ns, const float *alpha, int w, int h);
/* One decision if available: returns 1 and fills index, dt_ms (NAN if unpaired), fused; 0 if none. */
int depth_pop(depth_ctx *d, int64_t *index, double *dt_ms, int *fused);
/* End of the color stream: every pending color frame gets its decision (pop them afterwards). */
int depth_finish(depth_ctx *d);
/* The occlusion mask (out_w x out_h, 255 = occluding) of the newest fused frame and its index;
 * NULL without occlusion or before the first fused frame. Valid until the next depth call. */
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
