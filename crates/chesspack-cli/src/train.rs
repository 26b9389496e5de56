//! `chesspack train`: fit the tables the codecs embed.

use anyhow::{Context, Result};
use chesspack::{engine::PieceSquareFit, holdout, pgn::GameReader, position};
use clap::Subcommand;
use shakmaty::Position;

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
}

pub fn run(cmd: TrainCommand) -> Result<()> {
    match cmd {
        TrainCommand::Arith { output, files } => arith(&output, &files),
        TrainCommand::Engine {
            output,
            limit,
            files,
        } => engine(&output, limit, &files),
    }
}

fn file_name(path: &str) -> String {
    std::path::Path::new(path)
        .file_name()
        .map_or_else(|| path.to_owned(), |n| n.to_string_lossy().into_owned())
}

fn engine(output: &str, limit: u64, files: &[String]) -> Result<()> {
    let mut fit = PieceSquareFit::default();
    let (mut trained, mut held, mut skipped) = (0u64, 0u64, 0u64);
    let mut names = Vec::new();
    for path in files {
        let pb = input::progress(None, path);
        let reader = input::open(path, &pb)?;
        for game in GameReader::new(reader).take(limit as usize) {
            let Ok(game) = game else {
                skipped += 1;
                continue;
            };
            if holdout::is_held_out(&holdout::game_key(&game)) {
                held += 1;
                continue;
            }
            let mut pos = game.start.clone();
            for &m in &game.moves {
                fit.add(&pos, m);
                pos.play_unchecked(m);
            }
            trained += 1;
        }
        pb.finish_and_clear();
        names.push(format!("the first {limit} games of {}", file_name(path)));
    }
    let provenance = format!(
        "Fitted on {trained} games from {} ({held} held out, {skipped} skipped).",
        names.join(" and ")
    );
    std::fs::write(output, fit.to_rust(&provenance))
        .with_context(|| format!("cannot write {output}"))?;
    eprintln!("{provenance}\nwrote {output}");
    Ok(())
}

fn arith(output: &str, files: &[String]) -> Result<()> {
    let mut tables = position::ArithTables::default();
    let (mut trained, mut held, mut skipped) = (0u64, 0u64, 0u64);
    let mut names = Vec::new();
    for path in files {
        let pb = input::progress(None, path);
        for item in input::fen_lines(input::open(path, &pb)?) {
            let (_, fen) = item?;
            let Ok(pos) = position::parse_fen(&fen) else {
                skipped += 1;
                continue;
            };
            if holdout::is_held_out(position::to_epd(&pos).as_bytes()) {
                held += 1;
            } else {
                tables.add(&pos);
                trained += 1;
            }
        }
        pb.finish_and_clear();
        names.push(file_name(path));
    }
    let provenance = format!(
        "Fitted on {trained} positions of {} ({held} held out, {skipped} invalid skipped).",
        names.join(", ")
    );
    std::fs::write(output, tables.to_rust(&provenance))
        .with_context(|| format!("cannot write {output}"))?;
    eprintln!("{provenance}\nwrote {output}");
    Ok(())
}
