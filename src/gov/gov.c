/* The governor handle: opens the measurement files once, samples RSS and cgroup usage per frame
 * with pread (no allocation), tracks peaks and feeds the ladder. */
#include "gov/gov_internal.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct hr_gov {
  hr_gov_profile profile;
  hr_gov_cgroup cg;
  hr_gov_ladder ladder;
  uint64_t admit_margin;
  uint64_t page_size;
  int statm_fd;
  int cg_usage_fd;              /* -1 when the cgroup has no limit */
  int cg_stat_fd;               /* the binding cgroup's memory.stat; -1 when absent */
  hr_gov_sample last;
  uint64_t device_bytes;         /* hr_gov_set_device_bytes */
  hr_gov_action last_action;
  bool sampled;
  char err[512];
};

void hr_gov_params_default(hr_gov_params *p) {
  if (!p) return;
  memset(p, 0, sizeof *p);
  snprintf(p->profile.name, sizeof p->profile.name, "none");
  hr_gov_ladder_params_default(&p->ladder);
  p->admit_margin_bytes = HR_GOV_ADMIT_MARGIN_DEFAULT;
}

hr_status hr_gov_create(const hr_gov_params *p, hr_gov **out, char *err, size_t err_len) {
  if (err && err_len) err[0] = '\0';
  if (!out) return HR_EINVAL;
  *out = NULL;
  if (!p) {
    if (err && err_len) snprintf(err, err_len, "governor: no params");
    return HR_EINVAL;
  }
  hr_gov_ladder ladder;
  if (hr_gov_ladder_init(&ladder, &p->ladder) != HR_OK) {
    if (err && err_len)
      snprintf(err, err_len, "governor: bad ladder params (need 0 <= critical < shed < warn, "
                             "hysteresis >= 0, frames >= 1, 1..%d rungs, rung bytes non-increasing, costs < 2^62)",
               HR_GOV_MAX_RUNGS);
    return HR_EINVAL;
  }
  hr_gov *g = calloc(1, sizeof *g);
  if (!g) return HR_ENOMEM;
  g->profile = p->profile;
  g->ladder = ladder;
  g->admit_margin = p->admit_margin_bytes;
  g->cg_usage_fd = -1;
  g->cg_stat_fd = -1;
  long ps = sysconf(_SC_PAGESIZE);
  g->page_size = ps > 0 ? (uint64_t)ps : 4096;
  const char *statm = p->statm_path ? p->statm_path : "/proc/self/statm";
  g->statm_fd = open(statm, O_RDONLY | O_CLOEXEC);
  if (g->statm_fd < 0) {
    if (err && err_len) snprintf(err, err_len, "governor: cannot open %s", statm);
    free(g);
    return HR_EIO;
  }
  hr_gov_cgroup_find_at(p->proc_cgroup, p->cgroup_fs_root, &g->cg);
  if (g->cg.limit_bytes > 0) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", g->cg.limit_dir,
             g->cg.version == 2 ? "memory.current" : "memory.usage_in_bytes");
    g->cg_usage_fd = open(path, O_RDONLY | O_CLOEXEC);
    if (g->cg_usage_fd < 0) {
      if (err && err_len) snprintf(err, err_len, "governor: cannot open %s", path);
      close(g->statm_fd);
      free(g);
      return HR_EIO;
    }
    /* Without it every byte of page cache counts as used (the conservative reading). */
    snprintf(path, sizeof path, "%s/memory.stat", g->cg.limit_dir);
    g->cg_stat_fd = open(path, O_RDONLY | O_CLOEXEC);
  }
  *out = g;
  return HR_OK;
}

void hr_gov_destroy(hr_gov *g) {
  if (!g) return;
  if (g->statm_fd >= 0) close(g->statm_fd);
  if (g->cg_usage_fd >= 0) close(g->cg_usage_fd);
  if (g->cg_stat_fd >= 0) close(g->cg_stat_fd);
  free(g);
}

static int64_t headroom(uint64_t limit, uint64_t used) {
  if (limit >= used) return (int64_t)(limit - used);
  return -(int64_t)(used - limit);
}

hr_status hr_gov_sample_now(hr_gov *g, hr_gov_sample *out) {
  if (!g) return HR_EINVAL;
  char buf[128];
  uint64_t pages, usage = 0;
  if (hr__gov_pread_text(g->statm_fd, buf, sizeof buf) != HR_OK ||
      hr__gov_parse_statm_resident(buf, &pages) != HR_OK) {
    snprintf(g->err, sizeof g->err, "governor: reading statm failed");
    return HR_EIO;
  }
  if (g->cg_usage_fd >= 0 && (hr__gov_pread_text(g->cg_usage_fd, buf, sizeof buf) != HR_OK ||
                              hr_gov_cgroup_parse_value(buf, &usage) != HR_OK)) {
    snprintf(g->err, sizeof g->err, "governor: reading cgroup usage in %s failed", g->cg.limit_dir);
    return HR_EIO;
  }
  /* Read after the usage, so the cache it subtracts was already there when the usage was read
   * (cache that a reader adds in between is not subtracted; cache the kernel drops in between makes
   * the working set read low by that much, for one frame). */
  uint64_t reclaim = 0;
  char stat[4096];
  if (g->cg_stat_fd >= 0 && (hr__gov_pread_text(g->cg_stat_fd, stat, sizeof stat) != HR_OK ||
                             hr_gov_cgroup_parse_stat(stat, g->cg.version, &reclaim) != HR_OK))
    reclaim = 0;
  if (reclaim > usage) reclaim = usage;
  hr_gov_sample *s = &g->last;
  s->rss_bytes = pages * g->page_size;
  s->cg_usage_bytes = usage;
  s->cg_reclaimable_bytes = reclaim;
  s->cg_working_set_bytes = usage - reclaim;
  s->cg_limit_bytes = g->cg.limit_bytes;
  s->safe_bytes = g->profile.safe_bytes;
  s->kill_bytes = g->profile.kill_bytes;
  s->device_bytes = g->device_bytes;
  int64_t avail = INT64_MAX;
  if (s->kill_bytes) avail = headroom(s->kill_bytes, s->rss_bytes + s->device_bytes);
  if (s->cg_limit_bytes) {
    int64_t c = headroom(s->cg_limit_bytes, s->cg_working_set_bytes);
    if (c < avail) avail = c;
  }
  s->available_bytes = avail;
  if (!g->sampled) {
    s->rss_peak_bytes = s->rss_bytes;
    s->cg_usage_peak_bytes = usage;
    s->cg_working_set_peak_bytes = s->cg_working_set_bytes;
    s->available_min_bytes = avail;
    g->sampled = true;
  } else {
    if (s->rss_bytes > s->rss_peak_bytes) s->rss_peak_bytes = s->rss_bytes;
    if (usage > s->cg_usage_peak_bytes) s->cg_usage_peak_bytes = usage;
    if (s->cg_working_set_bytes > s->cg_working_set_peak_bytes)
      s->cg_working_set_peak_bytes = s->cg_working_set_bytes;
    if (avail < s->available_min_bytes) s->available_min_bytes = avail;
  }
  if (out) *out = *s;
  return HR_OK;
}

void hr_gov_set_device_bytes(hr_gov *g, uint64_t bytes) { if (g) g->device_bytes = bytes; }

hr_status hr_gov_frame(hr_gov *g, hr_gov_decision *d, hr_gov_sample *s) {
  if (!g) return HR_EINVAL;
  hr_status st = hr_gov_sample_now(g, s);
  if (st != HR_OK) {
    if (d) {
      d->action = HR_GOV_ACTION_NONE;
      d->level = g->ladder.level;
      d->rung = g->ladder.rung;
      d->headroom_bytes = g->last.available_bytes;
    }
    return st;
  }
  g->last_action = hr_gov_ladder_step(&g->ladder, g->last.available_bytes, d);
  return HR_OK;
}

hr_gov_ladder *hr_gov_get_ladder(hr_gov *g) { return g ? &g->ladder : NULL; }

void hr_gov_reset_peaks(hr_gov *g) {
  if (!g) return;
  g->sampled = false;
  hr_gov_sample_now(g, NULL);
}

hr_status hr_gov_admit_now(hr_gov *g, uint64_t fixed_bytes, const hr_gov_candidate *cands, size_t n,
                           size_t *chosen) {
  if (!g) return HR_EINVAL;
  hr_gov_sample s;
  hr_status st = hr_gov_sample_now(g, &s);
  if (st != HR_OK) return st;
  hr_gov_admit_input in = {
    .safe_bytes = g->profile.safe_bytes,
    .baseline_rss_bytes = s.rss_bytes,
    .margin_bytes = g->admit_margin,
    .fixed_bytes = fixed_bytes,
  };
  return hr_gov_admit(&in, cands, n, chosen, g->err, sizeof g->err);
}

static const char *mbstr(char *b, size_t n, uint64_t bytes) {
  if (!bytes) snprintf(b, n, "none");
  else snprintf(b, n, "%.1fM", hr__gov_mb((double)bytes));
  return b;
}

int hr_gov_info(const hr_gov *g, char *buf, size_t len) {
  if (!g) return snprintf(buf, len, "%s", "");
  const hr_gov_sample *s = &g->last;
  char a[32], b[32], c[32], d[32], e[32], f[32], h[32], r[32], w[32], wp[32];
  char av[32], avm[32];
  if (s->available_bytes == INT64_MAX) snprintf(av, sizeof av, "unlimited");
  else snprintf(av, sizeof av, "%.1fM", hr__gov_mb((double)s->available_bytes));
  if (s->available_min_bytes == INT64_MAX) snprintf(avm, sizeof avm, "unlimited");
  else snprintf(avm, sizeof avm, "%.1fM", hr__gov_mb((double)s->available_min_bytes));
  return snprintf(buf, len,
                  "# Governor\n"
                  "used_memory_rss_human:%s\n"
                  "used_memory_peak_human:%s\n"
                  "cgroup_usage_human:%s\n"
                  "cgroup_usage_peak_human:%s\n"
                  "cgroup_reclaimable_human:%s\n"
                  "cgroup_working_set_human:%s\n"
                  "cgroup_working_set_peak_human:%s\n"
                  "cgroup_limit_human:%s\n"
                  "cgroup:%s%d %s\n"
                  "maxmemory_safe_human:%s\n"
                  "maxmemory_kill_human:%s\n"
                  "available_human:%s\n"
                  "available_min_human:%s\n"
                  "maxmemory_policy:%s\n"
                  "governor_level:%s\n"
                  "governor_rung:%d\n"
                  "governor_action:%s\n",
                  mbstr(a, sizeof a, s->rss_bytes), mbstr(b, sizeof b, s->rss_peak_bytes),
                  mbstr(c, sizeof c, s->cg_usage_bytes), mbstr(d, sizeof d, s->cg_usage_peak_bytes),
                  mbstr(r, sizeof r, s->cg_reclaimable_bytes), mbstr(w, sizeof w, s->cg_working_set_bytes),
                  mbstr(wp, sizeof wp, s->cg_working_set_peak_bytes),
                  mbstr(e, sizeof e, s->cg_limit_bytes), "v", g->cg.version,
                  g->cg.version ? g->cg.dir : "-", mbstr(f, sizeof f, s->safe_bytes),
                  mbstr(h, sizeof h, s->kill_bytes), av, avm, g->profile.name,
                  hr_gov_level_name(g->ladder.level), g->ladder.rung,
                  hr_gov_action_name(g->last_action));
}

const char *hr_gov_last_error(const hr_gov *g) { return g ? g->err : ""; }
