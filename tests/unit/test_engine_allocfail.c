/* Allocation-failure sweep over hr_model_load, hr_session_create, hr_session_replan and
 * hr_session_resume (SQLite's test_malloc, dav1d's alloc_fail): the Nth allocation made during the
 * call fails, for N = 1, 2, ... until the call succeeds. Every failure must come back as an error
 * status with a message and *out NULL (or, if the library copes with the missing memory, as a
 * working handle), crash nothing and leak nothing (live allocations are counted around each
 * attempt; with HR_SANITIZE, AddressSanitizer and UBSan watch every attempt too, and
 * LeakSanitizer checks after each session call). A failed replan or resume must leave the session
 * as it was (see sweep_call). Each attempt runs in a forked child, so one crash does not hide the
 * next.
 *
 * The malloc family is defined in this binary and forwarded to the next definition (glibc's, or
 * AddressSanitizer's), so every allocation of the process passes through it: the library,
 * XNNPACK, cJSON, libc on their behalf. cJSON's own allocations (its parse tree) are counted
 * apart: on the real models they are tens of thousands, all handled by cJSON the same way (parse
 * returns NULL), so they are sampled; on tests/data/engine/tiny.json they are all swept.
 * Sweeps are exhaustive where they are cheap and strided on rvm (HR_SWEEP_FULL=1: everything). */

#include <dlfcn.h>
#include <errno.h>
#include <execinfo.h>
#include <fcntl.h>
#include <link.h>
#include <signal.h>
#include <stdint.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#endif
#include "hr_test.h"
#include "headroom.h"

/* ---- interposed allocator -------------------------------------------------------------------- */
static void *(*real_malloc)(size_t);
static void *(*real_calloc)(size_t, size_t);
static void *(*real_realloc)(void *, size_t);
static void (*real_free)(void *);
static int (*real_posix_memalign)(void **, size_t, size_t);
static void *(*real_aligned_alloc)(size_t, size_t);
static void *(*real_memalign)(size_t, size_t);

/* dlsym may allocate before the real functions are known: serve that from a static buffer. */
static _Alignas(64) char boot[1 << 16];
static size_t boot_used;
static int resolving;
static void *boot_alloc(size_t n) {
  n = (n + 63) & ~(size_t)63;
  if (boot_used + n > sizeof boot) abort();
  void *p = boot + boot_used;
  boot_used += n;
  return p;
}
static int is_boot(const void *p) { return (const char *)p >= boot && (const char *)p < boot + sizeof boot; }
static void resolve(void) {
  if (real_malloc || resolving) return;
  resolving = 1; /* until every pointer is known, all allocations come from `boot` */
  void *f = dlsym(RTLD_NEXT, "free"), *c = dlsym(RTLD_NEXT, "calloc"), *r = dlsym(RTLD_NEXT, "realloc");
  void *pm = dlsym(RTLD_NEXT, "posix_memalign"), *aa = dlsym(RTLD_NEXT, "aligned_alloc");
  void *ma = dlsym(RTLD_NEXT, "memalign"), *m = dlsym(RTLD_NEXT, "malloc");
  real_free = (void (*)(void *))f;
  real_calloc = (void *(*)(size_t, size_t))c;
  real_realloc = (void *(*)(void *, size_t))r;
  real_posix_memalign = (int (*)(void **, size_t, size_t))pm;
  real_aligned_alloc = (void *(*)(size_t, size_t))aa;
  real_memalign = (void *(*)(size_t, size_t))ma;
  resolving = 0;
  real_malloc = (void *(*)(size_t))m;
}

static int armed;                       /* count and fail only while set (one thread: threads = 1) */
static long n_seen, fail_at;            /* allocations by non-cJSON callers; fail the fail_at-th (0 = none) */
static long n_cj_seen, fail_cj_at;      /* the same for allocations made by cJSON */
static long live;                       /* allocations handed out and not freed, whole process */
typedef struct code_range { const char *lib; uintptr_t lo, hi; } code_range;
static code_range cjson_code = {"libcjson", 0, 0};     /* cJSON's code */
static code_range cpuinfo_code = {"libcpuinfo", 0, 0}; /* cpuinfo's (XNNPACK's CPU detection) */
#define cj_lo cjson_code.lo
#define cj_hi cjson_code.hi
static int failed_in_cpuinfo;           /* the allocation made to fail was cpuinfo's */

static int inject(void *caller) {
  if (!__atomic_load_n(&armed, __ATOMIC_RELAXED)) return 0;
  uintptr_t c = (uintptr_t)caller;
  if (c >= cj_lo && c < cj_hi) return ++n_cj_seen == fail_cj_at;
  if (++n_seen != fail_at) return 0;
  failed_in_cpuinfo = c >= cpuinfo_code.lo && c < cpuinfo_code.hi;
  return 1;
}
static void *track(void *p) {
  if (p) __atomic_fetch_add(&live, 1, __ATOMIC_RELAXED);
  return p;
}

static void *do_malloc(size_t n, void *caller) {
  resolve();
  if (!real_malloc) return boot_alloc(n);
  if (inject(caller)) { errno = ENOMEM; return NULL; }
  return track(real_malloc(n));
}
void *malloc(size_t n) { return do_malloc(n, __builtin_return_address(0)); }
void *calloc(size_t a, size_t b) {
  resolve();
  if (!real_malloc) { void *p = boot_alloc(a * b); memset(p, 0, a * b); return p; }
  if (inject(__builtin_return_address(0))) { errno = ENOMEM; return NULL; }
  return track(real_calloc(a, b));
}
void *realloc(void *p, size_t n) {
  resolve();
  if (!real_malloc) { void *q = boot_alloc(n); if (p) memcpy(q, p, n); return q; } /* p is from boot too */
  if (is_boot(p)) {
    size_t avail = (size_t)(boot + sizeof boot - (char *)p);
    void *q = real_malloc(n);
    if (q) { memcpy(q, p, n < avail ? n : avail); track(q); }
    return q;
  }
  if (inject(__builtin_return_address(0))) { errno = ENOMEM; return NULL; }
  void *q = real_realloc(p, n);
  if (!p && q) track(q);
  else if (p && !n && !q) __atomic_fetch_sub(&live, 1, __ATOMIC_RELAXED); /* realloc(p, 0) freed p */
  return q;
}
void free(void *p) {
  if (!p || is_boot(p)) return;
  resolve();
  __atomic_fetch_sub(&live, 1, __ATOMIC_RELAXED);
  real_free(p);
}
int posix_memalign(void **out, size_t a, size_t n) {
  resolve();
  if (!real_malloc) { *out = boot_alloc(n); return 0; } /* boot is 64-byte aligned */
  if (inject(__builtin_return_address(0))) return ENOMEM;
  int r = real_posix_memalign(out, a, n);
  if (!r) track(*out);
  return r;
}
void *aligned_alloc(size_t a, size_t n) {
  resolve();
  if (!real_malloc) return boot_alloc(n);
  if (inject(__builtin_return_address(0))) { errno = ENOMEM; return NULL; }
  return track(real_aligned_alloc(a, n));
}
void *memalign(size_t a, size_t n) {
  resolve();
  if (!real_malloc) return boot_alloc(n);
  if (inject(__builtin_return_address(0))) { errno = ENOMEM; return NULL; }
  return track(real_memalign(a, n));
}
/* AddressSanitizer intercepts strdup with its own allocator: route it through the sweep. */
char *strdup(const char *s) {
  size_t n = strlen(s) + 1;
  char *d = do_malloc(n, __builtin_return_address(0));
  if (d) memcpy(d, s, n);
  return d;
}
char *strndup(const char *s, size_t max) {
  size_t n = strnlen(s, max);
  char *d = do_malloc(n + 1, __builtin_return_address(0));
  if (d) { memcpy(d, s, n); d[n] = 0; }
  return d;
}

/* dl_iterate_phdr callback: the executable code of the shared library named in the code_range. */
static int find_code(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size;
  code_range *r = data;
  if (!info->dlpi_name || !strstr(info->dlpi_name, r->lib)) return 0;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X)) continue;
    uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
    if (!r->lo || lo < r->lo) r->lo = lo;
    if (hi > r->hi) r->hi = hi;
  }
  return 1;
}

static void arm(long n, long n_cj) {
  n_seen = n_cj_seen = 0; fail_at = n; fail_cj_at = n_cj;
  __atomic_store_n(&armed, 1, __ATOMIC_SEQ_CST);
}
static void disarm(void) { __atomic_store_n(&armed, 0, __ATOMIC_SEQ_CST); }

/* ---- the sweeps ------------------------------------------------------------------------------
 * Each failure point runs in a forked child, so that a crash is reported with its N and the sweep
 * goes on. The child sends back what happened; its stderr (the library's messages, a sanitizer
 * report) goes to a file that is shown for the first crash of each sweep. */
static int full_sweep;
static char errlog[256];

/* Next N to try: every N while few, then strided so that about `budget` points cover the range,
 * always including the last 20 before `total`. */
static long next_n(long n, long total, long budget) {
  if (full_sweep || total <= budget || n < budget / 4 || n >= total - 20) return n + 1;
  long step = (total - budget / 4) / (budget - budget / 4 - 20);
  if (step < 1) step = 1;
  long nx = n + step;
  return nx >= total - 20 ? total - 20 : nx;
}

typedef struct outcome {
  int injected;       /* the Nth allocation happened (and failed) */
  int status;         /* hr_status of the call */
  int out_null;       /* *out was NULL after the call */
  int empty_msg;      /* load: no error message */
  int push_status;    /* create that coped: status of one pushed frame */
  long leaked;        /* live allocations after the handle (if any) was destroyed, minus before */
  long inherited;     /* session calls: allocations made in the parent that the child freed */
  long n_calls;       /* session calls: allocations the swept call made (failed one included) */
  char msg[512];
  char problem[1024]; /* session calls: the first expectation that did not hold ("" = none) */
} outcome;

typedef struct call_job call_job;
typedef struct job {
  const char *path;               /* load */
  hr_model *m;                    /* create */
  const hr_session_params *p;
  const call_job *call;           /* session calls */
} job;

static void run_load(const job *j, long n, long n_cj, outcome *o) {
  char err[512] = "";
  hr_model *m = (hr_model *)(uintptr_t)1;
  arm(n, n_cj);
  hr_status st = hr_model_load(j->path, &m, err, sizeof err);
  disarm();
  o->status = st;
  o->out_null = m == NULL;
  o->empty_msg = st && !err[0];
  snprintf(o->msg, sizeof o->msg, "%s", err);
  if (st == HR_OK) {
    hr_model_info mi;
    hr_model_get_info(m, &mi);
    if (!mi.name) { o->status = -9999; snprintf(o->msg, sizeof o->msg, "loaded, but hr_model_info.name is NULL"); }
    hr_model_destroy(m);
  }
}

static void run_create(const job *j, long n, long n_cj, outcome *o) {
  hr_session *s = (hr_session *)(uintptr_t)1;
  arm(n, n_cj);
  hr_status st = hr_session_create(j->m, j->p, &s);
  disarm();
  o->status = st;
  o->out_null = s == NULL;
  if (st == HR_OK) {
    hr_plan_info pi;
    hr_session_get_plan(s, &pi);
    size_t n = (size_t)pi.width * pi.height * 3;
    float *img = malloc(n * sizeof(float));
    for (size_t i = 0; i < n; i++) img[i] = (float)(i % 251) / 251.f;
    hr_frame f = {.fmt = HR_PIX_RGBF32, .width = pi.width, .height = pi.height, .planes = {img},
                  .strides = {(ptrdiff_t)pi.width * 12}};
    hr_outputs out;
    o->push_status = hr_session_push(s, &f, &out);
    if (o->push_status) snprintf(o->msg, sizeof o->msg, "%s", hr_session_last_error(s));
    free(img);
    hr_session_destroy(s);
  }
}

/* In a child: on a crash, write the raw backtrace to stderr (the error log) and die of the signal.
 * (Under AddressSanitizer its own report does that.) */
#if !defined(__SANITIZE_ADDRESS__)
static void crash_handler(int sig) {
  void *bt[32];
  int n = backtrace(bt, 32);
  backtrace_symbols_fd(bt, n, 2);
  signal(sig, SIG_DFL);
  raise(sig);
}
#endif
static void child_setup(void) {
  int e = open(errlog, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (e >= 0) dup2(e, 2);
#if !defined(__SANITIZE_ADDRESS__)
  signal(SIGSEGV, crash_handler);
  signal(SIGBUS, crash_handler);
#endif
}

/* Run one failure point in a child: fn arms the failure (n, or n_cj for cJSON) around the call it
 * sweeps. Returns 0, or the signal that killed the child (1000 + exit status for a bad exit). */
typedef void (*point_fn)(const job *, long n, long n_cj, outcome *);
static int point(point_fn fn, const job *j, long n, long n_cj, outcome *o) {
  int fd[2];
  if (pipe(fd)) abort();
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    close(fd[0]);
    child_setup();
    outcome r;
    memset(&r, 0, sizeof r);
    long live0 = __atomic_load_n(&live, __ATOMIC_SEQ_CST);
    fn(j, n, n_cj, &r);
    disarm();
    r.injected = n_cj ? n_cj_seen >= n_cj : n_seen >= n;
    r.leaked = __atomic_load_n(&live, __ATOMIC_SEQ_CST) - live0 + r.inherited;
    if (write(fd[1], &r, sizeof r) != (ssize_t)sizeof r) _exit(2);
    _exit(0);
  }
  close(fd[1]);
  memset(o, 0, sizeof *o);
  ssize_t got = read(fd[0], o, sizeof *o);
  close(fd[0]);
  int ws = 0;
  waitpid(pid, &ws, 0);
  if (WIFSIGNALED(ws)) return WTERMSIG(ws);
  if (got != (ssize_t)sizeof *o || WEXITSTATUS(ws)) return 1000 + WEXITSTATUS(ws); /* e.g. a sanitizer exit */
  return 0;
}

static void show_errlog(void) {
  FILE *f = fopen(errlog, "r");
  char line[512];
  int k = 0;
  while (f && fgets(line, sizeof line, f) && k++ < 40) fprintf(stderr, "    | %s", line);
  if (f) fclose(f);
}

typedef struct tally { long points, errors, coped, empty_msg, crashes, leaks; } tally;

/* Sweep N over fn's library allocations (pass 0), then over cJSON's (pass 1, cj_budget points). */
static void sweep(const char *label, const char *what, point_fn fn, const job *j, long budget,
                  long cj_budget) {
  outcome o;
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  /* N = 0: nothing fails; count the allocations */
  int sig = point(fn, j, 1L << 40, 0, &o);
  CHECKF(!sig && o.status == HR_OK, "%s %s: fails with nothing failing (%d, %s)", label, what, sig, o.msg);
  if (sig || o.status) return;
  fn(j, 0, 0, &o); disarm();          /* counts, in this process (same path, no injection) */
  long total = n_seen, total_cj = n_cj_seen;
  tally t = {0};
  for (int pass = 0; pass < 2; pass++) {
    long tot = pass ? total_cj : total, bud = pass ? cj_budget : budget;
    if (!bud || (pass && !cj_lo)) continue;
    for (long n = 1; n <= tot + 1; n = next_n(n, tot + 1, bud)) {
      sig = point(fn, j, pass ? 0 : n, pass ? n : 0, &o);
      const char *which = pass ? "cJSON allocation" : "allocation";
      if (sig) {
        t.crashes++;
        CHECKF(0, "%s %s with %s %ld failing: %s %d", label, what, which, n, sig < 1000 ? "killed by signal" : "exit",
               sig < 1000 ? sig : sig - 1000);
        if (t.crashes == 1) show_errlog();
        continue;
      }
      if (!o.injected) { /* fewer than n allocations: must have succeeded */
        CHECKF(o.status == HR_OK, "%s %s: fails (%s) with no allocation failing", label, what, hr_status_name(o.status));
        break;
      }
      t.points++;
      if (o.status == -9999) {
        CHECKF(0, "%s %s with %s %ld failing: reports success but %s", label, what, which, n, o.msg);
        o.status = HR_OK;
      }
      if (o.status == HR_OK) {
        t.coped++;
        CHECKF(o.push_status == HR_OK, "%s %s with %s %ld failing: a session came back but cannot run a frame: %s",
               label, what, which, n, o.msg);
      } else {
        t.errors++;
        CHECKF(o.out_null, "%s %s with %s %ld failing: %s but *out is not NULL", label, what, which, n,
               hr_status_name(o.status));
        t.empty_msg += o.empty_msg;
        CHECKF(!o.empty_msg, "%s %s with %s %ld failing: %s without an error message", label, what, which, n,
               hr_status_name(o.status));
      }
      if (o.leaked) {
        t.leaks++;
        CHECKF(0, "%s %s with %s %ld failing: %s, %ld allocation(s) leaked", label, what, which, n,
               hr_status_name(o.status), o.leaked);
      }
    }
  }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  printf("%-32s %-6s %5ld allocations (+%6ld by cJSON): %4ld failure points, %ld errors (%ld without a message), "
         "%ld coped with, %ld crashes, %ld leaks (%.1f s)\n", label, what, total, total_cj, t.points, t.errors,
         t.empty_msg, t.coped, t.crashes, t.leaks, (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
}

static void sweep_model(const char *label, const char *path, int w, int h, float ratio, hr_backend be, int threads,
                        long load_budget, long cj_budget, long create_budget) {
  job j = {.path = path};
  if (load_budget) sweep(label, "load", run_load, &j, load_budget, cj_budget);
  char err[512];
  hr_model *m = NULL;
  if (hr_model_load(path, &m, err, sizeof err)) { CHECKF(0, "%s: %s", label, err); return; }
  hr_session_params p;
  hr_session_params_default(&p);
  p.width = w; p.height = h; p.downsample_ratio = ratio; p.backend = be; p.threads = threads;
  j.m = m; j.p = &p;
  sweep(label, "create", run_create, &j, create_budget, 0);
  hr_model_destroy(m);
}

/* ---- session calls: replan, suspend -> resume --------------------------------------------------
 * The session is made in the parent (two frames pushed, so its recurrent state is not zero), and
 * each failure point's child works on its own copy: the Nth allocation of the swept call fails.
 * A failed call must return an error with a message and leave the session as it was: after a
 * failed replan the same plan and state, and the next push gives alpha bit-identical to a session
 * that never had the call; after a failed resume the session stays suspended (push: HR_EMISUSE).
 * Then the call is retried with nothing failing, and the next push must match a session that had
 * the call succeed. Expected outputs come from such reference sessions run in the parent. */
typedef enum call_kind { CALL_REPLAN, CALL_RESUME, CALL_RESUME_AGAIN } call_kind;

struct call_job {
  const char *label;
  call_kind kind;
  hr_session *s;               /* the parent's session, frames 0 and 1 pushed */
  long session_allocs;         /* live allocations it holds (the child frees them with it) */
  int w, h;                    /* the call's arguments */
  float ratio;
  long pre_fail;               /* CALL_RESUME_AGAIN: the allocation that fails in the first resume */
  hr_frame f_old, f_new;       /* frame 2, as pushed to the old plan and to the new one */
  float *alpha_kept;           /* replan: frame 2's alpha when no replan was made */
  float *alpha_new;            /* frame 2's alpha after the call succeeded */
  float *alpha_retry;          /* replan: frame 2's alpha when frame 2 went to the old plan first (after the
                                  failed call), then the replan succeeded: the state is carried over */
  size_t n_kept, n_new;        /* floats in them */
  uint32_t ev_kept, ev_new;    /* frame 2's events in those two cases */
};

/* A test frame: RGB24, a smooth background with a bright disc that moves with t. */
static uint8_t *make_frame(int w, int h, int t, hr_frame *f) {
  uint8_t *px = malloc((size_t)w * h * 3);
  if (!px) abort();
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++) {
      uint8_t *p = px + ((size_t)y * w + x) * 3;
      int dx = x - w / 3 - t * w / 10, dy = y - h / 2;
      int in = dx * dx + dy * dy < (h / 4) * (h / 4);
      p[0] = (uint8_t)(in ? 230 : 40 + 120 * x / w);
      p[1] = (uint8_t)(in ? 200 : 60 + 100 * y / h);
      p[2] = (uint8_t)(in ? 170 : 90 + (x * y) % 37);
    }
  hr_frame fr = {.fmt = HR_PIX_RGB24, .width = w, .height = h, .planes = {px}, .strides = {(ptrdiff_t)w * 3},
                 .ts_ns = (int64_t)t * 33000000};
  *f = fr;
  return px;
}

static uint64_t fnv(const void *p, size_t n) {
  const unsigned char *b = p;
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 1099511628211ull;
  return h;
}

static uint64_t state_hash(const hr_session *s) {
  const float *ptrs[8];
  size_t lens[8];
  int n = hr_session_state_views(s, ptrs, lens, 8);
  uint64_t h = (uint64_t)n;
  for (int k = 0; k < n; k++) h ^= fnv(ptrs[k], lens[k] * 4) + (uint64_t)k;
  return h;
}

/* Push f and compare its alpha with want (n floats) and its events with ev; "" when they match. */
static void push_expect(hr_session *s, const hr_frame *f, const float *want, size_t n, uint32_t ev, const char *when,
                        char *problem, size_t len) {
  hr_outputs out;
  hr_status st = hr_session_push(s, f, &out);
  if (st) { snprintf(problem, len, "%s: push fails: %s (%s)", when, hr_status_name(st), hr_session_last_error(s)); return; }
  if ((size_t)out.width * out.height != n) { snprintf(problem, len, "%s: alpha is %dx%d", when, out.width, out.height); return; }
  if (memcmp(out.alpha, want, n * sizeof(float))) {
    size_t i = 0;
    while (i < n && out.alpha[i] == want[i]) i++;
    snprintf(problem, len, "%s: alpha differs from the reference session's (first at %zu: %g vs %g)", when, i,
             (double)out.alpha[i], (double)want[i]);
    return;
  }
  if (out.events != ev) snprintf(problem, len, "%s: events 0x%x, the reference session's 0x%x", when, out.events, ev);
}

#define PROBLEM(...) do { if (!o->problem[0]) snprintf(o->problem, sizeof o->problem, __VA_ARGS__); } while (0)

static hr_status do_call(const call_job *c, hr_session *s) {
  return c->kind == CALL_REPLAN ? hr_session_replan(s, c->w, c->h, c->ratio) : hr_session_resume(s, c->w, c->h, c->ratio);
}

static void run_call(const job *j, long n, long n_cj, outcome *o) {
  (void)n_cj;
  const call_job *c = j->call;
  hr_session *s = c->s;
  o->inherited = c->session_allocs;
  if (c->kind != CALL_REPLAN) {
    arm(1, 0); /* suspend only frees: its first allocation, if it made one, would fail */
    hr_status st = hr_session_suspend(s);
    disarm();
    if (st || n_seen) PROBLEM("suspend: %s after %ld allocation(s)", hr_status_name(st), n_seen);
    if (!hr_session_is_suspended(s)) PROBLEM("suspend: the session does not say it is suspended");
  }
  if (c->kind == CALL_RESUME_AGAIN) {
    arm(c->pre_fail, 0);
    hr_status st = do_call(c, s);
    disarm();
    if (!st) PROBLEM("the first resume, with allocation %ld failing, succeeds", c->pre_fail);
    else if (!strstr(hr_session_last_error(s), "suspended"))
      PROBLEM("the first resume failed (%s) but its message does not say the session stays suspended", hr_session_last_error(s));
  }
  uint64_t h0 = state_hash(s);
  hr_plan_info p0;
  hr_session_get_plan(s, &p0);
  arm(n, 0);
  hr_status st = do_call(c, s);
  disarm();
  o->n_calls = n_seen;
  o->status = st;
  snprintf(o->msg, sizeof o->msg, "%s", hr_session_last_error(s));
  if (st) {
    if (n_seen < n) PROBLEM("fails (%s: %s) with no allocation failing", hr_status_name(st), o->msg);
    if (!o->msg[0] || o->msg[0] == ';') PROBLEM("%s without a message naming what failed (\"%s\")", hr_status_name(st), o->msg);
    if (c->kind == CALL_REPLAN) {
      hr_plan_info p1;
      hr_session_get_plan(s, &p1);
      if (memcmp(&p0, &p1, sizeof p0)) PROBLEM("failed replan (%s): the plan changed", o->msg);
      if (state_hash(s) != h0) PROBLEM("failed replan (%s): the state changed", o->msg);
      char pb[300] = "";
      push_expect(s, &c->f_old, c->alpha_kept, c->n_kept, c->ev_kept, "the push after a failed replan", pb, sizeof pb);
      if (pb[0]) PROBLEM("%s", pb);
    } else {
      if (!hr_session_is_suspended(s)) PROBLEM("failed resume (%s): the session does not say it is suspended", o->msg);
      hr_outputs out;
      hr_status ps = hr_session_push(s, &c->f_old, &out);
      if (ps != HR_EMISUSE || !hr_session_last_error(s)[0])
        PROBLEM("the push after a failed resume returns %s (\"%s\"), not HR_EMISUSE with a message", hr_status_name(ps),
                hr_session_last_error(s));
    }
    hr_status rs = do_call(c, s); /* the retry, nothing failing */
    if (rs) PROBLEM("the retry after a failed call fails: %s (%s)", hr_status_name(rs), hr_session_last_error(s));
  }
  char pb[300] = "";
  push_expect(s, &c->f_new, st && c->alpha_retry ? c->alpha_retry : c->alpha_new, c->n_new, c->ev_new,
              st ? "the push after the retry" : "the push after the call", pb, sizeof pb);
  if (pb[0]) PROBLEM("%s", pb);
#if defined(__SANITIZE_ADDRESS__)
  hr_session_destroy(s);
  if (__lsan_do_recoverable_leak_check()) PROBLEM("LeakSanitizer reports a leak (see its report)");
#else
  hr_session_destroy(s);
#endif
}

/* Frames 0, 1 pushed to a new session; its live allocations counted into *allocs if non-NULL. */
static hr_session *session_with_history(hr_model *m, const hr_session_params *p, const hr_frame f[2], long *allocs) {
  long live0 = __atomic_load_n(&live, __ATOMIC_SEQ_CST);
  hr_session *s = NULL;
  hr_status st = hr_session_create(m, p, &s);
  CHECKF(st == HR_OK, "create: %s", hr_status_name(st));
  if (st) return NULL;
  hr_outputs out;
  for (int i = 0; i < 2; i++) CHECKF(hr_session_push(s, &f[i], &out) == HR_OK, "push: %s", hr_session_last_error(s));
  if (allocs) *allocs = __atomic_load_n(&live, __ATOMIC_SEQ_CST) - live0;
  return s;
}

static float *alpha_copy(hr_session *s, const hr_frame *f, size_t *n, uint32_t *ev) {
  hr_outputs out;
  hr_status st = hr_session_push(s, f, &out);
  CHECKF(st == HR_OK, "reference push: %s", hr_session_last_error(s));
  if (st) return NULL;
  *n = (size_t)out.width * out.height;
  *ev = out.events;
  float *a = malloc(*n * sizeof(float));
  memcpy(a, out.alpha, *n * sizeof(float));
  return a;
}

/* One call's sweep: N = 1, 2, ... up to the allocation count of a call with nothing failing, plus
 * one (which must succeed without an injection); strided past `budget` points unless HR_SWEEP_FULL.
 * shared: another session already holds the new plan's kernels (the call clones them from the
 * model's kernel cache); else the call builds them and the retry after a failure builds them again. */
typedef struct call_spec {
  const char *label;
  call_kind kind;
  int frame_w, frame_h;        /* frames pushed before the call (the declared size, if params declare one) */
  int w, h;                    /* the call's arguments */
  float ratio;
  int shared;
} call_spec;

static void sweep_call(hr_model *m, const hr_session_params *p, const call_spec *cs, long budget) {
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  call_job c = {.label = cs->label, .kind = cs->kind, .w = cs->w, .h = cs->h, .ratio = cs->ratio};
  int fw = cs->frame_w, fh = cs->frame_h;
  int fw2 = p->frame_width ? fw : cs->w ? cs->w : fw, fh2 = p->frame_height ? fh : cs->h ? cs->h : fh; /* after the call */
  hr_frame f[2];
  uint8_t *px[4];
  for (int i = 0; i < 2; i++) px[i] = make_frame(fw, fh, i, &f[i]);
  px[2] = make_frame(fw, fh, 2, &c.f_old);
  px[3] = make_frame(fw2, fh2, 2, &c.f_new);
  /* the references: a session that never had the call, and one that had it succeed */
  hr_session *r = session_with_history(m, p, f, NULL);
  if (r) {
    c.alpha_kept = alpha_copy(r, &c.f_old, &c.n_kept, &c.ev_kept);
    hr_session_destroy(r);
  }
  r = session_with_history(m, p, f, NULL);
  if (r) {
    hr_status st = cs->kind == CALL_REPLAN ? hr_session_replan(r, cs->w, cs->h, cs->ratio) : hr_session_suspend(r);
    if (!st && cs->kind != CALL_REPLAN) st = hr_session_resume(r, cs->w, cs->h, cs->ratio);
    CHECKF(st == HR_OK, "%s: the reference call fails: %s", cs->label, hr_session_last_error(r));
    c.alpha_new = alpha_copy(r, &c.f_new, &c.n_new, &c.ev_new);
    /* shared: r stays, holding the new plan's kernels; else each child's call builds them */
    if (!cs->shared) { hr_session_destroy(r); r = NULL; }
  }
  if (cs->kind == CALL_REPLAN) { /* the retry's reference: frame 2 on the old plan, then the replan */
    hr_session *q = session_with_history(m, p, f, NULL);
    if (q) {
      size_t nq;
      uint32_t evq;
      free(alpha_copy(q, &c.f_old, &nq, &evq));
      hr_status st = hr_session_replan(q, cs->w, cs->h, cs->ratio);
      CHECKF(st == HR_OK, "%s: the reference call fails: %s", cs->label, hr_session_last_error(q));
      if (!st) c.alpha_retry = alpha_copy(q, &c.f_new, &nq, &evq);
      hr_session_destroy(q);
    }
  }
  c.s = session_with_history(m, p, f, &c.session_allocs);
  job j = {.call = &c};
  tally t = {0};
  outcome o;
  long total = -1;
  if (c.s && c.alpha_kept && c.alpha_new) {
    /* nothing failing: the call's allocation count (and, for a resume after a failed one, the
     * allocation that fails in the first resume: halfway, inside the kernels) */
    if (cs->kind == CALL_RESUME_AGAIN) {
      c.kind = CALL_RESUME;
      int sig = point(run_call, &j, 1L << 40, 0, &o);
      c.kind = CALL_RESUME_AGAIN;
      c.pre_fail = sig ? 1 : o.n_calls / 2;
    }
    int sig = point(run_call, &j, 1L << 40, 0, &o);
    CHECKF(!sig && !o.problem[0] && o.status == HR_OK && !o.leaked, "%s with nothing failing: %s %d, %s (%s)", cs->label,
           sig ? "signal/exit" : "status", sig ? sig : o.status, o.problem, o.msg);
    if (!sig && !o.problem[0] && o.status == HR_OK) total = o.n_calls;
  }
  for (long n = 1; total >= 0 && n <= total + 1; n = next_n(n, total + 1, budget)) {
    int sig = point(run_call, &j, n, 0, &o);
    if (sig) {
      t.crashes++;
      CHECKF(0, "%s with allocation %ld failing: %s %d", cs->label, n, sig < 1000 ? "killed by signal" : "exit",
             sig < 1000 ? sig : sig - 1000);
      if (t.crashes == 1) show_errlog();
      continue;
    }
    CHECKF(!o.problem[0], "%s with allocation %ld failing: %s", cs->label, n, o.problem);
    if (o.leaked) {
      t.leaks++;
      CHECKF(0, "%s with allocation %ld failing: %s, %ld allocation(s) leaked", cs->label, n, hr_status_name(o.status),
             o.leaked);
    }
    if (!o.injected) {
      CHECKF(n == total + 1, "%s: succeeds after %ld allocations, %ld with nothing failing", cs->label, o.n_calls, total);
      break;
    }
    t.points++;
    if (o.status) t.errors++; else t.coped++;
    t.empty_msg += o.status && (!o.msg[0] || o.msg[0] == ';');
  }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  printf("%-44s %5ld allocations: %4ld failure points, %ld errors (%ld without a message), %ld coped with, %ld crashes, "
         "%ld leaks (%.1f s)\n", cs->label, total, t.points, t.errors, t.empty_msg, t.coped, t.crashes, t.leaks,
         (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
  hr_session_destroy(c.s);
  hr_session_destroy(r);
  free(c.alpha_kept);
  free(c.alpha_new);
  free(c.alpha_retry);
  for (int i = 0; i < 4; i++) free(px[i]);
}

static void sweep_calls(const char *path, long budget) {
  char err[512];
  hr_model *m = NULL;
  if (hr_model_load(path, &m, err, sizeof err)) { CHECKF(0, "%s", err); return; }
  hr_session_params p;
  hr_session_params_default(&p);
  p.width = 96; p.height = 64; p.downsample_ratio = 1.f; p.threads = 1;
  static const call_spec in_place[] = {
    {"rvm 96x64 replan ratio 1 -> 0.5", CALL_REPLAN, 96, 64, 96, 64, 0.5f, 0},
    {"rvm 96x64 replan ratio 1 -> 0.5, shared", CALL_REPLAN, 96, 64, 96, 64, 0.5f, 1},
    {"rvm 96x64 replan -> 64x64", CALL_REPLAN, 96, 64, 64, 64, 1.f, 0},
    {"rvm 96x64 suspend -> resume", CALL_RESUME, 96, 64, 0, 0, 0, 0},
    {"rvm 96x64 resume after a failed resume", CALL_RESUME_AGAIN, 96, 64, 0, 0, 0, 0},
  };
  for (size_t i = 0; i < sizeof in_place / sizeof in_place[0]; i++) sweep_call(m, &p, &in_place[i], budget);
  /* frames of another size declared: the plan brings the input buffer and the resampling tables */
  p.frame_width = 160; p.frame_height = 90;
  static const call_spec declared = {"rvm 160x90 frames, replan 96x64 -> 64x64", CALL_REPLAN, 160, 90, 64, 64, 1.f, 0};
  sweep_call(m, &p, &declared, budget);
  hr_model_destroy(m);
}

/* In a fresh process, fail the Nth allocation of the very first hr_session_create (the one that
 * initialises XNNPACK), then create again with nothing failing: it must work. A crash fails, and so
 * does a later create that fails too, with one exception, counted and shown: an allocation made by
 * cpuinfo (XNNPACK's CPU detection, a shared library of its own). cpuinfo initialises once per
 * process (pthread_once) and a failed initialisation is final, so XNNPACK cannot be initialised in
 * that process again; no library above it can retry that. */
static void first_create_probe(const char *path) {
  int broken = 0, tried = 0, in_cpuinfo = 0;
  long first_broken = 0;
  for (long n = 1; n < 1000; n++) {
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
      child_setup();
      char err[512];
      hr_model *m = NULL;
      if (hr_model_load(path, &m, err, sizeof err)) _exit(3);
      hr_session_params p;
      hr_session_params_default(&p);
      p.width = 16; p.height = 16; p.threads = 1;
      hr_session *s = NULL;
      arm(n, 0);
      hr_status st = hr_session_create(m, &p, &s);
      disarm();
      if (n_seen < n) _exit(st == HR_OK ? 10 : 4); /* no injection: done */
      hr_session_destroy(s);
      st = hr_session_create(m, &p, &s);
      if (st) fprintf(stderr, "\nLATER: %s\n", s ? hr_session_last_error(s) : hr_status_name(st));
      hr_session_destroy(s);
      hr_model_destroy(m);
      _exit(st == HR_OK ? 0 : failed_in_cpuinfo ? 6 : 5);
    }
    int ws = 0;
    waitpid(pid, &ws, 0);
    CHECKF(WIFEXITED(ws), "first create with allocation %ld failing: child killed by signal %d", n,
           WIFSIGNALED(ws) ? WTERMSIG(ws) : 0);
    if (!WIFEXITED(ws)) continue;
    int rc = WEXITSTATUS(ws);
    if (rc == 10) break;
    CHECKF(rc == 0 || rc == 5 || rc == 6, "first create probe: child exit %d at allocation %ld", rc, n);
    CHECKF(rc != 5, "first create in a fresh process with allocation %ld failing: every later create fails too", n);
    tried++;
    in_cpuinfo += rc == 6;
    if ((rc == 5 || rc == 6) && !broken++) {
      first_broken = n;
      FILE *f = fopen(errlog, "r");
      char line[512];
      while (f && fgets(line, sizeof line, f)) printf("  later create, after allocation %ld failed in the first: %s", n, line);
      if (f) fclose(f);
    }
  }
  printf("%-32s first create in a fresh process: %d failure points; after %d of them (first: allocation %ld) every "
         "later create fails too, %d of them allocations of cpuinfo's one-time initialisation (final by its design)\n",
         "tiny", tried, broken, first_broken, in_cpuinfo);
  if (!cpuinfo_code.lo) printf("note: libcpuinfo not found as a shared object: a failure in it fails the test\n");
}

int main(void) {
  char tiny[1024], meet[1024], rvm[1024];
  const char *src = getenv("HR_SRC_DIR");
  if (!src || !hr_test_path("HR_MODEL_DIR", "rvm.json", rvm, sizeof rvm)) SKIP("HR_SRC_DIR / HR_MODEL_DIR not set");
  snprintf(tiny, sizeof tiny, "%s/tests/data/engine/tiny.json", src);
  hr_test_path("HR_MODEL_DIR", "meet.json", meet, sizeof meet);
  FILE *f = fopen(rvm, "rb");
  if (!f) SKIP("%s missing (scripts/fetch-models.sh)", rvm);
  fclose(f);
  full_sweep = getenv("HR_SWEEP_FULL") && atoi(getenv("HR_SWEEP_FULL"));
  resolve();
  dl_iterate_phdr(find_code, &cjson_code);
  dl_iterate_phdr(find_code, &cpuinfo_code);
  snprintf(errlog, sizeof errlog, "/tmp/hr_allocfail_%d.log", (int)getpid());
  first_create_probe(tiny); /* first: XNNPACK must not be initialised yet in this process */
  if (!cj_lo) printf("note: libcjson not found as a shared object; its allocations are swept with the library's\n");

  /* Warm-up: XNNPACK's one-time initialisation, stdio, locale: nothing to sweep there. */
  {
    char err[512];
    hr_model *m = NULL;
    CHECK(hr_model_load(tiny, &m, err, sizeof err) == HR_OK);
    hr_session_params p; hr_session_params_default(&p); p.width = 8; p.height = 8; p.threads = 1;
    hr_session *s = NULL;
    CHECK(m && hr_session_create(m, &p, &s) == HR_OK);
    hr_session_destroy(s);
    hr_model_destroy(m);
  }
  sweep_model("tiny 33x17 xnnpack", tiny, 33, 17, 0, HR_BACKEND_XNNPACK, 1, 1000000, 1000000, 1000000);
  sweep_model("tiny 33x17 reference", tiny, 33, 17, 0, HR_BACKEND_REFERENCE, 1, 0, 0, 1000000);
#if !defined(__SANITIZE_ADDRESS__) /* ASan's own thread start cannot take a failed allocation in pthread_create */
  sweep_model("tiny 16x16 xnnpack 2 threads", tiny, 16, 16, 0, HR_BACKEND_XNNPACK, 2, 0, 0, 1000000);
#endif
  sweep_model("meet 256x144 xnnpack", meet, 0, 0, 0, HR_BACKEND_XNNPACK, 1, 400, 40, 1000000);
  sweep_model("rvm 64x64 ratio 1 xnnpack", rvm, 64, 64, 1.f, HR_BACKEND_XNNPACK, 1, 300, 30, 400);
  sweep_model("rvm 96x64 ratio 0.5 reference", rvm, 96, 64, 0.5f, HR_BACKEND_REFERENCE, 1, 0, 0, 200);
  sweep_calls(rvm, 60);
  unlink(errlog);
  return hr_test_finish("test_engine_allocfail");
}
