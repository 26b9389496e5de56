//! Lichess's clock and evaluation comments: parsed into numbers, written
//! back byte for byte, and coded adaptively ([`ClockCoder`], [`EvalCoder`]).

use super::{
    lengths::{decode_gamma, decode_low, encode_gamma, encode_low},
    unzigzag, zigzag,
};
use crate::coder::{BinaryDecoder, BinaryEncoder, BitModel};

/// A lichess clock or eval comment, split into its numbers.
#[derive(Debug, PartialEq)]
pub(super) struct Annotation<'a> {
    pub(super) eval: Option<&'a [u8]>,
    pub(super) clock: Option<u32>,
}

pub(super) fn format_clock(seconds: u32, out: &mut Vec<u8>) {
    use std::io::Write as _;
    let _ = write!(
        out,
        "[%clk {}:{:02}:{:02}]",
        seconds / 3600,
        seconds / 60 % 60,
        seconds % 60
    );
}

pub(super) fn format_annotation(eval: Option<&[u8]>, clock: Option<u32>, out: &mut Vec<u8>) {
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
pub(super) fn parse_annotation(c: &[u8]) -> Option<Annotation<'_>> {
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
pub(super) fn time_control(tc: &[u8]) -> (i64, i64) {
    let s = std::str::from_utf8(tc).unwrap_or("");
    let mut parts = s.split('+');
    let base = parts.next().and_then(|p| p.parse().ok()).unwrap_or(0);
    let inc = parts.next().and_then(|p| p.parse().ok()).unwrap_or(0);
    (base, inc)
}

/// The value of tag `name`.
pub(super) fn tag<'a>(tags: &'a [(Vec<u8>, Vec<u8>)], name: &[u8]) -> Option<&'a [u8]> {
    tags.iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_slice())
}

/// Predicts clock readings (the last reading of the same side plus the
/// increment, the base time for a side's first reading) and codes the
/// difference adaptively. The "side" of a reading is the parity of the ply
/// it follows, counted from the game start along its line, so that it is
/// known without playing the moves.
pub(super) struct ClockModel {
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
pub(super) const CLOCK_CONTEXTS: usize = 4 * 7 * 2;
/// Residuals (zigzag of the time used) below this are coded directly.
pub(super) const CLOCK_DIRECT: u64 = 31;
pub(super) const CLOCK_TREE_BITS: u32 = 5;

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

    pub(super) fn tree(&mut self, ctx: usize) -> &mut [BitModel] {
        &mut self.trees[ctx << CLOCK_TREE_BITS..(ctx + 1) << CLOCK_TREE_BITS]
    }

    pub(super) fn encode(&mut self, enc: &mut BinaryEncoder, ctx: usize, z: u64) {
        let s = z.min(CLOCK_DIRECT);
        enc.encode_tree(self.tree(ctx), CLOCK_TREE_BITS, s as u32);
        if s == CLOCK_DIRECT {
            encode_gamma(enc, &mut self.lengths, z - CLOCK_DIRECT + 1);
        }
    }

    pub(super) fn decode(&mut self, dec: &mut BinaryDecoder<'_>, ctx: usize) -> u64 {
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
    pub(super) fn new(tc: &[u8]) -> ClockModel {
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

    pub(super) fn on_move(&mut self) {
        if let Some(p) = self.plies.last_mut() {
            *p += 1;
        }
    }

    pub(super) fn on_open(&mut self) {
        let p = self.plies.last().copied().unwrap_or(0);
        self.plies.push(p.saturating_sub(1));
    }

    pub(super) fn on_close(&mut self) {
        if self.plies.len() > 1 {
            self.plies.pop();
        }
    }

    /// The side (0 or 1) whose clock a comment here shows.
    pub(super) fn side(&self) -> usize {
        match self.plies.last().copied().unwrap_or(0) {
            0 => 1,
            p => ((p - 1) % 2) as usize,
        }
    }

    pub(super) fn context(&self, side: usize) -> usize {
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

    pub(super) fn predict(&self, side: usize) -> i64 {
        self.last[side].map_or(self.base, |l| l + self.inc)
    }

    pub(super) fn update(&mut self, side: usize, clock: i64, symbol: u64) {
        self.last[side] = Some(clock);
        self.last_symbol[side] = Some(symbol);
        self.count[side] = self.count[side].saturating_add(1);
    }

    pub(super) fn encode(&mut self, coder: &mut ClockCoder, enc: &mut BinaryEncoder, clock: u32) {
        let side = self.side();
        let z = zigzag(self.predict(side) - i64::from(clock));
        coder.encode(enc, self.context(side), z);
        self.update(side, i64::from(clock), z);
    }

    pub(super) fn decode(
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
pub(super) enum Eval {
    Centipawns(i64),
    Mate(i64),
}

pub(super) fn format_eval(e: Eval, out: &mut Vec<u8>) {
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
pub(super) fn parse_eval(text: &[u8]) -> Option<Eval> {
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

pub(super) const EVAL_LENGTH_CONTEXTS: usize = 8;

/// Per-game state of the evaluation stream.
#[derive(Default)]
pub(super) struct EvalState {
    prev: i64,
    prev_length: u32,
}

impl EvalState {
    pub(super) fn context(&self) -> usize {
        (self.prev_length as usize)
            .div_ceil(2)
            .min(EVAL_LENGTH_CONTEXTS - 1)
    }
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
    pub(super) fn encode(
        &mut self,
        enc: &mut BinaryEncoder,
        state: &mut EvalState,
        eval: Option<Eval>,
    ) {
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

    pub(super) fn decode(
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
pub(super) const MAX_CLOCK: u32 = 1000 * 3600;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::coder::BinaryDecoder;

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
}
