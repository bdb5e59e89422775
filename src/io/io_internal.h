/* Internal interface shared by the frame sources of libheadroom_io: the source object, its
 * per-kind function table, the frame pool, and the image decoders. */
#ifndef HR_IO_INTERNAL_H
#define HR_IO_INTERNAL_H

#include <stdarg.h>
#include <stdio.h>
#include "headroom/io.h"

/* Per-kind behaviour behind hr_source (dav1d's tools/input style). */
typedef struct hr__source_ops {
  const char *kind;                                   /* "images", "video", "tum", "raw", "v4l2" */
  hr_status (*read)(hr_source *s, hr_frame *out);     /* fill *out or return an error; set s->err */
  void (*destroy)(hr_source *s);                      /* free s->impl (may be called half-built) */
  /* Optional: the decoder's / driver's own plane pointers of the last frame handed out (for tests
   * proving in-place delivery). Returns 0 if the last frame was not in place. */
  int (*native_planes)(const hr_source *s, const void *planes[3]);
  /* Optional: the kind's parts of hr_source_memory_estimate for pool frames kept valid (m is
   * zeroed; code_bytes, total_bytes and the pool of packed frames when this is NULL are filled by
   * the caller). */
  void (*memory)(const hr_source *s, int pool, hr_source_memory *m);
} hr__source_ops;

/* A ring of pool_size buffers. Each take returns the next slot (the oldest), grown if needed. */
typedef struct hr__pool {
  uint8_t **slot;
  size_t *cap;
  int n, next;
} hr__pool;

struct hr_source {
  const hr__source_ops *ops;
  void *impl;
  hr_source_params params;
  hr__pool pool;
  int64_t frame_count;          /* -1 unknown */
  int64_t last_ts;
  hr_source_stats stats;
  hr_pixfmt fmt;                /* format and size of the first frame */
  int width, height;
  hr_status sticky;             /* HR_OK, or the status every later read returns */
  int64_t code_bytes;           /* file-backed RSS the open added (library code paged in), 0 if unknown */
  char desc[320];
  char err[512];
};

/* printf into s->err; returns st. */
hr_status hr__source_fail(hr_source *s, hr_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* printf into a caller's err buffer (NULL-safe); returns st. */
hr_status hr__errf(char *err, size_t err_len, hr_status st, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

hr_status hr__pool_init(hr__pool *p, int n, size_t bytes);
uint8_t *hr__pool_take(hr__pool *p, size_t bytes);   /* NULL on ENOMEM */
void hr__pool_free(hr__pool *p);

/* Base name of a path (pointer into it). */
const char *hr__basename(const char *path);
/* Read a whole file into *buf (grown with realloc to *cap if needed); *len = bytes read. */
hr_status hr__file_read_all(const char *path, uint8_t **buf, size_t *cap, size_t *len,
                            char *err, size_t err_len);
/* Resident file-backed bytes of this process (RssFile of /proc/self/status), 0 where unknown. */
int64_t hr__rss_file_bytes(void);
/* Resident anonymous bytes (RssAnon), 0 where unknown. */
int64_t hr__rss_anon_bytes(void);
/* 1 if the bytes start with a PNG / JPEG signature. */
int hr__is_png(const uint8_t *b, size_t n);
int hr__is_jpeg(const uint8_t *b, size_t n);

/* Image decoding (png.c, jpeg.c). "name" is used in error messages only. */
typedef struct hr__jpeg hr__jpeg;   /* a reusable libjpeg-turbo decompressor */
hr_status hr__jpeg_create(hr__jpeg **out);
void hr__jpeg_destroy(hr__jpeg *j);
/* Working memory of one decode beyond the destination buffer. PNG: libspng's context, zlib's
 * inflate state and window, scanlines of a w-pixel row of up to 4 samples of bytes_per_sample.
 * JPEG: libjpeg-turbo's persistent state and component rows, and for a progressive (multi-scan)
 * JPEG the whole image's DCT coefficients; read from the JPEG's header (data, len). */
int64_t hr__png_decode_memory(int w, int bytes_per_sample);
int64_t hr__jpeg_decode_memory(hr__jpeg *j, const uint8_t *data, size_t len, int *progressive);
/* Size of a PNG or JPEG image in memory (header only). */
hr_status hr__image_probe(hr__jpeg *j, const uint8_t *data, size_t len, int *w, int *h,
                          const char *name, char *err, size_t err_len);
/* Decode a PNG or JPEG to packed RGB24 (stride w*3) into dst (dst_cap bytes); the size must be
 * exactly want_w x want_h (HR_EMISMATCH otherwise). *warned = 1 when the decoder recovered from a
 * problem in the data (libjpeg-turbo warnings: the image is decoded, perhaps partly grey). */
hr_status hr__image_decode_rgb24(hr__jpeg *j, const uint8_t *data, size_t len, uint8_t *dst,
                                 size_t dst_cap, int want_w, int want_h, int *warned,
                                 const char *name, char *err, size_t err_len);
hr_status hr__png_decode_rgb24(const uint8_t *data, size_t len, uint8_t *dst, size_t dst_cap,
                               int want_w, int want_h, const char *name, char *err, size_t err_len);
hr_status hr__jpeg_decode_rgb24(hr__jpeg *j, const uint8_t *data, size_t len, uint8_t *dst,
                                size_t dst_cap, int want_w, int want_h, int *warned,
                                const char *name, char *err, size_t err_len);

/* Open functions of each kind; s is allocated with params, pool and strings cleared. */
hr_status hr__images_open(hr_source *s, const char *path, int is_dir, char *err, size_t err_len);
hr_status hr__video_open(hr_source *s, const char *path, char *err, size_t err_len);
hr_status hr__tum_open(hr_source *s, const char *dir, char *err, size_t err_len);
hr_status hr__raw_open(hr_source *s, const char *path, char *err, size_t err_len);
hr_status hr__v4l2_open(hr_source *s, const char *dev, char *err, size_t err_len);

/* Parse "FMT:WxH[@FPS]" (see hr_source_params.input_format). fps = 0 when absent. */
hr_status hr__parse_input_format(const char *s, hr_pixfmt *fmt, int *w, int *h, double *fps,
                                 char *err, size_t err_len);
/* Bytes of one packed frame of fmt at w x h (NV12/I420 need even sizes); 0 if invalid. */
size_t hr__frame_bytes(hr_pixfmt fmt, int w, int h);
/* Fill a frame descriptor for a packed buffer of fmt (planes contiguous, minimal strides). */
void hr__frame_packed(hr_frame *f, hr_pixfmt fmt, int w, int h, const uint8_t *buf, int64_t ts);

/* V4L2 helpers (pure functions, unit-tested without a camera). */
/* Index in fourccs[0..n) of the format to ask for: NV12 (in place) > YUYV (one conversion pass) >
 * MJPEG (a JPEG decode); -1 if none of them is offered. */
int hr__v4l2_pick_fourcc(const uint32_t *fourccs, int n);
/* hr_pixfmt of a V4L2 NV12 buffer from its quantization and colorspace fields: full range when
 * the driver says so (or for the JPEG colorspace with default quantization), else video range. */
hr_pixfmt hr__v4l2_nv12_fmt(uint32_t quantization, uint32_t colorspace);
/* YUYV 4:2:2 (Y0 U Y1 V) to NV12 4:2:0: Y copied, each chroma sample the rounded mean of two
 * rows' samples. w, h even. */
void hr__yuyv_to_nv12(const uint8_t *src, ptrdiff_t src_stride, int w, int h, uint8_t *y,
                      ptrdiff_t y_stride, uint8_t *uv, ptrdiff_t uv_stride);

/* Tests: the decoder's own planes of the last frame, if it was handed out in place. */
int hr__source_native_planes(const hr_source *s, const void *planes[3]);

#endif
