/* The FFmpeg module: everything of libheadroom_io and the CLI that calls FFmpeg (the video-file
 * source, video encoders, pixel converters) lives in a module of its own, headroom-io-ffmpeg.so,
 * opened with dlopen the first time a video is read or written. A process that reads raw frames,
 * images or a camera and writes PNGs never maps libavformat, libavcodec, libswscale and their
 * dependencies (24.6 MB of RSS at start when they were linked: issue 15).
 *
 * Where the module is looked for, in order (hr__ffmod_get; the first that exists is opened):
 *   $HR_IO_FFMPEG_MODULE                    an exact path (tests, relocated installs)
 *   DIR/headroom-io-ffmpeg.so               DIR: the folder of the object holding this code (the
 *                                           build tree: the CLI, libheadroom_io.so)
 *   DIR/headroom/headroom-io-ffmpeg.so      installed libheadroom_io.so.0 (LIBDIR/headroom/)
 *   DIR/../headroom/headroom-io-ffmpeg.so   an installed plugin one folder below LIBDIR (gst)
 *   DIR/<BINDIR to LIBDIR>/headroom/...     an installed CLI (BINDIR), relocatable prefix
 *   LIBDIR/headroom/headroom-io-ffmpeg.so   the configured install path (absolute)
 *   BUILD/headroom-io-ffmpeg.so             the build tree (tests in subfolders)
 * The module and its host are built from the same tree: hr__ffmod_entry checks HR__FFMOD_ABI and
 * the size of hr_source. The module calls nothing of the host but through hr__ffmod_host. */
#ifndef HR_IO_FFMOD_H
#define HR_IO_FFMOD_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include "io_internal.h"

#define HR__FFMOD_NAME "headroom-io-ffmpeg.so"
#define HR__FFMOD_ENTRY "hr__ffmod_entry"
#define HR__FFMOD_ABI 1

/* What the module may call in its host (io_common.c's helpers and the core's hr_pixfmt_name). */
typedef struct hr__ffmod_host {
  hr_status (*source_fail)(hr_source *s, hr_status st, const char *fmt, ...);
  hr_status (*errf)(char *err, size_t err_len, hr_status st, const char *fmt, ...);
  hr_status (*pool_init)(hr__pool *p, int n, size_t bytes);
  uint8_t *(*pool_take)(hr__pool *p, size_t bytes);
  void (*frame_packed)(hr_frame *f, hr_pixfmt fmt, int w, int h, const uint8_t *buf, int64_t ts);
  const char *(*basename)(const char *path);
  const char *(*pixfmt_name)(hr_pixfmt fmt);
} hr__ffmod_host;

/* Pixel formats the converters and encoders take: the frame sources' formats plus YUYV 4:2:2
 * (V4L2 output). 4:2:0 formats are handed as hr_pixfmt; the range is given separately. */
typedef enum hr__ff_pix {
  HR__FF_PIX_NONE = 0,
  HR__FF_PIX_YUV420P,
  HR__FF_PIX_NV12,
  HR__FF_PIX_BGRA,
  HR__FF_PIX_RGB24,
  HR__FF_PIX_YUYV422,
} hr__ff_pix;

/* A video file written with libavformat / libavcodec: yuv420p frames, timestamps in time_base. */
typedef struct hr__venc hr__venc;
typedef struct hr__venc_params {
  const char *path;              /* the file's real name: the container is guessed from it (mp4 if unknown) */
  const char *tmp;               /* the file written (NAME.tmp; renamed by the caller) */
  int width, height;             /* even */
  int tb_num, tb_den;            /* time base of the pts given to hr__venc_send */
  int rate_num, rate_den;        /* frame rate (codec framerate; the stream's avg_frame_rate when set_avg_rate) */
  int set_avg_rate;
  int gop;                       /* 0: the encoder's default */
  const char *codecs[2];         /* encoder names tried in order (NULL ends) */
  const char *h264_crf;          /* libx264's crf */
  int mpeg4_q;                   /* MPEG-4 part 2's fixed quantiser */
  int full_range;                /* yuv420p full range (else video range) */
  int bt601_all;                 /* primaries and transfer BT.601 too (else the matrix only) */
  int64_t pkt_duration;          /* duration of packets that have none (0: leave) */
  hr__ff_pix src;                /* what hr__venc_send gets: YUV420P is encoded as is; others converted */
  int bitexact;                  /* converter flag SWS_BITEXACT */
} hr__venc_params;

/* Why an open or a write failed (the caller words its message; averr is FFmpeg's code or 0). */
typedef enum hr__venc_stage {
  HR__VENC_OK = 0,
  HR__VENC_NOMEM,
  HR__VENC_MUXER,      /* no muxer for the name */
  HR__VENC_CODEC,      /* none of the encoders opens */
  HR__VENC_PARAMS,     /* codec parameters to the stream */
  HR__VENC_CREATE,     /* cannot create the file */
  HR__VENC_HEADER,     /* cannot write the header */
  HR__VENC_CONVERTER,  /* no converter from src to yuv420p */
  HR__VENC_ENCODE,     /* the encoder refused a frame or a packet */
  HR__VENC_WRITE,      /* the muxer could not write */
  HR__VENC_FLUSH,      /* the encoder's flush */
  HR__VENC_TRAILER,
  HR__VENC_CLOSE,
} hr__venc_stage;

typedef struct hr__ffmod_api {
  int abi;                      /* HR__FFMOD_ABI */
  size_t source_size;           /* sizeof(hr_source) the module was built with */
  const char *(*version)(void); /* av_version_info() */
  void (*strerror)(int averr, char *buf, size_t n);
  void (*d2q)(double v, int max, int *num, int *den);   /* av_d2q */
  /* The video-file source (see hr_source_open): s is allocated, params set. */
  hr_status (*video_open)(hr_source *s, const char *path, char *err, size_t err_len);
  /* Encoder. open: *stage and *averr say why it failed (*out NULL); *codec the name that opened. */
  hr__venc *(*venc_open)(const hr__venc_params *p, hr__venc_stage *stage, int *averr, const char **codec);
  /* A writable yuv420p picture for the next frame (src YUV420P without planes given to send). */
  int (*venc_picture)(hr__venc *e, uint8_t *planes[3], int strides[3], hr__venc_stage *stage, int *averr);
  /* Encode a frame: planes NULL sends the picture from venc_picture; else planes of p->src
   * (YUV420P: encoded from them, not copied first; others converted into the encoder's picture). */
  int (*venc_send)(hr__venc *e, const uint8_t *const planes[3], const ptrdiff_t strides[3], int64_t pts,
                   hr__venc_stage *stage, int *averr);
  /* Flush (when ok), trailer, close the file; frees e. Returns 0 or -1 with *stage, *averr. */
  int (*venc_close)(hr__venc *e, int ok, hr__venc_stage *stage, int *averr);
  /* A converter between two formats at one size (full_range: the source's range for YUV input). */
  void *(*cvt_create)(int w, int h, hr__ff_pix src, hr__ff_pix dst, int flags_bitexact);
  void (*cvt_run)(void *c, const uint8_t *const src[3], const ptrdiff_t src_strides[3], uint8_t *const dst[3],
                  const int dst_strides[3], int h);
  void (*cvt_free)(void *c);
} hr__ffmod_api;

/* The module's one exported function: NULL when abi or source_size differ from its own. */
typedef const hr__ffmod_api *(*hr__ffmod_entry_fn)(int abi, size_t source_size, const hr__ffmod_host *host);

/* Host side (ffmod.c): open the module once (thread-safe); later calls return the same answer.
 * HR_ENOTSUP with err naming the module path and dlerror() when it cannot be opened. */
hr_status hr__ffmod_get(const hr__ffmod_api **out, char *err, size_t err_len);
/* Path the module was opened from ("" before, or after a failure). */
const char *hr__ffmod_path(void);
/* 1 when the module (hence FFmpeg) is loaded in this process. */
int hr__ffmod_loaded(void);
/* Anonymous RSS the module's load added (its libraries' relocated data and .bss, constructors). */
int64_t hr__ffmod_load_anon_bytes(void);

#endif
