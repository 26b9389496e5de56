//! Openings as lichess names them (issue 57): lichess's own table, its
//! rule, and classifying games from PGN and from archives.

use std::io::Cursor;

use chesspack::{
    archive::{self, ArchiveReader, Options},
    game::{GameCodec, Index, ModelCodec},
    opening::OpeningTable,
    pgn::GameReader,
};

fn sample() -> Vec<u8> {
    let path = format!(
        "{}/../../samples/lichess-sample.pgn",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read(path).unwrap()
}

fn compress(text: &[u8], codec: &dyn GameCodec) -> Vec<u8> {
    let mut options = Options::default();
    options.block_games = 16;
    let mut out = Vec::new();
    archive::compress(text, &mut out, codec, &options).unwrap();
    out
}

/// Each game's opening from its text, `(ECO, name, ply)`.
type Row = Option<(String, String, usize)>;

fn classified_text(text: &[u8]) -> Vec<Row> {
    let table = OpeningTable::lichess();
    GameReader::new(text)
        .map(|g| {
            let g = g.ok()?;
            let o = table.classify(&g.start, &g.moves)?;
            Some((o.eco.to_owned(), o.name.to_owned(), o.ply))
        })
        .collect()
}

/// Every game's opening in an archive, listed with `codec` (`None` when the
/// archive does not decode with it).
fn classified_archive(packed: &[u8], codec: Option<&dyn GameCodec>) -> Option<Vec<Row>> {
    let mut r = ArchiveReader::open(Cursor::new(packed)).unwrap();
    let mut out = Vec::new();
    for b in 0..r.blocks().len() {
        let block = r.read_block(b).unwrap();
        let codec = codec.unwrap_or(r.codec());
        for o in archive::block_openings(codec, &block, OpeningTable::lichess()).ok()? {
            out.push(o.map(|o| (o.eco.to_owned(), o.name.to_owned(), o.ply)));
        }
    }
    Some(out)
}

/// Lines of lichess's table (a sample of 48 of its 3,807, CC0: the longest,
/// those with the fewest pieces, en passant, names with several lines),
/// each played as a game, are classified as their own line: its ECO code,
/// its name and its length. (All 3,807 are: docs/openings.md.)
#[test]
fn regression_issue_57_each_line_of_lichess_table_names_itself() {
    let text = crate::common::openings_lines();
    let table = OpeningTable::lichess();
    let mut lines = 0;
    for line in text.lines().skip(1) {
        let cols: Vec<&str> = line.split('\t').collect();
        let game = GameReader::new(format!("{} *\n", cols[2]).as_bytes())
            .next()
            .unwrap()
            .unwrap();
        let named = table
            .classify(&game.start, &game.moves)
            .unwrap_or_else(|| panic!("{line}: no opening"));
        assert_eq!(
            (named.eco, named.name, named.ply),
            (cols[0], cols[1], game.moves.len()),
            "{line}"
        );
        lines += 1;
    }
    assert_eq!(lines, 48);
    // The table the library ships is built from all of them: a table built
    // from these lines alone names them the same.
    let own = OpeningTable::from_tsv(&text).unwrap();
    assert_eq!(own.len(), 48);
    assert!(table.len() >= 3807);
}

/// Lichess's rule: a game from another position, or one that leaves the
/// table at once, names nothing; the deepest listed position of the first
/// 40 plies wins, even if the game left the table's lines in between.
#[test]
fn regression_issue_57_the_deepest_position_of_the_first_40_plies() {
    let table = OpeningTable::lichess();
    let named = |pgn: &str| {
        let g = GameReader::new(pgn.as_bytes()).next().unwrap().unwrap();
        table
            .classify(&g.start, &g.moves)
            .map(|o| (o.eco, o.name, o.ply))
    };
    assert_eq!(
        named("1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 4. Ba4 Nf6 5. O-O Be7 *"),
        Some(("C84", "Ruy Lopez: Closed", 10))
    );
    // Knights out and back: the position after 2... Nc6 again at ply 8.
    assert_eq!(
        named("1. e4 e5 2. Nf3 Nc6 3. Ng1 Nb8 4. Nf3 Nc6 *"),
        Some(("C44", "King's Knight Opening: Normal Variation", 8))
    );
    assert_eq!(
        named("[FEN \"rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1\"]\n\n1... e5 *"),
        None
    );
    assert_eq!(named("*"), None);
}

/// `block_openings` gives what classifying the text gives, for every game:
/// stored games (tags that match or not, no tags), verbatim ones (a
/// variant: none) and games from a FEN (none), with every codec.
#[test]
fn regression_issue_57_archives_classify_as_their_text() {
    let text = sample();
    let expected = classified_text(&text);
    assert!(expected.iter().filter(|o| o.is_some()).count() >= 30);
    for codec in [
        &Index as &dyn GameCodec,
        &ModelCodec::fast(),
        &ModelCodec::new(),
    ] {
        let packed = compress(&text, codec);
        assert_eq!(decompress(&packed), text);
        assert_eq!(
            classified_archive(&packed, None).unwrap(),
            expected,
            "{}",
            codec.name()
        );
    }
}

/// Where a game's `Opening` tag is lichess's (a fresh export), the archive
/// stores its opening as a number with the ply of its position (format
/// 15): classifying it decodes no moves, so the `index` codec, which cannot
/// decode `model`'s moves, lists every opening of a `model` archive; games
/// whose tags differ need their moves.
#[test]
fn regression_issue_57_stored_openings_need_no_moves() {
    let table = OpeningTable::lichess();
    // The sample's standard games, their tags as lichess writes them today.
    let mut fresh = String::new();
    for g in GameReader::new(&sample()[..]).flatten() {
        let Some(o) = table.classify(&g.start, &g.moves) else {
            continue;
        };
        fresh += &format!(
            "[White \"{}\"]\n[ECO \"{}\"]\n[Opening \"{}\"]\n\n",
            g.tag("White").unwrap_or("?"),
            o.eco,
            o.name
        );
        let mut pos = g.start.clone();
        for m in &g.moves {
            let san = shakmaty::san::SanPlus::from_move_and_play_unchecked(&mut pos, *m);
            fresh += &format!("{san} ");
        }
        fresh += "*\n\n";
    }
    // And games that the table names no opening of, which lichess tags
    // `?`: from a FEN, here.
    fresh +=
        "[ECO \"?\"]\n[Opening \"?\"]\n[FEN \"4k3/8/8/8/8/8/4P3/4K3 w - - 0 1\"]\n\n1. e4 *\n\n";
    let expected = classified_text(fresh.as_bytes());
    assert!(expected.len() >= 25 && expected.iter().filter(|o| o.is_none()).count() == 1);
    let packed = compress(fresh.as_bytes(), &ModelCodec::new());
    assert_eq!(decompress(&packed), fresh.as_bytes());
    assert_eq!(classified_archive(&packed, Some(&Index)).unwrap(), expected);
    // The same games with older names: their moves are decoded (`index`
    // reads `model`'s bits as other moves).
    let renamed = fresh
        .replace("[Opening \"", "[Opening \"Old ")
        .replace("[ECO \"", "[ECO \"X");
    let packed = compress(renamed.as_bytes(), &ModelCodec::new());
    assert_eq!(decompress(&packed), renamed.as_bytes());
    assert_ne!(
        classified_archive(&packed, Some(&Index)),
        Some(expected.clone())
    );
    assert_eq!(classified_archive(&packed, None).unwrap(), expected);
}

/// Issue 67: an archive of an earlier format (here 14, which named
/// openings by a table learned from games) is refused with a message that
/// names its version: one format until the first release.
#[test]
fn regression_issue_67_an_archive_of_another_version_is_refused() {
    let mut packed = Vec::new();
    archive::compress(
        &sample()[..],
        &mut packed,
        &Index,
        &archive::Options::default(),
    )
    .unwrap();
    // The header and its copy in the index say 14, with right checksums:
    // only the version is refused.
    let header = packed[..35].to_vec();
    let copy = 35 + packed[35..].windows(35).position(|w| w == header).unwrap();
    for at in [0, copy] {
        packed[at + 8] = 14;
        let crc = crc32fast::hash(&packed[at..at + 31]);
        packed[at + 31..at + 35].copy_from_slice(&crc.to_le_bytes());
    }
    let n = packed.len();
    let index = u64::from_le_bytes(packed[n - 24..n - 16].try_into().unwrap()) as usize;
    let mut crc = crc32fast::Hasher::new();
    crc.update(&packed[index..n - 28]);
    crc.update(&packed[n - 24..n - 8]);
    let crc = crc.finalize();
    packed[n - 28..n - 24].copy_from_slice(&crc.to_le_bytes());
    let err = ArchiveReader::open(Cursor::new(&packed)).err().unwrap();
    assert!(
        err.to_string()
            .starts_with("archive format version 14 is not supported"),
        "{err}"
    );
}

fn decompress(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    archive::decompress(Cursor::new(bytes), &mut out).unwrap();
    out
}
