/* Video-file source through FFmpeg: demux, decode, and hand the decoder's own I420/NV12 (and
 * packed RGB24/BGRA) planes out in place; other pixel formats are converted once with swscale
 * into a pool buffer. */
#include <stdlib.h>
#include <string.h>
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/imgutils.h>
#include <libavutil/pixdesc.h>
#include <libswscale/swscale.h>
#include "io_internal.h"

typedef struct video {
  AVFormatContext *fmt;
  AVCodecContext *dec;
  AVPacket *pkt;
  AVFrame **ring;          /* pool_size decoded frames kept referenced (the lifetime rule) */
  int ring_n, ring_next;
  int stream;
  AVRational tb;
  int64_t start_pts;
  int64_t frame_ns;        /* nominal frame duration, for frames without a timestamp */
  int64_t last_ts;
  int flushing, pending;   /* pending: ring[0] holds the frame decoded at open, not yet handed out */
  int last_in_place, last_slot;
  int skipped_packets;     /* undecodable packets since the last frame handed out */
  struct SwsContext *sws;
  int sws_w, sws_h, sws_fmt;
} video;

static hr_status averr(hr_source *s, hr_status st, const char *what, int e) {
  char b[AV_ERROR_MAX_STRING_SIZE];
  av_strerror(e, b, sizeof b);
  return hr__source_fail(s, st, "%s: %s", what, b);
}

static void video_destroy(hr_source *s) {
  video *v = s->impl;
  if (!v) return;
  for (int i = 0; v->ring && i < v->ring_n; i++) av_frame_free(&v->ring[i]);
  free(v->ring);
  av_packet_free(&v->pkt);
  avcodec_free_context(&v->dec);
  avformat_close_input(&v->fmt);
  sws_freeContext(v->sws);
  free(v);
  s->impl = NULL;
}

/* Decode the next frame into f. HR_EEOF at the end; errors are sticky. */
static hr_status decode_next(hr_source *s, video *v, AVFrame *f) {
  for (;;) {
    int r = avcodec_receive_frame(v->dec, f);
    if (r == 0) return HR_OK;
    if (r == AVERROR_EOF) return HR_EEOF;
    if (r != AVERROR(EAGAIN)) return s->sticky = averr(s, HR_ECORRUPT, "video decoder", r);
    if (v->flushing) return HR_EEOF;
    r = av_read_frame(v->fmt, v->pkt);
    if (r == AVERROR_EOF) {
      v->flushing = 1;
      avcodec_send_packet(v->dec, NULL);
      continue;
    }
    if (r < 0) return s->sticky = averr(s, HR_EIO, "reading the video file", r);
    if (v->pkt->stream_index != v->stream) { av_packet_unref(v->pkt); continue; }
    r = avcodec_send_packet(v->dec, v->pkt);
    av_packet_unref(v->pkt);
    if (r == AVERROR_INVALIDDATA) { v->skipped_packets++; continue; }   /* as ffmpeg(1): go on */
    if (r < 0 && r != AVERROR(EAGAIN)) return s->sticky = averr(s, HR_ECORRUPT, "video decoder", r);
  }
}

/* The hr_pixfmt a decoder format is handed out as in place, or HR_PIX_NONE (convert). */
static hr_pixfmt native_fmt(const AVFrame *f) {
  for (int i = 0; i < 3; i++)
    if (f->data[i] && f->linesize[i] <= 0) return HR_PIX_NONE;
  if (f->format == AV_PIX_FMT_RGB24) return HR_PIX_RGB24;
  if (f->format == AV_PIX_FMT_BGRA) return HR_PIX_BGRA;
  if ((f->width | f->height) & 1) return HR_PIX_NONE;   /* 4:2:0 formats need even sizes */
  int full = f->color_range == AVCOL_RANGE_JPEG;
  switch (f->format) {
    case AV_PIX_FMT_YUV420P: return full ? HR_PIX_I420_FULL : HR_PIX_I420_VIDEO;
    case AV_PIX_FMT_YUVJ420P: return HR_PIX_I420_FULL;
    case AV_PIX_FMT_NV12: return full ? HR_PIX_NV12_FULL : HR_PIX_NV12_VIDEO;
    default: return HR_PIX_NONE;
  }
}

/* swscale wants the non-deprecated format plus an explicit range. */
static enum AVPixelFormat unj(enum AVPixelFormat p, int *full) {
  switch (p) {
    case AV_PIX_FMT_YUVJ420P: *full = 1; return AV_PIX_FMT_YUV420P;
    case AV_PIX_FMT_YUVJ422P: *full = 1; return AV_PIX_FMT_YUV422P;
    case AV_PIX_FMT_YUVJ444P: *full = 1; return AV_PIX_FMT_YUV444P;
    case AV_PIX_FMT_YUVJ440P: *full = 1; return AV_PIX_FMT_YUV440P;
    case AV_PIX_FMT_YUVJ411P: *full = 1; return AV_PIX_FMT_YUV411P;
    default: return p;
  }
}

static int sws_matrix(enum AVColorSpace cs) {
  switch (cs) {
    case AVCOL_SPC_BT709: return SWS_CS_ITU709;
    case AVCOL_SPC_FCC: return SWS_CS_FCC;
    case AVCOL_SPC_SMPTE240M: return SWS_CS_SMPTE240M;
    case AVCOL_SPC_BT2020_NCL: case AVCOL_SPC_BT2020_CL: return SWS_CS_BT2020;
    default: return SWS_CS_ITU601;   /* BT.470BG, SMPTE170M, unspecified */
  }
}

/* Convert f to RGB24 into the next pool buffer. */
static hr_status convert(hr_source *s, video *v, const AVFrame *f, uint8_t **dst) {
  size_t bytes = (size_t)f->width * (size_t)f->height * 3;
  *dst = hr__pool_take(&s->pool, bytes);
  if (!*dst) return s->sticky = hr__source_fail(s, HR_ENOMEM, "out of memory converting a %dx%d frame", f->width, f->height);
  int full = f->color_range == AVCOL_RANGE_JPEG;
  enum AVPixelFormat src = unj((enum AVPixelFormat)f->format, &full);
  if (!v->sws || v->sws_w != f->width || v->sws_h != f->height || v->sws_fmt != f->format) {
    v->sws = sws_getCachedContext(v->sws, f->width, f->height, src, f->width, f->height,
                                  AV_PIX_FMT_RGB24, SWS_BILINEAR | SWS_ACCURATE_RND, NULL, NULL, NULL);
    if (!v->sws)
      return s->sticky = hr__source_fail(s, HR_ENOTSUP, "swscale cannot convert %s to rgb24",
                                         av_get_pix_fmt_name(src));
    v->sws_w = f->width;
    v->sws_h = f->height;
    v->sws_fmt = f->format;
    sws_setColorspaceDetails(v->sws, sws_getCoefficients(sws_matrix(f->colorspace)), full,
                             sws_getCoefficients(SWS_CS_DEFAULT), 1, 0, 1 << 16, 1 << 16);
  }
  uint8_t *d[4] = {*dst, NULL, NULL, NULL};
  int ds[4] = {f->width * 3, 0, 0, 0};
  sws_scale(v->sws, (const uint8_t *const *)f->data, f->linesize, 0, f->height, d, ds);
  s->stats.converted++;
  s->stats.pooled++;
  s->stats.bytes_pooled += (int64_t)bytes;
  return HR_OK;
}

static hr_status hand_out(hr_source *s, video *v, int slot, hr_frame *out) {
  AVFrame *f = v->ring[slot];
  int64_t pts = f->best_effort_timestamp;
  int64_t ts;
  if (pts == AV_NOPTS_VALUE) {
    ts = v->last_ts == INT64_MIN ? 0 : v->last_ts + v->frame_ns;
  } else {
    ts = av_rescale_q(pts - v->start_pts, v->tb, (AVRational){1, 1000000000});
  }
  v->last_ts = ts;
  hr_pixfmt pf = native_fmt(f);
  memset(out, 0, sizeof *out);
  out->width = f->width;
  out->height = f->height;
  out->ts_ns = ts;
  if (pf != HR_PIX_NONE) {
    out->fmt = pf;
    int np = pf == HR_PIX_NV12_FULL || pf == HR_PIX_NV12_VIDEO ? 2
             : pf == HR_PIX_RGB24 || pf == HR_PIX_BGRA ? 1 : 3;
    for (int i = 0; i < np; i++) {
      out->planes[i] = f->data[i];
      out->strides[i] = f->linesize[i];
    }
    s->stats.in_place++;
    v->last_in_place = 1;
  } else {
    uint8_t *dst;
    hr_status st = convert(s, v, f, &dst);
    if (st) return st;
    hr__frame_packed(out, HR_PIX_RGB24, f->width, f->height, dst, ts);
    v->last_in_place = 0;
  }
  v->last_slot = slot;
  if (v->skipped_packets) {
    s->stats.warnings++;
    snprintf(s->err, sizeof s->err, "warning: %d undecodable video packets skipped", v->skipped_packets);
    v->skipped_packets = 0;
  }
  return HR_OK;
}

static hr_status video_read(hr_source *s, hr_frame *out) {
  video *v = s->impl;
  int slot;
  if (v->pending) {
    v->pending = 0;
    slot = 0;
  } else {
    slot = v->ring_next;
    av_frame_unref(v->ring[slot]);   /* the frame handed out ring_n reads ago expires here */
    hr_status st = decode_next(s, v, v->ring[slot]);
    if (st) return st;
  }
  v->ring_next = (slot + 1) % v->ring_n;
  return hand_out(s, v, slot, out);
}

static int video_native_planes(const hr_source *s, const void *planes[3]) {
  const video *v = s->impl;
  if (!v || !v->last_in_place) return 0;
  const AVFrame *f = v->ring[v->last_slot];
  int np = f->format == AV_PIX_FMT_NV12 ? 2 : f->format == AV_PIX_FMT_RGB24 || f->format == AV_PIX_FMT_BGRA ? 1 : 3;
  for (int i = 0; i < np; i++) planes[i] = f->data[i];
  return 1;
}

static const hr__source_ops video_ops = {"video", video_read, video_destroy, video_native_planes};

hr_status hr__video_open(hr_source *s, const char *path, char *err, size_t err_len) {
  video *v = calloc(1, sizeof *v);
  if (!v) return hr__errf(err, err_len, HR_ENOMEM, "out of memory");
  s->impl = v;
  s->ops = &video_ops;
  v->last_ts = INT64_MIN;
  char eb[AV_ERROR_MAX_STRING_SIZE];
  int r = avformat_open_input(&v->fmt, path, NULL, NULL);
  if (r < 0) {
    av_strerror(r, eb, sizeof eb);
    if (r == AVERROR(ENOENT) || r == AVERROR(EACCES))
      return hr__errf(err, err_len, HR_EIO, "cannot open %s: %s", path, eb);
    return hr__errf(err, err_len, HR_ENOTSUP, "%s is not a video FFmpeg can read (%s)", path, eb);
  }
  /* A guess at the lowest score (content matched nothing; no telling extension) is a misdetection. */
  if (v->fmt->probe_score < AVPROBE_SCORE_RETRY)
    return hr__errf(err, err_len, HR_ENOTSUP,
                    "%s is not a video FFmpeg can read (only a weak guess: %s, score %d of 100)", path,
                    v->fmt->iformat->name, v->fmt->probe_score);
  /* FFmpeg's tty demuxer renders any text file (.txt, .nfo, ...) as ANSI art: not a video. */
  if (strcmp(v->fmt->iformat->name, "tty") == 0)
    return hr__errf(err, err_len, HR_ENOTSUP, "%s is a text file, not a video", path);
  r = avformat_find_stream_info(v->fmt, NULL);
  if (r < 0) {
    av_strerror(r, eb, sizeof eb);
    return hr__errf(err, err_len, HR_ENOTSUP, "%s is not a video FFmpeg can read (no stream info: %s)", path, eb);
  }
  v->stream = -1;
  int64_t best = -1;
  int n_audio = 0, n_other = 0;
  for (unsigned i = 0; i < v->fmt->nb_streams; i++) {
    AVStream *st = v->fmt->streams[i];
    enum AVMediaType t = st->codecpar->codec_type;
    if (t == AVMEDIA_TYPE_AUDIO) n_audio++;
    if (t != AVMEDIA_TYPE_VIDEO || (st->disposition & AV_DISPOSITION_ATTACHED_PIC)) {
      if (t != AVMEDIA_TYPE_AUDIO) n_other++;
      continue;
    }
    int64_t area = (int64_t)st->codecpar->width * st->codecpar->height;
    if (area > best) { best = area; v->stream = (int)i; }
  }
  if (v->stream < 0)
    return hr__errf(err, err_len, HR_ENOTSUP, "%s has no video stream (%s: %d audio, %d other stream%s)",
                    path, v->fmt->iformat->name, n_audio, n_other, n_other == 1 ? "" : "s");
  AVStream *st = v->fmt->streams[v->stream];
  const AVCodec *codec = avcodec_find_decoder(st->codecpar->codec_id);
  if (!codec)
    return hr__errf(err, err_len, HR_ENOTSUP, "%s: no decoder for video codec %s", path,
                    avcodec_get_name(st->codecpar->codec_id));
  v->dec = avcodec_alloc_context3(codec);
  v->pkt = av_packet_alloc();
  v->ring_n = s->params.pool_size;
  v->ring = calloc((size_t)v->ring_n, sizeof *v->ring);
  if (!v->dec || !v->pkt || !v->ring) return hr__errf(err, err_len, HR_ENOMEM, "out of memory");
  for (int i = 0; i < v->ring_n; i++)
    if (!(v->ring[i] = av_frame_alloc())) return hr__errf(err, err_len, HR_ENOMEM, "out of memory");
  if ((r = avcodec_parameters_to_context(v->dec, st->codecpar)) < 0) goto fferr;
  v->dec->pkt_timebase = st->time_base;
  v->dec->thread_count = 0;   /* FFmpeg picks (frame threads add latency, harmless for a file) */
  if ((r = avcodec_open2(v->dec, codec, NULL)) < 0) goto fferr;
  /* Only the chosen stream's packets are demuxed. */
  for (unsigned i = 0; i < v->fmt->nb_streams; i++)
    if ((int)i != v->stream) v->fmt->streams[i]->discard = AVDISCARD_ALL;
  v->tb = st->time_base;
  v->start_pts = st->start_time != AV_NOPTS_VALUE ? st->start_time : 0;
  AVRational fr = av_guess_frame_rate(v->fmt, st, NULL);
  double fps = fr.num > 0 && fr.den > 0 ? av_q2d(fr) : s->params.fps;
  v->frame_ns = (int64_t)(1e9 / fps + 0.5);
  s->frame_count = st->nb_frames > 0 ? st->nb_frames : -1;

  /* Decode the first frame now: it proves the stream decodes and gives the real format. */
  hr_status hs = decode_next(s, v, v->ring[0]);
  if (hs) {
    s->sticky = HR_OK;
    if (hs == HR_EEOF) return hr__errf(err, err_len, HR_ECORRUPT, "%s: the video stream has no decodable frame", path);
    return hr__errf(err, err_len, hs, "%s: %s", path, s->err);
  }
  v->pending = 1;
  AVFrame *f = v->ring[0];
  hr_pixfmt pf = native_fmt(f);
  s->fmt = pf != HR_PIX_NONE ? pf : HR_PIX_RGB24;
  s->width = f->width;
  s->height = f->height;
  /* In place: empty slots, filled only if the stream later switches to a format we convert. */
  if (hr__pool_init(&s->pool, s->params.pool_size,
                    pf == HR_PIX_NONE ? (size_t)f->width * (size_t)f->height * 3 : 0))
    return hr__errf(err, err_len, HR_ENOMEM, "out of memory");
  const char *pfn = av_get_pix_fmt_name((enum AVPixelFormat)f->format);
  char how[96];
  if (pf != HR_PIX_NONE) snprintf(how, sizeof how, "in place");
  else snprintf(how, sizeof how, "%s converted to rgb24 by swscale into a pool of %d",
                pfn ? pfn : "?", s->params.pool_size);
  char frames[32] = "";
  if (s->frame_count > 0) snprintf(frames, sizeof frames, " %lld frames", (long long)s->frame_count);
  const AVPixFmtDescriptor *pd = av_pix_fmt_desc_get((enum AVPixelFormat)f->format);
  const char *cs = f->colorspace != AVCOL_SPC_UNSPECIFIED && pd && !(pd->flags & AV_PIX_FMT_FLAG_RGB)
                       ? av_color_space_name(f->colorspace) : NULL;
  snprintf(s->desc, sizeof s->desc, "video %s %dx%d %s %g fps%s (%s%s%s, %s)", hr__basename(path),
           f->width, f->height, hr_pixfmt_name(s->fmt), fps, frames, avcodec_get_name(st->codecpar->codec_id),
           cs ? ", " : "", cs ? cs : "", how);
  return HR_OK;
fferr:
  av_strerror(r, eb, sizeof eb);
  return hr__errf(err, err_len, HR_ENOTSUP, "%s: cannot open the %s decoder (FFmpeg: %s)", path,
                  codec->name, eb);
}
