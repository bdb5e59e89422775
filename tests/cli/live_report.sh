#!/usr/bin/env bash
# The HTML report of a REAL run renders offline: 60 frames of vtest.avi at 384x288 through
# `headroom run --report`, then headless Chromium (no network, throwaway profile) screenshots it.
# Checks: the HTML is self-contained (no script, no external reference: every src/href is a data:
# URI, no url(http...), no @import), the expected elements exist (SVG plots with paths, the
# summary tables, the stage headings, the embedded samples, this run's frame count); the
# screenshot (PNG decoded here) is not blank and its plots are drawn (the inference stage's blue
# area and the health band's green cover real areas). Exit 77 without Chromium, the CLI or data.
set -euo pipefail
CLI=${HR_CLI:-build/headroom}
MODEL=${HR_MODEL_DIR:-models}/rvm.json
VTEST=${HR_VTEST:-/usr/share/doc/opencv-doc/examples/data/vtest.avi}
[ -x "$CLI" ] || { echo "SKIP: no CLI at $CLI"; exit 77; }
[ -f "$MODEL" ] || { echo "SKIP: no model $MODEL"; exit 77; }
[ -f "$VTEST" ] || { echo "SKIP: no $VTEST (apt-get install opencv-doc)"; exit 77; }
command -v node > /dev/null || { echo "SKIP: no node"; exit 77; }
CHROMIUM=${HR_CHROMIUM:-/usr/bin/chromium}
[ -x "$CHROMIUM" ] || CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
[ -n "$CHROMIUM" ] && [ -x "$CHROMIUM" ] || { echo "SKIP: chromium is not installed"; exit 77; }

T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
"$CLI" run --model "$MODEL" --input "$VTEST" --size 384x288 --frames 60 --threads 2 --quiet \
  --out "$T/out" --report "$T/report.html" 2> "$T/run.log" || { echo "FAIL: run exited with $?"; cat "$T/run.log"; exit 1; }
[ -s "$T/report.html" ] || { echo "FAIL: no report written"; exit 1; }

mkdir "$T/profile"
HOME="$T/profile" timeout 180 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
  --disable-background-networking --disable-component-update --disable-sync \
  --host-resolver-rules="MAP * ~NOTFOUND" --user-data-dir="$T/profile" \
  --screenshot="$T/report.png" --window-size=1280,2400 "file://$T/report.html" > "$T/chromium.log" 2>&1 ||
  { echo "FAIL: chromium exited with $?"; cat "$T/chromium.log"; exit 1; }
[ -s "$T/report.png" ] || { echo "FAIL: no screenshot"; cat "$T/chromium.log"; exit 1; }

node - "$T/report.html" "$T/report.png" "$T/out/telemetry.jsonl" <<'EOF'
'use strict';
const fs = require('fs'), zlib = require('zlib');
const [html_path, png_path, tel_path] = process.argv.slice(2);
const html = fs.readFileSync(html_path, 'utf8');
const bad = [];
const count = (s) => html.split(s).length - 1;
const frames = fs.readFileSync(tel_path, 'utf8').trim().split('\n').length;

// structure
if (!html.startsWith('<!doctype html>') || !html.includes('</html>')) bad.push('not a complete HTML document');
if (count('<svg') < 5) bad.push(`only ${count('<svg')} <svg> plots`);
if (count('<path') < 10) bad.push(`only ${count('<path')} <path> elements`);
if (count('<table') < 2) bad.push(`only ${count('<table')} tables`);
for (const h of ['Frame time per stage', 'Delivered frame rate', 'Processing resolution', 'Memory', 'Health', 'Stage timing', '>p50<', '>p99<'])
  if (!html.includes(h)) bad.push(`missing "${h}"`);
if (frames !== 60) bad.push(`telemetry has ${frames} lines, want 60`);
if (!html.includes('60 frames')) bad.push('the summary does not say "60 frames"');
if (count('data:image/png;base64,') < 2) bad.push('no embedded sample images');
// paths are drawn, not empty: the longest "d" attribute has real points
const ds = [...html.matchAll(/<path[^>]* d="([^"]*)"/g)].map((m) => m[1].length);
if (!ds.length || Math.max(...ds) < 200) bad.push(`paths have no points (longest d="" is ${Math.max(0, ...ds)} chars)`);
// self-contained: nothing to fetch
if (/<script/i.test(html)) bad.push('has a <script>');
if (/@import/i.test(html)) bad.push('has an @import');
if (/url\(\s*['"]?(?!data:|#)/i.test(html)) bad.push('has a url() that is not a data: URI or a fragment');
for (const m of html.matchAll(/\s(?:src|href|xlink:href|srcset|poster|data)\s*=\s*["']?([^"'\s>]*)/gi))
  if (!/^(data:|#)/.test(m[1])) bad.push(`external reference ${m[0].trim().slice(0, 80)}`);
const urls = (html.match(/(?:https?|ftp|wss?):\/\/[^\s"'<>)]*/g) || []).filter((u) => !u.startsWith('http://www.w3.org/'));
if (urls.length) bad.push(`URLs in the page: ${urls.slice(0, 3).join(' ')}`);

// the screenshot: decode the PNG (8-bit RGB or RGBA, non-interlaced: what Chromium writes)
const png = fs.readFileSync(png_path);
if (png.readUInt32BE(0) !== 0x89504e47) { console.error('FAIL: screenshot is not a PNG'); process.exit(1); }
let off = 8, w = 0, h = 0, ct = 0, depth = 0, interlace = 0;
const idat = [];
while (off < png.length) {
  const len = png.readUInt32BE(off), type = png.toString('ascii', off + 4, off + 8), data = png.subarray(off + 8, off + 8 + len);
  if (type === 'IHDR') { w = data.readUInt32BE(0); h = data.readUInt32BE(4); depth = data[8]; ct = data[9]; interlace = data[12]; }
  if (type === 'IDAT') idat.push(data);
  if (type === 'IEND') break;
  off += 12 + len;
}
if (depth !== 8 || (ct !== 2 && ct !== 6) || interlace) { console.error(`FAIL: PNG depth ${depth} colour type ${ct} interlace ${interlace}: not decoded here`); process.exit(1); }
const bpp = ct === 6 ? 4 : 3, stride = w * bpp, raw = zlib.inflateSync(Buffer.concat(idat)), px = Buffer.alloc(stride * h);
for (let y = 0; y < h; y++) {
  const f = raw[y * (stride + 1)], src = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
  for (let x = 0; x < stride; x++) {
    const a = x >= bpp ? px[y * stride + x - bpp] : 0, b = y ? px[(y - 1) * stride + x] : 0, c = x >= bpp && y ? px[(y - 1) * stride + x - bpp] : 0;
    let v = src[x];
    if (f === 1) v += a; else if (f === 2) v += b; else if (f === 3) v += (a + b) >> 1;
    else if (f === 4) { const p = a + b - c, pa = Math.abs(p - a), pb = Math.abs(p - b), pc = Math.abs(p - c); v += pa <= pb && pa <= pc ? a : pb <= pc ? b : c; }
    px[y * stride + x] = v & 255;
  }
}
let nonwhite = 0;
const seen = new Set(), near = (rgb, tol) => { let n = 0; const R = rgb >> 16, G = (rgb >> 8) & 255, B = rgb & 255;
  for (let i = 0; i < w * h; i++) { const p = i * bpp; if (Math.abs(px[p] - R) <= tol && Math.abs(px[p + 1] - G) <= tol && Math.abs(px[p + 2] - B) <= tol) n++; } return n; };
for (let i = 0; i < w * h; i++) {
  const p = i * bpp;
  if (px[p] < 240 || px[p + 1] < 240 || px[p + 2] < 240) nonwhite++;
  seen.add((px[p] >> 3) << 10 | (px[p + 1] >> 3) << 5 | (px[p + 2] >> 3));
}
const blue = near(0x3f7fc9, 12), green = near(0x4cb27a, 12);
console.log(`screenshot ${w}x${h}: ${(100 * nonwhite / (w * h)).toFixed(1)}% non-white, ${seen.size} distinct colours (5-bit); ` +
  `infer blue ${blue} px, healthy green ${green} px; HTML ${html.length} bytes, ${count('<svg')} svg, ${count('<path')} paths, ${count('<table')} tables`);
if (w !== 1280 || h !== 2400) bad.push(`screenshot is ${w}x${h}, want 1280x2400`);
if (nonwhite < w * h / 20) bad.push(`screenshot looks blank: ${nonwhite} non-white pixels`);
if (seen.size < 150) bad.push(`only ${seen.size} distinct colours`);
if (blue < 5000) bad.push(`the stage plot is not drawn: ${blue} px of the inference blue`);
if (green < 5000) bad.push(`the health band is not drawn: ${green} px of the healthy green`);
if (bad.length) { console.error('FAIL: ' + bad.join('\nFAIL: ')); process.exit(1); }
console.log('live_report: ok');
EOF
