/* Offline color/depth association over whole timestamp lists: TUM associate.py's greedy rule. */
#include <stdlib.h>
#include "headroom.h"

typedef struct hr__assoc_edge {
  int64_t k;   /* |dt| ns */
  int i, j;    /* color index, depth index (index order = timestamp order) */
} hr__assoc_edge;

static int hr__assoc_cmp(const void *pa, const void *pb) {
  const hr__assoc_edge *x = pa, *y = pb;
  if (x->k != y->k) return x->k < y->k ? -1 : 1;
  if (x->i != y->i) return x->i < y->i ? -1 : 1;
  return (x->j > y->j) - (x->j < y->j);
}

static bool hr__assoc_increasing(const int64_t *t, int n) {
  for (int i = 1; i < n; i++)
    if (t[i] <= t[i - 1]) return false;
  return true;
}

hr_status hr_associate_offline(const int64_t *color, int nc, const int64_t *depth, int nd,
                               int64_t window_ns, int *match_out) {
  if (nc < 0 || nd < 0 || (nc && (!color || !match_out)) || (nd && !depth)) return HR_EINVAL;
  if (window_ns < 0 || window_ns > 1000000000LL) return HR_EINVAL;
  if (!hr__assoc_increasing(color, nc) || !hr__assoc_increasing(depth, nd)) return HR_EINVAL;
  for (int i = 0; i < nc; i++)
    if (color[i] > ((int64_t)1 << 62) || color[i] < -((int64_t)1 << 62)) return HR_EINVAL;
  for (int j = 0; j < nd; j++)
    if (depth[j] > ((int64_t)1 << 62) || depth[j] < -((int64_t)1 << 62)) return HR_EINVAL;
  for (int i = 0; i < nc; i++) match_out[i] = -1;
  if (!nc || !nd) return HR_OK;

  /* Count, then list, the candidates: both lists are sorted, so a sliding lower bound suffices. */
  size_t ne = 0;
  for (int i = 0, lo = 0; i < nc; i++) {
    while (lo < nd && depth[lo] < color[i] - window_ns) lo++;
    for (int j = lo; j < nd && depth[j] <= color[i] + window_ns; j++) ne++;
  }
  if (!ne) return HR_OK;
  hr__assoc_edge *e = malloc(ne * sizeof *e);
  unsigned char *used = calloc((size_t)nd, 1);
  if (!e || !used) { free(e); free(used); return HR_ENOMEM; }
  size_t n = 0;
  for (int i = 0, lo = 0; i < nc; i++) {
    while (lo < nd && depth[lo] < color[i] - window_ns) lo++;
    for (int j = lo; j < nd && depth[j] <= color[i] + window_ns; j++) {
      int64_t k = depth[j] - color[i];
      e[n++] = (hr__assoc_edge){k < 0 ? -k : k, i, j};
    }
  }
  qsort(e, ne, sizeof *e, hr__assoc_cmp);
  for (size_t t = 0; t < ne; t++) {
    if (match_out[e[t].i] >= 0 || used[e[t].j]) continue;
    match_out[e[t].i] = e[t].j;
    used[e[t].j] = 1;
  }
  free(e);
  free(used);
  return HR_OK;
}
