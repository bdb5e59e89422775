#!/usr/bin/env bash
# Issue 14, done-when 3. (1) The compositor at 1920x1080 on one core (taskset -c 0): blur and colour
# for NV12, I420, BGRA, RGB24 over the bedroom clip's frames and RVM mattes doubled to 1080p;
# median and p90 of this thread's CPU time a frame, and the wall median (test_composite --bench).
# (2) The GStreamer element's overhead over the stream it wraps, on the same clip: the element's
# telemetry gives per frame its whole transform time and the stream's own push time (ingest +
# infer + post); their difference is what the element adds (frame mapping, RGBA swizzle, copy or
# composite, bus messages). Shown for composite=none (the element alone: the input copied to the
# output buffer) and composite=blur, against `headroom run` (same ratio and threads, no outputs) as
# the reference push time. Usage: bench/composite.sh [FRAMES=40] [THREADS=2] [RATIO=0.25]
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${HR_BUILD_DIR:-$here/build}
CLI=${HR_CLI:-$BUILD/headroom}
DATA=${HR_DATA_DIR:-$here/../shared/data}
export HR_MODEL_DIR=${HR_MODEL_DIR:-$here/models} HR_DATA_DIR=$DATA
N=${1:-40}; THR=${2:-2}; R=${3:-0.25}
IN=$DATA/sam2-bedroom/bedroom.mp4
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
echo "load $(cut -d' ' -f1-3 /proc/loadavg); $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2); $(nproc) cpus"
echo "== compositor, 1920x1080, one core"
taskset -c 0 "$BUILD/tests/test_composite" --bench 100
echo "== element overhead: bedroom 960x540, $N frames, ratio $R, $THR threads"
export GST_PLUGIN_PATH=$BUILD/gst GST_REGISTRY=$T/registry.bin
for c in none blur; do
  gst-launch-1.0 -q filesrc location="$IN" ! decodebin ! videoconvert ! video/x-raw,format=I420 ! identity eos-after=$N ! \
    headroom ratio=$R threads=$THR composite=$c telemetry="$T/g_$c.jsonl" ! fakesink sync=false > /dev/null
done
"$CLI" run --model "$HR_MODEL_DIR/rvm.json" --input "$IN" --out "$T/cli" --frames "$N" --ratio "$R" --threads "$THR" --no-alpha --quiet \
  --telemetry "$T/cli.jsonl"
/usr/bin/python3 - "$T" <<'EOF'
import json, sys, statistics as st
T = sys.argv[1]
def rows(f): return [json.loads(l) for l in open(f)][3:]   # after the first frames (plans, caches)
push = lambda r: r["ingest_ms"] + r["infer_ms"] + r["post_ms"]
cli = rows(f"{T}/cli.jsonl")
ref = st.median([push(r) for r in cli])
print(f"headroom run: stream push median {ref:.2f} ms a frame ({len(cli)} frames)")
for c in ("none", "blur"):
    g = rows(f"{T}/g_{c}.jsonl")
    tot = st.median([r["latency_ms"] for r in g]); p = st.median([push(r) for r in g])
    over = st.median([r["latency_ms"] - push(r) for r in g])
    print(f"element composite={c}: transform median {tot:.2f} ms, of which the stream's push {p:.2f} ms; the element adds {over:.2f} ms "
          f"= {100 * over / tot:.1f}% of its frame time; push vs headroom run's {100 * (p / ref - 1):+.1f}%")
EOF
