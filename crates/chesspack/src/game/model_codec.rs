//! `model`: the learned move model ([`crate::model`]) with range coding.

use shakmaty::{Chess, Move, Position};

use super::{GameCodec, PlyCost, illegal, san};
use crate::{
    Bits, Error,
    coder::{Decoder, Encoder, PRECISION, fast_scale, scaled},
    model::{self, Memo, Weights},
    opening::{Aim, OpeningTable},
    order::Order,
};

/// The learned move model's probabilities, 24-bit integer frequencies, a
/// range coder. A forced move costs nothing.
///
/// The stream's length marks the game's end (`Encoder::pass_end`): no
/// end symbol, no count; a game ends where no move is legal or where the
/// stream does, which costs about one bit a game. The archive, which knows
/// ply counts, uses [`GameCodec::encode_counted`], whose streams have no
/// such end.
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
#[derive(Clone, Debug, Default)]
pub struct ModelCodec {
    kind: Kind,
    /// Weights other than the embedded ones (an earlier model, for its
    /// archives), with their hash.
    weights: Option<(&'static Weights, u64)>,
    /// The game's ratings and time control, which `model` reads.
    context: model::GameContext,
    /// The opening table and the label of the opening the mainline
    /// reaches, where the archive stores it before the moves
    /// ([`crate::opening::Aim`]).
    aim: Option<(&'static OpeningTable, u32)>,
}

/// Which of the move models a [`ModelCodec`] codes with.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Kind {
    /// `model`: every feature, the widest hidden layer.
    #[default]
    Model,
    /// `brisk`: [`model::FeatureSet::Quick`] and a narrower hidden layer
    /// (`Weights::brisk`).
    Brisk,
    /// `fast`: the fast model (`model::fast`).
    Fast,
}

/// Each coded move's (left cumulative, frequency) and whether each ply was
/// forced.
type Intervals = (Vec<(u32, u32)>, Vec<bool>);

/// At least the most legal moves a position can have (270, shakmaty's
/// move list capacity; 218 in positions reachable from the start).
const MAX_MOVES: usize = 272;

/// One position's model, reused from ply to ply. The moves are in
/// shakmaty's generation order here; the coder's symbols follow their
/// canonical order (`keys`), which neither side sorts out in full (see
/// [`Scratch::interval`], [`Scratch::decode`]). The frequencies are those
/// [`crate::coder::quantize_fast`] gives the moves in canonical order,
/// worked out move by move where they are needed.
struct Scratch {
    /// The number of moves.
    n: usize,
    scores: [i32; MAX_MOVES],
    /// The moves' keys in [`Order::Thesis`].
    keys: [u32; MAX_MOVES],
    /// Unnormalised weights (`model::weights_into`).
    weights: [u64; MAX_MOVES],
    /// The sum of `weights` (below 2^49: at most 2^40 each).
    sum: u64,
    /// The symbol that gets the quantisation's remainder: the largest
    /// weight first in canonical order.
    best: usize,
    /// The model codec's scores before they are copied to `scores`.
    model_scores: Vec<i32>,
    /// The frequencies in generation order (the decoder).
    freqs_by_move: [u32; MAX_MOVES],
}

impl Default for Scratch {
    fn default() -> Scratch {
        Scratch {
            n: 0,
            scores: [0; MAX_MOVES],
            keys: [0; MAX_MOVES],
            weights: [0; MAX_MOVES],
            sum: 0,
            best: 0,
            model_scores: Vec::new(),
            freqs_by_move: [0; MAX_MOVES],
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
    /// Weights of the scores as `model::weights_into` makes them, their
    /// sum, and the symbol that gets the quantisation's remainder.
    fn weigh(&mut self, best_score: i32) {
        let n = self.n;
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
        self.sum = sum;
        self.best = best;
    }

    /// [`crate::coder::quantize_fast`]'s scale: it always fits 64 bits here,
    /// since the largest weight is the exp table's first, 2^40, against
    /// fewer than 2^24 frequencies to share out.
    fn scale(&self) -> u64 {
        fast_scale(self.n, u128::from(self.sum)).expect("weights from the exp table")
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
        let remainder = (1u64 << PRECISION) - assigned;
        if self.best == i {
            freq += remainder;
        } else if self.keys[self.best] < key {
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

    /// The frequencies of the moves in generation order, into
    /// `freqs_by_move`.
    fn fill_frequencies(&mut self) -> &[u32] {
        let scale = self.scale();
        let n = self.n;
        let mut assigned = 0u64;
        for (f, &w) in self.freqs_by_move.iter_mut().zip(&self.weights[..n]) {
            *f = scaled(w, scale);
            assigned += u64::from(*f);
        }
        self.freqs_by_move[self.best] += ((1u64 << PRECISION) - assigned) as u32;
        &self.freqs_by_move[..n]
    }

    /// Decodes a move index (generation order).
    ///
    /// No sort: the moves' frequencies are summed by ranges of keys (two
    /// origin squares each), the decoder's point is found among those sums
    /// in key order, then among the few moves of that range.
    fn decode<const ENDS: bool>(&mut self, dec: &mut Decoder<'_, ENDS>) -> Result<usize, Error> {
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
        let (keys, freqs) = (&self.keys[..n], &self.freqs_by_move[..n]);
        dec.decode_by(|q| {
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
        ModelCodec {
            kind: Kind::Model,
            weights: None,
            context: model::GameContext::new(),
            aim: None,
        }
    }

    /// `fast`: the same coding over the fast model (`model::fast`), whose
    /// features need no attack maps.
    pub const fn fast() -> ModelCodec {
        ModelCodec {
            kind: Kind::Fast,
            weights: None,
            context: model::GameContext::new(),
            aim: None,
        }
    }

    /// `brisk`: `model`'s coding, its book and its game context over a
    /// quicker model: no static exchanges, checks, mobility or threats
    /// (the quick feature set) and a hidden layer of 64 units.
    /// Between `model` and `fast` in bits and in speed.
    ///
    /// ```
    /// use chesspack::game::{GameCodec, ModelCodec};
    /// use shakmaty::{Chess, Position, san::San};
    ///
    /// let start = Chess::default();
    /// let e4 = "e4".parse::<San>().unwrap().to_move(&start).unwrap();
    /// let bits = ModelCodec::brisk().encode(&start, &[e4]).unwrap();
    /// assert_eq!(ModelCodec::brisk().decode(&start, &bits).unwrap(), [e4]);
    /// assert_ne!(ModelCodec::brisk().model_hash(), ModelCodec::new().model_hash());
    /// ```
    pub const fn brisk() -> ModelCodec {
        ModelCodec {
            kind: Kind::Brisk,
            weights: None,
            context: model::GameContext::new(),
            aim: None,
        }
    }

    /// The learned codec called `name`: `model`, `brisk` or `fast`, the
    /// codecs that code the moves of engine training data.
    ///
    /// ```
    /// use chesspack::game::{GameCodec, ModelCodec};
    ///
    /// assert_eq!(ModelCodec::named("brisk").unwrap().name(), "brisk");
    /// assert!(ModelCodec::named("radix").is_err());
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::UnknownCodec`] for any other name.
    pub fn named(name: &str) -> Result<ModelCodec, Error> {
        [ModelCodec::new(), ModelCodec::brisk(), ModelCodec::fast()]
            .into_iter()
            .find(|c| c.name() == name)
            .ok_or_else(|| Error::UnknownCodec(crate::error::cut(name)))
    }

    /// `model` with the embedded weights if their hash is `hash`
    /// (`Weights::by_hash`); `None` for any other hash.
    pub(crate) fn with_model_hash(hash: u64) -> Option<ModelCodec> {
        Weights::by_hash(hash).map(|w| ModelCodec {
            kind: Kind::Model,
            weights: Some((w, hash)),
            context: model::GameContext::new(),
            aim: None,
        })
    }

    /// This codec for the moves of a game played in `context` (ratings,
    /// time control): its decoder must be given the same context. `fast`
    /// and models from before the context ignore it.
    ///
    /// ```
    /// use chesspack::{game::{GameCodec, ModelCodec}, model::GameContext};
    /// use shakmaty::{Chess, Position, san::San};
    ///
    /// let start = Chess::default();
    /// let e4 = "e4".parse::<San>().unwrap().to_move(&start).unwrap();
    /// let rated = ModelCodec::new().with_context(GameContext::new().with_ratings(Some(1200), Some(1250)));
    /// let bits = rated.encode(&start, &[e4]).unwrap();
    /// assert_eq!(rated.decode(&start, &bits).unwrap(), [e4]);
    /// ```
    #[must_use]
    pub fn with_context(mut self, context: model::GameContext) -> ModelCodec {
        self.context = context;
        self
    }

    /// The weights this codec scores moves with.
    fn weights(&self) -> &'static Weights {
        match (self.kind, self.weights) {
            (_, Some((w, _))) => w,
            (Kind::Brisk, None) => Weights::brisk(),
            _ => Weights::embedded(),
        }
    }

    /// The range coder interval (left cumulative, frequency) of each
    /// unforced move and whether each ply was forced; records each move's
    /// rank in `ranks` if given.
    fn intervals(
        &self,
        start: &Chess,
        moves: &[Move],
        mut ranks: Option<&mut Vec<usize>>,
    ) -> Result<Intervals, Error> {
        let mut intervals = Vec::with_capacity(moves.len());
        let mut forced = Vec::with_capacity(moves.len());
        let mut pos = start.clone();
        let mut scratch = ScratchGuard::new();
        let mut aim = self.aim();
        for (ply, &m) in moves.iter().enumerate() {
            let legal = pos.legal_moves();
            forced.push(legal.len() == 1);
            let aimed = visit(&mut aim, &pos);
            let mut r = 0;
            if legal.len() > 1 {
                self.frequencies_of(
                    &pos,
                    &moves[..ply],
                    &legal,
                    &mut scratch,
                    aimed,
                    Memo::Encoder,
                );
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
        Ok((intervals, forced))
    }

    /// The model of `legal`, the legal moves of `pos` in any order (at
    /// most [`MAX_MOVES`]), into `s`.
    fn frequencies_of(
        &self,
        pos: &Chess,
        history: &[Move],
        legal: &[Move],
        s: &mut Scratch,
        aim: Option<&Aim>,
        memo: Memo,
    ) {
        let n = legal.len();
        s.n = n;
        let best_score = if self.kind == Kind::Fast {
            model::fast::FastWeights::embedded().scores_and_keys(
                pos,
                history,
                legal,
                &mut s.scores[..n],
                &mut s.keys[..n],
            )
        } else {
            self.weights().scores_into(
                pos,
                history,
                legal,
                model::embedded_book(),
                &self.context,
                Some(memo),
                &mut s.model_scores,
            );
            s.scores[..n].copy_from_slice(&s.model_scores);
            for (k, &m) in s.keys.iter_mut().zip(legal) {
                *k = crate::order::key(m, Order::Thesis);
            }
            s.scores[..n].iter().copied().max().unwrap_or(0)
        };
        let best_score = match aim {
            Some(aim) => {
                aim.adjust(pos, legal, &mut s.scores[..n]);
                s.scores[..n].iter().copied().max().unwrap_or(0)
            }
            None => best_score,
        };
        s.weigh(best_score);
    }

    /// The way to the opening the mainline reaches, where the codec knows
    /// it ([`ModelCodec::aimed_at`]).
    fn aim(&self) -> Option<Aim> {
        self.aim.and_then(|(table, label)| Aim::new(table, label))
    }

    fn encode_with_ranks(
        &self,
        start: &Chess,
        moves: &[Move],
        ranks: Option<&mut Vec<usize>>,
    ) -> Result<Bits, Error> {
        let (intervals, forced) = self.intervals(start, moves, ranks)?;
        let mut enc = Encoder::with_ends();
        let mut coded = intervals.into_iter();
        for forced in forced {
            // The game could have ended before this move.
            enc.pass_end();
            if !forced {
                let (left, freq) = coded.next().expect("an interval per unforced ply");
                enc.encode_interval(left, freq)?;
            }
        }
        Ok(enc.finish_at_end())
    }

    /// [`GameCodec::decode`], stopping before a move where `more` (asked
    /// with the moves so far) says no.
    fn decode_to(
        &self,
        start: &Chess,
        bits: &Bits,
        more: &mut dyn FnMut(&[Move]) -> bool,
    ) -> Result<Vec<Move>, Error> {
        let mut dec = Decoder::with_ends(bits);
        let mut pos = start.clone();
        let mut moves = Vec::new();
        let mut scratch = ScratchGuard::new();
        let mut aim = self.aim();
        while more(&moves) {
            let legal = pos.legal_moves();
            // A game ends where no move is legal, or where the stream does.
            if legal.is_empty() || dec.at_end() {
                break;
            }
            if moves.len() as u64 > super::MAX_PLIES {
                return Err(Error::InvalidData("game too long".into()));
            }
            let aimed = visit(&mut aim, &pos);
            let m = if legal.len() == 1 {
                legal[0]
            } else {
                self.frequencies_of(&pos, &moves, &legal, &mut scratch, aimed, Memo::Decoder);
                *legal
                    .get(scratch.decode(&mut dec)?)
                    .ok_or_else(|| Error::InvalidData("move index out of range".into()))?
            };
            pos.play_unchecked(m);
            moves.push(m);
        }
        Ok(moves)
    }

    /// [`GameCodec::decode_counted`] of `plies` moves, stopping before a
    /// move where `more` (asked with the moves so far) says no.
    fn decode_counted_to(
        &self,
        start: &Chess,
        bits: &Bits,
        plies: usize,
        more: &mut dyn FnMut(&[Move]) -> bool,
    ) -> Result<Vec<Move>, Error> {
        let mut dec = Decoder::new(bits);
        let mut pos = start.clone();
        let mut moves = Vec::with_capacity(plies);
        let mut scratch = ScratchGuard::new();
        let mut aim = self.aim();
        for ply in 0..plies {
            if !more(&moves) {
                break;
            }
            let legal = pos.legal_moves();
            let aimed = visit(&mut aim, &pos);
            let m = match legal.len() {
                0 => return Err(Error::InvalidData(format!("no legal move at ply {ply}"))),
                1 => legal[0],
                _ => {
                    self.frequencies_of(&pos, &moves, &legal, &mut scratch, aimed, Memo::Decoder);
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

    /// Codes `moves` from `start` into `enc`, a stream shared with other
    /// games (their count is known to the decoder).
    pub(crate) fn encode_into(
        &self,
        start: &Chess,
        moves: &[Move],
        enc: &mut Encoder,
    ) -> Result<(), Error> {
        for (left, freq) in self.intervals(start, moves, None)?.0 {
            enc.encode_interval(left, freq)?;
        }
        Ok(())
    }

    /// Decodes `plies` moves from `start` out of `dec` into `out`, as
    /// [`ModelCodec::encode_into`] coded them.
    pub(crate) fn decode_from(
        &self,
        start: &Chess,
        plies: usize,
        dec: &mut Decoder<'_>,
        out: &mut Vec<Move>,
    ) -> Result<(), Error> {
        let mut pos = start.clone();
        let first = out.len();
        let mut scratch = ScratchGuard::new();
        for ply in 0..plies {
            let legal = pos.legal_moves();
            let m = match legal.len() {
                0 => return Err(Error::InvalidData(format!("no legal move at ply {ply}"))),
                1 => legal[0],
                _ => {
                    self.frequencies_of(
                        &pos,
                        &out[first..],
                        &legal,
                        &mut scratch,
                        None,
                        Memo::Decoder,
                    );
                    *legal
                        .get(scratch.decode(dec)?)
                        .ok_or_else(|| Error::InvalidData("move index out of range".into()))?
                }
            };
            pos.play_unchecked(m);
            out.push(m);
        }
        Ok(())
    }

    /// Whether this codec's model reads the game context (`fast` and the
    /// models from before it do not).
    fn reads_context(&self) -> bool {
        self.kind != Kind::Fast && self.weights().reads_context()
    }
}

/// The aim for the moves from `pos`, the mainline's next position, where
/// there is one and it is still aiming ([`Aim::visit`]).
fn visit<'a>(aim: &'a mut Option<Aim>, pos: &Chess) -> Option<&'a Aim> {
    let a = aim.as_mut()?;
    if a.visit(pos) { Some(a) } else { None }
}

impl GameCodec for ModelCodec {
    fn name(&self) -> &'static str {
        match self.kind {
            Kind::Model => "model",
            Kind::Brisk => "brisk",
            Kind::Fast => "fast",
        }
    }

    fn description(&self) -> &'static str {
        match self.kind {
            Kind::Model => {
                "learned move model (features of each legal move, opening book, softmax with a hidden layer), range coder"
            }
            Kind::Brisk => {
                "model's coding over a quicker model (no exchanges, checks, mobility or threats; 64 hidden units), range coder"
            }
            Kind::Fast => {
                "learned piece×from×to and capture weights, softmax, range coder (speed first)"
            }
        }
    }

    fn model_hash(&self) -> u64 {
        match (self.kind, self.weights) {
            (Kind::Fast, _) => model::fast::FastWeights::embedded().hash(),
            (_, Some((_, hash))) => hash,
            (Kind::Brisk, None) => Weights::brisk_hash(),
            (Kind::Model, None) => Weights::embedded_hash(),
        }
    }

    fn ranks_by_preference(&self) -> bool {
        true
    }

    fn context_hash(&self) -> u64 {
        if self.reads_context() {
            self.context.fingerprint()
        } else {
            0
        }
    }

    fn aimed_at(&self, table: &'static OpeningTable, label: u32) -> Option<Box<dyn GameCodec>> {
        // A game the table names no opening of: nothing to aim at.
        if Some(label) == table.none_label() {
            return Some(Box::new(self.clone()));
        }
        Aim::new(table, label)?;
        Some(Box::new(ModelCodec {
            aim: Some((table, label)),
            ..self.clone()
        }))
    }

    fn in_context(&self, context: &model::GameContext) -> Box<dyn GameCodec> {
        if self.reads_context() {
            Box::new(self.clone().with_context(context.clone()))
        } else {
            Box::new(self.clone())
        }
    }

    fn encode(&self, start: &Chess, moves: &[Move]) -> Result<Bits, Error> {
        self.encode_with_ranks(start, moves, None)
    }

    fn decode(&self, start: &Chess, bits: &Bits) -> Result<Vec<Move>, Error> {
        self.decode_to(start, bits, &mut |_| true)
    }

    fn decode_prefix(
        &self,
        start: &Chess,
        bits: &Bits,
        counted: Option<usize>,
        more: &mut dyn FnMut(&[Move]) -> bool,
    ) -> Result<Vec<Move>, Error> {
        match counted {
            None => self.decode_to(start, bits, more),
            Some(n) => self.decode_counted_to(start, bits, n, more),
        }
    }

    fn encode_counted(&self, start: &Chess, moves: &[Move]) -> Result<Bits, Error> {
        let mut enc = Encoder::new();
        for (left, freq) in self.intervals(start, moves, None)?.0 {
            enc.encode_interval(left, freq)?;
        }
        Ok(enc.finish())
    }

    fn decode_counted(&self, start: &Chess, bits: &Bits, plies: usize) -> Result<Vec<Move>, Error> {
        self.decode_counted_to(start, bits, plies, &mut |_| true)
    }

    fn explain(&self, start: &Chess, moves: &[Move]) -> Result<Vec<PlyCost>, Error> {
        let mut out = Vec::with_capacity(moves.len());
        let mut pos = start.clone();
        let mut scratch = ScratchGuard::new();
        let mut aim = self.aim();
        for (ply, &m) in moves.iter().enumerate() {
            let legal = pos.legal_moves();
            let aimed = visit(&mut aim, &pos);
            let i = legal
                .iter()
                .position(|&x| x == m)
                .ok_or_else(|| illegal(ply, m, &pos))?;
            let (bits, rank) = if legal.len() > 1 {
                self.frequencies_of(
                    &pos,
                    &moves[..ply],
                    &legal,
                    &mut scratch,
                    aimed,
                    Memo::Encoder,
                );
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
    /// in canonical order in every case: with ties, and with many moves of
    /// the largest weight.
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
            // The reference: weights sorted by key.
            let mut order: Vec<usize> = (0..s.n).collect();
            order.sort_by_key(|&i| s.keys[i]);
            let w: Vec<u64> = order.iter().map(|&i| s.weights[i]).collect();
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
            assert_eq!(all, got, "case {case}");
        }
    }
}

/// The examples of crate-private items, run as unit tests.
#[cfg(test)]
mod examples {
    #[test]
    fn example_model_modelcodec_with_model_hash() {
        use crate::{
            game::{GameCodec, ModelCodec},
            model::Weights,
        };

        let codec = ModelCodec::with_model_hash(Weights::embedded_hash()).unwrap();
        assert_eq!(codec.model_hash(), ModelCodec::new().model_hash());
        assert!(ModelCodec::with_model_hash(1).is_none());
    }
}
