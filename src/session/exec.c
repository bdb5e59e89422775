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

typedef enum { K_REF = 0, K_XNN, K_CONCAT, K_SPLIT, K_SLICE, K_TANH, K_MEAN_C, K_FGF, K_NOP, K_SRC_RESIZE, K_DW1D, K_RESIZE } kkind;
typedef enum { X_CONV, X_DECONV, X_BINARY, X_UNARY, X_RESIZE, X_GAP, X_FC, X_AVGPOOL } xkind;

typedef struct kern {
  kkind kind;
  hr__fgf fgf;              /* K_FGF tables */
  hr__ingest_plan ing;      /* K_SRC_RESIZE: frame -> processing size */
  hr__resize rs;            /* K_RESIZE column taps */
  float *wexp;              /* K_DW1D weights expanded to the row width (VALID fast path) */
  pthreadpool_t pool;       /* NULL for ops too small to be worth waking the workers */
  xkind xk;
  xnn_operator_t op;
  int reads_src;            /* re-setup when the src pointer changes (zero-copy input) */
  const void *last_src;
} kern;

struct hr__exec {
  int n;
  kern *k;
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

/* Create the XNNPACK operator for rop r if one fits; returns 1 if created. */
static int create_xnn(hr_session *s, const hr__rop *r, kern *k, hr_status *st) {
  const hr__plan *p = s->plan;
  const hr__node *n = r->node ? r->node : &r->syn;
  const hr__attrs *a = &n->a;
  enum xnn_status xs = xnn_status_success;
  *st = HR_OK;
  switch (r->op) {
    case HR_OP_CONV2D: case HR_OP_FUSED_CONV2D: case HR_OP_DWCONV: case HR_OP_FUSED_DWCONV: {
      if (!is_const(s, r->in[1]) || (a->fused_bias && !is_const(s, r->in[2]))) return 0;
      const hr__tensor *x = &p->vals[r->in[0]].t, *w = &p->vals[r->in[1]].t;
      const hr__tensor *o = &p->vals[r->out[0]].t;
      int dw = r->op == HR_OP_DWCONV || r->op == HR_OP_FUSED_DWCONV;
      int KH = (int)w->dims[0], KW = (int)w->dims[1];
      int64_t C = x->dims[3], OC = o->dims[3];
      int64_t oh, ow; int pt, pl;
      hr__conv_geom(a->padding, a->explicit_pad + 2, x->dims[1], KH, a->strides[1], a->dilations[1], &oh, &pt);
      hr__conv_geom(a->padding, a->explicit_pad + 4, x->dims[2], KW, a->strides[2], a->dilations[2], &ow, &pl);
      int pb = (int)((oh - 1) * a->strides[1] + (int64_t)(KH - 1) * a->dilations[1] + 1 - x->dims[1] - pt);
      int pr = (int)((ow - 1) * a->strides[2] + (int64_t)(KW - 1) * a->dilations[2] + 1 - x->dims[2] - pl);
      if (pb < 0) pb = 0;
      if (pr < 0) pr = 0;
      float lo, hi; act_range(a->act, &lo, &hi);
      const float *bias = a->fused_bias ? p->vals[r->in[2]].t.data : NULL;
      const float *wt = p->vals[r->in[1]].t.data;
      if (dw) {
        int64_t M = w->dims[3];
        xs = xnn_create_convolution2d_nhwc_f32(pt, pr, pb, pl, KH, KW, a->strides[1], a->strides[2],
                                               a->dilations[1], a->dilations[2], (uint32_t)C, 1, (size_t)M,
                                               (size_t)C, (size_t)OC, wt, bias, lo, hi,
                                               XNN_FLAG_DEPTHWISE_CONVOLUTION, &k->op);
      } else {
        /* TF HWIO -> XNNPACK OHWI (packed by XNNPACK at create; the temporary goes right after) */
        float *t = malloc(sizeof(float) * (size_t)(KH * KW * C * OC));
        if (!t) { *st = HR_ENOMEM; return 0; }
        for (int64_t oc = 0; oc < OC; oc++)
          for (int64_t kk = 0; kk < KH * KW; kk++)
            for (int64_t c = 0; c < C; c++) t[(oc * KH * KW + kk) * C + c] = wt[(kk * C + c) * OC + oc];
        xs = xnn_create_convolution2d_nhwc_f32(pt, pr, pb, pl, KH, KW, a->strides[1], a->strides[2],
                                               a->dilations[1], a->dilations[2], 1, (size_t)C, (size_t)OC,
                                               (size_t)C, (size_t)OC, t, bias, lo, hi, 0, &k->op);
        free(t);
      }
      k->xk = X_CONV;
      break;
    }
    case HR_OP_DECONV2D: {
      if (!is_const(s, r->in[1])) return 0;
      const hr__tensor *w = &p->vals[r->in[1]].t, *x = &p->vals[r->in[2]].t, *o = &p->vals[r->out[0]].t;
      int KH = (int)w->dims[0], KW = (int)w->dims[1];
      int64_t OC = w->dims[2], IC = w->dims[3];
      int sh = a->strides[1], sw = a->strides[2];
      int64_t toth = (x->dims[1] - 1) * sh + KH - o->dims[1], totw = (x->dims[2] - 1) * sw + KW - o->dims[2];
      if (toth < 0 || totw < 0 || a->padding != HR_PAD_SAME) return 0;
      float *t = malloc(sizeof(float) * (size_t)(KH * KW * OC * IC));
      if (!t) { *st = HR_ENOMEM; return 0; }
      const float *wt = w->data;
      for (int64_t oc = 0; oc < OC; oc++)
        for (int64_t kk = 0; kk < KH * KW; kk++)
          for (int64_t ic = 0; ic < IC; ic++) t[(oc * KH * KW + kk) * IC + ic] = wt[(kk * OC + oc) * IC + ic];
      xs = xnn_create_deconvolution2d_nhwc_f32((uint32_t)(toth / 2), (uint32_t)(totw - totw / 2), (uint32_t)(toth - toth / 2),
                                               (uint32_t)(totw / 2), KH, KW, sh, sw, 1, 1, 1, (size_t)IC, (size_t)OC,
                                               (size_t)IC, (size_t)OC, t, NULL, -INFINITY, INFINITY, 0, &k->op);
      free(t);
      k->xk = X_DECONV;
      break;
    }
    case HR_OP_MUL: case HR_OP_ADD: case HR_OP_ADDV2: case HR_OP_SUB: case HR_OP_REALDIV:
    case HR_OP_MINIMUM: case HR_OP_MAXIMUM: {
      if (p->vals[r->out[0]].t.dt != HR_DT_FLOAT || p->vals[r->out[0]].t.rank > XNN_MAX_TENSOR_DIMS) return 0;
      switch (r->op) {
        case HR_OP_MUL: xs = xnn_create_multiply_nd_f32(-INFINITY, INFINITY, 0, &k->op); break;
        case HR_OP_SUB: xs = xnn_create_subtract_nd_f32(-INFINITY, INFINITY, 0, &k->op); break;
        case HR_OP_REALDIV: xs = xnn_create_divide_nd_f32(-INFINITY, INFINITY, 0, &k->op); break;
        case HR_OP_MINIMUM: xs = xnn_create_minimum_nd_f32(0, &k->op); break;
        case HR_OP_MAXIMUM: xs = xnn_create_maximum_nd_f32(0, &k->op); break;
        default: xs = xnn_create_add_nd_f32(-INFINITY, INFINITY, 0, &k->op); break;
      }
      k->xk = X_BINARY;
      break;
    }
    case HR_OP_RELU: case HR_OP_RELU6: case HR_OP_SIGMOID: case HR_OP_SQUARE: case HR_OP_HARDSWISH: {
      const hr__tensor *o = &p->vals[r->out[0]].t;
      size_t C = (size_t)o->dims[o->rank - 1];
      if (r->op == HR_OP_RELU) xs = xnn_create_clamp_nc_f32(C, C, C, 0.f, INFINITY, 0, &k->op);
      else if (r->op == HR_OP_RELU6) xs = xnn_create_clamp_nc_f32(C, C, C, 0.f, 6.f, 0, &k->op);
      else if (r->op == HR_OP_SIGMOID) xs = xnn_create_sigmoid_nc_f32(C, C, C, 0, &k->op);
      else if (r->op == HR_OP_HARDSWISH) xs = xnn_create_hardswish_nc_f32(C, C, C, 0, &k->op);
      else xs = xnn_create_square_nc_f32(C, C, C, 0, &k->op);
      k->xk = X_UNARY;
      break;
    }
    case HR_OP_RESIZE_BILINEAR: {
      const hr__tensor *o = &p->vals[r->out[0]].t;
      if (a->align_corners) return 0;
      size_t C = (size_t)o->dims[3];
      xs = xnn_create_resize_bilinear2d_nhwc_f32(C, C, C, a->half_pixel ? 0 : XNN_FLAG_TENSORFLOW_LEGACY_MODE, &k->op);
      k->xk = X_RESIZE;
      break;
    }
    case HR_OP_MEAN: {
      const hr__tensor *x = &p->vals[r->in[0]].t;
      if (!is_const(s, r->in[1]) || x->rank != 4) return 0;
      const hr__tensor *ax = &p->vals[r->in[1]].t;
      if (hr__numel(ax) != 2) return 0;
      int a0 = ((int32_t *)ax->data)[0], a1 = ((int32_t *)ax->data)[1];
      if (!((a0 == 1 && a1 == 2) || (a0 == 2 && a1 == 1))) return 0;
      size_t C = (size_t)x->dims[3];
      xs = xnn_create_global_average_pooling_nwc_f32(C, C, C, -INFINITY, INFINITY, 0, &k->op);
      k->xk = X_GAP;
      break;
    }
    case HR_OP_MATMUL: {
      if (!is_const(s, r->in[1]) || a->transpose_a) return 0;
      const hr__tensor *w = &p->vals[r->in[1]].t;
      size_t K = (size_t)(a->transpose_b ? w->dims[1] : w->dims[0]), N = (size_t)(a->transpose_b ? w->dims[0] : w->dims[1]);
      xs = xnn_create_fully_connected_nc_f32(K, N, K, N, w->data, NULL, -INFINITY, INFINITY,
                                             a->transpose_b ? 0 : XNN_FLAG_TRANSPOSE_WEIGHTS, &k->op);
      k->xk = X_FC;
      break;
    }
    default:
      return 0;
  }
  if (xs != xnn_status_success) {
    *st = xs == xnn_status_out_of_memory ? HR_ENOMEM : HR_ENOTSUP;
    snprintf(s->err, sizeof s->err, "XNNPACK refused op %s (%s): status %d", hr__op_name(r->op), n->name, (int)xs);
    return 0;
  }
  k->kind = K_XNN;
  return 1;
}

static hr_status setup_xnn(hr_session *s, const hr__rop *r, kern *k) {
  hr__tensor x = view(s, r->in[0]);
  hr__tensor o = view(s, r->out[0]);
  enum xnn_status xs = xnn_status_success;
  switch (k->xk) {
    case X_CONV:
      xs = xnn_setup_convolution2d_nhwc_f32(k->op, (size_t)x.dims[0], (size_t)x.dims[1], (size_t)x.dims[2], x.data, o.data, k->pool);
      break;
    case X_DECONV: {
      hr__tensor in = view(s, r->in[2]);
      xs = xnn_setup_deconvolution2d_nhwc_f32(k->op, (size_t)in.dims[0], (size_t)in.dims[1], (size_t)in.dims[2], 0, 0, in.data, o.data, k->pool);
      break;
    }
    case X_BINARY: {
      hr__tensor y = view(s, r->in[1]);
      size_t sa[XNN_MAX_TENSOR_DIMS], sb[XNN_MAX_TENSOR_DIMS];
      for (int d = 0; d < x.rank; d++) sa[d] = (size_t)x.dims[d];
      for (int d = 0; d < y.rank; d++) sb[d] = (size_t)y.dims[d];
      enum xnn_status (*fn)(xnn_operator_t, size_t, const size_t *, size_t, const size_t *, const float *, const float *, float *, pthreadpool_t);
      switch (r->op) {
        case HR_OP_MUL: fn = xnn_setup_multiply_nd_f32; break;
        case HR_OP_SUB: fn = xnn_setup_subtract_nd_f32; break;
        case HR_OP_REALDIV: fn = xnn_setup_divide_nd_f32; break;
        case HR_OP_MINIMUM: fn = xnn_setup_minimum_nd_f32; break;
        case HR_OP_MAXIMUM: fn = xnn_setup_maximum_nd_f32; break;
        default: fn = xnn_setup_add_nd_f32; break;
      }
      xs = fn(k->op, (size_t)x.rank, sa, (size_t)y.rank, sb, x.data, y.data, o.data, k->pool);
      break;
    }
    case X_UNARY: {
      size_t C = (size_t)o.dims[o.rank - 1], batch = (size_t)(hr__numel(&o) / (int64_t)C);
      switch (r->op) {
        case HR_OP_RELU: case HR_OP_RELU6: xs = xnn_setup_clamp_nc_f32(k->op, batch, x.data, o.data, k->pool); break;
        case HR_OP_SIGMOID: xs = xnn_setup_sigmoid_nc_f32(k->op, batch, x.data, o.data, k->pool); break;
        case HR_OP_HARDSWISH: xs = xnn_setup_hardswish_nc_f32(k->op, batch, x.data, o.data, k->pool); break;
        default: xs = xnn_setup_square_nc_f32(k->op, batch, x.data, o.data, k->pool); break;
      }
      break;
    }
    case X_RESIZE:
      xs = xnn_setup_resize_bilinear2d_nhwc_f32(k->op, (size_t)x.dims[0], (size_t)x.dims[1], (size_t)x.dims[2],
                                                (size_t)o.dims[1], (size_t)o.dims[2], x.data, o.data, k->pool);
      break;
    case X_GAP:
      xs = xnn_setup_global_average_pooling_nwc_f32(k->op, (size_t)x.dims[0], (size_t)(x.dims[1] * x.dims[2]), x.data, o.data, k->pool);
      break;
    case X_FC:
      xs = xnn_setup_fully_connected_nc_f32(k->op, (size_t)x.dims[0], x.data, o.data, k->pool);
      break;
    default: break;
  }
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
  hr_status st = HR_OK;
  s->kernel_bytes = 0;
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
        if (!k->reads_src) st = setup_xnn(s, r, k);
        k->last_src = NULL;
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
  for (int i = 0; i < ex->n; i++)
    s->kernel_bytes += (int64_t)(ex->k[i].fgf.mem_bytes + ex->k[i].ing.mem_bytes) + (ex->k[i].rs.x0 ? ex->k[i].rs.ow * 12 : 0) +
                       (ex->k[i].wexp ? (int64_t)hr__numel(&s->plan->vals[s->plan->rops[i].in[1]].t) / s->plan->vals[s->plan->rops[i].in[0]].t.dims[3] *
                                            s->plan->vals[s->plan->rops[i].out[0]].t.dims[2] * s->plan->vals[s->plan->rops[i].in[0]].t.dims[3] * 4 : 0);
  if (st) { *out = ex; hr__exec_destroy(ex); *out = NULL; return st; }
  *out = ex;
  return HR_OK;
}

void hr__exec_destroy(hr__exec *ex) {
  if (!ex) return;
  for (int i = 0; i < ex->n; i++) {
    if (ex->k[i].op) xnn_delete_operator(ex->k[i].op);
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

void hr__exec_run(hr_session *s, hr__exec *ex) {
  const hr__plan *p = s->plan;
  for (int i = 0; i < ex->n; i++) {
    const hr__rop *r = &p->rops[i];
    kern *k = &ex->k[i];
    double t0 = s->profiling ? now_us() : 0;
    hr__tensor in[HR_ROP_MAX_IN], out[HR_MAX_OUT];
    const hr__tensor *inp[HR_ROP_MAX_IN];
    switch (k->kind) {
      case K_NOP: break;
      case K_XNN:
        if (k->reads_src && k->last_src != s->src_ptr) { setup_xnn(s, r, k); k->last_src = s->src_ptr; }
        xnn_run_operator(k->op, k->pool);
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
}

const char *hr__session_op_detail(const hr_session *s, int i) {
  static __thread char buf[256];
  static const char *kn[] = {"ref", "xnn", "concat", "split", "slice", "tanh", "meanc", "fgf", "nop", "srcresize", "dw1d", "resize"};
  const hr__rop *r = &s->plan->rops[i];
  const hr__tensor *o = &s->plan->vals[r->out[0]].t, *x = &s->plan->vals[r->in[0]].t;
  snprintf(buf, sizeof buf, "%s in[%lld,%lld,%lld,%lld] out[%lld,%lld,%lld,%lld] %s", kn[s->ex->k[i].kind],
           (long long)x->dims[0], (long long)x->dims[1], (long long)x->dims[2], (long long)x->dims[3],
           (long long)o->dims[0], (long long)o->dims[1], (long long)o->dims[2], (long long)o->dims[3],
           r->node ? r->node->name + (strlen(r->node->name) > 60 ? strlen(r->node->name) - 60 : 0) : "");
  return buf;
}
