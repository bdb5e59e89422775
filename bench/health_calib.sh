#!/usr/bin/env bash
# Build bench/health_calib (record / replay of real RVM output for health calibration) against a
# build folder's libraries. Usage: bench/health_calib.sh [BUILD_DIR] -> BUILD_DIR/health_calib
set -euo pipefail
cd "$(dirname "$0")/.."
B=${1:-build}
cc -O2 -Wall -std=c11 -D_GNU_SOURCE -Iinclude -Isrc -o "$B/health_calib" bench/health_calib.c \
  "$B/libheadroom_io.a" "$B/libheadroom.a" \
  $(pkg-config --libs spng libturbojpeg libavformat libavcodec libavutil libswscale libcjson) \
  -lXNNPACK -lpthreadpool -lpthread -lm
echo "$B/health_calib"
