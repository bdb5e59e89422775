#version 450
// Dense convolution for small outputs (few pixels, many input channels: the encoder's late stages,
// squeeze-excitation 1x1 convs): OPW outputs per workgroup (specialisation constant 0: 32, or 8 for
// the single-pixel layers, whose 120-240 outputs made 4-8 workgroups of 84-120 steps a thread),
// the input channels split over 256 / OPW threads each, summed in shared memory. Push constants
// as conv.comp (p[19] = 0).
// A squeeze-excitation's s (EPI flags 1024, one output a channel): the workgroup writes its outputs'
// rows of W' together, coalesced (common.glsl epi).
#include "common.glsl"
layout(constant_id = 0) const int OPW = 32;
const int KSP = 256 / OPW;
shared float red[256];
void main() {
  bool fx = f32(1), fw = f32(2), fb = f32(3), fo = f32(4);
  uint lt = gl_LocalInvocationID.x, o = lt % uint(OPW), ks = lt / uint(OPW);
  uint i = (gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x) * uint(OPW) + o;
  float acc = 0.0;
  int OC = p[10], OW = p[9], OH = p[8], H = p[5], W = p[6], C = p[7], KH = p[11], KW = p[12];
  int oc = 0, ox = 0, oy = 0, n = 0;
  if (i < uint(p[0])) {
    oc = int(i % uint(OC)); uint t = i / uint(OC);
    ox = int(t % uint(OW)); t /= uint(OW);
    oy = int(t % uint(OH)); n = int(t / uint(OH));
    for (int ky = 0; ky < KH; ky++) {
      int iy = oy * p[13] - p[17] + ky * p[15];
      if (iy < 0 || iy >= H) continue;
      for (int kx = 0; kx < KW; kx++) {
        int ix = ox * p[14] - p[18] + kx * p[16];
        if (ix < 0 || ix >= W) continue;
        int base = p[1] + ((n * H + iy) * W + ix) * C;
        int wb = p[2] + (ky * KW + kx) * C * OC + oc;
        for (int c = int(ks); c < C; c += KSP) acc += ldu(fx, base + c) * ldu(fw, wb + c * OC);
      }
    }
  }
  red[lt] = acc;
  barrier();
  if (OPW < 32) { // halves: 256 -> OPW partial sums
    for (uint h = 128u; h >= uint(OPW); h >>= 1) {
      if (lt < h) red[lt] += red[lt + h];
      barrier();
    }
  }
  float sv = 0.0;
  if (ks == 0u && i < uint(p[0])) {
    float s = p[3] >= 0 ? ldu(fb, p[3] + oc) : 0.0;
    if (OPW < 32) s += red[o];
    else for (int k = 0; k < KSP; k++) s += red[o + uint(OPW) * uint(k)];
    int oi = ((n * OH + oy) * OW + ox) * p[22] + p[23] + oc;
    sv = epi(s, oc, oi);
    stu(fo, p[4] + oi, sv);
  }
  if ((EPI & 1024) != 0) { // single-pixel outputs: output i is channel i, W' rows i0.. contiguous
    barrier();
    if (ks == 0u) red[o] = sv;
    barrier();
    int nn = EPI >> 16, i0 = int(i - o), cnt = min(OPW, p[0] - i0);
    for (int e = int(lt); e < cnt * nn; e += 256) {
      int cl = e / nn;
      stu(false, p[29] + i0 * nn + e, ldu(fw, p[26] + i0 * nn + e) * red[cl]);
    }
  }
}
