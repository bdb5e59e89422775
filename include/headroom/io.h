/* headroom io: frame sources (image folders, video files, TUM RGB-D folders, raw streams, V4L2
 * cameras) and atomic PNG / file writers, in the separate libheadroom_io target.
 *
 * Not included by headroom.h: the core library builds without libspng, libturbojpeg and FFmpeg.
 * The CLI and examples include this header and link headroom_io.
 *
 * Sources hand out borrowed hr_frame descriptors. Which pixel format each kind produces:
 *   image folder / single image  HR_PIX_RGB24, decoded into a pool buffer (PNG: libspng, JPEG:
 *                                libjpeg-turbo's default accurate integer DCT, JDCT_ISLOW).
 *   video file (FFmpeg)          HR_PIX_I420_VIDEO (yuv420p), HR_PIX_I420_FULL (yuvj420p, or
 *                                yuv420p flagged full range), HR_PIX_NV12_VIDEO / _FULL (nv12),
 *                                HR_PIX_RGB24 (rgb24), HR_PIX_BGRA (bgra): handed out in place,
 *                                pointing into the decoder's AVFrame (no copy). Any other decoder
 *                                format, and 4:2:0 of odd size, is converted once with swscale to
 *                                HR_PIX_RGB24 in a pool buffer (bilinear, accurate rounding, the
 *                                stream's matrix and range); describe() says which. 4:2:0 frames
 *                                keep the stream's matrix: headroom treats them as BT.601.
 *   TUM RGB-D folder, color      HR_PIX_RGB24 (the rgb.txt list, PNG or JPEG files).
 *   TUM RGB-D folder, depth      HR_PIX_DEPTH16_MM (the depth.txt list, 16-bit PNGs).
 *   raw file / stdin             the format named by params.input_format, read into a pool buffer.
 *   V4L2 camera                  NV12 in place (mmap buffer); YUYV converted to NV12 (chroma of
 *                                two rows averaged); MJPEG decoded to HR_PIX_RGB24 (both into pool
 *                                buffers). NV12 range: _FULL when the driver reports full range
 *                                (or the JPEG colorspace), else _VIDEO.
 *
 * Lifetime of a frame: the planes of a frame returned by hr_source_read() stay valid and unchanged
 * until the pool_size-th read after it (which reuses its buffer; failed reads count) or
 * hr_source_destroy(), whichever comes first. So with pool_size = 3 a caller may hold the last 3
 * frames; with pool_size = 1 a frame is valid until the next read. This holds for in-place video
 * frames too (the source keeps a reference on the last pool_size decoded AVFrames) and for V4L2
 * NV12 (the mmap buffer goes back to the driver pool_size reads later).
 *
 * Timestamps (hr_frame.ts_ns) are nanoseconds: video, the frame's best-effort pts minus the
 * stream's start time (a frame without one: previous + 1/fps); TUM, the list's seconds, exact to
 * the nanosecond; images and raw input, frame i at i/fps; V4L2, the driver's buffer time. They are
 * strictly increasing per source: a time that does not increase is raised to previous + 1 ns and
 * counted in stats.ts_fixups.
 *
 * Threads: one hr_source must be used by one thread at a time; sources are independent. */
#ifndef HEADROOM_IO_H
#define HEADROOM_IO_H

#include "headroom/core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hr_source hr_source;

/* Which list of a TUM RGB-D folder a source reads. Other kinds of source have only a color stream
 * and refuse HR_SOURCE_STREAM_DEPTH with HR_EINVAL. */
typedef enum hr_source_stream {
  HR_SOURCE_STREAM_COLOR = 0,  /* rgb.txt */
  HR_SOURCE_STREAM_DEPTH = 1,  /* depth.txt */
} hr_source_stream;

typedef struct hr_source_params {
  /* Raw input format "FMT:WxH[@FPS]", FMT one of hr_pixfmt_name()'s names: nv12 (full range),
   * nv12v, i420, i420v, bgra, rgb24, gray8, depth16 (e.g. "nv12:1920x1440@60"). When set, the spec
   * is read as raw frames (a file, or "-" for stdin). For a V4L2 spec it asks the camera for that
   * size and rate. Default NULL: detect the kind of source from the spec. */
  const char *input_format;
  hr_source_stream stream;     /* default HR_SOURCE_STREAM_COLOR */
  /* Depth units per metre of 16-bit depth PNGs: TUM uses 5000, RealSense 1000. Default 1000. With
   * exactly 1000 the values are handed out unchanged; otherwise each value v becomes
   * min(65535, floor(v * 1000 / depth_scale + 0.5)) millimetres (0 stays 0 = no reading). */
  double depth_scale;
  double fps;                  /* image folders and raw input without @FPS: frame i at i/fps s. Default 30 */
  int pool_size;               /* frames kept valid at once, 1..64. Default 3 */
} hr_source_params;

/* Fill p with the defaults above. */
void hr_source_params_default(hr_source_params *p);

/* Open a source. spec, in the order it is tried:
 *   params->input_format set      raw frames from the file spec, or stdin when spec is "-"
 *   "v4l2:/dev/videoN", "/dev/videoN"   V4L2 capture device
 *   "tum:DIR", or a DIR holding rgb.txt and depth.txt   TUM RGB-D folder
 *   a DIR                         every *.png / *.jpg / *.jpeg in it (case-insensitive), sorted by
 *                                 name (byte order); all must have the first image's size
 *   a PNG or JPEG file (by content)   that single image
 *   any other file                a video file, opened with libavformat
 * params may be NULL (defaults). Everything that can be checked up front is checked here: list
 * files exist, the first image decodes, the video has a video stream and a decoder. On success
 * *out is the source; on failure *out is NULL and err (if non-NULL) holds one line naming the file
 * and the problem. Returns HR_EINVAL (bad spec / params), HR_EIO (cannot open or read),
 * HR_ECORRUPT (malformed list or image), HR_ENOTSUP (no video stream, unsupported format or
 * codec), HR_EMISMATCH (images of different sizes), HR_ENOMEM. */
hr_status hr_source_open(const char *spec, const hr_source_params *params, hr_source **out,
                         char *err, size_t err_len);

/* Next frame into *out (borrowed; see the lifetime rule above). Returns HR_OK, HR_EEOF at the end
 * (and on every later call), or an error with the message in hr_source_last_error():
 *   list sources (images, TUM): HR_ECORRUPT / HR_EIO / HR_EMISMATCH for a file that fails to
 *     decode; the file is skipped and the next read goes on with the next one.
 *   raw: HR_ECORRUPT for a truncated final frame ("truncated frame 12: 1500000 of 4147200 bytes",
 *     frames counted from 0), then HR_EEOF.
 *   video, V4L2: decoder / driver errors are sticky (every later read returns the same status).
 * *out is left untouched on error. */
hr_status hr_source_read(hr_source *s, hr_frame *out);

/* Frames the source will give, or -1 if unknown (stdin, camera, video without a frame count). For
 * video it is the container's count (a damaged file may give fewer). */
int64_t hr_source_frame_count(const hr_source *s);

/* One line owned by the source, e.g. "video vtest.avi 768x576 i420v 10 fps 795 frames (msmpeg4v3,
 * in place)". Never NULL for a non-NULL source. */
const char *hr_source_describe(const hr_source *s);

/* Size and format of the frames (those of the first frame; video may change size mid-stream). */
void hr_source_get_format(const hr_source *s, hr_pixfmt *fmt, int *width, int *height);

/* Last error message of this source ("" if none). Owned by the source. */
const char *hr_source_last_error(const hr_source *s);

/* Counters, all since open. */
typedef struct hr_source_stats {
  int64_t frames;          /* frames handed out */
  int64_t in_place;        /* ... pointing into the decoder's or driver's own buffers (no copy) */
  int64_t pooled;          /* ... written into a pool buffer (image decode, raw read, conversion) */
  int64_t converted;       /* ... of those, after a pixel conversion pass (swscale, YUYV->NV12,
                              depth rescale): a second pass over the pixels */
  int64_t bytes_pooled;    /* bytes written into pool buffers */
  int64_t ts_fixups;       /* timestamps raised to keep them strictly increasing */
  int64_t warnings;        /* frames handed out despite a decoder warning (e.g. corrupt JPEG data,
                              an undecodable video packet skipped before them) */
} hr_source_stats;
void hr_source_get_stats(const hr_source *s, hr_source_stats *out);

/* NULL-safe. Invalidates every frame handed out. */
void hr_source_destroy(hr_source *s);

/* ---------------------------------------------------------------------------------------------
 * Output writers. Each writes NAME.tmp next to NAME and renames it over NAME (no fsync), so a
 * file that exists is always complete, even after a crash; on failure NAME is untouched and
 * NAME.tmp is removed. Strides are in bytes, >= the row size. Return HR_EINVAL (bad arguments),
 * HR_ENOMEM, HR_EIO (cannot write or rename; errno is kept).
 * ------------------------------------------------------------------------------------------- */
hr_status hr_png_write_gray8(const char *path, int w, int h, const uint8_t *px, ptrdiff_t stride);
/* 16-bit grayscale, host-endian samples (written big-endian as PNG requires). */
hr_status hr_png_write_gray16(const char *path, int w, int h, const uint16_t *px, ptrdiff_t stride_bytes);
hr_status hr_png_write_rgb24(const char *path, int w, int h, const uint8_t *px, ptrdiff_t stride);
hr_status hr_file_write_atomic(const char *path, const void *data, size_t len);
/* Create a folder and its parents (mkdir -p). HR_EIO with errno set on failure. */
hr_status hr_mkdirs(const char *path);

#ifdef __cplusplus
}
#endif
#endif
