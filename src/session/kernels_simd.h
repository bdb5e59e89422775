/* Kernels with explicit SIMD (kernels_avx512.c), picked at run time; each returns how much it did
 * (0 where the CPU or the build cannot), the caller finishes the rest on the portable path. */
#ifndef HR_SESSION_KERNELS_SIMD_H
#define HR_SESSION_KERNELS_SIMD_H
#include <stdint.h>
#include "headroom/core.h"

/* A one-pixel 1x1 convolution (kernels.h, hr__k_matvec): K x N weights (TF's), bias (N or NULL),
 * the clamp; hr__k_matvec_block computes outputs n0 .. n0 + 16 g - 1 (g = 1, 2, 4, 8 or 16 blocks of 16;
 * fewer at the end). */
typedef struct hr__matvec { const float *w, *b; int K, N; float lo, hi; } hr__matvec;
void hr__k_matvec_block(const hr__matvec *m, const float *x, float *y, int n0, int g);
/* A pointwise (1x1, stride 1) convolution as a matrix product over the pixels (exec.c, K_PWG): y
 * (M x N) = x (M x K) w (K x N, the graph's 1x1 HWIO, read in place) + b (N or NULL), clamped to
 * [lo, hi], then the HardSwish where hs. hr__k_pwg_block makes rows [m0, m1) of outputs [n0, n0 + 32)
 * (fewer at the end); hr__k_pwg_ok: the CPU runs it (AVX-512). */
typedef struct hr__pwg { const float *x, *w, *b; float *y; int64_t M; int K, N, hs; float lo, hi; } hr__pwg;
int hr__k_pwg_ok(void);
void hr__k_pwg_block(const hr__pwg *g, int64_t m0, int64_t m1, int n0);
/* Rows [m0, m1) of all the outputs, 8 rows at a time across every block of 32 (each row's outputs
 * written together; the weights read for every 8 rows: for small K x N, or tasks of rows) */
void hr__k_pwg_rows(const hr__pwg *g, int64_t m0, int64_t m1);
/* The guided-filter tail's alpha for row y of an NV12 frame (fgf_alpha_row with the guidance's
 * planar R, G, B rows made in registers): columns [0, return value), a multiple of 16. stream: the
 * row may go past the caches (non-temporal stores when 64-byte aligned), as a whole matte should. */
int hr__k_fgf_alpha_row_nv12(const hr_frame *f, int y, int W, const float *ha0, const float *ha1, const float *hb0, const float *hb1,
                             float fy, float *pha, int clip, int stream);
/* The same for a float RGB guidance row (W pixels, R, G, B interleaved; fgf_alpha_row_px): columns
 * [0, return value), a multiple of 16. */
int hr__k_fgf_alpha_row_rgbf(const float *px, int W, const float *ha0, const float *ha1, const float *hb0, const float *hb1, float fy,
                             float *pha, int clip, int stream);
/* One low-resolution row of the guided filter's coefficient (a and b: the alpha's values, cs floats
 * apart, w of them) across the full width W: columns [0, return value), a multiple of 16, as
 * kernels.c's fgf_hrow gives them. */
int hr__k_fgf_hrow(const int32_t *x0, const int32_t *x1, const float *fx, int W, int w, int cs, const float *a, const float *b, float *ha,
                   float *hb);
/* The low-resolution guided filter's guidance row: W pixels of R, G, B to R, G, B and their mean
 * (lr_xrow in kernels.c): pixels [0, return value), a multiple of 4. */
int hr__k_lr_xrow(const float *sp, float *xp, int W);
/* Non-temporal copies (past the caches, no read for ownership): hr__k_stream_ok says whether the CPU
 * can (only then may the other two be called); dst and src 64-byte aligned, n a multiple of 16;
 * hr__k_stream_fence orders them before the stores that follow (end of a task). */
int hr__k_stream_ok(void);
void hr__k_stream_copy(float *dst, const float *src, int64_t n);
void hr__k_stream_fence(void);
/* Depthwise convolution, K x K (3 or 5), stride s, dilation dl, multiplier 1, NHWC floats, zero
 * padding pt / pl: the output rows of band (HR__DW_BANDS: three rows dl apart where HR__DW_TRIPLE, else
 * HR__DW_ROWS adjacent), channels [16 gb grp, 16 gb (grp + 1)) of C, with TF's K x K x C weights w
 * and C biases b (NULL: zero) read in place. hr__k_dwconv_ok says whether the CPU can (AVX-512F);
 * only then may the band kernel be called. */
#ifndef HR__DW_ROWS
#define HR__DW_ROWS 3  /* output rows per depthwise task where not HR__DW_TRIPLE (stride 2, dilation over 2) */
#endif
/* stride 1, dilation 1 or 2: bands of three rows dl apart, in groups of 3 dl rows (dl bands each) */
#define HR__DW_TRIPLE(s, dl) ((s) == 1 && (dl) <= 2)
#define HR__DW_BANDS(OH, s, dl) \
  (HR__DW_TRIPLE(s, dl) ? ((OH) + 3 * (dl) - 1) / (3 * (dl)) * (dl) : ((OH) + HR__DW_ROWS - 1) / HR__DW_ROWS)
int hr__k_dwconv_ok(void);
/* HardSwish in place over n floats with XNNPACK's AVX-512 operations (x * min(max(fma(x, 1/6, 1/2),
 * 0), 1): its values bit for bit on a CPU where it picks its AVX-512 kernel); hr__k_hswish_ok: AVX-512F. */
int hr__k_hswish_ok(void);
void hr__k_hswish(float *y, int64_t n);
/* What a depthwise row does to each output after its sum and clamp (NULL or all zero: nothing): up to
 * two per-channel ops, y = y op v (v op y where v_first; v: C floats, read in place), then a HardSwish,
 * each with the operations the separate kernels use (hr__k_bcast_c's one IEEE operation per element,
 * hr__k_hswish's), so that the values are theirs bit for bit (exec.c fuse_dw_epi). */
enum { HR__EPI_NONE = 0, HR__EPI_MUL, HR__EPI_ADD, HR__EPI_SUB, HR__EPI_DIV };
typedef struct hr__dw_epi { const float *v1, *v2; int op1, op2, v1_first, v2_first, hswish; } hr__dw_epi;
void hr__k_dwconv_band(const float *x, const float *w, const float *b, float *o, int H, int W, int C, int OH, int OW, int K, int s, int dl,
                       int pt, int pl, float lo, float hi, const hr__dw_epi *e, int gb, int grp, int band);
#endif
