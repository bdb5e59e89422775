/* Pushing frames allocates nothing: a counting allocator interposed in this binary sees zero
 * allocations and frees over 100 frames after warm-up, per input format and size, and the
 * recurrent state is updated in place (same buffers every frame, no bytes copied). The counter is
 * shown to count: a deliberate malloc + free inside the counted window is seen as 1 and 1. */
#include <errno.h>
#include <stdint.h>
#include <unistd.h>
#include "hr_test.h"
#include "headroom.h"
#include "headroom/io.h"
#include "session/session_impl.h"

#include "hr_alloc_count.h"

/* ---- test frames, made from real ones ------------------------------------------------------ */
typedef struct img { int w, h; uint8_t *rgb; } img;

/* Nearest-neighbour resize of an RGB24 frame (any stride) into a packed w x h image. */
static img resize_rgb(const hr_frame *f, int w, int h) {
  img o = {w, h, malloc((size_t)w * h * 3)};
  for (int y = 0; y < h; y++) {
    const uint8_t *row = (const uint8_t *)f->planes[0] + (ptrdiff_t)(y * f->height / h) * f->strides[0];
    for (int x = 0; x < w; x++) memcpy(o.rgb + ((size_t)y * w + x) * 3, row + (x * f->width / w) * 3, 3);
  }
  return o;
}

/* A frame of format fmt holding image im; buffers owned by *mem (freed by the caller). */
static hr_frame make_frame(const img *im, hr_pixfmt fmt, void **mem) {
  hr_frame f;
  memset(&f, 0, sizeof f);
  f.fmt = fmt; f.width = im->w; f.height = im->h;
  size_t n = (size_t)im->w * im->h;
  if (fmt == HR_PIX_RGB24) {
    *mem = malloc(n * 3);
    memcpy(*mem, im->rgb, n * 3);
    f.planes[0] = *mem; f.strides[0] = im->w * 3;
  } else if (fmt == HR_PIX_RGBF32) {
    float *p = malloc(n * 3 * sizeof(float));
    for (size_t i = 0; i < n * 3; i++) p[i] = im->rgb[i] / 255.f;
    *mem = p;
    f.planes[0] = p; f.strides[0] = (ptrdiff_t)im->w * 12;
  } else { /* NV12, full range BT.601: Y plane, then CbCr averaged over 2x2 */
    uint8_t *y = malloc(n + n / 2), *uv = y + n;
    for (size_t i = 0; i < n; i++) {
      const uint8_t *c = im->rgb + i * 3;
      y[i] = (uint8_t)lrintf(0.299f * c[0] + 0.587f * c[1] + 0.114f * c[2]);
    }
    for (int cy = 0; cy < im->h / 2; cy++)
      for (int cx = 0; cx < im->w / 2; cx++) {
        float r = 0, g = 0, b = 0;
        for (int d = 0; d < 4; d++) {
          const uint8_t *c = im->rgb + ((size_t)(2 * cy + d / 2) * im->w + 2 * cx + d % 2) * 3;
          r += c[0] / 4.f; g += c[1] / 4.f; b += c[2] / 4.f;
        }
        float cb = 128.f - 0.168736f * r - 0.331264f * g + 0.5f * b;
        float cr = 128.f + 0.5f * r - 0.418688f * g - 0.081312f * b;
        uv[(size_t)cy * im->w + 2 * cx] = (uint8_t)lrintf(cb < 0 ? 0 : cb > 255 ? 255 : cb);
        uv[(size_t)cy * im->w + 2 * cx + 1] = (uint8_t)lrintf(cr < 0 ? 0 : cr > 255 ? 255 : cr);
      }
    *mem = y;
    f.planes[0] = y; f.planes[1] = uv; f.strides[0] = f.strides[1] = im->w;
  }
  return f;
}

static uint64_t fnv(const void *p, size_t n) {
  const uint8_t *b = p;
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; i++) { h ^= b[i]; h *= 1099511628211ull; }
  return h;
}

#define NF 3 /* distinct frames, pushed in rotation (the input pointer changes every frame) */
static int g_u8; /* run_case's sessions give the 8-bit matte (params.alpha_u8) */

/* One case: session w x h at ratio, frames of format fmt made from src[] (at frame size fw x fh),
 * 5 warm-up frames, then n counted frames. */
static void run_case(hr_model *m, const hr_frame *src, int w, int h, float ratio, int fw, int fh, hr_pixfmt fmt,
                     int threads, int n) {
  hr_session_params p;
  hr_session_params_default(&p);
  p.width = w; p.height = h; p.downsample_ratio = ratio; p.threads = threads;
  p.alpha_u8 = g_u8;
  hr_session *s = NULL;
  hr_status st = hr_session_create(m, &p, &s);
  CHECKF(st == HR_OK, "create %dx%d: %s", w, h, hr_status_name(st));
  if (st) return;
  hr_frame fr[NF];
  void *mem[NF];
  for (int i = 0; i < NF; i++) {
    img im = resize_rgb(&src[i], fw, fh);
    fr[i] = make_frame(&im, fmt, &mem[i]);
    free(im.rgb);
  }
  /* Every state is written in place over its input: the state path copies nothing. */
  CHECK_EQ_INT(s->plan->n_state, 4);
  float *state0[8];
  for (int k = 0; k < s->plan->n_state; k++) {
    CHECKF(s->plan->state_inplace[k], "state r%d is not updated in place", k + 1);
    state0[k] = s->state[k];
  }
  hr_outputs o;
  long warm_allocs[5];
  for (int i = 0; i < 5; i++) {
    count_start();
    st = hr_session_push(s, &fr[i % NF], &o);
    count_stop();
    warm_allocs[i] = n_alloc;
    CHECK_EQ_INT(st, HR_OK);
  }
  uint64_t h_before = fnv(s->state[0], (size_t)s->plan->state_bytes[0]);
  int64_t copied = 0;
  int moved = 0;
  double sum = 0;
  count_start();
  for (int i = 0; i < n; i++) {
    st = hr_session_push(s, &fr[(i + 5) % NF], &o);
    if (st) break;
    for (int j = 0; j < o.width * o.height; j++) sum += g_u8 ? o.alpha_u8[j] : o.alpha[j]; /* reading the outputs */
    copied += s->bytes_copied;
    for (int k = 0; k < s->plan->n_state; k++) moved += s->state[k] != state0[k];
  }
  count_stop();
  CHECK_EQ_INT(st, HR_OK);
  uint64_t h_after = fnv(s->state[0], (size_t)s->plan->state_bytes[0]);
  printf("%4dx%-4d ratio %-4g %-6s frames %4dx%-4d threads %d%s: warm-up allocs %ld %ld %ld %ld %ld; %d frames: "
         "%ld allocs, %ld frees, %lld bytes; input bytes converted %lld/frame; state bytes copied 0, moved %d\n",
         w, h, ratio, hr_pixfmt_name(fmt), fw, fh, threads, g_u8 ? " alpha_u8" : "", warm_allocs[0], warm_allocs[1], warm_allocs[2], warm_allocs[3],
         warm_allocs[4], n, n_alloc, n_free, bytes_alloc, (long long)(n ? copied / n : 0), moved);
  long frames_alloc = n_alloc, frames_free = n_free;
  /* positive control: the same window (a push) with one deliberate allocation and free in it */
  count_start();
  CHECK_EQ_INT(hr_session_push(s, &fr[0], &o), HR_OK);
  void *volatile probe = malloc(100);
  free(probe);
  count_stop();
  printf("  control: a push + malloc(100) + free in the counted window: %ld allocs, %ld frees\n", n_alloc, n_free);
#if HR_COUNTING
  CHECKF(frames_alloc == 0 && frames_free == 0, "%ld allocations, %ld frees in %d frames", frames_alloc, frames_free, n);
  CHECKF(n_alloc == 1 && n_free == 1, "the counter missed the control: %ld allocations, %ld frees (want 1, 1)", n_alloc,
         n_free);
#else
  (void)frames_alloc; (void)frames_free;   /* a sanitizer build owns malloc: nothing counted */
#endif
  CHECK_EQ_INT(moved, 0);
  CHECK(h_before != h_after); /* the state did change, in the same buffers */
  CHECK(sum > 0);
  /* Input: read in place (not a byte copied) when the frame is at the session's size and either
   * is the model's own float input or the plan reads the input through the row reader (virtual
   * src: ratio < 1, where the first op resamples). Otherwise it is converted once into the
   * planned float input buffer (w x h x 12 bytes a frame), never more. */
  int in_place = fw == w && fh == h && (fmt == HR_PIX_RGBF32 || s->plan->vals[s->plan->src_val].src_virtual);
  CHECK_EQ_INT(copied, in_place ? 0 : (int64_t)w * h * 12 * n);
  for (int i = 0; i < NF; i++) free(mem[i]);
  hr_session_destroy(s);
}

int main(void) {
  char mp[1024], ap[1024];
  if (!hr_test_path("HR_MODEL_DIR", "rvm.json", mp, sizeof mp)) SKIP("HR_MODEL_DIR unset");
  if (!hr_test_path("HR_DATA_DIR", "sam2-bedroom/frames", ap, sizeof ap)) SKIP("HR_DATA_DIR unset");
  if (access(mp, R_OK) || access(ap, R_OK)) SKIP("model or frames missing (%s, %s)", mp, ap);
  if (!HR_COUNTING) printf("AddressSanitizer build: allocation counting off, in-place checks only\n");
  char err[512];
  hr_model *m = NULL;
  if (hr_model_load(mp, &m, err, sizeof err)) FATAL("cannot load %s: %s", mp, err);
  /* Three real frames (0, 40, 80), copied out of the source's pool. */
  hr_source_params sp;
  hr_source_params_default(&sp);
  sp.pool_size = 1;
  hr_source *src = NULL;
  if (hr_source_open(ap, &sp, &src, err, sizeof err)) FATAL("cannot open %s: %s", ap, err);
  hr_frame fr[NF];
  void *keep[NF];
  for (int i = 0, k = 0; k < NF; i++) {
    hr_frame f;
    CHECK_EQ_INT(hr_source_read(src, &f), HR_OK);
    if (i % 40) continue;
    CHECK_EQ_INT(f.fmt, HR_PIX_RGB24);
    keep[k] = malloc((size_t)f.height * f.strides[0]);
    memcpy(keep[k], f.planes[0], (size_t)f.height * f.strides[0]);
    fr[k] = f;
    fr[k].planes[0] = keep[k];
    k++;
  }
  hr_source_destroy(src);
  int fw = fr[0].width, fh = fr[0].height;

  static const hr_pixfmt fmts[] = {HR_PIX_RGB24, HR_PIX_RGBF32, HR_PIX_NV12_FULL};
  for (int i = 0; i < 3; i++) run_case(m, fr, 256, 144, 1.f, 256, 144, fmts[i], 1, 100);
  /* Frames of another size than the session's: resampled into the planned input buffer. */
  run_case(m, fr, 256, 144, 1.f, fw, fh, HR_PIX_RGB24, 1, 100);
  /* The thread pool path (workers run kernels) allocates nothing either; on 4 threads the one-pixel
   * 1x1 convolutions take our kernel over the pool (exec.c matvec_fits). */
  run_case(m, fr, 256, 144, 1.f, 256, 144, HR_PIX_NV12_FULL, 2, 10);
  run_case(m, fr, 256, 144, 1.f, 256, 144, HR_PIX_NV12_FULL, 4, 10);
  /* ... and the contention fallback: runs alternating between the pool and the calling thread
   * alone, each timed and the thread's run queue delay read (src/session/tadapt.h) */
  setenv("HR_THREAD_FALLBACK", "alternate", 1);
  run_case(m, fr, 256, 144, 1.f, 256, 144, HR_PIX_NV12_FULL, 2, 10);
  unsetenv("HR_THREAD_FALLBACK");
  /* Camera size, 1920x1440 at ratio 0.25 (processing 480x360): a few frames, ~100 ms each. */
  for (int i = 0; i < 3; i++) run_case(m, fr, 1920, 1440, 0.25f, 1920, 1440, fmts[i], 1, 4);
  /* The 8-bit matte (alpha_u8): converted over the pool into a buffer made with the plan. */
  g_u8 = 1;
  run_case(m, fr, 1920, 1440, 0.25f, 1920, 1440, HR_PIX_NV12_FULL, 2, 4);
  run_case(m, fr, 256, 144, 1.f, 256, 144, HR_PIX_RGB24, 1, 10);
  g_u8 = 0;

  for (int i = 0; i < NF; i++) free(keep[i]);
  hr_model_destroy(m);
  return hr_test_finish("test_session_noalloc");
}
