/* Frame-source front end: parameter defaults, choosing a source kind from the spec, the read
 * wrapper (timestamp order, counters, sticky end), the frame pool, and atomic file writing. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>
#include "ffmod.h"
#include "io_internal.h"

void hr_source_params_default(hr_source_params *p) {
  if (!p) return;
  memset(p, 0, sizeof *p);
  p->input_format = NULL;
  p->stream = HR_SOURCE_STREAM_COLOR;
  p->depth_scale = 1000.0;
  p->fps = 30.0;
  p->pool_size = 3;
}

hr_status hr__errf(char *err, size_t err_len, hr_status st, const char *fmt, ...) {
  if (err && err_len) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, err_len, fmt, ap);
    va_end(ap);
  }
  return st;
}

hr_status hr__source_fail(hr_source *s, hr_status st, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(s->err, sizeof s->err, fmt, ap);
  va_end(ap);
  return st;
}

/* ---- pool ---------------------------------------------------------------------------------- */

hr_status hr__pool_init(hr__pool *p, int n, size_t bytes) {
  memset(p, 0, sizeof *p);
  p->slot = calloc((size_t)n, sizeof *p->slot);
  p->cap = calloc((size_t)n, sizeof *p->cap);
  if (!p->slot || !p->cap) { hr__pool_free(p); return HR_ENOMEM; }
  p->n = n;
  for (int i = 0; i < n && bytes; i++) {
    p->slot[i] = malloc(bytes);
    if (!p->slot[i]) { hr__pool_free(p); return HR_ENOMEM; }
    p->cap[i] = bytes;
  }
  return HR_OK;
}

uint8_t *hr__pool_take(hr__pool *p, size_t bytes) {
  int i = p->next;
  if (p->cap[i] < bytes) {
    /* Only this slot's frame, pool_size reads old and expired, lives here: safe to move. */
    uint8_t *b = realloc(p->slot[i], bytes);
    if (!b) return NULL;
    p->slot[i] = b;
    p->cap[i] = bytes;
  }
  p->next = (i + 1) % p->n;
  return p->slot[i];
}

void hr__pool_free(hr__pool *p) {
  if (!p) return;
  for (int i = 0; p->slot && i < p->n; i++) free(p->slot[i]);
  free(p->slot);
  free(p->cap);
  memset(p, 0, sizeof *p);
}

/* ---- small helpers ------------------------------------------------------------------------- */

const char *hr__basename(const char *path) {
  const char *b = strrchr(path, '/');
  return b && b[1] ? b + 1 : path;
}

static int64_t rss_field(const char *fmt) {
  FILE *f = fopen("/proc/self/status", "re");
  if (!f) return 0;
  char line[256];
  long long kb = 0;
  while (fgets(line, sizeof line, f))
    if (sscanf(line, fmt, &kb) == 1) break;
  fclose(f);
  return (int64_t)kb * 1024;
}

int64_t hr__rss_file_bytes(void) { return rss_field("RssFile: %lld kB"); }

int64_t hr__rss_anon_bytes(void) { return rss_field("RssAnon: %lld kB"); }

int hr__is_png(const uint8_t *b, size_t n) {
  static const uint8_t sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  return n >= 8 && memcmp(b, sig, 8) == 0;
}

int hr__is_jpeg(const uint8_t *b, size_t n) {
  return n >= 3 && b[0] == 0xff && b[1] == 0xd8 && b[2] == 0xff;
}

hr_status hr__file_read_all(const char *path, uint8_t **buf, size_t *cap, size_t *len,
                            char *err, size_t err_len) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return hr__errf(err, err_len, HR_EIO, "cannot open %s: %s", path, strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return hr__errf(err, err_len, HR_EIO, "%s is not a regular file", path);
  }
  size_t n = (size_t)st.st_size;
  if (st.st_size > ((off_t)1 << 30)) {   /* no image or list is this large */
    close(fd);
    return hr__errf(err, err_len, HR_ERANGE, "%s is too large (%lld bytes)", path, (long long)st.st_size);
  }
  if (n > *cap || !*buf) {
    uint8_t *b = realloc(*buf, n ? n : 1);
    if (!b) { close(fd); return hr__errf(err, err_len, HR_ENOMEM, "out of memory reading %s", path); }
    *buf = b;
    *cap = n ? n : 1;
  }
  size_t got = 0;
  while (got < n) {
    ssize_t r = read(fd, *buf + got, n - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      int e = r < 0 ? errno : 0;
      close(fd);
      return hr__errf(err, err_len, HR_EIO, "cannot read %s: %s", path, e ? strerror(e) : "file shrank");
    }
    got += (size_t)r;
  }
  close(fd);
  *len = n;
  return HR_OK;
}

size_t hr__frame_bytes(hr_pixfmt fmt, int w, int h) {
  if (w <= 0 || h <= 0 || w > 16384 || h > 16384) return 0;
  size_t px = (size_t)w * (size_t)h;
  switch (fmt) {
    case HR_PIX_NV12_FULL: case HR_PIX_NV12_VIDEO: case HR_PIX_I420_FULL: case HR_PIX_I420_VIDEO:
      if ((w | h) & 1) return 0;
      return px + px / 2;
    default: {
      int bpp = hr_pixfmt_bpp(fmt);
      return bpp ? px * (size_t)bpp : 0;
    }
  }
}

void hr__frame_packed(hr_frame *f, hr_pixfmt fmt, int w, int h, const uint8_t *buf, int64_t ts) {
  memset(f, 0, sizeof *f);
  f->fmt = fmt;
  f->width = w;
  f->height = h;
  f->ts_ns = ts;
  size_t y = (size_t)w * (size_t)h;
  switch (fmt) {
    case HR_PIX_NV12_FULL: case HR_PIX_NV12_VIDEO:
      f->planes[0] = buf; f->strides[0] = w;
      f->planes[1] = buf + y; f->strides[1] = w;
      break;
    case HR_PIX_I420_FULL: case HR_PIX_I420_VIDEO:
      f->planes[0] = buf; f->strides[0] = w;
      f->planes[1] = buf + y; f->strides[1] = w / 2;
      f->planes[2] = buf + y + y / 4; f->strides[2] = w / 2;
      break;
    default:
      f->planes[0] = buf; f->strides[0] = (ptrdiff_t)w * hr_pixfmt_bpp(fmt);
      break;
  }
}

hr_status hr__parse_input_format(const char *s, hr_pixfmt *fmt, int *w, int *h, double *fps,
                                 char *err, size_t err_len) {
  static const hr_pixfmt accepted[] = {HR_PIX_NV12_FULL, HR_PIX_NV12_VIDEO, HR_PIX_I420_FULL,
                                       HR_PIX_I420_VIDEO, HR_PIX_BGRA, HR_PIX_RGB24,
                                       HR_PIX_GRAY8, HR_PIX_DEPTH16_MM};
  const char *colon = s ? strchr(s, ':') : NULL;
  if (!colon)
    return hr__errf(err, err_len, HR_EINVAL, "input format '%s': expected FMT:WxH[@FPS], e.g. nv12:1920x1440@60",
                    s ? s : "(null)");
  *fmt = HR_PIX_NONE;
  size_t nlen = (size_t)(colon - s);
  for (size_t i = 0; i < sizeof accepted / sizeof accepted[0]; i++) {
    const char *n = hr_pixfmt_name(accepted[i]);
    if (strlen(n) == nlen && strncasecmp(n, s, nlen) == 0) *fmt = accepted[i];
  }
  if (*fmt == HR_PIX_NONE)
    return hr__errf(err, err_len, HR_EINVAL,
                    "input format '%s': unknown pixel format '%.*s' (nv12 nv12v i420 i420v bgra rgb24 gray8 depth16)",
                    s, (int)nlen, s);
  char *end;
  errno = 0;
  long lw = strtol(colon + 1, &end, 10);
  if (end == colon + 1 || (*end != 'x' && *end != 'X'))
    return hr__errf(err, err_len, HR_EINVAL, "input format '%s': expected WxH after ':'", s);
  const char *hs = end + 1;
  long lh = strtol(hs, &end, 10);
  if (end == hs || errno)
    return hr__errf(err, err_len, HR_EINVAL, "input format '%s': expected WxH after ':'", s);
  if (lw <= 0 || lh <= 0 || lw > 16384 || lh > 16384)
    return hr__errf(err, err_len, HR_EINVAL, "input format '%s': size %ldx%ld out of range (1..16384)", s, lw, lh);
  *fps = 0;
  if (*end == '@') {
    const char *fs = end + 1;
    double f = strtod(fs, &end);
    if (end == fs || !(f > 0) || !isfinite(f) || f > 100000)
      return hr__errf(err, err_len, HR_EINVAL, "input format '%s': bad frame rate after '@'", s);
    *fps = f;
  }
  if (*end)
    return hr__errf(err, err_len, HR_EINVAL, "input format '%s': unexpected '%s'", s, end);
  *w = (int)lw;
  *h = (int)lh;
  if (!hr__frame_bytes(*fmt, *w, *h))
    return hr__errf(err, err_len, HR_EINVAL, "input format '%s': %s needs an even width and height, got %dx%d",
                    s, hr_pixfmt_name(*fmt), *w, *h);
  return HR_OK;
}

/* ---- open / read / destroy ----------------------------------------------------------------- */

static int file_exists(const char *dir, const char *name) {
  char p[PATH_MAX];
  if (snprintf(p, sizeof p, "%s/%s", dir, name) >= (int)sizeof p) return 0;
  struct stat st;
  return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

hr_status hr_source_open(const char *spec, const hr_source_params *params, hr_source **out,
                         char *err, size_t err_len) {
  if (err && err_len) err[0] = 0;
  if (!out) return hr__errf(err, err_len, HR_EINVAL, "hr_source_open: out is NULL");
  *out = NULL;
  if (!spec || !*spec) return hr__errf(err, err_len, HR_EINVAL, "hr_source_open: empty source spec");
  hr_source_params p;
  if (params) p = *params; else hr_source_params_default(&p);
  if (p.pool_size < 1 || p.pool_size > 64)
    return hr__errf(err, err_len, HR_EINVAL, "pool_size %d out of range (1..64)", p.pool_size);
  if (!(p.fps > 0) || !isfinite(p.fps) || p.fps > 100000)
    return hr__errf(err, err_len, HR_EINVAL, "fps %g out of range", p.fps);
  if (!(p.depth_scale > 0) || !isfinite(p.depth_scale))
    return hr__errf(err, err_len, HR_EINVAL, "depth_scale %g must be > 0", p.depth_scale);
  if (p.stream != HR_SOURCE_STREAM_COLOR && p.stream != HR_SOURCE_STREAM_DEPTH)
    return hr__errf(err, err_len, HR_EINVAL, "stream %d is neither color nor depth", (int)p.stream);

  hr_source *s = calloc(1, sizeof *s);
  if (!s) return hr__errf(err, err_len, HR_ENOMEM, "out of memory");
  s->params = p;
  s->params.input_format = NULL;   /* not kept: the caller's string may go away */
  s->frame_count = -1;
  s->last_ts = INT64_MIN;

  hr_status st;
  /* Library code the open pages in (demuxers probed, the first video frame decoded): measured,
   * for hr_source_memory_estimate. */
  int64_t file_rss0 = hr__rss_file_bytes();
  int ffmod_was_loaded = hr__ffmod_loaded();
  int is_v4l2 = strncmp(spec, "v4l2:", 5) == 0 || strncmp(spec, "/dev/video", 10) == 0;
  const char *kind_needs_color = NULL;
  if (is_v4l2) {
    s->params.input_format = p.input_format;   /* read during open only */
    st = hr__v4l2_open(s, strncmp(spec, "v4l2:", 5) == 0 ? spec + 5 : spec, err, err_len);
    s->params.input_format = NULL;
    kind_needs_color = "a V4L2 camera";
  } else if (p.input_format) {
    s->params.input_format = p.input_format;
    st = hr__raw_open(s, spec, err, err_len);
    s->params.input_format = NULL;
    kind_needs_color = "raw input";
  } else if (strncmp(spec, "tum:", 4) == 0) {
    st = hr__tum_open(s, spec + 4, err, err_len);
  } else {
    struct stat sb;
    if (strcmp(spec, "-") == 0) {
      st = hr__errf(err, err_len, HR_EINVAL, "stdin ('-') needs params.input_format, e.g. nv12:1920x1440@60");
    } else if (stat(spec, &sb) != 0) {
      st = hr__errf(err, err_len, HR_EIO, "cannot open %s: %s", spec, strerror(errno));
    } else if (S_ISDIR(sb.st_mode)) {
      if (file_exists(spec, "rgb.txt") && file_exists(spec, "depth.txt")) {
        st = hr__tum_open(s, spec, err, err_len);
      } else {
        st = hr__images_open(s, spec, 1, err, err_len);
        kind_needs_color = "an image folder";
      }
    } else {
      uint8_t head[8] = {0};
      size_t n = 0;
      FILE *f = fopen(spec, "rb");
      if (f) { n = fread(head, 1, sizeof head, f); fclose(f); }
      if (!f) {
        st = hr__errf(err, err_len, HR_EIO, "cannot open %s: %s", spec, strerror(errno));
      } else if (hr__is_png(head, n) || hr__is_jpeg(head, n)) {
        st = hr__images_open(s, spec, 0, err, err_len);
        kind_needs_color = "an image file";
      } else {
        st = hr__video_open(s, spec, err, err_len);
        kind_needs_color = "a video file";
      }
    }
  }
  if (st == HR_OK && kind_needs_color && p.stream == HR_SOURCE_STREAM_DEPTH)
    st = hr__errf(err, err_len, HR_EINVAL, "%s has no depth stream (%s): depth needs a TUM RGB-D folder",
                  spec, kind_needs_color);
  if (st != HR_OK) {
    if (err && err_len && !err[0]) hr__errf(err, err_len, st, "cannot open %s: %s", spec, hr_status_str(st));
    hr_source_destroy(s);
    return st;
  }
  int64_t grown = hr__rss_file_bytes() - file_rss0;
  s->code_bytes = grown > 0 ? grown : 0;
  /* The open that loaded the FFmpeg module also carries its libraries' relocated data (anonymous
   * pages: about 21 MB for FFmpeg 5.1's 140 libraries), measured around the dlopen. */
  if (!ffmod_was_loaded && hr__ffmod_loaded()) s->code_bytes += hr__ffmod_load_anon_bytes();
  *out = s;
  return HR_OK;
}

hr_status hr_source_memory_estimate(const hr_source *s, int pool_size, hr_source_memory *out) {
  if (out) memset(out, 0, sizeof *out);
  if (!s || !out || pool_size < 0 || pool_size > 64) return HR_EINVAL;
  int pool = pool_size ? pool_size : s->params.pool_size;
  if (s->ops && s->ops->memory) {
    s->ops->memory(s, pool, out);
  } else {
    out->pool_bytes = (int64_t)pool * (int64_t)hr__frame_bytes(s->fmt, s->width, s->height);
    snprintf(out->detail, sizeof out->detail, "%d frames of %dx%d %s", pool, s->width, s->height,
             hr_pixfmt_name(s->fmt));
  }
  out->code_bytes += s->code_bytes;
  out->total_bytes = out->pool_bytes + out->file_bytes + out->decoder_bytes + out->frames_bytes +
                     out->code_bytes;
  return HR_OK;
}

hr_status hr_source_read(hr_source *s, hr_frame *out) {
  if (!s || !out) return HR_EINVAL;
  if (s->sticky != HR_OK) return s->sticky;
  hr_frame f;
  s->err[0] = 0;
  hr_status st = s->ops->read(s, &f);
  if (st == HR_EEOF) {
    s->sticky = HR_EEOF;
    snprintf(s->err, sizeof s->err, "end of stream after %lld frames", (long long)s->stats.frames);
    return st;
  }
  if (st != HR_OK) return st;
  if (s->stats.frames > 0 && f.ts_ns <= s->last_ts) {
    f.ts_ns = s->last_ts + 1;
    s->stats.ts_fixups++;
  }
  s->last_ts = f.ts_ns;
  s->stats.frames++;
  *out = f;
  return HR_OK;
}

int64_t hr_source_frame_count(const hr_source *s) { return s ? s->frame_count : -1; }

const char *hr_source_describe(const hr_source *s) { return s ? s->desc : "(null source)"; }

const char *hr_source_last_error(const hr_source *s) { return s ? s->err : "source is NULL"; }

void hr_source_get_format(const hr_source *s, hr_pixfmt *fmt, int *width, int *height) {
  if (fmt) *fmt = s ? s->fmt : HR_PIX_NONE;
  if (width) *width = s ? s->width : 0;
  if (height) *height = s ? s->height : 0;
}

void hr_source_get_stats(const hr_source *s, hr_source_stats *out) {
  if (!out) return;
  if (s) *out = s->stats; else memset(out, 0, sizeof *out);
}

int hr__source_native_planes(const hr_source *s, const void *planes[3]) {
  planes[0] = planes[1] = planes[2] = NULL;
  if (!s || !s->ops || !s->ops->native_planes) return 0;
  return s->ops->native_planes(s, planes);
}

void hr_source_destroy(hr_source *s) {
  if (!s) return;
  if (s->ops && s->ops->destroy) s->ops->destroy(s);
  hr__pool_free(&s->pool);
  free(s);
}

/* ---- atomic writes ------------------------------------------------------------------------- */

hr_status hr_file_write_atomic(const char *path, const void *data, size_t len) {
  if (!path || !*path || (!data && len)) return HR_EINVAL;
  size_t pl = strlen(path);
  char *tmp = malloc(pl + 5);
  if (!tmp) return HR_ENOMEM;
  memcpy(tmp, path, pl);
  memcpy(tmp + pl, ".tmp", 5);
  int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0) { free(tmp); return HR_EIO; }
  const uint8_t *p = data;
  size_t left = len;
  int e = 0;
  while (left) {
    ssize_t w = write(fd, p, left);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) { e = w < 0 ? errno : EIO; break; }
    p += w;
    left -= (size_t)w;
  }
  if (close(fd) != 0 && !e) e = errno;
  if (!e && rename(tmp, path) != 0) e = errno;
  if (e) {
    unlink(tmp);
    free(tmp);
    errno = e;
    return HR_EIO;
  }
  free(tmp);
  return HR_OK;
}

hr_status hr_mkdirs(const char *path) {
  char tmp[4096];
  if (!path || snprintf(tmp, sizeof tmp, "%s", path) >= (int)sizeof tmp) { errno = ENAMETOOLONG; return HR_EINVAL; }
  for (char *p = tmp + 1; *p; p++)
    if (*p == '/') { *p = 0; if (mkdir(tmp, 0755) && errno != EEXIST) return HR_EIO; *p = '/'; }
  return mkdir(tmp, 0755) && errno != EEXIST ? HR_EIO : HR_OK;
}
