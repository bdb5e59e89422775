/* Two sessions on one model, interleaved frame by frame on two real videos, and two sessions
 * driven by two threads at once, give outputs bit-identical to each video run alone, with the
 * shared kernels sealed read-only (a write to them would fault). A second session costs its own
 * plan only (arena, state, io, its small kernel tables): the packed weights and indirection
 * buffers are the model's, made by the first session at that plan and freed with the last. */
#include <malloc.h>
#include <pthread.h>
#include <unistd.h>
#include "hr_test.h"
#include "headroom.h"
#include "headroom/io.h"
#include "session/kcache.h"

#define W 256
#define H 144
#define N 24 /* frames per clip */

/* Resident set size of this process in bytes (/proc/self/statm, second field). */
static int64_t rss_bytes(void) {
  long pages = 0, res = 0;
  FILE *f = fopen("/proc/self/statm", "r");
  if (!f) return -1;
  if (fscanf(f, "%ld %ld", &pages, &res) != 2) res = -1;
  fclose(f);
  return (int64_t)res * sysconf(_SC_PAGESIZE);
}

/* Heap bytes in use (malloc arenas + mmapped chunks): exact, unlike RSS, for what sessions take. */
static int64_t heap_bytes(void) {
  struct mallinfo2 mi = mallinfo2();
  return (int64_t)(mi.uordblks + mi.hblkhd);
}

/* Bytes of this process's private anonymous mappings that are read-only (sealed templates). */
static int64_t readonly_anon_bytes(void) {
  FILE *f = fopen("/proc/self/maps", "r");
  char line[512];
  int64_t n = 0;
  while (f && fgets(line, sizeof line, f)) {
    unsigned long lo, hi, off, inode;
    char perm[8], dev[16];
    int k = sscanf(line, "%lx-%lx %7s %lx %15s %lu", &lo, &hi, perm, &off, dev, &inode);
    if (k == 6 && !strcmp(perm, "r--p") && inode == 0 && !strchr(line, '[') && !strchr(line, '/')) n += (int64_t)(hi - lo);
  }
  if (f) fclose(f);
  return n;
}

static hr_source *open_src(const char *spec) {
  hr_source *src = NULL;
  char err[512];
  hr_status st = hr_source_open(spec, NULL, &src, err, sizeof err);
  if (st) FATAL("cannot open %s: %s", spec, err);
  return src;
}

static float ratio = 1.f; /* downsample_ratio of the sessions made here */

static hr_session *new_session(hr_model *m) {
  hr_session_params p;
  hr_session_params_default(&p);
  p.width = W; p.height = H; p.downsample_ratio = ratio; p.threads = 1; /* a shared 2-core machine: see the report on thread pools */
  hr_session *s = NULL;
  hr_status st = hr_session_create(m, &p, &s);
  CHECKF(st == HR_OK, "session create: %s", hr_status_name(st));
  if (st) exit(1);
  return s;
}

/* Run one clip alone through a fresh session; alpha of every frame into ref[N][W*H]. */
static void run_alone(hr_model *m, const char *spec, float *ref) {
  hr_source *src = open_src(spec);
  hr_session *s = new_session(m);
  for (int i = 0; i < N; i++) {
    hr_frame f; hr_outputs o;
    CHECK_EQ_INT(hr_source_read(src, &f), HR_OK);
    CHECK_EQ_INT(hr_session_push(s, &f, &o), HR_OK);
    CHECK(o.width == W && o.height == H);
    memcpy(ref + (size_t)i * W * H, o.alpha, sizeof(float) * W * H);
  }
  hr_session_destroy(s);
  hr_source_destroy(src);
}

/* A thread driving one session over one clip, started together with another at a barrier. */
static pthread_barrier_t start;
typedef struct worker { hr_model *m; const char *spec; const float *ref; int same; } worker;
static void *run_thread(void *arg) {
  worker *w = arg;
  hr_source *src = open_src(w->spec);
  pthread_barrier_wait(&start);
  hr_session_params p;
  hr_session_params_default(&p);
  p.width = W; p.height = H; p.downsample_ratio = ratio; p.threads = 1;
  hr_session *s = NULL;
  if (!src || hr_session_create(w->m, &p, &s)) { hr_source_destroy(src); return NULL; } /* counted as 0 frames */
  for (int i = 0; i < N; i++) {
    hr_frame f; hr_outputs o;
    if (hr_source_read(src, &f) || hr_session_push(s, &f, &o)) break;
    w->same += !memcmp(o.alpha, w->ref + (size_t)i * W * H, sizeof(float) * W * H);
  }
  hr_session_destroy(s);
  hr_source_destroy(src);
  return NULL;
}

static double mean(const float *a, int n) { double t = 0; for (int i = 0; i < n; i++) t += a[i]; return t / n; }

int main(void) {
  char mp[1024], ap[1024], bp[1024];
  if (!hr_test_path("HR_MODEL_DIR", "rvm.json", mp, sizeof mp)) SKIP("HR_MODEL_DIR unset");
  if (!hr_test_path("HR_DATA_DIR", "sam2-bedroom/frames", ap, sizeof ap)) SKIP("HR_DATA_DIR unset");
  const char *vtest = "/usr/share/doc/opencv-doc/examples/data/vtest.avi";
  if (access(vtest, R_OK) == 0) snprintf(bp, sizeof bp, "%s", vtest);
  else if (!hr_test_path("HR_DATA_DIR", "realsense-d435-desk", bp, sizeof bp)) SKIP("no second clip");
  if (access(mp, R_OK) || access(ap, R_OK)) SKIP("model or frames missing (%s, %s)", mp, ap);

  int64_t rss_start = rss_bytes(), heap_start = heap_bytes();
  char err[512];
  hr_model *m = NULL;
  hr_status st = hr_model_load(mp, &m, err, sizeof err);
  if (st) FATAL("cannot load %s: %s", mp, err);
  int64_t rss_model = rss_bytes(), heap_model = heap_bytes();

  /* ---- memory: one session, then a second one on the same model ------------------------- */
  hr_source *a = open_src(ap), *b = open_src(bp);
  printf("clip A: %s\nclip B: %s\n", hr_source_describe(a), hr_source_describe(b));
  hr_frame fa, fb;
  CHECK_EQ_INT(hr_source_read(a, &fa), HR_OK);
  CHECK_EQ_INT(hr_source_read(b, &fb), HR_OK);
  int64_t rss0 = rss_bytes(), heap0 = heap_bytes();
  hr_session *s1 = new_session(m);
  hr_outputs o1, o2;
  CHECK_EQ_INT(hr_session_push(s1, &fa, &o1), HR_OK);
  int64_t rss1 = rss_bytes(), heap1 = heap_bytes();
  hr_session *s2 = new_session(m);
  CHECK_EQ_INT(hr_session_push(s2, &fb, &o2), HR_OK);
  int64_t rss2 = rss_bytes(), heap2 = heap_bytes();
  hr_plan_info pi, pi2;
  hr_session_get_plan(s1, &pi);
  hr_session_get_plan(s2, &pi2);
  hr_model_memory mm;
  hr_model_get_memory(m, &mm);
  int64_t own = pi.arena_bytes + pi.state_bytes + pi.io_bytes;
  printf("model load: RSS +%.1f MB, heap +%.1f MB (plan: weights %.1f MB, shared)\n", (rss_model - rss_start) / 1e6,
         (heap_model - heap_start) / 1e6, pi.weight_bytes / 1e6);
  printf("plan per session %dx%d ratio %g: arena %.2f MB + state %.2f MB + io %.2f MB + own kernels %.2f MB = %.2f MB; "
         "shared kernels %.2f MB\n", pi.width, pi.height, pi.downsample_ratio, pi.arena_bytes / 1e6, pi.state_bytes / 1e6,
         pi.io_bytes / 1e6, pi.kernel_bytes / 1e6, pi.session_bytes / 1e6, pi.kernel_shared_bytes / 1e6);
  printf("session 1 (create + 1 frame): RSS +%.2f MB, heap +%.2f MB\n", (rss1 - rss0) / 1e6, (heap1 - heap0) / 1e6);
  printf("session 2 (create + 1 frame): RSS +%.2f MB, heap +%.2f MB: %.2f MB beyond arena + state + io\n", (rss2 - rss1) / 1e6,
         (heap2 - heap1) / 1e6, (heap2 - heap1 - own) / 1e6);
  printf("model now: %.2f MB of shared kernels in %d XNNPACK templates\n", mm.kernel_shared_bytes / 1e6, mm.n_shared_kernels);
  /* The second session is its plan: arena, state and io, plus its own kernel tables and operator
   * structs. Before kernels were shared it took 27.4 MB beyond arena + state + io here (15.3 MB of
   * packed weights + 11.2 MB of indirection buffers, one copy per session). */
  CHECKF(pi2.kernel_bytes < pi.weight_bytes / 8, "second session's own kernels %.2f MB", pi2.kernel_bytes / 1e6);
  if (heap1 > heap0) {
    CHECKF(heap2 - heap1 - own <= 2000000, "second session: %.2f MB beyond arena + state + io", (heap2 - heap1 - own) / 1e6);
    /* the library's account of a session is what the heap says it took (to 0.5 MB) */
    CHECKF(llabs((heap2 - heap1) - pi2.session_bytes) <= 500000, "second session: heap +%.2f MB, plan says %.2f MB",
           (heap2 - heap1) / 1e6, pi2.session_bytes / 1e6);
    /* the first session took the same plus the shared kernels, which the second reuses, not copies */
    CHECKF(llabs((heap1 - heap0) - (heap2 - heap1) - mm.kernel_shared_bytes) <= 1000000,
           "session 1 took %.2f MB, session 2 %.2f MB, shared kernels %.2f MB", (heap1 - heap0) / 1e6,
           (heap2 - heap1) / 1e6, mm.kernel_shared_bytes / 1e6);
  } else {
    printf("heap figures unavailable (a sanitizer's allocator): the heap checks run in the Release pass\n");
  }
  CHECK_EQ_INT(pi2.kernel_shared_bytes, pi.kernel_shared_bytes);
  CHECK(mm.kernel_shared_bytes == pi.kernel_shared_bytes && mm.kernel_shared_bytes > pi.weight_bytes);
  /* a session at another plan makes its own shared kernels; they go with it */
  hr_session_params p3;
  hr_session_params_default(&p3);
  p3.width = W / 2; p3.height = H / 2; p3.threads = 1;
  hr_session *s3 = NULL;
  CHECK_EQ_INT(hr_session_create(m, &p3, &s3), HR_OK);
  hr_model_memory mm3;
  hr_model_get_memory(m, &mm3);
  CHECK(mm3.n_shared_kernels > mm.n_shared_kernels && mm3.kernel_shared_bytes > mm.kernel_shared_bytes);
  hr_session_destroy(s3);
  hr_model_get_memory(m, &mm3);
  CHECK_EQ_INT(mm3.kernel_shared_bytes, mm.kernel_shared_bytes);
  CHECK_EQ_INT(mm3.n_shared_kernels, mm.n_shared_kernels);
  hr_session_destroy(s2);
  hr_model_get_memory(m, &mm3);
  CHECK_EQ_INT(mm3.kernel_shared_bytes, mm.kernel_shared_bytes); /* session 1 still uses them */
  hr_session_destroy(s1);
  hr_model_get_memory(m, &mm3);
  CHECK_EQ_INT(mm3.kernel_shared_bytes, 0); /* the last session took them with it */
  CHECK_EQ_INT(mm3.n_shared_kernels, 0);
  hr_source_destroy(a);
  hr_source_destroy(b);

  /* ---- correctness: each clip alone, then both interleaved, shared kernels read-only ----- */
  hr__kcache_protect(1);
  float *ref_a = malloc(sizeof(float) * W * H * N), *ref_b = malloc(sizeof(float) * W * H * N);
  if (!ref_a || !ref_b) return 1;
  run_alone(m, ap, ref_a);
  run_alone(m, bp, ref_b);

  a = open_src(ap); b = open_src(bp);
  int64_t ro0 = readonly_anon_bytes();
  s1 = new_session(m); s2 = new_session(m);
  hr_model_get_memory(m, &mm3);
  /* what the sessions share is really read-only: all of it lies in read-only pages */
  printf("sealed: %.2f MB of shared kernels, %.2f MB more read-only anonymous pages\n", mm3.kernel_shared_bytes / 1e6,
         (readonly_anon_bytes() - ro0) / 1e6);
  CHECK(mm3.kernel_shared_bytes > 0 && readonly_anon_bytes() - ro0 >= mm3.kernel_shared_bytes);
  int same_a = 0, same_b = 0;
  for (int i = 0; i < N; i++) {
    CHECK_EQ_INT(hr_source_read(a, &fa), HR_OK);
    CHECK_EQ_INT(hr_source_read(b, &fb), HR_OK);
    /* Push A then B, and only then look at A's outputs: they are borrowed from session 1 and
     * must survive a push on session 2 (sessions share nothing writable). Every other frame the
     * order is B then A. */
    if (i % 2 == 0) {
      CHECK_EQ_INT(hr_session_push(s1, &fa, &o1), HR_OK);
      CHECK_EQ_INT(hr_session_push(s2, &fb, &o2), HR_OK);
    } else {
      CHECK_EQ_INT(hr_session_push(s2, &fb, &o2), HR_OK);
      CHECK_EQ_INT(hr_session_push(s1, &fa, &o1), HR_OK);
    }
    const float *ra = ref_a + (size_t)i * W * H, *rb = ref_b + (size_t)i * W * H;
    int eq_a = !memcmp(o1.alpha, ra, sizeof(float) * W * H), eq_b = !memcmp(o2.alpha, rb, sizeof(float) * W * H);
    CHECKF(eq_a, "clip A frame %d differs when interleaved", i);
    CHECKF(eq_b, "clip B frame %d differs when interleaved", i);
    same_a += eq_a; same_b += eq_b;
    CHECK_EQ_INT(o1.frame_index, i);
    CHECK_EQ_INT(o2.frame_index, i);
    if (i % 8 == 0 || i == N - 1) printf("frame %2d: mean alpha A %.4f B %.4f\n", i, mean(o1.alpha, W * H), mean(o2.alpha, W * H));
  }
  printf("interleaved: clip A %d/%d, clip B %d/%d frames bit-identical to the clip alone\n", same_a, N, same_b, N);
  /* The two clips are different: the comparison above is not comparing a clip with itself. */
  CHECK(memcmp(ref_a, ref_b, sizeof(float) * W * H));
  hr_session_destroy(s1);
  hr_session_destroy(s2);
  hr_source_destroy(a);
  hr_source_destroy(b);

  /* ---- two threads: each creates its session at the same moment and runs its clip --------- *
   * at ratio 0.5, where RVM also runs its downsampling and guided-filter ops */
  ratio = 0.5f;
  run_alone(m, ap, ref_a);
  run_alone(m, bp, ref_b);
  pthread_barrier_init(&start, NULL, 2);
  worker wa = {m, ap, ref_a, 0}, wb = {m, bp, ref_b, 0};
  pthread_t ta, tb;
  CHECK(pthread_create(&ta, NULL, run_thread, &wa) == 0);
  CHECK(pthread_create(&tb, NULL, run_thread, &wb) == 0);
  pthread_join(ta, NULL);
  pthread_join(tb, NULL);
  pthread_barrier_destroy(&start);
  printf("two threads: clip A %d/%d, clip B %d/%d frames bit-identical to the clip alone\n", wa.same, N, wb.same, N);
  CHECK_EQ_INT(wa.same, N);
  CHECK_EQ_INT(wb.same, N);
  hr_model_get_memory(m, &mm3);
  CHECK_EQ_INT(mm3.n_shared_kernels, 0);
  free(ref_a); free(ref_b);
  hr_model_destroy(m);
  return hr_test_finish("test_session_multi");
}
