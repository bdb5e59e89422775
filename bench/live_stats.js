// Summarise a `headroom run --telemetry` JSONL file of a live run as one JSON object on stdout.
// usage: node bench/live_stats.js TELEMETRY.jsonl [--budget MS] [--fps FPS] [--warmup-s S] [--window-s S]
//   proc_ms  per frame: ingest + infer + post + output (the consumer's time on the frame)
//   wait_ms  per frame: its age when the consumer took it (capture time: when the camera would have
//            delivered it, so a late capture thread counts); frame_ms: take -> output done
//   settled  frames after the last ratio change (skipping the 2 that carry the replan's setup)
//   windows  delivered fps and RSS per window of --window-s seconds (default 60), for soak runs
'use strict';
const fs = require('fs');
const args = process.argv.slice(2);
const file = args[0];
const opt = (name, def) => { const i = args.indexOf(name); return i > 0 ? Number(args[i + 1]) : def; };
const budget = opt('--budget', 16.7), fps = opt('--fps', 60), warmupS = opt('--warmup-s', 60), windowS = opt('--window-s', 60);

const rows = [];
for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
  if (!line.trim()) continue;
  try { rows.push(JSON.parse(line)); } catch (e) { /* a torn last line of a killed run */ }
}
const q = (xs, p) => {
  if (!xs.length) return null;
  const s = Float64Array.from(xs).sort();
  return s[Math.max(0, Math.ceil(p * s.length) - 1)];
};
const r3 = (x) => (x == null || !isFinite(x) ? null : Math.round(x * 1000) / 1000);
const proc = (r) => (r.ingest_ms || 0) + (r.infer_ms || 0) + (r.post_ms || 0) + (r.output_ms || 0);

const out = { file, frames: rows.length, budget_ms: budget };
if (!rows.length) { console.log(JSON.stringify(out)); process.exit(0); }

// every frame index once, strictly increasing: no frame processed twice
let dup = 0, nonincr = 0;
const seen = new Set();
rows.forEach((r, i) => {
  if (seen.has(r.frame)) dup++;
  seen.add(r.frame);
  if (i && r.frame <= rows[i - 1].frame) nonincr++;
});
out.duplicate_frames = dup;
out.non_increasing = nonincr;
out.first_frame = rows[0].frame;
out.last_frame = rows[rows.length - 1].frame;
out.dropped = rows[rows.length - 1].dropped;
// frames neither processed nor counted as dropped (gaps in the index beyond the drop count)
out.unaccounted = out.last_frame - out.first_frame + 1 - rows.length - out.dropped;

const span_s = (rows[rows.length - 1].t_ms - rows[0].t_ms) / 1e3;
out.wall_s = r3(rows[rows.length - 1].t_ms / 1e3);
out.delivered_fps = r3(span_s > 0 ? (rows.length - 1) / span_s : null);

const P = rows.map(proc), L = rows.map((r) => r.latency_ms).filter((x) => x != null);
out.proc_p50_ms = r3(q(P, 0.5));
out.proc_p99_ms = r3(q(P, 0.99));
out.latency_p50_ms = r3(q(L, 0.5));
out.latency_p99_ms = r3(q(L, 0.99));
out.latency_max_ms = r3(Math.max(...L));
// the same without the stream's last frame, which no newer frame replaces: it may wait behind a
// whole frame's processing, however well the loop keeps up
out.latency_p99_before_end_ms = r3(q(rows.slice(0, -1).map((r) => r.latency_ms).filter((x) => x != null), 0.99));
// queueing: a frame's capture time is t_ms - latency_ms; the consumer took it when it finished the
// previous frame, or when it arrived if that was later. Its age then (wait) is at most about one
// frame period plus how late the capture thread was, with newest-wins; a queue would make it grow.
// frame_ms is the consumer's whole time on the frame (take -> output done: the stages plus health,
// governor and telemetry). The stream's last frame is left out of wait: no newer frame replaces it.
const W = [], F = [];
rows.forEach((r, i) => {
  if (r.latency_ms == null) return;
  const cap = r.t_ms - r.latency_ms, take = i ? Math.max(rows[i - 1].t_ms, cap) : cap;
  if (i && i < rows.length - 1) W.push(take - cap);
  F.push(r.t_ms - take);
});
out.wait_p50_ms = r3(q(W, 0.5));
out.wait_p99_ms = r3(q(W, 0.99));
out.wait_max_ms = r3(W.length ? Math.max(...W) : null);
out.frame_p50_ms = r3(q(F, 0.5));
out.frame_p99_ms = r3(q(F, 0.99));
// latency in the last third vs the first third (a queue would make it grow)
const third = Math.floor(L.length / 3);
if (third >= 3) {
  out.latency_p50_first_third_ms = r3(q(L.slice(0, third), 0.5));
  out.latency_p50_last_third_ms = r3(q(L.slice(L.length - third), 0.5));
}

// ratio ladder: changes, up-steps, where it settled
const changes = [], at = [];   // at[k]: the row where change k took effect
for (let i = 1; i < rows.length; i++)
  if (rows[i].ratio !== rows[i - 1].ratio) {
    changes.push({ frame: rows[i].frame, t_s: r3(rows[i].t_ms / 1e3), ratio: rows[i].ratio, proc: rows[i].proc_w + 'x' + rows[i].proc_h });
    at.push(i);
  }
out.ratio_start = rows[0].ratio;
out.replans = changes.length;
const ratioBefore = (k) => (k > 0 ? changes[k - 1].ratio : rows[0].ratio);
out.up_steps = changes.filter((c, i) => c.ratio > ratioBefore(i)).length;
out.changes = changes;
const nc = changes.length;
// rows from change k's (skipping the 2 that carry the replan's setup; k < 0: from the start) to row end
const from = (k) => (k >= 0 ? at[k] + 2 : 2);
// a stretch of rows at one ratio: where (its first row) and its processing times
const stretchAt = (rs, where) => {
  const P = rs.map(proc);
  // over_runs: runs of consecutive frames over the budget, each counted once (the ladder's tail
  // rules count them so: a stall of the host often spans two frames and is one accident)
  let over_runs = 0;
  P.forEach((x, i) => { if (x > budget && !(i && P[i - 1] > budget)) over_runs++; });
  return { ratio: where.ratio, proc: where.proc_w + 'x' + where.proc_h, frames: rs.length, proc_p50_ms: r3(q(P, 0.5)), proc_p99_ms: r3(q(P, 0.99)), over_runs, P };
};
const lastChange = nc ? at[nc - 1] : 0, prevChange = nc > 1 ? at[nc - 2] : -1;
const settled = rows.slice(from(nc - 1));
const st = stretchAt(settled, rows[rows.length - 1]);
out.settled = {
  ratio: st.ratio,
  proc: st.proc,
  from_frame: settled.length ? settled[0].frame : null,
  from_s: settled.length ? r3(settled[0].t_ms / 1e3) : null,
  frames: st.frames,
  proc_p50_ms: st.proc_p50_ms,
  proc_p99_ms: st.proc_p99_ms,
  over_budget: st.P.filter((x) => x > budget).length,
  over_runs: st.over_runs,
  delivered_fps: settled.length > 1 ? r3((settled.length - 1) / ((settled[settled.length - 1].t_ms - settled[0].t_ms) / 1e3)) : null,
};
// the stretch before the last change (skipping its 2 setup frames): what the controller kept until
// it moved; a late up-step leaves few frames after it, and says the stretch before fit the budget
const before = nc ? rows.slice(from(nc - 2), lastChange) : [];
if (before.length) {
  const { P, ...b } = stretchAt(before, before[0]);
  out.before_last = { ...b, last_change_up: changes[nc - 1].ratio > before[0].ratio };
  // a step down: the stretch without its last 12 frames (the ladder's longest window but the p99's,
  // which needs two slow runs: the one before these frames is in the stretch), what the controller
  // held before the slowdown that moved it
  if (!out.before_last.last_change_up && before.length > 12) {
    const { P: _, ...t } = stretchAt(before.slice(0, -12), before[0]);
    out.before_last.trimmed = t;
  }
} else out.before_last = null;
// a probe that came back: the last change steps down to the ratio the change before it had left
// (an up-step the budget did not hold); the stretch at that ratio before the probe is what the
// controller settled on and returned to
if (nc >= 2 && changes[nc - 1].ratio < changes[nc - 2].ratio && changes[nc - 1].ratio === ratioBefore(nc - 2) &&
    changes[nc - 2].ratio > ratioBefore(nc - 2)) {
  const stretch = rows.slice(from(nc - 3), prevChange);
  if (stretch.length) {
    const { P, ...b } = stretchAt(stretch, stretch[0]);
    out.before_probe = { ...b, probe: changes[nc - 2].proc, probe_frames: before.length };
  } else out.before_probe = null;
}
out.health = {};
for (const r of rows) out.health[r.health] = (out.health[r.health] || 0) + 1;

// soak: per-window fps and RSS after warm-up
const wins = [];
for (const r of rows) {
  const w = Math.floor(r.t_ms / 1e3 / windowS);
  if (!wins[w]) wins[w] = { window: w, frames: 0, rss_max: 0, rss_last: 0, t0: r.t_ms, t1: r.t_ms };
  const x = wins[w];
  x.frames++; x.t1 = r.t_ms;
  if (r.rss_bytes != null) { x.rss_max = Math.max(x.rss_max, r.rss_bytes); x.rss_last = r.rss_bytes; }
}
const tEnd = rows[rows.length - 1].t_ms;
// the last window may be partial: its fps is over the time it covers
out.windows = wins.filter(Boolean).map((x) => {
  const span = Math.min(windowS * 1e3, tEnd - x.window * windowS * 1e3) / 1e3;
  return { window: x.window, frames: x.frames, span_s: r3(span), fps: r3(span > 0 ? x.frames / span : null), rss_mb: r3(x.rss_max / 1e6) };
});
const warm = rows.filter((r) => r.t_ms >= warmupS * 1e3 && r.rss_bytes != null);
if (warm.length) {
  const rss0 = warm[0].rss_bytes, rssMax = Math.max(...warm.map((r) => r.rss_bytes));
  out.rss_after_warmup_mb = r3(rss0 / 1e6);
  out.rss_max_after_warmup_mb = r3(rssMax / 1e6);
  out.rss_last_mb = r3(rows[rows.length - 1].rss_bytes / 1e6);
  out.rss_growth_after_warmup_bytes = rssMax - rss0;
}
console.log(JSON.stringify(out, null, 1));
