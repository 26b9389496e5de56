//! Engine comments: a comment such as TCEC's
//! `{d=24, sd=49, mt=67797, tl=3542203, s=30518653, n=2069073149, pv=d4
//! exd4 Nxd4, tb=0, h=45.8, wv=0.38, R50=50, mb=+0+0+0+0+0,}` or
//! cutechess-cli's `{+0.35/20 1.2s}` is split into a *template*, its text
//! with a placeholder byte where each number and each line of moves was,
//! and the *fields* that fill the placeholders.
//!
//! * A template is stored as text (the `comments` column), unless it equals
//!   the template of the same side's last engine comment in the game
//!   (event `E_ENGINE_SAME`): most engines write one template all game.
//! * The fields of a game's engine comments are one adaptive binary range
//!   stream of their own (the `engine-fields` column), coded with the
//!   game's positions and moves known, so they decode with the game's
//!   moves, on any thread:
//!   - a number as its step from a prediction: by default the same side's
//!     last value in the same place (the same template bytes before it);
//!     `tl=` (time left) from the side's last `tl` less this comment's
//!     `mt` (move time), stepping from the last such step (the increment);
//!     `n=` (nodes) from `s × mt / 1000` (speed × time); `R50=` from the
//!     position's fifty-move counter; `mb=` (material balance) from the
//!     position's material;
//!   - a line of moves in SAN (a principal variation, a predicted reply)
//!     as moves: each either the game's own next move, the move that an
//!     earlier line of either side predicted here, or its rank among the
//!     legal moves by the `fast` model's scores.
//!
//! Whatever a placeholder does not stand for stays text, so the comment
//! comes back byte for byte; the writer renders every field it takes and
//! keeps a number or a move only where its text comes back.

use shakmaty::{Chess, Color, EnPassantMode, Move, Position, Role, san::San, zobrist::Zobrist64};

use crate::coder::{BinaryDecoder, BinaryEncoder, BitModel};
use crate::hash::ByHash;
use crate::pgn::strict::push_digits;

/// Placeholder of a number in a template.
pub(super) const NUMBER: u8 = 1;
/// Placeholder of a line of SAN moves from the position the comment is in
/// (`LINE + 0`), before the move it follows (`LINE + 1`: TCEC's `pv=`
/// starts with the move played) or before the move before it (`LINE + 2`:
/// TCEC's `pd=`, the reply its engine expected to the opponent's last
/// move).
pub(super) const LINE: u8 = 2;
/// Placeholder of a line of moves in UCI (`pv=c2c4 d8e7`, issue 69), from
/// the same positions as [`LINE`]'s (`UCI_LINE + 0` to `+ 2`).
pub(super) const UCI_LINE: u8 = LINE + 3;
/// The last placeholder byte.
const LAST_PLACEHOLDER: u8 = UCI_LINE + 2;

/// The number of moves back from the comment's position where the line of
/// placeholder `b` starts, and whether it is written in UCI.
fn line_kind(b: u8) -> (usize, bool) {
    if b >= UCI_LINE {
        (usize::from(b - UCI_LINE), true)
    } else {
        (usize::from(b - LINE), false)
    }
}

/// The most digits a number field holds (below 2^63).
const MAX_DIGITS: usize = 18;
/// The most digits after a number's point.
const MAX_DECIMALS: usize = 9;
/// The most moves of one line.
const MAX_LINE: usize = 1024;

/// A number as written: its sign, digits, point and zero padding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Number {
    /// The value times `10^decimals`, negative where written with `-`
    /// (a `-0` is 0 with `minus`).
    value: i64,
    /// Written with a `+` (value ≥ 0) or a `-`.
    plus: bool,
    minus: bool,
    /// Digits after the point (0: no point).
    decimals: u8,
    /// Digits before the point where zero-padded (`05`), else 0.
    width: u8,
}

impl Number {
    fn write(&self, out: &mut Vec<u8>) {
        if self.minus {
            out.push(b'-');
        } else if self.plus {
            out.push(b'+');
        }
        let m = self.value.unsigned_abs();
        let scale = 10u64.pow(u32::from(self.decimals));
        let (int, frac) = (m / scale, m % scale);
        push_digits(out, int, usize::from(self.width).min(24));
        if self.decimals > 0 {
            out.push(b'.');
            push_digits(out, frac, usize::from(self.decimals).min(24));
        }
    }
}

/// A field of an engine comment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Field {
    Number(Number),
    Line(Vec<Move>),
}

/// Where a comment stands in its game, as the writer and the reader both
/// follow it ([`Walk`]).
pub(super) struct At<'a> {
    /// The side that played the last move (0 white, 1 black).
    pub side: usize,
    /// The positions before the last move and before the one before it
    /// (none before the line's first).
    pub behind: [Option<&'a Chess>; 2],
    /// The position the comment is in.
    pub after: &'a Chess,
    /// Its ply in the mainline (none in a variation).
    pub ply: Option<usize>,
}

/// Splits `comment` into a template and its fields; `None` where it holds
/// a placeholder byte, or where its fields are less than a quarter of it,
/// its text counted in characters (prose).
pub(super) fn split(
    comment: &[u8],
    at: &At<'_>,
    coder: &FieldCoder,
) -> Option<(Vec<u8>, Vec<Field>)> {
    if comment.iter().any(|&b| b <= LAST_PLACEHOLDER) {
        return None;
    }
    let mut template = Vec::with_capacity(comment.len());
    let mut fields = Vec::new();
    let mut i = 0;
    while i < comment.len() {
        let prev = if i == 0 { None } else { Some(comment[i - 1]) };
        // A line of moves at a token's start.
        if prev.is_none_or(|p| b" =({[\"".contains(&p))
            && let Some((kind, moves, end)) = line_at(comment, i, at, coder)
        {
            template.push(kind);
            fields.push(Field::Line(moves));
            i = end;
            continue;
        }
        if let Some((n, end)) = number_at(comment, i) {
            template.push(NUMBER);
            fields.push(Field::Number(n));
            i = end;
            continue;
        }
        // A run of digits that is no number stays text as a whole.
        if comment[i].is_ascii_digit() {
            while i < comment.len() && comment[i].is_ascii_digit() {
                template.push(comment[i]);
                i += 1;
            }
            continue;
        }
        template.push(comment[i]);
        i += 1;
    }
    // Prose with a few numbers or moves in it costs less as text: fields
    // are kept where their bytes are at least a quarter of the comment,
    // its text counted in characters, so that labels in another script
    // than Latin (two or three UTF-8 bytes a letter) count as much as
    // Latin ones (issue 69; TCEC's and cutechess-cli's fields are more
    // than half).
    let literal = template.iter().filter(|&&b| b > LAST_PLACEHOLDER).count();
    let covered = comment.len() - literal;
    let letters = template
        .iter()
        .filter(|&&b| b > LAST_PLACEHOLDER && !(0x80..0xc0).contains(&b))
        .count();
    (!fields.is_empty() && covered * 4 >= covered + letters).then_some((template, fields))
}

/// The prediction of the number of `key`'s `index`-th place, and whether
/// its step is coded from the last step (fields that follow the
/// prediction up to a constant), from the same side's last number there
/// (`last`), the comment's numbers before it (`named`) and the position.
fn prediction(
    (key, index): (&[u8], usize),
    last: Option<Last>,
    named: &[(&[u8], i64)],
    at: &At<'_>,
) -> (i64, bool) {
    let find = |k: &[u8]| named.iter().find(|(n, _)| *n == k).map(|&(_, v)| v);
    match (key, index) {
        (b"tl=", 0) => match (last, find(b"mt=")) {
            (Some(l), Some(mt)) => (l.value.wrapping_sub(mt), true),
            _ => (last.map_or(0, |l| l.value), false),
        },
        (b"n=", 0) => match (find(b"s="), find(b"mt=")) {
            (Some(s), Some(mt)) => ((i128::from(s) * i128::from(mt) / 1000) as i64, false),
            _ => (last.map_or(0, |l| l.value), false),
        },
        // TCEC's moves left to the fifty-move rule: 50 less half the
        // plies since the last capture or pawn move, rounded up.
        (b"R50=", 0) => (50 - i64::from(at.after.halfmoves().div_ceil(2)), true),
        (b"mb=", i) if i < 5 => {
            let role = [
                Role::Pawn,
                Role::Knight,
                Role::Bishop,
                Role::Rook,
                Role::Queen,
            ][i];
            (balance(at.after, role), true)
        }
        _ => (last.map_or(0, |l| l.value), false),
    }
}

/// The number that starts at `i`, and where it ends, where its text comes
/// back from it.
fn number_at(c: &[u8], i: usize) -> Option<(Number, usize)> {
    let sign = matches!(c[i], b'+' | b'-');
    let prev = if i == 0 { None } else { Some(c[i - 1]) };
    // Not inside a word or another number (`R50`, `1.2.3`), but `+0+0`.
    if let Some(p) = prev
        && (p.is_ascii_alphabetic() || p == b'_' || p == b'.' || (p.is_ascii_digit() && !sign))
    {
        return None;
    }
    let start = i + usize::from(sign);
    let digits = c[start..].iter().take_while(|b| b.is_ascii_digit()).count();
    if digits == 0 || digits > MAX_DIGITS {
        return None;
    }
    let mut end = start + digits;
    let mut decimals = 0;
    if c.get(end) == Some(&b'.') {
        let d = c[end + 1..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count();
        if d > 0 {
            if d > MAX_DECIMALS || digits + d > MAX_DIGITS {
                return None;
            }
            decimals = d;
            end += 1 + d;
        }
    }
    let mut m: i64 = 0;
    for &b in c[start..end].iter().filter(|b| b.is_ascii_digit()) {
        m = m * 10 + i64::from(b - b'0');
    }
    let minus = c[i] == b'-';
    let width = if digits > 1 && c[start] == b'0' {
        digits as u8
    } else {
        0
    };
    let n = Number {
        value: if minus { -m } else { m },
        plus: c[i] == b'+',
        minus,
        decimals: decimals as u8,
        width,
    };
    let mut back = Vec::with_capacity(end - i);
    n.write(&mut back);
    (back == c[i..end]).then_some((n, end))
}

/// Whether `text` ends with a token shaped like a move in UCI (`e2e4`,
/// `e7e8q`).
fn after_uci_token(text: &[u8]) -> bool {
    let start = text
        .iter()
        .rposition(|&b| ends_token(b))
        .map_or(0, |p| p + 1);
    let t = &text[start..];
    t != b"0000" && crate::pgn::strict::uci_shaped(t)
}

/// Whether `b` ends a token of a line of moves.
fn ends_token(b: u8) -> bool {
    matches!(
        b,
        b' ' | b',' | b')' | b'}' | b']' | b';' | b'\n' | b'\r' | b'\t'
    )
}

/// The move whose SAN (with its check mark) is `token` in `pos`.
fn san_move(pos: &Chess, token: &[u8]) -> Option<Move> {
    if !(2..=7).contains(&token.len()) || !b"KQRBNOabcdefgh".contains(&token[0]) {
        return None;
    }
    let m = San::from_ascii(token).ok()?.to_move(pos).ok()?;
    let mut after = pos.clone();
    let mut text = Vec::with_capacity(8);
    write_san(&mut after, m, &mut text);
    (text == token).then_some(m)
}

/// The move whose UCI is `token` in `pos` (`e2e4`, `e7e8q`; castling as
/// the king's two squares).
fn uci_move(pos: &Chess, token: &[u8]) -> Option<Move> {
    if !(4..=5).contains(&token.len()) || !token[0].is_ascii_lowercase() {
        return None;
    }
    let m = shakmaty::uci::UciMove::from_ascii(token)
        .ok()?
        .to_move(pos)
        .ok()?;
    let mut text = Vec::with_capacity(5);
    write_uci(m, &mut text);
    (text == token).then_some(m)
}

/// Writes `m` in UCI.
fn write_uci(m: Move, out: &mut Vec<u8>) {
    use std::io::Write as _;
    let _ = write!(out, "{}", m.to_uci(shakmaty::CastlingMode::Standard));
}

/// The move that `token` spells in `pos`, in UCI where `uci`, else in SAN.
fn spelled_move(pos: &Chess, token: &[u8], uci: bool) -> Option<Move> {
    if uci {
        uci_move(pos, token)
    } else {
        san_move(pos, token)
    }
}

/// Writes `m` in SAN with its check or mate mark, and plays it
/// ([`crate::pgn::strict::san_and_play`]).
fn write_san(pos: &mut Chess, m: Move, out: &mut Vec<u8>) {
    crate::pgn::strict::san_and_play(pos, m).append_ascii_to(out);
}

/// The position `back` moves before the comment's.
fn behind<'a>(at: &At<'a>, back: usize) -> Option<&'a Chess> {
    match back {
        0 => Some(at.after),
        b => at.behind[b - 1],
    }
}

/// The line of moves in SAN, or in UCI, that starts at `i`: its
/// placeholder, its moves and where it ends. Its first move may be legal
/// in several of the positions: the first where the coder guesses it, else
/// the first. The first move's spelling is the line's; a line in UCI
/// starts after `=` or `"`, or after white space that follows a move in
/// UCI (a line wrapped): `pv=c2c4 d7d5`, but `an illegal move: c7f7` stays
/// text.
fn line_at(c: &[u8], i: usize, at: &At<'_>, coder: &FieldCoder) -> Option<(u8, Vec<Move>, usize)> {
    let before = c[..i].trim_ascii_end();
    let uci_here = matches!(before.last(), Some(b'=' | b'"')) && before.len() == i
        || before.len() < i && after_uci_token(before);
    let token_end = |s: usize| s + c[s..].iter().take_while(|&&b| !ends_token(b)).count();
    let end = token_end(i);
    let mut found = None;
    for back in [1, 0, 2] {
        let Some(pos) = behind(at, back) else {
            continue;
        };
        let token = &c[i..end];
        let Some((m, uci)) = san_move(pos, token)
            .map(|m| (m, false))
            .or_else(|| uci_move(pos, token).filter(|_| uci_here).map(|m| (m, true)))
        else {
            continue;
        };
        if coder.guessed(back, at, m) {
            found = Some((back, m, uci));
            break;
        }
        found = found.or(Some((back, m, uci)));
    }
    let (back, first, uci) = found?;
    let kind = if uci { UCI_LINE } else { LINE } + back as u8;
    let mut pos = behind(at, back)?.clone();
    pos.play_unchecked(first);
    let mut moves = vec![first];
    let mut end = end;
    while moves.len() < MAX_LINE && c.get(end) == Some(&b' ') && end + 1 < c.len() {
        let next_end = token_end(end + 1);
        match spelled_move(&pos, &c[end + 1..next_end], uci) {
            Some(m) => {
                pos.play_unchecked(m);
                moves.push(m);
                end = next_end;
            }
            None => break,
        }
    }
    Some((kind, moves, end))
}

/// Binary coding, one description for both directions: an encoder codes
/// the bit it is given, a decoder gives the bit it reads.
pub(super) trait Io {
    fn bit(&mut self, model: &mut BitModel, bit: bool) -> bool;
    fn direct(&mut self, value: u64, n: u32) -> u64;
}

impl Io for BinaryEncoder {
    fn bit(&mut self, model: &mut BitModel, bit: bool) -> bool {
        self.encode_bit(model, bit);
        bit
    }
    fn direct(&mut self, value: u64, n: u32) -> u64 {
        let mut left = n;
        while left > 0 {
            let k = left.min(32);
            left -= k;
            self.encode_direct((value >> left) as u32 & mask32(k), k);
        }
        value & mask64(n)
    }
}

impl Io for BinaryDecoder<'_> {
    fn bit(&mut self, model: &mut BitModel, _: bool) -> bool {
        self.decode_bit(model)
    }
    fn direct(&mut self, _: u64, n: u32) -> u64 {
        let mut v = 0u64;
        let mut left = n;
        while left > 0 {
            let k = left.min(32);
            left -= k;
            v = v << k | u64::from(self.decode_direct(k));
        }
        v
    }
}

fn mask32(k: u32) -> u32 {
    if k >= 32 { u32::MAX } else { (1 << k) - 1 }
}

fn mask64(k: u32) -> u64 {
    if k >= 64 { u64::MAX } else { (1 << k) - 1 }
}

/// `value < 2^n` through a tree of adaptive models (`models.len() ≥ 2^n`).
fn tree(io: &mut impl Io, models: &mut [BitModel], n: u32, value: u32) -> u32 {
    let mut node = 1usize;
    for i in (0..n).rev() {
        let b = io.bit(&mut models[node], value >> i & 1 == 1);
        node = node * 2 + usize::from(b);
    }
    (node - (1 << n)) as u32
}

/// The adaptive models of one number's place in a template.
#[derive(Clone)]
struct SlotModels {
    /// How many numbers were coded with them (for the prior's builder).
    uses: u32,
    zero: [BitModel; 3],
    sign: [BitModel; 3],
    /// The step's bit length − 1 (6 bits), by the last one's (4 classes).
    length: Vec<BitModel>,
    /// The two bits below the leading one, by bit length.
    top: Vec<BitModel>,
    /// `+`, none or `-` on a zero or a positive value.
    style: [BitModel; 8],
    same_format: [BitModel; 2],
    format: Vec<BitModel>,
    /// `zero` and `sign` again, by which way the other side's last number
    /// here points (below, at or above the prediction) too: not in the
    /// prior file, they start as `zero` and `sign` do.
    zero_by_other: [BitModel; 9],
    sign_by_other: [BitModel; 9],
}

impl SlotModels {
    fn new() -> SlotModels {
        let w = BitModel::warm();
        SlotModels {
            uses: 0,
            zero: [w; 3],
            sign: [w; 3],
            length: vec![w; 4 << 6],
            top: vec![w; 64 << 2],
            style: [w; 8],
            same_format: [w; 2],
            format: vec![w; 2 << 5],
            zero_by_other: [w; 9],
            sign_by_other: [w; 9],
        }
    }

    /// Starts `zero_by_other` and `sign_by_other` from `zero` and `sign`.
    fn spread(&mut self) {
        for i in 0..9 {
            self.zero_by_other[i] = self.zero[i % 3];
            self.sign_by_other[i] = self.sign[i % 3];
        }
    }

    /// Every model, in the prior file's order.
    fn models(&mut self) -> [&mut [BitModel]; 7] {
        [
            &mut self.zero,
            &mut self.sign,
            &mut self.length,
            &mut self.top,
            &mut self.style,
            &mut self.same_format,
            &mut self.format,
        ]
    }
}

/// A side's last number in a place.
#[derive(Clone, Copy)]
struct Last {
    value: i64,
    /// The last step from the prediction.
    step: i64,
    plus: bool,
    decimals: u8,
    width: u8,
    /// Whether the table had a number here: 0 none, 1 another, 2 this.
    table: u8,
    /// Whether the group's time at this ply ([`FieldTable`]) was it: 0
    /// none there, 1 another, 2 this.
    ply: u8,
}

impl Last {
    /// The last number `n`, of prediction `base`, and what the tables had.
    fn of(n: Number, base: i64, table: u8, ply: u8) -> Last {
        Last {
            value: n.value,
            step: n.value.wrapping_sub(base),
            plus: n.plus || n.minus,
            decimals: n.decimals,
            width: n.width,
            table,
            ply,
        }
    }
}

/// The models of the lines' moves.
#[derive(Clone)]
struct LineModels {
    /// Whether the line ends, by the move's index (8), whether a guess is
    /// left (2) and whether a guess's line ends there (2).
    stop: [BitModel; 32],
    /// Whether the move is guess `i`, by the guess's source (3) and the
    /// move's index (4).
    guess: [BitModel; 12],
    /// The rank of another move by the `fast` model (5 bits, then longer).
    rank: Vec<BitModel>,
    long: Vec<BitModel>,
}

impl LineModels {
    fn new() -> LineModels {
        let w = BitModel::warm();
        LineModels {
            stop: [w; 32],
            guess: [w; 12],
            rank: vec![w; RANK_CONTEXTS << 5],
            long: vec![w; 64],
        }
    }

    /// Every model, in the prior file's order.
    fn models(&mut self) -> [&mut [BitModel]; 4] {
        [
            &mut self.stop,
            &mut self.guess,
            &mut self.rank,
            &mut self.long,
        ]
    }
}

/// Where the fields' models start: their states after coding
/// the engine comments of training games (`chesspack train
/// engine-comments`), shipped in `fields.bin`. A number's place that the
/// prior lacks starts from fresh models.
///
/// File format: magic `CPKC`, version (u32), the number of places (u32),
/// then each place's hash (u64) and its models' states, then the lines'
/// models' states (u16 each, [`BitModel`]'s), all little-endian.
#[derive(Clone)]
pub(crate) struct FieldPrior {
    slots: ByHash<SlotModels>,
    lines: LineModels,
}

/// Magic bytes of a prior file.
const PRIOR_MAGIC: &[u8; 4] = b"CPKC";
const PRIOR_VERSION: u32 = 1;
/// The prior shipped in the library.
static PRIOR_FILE: &[u8] = include_bytes!("fields.bin");

impl FieldPrior {
    /// The prior shipped in the library.
    pub(crate) fn embedded() -> &'static FieldPrior {
        static EMBEDDED: std::sync::OnceLock<FieldPrior> = std::sync::OnceLock::new();
        EMBEDDED
            .get_or_init(|| FieldPrior::from_bytes(PRIOR_FILE).expect("the embedded fields prior"))
    }

    /// `crate::hash::file_hash` of the shipped file (archives name it in
    /// their header's table hash).
    pub(crate) fn embedded_hash() -> u64 {
        crate::hash::file_hash(PRIOR_FILE)
    }

    /// Fresh models: no prior.
    fn fresh() -> FieldPrior {
        FieldPrior {
            slots: ByHash::default(),
            lines: LineModels::new(),
        }
    }

    fn from_bytes(bytes: &[u8]) -> Result<FieldPrior, String> {
        let mut r = bytes
            .strip_prefix(PRIOR_MAGIC)
            .ok_or("not a fields prior (bad magic)")?;
        fn take<'a>(r: &mut &'a [u8], n: usize) -> Result<&'a [u8], String> {
            if r.len() < n {
                return Err("fields prior ends early".into());
            }
            let (a, b) = r.split_at(n);
            *r = b;
            Ok(a)
        }
        fn read(r: &mut &[u8], models: &mut [BitModel]) -> Result<(), String> {
            for m in models {
                let b = take(r, 2)?;
                *m = BitModel::from_raw(u16::from_le_bytes([b[0], b[1]]))
                    .ok_or("bad model state in fields prior")?;
            }
            Ok(())
        }
        let u32_at = |b: &[u8]| u32::from_le_bytes(b.try_into().expect("4 bytes"));
        if u32_at(take(&mut r, 4)?) != PRIOR_VERSION {
            return Err("unknown fields prior version".into());
        }
        let places = u32_at(take(&mut r, 4)?) as usize;
        let mut prior = FieldPrior::fresh();
        for _ in 0..places {
            let h = u64::from_le_bytes(take(&mut r, 8)?.try_into().expect("8 bytes"));
            let mut slot = SlotModels::new();
            for models in slot.models() {
                read(&mut r, models)?;
            }
            slot.spread();
            prior.slots.insert(h, slot);
        }
        for models in prior.lines.models() {
            read(&mut r, models)?;
        }
        if !r.is_empty() {
            return Err("trailing bytes in fields prior".into());
        }
        Ok(prior)
    }

    /// The file of this prior, with the places used at least `min_uses`
    /// times (in hash order).
    #[cfg(any(test, feature = "train"))]
    pub(crate) fn to_bytes(&self, min_uses: u32) -> Vec<u8> {
        let mut prior = self.clone();
        let mut places: Vec<(u64, SlotModels)> = prior
            .slots
            .drain()
            .filter(|(_, s)| s.uses >= min_uses)
            .collect();
        places.sort_by_key(|&(h, _)| h);
        let mut out = PRIOR_MAGIC.to_vec();
        out.extend_from_slice(&PRIOR_VERSION.to_le_bytes());
        out.extend_from_slice(&(places.len() as u32).to_le_bytes());
        for (h, mut slot) in places {
            out.extend_from_slice(&h.to_le_bytes());
            for models in slot.models() {
                for m in models.iter() {
                    out.extend_from_slice(&m.to_raw().to_le_bytes());
                }
            }
        }
        for models in prior.lines.models() {
            for m in models.iter() {
                out.extend_from_slice(&m.to_raw().to_le_bytes());
            }
        }
        out
    }
}

/// What the fields of a game's engine comments are coded knowing: the
/// same in the writer and the reader, one per game.
pub(super) struct FieldCoder {
    /// Where the models of a place start.
    prior: &'static FieldPrior,
    slots: ByHash<SlotModels>,
    /// Each side's last number in each place.
    last: [ByHash<Last>; 2],
    lines: LineModels,
    /// The game's move from each position of its mainline, by Zobrist hash.
    game: ByHash<Move>,
    /// The move that each side's last line through a position played
    /// there (none where it ended there), by the position's hash.
    seen: ByHash<[Option<Option<Move>>; 2]>,
    /// The moves (origin × 64 + target) of the last lines, newest first,
    /// as bitmaps: a move that they played comes first among the others.
    recent: [[u64; MOVE_WORDS]; RECENT_LINES],
    /// The union of `recent` (for the line being coded).
    known: [u64; MOVE_WORDS],
    /// The moves' scores and keys (buffers).
    scores: Vec<i32>,
    keys: Vec<u32>,
    /// The other moves' sort keys (best first) and indexes (a buffer).
    order: Vec<u64>,
    /// How many times ([`is_time`]) were coded, in the second stream.
    pub(super) timed: usize,
    /// The numbers that the earlier games of the block's group wrote at
    /// each position ([`FieldTable`]), and whether this game's numbers are
    /// coded knowing them.
    table: FieldTable,
    from_table: bool,
    /// The hash of the game's mainline.
    line: u64,
    /// Its numbers so far, in order, and whether it has lines: a game
    /// without lines leaves its numbers in the table for the games after
    /// it that repeat them.
    numbers: Vec<Number>,
    lined: bool,
    /// Whether the game repeats the numbers of the group's latest game of
    /// the same mainline (`numbers`), none coded, how many it read and
    /// how many there are.
    whole: bool,
    repeated: usize,
    to_repeat: usize,
    /// This game's numbers by position, for the games after it.
    here: FieldTable,
    /// The models of a number being the table's (in a game coded from the
    /// table, from [`FieldTable::learned`]).
    table_models: TableModels,
}

/// The games of a block whose engine comments' numbers predict each
/// other's (issue 69): engines without a book replay each other's games,
/// evaluations and depths. A game coded from its group's table needs the
/// group's earlier games with engine comments decoded first, so the
/// group bounds what reading one game decodes.
pub(super) const FIELD_GROUP: usize = 256;

/// Flags of a game's engine fields (in its first stream's length): coded
/// from its group's table; its numbers those of the group's latest game of
/// the same mainline, in order (no streams follow).
pub(super) const FROM_TABLE: u8 = 1;
pub(super) const ALONE: u8 = 2;

/// The least number of a game's positions (by Zobrist hash) where a table
/// has numbers for the game to be coded from it (and a quarter of its
/// plies): fewer are not worth making the game wait for the earlier games
/// of its group.
pub(super) const TABLE_HITS: usize = 8;

/// What the earlier games of a group wrote in their engine comments.
#[derive(Default)]
pub(super) struct FieldTable {
    /// By the Zobrist hash of the position they stand at: the latest
    /// game's first comment's numbers there, one entry a placeholder
    /// (`None` for a line).
    at: ByHash<Vec<Option<Number>>>,
    /// By mainline ply: the times ([`is_time`]) of the games' first
    /// comments there, by placeholder, with how many games wrote each and
    /// the last game that did (engines that spend their time by one
    /// schedule from one clock spend the same at the same ply, wherever
    /// the position).
    times: Vec<Vec<PlyTime>>,
    /// How many games' numbers are in it.
    games: u32,
    /// By the hash of a mainline: the numbers, in order, of the latest
    /// game of the group with that mainline and no lines in its comments.
    repeats: ByHash<Vec<Number>>,
    /// The models of the group's last game whose numbers were coded (not
    /// one that repeats an earlier game's), as that game left them, for the
    /// next game coded from the table: engines' numbers step alike from
    /// game to game, and a game that learns them from scratch pays for it
    /// again.
    learned: Option<Box<Learned>>,
}

/// The models that the games of a group hand on ([`FieldTable::learned`]).
#[derive(Clone)]
struct Learned {
    table: TableModels,
    slots: ByHash<SlotModels>,
    lines: LineModels,
}

/// The models of a number being the table's.
#[derive(Clone, Copy)]
struct TableModels {
    /// At its position, by whether it is a time (and whether the group's
    /// time at its ply is the table's) and what the last number in its
    /// place was (none from the table, not the table's, the table's).
    at: [BitModel; 12],
    /// A time at its ply, by what the last number in its place was (none
    /// at its ply, not that, that).
    ply: [BitModel; 3],
}

impl Default for TableModels {
    fn default() -> TableModels {
        TableModels {
            at: [BitModel::warm(); 12],
            ply: [BitModel::warm(); 3],
        }
    }
}

/// A time that games of a group wrote at a ply ([`FieldTable::times`]).
#[derive(Clone, Copy)]
struct PlyTime {
    placeholder: u16,
    number: Number,
    games: u32,
    last: u32,
}

impl FieldTable {
    /// Empties the table (a new group).
    pub(super) fn clear(&mut self) {
        *self = FieldTable::default();
    }

    /// The time that most games of the group wrote at the `placeholder`-th
    /// field of their first comment at mainline ply `ply` (of two as many,
    /// the latest game's).
    fn time_at(&self, ply: usize, placeholder: usize) -> Option<Number> {
        self.times
            .get(ply)?
            .iter()
            .filter(|t| usize::from(t.placeholder) == placeholder)
            .max_by_key(|t| (t.games, t.last))
            .map(|t| t.number)
    }

    /// Adds a game's numbers (`here`: its own table).
    fn add(&mut self, here: FieldTable) {
        self.games += 1;
        self.at.extend(here.at);
        if self.times.len() < here.times.len() {
            self.times.resize_with(here.times.len(), Vec::new);
        }
        for (ply, times) in here.times.into_iter().enumerate() {
            for t in times {
                let known = self.times[ply]
                    .iter_mut()
                    .find(|k| k.placeholder == t.placeholder && k.number == t.number);
                match known {
                    Some(k) => {
                        k.games += 1;
                        k.last = self.games;
                    }
                    None => self.times[ply].push(PlyTime {
                        games: 1,
                        last: self.games,
                        ..t
                    }),
                }
            }
        }
    }
}

impl FieldCoder {
    /// The coder of a game from `start` whose mainline (up to its first
    /// null move) is `mainline`.
    pub(super) fn new(start: &Chess, mainline: &[Move]) -> FieldCoder {
        FieldCoder::with_prior(start, mainline, FieldPrior::embedded())
    }

    /// [`FieldCoder::new`] from the models of `prior`.
    pub(super) fn with_prior(
        start: &Chess,
        mainline: &[Move],
        prior: &'static FieldPrior,
    ) -> FieldCoder {
        let mut game = ByHash::with_capacity_and_hasher(mainline.len(), Default::default());
        let mut pos = start.clone();
        let mut h = hash(&pos);
        for &m in mainline {
            game.insert(h, m);
            h = hash_after(&pos, h, m);
            pos.play_unchecked(m);
        }
        FieldCoder {
            prior,
            slots: ByHash::default(),
            last: [ByHash::default(), ByHash::default()],
            lines: prior.lines.clone(),
            game,
            seen: ByHash::default(),
            recent: [[0; MOVE_WORDS]; RECENT_LINES],
            known: [0; MOVE_WORDS],
            scores: Vec::new(),
            keys: Vec::new(),
            order: Vec::new(),
            timed: 0,
            table: FieldTable::default(),
            from_table: false,
            line: line_hash(mainline),
            numbers: Vec::new(),
            lined: false,
            whole: false,
            repeated: 0,
            to_repeat: 0,
            here: FieldTable::default(),
            table_models: TableModels::default(),
        }
    }

    /// How many positions of the game's mainline `table` has numbers at.
    pub(super) fn table_hits(&self, table: &FieldTable) -> usize {
        self.game
            .keys()
            .filter(|h| table.at.contains_key(h))
            .count()
    }

    /// The coder with the group's `table`, its numbers coded from it where
    /// `from_table`.
    pub(super) fn with_table(mut self, table: FieldTable, from_table: bool) -> FieldCoder {
        if let Some(learned) = table.learned.as_deref().filter(|_| from_table) {
            self.table_models = learned.table;
            self.slots = learned.slots.clone();
            self.lines = learned.lines.clone();
        }
        self.table = table;
        self.from_table = from_table;
        self
    }

    /// Whether the game's numbers (it has no lines) are those of the
    /// group's latest game of the same mainline, in order: it may be
    /// stored as that alone ([`FieldCoder::alone`]).
    pub(super) fn repeats_earlier(&self) -> bool {
        self.from_table
            && !self.lined
            && !self.numbers.is_empty()
            && self.table.repeats.get(&self.line) == Some(&self.numbers)
    }

    /// The coder of a game that repeats the numbers of the group's latest
    /// game of the same mainline: none is coded, and the table's models go
    /// on unchanged.
    pub(super) fn alone(mut self) -> FieldCoder {
        self.whole = true;
        self.repeated = 0;
        self.numbers = self
            .table
            .repeats
            .get(&self.line)
            .cloned()
            .unwrap_or_default();
        self.to_repeat = self.numbers.len();
        self
    }

    /// Whether a game read [`FieldCoder::alone`] used every number of the
    /// game it repeats.
    pub(super) fn repeated_all(&self) -> bool {
        !self.whole || self.repeated == self.to_repeat
    }

    /// The group's table for the next game, with this game's numbers in
    /// it where `with_game` (the coder keeps none).
    pub(super) fn take_table(&mut self, with_game: bool) -> FieldTable {
        let mut table = std::mem::take(&mut self.table);
        if with_game {
            table.add(std::mem::take(&mut self.here));
            if !self.lined {
                table
                    .repeats
                    .insert(self.line, std::mem::take(&mut self.numbers));
            }
        }
        if with_game && !self.whole {
            table.learned = Some(Box::new(Learned {
                table: self.table_models,
                slots: std::mem::take(&mut self.slots),
                lines: self.lines.clone(),
            }));
        }
        table
    }
}

/// The contexts of a line's move's rank.
const RANK_CONTEXTS: usize = 12;
/// What a move of the last lines adds to its `fast` score (1/1024 nats).
const KNOWN_BONUS: i32 = 1500;
/// How many lines' moves rank first among the other moves.
const RECENT_LINES: usize = 4;

/// A move's index in a bitmap of moves, from its canonical key
/// ([`crate::order::Order::Thesis`]: origin, target, promotion in 3 bits).
fn key_bit(key: u32) -> usize {
    (key >> 3) as usize % (MOVE_WORDS * 64)
}

/// The words of a bitmap of moves (keys below 2^16).
const MOVE_WORDS: usize = 128;

/// A hash of the moves of a mainline.
fn line_hash(mainline: &[Move]) -> u64 {
    let mut h = crate::hash::fnv1a(&(mainline.len() as u64).to_le_bytes());
    for m in mainline {
        let key = [
            m.from().map_or(64, |s| s as u8),
            m.to() as u8,
            m.promotion().map_or(0, |r| r as u8),
        ];
        h = crate::hash::fnv1a_from(h, &key);
    }
    h
}

/// Which way a number `other` of the other side points from `prediction`,
/// negated or not, whichever is nearer (an evaluation from the side to
/// move's view, a depth): 0 below, 1 at, 2 above.
fn other_way(other: i64, prediction: i64) -> usize {
    let (a, b) = (
        other.wrapping_sub(prediction),
        other.wrapping_neg().wrapping_sub(prediction),
    );
    let d = if a.unsigned_abs() <= b.unsigned_abs() {
        a
    } else {
        b
    };
    (d.signum() + 1) as usize
}

/// The Zobrist hash of `pos`.
fn hash(pos: &Chess) -> u64 {
    pos.zobrist_hash::<Zobrist64>(EnPassantMode::Legal).0
}

/// The hash of the position after `m` in `pos`, whose hash is `h`.
fn hash_after(pos: &Chess, h: u64, m: Move) -> u64 {
    match pos.update_zobrist_hash(Zobrist64(h), m, EnPassantMode::Legal) {
        Some(z) => z.0,
        None => {
            let mut after = pos.clone();
            after.play_unchecked(m);
            hash(&after)
        }
    }
}

/// Whether the number at `p` of `template`, of key `key`, is a time:
/// TCEC's move time and time left (`mt=`, `tl=`), or a number in seconds
/// or milliseconds (cutechess's `1.2s`). Times go in a stream of their own
/// (issue 69): games of engines without a book repeat each other's moves,
/// evaluations and depths, rarely their times, and the block's compressor
/// finds the repeats only in a stream that times do not break.
fn is_time(template: &[u8], p: usize, key: &[u8]) -> bool {
    if matches!(key, b"mt=" | b"tl=") {
        return true;
    }
    let after = &template[p + 1..];
    let unit = |u: &[u8]| {
        after.starts_with(u)
            && after
                .get(u.len())
                .is_none_or(|b| !b.is_ascii_alphanumeric())
    };
    unit(b"s") || unit(b"ms")
}

/// What a number's place is called: the text of its key before it (`tl=`)
/// and the numbers between them (`mb=+0` is `mb=` 0, the next `mb=` 1).
fn key_of(template: &[u8], p: usize) -> (&[u8], usize) {
    let mut q = p;
    let mut index = 0;
    while q > 0 && template[q - 1] == NUMBER {
        q -= 1;
        index += 1;
    }
    let start = template[..q]
        .iter()
        .rposition(|&b| b" ,{(\n\t".contains(&b) || b <= LAST_PLACEHOLDER)
        .map_or(0, |s| s + 1);
    (&template[start..q], index)
}

/// The material balance of `role` (white's less black's) in `pos`.
fn balance(pos: &Chess, role: Role) -> i64 {
    let b = pos.board();
    let by = |c: Color| (b.by_role(role) & b.by_color(c)).count() as i64;
    by(Color::White) - by(Color::Black)
}

impl FieldCoder {
    /// Codes the fields of one engine comment of template `template` (the
    /// writer's `fields`, the reader's an empty list that this fills): its
    /// times ([`is_time`]) into `io[1]`, the rest into `io[0]`.
    pub(super) fn code<I: Io>(
        &mut self,
        io: &mut [I; 2],
        template: &[u8],
        at: &At<'_>,
        fields: &mut Vec<Field>,
    ) -> Result<(), String> {
        let encoding = !fields.is_empty();
        let h = hash(at.after);
        // This comment's numbers so far, by key, for the predictions that
        // read another field (`n` from `s` and `mt`).
        let mut named: Vec<(&[u8], i64)> = Vec::new();
        let mut places: Vec<(&[u8], usize)> = Vec::new();
        // Its times, by placeholder, for the games after it.
        let mut times: Vec<PlyTime> = Vec::new();
        let mut f = 0;
        for (p, &b) in template.iter().enumerate() {
            if b > LAST_PLACEHOLDER {
                continue;
            }
            let given = if encoding {
                Some(fields.get(f).ok_or("fewer fields than the template")?)
            } else {
                None
            };
            f += 1;
            match b {
                NUMBER => {
                    let n = match given {
                        Some(Field::Number(n)) => Some(*n),
                        Some(Field::Line(_)) => return Err("a line for a number".into()),
                        None => None,
                    };
                    let (key, index) = key_of(template, p);
                    // Its place: its key, its index after the key, and how
                    // many numbers of the same key and index came before
                    // (not the bytes before it: a template whose `pd=` is
                    // a move or text keeps its places).
                    let nth = places
                        .iter()
                        .filter(|&&(k, i)| k == key && i == index)
                        .count();
                    places.push((key, index));
                    let mut place = crate::hash::fnv1a(key);
                    place = crate::hash::fnv1a_from(place, &[index as u8, nth as u8]);
                    let time = is_time(template, p, key);
                    let io = &mut io[usize::from(time)];
                    let n = if self.whole {
                        self.repeated += 1;
                        *self
                            .numbers
                            .get(self.repeated - 1)
                            .ok_or("more numbers than the game repeated")?
                    } else {
                        let (table, at_ply) = self.tables_at(h, at.ply, f - 1, time);
                        self.timed += usize::from(time);
                        let n = (n, table, at_ply, time);
                        let n = self.number(io, place, (key, index), &named, at, n);
                        if !self.lined {
                            self.numbers.push(n);
                        }
                        n
                    };
                    // (Kept by ply for the mainline's comments alone.)
                    let placeholder = u16::try_from(f - 1).ok().filter(|_| time);
                    if let (Some(_), Some(placeholder)) = (at.ply, placeholder) {
                        times.push(PlyTime {
                            placeholder,
                            number: n,
                            games: 0,
                            last: 0,
                        });
                    }
                    if index == 0 && n.decimals == 0 {
                        named.push((key, n.value));
                    }
                    if !encoding {
                        fields.push(Field::Number(n));
                    }
                }
                _ => {
                    let moves = match given {
                        Some(Field::Line(m)) => Some(m.as_slice()),
                        Some(Field::Number(_)) => return Err("a number for a line".into()),
                        None => None,
                    };
                    if self.whole {
                        return Err("a line in a game that repeats an earlier one's numbers".into());
                    }
                    self.lined = true;
                    let line = self.line(&mut io[0], line_kind(b).0, at, moves)?;
                    if !encoding {
                        fields.push(Field::Line(line));
                    }
                }
            }
        }
        if encoding && f != fields.len() {
            return Err("more fields than the template".into());
        }
        if let Some(ply) = at.ply.filter(|&p| p >= self.here.times.len()) {
            self.here.times.resize_with(ply, Vec::new);
            self.here.times.push(times);
        }
        self.here.at.entry(h).or_insert_with(|| {
            fields
                .iter()
                .map(|f| match f {
                    Field::Number(n) => Some(*n),
                    Field::Line(_) => None,
                })
                .collect()
        });
        Ok(())
    }

    fn number(
        &mut self,
        io: &mut impl Io,
        place: u64,
        (key, index): (&[u8], usize),
        named: &[(&[u8], i64)],
        at: &At<'_>,
        (given, table, at_ply, time): (Option<Number>, Option<Number>, Option<Number>, bool),
    ) -> Number {
        let side = at.side & 1;
        let own = self.last[side].get(&place).copied();
        let other = self.last[side ^ 1].get(&place).copied();
        let last = own.or(other);
        let (base, from_step) = prediction((key, index), last, named, at);
        let step_base = if from_step {
            last.map_or(0, |l| l.step)
        } else {
            0
        };
        if let Some((n, l)) = self.table_bits(io, given, (table, at_ply, time), last) {
            self.last[side].insert(place, Last::of(n, base, l.0, l.1));
            return n;
        }
        let other = other
            .filter(|_| own.is_some())
            .map(|o| other_way(o.value, base.wrapping_add(step_base)));
        let prior = self.prior;
        let models = self.slots.entry(place).or_insert_with(|| {
            prior
                .slots
                .get(&place)
                .cloned()
                .unwrap_or_else(SlotModels::new)
        });
        models.uses = models.uses.saturating_add(1);
        let ply = u8::from(at_ply.is_some());
        // A time that is not the group's at its ply is coded from it (a
        // step of the schedule away, mostly), unless it is a time left.
        let (base, step_base) = match at_ply {
            Some(t) if key != b"tl=" => (t.value, 0),
            _ => (base, step_base),
        };
        let residual = given.map_or(0, |n| n.value.wrapping_sub(base).wrapping_sub(step_base));
        let last_residual_class = last.map_or(2, |l| usize::from(l.step.wrapping_sub(0) != 0));
        let r = signed(io, models, (last_residual_class, other), residual);
        let step = r.wrapping_add(step_base);
        let value = base.wrapping_add(step);
        // Its spelling: sign, point and padding.
        let (plus, minus) = match given {
            Some(n) => (n.plus, n.minus),
            None => (false, false),
        };
        let lp = last.map_or(2, |l| usize::from(l.plus));
        let (plus, minus) = if value < 0 {
            (false, true)
        } else {
            let signed_ = io.bit(&mut models.style[lp], plus || minus);
            if !signed_ {
                (false, false)
            } else if value == 0 {
                let m = io.bit(&mut models.style[3 + lp], minus);
                (!m, m)
            } else {
                (true, false)
            }
        };
        let (decimals, width) = match given {
            Some(n) => (n.decimals, n.width),
            None => (0, 0),
        };
        let same = last.is_some_and(|l| l.decimals == decimals && l.width == width);
        let same = match last {
            Some(_) => io.bit(&mut models.same_format[0], same),
            None => false,
        };
        let (decimals, width) = if same {
            let l = last.expect("a last number");
            (l.decimals, l.width)
        } else {
            let d = tree(io, &mut models.format[..32], 5, u32::from(decimals)) as u8;
            let w = tree(io, &mut models.format[32..], 5, u32::from(width)) as u8;
            (d, w)
        };
        // A damaged stream may give any spelling: keep it writable.
        let decimals = decimals.min(MAX_DECIMALS as u8);
        let width = width.min(MAX_DIGITS as u8 + 2);
        let n = Number {
            value: if minus && value > 0 {
                value.wrapping_neg()
            } else {
                value
            },
            plus,
            minus,
            decimals,
            width,
        };
        self.last[side].insert(
            place,
            Last {
                value: n.value,
                step,
                plus: plus || minus,
                decimals,
                width,
                table: u8::from(table.is_some()),
                ply,
            },
        );
        n
    }

    /// The table's number at the `placeholder`-th field of a comment at the
    /// position of hash `h`, and the group's time there at mainline ply
    /// `ply` where it is a `time`: none in a game not coded from them.
    fn tables_at(
        &self,
        h: u64,
        ply: Option<usize>,
        placeholder: usize,
        time: bool,
    ) -> (Option<Number>, Option<Number>) {
        if !self.from_table {
            return (None, None);
        }
        let table = self.table.at.get(&h);
        let at = table.and_then(|t| t.get(placeholder).copied().flatten());
        let ply = ply.filter(|_| time);
        (at, ply.and_then(|p| self.table.time_at(p, placeholder)))
    }

    /// The table's number at this position, then the group's time at this
    /// ply, where they have one: one bit each where it is this one (the
    /// first by whether it is a time, and whether the group's time at this
    /// ply is the same). The number, and what [`Last`] keeps of the tables
    /// (`table`, `ply`), where it is one of them.
    fn table_bits(
        &mut self,
        io: &mut impl Io,
        given: Option<Number>,
        (table, at_ply, time): (Option<Number>, Option<Number>, bool),
        last: Option<Last>,
    ) -> Option<(Number, (u8, u8))> {
        if let Some(t) = table {
            let kind = match at_ply {
                None => usize::from(time),
                Some(p) => 2 + usize::from(p == t),
            };
            let ctx = 3 * kind + last.map_or(0, |l| usize::from(l.table));
            if io.bit(&mut self.table_models.at[ctx], given == Some(t)) {
                let ply = at_ply.map_or(0, |p| 1 + u8::from(p == t));
                return Some((t, (2, ply)));
            }
        }
        let t = at_ply.filter(|&p| Some(p) != table)?;
        let ctx = last.map_or(0, |l| usize::from(l.ply));
        io.bit(&mut self.table_models.ply[ctx], given == Some(t))
            .then_some((t, (u8::from(table.is_some()), 2)))
    }

    /// The guesses of the move from `pos` (hash `h`) in a line of
    /// `side`'s comment: the game's move, this side's last line's, the
    /// other side's; each legal and once. (source, move), source 0 to 2.
    fn guesses(&self, pos: &Chess, h: u64, side: usize) -> arrayvec::ArrayVec<(usize, Move), 3> {
        let mut out = arrayvec::ArrayVec::new();
        let seen = self.seen.get(&h);
        let candidates = [
            self.game.get(&h).copied(),
            seen.and_then(|s| s[side]).flatten(),
            seen.and_then(|s| s[side ^ 1]).flatten(),
        ];
        // Legal by construction (the moves played from a position of this
        // hash); the decoder checks the one it takes.
        let _ = pos;
        for (source, m) in candidates.into_iter().enumerate() {
            if let Some(m) = m
                && !out.iter().any(|&(_, x)| x == m)
            {
                out.push((source, m));
            }
        }
        out
    }

    /// Whether a guess of the first move of a line from `back` moves
    /// before the comment's position is `m` (for the writer's choice).
    fn guessed(&self, back: usize, at: &At<'_>, m: Move) -> bool {
        behind(at, back).is_some_and(|pos| {
            self.guesses(pos, hash(pos), at.side & 1)
                .iter()
                .any(|&(_, g)| g == m)
        })
    }

    /// Codes a line of moves from the position `back` moves before the
    /// comment's.
    fn line(
        &mut self,
        io: &mut impl Io,
        back: usize,
        at: &At<'_>,
        given: Option<&[Move]>,
    ) -> Result<Vec<Move>, String> {
        let mut pos = behind(at, back)
            .ok_or("a line from before the first move")?
            .clone();
        let side = at.side & 1;
        let mut h = hash(&pos);
        // The move before the line's first, for the `fast` model.
        let mut history = None;
        let mut moves: Vec<Move> = Vec::new();
        self.known = [0; MOVE_WORDS];
        for r in &self.recent {
            for (k, w) in self.known.iter_mut().zip(r) {
                *k |= w;
            }
        }
        loop {
            let j = moves.len();
            let guesses = self.guesses(&pos, h, side);
            let ended = self.seen.get(&h).is_some_and(|s| s.contains(&Some(None)));
            let ctx = j.min(7) * 4 + usize::from(!guesses.is_empty()) * 2 + usize::from(ended);
            let stop = given.is_none_or(|g| j == g.len());
            let stop = j >= MAX_LINE || (j > 0 && io.bit(&mut self.lines.stop[ctx], stop));
            if stop {
                self.seen.entry(h).or_default()[side] = Some(None);
                break;
            }
            let want = given.and_then(|g| g.get(j).copied());
            let mut chosen = None;
            for &(source, m) in &guesses {
                let model = &mut self.lines.guess[source * 4 + j.min(3)];
                if io.bit(model, want == Some(m)) {
                    chosen = Some(m);
                    break;
                }
            }
            let m = match chosen {
                Some(m) if want.is_some() || pos.is_legal(m) => m,
                Some(_) => return Err("a line's guessed move is not legal".into()),
                None => {
                    let legal = pos.legal_moves();
                    self.ranked(&pos, history, &legal, &guesses);
                    // The rank: how many come before the move.
                    let rank = match want {
                        Some(w) => {
                            let &k = self
                                .order
                                .iter()
                                .find(|&&o| legal[order_index(o)] == w)
                                .ok_or("a line's move is not legal")?;
                            self.order.iter().filter(|&&o| o < k).count()
                        }
                        None => 0,
                    };
                    // By how many moves there are, and how far into the line.
                    let n = self.order.len();
                    let ctx = usize::from(n > 8) + usize::from(n > 20) + usize::from(n > 35);
                    let ctx = ctx * 3 + j.min(2);
                    let r = code_rank(io, &mut self.lines, ctx, rank as u64) as usize;
                    if r >= self.order.len() {
                        return Err("a line's move out of range".into());
                    }
                    // The move of rank `r`: the few best found by scans,
                    // deeper ones by selection.
                    let o = if r < 4 {
                        let mut best = 0u64;
                        for step in 0..=r {
                            let floor = best;
                            best = self
                                .order
                                .iter()
                                .copied()
                                .filter(|&o| step == 0 || o > floor)
                                .min()
                                .ok_or("a line's move out of range")?;
                        }
                        best
                    } else {
                        *self.order.select_nth_unstable(r).1
                    };
                    legal[order_index(o)]
                }
            };
            self.seen.entry(h).or_default()[side] = Some(Some(m));
            h = hash_after(&pos, h, m);
            pos.play_unchecked(m);
            history = Some(m);
            moves.push(m);
        }
        self.recent.rotate_right(1);
        self.recent[0] = [0; MOVE_WORDS];
        for &m in &moves {
            let b = key_bit(crate::order::key(m, crate::order::Order::Thesis));
            self.recent[0][b >> 6] |= 1 << (b & 63);
        }
        Ok(moves)
    }

    /// The legal moves but the guesses into `order`: their sort keys, best
    /// first (the moves of the last lines, then by the `fast` model's
    /// scores, ties by canonical key), with their index in `legal` in the
    /// low byte ([`order_index`]).
    fn ranked(
        &mut self,
        pos: &Chess,
        history: Option<Move>,
        legal: &[Move],
        guesses: &[(usize, Move)],
    ) {
        self.scores.resize(legal.len(), 0);
        self.keys.resize(legal.len(), 0);
        let history = history.as_slice();
        crate::model::fast::FastWeights::embedded().scores_and_keys(
            pos,
            history,
            legal,
            &mut self.scores,
            &mut self.keys,
        );
        self.order.clear();
        for (i, ((&m, &score), &key)) in legal.iter().zip(&self.scores).zip(&self.keys).enumerate()
        {
            if !guesses.iter().any(|&(_, g)| g == m) {
                // Moves of the last lines first, then higher scores, then
                // lower keys: one integer.
                let b = key_bit(key);
                let known = self.known[b >> 6] >> (b & 63) & 1;
                let score = score.saturating_add(known as i32 * KNOWN_BONUS);
                let score = u64::from(score as u32 ^ 0x8000_0000);
                let sort = (u64::from(u32::MAX) - score) << 32 | u64::from(key) << 8 | i as u64;
                self.order.push(sort);
            }
        }
    }
}

/// Builds a prior from games' engine comments: each game's coder starts
/// from the models the last one left (for `chesspack train`).
#[cfg(feature = "train")]
pub(crate) struct PriorBuilder {
    prior: Option<FieldPrior>,
}

#[cfg(feature = "train")]
impl PriorBuilder {
    pub(crate) fn new() -> PriorBuilder {
        PriorBuilder {
            prior: Some(FieldPrior::fresh()),
        }
    }

    /// A coder for a game that starts from the models so far (leaked for
    /// its lifetime: a trainer codes a few thousand games).
    pub(super) fn coder(&mut self, start: &Chess, mainline: &[Move]) -> FieldCoder {
        let prior = self.prior.take().unwrap_or_else(FieldPrior::fresh);
        let mut coder =
            FieldCoder::with_prior(start, mainline, Box::leak(Box::new(FieldPrior::fresh())));
        coder.lines = prior.lines;
        coder.slots = prior.slots;
        coder
    }

    /// Keeps the models that `coder` leaves.
    pub(super) fn keep(&mut self, coder: FieldCoder) {
        self.prior = Some(FieldPrior {
            slots: coder.slots,
            lines: coder.lines,
        });
    }

    /// The prior's file, with the places used at least `min_uses` times.
    pub(crate) fn finish(self, min_uses: u32) -> Vec<u8> {
        self.prior
            .unwrap_or_else(FieldPrior::fresh)
            .to_bytes(min_uses)
    }
}

/// The index in the legal moves of a sort key of [`FieldCoder::ranked`].
fn order_index(o: u64) -> usize {
    (o & 0xff) as usize
}

/// A move's rank among the others.
fn code_rank(io: &mut impl Io, lines: &mut LineModels, ctx: usize, r: u64) -> u64 {
    {
        const DIRECT: u64 = 31;
        let s = tree(
            io,
            &mut lines.rank[ctx << 5..(ctx + 1) << 5],
            5,
            r.min(DIRECT) as u32,
        );
        if u64::from(s) < DIRECT {
            return u64::from(s);
        }
        let v = r.saturating_sub(DIRECT) + 1;
        let n = tree(io, &mut lines.long, 6, 63 - v.leading_zeros());
        let low = io.direct(v, n);
        ((1u64 << n) | low).saturating_add(DIRECT - 1)
    }
}

/// A signed step: zero or not, sign, bit length, two bits below the
/// leading one modelled and the rest direct.
fn signed(
    io: &mut impl Io,
    m: &mut SlotModels,
    (ctx, other): (usize, Option<usize>),
    v: i64,
) -> i64 {
    let (zero, sign) = match other {
        Some(o) => (
            &mut m.zero_by_other[3 * o + ctx],
            &mut m.sign_by_other[3 * o + ctx],
        ),
        None => (&mut m.zero[ctx], &mut m.sign[ctx]),
    };
    if io.bit(zero, v == 0) {
        return 0;
    }
    let negative = io.bit(sign, v < 0);
    let mag = v.unsigned_abs();
    let n = 63 - mag.max(1).leading_zeros();
    let class = ctx.min(3);
    let n = tree(io, &mut m.length[class << 6..(class + 1) << 6], 6, n);
    let mut value = 1u64;
    let mut left = n;
    // Two modelled bits below the leading one.
    for k in 0..2 {
        if left == 0 {
            break;
        }
        left -= 1;
        let node = (n as usize) << 2 | k << 1 | (value as usize & 1);
        let b = io.bit(&mut m.top[node.min(255)], mag >> left & 1 == 1);
        value = value << 1 | u64::from(b);
    }
    let low = io.direct(mag, left);
    let mag = (value << left) | low;
    let v = mag as i64;
    if negative { v.wrapping_neg() } else { v }
}

/// The positions of a game's lines as its events are walked: where
/// variations start and lines go on after null moves, and the comments'
/// [`At`].
pub(super) struct Walk {
    /// (position, the positions one and two moves before it) of each open
    /// line.
    stack: Vec<(Chess, [Option<Chess>; 2])>,
    /// The plies of the mainline so far.
    ply: usize,
}

impl Walk {
    pub(super) fn new(start: &Chess) -> Walk {
        Walk {
            stack: vec![(start.clone(), [None, None])],
            ply: 0,
        }
    }
    fn top(&mut self) -> &mut (Chess, [Option<Chess>; 2]) {
        self.stack.last_mut().expect("a line is open")
    }
    pub(super) fn play(&mut self, m: Move) {
        self.ply += usize::from(self.stack.len() == 1);
        let (pos, behind) = self.top();
        behind[1] = behind[0].take();
        behind[0] = Some(pos.clone());
        pos.play_unchecked(m);
    }
    /// Plays a null move, and gives the position after it; `None` (and
    /// nothing played) where the side to move is in check.
    pub(super) fn null(&mut self) -> Option<Chess> {
        let mainline = self.stack.len() == 1;
        let (pos, behind) = self.top();
        let after = crate::pgn::strict::after_null(pos)?;
        behind[1] = behind[0].take();
        behind[0] = Some(std::mem::replace(pos, after.clone()));
        self.ply += usize::from(mainline);
        Some(after)
    }
    /// Opens a variation of the last move, and gives its start: the
    /// position before that move.
    pub(super) fn open(&mut self) -> Chess {
        let (pos, behind) = &self.stack[self.stack.len() - 1];
        let start = behind[0].clone().unwrap_or_else(|| pos.clone());
        let before = if behind[0].is_some() {
            behind[1].clone()
        } else {
            None
        };
        self.stack.push((start.clone(), [before, None]));
        start
    }
    pub(super) fn close(&mut self) {
        if self.stack.len() > 1 {
            self.stack.pop();
        }
    }
    /// Where a comment here stands.
    pub(super) fn at(&self) -> At<'_> {
        let (pos, behind) = self.stack.last().expect("a line is open");
        At {
            side: usize::from(pos.turn() == Color::White),
            behind: [behind[0].as_ref(), behind[1].as_ref()],
            after: pos,
            ply: (self.stack.len() == 1).then_some(self.ply),
        }
    }
}

/// A comment's text from its template and fields, its lines' moves
/// written in SAN from their positions.
pub(super) fn render(
    template: &[u8],
    fields: &[Field],
    at: &At<'_>,
    out: &mut Vec<u8>,
) -> Result<(), String> {
    let mut fields = fields.iter();
    for &b in template {
        if b > LAST_PLACEHOLDER {
            out.push(b);
            continue;
        }
        match fields.next().ok_or("fewer fields than the template")? {
            Field::Number(n) => n.write(out),
            Field::Line(moves) => {
                let (back, uci) = line_kind(b);
                let mut pos = behind(at, back)
                    .ok_or("a line from before the first move")?
                    .clone();
                for (j, &m) in moves.iter().enumerate() {
                    if j > 0 {
                        out.push(b' ');
                    }
                    if uci {
                        write_uci(m, out);
                        pos.play_unchecked(m);
                    } else {
                        write_san(&mut pos, m, out);
                    }
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use shakmaty::{Chess, Position, san::San};

    use super::*;

    /// The moves of `sans` from the start.
    fn moves(sans: &str) -> Vec<Move> {
        let mut pos = Chess::default();
        sans.split_whitespace()
            .map(|s| {
                let m = San::from_ascii(s.as_bytes())
                    .unwrap()
                    .to_move(&pos)
                    .unwrap();
                pos.play_unchecked(m);
                m
            })
            .collect()
    }

    #[test]
    fn numbers_come_back_as_written() {
        for text in [
            "0",
            "7",
            "-11",
            "+0",
            "-0",
            "+0.35",
            "-0.00",
            "45.8",
            "00",
            "05",
            "007",
            "3542203",
            "0.013",
            "100.0",
            "999999999999999999",
        ] {
            let (n, end) = number_at(text.as_bytes(), 0).unwrap_or_else(|| panic!("{text}"));
            assert_eq!(end, text.len(), "{text}");
            let mut out = Vec::new();
            n.write(&mut out);
            assert_eq!(out, text.as_bytes());
        }
        // Inside a word or a number, too long, a sign alone: no number.
        assert!(number_at(b"R50", 1).is_none());
        assert!(number_at(b"1.2.3", 4).is_none());
        assert!(number_at(b"1234567890123456789", 0).is_none());
        assert!(number_at(b"+x", 0).is_none());
        // A sign after a digit starts one (TCEC's `mb=+0+1-1`).
        assert_eq!(number_at(b"+0+1", 2).map(|(n, _)| n.value), Some(1));
    }

    #[test]
    fn a_tcec_comment_splits_into_template_and_fields() {
        let mainline = moves("e4 e5 Nf3");
        let mut walk = Walk::new(&Chess::default());
        for &m in &mainline[..2] {
            walk.play(m);
        }
        let coder = FieldCoder::new(&Chess::default(), &mainline);
        let comment =
            b"d=24, sd=49, pd=e4, mt=67797, pv=e5 Nf3 Nc6, tb=null, wv=-0.38, mb=+0+0+0+0+0,";
        let (template, fields) = split(comment, &walk.at(), &coder).unwrap();
        let shown: String = template
            .iter()
            .map(|&b| match b {
                NUMBER => '#',
                b if (LINE..LINE + 3).contains(&b) => char::from(b'0' + b - LINE),
                b => char::from(b),
            })
            .collect();
        // `pd` from two moves back, `pv` from before the move.
        assert_eq!(
            shown,
            "d=#, sd=#, pd=2, mt=#, pv=1, tb=null, wv=#, mb=#####,"
        );
        assert_eq!(fields.len(), 11);
        let mut text = Vec::new();
        render(&template, &fields, &walk.at(), &mut text).unwrap();
        assert_eq!(text, comment);
        // Placeholder bytes in a comment: no split.
        assert!(split(b"d=1\x02", &walk.at(), &coder).is_none());
    }

    #[test]
    fn lines_in_uci_are_fields_after_an_equals_sign() {
        let mainline = moves("e4 e5 Nf3");
        let mut walk = Walk::new(&Chess::default());
        for &m in &mainline[..2] {
            walk.play(m);
        }
        let coder = FieldCoder::new(&Chess::default(), &mainline);
        let shown = |comment: &[u8]| -> String {
            let (template, fields) = split(comment, &walk.at(), &coder).unwrap();
            let mut text = Vec::new();
            render(&template, &fields, &walk.at(), &mut text).unwrap();
            assert_eq!(text, comment);
            template
                .iter()
                .map(|&b| match b {
                    NUMBER => '#',
                    b if b <= LAST_PLACEHOLDER => char::from(b'0' + b),
                    b => char::from(b),
                })
                .collect()
        };
        // From before the move (placeholder 6), wrapped over two lines (the
        // second line a line of its own, legal from there too).
        assert_eq!(shown(b"d=20, pv=e7e5 g1f3\n b8c6,"), "d=#, pv=6\n 6,");
        // In prose, a move in UCI stays text.
        let prose = split(
            b"d=20, sd=31, mt=1000, tl=59000, s=100, n=100, e: g1f3",
            &walk.at(),
            &coder,
        );
        assert!(prose.is_some());
        assert!(
            prose.is_none_or(|(t, _)| !t.iter().any(|&b| (LINE..=LAST_PLACEHOLDER).contains(&b)))
        );
    }

    /// The comments of a game coded and decoded with the same walk.
    fn round_trip(sans: &str, comments: &[&[u8]]) -> (Vec<Vec<u8>>, usize) {
        let mainline = moves(sans);
        let mut walk = Walk::new(&Chess::default());
        let mut coder = FieldCoder::new(&Chess::default(), &mainline);
        let mut enc = [BinaryEncoder::new(), BinaryEncoder::new()];
        let mut templates = Vec::new();
        for (&m, c) in mainline.iter().zip(comments) {
            walk.play(m);
            let (template, mut fields) = split(c, &walk.at(), &coder).unwrap();
            coder
                .code(&mut enc, &template, &walk.at(), &mut fields)
                .unwrap();
            templates.push(template);
        }
        let [main, times] = enc.map(BinaryEncoder::finish);
        let mut walk = Walk::new(&Chess::default());
        let mut coder = FieldCoder::new(&Chess::default(), &mainline);
        let mut dec = [BinaryDecoder::new(&main), BinaryDecoder::new(&times)];
        let mut out = Vec::new();
        for (&m, template) in mainline.iter().zip(&templates) {
            walk.play(m);
            let mut fields = Vec::new();
            coder
                .code(&mut dec, template, &walk.at(), &mut fields)
                .unwrap();
            let mut text = Vec::new();
            render(template, &fields, &walk.at(), &mut text).unwrap();
            out.push(text);
        }
        assert!(!dec[0].overrun() && !dec[1].overrun());
        (out, main.len() + times.len())
    }

    #[test]
    fn fields_round_trip_and_cost_little_where_predicted() {
        let comments: [&[u8]; 4] = [
            b"d=20, mt=1000, tl=59000, s=100000, n=100000, pv=e4 e5 Nf3 Nc6, R50=50, mb=+0+0+0+0+0,",
            b"d=19, mt=900, tl=59100, s=110000, n=99000, pv=e5 Nf3 Nc6 Bb5, R50=50, mb=+0+0+0+0+0,",
            b"d=21, mt=1500, tl=58500, s=100000, n=150000, pv=Nf3 Nc6 Bb5 a6, R50=50, mb=+0+0+0+0+0,",
            b"d=20, mt=800, tl=59300, s=110000, n=88000, pv=Nc6 Bb5 a6 Ba4, R50=49, mb=+0+0+0+0+0,",
        ];
        let (out, bytes) = round_trip("e4 e5 Nf3 Nc6", &comments);
        for (o, c) in out.iter().zip(comments) {
            assert_eq!(o, c);
        }
        // The comments' text is 340 bytes; their fields far fewer.
        assert!(bytes < 60, "{bytes} bytes");
        // cutechess-cli's comments.
        let cute: [&[u8]; 3] = [b"+0.35/20 1.2s", b"-0.28/18 0.9s", b"+M3/25 0.013s"];
        let (out, _) = round_trip("e4 e5 Nf3", &cute);
        for (o, c) in out.iter().zip(cute) {
            assert_eq!(o, c);
        }
    }

    #[test]
    fn a_damaged_stream_gives_an_error_or_other_text_never_a_panic() {
        let mainline = moves("e4 e5 Nf3 Nc6 Bb5");
        let template = [b"d=".as_slice(), &[NUMBER], b", pv=", &[LINE + 1], b","].concat();
        for seed in 0..200u64 {
            let mut state = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
            let bytes: Vec<u8> = (0..24)
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    state as u8
                })
                .collect();
            let mut walk = Walk::new(&Chess::default());
            let mut coder = FieldCoder::new(&Chess::default(), &mainline);
            let mut dec = [
                BinaryDecoder::new(&bytes[..12]),
                BinaryDecoder::new(&bytes[12..]),
            ];
            for &m in &mainline {
                walk.play(m);
                let mut fields = Vec::new();
                if coder
                    .code(&mut dec, &template, &walk.at(), &mut fields)
                    .is_ok()
                {
                    let mut text = Vec::new();
                    render(&template, &fields, &walk.at(), &mut text).unwrap();
                }
            }
        }
    }

    #[test]
    fn the_prior_file_reads_back_and_refuses_damage() {
        let prior = FieldPrior::embedded();
        let bytes = prior.to_bytes(0);
        assert_eq!(bytes, PRIOR_FILE);
        assert!(FieldPrior::from_bytes(&bytes).is_ok());
        assert!(FieldPrior::from_bytes(&bytes[..bytes.len() - 1]).is_err());
        assert!(FieldPrior::from_bytes(b"CPKX").is_err());
        let mut bad = bytes.clone();
        let n = bad.len();
        bad[n - 2..].copy_from_slice(&0u16.to_le_bytes());
        assert!(FieldPrior::from_bytes(&bad).is_err());
    }
}
