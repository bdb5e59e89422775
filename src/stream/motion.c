/* Coarse block-matching motion on the tail's low-resolution grid and the coefficients' warp (motion.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "stream/motion.h"

#define BS 8          /* block side, at every level */
#define CS 4          /* the field's cells (CS x CS grid pixels) */
#define MIN_SIDE 16   /* the coarsest level's shorter side is at least this */
#define MAX_LEVELS 5  /* 358 x 478 -> 22 x 29 at level 4 */
#define TOP_RANGE 10  /* the coarsest level's full search: +-TOP_RANGE (+-160 grid pixels at level 0 from level 4) */
#define LAMBDA 4      /* cost per grid pixel of distance from the predictor (L1), against a block's SAD (64 pixels) */
#define BAD_SAD 6     /* a block whose best SAD is over this a pixel gets a full search of +-RESCUE around it, */
#define RESCUE 8      /* and takes its best if that SAD is under RESCUE_PCT % of the first */
#define RESCUE_PCT 70
#define GOOD_SAD 2     /* a block whose predictor or zero matches within this a pixel (mean) takes it as it is */
#define CELL_PENALTY 16   /* a cell keeps its own block's vector unless a neighbour's matches by this much better */
#define CELL_DIFF 3   /* and looks at the neighbours whose vectors differ from it by this much (on either axis) */
#define CELL_REFINE 8  /* a moving cell moves its whole vector by one grid pixel where its window matches by this much better */

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
  m->ch = (h + CS - 1) / CS; m->cw = (w + CS - 1) / CS;
  const size_t nb = (size_t)m->bh[0] * m->bw[0], nc = (size_t)m->ch * m->cw;
  bytes += 2 * al64(sizeof(float) * nb) + 2 * al64(sizeof(float) * nc) + al64(sizeof(int32_t) * (w + 1)) +
           al64(sizeof(int32_t) * (h + 1)) + al64(sizeof(uint16_t) * W) + 2 * al64(W) + al64(sizeof(int32_t) * w) +
           3 * al64(sizeof(float) * w) + 64;
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
  const size_t nb = (size_t)m->bh[0] * m->bw[0], nc = (size_t)m->ch * m->cw;
  TAKE(m->fx, float, nb); TAKE(m->fy, float, nb);
  TAKE(m->cx, float, nc); TAKE(m->cy, float, nc);
  TAKE(m->lx0, int32_t, w + 1); TAKE(m->ly0, int32_t, h + 1);
  TAKE(m->rowsum, uint16_t, W); TAKE(m->rowlum, uint8_t, W); TAKE(m->rowsum2, uint8_t, W);
  TAKE(m->ccol, int32_t, w); TAKE(m->rvx, float, w); TAKE(m->rvy, float, w); TAKE(m->rsc, float, w);
#undef TAKE
  for (int j = 0; j <= w; j++) m->lx0[j] = (int32_t)((int64_t)j * W / w);
  for (int i = 0; i <= h; i++) m->ly0[i] = (int32_t)((int64_t)i * H / h);
  for (int j = 0; j < w; j++) m->ccol[j] = j / CS < m->cw ? j / CS : m->cw - 1;
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

/* Grid rows [i0, i1) of a frame with a luma plane, straight from it (no scratch): the same bytes as
 * hr__motion_luma's rows ((a + b) at two columns, + 2, >> 2). */
static void luma_plane_rows(const hr__motion *m, const hr_frame *f, uint8_t *out, int i0, int i1) {
  const int w = m->w;
  for (int i = i0; i < i1; i++) {
    const int y0 = m->ly0[i], dy = (m->ly0[i + 1] - y0) / 2;
    const uint8_t *ra = (const uint8_t *)f->planes[0] + (ptrdiff_t)y0 * f->strides[0];
    const uint8_t *rb = (const uint8_t *)f->planes[0] + (ptrdiff_t)(y0 + dy) * f->strides[0];
    uint8_t *o = out + (size_t)i * w;
    for (int j = 0; j < w; j++) {
      const int x0 = m->lx0[j], dx = (m->lx0[j + 1] - x0) / 2;
      o[j] = (uint8_t)((ra[x0] + rb[x0] + ra[x0 + dx] + rb[x0 + dx] + 2) >> 2);
    }
  }
}

typedef struct { const hr__motion *m; const hr_frame *f; uint8_t *out; int parts; } luma_job;
static void luma_part(void *ctx, size_t k) {
  const luma_job *j = ctx;
  const int h = j->m->h;
  luma_plane_rows(j->m, j->f, j->out, (int)((int64_t)h * (int64_t)k / j->parts), (int)((int64_t)h * (int64_t)(k + 1) / j->parts));
}

void hr__motion_luma_pool(const hr__motion *m, const hr_frame *f, uint8_t *out, pthreadpool_t pool) {
  const int plane = f->fmt != HR_PIX_BGRA && f->fmt != HR_PIX_RGB24 && f->fmt != HR_PIX_RGBF32;
  if (!pool || !plane || pthreadpool_get_threads_count(pool) < 2) { hr__motion_luma(m, f, out); return; }
  luma_job j = {m, f, out, 4 * (int)pthreadpool_get_threads_count(pool)};
  if (j.parts > m->h) j.parts = m->h;
  pthreadpool_parallelize_1d(pool, luma_part, &j, (size_t)j.parts, 0);
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
      } else if (try_vec(&k, k.px, k.py, &cx, &cy, &cc), cc > GOOD_SAD * BS * BS) {
        /* the parent's block and its 8 neighbours, doubled, then the left and upper blocks' vectors
         * at this level; each distinct vector once */
        const int pbh = m->bh[l + 1], pbw = m->bw[l + 1];
        const int16_t *px = m->vx[l + 1], *py = m->vy[l + 1];
        int cand[11][2], nc = 0;
        for (int di = -1; di <= 1; di++)
          for (int dj = -1; dj <= 1; dj++) {
            const int qi = pi + di, qj = pj + dj;
            if (qi < 0 || qj < 0 || qi >= pbh || qj >= pbw) continue;
            cand[nc][0] = 2 * px[qi * pbw + qj]; cand[nc][1] = 2 * py[qi * pbw + qj]; nc++;
          }
        if (bx) { cand[nc][0] = vx[by * bw + bx - 1]; cand[nc][1] = vy[by * bw + bx - 1]; nc++; }
        if (by) { cand[nc][0] = vx[(by - 1) * bw + bx]; cand[nc][1] = vy[(by - 1) * bw + bx]; nc++; }
        for (int c = 0; c < nc; c++) {
          int seen = !cand[c][0] && !cand[c][1];
          for (int e = 0; e < c && !seen; e++) seen = cand[e][0] == cand[c][0] && cand[e][1] == cand[c][1];
          if (!seen) try_vec(&k, cand[c][0], cand[c][1], &cx, &cy, &cc);
        }
        for (int it = 0; it < (l ? 2 : 1); it++) {
          const int ox = cx, oy = cy;
          for (int dy = -1; dy <= 1; dy++)
            for (int dx = -1; dx <= 1; dx++)
              if (dx || dy) try_vec(&k, ox + dx, oy + dy, &cx, &cy, &cc);
          if (cx == ox && cy == oy) break;
        }
        /* a block that still matches badly (a thin part moving faster than what is around it, which
         * the coarser levels lost): a full search around its vector, taken if it is much better */
        const unsigned sc = l ? sad_at(&k, cx, cy) : UINT32_MAX;   /* above level 0 (at 1, +-RESCUE is +-2 RESCUE here) */
        if (sc != UINT32_MAX && sc > BAD_SAD * BS * BS) {
          unsigned bs = sc;
          int rx = cx, ry = cy;
          for (int dy = -RESCUE; dy <= RESCUE; dy += 2)   /* every other vector (the luma is blurred), then +-1 */
            for (int dx = -RESCUE; dx <= RESCUE; dx += 2) {
              const unsigned c = sad_at(&k, cx + dx, cy + dy);
              if (c < bs) { bs = c; rx = cx + dx; ry = cy + dy; }
            }
          const int sx = rx, sy = ry;
          for (int dy = -1; dy <= 1; dy++)
            for (int dx = -1; dx <= 1; dx++) {
              const unsigned c = (dx || dy) ? sad_at(&k, sx + dx, sy + dy) : UINT32_MAX;
              if (c < bs) { bs = c; rx = sx + dx; ry = sy + dy; }
            }
          if (bs * 100 < sc * RESCUE_PCT) { cx = rx; cy = ry; }
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

/* the SAD of vector (ux + gx - 1, uy + gy - 1): g[gy][gx] where it lies in the 3 x 3 around (ux, uy) */
static unsigned sad_g(const blk *k, const unsigned g[3][3], int ux, int uy, int gx, int gy) {
  return gx >= 0 && gx < 3 && gy >= 0 && gy < 3 ? g[gy][gx] : sad_at(k, ux + gx - 1, uy + gy - 1);
}

/* The cells' field: each CS x CS cell takes the vector of the block around its centre or of one of
 * the 3 blocks next to it on its side (left or right, above or below, the diagonal), whichever
 * matches an 8 x 8 window centred on the cell best (the block's own by CELL_PENALTY); a block that
 * straddles a motion edge is so split along it, its vectors never blended. A moving cell then
 * refines the vector it took on its own window: the whole part among its 8 neighbours (by
 * CELL_REFINE), the sub-pixel part from the SADs either side (the block's before). tail_lag at
 * r0.171, lags 1 / 3 / 6 (2026-12-07): bedroom (tuned on) 2.02 / 3.02 / 3.81% off against 2.08 /
 * 3.12 / 3.88; vtest 0-199 0.63 / 1.16 / 1.41% against 0.65 / 1.19 / 1.45; vtest 400-599 (held out
 * of any tuning) 0.60 / 1.09 / 1.37% against 0.62 / 1.13 / 1.41. Vectors
 * interpolated between cells of like motion (within 0.5-2 grid pixels) changed nothing (to 0.01
 * points) at 1.8x the motion's time: what is left is not the vectors' precision. */
static void cells(hr__motion *m) {
  const int h = m->h, w = m->w, bh = m->bh[0], bw = m->bw[0];
  const int16_t *vx = m->vx[0], *vy = m->vy[0];
  for (int ci = 0; ci < m->ch; ci++)
    for (int cj = 0; cj < m->cw; cj++) {
      const int y = ci * CS < h - CS ? ci * CS : h - CS, x = cj * CS < w - CS ? cj * CS : w - CS;
      int by = (y + CS / 2) / BS, bx = (x + CS / 2) / BS;
      if (by >= bh) by = bh - 1;
      if (bx >= bw) bx = bw - 1;
      const int own = by * bw + bx;
      /* the neighbours on the cell's side (the cell is a quadrant of its block) whose vectors differ
       * by CELL_DIFF or more, each distinct vector once */
      const int sy = (y + CS / 2) % BS < BS / 2 ? -1 : 1, sx = (x + CS / 2) % BS < BS / 2 ? -1 : 1;
      int best = own, nq = 0, q[3];
      for (int dy = 0; dy <= 1; dy++)
        for (int dx = 0; dx <= 1; dx++) {
          const int qy = by + dy * sy, qx = bx + dx * sx, b = qy * bw + qx;
          if ((!dx && !dy) || qy < 0 || qx < 0 || qy >= bh || qx >= bw) continue;
          if (abs(vx[b] - vx[own]) < CELL_DIFF && abs(vy[b] - vy[own]) < CELL_DIFF) continue;
          int seen = 0;
          for (int e = 0; e < nq && !seen; e++) seen = vx[q[e]] == vx[b] && vy[q[e]] == vy[b];
          if (!seen) q[nq++] = b;
        }
      int wy = y + CS / 2 - BS / 2, wx = x + CS / 2 - BS / 2;
      wy = wy < 0 ? 0 : wy > h - BS ? h - BS : wy;
      wx = wx < 0 ? 0 : wx > w - BS ? w - BS : wx;
      const blk k = {m->cur[0], m->ref[0], w, wx, wy, w - BS, h - BS, 0, 0};
      if (nq) {
        unsigned bc = sad_at(&k, vx[own], vy[own]);
        for (int e = 0; e < nq; e++) {
          const unsigned c = sad_at(&k, vx[q[e]], vy[q[e]]);
          if (c != UINT32_MAX && c + CELL_PENALTY < bc) { bc = c + CELL_PENALTY; best = q[e]; }
        }
      }
      float *ox = &m->cx[ci * m->cw + cj], *oy = &m->cy[ci * m->cw + cj];
      const int ux = vx[best], uy = vy[best];
      if (!ux && !uy) { *ox = m->fx[best]; *oy = m->fy[best]; continue; }   /* still (0: the block's rows are copied) */
      /* the SADs of the whole vector and its 8 neighbours on the cell's own window */
      unsigned g[3][3];
      for (int dy = -1; dy <= 1; dy++)
        for (int dx = -1; dx <= 1; dx++) g[dy + 1][dx + 1] = sad_at(&k, ux + dx, uy + dy);
      if (g[1][1] == UINT32_MAX) { *ox = m->fx[best]; *oy = m->fy[best]; continue; }
      int rx = 1, ry = 1;   /* a neighbour where it matches by CELL_REFINE better */
      unsigned cb = g[1][1];
      for (int dy = 0; dy < 3; dy++)
        for (int dx = 0; dx < 3; dx++)
          if (g[dy][dx] != UINT32_MAX && g[dy][dx] + CELL_REFINE < cb) { cb = g[dy][dx] + CELL_REFINE; rx = dx; ry = dy; }
      /* the sub-pixel part from the SADs either side (from g where they lie in it) */
      const unsigned c0 = g[ry][rx];
      *ox = (float)(ux + rx - 1) + subpel(sad_g(&k, g, ux, uy, rx - 1, ry), c0, sad_g(&k, g, ux, uy, rx + 1, ry));
      *oy = (float)(uy + ry - 1) + subpel(sad_g(&k, g, ux, uy, rx, ry - 1), c0, sad_g(&k, g, ux, uy, rx, ry + 1));
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
  cells(m);
  const int bh = m->bh[0], bw = m->bw[0];
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
                        const float *restrict vy, int i, int w, int h, int j0, int j1) {
  const float xmax = (float)(w - 1), ymax = (float)(h - 1);
  for (int j = j0; j < j1; j++) {
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

/* out[j] for j in [j0, j1): bilinear between rows r0 and r1 (already offset by the vector's whole
 * part) at fraction fx along x (r0[j + 1] exists) and fy down */
static void shift_row(const float *restrict r0, const float *restrict r1, float *restrict out, float fx, float fy, int j0, int j1) {
  const float w00 = (1 - fy) * (1 - fx), w01 = (1 - fy) * fx, w10 = fy * (1 - fx), w11 = fy * fx;
  int j = j0;
#if defined(__SSE2__)
  /* 4 at a time (a cell's width: runs are short, so no set-up for longer vectors) */
  const __m128 a = _mm_set1_ps(w00), b = _mm_set1_ps(w01), c = _mm_set1_ps(w10), d = _mm_set1_ps(w11);
  for (; j + 4 <= j1; j += 4) {
    const __m128 u = _mm_add_ps(_mm_mul_ps(a, _mm_loadu_ps(r0 + j)), _mm_mul_ps(b, _mm_loadu_ps(r0 + j + 1)));
    const __m128 v = _mm_add_ps(_mm_mul_ps(c, _mm_loadu_ps(r1 + j)), _mm_mul_ps(d, _mm_loadu_ps(r1 + j + 1)));
    _mm_storeu_ps(out + j, _mm_add_ps(u, v));
  }
#endif
  for (; j < j1; j++) out[j] = (w00 * r0[j] + w01 * r0[j + 1]) + (w10 * r1[j] + w11 * r1[j + 1]);
}

void hr__motion_warp(const hr__motion *m, const float *const *src, float *const *dst, int n) {
  const int h = m->h, w = m->w, cw = m->cw;
  float *rvx = m->rvx, *rvy = m->rvy;
  int row = -1;
  for (int i = 0; i < h; i++) {
    const int ci = i / CS < m->ch ? i / CS : m->ch - 1;
    const float *ax = m->cx + (size_t)ci * cw, *ay = m->cy + (size_t)ci * cw;
    if (ci != row) {   /* a new row of cells: its vectors, one a grid column */
      row = ci;
      for (int j = 0; j < w; j++) { rvx[j] = ax[m->ccol[j]]; rvy[j] = ay[m->ccol[j]]; }
    }
    const size_t o = (size_t)i * w;
    for (int c0 = 0, c1; c0 < cw; c0 = c1) {   /* runs of cells with one vector */
      const float vx = ax[c0], vy = ay[c0];
      for (c1 = c0 + 1; c1 < cw && ax[c1] == vx && ay[c1] == vy; c1++) {}
      const int j0 = c0 * CS, j1 = c1 * CS < w ? c1 * CS : w;
      if (vx == 0 && vy == 0) {   /* still: a copy */
        for (int k = 0; k < n; k++) memcpy(dst[k] + o + j0, src[k] + o + j0, sizeof(float) * (size_t)(j1 - j0));
        continue;
      }
      const float fx0 = floorf(vx);
      const int ox = (int)fx0;
      if (j0 + ox >= 0 && j1 + ox < w) {   /* inside the grid along x: one offset, one weight, no gathers */
        float y = (float)i + vy;
        y = y > 0.f ? y : 0.f;
        y = y < (float)(h - 1) ? y : (float)(h - 1);
        const int y0 = (int)y, y1 = y0 + 1 < h - 1 ? y0 + 1 : h - 1;
        const float fy = y - (float)y0, fx = vx - fx0;
        for (int k = 0; k < n; k++) shift_row(src[k] + (size_t)y0 * w + ox, src[k] + (size_t)y1 * w + ox, dst[k] + o, fx, fy, j0, j1);
        continue;
      }
      for (int k = 0; k < n; k += 2) {   /* in pairs; an odd last plane twice (its second write into the scratch row) */
        float *o2 = k + 1 < n ? dst[k + 1] + o : m->rsc;
        sample_row2(src[k], src[k + 1 < n ? k + 1 : k], dst[k] + o, o2, rvx, rvy, i, w, h, j0, j1);
      }
    }
  }
}
