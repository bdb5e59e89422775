/* Ingest end to end through the session, on real frames: NV12 (video and full range), I420 and BGRA
 * frames give alpha bit-identical to the same frames given as RGBF32 (the library's own conversion
 * of each row, hr__ingest_row_rgbf), at 512x288 ratio 1 and 1920x1440 ratio 0.25, with the state
 * carried over 3 frames; and bytes_copied per frame is 0 at ratio 0.25 (the model's first op
 * resamples the planes in place, the refiner reads rows) and exactly W*H*12 at ratio 1 (the model
 * reads a materialised float input), 0 for an RGBF32 frame of the model's size at either ratio.
 *
 * Frames: sam2-bedroom 00000..00002.jpg decoded by hr_source_open (RGB24, 960x540), resampled
 * (half-pixel bilinear) to the test size and converted with BT.601 (chroma: 2x2 mean). The
 * conversion to YUV does not need to match anything: the RGBF32 twin is made from the YUV frame
 * itself, so the test isolates the ingest (colour conversion fused into the resample, and the
 * refiner's row reader) from colour loss.
 *
 * Refusals through hr_session_push (hr_frame_validate): strides smaller than a row (Y, CbCr, BGRA),
 * odd NV12 / I420 sizes, a NULL chroma plane: HR_EINVAL, a message naming the problem in
 * hr_session_last_error, and the state untouched (the next good frame gives the alpha it gives
 * without the refused push in between). */
#include "hr_test.h"
#include "headroom.h"
#include "headroom/io.h"
#include "ingest/ingest.h"

#define NF 3

static unsigned char u8(float v) { return v <= 0.f ? 0 : v >= 255.f ? 255 : (unsigned char)(v + 0.5f); }

/* Half-pixel bilinear RGB24 resample into a dense w*h*3 buffer. */
static void resample_rgb24(const hr_frame *s, unsigned char *d, int w, int h) {
  const unsigned char *src = s->planes[0];
  for (int y = 0; y < h; y++) {
    float fy = ((float)y + 0.5f) * (float)s->height / (float)h - 0.5f;
    if (fy < 0) fy = 0;
    int y0 = (int)fy, y1 = y0 + 1 < s->height ? y0 + 1 : s->height - 1;
    float wy = fy - (float)y0;
    for (int x = 0; x < w; x++) {
      float fx = ((float)x + 0.5f) * (float)s->width / (float)w - 0.5f;
      if (fx < 0) fx = 0;
      int x0 = (int)fx, x1 = x0 + 1 < s->width ? x0 + 1 : s->width - 1;
      float wx = fx - (float)x0;
      for (int c = 0; c < 3; c++) {
        const unsigned char *r0 = src + (ptrdiff_t)y0 * s->strides[0], *r1 = src + (ptrdiff_t)y1 * s->strides[0];
        float t = r0[x0 * 3 + c] + (r0[x1 * 3 + c] - r0[x0 * 3 + c]) * wx;
        float b = r1[x0 * 3 + c] + (r1[x1 * 3 + c] - r1[x0 * 3 + c]) * wx;
        d[((size_t)y * w + x) * 3 + c] = u8(t + (b - t) * wy);
      }
    }
  }
}

/* Frame of format fmt from a dense RGB24 image; the buffer is returned through *mem. Rows are
 * padded (stride = row + 64) so strides other than the width are exercised too. */
static hr_frame make_frame(hr_pixfmt fmt, const unsigned char *rgb, int w, int h, void **mem) {
  hr_frame f = {.fmt = fmt, .width = w, .height = h};
  size_t n = (size_t)w * h;
  if (fmt == HR_PIX_BGRA) {
    ptrdiff_t st = (ptrdiff_t)w * 4 + 64;
    unsigned char *b = calloc((size_t)st * h, 1);
    for (int y = 0; y < h; y++)
      for (int x = 0; x < w; x++) {
        const unsigned char *p = rgb + ((size_t)y * w + x) * 3;
        unsigned char *q = b + y * st + x * 4;
        q[0] = p[2]; q[1] = p[1]; q[2] = p[0]; q[3] = 255;
      }
    f.planes[0] = b; f.strides[0] = st; *mem = b;
    return f;
  }
  int video = fmt == HR_PIX_NV12_VIDEO || fmt == HR_PIX_I420_VIDEO;
  int nv12 = fmt == HR_PIX_NV12_VIDEO || fmt == HR_PIX_NV12_FULL;
  ptrdiff_t ys = w + 64, cs = nv12 ? w + 64 : w / 2 + 32;
  unsigned char *b = calloc((size_t)ys * h + (size_t)cs * h, 1);
  unsigned char *Y = b, *C = b + (size_t)ys * h;
  for (size_t i = 0; i < n; i++) {
    const unsigned char *p = rgb + i * 3;
    float l = 0.299f * p[0] + 0.587f * p[1] + 0.114f * p[2];
    Y[(i / w) * ys + i % w] = u8(video ? 16.f + l * 219.f / 255.f : l);
  }
  for (int y = 0; y < h / 2; y++)
    for (int x = 0; x < w / 2; x++) {
      float r = 0, g = 0, bl = 0;
      for (int k = 0; k < 4; k++) {
        const unsigned char *p = rgb + ((size_t)(2 * y + k / 2) * w + 2 * x + k % 2) * 3;
        r += p[0]; g += p[1]; bl += p[2];
      }
      r *= .25f; g *= .25f; bl *= .25f;
      float cb = -0.168736f * r - 0.331264f * g + 0.5f * bl, cr = 0.5f * r - 0.418688f * g - 0.081312f * bl;
      if (video) { cb *= 224.f / 255.f; cr *= 224.f / 255.f; }
      if (nv12) { C[y * cs + 2 * x] = u8(128 + cb); C[y * cs + 2 * x + 1] = u8(128 + cr); }
      else { C[y * cs + x] = u8(128 + cb); C[(size_t)cs * (h / 2) + y * cs + x] = u8(128 + cr); }
    }
  f.planes[0] = Y; f.strides[0] = ys;
  f.planes[1] = C; f.strides[1] = cs;
  if (!nv12) { f.planes[2] = C + (size_t)cs * (h / 2); f.strides[2] = cs; }
  *mem = b;
  return f;
}

static hr_session *new_session(hr_model *m, int w, int h, float ratio) {
  hr_session_params p;
  hr_session_params_default(&p);
  p.width = w; p.height = h; p.downsample_ratio = ratio; p.threads = 1;
  hr_session *s = NULL;
  hr_status st = hr_session_create(m, &p, &s);
  CHECKF(st == HR_OK, "session create %dx%d ratio %g: %s", w, h, ratio, hr_status_name(st));
  if (st) exit(1);
  return s;
}

/* One size/ratio: for each format, a session fed that format and one fed its RGBF32 twin. */
static void run_case(hr_model *m, hr_frame *jpg, int w, int h, float ratio, const hr_pixfmt *fmts, int nfmt) {
  unsigned char *rgb[NF];
  for (int i = 0; i < NF; i++) { rgb[i] = malloc((size_t)w * h * 3); resample_rgb24(&jpg[i], rgb[i], w, h); }
  float *twin = malloc((size_t)w * h * 12), *ref = malloc((size_t)w * h * 4);
  for (int k = 0; k < nfmt; k++) {
    hr_session *a = new_session(m, w, h, ratio), *b = new_session(m, w, h, ratio);
    int identical = 0;
    double maxd = 0;
    int64_t copied_a = -1, copied_b = -1;
    for (int i = 0; i < NF; i++) {
      void *mem;
      hr_frame f = make_frame(fmts[k], rgb[i], w, h, &mem);
      f.ts_ns = i * 33333333LL;
      for (int y = 0; y < h; y++) hr__ingest_row_rgbf(&f, y, twin + (size_t)y * w * 3);
      hr_frame t = {.fmt = HR_PIX_RGBF32, .width = w, .height = h, .planes = {twin}, .strides = {(ptrdiff_t)w * 12}, .ts_ns = f.ts_ns};
      hr_outputs oa, ob;
      CHECK_EQ_INT(hr_session_push(b, &t, &ob), HR_OK);
      memcpy(ref, ob.alpha, (size_t)w * h * 4);
      CHECK_EQ_INT(hr_session_push(a, &f, &oa), HR_OK);
      CHECK(oa.width == w && oa.height == h);
      identical += !memcmp(oa.alpha, ref, (size_t)w * h * 4);
      for (size_t j = 0; j < (size_t)w * h; j++) { double d = fabs((double)oa.alpha[j] - ref[j]); if (d > maxd) maxd = d; }
      int64_t want = ratio < 1 ? 0 : (int64_t)w * h * 12;
      CHECKF(oa.bytes_copied == want, "%s %dx%d ratio %g frame %d: bytes_copied %lld, want %lld", hr_pixfmt_name(fmts[k]), w, h,
             ratio, i, (long long)oa.bytes_copied, (long long)want);
      CHECKF(ob.bytes_copied == 0, "rgbf32 %dx%d ratio %g frame %d: bytes_copied %lld, want 0", w, h, ratio, i, (long long)ob.bytes_copied);
      copied_a = oa.bytes_copied; copied_b = ob.bytes_copied;
      free(mem);
    }
    printf("%-6s %4dx%-4d ratio %-4g: alpha bit-identical to its RGBF32 twin on %d/%d frames (max |d| %.3g); "
           "bytes_copied per frame %lld (rgbf32 twin %lld)\n",
           hr_pixfmt_name(fmts[k]), w, h, ratio, identical, NF, maxd, (long long)copied_a, (long long)copied_b);
    CHECKF(identical == NF, "%s %dx%d ratio %g: alpha differs from the RGBF32 twin (max |d| %g)", hr_pixfmt_name(fmts[k]), w, h,
           ratio, maxd);
    hr_session_destroy(a);
    hr_session_destroy(b);
  }
  for (int i = 0; i < NF; i++) free(rgb[i]);
  free(twin); free(ref);
}

/* Bad frames refused by the session without touching its state. */
static void test_refusals(hr_model *m, hr_frame *jpg) {
  enum { w = 512, h = 288 };
  unsigned char *rgb0 = malloc((size_t)w * h * 3), *rgb1 = malloc((size_t)w * h * 3);
  resample_rgb24(&jpg[0], rgb0, w, h);
  resample_rgb24(&jpg[1], rgb1, w, h);
  void *m0, *m1, *mb;
  hr_frame f0 = make_frame(HR_PIX_NV12_VIDEO, rgb0, w, h, &m0), f1 = make_frame(HR_PIX_NV12_VIDEO, rgb1, w, h, &m1);
  hr_frame bg = make_frame(HR_PIX_BGRA, rgb1, w, h, &mb);
  hr_session *a = new_session(m, w, h, 1.f), *b = new_session(m, w, h, 1.f);
  hr_outputs oa, ob;
  CHECK_EQ_INT(hr_session_push(a, &f0, &oa), HR_OK);
  CHECK_EQ_INT(hr_session_push(b, &f0, &ob), HR_OK);
  struct bad_frame { const char *what, *want1, *want2; hr_frame f; } bad[8];
  int n = 0;
  bad[n] = (struct bad_frame){"NV12 Y stride < width", "stride", "smaller than a row", f1}; bad[n++].f.strides[0] = w - 2;
  bad[n] = (struct bad_frame){"NV12 CbCr stride < width", "CbCr stride", "smaller than width", f1}; bad[n++].f.strides[1] = w - 2;
  bad[n] = (struct bad_frame){"NV12 odd width", "even", "511x288", f1}; bad[n++].f.width = w - 1;
  bad[n] = (struct bad_frame){"NV12 odd height", "even", "512x287", f1}; bad[n++].f.height = h - 1;
  bad[n] = (struct bad_frame){"NV12 NULL CbCr", "CbCr plane is NULL", "NV12", f1}; bad[n++].f.planes[1] = NULL;
  bad[n] = (struct bad_frame){"BGRA stride < width*4", "stride 2044", "smaller than a row", bg}; bad[n++].f.strides[0] = w * 4 - 4;
  bad[n] = (struct bad_frame){"I420 chroma stride < width/2", "chroma stride", "I420", f1};
  bad[n].f.fmt = HR_PIX_I420_VIDEO; bad[n].f.planes[2] = f1.planes[1]; bad[n].f.strides[1] = bad[n].f.strides[2] = w / 2 - 1; n++;
  for (int i = 0; i < n; i++) {
    memset(&oa, 0x5a, sizeof oa);
    hr_status st = hr_session_push(a, &bad[i].f, &oa);
    const char *msg = hr_session_last_error(a);
    printf("refused %-30s -> %s: %s\n", bad[i].what, hr_status_name(st), msg);
    CHECKF(st == HR_EINVAL, "%s: %s", bad[i].what, hr_status_name(st));
    CHECKF(strstr(msg, bad[i].want1) && strstr(msg, bad[i].want2), "%s: message '%s'", bad[i].what, msg);
  }
  /* the state is as if the refused frames never came */
  CHECK_EQ_INT(hr_session_push(a, &f1, &oa), HR_OK);
  CHECK_EQ_INT(hr_session_push(b, &f1, &ob), HR_OK);
  CHECKF(!memcmp(oa.alpha, ob.alpha, (size_t)w * h * 4), "alpha after refused frames differs from the run without them");
  hr_session_destroy(a);
  hr_session_destroy(b);
  free(m0); free(m1); free(mb); free(rgb0); free(rgb1);
}

int main(void) {
  char mp[1024], dp[1024];
  const char *model = hr_test_path("HR_MODEL_DIR", "rvm.json", mp, sizeof mp);
  const char *data = hr_test_path("HR_DATA_DIR", "sam2-bedroom/frames", dp, sizeof dp);
  if (!model || !data) SKIP("HR_MODEL_DIR / HR_DATA_DIR not set");
  hr_model *m = NULL;
  char err[1024];
  if (hr_model_load(model, &m, err, sizeof err)) FATAL("cannot load %s: %s", model, err);
  /* the first NF frames of the folder, kept valid together (pool_size NF) */
  hr_source_params sp;
  hr_source_params_default(&sp);
  sp.pool_size = NF;
  hr_source *src = NULL;
  if (hr_source_open(data, &sp, &src, err, sizeof err)) FATAL("cannot open %s: %s", data, err);
  hr_frame jpg[NF];
  for (int i = 0; i < NF; i++) {
    CHECK_EQ_INT(hr_source_read(src, &jpg[i]), HR_OK);
    CHECK_EQ_INT(jpg[i].fmt, HR_PIX_RGB24);
  }
  test_refusals(m, jpg);
  const hr_pixfmt all[] = {HR_PIX_NV12_VIDEO, HR_PIX_NV12_FULL, HR_PIX_I420_VIDEO, HR_PIX_BGRA};
  run_case(m, jpg, 512, 288, 1.f, all, 4);
  run_case(m, jpg, 512, 288, 0.25f, all, 4);
  const hr_pixfmt big[] = {HR_PIX_NV12_VIDEO, HR_PIX_BGRA};
  run_case(m, jpg, 1920, 1440, 0.25f, big, 2);
  hr_source_destroy(src);
  hr_model_destroy(m);
  return hr_test_finish("test_ingest_e2e");
}
