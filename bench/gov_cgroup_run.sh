#!/usr/bin/env bash
# Runs a command inside a fresh memory cgroup limited to LIMIT_MB (no swap) and reports whether the
# kernel OOM-killed it; removes the cgroup afterwards. Needs root; exits 77 where it cannot run.
#
#   bench/gov_cgroup_run.sh LIMIT_MB -- CMD [ARGS...]
#
# Exit status: the command's own (137 = SIGKILL, the OOM killer's signal), 77 = skipped, 2 = usage.
# The last line on stderr is a summary:
#   gov_cgroup_run: result=killed|survived|failed cgroup=v1|v2 limit_mb=420 rc=137 oom_kill=1 peak_mb=419.8 anon_peak_mb=371.2
# peak_mb is the kernel's own high-water of the group's usage, page cache included: a group that
# reads files reaches its limit and the kernel drops cache there, which harms nothing. anon_peak_mb
# is what the kernel cannot drop (anonymous memory and shmem, memory.stat's total_rss + total_shmem
# on v1, anon + shmem on v2), sampled every 0.1 s from outside the group while the command runs.
set -u

say() { echo "gov_cgroup_run: $*" >&2; }
skip() { say "SKIP: $*"; exit 77; }
usage() { echo "usage: $0 LIMIT_MB -- CMD [ARGS...]" >&2; exit 2; }

[ $# -ge 3 ] || usage
LIMIT_MB=$1; shift
[ "$1" = "--" ] || usage
shift
[[ "$LIMIT_MB" =~ ^[0-9]+$ ]] && [ "$LIMIT_MB" -gt 0 ] || { say "LIMIT_MB must be a positive integer"; usage; }
LIMIT=$((LIMIT_MB * 1024 * 1024))

[ "$(id -u)" = 0 ] || skip "needs root to create a cgroup"
[ -d /sys/fs/cgroup ] || skip "no /sys/fs/cgroup"

CG=""
VER=""
if [ "$(stat -fc %T /sys/fs/cgroup 2>/dev/null)" = "cgroup2fs" ]; then
  VER=v2
  grep -qw memory /sys/fs/cgroup/cgroup.controllers 2>/dev/null || skip "cgroup v2 without the memory controller"
  grep -qw memory /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null ||
    echo +memory > /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null ||
    skip "cannot enable the memory controller in /sys/fs/cgroup/cgroup.subtree_control"
  CG=/sys/fs/cgroup/hr-test-$$
elif [ -f /sys/fs/cgroup/memory/memory.limit_in_bytes ]; then
  VER=v1
  # Nest under this shell's own memory cgroup so that limits above it still apply.
  own=$(awk -F: '$2 ~ /(^|,)memory(,|$)/ {print $3}' /proc/self/cgroup)
  parent=/sys/fs/cgroup/memory${own%/}
  [ -f "$parent/memory.limit_in_bytes" ] || parent=/sys/fs/cgroup/memory
  CG=$parent/hr-test-$$
else
  skip "no memory cgroup (neither v2 nor v1 memory controller mounted at /sys/fs/cgroup)"
fi

cleanup() {
  [ -n "$CG" ] && [ -d "$CG" ] || return 0
  # Only processes we started can be in this cgroup: our command and its children.
  local pid
  for pid in $(cat "$CG/cgroup.procs" 2>/dev/null); do kill -KILL "$pid" 2>/dev/null; done
  for _ in 1 2 3 4 5 6 7 8 9 10; do rmdir "$CG" 2>/dev/null && return 0; sleep 0.1; done
  say "warning: could not remove $CG"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

mkdir "$CG" 2>/dev/null || skip "cannot create $CG"
if [ $VER = v2 ]; then
  echo "$LIMIT" > "$CG/memory.max" || skip "cannot set memory.max"
  [ -f "$CG/memory.swap.max" ] && echo 0 > "$CG/memory.swap.max"
else
  echo "$LIMIT" > "$CG/memory.limit_in_bytes" || skip "cannot set memory.limit_in_bytes"
  [ -f "$CG/memory.memsw.limit_in_bytes" ] && echo "$LIMIT" > "$CG/memory.memsw.limit_in_bytes" 2>/dev/null
  echo 0 > "$CG/memory.swappiness" 2>/dev/null
fi
say "cgroup $VER $CG limit ${LIMIT_MB} MB (no swap): $*"

anon_keys="total_rss total_shmem"
[ $VER = v2 ] && anon_keys="anon shmem"
ANON=$(mktemp)
sample() { # the largest anon + shmem seen, written to $ANON each time it grows (builtins only)
  local max=0 k v sum
  while [ -d "$CG" ]; do
    sum=0
    while read -r k v; do
      case " $anon_keys " in *" $k "*) sum=$((sum + v));; esac
    done < "$CG/memory.stat" 2>/dev/null
    [ "$sum" -gt "$max" ] && { max=$sum; echo "$max" > "$ANON"; }
    sleep 0.1
  done
}
sample &
sampler=$!
# The subshell moves itself into the cgroup, then becomes the command.
( echo "$BASHPID" > "$CG/cgroup.procs" || exit 126; exec "$@" )
rc=$?
kill "$sampler" 2>/dev/null; wait "$sampler" 2>/dev/null
anon_peak=$(cat "$ANON" 2>/dev/null); rm -f "$ANON"

if [ $VER = v2 ]; then
  oom=$(awk '$1 == "oom_kill" {print $2}' "$CG/memory.events" 2>/dev/null)
  peak=$(cat "$CG/memory.peak" 2>/dev/null || echo 0)
else
  oom=$(awk '$1 == "oom_kill" {print $2}' "$CG/memory.oom_control" 2>/dev/null)
  peak=$(cat "$CG/memory.max_usage_in_bytes" 2>/dev/null || echo 0)
fi
oom=${oom:-0}
peak_mb=$(awk -v b="$peak" 'BEGIN { printf "%.1f", b / 1048576 }')
anon_peak_mb=$(awk -v b="${anon_peak:-0}" 'BEGIN { printf "%.1f", b / 1048576 }')
if [ "$oom" -gt 0 ] || [ $rc -eq 137 ]; then result=killed
elif [ $rc -eq 0 ]; then result=survived
else result=failed
fi
say "result=$result cgroup=$VER limit_mb=$LIMIT_MB rc=$rc oom_kill=$oom peak_mb=$peak_mb anon_peak_mb=$anon_peak_mb"
exit $rc
