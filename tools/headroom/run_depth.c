/* `headroom run --depth` (issue 7): the CLI's side of depth fusion. The pairing and the fusion are
 * the stream's (params.depth, hr_stream_push_depth / hr_stream_pop_depth, src/stream/depth.c);
 * this file reads the depth source just far enough ahead, hands the stream's decisions to the
 * output thread and writes the person's depth (and occlusion) PNGs there.
 *
 * Threads: a reader thread decodes the depth PNGs up to DEPTH_AHEAD frames ahead (the decode,
 * ~10-20 ms a frame, stays off the live loop as it was before the fusion moved); depth_feed and
 * depth_take run on the live loop's thread around hr_stream_push (the stream is driven by that
 * thread only); depth_write_upto runs on the output thread inside the depth sink; depth_finish
 * runs after the output thread stopped. Between the loop and the output thread, a queue of
 * DEPTH_HANDOFF decisions with copies of their person depth and occlusion, allocated at attach.
 *
 * Read-ahead: before a color frame at t is pushed, decoded depth frames are pushed while the
 * newest one pushed is at or before t + window (so one beyond it is always in: that is what lets
 * the stream decide t's frame in its own push). The stream copies each depth frame into its pool,
 * so the source's pool only covers the frames decoded ahead.
 *
 * Depth values: the source hands out the file's raw 16-bit values (depth_scale 1000 there, so 65535
 * stays recognisable); the stream turns them into millimetres with --depth-scale. */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "run.h"
#include "headroom/io.h"

enum {
  DEPTH_AHEAD = 4,                  /* depth frames decoded ahead by the reader (source pool + 2) */
  DEPTH_HANDOFF = 16,               /* decisions between the loop and the output thread (at most
                                       8 undecided + 3 frames in flight are ever waiting) */
  DEPTH_MAP = 64,                   /* stream frame -> source index, for recent frames */
  DEPTH_MAX_READ_ERRORS = 16,       /* consecutive failed depth reads taken as the end */
};

typedef struct depth_item {
  int64_t index, tag;           /* source frame; the frame after whose push it was taken */
  double dt_ms;                 /* NAN when unpaired */
  int has_px;                   /* pm (and occ) hold the fused frame */
  uint16_t *pm;
  uint8_t *occ;
} depth_item;

typedef struct depth_read { hr_frame f; int st; char err[160]; } depth_read;

struct depth_ctx {
  hr_source *src;
  hr_stream *stream;
  /* the reader thread (rmu): decoded frames (or read errors) in order */
  pthread_t reader;
  pthread_mutex_t rmu;
  pthread_cond_t rcv;
  int reader_on, reader_eof, reader_stop;
  depth_read ahead[DEPTH_AHEAD];
  int ahead_head, ahead_n;
  int64_t window_ns;
  double occlude_m;
  int aw, ah;
  int64_t last_depth_ts;
  int have_depth, depth_eof;
  int64_t map_frame[DEPTH_MAP], map_index[DEPTH_MAP];
  /* the handoff queue (mu) */
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int mu_ok;
  depth_item q[DEPTH_HANDOFF];
  int qhead, qn;
  /* output thread */
  uint8_t *occ_last;            /* the newest fused frame's occlusion, for the overlay */
  int64_t occ_index;
  char path[4096];
  size_t dir_len;
  /* counters */
  int64_t reads, read_errors, refused, written, write_errors, handoff_lost;
  int64_t read_ns, write_ns;
  char err[512];
};

static int64_t depth_now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

__attribute__((format(printf, 4, 5)))
static int depth_fail(char *err, size_t err_len, int st, const char *fmt, ...) {
  if (err && err_len) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, err_len, fmt, ap);
    va_end(ap);
  }
  return st;
}

void depth_close(depth_ctx *d) {
  if (!d) return;
  if (d->reader_on) {
    pthread_mutex_lock(&d->rmu);
    d->reader_stop = 1;
    pthread_cond_broadcast(&d->rcv);
    pthread_mutex_unlock(&d->rmu);
    pthread_join(d->reader, NULL);
    pthread_mutex_destroy(&d->rmu);
    pthread_cond_destroy(&d->rcv);
  }
  hr_source_destroy(d->src);
  for (int i = 0; i < DEPTH_HANDOFF; i++) { free(d->q[i].pm); free(d->q[i].occ); }
  free(d->occ_last);
  if (d->mu_ok) { pthread_mutex_destroy(&d->mu); pthread_cond_destroy(&d->cv); }
  free(d);
}

/* The reader: decode the next depth frame whenever fewer than DEPTH_AHEAD wait, until the end (or
 * DEPTH_MAX_READ_ERRORS failed reads in a row). */
static void *depth_reader_main(void *arg) {
  depth_ctx *d = arg;
  int err_run = 0;
  pthread_mutex_lock(&d->rmu);
  for (;;) {
    while (d->ahead_n == DEPTH_AHEAD && !d->reader_stop) pthread_cond_wait(&d->rcv, &d->rmu);
    if (d->reader_stop) break;
    pthread_mutex_unlock(&d->rmu);
    depth_read r;
    memset(&r, 0, sizeof r);
    int64_t t0 = depth_now_ns();
    r.st = hr_source_read(d->src, &r.f);
    int64_t dt = depth_now_ns() - t0;
    if (r.st && r.st != HR_EEOF) snprintf(r.err, sizeof r.err, "%s", hr_source_last_error(d->src));
    err_run = r.st && r.st != HR_EEOF ? err_run + 1 : 0;
    pthread_mutex_lock(&d->rmu);
    d->read_ns += dt;
    if (r.st == HR_EEOF) { d->reader_eof = 1; pthread_cond_broadcast(&d->rcv); break; }
    d->ahead[(d->ahead_head + d->ahead_n) % DEPTH_AHEAD] = r;
    d->ahead_n++;
    if (err_run >= DEPTH_MAX_READ_ERRORS) d->reader_eof = 1;
    pthread_cond_broadcast(&d->rcv);
    if (d->reader_eof) break;
  }
  pthread_mutex_unlock(&d->rmu);
  return NULL;
}

int depth_open(depth_ctx **out, const run_opts *o, hr_stream_params *p, char *err, size_t err_len) {
  char e[512];
  if (err && err_len) err[0] = 0;
  *out = NULL;
  if (!o->depth) return HR_OK;
  if (!*o->depth || !o->out || !*o->out) return depth_fail(err, err_len, HR_EINVAL, "depth: no depth source or output folder");
  double scale = o->depth_scale == 0 ? 1000.0 : o->depth_scale;
  if (!(scale > 0) || !isfinite(scale))
    return depth_fail(err, err_len, HR_EINVAL, "depth: --depth-scale must be > 0, not %g", o->depth_scale);
  if (!(o->depth_window_ms >= 0 && o->depth_window_ms <= 1000))
    return depth_fail(err, err_len, HR_EINVAL, "depth: --depth-window-ms must be in 0..1000, not %g", o->depth_window_ms);
  if (!(o->occlude_m >= 0) || !isfinite(o->occlude_m))
    return depth_fail(err, err_len, HR_EINVAL, "depth: --occlude-at must be >= 0 metres, not %g", o->occlude_m);
  if (strlen(o->out) > 4000) return depth_fail(err, err_len, HR_EINVAL, "depth: output folder name too long: %.60s...", o->out);
  depth_ctx *d = calloc(1, sizeof *d);
  if (!d) return depth_fail(err, err_len, HR_ENOMEM, "depth: out of memory");
  d->window_ns = llround(o->depth_window_ms * 1e6);
  d->occlude_m = o->occlude_m;
  d->occ_index = -1;
  for (int i = 0; i < DEPTH_MAP; i++) d->map_frame[i] = -1;
  hr_source_params sp;
  hr_source_params_default(&sp);
  sp.stream = HR_SOURCE_STREAM_DEPTH;
  sp.depth_scale = 1000.0;   /* raw values: the stream converts with --depth-scale */
  sp.pool_size = DEPTH_AHEAD + 2;   /* the frames decoded ahead, the one being pushed, the one being read */
  int st = hr_source_open(o->depth, &sp, &d->src, e, sizeof e);
  if (st) { depth_close(d); return depth_fail(err, err_len, st, "depth: %s", e); }
  hr_pixfmt fmt;
  int dw, dh;
  hr_source_get_format(d->src, &fmt, &dw, &dh);
  if (fmt != HR_PIX_DEPTH16_MM || dw <= 0 || dh <= 0) {
    depth_close(d);
    return depth_fail(err, err_len, HR_ENOTSUP, "depth: %s gives %s frames, not 16-bit depth", o->depth, hr_pixfmt_name(fmt));
  }
  d->dir_len = strlen(o->out);
  memcpy(d->path, o->out, d->dir_len + 1);
  snprintf(d->path + d->dir_len, sizeof d->path - d->dir_len, "/depth");
  if (hr_mkdirs(d->path) ||
      (o->occlude_m > 0 && (snprintf(d->path + d->dir_len, sizeof d->path - d->dir_len, "/occlusion"), hr_mkdirs(d->path)))) {
    int en = errno;
    snprintf(e, sizeof e, "%.400s", d->path);
    depth_close(d);
    return depth_fail(err, err_len, HR_EIO, "depth: cannot create %s: %s", e, strerror(en));
  }
  pthread_mutex_init(&d->mu, NULL);
  pthread_cond_init(&d->cv, NULL);
  d->mu_ok = 1;
  pthread_mutex_init(&d->rmu, NULL);
  pthread_cond_init(&d->rcv, NULL);
  if (pthread_create(&d->reader, NULL, depth_reader_main, d)) {
    pthread_mutex_destroy(&d->rmu); pthread_cond_destroy(&d->rcv);
    depth_close(d);
    return depth_fail(err, err_len, HR_ENOMEM, "depth: cannot start the reader thread");
  }
  d->reader_on = 1;
  p->depth = true;
  p->depth_window_ms = o->depth_window_ms;
  p->depth_scale = scale;
  p->occlude_m = o->occlude_m;
  p->depth_width = dw;
  p->depth_height = dh;
  *out = d;
  return HR_OK;
}

int depth_attach(depth_ctx *d, hr_stream *s, int aw, int ah) {
  d->stream = s;
  d->aw = aw;
  d->ah = ah;
  size_t n = (size_t)aw * (size_t)ah;
  for (int i = 0; i < DEPTH_HANDOFF; i++) {
    d->q[i].pm = malloc(n * sizeof *d->q[i].pm);
    if (d->occlude_m > 0) d->q[i].occ = malloc(n);
    if (!d->q[i].pm || (d->occlude_m > 0 && !d->q[i].occ)) return HR_ENOMEM;
  }
  if (d->occlude_m > 0 && !(d->occ_last = malloc(n))) return HR_ENOMEM;
  return HR_OK;
}

/* ---- the live loop's thread ---------------------------------------------------------------- */

void depth_feed(depth_ctx *d, int64_t color_ts) {
  if (!d) return;
  while (!d->depth_eof && (!d->have_depth || d->last_depth_ts <= color_ts + d->window_ns)) {
    pthread_mutex_lock(&d->rmu);
    while (!d->ahead_n && !d->reader_eof) pthread_cond_wait(&d->rcv, &d->rmu);
    depth_read *r = d->ahead_n ? &d->ahead[d->ahead_head] : NULL;
    pthread_mutex_unlock(&d->rmu);
    if (!r) { d->depth_eof = 1; hr_stream_push_depth(d->stream, NULL); break; }   /* the list is over */
    d->reads++;
    if (r->st) {
      if (d->read_errors++ == 0) snprintf(d->err, sizeof d->err, "%s", r->err);
    } else {
      d->have_depth = 1;
      d->last_depth_ts = r->f.ts_ns;
      if (hr_stream_push_depth(d->stream, &r->f) && d->refused++ == 0)   /* copied into the stream's pool */
        snprintf(d->err, sizeof d->err, "%s", hr_stream_last_error(d->stream));
    }
    pthread_mutex_lock(&d->rmu);
    d->ahead_head = (d->ahead_head + 1) % DEPTH_AHEAD;
    d->ahead_n--;
    pthread_cond_broadcast(&d->rcv);
    pthread_mutex_unlock(&d->rmu);
  }
}

/* one decision into the handoff queue; waits (bounded) for the output thread when it is full */
static void depth_hand(depth_ctx *d, int64_t index, int64_t tag, const hr_stream_depth *dd) {
  pthread_mutex_lock(&d->mu);
  if (d->qn == DEPTH_HANDOFF) {
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 2;
    while (d->qn == DEPTH_HANDOFF && pthread_cond_timedwait(&d->cv, &d->mu, &until) == 0) {}
  }
  if (d->qn == DEPTH_HANDOFF) { d->handoff_lost++; pthread_mutex_unlock(&d->mu); return; }
  depth_item *it = &d->q[(d->qhead + d->qn) % DEPTH_HANDOFF];
  pthread_mutex_unlock(&d->mu);
  /* the slot is the loop's until qn counts it */
  it->index = index;
  it->tag = tag;
  it->dt_ms = dd && dd->paired ? dd->dt_ms : NAN;
  it->has_px = dd && dd->fused && dd->person_mm;
  if (it->has_px) {
    memcpy(it->pm, dd->person_mm, (size_t)d->aw * (size_t)d->ah * sizeof *it->pm);
    if (it->occ && dd->occlusion) memcpy(it->occ, dd->occlusion, (size_t)d->aw * (size_t)d->ah);
  }
  pthread_mutex_lock(&d->mu);
  d->qn++;
  pthread_mutex_unlock(&d->mu);
}

static int64_t depth_index_of(const depth_ctx *d, int64_t frame) {
  const int k = (int)(frame % DEPTH_MAP);
  return d->map_frame[k] == frame ? d->map_index[k] : frame;
}

static void depth_pop_all(depth_ctx *d, int64_t tag) {
  hr_stream_depth dd;
  while (hr_stream_pop_depth(d->stream, &dd) == HR_OK) depth_hand(d, depth_index_of(d, dd.frame), tag, &dd);
}

void depth_take(depth_ctx *d, const hr_stream_result *r, int64_t index) {
  if (!d) return;
  const int k = (int)(r->frame % DEPTH_MAP);
  d->map_frame[k] = r->frame;
  d->map_index[k] = index;
  if (!r->alpha) depth_hand(d, index, index, NULL);   /* suspended: nothing to fuse, decided now */
  depth_pop_all(d, index);
}

/* ---- the output thread ----------------------------------------------------------------------- */

static int depth_write_png(depth_ctx *d, const depth_item *it) {
  int64_t t0 = depth_now_ns();
  errno = 0;
  size_t room = sizeof d->path - d->dir_len;
  snprintf(d->path + d->dir_len, room, "/depth/%06lld.png", (long long)it->index);
  int st = hr_png_write_gray16(d->path, d->aw, d->ah, it->pm, (ptrdiff_t)d->aw * 2);
  if (!st && it->occ) {
    snprintf(d->path + d->dir_len, room, "/occlusion/%06lld.png", (long long)it->index);
    st = hr_png_write_gray8(d->path, d->aw, d->ah, it->occ, d->aw);
  }
  d->write_ns += depth_now_ns() - t0;
  if (st && d->write_errors++ == 0)
    snprintf(d->err, sizeof d->err, "cannot write %.400s: %s", d->path, errno ? strerror(errno) : hr_status_str(st));
  return st;
}

int depth_write_upto(depth_ctx *d, int64_t tag, void (*decided)(void *, int64_t, double, int), void *listener, char *err, size_t n) {
  int rc = 0;
  while (!rc) {
    pthread_mutex_lock(&d->mu);
    depth_item *it = d->qn && d->q[d->qhead].tag <= tag ? &d->q[d->qhead] : NULL;
    pthread_mutex_unlock(&d->mu);
    if (!it) break;
    int fused = 0;
    if (it->has_px && depth_write_png(d, it)) {
      rc = -1;
      if (err && n) snprintf(err, n, "%s", d->err);
    } else if (it->has_px) {
      fused = 1;
      d->written++;
      if (it->occ) { memcpy(d->occ_last, it->occ, (size_t)d->aw * (size_t)d->ah); d->occ_index = it->index; }
    }
    if (decided) decided(listener, it->index, it->dt_ms, fused);
    pthread_mutex_lock(&d->mu);
    d->qhead = (d->qhead + 1) % DEPTH_HANDOFF;
    d->qn--;
    pthread_cond_broadcast(&d->cv);
    pthread_mutex_unlock(&d->mu);
  }
  return rc;
}

int depth_finish(depth_ctx *d, void (*decided)(void *, int64_t, double, int), void *listener, char *err, size_t n) {
  if (!d || !d->stream) return 0;
  hr_stream_flush_depth(d->stream);
  depth_pop_all(d, INT64_MAX);
  int rc = 0;
  while (depth_write_upto(d, INT64_MAX, decided, listener, err, n)) rc = -1;   /* the rest all the same */
  return rc;
}

/* The occlusion mask of the newest fused frame written (out_w x out_h, 255 = occluding); output
 * thread only; NULL without --occlude-at or before the first fused frame. */
const uint8_t *depth_last_occlusion(const depth_ctx *d, int64_t *index) {
  if (!d || d->occ_index < 0) return NULL;
  if (index) *index = d->occ_index;
  return d->occ_last;
}

/* One line for the run summary, without a "depth:" prefix (the caller adds one); ~200 bytes,
 * more when something went wrong (errors, forced decisions, and the first message). */
void depth_summary(const depth_ctx *d, char *buf, size_t n) {
  if (!buf || !n) return;
  if (!d) { snprintf(buf, n, "off"); return; }
  hr_stream_stats ss;
  hr_stream_get_stats(d->stream, &ss);
  pthread_mutex_lock((pthread_mutex_t *)&d->rmu);   /* the reader may still be decoding ahead */
  const int64_t read_ns = d->read_ns;
  pthread_mutex_unlock((pthread_mutex_t *)&d->rmu);
  const char *serr = hr_stream_last_error(d->stream);
  int k = snprintf(buf, n,
                   "%lld color frames: %lld fused within %g ms (max |dt| %.2f ms), %lld without depth; %lld depth frames, "
                   "%lld unused; align+fuse %.0f us/frame (worst %.0f), decode %.1f ms/depth, write %.1f ms/fused",
                   (long long)ss.depth_colors, (long long)d->written, (double)d->window_ns / 1e6, ss.depth_max_abs_dt_ms,
                   (long long)ss.depth_unpaired, (long long)ss.depth_frames, (long long)ss.depth_unused,
                   ss.depth_colors ? ss.depth_ms * 1e3 / (double)ss.depth_colors : 0, ss.depth_ms_max * 1e3,
                   ss.depth_frames ? (double)read_ns / 1e6 / (double)ss.depth_frames : 0,
                   d->written ? (double)d->write_ns / 1e6 / (double)d->written : 0);
  if (k > 0 && (size_t)k < n && ss.depth_pairs != d->written)
    k += snprintf(buf + k, n - (size_t)k, "; %lld paired but not written", (long long)(ss.depth_pairs - d->written));
  if (k > 0 && (size_t)k < n && (d->read_errors || d->write_errors || ss.depth_forced || d->refused || d->handoff_lost))
    k += snprintf(buf + k, n - (size_t)k, "; %lld read errors, %lld write errors, %lld forced, %lld refused, %lld lost",
                  (long long)d->read_errors, (long long)d->write_errors, (long long)ss.depth_forced, (long long)d->refused,
                  (long long)d->handoff_lost);
  if (k > 0 && (size_t)k < n && (d->err[0] || (ss.depth_refused && serr[0])))
    snprintf(buf + k, n - (size_t)k, " (%s)", d->err[0] ? d->err : serr);
}
