// The page: chesspack compiled to WebAssembly (web/build.sh writes pkg/).
import init, * as cp from './pkg/chesspack_web.js';

// lichess's own move codec on the README's unseen online games, bits/ply.
const LICHESS_BITS_PER_PLY = 4.48;

const $ = (id) => document.getElementById(id);
const state = { text: '', number: 1, analysis: null, ply: 0 };

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

// The square at column `f`, row `r` of the drawing (row 0 at the top).
function squareAt(f, r, flip) {
  return flip ? String.fromCharCode(104 - f) + (r + 1) : String.fromCharCode(97 + f) + (8 - r);
}

// Draws `fen` on `board` (an svg): the last move and a selected square
// marked, dots on `targets`, White at the bottom unless `flip`.
function drawOn(board, fen, { last = null, flip = false, selected = null, targets = [] } = {}) {
  board.replaceChildren();
  const marked = last ? [last.slice(0, 2), last.slice(2, 4)] : [];
  for (let r = 0; r < 8; r++) {
    for (let f = 0; f < 8; f++) {
      const name = squareAt(f, r, flip);
      const light = (r + f) % 2 === 0;
      const fill = name === selected ? '#7fb0e0'
        : marked.includes(name) ? (light ? '#f6f669' : '#baca2b') : (light ? 'var(--light)' : 'var(--dark)');
      board.append(svg('rect', { x: f * SQ, y: r * SQ, width: SQ, height: SQ, fill, 'data-square': name }));
    }
  }
  for (let i = 0; i < 8; i++) {
    board.append(svg('text', { x: i * SQ + 2, y: 358, 'font-size': 9, fill: '#333' }, squareAt(i, 7, flip)[0]));
    board.append(svg('text', { x: 350, y: i * SQ + 10, 'font-size': 9, fill: '#333' }, squareAt(7, i, flip)[1]));
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
      const [x, y] = flip ? [7 - f, 7 - r] : [f, r];
      board.append(svg('text', {
        x: x * SQ + SQ / 2, y: y * SQ + SQ * 0.8, 'text-anchor': 'middle', 'font-size': 38,
        fill: white ? '#fff' : '#111', stroke: '#111', 'stroke-width': white ? 1.2 : 0.5,
        class: 'piece', 'data-piece': c, 'data-square': String.fromCharCode(97 + f) + (8 - r),
      }, GLYPH[c.toLowerCase()]));
      f += 1;
    }
  });
  for (const t of targets) {
    const file = t.charCodeAt(0) - 97;
    const rank = t.charCodeAt(1) - 49;
    const [x, y] = flip ? [7 - file, rank] : [file, 7 - rank];
    board.append(svg('circle', { cx: x * SQ + SQ / 2, cy: y * SQ + SQ / 2, r: 7, fill: '#0005', class: 'target', 'pointer-events': 'none' }));
  }
}

function drawBoard(fen, lastUci) {
  drawOn($('board'), fen, { last: lastUci });
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
  if (db.archive) db.archive.free();
  db.archive = null;
  $('db').hidden = true;
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

// ---- the database: an archive explored by position ------------------------

const PAGE = 50;
// Without a search index, the most games the page searches before it is
// asked to.
const SCAN_WITHOUT_ASKING = 20000;
const FILTERS = ['player', 'min_elo', 'max_elo', 'speed', 'from', 'to'];
const db = {
  archive: null, name: '', start: START, line: [], cursor: 0, flip: false,
  filters: {}, find: null, sort: 'number', offset: 0, legal: [], selected: null,
  keys: 'db', timings: {},
};

const dbFen = () => (db.cursor === 0 ? db.start : db.line[db.cursor - 1].fen);

// The query of the games list: sub-FEN, material or imbalance when one is
// asked for; else every game at the start of the standard position, the
// games that reached the position everywhere else; the filters always.
function listQuery() {
  if (db.find) return { ...db.filters, [db.find.kind]: db.find.text };
  if (db.cursor === 0 && db.start === START) return { ...db.filters };
  return { ...db.filters, fen: dbFen() };
}

// Times `f` with performance.now() into db.timings[name] (the browser test
// reads them from body's data-timings).
function timed(name, f) {
  const t = performance.now();
  const v = f();
  db.timings[name] = Math.round((performance.now() - t) * 10) / 10;
  document.body.dataset.timings = JSON.stringify(db.timings);
  return v;
}

function pct(n, of) {
  return of ? (100 * n) / of : 0;
}

function renderExplorer(v) {
  $('db-opening').textContent = v.opening ? `${v.eco} ${v.opening}` : '';
  const body = $('explorer').tBodies[0];
  const total = v.moves.reduce((s, m) => s + m.games, 0);
  body.replaceChildren(...v.moves.map((m) => {
    const tr = document.createElement('tr');
    tr.tabIndex = 0;
    tr.dataset.uci = m.uci;
    const [w, d, b] = [pct(m.white, m.games), pct(m.draws, m.games), pct(m.black, m.games)];
    const label = (x) => (x >= 12 ? `${x.toFixed(0)}%` : '');
    tr.innerHTML = `<td class="san"></td><td class="num">${m.games.toLocaleString('en')}<small> ${pct(m.games, total).toFixed(0)}%</small></td>`
      + `<td class="bar"><div class="wdl" title="White ${w.toFixed(1)}%, draws ${d.toFixed(1)}%, Black ${b.toFixed(1)}%">`
      + `<span class="w" style="width:${w}%">${label(w)}</span><span class="d" style="width:${d}%">${label(d)}</span><span class="b" style="width:${b}%">${label(b)}</span></div></td>`
      + `<td class="num">${m.mean_rating ?? '–'}</td><td class="opening"></td>`;
    tr.children[0].textContent = m.san;
    tr.children[4].textContent = m.opening ? `${m.eco} ${m.opening}` : '';
    tr.title = `latest game: #${m.last_game}; highest rated: #${m.best_game}`;
    tr.addEventListener('click', () => playMove(m.uci));
    tr.addEventListener('keydown', (e) => e.key === 'Enter' && playMove(m.uci));
    return tr;
  }));
  if (v.moves.length === 0) {
    const tr = document.createElement('tr');
    tr.innerHTML = '<td colspan="5">no game played on from here</td>';
    body.append(tr);
  }
  const how = v.scanned
    ? `no search index: every game decoded${v.index_error ? ` (${v.index_error})` : ''}`
    : `search index, ${v.decoded.toLocaleString('en')} games decoded`;
  const text = v.not_searched ? `; ${v.not_searched} ${v.not_searched === 1 ? 'game' : 'games'} stored verbatim not searched` : '';
  $('explore-status').textContent = `${v.reached.toLocaleString('en')} ${v.reached === 1 ? 'game' : 'games'} reached this position (${how}${text}), in ${db.timings.explore} ms.`;
}

function renderHits(v) {
  const body = $('hits').tBodies[0];
  body.replaceChildren(...v.games.map((g) => {
    const tr = document.createElement('tr');
    tr.dataset.number = g.game;
    tr.dataset.ply = g.ply;
    const elo = (e) => (e ? ` (${e})` : '');
    for (const [c, cls] of [[g.game, 'num'], [g.white + elo(g.white_elo)], [g.black + elo(g.black_elo)], [g.result || '*'], [g.date], [g.event], [g.ply, 'num']]) {
      const td = document.createElement('td');
      td.textContent = c;
      if (cls) td.className = cls;
      tr.append(td);
    }
    tr.addEventListener('click', () => openDbGame(g.game, g.ply));
    return tr;
  }));
  const kinds = { sub_fen: 'sub-FEN', material: 'material', imbalance: 'imbalance' };
  const what = db.find ? `with ${kinds[db.find.kind]} ${db.find.text}`
    : (db.cursor === 0 && db.start === START ? 'of the archive' : 'that reached this position');
  const text = v.not_searched ? ` (${v.not_searched} stored verbatim not searched)` : '';
  $('hits-title').textContent = `${v.total.toLocaleString('en')} ${v.total === 1 ? 'game' : 'games'} ${what}${text}`;
  const end = Math.min(v.offset + v.games.length, v.total);
  $('hits-range').textContent = v.total ? `${(v.offset + 1).toLocaleString('en')}–${end.toLocaleString('en')} of ${v.total.toLocaleString('en')}` : 'none';
  $('hits-prev').disabled = v.offset === 0;
  $('hits-next').disabled = end >= v.total;
  $('find-clear').hidden = !db.find;
}

const showHits = guarded(() => {
  const v = timed('games', () => JSON.parse(db.archive.find(JSON.stringify(listQuery()), db.sort, db.offset, PAGE)));
  renderHits(v);
});

function renderLine() {
  const line = $('db-line');
  line.replaceChildren();
  const parts = db.start.split(' ');
  let number = Number(parts[5]) || 1;
  let white = parts[1] !== 'b';
  db.line.forEach((p, i) => {
    if (white || i === 0) line.append(`${number}.${white ? '' : '..'} `);
    const m = document.createElement('span');
    m.className = 'm' + (i + 1 === db.cursor ? ' current' : '') + (i + 1 > db.cursor ? ' after' : '');
    m.textContent = p.san;
    m.addEventListener('click', () => goTo(i + 1));
    line.append(m, ' ');
    if (!white) number += 1;
    white = !white;
  });
  if (db.line.length === 0) line.textContent = 'Click or drag a piece, or a move in the table.';
}

function drawDbBoard() {
  const last = db.cursor > 0 ? db.line[db.cursor - 1].uci : null;
  const targets = db.selected ? db.legal.filter((m) => m.uci.startsWith(db.selected)).map((m) => m.uci.slice(2, 4)) : [];
  drawOn($('db-board'), dbFen(), { last, flip: db.flip, selected: db.selected, targets });
}

// The view after a change of position, filters or find: board, line, FEN,
// the explorer's table and the first page of games.
const refresh = guarded((games = true) => {
  db.selected = null;
  if (db.deferred) {
    db.legal = JSON.parse(cp.positionMoves(dbFen())).legal;
    drawDbBoard();
    renderLine();
    $('db-fen').value = dbFen();
    return;
  }
  db.legal = JSON.parse(cp.positionMoves(dbFen())).legal;
  drawDbBoard();
  renderLine();
  $('db-fen').value = dbFen();
  $('db-link').hidden = true;
  const q = { ...db.filters, fen: dbFen() };
  // The games too where the list shows the same query's.
  const same = games && JSON.stringify(listQuery()) === JSON.stringify(q);
  const v = timed('explore', () => JSON.parse(db.archive.explore(JSON.stringify(q), same)));
  db.explored = v;
  renderExplorer(v);
  if (games) {
    db.offset = 0;
    showHits();
  }
  message('');
});

function goTo(cursor) {
  db.cursor = Math.max(0, Math.min(cursor, db.line.length));
  db.keys = 'db';
  refresh(!db.find);
}

// Plays `uci` from the current position: the line after it is cut unless
// the move is the line's next one.
const playMove = guarded((uci) => {
  db.keys = 'db';
  const next = db.line[db.cursor];
  if (next && next.uci === uci) {
    goTo(db.cursor + 1);
    return;
  }
  const v = JSON.parse(cp.play(dbFen(), uci));
  db.line = db.line.slice(0, db.cursor);
  db.line.push(v);
  db.cursor += 1;
  refresh(!db.find);
});

// A move from `from` to `to` on the board: played when legal, with a
// choice of piece when it promotes.
function tryMove(from, to) {
  const moves = db.legal.filter((m) => m.uci.slice(0, 4) === from + to);
  if (moves.length === 1) {
    playMove(moves[0].uci);
    return true;
  }
  if (moves.length > 1) {
    const promo = $('promo');
    const white = dbFen().split(' ')[1] === 'w';
    promo.replaceChildren(...['q', 'r', 'b', 'n'].map((p) => {
      const b = document.createElement('button');
      b.textContent = white ? { q: '♕', r: '♖', b: '♗', n: '♘' }[p] : GLYPH[p];
      b.title = { q: 'queen', r: 'rook', b: 'bishop', n: 'knight' }[p];
      b.dataset.promote = p;
      b.addEventListener('click', () => {
        promo.hidden = true;
        playMove(from + to + p);
      });
      return b;
    }));
    promo.hidden = false;
    promo.querySelector('button').focus();
    return true;
  }
  return false;
}

// The square under a pointer event on the board.
function squareOf(e) {
  const box = $('db-board').getBoundingClientRect();
  const f = Math.floor(((e.clientX - box.left) / box.width) * 8);
  const r = Math.floor(((e.clientY - box.top) / box.height) * 8);
  if (f < 0 || f > 7 || r < 0 || r > 7) return null;
  return squareAt(f, r, db.flip);
}

function boardInput() {
  const board = $('db-board');
  let drag = null;
  board.addEventListener('pointerdown', (e) => {
    const sq = squareOf(e);
    if (!sq || !db.archive) return;
    db.keys = 'db';
    $('promo').hidden = true;
    if (db.selected && db.selected !== sq && tryMove(db.selected, sq)) return;
    if (db.legal.some((m) => m.uci.startsWith(sq))) {
      db.selected = sq;
      drawDbBoard();
      const piece = [...board.querySelectorAll('.piece')].find((p) => p.dataset.square === sq);
      if (piece) {
        drag = { from: sq, piece, x: Number(piece.getAttribute('x')), y: Number(piece.getAttribute('y')), moved: false };
        board.setPointerCapture(e.pointerId);
      }
    } else {
      db.selected = null;
      drawDbBoard();
    }
  });
  board.addEventListener('pointermove', (e) => {
    if (!drag) return;
    const box = board.getBoundingClientRect();
    const x = ((e.clientX - box.left) / box.width) * 360;
    const y = ((e.clientY - box.top) / box.height) * 360;
    drag.moved = true;
    drag.piece.setAttribute('x', x);
    drag.piece.setAttribute('y', y + SQ * 0.3);
    board.append(drag.piece);
  });
  board.addEventListener('pointerup', (e) => {
    if (!drag) return;
    const { from, moved } = drag;
    drag = null;
    const sq = squareOf(e);
    if (moved && sq && sq !== from && tryMove(from, sq)) return;
    drawDbBoard();
  });
}

const openDbGame = guarded((number, ply) => {
  const text = db.archive.game(number);
  $('pgn').value = text;
  openGame(text, 1);
  showPly(ply);
  db.keys = 'game';
  document.querySelectorAll('#hits tbody tr').forEach((tr) => tr.classList.toggle('open', Number(tr.dataset.number) === number));
  $('game').scrollIntoView({ block: 'start' });
});

// The view as a URL fragment: the start (where not the standard one), the
// moves, the filters, a find and the sample when it is the sample.
function viewHash() {
  const p = new URLSearchParams();
  if (db.name === 'sample') p.set('db', 'sample');
  if (db.start !== START) p.set('fen', db.start);
  if (db.line.length) p.set('moves', db.line.slice(0, db.cursor).map((m) => m.uci).join(' '));
  for (const [k, v] of Object.entries(db.filters)) p.set(k, v);
  if (db.find) p.set(db.find.kind, db.find.text);
  if (db.sort !== 'number') p.set('sort', db.sort);
  return p.toString();
}

// Applies a fragment written by viewHash (an unknown or illegal part is a
// message, the rest applies).
const applyHash = guarded((hash) => {
  const p = new URLSearchParams(hash.replace(/^#/, ''));
  db.start = p.get('fen') ? JSON.parse(cp.positionMoves(p.get('fen'))).fen : START;
  db.line = [];
  let fen = db.start;
  for (const uci of (p.get('moves') || '').split(/[\s,]+/).filter(Boolean)) {
    const v = JSON.parse(cp.play(fen, uci));
    db.line.push(v);
    fen = v.fen;
  }
  db.cursor = db.line.length;
  db.filters = {};
  for (const k of FILTERS) if (p.get(k)) db.filters[k] = p.get(k);
  db.find = null;
  for (const kind of ['sub_fen', 'material', 'imbalance']) if (p.get(kind)) db.find = { kind, text: p.get(kind) };
  db.sort = p.get('sort') || 'number';
  const form = $('filters');
  for (const k of FILTERS) form.elements[k].value = db.filters[k] || '';
  $('hits-sort').value = db.sort;
  if (db.find) {
    $('find-kind').value = db.find.kind;
    $('find-text').value = db.find.text;
  }
  refresh();
});

const openArchive = guarded((bytes, name) => {
  const archive = timed('open', () => new cp.Archive(bytes));
  if (db.archive) db.archive.free();
  db.archive = archive;
  db.name = name;
  const info = JSON.parse(archive.info());
  db.explored = null;
  $('pgn').value = '';
  $('list').hidden = true;
  $('db').hidden = false;
  $('db-title').textContent = `${name === 'sample' ? 'The sample' : name}: ${info.games.toLocaleString('en')} games`;
  const size = `${(info.bytes / 1e6).toFixed(info.bytes < 1e6 ? 3 : 1)} MB, codec ${info.codec}, opened in ${db.timings.open} ms; `;
  $('db-note').textContent = size + (info.indexed
    ? 'with its search index.'
    : 'no search index: position search decodes every game (chesspack index adds one).');
  // Without an index every query decodes every game: a large archive
  // waits for the user to ask.
  db.deferred = !info.indexed && info.games > SCAN_WITHOUT_ASKING;
  if (db.deferred) {
    Object.assign(db, { start: START, line: [], cursor: 0, find: null, offset: 0 });
    db.legal = JSON.parse(cp.positionMoves(START)).legal;
    drawDbBoard();
    renderLine();
    $('explorer').tBodies[0].replaceChildren();
    $('hits').tBodies[0].replaceChildren();
    $('hits-title').textContent = 'Games';
    $('explore-status').textContent = `No search index: each step decodes all ${info.games.toLocaleString('en')} games. `;
    const go = document.createElement('button');
    go.textContent = 'explore anyway';
    go.addEventListener('click', () => {
      db.deferred = false;
      refresh();
    });
    $('explore-status').append(go);
  } else if (location.hash.length > 1 && (name === 'sample' || !location.hash.includes('db=sample'))) {
    applyHash(location.hash);
  } else {
    Object.assign(db, { start: START, line: [], cursor: 0, find: null, offset: 0 });
    refresh();
  }
  const v = db.explored || {};
  if (v.index_error) $('db-note').textContent = `${size}the search index is damaged (${v.index_error}): position search decodes every game.`;
  showEmpty('Click a game in the list below to play through it here.');
  $('db').scrollIntoView({ block: 'start' });
});

const openSampleDb = guarded(async () => {
  const r = await fetch('pkg/sample.pgn');
  if (!r.ok) throw new Error('the sample is missing: run web/build.sh');
  const bytes = cp.compress(new Uint8Array(await r.arrayBuffer()), 'model');
  openArchive(bytes, 'sample');
});

function dbInput() {
  boardInput();
  $('db-start').addEventListener('click', () => goTo(0));
  $('db-back').addEventListener('click', () => goTo(db.cursor - 1));
  $('db-fwd').addEventListener('click', () => goTo(db.cursor + 1));
  $('db-end').addEventListener('click', () => goTo(Infinity));
  $('db-flip').addEventListener('click', () => {
    db.flip = !db.flip;
    drawDbBoard();
  });
  $('db-share').addEventListener('click', () => {
    const hash = viewHash();
    history.replaceState(null, '', `#${hash}`);
    const link = $('db-link');
    link.value = location.href;
    link.hidden = false;
    link.select();
    if (navigator.clipboard) navigator.clipboard.writeText(location.href).catch(() => {});
  });
  const fenGo = guarded(() => {
    db.start = JSON.parse(cp.positionMoves($('db-fen').value)).fen;
    db.line = [];
    db.cursor = 0;
    db.find = null;
    refresh();
  });
  $('db-fen-go').addEventListener('click', fenGo);
  $('db-fen').addEventListener('keydown', (e) => e.key === 'Enter' && fenGo());
  $('filters').addEventListener('submit', (e) => {
    e.preventDefault();
    const form = e.target;
    db.filters = {};
    for (const k of FILTERS) if (form.elements[k].value.trim()) db.filters[k] = form.elements[k].value.trim();
    refresh();
  });
  $('filters-clear').addEventListener('click', () => {
    $('filters').reset();
    db.filters = {};
    refresh();
  });
  $('find').addEventListener('submit', (e) => {
    e.preventDefault();
    const text = $('find-text').value.trim();
    if (!text) return;
    db.find = { kind: $('find-kind').value, text };
    db.offset = 0;
    showHits();
  });
  $('find-clear').addEventListener('click', () => {
    db.find = null;
    db.offset = 0;
    showHits();
  });
  $('hits-prev').addEventListener('click', () => {
    db.offset = Math.max(0, db.offset - PAGE);
    showHits();
  });
  $('hits-next').addEventListener('click', () => {
    db.offset += PAGE;
    showHits();
  });
  $('hits-sort').addEventListener('change', (e) => {
    db.sort = e.target.value;
    db.offset = 0;
    showHits();
  });
}

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
  $('sample-db').addEventListener('click', openSampleDb);
  dbInput();
  $('game').addEventListener('click', () => { db.keys = 'game'; });
  $('first').addEventListener('click', () => showPly(0));
  $('prev').addEventListener('click', () => showPly(state.ply - 1));
  $('next').addEventListener('click', () => showPly(state.ply + 1));
  $('last').addEventListener('click', () => showPly(Infinity));
  $('moves').addEventListener('click', (e) => e.target.dataset.ply && showPly(Number(e.target.dataset.ply)));
  document.addEventListener('keydown', (e) => {
    if (e.target.tagName === 'TEXTAREA' || e.target.tagName === 'INPUT' || e.target.tagName === 'SELECT') return;
    if (db.archive && db.keys === 'db') {
      const steps = { ArrowLeft: -1, ArrowRight: 1 };
      if (e.key in steps) goTo(db.cursor + steps[e.key]);
      if (e.key === 'Home') goTo(0);
      if (e.key === 'End') goTo(Infinity);
      if (e.key in steps || e.key === 'Home' || e.key === 'End') e.preventDefault();
      return;
    }
    if (!state.analysis) return;
    const moves = { ArrowLeft: -1, ArrowRight: 1 };
    if (e.key in moves) showPly(state.ply + moves[e.key]);
    if (e.key === 'Home') showPly(0);
    if (e.key === 'End') showPly(Infinity);
  });
  $('fen-go').addEventListener('click', measureFen);
  $('fen').addEventListener('keydown', (e) => e.key === 'Enter' && measureFen());
  measureFen();
  showEmpty();
  // A shared view of the sample opens it; one of another archive waits
  // for the archive to be opened.
  if (location.hash.includes('db=sample')) await openSampleDb();
  document.body.dataset.ready = 'yes';
}

main().catch((e) => message(`The page could not start: ${e.message || e}`));
