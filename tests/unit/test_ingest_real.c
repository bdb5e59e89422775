/* Fused ingest on a real camera frame (HR_DATA_DIR/sam2-bedroom/frames/00000.jpg): the JPEG's own
 * 4:2:0 planes (libturbojpeg YUV decoding) as I420 and NV12, full and video range, and the ffmpeg
 * CLI's NV12 when ffmpeg is on PATH, against the RGB decode of the same JPEG within a colour
 * tolerance; fused == naive on all of them. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <turbojpeg.h>
#include "hr_test.h"
#include "headroom.h"
#include "ingest/ingest.h"

static unsigned char *read_file(const char *path, size_t *len) {
  FILE *fp = fopen(path, "rb");
  if (!fp) return NULL;
  fseek(fp, 0, SEEK_END);
  long n = ftell(fp);
  fseek(fp, 0, SEEK_SET);
  unsigned char *b = malloc((size_t)n);
  if (b && fread(b, 1, (size_t)n, fp) != (size_t)n) { free(b); b = NULL; }
  fclose(fp);
  *len = (size_t)n;
  return b;
}

/* Resample with a fresh plan into a dense out_w*3 buffer (caller frees). */
static float *fused(const hr_frame *f, int ow, int oh) {
  hr__ingest_plan p;
  float *o = malloc((size_t)ow * oh * 12);
  CHECK_EQ_INT(hr__ingest_plan_init(&p, f->width, f->height, ow, oh), HR_OK);
  CHECK_EQ_INT(hr__ingest_resample_rgbf(&p, f, o, (ptrdiff_t)ow * 3), HR_OK);
  hr__ingest_plan_free(&p);
  return o;
}

static void check_vs_naive(const hr_frame *f, int ow, int oh) {
  float *a = fused(f, ow, oh), *b = malloc((size_t)ow * oh * 12);
  float *full = malloc((size_t)f->width * f->height * 12);
  CHECK_EQ_INT(hr__ingest_naive_rgbf(f, full, ow, oh, b), HR_OK);
  double m = 0;
  for (size_t i = 0; i < (size_t)ow * oh * 3; i++) {
    double d = fabs((double)a[i] - b[i]);
    if (!(d <= m)) m = d;
  }
  CHECKF(m <= 1e-5, "%s %dx%d -> %dx%d: fused vs naive %g", hr_pixfmt_name(f->fmt), f->width, f->height, ow, oh, m);
  free(a); free(b); free(full);
}

static int cmp_f(const void *a, const void *b) {
  float x = *(const float *)a, y = *(const float *)b;
  return (x > y) - (x < y);
}

/* Colour agreement of two outputs of the same content: mean and 99.9th percentile of |a - b|, max. */
static void compare(const char *what, const float *a, const float *b, size_t n, double mean_tol, double p999_tol,
                    double max_tol) {
  float *d = malloc(n * sizeof(float));
  double sum = 0;
  for (size_t i = 0; i < n; i++) { d[i] = fabsf(a[i] - b[i]); sum += d[i]; }
  qsort(d, n, sizeof(float), cmp_f);
  const double mean = sum / (double)n, p999 = d[(size_t)(0.999 * (double)(n - 1))], mx = d[n - 1];
  printf("%-44s mean %.5f  p99.9 %.4f  max %.4f\n", what, mean, p999, mx);
  CHECKF(mean <= mean_tol && p999 <= p999_tol && mx <= max_tol, "%s: mean %g p99.9 %g max %g", what, mean, p999, mx);
  free(d);
}

int main(void) {
  char path[1024];
  if (!hr_test_path("HR_DATA_DIR", "sam2-bedroom/frames/00000.jpg", path, sizeof path)) SKIP("HR_DATA_DIR not set");
  size_t len;
  unsigned char *jpg = read_file(path, &len);
  if (!jpg) SKIP("cannot read %s", path);
  tjhandle tj = tjInitDecompress();
  int w, h, ss, cs;
  CHECK(tjDecompressHeader3(tj, jpg, (unsigned long)len, &w, &h, &ss, &cs) == 0);
  if (ss != TJSAMP_420 || (w & 1) || (h & 1)) SKIP("%s is not an even-sized 4:2:0 JPEG", path);

  /* RGB decode (libjpeg's default "fancy" chroma upsampling) and the raw 4:2:0 planes. */
  unsigned char *rgb = malloc((size_t)w * h * 3);
  CHECK(tjDecompress2(tj, jpg, (unsigned long)len, rgb, w, w * 3, h, TJPF_RGB, 0) == 0);
  const int cw = w / 2, ch = h / 2;
  unsigned char *yp = malloc((size_t)w * h), *up = malloc((size_t)cw * ch), *vp = malloc((size_t)cw * ch);
  unsigned char *planes[3] = {yp, up, vp};
  int strides[3] = {w, cw, cw};
  CHECK(tjDecompressToYUVPlanes(tj, jpg, (unsigned long)len, planes, w, strides, h, 0) == 0);
  tjDestroy(tj);
  free(jpg);

  hr_frame f_rgb = {.fmt = HR_PIX_RGB24, .width = w, .height = h, .planes = {rgb}, .strides = {w * 3}};
  hr_frame f_i420 = {.fmt = HR_PIX_I420_FULL, .width = w, .height = h, .planes = {yp, up, vp}, .strides = {w, cw, cw}};
  /* NV12 with padded rows (stride w + 32) built from the same planes. */
  const int ps = w + 32;
  unsigned char *ny = malloc((size_t)ps * h), *nc = malloc((size_t)ps * ch);
  for (int y = 0; y < h; y++) memcpy(ny + (size_t)y * ps, yp + (size_t)y * w, (size_t)w);
  for (int y = 0; y < ch; y++)
    for (int x = 0; x < cw; x++) {
      nc[(size_t)y * ps + 2 * x] = up[(size_t)y * cw + x];
      nc[(size_t)y * ps + 2 * x + 1] = vp[(size_t)y * cw + x];
    }
  hr_frame f_nv12 = {.fmt = HR_PIX_NV12_FULL, .width = w, .height = h, .planes = {ny, nc}, .strides = {ps, ps}};
  /* The same content in video range ('420v'), rounded to 8 bits. */
  unsigned char *vy = malloc((size_t)ps * h), *vc = malloc((size_t)ps * ch);
  for (size_t i = 0; i < (size_t)ps * h; i++) vy[i] = (unsigned char)lrint(16 + ny[i] * 219.0 / 255.0);
  for (size_t i = 0; i < (size_t)ps * ch; i++) vc[i] = (unsigned char)lrint(128 + (nc[i] - 128) * 224.0 / 255.0);
  hr_frame f_nv12v = f_nv12;
  f_nv12v.fmt = HR_PIX_NV12_VIDEO;
  f_nv12v.planes[0] = vy;
  f_nv12v.planes[1] = vc;

  /* Output sizes: 4x down, RVM-ish non-integer, same size. */
  const int sizes[][2] = {{w / 4, h / 4}, {512, 288}, {w, h}};
  for (int s = 0; s < 3; s++) {
    const int ow = sizes[s][0], oh = sizes[s][1];
    const size_t n = (size_t)ow * oh * 3;
    check_vs_naive(&f_nv12, ow, oh);
    check_vs_naive(&f_i420, ow, oh);
    check_vs_naive(&f_nv12v, ow, oh);
    check_vs_naive(&f_rgb, ow, oh);
    float *o_rgb = fused(&f_rgb, ow, oh), *o_nv = fused(&f_nv12, ow, oh), *o_i4 = fused(&f_i420, ow, oh);
    float *o_nvv = fused(&f_nv12v, ow, oh);
    char what[96];
    /* NV12 and I420 of the same planes: the same numbers. */
    bool same = memcmp(o_nv, o_i4, n * sizeof(float)) == 0;
    CHECKF(same, "%dx%d: NV12 and I420 of the same planes differ", ow, oh);
    /* vs libjpeg's RGB: differences come from its fancy (triangle) chroma upsampling and its
     * integer colour conversion, against our nearest chroma; largest at sharp colour edges. */
    snprintf(what, sizeof what, "nv12 (420f) vs rgb24 decode, %dx%d", ow, oh);
    compare(what, o_nv, o_rgb, n, 0.004, 0.04, 0.15);
    snprintf(what, sizeof what, "nv12 (420v) vs nv12 (420f), %dx%d", ow, oh);
    compare(what, o_nvv, o_nv, n, 0.003, 0.008, 0.01);
    free(o_rgb); free(o_nv); free(o_i4); free(o_nvv);
  }

  /* The ffmpeg CLI's NV12 of the JPEG (video range, as cameras deliver '420v'), when present. */
  char cmd[1200];
  snprintf(cmd, sizeof cmd, "ffmpeg -v error -nostdin -i '%s' -pix_fmt nv12 -f rawvideo - 2>/dev/null", path);
  FILE *pp = system("ffmpeg -version >/dev/null 2>&1") == 0 ? popen(cmd, "r") : NULL;
  if (pp) {
    unsigned char *ff = malloc((size_t)w * h * 3 / 2);
    size_t got = fread(ff, 1, (size_t)w * h * 3 / 2, pp);
    pclose(pp);
    if (got == (size_t)w * h * 3 / 2) {
      hr_frame f_ff = {.fmt = HR_PIX_NV12_VIDEO, .width = w, .height = h, .planes = {ff, ff + (size_t)w * h},
                       .strides = {w, w}};
      check_vs_naive(&f_ff, w / 4, h / 4);
      float *a = fused(&f_ff, w / 4, h / 4), *b = fused(&f_rgb, w / 4, h / 4);
      compare("ffmpeg nv12 (420v) vs rgb24 decode, 1/4", a, b, (size_t)(w / 4) * (h / 4) * 3, 0.004, 0.02, 0.03);
      free(a); free(b);
    } else {
      printf("ffmpeg gave %zu bytes; ffmpeg comparison skipped\n", got);
    }
    free(ff);
  } else {
    printf("ffmpeg not found; ffmpeg comparison skipped\n");
  }

  free(rgb); free(yp); free(up); free(vp); free(ny); free(nc); free(vy); free(vc);
  return hr_test_finish("test_ingest_real");
}
