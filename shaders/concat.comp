#version 450
// A concatenation along the channels in one dispatch (fp32 storage): the output's channels that
// the sources copy, one a thread; channels written in place by their producers are not listed.
// Source k's element (pixel, j) lies at base + pixel * pixel stride + j: a dense value (stride =
// its channels) or a view of a wider one (a split's output read where the split's input is); a
// source may be a product (the Mul before the concat, computed here): times the element of a
// second one at mbase + pixel * mstride + j.
// p: 0 n (pixels x copied channels), 1 out, 2 out's channels (its pixel stride), 3 sources (<= 4),
// 4 copied channels a pixel; source k at 5 + 6k: base, pixel stride, first output channel,
// channels, mbase (-1: none), its pixel stride.
#include "common.glsl"
void main() {
  uint i = gid();
  if (i >= uint(p[0])) return;
  int cs = p[4], px = int(i) / cs, j = int(i) - px * cs;
  for (int k = 0; k < p[3]; k++) {
    int q = 5 + 6 * k, cn = p[q + 3];
    if (j < cn) {
      float x = ldu(false, p[q] + px * p[q + 1] + j);
      if (p[q + 4] >= 0) x = x * ldu(false, p[q + 4] + px * p[q + 5] + j);
      stu(f32(1), p[1] + px * p[2] + p[q + 2] + j, x);
      return;
    }
    j -= cn;
  }
}
