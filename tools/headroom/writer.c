/* The output thread of `headroom run`: runs the sinks on copies of delivered frames, in order, off
 * the live loop's thread. A frame a sink fails on is taken back from the sinks before it (unwrite)
 * and the run stops; frames queued behind it are not written. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __linux__
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif
#include "cli.h"
#include "writer.h"

/* The slots carry the matte as 8 bits (writer_alpha8_wanted), set by writer_start and read by
 * writer_alpha8, which has no writer to ask: one run a process. */
static int slots_alpha8;

/* 1 when an output reads the matte as floats (or draws or fuses it). */
static int matte_read_as_floats(const run_opts *o) { return o->raw || o->dump_input || o->fgr || o->overlay || o->report || o->depth; }
/* 1 when a compositor reads it (--composite, --out-video, --v4l2-out: hr_compositor_apply_u8 takes the bytes). */
static int matte_composited(const run_opts *o) { return o->composite || o->out_video || o->v4l2_out; }
/* 1 when an output other than the alpha PNGs reads the matte. */
static int matte_read_elsewhere(const run_opts *o) { return matte_read_as_floats(o) || matte_composited(o); }

int writer_alpha8_wanted(const run_opts *o) { return !matte_read_as_floats(o) && (!o->no_alpha || matte_composited(o)); }

int writer_float_unread(const run_opts *o) { return !matte_read_as_floats(o); }

/* 1 when no sink reads the matte (--no-alpha and no other output of it): the slots keep none. */
static int alpha_unread(const run_opts *o) { return o->no_alpha && !matte_read_elsewhere(o); }

const uint8_t *writer_alpha8(const run_frame *f) {
  if (!slots_alpha8) return NULL;   /* every run_frame is a slot's (write_slot): only then looked into */
  const writer_slot *s = (const writer_slot *)(const void *)((const char *)f->res - offsetof(writer_slot, res));
  return s->alpha8 && s->has_alpha8 ? s->alpha8 : NULL;
}

static void write_slot(writer *w, writer_slot *s) {
  run_frame rf = {s->index, s->done, &s->res, &s->res.record};
  char err[1024];
  double t0 = cli_now_ms();
  int failed = -1;   /* the data sink that failed, or -2 for a record sink */
  for (int k = 0; failed == -1 && run_data_sinks[k]; k++)
    if (w->ctx[0][k] && run_data_sinks[k]->write(w->ctx[0][k], &rf, err, sizeof err)) failed = k;
  s->res.record.output_ms = cli_now_ms() - t0;
  for (int k = 0; failed == -1 && run_record_sinks[k]; k++)
    if (w->ctx[1][k] && run_record_sinks[k]->write(w->ctx[1][k], &rf, err, sizeof err)) failed = -2;
  if (failed != -1) {
    for (int k = 0; run_data_sinks[k] && (failed == -2 || k < failed); k++)
      if (w->ctx[0][k] && run_data_sinks[k]->unwrite) run_data_sinks[k]->unwrite(w->ctx[0][k], &rf);
    pthread_mutex_lock(&w->mu);
    w->failed = 1;
    snprintf(w->err, sizeof w->err, "%s", err);
    pthread_mutex_unlock(&w->mu);
    return;
  }
  hr_stats_add(w->st_out, s->res.record.output_ms);
  w->written++;
}

static void *writer_main(void *arg) {
  writer *w = arg;
#ifdef __linux__
  /* nice 15, below the live loop (0) and the network thread of --tail-every-frame (5): encoding and
   * disk writes never delay a frame's matte or starve the network; when they
   * fall behind, frames find the slots busy and are dropped (counted), not delayed */
  setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), 15);
#endif
  pthread_mutex_lock(&w->mu);
  for (;;) {
    while (!w->count && !w->stop) pthread_cond_wait(&w->cv, &w->mu);
    if (!w->count) break;
    writer_slot *s = &w->slot[w->head];
    int skip = w->failed;
    w->busy = 1;
    pthread_mutex_unlock(&w->mu);
    if (!skip) write_slot(w, s);
    pthread_mutex_lock(&w->mu);
    w->busy = 0;
    w->head = (w->head + 1) % WRITER_SLOTS;
    w->count--;
    pthread_cond_broadcast(&w->cv);
  }
  pthread_mutex_unlock(&w->mu);
  return NULL;
}

int writer_start(writer *w, run_cfg *cfg, void **data_ctx, void **record_ctx, hr_stats *st_out) {
  memset(w, 0, sizeof *w);
  w->cfg = cfg; w->ctx[0] = data_ctx; w->ctx[1] = record_ctx; w->st_out = st_out;
  size_t n = (size_t)cfg->width * (size_t)cfg->height;
  w->alpha8 = slots_alpha8 = writer_alpha8_wanted(cfg->o);
  w->alpha_unread = alpha_unread(cfg->o);
  for (int i = 0; i < WRITER_SLOTS; i++) {
    writer_slot *s = &w->slot[i];
    if (w->alpha_unread) {
      /* no copy of the matte at all */
    } else if (w->alpha8 ? !(s->alpha8 = malloc(n ? n : 1)) : !(s->alpha = malloc(n * sizeof(float)))) {
      return -1;
    }
    if (cfg->o->raw && cfg->n_state == 0 && !(s->raw = malloc(n * 4 * sizeof(float)))) return -1;
    if (cfg->o->dump_input && !(s->input_f = malloc(n * 3 * sizeof(float)))) return -1;
    if (cfg->o->fgr && !(s->fgr = malloc(n * 3 * sizeof(float)))) return -1;
  }
  pthread_mutex_init(&w->mu, NULL); pthread_cond_init(&w->cv, NULL);
  if (pthread_create(&w->thread, NULL, writer_main, w)) return -1;
  w->started = 1;
  return 0;
}

writer_slot *writer_acquire(writer *w, int wait) {
  pthread_mutex_lock(&w->mu);
  while (wait && w->count == WRITER_SLOTS && !w->failed) pthread_cond_wait(&w->cv, &w->mu);
  writer_slot *s = w->count < WRITER_SLOTS ? &w->slot[(w->head + w->count) % WRITER_SLOTS] : NULL;
  pthread_mutex_unlock(&w->mu);
  return s;
}

int writer_fill(writer *w, writer_slot *s, const hr_stream_result *r, int64_t index, int64_t done) {
  const run_opts *o = w->cfg->o;
  s->res = *r;
  s->index = index; s->done = done;
  snprintf(s->reason, sizeof s->reason, "%s", r->health.reason ? r->health.reason : "");
  s->res.health.reason = s->reason;
  s->res.record.health_reason = s->reason;
  s->res.fgr = NULL;
  s->res.model_input = NULL;
  s->has_alpha8 = 0;
  if (w->alpha_unread) {   /* nothing reads it (sinks see every frame as without a matte) */
    s->res.alpha = NULL;
    s->res.raw = NULL;
  } else if ((r->alpha || r->alpha_u8) && w->alpha8) {   /* only the alpha PNGs and compositors read it: 8 bits, no float copy */
    /* the stream's own (run asks for them whenever the slots take them: writer_float_unread; the
     * PNG sink's rounding) */
    if (!r->alpha_u8) return -2;
    memcpy(s->alpha8, r->alpha_u8, (size_t)r->width * (size_t)r->height);
    s->has_alpha8 = 1;
    s->res.alpha = NULL;
    s->res.raw = NULL;
  } else if (r->alpha) {
    size_t n = (size_t)r->width * (size_t)r->height;
    memcpy(s->alpha, r->alpha, n * sizeof(float));
    s->res.alpha = s->alpha;
    s->res.raw = s->alpha;
    /* the raw output is often the matte itself (RVM's one channel): one copy serves both */
    if (s->raw && r->raw_channels <= 4 && !(r->raw == r->alpha && r->raw_channels == 1)) { memcpy(s->raw, r->raw, n * (size_t)r->raw_channels * sizeof(float)); s->res.raw = s->raw; }
    if (s->fgr && r->fgr) { memcpy(s->fgr, r->fgr, n * 3 * sizeof(float)); s->res.fgr = s->fgr; }
    if (s->input_f && r->model_input) { memcpy(s->input_f, r->model_input, n * 3 * sizeof(float)); s->res.model_input = s->input_f; }
  }
  /* the input frame: copied only when a sink reads its pixels (overlay, the input dump, a report sample) */
  int need = o->overlay || (o->dump_input && !s->res.model_input) || (o->report && (done == 10 || done == 100 || done == 1000));
  int composite = o->composite || o->out_video || o->v4l2_out;   /* every frame, suspended ones too */
  if ((need && r->alpha) || composite) {
    if (hr_frame_copy(r->input, &s->frame_buf, &s->frame_cap, &s->frame)) return -1;
  } else {
    memset(&s->frame, 0, sizeof s->frame);
    s->frame.fmt = r->input->fmt; s->frame.width = r->input->width; s->frame.height = r->input->height;
    s->frame.ts_ns = r->input->ts_ns;
  }
  s->res.input = &s->frame;
  return 0;
}

void writer_submit(writer *w) {
  pthread_mutex_lock(&w->mu);
  w->count++;
  pthread_cond_broadcast(&w->cv);
  pthread_mutex_unlock(&w->mu);
}

void writer_finish(writer *w) {
  if (w->started) {
    pthread_mutex_lock(&w->mu);
    w->stop = 1;
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
    pthread_join(w->thread, NULL);
    pthread_mutex_destroy(&w->mu); pthread_cond_destroy(&w->cv);
    w->started = 0;
  }
  for (int i = 0; i < WRITER_SLOTS; i++) {
    free(w->slot[i].alpha); free(w->slot[i].alpha8); free(w->slot[i].raw); free(w->slot[i].input_f); free(w->slot[i].fgr); free(w->slot[i].frame_buf);
    memset(&w->slot[i], 0, sizeof w->slot[i]);
  }
}

int writer_failed(writer *w, char *buf, size_t n) {
  if (!w->started) {   /* finished (or never started): no other thread */
    if (w->failed && buf) snprintf(buf, n, "%s", w->err);
    return w->failed;
  }
  pthread_mutex_lock(&w->mu);
  int f = w->failed;
  if (f && buf) snprintf(buf, n, "%s", w->err);
  pthread_mutex_unlock(&w->mu);
  return f;
}
