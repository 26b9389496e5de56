//! The embedded engine (search tests, golden scores) and the engine codecs.

use chesspack::{
    Error,
    game::{
        GameCodec,
        engine_codec::{Coding, EngineCodec, EngineParams},
    },
    pgn::GameReader,
};
use proptest::prelude::*;
use shakmaty::{Chess, Move, Position, san::San};

use crate::common::{FEN_STARTS, arb_game, play, start};

fn pos(fen: &str) -> Chess {
    chesspack::pgn::start_position(None, Some(fen)).unwrap()
}

/// The moves of `sans` played one after another from `start`.
fn moves_of(start: &Chess, sans: &[&str]) -> Vec<Move> {
    let mut p = start.clone();
    sans.iter()
        .map(|s| {
            let m = s.parse::<San>().unwrap().to_move(&p).unwrap();
            p.play_unchecked(m);
            m
        })
        .collect()
}

fn sample_games(n: usize) -> Vec<(Chess, Vec<Move>)> {
    let pgn = include_str!("../../../../samples/lichess-sample.pgn");
    GameReader::new(pgn.as_bytes())
        .flatten()
        .take(n)
        .map(|g| (g.start, g.moves))
        .collect()
}

fn codecs() -> Vec<EngineCodec> {
    let custom = EngineParams {
        depth: 0,
        k_tenths: 125,
        book: false,
    };
    let bookless = EngineParams {
        book: false,
        ..EngineParams::default()
    };
    vec![
        EngineCodec::new(Coding::Huffman),
        EngineCodec::new(Coding::Arith),
        EngineCodec::with_params(Coding::Huffman, custom),
        EngineCodec::with_params(Coding::Arith, custom),
        EngineCodec::with_params(Coding::Huffman, bookless),
        EngineCodec::with_params(Coding::Arith, bookless),
    ]
}

#[test]
fn sample_games_round_trip() {
    for (start, moves) in sample_games(12) {
        for codec in codecs() {
            let bits = codec.encode(&start, &moves).unwrap();
            assert_eq!(
                codec.decode(&start, &bits).unwrap(),
                moves,
                "{}",
                codec.name()
            );
            // Parameters travel in the stream: a default codec decodes too.
            let plain = EngineCodec::new(codec.coding());
            assert_eq!(plain.decode(&start, &bits).unwrap(), moves);
        }
    }
}

#[test]
fn engine_beats_index_on_sample_games() {
    let index = chesspack::game::Index;
    let (mut engine_bits, mut index_bits) = (0, 0);
    for (start, moves) in sample_games(30) {
        engine_bits += EngineCodec::new(Coding::Huffman)
            .encode(&start, &moves)
            .unwrap()
            .len();
        index_bits += index.encode(&start, &moves).unwrap().len();
    }
    assert!(
        engine_bits * 10 < index_bits * 8,
        "{engine_bits} vs {index_bits}"
    );
}

#[test]
fn the_book_makes_main_lines_cheap() {
    // A main line of the Ruy Lopez: in the book, most moves are the
    // masters' usual choice, which the engine alone often is not.
    let start = Chess::default();
    let moves = moves_of(
        &start,
        &[
            "e4", "e5", "Nf3", "Nc6", "Bb5", "a6", "Ba4", "Nf6", "O-O", "Be7", "Re1", "b5", "Bb3",
            "d6", "c3", "O-O",
        ],
    );
    let bookless = EngineParams {
        book: false,
        ..EngineParams::default()
    };
    for coding in [Coding::Huffman, Coding::Arith] {
        let with = EngineCodec::new(coding).encode(&start, &moves).unwrap();
        let without = EngineCodec::with_params(coding, bookless)
            .encode(&start, &moves)
            .unwrap();
        // 16 plies: at most 2 bits each with the book, and far fewer than
        // without it (the longer header included).
        assert!(with.len() <= 32, "{coding:?}: {} bits", with.len());
        assert!(
            with.len() * 2 < without.len(),
            "{coding:?}: {} vs {}",
            with.len(),
            without.len()
        );
        let ranks: Vec<usize> = EngineCodec::new(coding)
            .explain(&start, &moves)
            .unwrap()
            .iter()
            .map(|c| c.rank.unwrap())
            .collect();
        assert!(ranks.iter().filter(|&&r| r == 0).count() >= 12, "{ranks:?}");
    }
}

#[test]
fn game_ends_in_forced_positions() {
    // Black to move has one legal move (Kg8) in the first FEN.
    let forced = "7k/R7/8/8/8/8/8/4K3 b - - 0 1";
    let free = "7k/R7/8/8/8/8/8/4K3 w - - 0 1";
    let cases: &[(&str, &[&str])] = &[
        (forced, &[]),
        (forced, &["Kg8"]),
        (forced, &["Kg8", "Ke2"]),
        (free, &[]),
        (free, &["Ke2"]),
        (free, &["Ke2", "Kg8"]),
        (free, &["Ra8#"]),
    ];
    for &(fen, sans) in cases {
        let start = pos(fen);
        let moves = moves_of(&start, sans);
        for codec in codecs() {
            let bits = codec.encode(&start, &moves).unwrap();
            assert_eq!(
                codec.decode(&start, &bits).unwrap(),
                moves,
                "{fen} {sans:?}"
            );
            let explained = codec.explain(&start, &moves).unwrap();
            for (cost, san) in explained.iter().zip(sans) {
                if *san == "Kg8" {
                    assert_eq!(cost.bits, 0.0, "a forced move costs nothing");
                }
            }
        }
    }
}

#[test]
fn bad_headers_are_errors() {
    // Custom parameters with k = 0.5 (k_tenths 5) in the Huffman header.
    // 1 (custom), 001 (Huffman parameters), k_tenths 5 in 16 bits, depth
    // 0 as the Elias gamma code of 1.
    let bits = chesspack::Bits::from_bytes(vec![0b1001_0000, 0, 0b0101_1000], 21).unwrap();
    let err = EngineCodec::new(Coding::Huffman)
        .decode(&Chess::default(), &bits)
        .unwrap_err();
    assert!(matches!(err, Error::InvalidData(_)), "{err}");
}

/// Issue 3 (found by fuzzing `decode_engine_arith`): a few bytes whose
/// header asked for a depth-7 search kept the decoder busy for hours; a
/// decoder now refuses streams deeper than its own depth or 3, and a
/// decoder made with that depth reads them.
#[test]
fn regression_issue_3_deep_stream_headers_are_refused() {
    // Archives decode engine streams of at most this depth.
    const STREAM_DEPTH_LIMIT: u8 = 3;
    let start = pos("8/8/8/4k3/8/8/8/4K2R w K - 0 1");
    let moves = moves_of(&start, &["Rh5+", "Kd4"]);
    let deep = EngineParams {
        depth: STREAM_DEPTH_LIMIT + 1,
        ..EngineParams::default()
    };
    for coding in [Coding::Huffman, Coding::Arith] {
        let bits = EngineCodec::with_params(coding, deep)
            .encode(&start, &moves)
            .unwrap();
        let err = EngineCodec::new(coding).decode(&start, &bits).unwrap_err();
        assert!(err.to_string().contains("depth 4"), "{err}");
        assert_eq!(
            EngineCodec::with_params(coding, deep)
                .decode(&start, &bits)
                .unwrap(),
            moves
        );
    }
}

#[test]
fn garbage_ends_quickly() {
    // Zero bits decode as the lowest symbols: the information bound stops
    // the arithmetic decoder long before MAX_PLIES.
    // Issue 41: the bound is asserted (an error, or a game far shorter
    // than MAX_PLIES).
    let bits = chesspack::Bits::from_bytes(vec![0x55; 4], 32).unwrap();
    for codec in codecs() {
        if let Ok(moves) = codec.decode(&Chess::default(), &bits) {
            assert!(
                (moves.len() as u64) < chesspack::game::MAX_PLIES / 20,
                "{}: {} plies from 32 bits",
                codec.name(),
                moves.len()
            );
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]

    #[test]
    fn random_games_round_trip((start, moves) in arb_game()) {
        let moves = &moves[..moves.len().min(40)];
        for codec in codecs() {
            let bits = codec.encode(&start, moves).unwrap();
            prop_assert_eq!(&codec.decode(&start, &bits).unwrap(), moves, "{}", codec.name());
        }
    }
}

#[test]
fn regression_issue_3_chess960_and_fen_starts_round_trip() {
    for kind in 0..4 * FEN_STARTS.len() as u32 {
        let start = start(kind);
        let moves = play(&start, &[7, 3, 11, 2, 5, 8, 1, 9, 4, 6, 13, 0]);
        for codec in codecs() {
            let bits = codec.encode(&start, &moves).unwrap();
            assert_eq!(codec.decode(&start, &bits).unwrap(), moves);
        }
    }
}
