/* Per-frame telemetry records written as JSON lines, formatted into an owned buffer without allocation. */
#include <errno.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "headroom/telemetry.h"

struct hr_telemetry {
  int fd;
  bool is_stdout;
  int flush_every;
  int since_flush;
  int64_t count;                      /* records whose whole line is in the file */
  int64_t pending;                    /* records formatted into buf, not yet written */
  char *buf;                          /* whole lines waiting for the next flush */
  size_t cap, used;
  off_t committed;                    /* file offset after the last whole line written */
  double last_flush_ms;
  char line[HR_TELEMETRY_LINE_MAX];   /* one formatted record */
  char err[256];
};

void hr_telemetry_record_init(hr_telemetry_record *r) {
  if (!r) return;
  memset(r, 0, sizeof *r);
  r->t_ms = NAN;
  r->latency_ms = r->ingest_ms = r->infer_ms = r->post_ms = r->output_ms = NAN;
  r->rss_bytes = r->headroom_bytes = HR_TELEMETRY_NONE;
  r->ceiling_safe_bytes = r->ceiling_kill_bytes = HR_TELEMETRY_NONE;
  r->ratio = r->confidence = r->depth_dt_ms = r->net_ms = r->device_ms = NAN;
  r->coef_age = r->threads = HR_TELEMETRY_NONE;
  r->coef_warped = -1;
  r->lag_off = r->lag_band = NAN;
}

/* A bounded appender: keeps counting the length needed after the buffer is full. */
typedef struct hr__out {
  char *p;
  size_t n;     /* capacity including the NUL */
  size_t len;   /* bytes that the full output needs */
} hr__out;

static void out_mem(hr__out *o, const char *s, size_t k) {
  if (o->len + 1 < o->n) {
    size_t room = o->n - 1 - o->len;
    memcpy(o->p + o->len, s, k < room ? k : room);
  }
  o->len += k;
}

static void out_str(hr__out *o, const char *s) { out_mem(o, s, strlen(s)); }

static void out_fmt_int(hr__out *o, int64_t v) {
  char b[24];
  char *e = b + sizeof b, *q = e;
  uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
  do { *--q = (char)('0' + u % 10); u /= 10; } while (u);
  if (v < 0) *--q = '-';
  out_mem(o, q, (size_t)(e - q));
}

/* Fixed-point decimal with `dec` decimals (3 or 4), without snprintf: the formatter is on the
 * per-frame path and printf's float conversion is comparatively slow. |v| must be finite. */
static void out_fixed(hr__out *o, double v, int dec) {
  static const double p10[] = {1, 10, 100, 1000, 10000};
  if (!isfinite(v)) { out_str(o, "null"); return; }
  if (fabs(v) >= 9.0e15 / p10[dec]) {   /* beyond exact integer range: exponent form */
    char b[40];
    int k = snprintf(b, sizeof b, "%.17g", v);
    out_mem(o, b, (size_t)k);
    return;
  }
  double sc = v * p10[dec];
  int64_t m = (int64_t)llround(sc);
  if (m < 0) { out_mem(o, "-", 1); m = -m; }
  int64_t ip = m / (int64_t)p10[dec], fp = m % (int64_t)p10[dec];
  out_fmt_int(o, ip);
  char f[8];
  f[0] = '.';
  for (int i = dec; i >= 1; i--) { f[i] = (char)('0' + fp % 10); fp /= 10; }
  out_mem(o, f, (size_t)dec + 1);
}

static void out_key(hr__out *o, const char *k, bool first) {
  if (!first) out_mem(o, ",", 1);
  out_mem(o, "\"", 1);
  out_str(o, k);
  out_mem(o, "\":", 2);
}

/* Length of the valid UTF-8 sequence at s (1..4), or 0 if invalid. `left` bytes are available. */
static int utf8_seq(const unsigned char *s, size_t left) {
  unsigned c = s[0];
  int k;
  unsigned min;
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) { k = 2; min = 0x80; }
  else if (c >= 0xE0 && c <= 0xEF) { k = 3; min = 0x800; }
  else if (c >= 0xF0 && c <= 0xF4) { k = 4; min = 0x10000; }
  else return 0;
  if (left < (size_t)k) return 0;
  unsigned cp = c & (0x7F >> k);
  for (int i = 1; i < k; i++) {
    if ((s[i] & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (s[i] & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return k;
}

/* JSON string (or null), at most HR_TELEMETRY_STR_MAX source bytes, cut at a character boundary. */
static void out_jstr(hr__out *o, const char *s) {
  static const char hex[] = "0123456789abcdef";
  if (!s) { out_str(o, "null"); return; }
  const unsigned char *u = (const unsigned char *)s;
  size_t n = strnlen(s, HR_TELEMETRY_STR_MAX + 4);
  size_t i = 0;
  out_mem(o, "\"", 1);
  while (i < n) {
    unsigned c = u[i];
    if (c >= 0x80) {
      int k = utf8_seq(u + i, n - i);
      if (i + (k ? (size_t)k : 1) > HR_TELEMETRY_STR_MAX) break;
      if (k) out_mem(o, (const char *)u + i, (size_t)k);
      else out_mem(o, "\\ufffd", 6);
      i += k ? (size_t)k : 1;
      continue;
    }
    if (i + 1 > HR_TELEMETRY_STR_MAX) break;
    i++;
    switch (c) {
    case '"': out_mem(o, "\\\"", 2); break;
    case '\\': out_mem(o, "\\\\", 2); break;
    case '\n': out_mem(o, "\\n", 2); break;
    case '\r': out_mem(o, "\\r", 2); break;
    case '\t': out_mem(o, "\\t", 2); break;
    default:
      if (c < 0x20 || c == 0x7F) {
        char e[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
        out_mem(o, e, 6);
      } else {
        char ch = (char)c;
        out_mem(o, &ch, 1);
      }
    }
  }
  out_mem(o, "\"", 1);
}

static void out_i64n(hr__out *o, int64_t v) {
  if (v == HR_TELEMETRY_NONE) out_str(o, "null");
  else out_fmt_int(o, v);
}

static void out_bool(hr__out *o, bool b) { out_str(o, b ? "true" : "false"); }

size_t hr_telemetry_format(const hr_telemetry_record *r, char *buf, size_t n) {
  hr__out o = {buf, n, 0};
  if (!r) {
    if (n) buf[0] = 0;
    return 0;
  }
  out_mem(&o, "{", 1);
  out_key(&o, "frame", true);           out_fmt_int(&o, r->frame);
  out_key(&o, "t_ms", false);           out_fixed(&o, r->t_ms, 3);
  out_key(&o, "latency_ms", false);     out_fixed(&o, r->latency_ms, 3);
  out_key(&o, "ingest_ms", false);      out_fixed(&o, r->ingest_ms, 3);
  out_key(&o, "infer_ms", false);       out_fixed(&o, r->infer_ms, 3);
  out_key(&o, "post_ms", false);        out_fixed(&o, r->post_ms, 3);
  out_key(&o, "output_ms", false);      out_fixed(&o, r->output_ms, 3);
  out_key(&o, "rss_bytes", false);      out_i64n(&o, r->rss_bytes);
  out_key(&o, "headroom_bytes", false);
  out_i64n(&o, r->headroom_bytes == INT64_MAX ? HR_TELEMETRY_NONE : r->headroom_bytes);
  out_key(&o, "ceiling_safe_bytes", false); out_i64n(&o, r->ceiling_safe_bytes);
  out_key(&o, "ceiling_kill_bytes", false); out_i64n(&o, r->ceiling_kill_bytes);
  out_key(&o, "governor_action", false); out_jstr(&o, r->governor_action);
  out_key(&o, "state_reset", false);    out_bool(&o, r->state_reset);
  out_key(&o, "proc_w", false);
  if (r->proc_w > 0) out_fmt_int(&o, r->proc_w); else out_str(&o, "null");
  out_key(&o, "proc_h", false);
  if (r->proc_h > 0) out_fmt_int(&o, r->proc_h); else out_str(&o, "null");
  out_key(&o, "ratio", false);          out_fixed(&o, r->ratio, 4);
  out_key(&o, "health", false);         out_jstr(&o, r->health);
  out_key(&o, "health_reason", false);  out_jstr(&o, r->health_reason);
  out_key(&o, "confidence", false);     out_fixed(&o, r->confidence, 4);
  out_key(&o, "depth_dt_ms", false);    out_fixed(&o, r->depth_dt_ms, 3);
  out_key(&o, "depth_fused", false);    out_bool(&o, r->depth_fused);
  out_key(&o, "dropped", false);        out_fmt_int(&o, r->dropped);
  out_key(&o, "bytes_copied", false);   out_fmt_int(&o, r->bytes_copied);
  out_key(&o, "net_ms", false);         out_fixed(&o, r->net_ms, 3);
  out_key(&o, "coef_age", false);       out_i64n(&o, r->coef_age);
  out_key(&o, "device_ms", false);      out_fixed(&o, r->device_ms, 3);
  out_key(&o, "coef_warped", false);
  if (r->coef_warped < 0) out_str(&o, "null"); else out_bool(&o, r->coef_warped != 0);
  out_key(&o, "threads", false);        out_i64n(&o, r->threads);
  out_key(&o, "lag_off", false);        out_fixed(&o, r->lag_off, 4);
  out_key(&o, "lag_band", false);       out_fixed(&o, r->lag_band, 4);
  out_mem(&o, "}\n", 2);
  if (n) buf[o.len < n ? o.len : n - 1] = 0;
  return o.len;
}

void hr_telemetry_params_default(hr_telemetry_params *p) {
  if (!p) return;
  p->flush_every = 60;
  p->buffer_bytes = 65536;
  p->append = false;
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void set_err(char *err, size_t n, const char *a, const char *b) {
  if (err && n) snprintf(err, n, "%s: %s", a, b);
}

hr_status hr_telemetry_open(const char *path, const hr_telemetry_params *pp, hr_telemetry **out,
                            char *err, size_t err_len) {
  if (err && err_len) err[0] = 0;
  if (out) *out = NULL;
  if (!path || !out) { set_err(err, err_len, "telemetry", "NULL path or out"); return HR_EINVAL; }
  hr_telemetry_params p;
  if (pp) p = *pp; else hr_telemetry_params_default(&p);
  if (p.flush_every < 0 || p.buffer_bytes > ((size_t)1 << 30)) {
    set_err(err, err_len, path, "invalid telemetry params");
    return HR_EINVAL;
  }
  if (p.buffer_bytes < HR_TELEMETRY_LINE_MAX) p.buffer_bytes = HR_TELEMETRY_LINE_MAX;
  hr_telemetry *t = calloc(1, sizeof *t);
  if (!t) return HR_ENOMEM;
  t->buf = malloc(p.buffer_bytes);
  if (!t->buf) { free(t); return HR_ENOMEM; }
  t->cap = p.buffer_bytes;
  if (strcmp(path, "-") == 0) {
    t->fd = STDOUT_FILENO;
    t->is_stdout = true;
  } else {
    t->fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | (p.append ? O_APPEND : O_TRUNC), 0666);
    if (t->fd < 0) {
      set_err(err, err_len, path, strerror(errno));
      free(t->buf);
      free(t);
      return HR_EIO;
    }
    t->committed = lseek(t->fd, 0, SEEK_END);
    if (t->committed < 0) t->committed = 0;
  }
  t->flush_every = p.flush_every;
  t->last_flush_ms = now_ms();
  *out = t;
  return HR_OK;
}

/* Write the buffered lines. On a short or failed write the file is cut back to the last whole
 * line (a regular file; a pipe keeps what went through) and the lines not written are dropped. */
static hr_status flush_lines(hr_telemetry *t) {
  size_t done = 0;
  int e = 0;
  while (done < t->used) {
    ssize_t w = write(t->fd, t->buf + done, t->used - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) { e = w < 0 ? errno : EIO; break; }
    done += (size_t)w;
  }
  t->last_flush_ms = now_ms();
  t->since_flush = 0;
  if (!e) {
    t->committed += (off_t)t->used;
    t->count += t->pending;
    t->used = 0; t->pending = 0;
    return HR_OK;
  }
  /* keep the lines that went through whole; cut the partial one */
  size_t whole = 0;
  int64_t lines = 0;
  for (size_t i = 0; i < done; i++) if (t->buf[i] == '\n') { whole = i + 1; lines++; }
  if (!t->is_stdout && done > whole && ftruncate(t->fd, t->committed + (off_t)whole) == 0)
    lseek(t->fd, t->committed + (off_t)whole, SEEK_SET);
  t->committed += (off_t)whole;
  t->count += lines;
  snprintf(t->err, sizeof t->err, "telemetry: %lld line(s) not written: %s", (long long)(t->pending - lines), strerror(e));
  t->used = 0; t->pending = 0;
  errno = e;
  return HR_EIO;
}

hr_status hr_telemetry_write(hr_telemetry *t, const hr_telemetry_record *r) {
  if (!t || !r) return HR_EINVAL;
  size_t len = hr_telemetry_format(r, t->line, sizeof t->line);
  if (len >= sizeof t->line) len = sizeof t->line - 1;   /* cannot happen by construction */
  if (t->used + len > t->cap) {
    hr_status st = flush_lines(t);
    if (st) return st;
  }
  memcpy(t->buf + t->used, t->line, len);
  t->used += len;
  t->pending++;
  if (t->flush_every <= 1 || ++t->since_flush >= t->flush_every || now_ms() - t->last_flush_ms >= 1000.0)
    return flush_lines(t);
  return HR_OK;
}

hr_status hr_telemetry_flush(hr_telemetry *t) {
  if (!t) return HR_OK;
  return t->used ? flush_lines(t) : HR_OK;
}

int64_t hr_telemetry_count(const hr_telemetry *t) { return t ? t->count : 0; }

const char *hr_telemetry_last_error(const hr_telemetry *t) { return t ? t->err : ""; }

hr_status hr_telemetry_close(hr_telemetry *t) {
  if (!t) return HR_OK;
  hr_status st = hr_telemetry_flush(t);
  if (!t->is_stdout && close(t->fd) != 0 && !st) st = HR_EIO;
  free(t->buf);
  free(t);
  return st;
}
