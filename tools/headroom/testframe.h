/* Synthetic camera frames for the benches (tools/headroom/testframe.c). */
#ifndef HR_CLI_TESTFRAME_H
#define HR_CLI_TESTFRAME_H
#include <stddef.h>
#include "headroom.h"

/* Round and clamp to 0..255. */
unsigned char hr_cli_clamp_u8(float v);
/* Half-pixel bilinear resample of an RGB24 image (any size to any size) into a dense buffer. */
void hr_cli_upscale_rgb24(const unsigned char *src, int sw, int sh, ptrdiff_t sstride, unsigned char *dst, int dw, int dh);
/* Fill frame f (f->fmt set: NV12_FULL, I420_FULL (full-range BT.601, chroma the mean of each 2x2
 * block; even sizes), BGRA (A = 255) or RGB24) of w x h from a dense RGB24 image. Returns the
 * frame's buffer (malloc; the caller frees it), NULL when out of memory. */
unsigned char *hr_cli_make_frame(const unsigned char *rgb, int w, int h, hr_frame *f);
#endif
