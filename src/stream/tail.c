/* Tail-every-frame: the network on a worker, the guided-filter tail on every frame (tail.h). */
#include <stdio.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>
#include <time.h>
#ifdef __linux__
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif
#include "stream/tail.h"

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* The tail's row ranges (hr__fgf chunks): over the session's pool when the tail takes it, one after
 * another on the caller's thread otherwise (the same rows, the same bytes either way). */
#define TAIL_CHUNKS 8

static void *worker(void *arg) {
  hr__tailrun *t = arg;
#ifdef __linux__
  /* below the caller's thread: the tail on every frame comes first, the network gets the rest.
   * Threads made from here (the session's pool, when it is created through hr__tail_call)
   * inherit it. Raising one's own nice value needs no privilege; a failure changes nothing. */
  /* and SCHED_BATCH (no privilege needed either): a network thread waking up does not preempt
   * the caller's thread on its CPU, where it had, for 7-19 ms now and then, in the middle of a
   * push that had just posted a run (HR_TAIL_BATCH=0: the plain policy, for measurements) */
  const char *batch = getenv("HR_TAIL_BATCH");
  if (!batch || atoi(batch) != 0) {
    struct sched_param sp = {0};
    pthread_setschedparam(pthread_self(), SCHED_BATCH, &sp);
  }
  if (t->nice > 0) setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), t->nice);
#endif
  pthread_mutex_lock(&t->mu);
  for (;;) {
    while (!t->job && !t->call && !t->quit) pthread_cond_wait(&t->cv, &t->mu);
    if (t->quit) break;
    if (t->call) {
      void (*fn)(void *) = t->call;
      pthread_mutex_unlock(&t->mu);
      fn(t->call_arg);
      pthread_mutex_lock(&t->mu);
      t->call = NULL;
      t->busy = 0;
      pthread_cond_broadcast(&t->cv);
      continue;
    }
    t->job = 0;
    t->in_job = 1;
    int slot = 0;
    while (slot == t->pub || slot == t->reading) slot++;   /* three slots: one is always free */
    const int64_t frame = t->job_frame;
    const size_t n = (size_t)t->si.lr_h * t->si.lr_w;
    pthread_mutex_unlock(&t->mu);
    const double t0 = now_ms(), p0 = t->gate.paused_ms;
    hr_status st = hr__split_run_net(t->s, &t->si, t->coef[slot], t->coef[slot] + n);
    /* the run's own time, less its stops for the tail (pool_take): what a push that waits for its
     * frame's run (no tail meanwhile) would wait */
    double ms = now_ms() - t0 - (t->gate.paused_ms - p0);
    pthread_mutex_lock(&t->mu);
    t->net_st = st;
    if (st) snprintf(t->net_err, sizeof t->net_err, "network run on frame %lld failed: %s", (long long)frame, hr_session_last_error(t->s));
    else {
      t->pub = slot; t->coef_frame[slot] = frame; t->coef_ms[slot] = ms;
      t->coef_threads[slot] = hr__session_threads(t->s, t->si.src_end, t->si.tail);
      t->coef_h[slot] = t->si.lr_h; t->coef_w[slot] = t->si.lr_w;
      /* the job's luma goes with its coefficients (the caller writes lum_job only while idle) */
      t->lum_ok[slot] = t->lum_job_ok;
      if (t->lum_job_ok) memcpy(t->lum[slot], t->lum_job, n);
    }
    __atomic_store_n(&t->runs, t->runs + 1, __ATOMIC_RELEASE);   /* read without the lock by stats */
    t->busy = 0;
    t->in_job = 0;
    pthread_cond_broadcast(&t->cv);
  }
  pthread_mutex_unlock(&t->mu);
  return NULL;
}

void hr__tail_drain(hr__tailrun *t) {
  if (!t->started) return;
  pthread_mutex_lock(&t->mu);
  while (t->busy) pthread_cond_wait(&t->cv, &t->mu);
  pthread_mutex_unlock(&t->mu);
}

int hr__tail_idle(hr__tailrun *t) {
  if (!t->started) return 1;
  pthread_mutex_lock(&t->mu);
  int idle = !t->busy;
  pthread_mutex_unlock(&t->mu);
  return idle;
}

/* The worker, between two of its run's ops, while the caller has the pool (hr__op_gate). */
static void gate_yield(hr__op_gate *g) {
  hr__tailrun *t = (hr__tailrun *)(void *)((char *)g - offsetof(hr__tailrun, gate));
  const double t0 = now_ms();
  pthread_mutex_lock(&t->mu);
  const unsigned g0 = t->gen;
  t->parked = 1;
  pthread_cond_broadcast(&t->cv);
  /* until the caller gives the pool back: then at least the next op runs, even when the caller
   * wants the pool again before this thread is back on a CPU */
  while (t->gen == g0) pthread_cond_wait(&t->cv, &t->mu);
  pthread_mutex_unlock(&t->mu);
  g->paused_ms += now_ms() - t0;
}

/* The tail may use the session's pool (HR_TAIL_POOL not 0: attach set the gate, which only it sets). */
static int pool_ours(const hr__tailrun *t) { return t->s && t->s->pool && t->s->gate == &t->gate; }

/* The session's pool for the caller's tail, or NULL (the caller's thread alone). The network's
 * session has a pool only from 3 stream threads on (it gets one fewer than the stream, c24e361: on
 * 2 the network runs on one thread and the tail on the caller's, each on a CPU of its own). Idle
 * worker: the pool is free, and stays so (only the caller posts). A network job: its run stops at
 * the next op boundary (what the op in flight has left) and the tail has the pool's CPUs, instead
 * of taking one of them from under the run, whose other threads then wait at the op's end for the
 * one put off its CPU (2 vCPUs, the network on both beside the tail, before c24e361: 22.5-26 ms a
 * run at r0.171 against 17.5 alone). A replan on the worker (a call): not while it may rebuild
 * the pool. */
static pthreadpool_t pool_take(hr__tailrun *t) {
  if (!pool_ours(t)) return NULL;
  if (!t->started) return t->s->pool;
  const double t0 = now_ms();
  pthread_mutex_lock(&t->mu);
  if (t->busy && !t->in_job && !t->job) { pthread_mutex_unlock(&t->mu); return NULL; }   /* a call */
  /* and only for pushes paced apart (a camera's), the run having had 4 times the tail's last hold
   * since: pushes back to back would stop the run at every op boundary (test_stream_tail's 40
   * pushes in a row at 960x540 on 2 threads: 4-9 network runs with a rule of twice, 19 without the
   * pool), where the tail beside the run on its own CPU lets both go on */
  if (t->busy && t0 - t->give_ms < 4 * t->held_ms) { pthread_mutex_unlock(&t->mu); return NULL; }
  if (t->busy) {
    __atomic_store_n(&t->gate.want, 1, __ATOMIC_RELEASE);
    while (t->busy && !t->parked) pthread_cond_wait(&t->cv, &t->mu);   /* a job just posted stops before its first op */
  }
  pthread_mutex_unlock(&t->mu);
  return t->s->pool;
}

static void pool_give(hr__tailrun *t, double taken_ms) {
  if (!t->started) { hr__exec_park(t->s); return; }
  t->give_ms = now_ms();
  t->held_ms = t->give_ms - taken_ms;
  pthread_mutex_lock(&t->mu);
  const int parked = t->parked;
  __atomic_store_n(&t->gate.want, 0, __ATOMIC_RELEASE);
  if (parked) { t->parked = 0; t->gen++; }   /* the next take waits for the run to stop again */
  pthread_cond_broadcast(&t->cv);
  pthread_mutex_unlock(&t->mu);
  if (!parked) hr__exec_park(t->s);   /* no run to go on with the pool's threads: put them to sleep */
}

/* The tail's tables for coefficients of h x w (one of the two sets kept), or NULL. */
static const hr__fgf *tables_for(const hr__tailrun *t, int h, int w) {
  for (int k = 0; k < 2; k++)
    if (t->fgf[k].mem && t->fgf[k].h == h && t->fgf[k].w == w) return &t->fgf[k];
  return NULL;
}

int hr__tail_warp_on(void) {
  const char *wp = getenv("HR_TAIL_WARP");
  return !wp || atoi(wp) != 0;
}

int64_t hr__tail_bytes(int H, int W, int h, int w, int warp, int u8) {
  const int64_t n = (int64_t)h * w;
  int64_t b = (u8 ? 0 : (int64_t)H * W * 4) + 3 * 2 * n * 4 + 2 * (int64_t)hr__fgf_bytes(H, W, TAIL_CHUNKS);   /* matte, 3 slots, 2 tables */
  const size_t mo = warp ? hr__motion_bytes(h, w, H, W) : 0;
  if (mo) b += (int64_t)mo + 6 * n + 2 * n * 4;   /* 3 slots' luma, the job's and the current, the warped A and b, the shown matte */
  return b;
}

/* Grid coordinates for a resample from n_in to n_out points, half-pixel centres (as the tail's
 * tables read the grid, hr__fgf_init): point o reads between i0 and i1 at fraction f. */
static void half_pixel(int o, int n_in, int n_out, int *i0, int *i1, float *f) {
  float x = ((float)o + 0.5f) * (float)n_in / (float)n_out - 0.5f;
  x = x < 0.f ? 0.f : x > (float)(n_in - 1) ? (float)(n_in - 1) : x;
  *i0 = (int)x; *i1 = *i0 + 1 < n_in ? *i0 + 1 : n_in - 1; *f = x - (float)*i0;
}
/* A plane of ih x iw resampled bilinearly onto oh x ow: floats (in8 NULL) or bytes (inf NULL, the
 * result rounded) */
static void resample(const float *inf, const uint8_t *in8, int ih, int iw, float *outf, uint8_t *out8, int oh, int ow) {
  for (int i = 0; i < oh; i++) {
    int y0, y1; float fy;
    half_pixel(i, ih, oh, &y0, &y1, &fy);
    for (int j = 0; j < ow; j++) {
      int x0, x1; float fx;
      half_pixel(j, iw, ow, &x0, &x1, &fx);
      const size_t k00 = (size_t)y0 * iw + x0, k01 = (size_t)y0 * iw + x1, k10 = (size_t)y1 * iw + x0, k11 = (size_t)y1 * iw + x1;
      const float v00 = in8 ? in8[k00] : inf[k00], v01 = in8 ? in8[k01] : inf[k01], v10 = in8 ? in8[k10] : inf[k10], v11 = in8 ? in8[k11] : inf[k11];
      const float a = v00 + (v01 - v00) * fx, b = v10 + (v11 - v10) * fx, v = a + (b - a) * fy;
      if (out8) out8[(size_t)i * ow + j] = (uint8_t)(v + 0.5f);
      else outf[(size_t)i * ow + j] = v;
    }
  }
}

hr_status hr__tail_prepare(hr__tailrun *t, int keep) {
  hr__tail_drain(t);
  t->net_st = HR_OK;
  t->reset_pending = 0;
  t->ok = hr__split_query(t->s, &t->si);
  if (!t->ok) { t->pub = t->reading = -1; return HR_OK; }
  size_t need = (size_t)t->si.lr_h * t->si.lr_w * 2;   /* A then B, the alpha's channel only */
  if (!keep || need > t->coef_cap) t->pub = t->reading = -1;
  if (need > t->coef_cap) {
    for (int k = 0; k < 3; k++) {
      free(t->coef[k]);
      t->coef[k] = malloc(need * sizeof(float));
      if (!t->coef[k]) { t->ok = 0; t->coef_cap = 0; return HR_ENOMEM; }
    }
    t->coef_cap = need;
  }
  size_t px = (size_t)t->si.H * t->si.W;
  if (!t->q8 && px > t->alpha_cap) {   /* writing the caller's bytes (q8), the tail has no float matte */
    free(t->alpha);
    t->alpha = malloc(px * sizeof(float));
    if (!t->alpha) { t->ok = 0; t->alpha_cap = 0; return HR_ENOMEM; }
    t->alpha_cap = px;
  }
  /* the motion's buffers for the new grid; the coefficients kept on show (keep) and their frame's
   * luma are resampled onto it, so that they go on being warped to each frame until the new plan's
   * first run publishes (unwarped, their lag showed whole: 10-25 frames old at 60 fps while a
   * change was built and run) */
  if (t->warp && (!t->mo.mem || t->mo.h != t->si.lr_h || t->mo.w != t->si.lr_w || t->mo.H != t->si.H || t->mo.W != t->si.W)) {
    const int kp = t->pub >= 0 && t->lum_ok[t->pub] && t->lum[t->pub] && t->mo.mem && t->mo.H == t->si.H && t->mo.W == t->si.W &&
                   t->coef_h[t->pub] == t->mo.h && t->coef_w[t->pub] == t->mo.w ? t->pub : -1;
    const int oh = t->mo.h, ow = t->mo.w;
    uint8_t *old_lum = NULL;
    if (kp >= 0) { old_lum = t->lum[kp]; t->lum[kp] = NULL; }   /* kept past the frees below */
    hr__motion_free(&t->mo);
    for (int k = 0; k < 3; k++) { free(t->lum[k]); t->lum[k] = NULL; t->lum_ok[k] = 0; }
    free(t->lum_job); free(t->lum_cur); free(t->warped); free(t->shown);
    t->lum_job = t->lum_cur = t->shown = NULL; t->warped = NULL; t->lum_job_ok = 0; t->shown_frame = -1;
    const size_t n = (size_t)t->si.lr_h * t->si.lr_w;
    hr_status st = hr__motion_init(&t->mo, t->si.lr_h, t->si.lr_w, t->si.H, t->si.W);
    if (st == HR_OK) {
      for (int k = 0; k < 3; k++) t->lum[k] = malloc(n);
      t->lum_job = malloc(n); t->lum_cur = malloc(n); t->warped = malloc(2 * n * sizeof(float)); t->shown = malloc(n);
      if (!t->lum[0] || !t->lum[1] || !t->lum[2] || !t->lum_job || !t->lum_cur || !t->warped || !t->shown) st = HR_ENOMEM;
    }
    if (st == HR_ENOMEM) { free(old_lum); t->ok = 0; t->pub = t->reading = -1; return st; }
    if (st) hr__motion_free(&t->mo);   /* a grid too small to estimate on: no warp */
    if (st == HR_OK && kp >= 0) {
      const int h = t->si.lr_h, w = t->si.lr_w;
      const size_t on = (size_t)oh * ow;
      const float *src[2] = {t->coef[kp], t->coef[kp] + on};
      float *dst[2] = {t->warped, t->warped + n};   /* then back into the slot (sized for the new grid: need <= coef_cap) */
      for (int c = 0; c < 2; c++) resample(src[c], NULL, oh, ow, dst[c], NULL, h, w);
      memcpy(t->coef[kp], t->warped, 2 * n * sizeof(float));
      resample(NULL, old_lum, oh, ow, NULL, t->lum[kp], h, w);
      t->coef_h[kp] = h; t->coef_w[kp] = w; t->lum_ok[kp] = 1;
    }
    free(old_lum);
  }
  /* the tables for the new plan, beside those of the coefficients still shown (if kept) */
  if (!tables_for(t, t->si.lr_h, t->si.lr_w)) {
    int k = t->pub >= 0 && t->fgf[0].mem && t->fgf[0].h == t->coef_h[t->pub] && t->fgf[0].w == t->coef_w[t->pub];
    hr__fgf_free(&t->fgf[k]);
    hr_status st = hr__fgf_init(&t->fgf[k], t->si.lr_h, t->si.lr_w, t->si.H, t->si.W, TAIL_CHUNKS, 0);
    if (st) { t->ok = 0; t->pub = t->reading = -1; return st; }
    t->fgf[k].alpha_only_coef = 1;
  }
  return HR_OK;
}

hr_status hr__tail_start(hr__tailrun *t, int nice, char *err, size_t err_len) {
  memset(t, 0, sizeof *t);
  t->pub = t->reading = -1;
  t->shown_frame = -1;
  t->nice = nice;
  t->warp = hr__tail_warp_on();
  const char *tp = getenv("HR_TAIL_POOL");   /* 0: the tail on the caller's thread alone (measurements) */
  t->take_pool = !tp || atoi(tp) != 0;
  if (pthread_mutex_init(&t->mu, NULL)) { snprintf(err, err_len, "tail-every-frame: cannot make a mutex"); return HR_ENOMEM; }
  pthread_condattr_t ca;   /* the wait for a frame's own run has a deadline on the monotonic clock */
  int cok = !pthread_condattr_init(&ca) && !pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) && !pthread_cond_init(&t->cv, &ca);
  pthread_condattr_destroy(&ca);
  if (!cok) {
    pthread_mutex_destroy(&t->mu);
    snprintf(err, err_len, "tail-every-frame: cannot make a condition variable");
    return HR_ENOMEM;
  }
  if (pthread_create(&t->th, NULL, worker, t)) {
    pthread_cond_destroy(&t->cv); pthread_mutex_destroy(&t->mu);
    snprintf(err, err_len, "tail-every-frame: cannot start the network thread");
    return HR_ENOMEM;
  }
  t->started = 1;
  return HR_OK;
}

void hr__tail_call(hr__tailrun *t, void (*fn)(void *), void *arg) {
  hr__tail_drain(t);
  pthread_mutex_lock(&t->mu);
  t->call = fn; t->call_arg = arg; t->busy = 1;
  pthread_cond_broadcast(&t->cv);
  while (t->busy) pthread_cond_wait(&t->cv, &t->mu);
  pthread_mutex_unlock(&t->mu);
}

void hr__tail_post(hr__tailrun *t, void (*fn)(void *), void *arg) {
  pthread_mutex_lock(&t->mu);
  t->call = fn; t->call_arg = arg; t->busy = 1;
  pthread_cond_broadcast(&t->cv);
  pthread_mutex_unlock(&t->mu);
}

hr_status hr__tail_attach(hr__tailrun *t, hr_session *s, char *err, size_t err_len) {
  t->s = s;
  t->gate.yield = gate_yield;
  s->gate = t->take_pool ? &t->gate : NULL;
  hr_status st = hr__tail_prepare(t, 0);
  if (st) { snprintf(err, err_len, "tail every frame: out of memory"); return st; }
  if (!t->ok) {
    snprintf(err, err_len, "tail every frame: this plan has no guided-filter tail to run apart (RVM on the CPU backend, frames at the declared size)");
    return HR_ENOTSUP;
  }
  return HR_OK;
}

void hr__tail_destroy(hr__tailrun *t) {
  if (t->started) {
    pthread_mutex_lock(&t->mu);
    t->quit = 1;
    pthread_cond_broadcast(&t->cv);
    pthread_mutex_unlock(&t->mu);
    pthread_join(t->th, NULL);
    pthread_cond_destroy(&t->cv);
    pthread_mutex_destroy(&t->mu);
  }
  /* after the join: a run in flight reads the gate before each op (TSan saw the write race it) */
  if (t->s && t->s->gate == &t->gate) t->s->gate = NULL;
  for (int k = 0; k < 3; k++) { free(t->coef[k]); free(t->lum[k]); }
  free(t->alpha);
  free(t->lum_job); free(t->lum_cur); free(t->warped); free(t->shown);
  hr__motion_free(&t->mo);
  hr__fgf_free(&t->fgf[0]);
  hr__fgf_free(&t->fgf[1]);
  memset(t, 0, sizeof *t);
}

/* The guide the tail's matte multiplies A by, (R + G + B) / 3 in [0, 1], from the motion's luma
 * (motion.h: the Y plane for NV12 and I420, (R + 2 G + B) / 4 for packed RGB): g = lum * gs + go.
 * Luma weighs the channels otherwise than the mean does; the lag meter compares two mattes made
 * from one guide, so what that changes is second order. */
static void guide_of(hr_pixfmt fmt, float *gs, float *go) {
  if (fmt == HR_PIX_NV12_VIDEO || fmt == HR_PIX_I420_VIDEO) { *gs = 1.f / 219.f; *go = -16.f / 219.f; }
  else { *gs = 1.f / 255.f; *go = 0.f; }
}

/* The alpha A g + b at grid pixel i, in 8 bits as the tail's u8 matte rounds it. */
static inline int grid_alpha8(const float *A, const float *B, const uint8_t *lum, size_t i, float gs, float go) {
  float a = (A[i] * ((float)lum[i] * gs + go) + B[i]) * 255.f + 0.5f;
  a = a > 0.f ? a : 0.f;
  return (int)(a < 255.f ? a : 255.f);
}

/* The matte on the grid (grid_alpha8 at every pixel). */
static void grid_matte(const float *A, const float *B, const uint8_t *lum, size_t n, float gs, float go, uint8_t *out) {
  for (size_t i = 0; i < n; i++) out[i] = (uint8_t)grid_alpha8(A, B, lum, i, gs, go);
}

/* The lag meter: the new run's own matte on its frame against the one shown there (t->shown). */
static void lag_measure(const float *A, const float *B, const uint8_t *lum, const uint8_t *shown, size_t n, float gs, float go,
                        double *off, double *band) {
  size_t o = 0, b = 0;
  for (size_t i = 0; i < n; i++) {
    const int own = grid_alpha8(A, B, lum, i, gs, go), d = own - (int)shown[i];
    o += d > 25 || d < -25;
    b += own > 25 && own < 230;
  }
  *off = (double)o / (double)n;
  *band = (double)b / (double)n;
}

hr_status hr__tail_push(hr__tailrun *t, const hr_frame *f, int64_t frame, int may_post, double wait_ms, hr__tail_out *o) {
  memset(o, 0, sizeof *o);
  o->lag_off = o->lag_band = -1;
  if (!t->ok || f->width != t->si.W || f->height != t->si.H) return HR_EMISUSE;
  double t0 = now_ms();
  /* a network run on this frame when the worker is free: only this thread starts runs, so an idle
   * worker stays idle until the job is posted, and the arena is ours meanwhile */
  int posted = 0;
  if (may_post && hr__tail_idle(t)) {
    if (t->net_st) return t->net_st;
    if (t->reset_pending) { hr_session_reset(t->s); t->reset_pending = 0; }   /* before this frame's run */
    /* the worker is idle and stays so until the post below: the pool is free for the resize */
    hr_status st = hr__split_run_src(t->s, &t->si, f, pool_ours(t));
    if (st) return st;
    t->lum_job_ok = 0;
    if (t->mo.mem && hr__motion_format_ok(f->fmt)) {
      hr__motion_luma_pool(&t->mo, f, t->lum_job, pool_ours(t) ? t->s->pool : NULL);   /* idle: as above */
      t->lum_job_ok = 1;
    }
    pthread_mutex_lock(&t->mu);
    t->job = 1; t->busy = 1; t->job_frame = frame;
    pthread_cond_broadcast(&t->cv);
    pthread_mutex_unlock(&t->mu);
    posted = 1;
  }
  double t1 = now_ms();
  /* the newest coefficients (the first frame after a prepare waits for its own run) */
  pthread_mutex_lock(&t->mu);
  while (t->pub < 0 && t->busy) pthread_cond_wait(&t->cv, &t->mu);
  /* this frame's own run, when the last one took no longer than the caller can wait: then the
   * matte has no lag at all; a run that overruns the deadline is left to finish on its own */
  const double left = wait_ms - (now_ms() - t0);   /* the source resize above spent some of it */
  if (posted && left > 0 && t->pub >= 0 && t->coef_ms[t->pub] <= left) {
    struct timespec dl;
    clock_gettime(CLOCK_MONOTONIC, &dl);
    const long long ns = (long long)dl.tv_nsec + (long long)(left * 1e6);
    dl.tv_sec += (time_t)(ns / 1000000000); dl.tv_nsec = (long)(ns % 1000000000);
    while (t->busy && t->job_frame == frame)
      if (pthread_cond_timedwait(&t->cv, &t->mu, &dl)) break;
  }
  if (t->pub < 0) { pthread_mutex_unlock(&t->mu); return t->net_st ? t->net_st : HR_EMISUSE; }
  const int slot = t->pub;
  const int h = t->coef_h[slot], w = t->coef_w[slot];
  o->new_coef = slot != t->reading;
  t->reading = slot;
  o->coef_frame = t->coef_frame[slot];
  o->net_ms = t->coef_ms[slot];
  o->net_threads = t->coef_threads[slot];
  const int lum_ok = t->lum_ok[slot];
  pthread_mutex_unlock(&t->mu);
  double t2 = now_ms();
  const size_t n = (size_t)h * w;
  const hr__fgf *g = tables_for(t, h, w);   /* kept by prepare for the coefficients it kept */
  unsigned csr = hr__ftz_begin();   /* as the in-session tail runs */
  const float *A = t->coef[slot], *B = t->coef[slot] + n;
  float gs, go;
  guide_of(f->fmt, &gs, &go);
  /* the lag meter, before this push's own shown matte (below) replaces the one it reads */
  if (o->new_coef && o->coef_frame == t->shown_frame && lum_ok && t->mo.mem && t->mo.h == h && t->mo.w == w) {
    lag_measure(A, B, t->lum[slot], t->shown, n, gs, go, &o->lag_off, &o->lag_band);
    t->shown_frame = -1;
  }
  if (lum_ok && o->coef_frame != frame && t->mo.mem && t->mo.h == h && t->mo.w == w && hr__motion_format_ok(f->fmt)) {
    /* move the older frame's coefficients to where the content is now; the slot's luma stays
     * still while the tail reads the slot (the worker writes neither the slot read nor the newest) */
    const uint8_t *cur = t->lum_job;   /* this frame's, when a job was posted on it */
    if (!(posted && t->lum_job_ok)) { hr__motion_luma(&t->mo, f, t->lum_cur); cur = t->lum_cur; }
    t->warp_px = hr__motion_estimate(&t->mo, t->lum[slot], cur);
    const float *src[2] = {A, B};
    float *dst[2] = {t->warped, t->warped + n};
    hr__motion_warp(&t->mo, src, dst, 2);
    A = t->warped; B = t->warped + n;
    o->warped = 1;
  }
  /* the matte shown on a posted job's frame, on its grid, for the meter when the job's run is published */
  if (posted) {
    t->shown_frame = -1;
    if (t->lum_job_ok && t->shown && t->mo.h == h && t->mo.w == w && h == t->si.lr_h && w == t->si.lr_w) {
      grid_matte(A, B, t->lum_job, n, gs, go, t->shown);
      t->shown_frame = frame;
    }
  }
  /* the pool for the tail alone: holding it also through the motion above (its luma over the
   * pool, the estimate and the warp on this thread) made the network's runs slower, not faster
   * (r0.171 on 2 vCPUs, 2 rounds: run p50 23.2 / 23.1 ms against 21.0 / 21.0) */
  pthreadpool_t pool = pool_take(t);
  const double tq1 = now_ms();
  if (t->q8) {
    o->nonfinite = hr__fgf_run_u8(g, f, A, B, t->q8, t->si.clip, pool, &o->byte_sum);
    o->alpha = NULL; o->alpha_u8 = t->q8;
  } else {
    hr__fgf_run(g, f, A, B, t->alpha, NULL, t->si.clip, pool);
    o->alpha = t->alpha; o->alpha_u8 = NULL;
  }
  if (pool) pool_give(t, tq1);
  hr__ftz_end(csr);
  o->width = t->si.W; o->height = t->si.H;
  o->src_ms = t1 - t0;
  o->wait_ms = t2 - t1;
  o->tail_ms = now_ms() - t2;
  return HR_OK;
}
