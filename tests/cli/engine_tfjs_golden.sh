#!/usr/bin/env bash
# engine_tfjs_golden: headroom (XNNPACK) against TensorFlow.js (wasm) on real frames, fed the very
# same input tensors, with bounds per model, size and output; and the plain-C reference backend
# against XNNPACK.
#
# Cases (sam2-bedroom; RVM's state carried frame to frame over 20 frames):
#   rvm 512x288 ratio 1; rvm 960x720 ratio 0.25; rvm 1920x1080 ratio 0.25 (1080 is no multiple of
#   32: the network runs at 270 rows and its decoder crops 136 rows to 135); meet and selfie, 2 frames.
# headroom writes the model input it used (--dump-input) and its raw alpha (--raw); ref/run_ref.js
# runs TF.js on those inputs. RVM's four recurrent states (r1o..r4o) are compared after frames 0, 9
# and 19: headroom runs the 20 frames as three chained runs (--start, --state-in, --state-out;
# bit-identical to one run) and ref/state_blob.js unpacks each state blob. RVM's foreground is
# compared at 512x288 and 960x720 (headroom run --fgr).
# Bounds are about 10x the largest error observed here (TF.js 4.22.0 wasm SIMD, 1 thread); every
# file must have mean |d| and max |d| within its case's bounds, no NaN, equal sizes.
# Skips (77) when node, ref/node_modules, the models or the frames are missing.
set -u
src=${HR_SRC_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
cli=${HR_CLI:-$src/build/headroom}
models=${HR_MODEL_DIR:-$src/models}
data=${HR_DATA_DIR:-$src/../shared/data}
refdir=${HR_REF_DIR:-$src/ref}
frames=$data/sam2-bedroom/frames
skip() { echo "SKIP: $*" >&2; exit 77; }
command -v node >/dev/null || skip "node is not installed (TF.js reference)"
[ -d "$refdir/node_modules/@tensorflow/tfjs-backend-wasm" ] || skip "$refdir/node_modules is missing (cd ref && npm ci)"
for f in run_ref.js state_blob.js; do [ -f "$refdir/$f" ] || skip "$refdir/$f is missing"; done
[ -x "$cli" ] || skip "headroom CLI not built ($cli)"
for m in rvm meet selfie; do [ -f "$models/$m.json" ] || skip "$models/$m.json missing (scripts/fetch-models.sh)"; done
[ -f "$frames/00019.jpg" ] || skip "frames missing: $frames"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/hr_golden.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fails=0

# Compare every DIR_A/*SUFFIX with the file of the same name in DIR_B: one line per file, then a
# summary; exit 1 when DIR_A does not hold EXPECTED files, one is missing in DIR_B, sizes differ, a
# NaN appears or a file's mean or max |d| exceeds its bound. ROW (values per image row) and
# CHANNELS, when given, turn the index of the largest difference into x, y.
compare() { # LABEL DIR_A DIR_B SUFFIX EXPECTED TOL_MEAN TOL_MAX [ROW CHANNELS]
  node - "$@" <<'EOF'
const fs = require('fs'), path = require('path');
const [label, da, db, suffix, nexp, tolMean, tolMax, row, ch] = process.argv.slice(2);
const fa = fs.readdirSync(da).filter((f) => f.endsWith(suffix)).sort();
let bad = 0, gmax = 0, gsum = 0, gn = 0;
const problem = (s) => { console.log(`  ${label}: FAIL ${s}`); bad++; };
if (fa.length !== Number(nexp)) problem(`expected ${nexp} files, headroom gave ${fa.length}`);
const read = (f) => { const b = fs.readFileSync(f); return new Float32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength)); };
const where = (i) => row ? `x ${Math.floor((i % Number(row)) / Number(ch || 1))} y ${Math.floor(i / Number(row))}` : `at ${i}`;
for (const f of fa) {
  if (!fs.existsSync(path.join(db, f))) { problem(`${f} missing on the reference side`); continue; }
  const a = read(path.join(da, f)), b = read(path.join(db, f));
  if (a.length !== b.length || a.length === 0) { problem(`${f}: ${a.length} vs ${b.length} values`); continue; }
  let sum = 0, max = 0, at = -1, nan = 0;
  for (let i = 0; i < a.length; i++) {
    if (Number.isNaN(a[i]) || Number.isNaN(b[i])) { nan++; continue; }
    const d = Math.abs(a[i] - b[i]);
    sum += d; if (d > max) { max = d; at = i; }
  }
  const mean = sum / a.length;
  gsum += sum; gn += a.length; if (max > gmax) gmax = max;
  const ok = nan === 0 && mean <= Number(tolMean) && max <= Number(tolMax);
  console.log(`  ${label} ${f}: mean |d| ${mean.toExponential(2)}  max |d| ${max.toExponential(2)} (${where(at)})  n ${a.length}` +
              (nan ? `  NaN ${nan}` : '') + (ok ? '' : '  <-- over bound'));
  if (!ok) bad++;
}
console.log(`  ${label}: ${fa.length} files, mean |d| ${(gsum / Math.max(gn, 1)).toExponential(2)}, max |d| ${gmax.toExponential(2)}` +
            ` (bound mean ${tolMean}, max ${tolMax}): ${bad ? 'FAIL' : 'ok'}`);
process.exit(bad ? 1 : 0);
EOF
}

# headroom run from sam2-bedroom with --raw --dump-input, quiet; fails the test on a non-zero exit.
hr_run() { # OUTDIR ARGS...
  local out=$1; shift
  if ! "$cli" run --input "$frames" --out "$out" --raw --dump-input --no-alpha --quiet "$@" 2>"$tmp/err.txt"; then
    echo "  FAIL: headroom run $* : $(head -3 "$tmp/err.txt")"; fails=$((fails + 1)); return 1
  fi
}
tf_run() { # MODEL INPUTDIR OUTDIR [ARGS...]
  local m=$1 in=$2 out=$3; shift 3
  local t0=$SECONDS
  if ! node "$refdir/run_ref.js" --model "$models/$m.json" --inputs "$in" --out "$out" --quiet "$@" >"$tmp/tf.txt" 2>&1; then
    echo "  FAIL: run_ref.js $m: $(tail -3 "$tmp/tf.txt")"; fails=$((fails + 1)); return 1
  fi
  echo "  TF.js $m: $(tail -1 "$tmp/tf.txt" | sed 's/.*"median_ms":\([0-9.]*\).*/median \1 ms\/frame/') ($((SECONDS - t0)) s)"
}

# RVM over 20 frames with the state carried, run as [0,1) [1,10) [10,20), each saving its state.
golden_rvm() { # NAME WxH RATIO ALPHA_MEAN ALPHA_MAX STATE_MEAN STATE_MAX [FGR_MEAN FGR_MAX]
  local name=$1 size=$2 ratio=$3 am=$4 ax=$5 sm=$6 sx=$7 fm=${8:-} fx=${9:-} n=20 from=0 to prev=() fgr=() outs=pha,r1o,r2o,r3o,r4o
  [ -n "$fm" ] && { fgr=(--fgr); outs=$outs,fgr; }
  local out=$tmp/$name st=$tmp/$name.st
  echo "== $name: headroom (xnnpack) vs TF.js (wasm), $n frames, state carried"
  for to in 1 10 $n; do
    hr_run "$out" --model "$models/rvm.json" --size "$size" --ratio "$ratio" --start $from \
      --frames $((to - from)) "${prev[@]}" "${fgr[@]}" --state-out "$tmp/$name.s$to" || return
    if ! node "$refdir/state_blob.js" "$tmp/$name.s$to" "$st" >/dev/null; then
      echo "  FAIL: state_blob.js $name.s$to"; fails=$((fails + 1)); return
    fi
    prev=(--state-in "$tmp/$name.s$to"); from=$to
  done
  tf_run rvm "$out/input" "$tmp/$name.tf" --ratio "$ratio" --frames $n --outputs $outs || return
  compare "$name pha" "$out/raw" "$tmp/$name.tf" .pha.f32 $n "$am" "$ax" "${size%x*}" 1 || fails=$((fails + 1))
  [ -n "$fm" ] && { compare "$name fgr" "$out/raw" "$tmp/$name.tf" .fgr.f32 $n "$fm" "$fx" "$((${size%x*} * 3))" 3 || fails=$((fails + 1)); }
  for k in 1 2 3 4; do
    compare "$name r${k}o" "$st" "$tmp/$name.tf" .r${k}o.f32 3 "$sm" "$sx" || fails=$((fails + 1))
  done
}
golden_plain() { # NAME MODEL NFRAMES MEAN MAX
  local name=$1 m=$2 n=$3
  echo "== $name: headroom (xnnpack) vs TF.js (wasm), $n frames"
  hr_run "$tmp/$name" --model "$models/$m.json" --frames "$n" || return
  tf_run "$m" "$tmp/$name/input" "$tmp/$name.tf" || return
  compare "$name" "$tmp/$name/raw" "$tmp/$name.tf" .out.f32 "$n" "$4" "$5" || fails=$((fails + 1))
}

# Bounds: about 10x the largest per-file mean and max |d| observed (XNNPACK vs TF.js, or the
# reference backend vs either, whichever is larger), rounded up:
#   rvm 512x288 r1      alpha mean 4.0e-8 max 1.4e-5   states mean 8.4e-7 max 2.3e-5
#   rvm 960x720 r0.25   alpha mean 4.9e-8 max 4.7e-4   states mean 6.5e-7 max 2.0e-5
#   rvm 1920x1080 r0.25 alpha mean 4.0e-8 max 9.8e-5   states mean 8.5e-7 max 3.2e-5
#   meet                mean 4.2e-6 max 1.4e-4         selfie  mean 2.2e-7 max 9.3e-5
#   rvm fgr (--fgr)     512x288 r1 mean 4.8e-7 max 1.0e-5; 960x720 r0.25 mean 9.8e-7 max 4.4e-4
#                       (not at 1920x1080: 25 MB a frame on each side)
# (The alpha maxima are single pixels where the guided filter amplifies float-order differences:
# on vtest.avi at 1920x1080 r0.25, TF.js's own cpu and wasm backends differ by up to 4.4e-3 there.)
B_512=(5e-7 2e-4);   S_512=(1e-5 3e-4)
B_960=(5e-7 5e-3);   S_960=(1e-5 2e-4)
B_1080=(5e-7 1e-3);  S_1080=(1e-5 4e-4)
B_MEET=(5e-5 2e-3);  B_SELFIE=(3e-6 1e-3)
F_512=(5e-6 1e-4); F_960=(1e-5 5e-3)
#          name                size      ratio alpha mean max   states mean max
golden_rvm rvm_512x288_r1      512x288   1     "${B_512[@]}"  "${S_512[@]}"  "${F_512[@]}"
golden_rvm rvm_960x720_r0.25   960x720   0.25  "${B_960[@]}"  "${S_960[@]}"  "${F_960[@]}"
golden_rvm rvm_1920x1080_r0.25 1920x1080 0.25  "${B_1080[@]}" "${S_1080[@]}"
golden_plain meet   meet   2 "${B_MEET[@]}"
golden_plain selfie selfie 2 "${B_SELFIE[@]}"

# The plain-C reference backend (the graph's own ops, unlowered) against XNNPACK, 2 frames each, and
# against TF.js for the record, with the same bounds as XNNPACK against TF.js.
oracle() { # NAME MODEL SUFFIX MEAN MAX [HEADROOM ARGS...]
  local name=$1 m=$2 suffix=$3 tm=$4 tx=$5 f; shift 5
  echo "== $name: reference backend vs xnnpack, 2 frames"
  [ -d "$tmp/$name/raw" ] || { echo "  (xnnpack run missing, skipped)"; return; }
  mkdir -p "$tmp/$name.refx" "$tmp/$name.tfx"
  if ! "$cli" run --input "$frames" --out "$tmp/$name.ref" --raw --no-alpha --quiet --model "$models/$m.json" \
      --frames 2 --backend reference "$@" 2>"$tmp/err.txt"; then
    echo "  FAIL: reference run $name: $(head -3 "$tmp/err.txt")"; fails=$((fails + 1)); return
  fi
  for f in "$tmp/$name/raw"/00000[01]$suffix; do cp "$f" "$tmp/$name.refx/"; done
  compare "$name ref" "$tmp/$name.ref/raw" "$tmp/$name.refx" "$suffix" 2 "$tm" "$tx" || fails=$((fails + 1))
  for f in "$tmp/$name.tf"/00000[01]$suffix; do [ -f "$f" ] && cp "$f" "$tmp/$name.tfx/"; done
  compare "$name ref-vs-tfjs" "$tmp/$name.ref/raw" "$tmp/$name.tfx" "$suffix" 2 "$tm" "$tx" || fails=$((fails + 1))
}
oracle rvm_512x288_r1 rvm .pha.f32 "${B_512[@]}" --size 512x288 --ratio 1
oracle rvm_960x720_r0.25 rvm .pha.f32 "${B_960[@]}" --size 960x720 --ratio 0.25
oracle meet meet .out.f32 "${B_MEET[@]}"
oracle selfie selfie .out.f32 "${B_SELFIE[@]}"

echo "engine_tfjs_golden: $fails failure(s)"
[ $fails -eq 0 ]
