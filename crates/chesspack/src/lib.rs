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
//! * [`files`] — inputs in any compression format, what a file holds,
//!   outputs that appear only when complete: what every front end uses.
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
//! The everyday types are also at the root: [`ArchiveReader`],
//! [`compress`], [`decompress`] and [`Pipeline`] for archives,
//! [`GameCodec`] and [`PositionCodec`], [`GameReader`] and [`Game`],
//! [`Bits`] and [`Error`].
//!
//! ```
//! use chesspack::{GameReader, archive::ArchiveReader, game};
//!
//! let pgn = "[Event \"?\"]\n\n1. e4 e5 2. Nf3 Nc6 *\n";
//! let game = GameReader::new(pgn.as_bytes()).next().unwrap().unwrap();
//! let codec = game::codec("index").unwrap().in_context(&game.context());
//! let bits = codec.encode(&game.start, &game.moves).unwrap();
//! assert_eq!(codec.decode(&game.start, &bits).unwrap(), game.moves);
//!
//! // A whole file, and back.
//! let mut archive = Vec::new();
//! chesspack::compress(pgn.as_bytes(), &mut archive, codec.as_ref(), &Default::default()).unwrap();
//! let mut back = Vec::new();
//! chesspack::decompress(std::io::Cursor::new(&archive), &mut back).unwrap();
//! assert_eq!(back, pgn.as_bytes());
//! let mut reader = ArchiveReader::open(std::io::Cursor::new(&archive)).unwrap();
//! assert_eq!(reader.games(), 1);
//! ```

// `unsafe` only in `simd`, to call code compiled for wider vectors.
#![deny(unsafe_code)]
#![warn(missing_docs)]

pub mod archive;
mod binpack;
mod bits;
mod coder;
pub mod datasets;
mod engine;
mod error;
pub mod files;
#[cfg(any(test, feature = "fuzzing"))]
pub mod fuzzing;
pub mod game;
mod hash;
pub mod holdout;
mod le;
pub mod model;
pub mod opening;
pub mod order;
pub mod pgn;
pub mod position;
pub mod record;
pub mod search;
mod simd;
mod slide;
#[cfg(test)]
mod testing;
mod threads;
#[cfg(feature = "train")]
pub mod train;
mod viriformat;

// The everyday types and calls, at the root.
pub use crate::{
    archive::{ArchiveReader, compress, decompress, pipeline::Pipeline},
    bits::Bits,
    error::Error,
    game::GameCodec,
    pgn::{Game, GameReader},
    position::PositionCodec,
};

/// The README's Rust example, compiled and run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
#[allow(dead_code)]
struct ReadmeDoctests;
