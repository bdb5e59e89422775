#version 450
// Dense 3x3 convolution, stride 1, dilation 1, batch 1 (the decoder's large layers: 480x360x35 ->
// 16, 240x180x59 -> 32), direct from shared memory instead of an implicit GEMM: a workgroup of 256
// threads computes R rows x 32 columns of output pixels x BN channels; per chunk of CC input
// channels it stages the input patch (R + 2) x 34 once (the GEMM form loads each input 9 times)
// and the chunk's 9 x CC x BN weights, then each thread adds 4 adjacent pixels x 8 channels over
// the 9 taps (a row of 6 inputs serves 3 taps; the 8 weights are the same for the threads of a
// row: broadcast). BN (specialisation constant 0) = 16: R = 16; BN = 32: R = 8.
// Push constants as conv.comp (p[19] = 0); threads launched: tiles x 256 (vdisp.alt).
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"
layout(constant_id = 0) const int BN = 16;
const int TN = BN / 8;        // threads along the channels
const int R = 256 / TN / 8;   // output rows of the tile (8 threads of 4 pixels a row)
const int CW = 32, PR = R + 2, PW = CW + 2, CC = 8;
shared float Ps[CC][PR][PW];
shared float Ws[9][CC][BN];
void main() {
  bool fx = f32(1), fw = f32(2), fb = f32(3), fo = f32(4);
  int tid = int(gl_LocalInvocationID.x);
  int OC = p[10], OW = p[9], OH = p[8], H = p[5], W = p[6], C = p[7];
  int ntn = (OC + BN - 1) / BN, ntx = (OW + CW - 1) / CW, nty = (OH + R - 1) / R;
  int wg = int(gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x);
  if (wg >= ntn * ntx * nty) return;   // the grid's rounding (uniform in the workgroup)
  int n0 = (wg % ntn) * BN, t = wg / ntn;
  int ox0 = (t % ntx) * CW, oy0 = (t / ntx) * R;
  int iy0 = oy0 - p[17], ix0 = ox0 - p[18];
  int tn = tid % TN, tm = tid / TN, tx = tm % 8, ty = tm / 8;
  float acc[4][8];
  for (int i = 0; i < 4; i++) for (int j = 0; j < 8; j++) acc[i][j] = 0.0;
  for (int c0 = 0; c0 < C; c0 += CC) {
    for (int l = tid; l < PR * PW * CC; l += 256) {   // the patch, channels fastest (NHWC rows)
      int cc = l % CC, px = l / CC, py = px / PW, pxx = px - py * PW;
      int iy = iy0 + py, ix = ix0 + pxx, c = c0 + cc;
      Ps[cc][py][pxx] = (c < C && iy >= 0 && iy < H && ix >= 0 && ix < W) ? ldu(fx, p[1] + (iy * W + ix) * C + c) : 0.0;
    }
    for (int l = tid; l < 9 * CC * BN; l += 256) {    // weights w[tap][c][oc]
      int nn = l % BN, q = l / BN, cc = q % CC, tap = q / CC, c = c0 + cc, oc = n0 + nn;
      Ws[tap][cc][nn] = (c < C && oc < OC) ? ldu(fw, p[2] + (tap * C + c) * OC + oc) : 0.0;
    }
    barrier();
    // every index below a constant once unrolled: the arrays stay in registers
    [[unroll]] for (int cc = 0; cc < CC; cc++)
      [[unroll]] for (int ky = 0; ky < 3; ky++) {
        float a[6], b0[8], b1[8], b2[8];
        [[unroll]] for (int i = 0; i < 6; i++) a[i] = Ps[cc][ty + ky][tx * 4 + i];
        [[unroll]] for (int j = 0; j < 8; j++) {
          b0[j] = Ws[ky * 3][cc][tn * 8 + j]; b1[j] = Ws[ky * 3 + 1][cc][tn * 8 + j]; b2[j] = Ws[ky * 3 + 2][cc][tn * 8 + j];
        }
        [[unroll]] for (int i = 0; i < 4; i++)
          [[unroll]] for (int j = 0; j < 8; j++) { acc[i][j] += a[i] * b0[j]; acc[i][j] += a[i + 1] * b1[j]; acc[i][j] += a[i + 2] * b2[j]; }
      }
    barrier();
  }
  int oy = oy0 + ty;
  if (oy >= OH) return;
  for (int i = 0; i < 4; i++) {
    int ox = ox0 + tx * 4 + i;
    if (ox >= OW) break;
    int m = oy * OW + ox;
    for (int j = 0; j < 8; j++) {
      int oc = n0 + tn * 8 + j;
      if (oc >= OC) break;
      float v = acc[i][j] + (p[3] >= 0 ? ldu(fb, p[3] + oc) : 0.0);
      int oi = m * p[22] + p[23] + oc;
      stu(fo, p[4] + oi, epi(v, oc, oi));
    }
  }
}
