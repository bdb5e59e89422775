#!/usr/bin/env bash
# tfjs_golden_pairs: is a large RVM alpha difference between headroom and TF.js float-order
# amplification or a real (semantic) difference? Runs one clip through four runtimes fed the same
# input tensors (headroom XNNPACK, headroom's plain-C reference backend, TF.js wasm, TF.js cpu) and
# prints, for every pair, each frame's mean and max |d| with where the max is.
#
# Usage: bench/tfjs_golden_pairs.sh [SRC] [WxH] [RATIO] [FRAMES]
#   defaults: /usr/share/doc/opencv-doc/examples/data/vtest.avi 1920x1080 0.25 4
#   HR_CLI (default build/headroom), HR_MODEL_DIR, HR_REF_DIR, KEEP=DIR to keep the outputs.
# Reading it: float-order amplification shows as the *same* few pixels in every pair, with TF.js
# cpu vs TF.js wasm as large as (or larger than) headroom vs either; a semantic difference shows
# as headroom far from both TF.js backends while they agree, usually over a whole edge or region.
# Slow: TF.js cpu takes ~30 s a frame at 1920x1080 r0.25, the reference backend ~5 s (2 cores).
set -eu
src_dir=$(cd "$(dirname "$0")/.." && pwd)
clip=${1:-/usr/share/doc/opencv-doc/examples/data/vtest.avi}
size=${2:-1920x1080} ratio=${3:-0.25} n=${4:-4}
cli=${HR_CLI:-$src_dir/build/headroom}
model=${HR_MODEL_DIR:-$src_dir/models}/rvm.json
ref=${HR_REF_DIR:-$src_dir/ref}
tmp=${KEEP:-$(mktemp -d "${TMPDIR:-/tmp}/hr_pairs.XXXXXX")}
[ -n "${KEEP:-}" ] || trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp"
w=${size%x*}

run_hr() { "$cli" run --model "$model" --input "$clip" --out "$tmp/$1" --size "$size" --ratio "$ratio" \
  --frames "$n" --raw --no-alpha --quiet "${@:2}"; }
echo "clip $clip  $size ratio $ratio  $n frames  (outputs in $tmp)"
t0=$SECONDS; run_hr xnn --dump-input; echo "headroom xnnpack: $((SECONDS - t0)) s"
t0=$SECONDS; run_hr refb --backend reference; echo "headroom reference: $((SECONDS - t0)) s"
for b in wasm cpu; do
  t0=$SECONDS
  node "$ref/run_ref.js" --model "$model" --inputs "$tmp/xnn/input" --out "$tmp/tf_$b" --ratio "$ratio" \
    --frames "$n" --backend "$b" --quiet >/dev/null
  echo "TF.js $b: $((SECONDS - t0)) s"
done

node - "$tmp" "$w" <<'EOF'
const fs = require('fs'), path = require('path');
const [dir, W] = [process.argv[2], Number(process.argv[3])];
const side = {xnnpack: 'xnn/raw', reference: 'refb/raw', 'tfjs-wasm': 'tf_wasm', 'tfjs-cpu': 'tf_cpu'};
const read = (f) => { const b = fs.readFileSync(f); return new Float32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength)); };
const pairs = [['xnnpack', 'tfjs-wasm'], ['xnnpack', 'tfjs-cpu'], ['tfjs-cpu', 'tfjs-wasm'],
               ['reference', 'xnnpack'], ['reference', 'tfjs-wasm']];
const files = fs.readdirSync(path.join(dir, side.xnnpack)).filter((f) => f.endsWith('.pha.f32')).sort();
for (const [p, q] of pairs) {
  console.log(`== ${p} vs ${q}`);
  for (const f of files) {
    const a = read(path.join(dir, side[p], f)), b = read(path.join(dir, side[q], f));
    let s = 0, m = 0, at = 0, over = 0;
    for (let i = 0; i < a.length; i++) {
      const d = Math.abs(a[i] - b[i]); s += d; if (d > m) { m = d; at = i; } if (d > 1e-4) over++;
    }
    console.log(`  ${f}: mean ${(s / a.length).toExponential(2)}  max ${m.toExponential(2)} at x ${at % W} y ` +
                `${Math.floor(at / W)}  pixels > 1e-4: ${over}`);
  }
}
EOF
