#version 450
// Elementwise binary op with 4-D broadcasting (stride 0 on broadcast dims).
// p: 0 n, 1 a, 2 b, 3 out, 4 op (0 add 1 sub 2 mul 3 div 4 min 5 max), 5..8 out dims,
// 9..12 a strides, 13..16 b strides.
// A Sub with a constant folded in before (fp32 storage; EPI = p[25], a constant of the pipeline):
// bits 0-3: 1 operand = K - operand, 2 operand = operand - K; bit 4: the operand is b (else a);
// bit 5: K per channel (the last dim's coordinate), else a scalar; K at p[18].
#include "common.glsl"
void main() {
  uint i = gid();
  if (i >= uint(p[0])) return;
  uint t = i; int ia = p[1], ib = p[2], c3 = 0;
  for (int k = 3; k >= 0; k--) {
    int c = int(t % uint(p[5 + k])); t /= uint(p[5 + k]);
    ia += c * p[9 + k]; ib += c * p[13 + k];
    if (k == 3) c3 = c;
  }
  float a = ldu(f32(1), ia), b = ldu(f32(2), ib), r;
  if ((EPI & 15) != 0) {
    float K = ldu(false, p[18] + ((EPI & 32) != 0 ? c3 : 0));
    if ((EPI & 16) != 0) b = (EPI & 15) == 1 ? K - b : b - K;
    else a = (EPI & 15) == 1 ? K - a : a - K;
  }
  int op = p[4];
  if (op == 0) r = a + b;
  else if (op == 1) r = a - b;
  else if (op == 2) r = a * b;
  else if (op == 3) r = a / b;
  else if (op == 4) r = min(a, b);
  else r = max(a, b);
  stu(f32(3), p[3] + int(i), r);
}
