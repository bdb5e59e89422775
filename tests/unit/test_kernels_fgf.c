/* The guided-filter tail's alpha (kernels.c, hr__fgf_run without the foreground) against a per-pixel
 * oracle written from the definitions, bit for bit: A and b's alpha channel resized with TF's
 * half-pixel taps in TF's order (horizontal, then vertical), the guidance's mean of R, G, B from the
 * frame (ingest_kernels.h, hr__yuv_px), alpha = A*mean + b, clipped or not. NV12 (full and video
 * range; on AVX-512 converted in registers, kernels_avx512.c, the low-resolution rows upsampled 16
 * columns a step) at widths that are and are not a
 * multiple of 16 (the rest on the portable path), RGB24 (the planar-row path), float RGB (read in place,
 * AVX-512 taking the pixels apart in registers; rows that are not 4-byte aligned converted), 4-channel and
 * alpha-only coefficients, on the calling thread and over a pool of 3 with 5 chunks. Also the
 * low-resolution stage (hr__k_fgf_lr: the guidance row made 4-channel on AVX-512, the boxes and the
 * coefficients) against its definition at widths that are no multiple of 16. */
#include <stdint.h>
#include <pthreadpool.h>
#include "hr_test.h"
#include "session/kernels.h"
#include "ingest/ingest_kernels.h"

static uint32_t rng = 777;
static uint32_t next(void) { rng = rng * 1664525u + 1013904223u; return rng >> 8; }
static float rndf(float lo, float hi) { return lo + (hi - lo) * (float)(next() & 0xffff) / 65535.f; }

static void taps(int in, int out, int o, int *lo, int *hi, float *fr) {
  float scale = (float)in / (float)out, f = ((float)o + 0.5f) * scale - 0.5f, fl = floorf(f);
  int a = fl < 0 ? 0 : (int)fl, b = (int)ceilf(f);
  if (b > in - 1) b = in - 1;
  if (b < 0) b = 0;
  *lo = a; *hi = b; *fr = f - fl;
}

/* The guidance's R, G, B at (x, y) as the ingest defines them. */
static void px_rgb(const hr_frame *f, int x, int y, float *rgb) {
  const uint8_t *p0 = (const uint8_t *)f->planes[0] + (ptrdiff_t)y * f->strides[0];
  if (hr__fmt_is_nv12(f->fmt)) {
    const uint8_t *c = (const uint8_t *)f->planes[1] + (ptrdiff_t)(y / 2) * f->strides[1] + 2 * (x / 2);
    hr__yuv_px(p0[x], c[0], c[1], hr__yuv_coeffs(f->fmt), rgb);
  } else if (f->fmt == HR_PIX_RGBF32) {
    memcpy(rgb, p0 + (size_t)x * 12, 12);
  } else { /* RGB24 */
    for (int k = 0; k < 3; k++) rgb[k] = (float)p0[3 * x + k] * HR__U8_SCALE;
  }
}

static void oracle(const hr_frame *f, int h, int w, const float *A, const float *B, int cs, int clip, float *pha) {
  int H = f->height, W = f->width;
  for (int y = 0; y < H; y++) {
    int j0, j1; float fy;
    taps(h, H, y, &j0, &j1, &fy);
    for (int x = 0; x < W; x++) {
      int l, r; float fx;
      taps(w, W, x, &l, &r, &fx);
      const float *a0 = A + (size_t)j0 * w * cs, *a1 = A + (size_t)j1 * w * cs, *b0 = B + (size_t)j0 * w * cs, *b1 = B + (size_t)j1 * w * cs;
      int o = cs - 1;
      float ta = a0[l * cs + o] + (a0[r * cs + o] - a0[l * cs + o]) * fx, ua = a1[l * cs + o] + (a1[r * cs + o] - a1[l * cs + o]) * fx;
      float tb = b0[l * cs + o] + (b0[r * cs + o] - b0[l * cs + o]) * fx, ub = b1[l * cs + o] + (b1[r * cs + o] - b1[l * cs + o]) * fx;
      float rgb[3];
      px_rgb(f, x, y, rgb);
      float m = (rgb[0] + rgb[1] + rgb[2]) / 3.f;
      float v = (ta + (ua - ta) * fy) * m + (tb + (ub - tb) * fy);
      pha[(size_t)y * W + x] = clip ? (v < 0.f ? 0.f : v > 1.f ? 1.f : v) : v;
    }
  }
}

static void check_rows(pthreadpool_t pool, hr_pixfmt fmt, int W, int H, int h, int w, int alpha_only, int clip, int odd_rows) {
  int bpp = fmt == HR_PIX_RGB24 ? 3 : fmt == HR_PIX_RGBF32 ? 12 : 1;
  /* padded rows; float rows 4-byte aligned (read in place) unless odd_rows (converted into scratch) */
  size_t ystride = (size_t)W * bpp + (fmt == HR_PIX_RGBF32 ? (odd_rows ? 9 : 20) : 7);
  uint8_t *buf = malloc(ystride * H + ystride * (H / 2) + 16);
  for (size_t i = 0; i < ystride * H + ystride * (H / 2) + 16; i++) buf[i] = (uint8_t)next();
  if (fmt == HR_PIX_RGBF32)
    for (int yy = 0; yy < H; yy++)
      for (int i = 0; i < 3 * W; i++) {
        float v = rndf(-0.2f, 1.2f);
        memcpy(buf + (size_t)yy * ystride + 4 * (size_t)i, &v, 4);
      }
  hr_frame f;
  memset(&f, 0, sizeof f);
  f.fmt = fmt; f.width = W; f.height = H;
  f.planes[0] = buf; f.strides[0] = (ptrdiff_t)ystride;
  if (hr__fmt_is_nv12(fmt)) { f.planes[1] = buf + ystride * H; f.strides[1] = (ptrdiff_t)ystride; }
  int cs = alpha_only ? 1 : 4;
  size_t n = (size_t)h * w * cs;
  float *A = malloc(sizeof(float) * n), *B = malloc(sizeof(float) * n);
  for (size_t i = 0; i < n; i++) { A[i] = rndf(-2.f, 2.f); B[i] = rndf(-1.f, 1.5f); }
  float *want = malloc(sizeof(float) * (size_t)W * H), *got = malloc(sizeof(float) * (size_t)W * H);
  oracle(&f, h, w, A, B, cs, clip, want);
  hr__fgf g;
  CHECK_EQ_INT(hr__fgf_init(&g, h, w, H, W, pool ? 5 : 1, 0), HR_OK);
  g.alpha_only_coef = alpha_only;
  memset(got, 0xff, sizeof(float) * (size_t)W * H);
  hr__fgf_run(&g, &f, A, B, got, NULL, clip, pool);
  size_t bad = 0;
  for (size_t i = 0; i < (size_t)W * H; i++) bad += memcmp(&got[i], &want[i], sizeof(float)) != 0;
  CHECKF(bad == 0, "%s %dx%d from %dx%d, alpha_only %d, clip %d, pool %d: %zu of %d differ", hr_pixfmt_name(fmt), W, H, w, h, alpha_only,
         clip, pool != NULL, bad, W * H);
  hr__fgf_free(&g);
  free(A); free(B); free(want); free(got); free(buf);
}
static void check(pthreadpool_t pool, hr_pixfmt fmt, int W, int H, int h, int w, int alpha_only, int clip) {
  check_rows(pool, fmt, W, H, h, w, alpha_only, clip, 0);
}

/* hr__k_fgf_lr against its definition: x = (R, G, B, (((0 + R) + G) + B) / 3) per pixel, the four
 * boxes (x*y, x, y, x*x) summed from 0 tap after tap, vertically then horizontally, each product
 * and sum rounded alone; A = (mxy - mx*my) / (mxx + (eps - mx*mx)), b = my - A*mx. With
 * alpha_only, channel 3 the same and the others not written. */
static void check_lr(pthreadpool_t pool, int chunks, int H, int W, int KH, int KW) {
  size_t n = (size_t)H * W;
  float *y = malloc(sizeof(float) * n * 4), *src = malloc(sizeof(float) * n * 3);
  for (size_t i = 0; i < n * 4; i++) y[i] = rndf(-0.5f, 1.5f);
  for (size_t i = 0; i < n * 3; i++) src[i] = rndf(0.f, 1.f);
  float wv[4][16 * 4], wh[4][16 * 4];   /* up to 16 taps */
  const float *wvp[4], *whp[4];
  for (int q = 0; q < 4; q++) {
    for (int i = 0; i < KH * 4; i++) wv[q][i] = rndf(0.05f, 0.5f);
    for (int i = 0; i < KW * 4; i++) wh[q][i] = rndf(0.05f, 0.5f);
    wvp[q] = wv[q]; whp[q] = wh[q];
  }
  const float eps = 1e-3f;
  hr__fgf_lr_k g;
  CHECK_EQ_INT(hr__fgf_lr_init(&g, H, W, KH, KW, wvp, whp, eps, chunks), HR_OK);
  int OH = H - KH + 1, OW = W - KW + 1;
  size_t no = (size_t)OH * OW * 4;
  float *A = malloc(sizeof(float) * no), *B = malloc(sizeof(float) * no), *wa = malloc(sizeof(float) * no), *wb = malloc(sizeof(float) * no);
  float *x = malloc(sizeof(float) * n * 4), *v = malloc(sizeof(float) * (size_t)OH * W * 16);
  for (size_t p = 0; p < n; p++) {
    float m = 0.f;
    m += src[3 * p]; m += src[3 * p + 1]; m += src[3 * p + 2];
    x[4 * p] = src[3 * p]; x[4 * p + 1] = src[3 * p + 1]; x[4 * p + 2] = src[3 * p + 2]; x[4 * p + 3] = m / 3.f;
  }
  for (int oy = 0; oy < OH; oy++)
    for (int px = 0; px < W; px++)
      for (int c = 0; c < 4; c++) {
        float s[4] = {0, 0, 0, 0};
        for (int k = 0; k < KH; k++) {
          size_t i = ((size_t)(oy + k) * W + px) * 4 + c;
          float xv = x[i], yv = y[i], xy = xv * yv, xx = xv * xv;
          s[0] += wv[0][k * 4 + c] * xy; s[1] += wv[1][k * 4 + c] * xv; s[2] += wv[2][k * 4 + c] * yv; s[3] += wv[3][k * 4 + c] * xx;
        }
        for (int q = 0; q < 4; q++) v[(((size_t)oy * W + px) * 4 + c) * 4 + q] = s[q];
      }
  for (int oy = 0; oy < OH; oy++)
    for (int ox = 0; ox < OW; ox++)
      for (int c = 0; c < 4; c++) {
        float h[4] = {0, 0, 0, 0};
        for (int q = 0; q < 4; q++)
          for (int k = 0; k < KW; k++) h[q] += wh[q][k * 4 + c] * v[(((size_t)oy * W + ox + k) * 4 + c) * 4 + q];
        float mx = h[1], my = h[2], p1 = mx * my, cxy = h[0] - p1, mx2 = mx * mx, e = eps - mx2, d = h[3] + e, a = cxy / d, am = a * mx;
        size_t o = ((size_t)oy * OW + ox) * 4 + c;
        wa[o] = a; wb[o] = my - am;
      }
  hr__k_fgf_lr(pool, &g, y, src, A, B);
  CHECKF(!memcmp(A, wa, sizeof(float) * no) && !memcmp(B, wb, sizeof(float) * no), "fgf_lr %dx%d, box %dx%d, %d chunks (pool %d)", W, H, KH, KW,
         chunks, pool != NULL);
  /* alpha_only: channel 3 the same bits, as planes (OH x OW at the start of A and B); nothing
   * after them written (a sentinel each) */
  g.alpha_only = 1;
  for (size_t i = 0; i < no; i++) { A[i] = -7.f; B[i] = -9.f; }
  hr__k_fgf_lr(pool, &g, y, src, A, B);
  int bad3 = 0, touched = 0;
  for (size_t i = 0; i < no; i++) {
    if (i < no / 4) bad3 += memcmp(&A[i], &wa[4 * i + 3], sizeof(float)) != 0 || memcmp(&B[i], &wb[4 * i + 3], sizeof(float)) != 0;
    else touched += A[i] != -7.f || B[i] != -9.f;
  }
  CHECKF(!bad3 && !touched, "fgf_lr alpha only %dx%d, box %dx%d, %d chunks (pool %d): %d alpha values differ, %d others written", W, H, KH,
         KW, chunks, pool != NULL, bad3, touched);
  hr__fgf_lr_free(&g);
  free(y); free(src); free(A); free(B); free(wa); free(wb); free(x); free(v);
}

int main(void) {
  pthreadpool_t pools[2] = {NULL, pthreadpool_create(3)};
  for (int pi = 0; pi < 2; pi++)
    for (int clip = 0; clip < 2; clip++) {
      check(pools[pi], HR_PIX_NV12_FULL, 94, 62, 13, 17, 0, clip);   /* 94 = 5 x 16 + 14 */
      check(pools[pi], HR_PIX_NV12_VIDEO, 96, 40, 9, 23, 1, clip);
      check(pools[pi], HR_PIX_NV12_FULL, 14, 6, 3, 2, 1, clip);      /* narrower than one block */
      check(pools[pi], HR_PIX_NV12_VIDEO, 162, 30, 8, 40, 0, clip);
      check(pools[pi], HR_PIX_RGB24, 37, 21, 5, 9, 0, clip);
      check(pools[pi], HR_PIX_NV12_FULL, 40, 8, 5, 30, 0, clip);     /* taps too wide for a block's permute */
      check(pools[pi], HR_PIX_NV12_VIDEO, 32, 10, 7, 50, 1, clip);   /* a downsampling */
      check(pools[pi], HR_PIX_NV12_FULL, 48, 12, 3, 13, 1, clip);    /* 13 -> 48: alpha-only, spans up to 16 floats */
      check(pools[pi], HR_PIX_RGBF32, 94, 26, 13, 17, 0, clip);      /* float guidance read in place: 5 blocks + 14 */
      check(pools[pi], HR_PIX_RGBF32, 64, 9, 5, 11, 1, clip);
      check(pools[pi], HR_PIX_RGBF32, 11, 5, 3, 4, 0, clip);         /* narrower than one block */
      check_rows(pools[pi], HR_PIX_RGBF32, 37, 7, 4, 9, 0, clip, 1); /* rows not 4-byte aligned: converted */
    }
  for (int pi = 0; pi < 2; pi++) {
    check_lr(pools[pi], pi ? 4 : 1, 11, 37, 3, 3);   /* 37 = 2 x 16 + 5 pixels a row */
    check_lr(pools[pi], pi ? 3 : 1, 9, 16, 3, 5);
    check_lr(pools[pi], pi ? 2 : 1, 7, 53, 2, 3);
    check_lr(pools[pi], 1, 12, 24, 9, 2);             /* more taps than the kernel keeps in registers */
  }
  pthreadpool_destroy(pools[1]);
  return hr_test_finish("test_kernels_fgf");
}
