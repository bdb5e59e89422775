/* The kernel cache on XNNPACK operators of every kind it shares, with templates sealed in
 * read-only pages: clones give bit-identical outputs to a fresh operator, on two inputs, set up in
 * turn (as two sessions would); a template is built once per key, and freed with its last clone;
 * the heap is back where it was. Deconvolution is the kind the cache must not share: setting up a
 * clone of a sealed deconvolution template faults (checked in a child), which is why exec.c gives
 * it an operator of its own. */
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <sys/wait.h>
#include <unistd.h>
#include <malloc.h>
#include <xnnpack.h>
#include "hr_test.h"
#include "session/kcache.h"

/* one operator kind: create + setup at fixed shapes; x -> y */
typedef struct kind {
  const char *name;
  int id;
  size_t in_n, out_n;  /* floats */
} kind;

enum { CONV3, CONV1, DW5S2, FC, RESIZE_LEGACY, RESIZE_HALF, DECONV };
#define H 23
#define W 31
#define C 24
static float weights[5 * 5 * C * C], bias[C];

static void fill(float *x, size_t n, unsigned s) {
  for (size_t i = 0; i < n; i++) { s = s * 1664525u + 1013904223u; x[i] = (float)(s >> 8) / 16777216.f - 0.5f; }
}

static enum xnn_status create(int id, xnn_operator_t *op) {
  switch (id) {
    case CONV3: return xnn_create_convolution2d_nhwc_f32(1, 1, 1, 1, 3, 3, 1, 1, 1, 1, 1, C, C, C, C, weights, bias, -INFINITY, INFINITY, 0, op);
    case CONV1: return xnn_create_convolution2d_nhwc_f32(0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, C, C, C, C, weights, bias, 0.f, 6.f, 0, op);
    case DW5S2:
      return xnn_create_convolution2d_nhwc_f32(2, 2, 2, 2, 5, 5, 2, 2, 1, 1, C, 1, 1, C, C, weights, bias, -INFINITY, INFINITY,
                                               XNN_FLAG_DEPTHWISE_CONVOLUTION, op);
    case FC: return xnn_create_fully_connected_nc_f32(C, C, C, C, weights, bias, -INFINITY, INFINITY, 0, op);
    case RESIZE_LEGACY: return xnn_create_resize_bilinear2d_nhwc_f32(C, C, C, XNN_FLAG_TENSORFLOW_LEGACY_MODE, op);
    case RESIZE_HALF: return xnn_create_resize_bilinear2d_nhwc_f32(C, C, C, 0, op);
    case DECONV: return xnn_create_deconvolution2d_nhwc_f32(0, 1, 1, 0, 3, 3, 2, 2, 1, 1, 1, C, C, C, C, weights, NULL, -INFINITY, INFINITY, 0, op);
  }
  return xnn_status_invalid_parameter;
}

static enum xnn_status setup(int id, xnn_operator_t op, const float *x, float *y) {
  switch (id) {
    case CONV3: case CONV1: case DW5S2: return xnn_setup_convolution2d_nhwc_f32(op, 1, H, W, x, y, NULL);
    case FC: return xnn_setup_fully_connected_nc_f32(op, H * W, x, y, NULL);
    case RESIZE_LEGACY: case RESIZE_HALF: return xnn_setup_resize_bilinear2d_nhwc_f32(op, 1, H, W, 2 * H + 1, 2 * W - 3, x, y, NULL);
    case DECONV: return xnn_setup_deconvolution2d_nhwc_f32(op, 1, H, W, 0, 0, x, y, NULL);
  }
  return xnn_status_invalid_parameter;
}

/* the cache's key here: the kind id (the template's shapes are fixed per kind) */
static hr_status build(const void *key, xnn_operator_t *op) {
  int id = *(const int *)key;
  if (create(id, op) != xnn_status_success) return HR_ENOMEM;
  return setup(id, *op, (const float *)(uintptr_t)0x10000000, (float *)(uintptr_t)0x20000000) == xnn_status_success ? HR_OK : HR_ENOTSUP;
}

static int64_t heap_bytes(void) {
  struct mallinfo2 mi = mallinfo2();
  return (int64_t)(mi.uordblks + mi.hblkhd);
}

#define IN_N ((size_t)H * W * C + 64)
#define OUT_N ((size_t)(2 * H + 1) * (2 * W + 1) * C * 4)

static void check_kind(hr__kcache *kc, const char *name, int id) {
  float *x1 = malloc(IN_N * 4), *x2 = malloc(IN_N * 4);
  float *y1 = calloc(OUT_N, 4), *y2 = calloc(OUT_N, 4), *r1 = calloc(OUT_N, 4), *r2 = calloc(OUT_N, 4);
  fill(x1, IN_N, 3 + id); fill(x2, IN_N, 7 + id);
  /* reference: a fresh operator of its own, on each input */
  xnn_operator_t fresh = NULL;
  CHECK(create(id, &fresh) == xnn_status_success);
  CHECK(setup(id, fresh, x1, r1) == xnn_status_success && xnn_run_operator(fresh, NULL) == xnn_status_success);
  CHECK(setup(id, fresh, x2, r2) == xnn_status_success && xnn_run_operator(fresh, NULL) == xnn_status_success);
  xnn_delete_operator(fresh);
  /* two clones, as two sessions: set up and run in turn, then again the other way round */
  xnn_operator_t c1 = NULL, c2 = NULL;
  hr__kshare *s1 = NULL, *s2 = NULL;
  int64_t b1 = 0, b2 = 0;
  int n0 = 0, n1 = 0, n2 = 0;
  hr__kcache_bytes(kc, &n0);
  CHECK_EQ_INT(hr__kcache_acquire(kc, &id, sizeof id, build, &c1, &s1, &b1), HR_OK);
  hr__kcache_bytes(kc, &n1);
  CHECK_EQ_INT(hr__kcache_acquire(kc, &id, sizeof id, build, &c2, &s2, &b2), HR_OK);
  hr__kcache_bytes(kc, &n2);
  CHECK(s1 == s2 && b1 == b2 && b1 > 0);
  CHECK_EQ_INT(n1, n0 + 1); /* built once */
  CHECK_EQ_INT(n2, n1);
  if (!c1 || !c2) return;
  int same = 1;
  for (int round = 0; round < 2; round++) {
    CHECK(setup(id, c1, round ? x2 : x1, y1) == xnn_status_success);
    CHECK(setup(id, c2, round ? x1 : x2, y2) == xnn_status_success);
    CHECK(xnn_run_operator(c2, NULL) == xnn_status_success);
    CHECK(xnn_run_operator(c1, NULL) == xnn_status_success);
    same &= !memcmp(y1, round ? r2 : r1, OUT_N * 4) && !memcmp(y2, round ? r1 : r2, OUT_N * 4);
  }
  CHECKF(same, "%s: a clone's output differs from a fresh operator's", name);
  printf("%-22s template %7lld bytes, clones bit-identical: %s\n", name, (long long)b1, same ? "yes" : "NO");
  xnn_delete_operator(c1);
  hr__kcache_release(kc, s1);
  int n3 = 0;
  hr__kcache_bytes(kc, &n3);
  CHECK_EQ_INT(n3, n1); /* c2 still holds it */
  xnn_delete_operator(c2);
  hr__kcache_release(kc, s2);
  hr__kcache_bytes(kc, &n3);
  CHECK_EQ_INT(n3, n0); /* gone with the last clone */
  free(x1); free(x2); free(y1); free(y2); free(r1); free(r2);
}

#if !defined(__SANITIZE_ADDRESS__) /* under ASan the expected fault would be reported as a bug */
/* In a child: a clone of a deconvolution template (sealed or not), set up. Returns the child's
 * signal, 0 if it exited normally. */
static int deconv_clone_signal(hr__kcache *kc, int sealed) {
  pid_t pid = fork();
  if (pid == 0) {
    hr__kcache_protect(sealed);
    int id = DECONV;
    xnn_operator_t c = NULL;
    hr__kshare *sh = NULL;
    float *x = calloc(IN_N, 4), *y = calloc(OUT_N, 4);
    if (hr__kcache_acquire(kc, &id, sizeof id, build, &c, &sh, NULL)) _exit(2);
    setup(DECONV, c, x, y); /* writes into the template's pages: SIGSEGV */
    _exit(0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFSIGNALED(status) ? WTERMSIG(status) : 0;
}
#endif

int main(void) {
  if (xnn_initialize(hr__xnn_allocator()) != xnn_status_success) SKIP("XNNPACK does not initialise on this CPU");
  fill(weights, sizeof weights / sizeof *weights, 1);
  fill(bias, C, 2);
  hr__kcache *kc = hr__kcache_create();
  CHECK(kc != NULL);
  if (!kc) return hr_test_finish("test_session_kcache");
  hr__kcache_protect(1); /* a write to any template faults */
  int64_t heap0 = heap_bytes();
  static const struct { const char *name; int id; } kinds[] = {
      {"conv 3x3 pad 1", CONV3}, {"conv 1x1 relu6", CONV1}, {"depthwise 5x5 stride 2", DW5S2},
      {"fully connected", FC}, {"resize legacy", RESIZE_LEGACY}, {"resize half-pixel", RESIZE_HALF}};
  for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++) check_kind(kc, kinds[i].name, kinds[i].id);
  CHECKF(llabs(heap_bytes() - heap0) < 65536, "heap %+lld bytes after every clone and template is gone",
         (long long)(heap_bytes() - heap0));
#if defined(__SANITIZE_ADDRESS__)
  printf("deconvolution: not checked under AddressSanitizer (it would report the expected fault); the Release pass does\n");
#else
  int sig = deconv_clone_signal(kc, 1), control = deconv_clone_signal(kc, 0);
  printf("deconvolution: a clone's setup %s; unsealed, it %s\n",
         sig == SIGSEGV ? "faults on the sealed template (not shareable)" : "did not fault",
         control ? "faults too (the test is broken)" : "runs (and writes the template)");
  CHECKF(sig == SIGSEGV, "deconvolution's setup no longer writes its template (signal %d): it could be shared", sig);
  CHECKF(control == 0, "an unsealed deconvolution clone's setup died with signal %d", control);
#endif
  hr__kcache_destroy(kc);
  return hr_test_finish("test_session_kcache");
}
