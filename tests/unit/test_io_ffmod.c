/* The FFmpeg module (src/io/ffmod.h, issue 15): raw NV12 and PNG sources, and PNG writing, leave
 * FFmpeg unmapped (no libavcodec, libavformat, libswscale or the module in /proc/self/maps); the
 * first video source loads the module, reads its frames (a committed NV12 clip, in place), counts
 * the libraries it brought in the source's memory estimate, and makes hr_version() (first asked
 * here, after the load) name FFmpeg's version. In-process, so it checks the library the CLI and the tests link (libheadroom_io.a). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "hr_test.h"
#include "headroom/io.h"
#include "io/ffmod.h"

/* 1 if a mapping of this process names one of FFmpeg's libraries or the module. */
static int ffmpeg_mapped(char *which, size_t n) {
  FILE *f = fopen("/proc/self/maps", "re");
  if (!f) return -1;
  char line[1024];
  int found = 0;
  while (!found && fgets(line, sizeof line, f)) {
    static const char *names[] = {"libavcodec", "libavformat", "libswscale", "libavutil", HR__FFMOD_NAME};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
      if (strstr(line, names[i])) {
        char *nl = strchr(line, '\n');
        if (nl) *nl = 0;
        snprintf(which, n, "%.400s", strrchr(line, ' ') ? strrchr(line, ' ') + 1 : line);
        found = 1;
        break;
      }
  }
  fclose(f);
  return found;
}

int main(void) {
  const char *src = getenv("HR_SRC_DIR");
  char clip[700], dir[64] = "/tmp/hr_ffmod_XXXXXX", raw[128], png[128], which[512] = "", err[1024];
  snprintf(clip, sizeof clip, "%s/tests/data/io/nv12_32x24.nut", src && *src ? src : ".");
  struct stat sb;
  if (stat(clip, &sb) != 0) SKIP("no %s (set HR_SRC_DIR to the source tree)", clip);
  if (!mkdtemp(dir)) SKIP("mkdtemp failed");
  printf("test_io_ffmod:\n");
  CHECKF(ffmpeg_mapped(which, sizeof which) == 0, "FFmpeg mapped at start: %s", which);
  CHECK(!hr__ffmod_loaded());

  /* Raw NV12 (3 frames of 64x48) and a PNG: read, and a PNG written. */
  snprintf(raw, sizeof raw, "%s/v.nv12", dir);
  snprintf(png, sizeof png, "%s/a.png", dir);
  static uint8_t buf[64 * 48 * 3 / 2 * 3];   /* 3 NV12 frames; the first 64 x 48 x 3 bytes make the PNG */
  for (size_t i = 0; i < sizeof buf; i++) buf[i] = (uint8_t)(i * 7);
  FILE *f = fopen(raw, "wb");
  CHECK(f && fwrite(buf, 1, 64 * 48 * 3 / 2 * 3, f) == 64 * 48 * 3 / 2 * 3);
  if (f) fclose(f);
  CHECK_EQ_INT(hr_png_write_rgb24(png, 64, 48, buf, 64 * 3), HR_OK);
  hr_source_params p;
  hr_source_params_default(&p);
  p.input_format = "nv12:64x48@30";
  hr_source *s = NULL;
  hr_frame fr;
  CHECKF(hr_source_open(raw, &p, &s, err, sizeof err) == HR_OK, "raw: %s", err);
  int n = 0;
  while (s && hr_source_read(s, &fr) == HR_OK) n++;
  CHECK_EQ_INT(n, 3);
  hr_source_destroy(s);
  s = NULL;
  CHECKF(hr_source_open(png, NULL, &s, err, sizeof err) == HR_OK, "png: %s", err);
  CHECK(s && hr_source_read(s, &fr) == HR_OK && fr.fmt == HR_PIX_RGB24 && fr.width == 64);
  hr_source_destroy(s);
  s = NULL;
  CHECKF(ffmpeg_mapped(which, sizeof which) == 0, "FFmpeg mapped after raw NV12 and PNG: %s", which);
  CHECK(!hr__ffmod_loaded());
  printf("  raw NV12 + PNG read, PNG written: FFmpeg not mapped\n");

  /* A video: the module opens, the clip decodes in place. */
  hr_source_memory m;
  CHECKF(hr_source_open(clip, NULL, &s, err, sizeof err) == HR_OK, "video: %s", err);
  if (s) {
    n = 0;
    while (hr_source_read(s, &fr) == HR_OK) {
      CHECK(fr.fmt == HR_PIX_NV12_VIDEO || fr.fmt == HR_PIX_NV12_FULL);
      CHECK(fr.width == 32 && fr.height == 24);
      n++;
    }
    hr_source_stats st;
    hr_source_get_stats(s, &st);
    CHECKF(n > 0 && st.in_place == n, "%d frames, %lld in place", n, (long long)st.in_place);
    CHECK_EQ_INT(hr_source_memory_estimate(s, 0, &m), HR_OK);
    /* The open that loaded the module counts what its load brought in (file-backed and anonymous). */
    CHECKF(m.code_bytes >= hr__ffmod_load_anon_bytes() && m.code_bytes > 4000000,
           "code %lld, module's anonymous %lld", (long long)m.code_bytes, (long long)hr__ffmod_load_anon_bytes());
    printf("  %s: %d frames in place through %s; code %.1f MB (of which the module's anonymous %.1f MB)\n",
           hr_source_describe(s), n, hr__ffmod_path(), m.code_bytes / 1e6, hr__ffmod_load_anon_bytes() / 1e6);
    hr_source_destroy(s);
  }
  CHECK(hr__ffmod_loaded());
  CHECKF(ffmpeg_mapped(which, sizeof which) == 1, "FFmpeg not mapped after a video source");
  const char *v = hr_version();
  const char *ff = strstr(v, "FFmpeg ");
  CHECKF(ff && ff[7] >= '0' && ff[7] <= '9', "hr_version after the module: %s", v);
  /* A second video source: the module is loaded once; nothing more counted for it. */
  s = NULL;
  CHECKF(hr_source_open(clip, NULL, &s, err, sizeof err) == HR_OK, "video again: %s", err);
  if (s) {
    hr_source_memory m2;
    hr_source_memory_estimate(s, 0, &m2);
    CHECKF(m2.code_bytes < m.code_bytes - hr__ffmod_load_anon_bytes() + 1, "second open counted %lld", (long long)m2.code_bytes);
    hr_source_destroy(s);
  }
  unlink(raw);
  unlink(png);
  rmdir(dir);
  return hr_test_finish("test_io_ffmod");
}
