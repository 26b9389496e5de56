//! Positions as data: the files that hold positions rather than games, and
//! every position of a game archive as rows.
//!
//! * [`positions`]: archives of position files (EPD, FEN lists, CSV with a
//!   `FEN` column), line for line, coded with the position model;
//! * [`training`]: archives of engine training data (Stockfish binpacks,
//!   `.plain`, viriformat), entry for entry;
//! * [`rows`]: every position of a game archive's mainlines as columns, for
//!   training on games (Python's `Archive.positions`, its PyTorch iterator).
//!
//! All three are built on the game archive ([`crate::archive`]): its error
//! type, its pipeline of threads, its reader. Front ends reach the two file
//! formats through [`crate::files`], which tells every kind of file apart.

pub mod positions;
pub mod rows;
pub mod training;
