//! Regression vectors from the source documents (issue 2).

use chesspack::{
    game::{self, GameCodec, Index, Radix},
    order::{Order, sorted_moves},
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
    let moves = sorted_moves(&pos, Order::SquareIndex);
    assert_eq!(
        (moves.iter().position(|&m| m == e4), moves.len()),
        (Some(13), 20)
    );
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

    use chesspack::{
        archive::{self, ArchiveReader, Options},
        pgn::ChunkReader,
    };
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

/// Compresses `text` with `index` and `model`: every game parsed (none
/// stored verbatim), and the text that comes back.
fn round_trip_parsed(text: &[u8]) -> Vec<u8> {
    use std::io::Cursor;

    use chesspack::archive::{self, Options};
    let mut outs = Vec::new();
    for codec in ["index", "model"] {
        let codec = chesspack::game::codec(codec).unwrap();
        let mut packed = Vec::new();
        let report =
            archive::compress(text, &mut packed, codec.as_ref(), &Options::default()).unwrap();
        assert!(report.verbatim.is_empty(), "{:?}", report.verbatim);
        let mut back = Vec::new();
        archive::decompress(Cursor::new(&packed), &mut back).unwrap();
        outs.push(back);
    }
    assert_eq!(outs[0], outs[1]);
    outs.pop().unwrap()
}

/// Issue 44, item 2: other tools' PGN is compressed (no game stored
/// verbatim) and comes back byte for byte: Crafty's `5. ... Qd6`, moves in
/// UCI with and without numbers, null moves (`--`, UCI's `0000`) in the
/// mainline and in variations, results with an en dash or `½`, and games
/// of tags alone.
#[test]
fn regression_issue_44_dialects_are_compressed_and_come_back() {
    for text in [
        "[Event \"Crafty\"]\n\n1. e4 e5 2. Nf3 {book} 2. ... Nc6 3. Bb5 a6 1-0\n\n",
        "[Event \"UCI\"]\n\n1. e2e4 e7e5 2. g1f3 b8c6 3. f1c4 g8f6 4. e1g1 f8c5 5. d2d4 c5d4 *\n\n",
        "e2e4 d7d5 e4d5 d8d5 b1c3 0000 d2d4 *\n\n",
        "[Event \"Null\"]\n\n1. e4 e5 2. Nf3 (2. -- Nc6 3. Nf3) 2... Nc6 3. -- d5 4. exd5 *\n\n",
        "[Result \"1\u{2013}0\"]\n\n1. e4 e5 2. Qh5 Nc6 3. Bc4 Nf6 4. Qxf7# 1\u{2013}0\n\n",
        "1. f3 e5 2. g4 Qh4# 0\u{2013}1\n\n",
        "[Result \"1/2-1/2\"]\n\n1. e4 e5 \u{bd}-\u{bd}\n\n1. d4 d5 \u{bd}\u{2013}\u{bd}\n\n1. c4 c5 1/2\u{2013}1/2\n\n",
        "[Event \"A\"]\n[White \"x\"]\n\n[Event \"B\"]\n\n1. e4 *\n\n",
    ] {
        assert_eq!(
            String::from_utf8(round_trip_parsed(text.as_bytes())).unwrap(),
            text
        );
    }
    // The files of other projects (fixtures/archive/dialects/README.md).
    let dir = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/archive/dialects"
    );
    for (name, byte_for_byte) in [
        ("uci-moves.pgn", true),
        ("en-dash-draw.pgn", true),
        ("tags-only.pgn", true),
        // Crafty's columns and the blank lines in its movetext: one game,
        // byte for byte since format 13 (issue 56).
        ("crafty.pgn", true),
    ] {
        let text = std::fs::read(format!("{dir}/{name}")).unwrap();
        let back = round_trip_parsed(&text);
        if byte_for_byte {
            assert_eq!(back, text, "{name}");
        } else {
            assert_eq!(
                back,
                chesspack::archive::canonical(&text[..]).unwrap(),
                "{name}"
            );
            let games = chesspack::pgn::ChunkReader::new(&text[..]).count();
            assert_eq!(games, 1, "{name}");
        }
    }
}

/// Issue 44, item 2: what is not a legal null move or UCI move is still
/// stored verbatim, byte for byte: a null move in check, a UCI move that
/// is not legal.
#[test]
fn regression_issue_44_illegal_dialect_moves_are_kept_verbatim() {
    for text in [
        "1. e4 e5 2. Qh5 Nc6 3. Bc4 Nf6 4. Qxf7+ -- *\n",
        "1. e2e4 e7e5 2. g1g3 *\n",
    ] {
        // Comes back byte for byte (checked there), and verbatim.
        let (_, report) = packed_by_index(text);
        assert_eq!(report.verbatim.len(), 1, "{text}");
    }
}

/// A game whose text is `lines` lines of moves, each about `line_len`
/// bytes (the knights go out and back: legal, and no draw is claimed).
fn marathon(tags: &str, lines: usize, line_len: usize) -> Vec<u8> {
    let mut text = tags.as_bytes().to_vec();
    let mut n = 1;
    for _ in 0..lines {
        let start = text.len();
        while text.len() - start < line_len {
            text.extend_from_slice(format!("{n}. Nf3 Nf6 {}. Ng1 Ng8 ", n + 1).as_bytes());
            n += 2;
        }
        text.push(b'\n');
    }
    text.extend_from_slice(b"*\n\n");
    text
}

/// Issue 44, item 8: a game text longer than 8 MiB (a 300 MB game on one
/// line became 37 games of 8 MiB, listed as 37 empty rows) is one game in
/// pieces that span blocks: counted once, its tags listed, and `game`,
/// `write_game`, records and the whole file give its text back byte for
/// byte, as on one line as on many.
#[test]
fn regression_issue_44_a_game_longer_than_8_mib_is_one_game() {
    use std::io::Cursor;

    use chesspack::archive::{self, ArchiveReader, Options};
    for big in [
        marathon("[Event \"Marathon\"]\n[White \"A\"]\n\n", 1, 20 << 20),
        marathon("[Event \"Marathon\"] [White \"A\"] ", 1, 20 << 20),
        marathon("[Event \"Marathon\"]\n[White \"A\"]\n\n", 5000, 4000),
    ] {
        let small = |w: &str| format!("[White \"{w}\"]\n\n1. e4 e5 *\n\n").into_bytes();
        let text = [small("before"), big.clone(), small("after"), small("last")].concat();
        let mut packed = Vec::new();
        let report = archive::compress(
            &text[..],
            &mut packed,
            &chesspack::game::Index,
            &Options::default(),
        )
        .unwrap();
        assert_eq!(report.games, 4);
        assert_eq!(report.verbatim.len(), 1);
        assert_eq!(report.verbatim[0].0, 2);
        let mut back = Vec::new();
        archive::decompress(Cursor::new(&packed), &mut back).unwrap();
        assert!(back == text);

        let mut r = ArchiveReader::open(Cursor::new(&packed)).unwrap();
        assert_eq!(r.games(), 4);
        assert!(r.blocks().len() >= 3, "the game spans blocks");
        assert!(r.game(2).unwrap() == big);
        assert!(crate::common::game_checked(&mut r, 2).unwrap() == big);
        assert_eq!(r.game(1).unwrap(), small("before"));
        assert_eq!(r.game(3).unwrap(), small("after"));
        assert_eq!(r.game(4).unwrap(), small("last"));

        // A row per game: its tags, and its whole text as a record.
        let (mut tags, mut rows) = (Vec::new(), Vec::new());
        for b in 0..r.blocks().len() {
            let block = r.read_block(b).unwrap();
            tags.extend(archive::block_tags(r.codec(), &block).unwrap());
            let mut block_rows = Vec::new();
            archive::decode_records(r.codec(), &block, &|_| true, &mut |_, row| {
                block_rows.push(row)
            })
            .unwrap();
            if let Some(archive::GameRow::Text(text)) = block_rows.last_mut() {
                r.rest_of_game(&block, &mut |t| text.extend_from_slice(&t))
                    .unwrap();
            }
            rows.extend(block_rows);
        }
        assert_eq!((tags.len(), rows.len()), (4, 4));
        assert!(
            tags[1]
                .verbatim
                .as_ref()
                .is_some_and(|t| t.starts_with(b"[Event \"Marathon\"]"))
        );
        assert!(matches!(&rows[1], archive::GameRow::Text(t) if *t == big));
        assert!(matches!(&rows[2], archive::GameRow::Record(g) if g.moves.len() == 2));

        // Every piece of every block, in order, is the file's text.
        let mut pieces = Vec::new();
        for b in 0..r.blocks().len() {
            let block = r.read_block(b).unwrap();
            archive::decode_games(r.codec(), &block, &|_| true, &mut |_, t| {
                pieces.extend_from_slice(&t)
            })
            .unwrap();
        }
        assert!(pieces == text);
    }
}

/// Compressed with `codec`: the archive's bytes and the games stored
/// verbatim.
fn packed_with(text: &[u8], codec: &str) -> (Vec<u8>, Vec<String>) {
    use chesspack::archive::{self, Options};
    let codec = chesspack::game::codec(codec).unwrap();
    let mut packed = Vec::new();
    let report = archive::compress(text, &mut packed, codec.as_ref(), &Options::default()).unwrap();
    let verbatim = report
        .verbatim
        .iter()
        .map(|(n, c, d)| format!("game {n}: {c}: {d}"))
        .collect();
    (packed, verbatim)
}

/// `text` with CR LF line ends.
fn crlf_text(text: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len() + text.len() / 16);
    for &b in text {
        if b == b'\n' {
            out.push(b'\r');
        }
        out.push(b);
    }
    out
}

/// Issue 56: every layout comes back byte for byte, with the game parsed
/// (not stored verbatim): glyphs as written, move numbers and spacing,
/// line breaks anywhere, spaces, tabs, CR LF, spacing in comments, blank
/// lines between games, a result with no move before it.
#[test]
fn regression_issue_56_every_layout_comes_back_byte_for_byte() {
    let tags = "[Event \"x\"]\n[Result \"1-0\"]\n\n";
    for movetext in [
        // Glyphs, as lichess's database dumps write them, and as `$n`.
        "1. e4 e5 2. Nf3?! Nc6?? 3. Bb5!! a6!? 4. Ba4?  Nf6! 5. O-O $6 1-0",
        // A game of no moves: a space before its result.
        " 0-1",
        // Move numbers: glued, spaced, repeated after a comment or not,
        // `...` apart.
        "1.e4 e5 2.Nf3 Nc6 3.Bb5 1-0",
        "1. e4 1... e5 2. Nf3 2... Nc6 1-0",
        "1.e4 1...e5 2.Nf3 1-0",
        "1. e4 {a} e5 {b} 2. Nf3 {c} 2... Nc6 1-0",
        "1. e4 ... e5 2. Nf3 ... Nc6 1-0",
        // Line breaks: one move a line, a blank line before the result,
        // a break between a number and its move.
        "1. e4\ne5\n2. Nf3\nNc6\n\n1-0",
        "1.\ne4 e5 2.\nNf3 1-0",
        // Spaces and tabs anywhere.
        "  1. e4   e5\t2. Nf3 \t Nc6   1-0   ",
        // Comments, spaced or not, and a mate written `+`.
        "1. e4 { [%clk 0:03:00] } e5 {[%clk 0:03:00]} 2. Qh5 {  x  } Nc6 3. Bc4 Nf6 4. Qxf7+ 1-0",
        // Variations, spaced.
        "1. e4 ( 1. d4 d5 ) 1... e5 ( 1... c5 ) 2. Nf3 1-0",
    ] {
        let text = format!("{tags}{movetext}\n\n");
        assert_eq!(
            String::from_utf8(round_trip_parsed(text.as_bytes())).unwrap(),
            text
        );
    }
    // Wrapped at 80 columns (the PGN standard's export format, TWIC), in
    // CR LF, with blank lines between games and none at the end, and a
    // name in Latin-1.
    let moves = "1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 4. Ba4 Nf6 5. O-O Be7 6. Re1 b5 7. Bb3 d6 8. c3 O-O 9. h3 Nb8 10. d4 Nbd7 11. c4 c6 12. cxb5 axb5 13. Nc3 Bb7 14. Bg5 b4 15. Nb1 h6 16. Bh4 c5 17. dxe5 Nxe4 18. Bxe7 Qxe7 19. exd6 Qf6 20. Nbd2 Nxd6 1-0";
    let mut wrapped = Vec::new();
    for (game, (width, crlf)) in [(79, false), (80, true), (60, false)]
        .into_iter()
        .enumerate()
    {
        let mut out = format!("[White \"M\u{fc}ller {game}\"]\n[Result \"1-0\"]\n\n");
        out.push_str(&wrapped_at(moves, width, "\n"));
        out.push_str("\n\n\n");
        let mut bytes = out.into_bytes();
        // Latin-1: ü as one byte.
        let at = bytes
            .windows(2)
            .position(|w| w == "\u{fc}".as_bytes())
            .unwrap();
        bytes.splice(at..at + 2, [0xfc]);
        if crlf {
            bytes = crlf_text(&bytes);
        }
        wrapped.extend_from_slice(&bytes);
    }
    wrapped.truncate(wrapped.len() - 2);
    assert_eq!(round_trip_parsed(&wrapped), wrapped);
}

/// The moves of a random legal game of `plies` from `start`: a different
/// game for each `seed`.
fn random_game(seed: u64, start: &Chess, plies: usize) -> Vec<shakmaty::Move> {
    let mut rng = crate::common::Rng::seeded(seed);
    let choices: Vec<u32> = (0..plies).map(|_| rng.next_u32()).collect();
    crate::common::play(start, &choices)
}

/// The SAN movetext of a random legal game of `plies` from `start` (White to
/// move), numbered from `first`: a different game for each `seed`.
fn distinct_moves(seed: u64, start: &Chess, plies: usize, first: u32) -> String {
    let mut pos = start.clone();
    let mut out = Vec::new();
    for (i, m) in random_game(seed, start, plies).into_iter().enumerate() {
        if i % 2 == 0 {
            out.push(format!("{}.", first + i as u32 / 2));
        }
        out.push(shakmaty::san::SanPlus::from_move_and_play_unchecked(&mut pos, m).to_string());
    }
    out.join(" ")
}

/// `moves` (tokens split by single spaces) wrapped greedily at `width`
/// columns, each line ended by `end` but the last.
fn wrapped_at(moves: &str, width: usize, end: &str) -> String {
    let (mut out, mut line) = (String::new(), String::new());
    for token in moves.split(' ') {
        if !line.is_empty() && line.len() + 1 + token.len() > width {
            out.push_str(&line);
            out.push_str(end);
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(token);
    }
    out + &line
}

/// Issue 56, item 2: a file's layout costs next to nothing where a style
/// predicts it: wrapped, compact and CR LF versions of the shipped sample
/// take at most 0.5% (and a zstd frame a block) more than its games in the
/// one-line layout, with the same moves.
#[test]
fn regression_issue_56_layouts_cost_little() {
    let sample = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../samples/lichess-sample.pgn"
    ))
    .unwrap();
    let text = String::from_utf8(sample).unwrap();
    // Each game's movetext, rewritten.
    let rewrite = |f: &dyn Fn(&str) -> String| -> Vec<u8> {
        let mut out = String::new();
        for game in text.split("\n\n[") {
            let (tags, movetext) = game.split_once("\n\n").unwrap();
            if !tags.starts_with('[') {
                out.push('[');
            }
            out.push_str(tags);
            out.push_str("\n\n");
            out.push_str(&f(movetext.trim_end()));
            out.push_str("\n\n");
        }
        out.into_bytes()
    };
    let wrap = |m: &str| {
        // Greedy at 79 columns, comments kept whole.
        let mut lines = vec![String::new()];
        let mut tokens: Vec<String> = Vec::new();
        let mut open = false;
        for word in m.split(' ') {
            match tokens.last_mut() {
                Some(t) if open => {
                    t.push(' ');
                    t.push_str(word);
                }
                _ => tokens.push(word.to_string()),
            }
            open = (open || word.starts_with('{')) && !word.ends_with('}');
        }
        for token in &tokens {
            let line = lines.last_mut().unwrap();
            if !line.is_empty() && line.len() + 1 + token.len() > 79 {
                lines.push(token.to_string());
            } else {
                if !line.is_empty() {
                    line.push(' ');
                }
                line.push_str(token);
            }
        }
        lines.join("\n")
    };
    let compact = |m: &str| m.replace(". ", ".").replace("{.", "{. ");
    let one_line = rewrite(&|m| m.to_string());
    // The sample's one game of an unsupported variant is stored verbatim
    // in every layout.
    let (base, base_verbatim) = packed_with(&one_line, "model");
    assert_eq!(base_verbatim.len(), 1, "{base_verbatim:?}");
    for (name, text) in [
        ("wrapped", rewrite(&|m| wrap(m))),
        ("compact", rewrite(&|m| compact(m))),
        ("crlf", crlf_text(&one_line)),
    ] {
        assert_ne!(text, one_line, "{name}");
        let (packed, verbatim) = packed_with(&text, "model");
        assert_eq!(verbatim, base_verbatim, "{name}");
        // 0.5%, and a column of its own in each block (a zstd frame).
        let limit = base.len() + base.len() / 200 + 48;
        assert!(
            packed.len() <= limit,
            "{name}: {} bytes against {} in one line",
            packed.len(),
            base.len()
        );
        let mut back = Vec::new();
        chesspack::archive::decompress(std::io::Cursor::new(&packed), &mut back).unwrap();
        assert!(back == text, "{name}");
    }
}

/// Issue 56, item 4: a damaged header does not lose the archive: its copy
/// in the index is read, the reader says why, and every game comes back.
#[test]
fn regression_issue_56_a_damaged_header_is_read_from_its_copy() {
    use chesspack::archive::{ArchiveReader, decompress};
    use std::io::Cursor;
    let text = b"[White \"a\"]\n\n1. e4 e5 2. Nf3 *\n\n[White \"b\"]\n\n1.d4 d5 *\n";
    let (packed, _) = packed_with(text, "model");
    let header_len = {
        let r = ArchiveReader::open(Cursor::new(&packed)).unwrap();
        assert!(r.header_error().is_none());
        8 + 2 + r.header().codec.len() + 16 + 4
    };
    for at in 0..header_len {
        let mut damaged = packed.clone();
        damaged[at] ^= 0x41;
        let r = ArchiveReader::open(Cursor::new(&damaged)).unwrap();
        assert!(r.header_error().is_some(), "byte {at}");
        assert_eq!(r.header().codec, "model");
        let mut back = Vec::new();
        decompress(Cursor::new(&damaged), &mut back).unwrap();
        assert_eq!(back, text, "byte {at}");
    }
    // With the index damaged too, the header's damage is the error.
    let mut both = packed.clone();
    both[3] ^= 1;
    let n = both.len();
    both[n - 30] ^= 1;
    assert!(ArchiveReader::open(Cursor::new(&both)).is_err());
}

/// An engine-games fixture (generated with Debian's Stockfish by
/// `scripts/cutechess_games.py`).
fn engine_fixture(name: &str) -> Vec<u8> {
    let path = format!(
        "{}/tests/fixtures/archive/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// `text` compressed with zstd at `level`.
fn zstd_size(text: &[u8], level: i32) -> usize {
    zstd::bulk::compress(text, level).unwrap().len()
}

/// Issue 60: engine comments (TCEC's `d=, mt=, pv=…`, cutechess-cli's
/// `+0.35/20 1.2s`) are split into templates and fields: the games come
/// back byte for byte, parsed (none verbatim), the fields are in their own
/// column and the comments column keeps only the templates that change.
#[test]
fn regression_issue_60_engine_comments_come_back_byte_for_byte() {
    use chesspack::archive::{self, COLUMNS, Options};
    let column = |name: &str| COLUMNS.iter().position(|&c| c == name).unwrap();
    for name in ["engine-tcec-style.pgn", "engine-cutechess.pgn"] {
        let text = engine_fixture(name);
        for codec in ["model", "fast", "index"] {
            let codec = chesspack::game::codec(codec).unwrap();
            let mut packed = Vec::new();
            let report =
                archive::compress(&text[..], &mut packed, codec.as_ref(), &Options::default())
                    .unwrap();
            assert!(report.verbatim.is_empty(), "{name}: {:?}", report.verbatim);
            let mut out = Vec::new();
            archive::decompress(std::io::Cursor::new(&packed), &mut out).unwrap();
            assert!(out == text, "{name} {}", codec.name());
            let fields = report.stored[column("engine-fields")];
            let comments = report.stored[column("comments")];
            assert!(fields > 0 && comments < fields / 4, "{name}: {report:?}");
        }
    }
    // Every comment comes back, whatever of it is not a field staying text:
    // a comment with a placeholder byte, a PV that is not legal, a number
    // too long, prose with numbers, `tb=null`, a trailing comma,
    // ChessBase's `[%emt]` and `[%evp]`, cutechess-cli's mates and book
    // moves.
    let odd = b"[Event \"odd\"]\n\n1. e4 {d=20, pv=e4 e5 Nf3 Nc6, tb=null,} e5 \
{d=21, pv=e5 Nf3 Qh4 Bc4, n=123456789012345678901234,} 2. Nf3 {a\x01b 3} Nc6 \
{I think 2...Nc6 was move 2, +1.5 or -0.25 at 0:05:03.} 3. Bb5 {+M3/12 0.5s} \
a6 {-0.00/0 0s, White mates} 4. Ba4 {[%emt 0:00:05] [%evp 17,24,31,-5]} Nf6 \
{-M12/40 0.8s} 5. O-O {book} Be7 {[%emt 0:01:15]} *\n";
    let (packed, verbatim) = packed_with(odd, "model");
    assert!(verbatim.is_empty(), "{verbatim:?}");
    let mut out = Vec::new();
    archive::decompress(std::io::Cursor::new(&packed), &mut out).unwrap();
    assert_eq!(String::from_utf8_lossy(&out), String::from_utf8_lossy(odd));
}

/// Issue 60: engine games take less than half of what zstd -19 takes of
/// their text (issue 60's target on TCEC games: 0.45): lines of moves
/// coded as moves, numbers as steps.
#[test]
fn regression_issue_60_engine_comments_cost_less_than_a_general_compressor() {
    for (name, bound) in [
        ("engine-tcec-style.pgn", 0.45),
        ("engine-cutechess.pgn", 0.60),
    ] {
        let text = engine_fixture(name);
        let (packed, _) = packed_with(&text, "model");
        let zstd = zstd_size(&text, 19);
        assert!(
            (packed.len() as f64) < bound * zstd as f64,
            "{name}: {} bytes, zstd -19 {zstd}",
            packed.len()
        );
    }
}

#[cfg(feature = "compression")]
/// Issue 60: a column that xz stores smaller than zstd is stored with xz
/// (its stream's magic in the archive), and comes back; here the
/// comments of a study: long prose that repeats itself at a distance.
/// Since format 17 PPMd, tried on comments too, stores them smaller still:
/// either is smaller than zstd (`compress_column`'s own test pins xz).
#[test]
fn regression_issue_60_a_column_is_stored_with_xz_where_that_is_smaller() {
    use chesspack::archive;
    let mut text = Vec::new();
    let pieces = [
        "knight ", "bishop ", "rook   ", "queen  ", "king   ", "pawn   ",
    ];
    let mut seed = 7u64;
    let mut next = |n: usize| {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (seed >> 33) as usize % n
    };
    for g in 0..40 {
        text.extend_from_slice(format!("[Event \"Study {g}\"]\n\n1. e4 {{").as_bytes());
        // A table of the study's ideas: fixed-width rows, which xz's
        // repeated-offset matches code better than zstd.
        for _ in 0..75 {
            for part in [
                pieces[next(6)],
                "|",
                ["a", "b", "c", "d", "e", "f", "g", "h"][next(8)],
                "|",
                ["yes", "no "][next(2)],
                "|",
                pieces[next(6)],
                "|",
            ] {
                text.extend_from_slice(part.as_bytes());
            }
        }
        text.extend_from_slice(b"} e5 *\n\n");
    }
    let (packed, verbatim) = packed_with(&text, "model");
    assert!(verbatim.is_empty());
    let zstd = zstd::bulk::compress(&text, 19).unwrap().len();
    assert!(
        packed.len() * 10 < zstd * 9,
        "{} bytes, zstd -19 {zstd}: no column was stored with xz or PPMd",
        packed.len()
    );
    let mut out = Vec::new();
    archive::decompress(std::io::Cursor::new(&packed), &mut out).unwrap();
    assert!(out == text);
    // No larger than `xz -9e` of the text but for the archive's frame: its
    // header, the block's column headers, the index (with the header's
    // copy) and the footer, under 400 bytes.
    let xz = crate::common::xz_size(&text);
    assert!(
        packed.len() < xz + 400,
        "{} bytes, xz -9e {xz}",
        packed.len()
    );
}

/// Issue 58: `brisk`, a codec of its own between `model` and `fast`: every
/// game of the sample round trips in its context, all of them cost fewer
/// bits than with `fast` and more than with `model`, and a `brisk` archive
/// names its codec and model and comes back byte for byte.
#[test]
fn regression_issue_58_brisk_sits_between_model_and_fast() {
    use chesspack::{
        archive::{self, ArchiveReader},
        game,
        pgn::GameReader,
    };
    let text = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../samples/lichess-sample.pgn"
    ))
    .unwrap();
    let names = ["model", "brisk", "fast"];
    let mut bits = [0; 3];
    let mut games = 0;
    for g in GameReader::new(&text[..]).flatten() {
        games += 1;
        for (total, name) in bits.iter_mut().zip(names) {
            let codec = game::codec(name).unwrap().in_context(&g.context());
            let coded = codec.encode(&g.start, &g.moves).unwrap();
            assert_eq!(codec.decode(&g.start, &coded).unwrap(), g.moves, "{name}");
            *total += coded.len();
        }
    }
    assert!(games > 30, "{games} games");
    assert!(
        bits[0] < bits[1] && bits[1] < bits[2],
        "{names:?}: {bits:?}"
    );
    let brisk = game::codec("brisk").unwrap();
    assert_ne!(
        brisk.model_hash(),
        game::codec("model").unwrap().model_hash()
    );
    let (packed, _) = packed_with(&text, "brisk");
    let reader = ArchiveReader::open(std::io::Cursor::new(&packed)).unwrap();
    assert_eq!(reader.header().codec, "brisk");
    assert_eq!(reader.header().model_hash, brisk.model_hash());
    let mut out = Vec::new();
    archive::decompress(std::io::Cursor::new(&packed), &mut out).unwrap();
    assert!(out == text);
}

/// Issue 69, D3: a `[%clk` whose time is on the next line (pgn4web's
/// files wrap so) is a clock reading, as python-chess reads it.
#[test]
fn regression_issue_69_d3_a_clock_over_two_lines_is_read() {
    use chesspack::{
        archive::{self, ArchiveReader, Options},
        datasets::rows::{self, Column},
    };
    let pgn = "[TimeControl \"5400+30\"]\n\n1. d4 {[%clk\n1:30:52]} d5 {[%clk 1:30:40]}\n2. c4 {[%clk\r\n\t1:29:01.5]} *\n";
    let mut packed = Vec::new();
    archive::compress(
        pgn.as_bytes(),
        &mut packed,
        &chesspack::game::Index,
        &Options::default(),
    )
    .unwrap();
    let mut r = ArchiveReader::open(std::io::Cursor::new(&packed)).unwrap();
    let block = r.read_block(0).unwrap();
    let rows = rows::block_positions(r.codec(), &block, 0, &[Column::Clock]).unwrap();
    // The mover's clock before each move: the base, then its last reading.
    assert_eq!(
        rows.clock,
        [Some(5_400_000), Some(5_400_000), Some(5_452_000)]
    );
    let mut text = Vec::new();
    archive::decompress(std::io::Cursor::new(&packed), &mut text).unwrap();
    assert_eq!(text, pgn.as_bytes());
}

/// Issue 67: one way in. `files::compress` takes every kind of file the
/// library reads (PGN, positions, engine training data as a binpack, as
/// `.plain` text and as viriformat games), tells its report's unit, and
/// `files::decompress` gives the input back from the archive alone;
/// `files::open` opens each archive as what it holds, and
/// `files::classify` names the same openings from a PGN and its archive.
#[test]
fn regression_issue_67_one_entry_point_compresses_and_opens_every_kind() {
    use chesspack::files::{self, Kind, Settings, TrainingFormat};
    use std::ops::ControlFlow;
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    let fixture = |p: &str| std::fs::read(format!("{root}/{p}")).unwrap();
    let plain = zstd::decode_all(
        &fixture("crates/chesspack/tests/fixtures/training/selfplay.plain.zst")[..],
    )
    .unwrap();
    let cases: [(&str, Vec<u8>, &str, &str); 5] = [
        (
            "samples/lichess-sample.pgn",
            fixture("samples/lichess-sample.pgn"),
            "game",
            "model",
        ),
        (
            "samples/puzzles-sample.csv",
            fixture("samples/puzzles-sample.csv"),
            "line",
            "position-model",
        ),
        (
            "selfplay.binpack",
            fixture("crates/chesspack/tests/fixtures/training/selfplay.binpack"),
            "position",
            "fast",
        ),
        ("selfplay.plain", plain, "position", "fast"),
        (
            "selfplay.vf",
            fixture("crates/chesspack/tests/fixtures/training/selfplay.vf"),
            "position",
            "fast",
        ),
    ];
    let go = &mut |_: &_| ControlFlow::Continue(());
    for (name, input, unit, codec) in cases {
        let kind = Kind::of(name, &input[..8]);
        let mut packed = Vec::new();
        let report =
            files::compress(kind, &input[..], &mut packed, &Settings::default(), go).unwrap();
        assert_eq!(
            (report.unit(), report.codec.as_str()),
            (unit, codec),
            "{name}"
        );
        assert!(report.items > 0, "{name}");
        assert_eq!(report.input_bytes, input.len() as u64, "{name}");
        assert_eq!(report.output_bytes, packed.len() as u64, "{name}");
        // An archive is not compressed again unless forced, by its name
        // or, given as games (stdin has no name), by its first bytes; a
        // binpack's tell too.
        for kind in [Kind::of("x.chpk", &packed[..8]), Kind::Games] {
            let again =
                files::compress(kind, &packed[..], &mut Vec::new(), &Settings::default(), go);
            assert!(matches!(
                again,
                Err(chesspack::archive::ArchiveError::AlreadyAnArchive)
            ));
        }
        if name.ends_with(".binpack") {
            let mut again = Vec::new();
            let r = files::compress(
                Kind::Games,
                &input[..],
                &mut again,
                &Settings::default(),
                go,
            )
            .unwrap();
            assert_eq!((r.unit(), again.len()), ("position", packed.len()));
        }
        let mut out = Vec::new();
        let back = files::decompress(
            std::io::Cursor::new(&packed),
            &mut out,
            &Settings::default(),
            go,
        )
        .unwrap();
        assert_eq!(back.items, report.items, "{name}");
        if name.ends_with(".binpack") || unit != "position" {
            assert_eq!(out, input, "{name}");
        }
        // Opened as what it holds: the games, the lines, or engine data.
        match files::open(std::io::Cursor::new(&packed)).unwrap() {
            files::Opened::Games(reader) => {
                assert_eq!((unit, reader.games()), ("game", report.items));
                // Its games' openings as those of its PGN.
                let table = chesspack::opening::OpeningTable::lichess();
                let mut rows = [Vec::new(), Vec::new()];
                for (i, bytes) in [&input, &packed].into_iter().enumerate() {
                    let r = files::classify(
                        "",
                        std::io::Cursor::new(bytes),
                        table,
                        &Settings::default(),
                        &mut |g, o| {
                            rows[i].push((g, o));
                            Ok(())
                        },
                        go,
                    )
                    .unwrap();
                    assert_eq!(r.items, report.items);
                }
                assert_eq!(rows[0], rows[1]);
                assert!(rows[0].iter().filter(|(_, o)| o.is_some()).count() > 10);
            }
            files::Opened::Positions(lines) => {
                assert_eq!((unit, lines.len() as u64), ("line", report.items));
                let text: Vec<&[u8]> = input
                    .split(|&b| b == b'\n')
                    .map(|l| l.strip_suffix(b"\r").unwrap_or(l))
                    .collect();
                assert!(lines.iter().eq(text[..lines.len()].iter().copied()));
            }
            files::Opened::Training => assert_eq!(unit, "position"),
            _ => unreachable!("{name}"),
        }
        // Engine training data back in the format it came in.
        let format = match name.rsplit('.').next() {
            Some("vf") => Some(TrainingFormat::Viriformat),
            Some("plain") => Some(TrainingFormat::Plain),
            _ => None,
        };
        if let Some(format) = format {
            let mut settings = Settings::default();
            settings.training = format;
            let mut text = Vec::new();
            files::decompress(std::io::Cursor::new(&packed), &mut text, &settings, go).unwrap();
            assert_eq!(text, input, "{name} as {format:?}");
        }
    }
    // A codec by name, the engine's parameters with it; an unknown one.
    let mut settings = Settings::default();
    settings.codec = Some("nope".into());
    let e = files::compress(
        Kind::Games,
        &b"1. e4 *\n"[..],
        &mut Vec::new(),
        &settings,
        go,
    );
    assert!(e.unwrap_err().to_string().contains("unknown codec"));
    settings.codec = Some("engine-arith".into());
    settings.engine.depth = 5;
    let e = files::compress(
        Kind::Games,
        &b"1. e4 *\n"[..],
        &mut Vec::new(),
        &settings,
        go,
    );
    assert!(
        e.unwrap_err()
            .to_string()
            .contains("deeper than archives decode")
    );
}

/// `text` compressed with `index` and the default options, checked to come
/// back byte for byte: the archive and its report.
fn packed_by_index(text: &str) -> (Vec<u8>, chesspack::archive::BlockReport) {
    use chesspack::archive::{self, Options};
    let mut packed = Vec::new();
    let report = archive::compress(
        text.as_bytes(),
        &mut packed,
        &chesspack::game::Index,
        &Options::default(),
    )
    .unwrap();
    let mut out = Vec::new();
    archive::decompress(std::io::Cursor::new(&packed), &mut out).unwrap();
    assert_eq!(out, text.as_bytes());
    (packed, report)
}

/// Issue 69: one tag with quotes nobody escaped (newyork1924.pgn's
/// `[Annotator "Lopez "Battle Royale""]`) no longer makes a game verbatim:
/// the value runs to the line's last `"]`, as python-chess reads it, and
/// the game's layout gives the bytes back.
#[test]
fn regression_issue_69_a_tag_with_unescaped_quotes_is_parsed() {
    use chesspack::archive::{self, ArchiveReader};
    let game = |n: usize| {
        format!(
            "[Event \"New York\"]\n[Round \"{n}\"]\n[Annotator \"Lopez \"Battle Royale\"\"]\n[Result \"1-0\"]\n\n\
             {} 1-0\n\n",
            distinct_moves(n as u64, &Chess::default(), 12, 1)
        )
    };
    let text: String = (1..=20).map(game).collect();
    let (packed, report) = packed_by_index(&text);
    assert!(report.verbatim.is_empty(), "{:?}", report.verbatim);
    assert_eq!(report.text_blocks, 0);
    // The value as python-chess gives it.
    let mut r = ArchiveReader::open(std::io::Cursor::new(&packed)).unwrap();
    let block = r.read_block(0).unwrap();
    let tags = archive::block_tags(r.codec(), &block).unwrap();
    assert!(tags[0].verbatim.is_none(), "verbatim");
    assert!(
        tags[0]
            .tags
            .contains(&(b"Annotator".to_vec(), b"Lopez \"Battle Royale\"".to_vec()))
    );
    // The layout of twenty such games costs little: the same games with the
    // quotes escaped as PGN asks take nearly as many bytes.
    let escaped = text.replace(
        "\"Lopez \"Battle Royale\"\"",
        "\"Lopez \\\"Battle Royale\\\"\"",
    );
    let (plain, _) = packed_by_index(&escaped);
    assert!(
        packed.len() < plain.len() + 60,
        "{} {}",
        packed.len(),
        plain.len()
    );
}

/// Issue 69: comments after a game's result (TCEC Season 4's
/// `; { Game Nr. 7 }` lines) no longer make the game verbatim: the game
/// ends at its result, as python-chess reads it, and its layout keeps the
/// comment's bytes; moves after a result still do.
#[test]
fn regression_issue_69_comments_after_the_result_end_the_game() {
    let game = |n: usize| {
        format!(
            "[Event \"TCEC Season 4\"]\n[Round \"{n}\"]\n[Result \"1/2-1/2\"]\n\n\
             {} 1/2-1/2\n; {{ Game Nr. {n} }}\n\n",
            distinct_moves(n as u64, &Chess::default(), 8, 1)
        )
    };
    let text: String = (1..=12).map(game).collect();
    let (_, report) = packed_by_index(&text);
    assert!(report.verbatim.is_empty(), "{:?}", report.verbatim);
    assert_eq!(report.text_blocks, 0);
    assert_eq!(report.games, 12);
    // Moves after the result are no game.
    let (_, report) = packed_by_index("1. e4 e5 1-0 2. Nf3\n");
    assert_eq!(report.verbatim.len(), 1);
}

/// Issue 68: a result that NUL bytes follow on its line (two games of
/// masters-pgnmentor end `1/2-1/2\0\0`) made the game verbatim, so `find`
/// did not search it where Scoutfish and python-chess read it. The NULs
/// are now a trailer that the layout keeps; the game is searched.
#[test]
fn regression_issue_68_nul_bytes_after_the_result_end_the_game() {
    let text = "[Event \"a\"]\n[Result \"0-1\"]\n\n1. e4 e5 0-1\0\0\n\n\
                [Event \"b\"]\n[Result \"1/2-1/2\"]\n\n1. d4 d5 1/2-1/2\0\n\n";
    let (packed, report) = packed_by_index(text);
    assert!(report.verbatim.is_empty(), "{:?}", report.verbatim);
    assert_eq!(report.games, 2);
    let mut archives =
        [chesspack::archive::ArchiveReader::open(std::io::Cursor::new(&packed)).unwrap()];
    let mut q = chesspack::search::Query::default();
    q.moves = Some("e4 e5".into());
    let found = chesspack::search::find(&mut archives, &q).unwrap();
    assert_eq!(found.not_searched, 0);
    assert_eq!(
        found
            .hits
            .iter()
            .map(|h| (h.game, h.ply))
            .collect::<Vec<_>>(),
        [(1, 2)]
    );
    // NULs inside the movetext, or a NUL glued before a result, are still
    // no game.
    for bad in ["1. e4\0 e5 1-0\n", "1. e4 e5 \x001-0\n"] {
        let (_, report) = packed_by_index(bad);
        assert_eq!(report.verbatim.len(), 1, "{bad:?}");
    }
}

/// Issue 68: a backslash before anything but `\\` or `"` in a tag value
/// (masters-pgnmentor's `[Black "Guyard\Lemarchand"]` and `[Black
/// "Analysis\ Analyse"]`) made the game verbatim, and `find` did not
/// search it. The backslash is now itself, as python-chess reads it (and
/// a value that one ends, `[White "a\"]`, runs to the line's `"]`).
#[test]
fn regression_issue_68_a_lone_backslash_in_a_tag_is_itself() {
    let text = "[Event \"x\"]\n[Black \"Guyard\\Lemarchand\"]\n[Result \"1-0\"]\n\n1. e4 e5 1-0\n\n\
                [Event \"y\"]\n[Black \"Analysis\\ Analyse\"]\n[White \"a\\\"]\n[Result \"*\"]\n\n1. e4 *\n\n\
                [Event \"z \\\"q\\\" \\\\\"]\n[Result \"*\"]\n\n1. e4 *\n";
    let (packed, report) = packed_by_index(text);
    assert!(report.verbatim.is_empty(), "{:?}", report.verbatim);
    let mut archive =
        chesspack::archive::ArchiveReader::open(std::io::Cursor::new(&packed)).unwrap();
    let games = chesspack::archive::block_tags_not_given(&archive.read_block(0).unwrap()).unwrap();
    let tag = |game: usize, name: &str| games[game].get(name).map(|v| v.into_owned());
    assert!(games.iter().all(|g| g.verbatim.is_none()));
    assert_eq!(tag(0, "Black").as_deref(), Some("Guyard\\Lemarchand"));
    assert_eq!(tag(1, "Black").as_deref(), Some("Analysis\\ Analyse"));
    assert_eq!(tag(1, "White").as_deref(), Some("a\\"));
    // Escapes are still escapes.
    assert_eq!(tag(2, "Event").as_deref(), Some("z \"q\" \\"));
    let mut q = chesspack::search::Query::default();
    q.moves = Some("e4".into());
    let found = chesspack::search::find(&mut [archive], &q).unwrap();
    assert_eq!((found.hits.len(), found.not_searched), (3, 0));
}

/// Issue 69: a wrapped movetext whose lines end with a space (TCEC Season
/// 4's files) is the wrap and one layout flag, not a patch of every line:
/// it costs about what the same games without the spaces cost.
#[test]
fn regression_issue_69_trailing_spaces_at_line_ends_cost_little() {
    // Distinct games (repeated ones would be stored as text, the floor),
    // wrapped at 40 columns, as a writer that leaves the space does.
    let wrapped = |n: usize| {
        let moves = distinct_moves(n as u64, &Chess::default(), 26, 1) + " 1/2-1/2";
        wrapped_at(&moves, 40, " \n")
    };
    let game = |n: usize, movetext: &str| {
        format!(
            "[Event \"TCEC Season 4\"]\n[Round \"{n}\"]\n[Result \"1/2-1/2\"]\n\n{movetext}\n\n"
        )
    };
    let spaced: String = (1..=30).map(|n| game(n, &wrapped(n))).collect();
    let plain: String = (1..=30)
        .map(|n| game(n, &wrapped(n).replace(" \n", "\n")))
        .collect();
    let pack = |text: &str| {
        let (packed, report) = packed_by_index(text);
        assert!(report.verbatim.is_empty());
        assert_eq!(report.text_blocks, 0);
        // The layout column's own bytes, before zstd sees the games repeat.
        (packed.len(), report.raw[13])
    };
    let (spaced_len, spaced_layout) = pack(&spaced);
    let (plain_len, plain_layout) = pack(&plain);
    assert!(spaced_len <= plain_len + 8, "{spaced_len} {plain_len}");
    assert!(
        spaced_layout <= plain_layout + 30,
        "{spaced_layout} {plain_layout}"
    );
}

/// Issue 69: engine comments whose labels are not in Latin letters (two
/// UTF-8 bytes a letter) are fields as Latin ones are: the rule that keeps
/// prose as text counts characters, not bytes.
#[test]
fn regression_issue_69_engine_comments_with_cyrillic_labels_are_fields() {
    let pack = |label: [&str; 3]| {
        let mut text = String::from("[Event \"engines\"]\n[Result \"*\"]\n\n");
        for (ply, san) in ["e4", "e5", "Nf3", "Nc6", "Bb5", "a6", "Ba4", "Nf6"]
            .iter()
            .enumerate()
        {
            if ply % 2 == 0 {
                text.push_str(&format!("{}. ", ply / 2 + 1));
            }
            text.push_str(&format!(
                "{san} {{{}={}, {}={}.{}s, {}={:+}.{:02}}} ",
                label[0],
                18 + ply,
                label[1],
                ply % 3,
                ply * 7 % 10,
                label[2],
                ply % 2,
                ply * 13 % 100
            ));
        }
        text.push_str("*\n");
        let (_, report) = packed_by_index(&text);
        report.raw[14]
    };
    // The engine-fields column holds them in both.
    assert!(pack(["depth", "time", "eval"]) > 0);
    assert!(pack(["глубина", "время", "оценка"]) > 0);
}

/// Issue 69: fastchess numbers a game from a `FEN` from `1.` while the FEN
/// says move 9: one layout flag, not a patch of every number.
#[test]
fn regression_issue_69_numbers_from_one_after_a_fen_cost_little() {
    let fen = "rnbqkb1r/pp2pppp/3p1n2/8/3NP3/8/PPP2PPP/RNBQKB1R w KQkq - 1 9";
    let start = chesspack::position::parse_fen(fen).unwrap();
    // Distinct games: repeated ones would be stored as text (the floor).
    let game = |n: usize, first: u32| {
        format!(
            "[Event \"fastchess\"]\n[Round \"{n}\"]\n[FEN \"{fen}\"]\n[SetUp \"1\"]\n[Result \"*\"]\n\n{} *\n\n",
            distinct_moves(n as u64, &start, 10, first)
        )
    };
    let pack = |text: &str| {
        let (_, report) = packed_by_index(text);
        assert!(report.verbatim.is_empty());
        assert_eq!(report.text_blocks, 0);
        report.raw[13]
    };
    let from_one: String = (1..=20).map(|n| game(n, 1)).collect();
    let from_nine: String = (1..=20).map(|n| game(n, 9)).collect();
    let (one, nine) = (pack(&from_one), pack(&from_nine));
    // A flags byte or two a game, no patch.
    assert!(one <= nine + 40, "{one} {nine}");
}

/// Issue 69: a file whose lines end with CR alone (classic Mac OS) is
/// cut into its games and each is parsed, read with LF for CR (`kind` bit
/// 64): it was one verbatim game, 3.9 times the bytes of the same games
/// with LF.
#[test]
fn regression_issue_69_cr_line_ends_are_games() {
    use chesspack::archive::{self, ArchiveReader};
    let game = |n: usize| {
        format!(
            "[Event \"Mac\"]\n[Round \"{n}\"]\n[Result \"*\"]\n\n{} *\n\n",
            wrapped_at(
                &distinct_moves(n as u64, &Chess::default(), 30, 1),
                60,
                "\n"
            )
        )
    };
    let lf: String = (1..=40).map(game).collect();
    let cr = lf.replace('\n', "\r");
    let (lf_packed, _) = packed_by_index(&lf);
    let (cr_packed, report) = packed_by_index(&cr);
    assert!(report.verbatim.is_empty(), "{:?}", report.verbatim);
    assert_eq!((report.games, report.text_blocks), (40, 0));
    assert!(
        cr_packed.len() <= lf_packed.len() + 8,
        "{} {}",
        cr_packed.len(),
        lf_packed.len()
    );
    let mut r = ArchiveReader::open(std::io::Cursor::new(&cr_packed)).unwrap();
    let block = r.read_block(0).unwrap();
    let tags = archive::block_tags(r.codec(), &block).unwrap();
    assert!(tags[6].verbatim.is_none());
    assert!(tags[6].tags.contains(&(b"Round".to_vec(), b"7".to_vec())));
    assert_eq!(r.game(7).unwrap(), game(7).replace('\n', "\r").as_bytes());
}

/// Issue 69: principal variations in coordinate notation (`pv=c2c4 d7d5`,
/// as some engines' matches write them) are lines of moves in engine
/// fields, as SAN ones are: they stayed text, at 2.3 times the bytes.
#[test]
fn regression_issue_69_coordinate_pvs_are_fields() {
    use shakmaty::{CastlingMode, Position, san::SanPlus};
    let game = |n: u64, uci: bool| {
        let start = Chess::default();
        let moves = random_game(n, &start, 40);
        let mut pos = start.clone();
        let mut text = format!("[Event \"Match\"]\n[Round \"{n}\"]\n[Result \"*\"]\n\n");
        for (i, &m) in moves.iter().enumerate() {
            // The line from before the move: the move and the game's next
            // two, as the engine saw them.
            let mut line = Vec::new();
            let mut p = pos.clone();
            for &l in moves.iter().skip(i).take(3) {
                line.push(if uci {
                    l.to_uci(CastlingMode::Standard).to_string()
                } else {
                    SanPlus::from_move(p.clone(), l).to_string()
                });
                p.play_unchecked(l);
            }
            let san = SanPlus::from_move_and_play_unchecked(&mut pos, m);
            if i % 2 == 0 {
                text.push_str(&format!("{}. ", i / 2 + 1));
            }
            text.push_str(&format!(
                "{san} {{d={}, pv={}}} ",
                10 + i % 7,
                line.join(" ")
            ));
        }
        text + "*\n\n"
    };
    let san: String = (1..=20).map(|n| game(n, false)).collect();
    let uci: String = (1..=20).map(|n| game(n, true)).collect();
    assert!(uci.contains("pv=") && uci != san);
    let (san_packed, san_report) = packed_by_index(&san);
    let (uci_packed, report) = packed_by_index(&uci);
    assert!(report.verbatim.is_empty());
    assert_eq!(report.text_blocks, 0);
    // The comments column holds the same templates: the lines are fields.
    assert_eq!(report.raw[8], san_report.raw[8]);
    assert!(
        uci_packed.len() <= san_packed.len() + 40,
        "{} {}",
        uci_packed.len(),
        san_packed.len()
    );
}

/// Issue 69: chess.com's clock comments, `{[%clk 0:02:59]}` without spaces
/// and `{[%clk 0:02:59.9]}` with a tenth, are clock readings in the clock
/// column, as lichess's are: they went through the engine fields (+23% for
/// clocks). The records give their readings in milliseconds.
#[test]
fn regression_issue_69_chess_com_clocks_are_readings() {
    use chesspack::archive::{self, ArchiveReader};
    use shakmaty::san::SanPlus;
    // `spelling` 0: lichess's, 1: chess.com's, 2: chess.com's with tenths.
    let game = |n: u64, spelling: u8| {
        let mut rng = crate::common::Rng::seeded(n);
        let choices: Vec<u32> = (0..50).map(|_| rng.next_u32()).collect();
        let mut pos = Chess::default();
        let moves = crate::common::play(&pos, &choices);
        let mut text = format!(
            "[Event \"Live Chess\"]\n[Round \"{n}\"]\n[TimeControl \"180\"]\n[Result \"*\"]\n\n"
        );
        let mut left = [1800u32, 1800];
        for (i, &m) in moves.iter().enumerate() {
            let side = &mut left[i % 2];
            *side = side.saturating_sub(rng.next_u32() % 60);
            let (s, t) = (*side / 10, *side % 10);
            let clock = format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60);
            let comment = match spelling {
                0 => format!("{{ [%clk {clock}] }}"),
                1 => format!("{{[%clk {clock}]}}"),
                _ => format!("{{[%clk {clock}.{t}]}}"),
            };
            let number = if i % 2 == 0 {
                format!("{}. ", i / 2 + 1)
            } else {
                format!("{}... ", i / 2 + 1)
            };
            let san = SanPlus::from_move_and_play_unchecked(&mut pos, m);
            text.push_str(&format!("{number}{san} {comment} "));
        }
        text + "*\n\n"
    };
    let files: Vec<String> = (0..3)
        .map(|spelling| (1..=30).map(|n| game(n, spelling)).collect())
        .collect();
    let packed: Vec<_> = files.iter().map(|f| packed_by_index(f)).collect();
    for (p, r) in &packed {
        assert!(r.verbatim.is_empty());
        assert_eq!(r.text_blocks, 0);
        // No comment is stored as text or fields.
        assert_eq!((r.raw[8], r.raw[14]), (0, 0), "{} bytes", p.len());
    }
    // chess.com's spelling costs what lichess's does; a tenth about its
    // 3.3 bits.
    let (lichess, compact, tenths) = (packed[0].0.len(), packed[1].0.len(), packed[2].0.len());
    assert!(compact <= lichess + 8, "{compact} {lichess}");
    let readings = files[2].matches("%clk").count();
    assert!(
        tenths - compact < readings / 2,
        "{tenths} {compact} {readings}"
    );
    // Records give the tenths.
    let mut r = ArchiveReader::open(std::io::Cursor::new(&packed[2].0)).unwrap();
    let block = r.read_block(0).unwrap();
    let mut first = None;
    archive::decode_records(r.codec(), &block, &|g| g == 0, &mut |_, row| {
        let archive::GameRow::Record(row) = row else {
            panic!("a record")
        };
        first = Some(row.clocks);
    })
    .unwrap();
    let clocks = first.unwrap();
    let text = &files[2];
    let at = text.find("[%clk ").unwrap() + 6;
    let written = &text[at..at + text[at..].find(']').unwrap()];
    let (hms, tenth) = written.split_once('.').unwrap();
    let secs: Vec<u64> = hms.split(':').map(|p| p.parse().unwrap()).collect();
    let ms = (secs[0] * 3600 + secs[1] * 60 + secs[2]) * 1000 + tenth.parse::<u64>().unwrap() * 100;
    assert_eq!(clocks[0], Some(ms));
}

/// Issue 69: a match of deterministic engines without a book, as
/// TuffFish's: most games follow an earlier game's line for a while (the
/// same moves, evaluations and depths there: the engines are
/// deterministic), then go their own way; most move times are the
/// commonest, the others differ from game to game. Times are coded in a
/// stream of their own, so that they do not break the repeats of the rest
/// in the `engine-fields` column: here 0.64 of `xz -9e`, 0.78 with every
/// field in one stream (the moves that leave a line are random, which
/// costs the model more than an engine's would; a real match of this
/// kind, Stockfish against itself, went from 0.90 to 0.56).
#[test]
fn regression_issue_69_engine_games_that_repeat_lines_but_not_times() {
    let text = engine_match(69, 150, (0, 0), false);
    let (packed, verbatim) = packed_with(text.as_bytes(), "model");
    assert!(verbatim.is_empty(), "{verbatim:?}");
    let mut out = Vec::new();
    chesspack::archive::decompress(std::io::Cursor::new(&packed), &mut out).unwrap();
    assert!(out == text.as_bytes());
    let xz = crate::common::xz_size(text.as_bytes());
    assert!(
        packed.len() * 10 <= xz * 7,
        "{} bytes against xz -9e {xz}",
        packed.len()
    );
}

/// A match of `games` games of deterministic engines without a book: most
/// games follow an earlier game's line for a while (one in `whole` to its
/// end, 0: none), then go their own way (random legal moves). Evaluations
/// and depths are a function of the position, but for one in `noise` (0:
/// none), where the engine searched one ply deeper (timing); one move time
/// in ten differs from the commonest: 0.01 s, or where `scheduled`, a
/// time that both engines' schedule gives at the ply, wherever the
/// position (cutechess's engines spend a share of a clock that goes down
/// by the same steps in every game).
fn engine_match(
    seed: u64,
    games: usize,
    (whole, noise): (usize, usize),
    scheduled: bool,
) -> String {
    use shakmaty::{EnPassantMode, Position, san::SanPlus, zobrist::Zobrist64};
    let mut rng = crate::common::Rng::seeded(seed);
    let mut lines: Vec<Vec<shakmaty::Move>> = Vec::new();
    let mut text = String::new();
    for round in 1..=games {
        let mut moves = Vec::new();
        if !lines.is_empty() && rng.below(4) != 0 {
            let earlier = &lines[rng.below(lines.len())];
            let to = match whole > 0 && rng.below(whole) == 0 {
                true => earlier.len(),
                false => rng.below(earlier.len()),
            };
            moves.extend_from_slice(&earlier[..to]);
        }
        let mut pos = Chess::default();
        for &m in &moves {
            pos.play_unchecked(m);
        }
        let choices: Vec<u32> = (moves.len()..90).map(|_| rng.next_u32()).collect();
        moves.extend(crate::common::play(&pos, &choices));
        text.push_str(&format!(
            "[Event \"match\"]\n[Round \"{round}\"]\n[White \"A\"]\n[Black \"B\"]\n[Result \"*\"]\n\n"
        ));
        let mut pos = Chess::default();
        let mut evals = [0i64; 2];
        for (i, &m) in moves.iter().enumerate() {
            if i % 2 == 0 {
                text.push_str(&format!("{}. ", i / 2 + 1));
            }
            let san = SanPlus::from_move_and_play_unchecked(&mut pos, m);
            // What a deterministic engine says of the position it moved
            // to, and how long it took.
            let h = pos.zobrist_hash::<Zobrist64>(EnPassantMode::Legal).0;
            evals[i % 2] += (h % 21) as i64 - 10;
            let deeper = noise > 0 && rng.below(noise) == 0;
            let eval = evals[i % 2] + if deeper { rng.below(9) as i64 - 4 } else { 0 };
            let sign = if eval < 0 { "-" } else { "+" };
            let time = match (rng.below(10) == 0, scheduled) {
                (false, false) => "0.01".to_string(),
                (true, false) => format!("0.0{}", 11 + rng.below(30)),
                (wide, true) => {
                    let at = (56.0 * 0.955f64.powi(i as i32 / 2)).round() as usize;
                    let cs = if wide { at + 1 + rng.below(2) } else { at };
                    format!("{}.{:02}", cs / 100, cs % 100)
                }
            };
            text.push_str(&format!(
                "{san} {{{sign}{}.{:02}/{} {time}s}} ",
                eval.abs() / 100,
                eval.abs() % 100,
                8 + h / 21 % 3 + u64::from(deeper)
            ));
        }
        text.push_str("*\n\n");
        lines.push(moves);
    }
    text
}

/// Issue 69: where an engine's evaluations and depths in a line that an
/// earlier game played differ now and then (one in eight here), each
/// difference broke the repeats that the block's compressor found in the
/// `engine-fields` column, and the rest of the game cost as much as a
/// new one (TuffFish's results.pgn: 0.94 of `xz -9e`, search section
/// included). A game's numbers are now coded from the numbers that the
/// earlier games of its group of 128 wrote at the same positions (format
/// 18): one bit where they are the same. Here 0.75 of xz instead of 0.84
/// (the lines that leave an earlier one are random moves, whose numbers
/// are random walks); 0.51 since the games of a match hand their models
/// on (format 19).
/// Every game reads back by number alone (the earlier games of its group
/// decoded for it), on one thread as on several; a flipped bit gives an
/// error or the text, never other text.
#[test]
fn regression_issue_69_engine_games_predict_each_others_numbers() {
    let text = engine_match(691, 300, (2, 8), false);
    let (packed, verbatim) = packed_with(text.as_bytes(), "model");
    assert!(verbatim.is_empty(), "{verbatim:?}");
    let xz = crate::common::xz_size(text.as_bytes());
    assert!(
        packed.len() * 100 <= xz * 60,
        "{} bytes against xz -9e {xz}",
        packed.len()
    );
    let games: Vec<&str> = text.split_inclusive("*\n\n").collect();
    for threads in [1, 3] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| {
            let mut out = Vec::new();
            chesspack::archive::decompress(std::io::Cursor::new(&packed), &mut out).unwrap();
            assert!(out == text.as_bytes(), "{threads} threads");
            let cursor = std::io::Cursor::new(&packed);
            let mut r = chesspack::archive::ArchiveReader::open(cursor).unwrap();
            for n in [0, 1, 127, 128, 200, 255, 256, 299] {
                let game = crate::common::game_checked(&mut r, n + 1).unwrap();
                assert!(
                    game == games[n as usize].as_bytes(),
                    "game {n}, {threads} threads"
                );
            }
        });
    }
    // A damaged archive gives an error or its text, never other text.
    let mut rng = crate::common::Rng::seeded(6918);
    for _ in 0..200 {
        let mut bad = packed.clone();
        let at = rng.below(bad.len());
        bad[at] ^= 1 << rng.below(8);
        let mut out = Vec::new();
        if chesspack::archive::decompress(std::io::Cursor::new(&bad), &mut out).is_ok() {
            assert!(out == text.as_bytes(), "byte {at}");
        }
    }
}

/// Issue 69: an annotated collection (games with an annotator's prose
/// after every few moves) is well under 0.9 of `xz -9e` of its text,
/// search section included: the comments are stored with PPMd where that
/// is smaller than xz and zstd (format 17): 0.62 here, 0.88 with xz. The prose is made from a small
/// grammar; 30 games of seeded random legal moves, a comment of one to
/// three sentences every second ply.
#[test]
fn regression_issue_69_annotated_collections_take_less_than_xz() {
    use chesspack::files::{self, Kind, Settings};
    use shakmaty::Position;
    let mut seed = 69u64;
    let mut next = |n: usize| {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (seed >> 33) as usize % n
    };
    let pieces = ["knight", "bishop", "rook", "queen", "king", "pawn"];
    let subjects = ["White", "Black", "The {p} on {s}", "His {p}", "This move"];
    let verbs = [
        "defends",
        "attacks",
        "prepares",
        "threatens",
        "weakens",
        "controls",
        "blocks",
    ];
    let objects = [
        "the {p} on {s}",
        "the centre",
        "the king's side",
        "the long diagonal",
        "the weak square {s}",
        "his opponent's plans",
    ];
    let tails = [
        "",
        " for the first time",
        " with tempo",
        " at once",
        " in the long run",
    ];
    let fill = |t: &str, next: &mut dyn FnMut(usize) -> usize| {
        let square = format!("{}{}", (b'a' + next(8) as u8) as char, 1 + next(8));
        t.replace("{p}", pieces[next(6)]).replace("{s}", &square)
    };
    let mut text = String::new();
    for g in 0..30 {
        text.push_str(&format!(
            "[Event \"Annotated {g}\"]\n[White \"A\"]\n[Black \"B\"]\n[Result \"*\"]\n\n"
        ));
        let mut pos = Chess::default();
        for ply in 0..60 {
            let moves = pos.legal_moves();
            if moves.is_empty() {
                break;
            }
            let mut sorted: Vec<_> = moves.iter().map(|m| San::from_move(&pos, *m)).collect();
            sorted.sort_by_key(ToString::to_string);
            let san = &sorted[next(sorted.len())];
            if ply % 2 == 0 {
                text.push_str(&format!("{}. ", ply / 2 + 1));
            }
            text.push_str(&format!("{san} "));
            pos.play_unchecked(san.to_move(&pos).unwrap());
            if ply % 2 == 1 {
                let mut comment = Vec::new();
                for _ in 0..1 + next(3) {
                    let s = fill(subjects[next(5)], &mut next);
                    let o = fill(objects[next(6)], &mut next);
                    comment.push(format!("{s} {} {o}{}.", verbs[next(7)], tails[next(5)]));
                }
                text.push_str(&format!("{{{}}} ", comment.join(" ")));
            }
        }
        text.push_str("*\n\n");
    }
    let mut packed = Vec::new();
    let go = &mut |_: &_| std::ops::ControlFlow::Continue(());
    let report = files::compress(
        Kind::Games,
        text.as_bytes(),
        &mut packed,
        &Settings::default(),
        go,
    )
    .unwrap();
    assert!(report.games.verbatim.is_empty());
    let mut out = Vec::new();
    chesspack::archive::decompress(std::io::Cursor::new(&packed), &mut out).unwrap();
    assert!(out == text.as_bytes());
    let xz = crate::common::xz_size(text.as_bytes());
    assert!(
        packed.len() * 4 <= xz * 3,
        "{} bytes against xz -9e {xz}",
        packed.len()
    );
}

/// Issue 69: games in long algebraic, as pgn-extract writes them (`-Wlalg`,
/// `-Whalg`, `-Welalg`: `e2e4`, `e2-e4`, `Ng1f3`, `Qd1xd4`, `d7d8R`,
/// `d2e3+`), were stored verbatim and not searched, where python-chess
/// reads them. They parse, come back byte for byte, and are found.
#[test]
fn regression_issue_69_long_algebraic_games_parse() {
    let text = "[Event \"lalg\"]\n[Result \"*\"]\n\n1. b2b3 e7e5 2. c1b2 d7d6 3. d2d4 e5d4 4. d1d4 b8c6 5. d4d2+ *\n\n\
                [Event \"halg\"]\n[Result \"*\"]\n\n1. b2-b3 e7-e5 2. c1-b2 d7-d6 3. d2-d4 e5xd4 4. d1xd4 b8-c6 *\n\n\
                [Event \"elalg\"]\n[Result \"*\"]\n\n1. b2b3 e7e5 2. Bc1b2 d7d6 3. d2d4 e5d4 4. Qd1d4 Nb8c6 5. Ng1-f3 Ng8f6 6. e2e3 Bf8e7 7. Bf1e2 e8g8 8. Ke1-g1 *\n\n\
                [Event \"promotion\"]\n[FEN \"8/3P4/8/8/8/8/k7/4K3 w - - 0 1\"]\n[SetUp \"1\"]\n[Result \"1-0\"]\n\n1. d7d8R 1-0\n";
    let (packed, report) = packed_by_index(text);
    assert!(report.verbatim.is_empty(), "{:?}", report.verbatim);
    let archive = chesspack::archive::ArchiveReader::open(std::io::Cursor::new(&packed)).unwrap();
    let mut q = chesspack::search::Query::default();
    q.moves = Some("b3 e5 Bb2 d6 d4 exd4 Qxd4".into());
    let found = chesspack::search::find(&mut [archive], &q).unwrap();
    let games: Vec<u64> = found.hits.iter().map(|h| h.game).collect();
    assert_eq!((games, found.not_searched), (vec![1, 2, 3], 0));
}

/// Issue 69: a `;` comment in the movetext (to the end of its line, as
/// tho-nk/pgn-parser's test files and hand-edited files have them) made
/// its game verbatim, so that it was not searched. It is a comment now,
/// its `;` and line end given back by the layout, in LF and CR LF files;
/// only one that holds a `}` (which braces cannot hold) stays text.
#[test]
fn regression_issue_69_semicolon_comments_in_movetext_parse() {
    let text = "[Event \"a\"]\n[Result \"1-0\"]\n\n1. e4 e5 ; the king's pawn\n2. Nf3 Nc6 3. Bb5 ;Ruy Lopez\n\
                ; a line of its own\n3... a6 4. Ba4 Nf6 ; [%clk 0:01:00]\n5. O-O 1-0\n\n\
                [Event \"b\"]\r\n[Result \"*\"]\r\n\r\n1. e4 ; a CR LF line\r\ne5 2. Nf3 Nc6 3. Bb5 a6 *\r\n\r\n\
                [Event \"c\"]\n[Result \"*\"]\n\n1. e4 e5 2. Nf3 Nc6 3. Bb5 ; a } in it\na6 *\n";
    let (packed, report) = packed_by_index(text);
    let verbatim: Vec<u64> = report.verbatim.iter().map(|v| v.0).collect();
    assert_eq!(verbatim, [3]);
    let archive = chesspack::archive::ArchiveReader::open(std::io::Cursor::new(&packed)).unwrap();
    let mut q = chesspack::search::Query::default();
    q.moves = Some("e4 e5 Nf3 Nc6 Bb5 a6".into());
    let found = chesspack::search::find(&mut [archive], &q).unwrap();
    let games: Vec<(u64, u32)> = found.hits.iter().map(|h| (h.game, h.ply)).collect();
    assert_eq!((games, found.not_searched), (vec![(1, 6), (2, 6)], 1));
}

/// Issue 69: a small file whose games cost a few bytes each (an ECO file:
/// thousands of short opening lines, pgn-extract's and PgnTools' `eco.pgn`)
/// came out larger than `xz -9e` of it because of the search section that
/// `compress` writes by default. A small input whose section would make the
/// archive larger than xz of its text is left without one; a file of real
/// games keeps its section.
#[test]
fn regression_issue_69_a_section_never_takes_a_small_archive_past_xz() {
    use chesspack::files::{self, Kind, Settings};
    use shakmaty::Position;
    // Every line of two and of three plies, tagged as an ECO file is.
    let start = Chess::default();
    let mut text = String::new();
    for (i, m1) in start.legal_moves().iter().enumerate() {
        let p1 = start.clone().play(*m1).unwrap();
        for (j, m2) in p1.legal_moves().iter().enumerate() {
            let p2 = p1.clone().play(*m2).unwrap();
            let (s1, s2) = (San::from_move(&start, *m1), San::from_move(&p1, *m2));
            text += &format!(
                "[ECO \"A{:02}\"]\n[Opening \"Line {i}\"]\n[Variation \"{j}\"]\n\n1. {s1} {s2} *\n\n",
                i % 100
            );
            if let Some(m3) = p2.legal_moves().first() {
                let s3 = San::from_move(&p2, *m3);
                text += &format!(
                    "[ECO \"A{:02}\"]\n[Opening \"Line {i}\"]\n[Variation \"{j}, {s3}\"]\n\n1. {s1} {s2} 2. {s3} *\n\n",
                    i % 100
                );
            }
        }
    }
    let packed = packed_within_xz_without_a_section(&text, &Settings::default());
    let archive = chesspack::archive::ArchiveReader::open(std::io::Cursor::new(&packed)).unwrap();
    // The games are searched all the same, by decoding them.
    let mut q = chesspack::search::Query::default();
    q.moves = Some("e4 e5".into());
    let found = chesspack::search::find(&mut [archive], &q).unwrap();
    assert!(
        found.scanned && found.hits.len() == 2,
        "{}",
        found.hits.len()
    );
    // Real games keep their section.
    let mut sample = Vec::new();
    files::compress(
        Kind::Games,
        &include_bytes!("../../../../samples/lichess-sample.pgn")[..],
        &mut sample,
        &Settings::default(),
        &mut |_| std::ops::ControlFlow::Continue(()),
    )
    .unwrap();
    let archive = chesspack::archive::ArchiveReader::open(std::io::Cursor::new(&sample)).unwrap();
    assert!(archive.has_search_section());
}

/// Issue 69: the same for an input past 512 KiB (every line of three
/// plies, 8,902 games, 0.9 MB): only inputs of at most 512 KiB were
/// weighed against xz, so a larger file of opening lines kept a section
/// that took it past xz (17,566 bytes against 14,272). In one block: xz of
/// a whole file finds repeats across blocks, which a block does not see
/// (in three blocks, their text alone comes to 15,478 bytes).
#[test]
fn regression_issue_69_a_section_never_takes_a_larger_file_of_lines_past_xz() {
    use chesspack::files::Settings;
    use shakmaty::Position;
    let start = Chess::default();
    let mut text = String::new();
    for (i, m1) in start.legal_moves().iter().enumerate() {
        let p1 = start.clone().play(*m1).unwrap();
        let s1 = San::from_move(&start, *m1);
        for (j, m2) in p1.legal_moves().iter().enumerate() {
            let p2 = p1.clone().play(*m2).unwrap();
            let s2 = San::from_move(&p1, *m2);
            for m3 in p2.legal_moves() {
                let s3 = San::from_move(&p2, m3);
                text += &format!(
                    "[ECO \"A{:02}\"]\n[Opening \"Line {i}\"]\n[Variation \"{j}, {s3}\"]\n\n1. {s1} {s2} 2. {s3} *\n\n",
                    i % 100
                );
            }
        }
    }
    assert!(text.len() > 512 << 10, "{}", text.len());
    let mut settings = Settings::default();
    settings.archive.block_games = 16_384;
    packed_within_xz_without_a_section(&text, &settings);
}

/// `text` compressed with `settings`: at most xz -9e of it plus 250 bytes,
/// without a search section (it would have taken the archive past that),
/// and its bytes back.
fn packed_within_xz_without_a_section(
    text: &str,
    settings: &chesspack::files::Settings,
) -> Vec<u8> {
    let xz = crate::common::xz_size(text.as_bytes());
    let mut packed = Vec::new();
    chesspack::files::compress(
        chesspack::files::Kind::Games,
        text.as_bytes(),
        &mut packed,
        settings,
        &mut |_| std::ops::ControlFlow::Continue(()),
    )
    .unwrap();
    assert!(
        packed.len() <= xz + 250,
        "{} against xz's {xz}",
        packed.len()
    );
    let archive = chesspack::archive::ArchiveReader::open(std::io::Cursor::new(&packed)).unwrap();
    assert!(!archive.has_search_section());
    let mut out = Vec::new();
    chesspack::archive::decompress(std::io::Cursor::new(&packed), &mut out).unwrap();
    assert_eq!(out, text.as_bytes());
    packed
}

/// Issue 69: in a cutechess match both engines spend their time by one
/// schedule from one clock, so a move's time is mostly the time spent at
/// the same ply in the match's earlier games, wherever the position; and
/// each game learned the steps of the engines' numbers from the prior
/// again. Format 19 codes a time first as the group's commonest at its
/// ply, and hands the models of a match's game on to the next game of the
/// same players: 0.48 of `xz -9e` here (section aside), 0.70 before
/// (TuffFish's match, section included: 0.80 to 0.58).
#[test]
fn regression_issue_69_match_times_follow_the_ply_and_models_go_on() {
    let text = engine_match(692, 300, (2, 8), true);
    let (packed, verbatim) = packed_with(text.as_bytes(), "model");
    assert!(verbatim.is_empty(), "{verbatim:?}");
    let xz = crate::common::xz_size(text.as_bytes());
    assert!(
        packed.len() * 100 <= xz * 55,
        "{} bytes against xz -9e {xz}",
        packed.len()
    );
    assert!(unpacked(&packed) == text.as_bytes());
    let games: Vec<&str> = text.split_inclusive("*\n\n").collect();
    let mut r = chesspack::archive::ArchiveReader::open(std::io::Cursor::new(&packed)).unwrap();
    for n in [0, 5, 255, 256, 299] {
        let game = crate::common::game_checked(&mut r, n + 1).unwrap();
        assert!(game == games[n as usize].as_bytes(), "game {n}");
    }
}

/// Issue 69: a game that repeats an earlier game of its group move for
/// move and number for number (engines that search by nodes, without a
/// book) is stored as that alone, no streams: once models went on from
/// game to game, each repeat's streams differed and cost about 10 bytes
/// where the block's compressor had found the same bytes again. 100
/// copies of a game cost under 5 bytes each more than one.
#[test]
fn regression_issue_69_a_game_repeated_numbers_and_all_costs_no_streams() {
    let text = engine_match(693, 1, (0, 0), true);
    let copies: String = (1..=100)
        .map(|r| text.replace("[Round \"1\"]", &format!("[Round \"{r}\"]")))
        .collect();
    let (one, _) = packed_with(text.as_bytes(), "model");
    let (hundred, verbatim) = packed_with(copies.as_bytes(), "model");
    assert!(verbatim.is_empty(), "{verbatim:?}");
    assert!(
        hundred.len() < one.len() + 99 * 5,
        "{} bytes against {} for one",
        hundred.len(),
        one.len()
    );
    assert!(unpacked(&hundred) == copies.as_bytes());
    let mut r = chesspack::archive::ArchiveReader::open(std::io::Cursor::new(&hundred)).unwrap();
    let last = crate::common::game_checked(&mut r, 100).unwrap();
    assert!(last.ends_with(text.split_once("\n\n").unwrap().1.as_bytes()));
}

/// The text of archive `packed`.
fn unpacked(packed: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    chesspack::archive::decompress(std::io::Cursor::new(packed), &mut out).unwrap();
    out
}

/// Issue 68 (found while making the clocks' decoding cheaper): a game
/// whose `TimeControl` tag holds absurd numbers has its clocks coded with
/// a prediction that wraps; the reader refused what the writer wrote
/// ("clock out of range"), and the whole block was lost. Its bytes come
/// back, the block's other games too.
#[test]
fn regression_issue_68_an_absurd_time_control_s_clocks_come_back() {
    use chesspack::archive::{self, Options};
    let sample = include_str!("../../../../samples/lichess-sample.pgn");
    let mut parts: Vec<&str> = sample.split("[TimeControl \"").collect();
    assert!(parts.len() > 5);
    let rest = &parts[3][parts[3].find('"').unwrap()..];
    let absurd = format!("9223372036854775807+9223372036854775807{rest}");
    parts[3] = &absurd;
    let pgn = parts.join("[TimeControl \"");
    let mut packed = Vec::new();
    archive::compress(
        pgn.as_bytes(),
        &mut packed,
        &chesspack::game::ModelCodec::new(),
        &Options::default(),
    )
    .unwrap();
    // Stored in columns (its clocks coded), not as the block's text.
    assert!(packed.len() < pgn.len() / 8, "{} bytes", packed.len());
    let mut text = Vec::new();
    archive::decompress(std::io::Cursor::new(&packed), &mut text).unwrap();
    assert!(text == pgn.as_bytes());
}
