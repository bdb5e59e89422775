#!/usr/bin/env bash
# tfjs_compare.sh: headroom (XNNPACK) against TensorFlow.js (wasm backend, SIMD) on the same model,
# machine, input and run: rvm at 1920x1440 ratio 0.25 by default. Reports median ms of each, the
# speed ratio, peak RSS of each, headroom's GFLOP/s per op class; then the peak RSS of
# `headroom run` on 20 real frames (JPEG frames resized to 1920x1440, and raw 1920x1440 NV12 made
# with ffmpeg) against `headroom plan`'s total. Prints a table on stderr and one JSON line last.
#
# usage: bench/tfjs_compare.sh [--frames N] [--threads "2 1"] [--size WxH] [--ratio R]
#                              [--rss-frames N] [--hr-frames N] [--no-rss] [--keep DIR]
#   --frames N      frames timed by TF.js (default 5; it takes ~2.3 s a frame here)
#   --hr-frames N   frames timed by headroom bench (default 40, at least 2 N: its medians, the
#                   frame's and each op's, over 10 frames moved the non-convolution share by
#                   3-4 points from run to run on the 2-vCPU VM)
#   --threads LIST  thread counts to compare at (default: all CPUs, then 1)
#   --no-avx512     headroom as on an AVX2-only CPU (an estimate on an AVX-512 host: XNNPACK's
#                   AVX2 kernels through bench/noavx512_preload.c, built here, and HR_NO_AVX512=1;
#                   see that file for what it does not emulate); TF.js (wasm SIMD) is unchanged
# env: HR_CLI (default build/headroom), HR_MODEL_DIR, HR_DATA_DIR, HR_REF_DIR as for the tests.
#
# Input: `headroom bench` times a synthetic image; TF.js gets that same image, written as raw
# float32 by bench/tfjs_util.js (compute cost does not depend on the pixels). Load from other
# processes skews both: the load average at start and end is part of the output.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
cli=${HR_CLI:-$src/build/headroom}
models=${HR_MODEL_DIR:-$src/models}
data=${HR_DATA_DIR:-$src/../shared/data}
refdir=${HR_REF_DIR:-$src/ref}
size=1920x1440 ratio=0.25 frames=5 rss_frames=20 do_rss=1 keep="" hr_frames="" noavx512=0
threads="$(nproc) 1"
while [ $# -gt 0 ]; do
  case $1 in
    --frames) frames=$2; shift 2;;
    --threads) threads=$2; shift 2;;
    --size) size=$2; shift 2;;
    --ratio) ratio=$2; shift 2;;
    --rss-frames) rss_frames=$2; shift 2;;
    --hr-frames) hr_frames=$2; shift 2;;
    --no-rss) do_rss=0; shift;;
    --no-avx512) noavx512=1; shift;;
    --keep) keep=$2; shift 2;;
    -h|--help) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0;;
    *) echo "tfjs_compare: unknown option $1" >&2; exit 2;;
  esac
done
threads=$(echo "$threads" | tr ' ' '\n' | awk 'NF && !seen[$0]++' | tr '\n' ' ')
W=${size%x*} H=${size#*x}
[ -x "$cli" ] || { echo "tfjs_compare: $cli not built" >&2; exit 1; }
command -v node >/dev/null || { echo "tfjs_compare: node is needed" >&2; exit 1; }
[ -d "$refdir/node_modules/@tensorflow/tfjs-backend-wasm" ] || { echo "tfjs_compare: $refdir/node_modules missing (cd ref && npm ci)" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "tfjs_compare: /usr/bin/time is needed (GNU time) for peak RSS" >&2; exit 1; }

if [ -n "$keep" ]; then tmp=$keep; mkdir -p "$tmp"; else tmp=$(mktemp -d "${TMPDIR:-/tmp}/hr_tfjs.XXXXXX"); trap 'rm -rf "$tmp"' EXIT; fi
timed() { # OUTFILE TIMEFILE CMD...  (peak RSS in KiB and wall seconds of CMD go to TIMEFILE)
  local out=$1 tf=$2; shift 2
  /usr/bin/time -o "$tf" -f '%M %e' "$@" > "$out"
}
loadavg() { cut -d' ' -f1-3 /proc/loadavg; }
hr_env=()   # what the headroom runs get (--no-avx512: the preload and the switch)
if [ "$noavx512" = 1 ]; then
  [ -f /usr/include/cpuinfo.h ] || { echo "tfjs_compare: --no-avx512 needs cpuinfo.h (apt-get install libcpuinfo-dev)" >&2; exit 1; }
  cc -O2 -shared -fPIC -o "$tmp/noavx512.so" "$src/bench/noavx512_preload.c" -ldl -lcpuinfo
  hr_env=(env LD_PRELOAD="$tmp/noavx512.so" HR_NO_AVX512=1)
  echo "tfjs_compare: headroom as on an AVX2-only CPU (XNNPACK's AVX2 kernels, HR_NO_AVX512=1)" >&2
fi
cpu=$(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //' || echo unknown)
la0=$(loadavg)
node -e 'const [w,h,r,f,c,cpu,la,t,na]=process.argv.slice(1); console.log(JSON.stringify({width:+w,height:+h,ratio:+r,frames:+f,
  cpus:+c,cpu,loadavg_start:la.split(" ").map(Number),threads:t.trim().split(/\s+/).map(Number),no_avx512:+na}))' \
  "$W" "$H" "$ratio" "$frames" "$(nproc)" "$cpu" "$la0" "$threads" "$noavx512" > "$tmp/config.json"
[ -n "$hr_frames" ] || hr_frames=$((frames * 2 > 40 ? frames * 2 : 40))
echo "tfjs_compare: rvm ${size} ratio ${ratio}, $frames frames (headroom $hr_frames), threads: $threads; load average $la0" >&2

node "$src/bench/tfjs_util.js" synth "$W" "$H" "$frames" "$tmp/synth"
"$cli" plan --model "$models/rvm.json" --size "$size" --ratio "$ratio" --json > "$tmp/plan.json"

for t in $threads; do
  echo "tfjs_compare: headroom bench, $t thread(s) ..." >&2
  timed "$tmp/hr_bench_t$t.json" "$tmp/hr_bench_t$t.time" \
    "${hr_env[@]}" "$cli" bench --model "$models/rvm.json" --size "$size" --ratio "$ratio" --frames "$hr_frames" --threads "$t" --json
  echo "tfjs_compare: TF.js wasm, $t thread(s) ..." >&2
  timed "$tmp/tf_t$t.json" "$tmp/tf_t$t.time" \
    node "$refdir/run_ref.js" --model "$models/rvm.json" --inputs "$tmp/synth" --out "$tmp/tf_out" --ratio "$ratio" \
    --frames "$frames" --threads "$t" --no-write --quiet
done

if [ "$do_rss" = 1 ]; then
  frames_dir=$data/sam2-bedroom/frames video=$data/sam2-bedroom/bedroom.mp4
  timed /dev/null "$tmp/rss_info.time" "$cli" info --model "$models/rvm.json"
  if [ -d "$frames_dir" ]; then
    echo "tfjs_compare: headroom run, $rss_frames JPEG frames resized to $size ..." >&2
    timed /dev/null "$tmp/rss_jpeg.time" "$cli" run --model "$models/rvm.json" --input "$frames_dir" --out "$tmp/run_jpeg" \
      --size "$size" --ratio "$ratio" --frames "$rss_frames" --quiet
    # what `plan` predicts for that same run (process_total_bytes: binary, library, source, PNGs, loop)
    "$cli" plan --model "$models/rvm.json" --input "$frames_dir" --size "$size" --ratio "$ratio" --json > "$tmp/plan_jpeg.json"
  fi
  if [ -f "$video" ] && command -v ffmpeg >/dev/null; then
    echo "tfjs_compare: headroom run, $rss_frames raw NV12 frames at $size ..." >&2
    ffmpeg -loglevel error -y -i "$video" -vf "scale=$W:$H" -frames:v "$rss_frames" -pix_fmt nv12 -f rawvideo "$tmp/in.nv12"
    timed /dev/null "$tmp/rss_nv12.time" "$cli" run --model "$models/rvm.json" --input "$tmp/in.nv12" \
      --input-format "nv12:${W}x${H}@30" --out "$tmp/run_nv12" --ratio "$ratio" --quiet
    "$cli" plan --model "$models/rvm.json" --input "$tmp/in.nv12" --input-format "nv12:${W}x${H}@30" --ratio "$ratio" --json \
      > "$tmp/plan_nv12.json"
    rm -f "$tmp/in.nv12"
  fi
fi
loadavg > "$tmp/loadavg_end.txt"
node "$src/bench/tfjs_util.js" summary "$tmp"
