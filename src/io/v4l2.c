/* V4L2 camera source: mmap streaming capture, NV12 handed out in place, YUYV converted to NV12
 * and MJPEG decoded to RGB24 into pool buffers. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>
#include <linux/videodev2.h>
#include "io_internal.h"

/* ---- pure helpers -------------------------------------------------------------------------- */

int hr__v4l2_pick_fourcc(const uint32_t *fourccs, int n) {
  static const uint32_t pref[] = {V4L2_PIX_FMT_NV12, V4L2_PIX_FMT_YUYV, V4L2_PIX_FMT_MJPEG};
  for (size_t k = 0; k < sizeof pref / sizeof pref[0]; k++)
    for (int i = 0; i < n; i++)
      if (fourccs[i] == pref[k]) return i;
  return -1;
}

hr_pixfmt hr__v4l2_nv12_fmt(uint32_t quantization, uint32_t colorspace) {
  if (quantization == V4L2_QUANTIZATION_FULL_RANGE) return HR_PIX_NV12_FULL;
  if (quantization == V4L2_QUANTIZATION_DEFAULT && colorspace == V4L2_COLORSPACE_JPEG) return HR_PIX_NV12_FULL;
  return HR_PIX_NV12_VIDEO;
}

void hr__yuyv_to_nv12(const uint8_t *src, ptrdiff_t src_stride, int w, int h, uint8_t *y,
                      ptrdiff_t y_stride, uint8_t *uv, ptrdiff_t uv_stride) {
  for (int r = 0; r < h; r += 2) {
    const uint8_t *a = src + (ptrdiff_t)r * src_stride, *b = a + src_stride;
    uint8_t *y0 = y + (ptrdiff_t)r * y_stride, *y1 = y0 + y_stride;
    uint8_t *c = uv + (ptrdiff_t)(r / 2) * uv_stride;
    for (int x = 0; x < w; x += 2) {
      const uint8_t *pa = a + 2 * x, *pb = b + 2 * x;
      y0[x] = pa[0];
      y0[x + 1] = pa[2];
      y1[x] = pb[0];
      y1[x + 1] = pb[2];
      c[x] = (uint8_t)((pa[1] + pb[1] + 1) >> 1);
      c[x + 1] = (uint8_t)((pa[3] + pb[3] + 1) >> 1);
    }
  }
}

/* ---- the source ---------------------------------------------------------------------------- */

typedef struct v4l2 {
  int fd;
  uint32_t fourcc;
  uint32_t bytesperline, sizeimage;
  struct { void *p; size_t len; } *buf;
  unsigned nbuf;
  int streaming;
  int *held;                  /* NV12: dequeued buffer indices still lent to the caller (FIFO) */
  int nheld, held_first;
  int last_index;             /* buffer of the last frame when handed out in place, or -1 */
  hr__jpeg *jpg;
  char dev[128];
} v4l2;

static int xioctl(int fd, unsigned long req, void *arg) {
  int r;
  do r = ioctl(fd, req, arg); while (r < 0 && errno == EINTR);
  return r;
}

static void v4l2_destroy(hr_source *s) {
  v4l2 *c = s->impl;
  if (!c) return;
  if (c->streaming) {
    enum v4l2_buf_type t = V4L2_BUF_TYPE_VIDEO_CAPTURE;
    xioctl(c->fd, VIDIOC_STREAMOFF, &t);
  }
  for (unsigned i = 0; c->buf && i < c->nbuf; i++)
    if (c->buf[i].p && c->buf[i].p != MAP_FAILED) munmap(c->buf[i].p, c->buf[i].len);
  free(c->buf);
  free(c->held);
  hr__jpeg_destroy(c->jpg);
  if (c->fd >= 0) close(c->fd);
  free(c);
  s->impl = NULL;
}

static hr_status requeue(hr_source *s, v4l2 *c, int index) {
  struct v4l2_buffer b = {0};
  b.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
  b.memory = V4L2_MEMORY_MMAP;
  b.index = (uint32_t)index;
  if (xioctl(c->fd, VIDIOC_QBUF, &b) < 0) {
    s->sticky = HR_EIO;
    return hr__source_fail(s, HR_EIO, "%s: VIDIOC_QBUF: %s", c->dev, strerror(errno));
  }
  return HR_OK;
}

static hr_status v4l2_read(hr_source *s, hr_frame *out) {
  v4l2 *c = s->impl;
  int pool = s->params.pool_size;
  hr_status st;
  /* The in-place frame handed out pool_size reads ago expires now: give its buffer back. */
  if (c->fourcc == V4L2_PIX_FMT_NV12 && c->nheld == pool) {
    if ((st = requeue(s, c, c->held[c->held_first]))) return st;
    c->held_first = (c->held_first + 1) % pool;
    c->nheld--;
  }
  c->last_index = -1;
  struct v4l2_buffer b;
  for (;;) {
    struct pollfd pfd = {c->fd, POLLIN, 0};
    int r = poll(&pfd, 1, 2000);
    if (r < 0 && errno == EINTR) continue;
    if (r == 0) return hr__source_fail(s, HR_EAGAIN, "%s: no frame within 2 s", c->dev);
    if (r < 0 || (pfd.revents & (POLLERR | POLLHUP | POLLNVAL))) {
      s->sticky = HR_EIO;
      return hr__source_fail(s, HR_EIO, "%s: device error or unplugged", c->dev);
    }
    memset(&b, 0, sizeof b);
    b.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
    b.memory = V4L2_MEMORY_MMAP;
    if (xioctl(c->fd, VIDIOC_DQBUF, &b) == 0) break;
    if (errno == EAGAIN) continue;
    s->sticky = HR_EIO;
    return hr__source_fail(s, HR_EIO, "%s: VIDIOC_DQBUF: %s", c->dev, strerror(errno));
  }
  const uint8_t *p = c->buf[b.index].p;
  int w = s->width, h = s->height;
  int64_t ts = (int64_t)b.timestamp.tv_sec * 1000000000 + (int64_t)b.timestamp.tv_usec * 1000;
  if (b.flags & V4L2_BUF_FLAG_ERROR) {
    requeue(s, c, (int)b.index);
    return hr__source_fail(s, HR_ECORRUPT, "%s: the driver flagged frame %u as damaged", c->dev, b.sequence);
  }
  if (c->fourcc == V4L2_PIX_FMT_NV12) {
    size_t need = (size_t)c->bytesperline * (size_t)h * 3 / 2;
    if (b.bytesused < need) {
      requeue(s, c, (int)b.index);
      return hr__source_fail(s, HR_ECORRUPT, "%s: short NV12 frame: %u of %zu bytes", c->dev, b.bytesused, need);
    }
    memset(out, 0, sizeof *out);
    out->fmt = s->fmt;
    out->width = w;
    out->height = h;
    out->planes[0] = p;
    out->planes[1] = p + (size_t)c->bytesperline * (size_t)h;
    out->strides[0] = out->strides[1] = c->bytesperline;
    out->ts_ns = ts;
    c->held[(c->held_first + c->nheld) % pool] = (int)b.index;
    c->nheld++;
    c->last_index = (int)b.index;
    s->stats.in_place++;
    return HR_OK;
  }
  size_t fb = hr__frame_bytes(s->fmt, w, h);
  uint8_t *dst = hr__pool_take(&s->pool, fb);
  if (!dst) { requeue(s, c, (int)b.index); return hr__source_fail(s, HR_ENOMEM, "out of memory"); }
  int warned = 0;
  st = HR_OK;
  char e[300];
  if (c->fourcc == V4L2_PIX_FMT_YUYV) {
    size_t need = (size_t)c->bytesperline * (size_t)h;
    if (b.bytesused < need)
      st = hr__errf(e, sizeof e, HR_ECORRUPT, "short YUYV frame: %u of %zu bytes", b.bytesused, need);
    else
      hr__yuyv_to_nv12(p, c->bytesperline, w, h, dst, w, dst + (size_t)w * h, w);
  } else {
    st = hr__jpeg_decode_rgb24(c->jpg, p, b.bytesused, dst, fb, w, h, &warned, "MJPEG frame", e, sizeof e);
  }
  hr_status qs = requeue(s, c, (int)b.index);
  if (st) return hr__source_fail(s, st, "%s: %s", c->dev, e);
  if (qs) return qs;
  hr__frame_packed(out, s->fmt, w, h, dst, ts);
  s->stats.pooled++;
  s->stats.converted++;
  s->stats.bytes_pooled += (int64_t)fb;
  if (warned) s->stats.warnings++;
  return HR_OK;
}

static int v4l2_native_planes(const hr_source *s, const void *planes[3]) {
  const v4l2 *c = s->impl;
  if (!c || c->last_index < 0) return 0;
  planes[0] = c->buf[c->last_index].p;
  planes[1] = (const uint8_t *)planes[0] + (size_t)c->bytesperline * (size_t)s->height;
  return 1;
}

/* Memory: the driver's mmap buffers (pool_size + 2 of sizeimage; resident once the process maps
 * and reads them, for drivers whose buffers are ordinary pages), and for YUYV / MJPEG the pool of
 * converted frames and, MJPEG, libjpeg-turbo's state (baseline JPEG assumed). */
static void v4l2_memory(const hr_source *s, int pool, hr_source_memory *m) {
  const v4l2 *c = s->impl;
  int nbuf = pool == s->params.pool_size ? (int)c->nbuf : pool + 2;
  m->frames_bytes = (int64_t)nbuf * (int64_t)c->sizeimage;
  if (c->fourcc != V4L2_PIX_FMT_NV12)
    m->pool_bytes = (int64_t)pool * (int64_t)hr__frame_bytes(s->fmt, s->width, s->height);
  if (c->fourcc == V4L2_PIX_FMT_MJPEG)
    m->decoder_bytes = 64 * 1024 + 48 * (int64_t)s->width + 8 * (int64_t)s->height;
  snprintf(m->detail, sizeof m->detail, "%d driver buffers of %u bytes%s", nbuf, c->sizeimage,
           c->fourcc == V4L2_PIX_FMT_NV12 ? ", NV12 handed out in place" : ", converted into the pool");
}

static const hr__source_ops v4l2_ops = {"v4l2", v4l2_read, v4l2_destroy, v4l2_native_planes, v4l2_memory};

static void fourcc_str(uint32_t f, char out[5]) {
  for (int i = 0; i < 4; i++) {
    char ch = (char)((f >> (8 * i)) & 0xff);
    out[i] = ch >= 32 && ch < 127 ? ch : '?';
  }
  out[4] = 0;
}

hr_status hr__v4l2_open(hr_source *s, const char *dev, char *err, size_t err_len) {
  v4l2 *c = calloc(1, sizeof *c);
  if (!c) return hr__errf(err, err_len, HR_ENOMEM, "out of memory");
  c->fd = -1;
  c->last_index = -1;
  s->impl = c;
  s->ops = &v4l2_ops;
  snprintf(c->dev, sizeof c->dev, "%s", dev);
  int want_w = 0, want_h = 0;
  double want_fps = 0;
  if (s->params.input_format) {
    hr_pixfmt ignored;
    hr_status st = hr__parse_input_format(s->params.input_format, &ignored, &want_w, &want_h, &want_fps, err, err_len);
    if (st) return st;
  }
  c->fd = open(dev, O_RDWR | O_NONBLOCK | O_CLOEXEC);
  if (c->fd < 0) return hr__errf(err, err_len, HR_EIO, "cannot open camera %s: %s", dev, strerror(errno));
  struct v4l2_capability cap = {0};
  if (xioctl(c->fd, VIDIOC_QUERYCAP, &cap) < 0)
    return hr__errf(err, err_len, HR_ENOTSUP, "%s is not a V4L2 device: %s", dev, strerror(errno));
  uint32_t caps = (cap.capabilities & V4L2_CAP_DEVICE_CAPS) ? cap.device_caps : cap.capabilities;
  if (!(caps & V4L2_CAP_VIDEO_CAPTURE))
    return hr__errf(err, err_len, HR_ENOTSUP, "%s (%s) is not a single-planar video capture device", dev, (char *)cap.card);
  if (!(caps & V4L2_CAP_STREAMING))
    return hr__errf(err, err_len, HR_ENOTSUP, "%s (%s) does not support streaming I/O", dev, (char *)cap.card);

  uint32_t fcc[64];
  int nf = 0;
  for (struct v4l2_fmtdesc fd = {.type = V4L2_BUF_TYPE_VIDEO_CAPTURE}; nf < 64; fd.index++) {
    if (xioctl(c->fd, VIDIOC_ENUM_FMT, &fd) < 0) break;
    fcc[nf++] = fd.pixelformat;
  }
  int pick = hr__v4l2_pick_fourcc(fcc, nf);
  if (pick < 0) {
    char list[64 * 5 + 1] = "", f4[5];
    for (int i = 0; i < nf; i++) { fourcc_str(fcc[i], f4); strcat(list, " "); strcat(list, f4); }
    return hr__errf(err, err_len, HR_ENOTSUP, "%s offers none of NV12, YUYV, MJPG (it offers:%s)", dev,
                    nf ? list : " nothing");
  }
  struct v4l2_format f = {.type = V4L2_BUF_TYPE_VIDEO_CAPTURE};
  if (xioctl(c->fd, VIDIOC_G_FMT, &f) < 0)
    return hr__errf(err, err_len, HR_EIO, "%s: VIDIOC_G_FMT: %s", dev, strerror(errno));
  f.fmt.pix.pixelformat = fcc[pick];
  if (want_w) { f.fmt.pix.width = (uint32_t)want_w; f.fmt.pix.height = (uint32_t)want_h; }
  f.fmt.pix.field = V4L2_FIELD_NONE;
  f.fmt.pix.bytesperline = 0;
  if (xioctl(c->fd, VIDIOC_S_FMT, &f) < 0)
    return hr__errf(err, err_len, HR_EIO, "%s: VIDIOC_S_FMT: %s", dev, strerror(errno));
  c->fourcc = f.fmt.pix.pixelformat;
  s->width = (int)f.fmt.pix.width;
  s->height = (int)f.fmt.pix.height;
  c->bytesperline = f.fmt.pix.bytesperline;
  c->sizeimage = f.fmt.pix.sizeimage;
  char f4[5];
  fourcc_str(c->fourcc, f4);
  if (hr__v4l2_pick_fourcc(&c->fourcc, 1) < 0)
    return hr__errf(err, err_len, HR_ENOTSUP, "%s switched to format %s, which is not supported", dev, f4);
  if (s->width <= 0 || s->height <= 0 || s->width > 16384 || s->height > 16384 ||
      (c->fourcc != V4L2_PIX_FMT_MJPEG && ((s->width | s->height) & 1)))
    return hr__errf(err, err_len, HR_ENOTSUP, "%s: frame size %dx%d not supported (%s needs even sizes)",
                    dev, s->width, s->height, f4);
  if (c->fourcc == V4L2_PIX_FMT_NV12) {
    if (c->bytesperline < (uint32_t)s->width) c->bytesperline = (uint32_t)s->width;
    s->fmt = hr__v4l2_nv12_fmt(f.fmt.pix.quantization, f.fmt.pix.colorspace);
  } else if (c->fourcc == V4L2_PIX_FMT_YUYV) {
    if (c->bytesperline < (uint32_t)s->width * 2) c->bytesperline = (uint32_t)s->width * 2;
    s->fmt = hr__v4l2_nv12_fmt(f.fmt.pix.quantization, f.fmt.pix.colorspace);
  } else {
    s->fmt = HR_PIX_RGB24;
    if (hr__jpeg_create(&c->jpg)) return hr__errf(err, err_len, HR_ENOMEM, "out of memory");
  }
  if (want_fps > 0) {   /* best effort: not every driver lets the rate be set */
    struct v4l2_streamparm sp = {.type = V4L2_BUF_TYPE_VIDEO_CAPTURE};
    sp.parm.capture.timeperframe.numerator = 1000;
    sp.parm.capture.timeperframe.denominator = (uint32_t)(want_fps * 1000 + 0.5);
    xioctl(c->fd, VIDIOC_S_PARM, &sp);
  }
  int pool = s->params.pool_size;
  struct v4l2_requestbuffers rb = {0};
  rb.count = (uint32_t)pool + 2;
  rb.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
  rb.memory = V4L2_MEMORY_MMAP;
  if (xioctl(c->fd, VIDIOC_REQBUFS, &rb) < 0)
    return hr__errf(err, err_len, HR_ENOTSUP, "%s: mmap streaming refused (VIDIOC_REQBUFS: %s)", dev, strerror(errno));
  if (rb.count < (uint32_t)pool + 1 || rb.count < 2)
    return hr__errf(err, err_len, HR_ENOTSUP, "%s: the driver gave %u buffers; pool_size %d needs %d",
                    dev, rb.count, pool, pool + 1);
  c->nbuf = rb.count;
  c->buf = calloc(c->nbuf, sizeof *c->buf);
  c->held = calloc((size_t)pool, sizeof *c->held);
  if (!c->buf || !c->held) return hr__errf(err, err_len, HR_ENOMEM, "out of memory");
  for (unsigned i = 0; i < c->nbuf; i++) {
    struct v4l2_buffer b = {.type = V4L2_BUF_TYPE_VIDEO_CAPTURE, .memory = V4L2_MEMORY_MMAP, .index = i};
    if (xioctl(c->fd, VIDIOC_QUERYBUF, &b) < 0)
      return hr__errf(err, err_len, HR_EIO, "%s: VIDIOC_QUERYBUF: %s", dev, strerror(errno));
    c->buf[i].len = b.length;
    c->buf[i].p = mmap(NULL, b.length, PROT_READ | PROT_WRITE, MAP_SHARED, c->fd, b.m.offset);
    if (c->buf[i].p == MAP_FAILED) {
      c->buf[i].p = NULL;
      return hr__errf(err, err_len, HR_EIO, "%s: mmap: %s", dev, strerror(errno));
    }
    if (xioctl(c->fd, VIDIOC_QBUF, &b) < 0)
      return hr__errf(err, err_len, HR_EIO, "%s: VIDIOC_QBUF: %s", dev, strerror(errno));
  }
  enum v4l2_buf_type t = V4L2_BUF_TYPE_VIDEO_CAPTURE;
  if (xioctl(c->fd, VIDIOC_STREAMON, &t) < 0)
    return hr__errf(err, err_len, HR_EIO, "%s: VIDIOC_STREAMON: %s", dev, strerror(errno));
  c->streaming = 1;
  if (c->fourcc != V4L2_PIX_FMT_NV12 &&
      hr__pool_init(&s->pool, pool, hr__frame_bytes(s->fmt, s->width, s->height)))
    return hr__errf(err, err_len, HR_ENOMEM, "out of memory");
  const char *how = c->fourcc == V4L2_PIX_FMT_NV12 ? "in place"
                    : c->fourcc == V4L2_PIX_FMT_YUYV ? "converted to NV12" : "decoded by libjpeg-turbo";
  snprintf(s->desc, sizeof s->desc, "v4l2 %s (%s) %dx%d %s (%s %s, %u mmap buffers)", dev,
           (char *)cap.card, s->width, s->height, hr_pixfmt_name(s->fmt), f4, how, c->nbuf);
  return HR_OK;
}
