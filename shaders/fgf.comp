#version 450
// The fused fast-guided-filter tail (lower.c, kernels.c): per full-resolution pixel, A and b
// (low resolution, 4 channels) interpolated vertically then horizontally with TF half-pixel taps,
// guidance x = (r, g, b, mean) from the frame; out = A*x + b; pha = out[3] (clipped when asked),
// fgr = out[0..2]. p: 0 n (H*W), 1 A, 2 b, 3 pha, 4 fgr (-1 none), 5 h, 6 w, 7 H, 8 W, 9 clip,
// 10 pha's float offset in the read-back buffer. EPI (p[25]) 1: pha also written there (fp32, the
// host's memory: no copy after the frame). EPI 2 (alpha_u8, no fgr): four pixels a thread, their
// round(clamp(pha, 0, 1) x 255) (ties to even) packed into one uint of the read-back buffer at uint p[10] + i / 4,
// uint p[11] set to 1 when one was NaN or Inf, and the bytes' sum added to uint p[11] + 1 (a
// workgroup's sum, one atomic add; the health monitor's mean: the host no longer reads the 2.8 MB
// of a 1920x1440 matte for it). The host zeroes both words before the frame.
#include "common.glsl"
#include "frame.glsl"
layout(std430, binding = 2) writeonly buffer Out { float o[]; };
layout(std430, binding = 2) writeonly buffer OutU { uint ou[]; };
layout(std430, binding = 2) buffer OutS { uint os[]; };
shared uint wsum[256];
void pha_out(int i, float v) {
  stu(f32(3), p[3] + i, v);
  if (EPI == 1) o[p[10] + i] = v;
}
uint q8(float v) {   // ties to even, as the CPU's (kernels.c u8_run) and headroom run's PNGs
  float c = v > 0.0 ? v : 0.0;
  c = c < 1.0 ? c : 1.0;
  precise float t = c * 255.0;
  return uint(roundEven(t));
}
float lerp4(bool f, int base, int w, int y0, int y1, float fy, int l, int r, float fx, int c) {
  float t = ldu(f, base + (y0 * w + l) * 4 + c), u = ldu(f, base + (y1 * w + l) * 4 + c);
  precise float L = t + (u - t) * fy;
  t = ldu(f, base + (y0 * w + r) * 4 + c); u = ldu(f, base + (y1 * w + r) * 4 + c);
  precise float R = t + (u - t) * fy;
  precise float v = L + (R - L) * fx;
  return v;
}
// Pixel i: its taps into the low-resolution A and b, and its guidance (r, g, b, mean).
void taps_at(uint i, out int l, out int r, out int y0, out int y1, out float fx, out float fy, out float xv[4]) {
  int W = p[8], H = p[7];
  int x = int(i % uint(W)), y = int(i / uint(W));
  hp_taps(x, p[6], W, l, r, fx);
  hp_taps(y, p[5], H, y0, y1, fy);
  vec3 px = fetch_px(x, y);
  precise float sum = px.x + px.y + px.z;
  precise float m = sum / 3.0;
  xv = float[4](px.x, px.y, px.z, m);
}
// Output channel c at those taps (channel 3, the alpha, clipped when asked).
float out_at(int l, int r, int y0, int y1, float fx, float fy, float x, int c) {
  int w = p[6];
  float a = lerp4(f32(1), p[1], w, y0, y1, fy, l, r, fx, c), b = lerp4(f32(2), p[2], w, y0, y1, fy, l, r, fx, c);
  precise float v = a * x + b;
  if (c == 3 && p[9] != 0) v = v < 0.0 ? 0.0 : v > 1.0 ? 1.0 : v;
  return v;
}
// Alpha alone at pixel i (no fgr).
float alpha_at(uint i) {
  int l, r, y0, y1; float fx, fy, xv[4];
  taps_at(i, l, r, y0, y1, fx, fy, xv);
  return out_at(l, r, y0, y1, fx, fy, xv[3], 3);
}
void main() {
  if (EPI == 2) {   // (a constant of the pipeline: the barriers below are in uniform control flow)
    uint i0 = gid() * 4u, word = 0u, sum = 0u, lt = gl_LocalInvocationID.x;
    if (i0 < uint(p[0])) {
      bool bad = false;
      for (uint k = 0u; k < 4u; k++) {
        if (i0 + k >= uint(p[0])) break;
        float v = alpha_at(i0 + k);
        stu(f32(3), p[3] + int(i0 + k), v);
        bad = bad || isnan(v) || isinf(v);
        uint q = q8(v);
        word |= q << (8u * k);
        sum += q;
      }
      ou[p[10] + int(i0 / 4u)] = word;
      if (bad) ou[p[11]] = 1u;
    }
    wsum[lt] = sum;
    barrier();
    for (uint h = 128u; h > 0u; h >>= 1u) {
      if (lt < h) wsum[lt] += wsum[lt + h];
      barrier();
    }
    if (lt == 0u && wsum[0] != 0u) atomicAdd(os[p[11] + 1], wsum[0]);
    return;
  }
  uint i = gid();
  if (i >= uint(p[0])) return;
  if (p[4] < 0) {
    pha_out(int(i), alpha_at(i));
    return;
  }
  int l, r, y0, y1; float fx, fy, xv[4];
  taps_at(i, l, r, y0, y1, fx, fy, xv);
  for (int c = 0; c < 3; c++) stu(f32(4), p[4] + int(i) * 3 + c, out_at(l, r, y0, y1, fx, fy, xv[c], c));
  pha_out(int(i), out_at(l, r, y0, y1, fx, fy, xv[3], 3));
}
