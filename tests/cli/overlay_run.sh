#!/usr/bin/env bash
# `headroom run --overlay FILE.mp4` end to end: a video input (sam2 bedroom, yuv420p decoded in
# place) and a TUM folder (RealSense desk, RGB24, with --depth and --occlude-at) each give an
# mp4 that ffprobe decodes to exactly the processed frame count, at the input's size, with no
# .tmp left behind; a folder that does not exist is refused before any frame is processed.
set -euo pipefail
CLI=${HR_CLI:-build/headroom}
MODEL=${HR_MODEL_DIR:-models}/rvm.json
DATA=${HR_DATA_DIR:-../shared/data}
[ -x "$CLI" ] || { echo "SKIP: no CLI at $CLI"; exit 77; }
[ -f "$MODEL" ] || { echo "SKIP: no model $MODEL"; exit 77; }
[ -f "$DATA/sam2-bedroom/bedroom.mp4" ] || { echo "SKIP: no $DATA/sam2-bedroom/bedroom.mp4"; exit 77; }
command -v ffprobe > /dev/null || { echo "SKIP: no ffprobe"; exit 77; }
HELP=$("$CLI" run --help 2>&1 || true)
grep -q -- "--overlay" <<<"$HELP" || { echo "FAIL: headroom run --help lists no --overlay (the option this test runs)"; exit 1; }

T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
probe() { ffprobe -v error -count_frames -select_streams v:0 \
  -show_entries stream=codec_name,width,height,pix_fmt,nb_read_frames -of csv=p=0 "$1"; }

fail=0
"$CLI" run --model "$MODEL" --input "$DATA/sam2-bedroom/bedroom.mp4" --out "$T/a" --size 256x144 --frames 24 \
  --threads 2 --quiet --overlay "$T/a.mp4" 2> "$T/err_a.txt" || { echo "FAIL: run exited with $?"; cat "$T/err_a.txt"; exit 1; }
got=$(probe "$T/a.mp4" || true)
case "$got" in
  h264,960,540,yuv420p,24|mpeg4,960,540,yuv420p,24) ;;
  *) echo "FAIL: bedroom overlay probes as '$got', want h264|mpeg4,960,540,yuv420p,24"; fail=1 ;;
esac

if [ -f "$DATA/realsense-d435-desk/depth.txt" ]; then
  "$CLI" run --model "$MODEL" --input "$DATA/realsense-d435-desk" --out "$T/b" --size 320x240 --frames 30 \
    --threads 2 --quiet --depth "$DATA/realsense-d435-desk" --occlude-at 0.8 --overlay "$T/b.mp4" 2> "$T/err_b.txt" ||
    { echo "FAIL: run with --depth exited with $?"; cat "$T/err_b.txt"; exit 1; }
  got_b=$(probe "$T/b.mp4" || true)
  case "$got_b" in
    h264,640,480,yuv420p,30|mpeg4,640,480,yuv420p,30) ;;
    *) echo "FAIL: desk overlay probes as '$got_b', want h264|mpeg4,640,480,yuv420p,30"; fail=1 ;;
  esac
fi
ls "$T" | grep -q '\.tmp$' && { echo "FAIL: .tmp left next to the overlay"; fail=1; }

if "$CLI" run --model "$MODEL" --input "$DATA/sam2-bedroom/bedroom.mp4" --out "$T/c" --frames 2 --size 256x144 \
  --overlay "$T/no/such/dir/c.mp4" 2> "$T/err_c.txt"; then
  echo "FAIL: an overlay in a missing folder was accepted"; fail=1
elif ! grep -q "overlay" "$T/err_c.txt"; then
  echo "FAIL: the refusal does not name the overlay:"; cat "$T/err_c.txt"; fail=1
fi
[ "$fail" -eq 0 ] && echo "overlay_run: bedroom -> $got; desk with depth -> ${got_b:-skipped}"
exit $fail
