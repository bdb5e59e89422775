/* `headroom run`'s outputs, one sink each behind the sink_ops table: alpha PNGs, raw floats, the
 * model input dump, depth fusion, the overlay video, telemetry JSONL and the HTML report. Adding
 * an output is adding a sink here, not editing the loop. Every write failure names the file and
 * the reason (errno text). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"
#include "headroom/io.h"
#include "headroom/report.h"
#include "run.h"
#include "writer.h"

static int errno_fail(char *err, size_t n, const char *what, const char *path, int e) {
  snprintf(err, n, "cannot write %s%s%s: %s", what, *what ? " " : "", path, e ? strerror(e) : "encoder error");
  return -1;
}

static int mkdir_in(const char *out, const char *sub, char *err, size_t n) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", out, sub);
  if (hr_mkdirs(path)) { snprintf(err, n, "cannot create %s: %s", path, strerror(errno)); return -1; }
  return 0;
}

/* ---- alpha PNGs: DIR/alpha/NNNNNN.png, 8-bit ----
 * When they are the only output reading the matte, the writer's slots carry it as 8 bits
 * (writer_alpha8_wanted): no float copy and no 8-bit buffer here. */
typedef struct alpha_sink { const run_cfg *cfg; uint8_t *px; size_t cap; char path[4200]; } alpha_sink;

static int alpha_open(void **ctx, run_cfg *cfg, char *err, size_t n) {
  if (cfg->o->no_alpha) return 0;
  if (mkdir_in(cfg->o->out, "alpha", err, n)) return -1;
  alpha_sink *a = calloc(1, sizeof *a);
  if (!a) { snprintf(err, n, "out of memory"); return -1; }
  a->cfg = cfg;
  if (!writer_alpha8_wanted(cfg->o)) {
    a->cap = (size_t)cfg->width * (size_t)cfg->height;
    a->px = malloc(a->cap ? a->cap : 1);
    if (!a->px) { free(a); snprintf(err, n, "out of memory"); return -1; }
  }
  *ctx = a;
  return 0;
}

static int alpha_write(void *ctx, const run_frame *f, char *err, size_t n) {
  alpha_sink *a = ctx;
  const hr_stream_result *r = f->res;
  const uint8_t *px = writer_alpha8(f);
  if (!px) {
    if (!r->alpha || !a->px) return 0;
    size_t np = (size_t)r->width * (size_t)r->height;
    if (np > a->cap) { snprintf(err, n, "alpha %dx%d is larger than planned", r->width, r->height); return -1; }
    for (size_t i = 0; i < np; i++) { float v = r->alpha[i]; a->px[i] = (uint8_t)(v <= 0 ? 0 : v >= 1 ? 255 : lrintf(v * 255.f)); }
    px = a->px;
  }
  snprintf(a->path, sizeof a->path, "%s/alpha/%06lld.png", a->cfg->o->out, (long long)f->index);
  errno = 0;
  if (hr_png_write_gray8(a->path, r->width, r->height, px, r->width)) return errno_fail(err, n, "", a->path, errno);
  return 0;
}

static void alpha_unwrite(void *ctx, const run_frame *f) {
  alpha_sink *a = ctx;
  if (!f->res->alpha && !writer_alpha8(f)) return;
  snprintf(a->path, sizeof a->path, "%s/alpha/%06lld.png", a->cfg->o->out, (long long)f->index);
  unlink(a->path);
}

static int alpha_close(void *ctx, const run_end *e, char *err, size_t n) {
  alpha_sink *a = ctx;
  free(a->px);
  free(a);
  return 0;
}

/* ---- raw floats: DIR/raw/NNNNNN.pha.f32 (alpha), the model's own output for stateless models
 * (NNNNNN.out.f32), and with --fgr RVM's foreground (NNNNNN.fgr.f32, H x W x 3) ---- */
typedef struct raw_sink { const run_cfg *cfg; char path[4200]; } raw_sink;

static int raw_open(void **ctx, run_cfg *cfg, char *err, size_t n) {
  if (!cfg->o->raw && !cfg->o->fgr) return 0;
  if (mkdir_in(cfg->o->out, "raw", err, n)) return -1;
  raw_sink *r = calloc(1, sizeof *r);
  if (!r) { snprintf(err, n, "out of memory"); return -1; }
  r->cfg = cfg;
  *ctx = r;
  return 0;
}

static int raw_write(void *ctx, const run_frame *f, char *err, size_t n) {
  raw_sink *w = ctx;
  const hr_stream_result *r = f->res;
  if (!r->alpha) return 0;
  size_t np = (size_t)r->width * (size_t)r->height;
  if (r->fgr) {
    snprintf(w->path, sizeof w->path, "%s/raw/%06lld.fgr.f32", w->cfg->o->out, (long long)f->index);
    if (hr_file_write_atomic(w->path, r->fgr, np * 12)) return errno_fail(err, n, "", w->path, errno);
  }
  if (!w->cfg->o->raw) return 0;
  snprintf(w->path, sizeof w->path, "%s/raw/%06lld.pha.f32", w->cfg->o->out, (long long)f->index);
  if (hr_file_write_atomic(w->path, r->alpha, np * 4)) return errno_fail(err, n, "", w->path, errno);
  if (w->cfg->n_state == 0) {
    snprintf(w->path, sizeof w->path, "%s/raw/%06lld.out.f32", w->cfg->o->out, (long long)f->index);
    if (hr_file_write_atomic(w->path, r->raw, np * (size_t)r->raw_channels * 4)) return errno_fail(err, n, "", w->path, errno);
  }
  return 0;
}

static void raw_unwrite(void *ctx, const run_frame *f) {
  raw_sink *w = ctx;
  if (!f->res->alpha) return;
  snprintf(w->path, sizeof w->path, "%s/raw/%06lld.pha.f32", w->cfg->o->out, (long long)f->index);
  unlink(w->path);
  snprintf(w->path, sizeof w->path, "%s/raw/%06lld.out.f32", w->cfg->o->out, (long long)f->index);
  unlink(w->path);
  snprintf(w->path, sizeof w->path, "%s/raw/%06lld.fgr.f32", w->cfg->o->out, (long long)f->index);
  unlink(w->path);
}

static int plain_close(void *ctx, const run_end *e, char *err, size_t n) { free(ctx); return 0; }

/* ---- the model input: DIR/input/NNNNNN.src.f32 (W x H x 3 float RGB), DIR/input/meta.json ---- */
typedef struct input_sink { const run_cfg *cfg; float *tmp; char path[4200]; } input_sink;

static int input_open(void **ctx, run_cfg *cfg, char *err, size_t n) {
  if (!cfg->o->dump_input) return 0;
  if (mkdir_in(cfg->o->out, "input", err, n)) return -1;
  input_sink *s = calloc(1, sizeof *s);
  if (s) s->tmp = malloc((size_t)cfg->width * (size_t)cfg->height * 12);
  if (!s || !s->tmp) { free(s); snprintf(err, n, "out of memory"); return -1; }
  s->cfg = cfg;
  char meta[128];
  int len = snprintf(meta, sizeof meta, "{\"width\":%d,\"height\":%d}\n", cfg->width, cfg->height);
  snprintf(s->path, sizeof s->path, "%s/input/meta.json", cfg->o->out);
  if (hr_file_write_atomic(s->path, meta, (size_t)len)) { int e = errno; free(s->tmp); free(s); return errno_fail(err, n, "", "meta.json", e); }
  *ctx = s;
  return 0;
}

static int input_write(void *ctx, const run_frame *f, char *err, size_t n) {
  input_sink *s = ctx;
  const hr_stream_result *r = f->res;
  if (!r->alpha) return 0;
  const hr_frame *in = r->input;
  const float *src = r->model_input;   /* converted by the session; else the frame is the input itself */
  if (!src && in->width == s->cfg->width && in->height == s->cfg->height) {
    for (int y = 0; y < in->height; y++) hr_frame_row_rgbf(in, y, s->tmp + (size_t)y * (size_t)in->width * 3);
    src = s->tmp;
  }
  snprintf(s->path, sizeof s->path, "%s/input/%06lld.src.f32", s->cfg->o->out, (long long)f->index);
  if (!src) { snprintf(err, n, "cannot write %s: no model input to dump", s->path); return -1; }
  if (hr_file_write_atomic(s->path, src, (size_t)s->cfg->width * (size_t)s->cfg->height * 12)) return errno_fail(err, n, "", s->path, errno);
  return 0;
}

static void input_unwrite(void *ctx, const run_frame *f) {
  input_sink *s = ctx;
  snprintf(s->path, sizeof s->path, "%s/input/%06lld.src.f32", s->cfg->o->out, (long long)f->index);
  unlink(s->path);
}

static int input_close(void *ctx, const run_end *e, char *err, size_t n) {
  input_sink *s = ctx;
  free(s->tmp);
  free(s);
  return 0;
}

/* ---- depth fusion (run_depth.c): person depth and occlusion PNGs for every fused pair. The
 * stream pairs and fuses on the live loop's thread; cfg->depth hands the decisions over, and this
 * sink writes those taken up to this frame's push. The telemetry sink waits for the decisions and
 * the overlay draws the occlusion, so the run frees the context after every sink closed. ---- */
static int depth_sink_open(void **ctx, run_cfg *cfg, char *err, size_t n) {
  if (!cfg->depth) return 0;
  if (depth_attach(cfg->depth, cfg->stream, cfg->width, cfg->height)) { snprintf(err, n, "--depth: out of memory"); return -1; }
  *ctx = cfg;
  return 0;
}

static int depth_sink_write(void *ctx, const run_frame *f, char *err, size_t n) {
  run_cfg *cfg = ctx;
  return depth_write_upto(cfg->depth, f->index, cfg->depth_decided, cfg->depth_listener, err, n);
}

/* the colour stream ended: every pending frame gets its decision (before telemetry closes) */
static int depth_sink_close(void *ctx, const run_end *e, char *err, size_t n) {
  run_cfg *cfg = ctx;
  return depth_finish(cfg->depth, cfg->depth_decided, cfg->depth_listener, err, n);
}

/* ---- overlay video (overlay.c) ---- */
typedef struct overlay_sink { run_cfg *cfg; overlay_ctx *ov; } overlay_sink;

static int overlay_sink_open(void **ctx, run_cfg *cfg, char *err, size_t n) {
  if (!cfg->o->overlay) return 0;
  overlay_sink *s = calloc(1, sizeof *s);
  if (!s) { snprintf(err, n, "out of memory"); return -1; }
  char e[512];
  if (overlay_open(&s->ov, cfg->o->overlay, cfg->frame_w, cfg->frame_h, 30, e, sizeof e)) {
    free(s); snprintf(err, n, "--overlay: %s", e); return -1;
  }
  s->cfg = cfg;
  *ctx = s;
  return 0;
}

static int overlay_sink_write(void *ctx, const run_frame *f, char *err, size_t n) {
  overlay_sink *s = ctx;
  const hr_stream_result *r = f->res;
  if (!r->alpha) return 0;
  int64_t oi = -1;
  const uint8_t *occ = s->cfg->depth ? depth_last_occlusion(s->cfg->depth, &oi) : NULL;
  if (overlay_write(s->ov, r->input, r->alpha, r->width, r->height, occ && f->index - oi <= 4 ? occ : NULL)) {
    snprintf(err, n, "cannot write %s: encoder error", s->cfg->o->overlay);
    return -1;
  }
  return 0;
}

static int overlay_sink_close(void *ctx, const run_end *e, char *err, size_t n) {
  overlay_sink *s = ctx;
  const char *path = s->cfg->o->overlay;
  int rc = overlay_close(s->ov);
  free(s);
  if (rc) { snprintf(err, n, "cannot finish %s", path); return -1; }
  return 0;
}

/* ---- telemetry JSONL: one whole line per delivered frame, written as it comes. With depth,
 * lines wait (in frame order) for their frame's pairing decision, which may come a frame or two
 * later; each queued record keeps its own copy of the borrowed strings. ---- */
#define PENDING 64
typedef struct pending_rec { hr_telemetry_record r; char reason[HR_HEALTH_REASON_LEN]; int decided; } pending_rec;
typedef struct tel_sink {
  run_cfg *cfg;
  hr_telemetry *t;
  pending_rec q[PENDING];
  int head, n;
  int64_t forced;
  struct { int64_t frame; double dt; int fused, valid; } early;
} tel_sink;

static int tel_fail(tel_sink *s, char *err, size_t n) {
  snprintf(err, n, "cannot write %s: %s", s->cfg->o->telemetry, hr_telemetry_last_error(s->t));
  return -1;
}

static int pending_flush(tel_sink *s, int all, char *err, size_t n) {
  while (s->n && (all || s->q[s->head].decided || s->n == PENDING)) {
    pending_rec *pr = &s->q[s->head];
    if (!pr->decided) s->forced++;
    pr->r.health_reason = pr->reason;
    s->head = (s->head + 1) % PENDING; s->n--;
    if (hr_telemetry_write(s->t, &pr->r)) return tel_fail(s, err, n);
  }
  return 0;
}

static int pending_decide(tel_sink *s, int64_t frame, double dt_ms, int fused) {
  for (int i = 0; i < s->n; i++) {
    pending_rec *pr = &s->q[(s->head + i) % PENDING];
    if (pr->r.frame == frame) { pr->r.depth_dt_ms = dt_ms; pr->r.depth_fused = fused != 0; pr->decided = 1; return 1; }
  }
  return 0;
}

static void tel_depth_decided(void *listener, int64_t frame, double dt_ms, int fused) {
  tel_sink *s = listener;
  /* the frame being delivered is queued only after the depth sink ran: keep its decision */
  if (!pending_decide(s, frame, dt_ms, fused)) { s->early.frame = frame; s->early.dt = dt_ms; s->early.fused = fused; s->early.valid = 1; }
}

static int tel_open(void **ctx, run_cfg *cfg, char *err, size_t n) {
  if (!cfg->o->telemetry) return 0;
  tel_sink *s = calloc(1, sizeof *s);
  if (!s) { snprintf(err, n, "out of memory"); return -1; }
  hr_telemetry_params tp;
  hr_telemetry_params_default(&tp);
  tp.flush_every = 1;   /* line by line: a kill or a full disk leaves every written frame's line */
  char e[512];
  if (hr_telemetry_open(cfg->o->telemetry, &tp, &s->t, e, sizeof e)) { free(s); snprintf(err, n, "%s", e); return -1; }
  s->cfg = cfg;
  if (cfg->depth) { cfg->depth_decided = tel_depth_decided; cfg->depth_listener = s; }
  *ctx = s;
  return 0;
}

static int tel_write(void *ctx, const run_frame *f, char *err, size_t n) {
  tel_sink *s = ctx;
  if (!s->cfg->depth) return hr_telemetry_write(s->t, f->rec) ? tel_fail(s, err, n) : 0;
  if (s->n == PENDING && pending_flush(s, 0, err, n)) return -1;
  pending_rec *pr = &s->q[(s->head + s->n) % PENDING];
  pr->r = *f->rec;
  snprintf(pr->reason, sizeof pr->reason, "%s", f->rec->health_reason ? f->rec->health_reason : "");
  pr->r.health_reason = pr->reason;
  /* decisions for this frame and earlier ones came from the depth sink, which ran before this one
   * (for this frame, only when it was decided at once) */
  pr->decided = 0;
  s->n++;
  if (s->early.valid && s->early.frame == f->rec->frame) pending_decide(s, f->rec->frame, s->early.dt, s->early.fused);
  s->early.valid = 0;
  return pending_flush(s, 0, err, n);
}

static int tel_close(void *ctx, const run_end *e, char *err, size_t n) {
  tel_sink *s = ctx;
  int rc = 0;
  if (s->cfg->depth) {
    s->cfg->depth_decided = NULL;
    rc = pending_flush(s, 1, err, n);
    if (s->forced && !s->cfg->o->quiet)
      fprintf(stderr, "headroom run: %lld telemetry lines written before their depth decision\n", (long long)s->forced);
  }
  if (hr_telemetry_close(s->t) && !rc) { snprintf(err, n, "cannot finish %s: %s", s->cfg->o->telemetry, strerror(errno)); rc = -1; }
  free(s);
  return rc;
}

/* ---- the HTML report, made at close from the telemetry file, with the input and alpha of frames
 * 10, 100 and 1000 embedded ---- */
typedef struct report_sink {
  run_cfg *cfg;
  hr_report_opts ro;
  char paths[HR_REPORT_MAX_IMAGES][512];
  int n_paths;
  uint8_t *rgb, *a8;
  float *row;
} report_sink;

static int report_open(void **ctx, run_cfg *cfg, char *err, size_t n) {
  if (!cfg->o->report) return 0;
  report_sink *s = calloc(1, sizeof *s);
  if (!s) { snprintf(err, n, "out of memory"); return -1; }
  size_t np = (size_t)cfg->width * (size_t)cfg->height;
  s->rgb = malloc(np * 3); s->a8 = malloc(np); s->row = malloc(sizeof(float) * (size_t)(cfg->frame_w > cfg->width ? cfg->frame_w : cfg->width) * 3);
  if (!s->rgb || !s->a8 || !s->row) { free(s->rgb); free(s->a8); free(s->row); free(s); snprintf(err, n, "out of memory"); return -1; }
  s->cfg = cfg;
  hr_report_opts_default(&s->ro);
  *ctx = s;
  return 0;
}

static int report_write(void *ctx, const run_frame *f, char *err, size_t n) {
  report_sink *s = ctx;
  const hr_stream_result *r = f->res;
  if (!r->alpha || !(f->done == 10 || f->done == 100 || f->done == 1000) || s->n_paths + 2 > HR_REPORT_MAX_IMAGES) return 0;
  const hr_frame *in = r->input;
  int aw = r->width, ah = r->height;
  for (int y = 0; y < ah; y++) {
    hr_frame_row_rgbf(in, (int)((int64_t)y * in->height / ah), s->row);
    for (int x = 0; x < aw; x++) {
      int sx = (int)((int64_t)x * in->width / aw);
      for (int c = 0; c < 3; c++) { float v = s->row[sx * 3 + c]; s->rgb[((size_t)y * aw + x) * 3 + c] = (uint8_t)(v <= 0 ? 0 : v >= 1 ? 255 : v * 255 + 0.5f); }
      float av = r->alpha[(size_t)y * aw + x];
      s->a8[(size_t)y * aw + x] = (uint8_t)(av <= 0 ? 0 : av >= 1 ? 255 : av * 255 + 0.5f);
    }
  }
  char *pi = s->paths[s->n_paths], *pa = s->paths[s->n_paths + 1];
  snprintf(pi, 512, "%s/sample_%06lld_input.png", s->cfg->o->out, (long long)f->index);
  snprintf(pa, 512, "%s/sample_%06lld_alpha.png", s->cfg->o->out, (long long)f->index);
  /* a sample that cannot be written is left out of the report, and said */
  if (hr_png_write_rgb24(pi, aw, ah, s->rgb, (ptrdiff_t)aw * 3) || hr_png_write_gray8(pa, aw, ah, s->a8, aw)) {
    fprintf(stderr, "headroom run: report sample %s: %s (left out)\n", pi, strerror(errno));
    return 0;
  }
  s->ro.images[s->ro.n_images].path = pi; s->ro.images[s->ro.n_images++].caption = "input";
  s->ro.images[s->ro.n_images].path = pa; s->ro.images[s->ro.n_images++].caption = "alpha";
  s->n_paths += 2;
  return 0;
}

static int report_close(void *ctx, const run_end *e, char *err, size_t n) {
  report_sink *s = ctx;
  const run_opts *o = s->cfg->o;
  char title[256], rerr[1024] = "";
  snprintf(title, sizeof title, "headroom run: %s on %s%s", s->cfg->model_name, o->input, e->interrupted ? " (stopped early)" : "");
  s->ro.title = title;
  s->ro.budget_ms = o->budget_ms;
  s->ro.err = rerr; s->ro.err_len = sizeof rerr;
  int rc = 0;
  if (hr_report_write_html(o->telemetry, o->report, &s->ro)) { snprintf(err, n, "report: %s", rerr); rc = -1; }
  else if (!o->quiet) fprintf(stderr, "headroom run: report written to %s\n", o->report);
  free(s->rgb); free(s->a8); free(s->row); free(s);
  return rc;
}

static const sink_ops sink_alpha = {"alpha", alpha_open, alpha_write, alpha_unwrite, alpha_close};
static const sink_ops sink_raw = {"raw", raw_open, raw_write, raw_unwrite, plain_close};
static const sink_ops sink_input = {"input", input_open, input_write, input_unwrite, input_close};
static const sink_ops sink_depth = {"depth", depth_sink_open, depth_sink_write, NULL, depth_sink_close};
static const sink_ops sink_overlay = {"overlay", overlay_sink_open, overlay_sink_write, NULL, overlay_sink_close};
static const sink_ops sink_telemetry = {"telemetry", tel_open, tel_write, NULL, tel_close};
static const sink_ops sink_report = {"report", report_open, report_write, NULL, report_close};

const sink_ops *const run_data_sinks[] = {&sink_alpha, &sink_raw, &sink_input, &sink_depth, &sink_overlay, &run_sink_composite, NULL};
const sink_ops *const run_record_sinks[] = {&sink_telemetry, &sink_report, NULL};
