/* Health monitor on synthetic streams: every state transition, reasons, callbacks, the fault-spec
 * parser and appliers, thumbnails in every format, per-frame cost at 1920x1440 and zero allocations
 * per frame.
 *
 * The stream is synthetic: a textured background panning 1 px a frame with sensor noise, and a soft
 * disc (the "person") moving over it; the alpha is that disc's matte. test_health_engine.c runs the
 * monitor on RVM's output over real video; test_health_real.c the input side on real frames. */
#include <stdint.h>
#include <time.h>
#include "headroom.h"
#include "headroom/testing.h"
#include "hr_test.h"

/* ---- allocation counter: glibc lets the executable interpose malloc (not under ASan or TSan) ---- */
#if defined(__GLIBC__) && !defined(__SANITIZE_ADDRESS__) && !defined(HR_NO_MALLOC_COUNT)
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define HR__NO_COUNT 1
#endif
#endif
#endif
#if defined(__GLIBC__) && !defined(__SANITIZE_ADDRESS__) && !defined(HR__NO_COUNT) && !defined(HR_NO_MALLOC_COUNT)
#define HR_COUNT_ALLOCS 1
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);
static volatile int g_count_on;
static volatile long g_allocs;
void *malloc(size_t n) { if (g_count_on) g_allocs++; return __libc_malloc(n); }
void *calloc(size_t a, size_t b) { if (g_count_on) g_allocs++; return __libc_calloc(a, b); }
void *realloc(void *p, size_t n) { if (g_count_on) g_allocs++; return __libc_realloc(p, n); }
void free(void *p) { __libc_free(p); }
#endif

/* ---- synthetic stream ---- */
typedef struct synth {
  int w, h;
  unsigned char *rgb;
  float *alpha;
  float *state[4];
  size_t len[4];
  uint64_t rng;
} synth;

static uint64_t xs64(uint64_t *s) { uint64_t x = *s; x ^= x << 13; x ^= x >> 7; x ^= x << 17; return *s = x; }

static void synth_init(synth *s, int w, int h) {
  memset(s, 0, sizeof *s);
  s->w = w; s->h = h;
  s->rgb = malloc((size_t)w * h * 3);
  s->alpha = malloc(sizeof(float) * (size_t)w * h);
  const size_t lens[4] = { 16u * 40 * 30, 20u * 20 * 15, 40u * 10 * 8, 64u * 5 * 4 };
  for (int i = 0; i < 4; i++) { s->len[i] = lens[i]; s->state[i] = calloc(lens[i], sizeof(float)); }
  s->rng = 12345;
}

static void synth_free(synth *s) {
  free(s->rgb); free(s->alpha);
  for (int i = 0; i < 4; i++) free(s->state[i]);
}

/* Frame t: background panning, disc at cx(t); soft = edge width of the matte in pixels. */
static void synth_frame(synth *s, int t, float soft) {
  const int w = s->w, h = s->h;
  const float cx = w * 0.3f + 40.0f * sinf(t * 0.05f), cy = h * 0.55f, r = h * 0.25f;
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++) {
      float bg = 0.45f + 0.2f * sinf((x + t) * 0.07f) * cosf(y * 0.05f) + 0.1f * sinf((x + t) * 0.31f + y * 0.17f);
      float d = hypotf(x - cx, y - cy);
      float a = (r - d) / soft + 0.5f;
      a = a < 0 ? 0 : a > 1 ? 1 : a;
      float v = bg * (1 - a) + 0.8f * a + ((int)(xs64(&s->rng) % 7) - 3) / 255.0f;
      v = v < 0 ? 0 : v > 1 ? 1 : v;
      unsigned char *p = s->rgb + ((size_t)y * w + x) * 3;
      p[0] = (unsigned char)(v * 255); p[1] = (unsigned char)(v * 240); p[2] = (unsigned char)(v * 220);
      s->alpha[(size_t)y * w + x] = a;
    }
  for (int i = 0; i < 4; i++)
    for (size_t k = 0; k < s->len[i]; k++)
      s->state[i][k] = 0.9f * s->state[i][k] + 0.1f * sinf((float)k * 0.01f + t * 0.1f + i);
}

static hr_frame synth_hr_frame(const synth *s, int t) {
  hr_frame f = { .fmt = HR_PIX_RGB24, .width = s->w, .height = s->h, .planes = { s->rgb },
                 .strides = { (ptrdiff_t)s->w * 3 }, .ts_ns = (int64_t)t * 33333333 };
  return f;
}

static hr_status observe(hr_health *hm, synth *s, const float *alpha, hr_health_verdict *v) {
  const float *const st[4] = { s->state[0], s->state[1], s->state[2], s->state[3] };
  return hr_health_observe_output(hm, alpha ? alpha : s->alpha, s->w, s->h, st, s->len, 4, v);
}

/* ---- callback log ---- */
typedef struct cblog { int n; hr_health_state from[64], to[64]; char last_reason[HR_HEALTH_REASON_LEN]; } cblog;
static void cb(const hr_health_transition *t, void *user) {
  cblog *l = user;
  if (l->n < 64) { l->from[l->n] = t->from; l->to[l->n] = t->to; }
  l->n++;
  snprintf(l->last_reason, sizeof l->last_reason, "%s", t->reason);
  if (getenv("HR_HEALTH_VERBOSE")) printf("  [%lld] %s -> %s: %s\n", (long long)t->frame, hr_health_state_name(t->from), hr_health_state_name(t->to), t->reason);
}

static hr_health *mk(synth *s, cblog *log) {
  hr_health *hm = NULL;
  char err[200];
  hr_status st = hr_health_create(NULL, s->w, s->h, &hm, err, sizeof err);
  CHECKF(st == HR_OK, "%s", err);
  if (log) { memset(log, 0, sizeof *log); hr_health_set_callback(hm, cb, log); }
  return hm;
}

/* Run frames [t0, t1) clean; returns the last verdict. */
static hr_health_verdict run_clean(hr_health *hm, synth *s, int t0, int t1) {
  hr_health_verdict v;
  memset(&v, 0, sizeof v);
  for (int t = t0; t < t1; t++) {
    synth_frame(s, t, 3.0f);
    hr_frame f = synth_hr_frame(s, t);
    CHECK(hr_health_observe_input(hm, &f) == HR_OK);
    CHECK(observe(hm, s, NULL, &v) == HR_OK);
  }
  return v;
}

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec * 1e-3;
}

static int cmp_d(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return x < y ? -1 : x > y; }

/* ------------------------------------------------------------------------------------------- */

static void test_basics(void) {
  hr_health_params p;
  hr_health_params_default(&p);
  CHECK_EQ_INT(p.thumb_width, 64);
  CHECK_EQ_INT(p.warmup_frames, 10);
  hr_health *hm = (hr_health *)1;
  char err[200] = "";
  p.uncertain_max = 0;
  CHECK(hr_health_create(&p, 64, 64, &hm, err, sizeof err) == HR_EINVAL);
  CHECK(hm == NULL);
  CHECK(strstr(err, "uncertain_max") != NULL);
  hr_health_params_default(&p);
  CHECK(p.motion_level == 0.02f);
  p.motion_level = 0;
  CHECK(hr_health_create(&p, 64, 64, &hm, err, sizeof err) == HR_EINVAL);
  CHECK(strstr(err, "motion_level") != NULL);
  hr_health_params_default(&p);
  CHECK(hr_health_create(&p, 0, 64, &hm, err, sizeof err) == HR_EINVAL);
  CHECK(hr_health_create(&p, 64, 64, NULL, err, sizeof err) == HR_EINVAL);
  hr_health_destroy(NULL);
  CHECK(strcmp(hr_health_state_name(HR_HEALTH_RECALIBRATING), "recalibrating") == 0);
  CHECK(strcmp(hr_health_state_name((hr_health_state)99), "unknown") == 0);
  CHECK(strcmp(hr_health_cause_name(HR_HEALTH_CAUSE_INPUT_FROZEN), "input-frozen") == 0);
  CHECK(strcmp(hr_health_cause_name(3), "unknown") == 0);
  CHECK(strcmp(hr_health_event_name(HR_HEALTH_EVENT_GOV_SHED), "gov-shed") == 0);
  CHECK(hr_health_get_state(NULL) == HR_HEALTH_FAILED);
  /* bad calls leave the monitor usable */
  CHECK(hr_health_create(NULL, 32, 32, &hm, err, sizeof err) == HR_OK);
  float a[32 * 32] = { 0 };
  CHECK(hr_health_observe_output(hm, NULL, 32, 32, NULL, NULL, 0, NULL) == HR_EINVAL);
  CHECK(hr_health_observe_output(hm, a, 32, 32, NULL, NULL, HR_HEALTH_MAX_STATE + 1, NULL) == HR_EINVAL);
  CHECK(strlen(hr_health_last_error(hm)) > 0);
  CHECK(hr_health_note_event(hm, (hr_health_event)77, NULL) == HR_EINVAL);
  hr_frame depth = { .fmt = HR_PIX_DEPTH16_MM, .width = 4, .height = 4, .planes = { a }, .strides = { 8 } };
  CHECK(hr_health_observe_input(hm, &depth) == HR_ENOTSUP);
  hr_frame bad = { .fmt = HR_PIX_RGB24, .width = 4, .height = 4, .planes = { a }, .strides = { 2 } };
  CHECK(hr_health_observe_input(hm, &bad) == HR_EINVAL);
  CHECK(strstr(hr_health_last_error(hm), "stride") != NULL);
  hr_health_verdict v;
  CHECK(hr_health_observe_output(hm, a, 32, 32, NULL, NULL, 0, &v) == HR_OK);   /* no state, no input: fine */
  CHECK_EQ_INT(v.state, HR_HEALTH_WARMING_UP);
  CHECK_EQ_INT(v.signals.input_mad * 2, -2);
  /* a caller-made thumbnail */
  float th[64 * 48];
  for (int i = 0; i < 64 * 48; i++) th[i] = 0.01f;
  CHECK(hr_health_observe_thumb(hm, th, 32, 48, -1.0f, 0) == HR_EINVAL);
  for (int k = 0; k < 4; k++) CHECK(hr_health_observe_thumb(hm, th, 64, 48, -1.0f, k) == HR_OK);
  CHECK(hr_health_observe_output(hm, a, 32, 32, NULL, NULL, 0, &v) == HR_OK);
  CHECK_EQ_INT(v.state, HR_HEALTH_DEGRADED);   /* black and frozen, even while warming up */
  CHECK((v.causes & HR_HEALTH_CAUSE_INPUT_BLACK) && (v.causes & HR_HEALTH_CAUSE_INPUT_FROZEN));
  CHECK(!(v.causes & HR_HEALTH_CAUSE_INPUT_NOISE));   /* hf unknown: noise not judged */
  CHECK_EQ_INT(v.signals.input_frame, 4);
  CHECK_EQ_INT(v.signals.ts_ns, 3);
  hr_health_verdict g;
  hr_health_get(hm, &g);
  CHECK(g.state == v.state && g.causes == v.causes && g.action == HR_HEALTH_ACTION_NONE && !g.changed);
  CHECK(strcmp(g.reason, v.reason) == 0 && strstr(g.reason, "input black") == g.reason);
  CHECK(strstr(g.reason, "; also: input-frozen") != NULL);
  hr_health_destroy(hm);

  /* an unbounded state: runaway is an RMS jump against the running average */
  hr_health_params pu;
  hr_health_params_default(&pu);
  pu.state_bound = 0;
  CHECK(hr_health_create(&pu, 32, 32, &hm, err, sizeof err) == HR_OK);
  float x[256];
  const float *const xs[1] = { x };
  const size_t xl[1] = { 256 };
  for (int t = 0; t < 30; t++) {
    for (int i = 0; i < 256; i++) x[i] = (t == 25 ? 50.0f : 2.0f) * sinf(i * 0.1f + t);
    CHECK(hr_health_observe_output(hm, a, 32, 32, xs, xl, 1, &v) == HR_OK);
    CHECK_EQ_INT(v.action, t == 25 ? HR_HEALTH_ACTION_RESET_STATE : HR_HEALTH_ACTION_NONE);
  }
  hr_health_destroy(hm);
}

static void test_fault_parse(void) {
  hr_fault_spec f[HR_FAULT_MAX];
  int n = -1;
  char err[300];
  CHECK(hr_fault_parse("", f, HR_FAULT_MAX, &n, err, sizeof err) == HR_OK && n == 0);
  CHECK(hr_fault_parse("nan-state@10", f, HR_FAULT_MAX, &n, err, sizeof err) == HR_OK);
  CHECK(n == 1 && f[0].kind == HR_FAULT_NAN_STATE && f[0].frame == 10 && f[0].len == 1);
  CHECK(hr_fault_parse(" black-input@5:20 , Freeze-Input@100:3,memory-pressure@0:1000", f, HR_FAULT_MAX, &n, err, sizeof err) == HR_OK);
  CHECK(n == 3 && f[0].kind == HR_FAULT_BLACK_INPUT && f[0].len == 20 && f[1].kind == HR_FAULT_FREEZE_INPUT &&
        f[1].frame == 100 && f[2].kind == HR_FAULT_MEMORY_PRESSURE && f[2].len == 1000);
  n = 7;
  CHECK(hr_fault_parse("blak-input@5", f, HR_FAULT_MAX, &n, err, sizeof err) == HR_EINVAL && n == 7);
  CHECK(strstr(err, "blak-input") && strstr(err, "noise-input"));
  CHECK(hr_fault_parse("nan-state", f, HR_FAULT_MAX, &n, err, sizeof err) == HR_EINVAL);
  CHECK(hr_fault_parse("nan-state@", f, HR_FAULT_MAX, &n, err, sizeof err) == HR_EINVAL);
  CHECK(hr_fault_parse("nan-state@-1", f, HR_FAULT_MAX, &n, err, sizeof err) == HR_EINVAL);
  CHECK(hr_fault_parse("nan-state@3:0", f, HR_FAULT_MAX, &n, err, sizeof err) == HR_EINVAL);
  CHECK(hr_fault_parse("nan-state@3:x", f, HR_FAULT_MAX, &n, err, sizeof err) == HR_EINVAL);
  CHECK(hr_fault_parse("nan-state@3,", f, HR_FAULT_MAX, &n, err, sizeof err) == HR_EINVAL);
  CHECK(hr_fault_parse("nan-state@99999999999999999999", f, HR_FAULT_MAX, &n, err, sizeof err) == HR_EINVAL);
  CHECK(hr_fault_parse("nan-state@1,nan-state@2,nan-state@3", f, 2, &n, err, sizeof err) == HR_ERANGE);
  CHECK(hr_fault_parse(NULL, f, HR_FAULT_MAX, &n, err, sizeof err) == HR_EINVAL);
  /* random specs from the grammar's alphabet: never crash (ASan), results always sane */
  {
    const char alpha[] = "nan-stateblackfreezeinputnoisewhitestuckoutputmemorypressure@:,0123456789 \t";
    uint64_t r = 5;
    char spec[64];
    for (int it = 0; it < 20000; it++) {
      int len = (int)(xs64(&r) % 48);
      for (int i = 0; i < len; i++) spec[i] = alpha[xs64(&r) % (sizeof alpha - 1)];
      spec[len] = 0;
      if (it % 4 == 0) snprintf(spec, sizeof spec, "%s@%d:%d", hr_fault_kind_name((hr_fault_kind)(xs64(&r) % 9)),
                                (int)(xs64(&r) % 1000) - 5, (int)(xs64(&r) % 50) - 2);
      n = -1;
      hr_status st = hr_fault_parse(spec, f, HR_FAULT_MAX, &n, err, sizeof err);
      CHECK(st == HR_OK || st == HR_EINVAL || st == HR_ERANGE);
      if (st == HR_OK)
        for (int i = 0; i < n; i++) CHECK(f[i].kind > HR_FAULT_NONE && f[i].kind < HR_FAULT_N_KINDS && f[i].len >= 1 && f[i].frame >= 0);
      else
        CHECK(n == -1 && strlen(err) > 0);
    }
  }

  hr_fault_injector *inj = NULL;
  CHECK(hr_fault_create("black-input@5:3,nan-state@6,stuck-output@20:2", 1, &inj, err, sizeof err) == HR_OK);
  CHECK(hr_fault_active(inj, 4) == 0);
  CHECK(hr_fault_active(inj, 5) == HR_FAULT_BIT(HR_FAULT_BLACK_INPUT));
  CHECK(hr_fault_active(inj, 6) == (HR_FAULT_BIT(HR_FAULT_BLACK_INPUT) | HR_FAULT_BIT(HR_FAULT_NAN_STATE)));
  CHECK(hr_fault_active(inj, 8) == 0);
  char buf[80];
  CHECK(strcmp(hr_fault_describe(inj, 6, buf, sizeof buf), "nan-state, black-input") == 0);
  CHECK(strcmp(hr_fault_describe(inj, 9, buf, sizeof buf), "") == 0);
  CHECK(hr_fault_active(NULL, 5) == 0);
  /* state side */
  float st0[200], st1[100];
  for (int i = 0; i < 200; i++) st0[i] = 0.5f;
  for (int i = 0; i < 100; i++) st1[i] = 0.5f;
  float *const st[2] = { st0, st1 };
  const size_t len[2] = { 200, 100 };
  CHECK_EQ_INT(hr_fault_apply_state(inj, 5, st, len, 2), -1);
  CHECK_EQ_INT(hr_fault_apply_state(inj, 6, st, len, 2), 0);   /* 6 mod 2 */
  CHECK(isnan(st0[0]) && isnan(st0[64]) && isnan(st0[192]) && !isnan(st0[1]));
  /* output side: stuck returns the alpha of the frame before */
  float a19[4] = { 0.1f, 0.2f, 0.3f, 0.4f }, a20[4] = { 0.9f, 0.9f, 0.9f, 0.9f };
  CHECK(hr_fault_apply_output(inj, 18, a19, 2, 2) == a19);
  CHECK(hr_fault_apply_output(inj, 19, a19, 2, 2) == a19);
  const float *o = hr_fault_apply_output(inj, 20, a20, 2, 2);
  CHECK(o != a20 && o[2] == 0.3f);
  CHECK(hr_fault_apply_output(inj, 21, a20, 2, 2)[0] == 0.1f);
  CHECK(hr_fault_apply_output(inj, 22, a20, 2, 2) == a20);
  hr_fault_destroy(inj);
  hr_fault_destroy(NULL);
}

/* One luma image in every format: thumbnails agree; input faults do what they say. */
static void test_thumb_formats(void) {
  const int W = 320, H = 240, TW = 64, TH = 48;
  unsigned char *y8 = malloc(W * H), *rgb = malloc(W * H * 3), *bgra = malloc(W * H * 4), *yv = malloc(W * H);
  unsigned char *uv = malloc(W * H / 2), *u = malloc(W * H / 4), *vv = malloc(W * H / 4);
  float *rgbf = malloc(sizeof(float) * W * H * 3);
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++) {
      int v = (int)(128 + 100 * sinf(x * 0.05f) * cosf(y * 0.07f));
      size_t i = (size_t)y * W + x;
      y8[i] = (unsigned char)v;
      yv[i] = (unsigned char)(16 + (v * 219 + 127) / 255);
      rgb[3 * i] = rgb[3 * i + 1] = rgb[3 * i + 2] = (unsigned char)v;
      bgra[4 * i] = bgra[4 * i + 1] = bgra[4 * i + 2] = (unsigned char)v; bgra[4 * i + 3] = 255;
      rgbf[3 * i] = rgbf[3 * i + 1] = rgbf[3 * i + 2] = v / 255.0f;
    }
  memset(uv, 128, W * H / 2); memset(u, 128, W * H / 4); memset(vv, 128, W * H / 4);
  hr_frame fr[] = {
    { .fmt = HR_PIX_GRAY8, .width = W, .height = H, .planes = { y8 }, .strides = { W } },
    { .fmt = HR_PIX_RGB24, .width = W, .height = H, .planes = { rgb }, .strides = { W * 3 } },
    { .fmt = HR_PIX_BGRA, .width = W, .height = H, .planes = { bgra }, .strides = { W * 4 } },
    { .fmt = HR_PIX_RGBF32, .width = W, .height = H, .planes = { rgbf }, .strides = { W * 12 } },
    { .fmt = HR_PIX_NV12_FULL, .width = W, .height = H, .planes = { y8, uv }, .strides = { W, W } },
    { .fmt = HR_PIX_NV12_VIDEO, .width = W, .height = H, .planes = { yv, uv }, .strides = { W, W } },
    { .fmt = HR_PIX_I420_FULL, .width = W, .height = H, .planes = { y8, u, vv }, .strides = { W, W / 2, W / 2 } },
    { .fmt = HR_PIX_I420_VIDEO, .width = W, .height = H, .planes = { yv, u, vv }, .strides = { W, W / 2, W / 2 } },
  };
  float ref[64 * 48], th[64 * 48], hf0 = 0, hf;
  CHECK(hr_health_thumb_from_frame(&fr[0], ref, TW, TH, &hf0) == HR_OK);
  CHECK(hf0 > 0.005f && hf0 < 0.05f);
  for (size_t k = 1; k < sizeof fr / sizeof fr[0]; k++) {
    CHECK(hr_health_thumb_from_frame(&fr[k], th, TW, TH, &hf) == HR_OK);
    float md = 0;
    for (int i = 0; i < TW * TH; i++) md = fmaxf(md, fabsf(th[i] - ref[i]));
    CHECKF(md <= 3.0f / 255.0f, "%s thumbnail differs by %g", hr_pixfmt_name(fr[k].fmt), md);
    CHECKF(fabsf(hf - hf0) < 0.003f, "%s hf %g vs %g", hr_pixfmt_name(fr[k].fmt), hf, hf0);
  }
  CHECK(hr_health_thumb_from_frame(&fr[0], th, 0, TH, &hf) == HR_EINVAL);
  CHECK(hr_health_thumb_from_frame(&fr[0], th, 257, TH, &hf) == HR_EINVAL);
  /* tiny frames: fewer pixels than cells */
  hr_frame tiny = { .fmt = HR_PIX_GRAY8, .width = 1, .height = 1, .planes = { y8 }, .strides = { 1 } };
  CHECK(hr_health_thumb_from_frame(&tiny, th, TW, TH, &hf) == HR_OK && hf < 0);

  /* input faults on every format: black is dark, white bright, noise noisy, freeze repeats */
  hr_fault_injector *inj = NULL;
  CHECK(hr_fault_create("black-input@1,white-input@2,noise-input@3,freeze-input@5:2", 7, &inj, NULL, 0) == HR_OK);
  for (size_t k = 0; k < sizeof fr / sizeof fr[0]; k++) {
    hr_frame f = fr[k];
    const char *nm = hr_pixfmt_name(f.fmt);
    CHECK(hr_fault_apply_input(inj, 0, &f) == HR_OK);
    CHECK(hr_fault_apply_input(inj, 1, &f) == HR_OK);
    hr_health_thumb_from_frame(&f, th, TW, TH, &hf);
    float mx = 0; for (int i = 0; i < TW * TH; i++) mx = fmaxf(mx, th[i]);
    CHECKF(mx < 0.01f, "%s black max %g", nm, mx);
    CHECK(hr_fault_apply_input(inj, 2, &f) == HR_OK);
    hr_health_thumb_from_frame(&f, th, TW, TH, &hf);
    float mn = 1; for (int i = 0; i < TW * TH; i++) mn = fminf(mn, th[i]);
    CHECKF(mn > 0.99f, "%s white min %g", nm, mn);
    CHECK(hr_fault_apply_input(inj, 3, &f) == HR_OK);
    hr_health_thumb_from_frame(&f, th, TW, TH, &hf);
    CHECKF(hf > 0.18f, "%s noise hf %g", nm, hf);
    float keep[64 * 48];
    memcpy(keep, th, sizeof keep);
    CHECK(hr_fault_apply_input(inj, 4, &f) == HR_OK);   /* frame 4 unchanged (noise), kept for the freeze */
    hr_health_thumb_from_frame(&f, th, TW, TH, &hf);
    CHECKF(memcmp(keep, th, sizeof keep) == 0, "%s frame 4 changed", nm);
    /* scribble over the frame like a new capture, then the freeze must restore frame 4 */
    if (f.fmt == HR_PIX_RGBF32) memset((void *)f.planes[0], 0, sizeof(float) * W * H * 3);
    else memset((void *)f.planes[0], 77, (size_t)f.strides[0] * H);
    CHECK(hr_fault_apply_input(inj, 5, &f) == HR_OK);
    hr_health_thumb_from_frame(&f, th, TW, TH, &hf);
    CHECKF(memcmp(keep, th, sizeof keep) == 0, "%s freeze did not replay frame 4", nm);
    /* restore the clean image for the next format (planes are shared between formats) */
    fr[k] = f;
  }
  /* noise is reproducible: same seed and frame, same bytes */
  memset(y8, 0, W * H);
  hr_frame g = fr[0];
  hr_fault_apply_input(inj, 3, &g);
  unsigned char *copy = malloc(W * H);
  memcpy(copy, y8, W * H);
  hr_fault_injector *inj2 = NULL;
  CHECK(hr_fault_create("noise-input@3", 7, &inj2, NULL, 0) == HR_OK);
  hr_fault_apply_input(inj2, 3, &g);
  CHECK(memcmp(copy, y8, W * H) == 0);
  hr_fault_destroy(inj2);
  hr_fault_destroy(inj);
  free(copy);
  free(y8); free(rgb); free(bgra); free(yv); free(uv); free(u); free(vv); free(rgbf);
}

static void test_clean_and_soft_causes(void) {
  synth s;
  synth_init(&s, 320, 240);
  cblog log;
  hr_health *hm = mk(&s, &log);
  hr_health_verdict v = run_clean(hm, &s, 0, 9);
  CHECK_EQ_INT(v.state, HR_HEALTH_WARMING_UP);
  CHECK(strstr(v.reason, "warming up") != NULL);
  v = run_clean(hm, &s, 9, 200);
  CHECK_EQ_INT(v.state, HR_HEALTH_HEALTHY);
  CHECK_EQ_INT(log.n, 1);
  CHECK(log.from[0] == HR_HEALTH_WARMING_UP && log.to[0] == HR_HEALTH_HEALTHY);
  CHECKF(v.confidence > 0.85f, "confidence %g", v.confidence);
  CHECK(strcmp(v.reason, "healthy") == 0);
  CHECK(v.signals.input_mad > 0.004f);   /* the pan moves the input */
  CHECK(v.signals.uncertain_share > 0.0f && v.signals.uncertain_share < 0.05f);
  CHECK(v.signals.state_rms[0] > 0.0f && v.signals.state_sat[0] < 0.5f);
  CHECK_EQ_INT(v.signals.alpha_nonfinite + v.signals.state_nonfinite, 0);

  /* low confidence: a very soft matte (40 px edges) for 40 frames */
  int t_deg = -1, t_back = -1;
  for (int t = 200; t < 300; t++) {
    synth_frame(&s, t, t < 240 ? 80.0f : 3.0f);
    hr_frame f = synth_hr_frame(&s, t);
    hr_health_observe_input(hm, &f);
    observe(hm, &s, NULL, &v);
    if (t_deg < 0 && v.state == HR_HEALTH_DEGRADED) {
      t_deg = t;
      CHECKF(strstr(v.reason, "low confidence") != NULL, "%s", v.reason);
      CHECK(v.causes & HR_HEALTH_CAUSE_LOW_CONFIDENCE);
      CHECKF(v.confidence < 0.6f, "confidence %g", v.confidence);
    }
    if (t >= 240 && t_back < 0 && v.state == HR_HEALTH_HEALTHY) t_back = t;
  }
  printf("low confidence: degraded after %d frames, healthy %d frames after it ended\n", t_deg - 200 + 1, t_back - 240 + 1);
  CHECK(t_deg >= 207 && t_deg <= 210);   /* 8 of 10 */
  CHECK(t_back > 240 && t_back <= 240 + 30);

  /* flicker: every other frame the matte vanishes */
  static float empty[320 * 240];
  t_deg = t_back = -1;
  for (int t = 300; t < 400; t++) {
    synth_frame(&s, t, 3.0f);
    hr_frame f = synth_hr_frame(&s, t);
    hr_health_observe_input(hm, &f);
    observe(hm, &s, (t < 330 && (t & 1)) ? empty : NULL, &v);
    if (t_deg < 0 && v.state == HR_HEALTH_DEGRADED) {
      t_deg = t;
      CHECKF(strstr(v.reason, "temporal consistency") != NULL, "%s", v.reason);
    }
    if (t >= 330 && t_back < 0 && v.state == HR_HEALTH_HEALTHY) t_back = t;
  }
  printf("flicker: degraded after %d frames, healthy %d frames after it ended\n", t_deg - 300 + 1, t_back - 330 + 1);
  CHECK(t_deg >= 300 && t_deg < 312);
  CHECK(t_back > 330 && t_back <= 330 + 30);

  /* a scene cut with its event is not an inconsistency */
  log.n = 0;
  for (int t = 400; t < 440; t++) {
    synth_frame(&s, t, 3.0f);
    if (t >= 420) for (int i = 0; i < 320 * 240; i++) s.alpha[i] = 1.0f - s.alpha[i];   /* a different scene */
    hr_frame f = synth_hr_frame(&s, t);
    hr_health_observe_input(hm, &f);
    if (t == 420) hr_health_note_session_events(hm, HR_EVENT_SCENE_CUT);
    observe(hm, &s, NULL, &v);
    CHECK(!(v.signals.flags & HR_HEALTH_CAUSE_INCONSISTENT));
  }
  CHECK_EQ_INT(log.n, 0);
  CHECK_EQ_INT(v.state, HR_HEALTH_HEALTHY);
  hr_health_destroy(hm);
  synth_free(&s);
}

static void test_events(void) {
  synth s;
  synth_init(&s, 320, 240);
  cblog log;
  hr_health *hm = mk(&s, &log);
  hr_health_verdict v = run_clean(hm, &s, 0, 30);
  CHECK_EQ_INT(v.state, HR_HEALTH_HEALTHY);

  /* reset -> recalibrating -> healthy after settle_frames consistent frames */
  hr_health_note_event(hm, HR_HEALTH_EVENT_STATE_RESET, "user");
  CHECK_EQ_INT(hr_health_get_state(hm), HR_HEALTH_RECALIBRATING);
  CHECK(strstr(hr_health_reason(hm), "state reset: user") != NULL);
  int n = 0;
  for (int t = 30; t < 60 && hr_health_get_state(hm) == HR_HEALTH_RECALIBRATING; t++, n++) run_clean(hm, &s, t, t + 1);
  printf("reset: recalibrated in %d frames\n", n);
  CHECK_EQ_INT(n, 9);   /* the first frame has no comparable past, then 8 consistent ones */
  CHECK_EQ_INT(hr_health_get_state(hm), HR_HEALTH_HEALTHY);

  /* replan to a new size (the caller forgets to say): recalibrating, then healthy at the new size */
  synth s2;
  synth_init(&s2, 256, 144);
  run_clean(hm, &s2, 60, 61);
  CHECK_EQ_INT(hr_health_get_state(hm), HR_HEALTH_RECALIBRATING);
  CHECK(strstr(hr_health_reason(hm), "alpha size change 320x240 -> 256x144") != NULL);
  v = run_clean(hm, &s2, 61, 80);
  CHECK_EQ_INT(v.state, HR_HEALTH_HEALTHY);
  CHECK_EQ_INT(v.signals.n_samples, 256 * 144);
  hr_health_note_session_events(hm, HR_EVENT_REPLANNED | HR_EVENT_STATE_RESET);
  CHECK(strstr(hr_health_reason(hm), "replan") != NULL);
  run_clean(hm, &s2, 80, 100);
  synth_free(&s2);
  v = run_clean(hm, &s, 100, 120);
  CHECK_EQ_INT(v.state, HR_HEALTH_HEALTHY);

  /* governor: suspend -> SUSPENDED; resume -> RECALIBRATING -> HEALTHY */
  hr_health_note_event(hm, HR_HEALTH_EVENT_GOV_SUSPEND, "headroom 12 MB < critical 16 MB");
  CHECK_EQ_INT(hr_health_get_state(hm), HR_HEALTH_SUSPENDED);
  CHECK(strstr(hr_health_reason(hm), "headroom 12 MB") != NULL);
  hr_health_note_event(hm, HR_HEALTH_EVENT_STATE_RESET, NULL);   /* stays suspended */
  CHECK_EQ_INT(hr_health_get_state(hm), HR_HEALTH_SUSPENDED);
  hr_health_note_event(hm, HR_HEALTH_EVENT_GOV_RESUME, NULL);
  CHECK_EQ_INT(hr_health_get_state(hm), HR_HEALTH_RECALIBRATING);
  v = run_clean(hm, &s, 140, 155);
  CHECK_EQ_INT(v.state, HR_HEALTH_HEALTHY);

  /* governor shed: degraded while at reduced quality, healthy recover_frames after restore */
  hr_health_note_event(hm, HR_HEALTH_EVENT_GOV_SHED, "rung 1 of 3");
  v = run_clean(hm, &s, 155, 156);
  CHECK_EQ_INT(v.state, HR_HEALTH_DEGRADED);
  CHECKF(strstr(v.reason, "quality reduced by the memory governor: rung 1 of 3") != NULL, "%s", v.reason);
  v = run_clean(hm, &s, 156, 200);
  CHECK_EQ_INT(v.state, HR_HEALTH_DEGRADED);
  hr_health_note_event(hm, HR_HEALTH_EVENT_GOV_RESTORED, NULL);
  v = run_clean(hm, &s, 200, 209);
  CHECK_EQ_INT(v.state, HR_HEALTH_DEGRADED);
  CHECK(strstr(v.reason, "recovering") != NULL);
  v = run_clean(hm, &s, 209, 210);
  CHECK_EQ_INT(v.state, HR_HEALTH_HEALTHY);

  /* depth misaligned on every third frame (10 of 30): degraded; aligned again: healthy */
  int t_deg = -1, t_back = -1;
  for (int t = 210; t < 320; t++) {
    if (t < 250 && t % 3 == 0) hr_health_note_event(hm, HR_HEALTH_EVENT_DEPTH_MISALIGNED, NULL);
    v = run_clean(hm, &s, t, t + 1);
    if (t_deg < 0 && v.state == HR_HEALTH_DEGRADED) { t_deg = t; CHECKF(strstr(v.reason, "depth misaligned on 5 of the last 30") != NULL, "%s", v.reason); }
    if (t >= 250 && t_back < 0 && v.state == HR_HEALTH_HEALTHY) t_back = t;
  }
  CHECK(t_deg > 0 && t_back > 0);
  printf("depth misaligned 1 in 3: degraded after %d frames, healthy %d frames after it ended\n", t_deg - 210 + 1, t_back - 250 + 1);
  hr_health_destroy(hm);
  synth_free(&s);
}

/* The vectorised passes against plain loops: RMS and max exact, every NaN/Inf found wherever it is
 * (sampled cache line or not, tail or not), in alpha and state. */
static void test_passes_exact(void) {
  const size_t lens[] = { 1, 3, 63, 64, 65, 127, 1000, 8191, 8192, 8193, 100003 };
  uint64_t r = 77;
  hr_health *hm = NULL;
  float a[17 * 13];
  for (int i = 0; i < 17 * 13; i++) a[i] = 0.5f;
  CHECK(hr_health_create(NULL, 17, 13, &hm, NULL, 0) == HR_OK);
  for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++) {
    const size_t n = lens[li];
    float *x = malloc(n * sizeof(float));
    double ss = 0;
    float mx = 0;
    for (size_t i = 0; i < n; i++) {
      x[i] = ((float)(xs64(&r) % 20001) - 10000.0f) / 10000.0f;
      ss += (double)x[i] * x[i];
      mx = fmaxf(mx, fabsf(x[i]));
    }
    const float *const st[1] = { x };
    const size_t len[1] = { n };
    hr_health_verdict v;
    CHECK(hr_health_observe_output(hm, a, 17, 13, st, len, 1, &v) == HR_OK);
    CHECKF(fabs(v.signals.state_rms[0] - sqrt(ss / n)) <= 1e-5 * sqrt(ss / n) + 1e-7, "n %zu rms %g vs %g", n, v.signals.state_rms[0], sqrt(ss / n));
    CHECKF(v.signals.state_maxabs[0] == mx, "n %zu max %g vs %g", n, v.signals.state_maxabs[0], mx);
    CHECK_EQ_INT(v.signals.state_nonfinite, 0);
    /* one NaN or Inf at each of a few positions */
    const size_t pos[] = { 0, n / 2, n - 1, 17 % n, 33 % n };
    for (size_t k = 0; k < sizeof pos / sizeof pos[0]; k++) {
      const float keep = x[pos[k]];
      x[pos[k]] = (k & 1) ? -INFINITY : NAN;
      CHECK(hr_health_observe_output(hm, a, 17, 13, st, len, 1, &v) == HR_OK);
      CHECKF(v.signals.state_nonfinite == 1, "n %zu pos %zu: %lld", n, pos[k], (long long)v.signals.state_nonfinite);
      x[pos[k]] = keep;
      hr_health_reset(hm);   /* stay clear of FAILED */
    }
    free(x);
  }
  /* alpha: every position of a 17x13 matte (rows not sampled included) */
  for (int i = 0; i < 17 * 13; i++) {
    a[i] = (i & 1) ? NAN : INFINITY;
    hr_health_verdict v;
    CHECK(hr_health_observe_output(hm, a, 17, 13, NULL, NULL, 0, &v) == HR_OK);
    CHECKF(v.signals.alpha_nonfinite == 1 && v.action == HR_HEALTH_ACTION_RESET_STATE, "alpha NaN at %d", i);
    a[i] = 0.5f;
    hr_health_reset(hm);
  }
  hr_health_destroy(hm);
  /* a big matte with its NaN on a row the subsample skips */
  const int W = 1920, H = 1440;
  float *big = calloc((size_t)W * H, sizeof(float));
  CHECK(hr_health_create(NULL, W, H, &hm, NULL, 0) == HR_OK);
  big[(size_t)1 * W + 1] = NAN;
  hr_health_verdict v;
  CHECK(hr_health_observe_output(hm, big, W, H, NULL, NULL, 0, &v) == HR_OK);
  CHECK_EQ_INT(v.signals.alpha_nonfinite, 1);
  CHECK_EQ_INT(v.signals.sample_stride, 8);
  hr_health_destroy(hm);
  free(big);
}

static void test_hard_faults(void) {
  synth s;
  synth_init(&s, 320, 240);
  cblog log;
  hr_health *hm = mk(&s, &log);
  const char *names[4] = { "r1", "r2", "r3", "r4" };
  (void)names;
  hr_health_verdict v = run_clean(hm, &s, 0, 40);

  /* NaN in alpha only: reset requested, output flagged */
  synth_frame(&s, 40, 3.0f);
  s.alpha[12345] = NAN;
  s.alpha[54321] = INFINITY;
  hr_frame f = synth_hr_frame(&s, 40);
  hr_health_observe_input(hm, &f);
  observe(hm, &s, NULL, &v);
  CHECK_EQ_INT(v.action, HR_HEALTH_ACTION_RESET_STATE);
  CHECK_EQ_INT(v.state, HR_HEALTH_RECALIBRATING);
  CHECK_EQ_INT(v.signals.alpha_nonfinite, 2);
  CHECK(!v.output_ok);
  CHECK(v.confidence < 0.8f);
  CHECKF(strstr(v.reason, "NaN/Inf in alpha (2 values)") != NULL, "%s", v.reason);
  hr_health_note_event(hm, HR_HEALTH_EVENT_STATE_RESET, NULL);
  CHECK(strstr(hr_health_reason(hm), "NaN/Inf in alpha") != NULL);   /* the cause is kept */
  v = run_clean(hm, &s, 41, 60);
  CHECK_EQ_INT(v.state, HR_HEALTH_HEALTHY);
  CHECK_EQ_INT(v.signals.resets_in_window, 1);

  /* runaway: state far beyond the ConvGRU's bound */
  synth_frame(&s, 60, 3.0f);
  for (size_t k = 0; k < s.len[2]; k++) s.state[2][k] *= 40.0f;
  f = synth_hr_frame(&s, 60);
  hr_health_observe_input(hm, &f);
  observe(hm, &s, NULL, &v);
  CHECK_EQ_INT(v.action, HR_HEALTH_ACTION_RESET_STATE);
  CHECKF(strstr(v.reason, "runaway state state[2]") != NULL, "%s", v.reason);
  for (size_t k = 0; k < s.len[2]; k++) s.state[2][k] = 0;
  v = run_clean(hm, &s, 61, 80);
  CHECK_EQ_INT(v.state, HR_HEALTH_HEALTHY);

  /* state saturation (all of r4 at +-1) for a while */
  int t_deg = -1;
  for (int t = 80; t < 100; t++) {
    synth_frame(&s, t, 3.0f);
    for (size_t k = 0; k < s.len[3]; k++) s.state[3][k] = (k & 1) ? 1.0f : -1.0f;
    f = synth_hr_frame(&s, t);
    hr_health_observe_input(hm, &f);
    observe(hm, &s, NULL, &v);
    if (t_deg < 0 && v.state == HR_HEALTH_DEGRADED) { t_deg = t; CHECKF(strstr(v.reason, "state saturated: 100% of state[3]") != NULL, "%s", v.reason); }
  }
  CHECK(t_deg == 87);
  for (size_t k = 0; k < s.len[3]; k++) s.state[3][k] = 0;
  v = run_clean(hm, &s, 100, 130);
  CHECK_EQ_INT(v.state, HR_HEALTH_HEALTHY);

  /* repeated NaN in state: three resets, then FAILED; only hr_health_reset leaves it */
  int resets = 0;
  for (int t = 130; t < 140; t++) {
    synth_frame(&s, t, 3.0f);
    s.state[1][7] = NAN;
    f = synth_hr_frame(&s, t);
    hr_health_observe_input(hm, &f);
    observe(hm, &s, NULL, &v);
    resets += v.action == HR_HEALTH_ACTION_RESET_STATE;
    if (v.state == HR_HEALTH_FAILED) break;
  }
  CHECK_EQ_INT(resets, 1);   /* alpha NaN (frame 41) and runaway (61) were the first two in the window */
  CHECK_EQ_INT(v.state, HR_HEALTH_FAILED);
  CHECK(!v.output_ok && v.confidence == 0.0f);
  CHECKF(strstr(v.reason, "failed: NaN/Inf in state[1] (1 values) again after 3 state resets within 300 frames") != NULL, "%s", v.reason);
  for (size_t k = 0; k < s.len[1]; k++) s.state[1][k] = 0;   /* the caller rebuilds the session */
  hr_health_note_event(hm, HR_HEALTH_EVENT_STATE_RESET, NULL);
  hr_health_note_event(hm, HR_HEALTH_EVENT_GOV_SUSPEND, NULL);
  v = run_clean(hm, &s, 140, 160);
  CHECK_EQ_INT(v.state, HR_HEALTH_FAILED);
  CHECK_EQ_INT(v.action, HR_HEALTH_ACTION_NONE);
  hr_health_reset(hm);
  CHECK_EQ_INT(hr_health_get_state(hm), HR_HEALTH_WARMING_UP);
  CHECK(log.to[log.n - 1] == HR_HEALTH_WARMING_UP);
  v = run_clean(hm, &s, 160, 180);
  CHECK_EQ_INT(v.state, HR_HEALTH_HEALTHY);

  /* not settling: after a reset the output keeps flickering */
  hr_health_note_event(hm, HR_HEALTH_EVENT_STATE_RESET, NULL);
  static float empty[320 * 240];
  int t_ns = -1;
  for (int t = 180; t < 300; t++) {
    synth_frame(&s, t, 3.0f);
    f = synth_hr_frame(&s, t);
    hr_health_observe_input(hm, &f);
    observe(hm, &s, (t < 280 && (t & 1)) ? empty : NULL, &v);
    if (t_ns < 0 && v.state == HR_HEALTH_DEGRADED) {
      t_ns = t;
      CHECKF(strstr(v.reason, "not settling") != NULL, "%s", v.reason);
    }
  }
  CHECK_EQ_INT(t_ns, 180 + 89);
  CHECK_EQ_INT(v.state, HR_HEALTH_HEALTHY);
  hr_health_destroy(hm);
  synth_free(&s);
}

static void test_input_faults_synthetic(void) {
  synth s;
  synth_init(&s, 320, 240);
  cblog log;
  struct { const char *spec; int f0; uint32_t cause; } sc[] = {
    { "black-input@50:20", 50, HR_HEALTH_CAUSE_INPUT_BLACK },
    { "white-input@50:20", 50, HR_HEALTH_CAUSE_INPUT_SATURATED },
    { "noise-input@50:20", 50, HR_HEALTH_CAUSE_INPUT_NOISE },
    { "freeze-input@50:20", 50, HR_HEALTH_CAUSE_INPUT_FROZEN },
    { "stuck-output@50:20", 50, HR_HEALTH_CAUSE_STUCK_OUTPUT },
    { "black-input@3:20", 3, HR_HEALTH_CAUSE_INPUT_BLACK },   /* during warm-up */
  };
  for (size_t k = 0; k < sizeof sc / sizeof sc[0]; k++) {
    hr_health *hm = mk(&s, &log);
    hr_fault_injector *inj = NULL;
    CHECK(hr_fault_create(sc[k].spec, 1, &inj, NULL, 0) == HR_OK);
    const int f0 = sc[k].f0;
    int det = -1, back = -1;
    for (int t = 0; t < 120; t++) {
      synth_frame(&s, t, 3.0f);
      hr_frame f = synth_hr_frame(&s, t);
      hr_fault_apply_input(inj, t, &f);
      hr_health_observe_input(hm, &f);
      hr_health_verdict v;
      observe(hm, &s, hr_fault_apply_output(inj, t, s.alpha, s.w, s.h), &v);
      if (det < 0 && t >= f0 && (v.causes & sc[k].cause) && v.state == HR_HEALTH_DEGRADED) det = t - f0 + 1;
      if (det > 0 && t < f0 + 20) CHECKF(v.state == HR_HEALTH_DEGRADED, "%s: %s at %d", sc[k].spec, hr_health_state_name(v.state), t);
      if (t >= f0 + 20 && back < 0 && v.state == HR_HEALTH_HEALTHY) back = t - (f0 + 20) + 1;
    }
    printf("synthetic %-20s detected after %d frames, healthy %d frames after\n", sc[k].spec, det, back);
    CHECK(det >= 1 && det <= 5);
    CHECK(back >= 1 && back <= 30);
    hr_fault_destroy(inj);
    hr_health_destroy(hm);
  }
  synth_free(&s);
}

/* Small people in a wide shot (vtest.avi: ~30 x 80 px walking a few px a frame): a small disc moving
 * 6 px a frame over a still background. Its mask IoU from frame to frame is naturally low (~0.6),
 * but every disagreement lies where the input moved: not an inconsistency (the rule before the
 * motion map flagged every frame of it). The same disc with a second blob blinking where the input
 * is still, or with its matte vanishing every other frame, is. Stuck output is found although the
 * mean input change (in_mad) stays below stuck_input_min: the motion map sees the disc move. */
typedef struct small_scene { int w, h; unsigned char *rgb; float *alpha; uint64_t rng; } small_scene;

static void small_frame(small_scene *sc, int t, bool blink) {
  const int p = (6 * t) % 440;   /* to and fro, 6 px a frame */
  const float cx = 40.0f + (float)(p < 220 ? p : 440 - p), cy = 120.0f, r = 14.0f;   /* 616 px: 0.8% of the frame */
  for (int y = 0; y < sc->h; y++)
    for (int x = 0; x < sc->w; x++) {
      const float bg = 0.35f + 0.1f * sinf(x * 0.11f) * cosf(y * 0.07f);
      float a = (r - hypotf(x - cx, y - cy)) / 1.5f + 0.5f;
      a = a < 0 ? 0 : a > 1 ? 1 : a;
      float v = bg * (1 - a) + 0.6f * a + ((int)(xs64(&sc->rng) % 7) - 3) / 255.0f;
      v = v < 0 ? 0 : v > 1 ? 1 : v;
      unsigned char *p = sc->rgb + ((size_t)y * sc->w + x) * 3;
      p[0] = p[1] = p[2] = (unsigned char)(v * 255);
      /* the blob: in the matte only (the input shows nothing there) */
      float b = blink ? (14.0f - hypotf(x - 250.0f, y - 60.0f)) / 1.5f + 0.5f : 0.0f;
      b = b < 0 ? 0 : b > 1 ? 1 : b;
      sc->alpha[(size_t)y * sc->w + x] = a > b ? a : b;
    }
}

static void test_small_moving_masks(void) {
  small_scene sc = { 320, 240, malloc(320 * 240 * 3), malloc(sizeof(float) * 320 * 240), 7 };
  static float empty[320 * 240];
  hr_health *hm = NULL;
  CHECK(hr_health_create(NULL, sc.w, sc.h, &hm, NULL, 0) == HR_OK);
  hr_health_verdict v;
  float iou_min = 1, still_min = 1, in_mad_max = 0;
  int flagged = 0;
  for (int t = 0; t < 40; t++) {
    small_frame(&sc, t, false);
    hr_frame f = { .fmt = HR_PIX_RGB24, .width = sc.w, .height = sc.h, .planes = { sc.rgb }, .strides = { sc.w * 3 } };
    CHECK(hr_health_observe_input(hm, &f) == HR_OK);
    CHECK(hr_health_observe_output(hm, sc.alpha, sc.w, sc.h, NULL, NULL, 0, &v) == HR_OK);
    if (t < 1) continue;
    iou_min = fminf(iou_min, v.signals.mask_iou);
    still_min = fminf(still_min, v.signals.mask_iou_still);
    in_mad_max = fmaxf(in_mad_max, v.signals.input_mad);
    flagged += (v.signals.flags & HR_HEALTH_CAUSE_INCONSISTENT) != 0;
  }
  printf("small moving mask: IoU min %.2f, IoU where the input is still min %.2f, in_mad max %.4f, moving %.1f%%; "
         "%d frames flagged inconsistent\n", iou_min, still_min, in_mad_max, 100.0 * v.signals.moving_share, flagged);
  CHECK(iou_min < 0.65f);                 /* the old rule (IoU >= ~0.74 here) would flag it... */
  CHECK(still_min > 0.95f);               /* ...but the change is all where the input moved */
  CHECK(in_mad_max < 0.004f);             /* below stuck_input_min: only the motion map sees it */
  CHECK(v.signals.moving_share > 0.0f && v.signals.moving_share < 0.1f);
  CHECK_EQ_INT(flagged, 0);
  CHECK_EQ_INT(v.state, HR_HEALTH_HEALTHY);
  CHECK(v.confidence > 0.85f);

  /* a blob blinking where the input is still */
  int t_deg = -1;
  for (int t = 40; t < 60; t++) {
    small_frame(&sc, t, t & 1);
    hr_frame f = { .fmt = HR_PIX_RGB24, .width = sc.w, .height = sc.h, .planes = { sc.rgb }, .strides = { sc.w * 3 } };
    hr_health_observe_input(hm, &f);
    hr_health_observe_output(hm, sc.alpha, sc.w, sc.h, NULL, NULL, 0, &v);
    if (t_deg < 0 && v.state == HR_HEALTH_DEGRADED) {
      t_deg = t;
      CHECKF(strstr(v.reason, "temporal consistency") && (v.causes & HR_HEALTH_CAUSE_INCONSISTENT), "%s", v.reason);
    }
  }
  printf("blinking blob: degraded after %d frames\n", t_deg - 40 + 1);
  CHECK(t_deg >= 40 && t_deg < 50);
  hr_health_reset(hm);

  /* the moving disc's matte vanishing every other frame: the input moves there, but masks that no
   * longer overlap at all are never consistent */
  t_deg = -1;
  for (int t = 0; t < 40; t++) {
    small_frame(&sc, t, false);
    hr_frame f = { .fmt = HR_PIX_RGB24, .width = sc.w, .height = sc.h, .planes = { sc.rgb }, .strides = { sc.w * 3 } };
    hr_health_observe_input(hm, &f);
    hr_health_observe_output(hm, (t >= 20 && (t & 1)) ? empty : sc.alpha, sc.w, sc.h, NULL, NULL, 0, &v);
    if (t >= 20 && t_deg < 0 && v.state == HR_HEALTH_DEGRADED) t_deg = t;
  }
  printf("vanishing small mask: degraded after %d frames\n", t_deg - 20 + 1);
  CHECK(t_deg >= 20 && t_deg < 30);
  hr_health_reset(hm);

  /* stuck output on this scene: found although in_mad < stuck_input_min */
  hr_fault_injector *inj = NULL;
  CHECK(hr_fault_create("stuck-output@20:10", 1, &inj, NULL, 0) == HR_OK);
  int det = -1, back = -1;
  for (int t = 0; t < 60; t++) {
    small_frame(&sc, t, false);
    hr_frame f = { .fmt = HR_PIX_RGB24, .width = sc.w, .height = sc.h, .planes = { sc.rgb }, .strides = { sc.w * 3 } };
    hr_health_observe_input(hm, &f);
    hr_health_observe_output(hm, hr_fault_apply_output(inj, t, sc.alpha, sc.w, sc.h), sc.w, sc.h, NULL, NULL, 0, &v);
    if (det < 0 && t >= 20 && (v.causes & HR_HEALTH_CAUSE_STUCK_OUTPUT)) det = t - 20 + 1;
    if (det > 0 && t < 30) CHECKF(v.state == HR_HEALTH_DEGRADED, "stuck at %d: %s", t, hr_health_state_name(v.state));
    if (t >= 30 && back < 0 && v.state == HR_HEALTH_HEALTHY) back = t - 30 + 1;
  }
  printf("stuck output on the small-mask scene: detected after %d frames, healthy %d frames after\n", det, back);
  CHECK(det >= 1 && det <= 5);
  CHECK(back >= 1 && back <= 30);
  hr_fault_destroy(inj);
  hr_health_destroy(hm);
  free(sc.rgb);
  free(sc.alpha);
}

/* Per-frame cost at 1920x1440 alpha with RVM's state at ratio 0.25 (processing 480x360: r1 16 x 240
 * x 180, r2 20 x 120 x 90, r3 40 x 60 x 45, r4 64 x 30 x 23 = 1.06M floats), and no allocation. The
 * figure that matters is observe_input from NV12 (the camera's format) + observe_output. */
static void test_cost(bool full_scan) {
  const int W = 1920, H = 1440, N = 40;
  float *alpha = malloc(sizeof(float) * W * H);
  unsigned char *rgb = malloc((size_t)W * H * 3), *nv12 = malloc((size_t)W * H * 3 / 2);
  const size_t len[4] = { 16u * 240 * 180, 20u * 120 * 90, 40u * 60 * 45, 64u * 30 * 23 };
  float *st[4];
  for (int i = 0; i < 4; i++) {
    st[i] = malloc(len[i] * sizeof(float));
    for (size_t k = 0; k < len[i]; k++) st[i][k] = 0.6f * sinf((float)k * 0.013f + i);
  }
  uint64_t rng = 99;
  for (size_t i = 0; i < (size_t)W * H * 3; i++) rgb[i] = (unsigned char)(((i / 3) % W + (i / 3) / W) / 16 + (xs64(&rng) & 3));
  for (size_t i = 0; i < (size_t)W * H * 3 / 2; i++) nv12[i] = (unsigned char)(i % 251);
  hr_health *hm = NULL;
  hr_health_params p;
  hr_health_params_default(&p);
  p.full_scan = full_scan;
  CHECK(hr_health_create(&p, W, H, &hm, NULL, 0) == HR_OK);
  double tin[40], tin_nv12[40], tout[40], tsig[40], tcam[40];
#ifdef HR_COUNT_ALLOCS
  long allocs = 0;
#endif
  for (int t = 0; t < N; t++) {
    const float cx = 700.0f + 6.0f * t, cy = 760.0f, r = 420.0f;
    for (int y = 0; y < H; y++)
      for (int x = 0; x < W; x++) {
        const float d = sqrtf((x - cx) * (x - cx) + (y - cy) * (y - cy));
        const float a = (r - d) / 4.0f + 0.5f;
        alpha[(size_t)y * W + x] = a < 0 ? 0 : a > 1 ? 1 : a;
      }
    rgb[(size_t)t * 3] ^= 1;
    hr_frame f = { .fmt = HR_PIX_RGB24, .width = W, .height = H, .planes = { rgb }, .strides = { W * 3 } };
    hr_frame g = { .fmt = HR_PIX_NV12_FULL, .width = W, .height = H, .planes = { nv12, nv12 + (size_t)W * H }, .strides = { W, W } };
    const float *const cst[4] = { st[0], st[1], st[2], st[3] };
    hr_health_verdict v;
#ifdef HR_COUNT_ALLOCS
    g_allocs = 0;
    g_count_on = 1;
#endif
    double t0 = now_us();
    hr_health_observe_input(hm, &g);
    double t1 = now_us();
    hr_health_observe_input(hm, &f);
    double t2 = now_us();
    hr_health_observe_output(hm, alpha, W, H, cst, len, 4, &v);
    double t3 = now_us();
    if (t == 20) hr_health_note_event(hm, HR_HEALTH_EVENT_DEPTH_MISALIGNED, NULL);
#ifdef HR_COUNT_ALLOCS
    g_count_on = 0;
    allocs += g_allocs;
#endif
    tin_nv12[t] = t1 - t0; tin[t] = t2 - t1; tout[t] = t3 - t2; tsig[t] = v.signals.cost_us;
    tcam[t] = tin_nv12[t] + tout[t];
  }
  qsort(tin, N, sizeof(double), cmp_d);
  qsort(tin_nv12, N, sizeof(double), cmp_d);
  qsort(tout, N, sizeof(double), cmp_d);
  qsort(tsig, N, sizeof(double), cmp_d);
  qsort(tcam, N, sizeof(double), cmp_d);
  hr_health_verdict v;
  hr_health_get(hm, &v);
  printf("cost at 1920x1440 alpha (full_scan %d), %d samples (stride %d), state %zu floats: median observe_input %.0f us (rgb24), "
         "%.0f us (nv12); observe_output %.0f us; signals.cost_us (both inputs + output) %.0f us, p90 %.0f us\n",
         (int)full_scan, v.signals.n_samples, v.signals.sample_stride, len[0] + len[1] + len[2] + len[3], tin[N / 2], tin_nv12[N / 2],
         tout[N / 2], tsig[N / 2], tsig[N * 9 / 10]);
  printf("  per camera frame (observe_input NV12 + observe_output): median %.0f us, p90 %.0f us = %.2f%% of a 100 ms frame\n",
         tcam[N / 2], tcam[N * 9 / 10], tcam[N / 2] / 1000.0);
#ifdef HR_COUNT_ALLOCS
  printf("allocations during %d frames of observe_*: %ld\n", N, allocs);
  CHECK_EQ_INT(allocs, 0);
#endif
#if !defined(__SANITIZE_ADDRESS__) && !defined(HR__NO_COUNT) /* no sanitizer: their cost is not ours */
  if (!getenv("HR_SANITIZE_BUILD")) CHECKF(tcam[N / 2] < 5000.0, "health costs %.0f us per frame (5%% of 100 ms)", tcam[N / 2]);
#endif
  CHECK(v.signals.sample_stride >= 6);
  hr_health_destroy(hm);
  free(alpha); free(rgb); free(nv12);
  for (int i = 0; i < 4; i++) free(st[i]);
}

/* Memory as measured (hr_health_observe_memory): not measured changes nothing; a headroom under the
 * low mark, or a negative one (the governor's figure past the ceiling), names the pressure, the
 * latter as over the ceiling; back at low + hysteresis it is gone. */
static void test_memory(void) {
  synth s;
  synth_init(&s, 64, 48);
  hr_health *hm = mk(&s, NULL);
  const int64_t MB = 1048576;
  hr_health_verdict v = run_clean(hm, &s, 0, 40);
  CHECK(!(v.causes & HR_HEALTH_CAUSE_MEMORY_PRESSURE));
  hr_health_observe_memory(hm, HR_HEALTH_MEM_UNMEASURED, 80 * MB, 16 * MB);
  v = run_clean(hm, &s, 40, 41);
  CHECK(!(v.causes & HR_HEALTH_CAUSE_MEMORY_PRESSURE));
  hr_health_observe_memory(hm, 41 * MB, 80 * MB, 16 * MB);
  v = run_clean(hm, &s, 41, 42);
  CHECK(v.causes & HR_HEALTH_CAUSE_MEMORY_PRESSURE);
  CHECKF(v.reason && strstr(v.reason, "memory pressure: 41 MB headroom, under 80 MB"), "reason: %s", v.reason ? v.reason : "(none)");
  hr_health_observe_memory(hm, -12 * MB, 80 * MB, 16 * MB);
  v = run_clean(hm, &s, 42, 43);
  CHECK(v.causes & HR_HEALTH_CAUSE_MEMORY_PRESSURE);
  CHECKF(v.reason && strstr(v.reason, "memory pressure: 12 MB over the ceiling"), "reason: %s", v.reason ? v.reason : "(none)");
  hr_health_observe_memory(hm, HR_HEALTH_MEM_UNMEASURED, 80 * MB, 16 * MB);   /* not measured: as it was */
  v = run_clean(hm, &s, 43, 44);
  CHECK(v.causes & HR_HEALTH_CAUSE_MEMORY_PRESSURE);
  hr_health_observe_memory(hm, 90 * MB, 80 * MB, 16 * MB);   /* inside the hysteresis: still on */
  v = run_clean(hm, &s, 44, 45);
  CHECK(v.causes & HR_HEALTH_CAUSE_MEMORY_PRESSURE);
  hr_health_observe_memory(hm, 96 * MB, 80 * MB, 16 * MB);
  v = run_clean(hm, &s, 45, 46);
  CHECK(!(v.causes & HR_HEALTH_CAUSE_MEMORY_PRESSURE));
  printf("memory: unmeasured ignored, under the mark and over the ceiling named, cleared at mark + hysteresis\n");
  hr_health_destroy(hm);
  synth_free(&s);
}

int main(void) {
  test_basics();
  test_memory();
  test_fault_parse();
  test_thumb_formats();
  test_clean_and_soft_causes();
  test_events();
  test_passes_exact();
  test_hard_faults();
  test_input_faults_synthetic();
  test_small_moving_masks();
  test_cost(true);
  test_cost(false);
  return hr_test_finish("test_health_monitor");
}
