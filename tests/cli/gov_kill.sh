#!/usr/bin/env bash
# Issue 5 kill test, both halves, in the suite: governed RVM survives a 420 MB cgroup with growing
# ballast (RSS within 5% of the a14 safe limit, recovery after the ballast goes), ungoverned is killed.
set -uo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
res=$(bash "$here/bench/gov_kill_rvm.sh" "$out")
rc=$?
[ $rc -eq 77 ] && exit 77
echo "$res"
node -e '
const r = JSON.parse(process.argv[1]); let bad = [];
if (r.governed.result !== "survived") bad.push("governed run did not survive: " + r.governed.result);
if (r.governed.over_safe_pct > 5) bad.push("governed RSS " + r.governed.max_rss_mb + " MB is " + r.governed.over_safe_pct + "% over the safe 380 MB");
if (!r.governed.actions.length) bad.push("the governor took no action");
if (!r.governed.recovered) bad.push("no recovery (resume/step_up) after the ballast was released");
if (r.ungoverned.result !== "killed") bad.push("ungoverned run was not killed: " + r.ungoverned.result);
if (bad.length) { console.error(bad.join("\n")); process.exit(1); }
console.log("gov_kill: 2 passed, 0 failed");' "$res"
