//! One block of games, stored as columns.
//!
//! Payload: the number of games (varint), then [`COLUMNS`] columns in that
//! order, each as a method byte (0 stored, 1 zstd), the raw length and the
//! stored length (varints) and the stored bytes.

use shakmaty::{Chess, Color, Move, Position};

use super::{
    chunk::Chunk,
    text::{self, Event, ParsedGame, Unparsed},
};
use crate::{Bits, bits::BitWriter, game::GameCodec};

/// The columns of a block, in storage order.
pub const COLUMNS: [&str; 11] = [
    "kind",
    "verbatim",
    "tag-names",
    "tag-sequence",
    "tag-values",
    "events",
    "moves",
    "move-lengths",
    "comments",
    "clocks",
    "evals",
];

const KIND: usize = 0;
const VERBATIM: usize = 1;
const TAG_NAMES: usize = 2;
const TAG_SEQ: usize = 3;
const TAG_VALUES: usize = 4;
const EVENTS: usize = 5;
const MOVES: usize = 6;
const MOVE_LENGTHS: usize = 7;
const COMMENTS: usize = 8;
const CLOCKS: usize = 9;
const EVALS: usize = 10;

/// The largest raw column a decoder accepts (a block holds at most a few
/// megabytes of games and one over-long chunk).
const MAX_COLUMN: u64 = 256 << 20;

// Event codes.
const E_END: u8 = 0;
const E_MOVE: u8 = 1;
const E_COMMENT: u8 = 2;
const E_CLK: u8 = 3;
const E_EVAL_CLK: u8 = 4;
const E_EVAL: u8 = 5;
const E_NAG: u8 = 6;
const E_OPEN: u8 = 7;
const E_CLOSE: u8 = 8;
/// The outcome token equals the `Result` tag, then the game ends.
const E_RESULT_AS_TAG: u8 = 9;
/// `E_OUTCOME + i`: outcome `text::OUTCOMES[i]`, then the game ends.
const E_OUTCOME: u8 = 10;

/// Sizes and verbatim games of one encoded block.
#[derive(Clone, Debug, Default)]
pub struct BlockReport {
    /// Games in the block.
    pub games: u64,
    /// Input bytes of the games.
    pub input_bytes: u64,
    /// Raw bytes of each column, in [`COLUMNS`] order.
    pub raw: [u64; 11],
    /// Stored bytes of each column, in [`COLUMNS`] order.
    pub stored: [u64; 11],
    /// Games stored verbatim: (game number, category, detail).
    pub verbatim: Vec<(u64, &'static str, String)>,
}

/// One encoded block, ready to be written.
#[derive(Clone, Debug)]
pub struct EncodedBlock {
    /// The payload (the block frame is added by the archive writer).
    pub payload: Vec<u8>,
    /// What went where.
    pub report: BlockReport,
}

pub(crate) fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

pub(crate) fn get_varint(data: &mut &[u8]) -> Result<u64, String> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let (&b, rest) = data.split_first().ok_or("unexpected end of column")?;
        *data = rest;
        v |= u64::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            return Ok(v);
        }
    }
    Err("varint too long".into())
}

fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

fn unzigzag(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

/// A lichess clock or eval comment, split into its numbers.
#[derive(Debug, PartialEq)]
struct Annotation<'a> {
    eval: Option<&'a [u8]>,
    clock: Option<u32>,
}

fn format_clock(seconds: u32, out: &mut Vec<u8>) {
    use std::io::Write as _;
    let _ = write!(
        out,
        "[%clk {}:{:02}:{:02}]",
        seconds / 3600,
        seconds / 60 % 60,
        seconds % 60
    );
}

fn format_annotation(eval: Option<&[u8]>, clock: Option<u32>, out: &mut Vec<u8>) {
    out.push(b' ');
    if let Some(e) = eval {
        out.extend_from_slice(b"[%eval ");
        out.extend_from_slice(e);
        out.extend_from_slice(b"] ");
    }
    if let Some(c) = clock {
        format_clock(c, out);
        out.push(b' ');
    }
}

/// Splits ` [%eval E] [%clk H:MM:SS] ` (either part optional, exactly as
/// lichess writes it); `None` for any other comment.
fn parse_annotation(c: &[u8]) -> Option<Annotation<'_>> {
    let mut rest = c.strip_prefix(b" ")?;
    let mut eval = None;
    if let Some(r) = rest.strip_prefix(b"[%eval ") {
        let end = r.iter().position(|&b| b == b']')?;
        let e = &r[..end];
        if e.is_empty() || !e.iter().all(|b| b.is_ascii_graphic()) {
            return None;
        }
        eval = Some(e);
        rest = r[end + 1..].strip_prefix(b" ")?;
    }
    let mut clock = None;
    if let Some(r) = rest.strip_prefix(b"[%clk ") {
        let end = r.iter().position(|&b| b == b']')?;
        let s = std::str::from_utf8(&r[..end]).ok()?;
        let mut parts = s.split(':');
        let (h, m, sec) = (parts.next()?, parts.next()?, parts.next()?);
        let h: u32 = h.parse().ok()?;
        let m: u32 = m.parse().ok()?;
        let sec: u32 = sec.parse().ok()?;
        if m >= 60 || sec >= 60 || h > 1000 {
            return None;
        }
        clock = Some(h * 3600 + m * 60 + sec);
        rest = r[end + 1..].strip_prefix(b" ")?;
    }
    if !rest.is_empty() || (eval.is_none() && clock.is_none()) {
        return None;
    }
    // Only what formats back to the same bytes.
    let mut again = Vec::with_capacity(c.len());
    format_annotation(eval, clock, &mut again);
    (again == c).then_some(Annotation { eval, clock })
}

/// Base time and increment in seconds from a `TimeControl` tag like `180+2`.
fn time_control(tags: &[(Vec<u8>, Vec<u8>)]) -> (i64, i64) {
    let tc = tags
        .iter()
        .find(|(k, _)| k == b"TimeControl")
        .map(|(_, v)| v.as_slice())
        .unwrap_or(b"");
    let s = std::str::from_utf8(tc).unwrap_or("");
    let mut parts = s.split('+');
    let base = parts.next().and_then(|p| p.parse().ok()).unwrap_or(0);
    let inc = parts.next().and_then(|p| p.parse().ok()).unwrap_or(0);
    (base, inc)
}

/// Predicts clock readings: the last reading of the same side plus the
/// increment, the base time for a side's first reading.
struct ClockModel {
    base: i64,
    inc: i64,
    last: [Option<i64>; 2],
}

impl ClockModel {
    fn new(tags: &[(Vec<u8>, Vec<u8>)]) -> ClockModel {
        let (base, inc) = time_control(tags);
        ClockModel {
            base,
            inc,
            last: [None, None],
        }
    }

    fn predict(&self, side: Color) -> i64 {
        self.last[side as usize].map_or(self.base, |l| l + self.inc)
    }

    fn update(&mut self, side: Color, clock: i64) {
        self.last[side as usize] = Some(clock);
    }
}

/// Positions of the lines of a game while its events are walked.
struct Lines {
    /// (position, position before the last move) of each open line.
    stack: Vec<(Chess, Option<Chess>)>,
}

impl Lines {
    fn new(start: &Chess) -> Lines {
        Lines {
            stack: vec![(start.clone(), None)],
        }
    }
    fn top(&mut self) -> &mut (Chess, Option<Chess>) {
        self.stack.last_mut().expect("a line is open")
    }
    /// The side that made the last move (or, before any move, the side not
    /// to move): the owner of a clock comment.
    fn mover(&self) -> Color {
        !self.stack[self.stack.len() - 1].0.turn()
    }
    fn play(&mut self, m: Move) {
        let (pos, before) = self.top();
        *before = Some(pos.clone());
        pos.play_unchecked(m);
    }
    fn open(&mut self) -> Chess {
        let (pos, before) = &self.stack[self.stack.len() - 1];
        let start = before.clone().unwrap_or_else(|| pos.clone());
        self.stack.push((start.clone(), None));
        start
    }
    fn close(&mut self) {
        if self.stack.len() > 1 {
            self.stack.pop();
        }
    }
}

#[derive(Default)]
struct Columns {
    data: [Vec<u8>; 11],
    moves: BitWriter,
    tag_names: Vec<Vec<u8>>,
    /// Values of each tag name, in game order.
    tag_values: Vec<Vec<u8>>,
}

impl Columns {
    fn tag_id(&mut self, name: &[u8]) -> usize {
        if let Some(i) = self.tag_names.iter().position(|n| n == name) {
            return i;
        }
        self.tag_names.push(name.to_vec());
        self.tag_values.push(Vec::new());
        self.tag_names.len() - 1
    }

    fn add_verbatim(&mut self, bytes: &[u8]) {
        self.data[KIND].push(1);
        put_varint(&mut self.data[VERBATIM], bytes.len() as u64);
        self.data[VERBATIM].extend_from_slice(bytes);
    }

    fn add_game(&mut self, game: &ParsedGame, codec: &dyn GameCodec) -> Result<(), Unparsed> {
        // Segments: the mainline, then each variation in the order its `(`
        // appears; each from the position where it starts.
        let mut segments: Vec<(Chess, Vec<Move>)> = vec![(game.start.clone(), Vec::new())];
        let mut open: Vec<usize> = vec![0];
        let mut lines = Lines::new(&game.start);
        let mut events = Vec::with_capacity(game.events.len() + 2);
        let mut clocks = ClockModel::new(&game.tags);
        for event in &game.events {
            match event {
                Event::Move(m) => {
                    segments[open[open.len() - 1]].1.push(*m);
                    lines.play(*m);
                    events.push(E_MOVE);
                }
                Event::Nag(n) => {
                    events.push(E_NAG);
                    events.push(*n);
                }
                Event::Comment(c) => match parse_annotation(c) {
                    Some(a) => {
                        if let Some(e) = a.eval {
                            self.data[EVALS].extend_from_slice(e);
                            self.data[EVALS].push(b']');
                        }
                        if let Some(clock) = a.clock {
                            let side = lines.mover();
                            let residual = i64::from(clock) - clocks.predict(side);
                            put_varint(&mut self.data[CLOCKS], zigzag(residual));
                            clocks.update(side, i64::from(clock));
                        }
                        events.push(match (a.eval, a.clock) {
                            (Some(_), Some(_)) => E_EVAL_CLK,
                            (None, Some(_)) => E_CLK,
                            _ => E_EVAL,
                        });
                    }
                    None => {
                        self.data[COMMENTS].extend_from_slice(c);
                        self.data[COMMENTS].push(b'}');
                        events.push(E_COMMENT);
                    }
                },
                Event::Open => {
                    let start = lines.open();
                    segments.push((start, Vec::new()));
                    open.push(segments.len() - 1);
                    events.push(E_OPEN);
                }
                Event::Close => {
                    lines.close();
                    open.pop();
                    events.push(E_CLOSE);
                }
            }
        }
        let result_tag = game
            .tags
            .iter()
            .find(|(k, _)| k == b"Result")
            .map(|(_, v)| v.as_slice());
        match game.outcome {
            None => events.push(E_END),
            Some(o) if result_tag == Some(text::OUTCOMES[usize::from(o)].as_bytes()) => {
                events.push(E_RESULT_AS_TAG);
            }
            Some(o) => events.push(E_OUTCOME + o),
        }
        // Moves.
        let mut encoded = Vec::with_capacity(segments.len());
        for (start, moves) in &segments {
            let bits = codec.encode(start, moves).map_err(|e| Unparsed {
                category: "codec",
                detail: e.to_string(),
            })?;
            encoded.push(bits);
        }
        for bits in &encoded {
            put_varint(&mut self.data[MOVE_LENGTHS], bits.len() as u64);
            self.moves.write_bits(bits);
        }
        // Tags.
        for (name, value) in &game.tags {
            let id = self.tag_id(name);
            put_varint(&mut self.data[TAG_SEQ], id as u64 + 1);
            self.tag_values[id].extend_from_slice(value);
            self.tag_values[id].push(0);
        }
        put_varint(&mut self.data[TAG_SEQ], 0);
        self.data[EVENTS].extend_from_slice(&events);
        self.data[KIND].push(0);
        Ok(())
    }
}

/// Encodes the games of `chunks` into one block; zstd at `level` for the
/// text columns.
pub fn encode_block(codec: &dyn GameCodec, chunks: &[Chunk], level: i32) -> EncodedBlock {
    let mut cols = Columns::default();
    let mut report = BlockReport {
        games: chunks.len() as u64,
        ..BlockReport::default()
    };
    for chunk in chunks {
        report.input_bytes += chunk.bytes.len() as u64;
        let parsed = if chunk.cut {
            Err(Unparsed {
                category: "too long",
                detail: "game text longer than 8 MiB".into(),
            })
        } else {
            text::parse(&chunk.bytes)
        };
        // A game whose parts do not fit its columns (a codec error, a NUL in
        // a tag value) is stored verbatim too; the columns of a failed game
        // are rolled back by encoding into a scratch copy first.
        let result = parsed.and_then(|game| {
            if game.tags.iter().any(|(_, v)| v.contains(&0)) {
                return Err(Unparsed {
                    category: "syntax",
                    detail: "nul byte in a tag value".into(),
                });
            }
            let snapshot = GameColumns::snapshot(&cols);
            let r = cols.add_game(&game, codec);
            if r.is_err() {
                snapshot.restore(&mut cols);
            }
            r
        });
        if let Err(u) = result {
            report.verbatim.push((chunk.number, u.category, u.detail));
            cols.add_verbatim(&chunk.bytes);
        }
    }
    let mut names = Vec::new();
    for n in &cols.tag_names {
        names.extend_from_slice(n);
        names.push(b'\n');
    }
    cols.data[TAG_NAMES] = names;
    cols.data[TAG_VALUES] = cols.tag_values.concat();
    cols.data[MOVES] = cols.moves.finish().as_bytes().to_vec();

    let mut payload = Vec::new();
    put_varint(&mut payload, chunks.len() as u64);
    for (i, data) in cols.data.iter().enumerate() {
        report.raw[i] = data.len() as u64;
        let compressed = if i == MOVES || data.is_empty() {
            None
        } else {
            zstd::bulk::compress(data, level)
                .ok()
                .filter(|c| c.len() < data.len())
        };
        let (method, stored) = match &compressed {
            Some(c) => (1u8, c.as_slice()),
            None => (0u8, data.as_slice()),
        };
        payload.push(method);
        put_varint(&mut payload, data.len() as u64);
        put_varint(&mut payload, stored.len() as u64);
        payload.extend_from_slice(stored);
        report.stored[i] = stored.len() as u64;
    }
    EncodedBlock { payload, report }
}

/// Lengths of the columns before a game is added, to roll it back. Moves
/// need none: a game's moves are written after everything that can fail.
struct GameColumns {
    lens: [usize; 11],
    tag_lens: Vec<usize>,
    tag_names: usize,
}

impl GameColumns {
    fn snapshot(cols: &Columns) -> GameColumns {
        GameColumns {
            lens: std::array::from_fn(|i| cols.data[i].len()),
            tag_lens: cols.tag_values.iter().map(Vec::len).collect(),
            tag_names: cols.tag_names.len(),
        }
    }

    fn restore(self, cols: &mut Columns) {
        for (d, &l) in cols.data.iter_mut().zip(&self.lens) {
            d.truncate(l);
        }
        cols.tag_names.truncate(self.tag_names);
        cols.tag_values.truncate(self.tag_names);
        for (v, &l) in cols.tag_values.iter_mut().zip(&self.tag_lens) {
            v.truncate(l);
        }
    }
}

/// The columns of a stored block, decompressed.
struct Stored {
    games: usize,
    data: Vec<Vec<u8>>,
}

fn read_columns(mut payload: &[u8]) -> Result<Stored, String> {
    let games = get_varint(&mut payload)?;
    if games > 1 << 24 {
        return Err(format!("implausible game count {games}"));
    }
    let mut data = Vec::with_capacity(COLUMNS.len());
    for name in COLUMNS {
        let (&method, rest) = payload.split_first().ok_or("missing columns")?;
        payload = rest;
        let raw = get_varint(&mut payload)?;
        let stored = get_varint(&mut payload)?;
        if raw > MAX_COLUMN || stored > payload.len() as u64 {
            return Err(format!("column {name}: bad length"));
        }
        let (bytes, rest) = payload.split_at(stored as usize);
        payload = rest;
        let column = match method {
            0 if stored == raw => bytes.to_vec(),
            1 => {
                let d = zstd::bulk::decompress(bytes, raw as usize)
                    .map_err(|e| format!("column {name}: {e}"))?;
                if d.len() as u64 != raw {
                    return Err(format!("column {name}: wrong length"));
                }
                d
            }
            _ => return Err(format!("column {name}: unknown method {method}")),
        };
        data.push(column);
    }
    if !payload.is_empty() {
        return Err("trailing bytes after the columns".into());
    }
    Ok(Stored {
        games: games as usize,
        data,
    })
}

/// Cursor over a column of terminated items.
fn take_until<'a>(data: &mut &'a [u8], end: u8, what: &str) -> Result<&'a [u8], String> {
    let i = data
        .iter()
        .position(|&b| b == end)
        .ok_or_else(|| format!("{what} column ends early"))?;
    let item = &data[..i];
    *data = &data[i + 1..];
    Ok(item)
}

/// What to do with a game while a block is decoded.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Want {
    /// Skip it.
    Skip,
    /// Its tags only.
    Tags,
    /// Its text.
    Text,
}

/// A decoded game.
pub(crate) enum Decoded {
    /// The canonical text, or the verbatim text.
    Text(Vec<u8>),
    /// Tags (`None` for a verbatim game: its text is given).
    Tags(super::GameTags),
}

/// Decodes the games of a block that `want` asks for, in order, calling
/// `sink(index in block, game)`.
pub(crate) fn decode_block(
    codec: &dyn GameCodec,
    payload: &[u8],
    want: &dyn Fn(usize) -> Want,
    sink: &mut dyn FnMut(usize, Decoded),
) -> Result<usize, String> {
    let stored = read_columns(payload)?;
    let d = &stored.data;
    if d[KIND].len() != stored.games {
        return Err("kind column does not match the game count".into());
    }
    // Tag names and values, split by name.
    let names: Vec<&[u8]> = if d[TAG_NAMES].is_empty() {
        Vec::new()
    } else {
        d[TAG_NAMES]
            .strip_suffix(b"\n")
            .ok_or("bad tag names")?
            .split(|&b| b == b'\n')
            .collect()
    };
    let mut counts = vec![0usize; names.len()];
    {
        let mut seq = d[TAG_SEQ].as_slice();
        while !seq.is_empty() {
            let id = get_varint(&mut seq)?;
            if id > 0 {
                *counts
                    .get_mut(id as usize - 1)
                    .ok_or("tag id out of range")? += 1;
            }
        }
    }
    let mut values: Vec<std::vec::IntoIter<&[u8]>> = Vec::with_capacity(names.len());
    {
        let mut rest = d[TAG_VALUES].as_slice();
        for &count in &counts {
            let mut v = Vec::with_capacity(count);
            for _ in 0..count {
                v.push(take_until(&mut rest, 0, "tag value")?);
            }
            values.push(v.into_iter());
        }
    }
    let mut kind = d[KIND].iter();
    let mut verbatim = d[VERBATIM].as_slice();
    let mut seq = d[TAG_SEQ].as_slice();
    let mut events = d[EVENTS].as_slice();
    let moves =
        Bits::from_bytes(d[MOVES].clone(), d[MOVES].len() * 8).map_err(|e| e.to_string())?;
    let mut move_pos = 0usize;
    let mut move_lengths = d[MOVE_LENGTHS].as_slice();
    let mut comments = d[COMMENTS].as_slice();
    let mut clocks = d[CLOCKS].as_slice();
    let mut evals = d[EVALS].as_slice();

    for g in 0..stored.games {
        let w = want(g);
        if *kind.next().ok_or("kind column ends early")? == 1 {
            let len = get_varint(&mut verbatim)? as usize;
            if len > verbatim.len() {
                return Err("verbatim column ends early".into());
            }
            let (text, rest) = verbatim.split_at(len);
            verbatim = rest;
            match w {
                Want::Skip => {}
                Want::Text => sink(g, Decoded::Text(text.to_vec())),
                Want::Tags => sink(g, Decoded::Tags(Err(text.to_vec()))),
            }
            continue;
        }
        let mut tags = Vec::new();
        loop {
            let id = get_varint(&mut seq)?;
            if id == 0 {
                break;
            }
            let i = id as usize - 1;
            let value = values[i].next().ok_or("tag values end early")?;
            if w != Want::Skip {
                tags.push((names[i].to_vec(), value.to_vec()));
            }
        }
        if w == Want::Tags {
            sink(g, Decoded::Tags(Ok(std::mem::take(&mut tags))));
        }
        // Events of this game.
        let end = events
            .iter()
            .enumerate()
            .scan(false, |after_nag, (i, &b)| {
                let is_end = !*after_nag && (b == E_END || b >= E_RESULT_AS_TAG);
                *after_nag = !*after_nag && b == E_NAG;
                Some((i, is_end))
            })
            .find(|&(_, e)| e)
            .map(|(i, _)| i)
            .ok_or("events column ends early")?;
        let game_events = &events[..=end];
        events = &events[end + 1..];
        if w != Want::Text {
            // Skip this game's items in the other columns.
            let mut segments = 1;
            let mut i = 0;
            while i < game_events.len() {
                match game_events[i] {
                    E_NAG => i += 1,
                    E_OPEN => segments += 1,
                    E_COMMENT => {
                        take_until(&mut comments, b'}', "comment")?;
                    }
                    E_CLK => {
                        get_varint(&mut clocks)?;
                    }
                    E_EVAL => {
                        take_until(&mut evals, b']', "eval")?;
                    }
                    E_EVAL_CLK => {
                        take_until(&mut evals, b']', "eval")?;
                        get_varint(&mut clocks)?;
                    }
                    _ => {}
                }
                i += 1;
            }
            for _ in 0..segments {
                move_pos = move_pos
                    .checked_add(get_varint(&mut move_lengths)? as usize)
                    .ok_or("move length overflow")?;
            }
            continue;
        }
        let start = text::start_of(&tags).map_err(|u| u.detail)?;
        let mut read_segment = |start: &Chess| -> Result<std::vec::IntoIter<Move>, String> {
            let len = get_varint(&mut move_lengths)? as usize;
            let end = move_pos.checked_add(len).ok_or("move length overflow")?;
            if end > moves.len() {
                return Err("moves column ends early".into());
            }
            let bits = slice_bits(&moves, move_pos, len);
            move_pos = end;
            let decoded = codec.decode(start, &bits).map_err(|e| e.to_string())?;
            Ok(decoded.into_iter())
        };
        let mut segs = vec![read_segment(&start)?];
        let mut lines = Lines::new(&start);
        let mut clock_model = ClockModel::new(&tags);
        let mut out_events = Vec::new();
        let mut outcome = None;
        let mut i = 0;
        let mut annotation = Vec::new();
        while i < game_events.len() {
            let code = game_events[i];
            i += 1;
            match code {
                E_MOVE => {
                    let m = segs
                        .last_mut()
                        .and_then(Iterator::next)
                        .ok_or("fewer moves than the events say")?;
                    lines.play(m);
                    out_events.push(Event::Move(m));
                }
                E_NAG => {
                    let n = *game_events.get(i).ok_or("nag missing")?;
                    i += 1;
                    out_events.push(Event::Nag(n));
                }
                E_COMMENT => {
                    out_events.push(Event::Comment(
                        take_until(&mut comments, b'}', "comment")?.to_vec(),
                    ));
                }
                E_CLK | E_EVAL | E_EVAL_CLK => {
                    let eval = if code == E_CLK {
                        None
                    } else {
                        Some(take_until(&mut evals, b']', "eval")?)
                    };
                    let clock = if code == E_EVAL {
                        None
                    } else {
                        let side = lines.mover();
                        let c = clock_model.predict(side) + unzigzag(get_varint(&mut clocks)?);
                        let c = u32::try_from(c).map_err(|_| "clock out of range")?;
                        clock_model.update(side, i64::from(c));
                        Some(c)
                    };
                    annotation.clear();
                    format_annotation(eval, clock, &mut annotation);
                    out_events.push(Event::Comment(annotation.clone()));
                }
                E_OPEN => {
                    let start = lines.open();
                    segs.push(read_segment(&start)?);
                    out_events.push(Event::Open);
                }
                E_CLOSE => {
                    if segs.len() < 2 {
                        return Err("unmatched variation end".into());
                    }
                    if segs.pop().is_some_and(|mut s| s.next().is_some()) {
                        return Err("more moves than the events say".into());
                    }
                    lines.close();
                    out_events.push(Event::Close);
                }
                E_END => {}
                E_RESULT_AS_TAG => {
                    let tag = tags
                        .iter()
                        .find(|(k, _)| k == b"Result")
                        .map(|(_, v)| v.as_slice());
                    outcome = Some(
                        text::OUTCOMES
                            .iter()
                            .position(|o| Some(o.as_bytes()) == tag)
                            .ok_or("result tag is not a result")? as u8,
                    );
                }
                c if (E_OUTCOME..E_OUTCOME + 4).contains(&c) => outcome = Some(c - E_OUTCOME),
                c => return Err(format!("unknown event {c}")),
            }
        }
        if segs.len() != 1 || segs.pop().is_some_and(|mut s| s.next().is_some()) {
            return Err("moves and events disagree".into());
        }
        let game = ParsedGame {
            tags,
            start,
            events: out_events,
            outcome,
        };
        let mut out = Vec::new();
        text::write(&game, &mut out);
        sink(g, Decoded::Text(out));
    }
    if kind.next().is_some() || !verbatim.is_empty() || !seq.is_empty() || !events.is_empty() {
        return Err("columns hold more than the game count".into());
    }
    Ok(stored.games)
}

/// Bits `start..start + len` of `bits`.
fn slice_bits(bits: &Bits, start: usize, len: usize) -> Bits {
    let mut w = BitWriter::new();
    let bytes = bits.as_bytes();
    let mut i = start;
    let end = start + len;
    // Whole bytes where aligned, bit by bit elsewhere.
    while i < end && !i.is_multiple_of(8) {
        w.write_bit(bytes[i / 8] >> (7 - i % 8) & 1 == 1);
        i += 1;
    }
    while i + 8 <= end {
        w.write(u64::from(bytes[i / 8]), 8);
        i += 8;
    }
    while i < end {
        w.write_bit(bytes[i / 8] >> (7 - i % 8) & 1 == 1);
        i += 1;
    }
    w.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn annotations_round_trip_exactly() {
        for (c, ok) in [
            (&b" [%clk 0:01:00] "[..], true),
            (b" [%eval 0.17] [%clk 1:00:09] ", true),
            (b" [%eval #-3] ", true),
            (b" [%clk 0:1:00] ", false),
            (b"[%clk 0:01:00]", false),
            (b" [%clk 0:01:00.5] ", false),
            (b" great move ", false),
            (b" [%clk 0:01:00] [%eval 0.1] ", false),
        ] {
            assert_eq!(
                parse_annotation(c).is_some(),
                ok,
                "{}",
                String::from_utf8_lossy(c)
            );
        }
    }

    #[test]
    fn varints_and_zigzag() {
        let mut v = Vec::new();
        for x in [0, 1, 127, 128, 300, u64::MAX] {
            put_varint(&mut v, x);
        }
        let mut r = v.as_slice();
        for x in [0, 1, 127, 128, 300, u64::MAX] {
            assert_eq!(get_varint(&mut r).unwrap(), x);
        }
        for x in [0i64, -1, 1, i64::MIN, i64::MAX] {
            assert_eq!(unzigzag(zigzag(x)), x);
        }
    }
}
