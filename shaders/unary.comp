#version 450
// Elementwise unary op. p: 0 n, 1 in, 2 out, 3 op (0 relu 1 relu6 2 sigmoid 3 tanh 4 hardswish 5 square).
#include "common.glsl"
void main() {
  uint i = gid();
  if (i >= uint(p[0])) return;
  float x = ldu(f32(1), p[1] + int(i)), r;
  int op = p[3];
  if (op == 0) r = max(x, 0.0);
  else if (op == 1) r = min(max(x, 0.0), 6.0);
  else if (op == 2) r = 1.0 / (1.0 + exp(-x));
  else if (op == 3) { float e = exp(-2.0 * abs(x)); float y = (1.0 - e) / (1.0 + e); r = x < 0.0 ? -y : y; }
  else if (op == 4) { float q = min(max(x + 3.0, 0.0), 6.0); r = (x * (1.0 / 6.0)) * q; }
  else r = x * x;
  stu(f32(2), p[2] + int(i), r);
}
