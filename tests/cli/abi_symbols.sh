#!/usr/bin/env bash
# The shared libraries' ABI: `nm -D --defined-only` of the installed libheadroom.so and
# libheadroom_io.so must equal the kept lists (tests/data/abi/*.symbols), so an accidental export
# (an internal, a dependency's symbol) or a lost one fails here; and every exported symbol must be
# a function declared HR_API in the installed headers, every such declaration exported (the
# documented API, no more, no less). Adding a public function: add it to tests/data/abi/LIB.symbols
# in that commit (debian/rules makes the packages' symbols files from these lists too).
set -euo pipefail
BUILD=${HR_BUILD_DIR:-build}
SRC=${HR_SRC_DIR:-.}
[ -f "$BUILD/CMakeCache.txt" ] || { echo "SKIP: no build at $BUILD"; exit 77; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
# runtime + dev: the library's own components (a tree built only in part installs these too)
for c in runtime dev; do cmake --install "$BUILD" --prefix "$T/p" --component $c; done >/dev/null
fail=0
exported_all="$T/exported_all"; : >"$exported_all"
for lib in libheadroom libheadroom_io; do
  so=$(find "$T/p" -name "$lib.so" | head -1)
  [ -n "$so" ] || { echo "FAIL: $lib.so was not installed"; fail=1; continue; }
  nm -D --defined-only "$so" | awk '{print $3}' | sort >"$T/$lib.got"
  cat "$T/$lib.got" >>"$exported_all"
  want="$SRC/tests/data/abi/$lib.symbols"
  if ! diff -u "$want" "$T/$lib.got" >"$T/$lib.diff"; then
    echo "FAIL: $lib.so exports differ from $want (+ exported, not in the list; - listed, not exported):"
    tail -n +3 "$T/$lib.diff" | grep '^[-+]'
    fail=1
  else
    echo "ok: $lib.so exports the $(wc -l <"$want") listed symbols"
  fi
  # No internals, nothing of XNNPACK / pthreadpool / cpuinfo, only functions (type T).
  bad=$(nm -D --defined-only "$so" | awk '$2 != "T" || $3 !~ /^hr_/ || $3 ~ /^hr__/' || true)
  [ -z "$bad" ] || { echo "FAIL: $lib.so exports non-API symbols:"; echo "$bad"; fail=1; }
done
# The documented API: every function declared HR_API in the installed headers.
cat "$T/p"/include/headroom.h "$T/p"/include/headroom/*.h | tr '\n' ' ' | grep -o 'HR_API [^;(]*(' \
  | grep -o 'hr_[a-z0-9_]* *($' | tr -d ' (' | sort -u >"$T/declared"
sort -u "$exported_all" -o "$exported_all"
[ "$(wc -l <"$T/declared")" -gt 100 ] || { echo "FAIL: found only $(wc -l <"$T/declared") HR_API declarations"; fail=1; }
undoc=$(comm -13 "$T/declared" "$exported_all")
[ -z "$undoc" ] || { echo "FAIL: exported but not declared HR_API in an installed header:"; echo "$undoc"; fail=1; }
unexp=$(comm -23 "$T/declared" "$exported_all")
[ -z "$unexp" ] || { echo "FAIL: declared HR_API in an installed header but not exported:"; echo "$unexp"; fail=1; }
[ $fail -eq 0 ] && echo "PASS: $(wc -l <"$exported_all") exported symbols = the HR_API declarations = the kept lists"
exit $fail
