#!/usr/bin/env bash
# The GStreamer element `headroom` (libgstheadroom.so from $HR_BUILD_DIR/gst) in gst-launch-1.0
# pipelines on real video, against `headroom run` on the same input:
#  (a) gst-inspect-1.0 documents it: the formats, every property, the matte meta, qos.
#  (b) sam2-bedroom (H.264, 6 frames) and vtest.avi (MS-MPEG4, 4 frames): filesrc ! decodebin !
#      videoconvert ! I420 ! headroom composite=alpha: the mattes (Y plane) are bit-identical to the
#      CLI's alpha PNGs, and so are those of tail-every-frame=true with a budget every network run
#      fits (each buffer waits for its own run); composite=blur: every sample within 1 of the CLI's
#      --composite blur video (lossless .mkv).
#  (c) caps negotiation for each format (NV12 I420 BGRx BGRA RGB RGBA) at 642x362.
#  (d) a health fault in the pipeline (inject=memory-pressure@3:2, fallback=passthrough): the bus
#      carries headroom-health messages for the switch (state suspended, shows passthrough; then
#      recalibrating), and exactly the frames the messages say show passthrough come out as the
#      input itself (the suspended ones among them), the others composited.
#  (e) a missing model fails the state change with an error naming it; GRAY8 caps are refused.
# Under an ASan build the sanitizer runtimes are preloaded into gst-launch-1.0 (leaks not checked
# here: gst_lifecycle.sh does that in its own instrumented driver).
set -euo pipefail
CLI=${HR_CLI:-build/headroom}
BUILD=${HR_BUILD_DIR:-build}
DATA=${HR_DATA_DIR:-../shared/data}
export HR_MODEL_DIR=${HR_MODEL_DIR:-models}
PY=/usr/bin/python3
VTEST=/usr/share/doc/opencv-doc/examples/data/vtest.avi
IN=$DATA/sam2-bedroom/bedroom.mp4
command -v gst-launch-1.0 > /dev/null || { echo "SKIP: no gst-launch-1.0 (gstreamer1.0-tools)"; exit 77; }
[ -f "$BUILD/gst/libgstheadroom.so" ] || { echo "FAIL: no $BUILD/gst/libgstheadroom.so (GStreamer development packages missing at configure?)"; exit 1; }
[ -x "$CLI" ] || { echo "SKIP: no CLI at $CLI"; exit 77; }
[ -f "$HR_MODEL_DIR/rvm.json" ] || { echo "FAIL: no model $HR_MODEL_DIR/rvm.json"; exit 1; }
[ -f "$IN" ] || { echo "FAIL: no $IN"; exit 1; }
$PY -c 'import numpy' 2> /dev/null || { echo "SKIP: no python3-numpy"; exit 77; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
export GST_PLUGIN_PATH=$BUILD/gst GST_REGISTRY=$T/registry.bin
if grep -q "HR_SANITIZE:BOOL=ON" "$BUILD/CMakeCache.txt" 2> /dev/null; then
  export LD_PRELOAD="$(gcc -print-file-name=libasan.so):$(gcc -print-file-name=libubsan.so)" ASAN_OPTIONS=detect_leaks=0 GST_REGISTRY_FORK=no
fi
gst-launch-1.0 --version > /dev/null 2>&1 || { echo "FAIL: gst-launch-1.0 does not start"; exit 1; }
gst-inspect-1.0 avdec_h264 > /dev/null 2>&1 || { echo "SKIP: no H.264 decoder in GStreamer (gstreamer1.0-libav)"; exit 77; }
fail=0

# (a)
gst-inspect-1.0 headroom > "$T/inspect.txt" 2>&1 || { echo "FAIL: gst-inspect-1.0 headroom"; cat "$T/inspect.txt"; exit 1; }
for w in NV12 I420 BGRx BGRA RGB RGBA model ratio budget-ms profile backend composite background fallback threads telemetry attach-matte tail-every-frame HeadroomMatteMeta video qos; do
  grep -q -- "$w" "$T/inspect.txt" || { echo "FAIL: gst-inspect-1.0 headroom does not mention $w"; fail=1; }
done

# (b) gst against the CLI
# identity eos-after: a couple more frames than compared (the last frame before an early EOS may
# come out of the decoder damaged); the first N frames of both runs are compared.
front() { echo "filesrc location=$1 ! decodebin ! videoconvert ! video/x-raw,format=I420 ! identity eos-after=$(($2 + 2))"; }
compare() {   # name input frames w h
  local n=$1 in=$2 nf=$3 w=$4 h=$5
  "$CLI" run --model "$HR_MODEL_DIR/rvm.json" --input "$in" --out "$T/$n" --frames "$nf" --ratio 0.25 --threads 2 --quiet \
    --composite blur --out-video "$T/$n.mkv" 2> "$T/$n.err" || { echo "FAIL: headroom run on $n"; cat "$T/$n.err"; fail=1; return; }
  gst-launch-1.0 -q $(front "$in" "$nf") ! headroom ratio=0.25 threads=2 composite=alpha ! filesink location="$T/$n.alpha.yuv" > "$T/$n.g1" 2>&1 \
    || { echo "FAIL: gst alpha pipeline on $n"; cat "$T/$n.g1"; fail=1; return; }
  gst-launch-1.0 -q $(front "$in" "$nf") ! headroom ratio=0.25 threads=2 composite=blur ! filesink location="$T/$n.blur.yuv" > "$T/$n.g2" 2>&1 \
    || { echo "FAIL: gst blur pipeline on $n"; cat "$T/$n.g2"; fail=1; return; }
  # the tail every frame with a budget every network run fits: each buffer waits for its own run,
  # so the mattes are the CLI's too, bit for bit
  gst-launch-1.0 -q $(front "$in" "$nf") ! headroom ratio=0.25 threads=2 composite=alpha tail-every-frame=true budget-ms=10000 ! \
    filesink location="$T/$n.tail.yuv" > "$T/$n.g3" 2>&1 || { echo "FAIL: gst tail-every-frame pipeline on $n"; cat "$T/$n.g3"; fail=1; return; }
  ffmpeg -v error -i "$T/$n.mkv" -f rawvideo -pix_fmt yuv420p "$T/$n.cli.yuv"
  for p in "$T/$n"/alpha/*.png; do ffmpeg -v error -i "$p" -f rawvideo -pix_fmt gray "${p%.png}.gray"; done
  $PY - "$T" "$n" "$nf" "$w" "$h" <<'EOF' || fail=1
import sys, numpy as np
T, n, nf, W, H = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
FS = W * H * 3 // 2
al = np.fromfile(f"{T}/{n}.alpha.yuv", np.uint8); bl = np.fromfile(f"{T}/{n}.blur.yuv", np.uint8); cl = np.fromfile(f"{T}/{n}.cli.yuv", np.uint8)
tl = np.fromfile(f"{T}/{n}.tail.yuv", np.uint8)
bad = 0
if not (al.size >= nf * FS and bl.size >= nf * FS and tl.size >= nf * FS and cl.size == nf * FS): print(f"FAIL: {n}: frame counts gst alpha {al.size/FS}, gst blur {bl.size/FS}, gst tail {tl.size/FS}, cli {cl.size/FS}, want {nf}"); sys.exit(1)
diff_m, diff_b, diff_t = 0, 0, 0
for i in range(nf):
    m = np.fromfile(f"{T}/{n}/alpha/{i:06d}.gray", np.uint8)
    diff_m += int((al[i*FS:i*FS + W*H] != m).sum())
    diff_t += int((tl[i*FS:i*FS + W*H] != m).sum())
    diff_b = max(diff_b, int(np.abs(bl[i*FS:(i+1)*FS].astype(int) - cl[i*FS:(i+1)*FS].astype(int)).max()))
print(f"{n}: {nf} frames {W}x{H}: {diff_m} matte pixels differ between the element and the CLI ({diff_t} with tail-every-frame); composite blur max |gst - cli| = {diff_b}")
if diff_m != 0 or diff_t != 0 or diff_b > 1: print(f"FAIL: {n}"); sys.exit(1)
EOF
}
compare bedroom "$IN" 6 960 540
if [ -f "$VTEST" ]; then compare vtest "$VTEST" 4 768 576; else echo "(vtest skipped: no $VTEST, opencv-doc)"; fi

# (c) every format at 642x362
for f in NV12 I420 BGRx BGRA RGB RGBA; do
  if gst-launch-1.0 -m videotestsrc num-buffers=2 pattern=ball ! video/x-raw,format=$f,width=642,height=362,framerate=30/1 ! \
      headroom ratio=0.5 threads=2 ! video/x-raw,format=$f,width=642,height=362 ! fakesink > "$T/caps_$f.txt" 2>&1 \
      && grep -q "headroom-health" "$T/caps_$f.txt"; then echo "caps $f 642x362: ok"
  else echo "FAIL: caps $f 642x362"; tail -5 "$T/caps_$f.txt"; fail=1; fi
done

# (d) a fault in the pipeline: two suspended frames pass through unchanged, announced on the bus
gst-launch-1.0 -m $(front "$IN" 6) ! headroom ratio=0.25 threads=2 composite=blur fallback=passthrough inject=memory-pressure@3:2 ! \
  filesink location="$T/fault.yuv" > "$T/fault.txt" 2>&1 || { echo "FAIL: fault pipeline"; tail -5 "$T/fault.txt"; fail=1; }
grep "headroom-health" "$T/fault.txt" | sed 's/.*headroom-health, //' | cut -c1-200 || true
grep "headroom-health" "$T/fault.txt" | grep -q "state=(string)suspended.*shows=(string)passthrough" || { echo "FAIL: no health message for the suspended frames"; fail=1; }
ffmpeg -v error -i "$IN" -frames:v 8 -f rawvideo -pix_fmt yuv420p "$T/in8.yuv"
grep "headroom-health" "$T/fault.txt" | sed 's/.*frame=(guint64)\([0-9]*\),.*shows=(string)\([a-z-]*\),.*/\1 \2/' > "$T/fault_shows.txt"
$PY - "$T" <<'EOF' || fail=1
import sys, numpy as np
T = sys.argv[1]; FS = 960 * 540 * 3 // 2
o = np.fromfile(f"{T}/fault.yuv", np.uint8); i = np.fromfile(f"{T}/in8.yuv", np.uint8)
sw = dict((int(l.split()[0]), l.split()[1]) for l in open(f"{T}/fault_shows.txt"))
cur, want = "matte", []
for k in range(6): cur = sw.get(k, cur); want.append(cur == "passthrough")
same = [bool((o[k*FS:(k+1)*FS] == i[k*FS:(k+1)*FS]).all()) for k in range(6)]
print("fault: announced", sw, "; frames equal to the input:", same)
if o.size < 6 * FS or same != want or not (want[3] and want[4]) or any(want[:3]):
    print("FAIL: the frames shown as passthrough (3 and 4 suspended at least) must be the input, the others not"); sys.exit(1)
EOF

# (e) bad input
if gst-launch-1.0 videotestsrc num-buffers=1 ! headroom model=/nonexistent/rvm.json ! fakesink > "$T/nomodel.txt" 2>&1; then echo "FAIL: a missing model was accepted"; fail=1; fi
grep -q "cannot load model '/nonexistent/rvm.json'" "$T/nomodel.txt" || { echo "FAIL: missing model message:"; cat "$T/nomodel.txt"; fail=1; }
if gst-launch-1.0 videotestsrc num-buffers=1 ! video/x-raw,format=GRAY8 ! headroom ! fakesink > "$T/gray.txt" 2>&1; then echo "FAIL: GRAY8 accepted"; fail=1; fi
echo "GRAY8: $(grep -i -m1 "link\|accepts\|negotiat" "$T/gray.txt" || true)"
[ $fail = 0 ] && echo "gst_element: ok"
exit $fail
