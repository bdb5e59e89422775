/* Allocation-failure sweep over hr_model_load and hr_session_create (SQLite's test_malloc, dav1d's
 * alloc_fail): the Nth allocation made during the call fails, for N = 1, 2, ... until the call
 * succeeds. Every failure must come back as an error status with *out NULL (or, if the library
 * copes with the missing memory, as a working handle), crash nothing and leak nothing (live
 * allocations are counted around each attempt; with HR_SANITIZE, AddressSanitizer and UBSan watch
 * every attempt too). Each attempt runs in a forked child, so one crash does not hide the next.
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
static uintptr_t cj_lo, cj_hi;          /* cJSON's code */

static int inject(void *caller) {
  if (!__atomic_load_n(&armed, __ATOMIC_RELAXED)) return 0;
  uintptr_t c = (uintptr_t)caller;
  if (c >= cj_lo && c < cj_hi) return ++n_cj_seen == fail_cj_at;
  return ++n_seen == fail_at;
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

static int find_cjson(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size; (void)data;
  if (!info->dlpi_name || !strstr(info->dlpi_name, "libcjson")) return 0;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X)) continue;
    uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
    if (!cj_lo || lo < cj_lo) cj_lo = lo;
    if (hi > cj_hi) cj_hi = hi;
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
  char msg[200];
} outcome;

typedef struct job {
  const char *path;               /* load */
  hr_model *m;                    /* create */
  const hr_session_params *p;
} job;

static void run_load(const job *j, outcome *o) {
  char err[512] = "";
  hr_model *m = (hr_model *)(uintptr_t)1;
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

static void run_create(const job *j, outcome *o) {
  hr_session *s = (hr_session *)(uintptr_t)1;
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

/* Run one failure point in a child. Returns 0, or the signal that killed the child. */
static int point(void (*fn)(const job *, outcome *), const job *j, long n, long n_cj, outcome *o) {
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
    arm(n, n_cj);
    fn(j, &r);
    r.injected = n_cj ? n_cj_seen >= n_cj : n_seen >= n;
    r.leaked = __atomic_load_n(&live, __ATOMIC_SEQ_CST) - live0;
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
static void sweep(const char *label, const char *what, void (*fn)(const job *, outcome *), const job *j, long budget,
                  long cj_budget) {
  outcome o;
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  /* N = 0: nothing fails; count the allocations */
  int sig = point(fn, j, 1L << 40, 0, &o);
  CHECKF(!sig && o.status == HR_OK, "%s %s: fails with nothing failing (%d, %s)", label, what, sig, o.msg);
  if (sig || o.status) return;
  arm(0, 0); fn(j, &o); disarm();     /* counts, in this process (same path, no injection) */
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
  job j = {path, NULL, NULL};
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

/* In a fresh process, fail the Nth allocation of the very first hr_session_create (the one that
 * initialises XNNPACK), then create again with nothing failing. Says what happens; a crash fails. */
static void first_create_probe(const char *path) {
  int broken = 0, tried = 0;
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
      _exit(st == HR_OK ? 0 : 5);
    }
    int ws = 0;
    waitpid(pid, &ws, 0);
    CHECKF(WIFEXITED(ws), "first create with allocation %ld failing: child killed by signal %d", n,
           WIFSIGNALED(ws) ? WTERMSIG(ws) : 0);
    if (!WIFEXITED(ws)) continue;
    int rc = WEXITSTATUS(ws);
    if (rc == 10) break;
    CHECKF(rc == 0 || rc == 5, "first create probe: child exit %d at allocation %ld", rc, n);
    tried++;
    if (rc == 5 && !broken++) {
      first_broken = n;
      FILE *f = fopen(errlog, "r");
      char line[512];
      while (f && fgets(line, sizeof line, f)) printf("  later create, after allocation %ld failed in the first: %s", n, line);
      if (f) fclose(f);
    }
  }
  printf("%-32s first create in a fresh process: %d failure points; after %d of them (first: allocation %ld) every "
         "later create fails too\n", "tiny", tried, broken, first_broken);
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
  dl_iterate_phdr(find_cjson, NULL);
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
  unlink(errlog);
  return hr_test_finish("test_engine_allocfail");
}
