#!/usr/bin/env bash
# The whole test suite: set up (idempotent), then ctest on the Release build and on an
# ASan+UBSan build. The sanitizer pass skips the tests that only compare against TF.js, measure
# timing, or hold the process under a memory ceiling (ASan's shadow memory and quarantine would
# break the ceiling by design); they run in the Release pass. Everything else runs under both.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
"$here/scripts/setup.sh"
jobs=$(nproc)
echo "== Release build: all tests"
(cd build && ctest --output-on-failure -j"$jobs")
echo "== ASan+UBSan build"
cmake -S "$here" -B "$here/build-asan" -DCMAKE_BUILD_TYPE=Debug -DHR_SANITIZE=ON >/dev/null
cmake --build "$here/build-asan" -j"$jobs" >/dev/null
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
(cd build-asan && ctest --output-on-failure -j"$jobs" -E 'tfjs_golden|stability|telemetry_render|perf|gov_kill|live_|ingest_bench')
