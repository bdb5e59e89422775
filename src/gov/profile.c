/* Ceiling profiles: the built-in device table, "cgroup[:SAFE]", "SAFE:KILL" and "none". */
#include "gov/gov_internal.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#define ACCEPTED "a14, a15, a16, a17, m1, m2, cgroup[:SAFE_MB], SAFE_MB:KILL_MB or none"
#define MAX_MB ((uint64_t)1 << 24) /* 16 TB: anything larger is a typo */

static void set_err(char *err, size_t n, const char *fmt, const char *name, const char *why) {
  if (err && n) snprintf(err, n, fmt, name, why);
}

/* Whole-string decimal MB, 1..MAX_MB. */
static bool parse_mb(const char *s, size_t len, uint64_t *out) {
  if (len == 0 || len > 9) return false;
  uint64_t v = 0;
  for (size_t i = 0; i < len; i++) {
    if (s[i] < '0' || s[i] > '9') return false;
    v = v * 10 + (uint64_t)(s[i] - '0');
  }
  if (v == 0 || v > MAX_MB) return false;
  *out = v;
  return true;
}

static const struct { const char *name, *canon; uint64_t safe_mb, kill_mb; } k_devices[] = {
  {"a14", "a14", 380, 420},
  {"a15", "a15", 500, 560},
  {"a16", "a16", 650, 720},
  {"a17", "a16", 650, 720},
  {"m1", "m1", 900, 0},    /* termination: dynamic (the cgroup's, if any) */
  {"m2", "m1", 900, 0},
};

hr_status hr_gov_profile_parse_cg(const char *name, const hr_gov_cgroup *cg, hr_gov_profile *out,
                                  char *err, size_t err_len) {
  if (err && err_len) err[0] = '\0';
  if (!name || !out) {
    set_err(err, err_len, "profile %s: %s", name ? name : "(null)", "missing argument");
    return HR_EINVAL;
  }
  hr_gov_profile p;
  memset(&p, 0, sizeof p);
  uint64_t cg_limit = cg ? cg->limit_bytes : 0;

  if (strcasecmp(name, "none") == 0) {
    snprintf(p.name, sizeof p.name, "none");
    *out = p;
    return HR_OK;
  }
  for (size_t i = 0; i < sizeof k_devices / sizeof k_devices[0]; i++) {
    if (strcasecmp(name, k_devices[i].name) != 0) continue;
    snprintf(p.name, sizeof p.name, "%s", k_devices[i].canon);
    p.safe_bytes = k_devices[i].safe_mb * HR_GOV_MB;
    p.kill_bytes = k_devices[i].kill_mb ? k_devices[i].kill_mb * HR_GOV_MB : cg_limit;
    *out = p;
    return HR_OK;
  }
  if (strncasecmp(name, "cgroup", 6) == 0 && (name[6] == '\0' || name[6] == ':')) {
    uint64_t safe_mb = 0;
    if (name[6] == ':' && !parse_mb(name + 7, strlen(name + 7), &safe_mb)) {
      set_err(err, err_len, "profile '%s': %s", name,
              "SAFE after 'cgroup:' must be a whole number of MB, 1..16777216");
      return HR_EINVAL;
    }
    if (cg_limit == 0) {
      char why[400];
      if (!cg || cg->version == 0)
        snprintf(why, sizeof why, "no memory cgroup found for this process");
      else
        snprintf(why, sizeof why, "memory cgroup v%d %s has no limit", cg->version, cg->dir);
      set_err(err, err_len, "profile '%s': %s (use a device profile or SAFE_MB:KILL_MB)", name, why);
      return HR_ENOTSUP;
    }
    if (safe_mb && safe_mb * HR_GOV_MB > cg_limit) {
      char why[160];
      snprintf(why, sizeof why, "safe %llu MB exceeds the cgroup limit %.1f MB",
               (unsigned long long)safe_mb, hr__gov_mb((double)cg_limit));
      set_err(err, err_len, "profile '%s': %s", name, why);
      return HR_EINVAL;
    }
    snprintf(p.name, sizeof p.name, "cgroup");
    p.kill_bytes = cg_limit;
    p.safe_bytes = safe_mb ? safe_mb * HR_GOV_MB : cg_limit / 10 * 9;
    *out = p;
    return HR_OK;
  }
  const char *colon = strchr(name, ':');
  if (colon && (name[0] >= '0' && name[0] <= '9')) {
    uint64_t safe_mb, kill_mb;
    if (!parse_mb(name, (size_t)(colon - name), &safe_mb) ||
        !parse_mb(colon + 1, strlen(colon + 1), &kill_mb)) {
      set_err(err, err_len, "profile '%s': %s", name,
              "SAFE_MB:KILL_MB must be two whole numbers of MB, 1..16777216 (e.g. 380:420)");
      return HR_EINVAL;
    }
    if (safe_mb > kill_mb) {
      char why[128];
      snprintf(why, sizeof why, "safe %llu MB exceeds the termination limit %llu MB",
               (unsigned long long)safe_mb, (unsigned long long)kill_mb);
      set_err(err, err_len, "profile '%s': %s", name, why);
      return HR_EINVAL;
    }
    snprintf(p.name, sizeof p.name, "custom");
    p.safe_bytes = safe_mb * HR_GOV_MB;
    p.kill_bytes = kill_mb * HR_GOV_MB;
    *out = p;
    return HR_OK;
  }
  set_err(err, err_len, "profile '%s': %s", name, "unknown (expected " ACCEPTED ")");
  return HR_EINVAL;
}

hr_status hr_gov_profile_parse(const char *name, hr_gov_profile *out, char *err, size_t err_len) {
  hr_gov_cgroup cg;
  hr_gov_cgroup_find(&cg);
  return hr_gov_profile_parse_cg(name, &cg, out, err, err_len);
}
