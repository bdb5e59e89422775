#!/usr/bin/env bash
# Render a headroom HTML run report to a PNG screenshot with headless Chromium (no network, throwaway profile).
# usage: scripts/render_report.sh REPORT.html OUT.png [WIDTH,HEIGHT]   (default 1280,2000)
set -euo pipefail
if [ $# -lt 2 ]; then echo "usage: $0 REPORT.html OUT.png [WIDTH,HEIGHT]" >&2; exit 2; fi
html=$(realpath "$1"); out=$(realpath -m "$2"); size=${3:-1280,2000}
chromium=${HR_CHROMIUM:-$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)}
if [ -z "$chromium" ]; then echo "$0: chromium not found (apt-get install -y chromium)" >&2; exit 77; fi
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
HOME="$profile" timeout 180 "$chromium" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
  --disable-background-networking --disable-component-update --disable-sync \
  --user-data-dir="$profile" --screenshot="$out" --window-size="$size" "file://$html" >"$profile/log" 2>&1 ||
  { cat "$profile/log" >&2; exit 1; }
[ -s "$out" ] || { echo "$0: no screenshot written" >&2; exit 1; }
echo "$out"
