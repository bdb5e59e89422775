// Shared by every compute shader of the Vulkan backend: one storage buffer holds the arena, the
// recurrent state and the weights (offsets in floats), a second the uploaded frame (bytes, with a
// header), and 32 push-constant words carry each op's offsets and shapes.
#extension GL_GOOGLE_include_directive : require
layout(local_size_x = 256) in;
layout(std430, binding = 0) buffer Dev { float d[]; };
layout(std430, binding = 1) readonly buffer Frame { uint f[]; };
layout(push_constant) uniform PC { int p[32]; };
uint gid() { return gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * 256u; }
float pf(int i) { return intBitsToFloat(p[i]); }
// An activation applied after a convolution's clamp (the backend fuses a following op into it):
// 0 none, 1 hardswish, 2 sigmoid, 3 tanh; the same arithmetic as unary.comp.
float act_post(float x, int a) {
  if (a == 1) { float q = min(max(x + 3.0, 0.0), 6.0); return (x * (1.0 / 6.0)) * q; }
  if (a == 2) return 1.0 / (1.0 + exp(-x));
  if (a == 3) { float e = exp(-2.0 * abs(x)); float y = (1.0 - e) / (1.0 + e); return x < 0.0 ? -y : y; }
  return x;
}
