/* headroom memory governor: ceiling profiles, cheap per-frame measurement, admission and the
 * shedding ladder that keeps a stateful network alive under a hard memory ceiling. */
#ifndef HEADROOM_GOV_H
#define HEADROOM_GOV_H
#include "headroom/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Throughout this header 1 MB = 2^20 bytes (MiB), the unit of every string the governor parses
 * and every number it prints.
 *
 * Model (Valkey/Redis evict.c and INFO memory): the governor reports used / peak / rss / limit /
 * policy, plans against a "safe" ceiling and sheds work before the "termination" ceiling (iOS
 * jetsam, the Linux cgroup OOM killer) is reached.
 *
 * Phases: hr_gov_create() opens /proc/self/statm and the cgroup usage file once and keeps the file
 * descriptors; hr_gov_sample() / hr_gov_frame() read them with pread() into stack buffers and never
 * allocate. The ladder (hr_gov_ladder) and admission (hr_gov_admit) are pure functions of their
 * inputs: deterministic, no I/O, no allocation. */
#define HR_GOV_MB ((uint64_t)1 << 20)

/* ---------------------------------------------------------------------------------------------
 * Ceiling profiles.
 * ------------------------------------------------------------------------------------------- */

/* Built-in device profiles, safe / termination in MB. These are the article's figures; public
 * measurements of iOS app limits differ (by device, OS version and what else is running), so treat
 * them as a starting point and prefer a measured SAFE:KILL where you have one.
 *   a14        380 / 420    iPhone with A14
 *   a15        500 / 560    A15
 *   a16        650 / 720    A16 and A17 (alias "a17")
 *   m1         900 / dynamic  M1 / M2 iPad (alias "m2"): the termination limit is this process's
 *              cgroup limit when one exists, otherwise none
 *   cgroup[:SAFE]  termination = this process's memory-cgroup limit (v2 memory.max, v1
 *              memory.limit_in_bytes, the tightest of the cgroup and its ancestors); safe = SAFE MB
 *              if given, else 90% of the limit. Error if the cgroup has no limit.
 *   SAFE:KILL  custom, both in MB, 0 < SAFE <= KILL
 *   none       no ceiling: the governor measures but never sheds, admission admits everything
 * Names are case-insensitive. */
typedef struct hr_gov_profile {
  char name[24];           /* canonical name: "a14", "a15", "a16", "m1", "cgroup", "custom", "none" */
  uint64_t safe_bytes;     /* ceiling to plan and stay under; 0 = none */
  uint64_t kill_bytes;     /* termination ceiling; 0 = unknown / none */
} hr_gov_profile;

/* This process's memory cgroup, as found from /proc/self/cgroup. */
typedef struct hr_gov_cgroup {
  int version;             /* 2 (unified memory.max), 1 (v1 memory controller), 0 = none found */
  char dir[256];           /* the process's own cgroup directory ("" if none) */
  char limit_dir[256];     /* the directory whose limit binds: the process's cgroup or the ancestor
                              with the smallest limit ("" if no limit) */
  uint64_t limit_bytes;    /* binding limit; 0 = no limit ("max", v1's ~2^63 "unlimited") */
} hr_gov_cgroup;

/* Find this process's memory cgroup and its binding limit (walks up to the hierarchy's root).
 * Never fails for want of a cgroup: out->version = 0 then. HR_EINVAL on NULL out. */
HR_API hr_status hr_gov_cgroup_find(hr_gov_cgroup *out);
/* Same, with the paths injectable for tests: proc_cgroup is a file in /proc/<pid>/cgroup format,
 * fs_root the cgroup mount root (v2 mounted there, or v1 controllers under fs_root/memory). NULL =
 * "/proc/self/cgroup" and "/sys/fs/cgroup". */
HR_API hr_status hr_gov_cgroup_find_at(const char *proc_cgroup, const char *fs_root, hr_gov_cgroup *out);
/* Parse one cgroup memory value ("max", "123456789", with or without trailing newline) into bytes;
 * "max" and v1's unlimited values (>= 2^62) give 0 = no limit. HR_ECORRUPT on anything else. */
HR_API hr_status hr_gov_cgroup_parse_value(const char *text, uint64_t *bytes);
/* Parse a cgroup's memory.stat text (version 1 or 2) into the page cache the kernel can drop before
 * it OOM-kills: the file LRU (inactive_file + active_file; v1's hierarchical total_ counters) less
 * what is mapped, dirty or under writeback, clamped at 0. A file read once or replayed in a loop
 * fills the cgroup's usage with such pages; they are not the process's working set. HR_ECORRUPT
 * when the file LRU counters are missing or malformed (*bytes is then 0). */
HR_API hr_status hr_gov_cgroup_parse_stat(const char *text, int version, uint64_t *bytes);

/* Parse a profile name (see the table above). Reads this process's cgroup for "cgroup" and "m1".
 * On error *out is untouched and err (if non-NULL) holds a one-line message naming the string and
 * listing what is accepted. HR_EINVAL for bad strings, HR_ENOTSUP for "cgroup" without a limit. */
HR_API hr_status hr_gov_profile_parse(const char *name, hr_gov_profile *out, char *err, size_t err_len);
/* Pure variant: the cgroup is given (NULL = no cgroup). */
HR_API hr_status hr_gov_profile_parse_cg(const char *name, const hr_gov_cgroup *cg, hr_gov_profile *out,
                                  char *err, size_t err_len);

/* ---------------------------------------------------------------------------------------------
 * Admission: pick the largest processing configuration that fits before allocating anything.
 * ------------------------------------------------------------------------------------------- */

typedef struct hr_gov_candidate {
  const char *name;        /* e.g. "512x288 r0.375"; used in messages; may be NULL */
  uint64_t planned_bytes;  /* engine's plan for this configuration: arena + state + io, plus weights
                              unless given once as hr_gov_admit_input.fixed_bytes */
} hr_gov_candidate;

typedef struct hr_gov_admit_input {
  uint64_t safe_bytes;          /* the profile's safe ceiling; 0 = no ceiling (first largest wins) */
  uint64_t baseline_rss_bytes;  /* RSS measured before the engine allocates (the host app itself) */
  uint64_t margin_bytes;        /* kept free; default HR_GOV_ADMIT_MARGIN_DEFAULT */
  uint64_t fixed_bytes;         /* footprint shared by every candidate (weights); may be 0 */
} hr_gov_admit_input;
#define HR_GOV_ADMIT_MARGIN_DEFAULT (32 * HR_GOV_MB)

/* Budget = safe - baseline - margin (clamped at 0); a candidate fits when fixed + planned <= budget.
 * Picks the fitting candidate with the largest planned_bytes (the earliest on ties) into *chosen.
 * HR_ENOFIT when none fits (*chosen untouched), HR_EINVAL on NULL/empty arguments. msg (if non-NULL)
 * gets a one-line account with the numbers in MB, on success and on refusal, e.g.
 * "no configuration fits: smallest 'a' needs 212.0 MB (fixed 15.0 + 197.0) > budget 157.8 MB
 *  (safe 380.0 - baseline 190.2 - margin 32.0)". Pure: no I/O, no allocation. */
HR_API hr_status hr_gov_admit(const hr_gov_admit_input *in, const hr_gov_candidate *cands, size_t n,
                       size_t *chosen, char *msg, size_t msg_len);

/* ---------------------------------------------------------------------------------------------
 * The ladder: a pure, deterministic state machine fed once per frame with the measured headroom
 * (bytes left before the termination ceiling, hr_gov_sample.available_bytes).
 *
 * Levels, from best to worst, and what the engine does on each action:
 *   NORMAL   full service.
 *   WARN     headroom < warn: RELEASE_CACHES (drop caches, shrink pools; no visible change).
 *   SHED     headroom < shed: STEP_DOWN = re-create the recurrent state and step the processing
 *            resolution down one rung (rung + 1; rung 0 = full quality, n_rungs - 1 = lowest). Each
 *            action implies the milder ones (a STEP_DOWN also releases caches).
 *   SUSPEND  headroom < critical: SUSPEND = skip inference and pass frames through; the engine may
 *            release the rung's transient memory (arena) while suspended.
 *
 * Going down is immediate (one frame below a threshold is enough, levels may be skipped):
 *   any level, h < critical                     -> SUSPEND, action SUSPEND
 *   NORMAL, WARN, h < shed                      -> SHED, action STEP_DOWN (RELEASE_CACHES when
 *                                                  already at the lowest rung)
 *   NORMAL, h < warn                            -> WARN, action RELEASE_CACHES
 *   SHED, h < shed for step_cooldown frames after the last step, rung not lowest -> STEP_DOWN again
 * Going up is one step at a time, each after h has stayed at or above (threshold + hysteresis)
 * for up_frames consecutive frames (the count restarts after every transition and whenever a frame
 * misses the condition), so headroom that hovers around a threshold never flaps:
 *   SUSPEND: if h - resume_cost >= critical + hyst  -> SHED, action RESUME
 *            else if h >= critical + hyst and rung not lowest -> action STEP_DOWN (stay suspended,
 *            so that resuming costs less); resume_cost = rung_bytes[rung] if suspend_frees_rung.
 *            (At the lowest rung only frames that could afford the resume count.)
 *   SHED, rung > 0: if h - (rung_bytes[rung-1] - rung_bytes[rung]) >= shed + hyst
 *            and h - rung_build_bytes[rung-1] >= critical + hyst -> STEP_UP
 *            (stepping up must not by itself push the headroom back under the bar, nor its
 *            build, for the moment it lasts, under the critical mark)
 *   SHED, rung 0:   h >= shed + hyst                 -> WARN, action NONE
 *   WARN:           h >= warn + hyst                 -> NORMAL, action NONE (caches may regrow)
 * Thresholds must satisfy 0 <= critical < shed < warn. A headroom of INT64_MAX means "no ceiling".
 * ------------------------------------------------------------------------------------------- */

typedef enum hr_gov_level {
  HR_GOV_LEVEL_NORMAL = 0,
  HR_GOV_LEVEL_WARN,
  HR_GOV_LEVEL_SHED,
  HR_GOV_LEVEL_SUSPEND,
} hr_gov_level;

typedef enum hr_gov_action {
  HR_GOV_ACTION_NONE = 0,
  HR_GOV_ACTION_RELEASE_CACHES,
  HR_GOV_ACTION_STEP_DOWN,
  HR_GOV_ACTION_STEP_UP,
  HR_GOV_ACTION_SUSPEND,
  HR_GOV_ACTION_RESUME,
} hr_gov_action;

/* Telemetry names (the `governor_action` field): "none", "release_caches", "step_down",
 * "step_up", "suspend", "resume"; "unknown" otherwise. Static strings. */
HR_API const char *hr_gov_action_name(hr_gov_action a);
/* "normal", "warn", "shed", "suspend"; "unknown" otherwise. Static strings. */
HR_API const char *hr_gov_level_name(hr_gov_level l);

#define HR_GOV_MAX_RUNGS 8

typedef struct hr_gov_ladder_params {
  int64_t warn_bytes;        /* headroom below which caches are released. Default 160 MB. */
  int64_t shed_bytes;        /* headroom below which resolution steps down. Default 80 MB. */
  int64_t critical_bytes;    /* headroom below which inference is suspended. Default 32 MB. */
  int64_t hysteresis_bytes;  /* added to a threshold to go back up. Default 24 MB. */
  int up_frames;             /* consecutive frames above (threshold + hysteresis) before each step
                                up. Default 30 (one second at 30 fps). */
  int step_cooldown;         /* frames between two STEP_DOWNs while still below shed, so a step's
                                release is seen before the next. Default 10. */
  int n_rungs;               /* processing rungs, 1..HR_GOV_MAX_RUNGS. Default 4. */
  uint64_t rung_bytes[HR_GOV_MAX_RUNGS]; /* planned bytes of the resolution-dependent part at each
                                rung (non-increasing); 0s = unknown (no cost check). Default 0s. */
  bool suspend_frees_rung;   /* the engine releases rung_bytes[rung] while suspended. Default true. */
  uint64_t rung_build_bytes[HR_GOV_MAX_RUNGS]; /* bytes a change to this rung holds beside the
                                running plan while it is built (a replan's transient: the new
                                rung's kernels and state before the old ones go); 0s = none
                                counted. Default 0s. */
} hr_gov_ladder_params;

HR_API void hr_gov_ladder_params_default(hr_gov_ladder_params *p);

/* Ladder state: a plain value (copyable, no resources). Read it through hr_gov_decision; the
 * fields are the ladder's own. */
typedef struct hr_gov_ladder {
  hr_gov_ladder_params p;
  hr_gov_level level;
  int rung;
  int frames_ok;             /* consecutive frames meeting the current level's way up */
  int frames_since_step;     /* frames since the last STEP_DOWN */
  int64_t frame;             /* frames stepped */
} hr_gov_ladder;

/* One frame's outcome. */
typedef struct hr_gov_decision {
  hr_gov_action action;      /* what the engine should do now */
  hr_gov_level level;        /* level after this frame */
  int rung;                  /* processing rung after this frame (0 = full quality) */
  int64_t headroom_bytes;    /* the headroom this decision was made on */
} hr_gov_decision;

/* Validate p and start at NORMAL, rung 0. HR_EINVAL (l untouched) on bad thresholds / counts. */
HR_API hr_status hr_gov_ladder_init(hr_gov_ladder *l, const hr_gov_ladder_params *p);
/* Feed one frame's headroom; returns the action (also in *out if non-NULL). Pure: no I/O, no
 * allocation. Tell the ladder about a rung the engine could not apply with hr_gov_ladder_set_rung. */
HR_API hr_gov_action hr_gov_ladder_step(hr_gov_ladder *l, int64_t headroom_bytes, hr_gov_decision *out);
/* Force the rung (e.g. the engine admitted a lower configuration at start). HR_ERANGE if outside. */
HR_API hr_status hr_gov_ladder_set_rung(hr_gov_ladder *l, int rung);

/* ---------------------------------------------------------------------------------------------
 * The governor: profile + measurement + ladder, one per process (or per session).
 * ------------------------------------------------------------------------------------------- */
typedef struct hr_gov hr_gov;

typedef struct hr_gov_params {
  hr_gov_profile profile;        /* Default "none". */
  hr_gov_ladder_params ladder;   /* Default hr_gov_ladder_params_default(). */
  uint64_t admit_margin_bytes;   /* Default HR_GOV_ADMIT_MARGIN_DEFAULT. */
  const char *proc_cgroup;       /* test hooks, see hr_gov_cgroup_find_at; NULL = the real ones */
  const char *cgroup_fs_root;
  const char *statm_path;        /* NULL = "/proc/self/statm" */
} hr_gov_params;

HR_API void hr_gov_params_default(hr_gov_params *p);

/* One measurement. Sizes in bytes. */
typedef struct hr_gov_sample {
  uint64_t rss_bytes;            /* process resident set (statm resident pages x page size) */
  uint64_t rss_peak_bytes;       /* high-water of rss_bytes since create / reset_peaks */
  uint64_t cg_usage_bytes;       /* binding cgroup's usage (memory.current / usage_in_bytes), 0 if
                                    no cgroup limit; includes page cache the kernel may reclaim */
  uint64_t cg_usage_peak_bytes;  /* high-water of cg_usage_bytes */
  uint64_t cg_limit_bytes;       /* binding cgroup limit, 0 = none */
  uint64_t safe_bytes;           /* profile's safe ceiling, 0 = none */
  uint64_t kill_bytes;           /* profile's termination ceiling, 0 = none */
  int64_t available_bytes;       /* min(kill - rss, cg_limit - cg_working_set) over the ceilings that
                                    exist (iOS os_proc_available_memory analogue); may be negative;
                                    INT64_MAX when there is no ceiling */
  int64_t available_min_bytes;   /* low-water of available_bytes */
  uint64_t device_bytes;         /* unified-memory GPU allocations counted beside the RSS against the
                                    profile's ceilings (hr_gov_set_device_bytes), 0 = none */
  uint64_t cg_reclaimable_bytes; /* the part of cg_usage_bytes the kernel drops before an OOM kill:
                                    clean, unmapped page cache (hr_gov_cgroup_parse_stat on the binding
                                    cgroup's memory.stat, read beside the usage); 0 if unreadable */
  uint64_t cg_working_set_bytes; /* cg_usage_bytes - cg_reclaimable_bytes: what counts against
                                    cg_limit_bytes. Unlike the kubelet's working set (usage less
                                    inactive_file) it also leaves out active clean cache, which the
                                    kernel deactivates and drops before its OOM killer runs */
  uint64_t cg_working_set_peak_bytes; /* high-water of cg_working_set_bytes */
} hr_gov_sample;

/* Opens the measurement files (statm always; the cgroup usage file when the cgroup has a limit).
 * On failure *out is NULL and err holds why. */
HR_API hr_status hr_gov_create(const hr_gov_params *p, hr_gov **out, char *err, size_t err_len);
/* NULL-safe; closes the files. */
HR_API void hr_gov_destroy(hr_gov *g);

/* Measure now (two pread()s, no allocation) and update the peaks. Cost measured on the build VM
 * (Linux 6.18, cgroup v1): 1-2.5 us back to back; 13-30 us once per frame at 30 fps, where the
 * kernel's paths are cache-cold (a bare getppid() costs ~3.5 us there). HR_EIO if a read fails (the
 * previous sample is kept in the governor). */
HR_API hr_status hr_gov_sample_now(hr_gov *g, hr_gov_sample *out);
/* Once per frame: measure, then step the ladder with available_bytes. s may be NULL. On HR_EIO the
 * ladder is not stepped and *d says NONE at the current level. */
HR_API hr_status hr_gov_frame(hr_gov *g, hr_gov_decision *d, hr_gov_sample *s);
/* Memory a GPU that shares the host's RAM (an integrated or mobile GPU) holds for this process:
 * its device-local buffers are not in the RSS (the kernel charges them to the cgroup, whose usage
 * already counts them; iOS counts them in the footprint). From the next sample on, the profile's
 * ceilings are checked against rss + bytes. The stream sets it after every plan change on such a
 * device (Vulkan backend, hr_plan_info.device_bytes); 0 = none (a discrete GPU's memory is its own). */
HR_API void hr_gov_set_device_bytes(hr_gov *g, uint64_t bytes);
/* The ladder, to read or to force a rung (hr_gov_ladder_set_rung). */
HR_API hr_gov_ladder *hr_gov_get_ladder(hr_gov *g);
/* Restart the peak (and low-water) tracking from the current values. */
HR_API void hr_gov_reset_peaks(hr_gov *g);
/* Admission against this governor's profile with a fresh RSS baseline (see hr_gov_admit); the
 * message goes to hr_gov_last_error(). */
HR_API hr_status hr_gov_admit_now(hr_gov *g, uint64_t fixed_bytes, const hr_gov_candidate *cands, size_t n,
                           size_t *chosen);
/* INFO-memory style report of the last sample, "key:value" lines after a "# Governor" header:
 * used_memory_rss_human, used_memory_peak_human, cgroup_usage(_peak)_human,
 * cgroup_reclaimable_human, cgroup_working_set(_peak)_human, cgroup_limit_human, cgroup, maxmemory_safe_human, maxmemory_kill_human, available(_min)_human, maxmemory_policy (the
 * profile), governor_level, governor_rung, governor_action. Sizes as "12.3M" or "none". Returns the
 * length it needed (snprintf semantics). */
HR_API int hr_gov_info(const hr_gov *g, char *buf, size_t len);
/* Last error / admission message ("" if none). Owned by the governor. */
HR_API const char *hr_gov_last_error(const hr_gov *g);

#ifdef __cplusplus
}
#endif
#endif
