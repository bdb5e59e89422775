#!/usr/bin/env bash
# threads_scaling.sh: how headroom's frame time scales with threads (issue 15, done-when 5: on a
# 16-core host, 16 threads >= 10x one thread at 1920x1440 ratio 0.25). Runs `headroom bench` on a
# synthetic NV12 frame (read in place, as the live loop does) at each thread count, ROUNDS times
# interleaved (1 2 4 ... then again), and reports each count's median of the rounds' medians and its
# speed-up over one thread; per-class times (conv, elementwise, copy, ...) at each count are kept in
# the JSON so a class that does not scale shows. One JSON line on stdout, a table on stderr.
#
# usage: bench/threads_scaling.sh [--threads "1 2 4 8 16"] [--size WxH] [--ratio R] [--frames N]
#                                 [--rounds N] [--format nv12] [--warmup N]
#   --threads LIST  counts to run (default 1 2 4 8 16, cut at nproc; 1 is always run: the baseline)
#   --frames N      frames timed per run (default 20)
#   --warmup N      frames run before the timed ones (default 10: the engine measures which small ops
#                   wake the pool over its first ~10 runs, exec.c opick, and those runs are slower at
#                   16 threads; before 2026-12-06 bench's default of 3, so the timed frames held them)
#   --rounds N      runs per count, interleaved (default 3)
# env: HR_CLI (default build/headroom), HR_MODEL_DIR (default models/). Engine switches pass through
# to every run, for A/B on the same host: HR_BAND_SPLIT=1 keeps the plan's convolution bands as they
# are (default: cut into ceil(4 threads / bands) <= 4 above 2 threads, exec.c), HR_EXEC_FUSE=0 runs
# every op on its own kernel, HR_DWCONV=xnn keeps XNNPACK's depthwise convolutions (default on AVX-512:
# ours, tasks of 64 channels x three output rows, fewer channels where that leaves under 4 tasks a
# thread; same bits; before 2026-12-05 one row a task), HR_OP_POOL=0 keeps the size rule for which small ops wake
# the pool (default: measured per op in the first runs, exec.c opick; after 2026-12-05), HR_POOL_PARK=0
# leaves the pool's threads spinning after each run (default: asleep, exec.c park_pool; after 2026-12-06).
# HR_WINO=0 keeps XNNPACK for the 3x3 stride-1 convolutions (default on AVX-512: Winograd F(4x4, 3x3),
# src/session/wino.c; from the evening of 2026-12-06).
# 2026-12-07 (session 38), H100 machines' hosts: at d823165 (the 16 -> 4 1x1 in the Winograd's
# epilogue) `--threads "1 16" --rounds 5 --frames 12`: 1: 92.29 ms, 16: 12.92 -> 7.14x; HR_WINO_PW=0
# against on, 3 rounds alternating, 16 threads 12.83/14.89/14.13 -> 12.64/13.96/13.77 ms. At b0d836b
# (our pointwise matrix product at every thread count), a fast host: 50.31 -> 6.46 ms, 7.79x, but at
# 16 threads the 1x1 class 1.47 -> 1.80 ms against HR_PWG=0 (4 of 4 rounds), so 0265e4d keeps it to
# 1-2 threads; with its two orders but before that rule, on a noisy host (one thread 76.7-116.0 ms): 6.84x.
# At 0265e4d (16 threads unchanged from d823165's engine) on a host in its slow one-core state (load
# 6.8 at the end): 120.68 ms [103.59-125.3] -> 12.94 [11.98-14.15], 9.33x: the slow single core, not
# a faster 16 (the fast host's 6.46 ms above is 7.79x).
# 2026-12-07 (session 36), H100 machines' hosts in a noisy state, after the means over the pixels in
# runs (exec.c K_GAP; HR_GAP_RUNS=0: one run) and the pointwise HardSwish bands dropped from 8 threads
# (hs_bands; HR_HS_PW_BANDS=1 keeps them): `--threads "1 16" --rounds 5 --frames 12`: 1: 75.84 ms
# [75.01, 73.69, 75.84, 78.43, 77.98], 16: 10.83 [9.71-11.44] -> 7.00x; in a later call, with a
# HardSwish kernel of ours in the build (dropped: no faster than XNNPACK's), 84.12 [76.15-104.64] ->
# 10.18 (8.26x). Against both switches set (the engine before), alternating at 16 threads: 10.05-10.91
# against 9.98-11.20 ms (4 rounds), within the noise; at 8 threads (the later call) 13.53-15.26 against
# 14.00-17.83.
# 2026-12-07 (session 35) on an H100 machine's host (16 vCPUs, "Intel(R) Xeon(R) Processor"), the CLI
# of 501ca26: `--threads "1 16" --rounds 5 --frames 12`: 1: 62.25 ms [72.31, 60.08, 61.7, 62.25,
# 63.59], 16: 7.76 [7.46-8.03] -> 8.02x; by class 1 -> 16: conv3x3 33.98 -> 3.25 (10.5x), conv1x1
# 18.72 -> 2.20 (8.5x), depthwise 4.61 -> 0.66 (7.0x), elementwise 3.13 -> 0.76 (4.1x), resize 1.01 ->
# 0.26. `bench` at 16 threads, 2 rounds, switches against the default (7.89 / 7.26 ms): HR_POOL_PARK=0
# 8.12 / 6.71, HR_OP_POOL=0 7.42 / 7.30, HR_BAND_SPLIT=1 7.41 / 7.27: none apart from the noise.
# Load from other processes skews the result: the load average at start and end is in the output;
# run it on an idle host.
#
# Measured 2026-12-02 on the H200 machine's host (lscpu: 16 cores, 1 thread per core, 1 socket, L2
# 2 MiB a core, L3 300 MiB; "Intel(R) Xeon(R) Processor", AVX-512), `--rounds 3 --frames 12` with the
# CLI built without FFmpeg (HR_CLI=.gl/headroom, bench/vulkan_h200.sh prepare):
#   1: 147.09 ms (runs 193.18 / 147.09 / 133.34)  2: 75.96  4: 48.10  8: 26.23  16: 17.35 -> 8.48x
# Per op (`headroom bench --ops-all`, 12 frames, 1 vs 16 threads): no large op scales past ~9x,
# XNNPACK's own included (360x480x35->16 3x3: 16.47 -> 1.855 ms, 8.9x; 180x240x59->32: 8.6x); the
# summed op time 134.8 -> 18.0 ms. What scales least: the 42 ops on a 1x1 input (squeeze-excitation
# and LR-ASPP 1x1 convolutions: XNNPACK does not spread one pixel's output channels over threads,
# 960->240 is 76 us at 1 thread and 77 at 16) 1.61 -> 0.78 ms, and the 13 Mean / AvgPool ops
# 1.02 -> 0.57 ms. Every op on whichever of 1 or 16 threads is faster would save only 0.26 ms.
# The next day (1037a07, same host kind, by hand: `bench --frames 12 --threads 1|16`, 7 rounds
# alternating): 16 threads 16.14-18.15 ms (median 17.69), 1 thread 122.7-206.8 (median 187.1):
# 10.58x by medians, per round 7.16-11.69x. The 1-thread runs fall in two groups (122.7, 126.9
# against 155.6-206.8): the host's one-core speed moves by half, 16 threads' hardly. The same
# day's earlier call: 1 thread 144.0-234.7 over 6 runs, 16 threads 16.6-18.6.
# 2026-12-03 (same host kind, `bench --frames 15 --threads 1|16 --ops-all`, 3 rounds alternating, the
# CLI of 5680b57): 1 thread 112.06 / 114.71 / 113.57 ms, 16 threads 13.45 / 14.98 / 16.22 -> 8.3x /
# 7.7x / 7.0x (the 16-thread runs slowing round by round). By kernel, round 1: XNNPACK's own 85
# operators 81.5 -> 9.2 ms (8.9x; conv3x3 9.8x, conv1x1 6.6x), element-wise 3.3x; every op on the
# faster of 1 or 16 threads would save 0.35 ms. So the frame cannot reach 10x on this host unless
# our kernels scale better than linearly. The 17 one-pixel 1x1 convolutions (squeeze-excitation,
# LR-ASPP) ran on one thread; since 8ff8c7a they run over the pool from 4 threads (hr__k_matvec):
# their sum at 16 threads 0.55-0.62 -> 0.18-0.24 ms (4 rounds alternating with HR_MATVEC=xnn; the
# frames' medians, 16.4-20.5 ms, too noisy to show it).
# 2026-12-03, session 16 (same host kind, the 004c399 CLI): `--threads "1 16" --rounds 5 --frames 12`:
#   1: 181.18 ms median of [181.18, 187.31, 115.5, 251.56, 117.39]; 16: 16.30 of [16.57, 15.54, 15.22,
#   16.3, 16.61] -> 11.12x ("target_met": true). By hand in an earlier call of the day: 1 thread 172.8 /
#   189.9 / 243.2 ms against 16 threads 15.7 / 17.8 / 17.7 (11.0x / 10.7x / 13.7x). The one-thread runs
#   fall in two groups, 115-117 ms and 172-252 ms, while 16 threads stay at 15-18 ms: measured against
#   the fast group alone the ratio is 7.1-7.6x (and session 15 saw only that group: 7.0-8.3x). So the
#   figure follows the host's one-core state; the target is met by this script's medians on some days
#   and not on others, and the 16-thread frame (15-18 ms) has not moved.
# 2026-12-05, session 23, on the H100 machine's host (16 vCPUs, "Intel(R) Xeon(R) Processor", the
# CLI of ef81f72): `--threads "1 16" --rounds 5 --frames 12`: 1: 149.08 ms median of [127.67, 144.59,
# 193.2, 149.08, 181.34]; 16: 18.43 of [16.51, 18.43, 18.4, 19.75, 18.69] -> 8.09x. By class 1 -> 16:
# conv1x1 29.06 -> 4.06 (7.2x), conv3x3 80.17 -> 8.99 (8.9x), depthwise 8.50 -> 1.18, elementwise
# 8.22 -> 1.62 (5.1x), resize 6.99 -> 0.82, copy 6.01 -> 0.82, refiner 2.76 -> 0.33. A later call on a
# fresh host (`bench --ops-all`, 12 frames, 1/16/1/16): 117.44 / 15.91 / 158.93 / 15.57 ms (7.4x or
# 10.2x by which one-thread run), summed ops 150.48 -> 15.00 (10.03x). What loses most against 10x,
# ~1 ms of the 15.6 together: the bottleneck's ConvGRU gates at 23x30x64 (0.116 ms on 1 thread,
# 0.114 on 16), the 90x120x3 AvgPool (0.070 on both), the squeeze-excitation means and broadcasts,
# the 23x30x960 1x1 expansions (7.5x).
# 2026-12-05, session 24, the same kind of host (CLI of dc6ec24: the depthwise kernel in three-row
# bands): `--threads "1 16" --rounds 5 --frames 12`: 1: 204.99 ms of [216.61, 198.04, 178.48, 204.99,
# 207.27]; 16: 25.19 of [28.78, 19.59, 25.19, 25.45, 18.61] -> 8.14x (depthwise 9.98 -> 1.29 ms).
# Right after, HR_DWCONV=xnn, 3 rounds: 185.25 / 19.43 ms -> 9.53x (depthwise 9.53 -> 1.24). The
# one-thread conv3x3 alone took 140.3 and then 88.4 ms: the host's one-core speed moved between the
# two, so the pair tells nothing about the depthwise kernels.
# 2026-12-05, session 25, the same kind of host, quiet (the CLI of fuse_resize_conv's first form,
# every resize-concat fused, before d51ea76 limited it to tall bands): 1: 92.96 ms of [87.56, 86.96, 93.07, 94.49, 92.96]; 16: 11.96 of [11.11,
# 10.47, 11.96, 12.04, 12.13] -> 7.77x. By class 1 -> 16: conv1x1 17.64 -> 2.65 (6.7x), conv3x3
# 58.58 -> 6.01 (9.8x), depthwise 4.82 -> 0.77, elementwise 5.27 -> 1.14 (4.6x), copy 4.16 -> 0.49,
# refiner 1.76 -> 0.21. The fastest one-thread frame yet, so the lowest ratio: the 16-thread frame
# (12 ms) is the best this script has seen too.
# 2026-12-06, session 27, an H100 machine's host (16 vCPUs, "Intel(R) Xeon(R) Processor", L2 32 MiB
# in 16, L3 105 MiB), the CLI of ec320d2 (the pool's threads asleep after each run), quiet and steady
# (one-thread runs within 3%): `--threads "1 16" --rounds 5 --frames 12` with bench's 3 warm-up frames
# (as every figure above): 1: 135.73 ms of [134.46-137.84], 16: 15.72 of [14.78-16.33] -> 8.63x.
# With 10 warm-up frames (now the default), the next call: 1: 134.69 of [134.49-135.75], 16: 13.61
# of [12.94-14.60] -> 9.90x; then 3 warm-up frames again, 3 rounds: 133.88 / 15.12 -> 8.85x, and
# HR_OP_POOL=0: 16 threads 15.09. The 16-thread frames of the first ~10 runs are slower (the pool
# choice measuring, first touches): `bench --threads 16 --warmup 10 --frames 20`, ABBA 3 rounds:
# 12.52-14.08 ms (median ~12.9) with HR_POOL_PARK=0, 12.58-13.03 (~12.74) with the park;
# HR_OP_POOL=0 13.13-13.40, on 12.64-13.66. By class 1 -> 16 (--ops-all): conv3x3 89.26 -> 6.07
# (14.7x), conv1x1 26.20 -> 3.06 (8.6x), depthwise 7.78 -> 0.97 (8.0x), elementwise 7.19 -> 1.33
# (5.4x), resize 3.56 -> 0.59, copy 4.79 -> 0.43, refiner 2.39 -> 0.21. The squeeze-excitation Muls
# at 45x60x120 take 0.12 ms on 16 threads against 0.09 on one: they read what 16 cores just wrote.
# 2026-12-06, session 28, another H100 machine's host (16 vCPUs, "Intel(R) Xeon(R) Processor"), idle
# (load 0.00 at start), `--threads "1 16" --rounds 3 --frames 12` (10 warm-up frames), the CLI with the
# depthwise tasks band-major (new) against 7de6a2c (old), alternating new / old three times:
#   new: 1: 107.05 / 106.47 / 106.10 ms, 16: 10.02 / 9.71 / 9.69 -> 10.68x, 10.96x, 10.95x
#   old: 1: 107.05 / 106.99 / 106.03 ms, 16: 10.05 / 9.96 / 9.70 -> 10.65x, 10.74x, 10.93x
# This host's one-thread frame is 20% faster than session 27's (134.69 ms), and 16 threads scale
# further on it; the two builds are within each other's spread. By class at 16 threads (--ops-all,
# one run each): depthwise 0.67 (new) / 0.76 (old) ms, conv1x1 1.98 / 2.09, conv3x3 5.11 / 4.76,
# elementwise 1.13 / 1.18, resize 0.50, copy 0.37, refiner 0.16.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
cli=${HR_CLI:-$src/build/headroom}
models=${HR_MODEL_DIR:-$src/models}
size=1920x1440 ratio=0.25 frames=20 rounds=3 format=nv12 warmup=10
ncpu=$(nproc)
threads=""
while [ $# -gt 0 ]; do
  case $1 in
    --threads) threads=$2; shift 2;;
    --size) size=$2; shift 2;;
    --ratio) ratio=$2; shift 2;;
    --frames) frames=$2; shift 2;;
    --rounds) rounds=$2; shift 2;;
    --format) format=$2; shift 2;;
    --warmup) warmup=$2; shift 2;;
    -h|--help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0;;
    *) echo "threads_scaling: unknown option $1" >&2; exit 2;;
  esac
done
if [ -z "$threads" ]; then
  for t in 1 2 4 8 16; do [ "$t" -le "$ncpu" ] && threads="$threads $t"; done
  [ "$ncpu" -gt 16 ] || case " $threads " in *" $ncpu "*) ;; *) threads="$threads $ncpu";; esac
fi
threads=$(echo "1 $threads" | tr ' ' '\n' | awk 'NF && !seen[$0]++' | tr '\n' ' ')
[ -x "$cli" ] || { echo "threads_scaling: $cli not built" >&2; exit 1; }
[ -f "$models/rvm.json" ] || { echo "threads_scaling: $models/rvm.json missing" >&2; exit 1; }
command -v python3 >/dev/null || { echo "threads_scaling: python3 is needed" >&2; exit 1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/hr_threads.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
la0=$(cut -d' ' -f1-3 /proc/loadavg)
cpu=$(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //' || echo unknown)
echo "threads_scaling: rvm $size ratio $ratio $format, threads: $threads, $rounds rounds of $frames frames; $ncpu CPUs ($cpu); load $la0" >&2
for r in $(seq "$rounds"); do
  for t in $threads; do
    "$cli" bench --model "$models/rvm.json" --size "$size" --ratio "$ratio" --format "$format" --threads "$t" \
      --warmup "$warmup" --frames "$frames" --json > "$tmp/run.json"
    printf '%s %s\n' "$t" "$(tail -n 1 "$tmp/run.json")" >> "$tmp/all.txt"
  done
done
la1=$(cut -d' ' -f1-3 /proc/loadavg)
python3 - "$tmp/all.txt" "$size" "$ratio" "$format" "$ncpu" "$cpu" "$la0" "$la1" "$rounds" "$frames" <<'EOF'
import json, statistics as st, sys
path, size, ratio, fmt, ncpu, cpu, la0, la1, rounds, frames = sys.argv[1:]
runs = {}
for line in open(path):
    t, j = line.split(" ", 1)
    runs.setdefault(int(t), []).append(json.loads(j))
res = {}
for t, v in sorted(runs.items()):
    classes = {}
    for x in v:
        for c, y in x.get("classes", {}).items():
            classes.setdefault(c, []).append(y["ms"])
    res[t] = {"median_ms": round(st.median(x["median_ms"] for x in v), 2),
              "runs_ms": [round(x["median_ms"], 2) for x in v],
              "classes_ms": {c: round(st.median(y), 3) for c, y in classes.items()}}
base = res[1]["median_ms"]
for t in res:
    res[t]["speedup"] = round(base / res[t]["median_ms"], 2)
print("threads  median ms  speed-up  (runs)", file=sys.stderr)
for t, r in res.items():
    print(f"{t:7d}  {r['median_ms']:9.2f}  {r['speedup']:7.2f}x  {r['runs_ms']}", file=sys.stderr)
top = max(res)
out = {"bench": "threads_scaling", "model": "rvm", "size": size, "ratio": float(ratio), "format": fmt, "cpus": int(ncpu), "cpu": cpu,
       "rounds": int(rounds), "frames": int(frames), "loadavg_start": [float(x) for x in la0.split()],
       "loadavg_end": [float(x) for x in la1.split()], "threads": {str(t): r for t, r in res.items()},
       "max_threads": top, "speedup_max": res[top]["speedup"], "target": "16 threads >= 10x 1 thread",
       "target_met": (res[16]["speedup"] >= 10) if 16 in res else None}
print(json.dumps(out))
EOF
