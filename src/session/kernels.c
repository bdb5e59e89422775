/* Data-movement kernels (contiguous block copies), tanh, and the fused guided-filter tail. */
#include <math.h>
#include <string.h>
#include <stdlib.h>
#include <stdint.h>
#include "session/kernels.h"
#include "graph/ops.h"

static int norm_axis(int a, int rank) { return a < 0 ? a + rank : a; }

void hr__k_concat(const hr__tensor *const *in, int n, int axis, hr__tensor *out, uint32_t skip) {
  int ax = norm_axis(axis, out->rank);
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < ax; d++) outer *= out->dims[d];
  for (int d = ax + 1; d < out->rank; d++) inner *= out->dims[d];
  size_t es = hr__dtsize(out->dt);
  int64_t orow = out->dims[ax] * inner;
  char *o = out->data;
  int64_t off = 0;
  for (int k = 0; k < n; k++) {
    int64_t row = in[k]->dims[ax] * inner;
    const char *src = in[k]->data;
    if (!(skip >> k & 1))
      for (int64_t p = 0; p < outer; p++) memcpy(o + (p * orow + off) * es, src + p * row * es, (size_t)row * es);
    off += row;
  }
}

void hr__k_split(const hr__tensor *in, int axis, hr__tensor *out, int n) {
  int ax = norm_axis(axis, in->rank);
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < ax; d++) outer *= in->dims[d];
  for (int d = ax + 1; d < in->rank; d++) inner *= in->dims[d];
  size_t es = hr__dtsize(in->dt);
  int64_t irow = in->dims[ax] * inner, off = 0;
  for (int k = 0; k < n; k++) {
    int64_t row = out[k].dims[ax] * inner;
    char *dst = out[k].data;
    for (int64_t p = 0; p < outer; p++) memcpy(dst + p * row * es, (const char *)in->data + (p * irow + off) * es, (size_t)row * es);
    off += row;
  }
}

/* Copy the box [begin, begin+size) of src into dst at dbegin; innermost dimension copied with memcpy. */
static void box_copy(const hr__tensor *src, const int64_t *sb, hr__tensor *dst, const int64_t *db, const int64_t *size) {
  int r = src->rank;
  size_t es = hr__dtsize(src->dt);
  int64_t ss[HR_MAX_RANK], ds[HR_MAX_RANK], s = 1, d = 1;
  for (int i = r - 1; i >= 0; i--) { ss[i] = s; s *= src->dims[i]; ds[i] = d; d *= dst->dims[i]; }
  int64_t rows = 1;
  for (int i = 0; i < r - 1; i++) rows *= size[i];
  int64_t idx[HR_MAX_RANK] = {0};
  for (int64_t k = 0; k < rows; k++) {
    int64_t so = sb[r - 1] * ss[r - 1], dof = db[r - 1] * ds[r - 1];
    for (int i = 0; i < r - 1; i++) { so += (sb[i] + idx[i]) * ss[i]; dof += (db[i] + idx[i]) * ds[i]; }
    memcpy((char *)dst->data + dof * es, (const char *)src->data + so * es, (size_t)size[r - 1] * es);
    for (int i = r - 2; i >= 0; i--) { if (++idx[i] < size[i]) break; idx[i] = 0; }
  }
}

void hr__k_slice(const hr__tensor *in, const int32_t *begin, hr__tensor *out) {
  int64_t sb[HR_MAX_RANK], db[HR_MAX_RANK] = {0};
  for (int i = 0; i < in->rank; i++) sb[i] = begin[i];
  box_copy(in, sb, out, db, out->dims);
}

void hr__k_pad(const hr__tensor *in, const int32_t *pads, hr__tensor *out) {
  memset(out->data, 0, (size_t)hr__numel(out) * hr__dtsize(out->dt));
  int64_t sb[HR_MAX_RANK] = {0}, db[HR_MAX_RANK];
  for (int i = 0; i < in->rank; i++) db[i] = pads[2 * i];
  box_copy(in, sb, out, db, in->dims);
}

/* tanh as a clamped rational function (the coefficients of Eigen's fast tanh: degree 13/6 in x,
 * |error| below 1e-6 over the whole range, exact 0 at 0); branch-free, so it vectorises. */
void hr__k_tanh(const float *x, float *y, int64_t n) {
  const float a1 = 4.89352455891786e-03f, a3 = 6.37261928875436e-04f, a5 = 1.48572235717979e-05f,
              a7 = 5.12229709037114e-08f, a9 = -8.60467152213735e-11f, a11 = 2.00018790482477e-13f,
              a13 = -2.76076847742355e-16f;
  const float b0 = 4.89352518554385e-03f, b2 = 2.26843463243900e-03f, b4 = 1.18534705686654e-04f,
              b6 = 1.19825839466702e-06f;
  for (int64_t i = 0; i < n; i++) {
    float v = x[i];
    v = v < -7.90531110763549805f ? -7.90531110763549805f : v > 7.90531110763549805f ? 7.90531110763549805f : v;
    float v2 = v * v;
    float p = ((((((a13 * v2 + a11) * v2 + a9) * v2 + a7) * v2 + a5) * v2 + a3) * v2 + a1) * v;
    float q = ((b6 * v2 + b4) * v2 + b2) * v2 + b0;
    y[i] = p / q;
  }
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
 * For each full-resolution row y: A and b (low resolution, 4 channels) are interpolated vertically
 * into a row buffer with TF half-pixel weights, then horizontally per output pixel; the guidance
 * x = (r, g, b, mean(r,g,b)) is read from the frame's row y in place (or converted into scratch);
 * out = A*x + b. pha = out[3] (clipped to [0,1] when the graph clips it), fgr = out[0..2]. */
hr_status hr__fgf_init(hr__fgf *g, int h_lr, int w_lr, int H, int W, int chunks, int want_fgr) {
  memset(g, 0, sizeof *g);
  g->H = H; g->W = W; g->h = h_lr; g->w = w_lr; g->chunks = chunks; g->want_fgr = want_fgr;
  size_t nch = want_fgr ? 4 : 1;
  size_t per_chunk = (size_t)w_lr * nch * 2 + (size_t)W * 3 + 16;
  size_t bytes = sizeof(int32_t) * ((size_t)W * 3 + 1) + sizeof(float) * (size_t)W + sizeof(int32_t) * (size_t)H * 2 +
                 sizeof(float) * (size_t)H + sizeof(float) * per_chunk * (size_t)chunks + 256;
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
  int clip;
} fgf_job;

/* Alpha-only row: v = a*m + b with a, b interpolated from the low-resolution row and m the mean
 * of the guidance's planar R, G, B rows. Within a run of output columns sharing their taps (l, r)
 * the ends are fixed, so the inner loop is contiguous with no gathers; it is cloned for AVX2 and
 * AVX-512 where the compiler and libc can dispatch at load time. The build is ISO C
 * (-ffp-contract=off): no clone fuses a*m+b, so every clone gives the scalar loop's values bit for
 * bit. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__) && !defined(HR_NO_CLONES)
#define HR__CLONES __attribute__((target_clones("avx512f", "avx2", "default"), optimize("vect-cost-model=dynamic")))
#else
#define HR__CLONES
#endif
HR__CLONES
static void fgf_alpha_row(const hr__fgf *g, const float *restrict ra, const float *restrict rb, const float *restrict R,
                          const float *restrict G, const float *restrict B, float *restrict pha, int clip) {
  const float *restrict fx = g->fx;
  for (int k = 0; k < g->n_runs; k++) {
    int s = g->run[k], e = g->run[k + 1], l = g->x0[s], r = g->x1[s];
    float a0 = ra[l], da = ra[r] - ra[l], b0 = rb[l], db = rb[r] - rb[l];
    if (clip)
      for (int x = s; x < e; x++) {
        float v = (a0 + da * fx[x]) * ((R[x] + G[x] + B[x]) / 3.f) + (b0 + db * fx[x]);
        pha[x] = v < 0.f ? 0.f : v > 1.f ? 1.f : v;
      }
    else
      for (int x = s; x < e; x++) pha[x] = (a0 + da * fx[x]) * ((R[x] + G[x] + B[x]) / 3.f) + (b0 + db * fx[x]);
  }
}

/* The same for a float RGB frame read in place (the model's own input format): m from the
 * interleaved row. */
HR__CLONES
static void fgf_alpha_row_px(const hr__fgf *g, const float *restrict ra, const float *restrict rb, const float *restrict px,
                             float *restrict pha, int clip) {
  const float *restrict fx = g->fx;
  for (int k = 0; k < g->n_runs; k++) {
    int s = g->run[k], e = g->run[k + 1], l = g->x0[s], r = g->x1[s];
    float a0 = ra[l], da = ra[r] - ra[l], b0 = rb[l], db = rb[r] - rb[l];
    for (int x = s; x < e; x++) {
      float v = (a0 + da * fx[x]) * ((px[3 * x] + px[3 * x + 1] + px[3 * x + 2]) / 3.f) + (b0 + db * fx[x]);
      pha[x] = clip ? (v < 0.f ? 0.f : v > 1.f ? 1.f : v) : v;
    }
  }
}

static void fgf_chunk(void *ctx, size_t chunk) {
  const fgf_job *j = ctx;
  const hr__fgf *g = j->g;
  int y_begin = (int)((int64_t)g->H * (int64_t)chunk / g->chunks), y_end = (int)((int64_t)g->H * (int64_t)(chunk + 1) / g->chunks);
  int nch = g->want_fgr ? 4 : 1, c0 = g->want_fgr ? 0 : 3, w = g->w, W = g->W;
  float *rowA = g->scratch + g->per_chunk * chunk, *rowB = rowA + (size_t)w * nch, *src = rowB + (size_t)w * nch;
  for (int y = y_begin; y < y_end; y++) {
    const float *a0 = j->A + (size_t)g->y0[y] * w * 4, *a1 = j->A + (size_t)g->y1[y] * w * 4;
    const float *b0 = j->B + (size_t)g->y0[y] * w * 4, *b1 = j->B + (size_t)g->y1[y] * w * 4;
    float fy = g->fy[y];
    for (int x = 0; x < w; x++)
      for (int c = 0; c < nch; c++) {
        float t = a0[x * 4 + c0 + c], u = a1[x * 4 + c0 + c];
        rowA[x * nch + c] = t + (u - t) * fy;
        t = b0[x * 4 + c0 + c]; u = b1[x * 4 + c0 + c];
        rowB[x * nch + c] = t + (u - t) * fy;
      }
    float *pha = j->pha + (size_t)y * W;
    if (nch == 1) {
      /* a float RGB row is read where it lies; any other format is converted to planar rows */
      const float *px = j->frame->fmt == HR_PIX_RGBF32 ? hr__ingest_row_view(j->frame, y, src) : NULL;
      if (px) fgf_alpha_row_px(g, rowA, rowB, px, pha, j->clip);
      else {
        hr__ingest_row_planar(j->frame, y, src, src + W, src + 2 * (size_t)W);
        fgf_alpha_row(g, rowA, rowB, src, src + W, src + 2 * (size_t)W, pha, j->clip);
      }
    } else {
      const float *px = hr__ingest_row_view(j->frame, y, src);
      float *fgr = j->fgr + (size_t)y * W * 3;
      for (int x = 0; x < W; x++) {
        int l = g->x0[x], r = g->x1[x];
        float fx = g->fx[x], xv[4];
        xv[0] = px[3 * x]; xv[1] = px[3 * x + 1]; xv[2] = px[3 * x + 2];
        xv[3] = (xv[0] + xv[1] + xv[2]) / 3.f;
        float o[4];
        for (int c = 0; c < 4; c++) {
          float a = rowA[l * 4 + c] + (rowA[r * 4 + c] - rowA[l * 4 + c]) * fx;
          float b = rowB[l * 4 + c] + (rowB[r * 4 + c] - rowB[l * 4 + c]) * fx;
          o[c] = a * xv[c] + b;
        }
        if (j->clip) o[3] = o[3] < 0.f ? 0.f : o[3] > 1.f ? 1.f : o[3];
        pha[x] = o[3];
        if (fgr) { fgr[3 * x] = o[0]; fgr[3 * x + 1] = o[1]; fgr[3 * x + 2] = o[2]; }
      }
    }
  }
}

void hr__fgf_run(const hr__fgf *g, const hr_frame *frame, const float *A, const float *B, float *pha, float *fgr, int clip,
                 pthreadpool_t pool) {
  fgf_job j = {g, frame, A, B, pha, fgr, clip};
  if (pool && g->chunks > 1) pthreadpool_parallelize_1d(pool, fgf_chunk, &j, (size_t)g->chunks, 0);
  else for (int c = 0; c < g->chunks; c++) fgf_chunk(&j, (size_t)c);
}

void hr__k_fgf_tail(hr_session *s, const hr__fgf *g, const hr__rop *r, const hr__tensor *const *in, hr__tensor *out, int n_out) {
  hr__fgf_run(g, &s->cur, in[0]->data, in[1]->data, out[0].data, n_out > 1 ? out[1].data : NULL, r->syn.a.keep_dims, s->pool);
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
      for (int64_t i = 0; i < n; i++) op[i] += wp[i] * ip[i];
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

typedef struct resize_job { const hr__resize *r; const hr__tensor *x; hr__tensor *o; float sy; int64_t ooff, ostride; } resize_job;

static void resize_row(void *ctx, size_t oy) {
  const resize_job *j = ctx;
  int64_t H = j->x->dims[1], W = j->x->dims[2], C = j->x->dims[3], OW = j->o->dims[2], OS = j->ostride;
  float f = ((float)oy + 0.5f) * j->sy - 0.5f, fl = floorf(f);
  int64_t y0 = fl < 0 ? 0 : (int64_t)fl, y1 = (int64_t)ceilf(f);
  if (y1 > H - 1) y1 = H - 1;
  if (y1 < 0) y1 = 0;
  float ly = f - fl;
  const float *r0 = (const float *)j->x->data + y0 * W * C, *r1 = (const float *)j->x->data + y1 * W * C;
  float *op = (float *)j->o->data + (int64_t)oy * OW * OS + j->ooff;
  for (int64_t ox = 0; ox < OW; ox++, op += OS) {
    const float *p00 = r0 + (int64_t)j->r->x0[ox] * C, *p01 = r0 + (int64_t)j->r->x1[ox] * C;
    const float *p10 = r1 + (int64_t)j->r->x0[ox] * C, *p11 = r1 + (int64_t)j->r->x1[ox] * C;
    float lx = j->r->fx[ox];
    for (int64_t c = 0; c < C; c++) {
      float top = p00[c] + (p01[c] - p00[c]) * lx;
      float bot = p10[c] + (p11[c] - p10[c]) * lx;
      op[c] = top + (bot - top) * ly;
    }
  }
}

void hr__k_resize(pthreadpool_t pool, const hr__resize *r, const hr__tensor *x, hr__tensor *o, int out_c_off, int out_c_total) {
  int64_t os = out_c_total > 0 ? out_c_total : x->dims[3];
  resize_job j = {r, x, o, (float)x->dims[1] / (float)o->dims[1], out_c_total > 0 ? out_c_off : 0, os};
  for (int64_t b = 0; b < x->dims[0]; b++) {
    hr__tensor xb = *x, ob = *o;
    xb.data = (float *)x->data + b * x->dims[1] * x->dims[2] * x->dims[3];
    ob.data = (float *)o->data + b * o->dims[1] * o->dims[2] * os;
    j.x = &xb; j.o = &ob;
    if (pool) pthreadpool_parallelize_1d(pool, resize_row, &j, (size_t)o->dims[1], 0);
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
