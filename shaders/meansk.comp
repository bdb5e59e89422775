#version 450
// Mean over a contiguous block of axes for few outputs over many values (squeeze-excitation's
// global average): OPW outputs per workgroup (specialisation constant 0: 8, or 2 for long
// reductions), the reduced axis split over 256 / OPW threads each (a thread reads OPW adjacent
// channels' values with its neighbours), summed in shared memory. (32 outputs a workgroup over 8
// threads each left a 45x60x72 mean 3 workgroups of 337 loads a thread: ~19 us on the H200; 8 over
// 32, 15 workgroups of 85 loads for 45x60x120: ~10 us.) Push constants as mean.comp.
#include "common.glsl"
layout(constant_id = 0) const int OPW = 8;
shared float red[256];
void main() {
  uint lt = gl_LocalInvocationID.x, o = lt % uint(OPW), ks = lt / uint(OPW);
  uint i = (gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x) * uint(OPW) + o;
  int inner = p[4], R = p[3];
  float s = 0.0;
  if (i < uint(p[0])) {
    int base = p[1] + (int(i) / inner) * R * inner + int(i) % inner;
    for (int r = int(ks); r < R; r += 256 / OPW) s += ldu(f32(1), base + r * inner);
  }
  red[lt] = s;
  barrier();
  for (uint h = 128u; h >= uint(OPW); h >>= 1) {
    if (lt < h) red[lt] += red[lt + h];
    barrier();
  }
  if (lt < uint(OPW) && i < uint(p[0])) stu(f32(2), p[2] + int(i), red[lt] / float(R));
}
