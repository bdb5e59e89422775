#!/usr/bin/env bash
# Capture-to-delivery latency of the live loop at camera size (issue 12, done-when 1): the sam2
# bedroom clip scaled to 1920x1440 NV12 and replayed at 60 fps (--realtime, adaptive, budget
# 16.7 ms), with outputs off / alpha PNGs / alpha PNGs + raw floats, on 1 and 2 threads, one after
# the other in one run. Per case, over the frames after the controller settled (the last rung
# change + 2 frames): delivered fps, drops, infer p50/p99, latency p50/p99 (capture -> delivered to
# the output thread), output thread p50. Each case runs in the modes of MODES (default "shrink
# tail"): shrink = the network on every frame at the rung that fits the budget (--no-tail); tail =
# the default (--tail-every-frame: the network on its own thread, the full-resolution tail on every frame; its
# network time and coefficient age are printed too). Usage: bench/live_latency.sh [FRAMES=400]
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
CLI=${HR_CLI:-$here/build/headroom}
DATA=${HR_DATA_DIR:-$here/../shared/data}
N=${1:-400}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
ffmpeg -v error -i "$DATA/sam2-bedroom/bedroom.mp4" -vf scale=1920:1440,fps=60 -frames:v "$N" -pix_fmt nv12 -f rawvideo "$T/x.nv12"
echo "load $(cut -d' ' -f1-3 /proc/loadavg); $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2); $(nproc) cpus"
for mode in ${MODES:-shrink tail}; do
for thr in 1 2; do
  for outs in none alpha alpha+raw; do
    case $outs in none) o=(--no-alpha);; alpha) o=();; alpha+raw) o=(--raw);; esac
    [ "$mode" = shrink ] && o+=(--no-tail)
    rm -rf "$T/o"
    "$CLI" run --model rvm --input "$T/x.nv12" --input-format nv12:1920x1440@60 --realtime --threads $thr "${o[@]}" \
      --out "$T/o" --telemetry "$T/t.jsonl" --quiet
    node - "$T/t.jsonl" "$thr" "$outs" "$N" "$mode" <<'JS'
const [f, thr, outs, n, mode] = process.argv.slice(2);
const all = require('fs').readFileSync(f, 'utf8').trim().split('\n').map(JSON.parse);
let last = 0;
for (let i = 1; i < all.length; i++) if (all[i].ratio !== all[i - 1].ratio) last = i;
const rows = all.slice(last + 2);
const q = (k, p) => { const s = rows.map((r) => r[k]).sort((a, b) => a - b); return s.length ? s[Math.min(s.length - 1, Math.max(0, Math.ceil(p * s.length) - 1))].toFixed(1) : '-'; };
const dur = (rows[rows.length - 1].t_ms - rows[0].t_ms) / 1000;
console.log(`${mode.padEnd(6)} threads ${thr} ${outs.padEnd(9)} ${all.length} of ${n} delivered; settled at ${rows[0] ? rows[0].proc_w + 'x' + rows[0].proc_h : '-'}: ` +
  `${(rows.length / dur).toFixed(1)} fps, infer p50 ${q('infer_ms', .5)} p99 ${q('infer_ms', .99)}, latency p50 ${q('latency_ms', .5)} p99 ${q('latency_ms', .99)} ms, ` +
  `output thread p50 ${q('output_ms', .5)} ms` + (mode === 'tail' ? `, network p50 ${q('net_ms', .5)} ms, coefficients ${q('coef_age', .5)} / ${q('coef_age', .99)} frames old p50/p99` : ''));
JS
  done
done
done
