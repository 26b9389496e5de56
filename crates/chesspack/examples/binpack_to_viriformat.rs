//! Writes a Stockfish binpack as viriformat games with the `viriformat`
//! crate (the viridithas engine's own reader and writer): test data that
//! chesspack did not write. Each chain of entries (a position that follows
//! from the previous one's move, at the next ply, with the result turned)
//! becomes a game, with White's scores and result; positions with a
//! 50-move counter of 100 or more are left out (the crate's boards assert
//! at most 100).
//!
//! With a third file name, also writes the games' positions as
//! marlinformat records, as the crate's `splat_to_marlinformat` cuts them.
//!
//! ```text
//! cargo run --release -p chesspack --example binpack_to_viriformat -- in.binpack out.vf [out.marlin]
//! ```

use std::{fs::File, io::BufWriter, io::Write, process::ExitCode};

use sfbinpack::{CompressedTrainingDataEntryReader, TrainingDataEntry, chess::color::Color};
use viriformat::{
    chess::board::Board,
    dataformat::{Filter, Game},
};

/// Writes `game` with the result `white_result` (White's: 1, 0, -1).
fn finish(game: &Game, white_result: i16, out: &mut impl Write) -> std::io::Result<()> {
    let mut bytes = Vec::new();
    game.serialise_into(&mut bytes)?;
    // The result byte: the crate sets it from a game's outcome, which it
    // knows only for games it played to the end.
    bytes[30] = (white_result + 1) as u8;
    out.write_all(&bytes)
}

fn run(input: &str, output: &str) -> Result<(u64, u64), Box<dyn std::error::Error>> {
    let mut reader = CompressedTrainingDataEntryReader::new(File::open(input)?)?;
    let mut out = BufWriter::new(File::create(output)?);
    let (mut games, mut positions) = (0, 0);
    let mut game: Option<(Game, Board, i16)> = None;
    let mut last: Option<TrainingDataEntry> = None;
    while reader.has_next() {
        let e = reader.next();
        if e.pos.rule50_counter() >= 100 {
            continue;
        }
        let fen = e.pos.fen().map_err(|e| format!("{e:?}"))?;
        let white = e.pos.side_to_move() == Color::White;
        let continues = last
            .as_ref()
            .is_some_and(|p| p.ply + 1 == e.ply && p.result == -e.result)
            && game.as_ref().is_some_and(|(_, b, _)| {
                b.to_string().split(' ').take(2).eq(fen.split(' ').take(2))
            });
        if !continues {
            if let Some((g, _, r)) = game.take() {
                finish(&g, r, &mut out)?;
                games += 1;
            }
            let mut board = Board::new();
            board.set_from_fen(&fen, false)?;
            game = Some((
                Game::new(&board),
                board,
                if white { e.result } else { -e.result },
            ));
        }
        let (g, b, _) = game.as_mut().expect("a game");
        let mv = b.parse_uci(&e.mv.as_uci())?;
        g.add_move(
            mv,
            if white {
                e.score
            } else {
                e.score.wrapping_neg()
            },
        );
        b.make_move_simple(mv);
        positions += 1;
        last = Some(e);
    }
    if let Some((g, _, r)) = game.take() {
        finish(&g, r, &mut out)?;
        games += 1;
    }
    out.flush()?;
    Ok((games, positions))
}

/// The marlinformat records of the viriformat games in `vf`, as the crate
/// reads and cuts them.
fn marlin(vf: &str, output: &str) -> Result<(), Box<dyn std::error::Error>> {
    let data = std::fs::read(vf)?;
    let mut input = std::io::BufReader::new(&data[..]);
    let mut out = BufWriter::new(File::create(output)?);
    while std::io::BufRead::fill_buf(&mut input)? != b"" {
        let g = Game::deserialise_from(&mut input, Vec::new())?;
        g.splat_to_marlinformat(|p| Ok(out.write_all(&p.as_bytes())?), &Filter::UNRESTRICTED)?;
    }
    out.flush()?;
    Ok(())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (input, output, marlin_out) = match &args[..] {
        [i, o] => (i, o, None),
        [i, o, m] => (i, o, Some(m)),
        _ => {
            eprintln!("usage: binpack_to_viriformat IN.binpack OUT.vf [OUT.marlin]");
            return ExitCode::from(2);
        }
    };
    let result = run(input, output).and_then(|r| {
        if let Some(m) = marlin_out {
            marlin(output, m)?;
        }
        Ok(r)
    });
    match result {
        Ok((games, positions)) => {
            eprintln!("{games} games, {positions} positions");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("binpack_to_viriformat: {e}");
            ExitCode::FAILURE
        }
    }
}
