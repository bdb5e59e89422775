#!/usr/bin/env bash
# Issue 8 soak: 10 minutes of live loop. vtest.avi at 192x144 NV12, looped (the CLI has no loop
# option: the clip is catted into stdin) to 36,000 frames replayed at 60 fps (--realtime, --fixed
# so that no replan changes the plan's size), no alpha files, telemetry and a report.
# Asserts, from the telemetry: RSS grows by less than 1 MB after the warm-up (the first minute),
# and the delivered fps of the last full minute is at least 85% of the first minute's, and of the
# first minute after the warm-up (on a shared machine other processes' load moves it: the load
# average is printed each minute).
# Every frame is processed once or counted as dropped.
# usage: bench/live_soak.sh [WORKDIR]
#   env: HR_CLI (build/headroom), HR_MODEL_DIR (models), HR_VTEST (opencv-doc's vtest.avi),
#        SOAK_FRAMES (36000), SOAK_FPS (60), WARMUP_S (60), WINDOW_S (60: the fps comparison's
#        window), THREADS (1: on a shared 2-core machine two kernel
#        threads wait for each other whenever one is descheduled), SOAK_ARGS (more run options)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
CLI=${HR_CLI:-$here/build/headroom}
MODEL=${HR_MODEL_DIR:-$here/models}/rvm.json
VTEST=${HR_VTEST:-/usr/share/doc/opencv-doc/examples/data/vtest.avi}
FRAMES=${SOAK_FRAMES:-36000} FPS=${SOAK_FPS:-60} WARMUP_S=${WARMUP_S:-60} WINDOW_S=${WINDOW_S:-60}
W=192 H=144
FRAME_BYTES=$((W * H * 3 / 2))
[ -x "$CLI" ] || { echo "live_soak: no CLI at $CLI" >&2; exit 77; }
[ -f "$MODEL" ] || { echo "live_soak: no model $MODEL" >&2; exit 77; }
[ -f "$VTEST" ] || { echo "live_soak: no $VTEST" >&2; exit 77; }
command -v ffmpeg >/dev/null && command -v node >/dev/null || { echo "live_soak: needs ffmpeg and node" >&2; exit 77; }
work=${1:-$(mktemp -d)}
mkdir -p "$work"

clip=$work/vtest_${W}x$H.nv12
[ -s "$clip" ] || ffmpeg -v error -y -i "$VTEST" -vf scale=$W:$H -pix_fmt nv12 -f rawvideo "$clip"
clip_frames=$(($(stat -L -c %s "$clip") / FRAME_BYTES))
loops=$(( (FRAMES + clip_frames - 1) / clip_frames ))
echo "live_soak: $FRAMES frames (${clip_frames}-frame clip x $loops) ${W}x$H nv12 at $FPS fps = $((FRAMES / FPS)) s; load $(cut -d' ' -f1-3 /proc/loadavg)"

# the load average once a minute, next to the per-minute figures
( while sleep "$WINDOW_S"; do echo "$(date +%s) $(cut -d' ' -f1-3 /proc/loadavg)"; done ) > "$work/load.txt" &
loadpid=$!
trap 'kill $loadpid 2>/dev/null || true' EXIT

t0=$(date +%s)
rc=0
{ for _ in $(seq "$loops"); do cat "$clip"; done 2>/dev/null | head -c $((FRAMES * FRAME_BYTES)) || true; } |
  "$CLI" run --model "$MODEL" --input - --input-format nv12:${W}x$H@$FPS --out "$work/out" --realtime --fixed \
    --threads "${THREADS:-1}" --no-alpha --telemetry "$work/soak.jsonl" --report "$work/soak.html" ${SOAK_ARGS:-} 2> "$work/soak.log" || rc=$?
t1=$(date +%s)
kill $loadpid 2>/dev/null || true
grep -E "frames in|stages|health frames|report" "$work/soak.log" | sed 's/^/  /'
[ $rc -eq 0 ] || { echo "live_soak: run exited with $rc" >&2; cat "$work/soak.log" >&2; exit 1; }

node "$here/bench/live_stats.js" "$work/soak.jsonl" --fps "$FPS" --warmup-s "$WARMUP_S" --window-s "$WINDOW_S" > "$work/soak.json"
node - "$work/soak.json" "$work/load.txt" "$t0" "$FRAMES" "$WARMUP_S" "$WINDOW_S" <<'EOF'
'use strict';
const fs = require('fs');
const [json, loadf, t0, frames, warmup, win] = process.argv.slice(2).map((x, i) => (i < 2 ? x : Number(x)));
const s = JSON.parse(fs.readFileSync(json, 'utf8'));
const loads = fs.readFileSync(loadf, 'utf8').trim().split('\n').filter(Boolean).map((l) => l.split(' '));
const loadAt = (w) => { const x = loads.find((l) => Number(l[0]) - t0 >= (w + 1) * win - 5); return x ? x.slice(1).join(' ') : '-'; };
console.log(`  window (${win} s)  frames  fps    RSS max MB  load (1/5/15) at its end`);
for (const w of s.windows)
  console.log(`  ${String(w.window + 1).padStart(14)}  ${String(w.frames).padStart(6)}  ${w.fps.toFixed(1).padStart(5)}  ${w.rss_mb.toFixed(2).padStart(10)}  ${loadAt(w.window)}` +
    (w.span_s < win - 1 ? `  (partial: ${w.span_s} s)` : ''));
const full = s.windows.filter((w) => w.span_s >= win - 1);
const first = full[0], last = full[full.length - 1], after = full.find((w) => w.window * win >= warmup) || first;
const bad = [];
console.log(`  ${s.frames} processed + ${s.dropped} dropped of ${frames}; latency p50 ${s.latency_p50_ms} / p99 ${s.latency_p99_ms} ms; ` +
  `processing p50 ${s.proc_p50_ms} / p99 ${s.proc_p99_ms} ms; health ${JSON.stringify(s.health)}`);
console.log(`  RSS after warm-up (${warmup} s) ${s.rss_after_warmup_mb} MB, max after it ${s.rss_max_after_warmup_mb} MB, last ${s.rss_last_mb} MB: ` +
  `growth ${(s.rss_growth_after_warmup_bytes / 1e6).toFixed(3)} MB`);
if (full.length >= 2) console.log(`  delivered fps: first window ${first.fps.toFixed(2)}, first after the warm-up (${after.window + 1}) ` +
  `${after.fps.toFixed(2)}, last full window (${last.window + 1}) ${last.fps.toFixed(2)} (${(100 * last.fps / first.fps).toFixed(1)}% / ` +
  `${(100 * last.fps / after.fps).toFixed(1)}%)`);
if (s.last_frame + 1 !== frames) bad.push(`the run ended at frame ${s.last_frame}, not ${frames - 1}`);
if (s.duplicate_frames || s.non_increasing) bad.push(`frames processed twice ${s.duplicate_frames}, out of order ${s.non_increasing}`);
if (s.unaccounted) bad.push(`${s.unaccounted} frames neither processed nor counted dropped`);
if (!(s.rss_growth_after_warmup_bytes < 1e6)) bad.push(`RSS grew by ${s.rss_growth_after_warmup_bytes} bytes after the warm-up`);
if (full.length < 2) bad.push('fewer than 2 full windows');
else if (last.fps < 0.85 * Math.max(first.fps, after.fps)) bad.push(`delivered fps declined: ${first.fps}, ${after.fps} -> ${last.fps}`);
if (bad.length) { console.error('live_soak: FAIL: ' + bad.join('; ')); process.exit(1); }
console.log('live_soak: ok');
EOF
echo "live_soak: $((t1 - t0)) s; telemetry, report and summary in $work"
