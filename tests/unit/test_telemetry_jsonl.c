/* Telemetry JSONL writer: schema, null encoding, escaping, bounds, I/O errors, cost and zero allocation per frame. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>
#include "headroom.h"
#include "hr_test.h"

/* Count heap allocations by interposing malloc (glibc), except under sanitizers that own malloc. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define HR_COUNT_ALLOCS 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define HR_COUNT_ALLOCS 0
#endif
#endif
#ifndef HR_COUNT_ALLOCS
#define HR_COUNT_ALLOCS 1
#endif
#if HR_COUNT_ALLOCS
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
static volatile long g_allocs;
void *malloc(size_t n) { g_allocs++; return __libc_malloc(n); }
void *calloc(size_t a, size_t b) { g_allocs++; return __libc_calloc(a, b); }
void *realloc(void *p, size_t n) { g_allocs++; return __libc_realloc(p, n); }
#endif

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static cJSON *parse_line(const char *line) {
  cJSON *j = cJSON_Parse(line);
  CHECKF(j != NULL, "unparsable line: %.200s", line);
  return j;
}

static bool is_null(cJSON *j, const char *k) {
  cJSON *v = cJSON_GetObjectItemCaseSensitive(j, k);
  return v && cJSON_IsNull(v);
}

static double num(cJSON *j, const char *k) {
  cJSON *v = cJSON_GetObjectItemCaseSensitive(j, k);
  return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static const char *str(cJSON *j, const char *k) {
  cJSON *v = cJSON_GetObjectItemCaseSensitive(j, k);
  return cJSON_IsString(v) ? v->valuestring : NULL;
}

static void fill(hr_telemetry_record *r, int64_t i) {
  hr_telemetry_record_init(r);
  r->frame = i;
  r->t_ms = i * 16.667;
  r->latency_ms = 14.25;
  r->ingest_ms = 1.001;
  r->infer_ms = 10.5;
  r->post_ms = 0.75;
  r->output_ms = 0.125;
  r->rss_bytes = 412345678;
  r->headroom_bytes = -1048576;           /* over the safe ceiling: negative, not null */
  r->ceiling_safe_bytes = 400000000;
  r->ceiling_kill_bytes = 512000000;
  r->governor_action = (i % 100 == 0) ? "step_down" : NULL;
  r->state_reset = (i % 1000 == 0);
  r->proc_w = 512;
  r->proc_h = 288;
  r->ratio = 0.375;
  r->health = "ok";
  r->confidence = 0.9321;
  r->depth_dt_ms = 3.2;
  r->depth_fused = true;
  r->dropped = i / 7;
  r->bytes_copied = 0;
}

static const char *KEYS[] = {"frame", "t_ms", "latency_ms", "ingest_ms", "infer_ms", "post_ms",
  "output_ms", "rss_bytes", "headroom_bytes", "ceiling_safe_bytes", "ceiling_kill_bytes",
  "governor_action", "state_reset", "proc_w", "proc_h", "ratio", "health", "health_reason",
  "confidence", "depth_dt_ms", "depth_fused", "dropped", "bytes_copied", "net_ms", "coef_age", "device_ms", "coef_warped", "threads", "lag_off", "lag_band"};

static void test_nulls(void) {
  hr_telemetry_record r;
  hr_telemetry_record_init(&r);
  r.frame = 7;
  char buf[HR_TELEMETRY_LINE_MAX];
  size_t n = hr_telemetry_format(&r, buf, sizeof buf);
  CHECK(n == strlen(buf));
  CHECK(n > 0 && buf[n - 1] == '\n');
  cJSON *j = parse_line(buf);
  if (!j) return;
  int nkeys = 0;
  for (cJSON *c = j->child; c; c = c->next) nkeys++;
  CHECK_EQ_INT(nkeys, (int)(sizeof KEYS / sizeof KEYS[0]));
  for (size_t i = 0; i < sizeof KEYS / sizeof KEYS[0]; i++)
    CHECKF(cJSON_GetObjectItemCaseSensitive(j, KEYS[i]) != NULL, "missing key %s", KEYS[i]);
  CHECK_EQ_INT((int64_t)num(j, "frame"), 7);
  const char *nulls[] = {"t_ms", "latency_ms", "ingest_ms", "infer_ms", "post_ms", "output_ms",
    "rss_bytes", "headroom_bytes", "ceiling_safe_bytes", "ceiling_kill_bytes", "governor_action",
    "proc_w", "proc_h", "ratio", "health", "health_reason", "confidence", "depth_dt_ms", "net_ms", "coef_age", "device_ms", "coef_warped", "threads", "lag_off", "lag_band"};
  for (size_t i = 0; i < sizeof nulls / sizeof nulls[0]; i++)
    CHECKF(is_null(j, nulls[i]), "%s should be null", nulls[i]);
  CHECK(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(j, "state_reset")));
  CHECK(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(j, "depth_fused")));
  CHECK_EQ_INT((int64_t)num(j, "dropped"), 0);
  cJSON_Delete(j);
  /* The governor's "no ceiling" headroom (INT64_MAX) is null as well. */
  r.headroom_bytes = INT64_MAX;
  hr_telemetry_format(&r, buf, sizeof buf);
  CHECK(strstr(buf, "\"headroom_bytes\":null,") != NULL);
  /* Infinity is not JSON: null too. */
  r.latency_ms = INFINITY;
  r.infer_ms = -INFINITY;
  hr_telemetry_format(&r, buf, sizeof buf);
  j = parse_line(buf);
  if (j) {
    CHECK(is_null(j, "latency_ms"));
    CHECK(is_null(j, "infer_ms"));
    cJSON_Delete(j);
  }
}

static void test_values(void) {
  hr_telemetry_record r;
  fill(&r, 100);
  r.health = "degraded";
  r.health_reason = "low confidence: 0.42 < 0.5";
  char buf[HR_TELEMETRY_LINE_MAX];
  hr_telemetry_format(&r, buf, sizeof buf);
  cJSON *j = parse_line(buf);
  if (!j) return;
  CHECK_NEAR(num(j, "t_ms"), 1666.7, 1e-9);
  CHECK_NEAR(num(j, "latency_ms"), 14.25, 1e-9);
  CHECK_NEAR(num(j, "ingest_ms"), 1.001, 1e-9);
  CHECK_NEAR(num(j, "output_ms"), 0.125, 1e-9);
  CHECK_EQ_INT((int64_t)num(j, "rss_bytes"), 412345678);
  CHECK_EQ_INT((int64_t)num(j, "headroom_bytes"), -1048576);
  CHECK_EQ_INT((int64_t)num(j, "ceiling_kill_bytes"), 512000000);
  CHECK(str(j, "governor_action") && strcmp(str(j, "governor_action"), "step_down") == 0);
  CHECK(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(j, "state_reset")));
  CHECK_EQ_INT((int64_t)num(j, "proc_w"), 512);
  CHECK_EQ_INT((int64_t)num(j, "proc_h"), 288);
  CHECK_NEAR(num(j, "ratio"), 0.375, 1e-12);
  CHECK(str(j, "health") && strcmp(str(j, "health"), "degraded") == 0);
  CHECK(str(j, "health_reason") && strcmp(str(j, "health_reason"), r.health_reason) == 0);
  CHECK_NEAR(num(j, "confidence"), 0.9321, 1e-12);
  CHECK_NEAR(num(j, "depth_dt_ms"), 3.2, 1e-12);
  CHECK(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "depth_fused")));
  CHECK_EQ_INT((int64_t)num(j, "dropped"), 14);
  cJSON_Delete(j);
  /* the lag meter's shares, 4 decimals */
  r.lag_off = 0.031249; r.lag_band = 0.0229;
  hr_telemetry_format(&r, buf, sizeof buf);
  CHECK(strstr(buf, "\"lag_off\":0.0312,\"lag_band\":0.0229}") != NULL);
  /* Rounding and signs of the fixed-point formatter. */
  struct { double v; const char *s; } cases[] = {
    {0.0, "0.000"}, {-0.0004, "0.000"}, {0.0005, "0.001"}, {-1.25, "-1.250"}, {999.9996, "1000.000"},
    {123456789.123, "123456789.123"}, {-0.5, "-0.500"}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    hr_telemetry_record_init(&r);
    r.infer_ms = cases[i].v;
    hr_telemetry_format(&r, buf, sizeof buf);
    char want[64];
    snprintf(want, sizeof want, "\"infer_ms\":%s,", cases[i].s);
    CHECKF(strstr(buf, want) != NULL, "%g: want %s in %s", cases[i].v, want, buf);
  }
  hr_telemetry_record_init(&r);
  r.t_ms = 1e300;   /* absurd but finite: exponent form, still valid JSON */
  hr_telemetry_format(&r, buf, sizeof buf);
  j = parse_line(buf);
  if (j) { CHECK_NEAR(num(j, "t_ms") / 1e300, 1.0, 1e-12); cJSON_Delete(j); }
}

static void test_escaping(void) {
  hr_telemetry_record r;
  hr_telemetry_record_init(&r);
  const char *tricky = "q\"b\\s/n\nr\rt\tc\x01" "d\x7f" "e\xc3\xa9 \xe2\x86\x92 \xf0\x9f\x98\x80 bad\xff\xc3(";
  r.governor_action = tricky;
  r.health = "lost";
  r.health_reason = "";
  char buf[HR_TELEMETRY_LINE_MAX];
  hr_telemetry_format(&r, buf, sizeof buf);
  CHECK(strchr(buf, '\n') == buf + strlen(buf) - 1);   /* the only newline ends the line */
  cJSON *j = parse_line(buf);
  if (!j) return;
  const char *want = "q\"b\\s/n\nr\rt\tc\x01" "d\x7f" "e\xc3\xa9 \xe2\x86\x92 \xf0\x9f\x98\x80 bad\xef\xbf\xbd\xef\xbf\xbd(";
  const char *got = str(j, "governor_action");
  CHECKF(got && strcmp(got, want) == 0, "escaped round trip: %s", got ? got : "(null)");
  CHECK(str(j, "health_reason") && str(j, "health_reason")[0] == 0);
  cJSON_Delete(j);

  /* Long strings are cut to HR_TELEMETRY_STR_MAX bytes at a character boundary. */
  char longs[1000];   /* 333 arrows of 3 bytes each */
  for (int i = 0; i < 999; i += 3) { longs[i] = '\xe2'; longs[i + 1] = '\x86'; longs[i + 2] = '\x92'; }
  longs[999] = 0;
  r.health_reason = longs;
  hr_telemetry_format(&r, buf, sizeof buf);
  j = parse_line(buf);
  if (j) {
    const char *s = str(j, "health_reason");
    CHECK(s && strlen(s) <= HR_TELEMETRY_STR_MAX && strlen(s) % 3 == 0 && strlen(s) >= HR_TELEMETRY_STR_MAX - 3);
    cJSON_Delete(j);
  }

  /* Worst case: three maximal strings of control bytes, extreme numbers: fits the line bound. */
  char ctl[600];
  memset(ctl, 0x01, sizeof ctl - 1);
  ctl[sizeof ctl - 1] = 0;
  r.governor_action = r.health = r.health_reason = ctl;
  r.frame = INT64_MAX;
  r.dropped = r.bytes_copied = INT64_MIN + 1;
  r.rss_bytes = r.headroom_bytes = r.ceiling_kill_bytes = r.ceiling_safe_bytes = INT64_MAX;
  r.t_ms = r.latency_ms = r.ingest_ms = r.infer_ms = r.post_ms = r.output_ms = -1.7976931348623157e308;
  r.ratio = r.confidence = r.depth_dt_ms = -1.7976931348623157e308;
  r.proc_w = r.proc_h = INT32_MAX;
  size_t n = hr_telemetry_format(&r, buf, sizeof buf);
  CHECKF(n < HR_TELEMETRY_LINE_MAX, "worst-case line %zu bytes", n);
  j = parse_line(buf);
  if (j) cJSON_Delete(j);
  /* snprintf-style truncation with a small buffer. */
  char small[32];
  size_t need = hr_telemetry_format(&r, small, sizeof small);
  CHECK(need == n);
  CHECK(strlen(small) == sizeof small - 1);
}

static void test_file(const char *dir) {
  char path[512];
  snprintf(path, sizeof path, "%s/tel_test.jsonl", dir);
  hr_telemetry *t = NULL;
  char err[256];
  CHECK(hr_telemetry_open(path, NULL, &t, err, sizeof err) == HR_OK);
  if (!t) return;
  hr_telemetry_record r;
  for (int i = 0; i < 1000; i++) {
    fill(&r, i);
    CHECK(hr_telemetry_write(t, &r) == HR_OK);
  }
  /* count is what is in the file: the 40 lines since the last flush (every 60) are not yet */
  CHECK_EQ_INT(hr_telemetry_count(t), 960);
  CHECK(hr_telemetry_flush(t) == HR_OK);
  CHECK_EQ_INT(hr_telemetry_count(t), 1000);
  CHECK(hr_telemetry_close(t) == HR_OK);
  FILE *fp = fopen(path, "r");
  CHECK(fp != NULL);
  if (fp) {
    char *line = NULL;
    size_t cap = 0;
    int n = 0, bad = 0, order = 1;
    int64_t prev = -1;
    while (getline(&line, &cap, fp) > 0) {
      cJSON *j = cJSON_Parse(line);
      if (!j) { bad++; continue; }
      int64_t f = (int64_t)num(j, "frame");
      if (f != prev + 1) order = 0;
      prev = f;
      n++;
      cJSON_Delete(j);
    }
    free(line);
    fclose(fp);
    CHECK_EQ_INT(n, 1000);
    CHECK_EQ_INT(bad, 0);
    CHECK(order);
  }
  /* Append mode adds lines. */
  hr_telemetry_params p;
  hr_telemetry_params_default(&p);
  p.append = true;
  p.flush_every = 1;
  CHECK(hr_telemetry_open(path, &p, &t, err, sizeof err) == HR_OK);
  fill(&r, 1000);
  CHECK(hr_telemetry_write(t, &r) == HR_OK);
  CHECK(hr_telemetry_close(t) == HR_OK);
  fp = fopen(path, "r");
  if (fp) {
    int c, lines = 0;
    while ((c = fgetc(fp)) != EOF) lines += c == '\n';
    fclose(fp);
    CHECK_EQ_INT(lines, 1001);
  }
  unlink(path);

  /* Errors: missing directory, NULL args, a full disk. */
  CHECK(hr_telemetry_open("/nonexistent-dir/x.jsonl", NULL, &t, err, sizeof err) == HR_EIO);
  CHECK(t == NULL);
  CHECK(strstr(err, "/nonexistent-dir/x.jsonl") != NULL);
  CHECK(hr_telemetry_open(NULL, NULL, &t, err, sizeof err) == HR_EINVAL);
  CHECK(hr_telemetry_write(NULL, &r) == HR_EINVAL);
  CHECK(hr_telemetry_close(NULL) == HR_OK);
  if (access("/dev/full", W_OK) == 0) {
    p.append = false;
    p.flush_every = 10;
    CHECK(hr_telemetry_open("/dev/full", &p, &t, err, sizeof err) == HR_OK);
    if (t) {
      int fails = 0;
      for (int i = 0; i < 30; i++) { fill(&r, i); fails += hr_telemetry_write(t, &r) == HR_EIO; }
      CHECK(fails > 0);
      CHECK(strstr(hr_telemetry_last_error(t), "No space") != NULL);
      hr_telemetry_close(t);
    }
  }
}

static void test_cost(const char *dir) {
  char path[512];
  snprintf(path, sizeof path, "%s/tel_cost.jsonl", dir);
  hr_telemetry *t = NULL;
  CHECK(hr_telemetry_open(path, NULL, &t, NULL, 0) == HR_OK);
  if (!t) return;
  hr_telemetry_record r;
  fill(&r, 0);
  hr_telemetry_write(t, &r);   /* warm up: the first write may touch lazily initialised state */
  enum { N = 100000 };
#if HR_COUNT_ALLOCS
  long a0 = g_allocs;
#endif
  double t0 = now_s();
  for (int i = 1; i <= N; i++) {
    r.frame = i;
    r.t_ms = i * 16.667;
    r.infer_ms = 10.0 + (i % 37) * 0.1;
    r.dropped = i / 7;
    r.governor_action = (i % 600 == 0) ? "step_down" : NULL;
    r.health = (i % 900 < 30) ? "degraded" : "ok";
    r.health_reason = (i % 900 < 30) ? "low confidence" : NULL;
    hr_telemetry_write(t, &r);
  }
  double dt = now_s() - t0;
#if HR_COUNT_ALLOCS
  long allocs = g_allocs - a0;
  CHECKF(allocs == 0, "%ld allocations in %d telemetry writes", allocs, N);
#endif
  CHECK(hr_telemetry_close(t) == HR_OK);
  unlink(path);
  printf("telemetry write: %.3f us per frame (format + buffered write, flush every 60)\n", dt / N * 1e6);
  CHECKF(dt / N < 50e-6, "telemetry write too slow: %.1f us", dt / N * 1e6);
}

/* A file that cannot grow past a limit (RLIMIT_FSIZE: the write that crosses it falls short, the
 * next one fails with EFBIG, as on a full disk) holds whole lines only, one per record counted,
 * for every flush policy; the error names the reason. */
static void test_whole_lines(const char *dir) {
  char path[512];
  snprintf(path, sizeof path, "%s/tel_full_%d.jsonl", dir, (int)getpid());
  struct rlimit old;
  getrlimit(RLIMIT_FSIZE, &old);
  signal(SIGXFSZ, SIG_IGN);
  static const int policy[] = {1, 7, 0};
  for (int k = 0; k < 3; k++) {
    hr_telemetry_params tp;
    hr_telemetry_params_default(&tp);
    tp.flush_every = policy[k];
    tp.buffer_bytes = 16384;
    hr_telemetry *t = NULL;
    char err[256];
    CHECK(hr_telemetry_open(path, &tp, &t, err, sizeof err) == HR_OK);
    if (!t) continue;
    struct rlimit lim = old;
    lim.rlim_cur = 20000 + 1234 * (rlim_t)k;   /* mid-line, whatever the line lengths */
    CHECK(setrlimit(RLIMIT_FSIZE, &lim) == 0);
    hr_telemetry_record r;
    int fails = 0, i;
    for (i = 0; i < 2000 && !fails; i++) {
      fill(&r, i);
      if (hr_telemetry_write(t, &r) != HR_OK) fails++;
    }
    if (!fails) fails = hr_telemetry_close(t) != HR_OK, t = NULL;
    CHECK(fails == 1);
    if (t) {
      CHECK(strstr(hr_telemetry_last_error(t), strerror(EFBIG)) != NULL);
      int64_t counted = hr_telemetry_count(t);
      hr_telemetry_close(t);
      setrlimit(RLIMIT_FSIZE, &old);
      FILE *fp = fopen(path, "r");
      CHECK(fp != NULL);
      if (!fp) continue;
      char *line = NULL;
      size_t cap = 0;
      int n = 0, bad = 0;
      ssize_t len;
      while ((len = getline(&line, &cap, fp)) > 0) {
        cJSON *j = cJSON_Parse(line);
        if (!j || line[len - 1] != '\n') bad++;
        else if ((int64_t)num(j, "frame") != n) bad++;
        cJSON_Delete(j);
        n++;
      }
      free(line);
      fclose(fp);
      CHECK_EQ_INT(bad, 0);
      CHECK_EQ_INT(n, counted);
      CHECK(n > 10 && n < i);
    }
    setrlimit(RLIMIT_FSIZE, &old);
  }
  unlink(path);
}

int main(void) {
  const char *dir = getenv("TMPDIR");
  if (!dir || !*dir) dir = "/tmp";
  test_nulls();
  test_values();
  test_escaping();
  test_file(dir);
  test_whole_lines(dir);
  test_cost(dir);
  return hr_test_finish("test_telemetry_jsonl");
}
