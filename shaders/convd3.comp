#version 450
// Dense 3x3 convolution, stride 1, dilation 1, batch 1 (the decoder's large layers: 480x360x35 ->
// 16, 240x180x59 -> 32), direct from shared memory instead of an implicit GEMM. The GEMM form
// stages each input 9 times and uses it for only BN products, so with 16 or 32 output channels its
// loads and shared-memory traffic, not the products, set the pace. Here a workgroup of 256 threads
// computes R rows x 32 columns of output pixels x BN channels: per chunk of CC input channels it
// stages the input patch (R + 2) x 34 once and the chunk's 9 x CC x BN weights, then each thread
// adds 2 adjacent pixels x 8 channels over the 9 taps: a row of 4 inputs serves 3 taps, and the
// 8 weights of a tap are the same for every thread of a warp (broadcast vec4 reads), so a step
// is 10 shared reads for 48 multiply-adds. BN (specialisation constant 0) = 16: two groups of 128
// threads, 8 channels each, R = 8; BN = 32: four groups of 64, R = 4.
// What set its speed (H100, 480x360x35 -> 16, one dispatch timed alone by bench/vk_probe.c; 164
// us for the tuned GEMM kernel): registers first. With 16 channels a thread NVIDIA's compiler gave
// it 145 registers with chunks of 8 channels (one workgroup a multiprocessor: 121 us) and 106 with
// chunks of 4 (two: 89-105 us); 8 channels a thread, 64-71 registers: 81 against 105 us in one
// call (180x240x59 -> 32 69 against 81). Loading the next chunk during this one's products kept
// 106 registers and lost (99 against 89 us), so a chunk's loads come first, all of them
// (unconditional, from clamped indices, then selected), then its stores. The outputs leave
// through shared memory, a warp writing whole pixels' channel runs (each thread writing its own
// 32 values, 16 floats apart across the warp, cost ~50 us in the first version).
// The loop over a chunk's channels is not unrolled (its trip count is the channels left), so the
// body stays small: the first version, a chunk unrolled whole, took NVIDIA's compiler 50 s a
// pipeline.
// Push constants as conv.comp (p[19] = 0); threads launched: tiles x 256 (vdisp.alt).
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"
layout(constant_id = 0) const int BN = 16;
layout(constant_id = 4) const int SPLIT = 0;
const int TN = BN / 8;        // thread groups along the channels, 8 channels each
const int TG = 256 / TN;      // threads in a group
const int R = TG / 16;        // output rows of the tile (16 threads of 2 pixels a row): 8, or 4
const int CW = 32, PR = R + 2, PW = CW + 2, CC = 4;
const int PS = PW + 1;        // a patch row's stride: odd, so the two rows a warp reads meet no bank twice
const int NP = CC * PR * PW;  // patch values a chunk stages
const int NW = 9 * CC * BN;   // weights a chunk stages
const int NJ = (NP + 255) / 256, NWJ = (NW / 4 + 255) / 256;
const int TS = BN + 1;        // the output transpose's pixel stride (odd: no bank twice)
const int NT = R * 16 * TS;   // half the tile's pixels x BN channels
shared float Ps[CC * PR * PS > NT ? CC * PR * PS : NT];
shared vec4 Ws[NW / 4];       // [tap][cc][BN / 4]
void main() {
  bool fx = f32(1), fw = f32(2), fb = f32(3), fo = f32(4);
  int tid = int(gl_LocalInvocationID.x);
  int OC = p[10], OW = p[9], OH = p[8], H = p[5], W = p[6], C = p[7];
  int ntn = (OC + BN - 1) / BN, ntx = (OW + CW - 1) / CW, nty = (OH + R - 1) / R;
  int wg = int(gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x);
  // SPLIT = 1: p[31] = S workgroups a tile, each over a slice of the input channels (whole chunks),
  // writing raw sums to the scratch at p[30] (S slices of p[0] floats); convred.comp adds them, the
  // bias and the epilogue (the middle-sized layers: 90x120x107 -> 40 has 72-96 tiles)
  int cbeg = 0, cend = C, ks = 0;
  if (SPLIT != 0) {
    int S = p[31], CS = ((C + S - 1) / S + CC - 1) / CC * CC;
    ks = wg % S; wg /= S;
    cbeg = min(C, ks * CS); cend = min(C, cbeg + CS);
  }
  if (wg >= ntn * ntx * nty) return;   // the grid's rounding (uniform in the workgroup)
  int n0 = (wg % ntn) * BN, t = wg / ntn;
  int ox0 = (t % ntx) * CW, oy0 = (t / ntx) * R;
  int iy0 = oy0 - p[17], ix0 = ox0 - p[18];
  int tn = tid / TG, tq = tid % TG, tx = tq % 16, ty = tq / 16;
  int scc = tid % CC;                  // the channel this thread stages (256 is a multiple of CC)
  vec4 acc[2][2];
  [[unroll]] for (int i = 0; i < 2; i++) [[unroll]] for (int q = 0; q < 2; q++) acc[i][q] = vec4(0.0);
  for (int c0 = cbeg; c0 < cend; c0 += CC) {
    int ncc = min(CC, cend - c0);
    // the patch, channels fastest (a pixel's channels lie together in memory), and the weights
    // w[tap][c][oc], 4 output channels a vec4: all loads first, then the stores
    float pv[NJ];
    [[unroll]] for (int j = 0; j < NJ; j++) {
      int px = tid / CC + (256 / CC) * j, py = px / PW, pxx = px - py * PW;
      int iy = iy0 + py, ix = ix0 + pxx;
      bool ok = px < PR * PW && scc < ncc && uint(iy) < uint(H) && uint(ix) < uint(W);
      float v = ldu(fx, ok ? p[1] + (iy * W + ix) * C + c0 + scc : p[1]);
      pv[j] = ok ? v : 0.0;
    }
    vec4 wv[NWJ];
    [[unroll]] for (int j = 0; j < NWJ; j++) {
      int l = tid + 256 * j, n4 = l % (BN / 4), q = l / (BN / 4), cc = q % CC, tap = q / CC;
      int ocb = n0 + n4 * 4, wb = p[2] + (tap * C + c0 + cc) * OC + ocb;
      [[unroll]] for (int e = 0; e < 4; e++) {
        bool ok = l < NW / 4 && cc < ncc && ocb + e < OC;
        float v = ldu(fw, ok ? wb + e : p[2]);
        wv[j][e] = ok ? v : 0.0;
      }
    }
    [[unroll]] for (int j = 0; j < NJ; j++) {
      int px = tid / CC + (256 / CC) * j, py = px / PW, pxx = px - py * PW;
      if (px < PR * PW) Ps[(scc * PR + py) * PS + pxx] = pv[j];
    }
    [[unroll]] for (int j = 0; j < NWJ; j++) if (tid + 256 * j < NW / 4) Ws[tid + 256 * j] = wv[j];
    barrier();
    for (int cc = 0; cc < ncc; cc++) {
      [[unroll]] for (int ky = 0; ky < 3; ky++) {
        int pb = (cc * PR + ty + ky) * PS + tx * 2;
        float a[4];
        [[unroll]] for (int i = 0; i < 4; i++) a[i] = Ps[pb + i];
        [[unroll]] for (int kx = 0; kx < 3; kx++) {
          int wb = ((ky * 3 + kx) * CC + cc) * (BN / 4) + tn * 2;
          vec4 w[2];
          [[unroll]] for (int q = 0; q < 2; q++) w[q] = Ws[wb + q];
          [[unroll]] for (int i = 0; i < 2; i++)
            [[unroll]] for (int q = 0; q < 2; q++) acc[i][q] += a[i + kx] * w[q];
        }
      }
    }
    barrier();
  }
  // the outputs: each half of the tile's pixels (the threads' first, then their second) through
  // shared memory, then out a channel run at a time: consecutive threads, consecutive channels
  [[unroll]] for (int h = 0; h < 2; h++) {
    [[unroll]] for (int q = 0; q < 2; q++)
      [[unroll]] for (int e = 0; e < 4; e++) Ps[(ty * 16 + tx) * TS + tn * 8 + q * 4 + e] = acc[h][q][e];
    barrier();
    [[unroll]] for (int k = 0; k < (R * 16 * BN) / 256; k++) {
      int l = tid + 256 * k, ch = l % BN, pq = l / BN, row = pq / 16, col = (pq % 16) * 2 + h;
      int oy = oy0 + row, ox = ox0 + col, oc = n0 + ch;
      if (oy < OH && ox < OW && oc < OC) {
        int m = oy * OW + ox;
        if (SPLIT != 0) { stu(false, p[30] + ks * p[0] + m * OC + oc, Ps[pq * TS + ch]); continue; }
        float v = Ps[pq * TS + ch] + (p[3] >= 0 ? ldu(fb, p[3] + oc) : 0.0);
        int oi = m * p[22] + p[23] + oc;
        stu(fo, p[4] + oi, epi(v, oc, oi));
      }
    }
    barrier();
  }
}
