//! Every game codec round-trips random legal games.

use chesspack::game;
use proptest::prelude::*;

use crate::common::{arb_game, chess960, play, start};

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn every_codec_round_trips((start, moves) in arb_game()) {
        // The engine codecs search every position: tests/it/engine.rs runs
        // them on fewer, shorter games.
        for codec in game::codecs().into_iter().filter(|c| !c.name().starts_with("engine")) {
            let bits = codec.encode(&start, &moves).unwrap();
            prop_assert_eq!(&codec.decode(&start, &bits).unwrap(), &moves, "{}", codec.name());
            prop_assert_eq!(codec.explain(&start, &moves).unwrap().len(), moves.len());
        }
    }
}

#[test]
fn special_moves_are_covered() {
    // The generator must reach castling both ways, en passant and every
    // promotion piece, in standard and Chess960 games.
    let (mut short, mut long, mut ep, mut promos) = (false, false, false, [false; 4]);
    for kind in 0..400u32 {
        let s = start(kind);
        let choices: Vec<u32> = (0..120u32)
            .map(|i| i.wrapping_mul(2654435761).wrapping_add(kind * 7919) >> 7)
            .collect();
        let moves = play(&s, &choices);
        for m in &moves {
            match m.castling_side() {
                Some(shakmaty::CastlingSide::KingSide) => short = true,
                Some(shakmaty::CastlingSide::QueenSide) => long = true,
                None => {}
            }
            ep |= m.is_en_passant();
            if let Some(p) = m.promotion() {
                promos[p as usize - 2] = true;
            }
        }
        // Engine codecs: tests/it/engine.rs (fewer, shorter games).
        for codec in game::codecs()
            .into_iter()
            .filter(|c| !c.name().starts_with("engine"))
        {
            let bits = codec.encode(&s, &moves).unwrap();
            assert_eq!(
                codec.decode(&s, &bits).unwrap(),
                moves,
                "{} start {kind}",
                codec.name()
            );
        }
    }
    assert!(
        short && long && ep && promos.iter().all(|&p| p),
        "{short} {long} {ep} {promos:?}"
    );
}

#[test]
fn empty_games_round_trip() {
    for kind in [0, 1, 2, 6] {
        let s = start(kind);
        for codec in game::codecs() {
            let bits = codec.encode(&s, &[]).unwrap();
            assert!(codec.decode(&s, &bits).unwrap().is_empty());
        }
    }
}

#[test]
fn all_chess960_starts_are_distinct_and_legal() {
    let fens: std::collections::HashSet<String> = (0..960)
        .map(|n| chesspack::position::to_epd(&chess960(n)))
        .collect();
    assert_eq!(fens.len(), 960);
    // Scharnagl 518 is the standard start.
    assert_eq!(
        chesspack::position::to_epd(&chess960(518)),
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq -"
    );
}

#[test]
fn illegal_moves_are_errors() {
    use shakmaty::{Chess, Move, Role, Square};
    let bad = Move::Normal {
        role: Role::Pawn,
        from: Square::E2,
        capture: None,
        to: Square::E5,
        promotion: None,
    };
    for codec in game::codecs() {
        let err = codec.encode(&Chess::default(), &[bad]).unwrap_err();
        assert!(err.to_string().contains("illegal move at ply 0"), "{err}");
    }
}
