#version 450
// Mean over a contiguous block of axes for few outputs over many values (squeeze-excitation's
// global average): 32 outputs per workgroup, the reduced axis split over 8 threads each, summed in
// shared memory. Push constants as mean.comp.
#include "common.glsl"
shared float red[256];
void main() {
  uint lt = gl_LocalInvocationID.x, o = lt % 32u, ks = lt / 32u;
  uint i = (gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x) * 32u + o;
  int inner = p[4], R = p[3];
  float s = 0.0;
  if (i < uint(p[0])) {
    int base = p[1] + (int(i) / inner) * R * inner + int(i) % inner;
    for (int r = int(ks); r < R; r += 8) s += ldu(f32(1), base + r * inner);
  }
  red[lt] = s;
  barrier();
  if (ks == 0u && i < uint(p[0])) {
    float t = 0.0;
    for (int k = 0; k < 8; k++) t += red[o + 32u * uint(k)];
    stu(f32(2), p[2] + int(i), t / float(R));
  }
}
