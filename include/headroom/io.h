/* headroom io: frame sources (image folders, video files, TUM RGB-D folders, raw streams, V4L2
 * cameras) and atomic PNG / file writers, in the separate libheadroom_io target.
 *
 * Not included by headroom.h: the core library builds without libspng, libturbojpeg and FFmpeg.
 * The CLI and examples include this header and link headroom_io.
 *
 * FFmpeg is not linked: the video-file source lives in a module, headroom-io-ffmpeg.so (installed
 * in LIBDIR/headroom/), opened with dlopen by the first hr_source_open of a video file. A process
 * that reads only images, raw frames, TUM folders or a camera never maps FFmpeg's libraries. The
 * environment variable HR_IO_FFMPEG_MODULE may name the module's path (a relocated install of a
 * statically linked program); when it cannot be opened, opening a video fails with HR_ENOTSUP and
 * a message naming the path.
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
HR_API void hr_source_params_default(hr_source_params *p);

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
HR_API hr_status hr_source_open(const char *spec, const hr_source_params *params, hr_source **out,
                         char *err, size_t err_len);

/* Next frame into *out (borrowed; see the lifetime rule above). Returns HR_OK, HR_EEOF at the end
 * (and on every later call), or an error with the message in hr_source_last_error():
 *   list sources (images, TUM): HR_ECORRUPT / HR_EIO / HR_EMISMATCH for a file that fails to
 *     decode; the file is skipped and the next read goes on with the next one.
 *   raw: HR_ECORRUPT for a truncated final frame ("truncated frame 12: 1500000 of 4147200 bytes",
 *     frames counted from 0), then HR_EEOF.
 *   video, V4L2: decoder / driver errors are sticky (every later read returns the same status).
 * *out is left untouched on error. */
HR_API hr_status hr_source_read(hr_source *s, hr_frame *out);

/* Frames the source will give, or -1 if unknown (stdin, camera, video without a frame count). For
 * video it is the container's count (a damaged file may give fewer). */
HR_API int64_t hr_source_frame_count(const hr_source *s);

/* One line owned by the source, e.g. "video vtest.avi 768x576 i420v 10 fps 795 frames (msmpeg4v3,
 * in place)". Never NULL for a non-NULL source. */
HR_API const char *hr_source_describe(const hr_source *s);

/* Size and format of the frames (those of the first frame; video may change size mid-stream). */
HR_API void hr_source_get_format(const hr_source *s, hr_pixfmt *fmt, int *width, int *height);

/* Last error message of this source ("" if none). Owned by the source. */
HR_API const char *hr_source_last_error(const hr_source *s);

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
HR_API void hr_source_get_stats(const hr_source *s, hr_source_stats *out);

/* NULL-safe. Invalidates every frame handed out. */
HR_API void hr_source_destroy(hr_source *s);

/* ---------------------------------------------------------------------------------------------
 * Memory of a source, predicted before its frames are read: what reading it adds to the process's
 * peak RSS, part by part, when the reader keeps pool_size frames valid (as hr_source_read's
 * lifetime rule allows). Bytes are resident bytes (pages written), not address space.
 *
 * How each kind is modelled (figures measured on x86-64 Debian 12: libspng 0.7, libjpeg-turbo
 * 2.1, FFmpeg 5.1; the model's error against measured peaks is in tests/cli/plan_rss.sh):
 *   pool      image lists, raw input, swscale conversion, V4L2 YUYV/MJPEG: pool_size packed frames
 *             of the source's format (RGB24 for images and conversions). In-place video: 0.
 *   file      image lists: the whole-file read buffer, as large as the largest file of the list
 *             (each file is stat()ed: no file is read).
 *   decoder   libspng: zlib's inflate state and window, scanline rows. libjpeg-turbo: component
 *             rows (baseline), or the whole image's DCT coefficients (progressive: 2 bytes per
 *             sample). FFmpeg: the decoder's context (2 MB + 0.4 bytes a pixel, fitted on H.264),
 *             each further frame thread's context, stack and malloc arena (1.9 MB), swscale's
 *             context when converting, the demuxer's I/O buffer, the packets it read while
 *             probing and its index.
 *   frames    FFmpeg's decoded pictures, each the frame buffer as FFmpeg's default allocator
 *             aligns it plus the codec's per-picture side data (H.264: motion vectors, macroblock
 *             types, reference indices, exactly as h264_slice.c allocates them). How many:
 *               refs + 1 (decoding) + 1.32 x (frame threads - 1) + frames held beyond those,
 *             refs from the H.264 SPS (max_num_ref_frames; else the level's DPB size), a table
 *             for other codecs (intra-only 0, MPEG-1/2/4 and H.263 2, VP8 3, VP9 4, HEVC 5, others
 *             2 + reorder delay). The 1.32 pictures a frame thread adds (its picture in flight and
 *             its own side-data pools) and the frames held (pool_size - 2 when the newest is
 *             still a reference, else pool_size - 1) were fitted on H.264 at 960x540 and
 *             1920x1440 with 1..4 threads and 1..8 references. Against the measured growth of
 *             open + 24 frames (pool_size 3, FFmpeg's 3 threads on 2 cores) the whole source
 *             estimate is within 5% for H.264 (1, 4, 8 references; both sizes), and within 15%
 *             for the codecs whose references come from the table (HEVC +5%, MPEG-4 -7% / +15%,
 *             VP9 +11%, MJPEG +14%).
 *             V4L2: the driver's mmap buffers (pool_size + 2).
 *   code      library code paged in: measured by hr_source_open (growth of the process's
 *             file-backed RSS across the open, which for video decodes the first frame; the open
 *             that loads the FFmpeg module adds the anonymous RSS its libraries' load took), plus
 *             for image lists the decoder code first touched at the first decode (measured
 *             constants). 0 when the code was already resident (a second source of a kind).
 * The per-session memory of the model (the session's io buffer when frames are resized, etc.) is
 * the core library's, in hr_plan_info. */
typedef struct hr_source_memory {
  int64_t pool_bytes;          /* the source's own pool of packed frames */
  int64_t file_bytes;          /* whole-file read buffer (image lists) */
  int64_t decoder_bytes;       /* decoder, threads, converter and demuxer state */
  int64_t frames_bytes;        /* decoder's pictures (FFmpeg), driver buffers (V4L2) */
  int64_t code_bytes;          /* library code paged in */
  int64_t total_bytes;         /* the sum of the five above */
  /* FFmpeg's picture model (0 for other kinds of source). */
  int refs;                    /* reference pictures the decoder keeps */
  int threads;                 /* decoder threads (FFmpeg's choice when opened with 0) */
  int frame_threads;           /* of those, frame threads (each decodes a picture of its own) */
  double pictures;             /* pictures alive at the peak, held frames included */
  int64_t picture_bytes;       /* one picture: frame buffer + side data */
  char detail[256];            /* one line on how the figures were made, e.g. "h264 refs 4 (SPS)" */
} hr_source_memory;

/* Fill *out for s read with pool_size frames kept valid (0: the pool_size it was opened with;
 * another value asks what the same source would take with that many). Cheap: no frame is decoded
 * (image lists stat() their files). Returns HR_OK, or HR_EINVAL (s or out NULL, pool_size outside
 * 0..64; *out is then zeroed). */
HR_API hr_status hr_source_memory_estimate(const hr_source *s, int pool_size, hr_source_memory *out);

/* ---------------------------------------------------------------------------------------------
 * Output writers. Each writes NAME.tmp next to NAME and renames it over NAME (no fsync), so a
 * file that exists is always complete, even after a crash; on failure NAME is untouched and
 * NAME.tmp is removed. Strides are in bytes, >= the row size. Return HR_EINVAL (bad arguments),
 * HR_ENOMEM, HR_EIO (cannot write or rename; errno is kept).
 * ------------------------------------------------------------------------------------------- */
HR_API hr_status hr_png_write_gray8(const char *path, int w, int h, const uint8_t *px, ptrdiff_t stride);
/* 16-bit grayscale, host-endian samples (written big-endian as PNG requires). */
HR_API hr_status hr_png_write_gray16(const char *path, int w, int h, const uint16_t *px, ptrdiff_t stride_bytes);
HR_API hr_status hr_png_write_rgb24(const char *path, int w, int h, const uint8_t *px, ptrdiff_t stride);
/* Peak heap one hr_png_write_* call takes beyond the caller's pixels, for a w x h image of
 * channels samples (1 gray, 3 RGB) of bit_depth bits (8 or 16): zlib's deflate state (256 KB at
 * the default window and memLevel), libspng's context and two scanlines, and the encoded file in
 * memory, which libspng grows to the next power of two (sized here for a file of an eighth of the
 * raw bytes: an RVM matte at the writer's settings is ~1/16, 174 KB at 1920x1440; photos compress
 * far less). 0 for invalid arguments. */
HR_API int64_t hr_png_write_memory_estimate(int w, int h, int channels, int bit_depth);
HR_API hr_status hr_file_write_atomic(const char *path, const void *data, size_t len);
/* Create a folder and its parents (mkdir -p). HR_EIO with errno set on failure. */
HR_API hr_status hr_mkdirs(const char *path);

#ifdef __cplusplus
}
#endif
#endif
