// The page: chesspack compiled to WebAssembly (web/build.sh writes pkg/).
import init, * as cp from './pkg/chesspack_web.js';

// lichess's own move codec on the README's unseen online games, bits/ply.
const LICHESS_BITS_PER_PLY = 4.48;

const $ = (id) => document.getElementById(id);
const state = { text: '', number: 1, analysis: null, ply: 0, archive: null };

function message(text, kind = 'error') {
  const m = $('message');
  m.hidden = !text;
  m.textContent = text || '';
  m.className = kind === 'info' ? 'info' : '';
}

// Runs `f`, showing any error as a message rather than a blank page.
function guarded(f) {
  return (...args) => {
    try {
      return f(...args);
    } catch (e) {
      message(String(e && e.message ? e.message : e));
    }
  };
}

// Colour of a move's cost: green (free) to red (8 bits or more).
const STOPS = [[0, 130, 78], [2, 95, 75], [4, 55, 70], [6, 28, 70], [8, 0, 72]];
function colour(bits) {
  const b = Math.max(0, Math.min(bits, 8));
  for (let i = 1; i < STOPS.length; i++) {
    const [b1, h1, l1] = STOPS[i];
    const [b0, h0, l0] = STOPS[i - 1];
    if (b <= b1) {
      const t = (b - b0) / (b1 - b0);
      return `hsl(${h0 + t * (h1 - h0)} 70% ${l0 + t * (l1 - l0)}%)`;
    }
  }
  return 'hsl(0 70% 72%)';
}

const svg = (tag, attrs = {}, text) => {
  const e = document.createElementNS('http://www.w3.org/2000/svg', tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  return e;
};

// ---- the board ---------------------------------------------------------

const GLYPH = { k: '♚', q: '♛', r: '♜', b: '♝', n: '♞', p: '♟' };
const SQ = 45;

function squareXY(name) {
  const file = name.charCodeAt(0) - 97;
  const rank = name.charCodeAt(1) - 49;
  return [file * SQ, (7 - rank) * SQ];
}

function drawBoard(fen, lastUci) {
  const board = $('board');
  board.replaceChildren();
  const marked = lastUci ? [lastUci.slice(0, 2), lastUci.slice(2, 4)] : [];
  for (let r = 0; r < 8; r++) {
    for (let f = 0; f < 8; f++) {
      const name = String.fromCharCode(97 + f) + (8 - r);
      const light = (r + f) % 2 === 0;
      board.append(svg('rect', {
        x: f * SQ, y: r * SQ, width: SQ, height: SQ,
        fill: marked.includes(name) ? (light ? '#f6f669' : '#baca2b') : (light ? 'var(--light)' : 'var(--dark)'),
      }));
    }
  }
  for (let i = 0; i < 8; i++) {
    board.append(svg('text', { x: i * SQ + 2, y: 358, 'font-size': 9, fill: '#333' }, String.fromCharCode(97 + i)));
    board.append(svg('text', { x: 350, y: i * SQ + 10, 'font-size': 9, fill: '#333' }, String(8 - i)));
  }
  const rows = fen.split(' ')[0].split('/');
  rows.forEach((row, r) => {
    let f = 0;
    for (const c of row) {
      if (/\d/.test(c)) {
        f += Number(c);
        continue;
      }
      const white = c === c.toUpperCase();
      board.append(svg('text', {
        x: f * SQ + SQ / 2, y: r * SQ + SQ * 0.8, 'text-anchor': 'middle', 'font-size': 38,
        fill: white ? '#fff' : '#111', stroke: white ? '#111' : '#111', 'stroke-width': white ? 1.2 : 0.5,
        class: 'piece', 'data-piece': c,
      }, GLYPH[c.toLowerCase()]));
      f += 1;
    }
  });
}

// ---- one game ----------------------------------------------------------

function fenAt(ply) {
  const a = state.analysis;
  return ply === 0 ? a.start : a.plies[ply - 1].fen;
}

function showPly(ply) {
  const a = state.analysis;
  if (!a) return;
  state.ply = Math.max(0, Math.min(ply, a.plies.length));
  const p = state.ply;
  drawBoard(fenAt(p), p > 0 ? a.plies[p - 1].uci : null);
  $('ply-label').textContent = p === 0
    ? `start, ${a.plies.length} plies`
    : `ply ${p}: ${a.plies[p - 1].san}, ${a.plies[p - 1].bits.toFixed(2)} bits`;
  document.querySelectorAll('#moves .m').forEach((e) => e.classList.toggle('current', Number(e.dataset.ply) === p));
  document.querySelectorAll('#plot rect.bar').forEach((e) => e.classList.toggle('current', Number(e.dataset.ply) === p));
  const next = p < a.plies.length ? a.plies[p].uci : null;
  const rows = a.top3[p].map((t, i) => {
    const tr = document.createElement('tr');
    const played = t.uci === next ? ' ← played' : '';
    tr.innerHTML = `<td>${i + 1}.</td><td></td><td class="num">${(100 * t.p).toFixed(1)}%</td><td class="num">${(-Math.log2(t.p)).toFixed(2)} bits</td><td>${played}</td>`;
    tr.children[1].textContent = t.san;
    return tr;
  });
  if (rows.length === 0) {
    const tr = document.createElement('tr');
    tr.innerHTML = '<td>no legal moves: the game is over</td>';
    rows.push(tr);
  }
  $('top3').tBodies[0].replaceChildren(...rows);
  $('fen').value = fenAt(p);
  measureFen();
}

function renderMoves(a) {
  const moves = $('moves');
  moves.replaceChildren();
  const startFen = a.start.split(' ');
  let number = Number(startFen[5]) || 1;
  let white = startFen[1] !== 'b';
  a.plies.forEach((p, i) => {
    if (white || i === 0) {
      const n = document.createElement('span');
      n.className = 'n';
      n.textContent = white ? `${number}.` : `${number}...`;
      moves.append(n, ' ');
    }
    const m = document.createElement('span');
    m.className = 'm';
    m.dataset.ply = i + 1;
    m.style.background = colour(p.bits);
    m.textContent = p.san;
    m.title = `${p.bits.toFixed(2)} bits; ${p.legal} legal moves` + (p.rank !== null ? `; the model's choice no. ${p.rank + 1}` : '');
    moves.append(m, ' ');
    if (!white) number += 1;
    white = !white;
  });
  if (a.plies.length === 0) moves.textContent = '(no moves)';
}

function renderPlot(a) {
  const plot = $('plot');
  plot.replaceChildren();
  const n = a.plies.length;
  if (n === 0) return;
  const top = Math.max(8, Math.ceil(Math.max(...a.plies.map((p) => p.bits))));
  const [x0, y0, w, h] = [28, 8, 566, 130];
  for (let b = 0; b <= top; b += top > 12 ? 4 : 2) {
    const y = y0 + h - (b / top) * h;
    plot.append(svg('line', { x1: x0, x2: x0 + w, y1: y, y2: y, stroke: '#ddd' }));
    plot.append(svg('text', { x: x0 - 4, y: y + 3, 'font-size': 9, 'text-anchor': 'end', fill: '#555' }, String(b)));
  }
  const bw = w / n;
  a.plies.forEach((p, i) => {
    const bh = (p.bits / top) * h;
    const r = svg('rect', {
      x: x0 + i * bw + bw * 0.1, y: y0 + h - bh, width: Math.max(bw * 0.8, 0.5), height: Math.max(bh, 0.5),
      fill: colour(p.bits), class: 'bar', 'data-ply': i + 1,
    });
    r.append(svg('title', {}, `ply ${i + 1}: ${p.san}, ${p.bits.toFixed(2)} bits`));
    r.addEventListener('click', () => showPly(i + 1));
    plot.append(r);
  });
  const mean = a.plies.reduce((s, p) => s + p.bits, 0) / n;
  const my = y0 + h - (mean / top) * h;
  plot.append(svg('line', { x1: x0, x2: x0 + w, y1: my, y2: my, stroke: '#333', 'stroke-dasharray': '4 3' }));
  plot.append(svg('text', { x: x0 + w, y: my - 3, 'font-size': 9, 'text-anchor': 'end' }, `mean ${mean.toFixed(2)} bits`));
  plot.append(svg('text', { x: x0 + w / 2, y: 156, 'font-size': 9, 'text-anchor': 'middle', fill: '#555' }, `ply (1–${n})`));
}

function renderSummary(a) {
  const n = a.plies.length;
  const rows = [];
  const row = (label, bytes, bits, chosen = false) => {
    const tr = document.createElement('tr');
    if (chosen) tr.className = 'chosen';
    tr.innerHTML = `<td></td><td class="num">${bytes.toLocaleString('en')}</td><td class="num">${n ? (bits / n).toFixed(2) : '–'}</td><td class="num">${(100 * bytes / a.text_bytes).toFixed(1)}%</td>`;
    tr.children[0].textContent = label;
    rows.push(tr);
  };
  row('PGN text of the game', a.text_bytes, a.text_bytes * 8);
  row('zstd -19 of that text', a.zstd_bytes, a.zstd_bytes * 8);
  row(`lichess's codec (${LICHESS_BITS_PER_PLY} bits/ply on unseen games)`, Math.ceil(LICHESS_BITS_PER_PLY * n / 8), LICHESS_BITS_PER_PLY * n);
  for (const s of [...a.sizes].sort((x, y) => x.bits - y.bits)) {
    row(`chesspack ${s.codec} (moves)`, Math.ceil(s.bits / 8), s.bits, s.codec === a.codec);
  }
  $('summary').tBodies[0].replaceChildren(...rows);
  $('summary-note').textContent = `The codecs store the moves alone; the PGN text and zstd rows hold tags and comments too. `
    + `${a.codec}: ${a.stream_bits} bits in its stream, ${a.plies.reduce((s, p) => s + p.bits, 0).toFixed(1)} bits summed over the moves. `
    + `The lichess row is its codec's average, not this game.`;
}

const openGame = guarded((text, number) => {
  const a = JSON.parse(cp.analyse(text, number, $('codec').value));
  state.analysis = a;
  state.text = text;
  state.number = number;
  const tag = (name) => (a.tags.find(([k]) => k === name) || [null, '?'])[1];
  $('players').textContent = `${tag('White')} – ${tag('Black')}  ${tag('Result')}`;
  renderMoves(a);
  renderPlot(a);
  renderSummary(a);
  $('game').hidden = false;
  $('game').classList.remove('empty');
  document.querySelectorAll('#games tbody tr').forEach((tr) => tr.classList.toggle('open', Number(tr.dataset.number) === number));
  message('');
  showPly(a.plies.length);
});

const START = 'rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1';

// No game shown: the start position and what to do, none of a game's
// headings.
function showEmpty(hint = 'No game yet: paste a PGN game above, open a file, or load the sample games.') {
  state.analysis = null;
  $('game').hidden = false;
  $('game').classList.add('empty');
  $('players').textContent = hint;
  drawBoard(START, null);
}

// ---- lists of games -----------------------------------------------------

function renderList(list, title, open) {
  const body = $('games').tBodies[0];
  body.replaceChildren();
  for (const g of list.games) {
    const tr = document.createElement('tr');
    tr.dataset.number = g.number;
    const cells = g.error
      ? [g.number, `cannot be read: ${g.error}`, '', '', '', '']
      : [g.number, g.white + (g.white_elo ? ` (${g.white_elo})` : ''), g.black + (g.black_elo ? ` (${g.black_elo})` : ''), g.result, g.event, g.date];
    for (const c of cells) {
      const td = document.createElement('td');
      td.textContent = c;
      tr.append(td);
    }
    if (!g.error) tr.addEventListener('click', () => open(g.number));
    body.append(tr);
  }
  $('list-title').textContent = title + (list.more ? ` (the first ${list.games.length} shown)` : '');
  $('list').hidden = list.games.length < 2;
}

const show = guarded(() => {
  state.archive = null;
  const text = $('pgn').value;
  if (!text.trim()) {
    message('Paste a PGN game first, or load the sample.', 'info');
    return;
  }
  const list = JSON.parse(cp.games(text));
  const readable = list.games.filter((g) => !g.error && (g.plies > 0 || g.tags > 0));
  if (readable.length === 0) {
    showEmpty('No game to show.');
    $('list').hidden = true;
    const bad = list.games.find((g) => g.error);
    const why = bad ? `: ${bad.error}` : ': it holds neither tags nor moves';
    message(`No game could be read from this text${why}.`);
    return;
  }
  const total = `${list.games.length}${list.more ? '+' : ''}`;
  renderList(list, `${total} games in the text`, (n) => openGame(text, n));
  const withMoves = readable.find((g) => g.plies > 0);
  openGame(text, (withMoves || readable[0]).number);
  if (!withMoves) {
    const all = readable.length === 1 ? 'its one game is' : `all ${total} of its games are`;
    message(`No moves in this text: ${all} tags alone.`, 'info');
  }
});

const openArchive = guarded((bytes, name) => {
  const archive = new cp.Archive(bytes);
  const list = JSON.parse(archive.list());
  state.archive = archive;
  $('pgn').value = '';
  const open = guarded((n) => {
    const text = state.archive.game(n);
    $('pgn').value = text;
    openGame(text, 1);
    document.querySelectorAll('#games tbody tr').forEach((tr) => tr.classList.toggle('open', Number(tr.dataset.number) === n));
  });
  renderList(list, `${name}: ${list.total} games, codec ${list.codec}`, open);
  $('list').hidden = false;
  if (list.games.length) open(list.games[0].number);
  else message('The archive holds no games.', 'info');
});

async function readFile(file) {
  let bytes = new Uint8Array(await file.arrayBuffer());
  try {
    // A .zst download unpacked, other bytes as they are.
    bytes = cp.unpack(bytes);
  } catch (e) {
    message(String(e.message || e));
    return;
  }
  if (cp.isArchive(bytes)) {
    openArchive(bytes, file.name);
  } else {
    $('pgn').value = new TextDecoder().decode(bytes);
    show();
  }
}

// ---- positions ----------------------------------------------------------

function measureFen() {
  const box = $('fen-message');
  const body = $('fen-bits').tBodies[0];
  try {
    const v = JSON.parse(cp.fenBits($('fen').value));
    box.hidden = true;
    body.replaceChildren(...v.codecs.map((c) => {
      const tr = document.createElement('tr');
      tr.innerHTML = `<td></td><td class="num">${c.error ? '' : c.bits}</td>`;
      tr.children[0].textContent = c.codec;
      if (c.error) tr.children[1].textContent = c.error;
      return tr;
    }));
  } catch (e) {
    box.hidden = false;
    box.textContent = String(e.message || e);
    body.replaceChildren();
  }
}

// ---- start --------------------------------------------------------------

async function main() {
  window.addEventListener('error', (e) => message(`Unexpected error: ${e.message}`));
  window.addEventListener('unhandledrejection', (e) => message(`Unexpected error: ${e.reason}`));
  await init();
  const codecs = JSON.parse(cp.codecs());
  for (const c of codecs.games) {
    const o = document.createElement('option');
    o.value = c.name;
    o.textContent = c.name;
    o.title = c.description;
    $('codec').append(o);
  }
  $('show').addEventListener('click', show);
  // A paste replaces the text at once and shows it: the browser's own
  // insertion into a text box takes seconds for a few hundred kilobytes
  // (about 6 s for 50 KB in headless Chromium).
  $('pgn').addEventListener('paste', (e) => {
    const text = e.clipboardData && e.clipboardData.getData('text/plain');
    if (!text) return;
    e.preventDefault();
    const box = $('pgn');
    const [a, b] = [box.selectionStart, box.selectionEnd];
    box.value = box.value.slice(0, a) + text + box.value.slice(b);
    box.selectionStart = box.selectionEnd = a + text.length;
    show();
  });
  $('codec').addEventListener('change', () => {
    if (state.analysis) {
      const ply = state.ply;
      openGame(state.text, state.number);
      showPly(ply);
    }
  });
  $('sample').addEventListener('click', guarded(async () => {
    const r = await fetch('pkg/sample.pgn');
    if (!r.ok) throw new Error('the sample is missing: run web/build.sh');
    $('pgn').value = await r.text();
    show();
  }));
  $('file').addEventListener('change', (e) => e.target.files[0] && readFile(e.target.files[0]).catch((err) => message(String(err))));
  document.addEventListener('dragover', (e) => e.preventDefault());
  document.addEventListener('drop', (e) => {
    e.preventDefault();
    const f = e.dataTransfer.files[0];
    if (f) readFile(f).catch((err) => message(String(err)));
  });
  $('first').addEventListener('click', () => showPly(0));
  $('prev').addEventListener('click', () => showPly(state.ply - 1));
  $('next').addEventListener('click', () => showPly(state.ply + 1));
  $('last').addEventListener('click', () => showPly(Infinity));
  $('moves').addEventListener('click', (e) => e.target.dataset.ply && showPly(Number(e.target.dataset.ply)));
  document.addEventListener('keydown', (e) => {
    if (e.target.tagName === 'TEXTAREA' || e.target.tagName === 'INPUT' || !state.analysis) return;
    const moves = { ArrowLeft: -1, ArrowRight: 1 };
    if (e.key in moves) showPly(state.ply + moves[e.key]);
    if (e.key === 'Home') showPly(0);
    if (e.key === 'End') showPly(Infinity);
  });
  $('fen-go').addEventListener('click', measureFen);
  $('fen').addEventListener('keydown', (e) => e.key === 'Enter' && measureFen());
  measureFen();
  showEmpty();
  document.body.dataset.ready = 'yes';
}

main().catch((e) => message(`The page could not start: ${e.message || e}`));
