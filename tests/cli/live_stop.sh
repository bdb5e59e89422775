#!/usr/bin/env bash
# Every stop is clean (issue 12), Release and ASan+UBSan:
#   Ctrl-C: SIGINT once 5 frames are out, on vtest.avi (a second run: SIGTERM) -> exit 130 (143); the report is
#     written and holds this run's frames; telemetry lines = PNGs written (same frame numbers), all
#     parseable; the --state-out file loads (a --state-in run on it exits 0).
#   Disk full: outputs on a 1 MB tmpfs that fills mid-run -> exit 1, a message naming the file
#     and "No space left on device"; every telemetry line parseable, one per PNG written; the
#     report and the state are attempted and their outcome said. Needs root for the mount: the
#     only environment skip (exit 77) of this test.
set -euo pipefail
CLI=${HR_CLI:-build/headroom}
MODEL=${HR_MODEL_DIR:-models}/rvm.json
VTEST=${HR_VTEST:-/usr/share/doc/opencv-doc/examples/data/vtest.avi}
for need in "$CLI" "$MODEL" "$VTEST"; do [ -e "$need" ] || { echo "FAIL: missing $need"; exit 1; }; done
T=$(mktemp -d)
cleanup() { mountpoint -q "$T/full" 2>/dev/null && umount "$T/full"; rm -rf "$T"; }
trap cleanup EXIT
fail=0
check_outputs() {  # dir name -> prints "N lines", fails on mismatch
  node - "$1" "$2" <<'JS'
const fs = require('fs'), dir = process.argv[2], name = process.argv[3];
const text = fs.readFileSync(dir + '/telemetry.jsonl', 'utf8');
if (text.length && !text.endsWith('\n')) { console.log(`FAIL: ${name}: telemetry ends mid-line`); process.exit(1); }
const rows = text.split('\n').filter((l) => l).map((l, i) => { try { return JSON.parse(l); } catch (e) { console.log(`FAIL: ${name}: line ${i + 1} is not JSON`); process.exit(1); } });
const pngs = fs.readdirSync(dir + '/alpha').filter((f) => !f.endsWith('.tmp')).sort();
const tmps = fs.readdirSync(dir + '/alpha').filter((f) => f.endsWith('.tmp'));
const want = rows.map((r) => String(r.frame).padStart(6, '0') + '.png');
if (JSON.stringify(pngs) !== JSON.stringify(want)) { console.log(`FAIL: ${name}: ${pngs.length} PNGs vs ${rows.length} telemetry lines`); process.exit(1); }
if (tmps.length) { console.log(`FAIL: ${name}: temporary files left: ${tmps}`); process.exit(1); }
console.log(`${name}: ${rows.length} telemetry lines, ${pngs.length} PNGs`);
JS
}
for sig in INT TERM; do
  want=$([ $sig = INT ] && echo 130 || echo 143)
  set +e
  "$CLI" run --model "$MODEL" --input "$VTEST" --size 384x288 --threads 2 --out "$T/$sig" --report "$T/$sig/report.html" \
    --state-out "$T/$sig/state.bin" 2> "$T/$sig.log" &
  pid=$!
  # the signal once 5 frames are out (at most 180 s): a fixed 8 s left a TSan build under load 0
  # frames (its set-up alone took ~7.4 s, 2026-12-07)
  for _ in $(seq 360); do
    [ "$(grep -c . "$T/$sig/telemetry.jsonl" 2> /dev/null || true)" -ge 5 ] && break
    kill -0 $pid 2> /dev/null || break
    sleep 0.5
  done
  sleep 1; kill -$sig $pid; wait $pid; rc=$?
  set -e
  grep -E "stopped|frames in|report|state" "$T/$sig.log" | sed "s/^/SIG$sig: /"
  [ $rc -eq "$want" ] || { echo "FAIL: SIG$sig: exit $rc, want $want"; tail "$T/$sig.log"; fail=1; continue; }
  check_outputs "$T/$sig" "SIG$sig" || { fail=1; continue; }
  n=$(grep -c . "$T/$sig/telemetry.jsonl")
  [ "$n" -ge 5 ] || { echo "FAIL: SIG$sig: only $n frames before the signal"; fail=1; }
  grep -q "<svg" "$T/$sig/report.html" && grep -q "stopped early" "$T/$sig/report.html" || { echo "FAIL: SIG$sig: report missing or not this run's"; fail=1; }
  "$CLI" run --model "$MODEL" --input "$VTEST" --size 384x288 --threads 2 --frames 2 --quiet --out "$T/$sig-resume" \
    --state-in "$T/$sig/state.bin" --start "$n" || { echo "FAIL: SIG$sig: the state file does not load"; fail=1; }
done

mkdir -p "$T/full"
if ! mount -t tmpfs -o size=1m tmpfs "$T/full" 2> /dev/null; then echo "SKIP: cannot mount a tmpfs (needs root)"; exit 77; fi
set +e
"$CLI" run --model "$MODEL" --input "$VTEST" --size 384x288 --threads 2 --frames 400 --out "$T/full/o" --report "$T/full/o/report.html" \
  --state-out "$T/full/o/state.bin" 2> "$T/full.log"
rc=$?
set -e
grep -E "stopped|cannot|report|state" "$T/full.log" | sed 's/^/disk full: /'
[ $rc -eq 1 ] || { echo "FAIL: disk full: exit $rc, want 1"; fail=1; }
grep -q "No space left on device" "$T/full.log" && grep -q "cannot write $T/full/o/" "$T/full.log" || { echo "FAIL: disk full: no message naming the file and the reason"; fail=1; }
grep -q "report" "$T/full.log" && grep -q "state" "$T/full.log" || { echo "FAIL: disk full: report and state outcome not said"; fail=1; }
check_outputs "$T/full/o" "disk full" || fail=1
[ $fail -eq 0 ] && echo "live_stop: all stops clean" || exit 1
