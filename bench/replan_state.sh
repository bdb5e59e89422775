#!/usr/bin/env bash
# What a replan does to the matte: the recurrent state carried over, resampled (the default since
# 2026-12-02), against zeroed (hr_session_params.replan_resets_state, what every replan did before).
# Each clip scaled to 1920x1440 NV12 (one frame per source frame, no retiming), then
# build/replan_state (bench/replan_state.c) replans from ratio A to B at three points and back, and
# compares every matte after it with the reference run at A: the share of pixels off by > 0.1.
#
# Usage: bench/replan_state.sh [CLIP ...]   CLIP: bedroom (tuning data of earlier work) |
#   vtest-held (vtest frames 400+, held out) | desk (realsense-d435-desk colour, held out).
#   Default: all three. Env: A (default 0.25), B (default 0.2), THREADS (default 2).
#
# Measured 2026-12-02 (2-vCPU AMD EPYC, AVX-512; 20 frames after each of 3 replans), pixels off by
# > 0.1 against the reference at 0.25, frames 1-5 / 6-20 after the replan:
#   bedroom    down 0.25 -> 0.2:   carried 1.11% / 1.38%   zeroed 1.33% / 1.44%   (no replan, at 0.2: 1.20% / 1.38%)
#              up   0.2 -> 0.25:   carried 0.24% / 0.07%   zeroed 0.67% / 0.31%
#   vtest-held down 0.25 -> 0.2:   carried 0.93% / 0.85%   zeroed 1.07% / 0.86%   (0.89% / 0.82%)
#              up   0.2 -> 0.25:   carried 0.29% / 0.13%   zeroed 0.85% / 0.49%
#   desk       down 0.25 -> 0.2:   carried 0.06% / 0.01%   zeroed 0.13% / 0.02%   (0.08% / 0.01%)
#              up   0.2 -> 0.25:   carried 0.02% / 0.00%   zeroed 0.13% / 0.01%
# A large step is where carrying helps least: bedroom 0.128 -> 0.25 carried 0.81% / 0.23%,
# zeroed 0.67% / 0.31% (the first frames worse, then better); 0.25 -> 0.128 carried 2.04% / 2.45%,
# zeroed 2.18% / 2.52%. The live loop's ladder moves one rung (about x0.8) at a time.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
BIN=${HR_BUILD_DIR:-$here/build}/replan_state
MODEL=${HR_MODEL_DIR:-$here/models}/rvm.json
DATA=${HR_DATA_DIR:-$here/../shared/data}
VTEST=${VTEST:-/usr/share/doc/opencv-doc/examples/data/vtest.avi}
CLIPS=("$@")
[ ${#CLIPS[@]} -gt 0 ] || CLIPS=(bedroom vtest-held desk)
[ -x "$BIN" ] || { echo "replan_state.sh: $BIN not built" >&2; exit 1; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
echo "load $(cut -d' ' -f1-3 /proc/loadavg); $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2); $(nproc) cpus" >&2
for clip in "${CLIPS[@]}"; do
  case $clip in
    bedroom) in=(-i "$DATA/sam2-bedroom/bedroom.mp4"); sel=; n=200; at=40,100,160;;
    vtest-held) in=(-i "$VTEST"); sel="select=gte(n\,400),"; n=200; at=40,100,160;;
    desk) in=(-framerate 30 -pattern_type glob -i "$DATA/realsense-d435-desk/rgb/*.png"); sel=; n=100; at=20,45,70;;
    *) echo "unknown clip $clip" >&2; exit 2;;
  esac
  ffmpeg -v error -y "${in[@]}" -vf "${sel}scale=1920:1440" -fps_mode passthrough -frames:v "$n" -pix_fmt nv12 -f rawvideo "$T/x.nv12"
  "$BIN" "$MODEL" "$T/x.nv12" 1920x1440 --a "${A:-0.25}" --b "${B:-0.2}" --at "$at" --after 20 --threads "${THREADS:-2}" --label "$clip"
  rm -f "$T/x.nv12"
done
