/* The split run behind the stream's tail-every-frame mode (see session_impl.h): the frame's resize
 * to the processing size, the network, and the guided-filter tail, run apart. */
#include <string.h>
#include "session/session_impl.h"
#include "backend/backend.h"

static int reads_src(const hr__plan *p, const hr__rop *r) {
  for (int j = 0; j < r->n_in; j++)
    if (r->in[j] >= 0 && p->vals[p->vals[r->in[j]].root].storage == S_SRC) return 1;
  return 0;
}

int hr__split_query(const hr_session *s, hr__split_info *si) {
  memset(si, 0, sizeof *si);
  if (!s || s->bk != &hr__backend_cpu) return 0;
  return hr__split_plan_query(s->plan, si);
}

int hr__split_plan_query(const hr__plan *p, hr__split_info *si) {
  memset(si, 0, sizeof *si);
  if (!p || p->src_val < 0 || !p->vals[p->src_val].src_virtual || p->fgr_val >= 0) return 0;
  int tail = -1, src_end = 0;
  for (int i = 0; i < p->n_rops; i++) {
    const hr__rop *r = &p->rops[i];
    if (r->dead) continue;
    if (tail >= 0) return 0;                     /* the tail must be the last op that runs */
    if (r->op == HR_OP_FGF_TAIL) { tail = i; continue; }
    if (reads_src(p, r)) {
      if (r->op != HR_OP_SRC_RESIZE) return 0;
      src_end = i + 1;
    }
  }
  if (tail < 0) return 0;
  const hr__rop *t = &p->rops[tail];
  if (t->n_out != 1 || p->vals[t->out[0]].root != p->vals[p->alpha_val].root || !reads_src(p, t)) return 0;
  /* the network part must not read the frame; the src ops must come before every network op
   * that could depend on them (they do: plans are in dependency order), and must not read the
   * state (nothing before them runs on the worker) */
  const hr__tensor *A = &p->vals[t->in[0]].t, *o = &p->vals[t->out[0]].t;
  if (A->dims[3] != 4 || p->vals[t->in[1]].t.dims[1] != A->dims[1] || p->vals[t->in[1]].t.dims[2] != A->dims[2]) return 0;
  for (int i = 0; i < src_end; i++) {
    const hr__rop *r = &p->rops[i];
    for (int j = 0; j < r->n_in; j++)
      if (r->in[j] >= 0 && p->vals[p->vals[r->in[j]].root].storage == S_STATE) return 0;
  }
  si->src_end = src_end;
  si->tail = tail;
  si->lr_h = (int)A->dims[1]; si->lr_w = (int)A->dims[2];
  si->H = (int)o->dims[1]; si->W = (int)o->dims[2];
  si->clip = t->syn.a.keep_dims;
  return si->H == p->height && si->W == p->width;
}

static hr_status run_range(hr_session *s, int i0, int i1, int alone) {
  unsigned csr = hr__ftz_begin();   /* as in hr_session_push */
  hr_status st = alone ? hr__exec_run_range_alone(s, s->bimpl, i0, i1) : hr__exec_run_range(s, s->bimpl, i0, i1);
  hr__ftz_end(csr);
  return st;
}

hr_status hr__split_run_src(hr_session *s, const hr__split_info *si, const hr_frame *f, int pool) {
  s->cur = *f;
  s->src_ptr = NULL;   /* the input is virtual: read through the frame's rows */
  hr_status st = run_range(s, 0, si->src_end, !pool);   /* without the pool: see exec's _alone */
  s->cur.planes[0] = NULL;
  return st;
}

hr_status hr__split_run_net(hr_session *s, const hr__split_info *si, float *A, float *B) {
  hr_status st = run_range(s, si->src_end, si->tail, 0);
  if (st) return st;
  const hr__rop *t = &s->plan->rops[si->tail];
  const size_t n = (size_t)si->lr_h * si->lr_w;
  hr__tensor a = hr__plan_view(s->plan, t->in[0], s->arena, s->state, NULL);
  hr__tensor b = hr__plan_view(s->plan, t->in[1], s->arena, s->state, NULL);
  const float *pa = a.data, *pb = b.data;
  if (hr__exec_ab_planes(s)) {   /* made as the alpha's planes (fgflr1) */
    memcpy(A, pa, n * sizeof *A);
    memcpy(B, pb, n * sizeof *B);
  } else {
    for (size_t i = 0; i < n; i++) { A[i] = pa[4 * i + 3]; B[i] = pb[4 * i + 3]; }   /* the alpha's channel */
  }
  return HR_OK;
}
