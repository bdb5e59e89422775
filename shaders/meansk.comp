#version 450
// Mean over a contiguous block of axes for few outputs over many values (squeeze-excitation's
// global average): 8 outputs per workgroup, the reduced axis split over 32 threads each (a thread
// reads 8 adjacent channels' values with its neighbours), summed in shared memory. (32 outputs a
// workgroup over 8 threads each left a 45x60x72 mean 3 workgroups of 337 loads a thread: ~19 us
// on the H200.) Push constants as mean.comp.
#include "common.glsl"
shared float red[256];
void main() {
  uint lt = gl_LocalInvocationID.x, o = lt % 8u, ks = lt / 8u;
  uint i = (gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x) * 8u + o;
  int inner = p[4], R = p[3];
  float s = 0.0;
  if (i < uint(p[0])) {
    int base = p[1] + (int(i) / inner) * R * inner + int(i) % inner;
    for (int r = int(ks); r < R; r += 32) s += ldu(f32(1), base + r * inner);
  }
  red[lt] = s;
  barrier();
  for (uint h = 128u; h >= 8u; h >>= 1) {
    if (lt < h) red[lt] += red[lt + h];
    barrier();
  }
  if (lt < 8u && i < uint(p[0])) stu(f32(2), p[2] + int(i), red[lt] / float(R));
}
