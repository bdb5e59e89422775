/* Winograd F(4x4, 3x3) convolution (wino.h). */
#include "session/wino.h"
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include "core/cpu.h"

#define NT HR__WINO_NT

static int64_t ru16(int64_t x) { return (x + 15) & ~(int64_t)15; }

int hr__wino_fits(int kh, int kw, int sh, int sw, int dh, int dw, int pt, int pb, int pl, int pr, int64_t groups, int64_t batch) {
  return kh == 3 && kw == 3 && sh == 1 && sw == 1 && dh == 1 && dw == 1 && pt == 1 && pb == 1 && pl == 1 && pr == 1 && groups == 1 &&
         batch == 1;
}

int64_t hr__wino_bytes(int64_t C, int64_t K) { return (36 * ru16(C) * ru16(K) + ru16(K)) * 4 + 64; }
/* a slot: V (36 x NT x Cp; after the products, an epilogue's block of 4 rows x 4 NT pixels x K
 * outputs, so at least 16 NT Kp floats), then M (36 x NT x Kp) */
static int64_t v_floats(int64_t C, int64_t K) { return 36 * ru16(C) > 16 * ru16(K) ? (int64_t)36 * NT * ru16(C) : (int64_t)16 * NT * ru16(K); }
int64_t hr__wino_scratch_floats(int64_t C, int64_t K) { return v_floats(C, K) + (int64_t)36 * NT * ru16(K); }

void hr__wino_free(hr__wino *w) {
  free(w->mem);
  memset(w, 0, sizeof *w);
}

static float *block_u(void *mem) { return (float *)(((uintptr_t)mem + 63) & ~(uintptr_t)63); }

void hr__wino_pack(const float *hwio, const float *bias, int C, int K, void *block) {
  const int Cp = (int)ru16(C), Kp = (int)ru16(K);
  float *U = block_u(block), *b = U + (size_t)36 * Cp * Kp;
  for (int k = 0; k < K; k++) b[k] = bias ? bias[k] : 0.f;
  /* U = G g G^T in double, rounded once */
  static const double G[6][3] = {{1. / 4, 0, 0}, {-1. / 6, -1. / 6, -1. / 6}, {-1. / 6, 1. / 6, -1. / 6},
                                 {1. / 24, 1. / 12, 1. / 6}, {1. / 24, -1. / 12, 1. / 6}, {0, 0, 1}};
  for (int c = 0; c < C; c++)
    for (int k = 0; k < K; k++) {
      double g[3][3], t[6][3];
      for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) g[i][j] = hwio[((size_t)(i * 3 + j) * C + c) * K + k];
      for (int i = 0; i < 6; i++)
        for (int j = 0; j < 3; j++) t[i][j] = G[i][0] * g[0][j] + G[i][1] * g[1][j] + G[i][2] * g[2][j];
      for (int i = 0; i < 6; i++)
        for (int j = 0; j < 6; j++)
          U[((size_t)(i * 6 + j) * Cp + c) * Kp + k] = (float)(t[i][0] * G[j][0] + t[i][1] * G[j][1] + t[i][2] * G[j][2]);
    }
}

void hr__wino_set(hr__wino *w, void *block, int C, int K, float lo, float hi) {
  memset(w, 0, sizeof *w);
  w->C = C; w->K = K; w->Cp = (int)ru16(C); w->Kp = (int)ru16(K);
  w->lo = lo; w->hi = hi;
  w->U = block_u(block);
  w->bias = w->U + (size_t)36 * w->Cp * w->Kp;
}

hr_status hr__wino_init(hr__wino *w, const float *hwio, const float *bias, int C, int K, float lo, float hi) {
  memset(w, 0, sizeof *w);
  void *mem = calloc(1, (size_t)hr__wino_bytes(C, K));
  if (!mem) return HR_ENOMEM;
  hr__wino_pack(hwio, bias, C, K, mem);
  hr__wino_set(w, mem, C, K, lo, hi);
  w->mem = mem;
  return HR_OK;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && !defined(HR_KERNELS_NO_AVX512)
#include <immintrin.h>
#define HR__AVX512 __attribute__((target("avx512f,avx2,fma")))
/* The products' accumulators must stay in registers: at -O2 GCC keeps the tile loops rolled and
 * the accumulator arrays in memory (half the speed, bench/wino_probe.c); unrolled they are scalars. */
#define HR__PRAGMA(x) _Pragma(#x)
#if defined(__clang__)
#define HR__UNROLL HR__PRAGMA(unroll)
#else
#define HR__UNROLL HR__PRAGMA(GCC unroll 16)
#endif

/* AVX2 and FMA (the AVX2 variant below), read once */
static int cpu_avx2_fma(void) {
  static _Atomic int v = -1;
  int r = atomic_load_explicit(&v, memory_order_relaxed);
  if (r < 0) {
    r = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    atomic_store_explicit(&v, r, memory_order_relaxed);
  }
  return r;
}

int hr__wino_ok(void) {
  const char *e = getenv("HR_WINO");
  return (hr__cpu_avx512f() || cpu_avx2_fma()) && !(e && !strcmp(e, "0"));
}

typedef struct wino_job {
  const hr__wino *w;
  const float *x;
  float *y, *scratch;
  int H, W, TW, bt, bpr, nblk, tasks, slots;   /* bt: tiles a block (NT, or 4 where blocks are few) */
  size_t per_slot, v_floats;
  const hr__wino_epi *epi;
  const hr__wino_pro *pro;      /* the input made row by row in each task (NULL: read from x) */
  const struct wino_isa *isa;   /* the variant's stages (AVX-512 or AVX2) */
  _Atomic uint64_t busy;   /* slots in use */
} wino_job;

/* B^T d for one column of 6 (d[0..5]): Lavin and Gray's input transform, the rows
 * [4 0 -5 0 1 0] [0 -4 -4 1 1 0] [0 4 -4 -1 1 0] [0 -2 -1 2 1 0] [0 2 -1 -2 1 0] [0 4 0 -5 0 1]. */
HR__AVX512 static inline __attribute__((always_inline)) void bt6(const __m512 *d, __m512 *t) {
  const __m512 f4 = _mm512_set1_ps(4.f), f5 = _mm512_set1_ps(5.f), f2 = _mm512_set1_ps(2.f);
  t[0] = _mm512_add_ps(_mm512_fmsub_ps(f4, d[0], _mm512_mul_ps(f5, d[2])), d[4]);
  const __m512 a = _mm512_fnmadd_ps(f4, d[2], d[4]), b = _mm512_fmsub_ps(f4, d[1], d[3]);
  t[1] = _mm512_sub_ps(a, b);
  t[2] = _mm512_add_ps(a, b);
  const __m512 c = _mm512_sub_ps(d[4], d[2]), e = _mm512_mul_ps(f2, _mm512_sub_ps(d[1], d[3]));
  t[3] = _mm512_sub_ps(c, e);
  t[4] = _mm512_add_ps(c, e);
  t[5] = _mm512_add_ps(_mm512_fmsub_ps(f4, d[1], _mm512_mul_ps(f5, d[3])), d[5]);
}

/* A^T m for one column of 6: the rows [1 1 1 1 1 0] [0 1 -1 2 -2 0] [0 1 1 4 4 0] [0 1 -1 8 -8 1]. */
HR__AVX512 static inline __attribute__((always_inline)) void at6(const __m512 *m, __m512 *y) {
  const __m512 s12 = _mm512_add_ps(m[1], m[2]), d12 = _mm512_sub_ps(m[1], m[2]);
  const __m512 s34 = _mm512_add_ps(m[3], m[4]), d34 = _mm512_sub_ps(m[3], m[4]);
  y[0] = _mm512_add_ps(_mm512_add_ps(m[0], s12), s34);
  y[1] = _mm512_fmadd_ps(_mm512_set1_ps(2.f), d34, d12);
  y[2] = _mm512_fmadd_ps(_mm512_set1_ps(4.f), s34, s12);
  y[3] = _mm512_add_ps(_mm512_fmadd_ps(_mm512_set1_ps(8.f), d34, d12), m[5]);
}

/* The block's input transform: V[pos][t][c] (pos = 6 r + j) for its first nt tiles (tiles the
 * products below use past the row's end read zeros; their outputs are not stored). Along the 6
 * input rows the block's 4 nt + 2 columns are read once each and B^T d made per column (q); then
 * each tile's (B^T d) B from its 6 columns of q (neighbouring tiles share 2). Rows and columns
 * outside the image read as zeros. */
HR__AVX512 static void in_transform(const wino_job *j, const float *const *row, int tx0, int nt, float *V) {
  const hr__wino *w = j->w;
  const int C = w->C, Cp = w->Cp, W = j->W;
  const size_t ps = (size_t)NT * Cp;
  const int x0 = 4 * tx0 - 1, ncol = 4 * nt + 2;
  __m512 q[6][4 * NT + 2];
  for (int c = 0; c < Cp; c += 16) {
    const __mmask16 m = C - c >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (C - c)) - 1);
    for (int col = 0; col < ncol; col++) {
      const int xx = x0 + col;
      __m512 d[6], o[6];
      const int in = xx >= 0 && xx < W;
      for (int r = 0; r < 6; r++) d[r] = row[r] && in ? _mm512_maskz_loadu_ps(m, row[r] + (size_t)xx * C + c) : _mm512_setzero_ps();
      bt6(d, o);
      for (int r = 0; r < 6; r++) q[r][col] = o[r];
    }
    for (int t = 0; t < nt; t++)
      for (int r = 0; r < 6; r++) {
        __m512 o[6];
        bt6(&q[r][4 * t], o);
        float *v = V + (size_t)(r * 6) * ps + (size_t)t * Cp + c;
        for (int col = 0; col < 6; col++) _mm512_store_ps(v + (size_t)col * ps, o[col]);
      }
  }
}

/* M[pos] (T x Kp) = V[pos] (T x Cp) U[pos] (Cp x Kp) for the 36 positions, the first T tiles of
 * the block (rows NT apart): 32 output channels at a time in registers (T x 2 accumulators), then
 * 16 where Kp is an odd multiple of 16. T is NT, or 4 for a row's last block of 4 tiles or fewer
 * (RVM at ratio 0.171: 41 tiles a row at 164 pixels, 5 blocks of 8 and one of 1, whose 7 empty
 * tiles were 15% of the products). */
HR__AVX512 static inline __attribute__((always_inline)) void products_t(const hr__wino *w, const float *V, float *M, const int T) {
  const int Cp = w->Cp, Kp = w->Kp, C = w->C;
  for (int p = 0; p < 36; p++) {
    const float *Vp = V + (size_t)p * NT * Cp, *Up = w->U + (size_t)p * Cp * Kp;
    float *Mp = M + (size_t)p * NT * Kp;
    int k0 = 0;
    for (; k0 + 32 <= Kp; k0 += 32) {
      __m512 a0[NT], a1[NT];
      HR__UNROLL for (int t = 0; t < T; t++) a0[t] = a1[t] = _mm512_setzero_ps();
      const float *u = Up + k0;
      for (int c = 0; c < C; c++, u += Kp) {
        const __m512 u0 = _mm512_load_ps(u), u1 = _mm512_load_ps(u + 16);
        HR__UNROLL for (int t = 0; t < T; t++) {
          const __m512 v = _mm512_set1_ps(Vp[(size_t)t * Cp + c]);
          a0[t] = _mm512_fmadd_ps(v, u0, a0[t]);
          a1[t] = _mm512_fmadd_ps(v, u1, a1[t]);
        }
      }
      HR__UNROLL for (int t = 0; t < T; t++) {
        _mm512_store_ps(Mp + (size_t)t * Kp + k0, a0[t]);
        _mm512_store_ps(Mp + (size_t)t * Kp + k0 + 16, a1[t]);
      }
    }
    if (k0 < Kp) {
      __m512 a0[NT];
      HR__UNROLL for (int t = 0; t < T; t++) a0[t] = _mm512_setzero_ps();
      const float *u = Up + k0;
      for (int c = 0; c < C; c++, u += Kp) {
        const __m512 u0 = _mm512_load_ps(u);
        HR__UNROLL for (int t = 0; t < T; t++) a0[t] = _mm512_fmadd_ps(_mm512_set1_ps(Vp[(size_t)t * Cp + c]), u0, a0[t]);
      }
      HR__UNROLL for (int t = 0; t < T; t++) _mm512_store_ps(Mp + (size_t)t * Kp + k0, a0[t]);
    }
  }
}
HR__AVX512 static void products8(const hr__wino *w, const float *V, float *M) { products_t(w, V, M, NT); }
HR__AVX512 static void products4(const hr__wino *w, const float *V, float *M) { products_t(w, V, M, 4); }

/* A^T m A for each of the block's nt tiles, plus the bias, clamped, stored where inside the image. */
HR__AVX512 static void out_transform(const wino_job *j, int ty, int tx0, int nt, const float *M, float *blk) {
  const hr__wino *w = j->w;
  const int K = w->K, Kp = w->Kp, H = j->H, W = j->W;
  const size_t ps = (size_t)NT * Kp;
  const __m512 lo = _mm512_set1_ps(w->lo), hi = _mm512_set1_ps(w->hi);
  for (int t = 0; t < nt; t++) {
    const int oy = 4 * ty, ox = 4 * (tx0 + t);
    for (int k = 0; k < K; k += 16) {
      const __mmask16 msk = K - k >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (K - k)) - 1);
      __m512 s[4][6];
      for (int col = 0; col < 6; col++) {
        __m512 m[6], y[4];
        for (int i = 0; i < 6; i++) m[i] = _mm512_load_ps(M + (size_t)(i * 6 + col) * ps + (size_t)t * Kp + k);
        at6(m, y);
        for (int i = 0; i < 4; i++) s[i][col] = y[i];
      }
      const __m512 b = _mm512_load_ps(w->bias + k);
      for (int i = 0; i < 4 && oy + i < H; i++) {
        __m512 y[4];
        at6(s[i], y);
        float *o = (blk ? blk + ((size_t)i * 4 * NT + 4 * (size_t)t) * K : j->y + ((size_t)(oy + i) * W + ox) * K) + k;
        for (int q = 0; q < 4 && ox + q < W; q++)
          _mm512_mask_storeu_ps(o + (size_t)q * K, msk, _mm512_min_ps(_mm512_max_ps(_mm512_add_ps(y[q], b), lo), hi));
      }
    }
  }
}

/* ---- the AVX2 variant (8 lanes, 16 registers): the same layout, transforms and block order; the
 * products 4 tiles x 16 output channels at a time. Its sums in the same order as the AVX-512
 * variant's, lane for lane, so the two give the same bits (test_kernels_wino under HR_NO_AVX512). */
#define HR__AVX2 __attribute__((target("avx2,fma")))
HR__AVX2 static inline __attribute__((always_inline)) void bt6_8(const __m256 *d, __m256 *t) {
  const __m256 f4 = _mm256_set1_ps(4.f), f5 = _mm256_set1_ps(5.f), f2 = _mm256_set1_ps(2.f);
  t[0] = _mm256_add_ps(_mm256_fmsub_ps(f4, d[0], _mm256_mul_ps(f5, d[2])), d[4]);
  const __m256 a = _mm256_fnmadd_ps(f4, d[2], d[4]), b = _mm256_fmsub_ps(f4, d[1], d[3]);
  t[1] = _mm256_sub_ps(a, b);
  t[2] = _mm256_add_ps(a, b);
  const __m256 c = _mm256_sub_ps(d[4], d[2]), e = _mm256_mul_ps(f2, _mm256_sub_ps(d[1], d[3]));
  t[3] = _mm256_sub_ps(c, e);
  t[4] = _mm256_add_ps(c, e);
  t[5] = _mm256_add_ps(_mm256_fmsub_ps(f4, d[1], _mm256_mul_ps(f5, d[3])), d[5]);
}
HR__AVX2 static inline __attribute__((always_inline)) void at6_8(const __m256 *m, __m256 *y) {
  const __m256 s12 = _mm256_add_ps(m[1], m[2]), d12 = _mm256_sub_ps(m[1], m[2]);
  const __m256 s34 = _mm256_add_ps(m[3], m[4]), d34 = _mm256_sub_ps(m[3], m[4]);
  y[0] = _mm256_add_ps(_mm256_add_ps(m[0], s12), s34);
  y[1] = _mm256_fmadd_ps(_mm256_set1_ps(2.f), d34, d12);
  y[2] = _mm256_fmadd_ps(_mm256_set1_ps(4.f), s34, s12);
  y[3] = _mm256_add_ps(_mm256_fmadd_ps(_mm256_set1_ps(8.f), d34, d12), m[5]);
}
/* lanes [0, n) on (n in 0..8) */
HR__AVX2 static inline __m256i lanes8(int n) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
HR__AVX2 static void in_transform8(const wino_job *j, const float *const *row, int tx0, int nt, float *V) {
  const hr__wino *w = j->w;
  const int C = w->C, Cp = w->Cp, W = j->W;
  const size_t ps = (size_t)NT * Cp;
  const int x0 = 4 * tx0 - 1, ncol = 4 * nt + 2;
  __m256 q[6][4 * NT + 2];
  for (int c = 0; c < Cp; c += 8) {
    const __m256i m = lanes8(C - c);
    for (int col = 0; col < ncol; col++) {
      const int xx = x0 + col;
      __m256 d[6], o[6];
      const int in = xx >= 0 && xx < W && c < C;
      for (int r = 0; r < 6; r++) d[r] = row[r] && in ? _mm256_maskload_ps(row[r] + (size_t)xx * C + c, m) : _mm256_setzero_ps();
      bt6_8(d, o);
      for (int r = 0; r < 6; r++) q[r][col] = o[r];
    }
    for (int t = 0; t < nt; t++)
      for (int r = 0; r < 6; r++) {
        __m256 o[6];
        bt6_8(&q[r][4 * t], o);
        float *v = V + (size_t)(r * 6) * ps + (size_t)t * Cp + c;
        for (int col = 0; col < 6; col++) _mm256_store_ps(v + (size_t)col * ps, o[col]);
      }
  }
}
/* the first T of the block's tiles from t0 on, 16 output channels at a time (Kp is a multiple of 16) */
HR__AVX2 static inline __attribute__((always_inline)) void products8_t(const hr__wino *w, const float *V, float *M, int t0, const int T) {
  const int Cp = w->Cp, Kp = w->Kp, C = w->C;
  for (int p = 0; p < 36; p++) {
    const float *Vp = V + (size_t)p * NT * Cp + (size_t)t0 * Cp, *Up = w->U + (size_t)p * Cp * Kp;
    float *Mp = M + (size_t)p * NT * Kp + (size_t)t0 * Kp;
    for (int k0 = 0; k0 < Kp; k0 += 16) {
      __m256 a0[4], a1[4];
      HR__UNROLL for (int t = 0; t < T; t++) a0[t] = a1[t] = _mm256_setzero_ps();
      const float *u = Up + k0;
      for (int c = 0; c < C; c++, u += Kp) {
        const __m256 u0 = _mm256_load_ps(u), u1 = _mm256_load_ps(u + 8);
        HR__UNROLL for (int t = 0; t < T; t++) {
          const __m256 v = _mm256_broadcast_ss(Vp + (size_t)t * Cp + c);
          a0[t] = _mm256_fmadd_ps(v, u0, a0[t]);
          a1[t] = _mm256_fmadd_ps(v, u1, a1[t]);
        }
      }
      HR__UNROLL for (int t = 0; t < T; t++) {
        _mm256_store_ps(Mp + (size_t)t * Kp + k0, a0[t]);
        _mm256_store_ps(Mp + (size_t)t * Kp + k0 + 8, a1[t]);
      }
    }
  }
}
HR__AVX2 static void products_avx2(const hr__wino *w, const float *V, float *M, int nv) {
  products8_t(w, V, M, 0, 4);
  if (nv > 4) products8_t(w, V, M, 4, 4);
}
HR__AVX2 static void out_transform8(const wino_job *j, int ty, int tx0, int nt, const float *M, float *blk) {
  const hr__wino *w = j->w;
  const int K = w->K, Kp = w->Kp, H = j->H, W = j->W;
  const size_t ps = (size_t)NT * Kp;
  const __m256 lo = _mm256_set1_ps(w->lo), hi = _mm256_set1_ps(w->hi);
  for (int t = 0; t < nt; t++) {
    const int oy = 4 * ty, ox = 4 * (tx0 + t);
    for (int k = 0; k < K; k += 8) {
      const __m256i msk = lanes8(K - k);
      __m256 s[4][6];
      for (int col = 0; col < 6; col++) {
        __m256 m[6], y[4];
        for (int i = 0; i < 6; i++) m[i] = _mm256_load_ps(M + (size_t)(i * 6 + col) * ps + (size_t)t * Kp + k);
        at6_8(m, y);
        for (int i = 0; i < 4; i++) s[i][col] = y[i];
      }
      const __m256 b = _mm256_load_ps(w->bias + k);
      for (int i = 0; i < 4 && oy + i < H; i++) {
        __m256 y[4];
        at6_8(s[i], y);
        float *o = (blk ? blk + ((size_t)i * 4 * NT + 4 * (size_t)t) * K : j->y + ((size_t)(oy + i) * W + ox) * K) + k;
        for (int q = 0; q < 4 && ox + q < W; q++)
          _mm256_maskstore_ps(o + (size_t)q * K, msk, _mm256_min_ps(_mm256_max_ps(_mm256_add_ps(y[q], b), lo), hi));
      }
    }
  }
}

/* A slot of the scratch for this task (wino_task), and back. */
static int take_slot(wino_job *j) {
  int q = 0;   /* a free slot: at most one task a thread runs at a time, so one is */
  for (;; q = (q + 1) % j->slots) {
    const uint64_t bit = (uint64_t)1 << q;
    if (!(atomic_fetch_or_explicit(&j->busy, bit, memory_order_acquire) & bit)) return q;
  }
}
static void give_slot(wino_job *j, int q) { atomic_fetch_and_explicit(&j->busy, ~((uint64_t)1 << q), memory_order_release); }

/* The block's output rows (out_transform made them in blk, 4 NT pixels a row) to the epilogue */
static void epi_rows(const wino_job *j, int ty, int tx0, int nt, float *blk) {
  const int oy = 4 * ty, ox = 4 * tx0, K = j->w->K;
  const int rows = j->H - oy < 4 ? j->H - oy : 4, cols = j->W - ox < 4 * nt ? j->W - ox : 4 * nt;
  for (int i = 0; i < rows; i++)
    j->epi->row(j->epi->ctx, blk + (size_t)i * 4 * NT * (size_t)K, (int64_t)(oy + i) * j->W + ox, cols);
}

/* One variant's three stages, for the task loop below */
typedef struct wino_isa {
  void (*in)(const wino_job *j, const float *const *row, int tx0, int nt, float *V);
  void (*products)(const hr__wino *w, const float *V, float *M, int nv);
  void (*out)(const wino_job *j, int ty, int tx0, int nt, const float *M, float *blk);
} wino_isa;
HR__AVX512 static void products512(const hr__wino *w, const float *V, float *M, int nv) {
  if (nv == 4) products4(w, V, M);
  else products8(w, V, M);
}
static const wino_isa isa512 = {in_transform, products512, out_transform};
static const wino_isa isa_avx2 = {in_transform8, products_avx2, out_transform8};

/* The 6 input rows tile row ty reads (NULL: outside the image), from x, or from a prologue's ring
 * (input row y at ring slot y mod 6) */
static void in_rows(const wino_job *j, const float *ring, int ty, const float **row) {
  const size_t rs = (size_t)j->W * (size_t)j->w->C;
  for (int r = 0; r < 6; r++) {
    const int y = 4 * ty - 1 + r;
    row[r] = y < 0 || y >= j->H ? NULL : ring ? ring + (size_t)(y % 6) * rs : j->x + (size_t)y * rs;
  }
}

/* Block bi (a tile row's blocks in order, then the next row's): transform, products, back */
static void do_block(const wino_job *j, const float *ring, size_t bi, float *V, float *M) {
  const wino_isa *isa = j->isa;
  const int ty = (int)(bi / (size_t)j->bpr), tx0 = (int)(bi % (size_t)j->bpr) * j->bt;
  const int nt = j->TW - tx0 < j->bt ? j->TW - tx0 : j->bt;
  const int nv = nt <= 4 ? 4 : NT;   /* the tiles the products make (the rest of the block unused) */
  const float *row[6];
  in_rows(j, ring, ty, row);
  isa->in(j, row, tx0, nv, V);
  isa->products(j->w, V, M, nv);
  isa->out(j, ty, tx0, nt, M, j->epi ? V : NULL);
  if (j->epi) epi_rows(j, ty, tx0, nt, V);
}

/* Input rows [y0, y1) into the ring (slot y mod 6), in runs that do not wrap */
static void pro_rows(const wino_job *j, float *ring, int y0, int y1) {
  const size_t rs = (size_t)j->W * (size_t)j->w->C;
  while (y0 < y1) {
    const int s = y0 % 6, n = y1 - y0 < 6 - s ? y1 - y0 : 6 - s;
    j->pro->rows(j->pro->ctx, y0, y0 + n, ring + (size_t)s * rs);
    y0 += n;
  }
}

/* A task: its range of blocks (with a prologue: of whole tile rows, each made before its blocks:
 * the rows the tile row before it made are still in the ring but for the 4 new ones), in its
 * thread's scratch slot */
static void wino_task(void *ctx, size_t task) {
  wino_job *j = ctx;
  const int q = take_slot(j);
  float *V = j->scratch + j->per_slot * (size_t)q, *M = V + j->v_floats;
  if (j->pro) {
    const int TH = (j->H + 3) / 4, ty0 = (int)((size_t)TH * task / (size_t)j->tasks), ty1 = (int)((size_t)TH * (task + 1) / (size_t)j->tasks);
    float *ring = j->pro->ring + j->pro->ring_stride * (size_t)q;
    int have = -1;   /* rows [.., have) made */
    for (int ty = ty0; ty < ty1; ty++) {
      const int lo = 4 * ty - 1 < 0 ? 0 : 4 * ty - 1, hi = 4 * ty + 5 > j->H ? j->H : 4 * ty + 5;
      pro_rows(j, ring, have > lo ? have : lo, hi);
      have = hi;
      for (size_t bi = (size_t)ty * (size_t)j->bpr; bi < (size_t)(ty + 1) * (size_t)j->bpr; bi++) do_block(j, ring, bi, V, M);
    }
  } else {
    const size_t b0 = (size_t)j->nblk * task / (size_t)j->tasks, b1 = (size_t)j->nblk * (task + 1) / (size_t)j->tasks;
    for (size_t bi = b0; bi < b1; bi++) do_block(j, NULL, bi, V, M);
  }
  give_slot(j, q);
}

void hr__k_wino(pthreadpool_t pool, const hr__wino *w, const float *x, float *y, int H, int W, float *scratch, int slots) {
  hr__k_wino_pro(pool, w, x, NULL, y, H, W, scratch, slots, NULL);
}
void hr__k_wino_epi(pthreadpool_t pool, const hr__wino *w, const float *x, float *y, int H, int W, float *scratch, int slots,
                    const hr__wino_epi *epi) {
  hr__k_wino_pro(pool, w, x, NULL, y, H, W, scratch, slots, epi);
}

/* HR_WINO_BT=8 (developer switch, A/B): blocks of NT tiles always, as before 2026-12-06 night */
static int small_blocks_off(void) {
  static _Atomic int v = -1;
  int r = atomic_load_explicit(&v, memory_order_relaxed);
  if (r < 0) {
    const char *e = getenv("HR_WINO_BT");
    r = e && !strcmp(e, "8");
    atomic_store_explicit(&v, r, memory_order_relaxed);
  }
  return r;
}

void hr__k_wino_pro(pthreadpool_t pool, const hr__wino *w, const float *x, const hr__wino_pro *pro, float *y, int H, int W,
                    float *scratch, int slots, const hr__wino_epi *epi) {
  const int threads = pool ? (int)pthreadpool_get_threads_count(pool) : 1;
  wino_job j = {.w = w, .x = x, .y = y, .scratch = scratch, .H = H, .W = W, .TW = (W + 3) / 4, .slots = slots < 1 ? 1 : slots > 64 ? 64 : slots,
                .per_slot = (size_t)hr__wino_scratch_floats(w->C, w->K),
                .v_floats = (size_t)v_floats(w->C, w->K), .epi = epi, .pro = pro};
  /* blocks of 4 tiles where blocks of NT would leave threads without one: the small images at
   * many threads (16 threads, RVM 1920x1440 r0.25: 23x30 has 6 blocks of 8; its convolutions scaled
   * 2.6-3.8x from 1 to 16 threads). Not where each thread has one (45x60: 24 blocks of 8, and
   * blocks of 4 were slower there). Each tile's sums are the same whatever block it is in
   * (products_t with T = 4 or 8), so the bits do not depend on it. */
  j.bt = NT;
  if ((j.TW + NT - 1) / NT * ((H + 3) / 4) < threads && !small_blocks_off()) j.bt = 4;
  j.bpr = (j.TW + j.bt - 1) / j.bt;
  j.nblk = j.bpr * ((H + 3) / 4);
  j.tasks = threads * HR__WINO_TASKS_PER_THREAD < j.nblk ? threads * HR__WINO_TASKS_PER_THREAD : j.nblk;
  if (pro && j.tasks > (H + 3) / 4) j.tasks = (H + 3) / 4;   /* whole tile rows a task */
  atomic_init(&j.busy, 0);
  j.isa = hr__cpu_avx512f() ? &isa512 : &isa_avx2;
  pthreadpool_parallelize_1d(pool, wino_task, &j, (size_t)j.tasks, 0);
}
#else
int hr__wino_ok(void) { return 0; }
void hr__k_wino_pro(pthreadpool_t pool, const hr__wino *w, const float *x, const hr__wino_pro *pro, float *y, int H, int W,
                    float *scratch, int slots, const hr__wino_epi *epi) {
  (void)pool; (void)w; (void)x; (void)pro; (void)y; (void)H; (void)W; (void)scratch; (void)slots; (void)epi;
}
void hr__k_wino(pthreadpool_t pool, const hr__wino *w, const float *x, float *y, int H, int W, float *scratch, int slots) {
  (void)pool; (void)w; (void)x; (void)y; (void)H; (void)W; (void)scratch; (void)slots;
}
void hr__k_wino_epi(pthreadpool_t pool, const hr__wino *w, const float *x, float *y, int H, int W, float *scratch, int slots,
                    const hr__wino_epi *epi) {
  (void)pool; (void)w; (void)x; (void)y; (void)H; (void)W; (void)scratch; (void)slots; (void)epi;
}
#endif
