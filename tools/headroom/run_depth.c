/* Depth fusion for `headroom run --depth` (issue 7): reads a depth stream just far enough ahead,
 * pairs it with the processed color frames through the online aligner, and writes the person's
 * depth (and an occlusion mask) for every fused pair.
 *
 * Memory: everything is allocated by depth_open (the depth source's pool of DEPTH_POOL frames,
 * the aligner, DEPTH_RING alpha masks of out_w x out_h bytes, the output buffers, a 64 Ki-entry
 * millimetre table); depth_on_color / depth_pop / depth_finish allocate nothing themselves (the
 * source's PNG decoder and the PNG writers keep their own small per-file buffers).
 *
 * Read-ahead: before a color frame at t is pushed, depth frames are read and pushed while the
 * newest one read is at or before t + window (so one beyond it is always in: that is what lets
 * the aligner finalise t's decision). A depth frame stays in the source's pool until the aligner
 * decides it; a read that would recycle the buffer of a depth frame still held is not made
 * (counted as a pool stall) and waits for the aligner's max_latency to force that frame out.
 *
 * Depth values: the source hands out the file's raw 16-bit values (depth_scale 1000 there); they
 * are turned into millimetres here through a table that maps 0 (no reading), 65535 (the sensor's
 * outlier / saturation code) and anything that would not fit below 65535 mm to 0. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include "run_hooks.h"
#include "headroom/io.h"
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

enum {
  DEPTH_POOL = 16,                  /* depth frames the source keeps valid (its pool_size) */
  DEPTH_HELD_CAP = DEPTH_POOL - 2,  /* undecided depth frames the aligner may hold */
  DEPTH_COLOR_CAP = 8,              /* undecided color frames the aligner may hold */
  DEPTH_RING = DEPTH_COLOR_CAP + 1, /* alpha masks: the held colors + the one being pushed */
  DEPTH_QCAP = 2 * DEPTH_RING,      /* decisions waiting for depth_pop */
  DEPTH_MAX_READ_ERRORS = 16,       /* consecutive failed depth reads taken as the end */
};
#define DEPTH_MAX_LATENCY_NS 200000000LL   /* the aligner's max_latency: 200 ms */

typedef struct depth_dec {
  int64_t index;
  double dt_ms;       /* NAN when unpaired */
  int fused;          /* depth (and occlusion) PNGs written */
} depth_dec;

typedef struct depth_slot {
  hr_frame f;         /* borrowed from the source's pool */
  int64_t seq;        /* read number (1-based, failed reads included): the aligner's depth id */
  int live;           /* pushed and not yet decided */
} depth_slot;

struct depth_ctx {
  hr_source *src;
  hr_aligner *al;
  int64_t window_ns;
  double scale, occlude_m;
  uint32_t occl_thr;           /* occluding: 0 < mm < occl_thr; 0 = no occlusion output */
  int aw, ah, dw, dh;
  uint16_t *lut;               /* raw depth value -> mm; 0 for 0, 65535 and out of range */
  int32_t *xmap, *ymap;        /* alpha column / row -> depth column / row (nearest) */
  uint8_t *ring;               /* DEPTH_RING masks, aw*ah bytes each: 1 where alpha >= 0.5 */
  int64_t ring_index[DEPTH_RING];
  int ring_head, ring_n;
  depth_slot held[DEPTH_POOL]; /* slot seq % DEPTH_POOL */
  int held_n, held_peak;
  int64_t reads;
  int64_t last_depth_ts, last_color_ts;
  int have_depth, have_color, depth_eof, flushed, finished, read_err_run;
  depth_dec q[DEPTH_QCAP];
  int qhead, qn;
  uint16_t *dout;              /* aw x ah person depth, mm */
  uint8_t *occ;                /* aw x ah occlusion mask, or NULL */
  int64_t occ_index;           /* color index whose mask is in occ, -1 if none */
  char path[4096];
  size_t dir_len;
  /* counters */
  int64_t colors, pairs, unpaired, fused, write_errors, read_errors, depth_frames, depth_unused;
  int64_t pool_stalls, forced, size_mismatch;
  int64_t max_abs_dt_ns;
  int64_t cost_ns, cost_ns_max;   /* aligner + fusion (mask, pairing, fuse): sum, worst call */
  int64_t read_ns, write_ns;      /* depth PNG decode; depth/occlusion PNG writes */
  int64_t io_ns_call;             /* I/O time within the current call, kept out of the cost */
  char err[512];
};

static int64_t depth_now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}


__attribute__((format(printf, 4, 5)))
static int depth_fail(char *err, size_t err_len, int st, const char *fmt, ...) {
  if (err && err_len) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, err_len, fmt, ap);
    va_end(ap);
  }
  return st;
}

void depth_close(depth_ctx *d) {
  if (!d) return;
  hr_source_destroy(d->src);
  hr_aligner_destroy(d->al);
  free(d->lut);
  free(d->xmap);
  free(d->ymap);
  free(d->ring);
  free(d->dout);
  free(d->occ);
  free(d);
}

int depth_open(depth_ctx **out, const depth_opts *o, char *err, size_t err_len) {
  char e[512];
  if (err && err_len) err[0] = 0;
  if (!out) return HR_EINVAL;
  *out = NULL;
  if (!o || !o->spec || !*o->spec || !o->out_dir || !*o->out_dir)
    return depth_fail(err, err_len, HR_EINVAL, "depth: no depth source or output folder");
  double scale = o->scale == 0 ? 1000.0 : o->scale;
  if (!(scale > 0) || !isfinite(scale))
    return depth_fail(err, err_len, HR_EINVAL, "depth: --depth-scale must be > 0, not %g", o->scale);
  if (!(o->window_ms >= 0 && o->window_ms <= 1000))
    return depth_fail(err, err_len, HR_EINVAL, "depth: --depth-window-ms must be in 0..1000, not %g", o->window_ms);
  if (!(o->occlude_m >= 0) || !isfinite(o->occlude_m))
    return depth_fail(err, err_len, HR_EINVAL, "depth: --occlude-at must be >= 0 metres, not %g", o->occlude_m);
  if (o->out_w <= 0 || o->out_h <= 0 || (int64_t)o->out_w * o->out_h > ((int64_t)1 << 28))
    return depth_fail(err, err_len, HR_EINVAL, "depth: bad alpha size %dx%d", o->out_w, o->out_h);
  if (strlen(o->out_dir) > 4000)
    return depth_fail(err, err_len, HR_EINVAL, "depth: output folder name too long: %.60s...", o->out_dir);

  depth_ctx *d = calloc(1, sizeof *d);
  if (!d) return depth_fail(err, err_len, HR_ENOMEM, "depth: out of memory");
  d->scale = scale;
  d->occlude_m = o->occlude_m;
  d->window_ns = llround(o->window_ms * 1e6);
  d->aw = o->out_w;
  d->ah = o->out_h;
  d->occ_index = -1;

  hr_source_params sp;
  hr_source_params_default(&sp);
  sp.stream = HR_SOURCE_STREAM_DEPTH;
  sp.depth_scale = 1000.0;   /* raw values: 65535 stays recognisable; converted by d->lut */
  sp.pool_size = DEPTH_POOL;
  int st = hr_source_open(o->spec, &sp, &d->src, e, sizeof e);
  if (st) { depth_close(d); return depth_fail(err, err_len, st, "depth: %s", e); }
  hr_pixfmt fmt;
  hr_source_get_format(d->src, &fmt, &d->dw, &d->dh);
  if (fmt != HR_PIX_DEPTH16_MM || d->dw <= 0 || d->dh <= 0) {
    depth_close(d);
    return depth_fail(err, err_len, HR_ENOTSUP, "depth: %s gives %s frames, not 16-bit depth", o->spec, hr_pixfmt_name(fmt));
  }

  hr_aligner_params ap;
  hr_aligner_params_default(&ap);
  ap.window_ns = d->window_ns;
  ap.max_latency_ns = DEPTH_MAX_LATENCY_NS;
  ap.color_capacity = DEPTH_COLOR_CAP;
  ap.depth_capacity = DEPTH_HELD_CAP;
  st = hr_aligner_create(&ap, &d->al, e, sizeof e);
  if (st) { depth_close(d); return depth_fail(err, err_len, st, "depth: %s", e); }

  size_t n = (size_t)d->aw * (size_t)d->ah;
  d->lut = malloc(65536 * sizeof *d->lut);
  d->xmap = malloc((size_t)d->aw * sizeof *d->xmap);
  d->ymap = malloc((size_t)d->ah * sizeof *d->ymap);
  d->ring = malloc(n * DEPTH_RING);
  d->dout = malloc(n * sizeof *d->dout);
  if (o->occlude_m > 0) d->occ = malloc(n);
  if (!d->lut || !d->xmap || !d->ymap || !d->ring || !d->dout || (o->occlude_m > 0 && !d->occ)) {
    depth_close(d);
    return depth_fail(err, err_len, HR_ENOMEM, "depth: out of memory");
  }
  /* Touch every page now, so the first frames do not pay for it. */
  memset(d->ring, 0, n * DEPTH_RING);
  memset(d->dout, 0, n * sizeof *d->dout);
  if (d->occ) memset(d->occ, 0, n);
  double k = 1000.0 / scale;
  d->lut[0] = 0;
  for (uint32_t v = 1; v < 65535; v++) {
    double mm = floor(v * k + 0.5);
    d->lut[v] = mm >= 65535 ? 0 : (uint16_t)mm;
  }
  d->lut[65535] = 0;
  /* Nearest sample at the pixel centre: alpha x covers depth (x + 0.5) * dw / aw. */
  for (int x = 0; x < d->aw; x++) d->xmap[x] = (int32_t)(((2 * (int64_t)x + 1) * d->dw) / (2 * (int64_t)d->aw));
  for (int y = 0; y < d->ah; y++) d->ymap[y] = (int32_t)(((2 * (int64_t)y + 1) * d->dh) / (2 * (int64_t)d->ah));
  if (o->occlude_m > 0) {
    double t = ceil(o->occlude_m * 1000.0);   /* integer mm < x  <=>  mm < ceil(x) */
    d->occl_thr = t > 65535 ? 65535u : t < 1 ? 1u : (uint32_t)t;
  }

  d->dir_len = strlen(o->out_dir);
  memcpy(d->path, o->out_dir, d->dir_len + 1);
  snprintf(d->path + d->dir_len, sizeof d->path - d->dir_len, "/depth");
  if (hr_mkdirs(d->path) ||
      (d->occ && (snprintf(d->path + d->dir_len, sizeof d->path - d->dir_len, "/occlusion"), hr_mkdirs(d->path)))) {
    int en = errno;
    snprintf(e, sizeof e, "%.400s", d->path);
    depth_close(d);
    return depth_fail(err, err_len, HR_EIO, "depth: cannot create %s: %s", e, strerror(en));
  }
  *out = d;
  return HR_OK;
}

/* ---- decisions ----------------------------------------------------------------------------- */

static void depth_queue(depth_ctx *d, int64_t index, double dt_ms, int fused) {
  /* Room is checked on entry to every call that can decide frames (DEPTH_RING per call). */
  d->q[(d->qhead + d->qn) % DEPTH_QCAP] = (depth_dec){index, dt_ms, fused};
  d->qn++;
}

static void depth_release(depth_ctx *d, uint64_t id) {
  depth_slot *s = &d->held[id % DEPTH_POOL];
  if (s->live && (uint64_t)s->seq == id) { s->live = 0; d->held_n--; }
}

static int64_t depth_oldest_held(const depth_ctx *d) {
  int64_t m = 0;
  for (int i = 0; i < DEPTH_POOL; i++)
    if (d->held[i].live && (!m || d->held[i].seq < m)) m = d->held[i].seq;
  return m;
}

/* Person depth (and occlusion) of one pair into d->dout / d->occ. */
static void depth_fuse(depth_ctx *d, const uint8_t *mask, const hr_frame *f) {
  const uint8_t *base = f->planes[0];
  const ptrdiff_t stride = f->strides[0];
  const uint16_t *lut = d->lut;
  const int32_t *xm = d->xmap;
  const uint32_t thr = d->occl_thr;
  /* Same size at 1000 units/m: the table is the identity but for 65535, so go without it. */
  const int direct = d->aw == d->dw && d->ah == d->dh && d->scale == 1000.0;
  for (int y = 0; y < d->ah; y++) {
    const uint16_t *restrict row = (const uint16_t *)(base + (ptrdiff_t)d->ymap[y] * stride);
    const uint8_t *restrict m = mask + (size_t)y * d->aw;
    uint16_t *restrict o = d->dout + (size_t)y * d->aw;
    const int n = d->aw;
    if (direct) {
      int x = 0;
#if defined(__SSE2__)
      /* 8 pixels a step: keep v where the mask is set and v != 65535. */
      const __m128i ones = _mm_set1_epi16(-1), zero = _mm_setzero_si128();
      for (; x + 8 <= n; x += 8) {
        __m128i v = _mm_loadu_si128((const __m128i *)(row + x));
        __m128i mk = _mm_unpacklo_epi8(_mm_loadl_epi64((const __m128i *)(m + x)), zero);   /* 0 / 1 */
        __m128i keep = _mm_andnot_si128(_mm_cmpeq_epi16(v, ones), _mm_cmpgt_epi16(mk, zero));
        _mm_storeu_si128((__m128i *)(o + x), _mm_and_si128(v, keep));
      }
#endif
      /* The rest (and the definition): mask 0/1 times the value, 65535 -> 0. */
      for (; x < n; x++) {
        uint16_t v = row[x];
        o[x] = (uint16_t)((v != 65535) * m[x] * v);
      }
    } else {
      for (int x = 0; x < n; x++) o[x] = m[x] ? lut[row[xm[x]]] : 0;
    }
    if (d->occ) {
      uint8_t *restrict oc = d->occ + (size_t)y * d->aw;
      const uint16_t t1 = (uint16_t)(thr - 1);   /* 0 < v < thr  <=>  v - 1 < thr - 1 (unsigned) */
      int x = 0;
#if defined(__SSE2__)
      /* Unsigned 16-bit compare through the sign flip; 16 pixels a step, packed to bytes. */
      const __m128i flip = _mm_set1_epi16(-32768), one = _mm_set1_epi16(1);
      const __m128i tf = _mm_xor_si128(_mm_set1_epi16((short)t1), flip);
      for (; x + 16 <= n; x += 16) {
        __m128i a = _mm_xor_si128(_mm_sub_epi16(_mm_loadu_si128((const __m128i *)(o + x)), one), flip);
        __m128i b = _mm_xor_si128(_mm_sub_epi16(_mm_loadu_si128((const __m128i *)(o + x + 8)), one), flip);
        _mm_storeu_si128((__m128i *)(oc + x), _mm_packs_epi16(_mm_cmplt_epi16(a, tf), _mm_cmplt_epi16(b, tf)));
      }
#endif
      for (; x < n; x++) oc[x] = (uint8_t)(-(uint8_t)((uint16_t)(o[x] - 1) < t1));
    }
  }
}

static int depth_write(depth_ctx *d, int64_t index) {
  int64_t t0 = depth_now_ns();
  errno = 0;
  size_t room = sizeof d->path - d->dir_len;
  snprintf(d->path + d->dir_len, room, "/depth/%06lld.png", (long long)index);
  int st = hr_png_write_gray16(d->path, d->aw, d->ah, d->dout, (ptrdiff_t)d->aw * 2);
  if (!st && d->occ) {
    snprintf(d->path + d->dir_len, room, "/occlusion/%06lld.png", (long long)index);
    st = hr_png_write_gray8(d->path, d->aw, d->ah, d->occ, d->aw);
  }
  int64_t dt = depth_now_ns() - t0;
  d->write_ns += dt;
  d->io_ns_call += dt;
  if (st) {
    if (d->write_errors++ == 0)
      snprintf(d->err, sizeof d->err, "cannot write %.400s: %s", d->path, errno ? strerror(errno) : hr_status_str(st));
  }
  return st;
}

/* Collect what the aligner decided; fuse pairs. Returns the first write error (decisions are
 * queued all the same). */
static int depth_take(depth_ctx *d) {
  hr_aligned_pair r;
  int rc = 0;
  while (hr_aligner_pop(d->al, &r) == HR_OK) {
    if (r.flags) d->forced++;
    if (r.kind == HR_ALIGNED_DEPTH_UNUSED) {
      depth_release(d, r.depth_id);
      d->depth_unused++;
      continue;
    }
    if (d->ring_n == 0 || (uint64_t)d->ring_index[d->ring_head] + 1 != r.color_id) {
      snprintf(d->err, sizeof d->err, "internal: aligner decided color id %llu out of order",
               (unsigned long long)r.color_id);
      if (!rc) rc = HR_EMISUSE;
      continue;
    }
    int64_t index = d->ring_index[d->ring_head];
    const uint8_t *mask = d->ring + (size_t)d->ring_head * (size_t)d->aw * (size_t)d->ah;
    if (r.kind == HR_ALIGNED_PAIR) {
      depth_slot *s = &d->held[r.depth_id % DEPTH_POOL];
      int fused = 0;
      d->pairs++;
      int64_t adt = r.dt_ns < 0 ? -r.dt_ns : r.dt_ns;
      if (adt > d->max_abs_dt_ns) d->max_abs_dt_ns = adt;
      if (!s->live || (uint64_t)s->seq != r.depth_id) {
        snprintf(d->err, sizeof d->err, "internal: depth frame %llu no longer held", (unsigned long long)r.depth_id);
        if (!rc) rc = HR_EMISUSE;
      } else if (s->f.width != d->dw || s->f.height != d->dh) {
        d->size_mismatch++;
      } else {
        depth_fuse(d, mask, &s->f);
        int st = depth_write(d, index);
        if (st) { if (!rc) rc = st; }
        else { fused = 1; d->fused++; d->occ_index = d->occ ? index : -1; }
      }
      depth_release(d, r.depth_id);
      depth_queue(d, index, (double)r.dt_ns / 1e6, fused);
    } else {
      d->unpaired++;
      depth_queue(d, index, NAN, 0);
    }
    d->ring_head = (d->ring_head + 1) % DEPTH_RING;
    d->ring_n--;
  }
  return rc;
}

/* Read and push depth frames until one lies beyond color_ts + window (or the list ends). */
static int depth_read_ahead(depth_ctx *d, int64_t color_ts) {
  int rc = 0;
  while (!d->depth_eof && (!d->have_depth || d->last_depth_ts <= color_ts + d->window_ns)) {
    int64_t oldest = depth_oldest_held(d);
    if (oldest && d->reads + 1 - oldest >= DEPTH_POOL) { d->pool_stalls++; break; }
    hr_frame f;
    int64_t t0 = depth_now_ns();
    int st = hr_source_read(d->src, &f);
    int64_t t1 = depth_now_ns();
    d->read_ns += t1 - t0;
    d->io_ns_call += t1 - t0;
    d->reads++;
    if (st == HR_EEOF) { d->depth_eof = 1; break; }
    if (st) {
      if (d->read_errors++ == 0) snprintf(d->err, sizeof d->err, "%s", hr_source_last_error(d->src));
      if (++d->read_err_run >= DEPTH_MAX_READ_ERRORS) d->depth_eof = 1;
      continue;
    }
    d->read_err_run = 0;
    d->depth_frames++;
    d->have_depth = 1;
    d->last_depth_ts = f.ts_ns;
    depth_slot *s = &d->held[d->reads % DEPTH_POOL];
    if (hr_aligner_push_depth(d->al, f.ts_ns, (uint64_t)d->reads) != HR_OK) continue;
    *s = (depth_slot){f, d->reads, 1};
    if (++d->held_n > d->held_peak) d->held_peak = d->held_n;
    int r = depth_take(d);
    if (r && !rc) rc = r;
  }
  return rc;
}

static void depth_cost(depth_ctx *d, int64_t t0) {
  int64_t c = depth_now_ns() - t0 - d->io_ns_call;
  d->cost_ns += c;
  if (c > d->cost_ns_max) d->cost_ns_max = c;
}

static void depth_store_mask(depth_ctx *d, uint8_t *restrict m, const float *restrict alpha, int w, int h) {
  if (w == d->aw && h == d->ah) {
    size_t n = (size_t)w * (size_t)h, i = 0;
#if defined(__SSE2__)
    /* 16 a step: compare (NaN -> false), pack the all-ones lanes to bytes, keep bit 0. */
    const __m128 half = _mm_set1_ps(0.5f);
    const __m128i one = _mm_set1_epi8(1);
    for (; i + 16 <= n; i += 16) {
      __m128i a = _mm_castps_si128(_mm_cmpge_ps(_mm_loadu_ps(alpha + i), half));
      __m128i b = _mm_castps_si128(_mm_cmpge_ps(_mm_loadu_ps(alpha + i + 4), half));
      __m128i c = _mm_castps_si128(_mm_cmpge_ps(_mm_loadu_ps(alpha + i + 8), half));
      __m128i e = _mm_castps_si128(_mm_cmpge_ps(_mm_loadu_ps(alpha + i + 12), half));
      __m128i w16 = _mm_packs_epi16(_mm_packs_epi32(a, b), _mm_packs_epi32(c, e));
      _mm_storeu_si128((__m128i *)(m + i), _mm_and_si128(w16, one));
    }
#endif
    for (; i < n; i++) m[i] = alpha[i] >= 0.5f;   /* NaN -> 0 */
    return;
  }
  for (int y = 0; y < d->ah; y++) {
    const float *row = alpha + (size_t)(((2 * (int64_t)y + 1) * h) / (2 * (int64_t)d->ah)) * (size_t)w;
    for (int x = 0; x < d->aw; x++) m[(size_t)y * d->aw + x] = row[((2 * (int64_t)x + 1) * w) / (2 * (int64_t)d->aw)] >= 0.5f;
  }
}

int depth_on_color(depth_ctx *d, int64_t index, int64_t ts_ns, const float *alpha, int w, int h) {
  if (!d || !alpha || w <= 0 || h <= 0) return HR_EINVAL;
  if (d->finished) { snprintf(d->err, sizeof d->err, "color frame after depth_finish"); return HR_EMISUSE; }
  if (d->have_color && ts_ns <= d->last_color_ts) {
    snprintf(d->err, sizeof d->err, "color frame %lld: timestamp %lld ns not after %lld ns", (long long)index,
             (long long)ts_ns, (long long)d->last_color_ts);
    return HR_EINVAL;
  }
  if (d->qn > DEPTH_QCAP - DEPTH_RING) { snprintf(d->err, sizeof d->err, "decisions not popped"); return HR_EAGAIN; }
  int64_t t0 = depth_now_ns();
  d->io_ns_call = 0;
  int rc = 0;
  if (!d->flushed) rc = depth_read_ahead(d, ts_ns);
  /* Depth list over and this frame beyond its last depth frame's window: no later color can pair,
   * so everything held is decided by the exact rule now, and later frames go without depth. */
  if (!d->flushed && d->depth_eof && (!d->have_depth || ts_ns > d->last_depth_ts + d->window_ns)) {
    hr_aligner_flush(d->al);
    int r = depth_take(d);
    if (r && !rc) rc = r;
    d->flushed = 1;
  }
  d->colors++;
  d->have_color = 1;
  d->last_color_ts = ts_ns;
  if (d->flushed) {
    d->unpaired++;
    depth_queue(d, index, NAN, 0);
  } else if (d->ring_n >= DEPTH_RING) {
    snprintf(d->err, sizeof d->err, "internal: alpha ring full");
    if (!rc) rc = HR_EMISUSE;
  } else {
    int slot = (d->ring_head + d->ring_n) % DEPTH_RING;
    depth_store_mask(d, d->ring + (size_t)slot * (size_t)d->aw * (size_t)d->ah, alpha, w, h);
    d->ring_index[slot] = index;
    if (hr_aligner_push_color(d->al, ts_ns, (uint64_t)index + 1) == HR_OK) {
      d->ring_n++;
      int r = depth_take(d);
      if (r && !rc) rc = r;
    } else {
      snprintf(d->err, sizeof d->err, "%s", hr_aligner_last_error(d->al));
      if (!rc) rc = HR_EINVAL;
    }
  }
  depth_cost(d, t0);
  return rc;
}

int depth_finish(depth_ctx *d) {
  if (!d) return HR_EINVAL;
  if (d->finished) return HR_OK;
  if (d->qn > DEPTH_QCAP - DEPTH_RING) { snprintf(d->err, sizeof d->err, "decisions not popped"); return HR_EAGAIN; }
  int64_t t0 = depth_now_ns();
  d->io_ns_call = 0;
  int rc = 0;
  if (!d->flushed) {
    hr_aligner_flush(d->al);
    rc = depth_take(d);
    d->flushed = 1;
  }
  d->finished = 1;
  depth_cost(d, t0);
  return rc;
}

int depth_pop(depth_ctx *d, int64_t *index, double *dt_ms, int *fused) {
  if (!d || !d->qn) return 0;
  depth_dec *q = &d->q[d->qhead];
  if (index) *index = q->index;
  if (dt_ms) *dt_ms = q->dt_ms;
  if (fused) *fused = q->fused;
  d->qhead = (d->qhead + 1) % DEPTH_QCAP;
  d->qn--;
  return 1;
}

/* The occlusion mask of the newest fused frame (out_w x out_h, 255 = occluding), valid until the
 * next depth_on_color / depth_finish; NULL without --occlude-at or before the first fused frame. */
const uint8_t *depth_last_occlusion(const depth_ctx *d, int64_t *index) {
  if (!d || d->occ_index < 0) return NULL;
  if (index) *index = d->occ_index;
  return d->occ;
}

/* One line for the run summary, without a "depth:" prefix (the caller adds one); ~200 bytes,
 * more when something went wrong (errors, stalls, forced decisions, and the first message). */
void depth_summary(const depth_ctx *d, char *buf, size_t n) {
  if (!buf || !n) return;
  if (!d) { snprintf(buf, n, "off"); return; }
  int k = snprintf(buf, n,
                   "%lld color frames: %lld fused within %g ms (max |dt| %.2f ms), %lld without depth; %lld depth frames, "
                   "%lld unused; align+fuse %.0f us/frame (worst %.0f), decode %.1f ms/depth, write %.1f ms/fused",
                   (long long)d->colors, (long long)d->fused, (double)d->window_ns / 1e6, (double)d->max_abs_dt_ns / 1e6,
                   (long long)d->unpaired, (long long)d->depth_frames, (long long)d->depth_unused,
                   d->colors ? (double)d->cost_ns / 1e3 / (double)d->colors : 0, (double)d->cost_ns_max / 1e3,
                   d->depth_frames ? (double)d->read_ns / 1e6 / (double)d->depth_frames : 0,
                   d->fused ? (double)d->write_ns / 1e6 / (double)d->fused : 0);
  if (k > 0 && (size_t)k < n && d->pairs != d->fused)
    k += snprintf(buf + k, n - (size_t)k, "; %lld paired but not written", (long long)(d->pairs - d->fused));
  if (k > 0 && (size_t)k < n && (d->read_errors || d->write_errors || d->pool_stalls || d->forced || d->size_mismatch))
    k += snprintf(buf + k, n - (size_t)k, "; %lld read errors, %lld write errors, %lld pool stalls, %lld forced, %lld size mismatches",
                  (long long)d->read_errors, (long long)d->write_errors, (long long)d->pool_stalls, (long long)d->forced,
                  (long long)d->size_mismatch);
  if (k > 0 && (size_t)k < n && d->err[0]) snprintf(buf + k, n - (size_t)k, " (%s)", d->err);
}
