#!/usr/bin/env bash
# Peak RSS of `headroom run` at 1920x1440 ratio 0.25 on a raw NV12 source (issue 15, done-when 3:
# <= 128 MB, `headroom plan` within 5%), beside the plan's figure and its parts. The source is the
# sam2-bedroom clip scaled to 1920x1440 NV12 (made with ffmpeg in a temporary folder); the run
# processes --frames frames with alpha PNGs written (as plan_rss.sh), then again with --no-alpha.
# Peak RSS is /usr/bin/time's maximum resident set size (the kernel's VmHWM at exit).
#
# usage: bench/rss_1440.sh [--frames N] [--cli2 PATH] [--speed ROUNDS]
#   --frames N      frames per run (default 10)
#   --cli2 PATH     a second headroom CLI (e.g. built from the commit before a change): every figure
#                   is given for both, side by side, in one run
#   --speed ROUNDS  also `headroom bench` (nv12 1920x1440 r0.25, 6 frames) ROUNDS times per CLI,
#                   alternating, and the median of the per-run medians (default 0: off)
# env: HR_CLI (default build/headroom), HR_MODEL_DIR, HR_DATA_DIR as for the tests.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
cli=${HR_CLI:-$src/build/headroom}
model=${HR_MODEL_DIR:-$src/models}/rvm.json
data=${HR_DATA_DIR:-$src/../shared/data}/sam2-bedroom
frames=10 cli2="" speed=0
while [ $# -gt 0 ]; do
  case $1 in
    --frames) frames=$2; shift 2;;
    --cli2) cli2=$2; shift 2;;
    --speed) speed=$2; shift 2;;
    -h|--help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0;;
    *) echo "rss_1440: unknown option $1" >&2; exit 2;;
  esac
done
for c in "$cli" $cli2; do [ -x "$c" ] || { echo "rss_1440: $c is not an executable" >&2; exit 1; }; done
[ -x /usr/bin/time ] || { echo "rss_1440: needs GNU time (/usr/bin/time)" >&2; exit 1; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
ffmpeg -v error -i "$data/bedroom.mp4" -frames:v $((frames + 2)) -vf scale=1920:1440 -pix_fmt nv12 -f rawvideo "$T/v.nv12"
fmt=nv12:1920x1440@30
echo "load $(cut -d' ' -f1-3 /proc/loadavg); $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2); $(nproc) cpus"

peak() { # CLI [run options...] -> peak RSS in bytes
  local c=$1; shift
  rm -rf "$T/out"
  /usr/bin/time -o "$T/time" -f '%M' "$c" run --model "$model" --input "$T/v.nv12" --input-format $fmt --ratio 0.25 \
    --frames "$frames" --out "$T/out" --quiet "$@" > /dev/null
  echo $(( $(tail -1 "$T/time") * 1024 ))
}
for c in "$cli" $cli2; do
  plan=$("$c" plan --model "$model" --ratio 0.25 --input "$T/v.nv12" --input-format $fmt --json)
  key() { printf '%s' "$plan" | grep -o "\"$1\":[0-9.]*" | head -1 | cut -d: -f2; }
  with=$(peak "$c") without=$(peak "$c" --no-alpha)
  awk -v c="$c" -v p="$(key process_total_bytes)" -v m="$with" -v m2="$without" -v base="$(key process_baseline_bytes)" \
      -v lib="$(key total_bytes)" -v w="$(key weight_bytes)" -v sh="$(key kernel_shared_bytes)" -v ar="$(key arena_bytes)" \
      -v st="$(key state_bytes)" -v own="$(key kernel_bytes)" -v src="$(key source_bytes)" -v al="$(key alpha_png_bytes)" \
      -v loop="$(key run_loop_bytes)" 'BEGIN {
    printf "%s\n  peak RSS %.1f MB with alpha PNGs (%.1f MB with --no-alpha); plan %.1f MB, plan/measured %.3f%s\n", c, m / 1e6, m2 / 1e6,
           p / 1e6, p / m, (m <= 128e6 ? "; <= 128 MB" : "; over 128 MB")
    printf "  plan: binary and libraries %.1f + library %.1f (weights %.1f, shared kernels %.1f, arena %.1f, state %.1f, own kernels %.1f)" \
           " + source %.1f + alpha PNGs %.1f + run loop %.1f MB\n", base / 1e6, lib / 1e6, w / 1e6, sh / 1e6, ar / 1e6, st / 1e6, own / 1e6,
           src / 1e6, al / 1e6, loop / 1e6 }'
done
if [ "$speed" -gt 0 ]; then
  declare -A ms
  for r in $(seq "$speed"); do
    for c in "$cli" $cli2; do
      ms[$c]="${ms[$c]:-} $("$c" bench --model "$model" --size 1920x1440 --ratio 0.25 --format nv12 --frames 6 --warmup 1 2>&1 |
                          grep -o 'median [0-9.]*' | cut -d' ' -f2)"
    done
  done
  for c in "$cli" $cli2; do
    echo "$c: bench ms/frame${ms[$c]} -> median $(echo ${ms[$c]} | tr ' ' '\n' | sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}')"
  done
fi
echo "load $(cut -d' ' -f1-3 /proc/loadavg) at the end"
