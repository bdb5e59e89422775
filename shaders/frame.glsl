// The frame in binding 1: a 16-word header (format, size, plane byte offsets and strides, BT.601
// constants) and the planes. The colour definitions are ingest.h's, operation for operation.
// Header: f[0] fmt (hr_pixfmt), f[1] width, f[2] height, f[3..5] plane offsets, f[6..8] strides,
// f[9] yo, f[10..14] ys rv gu gv bu (float bits). FH(i) reads header word i: f[i] unless a shader
// defines it first (srcresize.comp: from push constants when the backend gives them, the planes then
// at those offsets in the buffer bound as the frame, e.g. host memory the device imported).
#ifndef FH
#define FH(i) f[i]
#endif
uint fbyte(uint off) { return (f[off >> 2] >> ((off & 3u) * 8u)) & 255u; }
float clamp01(float v) { v = v < 0.0 ? 0.0 : v; return v > 1.0 ? 1.0 : v; }
vec3 fetch_px(int x, int y) {
  uint fmt = FH(0);
  uint ux = uint(x), uy = uint(y);
  if (fmt >= 1u && fmt <= 4u) {
    uint Y = fbyte(FH(3) + uy * FH(6) + ux), U, V;
    if (fmt <= 2u) {
      uint o = FH(4) + (uy / 2u) * FH(7) + (ux / 2u) * 2u;
      U = fbyte(o); V = fbyte(o + 1u);
    } else {
      U = fbyte(FH(4) + (uy / 2u) * FH(7) + ux / 2u);
      V = fbyte(FH(5) + (uy / 2u) * FH(8) + ux / 2u);
    }
    float ys = uintBitsToFloat(FH(10)), rv = uintBitsToFloat(FH(11)), gu = uintBitsToFloat(FH(12));
    float gv = uintBitsToFloat(FH(13)), bu = uintBitsToFloat(FH(14));
    precise float yy = float(int(Y) - int(FH(9))) * ys;
    float u = float(int(U) - 128), v = float(int(V) - 128);
    precise float r = yy + rv * v;
    precise float gq = gu * u;
    precise float g0 = yy - gq;
    precise float gw = gv * v;
    precise float g = g0 - gw;
    precise float b = yy + bu * u;
    return vec3(clamp01(r), clamp01(g), clamp01(b));
  }
  const float k = 1.0 / 255.0;
  if (fmt == 5u) { uint o = FH(3) + uy * FH(6) + ux * 4u; return vec3(float(fbyte(o + 2u)) * k, float(fbyte(o + 1u)) * k, float(fbyte(o)) * k); }
  if (fmt == 6u) { uint o = FH(3) + uy * FH(6) + ux * 3u; return vec3(float(fbyte(o)) * k, float(fbyte(o + 1u)) * k, float(fbyte(o + 2u)) * k); }
  if (fmt == 7u) { float g = float(fbyte(FH(3) + uy * FH(6) + ux)) * k; return vec3(g, g, g); }
  uint w = (FH(3) + uy * FH(6)) / 4u + ux * 3u; /* RGBF32: rows 4-byte aligned in the staging copy */
  return vec3(uintBitsToFloat(f[w]), uintBitsToFloat(f[w + 1u]), uintBitsToFloat(f[w + 2u]));
}
// TF ResizeBilinear half-pixel taps, in float as TF computes them.
void hp_taps(int o, int in_size, int out_size, out int lo, out int hi, out float fr) {
  precise float scale = float(in_size) / float(out_size);
  precise float fo = (float(o) + 0.5) * scale;
  precise float fi = fo - 0.5;
  float fl = floor(fi);
  lo = fl < 0.0 ? 0 : int(fl);
  hi = int(ceil(fi));
  if (hi > in_size - 1) hi = in_size - 1;
  if (hi < 0) hi = 0;
  fr = fi - fl;
}
