/* Executor: one kernel per planned op, XNNPACK operators where they exist, our own kernels elsewhere. */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <xnnpack.h>
#include "session/session_impl.h"
#include "graph/ops.h"
#include "session/kernels.h"
#include "session/wino.h"
#include "session/kernels_simd.h"
#include "session/kcache.h"
#include "session/tadapt.h"
#include "backend/backend.h"

typedef enum {
  K_REF = 0, K_XNN, K_CONCAT, K_SPLIT, K_SLICE, K_TANH, K_MEAN_C, K_FGF, K_NOP, K_SRC_RESIZE, K_DW1D, K_RESIZE,
  K_AVGPOOL, K_BCAST, K_TANH_GRU, K_FUSED, K_RESIZE_CAT, K_FGF_LR, K_GATES, K_GAP, K_DWCONV, K_BINARY, K_SPLIT_CAT, K_WINO, K_SIGMOID, K_PWG
} kkind;

#define HR__CAT_MAX 8
/* K_RESIZE_CAT: one source of the output pixel (a value, its channels' offset, resized or copied) */
typedef struct cat_src { int v; int64_t off; int resize; } cat_src;
typedef enum { X_CONV, X_DECONV, X_BINARY, X_UNARY, X_RESIZE, X_GAP, X_FC, X_AVGPOOL } xkind;
/* A banded convolution's input made band by band by the resize-concat before it (fuse_resize_conv):
 * each band's rows into a slot, one slot a thread of the pool, at the start of the input's own bytes */
/* A resize-concat fused into the convolution that reads it: what makes its rows */
typedef struct cat_rows {
  const struct kern *rk;    /* the resize-concat (K_FUSED): its taps and sources */
  int v;                    /* the value it writes (the convolution's input) */
  hr__tensor o;             /* per run: the input as the resize writes it */
  hr__k_cat_src cs[HR__CAT_MAX]; /* per run: the resize's sources */
} cat_rows;
typedef struct rc_fuse {
  cat_rows cat;             /* cat.o's data: the first slot */
  int nslot;
  int64_t slot;             /* floats between slots */
  _Atomic uint64_t busy;    /* slots in use */
} rc_fuse;

/* A Winograd convolution's input made row by row in its tasks by the resize-concat before it
 * (fuse_resize_wino): the prologue's context, set per run */
typedef struct rw_fuse {
  cat_rows cat;
  hr__wino_pro pro;         /* rows: rw_rows; ring: the input's own bytes */
} rw_fuse;

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
  int64_t out_rows;
  int px;                      /* a pointwise convolution's band of pixels: in0 = out0 its first pixel, in_rows = out_rows their count */
  float *o;                    /* its output rows as set up, and their floats (the HardSwish epilogue) */
  int64_t on;
} xband;

typedef struct kern {
  kkind kind;
  hr__fgf fgf;              /* K_FGF tables */
  hr__ingest_plan ing;      /* K_SRC_RESIZE: frame -> processing size */
  int ing_parts;            /* K_SRC_RESIZE: row ranges run over the pool, each with its row scratch */
  float *ing_rows;          /* K_SRC_RESIZE: ing_parts x 6 x out_w_pad floats, 64-byte aligned */
  void *ing_mem;
  hr__resize rs;            /* K_RESIZE column taps */
  hr__fgf_lr_k lr;          /* K_FGF_LR tables and scratch */
  hr__k_gates gt;           /* K_GATES: offsets and sizes (pointers set per run) */
  hr__dwconv dw;            /* K_DWCONV: geometry and the weights' pointers (read in place) */
  hr__wino wn;              /* K_WINO: the transformed weights (hr__plan_wino; the scratch is the executor's) */
  hr__wino_epi wepi;        /* K_WINO with the ops after it in its epilogue (fuse_wino_epi; row NULL: none) */
  hr__k_gates wgt;          /* its gates (hr__epi_gates; gt_v their values) */
  hr__epi_tgru wtg;         /* its tanh-GRU (hr__epi_tanh_gru; wtg_v: m, a, y) */
  hr__epi_cp *wcp;          /* its split-concat's copies (hr__epi_copies; wsc: that op's kern, K_FUSED) */
  const struct kern *wsc;
  int wtg_v[3];
  hr__epi_pw wpw;           /* its pointwise convolution (hr__epi_pw_row, fuse_wino_pw; wpw_v: its output) */
  int wpw_v;
  hr__matvec mv;            /* K_XNN, a one-pixel 1x1 convolution (mv_on): our kernel's view of it (matvec_fits) */
  int mv_on;
  hr__pwg pg;               /* K_PWG: a pointwise convolution on our kernel (use_pwg; x, y set per run) */
  int pg_out;               /* K_PWG: where it writes (the HardSwish's output when one is fused after) */
  hr__dw_epi dwe;           /* K_DWCONV: the ops after it done in its epilogue (fuse_dw_epi; v1, v2 set per run) */
  int dw_out, dw_v1, dw_v2; /* K_DWCONV with an epilogue: where it writes, the per-channel operands (-1: none) */
  int sc_x, sc_cat, sc_nout, sc_ncin; /* K_SPLIT_CAT: the split's input and the concat's output, their counts */
  int sc_out[HR__CAT_MAX], sc_cin[HR__CAT_MAX], sc_from[HR__CAT_MAX]; /* split outputs; concat inputs (from: split output or -1) */
  int gt_v[7];              /* K_GATES: values rz, h, h2, b, z, omzh, cat */
  float *wexp;              /* K_DW1D weights expanded to the row width (VALID fast path) */
  pthreadpool_t pool;       /* NULL for ops too small to be worth waking the workers */
  xdesc xd;                 /* K_XNN: what the operator is (and its kernel-cache key) */
  xnn_operator_t op;
  hr__kshare *share;        /* the template op is a clone of, or NULL for an operator of its own */
  int64_t shared_bytes;     /* the template's memory (shared with the model's other sessions) */
  int n_band;               /* > 0: a convolution run as n_band horizontal bands (op is NULL) */
  xband *band;
  int hs_on, hs_out;        /* banded convolution: a HardSwish on each band's rows after it (fuse_conv_hswish), into hs_out */
  struct kern *pw;          /* banded convolution: the pointwise convolution after it, run on each band's pixels after it
                             * (fuse_conv_pw; its bands match these, its own kind K_FUSED) */
  struct rc_fuse *rc;       /* banded convolution: the resize-concat that makes its input (fuse_resize_conv) */
  struct rw_fuse *rw;       /* K_WINO: the resize-concat that makes its input (fuse_resize_wino) */
  int reads_src;            /* re-setup when the src pointer changes (zero-copy input) */
  int fuse_x, fuse_m, fuse_a; /* K_TANH_GRU: the values x, m and a of y = tanh(x) * m + a */
  int bc_v;                 /* K_BCAST: which input is the per-channel operand */
  hr__k_bcast bc;           /* K_BCAST: the op (and a second one fused after it) */
  int bc_x, bc_v1, bc_v2;   /* K_BCAST: the full operand, the per-channel operands (bc_v2 < 0: one op) */
  int bc_out;               /* K_BCAST: where it writes (the HardSwish's output when one is fused after; else -1) */
  float *bvec;              /* K_BCAST: the per-channel operands repeated to bc.L floats each (2 x L) */
  float *gpart;             /* K_GAP: the runs' sums (gruns x C floats) */
  int64_t gpart_n;
  int gruns;                /* K_GAP: runs of pixels (hr__k_gap_chunks; 1 with HR_GAP_RUNS=0) */
  int n_src;                /* K_RESIZE_CAT: sources, in output channel order */
  int64_t crop_h;           /* K_RESIZE_CAT through a crop: the resize's own output height, else 0 */
  int crop_out;             /* and the concat's output, which it writes (the resize's own is unused) */
  cat_src src[HR__CAT_MAX];
  int bound;                /* set up with this session's pointers (a clone starts with placeholders) */
  const void *last_src;
} kern;

/* A range of ops the executor runs whole ([0, n), or the tail mode's parts) and whether its runs
 * use the pool or the calling thread alone (tadapt.h). */
typedef struct trange {
  int i0, i1;
  hr__tadapt a;
  int threads;              /* threads its last run used */
} trange;

/* Per op: whether its runs use the pool, measured (issue 15, lever 4). Which ops wake the workers
 * was a rule of size alone (kern.pool: over 4 MFLOP or 65536 outputs), and where a pool join costs
 * more than the split saves depends on the machine: on a 2-vCPU VM the ConvGRU gates at 23x30x64
 * took 0.314 ms over 2 threads and 0.054 on one, on the 16-core Xeon host 0.083 / 0.075. So each
 * candidate op (pick_candidate) runs in the other mode on every third of its runs, staggered by
 * its index so that a frame carries a third of the candidates in the other mode, until each mode
 * has PICK_N runs; the other mode is kept when its median beats the rule's by PICK_GAIN, else the
 * rule's. Once per executor (a replan makes a new one); both modes split the work into the same
 * tasks, so the results are the same bits. Runs of the range that leave the pool out (tadapt.h)
 * and ops the caller runs alone are not counted. HR_OP_POOL=0 keeps the rule (A/B). */
#define PICK_N 3   /* pick_med takes 3 */
#define PICK_GAIN 0.85
typedef struct opick {
  float ms[2][PICK_N];      /* [0]: runs in the rule's mode, [1]: in the other */
  uint8_t n[2];
  uint8_t state;            /* 0 not a candidate, 1 measuring, 2 decided */
  uint16_t runs;
} opick;

struct hr__exec {
  int n;
  kern *k;
  opick *pk;                /* n, or NULL when no op is measured (no pool, HR_OP_POOL=0) */
  float *wino;              /* K_WINO's scratch, one for every such op (they run one after another):
                               a slot a pool thread (at most 64), each the largest op's
                               hr__wino_scratch_floats, 64-byte aligned */
  void *wino_mem;
  int wino_slots;
  hr__kcache *kc;           /* the model's, where shared operators come from */
  trange tr[3];             /* made at create, so that ranges run on two threads need no lock */
  int n_tr;                 /* 0: the session's thread count is fixed (or it has no pool) */
  int park;                 /* the pool's threads put to sleep after each run (park_pool) */
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

/* The bands are the pool's tasks, each run whole by one thread: with many threads the plan's
 * HR__BAND_MIN_COUNT (24) bands leave threads idle at the end (26 tasks on 16 threads run as two
 * rounds, 81% busy). Each band between the edge bands is then cut into `split` bands of nearly equal
 * rows, split = ceil(4 threads / bands) up to 4: 16 threads, 24 bands -> 74 tasks (5 rounds, 92%).
 * At most two new shapes (q and q + 1 rows), each with less indirection than the band it
 * replaces, which no longer has a template. Two threads or fewer: the plan's bands as they are. */
static int band_split(hr_session *s, int nb) {
  int threads = s->pool ? (int)pthreadpool_get_threads_count(s->pool) : 1;
  const char *e = getenv("HR_BAND_SPLIT"); /* developer switch: force a split (1: never) */
  if (e && *e) { int v = atoi(e); return v < 1 ? 1 : v > 8 ? 8 : v; }
  if (threads <= 2 || nb <= 0) return 1;
  int k = (4 * threads + nb - 1) / nb;
  return k < 1 ? 1 : k > 4 ? 4 : k;
}

/* The plan's bands (n of them) with every band that sees no padding cut into up to `split` bands
 * of whole rows (each keeps at least one row); the input rows and padding of each new band
 * computed as hr__conv_bands does. Returns the new count (out holds n * split at most). */
static int split_bands(const hr__band *in, int n, int split, const xdesc *d, hr__band *out) {
  int m = 0;
  int64_t eff = (int64_t)(d->kh - 1) * d->dh + 1;
  for (int i = 0; i < n; i++) {
    const hr__band *b = &in[i];
    int parts = split < b->out_rows ? split : (int)b->out_rows;
    if (parts <= 1 || b->pt || b->pb) { out[m++] = *b; continue; }
    int64_t y = b->out0;
    for (int q = 0; q < parts; q++) {
      int64_t rows = b->out_rows / parts + (q < b->out_rows % parts ? 1 : 0);
      int64_t a = y * d->sh - d->pt, e = (y + rows - 1) * d->sh - d->pt + eff; /* input rows [a, e), padding included */
      int64_t i0 = a < 0 ? 0 : a, i1 = e > (int64_t)d->ih ? (int64_t)d->ih : e;
      out[m++] = (hr__band){y, rows, i0, i1 - i0, (int)(i0 - a), (int)(e - i1)};
      y += rows;
    }
  }
  return m;
}

/* A convolution whose indirection buffer would be large runs in horizontal bands (plan.h): a clone
 * per band of its shape's template. Returns the number of bands (0: not banded); *st on failure. */
static int create_bands(hr_session *s, const hr__rop *r, kern *k, int force, hr_status *st) {
  const xdesc *d = &k->xd;
  const hr__tensor *o = &s->plan->vals[r->out[0]].t;
  if (d->xk != X_CONV || (d->flags & XNN_FLAG_DEPTHWISE_CONVOLUTION)) return 0;
  int nb = hr__conv_bands((int64_t)d->n, (int64_t)d->ih, o->dims[1], o->dims[2], (int)d->kh, (int)d->kw, (int)d->sh, (int)d->dh,
                          (int)d->pt, NULL);
  /* force: bands wanted where the plan has none (a HardSwish after it: fuse_conv_hswish), the whole
   * image as one band cut into `force`; only without vertical padding (split_bands keeps a padded band whole) */
  const int whole = !nb && force > 1 && d->n == 1 && !d->pt && !d->pb;
  if (!nb && !whole) return 0;
  if (whole) nb = 1;
  /* a pointwise convolution (1x1, stride 1, no padding: a matrix product over the pixels) is cut in
   * runs of pixels, not rows: 690 pixels share out over 16 threads where 23 rows cannot */
  const int pw = whole && d->kh == 1 && d->kw == 1 && d->sh == 1 && d->sw == 1 && !d->pl && !d->pr;
  if (pw) {
    const int64_t npx = (int64_t)d->ih * (int64_t)d->iw;
    k->band = calloc((size_t)force, sizeof *k->band);
    if (!k->band) { *st = HR_ENOMEM; return 1; }
    for (int i = 0; i < force && !*st; i++) {
      xband *xb = &k->band[k->n_band];
      const int64_t a = npx * i / force, e = npx * (i + 1) / force;
      *xb = (xband){.in0 = a, .in_rows = e - a, .out0 = a, .out_rows = e - a, .px = 1};
      *st = hr__kcache_acquire(s->m->kcache, d, sizeof *d, build_template, &xb->op, &xb->share, &xb->shared_bytes);
      if (!*st) k->n_band++;
    }
    return force;
  }
  int split = whole ? force : band_split(s, nb);
  hr__band *b0 = calloc((size_t)nb, sizeof *b0), *b = calloc((size_t)nb * (size_t)split, sizeof *b);
  k->band = b && b0 ? calloc((size_t)nb * (size_t)split, sizeof *k->band) : NULL;
  if (!k->band) { free(b0); free(b); *st = HR_ENOMEM; return nb; }
  if (whole) b0[0] = (hr__band){0, o->dims[1], 0, (int64_t)d->ih, 0, 0};
  else hr__conv_bands((int64_t)d->n, (int64_t)d->ih, o->dims[1], o->dims[2], (int)d->kh, (int)d->kw, (int)d->sh, (int)d->dh, (int)d->pt, b0);
  nb = split_bands(b0, nb, split, d, b);
  free(b0);
  for (int i = 0; i < nb && !*st; i++) {
    xband *xb = &k->band[k->n_band];
    xdesc bd;
    memcpy(&bd, d, sizeof bd); /* padding bytes too: the descriptor is the cache's key */
    /* a band of the whole image (no padding, so the operator does not depend on its rows: they are
     * given at setup) keeps the convolution's own key: its bands share one template, packed once */
    bd.ih = whole ? d->ih : (size_t)b[i].in_rows;
    bd.pt = (uint32_t)b[i].pt;
    bd.pb = (uint32_t)b[i].pb;
    xb->in0 = b[i].in0;
    xb->in_rows = b[i].in_rows;
    xb->out0 = b[i].out0;
    xb->out_rows = b[i].out_rows;
    *st = hr__kcache_acquire(s->m->kcache, &bd, sizeof bd, build_template, &xb->op, &xb->share, &xb->shared_bytes);
    if (!*st) k->n_band++;
  }
  free(b);
  return nb;
}

/* The XNNPACK operator for rop r if one fits (k->op set, or k->band; returns 1); *st is set on failure. */
static int create_xnn(hr_session *s, const hr__rop *r, kern *k, int force_bands, hr_status *st) {
  *st = HR_OK;
  if (!describe_xnn(s, r, &k->xd)) return 0;
  int shared = shareable(s->m, &k->xd);
  if (!(shared && create_bands(s, r, k, force_bands, st)))
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
  hr__tensor o = view(s, k->hs_on ? k->hs_out : r->out[0]);
  const void *y = d->xk == X_BINARY ? view(s, r->in[1]).data : NULL;
  enum xnn_status xs = xnn_status_success;
  /* bands: rows of the input and output as the operators were made (pixel stride groups x channels),
   * each run by one thread (run_xnn) */
  for (int b = 0; b < k->n_band && xs == xnn_status_success; b++) {
    xband *xb = &k->band[b];
    const float *xr = (const float *)x.data + xb->in0 * (int64_t)(d->iw * d->groups * d->gic);
    float *orow = (float *)o.data + xb->out0 * (int64_t)o.dims[2] * (int64_t)(d->groups * d->goc);
    xb->on = xb->out_rows * (int64_t)o.dims[2] * (int64_t)(d->groups * d->goc);
    if (xb->px) { /* a run of pixels as an image of one row */
      xr = (const float *)x.data + xb->in0 * (int64_t)(d->groups * d->gic);
      orow = (float *)o.data + xb->out0 * (int64_t)(d->groups * d->goc);
      xb->on = xb->out_rows * (int64_t)(d->groups * d->goc);
    }
    xb->o = orow;
    xs = xnn_setup_convolution2d_nhwc_f32(xb->op, d->n, xb->px ? 1 : (size_t)xb->in_rows, xb->px ? (size_t)xb->in_rows : d->iw, xr, orow, NULL);
  }
  if (!k->n_band) xs = setup_desc(d, k->op, x.data, y, o.data, k->pool);
  if (xs != xnn_status_success) {
    snprintf(s->err, sizeof s->err, "XNNPACK setup failed for %s: status %d", hr__op_name(r->op), (int)xs);
    return HR_ENOTSUP;
  }
  return HR_OK;
}

/* The kernel cache's key for a Winograd convolution's transformed weights (hr__wino_pack). */
typedef struct wino_key {
  char tag[8];               /* "wino4x4": no operator descriptor has this layout */
  const float *w, *b;        /* the model's weights (HWIO) and bias */
  int64_t C, K;
} wino_key;
static void wino_fill(const void *key, void *data) {
  const wino_key *k = key;
  hr__wino_pack(k->w, k->b, (int)k->C, (int)k->K, data);
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
/* the same, then the HardSwish after it on the band's rows while they are in cache */
static void run_band_hs(void *ctx, size_t b) {
  const xband *xb = &((const kern *)ctx)->band[b];
  xnn_run_operator(xb->op, NULL);
  hr__k_hswish(xb->o, xb->on);
}

/* the same, then the pointwise convolution after it on the band's pixels while they are in cache */
static void run_band_pw(void *ctx, size_t b) {
  const kern *k = ctx;
  xnn_run_operator(k->band[b].op, NULL);
  xnn_run_operator(k->pw->band[b].op, NULL);
}

/* A band whose input rows a resize-concat makes (fuse_resize_conv): those rows into a free slot, the band's operator set up on them (its shape as made:
 * XNNPACK keeps its indirection and moves it by the pointer's offset), then the band and what
 * follows it as above. A slot is taken for the task: at most one task a thread runs at a time. */
static void run_band_rc(void *ctx, size_t b) {
  kern *k = ctx;
  rc_fuse *rc = k->rc;
  xband *xb = &k->band[b];
  int q = 0;
  for (;; q = (q + 1) % rc->nslot) {
    const uint64_t bit = (uint64_t)1 << q;
    if (!(atomic_fetch_or_explicit(&rc->busy, bit, memory_order_acquire) & bit)) break;
  }
  float *slot = (float *)rc->cat.o.data + q * rc->slot;
  hr__k_resize_cat_rows(&rc->cat.rk->rs, rc->cat.cs, rc->cat.rk->n_src, &rc->cat.o, xb->in0, xb->in0 + xb->in_rows, slot);
  xnn_setup_convolution2d_nhwc_f32(xb->op, k->xd.n, (size_t)xb->in_rows, k->xd.iw, slot, xb->o, NULL);
  xnn_run_operator(xb->op, NULL);
  if (k->pw) xnn_run_operator(k->pw->band[b].op, NULL);
  else if (k->hs_on) hr__k_hswish(xb->o, xb->on);
  atomic_fetch_and_explicit(&rc->busy, ~((uint64_t)1 << q), memory_order_release);
}

/* The sources of resize-concat k (K_RESIZE_CAT, or fused into a convolution) where they lie this run. */
static void cat_sources(hr_session *s, const kern *k, hr__k_cat_src *cs) {
  for (int q = 0; q < k->n_src; q++) {
    const hr__tensor *t = &s->plan->vals[k->src[q].v].t;
    cs[q] = (hr__k_cat_src){view(s, k->src[q].v).data, t->dims[1], t->dims[2], t->dims[3], k->src[q].off, k->src[q].resize};
  }
}
/* A fused resize-concat's sources and output where they lie this run */
static void bind_cat_rows(hr_session *s, cat_rows *c) {
  cat_sources(s, c->rk, c->cs);
  c->o = view(s, c->v);
}

static void run_xnn(kern *k, pthreadpool_t pool) {
  if (k->rc) pthreadpool_parallelize_1d(pool, run_band_rc, k, (size_t)k->n_band, 0);
  else if (k->n_band) pthreadpool_parallelize_1d(pool, k->pw ? run_band_pw : k->hs_on ? run_band_hs : run_band, k, (size_t)k->n_band, 0);
  else xnn_run_operator(k->op, pool);
}

/* The bytes of value v as this session lays it out, for overlap checks at create. */
static void val_range(hr_session *s, int v, const char **b, const char **e) {
  hr__tensor t = view(s, v);
  *b = t.data;
  *e = (const char *)t.data + hr__numel(&t) * (int64_t)hr__dtsize(t.dt);
}

static int apart(hr_session *s, int a, int b) {
  const char *ab, *ae, *bb, *be;
  val_range(s, a, &ab, &ae);
  val_range(s, b, &bb, &be);
  return ae <= bb || be <= ab;
}

/* The output may be written over input v only if they are the same bytes or do not meet. */
static int same_or_apart(hr_session *s, int out, int v) {
  const char *ob, *oe, *vb, *ve;
  val_range(s, out, &ob, &oe);
  val_range(s, v, &vb, &ve);
  return (ob == vb && oe == ve) || oe <= vb || ve <= ob;
}

static int dense_float(hr_session *s, int v, int64_t n) {
  const hr__val *x = &s->plan->vals[v];
  return x->kind == V_DYN && x->t.dt == HR_DT_FLOAT && hr__numel(&x->t) == n && s->plan->vals[x->root].storage != S_SRC;
}

/* Engine-level fusion (this backend only; the plan's op list is unchanged): a ConvGRU's
 * c = Tanh(x); m2 = Mul(c, m); h = AddV2(m2, a) in consecutive ops, c and m2 read by nothing
 * else, becomes one pass y = tanh(x) * m + a run at the AddV2 (ops i and i+1 do nothing: no op
 * between writes anything, so x, m and a are intact there). Bit-identical to the three ops. */
static int fuse_tanh_gru(hr_session *s, hr__exec *ex, int i) {
  const hr__plan *p = s->plan;
  if (i + 2 >= p->n_rops) return 0;
  const hr__rop *t = &p->rops[i], *m = &p->rops[i + 1], *a = &p->rops[i + 2];
  if (t->op != HR_OP_TANH || m->op != HR_OP_MUL || (a->op != HR_OP_ADDV2 && a->op != HR_OP_ADD)) return 0;
  if (t->dead || m->dead || a->dead || m->n_in != 2 || a->n_in != 2) return 0;
  int c = t->out[0], m2 = m->out[0];
  const hr__val *cr = &p->vals[p->vals[c].root], *mr = &p->vals[p->vals[m2].root];
  if (cr->n_readers != 1 || cr->last != i + 1 || mr->n_readers != 1 || mr->last != i + 2) return 0;
  int km = p->vals[m->in[0]].root == p->vals[c].root ? 1 : 0, ka = p->vals[a->in[0]].root == p->vals[m2].root ? 1 : 0;
  if (p->vals[m->in[1 - km]].root != p->vals[c].root || p->vals[a->in[1 - ka]].root != p->vals[m2].root) return 0;
  int64_t n = hr__numel(&p->vals[a->out[0]].t);
  int x = t->in[0], mv = m->in[km], av = a->in[ka], y = a->out[0];
  if (!dense_float(s, x, n) || !dense_float(s, mv, n) || !dense_float(s, av, n) || !dense_float(s, c, n) || !dense_float(s, m2, n) ||
      !dense_float(s, y, n))
    return 0;
  if (!same_or_apart(s, y, x) || !same_or_apart(s, y, mv) || !same_or_apart(s, y, av)) return 0;
  ex->k[i].kind = ex->k[i + 1].kind = K_FUSED;
  ex->k[i + 2].kind = K_TANH_GRU;
  ex->k[i + 2].fuse_x = x;
  ex->k[i + 2].fuse_m = mv;
  ex->k[i + 2].fuse_a = av;
  return 1;
}

/* A Winograd convolution's epilogue (wino.h, hr__wino_epi): the ops after it done on each block's
 * outputs while they are in cache, the convolution's own output never written (issue 15: the
 * element-wise ops and copies were a quarter of RVM's frame). Two ConvGRU patterns, made by
 * fuse_gru_gates and fuse_tanh_gru before:
 *   gates:    conv i (K_WINO) -> Sigmoid i+1 (K_SIGMOID) -> the gates at i+2 (K_GATES): z, omzh and
 *             the next convolution's input, each block's outputs through the sigmoid and the gates;
 *   tanh-GRU: conv i (K_WINO) -> Tanh i+1, Mul i+2 (K_FUSED) -> K_TANH_GRU at i+3: the new state.
 * The convolution's output and the sigmoid's each read by the next op alone; what the epilogue
 * writes must not meet the convolution's input (other blocks still read it); what it reads besides
 * its outputs (h, h2, b; m, a) is made before op i, and the ops in between write nothing else. The
 * same bits as the ops on their own (hr__k_sigmoid, gates_px, tanh_gru_run: test_exec_fuse).
 * HR_WINO_EPI=0: off (A/B). */
static int fuse_wino_epi(hr_session *s, hr__exec *ex, int i) {
  const hr__plan *p = s->plan;
  kern *w = &ex->k[i];
  if (w->kind != K_WINO || w->wepi.row || i + 2 >= ex->n) return 0;
  const hr__rop *r = &p->rops[i];
  const int out = p->vals[r->out[0]].root;
  if (p->vals[out].n_readers != 1) return 0;
  kern *k1 = &ex->k[i + 1], *k2 = &ex->k[i + 2];
  const hr__rop *r1 = &p->rops[i + 1];
  if (k1->kind == K_SIGMOID && k2->kind == K_GATES && p->vals[r1->in[0]].root == out &&
      p->vals[k2->gt_v[0]].root == p->vals[r1->out[0]].root && p->vals[p->vals[r1->out[0]].root].n_readers == 1 &&
      hr__numel(&p->vals[r->out[0]].t) == 2 * k2->gt.C * k2->gt.pixels && w->wn.K == 2 * k2->gt.C) {
    for (int q = 4; q < 7; q++)
      if (!apart(s, k2->gt_v[q], r->in[0])) return 0;
    w->wgt = k2->gt;
    memcpy(w->gt_v, k2->gt_v, sizeof w->gt_v);
    w->wepi = (hr__wino_epi){hr__epi_gates, &w->wgt};
    k1->kind = k2->kind = K_FUSED;
    return 1;
  }
  if (i + 3 >= ex->n) return 0;
  kern *k3 = &ex->k[i + 3];
  const hr__rop *r3 = &p->rops[i + 3];
  if (k1->kind == K_FUSED && k2->kind == K_FUSED && k3->kind == K_TANH_GRU && p->vals[k3->fuse_x].root == out &&
      hr__numel(&p->vals[r3->out[0]].t) == hr__numel(&p->vals[r->out[0]].t)) {
    if (!apart(s, r3->out[0], r->in[0])) return 0;
    w->wtg = (hr__epi_tgru){NULL, NULL, NULL, w->wn.K};
    w->wtg_v[0] = k3->fuse_m; w->wtg_v[1] = k3->fuse_a; w->wtg_v[2] = r3->out[0];
    w->wepi = (hr__wino_epi){hr__epi_tanh_gru, &w->wtg};
    k3->kind = K_FUSED;
    return 1;
  }
  return 0;
}

/* An XNNPACK convolution that is a matrix product over the pixels: 1x1, stride 1, no padding, one
 * group, one image (fuse_conv_pw, fuse_wino_pw and use_pwg take such ones) */
static int xd_pointwise(const xdesc *d) {
  return d->xk == X_CONV && d->n == 1 && d->kh == 1 && d->kw == 1 && d->sh == 1 && d->sw == 1 && !d->pt && !d->pb && !d->pl && !d->pr &&
         d->groups == 1;
}

/* A pointwise convolution with few outputs after a Winograd convolution (K_XNN 1x1 at i + 1, its
 * only reader), done in the Winograd's epilogue on each block's outputs while they are in cache:
 * RVM's last 16 -> 4 convolution (conv2d_62) at the processing size, which XNNPACK ran at ~21
 * GFLOP/s (1920x1440 r0.267, one thread: 1.2 ms, 25 MFLOP), its 16-channel input written and read
 * back in full. The same bits (hr__epi_pw: the GEMM's order of sums). HR_WINO_PW=0: off (A/B). */
static int fuse_wino_pw(hr_session *s, hr__exec *ex, int i) {
  const hr__plan *p = s->plan;
  kern *w = &ex->k[i], *k1 = &ex->k[i + 1];
  if (w->kind != K_WINO || w->wepi.row || w->wcp || k1->kind != K_XNN || k1->mv_on || k1->reads_src || k1->n_band || k1->pw || !k1->op)
    return 0;
  const xdesc *d = &k1->xd;
  if (!xd_pointwise(d) || (d->flags & XNN_FLAG_DEPTHWISE_CONVOLUTION) || !d->w || d->gic != (size_t)w->wn.K || d->goc % 4 || d->goc > 16)
    return 0;
  const hr__rop *r = &p->rops[i], *r1 = &p->rops[i + 1];
  const int out = p->vals[r->out[0]].root;
  if (p->vals[out].n_readers != 1 || p->vals[r1->in[0]].root != out || p->vals[r1->out[0]].t.dt != HR_DT_FLOAT) return 0;
  if (hr__numel(&p->vals[r1->out[0]].t) != hr__numel(&p->vals[r->out[0]].t) / (int64_t)d->gic * (int64_t)d->goc) return 0;
  if (!apart(s, r1->out[0], r->in[0])) return 0;   /* other blocks still read the input */
  w->wpw = (hr__epi_pw){d->w, d->b, NULL, (int)d->gic, (int)d->goc, d->lo, d->hi};
  w->wpw_v = r1->out[0];
  w->wepi = (hr__wino_epi){hr__epi_pw_row, &w->wpw};
  k1->kind = K_FUSED;
  return 1;
}

static int cat_axis_last(hr_session *s, const hr__rop *r) {
  if (r->op != HR_OP_CONCAT || !is_const(s, r->in[r->n_in - 1])) return 0;
  const hr__tensor *o = &s->plan->vals[r->out[0]].t;
  int ax = ((const int32_t *)s->plan->vals[r->in[r->n_in - 1]].t.data)[0];
  return o->rank == 4 && o->dt == HR_DT_FLOAT && (ax == 3 || ax == -1);
}

/* A ConvGRU's gates after its sigmoid, ops i..i+4 of the plan:
 *   r, z = Split(rz); omz = Sub(k, z); omzh = Mul(omz, h); rh = Mul(r, h2); cat = ConcatV2(b, rh)
 * with r, omz and rh read by nothing else: one pass at op i writing z, omzh and cat (the later ops
 * do nothing; no op between them writes, so what they read is intact). Run at the first op: what
 * it writes early must not meet rz, whose life may end at op i. Bit-identical. */
static int fuse_gru_gates(hr_session *s, hr__exec *ex, int i) {
  const hr__plan *p = s->plan;
  if (i + 4 >= p->n_rops) return 0;
  const hr__rop *sp = &p->rops[i], *sb = &p->rops[i + 1], *m1 = &p->rops[i + 2], *m2 = &p->rops[i + 3], *cc = &p->rops[i + 4];
  if (sp->op != HR_OP_SPLIT || sp->n_out != 2 || sb->op != HR_OP_SUB || m1->op != HR_OP_MUL || m2->op != HR_OP_MUL ||
      !cat_axis_last(s, cc) || cc->n_in != 3 || cc->in_place_mask)
    return 0;
  if (!is_const(s, sp->in[0])) return 0;
  int ax = ((const int32_t *)p->vals[sp->in[0]].t.data)[0];
  const hr__tensor *x = &p->vals[sp->in[1]].t, *t0 = &p->vals[sp->out[0]].t;
  if (x->rank != 4 || (ax != 3 && ax != -1) || x->dt != HR_DT_FLOAT || x->dims[0] != 1 || x->dims[3] != 2 * t0->dims[3]) return 0;
  int64_t C = t0->dims[3], n = hr__numel(t0);
#define R_(v) (p->vals[v].root)
  /* omz = k - z */
  const hr__val *kv = &p->vals[sb->in[0]];
  if (kv->kind != V_CONST || kv->t.dt != HR_DT_FLOAT || hr__numel(&kv->t) != 1) return 0;
  int zi = R_(sb->in[1]) == R_(sp->out[0]) ? 0 : R_(sb->in[1]) == R_(sp->out[1]) ? 1 : -1;
  if (zi < 0) return 0;
  int rv = sp->out[1 - zi], zv = sp->out[zi], omz = sb->out[0];
  /* omzh = omz * h; rh = r * h2 */
  int a1 = R_(m1->in[0]) == R_(omz) ? 0 : R_(m1->in[1]) == R_(omz) ? 1 : -1;
  int a2 = R_(m2->in[0]) == R_(rv) ? 0 : R_(m2->in[1]) == R_(rv) ? 1 : -1;
  if (a1 < 0 || a2 < 0) return 0;
  int h = m1->in[1 - a1], h2 = m2->in[1 - a2], rh = m2->out[0], omzh = m1->out[0];
  /* cat = (b, rh) or (rh, b) */
  int q = R_(cc->in[0]) == R_(rh) ? 0 : R_(cc->in[1]) == R_(rh) ? 1 : -1;
  if (q < 0) return 0;
  int b = cc->in[1 - q];
  /* read by nothing else: r, omz, rh */
  if (p->vals[R_(rv)].n_readers != 1 || p->vals[R_(omz)].n_readers != 1 || p->vals[R_(rh)].n_readers != 1) return 0;
  if (!dense_float(s, sp->in[1], 2 * n) || !dense_float(s, h, n) || !dense_float(s, h2, n) || !dense_float(s, b, n) ||
      !dense_float(s, zv, n) || !dense_float(s, omzh, n) || !dense_float(s, cc->out[0], 2 * n) || !dense_float(s, rh, n))
    return 0;
  if (p->vals[b].t.dims[3] != C || p->vals[h].t.dims[3] != C || p->vals[h2].t.dims[3] != C) return 0;
  int outs[3] = {zv, omzh, cc->out[0]}, ins[4] = {sp->in[1], h, h2, b};
  for (int o = 0; o < 3; o++) {
    for (int k = 0; k < 4; k++) if (!apart(s, outs[o], ins[k])) return 0;
    for (int k = o + 1; k < 3; k++) if (!apart(s, outs[o], outs[k])) return 0;
  }
#undef R_
  kern *kk = &ex->k[i];
  kk->gt = (hr__k_gates){.C = C, .r_off = zi == 0 ? C : 0, .z_off = zi == 0 ? 0 : C, .rh_off = q == 0 ? 0 : C, .b_off = q == 0 ? C : 0,
                         .cat_c = 2 * C, .pixels = n / C, .k = *(const float *)kv->t.data};
  int v[7] = {sp->in[1], h, h2, b, zv, omzh, cc->out[0]};
  memcpy(kk->gt_v, v, sizeof v);
  kk->kind = K_GATES;
  for (int k = 1; k <= 4; k++) ex->k[i + k].kind = K_FUSED;
  return 1;
}

/* Value v is the model's alpha output itself (the alpha is an alias of all of v's bytes). */
static int fgf_is_alpha(const hr__plan *p, int v) {
  return p->alpha_val >= 0 && p->vals[v].root == p->vals[p->alpha_val].root && hr__numel(&p->vals[v].t) == hr__numel(&p->vals[p->alpha_val].t);
}

/* RVM's low-resolution guided filter (plan.h, hr__fgf_lr) as one kernel at its last op; the plan
 * kept its inputs alive through that op, and A and b must not meet them. */
static int switch_off(const char *name);
static hr_status fuse_fgf_lr(hr_session *s, hr__exec *ex) {
  const hr__plan *p = s->plan;
  const hr__fgf_lr *f = &p->fgf_lr;
  if (f->first < 0 || f->last >= p->n_rops) return HR_OK;
  for (int k = 0; k < 2; k++)
    if (p->vals[p->vals[k ? f->src : f->y].root].storage != S_ARENA) return HR_OK;
  if (!apart(s, f->A, f->y) || !apart(s, f->A, f->src) || !apart(s, f->b, f->y) || !apart(s, f->b, f->src) || !apart(s, f->A, f->b))
    return HR_OK;
  const float *wv[4], *wh[4];
  for (int q = 0; q < 4; q++) { wv[q] = p->vals[f->wv[q]].t.data; wh[q] = p->vals[f->wh[q]].t.data; }
  const hr__tensor *y = &p->vals[f->y].t;
  kern *k = &ex->k[f->last];
  int chunks = s->pool ? (int)pthreadpool_get_threads_count(s->pool) : 1;
  hr_status st = hr__fgf_lr_init(&k->lr, (int)y->dims[1], (int)y->dims[2], (int)p->vals[f->wv[0]].t.dims[0],
                                 (int)p->vals[f->wh[0]].t.dims[1], wv, wh, f->eps, chunks);
  if (st) return st;
  /* where only guided-filter tails without the foreground read A and b (they take the alpha's
   * channel alone: hr__fgf's want_fgr 0, and the split run's copy), only that channel is made */
  const int ra = p->vals[f->A].root, rb = p->vals[f->b].root;
  int alpha_only = 1;
  for (int i = 0; i < p->n_rops && alpha_only; i++) {
    const hr__rop *r = &p->rops[i];
    if (r->dead || (i >= f->first && i <= f->last)) continue;
    for (int j = 0; j < r->n_in; j++)
      if (r->in[j] >= 0 && (p->vals[r->in[j]].root == ra || p->vals[r->in[j]].root == rb) && (r->op != HR_OP_FGF_TAIL || r->n_out != 1))
        alpha_only = 0;
  }
  k->lr.alpha_only = alpha_only && !switch_off("HR_FGF_LR_ALPHA");   /* HR_FGF_LR_ALPHA=0: all four, for A/B */
  for (int i = f->first; i < f->last; i++) ex->k[i].kind = K_FUSED;
  k->kind = K_FGF_LR;
  return HR_OK;
}

/* A binary op of a full tensor and one value per channel: our loop (see hr__k_bcast_c), over the
 * pool in tiles (XNNPACK 2022's broadcasting ops make a call per row, and their same-shape ops run
 * on one thread). Returns the index of the per-channel input, or -1. */
static int bcast_operand(hr_session *s, const hr__rop *r) {
  const hr__plan *p = s->plan;
  if (r->op != HR_OP_MUL && r->op != HR_OP_SUB && r->op != HR_OP_REALDIV && r->op != HR_OP_ADD && r->op != HR_OP_ADDV2) return -1;
  const hr__tensor *o = &p->vals[r->out[0]].t;
  if (o->dt != HR_DT_FLOAT || o->rank < 1 || r->n_in != 2) return -1;
  int64_t C = o->dims[o->rank - 1], n = hr__numel(o);
  if (n <= C) return -1;
  for (int k = 0; k < 2; k++) {
    const hr__tensor *v = &p->vals[r->in[k]].t, *x = &p->vals[r->in[1 - k]].t;
    if (v->dt != HR_DT_FLOAT || hr__numel(v) != C || v->rank < 1 || v->dims[v->rank - 1] != C) continue;
    if (x->dt != HR_DT_FLOAT || x->rank != o->rank || hr__numel(x) != n) continue;
    if (p->vals[p->vals[r->in[0]].root].storage == S_SRC || p->vals[p->vals[r->in[1]].root].storage == S_SRC) return -1;
    return k;
  }
  return -1;
}

/* A binary op of two float tensors of the same shape (no broadcast), both dense in the arena or
 * state: our loop (hr__k_binary: one IEEE operation per element, as XNNPACK's), tiles over the pool. */
static int binary_same(hr_session *s, const hr__rop *r) {
  const hr__plan *p = s->plan;
  if (r->op != HR_OP_MUL && r->op != HR_OP_SUB && r->op != HR_OP_REALDIV && r->op != HR_OP_ADD && r->op != HR_OP_ADDV2) return 0;
  if (r->n_in != 2) return 0;
  const hr__tensor *o = &p->vals[r->out[0]].t;
  int64_t n = hr__numel(o);
  if (o->dt != HR_DT_FLOAT || n < 1) return 0;
  for (int k = 0; k < 2; k++) {
    const hr__tensor *x = &p->vals[r->in[k]].t;
    if (x->rank != o->rank || memcmp(x->dims, o->dims, sizeof(int64_t) * (size_t)o->rank)) return 0;
    if (!dense_float(s, r->in[k], n) || !same_or_apart(s, r->out[0], r->in[k])) return 0;
  }
  return dense_float(s, r->out[0], n);
}

/* Mean over the innermost axis only. */
static int mean_innermost(hr_session *s, const hr__rop *r) {
  const hr__plan *p = s->plan;
  if (r->op != HR_OP_MEAN || !is_const(s, r->in[1])) return 0;
  const hr__tensor *x = &p->vals[r->in[0]].t, *ax = &p->vals[r->in[1]].t;
  if (x->dt != HR_DT_FLOAT || ax->dt != HR_DT_INT32 || hr__numel(ax) != 1 || x->rank < 1) return 0;
  int a0 = ((const int32_t *)ax->data)[0];
  return a0 == x->rank - 1 || a0 == -1;
}

/* A ResizeBilinear fused with the channel concat feeding it (op i - 1: the resize reads the
 * concat's inputs, per channel the same sums) and with the concat it writes into (op i + 1, whose
 * other inputs are copied into the pixel in the same row pass, cache-hot): one K_RESIZE_CAT run at
 * the resize, the concats do nothing. Bit-identical: every channel is computed as before. The
 * output must not meet the first concat's inputs (their lifetimes end before the resize's output
 * begins, so the arena may have put them in the same bytes). */
static int plain_4d(hr_session *s, int v, const hr__tensor *like) {
  const hr__val *x = &s->plan->vals[v];
  const hr__tensor *t = &x->t;
  return x->kind == V_DYN && t->dt == HR_DT_FLOAT && t->rank == 4 && t->dims[0] == 1 && t->dims[1] == like->dims[1] &&
         t->dims[2] == like->dims[2] && s->plan->vals[x->root].storage != S_SRC;
}
/* ResizeBilinear (op i) -> Slice (i + 1: a crop from the origin, TF's crop_to_bounding_box after an
 * upsampling to an even size) -> channel Concat (i + 2), each value read by the next op only: the
 * resize writes the crop's pixels straight into the concat's output (the rows and columns the slice
 * drops are never made) and the concat's other inputs are copied in the same pass. Appends those
 * copied sources to src; returns the resize's own output height, or 0 where the pattern does not
 * hold. At odd processing sizes (most of the live loop's rungs) RVM's decoder crops after up to three
 * of its four upsamplings (at 245x184 processing, two of them as adjacent ops: test_exec_fuse). */
static int64_t crop_cat(hr_session *s, hr__exec *ex, int i, cat_src *src, int *n) {
  const hr__plan *p = s->plan;
  if (i + 2 >= p->n_rops) return 0;
  const hr__rop *r = &p->rops[i], *sl = &p->rops[i + 1], *c = &p->rops[i + 2];
  if (sl->op != HR_OP_SLICE || sl->dead || c->dead || ex->k[i + 1].kind != K_REF || ex->k[i + 2].kind != K_REF) return 0;
  if (sl->in[0] != r->out[0] || !is_const(s, sl->in[1]) || !cat_axis_last(s, c) || c->in_place_mask) return 0;
  const hr__val *rv = &p->vals[r->out[0]], *sv = &p->vals[sl->out[0]];
  if (p->vals[rv->root].n_readers != 1 || p->vals[sv->root].n_readers != 1 || p->vals[sv->root].last != i + 2) return 0;
  const hr__tensor *rt = &rv->t, *st = &sv->t, *bt = &p->vals[sl->in[1]].t, *o = &p->vals[c->out[0]].t;
  if (rt->rank != 4 || st->rank != 4 || hr__numel(bt) != 4 || st->dims[0] != 1 || st->dims[3] != rt->dims[3] ||
      st->dims[1] > rt->dims[1] || st->dims[2] > rt->dims[2])
    return 0;
  for (int d = 0; d < 4; d++) if (((const int32_t *)bt->data)[d] != 0) return 0;
  if (o->dims[1] != st->dims[1] || o->dims[2] != st->dims[2]) return 0;
  int64_t off = 0, at = -1;
  int m = *n;
  for (int q = 0; q < c->n_in - 1; q++) {
    if (c->in[q] == sl->out[0]) {
      if (at >= 0) return 0;
      at = off;
    } else {
      if (!plain_4d(s, c->in[q], o) || m >= 2 * HR__CAT_MAX) return 0;
      src[m++] = (cat_src){c->in[q], off, 0};
    }
    off += p->vals[c->in[q]].t.dims[3];
  }
  if (at < 0 || off != o->dims[3]) return 0;
  for (int q = 0; q < *n; q++) src[q].off += at;   /* the resized sources: at the slice's channels */
  *n = m;
  return rt->dims[1];
}

static int fuse_resize_cat(hr_session *s, hr__exec *ex, int i) {
  const hr__plan *p = s->plan;
  const hr__rop *r = &p->rops[i];
  const hr__attrs *ra = r->node ? &r->node->a : &r->syn.a;
  if (r->op != HR_OP_RESIZE_BILINEAR || !ra->half_pixel || ra->align_corners) return 0;
  const hr__tensor *x = &p->vals[r->in[0]].t;
  if (x->rank != 4 || x->dims[0] != 1 || x->dt != HR_DT_FLOAT) return 0;
  kern *k = &ex->k[i];
  cat_src src[2 * HR__CAT_MAX];
  int n = 0, pre = 0, post = 0;
  int out = r->out[0];
  /* the concat before, read by the resize only */
  if (i > 0 && cat_axis_last(s, &p->rops[i - 1]) && !p->rops[i - 1].in_place_mask && ex->k[i - 1].kind == K_CONCAT &&
      p->vals[p->rops[i - 1].out[0]].root == p->vals[r->in[0]].root && p->vals[p->vals[r->in[0]].root].n_readers == 1 &&
      p->vals[p->vals[r->in[0]].root].last == i) {
    const hr__rop *c = &p->rops[i - 1];
    pre = 1;
    int64_t off = 0;
    for (int q = 0; q < c->n_in - 1 && pre; q++) {
      if (!plain_4d(s, c->in[q], x)) pre = 0;
      else src[n++] = (cat_src){c->in[q], off, 1};
      off += p->vals[c->in[q]].t.dims[3];
    }
    if (!pre) n = 0;
  }
  if (!pre) src[n++] = (cat_src){r->in[0], 0, 1};
  if (!plain_4d(s, src[0].v, x)) return 0;
  /* the concat after, which the resize writes into */
  /* or, through a crop, the concat two ops on (its output must not meet the sources: where it does,
   * the resize keeps its own output and only the concat before is fused) */
  int64_t vh = 0; /* the crop's: the resize's own output height (its taps are for its own output) */
  cat_src csrc[2 * HR__CAT_MAX];
  int cn = n;
  memcpy(csrc, src, sizeof(cat_src) * (size_t)n);
  if (r->out_c_total == 0 && (vh = crop_cat(s, ex, i, csrc, &cn)) > 0) {
    for (int q = 0; q < cn && vh; q++) if (!apart(s, p->rops[i + 2].out[0], csrc[q].v)) vh = 0;
    if (vh && cn <= HR__CAT_MAX) {
      memcpy(src, csrc, sizeof(cat_src) * (size_t)cn);
      n = cn;
      out = p->rops[i + 2].out[0];
      post = 2;
    } else {
      vh = 0;
    }
  } else if (r->out_c_total > 0) {
    if (i + 1 >= p->n_rops) return 0;
    const hr__rop *c = &p->rops[i + 1];
    if (!cat_axis_last(s, c) || p->vals[c->out[0]].root != p->vals[out].root || ex->k[i + 1].kind != K_REF) return 0;
    const hr__tensor *o = &p->vals[c->out[0]].t;
    int64_t off = 0;
    int self = 0;
    for (int q = 0; q < c->n_in - 1; q++) {
      if (c->in_place_mask >> q & 1) {
        if (off != r->out_c_off) return 0;
        self++;
      } else {
        if (!plain_4d(s, c->in[q], o) || n >= 2 * HR__CAT_MAX) return 0;
        src[n++] = (cat_src){c->in[q], off, 0};
      }
      off += p->vals[c->in[q]].t.dims[3];
    }
    if (self != 1 || off != o->dims[3]) return 0;
    if (pre || r->out_c_off) for (int q = 0; q < n && src[q].resize; q++) src[q].off += r->out_c_off;
    out = c->out[0];
    post = 1;
  }
  if (!pre && !post) return 0;
  if (n > HR__CAT_MAX) return 0;
  for (int q = 0; q < n; q++) if (!apart(s, out, src[q].v)) return 0;
  if (pre) ex->k[i - 1].kind = K_FUSED;
  for (int q = 1; q <= post; q++) ex->k[i + q].kind = K_FUSED;
  k->kind = K_RESIZE_CAT;
  k->crop_h = vh;
  k->crop_out = out;
  k->n_src = n;
  memcpy(k->src, src, sizeof(cat_src) * (size_t)n);
  return 1;
}

/* K_SPLIT_CAT's copies where the values lie this run, in order: each split output from the input,
 * then the concat's inputs. xoff (or NULL): per copy, the input's channel it starts at where it
 * reads the split's input, else -1. */
static int split_cat_copies(hr_session *s, const kern *k, hr__k_pxcopy *c, int64_t *xoff) {
  const hr__plan *p = s->plan;
  const hr__tensor *xt = &p->vals[k->sc_x].t, *ct = &p->vals[k->sc_cat].t;
  const float *xd = view(s, k->sc_x).data;
  float *cd = view(s, k->sc_cat).data;
  int64_t C = xt->dims[3], CC = ct->dims[3], off[HR__CAT_MAX], o = 0;
  int nc = 0;
  for (int q = 0; q < k->sc_nout; q++) {
    int64_t cq = p->vals[k->sc_out[q]].t.dims[3];
    off[q] = o;
    if (xoff) xoff[nc] = o;
    c[nc++] = (hr__k_pxcopy){xd + o, view(s, k->sc_out[q]).data, C, cq, cq};
    o += cq;
  }
  o = 0;
  for (int q = 0; q < k->sc_ncin; q++) {
    int64_t cq = p->vals[k->sc_cin[q]].t.dims[3];
    if (xoff) xoff[nc] = k->sc_from[q] >= 0 ? off[k->sc_from[q]] : -1;
    c[nc++] = k->sc_from[q] >= 0 ? (hr__k_pxcopy){xd + off[k->sc_from[q]], cd + o, C, CC, cq}
                                 : (hr__k_pxcopy){view(s, k->sc_cin[q]).data, cd + o, cq, CC, cq};
    o += cq;
  }
  return nc;
}

/* A Split along channels and the channel Concat right after it that reads some of its outputs (a
 * ConvGRU's input half joined with its state): one pass over the pixels at the split, writing the
 * split's outputs and the concat's, the concat's split parts copied from the split's input (the same
 * floats). The concat's output is written one op early: it must not meet the split's input (whose
 * life may end at the split) nor the concat's other inputs. The concat then does nothing. */
static int split_cat_match(hr_session *s, kern *kk, int i, int x_read) {
  const hr__plan *p = s->plan;
  if (i + 1 >= p->n_rops) return 0;
  const hr__rop *sp = &p->rops[i], *cc = &p->rops[i + 1];
  if (sp->op != HR_OP_SPLIT || sp->dead || cc->dead || sp->n_out < 2 || sp->n_out > HR__CAT_MAX || !is_const(s, sp->in[0])) return 0;
  if (!cat_axis_last(s, cc) || cc->in_place_mask || cc->n_in - 1 > HR__CAT_MAX) return 0;
  int ax = ((const int32_t *)p->vals[sp->in[0]].t.data)[0];
  const hr__tensor *x = &p->vals[sp->in[1]].t;
  if (x->rank != 4 || (ax != 3 && ax != -1) || x->dt != HR_DT_FLOAT || x->dims[0] != 1) return 0;
  if (!dense_float(s, sp->in[1], hr__numel(x))) return 0;
  for (int k = 0; k < sp->n_out; k++)
    if (!plain_4d(s, sp->out[k], x) || !dense_float(s, sp->out[k], hr__numel(&p->vals[sp->out[k]].t)) ||
        (x_read && !apart(s, sp->out[k], sp->in[1])))
      return 0;
  int from_split = 0;
  for (int q = 0; q < cc->n_in - 1; q++) {
    int v = cc->in[q], f = -1;
    for (int k = 0; k < sp->n_out; k++) if (p->vals[v].root == p->vals[sp->out[k]].root) f = k;
    if (f >= 0) from_split++;
    else if (!plain_4d(s, v, x) || !dense_float(s, v, hr__numel(&p->vals[v].t)) || !apart(s, cc->out[0], v)) return 0;
    else for (int k = 0; k < sp->n_out; k++) if (!apart(s, sp->out[k], v)) return 0;
    kk->sc_cin[q] = v; kk->sc_from[q] = f;
  }
  if (!from_split || !dense_float(s, cc->out[0], hr__numel(&p->vals[cc->out[0]].t)) || !plain_4d(s, cc->out[0], x) ||
      (x_read && !apart(s, cc->out[0], sp->in[1])))
    return 0;
  for (int k = 0; k < sp->n_out; k++) if (!apart(s, cc->out[0], sp->out[k])) return 0;
  kk->sc_x = sp->in[1]; kk->sc_cat = cc->out[0]; kk->sc_nout = sp->n_out; kk->sc_ncin = cc->n_in - 1;
  for (int k = 0; k < sp->n_out; k++) kk->sc_out[k] = sp->out[k];
  return 1;
}
static int fuse_split_cat(hr_session *s, hr__exec *ex, int i) {
  if (i + 1 >= ex->n || ex->k[i].kind != K_REF || ex->k[i + 1].kind != K_REF || !split_cat_match(s, &ex->k[i], i, 1)) return 0;
  ex->k[i].kind = K_SPLIT_CAT;
  ex->k[i + 1].kind = K_FUSED;
  return 1;
}

/* Two consecutive per-channel ops (K_BCAST), the first's result read by the second only as its
 * full operand: one pass at the second (the first does nothing, so its input is intact there). */
static void fuse_bcast_pair(hr_session *s, hr__exec *ex, int i) {
  const hr__plan *p = s->plan;
  kern *a = &ex->k[i], *b = &ex->k[i + 1];
  if (a->kind != K_BCAST || b->kind != K_BCAST || a->bc_v2 >= 0 || b->bc_v2 >= 0) return;
  const hr__rop *ra = &p->rops[i], *rb = &p->rops[i + 1];
  const hr__val *t = &p->vals[p->vals[ra->out[0]].root];
  if (p->vals[b->bc_x].root != p->vals[ra->out[0]].root || t->n_readers != 1 || t->last != i + 1) return;
  if (a->bc.L != b->bc.L || hr__numel(&p->vals[ra->out[0]].t) != hr__numel(&p->vals[rb->out[0]].t)) return;
  if (!same_or_apart(s, rb->out[0], a->bc_x) || !apart(s, rb->out[0], a->bc_v1) || !apart(s, rb->out[0], b->bc_v1)) return;
  b->bc.op2 = b->bc.op; b->bc.v2_first = b->bc.v_first;
  b->bc.op = a->bc.op; b->bc.v_first = a->bc.v_first;
  b->bc_v2 = b->bc_v1; b->bc_v1 = a->bc_v1; b->bc_x = a->bc_x;
  a->kind = K_FUSED;
  free(a->bvec);
  a->bvec = NULL;
}

/* A depthwise convolution our AVX-512 kernel does (hr__k_dwconv: XNNPACK's values bit for bit, with
 * four pixels' chains at once over blocks of 16 channels, the weights read in place): hr__k_dwconv_fits,
 * one image, not reading the caller's frame. With and
 * without HR_EXEC_FUSE (the two engines compare bit for bit); HR_DWCONV=xnn keeps XNNPACK's (A/B). */
static int dwconv_fits(hr_session *s, const hr__rop *r, xdesc *d) {
  if (r->op != HR_OP_DWCONV && r->op != HR_OP_FUSED_DWCONV) return 0;
  if (!describe_xnn(s, r, d) || d->xk != X_CONV || !(d->flags & XNN_FLAG_DEPTHWISE_CONVOLUTION)) return 0;
  const hr__plan *p = s->plan;
  const hr__tensor *x = &p->vals[r->in[0]].t, *o = &p->vals[r->out[0]].t;
  return hr__k_dwconv_fits((int)d->kh, (int)d->kw, (int)d->sh, (int)d->sw, (int)d->dh, (int)d->dw, (int64_t)d->goc, (int64_t)d->n) &&
         x->rank == 4 && x->dt == HR_DT_FLOAT && o->rank == 4 && o->dims[3] == x->dims[3] && p->vals[p->vals[r->in[0]].root].storage != S_SRC &&
         x->dims[1] * x->dims[2] * x->dims[3] < INT32_MAX && o->dims[1] * o->dims[2] * o->dims[3] < INT32_MAX;
}

/* A 1x1 convolution on a one-pixel image (squeeze-excitation, LR-ASPP's pooled branch: 17 in RVM,
 * 72..960 in, 24..960 out). XNNPACK's operator runs it on one thread (one row tile); on 4 threads
 * or more it runs as our kernel over the pool instead (hr__k_matvec: XNNPACK's values bit for bit,
 * blocks of output channels spread over the threads; the H200 host, 16 threads: 0.55-0.62 -> 0.18-0.24
 * ms a frame for the 17), the operator kept for fewer threads and for the calling thread alone
 * (its packed weights read faster there: 0.54-0.68 against 0.77-0.92 ms on one thread).
 * HR_MATVEC=xnn keeps XNNPACK's at any count (A/B). */
static int matvec_fits(hr_session *s, const hr__rop *r, const xdesc *d) {
  const hr__tensor *x = &s->plan->vals[r->in[0]].t;
  return (r->op == HR_OP_CONV2D || r->op == HR_OP_FUSED_CONV2D) && d->xk == X_CONV && !(d->flags & XNN_FLAG_DEPTHWISE_CONVOLUTION) &&
         d->groups == 1 && d->kh == 1 && d->kw == 1 && d->n * d->ih * d->iw == 1 && x->dt == HR_DT_FLOAT && d->w && d->gic < INT32_MAX &&
         d->goc < INT32_MAX && s->pool && pthreadpool_get_threads_count(s->pool) >= 4 && hr__k_matvec_fits();
}

/* A per-channel op (or pair, K_BCAST) whose result only a HardSwish reads (RVM's batch norm after a
 * depthwise convolution): the HardSwish in the same pass, the chain computed in the HardSwish's output
 * (the intermediate is never written). Where XNNPACK would run its AVX-512 HardSwish, whose
 * operations hr__k_hswish repeats (same bits). The output is written one op early: it must not meet
 * the per-channel operands, and be the full operand's bytes or apart from them. */
static void fuse_bcast_hswish(hr_session *s, hr__exec *ex, int i) {
  const hr__plan *p = s->plan;
  kern *a = &ex->k[i];
  const hr__rop *ra = &p->rops[i], *rh = &p->rops[i + 1];
  if (a->kind != K_BCAST || rh->op != HR_OP_HARDSWISH || rh->dead || ex->k[i + 1].kind != K_XNN || !hr__k_hswish_ok()) return;
  const hr__val *t = &p->vals[p->vals[ra->out[0]].root];
  if (p->vals[rh->in[0]].root != p->vals[ra->out[0]].root || t->n_readers != 1 || t->last != i + 1) return;
  int64_t n = hr__numel(&p->vals[ra->out[0]].t);
  if (!dense_float(s, rh->out[0], n) || hr__numel(&p->vals[rh->out[0]].t) != n) return;
  if (!same_or_apart(s, rh->out[0], a->bc_x) || !apart(s, rh->out[0], a->bc_v1) || (a->bc_v2 >= 0 && !apart(s, rh->out[0], a->bc_v2))) return;
  a->bc.hswish = 1;
  a->bc_out = rh->out[0];
  ex->k[i + 1].kind = K_FUSED;
}

/* A convolution on XNNPACK whose output only a HardSwish right after it reads (MobileNetV3's
 * expansions): run in bands of rows (the plan's, or the whole image cut in hs_bands(), which
 * hr__exec_create asks create_bands for), each band's HardSwish done by the thread that made its rows, right
 * after, in cache: one dispatch instead of two, and no pass over the whole output. The convolution
 * writes into the HardSwish's output (with hr__k_hswish's operations: XNNPACK's AVX-512 HardSwish's
 * bits), which must not meet its input (bands read rows around their own). */
static int conv_hswish(hr_session *s, int i) {
  const hr__plan *p = s->plan;
  if (i + 1 >= p->n_rops || !hr__k_hswish_ok()) return 0;
  const hr__rop *rc = &p->rops[i], *rh = &p->rops[i + 1];
  if ((rc->op != HR_OP_CONV2D && rc->op != HR_OP_FUSED_CONV2D) || rh->op != HR_OP_HARDSWISH || rh->dead) return 0;
  const hr__val *t = &p->vals[p->vals[rc->out[0]].root];
  return p->vals[rh->in[0]].root == p->vals[rc->out[0]].root && t->n_readers == 1 && t->last == i + 1;
}
/* A pointwise convolution (1x1, stride 1, no padding, one group: a matrix product over the pixels)
 * on our kernel (K_PWG, hr__k_pwg_block) instead of XNNPACK's, the HardSwish after it in its
 * epilogue where one follows (fuse_conv_hswish's bands, or the op after it), the weights read in
 * place. The same bits as XNNPACK's convolution and HardSwish operator (test_exec_fuse). XNNPACK's
 * operator stays made (its bands too): a plan's memory does not depend on this choice. AVX-512 only.
 * One-pixel ones stay on the matrix-vector path (matvec_fits), the ones with a resize-concat
 * or a pointwise convolution fused into their bands on XNNPACK's. HR_PWG=0: off (A/B).
 * Tried and not kept (57ed76f, reverted): the squeeze-excitation's per-channel Mul before 6 of the
 * projections read scaled by them (x[m][k] * sc[k] per tile as read: the same bits). Each block of 32
 * outputs scales its tiles again: 0.83-0.88x of the Mul's pass then ours on 960/672 -> 160/112
 * (bench/pwg_probe.c, one thread, 690 pixels); the 12 ops' sum in `bench --ops-all`, one thread, 3
 * rounds: 8.8-10.5 ms against 7.8-8.2. Only in the rows order (K N < 64K, scaled once a tile) it was
 * 1.07-1.12x, 0.03 ms a frame over its 2 ops: not worth the code. */
static void use_pwg(hr_session *s, hr__exec *ex, int i) {
  const hr__plan *p = s->plan;
  kern *k = &ex->k[i];
  if (k->kind != K_XNN || k->mv_on || k->reads_src || k->rc || k->pw || !hr__k_pwg_ok()) return;
  /* 1 or 2 threads only: on an H100 host's Xeon (16 cores, noisy), 1920x1440 r0.25, HR_PWG=0
   * against on, 3 rounds: the 1x1 class 29.8 / 32.7 / 29.3 -> 23.2 / 22.0 / 22.7 ms on 1 thread,
   * 18.5 / 19.3 / 15.1 -> 15.1 / 21.1 / 17.7 on 2, but 4.6 / 5.4 / 4.1 -> 5.1 / 7.1 / 4.5 on 8 and
   * on 16 1.47 -> 1.80 (4 rounds, a quiet host, blocks of outputs) or within the noise (pixel runs);
   * XNNPACK's split is kept from 3 threads on */
  if (s->pool && pthreadpool_get_threads_count(s->pool) > 2) return;
  const xdesc *d = &k->xd;
  if (!xd_pointwise(d) || (d->flags & XNN_FLAG_DEPTHWISE_CONVOLUTION) || d->dh != 1 || d->dw != 1 || !d->w || d->gic > 65536 ||
      d->goc > 65536)
    return;
  const hr__rop *r = &p->rops[i];
  const int64_t px = (int64_t)d->ih * (int64_t)d->iw;
  if (px < 2 || !dense_float(s, r->in[0], px * (int64_t)d->gic) || !dense_float(s, r->out[0], px * (int64_t)d->goc)) return;
  int out = r->out[0], hs = 0, fuse_next = 0;   /* fuse_next: the HardSwish op after it becomes K_FUSED */
  if (k->hs_on) {
    out = k->hs_out; hs = 1;
  } else if (i + 1 < ex->n && ex->k[i + 1].kind == K_XNN && conv_hswish(s, i)) {
    const hr__rop *rh = &p->rops[i + 1];
    hr__split_info si;
    const int split = hr__split_plan_query(p, &si) && (si.src_end == i + 1 || si.tail == i + 1);
    if (!split && dense_float(s, rh->out[0], px * (int64_t)d->goc)) { out = rh->out[0]; hs = fuse_next = 1; }
  }
  if (!apart(s, out, r->in[0])) return;   /* other tiles still read the input */
  if (fuse_next) ex->k[i + 1].kind = K_FUSED;
  k->pg = (hr__pwg){NULL, d->w, d->b, NULL, px, (int)d->gic, (int)d->goc, hs, d->lo, d->hi};
  k->pg_out = out;
  k->kind = K_PWG;
}
typedef struct pwg_job { const hr__pwg *g; int64_t tiles; size_t chunks; } pwg_job;
/* chunk mc's pixels [*m0, *m1): whole 8-pixel tiles, the last chunk to the end */
static void pwg_range(const pwg_job *j, size_t mc, int64_t *m0, int64_t *m1) {
  *m0 = j->tiles * (int64_t)mc / (int64_t)j->chunks * 8;
  const int64_t e = j->tiles * (int64_t)(mc + 1) / (int64_t)j->chunks * 8;
  *m1 = e < j->g->M ? e : j->g->M;
}
static void pwg_task(void *ctx, size_t nb, size_t mc) {
  int64_t m0, m1;
  pwg_range(ctx, mc, &m0, &m1);
  hr__k_pwg_block(((const pwg_job *)ctx)->g, m0, m1, (int)nb * 32);
}
static void pwg_rows_task(void *ctx, size_t mc) {
  int64_t m0, m1;
  pwg_range(ctx, mc, &m0, &m1);
  hr__k_pwg_rows(((const pwg_job *)ctx)->g, m0, m1);
}
/* Two orders. Blocks of 32 outputs over the pixels (a block's weight rows stay in L1 across the
 * pixels) where the weights are large (160 x 960: 614 KB, over a Zen 5's 1 MB L2 with the input);
 * else 8 pixels at a time across all the outputs (each pixel's outputs written together, the
 * weights read again from L2 for each 8): 49152 x 16 -> 64 and 12288 x 24 -> 72 were 0.84x and
 * 0.77x XNNPACK's on an H100 host's Xeon in blocks, 1.09x and 1.11x this way (bench/pwg_probe.c,
 * ROWS=1). On 2 threads 4 tasks a thread (blocks x runs of pixels, or runs of 8-pixel tiles). */
static void run_pwg(pthreadpool_t pool, const hr__pwg *g) {
  const size_t nb = (size_t)(g->N + 31) / 32, T = pool ? pthreadpool_get_threads_count(pool) : 1;
  const int64_t tiles = (g->M + 7) / 8;
  if ((int64_t)g->K * g->N >= 65536) {
    size_t chunks = T > 1 ? (4 * T + nb - 1) / nb : 1;
    if ((int64_t)chunks > tiles) chunks = (size_t)tiles;
    pwg_job j = {g, tiles, chunks};
    pthreadpool_parallelize_2d(pool, pwg_task, &j, nb, chunks, 0);
  } else {
    size_t chunks = T > 1 ? 4 * T : 1;
    if ((int64_t)chunks > tiles) chunks = (size_t)tiles;
    pwg_job j = {g, tiles, chunks};
    pthreadpool_parallelize_1d(pool, pwg_rows_task, &j, chunks, 0);
  }
}

/* The bands to cut a convolution into for its HardSwish (0: leave it to XNNPACK's own split, the
 * HardSwish apart): two or one a thread, where whole rows (a pointwise convolution's: pixels) share
 * out within 15% of even (on 16 threads, 23 rows would take the time of 2 where XNNPACK's tiles take
 * about 1.5: measured on the H200 host, the 16-thread frame gained nothing with 23 row bands); on
 * one thread 4, for the cache. */
static int hs_bands(hr_session *s, int i) {
  const int64_t T = s->pool ? (int64_t)pthreadpool_get_threads_count(s->pool) : 1;
  const hr__rop *r = &s->plan->rops[i];
  const hr__tensor *w = &s->plan->vals[r->in[1]].t, *o = &s->plan->vals[r->out[0]].t;
  const hr__attrs *a = r->node ? &r->node->a : &r->syn.a;
  const int pw = w->rank == 4 && w->dims[0] == 1 && w->dims[1] == 1 && a->strides[1] == 1 && a->strides[2] == 1;
  const int64_t rows = pw ? o->dims[1] * o->dims[2] : o->dims[1];
  if (T <= 1) return (int)(rows < 4 ? rows : 4);
  /* a pointwise convolution from 8 threads on: XNNPACK's own split, the HardSwish apart. Each band
   * of a few dozen pixels streamed all the weights (160 x 960: 614 KB) for little work. On the H100
   * machine's host, 1920x1440 r0.25, alternating: 8 threads 18.47-20.84 ms a frame with the bands,
   * 16.63-18.51 without (3 of 4 rounds faster, one equal), and with the means in runs below (and a
   * HardSwish kernel of ours, since dropped: no faster than XNNPACK's operator) 13.5-15.3 against
   * 14.0-17.8 with both off (4 of 5); 16 threads 10.92-11.64 against 11.05-12.21 (4 of 4) in one
   * call, within the noise in two more (conv1x1 0.2-0.4 ms less, the HardSwish apart 0.3 ms more:
   * 11 ops of ~25 us there); 4 threads 28.63-36.14 against 28.50-30.50 with the bands, so they
   * stay below 8. HR_HS_PW_BANDS=0: never, =1: at any count (A/B). */
  const char *hpb = getenv("HR_HS_PW_BANDS");
  if (pw && (hpb ? atoi(hpb) == 0 : T >= 8)) return 0;
  for (int64_t per = 2; per >= 1; per--) {
    const int64_t B = per * T, big = (rows + B - 1) / B; /* rows of the largest band */
    if (B <= rows && per * big * T * 100 <= rows * 115) return (int)B;
  }
  return 0;
}
static void fuse_conv_hswish(hr_session *s, hr__exec *ex, int i) {
  const hr__plan *p = s->plan;
  kern *a = &ex->k[i], *b = &ex->k[i + 1];
  const hr__rop *rc = &p->rops[i], *rh = &p->rops[i + 1];
  if (a->kind != K_XNN || !a->n_band || a->reads_src || b->kind != K_XNN || !conv_hswish(s, i)) return;
  const int64_t n = hr__numel(&p->vals[rc->out[0]].t);
  if (hr__numel(&p->vals[rh->out[0]].t) != n || !dense_float(s, rh->out[0], n) || !apart(s, rh->out[0], rc->in[0])) return;
  a->hs_on = 1;
  a->hs_out = rh->out[0];
  if (setup_xnn(s, rc, a)) { a->hs_on = 0; setup_xnn(s, rc, a); return; }
  b->kind = K_FUSED;
}

/* A convolution run in bands (the plan's) whose output the next op reads whole, that op being a
 * pointwise convolution (1x1, stride 1, no padding: a matrix product over the pixels) on XNNPACK:
 * the pointwise one runs on each band's pixels right after the band, by the same thread, while they
 * are in cache (RVM's last 3x3 convolution at the processing size, 16 -> 16 channels, and the 1x1
 * 16 -> 4 after it: at 480x360 its 11 MB were read back from memory). Its bands are clones of its
 * own operator (one template: same weights, same kernel), each on a run of pixels, so every pixel
 * gets the same sums: the same bits. The pointwise output must not lie over the convolution's
 * input or output (a band writes it while others still read and write those); both ops in every
 * op range the executor runs (the tail mode's split: hr__split_plan_query). HR_CONV_PW=0: off. */
static void fuse_conv_pw(hr_session *s, hr__exec *ex, int i) {
  const hr__plan *p = s->plan;
  kern *a = &ex->k[i], *b = &ex->k[i + 1];
  const hr__rop *ra = &p->rops[i], *rb = &p->rops[i + 1];
  if (a->kind != K_XNN || !a->n_band || a->hs_on || a->pw || a->reads_src || a->xd.xk != X_CONV || a->xd.n != 1) return;
  if (b->kind != K_XNN || b->n_band || b->mv_on || b->reads_src || !b->op || !b->share) return;
  const xdesc *d = &b->xd;
  if (!xd_pointwise(d)) return;
  const hr__tensor *ao = &p->vals[ra->out[0]].t, *bo = &p->vals[rb->out[0]].t;
  const int64_t n = hr__numel(ao), px = ao->dims[1] * ao->dims[2];
  if (ao->rank != 4 || bo->rank != 4 || p->vals[rb->in[0]].root != p->vals[ra->out[0]].root || !dense_float(s, rb->in[0], n) ||
      !dense_float(s, ra->out[0], n) || (int64_t)d->ih * (int64_t)d->iw != px || (size_t)ao->dims[3] != d->gic ||
      !dense_float(s, rb->out[0], px * (int64_t)d->goc))
    return;
  if (!apart(s, rb->out[0], ra->in[0]) || !apart(s, rb->out[0], ra->out[0])) return;
  hr__split_info si;
  if (hr__split_plan_query(p, &si) && (si.src_end == i + 1 || si.tail == i + 1)) return;
  xband *bb = calloc((size_t)a->n_band, sizeof *bb);
  if (!bb) return;
  const int64_t W = ao->dims[2];
  hr_status st = HR_OK;
  int nb = 0;
  for (; nb < a->n_band; nb++) {
    const xband *ab = &a->band[nb];
    bb[nb] = (xband){.in0 = ab->out0 * W, .in_rows = ab->out_rows * W, .out0 = ab->out0 * W, .out_rows = ab->out_rows * W, .px = 1};
    if ((st = hr__kcache_acquire(s->m->kcache, d, sizeof *d, build_template, &bb[nb].op, &bb[nb].share, &bb[nb].shared_bytes))) break;
  }
  /* the bands in place of its operator, set up on their pixels; or the operator kept as it was
   * (already set up: setup_xnn of the bands touches only them) */
  xnn_operator_t op = b->op;
  hr__kshare *share = b->share;
  if (!st) {
    b->band = bb; b->n_band = nb; b->op = NULL; b->share = NULL;
    if ((st = setup_xnn(s, rb, b))) { b->band = NULL; b->n_band = 0; b->op = op; b->share = share; }
  }
  if (st) {
    for (int k = 0; k < nb; k++) { xnn_delete_operator(bb[k].op); hr__kcache_release(ex->kc, bb[k].share); }
    free(bb);
    return;
  }
  xnn_delete_operator(op);
  hr__kcache_release(ex->kc, share);
  a->pw = b;
  b->kind = K_FUSED;
}

/* Op i a resize-concat (K_RESIZE_CAT) whose output (*v, the concat's through a crop; its view *o)
 * only the op that runs after it reads, as its first input, whole: that op's index (the ops between,
 * at most one, fused), or -1. In the arena, NHWC floats, batch 1; not across a range the executor
 * runs apart (the tail mode's split). The two fusions that make its rows in the reader's tasks. */
static int resize_cat_reader(hr_session *s, const hr__exec *ex, int i, int *v, hr__tensor *o) {
  const hr__plan *p = s->plan;
  const kern *rk = &ex->k[i];
  if (rk->kind != K_RESIZE_CAT || rk->n_src < 1) return -1;
  int j = i + 1;
  while (j < ex->n && j <= i + 2 && ex->k[j].kind == K_FUSED) j++;
  if (j >= ex->n) return -1;
  const hr__rop *rj = &p->rops[j];
  *v = rk->crop_h ? rk->crop_out : p->rops[i].out[0];
  const int R = p->vals[*v].root;
  if (p->vals[rj->in[0]].root != R || p->vals[R].storage != S_ARENA) return -1;
  const hr__tensor x = view(s, rj->in[0]);
  *o = view(s, *v);
  if (o->rank != 4 || x.rank != 4 || o->dt != HR_DT_FLOAT || o->data != x.data || o->dims[0] != 1) return -1;
  for (int q = 1; q < 4; q++) if (o->dims[q] != x.dims[q]) return -1;
  for (int q = j + 1; q < p->n_rops; q++)   /* nothing after the reader reads it */
    for (int t = 0; t < p->rops[q].n_in; t++)
      if (p->rops[q].in[t] >= 0 && p->vals[p->rops[q].in[t]].root == R) return -1;
  hr__split_info si;
  if (hr__split_plan_query(p, &si) && ((si.src_end > i && si.src_end <= j) || (si.tail > i && si.tail <= j))) return -1;
  return j;
}

/* A resize-concat (K_RESIZE_CAT) whose output only a convolution run in bands reads, that being the
 * next op that runs (RVM's decoder: the upsampled features joined with the skip and the image, then a
 * 3x3 convolution; at 480x360 the concat is 24 MB, written by one op and read back by the next).
 * Each band's task makes the input rows it reads, halo included, into a slot, and runs the band on
 * them while they are in cache (run_band_rc): a halo row is made by both its bands (2 rows of ~15 at
 * 480x360), and no task reads what another writes. The slots are one per thread of the pool, at the
 * start of the concat's own bytes, which nothing else reads: no memory added. The rows are the
 * whole op's (hr__k_resize_cat_rows) and the band's sums those of its operator: the same bits.
 * Not across a range the executor runs apart (the tail mode's split). HR_RESIZE_CONV=0: off. */
static void fuse_resize_conv(hr_session *s, hr__exec *ex, int i) {
  const hr__plan *p = s->plan;
  kern *rk = &ex->k[i];
  int v;
  hr__tensor o;
  const int j = resize_cat_reader(s, ex, i, &v, &o);
  if (j < 0) return;
  kern *k = &ex->k[j];
  const hr__rop *rj = &p->rops[j];
  const xdesc *d = &k->xd;
  if (k->kind != K_XNN || !k->n_band || k->rc || k->reads_src || k->mv_on || d->xk != X_CONV || d->n != 1) return;
  for (int b = 0; b < k->n_band; b++) if (k->band[b].px) return;
  if ((size_t)o.dims[3] != d->groups * d->gic || (size_t)o.dims[2] != d->iw || (size_t)o.dims[1] != d->ih) return;
  const int R = p->vals[v].root;
  /* the resize's sources are read while bands write: the convolution's outputs must lie apart from them */
  for (int q = 0; q < rk->n_src; q++)
    if (!apart(s, rj->out[0], rk->src[q].v) || (k->hs_on && !apart(s, k->hs_out, rk->src[q].v)) ||
        (k->pw && !apart(s, p->rops[j + 1].out[0], rk->src[q].v)))
      return;
  const int nslot = s->pool ? (int)pthreadpool_get_threads_count(s->pool) : 1;
  if (nslot > 64) return;
  /* each band makes its halo rows again: only where that adds at most a quarter to the resize's
   * rows (hr__bands_halo_ok; RVM at 480x360 on 2 threads: 27 bands, +14%). Thin bands (small
   * images, or many threads cutting them: 74 bands at 16 threads, +41%) lost: on a 16-core Xeon the
   * fused ops took 4.50-5.09 ms against 4.34-4.89 apart */
  int64_t rows = 0, made = 0;
  for (int b = 0; b < k->n_band; b++) {
    if (k->band[b].in_rows > rows) rows = k->band[b].in_rows;
    made += k->band[b].in_rows;
  }
  if (!hr__bands_halo_ok(made, o.dims[1])) return;
  const int64_t slot = (rows * o.dims[2] * o.dims[3] + 15) / 16 * 16;
  const char *rb, *re;
  val_range(s, R, &rb, &re);
  /* XNNPACK may read 16 bytes past the last pixel (XNN_EXTRA_BYTES) */
  if (rb != (const char *)o.data || ((uintptr_t)rb & 63) || (int64_t)(re - rb) < (int64_t)sizeof(float) * (nslot * slot + 16)) return;
  rc_fuse *rc = calloc(1, sizeof *rc);
  if (!rc) return;
  rc->cat.rk = rk;
  rc->cat.v = v;
  rc->nslot = nslot;
  rc->slot = slot;
  atomic_init(&rc->busy, 0);
  k->rc = rc;
  rk->kind = K_FUSED;
}

/* A Winograd convolution whose output only a Split along channels reads, that split done with the
 * concat after it in one pass (K_SPLIT_CAT, fuse_split_cat: RVM's decoder, the block's output cut
 * into the half that passes and the ConvGRU's input, that input joined with the state): the pass in
 * the convolution's epilogue (hr__epi_copies) on each row of outputs while it is in cache, so the
 * output itself is never written nor read back (180x240x32 floats at 1920x1440 r0.25). The copies
 * are the same floats. What the epilogue writes (the split's outputs, the concat) is written while
 * other tasks still read the convolution's input (kept alive through the concat by the plan) and
 * the concat's other inputs: it must meet neither. HR_WINO_SPLIT=0: off. */
static void fuse_wino_split(hr_session *s, hr__exec *ex, int i) {
  const hr__plan *p = s->plan;
  kern *w = &ex->k[i], *sc = &ex->k[i + 1];
  const hr__rop *rw = &p->rops[i];
  if (w->kind != K_WINO || w->wepi.row || i + 2 >= ex->n || p->rops[i + 1].dead) return;
  /* fused with the concat already (fuse_split_cat), or apart only because the split's input lay
   * under what they write: here it is never written */
  const int merged = sc->kind == K_SPLIT_CAT;
  if (!merged && (sc->kind != K_SPLIT || ex->k[i + 2].kind != K_CONCAT || !split_cat_match(s, sc, i + 1, 0))) return;
  const int X = p->vals[rw->out[0]].root;
  if (p->vals[sc->sc_x].root != X || p->vals[X].n_readers != 1 || p->vals[X].last != i + 1) return;
  const hr__tensor *xt = &p->vals[sc->sc_x].t;
  if (xt->dims[3] != w->wn.K || !dense_float(s, sc->sc_x, hr__numel(xt)) || 1 + sc->sc_nout + sc->sc_ncin > HR__EPI_CP_MAX) return;
  int dst[HR__CAT_MAX + 1], nd = 0;
  for (int q = 0; q < sc->sc_nout; q++) dst[nd++] = sc->sc_out[q];
  dst[nd++] = sc->sc_cat;
  for (int q = 0; q < nd; q++) {
    if (!apart(s, dst[q], rw->in[0])) return;
    for (int t = 0; t < sc->sc_ncin; t++)
      if (sc->sc_from[t] < 0 && !apart(s, dst[q], sc->sc_cin[t])) return;
  }
  hr__split_info si;
  if (hr__split_plan_query(p, &si) && (si.src_end == i + 1 || si.tail == i + 1 || si.src_end == i + 2 || si.tail == i + 2)) return;
  if (!(w->wcp = calloc(1, sizeof *w->wcp))) return;
  w->wsc = sc;
  w->wcp->K = w->wn.K;
  w->wepi = (hr__wino_epi){hr__epi_copies, w->wcp};
  sc->kind = K_FUSED;
  if (!merged) ex->k[i + 2].kind = K_FUSED;
}

/* A resize-concat (K_RESIZE_CAT) whose output only a Winograd convolution (K_WINO, no epilogue)
 * reads, that being the next op that runs (RVM's decoder: the upsampled features joined with the
 * encoder's skip and the image, then a 3x3 convolution; at 1920x1440 r0.25 the 180x240x59 concat is
 * 10 MB, written by one op and read back by the next): each task of the convolution makes the input
 * rows of its tile rows into a ring of 6 rows as it reaches them (hr__wino_pro), so the rows are
 * read while in cache and the concat is never written whole. A task makes 2 rows again where it
 * starts (the halo): only where each thread of the pool gets 3 tile rows or more (12 output rows
 * for 2 made again). The rings lie at the start of the concat's own bytes, which nothing else reads:
 * no memory added. The rows are hr__k_resize_cat_rows's (the same bits as the whole op) and the
 * products those of the same input read in place: the same bits (test_exec_fuse). Not across a
 * range the executor runs apart (the tail mode's split). HR_RESIZE_WINO=0: off. */
static void rw_rows(void *ctx, int y0, int y1, float *dst) {
  const cat_rows *c = &((const rw_fuse *)ctx)->cat;
  hr__k_resize_cat_rows(&c->rk->rs, c->cs, c->rk->n_src, &c->o, y0, y1, dst);
}
static int bytes_apart(hr_session *s, int v, const char *b, const char *e) {
  const char *vb, *ve;
  val_range(s, v, &vb, &ve);
  return ve <= b || e <= vb;
}
static void fuse_resize_wino(hr_session *s, hr__exec *ex, int i) {
  const hr__plan *p = s->plan;
  kern *rk = &ex->k[i];
  int v;
  hr__tensor o;
  const int j = resize_cat_reader(s, ex, i, &v, &o);
  if (j < 0) return;
  kern *k = &ex->k[j];
  const hr__rop *rj = &p->rops[j];
  if (k->kind != K_WINO || k->rw || (k->wepi.row && k->wepi.row != hr__epi_copies) || o.dims[3] != k->wn.C) return;
  const int R = p->vals[v].root;
  const int nslot = s->pool ? (int)pthreadpool_get_threads_count(s->pool) : 1;
  if (nslot > 64 || (o.dims[1] + 3) / 4 < 3 * (int64_t)nslot) return;
  const size_t ring = ((size_t)6 * (size_t)o.dims[2] * (size_t)o.dims[3] + 15) / 16 * 16;
  const char *rb, *re;
  val_range(s, R, &rb, &re);
  const char *ring_end = rb + sizeof(float) * ring * (size_t)nslot;
  if (rb != (const char *)o.data || ((uintptr_t)rb & 63) || ring_end > re) return;
  /* the sources are read while tasks write the rings and the output (or with an epilogue, what it
   * writes instead: the output is never written) */
  for (int q = 0; q < rk->n_src; q++)
    if ((!k->wepi.row && !apart(s, rj->out[0], rk->src[q].v)) || !bytes_apart(s, rk->src[q].v, rb, ring_end)) return;
  if (!k->wepi.row && !bytes_apart(s, rj->out[0], rb, ring_end)) return;
  if (k->wepi.row == hr__epi_copies) {   /* fuse_wino_split: what its epilogue writes */
    const kern *sc = k->wsc;
    for (int d = 0; d <= sc->sc_nout; d++) {
      const int dv = d < sc->sc_nout ? sc->sc_out[d] : sc->sc_cat;
      if (!bytes_apart(s, dv, rb, ring_end)) return;
      for (int q = 0; q < rk->n_src; q++) if (!apart(s, dv, rk->src[q].v)) return;
    }
  }
  rw_fuse *f = calloc(1, sizeof *f);
  if (!f) return;
  f->cat.rk = rk;
  f->cat.v = v;
  f->pro = (hr__wino_pro){rw_rows, f, (float *)o.data, ring};
  k->rw = f;
  rk->kind = K_FUSED;
}

/* A depthwise convolution of ours (K_DWCONV) whose output only the next op reads, that op being a
 * per-channel op or pair (K_BCAST, with the HardSwish fused after it or not: RVM's batch norm after
 * DepthwiseConv2dNative) or a HardSwish (after FusedDepthwiseConv2dNative): those ops in the
 * convolution's epilogue (hr__dw_epi, the same operations, so the same bits), written straight to
 * their output; the next op then does nothing. That output must not meet the convolution's input
 * (read around each pixel while rows are written) nor the per-channel operands. HR_DW_EPI=0: off. */
static int epi_code(int op) {
  switch (op) {
    case HR_OP_MUL: return HR__EPI_MUL;
    case HR_OP_ADD: case HR_OP_ADDV2: return HR__EPI_ADD;
    case HR_OP_SUB: return HR__EPI_SUB;
    case HR_OP_REALDIV: return HR__EPI_DIV;
    default: return HR__EPI_NONE;
  }
}
static void fuse_dw_epi(hr_session *s, hr__exec *ex, int i) {
  const hr__plan *p = s->plan;
  /* the next op's kernel, or for a pair of per-channel ops (fuse_bcast_pair) the one after it */
  const int j = i + 2 < ex->n && ex->k[i + 1].kind == K_FUSED && ex->k[i + 2].kind == K_BCAST && ex->k[i + 2].bc_v2 >= 0 ? i + 2 : i + 1;
  kern *a = &ex->k[i], *b = &ex->k[j];
  const hr__rop *ra = &p->rops[i], *rb = &p->rops[j];
  if (a->kind != K_DWCONV || a->dw_out >= 0 || rb->dead) return;
  const hr__val *t = &p->vals[p->vals[ra->out[0]].root];
  if (t->n_readers != 1 || t->last != i + 1) return;
  const int64_t n = hr__numel(&p->vals[ra->out[0]].t), C = a->dw.C;
  hr__dw_epi e = {0};
  int out, v1 = -1, v2 = -1;
  if (b->kind == K_BCAST) {
    if (p->vals[b->bc_x].root != p->vals[ra->out[0]].root) return;
    e.op1 = epi_code(b->bc.op); e.v1_first = b->bc.v_first; v1 = b->bc_v1;
    if (b->bc_v2 >= 0) { e.op2 = epi_code(b->bc.op2); e.v2_first = b->bc.v2_first; v2 = b->bc_v2; }
    if (!e.op1 || (v2 >= 0 && !e.op2)) return;
    e.hswish = b->bc.hswish;
    out = b->bc_out >= 0 ? b->bc_out : rb->out[0];
  } else if (b->kind == K_XNN && rb->op == HR_OP_HARDSWISH && hr__k_hswish_ok()) {
    if (p->vals[rb->in[0]].root != p->vals[ra->out[0]].root) return;
    e.hswish = 1;
    out = rb->out[0];
  } else {
    return;
  }
  for (int q = 0; q < 2; q++) {
    int v = q ? v2 : v1;
    if (v < 0) continue;
    const hr__tensor *vt = &p->vals[v].t;
    if (vt->dt != HR_DT_FLOAT || hr__numel(vt) != C || (!is_const(s, v) && !dense_float(s, v, C)) || !apart(s, out, v)) return;
  }
  if (hr__numel(&p->vals[out].t) != n || !dense_float(s, out, n) || !apart(s, out, ra->in[0])) return;
  a->dwe = e;
  a->dw_out = out; a->dw_v1 = v1; a->dw_v2 = v2;
  free(b->bvec);
  b->bvec = NULL;
  b->kind = K_FUSED;
}

/* A Mean over the height and width of one NHWC float image: our kernel (hr__k_gap), over the
 * pool by channel blocks (XNNPACK's global average pooling runs a batch of one on one thread). */
static int gap_fits(hr_session *s, const hr__rop *r) {
  xdesc d;
  if (r->op != HR_OP_MEAN || !describe_xnn(s, r, &d) || d.xk != X_GAP || d.n != 1) return 0;
  const hr__plan *p = s->plan;
  return p->vals[r->in[0]].t.dt == HR_DT_FLOAT && p->vals[p->vals[r->in[0]].root].storage != S_SRC &&
         hr__numel(&p->vals[r->out[0]].t) == (int64_t)d.ch;
}

/* The guided filter's A and b are the alpha's planes (the fused group made alone: fgflr1), not
 * 4-channel images */
static int ab_planes(const hr_session *s, const hr__exec *ex) {
  const int l = s->plan->fgf_lr.last;
  return s->plan->fgf_lr.first >= 0 && l >= 0 && l < ex->n && ex->k[l].kind == K_FGF_LR && ex->k[l].lr.alpha_only;
}
int hr__exec_ab_planes(const hr_session *s) { return s->bimpl && s->bk == &hr__backend_cpu && ab_planes(s, s->bimpl); }

int64_t hr__exec_table_bytes(int n_ops) { return (int64_t)(sizeof(hr__exec) + sizeof(kern) * ((size_t)n_ops + 1) + sizeof(opick) * (size_t)n_ops); }

/* Whether op i's pool is worth measuring: it runs on a kernel that takes the op's pool (kern.pool),
 * and is small enough that the other mode's runs cost little (a 2-thread run of an op at the bound
 * alone: ~0.3 ms more on this project's machines). */
static int pick_candidate(const hr_session *s, const kern *k, const hr__rop *r) {
  if (r->dead) return 0;
  switch (k->kind) {
    case K_NOP: case K_FUSED: case K_FGF: case K_SRC_RESIZE: case K_REF: return 0;
    default: break;
  }
  return r->flops <= 24e6 && hr__numel(&s->plan->vals[r->out[0]].t) <= (1 << 19);
}

static float pick_med(const float *v) {   /* the median of PICK_N (3) */
  const float a = v[0], b = v[1], c = v[2];
  return a < b ? (b < c ? b : a < c ? c : a) : (a < c ? a : b < c ? c : b);
}

/* Op i's pool for this run (other: 1 when the run is one of the other mode's), and its account. */
static pthreadpool_t pick_pool(hr_session *s, hr__exec *ex, int i, int *other) {
  kern *k = &ex->k[i];
  opick *o = &ex->pk[i];
  /* every third run, or every run once the rule's mode has its runs */
  *other = o->n[1] < PICK_N && ((o->runs + i) % 3 == 0 || o->n[0] >= PICK_N);
  return *other ? (k->pool ? NULL : s->pool) : k->pool;
}
static void pick_account(hr_session *s, hr__exec *ex, int i, int other, double ms) {
  opick *o = &ex->pk[i];
  kern *k = &ex->k[i];
  o->runs++;
  if (o->runs <= 1) return;   /* the first run carries first-touch costs */
  if (o->n[other] < PICK_N) o->ms[other][o->n[other]++] = (float)ms;
  if (o->n[0] < PICK_N || o->n[1] < PICK_N) return;
  o->state = 2;
  if (pick_med(o->ms[1]) < PICK_GAIN * pick_med(o->ms[0])) k->pool = k->pool ? NULL : s->pool;
}

/* A developer switch set to "0" (HR_EXEC_FUSE, HR_CONV_PW, HR_OP_POOL, ...): the feature off. */
static int switch_off(const char *name) {
  const char *e = getenv(name);
  return e && !strcmp(e, "0");
}

/* The ranges whose runs may leave the pool out (tadapt.h): the whole plan, and the tail mode's
 * frame and network parts. None when the caller fixed the thread count or there is no pool.
 * HR_THREAD_FALLBACK (developer switch): 0 never, "alternate" every other run alone, "alone"
 * always alone (the tests compare these with the pool, bit for bit). */
static void init_ranges(hr_session *s, hr__exec *ex) {
  const char *e = getenv("HR_THREAD_FALLBACK");
  int force = e && !strcmp(e, "alternate") ? 1 : e && !strcmp(e, "alone") ? 2 : 0;
  ex->n_tr = 0;
  if (!s->pool || (s->p.threads_fixed && !force) || (e && !strcmp(e, "0"))) return;
  hr__split_info si;
  int rg[3][2] = {{0, ex->n}}, nr = 1;
  if (hr__split_plan_query(s->plan, &si)) {
    rg[1][0] = 0; rg[1][1] = si.src_end;
    rg[2][0] = si.src_end; rg[2][1] = si.tail;
    nr = 3;
  }
  for (int i = 0; i < nr; i++) {
    ex->tr[i].i0 = rg[i][0]; ex->tr[i].i1 = rg[i][1];
    hr__tadapt_init(&ex->tr[i].a, force);
  }
  ex->n_tr = nr;
}

/* Which of ex->tr is the range [i0, i1), or -1 when that range does not adapt. */
static int range_at(const hr__exec *ex, int i0, int i1) {
  for (int i = 0; i < ex->n_tr; i++)
    if (ex->tr[i].i0 == i0 && ex->tr[i].i1 == i1) return i;
  return -1;
}

int hr__exec_threads(const hr__exec *ex, int i0, int i1) {
  int i = range_at(ex, i0, i1);
  return i < 0 ? 0 : ex->tr[i].threads;
}

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
  /* HR_EXEC_FUSE=0 (a developer switch, test_exec_fuse): every op on its own kernel, as the plan
   * lists them (XNNPACK's or the reference's), for comparison with the fused engine. */
  int fuse = !switch_off("HR_EXEC_FUSE");
  if (s->p.backend == HR_BACKEND_XNNPACK && fuse) {
    for (int i = 0; i < ex->n; i++) i += fuse_tanh_gru(s, ex, i) ? 2 : 0;
    for (int i = 0; i < ex->n; i++) i += fuse_gru_gates(s, ex, i) ? 4 : 0;
    st = fuse_fgf_lr(s, ex);
    for (int i = 0; i + 1 < ex->n && !st; i++) i += fuse_split_cat(s, ex, i);
  }
  for (int i = 0; i < ex->n && !st; i++) {
    const hr__rop *r = &s->plan->rops[i];
    kern *k = &ex->k[i];
    k->reads_src = reads_src(s, r);
    /* On a small machine, waking worker threads costs more than tiny ops take: run them inline. */
    k->pool = (r->flops > 4e6 || hr__numel(&s->plan->vals[r->out[0]].t) > 65536) ? s->pool : NULL;
    if (r->dead) { k->kind = K_NOP; continue; }
    if (k->kind == K_FUSED || k->kind == K_TANH_GRU || k->kind == K_FGF_LR || k->kind == K_GATES || k->kind == K_SPLIT_CAT) continue;
    if (r->op == HR_OP_FGF_TAIL) {
      const hr__tensor *A = &s->plan->vals[r->in[0]].t, *o = &s->plan->vals[r->out[0]].t;
      int chunks = s->pool ? (int)pthreadpool_get_threads_count(s->pool) * 4 : 1;
      k->kind = K_FGF;
      st = hr__fgf_init(&k->fgf, (int)A->dims[1], (int)A->dims[2], (int)o->dims[1], (int)o->dims[2], chunks, r->n_out > 1);
      k->fgf.alpha_only_coef = ab_planes(s, ex);   /* fgflr1 made the alpha's planes alone */
      continue;
    }
    if (r->op == HR_OP_SRC_RESIZE) {
      const hr__tensor *o = &s->plan->vals[r->out[0]].t;
      k->kind = K_SRC_RESIZE;
      st = hr__ingest_plan_init(&k->ing, s->plan->width, s->plan->height, (int)o->dims[2], (int)o->dims[1]);
      /* one row range per thread (at 4x down no input row is shared between output rows) */
      k->ing_parts = s->pool ? (int)pthreadpool_get_threads_count(s->pool) : 1;
      if (k->ing_parts > (int)o->dims[1]) k->ing_parts = (int)o->dims[1];
      if (!st && k->ing_parts > 1) {
        k->ing_mem = malloc(sizeof(float) * 6 * (size_t)k->ing.out_w_pad * (size_t)k->ing_parts + 64);
        if (!k->ing_mem) st = HR_ENOMEM;
        else k->ing_rows = (float *)(((uintptr_t)k->ing_mem + 63) & ~(uintptr_t)63);
      }
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
      if (r->op == HR_OP_SIGMOID && hr__wino_ok() && dense_float(s, r->in[0], hr__numel(&s->plan->vals[r->out[0]].t)) &&
          dense_float(s, r->out[0], hr__numel(&s->plan->vals[r->out[0]].t)) && same_or_apart(s, r->out[0], r->in[0])) {
        /* ours (hr__k_sigmoid) where the Winograd runs (a CPU with FMA), with and without HR_EXEC_FUSE:
         * its epilogue (fuse_wino_epi) makes the same bits */
        k->kind = K_SIGMOID;
        continue;
      }
      if (gap_fits(s, r)) { /* with and without HR_EXEC_FUSE: the two engines compare bit for bit */
        k->kind = K_GAP;
        k->pool = hr__numel(&s->plan->vals[r->in[0]].t) > 65536 ? s->pool : NULL; /* by what it reads */
        const hr__tensor *xt = &s->plan->vals[r->in[0]].t;
        /* in runs of pixels, each its own tasks: 45x60x120 on 16 threads was 8 tasks of 2700 pixels,
         * 0.040 ms against 0.028 on one thread (the H100 machine's host), 0.018 in runs; the 9 means
         * 0.30-0.35 -> 0.24 ms a frame there, and on 2 vCPUs (the EPYC VM, 2 pairs) the element-wise
         * class 1.59-1.61 -> 1.39-1.41 ms. HR_GAP_RUNS=0: one run (as before 2026-12-07, for A/B) */
        k->gruns = switch_off("HR_GAP_RUNS") ? 1 : hr__k_gap_chunks(xt->dims[1] * xt->dims[2]);
        k->gpart_n = (int64_t)k->gruns * xt->dims[3];
        if (!(k->gpart = malloc(sizeof(float) * (size_t)k->gpart_n))) st = HR_ENOMEM;
        continue;
      }
      if (fuse && r->op == HR_OP_AVGPOOL && s->plan->vals[r->out[0]].t.dt == HR_DT_FLOAT && s->plan->vals[r->out[0]].t.rank == 4) {
        k->kind = K_AVGPOOL;
        continue;
      }
      if (fuse && mean_innermost(s, r)) { k->kind = K_MEAN_C; continue; }
      if (fuse && (k->bc_v = bcast_operand(s, r)) >= 0) {
        int64_t C = s->plan->vals[r->out[0]].t.dims[s->plan->vals[r->out[0]].t.rank - 1];
        k->kind = K_BCAST;
        /* few channels: the operands repeated to blocks of 32 pixels (made per run); else read as they are */
        k->bc = (hr__k_bcast){C < 64 ? C * 32 : C, (int)r->op, k->bc_v == 0, 0, 0, 0};
        k->bc_x = r->in[1 - k->bc_v]; k->bc_v1 = r->in[k->bc_v]; k->bc_v2 = -1; k->bc_out = -1;
        if (C < 64) {
          k->bvec = malloc(sizeof(float) * 2 * (size_t)k->bc.L);
          if (!k->bvec) st = HR_ENOMEM;
        }
        continue;
      }
      if (fuse && binary_same(s, r)) { k->kind = K_BINARY; continue; }
      if (fuse && fuse_resize_cat(s, ex, i)) {
        st = hr__resize_init(&k->rs, (int)s->plan->vals[r->in[0]].t.dims[2], (int)s->plan->vals[r->out[0]].t.dims[2]);
        k->rs.oh = (int)k->crop_h;
        continue;
      }
      if (r->op == HR_OP_RESIZE_BILINEAR && ra->half_pixel && !ra->align_corners) {
        k->kind = K_RESIZE;
        st = hr__resize_init(&k->rs, (int)s->plan->vals[r->in[0]].t.dims[2], (int)s->plan->vals[r->out[0]].t.dims[2]);
        continue;
      }
      if (dwconv_fits(s, r, &k->xd)) {
        const xdesc *d = &k->xd;
        const hr__tensor *x = &s->plan->vals[r->in[0]].t, *o = &s->plan->vals[r->out[0]].t;
        k->kind = K_DWCONV;
        k->dw_out = k->dw_v1 = k->dw_v2 = -1;
        st = hr__dwconv_init(&k->dw, d->w, d->b, (int)x->dims[1], (int)x->dims[2], (int)x->dims[3], (int)o->dims[1], (int)o->dims[2],
                             (int)d->kh, (int)d->sh, (int)d->dh, (int)d->pt, (int)d->pl, d->lo, d->hi);
        continue;
      }
      if (hr__plan_wino(s->plan, i) && describe_xnn(s, r, &k->xd) && apart(s, r->out[0], r->in[0])) {
        /* with and without HR_EXEC_FUSE (the two engines compare bit for bit); the transformed
         * weights shared by the model's sessions and plans through its kernel cache */
        const xdesc *d = &k->xd;
        wino_key key;
        memset(&key, 0, sizeof key);
        memcpy(key.tag, "wino4x4", 8);
        key.w = d->w; key.b = d->b; key.C = (int64_t)d->gic; key.K = (int64_t)d->goc;
        void *blk = NULL;
        st = hr__kcache_acquire_blob(s->m->kcache, &key, sizeof key, (size_t)hr__wino_bytes(key.C, key.K), wino_fill, &blk, &k->share,
                                     &k->shared_bytes);
        if (st) break;
        k->kind = K_WINO;
        hr__wino_set(&k->wn, blk, (int)d->gic, (int)d->goc, d->lo, d->hi);
        continue;
      }
      if (create_xnn(s, r, k, fuse && conv_hswish(s, i) ? hs_bands(s, i) : 0, &st)) {
        if (!st && !k->n_band && matvec_fits(s, r, &k->xd)) {
          const xdesc *d = &k->xd;
          k->mv = (hr__matvec){d->w, d->b, (int)d->gic, (int)d->goc, d->lo, d->hi};
          k->mv_on = 1;
          k->pool = s->pool;
        }
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
  for (int i = 0; i + 1 < ex->n && !st; i++) fuse_bcast_pair(s, ex, i);
  for (int i = 0; i + 1 < ex->n && !st; i++) fuse_bcast_hswish(s, ex, i);
  if (fuse && !switch_off("HR_DW_EPI"))
    for (int i = 0; i + 1 < ex->n && !st; i++) fuse_dw_epi(s, ex, i);
  for (int i = 0; fuse && i + 1 < ex->n && !st; i++) fuse_conv_hswish(s, ex, i);
  if (fuse && !switch_off("HR_CONV_PW"))
    for (int i = 0; i + 1 < ex->n && !st; i++) fuse_conv_pw(s, ex, i);
  if (fuse && !switch_off("HR_RESIZE_CONV"))
    for (int i = 0; i + 1 < ex->n && !st; i++) fuse_resize_conv(s, ex, i);
  if (fuse && !switch_off("HR_WINO_EPI"))
    for (int i = 0; i + 2 < ex->n && !st; i++) fuse_wino_epi(s, ex, i);
  if (fuse && !switch_off("HR_WINO_PW"))
    for (int i = 0; i + 1 < ex->n && !st; i++) fuse_wino_pw(s, ex, i);
  if (fuse && !switch_off("HR_WINO_SPLIT"))
    for (int i = 0; i + 1 < ex->n && !st; i++) fuse_wino_split(s, ex, i);
  if (fuse && !switch_off("HR_RESIZE_WINO"))
    for (int i = 0; i + 1 < ex->n && !st; i++) fuse_resize_wino(s, ex, i);
  if (fuse && !switch_off("HR_PWG"))   /* last: the fusions above take some pointwise ones first */
    for (int i = 0; i < ex->n && !st; i++) use_pwg(s, ex, i);

  /* the Winograd ops' one scratch */
  int64_t wino_floats = 0;
  for (int i = 0; i < ex->n; i++)
    if (ex->k[i].kind == K_WINO && hr__wino_scratch_floats(ex->k[i].wn.C, ex->k[i].wn.K) > wino_floats)
      wino_floats = hr__wino_scratch_floats(ex->k[i].wn.C, ex->k[i].wn.K);
  if (!st && wino_floats) {
    ex->wino_slots = s->pool ? (int)pthreadpool_get_threads_count(s->pool) : 1;
    if (ex->wino_slots > 64) ex->wino_slots = 64;
    ex->wino_mem = malloc((size_t)wino_floats * sizeof(float) * (size_t)ex->wino_slots + 64);
    if (!ex->wino_mem) st = HR_ENOMEM;
    else ex->wino = (float *)(((uintptr_t)ex->wino_mem + 63) & ~(uintptr_t)63);
  }
  hr__xnn_account_end();
  s->kernel_shared_bytes = shared_kernel_bytes(ex);
  if (ex->wino) s->kernel_bytes += wino_floats * (int64_t)sizeof(float) * ex->wino_slots + 64;
  s->kernel_bytes += hr__exec_table_bytes(ex->n);
  for (int i = 0; i < ex->n; i++)
    s->kernel_bytes += (int64_t)ex->k[i].lr.mem_bytes + (ex->k[i].bvec ? (int64_t)(sizeof(float) * 2 * (size_t)ex->k[i].bc.L) : 0) +
                       (ex->k[i].gpart ? (int64_t)sizeof(float) * ex->k[i].gpart_n : 0) +
                       (int64_t)(sizeof(xband) * (size_t)ex->k[i].n_band) + (ex->k[i].rc ? (int64_t)sizeof(rc_fuse) : 0) +
                       (int64_t)(ex->k[i].fgf.mem_bytes + ex->k[i].ing.mem_bytes) +
                       (ex->k[i].ing_mem ? (int64_t)(sizeof(float) * 6 * (size_t)ex->k[i].ing.out_w_pad * (size_t)ex->k[i].ing_parts + 64) : 0) + (ex->k[i].rs.x0 ? ex->k[i].rs.ow * 12 : 0) +
                       (ex->k[i].wexp ? (int64_t)hr__numel(&s->plan->vals[s->plan->rops[i].in[1]].t) / s->plan->vals[s->plan->rops[i].in[0]].t.dims[3] *
                                            s->plan->vals[s->plan->rops[i].out[0]].t.dims[2] * s->plan->vals[s->plan->rops[i].in[0]].t.dims[3] * 4 : 0);
  if (st) { *out = ex; hr__exec_destroy(ex); *out = NULL; return st; }
  init_ranges(s, ex);
  ex->park = !switch_off("HR_POOL_PARK");
  if (s->pool && pthreadpool_get_threads_count(s->pool) > 1 && !switch_off("HR_OP_POOL")) {
    if (!(ex->pk = calloc((size_t)ex->n, sizeof *ex->pk))) { hr__exec_destroy(ex); return HR_ENOMEM; }
    for (int i = 0; i < ex->n; i++) ex->pk[i].state = (uint8_t)pick_candidate(s, &ex->k[i], &s->plan->rops[i]);
  }
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
    free(ex->k[i].rc);
    free(ex->k[i].rw);
    free(ex->k[i].wcp);
    hr__fgf_free(&ex->k[i].fgf);
    hr__ingest_plan_free(&ex->k[i].ing);
    free(ex->k[i].ing_mem);
    hr__resize_free(&ex->k[i].rs);
    free(ex->k[i].wexp);
    free(ex->k[i].bvec);
    free(ex->k[i].gpart);
    hr__fgf_lr_free(&ex->k[i].lr);
  }
  free(ex->k);
  free(ex->pk);
  free(ex->wino_mem);
  free(ex);
}

static double now_us(void) {
  struct timespec ts; clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* The source resize in row ranges over the pool (hr__ingest_resample_part), each with its scratch. */
typedef struct src_job { const kern *k; const hr_frame *f; float *dst; ptrdiff_t stride; } src_job;
static void src_part(void *ctx, size_t part) {
  const src_job *j = ctx;
  hr__ingest_resample_part(&j->k->ing, j->f, j->dst, j->stride, (int)part, j->k->ing_parts,
                           j->k->ing_rows + 6 * (size_t)j->k->ing.out_w_pad * part);
}

static hr_status run_ops(hr_session *s, hr__exec *ex, int i0, int i1, int alone);

/* The pool's threads asleep once a run is over. pthreadpool's workers spin after each call made
 * without PTHREADPOOL_FLAG_YIELD_WORKERS, for a count of pause instructions: on this project's
 * 2-vCPU VM a 2-thread pool burnt 14.5-18.5 ms of CPU while its caller slept 100 ms after one call,
 * 0.1-1.5 ms after a call with the flag (test_session_threads: 20-22 ms after a push, 0.1-0.6 with
 * the park). Between a run's ops that spin is what makes the next op start at once; after the run it
 * takes a CPU from whatever the process does next: the tail mode's full-resolution tail on the
 * caller's thread, the application's own work between frames. One more dispatch a run (a no-op task
 * a thread), and the next run's first op wakes the workers from a futex: back-to-back frames
 * (`bench`, 2 threads, r0.25 and r0.133, ABBA) showed no difference. HR_POOL_PARK=0: off. */
static void nop_task(void *ctx, size_t i) { (void)ctx; (void)i; }
static void park_pool(hr__exec *ex, pthreadpool_t pool) {
  if (pool && ex->park) pthreadpool_parallelize_1d(pool, nop_task, NULL, pthreadpool_get_threads_count(pool), PTHREADPOOL_FLAG_YIELD_WORKERS);
}

void hr__exec_park(hr_session *s) {
  if (s->bk == &hr__backend_cpu && s->bimpl) park_pool(s->bimpl, s->pool);
}

hr_status hr__exec_run(hr_session *s, hr__exec *ex) { return hr__exec_run_range(s, ex, 0, ex->n); }

hr_status hr__exec_run_range(hr_session *s, hr__exec *ex, int i0, int i1) {
  int ri = range_at(ex, i0, i1);
  if (ri < 0) {
    hr_status st = run_ops(s, ex, i0, i1, 0);
    park_pool(ex, s->pool);
    return st;
  }
  trange *tr = &ex->tr[ri];
  const int alone = hr__tadapt_serial(&tr->a);
  const double p0 = s->gate ? s->gate->paused_ms : 0;
  double t0 = now_us(), d0 = hr__thread_delay_ms();
  hr_status st = run_ops(s, ex, i0, i1, alone);
  double t1 = now_us(), d1 = d0 >= 0 ? hr__thread_delay_ms() : -1;
  if (!alone) park_pool(ex, s->pool);   /* after the run's time: it is the next one's first op's concern */
  const double paused = s->gate ? s->gate->paused_ms - p0 : 0;   /* another thread had the pool (hr__op_gate) */
  hr__tadapt_update(&tr->a, (t1 - t0) / 1e3 - paused, d0 >= 0 && d1 >= 0 ? d1 - d0 : -1);
  tr->threads = alone ? 1 : (int)pthreadpool_get_threads_count(s->pool);
  return st;
}

hr_status hr__exec_run_range_alone(hr_session *s, hr__exec *ex, int i0, int i1) { return run_ops(s, ex, i0, i1, 1); }

/* Ops [i0, i1); alone: the pool left out (each op's tasks run one after another on this thread). */
static hr_status run_ops(hr_session *s, hr__exec *ex, int i0, int i1, int alone) {
  const hr__plan *p = s->plan;
  pthreadpool_t spool = alone ? NULL : s->pool;
  for (int i = i0; i < i1; i++) {
    if (s->gate && __atomic_load_n(&s->gate->want, __ATOMIC_ACQUIRE)) s->gate->yield(s->gate);   /* hr__op_gate */
    const hr__rop *r = &p->rops[i];
    kern *k = &ex->k[i];
    const int pick = !alone && ex->pk && ex->pk[i].state == 1;
    int other = 0;
    pthreadpool_t kp = alone ? NULL : pick ? pick_pool(s, ex, i, &other) : k->pool;
    double t0 = s->profiling || pick ? now_us() : 0;
    hr__tensor in[HR_ROP_MAX_IN], out[HR_MAX_OUT];
    const hr__tensor *inp[HR_ROP_MAX_IN];
    switch (k->kind) {
      case K_NOP: case K_FUSED: break;
      case K_PWG: {
        hr__pwg g = k->pg;
        g.x = view(s, r->in[0]).data;
        g.y = view(s, k->pg_out).data;
        run_pwg(kp, &g);
        break;
      }
      case K_XNN:
        if (k->reads_src && (!k->bound || k->last_src != s->src_ptr)) {
          k->bound = !setup_xnn(s, r, k);
          k->last_src = s->src_ptr;
          if (!k->bound) return HR_ENOTSUP; /* not expected: only the pointer changed, not the shapes */
        }
        if (k->mv_on) { /* our kernel over 4 threads or more, else XNNPACK's on this thread (matvec_fits) */
          if (kp) hr__k_matvec(kp, &k->mv, view(s, r->in[0]).data, view(s, r->out[0]).data);
          else run_xnn(k, NULL);
          break;
        }
        if (k->rc) bind_cat_rows(s, &k->rc->cat);   /* fuse_resize_conv */
        run_xnn(k, kp);
        break;
      default:
        for (int j = 0; j < r->n_in; j++) {
          in[j] = view(s, r->in[j]); inp[j] = &in[j];
          if (!in[j].data && s->plan->vals[s->plan->vals[r->in[j]].root].storage == S_SRC) in[j].data = (void *)s->cur.planes[0];
        }
        for (int j = 0; j < r->n_out; j++) out[j] = view(s, r->out[j]);
        switch (k->kind) {
          case K_CONCAT: hr__k_concat(kp, inp, r->n_in - 1, (int)((int32_t *)in[r->n_in - 1].data)[0], &out[0], r->in_place_mask); break;
          case K_SPLIT: {
            int ax = r->op == HR_OP_SPLIT ? ((int32_t *)in[0].data)[0] : ((int32_t *)in[2].data)[0];
            hr__k_split(kp, r->op == HR_OP_SPLIT ? &in[1] : &in[0], ax, out, r->n_out);
            break;
          }
          case K_SLICE:
            if (r->op == HR_OP_PAD) hr__k_pad(kp, &in[0], in[1].data, &out[0]);
            else hr__k_slice(kp, &in[0], in[1].data, &out[0]);
            break;
          case K_TANH: hr__k_tanh(kp, in[0].data, out[0].data, hr__numel(&out[0])); break;
          case K_SIGMOID: hr__k_sigmoid(kp, in[0].data, out[0].data, hr__numel(&out[0])); break;
          case K_TANH_GRU:
            hr__k_tanh_gru(kp, view(s, k->fuse_x).data, view(s, k->fuse_m).data, view(s, k->fuse_a).data, out[0].data,
                           hr__numel(&out[0]));
            break;
          case K_AVGPOOL: hr__k_avgpool(kp, r->node ? &r->node->a : &r->syn.a, &in[0], &out[0]); break;
          case K_MEAN_C: hr__k_mean_c(kp, in[0].data, out[0].data, hr__numel(&out[0]), in[0].dims[in[0].rank - 1]); break;
          case K_BCAST: {
            /* the per-channel operands repeated to a block (they may be computed values: every frame) */
            const float *vq[2] = {view(s, k->bc_v1).data, k->bc_v2 >= 0 ? view(s, k->bc_v2).data : NULL};
            for (int q = 0; q < 2 && k->bvec; q++) {
              if (!vq[q]) break;
              int64_t C = hr__numel(&s->plan->vals[q ? k->bc_v2 : k->bc_v1].t);
              for (int64_t e = 0; e < k->bc.L; e++) k->bvec[q * k->bc.L + e] = vq[q][e % C];
              vq[q] = k->bvec + q * k->bc.L;
            }
            hr__k_bcast_c(kp, &k->bc, view(s, k->bc_x).data, vq[0], vq[1], k->bc_out >= 0 ? view(s, k->bc_out).data : out[0].data,
                          hr__numel(&out[0]));
            break;
          }
          case K_SPLIT_CAT: {
            hr__k_pxcopy c[2 * HR__CAT_MAX];
            const hr__tensor *xt = &p->vals[k->sc_x].t;
            const int nc = split_cat_copies(s, k, c, NULL);
            hr__k_pixel_copies(kp, c, nc, xt->dims[1] * xt->dims[2]);
            break;
          }
          case K_BINARY: hr__k_binary(kp, (int)r->op, in[0].data, in[1].data, out[0].data, hr__numel(&out[0])); break;
          case K_GATES: {
            hr__k_gates g = k->gt;
            g.rz = view(s, k->gt_v[0]).data; g.h = view(s, k->gt_v[1]).data; g.h2 = view(s, k->gt_v[2]).data;
            g.b = view(s, k->gt_v[3]).data; g.z = view(s, k->gt_v[4]).data; g.omzh = view(s, k->gt_v[5]).data;
            g.cat = view(s, k->gt_v[6]).data;
            hr__k_gru_gates(kp, &g);
            break;
          }
          case K_FGF_LR: {
            const hr__fgf_lr *f = &s->plan->fgf_lr;
            hr__k_fgf_lr(kp, &k->lr, view(s, f->y).data, view(s, f->src).data, view(s, f->A).data, view(s, f->b).data);
            break;
          }
          case K_RESIZE_CAT: {
            hr__k_cat_src cs[HR__CAT_MAX];
            cat_sources(s, k, cs);
            if (k->crop_h) out[0] = view(s, k->crop_out);
            hr__k_resize_cat(kp, &k->rs, cs, k->n_src, &out[0]);
            break;
          }
          case K_FGF:
            if (s->alpha8 && !s->alpha_buf && r->n_out == 1 && fgf_is_alpha(s->plan, r->out[0])) {
              /* params.alpha_u8: the tail makes the bytes itself, the float matte is never stored */
              s->alpha8_bad = hr__fgf_run_u8(&k->fgf, &s->cur, inp[0]->data, inp[1]->data, s->alpha8, r->syn.a.keep_dims, spool,
                                             &s->alpha8_bsum);
              s->alpha8_made = 1;
            } else {
              hr__k_fgf_tail(s, spool, &k->fgf, r, inp, out, r->n_out);
            }
            break;
          case K_DW1D: {
            const hr__attrs *ra = r->node ? &r->node->a : &r->syn.a;
            hr__k_dw1d(kp, ra, &in[0], &in[1], ra->fused_bias ? &in[2] : NULL, &out[0], k->wexp);
            break;
          }
          case K_GAP: {
            const hr__tensor *xt = &p->vals[r->in[0]].t;
            hr__k_gap(kp, in[0].data, out[0].data, xt->dims[1] * xt->dims[2], xt->dims[3], k->gruns, k->gpart);
            break;
          }
          case K_WINO: {
            const hr__tensor *x = &in[0];
            if (k->wepi.row == hr__epi_gates) {
              hr__k_gates *g = &k->wgt;
              g->h = view(s, k->gt_v[1]).data; g->h2 = view(s, k->gt_v[2]).data; g->b = view(s, k->gt_v[3]).data;
              g->z = view(s, k->gt_v[4]).data; g->omzh = view(s, k->gt_v[5]).data; g->cat = view(s, k->gt_v[6]).data;
            } else if (k->wepi.row == hr__epi_tanh_gru) {
              k->wtg.m = view(s, k->wtg_v[0]).data; k->wtg.a = view(s, k->wtg_v[1]).data; k->wtg.y = view(s, k->wtg_v[2]).data;
            } else if (k->wepi.row == hr__epi_pw_row) {
              k->wpw.y = view(s, k->wpw_v).data;
            } else if (k->wepi.row == hr__epi_copies) {
              k->wcp->nc = split_cat_copies(s, k->wsc, k->wcp->c, k->wcp->off);
              for (int q = 0; q < k->wcp->nc; q++)
                if (k->wcp->off[q] >= 0) k->wcp->c[q].src = NULL;   /* from the row */
            }
            if (k->rw) { /* fuse_resize_wino */
              bind_cat_rows(s, &k->rw->cat);
              k->rw->pro.ring = k->rw->cat.o.data;
            }
            hr__k_wino_pro(kp, &k->wn, x->data, k->rw ? &k->rw->pro : NULL, out[0].data, (int)x->dims[1], (int)x->dims[2], ex->wino,
                           ex->wino_slots, k->wepi.row ? &k->wepi : NULL);
            break;
          }
          case K_DWCONV:
            if (k->dw_out >= 0) {
              k->dwe.v1 = k->dw_v1 >= 0 ? view(s, k->dw_v1).data : NULL;
              k->dwe.v2 = k->dw_v2 >= 0 ? view(s, k->dw_v2).data : NULL;
              hr__k_dwconv(kp, &k->dw, in[0].data, view(s, k->dw_out).data, &k->dwe);
            } else {
              hr__k_dwconv(kp, &k->dw, in[0].data, out[0].data, NULL);
            }
            break;
          case K_RESIZE: hr__k_resize(kp, &k->rs, &in[0], &out[0], r->out_c_off, r->out_c_total); break;
          case K_SRC_RESIZE:
            if (k->ing_parts > 1) {
              src_job sj = {k, &s->cur, out[0].data, out[0].dims[2] * 3};
              pthreadpool_parallelize_1d(spool, src_part, &sj, (size_t)k->ing_parts, 0);
            } else {
              hr__ingest_resample_rgbf(&k->ing, &s->cur, out[0].data, out[0].dims[2] * 3);
            }
            break;
          default: hr__op_exec_ref(r->node ? r->node : &r->syn, inp, r->n_in, out, r->n_out); break;
        }
    }
    if (s->profiling || pick) {
      const double us = now_us() - t0;
      if (s->profiling) s->op_us[i] = us;
      if (pick) pick_account(s, ex, i, other, us / 1e3);
    }
  }
  return HR_OK;
}

const char *hr_session_op_detail(const hr_session *s, int i) {
  static __thread char buf[256];
  if (!s || !s->plan || i < 0 || i >= s->plan->n_rops) return NULL;
  static const char *kn[] = {"ref", "xnn", "concat", "split", "slice", "tanh", "meanc", "fgf", "nop", "srcresize", "dw1d", "resize",
                             "avgpool", "bcast", "tanhgru", "fused", "resizecat", "fgflr", "grugates", "gap", "dwconv", "binary", "splitcat", "wino", "sigmoid", "pwg"};
  const hr__rop *r = &s->plan->rops[i];
  const hr__tensor *o = &s->plan->vals[r->out[0]].t, *x = &s->plan->vals[r->in[0]].t;
  const kern *k = s->bk == &hr__backend_cpu ? &((const hr__exec *)s->bimpl)->k[i] : NULL;
  const char *kname = !k                                    ? s->bk->name
                      : k->kind == K_DWCONV && k->dw_out >= 0 ? "dwepi"
                      : k->kind == K_RESIZE_CAT && k->crop_h  ? "resizecrop"
                      : k->kind == K_XNN && k->rc             ? (k->rc->cat.rk->crop_h ? "xnnrccrop" : "xnnrc")
                      : k->kind == K_PWG                      ? (k->pg.hs ? "pwghswish" : "pwg")
                      : k->kind == K_XNN && k->hs_on          ? "xnnhswish"
                      : k->kind == K_XNN && k->pw             ? "xnnpw"
                      : k->kind == K_XNN && k->mv_on          ? "xnnmatvec"
                      : k->kind == K_FGF_LR && k->lr.alpha_only ? "fgflr1"
                      : k->kind == K_WINO && k->rw            ? (k->rw->cat.rk->crop_h ? (k->wcp ? "winorccropsplit" : "winorccrop")
                                                                                   : (k->wcp ? "winorcsplit" : "winorc"))
                      : k->kind == K_WINO && k->wcp           ? "winosplit"
                      : k->kind == K_WINO && k->wepi.row == hr__epi_gates ? "winogates"
                      : k->kind == K_WINO && k->wepi.row == hr__epi_tanh_gru ? "winotgru"
                      : k->kind == K_WINO && k->wepi.row == hr__epi_pw_row ? "winopw"
                                                              : kn[k->kind];
  /* a measured pool choice (opick): @1 the calling thread, @pool the workers */
  const opick *pk = k && ((const hr__exec *)s->bimpl)->pk ? &((const hr__exec *)s->bimpl)->pk[i] : NULL;
  snprintf(buf, sizeof buf, "%s%s in[%lld,%lld,%lld,%lld] out[%lld,%lld,%lld,%lld] %s", kname,
           pk && pk->state == 2 ? (k->pool ? "@pool" : "@1") : "",
           (long long)x->dims[0], (long long)x->dims[1], (long long)x->dims[2], (long long)x->dims[3],
           (long long)o->dims[0], (long long)o->dims[1], (long long)o->dims[2], (long long)o->dims[3],
           r->node ? r->node->name + (strlen(r->node->name) > 60 ? strlen(r->node->name) - 60 : 0) : "");
  return buf;
}
