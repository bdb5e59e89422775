/* Data-movement kernels (contiguous block copies), tanh, and the fused guided-filter tail. */
#include <math.h>
#include <string.h>
#include <stdlib.h>
#include <stdint.h>
#include "session/kernels.h"

const struct xnn_allocator *hr__xnn_allocator(void) { return NULL; /* XNNPACK's default (malloc family) */ }

static int norm_axis(int a, int rank) { return a < 0 ? a + rank : a; }

void hr__k_concat(const hr__tensor *const *in, int n, int axis, hr__tensor *out) {
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

void hr__k_tanh(const float *x, float *y, int64_t n) {
  for (int64_t i = 0; i < n; i++) y[i] = tanhf(x[i]);
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
  size_t bytes = sizeof(int32_t) * (size_t)W * 2 + sizeof(float) * (size_t)W + sizeof(int32_t) * (size_t)H * 2 +
                 sizeof(float) * (size_t)H + sizeof(float) * per_chunk * (size_t)chunks + 256;
  g->mem = calloc(1, bytes);
  if (!g->mem) return HR_ENOMEM;
  g->mem_bytes = bytes;
  char *m = g->mem;
  g->x0 = (int32_t *)m; m += sizeof(int32_t) * W;
  g->x1 = (int32_t *)m; m += sizeof(int32_t) * W;
  g->fx = (float *)m; m += sizeof(float) * W;
  g->y0 = (int32_t *)m; m += sizeof(int32_t) * H;
  g->y1 = (int32_t *)m; m += sizeof(int32_t) * H;
  g->fy = (float *)m; m += sizeof(float) * H;
  m = (char *)(((uintptr_t)m + 63) & ~(uintptr_t)63);
  g->scratch = (float *)m;
  g->per_chunk = per_chunk;
  float sx = (float)w_lr / (float)W, sy = (float)h_lr / (float)H;
  for (int x = 0; x < W; x++) {
    float f = ((float)x + 0.5f) * sx - 0.5f, fl = floorf(f);
    int a = fl < 0 ? 0 : (int)fl, b = (int)ceilf(f);
    if (b > w_lr - 1) b = w_lr - 1;
    if (b < 0) b = 0;
    g->x0[x] = a; g->x1[x] = b; g->fx[x] = f - fl;
  }
  for (int y = 0; y < H; y++) {
    float f = ((float)y + 0.5f) * sy - 0.5f, fl = floorf(f);
    int a = fl < 0 ? 0 : (int)fl, b = (int)ceilf(f);
    if (b > h_lr - 1) b = h_lr - 1;
    if (b < 0) b = 0;
    g->y0[y] = a; g->y1[y] = b; g->fy[y] = f - fl;
  }
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
    const float *px = hr__ingest_row_view(j->frame, y, src);
    float *pha = j->pha + (size_t)y * W;
    if (nch == 1) {
      for (int x = 0; x < W; x++) {
        int l = g->x0[x], r = g->x1[x];
        float fx = g->fx[x];
        float a = rowA[l] + (rowA[r] - rowA[l]) * fx, b = rowB[l] + (rowB[r] - rowB[l]) * fx;
        float m = (px[3 * x] + px[3 * x + 1] + px[3 * x + 2]) / 3.f;
        float v = a * m + b;
        if (j->clip) v = v < 0.f ? 0.f : v > 1.f ? 1.f : v;
        pha[x] = v;
      }
    } else {
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

void hr__k_fgf_tail(hr_session *s, const hr__fgf *g, const hr__rop *r, const hr__tensor *const *in, hr__tensor *out, int n_out) {
  fgf_job j = {g, &s->cur, in[0]->data, in[1]->data, out[0].data, n_out > 1 ? out[1].data : NULL, r->syn.a.keep_dims};
  if (s->pool && g->chunks > 1) pthreadpool_parallelize_1d(s->pool, fgf_chunk, &j, (size_t)g->chunks, 0);
  else for (int c = 0; c < g->chunks; c++) fgf_chunk(&j, (size_t)c);
}
