#!/usr/bin/env bash
# The output thread's slots hold only what the asked outputs read (issue 15, tools/headroom/writer.c):
# `headroom run --no-alpha` with telemetry only (nothing reads the matte) copies no matte, so its
# peak RSS is `headroom plan`'s prediction for the run with alpha PNGs less the alpha PNGs' part
# (the slots' mattes, the PNG writer), within 5%; before, the slots' two float mattes (22 MB at this
# size) stayed. And with alpha PNGs the peak is the plan's, within 5%. sam2-bedroom frames scaled to
# 1920x1440 NV12 (RVM, ratio 0.25, 4 frames); peak RSS is /usr/bin/time's maximum resident set size.
set -euo pipefail
CLI=${HR_CLI:-build/headroom}
MODEL=${HR_MODEL_DIR:-models}/rvm.json
DATA=${HR_DATA_DIR:-../shared/data}/sam2-bedroom
[ -x "$CLI" ] || { echo "SKIP: no CLI at $CLI"; exit 77; }
[ -f "$MODEL" ] || { echo "SKIP: no model $MODEL"; exit 77; }
[ -f "$DATA/bedroom.mp4" ] || { echo "SKIP: no sam2-bedroom data in $DATA"; exit 77; }
command -v ffmpeg > /dev/null || { echo "SKIP: no ffmpeg"; exit 77; }
[ -x /usr/bin/time ] || { echo "SKIP: no /usr/bin/time (GNU time)"; exit 77; }
# a sanitizer build's RSS is its shadow memory and quarantine, not ours
if grep -q -a -m1 __asan_init "$CLI"; then echo "SKIP: $CLI is an ASan build"; exit 77; fi
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
N=4
ffmpeg -v error -i "$DATA/bedroom.mp4" -frames:v $N -vf scale=1920:1440 -pix_fmt nv12 -f rawvideo "$T/v.nv12"
src=(--input "$T/v.nv12" --input-format nv12:1920x1440@30)
plan=$("$CLI" plan --model "$MODEL" --ratio 0.25 --json "${src[@]}")
key() { printf '%s' "$plan" | grep -o "\"$1\":[0-9.]*" | head -1 | cut -d: -f2; }
total=$(key process_total_bytes) alpha=$(key alpha_png_bytes)
peak() {   # run options -> peak RSS in bytes
  rm -rf "$T/out"
  /usr/bin/time -o "$T/time" -f '%M' "$CLI" run --model "$MODEL" "${src[@]}" --ratio 0.25 --out "$T/out" --quiet "$@" > /dev/null
  echo $(( $(tail -1 "$T/time") * 1024 ))
}
fail=0
with=$(peak)
without=$(peak --no-alpha --telemetry "$T/t.jsonl")
[ "$(ls "$T/out" 2>/dev/null | grep -c alpha || true)" = 0 ] || { echo "FAIL: --no-alpha wrote alpha PNGs"; fail=1; }
lines=$(wc -l < "$T/t.jsonl")
[ "$lines" = $N ] || { echo "FAIL: --no-alpha: $lines telemetry lines, not $N"; fail=1; }
awk -v p="$total" -v a="$alpha" -v m="$with" -v m2="$without" 'BEGIN {
  r = p / m; r2 = (p - a) / m2
  printf "alpha PNGs: peak %.1f MB, plan %.1f MB (%.3f); --no-alpha: peak %.1f MB, plan less the alpha PNGs %.1f MB (%.3f)\n",
         m / 1e6, p / 1e6, r, m2 / 1e6, (p - a) / 1e6, r2
  exit (r < 0.95 || r > 1.05 || r2 < 0.95 || r2 > 1.05) }' || { echo "FAIL: a peak is more than 5% from the plan"; fail=1; }
[ $fail = 0 ] && echo "PASS: the output slots hold what the outputs read"
exit $fail
