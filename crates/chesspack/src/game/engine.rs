//! The thesis' predictive codecs: the embedded engine scores every legal
//! move, the scores become probabilities `p ∝ k^(v − v_min)` (v in pawns),
//! and the move played is coded with a Huffman code built for the position
//! (`engine-huffman`) or with a range coder (`engine-arith`).

use shakmaty::{Chess, Move, Position};

use super::{GameCodec, MAX_PLIES, PlyCost, illegal, san};
use crate::{
    Bits, Error,
    bits::{BitReader, BitWriter},
    coder::{self, Decoder, Encoder, Huffman, Model, PRECISION},
    engine::{self, MAX_DEPTH},
};

/// The search depth below each move unless a stream says otherwise.
pub const DEFAULT_DEPTH: u8 = 1;
/// The deepest search a decoder runs for a stream's header unless it was
/// made with a larger depth itself (see [`EngineCodec`]).
pub const STREAM_DEPTH_LIMIT: u8 = 3;
/// The thesis' k = 80, in tenths.
pub const DEFAULT_K_TENTHS: u16 = 800;
/// Score deficits (centipawns below the best move) are clamped to this:
/// players, online ones especially, play moves that lose more than a few
/// pawns far more often than `k^−Δ` says, and the range coder would pay
/// dearly for each. Measured on held-out games at depth 1 (tuned k), 250
/// beat 150, 400, 600, 1000 and no clamp for `engine-arith`.
pub const MAX_DEFICIT: usize = engine::MARGIN as usize;
/// Fixed-point scale of the weight table.
const WEIGHT_ONE: u64 = 1 << 40;

/// How an engine codec turns scores into bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Coding {
    /// A Huffman code built per position, as in the thesis.
    Huffman,
    /// A range coder with 24-bit integer frequencies.
    Arith,
}

/// The parameters an engine stream is decoded with: the search depth and
/// the thesis' base k, in tenths (k = 80 is 800). Both are written into the
/// stream's header.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct EngineParams {
    /// Plies searched below each move; 0 is quiescence search only.
    pub depth: u8,
    /// k × 10, at least 10 (k = 1: every move equally likely).
    pub k_tenths: u16,
}

impl Default for EngineParams {
    fn default() -> EngineParams {
        EngineParams {
            depth: DEFAULT_DEPTH,
            k_tenths: DEFAULT_K_TENTHS,
        }
    }
}

/// `k^(−d/100)` in fixed point (`WEIGHT_ONE` = 1) for `d` = 0..=MAX_DEFICIT
/// centipawns, computed with integers only: the 100th root of 1/k by
/// bisection, then repeated multiplication.
fn weight_table(k_tenths: u16) -> Vec<u64> {
    const Q: u32 = 62;
    let one: u128 = 1 << Q;
    // r^100 * k_tenths <= 10, with r in Q62.
    let pow100 = |r: u128| {
        let mut acc = one;
        for _ in 0..100 {
            acc = (acc * r) >> Q;
        }
        acc
    };
    let (mut lo, mut hi) = (0u128, one);
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        if pow100(mid) * u128::from(k_tenths) <= 10 * one {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    let r = lo;
    let mut table = Vec::with_capacity(MAX_DEFICIT + 1);
    let mut w: u128 = u128::from(WEIGHT_ONE) << (Q - 40);
    for _ in 0..=MAX_DEFICIT {
        table.push((w >> (Q - 40)) as u64);
        w = (w * r) >> Q;
    }
    table
}

/// A scored position: how far (centipawns, capped) each legal move in
/// canonical order falls below the best, and which one was played. What
/// [`tune_k`] needs, computed once per position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScoredPly {
    /// Score deficit of every legal move, in [`crate::order::Order::Thesis`].
    pub deficits: Vec<u16>,
    /// The index of the move played.
    pub played: u16,
}

/// How far each score falls below the best, clamped at [`MAX_DEFICIT`].
fn deficits(scores: &[i32]) -> Vec<u16> {
    let best = scores.iter().copied().max().unwrap_or(0);
    scores
        .iter()
        .map(|&v| (i64::from(best) - i64::from(v)).min(MAX_DEFICIT as i64) as u16)
        .collect()
}

impl ScoredPly {
    fn new(scores: &[i32], played: usize) -> ScoredPly {
        ScoredPly {
            deficits: deficits(scores),
            played: played as u16,
        }
    }

    /// The engine's rank of the move played: 0 for its first choice. Ties
    /// go to the move first in canonical order.
    pub fn rank(&self) -> usize {
        let p = usize::from(self.played);
        let d = self.deficits[p];
        self.deficits
            .iter()
            .enumerate()
            .filter(|&(i, &o)| o < d || (o == d && i < p))
            .count()
    }
}

/// The engine codecs' probability model for one set of parameters.
#[derive(Clone, Debug)]
struct Probabilities {
    table: Vec<u64>,
}

impl Probabilities {
    fn new(k_tenths: u16) -> Probabilities {
        Probabilities {
            table: weight_table(k_tenths),
        }
    }

    fn weights(&self, deficits: &[u16]) -> Vec<u64> {
        deficits
            .iter()
            .map(|&d| self.table[usize::from(d).min(MAX_DEFICIT)])
            .collect()
    }

    /// Integer frequencies summing to 2^24, each ≥ 1.
    fn frequencies(&self, deficits: &[u16]) -> Vec<u32> {
        coder::quantize(&self.weights(deficits)).unwrap_or_else(|_| vec![1; deficits.len()])
    }

    fn huffman(&self, deficits: &[u16]) -> Huffman {
        Huffman::from_frequencies(&self.frequencies(deficits))
    }

    /// What the move played costs in `coding`.
    fn bits(&self, coding: Coding, p: &ScoredPly) -> f64 {
        let played = usize::from(p.played);
        match coding {
            Coding::Huffman => f64::from(self.huffman(&p.deficits).length(played)),
            Coding::Arith => {
                let f = self.frequencies(&p.deficits);
                f64::from(PRECISION) - f64::from(f[played]).log2()
            }
        }
    }
}

/// One ply of a game: the number of legal moves and their scores.
struct Ply {
    legal: usize,
    scored: ScoredPly,
}

/// Scores every position of a game; also returns the final position.
fn scored_plies(start: &Chess, moves: &[Move], depth: u8) -> Result<(Vec<Ply>, Chess), Error> {
    let mut out = Vec::with_capacity(moves.len());
    let mut pos = start.clone();
    for (ply, &m) in moves.iter().enumerate() {
        let (scored, _) = engine::score_moves(&pos, depth);
        let Some(i) = scored.iter().position(|(o, _)| *o == m) else {
            return Err(illegal(ply, m, &pos));
        };
        let scores: Vec<i32> = scored.iter().map(|(_, v)| *v).collect();
        out.push(Ply {
            legal: scored.len(),
            scored: ScoredPly::new(&scores, i),
        });
        pos.play_unchecked(m);
    }
    Ok((out, pos))
}

/// Plays `moves` from `start` and scores every unforced position.
///
/// # Errors
///
/// [`Error::IllegalMove`] when a move is not legal where it is played.
pub fn score_game(start: &Chess, moves: &[Move], depth: u8) -> Result<Vec<ScoredPly>, Error> {
    let (plies, _) = scored_plies(start, moves, depth)?;
    Ok(plies
        .into_iter()
        .filter(|p| p.legal > 1)
        .map(|p| p.scored)
        .collect())
}

/// The bits `plies` cost with base `k_tenths` (without the few bits of
/// header and end).
pub fn cost(plies: &[ScoredPly], coding: Coding, k_tenths: u16) -> f64 {
    let probs = Probabilities::new(k_tenths);
    plies.iter().map(|p| probs.bits(coding, p)).sum()
}

/// The k (in tenths) that minimises the cost of `plies`: the thesis'
/// per-archive k. A log-spaced scan from k = 1.1 to 6553.5, then a finer
/// one around the best.
///
/// ```
/// use chesspack::game::engine::{tune_k, Coding, ScoredPly};
///
/// // Players who always pick the engine's first choice: k grows large.
/// let plies = vec![ScoredPly { deficits: vec![0, 50, 120], played: 0 }; 10];
/// assert!(tune_k(&plies, Coding::Arith) > 10_000);
/// ```
pub fn tune_k(plies: &[ScoredPly], coding: Coding) -> u16 {
    let mut best = (f64::INFINITY, DEFAULT_K_TENTHS);
    let consider = |k: u16, best: &mut (f64, u16)| {
        let c = cost(plies, coding, k);
        if c < best.0 || (c == best.0 && k < best.1) {
            *best = (c, k);
        }
    };
    // Coarse: k_tenths = 11 · 1.25^i.
    let mut k = 11f64;
    while k <= 65_535.0 {
        consider(k as u16, &mut best);
        k *= 1.25;
    }
    let centre = f64::from(best.1);
    for step in -8..=8 {
        let k = (centre * 1.03f64.powi(step)).round();
        if (11.0..=65_535.0).contains(&k) {
            consider(k as u16, &mut best);
        }
    }
    best.1
}

/// The bits of an engine stream's header with these parameters: 1 for the
/// defaults, 20 otherwise (a flag, 3 bits of depth, 16 of k × 10), in both
/// codings.
///
/// ```
/// use chesspack::game::engine::{EngineParams, header_bits};
///
/// assert_eq!(header_bits(EngineParams::default()), 1);
/// assert_eq!(header_bits(EngineParams { depth: 2, k_tenths: 800 }), 20);
/// ```
pub fn header_bits(params: EngineParams) -> u32 {
    if params == EngineParams::default() {
        1
    } else {
        20
    }
}

/// The k (in tenths) that minimises the total size of `games` streams at
/// search depth `depth` whose unforced plies are `plies`, headers included:
/// [`tune_k`]'s k, unless the default k's shorter header saves more than
/// the tuned k does (with few plies a game, or a k close to the default).
///
/// ```
/// use chesspack::game::engine::{Coding, DEFAULT_K_TENTHS, ScoredPly, tune_k, tune_k_for_games};
///
/// // Players who keep playing the second choice: a small k fits them.
/// let plies = vec![ScoredPly { deficits: vec![0, 50, 120], played: 1 }; 40];
/// let k = tune_k(&plies, Coding::Arith);
/// assert!(k < DEFAULT_K_TENTHS);
/// // Over 40 plies of one game the tuned k pays for its longer header; over
/// // 40 games of one ply each, it does not.
/// assert_eq!(tune_k_for_games(&plies, Coding::Arith, 1, 1), k);
/// assert_eq!(tune_k_for_games(&plies, Coding::Arith, 40, 1), DEFAULT_K_TENTHS);
/// ```
pub fn tune_k_for_games(plies: &[ScoredPly], coding: Coding, games: usize, depth: u8) -> u16 {
    let total = |k_tenths: u16| {
        let header = header_bits(EngineParams { depth, k_tenths });
        cost(plies, coding, k_tenths) + f64::from(header) * games as f64
    };
    let tuned = tune_k(plies, coding);
    if total(DEFAULT_K_TENTHS) <= total(tuned) {
        DEFAULT_K_TENTHS
    } else {
        tuned
    }
}

/// An engine codec: `engine-huffman` or `engine-arith`.
///
/// Stream layout: a header (1 bit: default parameters; else 3 bits of depth
/// and 16 bits of k × 10), then the moves. Forced moves cost nothing.
///
/// A decoder refuses a stream whose header asks for a deeper search than
/// its own depth or [`STREAM_DEPTH_LIMIT`] (3), whichever is larger: a
/// search costs about eight times as much a ply deeper (depth 3 scores
/// some 70 plies a second, depth 7 would take hours a ply), so a few bytes
/// of damaged or hostile data could otherwise keep it busy for hours.
///
/// * `engine-huffman`: the header and codewords are plain bits; the header
///   also holds the number of forced plies after the last unforced one
///   (Elias gamma), and decoding runs to the end of the bits, as `index`.
/// * `engine-arith`: everything goes through the range coder, and the
///   stream's length marks the end of the game ([`Encoder::pass_end`]): a
///   game ends where no move is legal or where the stream does, which costs
///   about a bit a game (no end symbol, no count).
///
/// ```
/// use chesspack::game::{GameCodec, engine::{Coding, EngineCodec}};
/// use shakmaty::{Chess, Position, san::San};
///
/// let codec = EngineCodec::new(Coding::Arith);
/// let start = Chess::default();
/// let mut pos = start.clone();
/// let mut moves = Vec::new();
/// for san in ["e4", "e5", "Nf3", "Nc6", "Bb5", "a6"] {
///     let m = san.parse::<San>().unwrap().to_move(&pos).unwrap();
///     pos.play_unchecked(m);
///     moves.push(m);
/// }
/// let bits = codec.encode(&start, &moves).unwrap();
/// assert_eq!(codec.decode(&start, &bits).unwrap(), moves);
/// ```
#[derive(Clone, Debug)]
pub struct EngineCodec {
    coding: Coding,
    params: EngineParams,
    probs: Probabilities,
}

impl EngineCodec {
    /// The codec with the default depth and k.
    pub fn new(coding: Coding) -> EngineCodec {
        EngineCodec::with_params(coding, EngineParams::default())
    }

    /// The codec with the given depth (capped at [`MAX_DEPTH`]) and k (at
    /// least 1.0).
    pub fn with_params(coding: Coding, params: EngineParams) -> EngineCodec {
        let params = EngineParams {
            depth: params.depth.min(MAX_DEPTH),
            k_tenths: params.k_tenths.max(10),
        };
        EngineCodec {
            coding,
            params,
            probs: Probabilities::new(params.k_tenths),
        }
    }

    /// The parameters streams are encoded with.
    pub fn params(&self) -> EngineParams {
        self.params
    }

    /// How the codec turns scores into bits.
    pub fn coding(&self) -> Coding {
        self.coding
    }

    /// The codec that decodes a stream with `params` in its header.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidData`] when the stream asks for a deeper search than
    /// this codec's depth or [`STREAM_DEPTH_LIMIT`], whichever is larger.
    fn with_stream_params(&self, params: EngineParams) -> Result<EngineCodec, Error> {
        let limit = self.params.depth.max(STREAM_DEPTH_LIMIT);
        if params.depth > limit {
            return Err(Error::InvalidData(format!(
                "engine stream asks for search depth {}; this decoder allows at most {limit}",
                params.depth
            )));
        }
        Ok(if params == self.params {
            self.clone()
        } else {
            EngineCodec::with_params(self.coding, params)
        })
    }

    fn is_default(&self) -> bool {
        self.params == EngineParams::default()
    }

    /// The legal moves of `pos` in canonical order and their scores.
    fn score(&self, pos: &Chess) -> (Vec<Move>, Vec<i32>) {
        let (scored, _) = engine::score_moves(pos, self.params.depth);
        scored.into_iter().unzip()
    }

    fn encode_huffman(&self, plies: &[Ply]) -> Bits {
        let mut w = BitWriter::new();
        self.write_header(&mut w);
        let trailing_forced = plies.iter().rev().take_while(|p| p.legal == 1).count();
        w.write_gamma(trailing_forced as u64 + 1);
        for p in plies.iter().filter(|p| p.legal > 1) {
            self.probs
                .huffman(&p.scored.deficits)
                .encode(usize::from(p.scored.played), &mut w);
        }
        w.finish()
    }

    fn write_header(&self, w: &mut BitWriter) {
        if self.is_default() {
            w.write_bit(false);
        } else {
            w.write_bit(true);
            w.write(u64::from(self.params.depth), 3);
            w.write(u64::from(self.params.k_tenths), 16);
        }
    }

    fn read_header(r: &mut BitReader<'_>) -> Result<EngineParams, Error> {
        if !r.read_bit()? {
            return Ok(EngineParams::default());
        }
        let depth = r.read(3)? as u8;
        let k_tenths = r.read(16)? as u16;
        if k_tenths < 10 {
            return Err(Error::InvalidData(format!(
                "engine k {k_tenths}/10 below 1"
            )));
        }
        Ok(EngineParams { depth, k_tenths })
    }

    fn decode_huffman(&self, start: &Chess, bits: &Bits) -> Result<Vec<Move>, Error> {
        let mut r = bits.reader();
        let codec = self.with_stream_params(Self::read_header(&mut r)?)?;
        super::decode_to_end(start, &mut r, |pos, ply, r| {
            let (legal, scores) = codec.score(pos);
            super::pick(&legal, ply, r, |_, r| {
                codec.probs.huffman(&deficits(&scores)).decode(r)
            })
        })
    }

    fn encode_arith(&self, plies: &[Ply]) -> Result<Bits, Error> {
        let mut enc = Encoder::with_ends();
        let flag = Model::from_weights(&[1, 1])?;
        if self.is_default() {
            enc.encode(0, &flag)?;
        } else {
            enc.encode(1, &flag)?;
            enc.encode(
                usize::from(self.params.depth),
                &Model::from_weights(&[1; 8])?,
            )?;
            let byte = Model::from_weights(&[1; 256])?;
            enc.encode(usize::from(self.params.k_tenths >> 8), &byte)?;
            enc.encode(usize::from(self.params.k_tenths & 0xff), &byte)?;
        }
        for p in plies {
            // The game could have ended before this move.
            enc.pass_end();
            if p.legal > 1 {
                let model = Model::from_frequencies(self.probs.frequencies(&p.scored.deficits))?;
                enc.encode(usize::from(p.scored.played), &model)?;
            }
        }
        Ok(enc.finish_at_end())
    }

    fn decode_arith(&self, start: &Chess, bits: &Bits) -> Result<Vec<Move>, Error> {
        let mut dec = Decoder::with_ends(bits);
        let flag = Model::from_weights(&[1, 1])?;
        let codec = if dec.decode(&flag)? == 0 {
            self.with_stream_params(EngineParams::default())?
        } else {
            let depth = dec.decode(&Model::from_weights(&[1; 8])?)? as u8;
            let byte = Model::from_weights(&[1; 256])?;
            let hi = dec.decode(&byte)? as u16;
            let lo = dec.decode(&byte)? as u16;
            let k_tenths = (hi << 8) | lo;
            if k_tenths < 10 {
                return Err(Error::InvalidData(format!(
                    "engine k {k_tenths}/10 below 1"
                )));
            }
            self.with_stream_params(EngineParams { depth, k_tenths })?
        };
        let mut pos = start.clone();
        let mut moves = Vec::new();
        loop {
            let (legal, scores) = codec.score(&pos);
            // A game ends where no move is legal, or where the stream does.
            if legal.is_empty() || dec.at_end() {
                break;
            }
            if moves.len() as u64 > MAX_PLIES {
                return Err(Error::InvalidData("game too long".into()));
            }
            let m = if legal.len() == 1 {
                legal[0]
            } else {
                let model = Model::from_frequencies(codec.probs.frequencies(&deficits(&scores)))?;
                legal[dec.decode(&model)?]
            };
            pos.play_unchecked(m);
            moves.push(m);
        }
        Ok(moves)
    }
}

impl GameCodec for EngineCodec {
    fn model_hash(&self) -> u64 {
        crate::engine::model_hash()
    }

    fn name(&self) -> &'static str {
        match self.coding {
            Coding::Huffman => "engine-huffman",
            Coding::Arith => "engine-arith",
        }
    }

    fn description(&self) -> &'static str {
        match self.coding {
            Coding::Huffman => {
                "embedded engine scores moves, p ∝ k^Δeval, Huffman code per position (thesis)"
            }
            Coding::Arith => "embedded engine scores moves, p ∝ k^Δeval, range coder",
        }
    }

    fn encode(&self, start: &Chess, moves: &[Move]) -> Result<Bits, Error> {
        Ok(self.encode_ranked(start, moves)?.0)
    }

    fn encode_ranked(
        &self,
        start: &Chess,
        moves: &[Move],
    ) -> Result<(Bits, Option<Vec<usize>>), Error> {
        let (plies, _) = scored_plies(start, moves, self.params.depth)?;
        let ranks = plies.iter().map(|p| p.scored.rank()).collect();
        let bits = match self.coding {
            Coding::Huffman => self.encode_huffman(&plies),
            Coding::Arith => self.encode_arith(&plies)?,
        };
        Ok((bits, Some(ranks)))
    }

    fn decode(&self, start: &Chess, bits: &Bits) -> Result<Vec<Move>, Error> {
        match self.coding {
            Coding::Huffman => self.decode_huffman(start, bits),
            Coding::Arith => self.decode_arith(start, bits),
        }
    }

    fn explain(&self, start: &Chess, moves: &[Move]) -> Result<Vec<PlyCost>, Error> {
        let (plies, _) = scored_plies(start, moves, self.params.depth)?;
        let mut pos = start.clone();
        let mut out = Vec::with_capacity(moves.len());
        for (p, &m) in plies.iter().zip(moves) {
            let bits = if p.legal == 1 {
                0.0
            } else {
                self.probs.bits(self.coding, &p.scored)
            };
            out.push(PlyCost {
                san: san(&pos, m),
                legal: p.legal,
                rank: Some(p.scored.rank()),
                bits,
            });
            pos.play_unchecked(m);
        }
        Ok(out)
    }

    fn ranks_by_preference(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weight_table_follows_k() {
        let t = weight_table(800);
        assert_eq!(t[0], WEIGHT_ONE);
        // 80^-1 = 0.0125, within fixed-point error.
        let ratio = t[100] as f64 / WEIGHT_ONE as f64;
        assert!((ratio - 0.0125).abs() < 1e-6, "{ratio}");
        let uniform = weight_table(10);
        assert!(uniform.iter().all(|&w| w == WEIGHT_ONE));
    }

    #[test]
    fn ranks_break_ties_canonically() {
        let p = ScoredPly::new(&[10, 30, 30, -5], 2);
        assert_eq!(p.rank(), 1);
        assert_eq!(ScoredPly::new(&[10, 30, 30, -5], 3).rank(), 3);
    }
}
