/* Shape inference and plain-C reference kernels for every supported TF op (NHWC, float32/int32/bool). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "graph/ops.h"

static hr_status ierr(char *err, size_t n, const hr__node *nd, const char *fmt, ...) {
  if (err && n) {
    int k = snprintf(err, n, "node '%s' (%s): ", nd->name, hr__op_name(nd->op));
    if (k >= 0 && (size_t)k < n) { va_list ap; va_start(ap, fmt); vsnprintf(err + k, n - k, fmt, ap); va_end(ap); }
  }
  return HR_EINVAL;
}

static int32_t ival(const hr__tensor *t, int64_t i) {
  if (t->dt == HR_DT_INT32) return ((const int32_t *)t->data)[i];
  if (t->dt == HR_DT_FLOAT) return (int32_t)((const float *)t->data)[i];
  return ((const uint8_t *)t->data)[i];
}
static double fval(const hr__tensor *t, int64_t i) {
  if (t->dt == HR_DT_FLOAT) return ((const float *)t->data)[i];
  if (t->dt == HR_DT_INT32) return ((const int32_t *)t->data)[i];
  return ((const uint8_t *)t->data)[i];
}
static int norm_axis(int a, int rank) { return a < 0 ? a + rank : a; }

void hr__conv_geom(hr__padding pad, const int *ep, int64_t in, int k, int s, int d, int64_t *out, int *before) {
  int64_t ek = (int64_t)(k - 1) * d + 1;
  if (pad == HR_PAD_SAME) {
    int64_t o = (in + s - 1) / s;
    int64_t tot = (o - 1) * s + ek - in;
    if (tot < 0) tot = 0;
    *out = o; *before = (int)(tot / 2);
  } else if (pad == HR_PAD_EXPLICIT) {
    *before = ep[0];
    *out = (in + ep[0] + ep[1] - ek) / s + 1;
  } else {
    *out = (in - ek) / s + 1; *before = 0;
  }
}

/* Broadcast output shape of two tensors (numpy rules). */
static int bcast_shape(const hr__tensor *a, const hr__tensor *b, hr__tensor *o) {
  int r = a->rank > b->rank ? a->rank : b->rank;
  o->rank = r;
  for (int i = 0; i < r; i++) {
    int ia = i - (r - a->rank), ib = i - (r - b->rank);
    int64_t da = ia >= 0 ? a->dims[ia] : 1, db = ib >= 0 ? b->dims[ib] : 1;
    if (da != db && da != 1 && db != 1) return 0;
    o->dims[i] = da == 1 ? db : da;
  }
  return 1;
}

/* Strides (in elements) of t broadcast to rank r output dims: 0 where broadcast. */
static void bcast_strides(const hr__tensor *t, const hr__tensor *o, int64_t *st) {
  int64_t s = 1;
  for (int i = o->rank - 1; i >= 0; i--) {
    int it = i - (o->rank - t->rank);
    int64_t d = it >= 0 ? t->dims[it] : 1;
    st[i] = d == 1 ? 0 : s;
    s *= d;
  }
}

typedef enum { B_ADD, B_SUB, B_MUL, B_DIV, B_MIN, B_MAX, B_FLOORMOD, B_EQ } bop;

static void exec_binary(bop op, const hr__tensor *a, const hr__tensor *b, hr__tensor *o) {
  int64_t sa[HR_MAX_RANK], sb[HR_MAX_RANK], idx[HR_MAX_RANK] = {0};
  bcast_strides(a, o, sa); bcast_strides(b, o, sb);
  int64_t n = hr__numel(o), pa = 0, pb = 0;
  int r = o->rank;
  for (int64_t i = 0; i < n; i++) {
    if (o->dt == HR_DT_BOOL) {
      ((uint8_t *)o->data)[i] = fval(a, pa) == fval(b, pb);
    } else if (o->dt == HR_DT_FLOAT) {
      float x = ((const float *)a->data)[pa], y = ((const float *)b->data)[pb], z;
      switch (op) {
        case B_ADD: z = x + y; break; case B_SUB: z = x - y; break; case B_MUL: z = x * y; break;
        case B_DIV: z = x / y; break; case B_MIN: z = x < y ? x : y; break; case B_MAX: z = x > y ? x : y; break;
        case B_FLOORMOD: z = x - floorf(x / y) * y; break; default: z = 0;
      }
      ((float *)o->data)[i] = z;
    } else {
      int32_t x = ((const int32_t *)a->data)[pa], y = ((const int32_t *)b->data)[pb], z;
      switch (op) {
        case B_ADD: z = x + y; break; case B_SUB: z = x - y; break; case B_MUL: z = x * y; break;
        case B_DIV: z = y ? x / y : 0; break; case B_MIN: z = x < y ? x : y; break; case B_MAX: z = x > y ? x : y; break;
        case B_FLOORMOD: z = y ? ((x % y) + y) % y : 0; break; default: z = 0;
      }
      ((int32_t *)o->data)[i] = z;
    }
    /* advance the multi-index */
    for (int d = r - 1; d >= 0; d--) {
      idx[d]++; pa += sa[d]; pb += sb[d];
      if (idx[d] < o->dims[d]) break;
      pa -= sa[d] * idx[d]; pb -= sb[d] * idx[d]; idx[d] = 0;
    }
  }
}

static int is_binary(hr__op op) {
  return op == HR_OP_MUL || op == HR_OP_ADDV2 || op == HR_OP_ADD || op == HR_OP_SUB || op == HR_OP_REALDIV ||
         op == HR_OP_MINIMUM || op == HR_OP_MAXIMUM || op == HR_OP_FLOORMOD || op == HR_OP_EQUAL;
}
static bop to_bop(hr__op op) {
  switch (op) {
    case HR_OP_MUL: return B_MUL; case HR_OP_ADDV2: case HR_OP_ADD: return B_ADD; case HR_OP_SUB: return B_SUB;
    case HR_OP_REALDIV: return B_DIV; case HR_OP_MINIMUM: return B_MIN; case HR_OP_MAXIMUM: return B_MAX;
    case HR_OP_FLOORMOD: return B_FLOORMOD; default: return B_EQ;
  }
}

/* Resolve StridedSlice into per-dim begin/stride/size; returns output rank (after shrink). */
typedef struct ss_plan { int rank; int64_t begin[HR_MAX_RANK], stride[HR_MAX_RANK], size[HR_MAX_RANK]; int shrink[HR_MAX_RANK]; } ss_plan;
static int ss_resolve(const hr__attrs *a, const hr__tensor *x, const hr__tensor *b, const hr__tensor *e,
                      const hr__tensor *s, ss_plan *p) {
  if (a->ellipsis_mask || a->new_axis_mask) return 0;
  int n = (int)hr__numel(b);
  p->rank = x->rank;
  for (int d = 0; d < x->rank; d++) {
    int64_t dim = x->dims[d];
    int64_t st = d < n ? ival(s, d) : 1, bg, en;
    if (st == 0) return 0;
    if (d < n) { bg = ival(b, d); en = ival(e, d); } else { bg = 0; en = dim; }
    if (d < n && (a->begin_mask >> d & 1)) bg = st > 0 ? 0 : dim - 1;
    else if (bg < 0) bg += dim;
    if (d < n && (a->end_mask >> d & 1)) en = st > 0 ? dim : -1;
    else if (d < n && en < 0) en += dim;
    p->shrink[d] = d < n && (a->shrink_axis_mask >> d & 1);
    if (p->shrink[d]) { en = bg + 1; st = 1; }
    if (st > 0) { if (bg < 0) bg = 0; if (en > dim) en = dim; }
    else { if (bg > dim - 1) bg = dim - 1; if (en < -1) en = -1; }
    int64_t sz = st > 0 ? (en - bg + st - 1) / st : (bg - en + (-st) - 1) / (-st);
    if (sz < 0) sz = 0;
    p->begin[d] = bg; p->stride[d] = st; p->size[d] = sz;
  }
  return 1;
}

hr_status hr__op_infer(const hr__node *n, const hr__tensor *const *in, int n_in, hr__tensor *out, int *n_out,
                       char *err, size_t el) {
  const hr__attrs *a = &n->a;
  *n_out = 1;
  hr__tensor *o = &out[0];
  memset(o, 0, sizeof *o);
  o->dt = n_in > 0 ? in[0]->dt : HR_DT_FLOAT;
#define NEED(k) do { if (n_in < (k)) return ierr(err, el, n, "needs %d inputs, has %d", (k), n_in); } while (0)
#define NEEDC(i) do { if (!in[i]->data) return ierr(err, el, n, "input %d must be a constant at plan time", (i)); } while (0)
  if (is_binary(n->op)) {
    NEED(2);
    if (!bcast_shape(in[0], in[1], o)) return ierr(err, el, n, "shapes do not broadcast");
    o->dt = n->op == HR_OP_EQUAL ? HR_DT_BOOL : in[0]->dt;
    return HR_OK;
  }
  switch (n->op) {
    case HR_OP_IDENTITY: case HR_OP_SQUARE: case HR_OP_RELU: case HR_OP_RELU6: case HR_OP_SIGMOID: case HR_OP_TANH:
    case HR_OP_BIAS_ADD:
      NEED(1); *o = *in[0]; o->data = NULL; return HR_OK;
    case HR_OP_ADDN:
      NEED(1); *o = *in[0]; o->data = NULL; return HR_OK;
    case HR_OP_CAST:
      NEED(1); *o = *in[0]; o->data = NULL; o->dt = a->dst_type; return HR_OK;
    case HR_OP_SQUEEZE: {
      NEED(1); o->rank = 0;
      for (int d = 0; d < in[0]->rank; d++) {
        int sq = 0;
        if (a->n_squeeze == 0) sq = in[0]->dims[d] == 1;
        else for (int k = 0; k < a->n_squeeze; k++) if (norm_axis(a->squeeze_dims[k], in[0]->rank) == d) sq = 1;
        if (!sq) o->dims[o->rank++] = in[0]->dims[d];
      }
      return HR_OK;
    }
    case HR_OP_SHAPE:
      NEED(1); o->dt = HR_DT_INT32; o->rank = 1; o->dims[0] = in[0]->rank; return HR_OK;
    case HR_OP_PACK: {
      NEED(1);
      int ax = norm_axis(a->axis, in[0]->rank + 1);
      o->rank = in[0]->rank + 1;
      for (int d = 0, s = 0; d < o->rank; d++) o->dims[d] = d == ax ? n_in : in[0]->dims[s++];
      return HR_OK;
    }
    case HR_OP_STRIDED_SLICE: {
      NEED(4); NEEDC(1); NEEDC(2); NEEDC(3);
      ss_plan p;
      if (!ss_resolve(a, in[0], in[1], in[2], in[3], &p)) return ierr(err, el, n, "unsupported mask or zero stride");
      o->rank = 0;
      for (int d = 0; d < p.rank; d++) if (!p.shrink[d]) o->dims[o->rank++] = p.size[d];
      return HR_OK;
    }
    case HR_OP_CONV2D: case HR_OP_FUSED_CONV2D: case HR_OP_DWCONV: case HR_OP_FUSED_DWCONV: {
      NEED(2);
      const hr__tensor *x = in[0], *w = in[1];
      if (x->rank != 4 || w->rank != 4) return ierr(err, el, n, "input and filter must be rank 4");
      int dw = n->op == HR_OP_DWCONV || n->op == HR_OP_FUSED_DWCONV;
      if (w->dims[2] != x->dims[3]) return ierr(err, el, n, "filter in-channels %lld != input channels %lld",
                                                (long long)w->dims[2], (long long)x->dims[3]);
      int64_t oh, ow; int pt, pl;
      hr__conv_geom(a->padding, a->explicit_pad + 2, x->dims[1], (int)w->dims[0], a->strides[1], a->dilations[1], &oh, &pt);
      hr__conv_geom(a->padding, a->explicit_pad + 4, x->dims[2], (int)w->dims[1], a->strides[2], a->dilations[2], &ow, &pl);
      if (oh <= 0 || ow <= 0) return ierr(err, el, n, "input %lldx%lld too small for the kernel", (long long)x->dims[2], (long long)x->dims[1]);
      o->rank = 4; o->dims[0] = x->dims[0]; o->dims[1] = oh; o->dims[2] = ow;
      o->dims[3] = dw ? w->dims[2] * w->dims[3] : w->dims[3];
      if (a->fused_bias && (n_in < 3 || hr__numel(in[2]) != o->dims[3])) return ierr(err, el, n, "bias size mismatch");
      return HR_OK;
    }
    case HR_OP_DECONV2D: {
      NEED(3); NEEDC(0);
      if (hr__numel(in[0]) != 4) return ierr(err, el, n, "input_sizes must have 4 values");
      o->rank = 4; for (int d = 0; d < 4; d++) o->dims[d] = ival(in[0], d);
      o->dt = HR_DT_FLOAT;
      return HR_OK;
    }
    case HR_OP_PAD: {
      NEED(2); NEEDC(1);
      if (hr__numel(in[1]) != 2 * in[0]->rank) return ierr(err, el, n, "paddings shape mismatch");
      *o = *in[0]; o->data = NULL;
      for (int d = 0; d < o->rank; d++) o->dims[d] += ival(in[1], 2 * d) + ival(in[1], 2 * d + 1);
      return HR_OK;
    }
    case HR_OP_MEAN: {
      NEED(2); NEEDC(1);
      int red[HR_MAX_RANK] = {0};
      for (int64_t k = 0; k < hr__numel(in[1]); k++) {
        int ax = norm_axis(ival(in[1], k), in[0]->rank);
        if (ax < 0 || ax >= in[0]->rank) return ierr(err, el, n, "reduction axis out of range");
        red[ax] = 1;
      }
      o->rank = 0;
      for (int d = 0; d < in[0]->rank; d++) {
        if (!red[d]) o->dims[o->rank++] = in[0]->dims[d];
        else if (a->keep_dims) o->dims[o->rank++] = 1;
      }
      return HR_OK;
    }
    case HR_OP_CONCAT: {
      NEED(2); NEEDC(n_in - 1);
      int ax = norm_axis(ival(in[n_in - 1], 0), in[0]->rank);
      *o = *in[0]; o->data = NULL; o->dims[ax] = 0;
      for (int k = 0; k < n_in - 1; k++) {
        if (in[k]->rank != in[0]->rank) return ierr(err, el, n, "inputs differ in rank");
        for (int d = 0; d < o->rank; d++)
          if (d != ax && in[k]->dims[d] != in[0]->dims[d]) return ierr(err, el, n, "inputs differ in dim %d", d);
        o->dims[ax] += in[k]->dims[ax];
      }
      return HR_OK;
    }
    case HR_OP_SPLIT: {
      NEED(2); NEEDC(0);
      int ax = norm_axis(ival(in[0], 0), in[1]->rank);
      int k = a->num_split;
      if (k < 1 || k > HR_MAX_OUT || in[1]->dims[ax] % k) return ierr(err, el, n, "cannot split %lld into %d", (long long)in[1]->dims[ax], k);
      for (int i = 0; i < k; i++) { out[i] = *in[1]; out[i].data = NULL; out[i].dims[ax] /= k; }
      *n_out = k;
      return HR_OK;
    }
    case HR_OP_SPLITV: {
      NEED(3); NEEDC(1); NEEDC(2);
      int ax = norm_axis(ival(in[2], 0), in[0]->rank);
      int k = (int)hr__numel(in[1]);
      if (k < 1 || k > HR_MAX_OUT) return ierr(err, el, n, "bad split count");
      int64_t rest = in[0]->dims[ax]; int neg = -1;
      for (int i = 0; i < k; i++) { int v = ival(in[1], i); if (v < 0) neg = i; else rest -= v; }
      for (int i = 0; i < k; i++) {
        out[i] = *in[0]; out[i].data = NULL;
        out[i].dims[ax] = i == neg ? rest : ival(in[1], i);
      }
      *n_out = k;
      return HR_OK;
    }
    case HR_OP_SLICE: {
      NEED(3); NEEDC(1); NEEDC(2);
      *o = *in[0]; o->data = NULL;
      for (int d = 0; d < o->rank; d++) {
        int64_t b = ival(in[1], d), s = ival(in[2], d);
        if (s < 0) s = in[0]->dims[d] - b;
        if (b < 0 || b + s > in[0]->dims[d]) return ierr(err, el, n, "slice out of range in dim %d", d);
        o->dims[d] = s;
      }
      return HR_OK;
    }
    case HR_OP_RESIZE_BILINEAR:
      NEED(2); NEEDC(1);
      if (in[0]->rank != 4) return ierr(err, el, n, "input must be rank 4");
      *o = *in[0]; o->data = NULL; o->dims[1] = ival(in[1], 0); o->dims[2] = ival(in[1], 1);
      if (o->dims[1] <= 0 || o->dims[2] <= 0) return ierr(err, el, n, "target size %lldx%lld invalid", (long long)o->dims[2], (long long)o->dims[1]);
      return HR_OK;
    case HR_OP_AVGPOOL: {
      NEED(1);
      int pt, pl; int64_t oh, ow;
      hr__conv_geom(a->padding, NULL, in[0]->dims[1], a->ksize[1], a->strides[1], 1, &oh, &pt);
      hr__conv_geom(a->padding, NULL, in[0]->dims[2], a->ksize[2], a->strides[2], 1, &ow, &pl);
      *o = *in[0]; o->data = NULL; o->dims[1] = oh; o->dims[2] = ow;
      return HR_OK;
    }
    case HR_OP_BROADCAST_TO: {
      NEED(2); NEEDC(1);
      hr__tensor t = {0}; t.rank = (int)hr__numel(in[1]);
      for (int d = 0; d < t.rank; d++) t.dims[d] = ival(in[1], d);
      if (!bcast_shape(in[0], &t, o)) return ierr(err, el, n, "cannot broadcast");
      o->dt = in[0]->dt;
      return HR_OK;
    }
    case HR_OP_SPACE_TO_BATCH: {
      NEED(3); NEEDC(1); NEEDC(2);
      int bh = ival(in[1], 0), bw = ival(in[1], 1);
      int64_t H = in[0]->dims[1] + ival(in[2], 0) + ival(in[2], 1), W = in[0]->dims[2] + ival(in[2], 2) + ival(in[2], 3);
      if (bh <= 0 || bw <= 0 || H % bh || W % bw) return ierr(err, el, n, "padded size not divisible by block");
      *o = *in[0]; o->data = NULL; o->dims[0] *= bh * bw; o->dims[1] = H / bh; o->dims[2] = W / bw;
      return HR_OK;
    }
    case HR_OP_BATCH_TO_SPACE: {
      NEED(3); NEEDC(1); NEEDC(2);
      int bh = ival(in[1], 0), bw = ival(in[1], 1);
      *o = *in[0]; o->data = NULL;
      if (in[0]->dims[0] % (bh * bw)) return ierr(err, el, n, "batch not divisible by block");
      o->dims[0] /= bh * bw;
      o->dims[1] = in[0]->dims[1] * bh - ival(in[2], 0) - ival(in[2], 1);
      o->dims[2] = in[0]->dims[2] * bw - ival(in[2], 2) - ival(in[2], 3);
      return HR_OK;
    }
    case HR_OP_RESHAPE: {
      NEED(2); NEEDC(1);
      int64_t total = hr__numel(in[0]), known = 1; int neg = -1;
      o->rank = (int)hr__numel(in[1]);
      for (int d = 0; d < o->rank; d++) {
        int v = ival(in[1], d);
        if (v == -1) neg = d; else { o->dims[d] = v; known *= v; }
      }
      if (neg >= 0) o->dims[neg] = known ? total / known : 0;
      if (hr__numel(o) != total) return ierr(err, el, n, "reshape changes element count");
      return HR_OK;
    }
    case HR_OP_MATMUL: {
      NEED(2);
      if (in[0]->rank != 2 || in[1]->rank != 2) return ierr(err, el, n, "MatMul needs rank-2 inputs");
      int64_t M = a->transpose_a ? in[0]->dims[1] : in[0]->dims[0], K = a->transpose_a ? in[0]->dims[0] : in[0]->dims[1];
      int64_t K2 = a->transpose_b ? in[1]->dims[1] : in[1]->dims[0], N = a->transpose_b ? in[1]->dims[0] : in[1]->dims[1];
      if (K != K2) return ierr(err, el, n, "inner dims differ");
      o->rank = 2; o->dims[0] = M; o->dims[1] = N;
      return HR_OK;
    }
    default:
      return ierr(err, el, n, "no shape rule");
  }
#undef NEED
#undef NEEDC
}

/* ---------------- reference kernels ---------------- */

static void conv_ref(const hr__node *n, const hr__tensor *x, const hr__tensor *w, const hr__tensor *bias, hr__tensor *o) {
  const hr__attrs *a = &n->a;
  int dw = n->op == HR_OP_DWCONV || n->op == HR_OP_FUSED_DWCONV;
  int64_t N = x->dims[0], H = x->dims[1], W = x->dims[2], C = x->dims[3];
  int KH = (int)w->dims[0], KW = (int)w->dims[1];
  int64_t OH = o->dims[1], OW = o->dims[2], OC = o->dims[3];
  int64_t oh_, ow_; int pt, pl;
  hr__conv_geom(a->padding, a->explicit_pad + 2, H, KH, a->strides[1], a->dilations[1], &oh_, &pt);
  hr__conv_geom(a->padding, a->explicit_pad + 4, W, KW, a->strides[2], a->dilations[2], &ow_, &pl);
  const float *X = x->data, *Wt = w->data, *B = bias ? bias->data : NULL;
  float *O = o->data;
  int64_t M = dw ? w->dims[3] : 1;
  float lo = -INFINITY, hi = INFINITY;
  if (a->act == HR_ACT_RELU) lo = 0; else if (a->act == HR_ACT_RELU6) { lo = 0; hi = 6; }
  for (int64_t b = 0; b < N; b++)
    for (int64_t oy = 0; oy < OH; oy++)
      for (int64_t ox = 0; ox < OW; ox++) {
        float *op = O + ((b * OH + oy) * OW + ox) * OC;
        for (int64_t c = 0; c < OC; c++) op[c] = B ? B[c] : 0.f;
        for (int ky = 0; ky < KH; ky++) {
          int64_t iy = oy * a->strides[1] - pt + (int64_t)ky * a->dilations[1];
          if (iy < 0 || iy >= H) continue;
          for (int kx = 0; kx < KW; kx++) {
            int64_t ix = ox * a->strides[2] - pl + (int64_t)kx * a->dilations[2];
            if (ix < 0 || ix >= W) continue;
            const float *xp = X + ((b * H + iy) * W + ix) * C;
            const float *wp = Wt + ((int64_t)ky * KW + kx) * C * (dw ? M : OC);
            if (dw) {
              for (int64_t c = 0; c < C; c++)
                for (int64_t m = 0; m < M; m++) op[c * M + m] += xp[c] * wp[c * M + m];
            } else {
              for (int64_t c = 0; c < C; c++) {
                float xv = xp[c]; const float *wr = wp + c * OC;
                for (int64_t k = 0; k < OC; k++) op[k] += xv * wr[k];
              }
            }
          }
        }
        for (int64_t c = 0; c < OC; c++) { float v = op[c]; v = v < lo ? lo : v; v = v > hi ? hi : v; op[c] = v; }
      }
}

static void deconv_ref(const hr__node *n, const hr__tensor *w, const hr__tensor *x, hr__tensor *o) {
  /* Conv2DBackpropInput: w [KH,KW,OC,IC], x [N,H,W,IC], o [N,OH,OW,OC] */
  const hr__attrs *a = &n->a;
  int KH = (int)w->dims[0], KW = (int)w->dims[1];
  int64_t OC = w->dims[2], IC = w->dims[3];
  int64_t N = x->dims[0], H = x->dims[1], W = x->dims[2], OH = o->dims[1], OW = o->dims[2];
  int sh = a->strides[1], sw = a->strides[2];
  int64_t fo; int pt, pl;
  hr__conv_geom(a->padding, a->explicit_pad + 2, OH, KH, sh, 1, &fo, &pt);
  hr__conv_geom(a->padding, a->explicit_pad + 4, OW, KW, sw, 1, &fo, &pl);
  float *O = o->data; const float *X = x->data, *Wt = w->data;
  memset(O, 0, sizeof(float) * (size_t)hr__numel(o));
  for (int64_t b = 0; b < N; b++)
    for (int64_t y = 0; y < H; y++)
      for (int64_t xx = 0; xx < W; xx++) {
        const float *xp = X + ((b * H + y) * W + xx) * IC;
        for (int ky = 0; ky < KH; ky++) {
          int64_t oy = y * sh - pt + ky;
          if (oy < 0 || oy >= OH) continue;
          for (int kx = 0; kx < KW; kx++) {
            int64_t ox = xx * sw - pl + kx;
            if (ox < 0 || ox >= OW) continue;
            float *op = O + ((b * OH + oy) * OW + ox) * OC;
            const float *wp = Wt + ((int64_t)ky * KW + kx) * OC * IC;
            for (int64_t oc = 0; oc < OC; oc++) {
              float acc = 0;
              for (int64_t ic = 0; ic < IC; ic++) acc += xp[ic] * wp[oc * IC + ic];
              op[oc] += acc;
            }
          }
        }
      }
}

static void resize_ref(const hr__attrs *a, const hr__tensor *x, hr__tensor *o) {
  int64_t N = x->dims[0], H = x->dims[1], W = x->dims[2], C = x->dims[3], OH = o->dims[1], OW = o->dims[2];
  float sy = (a->align_corners && OH > 1) ? (float)(H - 1) / (OH - 1) : (float)H / OH;
  float sx = (a->align_corners && OW > 1) ? (float)(W - 1) / (OW - 1) : (float)W / OW;
  const float *X = x->data; float *O = o->data;
  for (int64_t b = 0; b < N; b++)
    for (int64_t oy = 0; oy < OH; oy++) {
      float fy = a->half_pixel ? ((float)oy + 0.5f) * sy - 0.5f : (float)oy * sy;
      float fly = floorf(fy);
      int64_t y0 = fly < 0 ? 0 : (int64_t)fly, y1 = (int64_t)ceilf(fy); if (y1 > H - 1) y1 = H - 1; if (y1 < 0) y1 = 0;
      float ly = fy - fly;
      for (int64_t ox = 0; ox < OW; ox++) {
        float fx = a->half_pixel ? ((float)ox + 0.5f) * sx - 0.5f : (float)ox * sx;
        float flx = floorf(fx);
        int64_t x0 = flx < 0 ? 0 : (int64_t)flx, x1 = (int64_t)ceilf(fx); if (x1 > W - 1) x1 = W - 1; if (x1 < 0) x1 = 0;
        float lx = fx - flx;
        const float *p00 = X + ((b * H + y0) * W + x0) * C, *p01 = X + ((b * H + y0) * W + x1) * C;
        const float *p10 = X + ((b * H + y1) * W + x0) * C, *p11 = X + ((b * H + y1) * W + x1) * C;
        float *op = O + ((b * OH + oy) * OW + ox) * C;
        for (int64_t c = 0; c < C; c++) {
          float top = p00[c] + (p01[c] - p00[c]) * lx;
          float bot = p10[c] + (p11[c] - p10[c]) * lx;
          op[c] = top + (bot - top) * ly;
        }
      }
    }
}

static void avgpool_ref(const hr__attrs *a, const hr__tensor *x, hr__tensor *o) {
  int64_t N = x->dims[0], H = x->dims[1], W = x->dims[2], C = x->dims[3], OH = o->dims[1], OW = o->dims[2];
  int64_t t; int pt, pl;
  hr__conv_geom(a->padding, NULL, H, a->ksize[1], a->strides[1], 1, &t, &pt);
  hr__conv_geom(a->padding, NULL, W, a->ksize[2], a->strides[2], 1, &t, &pl);
  const float *X = x->data; float *O = o->data;
  for (int64_t b = 0; b < N; b++)
    for (int64_t oy = 0; oy < OH; oy++)
      for (int64_t ox = 0; ox < OW; ox++) {
        float *op = O + ((b * OH + oy) * OW + ox) * C;
        for (int64_t c = 0; c < C; c++) op[c] = 0;
        int cnt = 0;
        for (int ky = 0; ky < a->ksize[1]; ky++) {
          int64_t iy = oy * a->strides[1] - pt + ky; if (iy < 0 || iy >= H) continue;
          for (int kx = 0; kx < a->ksize[2]; kx++) {
            int64_t ix = ox * a->strides[2] - pl + kx; if (ix < 0 || ix >= W) continue;
            const float *xp = X + ((b * H + iy) * W + ix) * C;
            for (int64_t c = 0; c < C; c++) op[c] += xp[c];
            cnt++;
          }
        }
        for (int64_t c = 0; c < C; c++) op[c] /= (float)(cnt ? cnt : 1);
      }
}

/* Generic copy of a box region: out[idx] = in[idx*stride + begin] per dim (used by slice, strided slice,
 * split, concat placement, pad placement). */
static void copy_region(const hr__tensor *src, const int64_t *begin, const int64_t *stride, const int64_t *size,
                        hr__tensor *dst, const int64_t *dbegin, int rank) {
  int64_t ss[HR_MAX_RANK], ds[HR_MAX_RANK];
  int64_t s = 1, d = 1;
  for (int i = rank - 1; i >= 0; i--) { ss[i] = s; s *= src->dims[i]; ds[i] = d; d *= dst->dims[i]; }
  int64_t total = 1; for (int i = 0; i < rank; i++) total *= size[i];
  if (total == 0) return;
  size_t es = hr__dtsize(src->dt);
  int64_t idx[HR_MAX_RANK] = {0};
  for (int64_t k = 0; k < total; k++) {
    int64_t so = 0, dof = 0;
    for (int i = 0; i < rank; i++) { so += (begin[i] + idx[i] * stride[i]) * ss[i]; dof += ((dbegin ? dbegin[i] : 0) + idx[i]) * ds[i]; }
    memcpy((char *)dst->data + dof * es, (const char *)src->data + so * es, es);
    for (int i = rank - 1; i >= 0; i--) { if (++idx[i] < size[i]) break; idx[i] = 0; }
  }
}

void hr__op_exec_ref(const hr__node *n, const hr__tensor *const *in, int n_in, hr__tensor *out, int n_out) {
  const hr__attrs *a = &n->a;
  hr__tensor *o = &out[0];
  int64_t ne = hr__numel(o);
  float *of = o->data;
  if (is_binary(n->op)) { exec_binary(to_bop(n->op), in[0], in[1], o); return; }
  switch (n->op) {
    case HR_OP_IDENTITY: memcpy(o->data, in[0]->data, (size_t)ne * hr__dtsize(o->dt)); return;
    case HR_OP_SQUEEZE: case HR_OP_RESHAPE: memcpy(o->data, in[0]->data, (size_t)ne * hr__dtsize(o->dt)); return;
    case HR_OP_SQUARE: for (int64_t i = 0; i < ne; i++) { float v = ((const float *)in[0]->data)[i]; of[i] = v * v; } return;
    case HR_OP_RELU: for (int64_t i = 0; i < ne; i++) { float v = ((const float *)in[0]->data)[i]; of[i] = v > 0 ? v : 0; } return;
    case HR_OP_RELU6: for (int64_t i = 0; i < ne; i++) { float v = ((const float *)in[0]->data)[i]; of[i] = v < 0 ? 0 : v > 6 ? 6 : v; } return;
    case HR_OP_SIGMOID: for (int64_t i = 0; i < ne; i++) of[i] = 1.f / (1.f + expf(-((const float *)in[0]->data)[i])); return;
    case HR_OP_TANH: for (int64_t i = 0; i < ne; i++) of[i] = tanhf(((const float *)in[0]->data)[i]); return;
    case HR_OP_HARDSWISH:
      for (int64_t i = 0; i < ne; i++) {
        float v = ((const float *)in[0]->data)[i], r = v + 3.f;
        r = r < 0 ? 0 : r > 6 ? 6 : r;
        of[i] = (v * (1.f / 6.f)) * r;
      }
      return;
    case HR_OP_BIAS_ADD: {
      int64_t C = o->dims[o->rank - 1];
      for (int64_t i = 0; i < ne; i++) of[i] = ((const float *)in[0]->data)[i] + ((const float *)in[1]->data)[i % C];
      return;
    }
    case HR_OP_ADDN:
      for (int64_t i = 0; i < ne; i++) { float s = 0; for (int k = 0; k < n_in; k++) s += ((const float *)in[k]->data)[i]; of[i] = s; }
      return;
    case HR_OP_CAST:
      for (int64_t i = 0; i < ne; i++) {
        if (o->dt == HR_DT_FLOAT) of[i] = (float)fval(in[0], i);
        else if (o->dt == HR_DT_INT32) ((int32_t *)o->data)[i] = in[0]->dt == HR_DT_FLOAT ? (int32_t)((const float *)in[0]->data)[i] : ival(in[0], i);
        else ((uint8_t *)o->data)[i] = fval(in[0], i) != 0;
      }
      return;
    case HR_OP_SHAPE: for (int d = 0; d < in[0]->rank; d++) ((int32_t *)o->data)[d] = (int32_t)in[0]->dims[d]; return;
    case HR_OP_PACK: {
      int ax = norm_axis(a->axis, in[0]->rank + 1);
      int64_t outer = 1, inner = 1;
      for (int d = 0; d < ax; d++) outer *= in[0]->dims[d];
      for (int d = ax; d < in[0]->rank; d++) inner *= in[0]->dims[d];
      size_t es = hr__dtsize(o->dt);
      for (int64_t p = 0; p < outer; p++)
        for (int k = 0; k < n_in; k++)
          memcpy((char *)o->data + ((p * n_in + k) * inner) * es, (const char *)in[k]->data + p * inner * es, (size_t)inner * es);
      return;
    }
    case HR_OP_STRIDED_SLICE: {
      ss_plan p; ss_resolve(a, in[0], in[1], in[2], in[3], &p);
      hr__tensor full = *o; full.rank = p.rank;
      for (int d = 0; d < p.rank; d++) full.dims[d] = p.size[d];
      copy_region(in[0], p.begin, p.stride, p.size, &full, NULL, p.rank);
      return;
    }
    case HR_OP_CONV2D: case HR_OP_FUSED_CONV2D: case HR_OP_DWCONV: case HR_OP_FUSED_DWCONV:
      conv_ref(n, in[0], in[1], a->fused_bias ? in[2] : NULL, o); return;
    case HR_OP_DECONV2D: deconv_ref(n, in[1], in[2], o); return;
    case HR_OP_PAD: {
      memset(o->data, 0, (size_t)ne * hr__dtsize(o->dt));
      int64_t b[HR_MAX_RANK] = {0}, st[HR_MAX_RANK], db[HR_MAX_RANK];
      for (int d = 0; d < o->rank; d++) { st[d] = 1; db[d] = ival(in[1], 2 * d); }
      copy_region(in[0], b, st, in[0]->dims, o, db, o->rank);
      return;
    }
    case HR_OP_MEAN: {
      const hr__tensor *x = in[0];
      int red[HR_MAX_RANK] = {0};
      for (int64_t k = 0; k < hr__numel(in[1]); k++) red[norm_axis(ival(in[1], k), x->rank)] = 1;
      int64_t cnt = 1; for (int d = 0; d < x->rank; d++) if (red[d]) cnt *= x->dims[d];
      /* output strides over the input's dims (0 for reduced dims) */
      int64_t ost[HR_MAX_RANK], s = 1;
      for (int d = x->rank - 1; d >= 0; d--) { ost[d] = red[d] ? 0 : s; if (!red[d]) s *= x->dims[d]; }
      for (int64_t i = 0; i < ne; i++) of[i] = 0;
      int64_t idx[HR_MAX_RANK] = {0}, total = hr__numel(x), po = 0;
      const float *X = x->data;
      for (int64_t i = 0; i < total; i++) {
        of[po] += X[i];
        for (int d = x->rank - 1; d >= 0; d--) {
          idx[d]++; po += ost[d];
          if (idx[d] < x->dims[d]) break;
          po -= ost[d] * idx[d]; idx[d] = 0;
        }
      }
      for (int64_t i = 0; i < ne; i++) of[i] /= (float)cnt;
      return;
    }
    case HR_OP_CONCAT: {
      int ax = norm_axis(ival(in[n_in - 1], 0), o->rank);
      int64_t b[HR_MAX_RANK] = {0}, st[HR_MAX_RANK], db[HR_MAX_RANK] = {0};
      for (int d = 0; d < o->rank; d++) st[d] = 1;
      for (int k = 0; k < n_in - 1; k++) { copy_region(in[k], b, st, in[k]->dims, o, db, o->rank); db[ax] += in[k]->dims[ax]; }
      return;
    }
    case HR_OP_SPLIT: case HR_OP_SPLITV: {
      const hr__tensor *x = n->op == HR_OP_SPLIT ? in[1] : in[0];
      int ax = n->op == HR_OP_SPLIT ? norm_axis(ival(in[0], 0), x->rank) : norm_axis(ival(in[2], 0), x->rank);
      int64_t b[HR_MAX_RANK] = {0}, st[HR_MAX_RANK];
      for (int d = 0; d < x->rank; d++) st[d] = 1;
      for (int k = 0; k < n_out; k++) { copy_region(x, b, st, out[k].dims, &out[k], NULL, x->rank); b[ax] += out[k].dims[ax]; }
      return;
    }
    case HR_OP_SLICE: {
      int64_t b[HR_MAX_RANK], st[HR_MAX_RANK];
      for (int d = 0; d < o->rank; d++) { b[d] = ival(in[1], d); st[d] = 1; }
      copy_region(in[0], b, st, o->dims, o, NULL, o->rank);
      return;
    }
    case HR_OP_RESIZE_BILINEAR: resize_ref(a, in[0], o); return;
    case HR_OP_AVGPOOL: avgpool_ref(a, in[0], o); return;
    case HR_OP_BROADCAST_TO: {
      int64_t sa[HR_MAX_RANK], idx[HR_MAX_RANK] = {0}, pa = 0;
      bcast_strides(in[0], o, sa);
      size_t es = hr__dtsize(o->dt);
      for (int64_t i = 0; i < ne; i++) {
        memcpy((char *)o->data + i * es, (const char *)in[0]->data + pa * es, es);
        for (int d = o->rank - 1; d >= 0; d--) {
          idx[d]++; pa += sa[d];
          if (idx[d] < o->dims[d]) break;
          pa -= sa[d] * idx[d]; idx[d] = 0;
        }
      }
      return;
    }
    case HR_OP_SPACE_TO_BATCH: {
      const hr__tensor *x = in[0];
      int bh = ival(in[1], 0), bw = ival(in[1], 1), pt = ival(in[2], 0), pl = ival(in[2], 2);
      int64_t N = x->dims[0], H = x->dims[1], W = x->dims[2], C = x->dims[3], OH = o->dims[1], OW = o->dims[2];
      for (int i = 0; i < bh; i++) for (int j = 0; j < bw; j++) for (int64_t b = 0; b < N; b++)
        for (int64_t y = 0; y < OH; y++) for (int64_t xx = 0; xx < OW; xx++) {
          int64_t iy = y * bh + i - pt, ix = xx * bw + j - pl;
          float *op = of + ((((int64_t)(i * bw + j) * N + b) * OH + y) * OW + xx) * C;
          if (iy < 0 || iy >= H || ix < 0 || ix >= W) { for (int64_t c = 0; c < C; c++) op[c] = 0; }
          else memcpy(op, (const float *)x->data + ((b * H + iy) * W + ix) * C, sizeof(float) * (size_t)C);
        }
      return;
    }
    case HR_OP_BATCH_TO_SPACE: {
      const hr__tensor *x = in[0];
      int bh = ival(in[1], 0), bw = ival(in[1], 1), ct = ival(in[2], 0), cl = ival(in[2], 2);
      int64_t N = o->dims[0], H = x->dims[1], W = x->dims[2], C = x->dims[3], OH = o->dims[1], OW = o->dims[2];
      for (int64_t b = 0; b < N; b++) for (int64_t y = 0; y < OH; y++) for (int64_t xx = 0; xx < OW; xx++) {
        int64_t py = y + ct, px = xx + cl;
        int i = (int)(py % bh), j = (int)(px % bw);
        int64_t sy = py / bh, sx = px / bw;
        memcpy(of + ((b * OH + y) * OW + xx) * C,
               (const float *)x->data + ((((int64_t)(i * bw + j) * N + b) * H + sy) * W + sx) * C, sizeof(float) * (size_t)C);
      }
      return;
    }
    case HR_OP_MATMUL: {
      int64_t M = o->dims[0], N = o->dims[1];
      int64_t K = a->transpose_a ? in[0]->dims[0] : in[0]->dims[1];
      const float *A = in[0]->data, *B = in[1]->data;
      for (int64_t i = 0; i < M; i++) for (int64_t j = 0; j < N; j++) {
        float s = 0;
        for (int64_t k = 0; k < K; k++) {
          float av = a->transpose_a ? A[k * M + i] : A[i * K + k];
          float bv = a->transpose_b ? B[j * K + k] : B[k * N + j];
          s += av * bv;
        }
        of[i * N + j] = s;
      }
      return;
    }
    default: return;
  }
}

double hr__op_flops(const hr__node *n, const hr__tensor *const *in, int n_in, const hr__tensor *o) {
  switch (n->op) {
    case HR_OP_CONV2D: case HR_OP_FUSED_CONV2D:
      return 2.0 * hr__numel(o) * in[1]->dims[0] * in[1]->dims[1] * in[1]->dims[2];
    case HR_OP_DWCONV: case HR_OP_FUSED_DWCONV:
      return 2.0 * hr__numel(o) * in[1]->dims[0] * in[1]->dims[1];
    case HR_OP_DECONV2D:
      return 2.0 * hr__numel(in[2]) * in[1]->dims[0] * in[1]->dims[1] * in[1]->dims[2];
    case HR_OP_MATMUL:
      return 2.0 * hr__numel(o) * (n->a.transpose_a ? in[0]->dims[0] : in[0]->dims[1]);
    case HR_OP_MEAN: return (double)hr__numel(in[0]);
    case HR_OP_RESIZE_BILINEAR: return 8.0 * hr__numel(o);
    case HR_OP_AVGPOOL: return (double)hr__numel(in[0]);
    default:
      if (is_binary(n->op) || n->op == HR_OP_SQUARE || n->op == HR_OP_RELU || n->op == HR_OP_RELU6 ||
          n->op == HR_OP_SIGMOID || n->op == HR_OP_TANH || n->op == HR_OP_BIAS_ADD || n->op == HR_OP_ADDN)
        return (double)hr__numel(o);
      return 0;
  }
}
