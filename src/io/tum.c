/* TUM RGB-D list parsing ("timestamp path" lines) with exact nanosecond timestamps. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "io_internal.h"
#include "tum.h"

static int is_digit(char c) { return c >= '0' && c <= '9'; }

hr_status hr__tum_parse_timestamp(const char *s, const char **end, int64_t *ns) {
  const char *p = s;
  int neg = 0;
  if (*p == '+' || *p == '-') { neg = *p == '-'; p++; }
  const uint64_t max_sec = (uint64_t)(INT64_MAX / 1000000000);   /* 9223372036 */
  uint64_t sec = 0, frac = 0;
  int nint = 0, nfrac = 0, round_up = 0, overflow = 0;
  while (is_digit(*p)) {
    sec = sec * 10 + (uint64_t)(*p - '0');
    if (sec > max_sec) overflow = 1, sec = max_sec + 1;
    nint++, p++;
  }
  if (*p == '.') {
    p++;
    while (is_digit(*p)) {
      if (nfrac < 9) frac = frac * 10 + (uint64_t)(*p - '0');
      else if (nfrac == 9) round_up = *p >= '5';
      nfrac++, p++;
    }
  }
  if (nint == 0 && nfrac == 0) return HR_ECORRUPT;
  if (*p == 'e' || *p == 'E') {
    /* Exponent form: fall back to double precision. */
    char *e;
    errno = 0;
    double d = strtod(s, &e);
    if (e == s || errno == ERANGE || !isfinite(d)) return HR_ECORRUPT;
    double n = d * 1e9;
    if (!(fabs(n) < 9.2e18)) return HR_ERANGE;
    *ns = llround(n);
    if (end) *end = e;
    return HR_OK;
  }
  if (overflow) return HR_ERANGE;
  for (int i = nfrac; i < 9; i++) frac *= 10;
  uint64_t v = sec * 1000000000u + frac + (uint64_t)round_up;
  if (v > (uint64_t)INT64_MAX) return HR_ERANGE;
  *ns = neg ? -(int64_t)v : (int64_t)v;
  if (end) *end = p;
  return HR_OK;
}

void hr__tum_list_free(hr_tum_list *l) {
  if (!l) return;
  for (int i = 0; i < l->n; i++) free(l->v[i].path);
  free(l->v);
  l->v = NULL;
  l->n = 0;
}

static int is_blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

hr_status hr__tum_list_parse(const char *text, size_t len, const char *base_dir, const char *name,
                             hr_tum_list *out, char *err, size_t err_len) {
  out->v = NULL;
  out->n = 0;
  if (!name) name = "list";
  if (!text && len) return hr__errf(err, err_len, HR_EINVAL, "%s: no text", name);
  size_t blen = base_dir ? strlen(base_dir) : 0;
  int cap = 0, line = 0;
  hr_status st = HR_OK;
  char tsbuf[64];
  size_t pos = 0;
  while (pos < len) {
    const char *ln = text + pos;
    const char *nl = memchr(ln, '\n', len - pos);
    size_t ll = nl ? (size_t)(nl - ln) : len - pos;
    pos += ll + (nl ? 1 : 0);
    line++;
    if (memchr(ln, '\0', ll)) { st = hr__errf(err, err_len, HR_ECORRUPT, "%s line %d: NUL byte", name, line); break; }
    const char *p = ln, *e = ln + ll;
    while (p < e && is_blank(*p)) p++;
    if (p == e || *p == '#') continue;
    /* Timestamp token, copied so the parser sees a terminated string. */
    const char *t = p;
    while (p < e && !is_blank(*p)) p++;
    size_t tl = (size_t)(p - t);
    int64_t ns = 0;
    const char *tend = NULL;
    hr_status ts_st = HR_ECORRUPT;
    if (tl < sizeof tsbuf) {
      memcpy(tsbuf, t, tl);
      tsbuf[tl] = 0;
      ts_st = hr__tum_parse_timestamp(tsbuf, &tend, &ns);
      if (ts_st == HR_OK && *tend) ts_st = HR_ECORRUPT;
    }
    if (ts_st != HR_OK) {
      st = hr__errf(err, err_len, HR_ECORRUPT, "%s line %d: bad timestamp '%.*s'%s", name, line,
                    (int)(tl > 40 ? 40 : tl), t, ts_st == HR_ERANGE ? " (out of range)" : "");
      break;
    }
    while (p < e && is_blank(*p)) p++;
    const char *f = p;
    while (p < e && !is_blank(*p)) p++;
    size_t fl = (size_t)(p - f);
    if (fl == 0) { st = hr__errf(err, err_len, HR_ECORRUPT, "%s line %d: no file after the timestamp", name, line); break; }
    if (out->n == cap) {
      int nc = cap ? cap * 2 : 64;
      hr_tum_entry *nv = realloc(out->v, (size_t)nc * sizeof *nv);
      if (!nv) { st = hr__errf(err, err_len, HR_ENOMEM, "%s: out of memory", name); break; }
      out->v = nv;
      cap = nc;
    }
    int join = blen && f[0] != '/';
    char *path = malloc((join ? blen + 1 : 0) + fl + 1);
    if (!path) { st = hr__errf(err, err_len, HR_ENOMEM, "%s: out of memory", name); break; }
    size_t o = 0;
    if (join) { memcpy(path, base_dir, blen); path[blen] = '/'; o = blen + 1; }
    memcpy(path + o, f, fl);
    path[o + fl] = 0;
    out->v[out->n++] = (hr_tum_entry){ns, path, line};
  }
  if (st) hr__tum_list_free(out);
  return st;
}

hr_status hr__tum_list_load(const char *list_path, bool check_files, hr_tum_list *out, char *err,
                            size_t err_len) {
  out->v = NULL;
  out->n = 0;
  uint8_t *buf = NULL;
  size_t cap = 0, len = 0;
  hr_status st = hr__file_read_all(list_path, &buf, &cap, &len, err, err_len);
  if (st) { free(buf); return st; }
  /* Base folder: the list's own folder. */
  const char *slash = strrchr(list_path, '/');
  char *dir = NULL;
  if (slash) {
    size_t dl = slash == list_path ? 1 : (size_t)(slash - list_path);
    dir = malloc(dl + 1);
    if (!dir) { free(buf); return hr__errf(err, err_len, HR_ENOMEM, "out of memory"); }
    memcpy(dir, list_path, dl);
    dir[dl] = 0;
  }
  st = hr__tum_list_parse((const char *)buf, len, dir, list_path,
                          out, err, err_len);
  free(buf);
  free(dir);
  if (st) return st;
  for (int i = 0; check_files && i < out->n; i++) {
    struct stat sb;
    const char *why = NULL;
    if (stat(out->v[i].path, &sb) != 0) why = strerror(errno);
    else if (!S_ISREG(sb.st_mode)) why = "not a regular file";
    if (why) {
      st = hr__errf(err, err_len, HR_EIO, "%s line %d: %s: %s", list_path, out->v[i].line,
                    out->v[i].path, why);
      hr__tum_list_free(out);
      return st;
    }
  }
  return HR_OK;
}
