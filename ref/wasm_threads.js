// wasm_threads.js: lets tfjs-backend-wasm 4.22.0 run its threaded-SIMD build (XNNPACK's thread
// pool on Emscripten pthreads) under Node, which the backend refuses on its own.
//
// Why it is needed: the backend answers WASM_HAS_MULTITHREAD_SUPPORT=false whenever IS_NODE
// (tfjs issue #3830). Forcing the flag is not enough: the backend hands Emscripten its worker
// script and its main script as Blob URLs ("blob:nodedata:..."), and Node's worker_threads only
// accept file paths. So, before the backend starts, we (1) wrap the global Blob to remember the
// text of JavaScript blobs, (2) make URL.createObjectURL write such a blob to a temporary .js file
// and return its absolute path, and (3) prepend to the worker script a line that does the same
// for the main script the worker receives (as a Blob) in its "load" message.
// Everything is local: no fetch, no network. The temporary folder is removed at exit.
'use strict';

const fs = require('fs');
const os = require('os');
const path = require('path');

// The factory's text (Function.prototype.toString) was cut out of a rollup bundle, so it names
// some of the bundle's top-level bindings: its module aliases, tslib helpers and commonjsGlobal.
// Rebuild those few from the bundle's own source so the worker can evaluate the text.
function bundlePrelude() {
  const bundle = require.resolve('@tensorflow/tfjs-backend-wasm');  // dist/tf-backend-wasm.node.js
  const src = fs.readFileSync(bundle, 'utf8');
  const out = ["var require$$0=require('fs'),require$$1=require('path')," +
      "require$$3=require('perf_hooks'),require$$4=require('os');",
  'var commonjsGlobal=globalThis;'];
  for (const name of ['__values', '__read', '__spreadArray']) {
    const start = src.indexOf(`\nfunction ${name}(`);
    if (start < 0) throw new Error(`wasm_threads: ${name} not found in ${bundle}`);
    let i = src.indexOf('{', start), depth = 0;
    for (; i < src.length; i++) {
      if (src[i] === '{') depth++;
      else if (src[i] === '}' && --depth === 0) break;
    }
    out.push(src.slice(start + 1, i + 1));
  }
  return out.join('\n') + '\n';
}

// threads: XNNPACK pool size wanted. Call before tf.setBackend('wasm'); call the returned
// function after tf.ready() to undo the os.cpus() override below.
function enableNodeWasmThreads(tf, threads) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'headroom-ref-wasm-'));
  process.on('exit', () => { try { fs.rmSync(dir, {recursive: true, force: true}); } catch (e) {} });
  const NativeBlob = global.Blob;
  const jsText = new WeakMap();
  let mainScriptPath = null;
  let n = 0;

  class TextKeepingBlob extends NativeBlob {
    constructor(parts, opts) {
      super(parts, opts);
      const type = (opts && opts.type) || '';
      if (/javascript/.test(type) && Array.isArray(parts) && parts.every((p) => typeof p === 'string')) {
        const text = parts.join('');
        jsText.set(this, text);
        if (text.startsWith('var WasmBackendModuleThreadedSimd')) {
          mainScriptPath = path.join(dir, 'tfjs-backend-wasm-threaded-simd.js');
          fs.writeFileSync(mainScriptPath, bundlePrelude() + text);
        }
      }
    }
  }
  global.Blob = TextKeepingBlob;

  const nativeCreate = URL.createObjectURL;
  URL.createObjectURL = function(blob) {
    if (!jsText.has(blob)) return nativeCreate.call(URL, blob);
    let text = jsText.get(blob);
    if (text.includes('importScripts') && text.includes('urlOrBlob')) {
      // The pthread worker script: make its createObjectURL(mainScriptBlob) return our file.
      if (!mainScriptPath) throw new Error('wasm_threads: worker requested before the main script');
      text = `URL.createObjectURL=()=>${JSON.stringify(mainScriptPath)};URL.revokeObjectURL=()=>{};\n` + text;
    }
    const p = path.join(dir, `blob${n++}.js`);
    fs.writeFileSync(p, text);
    return p;
  };
  tf.env().set('WASM_HAS_MULTITHREAD_SUPPORT', true);

  // The backend caps its pool at emscripten_num_logical_cores()/2 ("hyper-threads") and, under
  // Node, that is os.cpus().length/2: 1 on a 2-core machine. It is read once, while the module
  // starts, so report 2*threads logical cores until the caller undoes it.
  const nativeCpus = os.cpus;
  os.cpus = () => {
    const c = nativeCpus.call(os);
    while (c.length < 2 * threads) c.push(c[0]);
    return c;
  };
  return () => { os.cpus = nativeCpus; };
}

module.exports = {enableNodeWasmThreads};
