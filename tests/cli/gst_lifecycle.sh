#!/usr/bin/env bash
# The `headroom` element's life cycle in an instrumented driver (gst/lifecycle.c, built with the
# project: under the ASan build it is ASan + UBSan, leaks checked at exit): PLAYING, a caps change
# mid-stream (160x96 -> 128x72), NULL -> PLAYING again, RGBA with the matte as alpha, a missing
# model failing the state change with an error on the bus, GRAY8 refused with a message naming the
# formats. Every output buffer carries a HeadroomMatteMeta of its size (read in C with
# gst_buffer_get_custom_meta); on RGBA its matte equals the output's A channel byte for byte.
set -euo pipefail
BUILD=${HR_BUILD_DIR:-build}
MODEL=${HR_MODEL_DIR:-models}/rvm.json
[ -f "$BUILD/gst/libgstheadroom.so" ] || { echo "FAIL: no $BUILD/gst/libgstheadroom.so (GStreamer development packages missing at configure?)"; exit 1; }
[ -x "$BUILD/gst/hr_gst_lifecycle" ] || { echo "FAIL: no $BUILD/gst/hr_gst_lifecycle (gstreamer-app-1.0 missing at configure?)"; exit 1; }
[ -f "$MODEL" ] || { echo "FAIL: no model $MODEL"; exit 1; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
# the plugin is scanned in this process (an instrumented plugin cannot load in the uninstrumented
# gst-plugin-scanner); GStreamer's own allocations that live to exit are not the element's
export GST_PLUGIN_PATH=$BUILD/gst GST_REGISTRY=$T/registry.bin GST_REGISTRY_FORK=no
# LeakSanitizer: GLib's interned strings and what its library constructors allocate live until
# exit by design (not the element's); nothing else is suppressed. The quark table leaks its old
# array on purpose each time it grows (readers may still hold it): whether a run crosses a growth
# depends on how many strings every scanned plugin interns (one more element property made
# g_intern_static_string, from another plugin's param spec, cross one: 32768 bytes)
printf 'leak:g_intern_string\nleak:g_intern_static_string\nleak:g_quark_from_string\nleak:g_quark_from_static_string\nleak:_dl_init\n' > "$T/lsan.supp"
export LSAN_OPTIONS="suppressions=$T/lsan.supp:print_suppressions=0"
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}fast_unwind_on_malloc=0"   # whole stacks, so the suppressions match
"$BUILD/gst/hr_gst_lifecycle" "$MODEL" 2>&1 | grep -v "^bus warning" 
exit "${PIPESTATUS[0]}"
