#!/usr/bin/env bash
# `ingest_bench --format FMT --size 1920x1440 --ratio 0.25 --json` (issue 4) for nv12, i420, bgra
# and rgb24 on the real frame (sam2-bedroom 00000.jpg): the JSON line parses, fused == naive exactly
# (max |d| 0), and the fused path is >= 3x faster than the naive one (a ratio, so a loaded machine
# does not make it flaky: the naive path, memory-bound, slows down more). The 1.0 ms target for fused
# is printed (target_met), not asserted: it depends on the machine. Load averages are printed with
# the figures (the bench adds them to its JSON).
set -uo pipefail
BENCH=${HR_BUILD_DIR:-build}/ingest_bench
IMG=${HR_DATA_DIR:-../shared/data}/sam2-bedroom/frames/00000.jpg
[ -x "$BENCH" ] || { echo "FAIL: no ingest bench at $BENCH"; exit 1; }
[ -f "$IMG" ] || { echo "SKIP: no $IMG"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: no python3"; exit 77; }
fail=0
for f in nv12 i420 bgra rgb24; do
  out=$("$BENCH" --format $f --size 1920x1440 --ratio 0.25 --runs 30 --image "$IMG" --json) || { echo "FAIL: $f: exit $?"; fail=1; continue; }
  python3 - "$out" <<'EOF' || fail=1
import json, sys
j = json.loads(sys.argv[1])
ok = j['max_abs_fused_naive'] == 0 and j['ratio_naive_fused'] >= 3 and j['proc'] == '480x360'
print('%-5s fused %.3f ms  rows %.3f ms  naive %.3f ms  naive/fused %.2fx  naive/(fused+rows) %.2fx  target_met %s  load %s: %s'
      % (j['format'], j['fused_ms'], j['rows_ms'], j['naive_ms'], j['ratio_naive_fused'], j['ratio_naive_fused_rows'],
         j['target_met'], j['loadavg'], 'ok' if ok else 'FAIL'))
sys.exit(0 if ok else 1)
EOF
done
# option errors
"$BENCH" --format yuyv >/dev/null 2>&1 && { echo "FAIL: an unknown format was accepted"; fail=1; }
"$BENCH" --format nv12 --size 1921x1440 >/dev/null 2>&1 && { echo "FAIL: odd NV12 size accepted"; fail=1; }
echo "ingest_bench: $([ $fail -eq 0 ] && echo ok || echo FAIL)"
exit $fail
