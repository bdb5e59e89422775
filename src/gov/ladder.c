/* The shedding ladder: a pure, deterministic per-frame state machine with hysteresis (transitions
 * are documented in include/headroom/gov.h). */
#include "gov/gov_internal.h"

#include <string.h>

const char *hr_gov_action_name(hr_gov_action a) {
  switch (a) {
    case HR_GOV_ACTION_NONE: return "none";
    case HR_GOV_ACTION_RELEASE_CACHES: return "release_caches";
    case HR_GOV_ACTION_STEP_DOWN: return "step_down";
    case HR_GOV_ACTION_STEP_UP: return "step_up";
    case HR_GOV_ACTION_SUSPEND: return "suspend";
    case HR_GOV_ACTION_RESUME: return "resume";
  }
  return "unknown";
}

const char *hr_gov_level_name(hr_gov_level l) {
  switch (l) {
    case HR_GOV_LEVEL_NORMAL: return "normal";
    case HR_GOV_LEVEL_WARN: return "warn";
    case HR_GOV_LEVEL_SHED: return "shed";
    case HR_GOV_LEVEL_SUSPEND: return "suspend";
  }
  return "unknown";
}

void hr_gov_ladder_params_default(hr_gov_ladder_params *p) {
  if (!p) return;
  memset(p, 0, sizeof *p);
  p->warn_bytes = 160 * (int64_t)HR_GOV_MB;
  p->shed_bytes = 80 * (int64_t)HR_GOV_MB;
  p->critical_bytes = 32 * (int64_t)HR_GOV_MB;
  p->hysteresis_bytes = 24 * (int64_t)HR_GOV_MB;
  p->up_frames = 30;
  p->step_cooldown = 10;
  p->n_rungs = 4;
  p->suspend_frees_rung = true;
}

hr_status hr_gov_ladder_init(hr_gov_ladder *l, const hr_gov_ladder_params *p) {
  if (!l || !p) return HR_EINVAL;
  if (p->critical_bytes < 0 || p->critical_bytes >= p->shed_bytes || p->shed_bytes >= p->warn_bytes ||
      p->hysteresis_bytes < 0 || p->up_frames < 1 || p->step_cooldown < 1 || p->n_rungs < 1 ||
      p->n_rungs > HR_GOV_MAX_RUNGS)
    return HR_EINVAL;
  for (int i = 0; i < p->n_rungs; i++) /* costs within int64_t's half: h - cost cannot overflow */
    if (p->rung_bytes[i] > (uint64_t)INT64_MAX / 2 || p->rung_build_bytes[i] > (uint64_t)INT64_MAX / 2 ||
        (i && p->rung_bytes[i] > p->rung_bytes[i - 1]))
      return HR_EINVAL;
  memset(l, 0, sizeof *l);
  l->p = *p;
  l->level = HR_GOV_LEVEL_NORMAL;
  l->rung = 0;
  l->frames_since_step = p->step_cooldown;
  return HR_OK;
}

hr_status hr_gov_ladder_set_rung(hr_gov_ladder *l, int rung) {
  if (!l) return HR_EINVAL;
  if (rung < 0 || rung >= l->p.n_rungs) return HR_ERANGE;
  l->rung = rung;
  l->frames_ok = 0;
  return HR_OK;
}

/* h >= bar without overflow (bar may be pushed past INT64_MAX by the hysteresis). */
static bool at_least(int64_t h, int64_t threshold, int64_t extra) {
  if (threshold > INT64_MAX - extra) return h == INT64_MAX;
  return h >= threshold + extra;
}

bool hr__gov_build_fits(const hr_gov_ladder *l, int64_t h, int k) {
  return at_least(h - (int64_t)l->p.rung_build_bytes[k], l->p.critical_bytes, l->p.hysteresis_bytes);
}

/* Counts a frame towards going up; true when up_frames in a row have met the condition. */
static bool count_up(hr_gov_ladder *l, bool ok) {
  l->frames_ok = ok ? l->frames_ok + 1 : 0;
  if (l->frames_ok < l->p.up_frames) return false;
  l->frames_ok = 0;
  return true;
}

static hr_gov_action step_down(hr_gov_ladder *l) {
  l->frames_since_step = 0;
  l->frames_ok = 0;
  if (l->rung + 1 < l->p.n_rungs) { l->rung++; return HR_GOV_ACTION_STEP_DOWN; }
  return HR_GOV_ACTION_NONE;
}

hr_gov_action hr_gov_ladder_step(hr_gov_ladder *l, int64_t h, hr_gov_decision *out) {
  hr_gov_action a = HR_GOV_ACTION_NONE;
  if (!l) return a;
  const hr_gov_ladder_params *p = &l->p;
  l->frame++;
  if (l->frames_since_step < INT32_MAX) l->frames_since_step++;
  int64_t hyst = p->hysteresis_bytes;

  if (h < p->critical_bytes) {
    /* Worst first: any level falls straight to SUSPEND. */
    if (l->level != HR_GOV_LEVEL_SUSPEND) {
      l->level = HR_GOV_LEVEL_SUSPEND;
      a = HR_GOV_ACTION_SUSPEND;
    }
    l->frames_ok = 0;
  } else if (l->level == HR_GOV_LEVEL_SUSPEND) {
    int64_t cost = p->suspend_frees_rung ? (int64_t)p->rung_bytes[l->rung] : 0;
    bool above = at_least(h, p->critical_bytes, hyst);
    bool affordable = above && at_least(h - cost, p->critical_bytes, hyst);
    bool can_step = above && l->rung + 1 < p->n_rungs;
    if (count_up(l, affordable || can_step)) {
      if (affordable) {
        l->level = HR_GOV_LEVEL_SHED;
        l->frames_since_step = 0;  /* give the re-acquired memory a cooldown before stepping */
        a = HR_GOV_ACTION_RESUME;
      } else if (l->rung + 1 < p->n_rungs) {
        a = step_down(l);          /* resume cheaper, later */
      }
    }
  } else if (h < p->shed_bytes) {
    if (l->level != HR_GOV_LEVEL_SHED) {
      l->level = HR_GOV_LEVEL_SHED;
      a = step_down(l);
      if (a == HR_GOV_ACTION_NONE) a = HR_GOV_ACTION_RELEASE_CACHES;
    } else if (l->frames_since_step >= p->step_cooldown && l->rung + 1 < p->n_rungs) {
      a = step_down(l);
    }
    l->frames_ok = 0;
  } else if (l->level == HR_GOV_LEVEL_SHED) {
    if (l->rung > 0) {
      int64_t delta = (int64_t)(p->rung_bytes[l->rung - 1] - p->rung_bytes[l->rung]);
      bool ok = at_least(h, p->shed_bytes, hyst) && at_least(h - delta, p->shed_bytes, hyst) &&
                hr__gov_build_fits(l, h, l->rung - 1);
      if (count_up(l, ok)) {
        l->rung--;
        a = HR_GOV_ACTION_STEP_UP;
      }
    } else if (count_up(l, at_least(h, p->shed_bytes, hyst))) {
      l->level = HR_GOV_LEVEL_WARN;
    }
  } else if (h < p->warn_bytes) {
    if (l->level == HR_GOV_LEVEL_NORMAL) {
      l->level = HR_GOV_LEVEL_WARN;
      a = HR_GOV_ACTION_RELEASE_CACHES;
    }
    l->frames_ok = 0;
  } else if (l->level == HR_GOV_LEVEL_WARN) {
    if (count_up(l, at_least(h, p->warn_bytes, hyst))) l->level = HR_GOV_LEVEL_NORMAL;
  }

  if (out) {
    out->action = a;
    out->level = l->level;
    out->rung = l->rung;
    out->headroom_bytes = h;
  }
  return a;
}
