#!/usr/bin/env bash
# Issue 5 kill test, both halves, in the suite: governed RVM survives a 420 MB cgroup with growing
# ballast (RSS within 5% of the a14 safe limit, recovery after the ballast goes), ungoverned is killed.
# Evidence (issue 16, point 6), read from the kernel and from the runs' own telemetry:
#   - governed: no OOM kill, and the group's memory that the kernel cannot drop (anonymous memory
#     and shmem, sampled from memory.stat every 0.1 s from outside the group by
#     bench/gov_cgroup_run.sh) stayed at least 10 MB under the 420 MB limit. The group's usage
#     itself may reach the limit: page cache (the libraries, the model, the input read cold) fills
#     it, and the kernel drops that cache there; the governor counts only the working set;
#   - ungoverned: the kernel OOM-killed it (oom_kill >= 1, exit 137, the cgroup peak at the limit),
#     and its telemetry (one line written per frame, flushed as it comes: the CLI sets
#     flush_every = 1) shows K >= 2 frames before the kill with RSS growing by >= 100 MB (the
#     ballast's 20 MB/s) up to >= 80% of the limit: it died of the growth, not on its first frame.
set -uo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
res=$(bash "$here/bench/gov_kill_rvm.sh" "$out")
rc=$?
[ $rc -eq 77 ] && exit 77
echo "$res"
tail -n1 "$out/governed.log"; tail -n1 "$out/ungoverned.log"
node -e '
const fs = require("fs"), [res, out] = process.argv.slice(1), r = JSON.parse(res), bad = [];
const MB = 1048576, limit = 420;
const cg = (f) => { const l = fs.readFileSync(`${out}/${f}`, "utf8").trim().split("\n").pop();
  const m = (k) => (l.match(new RegExp(k + "=([\\w.]+)")) || [])[1];
  return { ver: m("cgroup"), peak: +m("peak_mb"), anon: +m("anon_peak_mb"), oom: +m("oom_kill"), rc: +m("rc") }; };
const rows = (f) => { try { return fs.readFileSync(`${out}/${f}`, "utf8").split("\n").filter(Boolean).map(JSON.parse); } catch { return []; } };
const g = cg("governed.log"), u = cg("ungoverned.log"), ut = rows("ungoverned.jsonl");
if (r.governed.result !== "survived") bad.push("governed run did not survive: " + r.governed.result);
if (r.governed.over_safe_pct > 5) bad.push("governed RSS " + r.governed.max_rss_mb + " MB is " + r.governed.over_safe_pct + "% over the safe 380 MB");
if (!r.governed.actions.length) bad.push("the governor took no action");
if (!r.governed.recovered) bad.push("no recovery (resume/step_up) after the ballast was released");
if (!(g.peak > 0) || !(g.anon > 0)) bad.push("no cgroup peak read for the governed run");
if (g.oom !== 0) bad.push(`governed run saw oom_kill ${g.oom}`);
if (!(g.anon < limit - 10)) bad.push(`governed anonymous memory peaked at ${g.anon} MB, within 10 MB of the ${limit} MB limit`);
if (r.ungoverned.result !== "killed" || u.oom < 1 || u.rc !== 137) bad.push(`ungoverned run was not OOM-killed: ${r.ungoverned.result}, oom_kill ${u.oom}, exit ${u.rc}`);
const rss = ut.map((x) => x.rss_bytes / MB), k = ut.length;
const grew = k ? rss[k - 1] - rss[0] : 0;
console.log(`governed: cgroup ${g.ver} peak ${g.peak} MB, anonymous ${g.anon} MB (limit ${limit}, safe 380), sampled RSS max ${r.governed.max_rss_mb} MB; ` +
  `ungoverned: killed after K=${k} frames (last frame ${k ? ut[k - 1].frame : "-"}), RSS ${k ? rss[0].toFixed(1) : "-"} -> ` +
  `${k ? rss[k - 1].toFixed(1) : "-"} MB (+${grew.toFixed(1)}), cgroup peak ${u.peak} MB`);
if (k < 2) bad.push(`ungoverned telemetry holds ${k} lines: no evidence of the frames before the kill`);
if (grew < 100) bad.push(`ungoverned RSS grew by ${grew.toFixed(1)} MB over its frames, not by the ballast`);
if (k && rss[k - 1] < 0.8 * limit) bad.push(`ungoverned last RSS ${rss[k - 1].toFixed(1)} MB is far from the ${limit} MB limit`);
if (bad.length) { console.error(bad.join("\n")); process.exit(1); }
console.log("gov_kill: 2 passed, 0 failed");' "$res" "$out"
