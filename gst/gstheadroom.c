/* The GStreamer element `headroom`: a GstVideoFilter that runs each frame through a headroom
 * stream (hr_stream: the model with its recurrent state, the resolution ladder, the memory governor
 * and the health monitor) and writes the composite (hr_compositor: the person over a blurred
 * frame, a colour, an image or a looped video; or the matte alone) into the output buffer, in the
 * input's format, with the matte attached as a meta.
 *
 * Caps: NV12, I420, BGRx, BGRA, RGB, RGBA at any size (NV12 / I420: even) and frame rate; the
 * output caps are the input's. RGBA output carries the matte in its A channel (the composite's
 * colours); composite=alpha writes the 8-bit matte itself into Y (YUV) or R = G = B.
 * The stream is made when caps are set and made again when they change (a new size). The model is
 * loaded at READY -> PAUSED (start): a model that does not load fails the state change with an
 * error on the bus.
 *
 * Bus messages (element messages, from this element):
 *   headroom-health  at the first frame and whenever the health state or what the picture shows
 *                    changes: frame (guint64), state (string: warming-up, healthy, degraded,
 *                    recalibrating, suspended, failed), reason (string), confidence (double),
 *                    shows (string: matte, hold, blur-all, passthrough), shows-reason (string).
 *   headroom-stats   once a second: frames (guint64, since start), fps (double, over the last
 *                    second), infer-ms / process-ms (double, mean over the last second: the model;
 *                    the whole transform), proc-width / proc-height (int), ratio (double), rung
 *                    (int), rss-bytes (gint64; -1 unknown). QoS drops are GStreamer's own qos messages.
 * Matte meta: each output buffer carries a GstCustomMeta named "HeadroomMatteMeta" (attach-matte,
 * default on) whose structure holds: matte (GstBuffer, GRAY8, width x height bytes, rows of width
 * bytes: round(alpha x 255) of this frame, as `headroom run`'s alpha PNGs; absent when the frame
 * has no matte, e.g. suspended), width, height (int), frame (guint64), state (string), reason
 * (string), confidence (double), output-ok (boolean: the matte is to be trusted), shows (string:
 * what the composite shows). Read it with gst_buffer_get_custom_meta(buf, "HeadroomMatteMeta") and
 * gst_custom_meta_get_structure (Python: buf.get_custom_meta("HeadroomMatteMeta").get_structure()).
 * Latency: budget-ms is added to the upstream latency. QoS is on: late buffers are dropped before
 * the model runs (the newest frame wins). budget-ms may change while PLAYING (a camera dropping
 * to 30 fps, a thermal cap): the stream takes it at the next buffer (hr_stream_set_budget: with
 * tail-every-frame the network's lag bound follows it) and the element posts a latency message so
 * that the pipeline asks again. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <gst/gst.h>
#include <gst/video/video.h>
#include <gst/video/gstvideofilter.h>
#include "headroom.h"
#include "headroom/composite.h"
#include "headroom/io.h"

#define GST_TYPE_HEADROOM (gst_headroom_get_type())
G_DECLARE_FINAL_TYPE(GstHeadroom, gst_headroom, GST, HEADROOM, GstVideoFilter)

GST_DEBUG_CATEGORY_STATIC(gst_headroom_debug);
#define GST_CAT_DEFAULT gst_headroom_debug

#define HR_GST_FORMATS "NV12, I420, BGRx, BGRA, RGB, RGBA"
#define HR_MATTE_META "HeadroomMatteMeta"

struct _GstHeadroom {
  GstVideoFilter parent;
  /* properties */
  gchar *model, *profile, *backend, *composite, *background, *fallback, *telemetry, *inject;
  gfloat ratio;
  gdouble budget_ms;           /* properties are under the object lock (set from the application's thread) */
  gint threads;
  gboolean attach_matte;
  gboolean tail_every_frame;
  /* made at start */
  hr_model *m;
  hr_composite_params cp;      /* parsed composite / background / fallback */
  gboolean copy_only;          /* composite=none */
  guint8 *image;               /* decoded background picture (R G B) */
  hr_source *bgv;              /* video:FILE: one frame per output frame, reopened at its end */
  gchar *bgv_path;
  guint64 bgv_loops;
  hr_telemetry *tel;
  /* made at set_info */
  hr_stream *stream;
  gdouble budget_stream;       /* the budget the stream has (streaming thread) */
  hr_compositor *comp;
  GstBufferPool *matte_pool;   /* GRAY8 w x h buffers for the matte meta */
  hr_pixfmt fmt;
  gboolean rgba;               /* RGBA caps: swizzled into scratch (B G R A) for the model */
  guint8 *scratch;
  gsize scratch_size;
  gint w, h;
  /* per frame */
  gint64 last_ts;
  guint64 frames;
  gint last_state, last_action;
  gint64 stat_t0;              /* monotonic us */
  guint64 stat_frames;
  gdouble stat_infer, stat_proc;
};

G_DEFINE_TYPE(GstHeadroom, gst_headroom, GST_TYPE_VIDEO_FILTER);

enum {
  PROP_0, PROP_MODEL, PROP_RATIO, PROP_BUDGET_MS, PROP_PROFILE, PROP_BACKEND, PROP_COMPOSITE, PROP_BACKGROUND,
  PROP_FALLBACK, PROP_THREADS, PROP_TELEMETRY, PROP_INJECT, PROP_ATTACH_MATTE, PROP_TAIL_EVERY_FRAME,
};

#define DEF_MODEL "rvm"
#define DEF_COMPOSITE "blur"
#define DEF_FALLBACK "hold"
#define DEF_BACKEND "xnnpack"

static GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE("sink", GST_PAD_SINK, GST_PAD_ALWAYS,
                                                                    GST_STATIC_CAPS(GST_VIDEO_CAPS_MAKE("{ " HR_GST_FORMATS " }")));
static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE("src", GST_PAD_SRC, GST_PAD_ALWAYS,
                                                                   GST_STATIC_CAPS(GST_VIDEO_CAPS_MAKE("{ " HR_GST_FORMATS " }")));

/* ---- properties ------------------------------------------------------------------------------ */

static void set_str(gchar **dst, const GValue *v) { g_free(*dst); *dst = g_value_dup_string(v); }

static void gst_headroom_set_property(GObject *obj, guint id, const GValue *v, GParamSpec *ps) {
  GstHeadroom *self = GST_HEADROOM(obj);
  gboolean latency = FALSE;   /* budget-ms changed: the latency the element answers with it */
  GST_OBJECT_LOCK(self);
  switch (id) {
    case PROP_MODEL: set_str(&self->model, v); break;
    case PROP_RATIO: self->ratio = g_value_get_float(v); break;
    case PROP_BUDGET_MS:
      latency = self->budget_ms != g_value_get_double(v);
      self->budget_ms = g_value_get_double(v);
      break;
    case PROP_PROFILE: set_str(&self->profile, v); break;
    case PROP_BACKEND: set_str(&self->backend, v); break;
    case PROP_COMPOSITE: set_str(&self->composite, v); break;
    case PROP_BACKGROUND: set_str(&self->background, v); break;
    case PROP_FALLBACK: set_str(&self->fallback, v); break;
    case PROP_THREADS: self->threads = g_value_get_int(v); break;
    case PROP_TELEMETRY: set_str(&self->telemetry, v); break;
    case PROP_INJECT: set_str(&self->inject, v); break;
    case PROP_ATTACH_MATTE: self->attach_matte = g_value_get_boolean(v); break;
    case PROP_TAIL_EVERY_FRAME: self->tail_every_frame = g_value_get_boolean(v); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID(obj, id, ps); break;
  }
  GST_OBJECT_UNLOCK(self);
  /* the pipeline is to ask the latency again (the stream takes the budget at its next buffer) */
  if (latency) gst_element_post_message(GST_ELEMENT(self), gst_message_new_latency(GST_OBJECT(self)));
}

static void gst_headroom_get_property(GObject *obj, guint id, GValue *v, GParamSpec *ps) {
  GstHeadroom *self = GST_HEADROOM(obj);
  GST_OBJECT_LOCK(self);
  switch (id) {
    case PROP_MODEL: g_value_set_string(v, self->model); break;
    case PROP_RATIO: g_value_set_float(v, self->ratio); break;
    case PROP_BUDGET_MS: g_value_set_double(v, self->budget_ms); break;
    case PROP_PROFILE: g_value_set_string(v, self->profile); break;
    case PROP_BACKEND: g_value_set_string(v, self->backend); break;
    case PROP_COMPOSITE: g_value_set_string(v, self->composite); break;
    case PROP_BACKGROUND: g_value_set_string(v, self->background); break;
    case PROP_FALLBACK: g_value_set_string(v, self->fallback); break;
    case PROP_THREADS: g_value_set_int(v, self->threads); break;
    case PROP_TELEMETRY: g_value_set_string(v, self->telemetry); break;
    case PROP_INJECT: g_value_set_string(v, self->inject); break;
    case PROP_ATTACH_MATTE: g_value_set_boolean(v, self->attach_matte); break;
    case PROP_TAIL_EVERY_FRAME: g_value_set_boolean(v, self->tail_every_frame); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID(obj, id, ps); break;
  }
  GST_OBJECT_UNLOCK(self);
}

/* ---- start / stop: the model, the background, the telemetry file ------------------------------ */

/* A model name (rvm, meet, selfie) is looked up in $HR_MODEL_DIR, then ~/.cache/headroom/models;
 * anything else is a path (a .json file or a folder holding one). */
static gchar *model_path(const gchar *arg) {
  if (!arg || !*arg) arg = DEF_MODEL;
  if (strchr(arg, '/') || g_str_has_suffix(arg, ".json")) return g_strdup(arg);
  const gchar *env = g_getenv("HR_MODEL_DIR");
  gchar *p = NULL;
  if (env) {
    p = g_strdup_printf("%s/%s.json", env, arg);
    if (g_file_test(p, G_FILE_TEST_EXISTS)) return p;
    g_free(p);
  }
  p = g_build_filename(g_get_user_cache_dir(), "headroom", "models", arg, NULL);
  gchar *j = g_strdup_printf("%s.json", p);
  g_free(p);
  return j;
}

static void release_stream(GstHeadroom *self) {
  hr_stream_destroy(self->stream); self->stream = NULL;
  hr_compositor_destroy(self->comp); self->comp = NULL;
  g_free(self->scratch); self->scratch = NULL; self->scratch_size = 0;
  if (self->matte_pool) {
    gst_buffer_pool_set_active(self->matte_pool, FALSE);
    gst_object_unref(self->matte_pool);
    self->matte_pool = NULL;
  }
}

static gboolean gst_headroom_start(GstBaseTransform *trans) {
  GstHeadroom *self = GST_HEADROOM(trans);
  char err[1024];
  gchar *path = model_path(self->model);
  hr_status st = hr_model_load(path, &self->m, err, sizeof err);
  if (st) {
    GST_ELEMENT_ERROR(self, RESOURCE, NOT_FOUND, ("headroom: cannot load model '%s': %s", self->model ? self->model : DEF_MODEL, err),
                      ("model path %s (%s)", path, hr_status_name(st)));
    g_free(path);
    return FALSE;
  }
  g_free(path);
  /* composite: "blur|color|image|alpha|none" with background RADIUS / RRGGBB / FILE, or a whole
   * spec as the CLI takes it ("color:00b140") */
  hr_composite_params_default(&self->cp);
  const gchar *c = self->composite ? self->composite : DEF_COMPOSITE;
  self->copy_only = !strcmp(c, "none");
  gchar *spec = NULL;
  if (!self->copy_only) {
    if (self->background && *self->background && !strchr(c, ':'))
      spec = !strcmp(c, "color") && self->background[0] != '#' ? g_strdup_printf("color:%s", self->background) : g_strdup_printf("%s:%s", c, self->background);
    else
      spec = !strcmp(c, "color") ? g_strdup("color:00b140") : g_strdup(c);
    const char *ip = NULL;
    if (hr_composite_parse(spec, &self->cp, &ip, err, sizeof err) ||
        hr_composite_parse_fallback(self->fallback ? self->fallback : DEF_FALLBACK, &self->cp, err, sizeof err)) {
      GST_ELEMENT_ERROR(self, LIBRARY, SETTINGS, ("headroom: %s", err), ("composite=%s background=%s fallback=%s", c,
                        self->background ? self->background : "", self->fallback ? self->fallback : DEF_FALLBACK));
      g_free(spec);
      return FALSE;
    }
    if (ip && self->cp.mode == HR_COMPOSITE_MODE_VIDEO) {   /* opened now: a bad file fails the state change */
      if ((st = hr_source_open(ip, NULL, &self->bgv, err, sizeof err))) {
        GST_ELEMENT_ERROR(self, RESOURCE, NOT_FOUND, ("headroom: background video: %s", err), (NULL));
        g_free(spec);
        return FALSE;
      }
      self->bgv_path = g_strdup(ip);
      self->bgv_loops = 0;
      ip = NULL;
    }
    if (ip) {
      hr_source *src = NULL;
      hr_frame f;
      st = hr_source_open(ip, NULL, &src, err, sizeof err);
      if (!st && (st = hr_source_read(src, &f))) g_strlcpy(err, hr_source_last_error(src), sizeof err);
      if (!st && f.fmt != HR_PIX_RGB24) { st = HR_ENOTSUP; g_snprintf(err, sizeof err, "%s: not a PNG or JPEG picture", ip); }
      if (!st) {
        self->image = g_malloc((gsize)f.width * f.height * 3);
        for (int y = 0; y < f.height; y++) memcpy(self->image + (gsize)y * f.width * 3, (const guint8 *)f.planes[0] + y * f.strides[0], (gsize)f.width * 3);
        self->cp.image = self->image; self->cp.image_width = f.width; self->cp.image_height = f.height;
        self->cp.image_stride = (ptrdiff_t)f.width * 3;
      }
      hr_source_destroy(src);
      if (st) {
        GST_ELEMENT_ERROR(self, RESOURCE, NOT_FOUND, ("headroom: background image: %s", err), (NULL));
        g_free(spec);
        return FALSE;
      }
    }
  }
  g_free(spec);
  if (self->telemetry && *self->telemetry) {
    hr_telemetry_params tp;
    hr_telemetry_params_default(&tp);
    if (hr_telemetry_open(self->telemetry, &tp, &self->tel, err, sizeof err)) {
      GST_ELEMENT_ERROR(self, RESOURCE, OPEN_WRITE, ("headroom: telemetry: %s", err), (NULL));
      return FALSE;
    }
  }
  self->frames = 0;
  self->last_ts = G_MININT64;
  self->last_state = -1; self->last_action = -1;
  self->stat_t0 = g_get_monotonic_time(); self->stat_frames = 0; self->stat_infer = self->stat_proc = 0;
  return TRUE;
}

static gboolean gst_headroom_stop(GstBaseTransform *trans) {
  GstHeadroom *self = GST_HEADROOM(trans);
  release_stream(self);
  hr_telemetry_close(self->tel); self->tel = NULL;
  hr_model_destroy(self->m); self->m = NULL;
  g_free(self->image); self->image = NULL;
  self->cp.image = NULL;
  hr_source_destroy(self->bgv); self->bgv = NULL;
  g_free(self->bgv_path); self->bgv_path = NULL;
  return TRUE;
}

/* ---- caps: (re)make the stream and the compositor for this format and size -------------------- */

static gboolean gst_headroom_set_info(GstVideoFilter *filter, GstCaps *incaps, GstVideoInfo *in, GstCaps *outcaps, GstVideoInfo *out) {
  GstHeadroom *self = GST_HEADROOM(filter);
  int w = GST_VIDEO_INFO_WIDTH(in), h = GST_VIDEO_INFO_HEIGHT(in);
  gboolean full = in->colorimetry.range == GST_VIDEO_COLOR_RANGE_0_255;
  hr_pixfmt fmt = HR_PIX_NONE;
  gboolean rgba = FALSE;
  switch (GST_VIDEO_INFO_FORMAT(in)) {
    case GST_VIDEO_FORMAT_NV12: fmt = full ? HR_PIX_NV12_FULL : HR_PIX_NV12_VIDEO; break;
    case GST_VIDEO_FORMAT_I420: fmt = full ? HR_PIX_I420_FULL : HR_PIX_I420_VIDEO; break;
    case GST_VIDEO_FORMAT_BGRx: case GST_VIDEO_FORMAT_BGRA: fmt = HR_PIX_BGRA; break;
    case GST_VIDEO_FORMAT_RGB: fmt = HR_PIX_RGB24; break;
    case GST_VIDEO_FORMAT_RGBA: fmt = HR_PIX_BGRA; rgba = TRUE; break;
    default: break;
  }
  if (fmt == HR_PIX_NONE) {
    GST_ELEMENT_ERROR(self, CORE, NEGOTIATION, ("headroom accepts video/x-raw in " HR_GST_FORMATS ", not %s", gst_video_format_to_string(GST_VIDEO_INFO_FORMAT(in))), (NULL));
    return FALSE;
  }
  if ((fmt == HR_PIX_NV12_FULL || fmt == HR_PIX_NV12_VIDEO || fmt == HR_PIX_I420_FULL || fmt == HR_PIX_I420_VIDEO) && ((w | h) & 1)) {
    GST_ELEMENT_ERROR(self, CORE, NEGOTIATION, ("headroom: %s needs an even width and height, not %dx%d (convert to RGB, or crop)",
                      gst_video_format_to_string(GST_VIDEO_INFO_FORMAT(in)), w, h), (NULL));
    return FALSE;
  }
  if (!self->m) return FALSE;
  if (self->stream && self->w == w && self->h == h && self->fmt == fmt && self->rgba == rgba) return TRUE;
  release_stream(self);
  char err[1024];
  hr_stream_params p;
  hr_stream_params_default(&p);
  p.session.width = w; p.session.height = h;
  p.session.downsample_ratio = self->ratio;
  p.session.threads = self->threads;
  /* the bytes alone (the guided-filter tail writes them; no float matte): the matte meta's, and what
   * the compositor blends with (hr_compositor_apply_u8). A fault injector makes the stream keep
   * its float matte, which the compositor then takes. */
  p.session.alpha_u8 = TRUE;
  p.alpha_u8_only = TRUE;
  if (self->backend && !strcmp(self->backend, "reference")) p.session.backend = HR_BACKEND_REFERENCE;
  else if (self->backend && !strcmp(self->backend, "vulkan")) p.session.backend = HR_BACKEND_VULKAN;
  else if (self->backend && !strcmp(self->backend, "auto")) p.session.backend = HR_BACKEND_AUTO;
  else if (self->backend && strcmp(self->backend, "xnnpack")) {
    GST_ELEMENT_ERROR(self, LIBRARY, SETTINGS, ("headroom: backend is xnnpack, reference, vulkan or auto, not '%s'", self->backend), (NULL));
    return FALSE;
  }
  GST_OBJECT_LOCK(self);
  p.budget_ms = self->budget_stream = self->budget_ms;
  GST_OBJECT_UNLOCK(self);
  /* the network on its own thread, its size kept within the lag bound; the tail on every buffer */
  p.tail_every_frame = p.adapt = self->tail_every_frame;
  p.inject = self->inject && *self->inject ? self->inject : NULL;
  if (self->profile && *self->profile) {
    if (hr_gov_profile_parse(self->profile, &p.profile, err, sizeof err)) {
      GST_ELEMENT_ERROR(self, LIBRARY, SETTINGS, ("headroom: profile: %s", err), (NULL));
      return FALSE;
    }
    p.governor = true;
  }
  hr_status st = hr_stream_create(self->m, &p, &self->stream, err, sizeof err);
  if (st) {
    GST_ELEMENT_ERROR(self, LIBRARY, INIT, ("headroom: cannot start the stream at %dx%d: %s", w, h, err), ("%s", hr_status_name(st)));
    return FALSE;
  }
  if (!self->copy_only) {
    hr_composite_params cp = self->cp;
    cp.width = w; cp.height = h; cp.format = fmt; cp.out_rgba = rgba;
    if ((st = hr_compositor_create(&cp, &self->comp, err, sizeof err))) {
      GST_ELEMENT_ERROR(self, LIBRARY, INIT, ("headroom: %s", err), (NULL));
      release_stream(self);
      return FALSE;
    }
  }
  if (rgba) {
    self->scratch_size = (gsize)w * h * 4;
    self->scratch = g_malloc(self->scratch_size);
  }
  if (self->attach_matte) {   /* the matte meta's buffers, reused as downstream releases them */
    self->matte_pool = gst_buffer_pool_new();
    GstStructure *pc = gst_buffer_pool_get_config(self->matte_pool);
    gst_buffer_pool_config_set_params(pc, NULL, (guint)w * h, 2, 0);
    if (!gst_buffer_pool_set_config(self->matte_pool, pc) || !gst_buffer_pool_set_active(self->matte_pool, TRUE)) {
      GST_ELEMENT_ERROR(self, RESOURCE, FAILED, ("headroom: cannot make the matte buffer pool (%dx%d)", w, h), (NULL));
      release_stream(self);
      return FALSE;
    }
  }
  self->w = w; self->h = h; self->fmt = fmt; self->rgba = rgba;
  self->last_state = -1;   /* a new stream: its first frame is announced */
  GST_INFO_OBJECT(self, "stream at %dx%d %s%s", w, h, hr_pixfmt_name(fmt), rgba ? " (from RGBA)" : "");
  return TRUE;
}

/* ---- queries: latency; caps refused with the list of formats ---------------------------------- */

static gboolean gst_headroom_query(GstBaseTransform *trans, GstPadDirection dir, GstQuery *q) {
  GstHeadroom *self = GST_HEADROOM(trans);
  if (GST_QUERY_TYPE(q) == GST_QUERY_LATENCY && dir == GST_PAD_SRC) {
    if (!GST_BASE_TRANSFORM_CLASS(gst_headroom_parent_class)->query(trans, dir, q)) return FALSE;
    gboolean live;
    GstClockTime min, max;
    gst_query_parse_latency(q, &live, &min, &max);
    GST_OBJECT_LOCK(self);
    GstClockTime lat = (GstClockTime)(self->budget_ms * GST_MSECOND);
    GST_OBJECT_UNLOCK(self);
    min += lat;
    if (GST_CLOCK_TIME_IS_VALID(max)) max += lat;
    gst_query_set_latency(q, live, min, max);
    GST_DEBUG_OBJECT(self, "latency: adds %" GST_TIME_FORMAT, GST_TIME_ARGS(lat));
    return TRUE;
  }
  gboolean res = GST_BASE_TRANSFORM_CLASS(gst_headroom_parent_class)->query(trans, dir, q);
  if (GST_QUERY_TYPE(q) == GST_QUERY_ACCEPT_CAPS && dir == GST_PAD_SINK) {
    gboolean ok = FALSE;
    GstCaps *caps = NULL;
    gst_query_parse_accept_caps_result(q, &ok);
    gst_query_parse_accept_caps(q, &caps);
    if (!ok && caps && gst_caps_is_fixed(caps)) {
      const GstStructure *s = gst_caps_get_structure(caps, 0);
      const gchar *f = gst_structure_get_string(s, "format");
      gchar *str = gst_caps_to_string(caps);
      GST_ELEMENT_WARNING(self, CORE, NEGOTIATION, ("headroom accepts video/x-raw in " HR_GST_FORMATS ", not %s", f ? f : str), ("refused caps %s", str));
      g_free(str);
    }
  }
  return res;
}

/* ---- frames ---------------------------------------------------------------------------------- */

static void post_health(GstHeadroom *self, const hr_stream_result *r, const hr_composite_result *cr) {
  GstStructure *s = gst_structure_new("headroom-health", "frame", G_TYPE_UINT64, (guint64)self->frames, "state", G_TYPE_STRING,
                                      hr_health_state_name(r->health.state), "reason", G_TYPE_STRING, r->health.reason ? r->health.reason : "",
                                      "confidence", G_TYPE_DOUBLE, (double)r->health.confidence, "shows", G_TYPE_STRING,
                                      cr ? hr_composite_action_name(cr->action) : "passthrough", "shows-reason", G_TYPE_STRING,
                                      cr && cr->reason ? cr->reason : "", NULL);
  gst_element_post_message(GST_ELEMENT(self), gst_message_new_element(GST_OBJECT(self), s));
}

static void post_stats(GstHeadroom *self, const hr_stream_result *r, gint64 now) {
  double secs = (now - self->stat_t0) / 1e6;
  GstStructure *s = gst_structure_new("headroom-stats", "frames", G_TYPE_UINT64, (guint64)self->frames, "fps", G_TYPE_DOUBLE,
                                      self->stat_frames / secs, "infer-ms", G_TYPE_DOUBLE, self->stat_infer / self->stat_frames,
                                      "process-ms", G_TYPE_DOUBLE, self->stat_proc / self->stat_frames, "proc-width", G_TYPE_INT,
                                      r->record.proc_w, "proc-height", G_TYPE_INT, r->record.proc_h, "ratio", G_TYPE_DOUBLE,
                                      (double)r->record.ratio, "rung", G_TYPE_INT, r->rung, "rss-bytes", G_TYPE_INT64,
                                      (gint64)r->record.rss_bytes, NULL);
  gst_element_post_message(GST_ELEMENT(self), gst_message_new_element(GST_OBJECT(self), s));
  self->stat_t0 = now; self->stat_frames = 0; self->stat_infer = self->stat_proc = 0;
}

/* The HeadroomMatteMeta of an output buffer: this frame's matte as GRAY8 (the compositor's own
 * 8-bit matte when it showed it, else the stream's, hr_stream_result.alpha_u8, rounded the same
 * way: round(alpha x 255), ties to even) and the health verdict. */
static void attach_matte(GstHeadroom *self, GstBuffer *out, const hr_stream_result *r, const hr_composite_result *cr) {
  if (!gst_buffer_is_writable(out)) { GST_WARNING_OBJECT(self, "output buffer not writable: no matte meta"); return; }
  GstCustomMeta *cm = gst_buffer_add_custom_meta(out, HR_MATTE_META);
  if (!cm) return;
  GstStructure *s = gst_custom_meta_get_structure(cm);
  gst_structure_set(s, "frame", G_TYPE_UINT64, (guint64)self->frames, "width", G_TYPE_INT, self->w, "height", G_TYPE_INT, self->h,
                    "state", G_TYPE_STRING, hr_health_state_name(r->health.state), "reason", G_TYPE_STRING, r->health.reason ? r->health.reason : "",
                    "confidence", G_TYPE_DOUBLE, (double)r->health.confidence, "output-ok", G_TYPE_BOOLEAN, (gboolean)r->health.output_ok,
                    "shows", G_TYPE_STRING, cr ? hr_composite_action_name(cr->action) : "none", NULL);
  if (!r->alpha_u8) return;   /* no matte (a suspended frame): the element always asks for the bytes */
  GstBuffer *mb = NULL;
  if (gst_buffer_pool_acquire_buffer(self->matte_pool, &mb, NULL) != GST_FLOW_OK || !mb) return;
  GstMapInfo mi;
  if (gst_buffer_map(mb, &mi, GST_MAP_WRITE)) {
    gsize n = (gsize)self->w * self->h;
    const guint8 *cm8 = cr && cr->action == HR_COMPOSITE_ACTION_MATTE ? hr_compositor_matte(self->comp) : NULL;
    memcpy(mi.data, cm8 ? cm8 : r->alpha_u8, n);   /* the stream's bytes: the same rounding */
    gst_buffer_unmap(mb, &mi);
    gst_structure_set(s, "matte", GST_TYPE_BUFFER, mb, NULL);
  }
  gst_buffer_unref(mb);
}

static GstFlowReturn gst_headroom_transform_frame(GstVideoFilter *filter, GstVideoFrame *inf, GstVideoFrame *outf) {
  GstHeadroom *self = GST_HEADROOM(filter);
  if (!self->stream) {
    GST_ELEMENT_ERROR(self, CORE, NEGOTIATION, ("headroom: no caps were set before the first buffer"), (NULL));
    return GST_FLOW_NOT_NEGOTIATED;
  }
  gint64 t0 = g_get_monotonic_time();
  hr_frame f;
  memset(&f, 0, sizeof f);
  f.fmt = self->fmt; f.width = self->w; f.height = self->h;
  for (guint i = 0; i < GST_VIDEO_FRAME_N_PLANES(inf) && i < 3; i++) {
    f.planes[i] = GST_VIDEO_FRAME_PLANE_DATA(inf, i);
    f.strides[i] = GST_VIDEO_FRAME_PLANE_STRIDE(inf, i);
  }
  if (self->rgba) {   /* R G B A -> B G R A for the model (the compositor reads this copy too) */
    for (int y = 0; y < self->h; y++) {
      const guint8 *s = (const guint8 *)f.planes[0] + (gsize)y * f.strides[0];
      guint8 *d = self->scratch + (gsize)y * self->w * 4;
      for (int x = 0; x < self->w; x++) { d[4 * x] = s[4 * x + 2]; d[4 * x + 1] = s[4 * x + 1]; d[4 * x + 2] = s[4 * x]; d[4 * x + 3] = s[4 * x + 3]; }
    }
    f.planes[0] = self->scratch; f.strides[0] = (ptrdiff_t)self->w * 4;
  }
  GstClockTime pts = GST_BUFFER_PTS(inf->buffer);
  gint64 ts = GST_CLOCK_TIME_IS_VALID(pts) ? (gint64)pts : (gint64)self->frames * 33333333;
  if (self->last_ts != G_MININT64 && ts <= self->last_ts) ts = self->last_ts + 1;
  self->last_ts = ts;
  f.ts_ns = ts;
  GST_OBJECT_LOCK(self);
  const gdouble budget = self->budget_ms;
  GST_OBJECT_UNLOCK(self);
  if (budget != self->budget_stream && hr_stream_set_budget(self->stream, budget) == HR_OK) {
    GST_INFO_OBJECT(self, "frame budget %.2f -> %.2f ms", self->budget_stream, budget);
    self->budget_stream = budget;
  }
  hr_stream_result r;
  hr_status st = hr_stream_push(self->stream, &f, &r);
  if (st) {
    GST_ELEMENT_ERROR(self, STREAM, FAILED, ("headroom: frame %" G_GUINT64_FORMAT ": %s", self->frames, hr_stream_last_error(self->stream)),
                      ("%s", hr_status_name(st)));
    return GST_FLOW_ERROR;
  }
  if (self->bgv && self->comp) {   /* the background video's next frame; at its end, from the start again */
    hr_frame bf;
    char err[1024];
    st = hr_source_read(self->bgv, &bf);
    if (st == HR_EEOF) {
      hr_source_destroy(self->bgv); self->bgv = NULL;
      if ((st = hr_source_open(self->bgv_path, NULL, &self->bgv, err, sizeof err))) {
        GST_ELEMENT_ERROR(self, RESOURCE, READ, ("headroom: background video: reopening: %s", err), (NULL));
        return GST_FLOW_ERROR;
      }
      self->bgv_loops++;
      GST_DEBUG_OBJECT(self, "background video %s from the start (loop %" G_GUINT64_FORMAT ")", self->bgv_path, self->bgv_loops);
      st = hr_source_read(self->bgv, &bf);
    }
    if (st || hr_compositor_set_background(self->comp, &bf)) {
      GST_ELEMENT_ERROR(self, RESOURCE, READ, ("headroom: background video %s: %s", self->bgv_path,
                        st ? hr_source_last_error(self->bgv) : hr_compositor_last_error(self->comp)), (NULL));
      return GST_FLOW_ERROR;
    }
  }
  hr_composite_result cr, *crp = NULL;
  if (self->comp) {
    hr_composite_out o;
    memset(&o, 0, sizeof o);
    for (guint i = 0; i < GST_VIDEO_FRAME_N_PLANES(outf) && i < 3; i++) {
      o.planes[i] = GST_VIDEO_FRAME_PLANE_DATA(outf, i);
      o.strides[i] = GST_VIDEO_FRAME_PLANE_STRIDE(outf, i);
    }
    if (r.alpha ? hr_compositor_apply(self->comp, &f, r.alpha, &r.health, &o, &cr)
                : hr_compositor_apply_u8(self->comp, &f, r.alpha_u8, &r.health, &o, &cr)) {
      GST_ELEMENT_ERROR(self, STREAM, FAILED, ("headroom: %s", hr_compositor_last_error(self->comp)), (NULL));
      return GST_FLOW_ERROR;
    }
    crp = &cr;
  } else {
    gst_video_frame_copy(outf, inf);
  }
  if (self->matte_pool) attach_matte(self, outf->buffer, &r, crp);
  if (self->frames == 0 || r.health.changed || (int)r.health.state != self->last_state || (crp && crp->changed))
    post_health(self, &r, crp);
  self->last_state = (int)r.health.state;
  gint64 t1 = g_get_monotonic_time();
  r.record.frame = (int64_t)self->frames;
  r.record.t_ms = (double)ts / 1e6;
  r.record.latency_ms = (t1 - t0) / 1e3;
  if (self->tel) hr_telemetry_write(self->tel, &r.record);
  self->frames++;
  self->stat_frames++;
  self->stat_infer += r.record.infer_ms;
  self->stat_proc += (t1 - t0) / 1e3;
  if (t1 - self->stat_t0 >= 1000000) post_stats(self, &r, t1);
  return GST_FLOW_OK;
}

/* ---- type ------------------------------------------------------------------------------------ */

static void gst_headroom_finalize(GObject *obj) {
  GstHeadroom *self = GST_HEADROOM(obj);
  release_stream(self);
  hr_telemetry_close(self->tel);
  hr_model_destroy(self->m);
  g_free(self->image);
  hr_source_destroy(self->bgv);
  g_free(self->bgv_path);
  g_free(self->model); g_free(self->profile); g_free(self->backend); g_free(self->composite); g_free(self->background);
  g_free(self->fallback); g_free(self->telemetry); g_free(self->inject);
  G_OBJECT_CLASS(gst_headroom_parent_class)->finalize(obj);
}

static void gst_headroom_class_init(GstHeadroomClass *klass) {
  GObjectClass *oc = G_OBJECT_CLASS(klass);
  GstElementClass *ec = GST_ELEMENT_CLASS(klass);
  GstBaseTransformClass *bc = GST_BASE_TRANSFORM_CLASS(klass);
  GstVideoFilterClass *vc = GST_VIDEO_FILTER_CLASS(klass);
  oc->set_property = gst_headroom_set_property;
  oc->get_property = gst_headroom_get_property;
  oc->finalize = gst_headroom_finalize;
  GParamFlags rw = G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY;
  g_object_class_install_property(oc, PROP_MODEL, g_param_spec_string("model", "Model",
      "rvm, meet, selfie (looked up in $HR_MODEL_DIR, then ~/.cache/headroom/models) or the path of a TF.js model .json", DEF_MODEL, rw));
  g_object_class_install_property(oc, PROP_RATIO, g_param_spec_float("ratio", "Downsample ratio",
      "RVM's downsample_ratio in (0,1]; 0 = auto (processing side ~512 px)", 0.f, 1.f, 0.f, rw));
  g_object_class_install_property(oc, PROP_BUDGET_MS, g_param_spec_double("budget-ms", "Frame budget",
      "processing budget a frame in ms (also the latency this element reports); may change while playing", 0.1, 10000, 16.7,
      (GParamFlags)((rw & ~GST_PARAM_MUTABLE_READY) | GST_PARAM_MUTABLE_PLAYING)));
  g_object_class_install_property(oc, PROP_PROFILE, g_param_spec_string("profile", "Memory profile",
      "memory ceiling profile (a14 a15 a16 m1 cgroup none SAFE:KILL in MB); unset = no governor", NULL, rw));
  g_object_class_install_property(oc, PROP_BACKEND, g_param_spec_string("backend", "Backend", "xnnpack, reference, vulkan or auto (Vulkan on a GPU, else xnnpack)", DEF_BACKEND, rw));
  g_object_class_install_property(oc, PROP_COMPOSITE, g_param_spec_string("composite", "Composite",
      "what the output shows: blur, color, image, video, alpha (the matte itself), none (the input), or a whole spec (blur:RADIUS, color:RRGGBB, image:FILE, video:FILE)",
      DEF_COMPOSITE, rw));
  g_object_class_install_property(oc, PROP_BACKGROUND, g_param_spec_string("background", "Background",
      "the composite's value: blur radius in pixels (default 24), colour RRGGBB (default 00b140), an image file (PNG/JPEG), or a video file (looped, one frame per output frame)", NULL, rw));
  g_object_class_install_property(oc, PROP_FALLBACK, g_param_spec_string("fallback", "Fallback",
      "what a frame without a trusted matte shows: hold (the last good matte), blur-all, passthrough", DEF_FALLBACK, rw));
  g_object_class_install_property(oc, PROP_THREADS, g_param_spec_int("threads", "Threads", "model threads; 0 = online CPUs", 0, 256, 0, rw));
  g_object_class_install_property(oc, PROP_TELEMETRY, g_param_spec_string("telemetry", "Telemetry",
      "write one JSON line a frame (headroom's telemetry record) to this file", NULL, rw));
  g_object_class_install_property(oc, PROP_ATTACH_MATTE, g_param_spec_boolean("attach-matte", "Attach the matte",
      "attach to each output buffer a GstCustomMeta \"" HR_MATTE_META "\" whose structure holds matte (GstBuffer, GRAY8 width x height, "
      "round(alpha x 255), absent without a matte), width, height, frame, state, reason, confidence, output-ok, shows; "
      "read it with gst_buffer_get_custom_meta (Python: buf.get_custom_meta(\"" HR_MATTE_META "\").get_structure())", TRUE, rw));
  g_object_class_install_property(oc, PROP_TAIL_EVERY_FRAME, g_param_spec_boolean("tail-every-frame", "Tail every frame",
      "RVM on the CPU: run the network on its own thread at the rate it reaches, its size adapted to keep each run within the lag "
      "bound (4 x budget-ms, at most 66.8 ms, at least 0.8 x budget-ms), and only the full-resolution guided-filter tail on every "
      "buffer with the newest coefficients and the buffer itself as guidance: a buffer costs the tail, not the network; a buffer "
      "waits for its own run when that fits budget-ms. A model or backend that cannot split fails the state change",
      FALSE, rw));
  g_object_class_install_property(oc, PROP_INJECT, g_param_spec_string("inject", "Inject faults (testing)",
      "testing hook: KIND@FRAME[:LEN][,...] with nan-state freeze-input black-input noise-input stuck-output memory-pressure", NULL, rw));
  gst_element_class_set_static_metadata(ec, "headroom person matting", "Filter/Effect/Video",
      "Runs a stateful matting network (RVM, MediaPipe) over the video under a frame budget and a memory ceiling, and composites the "
      "person over a blurred frame, a colour, an image or a looped video (or gives the matte). Posts headroom-health element messages at "
      "every health change and headroom-stats once a second. Each output buffer carries the matte (GRAY8) and the health verdict as a "
      "GstCustomMeta \"" HR_MATTE_META "\"; RGBA output also carries the matte as alpha. Late buffers are dropped (QoS, the newest "
      "frame wins); the reported latency adds budget-ms.",
      "headroom");
  gst_element_class_add_static_pad_template(ec, &sink_template);
  gst_element_class_add_static_pad_template(ec, &src_template);
  bc->start = GST_DEBUG_FUNCPTR(gst_headroom_start);
  bc->stop = GST_DEBUG_FUNCPTR(gst_headroom_stop);
  bc->query = GST_DEBUG_FUNCPTR(gst_headroom_query);
  vc->set_info = GST_DEBUG_FUNCPTR(gst_headroom_set_info);
  vc->transform_frame = GST_DEBUG_FUNCPTR(gst_headroom_transform_frame);
}

static void gst_headroom_init(GstHeadroom *self) {
  self->model = g_strdup(DEF_MODEL);
  self->composite = g_strdup(DEF_COMPOSITE);
  self->fallback = g_strdup(DEF_FALLBACK);
  self->backend = g_strdup(DEF_BACKEND);
  self->budget_ms = 16.7;
  self->attach_matte = TRUE;
  gst_base_transform_set_qos_enabled(GST_BASE_TRANSFORM(self), TRUE);
}

static gboolean plugin_init(GstPlugin *plugin) {
  GST_DEBUG_CATEGORY_INIT(gst_headroom_debug, "headroom", 0, "headroom matting element");
  if (!gst_meta_get_info(HR_MATTE_META)) {   /* the matte meta: no tags (kept by copies and in-place transforms) */
    static const gchar *tags[] = {NULL};
    gst_meta_register_custom(HR_MATTE_META, tags, NULL, NULL, NULL);
  }
  return gst_element_register(plugin, "headroom", GST_RANK_NONE, GST_TYPE_HEADROOM);
}

#define PACKAGE "headroom"
GST_PLUGIN_DEFINE(GST_VERSION_MAJOR, GST_VERSION_MINOR, headroom, "headroom: stateful person matting and compositing for live video",
                  plugin_init, "0.1.0", "unknown", "headroom", "headroom")
