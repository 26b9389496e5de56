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
//!   ([`game::ModelCodec`]): its game context and predictions.
//! * [`order`] — the canonical move orders that the codecs number moves in.
//! * [`holdout`] — the held-out split that every measurement uses.
//! * `train` (feature `train`) — the trainers of the shipped models and
//!   tables.
//!
//! The range coder, the embedded engine, the opening table and the bit
//! strings' writer and reader are internal.
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
mod bits;
mod coder;
mod engine;
mod error;
pub mod files;
#[cfg(any(test, feature = "fuzzing"))]
pub mod fuzzing;
pub mod game;
mod hash;
pub mod holdout;
pub mod model;
mod opening;
pub mod order;
pub mod pgn;
pub mod position;
pub mod record;
mod simd;
mod slide;
#[cfg(feature = "train")]
pub mod train;

pub use bits::Bits;
pub use error::Error;

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
#[allow(dead_code)]
struct ReadmeDoctests;
