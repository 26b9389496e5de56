//! `chesspack explain`: watch a codec move by move.

use anyhow::{Context, Result};
use chesspack::pgn::GameReader;
use clap::Args;
use shakmaty::Position;

use crate::{codecs::EngineOpts, input};

#[derive(Args, Debug)]
pub struct ExplainArgs {
    /// Game codec.
    #[arg(long, default_value = "index")]
    codec: String,
    /// Which game of the file, 1-based.
    #[arg(long, default_value_t = 1)]
    game: u64,
    #[command(flatten)]
    engine: EngineOpts,
    /// PGN file (`.zst` too, `-` for stdin).
    file: String,
}

pub fn run(args: &ExplainArgs) -> Result<()> {
    let codec = crate::codecs::game_codec(&args.codec, &args.engine)?;
    let pb = input::progress(None, &args.file);
    let reader = input::open(&args.file, &pb)?;
    let game = GameReader::new(reader)
        .find(|r| match r {
            Ok(g) => g.number == args.game,
            // A read error ends the input (an archive, a truncated `.zst`).
            Err(e) => e.number == args.game || e.reason.starts_with("read error"),
        })
        .with_context(|| format!("no game {} in {}", args.game, args.file))?
        .map_err(|e| anyhow::anyhow!("{}: {e}", args.file))?;
    pb.finish_and_clear();
    // In the game's context (ratings, time control), as the archive codes it.
    let codec = codec.in_context(&game.context());
    let plies = codec.explain(&game.start, &game.moves)?;
    let total = codec.encode(&game.start, &game.moves)?.len();
    if let (Some(w), Some(b)) = (game.tag("White"), game.tag("Black")) {
        outln!("{w} – {b}, codec {}", codec.name());
    }
    outln!(
        "{:>5}  {:<10} {:>5} {:>5} {:>6}  bits",
        "ply",
        "move",
        "legal",
        "rank",
        "bits"
    );
    let mut fullmove = game.start.fullmoves().get();
    let mut white = game.start.turn().is_white();
    let mut sum = 0.0;
    for (i, p) in plies.iter().enumerate() {
        let number = if white {
            format!("{fullmove}.")
        } else {
            format!("{fullmove}...")
        };
        if !white {
            fullmove += 1;
        }
        white = !white;
        sum += p.bits;
        let bar = "#".repeat(p.bits.round() as usize);
        outln!(
            "{:>5}  {:<10} {:>5} {:>5} {:>6.2}  {bar}",
            i + 1,
            format!("{number}{}", p.san),
            p.legal,
            p.rank
                .map_or_else(|| "-".to_owned(), |r| (r + 1).to_string()),
            p.bits,
        );
    }
    if plies.is_empty() {
        outln!("(no moves)");
    }
    outln!(
        "{} plies, {:.1} bits in moves, {} bits in the stream ({:.3} bits/ply)",
        plies.len(),
        sum,
        total,
        if plies.is_empty() {
            0.0
        } else {
            total as f64 / plies.len() as f64
        }
    );
    Ok(())
}
