/* The exact 2x bilinear upsampling (kernels.c, up2_pair: half-pixel centres, rows in pairs, no
 * table) against the reference ResizeBilinear (graph/ops_ref.c) bit for bit, on odd shapes and the
 * channel counts with their own loops (16, 20, 32, 40, 80, 128) and others, on the calling thread and on a
 * pool of 3: hr__k_resize densely, into a channel slice of a wider tensor and over a batch of 2, and
 * hr__k_resize_cat with copied sources around the resized one (also an output of 17 MB, which is
 * put together 16 pixels at a time and streamed past the caches, and one of 17.5 MB whose rows are
 * not 64-byte multiples, which must not be). A resize that is not exactly 2x
 * (the general path) is checked the same way. */
#include <stdint.h>
#include <pthreadpool.h>
#include "hr_test.h"
#include "session/kernels.h"
#include "graph/ops.h"

static uint32_t rng = 12345;
static float rnd(void) {
  rng = rng * 1664525u + 1013904223u;
  uint32_t r = rng >> 8;
  if ((r & 63) == 0) return -0.0f;   /* signed zeros travel through the taps too */
  return ((float)(r & 0xffff) / 65535.f - 0.5f) * 8.f;
}
static float *fill(int64_t n) {
  float *p = malloc(sizeof(float) * (size_t)(n ? n : 1));
  for (int64_t i = 0; i < n; i++) p[i] = rnd();
  return p;
}
static hr__tensor t4(float *d, int64_t n, int64_t h, int64_t w, int64_t c) {
  hr__tensor t;
  memset(&t, 0, sizeof t);
  t.dt = HR_DT_FLOAT; t.rank = 4; t.dims[0] = n; t.dims[1] = h; t.dims[2] = w; t.dims[3] = c; t.data = d;
  return t;
}

/* The reference: o = ResizeBilinear(x) to oh x ow, half-pixel centres. */
static float *ref_resize(const hr__tensor *x, int64_t oh, int64_t ow) {
  hr__node nd;
  memset(&nd, 0, sizeof nd);
  nd.op = HR_OP_RESIZE_BILINEAR;
  nd.a.half_pixel = 1;
  int32_t sz[2] = {(int32_t)oh, (int32_t)ow};
  hr__tensor s;
  memset(&s, 0, sizeof s);
  s.dt = HR_DT_INT32; s.rank = 1; s.dims[0] = 2; s.data = sz;
  float *od = malloc(sizeof(float) * (size_t)(x->dims[0] * oh * ow * x->dims[3]));
  hr__tensor o = t4(od, x->dims[0], oh, ow, x->dims[3]);
  const hr__tensor *in[2] = {x, &s};
  hr__op_exec_ref(&nd, in, 2, &o, 1);
  return od;
}

/* Channels [off, off + c) of every pixel of o (stride os floats) equal ref (c floats a pixel). */
static int slice_eq(const float *o, int64_t os, int64_t off, const float *ref, int64_t c, int64_t px) {
  for (int64_t p = 0; p < px; p++)
    if (memcmp(o + p * os + off, ref + p * c, sizeof(float) * (size_t)c)) return 0;
  return 1;
}

static void check_resize(pthreadpool_t pool, int64_t n, int64_t h, int64_t w, int64_t c, int64_t oh, int64_t ow) {
  float *xd = fill(n * h * w * c);
  hr__tensor x = t4(xd, n, h, w, c);
  float *ref = ref_resize(&x, oh, ow);
  hr__resize r;
  CHECK_EQ_INT(hr__resize_init(&r, (int)w, (int)ow), HR_OK);
  /* dense */
  float *od = fill(n * oh * ow * c);
  hr__tensor o = t4(od, n, oh, ow, c);
  hr__k_resize(pool, &r, &x, &o, 0, 0);
  CHECKF(!memcmp(od, ref, sizeof(float) * (size_t)(n * oh * ow * c)), "resize %lldx%lldx%lldx%lld -> %lldx%lld (pool %d)", (long long)n,
         (long long)h, (long long)w, (long long)c, (long long)oh, (long long)ow, pool != NULL);
  /* into channels [3, 3 + c) of a tensor of c + 5 channels: the others untouched */
  int64_t ct = c + 5;
  float *wd = fill(n * oh * ow * ct), *keep = malloc(sizeof(float) * (size_t)(n * oh * ow * ct));
  memcpy(keep, wd, sizeof(float) * (size_t)(n * oh * ow * ct));
  hr__tensor wo = t4(wd, n, oh, ow, c);
  hr__k_resize(pool, &r, &x, &wo, 3, (int)ct);
  CHECKF(slice_eq(wd, ct, 3, ref, c, n * oh * ow), "resize into a slice, C %lld", (long long)c);
  int untouched = 1;
  for (int64_t p = 0; p < n * oh * ow; p++)
    untouched &= !memcmp(wd + p * ct, keep + p * ct, 3 * sizeof(float)) && !memcmp(wd + p * ct + 3 + c, keep + p * ct + 3 + c, 2 * sizeof(float));
  CHECKF(untouched, "resize into a slice wrote outside it, C %lld", (long long)c);
  free(wd); free(keep); free(od); free(ref); free(xd);
  hr__resize_free(&r);
}

/* A concat of: a copied source (c1 channels), the resized x (c channels), another copied one (c2). */
static void check_resize_cat(pthreadpool_t pool, int64_t h, int64_t w, int64_t c, int64_t oh, int64_t ow, int64_t c1, int64_t c2) {
  float *xd = fill(h * w * c), *s1 = fill(oh * ow * c1), *s2 = fill(oh * ow * c2);
  hr__tensor x = t4(xd, 1, h, w, c);
  float *ref = ref_resize(&x, oh, ow);
  hr__resize r;
  CHECK_EQ_INT(hr__resize_init(&r, (int)w, (int)ow), HR_OK);
  int64_t ct = c1 + c + c2;
  /* 64-byte aligned, as the arena's tensors are (an output of 16 MB or more is then streamed) */
  size_t ob = (sizeof(float) * (size_t)(oh * ow * ct) + 63) & ~(size_t)63;
  float *od = aligned_alloc(64, ob);
  for (int64_t i = 0; i < oh * ow * ct; i++) od[i] = rnd();
  hr__tensor o = t4(od, 1, oh, ow, ct);
  hr__k_cat_src src[3] = {{s1, oh, ow, c1, 0, 0}, {xd, h, w, c, c1, 1}, {s2, oh, ow, c2, c1 + c, 0}};
  hr__k_resize_cat(pool, &r, src, 3, &o);
  CHECKF(slice_eq(od, ct, c1, ref, c, oh * ow), "resize_cat resized part %lldx%lldx%lld -> %lldx%lld (pool %d)", (long long)h,
         (long long)w, (long long)c, (long long)oh, (long long)ow, pool != NULL);
  CHECKF(slice_eq(od, ct, 0, s1, c1, oh * ow) && slice_eq(od, ct, c1 + c, s2, c2, oh * ow), "resize_cat copies, C %lld", (long long)c);
  free(od); free(ref); free(xd); free(s1); free(s2);
  hr__resize_free(&r);
}

int main(void) {
  pthreadpool_t pools[2] = {NULL, pthreadpool_create(3)};
  const int64_t shapes[][3] = {{1, 1, 3}, {5, 7, 32}, {4, 9, 40}, {3, 2, 80}, {6, 5, 128}, {7, 3, 17}, {2, 33, 1}, {9, 4, 16}, {1, 6, 40}, {3, 11, 20}, {4, 3, 24}};
  for (int pi = 0; pi < 2; pi++) {
    for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
      int64_t h = shapes[k][0], w = shapes[k][1], c = shapes[k][2];
      check_resize(pools[pi], 1, h, w, c, 2 * h, 2 * w);
      check_resize_cat(pools[pi], h, w, c, 2 * h, 2 * w, 3, 16);
      check_resize_cat(pools[pi], h, w, c, 2 * h, 2 * w, 0, 19);
    }
    check_resize(pools[pi], 2, 5, 3, 40, 10, 6);    /* a batch */
    check_resize(pools[pi], 1, 5, 7, 32, 9, 13);    /* not 2x: the general path */
    check_resize(pools[pi], 1, 5, 7, 32, 10, 13);   /* 2x in height only */
    check_resize_cat(pools[pi], 5, 7, 40, 11, 14, 3, 16);
    /* an output of 17 MB (streamed in 16-pixel groups on AVX-512), 258 columns: a remainder of 2 */
    check_resize_cat(pools[pi], 65, 129, 32, 130, 258, 3, 93);
    /* 17.5 MB whose rows are not 64-byte multiples (482 x 35 floats): RVM's 360x480x35 at vtest's
     * 768x576 ratio 0.8; the streamed path must not take it (_mm512_stream_ps faults there) */
    check_resize_cat(pools[pi], 130, 241, 32, 260, 482, 3, 0);
  }
  pthreadpool_destroy(pools[1]);
  return hr_test_finish("test_kernels_resize");
}
