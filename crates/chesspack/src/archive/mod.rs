//! The `.chpk` archive: whole PGN files, lossless, in blocks of columns, with
//! an index for random access.
//!
//! # What comes back
//!
//! Decompressing gives the *canonical* text of every game that the strict
//! reader understands, and the exact bytes of every other game:
//!
//! * tag pairs in their order, one per line as `[Name "Value"]` (`\` and `"`
//!   escaped), a blank line, then the movetext on one line, then a blank
//!   line (the lichess export layout, without line wrapping);
//! * moves in SAN with `+`/`#` as the position gives them; `N.` before every
//!   white move, `N...` before a black move that starts a line or follows a
//!   comment, glyph or variation (`N. ...` in a game that wrote a black
//!   move's number so, as Crafty does; no numbers in a game that had none);
//!   a game whose moves were all in UCI (`e2e4`, `e7e8q`) has them in UCI;
//!   null moves as `--` (`0000` in UCI);
//! * comments as `{` + their exact bytes + `}`; glyphs as `$n` (`!`, `?`, `!!`,
//!   `??`, `!?`, `?!` become `$1`..`$6`); variations as `(...)`; the result
//!   token where the game had one, spelled as it was (`1-0`, `0-1`,
//!   `1/2-1/2`, `*`, or with an en dash or `½`: `1–0`, `0–1`, `½-½`,
//!   `½–½`);
//! * a result token that started a line of its own after other movetext
//!   still does (`{ comment }\n*`); any other result follows a space;
//! * a game whose lines all end with CR LF is written with CR LF.
//!
//! Layout (spacing, line breaks inside the movetext, mixed line ends, move numbers,
//! the blank lines between games) is all that canonical output changes. The
//! file's own ends come back exactly: a byte order mark and blank lines
//! before the first game, and the whitespace after the last game (a lichess
//! export's single final line feed stays single). A game is stored verbatim
//! (and comes back byte for byte, with the blank lines after it) when it
//! holds anything else: a `;` or `%` comment, an unknown token, an illegal
//! move, an unsupported variant, a bad FEN, text after the result, an
//! unclosed variation, or more than 8 MiB of text. [`canonical`] gives the
//! expected output of a PGN text without a codec.
//!
//! # Format (version 9; versions 1 to 8 still decode)
//!
//! * Header: the magic `CHPK\r\n\x1a\n`, the version byte, the move codec's
//!   name (length byte and bytes), its model hash (u64), from version 6 the
//!   hash of the opening table (u64, `crate::opening`), a CRC-32 of the
//!   header (all integers little-endian).
//! * Blocks: `CPKB`, stored length (u32), number of games (u32), CRC-32 of
//!   the stored bytes (u32), then the stored bytes: the payload (see
//!   [`COLUMNS`]) and, from version 4, a CRC-32 of the text the block
//!   decodes to (u32), which catches a codec or model fault that the CRC of
//!   the stored bytes cannot. Each block decodes on its own.
//! * Index: `CPKI`, block count (u32), per block its offset (u64), stored
//!   length (u32) and games (u32); from version 4 the input's lead (u32
//!   length and bytes: a byte order mark and blank lines before the first
//!   game) and tail (u32 length and bytes: the whitespace after the last
//!   game); then a CRC-32 of the index and, from version 4, of the footer's
//!   two numbers after it.
//! * Footer: the index offset (u64), the game count (u64), `CHPKEND\n`.
//!   From version 4 the game count must equal the index's sum.
//!
//! From version 5 the moves of each game are coded in the game's context
//! ([`GameContext`](crate::model::GameContext): `WhiteElo`, `BlackElo`,
//! `TimeControl`), which the decoder reads from the game's tags, decoded
//! before its moves ([`crate::game::GameCodec::in_context`]).
//! Codecs other than `model` ignore it, as do the `model` weights that
//! wrote earlier versions, so one reader serves every version.
//!
//! From version 6 an `ECO` or `Opening` tag equal to what the game's
//! mainline gives (`OpeningTable::predict`
//! with the table whose hash the header holds) is stored as a one-byte
//! mark, filled in once the moves are decoded.
//!
//! From version 7 the clock readings and evaluations of lichess comments
//! are coded with richer contexts (an evaluation's change seen from the
//! side that moved, a clock by the time left), and `UTCTime`, the Elos and
//! the rating changes of a player's games listed one after the other are
//! stored as steps from the game before (see the `tags` module): a column
//! method bit says which, so blocks of earlier versions decode as before.
//!
//! From version 8 a game whose movetext is its moves, each followed by one
//! lichess clock or evaluation comment, is one event and a pattern byte,
//! with its ply count in the `move-lengths` stream (a new event code, which
//! earlier blocks do not hold), and a lichess game's `Site` URL is a mark
//! and its id a number (a column method bit).
//!
//! From version 9 a game's kind byte holds its layout bits (moves in UCI,
//! `N. ...` numbers, no numbers) above the CR LF bit, a null move is an
//! event that ends its line's moves (the line goes on as a new stream from
//! the position after it), and the other tools' result spellings have
//! event codes of their own.
//!
//! From version 13 every game comes back as the input had it: a parsed
//! game's layout (wrapping, move numbers, glyphs, spacing) is a record in
//! the `layout` column that turns its canonical text into the input's
//! bytes, and a block's text checksum is of those bytes.
//!
//! ```
//! use chesspack::archive::{self, ArchiveReader, Options};
//! use chesspack::game::Index;
//!
//! let pgn = b"[White \"Tal\"]\n\n1.e4 e5 2.Nf3 {good} Nc6 1-0\n\n1. e4 ; a line comment\n";
//! let mut bytes = Vec::new();
//! let report = archive::compress(&pgn[..], &mut bytes, &Index, &Options::default()).unwrap();
//! assert_eq!(report.verbatim.len(), 1);
//!
//! let mut r = ArchiveReader::open(std::io::Cursor::new(bytes)).unwrap();
//! assert_eq!(r.games(), 2);
//! // Each game as the input had it (format 13)...
//! let text = r.game(1).unwrap();
//! assert_eq!(text, b"[White \"Tal\"]\n\n1.e4 e5 2.Nf3 {good} Nc6 1-0\n\n");
//! assert_eq!(r.game(2).unwrap(), b"1. e4 ; a line comment\n");
//! // ...and the canonical layout, for those who want PGN normalised.
//! let canonical = archive::canonical(&pgn[..]).unwrap();
//! assert!(canonical.starts_with(b"[White \"Tal\"]\n\n1. e4 e5 2. Nf3 {good} 2... Nc6 1-0\n\n"));
//! ```

mod block;
mod games;
mod header;
mod index;
mod reader;
mod writer;
#[cfg(any(test, feature = "fuzzing"))]
pub(crate) use block::on_this_thread;
mod chunk;
pub mod pipeline;
pub mod positions;
pub mod rows;
mod tags;
mod text;
pub mod training;

use std::io::{self, Read, Seek, SeekFrom, Write};

#[cfg(feature = "train")]
pub(crate) use block::engine_comment_prior;
use block::trailing_whitespace;
pub use block::{BlockReport, COLUMNS};
pub(crate) use block::{EncodedBlock, encode_block};
pub(crate) use chunk::Blocks;
pub use chunk::{Chunk, ChunkReader};

use crate::game::GameCodec;

use self::{
    games::decode_one,
    header::read_exact_or,
    index::{header_from_index, read_index, scan_blocks},
};
pub use self::{
    games::{
        CONTINUED, GameRecord, GameRow, GameTags, block_openings, block_tags, block_tags_not_given,
        decode_games, decode_records, game_tags,
    },
    header::Header,
    index::BlockEntry,
    reader::{ArchiveReader, Block},
    text::opening_of_text,
};
pub(crate) use self::{
    reader::{Ends, TextWriter},
    writer::ArchiveWriter,
};

/// The first bytes of every archive.
pub(crate) const MAGIC: &[u8; 8] = b"CHPK\r\n\x1a\n";
/// The format version this library writes. It reads this one and every
/// earlier one: version 2 added the repeat marks of the `tag-values`
/// column, which version 1 blocks do not use (a column method bit says so);
/// version 3 the marks of players, ratings and dates, coded move lengths
/// (method bits again) and games of moves alone as one event; version 4
/// the checksum of each block's decoded text, the input's lead and tail in
/// the index, a checksum over the footer's numbers, and results on a line
/// of their own; version 5 codes each game's moves in its context (its
/// players' ratings and time control, read from its tags); version 6
/// stores `ECO` and `Opening` tags that the moves give as a mark
/// (`crate::opening`) and the hash of the opening table in the header;
/// version 7 codes clocks and evaluations with richer contexts and times,
/// Elos and rating changes as steps; version 8 stores a game of moves each
/// followed by one lichess clock or evaluation comment as one event, its
/// ply count beside its moves' length, and a lichess game's URL as a number;
/// version 9 reads other tools' PGN: null moves (`--`), moves in UCI,
/// `5. ...` and unnumbered movetext (layout bits in a game's kind), and
/// results spelled with an en dash or `½`; version 10 stores a game text
/// longer than 8 MiB as one game in pieces that may span blocks (piece
/// kinds, a method bit on a block whose last game goes on, and blocks that
/// count only the games starting in them; see [`CONTINUED`]); version 11
/// stores the opening a game's moves give (its label in the opening table,
/// coded with a prior of how often each is played) with its tags, and
/// codes the moves knowing it, so that `ECO` and `Opening` need no moves
/// (the header's opening hash covers the table and the prior); version 12
/// codes each label with the prior of the game's rating band (the
/// `WhiteElo` and `BlackElo` tags before it), and the header's opening
/// hash covers those priors; version 13 gives every input back byte for
/// byte (a layout per game, checksums of the input's bytes, a copy of the
/// header in the index); version 14 codes engine comments as templates and
/// fields (numbers as steps, lines of moves as moves ranked by the `fast`
/// model, whose weights the header's table hash covers too) and may store
/// a column with xz where that is smaller than zstd.
pub const FORMAT_VERSION: u8 = 15;
/// The first version with the opening table's hash in the header.
const OPENINGS_VERSION: u8 = 6;
/// The first version whose header's opening hash is that of the table and
/// the label prior together.
const LABELS_VERSION: u8 = 11;
/// The first version whose header's opening hash is that of the table and
/// the label priors by rating band together.
const BAND_LABELS_VERSION: u8 = 12;
/// The first version with engine comments' fields, whose lines' moves are
/// ranked by the `fast` model: the header's table hash covers its weights.
const ENGINE_FIELDS_VERSION: u8 = 14;

/// The first version that names openings by lichess's table: the header's
/// table hash is that of lichess's table and its priors by rating band,
/// the `fast` weights and the engine fields' prior together.
const LICHESS_OPENINGS_VERSION: u8 = 15;

/// The opening hash a header of format `version` holds for this library's
/// opening tables (the learned one before [`LICHESS_OPENINGS_VERSION`],
/// and from [`LABELS_VERSION`] its label prior, from
/// [`BAND_LABELS_VERSION`] its priors by rating band).
fn openings_hash(version: u8) -> u64 {
    let learned = crate::opening::OpeningTable::learned();
    let table = learned.hash();
    if version >= LICHESS_OPENINGS_VERSION {
        let lichess = crate::opening::OpeningTable::lichess();
        let tables = lichess.band_priors().map_or(lichess.hash(), |p| p.hash());
        with_engine_fields(tables)
    } else if version >= ENGINE_FIELDS_VERSION {
        with_engine_fields(openings_hash(BAND_LABELS_VERSION))
    } else if version >= BAND_LABELS_VERSION {
        learned.band_priors().map_or(table, |p| p.hash())
    } else if version >= LABELS_VERSION {
        learned.label_prior().map_or(table, |p| p.hash())
    } else {
        table
    }
}

/// The hash of the opening tables `tables` with the `fast` weights, which
/// rank the lines of engine comments, and the engine fields' prior
/// (format 14).
fn with_engine_fields(tables: u64) -> u64 {
    let fast = crate::model::fast::FastWeights::embedded().hash();
    let prior = block::fields_prior_hash();
    let h = crate::hash::fnv1a_from(tables, &fast.to_le_bytes());
    crate::hash::fnv1a_from(h, &prior.to_le_bytes())
}
/// The first version with text checksums, file ends and a checked footer.
const CHECKED_VERSION: u8 = 4;
/// The first version with a copy of the header in the index.
const HEADER_COPY_VERSION: u8 = 13;
const BLOCK_MAGIC: &[u8; 4] = b"CPKB";
const INDEX_MAGIC: &[u8; 4] = b"CPKI";
const FOOTER_MAGIC: &[u8; 8] = b"CHPKEND\n";
const FOOTER_LEN: u64 = 24;
const BLOCK_HEADER_LEN: u64 = 16;
/// The largest block payload a reader accepts.
const MAX_PAYLOAD: u32 = 1 << 30;

/// What can go wrong with an archive.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ArchiveError {
    /// Reading or writing failed (the message is the I/O error's own).
    #[error(transparent)]
    Io(#[from] io::Error),
    /// The input does not start with the archive magic.
    #[error("not a chesspack archive")]
    NotAnArchive,
    /// The header is damaged.
    #[error("archive header is damaged: {0}")]
    Header(String),
    /// A version this library does not read.
    #[error(
        "archive format version {0} is not supported (this chesspack reads versions 1 to {FORMAT_VERSION})"
    )]
    UnsupportedVersion(u8),
    /// The archive's move codec or model is not the one given.
    #[error("archive needs move codec {name:?} with model {hash:016x}{have}")]
    CodecMismatch {
        /// The codec named in the archive.
        name: String,
        /// The model hash in the archive.
        hash: u64,
        /// What this library has instead.
        have: String,
    },
    /// The archive's opening table is not the one this library has.
    #[error("archive needs opening table {hash:016x}; this chesspack has {have:016x}")]
    OpeningTableMismatch {
        /// The table hash in the archive.
        hash: u64,
        /// The hash of this library's table.
        have: u64,
    },
    /// A block fails its checksum or does not decode.
    #[error("block {block}: {reason}")]
    Damaged {
        /// 1-based block number.
        block: u64,
        /// What is wrong, in lower case.
        reason: String,
    },
    /// The index or footer is missing or damaged (a truncated file).
    #[error("archive index is missing or damaged ({0}); the file may be truncated")]
    Index(String),
    /// A progress callback stopped the run ([`pipeline`]).
    #[error("stopped")]
    Stopped,
    /// A game number outside the archive.
    #[error("game {number} is not in the archive (it holds games 1 to {games})")]
    NoSuchGame {
        /// The game asked for.
        number: u64,
        /// Games in the archive.
        games: u64,
    },
}

/// How [`compress`] cuts its input into blocks and compresses text.
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub struct Options {
    /// The most games in a block.
    pub block_games: usize,
    /// About the most PGN text in a block, in bytes.
    pub block_bytes: usize,
    /// zstd level of the text columns.
    pub level: i32,
    /// Which games keep their opening in the archive (formats 11 and 12)
    /// rather than have it worked out from their first moves when read.
    pub openings: Openings,
}

/// Which games of an archive keep the opening their moves give (its label
/// in the opening table, coded with the tags, the moves coded knowing it:
/// formats 11 and 12), so that reading their `ECO` and `Opening` tags
/// decodes no moves. Only codecs that aim at an opening (`model`, `fast`)
/// keep any.
///
/// ```
/// use chesspack::archive::{self, Openings, Options};
///
/// // A master game: an `ECO` tag alone.
/// let pgn = "[ECO \"C20\"]\n[Result \"*\"]\n\n1. e4 e5 *\n";
/// let codec = chesspack::game::ModelCodec::new();
/// let mut options = Options::default();
/// assert_eq!(options.openings, Openings::Every);
/// let mut kept = Vec::new();
/// archive::compress(pgn.as_bytes(), &mut kept, &codec, &options).unwrap();
/// options.openings = Openings::Named;
/// let mut derived = Vec::new();
/// archive::compress(pgn.as_bytes(), &mut derived, &codec, &options).unwrap();
/// assert_ne!(kept, derived);
/// for packed in [kept, derived] {
///     let mut text = Vec::new();
///     archive::decompress(std::io::Cursor::new(packed), &mut text).unwrap();
///     assert_eq!(text, pgn.as_bytes());
/// }
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Openings {
    /// Every game whose `ECO` or `Opening` tag is the one its moves give.
    /// A game with an `ECO` tag alone (master games) costs ~2.5 bits more
    /// (0.7% of an archive of master games), and listing its `ECO` is ~10
    /// times faster.
    #[default]
    Every,
    /// Only games whose `Opening` tag is the one their moves give (lichess
    /// exports): an `ECO` tag alone is worked out from the game's first
    /// moves when read. The smallest archives.
    Named,
}

impl Default for Options {
    /// 4096 games or 4 MiB of text a block, zstd level 15, every game's
    /// opening kept ([`Openings::Every`]). On 30 MB of
    /// master games, level 17 spends 10% more instructions compressing (the
    /// whole archive, `index` codec), and its archives of the whole master
    /// and lichess files (`model`) are 0.16% smaller; level 19 takes 12–19%
    /// longer than 17 again.
    fn default() -> Options {
        Options {
            block_games: 4096,
            block_bytes: 4 << 20,
            level: 15,
            openings: Openings::default(),
        }
    }
}

/// Compresses PGN text into an archive with one worker thread (see
/// [`pipeline::Pipeline`] for more, progress and reports), returning the
/// summed block reports.
///
/// # Errors
///
/// An I/O error of the input or output.
///
/// ```
/// use chesspack::archive::{self, Options};
///
/// let pgn = "[Result \"1-0\"]\n\n1. f3 e5 2. g4 Qh4# 0-1\n";
/// let mut out = Vec::new();
/// let report = archive::compress(pgn.as_bytes(), &mut out, &chesspack::game::Radix, &Options::default()).unwrap();
/// assert_eq!((report.games, report.verbatim.len()), (1, 0));
/// let mut text = Vec::new();
/// archive::decompress(std::io::Cursor::new(out), &mut text).unwrap();
/// assert_eq!(text, pgn.as_bytes());
/// ```
pub fn compress(
    input: impl io::BufRead,
    output: impl Write,
    codec: &dyn GameCodec,
    options: &Options,
) -> Result<BlockReport, ArchiveError> {
    pipeline::Pipeline::new()
        .threads(1)
        .compress(input, output, codec, options, &mut |_| {
            std::ops::ControlFlow::Continue(())
        })
}

/// Decompresses a whole archive with one worker thread, stopping at the
/// first damaged block; returns the number of games.
///
/// # Errors
///
/// Any [`ArchiveError`]; a missing index is [`ArchiveError::Index`].
pub fn decompress(input: impl Read + Seek, output: impl Write) -> Result<u64, ArchiveError> {
    let mut r = ArchiveReader::open(input)?;
    let report = pipeline::Pipeline::new()
        .threads(1)
        .decompress(&mut r, output, &mut |_| std::ops::ControlFlow::Continue(()))?;
    Ok(report.games)
}

/// The canonical text of a PGN input: what decompressing its archive gives.
///
/// # Errors
///
/// An I/O error of `input`.
pub fn canonical(input: impl io::BufRead) -> io::Result<Vec<u8>> {
    let mut games = Vec::new();
    let mut ends = Ends::default();
    let mut chunks = ChunkReader::new(input);
    for chunk in chunks.by_ref() {
        let chunk = chunk?;
        if chunk.number == 1 {
            ends.lead.clone_from(&chunk.lead);
        }
        let end = chunk.bytes.len() - trailing_whitespace(&chunk.bytes);
        ends.tail = chunk.bytes[end..].to_vec();
        games.extend_from_slice(&canonical_game(&chunk));
    }
    if games.is_empty() {
        ends.lead = chunks.lead().to_vec();
    }
    let mut out = TextWriter::new(Vec::new(), Some(ends));
    out.write_games(&games)?;
    out.finish()
}

/// The text of one game as an archive gives it back on its own
/// ([`ArchiveReader::game`]): canonical, or the chunk's bytes when the game
/// is stored verbatim (by any codec: a game that a codec cannot code, which
/// `encode_block` also stores verbatim, is not foreseen here).
///
/// ```
/// use chesspack::archive::{ChunkReader, canonical_game};
///
/// let chunk = ChunkReader::new(&b"1.e4  e5\n*\n"[..]).next().unwrap().unwrap();
/// assert_eq!(canonical_game(&chunk), b"1. e4 e5\n*\n\n");
/// ```
pub fn canonical_game(chunk: &Chunk) -> Vec<u8> {
    match (!chunk.cut).then(|| text::parse(&chunk.bytes)) {
        Some(Ok(game)) if !game.tags.iter().any(|(_, v)| v.contains(&0)) => {
            let mut out = Vec::new();
            text::write(&game, &mut out);
            if block::is_crlf(&chunk.bytes) {
                out = block::to_crlf(&out);
            }
            out
        }
        _ => chunk.bytes.clone(),
    }
}

/// The examples of crate-private items, run as unit tests.
#[cfg(test)]
mod examples {
    #[test]
    fn example_textwriter() {
        use crate::archive::{Ends, TextWriter};

        let ends = Ends {
            lead: b"\xef\xbb\xbf".to_vec(),
            tail: b"\n".to_vec(),
        };
        let mut w = TextWriter::new(Vec::new(), Some(ends));
        w.write_games(b"1. e4 *\n\n").unwrap();
        w.write_games(b"1. d4 *\n\n").unwrap();
        assert_eq!(w.finish().unwrap(), b"\xef\xbb\xbf1. e4 *\n\n1. d4 *\n");
    }
}
