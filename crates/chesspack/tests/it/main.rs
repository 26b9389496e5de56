//! Integration tests, a module per area.

mod archive;
mod common;
mod engine;
mod games;
mod golden;
mod layers;
mod openings;
mod pgn;
mod positions;
mod regression;
mod rows;
mod search;
#[cfg(feature = "train")]
mod train;
mod training;
