/* Coarse motion between two frames on the tail's low-resolution grid, and the warp that moves the
 * guided filter's coefficients (A, b) made on an older frame to where the image content is now
 * (the tail-every-frame mode's lag compensation, tail.h).
 *
 * Algorithm: both frames' luma sampled onto the coefficients' h x w grid (the tail's half-pixel
 * mapping: lr pixel i covers full-resolution rows [i H / h, (i + 1) H / h); the mean of 2 x 2
 * samples half the footprint apart), blurred (3 x 3 binomial), as a pyramid of 2 x 2 means (up to
 * 5 levels, coarsest side >= 16). Block matching, coarse to fine, 8 x 8 blocks at every level: at
 * the coarsest a full search of +-10; at each finer level the predictor is the co-located parent's
 * vector doubled, and a block it matches within 2 a pixel takes it; others try the parent's 8
 * neighbours, the left and upper blocks at this level and zero (each distinct vector once), then
 * +-1 around the best (twice above level 0, once at it). The cost is the SAD plus a penalty on the
 * distance from the predictor (a block without texture follows its neighbourhood). Above level 0 a
 * block still matching badly (over 6 a pixel: a thin limb moving faster than what is around it,
 * lost at the coarser levels) gets a full search of +-8 around its vector (every other vector,
 * then +-1), taken when 30% better. At level 0 a V of equal slopes through the SADs either side
 * gives a sub-pixel offset. Then each 4 x 4 cell takes its block's vector or that of one of the 3
 * neighbours on its side whose vector differs by 3 or more, whichever matches an 8 x 8 window
 * centred on the cell best: the field follows motion edges to 4 grid pixels and is never blended
 * across them (bench/tail_lag.c, bedroom lag 6: bilinear between block centres 4.53% of pixels
 * off > 0.1, this 3.46%).
 * The warp is backward: out(p) = in(p + v(p)) with p's cell's vector, bilinear, clamped at the
 * borders, where the current frame's cell at p matched the old frame at p + v; cells without
 * motion are copied, runs of cells with one vector inside the grid read rows at one offset.
 *
 * Memory: one block made at init for a grid size (the pyramids, the block and cell fields, the luma
 * tables for one full-resolution size); estimate and warp allocate nothing. */
#ifndef HR_STREAM_MOTION_H
#define HR_STREAM_MOTION_H
#include <stddef.h>
#include <stdint.h>
#include <pthreadpool.h>
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
  int ch, cw;                  /* the field's cells (4 x 4 grid pixels) per column / row */
  float *cx, *cy;              /* each cell's vector: one of the blocks' around it (ch x cw) */
  int32_t *ccol;               /* per grid column: its cell (w) */
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
/* The same over a pool (row ranges; frames with a luma plane: NV12, I420, GRAY8; others, or no
 * pool, as hr__motion_luma). The same bytes. */
void hr__motion_luma_pool(const hr__motion *m, const hr_frame *f, uint8_t *out, pthreadpool_t pool);
/* The motion from the old frame's luma (ref) to the current frame's (cur), both h x w from
 * hr__motion_luma; kept in m for hr__motion_warp. Returns the mean block vector length in grid
 * pixels. */
double hr__motion_estimate(hr__motion *m, const uint8_t *ref, const uint8_t *cur);
/* n planes of h x w floats (src[k] -> dst[k], distinct buffers) warped by the last estimate. */
void hr__motion_warp(const hr__motion *m, const float *const *src, float *const *dst, int n);
#endif
