/* Coarse motion between two frames on the tail's low-resolution grid, and the warp that moves the
 * guided filter's coefficients (A, b) made on an older frame to where the image content is now
 * (the tail-every-frame mode's lag compensation, tail.h).
 *
 * Algorithm: both frames' luma sampled onto the coefficients' h x w grid (the tail's half-pixel
 * mapping: lr pixel i covers full-resolution rows [i H / h, (i + 1) H / h); the mean of 2 x 2
 * samples half the footprint apart), blurred (3 x 3 binomial), as a pyramid of 2 x 2 means (up to
 * 4 levels, coarsest side >= 16). Block matching, coarse to fine, 8 x 8 blocks at every level: at
 * the coarsest a full search of +-6; at each finer level the candidates are the co-located parent's
 * vector doubled (at level 0 alone; above it also its 4 neighbours'), the left and upper blocks'
 * vectors at this level and zero, then +-1 around the best (twice above level 0, once at it). The
 * cost is the SAD plus a penalty on the distance from the parent's vector (a block without texture
 * follows its neighbourhood; a still one stays still). At level 0 a V of equal slopes through the
 * SADs either side gives a sub-pixel offset (not to a block that stays at zero). The block field is
 * interpolated bilinearly between block centres (no smoothing: a median over 3 x 3 blocks blurred
 * the motion's edges and cost 4 points of the gain on bedroom, bench/tail_lag.c).
 * The warp is backward: out(p) = in(p + v(p)), bilinear, clamped at the borders, where the block
 * at p in the current frame matched the old frame at p + v; rows without motion are copied.
 *
 * Memory: one block made at init for a grid size (the pyramids, the block fields, the luma tables
 * for one full-resolution size); estimate and warp allocate nothing. */
#ifndef HR_STREAM_MOTION_H
#define HR_STREAM_MOTION_H
#include <stddef.h>
#include <stdint.h>
#include "headroom.h"

#define HR__MOTION_LEVELS 5

typedef struct hr__motion {
  int h, w;                    /* the grid (the coefficients' size) */
  int H, W;                    /* the frames' size the luma tables are made for */
  int levels;
  int lh[HR__MOTION_LEVELS], lw[HR__MOTION_LEVELS];
  int bh[HR__MOTION_LEVELS], bw[HR__MOTION_LEVELS];   /* blocks per column / row at each level */
  uint8_t *cur[HR__MOTION_LEVELS], *ref[HR__MOTION_LEVELS];   /* the pyramids (level 0: blurred) */
  int16_t *vx[HR__MOTION_LEVELS], *vy[HR__MOTION_LEVELS];     /* block vectors, integer, per level */
  float *fx, *fy;              /* level 0's block field with its sub-pixel part (bh x bw) */
  float *hx, *hy;              /* that field interpolated along rows to every grid column (bh x w) */
  int32_t *tc0, *tc1;          /* per grid column: the two blocks whose centres bracket it (w) */
  float *ttx;                  /* and the weight of the second (w) */
  float *rvx, *rvy;            /* one grid row's vectors (w): the warp's scratch */
  float *rsc;                  /* w: the warp's throwaway row (an odd plane's pair) */
  int32_t *lx0, *ly0;          /* luma footprints: grid column j covers [lx0[j], lx0[j+1]) (w+1, h+1) */
  uint16_t *rowsum;            /* W: two rows' sums (the luma), one grid row's vertical sums (the blur) */
  uint8_t *rowlum, *rowsum2;   /* W each: rows' luma (formats without a luma plane) */
  void *mem;
} hr__motion;

/* Tables and buffers for an h x w grid over H x W frames. HR_ENOMEM, or HR_EINVAL when the grid is
 * under 16 x 16 or larger than the frame. */
hr_status hr__motion_init(hr__motion *m, int h, int w, int H, int W);
void hr__motion_free(hr__motion *m);
/* What hr__motion_init allocates for that grid (0 where it would refuse it). */
size_t hr__motion_bytes(int h, int w, int H, int W);
/* 1 when frames of this format have a luma the estimator can read (NV12, I420, BGRA, RGB24, GRAY8,
 * RGBF32). */
int hr__motion_format_ok(hr_pixfmt fmt);
/* Frame f's (H x W, a supported format) luma box-averaged onto the grid: h x w bytes into out. */
void hr__motion_luma(const hr__motion *m, const hr_frame *f, uint8_t *out);
/* The motion from the old frame's luma (ref) to the current frame's (cur), both h x w from
 * hr__motion_luma; kept in m for hr__motion_warp. Returns the mean vector length in grid pixels. */
double hr__motion_estimate(hr__motion *m, const uint8_t *ref, const uint8_t *cur);
/* n planes of h x w floats (src[k] -> dst[k], distinct buffers) warped by the last estimate. */
void hr__motion_warp(const hr__motion *m, const float *const *src, float *const *dst, int n);
#endif
