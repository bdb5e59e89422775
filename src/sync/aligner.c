/* Online color/depth aligner: fixed buffers and a three-valued greedy that emits only final pairs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "headroom.h"

#define HR__SYNC_MAX_CAP 1024                 /* 10 bits per index in a packed edge key */
#define HR__SYNC_MAX_WINDOW 1000000000LL      /* 1 s: < 2^30, so a key fits 30 + 20 bits */
#define HR__SYNC_MAX_LATENCY 60000000000LL    /* 60 s */
#define HR__SYNC_TS_LIMIT ((int64_t)1 << 62)  /* |ts| bound: ts +- window never overflows */
#define HR__SYNC_INF INT64_MAX                /* "no future candidate can reach this frame" */
#define HR__SYNC_NONE INT64_MIN               /* force limit that forces nothing */

enum { HR__C_PENDING = 0, HR__C_FINAL = 1 };
/* Per-frame marks of one pass: certainly taken, maybe taken (an unknown candidate or a future
 * frame could take it first), removed from the depth buffer during this decision. */
enum { HR__F_TAKEN = 1, HR__F_MAYBE = 2, HR__F_GONE = 4 };

typedef struct hr__sync_color {
  int64_t ts, dts;      /* own timestamp; the depth frame's once final with one */
  uint64_t id, did;
  uint8_t state, has_d;
  uint32_t flags;       /* HR_ALIGNED_FORCED_* */
} hr__sync_color;

typedef struct hr__sync_depth {
  int64_t ts;
  uint64_t id;
} hr__sync_depth;

struct hr_aligner {
  hr_aligner_params p;
  hr__sync_color *c;    /* sorted by ts; c[0] is undecided whenever nc > 0 (final heads are queued) */
  hr__sync_depth *d;    /* undecided depth frames only, sorted by ts */
  int nc, nd;
  hr_aligned_pair *q;   /* ring of final records waiting for pop */
  int qcap, qhead, qn;
  uint64_t *edges;      /* candidates of one pass, packed (|dt| << 20 | ci << 10 | di): Nc*Nd */
  uint8_t *cf, *df;     /* HR__F_* per frame */
  int16_t *cpart, *ctent, *dtent; /* certain partner; tentative partners (greedy of known frames) */
  int64_t *cfut, *dfut; /* lowest key a future frame's candidate could have here, or INF */
  bool have_c, have_d;  /* a frame of that stream was pushed in this segment */
  int64_t last_c, last_d;
  hr_aligner_stats st;
  char err[192];
};

void hr_aligner_params_default(hr_aligner_params *p) {
  if (!p) return;
  p->window_ns = 16000000;
  p->max_latency_ns = 200000000;
  p->color_capacity = 32;
  p->depth_capacity = 32;
}

#define HR__SYNC_FAIL(...) do { if (err && err_len) snprintf(err, err_len, __VA_ARGS__); return HR_EINVAL; } while (0)
static hr_status hr__sync_check_params(const hr_aligner_params *p, char *err, size_t err_len) {
  if (!p) HR__SYNC_FAIL("aligner params are NULL");
  if (p->window_ns < 0 || p->window_ns > HR__SYNC_MAX_WINDOW)
    HR__SYNC_FAIL("aligner window %lld ns out of range (0..%lld)", (long long)p->window_ns, HR__SYNC_MAX_WINDOW);
  if (p->max_latency_ns < 0 || p->max_latency_ns > HR__SYNC_MAX_LATENCY)
    HR__SYNC_FAIL("aligner max_latency %lld ns out of range (0..%lld)", (long long)p->max_latency_ns,
                  HR__SYNC_MAX_LATENCY);
  if (p->color_capacity < 1 || p->color_capacity > HR__SYNC_MAX_CAP)
    HR__SYNC_FAIL("aligner color_capacity %d out of range (1..%d)", p->color_capacity, HR__SYNC_MAX_CAP);
  if (p->depth_capacity < 1 || p->depth_capacity > HR__SYNC_MAX_CAP)
    HR__SYNC_FAIL("aligner depth_capacity %d out of range (1..%d)", p->depth_capacity, HR__SYNC_MAX_CAP);
  return HR_OK;
}
#undef HR__SYNC_FAIL

hr_status hr_aligner_create(const hr_aligner_params *p, hr_aligner **out, char *err, size_t err_len) {
  if (err && err_len) err[0] = 0;
  if (!out) {
    if (err && err_len) snprintf(err, err_len, "aligner create: out is NULL");
    return HR_EINVAL;
  }
  *out = NULL;
  hr_status s = hr__sync_check_params(p, err, err_len);
  if (s) return s;
  size_t nc = (size_t)p->color_capacity, nd = (size_t)p->depth_capacity, qcap = nc + nd + 1;
  /* One block, carved up: measure, allocate once, never again. */
  size_t off = 0, o_c, o_d, o_q, o_e, o_cfut, o_dfut, o_cpart, o_ctent, o_dtent, o_cf, o_df;
#define HR__TAKE(o, bytes) do { off = (off + 15) & ~(size_t)15; o = off; off += (bytes); } while (0)
  HR__TAKE(o_c, nc * sizeof(hr__sync_color));
  HR__TAKE(o_d, nd * sizeof(hr__sync_depth));
  HR__TAKE(o_q, qcap * sizeof(hr_aligned_pair));
  HR__TAKE(o_e, nc * nd * sizeof(uint64_t));
  HR__TAKE(o_cfut, nc * sizeof(int64_t));
  HR__TAKE(o_dfut, nd * sizeof(int64_t));
  HR__TAKE(o_cpart, nc * sizeof(int16_t));
  HR__TAKE(o_ctent, nc * sizeof(int16_t));
  HR__TAKE(o_dtent, nd * sizeof(int16_t));
  HR__TAKE(o_cf, nc);
  HR__TAKE(o_df, nd);
#undef HR__TAKE
  size_t head = (sizeof(hr_aligner) + 15) & ~(size_t)15;
  char *mem = calloc(1, head + off);
  if (!mem) {
    if (err && err_len) snprintf(err, err_len, "aligner create: out of memory (%zu bytes)", head + off);
    return HR_ENOMEM;
  }
  hr_aligner *a = (hr_aligner *)mem;
  char *base = mem + head;
  a->p = *p;
  a->c = (hr__sync_color *)(base + o_c);
  a->d = (hr__sync_depth *)(base + o_d);
  a->q = (hr_aligned_pair *)(base + o_q);
  a->qcap = (int)qcap;
  a->edges = (uint64_t *)(base + o_e);
  a->cfut = (int64_t *)(base + o_cfut);
  a->dfut = (int64_t *)(base + o_dfut);
  a->cpart = (int16_t *)(base + o_cpart);
  a->ctent = (int16_t *)(base + o_ctent);
  a->dtent = (int16_t *)(base + o_dtent);
  a->cf = (uint8_t *)(base + o_cf);
  a->df = (uint8_t *)(base + o_df);
  a->st.bytes = head + off;
  *out = a;
  return HR_OK;
}

void hr_aligner_destroy(hr_aligner *a) { free(a); }

const char *hr_aligner_last_error(const hr_aligner *a) { return a ? a->err : "aligner is NULL"; }

void hr_aligner_get_stats(const hr_aligner *a, hr_aligner_stats *s) {
  if (!s) return;
  if (!a) { memset(s, 0, sizeof *s); return; }
  *s = a->st;
  s->color_held = a->nc;
  s->depth_held = a->nd;
  s->queued = a->qn;
}

/* ---- one pass of the greedy over the undecided frames ------------------------------------- */

/* Sort packed keys ascending: insertion sort for the usual handful, Shell sort beyond. */
static void hr__sync_sort(uint64_t *v, int n) {
  static const int gaps[] = {701, 301, 132, 57, 23, 10, 4, 1};
  for (int g = 0; g < 8; g++) {
    int gap = gaps[g];
    if (gap >= n) continue;
    for (int i = gap; i < n; i++) {
      uint64_t x = v[i];
      int j = i;
      for (; j >= gap && v[j - gap] > x; j -= gap) v[j] = v[j - gap];
      v[j] = x;
    }
  }
}

/* Lowest |dt| a candidate with a not-yet-pushed frame of the other stream could have here: the
 * other stream's next timestamp is at least last + 1. INF when beyond the window (or at end). */
static int64_t hr__sync_future_key(const hr_aligner *a, int64_t ts, bool have_other, int64_t last_other) {
  int64_t lb = have_other ? last_other + 1 - ts : 0;
  if (lb < 0) lb = 0;
  return lb > a->p.window_ns ? HR__SYNC_INF : lb;
}

/* Runs the greedy over all candidates among undecided frames, in key order, twice at once:
 * two-valued over the known frames (tentative partners, used only to force), and three-valued
 * with future frames as unknowns (HR__F_TAKEN + cpart: final; HR__F_MAYBE: not final). */
static void hr__sync_pass(hr_aligner *a, bool at_end) {
  const int64_t W = a->p.window_ns;
  for (int i = 0; i < a->nc; i++) {
    a->cf[i] = 0;
    a->cpart[i] = a->ctent[i] = -1;
    a->cfut[i] = at_end ? HR__SYNC_INF : hr__sync_future_key(a, a->c[i].ts, a->have_d, a->last_d);
  }
  for (int j = 0; j < a->nd; j++) {
    a->df[j] = 0;
    a->dtent[j] = -1;
    a->dfut[j] = at_end ? HR__SYNC_INF : hr__sync_future_key(a, a->d[j].ts, a->have_c, a->last_c);
  }
  int ne = 0, lo = 0;
  for (int i = 0; i < a->nc; i++) {
    if (a->c[i].state != HR__C_PENDING) continue;
    int64_t ct = a->c[i].ts;
    while (lo < a->nd && a->d[lo].ts < ct - W) lo++;
    for (int j = lo; j < a->nd && a->d[j].ts <= ct + W; j++) {
      int64_t k = a->d[j].ts - ct;
      if (k < 0) k = -k;
      a->edges[ne++] = ((uint64_t)k << 20) | ((uint64_t)i << 10) | (uint64_t)j;
    }
  }
  hr__sync_sort(a->edges, ne);
  for (int e = 0; e < ne; e++) {
    int64_t k = (int64_t)(a->edges[e] >> 20);
    int i = (int)((a->edges[e] >> 10) & 1023), j = (int)(a->edges[e] & 1023);
    if (a->ctent[i] < 0 && a->dtent[j] < 0) { a->ctent[i] = (int16_t)j; a->dtent[j] = (int16_t)i; }
    uint8_t both = a->cf[i] | a->df[j];
    if (both & HR__F_TAKEN) continue;                                    /* refused for sure */
    if ((both & HR__F_MAYBE) || a->cfut[i] < k || a->dfut[j] < k) {      /* depends on the unknown */
      a->cf[i] |= HR__F_MAYBE;
      a->df[j] |= HR__F_MAYBE;
      continue;
    }
    a->cf[i] |= HR__F_TAKEN;                                             /* taken for sure */
    a->df[j] |= HR__F_TAKEN;
    a->cpart[i] = (int16_t)j;
  }
}

/* ---- applying decisions -------------------------------------------------------------------- */

static void hr__sync_enqueue(hr_aligner *a, const hr_aligned_pair *r) {
  /* Room is guaranteed: push refuses when queued + held + 1 > qcap, and a record uses up at
   * least one held frame. */
  a->q[(a->qhead + a->qn) % a->qcap] = *r;
  a->qn++;
  if (a->qn > a->st.queued_peak) a->st.queued_peak = a->qn;
}

static void hr__sync_count_forced(hr_aligner *a, uint32_t flags, int frames) {
  if (flags & HR_ALIGNED_FORCED_FULL) a->st.forced_full += frames;
  else if (flags & HR_ALIGNED_FORCED_LATENCY) a->st.forced_latency += frames;
}

static void hr__sync_final_pair(hr_aligner *a, int i, int j, uint32_t flags) {
  hr__sync_color *c = &a->c[i];
  c->state = HR__C_FINAL;
  c->has_d = 1;
  c->dts = a->d[j].ts;
  c->did = a->d[j].id;
  c->flags |= flags;
  a->df[j] |= HR__F_GONE;
  a->st.pairs++;
  int64_t dt = c->dts - c->ts;
  if (dt < 0) dt = -dt;
  if (dt > a->st.max_abs_dt_ns) a->st.max_abs_dt_ns = dt;
}

static void hr__sync_final_color_only(hr_aligner *a, int i, uint32_t flags) {
  a->c[i].state = HR__C_FINAL;
  a->c[i].has_d = 0;
  a->c[i].flags |= flags;
  a->st.color_unmatched++;
}

static void hr__sync_final_depth_unused(hr_aligner *a, int j, uint32_t flags) {
  hr_aligned_pair r = {HR_ALIGNED_DEPTH_UNUSED, flags, 0, a->d[j].id, 0, a->d[j].ts, 0};
  hr__sync_enqueue(a, &r);
  a->df[j] |= HR__F_GONE;
  a->st.depth_unused++;
}

/* Drops depth frames marked gone, then queues the final color frames at the head (in order). */
static void hr__sync_compact(hr_aligner *a) {
  int w = 0;
  for (int j = 0; j < a->nd; j++)
    if (!(a->df[j] & HR__F_GONE)) a->d[w++] = a->d[j];
  a->nd = w;
  int h = 0;
  for (; h < a->nc && a->c[h].state == HR__C_FINAL; h++) {
    const hr__sync_color *c = &a->c[h];
    hr_aligned_pair r;
    r.kind = c->has_d ? HR_ALIGNED_PAIR : HR_ALIGNED_COLOR_ONLY;
    r.flags = c->flags;
    r.color_id = c->id;
    r.color_ts_ns = c->ts;
    r.depth_id = c->has_d ? c->did : 0;
    r.depth_ts_ns = c->has_d ? c->dts : 0;
    r.dt_ns = c->has_d ? c->dts - c->ts : 0;
    hr__sync_enqueue(a, &r);
  }
  if (h) {
    memmove(a->c, a->c + h, (size_t)(a->nc - h) * sizeof *a->c);
    a->nc -= h;
  }
}

/* Decides everything no future frame can change (at_end: no future frames, so everything). */
static void hr__sync_decide_final(hr_aligner *a, bool at_end) {
  hr__sync_pass(a, at_end);
  for (int i = 0; i < a->nc; i++) {
    if (a->c[i].state != HR__C_PENDING) continue;
    if (a->cf[i] & HR__F_TAKEN) hr__sync_final_pair(a, i, a->cpart[i], 0);
    else if (!(a->cf[i] & HR__F_MAYBE) && a->cfut[i] == HR__SYNC_INF) hr__sync_final_color_only(a, i, 0);
  }
  for (int j = 0; j < a->nd; j++)
    if (!(a->df[j] & (HR__F_TAKEN | HR__F_MAYBE)) && a->dfut[j] == HR__SYNC_INF) hr__sync_final_depth_unused(a, j, 0);
  hr__sync_compact(a);
}

/* Forces undecided colors with ts <= climit and depths with ts <= dlimit: each takes its partner
 * in the greedy of the frames known now (consistent with every final decision, which that greedy
 * contains), then whatever became final through it is decided too. */
static void hr__sync_decide_forced(hr_aligner *a, int64_t climit, int64_t dlimit, uint32_t why) {
  hr__sync_pass(a, false);
  for (int i = 0; i < a->nc && a->c[i].ts <= climit; i++) {
    if (a->c[i].state != HR__C_PENDING) continue;
    int j = a->ctent[i];
    if (j >= 0) { hr__sync_final_pair(a, i, j, why); hr__sync_count_forced(a, why, 2); }
    else { hr__sync_final_color_only(a, i, why); hr__sync_count_forced(a, why, 1); }
  }
  for (int j = 0; j < a->nd && a->d[j].ts <= dlimit; j++) {
    if (a->df[j] & HR__F_GONE) continue;
    int i = a->dtent[j];
    if (i >= 0) { hr__sync_final_pair(a, i, j, why); hr__sync_count_forced(a, why, 2); }
    else { hr__sync_final_depth_unused(a, j, why); hr__sync_count_forced(a, why, 1); }
  }
  hr__sync_compact(a);
  hr__sync_decide_final(a, false);
}

/* ---- public calls -------------------------------------------------------------------------- */

static hr_status hr__sync_push(hr_aligner *a, bool color, int64_t ts, uint64_t id) {
  if (!a) return HR_EINVAL;
  const char *name = color ? "color" : "depth";
  bool have = color ? a->have_c : a->have_d;
  int64_t last = color ? a->last_c : a->last_d;
  if (ts > HR__SYNC_TS_LIMIT || ts < -HR__SYNC_TS_LIMIT) {
    a->st.refused++;
    snprintf(a->err, sizeof a->err, "%s timestamp %lld ns out of range (|ts| <= 2^62)", name, (long long)ts);
    return HR_ERANGE;
  }
  if (have && ts <= last) {
    a->st.refused++;
    snprintf(a->err, sizeof a->err,
             "%s timestamp %lld ns is not after the previous %s frame's %lld ns: timestamps must "
             "strictly increase within a stream (frame refused, not reordered)",
             name, (long long)ts, name, (long long)last);
    return HR_EINVAL;
  }
  if (a->qn + a->nc + a->nd + 1 > a->qcap) {
    a->st.refused++;
    snprintf(a->err, sizeof a->err, "%d aligned records wait for pop: pop them before pushing", a->qn);
    return HR_EAGAIN;
  }
  /* A full buffer forces its oldest undecided frame (c[0] is undecided by the compact invariant). */
  if (color && a->nc == a->p.color_capacity) hr__sync_decide_forced(a, a->c[0].ts, HR__SYNC_NONE, HR_ALIGNED_FORCED_FULL);
  if (!color && a->nd == a->p.depth_capacity) hr__sync_decide_forced(a, HR__SYNC_NONE, a->d[0].ts, HR_ALIGNED_FORCED_FULL);
  if (color) {
    hr__sync_color *c = &a->c[a->nc++];
    memset(c, 0, sizeof *c);
    c->ts = ts;
    c->id = id;
    a->have_c = true;
    a->last_c = ts;
    a->st.color_in++;
    if (a->nc > a->st.color_held_peak) a->st.color_held_peak = a->nc;
  } else {
    a->d[a->nd].ts = ts;
    a->d[a->nd].id = id;
    a->nd++;
    a->have_d = true;
    a->last_d = ts;
    a->st.depth_in++;
    if (a->nd > a->st.depth_held_peak) a->st.depth_held_peak = a->nd;
  }
  hr__sync_decide_final(a, false);
  if (a->p.max_latency_ns > 0) {
    int64_t newest = a->have_c ? a->last_c : a->last_d;
    if (a->have_d && a->last_d > newest) newest = a->last_d;
    int64_t limit = newest - a->p.max_latency_ns - 1;   /* older than newest - max_latency */
    if ((a->nc && a->c[0].ts <= limit) || (a->nd && a->d[0].ts <= limit))
      hr__sync_decide_forced(a, limit, limit, HR_ALIGNED_FORCED_LATENCY);
  }
  return HR_OK;
}

hr_status hr_aligner_push_color(hr_aligner *a, int64_t ts_ns, uint64_t id) { return hr__sync_push(a, true, ts_ns, id); }
hr_status hr_aligner_push_depth(hr_aligner *a, int64_t ts_ns, uint64_t id) { return hr__sync_push(a, false, ts_ns, id); }

hr_status hr_aligner_pop(hr_aligner *a, hr_aligned_pair *out) {
  if (!a || !out) return HR_EINVAL;
  if (!a->qn) return HR_EAGAIN;
  *out = a->q[a->qhead];
  a->qhead = (a->qhead + 1) % a->qcap;
  a->qn--;
  return HR_OK;
}

hr_status hr_aligner_flush(hr_aligner *a) {
  if (!a) return HR_EINVAL;
  hr__sync_decide_final(a, true);   /* no future frames: every candidate is decided */
  a->have_c = a->have_d = false;     /* next push starts a new segment */
  return HR_OK;
}
