#!/usr/bin/env bash
# The governor at camera size (issue 12): RVM at 1920x1440, ratio 0.5 asked, alpha PNGs written,
# inside a 420 MB memory cgroup (the a14 profile's kill figure) while ballast grows to 191 MB in
# the same process. Governed: exits 0, steps down (replans with outputs being written: the path
# that crashed), every delivered frame has its PNG and its telemetry line, no OOM kill, and the
# group's memory that the kernel cannot drop (anonymous memory and shmem, sampled every 0.1 s by
# bench/gov_cgroup_run.sh) stayed at least 10 MB under the kill limit (its usage may reach the
# limit with page cache, the PNGs written among it, which the kernel drops there). --no-governor: the kernel OOM-kills it
# (137); it asks for ratio 0.5 too (262 MB planned since the convolutions run in bands; it was 406
# MB, which died on its first frame, so this run used to ask for 0.4, now 198 MB: too small to be
# killed by 191 MB of ballast), runs every frame (no --realtime: a slow run, as under
# ASan on a loaded machine, would otherwise reach the clip's end before the ballast has grown) and
# grows its ballast at 7 MB/s up to 250 MB (see ubal below; it dies ~30 s in: frames of up to ~10 s still
# leave lines), so its telemetry (flushed line by line) shows K >= 2 frames with RSS growing by the
# ballast (>= 60 MB) before the kill (issue 16, point 6).
# Under ASan+UBSan the same test runs with the ceilings raised by what the sanitizer itself costs
# (measured here, on a short run without ballast, against a 16 MB quarantine), not skipped.
# Exit 77 only where no memory cgroup can be made (not root, no controller).
set -uo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
CLI=${HR_CLI:-$here/build/headroom}
MODEL=${HR_MODEL_DIR:-$here/models}/rvm.json
DATA=${HR_DATA_DIR:-$here/../shared/data}
for need in "$CLI" "$MODEL" "$DATA/sam2-bedroom/bedroom.mp4"; do [ -e "$need" ] || { echo "FAIL: missing $need"; exit 1; }; done
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
ffmpeg -v error -i "$DATA/sam2-bedroom/bedroom.mp4" -vf scale=1920:1440,setpts=2*PTS -r 15 -c:v libx264 -preset ultrafast -crf 28 "$T/bed1440.mp4"
safe=380 kill=420
# The ungoverned run's ballast goes further than the governed one's (191 MB) and faster: on
# 2026-12-07 a fresh clone's Release run at ratio 0.5 (the engine smaller and faster than when
# these figures were set) ran its whole clip, 200 frames, with the ballast at its 191 MB cap, RSS
# 273 -> 447 MB, its cgroup usage at the 420 MB limit (page cache dropped) but its anonymous memory
# under it: not killed. 250 MB at 7 MB/s: the anonymous memory crosses the limit ~30 s in.
asan=0 ubal=250 urate=7
if grep -q -a -m1 __asan_init "$CLI"; then
  asan=1
  export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}:quarantine_size_mb=16:detect_leaks=0
  # what ASan adds at this size: peak RSS of 8 frames without ballast, minus the plan's prediction
  /usr/bin/time -f %M "$CLI" run --model "$MODEL" --input "$T/bed1440.mp4" --ratio 0.4 --frames 8 --quiet --out "$T/cal" 2> "$T/cal.log" || { cat "$T/cal.log"; exit 1; }
  peak=$(( $(tail -1 "$T/cal.log") / 1024 ))
  plan=$("$CLI" plan --model "$MODEL" --size 1920x1440 --ratio 0.4 --json | node -e 'const j = JSON.parse(require("fs").readFileSync(0, "utf8")); console.log(Math.round(j.process_total_bytes / 1048576))')
  extra=$(( peak > plan ? peak - plan : 0 ))
  safe=$((safe + extra)); kill=$((kill + extra))
  echo "ASan build: peak $peak MB vs plan $plan MB at ratio 0.4: ceilings raised by $extra MB to $safe:$kill"
  # That peak comes early (the model's load, kept a while in ASan's quarantine); at ratio 0.5 the
  # ungoverned run's steady RSS is ~75 MB over the plan, not ~100, so with 191 MB of ballast it
  # stayed 19 MB under the raised limit (503 of 522). Its ballast may grow 60 MB further (the
  # governed run keeps 191). And ASan's first frame comes ~35 s in, when 5 MB/s of ballast is
  # already at ~170 MB: at 3 MB/s it is ~100 MB then, so the kill still follows the ballast's growth.
  ubal=$((ubal + 60)) urate=3   # 310 MB
fi
common=(run --model "$MODEL" --input "$T/bed1440.mp4" --ratio 0.5 --profile "$safe:$kill" --ballast 20:191:2 --threads 2 --fixed --quiet)
bash "$here/bench/gov_cgroup_run.sh" "$kill" -- "$CLI" "${common[@]}" --realtime --out "$T/g" --telemetry "$T/g/t.jsonl" 2> "$T/g.log"
rc_g=$?
[ $rc_g -eq 77 ] && { tail -1 "$T/g.log"; exit 77; }
bash "$here/bench/gov_cgroup_run.sh" "$kill" -- "$CLI" "${common[@]}" --ballast $urate:$ubal:2 --no-governor --out "$T/u" --telemetry "$T/u/t.jsonl" 2> "$T/u.log"
rc_u=$?
tail -1 "$T/g.log"; tail -1 "$T/u.log"
node - "$T" "$rc_g" "$rc_u" "$safe" "$kill" "$asan" <<'JS'
const fs = require('fs'), [T, rcg, rcu, safe, kill, asan] = process.argv.slice(2), bad = [];
const rows = (f) => fs.readFileSync(f, 'utf8').split('\n').filter((l) => l).map((l) => JSON.parse(l));
const g = rows(`${T}/g/t.jsonl`), u = rows(`${T}/u/t.jsonl`);
const pngs = fs.readdirSync(`${T}/g/alpha`).sort(), want = g.filter((r) => r.proc_w).map((r) => String(r.frame).padStart(6, '0') + '.png');
const actions = g.filter((r) => r.governor_action).map((r) => `${r.frame}:${r.governor_action}`);
const maxRss = Math.max(...g.map((r) => r.rss_bytes || 0)) / 1048576;
const cg = (f) => { const l = fs.readFileSync(f, 'utf8').trim().split('\n').pop();
  const m = (k) => (l.match(new RegExp(k + '=([\\w.]+)')) || [])[1];
  return { ver: m('cgroup'), peak: +m('peak_mb'), anon: +m('anon_peak_mb'), oom: +m('oom_kill') }; };
const cgg = cg(`${T}/g.log`), cgu = cg(`${T}/u.log`), peak = cgg.peak;
const rss = u.map((r) => r.rss_bytes / 1048576), grew = u.length ? rss[rss.length - 1] - rss[0] : 0;
console.log(`governed: exit ${rcg}, ${g.length} frames, ${pngs.length} PNGs, ratios ${[...new Set(g.map((r) => r.ratio))].join(' ')}, ` +
  `actions ${actions.join(' ')}, max RSS ${maxRss.toFixed(1)} MB, cgroup ${cgg.ver} peak ${peak} MB, anonymous ${cgg.anon} MB (safe ${safe}, limit ${kill})`);
console.log(`ungoverned (ratio 0.5): exit ${rcu}, oom_kill ${cgu.oom}, killed after K=${u.length} frames, RSS ` +
  `${u.length ? rss[0].toFixed(1) : '-'} -> ${u.length ? rss[rss.length - 1].toFixed(1) : '-'} MB (+${grew.toFixed(1)}), cgroup peak ${cgu.peak} MB`);
if (+rcg !== 0) bad.push(`governed run exited ${rcg}`);
if (!actions.some((a) => /step_down|suspend/.test(a))) bad.push('the governor never stepped down');
if (JSON.stringify(pngs) !== JSON.stringify(want)) bad.push(`${pngs.length} PNGs for ${want.length} inferred frames`);
// enough frames, and some of them made after the step down (its replan with outputs being written
// is the path that crashed): under ASan+UBSan a frame costs several seconds and the realtime loop
// delivers fewer (8 in one fresh-clone run on 2 loaded cores, the step down at frame 104)
const stepped = g.filter((r) => r.proc_w && r.ratio < 0.5).length;
if (g.length < (asan === '1' ? 5 : 10)) bad.push(`only ${g.length} frames`);
if (stepped < 2) bad.push(`${stepped} frames delivered after the step down`);
if (+rcu !== 137 || !(cgu.oom >= 1)) bad.push(`ungoverned run exited ${rcu} (oom_kill ${cgu.oom}), not OOM-killed`);
if (!(peak > 0) || !(cgg.anon > 0)) bad.push('no cgroup peak read for the governed run');
if (cgg.oom !== 0) bad.push(`governed run saw oom_kill ${cgg.oom}`);
if (!(cgg.anon < +kill - 10)) bad.push(`governed anonymous memory peaked at ${cgg.anon} MB, within 10 MB of the ${kill} MB limit`);
if (u.length < 2) bad.push(`ungoverned telemetry holds ${u.length} lines: no evidence of the frames before the kill`);
if (grew < 60) bad.push(`ungoverned RSS grew by ${grew.toFixed(1)} MB before the kill, not by the ballast`);

if (bad.length) { console.log('FAIL: ' + bad.join('\nFAIL: ')); process.exit(1); }
console.log('gov_kill_1440: 2 passed, 0 failed');
JS
