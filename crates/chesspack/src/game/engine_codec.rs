//! The thesis' predictive codecs: the embedded engine scores every legal
//! move, the scores become probabilities `p ∝ k^(v − v_min)` (v in pawns),
//! and the move played is coded with a Huffman code built for the position
//! (`engine-huffman`) or with a range coder (`engine-arith`).
//!
//! In positions of the opening book shipped with the `model` codec (the
//! thesis names an opening book as future work), the moves' counts there
//! are blended with those probabilities: `p(m) = (c(m) + 2 p_engine(m)) /
//! (c_total + 2)`, so the book decides where it has seen many games and the
//! engine where it has seen few. On 500 held-out master games (depth 1,
//! k = 80, ideal bits) the book takes `engine-arith` from 3.46 to 2.88
//! bits/ply; 20% of their plies are in the book.

use shakmaty::{Chess, Move, Position};

use super::{GameCodec, MAX_PLIES, PlyCost, illegal, san};
use crate::{
    Bits, Error,
    bits::{BitReader, BitWriter},
    coder::{self, Decoder, Encoder, Huffman, Model, PRECISION},
    engine::{self, MAX_DEPTH},
    model::{book::move_key, book_hash, embedded_book},
};

/// The search depth below each move unless a stream says otherwise.
pub const DEFAULT_DEPTH: u8 = 1;
/// The deepest search a decoder runs for a stream's header unless it was
/// made with a larger depth itself (see [`EngineCodec`]).
pub(crate) const STREAM_DEPTH_LIMIT: u8 = 3;
/// The thesis' k = 80, in tenths.
pub const DEFAULT_K_TENTHS: u16 = 800;
/// Score deficits (centipawns below the best move) are clamped to this: a
/// move more than 0.9 pawn below the best is as likely as any other such
/// move. Players, online ones especially, play moves that lose more than a
/// pawn far more often than `k^−Δ` says at k = 80, and the range coder pays
/// the full `−log2 p` for each (Huffman pays at most about the log of the
/// number of such moves). Ideal bits/ply at depth 1, k = 80, with the book,
/// on 500 training games of each corpus (range coder, Huffman):
///
/// | clamp | masters | lichess |
/// |---|---|---|
/// | 80 | 2.918, 3.010 | 3.356, 3.375 |
/// | 90 | 2.877, 2.974 | 3.353, 3.362 |
/// | 100 | 2.854, 2.943 | 3.372, 3.349 |
/// | 110 | 2.846, 2.921 | 3.404, 3.344 |
///
/// 90 and 100 tie for the range coder over both corpora; at 90 it is below
/// Huffman on both. (With 250, on held-out lichess games, it was 0.64
/// bits/ply above.)
pub(crate) const MAX_DEFICIT: usize = engine::MARGIN as usize;
/// The weight of the engine's probabilities against the book's counts.
const BOOK_WEIGHT: u128 = 2;
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

/// The parameters an engine stream is decoded with: the search depth, the
/// thesis' base k, in tenths (k = 80 is 800), and whether the opening book
/// is consulted. All are written into the stream's header.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct EngineParams {
    /// Plies searched below each move; 0 is quiescence search only.
    pub depth: u8,
    /// k × 10, at least 10 (k = 1: every move equally likely).
    pub k_tenths: u16,
    /// Blend the opening book's counts into the probabilities where the
    /// position is in the book (the default); `false` gives the thesis'
    /// codec as it was.
    pub book: bool,
}

impl Default for EngineParams {
    fn default() -> EngineParams {
        EngineParams {
            depth: DEFAULT_DEPTH,
            k_tenths: DEFAULT_K_TENTHS,
            book: true,
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
/// canonical order falls below the best, the opening book's counts, and
/// which move was played. What [`tune_k`] needs, computed once per position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScoredPly {
    /// Score deficit of every legal move, in [`crate::order::Order::Thesis`].
    pub deficits: Vec<u16>,
    /// The book's count of every legal move, in the same order; empty where
    /// the position is not in the book (or the book is not consulted).
    pub book: Vec<u32>,
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

/// The book's count of each of `legal` (canonical order) in `pos` when
/// `book` (the book is consulted) and more than one move is legal; empty
/// otherwise or when the position is not in the book.
fn book_counts(book: bool, pos: &Chess, legal: &[Move]) -> Vec<u32> {
    if !book || legal.len() < 2 {
        return Vec::new();
    }
    match embedded_book().get(pos) {
        Some(entry) => legal.iter().map(|&m| entry.count(move_key(m))).collect(),
        None => Vec::new(),
    }
}

impl ScoredPly {
    fn new(scores: &[i32], book: Vec<u32>, played: usize) -> ScoredPly {
        ScoredPly {
            deficits: deficits(scores),
            book,
            played: played as u16,
        }
    }

    /// The model's rank of the move played with base `k_tenths`: 0 for its
    /// most probable move. Ties go to the move first in canonical order
    /// (examples: `examples::rank_of_the_move_played`).
    pub fn rank(&self, k_tenths: u16) -> usize {
        Probabilities::new(k_tenths).rank(self)
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

    /// Integer weights of the moves: `k^−Δ` in fixed point, blended with
    /// the book's counts where there are some (`c · Σw + 2w`, shifted right
    /// as one so that the largest fits 62 bits).
    fn weights(&self, deficits: &[u16], book: &[u32]) -> Vec<u64> {
        let engine = deficits
            .iter()
            .map(|&d| self.table[usize::from(d).min(MAX_DEFICIT)]);
        if book.len() != deficits.len() {
            return engine.collect();
        }
        let sum: u128 = engine.clone().map(u128::from).sum();
        let blended: Vec<u128> = engine
            .zip(book)
            .map(|(w, &c)| u128::from(c) * sum + BOOK_WEIGHT * u128::from(w))
            .collect();
        let max = blended.iter().copied().max().unwrap_or(0);
        let shift = (128 - max.leading_zeros()).saturating_sub(62);
        blended.into_iter().map(|b| (b >> shift) as u64).collect()
    }

    /// Integer frequencies summing to 2^24, each ≥ 1.
    fn frequencies(&self, deficits: &[u16], book: &[u32]) -> Vec<u32> {
        coder::quantize(&self.weights(deficits, book)).unwrap_or_else(|_| vec![1; deficits.len()])
    }

    fn huffman(&self, deficits: &[u16], book: &[u32]) -> Huffman {
        Huffman::from_frequencies(&self.frequencies(deficits, book))
    }

    /// The rank of the move played among the weights (ties: canonical
    /// order first).
    fn rank(&self, p: &ScoredPly) -> usize {
        let w = self.weights(&p.deficits, &p.book);
        let i = usize::from(p.played);
        w.iter()
            .enumerate()
            .filter(|&(j, &o)| o > w[i] || (o == w[i] && j < i))
            .count()
    }

    /// What the move played costs in `coding`.
    fn bits(&self, coding: Coding, p: &ScoredPly) -> f64 {
        let played = usize::from(p.played);
        match coding {
            Coding::Huffman => f64::from(self.huffman(&p.deficits, &p.book).length(played)),
            Coding::Arith => {
                let f = self.frequencies(&p.deficits, &p.book);
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

/// Scores every position of a game (and looks it up in the book when
/// `book`); also returns the final position.
fn scored_plies(
    start: &Chess,
    moves: &[Move],
    depth: u8,
    book: bool,
) -> Result<(Vec<Ply>, Chess), Error> {
    let mut out = Vec::with_capacity(moves.len());
    let mut pos = start.clone();
    for (ply, &m) in moves.iter().enumerate() {
        let (scored, _) = engine::score_moves(&pos, depth);
        let Some(i) = scored.iter().position(|(o, _)| *o == m) else {
            return Err(illegal(ply, m, &pos));
        };
        let (legal, scores): (Vec<Move>, Vec<i32>) = scored.into_iter().unzip();
        let counts = book_counts(book, &pos, &legal);
        out.push(Ply {
            legal: legal.len(),
            scored: ScoredPly::new(&scores, counts, i),
        });
        pos.play_unchecked(m);
    }
    Ok((out, pos))
}

/// Plays `moves` from `start` and scores every unforced position, with the
/// book's counts when `params.book` (`params.k_tenths` is not used).
///
/// # Errors
///
/// [`Error::IllegalMove`] when a move is not legal where it is played.
pub fn score_game(
    start: &Chess,
    moves: &[Move],
    params: EngineParams,
) -> Result<Vec<ScoredPly>, Error> {
    let (plies, _) = scored_plies(start, moves, params.depth, params.book)?;
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
/// use chesspack::game::engine_codec::{tune_k, Coding, ScoredPly};
///
/// // Players who always pick the engine's first choice: k grows large.
/// let plies = vec![ScoredPly { deficits: vec![0, 50, 120], book: vec![], played: 0 }; 10];
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
/// defaults, 21 otherwise (a flag, 3 bits of depth, 16 of k × 10, 1 for the
/// book), in both codings.
pub(crate) fn header_bits(params: EngineParams) -> u32 {
    if params == EngineParams::default() {
        1
    } else {
        21
    }
}

/// The k (in tenths) that minimises the total size of `games` streams with
/// the search depth and book use of `params` (its k is not used) whose
/// unforced plies are `plies`, headers included:
/// [`tune_k`]'s k, unless the default k's shorter header saves more than
/// the tuned k does (with few plies a game, or a k close to the default).
///
/// ```
/// use chesspack::game::engine_codec::{
///     Coding, DEFAULT_K_TENTHS, EngineParams, ScoredPly, tune_k, tune_k_for_games,
/// };
///
/// // Players who keep playing the second choice: a small k fits them.
/// let plies = vec![ScoredPly { deficits: vec![0, 50, 120], book: vec![], played: 1 }; 40];
/// let k = tune_k(&plies, Coding::Arith);
/// assert!(k < DEFAULT_K_TENTHS);
/// // Over 40 plies of one game the tuned k pays for its longer header; over
/// // 40 games of one ply each, it does not.
/// let params = EngineParams::default();
/// assert_eq!(tune_k_for_games(&plies, Coding::Arith, 1, params), k);
/// assert_eq!(tune_k_for_games(&plies, Coding::Arith, 40, params), DEFAULT_K_TENTHS);
/// ```
pub fn tune_k_for_games(
    plies: &[ScoredPly],
    coding: Coding,
    games: usize,
    params: EngineParams,
) -> u16 {
    let total = |k_tenths: u16| {
        let header = header_bits(EngineParams { k_tenths, ..params });
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
/// Stream layout: a header (1 bit: default parameters; else 3 bits of
/// depth, 16 bits of k × 10 and a bit for the book), then the moves. Forced
/// moves cost nothing.
///
/// A decoder refuses a stream whose header asks for a deeper search than
/// its own depth or `STREAM_DEPTH_LIMIT` (3), whichever is larger: a
/// search costs about eight times as much a ply deeper (depth 3 scores
/// some 70 plies a second, depth 7 would take hours a ply), so a few bytes
/// of damaged or hostile data could otherwise keep it busy for hours.
///
/// * `engine-huffman`: the header and codewords are plain bits; the header
///   also holds the number of forced plies after the last unforced one
///   (Elias gamma), and decoding runs to the end of the bits, as `index`.
/// * `engine-arith`: everything goes through the range coder, and the
///   stream's length marks the end of the game (`Encoder::pass_end`): a
///   game ends where no move is legal or where the stream does, which costs
///   about a bit a game (no end symbol, no count).
///
/// ```
/// use chesspack::game::{GameCodec, engine_codec::{Coding, EngineCodec}};
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

    /// The codec with the given depth (capped at `MAX_DEPTH`), k (at
    /// least 1.0) and book use.
    pub fn with_params(coding: Coding, params: EngineParams) -> EngineCodec {
        let params = EngineParams {
            depth: params.depth.min(MAX_DEPTH),
            k_tenths: params.k_tenths.max(10),
            book: params.book,
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

    /// The stream of a scored game.
    fn encode_plies(&self, plies: &[Ply]) -> Result<Bits, Error> {
        match self.coding {
            Coding::Huffman => Ok(self.encode_huffman(plies)),
            Coding::Arith => self.encode_arith(plies),
        }
    }

    fn encode_huffman(&self, plies: &[Ply]) -> Bits {
        let mut w = BitWriter::new();
        self.write_header(&mut w);
        let trailing_forced = plies.iter().rev().take_while(|p| p.legal == 1).count();
        w.write_gamma(trailing_forced as u64 + 1);
        for p in plies.iter().filter(|p| p.legal > 1) {
            self.probs
                .huffman(&p.scored.deficits, &p.scored.book)
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
            w.write_bit(self.params.book);
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
        let book = r.read_bit()?;
        Ok(EngineParams {
            depth,
            k_tenths,
            book,
        })
    }

    fn decode_huffman(&self, start: &Chess, bits: &Bits) -> Result<Vec<Move>, Error> {
        let mut r = bits.reader();
        let codec = self.with_stream_params(Self::read_header(&mut r)?)?;
        super::decode_to_end(start, &mut r, |pos, ply, r| {
            let (legal, scores) = codec.score(pos);
            let counts = book_counts(codec.params.book, pos, &legal);
            super::pick(&legal, ply, r, |_, r| {
                codec.probs.huffman(&deficits(&scores), &counts).decode(r)
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
            enc.encode(usize::from(self.params.book), &flag)?;
        }
        for p in plies {
            // The game could have ended before this move.
            enc.pass_end();
            if p.legal > 1 {
                let model = Model::from_frequencies(
                    self.probs.frequencies(&p.scored.deficits, &p.scored.book),
                )?;
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
            let book = dec.decode(&flag)? == 1;
            self.with_stream_params(EngineParams {
                depth,
                k_tenths,
                book,
            })?
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
                let counts = book_counts(codec.params.book, &pos, &legal);
                let model =
                    Model::from_frequencies(codec.probs.frequencies(&deficits(&scores), &counts))?;
                legal[dec.decode(&model)?]
            };
            pos.play_unchecked(m);
            moves.push(m);
        }
        Ok(moves)
    }
}

impl GameCodec for EngineCodec {
    fn as_engine(&self) -> Option<&EngineCodec> {
        Some(self)
    }

    fn model_hash(&self) -> u64 {
        // The engine and the book, whatever the parameters: each stream's
        // header says whether it consults the book, and an archive written
        // with any parameters opens with the default codec.
        crate::engine::model_hash() ^ book_hash().rotate_left(2)
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
                "embedded engine scores moves, p ∝ k^Δeval (with the opening book), Huffman code per position (thesis)"
            }
            Coding::Arith => {
                "embedded engine scores moves, p ∝ k^Δeval (with the opening book), range coder"
            }
        }
    }

    fn encode(&self, start: &Chess, moves: &[Move]) -> Result<Bits, Error> {
        let (plies, _) = scored_plies(start, moves, self.params.depth, self.params.book)?;
        self.encode_plies(&plies)
    }

    fn encode_ranked(
        &self,
        start: &Chess,
        moves: &[Move],
    ) -> Result<(Bits, Option<Vec<usize>>), Error> {
        let (plies, _) = scored_plies(start, moves, self.params.depth, self.params.book)?;
        let ranks = plies.iter().map(|p| self.probs.rank(&p.scored)).collect();
        Ok((self.encode_plies(&plies)?, Some(ranks)))
    }

    fn decode(&self, start: &Chess, bits: &Bits) -> Result<Vec<Move>, Error> {
        match self.coding {
            Coding::Huffman => self.decode_huffman(start, bits),
            Coding::Arith => self.decode_arith(start, bits),
        }
    }

    fn explain(&self, start: &Chess, moves: &[Move]) -> Result<Vec<PlyCost>, Error> {
        let (plies, _) = scored_plies(start, moves, self.params.depth, self.params.book)?;
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
                rank: Some(self.probs.rank(&p.scored)),
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
        // 80^-0.9 = 0.019333, within fixed-point error.
        assert_eq!(t.len(), MAX_DEFICIT + 1);
        let ratio = t[90] as f64 / WEIGHT_ONE as f64;
        assert!((ratio - 80f64.powf(-0.9)).abs() < 1e-6, "{ratio}");
        let uniform = weight_table(10);
        assert!(uniform.iter().all(|&w| w == WEIGHT_ONE));
    }

    #[test]
    fn book_counts_blend_with_the_engine() {
        let probs = Probabilities::new(800);
        let deficits = [0, 30, 90];
        // Out of the book, the engine alone.
        let engine = probs.weights(&deficits, &[]);
        assert!(engine[0] > engine[1] && engine[1] > engine[2]);
        // A book that has seen the third move 30 times in 31 games.
        let w = probs.weights(&deficits, &[1, 0, 30]);
        let f = coder::quantize(&w).unwrap();
        let p: Vec<f64> = f.iter().map(|&f| f64::from(f) / 16_777_216.0).collect();
        let pe: Vec<f64> = engine.iter().map(|&w| w as f64).collect();
        let z: f64 = pe.iter().sum();
        for (i, c) in [1.0, 0.0, 30.0].into_iter().enumerate() {
            let expected = (c + 2.0 * pe[i] / z) / 33.0;
            assert!(
                (p[i] - expected).abs() < 1e-6,
                "{i}: {} vs {expected}",
                p[i]
            );
        }
        // Counts too large for 64 bits are scaled down as one.
        let w = probs.weights(&deficits, &[u32::MAX, 0, u32::MAX / 2]);
        assert!(w.iter().all(|&w| w < 1 << 62) && w[0] > w[2] && w[2] > w[1]);
    }

    #[test]
    fn ranks_break_ties_canonically() {
        let p = ScoredPly::new(&[10, 30, 30, -5], Vec::new(), 2);
        assert_eq!(p.rank(800), 1);
        assert_eq!(
            ScoredPly::new(&[10, 30, 30, -5], Vec::new(), 3).rank(800),
            3
        );
    }
}

/// The examples of crate-private items, run as unit tests.
#[cfg(test)]
mod examples {
    #[test]
    fn example_engine_header_bits() {
        use crate::game::engine_codec::{EngineParams, header_bits};

        assert_eq!(header_bits(EngineParams::default()), 1);
        let deeper = EngineParams {
            depth: 2,
            ..EngineParams::default()
        };
        assert_eq!(header_bits(deeper), 21);
    }

    #[test]
    fn rank_of_the_move_played() {
        let p = super::ScoredPly {
            deficits: vec![0, 30, 30],
            book: vec![],
            played: 2,
        };
        assert_eq!(p.rank(800), 2);
        // The book has seen the third move played far more often.
        let p = super::ScoredPly {
            deficits: vec![0, 30, 30],
            book: vec![1, 0, 40],
            played: 2,
        };
        assert_eq!(p.rank(800), 0);
    }
}
