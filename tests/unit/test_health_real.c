/* Health monitor on real camera frames: input-side faults on the 200 bedroom frames, output-side
 * logic on a stand-in matte derived from those frames, detection and recovery frame counts.
 *
 * The engine is not in the tree yet, so the outputs here come from a STAND-IN model, not RVM: the
 * alpha is a soft threshold of the blurred luma of each (possibly faulted) real frame, and the
 * "recurrent state" is four tensors of RVM's r1..r4 sizes at 960x540 updated from the frame with a
 * leaky tanh (bounded like a ConvGRU; NaN stays in until reset). The input-side signals (black,
 * saturated, noise, frozen) are measured on the real frames exactly as the engine will see them.
 * The same checks with RVM itself: tests/unit/test_health_engine.c (library), tests/cli/health_*.sh
 * (`headroom run`); bench/health_calib.c records RVM's output to recalibrate the thresholds.
 *
 * Needs HR_DATA_DIR with sam2-bedroom/frames/00000.jpg .. 00199.jpg; exit 77 (skip) without. */
#include <stdint.h>
#include <turbojpeg.h>
#include "headroom.h"
#include "headroom/testing.h"
#include "hr_test.h"

#define NF 200
#define LW 120   /* stand-in model's low-res luma grid */
#define LH 68
#ifndef STANDIN_SOFT
#define STANDIN_SOFT 0.004f   /* luma width of the stand-in matte's logistic */
#endif

static char g_dir[512];
static tjhandle g_tj;
static unsigned char *g_jpg[NF];   /* the compressed frames, read once */
static unsigned long g_jpg_len[NF];

static int read_jpegs(void) {
  for (int i = 0; i < NF; i++) {
    char path[600];
    snprintf(path, sizeof path, "%s/%05d.jpg", g_dir, i);
    FILE *fp = fopen(path, "rb");
    if (!fp) return -1;
    fseek(fp, 0, SEEK_END);
    long n = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    g_jpg[i] = malloc((size_t)n);
    if (!g_jpg[i] || fread(g_jpg[i], 1, (size_t)n, fp) != (size_t)n) { fclose(fp); return -1; }
    fclose(fp);
    g_jpg_len[i] = (unsigned long)n;
  }
  return 0;
}

/* Decode frame i into rgb (allocated on the first call for the size). */
static int load_frame(int i, unsigned char **rgb, int *w, int *h) {
  int ww, hh, ss, cs;
  if (tjDecompressHeader3(g_tj, g_jpg[i], g_jpg_len[i], &ww, &hh, &ss, &cs) != 0) return -1;
  if (!*rgb) { *rgb = malloc((size_t)ww * hh * 3); *w = ww; *h = hh; }
  if (ww != *w || hh != *h) return -1;
  return tjDecompress2(g_tj, g_jpg[i], g_jpg_len[i], *rgb, ww, 0, hh, TJPF_RGB, TJFLAG_FASTDCT) == 0 ? 0 : -1;
}

/* ---- the stand-in model ---- */
typedef struct standin {
  int w, h;
  float lum[LW * LH], tmp[LW * LH], alo[LW * LH], g[4][LW * LH];
  float *alpha;
  float *state[4];
  size_t len[4];
  float thr;
} standin;

static void standin_init(standin *m, int w, int h) {
  memset(m, 0, sizeof *m);
  m->w = w;
  m->h = h;
  m->alpha = calloc((size_t)w * h, sizeof(float));
  /* RVM at 960x540 with downsample_ratio ~0.53 (processing 512x288): r1 16x256x144, r2 20x128x72,
   * r3 40x64x36, r4 64x32x18. */
  const size_t lens[4] = { 16u * 256 * 144, 20u * 128 * 72, 40u * 64 * 36, 64u * 32 * 18 };
  for (int i = 0; i < 4; i++) { m->len[i] = lens[i]; m->state[i] = calloc(lens[i], sizeof(float)); }
  m->thr = -1.0f;
}

static void standin_free(standin *m) {
  free(m->alpha);
  for (int i = 0; i < 4; i++) free(m->state[i]);
}

static void standin_reset(standin *m) {
  for (int i = 0; i < 4; i++) memset(m->state[i], 0, m->len[i] * sizeof(float));
}

static void standin_run(standin *m, const unsigned char *rgb) {
  const int w = m->w, h = m->h;
  /* low-res luma: box average of each cell */
  for (int cy = 0; cy < LH; cy++)
    for (int cx = 0; cx < LW; cx++) {
      int x0 = cx * w / LW, x1 = (cx + 1) * w / LW, y0 = cy * h / LH, y1 = (cy + 1) * h / LH;
      unsigned acc = 0;
      for (int y = y0; y < y1; y++)
        for (int x = x0; x < x1; x++) {
          const unsigned char *p = rgb + ((size_t)y * w + x) * 3;
          acc += 77u * p[0] + 150u * p[1] + 29u * p[2];
        }
      m->lum[cy * LW + cx] = (float)acc / (256.0f * 255.0f * (float)((x1 - x0) * (y1 - y0)));
    }
  /* 3x3 box blur, twice */
  for (int pass = 0; pass < 2; pass++) {
    for (int y = 0; y < LH; y++)
      for (int x = 0; x < LW; x++) {
        float s = 0; int n = 0;
        for (int dy = -1; dy <= 1; dy++)
          for (int dx = -1; dx <= 1; dx++) {
            int xx = x + dx, yy = y + dy;
            if (xx < 0 || yy < 0 || xx >= LW || yy >= LH) continue;
            s += m->lum[yy * LW + xx]; n++;
          }
        m->tmp[y * LW + x] = s / n;
      }
    memcpy(m->lum, m->tmp, sizeof m->lum);
  }
  /* the threshold is fixed from the first frame: its 75th luma percentile ("the bright quarter is
   * the subject") */
  if (m->thr < 0) {
    float hist[LW * LH];
    memcpy(hist, m->lum, sizeof hist);
    for (int i = 1; i < LW * LH; i++) {   /* insertion sort, once */
      float v = hist[i]; int j = i - 1;
      while (j >= 0 && hist[j] > v) { hist[j + 1] = hist[j]; j--; }
      hist[j + 1] = v;
    }
    m->thr = hist[(LW * LH * 3) / 4];
  }
  /* state: leaky integration of a clamped luma feature (bounded like a ConvGRU; NaN stays) */
  for (int t = 0; t < 4; t++)
    for (int i = 0; i < LW * LH; i++) {
      float v = 3.0f * (m->lum[(i * 7919) % (LW * LH)] - 0.5f) + 0.1f * (float)(t + 1);
      m->g[t][i] = v < -1.0f ? -1.0f : v > 1.0f ? 1.0f : v;
    }
  for (int t = 0; t < 4; t++) {
    float *s = m->state[t];
    const float *g = m->g[t];
    for (size_t i = 0, j = 0; i < m->len[t]; i++, j = j + 1 == LW * LH ? 0 : j + 1) s[i] = 0.8f * s[i] + 0.2f * g[j];
  }
  const int poisoned = isnan(m->state[0][0]) || isnan(m->state[1][0]) || isnan(m->state[2][0]) || isnan(m->state[3][0]);
  /* alpha: a crisp logistic around the threshold on the low-res grid, upsampled bilinearly (soft
   * edges a few pixels wide, like a matte) */
  for (int i = 0; i < LW * LH; i++) m->alo[i] = 1.0f / (1.0f + expf(-(m->lum[i] - m->thr) / STANDIN_SOFT));
  for (int y = 0; y < h; y++) {
    float fy = ((float)y + 0.5f) * LH / h - 0.5f;
    int y0 = fy < 0 ? 0 : (int)fy; if (y0 > LH - 2) y0 = LH - 2;
    float wy = fy - (float)y0; if (wy < 0) wy = 0; if (wy > 1) wy = 1;
    for (int x = 0; x < w; x++) {
      float fx = ((float)x + 0.5f) * LW / w - 0.5f;
      int x0 = fx < 0 ? 0 : (int)fx; if (x0 > LW - 2) x0 = LW - 2;
      float wx = fx - (float)x0; if (wx < 0) wx = 0; if (wx > 1) wx = 1;
      const float *l = m->alo + y0 * LW + x0;
      m->alpha[(size_t)y * w + x] = (l[0] * (1 - wx) + l[1] * wx) * (1 - wy) + (l[LW] * (1 - wx) + l[LW + 1] * wx) * wy;
    }
  }
  /* a poisoned state poisons the decoder's output: a NaN band over the middle rows */
  if (poisoned)
    for (int y = h / 3; y < 2 * h / 3; y++)
      for (int x = 0; x < w; x++) m->alpha[(size_t)y * w + x] = NAN;
}

/* ---- one scenario over the 200 frames ---- */
typedef struct result {
  int first_bad;        /* first frame >= fault start with the expected verdict; -1 if never */
  int back_healthy;     /* first frame >= fault end that is HEALTHY; -1 if never */
  int healthy_in_fault; /* frames between detection and fault end reported HEALTHY (silent) */
  int nonhealthy_clean; /* frames after warm-up, outside [fault start, recovery), not HEALTHY */
  int resets;
  hr_health_state final_state;
  char reason_at_detect[HR_HEALTH_REASON_LEN];
  double cost_max_us, cost_sum_us;
  int transitions;
} result;

static void on_transition(const hr_health_transition *t, void *user) {
  result *r = user;
  r->transitions++;
  if (getenv("HR_HEALTH_VERBOSE"))
    printf("    frame %3lld: %s -> %s: %s\n", (long long)t->frame, hr_health_state_name(t->from),
           hr_health_state_name(t->to), t->reason);
}

/* expect: the cause bit that must be named, or 0 for "state is SUSPENDED" (memory-pressure). */
static result run_scenario(const char *spec, int f0, int len, uint32_t expect) {
  result r;
  memset(&r, 0, sizeof r);
  r.first_bad = r.back_healthy = -1;
  hr_fault_injector *inj = NULL;
  char err[256];
  CHECKF(hr_fault_create(spec, 42, &inj, err, sizeof err) == HR_OK, "%s", err);
  unsigned char *rgb = NULL;
  int w = 0, h = 0;
  if (load_frame(0, &rgb, &w, &h) != 0) SKIP("cannot decode %s/00000.jpg", g_dir);
  standin m;
  standin_init(&m, w, h);
  hr_health *hm = NULL;
  const char *names[4] = { "r1", "r2", "r3", "r4" };
  hr_health_params p;
  hr_health_params_default(&p);
  p.state_names = names;
  CHECK(hr_health_create(&p, w, h, &hm, err, sizeof err) == HR_OK);
  hr_health_set_callback(hm, on_transition, &r);
  const int f1 = f0 + len;   /* first frame after the fault */
  bool suspended = false, need_reset = false;
  for (int i = 0; i < NF; i++) {
    CHECK(load_frame(i, &rgb, &w, &h) == 0);
    hr_frame fr = { .fmt = HR_PIX_RGB24, .width = w, .height = h, .planes = { rgb }, .strides = { (ptrdiff_t)w * 3 },
                    .ts_ns = (int64_t)i * 33333333 };
    CHECK(hr_fault_apply_input(inj, i, &fr) == HR_OK);
    CHECK(hr_health_observe_input(hm, &fr) == HR_OK);
    /* a governor stand-in: memory pressure suspends inference while it lasts */
    const uint32_t act = hr_fault_active(inj, i);
    const bool pressure = act & HR_FAULT_BIT(HR_FAULT_MEMORY_PRESSURE);
    if (pressure && !suspended) { hr_health_note_event(hm, HR_HEALTH_EVENT_GOV_SUSPEND, "headroom below critical"); suspended = true; }
    if (!pressure && suspended) {
      hr_health_note_event(hm, HR_HEALTH_EVENT_GOV_RESUME, NULL);
      suspended = false;
      standin_reset(&m);   /* the engine re-creates the state on resume */
      hr_health_note_event(hm, HR_HEALTH_EVENT_STATE_RESET, "resume");
    }
    hr_health_verdict v;
    if (!suspended) {
      if (need_reset) { standin_reset(&m); hr_health_note_event(hm, HR_HEALTH_EVENT_STATE_RESET, NULL); need_reset = false; }
      hr_fault_apply_state(inj, i, m.state, m.len, 4);
      standin_run(&m, rgb);
      const float *alpha = hr_fault_apply_output(inj, i, m.alpha, w, h);
      const float *const st[4] = { m.state[0], m.state[1], m.state[2], m.state[3] };
      CHECK(hr_health_observe_output(hm, alpha, w, h, st, m.len, 4, &v) == HR_OK);
      if (v.action == HR_HEALTH_ACTION_RESET_STATE) { need_reset = true; r.resets++; }
      r.cost_sum_us += v.signals.cost_us;
      if (v.signals.cost_us > r.cost_max_us) r.cost_max_us = v.signals.cost_us;
    } else {
      hr_health_get(hm, &v);
    }
    const bool hit = expect ? ((v.causes & expect) || (v.signals.flags & expect && v.action == HR_HEALTH_ACTION_RESET_STATE))
                            : v.state == HR_HEALTH_SUSPENDED;
    if (len > 0 && i >= f0 && r.first_bad < 0 && hit && v.state != HR_HEALTH_HEALTHY) {
      r.first_bad = i;
      snprintf(r.reason_at_detect, sizeof r.reason_at_detect, "%s", v.reason);
    }
    if (len > 0 && r.first_bad >= 0 && i < f1 && v.state == HR_HEALTH_HEALTHY) r.healthy_in_fault++;
    if (len > 0 && i >= f1 && r.back_healthy < 0 && v.state == HR_HEALTH_HEALTHY) r.back_healthy = i;
    const bool in_episode = len > 0 && i >= f0 && (r.back_healthy < 0 || i < r.back_healthy);
    if (i >= p.warmup_frames && !in_episode && v.state != HR_HEALTH_HEALTHY) {
      r.nonhealthy_clean++;
      if (getenv("HR_HEALTH_VERBOSE"))
        printf("    frame %d not healthy: %s (mad %.4f allow %.4f iou %.3f unc %.3f in_mad %.4f)\n", i, v.reason,
               v.signals.alpha_mad, v.signals.mad_allow, v.signals.mask_iou, v.signals.uncertain_share, v.signals.input_mad);
    }
    r.final_state = v.state;
  }
  hr_health_destroy(hm);
  hr_fault_destroy(inj);
  standin_free(&m);
  free(rgb);
  return r;
}

int main(void) {
  const char *d = getenv("HR_DATA_DIR");
  if (!d || !*d) SKIP("HR_DATA_DIR not set");
  snprintf(g_dir, sizeof g_dir, "%s/sam2-bedroom/frames", d);
  char probe[600];
  snprintf(probe, sizeof probe, "%s/00000.jpg", g_dir);
  FILE *fp = fopen(probe, "rb");
  if (!fp) SKIP("no frames at %s", g_dir);
  fclose(fp);
  if (read_jpegs() != 0) SKIP("cannot read the 200 frames at %s", g_dir);
  g_tj = tjInitDecompress();
  CHECK(g_tj != NULL);

  /* Clean real video: no false alarm after warm-up. */
  result clean = run_scenario("", 0, 0, 0);
  printf("clean: %d of %d frames after warm-up not HEALTHY; health cost mean %.0f us, max %.0f us per frame (960x540)\n",
         clean.nonhealthy_clean, NF - 10, clean.cost_sum_us / NF, clean.cost_max_us);
  CHECK_EQ_INT(clean.nonhealthy_clean, 0);
  CHECK_EQ_INT(clean.final_state, HR_HEALTH_HEALTHY);
  CHECK_EQ_INT(clean.resets, 0);

  struct { const char *spec; int f0, len; uint32_t cause; } sc[] = {
    { "black-input@60:20",     60, 20, HR_HEALTH_CAUSE_INPUT_BLACK },
    { "white-input@60:20",     60, 20, HR_HEALTH_CAUSE_INPUT_SATURATED },
    { "noise-input@60:20",     60, 20, HR_HEALTH_CAUSE_INPUT_NOISE },
    { "freeze-input@60:20",    60, 20, HR_HEALTH_CAUSE_INPUT_FROZEN },
    { "stuck-output@60:20",    60, 20, HR_HEALTH_CAUSE_STUCK_OUTPUT },
    { "nan-state@60",          60, 1,  HR_HEALTH_CAUSE_NONFINITE },
    { "memory-pressure@60:20", 60, 20, 0 },
    { "black-input@120:3",     120, 3, HR_HEALTH_CAUSE_INPUT_BLACK },
    { "noise-input@30:100",    30, 100, HR_HEALTH_CAUSE_INPUT_NOISE },
  };
  printf("%-24s %8s %8s %8s  %s\n", "fault", "detect", "recover", "clean-NH", "reason at detection");
  for (size_t k = 0; k < sizeof sc / sizeof sc[0]; k++) {
    result r = run_scenario(sc[k].spec, sc[k].f0, sc[k].len, sc[k].cause);
    const int det = r.first_bad >= 0 ? r.first_bad - sc[k].f0 + 1 : -1;   /* 1 = on the first faulty frame */
    const int rec = r.back_healthy >= 0 ? r.back_healthy - (sc[k].f0 + sc[k].len) + 1 : -1;
    printf("%-24s %8d %8d %8d  %s\n", sc[k].spec, det, rec, r.nonhealthy_clean, r.reason_at_detect);
    CHECKF(det >= 1 && det <= 5, "%s: detected after %d frames", sc[k].spec, det);
    if (sc[k].len >= 5) CHECKF(r.healthy_in_fault == 0, "%s: %d silent frames during the fault", sc[k].spec, r.healthy_in_fault);
    CHECKF(rec >= 1 && rec <= 30, "%s: healthy again after %d frames", sc[k].spec, rec);
    CHECKF(r.nonhealthy_clean == 0, "%s: %d false alarms outside the episode", sc[k].spec, r.nonhealthy_clean);
  }

  /* Repeated NaN (the injection never stops): reset, reset, reset, then FAILED. */
  result rf = run_scenario("nan-state@60:140", 60, 140, HR_HEALTH_CAUSE_NONFINITE);
  printf("nan-state@60:140: %d resets requested, final state %s\n", rf.resets, hr_health_state_name(rf.final_state));
  CHECK_EQ_INT(rf.resets, 3);
  CHECK_EQ_INT(rf.final_state, HR_HEALTH_FAILED);

  /* Several faults in one spec. */
  result rm = run_scenario("black-input@40:10,stuck-output@100:15,nan-state@150", 40, 10, HR_HEALTH_CAUSE_INPUT_BLACK);
  CHECK(rm.first_bad >= 40 && rm.first_bad < 45);
  CHECK_EQ_INT(rm.resets, 1);
  CHECK_EQ_INT(rm.final_state, HR_HEALTH_HEALTHY);

  tjDestroy(g_tj);
  for (int i = 0; i < NF; i++) free(g_jpg[i]);
  return hr_test_finish("test_health_real");
}
