/* Temporary weak fallbacks for the depth and overlay hooks, so the CLI links before they land. */
#include <stdio.h>
#include "run_hooks.h"
#define W __attribute__((weak))
W int depth_open(depth_ctx **out, const depth_opts *o, char *err, size_t n) { (void)o; *out = NULL; snprintf(err, n, "depth fusion is not built in"); return -1; }
W int depth_on_color(depth_ctx *d, int64_t i, int64_t t, const float *a, int w, int h) { (void)d; (void)i; (void)t; (void)a; (void)w; (void)h; return 0; }
W int depth_pop(depth_ctx *d, int64_t *i, double *dt, int *f) { (void)d; (void)i; (void)dt; (void)f; return 0; }
W int depth_finish(depth_ctx *d) { (void)d; return 0; }
W void depth_summary(const depth_ctx *d, char *buf, size_t n) { (void)d; snprintf(buf, n, "n/a"); }
W void depth_close(depth_ctx *d) { (void)d; }
W int overlay_open(overlay_ctx **out, const char *p, int w, int h, double fps, char *err, size_t n) { (void)p; (void)w; (void)h; (void)fps; *out = NULL; snprintf(err, n, "overlay is not built in"); return -1; }
W int overlay_write(overlay_ctx *o, const hr_frame *f, const float *a, int aw, int ah, const uint8_t *occ) { (void)o; (void)f; (void)a; (void)aw; (void)ah; (void)occ; return 0; }
W int overlay_close(overlay_ctx *o) { (void)o; return 0; }
