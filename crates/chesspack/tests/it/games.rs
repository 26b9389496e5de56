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

    /// The first plies of a stream, self-ending or counted, are the
    /// game's first moves (what a listing of opening tags decodes).
    #[test]
    fn prefixes_are_the_first_moves((start, moves) in arb_game(), plies in 0usize..50) {
        for codec in game::codecs().into_iter().filter(|c| !c.name().starts_with("engine")) {
            let first = &moves[..plies.min(moves.len())];
            let bits = codec.encode(&start, &moves).unwrap();
            let mut more = |m: &[shakmaty::Move]| m.len() < plies;
            prop_assert_eq!(&codec.decode_prefix(&start, &bits, None, &mut more).unwrap(), first, "{}", codec.name());
            let bits = codec.encode_counted(&start, &moves).unwrap();
            prop_assert_eq!(
                &codec.decode_prefix(&start, &bits, Some(moves.len()), &mut more).unwrap(),
                first,
                "{} counted",
                codec.name()
            );
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

proptest! {
    #![proptest_config(ProptestConfig::with_cases(100))]

    #[test]
    fn counted_streams_round_trip((start, moves) in arb_game()) {
        // What the archive uses: the ply count is known, no end marker.
        for codec in game::codecs().into_iter().filter(|c| !c.name().starts_with("engine")) {
            let bits = codec.encode_counted(&start, &moves).unwrap();
            prop_assert_eq!(
                &codec.decode_counted(&start, &bits, moves.len()).unwrap(),
                &moves,
                "{}",
                codec.name()
            );
        }
    }
}

/// Issue 5: the model codec's game end, where the last position has one
/// legal move, none, or many; forced moves cost nothing.
#[test]
fn regression_issue_5_model_codec_game_ends() {
    use chesspack::game::{GameCodec, ModelCodec};
    use shakmaty::{CastlingMode, Chess, Position, fen::Fen, san::San};
    let play_sans = |fen: Option<&str>, sans: &[&str]| {
        let start: Chess = match fen {
            Some(f) => f
                .parse::<Fen>()
                .unwrap()
                .into_position(CastlingMode::Standard)
                .unwrap(),
            None => Chess::default(),
        };
        let mut pos = start.clone();
        let moves: Vec<_> = sans
            .iter()
            .map(|s| {
                let m = s.parse::<San>().unwrap().to_move(&pos).unwrap();
                pos.play_unchecked(m);
                m
            })
            .collect();
        (start, moves, pos)
    };
    // Ends in check with one legal reply (Ka1 attacked by the rook).
    let (start, moves, end) = play_sans(Some("8/8/8/8/8/2k5/8/K6r w - - 0 1"), &[]);
    assert_eq!(end.legal_moves().len(), 1);
    for (start, moves) in [
        (start, moves),
        // Fool's mate: no legal move at the end.
        {
            let (s, m, _) = play_sans(None, &["f3", "e5", "g4", "Qh4#"]);
            (s, m)
        },
        {
            let (s, m, _) = play_sans(None, &[]);
            (s, m)
        },
        {
            // The last move forced, after it many moves.
            let (s, m, _) = play_sans(Some("8/8/8/8/8/2k5/8/K6r w - - 0 1"), &["Ka2", "Rh2+"]);
            (s, m)
        },
    ] {
        let bits = ModelCodec::new().encode(&start, &moves).unwrap();
        assert_eq!(ModelCodec::new().decode(&start, &bits).unwrap(), moves);
    }
    // A forced move costs nothing.
    let (start, moves, _) = play_sans(Some("8/8/8/8/8/2k5/8/K6r w - - 0 1"), &["Ka2"]);
    assert!(ModelCodec::new().explain(&start, &moves).unwrap()[0].bits == 0.0);
    assert!(
        ModelCodec::new()
            .encode_counted(&start, &moves)
            .unwrap()
            .is_empty()
    );
}

/// A game of only the canonically first legal moves codes to (nearly) all
/// zero bits, which the encoders trim.
#[test]
fn runs_of_first_moves_round_trip() {
    use chesspack::order::{Order, sorted_moves};
    use shakmaty::Position;
    let start = shakmaty::Chess::default();
    let mut pos = start.clone();
    let mut moves = Vec::new();
    for _ in 0..120 {
        let legal = sorted_moves(&pos, Order::Thesis);
        if legal.is_empty() {
            break;
        }
        pos.play_unchecked(legal[0]);
        moves.push(legal[0]);
    }
    for name in ["model", "fast", "engine-arith"] {
        let codec = chesspack::game::codec(name).unwrap();
        let n = if name.starts_with("engine") {
            40
        } else {
            moves.len()
        };
        let bits = codec.encode(&start, &moves[..n]).unwrap();
        assert_eq!(codec.decode(&start, &bits).unwrap(), moves[..n], "{name}");
        let bits = codec.encode_counted(&start, &moves[..n]).unwrap();
        assert_eq!(
            codec.decode_counted(&start, &bits, n).unwrap(),
            moves[..n],
            "{name}"
        );
    }
}

/// The range-coded codecs end a game by the length of its stream: a game
/// cut after any ply comes back with exactly those plies, whether the cut
/// falls after a likely move (whose stream ends where an earlier cut's
/// would), a forced one, or at the start.
#[test]
fn games_cut_after_any_ply_round_trip() {
    use chesspack::order::{Order, sorted_moves};
    use shakmaty::Position;
    let games = [
        // Random games, and a game of only first moves (collisions galore).
        crate::common::play(
            &shakmaty::Chess::default(),
            &[7, 3, 11, 2, 5, 9, 1, 4, 13, 6],
        ),
        crate::common::play(
            &crate::common::start(3),
            &(0..40).map(|i| i * 7 + 1).collect::<Vec<_>>(),
        ),
        {
            let mut pos = shakmaty::Chess::default();
            let mut moves = Vec::new();
            for _ in 0..30 {
                let m = sorted_moves(&pos, Order::Thesis)[0];
                pos.play_unchecked(m);
                moves.push(m);
            }
            moves
        },
    ];
    let starts = [
        shakmaty::Chess::default(),
        crate::common::start(3),
        shakmaty::Chess::default(),
    ];
    for name in ["model", "fast", "engine-arith"] {
        let codec = chesspack::game::codec(name).unwrap();
        for (start, moves) in starts.iter().zip(&games) {
            let cuts = if name == "engine-arith" {
                12
            } else {
                moves.len()
            };
            for n in 0..=cuts.min(moves.len()) {
                let bits = codec.encode(start, &moves[..n]).unwrap();
                assert_eq!(
                    codec.decode(start, &bits).unwrap(),
                    moves[..n],
                    "{name}, {n} plies"
                );
            }
        }
    }
}
