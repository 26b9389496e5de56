// The browser test of web/: loads the page in headless Chromium, pastes the
// sample game, and checks what it shows against the native CLI.
//
//   node web/tests/page.mjs [--screenshot docs/web.png]
//
// Env: CHESSPACK (the native CLI, default target/release/chesspack),
// CHROMIUM (default /usr/bin/chromium).
import { spawn, execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const web = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const root = resolve(web, '..');
const cli = process.env.CHESSPACK || join(root, 'target/release/chesspack');
const sample = join(root, 'samples/lichess-sample.pgn');
const tagsOnly = join(root, 'crates/chesspack/tests/fixtures/archive/dialects/tags-only.pgn');
const shotArg = process.argv.indexOf('--screenshot');
const screenshot = shotArg > 0 ? resolve(process.argv[shotArg + 1]) : join(web, 'tests/out/page.png');

let failures = 0;
function check(ok, what) {
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}`);
  if (!ok) failures += 1;
}
const native = (...args) => execFileSync(cli, args, { maxBuffer: 1 << 28 });

// What the native CLI says of the sample's first game and of one position.
function explain(codec, file = sample, game = 1) {
  const out = native('explain', '--codec', codec, '--game', String(game), file).toString();
  const last = out.trim().split('\n').pop();
  const m = last.match(/^(\d+) plies, ([\d.]+) bits in moves, (\d+) bits in the stream/);
  if (!m) throw new Error(`unexpected explain output: ${last}`);
  const sans = out.split('\n').slice(2, -2).map((l) => l.trim().split(/\s+/)[1].replace(/^\d+\.(\.\.)?/, ''));
  return { plies: Number(m[1]), moveBits: Number(m[2]), stream: Number(m[3]), sans };
}
const text = readFileSync(sample, 'utf8');
const firstGame = text.slice(0, text.indexOf('\n[Event', 10) + 1);
const model = explain('model');
const index = explain('index');
const FEN = 'r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4';
const fenNative = Object.fromEntries(native('fen', 'encode', FEN).toString().trim().split('\n')
  .map((l) => l.trim().split(/\s+/)).map(([c, b]) => [c, Number(b)]));
const tNative = Date.now();
const nativeArchive = native('compress', '-q', '-c', '--codec', 'model', '--threads', '1', sample);
const nativeMs = Date.now() - tNative;
const sha = (b) => createHash('sha256').update(b).digest('hex');

// A static server for web/, as a user would run it.
const port = 8700 + Math.floor(Math.random() * 200);
const server = spawn('python3', ['-m', 'http.server', String(port), '--bind', '127.0.0.1', '-d', web], { stdio: 'ignore' });
await new Promise((r) => setTimeout(r, 700));

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  args: ['--no-sandbox'],
});
try {
  const page = await browser.newPage({ viewport: { width: 1180, height: 1300 } });
  const errors = [];
  page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
  page.on('pageerror', (e) => errors.push(String(e)));

  const t0 = Date.now();
  await page.goto(`http://127.0.0.1:${port}/index.html`);
  await page.waitForSelector('body[data-ready=yes]', { timeout: 30000 });
  const loadMs = Date.now() - t0;
  console.log(`     loaded and started in ${loadMs} ms`);
  check(loadMs < 10000, 'the page starts (a guard against a hang; the speed is reported, not tested)');

  // Issue 44, item 10: before any game, the start position and a hint,
  // none of a game's headings.
  check((await page.$$('#board text.piece')).length === 32, 'with no game loaded, the board shows the start position');
  check(/No game yet/.test(await page.textContent('#players')), `with no game loaded, a hint: ${await page.textContent('#players')}`);
  check(!(await page.isVisible('#moves')) && !(await page.isVisible('#summary')) && !(await page.isVisible('#top3')),
    "with no game loaded, no game's headings or empty tables");

  // Issue 44, item 10: a text of games of tags alone (FWWRC.pgn's first
  // 20) lists them and says there are no moves.
  await page.fill('#pgn', readFileSync(tagsOnly, 'utf8'));
  await page.click('#show');
  await page.waitForSelector('#message:not([hidden])');
  const tagsMessage = await page.textContent('#message');
  check(/no moves/i.test(tagsMessage) && (await page.$$('#games tbody tr')).length === 20,
    `games of tags alone are listed, with a message: ${tagsMessage}`);

  // Issue 44, item 10: pasting a few hundred kilobytes does not hang the
  // page (the browser's own insertion into the text box took seconds).
  const big = text.repeat(Math.ceil(340000 / text.length));
  const tPaste = Date.now();
  await page.$eval('#pgn', (box, pgn) => {
    box.value = '';
    const data = new DataTransfer();
    data.setData('text/plain', pgn);
    box.dispatchEvent(new ClipboardEvent('paste', { clipboardData: data, bubbles: true, cancelable: true }));
  }, big);
  await page.waitForSelector('#list:not([hidden])');
  const pasteMs = Date.now() - tPaste;
  console.log(`     pasted ${big.length} bytes and showed its games in ${pasteMs} ms`);
  check((await page.inputValue('#pgn')).length === big.length && pasteMs < 10000,
    `a ${Math.round(big.length / 1000)} KB paste is in the text box and shown (a guard against a hang)`);

  // The sample's first game, pasted.
  await page.fill('#pgn', firstGame);
  const t1 = Date.now();
  await page.click('#show');
  await page.waitForSelector('#game:not([hidden])');
  console.log(`     opened the first game (${model.plies} plies, every codec, top 3 everywhere) in ${Date.now() - t1} ms`);
  const sans = await page.$$eval('#moves .m', (ms) => ms.map((m) => m.textContent));
  check(sans.length === model.plies, `the move list has the game's ${model.plies} plies (${sans.length})`);
  check(JSON.stringify(sans) === JSON.stringify(model.sans), 'the moves are those explain lists');
  const note = await page.textContent('#summary-note');
  const stream = Number(note.match(/model: (\d+) bits in its stream/)[1]);
  check(stream === model.stream, `the total bits match chesspack explain (${stream} = ${model.stream})`);
  const summed = Number(note.match(/([\d.]+) bits summed/)[1]);
  check(Math.abs(summed - model.moveBits) < 0.05, `the per-move bits add up as explain's (${summed} vs ${model.moveBits})`);
  const colours = await page.$$eval('#moves .m', (ms) => new Set(ms.map((m) => m.style.background)).size);
  check(colours > 3, `moves are coloured by their cost (${colours} colours)`);
  check((await page.$$('#top3 tbody tr')).length === 3 || model.plies === 0, 'three predictions for the position');
  check((await page.$$('#plot rect.bar')).length === model.plies, 'a bar a ply in the plot');
  check((await page.$$('#board text.piece')).length >= 2, 'the board shows pieces');
  await page.click('#first');
  check((await page.$$('#board text.piece')).length === 32, 'the start position has 32 pieces');
  const top = await page.$$eval('#top3 tbody tr', (rs) => rs.map((r) => r.children[1].textContent));
  console.log(`     the model's first choices at the start: ${top.join(', ')}`);
  await page.keyboard.press('ArrowRight');
  check((await page.textContent('#ply-label')).startsWith('ply 1:'), 'the arrow keys step through the game');
  await page.click('#last');

  // Another codec.
  await page.selectOption('#codec', 'index');
  await page.waitForFunction(() => document.querySelector('#summary-note').textContent.startsWith('The codecs') && document.querySelector('#summary-note').textContent.includes('index:'));
  const indexStream = Number((await page.textContent('#summary-note')).match(/index: (\d+) bits in its stream/)[1]);
  check(indexStream === index.stream, `index: the total bits match explain (${indexStream} = ${index.stream})`);
  const rows = await page.$$eval('#summary tbody tr', (rs) => rs.map((r) => r.children[0].textContent));
  check(rows.some((r) => r.startsWith('zstd')) && rows.some((r) => r.startsWith("lichess's codec")), 'the summary compares with zstd and lichess');
  await page.selectOption('#codec', 'model');
  await page.waitForFunction(() => document.querySelector('#summary-note').textContent.includes('model:'));

  // The FEN box against `chesspack fen encode`.
  await page.fill('#fen', FEN);
  await page.click('#fen-go');
  const fenPage = Object.fromEntries(await page.$$eval('#fen-bits tbody tr', (rs) => rs.map((r) => [r.children[0].textContent, Number(r.children[1].textContent)])));
  check(JSON.stringify(fenPage) === JSON.stringify(fenNative), `position bits match chesspack fen encode (${JSON.stringify(fenPage)})`);

  // The wasm build writes the native archive's bytes, and reads them back.
  const streams = await page.evaluate(async ({ pgn, archive }) => {
    const cp = await import('./pkg/chesspack_web.js');
    const t = performance.now();
    const bytes = cp.compress(new TextEncoder().encode(pgn), 'model');
    const ms = performance.now() - t;
    const hex = async (b) => [...new Uint8Array(await crypto.subtle.digest('SHA-256', b))].map((x) => x.toString(16).padStart(2, '0')).join('');
    const back = new TextDecoder().decode(cp.decompress(Uint8Array.from(archive)));
    return { sha: await hex(bytes), len: bytes.length, same: back === pgn, ms };
  }, { pgn: text, archive: [...nativeArchive] });
  check(streams.sha === sha(nativeArchive), `the wasm build compresses the sample to the native archive's bytes (${streams.len} bytes)`);
  check(streams.same, 'the wasm build decompresses the native archive to the sample');
  console.log(`     wasm: compressed the sample (${text.length} bytes, model) in ${streams.ms.toFixed(0)} ms; the native CLI, one thread, process start included: ${nativeMs} ms`);

  // Bad input: a message, never a blank page.
  await page.fill('#pgn', '\u0000\u0001 not chess at all');
  await page.click('#show');
  check(await page.isVisible('#message'), `garbage gives a message: ${await page.textContent('#message')}`);
  await page.fill('#pgn', '[White "x"]\n\n1. e4 e5 2. Ke3 *\n');
  await page.click('#show');
  check(/illegal/i.test(await page.textContent('#message')), `an illegal move gives a message: ${await page.textContent('#message')}`);
  await page.fill('#fen', '8/8/8/8 w - - 0 1');
  await page.click('#fen-go');
  check(await page.isVisible('#fen-message'), `a bad FEN gives a message: ${await page.textContent('#fen-message')}`);
  await page.setInputFiles('#file', { name: 'broken.chpk', mimeType: 'application/octet-stream', buffer: nativeArchive.subarray(0, 200) });
  await page.waitForSelector('#message:not([hidden])');
  check(true, `a truncated archive gives a message: ${await page.textContent('#message')}`);

  // An archive: its games listed, one opened (random access).
  await page.setInputFiles('#file', { name: 'sample.chpk', mimeType: 'application/octet-stream', buffer: nativeArchive });
  await page.waitForSelector('#list:not([hidden])');
  const listed = await page.$$eval('#games tbody tr', (rs) => rs.length);
  const total = (text.match(/^\[Event /gm) || []).length;
  check(listed === total, `the archive lists its ${total} games (${listed})`);
  await page.click('#games tbody tr:nth-child(3)');
  await page.waitForFunction(() => document.querySelector('#games tbody tr.open')?.dataset.number === '3');
  const archivePath = join(tmpdir(), `chesspack-web-${process.pid}.chpk`);
  writeFileSync(archivePath, nativeArchive);
  const game3 = native('get', archivePath, '3').toString();
  rmSync(archivePath);
  check((await page.inputValue('#pgn')) === game3, 'game 3 opened from the archive is what chesspack get gives');

  // A lichess-style .pgn.zst download, dropped as it is.
  const zst = execFileSync('zstd', ['-q', '-c', sample]);
  await page.setInputFiles('#file', { name: 'sample.pgn.zst', mimeType: 'application/zstd', buffer: zst });
  await page.waitForFunction((n) => document.querySelectorAll('#games tbody tr').length === n && document.querySelector('#list-title').textContent.includes('in the text'), total);
  check((await page.inputValue('#pgn')) === text, `a .pgn.zst is unpacked in the page (${zst.length} bytes to ${total} games)`);

  // Back to the sample's first game for the screenshot.
  await page.fill('#pgn', firstGame);
  await page.click('#show');
  await page.waitForSelector('#game:not([hidden])');
  await page.click('#first');
  for (let i = 0; i < 12; i++) await page.click('#next');
  mkdirSync(dirname(screenshot), { recursive: true });
  await page.screenshot({ path: screenshot, fullPage: false });
  console.log(`     screenshot: ${screenshot}`);

  check(errors.length === 0, `no console errors${errors.length ? `: ${errors.join(' | ')}` : ''}`);
} finally {
  await browser.close();
  server.kill();
}
if (failures) {
  console.log(`${failures} check(s) failed`);
  process.exit(1);
}
console.log('all checks passed');
