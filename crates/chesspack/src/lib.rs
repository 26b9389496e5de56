//! chesspack: chess games and positions in as few bits as information theory
//! allows, without losing anything.
//!
//! * [`game`] — codecs for the moves of a game: [`game::Squares`] (12 bits a
//!   move), [`game::Index`] (the index among the canonically sorted legal
//!   moves), [`game::Radix`] (the whole game as one mixed-radix integer).
//! * [`position`] — codecs for single positions: [`position::Usenet82`],
//!   [`position::KingsPawns`], [`position::Arith`], [`position::Packed`].
//! * [`pgn`] — streaming PGN reading into games the codecs take.
//! * [`archive`] — the `.chpk` archive of whole PGN files.
//! * [`record`] — one game or position as self-contained bytes, for a
//!   column of a table.
//! * [`model`] — the learned move model of the `model` and `fast` codecs
//!   ([`game::ModelCodec`]), with its opening book and trainer.
//! * [`engine`] — the embedded engine of the `engine-*` codecs.
//! * [`order`], [`bits`], [`coder`] — the canonical move orders, bit strings
//!   and the range coder the codecs share.
//!
//! ```
//! use chesspack::{game, pgn::GameReader};
//!
//! let pgn = "[Event \"?\"]\n\n1. e4 e5 2. Nf3 Nc6 *\n";
//! let game = GameReader::new(pgn.as_bytes()).next().unwrap().unwrap();
//! let codec = game::codec("index").unwrap();
//! let bits = codec.encode(&game.start, &game.moves).unwrap();
//! assert_eq!(codec.decode(&game.start, &bits).unwrap(), game.moves);
//! ```

// `unsafe` only in `simd`, to call code compiled for wider vectors.
#![deny(unsafe_code)]
#![warn(missing_docs)]

pub mod archive;
pub mod bits;
pub mod coder;
pub mod engine;
mod error;
#[doc(hidden)]
pub mod fuzzing;
pub mod game;
pub mod hash;
pub mod holdout;
pub mod model;
pub mod opening;
pub mod order;
pub mod pgn;
pub mod position;
pub mod record;
mod simd;
mod slide;

pub use bits::Bits;
pub use error::{Error, cut};

#[cfg(any(feature = "train", test))]
/// The next state of a xorshift generator: a fixed pseudo-random sequence
/// (the trainer's initial weights, the tests' random inputs).
pub(crate) fn xorshift(x: &mut u64) -> u64 {
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    *x
}

/// The README's Rust example, compiled and run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
pub struct ReadmeDoctests;
