#version 450
// Mean over one contiguous block of axes: in viewed as [outer, R, inner], out[o, i] = sum_r / R.
// p: 0 n (outer*inner), 1 in, 2 out, 3 R, 4 inner.
#include "common.glsl"
void main() {
  uint i = gid();
  if (i >= uint(p[0])) return;
  int inner = p[4], R = p[3];
  int o = int(i) / inner, c = int(i) % inner;
  int base = p[1] + o * R * inner + c;
  float s = 0.0;
  for (int r = 0; r < R; r++) s += ldu(f32(1), base + r * inner);
  stu(f32(2), p[2] + int(i), s / float(R));
}
