#!/usr/bin/env bash
# examples/python/matte.py (PyGObject, appsink; Debian's /usr/bin/python3) on sam2-bedroom: it reads
# mattes into numpy and the element's health messages from the bus, two ways: (1) the default, 6
# frames composited with blur, each matte read from the buffer's HeadroomMatteMeta (GstCustomMeta:
# a GRAY8 GstBuffer and the health verdict); (2) --from alpha, 3 frames, the matte as the Y plane
# of composite=alpha. Every matte is bit-identical to `headroom run`'s alpha PNG of the same frame
# (same ratio and threads), and the pictures of (1) are composites, not the matte; (3) composite=none,
# 3 frames: the element's stream makes the 8-bit matte alone (alpha_u8_only), the meta's matte the same.
set -euo pipefail
CLI=${HR_CLI:-build/headroom}
BUILD=${HR_BUILD_DIR:-build}
SRC=${HR_SRC_DIR:-.}
DATA=${HR_DATA_DIR:-../shared/data}
export HR_MODEL_DIR=${HR_MODEL_DIR:-models}
PY=/usr/bin/python3
IN=$DATA/sam2-bedroom/bedroom.mp4
$PY -c 'import gi, numpy; gi.require_version("GstApp", "1.0"); gi.require_version("GstVideo", "1.0")' 2> /dev/null \
  || { echo "SKIP: no python3-gi / gir1.2-gst-plugins-base-1.0 / python3-numpy"; exit 77; }
[ -f "$BUILD/gst/libgstheadroom.so" ] || { echo "FAIL: no $BUILD/gst/libgstheadroom.so"; exit 1; }
[ -x "$CLI" ] || { echo "SKIP: no CLI at $CLI"; exit 77; }
[ -f "$IN" ] || { echo "FAIL: no $IN"; exit 1; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
export GST_PLUGIN_PATH=$BUILD/gst GST_REGISTRY=$T/registry.bin
PRE=()
if grep -q "HR_SANITIZE:BOOL=ON" "$BUILD/CMakeCache.txt" 2> /dev/null; then   # an instrumented plugin in python
  PRE=(env "LD_PRELOAD=$(gcc -print-file-name=libasan.so):$(gcc -print-file-name=libubsan.so)" ASAN_OPTIONS=detect_leaks=0 GST_REGISTRY_FORK=no)
fi
N=6
"${PRE[@]}" $PY "$SRC/examples/python/matte.py" "$IN" --frames $N --ratio 0.25 --threads 2 --out "$T/py" --save-frames "$T/pic" > "$T/py.txt" 2>&1 \
  || { echo "FAIL: matte.py exited with $?"; cat "$T/py.txt"; exit 1; }
cat "$T/py.txt"
grep -q "^health at frame 0: warming-up" "$T/py.txt" || { echo "FAIL: matte.py saw no health message"; exit 1; }
grep -q "^frame 0: 960x540, .*; meta: warming-up, confidence 1.00, shows matte" "$T/py.txt" || { echo "FAIL: matte.py read no HeadroomMatteMeta verdict"; exit 1; }
"${PRE[@]}" $PY "$SRC/examples/python/matte.py" "$IN" --frames 3 --ratio 0.25 --threads 2 --from alpha --out "$T/pya" > "$T/pya.txt" 2>&1 \
  || { echo "FAIL: matte.py --from alpha exited with $?"; cat "$T/pya.txt"; exit 1; }
cat "$T/pya.txt"
# composite=none: the element asks its stream for the 8-bit matte alone (alpha_u8_only: the tail writes it)
"${PRE[@]}" $PY "$SRC/examples/python/matte.py" "$IN" --frames 3 --ratio 0.25 --threads 2 --composite none --out "$T/pyn" > "$T/pyn.txt" 2>&1 \
  || { echo "FAIL: matte.py --composite none exited with $?"; cat "$T/pyn.txt"; exit 1; }
grep -q "^frame 0: 960x540, .*; meta: warming-up, confidence 1.00, shows none" "$T/pyn.txt" || { echo "FAIL: composite=none: no meta verdict"; cat "$T/pyn.txt"; exit 1; }
"$CLI" run --model "$HR_MODEL_DIR/rvm.json" --input "$IN" --out "$T/cli" --frames $N --ratio 0.25 --threads 2 --quiet 2> "$T/cli.err" \
  || { echo "FAIL: headroom run"; cat "$T/cli.err"; exit 1; }
for p in "$T/cli"/alpha/*.png; do ffmpeg -v error -i "$p" -f rawvideo -pix_fmt gray "${p%.png}.gray"; done
$PY - "$T" $N <<'PYEOF'
import sys, numpy as np
T, n = sys.argv[1], int(sys.argv[2])
bad = 0
for i in range(n):
    m = np.load(f"{T}/py/{i:06d}.npy")
    c = np.fromfile(f"{T}/cli/alpha/{i:06d}.gray", np.uint8).reshape(m.shape)
    pic = np.load(f"{T}/pic/{i:06d}.npy")
    d = int((m != c).sum()); bad += d
    same = int((pic == m).sum())
    line = f"frame {i}: {m.shape[1]}x{m.shape[0]}, meta matte: {d} pixels differ from the CLI's matte; the picture equals the matte at {same} pixels"
    if i < 3:
        a = np.load(f"{T}/pya/{i:06d}.npy")
        da = int((a != c).sum()); bad += da
        line += f"; --from alpha: {da} differ"
        nm = np.load(f"{T}/pyn/{i:06d}.npy")
        dn = int((nm != c).sum()); bad += dn
        line += f"; composite=none: {dn} differ"
    print(line)
    if same > m.size // 2: print(f"FAIL: frame {i}: the picture is the matte, not a composite"); bad += 1
sys.exit(1 if bad else 0)
PYEOF
echo "gst_python: ok"
