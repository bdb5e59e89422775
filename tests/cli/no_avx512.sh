#!/usr/bin/env bash
# The engine without our AVX-512 paths, as on an AVX2-only CPU (HR_NO_AVX512=1, src/core/cpu.h), on
# this machine: our depthwise kernel, the tail's and the ingest's AVX-512 rows, the fused HardSwish
# and the streamed stores all give way to their fallbacks (XNNPACK's depthwise, the portable and
# SSE2 rows). Checked: (1) RVM's raw alpha on 3 sam2-bedroom frames at 1920x1440 NV12 r0.25, state
# carried, is bit-identical with and without them (every AVX-512 path but one is defined to give the
# fallback's bits); the one, the Winograd 3x3 convolutions (src/session/wino.c: the sums reordered),
# off for that (HR_WINO=0), and its matte against the fallback's within the bounds the TF.js golden
# test allows XNNPACK at 1920x1080 (mean |d| 5e-7, max 1e-3; measured on 10 frames: mean 2e-8, max
# 1.3e-4), and bit-identical to its own AVX2 variant (what an AVX2 CPU runs); (2) the plan counts
# the fallback's memory: on an AVX-512 CPU its shared
# kernels grow (XNNPACK's packed depthwise weights; Winograd off on both sides, its transformed
# weights being 4x XNNPACK's packed ones), elsewhere they are equal, and the peak RSS of
# a run writing alpha PNGs is the plan's within 10% (not under a sanitizer: shadow memory); (3) the kernel and
# fusion tests pass on the fallbacks: test_exec_fuse (fused = unfused, bit for bit),
# test_kernels_fgf, test_kernels_resize, test_ingest_resample (against oracles), test_kernels_wino
# (its AVX2 variant against XNNPACK).
set -euo pipefail
CLI=${HR_CLI:-build/headroom}
BUILD=${HR_BUILD_DIR:-build}
MODEL=${HR_MODEL_DIR:-models}/rvm.json
DATA=${HR_DATA_DIR:-../shared/data}/sam2-bedroom
[ -x "$CLI" ] || { echo "SKIP: no CLI at $CLI"; exit 77; }
[ -f "$MODEL" ] || { echo "SKIP: no model $MODEL"; exit 77; }
[ -f "$DATA/bedroom.mp4" ] || { echo "SKIP: no sam2-bedroom data in $DATA"; exit 77; }
command -v ffmpeg > /dev/null || { echo "SKIP: no ffmpeg"; exit 77; }
[ -x /usr/bin/time ] || { echo "SKIP: no /usr/bin/time (GNU time)"; exit 77; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0
ffmpeg -v error -i "$DATA/bedroom.mp4" -frames:v 3 -vf scale=1920:1440 -pix_fmt nv12 -f rawvideo "$T/v.nv12"
src=(--input "$T/v.nv12" --input-format nv12:1920x1440@30 --ratio 0.25)
# (1) the same bits (the Winograd convolutions off), and the Winograd's matte close
for e in 0 1; do
  HR_WINO=0 HR_NO_AVX512=$e "$CLI" run --model "$MODEL" "${src[@]}" --out "$T/o$e" --raw --no-alpha --quiet --threads 2 > /dev/null
done
HR_NO_AVX512=0 "$CLI" run --model "$MODEL" "${src[@]}" --out "$T/ow" --raw --no-alpha --quiet --threads 2 > /dev/null
HR_NO_AVX512=1 "$CLI" run --model "$MODEL" "${src[@]}" --out "$T/ow2" --raw --no-alpha --quiet --threads 2 > /dev/null
# same_bits DIR_A DIR_B WHAT: every raw matte in A the same bytes as B's, and 3 of them
same_bits() {
  local n=0 f
  for f in "$1"/raw/*.pha.f32; do
    [ -e "$f" ] || continue
    n=$((n + 1))
    cmp -s "$f" "$2/raw/$(basename "$f")" || { echo "FAIL: $(basename "$f"): $3 differ"; fail=1; }
  done
  [ $n = 3 ] || { echo "FAIL: $n raw mattes written ($3), not 3"; fail=1; }
  echo "raw alpha, $3: $n frames compared"
}
same_bits "$T/o0" "$T/o1" "with and without our AVX-512 paths (Winograd off)"
same_bits "$T/ow" "$T/ow2" "the Winograd convolutions' AVX-512 and AVX2 variants"
if grep -q -m1 avx512f /proc/cpuinfo; then
  python3 - "$T/ow/raw" "$T/o1/raw" << 'EOF' || fail=1
import array, glob, os, sys
bad = 0
files = sorted(glob.glob(os.path.join(sys.argv[1], "*.pha.f32")))
for f in files:
    a = array.array("f"); a.frombytes(open(f, "rb").read())
    b = array.array("f"); b.frombytes(open(os.path.join(sys.argv[2], os.path.basename(f)), "rb").read())
    d = [abs(x - y) for x, y in zip(a, b)]
    mean, mx = sum(d) / len(d), max(d)
    ok = len(a) == len(b) and mean <= 5e-7 and mx <= 1e-3
    print(f"Winograd against the fallback, {os.path.basename(f)}: mean |d| {mean:.2e}, max {mx:.2e}" + ("" if ok else "  FAIL"))
    bad += not ok
if len(files) != 3:
    print(f"FAIL: {len(files)} Winograd mattes, not 3"); bad += 1
sys.exit(1 if bad else 0)
EOF
fi
# (2) the plan follows the fallback
key() { printf '%s' "$1" | grep -o "\"$2\":[0-9.]*" | head -1 | cut -d: -f2; }
p0=$(HR_WINO=0 HR_NO_AVX512=0 "$CLI" plan --model "$MODEL" "${src[@]}" --json)
p1=$(HR_WINO=0 HR_NO_AVX512=1 "$CLI" plan --model "$MODEL" "${src[@]}" --json)
k0=$(key "$p0" kernel_shared_bytes) k1=$(key "$p1" kernel_shared_bytes)
echo "plan's shared kernels: $k0 bytes with AVX-512 paths, $k1 without"
if grep -q -m1 avx512f /proc/cpuinfo; then
  [ "$k1" -gt "$k0" ] || { echo "FAIL: without our depthwise kernel the plan should count XNNPACK's packed weights"; fail=1; }
else
  [ "$k1" = "$k0" ] || { echo "FAIL: no AVX-512 here, yet the override changed the plan"; fail=1; }
fi
if grep -q -a -m1 __asan_init "$CLI"; then
  echo "RSS against the plan: not under a sanitizer (its shadow memory is not ours)"
else
  # the run the plan describes: alpha PNGs written (as tests/cli/plan_rss.sh)
  HR_NO_AVX512=1 /usr/bin/time -o "$T/time" -f '%M' "$CLI" run --model "$MODEL" "${src[@]}" --out "$T/png" --quiet > /dev/null
  awk -v p="$(key "$p1" process_total_bytes)" -v m="$(( $(tail -1 "$T/time") * 1024 ))" 'BEGIN {
    printf "without AVX-512 paths: peak RSS %.1f MB, plan %.1f MB (%.3f)\n", m / 1e6, p / 1e6, p / m
    exit (p / m < 0.90 || p / m > 1.10) }' || { echo "FAIL: the peak is more than 10% from the plan"; fail=1; }
fi
# (3) the kernel tests on the fallbacks
for t in test_exec_fuse test_kernels_fgf test_kernels_resize test_ingest_resample test_kernels_wino; do
  if HR_NO_AVX512=1 "$BUILD/tests/$t" > "$T/$t.log" 2>&1; then echo "$t without AVX-512: passed ($(tail -1 "$T/$t.log"))"
  else echo "FAIL: $t without AVX-512:"; tail -5 "$T/$t.log"; fail=1; fi
done
[ $fail = 0 ] && echo "PASS: the fallbacks give the same mattes, the plan counts them, their tests pass"
exit $fail
