/* Fused ingest driver: plans TF half-pixel bilinear taps, runs the fused convert+resample (SIMD
 * kernels where available, the scalar definition otherwise), per-row conversion for the refiner,
 * and the naive convert-then-resize oracle. Definitions in ingest.h. */
#include <assert.h>
#include <stdlib.h>
#include <string.h>
#include "ingest/ingest.h"
#include "ingest/ingest_kernels.h"

static bool fmt_supported(hr_pixfmt f) {
  return hr__fmt_is_yuv(f) || f == HR_PIX_BGRA || f == HR_PIX_RGB24 || f == HR_PIX_GRAY8 || f == HR_PIX_RGBF32;
}

/* Bytes loaded from the planes per pixel tap (accounting only). */
static size_t tap_bytes(hr_pixfmt f) {
  switch (f) {
    case HR_PIX_BGRA: return 4;
    case HR_PIX_GRAY8: return 1;
    case HR_PIX_RGBF32: return 12;
    default: return 3;  /* RGB24; YUV: Y + Cb + Cr */
  }
}

static inline float ld_f32(const uint8_t *p) {
  float v;
  memcpy(&v, p, sizeof v);
  return v;
}

/* One pixel tap of a row as RGB: the scalar definition for every format. */
static inline void tap_rgb(hr_pixfmt fmt, hr__yuv_k k, const hr__ingest_rows *r, int x, float *rgb) {
  switch (fmt) {
    case HR_PIX_NV12_FULL: case HR_PIX_NV12_VIDEO: {
      const uint8_t *c = r->c1 + (x >> 1) * 2;
      hr__yuv_px(r->p0[x], c[0], c[1], k, rgb);
      return;
    }
    case HR_PIX_I420_FULL: case HR_PIX_I420_VIDEO:
      hr__yuv_px(r->p0[x], r->c1[x >> 1], r->c2[x >> 1], k, rgb);
      return;
    case HR_PIX_BGRA: {
      const uint8_t *s = r->p0 + (ptrdiff_t)x * 4;
      rgb[0] = (float)s[2] * HR__U8_SCALE; rgb[1] = (float)s[1] * HR__U8_SCALE; rgb[2] = (float)s[0] * HR__U8_SCALE;
      return;
    }
    case HR_PIX_RGB24: {
      const uint8_t *s = r->p0 + (ptrdiff_t)x * 3;
      rgb[0] = (float)s[0] * HR__U8_SCALE; rgb[1] = (float)s[1] * HR__U8_SCALE; rgb[2] = (float)s[2] * HR__U8_SCALE;
      return;
    }
    case HR_PIX_GRAY8:
      rgb[0] = rgb[1] = rgb[2] = (float)r->p0[x] * HR__U8_SCALE;
      return;
    default: { /* HR_PIX_RGBF32 */
      const uint8_t *s = r->p0 + (ptrdiff_t)x * 12;
      rgb[0] = ld_f32(s); rgb[1] = ld_f32(s + 4); rgb[2] = ld_f32(s + 8);
      return;
    }
  }
}

/* ---- row conversion ---------------------------------------------------------------------------- */

void hr__ingest_row_scalar(const hr_frame *f, int y, int x0, float *dst) {
  const hr__ingest_rows r = hr__ingest_rows_at(f, y);
  const hr__yuv_k k = hr__yuv_coeffs(f->fmt);
  if (f->fmt == HR_PIX_RGBF32) {
    if (x0 < f->width) memcpy(dst + 3 * (size_t)x0, r.p0 + (size_t)x0 * 12, (size_t)(f->width - x0) * 12);
    return;
  }
  for (int x = x0; x < f->width; x++) tap_rgb(f->fmt, k, &r, x, dst + 3 * (size_t)x);
}

void hr__ingest_row_planar_scalar(const hr_frame *f, int y, int x0, float *r, float *g, float *b) {
  const hr__ingest_rows rows = hr__ingest_rows_at(f, y);
  const hr__yuv_k k = hr__yuv_coeffs(f->fmt);
  for (int x = x0; x < f->width; x++) {
    float v[3];
    tap_rgb(f->fmt, k, &rows, x, v);
    r[x] = v[0]; g[x] = v[1]; b[x] = v[2];
  }
}

void hr__ingest_row_planar(const hr_frame *f, int y, float *r, float *g, float *b) {
  assert(f && y >= 0 && y < f->height && r && g && b && fmt_supported(f->fmt));
  int x = hr__ingest_avx512_row_planar(f, y, r, g, b);
#ifdef HR__INGEST_HAVE_SSE2
  if (!x) x = hr__ingest_sse2_row_planar(f, y, r, g, b);
#endif
  if (x < f->width) hr__ingest_row_planar_scalar(f, y, x, r, g, b);
}

void hr__ingest_row_rgbf(const hr_frame *f, int y, float *dst) {
  assert(f && y >= 0 && y < f->height && dst && fmt_supported(f->fmt));
  int x = 0;
#ifdef HR__INGEST_HAVE_SSE2
  x = hr__ingest_sse2_row(f, y, dst);
#endif
  if (x < f->width) hr__ingest_row_scalar(f, y, x, dst);
}

const float *hr__ingest_row_view(const hr_frame *f, int y, float *scratch) {
  if (f->fmt == HR_PIX_RGBF32) {
    const uint8_t *p = (const uint8_t *)f->planes[0] + (ptrdiff_t)y * f->strides[0];
    if (((uintptr_t)p & 3) == 0) return (const float *)(const void *)p;
  }
  hr__ingest_row_rgbf(f, y, scratch);
  return scratch;
}

const float *hr__ingest_borrow_rgbf(const hr_frame *f, int out_w, int out_h) {
  if (!f || f->fmt != HR_PIX_RGBF32 || f->width != out_w || f->height != out_h || !f->planes[0]) return NULL;
  if (f->strides[0] != (ptrdiff_t)out_w * 12 || ((uintptr_t)f->planes[0] & 3)) return NULL;
  return (const float *)f->planes[0];
}

/* ---- TF half-pixel bilinear taps --------------------------------------------------------------- */

/* TF's computation in float. in >= -0.5 and < 16384, so int truncation gives floor/ceil exactly
 * (no libm call: this also runs per pixel in the reference resize). */
static inline void tf_tap(int o, int in_size, int out_size, int32_t *lo, int32_t *hi, float *frac) {
  const float scale = (float)in_size / (float)out_size;
  const float in = ((float)o + 0.5f) * scale - 0.5f;
  int fl = (int)in, ce = (int)in;
  if ((float)fl > in) fl--;
  if ((float)ce < in) ce++;
  *lo = fl > 0 ? fl : 0;
  *hi = ce < in_size - 1 ? ce : in_size - 1;
  *frac = in - (float)fl;
}

void hr__ingest_resize_rgbf_ref(const float *src, int in_w, int in_h, ptrdiff_t src_stride,
                                float *dst, int out_w, int out_h, ptrdiff_t dst_stride) {
  for (int oy = 0; oy < out_h; oy++) {
    int32_t yl, yh;
    float yf;
    tf_tap(oy, in_h, out_h, &yl, &yh, &yf);
    const float *top = src + (ptrdiff_t)yl * src_stride, *bot = src + (ptrdiff_t)yh * src_stride;
    float *d = dst + (ptrdiff_t)oy * dst_stride;
    for (int ox = 0; ox < out_w; ox++) {
      int32_t xl, xh;
      float xf;
      tf_tap(ox, in_w, out_w, &xl, &xh, &xf);
      for (int c = 0; c < 3; c++) {
        const float tl = top[3 * xl + c], tr = top[3 * xh + c];
        const float bl = bot[3 * xl + c], br = bot[3 * xh + c];
        const float t = tl + (tr - tl) * xf;
        const float b = bl + (br - bl) * xf;
        d[3 * ox + c] = t + (b - t) * yf;
      }
    }
  }
}

/* ---- plan -------------------------------------------------------------------------------------- */

static bool size_ok(int v) { return v >= 1 && v <= 16384; }

hr_status hr__ingest_plan_init(hr__ingest_plan *p, int in_w, int in_h, int out_w, int out_h) {
  if (!p) return HR_EINVAL;
  memset(p, 0, sizeof *p);
  if (!size_ok(in_w) || !size_ok(in_h) || !size_ok(out_w) || !size_ok(out_h)) return HR_EINVAL;
  const size_t wp = ((size_t)out_w + HR__INGEST_CHUNK - 1) / HR__INGEST_CHUNK * HR__INGEST_CHUNK;
  /* Layout (all 4-byte items, rows first so the slots are 64-byte aligned): rows 6wp, x_frac wp,
   * y_frac h, then int32: x_lo, x_hi, x_base, x_odd, x_fix (wp each), y_lo, y_hi (h each). */
  const size_t n_items = 6 * wp + wp + (size_t)out_h + 5 * wp + 2 * (size_t)out_h;
  const size_t bytes = n_items * 4 + 64;
  unsigned char *m = malloc(bytes);
  if (!m) return HR_ENOMEM;
  float *fp = (float *)(void *)(m + ((64 - ((uintptr_t)m & 63)) & 63));
  p->mem = m;
  p->mem_bytes = bytes;
  p->in_w = in_w; p->in_h = in_h; p->out_w = out_w; p->out_h = out_h;
  p->out_w_pad = (int)wp;
  p->rows = fp;    fp += 6 * wp;
  p->x_frac = fp;  fp += wp;
  p->y_frac = fp;  fp += out_h;
  int32_t *ip = (int32_t *)(void *)fp;
  p->x_lo = ip;    ip += wp;
  p->x_hi = ip;    ip += wp;
  p->x_base = ip;  ip += wp;
  p->x_odd = ip;   ip += wp;
  p->x_fix = ip;   ip += wp;
  p->y_lo = ip;    ip += out_h;
  p->y_hi = ip;
  p->simd_ok = in_w >= 8;
  for (size_t o = 0; o < wp; o++) {
    int32_t lo, hi;
    float fr;
    if (o < (size_t)out_w) {
      tf_tap((int)o, in_w, out_w, &lo, &hi, &fr);
    } else {
      lo = p->x_lo[out_w - 1]; hi = p->x_hi[out_w - 1]; fr = 0.0f;
    }
    p->x_lo[o] = lo; p->x_hi[o] = hi; p->x_frac[o] = fr;
    const bool pair = hi == lo + 1 || (hi == lo && fr == 0.0f);
    const bool fast = pair && lo + 4 <= in_w;
    p->x_base[o] = fast && o < (size_t)out_w ? lo : 0;
    p->x_odd[o] = (p->x_base[o] & 1) ? -1 : 0;
    if (!fast && o < (size_t)out_w) p->x_fix[p->n_fix++] = (int32_t)o;
  }
  for (int o = 0; o < out_h; o++) tf_tap(o, in_h, out_h, &p->y_lo[o], &p->y_hi[o], &p->y_frac[o]);
  memset(p->rows, 0, 6 * wp * sizeof(float));
  return HR_OK;
}

void hr__ingest_plan_free(hr__ingest_plan *p) {
  if (!p) return;
  free(p->mem);
  memset(p, 0, sizeof *p);
}

/* ---- fused resample ---------------------------------------------------------------------------- */

/* Horizontal pass, scalar: output columns [list or all] of input row y into the planar slot. */
static void hpass_scalar(const hr__ingest_plan *p, const hr_frame *f, int y, float *slot,
                         const int32_t *cols, int n) {
  const hr__ingest_rows r = hr__ingest_rows_at(f, y);
  const hr__yuv_k k = hr__yuv_coeffs(f->fmt);
  const int wp = p->out_w_pad;
  for (int i = 0; i < n; i++) {
    const int o = cols ? cols[i] : i;
    float L[3], R[3];
    tap_rgb(f->fmt, k, &r, p->x_lo[o], L);
    tap_rgb(f->fmt, k, &r, p->x_hi[o], R);
    const float w = p->x_frac[o];
    for (int c = 0; c < 3; c++) slot[c * wp + o] = L[c] + (R[c] - L[c]) * w;
  }
}

/* Horizontal pass for float RGB frames (the model's own input format, e.g. bench and TF.js
 * comparisons): the scalar definition's loads and lerp without its per-tap format switch; the same
 * values. Cloned for AVX2 / AVX-512 where GCC can (gathers), plain loops elsewhere. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__) && !defined(HR_INGEST_NO_CLONES)
__attribute__((target_clones("avx512f", "avx2", "default")))
#endif
static void hpass_rgbf32(const hr__ingest_plan *p, const hr_frame *f, int y, float *restrict slot) {
  const uint8_t *row = (const uint8_t *)f->planes[0] + (ptrdiff_t)y * f->strides[0];
  const int wp = p->out_w_pad, ow = p->out_w;
  const int32_t *restrict lo = p->x_lo, *restrict hi = p->x_hi;
  const float *restrict fr = p->x_frac;
  for (int c = 0; c < 3; c++) {
    float *restrict d = slot + (size_t)c * wp;
    for (int o = 0; o < ow; o++) {
      const float L = ld_f32(row + (size_t)lo[o] * 12 + 4 * c), R = ld_f32(row + (size_t)hi[o] * 12 + 4 * c);
      d[o] = L + (R - L) * fr[o];
    }
  }
}

/* next_y: the input row the next call will read (prefetched where the kernel can), or -1. */
static void hpass(const hr__ingest_plan *p, const hr_frame *f, int y, int next_y, float *slot) {
  if (f->fmt == HR_PIX_RGBF32 && !p->scalar) {
    if (!hr__ingest_avx512_hpass_rgbf32(p, f, y, next_y, slot)) hpass_rgbf32(p, f, y, slot);
    return;
  }
#ifdef HR__INGEST_HAVE_SSE2
  if (!p->scalar && p->simd_ok && hr__ingest_sse2_hpass(p, f, y, slot)) {
    hpass_scalar(p, f, y, slot, p->x_fix, p->n_fix);
    return;
  }
#endif
  hpass_scalar(p, f, y, slot, NULL, p->out_w);
}

static void vpass(const hr__ingest_plan *p, const float *t, const float *b, float w, float *dst) {
  const int wp = p->out_w_pad, ow = p->out_w;
#ifdef HR__INGEST_HAVE_SSE2
  if (!p->scalar) {
    hr__ingest_sse2_vpass(t, b, wp, ow, w, dst);
    return;
  }
#endif
  for (int o = 0; o < ow; o++)
    for (int c = 0; c < 3; c++) {
      const float tv = t[c * wp + o];
      dst[3 * o + c] = tv + (b[c * wp + o] - tv) * w;
    }
}

/* Output rows [oy0, oy1) with the given row scratch; the frame and sizes already checked. Returns
 * the number of input rows interpolated horizontally. */
static size_t resample_rows(const hr__ingest_plan *p, const hr_frame *f, float *dst, ptrdiff_t dst_stride, int oy0, int oy1,
                            float *rows) {
  const int ow = p->out_w, oh = p->out_h, wp = p->out_w_pad;
  if (ow == p->in_w && oh == p->in_h) {
    /* Same size: every weight is 0 and every tap its own pixel, so this is the plain conversion. */
    for (int y = oy0; y < oy1; y++) {
      float *d = dst + (ptrdiff_t)y * dst_stride;
      if (p->scalar) hr__ingest_row_scalar(f, y, 0, d);
      else hr__ingest_row_rgbf(f, y, d);
    }
    return (size_t)(oy1 - oy0);
  }
  size_t rows_built = 0;
  int held[2] = {-1, -1};  /* input row each slot holds; reset per call (new frame content) */
  for (int oy = oy0; oy < oy1; oy++) {
    const int yl = p->y_lo[oy], yh = p->y_hi[oy];
    int st = held[0] == yl ? 0 : held[1] == yl ? 1 : -1;
    int sb = held[0] == yh ? 0 : held[1] == yh ? 1 : -1;
    const int after = oy + 1 < oy1 ? p->y_lo[oy + 1] : -1;  /* the row built after this output row's */
    if (st < 0) {
      st = sb == 0 ? 1 : 0;
      hpass(p, f, yl, sb < 0 && yh != yl ? yh : after, rows + (size_t)st * 3 * wp);
      held[st] = yl;
      rows_built++;
      if (yh == yl) sb = st;
    }
    if (sb < 0) {
      sb = st == 0 ? 1 : 0;
      hpass(p, f, yh, after, rows + (size_t)sb * 3 * wp);
      held[sb] = yh;
      rows_built++;
    }
    vpass(p, rows + (size_t)st * 3 * wp, rows + (size_t)sb * 3 * wp, p->y_frac[oy], dst + (ptrdiff_t)oy * dst_stride);
  }
  return rows_built;
}

static hr_status resample_check(const hr__ingest_plan *p, const hr_frame *f, const float *dst, ptrdiff_t dst_stride) {
  if (!p || !p->mem || !dst) return HR_EINVAL;
  if (hr_frame_validate(f, NULL, 0) != HR_OK || !fmt_supported(f->fmt)) return HR_EINVAL;
  if (dst_stride < (ptrdiff_t)p->out_w * 3) return HR_EINVAL;
  if (f->width != p->in_w || f->height != p->in_h) return HR_EMISMATCH;
  return HR_OK;
}

hr_status hr__ingest_resample_rgbf(hr__ingest_plan *p, const hr_frame *f, float *dst, ptrdiff_t dst_stride) {
  hr_status st = resample_check(p, f, dst, dst_stride);
  if (st) return st;
  const size_t tb = tap_bytes(f->fmt);
  size_t built = resample_rows(p, f, dst, dst_stride, 0, p->out_h, p->rows);
  if (p->out_w == p->in_w && p->out_h == p->in_h) {
    p->last.read_bytes = (size_t)p->out_w * p->out_h * tb;
    p->last.written_bytes = (size_t)p->out_w * p->out_h * 12;
  } else {
    p->last.read_bytes = built * 2 * (size_t)p->out_w * tb;
    p->last.written_bytes = built * 3 * (size_t)p->out_w_pad * 4 + (size_t)p->out_w * p->out_h * 12;
  }
  return HR_OK;
}

hr_status hr__ingest_resample_part(const hr__ingest_plan *p, const hr_frame *f, float *dst, ptrdiff_t dst_stride, int part, int parts,
                                   float *rows) {
  hr_status st = resample_check(p, f, dst, dst_stride);
  if (st) return st;
  if (parts < 1 || part < 0 || part >= parts || !rows || ((uintptr_t)rows & 63)) return HR_EINVAL;
  int oy0 = (int)((int64_t)p->out_h * part / parts), oy1 = (int)((int64_t)p->out_h * (part + 1) / parts);
  resample_rows(p, f, dst, dst_stride, oy0, oy1, rows);
  return HR_OK;
}

/* ---- naive path -------------------------------------------------------------------------------- */

hr_status hr__ingest_naive_rgbf(const hr_frame *f, float *full_tmp, int out_w, int out_h, float *dst) {
  if (!full_tmp || !dst || !size_ok(out_w) || !size_ok(out_h)) return HR_EINVAL;
  if (hr_frame_validate(f, NULL, 0) != HR_OK || !fmt_supported(f->fmt)) return HR_EINVAL;
  const int w = f->width, h = f->height;
  for (int y = 0; y < h; y++) hr__ingest_row_rgbf(f, y, full_tmp + (size_t)y * w * 3);
  hr__ingest_resize_rgbf_ref(full_tmp, w, h, (ptrdiff_t)w * 3, dst, out_w, out_h, (ptrdiff_t)out_w * 3);
  return HR_OK;
}
