/* Health monitor on the real engine: RVM over the 200 sam2-bedroom frames at 256x144, clean (no
 * false alarm after warm-up) and with each injected fault (detected within 5 frames, HEALTHY again
 * within 30 frames of its end), driven by a loop that does what `headroom run` must do:
 *   - the monitor's RESET_STATE -> hr_session_reset before the next push;
 *   - FAILED (resets did not help) -> rebuild: hr_session_reset + hr_health_reset;
 *   - memory-pressure -> the governor's answer to critical headroom: hr_session_suspend and
 *     HR_HEALTH_EVENT_GOV_SUSPEND while it lasts, hr_session_resume and _GOV_RESUME after.
 * Prints the detection / recovery frame counts per fault.
 *
 * Needs HR_MODEL_DIR (rvm.json) and HR_DATA_DIR (sam2-bedroom/frames); exit 77 (skip) without. */
#include <stdint.h>
#include "headroom.h"
#include "headroom/io.h"
#include "headroom/testing.h"
#include "hr_test.h"

#define W 256
#define H 144

static char g_frames[600];
static hr_model *g_model;

typedef struct result {
  int detect, recover;        /* frames: 1 = on the fault's first / the first frame after it; -1 never */
  int silent;                 /* HEALTHY frames between detection and the fault's end */
  int false_alarm;            /* not-HEALTHY frames after warm-up outside the episode */
  int degraded_after_warmup;  /* DEGRADED frames after warm-up (the clean-video figure) */
  int resets, rebuilds, frames;
  char reason[HR_HEALTH_REASON_LEN];
} result;

static void on_transition(const hr_health_transition *t, void *user) {
  (void)user;
  if (getenv("HR_HEALTH_VERBOSE"))
    printf("    frame %3lld: %s -> %s: %s\n", (long long)t->frame - 1, hr_health_state_name(t->from),
           hr_health_state_name(t->to), t->reason);
}

/* expect: the cause bit the verdict must name at detection; 0 = the state must be SUSPENDED. */
static result run(const char *spec, int f0, int len, int n_frames, uint32_t expect) {
  result r;
  memset(&r, 0, sizeof r);
  r.detect = r.recover = -1;
  char err[512];
  hr_source *src = NULL;
  if (hr_source_open(g_frames, NULL, &src, err, sizeof err)) FATAL("cannot open %s: %s", g_frames, err);
  hr_pixfmt fmt; int fw, fh;
  hr_source_get_format(src, &fmt, &fw, &fh);
  hr_session_params sp;
  hr_session_params_default(&sp);
  sp.width = W; sp.height = H; sp.frame_width = fw; sp.frame_height = fh;
  sp.downsample_ratio = 1.0f; sp.threads = 1;
  hr_session *s = NULL;
  CHECK(hr_session_create(g_model, &sp, &s) == HR_OK);
  hr_fault_injector *inj = NULL;
  CHECKF(hr_fault_create(spec, 42, &inj, err, sizeof err) == HR_OK, "%s", err);
  static const char *const names[] = { "r1", "r2", "r3", "r4", "r5", "r6", "r7", "r8" };
  hr_health_params hp;
  hr_health_params_default(&hp);
  hp.state_names = names;
  hr_health *hm = NULL;
  CHECK(hr_health_create(&hp, W, H, &hm, err, sizeof err) == HR_OK);
  hr_health_set_callback(hm, on_transition, NULL);
  uint8_t *copy = NULL;
  const int f1 = f0 + len;
  bool suspended = false;
  for (int i = 0; i < n_frames; i++) {
    hr_frame f;
    if (hr_source_read(src, &f) != HR_OK) break;
    /* a writable copy for the input faults (the source's buffers are not ours) */
    const size_t bytes = (size_t)f.strides[0] * f.height;
    if (!copy) copy = malloc(bytes);
    memcpy(copy, f.planes[0], bytes);
    f.planes[0] = copy;
    CHECK(hr_fault_apply_input(inj, i, &f) == HR_OK);
    CHECK(hr_health_observe_input(hm, &f) == HR_OK);
    const uint32_t act = hr_fault_active(inj, i);
    const bool pressure = act & HR_FAULT_BIT(HR_FAULT_MEMORY_PRESSURE);
    if (pressure && !suspended) {
      CHECK(hr_session_suspend(s) == HR_OK);
      hr_health_note_event(hm, HR_HEALTH_EVENT_GOV_SUSPEND, "injected memory pressure");
      suspended = true;
    } else if (!pressure && suspended) {
      CHECK(hr_session_resume(s, 0, 0, 0) == HR_OK);
      hr_health_note_event(hm, HR_HEALTH_EVENT_GOV_RESUME, NULL);
      suspended = false;
    }
    hr_health_verdict v;
    if (!suspended) {
      if (act & HR_FAULT_BIT(HR_FAULT_NAN_STATE)) {
        const float *sv[8]; size_t sl[8];
        const int ns = hr_session_state_views(s, sv, sl, 8);
        hr_fault_apply_state(inj, i, (float *const *)(void *)sv, sl, ns);   /* the session's own state */
      }
      hr_outputs o;
      CHECK(hr_session_push(s, &f, &o) == HR_OK);
      hr_health_note_session_events(hm, o.events);
      const float *alpha = hr_fault_apply_output(inj, i, o.alpha, o.width, o.height);
      const float *sv[8]; size_t sl[8];
      const int ns = hr_session_state_views(s, sv, sl, 8);
      CHECK(hr_health_observe_output(hm, alpha, o.width, o.height, sv, sl, ns, &v) == HR_OK);
      if (v.action == HR_HEALTH_ACTION_RESET_STATE) { hr_session_reset(s); r.resets++; }
      if (v.state == HR_HEALTH_FAILED) {   /* resets did not help: rebuild the stream */
        hr_session_reset(s);
        hr_health_reset(hm);
        r.rebuilds++;
      }
    } else {
      hr_health_get(hm, &v);
    }
    const bool bad = v.state != HR_HEALTH_HEALTHY;
    const bool named = expect ? ((v.causes & expect) || ((v.signals.flags & expect) && v.action == HR_HEALTH_ACTION_RESET_STATE))
                              : v.state == HR_HEALTH_SUSPENDED;
    if (len > 0 && i >= f0 && r.detect < 0 && bad && named) {
      r.detect = i - f0 + 1;
      snprintf(r.reason, sizeof r.reason, "%s: %s", hr_health_state_name(v.state), v.reason);
    }
    if (len > 0 && r.detect > 0 && i < f1 && !bad) r.silent++;
    if (len > 0 && i >= f1 && r.recover < 0 && !bad) r.recover = i - f1 + 1;
    const bool episode = len > 0 && i >= f0 && (r.recover < 0 || i < f1 + r.recover - 1);
    if (i >= hp.warmup_frames && !episode && bad) {
      r.false_alarm++;
      if (getenv("HR_HEALTH_VERBOSE")) printf("    frame %d not healthy: %s\n", i, v.reason);
    }
    if (i >= hp.warmup_frames && v.state == HR_HEALTH_DEGRADED) r.degraded_after_warmup++;
    r.frames = i + 1;
  }
  free(copy);
  hr_health_destroy(hm);
  hr_fault_destroy(inj);
  hr_session_destroy(s);
  hr_source_destroy(src);
  return r;
}

int main(void) {
  char mp[600], probe[700];
  if (!hr_test_path("HR_MODEL_DIR", "rvm.json", mp, sizeof mp)) SKIP("HR_MODEL_DIR not set");
  if (!hr_test_path("HR_DATA_DIR", "sam2-bedroom/frames", g_frames, sizeof g_frames)) SKIP("HR_DATA_DIR not set");
  snprintf(probe, sizeof probe, "%s/00000.jpg", g_frames);
  FILE *fp = fopen(probe, "rb");
  if (!fp) SKIP("no frames at %s", g_frames);
  fclose(fp);
  char err[512];
  if (hr_model_load(mp, &g_model, err, sizeof err) != HR_OK) FATAL("cannot load %s: %s", mp, err);

  /* Clean: the whole clip, no DEGRADED frame after warm-up (< 1% of 190 is none). */
  result c = run("", 0, 0, 200, 0);
  printf("clean sam2-bedroom 256x144: %d of %d frames after warm-up DEGRADED, %d not HEALTHY\n", c.degraded_after_warmup,
         c.frames - 10, c.false_alarm);
  CHECK(c.frames == 200);
  CHECKF(c.degraded_after_warmup * 100 < c.frames - 10, "%d DEGRADED", c.degraded_after_warmup);
  CHECK_EQ_INT(c.false_alarm, 0);
  CHECK_EQ_INT(c.resets, 0);

  struct { const char *spec; uint32_t cause; } sc[] = {
    { "nan-state@40:20",       HR_HEALTH_CAUSE_NONFINITE },
    { "nan-state@40",          HR_HEALTH_CAUSE_NONFINITE },
    { "freeze-input@40:20",    HR_HEALTH_CAUSE_INPUT_FROZEN },
    { "black-input@40:20",     HR_HEALTH_CAUSE_INPUT_BLACK },
    { "noise-input@40:20",     HR_HEALTH_CAUSE_INPUT_NOISE },
    { "stuck-output@40:20",    HR_HEALTH_CAUSE_STUCK_OUTPUT },
    { "memory-pressure@40:20", 0 },
  };
  printf("%-22s %6s %7s %6s %6s %6s  %s\n", "fault", "detect", "recover", "silent", "resets", "rebuild", "verdict at detection");
  for (size_t k = 0; k < sizeof sc / sizeof sc[0]; k++) {
    const int len = strchr(sc[k].spec, ':') ? 20 : 1;
    result r = run(sc[k].spec, 40, len, 120, sc[k].cause);
    printf("%-22s %6d %7d %6d %6d %6d  %s\n", sc[k].spec, r.detect, r.recover, r.silent, r.resets, r.rebuilds, r.reason);
    CHECKF(r.detect >= 1 && r.detect <= 5, "%s: detected after %d frames", sc[k].spec, r.detect);
    CHECKF(r.recover >= 1 && r.recover <= 30, "%s: HEALTHY again after %d frames", sc[k].spec, r.recover);
    CHECKF(r.silent == 0, "%s: %d HEALTHY frames during the fault", sc[k].spec, r.silent);
    CHECKF(r.false_alarm == 0, "%s: %d frames not HEALTHY outside the episode", sc[k].spec, r.false_alarm);
  }
  hr_model_destroy(g_model);
  return hr_test_finish("test_health_engine");
}
