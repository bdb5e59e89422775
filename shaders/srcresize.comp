#version 450
// The image ingest: the frame (any format, binding 4: the staging buffer or the device's copy)
// resampled to the processing size with TF's
// half-pixel bilinear on RGB values converted per tap (ingest.h), as float RGB NHWC.
// p: 0 n (out pixels), 1 out, 2 out_w, 3 out_h; 4..18: the frame's header (frame.glsl) when p[4]
// (the format) is not 0, the planes' offsets then bytes into binding 4 (the backend records this
// dispatch per frame, reading the frame where it lies while the copy for the tail runs beside the
// network); p[4] == 0: the header in binding 4 itself.
#define FRAME_BINDING 4
#define FH(i) (p[4] != 0 ? uint(p[4 + (i)]) : f[i])
#include "common.glsl"
#include "frame.glsl"
void main() {
  uint i = gid();
  if (i >= uint(p[0])) return;
  int OW = p[2], OH = p[3], W = int(FH(1)), H = int(FH(2));
  int ox = int(i % uint(OW)), oy = int(i / uint(OW));
  int x0, x1, y0, y1; float fx, fy;
  hp_taps(ox, W, OW, x0, x1, fx);
  hp_taps(oy, H, OH, y0, y1, fy);
  vec3 tl = fetch_px(x0, y0), tr = fetch_px(x1, y0), bl = fetch_px(x0, y1), br = fetch_px(x1, y1);
  int o = p[1] + int(i) * 3;
  for (int c = 0; c < 3; c++) {
    precise float top = tl[c] + (tr[c] - tl[c]) * fx;
    precise float bot = bl[c] + (br[c] - bl[c]) * fx;
    precise float r = top + (bot - top) * fy;
    stu(f32(1), o + c, r);
  }
}
