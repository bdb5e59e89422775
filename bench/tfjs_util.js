#!/usr/bin/env node
// tfjs_util.js: helpers of bench/tfjs_compare.sh.
//   node bench/tfjs_util.js synth W H N OUTDIR
//       writes OUTDIR/000000..N-1.src.f32 + meta.json: `headroom bench`'s synthetic input (the
//       formula of tools/headroom/cmd_bench.c, in float32), so TF.js runs on the image headroom
//       is timed on. Frame 0 is a file, the others are links to it.
//   node bench/tfjs_util.js summary DIR
//       reads what tfjs_compare.sh left in DIR and prints the comparison: a readable table on
//       stderr, one JSON line on stdout.
'use strict';
const fs = require('fs');
const path = require('path');

function synth(w, h, n, out) {
  const f = Math.fround;
  const buf = new Float32Array(w * h * 3);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const dx = f(f(x - f(w * 0.5)) / w), dy = f(f(y - f(h * 0.45)) / h);
      const b = f(Math.exp(f(f(-f(f(dx * dx) + f(dy * dy))) * 12)));
      const i = (y * w + x) * 3;
      buf[i] = f(0.2 + f(0.7 * b));
      buf[i + 1] = f(0.3 + f(f(f(0.5 * b) * x) / w));
      buf[i + 2] = f(0.25 + f(f(0.3 * y) / h));
    }
  }
  fs.mkdirSync(out, {recursive: true});
  const first = path.join(out, '000000.src.f32');
  fs.writeFileSync(first, Buffer.from(buf.buffer));
  for (let k = 1; k < n; k++) {
    const p = path.join(out, String(k).padStart(6, '0') + '.src.f32');
    try { fs.unlinkSync(p); } catch (e) { /* absent */ }
    fs.symlinkSync(first, p);
  }
  fs.writeFileSync(path.join(out, 'meta.json'), JSON.stringify({width: w, height: h}) + '\n');
}

function lastJson(text) {
  const lines = text.trim().split('\n').reverse();
  for (const l of lines) {
    const t = l.trim();
    if (t.startsWith('{')) { try { return JSON.parse(t); } catch (e) { /* keep looking */ } }
  }
  return null;
}

function readJson(dir, name) {
  const p = path.join(dir, name);
  return fs.existsSync(p) ? lastJson(fs.readFileSync(p, 'utf8')) : null;
}
function readText(dir, name) {
  const p = path.join(dir, name);
  return fs.existsSync(p) ? fs.readFileSync(p, 'utf8').trim() : '';
}
// /usr/bin/time -f '%M %e' output: the last line "maxrss_kb elapsed_s".
function readTime(dir, name) {
  const t = readText(dir, name).split('\n').pop().trim().split(/\s+/);
  return t.length === 2 && !Number.isNaN(Number(t[0])) ? {rss_mib: Number(t[0]) / 1024, wall_s: Number(t[1])} : null;
}
const r1 = (x) => (x == null || Number.isNaN(x) ? null : Math.round(x * 10) / 10);
const r3 = (x) => (x == null || Number.isNaN(x) ? null : Math.round(x * 1000) / 1000);

function summary(dir) {
  const cfg = readJson(dir, 'config.json');
  const out = {bench: 'tfjs_compare', model: 'rvm', width: cfg.width, height: cfg.height, ratio: cfg.ratio,
    frames: cfg.frames, cpus: cfg.cpus, cpu: cfg.cpu, no_avx512: !!cfg.no_avx512, loadavg_start: cfg.loadavg_start,
    loadavg_end: readText(dir, 'loadavg_end.txt').split(' ').slice(0, 3).map(Number), runs: []};
  const say = (s) => process.stderr.write(s + '\n');
  say(`rvm ${cfg.width}x${cfg.height} ratio ${cfg.ratio}, ${cfg.cpus} CPUs (${cfg.cpu}` +
      `${cfg.no_avx512 ? '; headroom as on an AVX2-only CPU, --no-avx512' : ''}), load average at start ` +
      `${cfg.loadavg_start.join(' ')}, at end ${out.loadavg_end.join(' ')}`);
  for (const t of cfg.threads) {
    const hb = readJson(dir, `hr_bench_t${t}.json`), ht = readTime(dir, `hr_bench_t${t}.time`);
    const tf = readJson(dir, `tf_t${t}.json`), tt = readTime(dir, `tf_t${t}.time`);
    const run = {threads: t,
      headroom: hb && {median_ms: r1(hb.median_ms), p99_ms: r1(hb.p99_ms), gflops: r1(hb.gflops),
        peak_rss_mib: r1(ht ? ht.rss_mib : hb.peak_rss_mb), plan_total_mib: r1(hb.plan_total_mb * 1e6 / 1048576),
        classes: Object.fromEntries(Object.entries(hb.classes || {}).map(([k, v]) => [k, {ms: r1(v.ms), gflops: r1(v.gflops)}]))},
      tfjs: tf && {median_ms: r1(tf.median_ms), first_ms: r1(tf.first_ms), threads: tf.threads, simd: tf.simd,
        peak_rss_mib: r1(tt ? tt.rss_mib : tf.peak_rss_mb), version: tf.tfjs}};
    run.speedup = hb && tf ? r3(tf.median_ms / hb.median_ms) : null;
    out.runs.push(run);
    if (hb) {
      say(`threads ${t}: headroom median ${r1(hb.median_ms)} ms (p99 ${r1(hb.p99_ms)}), ${r1(hb.gflops)} GFLOP/s, ` +
          `peak RSS ${run.headroom.peak_rss_mib} MiB (plan ${run.headroom.plan_total_mib} MiB)`);
      for (const [k, v] of Object.entries(hb.classes || {}))
        say(`    ${k.padEnd(12)} ${String(r1(v.ms)).padStart(8)} ms  ${String(r1(v.gflops)).padStart(7)} GFLOP/s`);
      // issue 15's "non-convolution classes": all but the dense convolutions (1x1, 3x3, transposed)
      const cls = Object.entries(hb.classes || {}), all = cls.reduce((a, [, v]) => a + v.ms, 0);
      const nonconv = cls.filter(([k]) => !['conv1x1', 'conv3x3', 'deconv'].includes(k)).reduce((a, [, v]) => a + v.ms, 0);
      run.headroom.nonconv_share = all > 0 ? r3(nonconv / all) : null;
      say(`    non-convolution classes ${r1(nonconv)} of ${r1(all)} ms: ${r1(100 * nonconv / all)}%`);
    }
    if (tf) say(`threads ${t}: TF.js wasm (threads ${tf.threads}, simd ${tf.simd}) median ${r1(tf.median_ms)} ms ` +
                `(first ${r1(tf.first_ms)}), peak RSS ${run.tfjs.peak_rss_mib} MiB`);
    if (run.speedup) say(`threads ${t}: headroom is ${run.speedup}x faster than TF.js`);
  }
  const plan = readJson(dir, 'plan.json');
  out.plan_total_mib = plan && r1(plan.total_bytes / 1048576);
  out.plan_mib = plan && {weights: r1(plan.weight_bytes / 1048576), arena: r1(plan.arena_bytes / 1048576),
    state: r1(plan.state_bytes / 1048576), io: r1(plan.io_bytes / 1048576), kernels: r1((plan.kernel_bytes || 0) / 1048576),
    kernels_shared: r1((plan.kernel_shared_bytes || 0) / 1048576)};
  out.run_rss = [];
  const sz = `${cfg.width}x${cfg.height}`;
  for (const [name, file, pfile] of [['info (load only)', 'rss_info.time'], [`run jpeg frames resized to ${sz}`, 'rss_jpeg.time', 'plan_jpeg.json'],
                                     [`run raw nv12 ${sz}`, 'rss_nv12.time', 'plan_nv12.json']]) {
    const t = readTime(dir, file);
    if (!t) continue;
    // `plan --input` of the same run: the process's total (binary, library, source, PNGs, loop)
    const pp = pfile && readJson(dir, pfile), pred = pp && pp.process_total_bytes / 1048576;
    out.run_rss.push({what: name, peak_rss_mib: r1(t.rss_mib), wall_s: t.wall_s,
      over_plan_mib: plan && !name.startsWith('info') ? r1(t.rss_mib - plan.total_bytes / 1048576) : null,
      predicted_mib: pred ? r1(pred) : null, rss_over_predicted: pred ? r3(t.rss_mib / pred) : null});
    say(`${name.padEnd(32)} peak RSS ${r1(t.rss_mib)} MiB` +
        (plan && !name.startsWith('info') ? ` (library plan ${out.plan_total_mib} MiB; the run as \`plan --input\` predicts it ` +
         (pred ? `${r1(pred)} MiB, measured / predicted ${r3(t.rss_mib / pred)})` : 'n/a)') : '') + `, ${t.wall_s} s`);
  }
  process.stdout.write(JSON.stringify(out) + '\n');
}

const [cmd, ...rest] = process.argv.slice(2);
if (cmd === 'synth') synth(Number(rest[0]), Number(rest[1]), Number(rest[2]), rest[3]);
else if (cmd === 'summary') summary(rest[0]);
else { process.stderr.write('usage: tfjs_util.js synth W H N OUTDIR | summary DIR\n'); process.exit(2); }
