// Shared by every compute shader of the Vulkan backend: one storage buffer holds the arena, the
// recurrent state and the weights (offsets in floats), a second the uploaded frame (bytes, with a
// header), and 32 push-constant words carry each op's offsets and shapes.
#extension GL_GOOGLE_include_directive : require
layout(local_size_x = 256) in;
layout(push_constant) uniform PC { int p[32]; };
// HR_FP16 (the *_h variants, glslc -DHR_FP16): the device buffer holds fp16 values at the same
// element offsets (storageBuffer16BitAccess), converted to fp32 on load: every sum is fp32.
#ifdef HR_FP16
#extension GL_EXT_shader_16bit_storage : require
// Values at indices from F32 on are fp32 (binding 3, a range of the same buffer): the weights and
// the guided filter's low-resolution statistics (var = mean(x^2) - mean(x)^2 loses its sign in
// fp16). Each offset a dispatch gets lies wholly in one range: f32(k) says which, a constant of the
// pipeline (specialisation), so no load or store branches.
layout(std430, binding = 0) buffer Dev { float16_t d[]; };
layout(std430, binding = 3) buffer Dev32 { float d32[]; };
const int F32 = 0x40000000;
layout(constant_id = 1) const int FMASK = 0; // bit k: p[k] is an offset in the fp32 range
bool f32(int k) { return ((FMASK >> k) & 1) != 0; }
float ldu(bool f, int i) { return f ? d32[i - F32] : float(d[i]); }
void stu(bool f, int i, float x) { if (f) d32[i - F32] = x; else d[i] = float16_t(x); }
#else
layout(std430, binding = 0) buffer Dev { float d[]; };
bool f32(int k) { return false; }
float ldu(bool f, int i) { return d[i]; }
void stu(bool f, int i, float x) { d[i] = x; }
#endif
// An activation applied after a convolution's clamp (the backend fuses a following op into it):
// 0 none, 1 hardswish, 2 sigmoid, 3 tanh; the same arithmetic as unary.comp.
float act_post(float x, int a) {
  if (a == 1) { float q = min(max(x + 3.0, 0.0), 6.0); return (x * (1.0 / 6.0)) * q; }
  if (a == 2) return 1.0 / (1.0 + exp(-x));
  if (a == 3) { float e = exp(-2.0 * abs(x)); float y = (1.0 - e) / (1.0 + e); return x < 0.0 ? -y : y; }
  return x;
}
// The frame: binding 1 (the fgf tail), or FRAME_BINDING where a shader defines it first (4: the
// ingest, srcresize.comp, which the backend may point at the frame where it lies, host memory,
// while the frame's copy to the device runs beside the network)
#ifndef FRAME_BINDING
#define FRAME_BINDING 1
#endif
layout(std430, binding = FRAME_BINDING) readonly buffer Frame { uint f[]; };
uint gid() { return gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * 256u; }
float pf(int i) { return intBitsToFloat(p[i]); }
// A convolution's epilogue (p[20..29], conv*.comp): clamp, activation, then the ops the backend
// folded in after it, in this order: x mul1 (p[26]), + add (p[27]), relu / relu6, x mul2 (p[28]),
// an activation (flags >> 12), + residual (p[29], at the output's own index oi). p[25] flags: 1 mul1,
// 2 add, 4 relu, 8 relu6, 256 mul2, 128 residual; 16/32/64: mul1/add/mul2 a scalar, not per channel;
// 512: instead of mul2, x a view of another value (a GRU's z), its pixel stride in bits 16 on.
// 2048 (with 512 and 128): a GRU's new state, (1 - z) * h + z * c: the residual is h, times 1 - z.
// 1024 (a squeeze-excitation's scale s, one output a channel): the 1x1 convolution after the
// excitation reads W'[c][j] = W[c][j] * s[c] instead of W and the excitation's input unscaled;
// row c (bits 16 on: its length) of W at p[26] written scaled to p[29] (neither used otherwise)
// by convsk.comp's workgroup after epi (the backend gives that flag to no other kernel).
// The constants are in the weights' range (f32(2)), the residual in f32(0)'s.
layout(constant_id = 2) const int EPI = 0; // p[25], a constant of the pipeline
float epi(float v, int oc, int oi) {
  v = act_post(min(max(v, pf(20)), pf(21)), p[24]);
  const int fl = EPI;
  if (fl == 0) return v;
  bool fw = f32(2);
  if ((fl & 1) != 0) v = v * ldu(fw, p[26] + ((fl & 16) != 0 ? 0 : oc));
  if ((fl & 2) != 0) v = v + ldu(fw, p[27] + ((fl & 32) != 0 ? 0 : oc));
  if ((fl & 4) != 0) v = max(v, 0.0);
  if ((fl & 8) != 0) v = min(max(v, 0.0), 6.0);
  if ((fl & 256) != 0) v = v * ldu(fw, p[28] + ((fl & 64) != 0 ? 0 : oc));
  // 512: x a view (fp32 storage) at p[28], its pixels fl >> 16 floats apart (oi = pixel * p[22] + oc)
  float z = 0.0;
  if ((fl & 512) != 0) { z = ldu(false, p[28] + ((oi - oc) / p[22]) * (fl >> 16) + oc); v = v * z; }
  v = act_post(v, (fl >> 12) & 15);
  if ((fl & 2048) != 0) v = (1.0 - z) * ldu(f32(0), p[29] + oi) + v;
  else if ((fl & 128) != 0) v = v + ldu(f32(0), p[29] + oi);
  return v;
}
