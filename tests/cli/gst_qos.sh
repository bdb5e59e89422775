#!/usr/bin/env bash
# The `headroom` element under a slow sink (QoS) and in the latency query, through PyGObject:
#   live videotestsrc 320x180 I420 at 30 fps (60 frames) ! headroom budget-ms=40 !
#   identity sleep-time=80000 (80 ms a buffer: slower than the source) ! fakesink sync=true
# (1) the sink's QoS events reach the element and it drops late buffers before the model runs:
#     the element posts GStreamer QoS messages with dropped > 0 and runs the model on fewer frames
#     than it was given (its telemetry lines); the same pipeline with the element's qos=false
#     runs the model on every frame (the drops are the element's own);
# (2) the latency query answered on the element's src pad: its min is upstream's min + budget-ms
#     (40 ms), i.e. non-zero and the element's own share exactly; the pipeline's whole min
#     latency (the bin's query) includes it.
set -euo pipefail
BUILD=${HR_BUILD_DIR:-build}
export HR_MODEL_DIR=${HR_MODEL_DIR:-models}
PY=/usr/bin/python3
$PY -c 'import gi; gi.require_version("Gst", "1.0")' 2> /dev/null || { echo "SKIP: no python3-gi"; exit 77; }
[ -f "$BUILD/gst/libgstheadroom.so" ] || { echo "FAIL: no $BUILD/gst/libgstheadroom.so"; exit 1; }
[ -f "$HR_MODEL_DIR/rvm.json" ] || { echo "FAIL: no model $HR_MODEL_DIR/rvm.json"; exit 1; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
export GST_PLUGIN_PATH=$BUILD/gst GST_REGISTRY=$T/registry.bin
PRE=()
if grep -q "HR_SANITIZE:BOOL=ON" "$BUILD/CMakeCache.txt" 2> /dev/null; then   # an instrumented plugin in python
  PRE=(env "LD_PRELOAD=$(gcc -print-file-name=libasan.so):$(gcc -print-file-name=libubsan.so)" ASAN_OPTIONS=detect_leaks=0 GST_REGISTRY_FORK=no)
fi
"${PRE[@]}" $PY - "$T" <<'EOF'
import sys, gi
gi.require_version("Gst", "1.0")
from gi.repository import Gst
T = sys.argv[1]
Gst.init(None)
N = 60
def run(qos):
    tel = f"{T}/tel_{int(qos)}.jsonl"
    p = Gst.parse_launch(
        f"videotestsrc is-live=true num-buffers={N} pattern=ball ! video/x-raw,format=I420,width=320,height=180,framerate=30/1 ! "
        f"capsfilter name=up ! headroom name=h ratio=0.5 threads=2 budget-ms=40 qos={'true' if qos else 'false'} telemetry={tel} ! "
        "identity sleep-time=80000 ! fakesink name=sink sync=true qos=true")
    h, up = p.get_by_name("h"), p.get_by_name("up")
    bus = p.get_bus()
    p.set_state(Gst.State.PLAYING)
    dropped, lat = 0, None
    while True:
        m = bus.timed_pop_filtered(60 * Gst.SECOND, Gst.MessageType.EOS | Gst.MessageType.ERROR | Gst.MessageType.QOS)
        if m is None:
            print("FAIL: no end of stream in 60 s"); sys.exit(1)
        if m.type == Gst.MessageType.ERROR:
            print("FAIL: error:", m.parse_error()[0].message); sys.exit(1)
        if m.type == Gst.MessageType.QOS and m.src == h:
            fmt, processed, d = m.parse_qos_stats()
            dropped = max(dropped, d)
        if lat is None and h.get_state(0)[1] == Gst.State.PLAYING:
            q, qu, qp = Gst.Query.new_latency(), Gst.Query.new_latency(), Gst.Query.new_latency()
            if h.get_static_pad("src").query(q) and up.get_static_pad("src").query(qu) and p.query(qp):
                lat = (q.parse_latency(), qu.parse_latency(), qp.parse_latency())
        if m.type == Gst.MessageType.EOS:
            break
    p.set_state(Gst.State.NULL)
    ran = sum(1 for _ in open(tel))
    return ran, dropped, lat
bad = 0
ran, dropped, lat = run(True)
print(f"qos=true:  {N} buffers in, the model ran on {ran}; the element's QoS messages: {dropped} dropped")
if not (dropped > 0 and ran < N and ran + dropped <= N): print("FAIL: the element dropped no late buffers"); bad += 1
if lat is None:
    print("FAIL: no answer to the latency query"); bad += 1
else:
    (live, mn, mx), (ulive, umn, umx), (plive, pmn, pmx) = lat
    print(f"latency: the element's src pad: live {live}, min {mn / 1e6:.1f} ms (upstream's {umn / 1e6:.1f} ms + {(mn - umn) / 1e6:.1f} ms); "
          f"the pipeline's min {pmn / 1e6:.1f} ms")
    if not (live and mn > 0 and mn - umn == 40 * Gst.MSECOND and pmn >= mn): print("FAIL: latency"); bad += 1
ran0, dropped0, _ = run(False)
print(f"qos=false: {N} buffers in, the model ran on {ran0}; the element's QoS messages: {dropped0} dropped")
if not (ran0 == N and dropped0 == 0): print("FAIL: without qos the element should run every frame"); bad += 1
sys.exit(1 if bad else 0)
EOF
echo "gst_qos: ok"
