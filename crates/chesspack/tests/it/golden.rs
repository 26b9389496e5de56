//! Golden bytes: these pin every format. A change here is a format change.

use chesspack::{game, pgn::GameReader, position};

const GAME: &str = "1. e4 c5 2. Nf3 d6 3. d4 cxd4 4. Nxd4 Nf6 5. Nc3 a6 6. Be3 e5 7. Nb3 Be6 \
8. f3 Be7 9. Qd2 O-O 10. O-O-O Nbd7 11. g4 b5 12. g5 b4 13. Ne2 Ne8 14. f4 a5 15. f5 a4 \
16. Nbd4 exd4 17. Nxd4 b3 18. Kb1 bxc2+ 19. Nxc2 Bb3 20. axb3 axb3 21. Na3 Rxa3 22. bxa3 Qa5 0-1";

const GOLDEN_GAMES: &[(&str, usize, &str)] = &[
    (
        "squares",
        528,
        "31cca2195ceb2db89b55bfad052c28094d246d1eac355f740cbf3f100e7339ec617a685948cb7c55da2076581845b91b31b65108144a6cab11211611290e10250ee0",
    ),
    (
        "index",
        239,
        "acd84290de0308d04cf4ba82eb8b212521767c0f0048b0c11e481084004e",
    ),
    (
        "radix",
        221,
        "6ddb75f4e0a421dee6cbd57c8141adb86ea3b28f6601c84a4e81c168",
    ),
    ("engine-huffman", 67, "40002000000a3d1f80"),
    ("engine-arith", 41, "458231839780"),
    ("model", 43, "7a06a7c8eee0"),
    ("fast", 169, "9d90432590861ab53f99c65cda296b341295c6ed5380"),
    ("brisk", 36, "7aa0265ad0"),
];

const FEN: &str = "r1bq1rk1/pp2nppp/2n1p3/3pP3/1b1P4/2NB1N2/PP3PPP/R1BQK2R w KQ d6 0 9";

const GOLDEN_POSITIONS: &[(&str, usize, &str)] = &[
    ("usenet82", 155, "13ecadcd209214aa83a803f01c61b1cdb79dcf00"),
    (
        "kingspawns",
        159,
        "09f7b09b22d16d2a5432a03d069c7e6bff8df61a",
    ),
    ("arith", 78, "43cb898ca3cf0af09294"),
    (
        "packed",
        184,
        "6df314180a2ce39d4da80d00004252c0301131117195b7",
    ),
    ("position-model", 52, "40be4f4bfedc70"),
];

#[test]
fn game_formats_are_pinned() {
    let g = GameReader::new(GAME.as_bytes()).next().unwrap().unwrap();
    for &(name, len, hex) in GOLDEN_GAMES {
        let bits = game::codec(name)
            .unwrap()
            .encode(&g.start, &g.moves)
            .unwrap();
        assert_eq!((bits.len(), bits.to_hex().as_str()), (len, hex), "{name}");
    }
}

/// `model` in a game's context (issue 26): the golden game (43 bits with
/// no context) between two 1500s at 3+2, and between a 900 and a 2700 in
/// a classical game; each stream is pinned, and `brisk`'s.
#[test]
fn model_streams_in_context_are_pinned() {
    use chesspack::{
        game::GameCodec,
        model::{GameContext, TimeControl},
    };
    let g = GameReader::new(GAME.as_bytes()).next().unwrap().unwrap();
    let blitz = GameContext::new()
        .with_ratings(Some(1500), Some(1500))
        .with_time_control(Some(TimeControl::Clock {
            base: 180,
            increment: 2,
        }));
    let classical = GameContext::new()
        .with_ratings(Some(900), Some(2700))
        .with_time_control(TimeControl::parse(b"5400+30"));
    let mut got = Vec::new();
    // `brisk` (issue 58) reads the same context.
    for codec in [game::ModelCodec::new(), game::ModelCodec::brisk()] {
        for ctx in [&blitz, &classical] {
            let bits = codec
                .clone()
                .with_context(ctx.clone())
                .encode(&g.start, &g.moves)
                .unwrap();
            got.push((bits.len(), bits.to_hex()));
        }
    }
    assert_eq!(
        got,
        [
            (68, "888163338189e53c90".to_owned()),
            (61, "71017789b484efd8".to_owned()),
            (56, "76912826e5751d".to_owned()),
            (51, "8142bc9a574e60".to_owned())
        ]
    );
}

#[test]
fn position_formats_are_pinned() {
    let pos = position::parse_fen(FEN).unwrap();
    for &(name, len, hex) in GOLDEN_POSITIONS {
        let bits = position::codec(name).unwrap().encode(&pos).unwrap();
        assert_eq!((bits.len(), bits.to_hex().as_str()), (len, hex), "{name}");
    }
}

/// The engine codecs without the book: the engine's probabilities alone
/// decide every move of the golden game (with the book, its opening costs
/// almost nothing).
#[test]
fn bookless_engine_formats_are_pinned() {
    use game::{
        GameCodec,
        engine_codec::{Coding, EngineCodec, EngineParams},
    };
    let g = GameReader::new(GAME.as_bytes()).next().unwrap().unwrap();
    let bookless = EngineParams {
        book: false,
        ..EngineParams::default()
    };
    for (coding, len, hex) in [
        (
            Coding::Huffman,
            203,
            "9032077e598723c49255d73ed31beec423347e210d4e8a3d1f80",
        ),
        (
            Coding::Arith,
            202,
            "903203727d73dada412ecb654513c97467e9cf99dfbff34eb940",
        ),
    ] {
        let bits = EngineCodec::with_params(coding, bookless)
            .encode(&g.start, &g.moves)
            .unwrap();
        assert_eq!(
            (bits.len(), bits.to_hex().as_str()),
            (len, hex),
            "{coding:?}"
        );
    }
}
