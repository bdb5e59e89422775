/* Our own kernels for what XNNPACK 2022 lacks: data movement (concat/split/slice/pad), tanh, the fused refiner tail. */
#ifndef HR_SESSION_KERNELS_H
#define HR_SESSION_KERNELS_H
#include "session/session_impl.h"
#include "session/kernels_simd.h"

/* Every kernel here takes the session's pool (NULL: the calling thread) and splits its rows or
 * elements over it; results do not depend on the split.
 * Concat: skip bit k set = input k is already in place (written by its producer). */
void hr__k_concat(pthreadpool_t pool, const hr__tensor *const *in, int n, int axis, hr__tensor *out, uint32_t skip);
void hr__k_split(pthreadpool_t pool, const hr__tensor *in, int axis, hr__tensor *out, int n);
void hr__k_slice(pthreadpool_t pool, const hr__tensor *in, const int32_t *begin, hr__tensor *out);
void hr__k_pad(pthreadpool_t pool, const hr__tensor *in, const int32_t *pads, hr__tensor *out);
/* Per pixel (pixels of them), each copy's n floats from src + p * ss to dst + p * ds, in list order,
 * pixels over the pool: a split and the concat reading its outputs in one pass (exec.c). */
typedef struct hr__k_pxcopy { const float *src; float *dst; int64_t ss, ds, n; } hr__k_pxcopy;
void hr__k_pixel_copies(pthreadpool_t pool, const hr__k_pxcopy *c, int nc, int64_t pixels);
void hr__k_tanh(pthreadpool_t pool, const float *x, float *y, int64_t n);
/* alpha_u8 (headroom.h): q[i] = round(clamp(a[i], 0, 1) * 255) (ties to even), NaN to 0, over the pool
 * (NULL: this thread); returns how many a[i] were NaN or Inf. */
int64_t hr__k_alpha_u8(pthreadpool_t pool, const float *a, uint8_t *q, int64_t n);
/* The sum of n bytes (this thread). */
int64_t hr__k_u8_sum(const uint8_t *q, int64_t n);
/* A matte's one pass for the stream: the 8-bit matte as above into q (NULL: none), *sum = the sum of
 * the n values (float partials over blocks, then double; NaN/Inf make it so), over the pool (NULL:
 * this thread). Returns how many a[i] were NaN or Inf. */
int64_t hr__k_alpha_scan(pthreadpool_t pool, const float *a, uint8_t *q, int64_t n, double *sum);
/* A ConvGRU's last three ops in one pass: y = tanh(x) * m + a, rounded as Tanh, Mul and AddV2 round
 * (bit-identical). y may be x, m or a exactly (not a partial overlap). */
void hr__k_tanh_gru(pthreadpool_t pool, const float *x, const float *m, const float *a, float *y, int64_t n);
/* TF AvgPool (NHWC, SAME or VALID), the reference kernel's sums in its order, rows over the pool. */
void hr__k_avgpool(pthreadpool_t pool, const hr__attrs *a, const hr__tensor *x, hr__tensor *o);
/* Mean over the innermost axis (C values per pixel), summed in order as the reference does. */
void hr__k_mean_c(pthreadpool_t pool, const float *x, float *y, int64_t pixels, int64_t C);
/* y = x op v per pixel, v one value per channel (v op x when v_first); op MUL, SUB, REALDIV, ADD or
 * ADDV2: one IEEE operation per element, as XNNPACK's broadcasting ops give, without their per-row
 * calls that cost most when C is small (the image's 3 channels). With v2, a second such op follows
 * on the result in the same pass (two consecutive ops, the first's result read by the second only):
 * each rounded as the two ops round. The operands v and v2 are passed repeated to L floats (L a
 * multiple of C, made at create; or L = C, the operands as they are). */
/* hswish: a HardSwish follows in the same pass (y = y * min(max(fma(y, 1/6, 1/2), 0), 1), XNNPACK's
 * AVX-512 operations; only where hr__k_hswish_ok()). */
typedef struct hr__k_bcast { int64_t L; int op, v_first, op2, v2_first, hswish; } hr__k_bcast;
void hr__k_bcast_c(pthreadpool_t pool, const hr__k_bcast *b, const float *x, const float *v, const float *v2, float *y, int64_t n);
/* y = a op b for two tensors of n floats (op MUL, SUB, REALDIV, ADD or ADDV2): one IEEE operation per
 * element, as XNNPACK's same-shape ops give, in tiles over the pool. y may be a or b exactly. */
void hr__k_binary(pthreadpool_t pool, int op, const float *a, const float *b, float *y, int64_t n);
/* Fused fast-guided-filter tail (see lower.c): alpha (and fgr) at full resolution from low-res A, b.
 * Tables and per-chunk scratch are made once at create (hr__fgf_init); the run allocates nothing. */
typedef struct hr__fgf {
  int H, W, h, w, chunks, want_fgr;
  int alpha_only_coef;   /* A and B hold the alpha channel only (h x w, the stream's compact
                            copies), not RVM's h x w x 4 tensors; only without want_fgr. Init: 0 */
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
/* What hr__fgf_init allocates for H x W with chunks chunks. */
size_t hr__fgf_bytes(int H, int W, int chunks);
/* The tail on a given frame (guidance, at H x W) with given low-resolution A and B (h x w x 4, or
 * h x w with alpha_only_coef):
 * pha (H x W), fgr (H x W x 3, only when g->want_fgr). pool NULL: on the calling thread. */
void hr__fgf_run(const hr__fgf *g, const hr_frame *frame, const float *A, const float *B, float *pha, float *fgr, int clip,
                 pthreadpool_t pool);
/* The same, alpha only (no g->want_fgr), as the 8-bit matte q (H x W): each row made in the chunk's
 * scratch and turned into bytes there (hr__k_alpha_u8's rounding, the same bytes as hr__fgf_run then
 * hr__k_alpha_u8), so the float matte is never stored (1920x1440: 11 MB a frame not written and read
 * back). Returns how many values were NaN or Inf; *bsum = the sum of the bytes. */
int64_t hr__fgf_run_u8(const hr__fgf *g, const hr_frame *frame, const float *A, const float *B, uint8_t *q, int clip,
                       pthreadpool_t pool, int64_t *bsum);
void hr__k_fgf_tail(hr_session *s, pthreadpool_t pool, const hr__fgf *g, const hr__rop *r, const hr__tensor *const *in, hr__tensor *out,
                    int n_out);
/* Depthwise conv with a 1-D kernel (KHx1 or 1xKW), multiplier 1, stride 1, no dilation, any zero
 * padding: direct loops, no indirection buffer (RVM's box filters). Rows split over the pool. */
void hr__k_dw1d(pthreadpool_t pool, const hr__attrs *a, const hr__tensor *x, const hr__tensor *w, const hr__tensor *bias,
                hr__tensor *o, const float *wexp);
/* Weights expanded to the output row width (KH*KW x OW*C floats) for the VALID fast path; NULL when
 * it does not apply (padding, batch > 1) or on allocation failure (the general loops then run). */
float *hr__dw1d_expand(const hr__attrs *a, const hr__tensor *x, const hr__tensor *w, const hr__tensor *o);
/* Depthwise convolution with a K x K kernel (3 or 5), stride s and dilation dl in both axes,
 * multiplier 1, zero padding (pt, pl at the top and left), NHWC floats, output clamped to [lo, hi]: the
 * values XNNPACK's AVX-512 depthwise kernels give, bit for bit (bias, then one fused multiply-add per
 * tap in their order), in tasks of 4 blocks of 16 channels (fewer where that leaves under 4 tasks a
 * thread) x a band of output rows (kernels_simd.h) over the pool, band-major. The weights (TF's
 * K x K x C x 1) and bias (C, or NULL: zero) are read in place: nothing is allocated, and they must
 * outlive the kernel (the model's or the plan's constants). hr__k_dwconv_fits: whether exec.c (and
 * the plan's memory estimate, which must agree) runs a depthwise convolution of that geometry here:
 * stride 1, AVX-512F, and HR_DWCONV is not "xnn" (the A/B switch that keeps XNNPACK's). */
typedef struct hr__dwconv {
  const float *w, *b;
  int H, W, C, OH, OW, K, s, dl, pt, pl;
  float lo, hi;
} hr__dwconv;
int hr__k_dwconv_fits(int kh, int kw, int sh, int sw, int dh, int dw, int64_t multiplier, int64_t batch);
hr_status hr__dwconv_init(hr__dwconv *d, const float *w, const float *bias, int H, int W, int C, int OH, int OW, int K, int s, int dl, int pt,
                          int pl, float lo, float hi);
/* e: what each output gets after the clamp (kernels_simd.h, hr__dw_epi); NULL: nothing. */
void hr__k_dwconv(pthreadpool_t pool, const hr__dwconv *d, const float *x, float *o, const hr__dw_epi *e);
/* A 1x1 convolution on one pixel, i.e. a fully connected layer (RVM's squeeze-excitation and LR-ASPP
 * pooled branches: K 72..960 in, N 24..960 out): y[n] = clamp(b[n] + sum_k x[k] w[k][n], lo, hi)
 * with TF's K x N weights and the bias (N, or NULL: zero) read in place, in tasks of 1-16 blocks
 * of 16 outputs over the pool (about one task a thread). The values of XNNPACK's 1x16 AVX-512 GEMM bit for bit (bias, one fused multiply-add per
 * input channel in order, max then min), which ran these on one thread: a one-pixel GEMM has a
 * single row tile. hr__k_matvec_fits: AVX-512F, and HR_MATVEC is not "xnn" (the A/B switch). */
int hr__k_matvec_fits(void);
void hr__k_matvec(pthreadpool_t pool, const hr__matvec *m, const float *x, float *y); /* hr__matvec: kernels_simd.h */
/* TF ResizeBilinear, half-pixel centres, NHWC float: per-column taps from a table made at create
 * (12 bytes per output column), rows computed on the fly. */
/* ow: the width the taps are for; oh: hr__k_resize_cat through a crop, the resized sources' own
 * output height (0: the output's). The output may be a crop from the origin of that ow x oh. */
typedef struct hr__resize { int32_t *x0, *x1; float *fx; int ow, oh; } hr__resize;
hr_status hr__resize_init(hr__resize *r, int in_w, int out_w);
void hr__resize_free(hr__resize *r);
/* o: the output tensor; when out_c_total > 0, o is a wider tensor (out_c_total channels) and this
 * writes x's channels at out_c_off within each pixel. */
void hr__k_resize(pthreadpool_t pool, const hr__resize *r, const hr__tensor *x, hr__tensor *o, int out_c_off, int out_c_total);
/* A resize's output pixel assembled from several sources (a channel concat fused with the resize
 * that feeds it, and the concat of the resize's input): each source's c channels at channel off,
 * bilinearly resized from h x w (resize: the r table's taps) or copied (same size as the output). */
typedef struct hr__k_cat_src { const float *data; int64_t h, w, c, off; int resize; } hr__k_cat_src;
void hr__k_resize_cat(pthreadpool_t pool, const hr__resize *r, const hr__k_cat_src *src, int n_src, hr__tensor *o);
/* Output rows [y0, y1) of the same on the calling thread, into dst (their W x C floats a row, dst
 * the first; o says the shape): the same bits as the whole op (an exact 2x makes rows in pairs,
 * an odd row at either end alone). */
void hr__k_resize_cat_rows(const hr__resize *r, const hr__k_cat_src *src, int n_src, const hr__tensor *o, int64_t y0, int64_t y1,
                           float *dst);
/* RVM's low-resolution guided filter as one kernel (plan.h, hr__fgf_lr): A and b from y (H x W x 4)
 * and the image (H x W x 3, its mean as the 4th channel), per output row: the vertical then the
 * horizontal pass of the four box filters, then the element-wise tail, each value rounded as the
 * separate ops round it (bit-identical). The weights and per-chunk scratch (one chunk per thread)
 * are made at create. */
typedef struct hr__fgf_lr_k {
  int H, W, OH, OW, KH, KW, chunks;
  int alpha_only;    /* only channel 3 (the alpha's) of A and b is made, by the same operations in
                        the same order (the same bits), as a plane (OH x OW floats at the start of
                        A and of b; the tail reads them so: hr__fgf.alpha_only_coef). Set by whoever
                        knows nothing else reads them (exec.c: no foreground output) */
  float eps;
  float *wv, *wh;    /* [4][KH][16] and [4][KW][16]: each tap's 4 channel weights repeated 4 times */
  float *scratch;    /* chunks x per_chunk floats */
  size_t per_chunk;
  void *mem;
  size_t mem_bytes;
} hr__fgf_lr_k;
/* wv4, wh4: the four boxes' weights (KH x 4 and KW x 4 floats each) in the order x*y, x, y, x*x. */
hr_status hr__fgf_lr_init(hr__fgf_lr_k *g, int H, int W, int KH, int KW, const float *const *wv4, const float *const *wh4, float eps,
                          int chunks);
void hr__fgf_lr_free(hr__fgf_lr_k *g);
void hr__k_fgf_lr(pthreadpool_t pool, const hr__fgf_lr_k *g, const float *y, const float *src, float *A, float *b);
/* A ConvGRU's gates after the sigmoid, in one pass (exec.c, fuse_gru_gates): rz (2C channels) split
 * into r (channels [r_off, r_off + C)) and z; z written out, omzh = (k - z) * h, and the concat of
 * b and r * h2 written (r * h2 at channel rh_off of cat's cat_c channels, b's C channels at b_off).
 * Each value rounded as the separate Split, Sub, Mul, Mul and ConcatV2 give it. */
typedef struct hr__k_gates {
  const float *rz, *h, *h2, *b;
  float *z, *omzh, *cat;
  int64_t C, r_off, z_off, rh_off, b_off, cat_c, pixels;
  float k;
} hr__k_gates;
void hr__k_gru_gates(pthreadpool_t pool, const hr__k_gates *g);
/* The sigmoid, ours (kernels.c, sigmoid_f: relative error 1.7e-7 at most; the same bits in every clone); y may be x
 * exactly. hr__sigmoid1: one value, for tests. */
void hr__k_sigmoid(pthreadpool_t pool, const float *x, float *y, int64_t n);
float hr__sigmoid1(float x);
/* Winograd epilogues (wino.h, hr__wino_epi; exec.c fuses them): a row of a block's outputs, v (np
 * pixels, dense, overwritten), whose first pixel is pixel p0 of the image.
 * hr__epi_gates (ctx: hr__k_gates, rz unused): the sigmoid over v, then the gates as hr__k_gru_gates
 * makes them (the same bits as the Sigmoid op by hr__k_sigmoid and the gates op).
 * hr__epi_tanh_gru (ctx: hr__epi_tgru): y = tanh(v) * m + a, as hr__k_tanh_gru. */
typedef struct hr__epi_tgru { const float *m, *a; float *y; int64_t C; } hr__epi_tgru;
void hr__epi_gates(void *ctx, float *v, int64_t p0, int64_t np);
void hr__epi_tanh_gru(void *ctx, float *v, int64_t p0, int64_t np);
/* hr__epi_pw (ctx: hr__epi_pw): a pointwise (1x1) convolution of the row's pixels (C channels each)
 * into y (N channels a pixel, N a multiple of 4): each output as XNNPACK's f32 GEMM makes it, the
 * bias, then acc = v[c] w[c] + acc for c in order (fused), max lo, min hi: the same bits as the
 * convolution on its own. w: C x N (the graph's 1x1 HWIO), b: N floats or NULL. Only on x86 with
 * FMA (where the Winograd runs); elsewhere fmaf in the same order. */
typedef struct hr__epi_pw { const float *w, *b; float *y; int C, N; float lo, hi; } hr__epi_pw;
void hr__epi_pw_row(void *ctx, float *v, int64_t p0, int64_t np);
/* hr__epi_copies (ctx: hr__epi_cp): the pixel copies of hr__k_pixel_copies for the row's pixels,
 * in list order, a copy whose src is NULL reading the row itself (its channels from off on, K a
 * pixel): a Split and the Concat after it (K_SPLIT_CAT) done on the convolution's outputs. */
#define HR__EPI_CP_MAX 16
typedef struct hr__epi_cp { hr__k_pxcopy c[HR__EPI_CP_MAX]; int64_t off[HR__EPI_CP_MAX]; int nc; int64_t K; } hr__epi_cp;
void hr__epi_copies(void *ctx, float *v, int64_t p0, int64_t np);
/* Mean over the pixels of one image (TF Mean over H and W; NHWC, pixels x C floats in, C out):
 * the pixels cut in `runs` runs (hr__k_gap_chunks(pixels): by the pixel count alone, so the bits do
 * not depend on the threads), each channel summed over each run's pixels in order into part (runs x
 * C floats), the runs' sums added in order, then divided by the count; runs x 16-channel blocks over
 * the pool (XNNPACK 2022's global average pooling splits only the batch: one thread here). */
int hr__k_gap_chunks(int64_t pixels);
void hr__k_gap(pthreadpool_t pool, const float *x, float *y, int64_t pixels, int64_t C, int runs, float *part);
#endif
