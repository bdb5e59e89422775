#!/usr/bin/env bash
# Health monitor end to end: `headroom run --inject KIND@40:20` on real video (sam2-bedroom frames
# at 256x144, vtest.avi at 384x288; 120 frames, RVM), telemetry parsed per frame. Each fault must
# be detected within 5 frames (the first not-HEALTHY frame at or after 40, with the reason naming
# it), never reported HEALTHY while it lasts, HEALTHY again within 30 frames of its end, and no
# frame after warm-up outside the episode may be not HEALTHY. Prints the frame counts.
#
# Two faults need the loop to act (tests/unit/test_health_engine.c checks them at the library level
# with that loop): memory-pressure (the loop suspends the session while it lasts: the telemetry must
# show "suspended" frames) and nan-state for 20 frames (the loop rebuilds the session on FAILED: the
# run must not end FAILED). Both are checked strictly, like every other fault.
set -euo pipefail
CLI=${HR_CLI:-build/headroom}
MODEL=${HR_MODEL_DIR:-models}/rvm.json
FRAMES=${HR_DATA_DIR:-../shared/data}/sam2-bedroom/frames
VTEST=/usr/share/doc/opencv-doc/examples/data/vtest.avi
[ -x "$CLI" ] || { echo "SKIP: no CLI at $CLI"; exit 77; }
[ -f "$MODEL" ] || { echo "SKIP: no model $MODEL"; exit 77; }
[ -d "$FRAMES" ] || { echo "SKIP: no frames $FRAMES"; exit 77; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

# judge T.jsonl F0 LEN -> "detect recover silent false failed_at_end suspended reason-at-detection"
judge() {
  awk -v F0="$2" -v F1=$(($2 + $3)) '
    function field(name,   m) {
      if (match($0, "\"" name "\":\"[^\"]*\"")) { m = substr($0, RSTART, RLENGTH); sub("^\"" name "\":\"", "", m); sub("\"$", "", m); return m }
      if (match($0, "\"" name "\":[-0-9.]+")) { m = substr($0, RSTART, RLENGTH); sub("^\"" name "\":", "", m); return m }
      return ""
    }
    BEGIN { det = -1; rec = -1; silent = 0; fa = 0; susp = 0; reason = "" }
    {
      f = field("frame") + 0; h = field("health"); bad = (h != "healthy")
      if (h == "suspended") susp = 1
      if (f >= F0 && det < 0 && bad) { det = f - F0 + 1; reason = h ": " field("health_reason") }
      if (det > 0 && f < F1 && !bad) silent++
      if (f >= F1 && rec < 0 && !bad) rec = f - F1 + 1
      ep = (f >= F0 && (rec < 0 || f < F1 + rec - 1))
      if (f >= 10 && !ep && bad) fa++
      last = h
    }
    END { gsub(/ /, "_", reason); print det, rec, silent, fa, (last == "failed"), susp, reason }' "$1"
}

fail=0
# check CLIP SIZE TAG KIND LEN PATTERN: PATTERN must appear in the reason at detection
check() {
  local clip=$1 size=$2 tag=$3 kind=$4 len=$5 pat=$6
  local tel="$T/$tag-$kind-$len.jsonl"
  "$CLI" run --model "$MODEL" --input "$clip" --out "$T/out" --size "$size" --frames 120 --inject "$kind@40:$len" \
    --telemetry "$tel" --threads 1 --no-alpha --quiet 2>"$T/log" || { cat "$T/log"; echo "FAIL: $tag $kind: run failed"; fail=1; return; }
  read -r det rec silent fa failed_end susp reason < <(judge "$tel" 40 "$len")
  printf '%-8s %-20s detect %3s  recover %3s  silent %s  false %s  | %s\n' "$tag" "$kind@40:$len" "$det" "$rec" "$silent" "$fa" "${reason//_/ }"
  if [ "$kind" = memory-pressure ] && [ "$susp" = 0 ]; then
    echo "FAIL: $tag $kind: no frame reported suspended (the loop must suspend the session under memory pressure)"; fail=1
  fi
  if [ "$failed_end" = 1 ]; then
    echo "FAIL: $tag $kind: the run ends FAILED (the loop must rebuild the session on FAILED)"; fail=1
  fi
  [ "$det" -ge 1 ] && [ "$det" -le 5 ] || { echo "FAIL: $tag $kind detected after $det frames"; fail=1; }
  [ "$rec" -ge 1 ] && [ "$rec" -le 30 ] || { echo "FAIL: $tag $kind healthy again after $rec frames"; fail=1; }
  [ "$silent" -eq 0 ] || { echo "FAIL: $tag $kind: $silent HEALTHY frames during the fault"; fail=1; }
  [ "$fa" -eq 0 ] || { echo "FAIL: $tag $kind: $fa frames not HEALTHY outside the episode"; fail=1; }
  case "${reason//_/ }" in *"$pat"*) ;; *) echo "FAIL: $tag $kind: reason does not say '$pat'"; fail=1 ;; esac
}

clips=("$FRAMES 256x144 bedroom")
[ -f "$VTEST" ] && clips+=("$VTEST 384x288 vtest") || echo "note: no $VTEST (apt-get install opencv-doc): bedroom only"
for c in "${clips[@]}"; do
  read -r clip size tag <<<"$c"
  check "$clip" "$size" "$tag" nan-state 1 "NaN/Inf"
  check "$clip" "$size" "$tag" nan-state 20 "NaN/Inf"
  check "$clip" "$size" "$tag" freeze-input 20 "input frozen"
  check "$clip" "$size" "$tag" black-input 20 "input black"
  check "$clip" "$size" "$tag" noise-input 20 "input noise"
  check "$clip" "$size" "$tag" stuck-output 20 "output stuck"
  check "$clip" "$size" "$tag" memory-pressure 20 "suspended"
done
[ "$fail" -eq 0 ] && echo "health_faults: ok" || echo "health_faults: FAILED"
exit "$fail"
