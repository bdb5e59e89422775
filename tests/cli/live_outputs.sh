#!/usr/bin/env bash
# The live loop as a user runs it (issue 12): `headroom run --realtime` on a 1920x1440 NV12 @60
# replay of the sam2 bedroom clip, adaptive, with alpha PNGs AND raw floats written, on 1 and 2
# threads, then a 1920x1080 replay on the default threads (one fewer than the CPUs, live: checked). The budget is 1 ms, so that the controller steps down after
# every other frame on any machine (the replay runs at 15 fps, 5 under ASan, 1 under TSan, so that even a slow sanitizer build
# delivers enough frames for several changes). Runs in the Release pass and under ASan+UBSan (this script does
# not judge time: bench/live_replay.sh does). These runs take the default live mode, the tail on every
# frame (the network on its own thread; the first line says so); the last adds --no-tail (the
# processing size alone adapts, the network on every frame). Checks, for every run: exit 0; the controller changed
# rung at least once while outputs were being written (the path that crashed: an output read after
# the replan freed its arena); every delivered frame has its PNG, its raw file and one telemetry
# line, and nothing else is there; frame indices strictly increase; PNG sizes are the model size.
set -euo pipefail
CLI=${HR_CLI:-build/headroom}
MODEL=${HR_MODEL_DIR:-models}/rvm.json
DATA=${HR_DATA_DIR:-../shared/data}
for need in "$CLI" "$MODEL" "$DATA/sam2-bedroom/bedroom.mp4"; do [ -e "$need" ] || { echo "FAIL: missing $need"; exit 1; }; done
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0
# Under ASan+UBSan (a Debug build) a network run at 512x384 takes seconds: the clip is replayed at 5
# fps there, so that the tail-every-frame runs see several network runs and a rung change.
# ThreadSanitizer (the suite's TSan pass) is slower still: 1 fps and at most 60 frames (at 2 fps a
# TSan run beside 3 busy loops delivered 6 frames and no rung change, 2026-12-07).
fps=15 maxn=0
grep -q -a -m1 __asan_init "$CLI" && fps=5
grep -q -a -m1 __tsan_init "$CLI" && fps=1 maxn=60
run_case() {  # name W H threads frames [more run options]
  local name=$1 W=$2 H=$3 thr=$4 n=$5
  shift 5
  [ "$maxn" -gt 0 ] && [ "$n" -gt "$maxn" ] && n=$maxn
  ffmpeg -v error -y -i "$DATA/sam2-bedroom/bedroom.mp4" -vf scale=$W:$H,fps=15 -frames:v "$n" -pix_fmt nv12 -f rawvideo "$T/x.nv12"
  rm -rf "$T/o"
  local targ=(--threads "$thr")
  [ "$thr" = default ] && targ=()
  set +e
  "$CLI" run --model "$MODEL" --input "$T/x.nv12" --input-format nv12:${W}x$H@$fps --out "$T/o" --realtime --raw \
    --budget-ms 1 "${targ[@]}" --telemetry "$T/o/t.jsonl" "$@" 2> "$T/log"
  local rc=$?
  set -e
  grep -E "frames in|replans" "$T/log" | sed "s/^/$name: /"
  if [ $rc -ne 0 ]; then echo "FAIL: $name: exit $rc"; tail -20 "$T/log"; fail=1; return; fi
  local mode="tail every frame"; [[ " $* " == *" --no-tail "* ]] && mode=""
  if [ -n "$mode" ] && ! head -1 "$T/log" | grep -q ", adaptive, $mode\$"; then echo "FAIL: $name: not in the tail-every-frame mode by default: $(head -1 "$T/log")"; fail=1; fi
  if [ -z "$mode" ] && head -1 "$T/log" | grep -q "tail every frame"; then echo "FAIL: $name: --no-tail ignored: $(head -1 "$T/log")"; fail=1; fi
  if [ "$thr" = default ]; then   # live, the kernel threads leave a CPU to capture and outputs
    local want=$(( $(nproc) > 1 ? $(nproc) - 1 : 1 ))
    head -1 "$T/log" | grep -q ", $want threads\?, realtime" || { echo "FAIL: $name: not $want kernel threads by default: $(head -1 "$T/log")"; fail=1; }
  fi
  node - "$T/o" "$name" "$*" <<'JS' || fail=1
const fs = require('fs'), dir = process.argv[2], name = process.argv[3], tail = !process.argv[4].includes('--no-tail'), bad = [];
const lines = fs.readFileSync(dir + '/t.jsonl', 'utf8').split('\n').filter((l) => l);
const rows = lines.map((l) => JSON.parse(l));
const pngs = fs.readdirSync(dir + '/alpha').sort(), raws = fs.readdirSync(dir + '/raw').sort();
const want = rows.map((r) => String(r.frame).padStart(6, '0'));
if (JSON.stringify(pngs) !== JSON.stringify(want.map((s) => s + '.png'))) bad.push(`PNGs ${pngs.length} do not match the ${rows.length} telemetry lines`);
if (JSON.stringify(raws) !== JSON.stringify(want.map((s) => s + '.pha.f32'))) bad.push(`raw files ${raws.length} do not match the ${rows.length} telemetry lines`);
for (let i = 1; i < rows.length; i++) if (rows[i].frame <= rows[i - 1].frame) { bad.push(`frame ${rows[i].frame} after ${rows[i - 1].frame}`); break; }
if (tail) {
  /* every matte made by the tail from a network run of this or an earlier frame, and said so */
  const odd = rows.filter((r) => !(Number.isInteger(r.coef_age) && r.coef_age >= 0 && r.net_ms > 0));
  if (odd.length) bad.push(`${odd.length} lines without coef_age / net_ms, e.g. ${JSON.stringify(odd[0])}`);
} else if (rows.some((r) => r.coef_age !== null)) bad.push('coef_age set with --no-tail');
const ratios = new Set(rows.map((r) => r.ratio));
if (ratios.size < 2) bad.push(`the processing size never changed (ratios: ${[...ratios]})`);
const png = fs.readFileSync(dir + '/alpha/' + pngs[pngs.length - 1]);
const w = png.readUInt32BE(16), h = png.readUInt32BE(20);
const raw = fs.statSync(dir + '/raw/' + raws[raws.length - 1]).size;
if (raw !== w * h * 4) bad.push(`raw file of ${raw} bytes for a ${w}x${h} matte`);
console.log(`${name}: ${rows.length} frames delivered, ${pngs.length} PNGs (${w}x${h}), ${raws.length} raw, ratios ${[...ratios].join(' ')}`);
if (bad.length) { console.log(`FAIL: ${name}: ` + bad.join(`\nFAIL: ${name}: `)); process.exit(1); }
JS
}
# the network on its own thread, the tail on every frame (the default): the network's budget is
# 4 x 1 ms, so it steps down at every run while the tail's mattes are written
run_case "1920x1440 1 thread" 1920 1440 1 120
run_case "1920x1440 2 threads" 1920 1440 2 120
run_case "1920x1080 default threads" 1920 1080 default 90
# the processing size alone: the network on every delivered frame, replanned every other frame
run_case "1920x1440 1 thread --no-tail" 1920 1440 1 120 --no-tail
[ $fail -eq 0 ] && echo "live_outputs: all runs complete" || exit 1
