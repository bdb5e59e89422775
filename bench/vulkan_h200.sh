#!/usr/bin/env bash
# RVM on the Vulkan backend: per-frame time of NV12 upload + network + guided-filter tail + alpha
# read-back (hr_session_push wall time), GPU time from timestamp queries, GPU time per op class,
# and alpha against XNNPACK on the same frames.
#
#   bench/vulkan_h200.sh prepare        here (Debian 12 with the build deps): builds build-h13
#                                       (Release), the bench program .gl/vkbench linked against
#                                       libheadroom.a, and gathers what the GPU machine lacks in .gl/
#                                       (Vulkan/GL loader .debs, XNNPACK/pthreadpool/cpuinfo/cJSON .so)
#   bench/vulkan_h200.sh run [SIZES]    on the GPU machine (the `run` tool, carry [".gl", "models"]):
#                                       unpacks the loaders, runs every size; SIZES default
#                                       "1920x1440@0.25 1920x1440@0.5 1920x1080@0.25"
#   bench/vulkan_h200.sh run-xq         on the GPU machine (same carry): the frame beside the network
#                                       (HR_VK_XQ=1) against without, U8=1, 1920x1440 r0.25 with the
#                                       frames registered (REG=1) twice alternating, then not
#                                       registered (REG=0), then r0.5 and 1920x1080 with it; one JSON
#                                       line a run ("beside": 1 = a transfer queue family of its own)
#   bench/vulkan_h200.sh run-live       on the GPU machine (same carry): the live loop as a user runs it,
#                                       `headroom run --backend vulkan --realtime --ratio 0.25` on a
#                                       1920x1440 NV12 @60 replay of sam2-bedroom (LIVE_FRAMES, default
#                                       400: the 200 frames there and back, bilinear from the 960x540
#                                       JPEGs, made on that machine by .gl/nv12gen), alpha PNGs and
#                                       telemetry written; prints the rungs, delivered fps, drops,
#                                       latency and device_ms p50/p99, PNGs vs telemetry lines; copies
#                                       the log, the telemetry and 2 PNGs to $OUT when set.
#                                       `prepare` links the CLI for it without FFmpeg (.gl/headroom:
#                                       FFmpeg's 130 libraries are not there; the av* calls, video
#                                       sources and sinks only, become stand-ins that exit) and brings
#                                       libspng and libturbojpeg.
#   bench/vulkan_h200.sh run-quality    on the GPU machine (same carry): issue 15's done-when 1 on 2 of
#                                       the host's cores (.gl/live_quality --cpus A,B; bedroom and vtest
#                                       400-639 made there from JPEGs by .gl/nv12gen, video range)
# Env: FRAMES (timed frames, default 300), WARMUP (default 20), CHECK (frames compared with XNNPACK,
# default 3), JSONL (a file to append the JSON lines to; default stdout only), BUILD (prepare: the
# build dir, default build-h18), HR_VK_FP16=0/1 (fp32 or fp16 storage; default fp32 since the
# fp16 round below), HR_VK_TRACE=1 (run-live: the backend's copy / submit / GPU times per frame),
# LIVE_FRAMES, LIVE_ARGS (more `headroom run` options), LIVE_CLI (another CLI binary), VKBENCH (another
# bench binary, e.g. one built from an older commit, for A/B in one call).
# HR_VK_COMPILE_THREADS=N: the pipelines compiled at create over N threads (default the CPUs the
# process may use, at most 16; 1: one after another, as before 2026-12-02); HR_VK_VERBOSE=1 prints
# "N pipelines compiled in X ms over T threads" and the dispatch count at create (stderr).
# Backend switches for A/B in one run (fp32): HR_VK_VIEWS=0 (views off), HR_VK_FOLDS=0 (the
# 2026-12-02 round's folds off: HR_VK_FGFLR, HR_VK_VIEWMUL, HR_VK_SUBFOLD, HR_VK_MULCAT, =0 each), HR_VK_SPLIT=0, HR_VK_SLOTS=0, HR_VK_FRAME=host, HR_VK_COPY_THREADS=N,
# HR_VK_DIRECT=0 (the direct 3x3 kernels, whole and split, not offered to the tuner: as before 2026-12-06),
# HR_VK_MEANSK=8 (long means 8 outputs a workgroup, as before 2026-12-03), HR_VK_RESIZE4=0 (resizes one
# channel a thread), HR_VK_DW4=0 (the depthwise kernel of four pixels a thread not offered to the tuner).
# HR_VK_XQ=1: the frame beside the network: the ingest reads the frame where it lies (imported memory
# with REG=1, else the staging buffer) while a transfer queue copies it to the device for the tail,
# which alone waits for it (a semaphore). What it was for: the copy was ~0.11 ms of the 2.11 ms
# frame, before the network. Timed 2026-12-05 (`run-xq`) on an NVIDIA H100 80GB HBM3 (driver
# 580.159.04; the device lent that day), U8=1, 300 frames, medians (wall / GPU ms):
#   1920x1440 r0.25 REG=1, alternating: XQ=0 2.143 / 1.994, 2.134 / 1.982;
#                                       XQ=1 2.149 / 2.065 (first, cold), 2.164 / 2.066, 2.150 / 2.058
#   REG=0: XQ=0 2.320 / 1.981 (CPU copy 0.198), XQ=1 2.395 / 2.078
#   with XQ=1: r0.5 5.099 / 4.989; 1920x1080 r0.25 1.774 / 1.679 (transfer queue family 1, every
#   frame took the path). The copy does overlap (wall - GPU 0.09 against 0.15 ms), but the ingest's
#   reads of the frame over PCIe add ~0.07 ms of GPU: the same bytes cross the same link, now on
#   the critical path inside the ingest. No gain: off. Alpha vs XNNPACK unchanged (3.37e-5 / 3.3e-3,
#   u8 bytes within 1). The same call, without XQ (REG=1 U8=1): GPU ms by class conv3x3 0.865,
#   conv1x1 0.721, depthwise 0.209, elementwise 0.171, copy 0.120, resize 0.087, refiner 0.064;
#   run-live: 400 of 400 frames at 59.99 fps, none dropped, all at 480x360, latency p50 8.3 / p99
#   10.8 / max 12.1 ms, device_ms 4.73 / 5.67, 400 PNGs = 400 telemetry lines.
# REG=1: the frames' memory registered with the session (hr_session_register_memory): the GPU copies
# each frame from where it lies (VK_EXT_external_memory_host), the CPU copies nothing.
# U8=1: the session gives the 8-bit matte (hr_session_params.alpha_u8; the tail writes it into the
# read-back buffer, a quarter of the bytes over PCIe); the check then also reports the largest byte
# difference from XNNPACK's matte quantised the same way (u8_max_byte_diff).
#
# Measured 2026-12-01 on one NVIDIA H200 (driver 580.159.04, Vulkan through Debian's loader), RVM,
# NV12 frames of the sam2-bedroom clip scaled to size, 300 frames after 20 warm-up, per frame
# (hr_session_push wall time: frame rows into staging + upload + network + tail + alpha read-back).
# Default (fp16 storage: activations and state fp16, weights, guided-filter statistics and alpha
# fp32, sums fp32; convolution epilogues folding the ops after them; device-tuned conv kernels):
#   1920x1440 r0.25 (480x360): median 3.53 ms, p99 3.74 ms (283 fps); GPU 3.06 ms; frame copy 0.07 ms
#   1920x1440 r0.5  (960x720): median 7.84 ms, p99 8.20 ms (128 fps); GPU 7.32 ms
#   1920x1080 r0.25 (480x270): median 3.11 ms, p99 6.51 ms (one spike; 321 fps); GPU 2.60 ms
#   HR_VK_FP16=0 (fp32), 1920x1440 r0.25: median 3.50 ms, p99 3.70 ms, GPU 3.05 ms (fp16 gains
#   nothing here: the frame is bound by dispatch latency and the conv kernels, not by memory).
#   GPU ms by op class at 1920x1440 r0.25 (profiled frames, a timestamp after each op), fp16:
#   conv3x3 1.19, conv1x1 0.93, elementwise 0.51, depthwise 0.40, copy 0.26, resize 0.08, refiner
#   0.03 (before this round, fp32: 1.35 / 0.98 / 0.67 / 0.41 / 0.29 / 0.08 / 0.03; 3.95 ms median).
#   Alpha vs XNNPACK (same frames, fresh state, 3 frames): fp16 mean |d| 5.8e-5, max 0.018 (r0.5
#   6.0e-5 / 0.018; 1080p 5.1e-5 / 0.014); fp32 mean 1.4e-7, max 2.3e-3. Session create (instance,
#   device, pipelines, tuning) 0.2-2.2 s. The probe for an automatic choice: "NVIDIA H200 (discrete GPU)".
# 2026-12-01, after the state read-back and frame copy fixes (the frame copied over the backend's
# own 4 threads, HR_VK_COPY_THREADS; the session's 16 gave the benchmark a 0.08 ms copy and the live
# loop 15.9 ms tails): 1920x1440 r0.25 median 3.73 ms, p99 4.02, GPU 3.05, copy 0.23 (268 fps);
# r0.5 8.26 ms (GPU 7.55); 1920x1080 r0.25 3.33 ms (GPU 2.60). Alpha vs XNNPACK (fp32, 3 frames):
# mean 1.4e-7, max 2.1e-3. GPU ms by class, 1920x1440 r0.25: conv3x3 1.20, conv1x1 0.90,
# elementwise 0.51, depthwise 0.39, copy 0.26, resize 0.08, refiner 0.03.
#
# The tiled convolution loading its next K chunk into registers during this chunk's products
# (convt.comp): 1920x1440 r0.25 median 3.47 ms, p99 3.85, GPU 2.82 (conv3x3 1.01, conv1x1 0.85);
# r0.5 7.39 ms (GPU 6.69); 1920x1080 r0.25 3.00 ms (GPU 2.37); alpha unchanged (mean 1.4e-7).
#
# Then tiled convolutions with K in chunks of 32 for the 2x2-a-thread tiles, a tiled kernel split 4
# ways along K inside the workgroup (convtk.comp, for the small layers: 23x30x960 -> 160 went from
# 67 to ~35 us) and the tuning pass run twice (the first warms the GPU up from its 345 MHz idle
# clock; tuned cold, one large layer took a 2x slower kernel): 1920x1440 r0.25 median 3.24 ms,
# p99 3.46, GPU 2.62 (conv3x3 0.93, conv1x1 0.74, elementwise 0.52, depthwise 0.40, copy 0.26,
# resize 0.08, refiner 0.03; 10 of 63 convolutions tuned to the split-K kernel), frame copy 0.18,
# 308 fps; r0.5 7.41 ms, p99 7.63 (GPU 6.68); 1920x1080 r0.25 2.83 ms, p99 2.99 (GPU 2.26).
# Alpha vs XNNPACK (fp32, 3 frames): mean 1.4e-7, max 2.2e-3 (r0.5 2.0e-7 / 6.8e-4; 1080p
# 1.2e-7 / 1.9e-3). Session create, first on the machine: 2.9 s (tuning twice), later 0.3-0.7 s.
#
# 2026-12-02 UTC (H200, driver 580.159.04, fp32 storage, 300 frames; before = HEAD bee80e6+ that
# day, same machine): three changes, each A/B in one run at 1920x1440 r0.25 (switches in brackets):
#  - epilogue chains whose output the plan put over the convolution's input get a slot of their own
#    (chain_slots; HR_VK_SLOTS=0 off): 17 more chains fold (HardSwish, depthwise + batch-norm
#    Mul/Add + HardSwish, GRU Sigmoid), 225 -> 201 dispatches, 215 -> 190 barriers, +26 MB device
#    memory (then slots shared between roots whose lives do not meet: +8.3 MB, `headroom plan`
#    89.7 -> 98.0 MB; same dispatches and barriers, not timed on the H200 again); GPU 2.667 ->
#    2.573 ms (elementwise 0.546 -> 0.441), wall 3.317 -> 3.204 (blocking wait)
#  - the frame's wait: asleep for the shorter of the last two waits less 0.3 ms, then polling
#    (HR_VK_WAIT=block / spin, HR_VK_SPIN_MS): 3.204 -> 3.134 ms, p99 3.48 -> 3.23 (pure spin 3.080)
#  - alpha written by the guided-filter kernel straight into the host-visible read-back buffer, no
#    copy after the frame (HR_VK_ALPHA=copy): wall 3.134 -> 3.07-3.09; the GPU time now includes the
#    11 MB crossing PCIe (refiner 0.03 -> 0.21 ms; the copy it replaces took ~0.23 ms after the
#    last timestamp)
#  All together, before -> after (median / p99 wall ms, GPU ms; GPU ms by class):
#   1920x1440 r0.25: 3.305 / 3.575, GPU 2.649 -> 3.068 / 3.169, GPU 2.748 (326 fps)
#     before: conv3x3 0.925, conv1x1 0.736, elementwise 0.546, depthwise 0.392, copy 0.255, resize 0.080, refiner 0.027
#     after:  conv3x3 0.928, conv1x1 0.741, elementwise 0.444, depthwise 0.395, copy 0.259, resize 0.081, refiner 0.214
#   1920x1440 r0.5:  7.474 / 7.772, GPU 6.732 -> 7.168 / 7.274, GPU 6.739
#     after:  conv3x3 2.616, conv1x1 1.341, elementwise 0.968 (1.179 before), depthwise 1.188, copy 0.479, resize 0.270, refiner 0.214
#   1920x1080 r0.25: 2.889 / 3.117, GPU 2.282 -> 2.671 / 2.785, GPU 2.339 (374 fps)
#     after:  conv3x3 0.748, conv1x1 0.698, elementwise 0.414 (0.499), depthwise 0.328, copy 0.255, resize 0.068, refiner 0.161
#   Alpha vs XNNPACK (3 frames): 1.35e-7 / 2.2e-3 (r0.5 1.9e-7 / 6.8e-4, 1080p 1.2e-7 / 1.9e-3),
#   unchanged. fp16 storage: 3.344 ms (GPU 3.025), alpha 4.9e-5 / 0.019. run-live: 400 of 400 at
#   480x360, none dropped, latency p50 9.1 / p99 10.8 / max 12.3 ms (was 9.6 / 11.3 / 15.8),
#   device_ms 5.05 / 6.11, frame copy 0.35 / 0.43.
#  Tensor cores: the H200 has VK_NV_cooperative_matrix (16x16x16, 16x8x16, 16x8x8 fp16 -> fp16 or
#  fp32; 8-bit integer 16x16x32 / 16x8x32), VK_KHR_cooperative_matrix and _NV_cooperative_matrix2.
#  A first implicit-GEMM kernel on them (convmma.comp, HR_VK_MMA=1: 128x32 / 128x16 tiles, fp32
#  operands split into two fp16 each, 3 products a step, staged through shared memory, no
#  prefetch) lost to the SIMT kernels on every layer: the tuner picked it 0 times of 63; forced
#  everywhere the frame took 6.15 ms of GPU (conv3x3 2.43, conv1x1 2.65) and alpha was 2.5e-5 / 0.012
#  from XNNPACK's, past the fp32 bound even with the split. So it is off by default.
#  Then the squeeze-excitation means (meansk.comp) over 8 outputs a workgroup, 32 threads each
#  along the reduced axis (was 32 outputs, 8 threads: a 45x60x72 mean ran 3 workgroups, ~19 us):
#   1920x1440 r0.25: 2.972 / 3.074 ms, GPU 2.683 (336 fps); elementwise 0.444 -> 0.378
#     conv3x3 0.927, conv1x1 0.735, elementwise 0.378, depthwise 0.395, copy 0.257, resize 0.081, refiner 0.214
#   1920x1440 r0.5: 6.925 / 8.359 (one run with host spikes; frame copy 0.31), GPU 6.477
#     conv3x3 2.618, conv1x1 1.342, elementwise 0.694, depthwise 1.186, copy 0.478, resize 0.270, refiner 0.214
#   1920x1080 r0.25: 2.721 / 4.336 (spikes as above), GPU 2.289
#     conv3x3 0.746, conv1x1 0.691, elementwise 0.368, depthwise 0.327, copy 0.253, resize 0.068, refiner 0.161
#   Alpha vs XNNPACK, 3 frames, fp32: 1.36e-7 / 2.2e-3 (r0.5 2.9e-7 / 6.8e-4, 1080p 1.2e-7 / 1.8e-3).
#  Tried and dropped: the squeeze-excitation's x * s folded into the 1x1 convolution after it (the
#  input scaled per channel on load, 8 Mul dispatches fewer, 194 dispatches): elementwise 0.378 ->
#  0.336 but conv1x1 0.735 -> 0.835 (an extra load per multiply-add in the split-reduction kernel):
#  GPU 2.683 -> 2.746 ms at r0.25, 2.289 -> 2.352 at 1080p, 6.477 -> 6.481 at r0.5.
#  Where the 2.0 ms goal stands (2.97 now): GPU 2.68 of which ~0.2 the alpha over PCIe, ~200
#  dependent dispatches (~2.3 us each on the device), the decoder's 3x3 convolutions (the five
#  largest 0.56 ms profiled, at 5-11 TFLOP/s); the host side ~0.3 (frame copy 0.16, upload, submit).
#
# run-live with all of the above (`HR_VK_TRACE=1 bench/vulkan_h200.sh run-live`): 400 of 400 frames
# delivered at 60.0 fps, none dropped, 400 alpha PNGs = 400 telemetry lines (names match), every
# frame at 480x360 (no rung change, no replan), latency p50 9.6 ms, p99 11.3, max 15.8; infer p50
# 5.9 / p99 6.8; device_ms p50 4.94 / p99 5.86; frame copy 0.29 / 0.39; PNG writer p50 13.8 /
# p99 15.5 ms (at 60 fps the writer is the tightest stage: some runs dropped 1-3 frames with its
# 2 slots busy; with 4 slots, 0 in 3 runs of 3).
#
# run-live before the kernel changes (the H200's VM: 16 vCPUs, "Intel Xeon Processor"): 400 of
# 400 frames delivered at 60.0 fps, none dropped, 400 alpha PNGs = 400 telemetry lines (names match), every frame at 480x360 (no rung change, no replan),
# latency p50 10.0 ms, p99 11.6 (max 19.3), infer p50 6.0 / p99 6.9, device_ms p50 5.05 / p99 5.94
# (the GPU clocks down at 30% duty: 3.05 ms back to back), frame copy 0.31 / 0.42 ms, PNG writer
# (output_ms) p50 13.4 / p99 18.8 ms. One-thread copy (HR_VK_COPY_THREADS=1): copy 1.08 / 1.55,
# latency 10.8 / 13.2, 397 of 400 (3 dropped with the writer's 2 slots busy). Before these fixes
# the controller stepped down to 86x64 within 3 s (the health monitor's per-frame state read made
# four staging buffers and four submits a frame, 4-15 ms; then the session-pool frame copy, 2.1 ms
# median, 15.9 ms p99): 35.6 fps delivered, 162 of 400 dropped, latency p99 233 ms.
#
# 2026-12-02 UTC, after e289449 (chain slots shared between values whose lives do not meet), 200
# frames, fp32: 1920x1440 r0.25 median 3.029 ms, p99 3.173, GPU 2.683 (330 fps); by class conv3x3
# 0.927, conv1x1 0.739, elementwise 0.380, depthwise 0.396, copy 0.256, resize 0.081, refiner 0.214;
# alpha vs XNNPACK mean 1.35e-7, max 2.2e-3 (unchanged: the slots change placement, not arithmetic).
#
# 2026-12-02 UTC, the H23 round (3 runs on one H200, driver 580.159.04, fp32, 300 frames; A/B by
# env switches in the same run; "before" = HR_VK_SPLIT=0 HR_VK_DIRECT=0, which is the previous code):
#  - split-K across workgroups (convt.comp SPLIT + convred.comp; HR_VK_SPLIT=0 off): a 32x32-tiled
#    convolution whose tiles fill few workgroup slots over a long K gets S workgroups a tile (S * tiles
#    ~528 = 4 a multiprocessor, slices of K >= 64, S <= 16), raw sums into a scratch at the end of the
#    buffer (<= 4 MB, 2.1 MB here), then one reduction dispatch adds them, the bias and the epilogue.
#    Offered to the tuner as a 12th kernel: it takes it for 13-14 of 63 convolutions (23x30 960->160,
#    the bottleneck GRU's 3x3 128->128 / 128->64, ...); 13 more dispatches and barriers.
#    1920x1440 r0.25, before -> after, 3 runs each (median / p99 ms, GPU ms):
#      before 3.034 / 3.565 (2.680), 2.998 / 3.070 (2.679), 3.019 / 3.176 (2.681), 3.015 / 3.135 (2.680)
#      after  2.978 / 3.076 (2.629), 2.996 / 3.087 (2.621), 2.916 / 2.983 (2.631), 2.934 / 3.044 (2.630),
#             2.929 / 2.989 (2.628), 2.966 / 3.069 (2.631)
#      GPU 2.680 -> 2.628 ms; by class conv1x1 0.737 -> 0.704, conv3x3 0.926 -> 0.903, the rest equal:
#      resize 0.081, elementwise 0.378, depthwise 0.394, copy 0.256, refiner 0.214.
#    Aiming at 1056 workgroups (HR_VK_SPLIT_WG=1056): GPU 2.644; at 264: 2.645 (10 taken); 528 stays.
#    1920x1440 r0.5: 6.843 / 6.983 ms, GPU 6.429 (before 6.925, GPU 6.477); 1920x1080 r0.25: 2.542 /
#    2.725 and 2.513 / 2.662, GPU 2.151 / 2.140 (before 2.721, GPU 2.289). Alpha vs XNNPACK (3 frames)
#    unchanged: 1.35e-7 / 2.2e-3 (r0.5 2.9e-7 / 6.8e-4, 1080p 1.2e-7 / 1.9e-3).
#  - a direct 3x3 stride-1 kernel (convd3.comp: the input patch staged once per 8 channels, 4 pixels x
#    8 channels a thread; HR_VK_DIRECT=0 off; since the cold-compile timing below, off unless HR_VK_DIRECT=1): the tuner takes it for 1 of 63; forced everywhere
#    (HR_VK_CONV=direct) it is no faster on the layers it was meant for: 480x360x35->16 169 us (tuned
#    tiled 172), 180x240x59->32 125 (106), 90x120x107->40 155 (111), 45x60x171->80 234 (86). No
#    measurable gain in the frame (2.959 ms / GPU 2.619 without it, same as with).
#  - the frame's copy to the device beside the network, the ingest reading the staging buffer, the
#    tail waiting for the copy (HR_VK_OVERLAP=1, off by default): 2.925 / 2.938 ms off vs 2.916 / 2.934
#    on, GPU 2.63 both: nothing to gain, the copy is not on the critical path.
#  - where the host's 0.3 ms goes (wall - GPU, 1920x1440 r0.25): the frame's rows into the staging
#    buffer 0.16-0.19 ms (4 copy threads), submit to fence beyond the GPU's time 0.13 ms (the upload
#    copy before the first timestamp, submit and wake-up). HR_VK_COPY_THREADS=8: copy 0.106 ms, wall
#    2.873 / 2.929 ms (348 fps): the best figure of the round, not the default (the live loop shares
#    the CPUs with capture and the PNG writer: see run-live above; untested there).
#  Unchanged and still far from 2.0 ms: the guided-filter tail 0.21 ms writing 11 MB of alpha over
#  PCIe (~52 GB/s, at the bus's limit), the largest decoder 3x3 convolutions (480x360x35->16 172 us,
#  ~10 TFLOP/s with every kernel tried), ~200 dependent dispatches.
#
# 2026-12-02 UTC, fewer dispatches (H200, driver 580.159.04, fp32, 300 frames; A/B by env switches in
# one run, off / on twice, at 1920x1440 r0.25):
#  - views instead of copies (HR_VK_VIEWS=0 off): a channel split's outputs and a whole-row slice are
#    read where their input lies (binary ops take the pixel stride; concat.comp reads any source at
#    base + pixel x stride), and a channel concat is one dispatch for all its copied sources; the
#    split's input keeps its bytes until the views' last reader (a slot of its own where a later
#    value lies over it: device buffer 66.9 -> 76.8 MB). 201 -> 166 dispatches, 190 -> 156 barriers.
#      off: median 2.907 / p99 2.997 ms, GPU 2.636;  2.919 / 2.993, GPU 2.636
#      on:  median 2.811 / p99 2.915 ms, GPU 2.507;  2.771 / 2.828, GPU 2.514 (356-361 fps)
#      GPU ms by class, on: conv3x3 0.906, conv1x1 0.703, depthwise 0.395, elementwise 0.379,
#      refiner 0.214, copy 0.125 (0.256 off), resize 0.081. Alpha vs XNNPACK (3 frames) 1.35e-7 / 2.2e-3,
#      unchanged. Same run: r0.5 median 6.572 / p99 6.694 ms, GPU 6.255 (conv3x3 2.592, conv1x1 1.318,
#      depthwise 1.185, elementwise 0.696, copy 0.284, resize 0.270, refiner 0.214); 1920x1080 r0.25
#      2.275 / 2.351 ms, GPU 2.022 (440 fps; conv3x3 0.665, conv1x1 0.621, elementwise 0.353, depthwise
#      0.326, refiner 0.161, copy 0.119, resize 0.068).
#  - then four dispatch folds (dispatch counts from HR_VK_DUMP / HR_VK_VERBOSE on lavapipe at
#    1920x1440 r0.25):
#    RVM's low-resolution guided filter (the split of the network's output to A and b, 22 ops: 8
#    depthwise boxes, 11 elementwise, 2 concats, a mean) as one dispatch (fgflr.comp; HR_VK_FGFLR=0
#    off): 166 -> 144 dispatches, 156 -> 137 barriers; a ConvGRU's candidate convolution also
#    computes the new state in its epilogue (tanh, x z read as a view, + (1-z)*h, into the state
#    slot; HR_VK_VIEWMUL=0 off): 144 -> 136 dispatches, 129 barriers; a Sub with a constant
#    computed inside the binary op after it (binary.comp EPI: a GRU's (1 - z) * h, the input's
#    (x - mean) * scale; HR_VK_SUBFOLD=0 off): 136 -> 131 dispatches, 124 barriers; a GRU's r * h
#    computed inside the concat after it (a concat.comp source's product; HR_VK_MULCAT=0 off):
#    131 -> 127 dispatches.
#    The first H200 calls with these on printed nothing in 130 s, and they were kept off until
#    timed. It was no hang: a cold NVIDIA shader cache. hr_session_create took 70.9 s on a fresh
#    machine with the views-only default, with the folds on 200+ s (killed) and then 112 s (partly
#    cached), then 0.39 s once the driver's disk cache held every pipeline (they were created one at
#    a time; with tuning on, every convolution kernel variant that applies is compiled).
#    Timed 2026-12-02 by the lead (1920x1440 NV12 r0.25, fp32, 300 frames, alternating in one run):
#      views only (HR_VK_FOLDS=0, 166 dispatches): median 2.763 / 2.773 / 2.783 ms, p99 2.909 /
#      3.003 / 2.898, GPU 2.513 / 2.513 / 2.515 (elementwise 0.375-0.380, depthwise 0.393-0.394,
#      refiner 0.214-0.242, copy 0.129-0.130, conv3x3 0.904, conv1x1 0.705, resize 0.081); alpha
#      vs XNNPACK mean 1.35e-7, max 2.2e-3.
#      folds on (127 dispatches): median 2.629 / 2.628 ms, p99 2.755 / 2.771, GPU 2.342 / 2.340
#      (elementwise 0.241 / 0.239, depthwise 0.308, copy 0.137, refiner 0.249 / 0.215); alpha vs
#      XNNPACK mean 1.11e-7, max 2.56e-3.
#      HR_VK_VIEWS=0: median 2.928 ms, GPU 2.639.
#      run-live (headroom run --backend vulkan --realtime, 1920x1440 NV12 @60, 400 frames, views
#      only): 400/400 delivered, 0 dropped, all at 480x360, latency p50 8.9 / p99 10.3 ms.
#    So the four are ON by default since (vk_backend.c fold_on): HR_VK_FOLDS=0 turns all four off,
#    HR_VK_FGFLR/VIEWMUL/SUBFOLD/MULCAT=0 one each (none applies on fp16 storage); the lavapipe tests
#    run both (test_vulkan_ops: two shapes each way; test_vulkan_rvm: a folds-off pass). The default
#    is 127 dispatches at 1920x1440 r0.25, 166 with HR_VK_FOLDS=0.
#  Still open toward 2.0 ms: the tail's 11 MB of alpha over PCIe (refiner 0.21), the decoder's
#  large 3x3 convolutions, the 9 squeeze-excitation Mul dispatches, the frame's copy and submit
#  (~0.3), the view slots' device memory (+9.9 MB: slots shared only by lifetime).
#  HR_VK_DUMP=1 lists every dispatch (op, kernel, size, inputs) on stderr at create.
#
# Cold session create (2026-12-02): the pipelines (each dispatch's, and with tuning on every
# convolution kernel that applies to it) are listed first, then compiled over a pool of threads
# (vk_backend.c make_pipes; before, one at a time: 70.9 s cold for views only, 112-200+ s with the
# folds, 0.39 s on a warm NVIDIA cache). On this repo's 2-CPU build machine with lavapipe (its own
# disk cache off, MESA_SHADER_CACHE_DISABLE=true; the lead's CI on the same CPUs, load ~3), 6 runs
# alternating, medians: 1920x1440 r0.25, 22 pipelines: compile 271 ms serial vs 234 ms on 2 threads
# (create 454 vs 430); 320x240 r0.5: 182 vs 159 ms (create 323 vs 309); HR_VK_CONV=cycle (36
# pipelines): 660 vs 737 ms. lavapipe tells little: llvmpipe makes the machine code at a shader's
# first dispatch. Not yet timed on the H200. No VkPipelineCache of our own: the driver's disk cache
# would be as cold on a fresh machine. To time it there, each run with an empty NVIDIA cache
# directory of its own (__GL_SHADER_DISK_CACHE_PATH), after `prepare`, in one call (carry .gl, models):
#   for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
#   j=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json; [ -f $j ] && export VK_DRIVER_FILES=$j
#   export LD_LIBRARY_PATH=$PWD/.gl/lib HR_VK_VERBOSE=1; c1=$(mktemp -d) c2=$(mktemp -d) c3=$(mktemp -d)
#   b(){ echo "== $*"; timeout ${T:-590} env "$@" .gl/vkbench models/rvm.json 1920 1440 0.25 $N 20 $C \
#          .gl/frames_1920x1440.nv12 2>&1 | grep -E 'compiled|tuned|dispatches|create_ms|session'; }
#   N=20 C=0 b __GL_SHADER_DISK_CACHE_PATH=$c1                  # cold, default threads
#   N=20 C=0 b __GL_SHADER_DISK_CACHE_PATH=$c1                  # the same, warm
#   N=20 C=0 b __GL_SHADER_DISK_CACHE_PATH=$c3 HR_VK_FOLDS=0    # cold, folds off
#   for i in 1 2; do N=300 C=3 b __GL_SHADER_DISK_CACHE_PATH=$c1; N=300 C=3 b __GL_SHADER_DISK_CACHE_PATH=$c3 HR_VK_FOLDS=0; done
#   du -sh $c1 $c3                                              # the driver did write there
#   T=300 N=20 C=0 b __GL_SHADER_DISK_CACHE_PATH=$c2 HR_VK_COMPILE_THREADS=1   # cold, serial, last
# Timed 2026-12-02 by the lead that way (H200, driver 580.159.04; a fresh machine each call):
#   cold, 16 threads, folds on: 94 pipelines compiled in 58.6 s, create 54.2-59.3 s; HR_VK_FOLDS=0:
#   46 in 38.0 s (create 38.6 s); 1 thread: still compiling at the 120 s cap. Warm: 16-24 ms,
#   create 0.40-0.42 s. HR_VK_VERBOSE=2 (each pipeline over 100 ms): every kernel 0.10-0.19 s but the
#   direct 3x3 kernel's (convd16 / convd32, convd3.comp): 49.4-57.9 s EACH, 10 of them (one per
#   epilogue): the 16 threads wait on those. So the tuner no longer gets that kernel unless
#   HR_VK_DIRECT=1 (HR_VK_CONV forcing, as the tests do, still takes it): cold 84 pipelines in
#   0.57 s, create 0.95 s (warm 0.39 s). Frame, same call, 300 frames, without it: median 2.721 /
#   2.696 ms, p99 2.92 / 3.03, GPU 2.331 / 2.330 (conv3x3 0.896); with it, the call before:
#   2.641-2.674 ms, p99 2.69-2.78, GPU 2.350-2.355 (conv3x3 0.910); the wall's difference is the
#   host (frame copy 0.21 vs 0.16-0.19 ms), the GPU is 0.02 ms faster without. Alpha vs XNNPACK
#   1.12e-7 / 2.56e-3. Same day, folds on (previous call): r0.5 6.260 ms, p99 8.42, GPU 5.843
#   (conv3x3 2.617, conv1x1 1.330, depthwise 0.935, elementwise 0.394, copy 0.357, resize 0.272,
#   refiner 0.216; alpha 2.5e-7 / 7.8e-4); 1920x1080 r0.25 2.321 ms, p99 5.06 (host spikes), GPU
#   1.898 (alpha 1.0e-7 / 2.0e-3); HR_VK_FOLDS=0 in that call 2.869 / 2.876 ms, GPU 2.523 / 2.526
#   vs folds on 2.642 / 2.674, GPU 2.350 / 2.355. run-live, folds on: 400 of 400 frames at 59.9 fps,
#   none dropped, all at 480x360, latency p50 8.7 / p99 10.2 / max 11.4 ms, device_ms p50 4.75 /
#   p99 5.88, frame copy 0.27 / 0.39 ms, 400 PNGs = 400 telemetry lines.
# run-live on that default (direct kernel off), 2026-12-02 later, two calls, each the first thing
# on a freshly started machine (HR_VK_TRACE=1): the first missed: 367 of 400 delivered (55.1 fps),
# 33 dropped, one step down to 384x288 at frame 288, latency p50 10.3 / p99 19.4 / max 579 ms, the
# frame copy p99 3.6 / max 9.3 ms and submit-to-fence p99 7.4 ms (the host, not the GPU: device_ms
# p50 2.35); the second held: 400 of 400 at 59.98 fps, none dropped, all at 480x360, latency p50
# 9.37 / p99 14.77 / max 17.72 ms, device_ms 4.48 / 5.81, frame copy 0.33 / 0.48, 400 PNGs = 400
# telemetry lines. That host's CPU was slower that day too (RVM on 1 thread 144-235 ms against
# 133-193 the day before).
# 2026-12-02 evening: the miss above was the budget controller, not the GPU: its "p99 of the last
# 64 frames" was their largest, so one slow frame stepped down, and the Vulkan replan then cost
# 579 ms (33 frames). Now the p99 of 64 is their second largest (5719cdb), and a replan takes over
# the replaced plan's device, pipelines and tuned kernels (973c417, HR_VK_VERBOSE=1 prints each
# create's phases). Replans timed in one process (.gl/replan.c: 1920x1440, frames paced at 60 fps,
# ratios 0.25 -> 0.2 -> 0.16 -> 0.25 -> 0.2 -> 0.128 -> 0.16 -> 0.25):
#   nothing shared (HR_VK_SHARE=0): 291-380 ms each (device 67-92, pipelines 18-25, tuning 140-218)
#   shared: a new rung 157-261 ms (tuning 118-157), a rung seen before 36-42 ms (no tuning)
#   shared, no warm-up pass in the tuning (now the default on a shared device, 2cafc5d): a new
#     rung 92-114 ms, a rung seen before 35-44; the picked kernels as fast (2.19 / 1.91 / 1.67 ms a
#     frame back to back at 0.2 / 0.16 / 0.128, against 2.15 / 1.91 / 1.65)
# A stream that adapts visits its rungs at create (0570a67): create 1.04 s (435 ms + 7 rungs at
# 71-105 + 25), then every step is a rung seen before. run-live, 8 runs that day, all 400 of 400,
# none dropped, all at 480x360: latency p99 9.4 / 11.2 / 12.0 (controller fix alone), 10.8 / 12.6,
# 11.3, 10.0 / 10.4 ms (with all of it); max 10.4-16.9 ms. At --budget-ms 4 (the loop walks the
# rungs): nothing shared 349 delivered of 400 (latency max 324 ms); shared, without the visits
# 335 / 347 / 347, replans 140-254 ms each (latency max 236-270); with them 394 / 394 / 395
# delivered, latency p99 40.6-43.8, max 45.5-50.3 ms.
# 2026-12-02 night: a replan shares the replaced plan's frame staging, frame and read-back buffers
# (sized by the frame, the same on every rung: 33 + 33 + 11 MB at 1920x1440, allocated, pinned and
# freed at every rung change before; vk_backend.c buf_take, HR_VK_SHARE_BUFS=0 off), and carries
# the recurrent state over (session.c carry_state). .gl/replan.c, two rounds each, alternating:
#   rung seen before: shared 25.1 / 29.2 / 23.9 / 29.0 and 30.7 / 24.5 / 25.5 / 30.8 ms (create 16-21);
#                     HR_VK_SHARE_BUFS=0 40.1 / 39.1 / 41.1 / 46.9 and 39.2 / 41.5 / 37.2 / 46.4 (create 26-31)
#   new rung: shared 92.6-107.2 ms, off 100.7-126.7
# run-live --budget-ms 4, alternating: shared 398 / 399 of 400 delivered, latency p99 27.3 / 28.7 ms,
# max 35.9 / 34.3; off 389 / 388, p99 50.9 / 50.9, max 55.0 / 56.4. run-live (default budget): 400
# of 400 at 480x360, latency p99 12.2 ms. Frame (vkbench, same day, before this change): 2.640 /
# 2.625 ms median, GPU 2.349 / 2.333, alpha vs XNNPACK 1.12e-7 / 2.5e-3 (the plan's placement
# change for the CPU's depthwise epilogue left the Vulkan figures as they were).
# Then the weights copied on the device from the replaced plan when its constant block is the same
# (RVM's: the weights do not depend on the ratio; vk_backend.c same_consts, HR_VK_SHARE_CONSTS=0
# off; before, each replan pinned a 15 MB upload buffer and sent the weights over PCIe again),
# alternating rounds: a rung seen before 11.5-17.8 ms (create 4.5-6.1, of it weights and recording
# 0.7-1.4) against 22.0-31.4 (create 15-20, weights and recording 12.2-14.8); a new rung 69-93 ms
# against 82-110. run-live --budget-ms 4: 400 of 400 delivered, latency p99 14.8 ms, max 19.0
# (HR_VK_SHARE_CONSTS=0 in the same call: 400 of 400, p99 29.3, max 32.5); default run-live 400 of
# 400 at 480x360, p99 10.1 ms; vkbench 2.633 ms median, GPU 2.346 (unchanged).
# 2026-12-03 (H200, driver 580.159.04, fp32, 300 frames; old = the 5680b57 vkbench, alternating in
# one call): the tiled convolution (convt.comp) keeps each thread's pixels' offsets and rows in
# registers (no shared-memory lookups and divisions per loaded value) and reads its products' operands
# as vec4 / vec2 from shared memory; the split reduction gets an 8-outputs-a-workgroup variant for the
# tuner (convsk8: the squeeze-excitation's single-pixel 1x1 layers, 4-8 workgroups of 84-120 steps a
# thread before; the tuner took it for 8 of 48); long means 2 outputs a workgroup (meansk2,
# HR_VK_MEANSK=8 off); resizes four channels a thread (HR_VK_RESIZE4=0 off).
#   1920x1440 r0.25: old 2.634 / 2.623 ms median (p99 2.776 / 2.902), GPU 2.334 / 2.349
#                    new 2.533 / 2.538 ms (p99 2.651 / 2.627), GPU 2.288 / 2.293 (395 fps)
#                    new with HR_VK_MEANSK=8 HR_VK_RESIZE4=0: 2.532 / 2.553, GPU 2.289 / 2.298
#     by class, new: conv3x3 0.862 (0.896 old), conv1x1 0.713 (0.705), resize 0.076 (0.081),
#     elementwise 0.239, depthwise 0.309, copy 0.139, refiner 0.214. Per op (profiled): 360x480x35->16
#     171 -> 164 us, 90x120x107->40 112 -> 99, 180x240x59->32 107 -> 101, 45x60x171->80 86 -> 80; the
#     decoder's last resize 37.4 -> 32.8; 180x240x16->64 (one K chunk) 26 -> 30 (the tuner's best of
#     the new kernels). Alpha vs XNNPACK (3 frames): mean 1.13e-7, max 2.48e-3.
#   1920x1440 r0.5: 6.202 -> 5.915 ms (GPU 5.819 -> 5.569); 1920x1080 r0.25: 2.341 -> 2.186 ms
#   (GPU 1.911 -> 1.834).
# 2026-12-03, session 16 (H200, driver 580.159.04, fp32, 300 frames, the 08bf4fc vkbench; 1920x1440
# r0.25, four settings alternating, two rounds, median / p99 ms, GPU ms):
#   default then (float matte, HR_VK_DW4=0): 2.605 / 2.814, GPU 2.283;  2.600 / 2.692, GPU 2.285
#   U8=1:                                     2.451 / 2.620, GPU 2.131;  2.454 / 2.541, GPU 2.130
#   HR_VK_DW4=1:                              2.495 / 2.615, GPU 2.189;  2.524 / 2.658, GPU 2.187
#   U8=1 HR_VK_DW4=1:                         2.322 / 2.447, GPU 2.033;  2.334 / 2.494, GPU 2.038 (431 fps)
#   by class, U8=1 HR_VK_DW4=1: conv3x3 0.862, conv1x1 0.714, elementwise 0.241, depthwise 0.210 (0.310
#   without dw4), copy 0.139, resize 0.077, refiner 0.059 (0.215 with the float matte); frame copy
#   0.137-0.141 ms, submit to fence 2.160-2.176. Alpha vs XNNPACK (2 frames): float 1.1e-7 / 1.05e-3;
#   8 bits within 1 of XNNPACK's quantised matte. So dw4 is on by default since (HR_VK_DW4=0 off).
#   Same call, U8=1 (dw4 off): 1920x1440 r0.5 5.806 / 5.900 ms (GPU 5.430); 1920x1080 r0.25 2.028 /
#   2.205 ms (GPU 1.717, 493 fps). run-live (float matte, PNGs): 400 of 400 at 480x360, 0 dropped,
#   latency p50 8.9 / p99 14.0 ms, device_ms p50 4.56 / p99 5.77.
# Then the frames in memory registered with the session (REG=1, hr_session_register_memory: the GPU
# copies each frame from where it lies, VK_EXT_external_memory_host; dw4 on; three rounds alternating):
#   U8=1:       2.396 / 2.328 / 2.302 ms median (p99 2.503 / 2.413 / 2.534), GPU 2.029-2.036, frame copy 0.13-0.19
#   U8=1 REG=1: 2.173 / 2.189 / 2.176 ms median (p99 2.201 / 2.216 / 2.227), GPU 2.024-2.036, frame copy 0.02 (460 fps)
#   float: 2.524 / 2.604 (GPU 2.174); float REG=1: 2.330 / 2.556 (GPU 2.190)
#   U8=1 REG=1: 1920x1440 r0.5 5.056 / 5.110 ms (GPU 4.915); 1920x1080 r0.25 1.775 / 1.825 ms (GPU 1.667,
#   563 fps; U8=1 alone 2.000). run-live (float matte, PNGs, dw4 on): 400 of 400 at 480x360, 0 dropped,
#   latency p50 9.5 / p99 13.1 ms.
#   Still 0.18 ms from 2.0 at 1920x1440 r0.25: the GPU's 2.03 ms (conv3x3 0.86, conv1x1 0.71,
#   elementwise 0.24, depthwise 0.21, copy 0.14, resize 0.08, tail 0.06) and ~0.13 ms from submit to
#   fence beyond it (the GPU's 4.1 MB copy of the frame from host memory, ~80 us, and the wake-up).
#   Next call, U8=1 REG=1 against the same with HR_VK_WAIT=spin and with HR_VK_FP16=1 (two rounds):
#   2.171 / 2.172 ms; spin 2.163 / 2.154 (the hybrid wait costs ~0.01 ms); fp16 storage 2.722 / 2.725
#   (GPU 2.57: elementwise 0.37, copy 0.26, conv 1.86; the fp32 folds do not apply there).
#   Through the CLI (`headroom bench --backend vulkan --format nv12 --frames 300 --warmup 20`, the
#   cdf84d7 build, two rounds alternating): 2.58 / 2.53 ms median (p99 3.44 / 2.85); with
#   `--alpha-u8 --register` 2.20 / 2.19 ms (p99 2.24 / 2.26, 455-457 fps); 1920x1080 1.81 ms (553 fps).
# 2026-12-03, session 17 (e5b3b46: the 8-bit matte rounds ties to even; headroom run takes the
# stream's bytes for its alpha PNGs): U8=1 REG=1 1920x1440 r0.25 2.168 / 2.193 ms, GPU 2.025 (461 fps;
# by class unchanged), 8 bits within 1 of XNNPACK's. run-live: 400 of 400 at 480x360, 0 dropped,
# latency p50 7.9 / p99 9.8 / max 11.8 ms, device_ms p50 4.84 / p99 5.77, output_ms p50 7.7 / p99 10.5.
# 2026-12-03, session 18 (5124cc0; since c768f2c headroom run asks its stream for the 8-bit matte alone, so the
# Vulkan session reads back W x H bytes, not floats, and the health monitor reads them): U8=1 REG=1
# 1920x1440 r0.25 2.191 / 2.225 ms (min 2.168), GPU 2.044 (456 fps; by class as before: conv3x3 0.862,
# conv1x1 0.723, elementwise 0.241, depthwise 0.212, copy 0.139, resize 0.077, refiner 0.059), 8 bits
# within 1 of XNNPACK's. run-live: 400 of 400 at 480x360, 0 dropped, latency p50 7.8 / p99 9.1 / max
# 16.9 ms, device_ms p50 4.59 / p99 5.72, frame copy p50 0.29 ms, output_ms p50 8.8 / p99 11.0.
# Then 28bd564 (the ladder's one-rung tail rules and measured up-steps): run-live 400 of 400 at
# 480x360, latency p50 7.9 / p99 9.6 / max 11.1 ms; LIVE_ARGS="--budget-ms 4" (the loop walks its
# rungs) 400 of 400 delivered, 0 dropped, latency p99 14.4 / max 15.9 ms (86x64 170 frames, 115x86
# 44, 153x115 25, 192x144 13, 307x230 143, 480x360 5).
# 2026-12-03, session 19: three dispatch folds (677238f, a9af12a; 127 -> 111 dispatches, 134 -> 118
# barriers with the split-K reductions): a GRU's (1 - z) * h in the candidate's epilogue
# (HR_VK_GRUMIX), a squeeze-excitation's x * s in the projection's weights (HR_VK_SEW), a two-source
# concat read by the resize after it (HR_VK_CATRESIZE). U8=1 REG=1 1920x1440 r0.25, two rounds
# alternating in one call (median wall / GPU ms):
#   all three on 2.107 / 1.961 and 2.114 / 1.975; HR_VK_SEW=0 4.27 (see below) / 1.999 and 2.000;
#   all three off 2.172 / 2.033 and 2.160 / 2.035. By class, on: elementwise 0.170 (0.240 off),
#   copy 0.115 (0.139), conv1x1 0.715, conv3x3 0.862, depthwise 0.209, resize 0.078, refiner 0.059.
#   The first SEW version (each output's thread writing its W' row, a load and a store at a time)
#   made the excitation's last convolution 17-18 us and gained nothing (GPU 2.005 / 1.996); its
#   workgroup now writes the rows together (convsk8). Tried and dropped: the frame's first plane
#   copied in two parts (the ingest's rows first, the rest beside the network): 720 row-run copy
#   regions made the frame 4.20-4.27 ms (the HR_VK_SEW=0 rows above ran with it).
#   Final, same day: 1920x1440 r0.25 2.109 / p99 2.166 ms, GPU 1.969 (474 fps); r0.5 4.937 ms (GPU
#   4.790); 1920x1080 r0.25 1.723 ms (GPU 1.621, 580 fps); 8 bits within 1 of XNNPACK's. run-live:
#   400 of 400 at 480x360, 0 dropped, latency p50 7.6 / p99 8.8 / max 9.5 ms; --budget-ms 4: 400 of
#   400 delivered, 0 dropped, p99 13.6 / max 17.9 ms. Still 0.11 ms from 2.0: the GPU's 1.97 (five
#   decoder 3x3 convolutions 0.52 of it, at ~10 TFLOP/s) and ~0.12 from submit to fence beyond it
#   (the GPU's copy of the 4.1 MB frame from host memory, ~80 us, before the network).
# 2026-12-03, session 20 (2bba453: the fgf tail sums its bytes on the GPU). run-live, two rounds
# alternating with the previous CLI (LIVE_CLI): latency minus device_ms p50 3.51 / 3.27 ms before,
# 3.12 / 2.63 after; 400 of 400 at 480x360 in all four. Final (18458a9): 1920x1440 r0.25 2.113 /
# 2.128 ms (p99 2.225 / 2.285), GPU 1.978 / 1.988; r0.5 4.947 (GPU 4.802); 1920x1080 r0.25 1.742
# (GPU 1.627); run-live 400 of 400 at 480x360, latency p50 6.95 / p99 8.20 / max 9.80 ms;
# --budget-ms 4: 400 of 400, 0 dropped, p99 14.1 / max 15.7 ms. Where wall - GPU goes (REG=0, one
# call): HR_VK_FRAME=host (no device copy; the ingest and the tail read host memory) submit to fence
# 2.127 ms against GPU 2.099: 0.028 ms beyond the GPU; with the device copy 2.111 against 1.974, so
# the copy is ~0.11 ms of the critical path; HR_VK_OVERLAP=1 (the copy beside the network on the
# same queue) 2.101: the driver does not overlap it. Tried and dropped (not committed):
#  - a 4-pixel x 8-channel thread tile in convt.comp (512x16 / 256x32 workgroup tiles): no faster
#    (360x480x35->16 182.8 us against 156.7 for tiled16; 180x240x59->32 166 against 138), the tuner
#    took it for none of 55 convolutions. With BN = 16 every kernel stages BM x KC inputs per BM x 16
#    x KC products whatever the thread tile, and tiled16 and tiled2x16 run that layer alike (157 and
#    163 us): the inner products are not what limits these layers. (A first version was 6-10x slower:
#    a `break` in the epilogue's loop over the accumulators kept them in local memory.)
#  - a GRU's concat of x and h read in place by its gates' convolution (convt.comp / convtk.comp
#    reading two sources; 6 concats at this size): tuned, 2.122 / 2.129 ms against 2.121 / 2.116
#    without (GPU 1.975 / 1.985 against 1.987 / 1.978): the convolutions reading two sources lost
#    what the concats cost (gates 180x240 60.8 us against 55.8, 45x60 51.1 against 43.9). The
#    candidate's concat of x and r * h cannot be read so: its epilogue writes the new state over h
#    (the state is updated in place) while its taps would read h at neighbouring pixels (a race
#    test_vulkan_ops and test_vulkan_rvm caught: max |d| 0.1-0.47).
# 2026-12-06, session 28 (c93fd9f; no Vulkan change since session 20's kernels), an NVIDIA H100 80GB
# HBM3 (driver 580.159.04, asked for as nvidia-h200), U8=1 REG=1, 300 frames: 1920x1440 r0.25 2.111 /
# 2.128 ms median (p99 2.151 / 2.153), GPU 1.980 / 1.982 (conv3x3 0.858-0.862, conv1x1 0.722,
# depthwise 0.208, elementwise 0.167, copy 0.116-0.118, resize 0.088, refiner 0.061-0.063), 470-474
# fps; r0.5 5.022 ms (GPU 4.876); 1920x1080 r0.25 1.744 ms (GPU 1.629, 573 fps). Alpha vs XNNPACK
# mean 3.37e-5, max 3.3e-3, 8 bits within 1. run-live: 400 of 400 at 480x360, 0 dropped, latency p50
# 7.66 / p99 9.13 / max 9.74 ms, device_ms 4.65 / 5.67. (Session 27's H100, another host: 2.195 ms.)
# 2026-12-06, session 29: the direct 3x3 kernel rewritten (convd3.comp: 2 pixels x 16 channels a
# thread, chunks of 4 input channels, all of a chunk's loads before its stores, the outputs out
# through shared memory) and a split of it along the input channels (P_CONVDS16/32: S workgroups a
# tile, S * tiles ~384, the sums added by convred.comp); both offered to the tuner by default
# (HR_VK_DIRECT=0: not). An NVIDIA H100 80GB HBM3 (driver 580.159.04; asked for as nvidia-h200, no
# H200 came), U8=1 REG=1, 300 frames, old = the e682d4b vkbench, alternating in one call:
#   1920x1440 r0.25: old 2.145 / 2.130 / 2.132 ms median (p99 2.207 / 2.242 / 2.195), GPU 1.991-1.997
#                    new 1.931 / 1.934 / 1.922 ms median (p99 1.982 / 1.968 / 2.082), GPU 1.786-1.794
#                    (518-520 fps); HR_VK_DIRECT=0 in the same call 2.140 (GPU 1.991)
#     by class, new: conv3x3 0.656 (0.865 old), conv1x1 0.729, depthwise 0.211, elementwise 0.175,
#     copy 0.121, resize 0.090, refiner 0.063; the tuner: 2/1 direct 16/32, 4/5 direct split 16/32.
#     Per op (profiled; old from the call before, the same binary), old -> new: 360x480x35->16
#     164 -> 116 us, 180x240x59->32 101 -> 85, 90x120x107->40 98 -> 70, 45x60x171->80 79 -> 53,
#     360x480x16->16 81 -> 44, 180x240x32->16 54 -> 38.
#   1920x1440 r0.5: 5.061 -> 4.379 ms (GPU 4.909 -> 4.220; conv3x3 2.520 -> 1.824)
#   1920x1080 r0.25: 1.753 -> 1.617 ms (GPU 1.637 -> 1.504, 618 fps)
#   Alpha vs XNNPACK unchanged (mean 3.37e-5, max 3.3e-3, 8 bits within 1); fp16 storage 2.529 ms,
#   5.97e-5 / 0.0199. Cold create (an empty driver cache): 108 pipelines compiled in 1.34 s over 16
#   threads, create 1.82 s. run-live: 400 of 400 at 59.99 fps, 0 dropped, all at 480x360, latency
#   p50 7.36 / p99 9.07 / max 9.55 ms, device_ms 4.40 / 5.51, 400 PNGs = 400 telemetry lines.
#   A second call (asked for as nvidia-h200; another H100, whose host added ~0.2 ms beyond the GPU
#   against ~0.14), two rounds alternating: old 2.183 / 2.186 ms median (p99 2.268 / 2.263), GPU
#   1.981 / 1.990; new 1.973 / 1.967 ms (p99 2.071 / 2.036), GPU 1.774 / 1.772 (507-508 fps);
#   HR_VK_DIRECT=0 2.178; r0.5 5.122 -> 4.428 ms; 1920x1080 1.812 -> 1.668 ms; run-live 400 of 400
#   at 480x360, 0 dropped, latency p50 6.47 / p99 7.63 / max 8.32 ms. The decoder's last resize
#   (180x240x32 into the 360x480x35 concat, 42 us in the frame) timed alone: 37.3 us, 21.8 with no
#   loads (its stores, 32 of every 35 channels, are what it costs); not changed.
#   Then 8 channels a thread (2 pixels x 8 channels, R = 8 / 4 rows a tile; 64-71 registers
#   against 105-106, so 3-4 workgroups a multiprocessor; alone 480x360x35->16 81 against 105 us,
#   180x240x59->32 69 against 81, 360x480x16->16 43 against 57). On an NVIDIA H200 (driver
#   580.159.04; the first H200 lent this session), two rounds alternating, U8=1 REG=1, 300 frames:
#     1920x1440 r0.25: old (e682d4b) 2.120 / 2.116 ms median (p99 2.157 / 2.146), GPU 1.977 / 1.969
#                      16 a thread (22fffd6) 1.941 / 1.880 (p99 2.014 / 1.911), GPU 1.757 / 1.757
#                      8 a thread 1.834 / 1.769 (p99 1.865 / 1.820), GPU 1.656 / 1.644 (545-565 fps)
#       by class, 8 a thread: conv3x3 0.542 (0.861 old), conv1x1 0.716-0.729, depthwise 0.209,
#       elementwise 0.176, copy 0.117, resize 0.079, refiner 0.063; the tuner: 4 direct, 9 direct
#       split (all 16-channel workgroups). Per op, old -> 8 a thread: 360x480x35->16 163 -> 79 us,
#       180x240x59->32 101 -> 71, 90x120x107->40 101 -> 68, 45x60x171->80 79 -> 44, 180x240x32->32
#       56 -> 42, 360x480x16->16 81 -> 41.
#     1920x1440 r0.5: 3.926 ms (GPU 3.801; conv3x3 1.517); 1920x1080 r0.25: 1.524 ms (GPU 1.422, 656 fps)
#     Alpha vs XNNPACK unchanged (3.37e-5 / 3.3e-3, 8 bits within 1); fp16 storage 2.391 ms
#     (5.98e-5 / 0.0199). Cold create: 107 pipelines in 0.78 s over 16 threads, create 1.21 s.
#     run-live: 400 of 400 at 60.0 fps, 0 dropped, all at 480x360, latency p50 7.06 / p99 8.28 /
#     max 9.65 ms, device_ms 4.37 / 5.57, 400 PNGs = 400 telemetry lines.
#   The same builds on an H100 (80GB HBM3) the next call, three rounds alternating: old 2.118 /
#   2.123 / 2.112 ms median (p99 2.156 / 2.244 / 2.162), GPU 1.988-1.989; 8 a thread 1.799 / 1.799 /
#   1.792 (p99 1.830 / 1.828 / 1.819), GPU 1.662-1.673 (conv3x3 0.543); r0.5 4.051 ms (GPU 3.903);
#   1920x1080 r0.25 1.536 ms (GPU 1.429).
#   How it got there (one dispatch at 480x360x35->16 timed alone by bench/vk_probe.c, registers from
#   VK_KHR_pipeline_executable_properties): the first rewrite (chunks of 8, each thread's 32 outputs
#   written 16 floats apart) 177 us in the frame, of it ~50 the scattered stores and ~54 the
#   staging loads; outputs through shared memory and a chunk's loads first: 124-129 us, at 145
#   registers a thread (one workgroup a multiprocessor); chunks of 4 channels: 106 registers, two
#   workgroups, 89 us alone, 116 in the frame. Loading the next chunk during this one's products
#   (software pipelining) lost at both chunk sizes (99 against 89 us); not unrolling the tap loops
#   gained nothing. Unconditional loads (clamped index, then a select) in convt.comp, convtk.comp and
#   convdw4.comp made the frame 0.04 ms slower (GPU 1.983 -> 2.026): NVIDIA predicates those loads
#   already; not kept there.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
mode=${1:-run}

if [ "$mode" = prepare ]; then
  mkdir -p .gl/lib
  grep -qx '/.gl/' .git/info/exclude 2>/dev/null || echo /.gl/ >> .git/info/exclude
  (cd .gl && for p in libvulkan1 libegl1 libglvnd0 libopengl0 libgl1 libglx0 libgles2; do ls ${p}_*.deb >/dev/null 2>&1 || apt-get download $p; done)
  b=${BUILD:-build-h18}
  [ -f "$b/CMakeCache.txt" ] || cmake -S . -B "$b" -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$b" -j2 --target headroom headroom_cli live_quality
  cat > .gl/vkbench.c <<'EOF'
/* RVM through the Vulkan backend: push wall time, GPU time, GPU time per op class, alpha vs XNNPACK. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <time.h>
#include "headroom.h"
#include "backend/backend.h"
static double now_ms(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e3 + t.tv_nsec / 1e6; }
static int cmpd(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return x < y ? -1 : x > y; }
int main(int argc, char **argv) {
  if (argc < 5) { fprintf(stderr, "usage: vkbench model.json W H ratio [frames warmup check]\n"); return 2; }
  int W = atoi(argv[2]), H = atoi(argv[3]); float ratio = (float)atof(argv[4]);
  int N = argc > 5 ? atoi(argv[5]) : 300, WU = argc > 6 ? atoi(argv[6]) : 20, NC = argc > 7 ? atoi(argv[7]) : 3;
  char err[512];
  hr_model *m;
  if (hr_model_load(argv[1], &m, err, sizeof err)) { fprintf(stderr, "%s\n", err); return 1; }
  /* NV12 frames: moving gradients and a disc (content only has to be plausible for timing) */
  int NF = 8;
  uint8_t **fb = calloc(NF, sizeof *fb);
  hr_frame *fr = calloc(NF, sizeof *fr);
  for (int i = 0; i < NF; i++) {
    fb[i] = malloc((size_t)W * H * 3 / 2);
    for (int y = 0; y < H; y++)
      for (int x = 0; x < W; x++) {
        int dx = x - W / 2 - i * 8, dy = y - H / 2;
        fb[i][(size_t)y * W + x] = (uint8_t)(dx * dx + dy * dy < (H / 3) * (H / 3) ? 200 : (x + y + i * 5) & 255);
      }
    for (int y = 0; y < H / 2; y++)
      for (int x = 0; x < W / 2; x++) {
        fb[i][(size_t)W * H + (size_t)y * W + 2 * x] = (uint8_t)(128 + ((x * 3 + i) % 60) - 30);
        fb[i][(size_t)W * H + (size_t)y * W + 2 * x + 1] = (uint8_t)(128 + ((y * 5) % 50) - 25);
      }
    fr[i] = (hr_frame){.fmt = HR_PIX_NV12_FULL, .width = W, .height = H, .planes = {fb[i], fb[i] + (size_t)W * H}, .strides = {W, W}};
  }
  /* real frames when given: raw NV12 video range (ffmpeg -pix_fmt nv12), up to NF of them, cycled */
  FILE *rf = argc > 8 ? fopen(argv[8], "rb") : NULL;
  if (argc > 8 && !rf) { fprintf(stderr, "cannot open %s\n", argv[8]); return 1; }
  if (rf) {
    int k = 0;
    while (k < NF && fread(fb[k], 1, (size_t)W * H * 3 / 2, rf) == (size_t)W * H * 3 / 2) fr[k++].fmt = HR_PIX_NV12_VIDEO;
    for (int i = k; i < NF && k > 0; i++) { fr[i] = fr[i % k]; }
    fclose(rf);
  }
  char pd[256]; /* what an automatic backend choice would see */
  hr_status ps = hr__vk_probe(pd, sizeof pd);
  fprintf(stderr, "vulkan probe: %s: %s\n", hr_status_name(ps), pd);
  hr_session_params p;
  hr_session_params_default(&p);
  p.width = W; p.height = H; p.downsample_ratio = ratio; p.backend = HR_BACKEND_VULKAN;
  p.alpha_u8 = getenv("U8") && atoi(getenv("U8"));   /* the 8-bit matte read back (a quarter of the bytes) */
  hr_session *s;
  double t0 = now_ms();
  hr_status st = hr_session_create(m, &p, &s);
  double t_create = now_ms() - t0;
  if (st) { fprintf(stderr, "vulkan session: %s: %s\n", hr_status_name(st), s ? hr_session_last_error(s) : ""); return 1; }
  /* REG=1: the frames' memory registered (hr_session_register_memory): the GPU copies them from where they lie */
  const int reg = getenv("REG") && atoi(getenv("REG"));
  for (int i = 0; i < NF && reg; i++)
    if (hr_session_register_memory(s, fb[i], (size_t)W * H * 3 / 2)) { fprintf(stderr, "register: %s\n", hr_session_last_error(s)); return 1; }
  hr_plan_info pi; hr_session_get_plan(s, &pi);
  hr_outputs o;
  for (int i = 0; i < WU; i++) if (hr_session_push(s, &fr[i % NF], &o)) { fprintf(stderr, "push: %s\n", hr_session_last_error(s)); return 1; }
  double *wall = malloc(sizeof(double) * N), *dev = malloc(sizeof(double) * N), *hcp = malloc(sizeof(double) * N), *hsub = malloc(sizeof(double) * N);
  const char *cls[16]; double cls_us[16] = {0}; int ncls = 0;
  double *op_acc = calloc((size_t)pi.n_ops + 1, sizeof(double));
  for (int i = 0; i < N; i++) {
    double a = now_ms();
    if (hr_session_push(s, &fr[i % NF], &o)) { fprintf(stderr, "push: %s\n", hr_session_last_error(s)); return 1; }
    wall[i] = now_ms() - a;
    dev[i] = hr__vk_device_ms(s->bimpl);
    hr__vk_host_ms(s->bimpl, &hcp[i], &hsub[i]);
  }
  int xmode0 = 0; int64_t xin0 = 0, xn0 = hr__vk_frames_beside(s->bimpl, &xmode0, &xin0);
  /* then GPU time per op from a timestamp after every op (a command buffer of its own: those
   * timestamps cost the H200 ~0.35 ms a frame, so they are not in the figures above) */
  hr_session_set_profiling(s, true);
  int NP = N < 100 ? N : 100;
  for (int i = 0; i < NP; i++) {
    if (hr_session_push(s, &fr[i % NF], &o)) { fprintf(stderr, "push: %s\n", hr_session_last_error(s)); return 1; }
    for (int k = 0; k < pi.n_ops; k++) {
      const char *op, *kc; double us, mf;
      if (!hr_session_op_profile(s, k, &op, &kc, &us, &mf)) continue;
      int c = 0;
      while (c < ncls && strcmp(cls[c], kc)) c++;
      if (c == ncls && ncls < 16) cls[ncls++] = kc;
      if (c < 16) cls_us[c] += us;
      op_acc[k] += us;
    }
  }
  if (getenv("TOPOPS")) { /* the slowest ops, GPU time per frame (stderr) */
    for (int t = 0; t < atoi(getenv("TOPOPS")); t++) {
      int best = -1;
      for (int k = 0; k < pi.n_ops; k++) if (op_acc[k] >= 0 && (best < 0 || op_acc[k] > op_acc[best])) best = k;
      if (best < 0) break;
      fprintf(stderr, "  op %3d %8.1f us  %s\n", best, op_acc[best] / NP, hr_session_op_detail(s, best));
      op_acc[best] = -1;
    }
  }
  qsort(wall, N, sizeof *wall, cmpd); qsort(dev, N, sizeof *dev, cmpd); qsort(hcp, N, sizeof *hcp, cmpd); qsort(hsub, N, sizeof *hsub, cmpd);
  printf("{\"beside\":%d,\"frames_beside\":%lld,\"beside_in_place\":%lld,", xmode0, (long long)xn0, (long long)xin0);
  printf("\"reg\":%d,\"bytes_copied\":%lld,\"alpha_u8\":%d,\"fp16\":%d,\"size\":\"%dx%d\",\"ratio\":%g,\"proc\":\"%dx%d\",\"gflop\":%.2f,\"n_ops\":%d,\"frames\":%d,\"create_ms\":%.0f,"
         "\"wall_ms_median\":%.3f,\"wall_ms_p99\":%.3f,\"wall_ms_min\":%.3f,\"frame_copy_ms_median\":%.3f,\"submit_to_fence_ms_median\":%.3f,\"gpu_ms_median\":%.3f,\"gpu_ms_p99\":%.3f,\"fps_median\":%.0f,\"gpu_ms_by_class\":{",
         reg, (long long)o.bytes_copied, (int)p.alpha_u8, hr__vk_fp16(s->bimpl), W, H, ratio, pi.proc_width, pi.proc_height, pi.gflop, pi.n_ops, N, t_create, wall[N / 2], wall[(int)(N * 0.99)], wall[0], hcp[N / 2], hsub[N / 2],
         dev[N / 2], dev[(int)(N * 0.99)], 1e3 / wall[N / 2]);
  for (int c = 0; c < ncls; c++) printf("%s\"%s\":%.3f", c ? "," : "", cls[c], cls_us[c] / NP / 1e3);
  printf("}");
  /* correctness on this device: the same frames from a fresh state through XNNPACK */
  if (NC > 0) {
    hr_session *x;
    hr_session_params q = p; q.backend = HR_BACKEND_XNNPACK; q.alpha_u8 = false;
    if (hr_session_create(m, &q, &x)) { fprintf(stderr, "xnnpack session failed\n"); return 1; }
    hr_session_set_profiling(s, false);
  hr_session_reset(s);
    double worst_mean = 0, worst_max = 0;
    size_t npx = (size_t)W * H;
    float *va = malloc(sizeof(float) * npx);
    int byte_max = 0;
    for (int i = 0; i < NC; i++) {
      hr_outputs ox;
      if (hr_session_push(s, &fr[i % NF], &o)) return 1;
      if (o.alpha_u8) for (size_t k = 0; k < npx; k++) va[k] = o.alpha_u8[k] / 255.f;
      else memcpy(va, o.alpha, sizeof(float) * npx);
      if (hr_session_push(x, &fr[i % NF], &ox)) return 1;
      for (size_t k = 0; o.alpha_u8 && k < npx; k++) { /* against XNNPACK's matte quantised the same way */
        float c = ox.alpha[k] > 0.f ? ox.alpha[k] : 0.f; c = c < 1.f ? c : 1.f;
        int d = abs((int)o.alpha_u8[k] - (int)(c * 255.f + 0.5f));
        if (d > byte_max) byte_max = d;
      }
      double sum = 0, mx = 0;
      for (size_t k = 0; k < npx; k++) { double d = fabs((double)va[k] - ox.alpha[k]); sum += d; if (d > mx || d != d) mx = d; }
      if (sum / npx > worst_mean) worst_mean = sum / npx;
      if (mx > worst_max) worst_max = mx;
    }
    printf(",\"vs_xnnpack_frames\":%d,\"mean_abs_dalpha\":%.3g,\"max_abs_dalpha\":%.3g", NC, worst_mean, worst_max);
    if (p.alpha_u8) printf(",\"u8_max_byte_diff\":%d", byte_max);
    hr_session_destroy(x);
    free(va);
  }
  printf("}\n");
  hr_session_destroy(s);
  hr_model_destroy(m);
  return 0;
}
EOF
  cc -O2 -std=c11 -D_GNU_SOURCE -DHR_HAVE_VULKAN=1 -Iinclude -Isrc -o .gl/vkbench .gl/vkbench.c "$b"/libheadroom.a \
     -lXNNPACK -lpthreadpool -lcjson -lvulkan -lm -lpthread -ldl
  # real frames (the sam2-bedroom clip, scaled), raw NV12 video range, 4 per size
  d=${HR_DATA_DIR:-$here/../shared/data}/sam2-bedroom/frames
  for wh in 1920x1440 1920x1080; do
    [ -f .gl/frames_$wh.nv12 ] || ffmpeg -loglevel error -y -start_number 0 -i "$d/%05d.jpg" -frames:v 4 -s $wh -pix_fmt nv12 -f rawvideo .gl/frames_$wh.nv12
  done
  for l in $(ldd .gl/vkbench | awk '/=>/ {print $3}' | grep -E 'XNNPACK|pthreadpool|cpuinfo|cjson|clog'); do cp -L "$l" .gl/lib/; done
  # the CLI without FFmpeg for run-live: its own objects relinked, every av*/sws* symbol a stand-in
  syms=$( (nm -u "$b"/libheadroom_io.a; nm -u "$b"/CMakeFiles/headroom_cli.dir/tools/headroom/*.o) 2>/dev/null |
         awk '{print $NF}' | grep -E '^(av|sws|swr)' | sort -u || true)
  { echo '/* FFmpeg stand-ins for a CLI without FFmpeg (raw and image sources only): generated by bench/vulkan_h200.sh */'
    echo '#include <stdio.h>'; echo '#include <stdlib.h>'
    echo 'static void noav(const char *f) { fprintf(stderr, "headroom: built without FFmpeg (%s called)\n", f); exit(1); }'
    for s in $syms; do
      case $s in av_log_get_level|av_log_set_level) echo "int $s(void) { return 0; }" ;;
                 *) echo "void $s(void) { noav(\"$s\"); }" ;; esac
    done; } > .gl/noav.c
  cc -O2 -w -fno-builtin -c -o .gl/noav.o .gl/noav.c
  link=$(sed -e 's# [^ ]*/libav[a-z]*\.so##g' -e 's# [^ ]*/libsw[a-z]*\.so##g' -e "s# -o headroom # -o $here/.gl/headroom $here/.gl/noav.o #" \
         "$b"/CMakeFiles/headroom_cli.dir/link.txt)
  (cd "$b" && eval "$link")
  if ldd .gl/headroom | grep -Eq 'libav|libsw'; then echo "prepare: .gl/headroom still links FFmpeg"; exit 1; fi
  for l in $(ldd .gl/headroom | awk '/=>/ {print $3}' | grep -E 'XNNPACK|pthreadpool|cpuinfo|cjson|spng|turbojpeg'); do cp -L "$l" .gl/lib/; done
  # the live replay's frames: made on the GPU machine from the clip's JPEGs (13 MB, not 1.6 GB of NV12)
  cat > .gl/nv12gen.c <<'EOF'
/* sam2-bedroom JPEGs -> raw NV12 (full range: the JPEG's own YCbCr; with a 7th argument "tv", video
 * range, as FFmpeg's -pix_fmt nv12 leaves the clip's mp4) at WxH, bilinear, N frames going there and
 * back through the folder: nv12gen DIR COUNT W H N OUT [tv] */
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <turbojpeg.h>
static void scale(const uint8_t *s, int sw, int sh, int ss, uint8_t *d, int dw, int dh, int dstride, int dstep) {
  for (int y = 0; y < dh; y++) {
    float fy = (y + 0.5f) * sh / dh - 0.5f; if (fy < 0) fy = 0;
    int y0 = (int)fy, y1 = y0 + 1 < sh ? y0 + 1 : sh - 1; float wy = fy - y0;
    for (int x = 0; x < dw; x++) {
      float fx = (x + 0.5f) * sw / dw - 0.5f; if (fx < 0) fx = 0;
      int x0 = (int)fx, x1 = x0 + 1 < sw ? x0 + 1 : sw - 1; float wx = fx - x0;
      float a = s[y0 * ss + x0] * (1 - wx) + s[y0 * ss + x1] * wx, b = s[y1 * ss + x0] * (1 - wx) + s[y1 * ss + x1] * wx;
      d[(size_t)y * dstride + (size_t)x * dstep] = (uint8_t)(a * (1 - wy) + b * wy + 0.5f);
    }
  }
}
int main(int argc, char **argv) {
  if (argc < 7) { fprintf(stderr, "usage: nv12gen DIR COUNT W H N OUT [tv]\n"); return 2; }
  int cnt = atoi(argv[2]), W = atoi(argv[3]), H = atoi(argv[4]), N = atoi(argv[5]), tv = argc > 7 && argv[7][0] == 't';
  FILE *o = fopen(argv[6], "wb");
  if (!o) { perror(argv[6]); return 1; }
  tjhandle tj = tjInitDecompress();
  uint8_t *out = malloc((size_t)W * H * 3 / 2), *jb = NULL, *pl[3] = {0};
  for (int i = 0; i < N; i++) {
    int k = i % (2 * cnt); if (k >= cnt) k = 2 * cnt - 1 - k;
    char path[4096]; snprintf(path, sizeof path, "%s/%05d.jpg", argv[1], k);
    FILE *f = fopen(path, "rb"); if (!f) { perror(path); return 1; }
    fseek(f, 0, SEEK_END); long n = ftell(f); fseek(f, 0, SEEK_SET);
    jb = realloc(jb, (size_t)n); if (fread(jb, 1, (size_t)n, f) != (size_t)n) return 1; fclose(f);
    int w, h, sub, cs;
    if (tjDecompressHeader3(tj, jb, (unsigned long)n, &w, &h, &sub, &cs)) { fprintf(stderr, "%s: %s\n", path, tjGetErrorStr2(tj)); return 1; }
    int cw = tjPlaneWidth(1, w, sub), ch = tjPlaneHeight(1, h, sub);
    if (!pl[0]) { pl[0] = malloc((size_t)w * h); pl[1] = malloc((size_t)cw * ch); pl[2] = malloc((size_t)cw * ch); }
    int st[3] = {w, cw, cw};
    if (tjDecompressToYUVPlanes(tj, jb, (unsigned long)n, pl, w, st, h, 0)) { fprintf(stderr, "%s: %s\n", path, tjGetErrorStr2(tj)); return 1; }
    scale(pl[0], w, h, w, out, W, H, W, 1);
    scale(pl[1], cw, ch, cw, out + (size_t)W * H, W / 2, H / 2, W, 2);
    scale(pl[2], cw, ch, cw, out + (size_t)W * H + 1, W / 2, H / 2, W, 2);
    for (size_t q = 0; tv && q < (size_t)W * H * 3 / 2; q++)   /* Y 16..235, Cb Cr 16..240 */
      out[q] = (uint8_t)(q < (size_t)W * H ? 16 + out[q] * 219 / 255 : 128 + ((int)out[q] - 128) * 224 / 255);
    if (fwrite(out, 1, (size_t)W * H * 3 / 2, o) != (size_t)W * H * 3 / 2) { perror("write"); return 1; }
  }
  fclose(o);
  return 0;
}
EOF
  cc -O2 -o .gl/nv12gen .gl/nv12gen.c -lturbojpeg
  mkdir -p .gl/bedroom && cp -u "$d"/*.jpg .gl/bedroom/
  # run-quality: live_quality (public API; XNNPACK, pthreadpool, cpuinfo, cJSON from .gl/lib) and
  # vtest's frames 400-639 (held out of any tuning) as JPEGs, 768x576
  cp "$b"/live_quality .gl/
  cc -O2 -std=c11 -o .gl/pool_dispatch bench/pool_dispatch.c -lpthreadpool   # a dispatch's cost
  vt=${VTEST:-/usr/share/doc/opencv-doc/examples/data/vtest.avi}
  if [ ! -f .gl/vtest/00239.jpg ] && [ -f "$vt" ]; then
    mkdir -p .gl/vtest
    ffmpeg -loglevel error -y -i "$vt" -vf 'select=gte(n\,400)' -vsync 0 -frames:v 240 -q:v 2 -start_number 0 .gl/vtest/%05d.jpg
  fi
  ls -la .gl .gl/lib
  du -sh .gl
  echo "glibc versions needed: $(objdump -T .gl/vkbench .gl/lib/*.so* | grep -o 'GLIBC_[0-9.]*' | sort -uV | tail -1)"
  exit 0
fi

# run (on the GPU machine)
for f in .gl/*.deb; do dpkg -x "$f" /; done
ldconfig
if [ -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ]; then
  export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
  export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
fi
export LD_LIBRARY_PATH=$here/.gl/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
if [ "$mode" = run-live ]; then
  missing=$(ldd ${LIVE_CLI:-.gl/headroom} | grep 'not found' || true)
  if [ -n "$missing" ]; then echo "run-live: missing here: $missing"; exit 1; fi
  n=${LIVE_FRAMES:-400}; tmp=${TMPDIR:-/tmp}/hr_live
  rm -rf "$tmp/o"; mkdir -p "$tmp"
  if [ "$(stat -c %s "$tmp/f.nv12" 2>/dev/null)" != $((n * 1920 * 1440 * 3 / 2)) ]; then
    .gl/nv12gen .gl/bedroom "$(ls .gl/bedroom | wc -l)" 1920 1440 "$n" "$tmp/f.nv12"
    sync   # the replay's 1.6 GB written back before the run, not during it
  fi
  set +e
  ${LIVE_CLI:-.gl/headroom} run --model models/rvm.json --input "$tmp/f.nv12" --input-format nv12:1920x1440@60 --out "$tmp/o" \
    --backend vulkan --realtime --ratio 0.25 --telemetry "$tmp/o/telemetry.jsonl" ${LIVE_ARGS:-} 2> "$tmp/log"
  rc=$?
  set -e
  grep -v 'headroom vulkan: frame copy' "$tmp/log"
  t=$tmp/o/telemetry.jsonl
  lines=$(wc -l < "$t"); pngs=$(ls "$tmp/o/alpha" 2>/dev/null | wc -l)
  # PNG names against the telemetry's frame numbers, one for one
  diff <(ls "$tmp/o/alpha" 2>/dev/null) <(grep -o '"frame":[0-9]*' "$t" | cut -d: -f2 | awk '{printf "%06d.png\n", $1}') > /dev/null \
    && same=yes || same=NO
  q() { grep -o "\"$1\":[0-9.]*" "$t" | cut -d: -f2 | sort -g | awk -v p="$2" '{a[NR]=$1} END {i=int(NR*p); if (i<1) i=1; if (i>NR) i=NR; print a[i]}'; }
  span=$(grep -o '"t_ms":[0-9.]*' "$t" | cut -d: -f2 | sort -g | sed -n '1p;$p' | paste -sd' ')
  echo "run-live: exit $rc; telemetry lines $lines, alpha PNGs $pngs, names match: $same"
  echo "run-live: processing sizes (frames): $(grep -o '"proc_w":[0-9]*,"proc_h":[0-9]*' "$t" | sort | uniq -c | sed 's/"proc_w"://;s/,"proc_h":/x/' | paste -sd' ')"
  echo "run-live: delivered fps $(echo "$span" | awk -v n="$lines" '{print (n-1)*1000/($2-$1)}'), dropped (last line) $(tail -1 "$t" | grep -o '"dropped":[0-9]*' | cut -d: -f2) of $n"
  echo "run-live: latency_ms p50 $(q latency_ms 0.5) p99 $(q latency_ms 0.99) max $(q latency_ms 1); infer_ms p50 $(q infer_ms 0.5) p99 $(q infer_ms 0.99); device_ms p50 $(q device_ms 0.5) p99 $(q device_ms 0.99); output_ms p50 $(q output_ms 0.5) p99 $(q output_ms 0.99)"
  if grep -q 'headroom vulkan: frame copy' "$tmp/log"; then   # HR_VK_TRACE=1: the backend's own times per frame
    for kf in copy:5 submit-to-fence:10 gpu:13; do
      echo "run-live: vulkan ${kf%:*} ms p50/p99/max $(grep 'headroom vulkan: frame copy' "$tmp/log" | awk -v f=${kf#*:} '{print $f}' |
        sort -g | awk '{a[NR]=$1} END {print a[int(NR/2)+1], a[int(NR*0.99)], a[NR]}')"
    done
  fi
  if [ -n "${OUT:-}" ]; then cp "$tmp/log" "$t" "$OUT/"; ls "$tmp/o/alpha" 2>/dev/null | sed -n '1p;200p' | while read -r f; do cp "$tmp/o/alpha/$f" "$OUT/"; done; fi
  exit $rc
fi
if [ "$mode" = run-quality ]; then
  # issue 15's done-when 1 on two of this machine's cores (live_quality --cpus A,B, after the base
  # mattes on every CPU): bedroom's 200 frames and vtest's 400-639, each 1920x1440 NV12 @60 (video
  # range, bilinear from the JPEGs: not bit for bit the clip quality_at_budget.sh makes with FFmpeg).
  # QRUNS (default 2) runs of each clip; QMODES (default shrink,tail); QCPUS (default: the first
  # CPU of each of the first two cores); QARGS (more live_quality options, e.g. --ratio 0.171).
  tmp=${TMPDIR:-/tmp}/hr_quality; mkdir -p "$tmp"
  lscpu | grep -E 'Model name|^CPU\(s\)|Thread\(s\) per core' | sed 's/  */ /g'
  # two cores (the first CPU of each of the first two), not one core's two hyperthreads
  cpus=${QCPUS:-$(lscpu -p=CPU,CORE | grep -v '^#' | awk -F, '!seen[$2]++ {print $1}' | head -2 | paste -sd,)}
  echo "run-quality: the live runs on CPUs $cpus (CPU,core: $(lscpu -p=CPU,CORE | grep -v '^#' | paste -sd' '))"
  .gl/nv12gen .gl/bedroom 200 1920 1440 200 "$tmp/bedroom.nv12" tv
  [ -f .gl/vtest/00239.jpg ] && .gl/nv12gen .gl/vtest 240 1920 1440 240 "$tmp/vtest-held.nv12" tv
  for i in $(seq "${QRUNS:-2}"); do
    for clip in bedroom vtest-held; do
      [ -f "$tmp/$clip.nv12" ] || continue
      .gl/live_quality models/rvm.json "$tmp/$clip.nv12" 1920x1440 --fps 60 --threads 2 --cpus "$cpus," \
        --base-threads "$(nproc)" --modes "${QMODES:-shrink,tail}" --label "$clip" ${QARGS:-} 2>&1
    done
  done
  exit 0
fi
if [ "$mode" = run-xq ]; then
  r() { echo "== $*"; env U8=1 "$@" bash "$0" run "${SZ:-1920x1440@0.25}" 2>&1 | grep -E '^\{|probe|created in' |
        sed 's/"gpu_ms_by_class".*"vs_xnnpack/..."vs_xnnpack/'; }
  r REG=1 HR_VK_XQ=1 HR_VK_VERBOSE=1   # the first: pipelines compiled cold; says which queue
  for i in 1 2; do r REG=1 HR_VK_XQ=0; r REG=1 HR_VK_XQ=1; done
  r REG=0 HR_VK_XQ=0; r REG=0 HR_VK_XQ=1
  SZ=1920x1440@0.5 r REG=1 HR_VK_XQ=1; SZ=1920x1080@0.25 r REG=1 HR_VK_XQ=1
  exit 0
fi
sizes=${2:-"1920x1440@0.25 1920x1440@0.5 1920x1080@0.25"}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader 2>/dev/null || true
for sz in $sizes; do
  wh=${sz%@*}; r=${sz#*@}
  raw=.gl/frames_${wh}.nv12
  [ -f "$raw" ] || raw=
  line=$(${VKBENCH:-.gl/vkbench} models/rvm.json "${wh%x*}" "${wh#*x}" "$r" "${FRAMES:-300}" "${WARMUP:-20}" "${CHECK:-3}" $raw)
  echo "$line"
  if [ -n "${JSONL:-}" ]; then echo "$line" >> "$JSONL"; fi
done
