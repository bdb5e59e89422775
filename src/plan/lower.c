/* Lowering passes over the static op list: fold pads and dilated-conv patterns into convs, fuse
 * hardswish, fuse RVM's full-resolution guided-filter tail, and mark the image input virtual. */
#include <math.h>
#include <string.h>
#include "plan/plan.h"
#include "plan/lower.h"

static int root(const hr__plan *p, int v) { return p->vals[v].root; }

/* Number of live runtime-op reads of value v's root (through aliases). */
static int readers(const hr__plan *p, int v, int *only) {
  int n = 0, r0 = root(p, v);
  for (int i = 0; i < p->n_rops; i++) {
    const hr__rop *r = &p->rops[i];
    if (r->dead) continue;
    for (int k = 0; k < r->n_in; k++)
      if (p->vals[r->in[k]].kind == V_DYN && root(p, r->in[k]) == r0) { n++; if (only) *only = i; break; }
  }
  return n;
}

/* The op producing value v (through aliases), or -1. */
static int producer(const hr__plan *p, int v) {
  int r0 = root(p, v);
  for (int i = 0; i < p->n_rops; i++) {
    const hr__rop *r = &p->rops[i];
    if (r->dead) continue;
    for (int k = 0; k < r->n_out; k++) if (root(p, r->out[k]) == r0) return i;
  }
  return -1;
}

static int is_output(const hr__plan *p, int v) {
  const hr_model *m = p->m;
  int r0 = root(p, v);
  for (int i = 0; i < m->n_outputs; i++) {
    int ov = m->outputs[i].node * HR_MAX_OUT + m->outputs[i].port;
    if (p->vals[ov].kind == V_DYN && root(p, ov) == r0) return 1;
  }
  return 0;
}

static const float *cfloat(const hr__plan *p, int v) {
  const hr__val *x = &p->vals[v];
  return x->kind == V_CONST && x->t.dt == HR_DT_FLOAT && hr__numel(&x->t) == 1 ? x->t.data : NULL;
}
static const int32_t *cint(const hr__plan *p, int v) {
  const hr__val *x = &p->vals[v];
  return x->kind == V_CONST && x->t.dt == HR_DT_INT32 ? x->t.data : NULL;
}

/* Give an op its own attribute copy so a pass may change them. */
static hr__node *own_attrs(hr__rop *r) {
  if (r->node) { r->syn = *r->node; r->node = NULL; }
  return &r->syn;
}
static int is_conv(hr__op op) {
  return op == HR_OP_CONV2D || op == HR_OP_FUSED_CONV2D || op == HR_OP_DWCONV || op == HR_OP_FUSED_DWCONV;
}
static const hr__attrs *attrs(const hr__rop *r) { return r->node ? &r->node->a : &r->syn.a; }

/* Pad (zeros, spatial only) whose only reader is a VALID or explicitly padded conv -> the conv's
 * explicit padding (XNNPACK reads zeros for the padded taps either way: the same sums). */
static int pass_pad_into_conv(hr__plan *p) {
  int n = 0;
  for (int i = 0; i < p->n_rops; i++) {
    hr__rop *pad = &p->rops[i];
    if (pad->dead || pad->op != HR_OP_PAD || is_output(p, pad->out[0])) continue;
    const int32_t *pd = cint(p, pad->in[1]);
    if (!pd || p->vals[pad->in[0]].t.rank != 4 || pd[0] || pd[1] || pd[6] || pd[7]) continue;
    int c = -1;
    if (readers(p, pad->out[0], &c) != 1) continue;
    hr__rop *conv = &p->rops[c];
    if (!is_conv(conv->op) || root(p, conv->in[0]) != root(p, pad->out[0])) continue;
    const hr__attrs *a = attrs(conv);
    if (a->padding != HR_PAD_VALID && a->padding != HR_PAD_EXPLICIT) continue;
    /* an explicit padding (a dilated convolution from pass_dilated) grows by the Pad's */
    int e[4] = {0, 0, 0, 0};
    if (a->padding == HR_PAD_EXPLICIT) for (int k = 0; k < 4; k++) e[k] = a->explicit_pad[2 + k];
    hr__node *nd = own_attrs(conv);
    nd->a.padding = HR_PAD_EXPLICIT;
    memset(nd->a.explicit_pad, 0, sizeof nd->a.explicit_pad);
    nd->a.explicit_pad[2] = pd[2] + e[0]; nd->a.explicit_pad[3] = pd[3] + e[1];
    nd->a.explicit_pad[4] = pd[4] + e[2]; nd->a.explicit_pad[5] = pd[5] + e[3];
    conv->in[0] = pad->in[0];
    pad->dead = 1;
    n++;
  }
  return n;
}

/* SpaceToBatchND -> depthwise/conv (VALID) -> BatchToSpaceND  ==>  one dilated conv.
 * 1-D derivation: with S2B pads (pt, pb) and B2S crops (ct, cb), out[j] = sum_t w[t] x[j + ct - pt + t*d],
 * i.e. a dilation-d conv with explicit padding (pt - ct, pb - cb). */
static int pass_dilated(hr__plan *p) {
  int n = 0;
  for (int i = 0; i < p->n_rops; i++) {
    hr__rop *s2b = &p->rops[i];
    if (s2b->dead || s2b->op != HR_OP_SPACE_TO_BATCH) continue;
    const int32_t *blk = cint(p, s2b->in[1]), *pads = cint(p, s2b->in[2]);
    int c = -1, b = -1;
    if (!blk || !pads || readers(p, s2b->out[0], &c) != 1) continue;
    hr__rop *conv = &p->rops[c];
    if (!is_conv(conv->op) || attrs(conv)->padding != HR_PAD_VALID || attrs(conv)->strides[1] != 1 ||
        attrs(conv)->strides[2] != 1 || attrs(conv)->dilations[1] != 1 || attrs(conv)->dilations[2] != 1)
      continue;
    if (readers(p, conv->out[0], &b) != 1) continue;
    hr__rop *b2s = &p->rops[b];
    if (b2s->op != HR_OP_BATCH_TO_SPACE) continue;
    const int32_t *blk2 = cint(p, b2s->in[1]), *crops = cint(p, b2s->in[2]);
    if (!blk2 || !crops || blk2[0] != blk[0] || blk2[1] != blk[1]) continue;
    int pt = pads[0] - crops[0], pb = pads[1] - crops[1], pl = pads[2] - crops[2], pr = pads[3] - crops[3];
    if (pt < 0 || pb < 0 || pl < 0 || pr < 0) continue;
    hr__node *nd = own_attrs(conv);
    nd->a.padding = HR_PAD_EXPLICIT;
    memset(nd->a.explicit_pad, 0, sizeof nd->a.explicit_pad);
    nd->a.explicit_pad[2] = pt; nd->a.explicit_pad[3] = pb; nd->a.explicit_pad[4] = pl; nd->a.explicit_pad[5] = pr;
    nd->a.dilations[1] = blk[0]; nd->a.dilations[2] = blk[1];
    conv->in[0] = s2b->in[0];
    conv->out[0] = b2s->out[0];
    s2b->dead = 1; b2s->dead = 1;
    n++;
  }
  return n;
}

/* x/6 * relu6(x + 3) (TF's Keras hardswish after grappler) ==> HardSwish(x). */
static int pass_hardswish(hr__plan *p) {
  int n = 0;
  for (int i = 0; i < p->n_rops; i++) {
    hr__rop *mul = &p->rops[i];
    if (mul->dead || mul->op != HR_OP_MUL) continue;
    int a = producer(p, mul->in[0]), b = producer(p, mul->in[1]);
    if (a < 0 || b < 0) continue;
    hr__rop *div = &p->rops[a], *r6 = &p->rops[b];
    if (div->op == HR_OP_RELU6) { hr__rop *t = div; div = r6; r6 = t; int ti = a; a = b; b = ti; }
    if (div->op != HR_OP_MUL || r6->op != HR_OP_RELU6) continue;
    int xv = -1;
    for (int k = 0; k < 2; k++) {
      const float *c = cfloat(p, div->in[k]);
      if (c && fabsf(*c - 1.f / 6.f) < 1e-6f) xv = div->in[1 - k];
    }
    if (xv < 0) continue;
    int ad = producer(p, r6->in[0]);
    if (ad < 0) continue;
    hr__rop *add = &p->rops[ad];
    if (add->op != HR_OP_ADDV2 && add->op != HR_OP_ADD) continue;
    const float *three = cfloat(p, add->in[1]);
    if (!three || *three != 3.f || root(p, add->in[0]) != root(p, xv)) continue;
    if (readers(p, div->out[0], NULL) != 1 || readers(p, r6->out[0], NULL) != 1 || readers(p, add->out[0], NULL) != 1) continue;
    if (p->vals[xv].t.rank != p->vals[mul->out[0]].t.rank || hr__numel(&p->vals[xv].t) != hr__numel(&p->vals[mul->out[0]].t)) continue;
    div->dead = r6->dead = add->dead = 1;
    own_attrs(mul);
    mul->op = HR_OP_HARDSWISH;
    mul->n_in = 1; mul->in[0] = xv;
    n++;
  }
  return n;
}

/* RVM's fast guided filter at full resolution:
 *   out = Resize(A) * Concat(src, Mean_c(src)) + Resize(b);  fgr_res, pha = SplitV(out, [3, 1]);
 *   pha = Maximum(Minimum(pha, 1), 0)
 * ==> one per-row kernel (hr.GuidedFilterTail) reading A, b at low resolution and src rows in place. */
static int pass_fgf_tail(hr__plan *p) {
  for (int i = 0; i < p->n_rops; i++) {
    hr__rop *sp = &p->rops[i];
    if (sp->dead || sp->op != HR_OP_SPLITV || sp->n_out != 2) continue;
    int ad = producer(p, sp->in[0]);
    if (ad < 0) continue;
    hr__rop *add = &p->rops[ad];
    if (add->op != HR_OP_ADDV2 && add->op != HR_OP_ADD) continue;
    int m0 = producer(p, add->in[0]), rb = producer(p, add->in[1]);
    if (m0 < 0 || rb < 0) continue;
    hr__rop *mul = &p->rops[m0], *resb = &p->rops[rb];
    if (mul->op != HR_OP_MUL || resb->op != HR_OP_RESIZE_BILINEAR) continue;
    int ra = producer(p, mul->in[0]), cc = producer(p, mul->in[1]);
    if (ra < 0 || cc < 0) continue;
    hr__rop *resa = &p->rops[ra], *cat = &p->rops[cc];
    if (resa->op != HR_OP_RESIZE_BILINEAR || cat->op != HR_OP_CONCAT || cat->n_in != 3) continue;
    int mn = producer(p, cat->in[1]);
    if (mn < 0 || p->rops[mn].op != HR_OP_MEAN) continue;
    hr__rop *mean = &p->rops[mn];
    int srcv = cat->in[0];
    if (root(p, mean->in[0]) != root(p, srcv) || p->vals[srcv].t.dims[3] != 3) continue;
    if (!attrs(resa)->half_pixel || attrs(resa)->align_corners || !attrs(resb)->half_pixel || attrs(resb)->align_corners) continue;
    const hr__tensor *A = &p->vals[resa->in[0]].t, *B = &p->vals[resb->in[0]].t;
    if (A->dims[1] != B->dims[1] || A->dims[2] != B->dims[2] || A->dims[3] != 4 || B->dims[3] != 4) continue;
    const int32_t *sz = cint(p, sp->in[1]);
    if (!sz || sz[0] != 3 || sz[1] != 1) continue;
    /* intermediates must have no other readers */
    if (readers(p, resa->out[0], NULL) != 1 || readers(p, resb->out[0], NULL) != 1 || readers(p, cat->out[0], NULL) != 1 ||
        readers(p, mean->out[0], NULL) != 1 || readers(p, mul->out[0], NULL) != 1 || readers(p, add->out[0], NULL) != 1)
      continue;
    /* optional clip of pha: Minimum(., 1) -> Maximum(., 0) */
    int pha_out = sp->out[1], clipped = 0, c1 = -1, c2 = -1;
    if (readers(p, sp->out[1], &c1) == 1 && p->rops[c1].op == HR_OP_MINIMUM) {
      const float *one = cfloat(p, p->rops[c1].in[1]);
      if (one && *one == 1.f && readers(p, p->rops[c1].out[0], &c2) == 1 && p->rops[c2].op == HR_OP_MAXIMUM) {
        const float *zero = cfloat(p, p->rops[c2].in[1]);
        if (zero && *zero == 0.f) { pha_out = p->rops[c2].out[0]; clipped = 1; }
      }
    }
    int fgr_used = readers(p, sp->out[0], NULL) > 0;
    /* rewrite: the SplitV op becomes the fused tail */
    resa->dead = resb->dead = cat->dead = mean->dead = mul->dead = add->dead = 1;
    if (clipped) { p->rops[c1].dead = 1; p->rops[c2].dead = 1; }
    own_attrs(sp);
    sp->op = HR_OP_FGF_TAIL;
    sp->syn.a.keep_dims = clipped;           /* reuse: 1 = pha clipped to [0,1] */
    sp->n_in = 3;
    sp->in[0] = resa->in[0]; sp->in[1] = resb->in[0]; sp->in[2] = srcv;
    sp->n_out = fgr_used ? 2 : 1;
    int fgr_v = sp->out[0];
    sp->out[0] = pha_out;
    sp->out[1] = fgr_v;
    sp->flops = 30.0 * (double)hr__numel(&p->vals[pha_out].t);
    return 1;
  }
  return 0;
}

/* Concat along channels whose input is a 2x upsample used nowhere else: the resize writes straight
 * into its channel slice of the concat's output (pixel stride = the concat's channels), and the
 * concat copies only its other inputs. Saves a full-size tensor and its copy (the decoder's
 * output block: 22 MB at 480x360). */
static int pass_concat_resize(hr__plan *p) {
  int n = 0;
  for (int i = 0; i < p->n_rops; i++) {
    hr__rop *cat = &p->rops[i];
    if (cat->dead || cat->op != HR_OP_CONCAT || cat->n_in < 3) continue;
    const hr__tensor *o = &p->vals[cat->out[0]].t;
    const int32_t *ax = cint(p, cat->in[cat->n_in - 1]);
    if (!ax || o->rank != 4 || (ax[0] != 3 && ax[0] != -1)) continue;
    int off = 0;
    for (int k = 0; k < cat->n_in - 1; k++) {
      const hr__tensor *t = &p->vals[cat->in[k]].t;
      int pr = producer(p, cat->in[k]), rd = -1;
      if (pr >= 0 && p->vals[cat->in[k]].kind == V_DYN && readers(p, cat->in[k], &rd) == 1 && rd == i) {
        hr__rop *rs = &p->rops[pr];
        if (rs->op == HR_OP_RESIZE_BILINEAR && attrs(rs)->half_pixel && !attrs(rs)->align_corners && !rs->out_c_total &&
            root(p, rs->out[0]) == root(p, cat->in[k]) && t->dims[0] == 1) {
          rs->out[0] = cat->out[0];
          rs->out_c_off = off; rs->out_c_total = (int)o->dims[3];
          cat->in_place_mask |= 1u << k;
          n++;
        }
      }
      off += (int)t->dims[3];
    }
  }
  return n;
}

/* ---- the low-resolution guided filter as one group (plan.h, hr__fgf_lr) ---- */
typedef struct lr_match { const hr__plan *p; int ops[32]; int n; } lr_match;

static const hr__rop *lr_take(lr_match *g, int v, hr__op op) {
  int i = producer(g->p, v);
  if (i < 0 || g->p->rops[i].op != op || g->n >= 32) return NULL;
  for (int k = 0; k < g->n; k++) if (g->ops[k] == i) return &g->p->rops[i]; /* shared (mx) */
  g->ops[g->n++] = i;
  return &g->p->rops[i];
}
/* Commutative binary op: which input is value w (by root); -1 if neither. */
static int lr_side(const hr__plan *p, const hr__rop *r, int w) {
  return root(p, r->in[0]) == root(p, w) ? 0 : root(p, r->in[1]) == root(p, w) ? 1 : -1;
}
static int lr_dw(const hr__plan *p, const hr__rop *r, int vertical) {
  if (r->op != HR_OP_DWCONV || r->n_in != 2) return 0;
  const hr__attrs *a = attrs(r);
  const hr__val *w = &p->vals[r->in[1]];
  if (w->kind != V_CONST || w->t.dt != HR_DT_FLOAT || w->t.rank != 4 || w->t.dims[3] != 1 || w->t.dims[2] != 4) return 0;
  if ((vertical ? w->t.dims[1] : w->t.dims[0]) != 1 || a->strides[1] != 1 || a->strides[2] != 1 || a->dilations[1] != 1 ||
      a->dilations[2] != 1 || a->fused_bias || a->act != HR_ACT_NONE)
    return 0;
  return a->padding == HR_PAD_VALID ||
         (a->padding == HR_PAD_EXPLICIT && !(a->explicit_pad[2] | a->explicit_pad[3] | a->explicit_pad[4] | a->explicit_pad[5]));
}
/* v = box(in): H(V(in)); returns in's value id (or -1), the weights in *wv, *wh. */
static int lr_box(lr_match *g, int v, int *wv, int *wh) {
  const hr__rop *h = lr_take(g, v, HR_OP_DWCONV);
  if (!h || !lr_dw(g->p, h, 0)) return -1;
  const hr__rop *vv = lr_take(g, h->in[0], HR_OP_DWCONV);
  if (!vv || !lr_dw(g->p, vv, 1)) return -1;
  *wv = vv->in[1]; *wh = h->in[1];
  return vv->in[0];
}

static int pass_fgf_lowres(hr__plan *p) {
  p->fgf_lr.first = -1;
  for (int t = 0; t < p->n_rops; t++) {
    const hr__rop *tail = &p->rops[t];
    if (tail->dead || tail->op != HR_OP_FGF_TAIL) continue;
    lr_match g = {p, {0}, 0};
    hr__fgf_lr f = {.first = -1, .A = tail->in[0], .b = tail->in[1]};
    const hr__rop *rb = lr_take(&g, f.b, HR_OP_SUB);
    if (!rb) return 0;
    int my = rb->in[0];
    const hr__rop *am = lr_take(&g, rb->in[1], HR_OP_MUL);
    if (!am || lr_side(p, am, f.A) < 0) return 0;
    int mx = am->in[1 - lr_side(p, am, f.A)];
    const hr__rop *ra = lr_take(&g, f.A, HR_OP_REALDIV);
    if (!ra) return 0;
    const hr__rop *cxy = lr_take(&g, ra->in[0], HR_OP_SUB);
    const hr__rop *d = producer(p, ra->in[1]) >= 0 && p->rops[producer(p, ra->in[1])].op == HR_OP_ADD ? lr_take(&g, ra->in[1], HR_OP_ADD)
                                                                                                     : lr_take(&g, ra->in[1], HR_OP_ADDV2);
    if (!cxy || !d) return 0;
    int mxy = cxy->in[0];
    const hr__rop *p1 = lr_take(&g, cxy->in[1], HR_OP_MUL);
    if (!p1 || lr_side(p, p1, mx) < 0 || root(p, p1->in[1 - lr_side(p, p1, mx)]) != root(p, my)) return 0;
    /* D = mxx + (eps - mx*mx), either order */
    int ke = producer(p, d->in[0]) >= 0 && p->rops[producer(p, d->in[0])].op == HR_OP_SUB && cfloat(p, p->rops[producer(p, d->in[0])].in[0]) ? 0 : 1;
    const hr__rop *e = lr_take(&g, d->in[ke], HR_OP_SUB);
    if (!e || !cfloat(p, e->in[0])) return 0;
    f.eps = *cfloat(p, e->in[0]);
    const hr__rop *mx2 = lr_take(&g, e->in[1], HR_OP_SQUARE);
    if (!mx2 || root(p, mx2->in[0]) != root(p, mx)) return 0;
    int mxx = d->in[1 - ke];
    /* the four boxes */
    int x = lr_box(&g, mx, &f.wv[1], &f.wh[1]), yv = lr_box(&g, my, &f.wv[2], &f.wh[2]);
    int xy = lr_box(&g, mxy, &f.wv[0], &f.wh[0]), xx = lr_box(&g, mxx, &f.wv[3], &f.wh[3]);
    if (x < 0 || yv < 0 || xy < 0 || xx < 0) return 0;
    const hr__rop *sq = lr_take(&g, xx, HR_OP_SQUARE), *mu = lr_take(&g, xy, HR_OP_MUL);
    if (!sq || root(p, sq->in[0]) != root(p, x) || !mu || lr_side(p, mu, x) < 0 || root(p, mu->in[1 - lr_side(p, mu, x)]) != root(p, yv))
      return 0;
    /* x = Concat(src, Mean(src, last axis)) */
    const hr__rop *cx = lr_take(&g, x, HR_OP_CONCAT);
    if (!cx || cx->n_in != 3) return 0;
    const int32_t *ax = cint(p, cx->in[2]);
    const hr__rop *mn = lr_take(&g, cx->in[1], HR_OP_MEAN);
    if (!ax || (ax[0] != 3 && ax[0] != -1) || !mn || root(p, mn->in[0]) != root(p, cx->in[0])) return 0;
    const int32_t *max = cint(p, mn->in[1]);
    if (!max || hr__numel(&p->vals[mn->in[1]].t) != 1 || (max[0] != 3 && max[0] != -1)) return 0;
    f.src = cx->in[0];
    /* y: the split and re-concat of the network's output is that output itself */
    f.y = yv;
    int cy = producer(p, yv);
    if (cy >= 0 && p->rops[cy].op == HR_OP_CONCAT && p->rops[cy].n_in == 3) {
      const hr__rop *c = &p->rops[cy];
      int sp = producer(p, c->in[0]);
      const int32_t *cax = cint(p, c->in[2]);
      if (sp >= 0 && sp == producer(p, c->in[1]) && p->rops[sp].op == HR_OP_SPLITV && cax && (cax[0] == 3 || cax[0] == -1) &&
          root(p, c->in[0]) == root(p, p->rops[sp].out[0]) && root(p, c->in[1]) == root(p, p->rops[sp].out[1])) {
        const int32_t *sax = cint(p, p->rops[sp].in[2]);
        if (sax && (sax[0] == 3 || sax[0] == -1)) {
          lr_take(&g, yv, HR_OP_CONCAT);
          lr_take(&g, c->in[0], HR_OP_SPLITV);
          f.y = p->rops[sp].in[0];
        }
      }
    }
    /* shapes: y and x are 1 x H x W x 4 (src 3 channels), A and b 1 x (H-KH+1) x (W-KW+1) x 4 */
    const hr__tensor *ty = &p->vals[f.y].t, *ts = &p->vals[f.src].t, *tA = &p->vals[f.A].t, *tb = &p->vals[f.b].t;
    if (ty->rank != 4 || ts->rank != 4 || ty->dims[0] != 1 || ty->dims[3] != 4 || ts->dims[3] != 3 || ts->dims[1] != ty->dims[1] ||
        ts->dims[2] != ty->dims[2] || ty->dt != HR_DT_FLOAT || ts->dt != HR_DT_FLOAT || tA->rank != 4 || tA->dims[3] != 4 ||
        memcmp(tA->dims, tb->dims, sizeof tA->dims))
      return 0;
    for (int q = 0; q < 4; q++)
      if (p->vals[f.wv[q]].t.dims[0] != p->vals[f.wv[1]].t.dims[0] || p->vals[f.wh[q]].t.dims[1] != p->vals[f.wh[1]].t.dims[1]) return 0;
    if (tA->dims[1] != ty->dims[1] - p->vals[f.wv[1]].t.dims[0] + 1 || tA->dims[2] != ty->dims[2] - p->vals[f.wh[1]].t.dims[1] + 1) return 0;
    /* the group is one run of live ops, and what it makes is read inside it only (A and b: also by the tail) */
    int lo = g.ops[0], hi = g.ops[0];
    for (int k = 1; k < g.n; k++) { lo = g.ops[k] < lo ? g.ops[k] : lo; hi = g.ops[k] > hi ? g.ops[k] : hi; }
    int live = 0;
    for (int i = lo; i <= hi; i++) live += !p->rops[i].dead;
    if (live != g.n) return 0;
    for (int k = 0; k < g.n; k++) {
      const hr__rop *r = &p->rops[g.ops[k]];
      if (r->dead) return 0;
      for (int o = 0; o < r->n_out; o++) {
        int v = r->out[o];
        if (is_output(p, v) && root(p, v) != root(p, f.A) && root(p, v) != root(p, f.b)) return 0;
        for (int i = 0; i < p->n_rops; i++) {
          if (p->rops[i].dead || (i >= lo && i <= hi) || i == t) continue;
          for (int q = 0; q < p->rops[i].n_in; q++)
            if (p->vals[p->rops[i].in[q]].kind == V_DYN && root(p, p->rops[i].in[q]) == root(p, v)) return 0;
        }
      }
    }
    f.first = lo; f.last = hi;
    p->fgf_lr = f;
    return 1;
  }
  return 0;
}

/* The image input is "virtual" when every reader either resizes it (we sample the frame directly)
 * or is the fused tail (reads rows): then no float copy of the frame exists. */
static int pass_virtual_src(hr__plan *p) {
  if (p->src_val < 0) return 0;
  int sv = root(p, p->src_val);
  for (int i = 0; i < p->n_rops; i++) {
    const hr__rop *r = &p->rops[i];
    if (r->dead) continue;
    for (int k = 0; k < r->n_in; k++) {
      if (p->vals[r->in[k]].kind != V_DYN || root(p, r->in[k]) != sv) continue;
      if (r->op == HR_OP_FGF_TAIL && k == 2) continue;
      if (r->op == HR_OP_RESIZE_BILINEAR && k == 0 && attrs(r)->half_pixel && !attrs(r)->align_corners) continue;
      return 0;
    }
  }
  for (int i = 0; i < p->n_rops; i++) {
    hr__rop *r = &p->rops[i];
    if (!r->dead && r->op == HR_OP_RESIZE_BILINEAR && root(p, r->in[0]) == sv) { own_attrs(r); r->op = HR_OP_SRC_RESIZE; }
  }
  p->vals[sv].src_virtual = 1;
  return 1;
}

void hr__plan_lower(hr__plan *p, int allow_virtual_src) {
  pass_pad_into_conv(p);
  pass_dilated(p);
  pass_pad_into_conv(p);
  pass_hardswish(p);
  pass_fgf_tail(p);
  pass_concat_resize(p);
  if (allow_virtual_src) pass_virtual_src(p);
  pass_fgf_lowres(p);
  /* compact: drop dead ops so the executor's list is exactly what runs */
  int w = 0;
  int first = p->fgf_lr.first, last = p->fgf_lr.last;
  for (int i = 0; i < p->n_rops; i++) {
    if (i == first) p->fgf_lr.first = w;
    if (i == last) p->fgf_lr.last = w;
    if (p->rops[i].dead) continue;
    p->rops[w] = p->rops[i];
    if (!p->rops[w].node) { /* syn lives inside the op: nothing to fix */ }
    w++;
  }
  p->n_rops = w;
}
