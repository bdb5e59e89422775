/* Kill demo: a simulated engine (15 MB weights, a 150 MB arena with smaller rungs, a 16 MB cache)
 * runs at 30 fps beside a growing ballast (the host app); with the governor it sheds its own memory
 * when the ladder says so, without it (--no-governor) it only measures. Run it under
 * bench/gov_cgroup_run.sh to see which one the kernel kills. */
#include "headroom/gov.h"
#include "headroom/testing.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#define MB HR_GOV_MB

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* A block of the simulated engine: mmap'd and written, so it is resident and freed on release. */
typedef struct block { void *p; size_t n; } block;
static int block_set(block *b, size_t n) {
  if (b->p) munmap(b->p, b->n);
  b->p = NULL;
  b->n = 0;
  if (!n) return 0;
  void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return -1;
  memset(p, 0x3C, n);
  b->p = p;
  b->n = n;
  return 0;
}
/* "Inference": write one byte per page, as kernels would touch the whole arena. */
static void block_touch(block *b, int frame) {
  for (size_t i = 0; i < b->n; i += 4096) ((volatile unsigned char *)b->p)[i] = (unsigned char)frame;
}

int main(int argc, char **argv) {
  const char *profile = "a14", *ballast_s = "50:300";
  bool governed = true;
  double seconds = 12.0, fps = 30.0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--profile") && i + 1 < argc) profile = argv[++i];
    else if (!strcmp(argv[i], "--ballast") && i + 1 < argc) ballast_s = argv[++i];
    else if (!strcmp(argv[i], "--seconds") && i + 1 < argc) seconds = atof(argv[++i]);
    else if (!strcmp(argv[i], "--no-governor")) governed = false;
    else {
      fprintf(stderr, "usage: %s [--profile P] [--ballast RATE:MAX] [--seconds S] [--no-governor]\n", argv[0]);
      return 2;
    }
  }
  setvbuf(stdout, NULL, _IOLBF, 0);
  char err[512];
  hr_gov_params gp;
  hr_gov_params_default(&gp);
  if (hr_gov_profile_parse(profile, &gp.profile, err, sizeof err) != HR_OK) { fprintf(stderr, "%s\n", err); return 2; }
  const uint64_t weights = 15 * MB, cache_bytes = 16 * MB;
  const uint64_t rung[4] = {150 * MB, 100 * MB, 60 * MB, 30 * MB};
  for (int i = 0; i < 4; i++) gp.ladder.rung_bytes[i] = rung[i];
  gp.ladder.n_rungs = 4;
  hr_ballast_params bp;
  if (hr_ballast_parse(ballast_s, &bp, err, sizeof err) != HR_OK) { fprintf(stderr, "%s\n", err); return 2; }
  hr_gov *g;
  hr_ballast *bal;
  if (hr_gov_create(&gp, &g, err, sizeof err) != HR_OK) { fprintf(stderr, "%s\n", err); return 1; }
  if (hr_ballast_create(&bp, &bal) != HR_OK) { fprintf(stderr, "ballast create failed\n"); return 1; }

  /* Admission before allocating: the largest rung that fits under safe - baseline - margin. */
  hr_gov_candidate cands[4] = {{"rung0 150MB", rung[0] + cache_bytes}, {"rung1 100MB", rung[1] + cache_bytes},
                               {"rung2 60MB", rung[2] + cache_bytes}, {"rung3 30MB", rung[3] + cache_bytes}};
  size_t pick = 0;
  hr_status st = hr_gov_admit_now(g, weights, cands, 4, &pick);
  printf("admission: %s\n", hr_gov_last_error(g));
  if (st != HR_OK) return 3;
  hr_gov_ladder_set_rung(hr_gov_get_ladder(g), (int)pick);

  block w = {0}, arena = {0}, cache = {0};
  if (block_set(&w, weights) || block_set(&arena, rung[pick]) || block_set(&cache, cache_bytes)) return 1;
  printf("mode=%s profile=%s safe=%.0fMB kill=%.0fMB ballast=%.1fMB/s max %lluMB\n",
         governed ? "governed" : "ungoverned", gp.profile.name, (double)gp.profile.safe_bytes / MB,
         (double)gp.profile.kill_bytes / MB, bp.rate_mb_s, (unsigned long long)bp.max_mb);

  int counts[6] = {0}, frames = (int)(seconds * fps), suspended_frames = 0;
  bool suspended = false;
  double t0 = now_s(), cost_sum = 0;
  hr_gov_level prev_level = HR_GOV_LEVEL_NORMAL;
  for (int f = 0; f < frames; f++) {
    double t = now_s() - t0;
    hr_ballast_tick(bal, t);
    hr_gov_decision d;
    hr_gov_sample s;
    double c0 = now_s();
    if (hr_gov_frame(g, &d, &s) != HR_OK) { fprintf(stderr, "%s\n", hr_gov_last_error(g)); return 1; }
    cost_sum += now_s() - c0;
    counts[d.action]++;
    if (governed) {
      switch (d.action) {
        case HR_GOV_ACTION_RELEASE_CACHES: block_set(&cache, 0); break;
        case HR_GOV_ACTION_STEP_DOWN:
        case HR_GOV_ACTION_STEP_UP:       /* re-create state + arena at the new rung */
          block_set(&cache, 0);
          if (!suspended && block_set(&arena, rung[d.rung])) return 1;
          break;
        case HR_GOV_ACTION_SUSPEND: block_set(&cache, 0); block_set(&arena, 0); suspended = true; break;
        case HR_GOV_ACTION_RESUME: if (block_set(&arena, rung[d.rung])) return 1; suspended = false; break;
        case HR_GOV_ACTION_NONE: break;
      }
      if (d.level == HR_GOV_LEVEL_NORMAL && prev_level != HR_GOV_LEVEL_NORMAL) block_set(&cache, cache_bytes);
    }
    prev_level = d.level;
    if (!suspended) block_touch(&arena, f); else suspended_frames++;
    if (d.action != HR_GOV_ACTION_NONE || f % 30 == 0 || (!governed && s.available_bytes < 40 * (int64_t)MB))
      printf("t=%5.2fs frame=%4d ballast=%3lluMB lib=%5.1fMB rss=%5.1fMB cg=%5.1fMB avail=%6.1fMB level=%-7s rung=%d governor_action=%s\n",
             t, f, (unsigned long long)hr_ballast_mb(bal), (double)(w.n + arena.n + cache.n) / MB,
             (double)s.rss_bytes / MB, (double)s.cg_usage_bytes / MB,
             s.available_bytes == INT64_MAX ? -1.0 : (double)s.available_bytes / MB,
             hr_gov_level_name(d.level), d.rung, hr_gov_action_name(d.action));
    double next = t0 + (f + 1) / fps, wait = next - now_s();
    if (wait > 0) {
      struct timespec ts = {(time_t)wait, (long)((wait - (time_t)wait) * 1e9)};
      nanosleep(&ts, NULL);
    }
  }
  hr_gov_sample s;
  hr_gov_sample_now(g, &s);
  char info[2048];
  hr_gov_info(g, info, sizeof info);
  fputs(info, stdout);
  printf("summary: mode=%s survived=yes frames=%d suspended_frames=%d rss_peak=%.1fMB cg_peak=%.1fMB "
         "min_available=%.1fMB actions: release_caches=%d step_down=%d step_up=%d suspend=%d resume=%d "
         "gov_cost=%.2fus/frame\n",
         governed ? "governed" : "ungoverned", frames, suspended_frames, (double)s.rss_peak_bytes / MB,
         (double)s.cg_usage_peak_bytes / MB, (double)s.available_min_bytes / MB,
         counts[HR_GOV_ACTION_RELEASE_CACHES], counts[HR_GOV_ACTION_STEP_DOWN], counts[HR_GOV_ACTION_STEP_UP],
         counts[HR_GOV_ACTION_SUSPEND], counts[HR_GOV_ACTION_RESUME], cost_sum / frames * 1e6);
  block_set(&w, 0);
  block_set(&arena, 0);
  block_set(&cache, 0);
  hr_ballast_destroy(bal);
  hr_gov_destroy(g);
  return 0;
}
