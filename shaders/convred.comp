#version 450
// The second half of a convolution split along K across workgroups (convt.comp SPLIT): adds the
// S slices of raw sums in the scratch (p[30], p[31] = S, p[0] floats each), then the bias and the
// epilogue, one output a thread. Push constants those of the convolution itself.
#include "common.glsl"
void main() {
  int i = int(gid()), n = p[0];
  if (i >= n) return;
  int OC = p[10], m = i / OC, oc = i - m * OC, S = p[31];
  float v = 0.0;
  for (int s = 0; s < S; s++) v += ldu(false, p[30] + s * n + i); // fp32 storage only (the backend offers no split in fp16)
  v += p[3] >= 0 ? ldu(f32(3), p[3] + oc) : 0.0;
  int oi = m * p[22] + p[23] + oc;
  stu(f32(4), p[4] + oi, epi(v, oc, oi));
}
