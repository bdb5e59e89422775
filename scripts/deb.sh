#!/usr/bin/env bash
# Build headroom's Debian packages from a copy of the tree (debian/, dpkg-buildpackage -b), check
# them with lintian, install them, and prove the installed files work alone: the build tree moved
# away, an empty cwd and HOME, models put into the user cache by the installed
# headroom-fetch-models (--from a copy of the tree's models/, so no network), `headroom run --model
# rvm` on vtest.avi (with an overlay video: FFmpeg through its module) and on raw frames (FFmpeg
# never loaded), the GStreamer element (model=rvm) on 3 test frames, a program built against libheadroom-dev
# with pkg-config; then remove and purge
# the packages and check that none of their files remain. Needs root (dpkg) and the build
# dependencies (scripts/setup.sh installs them). Leaves the .debs and lintian's output in OUT.
#
#   usage: scripts/deb.sh [OUT]      (default OUT: a temporary folder, removed at the end)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
VTEST=/usr/share/doc/opencv-doc/examples/data/vtest.avi
MODELS=${HR_MODEL_DIR:-$here/models}
[ "$(id -u)" = 0 ] || { echo "deb: needs root (dpkg -i / -r)"; exit 1; }
[ -f "$VTEST" ] || { echo "deb: no $VTEST (opencv-doc)"; exit 1; }
[ -f "$MODELS/rvm.json" ] || { echo "deb: no $MODELS/rvm.json (scripts/fetch-models.sh)"; exit 1; }
pkgs=(headroom gstreamer1.0-headroom libheadroom-dev libheadroom-io0 libheadroom0)
for p in "${pkgs[@]}"; do
  if dpkg -s "$p" >/dev/null 2>&1; then echo "deb: $p is installed already; remove it first"; exit 1; fi
done
T=$(mktemp -d /tmp/headroom-deb.XXXXXX)
OUT=${1:-$T/out}
mkdir -p "$OUT"
APT=(apt-get -o DPkg::Lock::Timeout=300 -y -q)
installed=0
cleanup() {
  if [ $installed = 1 ]; then "${APT[@]}" purge "${pkgs[@]}" >/dev/null 2>&1 || true; fi
  rm -rf "$T"
}
trap cleanup EXIT
t0=$(date +%s)

# 1. A copy of the tree (tracked files as they are in the working tree), version checked.
mkdir -p "$T/src/headroom"
# HR_DEB_UNTRACKED=1 adds the untracked files git does not ignore (to try uncommitted work).
ls_opts=(); [ "${HR_DEB_UNTRACKED:-0}" = 1 ] && ls_opts=(-co --exclude-standard)
(cd "$here" && git ls-files -z "${ls_opts[@]}" | tar --null -T - -cf -) | tar -xf - -C "$T/src/headroom"
ver=$(sed -n 's/^project(headroom VERSION \([0-9.]*\).*/\1/p' "$here/CMakeLists.txt")
debver=$(cd "$T/src/headroom" && dpkg-parsechangelog -S Version)
[ "$ver" = "$debver" ] || { echo "deb: debian/changelog says $debver, CMakeLists.txt project(VERSION) $ver: add a changelog entry (dch -v $ver)"; exit 1; }

# 2. Build (binary packages only, unsigned) and lint.
(cd "$T/src/headroom" && DEB_BUILD_OPTIONS="parallel=${HR_DEB_JOBS:-2}" dpkg-buildpackage -b -us -uc) >"$OUT/build.log" 2>&1 \
  || { tail -40 "$OUT/build.log"; echo "deb: dpkg-buildpackage failed (log: $OUT/build.log)"; exit 1; }
t1=$(date +%s)
cp "$T"/src/*.deb "$T"/src/*.changes "$T"/src/*.buildinfo "$OUT"/
echo "deb: built $(cd "$OUT" && ls ./*.deb | tr '\n' ' ')in $((t1 - t0)) s"
lintian --info --display-info --pedantic "$OUT"/*.changes >"$OUT/lintian.txt" 2>&1 || true
echo "deb: lintian (E: errors, W: warnings, I: info, P: pedantic; $OUT/lintian.txt):"
grep -E "^[EWIP]: " "$OUT/lintian.txt" | sort -u || echo "  (nothing)"
lint_err=$(grep -c '^[EW]: ' "$OUT/lintian.txt" || true)
t2=$(date +%s)

# 3. Install them all, the way a user would.
# (paths named *headroom* only: other software may be installed meanwhile)
before=$(mktemp -p "$T"); find /usr /etc -xdev -ipath '*headroom*' 2>/dev/null | sort >"$before"
debs=(); for p in "${pkgs[@]}"; do debs+=("$OUT/${p}_${ver}_$(dpkg --print-architecture).deb"); done
"${APT[@]}" install --no-install-recommends "${debs[@]}" >"$OUT/install.log" 2>&1 \
  || { tail -20 "$OUT/install.log"; echo "deb: apt-get install failed"; exit 1; }
installed=1
for p in "${pkgs[@]}"; do dpkg -L "$p"; done | sort -u >"$T/files"

# 4. From the installed files alone: the build tree moved away, empty cwd and HOME, a clean env.
mv "$T/src" "$T/src.moved"
mkdir -p "$T/seed" "$T/home" "$T/cwd"
cp "$MODELS"/{rvm,meet,selfie}.{json,bin} "$T/seed/"
fail=0
run() { (cd "$T/cwd" && env -i PATH=/usr/bin:/bin HOME="$T/home" "$@"); }
run headroom --version | tee "$T/version"
grep -q "^headroom $ver (XNNPACK .*, FFmpeg [0-9]" "$T/version" || { echo "FAIL: headroom --version"; fail=1; }
run headroom-fetch-models --from "$T/seed"
[ -f "$T/home/.cache/headroom/models/rvm.bin" ] || { echo "FAIL: no models in ~/.cache/headroom/models"; fail=1; }
run headroom run --model rvm --input "$VTEST" --out "$T/cwd/out" --frames 5 --size 384x288 --overlay "$T/cwd/ov.mp4" --quiet
n=$(find "$T/cwd/out/alpha" -name '*.png' | wc -l)
[ "$n" = 5 ] || { echo "FAIL: headroom run wrote $n alpha PNGs, not 5"; fail=1; }
[ -s "$T/cwd/ov.mp4" ] || { echo "FAIL: headroom run --overlay wrote no overlay video"; fail=1; }
# FFmpeg is a module (LIBDIR/headroom/headroom-io-ffmpeg.so, in libheadroom-io0): loaded by the
# video run above, never by a raw-frames run (the loader's log lists every object it maps).
grep -q '/headroom/headroom-io-ffmpeg\.so$' "$T/files" || { echo "FAIL: no headroom-io-ffmpeg.so installed"; fail=1; }
head -c $((96 * 64 * 3)) /dev/zero >"$T/cwd/v.nv12"
run env LD_DEBUG=files LD_DEBUG_OUTPUT="$T/cwd/ld" headroom run --model rvm --input v.nv12 --input-format nv12:96x64 \
  --out "$T/cwd/raw" --quiet
if grep -hE 'file=[^ ]*(libavcodec|libavformat|libswscale|headroom-io-ffmpeg)' "$T"/cwd/ld.*; then
  echo "FAIL: the installed CLI loads FFmpeg for raw frames"; fail=1
fi
if command -v gst-inspect-1.0 >/dev/null; then
  gi=$(run gst-inspect-1.0 headroom 2>&1 || true)
  grep -q 'libgstheadroom.so' <<<"$gi" || { echo "FAIL: gst-inspect-1.0 does not find the installed headroom element:"; echo "$gi" | head -5; fail=1; }
  run gst-launch-1.0 -q videotestsrc num-buffers=3 ! video/x-raw,format=NV12,width=320,height=240 \
    ! headroom model=rvm ! fakesink || { echo "FAIL: gst-launch-1.0 ... ! headroom model=rvm ! fakesink"; fail=1; }
fi
cp "$T/src.moved/headroom/examples/alpha_frames.c" "$T/cwd/"
run sh -c 'gcc -std=c11 -Wall -Wextra -Werror alpha_frames.c -o alpha_frames $(pkg-config --cflags --libs headroom-io)'
mkdir -p "$T/cwd/ex"
run ./alpha_frames "$T/home/.cache/headroom/models/rvm.json" "$VTEST" ex 2 384x288
[ "$(ls "$T/cwd/ex" | wc -l)" = 2 ] || { echo "FAIL: the program built against libheadroom-dev wrote no mattes"; fail=1; }
deps=$(ldd "$T/cwd/alpha_frames")
grep -q 'libheadroom_io\.so\.0 => /\(usr/\)\{0,1\}lib/' <<<"$deps" || { echo "FAIL: alpha_frames does not use the installed libheadroom_io.so.0"; fail=1; }
if [ -n "$(find /usr /etc -xdev -name 'rvm.bin' 2>/dev/null)" ]; then
  echo "FAIL: a model landed under /usr"; fail=1
fi
t3=$(date +%s)

# 5. Remove and purge: every file the packages installed is gone, nothing else changed in /usr, /etc.
"${APT[@]}" purge "${pkgs[@]}" >"$OUT/remove.log" 2>&1 || { tail -20 "$OUT/remove.log"; echo "deb: apt-get purge failed"; exit 1; }
installed=0
left=$(while read -r f; do [ -f "$f" ] || [ -L "$f" ] && echo "$f"; done <"$T/files" || true)
[ -z "$left" ] || { echo "FAIL: left after purge:"; echo "$left"; fail=1; }
after=$(mktemp -p "$T"); find /usr /etc -xdev -ipath '*headroom*' 2>/dev/null | sort >"$after"
extra=$(comm -13 "$before" "$after" || true)
[ -z "$extra" ] || { echo "FAIL: new paths in /usr or /etc after purge:"; echo "$extra" | head -20; fail=1; }
for p in "${pkgs[@]}"; do dpkg -s "$p" >/dev/null 2>&1 && { echo "FAIL: $p still known to dpkg"; fail=1; }; done
t4=$(date +%s)
echo "deb: times: build $((t1 - t0)) s, lintian $((t2 - t1)) s, install + run $((t3 - t2)) s, purge $((t4 - t3)) s"
[ "$lint_err" = 0 ] || { echo "FAIL: lintian reports $lint_err errors or warnings"; fail=1; }
[ $fail = 0 ] && echo "PASS: the .debs build, install, run vtest.avi from the installed files alone, and purge clean"
exit $fail
