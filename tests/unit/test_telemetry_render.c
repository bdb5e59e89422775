/* The HTML run report renders: headless Chromium screenshots it and the PNG is checked for real content (skips without Chromium). */
#define HR_TELEMETRY_REPORT_NO_MAIN
#pragma GCC diagnostic ignored "-Wunused-function"   /* the other tests of the included file */
#include "test_telemetry_report.c"   /* the synthetic run and the HTML structure checks */

/* First of the usual Chromium names found in PATH, or $HR_CHROMIUM. */
static const char *find_chromium(char *buf, size_t n) {
  const char *env = getenv("HR_CHROMIUM");
  if (env && *env) return access(env, X_OK) == 0 ? env : NULL;
  static const char *const names[] = {"chromium", "chromium-browser", "google-chrome", "headless_shell"};
  const char *path = getenv("PATH");
  if (!path) return NULL;
  for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
    const char *p = path;
    while (*p) {
      const char *e = strchr(p, ':');
      size_t len = e ? (size_t)(e - p) : strlen(p);
      snprintf(buf, n, "%.*s/%s", (int)len, p, names[k]);
      if (len && access(buf, X_OK) == 0) return buf;
      p += len + (e ? 1 : 0);
    }
  }
  return NULL;
}

typedef struct png_img { uint8_t *px; uint32_t w, h; } png_img;

static int read_png_rgba(const char *path, png_img *img) {
  size_t len = 0;
  char *data = slurp(path, &len);
  if (!data) return -1;
  spng_ctx *c = spng_ctx_new(0);
  int e = c ? spng_set_png_buffer(c, data, len) : -1;
  struct spng_ihdr ih;
  size_t need = 0;
  if (!e) e = spng_get_ihdr(c, &ih);
  if (!e) e = spng_decoded_image_size(c, SPNG_FMT_RGBA8, &need);
  if (!e) {
    img->px = malloc(need);
    e = img->px ? spng_decode_image(c, img->px, need, SPNG_FMT_RGBA8, 0) : -1;
    img->w = ih.width;
    img->h = ih.height;
  }
  spng_ctx_free(c);
  free(data);
  return e ? -1 : 0;
}

/* Pixels within tol (per channel) of #rrggbb. */
static long count_colour(const png_img *im, unsigned rgb, int tol) {
  int r = rgb >> 16 & 255, g = rgb >> 8 & 255, b = rgb & 255;
  long n = 0;
  for (size_t i = 0; i < (size_t)im->w * im->h; i++) {
    const uint8_t *p = im->px + 4 * i;
    n += abs(p[0] - r) <= tol && abs(p[1] - g) <= tol && abs(p[2] - b) <= tol;
  }
  return n;
}

int main(void) {
  char cbuf[1024];
  const char *chromium = find_chromium(cbuf, sizeof cbuf);
  if (!chromium)
    SKIP("chromium is not installed (apt-get install -y chromium, or set HR_CHROMIUM): cannot render the report");
  char dbuf[512];
  const char *dir = test_dir(dbuf, sizeof dbuf);
  if (!dir) SKIP("cannot create a temporary directory");

  char jl[600], html_path[600], shot[600], prof[600], log[600];
  snprintf(jl, sizeof jl, "%s/run.jsonl", dir);
  snprintf(html_path, sizeof html_path, "%s/run.html", dir);
  snprintf(shot, sizeof shot, "%s/report.png", dir);
  snprintf(prof, sizeof prof, "%s/profile", dir);
  snprintf(log, sizeof log, "%s/chromium.log", dir);
  CHECK_EQ_INT(synth_telemetry(jl, SYN_FRAMES), 3);
  hr_report_opts o;
  hr_report_opts_default(&o);
  o.title = "headroom report render test";
  char err[256] = "";
  o.err = err;
  o.err_len = sizeof err;
  char paths[6][512];
  for (int k = 0; k < 3; k++) {
    CHECK(synth_images(dir, k, paths[2 * k], paths[2 * k + 1], sizeof paths[0]) == 0);
    o.images[2 * k].path = paths[2 * k];
    o.images[2 * k + 1].path = paths[2 * k + 1];
  }
  o.n_images = 6;
  hr_status st = hr_report_write_html(jl, html_path, &o);
  CHECKF(st == HR_OK, "%s: %s", hr_status_name(st), err);
  char *html = slurp(html_path, NULL);
  CHECK(html != NULL);
  if (html) { check_report_structure(html); free(html); }

  mkdir(prof, 0700);
  char cmd[4096];
  snprintf(cmd, sizeof cmd,
           "HOME='%s' timeout 180 '%s' --headless --no-sandbox --disable-gpu --disable-quic --no-first-run "
           "--disable-background-networking --disable-component-update --disable-sync "
           "--user-data-dir='%s' --screenshot='%s' --window-size=1280,2000 'file://%s' >'%s' 2>&1",
           dir, chromium, prof, shot, html_path, log);
  int rc = system(cmd);
  CHECKF(rc == 0, "chromium exited with %d; see %s", rc, log);
  png_img im = {0};
  CHECKF(read_png_rgba(shot, &im) == 0, "cannot decode the screenshot %s", shot);
  if (im.px) {
    CHECK_EQ_INT(im.w, 1280);
    CHECK_EQ_INT(im.h, 2000);
    long nonwhite = 0, total = (long)im.w * im.h;
    static unsigned char seen[1 << 15];
    long distinct = 0;
    for (long i = 0; i < total; i++) {
      const uint8_t *p = im.px + 4 * i;
      nonwhite += p[0] < 240 || p[1] < 240 || p[2] < 240;
      unsigned q = (unsigned)(p[0] >> 3) << 10 | (unsigned)(p[1] >> 3) << 5 | (unsigned)(p[2] >> 3);
      if (!seen[q]) { seen[q] = 1; distinct++; }
    }
    /* Page background (#f4f5f7) counts as white here; plots, text and cards must add plenty more. */
    printf("screenshot %s: %ux%u, %.1f%% non-white, %ld distinct colours (5-bit)\n", shot, im.w, im.h,
           100.0 * nonwhite / total, distinct);
    CHECKF(nonwhite > total / 20, "screenshot looks blank: %ld non-white pixels", nonwhite);
    CHECKF(distinct > 150, "only %ld distinct colours", distinct);
    /* The plots are drawn: the inference stage's blue area, the health band's green, and the
     * over-budget red all cover real areas. */
    long blue = count_colour(&im, 0x3f7fc9, 12), green = count_colour(&im, 0x4cb27a, 12);
    long red = count_colour(&im, 0xd64b4b, 30);
    printf("plot colours: infer blue %ld px, healthy green %ld px, budget red %ld px\n", blue, green, red);
    CHECK(blue > 20000);
    CHECK(green > 20000);
    CHECK(red > 300);
    free(im.px);
  }
  if (hr_test_failures) printf("kept %s for inspection\n", dir);   /* report, screenshot, log */
  else cleanup_dir(dir);
  return hr_test_finish("test_telemetry_render");
}
