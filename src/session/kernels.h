/* Our own kernels for what XNNPACK 2022 lacks: data movement (concat/split/slice/pad), tanh, the fused refiner tail. */
#ifndef HR_SESSION_KERNELS_H
#define HR_SESSION_KERNELS_H
#include "session/session_impl.h"

/* skip: bit k set = input k is already in place (written by its producer). */
void hr__k_concat(const hr__tensor *const *in, int n, int axis, hr__tensor *out, uint32_t skip);
void hr__k_split(const hr__tensor *in, int axis, hr__tensor *out, int n);
void hr__k_slice(const hr__tensor *in, const int32_t *begin, hr__tensor *out);
void hr__k_pad(const hr__tensor *in, const int32_t *pads, hr__tensor *out);
void hr__k_tanh(const float *x, float *y, int64_t n);
/* Fused fast-guided-filter tail (see lower.c): alpha (and fgr) at full resolution from low-res A, b.
 * Tables and per-chunk scratch are made once at create (hr__fgf_init); the run allocates nothing. */
typedef struct hr__fgf {
  int H, W, h, w, chunks, want_fgr;
  int32_t *x0, *x1, *y0, *y1;
  float *fx, *fy;
  int32_t *run;      /* output columns with the same taps (x0, x1): run k is [run[k], run[k+1]) */
  int n_runs;
  float *scratch;
  size_t per_chunk;
  void *mem;
  size_t mem_bytes;
} hr__fgf;
hr_status hr__fgf_init(hr__fgf *g, int h_lr, int w_lr, int H, int W, int chunks, int want_fgr);
void hr__fgf_free(hr__fgf *g);
/* The tail on a given frame (guidance, at H x W) with given low-resolution A and B (h x w x 4):
 * pha (H x W), fgr (H x W x 3, only when g->want_fgr). pool NULL: on the calling thread. */
void hr__fgf_run(const hr__fgf *g, const hr_frame *frame, const float *A, const float *B, float *pha, float *fgr, int clip,
                 pthreadpool_t pool);
void hr__k_fgf_tail(hr_session *s, const hr__fgf *g, const hr__rop *r, const hr__tensor *const *in, hr__tensor *out, int n_out);
/* Depthwise conv with a 1-D kernel (KHx1 or 1xKW), multiplier 1, stride 1, no dilation, any zero
 * padding: direct loops, no indirection buffer (RVM's box filters). Rows split over the pool. */
void hr__k_dw1d(pthreadpool_t pool, const hr__attrs *a, const hr__tensor *x, const hr__tensor *w, const hr__tensor *bias,
                hr__tensor *o, const float *wexp);
/* Weights expanded to the output row width (KH*KW x OW*C floats) for the VALID fast path; NULL when
 * it does not apply (padding, batch > 1) or on allocation failure (the general loops then run). */
float *hr__dw1d_expand(const hr__attrs *a, const hr__tensor *x, const hr__tensor *w, const hr__tensor *o);
/* TF ResizeBilinear, half-pixel centres, NHWC float: per-column taps from a table made at create
 * (12 bytes per output column), rows computed on the fly. */
typedef struct hr__resize { int32_t *x0, *x1; float *fx; int ow; } hr__resize;
hr_status hr__resize_init(hr__resize *r, int in_w, int out_w);
void hr__resize_free(hr__resize *r);
/* o: the output tensor; when out_c_total > 0, o is a wider tensor (out_c_total channels) and this
 * writes x's channels at out_c_off within each pixel. */
void hr__k_resize(pthreadpool_t pool, const hr__resize *r, const hr__tensor *x, hr__tensor *o, int out_c_off, int out_c_total);
#endif
