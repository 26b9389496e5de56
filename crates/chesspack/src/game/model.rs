//! `model`: the learned move model ([`crate::model`]) with range coding.

use shakmaty::{Chess, Move, Position};

use super::{
    GameCodec, GameEnd, Next, PlyCost, engine::decode_count, engine::encode_count, illegal, san,
};
use crate::{
    Bits, Error,
    coder::{Decoder, Encoder, Model, PRECISION, fast_scale, scaled},
    model::{self, Weights},
    order::Order,
};

/// The learned move model's probabilities, 24-bit integer frequencies, a
/// range coder. A forced move costs nothing.
///
/// A stream starts with a mode symbol: mode 0 ends the game with an end
/// symbol (about 1/256 of the probability at every unforced position),
/// mode 1 (for a game that ends where only one move is legal) writes the
/// number of coded plies and of trailing forced plies first. The archive,
/// which knows ply counts, uses [`GameCodec::encode_counted`] without either.
///
/// ```
/// use chesspack::game::{GameCodec, ModelCodec};
/// use shakmaty::{Chess, Position, san::San};
///
/// let start = Chess::default();
/// let mut pos = start.clone();
/// let moves: Vec<_> = ["e4", "e5", "Nf3", "Nc6", "Bb5"].iter().map(|s| {
///     let m = s.parse::<San>().unwrap().to_move(&pos).unwrap();
///     pos.play_unchecked(m);
///     m
/// }).collect();
/// let bits = ModelCodec::new().encode(&start, &moves).unwrap();
/// assert!(bits.len() < 5 * 5);
/// assert_eq!(ModelCodec::new().decode(&start, &bits).unwrap(), moves);
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct ModelCodec {
    fast: bool,
}

/// The end symbol's weight relative to the sum of the moves' weights.
const END_DIVISOR: u64 = 255;

/// Each coded move's (left cumulative, frequency), whether each ply was
/// forced, and the position after the last move.
type Intervals = (Vec<(u32, u32)>, Vec<bool>, Chess);

/// At least the most legal moves a position can have (270, shakmaty's
/// move list capacity; 218 in positions reachable from the start).
const MAX_MOVES: usize = 272;

/// One position's model, reused from ply to ply. The moves are in
/// shakmaty's generation order here; the coder's symbols follow their
/// canonical order (`keys`), which neither side sorts out in full (see
/// [`Scratch::interval`], [`Scratch::decode`]). The frequencies are those
/// [`crate::coder::quantize_fast`] gives the moves in canonical order (then
/// the end symbol), worked out move by move where they are needed.
struct Scratch {
    /// The number of moves.
    n: usize,
    scores: [i32; MAX_MOVES],
    /// The moves' keys in [`Order::Thesis`].
    keys: [u32; MAX_MOVES],
    /// Unnormalised weights (`model::weights_into`), then the end symbol's.
    weights: [u64; MAX_MOVES + 1],
    /// Whether `weights` has an end symbol.
    end: bool,
    /// The sum of `weights` (below 2^49: at most 2^40 each).
    sum: u64,
    /// The symbol that gets the quantisation's remainder: the largest
    /// weight first in canonical order (`n`: the end symbol).
    best: usize,
    /// The model codec's scores before they are copied to `scores`.
    model_scores: Vec<i32>,
    /// The frequencies in generation order, the end symbol's last (the
    /// decoder).
    freqs_by_move: [u32; MAX_MOVES + 1],
}

impl Default for Scratch {
    fn default() -> Scratch {
        Scratch {
            n: 0,
            scores: [0; MAX_MOVES],
            keys: [0; MAX_MOVES],
            weights: [0; MAX_MOVES + 1],
            end: false,
            sum: 0,
            best: 0,
            model_scores: Vec::new(),
            freqs_by_move: [0; MAX_MOVES + 1],
        }
    }
}

thread_local! {
    /// Each thread keeps a scratch model between games: 7 kB that need no
    /// zeroing per game.
    static SPARE: std::cell::Cell<Option<Box<Scratch>>> = const { std::cell::Cell::new(None) };
}

/// A scratch model, the thread's spare when it has one; it goes back
/// when dropped.
struct ScratchGuard(Option<Box<Scratch>>);

impl ScratchGuard {
    fn new() -> ScratchGuard {
        ScratchGuard(Some(
            SPARE
                .try_with(|s| s.take())
                .ok()
                .flatten()
                .unwrap_or_default(),
        ))
    }
}

impl std::ops::Deref for ScratchGuard {
    type Target = Scratch;
    fn deref(&self) -> &Scratch {
        self.0.as_deref().expect("present until dropped")
    }
}

impl std::ops::DerefMut for ScratchGuard {
    fn deref_mut(&mut self) -> &mut Scratch {
        self.0.as_deref_mut().expect("present until dropped")
    }
}

impl Drop for ScratchGuard {
    fn drop(&mut self) {
        let s = self.0.take();
        // Nothing to keep once the thread is going away.
        let _ = SPARE.try_with(|spare| spare.set(s));
    }
}

impl Scratch {
    /// Weights of the scores as `model::weights_into` makes them (and the
    /// end symbol's when `end` is set), their sum, and the symbol that gets
    /// the quantisation's remainder.
    fn weigh(&mut self, best_score: i32) {
        let (n, end) = (self.n, self.end);
        // The largest weight is the table's first, 2^40, that of every
        // score within 16 of the best; the first of them in canonical order
        // gets the remainder.
        let table = model::exp_table();
        let (mut sum, mut best, mut best_key) = (0u64, 0, u32::MAX);
        for (i, ((&score, &key), weight)) in self.scores[..n]
            .iter()
            .zip(&self.keys[..n])
            .zip(&mut self.weights[..n])
            .enumerate()
        {
            let at = model::exp_index(best_score, score);
            let w = table.get(at).copied().unwrap_or(0);
            *weight = w;
            sum += w;
            if at == 0 && key < best_key {
                (best, best_key) = (i, key);
            }
        }
        if end {
            let w = (sum / END_DIVISOR).max(1);
            self.weights[n] = w;
            sum += w;
            // Only with more than 255 moves of the largest weight.
            if w > self.weights[best] {
                best = n;
            }
        }
        self.sum = sum;
        self.best = best;
    }

    /// The number of symbols: the moves, and the end symbol if any.
    fn symbols(&self) -> usize {
        self.n + usize::from(self.end)
    }

    /// [`crate::coder::quantize_fast`]'s scale: it always fits 64 bits here,
    /// since the largest weight is the exp table's first, 2^40, against
    /// fewer than 2^24 frequencies to share out.
    fn scale(&self) -> u64 {
        fast_scale(self.symbols(), u128::from(self.sum)).expect("weights from the exp table")
    }

    /// The range coder interval of move `i`: the frequencies of the moves
    /// with smaller keys, and its own, without listing them.
    fn interval(&self, i: usize) -> (u32, u32) {
        let key = self.keys[i];
        let scale = self.scale();
        let mut assigned = 0u64;
        let mut left = 0u64;
        for (&w, &k) in self.weights[..self.n].iter().zip(&self.keys[..self.n]) {
            let f = u64::from(scaled(w, scale));
            assigned += f;
            left += if k < key { f } else { 0 };
        }
        let mut freq = u64::from(scaled(self.weights[i], scale));
        if self.end {
            assigned += u64::from(scaled(self.weights[self.n], scale));
        }
        let remainder = (1u64 << PRECISION) - assigned;
        if self.best == i {
            freq += remainder;
        } else if self.best < self.n && self.keys[self.best] < key {
            left += remainder;
        }
        (left as u32, freq as u32)
    }

    /// The rank of move `i` by score (0: the model's first choice; ties by
    /// canonical order).
    fn rank(&self, i: usize) -> usize {
        let (s, k) = (self.scores[i], self.keys[i]);
        self.scores[..self.n]
            .iter()
            .zip(&self.keys[..self.n])
            // Branch-free: the outcomes are unpredictable.
            .map(|(&t, &l)| usize::from(t > s) | (usize::from(t == s) & usize::from(l < k)))
            .sum()
    }

    /// The frequencies of all symbols in generation order, the end symbol's
    /// last, into `freqs_by_move`.
    fn fill_frequencies(&mut self) -> &[u32] {
        let scale = self.scale();
        let symbols = self.symbols();
        let mut assigned = 0u64;
        for (f, &w) in self.freqs_by_move.iter_mut().zip(&self.weights[..symbols]) {
            *f = scaled(w, scale);
            assigned += u64::from(*f);
        }
        self.freqs_by_move[self.best] += ((1u64 << PRECISION) - assigned) as u32;
        &self.freqs_by_move[..symbols]
    }

    /// Decodes a move index (generation order; the number of moves for the
    /// end symbol).
    ///
    /// No sort: the moves' frequencies are summed by ranges of keys (two
    /// origin squares each), the decoder's point is found among those sums
    /// in key order, then among the few moves of that range.
    fn decode(&mut self, dec: &mut Decoder) -> Result<usize, Error> {
        let n = self.n;
        self.fill_frequencies();
        // Sums by key bucket (`order::key_bucket`: below 37 here, each the
        // moves from two origin squares).
        let mut sums = [0u32; 64];
        let mut buckets = 0u64;
        for (&k, &f) in self.keys[..n].iter().zip(&self.freqs_by_move) {
            let b = crate::order::key_bucket(k);
            sums[b] += f;
            buckets |= 1 << b;
        }
        let (keys, freqs) = (&self.keys[..n], &self.freqs_by_move[..=n]);
        let end_left = (1u32 << PRECISION) - if self.end { freqs[n] } else { 0 };
        dec.decode_by(|q| {
            if q >= end_left {
                return (n, end_left, freqs[n]);
            }
            let mut left = 0;
            let mut rest = buckets;
            let mut bucket = 0;
            while rest != 0 {
                bucket = rest.trailing_zeros();
                let sum = sums[bucket as usize];
                if q < left + sum {
                    break;
                }
                left += sum;
                rest &= rest - 1;
            }
            // The moves in that bucket, in key order (at most 54: two
            // queens').
            let mut from = [0u32; 64];
            let mut count = 0;
            for (i, &k) in keys.iter().enumerate() {
                if crate::order::key_bucket(k) == bucket as usize && count < from.len() {
                    from[count] = (k << 9) | i as u32;
                    count += 1;
                }
            }
            let from = &mut from[..count];
            from.sort_unstable();
            let mut last = (n, left, 1);
            for &p in from.iter() {
                let i = (p & 0x1ff) as usize;
                last = (i, left, freqs[i]);
                if q < left + freqs[i] {
                    break;
                }
                left += freqs[i];
            }
            last
        })
    }
}

impl ModelCodec {
    /// `model`: the full move model with its opening book.
    pub const fn new() -> ModelCodec {
        ModelCodec { fast: false }
    }

    /// `fast`: the same coding over the fast model ([`model::fast`]), whose
    /// features need no attack maps.
    pub const fn fast() -> ModelCodec {
        ModelCodec { fast: true }
    }

    /// The range coder interval (left cumulative, frequency) of each
    /// unforced move, with or without the end symbol's share, whether each
    /// ply was forced, and the position after the last move; records each
    /// move's rank in `ranks` if given.
    fn intervals(
        &self,
        start: &Chess,
        moves: &[Move],
        end: bool,
        mut ranks: Option<&mut Vec<usize>>,
    ) -> Result<Intervals, Error> {
        let mut intervals = Vec::with_capacity(moves.len());
        let mut forced = Vec::with_capacity(moves.len());
        let mut pos = start.clone();
        let mut scratch = ScratchGuard::new();
        for (ply, &m) in moves.iter().enumerate() {
            let legal = pos.legal_moves();
            forced.push(legal.len() == 1);
            let mut r = 0;
            if legal.len() > 1 {
                self.frequencies_of(&pos, &moves[..ply], &legal, end, &mut scratch);
                // Found by key (unique among legal moves), then checked.
                let key = crate::order::key(m, Order::Thesis);
                let Some(i) = scratch.keys[..legal.len()]
                    .iter()
                    .position(|&k| k == key)
                    .filter(|&i| legal[i] == m)
                else {
                    return Err(illegal(ply, m, &pos));
                };
                intervals.push(scratch.interval(i));
                if ranks.is_some() {
                    r = scratch.rank(i);
                }
            } else if legal.first() != Some(&m) {
                return Err(illegal(ply, m, &pos));
            }
            if let Some(ranks) = ranks.as_deref_mut() {
                ranks.push(r);
            }
            pos.play_unchecked(m);
        }
        Ok((intervals, forced, pos))
    }

    /// The model of `legal`, the legal moves of `pos` in any order (at
    /// most [`MAX_MOVES`]), with an end symbol last when `end` is set, into
    /// `s`.
    fn frequencies_of(
        &self,
        pos: &Chess,
        history: &[Move],
        legal: &[Move],
        end: bool,
        s: &mut Scratch,
    ) {
        let n = legal.len();
        s.n = n;
        s.end = end;
        let best_score = if self.fast {
            model::fast::FastWeights::embedded().scores_and_keys(
                pos,
                history,
                legal,
                &mut s.scores[..n],
                &mut s.keys[..n],
            )
        } else {
            Weights::embedded().scores_into(
                pos,
                history,
                legal,
                model::embedded_book(),
                &mut s.model_scores,
            );
            s.scores[..n].copy_from_slice(&s.model_scores);
            for (k, &m) in s.keys.iter_mut().zip(legal) {
                *k = crate::order::key(m, Order::Thesis);
            }
            s.scores[..n].iter().copied().max().unwrap_or(0)
        };
        s.weigh(best_score);
    }

    fn encode_with_ranks(
        &self,
        start: &Chess,
        moves: &[Move],
        ranks: Option<&mut Vec<usize>>,
    ) -> Result<Bits, Error> {
        // One pass with the end symbol's share (mode 0); the mode is known
        // only at the end.
        let (intervals, forced, end) = self.intervals(start, moves, true, ranks)?;
        let end_legal = end.legal_moves();
        let mode = Model::from_weights(&[255, 1])?;
        let mut enc = Encoder::new();
        if end_legal.len() == 1 {
            // Mode 1 (rare): counts first, no end symbol.
            enc.encode(1, &mode)?;
            let coded = forced.iter().filter(|&&f| !f).count() as u64;
            let trailing = forced.iter().rev().take_while(|&&f| f).count() as u64;
            encode_count(&mut enc, coded)?;
            encode_count(&mut enc, trailing)?;
            for (left, freq) in self.intervals(start, moves, false, None)?.0 {
                enc.encode_interval(left, freq)?;
            }
        } else {
            enc.encode(0, &mode)?;
            for (left, freq) in intervals {
                enc.encode_interval(left, freq)?;
            }
            if end_legal.len() > 1 {
                let mut scratch = ScratchGuard::new();
                self.frequencies_of(&end, moves, &end_legal, true, &mut scratch);
                // The end symbol is last in any order of the moves.
                enc.encode_frequencies(end_legal.len(), scratch.fill_frequencies())?;
            }
        }
        Ok(enc.finish())
    }
}

impl GameCodec for ModelCodec {
    fn name(&self) -> &'static str {
        if self.fast { "fast" } else { "model" }
    }

    fn description(&self) -> &'static str {
        if self.fast {
            "learned piece×from×to and capture weights, softmax, range coder (speed first)"
        } else {
            "learned move model (features of each legal move, opening book, linear softmax), range coder"
        }
    }

    fn model_hash(&self) -> u64 {
        if self.fast {
            model::fast::FastWeights::embedded().hash()
        } else {
            Weights::embedded().hash()
        }
    }

    fn ranks_by_preference(&self) -> bool {
        true
    }

    fn encode(&self, start: &Chess, moves: &[Move]) -> Result<Bits, Error> {
        self.encode_with_ranks(start, moves, None)
    }

    fn decode(&self, start: &Chess, bits: &Bits) -> Result<Vec<Move>, Error> {
        let mut dec = Decoder::new(bits);
        let counts = if dec.decode(&Model::from_weights(&[255, 1])?)? == 1 {
            Some((decode_count(&mut dec)?, decode_count(&mut dec)?))
        } else {
            None
        };
        // The loop of `decode_with_end`, with the move list in this frame
        // (a closure returning it costs a 1.3 kB copy a ply).
        let mut end = GameEnd::new(counts);
        let mut pos = start.clone();
        let mut moves = Vec::new();
        let mut scratch = ScratchGuard::new();
        loop {
            let legal = pos.legal_moves();
            let m = match end.next(legal.len(), moves.len())? {
                Next::End => break,
                Next::Forced => legal[0],
                Next::Read => {
                    let with_end = end.has_end_symbol();
                    self.frequencies_of(&pos, &moves, &legal, with_end, &mut scratch);
                    match legal.get(scratch.decode(&mut dec)?) {
                        Some(&m) => m,
                        None => break, // the end symbol
                    }
                }
            };
            pos.play_unchecked(m);
            moves.push(m);
        }
        Ok(moves)
    }

    fn encode_counted(&self, start: &Chess, moves: &[Move]) -> Result<Bits, Error> {
        let mut enc = Encoder::new();
        for (left, freq) in self.intervals(start, moves, false, None)?.0 {
            enc.encode_interval(left, freq)?;
        }
        Ok(enc.finish())
    }

    fn decode_counted(&self, start: &Chess, bits: &Bits, plies: usize) -> Result<Vec<Move>, Error> {
        let mut dec = Decoder::new(bits);
        let mut pos = start.clone();
        let mut moves = Vec::with_capacity(plies);
        let mut scratch = ScratchGuard::new();
        for ply in 0..plies {
            let legal = pos.legal_moves();
            let m = match legal.len() {
                0 => return Err(Error::InvalidData(format!("no legal move at ply {ply}"))),
                1 => legal[0],
                _ => {
                    self.frequencies_of(&pos, &moves, &legal, false, &mut scratch);
                    *legal
                        .get(scratch.decode(&mut dec)?)
                        .ok_or_else(|| Error::InvalidData("move index out of range".into()))?
                }
            };
            pos.play_unchecked(m);
            moves.push(m);
        }
        Ok(moves)
    }

    fn explain(&self, start: &Chess, moves: &[Move]) -> Result<Vec<PlyCost>, Error> {
        let mut out = Vec::with_capacity(moves.len());
        let mut pos = start.clone();
        let mut scratch = ScratchGuard::new();
        for (ply, &m) in moves.iter().enumerate() {
            let legal = pos.legal_moves();
            let i = legal
                .iter()
                .position(|&x| x == m)
                .ok_or_else(|| illegal(ply, m, &pos))?;
            let (bits, rank) = if legal.len() > 1 {
                self.frequencies_of(&pos, &moves[..ply], &legal, false, &mut scratch);
                let (_, freq) = scratch.interval(i);
                (
                    f64::from(PRECISION) - f64::from(freq).log2(),
                    scratch.rank(i),
                )
            } else {
                (0.0, 0)
            };
            out.push(PlyCost {
                san: san(&pos, m),
                legal: legal.len(),
                rank: Some(rank),
                bits,
            });
            pos.play_unchecked(m);
        }
        Ok(out)
    }

    fn encode_ranked(
        &self,
        start: &Chess,
        moves: &[Move],
    ) -> Result<(Bits, Option<Vec<usize>>), Error> {
        // The ranks come out of the encoding pass itself, so that timing
        // `encode_ranked` times the encoder.
        let mut ranks = Vec::with_capacity(moves.len());
        let bits = self.encode_with_ranks(start, moves, Some(&mut ranks))?;
        Ok((bits, Some(ranks)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::coder::quantize_fast;

    /// The move-by-move frequencies are [`quantize_fast`]'s over the moves
    /// in canonical order, the end symbol last, in every case: with ties,
    /// and with more than 255 moves of the largest weight, where the end
    /// symbol gets the remainder.
    #[test]
    fn frequencies_are_quantize_fasts_in_canonical_order() {
        let mut seed = 12345u64;
        let mut next = || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) as u32
        };
        for case in 0..200 {
            let mut s = Scratch {
                n: [2, 3, 30, 60, 270][case % 5],
                end: case % 2 == 0,
                ..Scratch::default()
            };
            let spread = [0, 8, 100, 5000, 100_000][case / 5 % 5];
            let mut keys: Vec<u32> = (0..s.n as u32).map(|k| k * 7 + (next() % 7)).collect();
            for i in (1..keys.len()).rev() {
                keys.swap(i, next() as usize % (i + 1));
            }
            s.keys[..s.n].copy_from_slice(&keys);
            for score in &mut s.scores[..s.n] {
                *score = if spread == 0 {
                    0
                } else {
                    (next() % spread) as i32
                };
            }
            let best_score = s.scores[..s.n].iter().copied().max().unwrap();
            s.weigh(best_score);
            // The reference: weights sorted by key, end symbol last.
            let mut order: Vec<usize> = (0..s.n).collect();
            order.sort_by_key(|&i| s.keys[i]);
            let mut w: Vec<u64> = order.iter().map(|&i| s.weights[i]).collect();
            if s.end {
                w.push(s.weights[s.n]);
            }
            let mut expected = Vec::new();
            quantize_fast(&w, &mut expected);
            let mut got = vec![0; s.n];
            for (at, &i) in order.iter().enumerate() {
                let (left, freq) = s.interval(i);
                assert_eq!(left, expected[..at].iter().sum::<u32>(), "case {case}");
                assert_eq!(freq, expected[at], "case {case}");
                got[i] = freq;
            }
            let all = s.fill_frequencies().to_vec();
            assert_eq!(&all[..s.n], &got[..], "case {case}");
            if s.end {
                assert_eq!(all[s.n], expected[s.n], "case {case}");
            }
        }
    }
}
