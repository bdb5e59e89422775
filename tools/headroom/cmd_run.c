/* `headroom run`: the live loop. A capture thread reads (and, with --realtime, paces) frames into a
 * newest-frame-wins mailbox; the main thread runs the session, watches health and memory, adapts
 * the processing resolution to the frame budget, and writes mattes, telemetry and a report. */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "cli.h"
#include "headroom/io.h"
#include "run_hooks.h"
#include "session/session_impl.h"

#define POOL 3          /* source frames kept valid at once (lossless: capture back-pressure protects the held one);
                         * --realtime: also the capture's own frame copies (3 are ever allocated) */
#define MAX_RUNGS 8

typedef struct run_opts {
  const char *model, *input, *out, *input_format, *state_in, *state_out, *telemetry, *report, *overlay;
  const char *profile, *ballast, *inject, *depth, *ceiling;
  int w, h, frames, start, raw, dump_input, stateless, threads, scene_cut, quiet, realtime, adapt, no_governor;
  int no_alpha, status;
  float ratio;
  double budget_ms, depth_scale, depth_window_ms, occlude_m;
  hr_backend backend;
} run_opts;


static void run_usage(void) {
  fprintf(stderr,
          "usage: headroom run --model M --input SRC --out DIR [options]\n"
          "input and model\n"
          "  --size WxH            model input size (frames are resized to it; default: the source's size)\n"
          "  --ratio R|auto        RVM downsample_ratio (default auto: processing side ~512 px)\n"
          "  --frames N            stop after N processed frames     --start N  skip the first N input frames\n"
          "  --input-format F      raw input, e.g. nv12:1920x1440@60 (SRC is a file or -)\n"
          "  --backend xnnpack|reference   --threads N\n"
          "state\n"
          "  --stateless           zero the state before every frame\n"
          "  --state-in FILE       load the state before the first frame   --state-out FILE  save it after the last\n"
          "  --scene-cut           reset the state at hard scene cuts\n"
          "live loop\n"
          "  --realtime            replay at the source's own rate; late frames are dropped (newest wins)\n"
          "  --budget-ms MS        frame budget (default 16.7)\n"
          "  --adapt               move the processing resolution to keep p99 within the budget (on with --realtime)\n"
          "  --fixed               never adapt\n"
          "memory\n"
          "  --profile P           ceiling profile: a14 a15 a16 m1 cgroup none SAFE:KILL (MB)\n"
          "  --ballast R[:MAX]     play the host app: allocate R MB/s up to MAX MB in this process\n"
          "  --no-governor         measure, but take no action (for the kill test)\n"
          "health\n"
          "  --inject KIND@FRAME[:LEN][,...]  nan-state freeze-input black-input noise-input stuck-output memory-pressure\n"
          "depth\n"
          "  --depth SRC           depth stream (a TUM folder) fused within the window\n"
          "  --depth-scale U       depth units per metre (TUM 5000, RealSense 1000; default 1000)\n"
          "  --depth-window-ms MS  pairing window (default 16)      --occlude-at METRES  occlusion mask\n"
          "outputs\n"
          "  --raw                 also DIR/raw/NNNNNN.pha.f32     --dump-input  DIR/input/NNNNNN.src.f32\n"
          "  --no-alpha            do not write alpha PNGs\n"
          "  --telemetry FILE      one JSON line per frame   --report FILE.html   --overlay FILE.mp4\n"
          "  --quiet\n");
}

static int parse_run(int argc, char **argv, run_opts *o) {
  memset(o, 0, sizeof *o);
  o->backend = HR_BACKEND_XNNPACK;
  o->budget_ms = 16.7;
  o->depth_scale = 1000;
  o->depth_window_ms = 16;
  o->adapt = -1;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
#define ARG(name) (!strcmp(a, name) && v && (i++, 1))
    if (ARG("--model")) o->model = v;
    else if (ARG("--input")) o->input = v;
    else if (ARG("--out")) o->out = v;
    else if (ARG("--size")) { if (!cli_parse_size(v, &o->w, &o->h)) { fprintf(stderr, "headroom run: --size wants WxH, got '%s'\n", v); return -1; } }
    else if (ARG("--ratio")) o->ratio = !strcmp(v, "auto") ? 0 : (float)atof(v);
    else if (ARG("--frames")) o->frames = atoi(v);
    else if (ARG("--start")) o->start = atoi(v);
    else if (ARG("--threads")) o->threads = atoi(v);
    else if (ARG("--state-in")) o->state_in = v;
    else if (ARG("--state-out")) o->state_out = v;
    else if (ARG("--input-format")) o->input_format = v;
    else if (ARG("--telemetry")) o->telemetry = v;
    else if (ARG("--report")) o->report = v;
    else if (ARG("--overlay")) o->overlay = v;
    else if (ARG("--profile")) o->profile = v;
    else if (ARG("--ceiling")) o->profile = v;
    else if (ARG("--ballast")) o->ballast = v;
    else if (ARG("--inject")) o->inject = v;
    else if (ARG("--depth")) o->depth = v;
    else if (ARG("--depth-scale")) o->depth_scale = atof(v);
    else if (ARG("--depth-window-ms")) o->depth_window_ms = atof(v);
    else if (ARG("--occlude-at")) o->occlude_m = atof(v);
    else if (ARG("--budget-ms")) o->budget_ms = atof(v);
    else if (ARG("--backend")) {
      if (!strcmp(v, "reference") || !strcmp(v, "ref")) o->backend = HR_BACKEND_REFERENCE;
      else if (!strcmp(v, "xnnpack")) o->backend = HR_BACKEND_XNNPACK;
      else { fprintf(stderr, "headroom run: --backend is xnnpack or reference, not '%s'\n", v); return -1; }
    }
    else if (!strcmp(a, "--raw")) o->raw = 1;
    else if (!strcmp(a, "--dump-input")) o->dump_input = 1;
    else if (!strcmp(a, "--stateless")) o->stateless = 1;
    else if (!strcmp(a, "--scene-cut")) o->scene_cut = 1;
    else if (!strcmp(a, "--realtime")) o->realtime = 1;
    else if (!strcmp(a, "--adapt")) o->adapt = 1;
    else if (!strcmp(a, "--fixed")) o->adapt = 0;
    else if (!strcmp(a, "--no-governor")) o->no_governor = 1;
    else if (!strcmp(a, "--no-alpha")) o->no_alpha = 1;
    else if (!strcmp(a, "--quiet")) o->quiet = 1;
    else if (!strcmp(a, "--help")) { run_usage(); exit(0); }
    else { fprintf(stderr, "headroom run: unknown option or missing value: '%s'\n", a); run_usage(); return -1; }
#undef ARG
  }
  if (!o->model || !o->input || !o->out) { fprintf(stderr, "headroom run: --model, --input and --out are required\n"); run_usage(); return -1; }
  if (o->ratio < 0 || o->ratio > 1) { fprintf(stderr, "headroom run: --ratio must be in (0,1] or auto\n"); return -1; }
  if (!(o->budget_ms > 0)) { fprintf(stderr, "headroom run: --budget-ms must be > 0\n"); return -1; }
  if (o->adapt < 0) o->adapt = o->realtime;
  o->status = !o->quiet && isatty(2);
  return 0;
}

/* ---------------- capture thread ---------------- */
typedef struct slot { hr_frame f; int64_t index; double t_cap; } slot;

typedef struct capture {
  hr_source *src;
  hr_flow *flow;
  const run_opts *o;
  slot slots[POOL];
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int64_t held;            /* index of the frame the consumer holds, -1 none */
  int64_t read;            /* frames read from the source (incl. skipped) */
  int stop;
  hr_status error;
  char errmsg[512];
} capture;

/* A frame copied, row by row with dense strides, into a buffer that grows once to the frame's
 * size: the realtime capture's own frames, and the writable frame fault injection needs (sources'
 * buffers are not ours to write). */
typedef struct frame_copy { uint8_t *buf; size_t cap; } frame_copy;
static hr_status copy_frame(frame_copy *fc, const hr_frame *in, hr_frame *out) {
  size_t rows[3] = {(size_t)in->height, (size_t)(in->height + 1) / 2, (size_t)(in->height + 1) / 2};
  size_t row_bytes[3] = {(size_t)in->width * (size_t)hr_pixfmt_bpp(in->fmt), 0, 0};
  int planes = 1;
  if (in->fmt == HR_PIX_NV12_FULL || in->fmt == HR_PIX_NV12_VIDEO) { planes = 2; row_bytes[1] = (size_t)(in->width + 1) / 2 * 2; }
  if (in->fmt == HR_PIX_I420_FULL || in->fmt == HR_PIX_I420_VIDEO) { planes = 3; row_bytes[1] = row_bytes[2] = (size_t)(in->width + 1) / 2; }
  size_t need = 0;
  for (int p = 0; p < planes; p++) need += rows[p] * row_bytes[p];
  if (need > fc->cap) {
    free(fc->buf); fc->buf = malloc(need); fc->cap = fc->buf ? need : 0;
    if (!fc->buf) return HR_ENOMEM;
  }
  *out = *in;
  size_t off = 0;
  for (int p = 0; p < planes; p++) {
    for (size_t y = 0; y < rows[p]; y++)
      memcpy(fc->buf + off + y * row_bytes[p], (const uint8_t *)in->planes[p] + (ptrdiff_t)y * in->strides[p], row_bytes[p]);
    out->planes[p] = fc->buf + off; out->strides[p] = (ptrdiff_t)row_bytes[p];
    off += rows[p] * row_bytes[p];
  }
  return HR_OK;
}

static void *capture_main(void *arg) {
  capture *c = arg;
  const run_opts *o = c->o;
  double t0 = 0; int64_t ts0 = 0; int first = 1;
  /* --realtime: the source plays a camera. Frame i exists from its due time t0 + (ts_i - ts0) on and
   * is put into the mailbox then, whatever the consumer is doing; a frame the consumer did not take
   * before the next one came is dropped (counted by the flow). The capture never waits for the
   * consumer: it copies each frame out of the source's pool into one of POOL buffers of its own, so
   * a slow frame in the consumer's hands never holds the source back (otherwise the replay slows to
   * the consumer's pace and frames queue up in time instead of being dropped). The consumer can
   * only be using the last frame put, or the one taken before it; every other buffer is free. */
  frame_copy buf[POOL];
  memset(buf, 0, sizeof buf);
  int last_put = -1, taken = -1;  /* slots: the newest put; the one the consumer took before it */
  for (;;) {
    pthread_mutex_lock(&c->mu);
    /* lossless (not realtime): frames are handed out in place; never read a frame whose pool buffer
     * is the one the consumer still holds */
    while (!o->realtime && !c->stop && c->held >= 0 && c->read - POOL + 1 >= c->held) pthread_cond_wait(&c->cv, &c->mu);
    int stop = c->stop;
    pthread_mutex_unlock(&c->mu);
    if (stop) break;
    hr_frame f;
    hr_status st = hr_source_read(c->src, &f);
    if (st == HR_EEOF) break;
    if (st) { c->error = st; snprintf(c->errmsg, sizeof c->errmsg, "%s", hr_source_last_error(c->src)); break; }
    int64_t idx = c->read++;
    if (idx < o->start) continue;
    if (!o->realtime) {
      slot *sl = &c->slots[idx % POOL];
      sl->f = f; sl->index = idx; sl->t_cap = cli_now_ms();
      /* as fast as possible, lossless: wait until the consumer took the previous frame */
      hr_flow_stats fs;
      for (;;) { hr_flow_get_stats(c->flow, &fs); if (fs.pending == 0 || c->stop) break; usleep(200); }
      void *replaced = NULL;
      if (hr_flow_put(c->flow, sl, &replaced) != HR_OK) break;
      continue;
    }
    if (first) { t0 = cli_now_ms(); ts0 = f.ts_ns; first = 0; }
    double due = t0 + (double)(f.ts_ns - ts0) / 1e6;
    /* a free buffer: not the newest put (pending, or being taken), not the one taken before it */
    int k = 0;
    while (k == last_put || k == taken) k++;
    hr_frame cp;
    if (copy_frame(&buf[k], &f, &cp)) {   /* the first frame (and a video that grows): allocate once */
      c->error = HR_ENOMEM; snprintf(c->errmsg, sizeof c->errmsg, "out of memory for a %dx%d frame", f.width, f.height);
      break;
    }
    double wait = due - cli_now_ms();
    if (wait > 0) usleep((useconds_t)(wait * 1000));
    slot *sl = &c->slots[k];
    /* capture time is when the camera would have delivered the frame: a capture thread that falls
     * behind shows up in latency */
    sl->f = cp; sl->index = idx; sl->t_cap = due;
    void *replaced = NULL;
    if (hr_flow_put(c->flow, sl, &replaced) != HR_OK) break;
    if (!replaced && last_put >= 0) taken = last_put;  /* the slot was empty: the previous one was taken */
    last_put = k;
  }
  hr_flow_close(c->flow);
  if (o->realtime) {
    /* the consumer may still be reading the last frames: free the copies only once the loop is over */
    pthread_mutex_lock(&c->mu);
    while (!c->stop) pthread_cond_wait(&c->cv, &c->mu);
    pthread_mutex_unlock(&c->mu);
    for (int k = 0; k < POOL; k++) free(buf[k].buf);
  }
  return NULL;
}

/* ---------------- processing-resolution ladder ---------------- */
typedef struct ladder {
  int n;
  float ratio[MAX_RUNGS];
  int64_t bytes[MAX_RUNGS];     /* planned bytes without weights */
  int budget_rung, gov_rung, cur;
  double recent[64];            /* frame processing times since the last change */
  int n_recent, since_change;
} ladder;

static int ladder_build(ladder *l, hr_model *m, const hr_session_params *base, float r0, int has_ratio) {
  memset(l, 0, sizeof *l);
  static const float f[MAX_RUNGS] = {1.f, 0.8f, 0.64f, 0.5f, 0.4f, 0.32f, 0.24f, 0.18f};
  l->n = has_ratio ? MAX_RUNGS : 1;
  for (int k = 0; k < l->n; k++) {
    l->ratio[k] = r0 * f[k];
    hr_session_params p = *base;
    p.downsample_ratio = l->ratio[k];
    hr_plan_info pi;
    char err[256];
    if (hr_model_plan(m, &p, &pi, err, sizeof err)) { l->n = k; break; }
    l->bytes[k] = pi.total_bytes - pi.weight_bytes;
    if (pi.proc_width < 64 || pi.proc_height < 48) { l->n = k + 1; break; }
  }
  return l->n;
}

static int cmp_dbl(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return x < y ? -1 : x > y; }

/* q-quantile (nearest rank) of the last m samples of the ring */
static double ladder_recent_q(const ladder *l, int m, double q) {
  double tmp[64];
  for (int i = 0; i < m; i++) tmp[i] = l->recent[(l->n_recent - 1 - i) % 64];
  qsort(tmp, (size_t)m, sizeof(double), cmp_dbl);
  int k = (int)ceil(q * m) - 1;
  return tmp[k < 0 ? 0 : k >= m ? m - 1 : k];
}

/* Budget controller on the frame processing time (take -> post, ms). The first frame after a
 * replan is not counted (it carries the new plan's setup). Rung costs are predicted from what the
 * current rung costs, scaled by the processed pixels (ratio^2): part of the cost (ingest, the
 * full-size refiner) does not shrink with the ratio, so the prediction is low for smaller rungs and
 * high for larger ones: down-jumps fall short rather than overshoot, up-steps are cautious.
 *   down, fast: when the last 2 frames are both over twice the budget, the median of the last 4 is
 *     over budget, or the p90 of the last 12 is: jump to the largest rung predicted (from that
 *     figure) to fit in 70% of the budget, at least one rung down.
 *   up, slow: after up_wait frames on a rung, if the rung above is predicted (from the p90 of the
 *     last 32 frames) to fit in 90% of the budget. up_wait starts at 60 frames and doubles (to at
 *     most 1920) whenever a rung reached by an up-step has to be left within 2 x up_wait frames;
 *     it halves back (not below 60) after 8 x up_wait frames without a change.
 * Hysteresis: down when the p90 is over the budget; up only when the rung above is predicted at
 * <= 90% of it (one rung up is 1.25x the ratio, 1.56x the pixels; the prediction runs ~10% high
 * on RVM at 1920x1440, so about 80% in fact), and not sooner than up_wait frames. */
static void ladder_observe(ladder *l, double ms, double budget) {
  static struct { const ladder *owner; int up_wait; int64_t frames, up_at, calm_since; } mem;
  if (mem.owner != l) { memset(&mem, 0, sizeof mem); mem.owner = l; mem.up_wait = 60; mem.up_at = -1; }
  mem.frames++;
  l->since_change++;
  if (l->since_change <= 1) return;
  l->recent[l->n_recent++ % 64] = ms;
  int n = l->n_recent < 64 ? l->n_recent : 64, cur = l->cur;
  double basis = 0;   /* the cost that calls for a step down, 0: none */
  if (n >= 2) {
    double a = l->recent[(l->n_recent - 1) % 64], b = l->recent[(l->n_recent - 2) % 64], lo = a < b ? a : b;
    if (lo > 2 * budget) basis = lo;
  }
  if (!basis && n >= 4) { double med = ladder_recent_q(l, 4, 0.5); if (med > budget) basis = med; }
  if (!basis && n >= 12) { double p90 = ladder_recent_q(l, 12, 0.9); if (p90 > budget) basis = p90; }
  if (basis && l->budget_rung < l->n - 1) {
    int t = cur + 1;
    while (t < l->n - 1 && basis * (l->ratio[t] * l->ratio[t]) / (l->ratio[cur] * l->ratio[cur]) > 0.7 * budget) t++;
    if (t > l->budget_rung) l->budget_rung = t;
    if (mem.up_at >= 0 && mem.frames - mem.up_at < 2 * mem.up_wait) mem.up_wait = mem.up_wait * 2 > 1920 ? 1920 : mem.up_wait * 2;
    mem.up_at = -1; mem.calm_since = mem.frames;
    return;
  }
  if (mem.up_wait > 60 && mem.frames - mem.calm_since > 8 * mem.up_wait) { mem.up_wait /= 2; mem.calm_since = mem.frames; }
  if (cur > 0 && l->budget_rung >= cur && l->since_change >= mem.up_wait && n >= 32) {
    double p90 = ladder_recent_q(l, 32, 0.9);
    if (p90 * (l->ratio[cur - 1] * l->ratio[cur - 1]) / (l->ratio[cur] * l->ratio[cur]) <= 0.9 * budget) {
      l->budget_rung = cur - 1;
      mem.up_at = mem.calm_since = mem.frames;
    }
  }
}

static void ladder_changed(ladder *l) { l->n_recent = 0; l->since_change = 0; }

/* ---------------- sample frames for the report ---------------- */
static void save_sample(const char *dir, int64_t idx, const hr_frame *f, const float *alpha, int aw, int ah,
                        hr_report_opts *ro, char paths[][512], int *n_paths) {
  if (*n_paths + 2 > HR_REPORT_MAX_IMAGES) return;
  uint8_t *rgb = malloc((size_t)aw * ah * 3), *a8 = malloc((size_t)aw * ah);
  float *row = malloc(sizeof(float) * (size_t)f->width * 3);
  if (!rgb || !a8 || !row) { free(rgb); free(a8); free(row); return; }
  for (int y = 0; y < ah; y++) {
    int sy = (int)((int64_t)y * f->height / ah);
    const float *r = hr__ingest_row_view(f, sy, row);
    for (int x = 0; x < aw; x++) {
      int sx = (int)((int64_t)x * f->width / aw);
      for (int c = 0; c < 3; c++) { float v = r[sx * 3 + c]; rgb[((size_t)y * aw + x) * 3 + c] = (uint8_t)(v <= 0 ? 0 : v >= 1 ? 255 : v * 255 + 0.5f); }
      float av = alpha[(size_t)y * aw + x];
      a8[(size_t)y * aw + x] = (uint8_t)(av <= 0 ? 0 : av >= 1 ? 255 : av * 255 + 0.5f);
    }
  }
  snprintf(paths[*n_paths], 512, "%s/sample_%06lld_input.png", dir, (long long)idx);
  hr_png_write_rgb24(paths[*n_paths], aw, ah, rgb, (ptrdiff_t)aw * 3);
  snprintf(paths[*n_paths + 1], 512, "%s/sample_%06lld_alpha.png", dir, (long long)idx);
  hr_png_write_gray8(paths[*n_paths + 1], aw, ah, a8, aw);
  ro->images[ro->n_images].path = paths[*n_paths];
  ro->images[ro->n_images].caption = "input"; ro->n_images++;
  ro->images[ro->n_images].path = paths[*n_paths + 1];
  ro->images[ro->n_images].caption = "alpha"; ro->n_images++;
  *n_paths += 2;
  free(rgb); free(a8); free(row);
}

/* Telemetry lines wait for their frame's depth-pairing decision (it may come a frame or two later);
 * records queue here in frame order, each with its own copy of the borrowed strings. */
#define PENDING 64
typedef struct pending_rec { hr_telemetry_record r; char reason[HR_HEALTH_REASON_LEN]; int decided; } pending_rec;
typedef struct pending_q { pending_rec q[PENDING]; int head, n; int64_t forced; } pending_q;

static void pending_flush(pending_q *pq, hr_telemetry *tel, int all) {
  while (pq->n && (all || pq->q[pq->head].decided || pq->n == PENDING)) {
    pending_rec *pr = &pq->q[pq->head];
    if (!pr->decided) pq->forced++;
    pr->r.health_reason = pr->reason;
    if (tel) hr_telemetry_write(tel, &pr->r);
    pq->head = (pq->head + 1) % PENDING; pq->n--;
  }
}
static void pending_push(pending_q *pq, hr_telemetry *tel, const hr_telemetry_record *r) {
  if (pq->n == PENDING) pending_flush(pq, tel, 0);
  pending_rec *pr = &pq->q[(pq->head + pq->n) % PENDING];
  pr->r = *r;
  snprintf(pr->reason, sizeof pr->reason, "%s", r->health_reason ? r->health_reason : "");
  pr->r.health_reason = pr->reason;
  pr->decided = 0;
  pq->n++;
}
static void pending_decide(pending_q *pq, int64_t frame, double dt_ms, int fused) {
  for (int i = 0; i < pq->n; i++) {
    pending_rec *pr = &pq->q[(pq->head + i) % PENDING];
    if (pr->r.frame == frame) { pr->r.depth_dt_ms = dt_ms; pr->r.depth_fused = fused != 0; pr->decided = 1; return; }
  }
}

static hr_status read_file_all(const char *path, void **buf, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return HR_EIO;
  fseek(f, 0, SEEK_END); long n = ftell(f); rewind(f);
  *buf = malloc(n > 0 ? (size_t)n : 1);
  if (!*buf) { fclose(f); return HR_ENOMEM; }
  *len = fread(*buf, 1, (size_t)n, f);
  fclose(f);
  return *len == (size_t)n ? HR_OK : HR_EIO;
}

int cmd_run(int argc, char **argv) {
  run_opts o;
  if (parse_run(argc, argv, &o)) return 2;
  int rc = 1;
  hr_model *m = NULL; hr_session *s = NULL; hr_source *src = NULL; hr_flow *flow = NULL;
  hr_gov *gov = NULL; hr_ballast *ballast = NULL; hr_health *health = NULL; hr_fault_injector *inj = NULL;
  hr_telemetry *tel = NULL; depth_ctx *depth = NULL; overlay_ctx *ov = NULL;
  hr_stats *st_ingest = NULL, *st_infer = NULL, *st_post = NULL, *st_out = NULL, *st_frame = NULL, *st_lat = NULL;
  uint8_t *png = NULL;
  frame_copy fc = {0};
  capture cap; memset(&cap, 0, sizeof cap);
  pthread_t cap_thread; int cap_started = 0;
  char err[1024], path[4096], tel_path[4096];
  char sample_paths[HR_REPORT_MAX_IMAGES][512]; int n_samples = 0;
  hr_report_opts ro; hr_report_opts_default(&ro);
  static pending_q pq; /* static: 64 records with reasons are too big for the stack */
  memset(&pq, 0, sizeof pq);
  hr_source_params sp;
  hr_source_params_default(&sp);
  sp.input_format = o.input_format;
  sp.pool_size = o.realtime ? 1 : POOL; /* realtime copies each frame out at once */
  hr_status st = hr_source_open(o.input, &sp, &src, err, sizeof err);
  if (st) { fprintf(stderr, "headroom run: %s\n", err); goto out; }
  m = cli_load_model(o.model);
  if (!m) goto out;
  hr_pixfmt fmt; int fw, fh;
  hr_source_get_format(src, &fmt, &fw, &fh);
  hr_model_info mi; hr_model_get_info(m, &mi);
  hr_session_params p;
  hr_session_params_default(&p);
  p.width = o.w ? o.w : (mi.fixed_width ? mi.fixed_width : fw);
  p.height = o.h ? o.h : (mi.fixed_height ? mi.fixed_height : fh);
  p.frame_width = fw; p.frame_height = fh;
  p.downsample_ratio = o.ratio;
  p.threads = o.threads;
  p.backend = o.backend;
  p.stateless = o.stateless;
  p.scene_cut_reset = o.scene_cut;
  /* processing ladder: rung 0 = the asked ratio (or auto), then smaller */
  float r0 = o.ratio;
  if (r0 <= 0) { int side = p.width > p.height ? p.width : p.height; r0 = side > 512 ? 512.f / side : 1.f; }
  ladder lad;
  if (!ladder_build(&lad, m, &p, r0, mi.has_ratio)) {
    hr_plan_info pi; char e2[512];
    hr_session_params pp = p; pp.downsample_ratio = r0;
    hr_model_plan(m, &pp, &pi, e2, sizeof e2);
    fprintf(stderr, "headroom run: cannot plan %s at %dx%d: %s\n", mi.name, p.width, p.height, e2);
    goto out;
  }
  /* memory governor: profile, admission, ladder costs */
  if (o.profile || o.ballast) {
    hr_gov_params gp; hr_gov_params_default(&gp);
    if (o.profile && hr_gov_profile_parse(o.profile, &gp.profile, err, sizeof err)) { fprintf(stderr, "headroom run: --profile: %s\n", err); goto out; }
    gp.ladder.n_rungs = lad.n;
    for (int k = 0; k < lad.n; k++) gp.ladder.rung_bytes[k] = (uint64_t)lad.bytes[k];
    if (hr_gov_create(&gp, &gov, err, sizeof err)) { fprintf(stderr, "headroom run: governor: %s\n", err); goto out; }
    hr_gov_candidate cands[MAX_RUNGS]; char names[MAX_RUNGS][48];
    for (int k = 0; k < lad.n; k++) {
      snprintf(names[k], sizeof names[k], "ratio %.3f", lad.ratio[k]);
      cands[k].name = names[k]; cands[k].planned_bytes = (uint64_t)lad.bytes[k];
    }
    size_t chosen = 0;
    if (!o.no_governor && hr_gov_admit_now(gov, (uint64_t)mi.weight_bytes, cands, (size_t)lad.n, &chosen)) {
      fprintf(stderr, "headroom run: admission refused: %s\n", hr_gov_last_error(gov));
      goto out;
    }
    lad.gov_rung = (int)chosen;
    hr_gov_ladder_set_rung(hr_gov_get_ladder(gov), (int)chosen);
    if (o.ballast) {
      hr_ballast_params bp;
      if (hr_ballast_parse(o.ballast, &bp, err, sizeof err) || hr_ballast_create(&bp, &ballast)) {
        fprintf(stderr, "headroom run: --ballast: %s\n", err); goto out;
      }
    }
  }
  lad.cur = lad.gov_rung > lad.budget_rung ? lad.gov_rung : lad.budget_rung;
  p.downsample_ratio = lad.ratio[lad.cur];
  st = hr_session_create(m, &p, &s);
  if (st) {
    hr_plan_info tmp; char why[512] = "";
    if (st != HR_ENOMEM) hr_model_plan(m, &p, &tmp, why, sizeof why);
    fprintf(stderr, "headroom run: cannot create session: %s%s%s\n", hr_status_str(st), why[0] ? ": " : "", why);
    goto out;
  }
  if (o.state_in) {
    void *buf = NULL; size_t len = 0;
    st = read_file_all(o.state_in, &buf, &len);
    if (st) { fprintf(stderr, "headroom run: %s: cannot read state file\n", o.state_in); free(buf); goto out; }
    st = hr_session_state_load(s, buf, len);
    free(buf);
    if (st) { fprintf(stderr, "headroom run: %s: %s\n", o.state_in, hr_session_last_error(s)); goto out; }
  }
  if (hr_mkdirs(o.out)) { fprintf(stderr, "headroom run: cannot create %s: %s\n", o.out, strerror(errno)); goto out; }
  if (!o.no_alpha) { snprintf(path, sizeof path, "%s/alpha", o.out); hr_mkdirs(path); }
  if (o.raw) { snprintf(path, sizeof path, "%s/raw", o.out); hr_mkdirs(path); }
  hr_plan_info pi; hr_session_get_plan(s, &pi);
  if (o.dump_input) {
    snprintf(path, sizeof path, "%s/input", o.out); hr_mkdirs(path);
    snprintf(path, sizeof path, "%s/input/meta.json", o.out);
    char meta[128]; int n = snprintf(meta, sizeof meta, "{\"width\":%d,\"height\":%d}\n", pi.width, pi.height);
    hr_file_write_atomic(path, meta, (size_t)n);
  }
  /* health monitor + fault injection */
  {
    hr_health_params hp; hr_health_params_default(&hp);
    static const char *const names[] = {"r1", "r2", "r3", "r4", "r5", "r6", "r7", "r8"};
    hp.state_names = names;
    if (hr_health_create(&hp, pi.width, pi.height, &health, err, sizeof err)) { fprintf(stderr, "headroom run: health: %s\n", err); goto out; }
    if (o.inject && hr_fault_create(o.inject, 42, &inj, err, sizeof err)) { fprintf(stderr, "headroom run: --inject: %s\n", err); goto out; }
  }
  /* telemetry (always when a report is asked) */
  if (o.report && !o.telemetry) { snprintf(tel_path, sizeof tel_path, "%s/telemetry.jsonl", o.out); o.telemetry = tel_path; }
  if (o.telemetry && hr_telemetry_open(o.telemetry, NULL, &tel, err, sizeof err)) { fprintf(stderr, "headroom run: %s\n", err); goto out; }
  if (o.depth) {
    depth_opts dop = {o.depth, o.depth_scale, o.depth_window_ms, o.occlude_m, o.out, pi.width, pi.height};
    if (depth_open(&depth, &dop, err, sizeof err)) { fprintf(stderr, "headroom run: --depth: %s\n", err); goto out; }
  }
  if (o.overlay && overlay_open(&ov, o.overlay, fw, fh, 30, err, sizeof err)) { fprintf(stderr, "headroom run: --overlay: %s\n", err); goto out; }
  if (hr_stats_create(&st_ingest) || hr_stats_create(&st_infer) || hr_stats_create(&st_post) || hr_stats_create(&st_out) ||
      hr_stats_create(&st_frame) || hr_stats_create(&st_lat) || hr_flow_create(&flow)) goto out;
  png = malloc((size_t)pi.width * pi.height);
  if (!png) goto out;
  if (!o.quiet)
    fprintf(stderr, "headroom run: %s -> %s, model %s at %dx%d ratio %g (processing %dx%d), plan %.1f MB%s%s\n",
            hr_source_describe(src), o.out, mi.name, pi.width, pi.height, pi.downsample_ratio, pi.proc_width,
            pi.proc_height, pi.total_bytes / 1e6, o.realtime ? ", realtime" : "", o.adapt ? ", adaptive" : "");
  /* start capture */
  cap.src = src; cap.flow = flow; cap.o = &o; cap.held = -1;
  pthread_mutex_init(&cap.mu, NULL); pthread_cond_init(&cap.cv, NULL);
  if (pthread_create(&cap_thread, NULL, capture_main, &cap)) { fprintf(stderr, "headroom run: cannot start capture thread\n"); goto out; }
  cap_started = 1;
  double t_start = cli_now_ms(), last_status = 0;
  int64_t done = 0, suspended_frames = 0, resets_by_health = 0, replans = 0;
  int suspended = 0, failed_stream = 0, damaged = 0, inj_suspended = 0, rebuild = 0;
  int64_t rebuilds = 0;
  int64_t gov_actions = 0;
  int64_t health_counts[8] = {0};
  for (;;) {
    if (o.frames && done >= o.frames) break;
    void *item = NULL;
    if (hr_flow_take(flow, &item, -1) != HR_OK) break;
    slot *sl = item;
    pthread_mutex_lock(&cap.mu); cap.held = sl->index; pthread_mutex_unlock(&cap.mu);
    double t_take = cli_now_ms();
    int64_t num = sl->index;
    hr_frame f = sl->f;
    if (inj) {
      if (copy_frame(&fc, &sl->f, &f)) goto out;
      hr_fault_apply_input(inj, done, &f);
    }
    hr_health_observe_input(health, &f);
    if (ballast) hr_ballast_tick(ballast, (cli_now_ms() - t_start) / 1e3);
    hr_telemetry_record rec; hr_telemetry_record_init(&rec);
    rec.frame = num;
    hr_outputs out; memset(&out, 0, sizeof out);
    const float *alpha = NULL;
    hr_health_verdict hv; memset(&hv, 0, sizeof hv);
    /* --inject memory-pressure: what the governor does at critical headroom (suspend inference and
     * release the arena) for as long as the fault lasts, then resume */
    if (inj) {
      const int pressure = (hr_fault_active(inj, done) & HR_FAULT_BIT(HR_FAULT_MEMORY_PRESSURE)) != 0;
      if (pressure && !suspended) {
        suspended = inj_suspended = 1; hr_session_suspend(s);
        hr_health_note_event(health, HR_HEALTH_EVENT_GOV_SUSPEND, "injected memory pressure");
      } else if (!pressure && inj_suspended && (!gov || hr_gov_get_ladder(gov)->level != HR_GOV_LEVEL_SUSPEND)) {
        if (hr_session_resume(s, p.width, p.height, lad.ratio[lad.cur]) == HR_OK) {
          suspended = inj_suspended = 0; replans++; ladder_changed(&lad);
          hr_health_note_event(health, HR_HEALTH_EVENT_GOV_RESUME, "injected memory pressure over");
        }
      }
    }
    if (!suspended) {
      if (rebuild) {   /* the session starts over (state zeroed), and so does its monitor */
        hr_session_reset(s); hr_health_reset(health); rebuilds++; rebuild = 0;
      }
      if (inj && (hr_fault_active(inj, done) & HR_FAULT_BIT(HR_FAULT_NAN_STATE))) {
        size_t lens[8]; for (int k = 0; k < s->plan->n_state; k++) lens[k] = (size_t)s->plan->state_bytes[k] / 4;
        hr_fault_apply_state(inj, done, s->state, lens, s->plan->n_state);
      }
      st = hr_session_push(s, &f, &out);
      if (st) { fprintf(stderr, "headroom run: frame %lld: %s\n", (long long)num, hr_session_last_error(s)); goto out; }
      hr_health_note_session_events(health, out.events);
      alpha = inj ? hr_fault_apply_output(inj, done, out.alpha, out.width, out.height) : out.alpha;
      const float *sv[8]; size_t sl_len[8];
      int ns = hr_session_state_views(s, sv, sl_len, 8);
      hr_health_observe_output(health, alpha, out.width, out.height, sv, sl_len, ns, &hv);
      if (hv.action == HR_HEALTH_ACTION_RESET_STATE) { hr_session_reset(s); resets_by_health++; }
      rebuild = hv.state == HR_HEALTH_FAILED;   /* resets did not help: rebuild before the next push */
      rec.ingest_ms = out.ingest_ms; rec.infer_ms = out.infer_ms;
      rec.bytes_copied = out.bytes_copied;
      rec.state_reset = (out.events & HR_EVENT_STATE_RESET) != 0;
      hr_stats_add(st_ingest, out.ingest_ms); hr_stats_add(st_infer, out.infer_ms);
    } else {
      hr_health_get(health, &hv);
      suspended_frames++;
    }
    double t_post0 = cli_now_ms();
    /* governor */
    const char *gov_action = NULL;
    if (gov) {
      hr_gov_decision d; hr_gov_sample gs;
      hr_gov_frame(gov, &d, &gs);
      rec.rss_bytes = (int64_t)gs.rss_bytes;
      rec.headroom_bytes = gs.available_bytes;
      rec.ceiling_safe_bytes = gs.safe_bytes ? (int64_t)gs.safe_bytes : HR_TELEMETRY_NONE;
      rec.ceiling_kill_bytes = gs.kill_bytes ? (int64_t)gs.kill_bytes : HR_TELEMETRY_NONE;
      if (d.action != HR_GOV_ACTION_NONE) {
        gov_action = hr_gov_action_name(d.action);
        gov_actions++;
        if (!o.no_governor) {
          lad.gov_rung = d.rung;
          if (d.action == HR_GOV_ACTION_SUSPEND) {
            /* pass frames through; the arena, kernels and state go back to the OS */
            suspended = 1; hr_session_suspend(s);
            hr_health_note_event(health, HR_HEALTH_EVENT_GOV_SUSPEND, NULL);
          } else if (d.action == HR_GOV_ACTION_RESUME) {
            if (hr_session_resume(s, p.width, p.height, lad.ratio[lad.gov_rung]) == HR_OK) {
              suspended = 0; lad.cur = lad.gov_rung; replans++; ladder_changed(&lad);
              hr_health_note_event(health, HR_HEALTH_EVENT_GOV_RESUME, NULL);
            }
          }
          if (d.action == HR_GOV_ACTION_STEP_DOWN) hr_health_note_event(health, HR_HEALTH_EVENT_GOV_SHED, NULL);
          if (d.action == HR_GOV_ACTION_STEP_UP && d.rung == 0) hr_health_note_event(health, HR_HEALTH_EVENT_GOV_RESTORED, NULL);
        }
      }
    } else {
      FILE *sm = fopen("/proc/self/statm", "r");
      long pages = 0, res = 0;
      if (sm) { if (fscanf(sm, "%ld %ld", &pages, &res) != 2) res = 0; fclose(sm); }
      rec.rss_bytes = res * sysconf(_SC_PAGESIZE);
    }
    rec.governor_action = gov_action;
    /* budget controller, then the effective rung (the governor's cap wins) */
    double frame_ms = cli_now_ms() - t_take;
    if (o.adapt && !suspended) ladder_observe(&lad, frame_ms, o.budget_ms);
    int want = lad.gov_rung > lad.budget_rung ? lad.gov_rung : lad.budget_rung;
    if (!suspended && want != lad.cur) {
      if (hr_session_replan(s, p.width, p.height, lad.ratio[want]) == HR_OK) {
        lad.cur = want; replans++; ladder_changed(&lad);
        hr_session_get_plan(s, &pi);
        char detail[96]; snprintf(detail, sizeof detail, "rung %d of %d, processing %dx%d", want, lad.n, pi.proc_width, pi.proc_height);
        hr_health_note_event(health, HR_HEALTH_EVENT_REPLANNED, detail);
      }
    }
    if (!suspended) {
      hr_session_get_plan(s, &pi);
      rec.proc_w = pi.proc_width; rec.proc_h = pi.proc_height; rec.ratio = pi.downsample_ratio;
    }
    double t_out0 = cli_now_ms();
    rec.post_ms = t_out0 - t_post0;
    /* outputs */
    if (alpha) {
      int64_t n = (int64_t)out.width * out.height;
      if (!o.no_alpha) {
        for (int64_t i = 0; i < n; i++) { float a = alpha[i]; png[i] = (uint8_t)(a <= 0 ? 0 : a >= 1 ? 255 : lrintf(a * 255.f)); }
        snprintf(path, sizeof path, "%s/alpha/%06lld.png", o.out, (long long)num);
        if (hr_png_write_gray8(path, out.width, out.height, png, out.width)) { fprintf(stderr, "headroom run: cannot write %s\n", path); goto out; }
      }
      if (o.raw) {
        snprintf(path, sizeof path, "%s/raw/%06lld.pha.f32", o.out, (long long)num);
        if (hr_file_write_atomic(path, alpha, (size_t)n * 4)) { fprintf(stderr, "headroom run: cannot write %s\n", path); goto out; }
        if (mi.n_state == 0) {
          snprintf(path, sizeof path, "%s/raw/%06lld.out.f32", o.out, (long long)num);
          if (hr_file_write_atomic(path, out.raw, (size_t)n * out.raw_channels * 4)) { fprintf(stderr, "headroom run: cannot write %s\n", path); goto out; }
        }
      }
      if (o.dump_input) {
        /* the model's input tensor; when it is read in place (virtual), it is the frame itself */
        snprintf(path, sizeof path, "%s/input/%06lld.src.f32", o.out, (long long)num);
        size_t bytes = (size_t)pi.width * pi.height * 12;
        const float *src = s->src_ptr;
        float *tmp = NULL;
        if (!src && f.width == pi.width && f.height == pi.height && (tmp = malloc(bytes))) {
          for (int y = 0; y < f.height; y++) hr__ingest_row_rgbf(&f, y, tmp + (size_t)y * f.width * 3);
          src = tmp;
        }
        if (!src || hr_file_write_atomic(path, src, bytes)) { fprintf(stderr, "headroom run: cannot write %s\n", path); free(tmp); goto out; }
        free(tmp);
      }
      if (depth) depth_on_color(depth, num, f.ts_ns, alpha, out.width, out.height);
      if (ov) {
        int64_t oi = -1;
        const uint8_t *occ = depth ? depth_last_occlusion(depth, &oi) : NULL;
        overlay_write(ov, &f, alpha, out.width, out.height, occ && num - oi <= 4 ? occ : NULL);
      }
      if (o.report && (done == 10 || done == 100 || done == 1000))
        save_sample(o.out, num, &f, alpha, out.width, out.height, &ro, sample_paths, &n_samples);
    }
    double t_end = cli_now_ms();
    rec.output_ms = t_end - t_out0;
    rec.latency_ms = t_end - sl->t_cap;
    rec.t_ms = t_end - t_start;
    hr_flow_stats fs; hr_flow_get_stats(flow, &fs);
    rec.dropped = (int64_t)fs.dropped;
    rec.health = hr_health_state_name(hv.state);
    rec.health_reason = hv.reason;
    rec.confidence = alpha ? hv.confidence : NAN;
    if ((unsigned)hv.state < 8) health_counts[hv.state]++;
    if (hv.state == HR_HEALTH_FAILED && !failed_stream) {
      failed_stream = 1;
      fprintf(stderr, "headroom run: frame %lld: health FAILED: %s\n", (long long)num, hv.reason ? hv.reason : "");
    }
    hr_stats_add(st_post, rec.post_ms); hr_stats_add(st_out, rec.output_ms);
    hr_stats_add(st_frame, t_end - t_take); hr_stats_add(st_lat, rec.latency_ms);
    /* telemetry, in frame order; with depth, lines wait for the frame's pairing decision */
    if (depth) {
      pending_push(&pq, tel, &rec);
      if (!alpha) pending_decide(&pq, num, NAN, 0); /* suspended: nothing to fuse */
      int64_t di; double dt; int fused;
      while (depth_pop(depth, &di, &dt, &fused)) {
        pending_decide(&pq, di, dt, fused);
        if (isnan(dt)) hr_health_note_event(health, HR_HEALTH_EVENT_DEPTH_MISALIGNED, NULL);
      }
      pending_flush(&pq, tel, 0);
    } else if (tel) {
      hr_telemetry_write(tel, &rec);
    }
    if (out.events && !o.quiet && !o.status)
      fprintf(stderr, "headroom run: frame %lld:%s%s%s\n", (long long)num, out.events & HR_EVENT_STATE_RESET ? " state reset" : "",
              out.events & HR_EVENT_SCENE_CUT ? " (scene cut)" : "", out.events & HR_EVENT_REPLANNED ? " (replanned)" : "");
    if (o.status && t_end - last_status > 250) {
      last_status = t_end;
      fprintf(stderr, "\r\033[K frame %lld  %.1f ms  %dx%d  %s  rss %.0f MB  dropped %lld ", (long long)num, t_end - t_take,
              pi.proc_width, pi.proc_height, hr_health_state_name(hv.state), rec.rss_bytes / 1e6, (long long)rec.dropped);
    }
    pthread_mutex_lock(&cap.mu); cap.held = -1; pthread_cond_signal(&cap.cv); pthread_mutex_unlock(&cap.mu);
    done++;
  }
  if (o.status) fprintf(stderr, "\n");
  pthread_mutex_lock(&cap.mu); cap.stop = 1; cap.held = -1; pthread_cond_signal(&cap.cv); pthread_mutex_unlock(&cap.mu);
  hr_flow_close(flow);
  pthread_join(cap_thread, NULL); cap_started = 0;
  if (cap.error) {
    fprintf(stderr, "headroom run: %s (after %lld frames; outputs written so far are valid)\n", cap.errmsg, (long long)done);
    goto out;
  }
  if (depth) {
    depth_finish(depth);
    int64_t di; double dt; int fused;
    while (depth_pop(depth, &di, &dt, &fused)) pending_decide(&pq, di, dt, fused);
    pending_flush(&pq, tel, 1);
    if (pq.forced && !o.quiet) fprintf(stderr, "headroom run: %lld telemetry lines written before their depth decision\n", (long long)pq.forced);
  }
  if (o.state_out) {
    size_t sz = hr_session_state_size(s), wr = 0;
    void *buf = malloc(sz);
    if (!buf || hr_session_state_save(s, buf, sz, &wr) || hr_file_write_atomic(o.state_out, buf, wr)) {
      fprintf(stderr, "headroom run: cannot save state to %s\n", o.state_out); free(buf); goto out;
    }
    free(buf);
  }
  {
    /* a damaged input must not pass silently: decoder errors, or far fewer frames than announced */
    hr_source_stats ss; hr_source_get_stats(src, &ss);
    int64_t announced = hr_source_frame_count(src);
    int short_read = !o.frames && announced > 0 && cap.read < announced - announced / 20 - 1;
    if (ss.warnings > 0 || short_read) {
      fprintf(stderr, "headroom run: %s: damaged input: %lld frame(s) decoded with errors, %lld of %lld announced frames read "
              "(outputs written are valid)\n", o.input, (long long)ss.warnings, (long long)cap.read, (long long)announced);
      damaged = 1;
    }
  }
  double wall = cli_now_ms() - t_start;
  hr_flow_stats fs; hr_flow_get_stats(flow, &fs);
  if (!o.quiet) {
    fprintf(stderr, "headroom run: %lld frames in %.1f s (%.1f fps delivered), dropped %llu, frame p50 %.1f / p99 %.1f ms, latency p99 %.1f ms\n",
            (long long)done, wall / 1e3, done / (wall / 1e3), (unsigned long long)fs.dropped, hr_stats_quantile(st_frame, 0.5),
            hr_stats_quantile(st_frame, 0.99), hr_stats_quantile(st_lat, 0.99));
    fprintf(stderr, "headroom run: stages p50 ms: ingest %.2f infer %.2f post %.2f output %.2f; replans %lld, governor actions %lld, "
            "suspended frames %lld, health resets %lld, rebuilds %lld\n", hr_stats_quantile(st_ingest, 0.5), hr_stats_quantile(st_infer, 0.5),
            hr_stats_quantile(st_post, 0.5), hr_stats_quantile(st_out, 0.5), (long long)replans, (long long)gov_actions,
            (long long)suspended_frames, (long long)resets_by_health, (long long)rebuilds);
    fprintf(stderr, "headroom run: health frames:");
    for (int k = 0; k < 6; k++) if (health_counts[k]) fprintf(stderr, " %s %lld", hr_health_state_name((hr_health_state)k), (long long)health_counts[k]);
    fprintf(stderr, "\n");
    if (depth) { char buf[1024]; depth_summary(depth, buf, sizeof buf); fprintf(stderr, "headroom run: depth: %s\n", buf); }
  }
  if (tel) { hr_telemetry_close(tel); tel = NULL; }
  if (ov) { overlay_close(ov); ov = NULL; }
  if (o.report) {
    char title[256];
    snprintf(title, sizeof title, "headroom run: %s on %s", mi.name, o.input);
    ro.title = title;
    ro.budget_ms = o.budget_ms;
    ro.err = err; ro.err_len = sizeof err;
    if (hr_report_write_html(o.telemetry, o.report, &ro)) { fprintf(stderr, "headroom run: report: %s\n", err); goto out; }
    if (!o.quiet) fprintf(stderr, "headroom run: report written to %s\n", o.report);
  }
  if (!o.quiet) fprintf(stderr, "headroom run: %lld frames written to %s\n", (long long)done, o.out);
  rc = damaged ? 1 : 0;
out:
  if (cap_started) {
    pthread_mutex_lock(&cap.mu); cap.stop = 1; cap.held = -1; pthread_cond_signal(&cap.cv); pthread_mutex_unlock(&cap.mu);
    hr_flow_close(flow);
    pthread_join(cap_thread, NULL);
  }
  free(png); free(fc.buf);
  hr_telemetry_close(tel);
  overlay_close(ov);
  depth_close(depth);
  hr_fault_destroy(inj);
  hr_health_destroy(health);
  hr_ballast_destroy(ballast);
  hr_gov_destroy(gov);
  hr_stats_destroy(st_ingest); hr_stats_destroy(st_infer); hr_stats_destroy(st_post); hr_stats_destroy(st_out);
  hr_stats_destroy(st_frame); hr_stats_destroy(st_lat);
  hr_flow_destroy(flow);
  hr_session_destroy(s);
  hr_model_destroy(m);
  hr_source_destroy(src);
  return rc;
}
