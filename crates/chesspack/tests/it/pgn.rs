//! Reading PGN: fixtures, bad input, variants.

use chesspack::{game, pgn::GameReader};

const SAMPLE: &str = include_str!("../../../../samples/lichess-sample.pgn");

#[test]
fn sample_games_round_trip_in_every_codec() {
    let mut games = 0;
    let mut skipped = Vec::new();
    for result in GameReader::new(SAMPLE.as_bytes()) {
        match result {
            Ok(g) => {
                games += 1;
                for codec in game::codecs() {
                    let bits = codec.encode(&g.start, &g.moves).unwrap();
                    assert_eq!(codec.decode(&g.start, &bits).unwrap(), g.moves);
                }
            }
            Err(e) => skipped.push(e),
        }
    }
    assert_eq!(games, 36);
    assert_eq!(skipped.len(), 1);
    assert!(
        skipped[0].reason.contains("King of the Hill"),
        "{}",
        skipped[0]
    );
}

#[test]
fn bad_games_are_skipped_and_reading_goes_on() {
    let pgn = "\
[Event \"ok\"]\n\n1. e4 e5 2. Nf3 1-0\n\n\
[Event \"illegal\"]\n\n1. e4 e5 2. Ke3 1-0\n\n\
[Event \"bad fen\"]\n[FEN \"not a fen\"]\n[SetUp \"1\"]\n\n1. e4 *\n\n\
[Event \"unterminated comment\"]\n\n1. e4 { never closed\n";
    let results: Vec<_> = GameReader::new(pgn.as_bytes()).collect();
    assert!(results.len() >= 3, "{results:?}");
    assert_eq!(results[0].as_ref().unwrap().moves.len(), 3);
    let e = results[1].as_ref().unwrap_err();
    assert_eq!(e.number, 2);
    assert!(e.reason.contains("illegal move Ke3 at ply 3"), "{e}");
    let e = results[2].as_ref().unwrap_err();
    assert!(e.reason.contains("invalid fen"), "{e}");
}

#[test]
fn crlf_bom_and_variations() {
    let pgn = "\u{feff}[Event \"x\"]\r\n\r\n1. e4 (1. d4 d5) e5 {comment} 2. Nf3 $1 Nc6 *\r\n";
    let g = GameReader::new(pgn.as_bytes()).next().unwrap().unwrap();
    assert_eq!(g.moves.len(), 4);
}

#[test]
fn empty_input_has_no_games() {
    assert_eq!(GameReader::new(&b""[..]).count(), 0);
}
