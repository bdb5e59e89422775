/* Data-movement kernels (contiguous block copies), tanh, and the fused guided-filter tail. */
#include <math.h>
#include <string.h>
#include <stdlib.h>
#include <stdint.h>
#include "session/kernels.h"
#include "graph/ops.h"
#include "session/kernels_simd.h"
#include "ingest/ingest_kernels.h"

static int norm_axis(int a, int rank) { return a < 0 ? a + rank : a; }

/* Loops cloned for AVX2 and AVX-512 where the compiler and libc can dispatch at load time. The build
 * is ISO C (-ffp-contract=off): no clone fuses a multiply and an add, so every clone gives the
 * scalar loop's values bit for bit. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__) && !defined(HR_NO_CLONES)
#define HR__CLONES __attribute__((target_clones("avx512f", "avx2", "default"), optimize("vect-cost-model=dynamic")))
#else
#define HR__CLONES
#endif
/* A body inlined into each of its callers (so a constant argument specialises it). */
#if defined(__GNUC__)
#define HR__INLINE static inline __attribute__((always_inline))
#else
#define HR__INLINE static inline
#endif

/* Copy n elements of es bytes: a pixel's few channels are copied in fixed-size pieces the compiler
 * turns into moves (memcpy's call costs more than the copy at 3 to 64 floats), longer runs by
 * memcpy. */
static inline void copy_elems(void *restrict d, const void *restrict s, int64_t n, size_t es) {
  size_t b = (size_t)n * es;
  char *dc = d;
  const char *sc = s;
  if (b > 256) { memcpy(dc, sc, b); return; }
  for (; b >= 32; b -= 32, dc += 32, sc += 32) memcpy(dc, sc, 32);
  if (b >= 16) { memcpy(dc, sc, 16); b -= 16; dc += 16; sc += 16; }
  if (b >= 8) { memcpy(dc, sc, 8); b -= 8; dc += 8; sc += 8; }
  if (b >= 4) { memcpy(dc, sc, 4); b -= 4; dc += 4; sc += 4; }
  for (; b; b--) *dc++ = *sc++;
}

/* Outer rows per task: about 64 tasks over the pool, none smaller than 16 rows. */
static size_t row_tile(int64_t rows) {
  int64_t t = (rows + 63) / 64;
  return (size_t)(t < 16 ? 16 : t);
}

typedef struct concat_job {
  const hr__tensor *const *in; int n; int64_t inner, orow; size_t es; char *o; uint32_t skip; int ax;
} concat_job;

static void concat_rows(void *ctx, size_t p0, size_t np) {
  const concat_job *j = ctx;
  int64_t off = 0;
  for (int k = 0; k < j->n; k++) {
    int64_t row = j->in[k]->dims[j->ax] * j->inner;
    const char *src = j->in[k]->data;
    if (!(j->skip >> k & 1))
      for (int64_t p = (int64_t)p0; p < (int64_t)(p0 + np); p++)
        copy_elems(j->o + (p * j->orow + off) * (int64_t)j->es, src + p * row * (int64_t)j->es, row, j->es);
    off += row;
  }
}

void hr__k_concat(pthreadpool_t pool, const hr__tensor *const *in, int n, int axis, hr__tensor *out, uint32_t skip) {
  int ax = norm_axis(axis, out->rank);
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < ax; d++) outer *= out->dims[d];
  for (int d = ax + 1; d < out->rank; d++) inner *= out->dims[d];
  concat_job j = {in, n, inner, out->dims[ax] * inner, hr__dtsize(out->dt), out->data, skip, ax};
  pthreadpool_parallelize_1d_tile_1d(pool, concat_rows, &j, (size_t)outer, row_tile(outer), 0);
}

typedef struct split_job { const hr__tensor *in; hr__tensor *out; int n, ax; int64_t inner, irow; size_t es; } split_job;

static void split_rows(void *ctx, size_t p0, size_t np) {
  const split_job *j = ctx;
  int64_t off = 0;
  for (int k = 0; k < j->n; k++) {
    int64_t row = j->out[k].dims[j->ax] * j->inner;
    char *dst = j->out[k].data;
    for (int64_t p = (int64_t)p0; p < (int64_t)(p0 + np); p++)
      copy_elems(dst + p * row * (int64_t)j->es, (const char *)j->in->data + (p * j->irow + off) * (int64_t)j->es, row, j->es);
    off += row;
  }
}

void hr__k_split(pthreadpool_t pool, const hr__tensor *in, int axis, hr__tensor *out, int n) {
  int ax = norm_axis(axis, in->rank);
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < ax; d++) outer *= in->dims[d];
  for (int d = ax + 1; d < in->rank; d++) inner *= in->dims[d];
  split_job j = {in, out, n, ax, inner, in->dims[ax] * inner, hr__dtsize(in->dt)};
  pthreadpool_parallelize_1d_tile_1d(pool, split_rows, &j, (size_t)outer, row_tile(outer), 0);
}

/* Per pixel, a list of channel runs copied (a split fused with the concat after it). */
typedef struct pxcopy_job { const hr__k_pxcopy *c; int nc; } pxcopy_job;
static void pxcopy_rows(void *ctx, size_t p0, size_t np) {
  const pxcopy_job *j = ctx;
  for (int64_t p = (int64_t)p0; p < (int64_t)(p0 + np); p++)
    for (int k = 0; k < j->nc; k++) {
      const hr__k_pxcopy *c = &j->c[k];
      copy_elems(c->dst + p * c->ds, c->src + p * c->ss, c->n, sizeof(float));
    }
}

void hr__k_pixel_copies(pthreadpool_t pool, const hr__k_pxcopy *c, int nc, int64_t pixels) {
  pxcopy_job j = {c, nc};
  pthreadpool_parallelize_1d_tile_1d(pool, pxcopy_rows, &j, (size_t)pixels, row_tile(pixels), 0);
}

void hr__epi_copies(void *ctx, float *v, int64_t p0, int64_t np) {
  const hr__epi_cp *e = ctx;
  for (int64_t p = 0; p < np; p++)
    for (int k = 0; k < e->nc; k++) {
      const hr__k_pxcopy *c = &e->c[k];
      const float *src = c->src ? c->src + (p0 + p) * c->ss : v + p * e->K + e->off[k];
      copy_elems(c->dst + (p0 + p) * c->ds, src, c->n, sizeof(float));
    }
}

/* Copy the box [begin, begin+size) of src into dst at dbegin, rows [k0, k0 + nk) of the box (a row:
 * every index but the innermost, which is one run). */
typedef struct box_job { const hr__tensor *src; const int64_t *sb; hr__tensor *dst; const int64_t *db, *size; } box_job;
static void box_rows(void *ctx, size_t k0, size_t nk) {
  const box_job *j = ctx;
  const hr__tensor *src = j->src;
  hr__tensor *dst = j->dst;
  int r = src->rank;
  size_t es = hr__dtsize(src->dt);
  int64_t ss[HR_MAX_RANK], ds[HR_MAX_RANK], s = 1, d = 1;
  for (int i = r - 1; i >= 0; i--) { ss[i] = s; s *= src->dims[i]; ds[i] = d; d *= dst->dims[i]; }
  int64_t idx[HR_MAX_RANK] = {0}, rem = (int64_t)k0;
  for (int i = r - 2; i >= 0; i--) { idx[i] = rem % j->size[i]; rem /= j->size[i]; }
  for (int64_t k = 0; k < (int64_t)nk; k++) {
    int64_t so = j->sb[r - 1] * ss[r - 1], dof = j->db[r - 1] * ds[r - 1];
    for (int i = 0; i < r - 1; i++) { so += (j->sb[i] + idx[i]) * ss[i]; dof += (j->db[i] + idx[i]) * ds[i]; }
    copy_elems((char *)dst->data + dof * (int64_t)es, (const char *)src->data + so * (int64_t)es, j->size[r - 1], es);
    for (int i = r - 2; i >= 0; i--) { if (++idx[i] < j->size[i]) break; idx[i] = 0; }
  }
}
static void box_copy(pthreadpool_t pool, const hr__tensor *src, const int64_t *sb, hr__tensor *dst, const int64_t *db, const int64_t *size) {
  int64_t rows = 1;
  for (int i = 0; i < src->rank - 1; i++) rows *= size[i];
  box_job j = {src, sb, dst, db, size};
  pthreadpool_parallelize_1d_tile_1d(pool, box_rows, &j, (size_t)rows, row_tile(rows), 0);
}

void hr__k_slice(pthreadpool_t pool, const hr__tensor *in, const int32_t *begin, hr__tensor *out) {
  int64_t sb[HR_MAX_RANK], db[HR_MAX_RANK] = {0};
  for (int i = 0; i < in->rank; i++) sb[i] = begin[i];
  box_copy(pool, in, sb, out, db, out->dims);
}

void hr__k_pad(pthreadpool_t pool, const hr__tensor *in, const int32_t *pads, hr__tensor *out) {
  memset(out->data, 0, (size_t)hr__numel(out) * hr__dtsize(out->dt));
  int64_t sb[HR_MAX_RANK] = {0}, db[HR_MAX_RANK];
  for (int i = 0; i < in->rank; i++) db[i] = pads[2 * i];
  box_copy(pool, in, sb, out, db, in->dims);
}

/* tanh as a clamped rational function (the coefficients of Eigen's fast tanh: degree 13/6 in x,
 * |error| below 1e-6 over the whole range, exact 0 at 0); branch-free, so it vectorises (inlined
 * into each clone below). */
static inline float tanh_rat(float v) {
  const float a1 = 4.89352455891786e-03f, a3 = 6.37261928875436e-04f, a5 = 1.48572235717979e-05f,
              a7 = 5.12229709037114e-08f, a9 = -8.60467152213735e-11f, a11 = 2.00018790482477e-13f,
              a13 = -2.76076847742355e-16f;
  const float b0 = 4.89352518554385e-03f, b2 = 2.26843463243900e-03f, b4 = 1.18534705686654e-04f,
              b6 = 1.19825839466702e-06f;
  v = v < -7.90531110763549805f ? -7.90531110763549805f : v > 7.90531110763549805f ? 7.90531110763549805f : v;
  float v2 = v * v;
  float p = ((((((a13 * v2 + a11) * v2 + a9) * v2 + a7) * v2 + a5) * v2 + a3) * v2 + a1) * v;
  float q = ((b6 * v2 + b4) * v2 + b2) * v2 + b0;
  return p / q;
}

HR__CLONES
static void tanh_run(const float *restrict x, float *restrict y, int64_t n) {
  for (int64_t i = 0; i < n; i++) y[i] = tanh_rat(x[i]);
}

/* The GRU's output in the same pass: y = tanh(x) * m + a (m = 1 - z, a = z * h), each product and
 * sum rounded as the separate ops round them. */
HR__CLONES
static void tanh_gru_run(const float *x, const float *m, const float *a, float *y, int64_t n) {
  for (int64_t i = 0; i < n; i++) {
    float mc = tanh_rat(x[i]) * m[i];
    y[i] = mc + a[i];
  }
}

/* sigmoid(x) = 1 / (1 + e^-x), ours rather than XNNPACK's operator, so that a Winograd epilogue
 * (exec.c, fuse_wino_epi) gives the bits the op gives on its own. e = e^-|x| as 2^n p(r): n =
 * round(-|x| log2 e) by the magic-number addition (n + 127 in its low bits, shifted into a float's
 * exponent for 2^n), r = -|x| - n ln 2 (Cody-Waite, ln 2 in two parts), p the degree-7 Taylor
 * polynomial of e^r (|r| <= ln 2 / 2); then 1 / (1 + e) for x >= 0, e / (1 + e) below. |x| is held
 * at 88: past 87.68 n is -127, 2^n made as +0 and e = 0 (the exact e there is under the normal
 * floats; the sigmoid of -inf is 0, of +inf 1); from 87 to 87.68 e is rounded to a subnormal. fmaf is
 * exactly rounded wherever it runs (an instruction in the AVX2 and AVX-512 clones), so every clone
 * gives the same bits; branch-free, so GCC vectorises it (0.24 ns an element on one Zen 5 core,
 * against 0.35 with separate multiplies and adds). exec.c uses it only where the CPU has FMA (as the
 * Winograd: hr__wino_ok); NaN in, NaN out. Relative error 1.7e-7 at most over [-90, 90] (test_kernels_gates: under 3e-7). */
static inline float sigmoid_f(float x) {
  float a = fabsf(x);
  a = a > 88.f ? 88.f : a;
  const float magic = 0x1.8p23f + 127.f;
  const float sn = fmaf(a, -0x1.715476p+0f, magic);   /* n + 127 in the low bits */
  const float n = sn - magic;
  float r = fmaf(n, -0x1.62e400p-1f, -a);
  r = fmaf(n, -0x1.7f7d1cp-20f, r);
  float p = 1.f / 5040;
  p = fmaf(p, r, 1.f / 720); p = fmaf(p, r, 1.f / 120); p = fmaf(p, r, 1.f / 24); p = fmaf(p, r, 1.f / 6);
  p = fmaf(p, r, 0.5f); p = fmaf(p, r, 1.f); p = fmaf(p, r, 1.f);
  uint32_t u;
  memcpy(&u, &sn, sizeof u);
  u <<= 23;
  float sc;
  memcpy(&sc, &u, sizeof sc);
  const float e = p * sc;
  return (x >= 0.f ? 1.f : e) / (1.f + e);
}
HR__CLONES
static void sigmoid_run(const float *restrict x, float *restrict y, int64_t n) {
  for (int64_t i = 0; i < n; i++) y[i] = sigmoid_f(x[i]);
}
HR__CLONES
static void sigmoid_inplace(float *y, int64_t n) {
  for (int64_t i = 0; i < n; i++) y[i] = sigmoid_f(y[i]);
}
float hr__sigmoid1(float x) { return sigmoid_f(x); }

typedef struct ew_job { const float *x, *m, *a; float *y; } ew_job;
static void tanh_tile(void *ctx, size_t i0, size_t n) {
  const ew_job *j = ctx;
  tanh_run(j->x + i0, j->y + i0, (int64_t)n);
}
static void tanh_gru_tile(void *ctx, size_t i0, size_t n) {
  const ew_job *j = ctx;
  tanh_gru_run(j->x + i0, j->m + i0, j->a + i0, j->y + i0, (int64_t)n);
}
#define HR__EW_TILE 8192

/* Tiles of HR__EW_TILE elements over the pool. */
void hr__k_tanh(pthreadpool_t pool, const float *x, float *y, int64_t n) {
  ew_job j = {x, NULL, NULL, y};
  pthreadpool_parallelize_1d_tile_1d(pool, tanh_tile, &j, (size_t)n, HR__EW_TILE, 0);
}

void hr__k_tanh_gru(pthreadpool_t pool, const float *x, const float *m, const float *a, float *y, int64_t n) {
  ew_job j = {x, m, a, y};
  pthreadpool_parallelize_1d_tile_1d(pool, tanh_gru_tile, &j, (size_t)n, HR__EW_TILE, 0);
}

static void sigmoid_tile(void *ctx, size_t i0, size_t n) {
  const ew_job *j = ctx;
  if (j->x == j->y) sigmoid_inplace(j->y + i0, (int64_t)n);
  else sigmoid_run(j->x + i0, j->y + i0, (int64_t)n);
}
void hr__k_sigmoid(pthreadpool_t pool, const float *x, float *y, int64_t n) {
  ew_job j = {x, NULL, NULL, y};
  pthreadpool_parallelize_1d_tile_1d(pool, sigmoid_tile, &j, (size_t)n, HR__EW_TILE, 0);
}

/* A Winograd epilogue's row (wino.h, hr__wino_epi): the GRU's last three ops on the row's outputs,
 * y = tanh(v) * m + a at pixels p0 .. p0 + np (tanh_gru_run: the fused op's bits). */
void hr__epi_tanh_gru(void *ctx, float *v, int64_t p0, int64_t np) {
  const hr__epi_tgru *e = ctx;
  const int64_t o = p0 * e->C;
  tanh_gru_run(v, e->m + o, e->a + o, e->y + o, np * e->C);
}

/* A Winograd epilogue's row: a pointwise convolution after it (kernels.h, hr__epi_pw). Four
 * outputs of a pixel in one 128-bit register, 8 pixels in flight (one pixel's chain of C fused
 * multiply-adds is bound by their latency). */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
__attribute__((target("avx2,fma"))) static void epi_pw_fma(const hr__epi_pw *e, const float *v, float *y, int64_t np) {
  const int C = e->C, N = e->N;
  const __m128 lo = _mm_set1_ps(e->lo), hi = _mm_set1_ps(e->hi);
  for (int n0 = 0; n0 < N; n0 += 4) {
    const __m128 b = e->b ? _mm_loadu_ps(e->b + n0) : _mm_setzero_ps();
    int64_t p = 0;
    for (; p + 8 <= np; p += 8) {
      const float *x = v + p * C, *w = e->w + n0;
      __m128 a0 = b, a1 = b, a2 = b, a3 = b, a4 = b, a5 = b, a6 = b, a7 = b;
      for (int c = 0; c < C; c++, x++, w += N) {
        const __m128 wc = _mm_loadu_ps(w);
        a0 = _mm_fmadd_ps(_mm_broadcast_ss(x), wc, a0);
        a1 = _mm_fmadd_ps(_mm_broadcast_ss(x + C), wc, a1);
        a2 = _mm_fmadd_ps(_mm_broadcast_ss(x + 2 * C), wc, a2);
        a3 = _mm_fmadd_ps(_mm_broadcast_ss(x + 3 * C), wc, a3);
        a4 = _mm_fmadd_ps(_mm_broadcast_ss(x + 4 * C), wc, a4);
        a5 = _mm_fmadd_ps(_mm_broadcast_ss(x + 5 * C), wc, a5);
        a6 = _mm_fmadd_ps(_mm_broadcast_ss(x + 6 * C), wc, a6);
        a7 = _mm_fmadd_ps(_mm_broadcast_ss(x + 7 * C), wc, a7);
      }
      float *o = y + p * N + n0;
      _mm_storeu_ps(o, _mm_min_ps(_mm_max_ps(a0, lo), hi));
      _mm_storeu_ps(o + N, _mm_min_ps(_mm_max_ps(a1, lo), hi));
      _mm_storeu_ps(o + 2 * N, _mm_min_ps(_mm_max_ps(a2, lo), hi));
      _mm_storeu_ps(o + 3 * N, _mm_min_ps(_mm_max_ps(a3, lo), hi));
      _mm_storeu_ps(o + 4 * N, _mm_min_ps(_mm_max_ps(a4, lo), hi));
      _mm_storeu_ps(o + 5 * N, _mm_min_ps(_mm_max_ps(a5, lo), hi));
      _mm_storeu_ps(o + 6 * N, _mm_min_ps(_mm_max_ps(a6, lo), hi));
      _mm_storeu_ps(o + 7 * N, _mm_min_ps(_mm_max_ps(a7, lo), hi));
    }
    for (; p < np; p++) {
      const float *x = v + p * C, *w = e->w + n0;
      __m128 a = b;
      for (int c = 0; c < C; c++, w += N) a = _mm_fmadd_ps(_mm_broadcast_ss(x + c), _mm_loadu_ps(w), a);
      _mm_storeu_ps(y + p * N + n0, _mm_min_ps(_mm_max_ps(a, lo), hi));
    }
  }
}
#endif
void hr__epi_pw_row(void *ctx, float *v, int64_t p0, int64_t np) {
  const hr__epi_pw *e = ctx;
  float *y = e->y + p0 * e->N;
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  epi_pw_fma(e, v, y, np);
#else
  for (int64_t p = 0; p < np; p++)
    for (int n = 0; n < e->N; n++) {
      float a = e->b ? e->b[n] : 0.f;
      for (int c = 0; c < e->C; c++) a = fmaf(v[p * e->C + c], e->w[(size_t)c * e->N + n], a);
      a = a > e->lo ? a : e->lo;
      y[p * e->N + n] = a < e->hi ? a : e->hi;
    }
#endif
}

/* Alpha to 8 bits: q = round(clamp(a, 0, 1) * 255), ties to even (lrintf's, as headroom run's alpha
 * PNGs and the GStreamer element's matte round), NaN to 0; counts the values that are not finite
 * (a - a is not 0 for NaN and Inf). The rounding: adding and taking away 1.5 x 2^23 leaves the
 * integer nearest (ties to even) to a value in [0, 2^22] in the default rounding mode (the build
 * is ISO C: nothing folds the two). Sixteen at a time in GCC's vector types (the plain loop, float
 * -> int -> byte with a 64-bit count, stayed scalar in every clone: 3.2 ms for 1920x1440 on one
 * AVX-512 core, 0.47 this way). */
typedef float hr__v16f __attribute__((vector_size(64)));
typedef int32_t hr__v16i __attribute__((vector_size(64)));
typedef uint8_t hr__v16b __attribute__((vector_size(16)));
#define HR__RNE 12582912.f
/* The body of u8_run; with bsum, also the sum of the bytes (exact: an integer). */
static inline __attribute__((always_inline)) int64_t u8_body(const float *restrict a, uint8_t *restrict q, int64_t n, int64_t *bsum) {
  int64_t bad = 0, i = 0, bs = 0;
  const hr__v16f zero = {0}, one = zero + 1.f;
  hr__v16i nb = {0}, sb = {0};
  for (; i + 16 <= n; i += 16) {
    hr__v16f v;
    memcpy(&v, a + i, sizeof v);
    const hr__v16i pos = v > zero;                                  /* false for NaN: NaN -> 0 */
    hr__v16f c = (hr__v16f)((hr__v16i)v & pos);
    const hr__v16i lt = c < one;
    c = (hr__v16f)(((hr__v16i)c & lt) | ((hr__v16i)one & ~lt));
    const hr__v16f r = (c * 255.f + HR__RNE) - HR__RNE;
    const hr__v16i ri = __builtin_convertvector(r, hr__v16i);
    const hr__v16b b = __builtin_convertvector(ri, hr__v16b);
    memcpy(q + i, &b, sizeof b);
    nb += (v - v == zero) + 1;                                      /* finite: -1 + 1 = 0 */
    if (bsum) sb += ri;                                             /* <= 255 x 2^23 a lane: n < 2^27 */
  }
  for (int k = 0; k < 16; k++) { bad += nb[k]; bs += sb[k]; }
  for (; i < n; i++) {
    float v = a[i], c = v > 0.f ? v : 0.f;
    c = c < 1.f ? c : 1.f;
    q[i] = (uint8_t)(int32_t)((c * 255.f + HR__RNE) - HR__RNE);
    bs += q[i];
    bad += !(v - v == 0.f);
  }
  if (bsum) *bsum = bs;
  return bad;
}
HR__CLONES
static int64_t u8_run(const float *restrict a, uint8_t *restrict q, int64_t n) { return u8_body(a, q, n, NULL); }
/* The same with the bytes' sum (the guided-filter tail's 8-bit rows: fgf_u8_row). */
HR__CLONES
static int64_t u8_run_sum(const float *restrict a, uint8_t *restrict q, int64_t n, int64_t *bsum) { return u8_body(a, q, n, bsum); }
/* One pass over a matte for its reader: the 8-bit matte (q, when not NULL), the sum (float partials
 * over blocks of HR__SCAN_BLOCK, eight lanes, then double) and the count of values that are not
 * finite. A block is read from memory once: u8_run and the sum then read it from L1. */
#define HR__SCAN_BLOCK 4096
typedef float hr__v8f __attribute__((vector_size(32)));
HR__CLONES
static double sum_run(const float *restrict a, int64_t n) {
  double total = 0.0;
  for (int64_t i = 0; i < n;) {
    const int64_t end = n - i > HR__SCAN_BLOCK ? i + HR__SCAN_BLOCK : n;
    hr__v8f v0 = {0}, v1 = {0};
    for (; i + 16 <= end; i += 16) {
      hr__v8f x0, x1;
      memcpy(&x0, a + i, sizeof x0);
      memcpy(&x1, a + i + 8, sizeof x1);
      v0 += x0; v1 += x1;
    }
    v0 += v1;
    float part = ((v0[0] + v0[1]) + (v0[2] + v0[3])) + ((v0[4] + v0[5]) + (v0[6] + v0[7]));
    for (; i < end; i++) part += a[i];
    total += part;
  }
  return total;
}
static int64_t count_bad(const float *a, int64_t n) {
  int64_t bad = 0;
  for (int64_t i = 0; i < n; i++) bad += !isfinite(a[i]);
  return bad;
}
#define HR__U8_PARTS 64
typedef struct scan_job { const float *a; uint8_t *q; int64_t n, part; double sum[HR__U8_PARTS]; int64_t bad[HR__U8_PARTS]; } scan_job;
static void scan_part(void *ctx, size_t k) {
  scan_job *j = ctx;
  const int64_t i0 = j->part * (int64_t)k, i1 = i0 + j->part < j->n ? i0 + j->part : j->n;
  double sum = 0.0;
  int64_t bad = 0;
  for (int64_t i = i0; i < i1; i += HR__SCAN_BLOCK) {
    const int64_t m = i1 - i < HR__SCAN_BLOCK ? i1 - i : HR__SCAN_BLOCK;
    if (j->q) bad += u8_run(j->a + i, j->q + i, m);
    sum += sum_run(j->a + i, m);
  }
  /* without the bytes, the count only where the sum says there is something to count */
  if (!j->q && i0 < i1 && !isfinite(sum)) bad = count_bad(j->a + i0, i1 - i0);
  j->sum[k] = sum; j->bad[k] = bad;
}

int64_t hr__k_alpha_scan(pthreadpool_t pool, const float *a, uint8_t *q, int64_t n, double *sum) {
  scan_job j = {.a = a, .q = q, .n = n};
  int parts = pool ? (int)pthreadpool_get_threads_count(pool) * 4 : 1;
  if (parts > HR__U8_PARTS) parts = HR__U8_PARTS;
  if (n < 65536) parts = 1;
  j.part = ((n + parts - 1) / parts + 63) & ~(int64_t)63;
  if (parts > 1) pthreadpool_parallelize_1d(pool, scan_part, &j, (size_t)parts, 0);
  else scan_part(&j, 0);
  double total = 0.0;
  int64_t bad = 0;
  for (int k = 0; k < parts; k++) { total += j.sum[k]; bad += j.bad[k]; }
  *sum = total;
  return bad;
}

int64_t hr__k_u8_sum(const uint8_t *q, int64_t n) {
  uint64_t s = 0;
  for (int64_t i = 0; i < n;) {   /* 32-bit lanes, emptied every 2^23 bytes */
    const int64_t end = n - i > ((int64_t)1 << 23) ? i + ((int64_t)1 << 23) : n;
    uint32_t p = 0;
    for (; i < end; i++) p += q[i];
    s += p;
  }
  return (int64_t)s;
}

int64_t hr__k_alpha_u8(pthreadpool_t pool, const float *a, uint8_t *q, int64_t n) {
  double sum;
  return hr__k_alpha_scan(pool, a, q, n, &sum);
}

/* TF ResizeBilinear taps with half-pixel centres, computed in float as TF does: for output o,
 * in = (o + 0.5) * (in_size / out_size) - 0.5; lo = max(floor(in), 0); hi = min(ceil(in), in_size - 1);
 * frac = in - floor(in). */
static void half_pixel_taps(int in_size, int out_size, int32_t *lo, int32_t *hi, float *frac) {
  float scale = (float)in_size / (float)out_size;
  for (int o = 0; o < out_size; o++) {
    float f = ((float)o + 0.5f) * scale - 0.5f, fl = floorf(f);
    int a = fl < 0 ? 0 : (int)fl, b = (int)ceilf(f);
    if (b > in_size - 1) b = in_size - 1;
    if (b < 0) b = 0;
    lo[o] = a; hi[o] = b; frac[o] = f - fl;
  }
}

/* ---- fused guided-filter tail ----
 * For each full-resolution row y: A and b (low resolution, 4 channels) are interpolated with TF
 * half-pixel weights in TF's order, horizontally first (each low-resolution row once into a
 * full-width row, two kept per chunk: rows y0 and y1 of the taps), then vertically per output pixel;
 * the guidance x = (r, g, b, mean(r,g,b)) is read from the frame's row y in place (or converted
 * into scratch); out = A*x + b. pha = out[3] (clipped to [0,1] when the graph clips it), fgr =
 * out[0..2]. */
/* per chunk: the frame's row as planar R, G, B (3 W), the upsampled A and b rows (2 x 2 W), the
 * alpha row before its bytes (W, hr__fgf_run_u8), the chunk's byte sum and NaN/Inf count (2 int64) */
static size_t fgf_per_chunk(int W) { return (size_t)W * 8 + 16; }

size_t hr__fgf_bytes(int H, int W, int chunks) {
  return sizeof(int32_t) * ((size_t)W * 3 + 1) + sizeof(float) * (size_t)W + sizeof(int32_t) * (size_t)H * 2 +
         sizeof(float) * (size_t)H + sizeof(float) * fgf_per_chunk(W) * (size_t)chunks + 256;
}

hr_status hr__fgf_init(hr__fgf *g, int h_lr, int w_lr, int H, int W, int chunks, int want_fgr) {
  memset(g, 0, sizeof *g);
  g->H = H; g->W = W; g->h = h_lr; g->w = w_lr; g->chunks = chunks; g->want_fgr = want_fgr;
  size_t per_chunk = fgf_per_chunk(W);
  size_t bytes = hr__fgf_bytes(H, W, chunks);
  g->mem = calloc(1, bytes);
  if (!g->mem) return HR_ENOMEM;
  g->mem_bytes = bytes;
  char *m = g->mem;
  g->x0 = (int32_t *)m; m += sizeof(int32_t) * W;
  g->x1 = (int32_t *)m; m += sizeof(int32_t) * W;
  g->fx = (float *)m; m += sizeof(float) * W;
  g->run = (int32_t *)m; m += sizeof(int32_t) * (W + 1);
  g->y0 = (int32_t *)m; m += sizeof(int32_t) * H;
  g->y1 = (int32_t *)m; m += sizeof(int32_t) * H;
  g->fy = (float *)m; m += sizeof(float) * H;
  m = (char *)(((uintptr_t)m + 63) & ~(uintptr_t)63);
  g->scratch = (float *)m;
  g->per_chunk = per_chunk;
  half_pixel_taps(w_lr, W, g->x0, g->x1, g->fx);
  half_pixel_taps(h_lr, H, g->y0, g->y1, g->fy);
  for (int x = 0; x < W; x++)
    if (!x || g->x0[x] != g->x0[x - 1] || g->x1[x] != g->x1[x - 1]) g->run[g->n_runs++] = x;
  g->run[g->n_runs] = W;
  return HR_OK;
}

void hr__fgf_free(hr__fgf *g) { free(g->mem); memset(g, 0, sizeof *g); }

typedef struct fgf_job {
  const hr__fgf *g;
  const hr_frame *frame;
  const float *A, *B;
  float *pha, *fgr;
  uint8_t *q;          /* hr__fgf_run_u8: the bytes (pha unused) */
  int clip;
} fgf_job;

/* One low-resolution row's alpha channel (a, b: its channel 3, 4 floats apart) across the full
 * width: runs of output columns share their taps l, r, so a = a0 + da*fx, rounded as TF's
 * horizontal step top = tl + (tr - tl)*xf. */
HR__CLONES
static void fgf_hrow(const hr__fgf *g, const float *restrict a, const float *restrict b, float *restrict ha, float *restrict hb) {
  const float *restrict fx = g->fx;
  const int cs = g->alpha_only_coef ? 1 : 4;   /* the alpha's stride in A and B */
  const int done = hr__k_fgf_hrow(g->x0, g->x1, fx, g->W, g->w, cs, a, b, ha, hb);
  if (done) {
    /* AVX-512 did whole blocks of 16 columns; the rest one by one, the same operations */
    for (int x = done; x < g->W; x++) {
      float a0 = a[cs * g->x0[x]], b0 = b[cs * g->x0[x]];
      ha[x] = a0 + (a[cs * g->x1[x]] - a0) * fx[x];
      hb[x] = b0 + (b[cs * g->x1[x]] - b0) * fx[x];
    }
    return;
  }
  for (int k = 0; k < g->n_runs; k++) {
    int s = g->run[k], e = g->run[k + 1], l = g->x0[s], r = g->x1[s];
    float a0 = a[cs * l], da = a[cs * r] - a[cs * l], b0 = b[cs * l], db = b[cs * r] - b[cs * l];
    for (int x = s; x < e; x++) {
      ha[x] = a0 + da * fx[x];
      hb[x] = b0 + db * fx[x];
    }
  }
}

/* The slot (0 or 1) holding low-resolution row j upsampled, filling the one that does not hold
 * row keep when neither has j. */
static int fgf_hslot(const fgf_job *j, int row, int keep, int tag[2], float *ha[2], float *hb[2]) {
  if (tag[0] == row) return 0;
  if (tag[1] == row) return 1;
  int k = tag[0] == keep ? 1 : 0;
  const size_t off = j->g->alpha_only_coef ? (size_t)row * j->g->w : (size_t)row * j->g->w * 4 + 3;
  fgf_hrow(j->g, j->A + off, j->B + off, ha[k], hb[k]);
  tag[k] = row;
  return k;
}

/* Alpha-only row: v = a*m + b, a and b the vertical step between the two upsampled rows (TF's
 * out = top + (bottom - top)*yf), m the mean of the guidance's planar R, G, B rows; one contiguous
 * loop. Cloned for AVX2 and AVX-512 where the compiler and libc can dispatch at load time. The
 * build is ISO C (-ffp-contract=off): no clone fuses a*m+b, so every clone gives the scalar loop's
 * values bit for bit. */
HR__CLONES
static void fgf_alpha_row(int W, const float *restrict ha0, const float *restrict ha1, const float *restrict hb0,
                          const float *restrict hb1, float fy, const float *restrict R, const float *restrict G,
                          const float *restrict B, float *restrict pha, int clip) {
  if (clip)
    for (int x = 0; x < W; x++) {
      float v = (ha0[x] + (ha1[x] - ha0[x]) * fy) * ((R[x] + G[x] + B[x]) / 3.f) + (hb0[x] + (hb1[x] - hb0[x]) * fy);
      pha[x] = v < 0.f ? 0.f : v > 1.f ? 1.f : v;
    }
  else
    for (int x = 0; x < W; x++)
      pha[x] = (ha0[x] + (ha1[x] - ha0[x]) * fy) * ((R[x] + G[x] + B[x]) / 3.f) + (hb0[x] + (hb1[x] - hb0[x]) * fy);
}

/* The same for a float RGB frame read in place (the model's own input format): m from the
 * interleaved row. */
HR__CLONES
static void fgf_alpha_row_px(int W, const float *restrict ha0, const float *restrict ha1, const float *restrict hb0,
                             const float *restrict hb1, float fy, const float *restrict px, float *restrict pha, int clip) {
  for (int x = 0; x < W; x++) {
    float v = (ha0[x] + (ha1[x] - ha0[x]) * fy) * ((px[3 * x] + px[3 * x + 1] + px[3 * x + 2]) / 3.f) +
              (hb0[x] + (hb1[x] - hb0[x]) * fy);
    pha[x] = clip ? (v < 0.f ? 0.f : v > 1.f ? 1.f : v) : v;
  }
}

static void fgf_chunk(void *ctx, size_t chunk) {
  const fgf_job *j = ctx;
  const hr__fgf *g = j->g;
  int y_begin = (int)((int64_t)g->H * (int64_t)chunk / g->chunks), y_end = (int)((int64_t)g->H * (int64_t)(chunk + 1) / g->chunks);
  int w = g->w, W = g->W;
  float *src = g->scratch + g->per_chunk * chunk;
  float *ha[2] = {src + 3 * (size_t)W, src + 4 * (size_t)W}, *hb[2] = {src + 5 * (size_t)W, src + 6 * (size_t)W};
  int tag[2] = {-1, -1};
  int64_t *res = (int64_t *)(void *)(src + 8 * (size_t)W), bsum = 0, bad = 0;   /* hr__fgf_run_u8's */
  for (int y = y_begin; y < y_end; y++) {
    const int j0 = g->y0[y], j1 = g->y1[y];
    const float fy = g->fy[y];
    float *pha = j->q ? src + 7 * (size_t)W : j->pha + (size_t)y * W;   /* bytes: the row stays in L1 */
    if (!g->want_fgr) {
      const int k0 = fgf_hslot(j, j0, j1, tag, ha, hb), k1 = fgf_hslot(j, j1, j0, tag, ha, hb);
      /* a float RGB row is read where it lies; any other format is converted to planar rows */
      const float *px = j->frame->fmt == HR_PIX_RGBF32 ? hr__ingest_row_view(j->frame, y, src) : NULL;
      if (px) {
        /* AVX-512: whole blocks of 16 pixels; the rest (or everything elsewhere) by the loop */
        const int x0 = hr__k_fgf_alpha_row_rgbf(px, W, ha[k0], ha[k1], hb[k0], hb[k1], fy, pha, j->clip, !j->q);
        if (x0 < W)
          fgf_alpha_row_px(W - x0, ha[k0] + x0, ha[k1] + x0, hb[k0] + x0, hb[k1] + x0, fy, px + 3 * (size_t)x0, pha + x0, j->clip);
      }
      else {
        /* NV12 on AVX-512: converted in registers (whole blocks of 16); the rest as planar rows */
        const int x0 = hr__k_fgf_alpha_row_nv12(j->frame, y, W, ha[k0], ha[k1], hb[k0], hb[k1], fy, pha, j->clip, !j->q);
        if (!x0) {
          hr__ingest_row_planar(j->frame, y, src, src + W, src + 2 * (size_t)W);
          fgf_alpha_row(W, ha[k0], ha[k1], hb[k0], hb[k1], fy, src, src + W, src + 2 * (size_t)W, pha, j->clip);
        } else if (x0 < W) {
          hr__ingest_row_planar_scalar(j->frame, y, x0, src, src + W, src + 2 * (size_t)W);
          fgf_alpha_row(W - x0, ha[k0] + x0, ha[k1] + x0, hb[k0] + x0, hb[k1] + x0, fy, src + x0, src + W + x0, src + 2 * (size_t)W + x0,
                        pha + x0, j->clip);
        }
      }
    } else {
      /* all four channels, per pixel, in the same order (the alpha equals the alpha-only path's) */
      const float *a0 = j->A + (size_t)j0 * w * 4, *a1 = j->A + (size_t)j1 * w * 4;
      const float *b0 = j->B + (size_t)j0 * w * 4, *b1 = j->B + (size_t)j1 * w * 4;
      const float *px = hr__ingest_row_view(j->frame, y, src);
      float *fgr = j->fgr + (size_t)y * W * 3;
      for (int x = 0; x < W; x++) {
        int l = g->x0[x], r = g->x1[x];
        float fx = g->fx[x], xv[4];
        xv[0] = px[3 * x]; xv[1] = px[3 * x + 1]; xv[2] = px[3 * x + 2];
        xv[3] = (xv[0] + xv[1] + xv[2]) / 3.f;
        float o[4];
        for (int c = 0; c < 4; c++) {
          float ta = a0[l * 4 + c] + (a0[r * 4 + c] - a0[l * 4 + c]) * fx, ua = a1[l * 4 + c] + (a1[r * 4 + c] - a1[l * 4 + c]) * fx;
          float tb = b0[l * 4 + c] + (b0[r * 4 + c] - b0[l * 4 + c]) * fx, ub = b1[l * 4 + c] + (b1[r * 4 + c] - b1[l * 4 + c]) * fx;
          o[c] = (ta + (ua - ta) * fy) * xv[c] + (tb + (ub - tb) * fy);
        }
        if (j->clip) o[3] = o[3] < 0.f ? 0.f : o[3] > 1.f ? 1.f : o[3];
        pha[x] = o[3];
        if (fgr) { fgr[3 * x] = o[0]; fgr[3 * x + 1] = o[1]; fgr[3 * x + 2] = o[2]; }
      }
    }
    if (j->q) {
      int64_t rs;
      bad += u8_run_sum(pha, j->q + (size_t)y * W, W, &rs);
      bsum += rs;
    }
  }
  if (j->q) res[0] = bsum, res[1] = bad;
}

void hr__fgf_run(const hr__fgf *g, const hr_frame *frame, const float *A, const float *B, float *pha, float *fgr, int clip,
                 pthreadpool_t pool) {
  fgf_job j = {g, frame, A, B, pha, fgr, NULL, clip};
  if (pool && g->chunks > 1) pthreadpool_parallelize_1d(pool, fgf_chunk, &j, (size_t)g->chunks, PTHREADPOOL_FLAG_YIELD_WORKERS);
  else for (int c = 0; c < g->chunks; c++) fgf_chunk(&j, (size_t)c);
}

/* (The tail is the last thing a run or a push does: the pool's threads go to sleep after it instead
 * of spinning, which on a machine of few cores took a CPU from whatever ran next: the stream's
 * network run, stopped for the tail (src/stream/tail.c), waited for it.) */
int64_t hr__fgf_run_u8(const hr__fgf *g, const hr_frame *frame, const float *A, const float *B, uint8_t *q, int clip,
                       pthreadpool_t pool, int64_t *bsum) {
  fgf_job j = {g, frame, A, B, NULL, NULL, q, clip};
  if (pool && g->chunks > 1) pthreadpool_parallelize_1d(pool, fgf_chunk, &j, (size_t)g->chunks, PTHREADPOOL_FLAG_YIELD_WORKERS);
  else for (int c = 0; c < g->chunks; c++) fgf_chunk(&j, (size_t)c);
  int64_t sum = 0, bad = 0;
  for (int c = 0; c < g->chunks; c++) {
    const int64_t *res = (const int64_t *)(const void *)(g->scratch + g->per_chunk * (size_t)c + 8 * (size_t)g->W);
    sum += res[0]; bad += res[1];
  }
  *bsum = sum;
  return bad;
}

void hr__k_fgf_tail(hr_session *s, pthreadpool_t pool, const hr__fgf *g, const hr__rop *r, const hr__tensor *const *in, hr__tensor *out,
                    int n_out) {
  hr__fgf_run(g, &s->cur, in[0]->data, in[1]->data, out[0].data, n_out > 1 ? out[1].data : NULL, r->syn.a.keep_dims, pool);
}

/* ---- 1-D depthwise (box filters) ---- */
typedef struct dw1d_job {
  const hr__attrs *a; const hr__tensor *x, *w, *b; hr__tensor *o; int pt, pl; float lo, hi;
} dw1d_job;

static void dw1d_row(void *ctx, size_t oy) {
  const dw1d_job *j = ctx;
  int64_t H = j->x->dims[1], W = j->x->dims[2], C = j->x->dims[3], OW = j->o->dims[2];
  int KH = (int)j->w->dims[0], KW = (int)j->w->dims[1];
  const float *X = j->x->data, *Wt = j->w->data, *B = j->b ? j->b->data : NULL;
  float *O = (float *)j->o->data + (int64_t)oy * OW * C;
  for (int64_t ox = 0; ox < OW; ox++) {
    float *op = O + ox * C;
    for (int64_t c = 0; c < C; c++) op[c] = B ? B[c] : 0.f;
    for (int ky = 0; ky < KH; ky++) {
      int64_t iy = (int64_t)oy - j->pt + ky;
      if (iy < 0 || iy >= H) continue;
      for (int kx = 0; kx < KW; kx++) {
        int64_t ix = ox - j->pl + kx;
        if (ix < 0 || ix >= W) continue;
        const float *xp = X + (iy * W + ix) * C, *wp = Wt + ((int64_t)ky * KW + kx) * C;
        for (int64_t c = 0; c < C; c++) op[c] += xp[c] * wp[c];
      }
    }
    for (int64_t c = 0; c < C; c++) { float v = op[c]; op[c] = v < j->lo ? j->lo : v > j->hi ? j->hi : v; }
  }
}

/* VALID 1-D depthwise on flattened rows: with the weights expanded to the row's width once, every
 * tap is one contiguous multiply-add over W*C floats (vectorises; RVM's box filters are this). */
typedef struct dw1d_fast { const dw1d_job *j; const float *wexp; } dw1d_fast;
HR__CLONES
static void madd_row(float *restrict o, const float *restrict w, const float *restrict x, int64_t n) {
  for (int64_t i = 0; i < n; i++) o[i] += w[i] * x[i];
}
static void dw1d_fast_row(void *ctx, size_t oy) {
  const dw1d_fast *f = ctx;
  const dw1d_job *j = f->j;
  int64_t W = j->x->dims[2], C = j->x->dims[3], OW = j->o->dims[2], n = OW * C;
  int KH = (int)j->w->dims[0], KW = (int)j->w->dims[1];
  const float *B = j->b ? j->b->data : NULL;
  float *op = (float *)j->o->data + (int64_t)oy * n;
  for (int64_t i = 0; i < n; i++) op[i] = B ? B[i % C] : 0.f;
  for (int ky = 0; ky < KH; ky++)
    for (int kx = 0; kx < KW; kx++) {
      const float *ip = (const float *)j->x->data + ((int64_t)oy + ky) * W * C + (int64_t)kx * C;
      const float *wp = f->wexp + ((int64_t)ky * KW + kx) * n;
      madd_row(op, wp, ip, n);
    }
  if (j->lo > -INFINITY || j->hi < INFINITY)
    for (int64_t i = 0; i < n; i++) { float v = op[i]; op[i] = v < j->lo ? j->lo : v > j->hi ? j->hi : v; }
}

void hr__k_dw1d(pthreadpool_t pool, const hr__attrs *a, const hr__tensor *x, const hr__tensor *w, const hr__tensor *bias,
                hr__tensor *o, const float *wexp) {
  dw1d_job j = {a, x, w, bias, o, 0, 0, -INFINITY, INFINITY};
  if (wexp) {
    if (a->act == HR_ACT_RELU) j.lo = 0;
    else if (a->act == HR_ACT_RELU6) { j.lo = 0; j.hi = 6; }
    dw1d_fast f = {&j, wexp};
    if (pool) pthreadpool_parallelize_1d(pool, dw1d_fast_row, &f, (size_t)o->dims[1], 0);
    else for (int64_t y = 0; y < o->dims[1]; y++) dw1d_fast_row(&f, (size_t)y);
    return;
  }
  int64_t t;
  hr__conv_geom(a->padding, a->explicit_pad + 2, x->dims[1], (int)w->dims[0], 1, 1, &t, &j.pt);
  hr__conv_geom(a->padding, a->explicit_pad + 4, x->dims[2], (int)w->dims[1], 1, 1, &t, &j.pl);
  if (a->act == HR_ACT_RELU) j.lo = 0;
  else if (a->act == HR_ACT_RELU6) { j.lo = 0; j.hi = 6; }
  if (pool) pthreadpool_parallelize_1d(pool, dw1d_row, &j, (size_t)o->dims[1], 0);
  else for (int64_t y = 0; y < o->dims[1]; y++) dw1d_row(&j, (size_t)y);
}

/* ---- depthwise convolution (K x K, AVX-512: kernels_avx512.c) ---- */
int hr__k_dwconv_fits(int kh, int kw, int sh, int sw, int dh, int dw, int64_t multiplier, int64_t batch) {
  const char *e = getenv("HR_DWCONV");
  if ((e && !strcmp(e, "xnn")) || !hr__k_dwconv_ok()) return 0;
  /* stride 1 only: at stride 2 XNNPACK's was as fast or faster here (180x240x64 3x3: 0.71 vs 0.99 ms,
   * 45x60x240: 0.105 vs 0.14; 1 thread, min of 50) */
  return kh == kw && (kh == 3 || kh == 5) && sh == 1 && sw == 1 && dh == dw && dh >= 1 && multiplier == 1 && batch == 1;
}

hr_status hr__dwconv_init(hr__dwconv *d, const float *w, const float *bias, int H, int W, int C, int OH, int OW, int K, int s, int dl, int pt,
                          int pl, float lo, float hi) {
  memset(d, 0, sizeof *d);
  if ((K != 3 && K != 5) || C < 1 || s < 1 || dl < 1 || !w) return HR_EINVAL;
  d->w = w; d->b = bias;
  d->H = H; d->W = W; d->C = C; d->OH = OH; d->OW = OW; d->K = K; d->s = s; d->dl = dl; d->pt = pt; d->pl = pl; d->lo = lo; d->hi = hi;
  return HR_OK;
}

typedef struct dw_job { const hr__dwconv *d; const float *x; float *o; const hr__dw_epi *e; int gb; } dw_job;
static void dw_task2(void *ctx, size_t band, size_t grp) {
  const dw_job *j = ctx;
  const hr__dwconv *d = j->d;
  hr__k_dwconv_band(j->x, d->w, d->b, j->o, d->H, d->W, d->C, d->OH, d->OW, d->K, d->s, d->dl, d->pt, d->pl, d->lo, d->hi, j->e, j->gb,
                    (int)grp, (int)band);
}

void hr__k_dwconv(pthreadpool_t pool, const hr__dwconv *d, const float *x, float *o, const hr__dw_epi *e) {
  const int nblk = (d->C + 15) / 16, nband = HR__DW_BANDS(d->OH, d->s, d->dl);
  const int threads = pool ? (int)pthreadpool_get_threads_count(pool) : 1;
  /* 4 blocks of 16 channels a task (1 and 2 measured slower with one row a task), fewer where the
   * bands of three rows would leave under 4 tasks a thread (16 threads at 45x60x120: 30 tasks with 4) */
  int gb = 4;
  while (gb > 1 && (nblk + gb - 1) / gb * nband < 4 * threads) gb /= 2;
  dw_job j = {d, x, o, e, gb};
  /* Band-major: pthreadpool gives each thread a contiguous run of tasks, so a thread's share is a
   * run of rows across all channels, the rows that the producer (XNNPACK's convolutions split M,
   * the pixels, the same way) left in its own cache. Channel-major, half of each thread's input
   * came from the other core: 2 threads on the 2-vCPU EPYC VM, 1920x1440 r0.25, depthwise class
   * 3.58-3.70 -> 3.00-3.23 ms a frame (45x60x120 5x5: 0.31 -> 0.21 ms) in the VM's slow phases,
   * equal in its fast ones (2.14-2.35 ms either way); same bits. */
  const size_t ngrp = (size_t)((nblk + gb - 1) / gb);
  if (pool) pthreadpool_parallelize_2d(pool, dw_task2, &j, (size_t)nband, ngrp, 0);
  else
    for (size_t y = 0; y < (size_t)nband; y++)
      for (size_t b = 0; b < ngrp; b++) dw_task2(&j, y, b);
}

/* ---- one-pixel 1x1 convolution (kernels.h, hr__matvec) ---- */
int hr__k_matvec_fits(void) {
  const char *e = getenv("HR_MATVEC");
  return !(e && !strcmp(e, "xnn")) && hr__k_dwconv_ok();
}
typedef struct mv_job { const hr__matvec *m; const float *x; float *y; int g; } mv_job;
static void mv_task(void *ctx, size_t t) {
  const mv_job *j = ctx;
  hr__k_matvec_block(j->m, j->x, j->y, (int)t * 16 * j->g, j->g);
}
void hr__k_matvec(pthreadpool_t pool, const hr__matvec *m, const float *x, float *y) {
  /* tasks of g blocks of 16 outputs (a power of two up to 16), about one a thread: the more blocks
   * a task has, the longer the runs of each weight row it reads */
  const size_t nb = (size_t)(m->N + 15) / 16, T = pool ? pthreadpool_get_threads_count(pool) : 1, per = (nb + T - 1) / T;
  int g = 1;
  while (g < 16 && (size_t)g < per) g *= 2;
  mv_job j = {m, x, y, g};
  const size_t nt = (nb + (size_t)j.g - 1) / (size_t)j.g;
  if (pool) pthreadpool_parallelize_1d(pool, mv_task, &j, nt, 0);
  else
    for (size_t t = 0; t < nt; t++) mv_task(&j, t);
}

/* ---- bilinear resize ---- */
hr_status hr__resize_init(hr__resize *r, int in_w, int out_w) {
  memset(r, 0, sizeof *r);
  r->x0 = malloc(sizeof(int32_t) * (size_t)out_w * 2 + sizeof(float) * (size_t)out_w);
  if (!r->x0) return HR_ENOMEM;
  r->x1 = r->x0 + out_w;
  r->fx = (float *)(r->x1 + out_w);
  r->ow = out_w;
  half_pixel_taps(in_w, out_w, r->x0, r->x1, r->fx);
  return HR_OK;
}
void hr__resize_free(hr__resize *r) { free(r->x0); memset(r, 0, sizeof *r); }

typedef struct resize_job {
  const hr__resize *r; const hr__tensor *x; hr__tensor *o; float sy; int64_t ooff, ostride;
  const hr__k_cat_src *src; int n_src; /* hr__k_resize_cat: the sources */
  int stream;                           /* resize_cat_pair: stream whole 16-pixel groups out */
  int64_t row0;                         /* hr__k_resize_cat_rows: the output row o->data holds first */
} resize_job;

HR__CLONES
static void resize_px(const hr__resize *r, const float *restrict r0, const float *restrict r1, int64_t C, int64_t OW, int64_t OS,
                      float ly, float *restrict op) {
  for (int64_t ox = 0; ox < OW; ox++, op += OS) {
    const float *p00 = r0 + (int64_t)r->x0[ox] * C, *p01 = r0 + (int64_t)r->x1[ox] * C;
    const float *p10 = r1 + (int64_t)r->x0[ox] * C, *p11 = r1 + (int64_t)r->x1[ox] * C;
    float lx = r->fx[ox];
    for (int64_t c = 0; c < C; c++) {
      float top = p00[c] + (p01[c] - p00[c]) * lx;
      float bot = p10[c] + (p11[c] - p10[c]) * lx;
      op[c] = top + (bot - top) * ly;
    }
  }
}

/* The same with C a compile-time constant (the channel loop unrolled into whole vectors, no
 * remainder): RVM's decoder resizes 32, 40, 80 and 128 channels. Same operations, same bits;
 * 1 thread, 180x240x32 -> 360x480 (+3 copied): ~6-8% faster. */
#define HR__RESIZE_PX_C(NC)                                                                                               \
  HR__CLONES static void resize_px_##NC(const hr__resize *r, const float *restrict r0, const float *restrict r1, int64_t OW, \
                                        int64_t OS, float ly, float *restrict op) {                                      \
    for (int64_t ox = 0; ox < OW; ox++, op += OS) {                                                                        \
      const float *p00 = r0 + (int64_t)r->x0[ox] * NC, *p01 = r0 + (int64_t)r->x1[ox] * NC;                               \
      const float *p10 = r1 + (int64_t)r->x0[ox] * NC, *p11 = r1 + (int64_t)r->x1[ox] * NC;                               \
      float lx = r->fx[ox];                                                                                                \
      for (int c = 0; c < NC; c++) {                                                                                       \
        float top = p00[c] + (p01[c] - p00[c]) * lx;                                                                       \
        float bot = p10[c] + (p11[c] - p10[c]) * lx;                                                                       \
        op[c] = top + (bot - top) * ly;                                                                                    \
      }                                                                                                                    \
    }                                                                                                                      \
  }
HR__RESIZE_PX_C(32)
HR__RESIZE_PX_C(40)
HR__RESIZE_PX_C(80)
HR__RESIZE_PX_C(128)
#undef HR__RESIZE_PX_C

static void resize_px_any(const hr__resize *r, const float *r0, const float *r1, int64_t C, int64_t OW, int64_t OS, float ly, float *op) {
  switch (C) {
    case 32: resize_px_32(r, r0, r1, OW, OS, ly, op); return;
    case 40: resize_px_40(r, r0, r1, OW, OS, ly, op); return;
    case 80: resize_px_80(r, r0, r1, OW, OS, ly, op); return;
    case 128: resize_px_128(r, r0, r1, OW, OS, ly, op); return;
    default: resize_px(r, r0, r1, C, OW, OS, ly, op); return;
  }
}

static void resize_row(void *ctx, size_t oy) {
  const resize_job *j = ctx;
  int64_t H = j->x->dims[1], W = j->x->dims[2], C = j->x->dims[3], OW = j->o->dims[2], OS = j->ostride;
  float f = ((float)oy + 0.5f) * j->sy - 0.5f, fl = floorf(f);
  int64_t y0 = fl < 0 ? 0 : (int64_t)fl, y1 = (int64_t)ceilf(f);
  if (y1 > H - 1) y1 = H - 1;
  if (y1 < 0) y1 = 0;
  float ly = f - fl;
  const float *r0 = (const float *)j->x->data + y0 * W * C, *r1 = (const float *)j->x->data + y1 * W * C;
  resize_px_any(j->r, r0, r1, C, OW, OS, ly, (float *)j->o->data + (int64_t)oy * OW * OS + j->ooff);
}

/* ---- exact 2x upsampling (half-pixel centres) ----
 * Output column 2j takes input columns (j-1, j) at 0.75, column 2j+1 (j, j+1) at 0.25, clamped at
 * the edges (the taps half_pixel_taps gives for scale 0.5, where every tap is exact); rows likewise.
 * Two output rows at once, 2k ((k-1, k) at 0.75) and 2k+1 ((k, k+1) at 0.25), from input rows a = k-1,
 * b = k, c = k+1 (clamped): each input pixel is loaded once per column pair, each horizontal value
 * made once for both rows, no table. Every value is computed as resize_px computes it (top, bottom,
 * then the vertical step, each operation rounded alone): the same bits. */
#define HR__UP2_BODY(NC)                                                                        \
  for (int64_t j = ja; j < jb; j++) {                                                           \
    const int64_t jm = (j ? j - 1 : 0) * (NC), j0 = j * (NC), jp = (j + 1 < W ? j + 1 : j) * (NC); \
    float *restrict e0 = o0 + 2 * (j - ja) * OS, *restrict d0 = e0 + OS;                        \
    float *restrict e1 = o1 + 2 * (j - ja) * OS, *restrict d1 = e1 + OS;                        \
    for (int64_t c = 0; c < (NC); c++) {                                                        \
      float ae = a[jm + c] + (a[j0 + c] - a[jm + c]) * 0.75f;                                   \
      float be = b[jm + c] + (b[j0 + c] - b[jm + c]) * 0.75f;                                   \
      float ce = cc[jm + c] + (cc[j0 + c] - cc[jm + c]) * 0.75f;                                \
      float ao = a[j0 + c] + (a[jp + c] - a[j0 + c]) * 0.25f;                                   \
      float bo = b[j0 + c] + (b[jp + c] - b[j0 + c]) * 0.25f;                                   \
      float co = cc[j0 + c] + (cc[jp + c] - cc[j0 + c]) * 0.25f;                                \
      e0[c] = ae + (be - ae) * 0.75f;                                                           \
      d0[c] = ao + (bo - ao) * 0.75f;                                                           \
      e1[c] = be + (ce - be) * 0.25f;                                                           \
      d1[c] = bo + (co - bo) * 0.25f;                                                           \
    }                                                                                           \
  }
#define HR__UP2_FN(NC)                                                                                                  \
  HR__CLONES static void up2_pair_##NC(const float *restrict a, const float *restrict b, const float *restrict cc, int64_t W, \
                                       int64_t ja, int64_t jb, int64_t OS, float *restrict o0, float *restrict o1) {  \
    HR__UP2_BODY(NC)                                                                                                   \
  }
HR__UP2_FN(16)
HR__UP2_FN(20)
HR__UP2_FN(32)
HR__UP2_FN(40)
HR__UP2_FN(80)
HR__UP2_FN(128)
HR__CLONES static void up2_pair_any(const float *restrict a, const float *restrict b, const float *restrict cc, int64_t W, int64_t C,
                                    int64_t ja, int64_t jb, int64_t OS, float *restrict o0, float *restrict o1) {
  HR__UP2_BODY(C)
}
#undef HR__UP2_FN
#undef HR__UP2_BODY

/* Output rows 2k and 2k+1 of an exact 2x upsampling of x (h x w x C), input columns [ja, jb) (output
 * columns [2 ja, 2 jb), o0 and o1 pointing at column 2 ja), into rows of OS floats. */
static void up2_pair(const float *x, int64_t h, int64_t w, int64_t C, int64_t k, int64_t ja, int64_t jb, int64_t OS, float *o0, float *o1) {
  const float *a = x + (k ? k - 1 : 0) * w * C, *b = x + k * w * C, *c = x + (k + 1 < h ? k + 1 : k) * w * C;
  switch (C) {
    case 16: up2_pair_16(a, b, c, w, ja, jb, OS, o0, o1); return;   /* RVM's resizes read the halves of a concat */
    case 20: up2_pair_20(a, b, c, w, ja, jb, OS, o0, o1); return;
    case 32: up2_pair_32(a, b, c, w, ja, jb, OS, o0, o1); return;
    case 40: up2_pair_40(a, b, c, w, ja, jb, OS, o0, o1); return;
    case 80: up2_pair_80(a, b, c, w, ja, jb, OS, o0, o1); return;
    case 128: up2_pair_128(a, b, c, w, ja, jb, OS, o0, o1); return;
    default: up2_pair_any(a, b, c, w, C, ja, jb, OS, o0, o1); return;
  }
}

/* Output columns [x0, x1) of rows 2k and 2k+1 of hr__k_resize_cat (every resized source exactly 2x;
 * x0 and x1 even), o0 and o1 pointing at column x0. */
static void resize_cat_cols(const resize_job *j, int64_t k, int64_t x0, int64_t x1, float *o0, float *o1) {
  int64_t OW = j->o->dims[2], OS = j->ostride;
  for (int q = 0; q < j->n_src; q++) {
    const hr__k_cat_src *c = &j->src[q];
    if (c->resize) up2_pair(c->data, c->h, c->w, c->c, k, x0 / 2, x1 / 2, OS, o0 + c->off, o1 + c->off);
    else
      for (int r = 0; r < 2; r++) {
        const float *sp = c->data + ((2 * k + r) * OW + x0) * c->c;
        float *dp = (r ? o1 : o0) + c->off;
        for (int64_t ox = x0; ox < x1; ox++, sp += c->c, dp += OS) copy_elems(dp, sp, c->c, 4);
      }
  }
}

/* Output rows 2k and 2k+1 of hr__k_resize_cat when every resized source is upsampled exactly 2x.
 * With j->stream (an output larger than the caches, rows 64-byte aligned), 16 pixels at a time are
 * put together on the stack (16 pixels = a whole number of cache lines) and streamed out whole: no
 * read for ownership of the output's lines. */
#define HR__RCAT_NT_MAX_C 128
static void resize_cat_pair(void *ctx, size_t k) {
  const resize_job *j = ctx;
  int64_t OW = j->o->dims[2], OS = j->ostride, x = 0;
  float *o0 = (float *)j->o->data + ((int64_t)(2 * k) - j->row0) * OW * OS, *o1 = o0 + OW * OS;
  if (j->stream) {
    _Alignas(64) float buf[2][16 * HR__RCAT_NT_MAX_C];
    for (; x + 16 <= OW; x += 16) {
      resize_cat_cols(j, (int64_t)k, x, x + 16, buf[0], buf[1]);
      hr__k_stream_copy(o0 + x * OS, buf[0], 16 * OS);
      hr__k_stream_copy(o1 + x * OS, buf[1], 16 * OS);
    }
    hr__k_stream_fence();
  }
  if (x < OW) resize_cat_cols(j, (int64_t)k, x, OW, o0 + x * OS, o1 + x * OS);
}

/* Rows 2k and 2k+1 of hr__k_resize on an exact 2x upsampling (one image of the batch). */
static void resize_pair(void *ctx, size_t k) {
  const resize_job *j = ctx;
  int64_t OW = j->o->dims[2], OS = j->ostride;
  float *o0 = (float *)j->o->data + (int64_t)(2 * k) * OW * OS + j->ooff;
  up2_pair(j->x->data, j->x->dims[1], j->x->dims[2], j->x->dims[3], (int64_t)k, 0, j->x->dims[2], OS, o0, o0 + OW * OS);
}

/* One output row of hr__k_resize_cat: each source's channels at its offset within the pixel,
 * resized (the row's taps computed as resize_row does) or copied. */
static void resize_cat_row(void *ctx, size_t oy) {
  const resize_job *j = ctx;
  int64_t OW = j->o->dims[2], OS = j->ostride;
  float *orow = (float *)j->o->data + ((int64_t)oy - j->row0) * OW * OS;
  for (int k = 0; k < j->n_src; k++) {
    const hr__k_cat_src *c = &j->src[k];
    if (c->resize) {
      int64_t H = c->h;
      float f = ((float)oy + 0.5f) * j->sy - 0.5f, fl = floorf(f);
      int64_t y0 = fl < 0 ? 0 : (int64_t)fl, y1 = (int64_t)ceilf(f);
      if (y1 > H - 1) y1 = H - 1;
      if (y1 < 0) y1 = 0;
      resize_px_any(j->r, c->data + y0 * c->w * c->c, c->data + y1 * c->w * c->c, c->c, OW, OS, f - fl, orow + c->off);
    } else {
      const float *sp = c->data + (int64_t)oy * OW * c->c;
      float *dp = orow + c->off;
      for (int64_t ox = 0; ox < OW; ox++, sp += c->c, dp += OS) copy_elems(dp, sp, c->c, 4);
    }
  }
}

/* hr__k_resize_cat's job for output o; returns 1 where every resized source is an exact 2x (rows in pairs) */
static int resize_cat_job(const hr__resize *r, const hr__k_cat_src *src, int n_src, hr__tensor *o, resize_job *j) {
  const int64_t vh = r->oh ? r->oh : o->dims[1];   /* the resize's own output height (a crop's is larger) */
  float sy = 1.f;
  for (int k = 0; k < n_src; k++) if (src[k].resize) sy = (float)src[k].h / (float)vh;
  *j = (resize_job){r, NULL, o, sy, 0, o->dims[3], src, n_src, 0, 0};
  int up2 = o->dims[1] % 2 == 0 && o->dims[2] % 2 == 0 && vh == o->dims[1] && r->ow == o->dims[2];
  for (int k = 0; k < n_src; k++)
    if (src[k].resize && (2 * src[k].h != o->dims[1] || 2 * src[k].w != o->dims[2])) up2 = 0;
  return up2;
}

void hr__k_resize_cat(pthreadpool_t pool, const hr__resize *r, const hr__k_cat_src *src, int n_src, hr__tensor *o) {
  resize_job j;
  const int up2 = resize_cat_job(r, src, n_src, o, &j);
  /* streamed when the output is larger than the caches would keep for its reader anyway (16 MB),
   * every row 64-byte aligned (the tensor's start, and a row of OW x OS floats a multiple of 16:
   * _mm512_stream_ps faults on anything else) and the CPU can */
  int64_t obytes = (int64_t)sizeof(float) * o->dims[1] * o->dims[2] * o->dims[3];
  j.stream = up2 && obytes >= ((int64_t)16 << 20) && o->dims[3] <= HR__RCAT_NT_MAX_C && ((uintptr_t)o->data & 63) == 0 &&
             (o->dims[2] * j.ostride) % 16 == 0 && hr__k_stream_ok();
  if (up2) pthreadpool_parallelize_1d(pool, resize_cat_pair, &j, (size_t)o->dims[1] / 2, 0);
  else pthreadpool_parallelize_1d(pool, resize_cat_row, &j, (size_t)o->dims[1], 0);
}

void hr__k_resize_cat_rows(const hr__resize *r, const hr__k_cat_src *src, int n_src, const hr__tensor *o, int64_t y0, int64_t y1,
                           float *dst) {
  resize_job j;
  hr__tensor t = *o;
  t.data = dst;
  const int up2 = resize_cat_job(r, src, n_src, &t, &j);
  j.row0 = y0;
  int64_t y = y0;
  if (up2 && (y & 1) && y < y1) resize_cat_row(&j, (size_t)y++);
  for (; up2 && y + 2 <= y1; y += 2) resize_cat_pair(&j, (size_t)(y / 2));
  for (; y < y1; y++) resize_cat_row(&j, (size_t)y);
}

void hr__k_resize(pthreadpool_t pool, const hr__resize *r, const hr__tensor *x, hr__tensor *o, int out_c_off, int out_c_total) {
  int64_t os = out_c_total > 0 ? out_c_total : x->dims[3];
  resize_job j = {r, x, o, (float)x->dims[1] / (float)o->dims[1], out_c_total > 0 ? out_c_off : 0, os, NULL, 0, 0, 0};
  for (int64_t b = 0; b < x->dims[0]; b++) {
    hr__tensor xb = *x, ob = *o;
    xb.data = (float *)x->data + b * x->dims[1] * x->dims[2] * x->dims[3];
    ob.data = (float *)o->data + b * o->dims[1] * o->dims[2] * os;
    j.x = &xb; j.o = &ob;
    if (2 * x->dims[1] == o->dims[1] && 2 * x->dims[2] == o->dims[2])
      pthreadpool_parallelize_1d(pool, resize_pair, &j, (size_t)x->dims[1], 0);
    else if (pool) pthreadpool_parallelize_1d(pool, resize_row, &j, (size_t)o->dims[1], 0);
    else for (int64_t y = 0; y < o->dims[1]; y++) resize_row(&j, (size_t)y);
  }
}

float *hr__dw1d_expand(const hr__attrs *a, const hr__tensor *x, const hr__tensor *w, const hr__tensor *o) {
  int valid = a->padding == HR_PAD_VALID ||
              (a->padding == HR_PAD_EXPLICIT && !(a->explicit_pad[2] | a->explicit_pad[3] | a->explicit_pad[4] | a->explicit_pad[5]));
  if (!valid || x->dims[0] != 1) return NULL;
  int64_t KH = w->dims[0], KW = w->dims[1], C = x->dims[3], n = o->dims[2] * C;
  float *e = malloc(sizeof(float) * (size_t)(KH * KW * n));
  if (!e) return NULL;
  const float *wt = w->data;
  for (int64_t k = 0; k < KH * KW; k++)
    for (int64_t i = 0; i < n; i++) e[k * n + i] = wt[k * C + i % C];
  return e;
}

/* ---- AvgPool, mean over channels, a binary op with a per-channel operand ---- */
typedef struct pool_job { const hr__attrs *a; const hr__tensor *x; hr__tensor *o; int pt, pl; } pool_job;

/* One output row of the reference AvgPool (graph/ops_ref.c), each channel summed in the same
 * order: window rows, then columns, from 0; divided by the count of taps inside the image. */
static void avgpool_row(void *ctx, size_t row) {
  const pool_job *j = ctx;
  int64_t H = j->x->dims[1], W = j->x->dims[2], C = j->x->dims[3], OH = j->o->dims[1], OW = j->o->dims[2];
  int64_t b = (int64_t)row / OH, oy = (int64_t)row % OH;
  int KH = j->a->ksize[1], KW = j->a->ksize[2], SH = j->a->strides[1], SW = j->a->strides[2];
  int64_t y0 = oy * SH - j->pt, y1 = y0 + KH;
  if (y0 < 0) y0 = 0;
  if (y1 > H) y1 = H;
  const float *X = (const float *)j->x->data + b * H * W * C;
  float *op = (float *)j->o->data + (b * OH + oy) * OW * C;
  if (KH == 2 && KW == 2 && SH == 2 && SW == 2 && y1 - y0 == 2 && !j->pl) {
    /* 2x2 windows, stride 2, this row inside the image: the same sums, no index arithmetic */
    const float *ra = X + y0 * W * C, *rb = ra + W * C;
    int64_t full = W / 2 < OW ? W / 2 : OW;
    for (int64_t ox = 0; ox < full; ox++, op += C, ra += 2 * C, rb += 2 * C)
      for (int64_t c = 0; c < C; c++) {
        float acc = 0;
        acc += ra[c]; acc += ra[C + c]; acc += rb[c]; acc += rb[C + c];
        op[c] = acc / 4.f;
      }
    if (full == OW) return;
    /* a last column that reads one pixel: the general loop below */
    for (int64_t ox = full; ox < OW; ox++, op += C) {
      int64_t x0 = ox * SW, x1 = x0 + KW > W ? W : x0 + KW;
      float den = (float)(2 * (x1 - x0));
      for (int64_t c = 0; c < C; c++) {
        float acc = 0;
        for (int64_t iy = y0; iy < y1; iy++)
          for (int64_t ix = x0; ix < x1; ix++) acc += X[(iy * W + ix) * C + c];
        op[c] = acc / den;
      }
    }
    return;
  }
  for (int64_t ox = 0; ox < OW; ox++, op += C) {
    int64_t x0 = ox * SW - j->pl, x1 = x0 + KW;
    if (x0 < 0) x0 = 0;
    if (x1 > W) x1 = W;
    int cnt = (int)((y1 - y0) * (x1 - x0));
    float den = (float)(cnt > 0 ? cnt : 1);
    for (int64_t c = 0; c < C; c++) {
      float acc = 0;
      for (int64_t iy = y0; iy < y1; iy++)
        for (int64_t ix = x0; ix < x1; ix++) acc += X[(iy * W + ix) * C + c];
      op[c] = acc / den;
    }
  }
}

void hr__k_avgpool(pthreadpool_t pool, const hr__attrs *a, const hr__tensor *x, hr__tensor *o) {
  pool_job j = {a, x, o, 0, 0};
  int64_t t;
  hr__conv_geom(a->padding, NULL, x->dims[1], a->ksize[1], a->strides[1], 1, &t, &j.pt);
  hr__conv_geom(a->padding, NULL, x->dims[2], a->ksize[2], a->strides[2], 1, &t, &j.pl);
  pthreadpool_parallelize_1d(pool, avgpool_row, &j, (size_t)(o->dims[0] * o->dims[1]), 0);
}

typedef struct meanc_job { const float *x; float *y; int64_t C; } meanc_job;
static void meanc_tile(void *ctx, size_t i0, size_t n) {
  const meanc_job *j = ctx;
  const float *x = j->x + (int64_t)i0 * j->C;
  float *y = j->y + i0;
  float cnt = (float)j->C;
  for (int64_t i = 0; i < (int64_t)n; i++, x += j->C) {
    float s = 0;
    for (int64_t c = 0; c < j->C; c++) s += x[c];
    y[i] = s / cnt;
  }
}

void hr__k_mean_c(pthreadpool_t pool, const float *x, float *y, int64_t pixels, int64_t C) {
  meanc_job j = {x, y, C};
  pthreadpool_parallelize_1d_tile_1d(pool, meanc_tile, &j, (size_t)pixels, HR__EW_TILE, 0);
}

typedef struct bcast_job { const float *x, *v, *v2; float *y; int64_t C, L; int op, v_first, op2, v2_first, hswish; } bcast_job;

/* y = x op v over n floats, v given repeated to the length of a block (L = a multiple of C; n a
 * multiple of L except the last block): each output is one IEEE operation, as one by one. */
#define HR__BCAST_LOOP(EXPR)                                 \
  for (int64_t i = 0; i < n; i += L) {                       \
    int64_t e = n - i < L ? n - i : L;                       \
    for (int64_t c = 0; c < e; c++) {                        \
      float xv = x[i + c], vv = v[c];                        \
      y[i + c] = EXPR;                                       \
    }                                                        \
  }
HR__CLONES
static void bcast_run(const float *x, const float *restrict v, float *y, int64_t n, int64_t L, int op, int v_first) {
  switch (op) {
    case HR_OP_MUL: HR__BCAST_LOOP(xv * vv) break;
    case HR_OP_SUB: if (v_first) { HR__BCAST_LOOP(vv - xv) } else { HR__BCAST_LOOP(xv - vv) } break;
    case HR_OP_REALDIV: if (v_first) { HR__BCAST_LOOP(vv / xv) } else { HR__BCAST_LOOP(xv / vv) } break;
    default: HR__BCAST_LOOP(xv + vv) break;
  }
}
#undef HR__BCAST_LOOP
static void bcast_tile(void *ctx, size_t b0, size_t nb) {
  const bcast_job *j = ctx;
  int64_t i0 = (int64_t)b0 * j->L, n = (int64_t)nb * j->L, total = j->C; /* C holds the element count here */
  if (i0 + n > total) n = total - i0;
  bcast_run(j->x + i0, j->v, j->y + i0, n, j->L, j->op, j->v_first);
  if (j->v2) bcast_run(j->y + i0, j->v2, j->y + i0, n, j->L, j->op2, j->v2_first);
  if (j->hswish) hr__k_hswish(j->y + i0, n);
}

void hr__k_bcast_c(pthreadpool_t pool, const hr__k_bcast *b, const float *x, const float *v, const float *v2, float *y, int64_t n) {
  bcast_job j = {x, v, v2, y, n, b->L, b->op, b->v_first, b->op2, b->v2_first, b->hswish};
  int64_t blocks = (n + b->L - 1) / b->L, per = (HR__EW_TILE + b->L - 1) / b->L;
  pthreadpool_parallelize_1d_tile_1d(pool, bcast_tile, &j, (size_t)blocks, (size_t)per, 0);
}

typedef struct binary_job { const float *a, *b; float *y; int64_t n; int op; } binary_job;
/* y = a op b element by element: one IEEE operation each (y may be a or b exactly). */
#define HR__BIN_LOOP(EXPR) for (int64_t i = 0; i < n; i++) { float av = a[i], bv = b[i]; y[i] = EXPR; }
HR__CLONES
static void binary_run(const float *a, const float *b, float *y, int64_t n, int op) {
  switch (op) {
    case HR_OP_MUL: HR__BIN_LOOP(av * bv) break;
    case HR_OP_SUB: HR__BIN_LOOP(av - bv) break;
    case HR_OP_REALDIV: HR__BIN_LOOP(av / bv) break;
    default: HR__BIN_LOOP(av + bv) break;
  }
}
#undef HR__BIN_LOOP
static void binary_tile(void *ctx, size_t i0, size_t n) {
  const binary_job *j = ctx;
  binary_run(j->a + i0, j->b + i0, j->y + i0, (int64_t)n, j->op);
}

void hr__k_binary(pthreadpool_t pool, int op, const float *a, const float *b, float *y, int64_t n) {
  binary_job j = {a, b, y, n, op};
  pthreadpool_parallelize_1d_tile_1d(pool, binary_tile, &j, (size_t)n, HR__EW_TILE, 0);
}

/* ---- the low-resolution guided filter in one pass per row ---- */
hr_status hr__fgf_lr_init(hr__fgf_lr_k *g, int H, int W, int KH, int KW, const float *const *wv4, const float *const *wh4, float eps,
                          int chunks) {
  memset(g, 0, sizeof *g);
  g->H = H; g->W = W; g->KH = KH; g->KW = KW; g->OH = H - KH + 1; g->OW = W - KW + 1; g->eps = eps;
  g->chunks = chunks < 1 ? 1 : chunks;
  if (g->OH < 1 || g->OW < 1) return HR_EINVAL;
  size_t nv = (size_t)4 * KH * 16, nh = (size_t)4 * KW * 16;
  g->per_chunk = ((size_t)KH * W * 4 + (size_t)4 * W * 4 + (size_t)4 * g->OW * 4 + 15) & ~(size_t)15;
  g->mem_bytes = sizeof(float) * (nv + nh + g->per_chunk * (size_t)g->chunks) + 64;
  g->mem = malloc(g->mem_bytes);
  if (!g->mem) { g->mem_bytes = 0; return HR_ENOMEM; }
  float *m = (float *)(((uintptr_t)g->mem + 63) & ~(uintptr_t)63);
  g->wv = m; g->wh = m + nv; g->scratch = m + nv + nh;
  for (int q = 0; q < 4; q++) {
    for (int k = 0; k < KH; k++)
      for (int i = 0; i < 16; i++) g->wv[((size_t)q * KH + k) * 16 + i] = wv4[q][k * 4 + (i & 3)];
    for (int k = 0; k < KW; k++)
      for (int i = 0; i < 16; i++) g->wh[((size_t)q * KW + k) * 16 + i] = wh4[q][k * 4 + (i & 3)];
  }
  return HR_OK;
}

void hr__fgf_lr_free(hr__fgf_lr_k *g) { free(g->mem); memset(g, 0, sizeof *g); }

/* One tap of a box pass over a row of 4-channel pixels: acc[i] += w[i % 4] * v[i] (accumulated
 * tap after tap from 0, the order the depthwise kernel sums in); w16 holds the tap's 4 weights
 * repeated 4 times, so whole blocks of 16 vectorise. */
HR__CLONES
static void lr_tap(float *restrict acc, const float *restrict w16, const float *restrict v, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    for (int l = 0; l < 16; l++) acc[i + l] += w16[l] * v[i + l];
  for (; i < n; i++) acc[i] += w16[i & 15] * v[i];
}
HR__CLONES
static void lr_tap_prod(float *restrict acc, const float *restrict w16, const float *restrict a, const float *restrict b, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    for (int l = 0; l < 16; l++) {
      float v = a[i + l] * b[i + l];
      acc[i + l] += w16[l] * v;
    }
  for (; i < n; i++) {
    float v = a[i] * b[i];
    acc[i] += w16[i & 15] * v;
  }
}
/* The guided filter's coefficients from the four box means (x*y, x, y, x*x):
 * A = (mxy - mx*my) / (mxx + (eps - mx*mx)), b = my - A*mx, one rounding per operation in the
 * order of the model's own ops (the fused kernels give the plain engine's bits). Every coefficient
 * kernel here takes it from this one place. */
static inline __attribute__((always_inline)) void lr_ab(float mxy, float mx, float my, float mxx, float eps, float *a, float *b) {
  float p1 = mx * my, cxy = mxy - p1, mx2 = mx * mx, e = eps - mx2, d = mxx + e;
  float av = cxy / d, am = av * mx;
  *a = av;
  *b = my - am;
}
/* lr_ab over a row. */
HR__CLONES
static void lr_coef(const float *restrict hxy, const float *restrict hx, const float *restrict hy, const float *restrict hxx, int64_t n,
                    float eps, float *restrict A, float *restrict B) {
  for (int64_t i = 0; i < n; i++) lr_ab(hxy[i], hx[i], hy[i], hxx[i], eps, &A[i], &B[i]);
}

/* The vertical pass of the four boxes over a row, the taps summed in registers: v[q][i] = 0 +
 * w[q][0] t_q(0)[i] + w[q][1] t_q(1)[i] + ... in tap order (each product rounded, then each sum:
 * the order and roundings of lr_tap / lr_tap_prod tap after tap, without storing the partial sums),
 * t_0 = x*y, t_1 = x, t_2 = y, t_3 = x*x; xs[k], ys[k] the rows of tap k. */
#define HR__LR_KMAX 8
HR__INLINE void lr_vert_body(float *restrict v, const float *restrict wv, const float *const *xs, const float *const *ys,
                                                               int KH, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    float a0[16] = {0}, a1[16] = {0}, a2[16] = {0}, a3[16] = {0};
    for (int k = 0; k < KH; k++) {
      const float *restrict x = xs[k] + i, *restrict y = ys[k] + i;
      const float *restrict w0 = wv + (size_t)(0 * KH + k) * 16, *restrict w1 = wv + (size_t)(1 * KH + k) * 16;
      const float *restrict w2 = wv + (size_t)(2 * KH + k) * 16, *restrict w3 = wv + (size_t)(3 * KH + k) * 16;
      for (int l = 0; l < 16; l++) {
        float xy = x[l] * y[l], xx = x[l] * x[l];
        a0[l] += w0[l] * xy;
        a1[l] += w1[l] * x[l];
        a2[l] += w2[l] * y[l];
        a3[l] += w3[l] * xx;
      }
    }
    for (int l = 0; l < 16; l++) { v[i + l] = a0[l]; v[n + i + l] = a1[l]; v[2 * n + i + l] = a2[l]; v[3 * n + i + l] = a3[l]; }
  }
  for (; i < n; i++) {
    float a0 = 0, a1 = 0, a2 = 0, a3 = 0;
    for (int k = 0; k < KH; k++) {
      float x = xs[k][i], y = ys[k][i], xy = x * y, xx = x * x;
      a0 += wv[(size_t)(0 * KH + k) * 16 + (i & 15)] * xy;
      a1 += wv[(size_t)(1 * KH + k) * 16 + (i & 15)] * x;
      a2 += wv[(size_t)(2 * KH + k) * 16 + (i & 15)] * y;
      a3 += wv[(size_t)(3 * KH + k) * 16 + (i & 15)] * xx;
    }
    v[i] = a0; v[n + i] = a1; v[2 * n + i] = a2; v[3 * n + i] = a3;
  }
}

/* The box of RVM's guided filter is 3 taps: the loop over them unrolled and the weights kept in
 * registers. */
HR__CLONES static void lr_vert_3(float *restrict v, const float *restrict wv, const float *const *xs, const float *const *ys, int64_t n) {
  lr_vert_body(v, wv, xs, ys, 3, n);
}
HR__CLONES static void lr_vert_k(float *restrict v, const float *restrict wv, const float *const *xs, const float *const *ys, int KH, int64_t n) {
  lr_vert_body(v, wv, xs, ys, KH, n);
}
static void lr_vert(float *v, const float *wv, const float *const *xs, const float *const *ys, int KH, int64_t n) {
  if (KH == 3) lr_vert_3(v, wv, xs, ys, n);
  else lr_vert_k(v, wv, xs, ys, KH, n);
}

/* The horizontal pass (tap k reads 4k floats further: the next pixel), summed in registers in tap
 * order as lr_tap does, and lr_coef on the four sums: A and b for no floats. */
static inline float lr_hsum(const float *restrict w16, const float *restrict v, int KW, int64_t i, int l) {
  float a = 0;
  for (int k = 0; k < KW; k++) a += w16[(size_t)k * 16 + l] * v[i + 4 * k];
  return a;
}
HR__INLINE void lr_horiz_coef_body(const float *restrict v, int64_t n, const float *restrict wh, int KW,
                                                                     int64_t no, float eps, float *restrict A, float *restrict B) {
  const float *restrict wq[4] = {wh, wh + (size_t)KW * 16, wh + (size_t)2 * KW * 16, wh + (size_t)3 * KW * 16};
  int64_t i = 0;
  for (; i + 16 <= no; i += 16) {
    float h0[16] = {0}, h1[16] = {0}, h2[16] = {0}, h3[16] = {0};
    for (int k = 0; k < KW; k++) {
      const float *restrict vv = v + i + 4 * k;
      const float *restrict w0 = wq[0] + (size_t)k * 16, *restrict w1 = wq[1] + (size_t)k * 16;
      const float *restrict w2 = wq[2] + (size_t)k * 16, *restrict w3 = wq[3] + (size_t)k * 16;
      for (int l = 0; l < 16; l++) {
        h0[l] += w0[l] * vv[l];
        h1[l] += w1[l] * vv[n + l];
        h2[l] += w2[l] * vv[2 * n + l];
        h3[l] += w3[l] * vv[3 * n + l];
      }
    }
    for (int l = 0; l < 16; l++) lr_ab(h0[l], h1[l], h2[l], h3[l], eps, &A[i + l], &B[i + l]);
  }
  for (; i < no; i++) {
    float hxy = lr_hsum(wq[0], v, KW, i, (int)(i & 15)), hx = lr_hsum(wq[1], v + n, KW, i, (int)(i & 15));
    float hy = lr_hsum(wq[2], v + 2 * n, KW, i, (int)(i & 15)), hxx = lr_hsum(wq[3], v + 3 * n, KW, i, (int)(i & 15));
    lr_ab(hxy, hx, hy, hxx, eps, &A[i], &B[i]);
  }
}

HR__CLONES static void lr_horiz_coef_3(const float *restrict v, int64_t n, const float *restrict wh, int64_t no, float eps, float *restrict A,
                                       float *restrict B) {
  lr_horiz_coef_body(v, n, wh, 3, no, eps, A, B);
}
HR__CLONES static void lr_horiz_coef_k(const float *restrict v, int64_t n, const float *restrict wh, int KW, int64_t no, float eps,
                                       float *restrict A, float *restrict B) {
  lr_horiz_coef_body(v, n, wh, KW, no, eps, A, B);
}
static void lr_horiz_coef(const float *v, int64_t n, const float *wh, int KW, int64_t no, float eps, float *A, float *B) {
  if (KW == 3) lr_horiz_coef_3(v, n, wh, no, eps, A, B);
  else lr_horiz_coef_k(v, n, wh, KW, no, eps, A, B);
}

/* The guidance's row as 4-channel pixels: R, G, B and their mean (0 + R + G + B, over 3). */
HR__CLONES
static void lr_xrow_c(const float *restrict sp, float *restrict xp, int px, int W) {
  for (; px < W; px++) {
    float r = sp[3 * px], g = sp[3 * px + 1], b = sp[3 * px + 2], m = 0.f;
    m += r; m += g; m += b;
    xp[4 * px] = r; xp[4 * px + 1] = g; xp[4 * px + 2] = b; xp[4 * px + 3] = m / 3.f;
  }
}

static void lr_xrow(const float *sp, float *xp, int W) { lr_xrow_c(sp, xp, hr__k_lr_xrow(sp, xp, W), W); }

typedef struct lr_job { const hr__fgf_lr_k *g; const float *y, *src; float *A, *B; } lr_job;

/* alpha_only: channel 3 alone, each value by lr_chunk's operations on that channel, in its order
 * (the guidance's mean as lr_xrow_c makes it, the boxes summed from 0 tap after tap, vertically then
 * horizontally, lr_coef's formula), so the same bits with a quarter of the work. Rows are made
 * contiguous first (the mean, and y's channel 3: rings of KH rows, each made once) so that every
 * loop runs along a row. Scratch: the two rings, the four vertical sums (W floats each) and the four
 * horizontal ones (OW floats each). */
HR__CLONES
static void lr_alpha_rows(const float *restrict sp, const float *restrict yp, float *restrict xm, float *restrict ya, int W) {
  for (int px = 0; px < W; px++) {
    float m = 0.f;
    m += sp[3 * px]; m += sp[3 * px + 1]; m += sp[3 * px + 2];
    xm[px] = m / 3.f;
    ya[px] = yp[4 * px + 3];
  }
}
/* acc[q][i] += w[q] * t_q(i) over a row, t = (x*y, x, y, x*x); acc rows n apart */
HR__CLONES
static void lr_alpha_vtap(float *restrict acc, const float *restrict x, const float *restrict y, float w0, float w1, float w2, float w3, int n) {
  for (int i = 0; i < n; i++) {
    const float xy = x[i] * y[i], xx = x[i] * x[i];
    acc[i] += w0 * xy;
    acc[n + i] += w1 * x[i];
    acc[2 * n + i] += w2 * y[i];
    acc[3 * n + i] += w3 * xx;
  }
}
/* acc[q][i] += w[q] * v[q][i]: one horizontal tap (v already offset by it); acc rows n apart, v rows m apart */
HR__CLONES
static void lr_alpha_htap(float *restrict acc, const float *restrict v, float w0, float w1, float w2, float w3, int n, int m) {
  for (int i = 0; i < n; i++) {
    acc[i] += w0 * v[i];
    acc[n + i] += w1 * v[m + i];
    acc[2 * n + i] += w2 * v[2 * m + i];
    acc[3 * n + i] += w3 * v[3 * m + i];
  }
}
HR__CLONES
static void lr_alpha_coef(const float *restrict h, int n, float eps, float *restrict A, float *restrict B) {
  for (int i = 0; i < n; i++) lr_ab(h[i], h[n + i], h[2 * n + i], h[3 * n + i], eps, &A[i], &B[i]);
}
static void lr_chunk_alpha(const lr_job *j, size_t chunk) {
  const hr__fgf_lr_k *g = j->g;
  const int r0 = (int)((int64_t)g->OH * (int64_t)chunk / g->chunks), r1 = (int)((int64_t)g->OH * (int64_t)(chunk + 1) / g->chunks);
  const int W = g->W, OW = g->OW, KH = g->KH, KW = g->KW;
  float *xr = g->scratch + g->per_chunk * chunk, *yr = xr + (size_t)KH * W, *v = yr + (size_t)KH * W, *h = v + (size_t)4 * W;
  for (int oy = r0; oy < r1; oy++) {
    for (int k = oy == r0 ? 0 : KH - 1; k < KH; k++) {
      const int64_t iy = oy + k;
      lr_alpha_rows(j->src + iy * W * 3, j->y + iy * W * 4, xr + (size_t)(iy % KH) * W, yr + (size_t)(iy % KH) * W, W);
    }
    memset(v, 0, sizeof(float) * 4 * (size_t)W);
    for (int k = 0; k < KH; k++) {
      const size_t r = (size_t)((oy + k) % KH) * W;
      lr_alpha_vtap(v, xr + r, yr + r, g->wv[(size_t)(0 * KH + k) * 16 + 3], g->wv[(size_t)(1 * KH + k) * 16 + 3],
                    g->wv[(size_t)(2 * KH + k) * 16 + 3], g->wv[(size_t)(3 * KH + k) * 16 + 3], W);
    }
    memset(h, 0, sizeof(float) * 4 * (size_t)OW);
    for (int k = 0; k < KW; k++)
      lr_alpha_htap(h, v + k, g->wh[(size_t)(0 * KW + k) * 16 + 3], g->wh[(size_t)(1 * KW + k) * 16 + 3], g->wh[(size_t)(2 * KW + k) * 16 + 3],
                    g->wh[(size_t)(3 * KW + k) * 16 + 3], OW, W);
    lr_alpha_coef(h, OW, g->eps, j->A + (int64_t)oy * OW, j->B + (int64_t)oy * OW);   /* planes */
  }
}

static void lr_chunk(void *ctx, size_t chunk) {
  const lr_job *j = ctx;
  const hr__fgf_lr_k *g = j->g;
  if (g->alpha_only) { lr_chunk_alpha(j, chunk); return; }
  int r0 = (int)((int64_t)g->OH * (int64_t)chunk / g->chunks), r1 = (int)((int64_t)g->OH * (int64_t)(chunk + 1) / g->chunks);
  int64_t n = (int64_t)g->W * 4, no = (int64_t)g->OW * 4;
  int KH = g->KH, KW = g->KW;
  /* scratch: KH rows of x, the vertical sums (4 rows of n), the horizontal sums (4 rows of no) */
  float *xr = g->scratch + g->per_chunk * chunk, *v = xr + (size_t)KH * n, *h = v + 4 * n;
  /* x rows in a ring of KH: input row iy at slot iy % KH, each made once */
  for (int oy = r0; oy < r1; oy++) {
    for (int k = oy == r0 ? 0 : KH - 1; k < KH; k++) {
      const float *sp = j->src + (int64_t)(oy + k) * g->W * 3;
      float *xp = xr + (size_t)((oy + k) % KH) * n;
      lr_xrow(sp, xp, g->W);
    }
    if (KH <= HR__LR_KMAX) {
      /* vertical (x*y, x, y, x*x), then horizontal and the coefficients, sums kept in registers */
      const float *xs[HR__LR_KMAX], *ys[HR__LR_KMAX];
      for (int k = 0; k < KH; k++) { xs[k] = xr + (size_t)((oy + k) % KH) * n; ys[k] = j->y + (int64_t)(oy + k) * n; }
      lr_vert(v, g->wv, xs, ys, KH, n);
      lr_horiz_coef(v, n, g->wh, KW, no, g->eps, j->A + (int64_t)oy * no, j->B + (int64_t)oy * no);
      continue;
    }
    /* vertical: x*y, x, y, x*x */
    memset(v, 0, sizeof(float) * 4 * (size_t)n);
    for (int k = 0; k < KH; k++) {
      const float *xk = xr + (size_t)((oy + k) % KH) * n, *yk = j->y + (int64_t)(oy + k) * n;
      lr_tap_prod(v, g->wv + (size_t)(0 * KH + k) * 16, xk, yk, n);
      lr_tap(v + n, g->wv + (size_t)(1 * KH + k) * 16, xk, n);
      lr_tap(v + 2 * n, g->wv + (size_t)(2 * KH + k) * 16, yk, n);
      lr_tap_prod(v + 3 * n, g->wv + (size_t)(3 * KH + k) * 16, xk, xk, n);
    }
    /* horizontal */
    memset(h, 0, sizeof(float) * 4 * (size_t)no);
    for (int q = 0; q < 4; q++)
      for (int k = 0; k < KW; k++) lr_tap(h + q * no, g->wh + (size_t)(q * KW + k) * 16, v + q * n + 4 * k, no);
    lr_coef(h, h + no, h + 2 * no, h + 3 * no, no, g->eps, j->A + (int64_t)oy * no, j->B + (int64_t)oy * no);
  }
}

void hr__k_fgf_lr(pthreadpool_t pool, const hr__fgf_lr_k *g, const float *y, const float *src, float *A, float *b) {
  lr_job j = {g, y, src, A, b};
  pthreadpool_parallelize_1d(pool, lr_chunk, &j, (size_t)g->chunks, 0);
}

/* ---- a ConvGRU's gates ---- */
HR__CLONES
static void gates_px(const hr__k_gates *g, const float *rzp, int64_t p0, int64_t np) {
  /* the offsets and k as locals, each output through its own restrict pointer: read through g in
   * the loop, GCC vectorised nothing (one scalar element at a time, 17-135 ns a pixel on RVM) */
  const int64_t C = g->C, C2 = 2 * C, CC = g->cat_c;
  const float k = g->k;
  for (int64_t p = p0; p < p0 + np; p++, rzp += C2) {
    const float *restrict zs = rzp + g->z_off, *restrict rs = rzp + g->r_off;
    const float *restrict h = g->h + p * C, *restrict h2 = g->h2 + p * C, *restrict b = g->b + p * C;
    float *restrict z = g->z + p * C, *restrict omzh = g->omzh + p * C;
    float *restrict rh = g->cat + p * CC + g->rh_off, *restrict cb = g->cat + p * CC + g->b_off;
    for (int64_t c = 0; c < C; c++) {
      const float zv = zs[c];
      z[c] = zv;
      omzh[c] = (k - zv) * h[c];
    }
    for (int64_t c = 0; c < C; c++) rh[c] = rs[c] * h2[c];
    for (int64_t c = 0; c < C; c++) cb[c] = b[c];
  }
}
static void gates_run(const hr__k_gates *g, int64_t p0, int64_t np) { gates_px(g, g->rz + p0 * 2 * g->C, p0, np); }

/* A Winograd epilogue's row: the sigmoid, then the gates, on the row's outputs (rz before the sigmoid) */
void hr__epi_gates(void *ctx, float *v, int64_t p0, int64_t np) {
  const hr__k_gates *g = ctx;
  sigmoid_inplace(v, np * 2 * g->C);
  gates_px(g, v, p0, np);
}
static void gates_tile(void *ctx, size_t p0, size_t np) { gates_run(ctx, (int64_t)p0, (int64_t)np); }

void hr__k_gru_gates(pthreadpool_t pool, const hr__k_gates *g) {
  pthreadpool_parallelize_1d_tile_1d(pool, gates_tile, (void *)g, (size_t)g->pixels, 256, 0);
}

/* ---- mean over the pixels (global average pooling) ---- */
#define HR__GAP_GROUP 1024 /* channels a task sums at most (its sums on the stack) */
#define HR__GAP_RUN 256    /* pixels a run at least */
#define HR__GAP_RUNS 8     /* runs at most */
typedef struct gap_job { const float *x; float *part; int64_t pixels, C, gw, ng; int runs; } gap_job;
int hr__k_gap_chunks(int64_t pixels) {
  int64_t r = pixels / HR__GAP_RUN;
  return (int)(r < 1 ? 1 : r > HR__GAP_RUNS ? HR__GAP_RUNS : r);
}
/* Channels [c0, c0 + gw) of the pixels of run t, pixel after pixel (rows read in order). */
HR__CLONES
static void gap_task(void *ctx, size_t task) {
  const gap_job *j = ctx;
  const int64_t t = (int64_t)task / j->ng, g = (int64_t)task % j->ng;
  const int64_t p0 = j->pixels * t / j->runs, p1 = j->pixels * (t + 1) / j->runs;
  int64_t c0 = g * j->gw, cn = j->C - c0 < j->gw ? j->C - c0 : j->gw;
  float acc[HR__GAP_GROUP];
  for (int64_t c = 0; c < cn; c++) acc[c] = 0.f;
  const float *x = j->x + p0 * j->C + c0;
  for (int64_t p = p0; p < p1; p++, x += j->C)
    for (int64_t c = 0; c < cn; c++) acc[c] += x[c];
  for (int64_t c = 0; c < cn; c++) j->part[t * j->C + c0 + c] = acc[c];
}

void hr__k_gap(pthreadpool_t pool, const float *x, float *y, int64_t pixels, int64_t C, int runs, float *part) {
  /* runs x groups of 16-channel multiples: about one task a thread, none wider than HR__GAP_GROUP */
  if (runs < 1) runs = 1;
  int64_t threads = pool ? (int64_t)pthreadpool_get_threads_count(pool) : 1, blocks = (C + 15) / 16;
  int64_t want = (threads + runs - 1) / runs, groups = want < blocks ? want : blocks;
  if (groups < (C + HR__GAP_GROUP - 1) / HR__GAP_GROUP) groups = (C + HR__GAP_GROUP - 1) / HR__GAP_GROUP;
  int64_t gw = (blocks + groups - 1) / groups * 16;
  if (gw > HR__GAP_GROUP) gw = HR__GAP_GROUP;
  const int64_t ng = (C + gw - 1) / gw;
  gap_job j = {x, part, pixels, C, gw, ng, runs};
  const size_t nt = (size_t)(runs * ng);
  if (pool && nt > 1) pthreadpool_parallelize_1d(pool, gap_task, &j, nt, 0);
  else for (size_t t = 0; t < nt; t++) gap_task(&j, t);
  const float n = (float)pixels;
  for (int64_t c = 0; c < C; c++) {
    float s = part[c];
    for (int t = 1; t < runs; t++) s += part[(int64_t)t * C + c];
    y[c] = s / n;
  }
}
