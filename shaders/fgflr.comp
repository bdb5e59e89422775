#version 450
// RVM's low-resolution guided filter (plan.h hr__fgf_lr) in one dispatch, fp32 storage: the
// coefficients A and b at one output element each, from the network's 4-channel output y and the
// image at processing size (x = its 3 channels and their mean), with the plan's separable boxes
// (V then H, per-channel weights, VALID) summed in the depthwise convolutions' order:
//   mx = box(x), my = box(y), mxy = box(x*y), mxx = box(x*x),
//   A = (mxy - mx*my) / (mxx + (eps - mx*mx)),  b = my - A*mx.
// p: 0 n (OH x OW x 4), 1 y, 2 image (3 channels), 3 A, 4 b, 5 H, 6 W, 7 OH, 8 OW, 9 KH, 10 KW,
// 11..14 the V weights of the boxes of x*y, x, y, x*x (KH x 4 each), 15..18 their H weights
// (KW x 4), 19 eps (float bits).
#include "common.glsl"
float gx(int yy, int xx, int c) {
  int b = p[2] + (yy * p[6] + xx) * 3;
  if (c < 3) return ldu(false, b + c);
  return (ldu(false, b) + ldu(false, b + 1) + ldu(false, b + 2)) / 3.0; // as mean.comp
}
void main() {
  uint i = gid();
  if (i >= uint(p[0])) return;
  int c = int(i) % 4, px = int(i) / 4, ox = px % p[8], oy = px / p[8];
  int KH = p[9], KW = p[10];
  float sxy = 0.0, sx = 0.0, sy = 0.0, sxx = 0.0;
  for (int kx = 0; kx < KW; kx++) {
    float vxy = 0.0, vx = 0.0, vy = 0.0, vxx = 0.0;
    for (int ky = 0; ky < KH; ky++) {
      int yy = oy + ky, xx = ox + kx, w = ky * 4 + c;
      float x = gx(yy, xx, c), y = ldu(false, p[1] + (yy * p[6] + xx) * 4 + c);
      vxy += (x * y) * ldu(false, p[11] + w);
      vx += x * ldu(false, p[12] + w);
      vy += y * ldu(false, p[13] + w);
      vxx += (x * x) * ldu(false, p[14] + w);
    }
    int w = kx * 4 + c;
    sxy += vxy * ldu(false, p[15] + w);
    sx += vx * ldu(false, p[16] + w);
    sy += vy * ldu(false, p[17] + w);
    sxx += vxx * ldu(false, p[18] + w);
  }
  // the ops after the boxes one by one, no fused multiply-add (they were separate dispatches)
  precise float mxmy = sx * sy, cov = sxy - mxmy, mx2 = sx * sx, e = pf(19) - mx2, den = sxx + e;
  precise float A = cov / den, am = A * sx, b = sy - am;
  stu(false, p[3] + int(i), A);
  stu(false, p[4] + int(i), b);
}
