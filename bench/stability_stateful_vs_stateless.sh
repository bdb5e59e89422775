#!/usr/bin/env bash
# Does the recurrent state buy temporal stability? Runs RVM over real clips twice, stateful and
# --stateless, and prints alpha flicker where the input holds still (bench/stability_metric.c
# defines the figures). Clips: sam2-bedroom (200 frames) and the first 200 frames of vtest.avi.
#
# Usage: bench/stability_stateful_vs_stateless.sh [FRAMES]
# Env: HR_CLI (default build/headroom), HR_MODEL_DIR (models), HR_DATA_DIR (../shared/data),
#      HR_THREADS (1), HR_KEEP=1 keeps the work folder.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-200}
CLI=${HR_CLI:-build/headroom}
MODEL=${HR_MODEL_DIR:-models}/rvm.json
DATA=${HR_DATA_DIR:-../shared/data}
VTEST=/usr/share/doc/opencv-doc/examples/data/vtest.avi
THREADS=${HR_THREADS:-1}
[ -x "$CLI" ] || { echo "no CLI at $CLI (build first, or set HR_CLI)"; exit 1; }
T=$(mktemp -d)
[ "${HR_KEEP:-0}" = 1 ] && echo "work folder: $T" || trap 'rm -rf "$T"' EXIT
cc -O2 -Wall -o "$T/metric" bench/stability_metric.c -lm

# clip NAME INPUT WxH: stateful run with the model input dumped, stateless run, then the figures.
# The size is below the source's, so the input is resampled into the session's buffer, which
# --dump-input writes (frames read in place are not dumped).
clip() {
  local name=$1 input=$2 size=$3
  local w=${size%x*} h=${size#*x}
  local common=(run --model "$MODEL" --input "$input" --size "$size" --ratio 1 --frames "$N" --raw --threads "$THREADS" --quiet)
  local t0=$SECONDS
  "$CLI" "${common[@]}" --out "$T/$name/stateful" --dump-input
  "$CLI" "${common[@]}" --out "$T/$name/stateless" --stateless
  local got
  got=$(ls "$T/$name/stateful/raw" | wc -l)
  [ "$got" -eq "$N" ] || { echo "$name: $got of $N frames"; exit 1; }
  "$T/metric" "$T/$name/stateful/input" "$T/$name/stateful/raw" "$T/$name/stateless/raw" "$w" "$h" "$N" \
    "$name ($(basename "$input"), ratio 1, $((SECONDS - t0)) s for both runs)"
  rm -rf "${T:?}/$name/stateful/input"
}

clip sam2-bedroom "$DATA/sam2-bedroom/frames" 256x144
if [ -f "$VTEST" ]; then
  clip vtest "$VTEST" 256x192
else
  echo "vtest: $VTEST absent (apt-get install opencv-doc); skipped"
fi
