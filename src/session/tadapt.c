/* Contention fallback: the pool or the calling thread alone, by measured run times (tadapt.h). */
#include "session/tadapt.h"
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

void hr__tadapt_init(hr__tadapt *a, int force) {
  *a = (hr__tadapt){.backoff = HR__TADAPT_BACKOFF_MIN, .force = force};
}

int hr__tadapt_serial(const hr__tadapt *a) {
  if (a->force == 1) return (int)(a->runs & 1);
  if (a->force == 2) return 1;
  return a->probing ? !a->serial : a->serial;
}

static void keep(hr__tadapt *a, int mode, double ms) {
  a->last[mode][a->pos[mode]] = ms;
  a->pos[mode] = (a->pos[mode] + 1) % HR__TADAPT_KEEP;
  if (a->n_last[mode] < HR__TADAPT_KEEP) a->n_last[mode]++;
}

double hr__tadapt_ms(const hr__tadapt *a, int serial) {
  int n = a->n_last[serial ? 1 : 0];
  double v[HR__TADAPT_KEEP];
  for (int i = 0; i < n; i++) v[i] = a->last[serial ? 1 : 0][i];
  for (int i = 1; i < n; i++)   /* insertion sort of at most 5 */
    for (int j = i; j > 0 && v[j] < v[j - 1]; j--) { double t = v[j]; v[j] = v[j - 1]; v[j - 1] = t; }
  return n ? v[n / 2] : 0;
}

/* Runs from the last probe to an early one (alone, the caller no longer waiting): an eighth of the
 * backoff, at least its minimum, so that a pool that keeps losing is not tried every 8 runs. */
static int64_t early_gap(const hr__tadapt *a) {
  return a->backoff / 8 > HR__TADAPT_BACKOFF_MIN ? a->backoff / 8 : HR__TADAPT_BACKOFF_MIN;
}

void hr__tadapt_update(hr__tadapt *a, double wall_ms, double delay_ms) {
  int mode = hr__tadapt_serial(a);
  a->runs++;
  if (mode == 0 && (a->best_pool <= 0 || wall_ms < a->best_pool)) a->best_pool = wall_ms;
  if (a->force) { keep(a, mode, wall_ms); return; }
  if (a->probing) {
    if (a->probe_ms <= 0 || wall_ms < a->probe_ms) a->probe_ms = wall_ms;
    if (--a->probing) return;
    int other = !a->serial;
    /* Alone is taken on any win, the pool back only on a clear one: on a loaded machine the two
     * are often within the runs' noise, and there the pool is the one that can lose by 2-4x. */
    double med = hr__tadapt_ms(a, a->serial);
    double ref = a->serial ? 0.9 * (a->ref_ms < med ? a->ref_ms : med) : (a->ref_ms > med ? a->ref_ms : med);
    if (a->probe_ms < ref) {   /* the other mode wins: take it */
      a->serial = other;
      a->n_last[other] = a->pos[other] = 0;   /* its older runs were under other conditions */
      keep(a, other, a->probe_ms);
      a->switches++;
      a->backoff = HR__TADAPT_BACKOFF_MIN;
    } else {
      keep(a, other, a->probe_ms);
      a->backoff = a->backoff * 2 > HR__TADAPT_BACKOFF_MAX ? HR__TADAPT_BACKOFF_MAX : a->backoff * 2;
    }
    a->next_probe = a->runs + a->backoff;
    a->probe_end = a->runs;
    return;
  }
  keep(a, a->serial, wall_ms);
  if (a->n_last[a->serial] < 3) return;
  int due;
  if (a->serial) /* alone: the pool again after the backoff, or soon once the caller waits no more */
    due = a->runs >= a->next_probe || (delay_ms >= 0 && delay_ms < 0.02 * wall_ms && a->runs >= a->probe_end + early_gap(a));
  else
    due = a->runs >= a->next_probe &&
          ((delay_ms >= 0 && delay_ms > 0.1 * wall_ms) || (a->best_pool > 0 && hr__tadapt_ms(a, 0) > 1.25 * a->best_pool));
  if (due) { a->probing = HR__TADAPT_PROBE_RUNS; a->probe_ms = 0; a->ref_ms = wall_ms; }
}

double hr__thread_delay_ms(void) {
#ifdef __linux__
  int fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  char buf[96];
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return -1;
  buf[n] = 0;
  char *e;
  strtoull(buf, &e, 10);                     /* time on a CPU */
  if (e == buf) return -1;
  char *f;
  unsigned long long wait = strtoull(e, &f, 10); /* time runnable, waiting for a CPU */
  if (f == e) return -1;
  return (double)wait / 1e6;
#else
  return -1;
#endif
}
