//! One block of games, stored as columns.
//!
//! Payload: the number of games (varint), then [`COLUMNS`] columns in that
//! order, each as a method byte, the raw length and the stored length
//! (varints) and the stored bytes. The method's low bit says stored (0) or
//! zstd (1); the bits above it say how some columns are written:
//!
//! * `tag-values` + 2 (format 2 on): a value equal to the previous value of
//!   its tag name in the block is the single byte 1, and a value that
//!   begins with byte 1 or 2 has a 2 put before it;
//! * `tag-values` + 6 (format 3): the marks of recent players, players'
//!   ratings and next days too (see the `tags` module);
//! * `move-lengths` + 2 (format 3): the bit length of each line's moves,
//!   coded with adaptive probabilities ([`LengthCoder`]), not as varints.
//!
//! Format 3 also stores a game whose movetext is moves alone as one event
//! (`E_LINE`) with the codec's self-ending stream, instead of an event per
//! move with a stream that the move count ends.

use shakmaty::{Chess, Move, Position};

use super::{
    chunk::Chunk,
    tags::{Marks, TagState},
    text::{self, Event, ParsedGame, Unparsed},
};
use crate::{
    Bits,
    bits::BitWriter,
    coder::{BinaryDecoder, BinaryEncoder, BitModel},
    game::GameCodec,
};

/// The columns of a block, in storage order.
pub const COLUMNS: [&str; N_COLUMNS] = [
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
    "eval-text",
];

const N_COLUMNS: usize = 12;

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
const EVAL_TEXT: usize = 11;

/// Column method bit: the `tag-values` column marks repeated values
/// ([`Marks::Repeat`]); the low bit says raw (0) or zstd (1). Archives
/// written before the marks (methods 0 and 1) still decode.
const METHOD_MARKS: u8 = 2;
/// Column method bit, with [`METHOD_MARKS`]: the `tag-values` column uses
/// the marks of players, ratings and dates too ([`Marks::Players`]).
const METHOD_PLAYER_MARKS: u8 = 4;

/// Column method bit of `move-lengths`: the lengths are coded with
/// [`LengthCoder`] (format 3), not written as varints.
const METHOD_CODED_LENGTHS: u8 = 2;

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
/// The first event of a game whose movetext is its mainline's moves alone
/// (format 3): the moves, as many as the codec's self-ending stream holds
/// ([`GameCodec::encode`] rather than [`GameCodec::encode_counted`]); then
/// the game's end.
const E_LINE: u8 = 14;
/// The result token that follows starts a line of its own (format 4).
const E_RESULT_LINE: u8 = 15;

/// Whether event code `b` (not a glyph's number) ends a game.
fn ends_game(b: u8) -> bool {
    b == E_END || (E_RESULT_AS_TAG..E_OUTCOME + 4).contains(&b)
}

/// Sizes and verbatim games of one encoded block.
#[derive(Clone, Debug, Default)]
pub struct BlockReport {
    /// Games in the block.
    pub games: u64,
    /// Input bytes of the games.
    pub input_bytes: u64,
    /// Raw bytes of each column, in [`COLUMNS`] order.
    pub raw: [u64; N_COLUMNS],
    /// Stored bytes of each column, in [`COLUMNS`] order.
    pub stored: [u64; N_COLUMNS],
    /// Games stored verbatim: (game number, category, detail).
    pub verbatim: Vec<(u64, &'static str, String)>,
}

impl BlockReport {
    /// Adds the counts of `other` to these.
    pub fn add(&mut self, other: &BlockReport) {
        self.games += other.games;
        self.input_bytes += other.input_bytes;
        for i in 0..COLUMNS.len() {
            self.raw[i] += other.raw[i];
            self.stored[i] += other.stored[i];
        }
        self.verbatim.extend(other.verbatim.iter().cloned());
    }
}

/// One encoded block, ready to be written.
#[derive(Clone, Debug)]
pub struct EncodedBlock {
    /// The payload (the block frame is added by the archive writer).
    pub payload: Vec<u8>,
    /// What went where.
    pub report: BlockReport,
    /// CRC-32 of the text that decoding the block gives back (the games'
    /// canonical or verbatim text, in order).
    pub text_crc: u32,
    /// The first chunk's [`Chunk::lead`].
    pub lead: Vec<u8>,
    /// The whitespace that ends the last chunk (the end of the input when
    /// this is the last block).
    pub tail: Vec<u8>,
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
        if m >= 60 || sec >= 60 || h >= 1000 {
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
fn time_control(tc: &[u8]) -> (i64, i64) {
    let s = std::str::from_utf8(tc).unwrap_or("");
    let mut parts = s.split('+');
    let base = parts.next().and_then(|p| p.parse().ok()).unwrap_or(0);
    let inc = parts.next().and_then(|p| p.parse().ok()).unwrap_or(0);
    (base, inc)
}

/// The value of tag `name`.
fn tag<'a>(tags: &'a [(Vec<u8>, Vec<u8>)], name: &[u8]) -> Option<&'a [u8]> {
    tags.iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_slice())
}

/// Predicts clock readings (the last reading of the same side plus the
/// increment, the base time for a side's first reading) and codes the
/// difference adaptively. The "side" of a reading is the parity of the ply
/// it follows, counted from the game start along its line, so that it is
/// known without playing the moves.
struct ClockModel {
    base: i64,
    inc: i64,
    class: usize,
    last: [Option<i64>; 2],
    last_symbol: [Option<u64>; 2],
    count: [u32; 2],
    /// Plies from the start at the current point of each open line.
    plies: Vec<u32>,
}

/// Time-control classes (bullet, blitz, rapid, other) × the bucket of the
/// side's last residual (7) × early in the game or not.
const CLOCK_CONTEXTS: usize = 4 * 7 * 2;
/// Residuals (zigzag of the time used) below this are coded directly.
const CLOCK_DIRECT: u64 = 31;
const CLOCK_TREE_BITS: u32 = 5;

/// The adaptive probabilities of the clock stream of one block.
pub(crate) struct ClockCoder {
    trees: Vec<BitModel>,
    lengths: Vec<BitModel>,
}

impl ClockCoder {
    pub(crate) fn new() -> ClockCoder {
        ClockCoder {
            trees: vec![BitModel::default(); CLOCK_CONTEXTS << CLOCK_TREE_BITS],
            lengths: vec![BitModel::default(); 64],
        }
    }

    fn tree(&mut self, ctx: usize) -> &mut [BitModel] {
        &mut self.trees[ctx << CLOCK_TREE_BITS..(ctx + 1) << CLOCK_TREE_BITS]
    }

    fn encode(&mut self, enc: &mut BinaryEncoder, ctx: usize, z: u64) {
        let s = z.min(CLOCK_DIRECT);
        enc.encode_tree(self.tree(ctx), CLOCK_TREE_BITS, s as u32);
        if s == CLOCK_DIRECT {
            encode_gamma(enc, &mut self.lengths, z - CLOCK_DIRECT + 1);
        }
    }

    fn decode(&mut self, dec: &mut BinaryDecoder<'_>, ctx: usize) -> u64 {
        let s = u64::from(dec.decode_tree(self.tree(ctx), CLOCK_TREE_BITS));
        if s < CLOCK_DIRECT {
            return s;
        }
        // Damaged streams can give any length: saturate, never overflow.
        decode_gamma(dec, &mut self.lengths).saturating_add(CLOCK_DIRECT - 1)
    }
}

impl ClockModel {
    /// The model for a game whose `TimeControl` tag is `tc` (empty if none).
    fn new(tc: &[u8]) -> ClockModel {
        let (base, inc) = time_control(tc);
        let estimate = base + 40 * inc;
        let class = match estimate {
            1..=119 => 0,
            120..=479 => 1,
            480..=1499 => 2,
            _ => 3,
        };
        ClockModel {
            base,
            inc,
            class,
            last: [None, None],
            last_symbol: [None, None],
            count: [0, 0],
            plies: vec![0],
        }
    }

    fn on_move(&mut self) {
        if let Some(p) = self.plies.last_mut() {
            *p += 1;
        }
    }

    fn on_open(&mut self) {
        let p = self.plies.last().copied().unwrap_or(0);
        self.plies.push(p.saturating_sub(1));
    }

    fn on_close(&mut self) {
        if self.plies.len() > 1 {
            self.plies.pop();
        }
    }

    /// The side (0 or 1) whose clock a comment here shows.
    fn side(&self) -> usize {
        match self.plies.last().copied().unwrap_or(0) {
            0 => 1,
            p => ((p - 1) % 2) as usize,
        }
    }

    fn context(&self, side: usize) -> usize {
        let bucket = match self.last_symbol[side] {
            None => 0,
            Some(0) => 1,
            Some(1..=2) => 2,
            Some(3..=4) => 3,
            Some(5..=8) => 4,
            Some(9..=16) => 5,
            Some(_) => 6,
        };
        let early = usize::from(self.count[side] < 5);
        (self.class * 7 + bucket) * 2 + early
    }

    fn predict(&self, side: usize) -> i64 {
        self.last[side].map_or(self.base, |l| l + self.inc)
    }

    fn update(&mut self, side: usize, clock: i64, symbol: u64) {
        self.last[side] = Some(clock);
        self.last_symbol[side] = Some(symbol);
        self.count[side] = self.count[side].saturating_add(1);
    }

    fn encode(&mut self, coder: &mut ClockCoder, enc: &mut BinaryEncoder, clock: u32) {
        let side = self.side();
        let z = zigzag(self.predict(side) - i64::from(clock));
        coder.encode(enc, self.context(side), z);
        self.update(side, i64::from(clock), z);
    }

    fn decode(
        &mut self,
        coder: &mut ClockCoder,
        dec: &mut BinaryDecoder<'_>,
    ) -> Result<u32, String> {
        let side = self.side();
        let z = coder.decode(dec, self.context(side));
        let clock = self
            .predict(side)
            .checked_sub(unzigzag(z))
            .and_then(|c| u32::try_from(c).ok())
            .filter(|&c| c <= MAX_CLOCK)
            .ok_or("clock out of range")?;
        self.update(side, i64::from(clock), z);
        Ok(clock)
    }
}

/// An engine evaluation as lichess writes it: centipawns (`0.17`, `-1.0`)
/// or mate in n (`#3`, `#-2`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Eval {
    Centipawns(i64),
    Mate(i64),
}

fn format_eval(e: Eval, out: &mut Vec<u8>) {
    use std::io::Write as _;
    match e {
        Eval::Mate(n) => {
            let _ = write!(out, "#{n}");
        }
        Eval::Centipawns(cp) => {
            let sign = if cp < 0 { "-" } else { "" };
            let a = cp.unsigned_abs();
            let (int, frac) = (a / 100, a % 100);
            let _ = if frac % 10 == 0 {
                write!(out, "{sign}{int}.{}", frac / 10)
            } else {
                write!(out, "{sign}{int}.{frac:02}")
            };
        }
    }
}

/// The evaluation `text` stands for, if it formats back to the same bytes.
fn parse_eval(text: &[u8]) -> Option<Eval> {
    let s = std::str::from_utf8(text).ok()?;
    let e = if let Some(m) = s.strip_prefix('#') {
        Eval::Mate(
            m.parse()
                .ok()
                .filter(|n: &i64| n.unsigned_abs() < 1 << 20)?,
        )
    } else {
        let (neg, body) = match s.strip_prefix('-') {
            Some(b) => (true, b),
            None => (false, s),
        };
        let (int, frac) = body.split_once('.')?;
        let int: i64 = int.parse().ok().filter(|&i| i < 1 << 30)?;
        let frac_v: i64 = match frac.len() {
            1 => frac.parse::<i64>().ok()? * 10,
            2 => frac.parse().ok()?,
            _ => return None,
        };
        let cp = int * 100 + frac_v;
        Eval::Centipawns(if neg { -cp } else { cp })
    };
    let mut again = Vec::new();
    format_eval(e, &mut again);
    (again == text).then_some(e)
}

/// Codes evaluations adaptively: a kind (centipawns, mate, text), then the
/// change from the game's previous centipawn evaluation (its bit length by
/// the previous length, the bits below) or the mate distance.
pub(crate) struct EvalCoder {
    kind: Vec<BitModel>,
    lengths: Vec<BitModel>,
    first_mantissa: Vec<BitModel>,
    mate_sign: BitModel,
    mate_lengths: Vec<BitModel>,
}

const EVAL_LENGTH_CONTEXTS: usize = 8;

/// Per-game state of the evaluation stream.
#[derive(Default)]
struct EvalState {
    prev: i64,
    prev_length: u32,
}

impl EvalState {
    fn context(&self) -> usize {
        (self.prev_length as usize)
            .div_ceil(2)
            .min(EVAL_LENGTH_CONTEXTS - 1)
    }
}

/// Codes the bit lengths of the games' move streams: the bit length of
/// `length + 1` through an adaptive tree, then its two bits below the
/// leading one through adaptive trees of that bit length, then the other
/// bits as they are; the mainline and the variations apart.
pub(crate) struct LengthCoder {
    exponents: Vec<BitModel>,
    tops: Vec<BitModel>,
}

/// Bits below the leading one that [`LengthCoder`] models.
const LENGTH_TOP_BITS: u32 = 2;

impl LengthCoder {
    pub(crate) fn new() -> LengthCoder {
        LengthCoder {
            exponents: vec![BitModel::default(); 2 * 64],
            tops: vec![BitModel::default(); (2 * 64) << LENGTH_TOP_BITS],
        }
    }

    fn models(&mut self, variation: bool, n: u32) -> &mut [BitModel] {
        let i = (usize::from(variation) * 64 + n as usize) << LENGTH_TOP_BITS;
        &mut self.tops[i..i + (1 << LENGTH_TOP_BITS)]
    }

    fn encode(&mut self, enc: &mut BinaryEncoder, variation: bool, length: u64) {
        let v = length.saturating_add(1);
        let n = 63 - v.leading_zeros();
        let c = usize::from(variation) * 64;
        enc.encode_tree(&mut self.exponents[c..c + 64], 6, n);
        let k = n.min(LENGTH_TOP_BITS);
        let low = v & ((1u64 << n) - 1);
        enc.encode_tree(self.models(variation, n), k, (low >> (n - k)) as u32);
        encode_low(enc, low, n - k);
    }

    fn decode(&mut self, dec: &mut BinaryDecoder<'_>, variation: bool) -> u64 {
        let c = usize::from(variation) * 64;
        let n = dec.decode_tree(&mut self.exponents[c..c + 64], 6);
        let k = n.min(LENGTH_TOP_BITS);
        let top = u64::from(dec.decode_tree(self.models(variation, n), k));
        let r = n - k;
        ((1u64 << n) | (top << r) | decode_low(dec, r)) - 1
    }
}

/// The `move-lengths` column being read.
enum Lengths<'a> {
    /// Varints (formats 1 and 2).
    Varints(&'a [u8]),
    /// [`LengthCoder`]'s stream.
    Coded(BinaryDecoder<'a>, LengthCoder),
}

impl Lengths<'_> {
    fn next(&mut self, variation: bool) -> Result<usize, String> {
        let length = match self {
            Lengths::Varints(data) => get_varint(data)?,
            Lengths::Coded(dec, coder) => coder.decode(dec, variation),
        };
        usize::try_from(length).map_err(|_| "move length overflow".into())
    }

    fn overrun(&self) -> bool {
        match self {
            Lengths::Varints(data) => !data.is_empty(),
            Lengths::Coded(dec, _) => dec.overrun(),
        }
    }
}

/// Encodes the low `n` bits of `value` (n < 64) with probability 1/2 each.
fn encode_low(enc: &mut BinaryEncoder, value: u64, n: u32) {
    if n > 32 {
        enc.encode_direct((value >> 32) as u32, n - 32);
        enc.encode_direct(value as u32, 32);
    } else {
        enc.encode_direct(value as u32, n);
    }
}

/// Decodes what [`encode_low`] wrote.
fn decode_low(dec: &mut BinaryDecoder<'_>, n: u32) -> u64 {
    if n > 32 {
        (u64::from(dec.decode_direct(n - 32)) << 32) | u64::from(dec.decode_direct(32))
    } else {
        u64::from(dec.decode_direct(n))
    }
}

fn encode_gamma(enc: &mut BinaryEncoder, lengths: &mut [BitModel], v: u64) {
    // v ≥ 1: its bit length − 1 through the tree, then the bits below the
    // leading one.
    let n = 63 - v.leading_zeros();
    enc.encode_tree(lengths, 6, n);
    encode_low(enc, v, n);
}

fn decode_gamma(dec: &mut BinaryDecoder<'_>, lengths: &mut [BitModel]) -> u64 {
    let n = dec.decode_tree(lengths, 6);
    (1u64 << n) | decode_low(dec, n)
}

impl EvalCoder {
    pub(crate) fn new() -> EvalCoder {
        EvalCoder {
            kind: vec![BitModel::default(); 4],
            lengths: vec![BitModel::default(); EVAL_LENGTH_CONTEXTS * 64],
            first_mantissa: vec![BitModel::default(); 64],
            mate_sign: BitModel::default(),
            mate_lengths: vec![BitModel::default(); 64],
        }
    }

    /// Codes `eval` (`None`: kept as text elsewhere).
    fn encode(&mut self, enc: &mut BinaryEncoder, state: &mut EvalState, eval: Option<Eval>) {
        match eval {
            Some(Eval::Centipawns(cp)) => {
                enc.encode_tree(&mut self.kind, 2, 0);
                let z = zigzag(cp - state.prev);
                let v = z + 1;
                let n = 63 - v.leading_zeros();
                let ctx = state.context();
                enc.encode_tree(&mut self.lengths[ctx * 64..(ctx + 1) * 64], 6, n);
                if n > 0 {
                    enc.encode_bit(&mut self.first_mantissa[n as usize], v >> (n - 1) & 1 == 1);
                    encode_low(enc, v, n - 1);
                }
                state.prev = cp;
                state.prev_length = n;
            }
            Some(Eval::Mate(m)) => {
                enc.encode_tree(&mut self.kind, 2, 1);
                enc.encode_bit(&mut self.mate_sign, m < 0);
                encode_gamma(enc, &mut self.mate_lengths, m.unsigned_abs() + 1);
            }
            None => enc.encode_tree(&mut self.kind, 2, 2),
        }
    }

    fn decode(
        &mut self,
        dec: &mut BinaryDecoder<'_>,
        state: &mut EvalState,
    ) -> Result<Option<Eval>, String> {
        match dec.decode_tree(&mut self.kind, 2) {
            0 => {
                let ctx = state.context();
                let n = dec.decode_tree(&mut self.lengths[ctx * 64..(ctx + 1) * 64], 6);
                let v = if n == 0 {
                    1
                } else {
                    let top = u64::from(dec.decode_bit(&mut self.first_mantissa[n as usize]));
                    let rest = n - 1;
                    (1u64 << n) | (top << rest) | decode_low(dec, rest)
                };
                let cp = state
                    .prev
                    .checked_add(unzigzag(v - 1))
                    .filter(|c| c.unsigned_abs() < 1 << 40)
                    .ok_or("evaluation out of range")?;
                state.prev = cp;
                state.prev_length = n;
                Ok(Some(Eval::Centipawns(cp)))
            }
            1 => {
                let neg = dec.decode_bit(&mut self.mate_sign);
                let m = decode_gamma(dec, &mut self.mate_lengths) - 1;
                let m = i64::try_from(m).map_err(|_| "mate distance out of range")?;
                Ok(Some(Eval::Mate(if neg { -m } else { m })))
            }
            2 => Ok(None),
            _ => Err("bad evaluation kind".into()),
        }
    }
}

/// The largest clock reading kept as a number (1000 hours).
const MAX_CLOCK: u32 = 1000 * 3600;

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

struct Columns {
    data: [Vec<u8>; N_COLUMNS],
    moves: BitWriter,
    length_coder: LengthCoder,
    lengths: BinaryEncoder,
    clock_coder: ClockCoder,
    clocks: BinaryEncoder,
    eval_coder: EvalCoder,
    evals: BinaryEncoder,
    tag_names: Vec<Vec<u8>>,
    /// Values of each tag name, in game order, each ended by a nul, as
    /// `tag_state` marks them.
    tag_values: Vec<Vec<u8>>,
    tag_state: TagState,
}

impl Columns {
    fn new() -> Columns {
        Columns {
            data: Default::default(),
            moves: BitWriter::new(),
            length_coder: LengthCoder::new(),
            lengths: BinaryEncoder::new(),
            clock_coder: ClockCoder::new(),
            clocks: BinaryEncoder::new(),
            eval_coder: EvalCoder::new(),
            evals: BinaryEncoder::new(),
            tag_names: Vec::new(),
            tag_values: Vec::new(),
            tag_state: TagState::new(Marks::Players),
        }
    }

    fn tag_id(&mut self, name: &[u8]) -> usize {
        if let Some(i) = self.tag_names.iter().position(|n| n == name) {
            return i;
        }
        self.tag_names.push(name.to_vec());
        self.tag_values.push(Vec::new());
        self.tag_state.add_name(name);
        self.tag_names.len() - 1
    }

    fn add_verbatim(&mut self, bytes: &[u8]) {
        self.data[KIND].push(1);
        put_varint(&mut self.data[VERBATIM], bytes.len() as u64);
        self.data[VERBATIM].extend_from_slice(bytes);
    }

    /// Adds a game; on an error (from the codec) nothing was added.
    fn add_game(&mut self, game: &ParsedGame, codec: &dyn GameCodec) -> Result<(), Unparsed> {
        // Moves first, as they alone can fail. Segments: the mainline, then
        // each variation in the order its `(` appears, each from the
        // position where it starts.
        let mut segments: Vec<(Chess, Vec<Move>)> =
            vec![(game.start.clone(), Vec::with_capacity(game.events.len()))];
        let mut open: Vec<usize> = vec![0];
        let mut lines = Lines::new(&game.start);
        // Positions are followed only to start variations.
        let variations = game.events.iter().any(|e| matches!(e, Event::Open));
        for event in &game.events {
            match event {
                Event::Move(m) => {
                    segments[open[open.len() - 1]].1.push(*m);
                    if variations {
                        lines.play(*m);
                    }
                }
                Event::Open => {
                    let start = lines.open();
                    segments.push((start, Vec::new()));
                    open.push(segments.len() - 1);
                }
                Event::Close => {
                    lines.close();
                    open.pop();
                }
                _ => {}
            }
        }
        // A game of moves alone: its stream says how many.
        let line =
            !game.events.is_empty() && game.events.iter().all(|e| matches!(e, Event::Move(_)));
        let mut encoded = Vec::with_capacity(segments.len());
        for (start, moves) in &segments {
            let bits = if line {
                codec.encode(start, moves)
            } else {
                codec.encode_counted(start, moves)
            };
            encoded.push(bits.map_err(|e| Unparsed {
                category: "codec",
                detail: e.to_string(),
            })?);
        }
        for (i, bits) in encoded.iter().enumerate() {
            self.length_coder
                .encode(&mut self.lengths, i > 0, bits.len() as u64);
            self.moves.write_bits(bits);
        }

        let mut events = Vec::with_capacity(game.events.len() + 2);
        let mut clocks = ClockModel::new(tag(&game.tags, b"TimeControl").unwrap_or(b""));
        let mut eval_state = EvalState::default();
        if line {
            events.push(E_LINE);
        }
        for event in game.events.iter().filter(|_| !line) {
            match event {
                Event::Move(_) => {
                    clocks.on_move();
                    events.push(E_MOVE);
                }
                Event::Nag(n) => {
                    events.push(E_NAG);
                    events.push(*n);
                }
                Event::Comment(c) => match parse_annotation(c) {
                    Some(a) => {
                        if let Some(e) = a.eval {
                            let value = parse_eval(e);
                            if value.is_none() {
                                self.data[EVAL_TEXT].extend_from_slice(e);
                                self.data[EVAL_TEXT].push(b']');
                            }
                            self.eval_coder
                                .encode(&mut self.evals, &mut eval_state, value);
                        }
                        if let Some(clock) = a.clock {
                            clocks.encode(&mut self.clock_coder, &mut self.clocks, clock);
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
                    clocks.on_open();
                    events.push(E_OPEN);
                }
                Event::Close => {
                    clocks.on_close();
                    events.push(E_CLOSE);
                }
            }
        }
        let result_tag = game
            .tags
            .iter()
            .find(|(k, _)| k == b"Result")
            .map(|(_, v)| v.as_slice());
        if game.result_on_new_line && game.outcome.is_some() {
            events.push(E_RESULT_LINE);
        }
        match game.outcome {
            None => events.push(E_END),
            Some(o) if result_tag == Some(text::OUTCOMES[usize::from(o)].as_bytes()) => {
                events.push(E_RESULT_AS_TAG);
            }
            Some(o) => events.push(E_OUTCOME + o),
        }
        self.tag_state.start_game();
        for (name, value) in &game.tags {
            let id = self.tag_id(name);
            put_varint(&mut self.data[TAG_SEQ], id as u64 + 1);
            let column = &mut self.tag_values[id];
            self.tag_state.encode(id, value, column);
            column.push(0);
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
    let mut cols = Columns::new();
    let mut report = BlockReport {
        games: chunks.len() as u64,
        ..BlockReport::default()
    };
    let mut text_crc = crc32fast::Hasher::new();
    let mut canonical = Vec::new();
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
        // a tag value) is stored verbatim too.
        let result = parsed.and_then(|game| {
            if game.tags.iter().any(|(_, v)| v.contains(&0)) {
                return Err(Unparsed {
                    category: "syntax",
                    detail: "nul byte in a tag value".into(),
                });
            }
            cols.add_game(&game, codec)?;
            canonical.clear();
            text::write(&game, &mut canonical);
            if is_crlf(&chunk.bytes) {
                *cols.data[KIND].last_mut().expect("a game was added") = KIND_CRLF;
                canonical = to_crlf(&canonical);
            }
            text_crc.update(&canonical);
            Ok(())
        });
        if let Err(u) = result {
            report.verbatim.push((chunk.number, u.category, u.detail));
            cols.add_verbatim(&chunk.bytes);
            text_crc.update(&chunk.bytes);
        }
    }
    let mut names = Vec::new();
    for n in &cols.tag_names {
        names.extend_from_slice(n);
        names.push(b'\n');
    }
    cols.data[TAG_NAMES] = names;
    cols.data[TAG_VALUES] = cols.tag_values.concat();
    cols.data[MOVES] = std::mem::take(&mut cols.moves).finish().as_bytes().to_vec();
    cols.data[MOVE_LENGTHS] = std::mem::take(&mut cols.lengths).finish();
    cols.data[CLOCKS] = std::mem::take(&mut cols.clocks).finish();
    cols.data[EVALS] = std::mem::take(&mut cols.evals).finish();

    let mut payload = Vec::new();
    put_varint(&mut payload, chunks.len() as u64);
    for (i, data) in cols.data.iter().enumerate() {
        report.raw[i] = data.len() as u64;
        let compressed = if matches!(i, MOVES | MOVE_LENGTHS | CLOCKS | EVALS) || data.is_empty() {
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
        payload.push(match i {
            TAG_VALUES => method | METHOD_MARKS | METHOD_PLAYER_MARKS,
            MOVE_LENGTHS => method | METHOD_CODED_LENGTHS,
            _ => method,
        });
        put_varint(&mut payload, data.len() as u64);
        put_varint(&mut payload, stored.len() as u64);
        payload.extend_from_slice(stored);
        report.stored[i] = stored.len() as u64;
    }
    let lead = chunks.first().map(|c| c.lead.clone()).unwrap_or_default();
    let tail = chunks.last().map_or(&[][..], |c| {
        let end = c.bytes.len() - trailing_whitespace(&c.bytes);
        &c.bytes[end..]
    });
    EncodedBlock {
        payload,
        report,
        text_crc: text_crc.finalize(),
        lead,
        tail: tail.to_vec(),
    }
}

/// `kind` of a parsed game whose lines all end with CR LF (format 4): its
/// canonical text is written with CR LF line ends ([`to_crlf`]).
const KIND_CRLF: u8 = 2;

/// Whether every line of `bytes` ends with CR LF (and one does).
pub(crate) fn is_crlf(bytes: &[u8]) -> bool {
    let mut any = false;
    for (i, &b) in bytes.iter().enumerate() {
        if b == b'\n' {
            if i == 0 || bytes[i - 1] != b'\r' {
                return false;
            }
            any = true;
        }
    }
    any
}

/// `text` with a CR before every LF that lacks one (a comment's own CR LF
/// stays as it is).
pub(crate) fn to_crlf(text: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len() + text.len() / 16);
    for (i, &b) in text.iter().enumerate() {
        if b == b'\n' && (i == 0 || text[i - 1] != b'\r') {
            out.push(b'\r');
        }
        out.push(b);
    }
    out
}

/// The length of the run of ASCII whitespace that ends `bytes`.
pub(crate) fn trailing_whitespace(bytes: &[u8]) -> usize {
    bytes
        .iter()
        .rev()
        .take_while(|b| b.is_ascii_whitespace())
        .count()
}

/// The columns of a stored block, decompressed.
struct Stored {
    games: usize,
    data: Vec<Vec<u8>>,
    /// The marks of the `tag-values` column.
    tag_marks: Marks,
    /// Whether the `move-lengths` column is [`LengthCoder`]'s stream.
    coded_lengths: bool,
}

fn read_columns(mut payload: &[u8]) -> Result<Stored, String> {
    let games = get_varint(&mut payload)?;
    if games > 1 << 24 {
        return Err(format!("implausible game count {games}"));
    }
    let mut data = Vec::with_capacity(COLUMNS.len());
    let mut tag_marks = Marks::None;
    let mut coded_lengths = false;
    for (i, name) in COLUMNS.iter().enumerate() {
        let (&method, rest) = payload.split_first().ok_or("missing columns")?;
        payload = rest;
        let method = if i == TAG_VALUES {
            tag_marks = match method & (METHOD_MARKS | METHOD_PLAYER_MARKS) {
                0 => Marks::None,
                METHOD_MARKS => Marks::Repeat,
                METHOD_PLAYER_MARKS => {
                    return Err(format!("column {name}: unknown method {method}"));
                }
                _ => Marks::Players,
            };
            method & !(METHOD_MARKS | METHOD_PLAYER_MARKS)
        } else if i == MOVE_LENGTHS {
            coded_lengths = method & METHOD_CODED_LENGTHS != 0;
            method & !METHOD_CODED_LENGTHS
        } else {
            method
        };
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
        tag_marks,
        coded_lengths,
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
    decode_block_until(codec, payload, want, sink, usize::MAX)
}

/// [`decode_block`] that stops after game `last` (0-based): the games after
/// it are neither decoded nor checked (`get` of one game decodes, on
/// average, half a block).
pub(crate) fn decode_block_until(
    codec: &dyn GameCodec,
    payload: &[u8],
    want: &dyn Fn(usize) -> Want,
    sink: &mut dyn FnMut(usize, Decoded),
    last: usize,
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
    let mut tag_state = TagState::new(stored.tag_marks);
    for name in &names {
        tag_state.add_name(name);
    }
    let time_control = names.iter().position(|&n| n == b"TimeControl");
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
            let mut v: Vec<&[u8]> = Vec::with_capacity(count);
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
    let mut move_lengths = if stored.coded_lengths {
        Lengths::Coded(BinaryDecoder::new(&d[MOVE_LENGTHS]), LengthCoder::new())
    } else {
        Lengths::Varints(&d[MOVE_LENGTHS])
    };
    let mut comments = d[COMMENTS].as_slice();
    let mut clocks = BinaryDecoder::new(&d[CLOCKS]);
    let mut clock_coder = ClockCoder::new();
    let mut evals = BinaryDecoder::new(&d[EVALS]);
    let mut eval_coder = EvalCoder::new();
    let mut eval_text = d[EVAL_TEXT].as_slice();
    let mut eval_buf = Vec::new();

    for g in 0..stored.games {
        if g > last {
            return Ok(stored.games);
        }
        let w = want(g);
        let game_kind = *kind.next().ok_or("kind column ends early")?;
        if game_kind > KIND_CRLF {
            return Err(format!("unknown game kind {game_kind}"));
        }
        if game_kind == 1 {
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
        // Tags (for a skipped game only its time control, which the clock
        // stream needs).
        let mut tags = Vec::new();
        let mut tc = Vec::new();
        tag_state.start_game();
        loop {
            let id = get_varint(&mut seq)?;
            if id == 0 {
                break;
            }
            let i = id as usize - 1;
            let stored_value = values[i].next().ok_or("tag values end early")?;
            let value = tag_state.decode(i, stored_value)?;
            if Some(i) == time_control {
                tc.clear();
                tc.extend_from_slice(value);
            }
            if w != Want::Skip {
                tags.push((names[i].to_vec(), value.to_vec()));
            }
        }
        // Events of this game.
        let end = events
            .iter()
            .enumerate()
            .scan(false, |after_nag, (i, &b)| {
                let is_end = !*after_nag && ends_game(b);
                *after_nag = !*after_nag && b == E_NAG;
                Some((i, is_end))
            })
            .find(|&(_, e)| e)
            .map(|(i, _)| i)
            .ok_or("events column ends early")?;
        let game_events = &events[..=end];
        events = &events[end + 1..];
        let mut clock_model = ClockModel::new(&tc);
        let mut eval_state = EvalState::default();
        if w == Want::Tags {
            sink(g, Decoded::Tags(Ok(std::mem::take(&mut tags))));
        }
        if w != Want::Text {
            // Skip this game's items in the other columns (clocks are
            // decoded: the stream adapts as it goes).
            let mut segments = 1;
            let mut i = 0;
            while i < game_events.len() {
                match game_events[i] {
                    E_NAG => i += 1,
                    E_MOVE => clock_model.on_move(),
                    E_OPEN => {
                        segments += 1;
                        clock_model.on_open();
                    }
                    E_CLOSE => clock_model.on_close(),
                    E_COMMENT => {
                        take_until(&mut comments, b'}', "comment")?;
                    }
                    E_CLK => {
                        clock_model.decode(&mut clock_coder, &mut clocks)?;
                    }
                    E_EVAL | E_EVAL_CLK => {
                        read_eval(
                            &mut eval_coder,
                            &mut evals,
                            &mut eval_state,
                            &mut eval_text,
                            &mut eval_buf,
                        )?;
                        if game_events[i] == E_EVAL_CLK {
                            clock_model.decode(&mut clock_coder, &mut clocks)?;
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
            for s in 0..segments {
                move_pos = move_pos
                    .checked_add(move_lengths.next(s > 0)?)
                    .ok_or("move length overflow")?;
            }
            continue;
        }
        let start = text::start_of(&tags).map_err(|u| u.detail)?;
        let plies = segment_plies(game_events)?;
        let line = game_events.first() == Some(&E_LINE);
        let mut next_segment = 0;
        let mut read_segment = |start: &Chess| -> Result<std::vec::IntoIter<Move>, String> {
            let n = *plies
                .get(next_segment)
                .ok_or("more lines than the events say")?;
            let to_end = line && next_segment == 0;
            let len = move_lengths.next(next_segment > 0)?;
            next_segment += 1;
            let end = move_pos.checked_add(len).ok_or("move length overflow")?;
            if end > moves.len() {
                return Err("moves column ends early".into());
            }
            let bits = slice_bits(&moves, move_pos, len);
            move_pos = end;
            let decoded = if to_end {
                codec.decode(start, &bits)
            } else {
                codec.decode_counted(start, &bits, n)
            }
            .map_err(|e| e.to_string())?;
            Ok(decoded.into_iter())
        };
        let mut segs = vec![read_segment(&start)?];
        // Positions are followed only where a variation needs its start.
        let variations = game_events.contains(&E_OPEN);
        let mut lines = Lines::new(&start);
        let mut out_events = Vec::with_capacity(game_events.len());
        let mut outcome = None;
        let mut result_on_new_line = false;
        let mut i = 0;
        let mut annotation = Vec::new();
        while i < game_events.len() {
            let code = game_events[i];
            i += 1;
            match code {
                E_LINE if i == 1 => {
                    for m in segs[0].by_ref() {
                        if variations {
                            lines.play(m);
                        }
                        clock_model.on_move();
                        out_events.push(Event::Move(m));
                    }
                }
                E_MOVE => {
                    let m = segs
                        .last_mut()
                        .and_then(Iterator::next)
                        .ok_or("fewer moves than the events say")?;
                    if variations {
                        lines.play(m);
                    }
                    clock_model.on_move();
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
                        read_eval(
                            &mut eval_coder,
                            &mut evals,
                            &mut eval_state,
                            &mut eval_text,
                            &mut eval_buf,
                        )?;
                        Some(eval_buf.as_slice())
                    };
                    let clock = if code == E_EVAL {
                        None
                    } else {
                        Some(clock_model.decode(&mut clock_coder, &mut clocks)?)
                    };
                    annotation.clear();
                    format_annotation(eval, clock, &mut annotation);
                    out_events.push(Event::Comment(annotation.clone()));
                }
                E_OPEN => {
                    let start = lines.open();
                    segs.push(read_segment(&start)?);
                    clock_model.on_open();
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
                    clock_model.on_close();
                    out_events.push(Event::Close);
                }
                E_END => {}
                E_RESULT_LINE if i < game_events.len() && game_events[i] != E_END => {
                    result_on_new_line = true;
                }
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
            result_on_new_line,
        };
        let mut out = Vec::new();
        text::write(&game, &mut out);
        if game_kind == KIND_CRLF {
            out = to_crlf(&out);
        }
        sink(g, Decoded::Text(out));
    }
    if clocks.overrun() || evals.overrun() {
        return Err("clock or evaluation stream ends early".into());
    }
    if move_lengths.overrun() {
        return Err("move-lengths column does not match the games".into());
    }
    if kind.next().is_some() || !verbatim.is_empty() || !seq.is_empty() || !events.is_empty() {
        return Err("columns hold more than the game count".into());
    }
    Ok(stored.games)
}

/// The number of moves of each line of a game (the mainline, then each
/// variation in the order its `(` appears), from its events.
fn segment_plies(events: &[u8]) -> Result<Vec<usize>, String> {
    let mut plies = vec![0usize];
    let mut open = vec![0usize];
    let mut i = 0;
    while i < events.len() {
        match events[i] {
            E_NAG => i += 1,
            E_MOVE => plies[*open.last().ok_or("unmatched variation end")?] += 1,
            E_OPEN => {
                plies.push(0);
                open.push(plies.len() - 1);
            }
            E_CLOSE => {
                if open.len() < 2 {
                    return Err("unmatched variation end".into());
                }
                open.pop();
            }
            _ => {}
        }
        i += 1;
    }
    Ok(plies)
}

/// Decodes the next evaluation's text into `out`.
fn read_eval(
    coder: &mut EvalCoder,
    dec: &mut BinaryDecoder<'_>,
    state: &mut EvalState,
    text: &mut &[u8],
    out: &mut Vec<u8>,
) -> Result<(), String> {
    out.clear();
    match coder.decode(dec, state)? {
        Some(e) => format_eval(e, out),
        None => out.extend_from_slice(take_until(text, b']', "evaluation text")?),
    }
    Ok(())
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
    fn evaluations_round_trip_exactly() {
        for (t, e) in [
            ("0.0", Some(Eval::Centipawns(0))),
            ("0.2", Some(Eval::Centipawns(20))),
            ("-0.13", Some(Eval::Centipawns(-13))),
            ("12.05", Some(Eval::Centipawns(1205))),
            ("-1.0", Some(Eval::Centipawns(-100))),
            ("#-3", Some(Eval::Mate(-3))),
            ("#0", Some(Eval::Mate(0))),
            ("0.20", None),
            ("-0.0", None),
            ("1", None),
            ("+0.5", None),
            ("#+3", None),
        ] {
            assert_eq!(parse_eval(t.as_bytes()), e, "{t}");
        }
        let evals = [0, 35, -400, 12000, -5, 7].map(Eval::Centipawns);
        let mut coder = EvalCoder::new();
        let mut enc = BinaryEncoder::new();
        let mut state = EvalState::default();
        for e in evals.iter().chain(&[Eval::Mate(-7), Eval::Mate(2)]) {
            coder.encode(&mut enc, &mut state, Some(*e));
        }
        coder.encode(&mut enc, &mut state, None);
        let bytes = enc.finish();
        let mut coder = EvalCoder::new();
        let mut dec = BinaryDecoder::new(&bytes);
        let mut state = EvalState::default();
        for e in evals.iter().chain(&[Eval::Mate(-7), Eval::Mate(2)]) {
            assert_eq!(coder.decode(&mut dec, &mut state).unwrap(), Some(*e));
        }
        assert_eq!(coder.decode(&mut dec, &mut state).unwrap(), None);
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
