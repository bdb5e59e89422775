/* Tests on real frames: RVM and the first frames of the sam2 bedroom clip (read into a source's
 * pool, or sampled down into the caller's buffers), and the comparisons of two sessions the
 * backend tests make. Kept apart from hr_test.h, which does not pull in the io library. */
#ifndef HR_TEST_FRAMES_H
#define HR_TEST_FRAMES_H
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include "headroom.h"
#include "headroom/io.h"
#include "hr_test.h"

/* Load $HR_MODEL_DIR/rvm.json into *m and read nf frames of $HR_DATA_DIR/sam2-bedroom/frames into
 * fr (pool of nf). Returns 1 when all is there; otherwise 0 with the reason printed and counted as
 * a failed check (*m and *src may be set: destroy them). */
static inline int hr_test_rvm_frames(hr_model **m, hr_source **src, hr_frame *fr, int nf) {
  char mp[1024], ap[1024], err[512] = "";
  *m = NULL; *src = NULL;
  if (!hr_test_path("HR_MODEL_DIR", "rvm.json", mp, sizeof mp) || !hr_test_path("HR_DATA_DIR", "sam2-bedroom/frames", ap, sizeof ap)) {
    fprintf(stderr, "FAIL: HR_MODEL_DIR / HR_DATA_DIR unset\n");
    hr_test_failures++;
    return 0;
  }
  CHECK_EQ_INT(hr_model_load(mp, m, err, sizeof err), HR_OK);
  hr_source_params sp;
  hr_source_params_default(&sp);
  sp.pool_size = nf;
  if (*m) CHECK_EQ_INT(hr_source_open(ap, &sp, src, err, sizeof err), HR_OK);
  if (!*m || !*src) { printf("%s\n", err); return 0; }
  for (int i = 0; i < nf; i++)
    if (hr_source_read(*src, &fr[i]) != HR_OK) { CHECKF(0, "reading frame %d of %s", i, ap); return 0; }
  return 1;
}

/* The first nf frames of the clip in dir, sampled down to w x h (nearest) as RGB24 into rgb
 * (nf x w*h*3 bytes) and as NV12 (BT.601 full range) into nv12 (nf x w*h*3/2), with frames
 * pointing at them (33 ms apart). Returns NULL, or why not (in err). */
static inline const char *hr_test_small_frames(const char *dir, int w, int h, int nf, uint8_t *rgb, uint8_t *nv12,
                                               hr_frame *fr_rgb, hr_frame *fr_nv12, char *err, size_t n) {
  hr_source *src;
  if (hr_source_open(dir, NULL, &src, err, n)) return err;
  for (int i = 0; i < nf; i++) {
    hr_frame f;
    uint8_t *ri = rgb + (size_t)i * w * h * 3, *ni = nv12 + (size_t)i * w * h * 3 / 2;
    if (hr_source_read(src, &f)) { snprintf(err, n, "read frame %d: %s", i, hr_source_last_error(src)); hr_source_destroy(src); return err; }
    if (f.fmt != HR_PIX_RGB24 && f.fmt != HR_PIX_BGRA) { snprintf(err, n, "frames are %s", hr_pixfmt_name(f.fmt)); hr_source_destroy(src); return err; }
    int bpp = f.fmt == HR_PIX_RGB24 ? 3 : 4;
    for (int y = 0; y < h; y++)
      for (int x = 0; x < w; x++) {
        const uint8_t *s = (const uint8_t *)f.planes[0] + (ptrdiff_t)(y * f.height / h) * f.strides[0] + (x * f.width / w) * bpp;
        uint8_t *d = ri + (y * w + x) * 3;
        if (bpp == 3) { d[0] = s[0]; d[1] = s[1]; d[2] = s[2]; } else { d[0] = s[2]; d[1] = s[1]; d[2] = s[0]; }
        double Y = 0.299 * d[0] + 0.587 * d[1] + 0.114 * d[2];
        ni[y * w + x] = (uint8_t)(Y + 0.5);
        if (!(x & 1) && !(y & 1)) {
          double cb = 128 + (d[2] - Y) / 1.772, cr = 128 + (d[0] - Y) / 1.402;
          uint8_t *c = ni + w * h + (y / 2) * w + x;
          c[0] = (uint8_t)(cb < 0 ? 0 : cb > 255 ? 255 : cb + 0.5);
          c[1] = (uint8_t)(cr < 0 ? 0 : cr > 255 ? 255 : cr + 0.5);
        }
      }
    fr_rgb[i] = (hr_frame){.fmt = HR_PIX_RGB24, .width = w, .height = h, .planes = {ri}, .strides = {w * 3}, .ts_ns = i * 33000000LL};
    fr_nv12[i] = (hr_frame){.fmt = HR_PIX_NV12_FULL, .width = w, .height = h, .planes = {ni, ni + w * h},
                            .strides = {w, w}, .ts_ns = i * 33000000LL};
  }
  hr_source_destroy(src);
  return NULL;
}

/* An RVM session at w x h, one thread, on backend be. */
static inline hr_session *hr_test_rvm_session(hr_model *m, hr_backend be, int w, int h, float ratio, hr_status *st) {
  hr_session_params p;
  hr_session_params_default(&p);
  p.width = w; p.height = h; p.downsample_ratio = ratio; p.threads = 1; p.backend = be;
  hr_session *s = NULL;
  *st = hr_session_create(m, &p, &s);
  return s;
}

/* Push f to a and b and compare their mattes: 0 and mean / max |d alpha| (a NaN counts as the
 * max), or -1 when a push failed (a check failed, naming what and frame i). */
static inline int hr_test_alpha_diff(hr_session *a, hr_session *b, const hr_frame *f, const char *what, int i, double *mean, double *mx) {
  hr_outputs oa, ob;
  CHECK_EQ_INT(hr_session_push(a, f, &oa), HR_OK);
  hr_status st = hr_session_push(b, f, &ob);
  CHECKF(st == HR_OK, "%s frame %d: %s: %s", what, i, hr_status_name(st), hr_session_last_error(b));
  if (st) return -1;
  CHECK(oa.width == ob.width && oa.height == ob.height);
  int npx = oa.width * oa.height;
  double sum = 0, m = 0;
  for (int k = 0; k < npx; k++) {
    double d = fabs((double)oa.alpha[k] - ob.alpha[k]);
    sum += d; if (d > m || d != d) m = d;
  }
  *mean = sum / npx; *mx = m;
  return 0;
}

/* Save from's state and load it into to (checked). */
static inline void hr_test_state_xfer(hr_session *from, hr_session *to) {
  size_t n = hr_session_state_size(from), wr = 0;
  uint8_t *b = malloc(n);
  CHECK_EQ_INT(hr_session_state_save(from, b, n, &wr), HR_OK);
  hr_status st = hr_session_state_load(to, b, n);
  CHECKF(st == HR_OK, "state load: %s", hr_session_last_error(to));
  free(b);
}
#endif
