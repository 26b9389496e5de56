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
//! holds anything else: a `;` or `%` comment in its movetext, an unknown
//! token, an illegal move, an unsupported variant, a bad FEN, moves or
//! other text after the result, an unclosed variation, or more than 8 MiB
//! of text. Comments after the result (`; { Game Nr. 7 }`) end the game,
//! and a tag value with quotes nobody escaped runs to its line's last
//! `"]`, as python-chess reads them; the game's layout keeps their bytes.
//! [`canonical`] gives the expected output of a PGN text without a codec.
//!
//! # Format
//!
//! One format, [`FORMAT_VERSION`]: until the first release a change of the
//! format replaces it, and an archive of any other version is refused with
//! [`ArchiveError::UnsupportedVersion`], which names its version.
//! `docs/format.md` describes it byte by byte:
//!
//! A header (magic, version, the codec and the hashes of the model and
//! tables it needs), blocks that each decode on their own (a CRC-32 of
//! their bytes and one of the text they give), an index of the blocks
//! (with the input's lead and tail and a copy of the header), an optional
//! search section and a footer.
//!
//! Each game's moves are coded in its context
//! ([`GameContext`](crate::model::GameContext): ratings, time control,
//! clocks, read from its tags and comments, decoded before its moves), and
//! knowing its opening, whose label (in lichess's table) is stored with
//! its tags, so that `ECO` and `Opening` need no moves. A game's layout
//! (wrapping, move numbers, glyphs, spacing) is a record in the `layout`
//! column that turns its canonical text into the input's bytes; engine
//! comments are templates and fields.
//!
//! ```
//! use chesspack::archive::{self, ArchiveReader, Options};
//! use chesspack::game::Index;
//!
//! let pgn = b"[White \"Tal\"]\n\n1.e4 e5 2.Nf3 {good} Nc6 1-0\n\n1. e4 e5 2. Ke3 *\n";
//! let mut bytes = Vec::new();
//! let report = archive::compress(&pgn[..], &mut bytes, &Index, &Options::default()).unwrap();
//! assert_eq!(report.verbatim.len(), 1); // an illegal move: kept as text
//!
//! let mut r = ArchiveReader::open(std::io::Cursor::new(bytes)).unwrap();
//! assert_eq!(r.games(), 2);
//! // Each game as the input had it...
//! let text = r.game(1).unwrap();
//! assert_eq!(text, b"[White \"Tal\"]\n\n1.e4 e5 2.Nf3 {good} Nc6 1-0\n\n");
//! assert_eq!(r.game(2).unwrap(), b"1. e4 e5 2. Ke3 *\n");
//! // ...and the canonical layout, for those who want PGN normalised.
//! let canonical = archive::canonical(&pgn[..]).unwrap();
//! assert!(canonical.starts_with(b"[White \"Tal\"]\n\n1. e4 e5 2. Nf3 {good} 2... Nc6 1-0\n\n"));
//! ```

mod block;
mod games;
mod header;
mod index;
pub mod pipeline;
mod reader;
mod tags;
mod writer;

use std::io::{self, Read, Seek, SeekFrom, Write};

#[cfg(feature = "train")]
pub(crate) use block::engine_comment_prior;
use block::trailing_whitespace;
pub use block::{BlockReport, COLUMNS};
pub(crate) use block::{EncodedBlock, compress_xz, encode_block};

use crate::{
    game::GameCodec,
    pgn::{Chunk, ChunkReader, strict},
};

use self::{
    games::decode_one,
    header::read_exact_or,
    index::{header_from_index, read_index, scan_blocks},
};
pub use self::{
    games::{
        CONTINUED, GameRow, GameTags, block_openings, block_tags, block_tags_not_given,
        decode_games, decode_records,
    },
    header::Header,
    index::BlockEntry,
    reader::{ArchiveReader, Block},
    strict::GameRecord,
};
pub(crate) use self::{
    games::{decode_mainlines_until, decode_records_until},
    reader::{Ends, TextWriter},
    writer::{ArchiveWriter, replace_section},
};

/// The first bytes of every archive.
pub(crate) const MAGIC: &[u8; 8] = b"CHPK\r\n\x1a\n";

/// The first bytes of an archive of engine training data
/// ([`crate::datasets::training`]), which the game archive's reader names
/// as such.
pub(crate) const TRAINING_MAGIC: &[u8; 8] = b"CHPKTRN\n";

/// The first bytes of an archive of position lines
/// ([`crate::datasets::positions`]), which the game archive's reader names
/// as such.
pub(crate) const POSITIONS_MAGIC: &[u8; 8] = b"CHPKPOS\n";
/// The format version this library writes and the one it reads: until the
/// first release there is one format, and a change replaces it.
pub const FORMAT_VERSION: u8 = 19;

/// [`openings_hash`] of this library's tables, as a constant: making it
/// parses lichess's table and its priors (12.8 million instructions),
/// which every process that opened an archive spent, also those that
/// decode no game (3 ms of an `explore` at the start position, a tenth of
/// it; issue 68). Debug builds (the tests) make it again where it is
/// used ([`pinned_openings_hash`]), and the unit test
/// `openings_hash_is_the_tables` names the new value when a table changes,
/// as the model's constants do ([`crate::model`]).
const OPENINGS_HASH: u64 = 0x6292_8eb3_7780_cedc;

/// The opening hash a header holds for this library's tables
/// ([`OPENINGS_HASH`]), checked against the tables in debug builds.
fn pinned_openings_hash() -> u64 {
    if cfg!(debug_assertions) {
        let hash = openings_hash();
        assert_eq!(
            hash, OPENINGS_HASH,
            "the opening tables have the hash {hash:#018x}: OPENINGS_HASH must say so"
        );
    }
    OPENINGS_HASH
}

/// The opening hash of this library's opening tables: lichess's table and
/// its priors by rating band, the `fast` weights and the engine fields'
/// prior together.
fn openings_hash() -> u64 {
    let lichess = crate::opening::OpeningTable::lichess();
    let tables = lichess.band_priors().map_or(lichess.hash(), |p| p.hash());
    with_engine_fields(tables)
}

/// The hash of the opening tables `tables` with the `fast` weights, which
/// rank the lines of engine comments, and the engine fields' prior
fn with_engine_fields(tables: u64) -> u64 {
    let fast = crate::model::fast::FastWeights::embedded().hash();
    let prior = block::fields_prior_hash();
    let h = crate::hash::fnv1a_from(tables, &fast.to_le_bytes());
    crate::hash::fnv1a_from(h, &prior.to_le_bytes())
}
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
    /// A chesspack archive of another kind (positions, engine training
    /// data), where one of games is read.
    #[error("{0}, not an archive of games")]
    NotGames(&'static str),
    /// The header is damaged.
    #[error("archive header is damaged: {0}")]
    Header(String),
    /// A version this library does not read: any but [`FORMAT_VERSION`].
    #[error(
        "archive format version {0} is not supported: this chesspack reads format {FORMAT_VERSION} only (until the first release a format change replaces the last; the chesspack that wrote the archive reads it)"
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
    /// The input of a compress is a chesspack archive already: compressed
    /// again, it would only grow (`crate::files::Settings::force`).
    #[error("already a chesspack archive (decompress reads it)")]
    AlreadyAnArchive,
    /// A codec that is not there.
    #[error(transparent)]
    Codec(#[from] crate::Error),
    /// Settings that no archive is written or read with.
    #[error("{0}")]
    Settings(String),
    /// The search index of the archive's games would take more memory
    /// than its builder may ([`crate::files::Settings::index_memory`]).
    #[error(
        "the search index would take more than {} of memory by game {games} of the archive",
        memory_text(*memory)
    )]
    IndexMemory {
        /// The most bytes the builder could take.
        memory: u64,
        /// The games it had taken when it would have taken more.
        games: u64,
    },
}

/// `bytes` of memory to a tenth of the largest of KiB, MiB and GiB that it
/// holds one of: `4.0 GiB`, `97.7 KiB`.
fn memory_text(bytes: u64) -> String {
    let (unit, name) = match bytes {
        b if b >= 1 << 30 => (1u32 << 30, "GiB"),
        b if b >= 1 << 20 => (1 << 20, "MiB"),
        _ => (1 << 10, "KiB"),
    };
    format!("{:.1} {name}", bytes as f64 / f64::from(unit))
}

/// How [`compress`] cuts its input into blocks and compresses text.
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub struct Options {
    /// The most games in a block. A game is read by decoding its block up
    /// to it, so smaller blocks make a game that a search must decode
    /// faster to reach, and the archive larger (1,024 against 4,096: about
    /// 4% more bytes for the games; docs/search.md).
    pub block_games: usize,
    /// About the most PGN text in a block, in bytes.
    pub block_bytes: usize,
    /// zstd level of the text columns.
    pub level: i32,
    /// Which games keep their opening in the archive
    /// rather than have it worked out from their first moves when read.
    pub openings: Openings,
}

/// Which games of an archive keep the opening their moves give (its label
/// in the opening table, coded with the tags, the moves coded knowing it),
/// so that reading their `ECO` and `Opening` tags
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
    pipeline::Pipeline::with_threads(1).compress(input, output, codec, options, None, &mut |_| {
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
    let report = pipeline::Pipeline::with_threads(1)
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
pub(crate) fn canonical_game(chunk: &Chunk) -> Vec<u8> {
    match (!chunk.cut).then(|| crate::pgn::strict::parse(&chunk.bytes)) {
        Some(Ok(game)) if !game.tags.iter().any(|(_, v)| v.contains(&0)) => {
            let mut out = Vec::new();
            crate::pgn::strict::write(&game, &mut out);
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
    /// The pinned hash is the tables': a change to a table, the `fast`
    /// weights or the fields' prior changes both, and the pin is made
    /// again with the new value.
    #[test]
    fn openings_hash_is_the_tables() {
        assert_eq!(
            crate::archive::openings_hash(),
            crate::archive::OPENINGS_HASH,
            "the opening tables changed: pin OPENINGS_HASH to {:#018x}",
            crate::archive::openings_hash()
        );
    }

    #[test]
    fn example_canonical_game() {
        use crate::{archive::canonical_game, pgn::ChunkReader};

        let chunk = ChunkReader::new(&b"1.e4  e5\n*\n"[..])
            .next()
            .unwrap()
            .unwrap();
        assert_eq!(canonical_game(&chunk), b"1. e4 e5\n*\n\n");
    }

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
