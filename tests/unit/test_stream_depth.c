/* Depth fusion inside hr_stream, through the public API alone, on the real RealSense D435 desk
 * recording's timestamps and 640x480 depth maps (mm). The desk has no person in it, so the color
 * pixels are the sam2-bedroom frames (a person; RVM at 256x144 from 960x540) carrying the desk's
 * color timestamps: the mattes are real and not empty, so the person depth is a real check.
 * (1) depth timestamps jittered by -6..+6 ms and 1 in 4 dropped, pushed just far enough ahead of
 *     each color frame: the pairs are exactly hr_associate_offline's on the same timestamps
 *     (16 ms window), nothing forced, every decision once and in frame order; on a few fused frames
 *     the person depth is the depth map's nearest sample (65535 -> 0) where alpha >= 0.5, else 0,
 *     pixel for pixel, and the occlusion mask is 0 < mm < 1000; the telemetry record of a frame
 *     decided in its own push carries its dt;
 * (2) exact timestamps (a new segment): every frame is decided in its own push (the timing
 *     contract), paired at dt 0;
 * (3) a depth frame 17 ms away is not fused, one 16 ms away is (the window is inclusive);
 * (4) misuse: a depth frame of another size or out of order is refused and counted, a stream
 *     without depth refuses depth frames;
 * (5) pushes with depth (push_depth, push, pop) allocate nothing in steady state;
 * (6) tail every frame: the matte fused is the result's alpha (the tail's, at 960x540), frame for
 *     frame, decided in its own push. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "headroom.h"
#include "headroom/io.h"
#include "hr_test.h"

#include "hr_alloc_count.h"

#define NC 32      /* color frames */
#define ND 48      /* depth frames read (more than the colors' window needs) */
#define MS 1000000LL
enum { AW = 256, AH = 144 };

typedef struct { int64_t ts; const uint16_t *px; } dframe;

static hr_frame depth_frame(const dframe *d, int w, int h) {
  hr_frame f;
  memset(&f, 0, sizeof f);
  f.fmt = HR_PIX_DEPTH16_MM; f.width = w; f.height = h;
  f.planes[0] = d->px; f.strides[0] = (ptrdiff_t)w * 2;
  f.ts_ns = d->ts;
  return f;
}

static int dw, dh;
static float *alphas;        /* NC + 16 mattes */
static uint16_t *depths;     /* ND maps */

/* person depth and occlusion of one decision (aw x ah) against the depth map and the matte */
static int check_pixels_at(const hr_stream_depth *dd, const uint16_t *dep, const float *alpha, int aw, int ah, int64_t *person) {
  int bad = 0;
  if (dd->width != aw || dd->height != ah) return aw * ah;
  for (int y = 0; y < ah; y++)
    for (int x = 0; x < aw; x++) {
      int sx = (int)(((2 * (int64_t)x + 1) * dw) / (2 * aw)), sy = (int)(((2 * (int64_t)y + 1) * dh) / (2 * ah));
      uint16_t v = dep[(size_t)sy * dw + sx];
      uint16_t want = alpha[(size_t)y * aw + x] >= 0.5f && v != 65535 ? v : 0;
      uint16_t got = dd->person_mm[(size_t)y * aw + x];
      bad += got != want;
      *person += got != 0;
      if (dd->occlusion) bad += dd->occlusion[(size_t)y * aw + x] != (want && want < 1000 ? 255 : 0);
    }
  return bad;
}
static int check_pixels(const hr_stream_depth *dd, const uint16_t *dep, const float *alpha, int64_t *person) {
  return check_pixels_at(dd, dep, alpha, AW, AH, person);
}

int main(void) {
  char mp[1024], dp[1024], bp[1024], err[512];
  if (!hr_test_path("HR_MODEL_DIR", "rvm.json", mp, sizeof mp)) SKIP("HR_MODEL_DIR is not set");
  if (!hr_test_path("HR_DATA_DIR", "realsense-d435-desk", dp, sizeof dp) || !hr_test_path("HR_DATA_DIR", "sam2-bedroom/frames", bp, sizeof bp))
    SKIP("HR_DATA_DIR is not set");
  if (!HR_COUNTING) printf("AddressSanitizer build: allocation counting off (ASan owns malloc); the other checks run\n");
  hr_model *m = NULL;
  CHECK_EQ_INT(hr_model_load(mp, &m, err, sizeof err), HR_OK);
  hr_source_params sp;
  hr_source_params_default(&sp);
  sp.pool_size = NC;
  hr_source *cs = NULL, *ds = NULL, *ts = NULL;
  CHECK_EQ_INT(hr_source_open(bp, &sp, &cs, err, sizeof err), HR_OK);
  sp.pool_size = 2;
  CHECK_EQ_INT(hr_source_open(dp, &sp, &ts, err, sizeof err), HR_OK);   /* the desk's color timestamps */
  sp.pool_size = 2;
  sp.stream = HR_SOURCE_STREAM_DEPTH;
  sp.depth_scale = 1000;
  CHECK_EQ_INT(hr_source_open(dp, &sp, &ds, err, sizeof err), HR_OK);
  if (!m || !cs || !ds || !ts) { printf("%s\n", err); return hr_test_finish("test_stream_depth"); }
  hr_frame cf[NC];
  for (int i = 0; i < NC; i++) {
    hr_frame t;
    CHECK_EQ_INT(hr_source_read(cs, &cf[i]), HR_OK);
    CHECK_EQ_INT(hr_source_read(ts, &t), HR_OK);
    cf[i].ts_ns = t.ts_ns;
  }
  hr_pixfmt fmt;
  hr_source_get_format(ds, &fmt, &dw, &dh);
  CHECK_EQ_INT(fmt, HR_PIX_DEPTH16_MM);
  depths = malloc(sizeof *depths * (size_t)dw * dh * ND);
  alphas = malloc(sizeof *alphas * AW * AH * (NC + 16));
  int64_t dts_orig[ND];
  for (int j = 0; j < ND; j++) {
    hr_frame f;
    CHECK_EQ_INT(hr_source_read(ds, &f), HR_OK);
    for (int y = 0; y < dh; y++) memcpy(depths + ((size_t)j * dh + y) * dw, (const uint8_t *)f.planes[0] + y * f.strides[0], (size_t)dw * 2);
    dts_orig[j] = f.ts_ns;
  }

  hr_stream_params p;
  hr_stream_params_default(&p);
  CHECK(!p.depth && p.depth_window_ms == 16 && p.depth_scale == 1000 && p.occlude_m == 0);
  p.session.width = AW; p.session.height = AH;
  p.session.frame_width = cf[0].width; p.session.frame_height = cf[0].height;
  p.session.threads = 1;
  p.depth = true;
  p.occlude_m = 1.0;
  p.depth_width = dw; p.depth_height = dh;   /* not the color frames' size */
  hr_stream *st = NULL;
  CHECK_EQ_INT(hr_stream_create(m, &p, &st, err, sizeof err), HR_OK);
  if (!st) { printf("create: %s\n", err); return hr_test_finish("test_stream_depth"); }

  /* (1) jittered, thinned depth */
  dframe dl[ND];
  int nd = 0;
  for (int j = 0; j < ND; j++) {
    if (j % 4 == 3) continue;
    dl[nd].ts = dts_orig[j] + ((j * 7) % 13 - 6) * MS;
    dl[nd].px = depths + (size_t)j * dw * dh;
    if (nd && dl[nd].ts <= dl[nd - 1].ts) dl[nd].ts = dl[nd - 1].ts + MS;   /* the recording's intervals vary (7..17 ms) */
    nd++;
  }
  int64_t ct[NC];
  for (int i = 0; i < NC; i++) ct[i] = cf[i].ts_ns;
  int pushed = 0;   /* depth frames pushed */
  int got_paired[NC], own_push = 0, next = 0, checked = 0, px_bad = 0, rec_bad = 0, pops = 0;
  int64_t got_dts[NC], person = 0;
  long allocs = 0, frees = 0;
  for (int i = 0; i < NC; i++) got_paired[i] = -1;
  for (int i = 0; i <= NC; i++) {
    if (i >= 8) count_start();
    hr_stream_result r;
    if (i < NC) {
      while (pushed < nd && (pushed == 0 || dl[pushed - 1].ts <= ct[i] + 16 * MS)) {
        hr_frame f = depth_frame(&dl[pushed], dw, dh);
        CHECK_EQ_INT(hr_stream_push_depth(st, &f), HR_OK);
        pushed++;
      }
      CHECK_EQ_INT(hr_stream_push(st, &cf[i], &r), HR_OK);
    } else {
      CHECK_EQ_INT(hr_stream_flush_depth(st), HR_OK);
    }
    count_stop();
    allocs += n_alloc; frees += n_free;
    if (i < NC) {
      CHECK(r.alpha != NULL && r.width == AW && r.height == AH);
      memcpy(alphas + (size_t)i * AW * AH, r.alpha, sizeof *alphas * AW * AH);
      if (r.depth.frame == i) {
        own_push++;
        int want_fused = r.depth.fused;
        if (r.record.depth_fused != want_fused || (want_fused ? r.record.depth_dt_ms != r.depth.dt_ms : !isnan(r.record.depth_dt_ms))) rec_bad++;
      } else if (r.record.depth_fused || !isnan(r.record.depth_dt_ms)) {
        rec_bad++;   /* not decided in its own push: nothing in its record */
      }
      CHECK(r.depth.frame <= i);
    }
    hr_stream_depth dd;
    if (i >= 8) count_start();
    int n_pop = 0;
    while (hr_stream_pop_depth(st, &dd) == HR_OK) {
      n_pop++;
      CHECKF(dd.frame == next, "decision for frame %lld, expected %d", (long long)dd.frame, next);
      if (dd.frame < 0 || dd.frame >= NC) break;
      next++;
      got_paired[dd.frame] = dd.paired;
      got_dts[dd.frame] = dd.depth_ts_ns;
      CHECK(dd.paired == dd.fused && (dd.paired ? fabs(dd.dt_ms - (dd.depth_ts_ns - ct[dd.frame]) / 1e6) < 1e-9 : isnan(dd.dt_ms)));
      CHECK(dd.paired ? dd.person_mm && dd.occlusion : !dd.person_mm && !dd.occlusion);
      CHECK_EQ_INT(dd.flags, 0);
      if (dd.fused && (dd.frame % 7 == 3 || checked < 2)) {
        int k = -1;
        for (int j = 0; j < nd; j++) if (dl[j].ts == dd.depth_ts_ns) k = j;
        CHECK(k >= 0);
        if (k >= 0) { px_bad += check_pixels(&dd, dl[k].px, alphas + (size_t)dd.frame * AW * AH, &person); checked++; }
      }
    }
    count_stop();
    allocs += n_alloc; frees += n_free;
    pops += n_pop;
  }
  CHECK_EQ_INT(next, NC);
  CHECK(pops >= checked && checked > 0);   /* every checked pair was popped */
  /* the reference: the offline rule over the same timestamps */
  int64_t dts[ND];
  for (int j = 0; j < pushed; j++) dts[j] = dl[j].ts;
  int match[NC], ref_pairs = 0, bad = 0;
  CHECK_EQ_INT(hr_associate_offline(ct, NC, dts, pushed, 16 * MS, match), HR_OK);
  double max_dt = 0;
  for (int i = 0; i < NC; i++) {
    ref_pairs += match[i] >= 0;
    if (got_paired[i] != (match[i] >= 0) || (match[i] >= 0 && got_dts[i] != dts[match[i]])) bad++;
    if (match[i] >= 0) {
      double a = fabs((double)(dts[match[i]] - ct[i]) / 1e6);
      CHECK(a <= 16.0);
      if (a > max_dt) max_dt = a;
    }
  }
  hr_stream_stats ss;
  hr_stream_get_stats(st, &ss);
  printf("(1) %d color, %d depth frames (jitter -6..+6 ms, 1 in 4 dropped): %d pairs = offline %d, %d without depth, %d differ; "
         "max |dt| %.2f ms; %d decided in their own push; %d fused frames checked pixelwise: %d pixels wrong (%lld person pixels "
         "with depth); %d records wrong; forced %lld; held peak %d; pairing+fusion %.0f us/frame\n",
         NC, pushed, (int)ss.depth_pairs, ref_pairs, (int)ss.depth_unpaired, bad, max_dt, own_push, checked, px_bad,
         (long long)person, rec_bad, (long long)ss.depth_forced, ss.depth_held_peak, ss.depth_ms * 1e3 / NC);
  CHECK_EQ_INT(bad, 0);
  CHECK_EQ_INT(ss.depth_pairs, ref_pairs);
  CHECK(ref_pairs > NC / 2 && ref_pairs < NC);   /* both kinds occur */
  CHECK_EQ_INT(ss.depth_fused, ref_pairs);
  CHECK_EQ_INT(ss.depth_unpaired, NC - ref_pairs);
  CHECK_EQ_INT(ss.depth_colors, NC);
  CHECK_EQ_INT(ss.depth_frames, pushed);
  CHECK_EQ_INT(ss.depth_unused, pushed - ref_pairs);
  CHECK_EQ_INT(ss.depth_forced, 0);
  CHECK_EQ_INT(ss.depth_refused, 0);
  CHECK(checked >= 4);
  CHECK_EQ_INT(px_bad, 0);
  CHECK(person > 1000);   /* the person's pixels with a depth reading, over the frames checked */
  CHECK_EQ_INT(rec_bad, 0);
  CHECK(own_push > 0);

  /* (2) exact timestamps, a new segment 20 s later: decided in their own push, dt 0 */
  const int64_t off = 20000 * MS;
  int own = 0, zero = 0;
  for (int i = 0; i < 10; i++) {
    dframe d = {dts_orig[i] + off, depths + (size_t)i * dw * dh};
    hr_frame f = depth_frame(&d, dw, dh);
    CHECK_EQ_INT(hr_stream_push_depth(st, &f), HR_OK);   /* its own depth frame only: enough for dt 0 */
    CHECK(dts_orig[i] == ct[i]);
    hr_frame c = cf[i];
    c.ts_ns += off;
    hr_stream_result r;
    CHECK_EQ_INT(hr_stream_push(st, &c, &r), HR_OK);
    own += r.depth.frame == NC + i && r.depth.paired;
    zero += r.depth.frame == NC + i && r.depth.dt_ms == 0 && r.record.depth_fused && r.record.depth_dt_ms == 0;
    hr_stream_depth dd;
    while (hr_stream_pop_depth(st, &dd) == HR_OK) {}
  }
  printf("(2) exact timestamps: %d of 10 frames decided in their own push, %d at dt 0 with their record filled\n", own, zero);
  CHECK_EQ_INT(own, 10);
  CHECK_EQ_INT(zero, 10);
  CHECK_EQ_INT(hr_stream_flush_depth(st), HR_OK);
  hr_stream_depth dd;
  while (hr_stream_pop_depth(st, &dd) == HR_OK) {}

  /* (3) 17 ms away on both sides: not fused; 16 ms: fused */
  const int64_t T = 40000 * MS, T2 = T + 1000 * MS;
  const int64_t dtest[4] = {T - 17 * MS, T + 17 * MS, T2 + 16 * MS, T2 + 40 * MS};
  hr_frame c = cf[0];
  hr_stream_result r;
  dframe d0 = {dtest[0], depths};
  hr_frame f = depth_frame(&d0, dw, dh);
  CHECK_EQ_INT(hr_stream_push_depth(st, &f), HR_OK);
  d0.ts = dtest[1]; f = depth_frame(&d0, dw, dh);
  CHECK_EQ_INT(hr_stream_push_depth(st, &f), HR_OK);
  c.ts_ns = T;
  CHECK_EQ_INT(hr_stream_push(st, &c, &r), HR_OK);
  const int64_t f17 = r.frame;
  int ok17 = r.depth.frame == f17 && !r.depth.paired && !r.depth.fused && !r.depth.person_mm && !r.record.depth_fused && isnan(r.record.depth_dt_ms);
  CHECKF(ok17, "17 ms: decision for frame %lld (want %lld), paired %d", (long long)r.depth.frame, (long long)f17, r.depth.paired);
  while (hr_stream_pop_depth(st, &dd) == HR_OK) CHECK(!dd.paired);
  d0.ts = dtest[2]; f = depth_frame(&d0, dw, dh);
  CHECK_EQ_INT(hr_stream_push_depth(st, &f), HR_OK);
  d0.ts = dtest[3]; f = depth_frame(&d0, dw, dh);
  CHECK_EQ_INT(hr_stream_push_depth(st, &f), HR_OK);
  c.ts_ns = T2;
  CHECK_EQ_INT(hr_stream_push(st, &c, &r), HR_OK);
  const int64_t f16 = r.frame;
  /* its depth frame is after it: a later color frame could still claim it, so it waits */
  CHECK(r.depth.frame != f16 && !r.record.depth_fused);
  CHECK_EQ_INT(hr_stream_flush_depth(st), HR_OK);
  int ok16 = 0;
  while (hr_stream_pop_depth(st, &dd) == HR_OK) ok16 += dd.frame == f16 && dd.paired && dd.fused && dd.dt_ms == 16.0 && dd.person_mm;
  printf("(3) depth 17 ms before and after a frame: %s; 16 ms after: %s (decided at the flush)\n", ok17 ? "not fused" : "FUSED",
         ok16 ? "fused at dt 16.000 ms" : "NOT fused");
  CHECK_EQ_INT(ok16, 1);

  /* (4) misuse */
  hr_stream_get_stats(st, &ss);
  int64_t refused = ss.depth_refused;
  hr_frame small = depth_frame(&d0, dw / 2, dh / 2);
  small.ts_ns = T2 + 100 * MS;
  CHECK_EQ_INT(hr_stream_push_depth(st, &small), HR_EINVAL);
  CHECK(strstr(hr_stream_last_error(st), "depth16") != NULL);
  d0.ts = T2 + 200 * MS; f = depth_frame(&d0, dw, dh);
  CHECK_EQ_INT(hr_stream_push_depth(st, &f), HR_OK);
  d0.ts = T2 + 150 * MS; f = depth_frame(&d0, dw, dh);
  CHECK_EQ_INT(hr_stream_push_depth(st, &f), HR_EINVAL);   /* not after the previous one */
  CHECK_EQ_INT(hr_stream_push_depth(st, NULL), HR_OK);      /* end of the depth stream */
  hr_stream_get_stats(st, &ss);
  CHECK_EQ_INT(ss.depth_refused, refused + 2);
  hr_stream_destroy(st);
  hr_stream_params q;
  hr_stream_params_default(&q);
  q.session = p.session;
  CHECK_EQ_INT(hr_stream_create(m, &q, &st, err, sizeof err), HR_OK);
  CHECK_EQ_INT(hr_stream_push_depth(st, &f), HR_EMISUSE);
  CHECK_EQ_INT(hr_stream_pop_depth(st, &dd), HR_EAGAIN);
  hr_stream_destroy(st);
  q = p; q.depth_scale = 0;
  CHECK_EQ_INT(hr_stream_create(m, &q, &st, err, sizeof err), HR_EINVAL);
  CHECK(st == NULL && strstr(err, "depth_scale"));
  printf("(4) misuse: a half-size and an out-of-order depth frame refused and counted; depth into a stream without it: HR_EMISUSE\n");

  /* (5) */
  printf("(5) steady state (frames 8..%d: depth pushes, color pushes, pops): %ld allocations, %ld frees\n", NC - 1, allocs, frees);
  if (HR_COUNTING) {
    CHECK_EQ_INT(allocs, 0);
    CHECK_EQ_INT(frees, 0);
    count_start();
    void *volatile probe = malloc(10);
    count_stop();
    free(probe);
    CHECK_EQ_INT(n_alloc, 1);   /* the counter counts */
  }
  /* (6) tail every frame at the frames' own size */
  q = p;
  q.session.width = cf[0].width; q.session.height = cf[0].height;
  q.session.downsample_ratio = 0.25f;
  q.tail_every_frame = true;
  st = NULL;
  CHECK_EQ_INT(hr_stream_create(m, &q, &st, err, sizeof err), HR_OK);
  if (st) {
    const int fw = cf[0].width, fh = cf[0].height;
    int tail_own = 0, tail_bad = 0;
    int64_t tail_person = 0;
    for (int i = 0; i < 8; i++) {
      dframe d = {dts_orig[i], depths + (size_t)i * dw * dh};
      hr_frame df = depth_frame(&d, dw, dh);
      CHECK_EQ_INT(hr_stream_push_depth(st, &df), HR_OK);
      CHECK_EQ_INT(hr_stream_push(st, &cf[i], &r), HR_OK);
      if (r.depth.frame == i && r.depth.fused && r.alpha && r.width == fw && r.height == fh) {
        tail_own++;
        tail_bad += check_pixels_at(&r.depth, d.px, r.alpha, fw, fh, &tail_person);
      }
      while (hr_stream_pop_depth(st, &dd) == HR_OK) {}
    }
    hr_stream_get_stats(st, &ss);
    printf("(6) tail every frame, %dx%d: %d of 8 frames fused in their own push against the result's alpha, %d pixels wrong "
           "(%lld person pixels with depth); network runs %lld\n", fw, fh, tail_own, tail_bad, (long long)tail_person, (long long)ss.net_runs);
    CHECK(ss.tail_every_frame);
    CHECK_EQ_INT(tail_own, 8);
    CHECK_EQ_INT(tail_bad, 0);
    CHECK(tail_person > 1000);
    hr_stream_destroy(st);
  }
  free(depths);
  free(alphas);
  hr_source_destroy(cs);
  hr_source_destroy(ds);
  hr_source_destroy(ts);
  hr_model_destroy(m);
  return hr_test_finish("test_stream_depth");
}
