#!/usr/bin/env bash
# `headroom run --depth` end to end on the RealSense desk recording: the depth list is rewritten
# with every timestamp shifted by +5 ms and 3 frames in 10 dropped (absolute paths to the real
# PNGs). The frames that get DIR/depth/NNNNNN.png must be exactly those an independent
# nearest-within-16-ms greedy (awk + sort here) pairs; the PNGs are 16-bit at the alpha size, the
# occlusion masks 8-bit, one per fused frame; the summary line counts the same. A --depth that is
# not a TUM folder is refused with a message; an unreadable depth file is counted, a depth PNG that
# cannot be written stops the run naming it.
set -euo pipefail
CLI=${HR_CLI:-build/headroom}
MODEL=${HR_MODEL_DIR:-models}/rvm.json
DATA=${HR_DATA_DIR:-../shared/data}/realsense-d435-desk
[ -x "$CLI" ] || { echo "SKIP: no CLI at $CLI"; exit 77; }
[ -f "$MODEL" ] || { echo "SKIP: no model $MODEL"; exit 77; }
[ -f "$DATA/depth.txt" ] || { echo "SKIP: no recording at $DATA"; exit 77; }
HELP=$("$CLI" run --help 2>&1 || true)
if ! grep -q -- "--depth " <<<"$HELP" || ! grep -q -- "--occlude-at" <<<"$HELP"; then
  echo "FAIL: headroom run --help lists no --depth / --occlude-at (the options this test runs)"; exit 1
fi

T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
DATA=$(cd "$DATA" && pwd)
mkdir -p "$T/dep"
# Shifted and thinned depth list; timestamps rewritten as integer seconds + 9 digits of ns.
awk -v d="$DATA" '
  /^#/ || NF < 2 { next }
  { n++; if (n % 10 == 2 || n % 10 == 5 || n % 10 == 8) next
    split($1, a, "."); f = substr(a[2] "000000000", 1, 9)
    ns = f + 5000000; s = a[1]; if (ns >= 1000000000) { ns -= 1000000000; s++ }
    printf "%s.%09d %s/%s\n", s, ns, d, $2 }' "$DATA/depth.txt" > "$T/dep/depth.txt"
awk -v d="$DATA" '/^#/ || NF < 2 { next } { printf "%s %s/%s\n", $1, d, $2 }' "$DATA/rgb.txt" > "$T/dep/rgb.txt"

# Reference: candidates (|dt| <= 16 ms) sorted by |dt|, color ts, depth ts; greedy. Times in ns
# relative to 1700000000 s (exact in awk's doubles).
rel() { awk '/^#/ || NF < 2 { next } { split($1, a, "."); f = substr(a[2] "000000000", 1, 9); printf "%d\n", (a[1] - 1700000000) * 1000000000 + f }' "$1"; }
rel "$DATA/rgb.txt" > "$T/c.ts"
rel "$T/dep/depth.txt" > "$T/d.ts"
awk 'NR == FNR { c[FNR - 1] = $1; nc = FNR; next } { d[FNR - 1] = $1; nd = FNR }
     END { for (i = 0; i < nc; i++) for (j = 0; j < nd; j++) { k = d[j] - c[i]; if (k < 0) k = -k;
             if (k <= 16000000) printf "%d %d %d %d %d\n", k, c[i], d[j], i, j } }' "$T/c.ts" "$T/d.ts" |
  sort -n -k1,1 -k2,2 -k3,3 |
  awk '{ if (!($4 in ci) && !($5 in dj)) { ci[$4] = 1; dj[$5] = 1; printf "%06d\n", $4 } }' | sort > "$T/ref.txt"
want=$(wc -l < "$T/ref.txt")

"$CLI" run --model "$MODEL" --input "$DATA" --out "$T/out" --size 320x240 --threads 2 \
  --depth "$T/dep" --depth-scale 1000 --depth-window-ms 16 --occlude-at 1.0 2> "$T/err.txt" || {
  echo "FAIL: headroom run --depth exited with $?"; cat "$T/err.txt"; exit 1; }

fail=0
ls "$T/out/depth" | sed 's/\.png$//' | sort > "$T/got.txt"
ls "$T/out/occlusion" | sed 's/\.png$//' | sort > "$T/occ.txt"
if ! cmp -s "$T/ref.txt" "$T/got.txt"; then
  echo "FAIL: fused frames differ from the reference greedy (< reference, > run):"; diff "$T/ref.txt" "$T/got.txt" | head -20; fail=1
fi
cmp -s "$T/got.txt" "$T/occ.txt" || { echo "FAIL: occlusion masks are not one per fused frame"; fail=1; }
ls "$T/out/depth" "$T/out/occlusion" | grep -q '\.tmp$' && { echo "FAIL: .tmp files left"; fail=1; }
# PNG header: width, height (big-endian at 16 and 20), bit depth (24), colour type (25: 0 = gray).
hdr() { od -An -tu1 -j16 -N10 "$1" | tr -s ' ' | sed 's/^ //'; }
bad=0
for f in $(head -5 "$T/got.txt"); do
  [ "$(hdr "$T/out/depth/$f.png")" = "0 0 1 64 0 0 0 240 16 0" ] || bad=$((bad + 1))
  [ "$(hdr "$T/out/occlusion/$f.png")" = "0 0 1 64 0 0 0 240 8 0" ] || bad=$((bad + 1))
done
[ "$bad" -eq 0 ] || { echo "FAIL: $bad PNGs are not 320x240 gray16 (depth) / gray8 (occlusion)"; fail=1; }
summary=$(grep "fused within" "$T/err.txt" || true)
grep -q " $want fused within 16 ms" <<<"$summary" || { echo "FAIL: summary does not say $want fused: $summary"; fail=1; }
unpaired=$((100 - want))
grep -q "$unpaired without depth" <<<"$summary" || { echo "FAIL: summary does not say $unpaired without depth: $summary"; fail=1; }

# Not a depth source: refused, with the reason.
if "$CLI" run --model "$MODEL" --input "$DATA" --out "$T/bad" --size 320x240 --frames 1 --depth "$DATA/rgb" 2> "$T/err2.txt"; then
  echo "FAIL: --depth on an image folder was accepted"; fail=1
elif ! grep -q "depth" "$T/err2.txt"; then
  echo "FAIL: refusal does not mention depth:"; cat "$T/err2.txt"; fail=1
fi
# A depth file that cannot be read is counted and the run goes on; a depth PNG that cannot be
# written (a folder in its place) stops the run naming the file and the reason, exit 1.
mkdir -p "$T/rd" "$T/wr/depth/000004.png"
echo "not a png" > "$T/notpng.png"
awk -v d="$DATA" -v bad="$T/notpng.png" '/^#/ || NF < 2 { next } { n++; if (n == 3) print $1, bad; else printf "%s %s/%s\n", $1, d, $2 }' "$DATA/depth.txt" > "$T/rd/depth.txt"
cp "$T/dep/rgb.txt" "$T/rd/rgb.txt"
if ! "$CLI" run --model "$MODEL" --input "$DATA" --out "$T/rd/out" --size 128x96 --threads 2 --frames 12 --depth "$T/rd" 2> "$T/err3.txt"; then
  echo "FAIL: an unreadable depth file stopped the run:"; cat "$T/err3.txt"; fail=1
elif ! grep -q "11 fused within 16 ms.*1 read errors.*notpng.png" "$T/err3.txt"; then
  echo "FAIL: the unreadable depth file is not counted and named (11 of 12 fused expected):"; grep depth: "$T/err3.txt"; fail=1
fi
if "$CLI" run --model "$MODEL" --input "$DATA" --out "$T/wr" --size 128x96 --threads 2 --frames 12 --depth "$DATA" 2> "$T/err4.txt"; then
  echo "FAIL: a depth PNG that cannot be written did not stop the run"; fail=1
elif ! grep -q "stopped after 4 frames written: cannot write .*depth/000004.png: Is a directory" "$T/err4.txt"; then
  echo "FAIL: the write failure is not named with its reason:"; cat "$T/err4.txt"; fail=1
fi
[ "$fail" -eq 0 ] && echo "depth_run: $want of 100 frames fused (= reference greedy), $unpaired without depth; $summary; an unreadable depth file counted, an unwritable PNG named"
exit $fail
