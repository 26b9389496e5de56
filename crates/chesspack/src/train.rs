//! Fitting what the codecs ship with: the move models, the opening book
//! and table, the position model and tables, and the engine's piece-square
//! values (`chesspack train`). Behind the `train` feature: the runtime
//! library does not carry it.
//!
//! Every trainer is deterministic and leaves out the held-out games and
//! positions ([`crate::holdout`]).

pub use crate::engine::fit::PieceSquareFit;
pub use crate::hash::fnv1a;
pub use crate::model::{
    MAX_HIDDEN, Weights,
    book::{Book, BookBuilder, MAX_PLY as BOOK_MAX_PLY},
    fast::{FastWeights, N_FAST_FEATURES},
    train::Trainer,
};
pub use crate::opening::{
    MIN_GAMES, Opening, OpeningTable, TableBuilder, opening_prior, opening_prior_bands,
};
pub use crate::position::{
    arith::ArithTables,
    model_codec::{PositionWeights, train::PositionTrainer},
};

/// The prior of archives' engine-comment fields (the library's
/// `fields.bin`) from the PGN games of `input`, leaving out the
/// held-out ones: the models that coding their engine comments in turn
/// leaves, keeping each number's place used at least `min_uses` times.
/// Returns the file and the numbers of games used and held out.
///
/// # Errors
///
/// An error reading `input`.
///
/// ```
/// let pgn = b"1. e4 {d=20, mt=100, pv=e4 e5 Nf3} e5 {d=19, mt=90, pv=e5 Nf3} *\n";
/// let (file, used, _) = chesspack::train::engine_comment_prior(&pgn[..], 1).unwrap();
/// assert_eq!((&file[..4], used), (&b"CPKC"[..], 1));
/// ```
pub fn engine_comment_prior<R: std::io::BufRead>(
    input: R,
    min_uses: u32,
) -> std::io::Result<(Vec<u8>, u64, u64)> {
    crate::archive::engine_comment_prior(input, min_uses)
}

/// The cost in bits of the move at `index` among moves of integer `scores`
/// (1/1024 nats), as the `model` and `fast` codecs quantise them (no end
/// symbol); `freqs` is a buffer.
///
/// ```
/// let mut freqs = Vec::new();
/// let even = chesspack::train::move_bits(&[0; 4], 2, &mut freqs);
/// assert!((even - 2.0).abs() < 1e-6);
/// ```
pub fn move_bits(scores: &[i32], index: usize, freqs: &mut Vec<u32>) -> f64 {
    crate::coder::quantize_fast(&crate::model::weights_of(scores), freqs);
    f64::from(crate::coder::PRECISION) - f64::from(freqs[index]).log2()
}
