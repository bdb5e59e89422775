/* Overlay video (tools/headroom/overlay.c): synthetic frames in every input format the sources
 * produce, with a matte and an occlusion mask on known regions, are encoded, decoded back (our
 * video source and ffprobe) and checked region by region; then real frames (the sam2 bedroom video,
 * I420 in place, and the RealSense RGB PNGs) are encoded and counted. */
#include "../../tools/headroom/overlay.c"
#include <ftw.h>
#include <sys/stat.h>
#include "headroom/io.h"
#include "hr_test.h"

static char tmp_root[256];
static int rm_cb(const char *p, const struct stat *sb, int flag, struct FTW *ftw) { (void)sb; (void)flag; (void)ftw; return remove(p); }
static int file_exists(const char *p) { struct stat sb; return stat(p, &sb) == 0; }

static uint8_t clip8(double v) { return (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : lrint(v)); }
static void rgb_to_yuv(const int c[3], int video, uint8_t *y, uint8_t *u, uint8_t *v) {
  double Y = 0.299 * c[0] + 0.587 * c[1] + 0.114 * c[2];
  double U = (c[2] - Y) / 1.772, V = (c[0] - Y) / 1.402;
  if (video) { *y = clip8(16 + Y * 219 / 255); *u = clip8(128 + U * 224 / 255); *v = clip8(128 + V * 224 / 255); }
  else { *y = clip8(Y); *u = clip8(128 + U); *v = clip8(128 + V); }
}

/* ffprobe's count of decoded frames and codec name, or -1 without ffprobe. */
static int ffprobe_frames(const char *path, char *codec, size_t n) {
  char cmd[1200];
  snprintf(cmd, sizeof cmd, "ffprobe -v error -count_frames -select_streams v:0 -show_entries "
           "stream=codec_name,nb_read_frames -of csv=p=0 '%s' 2>/dev/null", path);
  FILE *p = popen(cmd, "r");
  if (!p) return -1;
  char line[256] = "";
  if (!fgets(line, sizeof line, p)) line[0] = 0;
  int rc = pclose(p);
  if (rc != 0 || !line[0]) return -1;
  char *comma = strchr(line, ',');
  if (!comma) return -1;
  *comma = 0;
  snprintf(codec, n, "%s", line);
  return atoi(comma + 1);
}

/* Decode every frame of a video with our source; mean RGB of a patch of frame `which`. */
static int decode_patch(const char *path, int which, int px, int py, int pw, int ph, double rgb[3], int *w, int *h) {
  hr_source *s = NULL;
  char err[400];
  if (hr_source_open(path, NULL, &s, err, sizeof err)) { fprintf(stderr, "%s\n", err); return -1; }
  int n = 0;
  hr_frame f;
  while (hr_source_read(s, &f) == HR_OK) {
    if (n++ != which) continue;
    *w = f.width;
    *h = f.height;
    rgb[0] = rgb[1] = rgb[2] = 0;
    for (int y = py; y < py + ph; y++)
      for (int x = px; x < px + pw; x++) {
        int Y = ((const uint8_t *)f.planes[0])[y * f.strides[0] + x], U, V;
        if (f.fmt == HR_PIX_I420_VIDEO || f.fmt == HR_PIX_I420_FULL) {
          U = ((const uint8_t *)f.planes[1])[(y / 2) * f.strides[1] + x / 2];
          V = ((const uint8_t *)f.planes[2])[(y / 2) * f.strides[2] + x / 2];
        } else { hr_source_destroy(s); return -1; }
        double yy = f.fmt == HR_PIX_I420_VIDEO ? (Y - 16) * 255.0 / 219 : Y;
        double uu = f.fmt == HR_PIX_I420_VIDEO ? (U - 128) * 255.0 / 224 : U - 128;
        double vv = f.fmt == HR_PIX_I420_VIDEO ? (V - 128) * 255.0 / 224 : V - 128;
        rgb[0] += yy + 1.402 * vv;
        rgb[1] += yy - 0.344136 * uu - 0.714136 * vv;
        rgb[2] += yy + 1.772 * uu;
      }
    for (int k = 0; k < 3; k++) rgb[k] /= (double)pw * ph;
  }
  hr_source_destroy(s);
  return n;
}

/* Synthetic frames: one flat colour C; alpha 1 on the top-left quarter, 0.5 on the bottom-right,
 * 0 elsewhere; the occlusion mask on the bottom-left quarter. */
static const int C[3] = {180, 100, 60};

static void expect(int region, double out[3]) {
  for (int k = 0; k < 3; k++) {
    int pers = (C[k] + OV_PERSON[k]) >> 1, back = (C[k] * OV_DIM) >> 8, occ = (C[k] + OV_OCCLUDE[k]) >> 1;
    out[k] = region == 0 ? pers : region == 1 ? back : region == 2 ? occ : (128 * pers + 128 * back + 128) >> 8;
  }
}

static void synthetic(const char *fmt_name, hr_pixfmt fmt, int w, int h, int aw, int ah) {
  const int nframes = 12;
  int video = fmt == HR_PIX_NV12_VIDEO || fmt == HR_PIX_I420_VIDEO;
  size_t stride = (size_t)w * 12 + 16;   /* padded rows (RGBF32 needs 12 bytes a pixel): strides are honoured */
  uint8_t *p0 = calloc(stride * (size_t)h, 1), *p1 = calloc(stride * (size_t)h, 1), *p2 = calloc(stride * (size_t)h, 1);
  uint8_t Y, U, V;
  rgb_to_yuv(C, video, &Y, &U, &V);
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++) {
      uint8_t *q = p0 + y * stride;
      switch (fmt) {
        case HR_PIX_RGB24: q[3 * x] = (uint8_t)C[0]; q[3 * x + 1] = (uint8_t)C[1]; q[3 * x + 2] = (uint8_t)C[2]; break;
        case HR_PIX_BGRA: q[4 * x] = (uint8_t)C[2]; q[4 * x + 1] = (uint8_t)C[1]; q[4 * x + 2] = (uint8_t)C[0]; q[4 * x + 3] = 255; break;
        case HR_PIX_RGBF32: { float *fq = (float *)q; for (int k = 0; k < 3; k++) fq[3 * x + k] = C[k] / 255.f; break; }
        default:
          q[x] = Y;
          if (fmt == HR_PIX_NV12_FULL || fmt == HR_PIX_NV12_VIDEO) { p1[(y / 2) * stride + 2 * (x / 2)] = U; p1[(y / 2) * stride + 2 * (x / 2) + 1] = V; }
          else { p1[(y / 2) * stride + x / 2] = U; p2[(y / 2) * stride + x / 2] = V; }
      }
    }
  hr_frame f = {fmt, w, h, {p0, p1, p2}, {(ptrdiff_t)stride, (ptrdiff_t)stride, (ptrdiff_t)stride}, 0};
  if (fmt == HR_PIX_RGB24 || fmt == HR_PIX_BGRA || fmt == HR_PIX_RGBF32) f.planes[1] = f.planes[2] = NULL, f.strides[1] = f.strides[2] = 0;
  if (fmt == HR_PIX_NV12_FULL || fmt == HR_PIX_NV12_VIDEO) f.planes[2] = NULL, f.strides[2] = 0;
  float *alpha = malloc(sizeof *alpha * (size_t)aw * ah);
  uint8_t *occ = malloc((size_t)aw * ah);
  for (int y = 0; y < ah; y++)
    for (int x = 0; x < aw; x++) {
      int left = x < aw / 2, top = y < ah / 2;
      alpha[y * aw + x] = left && top ? 1.f : !left && !top ? 0.5f : 0.f;
      occ[y * aw + x] = left && !top ? 255 : 0;
    }
  char path[600], err[400];
  snprintf(path, sizeof path, "%s/syn_%s_%dx%d_%s.mp4", tmp_root, fmt_name, w, h, ov_codecs[0]);
  overlay_ctx *o = NULL;
  int st = overlay_open(&o, path, w, h, 30, err, sizeof err);
  CHECKF(st == HR_OK, "%s: overlay_open: %s", fmt_name, err);
  if (st) goto out;
  for (int i = 0; i < nframes; i++) {
    f.ts_ns = i * 33333333LL;
    st = overlay_write(o, &f, alpha, aw, ah, occ);
    CHECKF(st == HR_OK, "%s: frame %d: %s", fmt_name, i, o->err);
  }
  CHECK(!file_exists(path));   /* written as .tmp until closed */
  const char *codec = o->codec;
  double ms = (double)o->cost_ns / 1e6 / nframes;
  CHECK_EQ_INT(overlay_close(o), HR_OK);
  CHECK(file_exists(path));
  char probed[64] = "";
  int nf = ffprobe_frames(path, probed, sizeof probed);
  if (nf >= 0) CHECKF(nf == nframes, "%s: ffprobe counts %d frames", fmt_name, nf);
  /* Regions, away from their borders (chroma is shared by 2x2 blocks and the codec blurs edges). */
  static const char *names[4] = {"person", "background", "occlusion", "alpha 0.5"};
  int max_err = 0;
  for (int r = 0; r < 4; r++) {
    int rx = r == 0 || r == 2 ? 0 : w / 2, ry = r < 2 ? 0 : h / 2;
    if (r == 1) rx = w / 2, ry = 0;
    if (r == 3) rx = w / 2, ry = h / 2;
    int pw = w / 4, ph = h / 4;
    double got[3], want[3];
    int dw = 0, dh = 0;
    int n = decode_patch(path, nframes / 2, rx + w / 8, ry + h / 8, pw, ph, got, &dw, &dh);
    CHECK_EQ_INT(n, nframes);
    CHECK(dw == ((w + 1) & ~1) && dh == ((h + 1) & ~1));
    expect(r, want);
    for (int k = 0; k < 3; k++) {
      int e = (int)lrint(fabs(got[k] - want[k]));
      if (e > max_err) max_err = e;
      CHECKF(e <= 8, "%s %dx%d %s channel %d: %.1f, expected %.0f", fmt_name, w, h, names[r], k, got[k], want[k]);
    }
  }
  printf("  %-6s %dx%d (alpha %dx%d): %d frames (%s -> ffprobe %s %d), worst region error %d/255, %.2f ms/frame\n",
         fmt_name, w, h, aw, ah, nframes, codec, probed[0] ? probed : "n/a", nf, max_err, ms);
out:
  free(p0);
  free(p1);
  free(p2);
  free(alpha);
  free(occ);
}

/* Real frames from a source through the overlay: frame count, decodability, cost. */
static void real(const char *label, const char *spec, int maxf) {
  hr_source *s = NULL;
  char err[400], path[600];
  if (hr_source_open(spec, NULL, &s, err, sizeof err)) {   /* a source that does not open is a failure */
    CHECKF(0, "%s: cannot open %s: %s", label, spec, err);
    return;
  }
  hr_pixfmt fmt;
  int w, h;
  hr_source_get_format(s, &fmt, &w, &h);
  snprintf(path, sizeof path, "%s/real_%s.mp4", tmp_root, label);
  overlay_ctx *o = NULL;
  CHECK_EQ_INT(overlay_open(&o, path, w, h, 30, err, sizeof err), HR_OK);
  float *alpha = malloc(sizeof *alpha * (size_t)(w / 2) * (h / 2));   /* a matte at half size */
  for (int y = 0; y < h / 2; y++)
    for (int x = 0; x < w / 2; x++) alpha[y * (w / 2) + x] = hypot(x - w / 4.0, y - h / 4.0) < h / 6.0 ? 1.f : 0.f;
  int n = 0;
  hr_frame f;
  while (o && n < maxf && hr_source_read(s, &f) == HR_OK) {
    int st = overlay_write(o, &f, alpha, w / 2, h / 2, NULL);
    CHECKF(st == HR_OK, "%s frame %d: %s", label, n, o->err);
    n++;
  }
  double ms = o && n ? (double)o->cost_ns / 1e6 / n : 0, worst = o ? (double)o->cost_ns_max / 1e6 : 0;
  const char *codec = o ? o->codec : "?";
  CHECK_EQ_INT(overlay_close(o), HR_OK);
  char probed[64] = "";
  int nf = ffprobe_frames(path, probed, sizeof probed);
  if (nf >= 0) CHECKF(nf == n, "%s: ffprobe counts %d of %d frames", label, nf, n);
  double rgb[3];
  int dw, dh;
  CHECK_EQ_INT(decode_patch(path, 0, 0, 0, 2, 2, rgb, &dw, &dh), n);
  struct stat sb;
  stat(path, &sb);
  printf("  %-9s %s %dx%d: %d frames -> %s (ffprobe %s %d frames, %lld KB), %.2f ms/frame (worst %.2f)\n", label,
         hr_pixfmt_name(fmt), w, h, n, codec, probed[0] ? probed : "n/a", nf, (long long)sb.st_size / 1024, ms, worst);
  free(alpha);
  hr_source_destroy(s);
}

int main(void) {
  snprintf(tmp_root, sizeof tmp_root, "/tmp/hr_overlay_XXXXXX");
  if (!mkdtemp(tmp_root)) SKIP("mkdtemp: %s", strerror(errno));
  printf("test_depth_overlay:\n");
  synthetic("rgb24", HR_PIX_RGB24, 320, 240, 320, 240);
  synthetic("bgra", HR_PIX_BGRA, 320, 240, 160, 120);
  synthetic("rgbf32", HR_PIX_RGBF32, 320, 240, 320, 240);
  synthetic("i420v", HR_PIX_I420_VIDEO, 320, 240, 640, 480);
  synthetic("i420", HR_PIX_I420_FULL, 320, 240, 320, 240);
  synthetic("nv12v", HR_PIX_NV12_VIDEO, 320, 240, 320, 240);
  synthetic("nv12", HR_PIX_NV12_FULL, 320, 240, 160, 120);
  synthetic("rgb24", HR_PIX_RGB24, 161, 121, 80, 60);   /* odd size: padded to even */
  ov_codecs[0] = "no-such-encoder";                     /* the fallback: MPEG-4 part 2 */
  synthetic("nv12v", HR_PIX_NV12_VIDEO, 320, 240, 320, 240);
  ov_codecs[0] = "libx264";

  /* Misuse and errors. */
  char err[400], path[600];
  overlay_ctx *o = NULL;
  CHECK_EQ_INT(overlay_close(NULL), HR_OK);
  CHECK_EQ_INT(overlay_open(&o, "/nonexistent-dir/x.mp4", 64, 64, 30, err, sizeof err), HR_EIO);
  CHECK(o == NULL && strstr(err, "x.mp4"));
  CHECK_EQ_INT(overlay_open(&o, "/tmp/x.mp4", 0, 64, 30, err, sizeof err), HR_EINVAL);
  snprintf(path, sizeof path, "%s/err.mp4", tmp_root);
  CHECK_EQ_INT(overlay_open(&o, path, 64, 48, 25, err, sizeof err), HR_OK);
  uint16_t depth[64 * 48] = {0};
  hr_frame df = {HR_PIX_DEPTH16_MM, 64, 48, {depth}, {128}, 0};
  CHECK_EQ_INT(overlay_write(o, &df, NULL, 0, 0, NULL), HR_ENOTSUP);
  uint8_t rgb[64 * 48 * 3] = {0};
  hr_frame rf = {HR_PIX_RGB24, 64, 48, {rgb}, {64 * 3}, 0};
  CHECK_EQ_INT(overlay_write(o, &rf, NULL, 0, 0, NULL), HR_OK);   /* no matte: the frame as it is */
  CHECK_EQ_INT(overlay_close(o), HR_OK);
  char probed[64];
  int nf = ffprobe_frames(path, probed, sizeof probed);
  if (nf >= 0) CHECK_EQ_INT(nf, 1);

  char spec[600];
  /* With HR_DATA_DIR set (as ctest sets it) both recordings must be there and open. */
  if (hr_test_path("HR_DATA_DIR", "sam2-bedroom/bedroom.mp4", spec, sizeof spec)) {
    CHECKF(file_exists(spec), "%s is missing", spec);
    real("bedroom", spec, 60);
  } else {
    printf("  real frames: not run (HR_DATA_DIR unset; ctest sets it)\n");
  }
  if (hr_test_path("HR_DATA_DIR", "realsense-d435-desk", spec, sizeof spec)) {
    CHECKF(file_exists(spec), "%s is missing", spec);
    real("realsense", spec, 30);
  }
  nftw(tmp_root, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
  return hr_test_finish("test_depth_overlay");
}
