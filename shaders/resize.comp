#version 450
// TF ResizeBilinear NHWC (half-pixel, legacy or align-corners), into a channel slice when asked.
// p: 0 n, 1 in, 2 out, 3 H, 4 W, 5 C, 6 OH, 7 OW, 8 half_pixel, 9 align_corners, 10 out channel
// stride, 11 out channel offset. CPT (specialisation constant 0): channels a thread (1, or 4 where
// the channels are a multiple of 4: the taps are found once for four; p[0] counts threads).
// The input as the two sources of a concat read where they lie (the concat has no dispatch):
// p[12] > 0 channels from the first (at p[1], pixel stride p[13]), the rest from the second (at
// p[14], pixel stride p[15]); a multiple of CPT.
#include "common.glsl"
layout(constant_id = 0) const int CPT = 1;
void taps(int o, int in_size, int out_size, out int lo, out int hi, out float fr) {
  precise float scale = (p[9] != 0 && out_size > 1) ? float(in_size - 1) / float(out_size - 1) : float(in_size) / float(out_size);
  precise float fi;
  if (p[8] != 0) { precise float fo = (float(o) + 0.5) * scale; fi = fo - 0.5; }
  else fi = float(o) * scale;
  float fl = floor(fi);
  lo = fl < 0.0 ? 0 : int(fl);
  hi = p[8] != 0 ? int(ceil(fi)) : lo + 1;
  if (hi > in_size - 1) hi = in_size - 1;
  if (hi < 0) hi = 0;
  if (lo > in_size - 1) lo = in_size - 1;
  fr = fi - fl;
}
void main() {
  uint i = gid();
  if (i >= uint(p[0])) return;
  int C = p[5], OW = p[7], OH = p[6], H = p[3], W = p[4], CG = C / CPT;
  int c = int(i % uint(CG)) * CPT; uint t = i / uint(CG);
  int ox = int(t % uint(OW)); t /= uint(OW);
  int oy = int(t % uint(OH)); int n = int(t / uint(OH));
  int x0, x1, y0, y1; float fx, fy;
  taps(ox, W, OW, x0, x1, fx);
  taps(oy, H, OH, y0, y1, fy);
  int ps = C, b = p[1] + c;
  if (p[12] > 0) { if (c < p[12]) ps = p[13]; else { ps = p[15]; b = p[14] + c - p[12]; } }
  b += n * H * W * ps;
  int ob = p[2] + ((n * OH + oy) * OW + ox) * p[10] + p[11] + c;
  int a00 = b + (y0 * W + x0) * ps, a01 = b + (y0 * W + x1) * ps, a10 = b + (y1 * W + x0) * ps, a11 = b + (y1 * W + x1) * ps;
  for (int k = 0; k < CPT; k++) {
    float tl = ldu(f32(1), a00 + k), tr = ldu(f32(1), a01 + k);
    float bl = ldu(f32(1), a10 + k), br = ldu(f32(1), a11 + k);
    precise float top = tl + (tr - tl) * fx;
    precise float bot = bl + (br - bl) * fx;
    precise float r = top + (bot - top) * fy;
    stu(f32(2), ob + k, r);
  }
}
