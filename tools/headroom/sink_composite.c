/* `headroom run --composite SPEC` with --out-video FILE and/or --v4l2-out /dev/videoN: each
 * delivered frame composited over its background (headroom/composite.h: blur, color, image,
 * video, alpha; video:FILE gives one of its frames per output frame, from the start again at its
 * end)
 * with the health fallback policy (--fallback), then encoded (FFmpeg) and/or written to a V4L2
 * output device (a v4l2loopback virtual camera). Every switch of what the picture shows (matte,
 * hold, blur-all, passthrough) is printed with its reason.
 *
 * Video (through the FFmpeg module, src/io/ffmod.h, opened at --composite's open): the name's container; .mkv and .nut are encoded losslessly with FFV1 (for tests and
 * editing), anything else with libx264 (crf 18) or MPEG-4 part 2. yuv420p in the source's range.
 * Each frame's time is its source timestamp (microseconds), so the source's frame rate is kept,
 * variable rates included; the encoder opens at the second frame, whose interval gives the rate it
 * is told (and the duration of the last packet). The file is written as NAME.tmp and renamed at
 * the end.
 *
 * V4L2: the device is set to YUYV at the frame's size (VIDIOC_S_FMT on the output queue) and each
 * frame is written with write(2). Not tested here (no v4l2loopback device on the build machine).
 *
 * The compositor, the output frame, the encoder and the converters are made at the first frame
 * (its format is known then); nothing is allocated per frame by this sink itself. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <linux/videodev2.h>
#include "../../src/io/ffmod.h"
#include "headroom/composite.h"
#include "headroom/io.h"
#include "run.h"
#include "writer.h"

typedef struct comp_sink {
  run_cfg *cfg;
  hr_composite_params p;
  uint8_t *img;                /* decoded image:FILE (R G B), until the compositor has scaled it */
  hr_source *bgv;              /* video:FILE, read one frame per output frame, reopened at its end */
  const char *bgv_path;
  int64_t bgv_loops;
  hr_compositor *c;
  hr_pixfmt fmt;
  int w, h;
  uint8_t *obuf;               /* the composite, in the input's format */
  hr_frame of;                 /* describes obuf */
  hr_composite_out out;
  int64_t frames, switches;
  /* encoder (converts the composite to yuv420p when the input is not I420) */
  const hr__ffmod_api *ff;
  hr__venc *enc;
  int64_t ts0, last_pts, interval;   /* microseconds */
  int pending;                 /* the first composite waits in obuf for the encoder (opened at the
                                  second frame, when the rate is known) */
  char tmp[4200];
  /* v4l2 */
  int vfd;
  void *vsws;                  /* the module's converter to YUYV */
  uint8_t *vbuf;
  size_t vlen;
} comp_sink;

static hr__ff_pix ff_fmt(hr_pixfmt f) {
  switch (f) {
    case HR_PIX_I420_FULL: case HR_PIX_I420_VIDEO: return HR__FF_PIX_YUV420P;
    case HR_PIX_NV12_FULL: case HR_PIX_NV12_VIDEO: return HR__FF_PIX_NV12;
    case HR_PIX_BGRA: return HR__FF_PIX_BGRA;
    case HR_PIX_RGB24: return HR__FF_PIX_RGB24;
    default: return HR__FF_PIX_NONE;
  }
}
static int full_range(hr_pixfmt f) { return f == HR_PIX_I420_FULL || f == HR_PIX_NV12_FULL || f == HR_PIX_BGRA || f == HR_PIX_RGB24; }

static int av_fail(const comp_sink *s, char *err, size_t n, const char *path, const char *what, int r) {
  char m[128] = "";
  if (r && s->ff) s->ff->strerror(r, m, sizeof m);
  snprintf(err, n, "cannot write %s: %s%s%s", path, what, r ? ": " : "", m);
  return -1;
}

/* An encoder stage that failed, as this sink words it. */
static int stage_fail(const comp_sink *s, char *err, size_t n, hr__venc_stage st, int r) {
  const char *path = s->cfg->o->out_video, *ext = strrchr(path, '.');
  int lossless = ext && (!strcasecmp(ext, ".mkv") || !strcasecmp(ext, ".nut"));
  static const char *what[] = {
      [HR__VENC_OK] = "failed", [HR__VENC_NOMEM] = "out of memory", [HR__VENC_MUXER] = "no muxer",
      [HR__VENC_CODEC] = "neither libx264 nor mpeg4 opens", [HR__VENC_PARAMS] = "codec parameters",
      [HR__VENC_CREATE] = "cannot create", [HR__VENC_HEADER] = "header", [HR__VENC_CONVERTER] = "no converter",
      [HR__VENC_ENCODE] = "encoder", [HR__VENC_WRITE] = "write", [HR__VENC_FLUSH] = "encoder flush",
      [HR__VENC_TRAILER] = "trailer", [HR__VENC_CLOSE] = "close"};
  const char *w = st == HR__VENC_CODEC && lossless ? "FFV1 does not open"
                  : (unsigned)st < sizeof what / sizeof what[0] ? what[st] : "failed";
  return av_fail(s, err, n, path, w, r);
}

static int comp_open(void **ctx, run_cfg *cfg, char *err, size_t n) {
  const run_opts *o = cfg->o;
  if (!o->composite && !o->out_video && !o->v4l2_out) return 0;
  if (!o->out_video && !o->v4l2_out) { snprintf(err, n, "--composite needs --out-video FILE or --v4l2-out DEVICE"); return -1; }
  if (cfg->width != cfg->frame_w || cfg->height != cfg->frame_h) {
    snprintf(err, n, "--composite needs the matte at the frame's size (%dx%d): drop --size", cfg->frame_w, cfg->frame_h);
    return -1;
  }
  comp_sink *s = calloc(1, sizeof *s);
  if (!s) { snprintf(err, n, "out of memory"); return -1; }
  s->cfg = cfg; s->vfd = -1;
  char me[512];
  if (hr__ffmod_get(&s->ff, me, sizeof me)) { snprintf(err, n, "%s: %s", o->out_video ? "--out-video" : "--v4l2-out", me); free(s); return -1; }
  hr_composite_params_default(&s->p);
  const char *ip = NULL;
  char e[512];
  if (hr_composite_parse(o->composite ? o->composite : "blur", &s->p, &ip, e, sizeof e) ||
      (o->fallback && hr_composite_parse_fallback(o->fallback, &s->p, e, sizeof e))) {
    snprintf(err, n, "--composite: %s", e); free(s); return -1;
  }
  if (ip && s->p.mode == HR_COMPOSITE_MODE_VIDEO) {   /* open the video now: a bad file fails before the run starts */
    if (hr_source_open(ip, NULL, &s->bgv, e, sizeof e)) { snprintf(err, n, "--composite video: %s", e); free(s); return -1; }
    s->bgv_path = ip;
    ip = NULL;
  }
  if (ip) {   /* decode the picture now: a bad file fails before the run starts */
    hr_source *src = NULL;
    hr_frame f;
    hr_status st = hr_source_open(ip, NULL, &src, e, sizeof e);
    if (!st && (st = hr_source_read(src, &f))) snprintf(e, sizeof e, "%s", hr_source_last_error(src));
    if (!st && f.fmt != HR_PIX_RGB24) { st = HR_ENOTSUP; snprintf(e, sizeof e, "%s: not a PNG or JPEG picture", ip); }
    if (!st && !(s->img = malloc((size_t)f.width * f.height * 3))) { st = HR_ENOMEM; snprintf(e, sizeof e, "out of memory"); }
    if (!st) {
      for (int y = 0; y < f.height; y++) memcpy(s->img + (size_t)y * f.width * 3, (const uint8_t *)f.planes[0] + y * f.strides[0], (size_t)f.width * 3);
      s->p.image = s->img; s->p.image_width = f.width; s->p.image_height = f.height; s->p.image_stride = (ptrdiff_t)f.width * 3;
    }
    hr_source_destroy(src);
    if (st) { snprintf(err, n, "--composite image: %s", e); free(s); return -1; }
  }
  *ctx = s;
  return 0;
}

static int enc_open(comp_sink *s, char *err, size_t n) {
  const char *path = s->cfg->o->out_video;
  if ((s->w | s->h) & 1) { snprintf(err, n, "--out-video: %dx%d: the encoder (4:2:0) needs an even size", s->w, s->h); return -1; }
  snprintf(s->tmp, sizeof s->tmp, "%s.tmp", path);
  const char *ext = strrchr(path, '.');
  int lossless = ext && (!strcasecmp(ext, ".mkv") || !strcasecmp(ext, ".nut"));
  hr__venc_params vp;
  memset(&vp, 0, sizeof vp);
  vp.path = path;
  vp.tmp = s->tmp;
  vp.width = s->w;
  vp.height = s->h;
  vp.tb_num = 1;
  vp.tb_den = 1000000;   /* source timestamps, microseconds */
  s->ff->d2q(1e6 / (double)s->interval, 100000, &vp.rate_num, &vp.rate_den);
  vp.codecs[0] = lossless ? "ffv1" : "libx264";
  vp.codecs[1] = lossless ? NULL : "mpeg4";
  vp.h264_crf = "18";
  vp.mpeg4_q = 3;
  vp.full_range = full_range(s->fmt);
  vp.pkt_duration = s->interval;
  vp.src = ff_fmt(s->fmt);
  vp.bitexact = 1;
  hr__venc_stage st;
  int r;
  const char *codec;
  if (!(s->enc = s->ff->venc_open(&vp, &st, &r, &codec))) return stage_fail(s, err, n, st, r);
  return 0;
}

static int v4l2_open_out(comp_sink *s, char *err, size_t n) {
  const char *dev = s->cfg->o->v4l2_out;
  if ((s->vfd = open(dev, O_RDWR)) < 0) { snprintf(err, n, "--v4l2-out %s: %s", dev, strerror(errno)); return -1; }
  struct v4l2_format vf;
  memset(&vf, 0, sizeof vf);
  vf.type = V4L2_BUF_TYPE_VIDEO_OUTPUT;
  vf.fmt.pix.width = (unsigned)s->w; vf.fmt.pix.height = (unsigned)s->h;
  vf.fmt.pix.pixelformat = V4L2_PIX_FMT_YUYV;
  vf.fmt.pix.field = V4L2_FIELD_NONE;
  vf.fmt.pix.bytesperline = (unsigned)s->w * 2;
  vf.fmt.pix.sizeimage = (unsigned)s->w * s->h * 2;
  vf.fmt.pix.colorspace = V4L2_COLORSPACE_SRGB;
  if (ioctl(s->vfd, VIDIOC_S_FMT, &vf) < 0) { snprintf(err, n, "--v4l2-out %s: VIDIOC_S_FMT YUYV %dx%d: %s", dev, s->w, s->h, strerror(errno)); return -1; }
  s->vlen = (size_t)s->w * s->h * 2;
  if (!(s->vbuf = malloc(s->vlen))) { snprintf(err, n, "out of memory"); return -1; }
  s->vsws = s->ff->cvt_create(s->w, s->h, ff_fmt(s->fmt), HR__FF_PIX_YUYV422, 0);
  if (!s->vsws) { snprintf(err, n, "--v4l2-out: no converter to YUYV"); return -1; }
  return 0;
}

/* At the first frame: the compositor for its format and size, the output frame, the outputs. */
static int comp_first(comp_sink *s, const hr_frame *in, char *err, size_t n) {
  s->fmt = in->fmt; s->w = in->width; s->h = in->height;
  s->p.width = s->w; s->p.height = s->h; s->p.format = s->fmt;
  char e[512];
  if (hr_compositor_create(&s->p, &s->c, e, sizeof e)) { snprintf(err, n, "--composite: %s", e); return -1; }
  free(s->img); s->img = NULL; s->p.image = NULL;
  int yuv = ff_fmt(s->fmt) == HR__FF_PIX_YUV420P || ff_fmt(s->fmt) == HR__FF_PIX_NV12;
  size_t ysz = (size_t)s->w * s->h, total = yuv ? ysz * 3 / 2 : ysz * (size_t)hr_pixfmt_bpp(s->fmt);
  if (!(s->obuf = malloc(total))) { snprintf(err, n, "out of memory"); return -1; }
  s->of = *in;
  s->of.planes[0] = s->obuf; s->of.strides[0] = (ptrdiff_t)s->w * (yuv ? 1 : hr_pixfmt_bpp(s->fmt));
  if (ff_fmt(s->fmt) == HR__FF_PIX_NV12) { s->of.planes[1] = s->obuf + ysz; s->of.strides[1] = s->w; }
  if (ff_fmt(s->fmt) == HR__FF_PIX_YUV420P) {
    s->of.planes[1] = s->obuf + ysz; s->of.planes[2] = s->obuf + ysz + ysz / 4;
    s->of.strides[1] = s->of.strides[2] = s->w / 2;
  }
  for (int i = 0; i < 3; i++) { s->out.planes[i] = (uint8_t *)s->of.planes[i]; s->out.strides[i] = s->of.strides[i]; }
  s->ts0 = in->ts_ns; s->last_pts = -1; s->interval = 33333;
  if (s->cfg->o->v4l2_out && v4l2_open_out(s, err, n)) return -1;
  return 0;
}

/* The composite in obuf to the encoder, at pts (microseconds from the first frame). */
static int enc_frame(comp_sink *s, int64_t pts, char *err, size_t n) {
  if (pts <= s->last_pts) pts = s->last_pts + 1;
  s->last_pts = pts;
  hr__venc_stage st;
  int r;
  /* I420: the composite's own planes go to the encoder (it copies them); else converted. */
  if (s->ff->venc_send(s->enc, (const uint8_t *const *)s->of.planes, s->of.strides, pts, &st, &r)) return stage_fail(s, err, n, st, r);
  return 0;
}

static int comp_write(void *ctx, const run_frame *f, char *err, size_t n) {
  comp_sink *s = ctx;
  const hr_stream_result *r = f->res;
  const hr_frame *in = r->input;
  if (!in || !in->planes[0]) { snprintf(err, n, "--composite: frame %lld came without its pixels", (long long)f->index); return -1; }
  if (!s->c && comp_first(s, in, err, n)) return -1;
  if (in->fmt != s->fmt || in->width != s->w || in->height != s->h) {
    snprintf(err, n, "--composite: frame %lld is %s %dx%d, the run started with %s %dx%d", (long long)f->index, hr_pixfmt_name(in->fmt), in->width,
             in->height, hr_pixfmt_name(s->fmt), s->w, s->h);
    return -1;
  }
  if (s->pending) {   /* the second frame: the rate is known, the first composite goes first */
    int64_t dt = (in->ts_ns - s->ts0) / 1000;
    if (dt > 0) s->interval = dt;
    if (enc_open(s, err, n) || enc_frame(s, 0, err, n)) return -1;
    s->pending = 0;
  }
  if (s->bgv) {   /* the background video's next frame; at its end, from the start again */
    hr_frame bf;
    hr_status st = hr_source_read(s->bgv, &bf);
    if (st == HR_EEOF) {
      char e[512];
      hr_source_destroy(s->bgv); s->bgv = NULL;
      if (hr_source_open(s->bgv_path, NULL, &s->bgv, e, sizeof e)) { snprintf(err, n, "--composite video: reopening: %s", e); return -1; }
      s->bgv_loops++;
      st = hr_source_read(s->bgv, &bf);
    }
    if (st) { snprintf(err, n, "--composite video %s: %s", s->bgv_path, hr_source_last_error(s->bgv)); return -1; }
    if (hr_compositor_set_background(s->c, &bf)) { snprintf(err, n, "--composite video: %s", hr_compositor_last_error(s->c)); return -1; }
  }
  hr_composite_result cr;
  const uint8_t *a8 = writer_alpha8(f);   /* the slots' bytes (writer_alpha8_wanted), else the floats */
  if (a8 ? hr_compositor_apply_u8(s->c, in, a8, &r->health, &s->out, &cr) : hr_compositor_apply(s->c, in, r->alpha, &r->health, &s->out, &cr)) { snprintf(err, n, "--composite: %s", hr_compositor_last_error(s->c)); return -1; }
  if (cr.changed) {
    s->switches++;
    fprintf(stderr, "headroom run: frame %lld: composite shows %s%s%s\n", (long long)f->index, hr_composite_action_name(cr.action),
            cr.reason[0] ? ": " : "", cr.reason);
  }
  s->frames++;
  if (s->enc) {
    if (enc_frame(s, (in->ts_ns - s->ts0) / 1000, err, n)) return -1;
  } else if (s->cfg->o->out_video) {
    s->pending = 1;
  }
  if (s->vfd >= 0) {
    uint8_t *dst[3] = {s->vbuf, NULL, NULL};
    int dl[3] = {s->w * 2, 0, 0};
    s->ff->cvt_run(s->vsws, (const uint8_t *const *)s->of.planes, s->of.strides, dst, dl, s->h);
    ssize_t wr = write(s->vfd, s->vbuf, s->vlen);
    if (wr != (ssize_t)s->vlen) { snprintf(err, n, "--v4l2-out %s: write: %s", s->cfg->o->v4l2_out, wr < 0 ? strerror(errno) : "short write"); return -1; }
  }
  return 0;
}

static int comp_close(void *ctx, const run_end *e, char *err, size_t n) {
  comp_sink *s = ctx;
  int rc = 0;
  if (s->pending && (enc_open(s, err, n) || enc_frame(s, 0, err, n))) rc = -1;   /* a one-frame run */
  if (s->enc) {
    hr__venc_stage st;
    int r;
    if (s->ff->venc_close(s->enc, !rc, &st, &r) && !rc) rc = stage_fail(s, err, n, st, r);
    s->enc = NULL;
    if (!rc && rename(s->tmp, s->cfg->o->out_video)) rc = av_fail(s, err, n, s->cfg->o->out_video, strerror(errno), 0);
    if (rc) unlink(s->tmp);
  }
  if (!rc && s->c)
    fprintf(stderr, "headroom run: composite %s (fallback %s): %lld frames, %lld switches of what it shows%s%s\n", hr_composite_mode_name(s->p.mode),
            s->p.fallback == HR_COMPOSITE_FALLBACK_HOLD ? "hold" : s->p.fallback == HR_COMPOSITE_FALLBACK_BLUR_ALL ? "blur-all" : "passthrough",
            (long long)s->frames, (long long)s->switches, s->cfg->o->out_video ? " -> " : "", s->cfg->o->out_video ? s->cfg->o->out_video : "");
  if (!rc && s->bgv_path) fprintf(stderr, "headroom run: background video %s looped %lld times\n", s->bgv_path, (long long)s->bgv_loops);
  if (s->vsws) s->ff->cvt_free(s->vsws);
  if (s->vfd >= 0) close(s->vfd);
  free(s->vbuf); free(s->obuf); free(s->img);
  hr_source_destroy(s->bgv);
  hr_compositor_destroy(s->c);
  free(s);
  return rc;
}

const sink_ops run_sink_composite = {"composite", comp_open, comp_write, NULL, comp_close};
