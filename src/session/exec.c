/* Executor: one kernel per planned op, XNNPACK operators where they exist, our own kernels elsewhere. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <xnnpack.h>
#include "session/session_impl.h"
#include "graph/ops.h"
#include "session/kernels.h"
#include "session/kcache.h"
#include "backend/backend.h"

typedef enum { K_REF = 0, K_XNN, K_CONCAT, K_SPLIT, K_SLICE, K_TANH, K_MEAN_C, K_FGF, K_NOP, K_SRC_RESIZE, K_DW1D, K_RESIZE } kkind;
typedef enum { X_CONV, X_DECONV, X_BINARY, X_UNARY, X_RESIZE, X_GAP, X_FC, X_AVGPOOL } xkind;

/* Everything an XNNPACK operator's create and setup depend on. Two ops with equal descriptors are
 * interchangeable, so a descriptor is also the kernel cache's key: it is zeroed before it is
 * filled (padding bytes compare too), and weights are named by their pointer (shared only when
 * that points into the model's immutable weight block). */
typedef struct xdesc {
  xkind xk;
  hr__op op;                     /* which binary / unary op */
  uint32_t flags;
  uint32_t pt, pr, pb, pl, kh, kw, sh, sw, dh, dw;
  size_t groups, gic, goc;       /* conv / deconv: groups and channels per group */
  size_t ch;                     /* unary, resize, global average pooling: channels */
  size_t fc_k, fc_n;             /* fully connected: input and output channels */
  float lo, hi;                  /* output clamp */
  const float *w, *b;            /* weights as the graph holds them, bias */
  /* setup shapes */
  size_t n, ih, iw, oh, ow;      /* batch and spatial sizes (GAP: iw = pixels) */
  size_t batch;                  /* unary, fully connected: rows */
  size_t rank_a, rank_b, sa[XNN_MAX_TENSOR_DIMS], sb[XNN_MAX_TENSOR_DIMS]; /* binary operand shapes */
} xdesc;

/* One horizontal band of a convolution run in bands (plan.h, hr__conv_bands): a clone of the
 * template for its shape, set up on its rows of the input and output. */
typedef struct xband {
  xnn_operator_t op;
  hr__kshare *share;
  int64_t shared_bytes;
  int64_t in0, in_rows, out0; /* its input rows [in0, in0 + in_rows) and first output row */
} xband;

typedef struct kern {
  kkind kind;
  hr__fgf fgf;              /* K_FGF tables */
  hr__ingest_plan ing;      /* K_SRC_RESIZE: frame -> processing size */
  hr__resize rs;            /* K_RESIZE column taps */
  float *wexp;              /* K_DW1D weights expanded to the row width (VALID fast path) */
  pthreadpool_t pool;       /* NULL for ops too small to be worth waking the workers */
  xdesc xd;                 /* K_XNN: what the operator is (and its kernel-cache key) */
  xnn_operator_t op;
  hr__kshare *share;        /* the template op is a clone of, or NULL for an operator of its own */
  int64_t shared_bytes;     /* the template's memory (shared with the model's other sessions) */
  int n_band;               /* > 0: a convolution run as n_band horizontal bands (op is NULL) */
  xband *band;
  int reads_src;            /* re-setup when the src pointer changes (zero-copy input) */
  int bound;                /* set up with this session's pointers (a clone starts with placeholders) */
  const void *last_src;
} kern;

struct hr__exec {
  int n;
  kern *k;
  hr__kcache *kc;           /* the model's, where shared operators come from */
};

/* XNNPACK is initialised once per process; a failed attempt (out of memory) is retried next time. */
static pthread_mutex_t xnn_lock = PTHREAD_MUTEX_INITIALIZER;
static int xnn_ready;
static enum xnn_status xnn_init(void) {
  pthread_mutex_lock(&xnn_lock);
  enum xnn_status st = xnn_ready ? xnn_status_success : xnn_initialize(hr__xnn_allocator());
  if (st == xnn_status_success) xnn_ready = 1;
  pthread_mutex_unlock(&xnn_lock);
  return st;
}

static hr__tensor view(hr_session *s, int v) { return hr__plan_view(s->plan, v, s->arena, s->state, s->src_ptr); }

static int is_const(hr_session *s, int v) { return s->plan->vals[v].kind == V_CONST; }

static void act_range(hr__act a, float *lo, float *hi) {
  *lo = -INFINITY; *hi = INFINITY;
  if (a == HR_ACT_RELU) *lo = 0;
  else if (a == HR_ACT_RELU6) { *lo = 0; *hi = 6; }
}

/* Describe rop r as an XNNPACK operator; returns 0 if XNNPACK has none for it. */
static int describe_xnn(hr_session *s, const hr__rop *r, xdesc *d) {
  const hr__plan *p = s->plan;
  const hr__node *n = r->node ? r->node : &r->syn;
  const hr__attrs *a = &n->a;
  memset(d, 0, sizeof *d);
  d->op = r->op;
  d->lo = -INFINITY; d->hi = INFINITY;
  const hr__tensor *x = &p->vals[r->in[0]].t, *o = &p->vals[r->out[0]].t;
  switch (r->op) {
    case HR_OP_CONV2D: case HR_OP_FUSED_CONV2D: case HR_OP_DWCONV: case HR_OP_FUSED_DWCONV: {
      if (!is_const(s, r->in[1]) || (a->fused_bias && !is_const(s, r->in[2]))) return 0;
      const hr__tensor *w = &p->vals[r->in[1]].t;
      int dw = r->op == HR_OP_DWCONV || r->op == HR_OP_FUSED_DWCONV;
      int KH = (int)w->dims[0], KW = (int)w->dims[1];
      int64_t oh, ow; int pt, pl;
      hr__conv_geom(a->padding, a->explicit_pad + 2, x->dims[1], KH, a->strides[1], a->dilations[1], &oh, &pt);
      hr__conv_geom(a->padding, a->explicit_pad + 4, x->dims[2], KW, a->strides[2], a->dilations[2], &ow, &pl);
      int pb = (int)((oh - 1) * a->strides[1] + (int64_t)(KH - 1) * a->dilations[1] + 1 - x->dims[1] - pt);
      int pr = (int)((ow - 1) * a->strides[2] + (int64_t)(KW - 1) * a->dilations[2] + 1 - x->dims[2] - pl);
      d->xk = X_CONV;
      d->pt = (uint32_t)pt; d->pl = (uint32_t)pl; d->pb = pb > 0 ? (uint32_t)pb : 0; d->pr = pr > 0 ? (uint32_t)pr : 0;
      d->kh = (uint32_t)KH; d->kw = (uint32_t)KW;
      d->sh = (uint32_t)a->strides[1]; d->sw = (uint32_t)a->strides[2];
      d->dh = (uint32_t)a->dilations[1]; d->dw = (uint32_t)a->dilations[2];
      if (dw) { d->groups = (size_t)x->dims[3]; d->gic = 1; d->goc = (size_t)w->dims[3]; d->flags = XNN_FLAG_DEPTHWISE_CONVOLUTION; }
      else { d->groups = 1; d->gic = (size_t)x->dims[3]; d->goc = (size_t)o->dims[3]; }
      act_range(a->act, &d->lo, &d->hi);
      d->w = w->data;
      d->b = a->fused_bias ? p->vals[r->in[2]].t.data : NULL;
      d->n = (size_t)x->dims[0]; d->ih = (size_t)x->dims[1]; d->iw = (size_t)x->dims[2];
      return 1;
    }
    case HR_OP_DECONV2D: {
      if (!is_const(s, r->in[1])) return 0;
      const hr__tensor *w = &p->vals[r->in[1]].t, *in = &p->vals[r->in[2]].t;
      int KH = (int)w->dims[0], KW = (int)w->dims[1];
      int sh = a->strides[1], sw = a->strides[2];
      int64_t toth = (in->dims[1] - 1) * sh + KH - o->dims[1], totw = (in->dims[2] - 1) * sw + KW - o->dims[2];
      if (toth < 0 || totw < 0 || a->padding != HR_PAD_SAME) return 0;
      d->xk = X_DECONV;
      d->pt = (uint32_t)(toth / 2); d->pr = (uint32_t)(totw - totw / 2); d->pb = (uint32_t)(toth - toth / 2); d->pl = (uint32_t)(totw / 2);
      d->kh = (uint32_t)KH; d->kw = (uint32_t)KW; d->sh = (uint32_t)sh; d->sw = (uint32_t)sw; d->dh = d->dw = 1;
      d->groups = 1; d->gic = (size_t)w->dims[3]; d->goc = (size_t)w->dims[2];
      d->w = w->data;
      d->n = (size_t)in->dims[0]; d->ih = (size_t)in->dims[1]; d->iw = (size_t)in->dims[2];
      return 1;
    }
    case HR_OP_MUL: case HR_OP_ADD: case HR_OP_ADDV2: case HR_OP_SUB: case HR_OP_REALDIV:
    case HR_OP_MINIMUM: case HR_OP_MAXIMUM: {
      if (o->dt != HR_DT_FLOAT || o->rank > XNN_MAX_TENSOR_DIMS) return 0;
      const hr__tensor *y = &p->vals[r->in[1]].t;
      d->xk = X_BINARY;
      d->rank_a = (size_t)x->rank; d->rank_b = (size_t)y->rank;
      for (int k = 0; k < x->rank; k++) d->sa[k] = (size_t)x->dims[k];
      for (int k = 0; k < y->rank; k++) d->sb[k] = (size_t)y->dims[k];
      return 1;
    }
    case HR_OP_RELU: case HR_OP_RELU6: case HR_OP_SIGMOID: case HR_OP_SQUARE: case HR_OP_HARDSWISH:
      d->xk = X_UNARY;
      d->ch = (size_t)o->dims[o->rank - 1];
      d->batch = (size_t)(hr__numel(o) / (int64_t)d->ch);
      if (r->op == HR_OP_RELU) d->lo = 0.f;
      if (r->op == HR_OP_RELU6) { d->lo = 0.f; d->hi = 6.f; }
      return 1;
    case HR_OP_RESIZE_BILINEAR:
      if (a->align_corners) return 0;
      d->xk = X_RESIZE;
      d->ch = (size_t)o->dims[3];
      d->flags = a->half_pixel ? 0 : XNN_FLAG_TENSORFLOW_LEGACY_MODE;
      d->n = (size_t)x->dims[0]; d->ih = (size_t)x->dims[1]; d->iw = (size_t)x->dims[2];
      d->oh = (size_t)o->dims[1]; d->ow = (size_t)o->dims[2];
      return 1;
    case HR_OP_MEAN: {
      if (!is_const(s, r->in[1]) || x->rank != 4) return 0;
      const hr__tensor *ax = &p->vals[r->in[1]].t;
      if (hr__numel(ax) != 2) return 0;
      int a0 = ((int32_t *)ax->data)[0], a1 = ((int32_t *)ax->data)[1];
      if (!((a0 == 1 && a1 == 2) || (a0 == 2 && a1 == 1))) return 0;
      d->xk = X_GAP;
      d->ch = (size_t)x->dims[3];
      d->n = (size_t)x->dims[0]; d->iw = (size_t)(x->dims[1] * x->dims[2]);
      return 1;
    }
    case HR_OP_MATMUL: {
      if (!is_const(s, r->in[1]) || a->transpose_a) return 0;
      const hr__tensor *w = &p->vals[r->in[1]].t;
      d->xk = X_FC;
      d->fc_k = (size_t)(a->transpose_b ? w->dims[1] : w->dims[0]);
      d->fc_n = (size_t)(a->transpose_b ? w->dims[0] : w->dims[1]);
      d->flags = a->transpose_b ? 0 : XNN_FLAG_TRANSPOSE_WEIGHTS;
      d->w = w->data;
      d->batch = (size_t)x->dims[0];
      return 1;
    }
    default:
      return 0;
  }
}

static hr_status xnn_err(enum xnn_status xs) { return xs == xnn_status_out_of_memory ? HR_ENOMEM : HR_ENOTSUP; }

/* Weights reordered into XNNPACK's OHWI, from TF's HWIO (convolution) or HWOI (deconvolution),
 * for XNNPACK to pack at create; the caller frees the temporary right after. */
static float *to_ohwi(const float *w, size_t KK, size_t I, size_t O, int hwoi) {
  float *t = malloc(sizeof(float) * KK * I * O);
  if (!t) return NULL;
  for (size_t o = 0; o < O; o++)
    for (size_t kk = 0; kk < KK; kk++)
      for (size_t i = 0; i < I; i++) t[(o * KK + kk) * I + i] = hwoi ? w[(kk * O + o) * I + i] : w[(kk * I + i) * O + o];
  return t;
}

/* Create the operator a descriptor describes (weights are packed here). */
static hr_status create_desc(const xdesc *d, xnn_operator_t *op) {
  enum xnn_status xs = xnn_status_success;
  *op = NULL;
  switch (d->xk) {
    case X_CONV:
      if (d->flags & XNN_FLAG_DEPTHWISE_CONVOLUTION) {
        xs = xnn_create_convolution2d_nhwc_f32(d->pt, d->pr, d->pb, d->pl, d->kh, d->kw, d->sh, d->sw, d->dh, d->dw,
                                               (uint32_t)d->groups, 1, d->goc, d->groups, d->groups * d->goc, d->w, d->b,
                                               d->lo, d->hi, d->flags, op);
      } else {
        size_t C = d->gic, OC = d->goc;
        float *t = to_ohwi(d->w, (size_t)d->kh * d->kw, C, OC, 0);
        if (!t) return HR_ENOMEM;
        xs = xnn_create_convolution2d_nhwc_f32(d->pt, d->pr, d->pb, d->pl, d->kh, d->kw, d->sh, d->sw, d->dh, d->dw, 1, C, OC,
                                               C, OC, t, d->b, d->lo, d->hi, 0, op);
        free(t);
      }
      break;
    case X_DECONV: {
      size_t IC = d->gic, OC = d->goc;
      float *t = to_ohwi(d->w, (size_t)d->kh * d->kw, IC, OC, 1);
      if (!t) return HR_ENOMEM;
      xs = xnn_create_deconvolution2d_nhwc_f32(d->pt, d->pr, d->pb, d->pl, d->kh, d->kw, d->sh, d->sw, 1, 1, 1, IC, OC, IC, OC,
                                               t, NULL, -INFINITY, INFINITY, 0, op);
      free(t);
      break;
    }
    case X_BINARY:
      switch (d->op) {
        case HR_OP_MUL: xs = xnn_create_multiply_nd_f32(-INFINITY, INFINITY, 0, op); break;
        case HR_OP_SUB: xs = xnn_create_subtract_nd_f32(-INFINITY, INFINITY, 0, op); break;
        case HR_OP_REALDIV: xs = xnn_create_divide_nd_f32(-INFINITY, INFINITY, 0, op); break;
        case HR_OP_MINIMUM: xs = xnn_create_minimum_nd_f32(0, op); break;
        case HR_OP_MAXIMUM: xs = xnn_create_maximum_nd_f32(0, op); break;
        default: xs = xnn_create_add_nd_f32(-INFINITY, INFINITY, 0, op); break;
      }
      break;
    case X_UNARY:
      switch (d->op) {
        case HR_OP_RELU: case HR_OP_RELU6: xs = xnn_create_clamp_nc_f32(d->ch, d->ch, d->ch, d->lo, d->hi, 0, op); break;
        case HR_OP_SIGMOID: xs = xnn_create_sigmoid_nc_f32(d->ch, d->ch, d->ch, 0, op); break;
        case HR_OP_HARDSWISH: xs = xnn_create_hardswish_nc_f32(d->ch, d->ch, d->ch, 0, op); break;
        default: xs = xnn_create_square_nc_f32(d->ch, d->ch, d->ch, 0, op); break;
      }
      break;
    case X_RESIZE: xs = xnn_create_resize_bilinear2d_nhwc_f32(d->ch, d->ch, d->ch, d->flags, op); break;
    case X_GAP: xs = xnn_create_global_average_pooling_nwc_f32(d->ch, d->ch, d->ch, -INFINITY, INFINITY, 0, op); break;
    case X_FC: xs = xnn_create_fully_connected_nc_f32(d->fc_k, d->fc_n, d->fc_k, d->fc_n, d->w, NULL, -INFINITY, INFINITY, d->flags, op); break;
    default: return HR_ENOTSUP;
  }
  if (xs != xnn_status_success) { *op = NULL; return xnn_err(xs); }
  return HR_OK;
}

/* Bind an operator to its data: x (and y, the second operand of binary ops) in, o out. */
static enum xnn_status setup_desc(const xdesc *d, xnn_operator_t op, const void *x, const void *y, void *o, pthreadpool_t pool) {
  switch (d->xk) {
    case X_CONV: return xnn_setup_convolution2d_nhwc_f32(op, d->n, d->ih, d->iw, x, o, pool);
    case X_DECONV: return xnn_setup_deconvolution2d_nhwc_f32(op, d->n, d->ih, d->iw, 0, 0, x, o, pool);
    case X_BINARY: {
      enum xnn_status (*fn)(xnn_operator_t, size_t, const size_t *, size_t, const size_t *, const float *, const float *, float *, pthreadpool_t);
      switch (d->op) {
        case HR_OP_MUL: fn = xnn_setup_multiply_nd_f32; break;
        case HR_OP_SUB: fn = xnn_setup_subtract_nd_f32; break;
        case HR_OP_REALDIV: fn = xnn_setup_divide_nd_f32; break;
        case HR_OP_MINIMUM: fn = xnn_setup_minimum_nd_f32; break;
        case HR_OP_MAXIMUM: fn = xnn_setup_maximum_nd_f32; break;
        default: fn = xnn_setup_add_nd_f32; break;
      }
      return fn(op, d->rank_a, d->sa, d->rank_b, d->sb, x, y, o, pool);
    }
    case X_UNARY:
      switch (d->op) {
        case HR_OP_RELU: case HR_OP_RELU6: return xnn_setup_clamp_nc_f32(op, d->batch, x, o, pool);
        case HR_OP_SIGMOID: return xnn_setup_sigmoid_nc_f32(op, d->batch, x, o, pool);
        case HR_OP_HARDSWISH: return xnn_setup_hardswish_nc_f32(op, d->batch, x, o, pool);
        default: return xnn_setup_square_nc_f32(op, d->batch, x, o, pool);
      }
    case X_RESIZE: return xnn_setup_resize_bilinear2d_nhwc_f32(op, d->n, d->ih, d->iw, d->oh, d->ow, x, o, pool);
    case X_GAP: return xnn_setup_global_average_pooling_nwc_f32(op, d->n, d->iw, x, o, pool);
    case X_FC: return xnn_setup_fully_connected_nc_f32(op, d->batch, x, o, pool);
    default: return xnn_status_invalid_parameter;
  }
}

/* A template for the kernel cache: created, then set up at the descriptor's shapes with
 * placeholder pointers (never dereferenced: the template never runs; clones record their own
 * pointers' offset from these). */
static hr_status build_template(const void *key, xnn_operator_t *op) {
  const xdesc *d = key;
  hr_status st = create_desc(d, op);
  if (st) return st;
  enum xnn_status xs = setup_desc(d, *op, (const void *)(uintptr_t)0x10000000, (const void *)(uintptr_t)0x20000000,
                                  (void *)(uintptr_t)0x30000000, NULL);
  return xs == xnn_status_success ? HR_OK : xnn_err(xs);
}

/* Operators whose packed weights and shape tables are shared through the model's kernel cache:
 * setup writes only their struct (see kcache.h), and any weights are the model's own. */
static int shareable(const hr_model *m, const xdesc *d) {
  if (d->xk != X_CONV && d->xk != X_FC && d->xk != X_RESIZE) return 0;
  return (!d->w || hr__model_owns(m, d->w)) && (!d->b || hr__model_owns(m, d->b));
}

/* A convolution whose indirection buffer would be large runs in horizontal bands (plan.h): a clone
 * per band of its shape's template. Returns the number of bands (0: not banded); *st on failure. */
static int create_bands(hr_session *s, const hr__rop *r, kern *k, hr_status *st) {
  const xdesc *d = &k->xd;
  const hr__tensor *o = &s->plan->vals[r->out[0]].t;
  if (d->xk != X_CONV || (d->flags & XNN_FLAG_DEPTHWISE_CONVOLUTION)) return 0;
  int nb = hr__conv_bands((int64_t)d->n, (int64_t)d->ih, o->dims[1], o->dims[2], (int)d->kh, (int)d->kw, (int)d->sh, (int)d->dh,
                          (int)d->pt, NULL);
  hr__band *b = nb ? calloc((size_t)nb, sizeof *b) : NULL;
  k->band = b ? calloc((size_t)nb, sizeof *k->band) : NULL;
  if (!nb) return 0;
  if (!k->band) { free(b); *st = HR_ENOMEM; return nb; }
  hr__conv_bands((int64_t)d->n, (int64_t)d->ih, o->dims[1], o->dims[2], (int)d->kh, (int)d->kw, (int)d->sh, (int)d->dh, (int)d->pt, b);
  for (int i = 0; i < nb && !*st; i++) {
    xband *xb = &k->band[k->n_band];
    xdesc bd;
    memcpy(&bd, d, sizeof bd); /* padding bytes too: the descriptor is the cache's key */
    bd.ih = (size_t)b[i].in_rows;
    bd.pt = (uint32_t)b[i].pt;
    bd.pb = (uint32_t)b[i].pb;
    xb->in0 = b[i].in0;
    xb->in_rows = b[i].in_rows;
    xb->out0 = b[i].out0;
    *st = hr__kcache_acquire(s->m->kcache, &bd, sizeof bd, build_template, &xb->op, &xb->share, &xb->shared_bytes);
    if (!*st) k->n_band++;
  }
  free(b);
  return nb;
}

/* The XNNPACK operator for rop r if one fits (k->op set, or k->band; returns 1); *st is set on failure. */
static int create_xnn(hr_session *s, const hr__rop *r, kern *k, hr_status *st) {
  *st = HR_OK;
  if (!describe_xnn(s, r, &k->xd)) return 0;
  int shared = shareable(s->m, &k->xd);
  if (!(shared && create_bands(s, r, k, st)))
    *st = shared ? hr__kcache_acquire(s->m->kcache, &k->xd, sizeof k->xd, build_template, &k->op, &k->share, &k->shared_bytes)
                 : create_desc(&k->xd, &k->op);
  if (*st) {
    const hr__node *n = r->node ? r->node : &r->syn;
    snprintf(s->err, sizeof s->err, "XNNPACK refused op %s (%s): %s", hr__op_name(r->op), n->name,
             *st == HR_ENOMEM ? "out of memory" : "unsupported parameters");
    return 0;
  }
  k->kind = K_XNN;
  return 1;
}

static hr_status setup_xnn(hr_session *s, const hr__rop *r, kern *k) {
  const xdesc *d = &k->xd;
  hr__tensor x = view(s, r->in[d->xk == X_DECONV ? 2 : 0]);
  hr__tensor o = view(s, r->out[0]);
  const void *y = d->xk == X_BINARY ? view(s, r->in[1]).data : NULL;
  enum xnn_status xs = xnn_status_success;
  /* bands: rows of the input and output as the operators were made (pixel stride groups x channels),
   * each run by one thread (run_xnn) */
  for (int b = 0; b < k->n_band && xs == xnn_status_success; b++) {
    const xband *xb = &k->band[b];
    const float *xr = (const float *)x.data + xb->in0 * (int64_t)(d->iw * d->groups * d->gic);
    float *orow = (float *)o.data + xb->out0 * (int64_t)o.dims[2] * (int64_t)(d->groups * d->goc);
    xs = xnn_setup_convolution2d_nhwc_f32(xb->op, d->n, (size_t)xb->in_rows, d->iw, xr, orow, NULL);
  }
  if (!k->n_band) xs = setup_desc(d, k->op, x.data, y, o.data, k->pool);
  if (xs != xnn_status_success) {
    snprintf(s->err, sizeof s->err, "XNNPACK setup failed for %s: status %d", hr__op_name(r->op), (int)xs);
    return HR_ENOTSUP;
  }
  return HR_OK;
}

static int reads_src(hr_session *s, const hr__rop *r) {
  for (int i = 0; i < r->n_in; i++)
    if (s->plan->vals[s->plan->vals[r->in[i]].root].storage == S_SRC) return 1;
  return 0;
}

/* The templates of the plan's operators, each counted once (two ops, or two bands, may share one). */
static int64_t shared_kernel_bytes(const hr__exec *ex) {
  int64_t sum = 0;
  for (int i = 0; i < ex->n; i++)
    for (int b = -1; b < ex->k[i].n_band; b++) {
      const hr__kshare *sh = b < 0 ? ex->k[i].share : ex->k[i].band[b].share;
      int seen = !sh;
      for (int j = 0; j <= i && !seen; j++)
        for (int c = -1; c < (j < i ? ex->k[j].n_band : b) && !seen; c++) seen = (c < 0 ? ex->k[j].share : ex->k[j].band[c].share) == sh;
      if (!seen) sum += b < 0 ? ex->k[i].shared_bytes : ex->k[i].band[b].shared_bytes;
    }
  return sum;
}

/* Bands are the pool's tasks, each run by one thread: a single dispatch for the whole convolution. */
static void run_band(void *ctx, size_t b) { xnn_run_operator(((const kern *)ctx)->band[b].op, NULL); }

static void run_xnn(kern *k) {
  if (k->n_band) pthreadpool_parallelize_1d(k->pool, run_band, k, (size_t)k->n_band, 0);
  else xnn_run_operator(k->op, k->pool);
}

int64_t hr__exec_table_bytes(int n_ops) { return (int64_t)(sizeof(hr__exec) + sizeof(kern) * ((size_t)n_ops + 1)); }

hr_status hr__exec_create(hr_session *s, hr__exec **out) {
  *out = NULL;
  enum xnn_status xst = xnn_init();
  if (xst != xnn_status_success) {
    snprintf(s->err, sizeof s->err, "XNNPACK could not initialise (status %d%s)", (int)xst,
             xst == xnn_status_out_of_memory ? ": out of memory" : ": unsupported CPU?");
    return xst == xnn_status_out_of_memory ? HR_ENOMEM : HR_ENOTSUP;
  }
  hr__exec *ex = calloc(1, sizeof *ex);
  if (!ex) return HR_ENOMEM;
  ex->n = s->plan->n_rops;
  ex->k = calloc((size_t)ex->n + 1, sizeof *ex->k);
  if (!ex->k) { free(ex); return HR_ENOMEM; }
  ex->kc = s->m->kcache;
  hr_status st = HR_OK;
  s->kernel_bytes = 0;
  s->kernel_shared_bytes = 0;
  hr__xnn_account_begin(&s->kernel_bytes);
  for (int i = 0; i < ex->n && !st; i++) {
    const hr__rop *r = &s->plan->rops[i];
    kern *k = &ex->k[i];
    k->reads_src = reads_src(s, r);
    /* On a small machine, waking worker threads costs more than tiny ops take: run them inline. */
    k->pool = (r->flops > 4e6 || hr__numel(&s->plan->vals[r->out[0]].t) > 65536) ? s->pool : NULL;
    if (r->dead) { k->kind = K_NOP; continue; }
    if (r->op == HR_OP_FGF_TAIL) {
      const hr__tensor *A = &s->plan->vals[r->in[0]].t, *o = &s->plan->vals[r->out[0]].t;
      int chunks = s->pool ? (int)pthreadpool_get_threads_count(s->pool) * 4 : 1;
      k->kind = K_FGF;
      st = hr__fgf_init(&k->fgf, (int)A->dims[1], (int)A->dims[2], (int)o->dims[1], (int)o->dims[2], chunks, r->n_out > 1);
      continue;
    }
    if (r->op == HR_OP_SRC_RESIZE) {
      const hr__tensor *o = &s->plan->vals[r->out[0]].t;
      k->kind = K_SRC_RESIZE;
      st = hr__ingest_plan_init(&k->ing, s->plan->width, s->plan->height, (int)o->dims[2], (int)o->dims[1]);
      continue;
    }
    if (s->p.backend == HR_BACKEND_XNNPACK) {
      const hr__attrs *ra = r->node ? &r->node->a : &r->syn.a;
      if ((r->op == HR_OP_DWCONV || r->op == HR_OP_FUSED_DWCONV) && is_const(s, r->in[1])) {
        const hr__tensor *w = &s->plan->vals[r->in[1]].t;
        if ((w->dims[0] == 1 || w->dims[1] == 1) && w->dims[3] == 1 && ra->strides[1] == 1 && ra->strides[2] == 1 &&
            ra->dilations[1] == 1 && ra->dilations[2] == 1) {
          k->kind = K_DW1D;
          k->wexp = hr__dw1d_expand(ra, &s->plan->vals[r->in[0]].t, w, &s->plan->vals[r->out[0]].t);
          continue;
        }
      }
      if (r->op == HR_OP_RESIZE_BILINEAR && ra->half_pixel && !ra->align_corners) {
        k->kind = K_RESIZE;
        st = hr__resize_init(&k->rs, (int)s->plan->vals[r->in[0]].t.dims[2], (int)s->plan->vals[r->out[0]].t.dims[2]);
        continue;
      }
      if (create_xnn(s, r, k, &st)) {
        /* inputs that are the caller's frame are bound at the first push (the pointer changes) */
        if (!k->reads_src) { st = setup_xnn(s, r, k); k->bound = !st; }
        continue;
      }
      if (st) break;
      switch (r->op) {
        case HR_OP_CONCAT: k->kind = K_CONCAT; break;
        case HR_OP_SPLIT: case HR_OP_SPLITV: k->kind = K_SPLIT; break;
        case HR_OP_SLICE: case HR_OP_PAD: k->kind = K_SLICE; break;
        case HR_OP_TANH: k->kind = K_TANH; break;
        case HR_OP_FGF_TAIL: k->kind = K_FGF; break;
        default: k->kind = K_REF; break;
      }
    } else {
      k->kind = K_REF;
    }
  }
  hr__xnn_account_end();
  s->kernel_shared_bytes = shared_kernel_bytes(ex);
  s->kernel_bytes += hr__exec_table_bytes(ex->n);
  for (int i = 0; i < ex->n; i++)
    s->kernel_bytes += (int64_t)(sizeof(xband) * (size_t)ex->k[i].n_band) +
                       (int64_t)(ex->k[i].fgf.mem_bytes + ex->k[i].ing.mem_bytes) + (ex->k[i].rs.x0 ? ex->k[i].rs.ow * 12 : 0) +
                       (ex->k[i].wexp ? (int64_t)hr__numel(&s->plan->vals[s->plan->rops[i].in[1]].t) / s->plan->vals[s->plan->rops[i].in[0]].t.dims[3] *
                                            s->plan->vals[s->plan->rops[i].out[0]].t.dims[2] * s->plan->vals[s->plan->rops[i].in[0]].t.dims[3] * 4 : 0);
  if (st) { *out = ex; hr__exec_destroy(ex); *out = NULL; return st; }
  *out = ex;
  return HR_OK;
}

void hr__exec_destroy(hr__exec *ex) {
  if (!ex) return;
  for (int i = 0; i < ex->n; i++) {
    if (ex->k[i].op) xnn_delete_operator(ex->k[i].op); /* a clone: frees its struct only */
    hr__kcache_release(ex->kc, ex->k[i].share);
    for (int b = 0; b < ex->k[i].n_band; b++) {
      xnn_delete_operator(ex->k[i].band[b].op);
      hr__kcache_release(ex->kc, ex->k[i].band[b].share);
    }
    free(ex->k[i].band);
    hr__fgf_free(&ex->k[i].fgf);
    hr__ingest_plan_free(&ex->k[i].ing);
    hr__resize_free(&ex->k[i].rs);
    free(ex->k[i].wexp);
  }
  free(ex->k);
  free(ex);
}

static double now_us(void) {
  struct timespec ts; clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

hr_status hr__exec_run(hr_session *s, hr__exec *ex) { return hr__exec_run_range(s, ex, 0, ex->n); }

hr_status hr__exec_run_range(hr_session *s, hr__exec *ex, int i0, int i1) {
  const hr__plan *p = s->plan;
  for (int i = i0; i < i1; i++) {
    const hr__rop *r = &p->rops[i];
    kern *k = &ex->k[i];
    double t0 = s->profiling ? now_us() : 0;
    hr__tensor in[HR_ROP_MAX_IN], out[HR_MAX_OUT];
    const hr__tensor *inp[HR_ROP_MAX_IN];
    switch (k->kind) {
      case K_NOP: break;
      case K_XNN:
        if (k->reads_src && (!k->bound || k->last_src != s->src_ptr)) {
          k->bound = !setup_xnn(s, r, k);
          k->last_src = s->src_ptr;
          if (!k->bound) return HR_ENOTSUP; /* not expected: only the pointer changed, not the shapes */
        }
        run_xnn(k);
        break;
      default:
        for (int j = 0; j < r->n_in; j++) {
          in[j] = view(s, r->in[j]); inp[j] = &in[j];
          if (!in[j].data && s->plan->vals[s->plan->vals[r->in[j]].root].storage == S_SRC) in[j].data = (void *)s->cur.planes[0];
        }
        for (int j = 0; j < r->n_out; j++) out[j] = view(s, r->out[j]);
        switch (k->kind) {
          case K_CONCAT: hr__k_concat(inp, r->n_in - 1, (int)((int32_t *)in[r->n_in - 1].data)[0], &out[0], r->in_place_mask); break;
          case K_SPLIT: {
            int ax = r->op == HR_OP_SPLIT ? ((int32_t *)in[0].data)[0] : ((int32_t *)in[2].data)[0];
            hr__k_split(r->op == HR_OP_SPLIT ? &in[1] : &in[0], ax, out, r->n_out);
            break;
          }
          case K_SLICE:
            if (r->op == HR_OP_PAD) hr__k_pad(&in[0], in[1].data, &out[0]);
            else hr__k_slice(&in[0], in[1].data, &out[0]);
            break;
          case K_TANH: hr__k_tanh(in[0].data, out[0].data, hr__numel(&out[0])); break;
          case K_FGF: hr__k_fgf_tail(s, &k->fgf, r, inp, out, r->n_out); break;
          case K_DW1D: {
            const hr__attrs *ra = r->node ? &r->node->a : &r->syn.a;
            hr__k_dw1d(k->pool, ra, &in[0], &in[1], ra->fused_bias ? &in[2] : NULL, &out[0], k->wexp);
            break;
          }
          case K_RESIZE: hr__k_resize(k->pool, &k->rs, &in[0], &out[0], r->out_c_off, r->out_c_total); break;
          case K_SRC_RESIZE: hr__ingest_resample_rgbf(&k->ing, &s->cur, out[0].data, out[0].dims[2] * 3); break;
          default: hr__op_exec_ref(r->node ? r->node : &r->syn, inp, r->n_in, out, r->n_out); break;
        }
    }
    if (s->profiling) s->op_us[i] = now_us() - t0;
  }
  return HR_OK;
}

const char *hr_session_op_detail(const hr_session *s, int i) {
  static __thread char buf[256];
  if (!s || !s->plan || i < 0 || i >= s->plan->n_rops) return NULL;
  static const char *kn[] = {"ref", "xnn", "concat", "split", "slice", "tanh", "meanc", "fgf", "nop", "srcresize", "dw1d", "resize"};
  const hr__rop *r = &s->plan->rops[i];
  const hr__tensor *o = &s->plan->vals[r->out[0]].t, *x = &s->plan->vals[r->in[0]].t;
  const char *kname = s->bk == &hr__backend_cpu ? kn[((const hr__exec *)s->bimpl)->k[i].kind] : s->bk->name;
  snprintf(buf, sizeof buf, "%s in[%lld,%lld,%lld,%lld] out[%lld,%lld,%lld,%lld] %s", kname,
           (long long)x->dims[0], (long long)x->dims[1], (long long)x->dims[2], (long long)x->dims[3],
           (long long)o->dims[0], (long long)o->dims[1], (long long)o->dims[2], (long long)o->dims[3],
           r->node ? r->node->name + (strlen(r->node->name) > 60 ? strlen(r->node->name) - 60 : 0) : "");
  return buf;
}
