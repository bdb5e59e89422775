/* The FFmpeg module's entry (headroom-io-ffmpeg.so, ../ffmod.h): its function table, the video
 * encoder the CLI's video outputs share (overlay, composite) and swscale converters. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/log.h>
#include <libavutil/opt.h>
#include <libswscale/swscale.h>
#include "ffm.h"

const hr__ffmod_host *hr__ffm_host;

struct hr__venc {
  hr__venc_params p;
  AVFormatContext *fc;
  AVCodecContext *cc;
  AVStream *st;
  AVFrame *fr;
  AVPacket *pkt;
  struct SwsContext *sws;   /* p.src -> yuv420p when p.src is not YUV420P */
  uint8_t *ybuf;            /* the converted picture */
  int header_done;
  char tmp[4200];
};

static enum AVPixelFormat av_pix(hr__ff_pix f) {
  switch (f) {
    case HR__FF_PIX_YUV420P: return AV_PIX_FMT_YUV420P;
    case HR__FF_PIX_NV12: return AV_PIX_FMT_NV12;
    case HR__FF_PIX_BGRA: return AV_PIX_FMT_BGRA;
    case HR__FF_PIX_RGB24: return AV_PIX_FMT_RGB24;
    case HR__FF_PIX_YUYV422: return AV_PIX_FMT_YUYV422;
    default: return AV_PIX_FMT_NONE;
  }
}

static const char *ffm_version(void) { return av_version_info(); }

static void ffm_strerror(int averr, char *buf, size_t n) {
  if (!n) return;
  buf[0] = 0;
  if (averr) av_strerror(averr, buf, n);
}

static void ffm_d2q(double v, int max, int *num, int *den) {
  AVRational q = av_d2q(v, max);
  *num = q.num;
  *den = q.den;
}

static int fail(hr__venc_stage *stage, int *averr, hr__venc_stage s, int r) {
  *stage = s;
  *averr = r;
  return -1;
}

static void venc_free(hr__venc *e) {
  if (!e) return;
  avcodec_free_context(&e->cc);
  if (e->fc) {
    if (e->fc->pb) avio_closep(&e->fc->pb);
    avformat_free_context(e->fc);
  }
  av_frame_free(&e->fr);
  av_packet_free(&e->pkt);
  sws_freeContext(e->sws);
  free(e->ybuf);
  free(e);
}

static int open_codec(hr__venc *e, const AVCodec *codec) {
  const hr__venc_params *p = &e->p;
  AVCodecContext *cc = avcodec_alloc_context3(codec);
  if (!cc) return AVERROR(ENOMEM);
  cc->width = p->width;
  cc->height = p->height;
  cc->pix_fmt = AV_PIX_FMT_YUV420P;
  cc->time_base = (AVRational){p->tb_num, p->tb_den};
  cc->framerate = (AVRational){p->rate_num, p->rate_den};
  cc->sample_aspect_ratio = (AVRational){1, 1};
  if (p->gop > 0) cc->gop_size = p->gop;
  cc->color_range = p->full_range ? AVCOL_RANGE_JPEG : AVCOL_RANGE_MPEG;
  cc->colorspace = AVCOL_SPC_SMPTE170M;
  if (p->bt601_all) {
    cc->color_primaries = AVCOL_PRI_SMPTE170M;
    cc->color_trc = AVCOL_TRC_SMPTE170M;
  }
  cc->thread_count = 1;   /* the network has the cores */
  if (e->fc->oformat->flags & AVFMT_GLOBALHEADER) cc->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
  if (codec->id == AV_CODEC_ID_H264) {
    av_opt_set(cc->priv_data, "preset", "veryfast", 0);
    if (p->h264_crf) av_opt_set(cc->priv_data, "crf", p->h264_crf, 0);
  } else if (codec->id == AV_CODEC_ID_MPEG4) {
    cc->flags |= AV_CODEC_FLAG_QSCALE;
    cc->global_quality = FF_QP2LAMBDA * p->mpeg4_q;
  }
  int r = avcodec_open2(cc, codec, NULL);
  if (r < 0) {
    avcodec_free_context(&cc);
    return r;
  }
  e->cc = cc;
  return 0;
}

static hr__venc *ffm_venc_open(const hr__venc_params *p, hr__venc_stage *stage, int *averr, const char **codec) {
  *stage = HR__VENC_OK;
  *averr = 0;
  *codec = NULL;
  hr__venc *e = calloc(1, sizeof *e);
  if (!e) { fail(stage, averr, HR__VENC_NOMEM, 0); return NULL; }
  e->p = *p;
  snprintf(e->tmp, sizeof e->tmp, "%s", p->tmp);
  int r;
  /* x264 and the muxer say what they do at the info level; keep stderr for warnings. */
  if (av_log_get_level() == AV_LOG_INFO) av_log_set_level(AV_LOG_WARNING);
  /* The container from the real name (the .tmp name says nothing); mp4 when the name is not known. */
  const AVOutputFormat *of = av_guess_format(NULL, p->path, NULL);
  if (!of) of = av_guess_format("mp4", NULL, NULL);
  r = avformat_alloc_output_context2(&e->fc, of, NULL, e->tmp);
  if (r < 0 || !e->fc) { fail(stage, averr, HR__VENC_MUXER, r); goto out; }
  r = AVERROR_ENCODER_NOT_FOUND;
  for (int i = 0; i < 2 && !e->cc && p->codecs[i]; i++) {
    const AVCodec *c = avcodec_find_encoder_by_name(p->codecs[i]);
    if (c && (r = open_codec(e, c)) >= 0) *codec = p->codecs[i];
  }
  if (!e->cc) { fail(stage, averr, HR__VENC_CODEC, r); goto out; }
  if (!(e->st = avformat_new_stream(e->fc, NULL))) { fail(stage, averr, HR__VENC_NOMEM, 0); goto out; }
  e->st->time_base = e->cc->time_base;
  if (p->set_avg_rate) e->st->avg_frame_rate = e->cc->framerate;
  if ((r = avcodec_parameters_from_context(e->st->codecpar, e->cc)) < 0) { fail(stage, averr, HR__VENC_PARAMS, r); goto out; }
  if (!(e->fc->oformat->flags & AVFMT_NOFILE) && (r = avio_open(&e->fc->pb, e->tmp, AVIO_FLAG_WRITE)) < 0) {
    fail(stage, averr, HR__VENC_CREATE, r);
    goto out;
  }
  if ((r = avformat_write_header(e->fc, NULL)) < 0) { fail(stage, averr, HR__VENC_HEADER, r); goto out; }
  e->header_done = 1;
  if (!(e->fr = av_frame_alloc()) || !(e->pkt = av_packet_alloc())) { fail(stage, averr, HR__VENC_NOMEM, 0); goto out; }
  e->fr->format = AV_PIX_FMT_YUV420P;
  e->fr->width = p->width;
  e->fr->height = p->height;
  e->fr->color_range = e->cc->color_range;
  e->fr->colorspace = e->cc->colorspace;
  if (p->src != HR__FF_PIX_YUV420P) {
    size_t ysz = (size_t)p->width * (size_t)p->height;
    if (!(e->ybuf = malloc(ysz * 3 / 2))) { fail(stage, averr, HR__VENC_NOMEM, 0); goto out; }
    e->fr->data[0] = e->ybuf;
    e->fr->data[1] = e->ybuf + ysz;
    e->fr->data[2] = e->ybuf + ysz + ysz / 4;
    e->fr->linesize[0] = p->width;
    e->fr->linesize[1] = e->fr->linesize[2] = p->width / 2;
    int flags = SWS_BILINEAR | (p->bitexact ? SWS_ACCURATE_RND | SWS_BITEXACT : 0);
    e->sws = sws_getContext(p->width, p->height, av_pix(p->src), p->width, p->height, AV_PIX_FMT_YUV420P, flags, NULL, NULL, NULL);
    if (!e->sws) { fail(stage, averr, HR__VENC_CONVERTER, 0); goto out; }
  }
  return e;
out:
  if (e->fc && e->fc->pb) {
    avio_closep(&e->fc->pb);
    unlink(e->tmp);
  }
  venc_free(e);
  return NULL;
}

static int ffm_venc_picture(hr__venc *e, uint8_t *planes[3], int strides[3], hr__venc_stage *stage, int *averr) {
  int r;
  if (!e->fr->buf[0] && (r = av_frame_get_buffer(e->fr, 0)) < 0) return fail(stage, averr, HR__VENC_NOMEM, r);
  if ((r = av_frame_make_writable(e->fr)) < 0) return fail(stage, averr, HR__VENC_NOMEM, r);
  for (int i = 0; i < 3; i++) {
    planes[i] = e->fr->data[i];
    strides[i] = e->fr->linesize[i];
  }
  return 0;
}

static int drain(hr__venc *e, hr__venc_stage *stage, int *averr) {
  for (;;) {
    int r = avcodec_receive_packet(e->cc, e->pkt);
    if (r == AVERROR(EAGAIN) || r == AVERROR_EOF) return 0;
    if (r < 0) return fail(stage, averr, HR__VENC_ENCODE, r);
    if (!e->pkt->duration && e->p.pkt_duration) e->pkt->duration = e->p.pkt_duration;
    av_packet_rescale_ts(e->pkt, e->cc->time_base, e->st->time_base);
    e->pkt->stream_index = e->st->index;
    r = av_interleaved_write_frame(e->fc, e->pkt);   /* takes the packet's reference */
    if (r < 0) return fail(stage, averr, HR__VENC_WRITE, r);
  }
}

static int ffm_venc_send(hr__venc *e, const uint8_t *const planes[3], const ptrdiff_t strides[3], int64_t pts,
                         hr__venc_stage *stage, int *averr) {
  if (planes && e->sws) {
    int ls[3] = {(int)strides[0], (int)strides[1], (int)strides[2]};
    sws_scale(e->sws, (const uint8_t *const *)planes, ls, 0, e->p.height, e->fr->data, e->fr->linesize);
  } else if (planes) {   /* the caller's yuv420p planes go to the encoder (it copies them) */
    for (int i = 0; i < 3; i++) {
      e->fr->data[i] = (uint8_t *)planes[i];
      e->fr->linesize[i] = (int)strides[i];
    }
  }
  e->fr->pts = pts;
  int r = avcodec_send_frame(e->cc, e->fr);
  if (r < 0) return fail(stage, averr, HR__VENC_ENCODE, r);
  return drain(e, stage, averr);
}

static int ffm_venc_close(hr__venc *e, int ok, hr__venc_stage *stage, int *averr) {
  *stage = HR__VENC_OK;
  *averr = 0;
  if (!e) return 0;
  int rc = 0;
  if (ok) {
    int r = avcodec_send_frame(e->cc, NULL);
    if (r < 0 && r != AVERROR_EOF) rc = fail(stage, averr, HR__VENC_FLUSH, r);
    if (!rc) rc = drain(e, stage, averr);
  }
  if (e->header_done) {
    int r = av_write_trailer(e->fc);
    if (r < 0 && !rc) rc = fail(stage, averr, HR__VENC_TRAILER, r);
  }
  if (e->fc->pb && avio_closep(&e->fc->pb) < 0 && !rc) rc = fail(stage, averr, HR__VENC_CLOSE, 0);
  venc_free(e);
  return rc;
}

static void *ffm_cvt_create(int w, int h, hr__ff_pix src, hr__ff_pix dst, int bitexact) {
  int flags = SWS_BILINEAR | (bitexact ? SWS_ACCURATE_RND | SWS_BITEXACT : 0);
  return sws_getContext(w, h, av_pix(src), w, h, av_pix(dst), flags, NULL, NULL, NULL);
}

static void ffm_cvt_run(void *c, const uint8_t *const src[3], const ptrdiff_t src_strides[3], uint8_t *const dst[3],
                        const int dst_strides[3], int h) {
  int ls[3] = {(int)src_strides[0], (int)src_strides[1], (int)src_strides[2]};
  sws_scale(c, (const uint8_t *const *)src, ls, 0, h, dst, dst_strides);
}

static void ffm_cvt_free(void *c) { sws_freeContext(c); }

static const hr__ffmod_api ffm_api = {
    HR__FFMOD_ABI, sizeof(hr_source), ffm_version, ffm_strerror, ffm_d2q, hr__ffm_video_open,
    ffm_venc_open, ffm_venc_picture, ffm_venc_send, ffm_venc_close,
    ffm_cvt_create, ffm_cvt_run, ffm_cvt_free,
};

__attribute__((visibility("default"))) const hr__ffmod_api *hr__ffmod_entry(int abi, size_t source_size,
                                                                           const hr__ffmod_host *host) {
  if (abi != HR__FFMOD_ABI || source_size != sizeof(hr_source) || !host) return NULL;
  hr__ffm_host = host;
  return &ffm_api;
}
