#!/usr/bin/env bash
# `headroom run --composite video:FILE --out-video F.mkv`: the background is another video, looped,
# scaled to cover the frame. The background clip: 5 frames of vtest.avi 100 apart (768x576, people
# in other places in each; lossless FFV1); the input: sam2-bedroom (960x540), 12 frames. Frame i's
# background must be clip frame i mod 5 (the clip loops twice: announced), scaled by 1.25 and
# centred (rows 72..503 of the source): on the pixels of matte 0, the output's Y against the
# source's Y scaled the same way (numpy bilinear) is close for frame i mod 5 and far for every
# other clip frame; the person (matte 255) is the input exactly; and the background changes from
# frame to frame. A missing background file is refused before any frame.
set -euo pipefail
CLI=${HR_CLI:-build/headroom}
MODEL=${HR_MODEL_DIR:-models}/rvm.json
DATA=${HR_DATA_DIR:-../shared/data}
PY=/usr/bin/python3
VTEST=/usr/share/doc/opencv-doc/examples/data/vtest.avi
[ -x "$CLI" ] || { echo "SKIP: no CLI at $CLI"; exit 77; }
[ -f "$MODEL" ] || { echo "FAIL: no model $MODEL"; exit 1; }
[ -f "$DATA/sam2-bedroom/bedroom.mp4" ] || { echo "FAIL: no $DATA/sam2-bedroom/bedroom.mp4"; exit 1; }
[ -f "$VTEST" ] || { echo "SKIP: no $VTEST (opencv-doc)"; exit 77; }
command -v ffmpeg > /dev/null || { echo "SKIP: no ffmpeg"; exit 77; }
$PY -c 'import numpy' 2> /dev/null || { echo "SKIP: no python3-numpy"; exit 77; }

T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0
IN=$DATA/sam2-bedroom/bedroom.mp4
N=12
ffmpeg -v error -i "$VTEST" -vf "select='not(mod(n\,100))',setpts=N/(10*TB)" -r 10 -frames:v 5 -c:v ffv1 -pix_fmt yuv420p "$T/bg.mkv"
ffmpeg -v error -i "$T/bg.mkv" -f rawvideo -pix_fmt yuv420p "$T/bg.yuv"

"$CLI" run --model "$MODEL" --input "$IN" --out "$T/v" --frames $N --ratio 0.25 --threads 2 --quiet \
  --composite "video:$T/bg.mkv" --out-video "$T/v.mkv" 2> "$T/err.txt" || { echo "FAIL: run exited with $?"; cat "$T/err.txt"; exit 1; }
cat "$T/err.txt"
grep -q "background video $T/bg.mkv looped 2 times" "$T/err.txt" || { echo "FAIL: the loop count (2) was not reported"; fail=1; }
ffmpeg -v error -i "$T/v.mkv" -f rawvideo -pix_fmt yuv420p "$T/v.yuv"
ffmpeg -v error -i "$IN" -frames:v $N -f rawvideo -pix_fmt yuv420p "$T/in.yuv"
for p in "$T"/v/alpha/*.png; do ffmpeg -v error -i "$p" -f rawvideo -pix_fmt gray "${p%.png}.gray"; done

$PY - "$T" $N <<'EOF' || fail=1
import sys, numpy as np
T, N = sys.argv[1], int(sys.argv[2])
W, H, BW, BH = 960, 540, 768, 576
def ys(path, w, h):
    b = np.fromfile(path, np.uint8); fs = w * h * 3 // 2
    return [b[i*fs:i*fs + w*h].reshape(h, w).astype(float) for i in range(b.size // fs)]
out, inp, bg = ys(f"{T}/v.yuv", W, H), ys(f"{T}/in.yuv", W, H), ys(f"{T}/bg.yuv", BW, BH)
assert len(out) == N and len(inp) == N and len(bg) == 5, (len(out), len(inp), len(bg))
# cover: scale max(960/768, 540/576) = 1.25, centred; the compositor's sampling (x + 0.5) / s - 0.5
s = max(W / BW, H / BH); ox, oy = (BW - W / s) / 2, (BH - H / s) / 2
u = np.clip(ox + (np.arange(W) + 0.5) / s - 0.5, 0, BW - 1); v = np.clip(oy + (np.arange(H) + 0.5) / s - 0.5, 0, BH - 1)
x0 = u.astype(int); x1 = np.minimum(x0 + 1, BW - 1); fx = u - x0
y0 = v.astype(int); y1 = np.minimum(y0 + 1, BH - 1); fy = (v - y0)[:, None]
def scaled(Y):
    r = Y[:, x0] * (1 - fx) + Y[:, x1] * fx
    return r[y0] * (1 - fy) + r[y1] * fy
exp = [scaled(b) for b in bg]
bad = 0
prev = None
for i in range(N):
    m = np.fromfile(f"{T}/v/alpha/{i:06d}.gray", np.uint8).reshape(H, W)
    ones, zeros = m == 255, m == 0
    d1 = int(np.abs(out[i][ones] - inp[i][ones]).max())
    e = [float(np.abs(out[i][zeros] - x[zeros]).mean()) for x in exp]
    k = i % 5
    others = min(e[j] for j in range(5) if j != k)
    ch = float(np.abs(out[i][zeros] - prev[zeros]).mean()) if prev is not None else float("nan")
    prev = out[i]
    print(f"frame {i:2d}: clip frame {k}: background |Y - scaled clip Y| mean {e[k]:.2f}, nearest other clip frame {others:.2f}; "
          f"vs the previous output {ch:.2f}; matte 255: {int(ones.sum())} px, max |out - in| {d1}")
    if not (e[k] < 1.5 and others > 3 * e[k] and others > 1.0): print(f"FAIL: frame {i}: the background is not clip frame {k}"); bad += 1
    if ones.sum() < 1000 or d1 != 0: print(f"FAIL: frame {i}: the person is not the input"); bad += 1
    if i and not ch > 1.0: print(f"FAIL: frame {i}: the background did not change"); bad += 1
sys.exit(1 if bad else 0)
EOF

if "$CLI" run --model "$MODEL" --input "$IN" --out "$T/x" --frames 2 --composite "video:$T/none.mp4" --out-video "$T/x.mkv" 2> "$T/err_x.txt"; then
  echo "FAIL: a missing background video was accepted"; fail=1
fi
grep -q "composite video:" "$T/err_x.txt" || { echo "FAIL: missing-file message: $(cat "$T/err_x.txt")"; fail=1; }
[ $fail = 0 ] && echo "composite_video: ok"
exit $fail
