//! `model`: the learned move model ([`crate::model`]) with range coding.

use shakmaty::{Chess, Move, Position};

use super::{
    GameCodec, PlyCost, decode_with_end, engine::decode_count, engine::encode_count, illegal, san,
};
use crate::{
    Bits, Error,
    coder::{Decoder, Encoder, Model, PRECISION, quantize_fast},
    model::{self, Weights},
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
const END_DIVISOR: u128 = 255;

/// Each coded move's (left cumulative, frequency), whether each ply was
/// forced, and the position after the last move.
type Intervals = (Vec<(u32, u32)>, Vec<bool>, Chess);

/// Buffers reused from ply to ply.
#[derive(Default)]
struct Scratch {
    scores: Vec<i32>,
    weights: Vec<u64>,
    freqs: Vec<u32>,
}

/// The rank of move `i` by score (0: the model's first choice; ties by
/// canonical order).
fn rank(scores: &[i32], i: usize) -> usize {
    scores
        .iter()
        .enumerate()
        .filter(|&(j, &s)| s > scores[i] || (s == scores[i] && j < i))
        .count()
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

    fn scores(&self, pos: &Chess, history: &[Move]) -> (shakmaty::MoveList, Vec<i32>) {
        let legal = crate::order::sorted_moves(pos, crate::order::Order::Thesis);
        let scores = self.scores_of(pos, history, &legal);
        (legal, scores)
    }

    /// The scores of `legal`, the legal moves of `pos` in canonical order.
    fn scores_of(&self, pos: &Chess, history: &[Move], legal: &[Move]) -> Vec<i32> {
        if self.fast {
            model::fast::FastWeights::embedded().scores_of(pos, history, legal)
        } else {
            Weights::embedded().scores_of(pos, history, legal, model::embedded_book())
        }
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
        let mut scratch = Scratch::default();
        for (ply, &m) in moves.iter().enumerate() {
            let legal = crate::order::sorted_moves(&pos, crate::order::Order::Thesis);
            let Some(i) = legal.iter().position(|&x| x == m) else {
                return Err(illegal(ply, m, &pos));
            };
            forced.push(legal.len() == 1);
            let mut r = 0;
            if legal.len() > 1 {
                let (freqs, scores) =
                    self.frequencies_of(&pos, &moves[..ply], &legal, end, &mut scratch);
                intervals.push((freqs[..i].iter().sum::<u32>(), freqs[i]));
                r = rank(scores, i);
            }
            if let Some(ranks) = ranks.as_deref_mut() {
                ranks.push(r);
            }
            pos.play_unchecked(m);
        }
        Ok((intervals, forced, pos))
    }

    /// Frequencies (and scores) of `legal`, the sorted legal moves of
    /// `pos`, with an end symbol last when `end` is set.
    fn frequencies_of<'s>(
        &self,
        pos: &Chess,
        history: &[Move],
        legal: &[Move],
        end: bool,
        s: &'s mut Scratch,
    ) -> (&'s [u32], &'s [i32]) {
        if self.fast {
            model::fast::FastWeights::embedded().scores_into(pos, history, legal, &mut s.scores);
        } else {
            Weights::embedded().scores_into(
                pos,
                history,
                legal,
                model::embedded_book(),
                &mut s.scores,
            );
        }
        model::weights_into(&s.scores, &mut s.weights);
        if end {
            let sum: u128 = s.weights.iter().map(|&x| u128::from(x)).sum();
            s.weights.push((sum / END_DIVISOR).max(1) as u64);
        }
        quantize_fast(&s.weights, &mut s.freqs);
        (&s.freqs, &s.scores)
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
        let end_legal = crate::order::sorted_moves(&end, crate::order::Order::Thesis);
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
                let mut scratch = Scratch::default();
                let (freqs, _) = self.frequencies_of(&end, moves, &end_legal, true, &mut scratch);
                enc.encode_frequencies(end_legal.len(), freqs)?;
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
        let mut scratch = Scratch::default();
        decode_with_end(
            start,
            counts,
            |pos| {
                (
                    crate::order::sorted_moves(pos, crate::order::Order::Thesis),
                    (),
                )
            },
            |_, pos, history, legal| {
                let (freqs, _) =
                    self.frequencies_of(pos, history, legal, counts.is_none(), &mut scratch);
                dec.decode_frequencies(freqs)
            },
        )
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
        let mut scratch = Scratch::default();
        for ply in 0..plies {
            let legal = crate::order::sorted_moves(&pos, crate::order::Order::Thesis);
            let m = match legal.len() {
                0 => return Err(Error::InvalidData(format!("no legal move at ply {ply}"))),
                1 => legal[0],
                _ => {
                    let (freqs, _) = self.frequencies_of(&pos, &moves, &legal, false, &mut scratch);
                    *legal
                        .get(dec.decode_frequencies(freqs)?)
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
        for (ply, &m) in moves.iter().enumerate() {
            let (sorted, scores) = self.scores(&pos, &moves[..ply]);
            let i = sorted
                .iter()
                .position(|&x| x == m)
                .ok_or_else(|| illegal(ply, m, &pos))?;
            let (bits, rank) = if sorted.len() > 1 {
                let mut freqs = Vec::new();
                quantize_fast(&model::weights_of(&scores), &mut freqs);
                (
                    f64::from(PRECISION) - f64::from(freqs[i]).log2(),
                    rank(&scores, i),
                )
            } else {
                (0.0, 0)
            };
            out.push(PlyCost {
                san: san(&pos, m),
                legal: sorted.len(),
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
        let ranks = self
            .explain(start, moves)?
            .iter()
            .map(|c| c.rank.unwrap_or(0))
            .collect();
        Ok((self.encode(start, moves)?, Some(ranks)))
    }
}
