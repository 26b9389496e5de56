//! Writes nnue-pytorch `.plain` training data (`fen`, `move`, `score`,
//! `ply`, `result`, `e` lines, as `scripts/selfplay.py` writes them) as a
//! Stockfish binpack with the `sfbinpack` crate, the format's reference
//! implementation in Rust: test data that chesspack did not write.
//!
//! ```text
//! cargo run --release -p chesspack --example plain_to_binpack -- in.plain out.binpack
//! ```

use std::{fs::File, io::BufRead, io::BufReader, process::ExitCode};

use sfbinpack::{
    CompressedTrainingDataEntryWriter, TrainingDataEntry,
    chess::{
        color::Color,
        coords::Square,
        r#move::{Move, MoveType},
        piece::Piece,
        piecetype::PieceType,
        position::Position,
    },
};

fn square(name: &str) -> Option<Square> {
    let b = name.as_bytes();
    let (file, rank) = (b.first()?.checked_sub(b'a')?, b.get(1)?.checked_sub(b'1')?);
    (file < 8 && rank < 8).then(|| Square::new(u32::from(rank) * 8 + u32::from(file)))
}

/// The binpack move of UCI `uci` in `pos`.
fn to_move(pos: &Position, uci: &str) -> Option<Move> {
    let from = square(uci.get(0..2)?)?;
    let to = square(uci.get(2..4)?)?;
    let piece = pos.piece_at(from);
    let file = |s: Square| s.index() % 8;
    if piece.piece_type() == PieceType::King && file(from).abs_diff(file(to)) == 2 {
        let rook = Square::new(if file(to) > file(from) {
            to.index() + 1
        } else {
            to.index() - 2
        });
        return Some(Move::new(from, rook, MoveType::Castle, Piece::none()));
    }
    if let Some(p) = uci.as_bytes().get(4) {
        let pt = match p {
            b'n' => PieceType::Knight,
            b'b' => PieceType::Bishop,
            b'r' => PieceType::Rook,
            _ => PieceType::Queen,
        };
        let color = if pos.side_to_move() == Color::White {
            Color::White
        } else {
            Color::Black
        };
        return Some(Move::new(
            from,
            to,
            MoveType::Promotion,
            Piece::new(pt, color),
        ));
    }
    if piece.piece_type() == PieceType::Pawn
        && file(from) != file(to)
        && pos.piece_at(to) == Piece::none()
    {
        return Some(Move::new(from, to, MoveType::EnPassant, Piece::none()));
    }
    Some(Move::new(from, to, MoveType::Normal, Piece::none()))
}

fn run(input: &str, output: &str) -> Result<u64, String> {
    let lines = BufReader::new(File::open(input).map_err(|e| format!("{input}: {e}"))?);
    let out = File::create(output).map_err(|e| format!("{output}: {e}"))?;
    let mut writer = CompressedTrainingDataEntryWriter::new(out).map_err(|e| e.to_string())?;
    let (mut fen, mut mv, mut score, mut ply, mut result) = (String::new(), String::new(), 0, 0, 0);
    let mut n = 0;
    for (i, line) in lines.lines().enumerate() {
        let line = line.map_err(|e| e.to_string())?;
        let bad = || format!("{input}:{}: {line:?}", i + 1);
        let (key, value) = line.split_once(' ').unwrap_or((line.as_str(), ""));
        match key {
            "fen" => fen = value.to_owned(),
            "move" => mv = value.to_owned(),
            "score" => score = value.parse().map_err(|_| bad())?,
            "ply" => ply = value.parse().map_err(|_| bad())?,
            "result" => result = value.parse().map_err(|_| bad())?,
            "e" => {
                let pos = Position::from_fen(&fen).map_err(|_| bad())?;
                let mv = to_move(&pos, &mv).ok_or_else(bad)?;
                writer
                    .write_entry(&TrainingDataEntry {
                        pos,
                        mv,
                        score,
                        ply,
                        result,
                    })
                    .map_err(|e| e.to_string())?;
                n += 1;
            }
            _ => return Err(bad()),
        }
    }
    writer.flush_and_end();
    Ok(n)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [input, output] = args.as_slice() else {
        eprintln!("usage: plain_to_binpack IN.plain OUT.binpack");
        return ExitCode::from(2);
    };
    match run(input, output) {
        Ok(n) => {
            eprintln!("wrote {n} positions to {output}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("plain_to_binpack: {e}");
            ExitCode::FAILURE
        }
    }
}
