/* Test driver for the `headroom` element's life cycle (tests/cli/gst_lifecycle.sh, also under ASan):
 * appsrc ! headroom ! appsink with a synthetic picture (a bright moving disc on a gradient).
 *   1. PLAYING, 4 frames at 160x96 NV12, then a caps change mid-stream to 128x72 and 4 more frames:
 *      every frame comes out, at the size it went in.
 *   2. NULL, then PLAYING again: 3 more frames, EOS.
 *   3. RGBA at 96x64: the output's A channel is the matte (not all 255).
 *   4. A model that does not exist: the state change fails and the bus has an error naming it.
 *   5. GRAY8 caps: refused, and the bus has a message naming the formats the element takes.
 *   6. budget-ms changed while PLAYING (tail-every-frame, telemetry on): a latency message on the
 *      bus, the latency query answers the new budget, and the stream takes it: at 10 s a frame
 *      every buffer waits for its own network run (the telemetry's coef_age 0), at 0.1 ms none
 *      does (coef_age >= 1: the newest coefficients there are, as a 60 fps loop gets them).
 * Every output buffer carries a HeadroomMatteMeta (read with gst_buffer_get_custom_meta) of its own
 * size with a GRAY8 matte, through the caps change and NULL -> PLAYING; on RGBA its matte is the
 * output's A channel byte for byte.
 * And the latency the element answers is its budget-ms (16.7 ms) over upstream's (0).
 * No error message on the bus in 1-3; headroom-health messages seen. Exit 0 when all hold.
 * usage: hr_gst_lifecycle MODEL.json */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <gst/gst.h>
#include <gst/app/gstappsrc.h>
#include <gst/app/gstappsink.h>

static int fails = 0;
#define CHECK(c, ...) do { if (!(c)) { fails++; printf("FAIL: " __VA_ARGS__); printf("\n"); } } while (0)

static int n_health = 0, n_error = 0, n_warning = 0;
static char last_error[1024], last_warning[1024];
static int n_meta = 0, n_meta_bad = 0;   /* output buffers with a right HeadroomMatteMeta / a wrong or missing one */

/* The HeadroomMatteMeta of an output buffer, read as an application would (gst_buffer_get_custom_meta):
 * the frame's size, a GRAY8 matte of width x height bytes, a state; on RGBA output (rgba: the
 * buffer's bytes) the matte equals the A channel byte for byte. */
static long n_meta_px = 0, n_meta_px_diff = 0;
static void check_meta(GstBuffer *buf, int w, int h, const guint8 *rgba) {
  GstCustomMeta *cm = gst_buffer_get_custom_meta(buf, "HeadroomMatteMeta");
  const GstStructure *st = cm ? gst_custom_meta_get_structure(cm) : NULL;
  int mw = 0, mh = 0;
  GstBuffer *mb = NULL;
  if (st) { gst_structure_get_int(st, "width", &mw); gst_structure_get_int(st, "height", &mh); gst_structure_get(st, "matte", GST_TYPE_BUFFER, &mb, NULL); }
  gsize msz = mb ? gst_buffer_get_size(mb) : 0;
  int ok = st && mw == w && mh == h && msz == (gsize)w * h && gst_structure_get_string(st, "state");
  if (ok && rgba) {
    GstMapInfo mi;
    gst_buffer_map(mb, &mi, GST_MAP_READ);
    for (gsize i = 0; i < mi.size; i++) { n_meta_px++; n_meta_px_diff += mi.data[i] != rgba[4 * i + 3]; }
    gst_buffer_unmap(mb, &mi);
  }
  if (mb) gst_buffer_unref(mb);
  if (ok) n_meta++;
  else { n_meta_bad++; printf("bad or missing HeadroomMatteMeta on a %dx%d buffer (meta %dx%d, a matte of %zu bytes)\n", w, h, mw, mh, msz); }
}

static void drain_bus(GstElement *pipe) {
  GstBus *bus = gst_element_get_bus(pipe);
  GstMessage *m;
  while ((m = gst_bus_pop(bus))) {
    if (GST_MESSAGE_TYPE(m) == GST_MESSAGE_ELEMENT && gst_message_has_name(m, "headroom-health")) n_health++;
    if (GST_MESSAGE_TYPE(m) == GST_MESSAGE_ERROR || GST_MESSAGE_TYPE(m) == GST_MESSAGE_WARNING) {
      GError *e = NULL; gchar *dbg = NULL;
      if (GST_MESSAGE_TYPE(m) == GST_MESSAGE_ERROR) { gst_message_parse_error(m, &e, &dbg); n_error++; g_strlcpy(last_error, e->message, sizeof last_error); }
      else { gst_message_parse_warning(m, &e, &dbg); n_warning++; g_strlcpy(last_warning, e->message, sizeof last_warning); }
      printf("bus %s from %s: %s\n", GST_MESSAGE_TYPE_NAME(m), GST_OBJECT_NAME(GST_MESSAGE_SRC(m)), e->message);
      g_error_free(e); g_free(dbg);
    }
    gst_message_unref(m);
  }
  gst_object_unref(bus);
}

static GstBuffer *picture(const char *fmt, int w, int h, int k) {
  int nv12 = !strcmp(fmt, "NV12");
  gsize size = nv12 ? (gsize)w * h * 3 / 2 : (gsize)w * h * 4;
  GstBuffer *b = gst_buffer_new_allocate(NULL, size, NULL);
  GstMapInfo mi;
  gst_buffer_map(b, &mi, GST_MAP_WRITE);
  int cx = w / 3 + k * 3, cy = h / 2, r = h / 3;
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++) {
      int in = (x - cx) * (x - cx) + (y - cy) * (y - cy) < r * r;
      guint8 v = in ? 230 : (guint8)(40 + 100 * x / w);
      if (nv12) mi.data[(gsize)y * w + x] = v;
      else { guint8 *p = mi.data + ((gsize)y * w + x) * 4; p[0] = v; p[1] = in ? 180 : v; p[2] = in ? 150 : 60; p[3] = 255; }
    }
  if (nv12) memset(mi.data + (gsize)w * h, 128, (gsize)w * h / 2);
  gst_buffer_unmap(b, &mi);
  GST_BUFFER_PTS(b) = (GstClockTime)k * GST_SECOND / 30;
  GST_BUFFER_DURATION(b) = GST_SECOND / 30;
  return b;
}

static void set_caps(GstElement *src, const char *fmt, int w, int h) {
  GstCaps *c = gst_caps_new_simple("video/x-raw", "format", G_TYPE_STRING, fmt, "width", G_TYPE_INT, w, "height", G_TYPE_INT, h, "framerate",
                                   GST_TYPE_FRACTION, 30, 1, NULL);
  g_object_set(src, "caps", c, NULL);
  gst_caps_unref(c);
}

/* Push n frames, pull n samples; returns how many came out at w x h. A255 counts output pixels
 * whose A is not 255 (RGBA). */
static int run_frames(GstElement *src, GstElement *sink, const char *fmt, int w, int h, int n, int k0, long *not255) {
  int ok = 0;
  for (int i = 0; i < n; i++) {
    if (gst_app_src_push_buffer(GST_APP_SRC(src), picture(fmt, w, h, k0 + i)) != GST_FLOW_OK) break;
    GstSample *s = gst_app_sink_try_pull_sample(GST_APP_SINK(sink), 60 * GST_SECOND);
    if (!s) break;
    GstStructure *st = gst_caps_get_structure(gst_sample_get_caps(s), 0);
    int ow = 0, oh = 0;
    gst_structure_get_int(st, "width", &ow);
    gst_structure_get_int(st, "height", &oh);
    if (ow == w && oh == h) ok++;
    if (not255) {
      GstMapInfo mi;
      gst_buffer_map(gst_sample_get_buffer(s), &mi, GST_MAP_READ);
      for (gsize j = 3; j < mi.size; j += 4) *not255 += mi.data[j] != 255;
      check_meta(gst_sample_get_buffer(s), w, h, mi.data);
      gst_buffer_unmap(gst_sample_get_buffer(s), &mi);
    } else {
      check_meta(gst_sample_get_buffer(s), w, h, NULL);
    }
    gst_sample_unref(s);
  }
  return ok;
}

/* The latency the element hr answers on its src pad (its budget over upstream's): *min; 0 when unanswered. */
static gboolean latency_min(GstElement *hr, GstClockTime *min) {
  GstPad *pad = gst_element_get_static_pad(hr, "src");
  GstQuery *q = gst_query_new_latency();
  gboolean ok = gst_pad_query(pad, q), live = FALSE;
  GstClockTime max = 0;
  *min = 0;
  if (ok) gst_query_parse_latency(q, &live, min, &max);
  gst_query_unref(q);
  gst_object_unref(pad);
  return ok;
}

static GstElement *make(const char *model, const char *fmt, int w, int h, GstElement **src, GstElement **sink) {
  gchar *desc = g_strdup_printf("appsrc name=src format=time is-live=false ! headroom name=hr model=%s ratio=0.5 threads=1 composite=blur ! "
                                "appsink name=sink sync=false", model);
  GError *e = NULL;
  GstElement *pipe = gst_parse_launch(desc, &e);
  g_free(desc);
  if (!pipe) { printf("FAIL: %s\n", e ? e->message : "parse"); exit(1); }
  *src = gst_bin_get_by_name(GST_BIN(pipe), "src");
  *sink = gst_bin_get_by_name(GST_BIN(pipe), "sink");
  set_caps(*src, fmt, w, h);
  return pipe;
}

static void done(GstElement *pipe, GstElement *src, GstElement *sink) {
  drain_bus(pipe);
  gst_element_set_state(pipe, GST_STATE_NULL);
  gst_object_unref(src); gst_object_unref(sink); gst_object_unref(pipe);
}

int main(int argc, char **argv) {
  gst_init(&argc, &argv);
  if (argc < 2) { printf("usage: hr_gst_lifecycle MODEL.json\n"); return 2; }
  const char *model = argv[1];
  GstElement *src, *sink;
  /* 1 + 2 */
  GstElement *pipe = make(model, "NV12", 160, 96, &src, &sink);
  CHECK(gst_element_set_state(pipe, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE, "PLAYING");
  int a = run_frames(src, sink, "NV12", 160, 96, 4, 0, NULL);
  set_caps(src, "NV12", 128, 72);
  int b = run_frames(src, sink, "NV12", 128, 72, 4, 4, NULL);
  printf("PLAYING: %d of 4 frames at 160x96, then after a caps change %d of 4 at 128x72\n", a, b);
  {   /* latency: the element adds its budget (16.7 ms by default) to what upstream reports */
    GstElement *hr = gst_bin_get_by_name(GST_BIN(pipe), "hr");
    GstClockTime min;
    gboolean ok = latency_min(hr, &min);
    printf("latency query: %s, min %.1f ms\n", ok ? "answered" : "not answered", min / 1e6);
    CHECK(ok && min >= 16 * GST_MSECOND && min <= 18 * GST_MSECOND, "latency = budget-ms");
    gst_object_unref(hr);
  }
  CHECK(a == 4 && b == 4, "frames through the caps change");
  drain_bus(pipe);   /* a pipeline's bus is flushed at NULL */
  CHECK(gst_element_set_state(pipe, GST_STATE_NULL) == GST_STATE_CHANGE_SUCCESS, "NULL");
  CHECK(gst_element_set_state(pipe, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE, "PLAYING again");
  int c = run_frames(src, sink, "NV12", 128, 72, 3, 8, NULL);
  printf("PLAYING again after NULL: %d of 3 frames\n", c);
  CHECK(c == 3, "frames after NULL -> PLAYING");
  drain_bus(pipe);   /* (timed_pop_filtered below drops what it does not wait for) */
  gst_app_src_end_of_stream(GST_APP_SRC(src));
  GstBus *bus = gst_element_get_bus(pipe);
  GstMessage *m = gst_bus_timed_pop_filtered(bus, 30 * GST_SECOND, GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  CHECK(m && GST_MESSAGE_TYPE(m) == GST_MESSAGE_EOS, "EOS");
  if (m) gst_message_unref(m);
  gst_object_unref(bus);
  done(pipe, src, sink);
  printf("bus: %d headroom-health messages, %d errors\n", n_health, n_error);
  printf("HeadroomMatteMeta: on %d of %d output buffers, at their size, with a matte (%d wrong or missing)\n", n_meta, a + b + c, n_meta_bad);
  CHECK(n_meta == a + b + c && n_meta_bad == 0, "a matte meta on every output buffer, through the caps change and NULL -> PLAYING");
  CHECK(n_health >= 3 && n_error == 0, "health messages (first frame, new caps, after NULL) and no error");
  /* 3: RGBA carries the matte in A */
  pipe = make(model, "RGBA", 96, 64, &src, &sink);
  gst_element_set_state(pipe, GST_STATE_PLAYING);
  long not255 = 0;
  int d = run_frames(src, sink, "RGBA", 96, 64, 2, 0, &not255);
  printf("RGBA: %d of 2 frames, %ld pixels with A != 255 (the matte)\n", d, not255);
  CHECK(d == 2 && not255 > 0, "RGBA output with the matte as alpha");
  printf("RGBA: the HeadroomMatteMeta's matte differs from the output's A at %ld of %ld pixels; %d buffers without a right meta\n", n_meta_px_diff,
         n_meta_px, n_meta_bad);
  CHECK(n_meta_px == 2L * 96 * 64 && n_meta_px_diff == 0 && n_meta_bad == 0, "the matte meta equals the RGBA output's alpha");
  done(pipe, src, sink);
  CHECK(n_error == 0, "no error with RGBA");
  /* 4: a model that is not there */
  n_error = 0;
  pipe = make("/nonexistent/model.json", "NV12", 64, 64, &src, &sink);
  GstStateChangeReturn r = gst_element_set_state(pipe, GST_STATE_PLAYING);
  if (r == GST_STATE_CHANGE_ASYNC) r = gst_element_get_state(pipe, NULL, NULL, 10 * GST_SECOND);
  drain_bus(pipe);
  printf("missing model: state change %s, bus error '%s'\n", gst_element_state_change_return_get_name(r), last_error);
  CHECK(r == GST_STATE_CHANGE_FAILURE && n_error >= 1 && strstr(last_error, "cannot load model"), "missing model refused");
  done(pipe, src, sink);
  /* 5: unsupported caps */
  n_error = n_warning = 0;
  pipe = make(model, "GRAY8", 64, 64, &src, &sink);
  gst_element_set_state(pipe, GST_STATE_PLAYING);
  GstBuffer *g = gst_buffer_new_allocate(NULL, 64 * 64, NULL);
  gst_buffer_memset(g, 0, 100, 64 * 64);
  GstFlowReturn fr = gst_app_src_push_buffer(GST_APP_SRC(src), g);
  bus = gst_element_get_bus(pipe);
  m = gst_bus_timed_pop_filtered(bus, 10 * GST_SECOND, GST_MESSAGE_ERROR | GST_MESSAGE_WARNING);
  if (m) gst_bus_post(bus, m);   /* back on the bus for drain_bus */
  gst_object_unref(bus);
  g_usleep(200000);
  drain_bus(pipe);
  printf("GRAY8: push %s, warning '%s'\n", gst_flow_get_name(fr), last_warning);
  CHECK(n_warning >= 1 && strstr(last_warning, "NV12, I420, BGRx, BGRA, RGB, RGBA") && strstr(last_warning, "GRAY8"), "GRAY8 refused naming the formats");
  done(pipe, src, sink);
  /* 6: the budget changed on a live pipeline */
  {
    n_error = 0;
    gchar *tel = g_strdup_printf("%s/hr_gst_budget_%d.jsonl", g_get_tmp_dir(), (int)getpid());
    gchar *desc = g_strdup_printf("appsrc name=src format=time is-live=false ! headroom name=hr model=%s ratio=0.5 threads=1 "
                                  "tail-every-frame=true budget-ms=10000 telemetry=%s ! appsink name=sink sync=false", model, tel);
    pipe = gst_parse_launch(desc, NULL);
    g_free(desc);
    src = gst_bin_get_by_name(GST_BIN(pipe), "src");
    sink = gst_bin_get_by_name(GST_BIN(pipe), "sink");
    set_caps(src, "NV12", 160, 96);
    GstElement *hr = gst_bin_get_by_name(GST_BIN(pipe), "hr");
    gst_element_set_state(pipe, GST_STATE_PLAYING);
    int e = run_frames(src, sink, "NV12", 160, 96, 12, 0, NULL);
    drain_bus(pipe);
    g_object_set(hr, "budget-ms", 0.1, NULL);
    GstBus *b6 = gst_element_get_bus(pipe);
    GstMessage *lm = gst_bus_timed_pop_filtered(b6, 5 * GST_SECOND, GST_MESSAGE_LATENCY);
    CHECK(lm != NULL, "a latency message after budget-ms changed while PLAYING");
    if (lm) gst_message_unref(lm);
    gst_object_unref(b6);
    GstClockTime min;
    gboolean ok = latency_min(hr, &min);
    printf("budget-ms 10000 -> 0.1 while PLAYING: latency query %s, min %.2f ms\n", ok ? "answered" : "not answered", min / 1e6);
    CHECK(ok && min >= 90 * GST_USECOND && min <= 110 * GST_USECOND, "latency = the new budget-ms");
    int f = run_frames(src, sink, "NV12", 160, 96, 40, 12, NULL);
    done(pipe, src, sink);
    gst_object_unref(hr);
    /* the telemetry's coef_age, frame by frame: 0 while each buffer waits for its own run, then >= 1 */
    FILE *tf = fopen(tel, "r");
    char line[4096];
    int n = 0, before_old = 0, after_old = 0;
    while (tf && fgets(line, sizeof line, tf)) {
      const char *k = strstr(line, "\"coef_age\":");
      if (!k || !strstr(line, "\"frame\"")) continue;
      int age = atoi(k + 11);
      if (n < 12) before_old += age != 0;
      else after_old += age >= 1;
      n++;
    }
    if (tf) fclose(tf);
    remove(tel);
    g_free(tel);
    printf("budget-ms while PLAYING: %d + %d frames, telemetry %d frames: at 10 s %d of 12 without their own run's "
           "coefficients, at 0.1 ms %d of %d\n", e, f, n, before_old, after_old, n - 12);
    CHECK(e == 12 && f == 40 && n == 52, "every frame through and in the telemetry");
    CHECK(before_old == 0, "at 10 s a frame every buffer waits for its own run");
    CHECK(after_old >= 36, "the stream took the new budget: no buffer waits");
    CHECK(n_error == 0, "no error with the budget changed");
  }
  gst_deinit();
  printf("%s\n", fails ? "hr_gst_lifecycle: FAILED" : "hr_gst_lifecycle: ok");
  return fails ? 1 : 0;
}
