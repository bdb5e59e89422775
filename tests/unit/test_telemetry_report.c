/* HTML run report from synthetic-but-realistic telemetry: structure, numbers, decimation at 36,000 frames, missing fields, errors. */
#include <ftw.h>
#include <spng.h>
#include <stdint.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "headroom.h"
#include "headroom/report.h"
#include "hr_test.h"

/* ---------------------------------------------------------------------------------------------
 * Synthetic run (also used by test_telemetry_render.c, which includes this file): 60 fps with
 *   - a budget-violation period (inference slows from ~9.5 to ~17 ms between 20% and 32% of the
 *     run; frames over budget, the flow limiter drops, health degrades),
 *   - memory creeping up towards the safe ceiling, the governor releasing caches, then stepping
 *     down (ratio 0.375 -> 0.25, 512x288 -> 384x216, state reset, recalibrating), and stepping up
 *     again near the end,
 *   - depth frames fused most of the time with a few ms of skew.
 * ------------------------------------------------------------------------------------------- */
static uint64_t syn_rng = 0x2545F4914F6CDD1Dull;
static double syn_u(void) {
  syn_rng ^= syn_rng >> 12; syn_rng ^= syn_rng << 25; syn_rng ^= syn_rng >> 27;
  return ((syn_rng * 2685821657736338717ull) >> 11) * (1.0 / 9007199254740992.0) + 1e-17;
}
static double syn_n(void) { return sqrt(-2 * log(syn_u())) * cos(6.283185307179586 * syn_u()); }

#define SYN_SAFE (420ll << 20)
#define SYN_KILL (512ll << 20)

/* Writes n frames of telemetry to path; returns the number of governor actions written. */
static int synth_telemetry(const char *path, int n) {
  hr_telemetry *t = NULL;
  char err[256];
  if (hr_telemetry_open(path, NULL, &t, err, sizeof err) != HR_OK) {
    fprintf(stderr, "synth: %s\n", err);
    return -1;
  }
  const double period = 1000.0 / 60.0;
  double ratio = 0.375;
  int pw = 512, ph = 288, n_gov = 0, recal_left = 0, degraded_left = 0;
  int64_t dropped = 0;
  double rss = 300.0 * 1048576, clock_ms = 0;
  bool stepped_down = false, stepped_up = false, released = false;
  for (int i = 0; i < n; i++) {
    double f = (double)i / n;   /* position in the run, 0..1 */
    hr_telemetry_record r;
    hr_telemetry_record_init(&r);
    r.frame = i;
    bool slow = f > 0.20 && f < 0.32;
    double infer = (slow ? 17.0 : 9.5) * (ratio / 0.375) * (ratio < 0.3 ? 1.25 : 1.0) * exp(0.06 * syn_n());
    if (syn_u() < 0.004) infer *= 2.2;   /* rare stalls */
    r.ingest_ms = 1.1 * exp(0.1 * syn_n());
    r.infer_ms = infer;
    r.post_ms = 0.9 * exp(0.1 * syn_n());
    r.output_ms = 0.5 * exp(0.15 * syn_n());
    double total = r.ingest_ms + r.infer_ms + r.post_ms + r.output_ms;
    /* Frames arrive every period; when processing overruns, the flow limiter drops captures. */
    double step = period;
    if (total > period) {
      int missed = (int)floor(total / period);
      dropped += missed;
      step = period * (missed + 1);
    }
    clock_ms += step * (1 + 0.01 * syn_n());
    r.t_ms = clock_ms;
    r.latency_ms = total + 0.4 + fabs(syn_n()) * 1.5;
    /* Memory: creeps up from 35%, governor acts near the safe ceiling. */
    if (f > 0.35 && !stepped_down) rss += 0.35 * 1048576 * (3600.0 / n) * exp(0.3 * syn_n());
    if (stepped_up && f > 0.9) rss += 0.02 * 1048576;
    r.rss_bytes = (int64_t)(rss + 0.3 * 1048576 * syn_n());   /* measurement noise */
    r.headroom_bytes = SYN_KILL - r.rss_bytes;
    r.ceiling_safe_bytes = SYN_SAFE;
    r.ceiling_kill_bytes = SYN_KILL;
    if (!released && rss > SYN_SAFE - 30.0 * 1048576) {
      r.governor_action = "release_caches";
      released = true;
      rss -= 12.0 * 1048576;
      n_gov++;
    } else if (!stepped_down && rss > SYN_SAFE - 4.0 * 1048576) {
      r.governor_action = "step_down";
      stepped_down = true;
      ratio = 0.25;
      pw = 384;
      ph = 216;
      rss -= 70.0 * 1048576;
      r.state_reset = true;
      recal_left = 25;
      n_gov++;
    } else if (stepped_down && !stepped_up && f > 0.82) {
      r.governor_action = "step_up";
      stepped_up = true;
      ratio = 0.375;
      pw = 512;
      ph = 288;
      rss += 45.0 * 1048576;
      r.state_reset = true;
      recal_left = 20;
      n_gov++;
    }
    r.proc_w = pw;
    r.proc_h = ph;
    r.ratio = ratio;
    /* Health. */
    if (slow && syn_u() < 0.02 && !degraded_left) degraded_left = 40;
    if (i < 10) {
      r.health = "warming-up";
      r.confidence = 0.5 + 0.04 * i;
    } else if (recal_left > 0) {
      r.health = "recalibrating";
      r.health_reason = "state reset: settling";
      r.confidence = 0.6 + 0.01 * (25 - recal_left);
      recal_left--;
    } else if (degraded_left > 0) {
      r.health = "degraded";
      r.health_reason = "inconsistent: mean |da| 0.081 > 0.050";
      r.confidence = 0.55 + 0.05 * syn_n();
      degraded_left--;
    } else {
      r.health = "healthy";
      r.confidence = 0.92 + 0.02 * syn_n();
    }
    if (r.confidence > 1) r.confidence = 1;
    /* Depth: fused unless the nearest depth frame is too far away. */
    double dt = fabs(4 + 3 * syn_n());
    if (dt < 12) { r.depth_dt_ms = dt; r.depth_fused = true; }
    r.dropped = dropped;
    r.bytes_copied = (i % 600 == 0) ? 512 * 288 * 3 : 0;
    if (hr_telemetry_write(t, &r) != HR_OK) n_gov = -1000;
  }
  if (hr_telemetry_close(t) != HR_OK) return -1;
  return n_gov;
}

/* Writes a plausible camera frame (person-shaped blob on a gradient) and its matte as PNGs. */
static int synth_images(const char *dir, int k, char *rgb_path, char *matte_path, size_t n) {
  enum { W = 320, H = 180 };
  static uint8_t rgb[W * H * 3], matte[W * H];
  double cx = W * (0.4 + 0.1 * k), cy = H * 0.62;
  for (int y = 0; y < H; y++) {
    for (int x = 0; x < W; x++) {
      double dxh = (x - cx) / 22.0, dyh = (y - (cy - 62)) / 26.0;          /* head */
      double dxb = (x - cx) / 48.0, dyb = (y - (cy + 20)) / 70.0;          /* torso */
      double a = (dxh * dxh + dyh * dyh <= 1 || (dxb * dxb + dyb * dyb <= 1 && y > cy - 40)) ? 1.0 : 0.0;
      uint8_t *p = &rgb[(y * W + x) * 3];
      if (a > 0) {
        bool head = dxh * dxh + dyh * dyh <= 1;
        p[0] = head ? 224 : 60;
        p[1] = head ? 178 : 90;
        p[2] = head ? 150 : 160;
      } else {
        p[0] = (uint8_t)(90 + 60 * x / W);
        p[1] = (uint8_t)(120 + 50 * y / H);
        p[2] = (uint8_t)(150 + 40 * (x + y) / (W + H));
      }
      matte[y * W + x] = (uint8_t)(a * 255);
    }
  }
  snprintf(rgb_path, n, "%s/frame%d.png", dir, k);
  snprintf(matte_path, n, "%s/matte%d.png", dir, k);
  for (int pass = 0; pass < 2; pass++) {
    spng_ctx *c = spng_ctx_new(SPNG_CTX_ENCODER);
    FILE *fp = fopen(pass ? matte_path : rgb_path, "wb");
    if (!c || !fp) { spng_ctx_free(c); if (fp) fclose(fp); return -1; }
    struct spng_ihdr ih = {0};
    ih.width = W;
    ih.height = H;
    ih.bit_depth = 8;
    ih.color_type = pass ? SPNG_COLOR_TYPE_GRAYSCALE : SPNG_COLOR_TYPE_TRUECOLOR;
    spng_set_png_file(c, fp);
    spng_set_ihdr(c, &ih);
    int e = spng_encode_image(c, pass ? (void *)matte : (void *)rgb, pass ? sizeof matte : sizeof rgb,
                              SPNG_FMT_PNG, SPNG_ENCODE_FINALIZE);
    spng_ctx_free(c);
    fclose(fp);
    if (e) return -1;
  }
  return 0;
}

static char *slurp(const char *path, size_t *len) {
  FILE *fp = fopen(path, "rb");
  if (!fp) return NULL;
  fseek(fp, 0, SEEK_END);
  long n = ftell(fp);
  fseek(fp, 0, SEEK_SET);
  char *b = malloc((size_t)n + 1);
  if (b && fread(b, 1, (size_t)n, fp) != (size_t)n) { free(b); b = NULL; }
  if (b) b[n] = 0;
  fclose(fp);
  if (len) *len = b ? (size_t)n : 0;
  return b;
}

static int count_str(const char *h, const char *needle) {
  int n = 0;
  for (const char *p = h; (p = strstr(p, needle)); p += strlen(needle)) n++;
  return n;
}

/* Largest number of points (M/L/H/V commands) in any SVG path's d attribute. */
static int max_path_points(const char *h) {
  int worst = 0;
  for (const char *p = h; (p = strstr(p, " d=\"")); ) {
    p += 4;
    int k = 0;
    for (; *p && *p != '"'; p++) k += (*p == 'M' || *p == 'L' || *p == 'H' || *p == 'V');
    if (k > worst) worst = k;
  }
  return worst;
}

/* Checks every report must pass: self-contained, the plots and tables present. */
static void check_report_structure(const char *html) {
  CHECK(strncmp(html, "<!doctype html>", 15) == 0);
  CHECK(strstr(html, "</html>") != NULL);
  CHECK(count_str(html, "<svg") >= 5);
  CHECK(count_str(html, "<path") >= 10);
  CHECK(count_str(html, "<table") >= 4);
  CHECK(strstr(html, "Frame time per stage") && strstr(html, "Delivered frame rate") &&
        strstr(html, "Processing resolution") && strstr(html, "Memory") && strstr(html, "Health"));
  CHECK(strstr(html, "Stage timing") && strstr(html, ">p95<") && strstr(html, ">p99<"));
  /* No network: no scripts, no external references (the SVG namespace is not a fetch). */
  CHECK(strstr(html, "<script") == NULL);
  CHECK(strstr(html, "src=\"http") == NULL && strstr(html, "href=") == NULL);
  CHECK(strstr(html, "url(http") == NULL && strstr(html, "@import") == NULL);
  int pts = max_path_points(html);
  CHECKF(pts <= 2100, "a path has %d points", pts);
}

#define SYN_FRAMES 3600

static void test_realistic(const char *dir) {
  char jl[512], html_path[512];
  snprintf(jl, sizeof jl, "%s/run.jsonl", dir);
  snprintf(html_path, sizeof html_path, "%s/run.html", dir);
  int n_gov = synth_telemetry(jl, SYN_FRAMES);
  CHECK_EQ_INT(n_gov, 3);
  hr_report_opts o;
  hr_report_opts_default(&o);
  o.title = "Synthetic run <test> & friends";
  char err[256] = "";
  o.err = err;
  o.err_len = sizeof err;
  char paths[6][512];
  for (int k = 0; k < 3; k++) {
    CHECK(synth_images(dir, k, paths[2 * k], paths[2 * k + 1], sizeof paths[0]) == 0);
    o.images[2 * k].path = paths[2 * k];
    o.images[2 * k].caption = k == 0 ? "input, t = 5 s" : k == 1 ? "input, t = 25 s" : "input, t = 50 s";
    o.images[2 * k + 1].path = paths[2 * k + 1];
    o.images[2 * k + 1].caption = k == 0 ? "matte, t = 5 s" : k == 1 ? "matte, t = 25 s" : "matte, t = 50 s";
  }
  o.n_images = 6;
  hr_status st = hr_report_write_html(jl, html_path, &o);
  CHECKF(st == HR_OK, "report: %s: %s", hr_status_name(st), err);
  size_t len = 0;
  char *html = slurp(html_path, &len);
  CHECK(html != NULL);
  if (!html) return;
  check_report_structure(html);
  CHECK(strstr(html, "Synthetic run &lt;test&gt; &amp; friends") != NULL);   /* escaped title */
  CHECK(strstr(html, "3,600 frames") != NULL);
  CHECK_EQ_INT(count_str(html, "data:image/png;base64,"), 6);
  CHECK(strstr(html, "step_down") && strstr(html, "step_up") && strstr(html, "release_caches"));
  CHECK(strstr(html, "recalibrating") && strstr(html, "degraded") && strstr(html, "warming-up"));
  CHECK(strstr(html, "inconsistent: mean |da| 0.081 &gt; 0.050") != NULL);
  CHECK(strstr(html, "384x216") && strstr(html, "512x288"));
  CHECK(strstr(html, "kill 512.0 MiB") && strstr(html, "safe 420.0 MiB"));
  CHECK(strstr(html, "Depth synchronisation") != NULL);
  CHECK(strstr(html, "class=\"bad\"") != NULL);    /* the violation period shows up as bad */
  CHECK(strstr(html, "Input problems") == NULL);
  CHECK(access(html_path, F_OK) == 0);
  char tmp[600];
  snprintf(tmp, sizeof tmp, "%s.tmp", html_path);
  CHECK(access(tmp, F_OK) != 0);
  printf("realistic report: %zu bytes (%s)\n", len, html_path);
  free(html);
}

static void test_long_run(const char *dir) {
  char jl[512], html_path[512];
  snprintf(jl, sizeof jl, "%s/long.jsonl", dir);
  snprintf(html_path, sizeof html_path, "%s/long.html", dir);
  CHECK_EQ_INT(synth_telemetry(jl, 36000), 3);
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  CHECK(hr_report_write_html(jl, html_path, NULL) == HR_OK);
  clock_gettime(CLOCK_MONOTONIC, &b);
  double secs = (b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) * 1e-9;
  size_t len = 0;
  char *html = slurp(html_path, &len);
  CHECK(html != NULL);
  if (!html) return;
  check_report_structure(html);
  CHECK(strstr(html, "36,000 frames") != NULL);
  CHECKF(len < 1500000, "report of 36,000 frames is %zu bytes", len);
  printf("36,000-frame report: %zu bytes in %.2f s, largest path %d points\n", len, secs,
         max_path_points(html));
  CHECKF(secs < 10, "report took %.1f s", secs);
  free(html);
}

static void write_text(const char *path, const char *text) {
  FILE *fp = fopen(path, "w");
  if (fp) { fputs(text, fp); fclose(fp); }
}

static void test_missing_and_errors(const char *dir) {
  char jl[512], html_path[512], err[256];
  snprintf(jl, sizeof jl, "%s/sparse.jsonl", dir);
  snprintf(html_path, sizeof html_path, "%s/sparse.html", dir);
  /* Sparse lines, nulls, garbage, a blank line and a cut-off last line (a killed run). */
  FILE *fp = fopen(jl, "w");
  CHECK(fp != NULL);
  if (!fp) return;
  for (int i = 0; i < 500; i++) {
    if (i == 100) fputs("this is not json\n\n", fp);
    if (i % 3 == 0) fprintf(fp, "{\"frame\":%d}\n", i);
    else if (i % 3 == 1) fprintf(fp, "{\"frame\":%d,\"t_ms\":%.3f,\"infer_ms\":%.3f,\"health\":null,\"rss_bytes\":null}\n",
                                 i, i * 16.667, 8 + (i % 10) * 0.5);
    else fprintf(fp, "{\"frame\":%d,\"t_ms\":%.3f,\"infer_ms\":null,\"health\":\"healthy\",\"dropped\":%d,\"proc_w\":\"x\"}\n",
                 i, i * 16.667, i / 50);
  }
  fputs("{\"frame\":500,\"t_ms\":8333.5,\"infer", fp);
  fclose(fp);
  hr_report_opts o;
  hr_report_opts_default(&o);
  o.err = err;
  o.err_len = sizeof err;
  o.images[0].path = "/nonexistent/frame.png";
  o.images[1].path = jl;   /* not an image */
  o.n_images = 2;
  hr_status st = hr_report_write_html(jl, html_path, &o);
  CHECKF(st == HR_OK, "sparse report: %s: %s", hr_status_name(st), err);
  char *html = slurp(html_path, NULL);
  if (html) {
    CHECK(strstr(html, "<svg") != NULL);
    CHECK(strstr(html, "2 line(s) of the telemetry file could not be parsed") != NULL);
    CHECK(strstr(html, "n/a") != NULL);
    CHECK(strstr(html, "Fields absent or null in every frame") && strstr(html, "rss_bytes"));
    CHECK(strstr(html, "image not available: /nonexistent/frame.png") != NULL);
    CHECK(strstr(html, "not a PNG or JPEG") != NULL);
    CHECK(strstr(html, "<h2>Memory</h2>") == NULL);   /* no RSS anywhere: no memory plot */
    free(html);
  }
  /* A single frame. */
  write_text(jl, "{\"frame\":0,\"t_ms\":0,\"infer_ms\":5,\"rss_bytes\":1000000}\n");
  CHECK(hr_report_write_html(jl, html_path, &o) == HR_OK);
  /* Errors. */
  write_text(jl, "");
  CHECK(hr_report_write_html(jl, html_path, &o) == HR_ECORRUPT);
  CHECK(strstr(err, "no valid telemetry") != NULL);
  write_text(jl, "garbage\n[1,2]\n");
  CHECK(hr_report_write_html(jl, html_path, &o) == HR_ECORRUPT);
  CHECK(hr_report_write_html("/nonexistent/t.jsonl", html_path, &o) == HR_EIO);
  CHECK(strstr(err, "/nonexistent/t.jsonl") != NULL);
  write_text(jl, "{\"frame\":0}\n");
  CHECK(hr_report_write_html(jl, "/nonexistent-dir/r.html", &o) == HR_EIO);
  CHECK(strstr(err, "/nonexistent-dir/r.html") != NULL);
  CHECK(hr_report_write_html(NULL, html_path, &o) == HR_EINVAL);
  o.n_images = 7;
  CHECK(hr_report_write_html(jl, html_path, &o) == HR_EINVAL);
  unlink(jl);
  unlink(html_path);
}

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
  (void)sb; (void)flag; (void)ftw;
  return remove(path);
}

/* Remove the test's scratch directory unless HR_TEST_KEEP is set (then say where it is). */
static void cleanup_dir(const char *dir) {
  const char *keep = getenv("HR_TEST_KEEP");
  if (keep && *keep) { printf("kept %s\n", dir); return; }
  nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static const char *test_dir(char *buf, size_t n) {
  const char *base = getenv("TMPDIR");
  if (!base || !*base) base = "/tmp";
  snprintf(buf, n, "%s/hr_report_XXXXXX", base);
  return mkdtemp(buf);
}

#ifndef HR_TELEMETRY_REPORT_NO_MAIN
int main(void) {
  char dbuf[512];
  const char *dir = test_dir(dbuf, sizeof dbuf);
  if (!dir) SKIP("cannot create a temporary directory");
  test_realistic(dir);
  test_long_run(dir);
  test_missing_and_errors(dir);
  cleanup_dir(dir);
  return hr_test_finish("test_telemetry_report");
}
#endif
