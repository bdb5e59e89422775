/* Depth fusion inside the stream: color frames' mattes and depth frames paired by the online
 * aligner, each pair fused into the person's depth (and an occlusion mask). Private to src/stream. */
#ifndef HR_STREAM_DEPTH_H
#define HR_STREAM_DEPTH_H
#include "headroom.h"

typedef struct hr__depth hr__depth;

/* From the stream's params (depth_window_ms, depth_scale, occlude_m, depth_width/height, the
 * session's frame size) for mattes of aw x ah. Everything is allocated here: the pool, the aligner,
 * the ring, the tables, the occlusion buffers. */
hr_status hr__depth_create(const hr_stream_params *p, int aw, int ah, hr__depth **out, char *err, size_t err_len);
void hr__depth_destroy(hr__depth *d);

/* A depth frame (copied), or NULL: the depth stream ended. */
hr_status hr__depth_push_depth(hr__depth *d, const hr_frame *f);
/* Color frame `frame` at ts with its matte (w x h floats; NULL: no matte, not paired). Drops the
 * decisions the previous push reported and nobody popped, then pairs; fills *out (the result's
 * section) and this frame's record fields. */
hr_status hr__depth_push_color(hr__depth *d, int64_t frame, int64_t ts_ns, const float *alpha, int w, int h,
                               hr_stream_depth *out, hr_telemetry_record *rec);
hr_status hr__depth_pop(hr__depth *d, hr_stream_depth *out);
hr_status hr__depth_flush(hr__depth *d);
/* Color frames decided without depth since the last call (the stream tells health). */
int hr__depth_take_unpaired(hr__depth *d);
void hr__depth_stats(const hr__depth *d, hr_stream_stats *st);
const char *hr__depth_last_error(const hr__depth *d);
#endif
