#!/usr/bin/env bash
# `headroom run --composite ... --out-video F` end to end on real video:
#  (a) sam2-bedroom, blur, lossless .mkv, with 3 frames suspended (memory-pressure@4:3): the file
#      decodes to every frame (16) at 30 fps and 960x540; frame by frame against the input and the
#      run's own alpha PNGs: matte 255 -> the input's pixel exactly; matte 0 -> a background much
#      smoother than the input; the suspended frames and the recalibrating ones after them show
#      the last good matte (hold: frame 3's PNG) over their own pixels; every switch is announced
#      (hold while suspended, hold while recalibrating, back to the matte) and the held frames are
#      read from those announcements.
#  (b) the same clip, color:00b140: every Y / U / V sample within 1 of a x in + (1 - a) x colour
#      (a = the PNG's matte / 255; chroma: the mean of its 2x2), colour in BT.601 video range.
#  (c) vtest.avi (10 fps) to .mp4: H.264 (or MPEG-4), 8 frames, 10 fps kept.
#  (d) bad options refused before any frame: a bad background, --composite without an output.
set -euo pipefail
CLI=${HR_CLI:-build/headroom}
MODEL=${HR_MODEL_DIR:-models}/rvm.json
DATA=${HR_DATA_DIR:-../shared/data}
PY=/usr/bin/python3
VTEST=/usr/share/doc/opencv-doc/examples/data/vtest.avi
[ -x "$CLI" ] || { echo "SKIP: no CLI at $CLI"; exit 77; }
[ -f "$MODEL" ] || { echo "FAIL: no model $MODEL"; exit 1; }
[ -f "$DATA/sam2-bedroom/bedroom.mp4" ] || { echo "FAIL: no $DATA/sam2-bedroom/bedroom.mp4"; exit 1; }
command -v ffprobe > /dev/null || { echo "SKIP: no ffprobe"; exit 77; }
$PY -c 'import numpy' 2> /dev/null || { echo "SKIP: no python3-numpy"; exit 77; }
"$CLI" run --help 2>&1 | grep -q -- "--composite" || { echo "FAIL: headroom run --help lists no --composite"; exit 1; }

T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0
IN=$DATA/sam2-bedroom/bedroom.mp4

"$CLI" run --model "$MODEL" --input "$IN" --out "$T/a" --frames 12 --ratio 0.25 --threads 2 --quiet \
  --composite blur --inject memory-pressure@4:3 --out-video "$T/a.mkv" --frames 16 2> "$T/err_a.txt" || { echo "FAIL: run (a) exited with $?"; cat "$T/err_a.txt"; exit 1; }
cat "$T/err_a.txt"
grep -q "frame 4: composite shows hold: no matte (suspended)" "$T/err_a.txt" || { echo "FAIL: (a) the switch to hold was not announced"; fail=1; }
grep -q "frame 7: composite shows hold: health recalibrating" "$T/err_a.txt" || { echo "FAIL: (a) hold while recalibrating was not announced"; fail=1; }
grep -q "composite shows matte" "$T/err_a.txt" || { echo "FAIL: (a) the return to the matte was not announced"; fail=1; }
grep "composite shows" "$T/err_a.txt" | sed 's/.*frame \([0-9]*\): composite shows \([a-z-]*\).*/\1 \2/' > "$T/switches.txt"
"$CLI" run --model "$MODEL" --input "$IN" --out "$T/b" --frames 6 --ratio 0.25 --threads 2 --quiet \
  --composite color:00b140 --out-video "$T/b.mkv" 2> "$T/err_b.txt" || { echo "FAIL: run (b) exited with $?"; cat "$T/err_b.txt"; exit 1; }

probe() { ffprobe -v error -count_frames -select_streams v:0 -show_entries stream=codec_name,width,height,r_frame_rate,nb_read_frames -of csv=p=0 "$1"; }
got=$(probe "$T/a.mkv"); [ "$got" = "ffv1,960,540,30/1,16" ] || { echo "FAIL: (a) probes as '$got', want ffv1,960,540,30/1,16"; fail=1; }
got=$(probe "$T/b.mkv"); case "$got" in ffv1,960,540,*,6) ;; *) echo "FAIL: (b) probes as '$got', want ffv1,960,540,*,6"; fail=1 ;; esac
ffmpeg -v error -i "$T/a.mkv" -f rawvideo -pix_fmt yuv420p "$T/a.yuv"
ffmpeg -v error -i "$T/b.mkv" -f rawvideo -pix_fmt yuv420p "$T/b.yuv"
ffmpeg -v error -i "$IN" -frames:v 16 -f rawvideo -pix_fmt yuv420p "$T/in.yuv"
for d in a b; do
  for p in "$T/$d"/alpha/*.png; do ffmpeg -v error -i "$p" -f rawvideo -pix_fmt gray "${p%.png}.gray"; done
done

$PY - "$T" <<'EOF' || fail=1
import sys, os, numpy as np
T = sys.argv[1]; W, H = 960, 540; FS = W * H * 3 // 2
def frames(path):
    b = np.fromfile(path, np.uint8); n = b.size // FS
    return [(f[:W*H].reshape(H, W).astype(int), f[W*H:W*H*5//4].reshape(H//2, W//2).astype(int), f[W*H*5//4:].reshape(H//2, W//2).astype(int))
            for f in (b[i*FS:(i+1)*FS] for i in range(n))]
def matte(d, i):
    p = f"{T}/{d}/alpha/{i:06d}.gray"
    return np.fromfile(p, np.uint8).reshape(H, W).astype(int) if os.path.exists(p) else None
inp, a, b = frames(f"{T}/in.yuv"), frames(f"{T}/a.yuv"), frames(f"{T}/b.yuv")
bad = 0
# (a) blur with hold: what each frame showed, from the announcements
shows, sw = {}, dict((int(l.split()[0]), l.split()[1]) for l in open(f"{T}/switches.txt"))
cur = "matte"
for i in range(16): cur = sw.get(i, cur); shows[i] = cur
print("(a) switches:", sw)
if len(a) != 16 or sum(v == "hold" for v in shows.values()) < 4: print("FAIL: (a) expected 16 frames, 4 or more held"); bad += 1
last = None
for i in range(16):
    held = shows[i] == "hold"
    m = last if held else matte("a", i)
    if m is None: print(f"FAIL: frame {i}: no matte to compare"); bad += 1; continue
    last = m
    Y, Yi = a[i][0], inp[i][0]
    ones, zeros = m == 255, m == 0
    d1 = int(np.abs(Y[ones] - Yi[ones]).max()) if ones.any() else 0
    gi = np.abs(np.diff(Yi, axis=1))[zeros[:, 1:] & zeros[:, :-1]].mean()
    go = np.abs(np.diff(Y, axis=1))[zeros[:, 1:] & zeros[:, :-1]].mean()
    mid = (m > 0) & (m < 255)
    print(f"(a) frame {i:2d}{' (held matte)' if held else ''}: {ones.sum()} px at matte 255, max |out - in| {d1}; background |dx| {go:.2f} vs input {gi:.2f}")
    if ones.sum() < 1000 or d1 != 0 or not go < gi / 3: print(f"FAIL: (a) frame {i}"); bad += 1
# (b) colour: BT.601 video range of 00b140
r, g, bl = 0x00, 0xb1, 0x40
Yc = 16 + (0.299*r + 0.587*g + 0.114*bl) * 219/255
Uc = 128 + (-0.168736*r - 0.331264*g + 0.5*bl) * 224/255
Vc = 128 + (0.5*r - 0.418688*g - 0.081312*bl) * 224/255
worst = 0.0
for i in range(6):
    m = np.floor(matte("b", i) / 255.0 * 255 + 0.5) / 255.0
    mc = (m[0::2, 0::2] + m[0::2, 1::2] + m[1::2, 0::2] + m[1::2, 1::2]) / 4
    for k, (aa, c) in enumerate(((m, Yc), (mc, Uc), (mc, Vc))):
        e = np.abs(b[i][k] - (aa * inp[i][k] + (1 - aa) * c)).max()
        worst = max(worst, e)
print(f"(b) color: max |out - (a*in + (1-a)*colour)| over 6 frames, Y U V: {worst:.3f}")
if worst > 1.0 + 1e-6: print("FAIL: (b) beyond 1"); bad += 1
sys.exit(1 if bad else 0)
EOF

if [ -f "$VTEST" ]; then
  "$CLI" run --model "$MODEL" --input "$VTEST" --out "$T/c" --frames 8 --ratio 0.25 --threads 2 --quiet --no-alpha \
    --composite blur:16 --out-video "$T/c.mp4" 2> "$T/err_c.txt" || { echo "FAIL: run (c) exited with $?"; cat "$T/err_c.txt"; fail=1; }
  got=$(probe "$T/c.mp4" || true)
  case "$got" in h264,768,576,10/1,8|mpeg4,768,576,10/1,8) echo "(c) vtest mp4: $got" ;; *) echo "FAIL: (c) probes as '$got', want h264,768,576,10/1,8"; fail=1 ;; esac
  [ ! -e "$T/c.mp4.tmp" ] || { echo "FAIL: (c) left c.mp4.tmp behind"; fail=1; }
else
  echo "(c) skipped: no $VTEST (opencv-doc)"
fi

# (d) refused before any frame
if "$CLI" run --model "$MODEL" --input "$IN" --out "$T/d" --frames 2 --composite plaid --out-video "$T/d.mkv" 2> "$T/err_d.txt"; then echo "FAIL: --composite plaid accepted"; fail=1; fi
grep -q "want blur, blur:RADIUS" "$T/err_d.txt" || { echo "FAIL: bad background message: $(cat "$T/err_d.txt")"; fail=1; }
if "$CLI" run --model "$MODEL" --input "$IN" --out "$T/e" --frames 2 --composite blur 2> "$T/err_e.txt"; then echo "FAIL: --composite without an output accepted"; fail=1; fi
grep -q "needs --out-video" "$T/err_e.txt" || { echo "FAIL: no-output message: $(cat "$T/err_e.txt")"; fail=1; }
[ $fail = 0 ] && echo "composite_run: ok"
exit $fail
