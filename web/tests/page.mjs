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

  // Issue 70: an archive opens as a database: the explorer beside a
  // board, the games of the position, a game opened at its ply.
  const archivePath = join(tmpdir(), `chesspack-web-${process.pid}.chpk`);
  writeFileSync(archivePath, nativeArchive);
  const explore = (...args) => native('explore', archivePath, '--json', '-q', ...args).toString().trim().split('\n').filter(Boolean).map((l) => JSON.parse(l));
  const findCount = (...args) => native('find', archivePath, '--json', '-q', ...args).toString().trim().split('\n').filter(Boolean).length;
  const explorerRows = () => page.$$eval('#explorer tbody tr[data-uci]', (rs) => rs.map((r) => ({
    san: r.children[0].textContent, games: Number(r.children[1].firstChild.textContent.replace(/,/g, '')), rating: r.children[3].textContent,
  })));
  const sameAsCli = (rows, cli) => JSON.stringify(rows) === JSON.stringify(cli.map((m) => ({ san: m.san, games: m.games, rating: m.mean_rating === null ? '–' : String(m.mean_rating) })));
  const timings = async () => JSON.parse(await page.getAttribute('body', 'data-timings'));
  await page.setInputFiles('#file', { name: 'sample.chpk', mimeType: 'application/octet-stream', buffer: nativeArchive });
  await page.waitForSelector('#db:not([hidden]) #explorer tbody tr[data-uci]');
  const startRows = await explorerRows();
  check(sameAsCli(startRows, explore()), `the explorer at the start is chesspack explore's (${startRows.map((r) => `${r.san} ${r.games}`).join(', ')})`);
  check(/with its search index/.test(await page.textContent('#db-note')), `the archive's index is shown: ${await page.textContent('#db-note')}`);
  const total = (text.match(/^\[Event /gm) || []).length;
  const allTitle = await page.textContent('#hits-title');
  check(Number(allTitle.match(/^(\d+)/)[1]) === findCount() && allTitle.includes('of the archive'), `the games list holds every searched game: ${allTitle} (${total} in the file)`);

  // 1. e4 by clicking e2 then e4; 1... c5 by dragging.
  const centre = async (sq) => {
    await page.locator('#db-board').scrollIntoViewIfNeeded();
    const boardBox = await page.locator('#db-board').boundingBox();
    const f = sq.charCodeAt(0) - 97;
    const r = 7 - (sq.charCodeAt(1) - 49);
    return [boardBox.x + (f + 0.5) * boardBox.width / 8, boardBox.y + (r + 0.5) * boardBox.height / 8];
  };
  await page.mouse.click(...(await centre('e2')));
  check((await page.$$('#db-board circle.target')).length === 2, 'a clicked pawn shows its two moves');
  await page.mouse.click(...(await centre('e4')));
  await page.waitForFunction(() => document.querySelector('#db-line').textContent.includes('e4'));
  await page.mouse.move(...(await centre('c7')));
  await page.mouse.down();
  await page.mouse.move(...(await centre('c6')), { steps: 3 });
  await page.mouse.move(...(await centre('c5')), { steps: 3 });
  await page.mouse.up();
  await page.waitForFunction(() => document.querySelector('#db-line').textContent.includes('c5'));
  const sicilian = 'rnbqkbnr/pp1ppppp/8/2p5/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2';
  check((await page.inputValue('#db-fen')) === sicilian, `1.e4 c5 played on the board (click, then drag): ${await page.inputValue('#db-fen')}`);
  const sicilianRows = await explorerRows();
  check(sameAsCli(sicilianRows, explore('--moves', 'e4 c5')), `the explorer after 1.e4 c5 is chesspack explore's (${sicilianRows.map((r) => `${r.san} ${r.games}`).join(', ') || 'none'})`);
  const e4Rows = explore('--moves', 'e4');
  const c5 = e4Rows.find((m) => m.san === 'c5');
  const named = await page.textContent('#db-opening');
  check(c5 && c5.opening && named === `${c5.eco} ${c5.opening}`, `the position's opening is what chesspack explore names its move: ${named}`);
  const rowNames = await page.$$eval('#explorer tbody tr[data-uci]', (rs) => rs.map((r) => r.children[4].textContent));
  const cliNames = explore('--moves', 'e4 c5').map((m) => (m.opening ? `${m.eco} ${m.opening}` : ''));
  check(JSON.stringify(rowNames) === JSON.stringify(cliNames), `each move's opening is chesspack explore's: ${rowNames.join(', ')}`);
  const hitsTitle = await page.textContent('#hits-title');
  check(Number(hitsTitle.match(/^(\d+)/)[1]) === findCount('--moves', 'e4 c5'), `the games that reached 1.e4 c5 are chesspack find's: ${hitsTitle}`);

  // Back, and a move of the table.
  await page.click('#db-back');
  check(sameAsCli(await explorerRows(), e4Rows), 'back: the explorer after 1.e4 again');
  await page.keyboard.press('ArrowRight');
  await page.waitForFunction((f) => document.querySelector('#db-fen').value === f, sicilian);
  check(true, 'the arrow key walks the line forward');
  await page.click('#db-start');
  const second = startRows[1] || startRows[0];
  await page.click(`#explorer tbody tr:nth-child(${startRows.indexOf(second) + 1})`);
  await page.waitForFunction((san) => document.querySelector('#db-line').textContent.includes(san), second.san);
  check(sameAsCli(await explorerRows(), explore('--moves', second.san)), `a click on ${second.san} in the table plays it and explores on`);

  // A game of the list opens at the ply where it reached the position.
  const row = await page.$('#hits tbody tr');
  const [number, ply] = await row.evaluate((r) => [Number(r.dataset.number), Number(r.dataset.ply)]);
  await row.click();
  await page.waitForFunction(() => !document.querySelector('#game').classList.contains('empty'));
  const got = native('get', archivePath, String(number)).toString();
  check((await page.inputValue('#pgn')) === got, `game ${number} opened from the list is what chesspack get gives`);
  check((await page.textContent('#ply-label')).startsWith(`ply ${ply}:`), `it opens at ply ${ply}: ${await page.textContent('#ply-label')}`);

  // Filters: the table and the games follow them.
  await page.click('#db-start');
  await page.fill('#filters input[name=min_elo]', '2000');
  await page.click('#filters button[type=submit]');
  await page.waitForFunction(() => document.querySelector('#hits-title').textContent.includes('of the archive'));
  check(sameAsCli(await explorerRows(), explore('--min-elo', '2000')), 'with a rating of at least 2000 the explorer is chesspack explore --min-elo 2000');
  const rated = Number((await page.textContent('#hits-title')).match(/^(\d+)/)[1]);
  check(rated === findCount('--min-elo', '2000') && rated < findCount(), `and so are the games (${rated})`);
  await page.click('#filters-clear');

  // Find by pieces on squares and by material.
  const subFen = '8/8/8/8/4P3/8/8/8';
  await page.selectOption('#find-kind', 'sub_fen');
  await page.fill('#find-text', subFen);
  await page.click('#find button[type=submit]');
  await page.waitForFunction(() => document.querySelector('#hits-title').textContent.includes('sub-FEN'));
  const subTitle = await page.textContent('#hits-title');
  check(Number(subTitle.match(/^(\d+)/)[1]) === findCount('--sub-fen', subFen), `a sub-FEN finds chesspack find's games: ${subTitle}`);
  await page.selectOption('#find-kind', 'imbalance');
  await page.fill('#find-text', 'v P');
  await page.click('#find button[type=submit]');
  await page.waitForFunction(() => document.querySelector('#hits-title').textContent.includes('imbalance'));
  const imbTitle = await page.textContent('#hits-title');
  check(Number(imbTitle.match(/^(\d+)/)[1]) === findCount('--imbalance', 'v P'), `an imbalance finds chesspack find's games: ${imbTitle}`);
  await page.click('#find-clear');

  // Paging and sorting.
  await page.selectOption('#hits-sort', 'date');
  const dates = await page.$$eval('#hits tbody tr', (rs) => rs.map((r) => r.children[4].textContent));
  check(dates.every((d, i) => i === 0 || dates[i - 1] >= d), 'newest first sorts by date');
  await page.selectOption('#hits-sort', 'number');
  const firstPage = await page.$$eval('#hits tbody tr', (rs) => rs.map((r) => r.dataset.number));
  const moreThanAPage = !(await page.isDisabled('#hits-next'));
  if (moreThanAPage) {
    await page.click('#hits-next');
    const next = await page.$$eval('#hits tbody tr', (rs) => rs.map((r) => r.dataset.number));
    check(Number(next[0]) > Number(firstPage.at(-1)), `the next page follows (${await page.textContent('#hits-range')})`);
    await page.click('#hits-prev');
  }
  check(firstPage.length === Math.min(50, findCount()), `a page of up to 50 games (${firstPage.length})`);

  // A promotion asks for the piece.
  await page.fill('#db-fen', '8/P6k/8/8/8/8/8/K7 w - - 0 1');
  await page.press('#db-fen', 'Enter');
  await page.waitForFunction(() => document.querySelector('#db-fen').value.startsWith('8/P6k'));
  await page.mouse.click(...(await centre('a7')));
  await page.mouse.click(...(await centre('a8')));
  await page.waitForSelector('#promo:not([hidden])');
  await page.click('#promo button[data-promote=n]');
  await page.waitForFunction(() => document.querySelector('#db-line').textContent.includes('a8=N'));
  check((await page.inputValue('#db-fen')).startsWith('N7/7k/'), 'a promotion offers the four pieces and plays the one chosen');
  check(/no game|^0 games/.test(await page.textContent('#explore-status')) || (await explorerRows()).length === 0, 'a position no game reached has no moves');

  // An archive without a search index opens too, and says that its
  // queries decode every game.
  const plainArchive = native('compress', '-q', '-c', '--no-index', '--codec', 'model', sample);
  await page.setInputFiles('#file', { name: 'plain.chpk', mimeType: 'application/octet-stream', buffer: plainArchive });
  await page.waitForFunction(() => document.querySelector('#db-title').textContent.startsWith('plain.chpk'));
  await page.waitForSelector('#explorer tbody tr[data-uci]');
  check(/no search index/.test(await page.textContent('#db-note')) && /no search index: every game decoded/.test(await page.textContent('#explore-status')),
    `an archive without an index says so: ${await page.textContent('#db-note')} / ${await page.textContent('#explore-status')}`);
  check(sameAsCli(await explorerRows(), explore()), 'and its explorer, by decoding every game, is the indexed one');

  // The sample as a database, a view shared as a link and opened again.
  await page.click('#sample-db');
  await page.waitForFunction(() => document.querySelector('#db-title').textContent.startsWith('The sample'));
  await page.click('#explorer tbody tr:nth-child(1)');
  await page.waitForFunction(() => document.querySelector('#db-line .m'));
  await page.fill('#filters input[name=player]', 'a');
  await page.click('#filters button[type=submit]');
  await page.waitForFunction(() => document.querySelector('#db-line .m'));
  await page.click('#db-share');
  const link = await page.inputValue('#db-link');
  const sharedFen = await page.inputValue('#db-fen');
  const sharedRows = await explorerRows();
  const shared = await browser.newPage({ viewport: { width: 1180, height: 1000 } });
  const requests = [];
  shared.on('request', (r) => requests.push(r.url()));
  await shared.goto(link);
  await shared.waitForSelector('body[data-ready=yes]', { timeout: 30000 });
  await shared.waitForSelector('#explorer tbody tr');
  check((await shared.inputValue('#db-fen')) === sharedFen && (await shared.inputValue('#filters input[name=player]')) === 'a', `the shared link opens the same view: ${link.slice(link.indexOf('#'))}`);
  check(JSON.stringify(await shared.$$eval('#explorer tbody tr[data-uci]', (rs) => rs.map((r) => r.children[0].textContent))) === JSON.stringify(sharedRows.map((r) => r.san)), 'with the same moves in the table');
  const offsite = requests.filter((u) => !u.startsWith(`http://127.0.0.1:${port}/`));
  check(offsite.length === 0, `no request leaves the page's own server (${requests.length} requests${offsite.length ? `: ${offsite.join(' ')}` : ''})`);
  await shared.close();

  // A phone: 400 px wide, nothing wider than the screen.
  await page.setViewportSize({ width: 400, height: 900 });
  await page.click('#db-start');
  const wide = await page.evaluate(() => document.documentElement.scrollWidth);
  check(wide <= 400, `at 400 px wide the page is ${wide} px wide`);
  mkdirSync(dirname(screenshot), { recursive: true });
  await page.locator('#db').screenshot({ path: join(dirname(screenshot), 'database-phone.png') });
  await page.setViewportSize({ width: 1180, height: 1300 });
  await page.click('#explorer tbody tr:nth-child(1)');
  await page.waitForFunction(() => document.querySelector('#db-line .m'));
  await page.locator('#db').screenshot({ path: join(dirname(screenshot), 'database.png') });
  console.log(`     screenshots: ${join(dirname(screenshot), 'database.png')}, database-phone.png`);
  console.log(`     the sample database in this browser: ${JSON.stringify(await timings())} ms`);
  rmSync(archivePath);

  // A large archive, when one is given (CHESSPACK_WEB_ARCHIVE): the times
  // to open it, to take each explorer step and to list the first games.
  if (process.env.CHESSPACK_WEB_ARCHIVE) {
    const big = process.env.CHESSPACK_WEB_ARCHIVE;
    const t = Date.now();
    await page.setInputFiles('#file', big);
    const base = big.split('/').pop();
    await page.waitForFunction((n) => document.querySelector('#db-title').textContent.startsWith(n) && document.querySelector('#explorer tbody tr'), base, { timeout: 120000 });
    console.log(`     ${big}: file to first view ${Date.now() - t} ms; ${JSON.stringify(await timings())}`);
    const steps = [];
    for (const uci of ['e2e4', 'c7c5', 'g1f3', 'd7d6', 'd2d4', 'c5d4', 'f3d4', 'g8f6', 'b1c3', 'a7a6']) {
      const before = await page.getAttribute('body', 'data-timings');
      await page.click(`#explorer tbody tr[data-uci=${uci}]`);
      await page.waitForFunction((b) => document.body.dataset.timings !== b, before);
      steps.push((await timings()));
    }
    console.log(`     explorer steps (ms): ${steps.map((s) => s.explore).join(', ')}; first page of games (ms): ${steps.map((s) => s.games).join(', ')}`);
    // The module's init gives the instance it made; the tab's JavaScript
    // heap from the browser's own metrics.
    const memory = await page.evaluate(async () => (await (await import('./pkg/chesspack_web.js')).default()).memory.buffer.byteLength);
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('Performance.enable');
    const { metrics } = await cdp.send('Performance.getMetrics');
    const heap = metrics.find((m) => m.name === 'JSHeapTotalSize').value;
    console.log(`     wasm memory ${(memory / 2 ** 20).toFixed(0)} MiB, JavaScript heap ${(heap / 2 ** 20).toFixed(0)} MiB; ${browser.version()} headless`);
  }

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
