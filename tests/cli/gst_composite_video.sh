#!/usr/bin/env bash
# The `headroom` element with a video background (composite=video background=FILE: looped, one
# frame per output frame, scaled to cover), against `headroom run --composite video:FILE` on the
# same input: sam2-bedroom, 8 frames over a 5-frame background clip (vtest.avi frames 100 apart,
# 768x576, lossless), so the clip loops once in both. Every Y / U / V sample of the element's
# output within 1 of the CLI's (lossless .mkv), and the background changes from frame to frame.
# A missing background video fails the state change with an error naming it.
set -euo pipefail
CLI=${HR_CLI:-build/headroom}
BUILD=${HR_BUILD_DIR:-build}
DATA=${HR_DATA_DIR:-../shared/data}
export HR_MODEL_DIR=${HR_MODEL_DIR:-models}
PY=/usr/bin/python3
VTEST=/usr/share/doc/opencv-doc/examples/data/vtest.avi
IN=$DATA/sam2-bedroom/bedroom.mp4
command -v gst-launch-1.0 > /dev/null || { echo "SKIP: no gst-launch-1.0 (gstreamer1.0-tools)"; exit 77; }
[ -f "$BUILD/gst/libgstheadroom.so" ] || { echo "FAIL: no $BUILD/gst/libgstheadroom.so"; exit 1; }
[ -x "$CLI" ] || { echo "SKIP: no CLI at $CLI"; exit 77; }
[ -f "$HR_MODEL_DIR/rvm.json" ] || { echo "FAIL: no model $HR_MODEL_DIR/rvm.json"; exit 1; }
[ -f "$IN" ] || { echo "FAIL: no $IN"; exit 1; }
[ -f "$VTEST" ] || { echo "SKIP: no $VTEST (opencv-doc)"; exit 77; }
$PY -c 'import numpy' 2> /dev/null || { echo "SKIP: no python3-numpy"; exit 77; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
export GST_PLUGIN_PATH=$BUILD/gst GST_REGISTRY=$T/registry.bin
if grep -q "HR_SANITIZE:BOOL=ON" "$BUILD/CMakeCache.txt" 2> /dev/null; then
  export LD_PRELOAD="$(gcc -print-file-name=libasan.so):$(gcc -print-file-name=libubsan.so)" ASAN_OPTIONS=detect_leaks=0 GST_REGISTRY_FORK=no
fi
gst-inspect-1.0 avdec_h264 > /dev/null 2>&1 || { echo "SKIP: no H.264 decoder in GStreamer (gstreamer1.0-libav)"; exit 77; }
fail=0
N=8
ffmpeg -v error -i "$VTEST" -vf "select='not(mod(n\,100))',setpts=N/(10*TB)" -r 10 -frames:v 5 -c:v ffv1 -pix_fmt yuv420p "$T/bg.mkv"
env -u LD_PRELOAD "$CLI" run --model "$HR_MODEL_DIR/rvm.json" --input "$IN" --out "$T/cli" --frames $N --ratio 0.25 --threads 2 --quiet --no-alpha \
  --composite "video:$T/bg.mkv" --out-video "$T/cli.mkv" 2> "$T/cli.err" || { echo "FAIL: headroom run"; cat "$T/cli.err"; exit 1; }
grep -q "looped 1 times" "$T/cli.err" || { echo "FAIL: the CLI's clip did not loop once"; cat "$T/cli.err"; fail=1; }
gst-launch-1.0 -q filesrc location="$IN" ! decodebin ! videoconvert ! video/x-raw,format=I420 ! identity eos-after=$((N + 2)) ! \
  headroom ratio=0.25 threads=2 composite=video background="$T/bg.mkv" ! filesink location="$T/gst.yuv" > "$T/gst.txt" 2>&1 \
  || { echo "FAIL: gst pipeline"; cat "$T/gst.txt"; exit 1; }
ffmpeg -v error -i "$T/cli.mkv" -f rawvideo -pix_fmt yuv420p "$T/cli.yuv"
$PY - "$T" $N <<'EOF' || fail=1
import sys, numpy as np
T, N = sys.argv[1], int(sys.argv[2]); W, H = 960, 540; FS = W * H * 3 // 2
g = np.fromfile(f"{T}/gst.yuv", np.uint8); c = np.fromfile(f"{T}/cli.yuv", np.uint8)
bad = 0
if g.size < N * FS or c.size < N * FS: print(f"FAIL: {g.size // FS} gst frames, {c.size // FS} CLI frames, want {N}"); sys.exit(1)
for i in range(N):
    gi, ci = g[i*FS:(i+1)*FS].astype(int), c[i*FS:(i+1)*FS].astype(int)
    d = int(np.abs(gi - ci).max())
    ch = float(np.abs(gi[:W*H] - g[(i-1)*FS:(i-1)*FS + W*H].astype(int)).mean()) if i else float("nan")
    print(f"frame {i}: max |gst - CLI| over Y U V {d}; mean |dY| from the previous frame {ch:.2f}")
    if d > 1: print(f"FAIL: frame {i} differs from the CLI's"); bad += 1
    if i and not ch > 1.0: print(f"FAIL: frame {i}: the background did not change"); bad += 1
sys.exit(1 if bad else 0)
EOF
if gst-launch-1.0 -q videotestsrc num-buffers=2 ! video/x-raw,format=I420,width=64,height=48 ! headroom composite=video background="$T/none.mp4" ! fakesink > "$T/miss.txt" 2>&1; then
  echo "FAIL: a missing background video was accepted"; fail=1
fi
grep -q "background video" "$T/miss.txt" || { echo "FAIL: missing-video message: $(cat "$T/miss.txt")"; fail=1; }
[ $fail = 0 ] && echo "gst_composite_video: ok"
exit $fail
