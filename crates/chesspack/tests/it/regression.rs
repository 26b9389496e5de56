//! Regression vectors from the source documents (issue 2).

use chesspack::{
    game::{self, GameCodec, Index, Radix},
    order::{Order, index_of, sorted_moves},
    position::{KingsPawns, PositionCodec, Usenet82, parse_fen},
};
use shakmaty::{Chess, san::San, uci::UciMove};

#[test]
fn issue_2_index_order_of_the_start_position() {
    let pos = Chess::default();
    let sans: Vec<String> = sorted_moves(&pos, Order::Thesis)
        .iter()
        .map(|m| San::from_move(&pos, *m).to_string())
        .collect();
    assert_eq!(
        sans,
        [
            "a3", "a4", "Na3", "Nc3", "b3", "b4", "c3", "c4", "d3", "d4", "e3", "e4", "f3", "f4",
            "Nf3", "Nh3", "g3", "g4", "h3", "h4"
        ]
    );
    // 20 moves, 5 bits each.
    let e4 = "e2e4".parse::<UciMove>().unwrap().to_move(&pos).unwrap();
    let costs = Index.explain(&pos, &[e4]).unwrap();
    assert_eq!(
        (costs[0].legal, costs[0].rank, costs[0].bits),
        (20, Some(11), 5.0)
    );
}

#[test]
fn issue_2_radix_e2e4_is_index_13_of_20() {
    let pos = Chess::default();
    let e4 = "e2e4".parse::<UciMove>().unwrap().to_move(&pos).unwrap();
    assert_eq!(index_of(&pos, e4, Order::SquareIndex), Some((13, 20)));
    assert_eq!(Radix.explain(&pos, &[e4]).unwrap()[0].rank, Some(13));
}

#[test]
fn issue_2_usenet82_start_board_takes_163_bits() {
    // 13 + 32·1 + 16·3 + 14·5: the source counts the start board with plain
    // rooks, i.e. without castling rights.
    let board = parse_fen("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w - - 0 1").unwrap();
    assert_eq!(Usenet82.encode(&board).unwrap().len(), 163);
    // With the castling rule, the four rooks are 3-bit markers.
    assert_eq!(Usenet82.encode(&Chess::default()).unwrap().len(), 155);
}

#[test]
fn issue_2_usenet82_worst_cases() {
    // Every promotion adds 2 bits: 8 promotions and no capture give 179 bits,
    // all 16 pawns promoted the absolute bound of 195.
    let eight = parse_fen("rnbqkbnr/qqqqpppp/8/8/8/8/QQQQPPPP/RNBQKBNR w - - 0 1").unwrap();
    assert_eq!(Usenet82.encode(&eight).unwrap().len(), 179);
    let sixteen = parse_fen("rnbqkbnr/qqqqqqqq/8/8/8/8/QQQQQQQQ/RNBQKBNR w - - 0 1").unwrap();
    assert_eq!(Usenet82.encode(&sixteen).unwrap().len(), 195);
}

#[test]
fn issue_2_kingspawns_start_position() {
    // 1 + 12 + 6 + 32·1 + 16·3 + 14·4 = 155, + side to move + 4 castling bits.
    assert_eq!(KingsPawns.encode(&Chess::default()).unwrap().len(), 160);
}

#[test]
fn issue_2_more_than_256_legal_moves() {
    let start = chesspack::pgn::start_position(
        None,
        Some("kBQQQQQQ/BR5Q/Q6Q/Q6Q/Q6Q/Q6Q/Q6Q/KQQQQQQQ w - - 0 1"),
    )
    .unwrap();
    let moves = sorted_moves(&start, Order::Thesis);
    assert!(moves.len() > 256, "{}", moves.len());
    let last = *moves.last().unwrap();
    for codec in game::codecs() {
        let bits = codec.encode(&start, &[last]).unwrap();
        assert_eq!(
            codec.decode(&start, &bits).unwrap(),
            [last],
            "{}",
            codec.name()
        );
    }
    let cost = Index.explain(&start, &[last]).unwrap();
    assert_eq!(cost[0].bits, 9.0);
}

#[test]
fn issue_2_forced_moves_cost_nothing_in_index() {
    // Black's king has one square: h7.
    let start = chesspack::pgn::start_position(None, Some("7k/8/8/8/8/8/8/K5Q1 b - - 0 1"));
    let start = start.unwrap();
    let legal = sorted_moves(&start, Order::Thesis);
    assert_eq!(legal.len(), 1);
    let cost = Index.explain(&start, &[legal[0]]).unwrap();
    assert_eq!(cost[0].bits, 0.0);
}

/// Issue 41: a start position that cannot be played is a typed error, with
/// the message the PGN reader and the archive give.
#[test]
fn regression_issue_41_start_position_errors_are_typed() {
    use chesspack::{Error, pgn::start_position};
    // TCEC's `normal` is standard chess (issue 44).
    assert_eq!(
        start_position(Some("normal"), None).unwrap(),
        shakmaty::Chess::default()
    );
    let err = start_position(Some("Atomic"), None).unwrap_err();
    assert_eq!(err, Error::UnsupportedVariant("Atomic".into()));
    assert_eq!(err.to_string(), "unsupported variant \"Atomic\"");
    let err = start_position(None, Some("8/8/8 w - -")).unwrap_err();
    assert!(
        matches!(&err, Error::InvalidFen { fen, .. } if fen == "8/8/8 w - -"),
        "{err}"
    );
    assert!(
        err.to_string().starts_with("invalid fen \"8/8/8 w - -\": "),
        "{err}"
    );
}

/// Issue 44: games of tags alone (a blank line, then the next game's tags)
/// stay games of their own, and come back byte for byte.
#[test]
fn regression_issue_44_games_of_tags_alone_stay_apart() {
    use std::io::Cursor;

    use chesspack::archive::{self, ArchiveReader, ChunkReader, Options};
    let text: &[u8] = b"[Event \"A\"]\n[White \"x\"]\n\n[Event \"B\"]\n[White \"y\"]\n\n[Event \"C\"]\n\n1. e4 *\n";
    let chunks: Vec<_> = ChunkReader::new(text).collect::<Result<_, _>>().unwrap();
    assert_eq!(chunks.len(), 3);
    assert_eq!(chunks[1].bytes, b"[Event \"B\"]\n[White \"y\"]\n\n");
    for codec in [
        chesspack::game::codec("index").unwrap(),
        chesspack::game::codec("model").unwrap(),
    ] {
        let mut packed = Vec::new();
        let report =
            archive::compress(text, &mut packed, codec.as_ref(), &Options::default()).unwrap();
        assert_eq!(report.games, 3);
        let mut back = Vec::new();
        archive::decompress(Cursor::new(&packed), &mut back).unwrap();
        assert_eq!(back, text);
        let mut r = ArchiveReader::open(Cursor::new(&packed)).unwrap();
        assert_eq!(r.game(2).unwrap(), b"[Event \"B\"]\n[White \"y\"]\n\n");
    }
}
