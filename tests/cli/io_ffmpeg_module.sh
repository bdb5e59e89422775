#!/usr/bin/env bash
# FFmpeg only when a video is read or written (issue 15): the CLI links none of FFmpeg's libraries;
# `headroom run` on raw NV12 with alpha PNGs (and a telemetry file) never loads them nor the module
# (the dynamic loader's own log, LD_DEBUG=files, lists every object it maps, dlopen included); a
# video input with an overlay video and a composite video loads the module (headroom-io-ffmpeg.so)
# and writes its PNGs and both videos; with the module missing (HR_IO_FFMPEG_MODULE names a path
# that does not exist) the video run fails naming that path, and the raw run still works.
set -euo pipefail
CLI=${HR_CLI:-build/headroom}
MODEL=${HR_MODEL_DIR:-models}/rvm.json
CLIP=${HR_SRC_DIR:-.}/tests/data/io/rgb24_64x48.mkv
[ -x "$CLI" ] || { echo "SKIP: no CLI at $CLI"; exit 77; }
[ -f "$MODEL" ] || { echo "SKIP: no model $MODEL"; exit 77; }
[ -f "$CLIP" ] || { echo "SKIP: no $CLIP"; exit 77; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0
ff='libavcodec|libavformat|libswscale|libavutil|headroom-io-ffmpeg'

if ldd "$CLI" | grep -E "$ff"; then echo "FAIL: $CLI links FFmpeg"; fail=1; fi

# Raw NV12, 96x64, 3 frames; alpha PNGs and telemetry.
head -c $((96 * 64 * 3 / 2 * 3)) /dev/urandom > "$T/v.nv12"
LD_DEBUG=files LD_DEBUG_OUTPUT="$T/ld.raw" "$CLI" run --model "$MODEL" --input "$T/v.nv12" --input-format nv12:96x64@30 \
  --out "$T/raw" --telemetry "$T/raw.jsonl" --quiet
n=$(ls "$T/raw/alpha" | wc -l)
[ "$n" = 3 ] || { echo "FAIL: raw run wrote $n alpha PNGs, not 3"; fail=1; }
grep -q 'file=' "$T"/ld.raw.* || { echo "FAIL: LD_DEBUG=files logged nothing (the check would prove nothing)"; fail=1; }
if grep -hE "file=[^ ]*($ff)" "$T"/ld.raw.*; then echo "FAIL: the raw NV12 run loaded FFmpeg"; fail=1; fi
echo "raw NV12 -> alpha PNGs: $n PNGs, $(grep -h 'file=' "$T"/ld.raw.* | grep -c 'needed by\|dlopen') objects loaded, none of FFmpeg"

# A video (a committed 64x48 RGB24 Matroska clip, scaled up to the model's 96x64) with an overlay
# video, and the same clip through the composite sink into an FFV1 .mkv.
LD_DEBUG=files LD_DEBUG_OUTPUT="$T/ld.vid" "$CLI" run --model "$MODEL" --input "$CLIP" --size 96x64 --frames 3 \
  --out "$T/vid" --overlay "$T/ov.mp4" --quiet
n=$(ls "$T/vid/alpha" | wc -l)
[ "$n" = 3 ] || { echo "FAIL: video run wrote $n alpha PNGs, not 3"; fail=1; }
[ -s "$T/ov.mp4" ] || { echo "FAIL: no overlay video"; fail=1; }
mod=$(grep -hoE 'file=[^ ]*headroom-io-ffmpeg\.so' "$T"/ld.vid.* | head -1 || true)
[ -n "$mod" ] || { echo "FAIL: the video run did not load the module"; fail=1; }
grep -qhE 'file=[^ ]*libavcodec' "$T"/ld.vid.* || { echo "FAIL: the video run did not load libavcodec"; fail=1; }
"$CLI" run --model "$MODEL" --input "$CLIP" --frames 3 --out "$T/comp" --no-alpha --composite blur --out-video "$T/comp.mkv" \
  --quiet 2> "$T/comp.err" || { echo "FAIL: composite run:"; cat "$T/comp.err"; fail=1; }
[ -s "$T/comp.mkv" ] || { echo "FAIL: no composite video"; fail=1; }
if command -v ffprobe > /dev/null; then
  for v in ov.mp4 comp.mkv; do
    c=$(ffprobe -v error -count_frames -select_streams v:0 -show_entries stream=nb_read_frames -of csv=p=0 "$T/$v")
    [ "$c" = 3 ] || { echo "FAIL: $v has $c frames, not 3"; fail=1; }
  done
fi
echo "video -> alpha PNGs, overlay mp4, composite mkv: $n PNGs, module ${mod#file=}"

# The module missing: the video fails naming the path; raw input does not need it.
if HR_IO_FFMPEG_MODULE=$T/none/headroom-io-ffmpeg.so "$CLI" run --model "$MODEL" --input "$CLIP" --frames 1 --out "$T/x" \
     --quiet 2> "$T/missing.err"; then
  echo "FAIL: a video run without the module succeeded"; fail=1
fi
grep -q "cannot open the FFmpeg module $T/none/headroom-io-ffmpeg.so" "$T/missing.err" \
  || { echo "FAIL: the error does not name the module:"; cat "$T/missing.err"; fail=1; }
echo "module missing: $(head -1 "$T/missing.err")"
HR_IO_FFMPEG_MODULE=$T/none/headroom-io-ffmpeg.so "$CLI" run --model "$MODEL" --input "$T/v.nv12" --input-format nv12:96x64@30 \
  --out "$T/raw2" --quiet || { echo "FAIL: the raw run needs the module"; fail=1; }

[ $fail = 0 ] && echo "PASS: FFmpeg is loaded only for video, through the module"
exit $fail
