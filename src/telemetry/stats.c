/* Streaming stage statistics: a fixed-size log-bucketed histogram giving quantiles within 0.5%. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "headroom/telemetry.h"

#define HR__ST_LO 0.001              /* ms: lower edge of bucket 1 (1 µs) */
#define HR__ST_G 1.01                /* bucket edge ratio */
#define HR__ST_NB 1620               /* log buckets: lo * g^1620 = 10014 ms */
#define HR__ST_TOTAL (HR__ST_NB + 2) /* [0] below 1 µs, [1..NB] log buckets, [NB+1] above */

struct hr_stats {
  int64_t n, ignored;
  double sum, min, max;
  double inv_log_g;
  int64_t bucket[HR__ST_TOTAL];
};

hr_status hr_stats_create(hr_stats **out) {
  if (!out) return HR_EINVAL;
  *out = NULL;
  hr_stats *s = malloc(sizeof *s);
  if (!s) return HR_ENOMEM;
  s->inv_log_g = 1.0 / log(HR__ST_G);
  hr_stats_reset(s);
  *out = s;
  return HR_OK;
}

void hr_stats_destroy(hr_stats *s) { free(s); }

void hr_stats_reset(hr_stats *s) {
  if (!s) return;
  s->n = s->ignored = 0;
  s->sum = 0;
  s->min = INFINITY;
  s->max = -INFINITY;
  memset(s->bucket, 0, sizeof s->bucket);
}

static int bucket_of(const hr_stats *s, double ms) {
  if (ms < HR__ST_LO) return 0;
  double i = floor(log(ms / HR__ST_LO) * s->inv_log_g);
  if (i >= HR__ST_NB) return HR__ST_NB + 1;
  return 1 + (int)i;
}

void hr_stats_add(hr_stats *s, double ms) {
  if (!s) return;
  if (!(ms >= 0) || isinf(ms)) { s->ignored++; return; }   /* NaN, negative, +inf */
  s->bucket[bucket_of(s, ms)]++;
  s->n++;
  s->sum += ms;
  if (ms < s->min) s->min = ms;
  if (ms > s->max) s->max = ms;
}

void hr_stats_merge(hr_stats *dst, const hr_stats *src) {
  if (!dst || !src) return;
  for (int i = 0; i < HR__ST_TOTAL; i++) dst->bucket[i] += src->bucket[i];
  dst->n += src->n;
  dst->ignored += src->ignored;
  dst->sum += src->sum;
  if (src->min < dst->min) dst->min = src->min;
  if (src->max > dst->max) dst->max = src->max;
}

int64_t hr_stats_count(const hr_stats *s) { return s ? s->n : 0; }
int64_t hr_stats_ignored(const hr_stats *s) { return s ? s->ignored : 0; }
double hr_stats_mean(const hr_stats *s) { return s && s->n ? s->sum / (double)s->n : NAN; }
double hr_stats_min(const hr_stats *s) { return s && s->n ? s->min : NAN; }
double hr_stats_max(const hr_stats *s) { return s && s->n ? s->max : NAN; }

double hr_stats_quantile(const hr_stats *s, double q) {
  if (!s || !s->n || !(q >= 0 && q <= 1)) return NAN;
  if (q == 0) return s->min;
  if (q == 1) return s->max;
  int64_t k = (int64_t)ceil(q * (double)s->n);
  if (k < 1) k = 1;
  if (k > s->n) k = s->n;
  int64_t cum = 0;
  int i = 0;
  for (; i < HR__ST_TOTAL; i++) {
    cum += s->bucket[i];
    if (cum >= k) break;
  }
  double v;
  if (i == 0) v = HR__ST_LO * 0.5;
  else if (i >= HR__ST_NB + 1) return s->max;
  else v = HR__ST_LO * pow(HR__ST_G, (double)(i - 1) + 0.5);   /* geometric midpoint */
  if (v < s->min) v = s->min;
  if (v > s->max) v = s->max;
  return v;
}
