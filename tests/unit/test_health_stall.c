/* A stalled stream is seen from its timestamps (issue 16, point 5a): real sam2 frames through the
 * stream, then 20 frames that re-send frame 40 with fresh +-2 sensor noise (pixels never repeat
 * exactly, as after a lossy pipeline) under frame 40's timestamp. The monitor must flag
 * INPUT_FROZEN ("input stalled") within frozen_frames + 1 frames and recover after the stream moves
 * on; the control runs are the clean clip, which must not be flagged, and the same noisy still
 * picture with advancing timestamps, which the timestamps cannot call a stall: since point 5b
 * (test_health_near_repeat) the pixels call it a near-repeat instead, with that reason. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "headroom.h"
#include "headroom/io.h"
#include "hr_test_frames.h"

#define NF 64   /* the source pool holds at most 64 */

static uint32_t rng = 12345;
static int noise2(void) { rng ^= rng << 13; rng ^= rng >> 17; rng ^= rng << 5; return (int)(rng % 5) - 2; }

/* mode 0: clean clip; 1: frames 40..59 re-send frame 40 + noise with its timestamp; 2: the same
 * pixels with advancing timestamps. Returns the first frame flagged INPUT_FROZEN (-1 none) and
 * the last one in *last. */
static int run(hr_model *m, const hr_frame *fr, int mode, int *last, char *why, size_t why_len) {
  hr_stream_params p;
  hr_stream_params_default(&p);
  p.session.width = 256; p.session.height = 144;
  p.session.frame_width = fr[0].width; p.session.frame_height = fr[0].height;
  p.session.threads = 1;
  hr_stream *st = NULL;
  char err[256];
  CHECK_EQ_INT(hr_stream_create(m, &p, &st, err, sizeof err), HR_OK);
  if (!st) return -2;
  size_t bytes = (size_t)fr[0].height * (size_t)fr[0].strides[0];
  uint8_t *buf = malloc(bytes);
  int first = -1;
  *last = -1;
  for (int i = 0; i < NF; i++) {
    hr_frame f = fr[i];
    if (mode && i >= 40 && i < 60) {
      const uint8_t *src = fr[40].planes[0];
      for (size_t k = 0; k < bytes; k++) { int v = src[k] + noise2(); buf[k] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v); }
      f = fr[40];
      f.planes[0] = buf;
      if (mode == 2) f.ts_ns = fr[i].ts_ns;
    }
    hr_stream_result r;
    CHECK_EQ_INT(hr_stream_push(st, &f, &r), HR_OK);
    if (r.health.causes & HR_HEALTH_CAUSE_INPUT_FROZEN) {
      if (first < 0) { first = i; snprintf(why, why_len, "%s", r.health.reason); }
      *last = i;
    }
  }
  free(buf);
  hr_stream_destroy(st);
  return first;
}

int main(void) {
  hr_model *m; hr_source *src; hr_frame fr[NF];
  if (!hr_test_rvm_frames(&m, &src, fr, NF)) { hr_source_destroy(src); hr_model_destroy(m); return hr_test_finish("test_health_stall"); }
  CHECK(fr[1].ts_ns > fr[0].ts_ns);
  char why[HR_HEALTH_REASON_LEN] = "";
  int last;
  int clean = run(m, fr, 0, &last, why, sizeof why);
  printf("clean clip: first INPUT_FROZEN at %d\n", clean);
  CHECK_EQ_INT(clean, -1);
  int still = run(m, fr, 2, &last, why, sizeof why);
  printf("noisy still picture, timestamps advancing: INPUT_FROZEN %d..%d: %s\n", still, last, why);
  /* since point 5b the pixels call it too: a near-repeat (not a stall: the timestamps advance) */
  CHECK_EQ_INT(still, 43);
  CHECK_EQ_INT(last, 59);
  CHECK(strstr(why, "near-identical") != NULL && strstr(why, "stalled") == NULL);
  int stall = run(m, fr, 1, &last, why, sizeof why);
  printf("stalled stream (frame 40 re-sent with noise, timestamp repeated, frames 40-59): INPUT_FROZEN %d..%d: %s\n", stall, last, why);
  CHECK(stall >= 41 && stall <= 44);
  CHECK(last >= 55 && last < NF - 1);
  CHECK(strstr(why, "stalled") != NULL);
  hr_source_destroy(src);
  hr_model_destroy(m);
  return hr_test_finish("test_health_stall");
}
