#!/usr/bin/env bash
# engine_tfjs_golden: headroom (XNNPACK) against TensorFlow.js (wasm) on real frames, fed the very
# same input tensors, with tolerances per frame; and the plain-C reference backend against XNNPACK.
#
# Cases (sam2-bedroom, state carried frame to frame for RVM):
#   rvm 512x288 ratio 1, 6 frames; rvm 960x720 ratio 0.25, 3 frames; meet and selfie, 2 frames.
# headroom writes the model input it used (--dump-input) and its raw output (--raw); ref/run_ref.js
# runs TF.js on those inputs. Every frame must have mean |d| <= 1e-4 and max |d| <= 1e-2 (alpha for
# RVM, the whole output tensor for the stateless segmenters), no NaN, equal sizes.
# Skips (77) when node, ref/node_modules, the models or the frames are missing.
set -u
src=${HR_SRC_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
cli=${HR_CLI:-$src/build/headroom}
models=${HR_MODEL_DIR:-$src/models}
data=${HR_DATA_DIR:-$src/../shared/data}
refdir=${HR_REF_DIR:-$src/ref}
frames=$data/sam2-bedroom/frames
TOL_MEAN=1e-4
TOL_MAX=1e-2
skip() { echo "SKIP: $*" >&2; exit 77; }
command -v node >/dev/null || skip "node is not installed (TF.js reference)"
[ -d "$refdir/node_modules/@tensorflow/tfjs-backend-wasm" ] || skip "$refdir/node_modules is missing (cd ref && npm ci)"
[ -f "$refdir/run_ref.js" ] || skip "$refdir/run_ref.js is missing"
[ -x "$cli" ] || skip "headroom CLI not built ($cli)"
for m in rvm meet selfie; do [ -f "$models/$m.json" ] || skip "$models/$m.json missing (scripts/fetch-models.sh)"; done
[ -f "$frames/00000.jpg" ] || skip "frames missing: $frames"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/hr_golden.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fails=0

# Compare DIR_A/*SUFFIX with DIR_B/*SUFFIX: one line per frame, then a summary; exit 1 when a
# frame is missing, sizes differ, a NaN appears or a tolerance is exceeded.
compare() { # LABEL DIR_A DIR_B SUFFIX EXPECTED_FRAMES
  node - "$@" "$TOL_MEAN" "$TOL_MAX" <<'EOF'
const fs = require('fs'), path = require('path');
const [label, da, db, suffix, nexp, tolMean, tolMax] = process.argv.slice(2);
const list = (d) => fs.readdirSync(d).filter((f) => f.endsWith(suffix)).sort();
const fa = list(da), fb = list(db);
let bad = 0, gmax = 0, gsum = 0, gn = 0;
const problem = (s) => { console.log(`  ${label}: FAIL ${s}`); bad++; };
if (fa.length !== Number(nexp) || fb.length !== Number(nexp))
  problem(`expected ${nexp} frames, found ${fa.length} (headroom) and ${fb.length} (reference)`);
const read = (f) => { const b = fs.readFileSync(f); return new Float32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength)); };
for (const f of fa) {
  if (!fb.includes(f)) { problem(`${f} missing on the reference side`); continue; }
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
  console.log(`  ${label} ${f}: mean |d| ${mean.toExponential(2)}  max |d| ${max.toExponential(2)} (at ${at})  n ${a.length}` +
              (nan ? `  NaN ${nan}` : '') + (ok ? '' : '  <-- over tolerance'));
  if (!ok) bad++;
}
console.log(`  ${label}: ${fa.length} frames, mean |d| ${(gsum / Math.max(gn, 1)).toExponential(2)}, max |d| ${gmax.toExponential(2)}` +
            ` (tolerance mean ${tolMean}, max ${tolMax}): ${bad ? 'FAIL' : 'ok'}`);
process.exit(bad ? 1 : 0);
EOF
}

# headroom run with --raw --dump-input, quiet; fails the test on a non-zero exit.
hr_run() { # OUTDIR ARGS...
  local out=$1; shift
  if ! "$cli" run --input "$frames" --out "$out" --raw --dump-input --quiet "$@" 2>"$tmp/err.txt"; then
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

golden() { # NAME MODEL NFRAMES SUFFIX [HEADROOM ARGS...]  (ratio, if any, comes as --ratio R)
  local name=$1 m=$2 n=$3 suffix=$4; shift 4
  local ratio_args=() a prev=""
  for a in "$@"; do [ "$prev" = --ratio ] && ratio_args=(--ratio "$a"); prev=$a; done
  echo "== $name: headroom (xnnpack) vs TF.js (wasm), $n frames"
  hr_run "$tmp/$name" --model "$models/$m.json" --frames "$n" "$@" || return
  tf_run "$m" "$tmp/$name/input" "$tmp/$name.tf" "${ratio_args[@]}" || return
  compare "$name" "$tmp/$name/raw" "$tmp/$name.tf" "$suffix" "$n" || fails=$((fails + 1))
}

golden rvm_512x288_r1 rvm 6 .pha.f32 --size 512x288 --ratio 1
golden rvm_960x720_r0.25 rvm 3 .pha.f32 --size 960x720 --ratio 0.25
golden meet meet 2 .out.f32
golden selfie selfie 2 .out.f32

# The plain-C reference backend (the graph's own ops, unlowered) against XNNPACK, 2 frames each.
oracle() { # NAME MODEL SUFFIX [HEADROOM ARGS...]
  local name=$1 m=$2 suffix=$3; shift 3
  echo "== $name: reference backend vs xnnpack, 2 frames"
  [ -d "$tmp/$name/raw" ] || { echo "  (xnnpack run missing, skipped)"; return; }
  mkdir -p "$tmp/$name.refx"
  hr_run "$tmp/$name.ref" --model "$models/$m.json" --frames 2 --backend reference "$@" || return
  for f in "$tmp/$name/raw"/00000[01]$suffix; do cp "$f" "$tmp/$name.refx/"; done
  compare "$name ref" "$tmp/$name.ref/raw" "$tmp/$name.refx" "$suffix" 2 || fails=$((fails + 1))
  # and the reference backend against TF.js, for the record (same tolerances)
  mkdir -p "$tmp/$name.tfx"
  for f in "$tmp/$name.tf"/00000[01]$suffix; do [ -f "$f" ] && cp "$f" "$tmp/$name.tfx/"; done
  compare "$name ref-vs-tfjs" "$tmp/$name.ref/raw" "$tmp/$name.tfx" "$suffix" 2 || fails=$((fails + 1))
}
oracle rvm_512x288_r1 rvm .pha.f32 --size 512x288 --ratio 1
oracle rvm_960x720_r0.25 rvm .pha.f32 --size 960x720 --ratio 0.25
oracle meet meet .out.f32
oracle selfie selfie .out.f32

echo "engine_tfjs_golden: $fails failure(s)"
[ $fails -eq 0 ]
