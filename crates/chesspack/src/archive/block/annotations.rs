//! Lichess's clock and evaluation comments: parsed into numbers, written
//! back byte for byte, and coded adaptively ([`ClockCoder`], [`EvalCoder`]).

use super::{
    lengths::{decode_gamma, encode_gamma},
    unzigzag, zigzag,
};
use crate::coder::{BinaryDecoder, BinaryEncoder, BitModel, decode_low, encode_low};
pub(super) use crate::pgn::comment::{
    ExactEval as Eval, format_annotation, format_compact_clock, format_eval, parse_annotation,
    parse_compact_clock, parse_eval,
};

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
const CLOCK_CONTEXTS: usize = 4 * 7 * 2;
/// Those × the side's predicted clock in
/// quarters of the base time (0 to 3, 4 for the base and more or no base;
/// eighths cost 3.5 kB more on a lichess account's 3.7 M clocks, and the
/// other side's last residual or the side's residual before the last, as
/// further contexts, 9 to 48 kB: too many contexts to learn in a block).
pub(super) const CLOCK_CONTEXTS_RICH: usize = CLOCK_CONTEXTS * 5;

/// Residuals (zigzag of the time used) below this are coded directly.
pub(super) const CLOCK_DIRECT: u64 = 31;
pub(super) const CLOCK_TREE_BITS: u32 = 5;

/// The adaptive probabilities of the clock stream of one block.
pub(crate) struct ClockCoder {
    trees: Vec<BitModel>,
    lengths: Vec<BitModel>,
    /// The tenth of a chess.com reading (`0:02:59.9`): a tree of 4 bits.
    tenths: Vec<BitModel>,
}

impl ClockCoder {
    /// A clock by the side's last residual and the time left.
    pub(crate) fn new() -> ClockCoder {
        let model = BitModel::warm();
        ClockCoder {
            trees: vec![model; CLOCK_CONTEXTS_RICH << CLOCK_TREE_BITS],
            lengths: vec![model; 64],
            tenths: vec![model; 16],
        }
    }

    /// Codes the tenth `t` (0 to 9) of a reading.
    pub(super) fn encode_tenth(&mut self, enc: &mut BinaryEncoder, t: u8) {
        enc.encode_tree(&mut self.tenths, 4, u32::from(t));
    }

    /// The tenth of a reading.
    pub(super) fn decode_tenth(&mut self, dec: &mut BinaryDecoder<'_>) -> Result<u8, String> {
        let t = dec.decode_tree(&mut self.tenths, 4);
        u8::try_from(t)
            .ok()
            .filter(|&t| t <= 9)
            .ok_or_else(|| "a tenth of a second over 9".into())
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
        let mut model = ClockModel {
            base: 0,
            inc: 0,
            class: 0,
            last: [None, None],
            last_symbol: [None, None],
            count: [0, 0],
            plies: Vec::new(),
        };
        model.reset(time_control(tc));
        model
    }

    /// Makes this the model of a new game whose time control is `(base,
    /// increment)` ([`time_control`]), in the room it has (a reader keeps
    /// one for all the games of a block: no allocation a game).
    pub(super) fn reset(&mut self, (base, inc): (i64, i64)) {
        // Wrapping, as release builds always computed it: a tag may say
        // anything (`TimeControl "9223372036854775807+1"`).
        let estimate = base.wrapping_add(inc.wrapping_mul(40));
        self.class = match estimate {
            1..=119 => 0,
            120..=479 => 1,
            480..=1499 => 2,
            _ => 3,
        };
        (self.base, self.inc) = (base, inc);
        self.last = [None, None];
        self.last_symbol = [None, None];
        self.count = [0, 0];
        self.plies.clear();
        self.plies.push(0);
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
        let bucket = |s: Option<u64>| match s {
            None => 0,
            Some(0) => 1,
            Some(1..=2) => 2,
            Some(3..=4) => 3,
            Some(5..=8) => 4,
            Some(9..=16) => 5,
            Some(_) => 6,
        };
        let early = usize::from(self.count[side] < 5);
        let plain = (self.class * 7 + bucket(self.last_symbol[side])) * 2 + early;
        debug_assert!(plain < CLOCK_CONTEXTS);
        // The quarters of the base time left, `(4 × predicted / base)`
        // clamped to 0..=4, counted without a division (one a reading;
        // wide enough for any base, with the product as a release build
        // wrapped it before).
        let left = if self.base > 0 {
            let p = i128::from(4i64.wrapping_mul(self.predict(side)));
            let base = i128::from(self.base);
            (1..=4).map(|k| usize::from(p >= k * base)).sum()
        } else {
            4
        };
        plain * 5 + left
    }

    pub(super) fn predict(&self, side: usize) -> i64 {
        self.last[side].map_or(self.base, |l| l.wrapping_add(self.inc))
    }

    pub(super) fn update(&mut self, side: usize, clock: i64, symbol: u64) {
        self.last[side] = Some(clock);
        self.last_symbol[side] = Some(symbol);
        self.count[side] = self.count[side].saturating_add(1);
    }

    pub(super) fn encode(&mut self, coder: &mut ClockCoder, enc: &mut BinaryEncoder, clock: u32) {
        let side = self.side();
        let z = zigzag(self.predict(side).wrapping_sub(i64::from(clock)));
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
        // The encoder's difference undone, wrapping as it wrapped.
        let clock = u32::try_from(self.predict(side).wrapping_sub(unzigzag(z)))
            .ok()
            .filter(|&c| c <= MAX_CLOCK)
            .ok_or("clock out of range")?;
        self.update(side, i64::from(clock), z);
        Ok(clock)
    }
}

/// Codes evaluations adaptively: a kind (centipawns, mate, text), then the
/// change from the game's previous centipawn evaluation or the mate
/// distance.
///
/// The change is seen from the side that moved (a move seldom improves its own side's evaluation by
/// much), codes its size's bit length by the previous length, by the size
/// of the evaluation before it and by which side that favours, then its
/// sign; the kind by the previous kind; and a mate after a mate as the
/// change of its distance.
pub(crate) struct EvalCoder {
    kind: Vec<BitModel>,
    lengths: Vec<BitModel>,
    first_mantissa: Vec<BitModel>,
    signs: Vec<BitModel>,
    mate_sign: BitModel,
    mate_lengths: Vec<BitModel>,
    mate_changes: Vec<BitModel>,
}

/// The previous change's length (13) × the
/// previous evaluation's bit length (13) × whether it favours the side that
/// moved.
const EVAL_CONTEXTS_RICH: usize = 13 * 13 * 2;

/// Per-game state of the evaluation stream.
#[derive(Default)]
pub(super) struct EvalState {
    prev: i64,
    prev_length: u32,
    /// The previous evaluation's kind (0 centipawns or none, 1 mate, 2 text).
    prev_kind: u32,
    prev_mate: i64,
}

impl EvalState {
    /// The context of a change when `white` moved last.
    fn rich_context(&self, white: bool) -> usize {
        let seen = if white { self.prev } else { -self.prev };
        let size = (64 - self.prev.unsigned_abs().leading_zeros()).min(12) as usize;
        ((self.prev_length.min(12) as usize) * 13 + size) * 2 + usize::from(seen > 0)
    }
}

impl EvalCoder {
    pub(crate) fn new() -> EvalCoder {
        let model = BitModel::warm();
        EvalCoder {
            kind: vec![model; 4 * 3],
            lengths: vec![model; EVAL_CONTEXTS_RICH * 64],
            first_mantissa: vec![model; 64],
            signs: vec![model; 64 * 2],
            mate_sign: model,
            mate_lengths: vec![model; 64],
            mate_changes: vec![model; 64],
        }
    }

    /// Codes `eval` (`None`: kept as text elsewhere), shown after a move of
    /// white (`white`) or of black.
    pub(super) fn encode(
        &mut self,
        enc: &mut BinaryEncoder,
        state: &mut EvalState,
        white: bool,
        eval: Option<Eval>,
    ) {
        let k = state.prev_kind as usize;
        let kind = &mut self.kind[k * 4..(k + 1) * 4];
        match eval {
            Some(Eval::Centipawns(cp)) => {
                enc.encode_tree(kind, 2, 0);
                let d = cp - state.prev;
                let seen = if white { d } else { -d };
                let (v, ctx) = (seen.unsigned_abs() + 1, state.rich_context(white));
                let n = 63 - v.leading_zeros();
                enc.encode_tree(&mut self.lengths[ctx * 64..(ctx + 1) * 64], 6, n);
                if n > 0 {
                    enc.encode_bit(&mut self.first_mantissa[n as usize], v >> (n - 1) & 1 == 1);
                    encode_low(enc, v, n - 1);
                    let better = (cp > state.prev) == white;
                    let favours = state.rich_context(white) & 1;
                    enc.encode_bit(&mut self.signs[n as usize * 2 + favours], better);
                }
                state.prev = cp;
                state.prev_length = n;
                state.prev_kind = 0;
            }
            Some(Eval::Mate(m)) => {
                enc.encode_tree(kind, 2, 1);
                if state.prev_kind == 1 {
                    encode_gamma(enc, &mut self.mate_changes, zigzag(m - state.prev_mate) + 1);
                } else {
                    // Whether the side that moved is mated.
                    enc.encode_bit(&mut self.mate_sign, (m < 0) == white);
                    encode_gamma(enc, &mut self.mate_lengths, m.unsigned_abs() + 1);
                }
                state.prev_mate = m;
                state.prev_kind = 1;
            }
            None => {
                enc.encode_tree(kind, 2, 2);
                state.prev_kind = 2;
            }
        }
    }

    pub(super) fn decode(
        &mut self,
        dec: &mut BinaryDecoder<'_>,
        state: &mut EvalState,
        white: bool,
    ) -> Result<Option<Eval>, String> {
        let k = state.prev_kind as usize;
        let kind = &mut self.kind[k * 4..(k + 1) * 4];
        match dec.decode_tree(kind, 2) {
            0 => {
                let ctx = state.rich_context(white);
                let n = dec.decode_tree(&mut self.lengths[ctx * 64..(ctx + 1) * 64], 6);
                let v = if n == 0 {
                    1
                } else {
                    let top = u64::from(dec.decode_bit(&mut self.first_mantissa[n as usize]));
                    let rest = n - 1;
                    (1u64 << n) | (top << rest) | decode_low(dec, rest)
                };
                let size = i64::try_from(v - 1).map_err(|_| "evaluation out of range")?;
                let better = n > 0 && dec.decode_bit(&mut self.signs[n as usize * 2 + (ctx & 1)]);
                let change = if better == white { size } else { -size };
                let cp = state
                    .prev
                    .checked_add(change)
                    .filter(|c| c.unsigned_abs() < 1 << 40)
                    .ok_or("evaluation out of range")?;
                state.prev = cp;
                state.prev_length = n;
                state.prev_kind = 0;
                Ok(Some(Eval::Centipawns(cp)))
            }
            1 => {
                let m = if state.prev_kind == 1 {
                    let z = decode_gamma(dec, &mut self.mate_changes) - 1;
                    state.prev_mate.checked_add(unzigzag(z))
                } else {
                    let neg = dec.decode_bit(&mut self.mate_sign) == white;
                    let m = decode_gamma(dec, &mut self.mate_lengths) - 1;
                    i64::try_from(m).ok().map(|m| if neg { -m } else { m })
                }
                .filter(|m| m.unsigned_abs() < 1 << 20)
                .ok_or("mate distance out of range")?;
                state.prev_mate = m;
                state.prev_kind = 1;
                Ok(Some(Eval::Mate(m)))
            }
            2 => {
                state.prev_kind = 2;
                Ok(None)
            }
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

    /// A reader keeps one clock model for all the games of a block: reset
    /// for a game, it is the model that a new one for the game would be,
    /// whatever the game before did with it (issue 68).
    #[test]
    fn regression_issue_68_a_reset_clock_model_is_a_new_one() {
        let mut kept = ClockModel::new(b"180+2");
        for tc in [
            &b"60+0"[..],
            b"600+5",
            b"-",
            b"",
            b"1/259200",
            b"+5",
            b"600+",
            b"15+10+3",
        ] {
            // The game before: lines opened and closed, clocks read.
            kept.on_move();
            kept.on_open();
            kept.on_move();
            kept.last = [Some(7), Some(9)];
            kept.last_symbol = [Some(3), None];
            kept.count = [4, 5];
            kept.reset(time_control(tc));
            let new = ClockModel::new(tc);
            assert_eq!(
                (kept.base, kept.inc, kept.class, kept.last, kept.last_symbol),
                (new.base, new.inc, new.class, new.last, new.last_symbol)
            );
            assert_eq!((kept.count, &kept.plies), (new.count, &new.plies));
            assert_eq!((kept.side(), kept.context(0)), (new.side(), new.context(0)));
        }
    }

    /// A clock's context counts the quarters of the base time left as the
    /// division did (`4 × predicted / base`, clamped to 0..=4), for every
    /// base and prediction, a negative one and absurd tags included.
    #[test]
    fn the_quarters_left_are_the_division_s() {
        for base in [
            1i64,
            2,
            3,
            7,
            60,
            180,
            599,
            10_800,
            1 << 40,
            i64::MAX / 3,
            i64::MAX,
        ] {
            for inc in [0i64, 1, 5, 1 << 50] {
                let mut model = ClockModel::new(b"");
                model.reset((base, inc));
                for last in [
                    None,
                    Some(0),
                    Some(1),
                    Some(base / 4),
                    Some(base / 2 - 1),
                    Some(base),
                ]
                .into_iter()
                .chain((0..200).filter_map(|k| (base / 97).max(1).checked_mul(k).map(Some)))
                .filter(|l| l.is_none_or(|l| l < 1 << 60))
                {
                    model.last = [last, last.map(|l| l.saturating_sub(5 * inc + 3))];
                    for side in 0..2 {
                        let p = 4i64.wrapping_mul(model.predict(side));
                        let quarters = (p / base).clamp(0, 4) as usize;
                        assert_eq!(model.context(side) % 5, quarters, "{base} {inc} {last:?}");
                    }
                }
            }
        }
    }

    /// A time control of absurd numbers codes its clocks as release builds
    /// did (wrapping), without an overflow in a debug build (the fuzzer's).
    #[test]
    fn clocks_of_an_absurd_time_control_round_trip() {
        let tc = b"9223372036854775807+9223372036854775807";
        let readings = [60u32, 0, MAX_CLOCK, 7, MAX_CLOCK, 1];
        let mut coder = ClockCoder::new();
        let mut model = ClockModel::new(tc);
        let mut enc = BinaryEncoder::new();
        for &c in &readings {
            model.on_move();
            model.encode(&mut coder, &mut enc, c);
        }
        let bytes = enc.finish();
        let (mut coder, mut model) = (ClockCoder::new(), ClockModel::new(tc));
        let mut dec = BinaryDecoder::new(&bytes);
        for &c in &readings {
            model.on_move();
            assert_eq!(model.decode(&mut coder, &mut dec).unwrap(), c);
        }
    }

    #[test]
    fn clocks_round_trip() {
        let readings = [60u32, 60, 59, 60, 57, 55, 40, 54, 39, 50, 2, 49, 0, 48];
        {
            let mut coder = ClockCoder::new();
            let mut model = ClockModel::new(b"60+0");
            let mut enc = BinaryEncoder::new();
            for &c in &readings {
                model.on_move();
                model.encode(&mut coder, &mut enc, c);
            }
            let bytes = enc.finish();
            let mut coder = ClockCoder::new();
            let mut model = ClockModel::new(b"60+0");
            let mut dec = BinaryDecoder::new(&bytes);
            for &c in &readings {
                model.on_move();
                assert_eq!(model.decode(&mut coder, &mut dec).unwrap(), c);
            }
        }
    }

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
        let mut evals: Vec<Option<Eval>> = [0, 35, -400, 12000, -5, 7]
            .map(|cp| Some(Eval::Centipawns(cp)))
            .into();
        evals.extend([
            Some(Eval::Mate(-7)),
            Some(Eval::Mate(2)),
            Some(Eval::Mate(1)),
        ]);
        evals.extend([
            None,
            Some(Eval::Mate(-3)),
            Some(Eval::Centipawns(-250)),
            None,
        ]);
        {
            let mut coder = EvalCoder::new();
            let mut enc = BinaryEncoder::new();
            let mut state = EvalState::default();
            for (i, e) in evals.iter().enumerate() {
                coder.encode(&mut enc, &mut state, i % 2 == 0, *e);
            }
            let bytes = enc.finish();
            let mut coder = EvalCoder::new();
            let mut dec = BinaryDecoder::new(&bytes);
            let mut state = EvalState::default();
            for (i, e) in evals.iter().enumerate() {
                assert_eq!(coder.decode(&mut dec, &mut state, i % 2 == 0).unwrap(), *e);
            }
            assert!(!dec.overrun());
        }
    }
}
