/* Video-file source through FFmpeg: demux, decode, and hand the decoder's own I420/NV12 (and
 * packed RGB24/BGRA) planes out in place; other pixel formats are converted once with swscale
 * into a pool buffer. Part of the FFmpeg module (headroom-io-ffmpeg.so, ../ffmod.h). */
#include <stdlib.h>
#include <string.h>
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/imgutils.h>
#include <libavutil/pixdesc.h>
#include <libswscale/swscale.h>
#include "ffm.h"

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
  int refs;                /* reference pictures the decoder keeps, for the memory model */
  const char *refs_from;   /* where that figure came from: "SPS", "level", "codec" */
  int64_t probed_bytes;    /* bytes the demuxer read while opening and probing (packets it keeps) */
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


/* ---- memory model (hr_source_memory_estimate) ---------------------------------------------- */

/* An RBSP bit reader: a NAL unit's payload with its emulation-prevention bytes (00 00 03) removed,
 * the first 512 bytes (an SPS is far shorter). Reads past the end set bad. */
typedef struct rbsp { uint8_t b[512]; size_t n, pos; int bad; } rbsp;

static void rbsp_init(rbsp *r, const uint8_t *p, size_t len) {
  r->n = r->pos = 0;
  r->bad = 0;
  int zeros = 0;
  for (size_t i = 0; i < len && r->n < sizeof r->b; i++) {
    if (zeros >= 2 && p[i] == 3) { zeros = 0; continue; }
    zeros = p[i] == 0 ? zeros + 1 : 0;
    r->b[r->n++] = p[i];
  }
}
static unsigned rb1(rbsp *r) {
  if (r->pos >= r->n * 8) { r->bad = 1; return 0; }
  unsigned v = (unsigned)(r->b[r->pos >> 3] >> (7 - (r->pos & 7))) & 1u;
  r->pos++;
  return v;
}
static unsigned rbn(rbsp *r, int n) { unsigned v = 0; while (n-- > 0) v = v << 1 | rb1(r); return v; }
static unsigned rbue(rbsp *r) {
  int z = 0;
  while (!rb1(r)) if (r->bad || ++z > 31) { r->bad = 1; return 0; }
  return (1u << z) - 1 + rbn(r, z);
}
static int rbse(rbsp *r) { unsigned k = rbue(r); return k & 1 ? (int)((k + 1) / 2) : -(int)(k / 2); }

/* max_num_ref_frames of an H.264 sequence parameter set (nal: its NAL header byte first; H.264
 * 7.3.2.1.1, read up to that field), -1 if it does not parse. */
static int h264_sps_refs(const uint8_t *nal, size_t len) {
  if (len < 4 || (nal[0] & 0x1f) != 7) return -1;
  rbsp r;
  rbsp_init(&r, nal + 1, len - 1);
  unsigned profile = rbn(&r, 8);
  rbn(&r, 16);                       /* constraint flags, level_idc */
  rbue(&r);                          /* seq_parameter_set_id */
  static const unsigned high[] = {100, 110, 122, 244, 44, 83, 86, 118, 128, 138, 139, 134, 135};
  int is_high = 0;
  for (size_t i = 0; i < sizeof high / sizeof high[0]; i++) is_high |= profile == high[i];
  if (is_high) {
    unsigned chroma = rbue(&r);
    if (chroma == 3) rb1(&r);        /* separate_colour_plane_flag */
    rbue(&r); rbue(&r); rb1(&r);     /* bit depths, qpprime_y_zero_transform_bypass_flag */
    if (rb1(&r)) {                   /* seq_scaling_matrix_present_flag */
      for (int i = 0; i < (chroma != 3 ? 8 : 12) && !r.bad; i++) {
        if (!rb1(&r)) continue;
        int last = 8, next = 8;
        for (int j = 0; j < (i < 6 ? 16 : 64) && next; j++) {
          next = (last + rbse(&r) + 256) % 256;
          if (next) last = next;
        }
      }
    }
  }
  rbue(&r);                          /* log2_max_frame_num_minus4 */
  unsigned poc = rbue(&r);
  if (poc == 0) {
    rbue(&r);
  } else if (poc == 1) {
    rb1(&r); rbse(&r); rbse(&r);
    unsigned n = rbue(&r);
    if (n > 255) return -1;
    for (unsigned i = 0; i < n; i++) rbse(&r);
  }
  unsigned refs = rbue(&r);
  return r.bad || refs > 16 ? -1 : (int)refs;
}

/* The first SPS of H.264 extradata: avcC (ISO 14496-15, in MP4/MKV) or Annex B start codes. */
static int h264_extradata_refs(const uint8_t *ed, size_t n) {
  if (!ed || n < 8) return -1;
  if (ed[0] == 1) {
    if ((ed[5] & 0x1f) < 1) return -1;
    size_t len = (size_t)ed[6] << 8 | ed[7];
    return 8 + len <= n ? h264_sps_refs(ed + 8, len) : -1;
  }
  for (size_t i = 0; i + 3 < n; i++) {
    if (ed[i] || ed[i + 1] || ed[i + 2] != 1 || (ed[i + 3] & 0x1f) != 7) continue;
    size_t b = i + 3, e = b;
    while (e + 2 < n && !(ed[e] == 0 && ed[e + 1] == 0 && ed[e + 2] <= 1)) e++;
    return h264_sps_refs(ed + b, e + 2 < n ? e - b : n - b);
  }
  return -1;
}

/* The DPB size an H.264 level allows at this size (Table A-1 MaxDpbMbs / frame macroblocks, at
 * most 16): the decoder's bound when the SPS gives no figure. */
static int h264_level_dpb(int level, int w, int h) {
  static const struct { int level, mbs; } t[] = {
      {9, 396}, {10, 396}, {11, 900}, {12, 2376}, {13, 2376}, {20, 2376}, {21, 4752}, {22, 8100},
      {30, 8100}, {31, 18000}, {32, 20480}, {40, 32768}, {41, 32768}, {42, 34816}, {50, 110400},
      {51, 184320}, {52, 184320}, {60, 696320}, {61, 696320}, {62, 696320}};
  int mbs = 0;
  for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) if (t[i].level == level) mbs = t[i].mbs;
  if (!mbs) return 16;
  int64_t frame = (int64_t)((w + 15) / 16) * ((h + 15) / 16);
  int64_t n = frame > 0 ? mbs / frame : 16;
  return n < 1 ? 1 : n > 16 ? 16 : (int)n;
}

/* Reference pictures a decoder keeps; *from names the source of the figure. */
static int codec_refs(const AVCodecParameters *par, const char **from) {
  const AVCodecDescriptor *d = avcodec_descriptor_get(par->codec_id);
  if (d && (d->props & AV_CODEC_PROP_INTRA_ONLY)) { *from = "intra-only"; return 0; }
  switch (par->codec_id) {
    case AV_CODEC_ID_H264: {
      int r = h264_extradata_refs(par->extradata, (size_t)(par->extradata_size > 0 ? par->extradata_size : 0));
      if (r >= 0) { *from = "SPS"; return r; }
      *from = "level";
      return h264_level_dpb(par->level, par->width, par->height);
    }
    case AV_CODEC_ID_HEVC: *from = "codec table"; return 5;   /* x265 defaults, measured; SPS not read */
    case AV_CODEC_ID_MPEG1VIDEO: case AV_CODEC_ID_MPEG2VIDEO: case AV_CODEC_ID_MPEG4: case AV_CODEC_ID_H263:
    case AV_CODEC_ID_H263P: case AV_CODEC_ID_H261: case AV_CODEC_ID_MSMPEG4V1: case AV_CODEC_ID_MSMPEG4V2:
    case AV_CODEC_ID_MSMPEG4V3: case AV_CODEC_ID_WMV1: case AV_CODEC_ID_WMV2: case AV_CODEC_ID_WMV3:
    case AV_CODEC_ID_VC1: case AV_CODEC_ID_FLV1:
      *from = "codec table"; return 2;                          /* the last and the next picture */
    case AV_CODEC_ID_VP8: *from = "codec table"; return 3;     /* last, golden, altref */
    case AV_CODEC_ID_VP9: *from = "codec table"; return 4;     /* measured (libvpx streams) */
    default:
      *from = "guess";
      return 2 + (par->video_delay > 0 ? par->video_delay : 0);
  }
}

/* Bytes of one frame as FFmpeg's default get_buffer2 allocates it (libavcodec/get_buffer.c:
 * dimensions aligned by avcodec_align_dimensions2, linesizes widened until aligned, one pool
 * buffer a plane with 16 + STRIDE_ALIGN - 1 bytes of slack). */
static int64_t ff_frame_bytes(AVCodecContext *dec, int w, int h, enum AVPixelFormat pf) {
  int aw = w, ah = h, align[AV_NUM_DATA_POINTERS] = {0};
  avcodec_align_dimensions2(dec, &aw, &ah, align);
  int ls[4];
  for (int tries = 0;; tries++) {
    if (av_image_fill_linesizes(ls, pf, aw) < 0 || tries > 16)
      return (int64_t)av_image_get_buffer_size(pf, w, h, 64);
    int unaligned = 0;
    for (int i = 0; i < 4; i++) if (align[i] > 0 && ls[i] % align[i]) unaligned = 1;
    if (!unaligned) break;
    aw += aw & ~(aw - 1);
  }
  size_t sizes[4] = {0};
  ptrdiff_t pl[4] = {ls[0], ls[1], ls[2], ls[3]};
  if (av_image_fill_plane_sizes(sizes, pf, ah, pl) < 0) return (int64_t)av_image_get_buffer_size(pf, w, h, 64);
  int64_t b = 0;
  for (int i = 0; i < 4; i++) if (sizes[i]) b += (int64_t)sizes[i] + 16 + 64 - 1;
  return b;
}

/* The codec's own per-picture tables beside the frame. H.264 (h264_slice.c, init_table_pools and
 * alloc_picture): qscale and mb_type per macroblock, two motion-vector tables per 4x4 block and
 * two reference-index tables per 8x8 block. MPEG-4 / H.263 family (mpegpicture.c): two
 * motion-vector tables per 8x8 block, mb_type. HEVC: a motion field per 4x4 block (12 bytes). */
static int64_t codec_side_bytes(enum AVCodecID id, int w, int h) {
  int64_t mbw = (w + 15) / 16, mbh = (h + 15) / 16, mbs = mbw + 1;
  switch (id) {
    case AV_CODEC_ID_H264: {
      int64_t big = mbs * (mbh + 1) + 1, b4 = (mbw * 4 + 1) * mbh * 4;
      return (big + mbs) + (big + mbs) * 4 + 2 * (2 * (b4 + 4) * 2) + 2 * (4 * mbs * mbh);
    }
    case AV_CODEC_ID_MPEG4: case AV_CODEC_ID_H263: case AV_CODEC_ID_H263P: case AV_CODEC_ID_MSMPEG4V1:
    case AV_CODEC_ID_MSMPEG4V2: case AV_CODEC_ID_MSMPEG4V3: case AV_CODEC_ID_WMV1: case AV_CODEC_ID_WMV2:
    case AV_CODEC_ID_FLV1: {
      int64_t b8 = (mbw * 2 + 1) * mbh * 2;
      return 2 * (2 * (b8 + 4) * 2) + (mbs * (mbh + 1) + 1) * 4 + mbs * (mbh + 1);
    }
    case AV_CODEC_ID_HEVC: return (int64_t)((w + 3) / 4) * ((h + 3) / 4) * 12;
    default: return 0;
  }
}

/* FFmpeg's decoder, fitted on H.264 (1 to 4 threads, 960x540 and 1920x1440, RssAnon growth over
 * open and 24 decoded frames, minus the pictures above): the context and its first-decode tables
 * 2 MB + 0.4 bytes a pixel; each further frame thread its own context, stack and malloc arena
 * 1.9 MB plus 1.32 pictures (its picture in flight and its own side-data pools). A slice thread
 * keeps no picture: its slice context, 0.25 MB. */
#define HR__FF_CTX_BYTES (2000 * 1000)
#define HR__FF_CTX_PER_PX 0.4
#define HR__FF_FRAME_THREAD_BYTES (1900 * 1000)
#define HR__FF_FRAME_THREAD_PICTURES 1.32
#define HR__FF_SLICE_THREAD_BYTES (250 * 1000)

static void video_memory(const hr_source *s, int pool, hr_source_memory *m) {
  video *v = s->impl;
  AVCodecContext *dec = v->dec;
  const AVStream *st = v->fmt->streams[v->stream];
  const AVFrame *f = v->ring[v->last_slot];
  int w = f->width > 0 ? f->width : s->width, h = f->height > 0 ? f->height : s->height;
  enum AVPixelFormat pf = f->format >= 0 ? (enum AVPixelFormat)f->format : dec->pix_fmt;
  /* After the end of a stream with pool_size 1 the last slot may be empty: the open's format. */
  int converts = f->format >= 0 ? native_fmt(f) == HR_PIX_NONE : s->fmt == HR_PIX_RGB24 && pf != AV_PIX_FMT_RGB24;
  int64_t px = (int64_t)w * h;
  int64_t frame = ff_frame_bytes(dec, w, h, pf);
  int64_t pic = frame + codec_side_bytes(dec->codec_id, w, h);
  int threads = dec->thread_count > 0 ? dec->thread_count : 1;
  int frame_threads = (dec->active_thread_type & FF_THREAD_FRAME) ? threads : 1;
  /* Held frames beyond the decoder's own: the newest handed out is usually still a reference. */
  int held = pool - 1 - (v->refs > 0 ? 1 : 0);
  if (held < 0) held = 0;
  double decoding = v->refs + 1 + HR__FF_FRAME_THREAD_PICTURES * (frame_threads - 1);
  m->refs = v->refs;
  m->threads = threads;
  m->frame_threads = frame_threads > 1 ? frame_threads : 0;
  m->pictures = decoding + held;
  m->picture_bytes = pic;
  m->frames_bytes = (int64_t)(decoding * (double)pic + 0.5) + (int64_t)held * frame;
  m->decoder_bytes = HR__FF_CTX_BYTES + (int64_t)(HR__FF_CTX_PER_PX * (double)px) +
                     (int64_t)(threads - 1) * (frame_threads > 1 ? HR__FF_FRAME_THREAD_BYTES : HR__FF_SLICE_THREAD_BYTES);
  /* The demuxer: its I/O buffer, the packets probing read (kept until the decoder asks for them)
   * and the stream's index. */
  m->decoder_bytes += 32 * 1024 + v->probed_bytes +
                      (int64_t)avformat_index_get_entries_count((AVStream *)st) * (int64_t)sizeof(AVIndexEntry);
  if (converts) {
    /* Converted to RGB24 into the pool; swscale's context: filters and a ring of line buffers. */
    m->pool_bytes = (int64_t)pool * px * 3;
    m->decoder_bytes += 256 * 1024 + 64 * (int64_t)w;
  }
  snprintf(m->detail, sizeof m->detail,
           "%s %dx%d %s, refs %d (%s), %d %s thread%s: %.2f pictures of %.2f MB (frame %.2f + side data)%s",
           avcodec_get_name(dec->codec_id), w, h, av_get_pix_fmt_name(pf) ? av_get_pix_fmt_name(pf) : "?",
           v->refs, v->refs_from, threads, frame_threads > 1 ? "frame" : threads > 1 ? "slice" : "decoder",
           threads == 1 ? "" : "s", m->pictures, (double)pic / 1e6, (double)frame / 1e6,
           converts ? ", converted by swscale into the pool" : ", handed out in place");
}

static const hr__source_ops video_ops = {"video", video_read, video_destroy, video_native_planes, video_memory};

hr_status hr__ffm_video_open(hr_source *s, const char *path, char *err, size_t err_len) {
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
  if (v->fmt->pb) v->probed_bytes = avio_tell(v->fmt->pb);
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
  v->refs = codec_refs(st->codecpar, &v->refs_from);
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
