/* The stream (hr_stream) on real frames: (1) its outputs are exactly a plain session's, fed the
 * same frames with hr_session_replan at the frames where the stream changed rung, and every
 * result is read whole after its push, so an output freed by a replan it caused would show (ASan);
 * (2) steady-state pushes with health, governor (cgroup or none) and telemetry records allocate
 * nothing, and the counter is shown to count (a positive control inside the counted window);
 * (3) health learns memory pressure from the governor's measured headroom by itself: with an
 * observe-only governor (no action, so no event for the monitor to be told of) and a ceiling set
 * ~50 MB above this process's RSS, the verdict turns DEGRADED with the memory-pressure cause; with
 * the ceiling 2 GB higher it does not; (4) the governor's rungs count the tail every frame's memory
 * when that mode is on: rung by rung, the planned bytes grow by hr_stream_tail_bytes of that rung's
 * plan, which holds at least the full-size float matte; (5) a budget step up whose build would not
 * fit beside the running plan waits; (6) such a step down releases first (the state starts over). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "headroom.h"
#include "headroom/io.h"
#include "hr_test_frames.h"

#include "hr_alloc_count.h"

#define NF 24

static double sum(const float *a, size_t n) { double s = 0; for (size_t i = 0; i < n; i++) s += a[i]; return s; }

/* (1) the stream with a budget no rung can keep (steps down every other frame) against a session
 * replanned at the same frames */
static void stream_vs_session(hr_model *m, const hr_frame *fr) {
  hr_stream_params p;
  hr_stream_params_default(&p);
  p.session.width = fr[0].width; p.session.height = fr[0].height;
  p.session.downsample_ratio = 0.5f; p.session.threads = 1;
  p.adapt = true; p.budget_ms = 0.01;
  p.inject = "memory-pressure@12:3";   /* a suspension and a resume on top of the step down */
  hr_stream *st = NULL;
  char err[512];
  CHECK_EQ_INT(hr_stream_create(m, &p, &st, err, sizeof err), HR_OK);
  hr_session *ref = NULL;
  CHECK_EQ_INT(hr_session_create(m, &p.session, &ref), HR_OK);
  if (!st || !ref) { hr_stream_destroy(st); hr_session_destroy(ref); return; }
  size_t n = (size_t)fr[0].width * fr[0].height;
  float *keep = malloc(n * 4);
  int changes = 0, diff = 0, suspended = 0;
  for (int i = 0; i < NF; i++) {
    hr_stream_result r;
    CHECK_EQ_INT(hr_stream_push(st, &fr[i], &r), HR_OK);
    if (!r.alpha) { CHECK(r.events & HR_STREAM_EVENT_SUSPENDED); hr_session_suspend(ref); suspended++; continue; }
    memcpy(keep, r.alpha, n * 4);
    if (r.events & HR_STREAM_EVENT_RESUMED) {
      changes++;
      CHECK_EQ_INT(hr_session_resume(ref, fr[0].width, fr[0].height, (float)r.record.ratio), HR_OK);
    } else if (r.events & HR_STREAM_EVENT_RUNG_CHANGED) {
      changes++;
      CHECK_EQ_INT(hr_session_replan(ref, fr[0].width, fr[0].height, (float)r.record.ratio), HR_OK);
    }
    hr_outputs o;
    CHECK_EQ_INT(hr_session_push(ref, &fr[i], &o), HR_OK);
    if (memcmp(o.alpha, keep, n * 4)) diff++;
    /* the stream's result, read again after the reference ran: still the same bytes */
    if (memcmp(r.alpha, keep, n * 4)) diff++;
    CHECK(isfinite(sum(r.alpha, n)));
  }
  hr_stream_stats ss;
  hr_stream_get_stats(st, &ss);
  printf("stream vs session: %d frames, %d changes (a step down to ratio %.3f, a resume), %d suspended, %d frames differ\n", NF, changes,
         ss.rung_ratio[ss.rung], suspended, diff);
  CHECK(changes >= 2);
  CHECK_EQ_INT(suspended, 3);
  CHECK_EQ_INT(diff, 0);
  free(keep);
  hr_stream_destroy(st);
  hr_session_destroy(ref);
}

/* (2) no allocation in steady-state pushes; u8: the 8-bit matte alone (alpha_u8_only), at ratio
 * 0.5 so that the guided-filter tail makes it */
static void stream_noalloc(hr_model *m, const hr_frame *fr, int u8) {
  hr_stream_params p;
  hr_stream_params_default(&p);
  p.session.width = 256; p.session.height = 144;
  p.session.frame_width = fr[0].width; p.session.frame_height = fr[0].height;
  p.session.downsample_ratio = u8 ? 0.5f : 1.f; p.session.threads = 1;
  p.session.alpha_u8 = p.alpha_u8_only = u8;
  p.governor = true;   /* profile none: the cgroup's limit if there is one */
  hr_stream *st = NULL;
  char err[512];
  CHECK_EQ_INT(hr_stream_create(m, &p, &st, err, sizeof err), HR_OK);
  if (!st) { printf("create: %s\n", err); return; }
  hr_stream_result r;
  for (int i = 0; i < 5; i++) CHECK_EQ_INT(hr_stream_push(st, &fr[i % NF], &r), HR_OK);
  count_start();
  for (int i = 0; i < 60; i++) CHECK_EQ_INT(hr_stream_push(st, &fr[i % NF], &r), HR_OK);
  count_stop();
  long a = n_alloc, f = n_free;
  /* positive control: the same window with one allocation in it */
  count_start();
  CHECK_EQ_INT(hr_stream_push(st, &fr[0], &r), HR_OK);
  void *volatile probe = malloc(100);
  count_stop();
  free(probe);
  long control = n_alloc;
  if (u8) CHECK(r.alpha_u8 && !r.alpha);
  printf("stream push, 60 frames 960x540 -> 256x144 with health + governor%s: %ld allocations, %ld frees; control %ld\n",
         u8 ? ", the 8-bit matte alone" : "", a, f, control);
  if (HR_COUNTING) {
    CHECK_EQ_INT(a, 0);
    CHECK_EQ_INT(f, 0);
    CHECK_EQ_INT(control, 1);
  }
  hr_stream_destroy(st);
}

static int64_t rss_mb(void) {
  long pages = 0, res = 0;
  FILE *f = fopen("/proc/self/statm", "r");
  if (f) { if (fscanf(f, "%ld %ld", &pages, &res) != 2) res = 0; fclose(f); }
  return (int64_t)res * sysconf(_SC_PAGESIZE) / (1 << 20);
}

/* (3) memory pressure measured, not told: returns the frames (of 12) whose verdict named it */
static int pressure_frames(hr_model *m, const hr_frame *fr, int64_t above_rss_mb, int *actions, char *reason, size_t rn) {
  hr_stream_params p;
  hr_stream_params_default(&p);
  p.session.width = 256; p.session.height = 144;
  p.session.frame_width = fr[0].width; p.session.frame_height = fr[0].height;
  p.session.downsample_ratio = 1.f; p.session.threads = 1;
  p.governor = true; p.governor_observe_only = true;
  char prof[64], err[512];
  int64_t safe = rss_mb() + above_rss_mb;
  snprintf(prof, sizeof prof, "%lld:%lld", (long long)safe, (long long)safe + 10);
  CHECK_EQ_INT(hr_gov_profile_parse(prof, &p.profile, err, sizeof err), HR_OK);
  hr_stream *st = NULL;
  CHECK_EQ_INT(hr_stream_create(m, &p, &st, err, sizeof err), HR_OK);
  if (!st) { printf("create: %s\n", err); return -1; }
  int named = 0;
  *actions = 0;
  reason[0] = 0;
  for (int i = 0; i < 12; i++) {
    hr_stream_result r;
    CHECK_EQ_INT(hr_stream_push(st, &fr[i], &r), HR_OK);
    if (r.record.governor_action && strcmp(r.record.governor_action, "none")) (*actions)++;
    if (r.health.causes & HR_HEALTH_CAUSE_MEMORY_PRESSURE) {
      named++;
      CHECK_EQ_INT(r.health.state, HR_HEALTH_DEGRADED);
      snprintf(reason, rn, "%s", r.health.reason);
    }
  }
  hr_stream_destroy(st);
  return named;
}

static void stream_memory_pressure(hr_model *m, const hr_frame *fr) {
  char reason[256];
  int actions = 0;
  int tight = pressure_frames(m, fr, 50, &actions, reason, sizeof reason);
  printf("observe-only governor, ceiling RSS+50 MB: %d of 12 verdicts name memory pressure (\"%s\"), %d governor actions taken\n",
         tight, reason, actions);
  CHECK_EQ_INT(tight, 12);
  CHECK(strstr(reason, "memory pressure:") != NULL);
  /* already over the ceiling: the worst pressure, named too, as over the ceiling (the governor's
   * headroom is negative there; the monitor took that for "not measured" until 2026-12-06) */
  int over = pressure_frames(m, fr, -20, &actions, reason, sizeof reason);
  printf("observe-only governor, ceiling RSS-20 MB: %d of 12 verdicts name memory pressure (\"%s\")\n", over, reason);
  CHECK_EQ_INT(over, 12);
  CHECK(strstr(reason, "MB over the ceiling") != NULL);
  int roomy = pressure_frames(m, fr, 2050, &actions, reason, sizeof reason);
  printf("observe-only governor, ceiling RSS+2050 MB: %d of 12 name memory pressure\n", roomy);
  CHECK_EQ_INT(roomy, 0);
}

/* (4) rung bytes (and build bytes, the replan's transient) as the governor was given them, tail
 * every frame on or off */
static int rung_bytes(hr_model *m, const hr_frame *fr, int tail, uint64_t *b, uint64_t *build, float *ratio) {
  hr_stream_params p;
  hr_stream_params_default(&p);
  p.session.width = fr[0].width; p.session.height = fr[0].height;
  p.session.downsample_ratio = 0.5f; p.session.threads = 1;
  p.adapt = true; p.governor = true; p.governor_observe_only = true; p.tail_every_frame = tail;
  hr_stream *st = NULL;
  char err[512];
  CHECKF(hr_stream_create(m, &p, &st, err, sizeof err) == HR_OK, "%s", err);
  if (!st) return 0;
  const hr_gov_ladder *l = hr_gov_get_ladder(hr_stream_governor(st));
  int n = l->p.n_rungs;
  for (int k = 0; k < n; k++) { b[k] = l->p.rung_bytes[k]; build[k] = l->p.rung_build_bytes[k]; }
  for (int k = 0; k < n; k++) ratio[k] = 0.5f * (float[]){1.f, 0.8f, 0.64f, 0.5f, 0.4f, 0.32f, 0.24f, 0.18f}[k];
  hr_stream_destroy(st);
  return n;
}

static void stream_admission_tail(hr_model *m, const hr_frame *fr) {
  uint64_t on[HR_GOV_MAX_RUNGS], off[HR_GOV_MAX_RUNGS], bon[HR_GOV_MAX_RUNGS], boff[HR_GOV_MAX_RUNGS];
  float ratio[HR_GOV_MAX_RUNGS];
  int n_on = rung_bytes(m, fr, 1, on, bon, ratio), n_off = rung_bytes(m, fr, 0, off, boff, ratio);
  CHECK(n_on > 1);
  CHECK_EQ_INT(n_on, n_off);
  for (int k = 0; k < n_on && k < n_off; k++) {
    hr_session_params sp;
    hr_session_params_default(&sp);
    sp.width = fr[0].width; sp.height = fr[0].height; sp.downsample_ratio = ratio[k]; sp.threads = 1;
    hr_plan_info pi;
    char err[512];
    CHECKF(hr_model_plan(m, &sp, &pi, err, sizeof err) == HR_OK, "%s", err);
    int64_t t = hr_stream_tail_bytes(&pi);
    CHECKF(pi.tail_split && t >= (int64_t)pi.width * pi.height * 4, "rung %d: tail_split %d, tail bytes %lld", k, pi.tail_split,
           (long long)t);
    CHECKF((int64_t)(on[k] - off[k]) == t, "rung %d (ratio %.3f): tail on %llu, off %llu bytes: differ by %lld, not the tail's %lld", k,
           ratio[k], (unsigned long long)on[k], (unsigned long long)off[k], (long long)(on[k] - off[k]), (long long)t);
    /* a change to the rung builds its kernels and state beside the running plan (hr_session_replan) */
    int64_t build = pi.kernel_shared_bytes + pi.kernel_bytes + pi.state_bytes;
    CHECKF(build > 0 && (int64_t)bon[k] == build && (int64_t)boff[k] == build, "rung %d: build bytes %llu / %llu, the plan's %lld", k,
           (unsigned long long)bon[k], (unsigned long long)boff[k], (long long)build);
    if (k == 0) printf("governor rung 0 at %dx%d: %.2f MB planned, %.2f MB with the tail every frame\n", pi.width, pi.height, off[0] / 1e6, on[0] / 1e6);
  }
}

/* (5) and (6): a stream at ratio 0.5 on one thread, adapting, under a governor with a generous
 * profile (60000:64000 MB), with budget_ms as given; its params in *p */
static hr_stream *gate_stream(hr_model *m, const hr_frame *fr, double budget_ms, hr_stream_params *p) {
  hr_stream_params_default(p);
  p->session.width = fr[0].width; p->session.height = fr[0].height;
  p->session.downsample_ratio = 0.5f; p->session.threads = 1;
  p->adapt = true; p->budget_ms = budget_ms; p->governor = true;
  char err[512];
  CHECK_EQ_INT(hr_gov_profile_parse("60000:64000", &p->profile, err, sizeof err), HR_OK);
  hr_stream *st = NULL;
  CHECKF(hr_stream_create(m, p, &st, err, sizeof err) == HR_OK, "%s", err);
  return st;
}

/* The governor's marks moved so that rung k's build would cross critical by half of it, while the
 * headroom stays above warn (the governor itself does nothing); hysteresis off. Returns that build
 * (bytes). */
static int64_t marks_over_build(hr_stream *st, int k) {
  hr_gov *g = hr_stream_governor(st);
  hr_gov_ladder *L = hr_gov_get_ladder(g);
  hr_gov_sample gs;
  CHECK_EQ_INT(hr_gov_sample_now(g, &gs), HR_OK);
  const int64_t build = (int64_t)L->p.rung_build_bytes[k], MBy = (int64_t)HR_GOV_MB;
  L->p.hysteresis_bytes = 0;
  L->p.critical_bytes = gs.available_bytes - build / 2;
  L->p.shed_bytes = L->p.critical_bytes + 1 * MBy;
  L->p.warn_bytes = L->p.critical_bytes + 2 * MBy;
  return build;
}

/* (5) A budget change built beside the running plan waits while its build (the new rung's kernels
 * and state, held beside the old ones for a moment) would take the governor's headroom under the
 * critical mark + hysteresis; the same change goes through once the marks allow it. The budget is
 * moved on the live stream (hr_stream_set_budget): down first (every frame over 1 us), then up. */
static void stream_build_gate(hr_model *m, const hr_frame *fr) {
  hr_stream_params p;
  hr_stream *st = gate_stream(m, fr, 1e-3, &p);
  if (!st) return;
  hr_stream_result r;
  hr_stream_stats ss;
  int i = 0, k;
  for (hr_stream_get_stats(st, &ss); i < 80 && ss.replans == 0; i++, hr_stream_get_stats(st, &ss)) CHECK_EQ_INT(hr_stream_push(st, &fr[i % NF], &r), HR_OK);
  CHECKF(ss.replans == 1 && ss.rung == 1, "over budget: %lld replans after %d frames, rung %d", (long long)ss.replans, i, ss.rung);
  CHECK_EQ_INT(hr_stream_set_budget(st, 0), HR_EINVAL);
  CHECK_EQ_INT(hr_stream_set_budget(st, NAN), HR_EINVAL);
  CHECK_EQ_INT(hr_stream_set_budget(NULL, 10), HR_EINVAL);
  CHECK_EQ_INT(hr_stream_set_budget(st, 1e6), HR_OK);
  /* the marks moved so that rung 0's build does not fit, while the headroom stays above warn */
  hr_gov_ladder *L = hr_gov_get_ladder(hr_stream_governor(st));
  const hr_gov_ladder_params saved = L->p;
  const int64_t build0 = marks_over_build(st, 0);
  CHECKF(build0 > 8 * (int64_t)HR_GOV_MB, "rung 0's build %lld bytes", (long long)build0);
  const int64_t acts = ss.governor_actions;
  for (k = 0; k < 120; k++) CHECK_EQ_INT(hr_stream_push(st, &fr[(i + k) % NF], &r), HR_OK);
  i += k;
  hr_stream_get_stats(st, &ss);
  CHECKF(ss.replans == 1 && ss.rung == 1 && ss.governor_actions == acts,
         "build %.1f MB over the marks: %lld replans, rung %d, %lld governor actions in 120 frames (want 1, 1, %lld)", build0 / 1e6,
         (long long)ss.replans, ss.rung, (long long)ss.governor_actions, (long long)acts);
  /* the marks back: the step up the controller asked for goes through at once */
  L->p = saved;
  for (k = 0; k < 5 && ss.replans == 1; k++, hr_stream_get_stats(st, &ss)) CHECK_EQ_INT(hr_stream_push(st, &fr[(i + k) % NF], &r), HR_OK);
  CHECKF(ss.replans == 2 && ss.rung == 0, "marks restored: %lld replans, rung %d after %d frames", (long long)ss.replans, ss.rung, k);
  printf("build gate: rung 0's build %.1f MB, held back 120 frames while it would cross critical; stepped up %d frame(s) after\n",
         build0 / 1e6, k);
  hr_stream_destroy(st);
}

/* (6) a step down the budget asks for whose build would not fit beside the running plan releases
 * first (suspend, then resume smaller: the state starts over) instead of building beside it. With
 * the governor's marks moved so that rung 1's build would cross critical (the headroom still above
 * warn: the governor itself does nothing), a budget no rung keeps makes the controller step down:
 * the stream's matte at that frame is a resumed session's (zero state) bit for bit, and a session
 * replanned beside (state carried) gives another: the two paths are told apart. */
static void stream_release_first(hr_model *m, const hr_frame *fr) {
  hr_stream_params p;
  hr_stream *st = gate_stream(m, fr, 1e6, &p);
  hr_session *resumed = NULL, *beside = NULL;
  CHECK_EQ_INT(hr_session_create(m, &p.session, &resumed), HR_OK);
  CHECK_EQ_INT(hr_session_create(m, &p.session, &beside), HR_OK);
  if (!st || !resumed || !beside) { hr_stream_destroy(st); hr_session_destroy(resumed); hr_session_destroy(beside); return; }
  const size_t n = (size_t)fr[0].width * fr[0].height;
  hr_stream_result r;
  hr_outputs o;
  hr_stream_stats ss;
  int i = 0;
  for (; i < 4; i++) {   /* state built up at rung 0, the same in all three */
    CHECK_EQ_INT(hr_stream_push(st, &fr[i], &r), HR_OK);
    CHECK_EQ_INT(hr_session_push(resumed, &fr[i], &o), HR_OK);
    CHECK_EQ_INT(hr_session_push(beside, &fr[i], &o), HR_OK);
  }
  const int64_t build1 = marks_over_build(st, 1);
  CHECKF(build1 > 4 * (int64_t)HR_GOV_MB, "rung 1's build %lld bytes", (long long)build1);
  hr_stream_get_stats(st, &ss);
  const int64_t acts = ss.governor_actions;
  CHECK_EQ_INT(hr_stream_set_budget(st, 1e-3), HR_OK);
  float *got = malloc(n * 4), *want_r = malloc(n * 4), *want_b = malloc(n * 4);
  int changed = -1;
  for (; i < 80 && changed < 0; i++) {
    const hr_frame *f = &fr[i % NF];
    CHECK_EQ_INT(hr_stream_push(st, f, &r), HR_OK);
    if (r.events & (HR_STREAM_EVENT_RUNG_CHANGED | HR_STREAM_EVENT_RESUMED)) {
      changed = i;
      CHECKF(r.alpha != NULL, "no matte at the change");
      if (!r.alpha) break;
      memcpy(got, r.alpha, n * 4);
      hr_session_suspend(resumed);
      CHECK_EQ_INT(hr_session_resume(resumed, fr[0].width, fr[0].height, (float)r.record.ratio), HR_OK);
      CHECK_EQ_INT(hr_session_replan(beside, fr[0].width, fr[0].height, (float)r.record.ratio), HR_OK);
    }
    CHECK_EQ_INT(hr_session_push(resumed, f, &o), HR_OK);
    if (changed >= 0) memcpy(want_r, o.alpha, n * 4);
    CHECK_EQ_INT(hr_session_push(beside, f, &o), HR_OK);
    if (changed >= 0) memcpy(want_b, o.alpha, n * 4);
  }
  hr_stream_get_stats(st, &ss);
  CHECKF(changed >= 0 && ss.replans == 1 && ss.rung == 1 && ss.change_failures == 0,
         "budget step down: changed at push %d, %lld replans, rung %d, %lld failures", changed, (long long)ss.replans, ss.rung,
         (long long)ss.change_failures);
  CHECKF(ss.governor_actions == acts, "the governor acted (%lld actions, %lld before): the step was not the budget's",
         (long long)ss.governor_actions, (long long)acts);
  if (changed >= 0) {
    const int same_r = !memcmp(got, want_r, n * 4), same_b = !memcmp(got, want_b, n * 4);
    CHECKF(same_r, "the step down's matte is not a resumed session's (state zeroed)");
    CHECKF(!same_b, "a replan beside (state carried) gives the same matte: the test cannot tell the paths apart");
    printf("release first: rung 1's build %.1f MB over the marks; the budget's step down at push %d: matte = resumed "
           "session's (state zeroed): %s; = replanned session's (state carried): %s\n",
           build1 / 1e6, changed, same_r ? "yes" : "no", same_b ? "yes" : "no");
  }
  free(got); free(want_r); free(want_b);
  hr_session_destroy(resumed);
  hr_session_destroy(beside);
  hr_stream_destroy(st);
}

int main(void) {
  if (!HR_COUNTING) printf("AddressSanitizer build: allocation counting off (ASan owns malloc); the output checks run\n");
  hr_model *m; hr_source *src; hr_frame fr[NF];
  if (!hr_test_rvm_frames(&m, &src, fr, NF)) { hr_source_destroy(src); hr_model_destroy(m); return hr_test_finish("test_stream"); }
  stream_vs_session(m, fr);
  stream_noalloc(m, fr, 0);
  stream_noalloc(m, fr, 1);
  stream_memory_pressure(m, fr);
  stream_build_gate(m, fr);
  stream_release_first(m, fr);
  stream_admission_tail(m, fr);
  hr_source_destroy(src);
  hr_model_destroy(m);
  return hr_test_finish("test_stream");
}
