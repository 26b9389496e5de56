//! Every position of an archive's games as rows (issue 59): the rows
//! against shakmaty replaying the same games, the record decoded with and
//! without text, skipped games, the iterator.

use std::io::Cursor;

use chesspack::{
    archive::{self, ArchiveReader},
    datasets::rows::{self, Column, PositionRows},
    game::{GameCodec, Index, ModelCodec},
    pgn::{Eval, GameReader},
};
use proptest::prelude::*;
use shakmaty::{
    CastlingMode, CastlingSide, Chess, Color, EnPassantMode, Move, Position, fen::Fen, san::San,
    uci::UciMove,
};

use crate::{archive::compress_with as pack, common::arb_game};

/// Every column, and the rows of every block of an archive one after another.
fn all_rows(packed: &[u8]) -> Vec<PositionRows> {
    let mut columns = Column::defaults();
    columns.extend([Column::Uci, Column::Fen, Column::Tag("Event".into())]);
    let mut r = ArchiveReader::open(Cursor::new(packed.to_vec())).unwrap();
    (0..r.blocks().len())
        .map(|i| {
            let block = r.read_block(i).unwrap();
            rows::block_positions(r.codec(), &block, r.first_game(i) - 1, &columns).unwrap()
        })
        .collect()
}

/// Checks row `at` of `rows` against `pos` (before `m`, game `game`).
fn check_row(rows: &PositionRows, at: usize, pos: &Chess, m: Move, game: u64) {
    let board = &rows.board[at * 64..at * 64 + 64];
    for sq in shakmaty::Square::ALL {
        let want = pos
            .board()
            .piece_at(sq)
            .map_or(0, |p| p.role as u8 + if p.color.is_white() { 0 } else { 6 });
        assert_eq!(board[usize::from(sq)], want, "square {sq} of row {at}");
    }
    assert_eq!(rows.turn[at], u8::from(pos.turn().is_black()));
    let castles = pos.castles();
    let bits = [
        (Color::White, CastlingSide::KingSide),
        (Color::White, CastlingSide::QueenSide),
        (Color::Black, CastlingSide::KingSide),
        (Color::Black, CastlingSide::QueenSide),
    ]
    .iter()
    .enumerate()
    .map(|(i, &(c, s))| u8::from(castles.has(c, s)) << i)
    .sum::<u8>();
    assert_eq!(rows.castling[at], bits);
    assert_eq!(
        rows.ep[at],
        pos.ep_square(EnPassantMode::Legal).map_or(64, u8::from)
    );
    assert_eq!(rows.rule50[at], pos.halfmoves());
    assert_eq!(rows.from[at], m.from().map_or(0, u8::from));
    let to = match m {
        Move::Castle { rook, .. } => rook,
        _ => m.to(),
    };
    assert_eq!(rows.to[at], u8::from(to));
    assert_eq!(rows.promotion[at], m.promotion().map_or(0, |r| r as u8));
    assert_eq!(
        rows.uci.get(at),
        Some(UciMove::from_move(m, castles.mode()).to_string().as_str())
    );
    assert_eq!(
        rows.fen.get(at),
        Some(
            Fen::from_position(pos, EnPassantMode::Legal)
                .to_string()
                .as_str()
        )
    );
    assert_eq!(rows.game[at], game);
    let ply = (pos.fullmoves().get() - 1) * 2 + u32::from(pos.turn().is_black());
    assert_eq!(rows.ply[at], ply);
}

/// The PGN text of a game from `start`.
fn pgn_of(start: &Chess, moves: &[Move], tags: &str) -> String {
    let mut text = String::from(tags);
    if start.castles().mode() == CastlingMode::Chess960 {
        text.push_str("[Variant \"Chess960\"]\n");
    }
    if *start != Chess::default() {
        let fen = Fen::from_position(start, EnPassantMode::Legal);
        text.push_str(&format!("[FEN \"{fen}\"]\n[SetUp \"1\"]\n"));
    }
    text.push('\n');
    let mut pos = start.clone();
    for m in moves {
        text.push_str(&format!("{} ", San::from_move(&pos, *m)));
        pos.play_unchecked(*m);
    }
    text.push_str("*\n\n");
    text
}

#[test]
fn regression_issue_59_rows_are_the_sample_replayed() {
    let sample = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../samples/lichess-sample.pgn"
    ))
    .unwrap();
    let games: Vec<_> = GameReader::new(&sample[..]).collect();
    for codec in [&Index as &dyn GameCodec, &ModelCodec::fast()] {
        let blocks = all_rows(&pack(&sample, codec, 7));
        let (mut block, mut at) = (0, 0);
        for (number, g) in games.iter().enumerate() {
            let Ok(g) = g else {
                // A variant: skipped and counted where its block is.
                assert!(blocks.iter().any(|b| b.skipped.contains(&(number as u64))));
                continue;
            };
            let mut pos = g.start.clone();
            let base: Option<u64> = g
                .tag("TimeControl")
                .and_then(|tc| tc.split('+').next()?.parse().ok());
            for (i, &m) in g.moves.iter().enumerate() {
                while at == blocks[block].rows {
                    (block, at) = (block + 1, 0);
                }
                let rows = &blocks[block];
                check_row(rows, at, &pos, m, number as u64);
                // The mover's clock before the move (lichess's readings are
                // whole seconds).
                let clock = match i.checked_sub(2) {
                    Some(j) => g
                        .clocks
                        .get(j)
                        .copied()
                        .flatten()
                        .map(|s| u64::from(s) * 1000),
                    None if g.clocks.iter().any(Option::is_some) => base.map(|b| b * 1000),
                    None => None,
                };
                assert_eq!(rows.clock[at], clock, "game {number} ply {i}");
                let event = g.tag("Event").map(str::to_owned);
                assert_eq!(rows.tags[0].1.get(at).map(str::to_owned), event);
                at += 1;
                pos.play_unchecked(m);
            }
        }
    }
}

#[test]
fn regression_issue_59_clocks_evals_and_results_by_the_side_to_move() {
    let pgn =
        b"[Result \"0-1\"]\n[WhiteElo \"1500\"]\n[BlackElo \"?\"]\n[TimeControl \"180+2\"]\n\n\
        1. e4 { [%eval 0.17] [%clk 0:03:00] } 1... e5 { [%eval #-3] [%clk 0:02:58] } \
        2. Nf3 { [%clk 0:02:55] } 2... Nc6 { [%eval -1.5] } 0-1\n";
    let blocks = all_rows(&pack(pgn, &ModelCodec::fast(), 4096));
    let rows = &blocks[0];
    assert_eq!(rows.rows, 4);
    assert_eq!(rows.result, [Some(-1), Some(1), Some(-1), Some(1)]);
    assert_eq!(rows.white_elo, [Some(1500); 4]);
    assert_eq!(rows.black_elo, [None; 4]);
    assert_eq!((rows.base[0], rows.increment[0]), (Some(180), Some(2)));
    assert_eq!(
        rows.clock,
        [Some(180_000), Some(180_000), Some(180_000), Some(178_000)]
    );
    assert_eq!(rows.eval, [None, Some(17), None, None]);
    assert_eq!(rows.mate, [None, None, Some(-3), None]);
}

#[test]
fn regression_issue_59_a_record_is_the_same_with_or_without_its_text() {
    // A lichess game decodes its record straight from the readings; the
    // same game with a comment in it goes through its text.
    let plain = b"1. e4 { [%eval 0.3] [%clk 0:01:00] } 1... e5 { [%clk 0:00:59] } 2. Nf3 { [%eval #2] } *\n";
    let commented = b"1. e4 { [%eval 0.3] [%clk 0:01:00] } 1... e5 { [%clk 0:00:59] } { good } 2. Nf3 { [%eval #2] } *\n";
    let record = |text: &[u8]| {
        let packed = pack(text, &ModelCodec::fast(), 4096);
        let mut r = ArchiveReader::open(Cursor::new(packed)).unwrap();
        let block = r.read_block(0).unwrap();
        let mut out = Vec::new();
        archive::decode_records(r.codec(), &block, &|_| true, &mut |_, row| {
            let archive::GameRow::Record(row) = row else {
                panic!("a record")
            };
            out.push(row)
        })
        .unwrap();
        let g = out.remove(0);
        (g.moves, g.clocks, g.evals)
    };
    let a = record(plain);
    assert_eq!(a, record(commented));
    assert_eq!(a.1, [Some(60_000), Some(59_000), None]);
    assert_eq!(a.2, [Some(Eval::Centipawns(30)), None, Some(Eval::Mate(2))]);
}

#[test]
fn regression_issue_59_verbatim_games_are_skipped_and_counted() {
    let pgn = b"1. e4 e5 *\n\n\
        [Variant \"Atomic\"]\n\n1. e4 d5 *\n\n\
        1. e4 -- 2. d4 *\n\n\
        [FEN \"4k3/8/8/8/8/8/4P3/4K3 w - - 0 30\"]\n[SetUp \"1\"]\n\n30. e4 Kd7 *\n";
    let blocks = all_rows(&pack(pgn, &Index, 4096));
    let rows = &blocks[0];
    assert_eq!(rows.skipped, [1, 2]);
    assert_eq!(rows.games, 2);
    assert_eq!(rows.game, [0, 0, 3, 3]);
    // From its FEN: ply 58, and the FEN's counters.
    assert_eq!(&rows.ply[2..], [58, 59]);
    assert_eq!(rows.fen.get(3), Some("4k3/8/8/8/4P3/8/8/4K3 b - - 0 30"));
}

#[test]
fn regression_issue_59_the_iterator_gives_the_rows_of_every_block() {
    let sample = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../samples/lichess-sample.pgn"
    ))
    .unwrap();
    let packed = pack(&sample, &Index, 5);
    let blocks = all_rows(&packed);
    let mut r = ArchiveReader::open(Cursor::new(packed)).unwrap();
    let mut it = r.positions();
    let mut n = 0;
    for rows in &blocks {
        for at in 0..rows.rows {
            let row = it.next().unwrap().unwrap();
            check_row(rows, at, &row.position, row.played, row.game);
            assert_eq!(row.clock, rows.clock[at]);
            assert_eq!(row.result, rows.result[at]);
            n += 1;
        }
    }
    assert!(it.next().is_none());
    let skipped: Vec<u64> = blocks.iter().flat_map(|b| b.skipped.clone()).collect();
    assert_eq!(it.skipped(), skipped);
    assert!(n > 2000);
}

#[test]
fn regression_issue_59_only_the_columns_asked_for() {
    let packed = pack(b"1. e4 e5 2. Nf3 *\n", &Index, 4096);
    let mut r = ArchiveReader::open(Cursor::new(packed)).unwrap();
    let block = r.read_block(0).unwrap();
    let cols = [Column::To, Column::Tag("White".into())];
    let rows = rows::block_positions(r.codec(), &block, 0, &cols).unwrap();
    assert_eq!((rows.rows, rows.to.clone()), (3, vec![28, 36, 21]));
    assert!(rows.board.is_empty() && rows.from.is_empty() && rows.clock.is_empty());
    assert_eq!(rows.tags[0].1.get(0), None);
    assert_eq!(
        Column::from_name("Whiteelo"),
        Some(Column::Tag("Whiteelo".into()))
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Random legal games from every kind of start (FENs with castling,
    /// en passant and promotions, Chess960): each row is the position
    /// replayed.
    #[test]
    fn regression_issue_59_rows_of_random_games((start, moves) in arb_game()) {
        let text = pgn_of(&start, &moves, "[Event \"x\"]\n");
        let blocks = all_rows(&pack(text.as_bytes(), &ModelCodec::fast(), 4096));
        let rows = &blocks[0];
        prop_assert_eq!(rows.rows, moves.len());
        let mut pos = start.clone();
        for (i, &m) in moves.iter().enumerate() {
            check_row(rows, i, &pos, m, 0);
            pos.play_unchecked(m);
        }
    }
}
