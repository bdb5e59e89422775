/* Raw-frame source: fixed-size frames of a named pixel format read from a file or stdin, exactly
 * one frame per read into a pool buffer. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "io_internal.h"

typedef struct raw {
  int fd, own_fd;
  size_t frame_bytes;
  double fps;
  int64_t index;
  char name[128];
} raw;

static void raw_destroy(hr_source *s) {
  raw *r = s->impl;
  if (!r) return;
  if (r->own_fd && r->fd >= 0) close(r->fd);
  free(r);
  s->impl = NULL;
}

static hr_status raw_read(hr_source *s, hr_frame *out) {
  raw *r = s->impl;
  uint8_t *dst = hr__pool_take(&s->pool, r->frame_bytes);
  if (!dst) return hr__source_fail(s, HR_ENOMEM, "out of memory");
  size_t got = 0;
  while (got < r->frame_bytes) {
    ssize_t n = read(r->fd, dst + got, r->frame_bytes - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      s->sticky = HR_EIO;
      return hr__source_fail(s, HR_EIO, "%s: read error at frame %lld: %s", r->name,
                             (long long)r->index, strerror(errno));
    }
    if (n == 0) break;
    got += (size_t)n;
  }
  if (got == 0) return HR_EEOF;
  if (got < r->frame_bytes) {
    s->sticky = HR_EEOF;   /* nothing follows a truncated frame */
    return hr__source_fail(s, HR_ECORRUPT, "%s: truncated frame %lld: %zu of %zu bytes", r->name,
                           (long long)r->index, got, r->frame_bytes);
  }
  int64_t ts = (int64_t)llround((double)r->index * 1e9 / r->fps);
  hr__frame_packed(out, s->fmt, s->width, s->height, dst, ts);
  r->index++;
  s->stats.pooled++;
  s->stats.bytes_pooled += (int64_t)r->frame_bytes;
  return HR_OK;
}

/* Memory: pool_size frames of the format, nothing else (no decoder; read(2) into the pool). */
static const hr__source_ops raw_ops = {"raw", raw_read, raw_destroy, NULL, NULL};

hr_status hr__raw_open(hr_source *s, const char *path, char *err, size_t err_len) {
  raw *r = calloc(1, sizeof *r);
  if (!r) return hr__errf(err, err_len, HR_ENOMEM, "out of memory");
  r->fd = -1;
  s->impl = r;
  s->ops = &raw_ops;
  double fps = 0;
  hr_status st = hr__parse_input_format(s->params.input_format, &s->fmt, &s->width, &s->height,
                                        &fps, err, err_len);
  if (st) return st;
  r->fps = fps > 0 ? fps : s->params.fps;
  r->frame_bytes = hr__frame_bytes(s->fmt, s->width, s->height);
  int is_stdin = strcmp(path, "-") == 0;
  snprintf(r->name, sizeof r->name, "%s", is_stdin ? "stdin" : hr__basename(path));
  if (is_stdin) {
    r->fd = 0;
  } else {
    r->fd = open(path, O_RDONLY | O_CLOEXEC);
    if (r->fd < 0) return hr__errf(err, err_len, HR_EIO, "cannot open %s: %s", path, strerror(errno));
    r->own_fd = 1;
  }
  struct stat sb;
  if (fstat(r->fd, &sb) == 0 && S_ISREG(sb.st_mode)) s->frame_count = (int64_t)((size_t)sb.st_size / r->frame_bytes);
  if (hr__pool_init(&s->pool, s->params.pool_size, r->frame_bytes))
    return hr__errf(err, err_len, HR_ENOMEM, "out of memory for %d frames of %zu bytes",
                    s->params.pool_size, r->frame_bytes);
  char frames[64] = "";
  if (s->frame_count >= 0) {
    int partial = (size_t)sb.st_size % r->frame_bytes != 0;
    snprintf(frames, sizeof frames, " %lld frames%s", (long long)s->frame_count, partial ? " + a partial one" : "");
  }
  snprintf(s->desc, sizeof s->desc, "raw %s %dx%d %s %g fps%s (%zu bytes a frame, read into a pool of %d)",
           r->name, s->width, s->height, hr_pixfmt_name(s->fmt), r->fps, frames, r->frame_bytes,
           s->params.pool_size);
  return HR_OK;
}
