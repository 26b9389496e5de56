//! A learned move model: the probability of every legal move from sparse
//! features of the move and its position, a linear softmax (conditional
//! logit) with integer weights.
//!
//! Features (all binary; see [`Features`]): piece and target square and
//! piece and origin square by game phase; capture victim × attacker; static
//! exchange result; check; recapture on the square the opponent's last move
//! went to; the piece moving off an attacked square (by any piece, by a
//! lesser one); the target attacked by a pawn, by any piece, defended by
//! our own; castling; promotion piece; distance to the enemy king; moving the
//! piece we moved last; how a check is answered; passed-pawn pushes by rank.
//!
//! Inference is integer-only: a move's score is the sum of its features'
//! weights (1/1024 nats); probabilities are `exp(score − best)` from a
//! fixed-point table built by integer multiplication, quantised by
//! [`crate::coder::quantize`]. So encoder and decoder agree bit for bit on
//! every machine and build.
//!
//! The weights ship in `weights.bin` (magic `CPKM`, version, count,
//! little-endian `i32`s), written by `chesspack train model`.

pub mod book;
pub mod fast;
mod features;
pub mod train;

pub use features::{Context, Features, MAX_ACTIVE, N_FEATURES};

use shakmaty::{Chess, Move};

use crate::{Error, order};

/// The embedded model file.
static WEIGHTS_FILE: &[u8] = include_bytes!("weights.bin");
/// The embedded opening book.
static BOOK_FILE: &[u8] = include_bytes!("book.bin");

/// The opening book shipped in the library.
pub fn embedded_book() -> &'static book::Book {
    static BOOK: std::sync::OnceLock<book::Book> = std::sync::OnceLock::new();
    BOOK.get_or_init(|| book::Book::from_bytes(BOOK_FILE).expect("embedded book file"))
}

/// [`file_hash`] of the embedded opening book's file: what the streams of
/// codecs that consult the book (`model`, the engine codecs) are tied to.
///
/// ```
/// assert_eq!(chesspack::model::book_hash(), chesspack::model::book_hash());
/// ```
pub fn book_hash() -> u64 {
    static HASH: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *HASH.get_or_init(|| file_hash(BOOK_FILE))
}

/// Magic bytes of a model file.
pub const MAGIC: &[u8; 4] = b"CPKM";
/// The model file version this library reads.
pub const VERSION: u32 = 1;
/// Weights are in units of 1/`SCALE` nats.
pub const SCALE: i32 = 1024;

/// The weights of the move model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Weights {
    w: Vec<i32>,
}

impl Weights {
    /// Reads a model file.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidData`] for a bad magic, version or size.
    pub fn from_bytes(bytes: &[u8]) -> Result<Weights, Error> {
        read_weights_file(bytes, MAGIC, VERSION, N_FEATURES, "model file").map(|w| Weights { w })
    }

    /// Weights from values, one per feature.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidData`] unless there are [`N_FEATURES`] of them.
    pub fn from_values(w: Vec<i32>) -> Result<Weights, Error> {
        if w.len() != N_FEATURES {
            return Err(Error::InvalidData(format!(
                "{} weights, expected {N_FEATURES}",
                w.len()
            )));
        }
        Ok(Weights { w })
    }

    /// The model file bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        weights_file(MAGIC, VERSION, &self.w)
    }

    /// The weights shipped in the library.
    ///
    /// ```
    /// let w = chesspack::model::Weights::embedded();
    /// assert_eq!(w.values().len(), chesspack::model::N_FEATURES);
    /// ```
    pub fn embedded() -> &'static Weights {
        static EMBEDDED: std::sync::OnceLock<Weights> = std::sync::OnceLock::new();
        EMBEDDED.get_or_init(|| Weights::from_bytes(WEIGHTS_FILE).expect("embedded model file"))
    }

    /// The weight of each feature, in 1/[`SCALE`] nats.
    pub fn values(&self) -> &[i32] {
        &self.w
    }

    /// A hash of the model file and the embedded book: what archives
    /// record ([`file_hash`] of the two).
    pub fn hash(&self) -> u64 {
        file_hash(&self.to_bytes()) ^ book_hash().rotate_left(1)
    }

    /// The legal moves of `pos` in canonical order and their scores (1/1024
    /// nats), given the moves that led to it (`history`, oldest first; the
    /// last two matter).
    pub fn scores(&self, pos: &Chess, history: &[Move]) -> (shakmaty::MoveList, Vec<i32>) {
        self.scores_with(pos, history, embedded_book())
    }

    /// [`Weights::scores`] with another opening book.
    pub fn scores_with(
        &self,
        pos: &Chess,
        history: &[Move],
        book: &book::Book,
    ) -> (shakmaty::MoveList, Vec<i32>) {
        let legal = order::sorted_moves(pos, order::Order::Thesis);
        let scores = self.scores_of(pos, history, &legal, book);
        (legal, scores)
    }

    /// The scores of `moves`, legal moves of `pos`, with `book`.
    pub fn scores_of(
        &self,
        pos: &Chess,
        history: &[Move],
        moves: &[Move],
        book: &book::Book,
    ) -> Vec<i32> {
        let mut out = Vec::with_capacity(moves.len());
        self.scores_into(pos, history, moves, book, &mut out);
        out
    }

    /// [`Weights::scores_of`] into a buffer.
    pub fn scores_into(
        &self,
        pos: &Chess,
        history: &[Move],
        moves: &[Move],
        book: &book::Book,
        out: &mut Vec<i32>,
    ) {
        let ctx = Context::new(pos, history, book.get(pos), None);
        let mut f = Features::default();
        out.clear();
        out.extend(moves.iter().map(|&m| {
            ctx.features(pos, m, &mut f);
            f.active()
                .iter()
                .map(|&i| self.w[usize::from(i)])
                .sum::<i32>()
        }));
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
    let v = u32::from_le_bytes(bytes[4..8].try_into().expect("4"));
    if v != version {
        return Err(bad(format!("version {v}, expected {version}")));
    }
    let count = u32::from_le_bytes(bytes[8..12].try_into().expect("4")) as usize;
    if count != n || bytes.len() != 12 + 4 * n {
        return Err(bad(format!("{count} weights, expected {n}")));
    }
    Ok(bytes[12..]
        .chunks_exact(4)
        .map(|c| i32::from_le_bytes(c.try_into().expect("4")))
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

/// FNV-1a over little-endian 64-bit words (then the last bytes one by
/// one): eight times fewer steps than byte-wise FNV-1a, for megabyte files
/// hashed when an archive is opened.
///
/// ```
/// assert_ne!(chesspack::model::file_hash(b"abcdefgh1"), chesspack::model::file_hash(b"abcdefgh2"));
/// ```
pub fn file_hash(bytes: &[u8]) -> u64 {
    const PRIME: u64 = 0x0100_0000_01b3;
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    let mut words = bytes.chunks_exact(8);
    for w in &mut words {
        h = (h ^ u64::from_le_bytes(w.try_into().expect("8"))).wrapping_mul(PRIME);
    }
    for &b in words.remainder() {
        h = (h ^ u64::from(b)).wrapping_mul(PRIME);
    }
    h
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

/// Unnormalised weights `exp(score − best)` of `scores`, for
/// [`crate::coder::quantize`].
pub fn weights_of(scores: &[i32]) -> Vec<u64> {
    let mut out = Vec::with_capacity(scores.len() + 1);
    weights_into(scores, &mut out);
    out
}

/// [`weights_of`] into a buffer.
pub fn weights_into(scores: &[i32], out: &mut Vec<u64>) {
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

    #[test]
    fn file_round_trip() {
        let w = Weights::embedded();
        assert_eq!(&Weights::from_bytes(&w.to_bytes()).unwrap(), w);
        let mut bad = w.to_bytes();
        bad[4] = 9;
        assert!(Weights::from_bytes(&bad).is_err());
    }
}
