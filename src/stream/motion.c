/* Coarse block-matching motion on the tail's low-resolution grid and the coefficients' warp (motion.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "stream/motion.h"

#define BS 8          /* block side, at every level */
#define MIN_SIDE 16   /* the coarsest level's shorter side is at least this */
#define MAX_LEVELS 4  /* 358 x 478 -> 44 x 59 at level 3 */
#define TOP_RANGE 6   /* the coarsest level's full search: +-TOP_RANGE */
#define LAMBDA 8      /* cost per grid pixel of vector length (L1), against a block's SAD (64 pixels) */

static size_t al64(size_t b) { return (b + 63) & ~(size_t)63; }

int hr__motion_format_ok(hr_pixfmt fmt) {
  switch (fmt) {
    case HR_PIX_NV12_FULL: case HR_PIX_NV12_VIDEO: case HR_PIX_I420_FULL: case HR_PIX_I420_VIDEO:
    case HR_PIX_BGRA: case HR_PIX_RGB24: case HR_PIX_GRAY8: case HR_PIX_RGBF32: return 1;
    default: return 0;
  }
}

void hr__motion_free(hr__motion *m) {
  if (!m) return;
  free(m->mem);
  memset(m, 0, sizeof *m);
}

/* block-field interpolation: block b's centre sits at b BS + (BS - 1) / 2 */
static void taps(float p, int nb, int32_t *b0, int32_t *b1, float *t) {
  float u = (p - (BS - 1) * 0.5f) / BS;
  if (u < 0) u = 0;
  if (u > nb - 1) u = (float)(nb - 1);
  int i = (int)u;
  if (i > nb - 2) i = nb - 2 < 0 ? 0 : nb - 2;
  *b0 = i; *b1 = i + 1 < nb ? i + 1 : i; *t = u - (float)i;
}

/* The grid's levels and blocks into m; the bytes of its block (0: a grid too small or too large). */
static size_t layout(hr__motion *m, int h, int w, int H, int W) {
  memset(m, 0, sizeof *m);
  if (h < MIN_SIDE || w < MIN_SIDE || h > H || w > W) return 0;
  m->h = h; m->w = w; m->H = H; m->W = W;
  m->lh[0] = h; m->lw[0] = w;
  m->levels = 1;
  while (m->levels < MAX_LEVELS && m->lh[m->levels - 1] / 2 >= MIN_SIDE && m->lw[m->levels - 1] / 2 >= MIN_SIDE) {
    m->lh[m->levels] = m->lh[m->levels - 1] / 2;
    m->lw[m->levels] = m->lw[m->levels - 1] / 2;
    m->levels++;
  }
  size_t bytes = 0;
  for (int l = 0; l < m->levels; l++) {
    m->bh[l] = (m->lh[l] + BS - 1) / BS; m->bw[l] = (m->lw[l] + BS - 1) / BS;
    bytes += 2 * al64((size_t)m->lh[l] * m->lw[l]);
    bytes += 2 * al64(sizeof(int16_t) * m->bh[l] * m->bw[l]);
  }
  const size_t nb = (size_t)m->bh[0] * m->bw[0];
  bytes += 2 * al64(sizeof(float) * nb) + al64(sizeof(int32_t) * (w + 1)) + al64(sizeof(int32_t) * (h + 1)) +
           al64(sizeof(uint16_t) * W) + 2 * al64(W) + 2 * al64(sizeof(float) * m->bh[0] * w) +
           2 * al64(sizeof(int32_t) * w) + 4 * al64(sizeof(float) * w) + 64;
  return bytes;
}

size_t hr__motion_bytes(int h, int w, int H, int W) {
  hr__motion m;
  return layout(&m, h, w, H, W);
}

hr_status hr__motion_init(hr__motion *m, int h, int w, int H, int W) {
  const size_t bytes = layout(m, h, w, H, W);
  if (!bytes) return HR_EINVAL;
  m->mem = calloc(1, bytes);
  if (!m->mem) return HR_ENOMEM;
  char *p = (char *)(((uintptr_t)m->mem + 63) & ~(uintptr_t)63);
#define TAKE(ptr, type, count) do { ptr = (type *)(void *)p; p += al64(sizeof(type) * (size_t)(count)); } while (0)
  for (int l = 0; l < m->levels; l++) {
    TAKE(m->cur[l], uint8_t, m->lh[l] * m->lw[l]); TAKE(m->ref[l], uint8_t, m->lh[l] * m->lw[l]);
    TAKE(m->vx[l], int16_t, m->bh[l] * m->bw[l]);
    TAKE(m->vy[l], int16_t, m->bh[l] * m->bw[l]);
  }
  const size_t nb = (size_t)m->bh[0] * m->bw[0];
  TAKE(m->fx, float, nb); TAKE(m->fy, float, nb);
  TAKE(m->lx0, int32_t, w + 1); TAKE(m->ly0, int32_t, h + 1);
  TAKE(m->rowsum, uint16_t, W); TAKE(m->rowlum, uint8_t, W); TAKE(m->rowsum2, uint8_t, W);
  TAKE(m->hx, float, m->bh[0] * w); TAKE(m->hy, float, m->bh[0] * w);
  TAKE(m->tc0, int32_t, w); TAKE(m->tc1, int32_t, w);
  TAKE(m->ttx, float, w); TAKE(m->rvx, float, w); TAKE(m->rvy, float, w); TAKE(m->rsc, float, w);
#undef TAKE
  for (int j = 0; j <= w; j++) m->lx0[j] = (int32_t)((int64_t)j * W / w);
  for (int i = 0; i <= h; i++) m->ly0[i] = (int32_t)((int64_t)i * H / h);
  for (int j = 0; j < w; j++) taps((float)j, m->bw[0], &m->tc0[j], &m->tc1[j], &m->ttx[j]);
  return HR_OK;
}


/* Row y's luma (W bytes): the Y plane in place, or converted into m->rowlum. */
static const uint8_t *luma_row(const hr__motion *m, const hr_frame *f, int y) {
  const uint8_t *row = (const uint8_t *)f->planes[0] + (ptrdiff_t)y * f->strides[0];
  uint8_t *o = m->rowlum;
  const int W = m->W;
  switch (f->fmt) {
    case HR_PIX_BGRA:
      for (int x = 0; x < W; x++) o[x] = (uint8_t)((row[4 * x] + 2 * row[4 * x + 1] + row[4 * x + 2] + 2) >> 2);
      return o;
    case HR_PIX_RGB24:
      for (int x = 0; x < W; x++) o[x] = (uint8_t)((row[3 * x] + 2 * row[3 * x + 1] + row[3 * x + 2] + 2) >> 2);
      return o;
    case HR_PIX_RGBF32: {
      const float *r = (const float *)(const void *)row;
      for (int x = 0; x < W; x++) {
        float v = (r[3 * x] + 2 * r[3 * x + 1] + r[3 * x + 2]) * (255.0f / 4.0f) + 0.5f;
        o[x] = (uint8_t)(v <= 0 ? 0 : v >= 255 ? 255 : v);
      }
      return o;
    }
    default: return row;   /* NV12, I420, GRAY8: the Y plane */
  }
}

void hr__motion_luma(const hr__motion *m, const hr_frame *f, uint8_t *out) {
  /* four samples a grid pixel: two rows and two columns of its footprint, half its size apart
   * (the estimate blurs the grid; reading every pixel costs 4x the time for the same vectors) */
  const int W = m->W, w = m->w;
  uint16_t *rs = m->rowsum;
  for (int i = 0; i < m->h; i++) {
    const int y0 = m->ly0[i], dy = (m->ly0[i + 1] - y0) / 2;
    const uint8_t *ra = luma_row(m, f, y0);
    if (ra == m->rowlum) { memcpy(m->rowsum2, ra, (size_t)W); ra = m->rowsum2; }   /* converted rows: keep the first */
    const uint8_t *rb = luma_row(m, f, y0 + dy);
    for (int x = 0; x < W; x++) rs[x] = (uint16_t)(ra[x] + rb[x]);
    uint8_t *o = out + (size_t)i * w;
    for (int j = 0; j < w; j++) {
      const int x0 = m->lx0[j], dx = (m->lx0[j + 1] - x0) / 2;
      o[j] = (uint8_t)((rs[x0] + rs[x0 + dx] + 2) >> 2);
    }
  }
}

/* a 3 x 3 binomial blur (1 2 1), borders replicated: less aliasing from the sampled grid, so that
 * SADs change smoothly with a sub-pixel shift. tmp: w uint16 */
static void blur(const uint8_t *in, uint8_t *out, int h, int w, uint16_t *tmp) {
  for (int i = 0; i < h; i++) {
    const uint8_t *a = in + (size_t)(i ? i - 1 : 0) * w, *b = in + (size_t)i * w, *c = in + (size_t)(i + 1 < h ? i + 1 : i) * w;
    uint8_t *o = out + (size_t)i * w;
    for (int j = 0; j < w; j++) tmp[j] = (uint16_t)(a[j] + 2 * b[j] + c[j]);
    o[0] = (uint8_t)((3 * tmp[0] + tmp[1] + 8) >> 4);
    for (int j = 1; j < w - 1; j++) o[j] = (uint8_t)((tmp[j - 1] + 2 * tmp[j] + tmp[j + 1] + 8) >> 4);
    o[w - 1] = (uint8_t)((tmp[w - 2] + 3 * tmp[w - 1] + 8) >> 4);
  }
}

static void halve(const uint8_t *in, int iw, uint8_t *out, int oh, int ow) {
  for (int i = 0; i < oh; i++) {
    const uint8_t *a = in + (size_t)(2 * i) * iw, *b = a + iw;
    uint8_t *o = out + (size_t)i * ow;
    for (int j = 0; j < ow; j++) o[j] = (uint8_t)((a[2 * j] + a[2 * j + 1] + b[2 * j] + b[2 * j + 1] + 2) >> 2);
  }
}

#if defined(__SSE2__)
#include <emmintrin.h>
static unsigned sad8(const uint8_t *a, const uint8_t *b, int stride) {
  __m128i acc = _mm_setzero_si128();
  for (int r = 0; r < BS; r += 2, a += 2 * stride, b += 2 * stride) {
    const __m128i x = _mm_unpacklo_epi64(_mm_loadl_epi64((const __m128i *)(const void *)a),
                                         _mm_loadl_epi64((const __m128i *)(const void *)(a + stride)));
    const __m128i y = _mm_unpacklo_epi64(_mm_loadl_epi64((const __m128i *)(const void *)b),
                                         _mm_loadl_epi64((const __m128i *)(const void *)(b + stride)));
    acc = _mm_add_epi64(acc, _mm_sad_epu8(x, y));
  }
  return (unsigned)(_mm_cvtsi128_si32(acc) + _mm_cvtsi128_si32(_mm_srli_si128(acc, 8)));
}
#else
static unsigned sad8(const uint8_t *a, const uint8_t *b, int stride) {
  unsigned s = 0;
  for (int r = 0; r < BS; r++, a += stride, b += stride)
    for (int c = 0; c < BS; c++) s += (unsigned)abs((int)a[c] - (int)b[c]);
  return s;
}
#endif

typedef struct blk { const uint8_t *cur, *ref; int stride, x, y, xmax, ymax, px, py; } blk;

/* the SAD of vector (vx, vy) for a block, UINT32_MAX when the window leaves the image */
static unsigned sad_at(const blk *k, int vx, int vy) {
  const int x = k->x + vx, y = k->y + vy;
  if (x < 0 || y < 0 || x > k->xmax || y > k->ymax) return UINT32_MAX;
  return sad8(k->cur + (size_t)k->y * k->stride + k->x, k->ref + (size_t)y * k->stride + x, k->stride);
}
/* and its cost: plus the distance from the predicted vector (px, py), so that a block without
 * texture follows its neighbourhood (and a still one stays still) */
static unsigned cost_at(const blk *k, int vx, int vy) {
  const unsigned s = sad_at(k, vx, vy);
  return s == UINT32_MAX ? s : s + LAMBDA * (unsigned)(abs(vx - k->px) + abs(vy - k->py));
}

static int block_start(int b, int n) { int s = b * BS; return s + BS > n ? n - BS : s; }

/* the best of a candidate, kept in (bx, by, bc) */
static void try_vec(const blk *k, int vx, int vy, int *bx, int *by, unsigned *bc) {
  unsigned c = cost_at(k, vx, vy);
  if (c < *bc) { *bc = c; *bx = vx; *by = vy; }
}

/* The sub-pixel offset of a SAD minimum c between neighbours m (at -1) and p (at +1): the V of
 * equal slopes through the three (SADs grow linearly with a small shift, unlike a parabola). */
static float subpel(unsigned m, unsigned c, unsigned p) {
  if (m == UINT32_MAX || p == UINT32_MAX) return 0;
  const double k = (double)(m > p ? m : p) - (double)c;
  if (k <= 0) return 0;
  const double o = ((double)m - (double)p) / (2 * k);
  return (float)(o < -0.5 ? -0.5 : o > 0.5 ? 0.5 : o);
}

static void match_level(hr__motion *m, int l, const uint8_t *cur, const uint8_t *ref) {
  const int lh = m->lh[l], lw = m->lw[l], bh = m->bh[l], bw = m->bw[l];
  int16_t *vx = m->vx[l], *vy = m->vy[l];
  const int top = l == m->levels - 1;
  for (int by = 0; by < bh; by++)
    for (int bx = 0; bx < bw; bx++) {
      blk k = {cur, ref, lw, block_start(bx, lw), block_start(by, lh), lw - BS, lh - BS, 0, 0};
      int pi = 0, pj = 0;
      if (!top) {   /* the predictor: the co-located parent's vector, doubled */
        pi = (k.y + BS / 2) / (2 * BS); pj = (k.x + BS / 2) / (2 * BS);
        if (pi >= m->bh[l + 1]) pi = m->bh[l + 1] - 1;
        if (pj >= m->bw[l + 1]) pj = m->bw[l + 1] - 1;
        k.px = 2 * m->vx[l + 1][pi * m->bw[l + 1] + pj]; k.py = 2 * m->vy[l + 1][pi * m->bw[l + 1] + pj];
      }
      int cx = 0, cy = 0;
      unsigned cc = cost_at(&k, 0, 0);
      if (top) {
        for (int dy = -TOP_RANGE; dy <= TOP_RANGE; dy++)
          for (int dx = -TOP_RANGE; dx <= TOP_RANGE; dx++) try_vec(&k, dx, dy, &cx, &cy, &cc);
      } else {
        /* the parent's block and its neighbours, doubled */
        const int pbh = m->bh[l + 1], pbw = m->bw[l + 1];
        const int16_t *px = m->vx[l + 1], *py = m->vy[l + 1];
        static const int nd[5][2] = {{0, 0}, {-1, 0}, {1, 0}, {0, -1}, {0, 1}};
        for (int c = 0; c < (l ? 5 : 1); c++) {   /* level 0: the parent alone (its neighbours came in at level 1) */
          int qi = pi + nd[c][0], qj = pj + nd[c][1];
          if (qi < 0 || qj < 0 || qi >= pbh || qj >= pbw) continue;
          try_vec(&k, 2 * px[qi * pbw + qj], 2 * py[qi * pbw + qj], &cx, &cy, &cc);
        }
        if (bx) try_vec(&k, vx[by * bw + bx - 1], vy[by * bw + bx - 1], &cx, &cy, &cc);
        if (by) try_vec(&k, vx[(by - 1) * bw + bx], vy[(by - 1) * bw + bx], &cx, &cy, &cc);
        for (int it = 0; it < (l ? 2 : 1); it++) {
          const int ox = cx, oy = cy;
          for (int dy = -1; dy <= 1; dy++)
            for (int dx = -1; dx <= 1; dx++)
              if (dx || dy) try_vec(&k, ox + dx, oy + dy, &cx, &cy, &cc);
          if (cx == ox && cy == oy) break;
        }
      }
      vx[by * bw + bx] = (int16_t)cx; vy[by * bw + bx] = (int16_t)cy;
      if (l == 0) {
        /* a V through the SADs either side gives the sub-pixel part (not to a block that
         * stays still: its rows are then copied, not resampled) */
        float fx = (float)cx, fy = (float)cy;
        if (!cx && !cy) { m->fx[by * bw + bx] = 0; m->fy[by * bw + bx] = 0; continue; }
        const unsigned c0 = sad_at(&k, cx, cy);   /* the SADs alone: the penalty is no part of the image */
        unsigned xm = sad_at(&k, cx - 1, cy), xp = sad_at(&k, cx + 1, cy);
        unsigned ym = sad_at(&k, cx, cy - 1), yp = sad_at(&k, cx, cy + 1);
        fx += subpel(xm, c0, xp);
        fy += subpel(ym, c0, yp);
        m->fx[by * bw + bx] = fx; m->fy[by * bw + bx] = fy;
      }
    }
}

double hr__motion_estimate(hr__motion *m, const uint8_t *ref, const uint8_t *cur) {
  blur(cur, m->cur[0], m->h, m->w, m->rowsum);
  blur(ref, m->ref[0], m->h, m->w, m->rowsum);
  for (int l = 1; l < m->levels; l++) {
    halve(m->cur[l - 1], m->lw[l - 1], m->cur[l], m->lh[l], m->lw[l]);
    halve(m->ref[l - 1], m->lw[l - 1], m->ref[l], m->lh[l], m->lw[l]);
  }
  for (int l = m->levels - 1; l >= 0; l--) match_level(m, l, m->cur[l], m->ref[l]);
  const int bh = m->bh[0], bw = m->bw[0];
  for (int r = 0; r < bh; r++) {
    const float *ax = m->fx + r * bw, *ay = m->fy + r * bw;
    float *ox = m->hx + (size_t)r * m->w, *oy = m->hy + (size_t)r * m->w;
    for (int j = 0; j < m->w; j++) {
      const float t = m->ttx[j];
      ox[j] = (1 - t) * ax[m->tc0[j]] + t * ax[m->tc1[j]];
      oy[j] = (1 - t) * ay[m->tc0[j]] + t * ay[m->tc1[j]];
    }
  }
  double s = 0;
  for (int i = 0; i < bh * bw; i++) s += sqrt((double)m->fx[i] * m->fx[i] + (double)m->fy[i] * m->fy[i]);
  return s / (bh * bw);
}

/* One grid row of two planes sampled bilinearly at (j + vx[j], i + vy[j]), clamped to the grid.
 * Plain C: with AVX2 or AVX-512 (picked at run time where GCC makes clones) the loop becomes gathers. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_ADDRESS__)
__attribute__((target_clones("avx512f", "avx2", "default")))
#endif
static void sample_row2(const float *restrict a, const float *restrict b, float *restrict oa, float *restrict ob, const float *restrict vx,
                        const float *restrict vy, int i, int w, int h) {
  const float xmax = (float)(w - 1), ymax = (float)(h - 1);
  for (int j = 0; j < w; j++) {
    float x = (float)j + vx[j], y = (float)i + vy[j];
    x = x > 0.f ? x : 0.f;   /* max then min, in the order SSE's maxps / minps read */
    x = x < xmax ? x : xmax;
    y = y > 0.f ? y : 0.f;
    y = y < ymax ? y : ymax;
    const int x0 = (int)x, y0 = (int)y;
    const float fx = x - (float)x0, fy = y - (float)y0;
    const int x1 = x0 + 1 < w - 1 ? x0 + 1 : w - 1, y1 = y0 + 1 < h - 1 ? y0 + 1 : h - 1;
    const int o0 = y0 * w, o1 = y1 * w;
    const float w00 = (1 - fy) * (1 - fx), w01 = (1 - fy) * fx, w10 = fy * (1 - fx), w11 = fy * fx;
    const float va = w00 * a[o0 + x0] + w01 * a[o0 + x1] + w10 * a[o1 + x0] + w11 * a[o1 + x1];
    const float vb = w00 * b[o0 + x0] + w01 * b[o0 + x1] + w10 * b[o1 + x0] + w11 * b[o1 + x1];
    oa[j] = va;
    ob[j] = vb;
  }
}

void hr__motion_warp(const hr__motion *m, const float *const *src, float *const *dst, int n) {
  const int h = m->h, w = m->w, bh = m->bh[0];
  float *rvx = m->rvx, *rvy = m->rvy;
  for (int i = 0; i < h; i++) {
    int32_t r0, r1;
    float ty;
    taps((float)i, bh, &r0, &r1, &ty);
    const float *x0r = m->hx + (size_t)r0 * w, *x1r = m->hx + (size_t)r1 * w;
    const float *y0r = m->hy + (size_t)r0 * w, *y1r = m->hy + (size_t)r1 * w;
    int still = 1;
    for (int j = 0; j < w; j++) {
      rvx[j] = (1 - ty) * x0r[j] + ty * x1r[j];
      rvy[j] = (1 - ty) * y0r[j] + ty * y1r[j];
      still &= rvx[j] == 0 && rvy[j] == 0;
    }
    if (still) {   /* no motion along this row: a copy */
      for (int k = 0; k < n; k++) memcpy(dst[k] + (size_t)i * w, src[k] + (size_t)i * w, sizeof(float) * w);
      continue;
    }
    if (n == 2) sample_row2(src[0], src[1], dst[0] + (size_t)i * w, dst[1] + (size_t)i * w, rvx, rvy, i, w, h);
    else
      for (int k = 0; k < n; k += 2) {   /* in pairs; an odd last plane twice (its second write into the scratch row) */
        float *o2 = k + 1 < n ? dst[k + 1] + (size_t)i * w : m->rsc;
        sample_row2(src[k], src[k + 1 < n ? k + 1 : k], dst[k] + (size_t)i * w, o2, rvx, rvy, i, w, h);
      }
  }
}
