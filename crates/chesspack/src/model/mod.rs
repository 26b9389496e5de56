//! A learned move model: the probability of every legal move from sparse
//! features of the move and its position, a softmax (conditional logit)
//! whose feature weights depend on the position through a small hidden
//! layer, with integer weights.
//!
//! Features (all binary; see `Features`): piece and target square and
//! piece and origin square by game phase; capture victim × attacker; static
//! exchange result; check; recapture on the square the opponent's last move
//! went to; the piece moving off an attacked square (by any piece, by a
//! lesser one); the target attacked by a pawn, by any piece, defended by
//! our own; castling; promotion piece; distance to the enemy king; moving the
//! piece we moved last; how a check is answered; passed-pawn pushes by rank.
//!
//! The hidden layer reads the position once (see `Inputs`: every piece
//! by square, the opponent's last target, castling rights, pieces en
//! prise, check) and the game's context ([`GameContext`]: the rating bands
//! of the side to move and of its opponent, the time-control class) into
//! `h = clamp(b + Σ u[input], 0, 1)`, 64 units in the shipped model; a
//! feature's weight in that position is its linear weight
//! plus `v[feature] · h`. So the same feature (a knight's target square, a
//! capture, a book share) weighs differently in different positions, and
//! for different players. The sums `b + Σ u[input]` are kept from one
//! position to the next of the same side to move and updated by the inputs
//! that changed (as NNUE engines keep their accumulators).
//!
//! Inference is integer-only: a move's score is the sum of its features'
//! weights (1/1024 nats); the hidden layer is 16-bit fixed point (see
//! `Weights::from_bytes`); probabilities are `exp(score − best)` from a
//! fixed-point table built by integer multiplication, quantised by
//! `crate::coder::quantize`. So encoder and decoder agree bit for bit on
//! every machine and build.
//!
//! The weights ship in `weights.bin` (magic `CPKM`, version 2), written by
//! `chesspack train model`; the `brisk` codec's in `brisk.bin` (magic
//! `CPKQ`: the same layout, a model of the quick feature set), written by
//! `chesspack train model --features quick --hidden 64`.

pub(crate) mod book;
mod context;
pub(crate) mod fast;
mod features;
mod memo;
#[cfg(feature = "train")]
pub(crate) mod train;

pub use context::{GameContext, TimeControl};
pub(crate) use features::FeatureSet;
pub(crate) use features::{
    Attacks, CONTEXT_INPUTS, Context, Features, Inputs, MAX_ACTIVE, N_FEATURES, N_INPUTS,
    POSITION_INPUTS,
};
pub(crate) use memo::Memo;

use std::borrow::Cow;

use shakmaty::{Chess, Move};

use crate::{Error, hash::file_hash, order};

/// Bytes aligned for reading as wider integers in place.
#[repr(C, align(8))]
struct Aligned<B: ?Sized>(B);

/// The embedded model file.
static WEIGHTS_FILE: &[u8] = &ALIGNED_WEIGHTS.0;
static ALIGNED_WEIGHTS: &Aligned<[u8]> = &Aligned(*include_bytes!("weights.bin"));
/// The `brisk` codec's model file ([`FeatureSet::Quick`], 64 hidden units).
static BRISK_FILE: &[u8] = &ALIGNED_BRISK.0;
static ALIGNED_BRISK: &Aligned<[u8]> = &Aligned(*include_bytes!("brisk.bin"));
/// The embedded opening book.
const BOOK_BYTES: &[u8] = include_bytes!("book.bin");
static BOOK_FILE: &[u8] = BOOK_BYTES;
/// Its index, made when the library is compiled.
static BOOK_INDEX: [u32; book::INDEX_LEN] = book::const_index(BOOK_BYTES);
/// The opening book shipped in the library.
pub(crate) fn embedded_book() -> &'static book::Book {
    static BOOK: std::sync::OnceLock<book::Book> = std::sync::OnceLock::new();
    BOOK.get_or_init(|| {
        embedded_file_is_its_hash(BOOK_FILE, || file_hash(BOOK_FILE), BOOK_HASH, "BOOK_HASH");
        book::Book::embedded(BOOK_FILE, &BOOK_INDEX)
    })
}

/// Checks, where an embedded file is first used to code games, that its
/// hash (`hash`, worked out only here) is the constant `name`
/// (`constant`) that archives are tied to: a build whose files changed
/// and whose constants did not would write and read archives under
/// another model's hash. In debug builds (the tests) only: hashing the
/// book and the weights took 1.5 ms of every process that decodes a game
/// (an explorer query that decodes one, 57.3 against 55.8 ms; issue 68),
/// and the unit test `the_embedded_files_have_the_hashes_written_here`
/// checks the constants on every test run.
fn embedded_file_is_its_hash(file: &[u8], hash: impl FnOnce() -> u64, constant: u64, name: &str) {
    if cfg!(debug_assertions) {
        let hash = hash();
        assert_eq!(
            hash,
            constant,
            "the embedded file of {} bytes has the hash {hash:#018x}: {name} must say so",
            file.len()
        );
    }
}

/// [`file_hash`] of the embedded opening book's file: what the streams of
/// codecs that consult the book (`model`, the engine codecs) are tied to.
pub(crate) fn book_hash() -> u64 {
    BOOK_HASH
}

/// The hashes of the embedded files, as constants: opening an archive
/// checks the hash its header names, and hashing the files there read
/// 4 MB of weights and the 3.3 MB book at every start of a process (2 of
/// the 8.4 ms that `chesspack list` of the shipped sample took). Each file
/// is checked against its constant where it is first used to code games
/// in a debug build ([`embedded_book`], [`Weights::embedded`],
/// [`Weights::brisk`]), and the unit test
/// `the_embedded_files_have_the_hashes_written_here` names the new value
/// when a file changes.
const BOOK_HASH: u64 = 0xdd67_73fe_89e3_94aa;
/// [`model_hash`] of the embedded `model` weights ([`Weights::embedded_hash`]).
const EMBEDDED_HASH: u64 = 0x1cdf_dd5e_e641_6566;
/// [`model_hash`] of the embedded `brisk` weights ([`Weights::brisk_hash`]).
const BRISK_HASH: u64 = 0xc4ed_1c1d_0784_1488;

/// Magic bytes of a model file that reads every feature.
pub(crate) const MAGIC: &[u8; 4] = b"CPKM";
/// Magic bytes of a model file that reads [`FeatureSet::Quick`] (otherwise
/// laid out as one with [`MAGIC`]).
pub(crate) const QUICK_MAGIC: &[u8; 4] = b"CPKQ";
/// The model file version this library reads.
pub(crate) const VERSION: u32 = 2;
/// Weights are in units of 1/`SCALE` nats.
pub(crate) const SCALE: i32 = 1024;
/// The hidden layer's pre-activations are in units of 1/`SCALE`; its
/// activations in units of 1/`H_ONE`.
pub(crate) const H_ONE: i32 = 128;
/// The most hidden units a model file may have.
pub(crate) const MAX_HIDDEN: usize = 256;

/// The weights of the move model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Weights {
    w: Cow<'static, [i32]>,
    hidden: Hidden,
    /// The move features the weights are for.
    set: FeatureSet,
}

/// The hidden layer, in fixed point: `h = clamp(b + Σ u[input], 0,
/// SCALE) / (SCALE / H_ONE)` over the position's [`Inputs`], and each move
/// feature `f` adds `(Σ_k h_k · v[f][k]) / H_ONE` to its weight.
#[derive(Clone, Debug, Default)]
struct Hidden {
    /// A number of its own (from [`next_id`]; copies keep it), by which
    /// [`Accumulators`] know the weights their sums are of: an address
    /// could be reused by other weights once these are dropped.
    id: u64,
    size: usize,
    /// The inputs the layer reads: [`N_INPUTS`]; [`CONTEXT_INPUTS`] for a
    /// model from before the earlier moves and the clocks,
    /// [`POSITION_INPUTS`] for one from before the game context (which
    /// ignore what they lack).
    inputs: usize,
    b: Cow<'static, [i32]>,
    u: Cow<'static, [i16]>,
    v: Cow<'static, [i16]>,
}

impl PartialEq for Hidden {
    fn eq(&self, other: &Hidden) -> bool {
        (self.size, self.inputs, &self.b, &self.u, &self.v)
            == (other.size, other.inputs, &other.b, &other.u, &other.v)
    }
}

impl Eq for Hidden {}

/// A new [`Hidden::id`] (never 0, which a default layer, with no units,
/// has).
fn next_id() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

impl Weights {
    /// Reads a model file: magic, version, the number of features, of
    /// position inputs and of hidden units (`u32` each), then the linear
    /// weights (`i32`), the hidden biases (`i32`), the input weights
    /// (`i16`, input-major) and the feature weights (`i16`,
    /// feature-major), all little-endian.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidData`] for a bad magic, version or size.
    pub(crate) fn from_bytes(bytes: &[u8]) -> Result<Weights, Error> {
        let ([w, b, u, v], set) = Weights::sections(bytes)?;
        let i32s =
            |b: &[u8]| -> Vec<i32> { b.chunks_exact(4).map(|c| crate::le::i32_at(c, 0)).collect() };
        let i16s =
            |b: &[u8]| -> Vec<i16> { b.chunks_exact(2).map(|c| crate::le::i16_at(c, 0)).collect() };
        let (b, u) = (i32s(b), i16s(u));
        let inputs = u.len() / b.len().max(1);
        Ok(Weights::with_inputs(i32s(w), b, u, i16s(v), inputs)?.with_set(set))
    }

    /// [`Weights::from_bytes`] read in place where the machine's byte
    /// order and the bytes' alignment allow (the embedded model: no copy,
    /// and only the pages of the weights used are ever read).
    fn from_static(bytes: &'static [u8]) -> Result<Weights, Error> {
        let ([w, b, u, v], set) = Weights::sections(bytes)?;
        if cfg!(target_endian = "little")
            && let (Ok(w), Ok(b), Ok(u), Ok(v)) = (
                bytemuck::try_cast_slice::<u8, i32>(w),
                bytemuck::try_cast_slice::<u8, i32>(b),
                bytemuck::try_cast_slice::<u8, i16>(u),
                bytemuck::try_cast_slice::<u8, i16>(v),
            )
        {
            return Ok(Weights {
                w: Cow::Borrowed(w),
                hidden: Hidden {
                    id: next_id(),
                    size: b.len(),
                    inputs: u.len() / b.len().max(1),
                    b: Cow::Borrowed(b),
                    u: Cow::Borrowed(u),
                    v: Cow::Borrowed(v),
                },
                set,
            });
        }
        Weights::from_bytes(bytes)
    }

    /// The linear weights, biases, input weights and feature weights of a
    /// model file, checked, and the features it reads (by its magic).
    fn sections(bytes: &[u8]) -> Result<([&[u8]; 4], FeatureSet), Error> {
        let bad = |why: String| Error::InvalidData(format!("model file: {why}"));
        let set = match bytes.get(..4) {
            Some(m) if bytes.len() >= 20 && m == MAGIC => FeatureSet::Full,
            Some(m) if bytes.len() >= 20 && m == QUICK_MAGIC => FeatureSet::Quick,
            _ => return Err(bad("not a chesspack model".into())),
        };
        let word = |i: usize| crate::le::u32_at(bytes, i);
        let v = word(4);
        if v != VERSION {
            return Err(bad(format!("version {v}, expected {VERSION}")));
        }
        let (n, inputs, size) = (word(8) as usize, word(12) as usize, word(16) as usize);
        if n != N_FEATURES
            || ![N_INPUTS, CONTEXT_INPUTS, POSITION_INPUTS].contains(&inputs)
            || size > MAX_HIDDEN
        {
            return Err(bad(format!(
                "{n} features, {inputs} inputs and {size} hidden units, expected {N_FEATURES}, {N_INPUTS} (or {CONTEXT_INPUTS} or {POSITION_INPUTS}) and at most {MAX_HIDDEN}"
            )));
        }
        let expected = 20 + 4 * (n + size) + 2 * size * (inputs + n);
        if bytes.len() != expected {
            return Err(bad(format!("{} bytes, expected {expected}", bytes.len())));
        }
        let mut rest = &bytes[20..];
        let mut take = |len: usize| {
            let (head, tail) = rest.split_at(len);
            rest = tail;
            head
        };
        Ok((
            [
                take(4 * n),
                take(4 * size),
                take(2 * size * inputs),
                take(2 * size * n),
            ],
            set,
        ))
    }

    #[cfg(feature = "train")]
    /// Weights from values, one per feature, without a hidden layer.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidData`] unless there are [`N_FEATURES`] of them.
    pub(crate) fn from_values(w: Vec<i32>) -> Result<Weights, Error> {
        Weights::with_hidden(w, Vec::new(), Vec::new(), Vec::new())
    }

    #[cfg(any(test, feature = "train"))]
    /// Weights from values: one per feature (`w`), and for a hidden layer
    /// of `b.len()` units its biases, input weights (`u`, [`N_INPUTS`] ×
    /// units, input-major) and feature weights (`v`, [`N_FEATURES`] ×
    /// units), in the units of [`Weights::from_bytes`].
    ///
    /// # Errors
    ///
    /// [`Error::InvalidData`] when the sizes do not agree.
    pub(crate) fn with_hidden(
        w: Vec<i32>,
        b: Vec<i32>,
        u: Vec<i16>,
        v: Vec<i16>,
    ) -> Result<Weights, Error> {
        Weights::with_inputs(w, b, u, v, N_INPUTS)
    }

    /// [`Weights::with_hidden`] for a layer that reads the first `inputs`
    /// inputs ([`N_INPUTS`], or [`CONTEXT_INPUTS`] or [`POSITION_INPUTS`]
    /// for models from before the earlier moves and clocks or the game
    /// context).
    fn with_inputs(
        w: Vec<i32>,
        b: Vec<i32>,
        u: Vec<i16>,
        v: Vec<i16>,
        inputs: usize,
    ) -> Result<Weights, Error> {
        let size = b.len();
        let inputs = if size == 0 { N_INPUTS } else { inputs };
        if w.len() != N_FEATURES
            || size > MAX_HIDDEN
            || u.len() != size * inputs
            || v.len() != size * N_FEATURES
        {
            return Err(Error::InvalidData(format!(
                "{} weights, {size} hidden units with {} and {} weights, expected {N_FEATURES} and {} and {} per unit",
                w.len(),
                u.len(),
                v.len(),
                N_INPUTS,
                N_FEATURES
            )));
        }
        Ok(Weights {
            w: w.into(),
            hidden: Hidden {
                id: next_id(),
                size,
                inputs,
                b: b.into(),
                u: u.into(),
                v: v.into(),
            },
            set: FeatureSet::Full,
        })
    }

    /// These weights, for the move features of `set`.
    pub(crate) fn with_set(self, set: FeatureSet) -> Weights {
        Weights { set, ..self }
    }

    #[cfg(test)]
    /// The move features these weights are for.
    pub(crate) fn feature_set(&self) -> FeatureSet {
        self.set
    }

    #[cfg(any(test, feature = "train"))]
    /// The model file bytes.
    pub(crate) fn to_bytes(&self) -> Vec<u8> {
        let h = &self.hidden;
        let mut out = match self.set {
            FeatureSet::Full => MAGIC,
            FeatureSet::Quick => QUICK_MAGIC,
        }
        .to_vec();
        let inputs = if h.size == 0 { N_INPUTS } else { h.inputs };
        for x in [VERSION, N_FEATURES as u32, inputs as u32, h.size as u32] {
            out.extend_from_slice(&x.to_le_bytes());
        }
        for x in self.w.iter().chain(h.b.iter()) {
            out.extend_from_slice(&x.to_le_bytes());
        }
        for x in h.u.iter().chain(h.v.iter()) {
            out.extend_from_slice(&x.to_le_bytes());
        }
        out
    }

    /// The weights shipped in the library.
    pub(crate) fn embedded() -> &'static Weights {
        static EMBEDDED: std::sync::OnceLock<Weights> = std::sync::OnceLock::new();
        EMBEDDED.get_or_init(|| {
            let hash = || model_hash(WEIGHTS_FILE);
            embedded_file_is_its_hash(WEIGHTS_FILE, hash, EMBEDDED_HASH, "EMBEDDED_HASH");
            Weights::from_static(WEIGHTS_FILE).expect("embedded model file")
        })
    }

    /// The weights of the `brisk` codec shipped in the library: the
    /// quick feature set ([`FeatureSet::Quick`]) and 64 hidden units.
    pub(crate) fn brisk() -> &'static Weights {
        static BRISK: std::sync::OnceLock<Weights> = std::sync::OnceLock::new();
        BRISK.get_or_init(|| {
            let hash = || model_hash(BRISK_FILE);
            embedded_file_is_its_hash(BRISK_FILE, hash, BRISK_HASH, "BRISK_HASH");
            Weights::from_static(BRISK_FILE).expect("embedded brisk model file")
        })
    }

    /// [`Weights::hash`] of [`Weights::brisk`], from the file's bytes.
    pub(crate) fn brisk_hash() -> u64 {
        BRISK_HASH
    }

    #[cfg(test)]
    /// The number of hidden units.
    pub(crate) fn hidden_units(&self) -> usize {
        self.hidden.size
    }

    #[cfg(any(test, feature = "train"))]
    /// A hash of the model file and the embedded book: what archives
    /// record (`file_hash` of the two).
    pub(crate) fn hash(&self) -> u64 {
        model_hash(&self.to_bytes())
    }

    /// [`Weights::hash`] of the embedded weights, from the file's bytes
    /// without reading the weights (opening an archive checks it).
    pub(crate) fn embedded_hash() -> u64 {
        EMBEDDED_HASH
    }

    /// The embedded `model` weights if their [`Weights::hash`] is `hash`
    /// (`None` for any other hash: until the first release the library
    /// keeps no earlier weights).
    pub(crate) fn by_hash(hash: u64) -> Option<&'static Weights> {
        (hash == Weights::embedded_hash()).then(Weights::embedded)
    }

    /// Whether the model reads the game context (ratings, time control):
    /// models from before it do not.
    pub(crate) fn reads_context(&self) -> bool {
        self.hidden.size > 0 && self.hidden.inputs > POSITION_INPUTS
    }

    /// The legal moves of `pos` in canonical order and their scores (1/1024
    /// nats) in a game of `game`, given the moves that led to it (`history`,
    /// oldest first; the last two matter) and the opening book.
    pub(crate) fn scores_in(
        &self,
        pos: &Chess,
        history: &[Move],
        book: &book::Book,
        game: &GameContext,
    ) -> (shakmaty::MoveList, Vec<i32>) {
        let legal = order::sorted_moves(pos, order::Order::Thesis);
        let mut scores = Vec::with_capacity(legal.len());
        self.scores_into(pos, history, &legal, book, game, None, &mut scores);
        (legal, scores)
    }

    #[cfg(test)]
    /// The scores of `moves`, legal moves of `pos`, with `book`, in an
    /// unknown game context.
    pub(crate) fn scores_of(
        &self,
        pos: &Chess,
        history: &[Move],
        moves: &[Move],
        book: &book::Book,
    ) -> Vec<i32> {
        let mut out = Vec::with_capacity(moves.len());
        self.scores_into(
            pos,
            history,
            moves,
            book,
            &GameContext::new(),
            None,
            &mut out,
        );
        out
    }

    /// [`Weights::scores_of`] in a game's context, into a buffer; with a
    /// [`Memo`], the scores of the book's positions in a game's first
    /// plies are kept there and found again (the same integers).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn scores_into(
        &self,
        pos: &Chess,
        history: &[Move],
        moves: &[Move],
        book: &book::Book,
        game: &GameContext,
        memo: Option<Memo>,
        out: &mut Vec<i32>,
    ) {
        // The book's look-up misses the caches: its index and its first
        // probe are asked for while the position's attacks and inputs are
        // worked out, and the entry's moves before the activations.
        let hash = book::position_hash(pos);
        book.prefetch_index(hash);
        // A position of the book's in a game's first plies: its scores
        // may be kept from an earlier game (`memo`).
        let early = (memo.is_some() && history.len() < memo::PLIES).then(|| book.get_hash(hash));
        let situation = early
            .flatten()
            .and_then(|_| memo::Situation::of(self.hidden.id, hash, pos, history, game))
            .zip(memo);
        if let Some((situation, memo)) = &situation
            && memo::get(*memo, situation, moves, out)
        {
            return;
        }
        let attacked = Attacks::of(pos);
        book.prefetch_position(hash);
        let hd = &self.hidden;
        let inputs = (hd.size > 0).then(|| Inputs::with_attacks(pos, history, game, &attacked));
        let entry = early.unwrap_or_else(|| book.get_hash(hash));
        if let Some(e) = &entry {
            e.prefetch();
        }
        let ctx = Context::with_attacks(pos, history, entry, None, &attacked).with_set(self.set);
        let side = usize::from(shakmaty::Position::turn(pos) == shakmaty::Color::Black);
        ACCUMULATORS.with_borrow_mut(|acc| {
            CACHE.with_borrow_mut(|cache| {
                // The dot products and sums at the processor's widest
                // vectors: the same integers at every width.
                crate::simd::run(
                    #[inline(always)]
                    |width| {
                        let mut h = [0i16; MAX_HIDDEN];
                        let h = &mut h[..hd.size];
                        if let Some(inputs) = &inputs {
                            acc.activations(hd, side, inputs, h);
                        }
                        self.score_moves(width, pos, moves, &ctx, h, cache, out);
                    },
                )
            })
        });
        if let Some((situation, memo)) = &situation {
            memo::put(*memo, situation, moves, out);
        }
    }

    /// The scores of `moves` in `pos` (whose context is `ctx`), with the
    /// hidden layer's activations `h`, into `out`; dot products at `width`.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn score_moves(
        &self,
        width: crate::simd::Width,
        pos: &Chess,
        moves: &[Move],
        ctx: &Context<'_>,
        h: &[i16],
        cache: &mut WeightCache,
        out: &mut Vec<i32>,
    ) {
        let hd = &self.hidden;
        let mut f = Features::default();
        out.clear();
        cache.next_position();
        let WeightCache {
            value,
            stamp,
            now,
            active,
            ends,
            distinct,
        } = cache;
        // Every move's features first, and the distinct features among
        // them: moves share many.
        // Branch-free: whether a feature is new is unpredictable. Each
        // feature is written past the distinct ones so far and kept (the
        // count moves on) only if its stamp was not this position's.
        // (`distinct` only grows: zeroing it a position cost 2% of a
        // scoring's instructions, and nothing past the count is read.)
        // Each move's features are copied whole (a fixed size: no call to
        // copy a few bytes) past the last move's and kept up to their
        // count; `active`, too, only grows.
        let room = moves.len() * MAX_ACTIVE;
        if distinct.len() < room {
            distinct.resize(room, 0);
        }
        if active.len() < room {
            active.resize(room, 0);
        }
        let (mut n_distinct, mut n_active) = (0, 0);
        for &m in moves {
            ctx.features(pos, m, &mut f);
            for &i in f.active() {
                let s = &mut stamp[usize::from(i)];
                distinct[n_distinct] = i;
                n_distinct += usize::from(*s != *now);
                *s = *now;
            }
            let whole: &mut [u16; MAX_ACTIVE] = (&mut active[n_active..n_active + MAX_ACTIVE])
                .try_into()
                .expect("room for a move's features");
            *whole = *f.all();
            n_active += f.active().len();
            ends.push(n_active);
        }
        let distinct = &distinct[..n_distinct];
        // A feature's weight in this position, once each (`simd::dots`
        // asks for the rows of `v`, mostly in far caches, ahead of their
        // products; sorting them by address first cost more than it saved).
        crate::simd::dots(width, h, &hd.v, distinct, |i, dot| {
            value[usize::from(i)] = self.w[usize::from(i)] + dot / H_ONE;
        });
        let mut start = 0;
        for &end in ends.iter() {
            out.push(
                active[start..end]
                    .iter()
                    .map(|&i| value[usize::from(i)])
                    .sum(),
            );
            start = end;
        }
    }
}

/// The vectors the move models' sums use on this machine: `avx512`,
/// `avx2` or `plain` (what a speed was measured with). The environment
/// variable `CHESSPACK_VECTORS` set to `avx2` or `plain` holds them to
/// narrower ones than the processor has, to time those paths on one
/// machine; the sums, and so the bits, are the same at every width.
///
/// ```
/// assert!(["avx512", "avx2", "plain"].contains(&chesspack::model::vectors()));
/// ```
pub fn vectors() -> &'static str {
    crate::simd::name()
}

/// The hash archives record for a model file: its own and the embedded
/// book's.
fn model_hash(file: &[u8]) -> u64 {
    file_hash(file) ^ book_hash().rotate_left(1)
}

thread_local! {
    static CACHE: std::cell::RefCell<WeightCache> = std::cell::RefCell::new(WeightCache::default());
    static ACCUMULATORS: std::cell::RefCell<Accumulators> = std::cell::RefCell::new(Accumulators::default());
}

/// The weights of the features worked out in the current position (a
/// value counts when its stamp is the position's), and the position's
/// features: every move's, one after the other, and the distinct ones.
#[derive(Default)]
struct WeightCache {
    value: Vec<i32>,
    stamp: Vec<u32>,
    now: u32,
    /// The features of every move, one after the other; what follows the
    /// last move's is left from earlier positions.
    active: Vec<u16>,
    /// Where each move's features end in `active`.
    ends: Vec<usize>,
    /// The distinct features of the position, first; what follows them
    /// is left from earlier positions.
    distinct: Vec<u16>,
}

impl WeightCache {
    fn next_position(&mut self) {
        if self.stamp.len() != N_FEATURES || self.now == u32::MAX {
            self.value = vec![0; N_FEATURES];
            self.stamp = vec![0; N_FEATURES];
            self.now = 0;
        }
        self.now += 1;
        self.ends.clear();
    }
}

/// The hidden layer's sums `b + Σ u[input]` of the last position of
/// each side to move, updated from one position to the next by the inputs
/// that changed (as NNUE engines update their accumulators): the inputs
/// are seen from the side to move, so a position shares most of them with
/// the position two plies before, not with the one just before. Integer
/// sums, so the result is the sum from scratch, bit for bit.
#[derive(Default)]
struct Accumulators {
    /// The [`Hidden::id`] of the weights the sums are of.
    model: u64,
    /// Per side to move: the inputs read (a bit each) and their sums.
    sides: [(InputSet, Vec<i32>); 2],
}

/// A set of inputs, a bit each (a position has each input at most once).
type InputSet = [u64; N_INPUTS.div_ceil(64)];

impl Accumulators {
    /// The activations of `hidden` for `inputs` (of a position whose side
    /// to move is `side`), in 1/[`H_ONE`].
    #[inline(always)]
    fn activations(&mut self, hidden: &Hidden, side: usize, inputs: &Inputs, h: &mut [i16]) {
        let k = hidden.size;
        if self.model != hidden.id {
            self.model = hidden.id;
            self.sides = Default::default();
        }
        // A model from before the game context reads the position's
        // inputs only.
        let mut now: InputSet = [0; N_INPUTS.div_ceil(64)];
        let mut count = 0;
        for &p in inputs.active() {
            let p = usize::from(p);
            if p < hidden.inputs {
                debug_assert_eq!(now[p / 64] >> (p % 64) & 1, 0, "input {p} twice");
                now[p / 64] |= 1 << (p % 64);
                count += 1;
            }
        }
        let (last, acc) = &mut self.sides[side];
        // An input only in the last set comes off, one only in the new
        // set goes on.
        let changed: u32 = last
            .iter()
            .zip(&now)
            .map(|(a, b)| (a ^ b).count_ones())
            .sum();
        let row = |p: usize| &hidden.u[p * k..][..k];
        if acc.len() != k || changed as usize > count {
            acc.clear();
            acc.extend_from_slice(&hidden.b);
            for (w, &bits) in now.iter().enumerate() {
                let mut bits = bits;
                while bits != 0 {
                    add(acc, row(w * 64 + bits.trailing_zeros() as usize));
                    bits &= bits - 1;
                }
            }
        } else {
            for (w, (&old, &new)) in last.iter().zip(&now).enumerate() {
                let (mut off, mut on) = (old & !new, new & !old);
                while off != 0 {
                    sub(acc, row(w * 64 + off.trailing_zeros() as usize));
                    off &= off - 1;
                }
                while on != 0 {
                    add(acc, row(w * 64 + on.trailing_zeros() as usize));
                    on &= on - 1;
                }
            }
        }
        *last = now;
        for (h, &a) in h.iter_mut().zip(acc.iter()) {
            *h = (a.clamp(0, SCALE) / (SCALE / H_ONE)) as i16;
        }
    }
}

#[inline(always)]
fn add(acc: &mut [i32], row: &[i16]) {
    for (a, &u) in acc.iter_mut().zip(row) {
        *a += i32::from(u);
    }
}

#[inline(always)]
fn sub(acc: &mut [i32], row: &[i16]) {
    for (a, &u) in acc.iter_mut().zip(row) {
        *a -= i32::from(u);
    }
}

/// Reads a file of `n` weights: `magic`, version (u32), count (u32), the
/// weights as `i32`, all little-endian (`what` names it in errors).
pub(crate) fn read_weights_file(
    bytes: &[u8],
    magic: &[u8; 4],
    version: u32,
    n: usize,
    what: &str,
) -> Result<Vec<i32>, Error> {
    let bad = |why: String| Error::InvalidData(format!("{what}: {why}"));
    if bytes.len() < 12 || &bytes[..4] != magic {
        return Err(bad("not a chesspack model".into()));
    }
    let v = crate::le::u32_at(bytes, 4);
    if v != version {
        return Err(bad(format!("version {v}, expected {version}")));
    }
    let count = crate::le::u32_at(bytes, 8) as usize;
    if count != n || bytes.len() != 12 + 4 * n {
        return Err(bad(format!("{count} weights, expected {n}")));
    }
    Ok(bytes[12..]
        .chunks_exact(4)
        .map(|c| crate::le::i32_at(c, 0))
        .collect())
}

/// The bytes of a weights file (see [`read_weights_file`]).
pub(crate) fn weights_file(magic: &[u8; 4], version: u32, w: &[i32]) -> Vec<u8> {
    let mut out = magic.to_vec();
    out.extend_from_slice(&version.to_le_bytes());
    out.extend_from_slice(&(w.len() as u32).to_le_bytes());
    for v in w {
        out.extend_from_slice(&v.to_le_bytes());
    }
    out
}

/// `exp(-i / 64)` in 40-bit fixed point for `i < EXP_TABLE_LEN`, built by
/// repeated integer multiplication, so identical everywhere.
pub(crate) const EXP_TABLE_LEN: usize = 64 * 26;

pub(crate) fn exp_table() -> &'static [u64; EXP_TABLE_LEN] {
    static TABLE: std::sync::OnceLock<Box<[u64; EXP_TABLE_LEN]>> = std::sync::OnceLock::new();
    TABLE.get_or_init(|| {
        // round(2^52 · e^(−1/64)); values carry 72 fraction bits.
        const STEP: u128 = 4_433_777_786_845_138;
        let mut t = Box::new([0u64; EXP_TABLE_LEN]);
        let mut v: u128 = 1 << 72;
        for slot in t.iter_mut() {
            *slot = (v >> 32) as u64;
            v = (v * STEP) >> 52;
        }
        t
    })
}

/// The embedded `model`'s probability of each legal move of `pos` after
/// the moves of `history` (oldest first; the last two matter) in a game of
/// `context`: the likeliest first, ties in canonical order. The
/// probabilities are the weights that the coder quantises, normalised.
///
/// ```
/// use chesspack::model::{GameContext, predict};
///
/// let pos = shakmaty::Chess::default();
/// let moves = predict(&pos, &[], &GameContext::new());
/// assert_eq!(moves.len(), 20);
/// assert!(moves[0].1 >= moves[1].1 && moves[19].1 > 0.0);
/// assert!((moves.iter().map(|(_, p)| p).sum::<f64>() - 1.0).abs() < 1e-9);
/// ```
pub fn predict(pos: &Chess, history: &[Move], context: &GameContext) -> Vec<(Move, f64)> {
    let (legal, scores) = Weights::embedded().scores_in(pos, history, embedded_book(), context);
    let weights = weights_of(&scores);
    let sum: f64 = weights.iter().map(|&w| w as f64).sum();
    let mut order: Vec<usize> = (0..legal.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(scores[i]));
    order
        .into_iter()
        .map(|i| (legal[i], weights[i] as f64 / sum))
        .collect()
}

/// Unnormalised weights `exp(score − best)` of `scores`, for
/// [`crate::coder::quantize`].
pub(crate) fn weights_of(scores: &[i32]) -> Vec<u64> {
    let mut out = Vec::with_capacity(scores.len() + 1);
    weights_into(scores, &mut out);
    out
}

/// [`weights_of`] into a buffer.
pub(crate) fn weights_into(scores: &[i32], out: &mut Vec<u64>) {
    let best = scores.iter().copied().max().unwrap_or(0);
    let table = exp_table();
    out.clear();
    out.extend(
        scores
            .iter()
            .map(|&s| table.get(exp_index(best, s)).copied().unwrap_or(0)),
    );
}

/// Where the weight of `score` lies in the exp table when the best score
/// is `best`: the difference from 1/1024 nats to 1/64 nats (0 for every
/// score within 16 of the best; past the table the weight is 0).
#[inline]
pub(crate) fn exp_index(best: i32, score: i32) -> usize {
    ((i64::from(best) - i64::from(score)) >> 4) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The constants of the embedded files' hashes are those of the files
    /// (a file changed: write the value the failure names).
    #[test]
    fn the_embedded_files_have_the_hashes_written_here() {
        let book = file_hash(BOOK_FILE);
        assert_eq!(book, BOOK_HASH, "BOOK_HASH is {book:#018x}");
        let model = file_hash(WEIGHTS_FILE) ^ book.rotate_left(1);
        assert_eq!(model, EMBEDDED_HASH, "EMBEDDED_HASH is {model:#018x}");
        let brisk = file_hash(BRISK_FILE) ^ book.rotate_left(1);
        assert_eq!(brisk, BRISK_HASH, "BRISK_HASH is {brisk:#018x}");
    }

    #[test]
    fn exp_table_is_exp() {
        let t = exp_table();
        assert_eq!(t[0], 1 << 40);
        for i in [1usize, 64, 640, 1600] {
            let expected = (1u64 << 40) as f64 * (-(i as f64) / 64.0).exp();
            assert!(
                (t[i] as f64 - expected).abs() <= expected * 1e-9 + 2.0,
                "{i}"
            );
        }
    }

    /// The accumulators' updates give the sums from scratch, from one
    /// position to the next, across games and when the model changes
    /// (`brisk`'s weights have fewer hidden units).
    #[test]
    fn accumulators_equal_sums_from_scratch() {
        let scratch = |hd: &Hidden, inputs: &Inputs| -> Vec<i16> {
            let k = hd.size;
            let mut acc = hd.b.to_vec();
            for &p in inputs
                .active()
                .iter()
                .filter(|&&p| usize::from(p) < hd.inputs)
            {
                for (a, &u) in acc.iter_mut().zip(&hd.u[usize::from(p) * k..][..k]) {
                    *a += i32::from(u);
                }
            }
            acc.iter()
                .map(|a| (a.clamp(&0, &SCALE) / (SCALE / H_ONE)) as i16)
                .collect()
        };
        let games = [
            "1. e4 c5 2. Nf3 d6 3. d4 cxd4 4. Nxd4 Nf6 5. Nc3 a6 6. Be3 e5 7. Nb3 Be6 8. f3 Be7 \
             9. Qd2 O-O 10. O-O-O Nbd7 11. g4 b5 12. g5 b4 13. Ne2 Ne8 14. f4 a5 15. f5 a4 \
             16. Nbd4 exd4 17. Nxd4 b3 18. Kb1 bxc2+ 19. Nxc2 Bb3 20. axb3 axb3 21. Na3 Rxa3 *",
            "1. d4 d5 2. c4 e6 3. Nc3 Nf6 4. Bg5 Be7 5. e3 O-O 6. Nf3 h6 7. Bxf6 Bxf6 8. cxd5 exd5 *",
        ];
        let game = GameContext::new().with_ratings(Some(1500), Some(1900));
        let other = Weights::brisk();
        let mut acc = Accumulators::default();
        let mut checked = 0;
        for alternate in [false, true] {
            for text in games {
                let mut pos = Chess::default();
                let moves = crate::pgn::movetext_moves(text.as_bytes(), &pos).unwrap();
                let mut history = Vec::new();
                for m in moves {
                    let inputs = Inputs::in_context(&pos, &history, &game);
                    let side =
                        usize::from(shakmaty::Position::turn(&pos) == shakmaty::Color::Black);
                    let models = if alternate {
                        vec![Weights::embedded(), other]
                    } else {
                        vec![Weights::embedded()]
                    };
                    for w in models {
                        let mut h = vec![0; w.hidden.size];
                        acc.activations(&w.hidden, side, &inputs, &mut h);
                        assert_eq!(h, scratch(&w.hidden, &inputs));
                        checked += 1;
                    }
                    shakmaty::Position::play_unchecked(&mut pos, m);
                    history.push(m);
                }
            }
        }
        assert!(checked > 150);
    }

    #[test]
    fn hidden_layer_arithmetic() {
        // One unit whose bias alone sets it to 1 (or to 0), adding 2.0
        // nats to every feature's weight; the linear weights are 0.
        let pos = Chess::default();
        let moves = order::sorted_moves(&pos, order::Order::Thesis);
        let book = book::Book::default();
        let unit = |bias: i32| {
            Weights::with_hidden(
                vec![0; N_FEATURES],
                vec![bias],
                vec![0; N_INPUTS],
                vec![2048; N_FEATURES],
            )
            .unwrap()
        };
        let on = unit(SCALE).scores_of(&pos, &[], &moves, &book);
        let off = unit(-1).scores_of(&pos, &[], &moves, &book);
        let half = unit(SCALE / 2).scores_of(&pos, &[], &moves, &book);
        let ctx = Context::new(&pos, &[], None, None);
        let mut f = Features::default();
        for (i, &m) in moves.iter().enumerate() {
            ctx.features(&pos, m, &mut f);
            assert_eq!(on[i], 2048 * f.active().len() as i32);
            assert_eq!(half[i], 1024 * f.active().len() as i32);
            assert_eq!(off[i], 0);
        }
        // The file keeps the layer; wrong sizes are refused.
        let w = unit(SCALE);
        assert_eq!(Weights::from_bytes(&w.to_bytes()).unwrap(), w);
        assert_eq!(w.hidden_units(), 1);
        assert!(Weights::with_hidden(vec![0; N_FEATURES], vec![0], vec![], vec![]).is_err());
        let mut short = w.to_bytes();
        short.pop();
        assert!(Weights::from_bytes(&short).is_err());
    }

    #[test]
    fn embedded_weights_are_read_in_place() {
        let w = Weights::embedded();
        assert_eq!(w, &Weights::from_bytes(WEIGHTS_FILE).unwrap());
        if cfg!(target_endian = "little") {
            assert!(matches!(w.hidden.v, Cow::Borrowed(_)));
        }
        assert_eq!(w.hash(), Weights::embedded_hash());
    }

    /// `brisk`'s weights read the quick features, with 64 units, and their
    /// file keeps the set in its magic: read again, the same weights.
    #[test]
    fn brisk_weights_are_quick_and_their_file_says_so() {
        let brisk = Weights::brisk();
        assert_eq!(brisk.feature_set(), FeatureSet::Quick);
        assert_eq!(brisk.hidden_units(), 64);
        assert!(brisk.reads_context());
        let bytes = brisk.to_bytes();
        assert_eq!(&bytes[..4], QUICK_MAGIC);
        assert_eq!(bytes, BRISK_FILE);
        assert_eq!(&Weights::from_bytes(&bytes).unwrap(), brisk);
        assert_eq!(brisk.hash(), Weights::brisk_hash());
        assert_eq!(Weights::embedded().feature_set(), FeatureSet::Full);
        // The same numbers read as the full set are other weights.
        let full = Weights::from_bytes(&[MAGIC.as_slice(), &bytes[4..]].concat()).unwrap();
        assert_ne!(&full, brisk);
        assert_ne!(full.hash(), brisk.hash());
        // `model` does not find them among its own.
        assert!(Weights::by_hash(Weights::brisk_hash()).is_none());
    }

    #[test]
    fn file_round_trip() {
        let w = Weights::embedded();
        assert_eq!(&Weights::from_bytes(&w.to_bytes()).unwrap(), w);
        let mut bad = w.to_bytes();
        bad[4] = 9;
        assert!(Weights::from_bytes(&bad).is_err());
    }
}

/// The examples of crate-private items, run as unit tests.
#[cfg(test)]
mod examples {
    #[test]
    fn example_book_hash() {
        assert_eq!(crate::model::book_hash(), crate::model::book_hash());
    }

    #[test]
    fn example_weights_embedded() {
        let w = crate::model::Weights::embedded();
        assert_eq!(w.w.len(), crate::model::N_FEATURES);
    }

    #[test]
    fn example_weights_hash() {
        let w = crate::model::Weights::embedded();
        assert_eq!(w.hash(), crate::model::Weights::embedded_hash());
    }

    #[test]
    fn example_weights_by_hash() {
        use crate::model::Weights;

        let today = Weights::by_hash(Weights::embedded_hash()).unwrap();
        assert!(std::ptr::eq(today, Weights::embedded()));
        assert!(Weights::by_hash(0).is_none());
    }

    #[test]
    fn example_weights_reads_context() {
        assert!(crate::model::Weights::embedded().reads_context());
    }

    #[test]
    fn example_weights_scores_in() {
        use crate::model::{GameContext, Weights, embedded_book};

        let (pos, w) = (shakmaty::Chess::default(), Weights::embedded());
        let weak = GameContext::new().with_ratings(Some(900), Some(900));
        let strong = GameContext::new().with_ratings(Some(2500), Some(2500));
        let (_, a) = w.scores_in(&pos, &[], embedded_book(), &weak);
        let (_, b) = w.scores_in(&pos, &[], embedded_book(), &strong);
        assert_ne!(a, b);
    }
}
