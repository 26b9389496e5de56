//! The `.chpk` archive (issue 4): round trips equal canonical text, verbatim
//! games come back byte for byte, random access, damage is contained.

use std::io::Cursor;

use chesspack::{
    archive::{self, ArchiveError, ArchiveReader, FORMAT_VERSION, Openings, Options, canonical},
    game::{GameCodec, Index, Radix},
};
use proptest::prelude::*;

fn fixture(name: &str) -> Vec<u8> {
    let path = format!(
        "{}/tests/fixtures/archive/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn sample() -> Vec<u8> {
    let path = format!(
        "{}/../../samples/lichess-sample.pgn",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read(path).unwrap()
}

pub(crate) fn compress_with(text: &[u8], codec: &dyn GameCodec, block_games: usize) -> Vec<u8> {
    compress_keeping(text, codec, block_games, Openings::default())
}

/// [`compress_with`], keeping the openings that `openings` says.
fn compress_keeping(
    text: &[u8],
    codec: &dyn GameCodec,
    block_games: usize,
    openings: Openings,
) -> Vec<u8> {
    let mut options = Options::default();
    options.block_games = block_games;
    options.openings = openings;
    let mut out = Vec::new();
    archive::compress(text, &mut out, codec, &options).unwrap();
    out
}

fn decompress(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    archive::decompress(Cursor::new(bytes), &mut out).unwrap();
    out
}

/// The text of each game as the input has it, in order: what an archive
/// gives back for each (format 13).
fn input_games(text: &[u8]) -> Vec<Vec<u8>> {
    chesspack::pgn::ChunkReader::new(text)
        .map(|c| c.unwrap().bytes)
        .collect()
}

#[test]
fn fixtures_round_trip_byte_for_byte() {
    for name in [
        "annotated.pgn",
        "broken.pgn",
        "bom-crlf.pgn",
        "empty.pgn",
        "players.pgn",
        "other-starts.pgn",
    ] {
        let text = fixture(name);
        let expected = text.clone();
        for codec in [&Index as &dyn GameCodec, &Radix] {
            for block_games in [1, 2, 1000] {
                let packed = compress_with(&text, codec, block_games);
                assert_eq!(
                    String::from_utf8_lossy(&decompress(&packed)),
                    String::from_utf8_lossy(&expected),
                    "{name} {} {block_games}",
                    codec.name()
                );
            }
        }
    }
}

#[test]
fn the_sample_comes_back_byte_for_byte() {
    // lichess exports are already in the canonical layout: clocks, Chess960,
    // "From Position" and the King of the Hill game (verbatim) all return.
    let text = sample();
    assert_eq!(canonical(&text[..]).unwrap(), text);
    let packed = compress_with(&text, &Radix, 10);
    assert_eq!(decompress(&packed), text);
    assert!(packed.len() * 10 < text.len());
}

#[test]
fn canonical_layout_of_the_annotated_fixture() {
    let out = String::from_utf8(canonical(&fixture("annotated.pgn")[..]).unwrap()).unwrap();
    for expected in [
        "[Event \"Annotated \\\"test\\\" — ünïcödé 象棋\"]\n",
        "[CustomTag \"back\\\\slash\"]\n\n{ A game comment before the first move. } 1. e4 $1 { [%eval 0.3] [%clk 0:05:00] } 1... e5 $2",
        "2. Nf3 {[%csl Gf3][%cal Gg1f3]} 2... Nc6 (2... d6 3. d4 (3. Bc4 Be7 $6 (3... Nf6 4. Ng5 $5) 4. O-O) 3... exd4) (2... Nf6 {Petrov}) 3. Bb5 a6 $6",
        "7. Bb3 d6 { [%clk 0:00:09.5] } 8. c3",
        "{A multi-line\ncomment} 1-0\n\n",
        "3. Nc3 Bb4 1/2-1/2\n\n1. e4 c5",
        "23. Qb2\n\n[Event",
        "5. hxg8=N Rxg8 6. Qh5+ 1-0\n\n",
    ] {
        assert!(out.contains(expected), "{expected:?} not in\n{out}");
    }
    // Canonical text is a fixed point.
    assert_eq!(canonical(out.as_bytes()).unwrap(), out.as_bytes());
}

/// The report of compressing `text` with `codec` at level 3.
fn report_of(text: &[u8], codec: &dyn GameCodec) -> archive::BlockReport {
    let mut options = Options::default();
    options.level = 3;
    archive::compress(text, std::io::sink(), codec, &options).unwrap()
}

#[test]
fn games_that_cannot_be_parsed_are_kept_verbatim() {
    let text = fixture("broken.pgn");
    let report = report_of(&text, &Radix);
    let mut reasons: Vec<_> = report.verbatim.iter().map(|(n, c, _)| (*n, *c)).collect();
    reasons.sort();
    assert_eq!(
        reasons,
        [
            (2, "syntax"),
            (3, "illegal move"),
            (4, "escape"),
            (5, "unsupported variant"),
            (6, "syntax"),
            (7, "syntax"),
        ]
    );
    let out = decompress(&compress_with(&text, &Radix, 1000));
    let out = String::from_utf8(out).unwrap();
    for verbatim in [
        "This line is not PGN at all.\n\n",
        "1. e4 e5 2. Ke3 *\n\n",
        "1. e4\n% an escape\ne5 *\n\n",
        "[Variant \"King of the Hill\"]\n[Result \"*\"]\n\n1. e4 e5 *\n\n",
        "1. e4 e5 1-0 2. Nf3\n\n",
        "1. e4 e5 (1... c5 2. Nf3 *\n\n",
    ] {
        assert!(out.contains(verbatim), "{verbatim:?} not in\n{out}");
    }
    assert!(out.starts_with("[Event \"ok 1\"]\n[Result \"*\"]\n\n1. d4 d5 *\n\n"));
    // The file's single final line feed stays single.
    assert!(out.ends_with("[Event \"ok 2\"]\n\n1. c4 1/2-1/2\n"));
}

#[test]
fn crlf_games_keep_their_line_ends_and_the_file_its_ends() {
    let crlf = canonical(&fixture("bom-crlf.pgn")[..]).unwrap();
    let lf = canonical(&fixture("bom-crlf-lf.pgn")[..]).unwrap();
    // Games whose lines all end with CR LF are written with CR LF; the byte
    // order mark and the final CR LF are the file's own ends.
    let inner = crlf
        .strip_prefix(b"\xef\xbb\xbf")
        .and_then(|t| t.strip_suffix(b"\r\n"))
        .unwrap();
    let lf_inner = lf.strip_suffix(b"\n").unwrap();
    assert_eq!(
        String::from_utf8_lossy(inner).replace("\r\n", "\n"),
        String::from_utf8_lossy(lf_inner).replace("\r\n", "\n")
    );
    assert!(inner.windows(4).any(|w| w == b"]\r\n["));
    // CR LF inside a comment is the comment's own text.
    assert!(crlf.windows(13).any(|w| w == b"{fool\r\nmate} "));
    // A game of mixed line ends is written with LF.
    let mixed =
        canonical(&b"[Event \"m\"]\r\n\n1. e4 *\r\n\r\n[Event \"n\"]\n\n1. d4 *\n"[..]).unwrap();
    assert_eq!(
        mixed,
        b"[Event \"m\"]\n\n1. e4 *\n\n[Event \"n\"]\n\n1. d4 *\n"
    );
}

#[test]
fn empty_input_gives_an_empty_archive() {
    let packed = compress_with(b"", &Radix, 10);
    let r = ArchiveReader::open(Cursor::new(&packed)).unwrap();
    assert_eq!((r.games(), r.blocks().len()), (0, 0));
    assert!(decompress(&packed).is_empty());
    // Whitespace alone holds no game, and comes back (issue 69, D2).
    let packed = compress_with(b"\n\n  \n", &Radix, 10);
    assert_eq!(
        ArchiveReader::open(Cursor::new(&packed)).unwrap().games(),
        0
    );
    assert_eq!(decompress(&packed), b"\n\n  \n");
}

#[test]
fn get_reads_any_game() {
    let mut text = sample();
    text.extend_from_slice(&fixture("broken.pgn"));
    text.extend_from_slice(&fixture("annotated.pgn"));
    let games = input_games(&text);
    let packed = compress_with(&text, &Index, 7);
    let mut r = ArchiveReader::open(Cursor::new(&packed)).unwrap();
    assert_eq!(r.games(), games.len() as u64);
    assert!(r.blocks().len() > 5);
    for (i, expected) in games.iter().enumerate().rev() {
        assert_eq!(&r.game(i as u64 + 1).unwrap(), expected, "game {}", i + 1);
    }
    assert!(matches!(
        r.game(0),
        Err(ArchiveError::NoSuchGame { number: 0, .. })
    ));
    assert!(matches!(
        r.game(games.len() as u64 + 1),
        Err(ArchiveError::NoSuchGame { .. })
    ));
}

#[test]
fn tags_list_without_decoding_moves() {
    let text = fixture("broken.pgn");
    let packed = compress_with(&text, &Radix, 1000);
    let mut r = ArchiveReader::open(Cursor::new(&packed)).unwrap();
    let block = r.read_block(0).unwrap();
    let tags = archive::block_tags(r.codec(), &block).unwrap();
    assert_eq!(tags.len(), 8);
    assert_eq!(tags[0].tags[0], (b"Event".to_vec(), b"ok 1".to_vec()));
    assert_eq!(tags[0].verbatim, None);
    // A game stored verbatim: its text, and no tags where it has none.
    assert_eq!(
        tags[1].verbatim.as_deref(),
        Some(&b"This line is not PGN at all.\n\n"[..])
    );
    assert!(tags[1].tags.is_empty());
}

/// Offsets of the payloads of the blocks of an archive.
fn payload_ranges(packed: &[u8]) -> Vec<std::ops::Range<usize>> {
    let r = ArchiveReader::open(Cursor::new(packed)).unwrap();
    r.blocks()
        .iter()
        .map(|b| b.offset as usize + 16..b.offset as usize + 16 + b.len as usize)
        .collect()
}

#[test]
fn a_damaged_block_is_named_and_the_others_decode() {
    let text = sample();
    let games = input_games(&text);
    let packed = compress_with(&text, &Radix, 5);
    let ranges = payload_ranges(&packed);
    assert_eq!(ranges.len(), games.len().div_ceil(5));
    for (b, range) in ranges.iter().enumerate() {
        for at in [range.start, range.start + range.len() / 2, range.end - 1] {
            let mut damaged = packed.clone();
            damaged[at] ^= 0x40;
            let mut r = ArchiveReader::open(Cursor::new(&damaged)).unwrap();
            for other in 0..ranges.len() {
                let result = r.read_block(other);
                if other == b {
                    let err = result.unwrap_err();
                    assert!(
                        matches!(err, ArchiveError::Damaged { block, .. } if block == b as u64 + 1),
                        "{err}"
                    );
                    assert_eq!(
                        err.to_string(),
                        format!("block {}: checksum mismatch", b + 1)
                    );
                } else {
                    let block = result.unwrap();
                    let mut n = 0;
                    archive::decode_games(&Radix, &block, &|_| true, &mut |g, t| {
                        assert_eq!(t, games[other * 5 + g]);
                        n += 1;
                    })
                    .unwrap();
                    assert_eq!(n, r.blocks()[other].games);
                }
            }
            let mut sink = Vec::new();
            assert!(matches!(
                archive::decompress(Cursor::new(&damaged), &mut sink),
                Err(ArchiveError::Damaged { .. })
            ));
        }
    }
}

#[test]
fn a_truncated_archive_is_an_error_and_its_whole_blocks_survive() {
    let text = sample();
    let games = input_games(&text);
    let packed = compress_with(&text, &Radix, 5);
    let ranges = payload_ranges(&packed);
    for cut in [
        packed.len() - 1,
        packed.len() - 30,
        ranges[3].end,
        ranges[3].end - 1,
        40,
    ] {
        let truncated = &packed[..cut];
        let mut sink = Vec::new();
        let err = archive::decompress(Cursor::new(truncated), &mut sink).unwrap_err();
        assert!(matches!(err, ArchiveError::Index(_)), "{err}");
        let mut r = ArchiveReader::open(Cursor::new(truncated)).unwrap();
        assert!(r.index_error().is_some());
        let whole = ranges.iter().filter(|b| b.end <= cut).count();
        let mut decoded = 0;
        for b in 0..r.blocks().len() {
            match r.read_block(b) {
                Ok(block) => {
                    archive::decode_games(&Radix, &block, &|_| true, &mut |g, t| {
                        assert_eq!(t, games[b * 5 + g]);
                    })
                    .unwrap();
                    decoded += 1;
                }
                Err(e) => assert!(matches!(e, ArchiveError::Damaged { .. }), "{e}"),
            }
        }
        assert_eq!(decoded, whole, "cut at {cut}");
    }
    // Cut inside the header: not an archive.
    assert!(ArchiveReader::open(Cursor::new(&packed[..5])).is_err());
}

#[test]
fn header_names_format_codec_and_model() {
    let packed = compress_with(&fixture("annotated.pgn"), &Index, 10);
    assert_eq!(&packed[..8], b"CHPK\r\n\x1a\n");
    let reader = ArchiveReader::open(Cursor::new(&packed)).unwrap();
    assert_eq!(reader.header().codec, "index");

    // Without the index (a truncated file) a damaged header is an error;
    // with it, the header's copy there is read (format 13, issue 56).
    let mut bad = packed.clone();
    bad[0] = b'X';
    let r = ArchiveReader::open(Cursor::new(&bad)).unwrap();
    assert!(
        r.header_error()
            .unwrap()
            .contains("not a chesspack archive")
    );
    bad.truncate(60);
    assert!(matches!(
        ArchiveReader::open(Cursor::new(&bad)),
        Err(ArchiveError::NotAnArchive)
    ));
    // One format (issue 67): any other version is refused by its number.
    for version in [0, 1, FORMAT_VERSION - 1, FORMAT_VERSION + 1] {
        let mut bad = packed[..60].to_vec();
        bad[8] = version;
        let err = ArchiveReader::open(Cursor::new(&bad)).err().unwrap();
        assert!(matches!(err, ArchiveError::UnsupportedVersion(v) if v == version));
        assert!(
            err.to_string().starts_with(&format!(
                "archive format version {version} is not supported: this chesspack reads format {FORMAT_VERSION} only"
            )),
            "{err}"
        );
    }
    // A codec this library does not have (the header checksum is valid).
    let mut bad = packed.clone();
    bad[10..15].copy_from_slice(b"indey");
    // Magic, version, name length, "index", model hash, opening table hash.
    let crc_at = 10 + 5 + 8 + 8;
    let crc = crc32(&bad[..crc_at]);
    bad[crc_at..crc_at + 4].copy_from_slice(&crc.to_le_bytes());
    let err = ArchiveReader::open(Cursor::new(&bad)).err().unwrap();
    assert!(matches!(err, ArchiveError::CodecMismatch { .. }), "{err}");
    assert!(err.to_string().contains("\"indey\""), "{err}");
    // A different model.
    let mut bad = packed.clone();
    bad[15] ^= 1;
    let crc = crc32(&bad[..crc_at]);
    bad[crc_at..crc_at + 4].copy_from_slice(&crc.to_le_bytes());
    let err = ArchiveReader::open(Cursor::new(&bad)).err().unwrap();
    assert!(
        err.to_string().contains("this chesspack has model"),
        "{err}"
    );
    // A different opening table.
    let mut bad = packed.clone();
    bad[23] ^= 1;
    let crc = crc32(&bad[..crc_at]);
    bad[crc_at..crc_at + 4].copy_from_slice(&crc.to_le_bytes());
    let err = ArchiveReader::open(Cursor::new(&bad)).err().unwrap();
    assert!(
        matches!(err, ArchiveError::OpeningTableMismatch { .. }),
        "{err}"
    );
    assert!(err.to_string().contains("opening table"), "{err}");
    // A flipped header byte without a fixed checksum.
    let mut bad = packed;
    bad[12] ^= 1;
    let r = ArchiveReader::open(Cursor::new(&bad)).unwrap();
    assert!(r.header_error().unwrap().contains("checksum mismatch"));
    bad.truncate(60);
    assert!(matches!(
        ArchiveReader::open(Cursor::new(&bad)),
        Err(ArchiveError::Header(_))
    ));
}

/// CRC-32 (IEEE), bit by bit.
fn crc32(data: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in data {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xedb8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// Games of moves alone, and tag values marked as a recent player, a
/// player's Elo, a day's step or the next round.
const GOLDEN_TEXT_V3: &[u8] = b"[White \"A\"]\n[Result \"1-0\"]\n\n1. e4 {x} e5 (1... c5) 2. Qh5 $1 { [%clk 0:01:00] } 1-0\n\n\
[Round \"1.2\"]\n[White \"B\"]\n[Black \"A\"]\n[Date \"2024.02.28\"]\n[WhiteElo \"2500\"]\n[BlackElo \"2400\"]\n\n1. d4 d5 1/2-1/2\n\n\
[Round \"2.1\"]\n[White \"A\"]\n[Black \"B\"]\n[Date \"2024.03.01\"]\n[WhiteElo \"2400\"]\n[BlackElo \"2500\"]\n\n1. c4 *\n\nnot pgn\n";

/// A file's lead and tail, results on a line of their own, games with CR LF
/// line ends.
const GOLDEN_TEXT_V4: &[u8] =
    b"\xef\xbb\xbf\n[White \"A\"]\n\n1. e4 {x}\n1-0\n\n[White \"B\"]\r\n\r\n1. c4 *\r\n\r\n1. d4 *\n";

/// `ECO` and `Opening` tags that the moves give (with lichess's table): both in the first game, `ECO` alone in the second and
/// third, none in the fourth (it starts from a FEN). The third game's
/// `Opening` repeats the last value stored, the second game's.
const GOLDEN_TEXT_V6: &[u8] = b"[ECO \"C20\"]\n[Opening \"King's Pawn Game: Wayward Queen Attack\"]\n\n1. e4 e5 2. Qh5 *\n\n\
[ECO \"C20\"]\n[Opening \"King's Pawn Game\"]\n\n1. e4 e5 2. Qh5 Nc6 *\n\n\
[ECO \"A00\"]\n[Opening \"King's Pawn Game\"]\n\n1. a3 *\n\n\
[FEN \"rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2\"]\n[ECO \"C20\"]\n[Opening \"King's Pawn Game\"]\n\n2. Qh5 *\n\n";

/// Lichess games: clocks and evaluations, a player's games listed newest
/// first.
const GOLDEN_LICHESS_V6: &[u8] = b"[Event \"Rated Bullet game\"]\n[White \"a\"]\n[Black \"b\"]\n[Result \"1-0\"]\n\
[UTCTime \"13:24:36\"]\n[WhiteElo \"2155\"]\n[BlackElo \"2212\"]\n[WhiteRatingDiff \"+7\"]\n[BlackRatingDiff \"-7\"]\n\
[TimeControl \"60+0\"]\n\n1. e4 { [%eval 0.17] [%clk 0:01:00] } 1... e5 { [%eval 0.2] [%clk 0:01:00] } \
2. Qh5 { [%eval -0.5] [%clk 0:00:59] } 2... Nc6 { [%eval -0.45] [%clk 0:00:58] } \
3. Bc4 { [%eval -0.4] [%clk 0:00:57] } 3... Nf6 { [%eval #1] [%clk 0:00:55] } 4. Qxf7# { [%clk 0:00:55] } 1-0\n\n\
[Event \"Rated Bullet game\"]\n[White \"c\"]\n[Black \"a\"]\n[Result \"0-1\"]\n[UTCTime \"13:21:10\"]\n\
[WhiteElo \"2171\"]\n[BlackElo \"2148\"]\n[WhiteRatingDiff \"-6\"]\n[BlackRatingDiff \"+7\"]\n[TimeControl \"60+0\"]\n\n\
1. d4 { [%eval 0.1] [%clk 0:01:00] } 1... d5 { [%eval 0.15] [%clk 0:01:00] } 2. Bf4 { [%eval #-2] [%clk 0:00:59] } \
2... e6 { [%eval #-1] [%clk 0:00:59] } 0-1\n\n";

/// Format 7 adds richer contexts for lichess's clocks and evaluations, and
/// marks with numbers in the `tag-numbers` column: `a`'s Elo in the second
/// and third games is a step from the game before and `a`'s rating changes
/// are marks, `c`'s and `d`'s Elos steps from the other side's, the
/// first game's `BlackRatingDiff` the other side's negated, the second's
/// `WhiteRatingDiff` a step from it; `UTCTime` steps back; `UTCDate` is the
/// game's `Date`, the third `Date` a step back; the third game's `Event`,
/// `TimeControl` and `Termination` are values seen two games before. Then
/// [`GOLDEN_TEXT_V6`].
const GOLDEN_TEXT_V7: &[u8] = b"[Event \"Rated Bullet game\"]\n[Date \"2022.05.26\"]\n[White \"a\"]\n[Black \"b\"]\n[Result \"1-0\"]\n\
[UTCDate \"2022.05.26\"]\n[UTCTime \"13:24:36\"]\n[WhiteElo \"2155\"]\n[BlackElo \"2212\"]\n[WhiteRatingDiff \"+7\"]\n[BlackRatingDiff \"-7\"]\n\
[TimeControl \"60+0\"]\n[Termination \"Normal\"]\n\n1. e4 { [%eval 0.17] [%clk 0:01:00] } 1... e5 { [%eval 0.2] [%clk 0:01:00] } \
2. Qh5 { [%eval -0.5] [%clk 0:00:59] } 2... Nc6 { [%eval -0.45] [%clk 0:00:58] } \
3. Bc4 { [%eval -0.4] [%clk 0:00:57] } 3... Nf6 { [%eval #1] [%clk 0:00:55] } 4. Qxf7# { [%clk 0:00:55] } 1-0\n\n\
[Event \"Rated Blitz game\"]\n[Date \"2022.05.26\"]\n[White \"c\"]\n[Black \"a\"]\n[Result \"0-1\"]\n[UTCDate \"2022.05.26\"]\n\
[UTCTime \"13:21:10\"]\n[WhiteElo \"2171\"]\n[BlackElo \"2148\"]\n[WhiteRatingDiff \"-6\"]\n[BlackRatingDiff \"+7\"]\n\
[TimeControl \"180+0\"]\n[Termination \"Time forfeit\"]\n\n\
1. d4 { [%eval 0.1] [%clk 0:03:00] } 1... d5 { [%eval 0.15] [%clk 0:03:00] } 2. Bf4 { [%eval #-2] [%clk 0:02:59] } \
2... e6 { [%eval #-1] [%clk 0:02:51] } 0-1\n\n\
[Event \"Rated Bullet game\"]\n[Date \"2022.05.20\"]\n[White \"a\"]\n[Black \"d\"]\n[Result \"1-0\"]\n[UTCDate \"2022.05.20\"]\n\
[UTCTime \"23:59:58\"]\n[WhiteElo \"2141\"]\n[BlackElo \"2090\"]\n[WhiteRatingDiff \"+7\"]\n[BlackRatingDiff \"-5\"]\n\
[TimeControl \"60+0\"]\n[Termination \"Normal\"]\n\n1. e4 { [%clk 0:01:00] } 1-0\n\n\
[ECO \"C20\"]\n[Opening \"King's Pawn Game: Wayward Queen Attack\"]\n\n1. e4 e5 2. Qh5 *\n\n\
[ECO \"C20\"]\n[Opening \"King's Pawn Game\"]\n\n1. e4 e5 2. Qh5 Nc6 *\n\n\
[ECO \"A00\"]\n[Opening \"King's Pawn Game\"]\n\n1. a3 *\n\n\
[FEN \"rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2\"]\n[ECO \"C20\"]\n[Opening \"King's Pawn Game\"]\n\n2. Qh5 *\n\n";

/// Format 8 stores a game of moves each followed by one lichess clock or
/// evaluation comment as one event and its ply count: the first three
/// games of [`GOLDEN_TEXT_V7`] (an evaluation and a clock after every move
/// but the last, which has a clock alone; an evaluation and a clock after
/// every move; one move and a clock). The game added after them has a
/// clock alone after a move between evaluations, so its events are stored
/// one by one; its `Site` is a lichess game's URL, stored as a mark and a
/// number.
const GOLDEN_TEXT_V8: &[u8] =
    b"[Event \"Rated Bullet game\"]\n[Site \"https://lichess.org/DWpef5hg\"]\n[White \"e\"]\n[Black \"a\"]\n[Result \"*\"]\n\
[TimeControl \"60+0\"]\n\n1. e4 { [%eval 0.17] [%clk 0:01:00] } 1... e5 { [%clk 0:01:00] } \
2. Nf3 { [%eval 0.2] [%clk 0:00:59] } *\n\n";

/// Format 9 reads other tools' PGN (issue 44): Crafty's `2. ... Nc6`, moves
/// in UCI with numbers and without, a null move in UCI, in SAN in the
/// mainline and in a variation, and results with an en dash or `½`.
const GOLDEN_TEXT_V9: &[u8] =
    "[Event \"Crafty\"]\n[Result \"1-0\"]\n\n1. e4 e5 2. Nf3 {good} 2. ... Nc6 1-0\n\n\
[Event \"UCI\"]\n\n1. e2e4 e7e5 2. g1f3 0000 3. f3e5 *\n\n\
e2e4 d7d5 e4d5 d8d5 b1c3 *\n\n\
[Event \"Null\"]\n\n1. e4 e5 2. Nf3 (2. -- Nc6) 2... Nc6 3. -- d5 *\n\n\
[Result \"0\u{2013}1\"]\n\n1. f3 e5 2. g4 Qh4# 0\u{2013}1\n\n\
[Result \"1/2-1/2\"]\n\n1. e4 e5 \u{bd}-\u{bd}\n\n"
        .as_bytes();

/// Format 10 stores a game text longer than 8 MiB as one game in pieces
/// that span blocks (issue 44): a comment of 9 MiB on one line, cut into a
/// piece of 8 MiB that ends the second block and one of 1 MiB that opens
/// the third, then a short game.
fn golden_text_v10() -> Vec<u8> {
    let mut text = b"{".to_vec();
    text.resize(9 << 20, b'x');
    text.extend_from_slice(b"} *\n\n1. e4 *\n");
    text
}

/// Format 13 gives the input's bytes back (issue 56): games in other
/// layouts than the canonical one, each a layout record in the `layout`
/// column (compact numbers, glyphs as symbols, CR LF, a wrap that breaks
/// before numbers, two spaces before the result, a patch of what no style
/// predicts).
const GOLDEN_TEXT_V13: &[u8] = b"[Event \"Layout\"]\r\n[Result \"1-0\"]\r\n\r\n\
1.e4 e5 2.Nf3?! Nc6\r\n3.Bb5 a6  1-0\r\n\r\n\
[Event \"Patched\"]\n\n  1. e4\t{ a }  e5 2. Qh5 Nc6 3. Bc4 Nf6 4. Qxf7# *\n\n\n";

/// Format 14 codes engine comments as templates and fields (issue 60):
/// TCEC's comments, with a line from before the move (`pv=`) and from two
/// moves before (`pd=`), cutechess-cli's, and a comment that stays text.
const GOLDEN_TEXT_V14: &[u8] = b"[Event \"Engines\"]\n[Result \"*\"]\n\n\
1. e4 {d=20, sd=30, mt=1000, tl=59000, s=100000, n=100000, pv=e4 e5 Nf3, tb=0, \
h=0.5, ph=0.0, wv=0.30, R50=50, Rd=-11, Rr=-11, mb=+0+0+0+0+0,} e5 {d=19, \
sd=28, pd=e4, mt=900, tl=59100, s=110000, n=99000, pv=e5 Nf3 Nc6, tb=0, h=0.4, \
ph=0.0, wv=0.25, R50=50, Rd=-11, Rr=-11, mb=+0+0+0+0+0,} 2. Nf3 {+0.35/20 \
1.2s} Nc6 {-0.28/18 0.9s} 3. Bb5 {book} *\n";

#[test]
fn golden_bytes_pin_the_format() {
    let text = [
        GOLDEN_TEXT_V7,
        GOLDEN_TEXT_V8,
        GOLDEN_TEXT_V9,
        GOLDEN_TEXT_V13,
        &golden_text_v10(),
        b"\n",
        GOLDEN_TEXT_V14,
    ]
    .concat();
    let packed = compress_with(&text, &Index, 10);
    let hex: String = packed.iter().map(|b| format!("{b:02x}")).collect();
    if std::env::var_os("CHESSPACK_PRINT_GOLDEN").is_some() {
        println!("{hex}");
    }
    assert_eq!(hex, GOLDEN_ARCHIVE, "format changed: bump FORMAT_VERSION");
    assert_eq!(decompress(&packed), text);
    let mut r = ArchiveReader::open(Cursor::new(&packed)).unwrap();
    assert_eq!((r.games(), r.blocks().len()), (19, 3));
    assert_eq!(r.game(15).unwrap(), &GOLDEN_TEXT_V13[..74]);
    assert_eq!(r.game(17).unwrap(), &golden_text_v10()[..(9 << 20) + 5]);
    assert_eq!(r.game(18).unwrap(), b"1. e4 *\n\n");
    assert_eq!(r.game(19).unwrap(), GOLDEN_TEXT_V14);
    // The texts of features that the golden's games leave out come back
    // too, by `index` and by `model`.
    for text in [
        GOLDEN_TEXT_V3,
        GOLDEN_TEXT_V4,
        GOLDEN_TEXT_V6,
        GOLDEN_LICHESS_V6,
        GOLDEN_TEXT_MODEL_WITH_CLOCKS,
    ] {
        assert_eq!(decompress(&compress_with(text, &Index, 10)), text);
        let model = chesspack::game::ModelCodec::new();
        assert_eq!(decompress(&compress_with(text, &model, 10)), text);
    }
}

/// Issue 69's floor: a block of games that repeat is stored as its text
/// (games of kind 5, the `verbatim` column without lengths: method bit 2),
/// here with a game that does not parse among them (kind 1).
#[test]
fn golden_bytes_pin_the_text_block() {
    let game = "[Event \"Rated Blitz game\"]\n[Result \"1-0\"]\n\n\
                1. e4 e5 2. Nf3 Nc6 3. Bc4 Nf6 4. Ng5 d5 5. exd5 Na5 6. Bb5+ c6 1-0\n\n";
    let mut text = game.repeat(12);
    text.push_str("1. e4 e5 2. Ke3 *\n\n");
    text.push_str(&game.repeat(3));
    let mut packed = Vec::new();
    let report = archive::compress(text.as_bytes(), &mut packed, &Index, &Options::default());
    assert_eq!(report.unwrap().text_blocks, 1);
    let hex: String = packed.iter().map(|b| format!("{b:02x}")).collect();
    if std::env::var_os("CHESSPACK_PRINT_GOLDEN").is_some() {
        println!("{hex}");
    }
    assert_eq!(
        hex, GOLDEN_TEXT_BLOCK,
        "format changed: bump FORMAT_VERSION"
    );
    assert_eq!(decompress(&packed), text.as_bytes());
    let mut r = ArchiveReader::open(Cursor::new(&packed)).unwrap();
    let block = r.read_block(0).unwrap();
    let tags = archive::block_tags(r.codec(), &block).unwrap();
    assert_eq!(tags.len(), 16);
    assert!(
        tags.iter()
            .enumerate()
            .all(|(i, t)| t.verbatim.is_none() == (i != 12))
    );
    assert_eq!(r.game(14).unwrap(), game.as_bytes());
}

const GOLDEN_TEXT_BLOCK: &str = concat!(
    "4348504b0d0a1a0a1305696e6465780000000000000000dcce8077b38e926262c27ee943504b42c4",
    "00000010000000df3f3caa100810100505050505050505050505050105050505a30d78500614005a",
    "e93c257157b52a95772d358ea11b074c3defbcb22501d266e3bee9b82c76141390452fd5132241b9",
    "5d9be4eb3fd780b4027e7fc0b032b0e242248c32bb6f21e86c62d36bdd25dd0c3d9570b209d09625",
    "f2a00b91dcde720000000000000000000000000000067866bf0b243f7d8370380000000000000000",
    "003e0000000000000000020505000000000000000002050500000000000205050000000000000000",
    "0000008278c35f43504b49010000002300000000000000c40000001000000000000000020000000a",
    "0a230000004348504b0d0a1a0a1305696e6465780000000000000000dcce8077b38e926262c27ee9",
    "0b89fa6bf70000000000000010000000000000004348504b454e440a",
);

/// [`GOLDEN_TEXT_V7`] to [`GOLDEN_TEXT_V14`] in format 15 (`index`): the
/// block names openings by lichess's table.
const GOLDEN_ARCHIVE: &str = concat!(
    "4348504b0d0a1a0a1305696e6465780000000000000000dcce8077b38e926262c27ee943504b423e",
    "0200000a00000027b2b2d70a080a0a00000000000000000804000000018d016d28b52ffd208d2503",
    "0012461310807d00dd76de0711d10da58cc818d4c1efb6445f067968a575d8bc09e3ed959b5959b3",
    "4b4f6fdef686f7a480566e762e1d978e2a93db4c84a47e53aeddf9d91805efb68cebdd66e2b7757d",
    "0407005a05986900cf816a8e91d41846e568eb3e0101432c28b52ffd20431d01000202060710987a",
    "4c6f37b575efdead929b88127bce143244b815700200ba0c0b662a013f9502df0128b52ffd601500",
    "ad0600a2cd2c1f00b7ab011588ca3fcc0986003db8d4442fd7768b36476b4180a228b08082a423ae",
    "724a4c8a3e96892cc90be531b13c28978c56b4ca9669a12d6b64349489a1e623d284e2d4d417b411",
    "19966c458e129ed09b0c785608e0ebd1bb1d11d49117f4307f16144194a9af067d2e66b73558b0b5",
    "45b830c7d11ab8d31c5b7568f4f0b5e26b8acd27463957d59aef54f566bb61eaae32b8c9a875d625",
    "90cca6b16345c8d4d769f4be2f683d72bcdf477a48ce1ded250e2860ccd20300cd76237f6b9cb7dc",
    "3b3232f9f6cb09a96bf1d4d467d548180024241003091004091000090e0d0e0d0e0d0e0d01040103",
    "01040901010102010901010111010d001616ad4b29d98e942635d6a5d6a5960aeb55eb55cb5aaf90",
    "021212000b155e880133ef3bc37fba0b373b510e00000505676f6f647d020b0b000024d98950581b",
    "4b1a0002141400042820244cb764f7134c3ce62f5d2c17000000000000001d1d001740bc79f1bfbb",
    "eb3f9cdb6d6d64adae01d6a10eb62926a71305fa0062f4ff5a43504b4212020000070000007a9943",
    "b3070a07071400000002000103848080049e0228b52ffd80500400800074000030808080047b7801",
    "00f7ff39280202001078020010780200107802001078020010780200107802001078020010780200",
    "10780200107802001078020010780200107802001078020010780200107802001078020010780200",
    "10780200107802001078020010780200107802001078020010780200107802001078020010780200",
    "10780200107802001078020010780200107802001078020010780200107802001078020010780200",
    "10780200107802001078020010780200107802001078020010780200107802001078020010780200",
    "10780200107802001078020010780200107802001078020010780200107802001078020010780200",
    "10780200107802001078020010780200107821000078787878000d0d4576656e740a526573756c74",
    "0a000c0c0001000200020001020001003e26264e756c6c004c61796f757400506174636865640030",
    "e280933100312f322d312f3200312d30000023230e0d010101071101080111010d0e090e14010101",
    "06060101010901020101010101010d001515ad0f70eb55cb96ab1506d6aad572b435a9653b318002",
    "0f0f0012c4ac1772a9d33872bbed93bc000004042061207d02050500000000000205050000000000",
    "00000000000000262600000000ae04022020023404000301020d0ab004030a0a0a03130002202005",
    "01010905000120dba59df443504b422d0100000200000028182418030e0303030000018880404028",
    "b52ffd80500800100064000020858040780100f9ff39200202001078020010780200107802001078",
    "0200107802001078020010784100007878787d202a0a0a000d0d4576656e740a526573756c740a00",
    "0404000102003e0a0a456e67696e6573002a00000d0d0e0d0117011701170117010209000404aeb5",
    "5cad020707000b150072000001cf01475006140063d7fdf729f924dc1bc3e88e40caf6b061204769",
    "de789e6d270e11d3107a9b48c37345adac5a0063350bd749eceaa8c667380020bc7f036d6ff05488",
    "75a897e0e8620002050500000000000205050000000000000000000000000505009004010a002c2c",
    "707227b07adad72dc66be53f6b7597986504753f578bf7504da398335f0e03780896f92f634e2ac9",
    "f7299b158011c79243504b490300000023000000000000003e0200000a0000007102000000000000",
    "120200000700000093040000000000002d0100000200000000000000010000000a23000000434850",
    "4b0d0a1a0a1305696e6465780000000000000000dcce8077b38e926262c27ee935964434d0050000",
    "0000000013000000000000004348504b454e440a",
);

/// [`GOLDEN_TEXT_V6`] coded by `fast` in format 15 with the default
/// [`Openings::Every`]: labels of lichess's table, with their plies.
const GOLDEN_ARCHIVE_FAST: &str = concat!(
    "4348504b0d0a1a0a1304666173741d26dcfff80f67f3dcce8077b38e926234e0331a43504b42d100",
    "00000400000033254a1c040804040000000000000000101045434f0a4f70656e696e670a46454e0a",
    "000d0d01020001020001020003010200fe5e5e1200120012004332300012004b696e672773205061",
    "776e2047616d650001000100726e62716b626e722f70707070317070702f382f3470332f3450332f",
    "382f50505050315050502f524e42514b424e522077204b516b71202d20302032000008080e0d0e0d",
    "0e0d0e0d00020267d202080800080c6ae95c662c0000000205050000000000020505000000000000",
    "0000000a0a006fd03edb33f5f2da30fc0637ef43504b49010000002200000000000000d100000004",
    "00000000000000020000000a0a220000004348504b0d0a1a0a1304666173741d26dcfff80f67f3dc",
    "ce8077b38e926234e0331a71c6d5c7030100000000000004000000000000004348504b454e440a",
);

/// [`GOLDEN_TEXT_V6`] coded by `fast` in format 15 with
/// [`Openings::Named`].
const GOLDEN_ARCHIVE_FAST_NAMED: &str = concat!(
    "4348504b0d0a1a0a1304666173741d26dcfff80f67f3dcce8077b38e926234e0331a43504b42d100",
    "0000040000002774de47040804040000000000000000101045434f0a4f70656e696e670a46454e0a",
    "000d0d01020001020001020003010200fe5e5e1200070007004332300012004b696e672773205061",
    "776e2047616d650001000100726e62716b626e722f70707070317070702f382f3470332f3450332f",
    "382f50505050315050502f524e42514b424e522077204b516b71202d20302032000008080e0d0e0d",
    "0e0d0e0d0004047487c0a402090900081218525b89d4800000000205050000000000020505000000",
    "0000000000000707006fcffa6a0900fc0637ef43504b49010000002200000000000000d100000004",
    "00000000000000020000000a0a220000004348504b0d0a1a0a1304666173741d26dcfff80f67f3dc",
    "ce8077b38e926234e0331a71c6d5c7030100000000000004000000000000004348504b454e440a",
);

/// Issue 40 (format 11): an archive whose codec aims (`fast`, `model`)
/// stores the opening that a game's moves give as its label in the opening
/// table, with the tags, and codes the moves knowing it: `ECO` and
/// `Opening` come back without the moves, and the same games come back.
/// Here with [`Openings::Named`]: only where the `Opening` tag is the one
/// the moves give (format 11's first writer's choice, in format 12).
#[test]
fn regression_issue_40_openings_are_stored_and_need_no_moves() {
    let packed = compress_keeping(
        GOLDEN_TEXT_V6,
        &chesspack::game::ModelCodec::fast(),
        10,
        Openings::Named,
    );
    let hex: String = packed.iter().map(|b| format!("{b:02x}")).collect();
    if std::env::var_os("CHESSPACK_PRINT_GOLDEN").is_some() {
        println!("{hex}");
    }
    assert_eq!(
        hex, GOLDEN_ARCHIVE_FAST_NAMED,
        "format changed: bump FORMAT_VERSION"
    );
    assert_eq!(decompress(&packed), GOLDEN_TEXT_V6);
    let mut r = ArchiveReader::open(Cursor::new(&packed)).unwrap();
    let block = r.read_block(0).unwrap();
    let tags = archive::block_tags(r.codec(), &block).unwrap();
    let openings: Vec<Vec<String>> = tags
        .iter()
        .map(|t| {
            assert!(t.verbatim.is_none());
            t.tags
                .iter()
                .filter(|(k, _)| k == b"ECO" || k == b"Opening")
                .map(|(_, v)| String::from_utf8_lossy(v).into_owned())
                .collect()
        })
        .collect();
    let expected: Vec<Vec<String>> = chesspack::pgn::GameReader::new(GOLDEN_TEXT_V6)
        .map(|g| {
            let g = g.unwrap();
            ["ECO", "Opening"]
                .iter()
                .filter_map(|t| g.tag(t).map(str::to_owned))
                .collect()
        })
        .collect();
    assert_eq!(openings, expected);
    // The same games in format 10's way (the index codec cannot aim: its
    // blocks take the openings from the moves).
    let index = compress_with(GOLDEN_TEXT_V6, &Index, 10);
    assert_eq!(decompress(&index), GOLDEN_TEXT_V6);
}

/// The `ECO` and `Opening` tags of each game of every block of `packed`,
/// listed with the `index` codec, which cannot decode `model` or `fast`
/// moves: right only where no moves are decoded.
fn openings_listed_without_moves(packed: &[u8]) -> Option<Vec<Vec<String>>> {
    let mut r = ArchiveReader::open(Cursor::new(packed)).unwrap();
    let mut out = Vec::new();
    for b in 0..r.blocks().len() {
        let block = r.read_block(b).unwrap();
        for tags in archive::block_tags(&Index, &block).ok()? {
            out.push(match &tags.verbatim {
                None => tags
                    .tags
                    .iter()
                    .filter(|(k, _)| k == b"ECO" || k == b"Opening")
                    .map(|(_, v)| String::from_utf8_lossy(v).into_owned())
                    .collect(),
                // A game stored verbatim.
                Some(text) => openings_of_text(text).concat(),
            });
        }
    }
    Some(out)
}

/// The `ECO` and `Opening` tags of each game of a PGN text (none for a
/// game the reader skips: archives store those verbatim).
fn openings_of_text(text: &[u8]) -> Vec<Vec<String>> {
    chesspack::pgn::GameReader::new(text)
        .map(|g| match g {
            Ok(g) => ["ECO", "Opening"]
                .iter()
                .filter_map(|t| g.tag(t).map(str::to_owned))
                .collect(),
            Err(_) => Vec::new(),
        })
        .collect()
}

/// Issue 40: by default ([`Openings::Every`]) a game whose `ECO` tag alone
/// is the one its moves give (master games) keeps its opening too, so that
/// listing it decodes no moves; [`Openings::Named`] leaves it to the
/// moves. Lichess games with their `Opening` tags removed (an `ECO` tag
/// alone) and [`GOLDEN_TEXT_V6`], whose `Opening` tags are not all the
/// ones the moves give, both ways.
#[test]
fn regression_issue_40_an_eco_tag_alone_keeps_its_opening_too() {
    let packed = compress_with(GOLDEN_TEXT_V6, &chesspack::game::ModelCodec::fast(), 10);
    let hex: String = packed.iter().map(|b| format!("{b:02x}")).collect();
    if std::env::var_os("CHESSPACK_PRINT_GOLDEN").is_some() {
        println!("{hex}");
    }
    assert_eq!(
        hex, GOLDEN_ARCHIVE_FAST,
        "format changed: bump FORMAT_VERSION"
    );
    assert_eq!(decompress(&packed), GOLDEN_TEXT_V6);
    assert_eq!(
        openings_listed_without_moves(&packed),
        Some(openings_of_text(GOLDEN_TEXT_V6))
    );
    let text: Vec<u8> = String::from_utf8(sample())
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with("[Opening "))
        .flat_map(|l| l.bytes().chain([b'\n']))
        .collect();
    let expected = openings_of_text(&text);
    assert!(expected.iter().filter(|t| t.len() == 1).count() > 20);
    let codec = chesspack::game::ModelCodec::new();
    let every = compress_with(&text, &codec, 10);
    let named = compress_keeping(&text, &codec, 10, Openings::Named);
    for packed in [&every, &named] {
        assert_eq!(decompress(packed), text);
    }
    assert_eq!(
        openings_listed_without_moves(&every),
        Some(expected.clone())
    );
    // Left to the moves, the same listing decodes them with the wrong codec.
    assert_ne!(openings_listed_without_moves(&named), Some(expected));
}

/// A game with ratings, a time control and clocks.
const GOLDEN_TEXT_MODEL_WITH_CLOCKS: &[u8] =
    b"[White \"Old\"]\n[Black \"Model\"]\n[WhiteElo \"1500\"]\n\
[BlackElo \"1700\"]\n[TimeControl \"180+2\"]\n[Result \"0-1\"]\n\n1. e4 { [%clk 0:03:00] } 1... c5 \
{ [%clk 0:03:00] } 2. Nf3 { [%clk 0:02:58] } 2... d6 { [%clk 0:02:59] } 3. d4 { [%clk 0:02:55] } \
3... cxd4 { [%clk 0:02:58] } 4. Nxd4 { [%clk 0:02:55] } 4... Nf6 { [%clk 0:02:57] } 5. Nc3 \
{ [%clk 0:02:51] } 5... a6 { [%clk 0:02:50] } 0-1\n";

/// Archives of the engine codecs open with the default codec whatever
/// parameters they were written with (each stream's header holds them).
#[test]
fn engine_archives_with_other_parameters_decode() {
    use chesspack::game::engine_codec::{Coding, EngineCodec, EngineParams};
    let text = b"[White \"A\"]\n\n1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 4. h4 h5 1-0\n\n";
    for params in [
        EngineParams {
            book: false,
            ..EngineParams::default()
        },
        EngineParams {
            depth: 0,
            k_tenths: 125,
            book: true,
        },
    ] {
        let codec = EngineCodec::with_params(Coding::Arith, params);
        let packed = compress_with(text, &codec, 10);
        assert_eq!(decompress(&packed), text.to_vec());
    }
}

#[test]
fn repeated_tag_values_and_values_like_marks_round_trip() {
    // Values equal to the previous game's, values that are or begin with
    // the mark bytes, empty values, and a tag name that first appears late.
    let mut text = String::new();
    let values = [
        "A",
        "A",
        "\u{1}",
        "\u{1}",
        "\u{2}x",
        "",
        "",
        "\u{1}\u{1}",
        "A",
        "\u{2}",
    ];
    for (i, v) in values.iter().enumerate() {
        text.push_str(&format!("[Event \"{v}\"]\n[Site \"s\"]\n"));
        if i >= 5 {
            text.push_str(&format!("[Round \"{}\"]\n", i / 2));
        }
        text.push_str("\n1. e4 e5 *\n\n");
    }
    let packed = compress_with(text.as_bytes(), &Index, 4);
    assert_eq!(decompress(&packed), text.as_bytes().to_vec());
    let reader = ArchiveReader::open(Cursor::new(&packed)).unwrap();
    assert_eq!(reader.header().version, FORMAT_VERSION);
}

/// PGN text of a random game with random annotations.
fn annotated_game(seed: u64, plies: usize) -> String {
    use std::fmt::Write as _;
    let choices: Vec<u32> = (0..plies as u64)
        .map(|i| (seed.wrapping_add(i).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 40) as u32)
        .collect();
    let moves = crate::common::play(&shakmaty::Chess::default(), &choices);
    let mut pos = shakmaty::Chess::default();
    let mut s = format!("[Event \"random {seed}\"]\n[Result \"*\"]\n\n");
    let mut x = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
    for (i, m) in moves.iter().enumerate() {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        if i % 2 == 0 {
            write!(s, "{}. ", i / 2 + 1).unwrap();
        }
        let san = shakmaty::san::SanPlus::from_move_and_play_unchecked(&mut pos, *m);
        write!(s, "{san} ").unwrap();
        match x >> 60 {
            0 => write!(s, "${} ", (x >> 20) % 256).unwrap(),
            1 => write!(
                s,
                "{{ [%clk 0:0{}:{:02}] }} ",
                (x >> 8) % 10,
                (x >> 16) % 60
            )
            .unwrap(),
            2 => s.push_str("{ [%eval -1.25] } "),
            3 => write!(s, "{{ note {} }} ", x % 1000).unwrap(),
            4 => s.push_str("!? "),
            _ => {}
        }
    }
    s.push_str("*\n\n");
    s
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn random_annotated_games_round_trip(seeds in prop::collection::vec(any::<u64>(), 1..6), plies in 0usize..120) {
        let text: String = seeds.iter().map(|&s| annotated_game(s, plies)).collect();
        let expected = text.as_bytes().to_vec();
        let packed = compress_with(text.as_bytes(), &Index, 2);
        prop_assert_eq!(decompress(&packed), expected);
    }

    #[test]
    fn any_bytes_compress_and_come_back(text in prop::collection::vec(any::<u8>(), 0..400)) {
        let expected = text.to_vec();
        let packed = compress_with(&text, &Radix, 3);
        prop_assert_eq!(decompress(&packed), expected);
    }
}

/// Format 3 stores a game of moves alone with the codec's self-ending
/// stream: every codec must find the end, also after a forced move and at
/// a mate.
#[test]
fn games_of_moves_alone_round_trip_with_every_codec() {
    use shakmaty::{Chess, Position, san::SanPlus};
    let mut lines = vec![vec![]];
    for seed in 0..64u64 {
        let choices: Vec<u32> = (0..100u64)
            .map(|i| ((seed * 41 + i).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 40) as u32)
            .collect();
        let moves = crate::common::play(&Chess::default(), &choices);
        // The game up to its last forced move, and the whole game.
        let mut pos = Chess::default();
        let mut cut = None;
        for (i, m) in moves.iter().enumerate() {
            if pos.legal_moves().len() == 1 {
                cut = Some(i + 1);
            }
            pos.play_unchecked(*m);
        }
        if let Some(cut) = cut {
            lines.push(moves[..cut].to_vec());
        }
        if seed < 8 {
            lines.push(moves[..moves.len().min(30)].to_vec());
        }
    }
    let mut text = String::from("[Event \"fool\"]\n\n1. f3 e5 2. g4 Qh4# 0-1\n\n");
    for (i, moves) in lines.iter().enumerate() {
        let mut pos = Chess::default();
        let sans: Vec<String> = moves
            .iter()
            .map(|&m| SanPlus::from_move_and_play_unchecked(&mut pos, m).to_string())
            .collect();
        text.push_str(&format!("[Event \"{i}\"]\n\n{} *\n\n", sans.join(" ")));
    }
    assert!(lines.len() > 16, "random games with forced moves");
    let expected = text.as_bytes();
    for codec in chesspack::game::codecs() {
        let packed = compress_with(text.as_bytes(), codec.as_ref(), 7);
        assert_eq!(decompress(&packed), expected, "{}", codec.name());
    }
}

/// Flips a byte of block `b`'s stored bytes at `at` (relative to them) and
/// writes a matching CRC-32, as damage that the block checksum misses.
fn mutate_with_matching_crc(packed: &[u8], entry: &archive::BlockEntry, at: usize) -> Vec<u8> {
    let mut bad = packed.to_vec();
    let start = entry.offset as usize + 16;
    let end = start + entry.len as usize;
    bad[start + at] ^= 0x10;
    let crc = crc32(&bad[start..end]);
    bad[start - 4..start].copy_from_slice(&crc.to_le_bytes());
    bad
}

#[test]
fn regression_issue_29_text_checksum_catches_what_the_block_crc_cannot() {
    // Each mutation has a valid block CRC: decompressing must fail, or give
    // back exactly the original text (never different text and success).
    let text = sample();
    let expected = text.to_vec();
    let packed = compress_with(&text, &Index, 8);
    let entries = ArchiveReader::open(Cursor::new(&packed))
        .unwrap()
        .blocks()
        .to_vec();
    let (mut caught, mut by_text, mut tried) = (0, 0, 0);
    for (b, entry) in entries.iter().enumerate().take(3) {
        for at in (0..entry.len as usize).step_by(3) {
            let bad = mutate_with_matching_crc(&packed, entry, at);
            let mut out = Vec::new();
            tried += 1;
            match archive::decompress(Cursor::new(&bad), &mut out) {
                Ok(_) => assert_eq!(out, expected, "block {} byte {at}", b + 1),
                Err(ArchiveError::Damaged { block, reason }) => {
                    assert_eq!(block, b as u64 + 1, "{reason}");
                    caught += 1;
                    if reason.starts_with("decoded text") {
                        by_text += 1;
                        // get --check sees it too, for every game of the block.
                        let mut r = ArchiveReader::open(Cursor::new(&bad)).unwrap();
                        let first = r.first_game(b);
                        assert!(crate::common::game_checked(&mut r, first).is_err());
                    }
                }
                Err(e) => panic!("block {} byte {at}: {e}", b + 1),
            }
        }
    }
    eprintln!("{caught} of {tried} mutations caught ({by_text} by the text checksum alone)");
    assert!(
        tried > 100 && caught * 10 > tried * 9,
        "{caught} of {tried}"
    );
    assert!(by_text > 0);
}

#[test]
fn regression_issue_29_footer_numbers_are_checked() {
    let packed = compress_with(&sample(), &Index, 8);
    let footer = packed.len() - 24;
    for at in footer..footer + 16 {
        for bit in [0x01, 0x80] {
            let mut bad = packed.clone();
            bad[at] ^= bit;
            let r = ArchiveReader::open(Cursor::new(&bad)).unwrap();
            assert!(r.index_error().is_some(), "footer byte {}", at - footer);
            let mut out = Vec::new();
            assert!(matches!(
                archive::decompress(Cursor::new(&bad), &mut out),
                Err(ArchiveError::Index(_))
            ));
        }
    }
}

#[test]
fn regression_issue_29_file_ends_and_result_lines_come_back_byte_for_byte() {
    let cases: [&[u8]; 8] = [
        // A lichess export: one line feed after the last game.
        b"[Event \"a\"]\n\n1. e4 e5 1-0\n\n[Event \"b\"]\n\n1. d4 d5 0-1\n",
        // A byte order mark and blank lines before the first game.
        b"\xef\xbb\xbf\n\n[Event \"a\"]\n\n1. e4 *\n\n",
        // No line feed at the end; several at the end.
        b"1. e4 e5 *",
        b"1. e4 e5 *\n\n\n\n",
        // The result on a line of its own, after a comment or a move.
        b"[Event \"a\"]\n\n1. e4 { a comment }\n*\n\n[Event \"b\"]\n\n1. d4 d5\n1/2-1/2\n",
        // CR LF at the ends, and a CR LF export.
        b"\xef\xbb\xbf\r\n1. e4 *\r\n",
        b"[Event \"a\"]\r\n\r\n1. e4 { x } 1... e5 1-0\r\n\r\n[Event \"b\"]\r\n\r\n1. d4 d5 0-1\r\n",
        // A verbatim last game.
        b"1. e4 *\n\n1. e4 e5 2. Ke3\n\n\n",
    ];
    for text in cases {
        assert_eq!(
            String::from_utf8_lossy(&canonical(text).unwrap()),
            String::from_utf8_lossy(text)
        );
        for (codec, block_games) in [(&Index as &dyn GameCodec, 1), (&Radix, 100)] {
            let packed = compress_with(text, codec, block_games);
            assert_eq!(
                decompress(&packed),
                text,
                "{}",
                String::from_utf8_lossy(text)
            );
        }
    }
    // A game's own text (`get`) is as the input has it (format 13).
    let packed = compress_with(cases[0], &Index, 10);
    let mut r = ArchiveReader::open(Cursor::new(&packed)).unwrap();
    assert_eq!(r.game(2).unwrap(), b"[Event \"b\"]\n\n1. d4 d5 0-1\n");
    let packed = compress_with(cases[4], &Index, 10);
    let mut r = ArchiveReader::open(Cursor::new(&packed)).unwrap();
    assert_eq!(
        crate::common::game_checked(&mut r, 1).unwrap(),
        b"[Event \"a\"]\n\n1. e4 { a comment }\n*\n\n"
    );
}

/// Issue 26: `model` codes a game's moves in its context (ratings, time
/// control) from its tags, which the archive decodes before the moves; the
/// same moves under other tags cost other bits, and every variant decodes.
#[test]
fn regression_issue_26_moves_are_coded_in_their_games_context() {
    use chesspack::{game::ModelCodec, model::GameContext, pgn::GameReader};
    let moves = "1. e4 e5 2. Nf3 Nc6 3. Bc4 Nf6 4. Ng5 d5 5. exd5 Nxd5 6. Nxf7 Kxf7 \
7. Qf3+ Ke6 8. Nc3 Nb4 9. a3 Nxc2+ 10. Kd1 Nxa1 11. Nxd5 Qh4 12. Nxc7+ Kd7 1-0";
    let tags = [
        "",
        "[WhiteElo \"850\"]\n[BlackElo \"900\"]\n[TimeControl \"60+0\"]\n",
        "[WhiteElo \"2700\"]\n[BlackElo \"2650\"]\n[TimeControl \"5400+30\"]\n",
        "[WhiteElo \"?\"]\n[BlackElo \"2650\"]\n[TimeControl \"-\"]\n",
    ];
    let mut streams = Vec::new();
    let mut all = Vec::new();
    for t in tags {
        let text = format!("[White \"A\"]\n[Black \"B\"]\n{t}\n{moves}\n\n");
        all.extend_from_slice(text.as_bytes());
        let g = GameReader::new(text.as_bytes()).next().unwrap().unwrap();
        let codec = ModelCodec::new().with_context(g.context());
        let bits = codec.encode(&g.start, &g.moves).unwrap();
        assert_eq!(codec.decode(&g.start, &bits).unwrap(), g.moves);
        // The trait's way to the same codec.
        let boxed = ModelCodec::new().in_context(&g.context());
        assert_eq!(boxed.encode(&g.start, &g.moves).unwrap(), bits);
        streams.push(bits);
    }
    // No tags is the unknown context; the others differ from it and from
    // each other.
    let g = GameReader::new(moves.as_bytes()).next().unwrap().unwrap();
    assert_eq!(g.context(), GameContext::default());
    assert_eq!(
        ModelCodec::new().encode(&g.start, &g.moves).unwrap(),
        streams[0]
    );
    for i in 0..streams.len() {
        for j in 0..i {
            assert_ne!(streams[i], streams[j], "{i} {j}");
        }
    }
    // In an archive, one block of all four: each decodes with its own tags.
    let packed = compress_with(&all, &ModelCodec::new(), 10);
    assert_eq!(decompress(&packed), canonical(&all[..]).unwrap());
    // Read in a context other than the writer's, a stream decodes to other
    // moves or fails: the text checksum catches it.
    let wrong =
        ModelCodec::new().with_context(GameContext::new().with_ratings(Some(2700), Some(2650)));
    let decoded = wrong.decode(&g.start, &streams[1]);
    assert!(decoded.map_or(true, |m| m != g.moves));
}

/// Issue 26: `ECO` and `Opening` tags that the moves give (lichess names
/// every game's opening from its moves) are stored as a mark and come back
/// from the moves; tags that differ, games from a FEN and games whose
/// moves name no opening keep their values.
#[test]
fn regression_issue_26_opening_tags_come_from_the_moves() {
    let packed = compress_with(GOLDEN_TEXT_V6, &Index, 10);
    assert_eq!(decompress(&packed), GOLDEN_TEXT_V6);
    let mut r = ArchiveReader::open(Cursor::new(&packed)).unwrap();
    // The hash of lichess's table (src/openings-lichess.bin) and its priors
    // by rating band (src/openings-lichess-prior-bands.txt), the `fast`
    // weights and the engine-comment fields' prior
    // (src/archive/block/fields.bin) together.
    assert_eq!(r.header().openings_hash, 7_102_896_463_771_913_948);
    let block = r.read_block(0).unwrap();
    let names = |tags: &[(Vec<u8>, Vec<u8>)]| -> Vec<String> {
        tags.iter()
            .map(|(k, v)| {
                format!(
                    "{}={}",
                    String::from_utf8_lossy(k),
                    String::from_utf8_lossy(v)
                )
            })
            .collect()
    };
    let all: Vec<_> = archive::block_tags(r.codec(), &block)
        .unwrap()
        .into_iter()
        .map(|t| {
            assert!(t.verbatim.is_none());
            names(&t.tags)
        })
        .collect();
    assert_eq!(
        all[0],
        ["ECO=C20", "Opening=King's Pawn Game: Wayward Queen Attack"]
    );
    assert_eq!(all[1], ["ECO=C20", "Opening=King's Pawn Game"]);
    // Without the moves, the tags they give are left out.
    let not_given: Vec<_> = archive::block_tags_not_given(&block)
        .unwrap()
        .into_iter()
        .map(|t| {
            assert!(t.verbatim.is_none());
            names(&t.tags)
        })
        .collect();
    assert_eq!(not_given[0], Vec::<String>::new());
    assert_eq!(not_given[1], ["Opening=King's Pawn Game"]);
    assert_eq!(not_given[2], ["Opening=King's Pawn Game"]);
    assert_eq!(all[2], ["ECO=A00", "Opening=King's Pawn Game"]);
    assert_eq!(not_given[3], all[3]);
    assert_eq!(all[3].len(), 3);
    // The marks make the tag values shorter than the values.
    let report = report_of(GOLDEN_TEXT_V6, &Index);
    let values: usize = all
        .iter()
        .flatten()
        .map(|t| t.len() - t.find('=').unwrap())
        .sum();
    assert!((report.raw[4] as usize) < values - 40, "{}", report.raw[4]);
}

/// Issue 26: the mainline's clock readings (`%clk`) are part of its moves'
/// context, decoded before the moves: the same moves under other clocks
/// cost other bits, archives of both round-trip, and a variation's moves
/// (coded without clocks) and a game whose clocks stop do too.
#[test]
fn regression_issue_26_clocks_are_part_of_the_moves_context() {
    use chesspack::{game::ModelCodec, pgn::GameReader};
    let sans = [
        "e4", "e5", "Nf3", "Nc6", "Bb5", "a6", "Ba4", "Nf6", "O-O", "Be7",
    ];
    let game = |clocks: &[u32], variation: bool| {
        let mut text = String::from("[TimeControl \"60+0\"]\n[Result \"*\"]\n\n");
        for (i, san) in sans.iter().enumerate() {
            if i % 2 == 0 {
                text += &format!("{}. ", i / 2 + 1);
            } else if i == 1 || clocks.get(i - 1).is_some() {
                text += &format!("{}... ", i / 2 + 1);
            }
            text += san;
            text += " ";
            if let Some(c) = clocks.get(i) {
                text += &format!("{{ [%clk 0:00:{c:02}] }} ");
            }
            if variation && i == 2 {
                text += "(3. Bc4 { [%clk 0:00:01] } 3... Nc6) ";
                if clocks.get(i).is_none() {
                    text += &format!("{}... ", i / 2 + 1);
                }
            }
        }
        text + "*\n\n"
    };
    let plenty = game(&[59, 59, 58, 58, 57, 57, 56, 56, 55, 55], false);
    let trouble = game(&[9, 8, 7, 6, 5, 4, 3, 3, 2, 2], false);
    let codec = ModelCodec::new();
    let mut streams = Vec::new();
    for text in [&plenty, &trouble] {
        let g = GameReader::new(text.as_bytes()).next().unwrap().unwrap();
        assert_eq!(g.clocks.len(), sans.len());
        streams.push(
            codec
                .in_context(&g.context())
                .encode(&g.start, &g.moves)
                .unwrap(),
        );
        assert_eq!(
            g.context().without_clocks(),
            chesspack::model::GameContext::from_tags([("TimeControl", "60+0")])
        );
    }
    assert_ne!(streams[0], streams[1]);
    let stopping = game(&[59, 59, 58], false);
    let branching = game(&[9, 8, 7, 6, 5, 4, 3, 3, 2, 2], true);
    for text in [&plenty, &trouble, &stopping, &branching] {
        let packed = compress_with(text.as_bytes(), &codec, 10);
        assert_eq!(decompress(&packed), text.as_bytes(), "{text}");
    }
}

/// Found by fuzzing `compress_pgn` with a format-7 seed: a game with two
/// `TimeControl` tags had its clocks coded with the first one's base time
/// (as the writer's clock model reads the tags) and decoded with the
/// last's, so its block failed its text checksum. The reader now takes
/// the first too. The input is also a seed of the fuzz corpus.
#[test]
fn regression_issue_26_a_game_with_two_time_controls_keeps_its_clocks() {
    let text = b"[Event \"x\"]\n[TimeControl \"60+0\"]\n[TimeControl \"180+0\"]\n\n\
1. e4 { [%clk 0:01:00] } 1... e5 { [%clk 0:00:58] } 2. Nf3 { [%clk 0:00:57] } *\n\n\
[Event \"y\"]\n[TimeControl \"180+2\"]\n[TimeControl \"\"]\n\n1. d4 { [%clk 0:03:02] } *\n\n";
    for codec in [
        &Index as &dyn GameCodec,
        &chesspack::game::ModelCodec::new(),
    ] {
        assert_eq!(decompress(&compress_with(text, codec, 10)), text);
    }
}

/// Issue 26 (format 8): a lichess game whose moves each carry one clock or
/// evaluation comment is one event, its ply count beside its moves' length:
/// the `events` column holds a few bytes a game instead of two a ply, and
/// every game of the sample still comes back, whole (byte for byte) and one
/// at a time with `get`.
#[test]
fn regression_issue_26_lichess_games_are_one_event_each() {
    use chesspack::game::ModelCodec;
    let sample = sample();
    let chunks: Vec<_> = chesspack::pgn::ChunkReader::new(&sample[..])
        .collect::<Result<_, _>>()
        .unwrap();
    let codec = ModelCodec::new();
    let report = report_of(&sample, &codec);
    let events = archive::COLUMNS
        .iter()
        .position(|&c| c == "events")
        .unwrap();
    let plies: usize = chunks
        .iter()
        .map(|c| {
            archive::canonical(&c.bytes[..])
                .unwrap()
                .windows(6)
                .filter(|w| w == b"[%clk ")
                .count()
        })
        .sum();
    assert!(plies > 1000, "{plies}");
    // Pattern, result and end: at most 4 bytes a game.
    assert!(
        report.raw[events] <= 4 * report.games,
        "{} bytes of events for {} games",
        report.raw[events],
        report.games
    );
    let packed = compress_with(&sample, &codec, 8);
    assert_eq!(decompress(&packed), sample);
    let mut reader = ArchiveReader::open(Cursor::new(&packed)).unwrap();
    for (i, game) in input_games(&sample).iter().enumerate() {
        assert_eq!(
            &crate::common::game_checked(&mut reader, i as u64 + 1).unwrap(),
            game,
            "game {i}"
        );
    }
}

/// Each block's games (index in the block, text), or its error.
type BlockTexts = Vec<Result<Vec<(usize, Vec<u8>)>, String>>;

/// What decoding every block of `packed` on a pool of `threads` threads
/// gives: each game's text or the block's error, in the order given.
fn decode_on(threads: usize, packed: &[u8]) -> BlockTexts {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap();
    pool.install(|| {
        let mut r = ArchiveReader::open(Cursor::new(packed)).unwrap();
        (0..r.blocks().len())
            .map(|b| {
                let block = r.read_block(b).map_err(|e| e.to_string())?;
                let mut games = Vec::new();
                archive::decode_games(r.codec(), &block, &|_| true, &mut |g, t| games.push((g, t)))
                    .map_err(|e| format!("{e} after {} games", games.len()))?;
                Ok(games)
            })
            .collect()
    })
}

/// Issue 40: the games of one block decode on several threads (their
/// moves are streams of their own) to the same texts, in the same order,
/// as on one; a damaged block gives the same error after the same games.
#[test]
fn regression_issue_40_a_block_decodes_alike_on_any_number_of_threads() {
    let mut text = sample();
    for name in ["annotated.pgn", "broken.pgn", "players.pgn"] {
        text.extend_from_slice(b"\n");
        text.extend_from_slice(&fixture(name));
    }
    let expected = text.to_vec();
    let codec = chesspack::game::codec("model").unwrap();
    let packed = compress_with(&text, codec.as_ref(), 4096);
    let one = decode_on(1, &packed);
    assert_eq!(one.len(), 1, "one block");
    let games = one[0].as_ref().unwrap();
    assert!(games.len() > 40);
    let texts: Vec<Vec<u8>> = games.iter().map(|(_, t)| t.clone()).collect();
    assert_eq!(texts, input_games(&text));
    assert_eq!(decompress(&packed), expected);
    let r = ArchiveReader::open(Cursor::new(&packed)).unwrap();
    for threads in [2, 3] {
        assert_eq!(decode_on(threads, &packed), one, "{threads} threads");
    }
    // Damage the block's stored bytes (with a matching checksum) here and
    // there: one thread and two agree on the games and the error.
    let entry = r.blocks()[0];
    let mut damaged = 0;
    for at in (0..entry.len as usize).step_by(97) {
        let bad = mutate_with_matching_crc(&packed, &entry, at);
        let one = decode_on(1, &bad);
        damaged += usize::from(one[0].is_err());
        assert_eq!(decode_on(2, &bad), one, "byte {at}");
    }
    assert!(damaged > 10, "{damaged}");
}

/// Issue 40: records decoded straight from an archive hold what the
/// decompressed text holds: the tags, the mainline's moves (past comments,
/// glyphs and variations) and the clock readings after them.
#[test]
fn regression_issue_40_records_hold_what_the_text_holds() {
    let mut text = sample();
    text.extend_from_slice(b"\n");
    text.extend_from_slice(&fixture("annotated.pgn"));
    let codec = chesspack::game::codec("model").unwrap();
    let packed = compress_with(&text, codec.as_ref(), 16);
    let decompressed = decompress(&packed);
    // The reader skips the verbatim game (another variant), which has no
    // record either.
    let games: Vec<_> = chesspack::pgn::GameReader::new(&decompressed[..])
        .filter_map(Result::ok)
        .collect();
    let mut r = ArchiveReader::open(Cursor::new(&packed)).unwrap();
    let mut records = Vec::new();
    for b in 0..r.blocks().len() {
        let block = r.read_block(b).unwrap();
        archive::decode_records(r.codec(), &block, &|_| true, &mut |_, row| {
            records.push(row)
        })
        .unwrap();
    }
    assert_eq!(records.len(), input_games(&text).len());
    let (mut compared, mut with_clocks, mut tenths) = (0, 0, false);
    for record in records.iter().filter_map(|r| match r {
        archive::GameRow::Record(r) => Some(r),
        archive::GameRow::Text(_) => None,
    }) {
        let g = &games[compared];
        compared += 1;
        let tags: Vec<(String, String)> = record
            .tags
            .iter()
            .map(|(k, v)| {
                (
                    String::from_utf8(k.clone()).unwrap(),
                    String::from_utf8(v.clone()).unwrap(),
                )
            })
            .collect();
        assert_eq!(tags, g.tags, "game {compared}");
        assert_eq!(record.moves, g.moves, "game {compared}");
        assert_eq!(record.clocks.len(), record.moves.len());
        // The reader's clocks are lichess's `[%clk H:MM:SS]` comments; a
        // record has those and any other `%clk` reading (the annotated
        // fixture's `[%clk 0:00:09.5]`), in milliseconds.
        if !g.clocks.is_empty() {
            with_clocks += 1;
        }
        for (i, c) in g.clocks.iter().enumerate() {
            if let Some(s) = c {
                let ms = Some(u64::from(*s) * 1000);
                assert_eq!(record.clocks[i], ms, "game {compared}");
            }
        }
        tenths |= record.clocks.contains(&Some(9_500));
    }
    assert!(tenths, "the annotated fixture's reading with a fraction");
    assert_eq!(compared, games.len());
    assert!(
        compared > 36 && with_clocks > 30,
        "{compared} {with_clocks}"
    );
}

/// Issue 40: listing `ECO` and `Opening` decodes a game's moves only as
/// far as a move may still change its opening (`opening::Walk`), and gives
/// the tags of the game's text, with `model` (which stops early) and
/// `index` (which decodes whole streams), games from a FEN included.
#[test]
fn regression_issue_40_opening_tags_decode_only_the_plies_they_need() {
    let text = sample();
    for codec in [
        chesspack::game::codec("model").unwrap(),
        chesspack::game::codec("index").unwrap(),
    ] {
        let packed = compress_with(&text, codec.as_ref(), 10);
        let mut r = ArchiveReader::open(Cursor::new(&packed)).unwrap();
        // Each game's `ECO` and `Opening` pairs.
        let openings = |tags: Vec<(String, String)>| -> Vec<(String, String)> {
            tags.into_iter()
                .filter(|(k, _)| k == "ECO" || k == "Opening")
                .collect()
        };
        let of_text = |t: &[u8]| match chesspack::pgn::GameReader::new(t).next() {
            Some(Ok(g)) => openings(g.tags),
            _ => Vec::new(),
        };
        let (mut listed, mut written) = (Vec::new(), Vec::new());
        for b in 0..r.blocks().len() {
            let block = r.read_block(b).unwrap();
            for tags in archive::block_tags(r.codec(), &block).unwrap() {
                listed.push(match tags.verbatim {
                    None => openings(
                        tags.tags
                            .into_iter()
                            .map(|(k, v)| {
                                (String::from_utf8(k).unwrap(), String::from_utf8(v).unwrap())
                            })
                            .collect(),
                    ),
                    Some(text) => of_text(&text),
                });
            }
            archive::decode_games(r.codec(), &block, &|_| true, &mut |_, t| {
                written.push(of_text(&t))
            })
            .unwrap();
        }
        assert!(listed.iter().filter(|t| !t.is_empty()).count() > 20);
        assert_eq!(listed, written, "{}", codec.name());
    }
}
