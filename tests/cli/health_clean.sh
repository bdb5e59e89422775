#!/usr/bin/env bash
# Health monitor on clean real video (RVM through `headroom run`): fewer than 1% of the frames
# after warm-up (the first 10) may be reported DEGRADED, and none RECALIBRATING or FAILED. Clips:
# sam2-bedroom frames (200, 256x144), bedroom.mp4 (200, 256x144), vtest.avi (first 400 frames,
# 384x288: people about 15x40 px walking a few px a frame at 10 fps, the case that needs the
# motion-aware mask IoU). HR_HEALTH_FULL=1 adds vtest.avi at its own 768x576 (ratio auto, slow).
# Prints the figure per clip.
set -euo pipefail
CLI=${HR_CLI:-build/headroom}
MODEL=${HR_MODEL_DIR:-models}/rvm.json
DATA=${HR_DATA_DIR:-../shared/data}
VTEST=/usr/share/doc/opencv-doc/examples/data/vtest.avi
[ -x "$CLI" ] || { echo "SKIP: no CLI at $CLI"; exit 77; }
[ -f "$MODEL" ] || { echo "SKIP: no model $MODEL"; exit 77; }
[ -d "$DATA/sam2-bedroom/frames" ] || { echo "SKIP: no frames in $DATA/sam2-bedroom"; exit 77; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

fail=0
# clip NAME INPUT SIZE FRAMES
clip() {
  local name=$1 input=$2 size=$3 n=$4 tel="$T/$1.jsonl"
  "$CLI" run --model "$MODEL" --input "$input" --out "$T/out" --size "$size" --frames "$n" --telemetry "$tel" \
    --threads 1 --no-alpha --quiet 2>"$T/log" || { cat "$T/log"; echo "FAIL: $name: run failed"; fail=1; return; }
  local res
  res=$(awk '
    { f = -1; h = ""; r = ""
      if (match($0, /"frame":[0-9]+/)) f = substr($0, RSTART + 8, RLENGTH - 8) + 0
      if (match($0, /"health":"[a-z-]+"/)) h = substr($0, RSTART + 10, RLENGTH - 11)
      if (match($0, /"health_reason":"[^"]*"/)) r = substr($0, RSTART + 17, RLENGTH - 18)
      if (f < 10) next
      n++
      if (h == "degraded") { d++; if (!first) first = f ": " r }
      if (h != "healthy" && h != "degraded") o++
    }
    END { printf "%d %d %d %s\n", n, d, o, first }' "$tel")
  read -r n d o first <<<"$res"
  printf '%-16s %s %4d frames after warm-up: DEGRADED %d (%.2f%%), other not-HEALTHY %d%s\n' "$name" "$size" "$n" "$d" \
    "$(awk -v d="$d" -v n="$n" 'BEGIN { print n ? 100 * d / n : 0 }')" "$o" "${first:+; first: $first}"
  [ "$n" -ge 1 ] || { echo "FAIL: $name: no telemetry"; fail=1; }
  [ $((d * 100)) -lt "$n" ] || { echo "FAIL: $name: DEGRADED on 1% or more"; fail=1; }
  [ "$o" -eq 0 ] || { echo "FAIL: $name: frames recalibrating / failed on clean video"; fail=1; }
}

clip sam2-frames "$DATA/sam2-bedroom/frames" 256x144 200
[ -f "$DATA/sam2-bedroom/bedroom.mp4" ] && clip bedroom.mp4 "$DATA/sam2-bedroom/bedroom.mp4" 256x144 200
if [ -f "$VTEST" ]; then
  clip vtest "$VTEST" 384x288 400
  [ "${HR_HEALTH_FULL:-0}" = 1 ] && clip vtest-full "$VTEST" 768x576 400
else
  echo "note: no $VTEST (apt-get install opencv-doc)"
fi
[ "$fail" -eq 0 ] && echo "health_clean: ok" || echo "health_clean: FAILED"
exit "$fail"
