#!/usr/bin/env bash
# Builds bench/gov_killdemo.c and runs it under a 420 MB memory cgroup with profile a14, governed
# and ungoverned, for a few ballast sizes; prints each run's outcome. Needs root (exit 77 if not).
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
out=${TMPDIR:-/tmp}/gov_killdemo.$$
gcc -std=c11 -O2 -Wall -Wextra -D_GNU_SOURCE -I"$here/include" -I"$here/src" "$here/bench/gov_killdemo.c" \
  "$here"/src/gov/*.c "$here/src/core/status.c" -lm -o "$out" || exit 1
trap 'rm -f "$out" "$out.log"' EXIT
LIMIT=${LIMIT:-420}
for ballast in ${BALLASTS:-50:300 50:360}; do
  for mode in --no-governor ""; do
    echo "=== limit ${LIMIT}MB profile a14 ballast $ballast ${mode:-governed}"
    "$here/bench/gov_cgroup_run.sh" "$LIMIT" -- "$out" --profile a14 --ballast "$ballast" $mode >"$out.log" 2>&1
    rc=$?
    [ "$rc" = 77 ] && { cat "$out.log"; exit 77; }
    # Transitions, the summary, and the last per-frame line (where an OOM kill struck).
    grep -E 'admission|mode=|governor_action=[a-z_]+$|summary|result=' "$out.log" | grep -v 'governor_action=none$'
    [ "$rc" = 137 ] && { echo "last line before the kill:"; grep 'frame=' "$out.log" | tail -1; }
  done
done
