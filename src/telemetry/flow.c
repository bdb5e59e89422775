/* Flow limiter: a thread-safe single-slot mailbox where the newest frame wins and replaced ones are counted as dropped. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include "headroom/telemetry.h"

struct hr_flow {
  pthread_mutex_t mu;
  pthread_cond_t cv;        /* signalled on put and close; waits on CLOCK_MONOTONIC */
  void *slot;               /* the newest unconsumed item, or NULL */
  bool closed;
  int64_t put, taken, dropped, rejected;
};

hr_status hr_flow_create(hr_flow **out) {
  if (!out) return HR_EINVAL;
  *out = NULL;
  hr_flow *f = calloc(1, sizeof *f);
  if (!f) return HR_ENOMEM;
  pthread_condattr_t ca;
  if (pthread_condattr_init(&ca) != 0) { free(f); return HR_ENOMEM; }
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  if (pthread_mutex_init(&f->mu, NULL) != 0) {
    pthread_condattr_destroy(&ca);
    free(f);
    return HR_ENOMEM;
  }
  if (pthread_cond_init(&f->cv, &ca) != 0) {
    pthread_condattr_destroy(&ca);
    pthread_mutex_destroy(&f->mu);
    free(f);
    return HR_ENOMEM;
  }
  pthread_condattr_destroy(&ca);
  *out = f;
  return HR_OK;
}

void hr_flow_destroy(hr_flow *f) {
  if (!f) return;
  pthread_cond_destroy(&f->cv);
  pthread_mutex_destroy(&f->mu);
  free(f);
}

hr_status hr_flow_put(hr_flow *f, void *item, void **replaced) {
  if (replaced) *replaced = NULL;
  if (!f || !item) return HR_EINVAL;
  void *old;
  pthread_mutex_lock(&f->mu);
  if (f->closed) {
    f->rejected++;
    pthread_mutex_unlock(&f->mu);
    if (replaced) *replaced = item;
    return HR_EEOF;
  }
  old = f->slot;
  f->slot = item;
  f->put++;
  if (old) f->dropped++;
  pthread_mutex_unlock(&f->mu);
  /* Signal after unlocking: the woken consumer does not bounce off a held mutex. Only a put that
   * filled an empty slot can have a waiter (a full slot means nobody was waiting). */
  if (!old) pthread_cond_signal(&f->cv);
  if (replaced) *replaced = old;
  return HR_OK;
}

hr_status hr_flow_take(hr_flow *f, void **item, int64_t timeout_ns) {
  if (item) *item = NULL;
  if (!f || !item) return HR_EINVAL;
  struct timespec dl;
  if (timeout_ns > 0) {
    clock_gettime(CLOCK_MONOTONIC, &dl);
    int64_t ns = dl.tv_nsec + timeout_ns % 1000000000;
    dl.tv_sec += (time_t)(timeout_ns / 1000000000 + ns / 1000000000);
    dl.tv_nsec = (long)(ns % 1000000000);
  }
  hr_status st = HR_OK;
  pthread_mutex_lock(&f->mu);
  while (!f->slot && !f->closed) {
    if (timeout_ns == 0) break;
    if (timeout_ns < 0) {
      pthread_cond_wait(&f->cv, &f->mu);
    } else if (pthread_cond_timedwait(&f->cv, &f->mu, &dl) == ETIMEDOUT) {
      break;
    }
  }
  if (f->slot) {
    *item = f->slot;
    f->slot = NULL;
    f->taken++;
  } else {
    st = f->closed ? HR_EEOF : HR_EAGAIN;
  }
  pthread_mutex_unlock(&f->mu);
  return st;
}

void hr_flow_close(hr_flow *f) {
  if (!f) return;
  pthread_mutex_lock(&f->mu);
  f->closed = true;
  pthread_mutex_unlock(&f->mu);
  pthread_cond_broadcast(&f->cv);
}

void hr_flow_get_stats(hr_flow *f, hr_flow_stats *st) {
  if (!st) return;
  *st = (hr_flow_stats){0};
  if (!f) return;
  pthread_mutex_lock(&f->mu);
  st->put = f->put;
  st->taken = f->taken;
  st->dropped = f->dropped;
  st->rejected = f->rejected;
  st->pending = f->slot != NULL;
  st->closed = f->closed;
  pthread_mutex_unlock(&f->mu);
}
