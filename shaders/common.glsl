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
