//! `chesspack train`: fit the tables the codecs embed.

use anyhow::{Context, Result};
use chesspack::{holdout, position};
use clap::Subcommand;

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
}

pub fn run(cmd: TrainCommand) -> Result<()> {
    match cmd {
        TrainCommand::Arith { output, files } => arith(&output, &files),
    }
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
        names.push(
            std::path::Path::new(path)
                .file_name()
                .map_or_else(|| path.clone(), |n| n.to_string_lossy().into_owned()),
        );
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
