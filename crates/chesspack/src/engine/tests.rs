//! The search: mates, hanging pieces, losing captures, and golden scores
//! that pin the engine bit for bit.

use shakmaty::{Chess, Position, san::San, uci::UciMove};

use super::{MATE, best_move, score_moves};
use crate::hash::fnv1a;

fn pos(fen: &str) -> Chess {
    fen.parse::<shakmaty::fen::Fen>()
        .unwrap()
        .into_position(shakmaty::CastlingMode::Standard)
        .or_else(shakmaty::PositionError::ignore_too_much_material)
        .unwrap()
}

/// The start positions with castling, promotions and en passant of the
/// integration tests.
const FEN_STARTS: &[&str] = &[
    "r3k2r/pppppppp/8/8/8/8/PPPPPPPP/R3K2R w KQkq - 0 1",
    "4k3/1P4P1/8/3pP3/8/8/1p4p1/4K3 w - d6 0 1",
    "r3k2r/P6P/8/8/8/8/p6p/R3K2R b KQkq - 0 1",
    "8/2P5/8/8/8/8/5p2/k1K5 w - - 0 1",
    "kBQQQQQQ/BR5Q/Q6Q/Q6Q/Q6Q/Q6Q/Q6Q/KQQQQQQQ w - - 0 1",
    "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3",
];

fn best_san(fen: &str, depth: u8) -> (String, i32) {
    let p = pos(fen);
    let (m, v) = best_move(&p, depth).unwrap();
    (San::from_move(&p, m).to_string(), v)
}

fn score_of(fen: &str, san: &str, depth: u8) -> i32 {
    let p = pos(fen);
    let m = san.parse::<San>().unwrap().to_move(&p).unwrap();
    score_moves(&p, depth)
        .0
        .into_iter()
        .find(|(o, _)| *o == m)
        .unwrap()
        .1
}

#[test]
fn finds_mates_in_one() {
    for depth in [0, 1, 2] {
        for (fen, mate) in [
            (
                "r1bqkb1r/pppp1ppp/2n2n2/4p2Q/2B1P3/8/PPPP1PPP/RNB1K1NR w KQkq - 4 4",
                "Qxf7",
            ),
            ("6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1", "Ra8"),
            ("r5k1/8/8/8/8/8/5PPP/6K1 b - - 0 1", "Ra1"),
            ("7k/8/5N2/8/8/8/8/K5R1 w - - 0 1", "Rg8"),
        ] {
            assert_eq!(
                best_san(fen, depth),
                (mate.to_owned(), MATE - 1),
                "{fen} depth {depth}"
            );
        }
    }
}

#[test]
fn finds_mates_in_two() {
    // Two rooks: Ra7 (or Rb7) confines the king, the other rook mates.
    let (m, v) = best_san("7k/8/8/8/8/8/R7/1R4K1 w - - 0 1", 2);
    assert!(["Ra7", "Rb7"].contains(&m.as_str()), "{m}");
    assert_eq!(v, MATE - 3);
    // Queen and king: Qg7+ is not mate, but Kf6 first is.
    let (_, v) = best_san("7k/8/5K2/8/8/8/8/6Q1 w - - 0 1", 2);
    assert_eq!(v, MATE - 1, "Qg7 is already mate in one here");
    let (m, v) = best_san("6k1/8/4K3/8/8/8/8/7Q w - - 0 1", 2);
    assert_eq!(v, MATE - 3, "{m}");
}

#[test]
fn wins_hanging_pieces() {
    for depth in [0, 1, 2] {
        assert_eq!(
            best_san("4k3/8/8/3r4/8/8/8/3QK3 w - - 0 1", depth).0,
            "Qxd5"
        );
        assert_eq!(
            best_san("6k1/8/8/4n3/8/8/8/4RK2 w - - 0 1", depth).0,
            "Rxe5"
        );
        assert_eq!(
            best_san(
                "rnbqkb1r/pppppppp/8/8/4n3/3P4/PPP2PPP/RNBQKBNR w KQkq - 0 3",
                depth
            )
            .0,
            "dxe4"
        );
    }
}

#[test]
fn avoids_losing_captures() {
    for depth in [0, 1, 2] {
        // The knight is defended by a pawn; the pawn by a rook.
        for (fen, capture, loss) in [
            ("4k3/8/4p3/3n4/8/8/8/3QK3 w - - 0 1", "Qxd5", 400),
            ("3rk3/8/8/3p4/8/8/8/3RK3 w - - 0 1", "Rxd5", 200),
        ] {
            let (m, best) = best_san(fen, depth);
            assert_ne!(m, capture);
            assert!(
                best - score_of(fen, capture, depth) > loss,
                "{fen} depth {depth}"
            );
        }
    }
}

/// FNV-1a over the scores of every legal move of the test positions at
/// depths 0 to 2, and the best move of each at depth 1: pins the engine
/// bit for bit. CI also compresses the sample with the engine codecs at
/// depth 2 in debug and release builds and compares the bytes (`.ci/run`).
#[test]
fn golden_scores() {
    let mut fens: Vec<&str> = FEN_STARTS.to_vec();
    fens.extend([
        "r1bqkb1r/pppp1ppp/2n2n2/4p2Q/2B1P3/8/PPPP1PPP/RNB1K1NR w KQkq - 4 4",
        "r1bq1rk1/pp2nppp/2n1p3/3pP3/1b1P4/2NB1N2/PP3PPP/R1BQK2R w KQ d6 0 9",
        "8/8/4k3/3p4/3P4/4K3/8/8 w - - 0 1",
        "6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1",
    ]);
    let mut text = String::new();
    let mut best = Vec::new();
    for fen in &fens {
        let p = pos(fen);
        for depth in 0..=2 {
            let (scored, _) = score_moves(&p, depth);
            for (m, v) in scored {
                text.push_str(&format!(
                    "{} {v};",
                    UciMove::from_move(m, p.castles().mode())
                ));
            }
        }
        let (m, v) = best_move(&p, 1).unwrap();
        best.push(format!("{} {v}", San::from_move(&p, m)));
    }
    assert_eq!(best, GOLDEN_BEST);
    assert_eq!(fnv1a(text.as_bytes()), GOLDEN_HASH);
}

const GOLDEN_BEST: &[&str] = &[
    "d4 10",
    "b8=Q 1235",
    "Rxa7 14",
    "Kc2 33",
    "Bb6 29999",
    "Nf3 46",
    "Qxf7 29999",
    "Be3 122",
    "Kd3 10",
    "Ra8 29999",
];
const GOLDEN_HASH: u64 = 15_952_260_981_581_731_946;
