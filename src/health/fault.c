/* Fault injection for tests and demos: parse KIND@FRAME[:LEN] lists and apply faults to caller buffers. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "headroom.h"
#include "headroom/testing.h"

struct hr_fault_injector {
  hr_fault_spec f[HR_FAULT_MAX];
  int n;
  uint64_t seed;
  /* freeze-input: the frame before the fault, rows packed */
  uint8_t *hold;
  size_t hold_cap;
  hr_pixfmt hold_fmt;
  int hold_w, hold_h;
  bool hold_valid;
  /* stuck-output: the alpha before the fault */
  float *ahold;
  size_t ahold_cap;
  int ahold_w, ahold_h;
  bool ahold_valid;
};

static const char *const hr__fault_names[HR_FAULT_N_KINDS] = {
  "none", "nan-state", "freeze-input", "black-input", "white-input", "noise-input", "stuck-output",
  "memory-pressure",
};

const char *hr_fault_kind_name(hr_fault_kind k) {
  return (k >= 0 && k < HR_FAULT_N_KINDS) ? hr__fault_names[k] : "unknown";
}

/* Parse a non-negative decimal integer of at most 15 digits from [s, e). */
static bool hr__parse_count(const char *s, const char *e, int64_t *out) {
  if (s >= e || e - s > 15) return false;
  int64_t v = 0;
  for (const char *p = s; p < e; p++) {
    if (*p < '0' || *p > '9') return false;
    v = v * 10 + (*p - '0');
  }
  *out = v;
  return true;
}

hr_status hr_fault_parse(const char *spec, hr_fault_spec *out, int max, int *n, char *err, size_t err_len) {
#define FAIL(code, ...) do { if (err && err_len) snprintf(err, err_len, __VA_ARGS__); return code; } while (0)
  if (!spec || !n || (max > 0 && !out) || max < 0) FAIL(HR_EINVAL, "fault spec: NULL argument");
  hr_fault_spec tmp[HR_FAULT_MAX];
  int k = 0, entry = 0;
  const char *p = spec;
  while (isspace((unsigned char)*p)) p++;
  if (*p == 0) { *n = 0; return HR_OK; }
  for (;;) {
    entry++;
    const char *s = p, *e = strchr(p, ',');
    if (!e) e = p + strlen(p);
    while (s < e && isspace((unsigned char)*s)) s++;
    const char *te = e;
    while (te > s && isspace((unsigned char)te[-1])) te--;
    const int elen = (int)(te - s);
    const char *at = memchr(s, '@', (size_t)(te - s));
    if (!at) FAIL(HR_EINVAL, "fault spec entry %d '%.*s': expected KIND@FRAME[:LEN]", entry, elen, s);
    hr_fault_kind kind = HR_FAULT_NONE;
    for (int i = 1; i < HR_FAULT_N_KINDS; i++)
      if ((size_t)(at - s) == strlen(hr__fault_names[i]) && strncasecmp(s, hr__fault_names[i], (size_t)(at - s)) == 0)
        kind = (hr_fault_kind)i;
    if (kind == HR_FAULT_NONE)
      FAIL(HR_EINVAL, "fault spec entry %d '%.*s': unknown kind '%.*s' (kinds: nan-state, freeze-input, "
           "black-input, white-input, noise-input, stuck-output, memory-pressure)", entry, elen, s, (int)(at - s), s);
    const char *colon = memchr(at, ':', (size_t)(te - at));
    int64_t frame = 0, len = 1;
    if (!hr__parse_count(at + 1, colon ? colon : te, &frame))
      FAIL(HR_EINVAL, "fault spec entry %d '%.*s': FRAME must be a non-negative integer", entry, elen, s);
    if (colon && (!hr__parse_count(colon + 1, te, &len) || len < 1))
      FAIL(HR_EINVAL, "fault spec entry %d '%.*s': LEN must be an integer >= 1", entry, elen, s);
    if (k >= HR_FAULT_MAX || k >= max)
      FAIL(HR_ERANGE, "fault spec: more than %d entries", max < HR_FAULT_MAX ? max : HR_FAULT_MAX);
    tmp[k].kind = kind;
    tmp[k].frame = frame;
    tmp[k].len = len;
    k++;
    if (*e == 0) break;
    p = e + 1;
  }
  memcpy(out, tmp, sizeof(hr_fault_spec) * (size_t)k);
  *n = k;
  return HR_OK;
#undef FAIL
}

hr_status hr_fault_create(const char *spec, uint64_t seed, hr_fault_injector **out, char *err, size_t err_len) {
  if (out) *out = NULL;
  if (!out) return HR_EINVAL;
  hr_fault_spec f[HR_FAULT_MAX];
  int n = 0;
  hr_status st = hr_fault_parse(spec, f, HR_FAULT_MAX, &n, err, err_len);
  if (st != HR_OK) return st;
  hr_fault_injector *inj = calloc(1, sizeof *inj);
  if (!inj) return HR_ENOMEM;
  memcpy(inj->f, f, sizeof(hr_fault_spec) * (size_t)n);
  inj->n = n;
  inj->seed = seed;
  *out = inj;
  return HR_OK;
}

void hr_fault_destroy(hr_fault_injector *inj) {
  if (!inj) return;
  free(inj->hold);
  free(inj->ahold);
  free(inj);
}

uint32_t hr_fault_active(const hr_fault_injector *inj, int64_t frame) {
  if (!inj) return 0;
  uint32_t bits = 0;
  for (int i = 0; i < inj->n; i++)
    if (frame >= inj->f[i].frame && frame - inj->f[i].frame < inj->f[i].len) bits |= HR_FAULT_BIT(inj->f[i].kind);
  return bits;
}

const char *hr_fault_describe(const hr_fault_injector *inj, int64_t frame, char *buf, size_t len) {
  if (!buf || !len) return buf;
  buf[0] = 0;
  uint32_t a = hr_fault_active(inj, frame);
  size_t k = 0;
  for (int i = 1; i < HR_FAULT_N_KINDS && k + 1 < len; i++) {
    if (!(a & HR_FAULT_BIT(i))) continue;
    int w = snprintf(buf + k, len - k, "%s%s", k ? ", " : "", hr__fault_names[i]);
    if (w < 0) break;
    k += (size_t)w;
  }
  return buf;
}

/* ------------------------------------------------------------------------------------------- */
/* Input side. */

/* Plane geometry: rows and bytes per row of plane i (0 if the format has no such plane). */
static void hr__plane_geom(const hr_frame *f, int i, int *rows, size_t *row_bytes) {
  *rows = 0;
  *row_bytes = 0;
  const int w = f->width, h = f->height;
  switch (f->fmt) {
    case HR_PIX_NV12_FULL: case HR_PIX_NV12_VIDEO:
      if (i == 0) { *rows = h; *row_bytes = (size_t)w; }
      if (i == 1) { *rows = h / 2; *row_bytes = (size_t)w; }
      return;
    case HR_PIX_I420_FULL: case HR_PIX_I420_VIDEO:
      if (i == 0) { *rows = h; *row_bytes = (size_t)w; }
      if (i >= 1) { *rows = h / 2; *row_bytes = (size_t)(w / 2); }
      return;
    default:
      if (i == 0) { *rows = h; *row_bytes = (size_t)w * (size_t)hr_pixfmt_bpp(f->fmt); }
      return;
  }
}

static size_t hr__frame_bytes(const hr_frame *f) {
  size_t total = 0;
  for (int i = 0; i < 3; i++) {
    int rows;
    size_t rb;
    hr__plane_geom(f, i, &rows, &rb);
    total += (size_t)rows * rb;
  }
  return total;
}

/* Copy between the frame's planes and a packed buffer. */
static void hr__frame_pack(const hr_frame *f, uint8_t *dst) {
  for (int i = 0; i < 3; i++) {
    int rows;
    size_t rb;
    hr__plane_geom(f, i, &rows, &rb);
    for (int y = 0; y < rows; y++, dst += rb)
      memcpy(dst, (const uint8_t *)f->planes[i] + (ptrdiff_t)y * f->strides[i], rb);
  }
}

static void hr__frame_unpack(hr_frame *f, const uint8_t *src) {
  for (int i = 0; i < 3; i++) {
    int rows;
    size_t rb;
    hr__plane_geom(f, i, &rows, &rb);
    for (int y = 0; y < rows; y++, src += rb)
      memcpy((uint8_t *)(uintptr_t)f->planes[i] + (ptrdiff_t)y * f->strides[i], src, rb);
  }
}

static bool hr__is_video_range(hr_pixfmt fmt) { return fmt == HR_PIX_NV12_VIDEO || fmt == HR_PIX_I420_VIDEO; }

/* Fill the frame with a constant luma: 0 = black, 1 = white (chroma neutral, BGRA alpha opaque). */
static void hr__frame_fill(hr_frame *f, int white) {
  for (int i = 0; i < 3; i++) {
    int rows;
    size_t rb;
    hr__plane_geom(f, i, &rows, &rb);
    for (int y = 0; y < rows; y++) {
      uint8_t *row = (uint8_t *)(uintptr_t)f->planes[i] + (ptrdiff_t)y * f->strides[i];
      if (f->fmt == HR_PIX_RGBF32) {
        float *r = (float *)(void *)row;
        for (size_t x = 0; x < rb / sizeof(float); x++) r[x] = white ? 1.0f : 0.0f;
      } else if (f->fmt == HR_PIX_BGRA) {
        for (size_t x = 0; x < rb; x += 4) {
          row[x] = row[x + 1] = row[x + 2] = white ? 255 : 0;
          row[x + 3] = 255;
        }
      } else if (i == 0) {
        uint8_t v = white ? (hr__is_video_range(f->fmt) ? 235 : 255) : (hr__is_video_range(f->fmt) ? 16 : 0);
        memset(row, v, rb);
      } else {
        memset(row, 128, rb);
      }
    }
  }
}

static uint64_t hr__xorshift(uint64_t *s) {
  uint64_t x = *s;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  *s = x;
  return x * 0x2545F4914F6CDD1DULL;
}

/* Uniform noise over every byte (every float in [0,1) for RGBF32); BGRA alpha stays opaque. The
 * sequence depends only on (seed, frame). */
static void hr__frame_noise(hr_frame *f, uint64_t seed, int64_t frame) {
  uint64_t st = (seed ^ ((uint64_t)frame * 0x9E3779B97F4A7C15ULL)) | 1u;
  for (int k = 0; k < 4; k++) hr__xorshift(&st);
  for (int i = 0; i < 3; i++) {
    int rows;
    size_t rb;
    hr__plane_geom(f, i, &rows, &rb);
    for (int y = 0; y < rows; y++) {
      uint8_t *row = (uint8_t *)(uintptr_t)f->planes[i] + (ptrdiff_t)y * f->strides[i];
      if (f->fmt == HR_PIX_RGBF32) {
        float *r = (float *)(void *)row;
        for (size_t x = 0; x < rb / sizeof(float); x++) r[x] = (float)(hr__xorshift(&st) >> 40) * (1.0f / 16777216.0f);
        continue;
      }
      size_t x = 0;
      for (; x + 8 <= rb; x += 8) {
        uint64_t r = hr__xorshift(&st);
        memcpy(row + x, &r, 8);
      }
      if (x < rb) {
        uint64_t r = hr__xorshift(&st);
        memcpy(row + x, &r, rb - x);
      }
      if (f->fmt == HR_PIX_BGRA)
        for (size_t a = 3; a < rb; a += 4) row[a] = 255;
    }
  }
}

hr_status hr_fault_apply_input(hr_fault_injector *inj, int64_t frame, hr_frame *f) {
  if (!inj || !f) return HR_EINVAL;
  const uint32_t now = hr_fault_active(inj, frame), next = hr_fault_active(inj, frame + 1);
  const uint32_t input_bits = HR_FAULT_BIT(HR_FAULT_FREEZE_INPUT) | HR_FAULT_BIT(HR_FAULT_BLACK_INPUT) |
                              HR_FAULT_BIT(HR_FAULT_WHITE_INPUT) | HR_FAULT_BIT(HR_FAULT_NOISE_INPUT);
  if (!((now | next) & input_bits)) return HR_OK;
  hr_status st = hr_frame_validate(f, NULL, 0);
  if (st != HR_OK) return st;
  if (f->fmt == HR_PIX_DEPTH16_MM || f->fmt == HR_PIX_DEPTH32F_M) return HR_ENOTSUP;
  if (now & HR_FAULT_BIT(HR_FAULT_FREEZE_INPUT)) {
    if (inj->hold_valid && inj->hold_fmt == f->fmt && inj->hold_w == f->width && inj->hold_h == f->height)
      hr__frame_unpack(f, inj->hold);
  } else if (now & HR_FAULT_BIT(HR_FAULT_BLACK_INPUT)) {
    hr__frame_fill(f, 0);
  } else if (now & HR_FAULT_BIT(HR_FAULT_WHITE_INPUT)) {
    hr__frame_fill(f, 1);
  } else if (now & HR_FAULT_BIT(HR_FAULT_NOISE_INPUT)) {
    hr__frame_noise(f, inj->seed, frame);
  }
  /* Keep this frame if a freeze starts on the next one. */
  if ((next & HR_FAULT_BIT(HR_FAULT_FREEZE_INPUT)) && !(now & HR_FAULT_BIT(HR_FAULT_FREEZE_INPUT))) {
    const size_t need = hr__frame_bytes(f);
    if (need > inj->hold_cap) {
      uint8_t *nb = realloc(inj->hold, need);
      if (!nb) { inj->hold_valid = false; return HR_ENOMEM; }
      inj->hold = nb;
      inj->hold_cap = need;
    }
    hr__frame_pack(f, inj->hold);
    inj->hold_fmt = f->fmt;
    inj->hold_w = f->width;
    inj->hold_h = f->height;
    inj->hold_valid = true;
  }
  return HR_OK;
}

/* ------------------------------------------------------------------------------------------- */
/* Output and state side. */

const float *hr_fault_apply_output(hr_fault_injector *inj, int64_t frame, const float *alpha, int w, int h) {
  if (!inj || !alpha || w < 1 || h < 1) return alpha;
  const uint32_t now = hr_fault_active(inj, frame), next = hr_fault_active(inj, frame + 1);
  const uint32_t bit = HR_FAULT_BIT(HR_FAULT_STUCK_OUTPUT);
  if ((now & bit) && inj->ahold_valid && inj->ahold_w == w && inj->ahold_h == h) return inj->ahold;
  if ((next & bit) && !(now & bit)) {
    const size_t need = (size_t)w * (size_t)h;
    if (need > inj->ahold_cap) {
      float *nb = realloc(inj->ahold, need * sizeof(float));
      if (!nb) { inj->ahold_valid = false; return alpha; }
      inj->ahold = nb;
      inj->ahold_cap = need;
    }
    memcpy(inj->ahold, alpha, need * sizeof(float));
    inj->ahold_w = w;
    inj->ahold_h = h;
    inj->ahold_valid = true;
  }
  return alpha;
}

int hr_fault_apply_state(const hr_fault_injector *inj, int64_t frame, float *const *state,
                         const size_t *state_len, int n_state) {
  if (!inj || !state || !state_len || n_state < 1) return -1;
  if (!(hr_fault_active(inj, frame) & HR_FAULT_BIT(HR_FAULT_NAN_STATE))) return -1;
  const int t = (int)(frame % n_state);
  if (!state[t]) return -1;
  for (size_t i = 0; i < state_len[t]; i += 64) state[t][i] = NAN;
  return t;
}
