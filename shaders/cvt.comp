#version 450
// The outputs read back (alpha, fgr): n values of the device buffer from p[1] into the host-visible
// read-back buffer (binding 2, fp32) at p[2]. Used where the device buffer holds fp16 (a copy
// otherwise).
#include "common.glsl"
layout(std430, binding = 2) writeonly buffer Out { float o[]; };
void main() {
  uint i = gid();
  if (i >= uint(p[0])) return;
  o[p[2] + int(i)] = ldu(f32(1), p[1] + int(i));
}
