#!/usr/bin/env bash
# Install everything headroom needs on Debian 12 (run as root), fetch and verify the models,
# install the TF.js reference runtime from npm, and build. Idempotent: a second run is quick.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
pkgs=(build-essential clang cmake pkg-config ca-certificates
      libxnnpack-dev libpthreadpool-dev libcpuinfo-dev libcjson-dev
      libspng-dev libpng-dev libturbojpeg0-dev libjpeg-dev
      libavformat-dev libavcodec-dev libavutil-dev libswscale-dev ffmpeg
      opencv-doc chromium libvulkan-dev glslc mesa-vulkan-drivers vulkan-tools vulkan-validationlayers
      debhelper dpkg-dev lintian fakeroot
      libgstreamer1.0-dev libgstreamer-plugins-base1.0-dev gstreamer1.0-tools gstreamer1.0-plugins-base
      gstreamer1.0-plugins-good gstreamer1.0-libav gir1.2-gst-plugins-base-1.0 python3-gi python3-numpy)
command -v node >/dev/null 2>&1 || pkgs+=(nodejs)
command -v npm >/dev/null 2>&1 || pkgs+=(npm)
missing=()
for p in "${pkgs[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
"$here/scripts/fetch-models.sh"
if [ ! -d "$here/ref/node_modules/@tensorflow/tfjs-backend-wasm" ]; then
  echo "setup: installing the TF.js reference runtime (npm ci in ref/)"
  (cd "$here/ref" && npm ci --silent --no-audit --no-fund)
fi
cmake -S "$here" -B "$here/build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$here/build" -j"$(nproc)"
echo "setup: done (build/headroom)"
