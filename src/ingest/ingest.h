/* Fused ingest: turns a borrowed camera frame into the model's float RGB input without a float copy
 * of the full-resolution frame (colour conversion fused into TF's half-pixel bilinear resize).
 *
 * Internal API (not in headroom.h). Phases, as elsewhere in headroom:
 *   plan  hr__ingest_plan_init() once per (frame size, output size) pair: computes the per-column
 *         and per-row taps and weights and allocates the plan's tables and row scratch in one block;
 *   run   hr__ingest_resample_rgbf() per frame: no allocation, no locks, reads the planes in place.
 *
 * Colour definition (shared bit for bit by every path here, so fused == naive exactly), BT.601:
 *   full range ('420f'):  R = Y + 1.402 (Cr-128), G = Y - 0.344136 (Cb-128) - 0.714136 (Cr-128),
 *                         B = Y + 1.772 (Cb-128), clamped to [0,255], /255;
 *   video range ('420v'): the same on Y' = (Y-16) * 255/219 and chroma (C-128) * 255/224.
 *   Computed in float with the scales folded into the constants (ingest_kernels.h, hr__yuv_px):
 *   y = (Y - yo) * ys, u = Cb - 128, v = Cr - 128, R = clamp01(y + rv v), G = clamp01(y - gu u - gv v),
 *   B = clamp01(y + bu u), rv = 1.402/255 (video: /224) etc., each constant rounded once to float.
 *   Chroma siting: each chroma sample covers its 2x2 block of luma (nearest chroma, no chroma
 *   interpolation): pixel (x, y) reads Cb/Cr at (x/2, y/2); for NV12 that is
 *   CbCr[(y/2)*stride + (x/2)*2 + {0,1}].
 *   BGRA / RGB24: v * (1/255) (alpha ignored). GRAY8: R = G = B = v * (1/255).
 *   RGBF32: values taken as they are (no clamp), read with unaligned-safe loads.
 *
 * Resize definition: TensorFlow ResizeBilinear(align_corners=false, half_pixel_centers=true), in
 * float as TF computes it: scale = (float)in_size / out_size; in = ((float)o + 0.5f) * scale - 0.5f;
 * lo = max(floor(in), 0); hi = min(ceil(in), in_size - 1); frac = in - floor(in); per output pixel
 * top = TL + (TR - TL) * xfrac, bottom = BL + (BR - BL) * xfrac, out = top + (bottom - top) * yfrac,
 * per channel, on RGB values already converted per tap (never interpolating in YUV space).
 * An output of the frame's own size is exactly the plain conversion (all fracs are 0).
 *
 * Use in the session: RVM's first op resizes src to the processing size with this same TF op, so
 * when the frame already has the model's input size W x H, resampling straight to the processing
 * size (e.g. 1920x1440 -> 480x360) gives the model's own downsampled tensor, and the refiner reads
 * full-resolution guidance row by row (hr__ingest_row_planar / _rgbf / _view): no float copy of
 * the full frame exists. (Two resizes do not compose: a frame of another size must be resampled
 * to W x H first.)
 *
 * Kernels: SSE2 on x86-64 (also built with VEX encoding and picked at load time by GCC's
 * target_clones where available), the scalar definition elsewhere and for RGBF32; both give the
 * same bits, which the tests check.
 *
 * Threads: a plan is written by the resample call (row scratch, stats): one thread per plan at a
 * time; any number of plans may run concurrently. The frame is only read. */
#ifndef HR_INGEST_INGEST_H
#define HR_INGEST_INGEST_H

#include <stddef.h>
#include <stdint.h>
#include "headroom/core.h"

/* Output columns are processed in chunks of this many; tables and scratch are padded to it. */
#define HR__INGEST_CHUNK 16

/* Copy accounting of one call, for telemetry. */
typedef struct hr__ingest_stats {
  size_t read_bytes;     /* bytes loaded from the frame's planes: taps x bytes per tap (YUV 3,
                            BGRA 4, RGB24 3, GRAY8 1, RGBF32 12); an input row shared by two
                            output rows is loaded once */
  size_t written_bytes;  /* bytes of float written: dst plus the plan's row scratch */
} hr__ingest_stats;

/* A resample plan for one (in_w x in_h) -> (out_w x out_h) pair. Caller-owned struct (stack or
 * embedded); its tables live in one heap block owned by it. Fields are read-only to callers except
 * `scalar`.
 *
 * Fast path: TF's taps always satisfy x_hi - x_lo in {0, 1}, so for most columns the two taps are
 * the adjacent pixels (x_base, x_base + 1) and the SIMD kernel loads them (and their chroma) as one
 * pair. Where that would read outside the row (the last few input columns), or where lo == hi
 * with a nonzero weight (edge clamping when upscaling), the column is a fix-up column: the vector
 * pass computes it from a dummy in-bounds base and the scalar pass then overwrites it exactly. A
 * column with lo == hi and weight 0 stays on the fast path: L + (R - L) * 0 == L for finite R. */
typedef struct hr__ingest_plan {
  int in_w, in_h;             /* frame size the plan accepts, pixels */
  int out_w, out_h;           /* output size, pixels */
  int out_w_pad;              /* out_w rounded up to HR__INGEST_CHUNK */
  int32_t *x_lo, *x_hi;       /* out_w_pad: left / right input column per output column (the
                                 padding repeats the last column, so it is always in bounds) */
  float *x_frac;              /* out_w_pad: weight of the right column (0 in the padding) */
  int32_t *x_base;            /* out_w_pad: column of the pair the SIMD pass loads (x_lo, or 0 for
                                 fix-up and padding columns) */
  int32_t *x_odd;             /* out_w_pad: -1 where x_base is odd (the right tap's chroma is the
                                 next 2x2 block), else 0; a ready SIMD blend mask */
  int32_t *x_fix;             /* n_fix fix-up output columns, ascending */
  int n_fix;
  int32_t *y_lo, *y_hi;       /* out_h: top / bottom input row per output row */
  float *y_frac;              /* out_h: weight of the bottom row */
  float *rows;                /* scratch: 2 slots x 3 planes (R, G, B) x out_w_pad floats holding
                                 horizontally interpolated input rows; 64-byte aligned */
  bool simd_ok;               /* in_w >= 8: dummy bases are in bounds, the SIMD pass may run */
  bool scalar;                /* caller may set: take the portable scalar path (same results;
                                 the tests compare the two). Default false. */
  void *mem;                  /* the one allocation behind all the tables above */
  size_t mem_bytes;           /* its size, bytes */
  hr__ingest_stats last;      /* accounting of the last resample call (zero before the first) */
} hr__ingest_plan;

/* Build a plan. Sizes must be in 1..16384. Allocates once: mem_bytes = 48 bytes per padded output
 * column + 12 per output row + 64 (alignment); 23 KiB for 480x360. The plan does not depend on the
 * pixel format: frames of any supported format of size in_w x in_h can be resampled with it. On error the plan is zeroed (free is harmless).
 * Returns HR_OK, HR_EINVAL (size out of range, NULL plan), HR_ENOMEM. */
hr_status hr__ingest_plan_init(hr__ingest_plan *plan, int in_w, int in_h, int out_w, int out_h);
/* Free a plan's tables and zero it. NULL-safe, and safe on a zeroed or already freed plan. */
void hr__ingest_plan_free(hr__ingest_plan *plan);

/* Sample frame f at the plan's output size with TF half-pixel bilinear semantics applied to the
 * frame's RGB values in [0,1], colour conversion fused in (see the definitions above). Writes
 * out_h rows of out_w*3 floats (R,G,B interleaved) at dst + row*dst_stride (dst_stride in floats,
 * >= out_w*3). dst must not overlap the frame's planes. No allocation. Fills plan->last.
 * Returns HR_OK; HR_EINVAL for a frame hr_frame_validate refuses, an unsupported format (depth
 * formats), NULL plan/dst, or dst_stride < out_w*3; HR_EMISMATCH if the frame's size is not the
 * plan's in_w x in_h. Nothing is written on error. */
hr_status hr__ingest_resample_rgbf(hr__ingest_plan *plan, const hr_frame *f, float *dst, ptrdiff_t dst_stride);

/* The same, output rows [out_h * part / parts, out_h * (part + 1) / parts) only, with the caller's
 * row scratch (6 * out_w_pad floats, 64-byte aligned) instead of the plan's: any number of parts
 * of one plan may run at once on different threads (the plan is only read; plan->last is not
 * filled). The rows are exactly those the whole call writes. Same returns, and HR_EINVAL for a
 * bad part or scratch. */
hr_status hr__ingest_resample_part(const hr__ingest_plan *plan, const hr_frame *f, float *dst, ptrdiff_t dst_stride, int part,
                                   int parts, float *rows);

/* Row y of the frame converted to float RGB [0,1], width*3 floats (R,G,B interleaved), for the
 * refiner's per-row guidance. The caller has validated f (this runs once per row: no checks beyond
 * asserts); y in 0..height-1. Writes exactly width*12 bytes. */
void hr__ingest_row_rgbf(const hr_frame *f, int y, float *dst);

/* Row y as three planes: width floats each of R, G and B, the same values as hr__ingest_row_rgbf
 * without the interleave (which is a third of that function's cost for NV12); for consumers that
 * work per channel, like the refiner's guidance. Same preconditions. */
void hr__ingest_row_planar(const hr_frame *f, int y, float *r, float *g, float *b);

/* As hr__ingest_row_rgbf, but without a copy when none is needed: for an RGBF32 frame whose row y
 * is 4-byte aligned, returns a pointer into the frame's plane (scratch untouched); otherwise
 * converts into scratch (width*3 floats) and returns scratch. */
const float *hr__ingest_row_view(const hr_frame *f, int y, float *scratch);

/* The zero-copy case for the whole input: an RGBF32 frame of exactly out_w x out_h with dense,
 * 4-byte-aligned rows (stride == width*12) is already the model's input; returns its plane, else
 * NULL (then resample). */
const float *hr__ingest_borrow_rgbf(const hr_frame *f, int out_w, int out_h);

/* Plain TF ResizeBilinear (half-pixel) of a float RGB image, weights computed on the fly: the
 * reference the fused path is checked against. Strides in floats. No allocation. */
void hr__ingest_resize_rgbf_ref(const float *src, int in_w, int in_h, ptrdiff_t src_stride,
                                float *dst, int out_w, int out_h, ptrdiff_t dst_stride);

/* Naive path, for comparison and as the test oracle: convert the whole frame to float RGB into
 * full_tmp (caller's buffer, width*height*3 floats, dense), then hr__ingest_resize_rgbf_ref into dst
 * (dense, out_w*3 floats a row). Copies width*height*12 + out_w*out_h*12 bytes. Returns HR_OK,
 * HR_EINVAL (bad frame, unsupported format, NULL buffers, output size out of 1..16384). */
hr_status hr__ingest_naive_rgbf(const hr_frame *f, float *full_tmp, int out_w, int out_h, float *dst);

#endif
