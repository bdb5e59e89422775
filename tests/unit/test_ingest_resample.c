/* Fused ingest on synthetic frames: fused == naive (convert whole frame, then resize) on every
 * format, size and stride; SIMD == scalar; an independent double-precision oracle of the colour and
 * TF half-pixel definitions; refusals of bad frames and buffers. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "hr_test.h"
#include "headroom.h"
#include "ingest/ingest.h"
#include "ingest/ingest_kernels.h"

static uint32_t rng = 12345u;
static uint32_t rnd(void) {
  rng ^= rng << 13; rng ^= rng >> 17; rng ^= rng << 5;
  return rng;
}

/* A frame with padded strides whose planes are allocated to the exact byte (stride * (rows - 1) +
 * row bytes), so ASan catches any read past the last row. */
typedef struct tframe {
  hr_frame f;
  unsigned char *buf[3];
} tframe;

static bool is_i420(hr_pixfmt f) { return f == HR_PIX_I420_FULL || f == HR_PIX_I420_VIDEO; }

static void tframe_make(tframe *t, hr_pixfmt fmt, int w, int h, int pad) {
  memset(t, 0, sizeof *t);
  t->f.fmt = fmt; t->f.width = w; t->f.height = h;
  const int bpp = hr_pixfmt_bpp(fmt);
  int n = 1, rowb[3] = {w * bpp, 0, 0}, rows[3] = {h, 0, 0};
  if (hr__fmt_is_nv12(fmt)) { n = 2; rowb[1] = w; rows[1] = h / 2; }
  if (is_i420(fmt)) { n = 3; rowb[1] = rowb[2] = w / 2; rows[1] = rows[2] = h / 2; }
  for (int i = 0; i < n; i++) {
    const ptrdiff_t stride = rowb[i] + pad;
    const size_t bytes = (size_t)stride * (rows[i] - 1) + rowb[i];
    t->buf[i] = malloc(bytes);
    if (fmt == HR_PIX_RGBF32) {
      /* Floats at possibly unaligned rows: write them bytewise. Values in [-0.1, 1.1]: no clamp. */
      for (int y = 0; y < rows[i]; y++)
        for (int x = 0; x < w * 3; x++) {
          float v = (float)(rnd() % 12001) / 10000.0f - 0.1f;
          memcpy(t->buf[i] + (size_t)y * stride + (size_t)x * 4, &v, 4);
        }
    } else {
      for (size_t k = 0; k < bytes; k++) t->buf[i][k] = (unsigned char)rnd();
    }
    t->f.planes[i] = t->buf[i];
    t->f.strides[i] = stride;
  }
}

static void tframe_free(tframe *t) {
  for (int i = 0; i < 3; i++) free(t->buf[i]);
}

static double max_abs(const float *a, const float *b, size_t n) {
  double m = 0;
  for (size_t i = 0; i < n; i++) {
    double d = fabs((double)a[i] - (double)b[i]);
    if (!(d <= m)) m = d;  /* NaN counts as infinite */
  }
  return m;
}

/* ---- independent oracle: the written definitions, in double ---------------------------------- */

static double clamp255(double v) { return v < 0 ? 0 : v > 255 ? 255 : v; }

static void px_oracle(const hr_frame *f, int x, int y, double rgb[3]) {
  const uint8_t *p0 = (const uint8_t *)f->planes[0] + (ptrdiff_t)y * f->strides[0];
  switch (f->fmt) {
    case HR_PIX_BGRA: for (int c = 0; c < 3; c++) rgb[c] = p0[4 * x + 2 - c] / 255.0; return;
    case HR_PIX_RGB24: for (int c = 0; c < 3; c++) rgb[c] = p0[3 * x + c] / 255.0; return;
    case HR_PIX_GRAY8: rgb[0] = rgb[1] = rgb[2] = p0[x] / 255.0; return;
    case HR_PIX_RGBF32:
      for (int c = 0; c < 3; c++) { float v; memcpy(&v, p0 + 12 * x + 4 * c, 4); rgb[c] = v; }
      return;
    default: break;
  }
  /* YUV: chroma sample (x/2, y/2) covers the 2x2 block. */
  const uint8_t *c1 = (const uint8_t *)f->planes[1] + (ptrdiff_t)(y / 2) * f->strides[1];
  double Y = p0[x], Cb, Cr;
  if (is_i420(f->fmt)) {
    Cb = c1[x / 2];
    Cr = ((const uint8_t *)f->planes[2] + (ptrdiff_t)(y / 2) * f->strides[2])[x / 2];
  } else {
    Cb = c1[(x / 2) * 2];
    Cr = c1[(x / 2) * 2 + 1];
  }
  if (f->fmt == HR_PIX_NV12_VIDEO || f->fmt == HR_PIX_I420_VIDEO) {
    Y = (Y - 16) * 255.0 / 219.0;
    Cb = (Cb - 128) * 255.0 / 224.0 + 128;
    Cr = (Cr - 128) * 255.0 / 224.0 + 128;
  }
  rgb[0] = clamp255(Y + 1.402 * (Cr - 128)) / 255.0;
  rgb[1] = clamp255(Y - 0.344136 * (Cb - 128) - 0.714136 * (Cr - 128)) / 255.0;
  rgb[2] = clamp255(Y + 1.772 * (Cb - 128)) / 255.0;
}

/* TF ResizeBilinear, half_pixel_centers: tap positions as TF computes them (float), lerp in double. */
static void taps_oracle(int o, int in_size, int out_size, int *lo, int *hi, double *frac) {
  const float scale = (float)in_size / (float)out_size;
  const float in = ((float)o + 0.5f) * scale - 0.5f;
  const float fl = floorf(in);
  *lo = fl > 0 ? (int)fl : 0;
  *hi = (int)ceilf(in) < in_size - 1 ? (int)ceilf(in) : in_size - 1;
  *frac = (double)in - (double)fl;
}

static double oracle_err(const hr_frame *f, int ow, int oh, const float *dst, ptrdiff_t ds) {
  double m = 0;
  for (int oy = 0; oy < oh; oy++) {
    int yl, yh; double yf;
    taps_oracle(oy, f->height, oh, &yl, &yh, &yf);
    for (int ox = 0; ox < ow; ox++) {
      int xl, xh; double xf;
      taps_oracle(ox, f->width, ow, &xl, &xh, &xf);
      double tl[3], tr[3], bl[3], br[3];
      px_oracle(f, xl, yl, tl); px_oracle(f, xh, yl, tr);
      px_oracle(f, xl, yh, bl); px_oracle(f, xh, yh, br);
      for (int c = 0; c < 3; c++) {
        double t = tl[c] + (tr[c] - tl[c]) * xf, b = bl[c] + (br[c] - bl[c]) * xf;
        double d = fabs(t + (b - t) * yf - dst[(ptrdiff_t)oy * ds + 3 * ox + c]);
        if (!(d <= m)) m = d;
      }
    }
  }
  return m;
}

/* ---- fused vs naive vs scalar vs oracle -------------------------------------------------------- */

static const hr_pixfmt all_fmts[] = {HR_PIX_NV12_FULL, HR_PIX_NV12_VIDEO, HR_PIX_I420_FULL, HR_PIX_I420_VIDEO,
                                     HR_PIX_BGRA, HR_PIX_RGB24, HR_PIX_GRAY8, HR_PIX_RGBF32};
#define N_FMTS (int)(sizeof all_fmts / sizeof all_fmts[0])

static double worst_naive = 0, worst_oracle = 0, worst_scalar = 0;

static void check_case(hr_pixfmt fmt, int w, int h, int ow, int oh, int pad, bool oracle) {
  tframe t;
  tframe_make(&t, fmt, w, h, pad);
  const ptrdiff_t ds = (ptrdiff_t)ow * 3 + 5;  /* padded output rows: the padding must stay untouched */
  const size_t n_out = (size_t)ds * oh;
  float *fused = malloc(n_out * sizeof(float)), *scal = malloc(n_out * sizeof(float));
  float *naive = malloc((size_t)ow * oh * 3 * sizeof(float)), *full = malloc((size_t)w * h * 3 * sizeof(float));
  for (size_t i = 0; i < n_out; i++) fused[i] = scal[i] = -7.0f;
  hr__ingest_plan p;
  CHECK_EQ_INT(hr__ingest_plan_init(&p, w, h, ow, oh), HR_OK);
  CHECK_EQ_INT(hr__ingest_resample_rgbf(&p, &t.f, fused, ds), HR_OK);
  p.scalar = true;
  CHECK_EQ_INT(hr__ingest_resample_rgbf(&p, &t.f, scal, ds), HR_OK);
  CHECK_EQ_INT(hr__ingest_naive_rgbf(&t.f, full, ow, oh, naive), HR_OK);
  double dn = 0, dsc = 0;
  bool pad_ok = true;
  for (int y = 0; y < oh; y++) {
    double d = max_abs(fused + (ptrdiff_t)y * ds, naive + (size_t)y * ow * 3, (size_t)ow * 3);
    if (d > dn) dn = d;
    d = max_abs(fused + (ptrdiff_t)y * ds, scal + (ptrdiff_t)y * ds, (size_t)ow * 3);
    if (d > dsc) dsc = d;
    for (int k = ow * 3; k < ds; k++) pad_ok &= fused[(ptrdiff_t)y * ds + k] == -7.0f;
  }
  CHECKF(dn <= 1e-5, "%s %dx%d -> %dx%d pad %d: fused vs naive %g", hr_pixfmt_name(fmt), w, h, ow, oh, pad, dn);
  CHECKF(dsc == 0, "%s %dx%d -> %dx%d: SIMD vs scalar %g", hr_pixfmt_name(fmt), w, h, ow, oh, dsc);
  CHECKF(pad_ok, "%s %dx%d -> %dx%d: output row padding written", hr_pixfmt_name(fmt), w, h, ow, oh);
  if (dn > worst_naive) worst_naive = dn;
  if (dsc > worst_scalar) worst_scalar = dsc;
  if (oracle) {
    double de = oracle_err(&t.f, ow, oh, fused, ds);
    CHECKF(de <= 1e-5, "%s %dx%d -> %dx%d: vs double oracle %g", hr_pixfmt_name(fmt), w, h, ow, oh, de);
    if (de > worst_oracle) worst_oracle = de;
  }
  hr__ingest_plan_free(&p);
  free(fused); free(scal); free(naive); free(full);
  tframe_free(&t);
}

static void test_sizes(void) {
  /* (in) x (out) pairs: 4x down, non-integer ratios both ways, upscale, same size, odd and tiny. */
  static const int cases[][4] = {
    {64, 48, 16, 12},  {64, 48, 23, 17},  {64, 48, 50, 37}, {64, 48, 150, 113}, {64, 48, 64, 48},
    {62, 46, 31, 23},  {62, 46, 1, 1},    {62, 46, 61, 45}, {62, 46, 124, 92},  {30, 20, 7, 33},
    {8, 8, 3, 5},      {10, 6, 20, 12},   {2, 2, 5, 3},     {2, 2, 1, 1},       {4, 2, 2, 1},
    {96, 72, 24, 18},  {96, 72, 25, 19},  {96, 72, 40, 30}, {200, 150, 67, 50}, {34, 18, 17, 9},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
    for (int k = 0; k < N_FMTS; k++)
      for (int pad = 0; pad <= 13; pad += 13)
        check_case(all_fmts[k], cases[c][0], cases[c][1], cases[c][2], cases[c][3], pad, pad == 0);
  /* Odd frame sizes, for the formats that allow them. */
  static const hr_pixfmt odd_fmts[] = {HR_PIX_BGRA, HR_PIX_RGB24, HR_PIX_GRAY8, HR_PIX_RGBF32};
  static const int odd[][4] = {{37, 29, 9, 7}, {37, 29, 100, 81}, {1, 1, 3, 2}, {1, 7, 1, 3}, {9, 1, 4, 1}, {33, 17, 33, 17}};
  for (size_t c = 0; c < sizeof odd / sizeof odd[0]; c++)
    for (int k = 0; k < 4; k++) check_case(odd_fmts[k], odd[c][0], odd[c][1], odd[c][2], odd[c][3], 3, true);
  /* The product size: 1920x1440 camera frames to RVM's processing sizes, and back to full size. */
  check_case(HR_PIX_NV12_FULL, 1920, 1440, 480, 360, 0, false);
  check_case(HR_PIX_NV12_VIDEO, 1920, 1440, 512, 384, 64, false);
  check_case(HR_PIX_BGRA, 1920, 1440, 480, 360, 0, false);
  check_case(HR_PIX_RGBF32, 1920, 1440, 480, 360, 12, false);  /* the bench's input (AVX-512 gathers, next row prefetched) */
  check_case(HR_PIX_I420_VIDEO, 1920, 1440, 640, 480, 0, false);
  check_case(HR_PIX_NV12_FULL, 480, 360, 1920, 1440, 0, false);
}

/* ---- rows -------------------------------------------------------------------------------------- */

static void test_rows(void) {
  static const int widths[] = {2, 6, 16, 18, 46, 64, 1920};
  for (int k = 0; k < N_FMTS; k++)
    for (size_t wi = 0; wi < sizeof widths / sizeof widths[0]; wi++) {
      const int w = widths[wi], h = 4;
      tframe t;
      tframe_make(&t, all_fmts[k], w, h, 7);
      float *a = malloc((size_t)w * 12), *b = malloc((size_t)w * 12), *pl = malloc((size_t)w * 12);
      double m = 0, mp = 0;
      for (int y = 0; y < h; y++) {
        hr__ingest_row_rgbf(&t.f, y, a);
        hr__ingest_row_scalar(&t.f, y, 0, b);
        hr__ingest_row_planar(&t.f, y, pl, pl + w, pl + 2 * w);
        double d = max_abs(a, b, (size_t)w * 3);
        if (d > m) m = d;
        for (int x = 0; x < w; x++)
          for (int c = 0; c < 3; c++) {
            double e = fabs(a[3 * x + c] - pl[c * w + x]);
            if (!(e <= mp)) mp = e;
          }
        for (int x = 0; x < w; x++) {
          double rgb[3];
          px_oracle(&t.f, x, y, rgb);
          for (int c = 0; c < 3; c++) CHECK_NEAR(a[3 * x + c], rgb[c], 1e-5);
        }
      }
      CHECKF(m == 0, "%s w=%d: SIMD row vs scalar row %g", hr_pixfmt_name(all_fmts[k]), w, m);
      CHECKF(mp == 0, "%s w=%d: planar row vs interleaved %g", hr_pixfmt_name(all_fmts[k]), w, mp);
      free(a); free(b); free(pl);
      tframe_free(&t);
    }
}

/* ---- known values ------------------------------------------------------------------------------ */

static void test_known_values(void) {
  /* NV12 2x2 frames of one colour. */
  struct { hr_pixfmt fmt; uint8_t Y, cb, cr; float r, g, b; } v[] = {
    {HR_PIX_NV12_FULL, 255, 128, 128, 1, 1, 1},
    {HR_PIX_NV12_FULL, 0, 128, 128, 0, 0, 0},
    {HR_PIX_NV12_FULL, 128, 128, 128, 128 / 255.f, 128 / 255.f, 128 / 255.f},
    {HR_PIX_NV12_VIDEO, 235, 128, 128, 1, 1, 1},
    {HR_PIX_NV12_VIDEO, 16, 128, 128, 0, 0, 0},
    {HR_PIX_NV12_FULL, 76, 85, 255, 0.9963f, 0.0004f, 0.0f},   /* BT.601 red: (R,G,B) = (255,0,0) */
    {HR_PIX_NV12_FULL, 150, 44, 21, 0.0f, 1.0f, 0.0045f},    /* green */
    {HR_PIX_NV12_FULL, 29, 255, 107, 0.0f, 0.0012f, 0.9962f},  /* blue */
  };
  for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
    uint8_t Y[4] = {v[i].Y, v[i].Y, v[i].Y, v[i].Y}, C[2] = {v[i].cb, v[i].cr};
    hr_frame f = {.fmt = v[i].fmt, .width = 2, .height = 2, .planes = {Y, C}, .strides = {2, 2}};
    float out[12];
    hr__ingest_plan p;
    CHECK_EQ_INT(hr__ingest_plan_init(&p, 2, 2, 2, 2), HR_OK);
    CHECK_EQ_INT(hr__ingest_resample_rgbf(&p, &f, out, 6), HR_OK);
    for (int k = 0; k < 4; k++) {
      CHECK_NEAR(out[3 * k], v[i].r, 0.01);
      CHECK_NEAR(out[3 * k + 1], v[i].g, 0.01);
      CHECK_NEAR(out[3 * k + 2], v[i].b, 0.01);
    }
    hr__ingest_plan_free(&p);
  }
  /* Chroma siting: a 4x2 NV12 frame with two chroma blocks; pixels 0,1 use block 0, 2,3 block 1. */
  {
    uint8_t Y[8] = {100, 100, 100, 100, 100, 100, 100, 100}, C[4] = {128, 200, 128, 60};
    hr_frame f = {.fmt = HR_PIX_NV12_FULL, .width = 4, .height = 2, .planes = {Y, C}, .strides = {4, 4}};
    float row[12];
    hr__ingest_row_rgbf(&f, 1, row);
    CHECK(row[0] == row[3] && row[6] == row[9] && row[0] > row[6]);
  }
  /* TF half-pixel taps on a GRAY8 ramp: 8 -> 2 averages pixels (1,2) and (5,6); 4 -> 8 replicates
   * the edges and lerps a quarter / three quarters between. */
  {
    uint8_t g[8] = {0, 10, 20, 30, 40, 50, 60, 70};
    hr_frame f = {.fmt = HR_PIX_GRAY8, .width = 8, .height = 1, .planes = {g}, .strides = {8}};
    float out[24];
    hr__ingest_plan p;
    CHECK_EQ_INT(hr__ingest_plan_init(&p, 8, 1, 2, 1), HR_OK);
    CHECK_EQ_INT(hr__ingest_resample_rgbf(&p, &f, out, 6), HR_OK);
    CHECK_NEAR(out[0] * 255, 15, 1e-4);
    CHECK_NEAR(out[3] * 255, 55, 1e-4);
    hr__ingest_plan_free(&p);
    f.width = 4;
    CHECK_EQ_INT(hr__ingest_plan_init(&p, 4, 1, 8, 1), HR_OK);
    CHECK_EQ_INT(hr__ingest_resample_rgbf(&p, &f, out, 24), HR_OK);
    const float want[8] = {0, 2.5f, 7.5f, 12.5f, 17.5f, 22.5f, 27.5f, 30};
    for (int k = 0; k < 8; k++) CHECK_NEAR(out[3 * k] * 255, want[k], 1e-4);
    hr__ingest_plan_free(&p);
  }
}

/* ---- refusals ---------------------------------------------------------------------------------- */

static void test_refusals(void) {
  uint8_t Y[64 * 48], C[64 * 24];
  memset(Y, 100, sizeof Y);
  memset(C, 128, sizeof C);
  float out[16 * 12 * 3 + 8], full[64 * 48 * 3];
  for (size_t i = 0; i < sizeof out / sizeof out[0]; i++) out[i] = -7.0f;
  hr__ingest_plan p;
  CHECK_EQ_INT(hr__ingest_plan_init(&p, 64, 48, 16, 12), HR_OK);
  const hr_frame good = {.fmt = HR_PIX_NV12_FULL, .width = 64, .height = 48, .planes = {Y, C}, .strides = {64, 64}};
  hr_frame f;
#define REFUSE(expect, ...) do { f = good; __VA_ARGS__; \
    CHECK_EQ_INT(hr__ingest_resample_rgbf(&p, &f, out, 48), expect); } while (0)
  REFUSE(HR_EINVAL, f.width = 63);                             /* odd NV12 width (plan mismatch too) */
  REFUSE(HR_EINVAL, f.height = 47);                            /* odd NV12 height */
  REFUSE(HR_EINVAL, f.strides[0] = 63);                        /* stride < width */
  REFUSE(HR_EINVAL, f.strides[1] = 32);                        /* CbCr stride < width */
  REFUSE(HR_EINVAL, f.planes[0] = NULL);
  REFUSE(HR_EINVAL, f.planes[1] = NULL);
  REFUSE(HR_EINVAL, f.fmt = HR_PIX_I420_FULL; f.strides[1] = f.strides[2] = 32);  /* V plane NULL */
  REFUSE(HR_EINVAL, f.fmt = HR_PIX_DEPTH16_MM; f.strides[0] = 128);                /* not a colour format */
  REFUSE(HR_EINVAL, f.fmt = HR_PIX_NONE);
  REFUSE(HR_EINVAL, f.width = 0);
  REFUSE(HR_EINVAL, f.fmt = HR_PIX_BGRA; f.strides[0] = 255);  /* BGRA stride < 4 * width */
  REFUSE(HR_EMISMATCH, f.width = 62; f.strides[0] = f.strides[1] = 62);  /* valid frame, other size */
  REFUSE(HR_EMISMATCH, f.height = 46);
  f = good;
  CHECK_EQ_INT(hr__ingest_resample_rgbf(&p, NULL, out, 48), HR_EINVAL);
  CHECK_EQ_INT(hr__ingest_resample_rgbf(&p, &f, NULL, 48), HR_EINVAL);
  CHECK_EQ_INT(hr__ingest_resample_rgbf(&p, &f, out, 47), HR_EINVAL);  /* dst_stride < out_w * 3 */
  CHECK_EQ_INT(hr__ingest_resample_rgbf(NULL, &f, out, 48), HR_EINVAL);
  bool untouched = true;
  for (size_t i = 0; i < sizeof out / sizeof out[0]; i++) untouched &= out[i] == -7.0f;
  CHECKF(untouched, "a refused call wrote into dst");
  CHECK_EQ_INT(hr__ingest_resample_rgbf(&p, &f, out, 48), HR_OK);
  CHECK(p.last.read_bytes == 24 * 2 * 16 * 3 && p.last.written_bytes > 16 * 12 * 12);
  hr__ingest_plan_free(&p);
  CHECK_EQ_INT(hr__ingest_resample_rgbf(&p, &f, out, 48), HR_EINVAL);  /* freed (zeroed) plan */
  hr__ingest_plan_free(&p);                                            /* twice: harmless */
  hr__ingest_plan_free(NULL);

  /* Plan sizes. */
  CHECK_EQ_INT(hr__ingest_plan_init(&p, 0, 48, 16, 12), HR_EINVAL);
  CHECK(p.mem == NULL && p.out_w == 0);
  CHECK_EQ_INT(hr__ingest_plan_init(&p, 64, 48, 16, 16385), HR_EINVAL);
  CHECK_EQ_INT(hr__ingest_plan_init(&p, 64, 48, -1, 12), HR_EINVAL);
  CHECK_EQ_INT(hr__ingest_plan_init(NULL, 64, 48, 16, 12), HR_EINVAL);

  /* Naive path refusals. */
  f = good;
  CHECK_EQ_INT(hr__ingest_naive_rgbf(&f, full, 16, 12, out), HR_OK);
  CHECK_EQ_INT(hr__ingest_naive_rgbf(&f, NULL, 16, 12, out), HR_EINVAL);
  CHECK_EQ_INT(hr__ingest_naive_rgbf(&f, full, 0, 12, out), HR_EINVAL);
  f.height = 47;
  CHECK_EQ_INT(hr__ingest_naive_rgbf(&f, full, 16, 12, out), HR_EINVAL);
  f = good;
  f.planes[1] = NULL;
  CHECK_EQ_INT(hr__ingest_naive_rgbf(&f, full, 16, 12, out), HR_EINVAL);
#undef REFUSE
}

/* ---- zero-copy views of RGBF32 frames ---------------------------------------------------------- */

static void test_views(void) {
  float px[4 * 3 * 3];
  for (int i = 0; i < 36; i++) px[i] = (float)i / 36.0f;
  hr_frame f = {.fmt = HR_PIX_RGBF32, .width = 4, .height = 3, .planes = {px}, .strides = {48}};
  CHECK(hr__ingest_borrow_rgbf(&f, 4, 3) == px);
  CHECK(hr__ingest_borrow_rgbf(&f, 2, 3) == NULL);
  float scratch[12];
  CHECK(hr__ingest_row_view(&f, 2, scratch) == px + 24);
  f.strides[0] = 52;  /* padded rows: no whole-frame borrow, rows still borrowed */
  f.height = 2;
  CHECK(hr__ingest_borrow_rgbf(&f, 4, 2) == NULL);
  CHECK(hr__ingest_row_view(&f, 1, scratch) == px + 13);
  uint8_t gray[4] = {0, 51, 102, 255};
  hr_frame g = {.fmt = HR_PIX_GRAY8, .width = 4, .height = 1, .planes = {gray}, .strides = {4}};
  CHECK(hr__ingest_borrow_rgbf(&g, 4, 1) == NULL);
  const float *row = hr__ingest_row_view(&g, 0, scratch);
  CHECK(row == scratch);
  CHECK_NEAR(row[3], 0.2, 1e-7);
  CHECK_NEAR(row[11], 1.0, 1e-7);
}

int main(void) {
  test_known_values();
  test_rows();
  test_sizes();
  test_refusals();
  test_views();
  printf("ingest: max |fused - naive| %g, max |SIMD - scalar| %g, max |fused - double oracle| %g\n",
         worst_naive, worst_scalar, worst_oracle);
  return hr_test_finish("test_ingest_resample");
}
