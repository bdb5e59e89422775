#!/usr/bin/env node
// state_blob.js: unpacks a headroom state blob (`headroom run --state-out FILE`, the format of
// src/session/state_blob.c, version 1) into raw float32 files, one per recurrent state tensor, so
// that they can be compared with TF.js's r1o..r4o (ref/run_ref.js --all-outputs).
//
// Usage: node ref/state_blob.js BLOB OUTDIR [--stem NNNNNN]
// Writes OUTDIR/<stem>.r1o.f32 .. r<n>o.f32 (NHWC float32 LE, as stored) and prints one JSON line:
// {"n_state":4,"width":W,"height":H,"ratio":R,"frame_index":F,"dims":[[1,h,w,c],...]}.
// <stem> defaults to the frame_index of the last frame processed (frame_index - 1), 6 digits.
// The header's checksum is not verified (headroom itself does on --state-in).
'use strict';
const fs = require('fs');
const path = require('path');

const HDR = 312;  // sizeof(blob_hdr): magic[8], u32 version, u32 n_state, u64 fingerprint,
                  // i32 width, i32 height, f32 ratio, u32 reserved, i64 frame_index, u64 checksum,
                  // i64 dims[8][4]
function main() {
  const argv = process.argv.slice(2);
  if (argv.length < 2) { process.stderr.write('usage: node ref/state_blob.js BLOB OUTDIR [--stem NNNNNN]\n'); process.exit(2); }
  const [blobPath, out] = argv;
  let stem = null;
  for (let i = 2; i < argv.length; i++) if (argv[i] === '--stem') stem = argv[++i];
  const b = fs.readFileSync(blobPath);
  const fail = (m) => { process.stderr.write(`state_blob: ${blobPath}: ${m}\n`); process.exit(1); };
  if (b.length < HDR) fail(`${b.length} bytes, shorter than the header`);
  if (b.toString('latin1', 0, 8) !== 'HRSTATE1') fail('bad magic');
  const version = b.readUInt32LE(8), n = b.readUInt32LE(12);
  if (version !== 1) fail(`version ${version}, this script reads 1`);
  if (n > 8) fail(`${n} state tensors`);
  const width = b.readInt32LE(24), height = b.readInt32LE(28), ratio = b.readFloatLE(32);
  const frameIndex = Number(b.readBigInt64LE(40));
  const dims = [];
  let off = HDR;
  fs.mkdirSync(out, {recursive: true});
  if (stem === null) stem = String(Math.max(frameIndex - 1, 0)).padStart(6, '0');
  for (let k = 0; k < n; k++) {
    const d = [0, 1, 2, 3].map((j) => Number(b.readBigInt64LE(56 + (k * 4 + j) * 8)));
    const count = d.reduce((x, y) => x * (y || 1), 1);
    if (off + count * 4 > b.length) fail(`state ${k} ${JSON.stringify(d)} runs past the end`);
    fs.writeFileSync(path.join(out, `${stem}.r${k + 1}o.f32`), b.subarray(off, off + count * 4));
    off += count * 4;
    dims.push(d);
  }
  if (off !== b.length) fail(`${b.length - off} bytes left over after ${n} states`);
  process.stdout.write(JSON.stringify({n_state: n, width, height, ratio, frame_index: frameIndex, dims}) + '\n');
}
main();
