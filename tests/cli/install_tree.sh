#!/usr/bin/env bash
# headroom as an installed library: `cmake --install` into a temporary prefix, then
# examples/alpha_frames.c built out of tree against it three ways — pkg-config (shared:
# libheadroom_io.so.0 must be NEEDED), pkg-config --static (from a copy of the prefix without the
# .so files, which also proves the .pc files relocatable: no libheadroom*.so may be NEEDED), and
# CMake's find_package(headroom CONFIG) over examples/CMakeLists.txt (two_sessions.c as well). Each
# writes the alpha of 5 sam2-bedroom frames; each must equal the in-tree CLI's `run --raw` byte for
# byte. Last, the installed CLI, with models put in an XDG cache by the installed
# headroom-fetch-models --from, run from an empty cwd with `--model rvm`, must give them too.
set -euo pipefail
BUILD=${HR_BUILD_DIR:-build}
SRC=${HR_SRC_DIR:-.}
CLI=${HR_CLI:-$BUILD/headroom}
MODELS=${HR_MODEL_DIR:-$SRC/models}
FRAMES=${HR_DATA_DIR:-$SRC/../shared/data}/sam2-bedroom/frames
[ -x "$CLI" ] || { echo "SKIP: no CLI at $CLI"; exit 77; }
[ -f "$MODELS/rvm.json" ] || { echo "SKIP: no model $MODELS/rvm.json"; exit 77; }
[ -d "$FRAMES" ] || { echo "SKIP: no frames $FRAMES"; exit 77; }
[ -f "$BUILD/libheadroom.so" ] || { echo "FAIL: no $BUILD/libheadroom.so (the shared library is part of the default build)"; exit 1; }

T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
N=5 SIZE=256x144 RATIO=0.5
# The ASan build's libraries need the sanitizer runtime in whatever links them.
SAN=()
if grep -q '^HR_SANITIZE:BOOL=ON' "$BUILD/CMakeCache.txt" 2>/dev/null; then SAN=(-fsanitize=address,undefined); fi
CFLAGS_EX=(-std=c11 -O2 -Wall -Wextra -Werror "${SAN[@]}")

# runtime + dev: the library's own components (a tree built only in part installs these too)
for c in runtime dev; do cmake --install "$BUILD" --prefix "$T/p" --component $c; done >"$T/install.log"
P="$T/p"
LIBDIR=$(dirname "$(find "$P" -name headroom.pc -path '*/pkgconfig/*' | head -1)")/..
LIBDIR=$(cd "$LIBDIR" && pwd)

fail=0
# 1. pkg-config, shared.
export PKG_CONFIG_PATH="$LIBDIR/pkgconfig"
gcc "${CFLAGS_EX[@]}" "$SRC/examples/alpha_frames.c" -o "$T/ex_shared" \
    $(pkg-config --cflags --libs headroom-io) -Wl,-rpath,"$LIBDIR"
# (outputs captured first: with pipefail, grep -q closing the pipe early would fail the pipeline)
dyn=$(readelf -d "$T/ex_shared")
grep -q 'NEEDED.*libheadroom_io\.so\.0' <<<"$dyn" || { echo "FAIL: pkg-config shared build does not need libheadroom_io.so.0"; fail=1; }
grep -q 'NEEDED.*libheadroom\.so\.0' <<<"$dyn" || { echo "FAIL: pkg-config shared build does not need libheadroom.so.0"; fail=1; }

# 2. pkg-config --static, from a moved copy of the prefix without the shared libraries.
cp -a "$P" "$T/ps"
find "$T/ps" -name 'libheadroom*.so*' -delete
export PKG_CONFIG_PATH="$T/ps/${LIBDIR#"$P"/}/pkgconfig"
gcc "${CFLAGS_EX[@]}" "$SRC/examples/alpha_frames.c" -o "$T/ex_static" \
    $(pkg-config --static --cflags --libs headroom-io)
dyn=$(readelf -d "$T/ex_static")
if grep -q 'NEEDED.*libheadroom' <<<"$dyn"; then echo "FAIL: the --static build needs a libheadroom*.so"; fail=1; fi

# 3. find_package(headroom CONFIG), examples/CMakeLists.txt.
unset PKG_CONFIG_PATH
cmake -S "$SRC/examples" -B "$T/bex" -DCMAKE_PREFIX_PATH="$P" -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_C_FLAGS="${SAN[*]}" >"$T/cmake.log" || { cat "$T/cmake.log"; exit 1; }
cmake --build "$T/bex" -j2 >"$T/build.log" || { cat "$T/build.log"; exit 1; }
dyn=$(readelf -d "$T/bex/two_sessions")
grep -q 'NEEDED.*libheadroom_io\.so\.0' <<<"$dyn" || { echo "FAIL: find_package build of two_sessions does not need libheadroom_io.so.0"; fail=1; }

# The reference: the in-tree CLI (static libraries), one thread, the ladder off.
"$CLI" run --model "$MODELS/rvm.json" --input "$FRAMES" --out "$T/cli" --frames $N --size $SIZE \
       --ratio $RATIO --threads 1 --fixed --raw --no-alpha --quiet
for ex in ex_shared ex_static bex/alpha_frames; do
  mkdir -p "$T/out_${ex//\//_}"
  "$T/$ex" "$MODELS/rvm.json" "$FRAMES" "$T/out_${ex//\//_}" $N $SIZE $RATIO 1 >"$T/ex.log"
done

# 4. The installed CLI from an empty cwd, models by name from the cache the installed fetcher fills.
mkdir -p "$T/cwd" "$T/xdg"
XDG_CACHE_HOME="$T/xdg" "$P/bin/headroom-fetch-models" --from "$MODELS" >"$T/fetch.log"
[ -f "$T/xdg/headroom/models/rvm.bin" ] || { echo "FAIL: headroom-fetch-models --from left no rvm.bin in the cache"; fail=1; }
(cd "$T/cwd" && env -u HR_MODEL_DIR XDG_CACHE_HOME="$T/xdg" "$P/bin/headroom" run --model rvm --input "$FRAMES" \
   --out "$T/inst" --frames $N --size $SIZE --ratio $RATIO --threads 1 --fixed --raw --no-alpha --quiet)
ver=$("$P/bin/headroom" --version)
grep -q "^headroom $("$CLI" --version | cut -d' ' -f2) (XNNPACK .*, FFmpeg [0-9]" <<<"$ver" \
  || { echo "FAIL: installed headroom --version: $("$P/bin/headroom" --version)"; fail=1; }

for i in $(seq 0 $((N - 1))); do
  f=$(printf '%06d.pha.f32' "$i")
  [ -s "$T/cli/raw/$f" ] || { echo "FAIL: the CLI wrote no raw/$f"; fail=1; continue; }
  for out in out_ex_shared out_ex_static out_bex_alpha_frames inst/raw; do
    cmp -s "$T/cli/raw/$f" "$T/$out/$f" || { echo "FAIL: $out/$f differs from the in-tree CLI's"; fail=1; }
  done
done
[ $fail -eq 0 ] && echo "PASS: installed tree: pkg-config shared, --static and find_package builds and the installed CLI give the in-tree CLI's $N mattes"
exit $fail
