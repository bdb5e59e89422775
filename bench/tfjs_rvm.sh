#!/usr/bin/env bash
# tfjs_rvm.sh: times the TensorFlow.js reference (ref/run_ref.js) on RVM over real frames, so
# headroom's bench numbers have a baseline measured the same way on the same machine.
#
# Usage: bench/tfjs_rvm.sh [FRAMES_DIR] [WxH] [RATIO] [N] [extra run_ref.js args...]
#   defaults: /work/shared/data/sam2-bedroom/frames 512x288 1 5
# Needs ffmpeg and `npm ci` done in ref/. Prints run_ref.js's JSON summary line (the last line).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
frames=${1:-/work/shared/data/sam2-bedroom/frames}
size=${2:-512x288}
ratio=${3:-1}
n=${4:-5}
shift $(( $# < 4 ? $# : 4 ))
w=${size%x*}; h=${size#*x}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "{\"width\":$w,\"height\":$h}" > "$tmp/meta.json"
i=0
for f in $(ls "$frames" | grep -Ei '\.(jpg|jpeg|png)$' | sort | head -n "$n"); do
  stem=$(printf %06d "$i")
  ffmpeg -v error -y -i "$frames/$f" -vf "scale=$w:$h" -f rawvideo -pix_fmt rgb24 "$tmp/$stem.rgb"
  node -e 'const fs=require("fs");const b=fs.readFileSync(process.argv[1]);const f=new Float32Array(b.length);
for(let i=0;i<b.length;i++)f[i]=b[i]/255;fs.writeFileSync(process.argv[2],Buffer.from(f.buffer));' \
    "$tmp/$stem.rgb" "$tmp/$stem.src.f32"
  rm "$tmp/$stem.rgb"
  i=$((i + 1))
done
[ "$i" -gt 0 ] || { echo "tfjs_rvm: no images in $frames" >&2; exit 1; }
node "$here/ref/run_ref.js" --model "$here/models/rvm.json" --inputs "$tmp" --no-write \
  --ratio "$ratio" --frames "$n" "$@"
