#!/usr/bin/env node
// run_ref.js: runs a TF.js graph model (RVM, meet, selfie) over raw float32 input tensors with
// TensorFlow.js, offline, and writes its outputs as raw float32: the oracle headroom is compared to.
//
// Usage: node ref/run_ref.js --model models/rvm.json --inputs DIR --out OUTDIR
//          [--ratio R] [--frames N] [--backend wasm|cpu] [--threads N] [--size WxH]
//          [--all-outputs | --outputs pha,fgr,r1o,...] [--stateless] [--no-write] [--quiet]
//
// Inputs:  DIR/NNNNNN.src.f32 (H*W*3 float32 LE, NHWC, values in [0,1]), processed in sorted
//          order; size from DIR/meta.json {"width":W,"height":H} or --size WxH.
// Outputs: RVM: OUTDIR/NNNNNN.pha.f32 (H*W float32 LE); with --all-outputs also fgr, r1o..r4o;
//          --outputs picks which of pha, fgr, r1o..r4o are written (e.g. pha,r1o,r2o,r3o,r4o).
//          Stateless models: OUTDIR/NNNNNN.out.f32 (the single output, all channels, NHWC).
//          OUTDIR/shapes.json: {"<name>": [dims...], ...} plus run facts.
// Stdout:  one line per frame with its ms, then one JSON summary line (the last line).
// RVM's state starts as four zeros([1,1,1,1]) (the graph's BroadcastTo widens them) and rNo is
// fed back as rNi; --stateless resets it every frame. Frame times cover tensor upload, inference
// and reading back the written outputs; the first frame (kernel set-up) is left out of median/p99.
// --threads: 0 (default) = the backend's own choice, which under Node is its single-threaded
// build; N > 1 forces the threaded build (wasm_threads.js). --backend cpu is the slow pure-JS one.
'use strict';

const fs = require('fs');
const path = require('path');

function usage(msg) {
  if (msg) process.stderr.write(`run_ref: ${msg}\n`);
  process.stderr.write(
      'usage: node ref/run_ref.js --model M.json --inputs DIR --out OUTDIR [--ratio R] [--frames N]\n' +
      '         [--backend wasm|cpu] [--threads N] [--size WxH] [--all-outputs | --outputs LIST]\n' +
      '         [--stateless]\n' +
      '         [--no-write] [--quiet]\n');
  process.exit(2);
}

function parseArgs(argv) {
  const a = {
    model: null, inputs: null, out: null, ratio: 1, frames: Infinity, backend: 'wasm',
    threads: 0, size: null, allOutputs: false, outputs: null, stateless: false, write: true, quiet: false,
  };
  const need = (i) => { if (i + 1 >= argv.length) usage(`${argv[i]} needs a value`); return argv[i + 1]; };
  for (let i = 0; i < argv.length; i++) {
    const k = argv[i];
    switch (k) {
      case '--model': a.model = need(i); i++; break;
      case '--inputs': a.inputs = need(i); i++; break;
      case '--out': a.out = need(i); i++; break;
      case '--ratio': a.ratio = Number(need(i)); i++; break;
      case '--frames': a.frames = parseInt(need(i), 10); i++; break;
      case '--backend': a.backend = need(i); i++; break;
      case '--threads': a.threads = parseInt(need(i), 10); i++; break;
      case '--size': {
        const m = /^(\d+)x(\d+)$/.exec(need(i)); i++;
        if (!m) usage('--size wants WxH');
        a.size = {width: Number(m[1]), height: Number(m[2])};
        break;
      }
      case '--all-outputs': a.allOutputs = true; break;
      case '--outputs': a.outputs = need(i).split(',').filter((x) => x); i++; break;
      case '--stateless': a.stateless = true; break;
      case '--no-write': a.write = false; break;
      case '--quiet': a.quiet = true; break;
      case '-h': case '--help': usage(); break;
      default: usage(`unknown argument ${k}`);
    }
  }
  if (!a.model || !a.inputs || (!a.out && a.write)) usage('--model, --inputs and --out are required');
  if (!(a.ratio > 0 && a.ratio <= 1)) usage('--ratio must be in (0,1]');
  if (!(a.frames > 0)) usage('--frames must be positive');
  if (a.backend !== 'wasm' && a.backend !== 'cpu') usage('--backend must be wasm or cpu');
  if (!(a.threads >= 0)) usage('--threads must be >= 0');
  const known = ['pha', 'fgr', 'r1o', 'r2o', 'r3o', 'r4o'];
  if (a.outputs && (a.outputs.length === 0 || !a.outputs.every((o) => known.includes(o)))) {
    usage(`--outputs wants a list from ${known.join(',')}`);
  }
  return a;
}

// An IOHandler that reads model.json and its weight shards from disk: no fetch, no http.
function fileHandler(jsonPath) {
  return {
    load: async () => {
      const dir = path.dirname(jsonPath);
      const mj = JSON.parse(fs.readFileSync(jsonPath, 'utf8'));
      const weightSpecs = [];
      const buffers = [];
      for (const group of mj.weightsManifest || []) {
        for (const p of group.paths) buffers.push(fs.readFileSync(path.join(dir, p)));
        weightSpecs.push(...group.weights);
      }
      const all = Buffer.concat(buffers);
      const weightData = all.buffer.slice(all.byteOffset, all.byteOffset + all.byteLength);
      return {
        modelTopology: mj.modelTopology, format: mj.format, generatedBy: mj.generatedBy,
        convertedBy: mj.convertedBy, signature: mj.signature,
        userDefinedMetadata: mj.userDefinedMetadata, modelInitializer: mj.modelInitializer,
        weightSpecs, weightData,
      };
    },
  };
}

async function setupBackend(tf, args) {
  const info = {backend: args.backend, threads: 1, simd: null};
  if (args.backend === 'wasm') {
    const wasm = require('@tensorflow/tfjs-backend-wasm');
    // Load the .wasm binaries from node_modules (an absolute directory prefix, read with fs).
    const dist = path.dirname(require.resolve('@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm.wasm'));
    wasm.setWasmPaths(dist + path.sep);
    // Under Node the backend only runs its single-threaded build; --threads N > 1 switches to the
    // threaded-SIMD build through wasm_threads.js (see there for the workarounds it applies).
    let undo = () => {};
    if (args.threads > 1) undo = require('./wasm_threads').enableNodeWasmThreads(tf, args.threads);
    if (args.threads > 0) wasm.setThreadsCount(args.threads);
    if (!(await tf.setBackend('wasm'))) throw new Error('could not initialise the wasm backend');
    await tf.ready();
    undo();
    info.simd = await tf.env().getAsync('WASM_HAS_SIMD_SUPPORT');
    // What XNNPACK's pool really has (the backend may cap what was asked for).
    info.threads = wasm.getThreadsCount();
  } else {
    if (!(await tf.setBackend('cpu'))) throw new Error('could not initialise the cpu backend');
    await tf.ready();
  }
  return info;
}

function readSize(args) {
  if (args.size) return args.size;
  const mp = path.join(args.inputs, 'meta.json');
  if (!fs.existsSync(mp)) usage(`no ${mp} and no --size`);
  const m = JSON.parse(fs.readFileSync(mp, 'utf8'));
  if (!(m.width > 0 && m.height > 0)) usage(`${mp}: needs positive "width" and "height"`);
  return {width: m.width, height: m.height};
}

function writeF32(file, arr) {
  fs.writeFileSync(file, Buffer.from(arr.buffer, arr.byteOffset, arr.byteLength));
}

function percentile(sorted, p) {
  if (sorted.length === 0) return null;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1));
  return sorted[i];
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const tf = require('@tensorflow/tfjs');
  if (os_le() !== true) throw new Error('big-endian host: the .f32 files are little-endian');
  const binfo = await setupBackend(tf, args);

  const model = await tf.loadGraphModel(fileHandler(args.model));
  const sig = JSON.parse(fs.readFileSync(args.model, 'utf8')).signature || {};
  const sigIn = sig.inputs || {};
  const sigOut = sig.outputs || {};
  // Signature keys are inconsistent in rvm.json ("src" but "r1i:0"): key everything by node name.
  const inName = {};
  for (const k of Object.keys(sigIn)) inName[sigIn[k].name.replace(/:\d+$/, '')] = sigIn[k].name;
  const outName = {};
  for (const k of Object.keys(sigOut)) outName[k.replace(/:\d+$/, '')] = sigOut[k].name;
  const isRvm = ['src', 'r1i', 'r2i', 'r3i', 'r4i'].every((n) => n in inName);

  const {width: W, height: H} = readSize(args);
  let files = fs.readdirSync(args.inputs).filter((f) => f.endsWith('.src.f32')).sort();
  if (files.length === 0) usage(`no *.src.f32 files in ${args.inputs}`);
  if (files.length > args.frames) files = files.slice(0, args.frames);
  if (args.write) fs.mkdirSync(args.out, {recursive: true});

  let stateless = null;  // {input, outputs: [[label, tensorName]]}
  if (!isRvm) {
    const ins = Object.values(sigIn);
    if (ins.length !== 1) throw new Error(`not RVM and ${ins.length} inputs: unsupported model`);
    const dims = (ins[0].tensorShape.dim || []).map((d) => Number(d.size));
    if (dims.length === 4 && dims[1] > 0 && dims[2] > 0 && (dims[1] !== H || dims[2] !== W)) {
      throw new Error(`model wants ${dims[2]}x${dims[1]} input, inputs are ${W}x${H}`);
    }
    const outs = Object.values(sigOut);
    if (outs.length !== 1) throw new Error(`not RVM and ${outs.length} outputs: unsupported model`);
    stateless = {input: ins[0].name, output: outs[0].name};
  }

  const rvmOut = ['pha', 'fgr', 'r1o', 'r2o', 'r3o', 'r4o'];
  const outNames = isRvm ? rvmOut.map((k) => outName[k]) : [stateless.output];
  const writeSet = isRvm ? (args.outputs || (args.allOutputs ? rvmOut : ['pha'])) : ['out'];
  const labels = isRvm ? rvmOut : ['out'];

  let state = null;  // [r1, r2, r3, r4] tensors kept across frames
  const zeroState = () => [0, 1, 2, 3].map(() => tf.zeros([1, 1, 1, 1]));
  const ratioT = isRvm ? tf.scalar(args.ratio, 'float32') : null;
  const times = [];
  const shapes = {};
  const expect = H * W * 3;

  for (let f = 0; f < files.length; f++) {
    const file = files[f];
    const stem = file.slice(0, -'.src.f32'.length);
    const buf = fs.readFileSync(path.join(args.inputs, file));
    if (buf.byteLength !== expect * 4) {
      throw new Error(`${file}: ${buf.byteLength} bytes, want ${expect * 4} (${W}x${H}x3 float32)`);
    }
    const data = new Float32Array(buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength));
    const t0 = process.hrtime.bigint();
    const src = tf.tensor4d(data, [1, H, W, 3], 'float32');
    let feeds;
    if (isRvm) {
      if (state === null || args.stateless) {
        if (state) state.forEach((t) => t.dispose());
        state = zeroState();
      }
      feeds = {[inName.src]: src, [inName.r1i]: state[0], [inName.r2i]: state[1],
        [inName.r3i]: state[2], [inName.r4i]: state[3], [inName.downsample_ratio]: ratioT};
    } else {
      feeds = {[stateless.input]: src};
    }
    // RVM has control flow (Switch/Merge on downsample_ratio == 1): it needs executeAsync.
    let outs = isRvm ? await model.executeAsync(feeds, outNames) : model.execute(feeds, outNames);
    if (!Array.isArray(outs)) outs = [outs];
    const host = {};
    for (let i = 0; i < outs.length; i++) {
      if (writeSet.includes(labels[i])) host[labels[i]] = await outs[i].data();
    }
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    times.push(ms);
    for (let i = 0; i < outs.length; i++) shapes[labels[i]] = outs[i].shape;

    src.dispose();
    if (isRvm) {
      state.forEach((t) => t.dispose());
      state = outs.slice(2, 6);      // rNo becomes next frame's rNi
      outs[0].dispose(); outs[1].dispose();
    } else {
      outs.forEach((t) => t.dispose());
    }
    if (args.write) {
      for (const k of Object.keys(host)) writeF32(path.join(args.out, `${stem}.${k}.f32`), host[k]);
    }
    if (!args.quiet) {
      const mem = tf.memory();
      process.stdout.write(`frame ${stem}: ${ms.toFixed(1)} ms (tensors ${mem.numTensors}, ` +
          `rss ${(process.memoryUsage().rss / 1048576).toFixed(0)} MB)\n`);
    }
  }
  if (state) state.forEach((t) => t.dispose());
  if (ratioT) ratioT.dispose();

  const steady = (times.length > 1 ? times.slice(1) : times).slice().sort((a, b) => a - b);
  const median = steady.length % 2 ? steady[(steady.length - 1) / 2] :
      (steady[steady.length / 2 - 1] + steady[steady.length / 2]) / 2;
  const summary = {
    backend: binfo.backend, threads: binfo.threads, simd: binfo.simd,
    tfjs: tf.version.tfjs, model: path.basename(args.model), width: W, height: H,
    ratio: isRvm ? args.ratio : null, frames: times.length,
    first_ms: +times[0].toFixed(1), median_ms: +median.toFixed(1),
    p99_ms: +percentile(steady, 0.99).toFixed(1),
    peak_rss_mb: +(process.resourceUsage().maxRSS / 1024).toFixed(1),  // maxRSS is in KiB
  };
  if (args.write) {
    const shapeDoc = Object.fromEntries(
        Object.entries(shapes).filter(([k]) => writeSet.includes(k) || isRvm));
    shapeDoc._files = writeSet;
    shapeDoc._run = summary;
    const lines = Object.entries(shapeDoc).map(([k, v]) => ` ${JSON.stringify(k)}: ${JSON.stringify(v)}`);
    fs.writeFileSync(path.join(args.out, 'shapes.json'), `{\n${lines.join(',\n')}\n}\n`);
  }
  process.stdout.write(JSON.stringify(summary) + '\n');
}

function os_le() {
  return new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;
}

// Exit explicitly: the threaded wasm build's pthread workers would keep Node alive.
main().then(() => process.exit(0), (e) => {
  process.stderr.write(`run_ref: ${process.env.REF_DEBUG && e && e.stack ? e.stack : (e && e.message) || e}\n`);
  process.exit(1);
});
