/* headroom core types: status codes and the borrowed frame descriptor. Included by headroom.h. */
#ifndef HEADROOM_CORE_H
#define HEADROOM_CORE_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

#include "headroom/export.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Status codes: 0 is success, errors are negative. Names and messages come from one table
 * (HR_STATUS_LIST), so hr_status_name() and hr_status_str() never disagree with the enum. */
#define HR_STATUS_LIST(X)                                                         \
  X(HR_OK,       0,  "success")                                                   \
  X(HR_EINVAL,  -1,  "invalid argument")                                          \
  X(HR_ENOMEM,  -2,  "out of memory")                                             \
  X(HR_EIO,     -3,  "input/output error")                                        \
  X(HR_ENOTSUP, -4,  "not supported")                                             \
  X(HR_ECORRUPT,-5,  "corrupt or malformed data")                                 \
  X(HR_EMISUSE, -6,  "API misuse (wrong phase or state)")                         \
  X(HR_EAGAIN,  -7,  "try again (no output yet)")                                 \
  X(HR_ERANGE,  -8,  "value out of range")                                        \
  X(HR_ENOFIT,  -9,  "does not fit the memory ceiling")                           \
  X(HR_EEOF,    -10, "end of stream")                                             \
  X(HR_EMISMATCH,-11,"mismatch (other model, size or version)")

typedef enum hr_status {
#define HR__ENUM(name, val, msg) name = val,
  HR_STATUS_LIST(HR__ENUM)
#undef HR__ENUM
} hr_status;

/* "headroom 0.1.0 (XNNPACK 0.0~git20220216.ae108ef-2, FFmpeg 5.1.6-0+deb12u1)": this library's
 * version (HR_VERSION_STRING of headroom/version.h when it was built), the XNNPACK it was built
 * against, and the FFmpeg loaded in the process ("not loaded" if none; libheadroom_io loads it).
 * Static string, made on the first call; thread-safe. */
HR_API const char *hr_version(void);
/* The CPUs this process may run on (its affinity mask: a cgroup cpuset or taskset narrows it), at
 * least 1; what a thread count of 0 means. */
HR_API int hr_cpu_count(void);

/* "HR_EINVAL" etc.; "HR_UNKNOWN" for values not in the table. Static strings. */
HR_API const char *hr_status_name(hr_status s);
/* Human-readable message for a status. Static strings. */
HR_API const char *hr_status_str(hr_status s);

/* Pixel formats of frames handed to the library. */
typedef enum hr_pixfmt {
  HR_PIX_NONE = 0,
  HR_PIX_NV12_FULL,   /* Y plane + interleaved CbCr plane at half res; full range ('420f') */
  HR_PIX_NV12_VIDEO,  /* as above, video range 16-235 ('420v'), BT.601 */
  HR_PIX_I420_FULL,   /* planar Y, U (Cb), V (Cr), chroma at half res; full range (FFmpeg yuvj420p) */
  HR_PIX_I420_VIDEO,  /* planar Y, U, V; video range, BT.601 (FFmpeg yuv420p) */
  HR_PIX_BGRA,        /* one plane, 4 bytes a pixel, B G R A */
  HR_PIX_RGB24,       /* one plane, 3 bytes a pixel, R G B */
  HR_PIX_GRAY8,       /* one plane, 1 byte a pixel */
  HR_PIX_RGBF32,      /* one plane, 3 float32 a pixel, R G B in [0,1] (the model's own input) */
  HR_PIX_DEPTH16_MM,  /* one plane, uint16 millimetres (scale configurable), 0 = no reading */
  HR_PIX_DEPTH32F_M,  /* one plane, float32 metres, 0 or NaN = no reading */
} hr_pixfmt;

/* A frame: borrowed. The library reads the planes during the call it is passed to and keeps no
 * pointer afterwards. Strides are in bytes and may exceed the row size (padding), never be smaller. */
typedef struct hr_frame {
  hr_pixfmt fmt;
  int width, height;          /* pixels; NV12/I420 need both even */
  const void *planes[3];      /* NV12: [0]=Y, [1]=CbCr; I420: Y, U, V; others: [0] only */
  ptrdiff_t strides[3];       /* bytes per row of each plane */
  int64_t ts_ns;              /* capture timestamp, monotonic, nanoseconds */
} hr_frame;

/* Bytes per pixel of plane 0 (1 for NV12's Y plane), 0 for HR_PIX_NONE/unknown. */
HR_API int hr_pixfmt_bpp(hr_pixfmt fmt);
/* Short lowercase name ("nv12", "nv12v", "i420", "i420v", "bgra", "rgb24", "gray8", "rgbf32", "depth16", "depth32f"). */
HR_API const char *hr_pixfmt_name(hr_pixfmt fmt);
/* Check a frame descriptor: sizes, NV12 evenness, non-NULL planes, strides >= row bytes.
 * Writes a one-line reason into why (if non-NULL) on failure. */
HR_API hr_status hr_frame_validate(const hr_frame *f, char *why, size_t why_len);

/* A writable copy of a frame, row by row with dense strides, into *buf (*cap bytes), which grows
 * (realloc-free: freed and allocated again) only when the frame needs more: a loop that copies
 * frames of one size allocates once. *out describes the copy (planes into *buf, ts_ns kept). The
 * caller frees *buf. HR_EINVAL for a frame hr_frame_validate refuses; HR_ENOMEM (buffer and cap
 * then 0). */
HR_API hr_status hr_frame_copy(const hr_frame *in, void **buf, size_t *cap, hr_frame *out);

/* Row y of a frame as float RGB in [0,1], width*3 floats interleaved: the model's own colour
 * conversion (the values the session reads when the frame is its input). f must pass
 * hr_frame_validate and be a colour format; y in 0..height-1. No allocation. */
HR_API void hr_frame_row_rgbf(const hr_frame *f, int y, float *dst);

#ifdef __cplusplus
}
#endif
#endif
