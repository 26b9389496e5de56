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

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// The enumerative code numbers every rankable position and gives it
    /// back; `position-model` never exceeds 157 bits (the rank's length)
    /// for them.
    #[test]
    fn rank_round_trips_and_bounds_position_model(pos in arb_position()) {
        use chesspack::position::{PositionCodec, PositionModel, rank};
        if let Ok(bits) = rank::rank(&pos) {
            prop_assert_eq!(bits.len(), rank::BITS as usize);
            let back = rank::unrank(&bits).unwrap();
            prop_assert_eq!(to_epd(&back), to_epd(&pos));
            prop_assert!(PositionModel.encode(&pos).unwrap().len() <= rank::BITS as usize);
        }
    }
}

#[test]
fn position_model_worst_case_is_157_bits() {
    use chesspack::position::{PositionCodec, PositionModel, rank};
    let mut escaped = 0;
    for fen in ADVERSARIAL.iter().chain(&[
        // Eight promoted pieces each after captures, castling rights in
        // every corner, an en-passant capture.
        "RNBQKBNR/QQQQQQQQ/8/8/8/8/qqqqqqqq/rnbqkbnr w - - 0 1",
        "r3k2r/pppppppp/8/8/8/8/PPPPPPPP/R3K2R w KQkq - 0 1",
        "rnbqkbnr/pppppp1p/8/8/5Pp1/8/PPPPP1PP/RNBQKBNR b KQkq f3 0 3",
        "1n2k1n1/QQQQQQQQ/8/8/8/8/qqqqqqqq/1N2K1N1 b - - 0 1",
    ]) {
        let Ok(pos) = parse_fen(fen) else { continue };
        let bits = PositionModel.encode(&pos).unwrap();
        if rank::rank(&pos).is_ok() {
            assert!(
                bits.len() <= rank::BITS as usize,
                "{fen}: {} bits",
                bits.len()
            );
        }
        if bits.len() == rank::BITS as usize {
            escaped += 1;
        }
        assert_eq!(to_epd(&PositionModel.decode(&bits).unwrap()), to_epd(&pos));
    }
    assert!(escaped > 0, "no adversarial position took the escape");
}

#[test]
fn unreachable_material_is_not_ranked() {
    use chesspack::position::rank;
    // Sixteen queens and both kings: no captures, so no promotions.
    let pos = parse_fen("QQQQQQQQ/QQQQQQQQ/8/8/8/8/8/k1K5 w - - 0 1");
    if let Ok(pos) = pos {
        assert!(rank::rank(&pos).is_err());
    }
}

mod archive {
    use chesspack::{
        archive::ArchiveError,
        datasets::positions,
        files::{self, Kind, Settings},
    };

    fn compress(text: &str) -> (Vec<u8>, positions::PositionReport) {
        let mut settings = Settings::default();
        settings.archive.level = 3;
        let mut archive = Vec::new();
        let report = files::compress(
            Kind::Positions,
            text.as_bytes(),
            &mut archive,
            &settings,
            &mut |_| std::ops::ControlFlow::Continue(()),
        )
        .unwrap();
        (archive, report.positions.unwrap())
    }

    fn decompress(archive: &[u8], out: &mut Vec<u8>) -> Result<u64, ArchiveError> {
        let report = files::decompress(
            std::io::Cursor::new(archive),
            out,
            &Settings::default(),
            &mut |_| std::ops::ControlFlow::Continue(()),
        )?;
        Ok(report.items)
    }

    fn round_trip(text: &str) -> positions::PositionReport {
        let (archive, report) = compress(text);
        let mut back = Vec::new();
        decompress(&archive, &mut back).unwrap();
        assert_eq!(String::from_utf8(back).unwrap(), text);
        report
    }

    #[test]
    fn csv_epd_and_fen_files_come_back_byte_for_byte() {
        let csv = "PuzzleId,FEN,Moves,Rating\n\
                   a,r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4,e1g1,1500\n\
                   b,8/8/8/4k3/8/8/4K3/7R b - - 0 60,e5d4,900\n\
                   c,not a fen,x,1\n";
        let r = round_trip(csv);
        assert_eq!((r.lines, r.positions, r.verbatim), (4, 2, 2));
        let epd = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - id \"e4\";\r\n\
                   4k3/8/8/3pP3/8/8/8/4K3 w - d6 bm Kd2;\r\n";
        assert_eq!(round_trip(epd).positions, 2);
        // An en-passant square without a capture does not come back from
        // the position: the line is kept as text.
        let fen = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 1\n# comment\n\nk7/8/8/8/8/8/8/7K w - - 0 1";
        let r = round_trip(fen);
        assert_eq!((r.positions, r.verbatim), (1, 3));
        assert_eq!(round_trip("").lines, 0);
    }

    #[test]
    fn a_damaged_block_is_named() {
        let (mut archive, _) = compress("k7/8/8/8/8/8/8/7K w - -\n");
        let n = archive.len();
        archive[n - 12] ^= 0x55;
        let err = decompress(&archive, &mut Vec::new()).unwrap_err();
        assert!(
            matches!(err, ArchiveError::Damaged { block: 1, .. }),
            "{err}"
        );
        let err = decompress(&archive[..n - 20], &mut Vec::new()).unwrap_err();
        assert!(err.to_string().contains("block 1"), "{err}");
    }
}
