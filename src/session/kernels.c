/* Data-movement kernels (contiguous block copies), tanh, and the fused guided-filter tail. */
#include <math.h>
#include <string.h>
#include "session/kernels.h"

const struct xnn_allocator *hr__xnn_allocator(void) { return NULL; /* XNNPACK's default (malloc family) */ }

static int norm_axis(int a, int rank) { return a < 0 ? a + rank : a; }

void hr__k_concat(const hr__tensor *const *in, int n, int axis, hr__tensor *out) {
  int ax = norm_axis(axis, out->rank);
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < ax; d++) outer *= out->dims[d];
  for (int d = ax + 1; d < out->rank; d++) inner *= out->dims[d];
  size_t es = hr__dtsize(out->dt);
  int64_t orow = out->dims[ax] * inner;
  char *o = out->data;
  int64_t off = 0;
  for (int k = 0; k < n; k++) {
    int64_t row = in[k]->dims[ax] * inner;
    const char *src = in[k]->data;
    for (int64_t p = 0; p < outer; p++) memcpy(o + (p * orow + off) * es, src + p * row * es, (size_t)row * es);
    off += row;
  }
}

void hr__k_split(const hr__tensor *in, int axis, hr__tensor *out, int n) {
  int ax = norm_axis(axis, in->rank);
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < ax; d++) outer *= in->dims[d];
  for (int d = ax + 1; d < in->rank; d++) inner *= in->dims[d];
  size_t es = hr__dtsize(in->dt);
  int64_t irow = in->dims[ax] * inner, off = 0;
  for (int k = 0; k < n; k++) {
    int64_t row = out[k].dims[ax] * inner;
    char *dst = out[k].data;
    for (int64_t p = 0; p < outer; p++) memcpy(dst + p * row * es, (const char *)in->data + (p * irow + off) * es, (size_t)row * es);
    off += row;
  }
}

/* Copy the box [begin, begin+size) of src into dst at dbegin; innermost dimension copied with memcpy. */
static void box_copy(const hr__tensor *src, const int64_t *sb, hr__tensor *dst, const int64_t *db, const int64_t *size) {
  int r = src->rank;
  size_t es = hr__dtsize(src->dt);
  int64_t ss[HR_MAX_RANK], ds[HR_MAX_RANK], s = 1, d = 1;
  for (int i = r - 1; i >= 0; i--) { ss[i] = s; s *= src->dims[i]; ds[i] = d; d *= dst->dims[i]; }
  int64_t rows = 1;
  for (int i = 0; i < r - 1; i++) rows *= size[i];
  int64_t idx[HR_MAX_RANK] = {0};
  for (int64_t k = 0; k < rows; k++) {
    int64_t so = sb[r - 1] * ss[r - 1], dof = db[r - 1] * ds[r - 1];
    for (int i = 0; i < r - 1; i++) { so += (sb[i] + idx[i]) * ss[i]; dof += (db[i] + idx[i]) * ds[i]; }
    memcpy((char *)dst->data + dof * es, (const char *)src->data + so * es, (size_t)size[r - 1] * es);
    for (int i = r - 2; i >= 0; i--) { if (++idx[i] < size[i]) break; idx[i] = 0; }
  }
}

void hr__k_slice(const hr__tensor *in, const int32_t *begin, hr__tensor *out) {
  int64_t sb[HR_MAX_RANK], db[HR_MAX_RANK] = {0};
  for (int i = 0; i < in->rank; i++) sb[i] = begin[i];
  box_copy(in, sb, out, db, out->dims);
}

void hr__k_pad(const hr__tensor *in, const int32_t *pads, hr__tensor *out) {
  memset(out->data, 0, (size_t)hr__numel(out) * hr__dtsize(out->dt));
  int64_t sb[HR_MAX_RANK] = {0}, db[HR_MAX_RANK];
  for (int i = 0; i < in->rank; i++) db[i] = pads[2 * i];
  box_copy(in, sb, out, db, in->dims);
}

void hr__k_tanh(const float *x, float *y, int64_t n) {
  for (int64_t i = 0; i < n; i++) y[i] = tanhf(x[i]);
}

void hr__k_fgf_tail(hr_session *s, const hr__rop *r, const hr__tensor *const *in, hr__tensor *out) {
  (void)s; (void)r; (void)in; (void)out; /* filled in by the refiner fusion */
}
