#!/usr/bin/env bash
# Resuming a stream in a fresh process: frames 1-20 in one run give the same alpha, byte for byte
# (raw float32 and PNG), as frames 1-10 with --state-out followed by a new process that loads the
# state (--state-in) and runs frames 11-20 (--start 10). A third run of frames 11-20 without the
# state must differ, or the test would prove nothing.
set -euo pipefail
CLI=${HR_CLI:-build/headroom}
MODEL=${HR_MODEL_DIR:-models}/rvm.json
FRAMES=${HR_DATA_DIR:-../shared/data}/sam2-bedroom/frames
[ -x "$CLI" ] || { echo "SKIP: no CLI at $CLI"; exit 77; }
[ -f "$MODEL" ] || { echo "SKIP: no model $MODEL"; exit 77; }
[ -d "$FRAMES" ] || { echo "SKIP: no frames $FRAMES"; exit 77; }

T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
# One thread in every run: the comparison is between processes, not thread schedules.
run() { "$CLI" run --model "$MODEL" --input "$FRAMES" --size 256x144 --ratio 1 --raw --threads 1 --quiet "$@"; }

run --out "$T/whole" --frames 20
run --out "$T/split" --frames 10 --state-out "$T/state.bin"
run --out "$T/split" --start 10 --frames 10 --state-in "$T/state.bin"
run --out "$T/cold" --start 10 --frames 10

fail=0
n=0
for i in $(seq 0 19); do
  f=$(printf '%06d' "$i")
  for kind in "raw/$f.pha.f32" "alpha/$f.png"; do
    if ! cmp -s "$T/whole/$kind" "$T/split/$kind"; then
      echo "FAIL: $kind differs between the single run and the resumed run"; fail=1
    fi
    n=$((n + 1))
  done
done
# The state matters: frames 11-20 from a zero state are not those of the continuous run.
same_cold=0
for i in $(seq 10 19); do
  f=$(printf '%06d' "$i")
  cmp -s "$T/whole/raw/$f.pha.f32" "$T/cold/raw/$f.pha.f32" && same_cold=$((same_cold + 1))
done
if [ "$same_cold" -ne 0 ]; then
  echo "FAIL: $same_cold of 10 frames run without --state-in equal the continuous run (state has no effect?)"; fail=1
fi
# A state blob is refused by a session of another size, with a message, and nothing is written.
if run --out "$T/bad" --size 320x180 --frames 1 --state-in "$T/state.bin" 2>"$T/err.txt"; then
  echo "FAIL: a 256x144 state was accepted by a 320x180 session"; fail=1
elif ! grep -q "256x144" "$T/err.txt"; then
  echo "FAIL: refusal message does not name the blob's size:"; cat "$T/err.txt"; fail=1
fi
[ "$fail" -eq 0 ] && echo "session_resume: $n files identical (raw f32 + PNG, 20 frames), cold resume differs on 10/10 frames"
exit $fail
