#!/usr/bin/env bash
# Zero whole-frame copies per frame (issue 4): `headroom run --telemetry` at 1920x1440 ratio 0.25 on
# three frames of sam2-bedroom's bedroom.mp4, upscaled by ffmpeg and given as (a) raw NV12 (video
# range, nv12v, as ffmpeg makes it from yuv420p), (b) raw BGRA, (c) an MPEG-4 mp4 (yuv420p, decoded
# in place as I420) and (d) an MJPEG avi (yuvj420p, in place as full-range I420): bytes_copied must
# be 0 on every frame (the model's first op resamples the caller's planes straight to 480x360 and
# the refiner reads full-resolution rows; no float copy of the frame exists).
# At ratio 1 the model's first op reads a materialised float input: one conversion of W*H*12 bytes
# a frame, asserted exactly (512x288 NV12, the same frames), so a change either way is noticed.
# The raw file is read into the source's pool (I/O, not a library copy); video frames point into the
# decoder's AVFrame, which the run's description line says ("in place").
# This test reads the library's own counter; tests/unit/test_ingest_nocopy.c checks the same path
# (1920x1440 NV12, ratio 0.25) from outside: read-only frame pages, interposed memcpy/memmove, a
# counting allocator and a scan of the process's memory for copies of the frame.
set -euo pipefail
CLI=${HR_CLI:-build/headroom}
MODEL=${HR_MODEL_DIR:-models}/rvm.json
VIDEO=${HR_DATA_DIR:-../shared/data}/sam2-bedroom/bedroom.mp4
[ -x "$CLI" ] || { echo "SKIP: no CLI at $CLI"; exit 77; }
[ -f "$MODEL" ] || { echo "SKIP: no model $MODEL"; exit 77; }
[ -f "$VIDEO" ] || { echo "SKIP: no $VIDEO"; exit 77; }
command -v ffmpeg >/dev/null || { echo "SKIP: no ffmpeg"; exit 77; }

N=3
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
ff() { ffmpeg -loglevel error -nostdin -y -i "$VIDEO" -frames:v $N "$@"; }
ff -vf scale=1920:1440 -pix_fmt nv12 -f rawvideo "$T/f.nv12"
ff -vf scale=1920:1440 -pix_fmt bgra -f rawvideo "$T/f.bgra"
ff -vf scale=1920:1440 -pix_fmt yuv420p -c:v mpeg4 -q:v 3 "$T/f.mp4"
ff -vf scale=1920:1440 -c:v mjpeg -q:v 3 "$T/f.avi"
ff -vf scale=512:288 -pix_fmt nv12 -f rawvideo "$T/s.nv12"

fail=0
# check NAME EXPECTED_BYTES_COPIED LOG TELEMETRY: N frames, every one with bytes_copied == EXPECTED
check() {
  local name=$1 want=$2 log=$3 tel=$4
  local n vals
  n=$(wc -l <"$tel")
  vals=$(grep -o '"bytes_copied":[0-9-]*' "$tel" | cut -d: -f2 | sort -u | tr '\n' ' ')
  printf '%-28s frames %d  bytes_copied per frame: %s(want %s)  %s\n' "$name" "$n" "$vals" "$want" \
    "$(grep -o 'headroom run: [a-z]* [^>]*' "$log" | head -1 | sed 's/^headroom run: //; s/ -$//')"
  [ "$n" -eq $N ] || { echo "FAIL: $name: $n telemetry lines, want $N"; fail=1; }
  if grep '"bytes_copied"' "$tel" | grep -vq "\"bytes_copied\":$want[,}]"; then
    echo "FAIL: $name: a frame with bytes_copied != $want"; fail=1
  fi
}
run() { # NAME WANT INPUT SIZE RATIO [options]
  local name=$1 want=$2 in=$3 size=$4 ratio=$5; shift 5
  "$CLI" run --model "$MODEL" --input "$in" --out "$T/o_$name" --size "$size" --ratio "$ratio" --no-alpha \
    --telemetry "$T/$name.jsonl" "$@" 2>"$T/$name.log" || { cat "$T/$name.log"; echo "FAIL: $name: run failed"; fail=1; return; }
  check "$name" "$want" "$T/$name.log" "$T/$name.jsonl"
}
run nv12_1920x1440_r0.25 0 "$T/f.nv12" 1920x1440 0.25 --input-format nv12v:1920x1440@30
run bgra_1920x1440_r0.25 0 "$T/f.bgra" 1920x1440 0.25 --input-format bgra:1920x1440@30
run mp4_1920x1440_r0.25 0 "$T/f.mp4" 1920x1440 0.25
run avi_mjpeg_1920x1440_r0.25 0 "$T/f.avi" 1920x1440 0.25
for v in mp4 avi_mjpeg; do
  grep -q 'in place' "$T/${v}_1920x1440_r0.25.log" || { echo "FAIL: $v frames not decoded in place"; fail=1; }
done
run nv12_512x288_r1 $((512 * 288 * 12)) "$T/s.nv12" 512x288 1 --input-format nv12v:512x288@30
exit $fail
