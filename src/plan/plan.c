/* Planner: folds constants and control flow for one (size, ratio), emits the static op list, plans the arena. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "plan/plan.h"
#include "graph/ops.h"
#include "plan/lower.h"
#include "session/kernels.h"
#include "session/wino.h"

#define VID(node, port) ((node) * HR_MAX_OUT + (port))
#define LAST_FOREVER 0x3fffffff

static hr_status perr(hr__plan *p, hr_status st, const char *fmt, ...) {
  va_list ap; va_start(ap, fmt);
  vsnprintf(p->err, sizeof p->err, fmt, ap);
  va_end(ap);
  return st;
}

static void *const_alloc(hr__plan *p, size_t bytes) {
  void **na = realloc(p->const_alloc, sizeof(void *) * (size_t)(p->n_const_alloc + 1));
  if (!na) return NULL;
  p->const_alloc = na;
  void *b = calloc(1, bytes ? bytes : 1);
  if (b) { p->const_alloc[p->n_const_alloc++] = b; p->const_bytes += (int64_t)bytes; }
  return b;
}

static int add_rop(hr__plan *p, hr__rop *r) {
  if (p->n_rops == p->cap_rops) {
    int nc = p->cap_rops ? p->cap_rops * 2 : 256;
    hr__rop *nr = realloc(p->rops, sizeof *nr * (size_t)nc);
    if (!nr) return -1;
    p->rops = nr; p->cap_rops = nc;
  }
  p->rops[p->n_rops] = *r;
  return p->n_rops++;
}

static int is_state_input(const hr_model *m, int node, int *k) {
  for (int s = 0; s < m->n_state; s++)
    if (m->inputs[m->state_in[s]].node == node) { *k = s; return 1; }
  return 0;
}

static hr_status eval(hr__plan *p, int i);

static hr_status eval_inputs(hr__plan *p, const hr__node *n) {
  hr_status st;
  for (int k = 0; k < n->n_ctrl; k++) if ((st = eval(p, n->ctrl[k]))) return st;
  for (int k = 0; k < n->n_in; k++) if ((st = eval(p, n->in[k].node))) return st;
  return HR_OK;
}

static void set_dead(hr__plan *p, int i) {
  for (int port = 0; port < HR_MAX_OUT; port++) p->vals[VID(i, port)].kind = V_DEAD;
}

static hr_status eval(hr__plan *p, int i) {
  const hr_model *m = p->m;
  const hr__node *n = &m->nodes[i];
  hr__val *v0 = &p->vals[VID(i, 0)];
  if (v0->kind == V_VISITING) return perr(p, HR_ECORRUPT, "graph has a cycle through node '%s'", n->name);
  if (v0->kind != V_UNSET) return HR_OK;
  v0->kind = V_VISITING;
  hr_status st = eval_inputs(p, n);
  if (st) return st;
  v0->kind = V_UNSET;

  if (n->op == HR_OP_MERGE) {
    for (int k = 0; k < n->n_in; k++) {
      hr__val *iv = &p->vals[VID(n->in[k].node, n->in[k].port)];
      if (iv->kind == V_DEAD) continue;
      *v0 = *iv;
      hr__val *v1 = &p->vals[VID(i, 1)];
      int32_t *idx = const_alloc(p, 4);
      if (!idx) return HR_ENOMEM;
      *idx = k;
      v1->kind = V_CONST; v1->t.dt = HR_DT_INT32; v1->t.rank = 0; v1->t.data = idx;
      return HR_OK;
    }
    set_dead(p, i);
    return HR_OK;
  }
  for (int k = 0; k < n->n_ctrl; k++)
    if (p->vals[VID(n->ctrl[k], 0)].kind == V_DEAD) { set_dead(p, i); return HR_OK; }
  for (int k = 0; k < n->n_in; k++)
    if (p->vals[VID(n->in[k].node, n->in[k].port)].kind == V_DEAD) { set_dead(p, i); return HR_OK; }

  switch (n->op) {
    case HR_OP_CONST:
      v0->kind = V_CONST; v0->t = n->value; v0->root = VID(i, 0); v0->storage = S_CONST;
      return HR_OK;
    case HR_OP_NOOP:
      v0->kind = V_CTRL; return HR_OK;
    case HR_OP_PLACEHOLDER: {
      int k;
      v0->root = VID(i, 0);
      if (m->in_ratio >= 0 && m->inputs[m->in_ratio].node == i) {
        float *r = const_alloc(p, 4);
        if (!r) return HR_ENOMEM;
        *r = p->ratio;
        v0->kind = V_CONST; v0->t.dt = HR_DT_FLOAT; v0->t.rank = 0; v0->t.data = r; v0->storage = S_CONST;
      } else if (is_state_input(m, i, &k)) {
        v0->kind = V_DYN; v0->t.dt = HR_DT_FLOAT; v0->t.rank = -1; v0->storage = S_STATE; v0->slot = k;
        p->state_val[k] = VID(i, 0);
      } else if (m->inputs[m->in_src].node == i) {
        v0->kind = V_DYN; v0->t.dt = HR_DT_FLOAT; v0->t.rank = 4;
        v0->t.dims[0] = 1; v0->t.dims[1] = p->height; v0->t.dims[2] = p->width; v0->t.dims[3] = 3;
        v0->storage = S_SRC;
        p->src_val = VID(i, 0);
      } else {
        return perr(p, HR_ENOTSUP, "input '%s' has no role headroom knows (image, downsample_ratio, rNi state)", n->name);
      }
      return HR_OK;
    }
    case HR_OP_SWITCH: {
      hr__val *pred = &p->vals[VID(n->in[1].node, n->in[1].port)];
      hr__val *data = &p->vals[VID(n->in[0].node, n->in[0].port)];
      if (pred->kind != V_CONST) return perr(p, HR_ENOTSUP, "Switch '%s': predicate is not known at plan time", n->name);
      int taken = ((const uint8_t *)pred->t.data)[0] ? 1 : 0;
      if (pred->t.dt != HR_DT_BOOL) taken = ((const int32_t *)pred->t.data)[0] != 0;
      set_dead(p, i);
      p->vals[VID(i, taken)] = *data;
      return HR_OK;
    }
    default: break;
  }

  /* generic op */
  const hr__tensor *in[16];
  int all_const = 1;
  if (n->n_in > 16) return perr(p, HR_ENOTSUP, "node '%s' has too many inputs", n->name);
  for (int k = 0; k < n->n_in; k++) {
    hr__val *iv = &p->vals[VID(n->in[k].node, n->in[k].port)];
    if (iv->kind == V_CTRL || iv->kind == V_UNSET) return perr(p, HR_ECORRUPT, "node '%s': input %d has no value", n->name, k);
    if (iv->t.rank < 0 && n->op != HR_OP_BROADCAST_TO)
      return perr(p, HR_ENOTSUP, "node '%s' reads state input of unknown shape (only BroadcastTo may)", n->name);
    in[k] = &iv->t;
    if (iv->kind != V_CONST) all_const = 0;
  }
  hr__tensor out[HR_MAX_OUT];
  int n_out = 0;
  if (n->op == HR_OP_BROADCAST_TO && in[0]->rank < 0) {
    /* recurrent state placeholder of unknown rank: it takes the shape it is broadcast to */
    hr__val *sv = &p->vals[p->vals[VID(n->in[0].node, n->in[0].port)].root];
    hr__val *shp = &p->vals[VID(n->in[1].node, n->in[1].port)];
    if (shp->kind != V_CONST) return perr(p, HR_ENOTSUP, "BroadcastTo '%s': shape not known at plan time", n->name);
    sv->t.rank = (int)hr__numel(&shp->t);
    for (int d = 0; d < sv->t.rank; d++) sv->t.dims[d] = ((const int32_t *)shp->t.data)[d];
    *v0 = *sv; v0->root = sv->root;
    return HR_OK;
  }
  if (n->op == HR_OP_IDENTITY && all_const) { /* constants pass through Identity without a copy */
    *v0 = p->vals[VID(n->in[0].node, n->in[0].port)];
    return HR_OK;
  }
  st = hr__op_infer(n, in, n->n_in, out, &n_out, p->err, sizeof p->err);
  if (st) return st;
  if (n->op == HR_OP_SHAPE || all_const) {
    for (int o = 0; o < n_out; o++) {
      out[o].data = const_alloc(p, (size_t)hr__numel(&out[o]) * hr__dtsize(out[o].dt));
      if (!out[o].data) return HR_ENOMEM;
    }
    hr__op_exec_ref(n, in, n->n_in, out, n_out);
    for (int o = 0; o < n_out; o++) {
      hr__val *v = &p->vals[VID(i, o)];
      v->kind = V_CONST; v->t = out[o]; v->root = VID(i, o); v->storage = S_CONST;
    }
    return HR_OK;
  }
  /* views: no data movement, same storage */
  int same_numel = hr__numel(&out[0]) == hr__numel(in[0]);
  int identity_slice = 0;
  if (n->op == HR_OP_SLICE && same_numel && in[1]->data) { /* crop to the full size: a view */
    identity_slice = 1;
    for (int64_t k = 0; k < hr__numel(in[1]); k++) if (((const int32_t *)in[1]->data)[k] != 0) identity_slice = 0;
  }
  if (n->op == HR_OP_IDENTITY || n->op == HR_OP_SQUEEZE || n->op == HR_OP_RESHAPE || identity_slice ||
      (n->op == HR_OP_BROADCAST_TO && same_numel)) {
    hr__val *iv = &p->vals[VID(n->in[0].node, n->in[0].port)];
    *v0 = *iv; v0->t.rank = out[0].rank;
    memcpy(v0->t.dims, out[0].dims, sizeof out[0].dims);
    return HR_OK;
  }
  hr__rop r;
  memset(&r, 0, sizeof r);
  r.op = n->op; r.node = n;
  if (n->n_in > HR_ROP_MAX_IN) return perr(p, HR_ENOTSUP, "node '%s': too many inputs for a runtime op", n->name);
  r.n_in = n->n_in;
  for (int k = 0; k < n->n_in; k++) r.in[k] = VID(n->in[k].node, n->in[k].port);
  r.n_out = n_out;
  for (int o = 0; o < n_out; o++) {
    hr__val *v = &p->vals[VID(i, o)];
    v->kind = V_DYN; v->t = out[o]; v->t.data = NULL; v->root = VID(i, o); v->storage = S_ARENA;
    r.out[o] = VID(i, o);
  }
  r.flops = hr__op_flops(n, in, n->n_in, &out[0]);
  if (add_rop(p, &r) < 0) return HR_ENOMEM;
  return HR_OK;
}

static int root_of(const hr__plan *p, int v) { return p->vals[v].root; }

/* Greedy-by-size placement (TFLite Micro's GreedyMemoryPlanner): biggest first, each at the lowest
 * offset where it overlaps no already-placed buffer that is alive at the same time. */
static hr_status plan_arena(hr__plan *p) {
  int n = 0;
  int *ids = malloc(sizeof(int) * (size_t)p->n_vals);
  if (!ids) return HR_ENOMEM;
  for (int v = 0; v < p->n_vals; v++) {
    hr__val *x = &p->vals[v];
    if (x->kind == V_DYN && x->root == v && x->storage == S_ARENA && x->def >= 0) ids[n++] = v;
  }
  /* sort by size desc (insertion sort is fine for a few hundred) */
  for (int a = 1; a < n; a++) {
    int t = ids[a]; int64_t ts = hr__numel(&p->vals[t].t);
    int b = a - 1;
    while (b >= 0 && hr__numel(&p->vals[ids[b]].t) < ts) { ids[b + 1] = ids[b]; b--; }
    ids[b + 1] = t;
  }
  int64_t top = 0;
  typedef struct { int64_t off, size; int def, last; } placed;
  placed *pl = malloc(sizeof *pl * (size_t)(n + 1));
  if (!pl) { free(ids); return HR_ENOMEM; }
  int np = 0;
  for (int k = 0; k < n; k++) {
    hr__val *x = &p->vals[ids[k]];
    int64_t size = (hr__numel(&x->t) * (int64_t)hr__dtsize(x->t.dt) + 63) & ~(int64_t)63;
    /* candidate offsets: 0 and the end of each time-overlapping placed buffer */
    int64_t best = -1;
    for (int c = -1; c < np; c++) {
      int64_t off = c < 0 ? 0 : pl[c].off + pl[c].size;
      if (c >= 0 && (pl[c].last < x->def || pl[c].def > x->last)) continue;
      int ok = 1;
      for (int q = 0; q < np && ok; q++) {
        if (pl[q].last < x->def || pl[q].def > x->last) continue;
        if (off < pl[q].off + pl[q].size && pl[q].off < off + size) ok = 0;
      }
      if (ok && (best < 0 || off < best)) best = off;
    }
    x->offset = best;
    pl[np++] = (placed){best, size, x->def, x->last};
    if (best + size > top) top = best + size;
  }
  p->arena_bytes = top;
  free(pl); free(ids);
  return HR_OK;
}

int hr__conv_bands(int64_t n, int64_t ih, int64_t oh, int64_t ow, int kh, int kw, int sh, int dh, int pt, hr__band *b) {
  int64_t taps = (int64_t)kh * kw, row = ow * taps * 8, eff = (int64_t)(kh - 1) * dh + 1;
  if (n != 1 || taps < 2 || sh < 1 || oh * row < HR__BAND_MIN_BYTES) return 0;
  int64_t h = HR__BAND_BYTES / row > 1 ? HR__BAND_BYTES / row : 1;
  int64_t top = (pt + sh - 1) / sh;                               /* rows that read the top padding */
  int64_t yb = ih + pt - eff < 0 ? 0 : (ih + pt - eff) / sh + 1;  /* the first row that reads the bottom padding */
  if (yb > oh) yb = oh;
  if (yb < top) return 0;
  int64_t bot = oh - yb, m = yb - top;
  if (m / h < HR__BAND_MIN_COUNT) h = m / HR__BAND_MIN_COUNT > 1 ? m / HR__BAND_MIN_COUNT : 1;
  if (m / h > HR__BAND_MAX) h = (m + HR__BAND_MAX - 1) / HR__BAND_MAX;
  int64_t nmid = m / h;
  if (nmid < 2) return 0; /* no smaller than the whole */
  int64_t first = top + (m - nmid * h);
  int nb = (int)((first > 0) + nmid + (bot > 0));
  if (!b) return nb;
  int64_t y = 0;
  for (int i = 0; i < nb; i++) {
    int64_t rows = i == 0 && first > 0 ? first : (i == nb - 1 && bot > 0 ? bot : h);
    int64_t a = y * sh - pt, e = (y + rows - 1) * sh - pt + eff; /* input rows [a, e), padding included */
    int64_t i0 = a < 0 ? 0 : a, i1 = e > ih ? ih : e;
    b[i] = (hr__band){y, rows, i0, i1 - i0, (int)(i0 - a), (int)(e - i1)};
    y += rows;
  }
  return nb;
}

/* What the kernels will allocate for the plan's ops. Shared through the model's kernel cache
 * (*shared): XNNPACK packed weights (output channels rounded to the 16-wide AVX-512 tile, bias
 * included), indirection buffers of indirect GEMM convolutions (one pointer per output pixel and
 * tap), depthwise indirection (per output row: taps plus the row's columns x stride x kernel
 * height), legacy resize tables (4 pointers + 2 weights per output pixel). The session's own
 * (returned): an operator struct per XNNPACK op, deconvolutions (not shareable), and our kernels'
 * tables. Mirrors the choices of exec.c. */
#define HR__XNN_OP_STRUCT 2176 /* XNNPACK 2022's operator struct (2112 bytes asked, 64-aligned) */
#define HR__BAND_RECORD 48 /* exec.c's record of a band (operator, template, rows) */
static int64_t ru16(int64_t x) { return (x + 15) & ~(int64_t)15; }
/* The bands exec.c runs convolution r in (its descriptor's geometry), as hr__conv_bands. */
static int conv_bands(const hr__plan *p, const hr__rop *r, hr__band *b) {
  const hr__attrs *a = r->node ? &r->node->a : &r->syn.a;
  const hr__tensor *x = &p->vals[r->in[0]].t, *w = &p->vals[r->in[1]].t, *o = &p->vals[r->out[0]].t;
  int64_t oh; int pt;
  hr__conv_geom(a->padding, a->explicit_pad + 2, x->dims[1], (int)w->dims[0], a->strides[1], a->dilations[1], &oh, &pt);
  return hr__conv_bands(x->dims[0], x->dims[1], o->dims[1], o->dims[2], (int)w->dims[0], (int)w->dims[1], a->strides[1],
                        a->dilations[1], pt, b);
}
/* Winograd convolution r's output read only by a Split along channels right after it, whose
 * outputs the ConcatV2 after that reads (exec.c, fuse_wino_split: both in the convolution's
 * epilogue) */
static int wino_split_after(const hr__plan *p, int r) {
  if (r + 2 >= p->n_rops || !hr__plan_wino(p, r)) return 0;
  const hr__rop *a = &p->rops[r + 1], *b = &p->rops[r + 2];
  if (a->op != HR_OP_SPLIT || b->op != HR_OP_CONCAT || a->n_in < 2 || root_of(p, a->in[1]) != root_of(p, p->rops[r].out[0]) ||
      p->vals[root_of(p, p->rops[r].out[0])].n_readers != 1)
    return 0;
  for (int k = 0; k < b->n_in - 1; k++)
    for (int q = 0; q < a->n_out; q++)
      if (root_of(p, b->in[k]) == root_of(p, a->out[q])) return 1;
  return 0;
}

/* Convolution i reads the output of a resize-concat just before it (a ResizeBilinear at most three
 * ops back writing what it reads, which it alone reads) and runs in the plan's bands whose halo rows
 * add at most a quarter: exec.c's fuse_resize_conv makes its input band by band in the bands'
 * tasks (as the plan's bands are on two threads or fewer). On RVM at 480x360 and 328x246, the output
 * block's 35 -> 16 convolution. Where the Winograd runs it takes that convolution now (hr__plan_wino:
 * its tasks make the rows, fuse_resize_wino): on the 2-vCPU VM at 480x360, 5.5-6.1 ms against
 * 8.9-10.5 for XNNPACK's fused bands, the frame 44.0-50.6 against 47.9-58.0 ms (4 alternating
 * rounds). Before the rows were made in its tasks, Winograd 4.4-4.7 ms plus the resize-concat
 * apart 0.8 against 6.0-6.3 gave no faster frame (the 24 MB concat written and read back). */
static int resize_conv_likely(const hr__plan *p, int i) {
  const hr__rop *r = &p->rops[i];
  const int R = p->vals[r->in[0]].root;
  if (p->vals[R].n_readers != 1) return 0;
  int resize = 0;
  for (int j = i - 3 < 0 ? 0 : i - 3; j < i; j++) {
    const hr__rop *q = &p->rops[j];
    if (q->dead) continue;
    if (q->op == HR_OP_RESIZE_BILINEAR) resize = 1;
    if (resize && q->n_out > 0 && p->vals[q->out[0]].root == R) {
      hr__band b[HR__BAND_MAX + 2];
      const int nb = conv_bands(p, r, b);
      int64_t made = 0;
      for (int k = 0; k < nb; k++) made += b[k].in_rows;
      return nb > 0 && hr__bands_halo_ok(made, p->vals[r->in[0]].t.dims[1]);
    }
  }
  return 0;
}

int hr__plan_wino(const hr__plan *p, int i) {
  const hr__rop *r = &p->rops[i];
  if (r->dead || (r->op != HR_OP_CONV2D && r->op != HR_OP_FUSED_CONV2D) || r->n_in < 2 || !hr__wino_ok()) return 0;
  const hr__attrs *a = r->node ? &r->node->a : &r->syn.a;
  if (p->vals[r->in[1]].kind != V_CONST || (a->fused_bias && (r->n_in < 3 || p->vals[r->in[2]].kind != V_CONST))) return 0;
  const hr__tensor *x = &p->vals[r->in[0]].t, *w = &p->vals[r->in[1]].t, *o = &p->vals[r->out[0]].t;
  if (x->dt != HR_DT_FLOAT || o->dt != HR_DT_FLOAT || w->dt != HR_DT_FLOAT || x->rank != 4 || w->rank != 4 || o->rank != 4) return 0;
  if (p->vals[p->vals[r->in[0]].root].storage == S_SRC || w->dims[2] != x->dims[3] || w->dims[3] != o->dims[3]) return 0;
  int64_t oh, ow; int pt, pl;
  hr__conv_geom(a->padding, a->explicit_pad + 2, x->dims[1], (int)w->dims[0], a->strides[1], a->dilations[1], &oh, &pt);
  hr__conv_geom(a->padding, a->explicit_pad + 4, x->dims[2], (int)w->dims[1], a->strides[2], a->dilations[2], &ow, &pl);
  const int pb = (int)(oh + 2 - x->dims[1] - pt), pr = (int)(ow + 2 - x->dims[2] - pl); /* for a 3x3, stride 1 */
  if (oh != x->dims[1] || ow != x->dims[2] || o->dims[1] != oh || o->dims[2] != ow ||
      !hr__wino_fits((int)w->dims[0], (int)w->dims[1], a->strides[1], a->strides[2], a->dilations[1], a->dilations[2], pt, pb, pl, pr, 1,
                     x->dims[0]))
    return 0;
  /* HR_WINO_OUT=0 (developer switch, A/B): the output block's two convolutions left to XNNPACK's
   * bands with their fused neighbours (the resize-concat before, the pointwise convolution after:
   * fuse_resize_conv, fuse_conv_pw), as before 2026-12-06 night. On the 2-vCPU VM at 480x360 the
   * 16 -> 16 one as Winograd took 2.9-3.1 ms and the 1x1 after it on XNNPACK 0.65-0.74, against
   * 4.3-5.5 for the banded pair (3 rounds); the pointwise one in the Winograd's epilogue was slower
   * still (3.9-4.1 ms: each pixel's 4 sums a chain of 16 dependent multiply-adds) and left out. */
  const char *wo = getenv("HR_WINO_OUT");
  const int out_xnn = wo && !strcmp(wo, "0");
  if (out_xnn && resize_conv_likely(p, i)) return 0;
  if (i + 1 < p->n_rops) {
    const hr__rop *n = &p->rops[i + 1];
    const hr__val *t = &p->vals[p->vals[r->out[0]].root];
    if (!n->dead && n->n_in > 0 && p->vals[n->in[0]].root == p->vals[r->out[0]].root && t->n_readers == 1) {
      if (n->op == HR_OP_HARDSWISH) return 0;
      if (out_xnn && (n->op == HR_OP_CONV2D || n->op == HR_OP_FUSED_CONV2D) && n->n_in > 1) {
        const hr__tensor *nw = &p->vals[n->in[1]].t;
        const hr__attrs *na = n->node ? &n->node->a : &n->syn.a;
        if (nw->rank == 4 && nw->dims[0] == 1 && nw->dims[1] == 1 && na->strides[1] == 1 && na->strides[2] == 1) return 0;
      }
    }
  }
  return 1;
}

static int64_t estimate_kernel_bytes(const hr__plan *p, int64_t *shared) {
  int64_t own = 0, sh = 0, wino_scratch = 0;
  const hr__fgf_lr *lr = &p->fgf_lr;
  if (lr->first >= 0) { /* exec.c's one kernel for the group: the boxes' weights, scratch for one chunk (a thread) */
    const hr__tensor *y = &p->vals[lr->y].t, *A = &p->vals[lr->A].t;
    int64_t kh = p->vals[lr->wv[0]].t.dims[0], kw = p->vals[lr->wh[0]].t.dims[1], n = y->dims[2] * 4, no = A->dims[2] * 4;
    own += (4 * kh * 16 + 4 * kw * 16 + (kh * n + 4 * n + 4 * no + 16)) * 4 + 64;
  }
  for (int i = 0; i < p->n_rops; i++) {
    const hr__rop *r = &p->rops[i];
    if (r->dead || (i >= lr->first && i <= lr->last)) continue;
    const hr__attrs *a = r->node ? &r->node->a : &r->syn.a;
    const hr__tensor *o = &p->vals[r->out[0]].t;
    switch (r->op) {
      case HR_OP_CONV2D: case HR_OP_FUSED_CONV2D: {
        const hr__tensor *w = &p->vals[r->in[1]].t;
        int64_t kh = w->dims[0], kw = w->dims[1], c = w->dims[2], oc = w->dims[3];
        if (hr__plan_wino(p, i)) { /* exec.c's Winograd: its transformed weights (in the kernel cache), the largest one's scratch */
          *(hr__model_owns(p->m, w->data) ? &sh : &own) += hr__wino_bytes(c, oc);
          if (hr__wino_scratch_floats(c, oc) > wino_scratch) wino_scratch = hr__wino_scratch_floats(c, oc);
          break;
        }
        int64_t *acc = hr__model_owns(p->m, w->data) ? &sh : &own;
        *acc += ru16(oc) * (kh * kw * c + 1) * 4;
        int pad = a->padding != HR_PAD_VALID &&
                  (a->padding == HR_PAD_SAME ? (kh > 1 || kw > 1) : (a->explicit_pad[2] | a->explicit_pad[3] | a->explicit_pad[4] | a->explicit_pad[5]) != 0);
        int nb = acc == &sh ? conv_bands(p, r, NULL) : 0;
        if (nb) { /* in bands: a template per band shape (weights packed for each), an operator struct per band */
          hr__band b[HR__BAND_MAX + 2];
          conv_bands(p, r, b);
          for (int i = 0; i < nb; i++) {
            int dup = 0;
            for (int j = 0; j < i && !dup; j++) dup = b[j].in_rows == b[i].in_rows && b[j].pt == b[i].pt && b[j].pb == b[i].pb;
            if (!dup) sh += ru16(oc) * (kh * kw * c + 1) * 4 + (b[i].out_rows * o->dims[2] + 16) * kh * kw * 8;
          }
          sh -= ru16(oc) * (kh * kw * c + 1) * 4; /* counted above with the first band */
          own += (HR__XNN_OP_STRUCT + HR__BAND_RECORD) * nb;
          break;
        }
        if (kh * kw > 1 || a->strides[1] > 1 || a->strides[2] > 1 || pad)
          *acc += (o->dims[1] * o->dims[2] + 16) * kh * kw * 8;
        own += HR__XNN_OP_STRUCT;
        break;
      }
      case HR_OP_DWCONV: case HR_OP_FUSED_DWCONV: {
        const hr__tensor *w = &p->vals[r->in[1]].t;
        int64_t kh = w->dims[0], kw = w->dims[1], ch = w->dims[2] * w->dims[3];
        if ((kh == 1 || kw == 1) && w->dims[3] == 1 && a->strides[1] == 1 && a->strides[2] == 1 && a->dilations[1] == 1 &&
            a->dilations[2] == 1)
        { /* our 1-D depthwise kernel: weights expanded to one output row, no indirection */
          own += kh * kw * o->dims[2] * ch * 4;
          break;
        }
        if (hr__k_dwconv_fits((int)kh, (int)kw, a->strides[1], a->strides[2], a->dilations[1], a->dilations[2], w->dims[3],
                              p->vals[r->in[0]].t.dims[0]) &&
            p->vals[p->vals[r->in[0]].root].storage != S_SRC)
          break; /* our K x K kernel (exec.c, dwconv_fits): the weights read in place, nothing allocated */
        int64_t *acc = hr__model_owns(p->m, w->data) ? &sh : &own;
        *acc += ru16(ch) * (kh * kw + 1) * 4;
        int64_t sw = a->dilations[2] > 1 ? kw : (a->strides[2] < kw ? a->strides[2] : kw);
        *acc += o->dims[1] * (kh * kw + (o->dims[2] - 1) * sw * kh) * 8;
        own += HR__XNN_OP_STRUCT;
        break;
      }
      case HR_OP_DECONV2D: {
        const hr__tensor *w = &p->vals[r->in[1]].t;
        own += ru16(w->dims[2]) * (w->dims[0] * w->dims[1] * w->dims[3] + 1) * 4;
        own += o->dims[1] * o->dims[2] * 8 * 2 + HR__XNN_OP_STRUCT;
        break;
      }
      case HR_OP_MATMUL: {
        const hr__tensor *w = &p->vals[r->in[1]].t;
        *(hr__model_owns(p->m, w->data) ? &sh : &own) += ru16(w->dims[1]) * (w->dims[0] + 1) * 4;
        own += HR__XNN_OP_STRUCT;
        break;
      }
      case HR_OP_RESIZE_BILINEAR: /* our kernel: a column table; XNNPACK's (legacy): a table per output pixel */
        if (a->half_pixel && !a->align_corners) own += o->dims[2] * 12;
        else { sh += o->dims[1] * o->dims[2] * (4 * 8 + 2 * 4); own += HR__XNN_OP_STRUCT; }
        break;
      case HR_OP_FGF_TAIL:
        own += o->dims[2] * 12 + o->dims[1] * 12 + 64 * 1024;
        break;
      case HR_OP_SRC_RESIZE:
        own += o->dims[2] * 40 + o->dims[1] * 12;
        break;
      case HR_OP_MUL: case HR_OP_ADD: case HR_OP_ADDV2: case HR_OP_SUB: case HR_OP_REALDIV: case HR_OP_MINIMUM:
      case HR_OP_MAXIMUM:
        if (o->dt == HR_DT_FLOAT) own += HR__XNN_OP_STRUCT;
        break;
      case HR_OP_SIGMOID:   /* a float one is exec.c's own kernel where the Winograd runs (K_SIGMOID), no operator */
        if (o->dt != HR_DT_FLOAT || !hr__wino_ok()) own += HR__XNN_OP_STRUCT;
        break;
      case HR_OP_RELU: case HR_OP_RELU6: case HR_OP_SQUARE: case HR_OP_HARDSWISH: case HR_OP_MEAN:
        own += HR__XNN_OP_STRUCT;
        break;
      default: break;
    }
  }
  /* the Winograd scratch is one for the session, a slot a thread: counted for one thread, as the
   * guided filter's scratch above (the plan does not know the session's threads; each further thread
   * adds a slot, 295 KB for RVM's largest) */
  if (wino_scratch) own += wino_scratch * 4 + 64;
  *shared = sh;
  return own;
}

hr_status hr__plan_build(const hr_model *m, int width, int height, float ratio, int want_fgr, unsigned flags,
                         hr__plan **out, char *err, size_t err_len) {
  *out = NULL;
  hr__plan *p = calloc(1, sizeof *p);
  if (!p) return HR_ENOMEM;
  p->m = m; p->width = width; p->height = height; p->ratio = m->in_ratio >= 0 ? ratio : 1.f;
  p->n_vals = m->n_nodes * HR_MAX_OUT;
  p->vals = calloc((size_t)p->n_vals, sizeof *p->vals);
  p->alpha_val = p->fgr_val = p->src_val = -1;
  p->fgf_lr.first = p->fgf_lr.last = -1;
  hr_status st = p->vals ? HR_OK : HR_ENOMEM;
  if (!st && (width <= 0 || height <= 0)) st = perr(p, HR_EINVAL, "input size %dx%d is invalid", width, height);
  if (!st && m->fixed_w && (width != m->fixed_w || height != m->fixed_h))
    st = perr(p, HR_EINVAL, "model takes %dx%d input, not %dx%d", m->fixed_w, m->fixed_h, width, height);
  if (!st && m->in_ratio >= 0 && !(ratio > 0.f && ratio <= 1.f))
    st = perr(p, HR_ERANGE, "downsample_ratio %g out of range (0,1]", ratio);
  for (int v = 0; !st && v < p->n_vals; v++) { p->vals[v].root = v; p->vals[v].def = -1; }
  /* outputs we need: alpha, state, fgr if asked */
  int need[16], n_need = 0;
  if (!st) {
    need[n_need++] = m->out_alpha;
    for (int s = 0; s < m->n_state; s++) need[n_need++] = m->state_out[s];
    if (want_fgr && m->out_fgr >= 0) need[n_need++] = m->out_fgr;
  }
  for (int k = 0; !st && k < n_need; k++) st = eval(p, m->outputs[need[k]].node);
  for (int k = 0; !st && k < n_need; k++) {
    const hr__sig *s = &m->outputs[need[k]];
    hr__val *v = &p->vals[VID(s->node, s->port)];
    if (v->kind != V_DYN) st = perr(p, HR_ENOTSUP, "output '%s' is %s at plan time", s->key, v->kind == V_DEAD ? "dead" : "constant");
  }
  if (!st) {
    p->alpha_val = VID(m->outputs[m->out_alpha].node, m->outputs[m->out_alpha].port);
    if (want_fgr && m->out_fgr >= 0) p->fgr_val = VID(m->outputs[m->out_fgr].node, m->outputs[m->out_fgr].port);
    p->n_state = m->n_state;
  }
  if (!st && !(flags & HR__PLAN_NO_LOWER)) hr__plan_lower(p, flags & HR__PLAN_VIRTUAL_SRC);
  /* liveness on roots */
  for (int r = 0; !st && r < p->n_rops; r++) {
    hr__rop *op = &p->rops[r];
    for (int k = 0; k < op->n_in; k++) {
      hr__val *x = &p->vals[root_of(p, op->in[k])];
      if (x->kind == V_DYN) { x->last = r; x->n_readers++; }
    }
    for (int o = 0; o < op->n_out; o++) {
      hr__val *x = &p->vals[root_of(p, op->out[o])];
      if (x->def < 0) x->def = r;
      if (x->last < r) x->last = r;
    }
  }
  for (int k = 0; !st && k < n_need; k++) {
    const hr__sig *s = &m->outputs[need[k]];
    p->vals[root_of(p, VID(s->node, s->port))].last = LAST_FOREVER;
  }
  /* The low-resolution guided filter's inputs stay alive through its last op (plan.h, hr__fgf_lr). */
  for (int k = 0; !st && p->fgf_lr.first >= 0 && k < 2; k++) {
    hr__val *x = &p->vals[root_of(p, k ? p->fgf_lr.src : p->fgf_lr.y)];
    if (x->kind == V_DYN && x->storage == S_ARENA && x->last < p->fgf_lr.last) x->last = p->fgf_lr.last;
  }
  /* A ConvGRU's Split, Sub, Mul, Mul, ConcatV2 after its sigmoid: the CPU backend runs them as one
   * pass at the Split (exec.c, fuse_gru_gates), writing the later ops' results early, so the Split's
   * input stays alive through the ConcatV2. Placement only. */
  for (int r = 0; !st && r + 4 < p->n_rops; r++) {
    const hr__rop *c = &p->rops[r];
    if (c->op != HR_OP_SPLIT || c->n_in != 2 || p->rops[r + 1].op != HR_OP_SUB || p->rops[r + 2].op != HR_OP_MUL ||
        p->rops[r + 3].op != HR_OP_MUL || p->rops[r + 4].op != HR_OP_CONCAT)
      continue;
    hr__val *x = &p->vals[root_of(p, c->in[1])];
    if (x->kind == V_DYN && x->storage == S_ARENA && x->last == r) x->last = r + 4;
  }
  /* A Winograd convolution (hr__plan_wino) with the ops after it done in its epilogue (exec.c,
   * fuse_wino_epi): the ConvGRU's Sigmoid and gates (Split .. ConcatV2, through r + 6), its Tanh, Mul
   * and AddV2 (r + 3); or a Split and the ConcatV2 after it (fuse_wino_split, through r + 2). The
   * epilogue writes those ops' outputs while other tasks still read the convolution's input, so it
   * stays alive through them (without this the fusion happened only where the arena's placement
   * left them apart). Placement only. */
  for (int r = 0; !st && r + 2 < p->n_rops; r++) {
    if (!hr__plan_wino(p, r)) continue;
    const hr__rop *a = &p->rops[r + 1], *b = &p->rops[r + 2];
    int through = 0, reads = a->n_in > 0 && a->in[0] >= 0 && root_of(p, a->in[0]) == root_of(p, p->rops[r].out[0]);
    if (a->op == HR_OP_SIGMOID && b->op == HR_OP_SPLIT && r + 6 < p->n_rops && p->rops[r + 6].op == HR_OP_CONCAT) through = r + 6;
    else if (wino_split_after(p, r)) through = r + 2, reads = 1;   /* the split reads it as its second input */
    else if (a->op == HR_OP_TANH && b->op == HR_OP_MUL && r + 3 < p->n_rops &&
             (p->rops[r + 3].op == HR_OP_ADDV2 || p->rops[r + 3].op == HR_OP_ADD)) through = r + 3;
    if (!through || !reads) continue;
    hr__val *x = &p->vals[root_of(p, p->rops[r].in[0])];
    if (x->kind == V_DYN && x->storage == S_ARENA && x->last >= r && x->last < through) x->last = through;
  }
  /* A channel concat read only by the bilinear resize right after it: the CPU backend fuses the
   * two (exec.c, the resize reads the concat's inputs), so those inputs stay alive through the
   * resize. Placement only: the op list is unchanged. */
  for (int r = 0; !st && r + 1 < p->n_rops; r++) {
    const hr__rop *c = &p->rops[r], *z = &p->rops[r + 1];
    if (c->op != HR_OP_CONCAT || z->op != HR_OP_RESIZE_BILINEAR || root_of(p, z->in[0]) != root_of(p, c->out[0]) ||
        p->vals[root_of(p, c->out[0])].n_readers != 1)
      continue;
    for (int k = 0; k < c->n_in - 1; k++) {
      hr__val *x = &p->vals[root_of(p, c->in[k])];
      if (x->kind == V_DYN && x->storage == S_ARENA && x->last == r) x->last = r + 1;
    }
  }
  /* A convolution whose output only a HardSwish right after it reads: the CPU backend does the
   * HardSwish on each band of rows as the convolution makes it (exec.c, fuse_conv_hswish), writing
   * the HardSwish's output early, so the convolution's input stays alive through it. Placement only. */
  for (int r = 0; !st && r + 1 < p->n_rops; r++) {
    const hr__rop *c = &p->rops[r], *h = &p->rops[r + 1];
    if ((c->op != HR_OP_CONV2D && c->op != HR_OP_FUSED_CONV2D) || h->op != HR_OP_HARDSWISH ||
        root_of(p, h->in[0]) != root_of(p, c->out[0]) || p->vals[root_of(p, c->out[0])].n_readers != 1)
      continue;
    hr__val *x = &p->vals[root_of(p, c->in[0])];
    if (x->kind == V_DYN && x->storage == S_ARENA && x->last == r) x->last = r + 1;
  }
  /* A bilinear resize read only by a Slice right after it, itself read only by the channel concat
   * after that (TF's crop after an upsampling, at odd sizes): the CPU backend writes the crop
   * straight into the concat at the resize (exec.c, crop_cat), so what the resize reads (and the
   * inputs of a concat it is fused with, above) stays alive through the concat. Placement only. */
  for (int r = 0; !st && r + 2 < p->n_rops; r++) {
    const hr__rop *z = &p->rops[r], *sl = &p->rops[r + 1], *c = &p->rops[r + 2];
    if (z->op != HR_OP_RESIZE_BILINEAR || sl->op != HR_OP_SLICE || c->op != HR_OP_CONCAT ||
        root_of(p, sl->in[0]) != root_of(p, z->out[0]) || p->vals[root_of(p, z->out[0])].n_readers != 1 ||
        p->vals[root_of(p, sl->out[0])].n_readers != 1)
      continue;
    int reads = 0;
    for (int k = 0; k < c->n_in - 1; k++) reads |= root_of(p, c->in[k]) == root_of(p, sl->out[0]);
    if (!reads) continue;
    const hr__rop *pc = r > 0 ? &p->rops[r - 1] : NULL;
    int fused_pre = pc && pc->op == HR_OP_CONCAT && root_of(p, z->in[0]) == root_of(p, pc->out[0]);
    for (int k = 0; k < (fused_pre ? pc->n_in - 1 : 1); k++) {
      hr__val *x = &p->vals[root_of(p, fused_pre ? pc->in[k] : z->in[0])];
      if (x->kind == V_DYN && x->storage == S_ARENA && x->last == r) x->last = r + 2;
    }
  }
  /* A bilinear resize whose output (itself, or the concat right after it, or through a crop the
   * concat after that) only a convolution run in bands reads (bands tall enough: exec.c's rule on
   * the plan's bands; more threads may cut them finer, and then it is not fused), that convolution
   * next: the CPU backend
   * makes each band's input rows in the band's task (exec.c, fuse_resize_conv), so what the resize
   * and the concats fused with it read stays alive through the convolution, which writes while
   * later bands still read. Placement only. */
  for (int r = 0; !st && r + 1 < p->n_rops; r++) {
    const hr__rop *z = &p->rops[r];
    if (z->op != HR_OP_RESIZE_BILINEAR) continue;
    int f = root_of(p, z->out[0]), jc = r + 1;
    if (jc < p->n_rops && p->rops[jc].op == HR_OP_SLICE && root_of(p, p->rops[jc].in[0]) == f && jc + 1 < p->n_rops &&
        p->rops[jc + 1].op == HR_OP_CONCAT)
      f = root_of(p, p->rops[jc].out[0]), jc++;
    if (jc < p->n_rops && p->rops[jc].op == HR_OP_CONCAT) {
      int reads = root_of(p, p->rops[jc].out[0]) == f;   /* the resize writes into it (lower.c, pass_concat_resize) */
      for (int k = 0; k < p->rops[jc].n_in - 1; k++) reads |= root_of(p, p->rops[jc].in[k]) == f;
      if (!reads) continue;
      f = root_of(p, p->rops[jc].out[0]);
      jc++;
    }
    if (jc >= p->n_rops || (p->vals[f].last != jc && !(wino_split_after(p, jc) && p->vals[f].last == jc + 2))) continue;
    const hr__rop *c = &p->rops[jc];
    if ((c->op != HR_OP_CONV2D && c->op != HR_OP_FUSED_CONV2D) || root_of(p, c->in[0]) != f) continue;
    hr__band bd[HR__BAND_MAX + 2];
    const int nb = conv_bands(p, c, NULL) ? conv_bands(p, c, bd) : 0;
    int64_t made = 0;   /* the rows the bands read, halo included */
    for (int b = 0; b < nb; b++) made += bd[b].in_rows;
    /* or a Winograd convolution (exec.c, fuse_resize_wino: the rows made in its tasks) */
    if (!hr__plan_wino(p, jc) && (!nb || !hr__bands_halo_ok(made, p->vals[c->in[0]].t.dims[1]))) continue;
    const int g0 = r > 0 && p->rops[r - 1].op == HR_OP_CONCAT && root_of(p, p->rops[r - 1].out[0]) == root_of(p, z->in[0]) ? r - 1 : r;
    /* through the split and concat a Winograd's epilogue writes (fuse_wino_split), if any */
    const int through = wino_split_after(p, jc) ? jc + 2 : jc;
    for (int g = g0; g < jc; g++) /* what the group reads from before it (not its own values) */
      for (int k = 0; k < p->rops[g].n_in; k++) {
        if (p->rops[g].in[k] < 0) continue;
        hr__val *x = &p->vals[root_of(p, p->rops[g].in[k])];
        if (x->kind == V_DYN && x->storage == S_ARENA && x->def < g0 && x->last >= g0 && x->last < through) x->last = through;
      }
  }
  /* A depthwise convolution whose output only a chain of element-wise ops right after it reads (a
   * batch norm's Mul and Add, a HardSwish): the CPU backend does the chain in the convolution's
   * epilogue (exec.c, fuse_dw_epi), writing the chain's result early, so the convolution's input
   * stays alive through the chain. Placement only. */
  for (int r = 0; !st && r + 1 < p->n_rops; r++) {
    const hr__rop *c = &p->rops[r];
    if (c->op != HR_OP_DWCONV && c->op != HR_OP_FUSED_DWCONV) continue;
    int j = r, prev = root_of(p, c->out[0]);
    while (j + 1 < p->n_rops && j < r + 3) {
      const hr__rop *e = &p->rops[j + 1];
      int ew = e->op == HR_OP_HARDSWISH || e->op == HR_OP_MUL || e->op == HR_OP_ADD || e->op == HR_OP_ADDV2 || e->op == HR_OP_SUB ||
               e->op == HR_OP_REALDIV;
      int reads = 0;
      for (int k = 0; k < e->n_in; k++) reads |= root_of(p, e->in[k]) == prev;
      if (!ew || !reads || p->vals[prev].n_readers != 1) break;
      prev = root_of(p, e->out[0]);
      j++;
    }
    hr__val *x = &p->vals[root_of(p, c->in[0])];
    if (j > r && x->kind == V_DYN && x->storage == S_ARENA && x->last == r) x->last = j;
  }
  /* state: write rNo over rNi when rNi's last read is not after rNo's producer */
  for (int s = 0; !st && s < p->n_state; s++) {
    int iv = p->state_val[s];
    const hr__sig *so = &m->outputs[m->state_out[s]];
    int ov = root_of(p, VID(so->node, so->port));
    hr__val *in_v = &p->vals[iv], *out_v = &p->vals[ov];
    if (in_v->t.rank < 0) { st = perr(p, HR_ENOTSUP, "state r%di: shape never determined", s + 1); break; }
    int prod = out_v->def;
    int ok = in_v->last < prod;
    if (!ok && in_v->last == prod) {
      hr__op op = p->rops[prod].op;
      ok = op == HR_OP_ADDV2 || op == HR_OP_ADD || op == HR_OP_MUL || op == HR_OP_SUB;
    }
    if (!ok || hr__numel(&in_v->t) != hr__numel(&out_v->t)) {
      st = perr(p, HR_ENOTSUP, "state r%d cannot be updated in place (read at op %d, written at op %d)", s + 1, in_v->last, prod);
      break;
    }
    out_v->storage = S_STATE; out_v->slot = s;
    p->state_inplace[s] = 1;
    p->state_bytes[s] = hr__numel(&in_v->t) * 4;
  }
  if (!st) st = plan_arena(p);
  if (!st) {
    for (int r = 0; r < p->n_rops; r++) p->flops += p->rops[r].flops;
    p->meta_bytes = (int64_t)(sizeof *p + sizeof *p->vals * (size_t)p->n_vals + sizeof *p->rops * (size_t)p->cap_rops +
                              sizeof(void *) * (size_t)p->n_const_alloc) + p->const_bytes;
    if (!(flags & HR__PLAN_NO_LOWER)) p->kernel_bytes_est = estimate_kernel_bytes(p, &p->kernel_shared_est);
    /* processing size: what RVM's graph computes, (int)(size * ratio) in float, when it downsamples */
    p->proc_w = width; p->proc_h = height;
    if (m->in_ratio >= 0 && p->ratio < 1.f) {
      p->proc_w = (int)((float)width * p->ratio); p->proc_h = (int)((float)height * p->ratio);
    }
  }
  if (st) {
    if (err && err_len) snprintf(err, err_len, "%s: %s", m->name, p->err[0] ? p->err : hr_status_str(st));
    hr__plan_free(p);
    return st;
  }
  *out = p;
  return HR_OK;
}

void hr__plan_free(hr__plan *p) {
  if (!p) return;
  for (int i = 0; i < p->n_const_alloc; i++) free(p->const_alloc[i]);
  free(p->const_alloc); free(p->vals); free(p->rops); free(p);
}

hr__tensor hr__plan_view(const hr__plan *p, int v, void *arena, float *const *state, const float *src) {
  const hr__val *x = &p->vals[v];
  const hr__val *r = &p->vals[x->root];
  hr__tensor t = x->t;
  if (x->kind == V_CONST) return t;
  switch (r->storage) {
    case S_ARENA: t.data = (char *)arena + r->offset; break;
    case S_STATE: t.data = state[r->slot]; break;
    case S_SRC: t.data = (void *)src; break;
    default: t.data = r->t.data; break;
  }
  return t;
}
