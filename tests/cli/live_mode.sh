#!/usr/bin/env bash
# Which live mode `headroom run --realtime` takes, and that it says so on its first line:
#   RVM (ratio 0.5) at a camera budget (16.7 ms): the tail on every frame (network on its own thread);
#   RVM at 100 ms (a 10 fps camera, where the ratio ladder measured better): the ladder;
#   --no-tail at 16.7 ms: the ladder;
#   meet, and RVM at ratio 1 (neither has a guided-filter tail to run apart) at 16.7 ms: the ladder,
#   the reason said before the first line, exit 0.
# Every run: exit 0, PNGs = telemetry lines, and telemetry's coef_age set exactly in the tail mode;
# `plan --realtime` with the same options counts the tail's memory exactly when the run takes it.
set -euo pipefail
CLI=${HR_CLI:-build/headroom}
MODELS=${HR_MODEL_DIR:-models}
DATA=${HR_DATA_DIR:-../shared/data}
for need in "$CLI" "$MODELS/rvm.json" "$MODELS/meet.json" "$DATA/sam2-bedroom/bedroom.mp4"; do [ -e "$need" ] || { echo "FAIL: missing $need"; exit 1; }; done
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
ffmpeg -v error -y -i "$DATA/sam2-bedroom/bedroom.mp4" -vf scale=256:144 -frames:v 24 -pix_fmt nv12 -f rawvideo "$T/x.nv12"
fail=0
check() {   # name, want (tail|ladder|fallback), then run options
  local name=$1 want=$2; shift 2
  rm -rf "$T/o"
  if ! "$CLI" run --input "$T/x.nv12" --input-format nv12:256x144@30 --realtime --out "$T/o" --telemetry "$T/o/t.jsonl" "$@" 2> "$T/log"; then
    echo "FAIL: $name: exit status"; tail -5 "$T/log"; fail=1; return
  fi
  local first; first=$(grep -m1 " -> " "$T/log")
  case $want in
    tail) [[ $first == *", tail every frame" ]] || { echo "FAIL: $name: not in the tail mode: $first"; fail=1; };;
    ladder|fallback) [[ $first != *"tail every frame"* ]] || { echo "FAIL: $name: in the tail mode: $first"; fail=1; };;
  esac
  if [ "$want" = fallback ]; then
    grep -q "no guided-filter tail to run apart.*: adapting by the processing size alone" "$T/log" || { echo "FAIL: $name: the fallback is not said"; head -3 "$T/log"; fail=1; }
  elif grep -q "adapting by the processing size alone" "$T/log"; then echo "FAIL: $name: a fallback said where none was needed"; fail=1; fi
  local plan tb
  plan=$("$CLI" plan --input "$T/x.nv12" --input-format nv12:256x144@30 --realtime --json "$@") || { echo "FAIL: $name: plan failed"; fail=1; }
  tb=$(echo "$plan" | node -e 'const j = JSON.parse(require("fs").readFileSync(0, "utf8")); console.log(j.tail_bytes)')
  if [ "$want" = tail ]; then [ "$tb" -gt 0 ] || { echo "FAIL: $name: plan counts no tail"; fail=1; }
  else [ "$tb" -eq 0 ] || { echo "FAIL: $name: plan counts a tail of $tb bytes the run does not have"; fail=1; }; fi
  echo "$name: plan tail_bytes $tb"
  node - "$T/o" "$name" "$want" <<'JS' || fail=1
const fs = require('fs'), [dir, name, want] = process.argv.slice(2);
const rows = fs.readFileSync(dir + '/t.jsonl', 'utf8').split('\n').filter((l) => l).map((l) => JSON.parse(l));
const pngs = fs.readdirSync(dir + '/alpha').length, aged = rows.filter((r) => r.coef_age !== null).length, bad = [];
if (!rows.length || pngs !== rows.length) bad.push(`${pngs} PNGs for ${rows.length} telemetry lines`);
if (want === 'tail' ? aged !== rows.length : aged !== 0) bad.push(`coef_age set on ${aged} of ${rows.length} lines`);
console.log(`${name}: ${rows.length} frames delivered, ${pngs} PNGs, coef_age on ${aged}`);
if (bad.length) { console.log(`FAIL: ${name}: ` + bad.join('; ')); process.exit(1); }
JS
}
check "rvm, 16.7 ms budget" tail --model "$MODELS/rvm.json" --ratio 0.5
check "rvm, 100 ms budget" ladder --model "$MODELS/rvm.json" --ratio 0.5 --budget-ms 100
check "rvm, --no-tail" ladder --model "$MODELS/rvm.json" --ratio 0.5 --no-tail
check "meet, 16.7 ms budget" fallback --model "$MODELS/meet.json"
check "rvm ratio 1, 16.7 ms budget" fallback --model "$MODELS/rvm.json" --ratio 1
[ $fail -eq 0 ] && echo "live_mode: all runs as expected" || exit 1
