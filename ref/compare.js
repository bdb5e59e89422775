#!/usr/bin/env node
// compare.js: compares two folders of raw float32 tensors (e.g. headroom's outputs against
// run_ref.js's) file by file: mean and max |a-b|, RMSE, element count, NaN counts.
//
// Usage: node ref/compare.js A_DIR B_DIR [--suffix .pha.f32] [--json]
//          [--tol-mean X] [--tol-max X] [--skip N]
//   --suffix    which files to compare (default .pha.f32); matched by name in both folders.
//   --json      print one JSON object per file and a JSON summary instead of text.
//   --tol-mean / --tol-max: also fail when any file's mean / max |a-b| exceeds X.
//   --skip N    leave out the first N files in sorted order (e.g. RVM's warm-up frames).
// Exit: 0 all compared and within tolerance; 1 a file is missing on one side, sizes differ, a
// NaN appears, no file matched, or a tolerance is exceeded; 2 usage error.
'use strict';

const fs = require('fs');
const path = require('path');

function usage(msg) {
  if (msg) process.stderr.write(`compare: ${msg}\n`);
  process.stderr.write('usage: node ref/compare.js A_DIR B_DIR [--suffix .pha.f32] [--json] ' +
      '[--tol-mean X] [--tol-max X] [--skip N]\n');
  process.exit(2);
}

function parseArgs(argv) {
  const a = {dirs: [], suffix: '.pha.f32', json: false, tolMean: Infinity, tolMax: Infinity, skip: 0};
  const need = (i) => { if (i + 1 >= argv.length) usage(`${argv[i]} needs a value`); return argv[i + 1]; };
  for (let i = 0; i < argv.length; i++) {
    switch (argv[i]) {
      case '--suffix': a.suffix = need(i); i++; break;
      case '--json': a.json = true; break;
      case '--tol-mean': a.tolMean = Number(need(i)); i++; break;
      case '--tol-max': a.tolMax = Number(need(i)); i++; break;
      case '--skip': a.skip = parseInt(need(i), 10); i++; break;
      case '-h': case '--help': usage(); break;
      default:
        if (argv[i].startsWith('--')) usage(`unknown option ${argv[i]}`);
        a.dirs.push(argv[i]);
    }
  }
  if (a.dirs.length !== 2) usage('need exactly two folders');
  if (Number.isNaN(a.tolMean) || Number.isNaN(a.tolMax) || !(a.skip >= 0)) usage('bad number');
  return a;
}

function listDir(dir, suffix) {
  if (!fs.statSync(dir, {throwIfNoEntry: false})?.isDirectory()) usage(`${dir} is not a folder`);
  return fs.readdirSync(dir).filter((f) => f.endsWith(suffix)).sort();
}

function readF32(file) {
  const b = fs.readFileSync(file);
  if (b.byteLength % 4) return null;
  // Copy into an aligned buffer (Buffer pools may hand out unaligned offsets).
  const ab = b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength);
  return new Float32Array(ab);
}

function compare(a, b) {
  let sum = 0, sq = 0, max = 0, maxAt = -1, nanA = 0, nanB = 0, n = 0;
  for (let i = 0; i < a.length; i++) {
    const x = a[i], y = b[i];
    const xn = Number.isNaN(x), yn = Number.isNaN(y);
    if (xn) nanA++;
    if (yn) nanB++;
    if (xn || yn) continue;
    const d = Math.abs(x - y);
    sum += d; sq += d * d; n++;
    if (d > max) { max = d; maxAt = i; }
  }
  return {count: a.length, mean_abs: n ? sum / n : 0, max_abs: max, max_at: maxAt,
    rmse: n ? Math.sqrt(sq / n) : 0, nan_a: nanA, nan_b: nanB, sum, n};
}

function main() {
  const args = parseArgs(process.argv.slice(2));
  const [da, db] = args.dirs;
  const fa = listDir(da, args.suffix), fb = listDir(db, args.suffix);
  const setB = new Set(fb), setA = new Set(fa);
  const problems = [];
  for (const f of fa) if (!setB.has(f)) problems.push(`missing in ${db}: ${f}`);
  for (const f of fb) if (!setA.has(f)) problems.push(`missing in ${da}: ${f}`);
  const both = fa.filter((f) => setB.has(f)).slice(args.skip);
  if (both.length === 0) problems.push(`no *${args.suffix} file in both folders`);

  let tSum = 0, tN = 0, tMax = 0, tCount = 0, tNan = 0, worstMean = 0, files = 0;
  for (const f of both) {
    const a = readF32(path.join(da, f)), b = readF32(path.join(db, f));
    if (!a || !b || a.length !== b.length) {
      problems.push(`size differs: ${f} (${a ? a.length : 'bad'} vs ${b ? b.length : 'bad'} floats)`);
      continue;
    }
    const r = compare(a, b);
    files++;
    tSum += r.sum; tN += r.n; tCount += r.count; tNan += r.nan_a + r.nan_b;
    tMax = Math.max(tMax, r.max_abs); worstMean = Math.max(worstMean, r.mean_abs);
    if (r.nan_a || r.nan_b) problems.push(`NaN in ${f}: ${r.nan_a} in A, ${r.nan_b} in B`);
    if (r.mean_abs > args.tolMean) problems.push(`${f}: mean |a-b| ${r.mean_abs} > ${args.tolMean}`);
    if (r.max_abs > args.tolMax) problems.push(`${f}: max |a-b| ${r.max_abs} > ${args.tolMax}`);
    if (args.json) {
      const {sum, n, ...pub} = r;
      process.stdout.write(JSON.stringify({file: f, ...pub}) + '\n');
    } else {
      process.stdout.write(`${f}: mean ${r.mean_abs.toExponential(3)} max ${r.max_abs.toExponential(3)} ` +
          `(at ${r.max_at}) rmse ${r.rmse.toExponential(3)} n ${r.count} nan ${r.nan_a}/${r.nan_b}\n`);
    }
  }
  const summary = {files, count: tCount, mean_abs: tN ? tSum / tN : 0, worst_file_mean_abs: worstMean,
    max_abs: tMax, nan: tNan, problems: problems.length, ok: problems.length === 0};
  for (const p of problems) process.stderr.write(`compare: ${p}\n`);
  if (args.json) {
    process.stdout.write(JSON.stringify({summary: true, ...summary}) + '\n');
  } else {
    process.stdout.write(`summary: ${files} files, ${tCount} values, mean |a-b| ` +
        `${summary.mean_abs.toExponential(3)}, max |a-b| ${tMax.toExponential(3)}, NaN ${tNan}, ` +
        `${summary.ok ? 'OK' : problems.length + ' problem(s)'}\n`);
  }
  process.exit(summary.ok ? 0 : 1);
}

main();
