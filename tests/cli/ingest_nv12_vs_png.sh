#!/usr/bin/env bash
# Alpha from NV12 input equals alpha from the same frames as RGB PNGs (issue 4), through `headroom
# run --raw` (DIR/raw/NNNNNN.pha.f32), at 512x288 ratio 1 (4 frames) and 1920x1440 ratio 0.25
# (3 frames) of sam2-bedroom's bedroom.mp4.
#
# What is compared, and why:
#  (1) ingest: NV12 (video range, as ffmpeg makes it from the yuv420p clip) -> alpha, against the
#      same NV12 converted back to RGB PNGs by ffmpeg -> alpha. ffmpeg is told to convert the way
#      headroom defines NV12 (BT.601, video range, each chroma sample over its 2x2 block:
#      scale=flags=neighbor+full_chroma_int+accurate_rnd); the model inputs then differ only by the
#      PNG's 8-bit rounding, which the test checks first (model input from --dump-input at ratio 1:
#      max |d| <= 0.55/255 -- half a step plus ffmpeg's fixed-point slack -- mean ~0.25/255). So the
#      alpha difference is the model's response to half an 8-bit step of input noise and nothing
#      else. That response is not small: RVM's soft edges move by up to ~0.2 for it. The yardstick
#      is measured alongside (control): the same RGB frames with each sample moved by a uniform
#      random -1, 0 or +1 step (ffmpeg noise=alls=3:allf=u, its fixed seed; rms 0.82 step against
#      the rounding's 0.29) -> alpha, against the unperturbed ones. Asserted: mean |d| of (1) is
#      below the control's, and under fixed bounds (mean 1e-3, max 0.25). The engine's own
#      XNNPACK-vs-TF.js tolerance (mean 1e-4, max 1e-2) is for identical inputs; the identical-input
#      form of this claim (NV12 against its own float RGB conversion given as RGBF32: bit-identical
#      alpha) is tests/unit/test_ingest_e2e.c. Also asserted: the PNG folder and the same pixels as
#      raw rgb24 give bit-identical alpha (two sources, one ingest).
#      (ffmpeg's default NV12->RGB, without those flags, differs from BT.601 nearest-chroma by up to
#      ~11/255: not a meaningful reference.)
#  (2) colour loss, for the record: RGB PNGs decoded from the clip -> alpha, against NV12 made from
#      those PNGs by ffmpeg (chroma averaged to 4:2:0 and rounded to 8-bit YUV) -> alpha. This is the
#      price of 4:2:0 itself, not of the ingest; bounds (mean 1e-2, max 0.5) only catch a broken path
#      (a wrong range or matrix gives far more).
set -euo pipefail
CLI=${HR_CLI:-build/headroom}
MODEL=${HR_MODEL_DIR:-models}/rvm.json
VIDEO=${HR_DATA_DIR:-../shared/data}/sam2-bedroom/bedroom.mp4
[ -x "$CLI" ] || { echo "SKIP: no CLI at $CLI"; exit 77; }
[ -f "$MODEL" ] || { echo "SKIP: no model $MODEL"; exit 77; }
[ -f "$VIDEO" ] || { echo "SKIP: no $VIDEO"; exit 77; }
command -v ffmpeg >/dev/null || { echo "SKIP: no ffmpeg"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: no python3 (comparisons)"; exit 77; }

T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
FF="ffmpeg -loglevel error -nostdin -y"
SWS="flags=neighbor+full_chroma_int+accurate_rnd:in_range=tv:in_color_matrix=bt601"
fail=0

# cmp_f32 LABEL DIR_A DIR_B SUFFIX N TOL_MEAN TOL_MAX: per frame and overall mean / max |a - b|;
# the last line is "MEAN <mean>". Exit 1 over tolerance, on a missing frame or a NaN.
cmp_f32() {
  python3 - "$@" <<'EOF'
import sys, array, os
label, da, db, suffix, n, tmean, tmax = sys.argv[1:8]
n, tmean, tmax = int(n), float(tmean), float(tmax)
def rd(p):
    a = array.array('f'); a.frombytes(open(p, 'rb').read()); return a
tot = cnt = 0; gmax = 0.0; ok = True
for i in range(n):
    f = '%06d%s' % (i, suffix)
    pa, pb = os.path.join(da, f), os.path.join(db, f)
    if not (os.path.exists(pa) and os.path.exists(pb)):
        print('  %s %s: missing' % (label, f)); ok = False; continue
    a, b = rd(pa), rd(pb)
    if len(a) != len(b) or not a:
        print('  %s %s: %d vs %d values' % (label, f, len(a), len(b))); ok = False; continue
    d = [abs(x - y) for x, y in zip(a, b)]
    s, m = sum(d), max(d)
    if s != s or m != m: ok = False
    tot += s; cnt += len(d); gmax = max(gmax, m)
    print('  %s %s: mean |d| %.2e  max |d| %.2e  n %d' % (label, f, s / len(d), m, len(d)))
mean = tot / max(cnt, 1)
ok = ok and mean <= tmean and gmax <= tmax
print('  %s: %d frames, mean |d| %.2e, max |d| %.2e (bounds mean %g, max %g): %s'
      % (label, n, mean, gmax, tmean, tmax, 'ok' if ok else 'FAIL'))
print('MEAN %.6e' % mean)
sys.exit(0 if ok else 1)
EOF
}
# cmp_png_input LABEL PNGDIR INPUTDIR N: the PNGs / 255 against headroom's model input (ratio 1).
cmp_png_input() {
  python3 - "$@" <<'EOF'
import sys, array, os, subprocess
label, pd, idir, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
gmax = 0.0; tot = cnt = 0
for i in range(n):
    rgb = subprocess.run(['ffmpeg', '-loglevel', 'error', '-i', os.path.join(pd, '%06d.png' % i), '-f', 'rawvideo',
                          '-pix_fmt', 'rgb24', '-'], check=True, capture_output=True).stdout
    b = array.array('f'); b.frombytes(open(os.path.join(idir, '%06d.src.f32' % i), 'rb').read())
    if len(rgb) != len(b): print('  %s: sizes differ' % label); sys.exit(1)
    d = [abs(x / 255.0 - y) for x, y in zip(rgb, b)]
    tot += sum(d); cnt += len(d); gmax = max(gmax, max(d))
lim = 0.55 / 255
ok = gmax <= lim
print('  %s: PNG/255 vs headroom NV12 conversion: mean |d| %.2e (%.3f/255), max |d| %.2e (%.3f/255), limit 0.55/255: %s'
      % (label, tot / cnt, tot / cnt * 255, gmax, gmax * 255, 'ok' if ok else 'FAIL'))
sys.exit(0 if ok else 1)
EOF
}
# compare and keep the overall mean in $MEAN
MEAN=
compare() {
  local out rc=0
  out=$(cmp_f32 "$@") || rc=1
  echo "$out" | grep -v '^MEAN '
  MEAN=$(echo "$out" | sed -n 's/^MEAN //p')
  [ $rc -eq 0 ] || fail=1
}
run() { "$CLI" run --model "$MODEL" --quiet --no-alpha --raw "$@"; }

case_size() { # W H RATIO N
  local w=$1 h=$2 r=$3 n=$4 d="$T/${1}x${2}"
  mkdir -p "$d/png_back" "$d/png_src"
  echo "== ${w}x${h} ratio $r, $n frames"
  # (1) NV12 from the clip; the same NV12 back to RGB (PNGs and raw rgb24) the way headroom reads NV12
  $FF -i "$VIDEO" -frames:v "$n" -vf "scale=$w:$h" -pix_fmt nv12 -f rawvideo "$d/a.nv12"
  $FF -f rawvideo -pix_fmt nv12 -s "${w}x$h" -i "$d/a.nv12" -vf "scale=$SWS,format=rgb24" -start_number 0 "$d/png_back/%06d.png"
  $FF -f rawvideo -pix_fmt nv12 -s "${w}x$h" -i "$d/a.nv12" -vf "scale=$SWS,format=rgb24" -f rawvideo "$d/back.rgb"
  local extra=()
  [ "$r" = 1 ] && extra=(--dump-input)
  run --input "$d/a.nv12" --input-format "nv12v:${w}x$h@30" --size "${w}x$h" --ratio "$r" --out "$d/o_nv12" "${extra[@]}"
  run --input "$d/png_back" --size "${w}x$h" --ratio "$r" --out "$d/o_back"
  if [ "$r" = 1 ]; then cmp_png_input "input ${w}x$h" "$d/png_back" "$d/o_nv12/input" "$n" || fail=1; fi
  compare "(1) alpha NV12 vs ffmpeg's RGB PNG of it ${w}x$h r$r" "$d/o_nv12/raw" "$d/o_back/raw" .pha.f32 "$n" 1e-3 0.25
  local m1=$MEAN
  # control: the same pixels as raw rgb24 (bit-identical alpha), and with random -1/0/+1 steps
  $FF -f rawvideo -pix_fmt rgb24 -s "${w}x$h" -i "$d/back.rgb" -vf "format=gbrp,noise=alls=3:allf=u,format=rgb24" \
    -f rawvideo "$d/pert.rgb"
  run --input "$d/back.rgb" --input-format "rgb24:${w}x$h@30" --size "${w}x$h" --ratio "$r" --out "$d/o_backraw"
  run --input "$d/pert.rgb" --input-format "rgb24:${w}x$h@30" --size "${w}x$h" --ratio "$r" --out "$d/o_pert"
  local i f same=0
  for i in $(seq 0 $((n - 1))); do
    f=$(printf %06d.pha.f32 "$i")
    cmp -s "$d/o_back/raw/$f" "$d/o_backraw/raw/$f" && same=$((same + 1))
  done
  echo "  PNG folder vs raw rgb24 of the same pixels: $same/$n frames bit-identical"
  [ $same -eq "$n" ] || { echo "  FAIL: two sources of the same pixels gave different alpha"; fail=1; }
  compare "control: random -1/0/+1 step ${w}x$h r$r" "$d/o_backraw/raw" "$d/o_pert/raw" .pha.f32 "$n" 1 1
  if python3 -c "import sys; sys.exit(0 if float('$m1') < float('$MEAN') else 1)"; then
    echo "  (1) mean |d| $m1 is below the control's $MEAN: ok"
  else
    echo "  FAIL: (1) mean |d| $m1 is not below the control's $MEAN"; fail=1
  fi
  # (2) RGB PNGs from the clip, and NV12 made from them
  $FF -i "$VIDEO" -frames:v "$n" -vf "scale=$w:$h,format=rgb24" -start_number 0 "$d/png_src/%06d.png"
  $FF -start_number 0 -i "$d/png_src/%06d.png" -frames:v "$n" -pix_fmt nv12 -f rawvideo "$d/b.nv12"
  run --input "$d/png_src" --size "${w}x$h" --ratio "$r" --out "$d/o_src"
  run --input "$d/b.nv12" --input-format "nv12v:${w}x$h@30" --size "${w}x$h" --ratio "$r" --out "$d/o_src_nv12"
  compare "(2) alpha RGB PNG vs NV12 of it ${w}x$h r$r" "$d/o_src/raw" "$d/o_src_nv12/raw" .pha.f32 "$n" 1e-2 0.5
}
case_size 512 288 1 4
case_size 1920 1440 0.25 3
echo "ingest_nv12_vs_png: $([ $fail -eq 0 ] && echo ok || echo FAIL)"
exit $fail
