/* The capture thread of `headroom run`: reads the source losslessly (back-pressure, frames handed
 * out in place) or, with --realtime, paced at the source's timestamps like a camera, copying each
 * frame out of the source's pool so that a slow consumer makes the newest frame win (drops counted
 * by the flow) instead of slowing the replay down. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "capture.h"
#include "cli.h"

/* c->stop outside the lock (the lossless wait's poll; TSan reported the unlocked read) */
static int stop_set(capture *c) {
  pthread_mutex_lock(&c->mu);
  const int s = c->stop;
  pthread_mutex_unlock(&c->mu);
  return s;
}

static void *capture_main(void *arg) {
  capture *c = arg;
  double t0 = 0; int64_t ts0 = 0; int first = 1;
  /* --realtime: frame i exists from its due time t0 + (ts_i - ts0) on and is put into the mailbox
   * then, whatever the consumer is doing. The consumer can only be using the last frame put, or
   * the one taken before it; every other buffer is free. */
  struct { void *buf; size_t cap; } buf[CAPTURE_POOL];
  memset(buf, 0, sizeof buf);
  int last_put = -1, taken = -1;  /* slots: the newest put; the one the consumer took before it */
  for (;;) {
    pthread_mutex_lock(&c->mu);
    /* lossless: frames are handed out in place; never read a frame whose pool buffer is the one
     * the consumer still holds */
    while (!c->realtime && !c->stop && c->held >= 0 && c->read - CAPTURE_POOL + 1 >= c->held) pthread_cond_wait(&c->cv, &c->mu);
    int stop = c->stop || cli_stop_requested();
    pthread_mutex_unlock(&c->mu);
    if (stop) break;
    hr_frame f;
    hr_status st = hr_source_read(c->src, &f);
    if (st == HR_EEOF) break;
    if (st) { c->error = st; snprintf(c->errmsg, sizeof c->errmsg, "%s", hr_source_last_error(c->src)); break; }
    int64_t idx = c->read++;
    if (idx < c->start) continue;
    if (!c->realtime) {
      capture_slot *sl = &c->slots[idx % CAPTURE_POOL];
      sl->f = f; sl->index = idx; sl->t_cap = cli_now_ms();
      /* as fast as possible, lossless: wait until the consumer took the previous frame */
      hr_flow_stats fs;
      for (;;) { hr_flow_get_stats(c->flow, &fs); if (!fs.pending || stop_set(c) || cli_stop_requested()) break; usleep(200); }
      void *replaced = NULL;
      if (hr_flow_put(c->flow, sl, &replaced) != HR_OK) break;
      continue;
    }
    if (first) { t0 = cli_now_ms(); ts0 = f.ts_ns; first = 0; }
    double due = t0 + (double)(f.ts_ns - ts0) / 1e6;
    int k = 0;
    while (k == last_put || k == taken) k++;
    hr_frame cp;
    if (hr_frame_copy(&f, &buf[k].buf, &buf[k].cap, &cp)) {   /* the first frame (and a video that grows): allocate once */
      c->error = HR_ENOMEM; snprintf(c->errmsg, sizeof c->errmsg, "out of memory for a %dx%d frame", f.width, f.height);
      break;
    }
    double wait = due - cli_now_ms();
    if (wait > 0) usleep((useconds_t)(wait * 1000));
    capture_slot *sl = &c->slots[k];
    /* capture time is when the camera would have delivered the frame: a capture thread that falls
     * behind shows up in latency */
    sl->f = cp; sl->index = idx; sl->t_cap = due;
    void *replaced = NULL;
    if (hr_flow_put(c->flow, sl, &replaced) != HR_OK) break;
    if (!replaced && last_put >= 0) taken = last_put;  /* the slot was empty: the previous one was taken */
    last_put = k;
  }
  hr_flow_close(c->flow);
  if (c->realtime) {
    /* the consumer may still be reading the last frames: free the copies only once the loop is over */
    pthread_mutex_lock(&c->mu);
    while (!c->stop) pthread_cond_wait(&c->cv, &c->mu);
    pthread_mutex_unlock(&c->mu);
    for (int k = 0; k < CAPTURE_POOL; k++) free(buf[k].buf);
  }
  return NULL;
}

int capture_start(capture *c, hr_source *src, hr_flow *flow, int realtime, int64_t start) {
  memset(c, 0, sizeof *c);
  c->src = src; c->flow = flow; c->realtime = realtime; c->start = start; c->held = -1;
  pthread_mutex_init(&c->mu, NULL); pthread_cond_init(&c->cv, NULL);
  if (pthread_create(&c->thread, NULL, capture_main, c)) return -1;
  c->started = 1;
  return 0;
}

capture_slot *capture_take(capture *c, int64_t timeout_ms, hr_status *st) {
  void *item = NULL;
  *st = hr_flow_take(c->flow, &item, timeout_ms * 1000000);
  if (*st) return NULL;
  capture_slot *sl = item;
  pthread_mutex_lock(&c->mu); c->held = sl->index; pthread_mutex_unlock(&c->mu);
  return sl;
}

void capture_release(capture *c) {
  pthread_mutex_lock(&c->mu); c->held = -1; pthread_cond_signal(&c->cv); pthread_mutex_unlock(&c->mu);
}

void capture_stop(capture *c) {
  if (!c->started) return;
  pthread_mutex_lock(&c->mu); c->stop = 1; c->held = -1; pthread_cond_signal(&c->cv); pthread_mutex_unlock(&c->mu);
  hr_flow_close(c->flow);
  pthread_join(c->thread, NULL);
  c->started = 0;
  pthread_mutex_destroy(&c->mu); pthread_cond_destroy(&c->cv);
}
