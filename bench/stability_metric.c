/* Temporal stability of two alpha sequences (stateful vs stateless) on the same input: flicker of
 * alpha where the input does not move, on the background and on the alpha edge.
 *
 * Usage: stability_metric INPUT_DIR RAW_A RAW_B W H N [NAME]
 *   INPUT_DIR/NNNNNN.src.f32   the model's input, W*H*3 float32 RGB in [0,1] (headroom run --dump-input)
 *   RAW_A/NNNNNN.pha.f32       alpha of run A, W*H float32 (headroom run --raw), likewise RAW_B
 *   frames 000000 .. N-1.
 *
 * Definitions, for each frame t >= 1 and pixel p:
 *   Y_t(p)      luma of the model input, 0.299 R + 0.587 G + 0.114 B, in [0,1].
 *   static(p,t) the input did not change around p: max over p's 3x3 neighbourhood of
 *               |Y_t - Y_{t-1}| < 2/255 (the neighbourhood keeps out pixels next to motion).
 *   background  static, and alpha < 0.5 at t-1 and at t in BOTH runs (one pixel set for A and B).
 *   edge        static, and 0.02 < alpha < 0.98 at t-1 or at t in EITHER run (the union of both
 *               runs' soft edge bands, again one pixel set for both).
 * Figures per run, means over all (p,t) in the set, alpha in [0,1]:
 *   bg flicker    mean |alpha_t - alpha_{t-1}| over background pixels. The input did not change,
 *                 so the ideal is 0: all of it is the model's own temporal noise.
 *   edge flicker  mean |alpha_t - alpha_{t-1}| over edge pixels (the matte's boundary wobbling
 *                 while the scene under it holds still).
 *   bg false+     share of background (p,t) whose alpha jumps by more than 0.1 (visible pops).
 * Lower is more stable. Pixels counted are printed, as a share of all W*H*(N-1). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static float *load(const char *dir, const char *ext, int i, size_t n, float *buf) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%06d.%s", dir, i, ext);
  FILE *f = fopen(path, "rb");
  if (!f) { fprintf(stderr, "stability_metric: cannot open %s\n", path); exit(1); }
  size_t got = fread(buf, sizeof(float), n, f);
  fclose(f);
  if (got != n) { fprintf(stderr, "stability_metric: %s: %zu of %zu floats\n", path, got, n); exit(1); }
  return buf;
}

int main(int argc, char **argv) {
  if (argc < 7) {
    fprintf(stderr, "usage: stability_metric INPUT_DIR RAW_A RAW_B W H N [NAME]\n");
    return 2;
  }
  const char *din = argv[1], *da = argv[2], *db = argv[3], *name = argc > 7 ? argv[7] : "clip";
  int W = atoi(argv[4]), H = atoi(argv[5]), N = atoi(argv[6]);
  size_t n = (size_t)W * H;
  float *rgb = malloc(n * 3 * sizeof(float)), *y0 = malloc(n * 4), *y1 = malloc(n * 4), *d = malloc(n * 4);
  float *a0 = malloc(n * 4), *a1 = malloc(n * 4), *b0 = malloc(n * 4), *b1 = malloc(n * 4);
  if (!rgb || !y0 || !y1 || !d || !a0 || !a1 || !b0 || !b1) return 1;
  double bg_a = 0, bg_b = 0, ed_a = 0, ed_b = 0, all_a = 0, all_b = 0;
  long long n_bg = 0, n_ed = 0, n_static = 0, pop_a = 0, pop_b = 0;
  for (int t = 0; t < N; t++) {
    load(din, "src.f32", t, n * 3, rgb);
    for (size_t i = 0; i < n; i++) y1[i] = 0.299f * rgb[3 * i] + 0.587f * rgb[3 * i + 1] + 0.114f * rgb[3 * i + 2];
    load(da, "pha.f32", t, n, a1);
    load(db, "pha.f32", t, n, b1);
    if (t > 0) {
      for (size_t i = 0; i < n; i++) d[i] = fabsf(y1[i] - y0[i]);
      for (int yy = 0; yy < H; yy++)
        for (int xx = 0; xx < W; xx++) {
          float m = 0;
          for (int dy = -1; dy <= 1; dy++)
            for (int dx = -1; dx <= 1; dx++) {
              int u = xx + dx, v = yy + dy;
              if (u >= 0 && u < W && v >= 0 && v < H && d[(size_t)v * W + u] > m) m = d[(size_t)v * W + u];
            }
          if (m >= 2.f / 255.f) continue;
          size_t i = (size_t)yy * W + xx;
          float da_ = fabsf(a1[i] - a0[i]), db_ = fabsf(b1[i] - b0[i]);
          n_static++;
          all_a += da_; all_b += db_;
          if (a0[i] < 0.5f && a1[i] < 0.5f && b0[i] < 0.5f && b1[i] < 0.5f) {
            n_bg++; bg_a += da_; bg_b += db_;
            pop_a += da_ > 0.1f; pop_b += db_ > 0.1f;
          }
#define SOFT(x) ((x) > 0.02f && (x) < 0.98f)
          if (SOFT(a0[i]) || SOFT(a1[i]) || SOFT(b0[i]) || SOFT(b1[i])) { n_ed++; ed_a += da_; ed_b += db_; }
        }
    }
    float *s;
    s = y0; y0 = y1; y1 = s;
    s = a0; a0 = a1; a1 = s;
    s = b0; b0 = b1; b1 = s;
  }
  double tot = (double)n * (N - 1);
  printf("%s: %dx%d, %d frames; of all %.0f pixel-frames: static %.1f%%, static background %.1f%% (%lld), static edge "
         "%.3f%% (%lld)\n", name, W, H, N, tot, 100 * n_static / tot, 100 * n_bg / tot, n_bg, 100 * n_ed / tot, n_ed);
  printf("  %-10s %14s %14s %14s %14s\n", "run", "bg flicker", "edge flicker", "bg pops>0.1", "all static");
  printf("  %-10s %14.6f %14.6f %13.4f%% %14.6f\n", "stateful", n_bg ? bg_a / n_bg : 0, n_ed ? ed_a / n_ed : 0,
         n_bg ? 100.0 * pop_a / n_bg : 0, n_static ? all_a / n_static : 0);
  printf("  %-10s %14.6f %14.6f %13.4f%% %14.6f\n", "stateless", n_bg ? bg_b / n_bg : 0, n_ed ? ed_b / n_ed : 0,
         n_bg ? 100.0 * pop_b / n_bg : 0, n_static ? all_b / n_static : 0);
  printf("  stateless/stateful: bg flicker x%.2f, edge flicker x%.2f\n", bg_a > 0 ? bg_b / bg_a : 0, ed_a > 0 ? ed_b / ed_a : 0);
  free(rgb); free(y0); free(y1); free(d); free(a0); free(a1); free(b0); free(b1);
  return 0;
}
