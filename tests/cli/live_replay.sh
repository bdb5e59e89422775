#!/usr/bin/env bash
# Issue 8, the live loop under --realtime, on 180 frames of the sam2 bedroom clip at 1920x1440 NV12
# (bench/live_replay.sh is the long version, with figures):
#   adaptive: the controller leaves the first rung (far over budget here) and, once settled, keeps
#     the processing time (ingest+infer+post+output) within the budget as the ladder promises: at
#     most one run of slow frames in 64 (its p99 rule; the stretch judged is the last one of >= 20
#     frames at one rung, see below: a change near the end leaves too few after it). The budget is one this
#     machine can keep: twice what the smallest rung costs (median, measured first), in whole 60 fps
#     frame periods, at least 33.3 ms. Replayed at 15 fps so that 180 frames last long enough (12 s)
#     to settle from a first rung that costs ~0.3 s a frame here.
#   fixed heavy (--fixed --ratio 0.25, 30 fps, 6 s): frames are dropped, not queued: drops are
#     counted, every frame is processed once or counted dropped, a frame's age when taken stays
#     within 3 frame periods (p99), latency p99 stays within the processing p99 + 3 frame periods
#     (both without the stream's last frame: nothing newer replaces it, so it may wait behind a
#     whole frame's processing), and the run ends one frame after the stream does.
# Both: no frame is processed twice, frame indices strictly increase. All runs use --threads 1: on
# a shared 2-core machine two kernel threads wait for each other whenever one is descheduled (p99
# 5-15x the median), and the capture thread needs its share.
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
CLI=${HR_CLI:-build/headroom}
MODEL=${HR_MODEL_DIR:-models}/rvm.json
DATA=${HR_DATA_DIR:-../shared/data}
[ -x "$CLI" ] || { echo "SKIP: no CLI at $CLI"; exit 77; }
[ -f "$MODEL" ] || { echo "SKIP: no model $MODEL"; exit 77; }
[ -f "$DATA/sam2-bedroom/bedroom.mp4" ] || { echo "SKIP: no $DATA/sam2-bedroom/bedroom.mp4"; exit 77; }
command -v ffmpeg > /dev/null && command -v node > /dev/null || { echo "SKIP: needs ffmpeg and node"; exit 77; }
# a timing test: the Release pass runs it (scripts/test.sh), a sanitizer build measures the sanitizer
if grep -q -a -m1 __asan_init "$CLI" || grep -q -a -m1 __ubsan_handle "$CLI"; then
  echo "SKIP: $CLI is a sanitizer build: timings are not the loop's"; exit 77
fi

T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
W=1920 H=1440 N=180
ffmpeg -v error -i "$DATA/sam2-bedroom/bedroom.mp4" -vf scale=$W:$H,fps=60 -frames:v $N -pix_fmt nv12 -f rawvideo "$T/x.nv12"
load() { cut -d' ' -f1-3 /proc/loadavg; }
stats() { node "$here/bench/live_stats.js" "$@"; }
fail=0

# what the smallest rung costs (the ladder: 512/1920 x 1 ... x 0.32), lossless
smallest=$(node -e "console.log((512 / $W * 0.32).toFixed(4))")
"$CLI" run --model "$MODEL" --input "$T/x.nv12" --input-format nv12:${W}x$H@60 --out "$T/cal" --fixed --ratio "$smallest" \
  --threads 1 --frames 25 --no-alpha --quiet --telemetry "$T/cal.jsonl"
tail -n +6 "$T/cal.jsonl" > "$T/cal_settled.jsonl"
cal_p50=$(stats "$T/cal_settled.jsonl" | node -e 'console.log(JSON.parse(require("fs").readFileSync(0, "utf8")).proc_p50_ms)')
budget=$(node -e "const p = 1000 / 60; console.log((Math.max(2, Math.ceil(2 * $cal_p50 / p)) * p).toFixed(1))")
echo "smallest rung (ratio $smallest) p50 $cal_p50 ms -> budget $budget ms (16.7 is $(node -e "console.log($cal_p50 <= 16.7 ? 'within reach' : 'out of reach')") here); load $(load)"

# Each check runs twice at most: the machine is shared, and a burst of other processes' load can
# double every frame's cost for seconds (visible in the telemetry as a jump at an unchanged ratio).
# A retry is announced; two failures fail the test.
adaptive() {
  "$CLI" run --model "$MODEL" --input "$T/x.nv12" --input-format nv12:${W}x$H@15 --out "$T/a" --realtime --no-tail \
    --threads 1 --budget-ms "$budget" --no-alpha --telemetry "$T/a.jsonl" 2> "$T/a.log" || { echo "FAIL: adaptive run exited with $?"; cat "$T/a.log"; exit 1; }
  grep "frames in" "$T/a.log"
  stats "$T/a.jsonl" --budget "$budget" --fps 15 > "$T/a.json"
  node - "$T/a.json" "$(load)" <<'EOF'
const s = JSON.parse(require('fs').readFileSync(process.argv[2], 'utf8')), bad = [];
console.log(`adaptive: ${s.frames} processed, ${s.dropped} dropped; replans ${s.replans} (${s.changes.map((c) => c.proc + '@' + c.t_s + 's').join(' ')}); ` +
  `settled on ratio ${s.settled.ratio} (${s.settled.proc}) for ${s.settled.frames} frames: processing p50 ${s.settled.proc_p50_ms} / p99 ` +
  `${s.settled.proc_p99_ms} ms, budget ${s.budget_ms} ms; load ${process.argv[3]}`);
if (s.duplicate_frames || s.non_increasing) bad.push(`frames processed twice: ${s.duplicate_frames}, out of order: ${s.non_increasing}`);
if (s.unaccounted) bad.push(`${s.unaccounted} frames neither processed nor counted dropped`);
if (s.replans < 1) bad.push('the controller never left the first rung');
// the ladder's contract on a stretch at one rung: its slow frames, a run of consecutive ones counted
// once, are at most one in 64 frames (the p99 of 64 taken as the second largest, src/stream/ladder.c:
// one frame over the budget in 64 is an accident of the host that a smaller rung would not avoid)
const judge = (x, what) => {
  const allowed = Math.max(1, Math.floor(x.frames / 64));
  console.log(`adaptive: ${what}: ${x.frames} frames at ${x.proc}: p50 ${x.proc_p50_ms} / p99 ${x.proc_p99_ms} ms, ` +
    `${x.over_runs} run(s) over the ${s.budget_ms} ms budget (${allowed} allowed)`);
  if (x.over_runs > allowed) bad.push(`${what}: ${x.over_runs} runs of frames over the ${s.budget_ms} ms budget in ${x.frames} frames (${allowed} allowed)`);
};
const b = s.before_last;
if (s.settled.frames >= 20) judge(s.settled, 'settled');
else if (b && b.last_change_up && b.frames >= 20)
  // an up-step near the end: the controller found room, so judge the stretch it kept before it
  judge(b, `the last change is an up-step ${s.settled.frames} frames before the end; the stretch before it`);
else if (s.before_probe && s.before_probe.frames >= 20)
  // a probe up that the budget did not hold, and the step back down near the end: judge the stretch
  // at the rung it returned to, before the probe
  judge(s.before_probe, `the last change steps back down from a probe (${s.before_probe.probe}, ${s.before_probe.probe_frames} frames) ` +
    `${s.settled.frames} frames before the end; the stretch before the probe`);
else if (b && !b.last_change_up && b.trimmed && b.trimmed.frames >= 20)
  // a step down near the end (the host slowed down): judge the stretch before the 12 frames that moved it
  judge(b.trimmed, `the last change is a step down ${s.settled.frames} frames before the end; the stretch before the 12 frames that moved it`);
else bad.push(`only ${s.settled.frames} frames after the last replan: not settled`);
if (bad.length) { console.log('FAIL: ' + bad.join('\nFAIL: ')); process.exit(1); }
EOF
}

fixed_heavy() {
  "$CLI" run --model "$MODEL" --input "$T/x.nv12" --input-format nv12:${W}x$H@30 --out "$T/f" --realtime --fixed --ratio 0.25 \
    --threads 1 --no-alpha --telemetry "$T/f.jsonl" 2> "$T/f.log" || { echo "FAIL: fixed run exited with $?"; cat "$T/f.log"; exit 1; }
  grep "frames in" "$T/f.log"
  stats "$T/f.jsonl" --fps 30 > "$T/f.json"
  node - "$T/f.json" "$(load)" "$N" <<'EOF'
const s = JSON.parse(require('fs').readFileSync(process.argv[2], 'utf8')), bad = [], period = 1000 / 30, n = Number(process.argv[4]);
console.log(`fixed 0.25: ${s.frames} processed, ${s.dropped} dropped; processing p50 ${s.proc_p50_ms} / p99 ${s.proc_p99_ms} ms; ` +
  `latency p50 ${s.latency_p50_ms} / p99 ${s.latency_p99_ms} ms (${s.latency_p99_before_end_ms} before the last frame); ` +
  `age when taken p50 ${s.wait_p50_ms} / p99 ${s.wait_p99_ms} ms; ` +
  `run ${s.wall_s} s for a ${(n / 30).toFixed(1)} s stream; load ${process.argv[3]}`);
if (s.duplicate_frames || s.non_increasing) bad.push(`frames processed twice: ${s.duplicate_frames}, out of order: ${s.non_increasing}`);
if (!(s.dropped > 0)) bad.push('no frame was dropped');
if (s.unaccounted) bad.push(`${s.unaccounted} frames neither processed nor counted dropped`);
if (s.last_frame !== n - 1) bad.push(`the last frame processed is ${s.last_frame}, not ${n - 1}`);
if (s.frames < 3) bad.push(`only ${s.frames} frames processed`);
else {
  if (!(s.wait_p99_ms <= 3 * period)) bad.push(`frames waited ${s.wait_p99_ms} ms (p99) before processing: more than 3 frame periods`);
  if (!(s.latency_p99_before_end_ms <= s.proc_p99_ms + 3 * period))
    bad.push(`latency p99 ${s.latency_p99_before_end_ms} ms (before the last frame) > processing p99 ${s.proc_p99_ms} + 3 frame periods`);
  if (!(s.wall_s * 1e3 <= n * period + 2 * s.proc_p99_ms + 500)) bad.push(`the run took ${s.wall_s} s for a ${n / 30} s stream: it fell behind`);
}
if (bad.length) { console.log('FAIL: ' + bad.join('\nFAIL: ')); process.exit(1); }
EOF
}

for check in adaptive fixed_heavy; do
  $check || { echo "$check: failed once (load $(load)); once more"; $check; } || fail=$((fail + 1))
done
[ $fail -eq 0 ] && echo "live_replay: 2 passed, 0 failed" || { echo "live_replay: FAILED"; exit 1; }
