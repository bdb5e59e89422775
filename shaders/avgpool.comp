#version 450
// Average pooling NHWC, padding excluded from the count (TF SAME / VALID).
// p: 0 n, 1 in, 2 out, 3 H, 4 W, 5 C, 6 OH, 7 OW, 8 KH, 9 KW, 10 sh, 11 sw, 12 pt, 13 pl.
#include "common.glsl"
void main() {
  uint i = gid();
  if (i >= uint(p[0])) return;
  int C = p[5], OW = p[7], OH = p[6], H = p[3], W = p[4];
  int c = int(i % uint(C)); uint t = i / uint(C);
  int ox = int(t % uint(OW)); t /= uint(OW);
  int oy = int(t % uint(OH)); int n = int(t / uint(OH));
  float s = 0.0; int cnt = 0;
  for (int ky = 0; ky < p[8]; ky++) {
    int iy = oy * p[10] - p[12] + ky;
    if (iy < 0 || iy >= H) continue;
    for (int kx = 0; kx < p[9]; kx++) {
      int ix = ox * p[11] - p[13] + kx;
      if (ix < 0 || ix >= W) continue;
      s += ldu(f32(1), p[1] + ((n * H + iy) * W + ix) * C + c);
      cnt++;
    }
  }
  stu(f32(2), p[2] + int(i), s / float(cnt > 0 ? cnt : 1));
}
