/* Contention fallback: whether a run of the executor uses the session's pool of threads or the
 * calling thread alone, decided from measured run times (issue 15, lever 4).
 *
 * On a machine whose cores are taken by other work, a pool loses to one thread: every operator
 * joins its threads, and one descheduled worker stalls each join (2 vCPUs and 3 busy processes:
 * 2 threads 256-332 ms a frame, 1 thread 175-184). XNNPACK takes the pool per run and our kernels
 * take it per call, so the pool can be left out of any single run with no replan and no change of
 * results (the work is split into the same tasks, run one after another).
 *
 * The policy, per range of ops that the executor runs (the whole network, or the tail mode's
 * parts). A probe is 2 runs in the other mode, measured against the run that made it due (now's
 * conditions) and the median of the mode's last 5 runs: the calling thread alone is taken when the
 * probe's faster run beats the slower of the two, the pool back only when it beats the faster of
 * them by 10% (within the runs' noise alone is the safe side: the pool is the one that can lose by
 * 2-4x). While on the pool, a probe is due only on a sign of contention: the calling thread spent
 * more than 10% of the run waiting for a CPU (its run queue delay, Linux's schedstat), or the
 * median of the pool's last 5 runs is 25% slower than its fastest run. So an idle machine never probes. While alone,
 * the pool is probed again after `backoff` runs, or sooner (backoff / 8 runs after the last probe,
 * at least 8) once the calling thread waits less than 2% of a run (the load may have gone). A
 * probe that loses doubles the backoff (8 .. 512 runs); one that wins resets it. No probe before a
 * mode has 3 runs. */
#ifndef HR_SESSION_TADAPT_H
#define HR_SESSION_TADAPT_H
#include <stdint.h>

#define HR__TADAPT_KEEP 5

typedef struct hr__tadapt {
  double last[2][HR__TADAPT_KEEP]; /* the last runs' times, ms: [0] over the pool, [1] alone */
  int n_last[2], pos[2];
  double best_pool;    /* the fastest run over the pool (0: none yet) */
  double probe_ms;     /* the fastest run of the probe under way */
  double ref_ms;       /* the run that made the probe due */
  int serial;          /* the mode of the runs between probes: 1 = the calling thread alone */
  int probing;         /* runs left in the probe under way (they use the other mode) */
  int backoff;         /* runs from a lost probe to the next */
  int64_t runs, next_probe, probe_end;
  int64_t switches;    /* mode changes so far (telemetry, tests) */
  int force;           /* developer switch: 0 adapt, 1 alternate every run, 2 always alone */
} hr__tadapt;

#define HR__TADAPT_PROBE_RUNS 2
#define HR__TADAPT_BACKOFF_MIN 8
#define HR__TADAPT_BACKOFF_MAX 512

void hr__tadapt_init(hr__tadapt *a, int force);
/* 1: the next run uses the calling thread alone. */
int hr__tadapt_serial(const hr__tadapt *a);
/* Account one run (in the mode hr__tadapt_serial gave before it): its wall time and how long the
 * calling thread waited for a CPU during it (ms; < 0 when unknown). */
void hr__tadapt_update(hr__tadapt *a, double wall_ms, double delay_ms);
/* The median of a mode's last runs (ms), 0 when it has had none. */
double hr__tadapt_ms(const hr__tadapt *a, int serial);
/* The calling thread's total run queue delay so far in ms (Linux schedstat), or -1 where the
 * system does not say. No allocation. */
double hr__thread_delay_ms(void);

#endif
