//! `chesspack train`: fit the tables the codecs embed
//! ([`chesspack::train::fit`] does the work; this parses and shows it).

use std::path::PathBuf;

use anyhow::{Context, Result};
use chesspack::train::{Fit, Note};
use clap::Subcommand;
use indicatif::ProgressBar;

use crate::input;

#[derive(Subcommand, Debug)]
pub enum TrainCommand {
    /// Fit the per-square symbol frequencies of the `arith` position codec on
    /// position files (EPD, FEN or puzzle CSV, `.zst` too), leaving out the
    /// held-out 5%, and write them as Rust source.
    Arith {
        /// Where to write the tables
        /// (crates/chesspack/src/position/arith_tables.rs to ship them).
        #[arg(short, long)]
        output: String,
        /// Position files.
        #[arg(required = true)]
        files: Vec<String>,
    },
    /// Fit the `position-model` codec on position files (EPD, FEN or puzzle
    /// CSV) and positions sampled from PGN games (`.pgn`, `.pgn.zst`),
    /// leaving out the held-out 5% (positions by EPD, games by moves), and
    /// write the model file; then report its bits on the held-out part of
    /// each file.
    Position {
        /// Where to write the model
        /// (crates/chesspack/src/position/model.bin to ship it).
        #[arg(short, long)]
        output: String,
        /// Positions sampled from each training game (held-out games give
        /// one).
        #[arg(long, default_value_t = 3)]
        per_game: u64,
        /// Passes over the training positions.
        #[arg(long, default_value_t = 2)]
        epochs: u32,
        /// AdaGrad's step size.
        #[arg(long, default_value_t = 0.1)]
        rate: f32,
        /// Position and PGN files (a file named twice counts twice).
        #[arg(required = true)]
        files: Vec<String>,
    },
    /// Fit the data-driven piece-square terms of the engine's evaluation on
    /// PGN files (`.zst` too), leaving out the held-out 5% of games, and
    /// write them as Rust source.
    Engine {
        /// Where to write the terms
        /// (crates/chesspack/src/engine/fitted.rs to ship them).
        #[arg(short, long)]
        output: String,
        /// Read at most this many games of each file (held-out ones
        /// included in the count).
        #[arg(long, default_value_t = 20_000)]
        limit: u64,
        /// PGN files.
        #[arg(required = true)]
        files: Vec<String>,
    },
    /// Fit the `model` codec's move model on PGN files (`.zst` too), leaving
    /// out the held-out 5% of games, and write the model file; then report
    /// its cost on held-out games of the same files.
    Model {
        /// Where to write the model
        /// (crates/chesspack/src/model/weights.bin to ship it); the opening
        /// book goes to book.bin beside it.
        #[arg(short, long)]
        output: String,
        /// Read at most this many games of each file (held-out ones
        /// included in the count).
        #[arg(long, default_value_t = 400_000)]
        limit: u64,
        /// Count the opening book on the first this many games of each
        /// file (held-out ones left out; by default all); at least
        /// `--limit`.
        #[arg(long, default_value_t = 1_000_000)]
        book_limit: u64,
        /// Passes over the training games.
        #[arg(long, default_value_t = 3)]
        epochs: u32,
        /// Hidden units (0: a linear model).
        #[arg(long, default_value_t = 256)]
        hidden: usize,
        /// AdaGrad's step size for the hidden layer.
        #[arg(long, default_value_t = 0.02)]
        hidden_rate: f32,
        /// The move features: `full` (the `model` codec's) or `quick`
        /// (the `brisk` codec's: no static exchange, checks, mobility or
        /// threats).
        #[arg(long, default_value = "full", value_parser = ["full", "quick"])]
        features: String,
        /// PGN files whose games train the weights but are not counted in
        /// the opening book (so that the book, which the engine codecs
        /// share, stays as the main files make it).
        #[arg(long, value_delimiter = ',')]
        not_in_book: Vec<String>,
        /// PGN files.
        #[arg(required = true)]
        files: Vec<String>,
    },
    /// Build the opening table that archives predict `ECO` and `Opening`
    /// tags with, from PGN files whose games carry them (leaving out the
    /// held-out 5%) or from lichess's opening TSV files; then report how
    /// many held-out games of the PGN files it names right.
    Openings {
        /// Where to write the table
        /// (crates/chesspack/src/openings-lichess.bin to ship lichess's).
        #[arg(short, long)]
        output: String,
        /// A position is listed when at least this many training games
        /// reached it (PGN input).
        #[arg(long, default_value_t = 2)]
        min_games: u32,
        /// PGN files (`.zst` too), or lichess opening tables (`.tsv`, the
        /// columns eco, name and pgn); not both.
        #[arg(required = true)]
        files: Vec<String>,
    },
    /// Build the prior of archives' engine-comment fields (TCEC's `d=, mt=,
    /// pv=`, cutechess-cli's `+0.35/20 1.2s`): the models that coding the
    /// engine comments of PGN games in turn leaves (leaving out the
    /// held-out 5%), which each archived game's fields start from.
    EngineComments {
        /// Where to write the prior
        /// (crates/chesspack/src/archive/block/fields.bin to ship it).
        #[arg(short, long)]
        output: String,
        /// Keep the models of a number's place used at least this often.
        #[arg(long, default_value_t = 2000)]
        min_uses: u32,
        /// PGN files (`.zst` too).
        #[arg(required = true)]
        files: Vec<String>,
    },
    /// Count how often each opening of the shipped table is a game's, in
    /// PGN files (leaving out the held-out 5%): the prior that archives
    /// code each game's opening with.
    OpeningPrior {
        /// Where to write the counts (with `--bands`,
        /// crates/chesspack/src/openings-lichess-prior-bands.txt to ship
        /// them).
        #[arg(short, long)]
        output: String,
        /// Count by the players' rating band (the mean Elo below 1400,
        /// 1400-1799, 1800-2199, 2200 and up, none), one line a label and a
        /// column a band: the priors archives code openings with.
        #[arg(long)]
        bands: bool,
        /// PGN files (`.zst` too).
        #[arg(required = true)]
        files: Vec<String>,
    },
    /// Fit the `fast` codec's model (piece × origin × target and capture
    /// weights) on PGN files, leaving out the held-out 5% of games.
    Fast {
        /// Where to write the model
        /// (crates/chesspack/src/model/fast.bin to ship it).
        #[arg(short, long)]
        output: String,
        /// Read at most this many games of each file.
        #[arg(long, default_value_t = 80_000)]
        limit: u64,
        /// Passes over the training games.
        #[arg(long, default_value_t = 2)]
        epochs: u32,
        /// PGN files.
        #[arg(required = true)]
        files: Vec<String>,
    },
}

pub fn run(cmd: TrainCommand) -> Result<()> {
    let (fit, output, files) = match cmd {
        TrainCommand::Model {
            output,
            limit,
            book_limit,
            epochs,
            hidden,
            hidden_rate,
            features,
            not_in_book,
            files,
        } => (
            Fit::Model {
                limit,
                book_limit,
                epochs,
                hidden,
                hidden_rate,
                quick: features == "quick",
                not_in_book: not_in_book.into_iter().map(PathBuf::from).collect(),
            },
            output,
            files,
        ),
        TrainCommand::Fast {
            output,
            limit,
            epochs,
            files,
        } => (Fit::Fast { limit, epochs }, output, files),
        TrainCommand::Arith { output, files } => (Fit::Arith, output, files),
        TrainCommand::Openings {
            output,
            min_games,
            files,
        } => (Fit::Openings { min_games }, output, files),
        TrainCommand::OpeningPrior {
            output,
            bands,
            files,
        } => (Fit::OpeningPrior { bands }, output, files),
        TrainCommand::EngineComments {
            output,
            min_uses,
            files,
        } => (Fit::EngineComments { min_uses }, output, files),
        TrainCommand::Position {
            output,
            per_game,
            epochs,
            rate,
            files,
        } => (
            Fit::Position {
                per_game,
                epochs,
                rate,
            },
            output,
            files,
        ),
        TrainCommand::Engine {
            output,
            limit,
            files,
        } => (Fit::Engine { limit }, output, files),
    };
    let files: Vec<PathBuf> = files.into_iter().map(PathBuf::from).collect();
    // A progress bar for each stretch of work, on stderr when it is a
    // terminal; the result's rows on stdout.
    let mut bar: Option<(String, ProgressBar)> = None;
    let mut rows = Vec::new();
    chesspack::train::fit(&fit, &files, output.as_ref(), &mut |note| match note {
        Note::Progress { what, done, total } => {
            if bar.as_ref().is_none_or(|(w, _)| w != what) {
                bar = Some((what.to_owned(), input::progress(None, what)));
            }
            if let Some((_, pb)) = &bar {
                if let Some(total) = total {
                    input::set_total(pb, total);
                }
                pb.set_position(done);
            }
        }
        Note::Finished => {
            if let Some((_, pb)) = bar.take() {
                pb.finish_and_clear();
            }
        }
        Note::Line(line) => match &bar {
            Some((_, pb)) => pb.suspend(|| eprintln!("{line}")),
            None => eprintln!("{line}"),
        },
        Note::Row(row) => rows.push(row),
        _ => {}
    })
    .with_context(|| format!("cannot fit {output}"))?;
    for row in rows {
        outln!("{row}");
    }
    Ok(())
}
