/* Overlay video for `headroom run --overlay` (issue 8): the input frame with the matte drawn over
 * it (person tinted green at 50%, background dimmed, occluding pixels tinted red), encoded to a
 * video file (mp4 from the name) with libavcodec / libavformat, through the FFmpeg module
 * (src/io/ffmod.h, opened here on first use): libx264 if present, else MPEG-4 part 2, yuv420p
 * BT.601 video range, a constant frame rate.
 *
 * Everything is allocated by overlay_open (encoder, muxer, one picture, one packet, two rows of
 * composited RGB, the sampling maps); overlay_write converts, composites and encodes in place and
 * allocates nothing itself (what the encoder and muxer allocate inside is FFmpeg's business). The
 * file is written as NAME.tmp and renamed over NAME by a successful overlay_close, so a NAME that
 * exists is a complete, playable file. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "../../src/io/ffmod.h"
#include "run_hooks.h"

struct overlay_ctx {
  const hr__ffmod_api *ff;
  hr__venc *enc;
  int w, h;              /* picture size; the encoded size is w, h rounded up to even */
  int ew, eh;
  int64_t frames;        /* frames sent to the encoder */
  uint8_t *rgb;          /* two rows of ew composited RGB pixels */
  int16_t *arow;         /* one row of alpha as 0..256, -1 where occluding */
  uint8_t lut_pers[3][256], lut_back[3][256], lut_occ[3][256];   /* per channel: tinted, dimmed, red */
  int32_t *ixm, *iym;    /* picture column / row -> input column / row, for an input map_iw x map_ih */
  int map_iw, map_ih;
  int32_t *axm, *aym;    /* picture column / row -> alpha column / row, for alpha map_aw x map_ah */
  int map_aw, map_ah;
  char *path, *tmp;
  int header_done, failed;
  const char *codec;
  int64_t cost_ns, cost_ns_max;   /* convert + composite + encode per frame */
  int64_t compose_ns;             /* of which convert + composite */
  char err[256];
};

/* Tints, 8-bit RGB. */
static const int OV_PERSON[3] = {40, 230, 90};   /* mixed 50% into person pixels */
static const int OV_OCCLUDE[3] = {240, 30, 30};  /* mixed 50% into occluding pixels */
enum { OV_DIM = 102 };                           /* background kept at 102/256 = 40% */
/* Encoders tried in order (a test may change the list). */
static const char *ov_codecs[2] = {"libx264", "mpeg4"};

static int64_t ov_now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static int ov_fail(overlay_ctx *o, int st, const char *what, int averr) {
  char msg[128] = "";
  if (averr && o->ff) o->ff->strerror(averr, msg, sizeof msg);
  snprintf(o->err, sizeof o->err, "overlay %.100s: %.60s%s%.60s", o->path ? o->path : "", what, averr ? ": " : "", msg);
  return st;
}

/* An encoder stage that failed, as this sink words it. */
static int ov_stage_fail(overlay_ctx *o, hr__venc_stage s, int averr) {
  switch (s) {
    case HR__VENC_MUXER: return ov_fail(o, HR_ENOTSUP, "no muxer", averr);
    case HR__VENC_CODEC: return ov_fail(o, HR_ENOTSUP, "neither libx264 nor mpeg4 opens", averr);
    case HR__VENC_PARAMS: return ov_fail(o, HR_ENOMEM, "codec parameters", averr);
    case HR__VENC_CREATE: return ov_fail(o, HR_EIO, "cannot create the file", averr);
    case HR__VENC_HEADER: return ov_fail(o, HR_EIO, "cannot write the header", averr);
    case HR__VENC_ENCODE: return ov_fail(o, HR_EIO, "encoder", averr);
    case HR__VENC_WRITE: return ov_fail(o, HR_EIO, "cannot write", averr);
    case HR__VENC_FLUSH: return ov_fail(o, HR_EIO, "encoder flush", averr);
    case HR__VENC_TRAILER: return ov_fail(o, HR_EIO, "cannot write the trailer", averr);
    case HR__VENC_CLOSE: return ov_fail(o, HR_EIO, "cannot close", averr);
    default: return ov_fail(o, HR_ENOMEM, "out of memory", averr);
  }
}

static void ov_free(overlay_ctx *o) {
  if (!o) return;
  if (o->enc) {
    hr__venc_stage s;
    int e;
    o->ff->venc_close(o->enc, 0, &s, &e);
  }
  free(o->rgb);
  free(o->arow);
  free(o->ixm);
  free(o->iym);
  free(o->axm);
  free(o->aym);
  free(o->path);
  free(o->tmp);
  free(o);
}

/* Nearest sample at pixel centres: n picture positions over a source of m; positions past the
 * picture (the even padding) repeat its last one. */
static void ov_map(int32_t *map, int n_enc, int n, int m) {
  for (int i = 0; i < n_enc; i++) {
    int k = i < n ? i : n - 1;
    map[i] = (int32_t)(((2 * (int64_t)k + 1) * m) / (2 * (int64_t)n));
  }
}

int overlay_open(overlay_ctx **out, const char *path, int w, int h, double fps, char *err, size_t err_len) {
  if (err && err_len) err[0] = 0;
  if (!out) return HR_EINVAL;
  *out = NULL;
  if (!path || !*path || w <= 0 || h <= 0 || w > 16384 || h > 16384 || !(fps > 0 && fps <= 1000)) {
    if (err && err_len) snprintf(err, err_len, "overlay: bad arguments (%s, %dx%d, %g fps)", path ? path : "no file", w, h, fps);
    return HR_EINVAL;
  }
  overlay_ctx *o = calloc(1, sizeof *o);
  int st = HR_ENOMEM, r = 0;
  if (!o) goto fail_nomem;
  o->w = w;
  o->h = h;
  o->ew = (w + 1) & ~1;
  o->eh = (h + 1) & ~1;
  size_t pl = strlen(path);
  o->path = malloc(pl + 1);
  o->tmp = malloc(pl + 5);
  o->rgb = malloc((size_t)o->ew * 2 * 3);
  o->arow = malloc(sizeof *o->arow * (size_t)o->ew);
  o->ixm = malloc(sizeof *o->ixm * (size_t)o->ew);
  o->axm = malloc(sizeof *o->axm * (size_t)o->ew);
  o->iym = malloc(sizeof *o->iym * (size_t)o->eh);
  o->aym = malloc(sizeof *o->aym * (size_t)o->eh);
  if (!o->path || !o->tmp || !o->rgb || !o->arow || !o->ixm || !o->axm || !o->iym || !o->aym) goto fail_nomem;
  for (int k = 0; k < 3; k++)
    for (int c = 0; c < 256; c++) {
      o->lut_pers[k][c] = (uint8_t)((c + OV_PERSON[k]) >> 1);
      o->lut_back[k][c] = (uint8_t)((c * OV_DIM) >> 8);
      o->lut_occ[k][c] = (uint8_t)((c + OV_OCCLUDE[k]) >> 1);
    }
  memcpy(o->path, path, pl + 1);
  memcpy(o->tmp, path, pl);
  memcpy(o->tmp + pl, ".tmp", 5);

  char e[400];
  if (hr__ffmod_get(&o->ff, e, sizeof e)) { st = HR_ENOTSUP; snprintf(o->err, sizeof o->err, "overlay %.60s: %.180s", path, e); goto fail; }
  hr__venc_params vp;
  memset(&vp, 0, sizeof vp);
  vp.path = path;
  vp.tmp = o->tmp;
  vp.width = o->ew;
  vp.height = o->eh;
  o->ff->d2q(fps, 65535, &vp.rate_num, &vp.rate_den);
  vp.tb_num = vp.rate_den;   /* one tick a frame */
  vp.tb_den = vp.rate_num;
  vp.set_avg_rate = 1;
  vp.gop = (int)fmin(600, fmax(1, round((double)vp.rate_num / vp.rate_den * 2)));
  vp.codecs[0] = ov_codecs[0];
  vp.codecs[1] = ov_codecs[1];
  vp.h264_crf = "23";
  vp.mpeg4_q = 4;
  vp.bt601_all = 1;
  vp.src = HR__FF_PIX_YUV420P;
  hr__venc_stage vs;
  if (!(o->enc = o->ff->venc_open(&vp, &vs, &r, &o->codec))) { st = ov_stage_fail(o, vs, r); goto fail; }
  *out = o;
  return HR_OK;
fail_nomem:
  st = HR_ENOMEM;
  if (o && !o->err[0]) ov_fail(o, HR_ENOMEM, "out of memory", 0);
fail:
  if (err && err_len) snprintf(err, err_len, "%s", o ? o->err : "overlay: out of memory");
  ov_free(o);
  return st;
}

/* ---- one frame ---------------------------------------------------------------------------- */

static inline uint8_t ov_clip(int v) { return (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v); }

/* Input row sy, sampled at the picture's columns, as RGB into dst (ew pixels). Formats checked
 * by the caller. */
static void ov_fetch_row(const overlay_ctx *o, const hr_frame *f, int sy, uint8_t *dst) {
  const int32_t *xm = o->ixm;
  const int n = o->ew;
  const uint8_t *row = (const uint8_t *)f->planes[0] + sy * f->strides[0];
  switch (f->fmt) {
    case HR_PIX_RGB24:
      if (f->width == o->w && o->ew == o->w) { memcpy(dst, row, (size_t)n * 3); return; }
      for (int x = 0; x < n; x++) { const uint8_t *p = row + 3 * xm[x]; dst[3 * x] = p[0]; dst[3 * x + 1] = p[1]; dst[3 * x + 2] = p[2]; }
      return;
    case HR_PIX_BGRA:
      for (int x = 0; x < n; x++) { const uint8_t *p = row + 4 * xm[x]; dst[3 * x] = p[2]; dst[3 * x + 1] = p[1]; dst[3 * x + 2] = p[0]; }
      return;
    case HR_PIX_GRAY8:
      for (int x = 0; x < n; x++) dst[3 * x] = dst[3 * x + 1] = dst[3 * x + 2] = row[xm[x]];
      return;
    case HR_PIX_RGBF32: {
      const float *fr = (const float *)row;
      for (int x = 0; x < n; x++)
        for (int k = 0; k < 3; k++) {
          float v = fr[3 * xm[x] + k] * 255.f + 0.5f;
          dst[3 * x + k] = (uint8_t)(v >= 255.f ? 255 : v > 0.f ? (int)v : 0);   /* NaN -> 0 */
        }
      return;
    }
    default: break;
  }
  /* 4:2:0, BT.601: chroma of the 2x2 block. */
  const int nv12 = f->fmt == HR_PIX_NV12_FULL || f->fmt == HR_PIX_NV12_VIDEO;
  const int vid = f->fmt == HR_PIX_NV12_VIDEO || f->fmt == HR_PIX_I420_VIDEO;
  const uint8_t *c1 = (const uint8_t *)f->planes[1] + (sy >> 1) * f->strides[1];
  const uint8_t *c2 = nv12 ? c1 + 1 : (const uint8_t *)f->planes[2] + (sy >> 1) * f->strides[2];
  const int cs = nv12 ? 2 : 1;
  /* Video range: 298/256 on Y - 16 and 409, 100, 208, 516 on chroma; full: 256 and 359, 88, 183, 454. */
  const int ky = vid ? 298 : 256, y0 = vid ? 16 : 0;
  const int kr = vid ? 409 : 359, kgu = vid ? 100 : 88, kgv = vid ? 208 : 183, kb = vid ? 516 : 454;
  for (int x = 0; x < n; x++) {
    int sx = xm[x];
    int c = ky * (row[sx] - y0) + 128, d = c1[cs * (sx >> 1)] - 128, e = c2[cs * (sx >> 1)] - 128;
    dst[3 * x] = ov_clip((c + kr * e) >> 8);
    dst[3 * x + 1] = ov_clip((c - kgu * d - kgv * e) >> 8);
    dst[3 * x + 2] = ov_clip((c + kb * d) >> 8);
  }
}

/* Composite picture row y into dst (ew RGB pixels). */
static void ov_row(overlay_ctx *o, const hr_frame *f, const float *alpha, int aw, const uint8_t *occ, int y, uint8_t *dst) {
  ov_fetch_row(o, f, o->iym[y], dst);
  if (!alpha) return;
  const float *arow = alpha + (size_t)o->aym[y] * (size_t)aw;
  const uint8_t *orow = occ ? occ + (size_t)o->aym[y] * (size_t)aw : NULL;
  int16_t *a = o->arow;
  for (int x = 0; x < o->ew; x++) {
    float av = arow[o->axm[x]];
    a[x] = (int16_t)(av >= 1.f ? 256 : av > 0.f ? (int)(av * 256.f + 0.5f) : 0);   /* NaN -> 0 */
    if (orow && orow[o->axm[x]]) a[x] = -1;
  }
  for (int x = 0; x < o->ew; x++) {
    uint8_t *p = dst + 3 * x;
    int ax = a[x];
    if (ax == 0) { p[0] = o->lut_back[0][p[0]]; p[1] = o->lut_back[1][p[1]]; p[2] = o->lut_back[2][p[2]]; }
    else if (ax == 256) { p[0] = o->lut_pers[0][p[0]]; p[1] = o->lut_pers[1][p[1]]; p[2] = o->lut_pers[2][p[2]]; }
    else if (ax < 0) { p[0] = o->lut_occ[0][p[0]]; p[1] = o->lut_occ[1][p[1]]; p[2] = o->lut_occ[2][p[2]]; }
    else
      for (int k = 0; k < 3; k++)
        p[k] = (uint8_t)((ax * o->lut_pers[k][p[k]] + (256 - ax) * o->lut_back[k][p[k]] + 128) >> 8);
  }
}

int overlay_write(overlay_ctx *o, const hr_frame *input, const float *alpha, int aw, int ah, const uint8_t *occlusion) {
  if (!o || !input || (alpha && (aw <= 0 || ah <= 0))) return HR_EINVAL;
  if (o->failed) return o->failed;
  char why[128];
  if (hr_frame_validate(input, why, sizeof why)) { snprintf(o->err, sizeof o->err, "overlay: %s", why); return HR_EINVAL; }
  switch (input->fmt) {
    case HR_PIX_RGB24: case HR_PIX_BGRA: case HR_PIX_GRAY8: case HR_PIX_RGBF32:
    case HR_PIX_NV12_FULL: case HR_PIX_NV12_VIDEO: case HR_PIX_I420_FULL: case HR_PIX_I420_VIDEO: break;
    default:
      snprintf(o->err, sizeof o->err, "overlay: cannot draw %s frames", hr_pixfmt_name(input->fmt));
      return HR_ENOTSUP;
  }
  if (!alpha) occlusion = NULL;   /* the mask lives on the alpha's grid */
  int64_t t0 = ov_now_ns();
  if (input->width != o->map_iw || input->height != o->map_ih) {
    ov_map(o->ixm, o->ew, o->w, input->width);
    ov_map(o->iym, o->eh, o->h, input->height);
    o->map_iw = input->width;
    o->map_ih = input->height;
  }
  if (alpha && (aw != o->map_aw || ah != o->map_ah)) {
    ov_map(o->axm, o->ew, o->w, aw);
    ov_map(o->aym, o->eh, o->h, ah);
    o->map_aw = aw;
    o->map_ah = ah;
  }
  uint8_t *pl[3];
  int ls[3], r;
  hr__venc_stage vs;
  if (o->ff->venc_picture(o->enc, pl, ls, &vs, &r)) return o->failed = ov_fail(o, HR_ENOMEM, "frame", r);
  uint8_t *r0 = o->rgb, *r1 = o->rgb + (size_t)o->ew * 3;
  for (int y = 0; y < o->eh; y += 2) {
    ov_row(o, input, alpha, aw, occlusion, y, r0);
    ov_row(o, input, alpha, aw, occlusion, y + 1, r1);
    uint8_t *y0 = pl[0] + (ptrdiff_t)y * ls[0], *y1 = y0 + ls[0];
    uint8_t *u = pl[1] + (ptrdiff_t)(y >> 1) * ls[1], *v = pl[2] + (ptrdiff_t)(y >> 1) * ls[2];
    for (int x = 0; x < o->ew; x++) {
      const uint8_t *p = r0 + 3 * x, *q = r1 + 3 * x;
      y0[x] = (uint8_t)(((66 * p[0] + 129 * p[1] + 25 * p[2] + 128) >> 8) + 16);
      y1[x] = (uint8_t)(((66 * q[0] + 129 * q[1] + 25 * q[2] + 128) >> 8) + 16);
    }
    /* BT.601 video range chroma of the 2x2 average (sums of 4: scaled by 1/4 inside). */
    for (int x = 0; x < o->ew; x += 2) {
      const uint8_t *p = r0 + 3 * x, *q = r1 + 3 * x;
      int sr = p[0] + p[3] + q[0] + q[3], sg = p[1] + p[4] + q[1] + q[4], sb = p[2] + p[5] + q[2] + q[5];
      u[x >> 1] = (uint8_t)(((-38 * sr - 74 * sg + 112 * sb + 512) >> 10) + 128);
      v[x >> 1] = (uint8_t)(((112 * sr - 94 * sg - 18 * sb + 512) >> 10) + 128);
    }
  }
  o->compose_ns += ov_now_ns() - t0;
  if (o->ff->venc_send(o->enc, NULL, NULL, o->frames++, &vs, &r)) return o->failed = ov_stage_fail(o, vs, r);
  int64_t c = ov_now_ns() - t0;
  o->cost_ns += c;
  if (c > o->cost_ns_max) o->cost_ns_max = c;
  return HR_OK;
}

/* Last error message of this overlay ("" if none). */
const char *overlay_last_error(const overlay_ctx *o) { return o ? o->err : "overlay is NULL"; }

int overlay_close(overlay_ctx *o) {
  if (!o) return HR_OK;
  int st = o->failed, r;
  hr__venc_stage vs;
  hr__venc *enc = o->enc;
  o->enc = NULL;
  if (o->ff->venc_close(enc, !st, &vs, &r) && !st) st = ov_stage_fail(o, vs, r);
  if (!st && rename(o->tmp, o->path) != 0) st = ov_fail(o, HR_EIO, strerror(errno), 0);
  if (st) {
    unlink(o->tmp);
    fprintf(stderr, "headroom run: %s\n", o->err);
  }
  ov_free(o);
  return st;
}
