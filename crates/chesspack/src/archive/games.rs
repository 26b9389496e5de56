//! A block's games out of its payload: as text, as records (tags, moves,
//! clocks) or as tags alone.

use super::*;

/// The index in its block that the pieces opening a block come with: they
/// go on with the text of the last game of the block before.
///
/// A game text longer than 8 MiB (a file with no blank lines, a game of
/// millions of moves) is stored verbatim in pieces, which may span blocks.
/// Blocks count and number the games that start in them; a
/// block's first pieces belong to the game that its predecessor ends with
/// ([`ArchiveReader::rest_of_game`] gives the rest of it).
pub const CONTINUED: usize = usize::MAX;

/// Decodes the games of `block` for which `want` is true, giving their text
/// (canonical or verbatim) to `sink` with their index in the block. When
/// every game is wanted, their text is checked against the block's text
/// checksum before the call returns.
///
/// A game stored in pieces (longer than 8 MiB) comes in several calls with
/// the same index, which together give its text; the pieces that open the
/// block come with the index [`CONTINUED`] (when `want(CONTINUED)`). So the
/// texts given for every index are the block's text, in order. Returns the
/// number of games that start in the block.
///
/// # Errors
///
/// [`ArchiveError::Damaged`] when the payload does not decode, or decodes
/// to text that does not match its checksum (a codec or model fault, or
/// damage that the checksum of the stored bytes missed).
pub fn decode_games(
    codec: &dyn GameCodec,
    block: &Block,
    want: &dyn Fn(usize) -> bool,
    sink: &mut dyn FnMut(usize, Vec<u8>),
) -> Result<usize, ArchiveError> {
    let damaged = |reason| block.damaged(reason);
    let all = std::cell::Cell::new(true);
    let want = |g| {
        if want(g) {
            block::Want::Text
        } else {
            all.set(false);
            block::Want::Skip
        }
    };
    let mut crc = crc32fast::Hasher::new();
    let games = block::decode_block(codec, &block.payload, &want, &mut |g, d| {
        if let block::Decoded::Text(t) | block::Decoded::Piece(t) = d {
            crc.update(&t);
            sink(g, t);
        }
    })
    .map_err(damaged)?;
    if let Some(expected) = block.text_crc
        && all.get()
        && crc.finalize() != expected
    {
        return Err(damaged(
            "decoded text does not match its checksum (a codec or model fault, or damage)".into(),
        ));
    }
    Ok(games)
}

/// A game's tags, for listing ([`block_tags`]).
///
/// ```
/// use chesspack::archive::{self, ArchiveReader, Options};
///
/// // The second game has a move that is not legal: it is stored verbatim.
/// let pgn = "[White \"Tal, M\"]\n\n1. e4 *\n\n[White \"A \\\"b\\\"\"] [Black \"y\"]\n\n1. Ke3 *\n";
/// let mut packed = Vec::new();
/// archive::compress(pgn.as_bytes(), &mut packed, &chesspack::game::Index, &Options::default()).unwrap();
/// let mut r = ArchiveReader::open(std::io::Cursor::new(packed)).unwrap();
/// let block = r.read_block(0).unwrap();
/// let tags = archive::block_tags(r.codec(), &block).unwrap();
/// assert_eq!(tags[0].get("White").as_deref(), Some("Tal, M"));
/// assert!(tags[0].verbatim.is_none());
/// assert_eq!(tags[1].get("White").as_deref(), Some("A \"b\""));
/// assert_eq!(tags[1].get("Black").as_deref(), Some("y"));
/// assert!(tags[1].verbatim.as_ref().is_some_and(|t| t.ends_with(b"Ke3 *\n")));
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct GameTags {
    /// The tag pairs in order: as stored, or as a verbatim game's text
    /// gives them read leniently ([`crate::pgn::read_written`]).
    pub tags: Vec<(Vec<u8>, Vec<u8>)>,
    /// The text of a game stored verbatim; `None` for a game stored in
    /// columns.
    pub verbatim: Option<Vec<u8>>,
}

impl GameTags {
    /// The value of the tag `name`, as text ([`crate::pgn::text`]).
    pub fn get(&self, name: &str) -> Option<std::borrow::Cow<'_, str>> {
        self.tags
            .iter()
            .find(|(k, _)| k == name.as_bytes())
            .map(|(_, v)| crate::pgn::text(v))
    }
}

/// The tags of every game of a block, without checking the block's text.
/// Moves are decoded only where the archive stores an `ECO` or `Opening`
/// tag as the value the moves give: `codec` is the archive's
/// ([`ArchiveReader::codec`]).
///
/// # Errors
///
/// [`ArchiveError::Damaged`] when the payload does not decode.
pub fn block_tags(codec: &dyn GameCodec, block: &Block) -> Result<Vec<GameTags>, ArchiveError> {
    tags_of(codec, block, block::Want::Tags)
}

/// The opening of every game of a block as `table` names it
/// ([`OpeningTable::classify`](crate::opening::OpeningTable::classify)), in
/// order, `None` for a game it names none of (a game from a FEN, a game
/// stored verbatim that does not parse). With lichess's table
/// ([`OpeningTable::lichess`](crate::opening::OpeningTable::lichess)), a
/// game whose block stores its opening's label and ply (its `Opening` tag
/// is lichess's) decodes no moves, and the others decode their mainline's
/// first plies, only as far as a move can still change the answer; with
/// another table, every game's mainline is decoded. `codec` is the
/// archive's ([`ArchiveReader::codec`]).
///
/// ```
/// use chesspack::{archive::{self, ArchiveReader, Options}, opening::OpeningTable};
///
/// let pgn = "[Opening \"Italian Game\"]\n[ECO \"C50\"]\n\n1. e4 e5 2. Nf3 Nc6 3. Bc4 *\n\n1. d4 d5 *\n";
/// let mut packed = Vec::new();
/// archive::compress(pgn.as_bytes(), &mut packed, &chesspack::game::ModelCodec::fast(), &Options::default()).unwrap();
/// let mut r = ArchiveReader::open(std::io::Cursor::new(packed)).unwrap();
/// let block = r.read_block(0).unwrap();
/// let openings = archive::block_openings(r.codec(), &block, OpeningTable::lichess()).unwrap();
/// assert_eq!(openings[0].map(|o| (o.eco, o.name, o.ply)), Some(("C50", "Italian Game", 5)));
/// assert_eq!(openings[1].map(|o| (o.eco, o.ply)), Some(("D00", 2)));
/// // A table of one's own.
/// let mine = OpeningTable::from_tsv("eco\tname\tpgn\nA40\tQueen's Pawn\t1. d4\n").unwrap();
/// let openings = archive::block_openings(r.codec(), &block, &mine).unwrap();
/// assert_eq!(openings[0], None);
/// assert_eq!(openings[1].map(|o| (o.name, o.ply)), Some(("Queen's Pawn", 1)));
/// ```
///
/// # Errors
///
/// [`ArchiveError::Damaged`] when the payload does not decode.
pub fn block_openings<'t>(
    codec: &dyn GameCodec,
    block: &Block,
    table: &'t crate::opening::OpeningTable,
) -> Result<Vec<Option<crate::opening::Named<'t>>>, ArchiveError> {
    if std::ptr::eq(table, crate::opening::OpeningTable::lichess()) {
        return lichess_openings(codec, block);
    }
    let mut out = Vec::new();
    decode_records(codec, block, &|_| true, &mut |g, row| {
        if g != CONTINUED {
            out.push(match row {
                GameRow::Record(r) => table.classify(&r.start, &r.moves),
                GameRow::Text(text) => table.classify_text(&text),
            });
        }
    })?;
    Ok(out)
}

/// [`block_openings`] by lichess's table, read where the block stores them.
fn lichess_openings(
    codec: &dyn GameCodec,
    block: &Block,
) -> Result<Vec<Option<crate::opening::Named<'static>>>, ArchiveError> {
    let damaged = |reason| block.damaged(reason);
    // The stored openings first, without the clocks and evaluations that
    // moves are decoded in the context of; then the games that need their
    // moves, if any, in a second pass.
    let mut out: Vec<Option<Option<crate::opening::Named<'static>>>> = Vec::new();
    block::decode_block(
        codec,
        &block.payload,
        &|_| block::Want::OpeningStored,
        &mut |_, d| match d {
            block::Decoded::Opening(o) => out.push(Some(o)),
            block::Decoded::NeedsMoves => out.push(None),
            _ => {}
        },
    )
    .map_err(damaged)?;
    if let Some(last) = out.iter().rposition(Option::is_none) {
        let needs: Vec<bool> = out.iter().map(Option::is_none).collect();
        let mut found = Vec::new();
        block::decode_block_with(
            codec,
            &block.payload,
            &only(
                &|g| needs.get(g).copied().unwrap_or(false),
                block::Want::Opening,
            ),
            None,
            &mut |g, d| {
                if let block::Decoded::Opening(o) = d {
                    found.push((g, o));
                }
            },
            last,
        )
        .map_err(damaged)?;
        for (g, o) in found {
            if let Some(slot) = out.get_mut(g) {
                *slot = Some(o);
            }
        }
    }
    out.into_iter()
        .map(|o| o.ok_or_else(|| damaged("a game's opening is missing".into())))
        .collect()
}

/// `w` for the games that `want` asks for, the others skipped.
fn only(want: &dyn Fn(usize) -> bool, w: block::Want) -> impl Fn(usize) -> block::Want + '_ {
    move |g| if want(g) { w } else { block::Want::Skip }
}

/// A game of [`decode_records`]: its record, or its text where it has none.
// Nearly every row is a record: boxing it would cost an allocation a game
// to make the rare text's row smaller.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug)]
pub enum GameRow {
    /// A game stored in columns: its tags, start, moves and clocks.
    Record(GameRecord),
    /// A game stored verbatim, or whose mainline has a null move: its exact
    /// text, to read leniently ([`crate::pgn::read_written`]); for a game
    /// that goes on in the next block, the text in this block (see
    /// [`ArchiveReader::rest_of_game`]).
    Text(Vec<u8>),
}

/// The records of the games of a block for which `want` is true, with
/// their index in the block, in order: tags, mainline moves and clocks
/// decoded straight into data, no text written and read again. The games'
/// moves decode on the current rayon pool. The block's text checksum is not
/// checked (there is no text).
///
/// # Errors
///
/// [`ArchiveError::Damaged`] when the payload does not decode.
///
/// ```
/// use chesspack::archive::{self, ArchiveReader, Options};
///
/// let pgn = "[White \"a\"]\n\n1. e4 { [%clk 0:03:00] } e5 { [%clk 0:02:59] } *\n";
/// let mut packed = Vec::new();
/// archive::compress(pgn.as_bytes(), &mut packed, &chesspack::game::Index, &Options::default()).unwrap();
/// let mut r = ArchiveReader::open(std::io::Cursor::new(packed)).unwrap();
/// let block = r.read_block(0).unwrap();
/// let mut rows = Vec::new();
/// archive::decode_records(r.codec(), &block, &|_| true, &mut |_, row| rows.push(row)).unwrap();
/// let archive::GameRow::Record(game) = &rows[0] else { panic!("a record") };
/// assert_eq!((game.moves.len(), game.clocks.clone()), (2, vec![Some(180_000), Some(179_000)]));
/// ```
pub fn decode_records(
    codec: &dyn GameCodec,
    block: &Block,
    want: &dyn Fn(usize) -> bool,
    sink: &mut dyn FnMut(usize, GameRow),
) -> Result<usize, ArchiveError> {
    decode_records_until(codec, block, want, sink, usize::MAX)
}

/// [`decode_records`] that stops after game `last` of the block (0-based).
pub(crate) fn decode_records_until(
    codec: &dyn GameCodec,
    block: &Block,
    want: &dyn Fn(usize) -> bool,
    sink: &mut dyn FnMut(usize, GameRow),
    until: usize,
) -> Result<usize, ArchiveError> {
    let want = only(want, block::Want::Record);
    // A verbatim game's row waits for the pieces that go on with it.
    let mut last: Option<(usize, GameRow)> = None;
    let decoded = block::decode_block_with(
        codec,
        &block.payload,
        &want,
        None,
        &mut |g, d| match d {
            block::Decoded::Record(r) => {
                if let Some((g, r)) = last.replace((g, r)) {
                    sink(g, r);
                }
            }
            block::Decoded::Piece(t) => {
                if let Some((owner, GameRow::Text(text))) = &mut last
                    && *owner == g
                {
                    text.extend_from_slice(&t);
                }
            }
            _ => {}
        },
        until,
    );
    if let Some((g, r)) = last {
        sink(g, r);
    }
    decoded.map_err(|reason| block.damaged(reason))
}

/// The start and mainline (up to its first null move) of each game of
/// `block` for which `want` is true, up to game `last` of the block
/// (0-based), each decoded only as far as `keep` lets it go and one move
/// more: `sink(index in block, None)` for a game stored as text that has
/// no record. The games decode on the current rayon pool.
pub(crate) fn decode_mainlines_until(
    codec: &dyn GameCodec,
    block: &Block,
    want: &dyn Fn(usize) -> bool,
    keep: &block::Keep<'_>,
    sink: &mut dyn FnMut(usize, Option<(shakmaty::Chess, Vec<shakmaty::Move>)>),
    last: usize,
) -> Result<usize, ArchiveError> {
    let wants = only(want, block::Want::Mainline);
    block::decode_block_with(
        codec,
        &block.payload,
        &wants,
        Some(keep),
        &mut |g, d| match d {
            block::Decoded::Mainline(start, moves) => sink(g, Some((start, moves))),
            block::Decoded::Record(GameRow::Record(r)) => sink(g, Some((r.start, r.moves))),
            block::Decoded::Record(GameRow::Text(_)) => sink(g, None),
            _ => {}
        },
        last,
    )
    .map_err(|reason| block.damaged(reason))
}

/// Decodes game `local` of `block` as `want` asks, giving `sink` what it
/// decodes to (and the pieces that go on with it); the games after it are
/// not read, those before it skipped.
pub(super) fn decode_one(
    codec: &dyn GameCodec,
    block: &Block,
    local: usize,
    want: block::Want,
    sink: &mut dyn FnMut(block::Decoded),
) -> Result<(), ArchiveError> {
    let wants = |g| if g == local { want } else { block::Want::Skip };
    block::decode_block_with(
        codec,
        &block.payload,
        &wants,
        None,
        &mut |g, d| {
            if g == local {
                sink(d);
            }
        },
        local,
    )
    .map(|_| ())
    .map_err(|reason| block.damaged(reason))
}

/// The tags of every game of a block without decoding moves: `ECO` and
/// `Opening` tags that the archive stores as the value the moves give are
/// left out (see [`block_tags`]).
///
/// # Errors
///
/// [`ArchiveError::Damaged`] when the payload does not decode.
pub fn block_tags_not_given(block: &Block) -> Result<Vec<GameTags>, ArchiveError> {
    // No moves are decoded: any codec will do.
    tags_of(&crate::game::Index, block, block::Want::TagsNotGiven)
}

pub(super) fn tags_of(
    codec: &dyn GameCodec,
    block: &Block,
    want: block::Want,
) -> Result<Vec<GameTags>, ArchiveError> {
    let mut out = Vec::new();
    block::decode_block(codec, &block.payload, &|_| want, &mut |_, d| {
        if let block::Decoded::Tags(t) = d {
            out.push(t);
        }
    })
    .map_err(|reason| block.damaged(reason))?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use shakmaty::{Chess, Position};

    use super::*;

    /// `pgn` compressed with the default codec, and its first block.
    fn first_block(pgn: &str) -> (ArchiveReader<std::io::Cursor<Vec<u8>>>, Block) {
        let mut packed = Vec::new();
        compress(
            pgn.as_bytes(),
            &mut packed,
            &crate::game::ModelCodec::new(),
            &Options::default(),
        )
        .unwrap();
        let mut r = ArchiveReader::open(std::io::Cursor::new(packed)).unwrap();
        let block = r.read_block(0).unwrap();
        (r, block)
    }

    /// A mainline decodes as far as `keep` lets it and one move more, from
    /// the game's own start (`keep` may stop one game and not another); a
    /// game stored as text without a record gives none; the games not
    /// wanted are skipped.
    #[test]
    fn a_mainline_stops_one_move_after_keep_says_no() {
        let pgn = "[White \"a\"]\n\n1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 4. Ba4 Nf6 1-0\n\n\
                   [FEN \"4k3/8/8/8/8/8/4P3/4K3 w - - 0 1\"]\n[SetUp \"1\"]\n\n1. e3 Kd7 2. e4 Ke6 *\n\n\
                   this is no game\n\n\
                   [White \"b\"]\n\n1. d4 d5 2. c4 e6 *\n";
        let (r, block) = first_block(pgn);
        let ply = |p: &Chess| (p.fullmoves().get() - 1) * 2 + u32::from(p.turn().is_black());
        for (stop_at, first_only, lengths) in [
            (u32::MAX, false, [Some(8), Some(4), None]),
            (3, false, [Some(4), Some(4), None]),
            (0, false, [Some(1), Some(1), None]),
            (1, true, [Some(2), Some(4), None]),
        ] {
            let mut got = Vec::new();
            decode_mainlines_until(
                r.codec(),
                &block,
                &|g| g != 3,
                &|g, p| (first_only && g != 0) || ply(p) < stop_at,
                &mut |g, m| got.push((g, m)),
                usize::MAX,
            )
            .unwrap();
            let games: Vec<usize> = got.iter().map(|(g, _)| *g).collect();
            assert_eq!(games, [0, 1, 2]);
            let found: Vec<_> = got
                .iter()
                .map(|(_, m)| m.as_ref().map(|m| m.1.len()))
                .collect();
            assert_eq!(found, lengths, "stopping at ply {stop_at}");
            let (start, moves) = got[1].1.clone().unwrap();
            assert_eq!(start.board().occupied().count(), 3);
            assert_eq!(moves[0].to_string(), "e2-e3");
        }
    }

    /// A game's mainline decoded alone, the tags of the games before it
    /// (and its own) that its moves are not decoded with skimmed, is the
    /// mainline of its record; with a game whose text is wanted after it,
    /// that text is the game's as well (lichess games: sites, dates,
    /// times, rating changes and clocks).
    #[test]
    fn a_mainline_after_skimmed_tags_is_the_records() {
        mainlines_are_the_records(include_str!("../../../../samples/lichess-sample.pgn"));
    }

    /// The same with evaluations in every other game's comments: a pass
    /// that wants mainlines alone leaves their stream unread and writes no
    /// text of them, and one that wants a text after reads them all (issue
    /// 68).
    #[test]
    fn regression_issue_68_mainlines_past_evaluations_are_the_records() {
        let sample = include_str!("../../../../samples/lichess-sample.pgn");
        let (mut with_evals, mut n, mut game) = (String::new(), 0i64, 0);
        for (i, part) in sample.split("{ [%clk ").enumerate() {
            game += part.matches("[Event ").count();
            if i > 0 {
                n += 1;
                with_evals.push_str(if game % 2 == 0 {
                    "{ [%clk "
                } else {
                    "{ [%eval "
                });
                if game % 2 == 1 {
                    with_evals.push_str(&format!("{}.{}] [%clk ", (n * 37) % 9 - 4, n % 10));
                }
            }
            with_evals.push_str(part);
        }
        assert!(with_evals.matches("[%eval ").count() > 500);
        mainlines_are_the_records(&with_evals);
    }

    fn mainlines_are_the_records(pgn: &str) {
        let (r, block) = first_block(pgn);
        let mut records = Vec::new();
        let mut texts = Vec::new();
        block::decode_block(
            r.codec(),
            &block.payload,
            &|_| block::Want::Record,
            &mut |_, d| match d {
                block::Decoded::Record(GameRow::Record(g)) => {
                    records.push(Some((g.start, g.moves)))
                }
                // A variant's game (King of the Hill) is its text.
                block::Decoded::Record(GameRow::Text(_)) => records.push(None),
                _ => panic!("a game without a record"),
            },
        )
        .unwrap();
        block::decode_block(
            r.codec(),
            &block.payload,
            &|_| block::Want::Text,
            &mut |_, d| {
                if let block::Decoded::Text(t) = d {
                    texts.push(t);
                }
            },
        )
        .unwrap();
        assert_eq!(records.len(), 37);
        for k in 0..records.len() {
            let mut got = Vec::new();
            decode_mainlines_until(
                r.codec(),
                &block,
                &|g| g == k,
                &|_, _| true,
                &mut |_, m| got.push(m),
                k,
            )
            .unwrap();
            assert_eq!(got, [records[k].clone()], "game {k}");
            // A game's text wanted after the mainline: its tags are read whole.
            let (text_at, mut text) = ((k + 5) % records.len(), None);
            let mut mainline = None;
            block::decode_block_with(
                r.codec(),
                &block.payload,
                &|g| match g {
                    g if g == k => block::Want::Mainline,
                    g if g == text_at => block::Want::Text,
                    _ => block::Want::Skip,
                },
                None,
                &mut |g, d| match d {
                    block::Decoded::Text(t) if g == text_at => text = Some(t),
                    block::Decoded::Mainline(start, moves) if g == k => {
                        mainline = Some((start, moves));
                    }
                    block::Decoded::Record(GameRow::Text(_)) if g == k => {}
                    _ => panic!("game {g} not wanted so"),
                },
                usize::MAX,
            )
            .unwrap();
            assert_eq!(text.as_ref(), Some(&texts[text_at]), "game {text_at}");
            assert_eq!(mainline, records[k], "game {k}");
        }
    }
}
