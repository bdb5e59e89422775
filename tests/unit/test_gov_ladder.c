/* Governor: the ladder's transitions on scripted headroom sequences (descent, recovery, hysteresis,
 * no flapping at thresholds, rung costs, suspend), plus admission choices. */
#include "headroom/gov.h"
#include "hr_test.h"

#include <stdint.h>

#define MB ((int64_t)HR_GOV_MB)
enum { N_, RC, SD, SU, SP, RS }; /* short action names for scripts */

static hr_gov_ladder_params small_params(void) {
  hr_gov_ladder_params p;
  hr_gov_ladder_params_default(&p);
  p.warn_bytes = 160 * MB;
  p.shed_bytes = 80 * MB;
  p.critical_bytes = 32 * MB;
  p.hysteresis_bytes = 24 * MB;
  p.up_frames = 3;
  p.step_cooldown = 2;
  p.n_rungs = 4;
  return p;
}

typedef struct step { int64_t h_mb; int action; hr_gov_level level; int rung; } step;

/* Feeds a script and checks every frame's action, level and rung. */
static void run_script(hr_gov_ladder *l, const step *s, size_t n, const char *what) {
  for (size_t i = 0; i < n; i++) {
    hr_gov_decision d;
    hr_gov_action a = hr_gov_ladder_step(l, s[i].h_mb * MB, &d);
    CHECKF(a == d.action && (int)a == s[i].action && d.level == s[i].level && d.rung == s[i].rung &&
               d.headroom_bytes == s[i].h_mb * MB,
           "%s frame %zu (h=%lld MB): got %s/%s/rung %d, want %s/%s/rung %d", what, i, (long long)s[i].h_mb,
           hr_gov_action_name(a), hr_gov_level_name(d.level), d.rung, hr_gov_action_name(s[i].action),
           hr_gov_level_name(s[i].level), s[i].rung);
  }
}

#define NO HR_GOV_LEVEL_NORMAL
#define WA HR_GOV_LEVEL_WARN
#define SH HR_GOV_LEVEL_SHED
#define SS HR_GOV_LEVEL_SUSPEND

static void test_descent_and_recovery(void) {
  hr_gov_ladder_params p = small_params();
  hr_gov_ladder l;
  CHECK(hr_gov_ladder_init(&l, &p) == HR_OK);
  const step s[] = {
    {400, N_, NO, 0}, {161, N_, NO, 0}, {160, N_, NO, 0},          /* at the threshold: not below */
    {159, RC, WA, 0}, {150, N_, WA, 0},                             /* warn: release caches once */
    {79, SD, SH, 1}, {79, N_, SH, 1},                               /* shed: step down, cooldown */
    {70, SD, SH, 2}, {70, N_, SH, 2}, {70, SD, SH, 3},              /* still below: keep stepping */
    {70, N_, SH, 3}, {70, N_, SH, 3}, {70, N_, SH, 3},              /* lowest rung: nothing more */
    {31, SP, SS, 3}, {20, N_, SS, 3}, {-5, N_, SS, 3},              /* critical: suspend */
    {56, N_, SS, 3}, {56, N_, SS, 3}, {56, RS, SH, 3},              /* 3 frames >= 32+24: resume */
    {90, N_, SH, 3}, {104, N_, SH, 3}, {104, N_, SH, 3}, {104, SU, SH, 2}, /* >= 80+24 x3 */
    {200, N_, SH, 2}, {200, N_, SH, 2}, {200, SU, SH, 1},
    {200, N_, SH, 1}, {200, N_, SH, 1}, {200, SU, SH, 0},
    {200, N_, SH, 0}, {200, N_, SH, 0}, {200, N_, WA, 0},           /* rung 0: back to warn */
    {183, N_, WA, 0}, {184, N_, WA, 0}, {184, N_, WA, 0}, {184, N_, NO, 0}, /* >= 160+24 x3 */
    {500, N_, NO, 0},
  };
  run_script(&l, s, sizeof s / sizeof s[0], "descent/recovery");
}

static void test_level_skips_and_interruptions(void) {
  hr_gov_ladder_params p = small_params();
  hr_gov_ladder l;
  hr_gov_ladder_init(&l, &p);
  const step jump[] = {{10, SP, SS, 0}, {400, N_, SS, 0}, {400, N_, SS, 0}, {400, RS, SH, 0},
                       {400, N_, SH, 0}, {400, N_, SH, 0}, {400, N_, WA, 0},
                       {400, N_, WA, 0}, {400, N_, WA, 0}, {400, N_, NO, 0},
                       {50, SD, SH, 1}};               /* NORMAL straight to SHED */
  run_script(&l, jump, sizeof jump / sizeof jump[0], "skips");
  /* A frame that misses the bar restarts the count. */
  const step intr[] = {{110, N_, SH, 1}, {110, N_, SH, 1}, {100, N_, SH, 1}, {110, N_, SH, 1},
                       {110, N_, SH, 1}, {110, SU, SH, 0}};
  run_script(&l, intr, sizeof intr / sizeof intr[0], "interrupted");
  /* One rung only: entering SHED can only release caches. */
  p.n_rungs = 1;
  hr_gov_ladder_init(&l, &p);
  const step one[] = {{70, RC, SH, 0}, {70, N_, SH, 0}, {70, N_, SH, 0}, {70, N_, SH, 0}};
  run_script(&l, one, sizeof one / sizeof one[0], "one rung");
}

/* Headroom that hovers around a threshold must not flap: no STEP_UP and at most one entry. */
static void test_no_flapping(void) {
  hr_gov_ladder_params p = small_params();
  hr_gov_ladder l;
  int counts[6];
  const int64_t centers[3] = {p.warn_bytes, p.shed_bytes, p.critical_bytes};
  for (int c = 0; c < 3; c++) {
    for (int64_t amp = 1; amp <= p.hysteresis_bytes - 1; amp += 7 * MB / 2) {
      hr_gov_ladder_init(&l, &p);
      memset(counts, 0, sizeof counts);
      hr_gov_level worst = HR_GOV_LEVEL_NORMAL, last = HR_GOV_LEVEL_NORMAL;
      for (int f = 0; f < 300; f++) {
        hr_gov_decision d;
        int64_t h = centers[c] + ((f & 1) ? amp : -amp) - (f % 3 == 0 ? 0 : 0);
        counts[hr_gov_ladder_step(&l, h, &d)]++;
        if (d.level > worst) worst = d.level;
        last = d.level;
      }
      CHECKF(counts[HR_GOV_ACTION_STEP_UP] == 0 && counts[HR_GOV_ACTION_RESUME] == 0,
             "center %d amp %lld: step_up %d resume %d", c, (long long)amp, counts[HR_GOV_ACTION_STEP_UP],
             counts[HR_GOV_ACTION_RESUME]);
      CHECK(counts[HR_GOV_ACTION_RELEASE_CACHES] <= 1 && counts[HR_GOV_ACTION_SUSPEND] <= 1);
      CHECK(counts[HR_GOV_ACTION_STEP_DOWN] <= p.n_rungs - 1);
      CHECK(last == worst);  /* never came back up while hovering */
    }
  }
  /* Hovering just under the recovery bar (threshold + hysteresis) never steps up either. */
  hr_gov_ladder_init(&l, &p);
  hr_gov_ladder_step(&l, 70 * MB, NULL);
  memset(counts, 0, sizeof counts);
  for (int f = 0; f < 300; f++) counts[hr_gov_ladder_step(&l, (f & 1) ? 104 * MB : 103 * MB, NULL)]++;
  CHECK_EQ_INT(counts[HR_GOV_ACTION_STEP_UP], 0);
}

/* With rung costs, stepping up (and resuming) waits until the extra memory fits above the bar. */
static void test_rung_costs(void) {
  hr_gov_ladder_params p = small_params();
  const int64_t rb[4] = {150, 100, 60, 30};
  for (int i = 0; i < 4; i++) p.rung_bytes[i] = (uint64_t)(rb[i] * MB);
  hr_gov_ladder l;
  CHECK(hr_gov_ladder_init(&l, &p) == HR_OK);
  CHECK(hr_gov_ladder_set_rung(&l, 3) == HR_OK);
  /* Entering SHED at the lowest rung releases caches instead. */
  hr_gov_decision d;
  CHECK(hr_gov_ladder_step(&l, 70 * MB, &d) == HR_GOV_ACTION_RELEASE_CACHES && d.rung == 3);
  const step up[] = {
    {110, N_, SH, 3}, {110, N_, SH, 3}, {110, N_, SH, 3}, {110, N_, SH, 3}, /* 110-30 < 104 */
    {134, N_, SH, 3}, {134, N_, SH, 3}, {134, SU, SH, 2},                  /* 134-30 >= 104 */
    {134, N_, SH, 2}, {134, N_, SH, 2}, {134, N_, SH, 2}, {134, N_, SH, 2}, /* 134-40 < 104 */
    {144, N_, SH, 2}, {144, N_, SH, 2}, {144, SU, SH, 1},
  };
  run_script(&l, up, sizeof up / sizeof up[0], "rung costs up");
  /* Suspended at rung 1 (100 MB): resuming is too expensive at 60 MB headroom, so the ladder
   * steps down while suspended until the rung fits, or the lowest rung is reached. */
  const step sus[] = {
    {20, SP, SS, 1}, {60, N_, SS, 1}, {60, N_, SS, 1}, {60, SD, SS, 2},
    {60, N_, SS, 2}, {60, N_, SS, 2}, {60, SD, SS, 3},
    {60, N_, SS, 3}, {60, N_, SS, 3}, {60, N_, SS, 3}, {60, N_, SS, 3},   /* 60-30 < 56 */
    {86, N_, SS, 3}, {86, N_, SS, 3}, {86, RS, SH, 3},                    /* 86-30 >= 56 */
  };
  run_script(&l, sus, sizeof sus / sizeof sus[0], "suspend costs");
  /* Without suspend_frees_rung the resume does not wait for the rung's bytes. */
  p.suspend_frees_rung = false;
  hr_gov_ladder_init(&l, &p);
  hr_gov_ladder_set_rung(&l, 3);
  const step sus2[] = {{20, SP, SS, 3}, {60, N_, SS, 3}, {60, N_, SS, 3}, {60, RS, SH, 3}};
  run_script(&l, sus2, sizeof sus2 / sizeof sus2[0], "suspend no cost");
}

/* A step up also waits until building the rung above (held beside the running plan while it is
 * made: hr_session_replan's transient) leaves the headroom at or above critical + hysteresis. */
static void test_build_costs(void) {
  hr_gov_ladder_params p = small_params();
  const int64_t rb[4] = {150, 100, 60, 30}, bb[4] = {20, 100, 10, 5};
  for (int i = 0; i < 4; i++) { p.rung_bytes[i] = (uint64_t)(rb[i] * MB); p.rung_build_bytes[i] = (uint64_t)(bb[i] * MB); }
  hr_gov_ladder l;
  CHECK(hr_gov_ladder_init(&l, &p) == HR_OK);
  CHECK(hr_gov_ladder_set_rung(&l, 2) == HR_OK);
  hr_gov_decision d;
  CHECK(hr_gov_ladder_step(&l, 70 * MB, &d) == HR_GOV_ACTION_STEP_DOWN && d.rung == 3);
  const step up[] = {
    {134, N_, SH, 3}, {134, N_, SH, 3}, {134, SU, SH, 2},                  /* 134-30 >= 104, 134-10 >= 56 */
    {144, N_, SH, 2}, {144, N_, SH, 2}, {144, N_, SH, 2}, {144, N_, SH, 2}, /* 144-40 >= 104 but 144-100 < 56 */
    {155, N_, SH, 2}, {155, N_, SH, 2}, {155, N_, SH, 2},                  /* 155-100 = 55 */
    {156, N_, SH, 2}, {156, N_, SH, 2}, {156, SU, SH, 1},                  /* 156-100 = 56 */
  };
  run_script(&l, up, sizeof up / sizeof up[0], "build costs up");
  /* without build bytes the same headroom steps up at once (the rung bytes alone) */
  for (int i = 0; i < 4; i++) p.rung_build_bytes[i] = 0;
  hr_gov_ladder_init(&l, &p);
  hr_gov_ladder_set_rung(&l, 2);
  const step up0[] = {{70, SD, SH, 3}, {144, N_, SH, 3}, {144, N_, SH, 3}, {144, SU, SH, 2}, {144, N_, SH, 2}, {144, N_, SH, 2},
                      {144, SU, SH, 1}};
  run_script(&l, up0, sizeof up0 / sizeof up0[0], "no build costs");
  /* costs past 2^62 are refused (h - cost must not overflow) */
  p.rung_build_bytes[1] = (uint64_t)INT64_MAX;
  CHECK(hr_gov_ladder_init(&l, &p) == HR_EINVAL);
  p.rung_build_bytes[1] = 0; p.rung_bytes[0] = UINT64_MAX;
  CHECK(hr_gov_ladder_init(&l, &p) == HR_EINVAL);
}

static void test_params_and_names(void) {
  hr_gov_ladder_params p = small_params(), q;
  hr_gov_ladder l;
  hr_gov_ladder_params_default(&q);
  CHECK(q.warn_bytes == 160 * MB && q.shed_bytes == 80 * MB && q.critical_bytes == 32 * MB);
  CHECK(q.hysteresis_bytes == 24 * MB && q.up_frames == 30 && q.n_rungs == 4 && q.suspend_frees_rung);
  CHECK(hr_gov_ladder_init(&l, &q) == HR_OK);
  q = p; q.shed_bytes = q.warn_bytes; CHECK(hr_gov_ladder_init(&l, &q) == HR_EINVAL);
  q = p; q.critical_bytes = q.shed_bytes + 1; CHECK(hr_gov_ladder_init(&l, &q) == HR_EINVAL);
  q = p; q.critical_bytes = -1; CHECK(hr_gov_ladder_init(&l, &q) == HR_EINVAL);
  q = p; q.hysteresis_bytes = -1; CHECK(hr_gov_ladder_init(&l, &q) == HR_EINVAL);
  q = p; q.up_frames = 0; CHECK(hr_gov_ladder_init(&l, &q) == HR_EINVAL);
  q = p; q.step_cooldown = 0; CHECK(hr_gov_ladder_init(&l, &q) == HR_EINVAL);
  q = p; q.n_rungs = 0; CHECK(hr_gov_ladder_init(&l, &q) == HR_EINVAL);
  q = p; q.n_rungs = HR_GOV_MAX_RUNGS + 1; CHECK(hr_gov_ladder_init(&l, &q) == HR_EINVAL);
  q = p; q.rung_bytes[0] = 1; q.rung_bytes[1] = 2; CHECK(hr_gov_ladder_init(&l, &q) == HR_EINVAL);
  CHECK(hr_gov_ladder_init(NULL, &p) == HR_EINVAL && hr_gov_ladder_init(&l, NULL) == HR_EINVAL);
  hr_gov_ladder_init(&l, &p);
  CHECK(hr_gov_ladder_set_rung(&l, 4) == HR_ERANGE && hr_gov_ladder_set_rung(&l, -1) == HR_ERANGE);
  CHECK(hr_gov_ladder_step(NULL, 0, NULL) == HR_GOV_ACTION_NONE);
  /* No ceiling: always NORMAL. */
  for (int i = 0; i < 100; i++) CHECK(hr_gov_ladder_step(&l, INT64_MAX, NULL) == HR_GOV_ACTION_NONE);
  CHECK(l.level == HR_GOV_LEVEL_NORMAL);
  /* Huge hysteresis must not overflow the bar. */
  q = p; q.hysteresis_bytes = INT64_MAX - 1;
  CHECK(hr_gov_ladder_init(&l, &q) == HR_OK);
  hr_gov_ladder_step(&l, 100 * MB, NULL);
  for (int i = 0; i < 10; i++) CHECK(hr_gov_ladder_step(&l, INT64_MAX - 5, NULL) == HR_GOV_ACTION_NONE);
  CHECK(l.level == HR_GOV_LEVEL_WARN);
  const char *an[] = {"none", "release_caches", "step_down", "step_up", "suspend", "resume"};
  for (int i = 0; i < 6; i++) CHECK(!strcmp(hr_gov_action_name((hr_gov_action)i), an[i]));
  CHECK(!strcmp(hr_gov_action_name((hr_gov_action)99), "unknown"));
  const char *ln[] = {"normal", "warn", "shed", "suspend"};
  for (int i = 0; i < 4; i++) CHECK(!strcmp(hr_gov_level_name((hr_gov_level)i), ln[i]));
  CHECK(!strcmp(hr_gov_level_name((hr_gov_level)-1), "unknown"));
}

/* Same input, same output: two ladders fed one pseudo-random walk agree on every frame. */
static void test_deterministic(void) {
  hr_gov_ladder_params p = small_params();
  hr_gov_ladder a, b;
  hr_gov_ladder_init(&a, &p);
  hr_gov_ladder_init(&b, &p);
  uint32_t x = 12345;
  int64_t h = 200 * MB;
  int transitions = 0;
  for (int f = 0; f < 20000; f++) {
    x = x * 1664525u + 1013904223u;
    h += ((int64_t)(x >> 16) % 17 - 8) * MB;
    if (h < -50 * MB) h = -50 * MB;
    if (h > 300 * MB) h = 300 * MB;
    hr_gov_decision da, db;
    hr_gov_ladder_step(&a, h, &da);
    hr_gov_ladder_step(&b, h, &db);
    CHECK(da.action == db.action && da.level == db.level && da.rung == db.rung);
    transitions += da.action != HR_GOV_ACTION_NONE;
    CHECK(da.rung >= 0 && da.rung < p.n_rungs);
  }
  CHECK(transitions > 10);
}

static void test_admit(void) {
  const hr_gov_candidate c[] = {{"mid", 100 * MB}, {"big", 200 * MB}, {"small", 50 * MB}, {"mid2", 100 * MB}};
  hr_gov_admit_input in = {.safe_bytes = 380 * MB, .baseline_rss_bytes = 100 * MB,
                           .margin_bytes = HR_GOV_ADMIT_MARGIN_DEFAULT, .fixed_bytes = 15 * MB};
  size_t pick = 99;
  char msg[300];
  /* budget 380-100-32 = 248: big needs 215 -> big (not first in the list). */
  CHECK(hr_gov_admit(&in, c, 4, &pick, msg, sizeof msg) == HR_OK && pick == 1);
  CHECKF(strstr(msg, "admitted 'big': 215.0 MB (fixed 15.0 + 200.0) within budget 248.0 MB"), "%s", msg);
  /* budget 148: big 215 no, mid 115 yes (first of the tie). */
  in.baseline_rss_bytes = 200 * MB;
  CHECK(hr_gov_admit(&in, c, 4, &pick, msg, sizeof msg) == HR_OK && pick == 0);
  /* exactly at the budget fits: budget 65 = small's 15+50. */
  in.baseline_rss_bytes = 283 * MB;
  CHECK(hr_gov_admit(&in, c, 4, &pick, msg, sizeof msg) == HR_OK && pick == 2);
  /* budget 48: nothing fits; the refusal names the numbers. */
  in.baseline_rss_bytes = 300 * MB;
  pick = 99;
  CHECK(hr_gov_admit(&in, c, 4, &pick, msg, sizeof msg) == HR_ENOFIT && pick == 99);
  CHECKF(!strcmp(msg, "no configuration fits: smallest 'small' needs 65.0 MB (fixed 15.0 + 50.0) > budget "
                      "48.0 MB (safe 380.0 - baseline 300.0 - margin 32.0)"), "%s", msg);
  printf("example refusal: %s\n", msg);
  /* baseline above safe: budget 0. */
  in.baseline_rss_bytes = 500 * MB;
  CHECK(hr_gov_admit(&in, c, 4, &pick, msg, sizeof msg) == HR_ENOFIT && strstr(msg, "budget 0.0 MB"));
  /* no ceiling: the largest. */
  in.safe_bytes = 0;
  CHECK(hr_gov_admit(&in, c, 4, &pick, msg, sizeof msg) == HR_OK && pick == 1 && strstr(msg, "no ceiling"));
  CHECK(hr_gov_admit(&in, c, 0, &pick, msg, sizeof msg) == HR_EINVAL);
  CHECK(hr_gov_admit(NULL, c, 4, &pick, msg, sizeof msg) == HR_EINVAL);
  CHECK(hr_gov_admit(&in, c, 4, NULL, NULL, 0) == HR_EINVAL);
  const hr_gov_candidate unnamed[] = {{NULL, 10 * MB}};
  in.safe_bytes = 1 * MB;
  in.baseline_rss_bytes = 0;
  CHECK(hr_gov_admit(&in, unnamed, 1, &pick, NULL, 0) == HR_ENOFIT);
  CHECK(hr_gov_admit(&in, unnamed, 1, &pick, msg, sizeof msg) == HR_ENOFIT && strstr(msg, "'?'"));
}

int main(void) {
  test_descent_and_recovery();
  test_level_skips_and_interruptions();
  test_no_flapping();
  test_rung_costs();
  test_build_costs();
  test_params_and_names();
  test_deterministic();
  test_admit();
  return hr_test_finish("test_gov_ladder");
}
