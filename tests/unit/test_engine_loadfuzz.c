/* Model-loader corpus replay: model JSON files mutated with a fixed seed (truncations, bytes
 * changed, spans deleted or repeated, numbers and strings swapped) must load, or fail with a
 * message, and never crash; a model that loads is also planned, and when that succeeds a session
 * is created and runs one frame, which must succeed or fail cleanly too.
 *
 * Each case runs in a forked child, so a crash is reported with its case number and the mutated
 * file is kept (its path is printed) for replay: HR_FUZZ_CASE=N runs that case alone, in-process.
 * Corpus: tests/data/engine/tiny.json (all mutators, many cases), meet.json, rvm.json. */
#include <fcntl.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "hr_test.h"
#include "headroom.h"
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
/* A model asking for terabytes must get NULL from calloc (and an error), as in production. */
const char *__asan_default_options(void) { return "allocator_may_return_null=1"; }
#endif

/* Hand-made cases (regressions of what the mutators found): in tiny.json, after `anchor`, the
 * (skip+1)-th occurrence of `from` becomes `to`. Each has its expected outcome: refused by `stage`
 * with `status` and a message, or (stage S_NONE) loaded, planned and run. A change of behaviour fails. */
enum { S_NONE, S_LOAD, S_PLAN, S_CREATE, S_PUSH };
static const char *const stage_names[] = {"none (runs)", "load", "plan", "create", "push"};
typedef struct edit { const char *name, *anchor, *from, *to; int skip; int stage; hr_status status; } edit;
static const edit regress[] = {
    {"signature output port 7 (of a 1-output op)", "", "\"Identity:0\"", "\"Identity:7\"", 0, S_LOAD, HR_ECORRUPT},
    {"signature output port -1", "", "\"Identity:0\"", "\"Identity:-1\"", 0, S_LOAD, HR_ECORRUPT},
    {"node input port 5 (of a 1-output op)", "\"name\": \"conv2\"", "\"conv1\"", "\"conv1:5\"", 0, S_LOAD, HR_ECORRUPT},
    {"node input port 99999999999", "\"name\": \"conv2\"", "\"conv1\"", "\"conv1:99999999999\"", 0, S_LOAD, HR_ECORRUPT},
    {"conv stride 0", "\"strides\"", "\"1\"", "\"0\"", 1, S_LOAD, HR_ECORRUPT},
    {"conv stride 2^32 (0 as an int)", "\"strides\"", "\"1\"", "\"4294967296\"", 2, S_LOAD, HR_ECORRUPT},
    {"conv stride -1", "\"strides\"", "\"1\"", "\"-1\"", 1, S_LOAD, HR_ECORRUPT},
    {"conv dilation 0", "\"dilations\"", "\"1\"", "\"0\"", 1, S_LOAD, HR_ECORRUPT},
    {"conv dilation 2^31", "\"dilations\"", "\"1\"", "\"2147483648\"", 2, S_LOAD, HR_ECORRUPT},
    {"weight dims whose product wraps to the shard size", "\"weightsManifest\"", "3,", "\"4611686018427387907\",", 0,
     S_LOAD, HR_ECORRUPT},
    {"graph cycle (conv2 reads itself)", "\"name\": \"conv2\"", "\"conv1\"", "\"conv2\"", 0, S_PLAN, HR_ECORRUPT},
    {"output is the input placeholder", "", "\"Identity:0\"", "\"src:0\"", 0, S_NONE, HR_OK},
    {"output is a constant", "", "\"Identity:0\"", "\"conv1/bias:0\"", 0, S_PLAN, HR_ENOTSUP},
};

typedef struct corpus {
  const char *label;
  const edit *edits;           /* hand-made cases instead of mutators */
  const char *const *names;
  char json[1024], bin_name[64], bin[1024];
  int cases;
  int w, h;          /* plan / session size */
  float ratio;
  char *text;
  size_t len;
} corpus;

static uint64_t rng_state;
static uint64_t rnd(void) { /* xorshift64* */
  rng_state ^= rng_state >> 12; rng_state ^= rng_state << 25; rng_state ^= rng_state >> 27;
  return rng_state * 2685821657736338717ull;
}
static size_t rndn(size_t n) { return n ? (size_t)(rnd() % n) : 0; }

static char *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  rewind(f);
  char *b = malloc((size_t)n + 1);
  if (fread(b, 1, (size_t)n, f) != (size_t)n) { free(b); fclose(f); return NULL; }
  fclose(f);
  b[n] = 0; *len = (size_t)n;
  return b;
}

enum { M_TRUNC, M_BYTES, M_DELETE, M_REPEAT, M_NUMBER, M_STRING, M_COUNT };
static const char *const mut_names[M_COUNT] = {"truncate", "bytes", "delete", "repeat", "number", "string"};

/* Find the k-th (mod count) occurrence of a number token / a string literal; returns its span. */
static int find_token(const char *t, size_t len, int want_string, size_t k, size_t *b, size_t *e) {
  size_t count = 0, pass_k = (size_t)-1;
  for (int pass = 0; pass < 2; pass++) {
    size_t idx = 0;
    for (size_t i = 0; i < len; i++) {
      size_t s = i, f;
      if (want_string) {
        if (t[i] != '"') continue;
        f = i + 1;
        while (f < len && t[f] != '"') f += t[f] == '\\' ? 2 : 1;
        if (f >= len) break;
        s = i + 1; i = f;                 /* content between the quotes */
      } else {
        if (!((t[i] >= '0' && t[i] <= '9') || t[i] == '-') || (i && ((t[i - 1] >= '0' && t[i - 1] <= '9') || t[i - 1] == '.')))
          continue;
        f = i + 1;
        while (f < len && ((t[f] >= '0' && t[f] <= '9') || t[f] == '.' || t[f] == 'e' || t[f] == 'E' || t[f] == '-')) f++;
        i = f - 1;
      }
      if (pass == 0) count++;
      else if (idx++ == pass_k) { *b = s; *e = f; return 1; }
    }
    if (!count) return 0;
    pass_k = k % count;
  }
  return 0;
}

/* Mutated copy of c->text for case i (deterministic in (corpus, i)). */
static char *mutate(const corpus *c, int i, size_t *out_len, int *kind) {
  if (c->edits) {
    const edit *e = &c->edits[i];
    size_t len = c->len, fl = strlen(e->from), tl = strlen(e->to);
    char *t = malloc(len + tl + 1);
    const char *at = strstr(c->text, e->anchor);
    for (int k = 0; at && k <= e->skip; k++) at = strstr(k ? at + 1 : at, e->from);
    *kind = 0;
    if (!at) { fprintf(stderr, "regression '%s': pattern not found in %s\n", e->name, c->json); exit(1); }
    size_t b = (size_t)(at - c->text);
    memcpy(t, c->text, b);
    memcpy(t + b, e->to, tl);
    memcpy(t + b + tl, at + fl, len - b - fl);
    *out_len = len - fl + tl;
    return t;
  }
  rng_state = 0x9E3779B97F4A7C15ull ^ ((uint64_t)(i + 1) * 0xD1B54A32D192ED03ull) ^ (uint64_t)c->len;
  for (int k = 0; k < 4; k++) rnd();
  int m = *kind = (int)(i % M_COUNT);
  size_t len = c->len;
  char *t = malloc(len * 2 + 64);
  memcpy(t, c->text, len);
  static const char junk[] = "{}[]:,\"0123456789-.eE \\ntruefalsenull";
  static const char *const numbers[] = {"0", "-1", "1", "2", "3", "7", "16", "4294967296", "4294967297", "-2147483649",
                                        "99999999999999999999", "1e308", "-0", "0.5", "65536", "2147483647", "\"-1\"",
                                        "\"4611686018427387904\"", "[]", "{}", "null", "\"x\""};
  size_t b, e;
  switch (m) {
    case M_TRUNC: len = rndn(len); break;
    case M_BYTES:
      for (int k = 0, n = 1 + (int)rndn(8); k < n; k++)
        t[rndn(len)] = rnd() & 1 ? junk[rndn(sizeof junk - 1)] : (char)rndn(256);
      break;
    case M_DELETE: {
      size_t at = rndn(len), n = 1 + rndn(64);
      if (at + n > len) n = len - at;
      memmove(t + at, t + at + n, len - at - n);
      len -= n;
      break;
    }
    case M_REPEAT: {
      size_t at = rndn(len), n = 1 + rndn(64);
      if (at + n > len) n = len - at;
      memmove(t + at + n, t + at, len - at);
      len += n;
      break;
    }
    case M_NUMBER:
      for (int k = 0, n = 1 + (int)rndn(3); k < n; k++)
        if (find_token(t, len, 0, rnd(), &b, &e)) {
          const char *v = numbers[rndn(sizeof numbers / sizeof numbers[0])];
          size_t vl = strlen(v);
          if (len - (e - b) + vl > c->len * 2 + 60) break;
          memmove(t + b + vl, t + e, len - e);
          memcpy(t + b, v, vl);
          len = len - (e - b) + vl;
        }
      break;
    case M_STRING:
      for (int k = 0, n = 1 + (int)rndn(2); k < n; k++) {
        size_t b2, e2;
        if (!find_token(t, len, 1, rnd(), &b, &e) || !find_token(t, len, 1, rnd(), &b2, &e2)) break;
        size_t vl = e2 - b2;
        if (len - (e - b) + vl > c->len * 2 + 60) break;
        char *v = malloc(vl + 1);
        memcpy(v, t + b2, vl);
        memmove(t + b + vl, t + e, len - e);
        memcpy(t + b, v, vl);
        free(v);
        len = len - (e - b) + vl;
      }
      break;
  }
  *out_len = len;
  return t;
}

typedef struct result { int load, plan, create, push, empty_msg; } result;

static void run_case(const corpus *c, const char *path, result *r) {
  char err[512] = "";
  hr_model *m = NULL;
  r->plan = r->create = r->push = -1;
  r->load = hr_model_load(path, &m, err, sizeof err);
  if (r->load) { r->empty_msg = !err[0]; return; }
  hr_model_info mi;
  hr_model_get_info(m, &mi);
  const char *nm;
  for (int k = 0; (nm = hr_model_op_hist(m, k, NULL)); k++) (void)nm;
  hr_session_params p;
  hr_session_params_default(&p);
  p.width = mi.fixed_width ? mi.fixed_width : c->w;
  p.height = mi.fixed_height ? mi.fixed_height : c->h;
  p.downsample_ratio = c->ratio; p.threads = 1;
  hr_plan_info pi;
  err[0] = 0;
  r->plan = hr_model_plan(m, &p, &pi, err, sizeof err);
  if (r->plan) r->empty_msg = !err[0];
  if (!r->plan) {
    hr_session *s = NULL;
    r->create = hr_session_create(m, &p, &s);
    if (!r->create) {
      size_t n = (size_t)p.width * p.height * 3;
      float *img = malloc(n * sizeof(float));
      for (size_t k = 0; k < n; k++) img[k] = (float)(k % 97) / 97.f;
      hr_frame f = {.fmt = HR_PIX_RGBF32, .width = p.width, .height = p.height, .planes = {img},
                    .strides = {(ptrdiff_t)p.width * 12}};
      hr_outputs o;
      r->push = hr_session_push(s, &f, &o);
      free(img);
    }
    hr_session_destroy(s);
  }
  hr_model_destroy(m);
}

static char tmpdir[256], errlog[300];

/* The first lines of a crashed child's stderr that matter (a sanitizer report). */
static void show_errlog(void) {
  FILE *f = fopen(errlog, "r");
  char line[512];
  int k = 0;
  while (f && fgets(line, sizeof line, f) && k < 12)
    if (strstr(line, "ERROR") || strstr(line, "runtime error") || strstr(line, "    #") || strstr(line, "SUMMARY")) {
      fprintf(stderr, "    | %s", line);
      k++;
    }
  if (f) fclose(f);
}

static void write_file(const char *path, const char *t, size_t len) {
  FILE *f = fopen(path, "wb");
  if (!f || fwrite(t, 1, len, f) != len) { perror(path); exit(1); }
  fclose(f);
}

/* Runs cases [0, c->cases) (or only `only` if >= 0). */
static void replay(corpus *c, int only) {
  char dir[512], path[1024], bin[1024];
  snprintf(dir, sizeof dir, "%s/%s", tmpdir, c->label);
  mkdir(dir, 0755);
  snprintf(bin, sizeof bin, "%s/%s", dir, c->bin_name);
  unlink(bin);
  if (symlink(c->bin, bin)) { perror(bin); exit(1); }
  snprintf(path, sizeof path, "%s/%s.json", dir, c->label);
  long loaded = 0, planned = 0, ran = 0, refused = 0, empty = 0, crashes = 0, by_kind_loaded[M_COUNT] = {0};
  for (int i = 0; i < c->cases; i++) {
    if (only >= 0 && i != only) continue;
    size_t len;
    int kind;
    char *t = mutate(c, i, &len, &kind);
    write_file(path, t, len);
    free(t);
    result r;
    memset(&r, 0, sizeof r);
    if (only >= 0) {
      run_case(c, path, &r);
      printf("%s case %d (%s): load %d plan %d create %d push %d\n", c->label, i, c->names ? c->names[i] : mut_names[kind],
             r.load, r.plan, r.create, r.push);
      continue;
    }
    int fd[2];
    if (pipe(fd)) abort();
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
      close(fd[0]);
      int lg = open(errlog, O_WRONLY | O_CREAT | O_TRUNC, 0644); /* the library reports create failures on stderr */
      if (lg >= 0) dup2(lg, 2);
      run_case(c, path, &r);
#if defined(__SANITIZE_ADDRESS__)
      if (__lsan_do_recoverable_leak_check()) _exit(3);
#endif
      if (write(fd[1], &r, sizeof r) != (ssize_t)sizeof r) _exit(2);
      _exit(0);
    }
    close(fd[1]);
    ssize_t got = read(fd[0], &r, sizeof r);
    close(fd[0]);
    int ws = 0;
    waitpid(pid, &ws, 0);
    if (!WIFEXITED(ws) || WEXITSTATUS(ws) || got != (ssize_t)sizeof r) {
      crashes++;
      char keep[1100];
      snprintf(keep, sizeof keep, "%s.case%d.json", path, i);
      rename(path, keep);
      CHECKF(0, "%s case %d (%s): %s %d%s; input kept as %s (HR_FUZZ_CORPUS=%s HR_FUZZ_CASE=%d replays it)", c->label,
             i, c->names ? c->names[i] : mut_names[kind], WIFSIGNALED(ws) ? "killed by signal" : "exit",
             WIFSIGNALED(ws) ? WTERMSIG(ws) : WEXITSTATUS(ws),
             WIFEXITED(ws) && WEXITSTATUS(ws) == 3 ? " (leak)" : "", keep, c->label, i);
      if (crashes <= 3) show_errlog();
      continue;
    }
    CHECK(1); /* one case that did not crash */
    if (c->edits) { /* a regression case: the outcome it is known to have */
      const edit *e = &c->edits[i];
      int stage = r.load ? S_LOAD : r.plan ? S_PLAN : r.create ? S_CREATE : r.push ? S_PUSH : S_NONE;
      hr_status st = stage == S_LOAD ? r.load : stage == S_PLAN ? r.plan : stage == S_CREATE ? r.create : r.push;
      char got[80], want[80];
      snprintf(got, sizeof got, stage == S_NONE ? "ran a frame" : "refused by %s with %s", stage_names[stage], hr_status_name(st));
      snprintf(want, sizeof want, e->stage == S_NONE ? "ran a frame" : "refused by %s with %s", stage_names[e->stage],
               hr_status_name(e->status));
      CHECKF(stage == e->stage && st == e->status, "regress case %d (%s): %s, expected %s", i, e->name, got, want);
      if (stage == S_LOAD || stage == S_PLAN)
        CHECKF(!r.empty_msg, "regress case %d (%s): refused by %s without a message", i, e->name, stage_names[stage]);
      printf("regress case %2d (%s): %s\n", i, e->name, got);
    }
    if (r.load == HR_OK) { loaded++; by_kind_loaded[kind]++; }
    else {
      refused++;
      if (r.empty_msg && empty++ < 5)
        printf("%s case %d (%s): refused with %s and no message\n", c->label, i, c->names ? c->names[i] : mut_names[kind],
               hr_status_name(r.load));
    }
    if (r.plan == HR_OK) planned++;
    if (r.push == HR_OK) ran++;
  }
  if (only < 0) {
    char kinds[200] = "";
    if (!c->edits)
      snprintf(kinds, sizeof kinds, " (truncate %ld, bytes %ld, delete %ld, repeat %ld, number %ld, string %ld)",
               by_kind_loaded[0], by_kind_loaded[1], by_kind_loaded[2], by_kind_loaded[3], by_kind_loaded[4],
               by_kind_loaded[5]);
    printf("%-7s %4d cases: %ld loaded%s, %ld refused (%ld without a message), %ld planned, %ld ran a frame, "
           "%ld crashed\n", c->label, c->cases, loaded, kinds, refused, empty, planned, ran, crashes);
    /* hr_model_load promises a message with every failure; HR_ENOMEM paths give none today (reported,
       not enforced here: this test is about crashes) */
    if (empty) printf("%s: %ld refusal(s) without an error message\n", c->label, empty);
  }
  unlink(path);
  unlink(bin);
  rmdir(dir);
}

int main(void) {
  const char *src = getenv("HR_SRC_DIR");
  const char *md = getenv("HR_MODEL_DIR");
  if (!src || !md) SKIP("HR_SRC_DIR / HR_MODEL_DIR not set");
  static const char *rnames[sizeof regress / sizeof regress[0]];
  for (size_t k = 0; k < sizeof regress / sizeof regress[0]; k++) rnames[k] = regress[k].name;
  corpus cs[4] = {
      {.label = "tiny", .bin_name = "tiny.bin", .cases = 600, .w = 33, .h = 17, .ratio = 0},
      {.label = "meet", .bin_name = "meet.bin", .cases = 300, .w = 256, .h = 144, .ratio = 0},
      {.label = "rvm", .bin_name = "rvm.bin", .cases = 120, .w = 64, .h = 48, .ratio = 0.5f},
      {.label = "regress", .bin_name = "tiny.bin", .cases = (int)(sizeof regress / sizeof regress[0]), .w = 33, .h = 17,
       .edits = regress, .names = rnames},
  };
  snprintf(cs[0].json, sizeof cs[0].json, "%s/tests/data/engine/tiny.json", src);
  snprintf(cs[0].bin, sizeof cs[0].bin, "%s/tests/data/engine/tiny.bin", src);
  memcpy(cs[3].json, cs[0].json, sizeof cs[0].json);
  memcpy(cs[3].bin, cs[0].bin, sizeof cs[0].bin);
  for (int k = 1; k < 3; k++) {
    snprintf(cs[k].json, sizeof cs[k].json, "%s/%s.json", md, k == 1 ? "meet" : "rvm");
    char bin_name[sizeof cs[k].bin_name];   /* another member of cs[k]: GCC's -Wrestrict cannot tell them apart */
    memcpy(bin_name, cs[k].bin_name, sizeof bin_name);
    snprintf(cs[k].bin, sizeof cs[k].bin, "%s/%s", md, bin_name);
  }
  if (!(cs[2].text = slurp(cs[2].json, &cs[2].len))) SKIP("%s missing (scripts/fetch-models.sh)", cs[2].json);
  snprintf(tmpdir, sizeof tmpdir, "%s/hr_loadfuzz.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
  if (!mkdtemp(tmpdir)) { perror("mkdtemp"); return 1; }
  snprintf(errlog, sizeof errlog, "%s/child_stderr.txt", tmpdir);
  const char *one = getenv("HR_FUZZ_CASE"), *which = getenv("HR_FUZZ_CORPUS");
  for (int k = 0; k < 4; k++) {
    if (which && strcmp(which, cs[k].label)) continue;
    if (!cs[k].text && !(cs[k].text = slurp(cs[k].json, &cs[k].len))) { CHECKF(0, "cannot read %s", cs[k].json); continue; }
    replay(&cs[k], one ? atoi(one) : -1);
    free(cs[k].text);
  }
  unlink(errlog);
  rmdir(tmpdir);
  return hr_test_finish("test_engine_loadfuzz");
}
