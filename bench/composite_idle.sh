#!/usr/bin/env bash
# The compositor alone (src/composite/composite.c), built here with the system compiler and no
# other part of headroom: for a machine without the model, the data or the project's dependencies
# (e.g. a quiet machine to measure on). 1920x1080, a synthetic picture (gradients and texture) and a
# synthetic matte (a soft-edged figure over ~20% of the frame, 0 and 1 elsewhere, as RVM's are),
# one thread pinned to one core; median and p90 of the thread's CPU time a frame over FRAMES.
# Usage: bench/composite_idle.sh [FRAMES=200]
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
N=${1:-200}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cat > "$T/main.c" <<'EOF'
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "headroom.h"
/* the two core functions the compositor names things with */
const char *hr_pixfmt_name(hr_pixfmt f) { return f == HR_PIX_NV12_VIDEO ? "nv12v" : f == HR_PIX_I420_VIDEO ? "i420v" : f == HR_PIX_BGRA ? "bgra" : "rgb24"; }
const char *hr_health_state_name(hr_health_state s) { return "healthy"; }
static double cpu_ms(void) { struct timespec t; clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t); return t.tv_sec * 1e3 + t.tv_nsec / 1e6; }
static int cmp(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return x < y ? -1 : x > y; }
int main(int argc, char **argv) {
  int n = atoi(argv[1]), W = 1920, H = 1080;
  float *alpha = malloc(sizeof(float) * W * H);
  uint8_t *buf = malloc((size_t)W * H * 4), *obuf = malloc((size_t)W * H * 4);
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++) {
      double dx = (x - W * 0.45) / (W * 0.12), dy = (y - H * 0.55) / (H * 0.35);
      double r = sqrt(dx * dx + dy * dy);
      alpha[(size_t)y * W + x] = (float)fmin(1, fmax(0, (1.08 - r) * 12));
    }
  for (size_t i = 0; i < (size_t)W * H * 4; i++) buf[i] = (uint8_t)((i * 7 + (i / 1920) * 3 + (i % 13) * 11) & 255);
  hr_pixfmt fmts[] = {HR_PIX_NV12_VIDEO, HR_PIX_I420_VIDEO, HR_PIX_BGRA, HR_PIX_RGB24};
  double *t = malloc(sizeof(double) * n);
  for (int fi = 0; fi < 4; fi++)
    for (int mode = 0; mode < 2; mode++) {
      hr_composite_params p; hr_composite_params_default(&p);
      p.width = W; p.height = H; p.format = fmts[fi]; p.mode = mode ? HR_COMPOSITE_MODE_COLOR : HR_COMPOSITE_MODE_BLUR;
      hr_compositor *c; char err[256];
      if (hr_compositor_create(&p, &c, err, sizeof err)) { printf("%s\n", err); return 1; }
      hr_frame f; memset(&f, 0, sizeof f);
      f.fmt = fmts[fi]; f.width = W; f.height = H;
      hr_composite_out o; memset(&o, 0, sizeof o);
      int yuv = fi < 2, bpp = fi == 2 ? 4 : 3;
      f.planes[0] = buf; f.strides[0] = yuv ? W : W * bpp; o.planes[0] = obuf; o.strides[0] = f.strides[0];
      if (fi == 0) { f.planes[1] = buf + W * H; f.strides[1] = W; o.planes[1] = obuf + W * H; o.strides[1] = W; }
      if (fi == 1) for (int k = 1; k < 3; k++) {
        f.planes[k] = buf + W * H + (k - 1) * W * H / 4; f.strides[k] = W / 2;
        o.planes[k] = obuf + W * H + (k - 1) * W * H / 4; o.strides[k] = W / 2;
      }
      for (int k = 0; k < 5; k++) hr_compositor_apply(c, &f, alpha, NULL, &o, NULL);
      for (int k = 0; k < n; k++) { double t0 = cpu_ms(); hr_compositor_apply(c, &f, alpha, NULL, &o, NULL); t[k] = cpu_ms() - t0; }
      qsort(t, n, sizeof *t, cmp);
      printf("composite %-5s %-6s 1920x1080: cpu median %.2f ms, p90 %.2f ms a frame (%d frames, one core)\n", mode ? "color" : "blur",
             hr_pixfmt_name(fmts[fi]), t[n / 2], t[n * 9 / 10], n);
      hr_compositor_destroy(c);
    }
  return 0;
}
EOF
cc -std=c11 -O2 -D_GNU_SOURCE -I"$here/include" "$T/main.c" "$here/src/composite/composite.c" -o "$T/bench" -lm
echo "load $(cut -d' ' -f1-3 /proc/loadavg); $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2); $(nproc) cpus; $(cc --version | head -1)"
taskset -c 0 "$T/bench" "$N"
