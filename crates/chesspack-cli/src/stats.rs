//! `chesspack stats`: sizes, speeds and round trips of every codec.

use std::time::{Duration, Instant};

use anyhow::{Result, bail};
use chesspack::{
    game::{self, GameCodec},
    holdout,
    pgn::GameReader,
    position::{self, PositionCodec},
};
use clap::Args;
use serde_json::json;

use crate::input;

#[derive(Args, Debug)]
pub struct StatsArgs {
    /// Codecs to run, comma-separated; all of the kind when left out.
    #[arg(long, value_delimiter = ',')]
    codec: Vec<String>,
    /// Print one JSON object per codec instead of a table.
    #[arg(long)]
    json: bool,
    /// Stop after this many games (or positions), skipped ones included.
    #[arg(long)]
    limit: Option<u64>,
    /// Read positions (EPD or FEN lines, or CSV with a FEN column) instead of games.
    #[arg(long)]
    positions: bool,
    /// Keep only the held-out 5% (see `chesspack::holdout`): figures for
    /// data the built-in tables and models were not fitted on.
    #[arg(long)]
    holdout: bool,
    /// PGN, EPD or CSV files, `.zst` compressed or not; `-` is stdin.
    #[arg(required = true)]
    files: Vec<String>,
}

pub fn run(args: &StatsArgs) -> Result<()> {
    if args.positions {
        positions(args)
    } else {
        games(args)
    }
}

#[derive(Default)]
struct GameTally {
    games: u64,
    plies: u64,
    bits: u64,
    encode: Duration,
    decode: Duration,
    failures: u64,
}

fn rate(count: u64, time: Duration) -> f64 {
    let s = time.as_secs_f64();
    if s > 0.0 { count as f64 / s } else { 0.0 }
}

fn ratio(a: u64, b: u64) -> f64 {
    if b > 0 { a as f64 / b as f64 } else { 0.0 }
}

fn games(args: &StatsArgs) -> Result<()> {
    let codecs: Vec<Box<dyn GameCodec>> = if args.codec.is_empty() {
        game::codecs()
    } else {
        args.codec
            .iter()
            .map(|n| game::codec(n))
            .collect::<Result<_, _>>()?
    };
    let mut tallies: Vec<GameTally> = codecs.iter().map(|_| GameTally::default()).collect();
    let mut skipped = 0u64;
    let mut seen = 0u64;
    'files: for path in &args.files {
        let pb = input::progress(None, path);
        let reader = input::open(path, &pb)?;
        for result in GameReader::new(reader) {
            if args.limit.is_some_and(|l| seen >= l) {
                pb.finish_and_clear();
                break 'files;
            }
            seen += 1;
            let game = match result {
                Ok(g) => g,
                Err(e) => {
                    pb.suspend(|| eprintln!("warning: {path}: {e} (skipped)"));
                    skipped += 1;
                    continue;
                }
            };
            if args.holdout && !holdout::is_held_out(&holdout::game_key(&game)) {
                continue;
            }
            for (codec, t) in codecs.iter().zip(&mut tallies) {
                let t0 = Instant::now();
                let encoded = codec.encode(&game.start, &game.moves);
                let t1 = Instant::now();
                t.encode += t1 - t0;
                let bits = match encoded {
                    Ok(bits) => bits,
                    Err(e) => {
                        pb.suspend(|| {
                            eprintln!(
                                "warning: {path}: game {}: {} cannot encode: {e}",
                                game.number,
                                codec.name()
                            )
                        });
                        t.failures += 1;
                        continue;
                    }
                };
                let t2 = Instant::now();
                let decoded = codec.decode(&game.start, &bits);
                t.decode += t2.elapsed();
                t.games += 1;
                t.plies += game.moves.len() as u64;
                t.bits += bits.len() as u64;
                if decoded.as_ref() != Ok(&game.moves) {
                    pb.suspend(|| {
                        eprintln!(
                            "warning: {path}: game {}: {} round trip failed",
                            game.number,
                            codec.name()
                        )
                    });
                    t.failures += 1;
                }
            }
        }
        pb.finish_and_clear();
    }
    if args.json {
        for (codec, t) in codecs.iter().zip(&tallies) {
            outln!(
                "{}",
                json!({
                    "codec": codec.name(),
                    "games": t.games,
                    "plies": t.plies,
                    "bits": t.bits,
                    "bits_per_ply": ratio(t.bits, t.plies),
                    "bits_per_game": ratio(t.bits, t.games),
                    "encode_plies_per_s": rate(t.plies, t.encode),
                    "decode_plies_per_s": rate(t.plies, t.decode),
                    "roundtrip_failures": t.failures,
                    "skipped_games": skipped,
                })
            );
        }
    } else {
        outln!(
            "{:<10} {:>9} {:>11} {:>13} {:>9} {:>10} {:>12} {:>12} {:>8} {:>8}",
            "codec",
            "games",
            "plies",
            "bits",
            "bits/ply",
            "bits/game",
            "enc ply/s",
            "dec ply/s",
            "failures",
            "skipped"
        );
        for (codec, t) in codecs.iter().zip(&tallies) {
            outln!(
                "{:<10} {:>9} {:>11} {:>13} {:>9.3} {:>10.1} {:>12.0} {:>12.0} {:>8} {:>8}",
                codec.name(),
                t.games,
                t.plies,
                t.bits,
                ratio(t.bits, t.plies),
                ratio(t.bits, t.games),
                rate(t.plies, t.encode),
                rate(t.plies, t.decode),
                t.failures,
                skipped
            );
        }
    }
    if tallies.iter().any(|t| t.failures > 0) {
        bail!("round trip failures");
    }
    Ok(())
}

#[derive(Default)]
struct PositionTally {
    positions: u64,
    bits: u64,
    max_bits: u64,
    encode: Duration,
    decode: Duration,
    failures: u64,
    unrepresentable: u64,
}

fn positions(args: &StatsArgs) -> Result<()> {
    let codecs: Vec<Box<dyn PositionCodec>> = if args.codec.is_empty() {
        position::codecs()
    } else {
        args.codec
            .iter()
            .map(|n| position::codec(n))
            .collect::<Result<_, _>>()?
    };
    let mut tallies: Vec<PositionTally> = codecs.iter().map(|_| PositionTally::default()).collect();
    let mut skipped = 0u64;
    let mut seen = 0u64;
    'files: for path in &args.files {
        let pb = input::progress(None, path);
        let reader = input::open(path, &pb)?;
        for item in input::fen_lines(reader) {
            if args.limit.is_some_and(|l| seen >= l) {
                pb.finish_and_clear();
                break 'files;
            }
            seen += 1;
            let (line, fen) = item?;
            let pos = match position::parse_fen(&fen) {
                Ok(p) => p,
                Err(e) => {
                    pb.suspend(|| eprintln!("warning: {path}: line {line}: {e} (skipped)"));
                    skipped += 1;
                    continue;
                }
            };
            let epd = position::to_epd(&pos);
            if args.holdout && !holdout::is_held_out(epd.as_bytes()) {
                continue;
            }
            for (codec, t) in codecs.iter().zip(&mut tallies) {
                let t0 = Instant::now();
                let encoded = codec.encode(&pos);
                t.encode += t0.elapsed();
                let bits = match encoded {
                    Ok(b) => b,
                    Err(e) => {
                        pb.suspend(|| {
                            eprintln!("warning: {path}: line {line}: {}: {e}", codec.name())
                        });
                        t.unrepresentable += 1;
                        continue;
                    }
                };
                let t1 = Instant::now();
                let decoded = codec.decode(&bits);
                t.decode += t1.elapsed();
                t.positions += 1;
                t.bits += bits.len() as u64;
                t.max_bits = t.max_bits.max(bits.len() as u64);
                if decoded.map(|p| position::to_epd(&p)).as_ref() != Ok(&epd) {
                    pb.suspend(|| {
                        eprintln!(
                            "warning: {path}: line {line}: {} round trip failed",
                            codec.name()
                        )
                    });
                    t.failures += 1;
                }
            }
        }
        pb.finish_and_clear();
    }
    if args.json {
        for (codec, t) in codecs.iter().zip(&tallies) {
            outln!(
                "{}",
                json!({
                    "codec": codec.name(),
                    "positions": t.positions,
                    "bits": t.bits,
                    "bits_per_position": ratio(t.bits, t.positions),
                    "max_bits": t.max_bits,
                    "encode_positions_per_s": rate(t.positions, t.encode),
                    "decode_positions_per_s": rate(t.positions, t.decode),
                    "roundtrip_failures": t.failures,
                    "unrepresentable": t.unrepresentable,
                    "skipped": skipped,
                })
            );
        }
    } else {
        outln!(
            "{:<12} {:>9} {:>12} {:>9} {:>6} {:>12} {:>12} {:>8} {:>7} {:>8}",
            "codec",
            "positions",
            "bits",
            "bits/pos",
            "max",
            "enc pos/s",
            "dec pos/s",
            "failures",
            "unrepr",
            "skipped"
        );
        for (codec, t) in codecs.iter().zip(&tallies) {
            outln!(
                "{:<12} {:>9} {:>12} {:>9.2} {:>6} {:>12.0} {:>12.0} {:>8} {:>7} {:>8}",
                codec.name(),
                t.positions,
                t.bits,
                ratio(t.bits, t.positions),
                t.max_bits,
                rate(t.positions, t.encode),
                rate(t.positions, t.decode),
                t.failures,
                t.unrepresentable,
                skipped
            );
        }
    }
    if tallies.iter().any(|t| t.failures > 0) {
        bail!("round trip failures");
    }
    Ok(())
}
