//! Choosing game codecs and their parameters on the command line.

use anyhow::Result;
use chesspack::game::{
    self, GameCodec,
    engine_codec::{DEFAULT_DEPTH, DEFAULT_K_TENTHS, EngineParams},
};
use clap::Args;

/// Parameters of the `engine-*` codecs.
#[derive(Args, Debug, Clone)]
pub struct EngineOpts {
    /// Search depth of the engine codecs below each move (0: quiescence
    /// search only; at most 7, and at most 3 for `compress`: archives decode
    /// no deeper).
    #[arg(long, default_value_t = DEFAULT_DEPTH)]
    pub depth: u8,
    /// The thesis' k of the engine codecs: p(move) ∝ k^(score − best score),
    /// scores in pawns (1.0 to 6553.5).
    #[arg(long, default_value_t = f64::from(DEFAULT_K_TENTHS) / 10.0)]
    pub k: f64,
    /// Engine codecs leave the opening book out: the engine's
    /// probabilities alone, as in the thesis.
    #[arg(long)]
    pub no_book: bool,
}

impl EngineOpts {
    pub fn params(&self) -> Result<EngineParams> {
        if !(1.0..=6553.5).contains(&self.k) {
            anyhow::bail!("k must lie between 1.0 and 6553.5");
        }
        Ok(EngineParams {
            depth: self.depth,
            k_tenths: (self.k * 10.0).round() as u16,
            book: !self.no_book,
        })
    }
}

/// The game codec `name` with the engine parameters applied.
pub fn game_codec(name: &str, opts: &EngineOpts) -> Result<Box<dyn GameCodec>> {
    Ok(game::codec_with(name, &opts.params()?)?)
}

/// Every game codec, or those named, with the engine parameters applied.
pub fn game_codecs(names: &[String], opts: &EngineOpts) -> Result<Vec<Box<dyn GameCodec>>> {
    if names.is_empty() {
        game::codecs()
            .iter()
            .map(|c| game_codec(c.name(), opts))
            .collect()
    } else {
        names.iter().map(|n| game_codec(n, opts)).collect()
    }
}
