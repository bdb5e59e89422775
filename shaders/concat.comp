#version 450
// A concatenation along the channels in one dispatch (fp32 storage): the output's channels that
// the sources copy, one a thread; channels written in place by their producers are not listed.
// Source k's element (pixel, j) lies at base + pixel * pixel stride + j: a dense value (stride =
// its channels) or a view of a wider one (a split's output read where the split's input is).
// p: 0 n (pixels x copied channels), 1 out, 2 out's channels (its pixel stride), 3 sources (<= 6),
// 4 copied channels a pixel; source k at 5 + 4k: base, pixel stride, first output channel, channels.
#include "common.glsl"
void main() {
  uint i = gid();
  if (i >= uint(p[0])) return;
  int cs = p[4], px = int(i) / cs, j = int(i) - px * cs;
  for (int k = 0; k < p[3]; k++) {
    int cn = p[8 + 4 * k];
    if (j < cn) {
      stu(f32(1), p[1] + px * p[2] + p[7 + 4 * k] + j, ldu(false, p[5 + 4 * k] + px * p[6 + 4 * k] + j));
      return;
    }
    j -= cn;
  }
}
