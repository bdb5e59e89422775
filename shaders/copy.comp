#version 450
// Strided 4-D block copy (concat, split, slice, pad): dst[r . dst_str] = src[r . src_str] over the
// region's dims; src -1 writes zeros. p: 0 n, 1 src, 2 dst, 3..6 dims, 7..10 src strides, 11..14 dst strides.
#include "common.glsl"
void main() {
  uint i = gid();
  if (i >= uint(p[0])) return;
  uint t = i; int is = p[1], id = p[2];
  for (int k = 3; k >= 0; k--) {
    int c = int(t % uint(p[3 + k])); t /= uint(p[3 + k]);
    is += c * p[7 + k]; id += c * p[11 + k];
  }
  stu(f32(2), id, p[1] >= 0 ? ldu(f32(1), is) : 0.0);
}
