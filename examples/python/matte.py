#!/usr/bin/python3
"""headroom from Python through GStreamer (PyGObject), no binding of our own: a pipeline with the
`headroom` element and an appsink; each frame's matte comes out as a numpy array, the element's
health messages (headroom-health) and stats (headroom-stats) from the bus.

    /usr/bin/python3 examples/python/matte.py VIDEO [--frames N] [--ratio R] [--model rvm] [--out DIR]
                                              [--from meta|alpha] [--composite blur] [--save-frames DIR]

--from meta (the default): the element composites as asked (--composite, default blur) and each
output buffer carries the matte as a GstCustomMeta "HeadroomMatteMeta": its structure holds the
matte (a GstBuffer, GRAY8, width x height), the health state, confidence, output-ok and what the
composite shows; the picture itself (I420) is the composite (--save-frames DIR keeps its Y plane
as DIR/NNNNNN.npy). --from alpha: the element runs with composite=alpha on I420, which writes the
8-bit matte itself into the Y plane (0 = background, 255 = person), read with the stride the caps
give. With --out DIR each matte is saved as DIR/NNNNNN.npy (H x W uint8). Needs Debian's
python3-gi, gir1.2-gst-plugins-base-1.0, python3-numpy, and the element on GST_PLUGIN_PATH
(build/gst)."""
import argparse
import os
import sys

import gi
gi.require_version("Gst", "1.0")
gi.require_version("GstApp", "1.0")
gi.require_version("GstVideo", "1.0")
from gi.repository import Gst, GstApp, GstVideo  # noqa: E402
import numpy as np  # noqa: E402


def bus_messages(bus, health, stats):
    """Take every message waiting on the bus: health and stats collected, errors raised."""
    while True:
        m = bus.pop()
        if m is None:
            return
        if m.type == Gst.MessageType.ERROR:
            err, dbg = m.parse_error()
            raise RuntimeError(f"{m.src.get_name()}: {err.message}")
        s = m.get_structure()
        if m.type == Gst.MessageType.ELEMENT and s is not None:
            if s.get_name() == "headroom-health":
                h = {k: s.get_value(k) for k in ("frame", "state", "reason", "confidence", "shows")}
                health.append(h)
                print(f"health at frame {h['frame']}: {h['state']} ({h['reason']}), confidence {h['confidence']:.2f}, shows {h['shows']}")
            elif s.get_name() == "headroom-stats":
                stats.append({k: s.get_value(k) for k in ("frames", "fps", "infer-ms", "process-ms")})


def read_meta(buf):
    """The HeadroomMatteMeta of an output buffer: (matte as H x W uint8 or None, a short verdict)."""
    meta = buf.get_custom_meta("HeadroomMatteMeta")
    if meta is None:
        raise RuntimeError("an output buffer without HeadroomMatteMeta (attach-matte=false?)")
    s = meta.get_structure()
    verdict = f"; meta: {s.get_value('state')}, confidence {s.get_value('confidence'):.2f}, shows {s.get_value('shows')}"
    if not s.has_field("matte"):
        return None, verdict
    mb = s.get_value("matte")
    ok, mi = mb.map(Gst.MapFlags.READ)
    if not ok:
        raise RuntimeError("cannot map the matte")
    try:
        w, h = s.get_value("width"), s.get_value("height")
        return np.frombuffer(mi.data, np.uint8, count=w * h).reshape(h, w).copy(), verdict
    finally:
        mb.unmap(mi)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("video")
    ap.add_argument("--frames", type=int, default=0, help="stop after N frames (0: the whole video)")
    ap.add_argument("--ratio", type=float, default=0.25)
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--model", default="rvm")
    ap.add_argument("--out", help="save each matte as OUT/NNNNNN.npy")
    ap.add_argument("--from", dest="source", choices=("meta", "alpha"), default="meta",
                    help="read the matte from the buffers' HeadroomMatteMeta (default) or from composite=alpha's Y plane")
    ap.add_argument("--composite", default="blur", help="with --from meta: what the picture shows (blur, color:RRGGBB, ...)")
    ap.add_argument("--save-frames", help="with --from meta: save each composite's Y plane as DIR/NNNNNN.npy")
    a = ap.parse_args()
    Gst.init(None)
    if Gst.ElementFactory.find("headroom") is None:
        sys.exit("matte.py: no `headroom` element: set GST_PLUGIN_PATH to the build's gst/ folder")
    limit = f"identity eos-after={a.frames + 2} ! " if a.frames else ""
    pipe = Gst.parse_launch(
        f"filesrc location=\"{a.video}\" ! decodebin ! videoconvert ! video/x-raw,format=I420 ! {limit}"
        f"headroom model={a.model} ratio={a.ratio} threads={a.threads} "
        f"composite={'alpha' if a.source == 'alpha' else a.composite} ! "
        "appsink name=sink sync=false max-buffers=4")
    sink = pipe.get_by_name("sink")
    bus = pipe.get_bus()
    for d in (a.out, a.save_frames):
        if d:
            os.makedirs(d, exist_ok=True)
    health, stats, n = [], [], 0
    pipe.set_state(Gst.State.PLAYING)
    try:
        while not a.frames or n < a.frames:
            sample = sink.try_pull_sample(60 * Gst.SECOND)
            bus_messages(bus, health, stats)
            if sample is None:
                break   # end of stream (or an error, raised above)
            info = GstVideo.VideoInfo.new_from_caps(sample.get_caps())
            buf = sample.get_buffer()
            ok, mi = buf.map(Gst.MapFlags.READ)
            if not ok:
                raise RuntimeError("cannot map a buffer")
            try:
                w, h, stride, off = info.width, info.height, info.stride[0], info.offset[0]
                y = np.frombuffer(mi.data, np.uint8, count=stride * h, offset=off).reshape(h, stride)
                picture_y = y[:, :w].copy()   # composite=alpha: the matte, 0..255
            finally:
                buf.unmap(mi)
            if a.source == "meta":
                matte, verdict = read_meta(buf)
                if a.save_frames:
                    np.save(os.path.join(a.save_frames, f"{n:06d}.npy"), picture_y)
                if matte is None:
                    print(f"frame {n}: no matte ({verdict})")
                    n += 1
                    continue
            else:
                matte, verdict = picture_y, ""
            if a.out:
                np.save(os.path.join(a.out, f"{n:06d}.npy"), matte)
            print(f"frame {n}: {w}x{h}, person {100.0 * (matte > 127).mean():.1f}% of the picture{verdict}")
            n += 1
        bus_messages(bus, health, stats)
    finally:
        pipe.set_state(Gst.State.NULL)
    if stats:
        s = stats[-1]
        print(f"stats: {s['frames']} frames, {s['fps']:.1f} fps, model {s['infer-ms']:.1f} ms a frame")
    print(f"matte.py: {n} mattes, {len(health)} health messages")
    return 0 if n else 1


if __name__ == "__main__":
    sys.exit(main())
