/* `headroom run`: its options, and the output sinks the loop hands every delivered frame to. */
#ifndef HR_CLI_RUN_H
#define HR_CLI_RUN_H
#include "headroom.h"
#include "run_hooks.h"

enum { TAIL_AUTO = 2 };

typedef struct run_opts {
  const char *model, *input, *out, *input_format, *state_in, *state_out, *telemetry, *report, *overlay;
  const char *profile, *ballast, *inject, *depth;
  const char *composite, *fallback, *out_video, *v4l2_out;   /* sink_composite.c */
  int w, h, frames, start, raw, dump_input, stateless, threads, scene_cut, quiet, realtime, adapt, no_governor;
  int tail_every_frame;         /* 0 off, 1 asked (--tail-every-frame), TAIL_AUTO: on where possible */
  double net_budget_ms;
  int no_alpha, status, fgr;
  float ratio;
  double budget_ms, depth_scale, depth_window_ms, occlude_m;
  hr_backend backend;
  char tel_path[4096];
} run_opts;

/* run --realtime's default mode: TAIL_AUTO (the tail every frame where the plan allows it) or 0
 * (the processing-size ladder alone). Shared by `run` and `plan --realtime`, so the plan counts the
 * tail's memory exactly when the run will have it (with hr_plan_info.tail_split). */
int run_tail_default(int realtime, int adapt, double budget_ms, int fgr, hr_backend backend);

/* Parse argv into o. 0 on success; -1 after printing the problem (exit status 2). */
int run_parse(int argc, char **argv, run_opts *o);

/* What the sinks know of the run. */
typedef struct run_cfg {
  const run_opts *o;
  const char *model_name;
  int frame_w, frame_h;        /* source frames */
  int width, height;           /* model input = alpha size */
  int n_state;                 /* 0: a stateless model (its raw output is written too) */
  double fps;                  /* the source's frame rate, 0 unknown */
  hr_stream *stream;
  depth_ctx *depth;            /* the depth source and the writer of the stream's fusion decisions
                                  (run_depth.c), made by depth_open in cmd_run when --depth is on;
                                  freed by the run after every sink closed */
  /* Where the depth sink hands each pairing decision the stream made (it may come a frame or two
   * after the frame): the telemetry sink, when there is one, fills its waiting lines with it. */
  void (*depth_decided)(void *listener, int64_t index, double dt_ms, int fused);
  void *depth_listener;
} run_cfg;

/* One delivered frame, as every sink sees it during its write call. */
typedef struct run_frame {
  int64_t index;               /* source frame number: output file names */
  int64_t done;                /* frames delivered before this one */
  const hr_stream_result *res; /* alpha NULL when the stream was suspended */
  hr_telemetry_record *rec;    /* complete when the telemetry sink sees it */
} run_frame;

/* The end of a run, for the sinks' close. */
typedef struct run_end {
  int interrupted;             /* stopped by a signal or an error before the source ended */
} run_end;

/* A sink (dav1d's muxers are the model): open returns 0 and *ctx (NULL: not asked for by the
 * options); write 0, or -1 with "file: reason" in err; unwrite (optional) takes back what write
 * made for this frame, when a later sink failed on it; close writes what is left and frees. */
typedef struct sink_ops {
  const char *name;
  int (*open)(void **ctx, run_cfg *cfg, char *err, size_t n);
  int (*write)(void *ctx, const run_frame *f, char *err, size_t n);
  void (*unwrite)(void *ctx, const run_frame *f);
  int (*close)(void *ctx, const run_end *e, char *err, size_t n);
} sink_ops;

/* Every sink, in write order (NULL-terminated). Data sinks write the frame's files; record sinks
 * come after them, once the frame's output time is known: telemetry, then the report (which reads
 * the telemetry file at close). Closed in the same order. */
extern const sink_ops *const run_data_sinks[];
extern const sink_ops *const run_record_sinks[];
extern const sink_ops run_sink_composite;   /* sink_composite.c */
#endif
