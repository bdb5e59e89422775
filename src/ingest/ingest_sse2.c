/* SSE2 ingest kernels (x86-64 baseline): row conversion, fused horizontal pass, vertical pass.
 * They perform the scalar definition's operations (ingest_kernels.h) lane by lane in the same order,
 * so they agree with it bit for bit; the tests check that. Empty on targets without SSE2. */
#include "ingest/ingest_kernels.h"

#ifdef HR__INGEST_HAVE_SSE2
#include <emmintrin.h>

/* Each kernel is also compiled with VEX encoding (AVX's 3-operand forms, no register copies:
 * about 20% faster here) and picked at load time through an ifunc where GCC supports it. The
 * instructions' arithmetic is the same, so results are identical. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__ELF__) && defined(__x86_64__) && !defined(HR_INGEST_NO_CLONES)
#define HR__KERNEL __attribute__((target_clones("avx", "default")))
#else
#define HR__KERNEL
#endif

/* ---- helpers ----------------------------------------------------------------------------------- */

static inline int ld16(const uint8_t *p) { uint16_t v; memcpy(&v, p, 2); return v; }
static inline int ld32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return (int)v; }

/* Same operand order as hr__clamp01: max(0, v) is "0 > v ? 0 : v", min(1, v) is "1 < v ? 1 : v". */
static inline __m128 clamp01(__m128 v) {
  return _mm_min_ps(_mm_set1_ps(1.0f), _mm_max_ps(_mm_setzero_ps(), v));
}

typedef struct yuvv {
  __m128 yo, ys, c128, rv, gu, gv, bu;
} yuvv;

static inline yuvv yuvv_make(hr__yuv_k k) {
  yuvv c;
  c.yo = _mm_set1_ps((float)k.yo); c.ys = _mm_set1_ps(k.ys); c.c128 = _mm_set1_ps(128.0f);
  c.rv = _mm_set1_ps(k.rv); c.gu = _mm_set1_ps(k.gu); c.gv = _mm_set1_ps(k.gv); c.bu = _mm_set1_ps(k.bu);
  return c;
}

/* Y, u, v as floats, u and v already centred (C - 128, exact in float like the scalar int sub). */
static inline void yuv4c(const yuvv *c, __m128 Y, __m128 u, __m128 v, __m128 *r, __m128 *g, __m128 *b) {
  const __m128 y = _mm_mul_ps(_mm_sub_ps(Y, c->yo), c->ys);
  *r = clamp01(_mm_add_ps(y, _mm_mul_ps(c->rv, v)));
  *g = clamp01(_mm_sub_ps(_mm_sub_ps(y, _mm_mul_ps(c->gu, u)), _mm_mul_ps(c->gv, v)));
  *b = clamp01(_mm_add_ps(y, _mm_mul_ps(c->bu, u)));
}

/* Y, U, V as floats 0..255. */
static inline void yuv4(const yuvv *c, __m128 Y, __m128 U, __m128 V, __m128 *r, __m128 *g, __m128 *b) {
  yuv4c(c, Y, _mm_sub_ps(U, c->c128), _mm_sub_ps(V, c->c128), r, g, b);
}

/* Store 4 pixels of planar R, G, B as 12 interleaved floats (unaligned). */
static inline void store_rgb4(float *d, __m128 r, __m128 g, __m128 b) {
  const __m128 rg_lo = _mm_unpacklo_ps(r, g);                                /* r0 g0 r1 g1 */
  const __m128 rg_hi = _mm_unpackhi_ps(r, g);                                /* r2 g2 r3 g3 */
  const __m128 b0r1 = _mm_shuffle_ps(b, rg_lo, _MM_SHUFFLE(3, 2, 0, 0));     /* b0 b0 r1 g1 */
  const __m128 o0 = _mm_shuffle_ps(rg_lo, b0r1, _MM_SHUFFLE(2, 1, 1, 0));    /* r0 g0 b0 r1 */
  const __m128 g1b1 = _mm_shuffle_ps(rg_lo, b, _MM_SHUFFLE(1, 1, 3, 3));     /* g1 g1 b1 b1 */
  const __m128 o1 = _mm_shuffle_ps(g1b1, rg_hi, _MM_SHUFFLE(1, 0, 2, 0));    /* g1 b1 r2 g2 */
  const __m128 b2r3 = _mm_shuffle_ps(b, rg_hi, _MM_SHUFFLE(3, 2, 2, 2));     /* b2 b2 r3 g3 */
  const __m128 g3b3 = _mm_shuffle_ps(rg_hi, b, _MM_SHUFFLE(3, 3, 3, 3));     /* g3 g3 b3 b3 */
  const __m128 o2 = _mm_shuffle_ps(b2r3, g3b3, _MM_SHUFFLE(2, 0, 2, 0));     /* b2 r3 g3 b3 */
  _mm_storeu_ps(d, o0);
  _mm_storeu_ps(d + 4, o1);
  _mm_storeu_ps(d + 8, o2);
}

/* Bytes 4j..4j+3 of a 16-byte vector (already widened to 16-bit halves lo/hi) as 4 floats. */
#define U8_QUARTER(lo, hi, j) \
  _mm_cvtepi32_ps(((j) & 1 ? _mm_unpackhi_epi16 : _mm_unpacklo_epi16)((j) < 2 ? (lo) : (hi), _mm_setzero_si128()))

/* Where converted pixels go: interleaved (i) or three planes (r, g, b); fixed per caller, so the
 * test folds away once row_impl is inlined. */
typedef struct rowout {
  float *i, *r, *g, *b;
} rowout;

static inline void put4(const rowout *o, int x, __m128 R, __m128 G, __m128 B) {
  if (o->i) {
    store_rgb4(o->i + 3 * (size_t)x, R, G, B);
  } else {
    _mm_storeu_ps(o->r + x, R);
    _mm_storeu_ps(o->g + x, G);
    _mm_storeu_ps(o->b + x, B);
  }
}

/* 4 NV12 pixels at x: Y as floats, C = (cb, cr, cb', cr') as floats for pixels (0,1) and (2,3). */
static inline void nv12_px4(const yuvv *c, __m128 Y, __m128 C, const rowout *o, int x) {
  const __m128 cc = _mm_sub_ps(C, c->c128);
  __m128 R, G, B;
  yuv4c(c, Y, _mm_shuffle_ps(cc, cc, _MM_SHUFFLE(2, 2, 0, 0)), _mm_shuffle_ps(cc, cc, _MM_SHUFFLE(3, 3, 1, 1)),
        &R, &G, &B);
  put4(o, x, R, G, B);
}

/* 8 I420 pixels at x: Y0, Y1 as floats, U, V = 4 chroma samples each as floats (not yet centred). */
static inline void i420_px8(const yuvv *c, __m128 Y0, __m128 Y1, __m128 U, __m128 V, const rowout *o, int x) {
  const __m128 u = _mm_sub_ps(U, c->c128), v = _mm_sub_ps(V, c->c128);
  __m128 R, G, B;
  yuv4c(c, Y0, _mm_shuffle_ps(u, u, _MM_SHUFFLE(1, 1, 0, 0)), _mm_shuffle_ps(v, v, _MM_SHUFFLE(1, 1, 0, 0)),
        &R, &G, &B);
  put4(o, x, R, G, B);
  yuv4c(c, Y1, _mm_shuffle_ps(u, u, _MM_SHUFFLE(3, 3, 2, 2)), _mm_shuffle_ps(v, v, _MM_SHUFFLE(3, 3, 2, 2)),
        &R, &G, &B);
  put4(o, x + 4, R, G, B);
}

static inline void gray_px4(__m128 g, const rowout *o, int x) {
  if (o->i) {
    float *d = o->i + 3 * (size_t)x;
    _mm_storeu_ps(d, _mm_shuffle_ps(g, g, _MM_SHUFFLE(1, 0, 0, 0)));
    _mm_storeu_ps(d + 4, _mm_shuffle_ps(g, g, _MM_SHUFFLE(2, 2, 1, 1)));
    _mm_storeu_ps(d + 8, _mm_shuffle_ps(g, g, _MM_SHUFFLE(3, 3, 3, 2)));
  } else {
    put4(o, x, g, g, g);
  }
}

/* ---- row conversion ---------------------------------------------------------------------------- */

#if defined(__GNUC__)
#define HR__ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define HR__ALWAYS_INLINE inline
#endif

/* Converts pixels [0, n) of row y for the largest n handled here and returns n. */
static HR__ALWAYS_INLINE int row_impl(const hr_frame *f, int y, const rowout *o) {
  const hr__ingest_rows r = hr__ingest_rows_at(f, y);
  const int w = f->width;
  const __m128 s255 = _mm_set1_ps(HR__U8_SCALE);
  const __m128i z = _mm_setzero_si128();
  int x = 0;
  switch (f->fmt) {
    case HR_PIX_NV12_FULL: case HR_PIX_NV12_VIDEO: {
      const yuvv c = yuvv_make(hr__yuv_coeffs(f->fmt));
      for (; x + 16 <= w; x += 16) {
        const __m128i Y = _mm_loadu_si128((const __m128i *)(const void *)(r.p0 + x));
        const __m128i C = _mm_loadu_si128((const __m128i *)(const void *)(r.c1 + x)); /* 8 (cb, cr) */
        const __m128i ylo = _mm_unpacklo_epi8(Y, z), yhi = _mm_unpackhi_epi8(Y, z);
        const __m128i clo = _mm_unpacklo_epi8(C, z), chi = _mm_unpackhi_epi8(C, z);
        nv12_px4(&c, U8_QUARTER(ylo, yhi, 0), U8_QUARTER(clo, chi, 0), o, x);
        nv12_px4(&c, U8_QUARTER(ylo, yhi, 1), U8_QUARTER(clo, chi, 1), o, x + 4);
        nv12_px4(&c, U8_QUARTER(ylo, yhi, 2), U8_QUARTER(clo, chi, 2), o, x + 8);
        nv12_px4(&c, U8_QUARTER(ylo, yhi, 3), U8_QUARTER(clo, chi, 3), o, x + 12);
      }
      return x;
    }
    case HR_PIX_I420_FULL: case HR_PIX_I420_VIDEO: {
      const yuvv c = yuvv_make(hr__yuv_coeffs(f->fmt));
      for (; x + 16 <= w; x += 16) {
        const __m128i Y = _mm_loadu_si128((const __m128i *)(const void *)(r.p0 + x));
        const __m128i U = _mm_unpacklo_epi8(_mm_loadl_epi64((const __m128i *)(const void *)(r.c1 + x / 2)), z);
        const __m128i V = _mm_unpacklo_epi8(_mm_loadl_epi64((const __m128i *)(const void *)(r.c2 + x / 2)), z);
        const __m128i ylo = _mm_unpacklo_epi8(Y, z), yhi = _mm_unpackhi_epi8(Y, z);
        i420_px8(&c, U8_QUARTER(ylo, yhi, 0), U8_QUARTER(ylo, yhi, 1), U8_QUARTER(U, U, 0), U8_QUARTER(V, V, 0), o, x);
        i420_px8(&c, U8_QUARTER(ylo, yhi, 2), U8_QUARTER(ylo, yhi, 3), U8_QUARTER(U, U, 1), U8_QUARTER(V, V, 1), o,
                 x + 8);
      }
      return x;
    }
    case HR_PIX_BGRA: {
      const __m128i m8 = _mm_set1_epi32(0xff);
      for (; x + 4 <= w; x += 4) {
        const __m128i p = _mm_loadu_si128((const __m128i *)(const void *)(r.p0 + (size_t)x * 4));
        const __m128 R = _mm_mul_ps(_mm_cvtepi32_ps(_mm_and_si128(_mm_srli_epi32(p, 16), m8)), s255);
        const __m128 G = _mm_mul_ps(_mm_cvtepi32_ps(_mm_and_si128(_mm_srli_epi32(p, 8), m8)), s255);
        const __m128 B = _mm_mul_ps(_mm_cvtepi32_ps(_mm_and_si128(p, m8)), s255);
        put4(o, x, R, G, B);
      }
      return x;
    }
    case HR_PIX_RGB24: {
      if (!o->i) {
        /* Planar: 4 pixels (12 of 16 loaded bytes) into 32-bit lanes (r, g, b, next), as BGRA. */
        const __m128i m8 = _mm_set1_epi32(0xff);
        for (; 3 * x + 16 <= 3 * w; x += 4) {
          const __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(r.p0 + (size_t)x * 3));
          const __m128i a = _mm_unpacklo_epi32(v, _mm_srli_si128(v, 3));
          const __m128i b = _mm_unpacklo_epi32(_mm_srli_si128(v, 6), _mm_srli_si128(v, 9));
          const __m128i p = _mm_unpacklo_epi64(a, b);
          const __m128 R = _mm_mul_ps(_mm_cvtepi32_ps(_mm_and_si128(p, m8)), s255);
          const __m128 G = _mm_mul_ps(_mm_cvtepi32_ps(_mm_and_si128(_mm_srli_epi32(p, 8), m8)), s255);
          const __m128 B = _mm_mul_ps(_mm_cvtepi32_ps(_mm_and_si128(_mm_srli_epi32(p, 16), m8)), s255);
          put4(o, x, R, G, B);
        }
        return x;
      }
      /* Already interleaved: bytes convert in order, 16 at a time over whole groups of 16 pixels. */
      const int nb = 3 * (w & ~15);
      for (int i = 0; i < nb; i += 16) {
        const __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(r.p0 + i));
        const __m128i lo = _mm_unpacklo_epi8(v, z), hi = _mm_unpackhi_epi8(v, z);
        _mm_storeu_ps(o->i + i, _mm_mul_ps(U8_QUARTER(lo, hi, 0), s255));
        _mm_storeu_ps(o->i + i + 4, _mm_mul_ps(U8_QUARTER(lo, hi, 1), s255));
        _mm_storeu_ps(o->i + i + 8, _mm_mul_ps(U8_QUARTER(lo, hi, 2), s255));
        _mm_storeu_ps(o->i + i + 12, _mm_mul_ps(U8_QUARTER(lo, hi, 3), s255));
      }
      return w & ~15;
    }
    case HR_PIX_GRAY8:
      for (; x + 16 <= w; x += 16) {
        const __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(r.p0 + x));
        const __m128i lo = _mm_unpacklo_epi8(v, z), hi = _mm_unpackhi_epi8(v, z);
        gray_px4(_mm_mul_ps(U8_QUARTER(lo, hi, 0), s255), o, x);
        gray_px4(_mm_mul_ps(U8_QUARTER(lo, hi, 1), s255), o, x + 4);
        gray_px4(_mm_mul_ps(U8_QUARTER(lo, hi, 2), s255), o, x + 8);
        gray_px4(_mm_mul_ps(U8_QUARTER(lo, hi, 3), s255), o, x + 12);
      }
      return x;
    default:
      return 0;
  }
}

HR__KERNEL int hr__ingest_sse2_row(const hr_frame *f, int y, float *dst) {
  const rowout o = {dst, NULL, NULL, NULL};
  return row_impl(f, y, &o);
}

HR__KERNEL int hr__ingest_sse2_row_planar(const hr_frame *f, int y, float *r, float *g, float *b) {
  const rowout o = {NULL, r, g, b};
  return row_impl(f, y, &o);
}

/* ---- fused horizontal pass --------------------------------------------------------------------- */

/* Lerp left/right RGB with the column weights and store into the three slot planes at o. */
static inline void lerp_store(float *slot, int wp, int o, __m128 w, __m128 r0, __m128 g0, __m128 b0,
                              __m128 r1, __m128 g1, __m128 b1) {
  _mm_store_ps(slot + o, _mm_add_ps(r0, _mm_mul_ps(_mm_sub_ps(r1, r0), w)));
  _mm_store_ps(slot + wp + o, _mm_add_ps(g0, _mm_mul_ps(_mm_sub_ps(g1, g0), w)));
  _mm_store_ps(slot + 2 * wp + o, _mm_add_ps(b0, _mm_mul_ps(_mm_sub_ps(b1, b0), w)));
}

HR__KERNEL bool hr__ingest_sse2_hpass(const hr__ingest_plan *p, const hr_frame *f, int y, float *slot) {
  const hr__ingest_rows r = hr__ingest_rows_at(f, y);
  const int wp = p->out_w_pad;
  const int32_t *xb = p->x_base;
  const __m128i m8 = _mm_set1_epi32(0xff), m16 = _mm_set1_epi32(0xffff);
  const __m128 s255 = _mm_set1_ps(HR__U8_SCALE);
  switch (f->fmt) {
    case HR_PIX_NV12_FULL: case HR_PIX_NV12_VIDEO: {
      const yuvv c = yuvv_make(hr__yuv_coeffs(f->fmt));
      const uint8_t *py = r.p0, *pc = r.c1;
      for (int o = 0; o < wp; o += 4) {
        const int b0 = xb[o], b1 = xb[o + 1], b2 = xb[o + 2], b3 = xb[o + 3];
        /* Luma pair (left in the low byte) and the 4 chroma bytes from the left tap's block:
         * (cb, cr) of the left tap, then of the next block. */
        const __m128i yp = _mm_setr_epi32(ld16(py + b0), ld16(py + b1), ld16(py + b2), ld16(py + b3));
        const __m128i cp = _mm_setr_epi32(ld32(pc + (b0 & ~1)), ld32(pc + (b1 & ~1)), ld32(pc + (b2 & ~1)),
                                          ld32(pc + (b3 & ~1)));
        const __m128i odd = _mm_loadu_si128((const __m128i *)(const void *)(p->x_odd + o));
        const __m128i cl = _mm_and_si128(cp, m16);
        const __m128i ch = _mm_or_si128(_mm_and_si128(odd, _mm_srli_epi32(cp, 16)), _mm_andnot_si128(odd, cl));
        __m128 R0, G0, B0, R1, G1, B1;
        yuv4(&c, _mm_cvtepi32_ps(_mm_and_si128(yp, m8)), _mm_cvtepi32_ps(_mm_and_si128(cl, m8)),
             _mm_cvtepi32_ps(_mm_srli_epi32(cl, 8)), &R0, &G0, &B0);
        yuv4(&c, _mm_cvtepi32_ps(_mm_srli_epi32(yp, 8)), _mm_cvtepi32_ps(_mm_and_si128(ch, m8)),
             _mm_cvtepi32_ps(_mm_srli_epi32(ch, 8)), &R1, &G1, &B1);
        lerp_store(slot, wp, o, _mm_loadu_ps(p->x_frac + o), R0, G0, B0, R1, G1, B1);
      }
      return true;
    }
    case HR_PIX_I420_FULL: case HR_PIX_I420_VIDEO: {
      const yuvv c = yuvv_make(hr__yuv_coeffs(f->fmt));
      const uint8_t *py = r.p0, *pu = r.c1, *pv = r.c2;
      for (int o = 0; o < wp; o += 4) {
        const int b0 = xb[o], b1 = xb[o + 1], b2 = xb[o + 2], b3 = xb[o + 3];
        const __m128i yp = _mm_setr_epi32(ld16(py + b0), ld16(py + b1), ld16(py + b2), ld16(py + b3));
        const __m128i up = _mm_setr_epi32(ld16(pu + (b0 >> 1)), ld16(pu + (b1 >> 1)), ld16(pu + (b2 >> 1)),
                                          ld16(pu + (b3 >> 1)));
        const __m128i vp = _mm_setr_epi32(ld16(pv + (b0 >> 1)), ld16(pv + (b1 >> 1)), ld16(pv + (b2 >> 1)),
                                          ld16(pv + (b3 >> 1)));
        const __m128i odd = _mm_loadu_si128((const __m128i *)(const void *)(p->x_odd + o));
        const __m128i ul = _mm_and_si128(up, m8), vl = _mm_and_si128(vp, m8);
        const __m128i uh = _mm_or_si128(_mm_and_si128(odd, _mm_srli_epi32(up, 8)), _mm_andnot_si128(odd, ul));
        const __m128i vh = _mm_or_si128(_mm_and_si128(odd, _mm_srli_epi32(vp, 8)), _mm_andnot_si128(odd, vl));
        __m128 R0, G0, B0, R1, G1, B1;
        yuv4(&c, _mm_cvtepi32_ps(_mm_and_si128(yp, m8)), _mm_cvtepi32_ps(ul), _mm_cvtepi32_ps(vl), &R0, &G0, &B0);
        yuv4(&c, _mm_cvtepi32_ps(_mm_srli_epi32(yp, 8)), _mm_cvtepi32_ps(uh), _mm_cvtepi32_ps(vh), &R1, &G1, &B1);
        lerp_store(slot, wp, o, _mm_loadu_ps(p->x_frac + o), R0, G0, B0, R1, G1, B1);
      }
      return true;
    }
    case HR_PIX_BGRA: case HR_PIX_RGB24: {
      const int bpp = f->fmt == HR_PIX_BGRA ? 4 : 3;
      /* Shift counts putting R, G, B in the low byte of a little-endian 32-bit load of a pixel. */
      const __m128i sr = _mm_cvtsi32_si128(f->fmt == HR_PIX_BGRA ? 16 : 0);
      const __m128i sb = _mm_cvtsi32_si128(f->fmt == HR_PIX_BGRA ? 0 : 16);
      const uint8_t *pp = r.p0;
      for (int o = 0; o < wp; o += 4) {
        const uint8_t *q0 = pp + (size_t)xb[o] * bpp, *q1 = pp + (size_t)xb[o + 1] * bpp;
        const uint8_t *q2 = pp + (size_t)xb[o + 2] * bpp, *q3 = pp + (size_t)xb[o + 3] * bpp;
        const __m128i L = _mm_setr_epi32(ld32(q0), ld32(q1), ld32(q2), ld32(q3));
        const __m128i H = _mm_setr_epi32(ld32(q0 + bpp), ld32(q1 + bpp), ld32(q2 + bpp), ld32(q3 + bpp));
        const __m128 R0 = _mm_mul_ps(_mm_cvtepi32_ps(_mm_and_si128(_mm_srl_epi32(L, sr), m8)), s255);
        const __m128 G0 = _mm_mul_ps(_mm_cvtepi32_ps(_mm_and_si128(_mm_srli_epi32(L, 8), m8)), s255);
        const __m128 B0 = _mm_mul_ps(_mm_cvtepi32_ps(_mm_and_si128(_mm_srl_epi32(L, sb), m8)), s255);
        const __m128 R1 = _mm_mul_ps(_mm_cvtepi32_ps(_mm_and_si128(_mm_srl_epi32(H, sr), m8)), s255);
        const __m128 G1 = _mm_mul_ps(_mm_cvtepi32_ps(_mm_and_si128(_mm_srli_epi32(H, 8), m8)), s255);
        const __m128 B1 = _mm_mul_ps(_mm_cvtepi32_ps(_mm_and_si128(_mm_srl_epi32(H, sb), m8)), s255);
        lerp_store(slot, wp, o, _mm_loadu_ps(p->x_frac + o), R0, G0, B0, R1, G1, B1);
      }
      return true;
    }
    case HR_PIX_GRAY8: {
      const uint8_t *pg = r.p0;
      for (int o = 0; o < wp; o += 4) {
        const __m128i gp = _mm_setr_epi32(ld16(pg + xb[o]), ld16(pg + xb[o + 1]), ld16(pg + xb[o + 2]),
                                          ld16(pg + xb[o + 3]));
        const __m128 g0 = _mm_mul_ps(_mm_cvtepi32_ps(_mm_and_si128(gp, m8)), s255);
        const __m128 g1 = _mm_mul_ps(_mm_cvtepi32_ps(_mm_srli_epi32(gp, 8)), s255);
        const __m128 g = _mm_add_ps(g0, _mm_mul_ps(_mm_sub_ps(g1, g0), _mm_loadu_ps(p->x_frac + o)));
        _mm_store_ps(slot + o, g);
        _mm_store_ps(slot + wp + o, g);
        _mm_store_ps(slot + 2 * wp + o, g);
      }
      return true;
    }
    default:
      return false;
  }
}

/* ---- vertical pass ----------------------------------------------------------------------------- */

HR__KERNEL void hr__ingest_sse2_vpass(const float *t, const float *b, int wp, int out_w, float w, float *dst) {
  const __m128 wv = _mm_set1_ps(w);
  int o = 0;
  for (; o + 4 <= out_w; o += 4) {
    const __m128 tr = _mm_load_ps(t + o), tg = _mm_load_ps(t + wp + o), tb = _mm_load_ps(t + 2 * wp + o);
    const __m128 R = _mm_add_ps(tr, _mm_mul_ps(_mm_sub_ps(_mm_load_ps(b + o), tr), wv));
    const __m128 G = _mm_add_ps(tg, _mm_mul_ps(_mm_sub_ps(_mm_load_ps(b + wp + o), tg), wv));
    const __m128 B = _mm_add_ps(tb, _mm_mul_ps(_mm_sub_ps(_mm_load_ps(b + 2 * wp + o), tb), wv));
    store_rgb4(dst + 3 * o, R, G, B);
  }
  for (; o < out_w; o++)
    for (int c = 0; c < 3; c++) {
      const float tv = t[c * wp + o];
      dst[3 * o + c] = tv + (b[c * wp + o] - tv) * w;
    }
}
#endif
