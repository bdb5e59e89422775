#!/usr/bin/env bash
# The compositor alone (src/composite/composite.c), built here with the system compiler and no
# other part of headroom: for a machine without the model, the data or the project's dependencies
# (e.g. a quiet machine to measure on). 1920x1080, a synthetic picture (gradients and texture) and a
# synthetic matte (a soft-edged figure over ~20% of the frame, 0 and 1 elsewhere, as RVM's are),
# one thread pinned to one core; median and p90 of the thread's CPU time a frame over FRAMES.
# With OLD (a git revision), that revision's composite.c is built too and the two run in turns
# (ROUNDS each, old first): the medians side by side, for a shared machine where one run alone
# says little.
# Usage: bench/composite_idle.sh [FRAMES=200] [OLD] [ROUNDS=3]
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
N=${1:-200}
OLD=${2:-}
R=${3:-3}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cat > "$T/main.c" <<'EOF'
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "headroom.h"
/* the core functions the compositor calls (names; a background frame's rows, unused here) */
const char *hr_pixfmt_name(hr_pixfmt f) { return f == HR_PIX_NV12_VIDEO ? "nv12v" : f == HR_PIX_I420_VIDEO ? "i420v" : f == HR_PIX_BGRA ? "bgra" : "rgb24"; }
const char *hr_health_state_name(hr_health_state s) { return "healthy"; }
hr_status hr_frame_validate(const hr_frame *f, char *why, size_t why_len) { return HR_OK; }
void hr_frame_row_rgbf(const hr_frame *f, int y, float *dst) { memset(dst, 0, sizeof(float) * 3 * (size_t)f->width); }
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
# the project's Release flags (CMakeLists.txt); composite.c asks for -O3 itself
CF=(-std=c11 -O2 -fvect-cost-model=dynamic -D_GNU_SOURCE -I"$here/include")
cc "${CF[@]}" "$T/main.c" "$here/src/composite/composite.c" -o "$T/bench" -lm
echo "load $(cut -d' ' -f1-3 /proc/loadavg); $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2); $(nproc) cpus; $(cc --version | head -1)"
if [ -z "$OLD" ]; then
  taskset -c 0 "$T/bench" "$N"
  exit 0
fi
git -C "$here" show "$OLD:src/composite/composite.c" > "$T/old.c"
cc "${CF[@]}" "$T/main.c" "$T/old.c" -o "$T/bench_old" -lm
for r in $(seq "$R"); do
  taskset -c 0 "$T/bench_old" "$N" | sed 's/^/old /'
  taskset -c 0 "$T/bench" "$N" | sed 's/^/new /'
done > "$T/runs.txt"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$T/runs.txt" "$OLD" <<'PY'
import sys, statistics as st, collections
d = collections.defaultdict(list)
for l in open(sys.argv[1]):
    w = l.split()   # old composite blur nv12v 1920x1080: cpu median X ms, ...
    d[(w[2], w[3], w[0])].append(float(w[7]))
for m, f in sorted({(k[0], k[1]) for k in d}, key=lambda k: (k[0], k[1])):
    o, n = d[(m, f, "old")], d[(m, f, "new")]
    print(f"{m:5s} {f:6s} 1920x1080, one core, cpu ms a frame: {sys.argv[2]} median {st.median(o):.2f} (runs {', '.join(f'{x:.2f}' for x in o)})"
          f"  ->  now {st.median(n):.2f} (runs {', '.join(f'{x:.2f}' for x in n)})")
PY
