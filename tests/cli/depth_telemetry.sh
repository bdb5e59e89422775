#!/usr/bin/env bash
# `headroom run --depth --telemetry`: every frame's JSONL record carries its pairing decision, in
# frame order: depth_fused true exactly for the frames that got DIR/depth/NNNNNN.png, with
# depth_dt_ms = |depth ts - colour ts| in 0..16; false with null for the others. Depth timestamps
# are shifted by +7 ms and 3 frames in 10 dropped, so both kinds of record occur.
set -euo pipefail
CLI=${HR_CLI:-build/headroom}
MODEL=${HR_MODEL_DIR:-models}/rvm.json
DATA=${HR_DATA_DIR:-../shared/data}/realsense-d435-desk
[ -x "$CLI" ] || { echo "SKIP: no CLI at $CLI"; exit 77; }
[ -f "$MODEL" ] || { echo "SKIP: no model $MODEL"; exit 77; }
[ -f "$DATA/depth.txt" ] || { echo "SKIP: no recording at $DATA"; exit 77; }
HELP=$("$CLI" run --help 2>&1 || true)
if ! grep -q -- "--depth " <<<"$HELP" || ! grep -q -- "--telemetry" <<<"$HELP"; then
  echo "FAIL: headroom run --help lists no --depth / --telemetry (the options this test runs)"; exit 1
fi

T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
DATA=$(cd "$DATA" && pwd)
mkdir -p "$T/dep"
awk -v d="$DATA" '
  /^#/ || NF < 2 { next }
  { n++; if (n % 10 == 3 || n % 10 == 6 || n % 10 == 9) next
    split($1, a, "."); f = substr(a[2] "000000000", 1, 9)
    ns = f + 7000000; s = a[1]; if (ns >= 1000000000) { ns -= 1000000000; s++ }
    printf "%s.%09d %s/%s\n", s, ns, d, $2 }' "$DATA/depth.txt" > "$T/dep/depth.txt"
awk -v d="$DATA" '/^#/ || NF < 2 { next } { printf "%s %s/%s\n", $1, d, $2 }' "$DATA/rgb.txt" > "$T/dep/rgb.txt"

"$CLI" run --model "$MODEL" --input "$DATA" --out "$T/out" --size 256x192 --threads 2 --quiet \
  --depth "$T/dep" --telemetry "$T/tel.jsonl" 2> "$T/err.txt" || {
  echo "FAIL: headroom run exited with $?"; cat "$T/err.txt"; exit 1; }

fail=0
ls "$T/out/depth" | sed 's/\.png$//' | sort > "$T/files.txt"
# frame, depth_dt_ms, depth_fused of every record, in file order.
sed -E 's/.*"frame":([0-9]+),.*"depth_dt_ms":([^,]*),"depth_fused":(true|false).*/\1 \2 \3/' "$T/tel.jsonl" > "$T/rec.txt"
n=$(wc -l < "$T/rec.txt")
[ "$n" -eq 100 ] || { echo "FAIL: $n telemetry records, expected 100"; fail=1; }
awk '$1 != NR - 1 { bad++ } END { exit bad > 0 }' "$T/rec.txt" || { echo "FAIL: records not in frame order"; fail=1; }
awk '$3 == "true" { printf "%06d\n", $1 }' "$T/rec.txt" | sort > "$T/fused.txt"
if ! cmp -s "$T/files.txt" "$T/fused.txt"; then
  echo "FAIL: frames with depth_fused true differ from the depth PNGs written (< files, > telemetry):"
  diff "$T/files.txt" "$T/fused.txt" | head -10; fail=1
fi
bad=$(awk '($3 == "true" && ($2 == "null" || $2 < -16 || $2 > 16)) || ($3 == "false" && $2 != "null") { b++ } END { print b + 0 }' "$T/rec.txt")
[ "$bad" -eq 0 ] || { echo "FAIL: $bad records with depth_dt_ms inconsistent with depth_fused (want |dt| <= 16 ms when fused, null otherwise)"; fail=1; }
nf=$(wc -l < "$T/files.txt")
[ "$nf" -gt 0 ] && [ "$nf" -lt 100 ] || { echo "FAIL: $nf fused frames: the variant should give some of each"; fail=1; }
maxdt=$(awk '$3 == "true" && $2 > m { m = $2 } END { print m + 0 }' "$T/rec.txt")
[ "$fail" -eq 0 ] && echo "depth_telemetry: 100 records in order, $nf fused (max depth_dt_ms $maxdt), $((100 - nf)) null"
exit $fail
