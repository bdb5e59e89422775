/* Depth fusion inside the stream: depth frames are copied into a fixed pool and paired with the
 * color frames' mattes by the online aligner (sync.h); each pair becomes the person's depth in mm
 * (the depth value where the matte is >= 0.5, else 0) and, with occlude_m, an occlusion mask.
 *
 * Memory, all at create: the pool (HR_STREAM_DEPTH_POOL depth frames), the aligner (8 colors, 15
 * depth frames), the ring (HR_STREAM_DEPTH_RING slots of aw x ah uint16: a color frame's 0/1 mask
 * while undecided, its person depth once fused, in place), a 64 Ki-entry mm table, the nearest-
 * sample maps and two occlusion buffers (the result's, the pop's). Ring slots are used in frame
 * order: decided-and-queued frames first, then undecided ones. A queued decision keeps its slot
 * until it is popped or dropped at the next push, so the ring never holds more than the aligner's
 * 8 undecided colors + the one being pushed. A depth frame leaves the pool as soon as it is decided
 * (fused at once, or unused). Nothing here allocates after create. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "headroom.h"
#include "stream/depth.h"
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

enum {
  POOL = HR_STREAM_DEPTH_POOL,
  RING = HR_STREAM_DEPTH_RING,
  COLOR_CAP = RING - 1,          /* the aligner's color capacity */
  DEPTH_CAP = POOL - 1,          /* the aligner's depth capacity: one slot stays free for a push */
  QCAP = 2 * RING + 2,           /* decisions waiting for pop (bounded by RING; room to spare) */
};
#define MAX_LATENCY_NS 200000000LL   /* the aligner's max_latency */

typedef struct dslot { int64_t seq; int live; } dslot;

typedef struct dec {
  int64_t frame;
  int paired, fused, slot;     /* slot: the ring slot held (person depth when fused), -1 none */
  uint32_t flags;
  int64_t dt_ns, depth_ts;
} dec;

struct hr__depth {
  int64_t window_ns;
  double scale;
  uint32_t occl_thr;           /* occluding: 0 < mm < occl_thr; 0 = no occlusion output */
  int aw, ah, dw, dh;
  size_t an, dn;               /* aw*ah, dw*dh */
  hr_aligner *al;
  uint16_t *lut;               /* raw value -> mm; 0 for 0, 65535 and out of range */
  int32_t *xmap, *ymap;        /* matte column / row -> depth column / row (nearest) */
  uint16_t *pool;              /* POOL frames of dw*dh */
  dslot ds[POOL];
  int held, held_peak;
  int64_t seq;                 /* depth frames accepted (ids 1..) */
  uint16_t *ring;              /* RING slots of aw*ah */
  int64_t ring_frame[RING];
  int ring_head, ring_q, ring_u;  /* first slot in use; slots of queued decisions, then undecided */
  dec q[QCAP];
  int qhead, qn, stale;        /* stale: the head decisions the last push reported */
  uint8_t *occ_res, *occ_pop;
  int64_t last_color_ts, last_depth_ts;
  int have_color, have_depth, depth_eof, flushed;
  int unpaired_new;
  /* counters */
  int64_t colors, pairs, fused, unpaired, depth_frames, depth_unused, forced, refused, max_abs_dt_ns;
  double ms, ms_max;
  char err[256];
};

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

__attribute__((format(printf, 3, 4)))
static hr_status dfail(hr__depth *d, hr_status st, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(d->err, sizeof d->err, fmt, ap);
  va_end(ap);
  return st;
}

static void errf(char *err, size_t n, const char *fmt, ...) {
  if (!err || !n) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, n, fmt, ap);
  va_end(ap);
}

void hr__depth_destroy(hr__depth *d) {
  if (!d) return;
  hr_aligner_destroy(d->al);
  free(d->lut);
  free(d->xmap);
  free(d->ymap);
  free(d->pool);
  free(d->ring);
  free(d->occ_res);
  free(d->occ_pop);
  free(d);
}

hr_status hr__depth_create(const hr_stream_params *p, int aw, int ah, hr__depth **out, char *err, size_t err_len) {
  *out = NULL;
  const double scale = p->depth_scale, win = p->depth_window_ms, occ = p->occlude_m;
  int dw = p->depth_width, dh = p->depth_height;
  if (!dw || !dh) {
    dw = p->session.frame_width ? p->session.frame_width : p->session.width;
    dh = p->session.frame_height ? p->session.frame_height : p->session.height;
  }
  if (!(scale > 0) || !isfinite(scale)) { errf(err, err_len, "depth: depth_scale must be > 0, not %g", scale); return HR_EINVAL; }
  if (!(win >= 0 && win <= 1000)) { errf(err, err_len, "depth: depth_window_ms must be in 0..1000, not %g", win); return HR_EINVAL; }
  if (!(occ >= 0) || !isfinite(occ)) { errf(err, err_len, "depth: occlude_m must be >= 0 metres, not %g", occ); return HR_EINVAL; }
  if (dw <= 0 || dh <= 0 || (int64_t)dw * dh > ((int64_t)1 << 26))
    { errf(err, err_len, "depth: bad depth frame size %dx%d", dw, dh); return HR_EINVAL; }
  if (aw <= 0 || ah <= 0 || (int64_t)aw * ah > ((int64_t)1 << 28)) { errf(err, err_len, "depth: bad matte size %dx%d", aw, ah); return HR_EINVAL; }
  hr__depth *d = calloc(1, sizeof *d);
  if (!d) { errf(err, err_len, "depth: out of memory"); return HR_ENOMEM; }
  d->scale = scale;
  d->window_ns = llround(win * 1e6);
  d->aw = aw; d->ah = ah; d->dw = dw; d->dh = dh;
  d->an = (size_t)aw * (size_t)ah;
  d->dn = (size_t)dw * (size_t)dh;
  hr_aligner_params ap;
  hr_aligner_params_default(&ap);
  ap.window_ns = d->window_ns;
  ap.max_latency_ns = MAX_LATENCY_NS;
  ap.color_capacity = COLOR_CAP;
  ap.depth_capacity = DEPTH_CAP;
  char e[256];
  hr_status st = hr_aligner_create(&ap, &d->al, e, sizeof e);
  if (st) { hr__depth_destroy(d); errf(err, err_len, "depth: %s", e); return st; }
  d->lut = malloc(65536 * sizeof *d->lut);
  d->xmap = malloc((size_t)aw * sizeof *d->xmap);
  d->ymap = malloc((size_t)ah * sizeof *d->ymap);
  d->pool = malloc(d->dn * POOL * sizeof *d->pool);
  d->ring = malloc(d->an * RING * sizeof *d->ring);
  if (occ > 0) { d->occ_res = malloc(d->an); d->occ_pop = malloc(d->an); }
  if (!d->lut || !d->xmap || !d->ymap || !d->pool || !d->ring || (occ > 0 && (!d->occ_res || !d->occ_pop))) {
    hr__depth_destroy(d);
    errf(err, err_len, "depth: out of memory");
    return HR_ENOMEM;
  }
  /* Touch every page now, so the first frames do not pay for it. */
  memset(d->pool, 0, d->dn * POOL * sizeof *d->pool);
  memset(d->ring, 0, d->an * RING * sizeof *d->ring);
  if (d->occ_res) { memset(d->occ_res, 0, d->an); memset(d->occ_pop, 0, d->an); }
  double k = 1000.0 / scale;
  d->lut[0] = 0;
  for (uint32_t v = 1; v < 65535; v++) {
    double mm = floor(v * k + 0.5);
    d->lut[v] = mm >= 65535 ? 0 : (uint16_t)mm;
  }
  d->lut[65535] = 0;
  /* Nearest sample at the pixel centre: matte x covers depth (x + 0.5) * dw / aw. */
  for (int x = 0; x < aw; x++) d->xmap[x] = (int32_t)(((2 * (int64_t)x + 1) * dw) / (2 * (int64_t)aw));
  for (int y = 0; y < ah; y++) d->ymap[y] = (int32_t)(((2 * (int64_t)y + 1) * dh) / (2 * (int64_t)ah));
  if (occ > 0) {
    double t = ceil(occ * 1000.0);   /* integer mm < x  <=>  mm < ceil(x) */
    d->occl_thr = t > 65535 ? 65535u : t < 1 ? 1u : (uint32_t)t;
  }
  *out = d;
  return HR_OK;
}

const char *hr__depth_last_error(const hr__depth *d) { return d ? d->err : ""; }

int hr__depth_take_unpaired(hr__depth *d) {
  int n = d->unpaired_new;
  d->unpaired_new = 0;
  return n;
}

/* ---- fusion ---------------------------------------------------------------------------------- */

/* The 0/1 mask of a matte into a ring slot (nearest sample when the sizes differ; NaN -> 0). */
static void store_mask(const hr__depth *d, uint16_t *restrict m, const float *restrict alpha, int w, int h) {
  if (w == d->aw && h == d->ah) {
    size_t n = d->an, i = 0;
#if defined(__SSE2__)
    const __m128 half = _mm_set1_ps(0.5f);
    const __m128i one = _mm_set1_epi16(1);
    for (; i + 8 <= n; i += 8) {
      __m128i a = _mm_castps_si128(_mm_cmpge_ps(_mm_loadu_ps(alpha + i), half));
      __m128i b = _mm_castps_si128(_mm_cmpge_ps(_mm_loadu_ps(alpha + i + 4), half));
      _mm_storeu_si128((__m128i *)(m + i), _mm_and_si128(_mm_packs_epi32(a, b), one));
    }
#endif
    for (; i < n; i++) m[i] = alpha[i] >= 0.5f;
    return;
  }
  for (int y = 0; y < d->ah; y++) {
    const float *row = alpha + (size_t)(((2 * (int64_t)y + 1) * h) / (2 * (int64_t)d->ah)) * (size_t)w;
    for (int x = 0; x < d->aw; x++) m[(size_t)y * d->aw + x] = row[((2 * (int64_t)x + 1) * w) / (2 * (int64_t)d->aw)] >= 0.5f;
  }
}

/* The slot's mask becomes the person depth, in place, from one pooled depth frame. */
static void fuse(const hr__depth *d, uint16_t *slot, const uint16_t *dep) {
  const uint16_t *lut = d->lut;
  const int32_t *xm = d->xmap;
  /* Same size at 1000 units/m: the table is the identity but for 65535, so go without it. */
  const int direct = d->aw == d->dw && d->ah == d->dh && d->scale == 1000.0;
  const int n = d->aw;
  for (int y = 0; y < d->ah; y++) {
    const uint16_t *restrict row = dep + (size_t)d->ymap[y] * (size_t)d->dw;
    uint16_t *restrict o = slot + (size_t)y * (size_t)n;
    if (direct) {
      int x = 0;
#if defined(__SSE2__)
      /* 8 pixels a step: keep v where the mask is set and v != 65535. */
      const __m128i ones = _mm_set1_epi16(-1), zero = _mm_setzero_si128();
      for (; x + 8 <= n; x += 8) {
        __m128i v = _mm_loadu_si128((const __m128i *)(row + x));
        __m128i mk = _mm_loadu_si128((const __m128i *)(o + x));   /* 0 / 1 */
        __m128i keep = _mm_andnot_si128(_mm_cmpeq_epi16(v, ones), _mm_cmpgt_epi16(mk, zero));
        _mm_storeu_si128((__m128i *)(o + x), _mm_and_si128(v, keep));
      }
#endif
      for (; x < n; x++) { uint16_t v = row[x]; o[x] = (uint16_t)((v != 65535) * o[x] * v); }
    } else {
      for (int x = 0; x < n; x++) o[x] = o[x] ? lut[row[xm[x]]] : 0;
    }
  }
}

/* Occlusion of a person depth: 255 where 0 < mm < threshold. */
static void occlusion(const hr__depth *d, const uint16_t *restrict pm, uint8_t *restrict oc) {
  const uint16_t t1 = (uint16_t)(d->occl_thr - 1);   /* 0 < v < thr  <=>  v - 1 < thr - 1 (unsigned) */
  size_t n = d->an, x = 0;
#if defined(__SSE2__)
  /* Unsigned 16-bit compare through the sign flip; 16 pixels a step, packed to bytes. */
  const __m128i flip = _mm_set1_epi16(-32768), one = _mm_set1_epi16(1);
  const __m128i tf = _mm_xor_si128(_mm_set1_epi16((short)t1), flip);
  for (; x + 16 <= n; x += 16) {
    __m128i a = _mm_xor_si128(_mm_sub_epi16(_mm_loadu_si128((const __m128i *)(pm + x)), one), flip);
    __m128i b = _mm_xor_si128(_mm_sub_epi16(_mm_loadu_si128((const __m128i *)(pm + x + 8)), one), flip);
    _mm_storeu_si128((__m128i *)(oc + x), _mm_packs_epi16(_mm_cmplt_epi16(a, tf), _mm_cmplt_epi16(b, tf)));
  }
#endif
  for (; x < n; x++) oc[x] = (uint8_t)(-(uint8_t)((uint16_t)(pm[x] - 1) < t1));
}

/* ---- decisions ------------------------------------------------------------------------------- */

static void drop_head(hr__depth *d) {
  if (d->q[d->qhead].slot >= 0) { d->ring_head = (d->ring_head + 1) % RING; d->ring_q--; }
  d->qhead = (d->qhead + 1) % QCAP;
  d->qn--;
  if (d->stale > 0) d->stale--;
}

static void queue(hr__depth *d, dec e) {
  if (d->qn == QCAP) drop_head(d);   /* cannot happen (see QCAP); keeps the ring consistent if it did */
  d->q[(d->qhead + d->qn) % QCAP] = e;
  d->qn++;
}

static void release_depth(hr__depth *d, uint64_t id) {
  for (int i = 0; i < POOL; i++)
    if (d->ds[i].live && (uint64_t)d->ds[i].seq == id) { d->ds[i].live = 0; d->held--; return; }
}

/* Collect what the aligner decided; fuse pairs. */
static hr_status take(hr__depth *d) {
  hr_aligned_pair r;
  hr_status rc = HR_OK;
  while (hr_aligner_pop(d->al, &r) == HR_OK) {
    if (r.flags) d->forced++;
    if (r.kind == HR_ALIGNED_DEPTH_UNUSED) { release_depth(d, r.depth_id); d->depth_unused++; continue; }
    int slot = (d->ring_head + d->ring_q) % RING;
    if (!d->ring_u || (uint64_t)d->ring_frame[slot] + 1 != r.color_id) {
      rc = dfail(d, HR_EMISUSE, "internal: aligner decided color id %llu out of order", (unsigned long long)r.color_id);
      continue;
    }
    dec e = {d->ring_frame[slot], 0, 0, slot, r.flags, 0, 0};
    if (r.kind == HR_ALIGNED_PAIR) {
      int k = -1;
      for (int i = 0; i < POOL; i++) if (d->ds[i].live && (uint64_t)d->ds[i].seq == r.depth_id) k = i;
      e.paired = 1; e.dt_ns = r.dt_ns; e.depth_ts = r.depth_ts_ns;
      d->pairs++;
      int64_t adt = r.dt_ns < 0 ? -r.dt_ns : r.dt_ns;
      if (adt > d->max_abs_dt_ns) d->max_abs_dt_ns = adt;
      if (k >= 0) {
        fuse(d, d->ring + (size_t)slot * d->an, d->pool + (size_t)k * d->dn);
        e.fused = 1;
        d->fused++;
        release_depth(d, r.depth_id);
      } else {
        rc = dfail(d, HR_EMISUSE, "internal: depth frame %llu no longer held", (unsigned long long)r.depth_id);
      }
    } else {
      d->unpaired++;
      d->unpaired_new++;
    }
    d->ring_u--;
    d->ring_q++;
    queue(d, e);
  }
  return rc;
}

static void cost(hr__depth *d, double t0) {
  double c = now_ms() - t0;
  d->ms += c;
  if (c > d->ms_max) d->ms_max = c;
}

hr_status hr__depth_push_depth(hr__depth *d, const hr_frame *f) {
  if (!f) { d->depth_eof = 1; return HR_OK; }
  char why[160];
  if (hr_frame_validate(f, why, sizeof why)) { d->refused++; return dfail(d, HR_EINVAL, "depth frame: %s", why); }
  if (f->fmt != HR_PIX_DEPTH16_MM || f->width != d->dw || f->height != d->dh) {
    d->refused++;
    return dfail(d, HR_EINVAL, "depth frame %s %dx%d: the stream takes depth16 %dx%d", hr_pixfmt_name(f->fmt), f->width, f->height,
                 d->dw, d->dh);
  }
  const double t0 = now_ms();
  if (d->flushed) { d->flushed = 0; d->depth_eof = 0; d->have_color = d->have_depth = 0; }   /* a new segment */
  int k = 0;
  while (k < POOL && d->ds[k].live) k++;
  if (k == POOL) { d->refused++; return dfail(d, HR_EMISUSE, "internal: depth pool full"); }   /* held <= DEPTH_CAP */
  hr_status st = hr_aligner_push_depth(d->al, f->ts_ns, (uint64_t)(d->seq + 1));
  if (st) { d->refused++; return dfail(d, HR_EINVAL, "depth frame: %s", hr_aligner_last_error(d->al)); }
  d->seq++;
  uint16_t *dst = d->pool + (size_t)k * d->dn;
  for (int y = 0; y < d->dh; y++)
    memcpy(dst + (size_t)y * d->dw, (const uint8_t *)f->planes[0] + (ptrdiff_t)y * f->strides[0], (size_t)d->dw * 2);
  d->ds[k] = (dslot){d->seq, 1};
  if (++d->held > d->held_peak) d->held_peak = d->held;
  d->depth_frames++;
  d->have_depth = 1;
  d->last_depth_ts = f->ts_ns;
  st = take(d);
  cost(d, t0);
  return st;
}

static void fill(hr__depth *d, const dec *e, uint8_t *occ, hr_stream_depth *out) {
  memset(out, 0, sizeof *out);
  out->frame = e->frame;
  out->paired = e->paired;
  out->fused = e->fused;
  out->flags = e->flags;
  out->dt_ms = e->paired ? (double)e->dt_ns / 1e6 : NAN;
  out->depth_ts_ns = e->depth_ts;
  out->width = d->aw;
  out->height = d->ah;
  if (e->fused) {
    out->person_mm = d->ring + (size_t)e->slot * d->an;
    if (occ) { occlusion(d, out->person_mm, occ); out->occlusion = occ; }
  }
}

hr_status hr__depth_push_color(hr__depth *d, int64_t frame, int64_t ts_ns, const float *alpha, int w, int h,
                               hr_stream_depth *out, hr_telemetry_record *rec) {
  const double t0 = now_ms();
  hr_status rc = HR_OK;
  while (d->stale > 0) drop_head(d);   /* reported by the previous push and not popped */
  if (alpha && w > 0 && h > 0) {
    if (d->have_color && ts_ns <= d->last_color_ts) {
      d->refused++;
      rc = dfail(d, HR_EINVAL, "depth pairing: color frame %lld at %lld ns is not after %lld ns", (long long)frame, (long long)ts_ns,
                 (long long)d->last_color_ts);
    } else {
      /* Depth over and this frame beyond its last depth frame's window: no later color can pair,
       * so everything held is decided by the exact rule now, and later frames go without depth. */
      if (!d->flushed && d->depth_eof && (!d->have_depth || ts_ns > d->last_depth_ts + d->window_ns)) {
        hr_aligner_flush(d->al);
        rc = take(d);
        d->flushed = 1;
      }
      d->colors++;
      d->have_color = 1;
      d->last_color_ts = ts_ns;
      if (d->flushed) {
        d->unpaired++;
        d->unpaired_new++;
        queue(d, (dec){frame, 0, 0, -1, 0, 0, 0});
      } else if (d->ring_q + d->ring_u >= RING) {   /* cannot happen: <= COLOR_CAP here (see the top) */
        d->refused++;
        rc = dfail(d, HR_EMISUSE, "internal: depth ring full");
      } else {
        int slot = (d->ring_head + d->ring_q + d->ring_u) % RING;
        store_mask(d, d->ring + (size_t)slot * d->an, alpha, w, h);
        d->ring_frame[slot] = frame;
        if (hr_aligner_push_color(d->al, ts_ns, (uint64_t)frame + 1) == HR_OK) {
          d->ring_u++;
          hr_status r = take(d);
          if (r && !rc) rc = r;
        } else {
          d->refused++;
          rc = dfail(d, HR_EINVAL, "depth pairing: %s", hr_aligner_last_error(d->al));
        }
      }
    }
  }
  /* the result's decision: this frame's, else the newest one waiting */
  memset(out, 0, sizeof *out);
  out->frame = -1;
  out->dt_ms = NAN;
  int pick = -1;
  for (int i = 0; i < d->qn; i++) if (d->q[(d->qhead + i) % QCAP].frame == frame) pick = i;
  if (pick < 0 && d->qn) pick = d->qn - 1;
  if (pick >= 0) {
    const dec *e = &d->q[(d->qhead + pick) % QCAP];
    fill(d, e, d->occ_res, out);
    if (e->frame == frame && rec) { rec->depth_fused = e->fused != 0; rec->depth_dt_ms = e->fused ? out->dt_ms : NAN; }
  }
  out->waiting = d->qn;
  d->stale = d->qn;
  cost(d, t0);
  return rc;
}

hr_status hr__depth_pop(hr__depth *d, hr_stream_depth *out) {
  if (!d || !d->qn) return HR_EAGAIN;
  fill(d, &d->q[d->qhead], d->occ_pop, out);
  drop_head(d);
  return HR_OK;
}

hr_status hr__depth_flush(hr__depth *d) {
  const double t0 = now_ms();
  hr_status rc = HR_OK;
  if (!d->flushed) {
    hr_aligner_flush(d->al);
    rc = take(d);
  }
  d->flushed = 0; d->depth_eof = 0; d->have_color = d->have_depth = 0;   /* the next frames start a new segment */
  cost(d, t0);
  return rc;
}

void hr__depth_stats(const hr__depth *d, hr_stream_stats *st) {
  st->depth_frames = d->depth_frames;
  st->depth_refused = d->refused;
  st->depth_colors = d->colors;
  st->depth_pairs = d->pairs;
  st->depth_fused = d->fused;
  st->depth_unpaired = d->unpaired;
  st->depth_unused = d->depth_unused;
  st->depth_forced = d->forced;
  st->depth_max_abs_dt_ms = (double)d->max_abs_dt_ns / 1e6;
  st->depth_ms = d->ms;
  st->depth_ms_max = d->ms_max;
  st->depth_held_peak = d->held_peak;
}
