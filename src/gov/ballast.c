/* Ballast: a memory-pressure generator that plays the host app (tests, demos, `--ballast`). It
 * maps 1 MB chunks with mmap and writes every page so they are resident. It deliberately bypasses
 * the library's allocator and is not part of the library's own allocation accounting: it lives in
 * src/gov/ only so that the CLI and the tests can share it. */
#include "gov/gov_internal.h"
#include "headroom/testing.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define CHUNK ((size_t)HR_GOV_MB)
#define DEFAULT_MAX_MB 65536

struct hr_ballast {
  hr_ballast_params p;
  void **chunks;   /* p.max_mb slots */
  uint64_t n;      /* chunks mapped */
  int released;    /* hold time over: everything given back, no more growth */
};

hr_status hr_ballast_parse(const char *s, hr_ballast_params *out, char *err, size_t err_len) {
  if (err && err_len) err[0] = '\0';
  if (!s || !out) return HR_EINVAL;
  char *end;
  errno = 0;
  double rate = strtod(s, &end);
  if (end == s || errno || !isfinite(rate) || rate < 0 || rate > 1e6 || (*end && *end != ':')) {
    if (err && err_len)
      snprintf(err, err_len, "ballast '%s': expected RATE[:MAX] (MB/s, MB), e.g. 50:300", s);
    return HR_EINVAL;
  }
  uint64_t max = DEFAULT_MAX_MB;
  out->hold_s = 0;
  if (*end == ':') {
    const char *m = end + 1;
    char *e2;
    errno = 0;
    unsigned long long v = strtoull(m, &e2, 10);
    double hold = 0;
    int has_hold = *e2 == ':';
    if (has_hold) {
      char *e3;
      hold = strtod(e2 + 1, &e3);
      if (e3 == e2 + 1 || *e3 || !isfinite(hold) || hold < 0) {
        if (err && err_len) snprintf(err, err_len, "ballast '%s': HOLD must be seconds >= 0", s);
        return HR_EINVAL;
      }
    }
    out->hold_s = hold;
    if (e2 == m || (*e2 && !has_hold) || errno || *m == '-' || v == 0 || v > ((uint64_t)1 << 24)) {
      if (err && err_len)
        snprintf(err, err_len, "ballast '%s': MAX must be a whole number of MB, 1..16777216", s);
      return HR_EINVAL;
    }
    max = v;
  }
  out->rate_mb_s = rate;
  out->max_mb = max;
  return HR_OK;
}

hr_status hr_ballast_create(const hr_ballast_params *p, hr_ballast **out) {
  if (!out) return HR_EINVAL;
  *out = NULL;
  if (!p || !(p->rate_mb_s >= 0) || p->max_mb == 0 || p->max_mb > ((uint64_t)1 << 24)) return HR_EINVAL;
  hr_ballast *b = calloc(1, sizeof *b);
  if (!b) return HR_ENOMEM;
  b->chunks = calloc((size_t)p->max_mb, sizeof *b->chunks);
  if (!b->chunks) { free(b); return HR_ENOMEM; }
  b->p = *p;
  *out = b;
  return HR_OK;
}

hr_status hr_ballast_tick(hr_ballast *b, double elapsed_s) {
  if (!b) return HR_EINVAL;
  if (!(elapsed_s > 0)) return HR_OK;
  double want_d = floor(b->p.rate_mb_s * elapsed_s);
  uint64_t want = want_d >= (double)b->p.max_mb ? b->p.max_mb : (uint64_t)want_d;
  if (b->p.hold_s > 0 && b->p.rate_mb_s > 0 && elapsed_s > (double)b->p.max_mb / b->p.rate_mb_s + b->p.hold_s) {
    while (b->n > 0) munmap(b->chunks[--b->n], CHUNK); /* the host app let go */
    b->released = 1;
    return HR_OK;
  }
  if (b->released) return HR_OK;
  while (b->n < want) {
    void *c = mmap(NULL, CHUNK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (c == MAP_FAILED) return HR_ENOMEM;
    memset(c, 0xA5, CHUNK);  /* non-zero, every page: resident and not mergeable as zero pages */
    b->chunks[b->n++] = c;
  }
  return HR_OK;
}

uint64_t hr_ballast_mb(const hr_ballast *b) { return b ? b->n : 0; }

void hr_ballast_destroy(hr_ballast *b) {
  if (!b) return;
  for (uint64_t i = 0; i < b->n; i++) munmap(b->chunks[i], CHUNK);
  free(b->chunks);
  free(b);
}
