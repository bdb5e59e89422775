#!/usr/bin/env bash
# Scene-cut reset (--scene-cut, hr_session_params.scene_cut_reset): 10 sam2-bedroom frames then 10
# vtest.avi frames, resized alike into one folder, report exactly one cut, at frame 10; after it
# the alpha is bit-identical to the second clip run alone (the state really was reset); whole clips
# with fast motion (sam2: 200 frames, vtest: its first 200) report none; without the option, no
# events at all.
set -euo pipefail
CLI=${HR_CLI:-build/headroom}
MODEL=${HR_MODEL_DIR:-models}/rvm.json
FRAMES=${HR_DATA_DIR:-../shared/data}/sam2-bedroom/frames
VTEST=/usr/share/doc/opencv-doc/examples/data/vtest.avi
[ -x "$CLI" ] || { echo "SKIP: no CLI at $CLI"; exit 77; }
[ -f "$MODEL" ] || { echo "SKIP: no model $MODEL"; exit 77; }
[ -d "$FRAMES" ] || { echo "SKIP: no frames $FRAMES"; exit 77; }
[ -f "$VTEST" ] || { echo "SKIP: no $VTEST (apt-get install opencv-doc)"; exit 77; }
command -v ffmpeg >/dev/null || { echo "SKIP: no ffmpeg"; exit 77; }

T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
mkdir -p "$T/cat" "$T/second"
ffmpeg -loglevel error -start_number 0 -i "$FRAMES/%05d.jpg" -frames:v 10 -vf scale=256:144 -start_number 0 "$T/cat/%03d.png"
ffmpeg -loglevel error -i "$VTEST" -frames:v 10 -vf scale=256:144 -start_number 10 "$T/cat/%03d.png"
cp "$T"/cat/01?.png "$T/second/"
[ "$(ls "$T/cat" | wc -l)" -eq 20 ] || { echo "FAIL: ffmpeg made $(ls "$T/cat" | wc -l) of 20 frames"; exit 1; }

run() { "$CLI" run --model "$MODEL" --ratio 1 --threads 1 "$@"; }
fail=0
run --input "$T/cat" --out "$T/o_cut" --size 256x144 --raw --scene-cut 2>"$T/cut.log"
events=$(grep -E '^headroom run: frame [0-9]+:' "$T/cut.log" || true)
echo "events with --scene-cut:"; echo "${events:-  (none)}"
if [ "$events" != "headroom run: frame 10: state reset (scene cut)" ]; then
  echo "FAIL: expected exactly one cut, at frame 10"; fail=1
fi
run --input "$T/second" --out "$T/o_second" --size 256x144 --raw --quiet
same=0
for i in $(seq 0 9); do
  cmp -s "$T/o_cut/raw/$(printf %06d $((i + 10))).pha.f32" "$T/o_second/raw/$(printf %06d "$i").pha.f32" && same=$((same + 1))
done
echo "after the cut: $same/10 frames bit-identical to the second clip alone"
[ "$same" -eq 10 ] || { echo "FAIL: the state was not reset at the cut"; fail=1; }
run --input "$T/cat" --out "$T/o_plain" --size 256x144 2>"$T/plain.log"
if grep -qE '^headroom run: frame [0-9]+:' "$T/plain.log"; then echo "FAIL: events without --scene-cut"; fail=1; fi
# No false cuts over whole clips (children jumping on a bed; people walking). Small size: the
# detector looks at a 32x18 thumbnail of the model input.
for clip in "$FRAMES" "$VTEST"; do
  run --input "$clip" --out "$T/o_fp" --size 128x72 --frames 200 --scene-cut 2>"$T/fp.log"
  n=$(grep -c 'scene cut' "$T/fp.log" || true)
  echo "$(basename "$clip"), 200 frames: $n cut(s)"
  [ "$n" -eq 0 ] || { grep 'scene cut' "$T/fp.log"; echo "FAIL: false cuts"; fail=1; }
done
exit $fail
