//! Every position codec round-trips legal positions; bounds hold.

use chesspack::position::{self, Usenet82, parse_fen, to_epd};
use proptest::prelude::*;
use shakmaty::Position;

use crate::common::{arb_position, chess960};

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn every_codec_round_trips(pos in arb_position()) {
        for codec in position::codecs() {
            let bits = codec.encode(&pos).unwrap();
            let back = codec.decode(&bits).unwrap();
            prop_assert_eq!(to_epd(&back), to_epd(&pos), "{}", codec.name());
        }
    }
}

/// Positions chosen to be hard: promoted pieces, eight pawns each, castling
/// in every corner, en passant next to a king, Chess960 rights.
pub const ADVERSARIAL: &[&str] = &[
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    "r3k2r/pppppppp/8/8/8/8/PPPPPPPP/R3K2R b KQkq - 0 1",
    "rnbqkbnr/pp1ppppp/8/2pP4/8/8/PPP1PPPP/RNBQKBNR w KQkq c6 0 3",
    "rnbqkbnr/pppp1ppp/8/8/3Pp3/8/PPP1PPPP/RNBQKBNR b KQkq d3 0 3",
    "8/8/8/8/k2Pp2Q/8/8/3K4 b - d3 0 1",
    "4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 1",
    "4k3/8/8/8/3pP3/8/8/4K3 b - e3 0 1",
    "QQQQQQQQ/QQQQQQQQ/8/8/8/8/8/k1K5 w - - 0 1",
    "bnrqkrnb/pppppppp/8/8/8/8/PPPPPPPP/BNRQKRNB w KQkq - 0 1",
    "1r2k1r1/8/8/8/8/8/8/1R2K1R1 w KQkq - 0 1",
    "qqqqkqqq/8/8/8/8/8/8/QQQQKQQQ w - - 0 1",
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w - - 0 1",
];

#[test]
fn adversarial_positions_round_trip() {
    for fen in ADVERSARIAL {
        let Ok(pos) = parse_fen(fen) else {
            // Too much material for shakmaty's strict check is a clear error.
            assert!(
                parse_fen(fen)
                    .unwrap_err()
                    .to_string()
                    .contains("invalid position")
            );
            continue;
        };
        for codec in position::codecs() {
            let bits = codec.encode(&pos).unwrap();
            assert_eq!(
                to_epd(&codec.decode(&bits).unwrap()),
                to_epd(&pos),
                "{} {fen}",
                codec.name()
            );
        }
    }
}

#[test]
fn chess960_starts_round_trip() {
    for n in (0..960).step_by(7) {
        let pos = chess960(n);
        for codec in position::codecs() {
            let bits = codec.encode(&pos).unwrap();
            assert_eq!(
                to_epd(&codec.decode(&bits).unwrap()),
                to_epd(&pos),
                "{} {n}",
                codec.name()
            );
        }
    }
}

#[test]
fn usenet82_cost_formula() {
    // 75 + 2·pawns + 4·other non-king pieces, less 2 per castling rook.
    for fen in ADVERSARIAL {
        let Ok(pos) = parse_fen(fen) else { continue };
        let b = pos.board();
        let pawns = b.pawns().count();
        let others = b.occupied().count() - pawns - 2;
        let castling = pos.castles().castling_rights().count();
        let expected = 75 + 2 * pawns + 4 * others - 2 * castling;
        assert_eq!(
            position::PositionCodec::encode(&Usenet82, &pos)
                .unwrap()
                .len(),
            expected,
            "{fen}"
        );
    }
}

#[test]
fn invalid_fens_are_clear_errors() {
    for fen in [
        "8/8/8/8/8/8/8/8 w - - 0 1",
        "k7/8/8/8/8/8/8/KP6 w - - 0 1",
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 extra",
        "P3k3/8/8/8/8/8/8/4K3 w - - 0 1",
        "",
        "hello",
    ] {
        match parse_fen(fen) {
            Ok(pos) => assert_eq!(
                fen.split(' ').count(),
                7,
                "accepted {fen}: {}",
                to_epd(&pos)
            ),
            Err(e) => assert!(e.to_string().starts_with("invalid position"), "{e}"),
        }
    }
}
