/* The compositor (headroom/composite.h) on real frames and real mattes: RVM's alpha for frames of
 * sam2-bedroom, composited in every format (I420, NV12, RGB24, BGRA, BGRA -> RGBA) and every mode
 * (blur, color, image, alpha). Checks: (1) the blending math against a float reference: every
 * sample within +-1 of a x in + (1 - a) x bg (a: the 8-bit matte, round(alpha x 255) / 255), where bg is the compositor's own background (its
 * output for a matte of 0), alpha = 1 samples exactly the input, alpha = 0 exactly the background;
 * (2) the blur background is smooth and not the input; the colour background is the colour in the
 * format's own BT.601 range; (3) the fallback policy: hold shows the last good matte, blur-all the
 * background, passthrough the input, each switch announced (changed, reason) and the return to the
 * matte too; (4) in place equals out of place; (5) apply allocates nothing (counted; off under
 * ASan), and the counter is shown to count. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "headroom.h"
#include "headroom/composite.h"
#include "headroom/io.h"
#include "hr_test.h"

#include "hr_alloc_count.h"

#define NF 3

typedef struct img {
  hr_frame f;
  uint8_t *buf;
  int np, C[3], pw[3], ph[3];
} img;

static double now_ms(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e3 + t.tv_nsec / 1e6; }
/* this thread's CPU time: what a frame costs its core, whatever else shares the machine */
static double cpu_ms(void) { struct timespec t; clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t); return t.tv_sec * 1e3 + t.tv_nsec / 1e6; }

/* Planes of a format: count, channels, sizes. */
static void layout(img *m, hr_pixfmt fmt, int w, int h) {
  memset(m, 0, sizeof *m);
  m->f.fmt = fmt; m->f.width = w; m->f.height = h;
  if (fmt == HR_PIX_NV12_VIDEO || fmt == HR_PIX_NV12_FULL) { m->np = 2; m->C[0] = 1; m->C[1] = 2; }
  else if (fmt == HR_PIX_I420_VIDEO || fmt == HR_PIX_I420_FULL) { m->np = 3; m->C[0] = m->C[1] = m->C[2] = 1; }
  else { m->np = 1; m->C[0] = fmt == HR_PIX_BGRA ? 4 : fmt == HR_PIX_RGB24 ? 3 : 4; }
  size_t total = 0;
  for (int i = 0; i < m->np; i++) { m->pw[i] = i ? w / 2 : w; m->ph[i] = i ? h / 2 : h; total += (size_t)m->pw[i] * m->ph[i] * m->C[i]; }
  m->buf = calloc(total, 1);
  uint8_t *p = m->buf;
  for (int i = 0; i < m->np; i++) {
    m->f.planes[i] = p; m->f.strides[i] = (ptrdiff_t)m->pw[i] * m->C[i];
    p += (size_t)m->pw[i] * m->ph[i] * m->C[i];
  }
}

static uint8_t *pl(img *m, int i) { return (uint8_t *)m->f.planes[i]; }
static size_t plen(const img *m, int i) { return (size_t)m->pw[i] * m->ph[i] * m->C[i]; }
static hr_composite_out out_of(img *m) {
  hr_composite_out o; memset(&o, 0, sizeof o);
  for (int i = 0; i < m->np; i++) { o.planes[i] = pl(m, i); o.strides[i] = m->f.strides[i]; }
  return o;
}

/* The source frame (I420 video range, from the video) converted into fmt. */
static void convert(img *m, const hr_frame *src, hr_pixfmt fmt, float *row) {
  int w = src->width, h = src->height;
  layout(m, fmt, w, h);
  m->f.ts_ns = src->ts_ns;
  const uint8_t *Y = src->planes[0], *U = src->planes[1], *V = src->planes[2];
  if (m->np > 1) {
    for (int y = 0; y < h; y++) memcpy(pl(m, 0) + (size_t)y * w, Y + y * src->strides[0], (size_t)w);
    for (int y = 0; y < h / 2; y++)
      for (int x = 0; x < w / 2; x++) {
        uint8_t u = U[y * src->strides[1] + x], v = V[y * src->strides[2] + x];
        if (m->np == 2) { pl(m, 1)[(size_t)y * w + 2 * x] = u; pl(m, 1)[(size_t)y * w + 2 * x + 1] = v; }
        else { pl(m, 1)[(size_t)y * (w / 2) + x] = u; pl(m, 2)[(size_t)y * (w / 2) + x] = v; }
      }
    return;
  }
  for (int y = 0; y < h; y++) {
    hr_frame_row_rgbf(src, y, row);
    uint8_t *d = pl(m, 0) + (size_t)y * m->f.strides[0];
    for (int x = 0; x < w; x++) {
      uint8_t r = (uint8_t)lrintf(row[3 * x] * 255), g = (uint8_t)lrintf(row[3 * x + 1] * 255), b = (uint8_t)lrintf(row[3 * x + 2] * 255);
      if (fmt == HR_PIX_BGRA) { d[4 * x] = b; d[4 * x + 1] = g; d[4 * x + 2] = r; d[4 * x + 3] = 255; }
      else { d[3 * x] = r; d[3 * x + 1] = g; d[3 * x + 2] = b; }
    }
  }
}

/* The matte as the compositor documents it: 8 bits, round(alpha x 255), as a fraction. */
static double q8(float a) { return a != a || a <= 0 ? 0 : a >= 1 ? 1 : floor(a * 255.0 + 0.5) / 255.0; }
/* Alpha of sample x, y of plane i (4:2:0 chroma: the mean of its 2x2, as the compositor). */
static double alpha_at(const img *m, int i, int x, int y, const float *alpha) {
  int w = m->f.width;
  if (m->np == 1 || i == 0) return q8(alpha[(size_t)y * w + x]);
  return (q8(alpha[(size_t)(2 * y) * w + 2 * x]) + q8(alpha[(size_t)(2 * y) * w + 2 * x + 1]) + q8(alpha[(size_t)(2 * y + 1) * w + 2 * x]) +
          q8(alpha[(size_t)(2 * y + 1) * w + 2 * x + 1])) / 4;
}

typedef struct math_stats { long n, bad, ones, ones_bad, zeros, zeros_bad; double maxd; } math_stats;

/* o against a x in + (1 - a) x bg, sample by sample (BGRA's A channel: 255). */
static void check_math(const img *in, const img *o, const img *bg, const float *alpha, math_stats *s) {
  for (int i = 0; i < in->np; i++)
    for (int y = 0; y < in->ph[i]; y++)
      for (int x = 0; x < in->pw[i]; x++) {
        double a = alpha_at(in, i, x, y, alpha);
        for (int k = 0; k < in->C[i]; k++) {
          size_t j = ((size_t)y * in->pw[i] + x) * in->C[i] + k;
          int I = pl((img *)in, i)[j], O = pl((img *)o, i)[j], B = pl((img *)bg, i)[j];
          if (in->C[i] == 4 && k == 3) { if (O != 255) s->bad++; continue; }
          double e = a * I + (1 - a) * B, d = fabs(O - e);
          s->n++;
          if (d > s->maxd) s->maxd = d;
          if (d > 1.0 + 1e-9) s->bad++;
          if (a >= 1.0) { s->ones++; if (O != I) s->ones_bad++; }
          if (a <= 0.0) { s->zeros++; if (O != B) s->zeros_bad++; }
        }
      }
}

static double mean_grad(const img *m) {   /* mean |horizontal difference| of plane 0 */
  double s = 0; long n = 0;
  int C = m->C[0];
  for (int y = 0; y < m->ph[0]; y++)
    for (int x = 0; x + 1 < m->pw[0]; x++) { s += abs(pl((img *)m, 0)[((size_t)y * m->pw[0] + x + 1) * C] - pl((img *)m, 0)[((size_t)y * m->pw[0] + x) * C]); n++; }
  return s / n;
}

static int same(const img *a, const img *b) {
  for (int i = 0; i < a->np; i++) if (memcmp(pl((img *)a, i), pl((img *)b, i), plen(a, i))) return 0;
  return 1;
}

/* The stream's 8-bit matte of alpha (hr_stream_result.alpha_u8): clamped, round(alpha x 255) ties to even. */
static void bytes_of(uint8_t *d, const float *a, size_t n) {
  for (size_t i = 0; i < n; i++) { float v = a[i] > 0.f ? a[i] : 0.f; d[i] = (uint8_t)lrintf((v < 1.f ? v : 1.f) * 255.f); }
}

static void run_format(hr_pixfmt fmt, const hr_frame *src, float *const *alpha, const uint8_t *pic, int pic_w, int pic_h, float *row) {
  int w = src[0].width, h = src[0].height;
  img in[NF], out, bg, tmp;
  for (int k = 0; k < NF; k++) convert(&in[k], &src[k], fmt, row);
  layout(&out, fmt, w, h); layout(&bg, fmt, w, h); layout(&tmp, fmt, w, h);
  float *zero = calloc((size_t)w * h, sizeof(float));
  uint8_t *a8 = malloc((size_t)w * h);
  const char *modes[] = {"blur", "color:00b140", "image:pic", "alpha"};
  for (int mi = 0; mi < 4; mi++) {
    hr_composite_params p;
    hr_composite_params_default(&p);
    p.width = w; p.height = h; p.format = fmt;
    const char *ip = NULL;
    char err[256];
    CHECK_EQ_INT(hr_composite_parse(modes[mi], &p, &ip, err, sizeof err), HR_OK);
    if (ip) { p.image = pic; p.image_width = pic_w; p.image_height = pic_h; p.image_stride = (ptrdiff_t)pic_w * 3; }
    hr_compositor *c = NULL;
    CHECK_EQ_INT(hr_compositor_create(&p, &c, err, sizeof err), HR_OK);
    if (!c) { printf("%s\n", err); continue; }
    hr_composite_out o = out_of(&out), ob = out_of(&bg);
    hr_composite_result r;
    if (p.mode != HR_COMPOSITE_MODE_ALPHA) {
      math_stats ms; memset(&ms, 0, sizeof ms);
      for (int k = 0; k < NF; k++) {
        CHECK_EQ_INT(hr_compositor_apply(c, &in[k].f, zero, NULL, &ob, &r), HR_OK);   /* the background alone */
        CHECK_EQ_INT(hr_compositor_apply(c, &in[k].f, alpha[k], NULL, &o, &r), HR_OK);
        CHECK_EQ_INT(r.action, HR_COMPOSITE_ACTION_MATTE);
        check_math(&in[k], &out, &bg, alpha[k], &ms);
        /* the stream's bytes instead of the floats (hr_compositor_apply_u8): the same picture */
        hr_composite_out ot = out_of(&tmp);
        bytes_of(a8, alpha[k], (size_t)w * h);
        CHECK_EQ_INT(hr_compositor_apply_u8(c, &in[k].f, a8, NULL, &ot, &r), HR_OK);
        CHECK_EQ_INT(r.action, HR_COMPOSITE_ACTION_MATTE);
        CHECKF(same(&out, &tmp), "%s %s frame %d: the composite from the bytes differs from the one from the floats", hr_pixfmt_name(fmt),
               modes[mi], k);
      }
      /* no bytes (a suspended frame): hold shows the last matte, as with no floats */
      hr_composite_out ot = out_of(&tmp);
      CHECK_EQ_INT(hr_compositor_apply_u8(c, &in[0].f, NULL, NULL, &ot, &r), HR_OK);
      CHECK_EQ_INT(r.action, HR_COMPOSITE_ACTION_HOLD);
      CHECK_EQ_INT(hr_compositor_apply(c, &in[0].f, NULL, NULL, &o, &r), HR_OK);
      CHECK_EQ_INT(r.action, HR_COMPOSITE_ACTION_HOLD);
      CHECK(same(&out, &tmp));
      printf("%-6s %-13s %ld samples, max |out - (a*in + (1-a)*bg)| %.3f, %ld beyond 1; alpha=1: %ld samples, %ld differ from the input; "
             "alpha=0: %ld, %ld differ from the background\n", hr_pixfmt_name(fmt), modes[mi], ms.n, ms.maxd, ms.bad, ms.ones, ms.ones_bad,
             ms.zeros, ms.zeros_bad);
      CHECK(ms.n > 0 && ms.bad == 0);
      CHECK(ms.ones > 1000 && ms.ones_bad == 0);
      CHECK(ms.zeros > 1000 && ms.zeros_bad == 0);
      if (p.mode == HR_COMPOSITE_MODE_BLUR) {
        double gi = mean_grad(&in[NF - 1]), gb = mean_grad(&bg);
        printf("       blur: mean |dx| of the input %.2f, of the background %.2f\n", gi, gb);
        CHECK(gb < gi / 3);
      }
      if (p.mode == HR_COMPOSITE_MODE_COLOR) {
        /* chroma green 00b140 in the format's terms (BT.601) */
        double Y = 0.587 * 0xb1 + 0.114 * 0x40, U = 128 - 0.331264 * 0xb1 + 0.5 * 0x40, V = 128 - 0.418688 * 0xb1 - 0.081312 * 0x40;
        if (fmt == HR_PIX_NV12_VIDEO || fmt == HR_PIX_I420_VIDEO) { Y = 16 + Y * 219 / 255; U = 128 + (U - 128) * 224 / 255; V = 128 + (V - 128) * 224 / 255; }
        const uint8_t *b0 = pl(&bg, 0);
        if (bg.np > 1) {
          CHECK_NEAR(b0[0], Y, 0.51);
          CHECK_NEAR(bg.np == 2 ? pl(&bg, 1)[0] : pl(&bg, 1)[0], U, 0.51);
          CHECK_NEAR(bg.np == 2 ? pl(&bg, 1)[1] : pl(&bg, 2)[0], V, 0.51);
        } else if (fmt == HR_PIX_BGRA) { CHECK(b0[0] == 0x40 && b0[1] == 0xb1 && b0[2] == 0x00); }
        else { CHECK(b0[0] == 0x00 && b0[1] == 0xb1 && b0[2] == 0x40); }
      }
      if (p.mode == HR_COMPOSITE_MODE_IMAGE) {   /* the picture covers the frame: the background is not uniform */
        double gb = mean_grad(&bg);
        printf("       image: mean |dx| of the background %.2f\n", gb);
        CHECK(gb > 0.5);
      }
    } else {
      CHECK_EQ_INT(hr_compositor_apply(c, &in[0].f, alpha[0], NULL, &o, &r), HR_OK);
      long bad = 0;
      for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
          int a = (int)lrintf(alpha[0][(size_t)y * w + x] * 255);
          int v = pl(&out, 0)[((size_t)y * w + x) * out.C[0]];
          if (abs(v - a) > 0) bad++;
        }
      printf("%-6s %-13s matte picture: %ld of %d pixels differ from round(alpha x 255)\n", hr_pixfmt_name(fmt), modes[mi], bad, w * h);
      CHECK_EQ_INT(bad, 0);
    }
    hr_compositor_destroy(c);
  }

  /* (3) fallbacks: frame 0 healthy, frame 1 degraded, frame 2 healthy again */
  const char *fbs[] = {"hold", "blur-all", "passthrough"};
  for (int fi = 0; fi < 3; fi++) {
    hr_composite_params p;
    hr_composite_params_default(&p);
    p.width = w; p.height = h; p.format = fmt;
    char err[256];
    CHECK_EQ_INT(hr_composite_parse_fallback(fbs[fi], &p, err, sizeof err), HR_OK);
    hr_compositor *c = NULL;
    CHECK_EQ_INT(hr_compositor_create(&p, &c, err, sizeof err), HR_OK);
    if (!c) continue;
    hr_composite_out o = out_of(&out), ob = out_of(&bg), ot = out_of(&tmp);
    hr_health_verdict good, bad;
    memset(&good, 0, sizeof good); good.state = HR_HEALTH_HEALTHY; good.output_ok = true; good.reason = "healthy";
    bad = good; bad.state = HR_HEALTH_DEGRADED; bad.reason = "low confidence (test)";
    hr_composite_result r;
    CHECK_EQ_INT(hr_compositor_apply(c, &in[0].f, alpha[0], &good, &o, &r), HR_OK);
    CHECK(r.action == HR_COMPOSITE_ACTION_MATTE && !r.changed);
    CHECK_EQ_INT(hr_compositor_apply(c, &in[1].f, alpha[1], &bad, &o, &r), HR_OK);
    hr_composite_action want = fi == 0 ? HR_COMPOSITE_ACTION_HOLD : fi == 1 ? HR_COMPOSITE_ACTION_BLUR_ALL : HR_COMPOSITE_ACTION_PASSTHROUGH;
    CHECK_EQ_INT(r.action, want);
    CHECK(r.changed);
    CHECK(r.reason && strstr(r.reason, "degraded") && strstr(r.reason, "low confidence"));
    printf("%-6s fallback %-11s on a degraded frame: action %s (changed %d), reason '%s'\n", hr_pixfmt_name(fmt), fbs[fi],
           hr_composite_action_name(r.action), r.changed, r.reason);
    /* what it drew: hold = frame 1 under frame 0's matte; blur-all = frame 1's blur alone; passthrough = frame 1 */
    if (fi == 0) { CHECK_EQ_INT(hr_compositor_apply(c, &in[1].f, alpha[0], &good, &ot, NULL), HR_OK); CHECK(same(&out, &tmp)); }
    if (fi == 1) { CHECK_EQ_INT(hr_compositor_apply(c, &in[1].f, zero, &good, &ot, NULL), HR_OK); CHECK(same(&out, &tmp)); }
    if (fi == 2) CHECK(same(&out, &in[1]));
    /* back to the matte: announced too */
    CHECK_EQ_INT(hr_compositor_apply(c, &in[2].f, alpha[2], &good, &ob, &r), HR_OK);
    if (fi == 0) CHECK(r.action == HR_COMPOSITE_ACTION_MATTE && !r.changed);   /* the probes above were healthy */
    CHECK_EQ_INT(hr_compositor_apply(c, &in[2].f, NULL, &good, &o, &r), HR_OK);   /* suspended: no matte */
    CHECK(r.action == want && r.changed && strstr(r.reason, "suspended"));
    CHECK_EQ_INT(hr_compositor_apply(c, &in[2].f, alpha[2], &bad, &o, &r), HR_OK);   /* suspended -> degraded: another cause */
    CHECK(r.action == want && r.changed);
    CHECK_EQ_INT(hr_compositor_apply(c, &in[2].f, alpha[2], &bad, &o, &r), HR_OK);   /* the same again: nothing to announce */
    CHECK(r.action == want && !r.changed);
    CHECK_EQ_INT(hr_compositor_apply(c, &in[2].f, alpha[2], &good, &o, &r), HR_OK);
    CHECK(r.action == HR_COMPOSITE_ACTION_MATTE && r.changed);
    hr_compositor_destroy(c);
  }

  /* (4) in place = out of place (blur: the background is read from the frame being written) */
  {
    hr_composite_params p;
    hr_composite_params_default(&p);
    p.width = w; p.height = h; p.format = fmt;
    hr_compositor *c = NULL;
    char err[256];
    CHECK_EQ_INT(hr_compositor_create(&p, &c, err, sizeof err), HR_OK);
    if (c) {
      hr_composite_out o = out_of(&out), ot = out_of(&tmp);
      for (int i = 0; i < tmp.np; i++) memcpy(pl(&tmp, i), pl(&in[0], i), plen(&tmp, i));
      CHECK_EQ_INT(hr_compositor_apply(c, &in[0].f, alpha[0], NULL, &o, NULL), HR_OK);
      CHECK_EQ_INT(hr_compositor_apply(c, &tmp.f, alpha[0], NULL, &ot, NULL), HR_OK);
      CHECK(same(&out, &tmp));
      /* (5) no allocation per frame */
      count_start();
      double t0 = now_ms();
      for (int k = 0; k < 20; k++) CHECK_EQ_INT(hr_compositor_apply(c, &in[k % NF].f, alpha[k % NF], NULL, &o, NULL), HR_OK);
      double ms = (now_ms() - t0) / 20;
      count_stop();
      long a = n_alloc, f = n_free;
      count_start();
      CHECK_EQ_INT(hr_compositor_apply(c, &in[0].f, alpha[0], NULL, &o, NULL), HR_OK);
      void *volatile probe = malloc(64);
      count_stop();
      free(probe);
      printf("%-6s blur %dx%d: %.2f ms a frame (information: this is a test build and a shared machine); 20 applies: %ld allocations, "
             "%ld frees; control %ld\n", hr_pixfmt_name(fmt), w, h, ms, a, f, n_alloc);
      if (HR_COUNTING) { CHECK_EQ_INT(a, 0); CHECK_EQ_INT(f, 0); CHECK_EQ_INT(n_alloc, 1); }
      hr_compositor_destroy(c);
    }
  }
  free(zero); free(a8);
  for (int k = 0; k < NF; k++) free(in[k].buf);
  free(out.buf); free(bg.buf); free(tmp.buf);
}

/* BGRA in, RGBA out: the composite's colours with A = the matte. */
static void run_rgba(const hr_frame *src, float *const *alpha, float *row) {
  int w = src[0].width, h = src[0].height;
  img in, out, ref;
  convert(&in, &src[0], HR_PIX_BGRA, row);
  layout(&out, HR_PIX_BGRA, w, h); layout(&ref, HR_PIX_BGRA, w, h);
  hr_composite_params p;
  hr_composite_params_default(&p);
  p.width = w; p.height = h; p.format = HR_PIX_BGRA;
  hr_compositor *c = NULL, *c2 = NULL;
  char err[256];
  CHECK_EQ_INT(hr_compositor_create(&p, &c2, err, sizeof err), HR_OK);
  p.out_rgba = true;
  CHECK_EQ_INT(hr_compositor_create(&p, &c, err, sizeof err), HR_OK);
  if (c && c2) {
    hr_composite_out o = out_of(&out), orf = out_of(&ref);
    CHECK_EQ_INT(hr_compositor_apply(c, &in.f, alpha[0], NULL, &o, NULL), HR_OK);
    CHECK_EQ_INT(hr_compositor_apply(c2, &in.f, alpha[0], NULL, &orf, NULL), HR_OK);
    long bad = 0;
    for (size_t i = 0; i < (size_t)w * h; i++) {
      const uint8_t *a = pl(&out, 0) + 4 * i, *b = pl(&ref, 0) + 4 * i;
      int m = (int)lrintf(alpha[0][i] * 255);
      if (a[0] != b[2] || a[1] != b[1] || a[2] != b[0] || a[3] != m) bad++;
    }
    printf("bgra -> rgba: %ld of %d pixels differ from the BGRA composite swizzled with A = round(alpha x 255)\n", bad, w * h);
    CHECK_EQ_INT(bad, 0);
  }
  /* the matte alone as RGBA: the frame's own colours, A = round(alpha x 255) */
  hr_compositor *c3 = NULL;
  p.mode = HR_COMPOSITE_MODE_ALPHA;
  CHECK_EQ_INT(hr_compositor_create(&p, &c3, err, sizeof err), HR_OK);
  if (c3) {
    hr_composite_out o = out_of(&out);
    CHECK_EQ_INT(hr_compositor_apply(c3, &in.f, alpha[0], NULL, &o, NULL), HR_OK);
    long bad = 0;
    for (int y = 0; y < h; y++)
      for (int x = 0; x < w; x++) {
        const uint8_t *a = pl(&out, 0) + 4 * ((size_t)y * w + x);
        const uint8_t *b = (const uint8_t *)in.f.planes[0] + (ptrdiff_t)y * in.f.strides[0] + 4 * x;
        int m = (int)lrintf(alpha[0][(size_t)y * w + x] * 255);
        if (a[0] != b[2] || a[1] != b[1] || a[2] != b[0] || a[3] != m) bad++;
      }
    printf("matte alone as rgba: %ld of %d pixels differ from the frame's colours with A = round(alpha x 255)\n", bad, w * h);
    CHECK_EQ_INT(bad, 0);
  }
  hr_compositor_destroy(c3);
  p.mode = HR_COMPOSITE_MODE_BLUR;
  /* refused: RGBA output from YUV, odd 4:2:0 sizes, formats it cannot composite */
  hr_compositor *x = NULL;
  p.format = HR_PIX_NV12_FULL;
  CHECK_EQ_INT(hr_compositor_create(&p, &x, err, sizeof err), HR_ENOTSUP);
  p.out_rgba = false; p.width = 641;
  CHECK_EQ_INT(hr_compositor_create(&p, &x, err, sizeof err), HR_EINVAL);
  p.width = 640; p.format = HR_PIX_GRAY8;
  CHECK_EQ_INT(hr_compositor_create(&p, &x, err, sizeof err), HR_ENOTSUP);
  CHECK(strstr(err, "NV12") != NULL);
  CHECK(x == NULL);
  hr_compositor_destroy(c); hr_compositor_destroy(c2);
  free(in.buf); free(out.buf); free(ref.buf);
}

/* Mode video: the caller's frames as the background, scaled to cover. Before the first, black;
 * then each set_background's frame: the same-size I420 frame (4:2:0 into 4:2:0 of one range:
 * scaled plane by plane, exact; into RGB24: through the model's colour conversion) within a
 * few levels (the luma of a frame of 0 matte), another frame changes it, a frame of another size
 * and format (BGRA at half size) is scaled; the person (alpha = 1) stays the input; a blur
 * compositor refuses a background frame; set_background after the first allocates nothing. */
static void run_video(hr_pixfmt fmt, const hr_frame *src, float *const *alpha, float *row) {
  int w = src[0].width, h = src[0].height;
  img in, out, small;
  convert(&in, &src[0], fmt, row);
  layout(&out, fmt, w, h);
  float *zero = calloc((size_t)w * h, sizeof(float));
  hr_composite_params p;
  hr_composite_params_default(&p);
  p.width = w; p.height = h; p.format = fmt;
  const char *ip = NULL;
  char err[256];
  CHECK_EQ_INT(hr_composite_parse("video:some.mp4", &p, &ip, err, sizeof err), HR_OK);
  CHECK(p.mode == HR_COMPOSITE_MODE_VIDEO && ip && !strcmp(ip, "some.mp4"));
  CHECK(!strcmp(hr_composite_mode_name(p.mode), "video"));
  hr_compositor *c = NULL;
  CHECK_EQ_INT(hr_compositor_create(&p, &c, err, sizeof err), HR_OK);
  if (!c) { printf("%s\n", err); free(zero); free(in.buf); free(out.buf); return; }
  hr_composite_out o = out_of(&out);
  bool yuv = fmt != HR_PIX_BGRA && fmt != HR_PIX_RGB24;
  int black = fmt == HR_PIX_I420_VIDEO || fmt == HR_PIX_NV12_VIDEO ? 16 : 0;
  CHECK_EQ_INT(hr_compositor_apply(c, &in.f, zero, NULL, &o, NULL), HR_OK);
  CHECK_EQ_INT(pl(&out, 0)[(size_t)(h / 2) * out.f.strides[0] + (yuv ? w / 2 : 0)], black);
  /* clip frame 2 (use[1]) as the background: Y (or R G B) of the output close to its own */
  img b1;
  convert(&b1, &src[1], fmt, row);
  double maxd[2] = {0, 0}, sumd = 0;
  for (int k = 0; k < 2; k++) {
    CHECK_EQ_INT(hr_compositor_set_background(c, &src[k + 1]), HR_OK);
    CHECK_EQ_INT(hr_compositor_apply(c, &in.f, zero, NULL, &o, NULL), HR_OK);
    if (k == 0) {
      for (int y = 0; y < h; y++)
        for (int x = 0; x < w * b1.C[0]; x++) {
          double d = fabs((double)pl(&out, 0)[(size_t)y * out.f.strides[0] + x] - pl(&b1, 0)[(size_t)y * b1.f.strides[0] + x]);
          if (d > maxd[0]) maxd[0] = d;
          maxd[1] += d;
        }
    } else {
      for (int y = 0; y < h; y++)
        for (int x = 0; x < w * b1.C[0]; x++) sumd += fabs((double)pl(&out, 0)[(size_t)y * out.f.strides[0] + x] - pl(&b1, 0)[(size_t)y * b1.f.strides[0] + x]);
    }
  }
  sumd /= (double)w * h * b1.C[0];
  maxd[1] /= (double)w * h * b1.C[0];
  /* (YUV: through R G B clamped to 0..1, so out-of-gamut colours move Y a little) */
  printf("%-6s video   background = clip frame 2: |plane 0 - frame 2's| mean %.3f, max %.0f; frame 4 instead: mean |difference| %.2f\n",
         hr_pixfmt_name(fmt), maxd[1], maxd[0], sumd);
  CHECK(maxd[0] <= 8 && maxd[1] < 0.5);
  if (yuv) CHECK(maxd[0] == 0);   /* video-range I420 into video-range 4:2:0 at one size: the planes themselves */
  CHECK(sumd > 0.5);
  /* a BGRA frame of half the size (frame 2, every other pixel): scaled up, still its picture */
  convert(&small, &src[1], HR_PIX_BGRA, row);
  hr_frame half = small.f;
  half.width = w / 2; half.height = h / 2; half.strides[0] = small.f.strides[0] * 2;
  uint8_t *hb = malloc((size_t)(w / 2) * (h / 2) * 4);
  for (int y = 0; y < h / 2; y++)
    for (int x = 0; x < w / 2; x++) memcpy(hb + ((size_t)y * (w / 2) + x) * 4, pl(&small, 0) + (size_t)(2 * y) * small.f.strides[0] + 8 * x, 4);
  half.planes[0] = hb; half.strides[0] = (ptrdiff_t)(w / 2) * 4;
  double t0 = now_ms();
  for (int k = 0; k < 5; k++) hr_compositor_set_background(c, &src[1 + k % 2]);
  printf("%-6s video   set_background of a %dx%d I420 frame: %.2f ms (information: a test build on a shared machine)\n", hr_pixfmt_name(fmt), w, h,
         (now_ms() - t0) / 5);
  count_start();
  CHECK_EQ_INT(hr_compositor_set_background(c, &half), HR_OK);
  count_stop();
  long a = n_alloc;
  CHECK_EQ_INT(hr_compositor_apply(c, &in.f, zero, NULL, &o, NULL), HR_OK);
  double md = 0;
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w * b1.C[0]; x++) md += fabs((double)pl(&out, 0)[(size_t)y * out.f.strides[0] + x] - pl(&b1, 0)[(size_t)y * b1.f.strides[0] + x]);
  md /= (double)w * h * b1.C[0];
  /* the person stays the input */
  CHECK_EQ_INT(hr_compositor_apply(c, &in.f, alpha[0], NULL, &o, NULL), HR_OK);
  long ones = 0, ones_bad = 0;
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++)
      if (alpha[0][(size_t)y * w + x] >= 1.f) {
        ones++;
        for (int k = 0; k < in.C[0]; k++)
          if (pl(&out, 0)[(size_t)y * out.f.strides[0] + x * in.C[0] + k] != pl(&in, 0)[(size_t)y * in.f.strides[0] + x * in.C[0] + k]) { ones_bad++; break; }
      }
  printf("%-6s video   a half-size BGRA frame 2: mean |plane 0 - frame 2's| %.2f (allocations %ld); alpha = 1: %ld pixels, %ld differ from the input\n",
         hr_pixfmt_name(fmt), md, a, ones, ones_bad);
  CHECK(md < 4);
  if (HR_COUNTING) CHECK_EQ_INT(a, 0);
  CHECK(ones > 1000 && ones_bad == 0);
  hr_compositor_destroy(c);
  /* blur takes no background frame */
  p.mode = HR_COMPOSITE_MODE_BLUR;
  CHECK_EQ_INT(hr_compositor_create(&p, &c, err, sizeof err), HR_OK);
  CHECK_EQ_INT(hr_compositor_set_background(c, &src[1]), HR_EINVAL);
  CHECK(strstr(hr_compositor_last_error(c), "video") != NULL);
  hr_compositor_destroy(c);
  free(hb); free(zero); free(in.buf); free(out.buf); free(b1.buf); free(small.buf);
}

/* --bench [FRAMES [FORMAT]]: blur at 1920x1080 (the clip's frames and mattes doubled), each format
 * (or FORMAT alone, blur only: for profiling), one thread: median and p90 ms a frame. For
 * bench/composite.sh. */
static int cmp_d(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return x < y ? -1 : x > y; }
static void bench(const hr_frame *src, float *const *alpha, int frames, float *row, const char *only) {
  int w = src[0].width * 2, h = src[0].height * 2;
  hr_pixfmt fmts[] = {HR_PIX_NV12_VIDEO, HR_PIX_I420_VIDEO, HR_PIX_BGRA, HR_PIX_RGB24};
  float *a2 = malloc((size_t)w * h * sizeof(float));
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++) a2[(size_t)y * w + x] = alpha[0][(size_t)(y / 2) * (w / 2) + x / 2];
  double *t = malloc(sizeof(double) * (size_t)frames), *tc = malloc(sizeof(double) * (size_t)frames);
  for (int fi = 0; fi < 4; fi++) {
    if (only && strcmp(only, hr_pixfmt_name(fmts[fi]))) continue;
    img small, in, out;
    convert(&small, &src[0], fmts[fi], row);
    layout(&in, fmts[fi], w, h); layout(&out, fmts[fi], w, h);
    for (int i = 0; i < in.np; i++)   /* pixel doubling */
      for (int y = 0; y < in.ph[i]; y++)
        for (int x = 0; x < in.pw[i]; x++)
          for (int k = 0; k < in.C[i]; k++)
            pl(&in, i)[((size_t)y * in.pw[i] + x) * in.C[i] + k] = pl(&small, i)[((size_t)(y / 2) * small.pw[i] + x / 2) * small.C[i] + k];
    const char *modes[] = {"blur", "color:00b140"};
    for (int mi = 0; mi < (only ? 1 : 2); mi++) {
      hr_composite_params p;
      hr_composite_params_default(&p);
      p.width = w; p.height = h; p.format = fmts[fi];
      char err[256];
      hr_composite_parse(modes[mi], &p, NULL, err, sizeof err);
      hr_compositor *c = NULL;
      if (hr_compositor_create(&p, &c, err, sizeof err)) FATAL("%s", err);
      hr_composite_out o = out_of(&out);
      for (int k = 0; k < 3; k++) hr_compositor_apply(c, &in.f, a2, NULL, &o, NULL);
      for (int k = 0; k < frames; k++) {
        double t0 = now_ms(), c0 = cpu_ms();
        hr_compositor_apply(c, &in.f, a2, NULL, &o, NULL);
        t[k] = now_ms() - t0; tc[k] = cpu_ms() - c0;
      }
      qsort(t, (size_t)frames, sizeof *t, cmp_d);
      qsort(tc, (size_t)frames, sizeof *tc, cmp_d);
      printf("composite %-12s %-6s %dx%d: cpu median %.2f ms (p90 %.2f), wall median %.2f ms a frame (%d frames, one thread)\n", modes[mi],
             hr_pixfmt_name(fmts[fi]), w, h, tc[frames / 2], tc[frames * 9 / 10], t[frames / 2], frames);
      hr_compositor_destroy(c);
    }
    free(small.buf); free(in.buf); free(out.buf);
  }
  free(t); free(tc); free(a2);
}

int main(int argc, char **argv) {
  int bench_frames = argc > 1 && !strcmp(argv[1], "--bench") ? (argc > 2 ? atoi(argv[2]) : 50) : 0;
  char mp[1024], vp[1024];
  if (!hr_test_path("HR_MODEL_DIR", "rvm.json", mp, sizeof mp) || !hr_test_path("HR_DATA_DIR", "sam2-bedroom/bedroom.mp4", vp, sizeof vp))
    FATAL("HR_MODEL_DIR / HR_DATA_DIR unset");
  if (!HR_COUNTING) printf("AddressSanitizer build: allocation counting off (ASan owns malloc); the output checks run\n");
  char err[512];
  hr_model *m = NULL;
  hr_source_params sp;
  hr_source_params_default(&sp);
  sp.pool_size = NF + 2;
  hr_source *src = NULL;
  if (hr_model_load(mp, &m, err, sizeof err)) FATAL("%s", err);
  if (hr_source_open(vp, &sp, &src, err, sizeof err)) FATAL("%s", err);
  hr_frame fr[NF + 2];
  for (int i = 0; i < NF + 2; i++) CHECK_EQ_INT(hr_source_read(src, &fr[i]), HR_OK);
  /* frames 20 apart would need a longer read; frames 0, 2, 4 differ enough */
  hr_frame use[NF] = {fr[0], fr[2], fr[4]};
  int w = use[0].width, h = use[0].height;
  CHECK(use[0].fmt == HR_PIX_I420_VIDEO);
  hr_stream_params p;
  hr_stream_params_default(&p);
  p.session.width = w; p.session.height = h; p.session.downsample_ratio = 0.25f; p.session.threads = 1;
  hr_stream *st = NULL;
  if (hr_stream_create(m, &p, &st, err, sizeof err)) FATAL("%s", err);
  float *alpha[NF];
  for (int k = 0; k < NF; k++) {
    hr_stream_result r;
    CHECK_EQ_INT(hr_stream_push(st, &use[k], &r), HR_OK);
    alpha[k] = malloc((size_t)w * h * sizeof(float));
    memcpy(alpha[k], r.alpha, (size_t)w * h * sizeof(float));
  }
  float *row = malloc((size_t)w * 3 * sizeof(float));
  if (bench_frames > 0) {
    bench(use, alpha, bench_frames, row, argc > 3 ? argv[3] : NULL);
    free(row);
    for (int k = 0; k < NF; k++) free(alpha[k]);
    hr_stream_destroy(st); hr_source_destroy(src); hr_model_destroy(m);
    return 0;
  }
  /* the image background: a 400x300 crop of frame 1 as R G B (another aspect ratio: scaled to cover) */
  int pw = 400, ph = 300;
  uint8_t *pic = malloc((size_t)pw * ph * 3);
  for (int y = 0; y < ph; y++) {
    hr_frame_row_rgbf(&fr[1], y + 100, row);
    for (int x = 0; x < pw * 3; x++) pic[(size_t)y * pw * 3 + x] = (uint8_t)lrintf(row[300 * 3 + x] * 255);
  }
  hr_pixfmt fmts[] = {HR_PIX_I420_VIDEO, HR_PIX_NV12_VIDEO, HR_PIX_NV12_FULL, HR_PIX_RGB24, HR_PIX_BGRA};
  for (int i = 0; i < 5; i++) run_format(fmts[i], use, alpha, pic, pw, ph, row);
  run_rgba(use, alpha, row);
  run_video(HR_PIX_NV12_VIDEO, use, alpha, row);
  run_video(HR_PIX_RGB24, use, alpha, row);
  free(pic); free(row);
  for (int k = 0; k < NF; k++) free(alpha[k]);
  hr_stream_destroy(st);
  hr_source_destroy(src);
  hr_model_destroy(m);
  return hr_test_finish("test_composite");
}
