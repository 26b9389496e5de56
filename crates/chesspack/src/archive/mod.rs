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
//!   comment, glyph or variation;
//! * comments as `{` + their exact bytes + `}`; glyphs as `$n` (`!`, `?`, `!!`,
//!   `??`, `!?`, `?!` become `$1`..`$6`); variations as `(...)`; the result
//!   token where the game had one;
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
//! # Format (version 8; versions 1 to 7 still decode)
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
//! let text = r.game(1).unwrap();
//! assert_eq!(text, b"[White \"Tal\"]\n\n1. e4 e5 2. Nf3 {good} 2... Nc6 1-0\n\n");
//! assert_eq!(r.game(2).unwrap(), b"1. e4 ; a line comment\n");
//! assert_eq!(archive::canonical(&pgn[..]).unwrap(), [text, r.game(2).unwrap()].concat());
//! ```

mod block;
#[cfg(any(test, feature = "fuzzing"))]
pub(crate) use block::on_this_thread;
mod chunk;
pub mod pipeline;
pub mod positions;
mod tags;
mod text;

use std::io::{self, Read, Seek, SeekFrom, Write};

use block::trailing_whitespace;
pub use block::{BlockReport, COLUMNS};
pub(crate) use block::{EncodedBlock, encode_block};
pub(crate) use chunk::Blocks;
pub use chunk::{Chunk, ChunkReader};

use crate::game::GameCodec;

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
/// ply count beside its moves' length, and a lichess game's URL as a number.
pub const FORMAT_VERSION: u8 = 8;
/// The first version with the opening table's hash in the header.
const OPENINGS_VERSION: u8 = 6;
/// The first version with text checksums, file ends and a checked footer.
const CHECKED_VERSION: u8 = 4;
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
    #[error("game {number} is not in the archive (it holds {games} games)")]
    NoSuchGame {
        /// The game asked for.
        number: u64,
        /// Games in the archive.
        games: u64,
    },
}

/// The format version, move codec and model of an archive.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    /// The format version the archive was written in.
    pub version: u8,
    /// The move codec's name.
    pub codec: String,
    /// The hash of the codec's model (tables, parameters).
    pub model_hash: u64,
    /// The hash of the opening table that gives `ECO` and `Opening` tags
    /// (format 6; 0 before).
    pub openings_hash: u64,
}

impl Header {
    fn to_bytes(&self) -> Vec<u8> {
        let mut out = MAGIC.to_vec();
        out.push(self.version);
        out.push(self.codec.len() as u8);
        out.extend_from_slice(self.codec.as_bytes());
        out.extend_from_slice(&self.model_hash.to_le_bytes());
        if self.version >= OPENINGS_VERSION {
            out.extend_from_slice(&self.openings_hash.to_le_bytes());
        }
        let crc = crc32fast::hash(&out);
        out.extend_from_slice(&crc.to_le_bytes());
        out
    }

    fn read(r: &mut impl Read) -> Result<(Header, u64), ArchiveError> {
        let mut magic = [0u8; 8];
        read_exact_or(r, &mut magic, ArchiveError::NotAnArchive)?;
        if &magic != MAGIC {
            return Err(ArchiveError::NotAnArchive);
        }
        let mut head = [0u8; 2];
        read_exact_or(r, &mut head, ArchiveError::Header("truncated".into()))?;
        if !(1..=FORMAT_VERSION).contains(&head[0]) {
            return Err(ArchiveError::UnsupportedVersion(head[0]));
        }
        let hashes = if head[0] >= OPENINGS_VERSION { 16 } else { 8 };
        let mut rest = vec![0u8; usize::from(head[1]) + hashes + 4];
        read_exact_or(r, &mut rest, ArchiveError::Header("truncated".into()))?;
        let name_len = usize::from(head[1]);
        let mut all = magic.to_vec();
        all.extend_from_slice(&head);
        all.extend_from_slice(&rest[..name_len + hashes]);
        let crc = u32::from_le_bytes(rest[name_len + hashes..].try_into().expect("4 bytes"));
        if crc32fast::hash(&all) != crc {
            return Err(ArchiveError::Header("checksum mismatch".into()));
        }
        let codec = String::from_utf8(rest[..name_len].to_vec())
            .map_err(|_| ArchiveError::Header("codec name is not utf-8".into()))?;
        let model_hash = u64::from_le_bytes(rest[name_len..name_len + 8].try_into().expect("8"));
        let openings_hash = if hashes == 16 {
            u64::from_le_bytes(rest[name_len + 8..name_len + 16].try_into().expect("8"))
        } else {
            0
        };
        Ok((
            Header {
                version: head[0],
                codec,
                model_hash,
                openings_hash,
            },
            all.len() as u64 + 4,
        ))
    }

    /// The codec this header names, if this library has it with the same
    /// model.
    ///
    /// # Errors
    ///
    /// [`ArchiveError::CodecMismatch`] naming what is missing.
    pub fn codec(&self) -> Result<Box<dyn GameCodec>, ArchiveError> {
        let have = crate::opening::OpeningTable::builtin().hash();
        if self.version >= OPENINGS_VERSION && self.openings_hash != have {
            return Err(ArchiveError::OpeningTableMismatch {
                hash: self.openings_hash,
                have,
            });
        }
        let mismatch = |have: String| ArchiveError::CodecMismatch {
            name: self.codec.clone(),
            hash: self.model_hash,
            have,
        };
        match crate::game::codec_with_hash(&self.codec, self.model_hash) {
            Ok(Some(codec)) => Ok(codec),
            Ok(None) => Err(mismatch(format!(
                "; this chesspack has model {:016x}",
                crate::game::codec(&self.codec).map_or(0, |c| c.model_hash())
            ))),
            Err(_) => Err(mismatch(", which this chesspack does not have".into())),
        }
    }
}

fn read_exact_or(r: &mut impl Read, buf: &mut [u8], err: ArchiveError) -> Result<(), ArchiveError> {
    match r.read_exact(buf) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => Err(err),
        Err(e) => Err(e.into()),
    }
}

/// Where a block is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockEntry {
    /// Offset of the block's frame in the file.
    pub offset: u64,
    /// Payload length.
    pub len: u32,
    /// Games in the block.
    pub games: u32,
}

/// Writes an archive: the header, then blocks in order, then the index.
pub(crate) struct ArchiveWriter<W: Write> {
    w: W,
    offset: u64,
    entries: Vec<BlockEntry>,
    games: u64,
    /// The first block's lead and the last block's tail.
    lead: Vec<u8>,
    tail: Vec<u8>,
}

impl<W: Write> ArchiveWriter<W> {
    /// Writes the header for `codec`.
    ///
    /// # Errors
    ///
    /// An I/O error of `w`.
    pub(crate) fn new(mut w: W, codec: &dyn GameCodec) -> Result<ArchiveWriter<W>, ArchiveError> {
        let header = Header {
            version: FORMAT_VERSION,
            codec: codec.name().to_owned(),
            model_hash: codec.model_hash(),
            openings_hash: crate::opening::OpeningTable::builtin().hash(),
        }
        .to_bytes();
        w.write_all(&header)?;
        Ok(ArchiveWriter {
            w,
            offset: header.len() as u64,
            entries: Vec::new(),
            games: 0,
            lead: Vec::new(),
            tail: Vec::new(),
        })
    }

    /// Appends a block. Blocks are written in input order: the first one's
    /// lead and the last one's tail are the file's ends.
    ///
    /// # Errors
    ///
    /// An I/O error of the output.
    pub(crate) fn write_block(&mut self, block: &EncodedBlock) -> Result<(), ArchiveError> {
        let text_crc = block.text_crc.to_le_bytes();
        let len = u32::try_from(block.payload.len() + text_crc.len())
            .ok()
            .filter(|&l| l <= MAX_PAYLOAD)
            .ok_or_else(|| ArchiveError::Io(io::Error::other("block too large")))?;
        let games = block.report.games as u32;
        let mut crc = crc32fast::Hasher::new();
        crc.update(&block.payload);
        crc.update(&text_crc);
        let mut frame = BLOCK_MAGIC.to_vec();
        frame.extend_from_slice(&len.to_le_bytes());
        frame.extend_from_slice(&games.to_le_bytes());
        frame.extend_from_slice(&crc.finalize().to_le_bytes());
        self.w.write_all(&frame)?;
        self.w.write_all(&block.payload)?;
        self.w.write_all(&text_crc)?;
        if self.entries.is_empty() {
            self.lead.clone_from(&block.lead);
        }
        self.tail.clone_from(&block.tail);
        self.entries.push(BlockEntry {
            offset: self.offset,
            len,
            games,
        });
        self.offset += BLOCK_HEADER_LEN + u64::from(len);
        self.games += u64::from(games);
        Ok(())
    }

    /// Writes the index and footer and returns the output.
    ///
    /// # Errors
    ///
    /// An I/O error of the output.
    pub(crate) fn finish(mut self) -> Result<W, ArchiveError> {
        let mut index = INDEX_MAGIC.to_vec();
        index.extend_from_slice(&(self.entries.len() as u32).to_le_bytes());
        for e in &self.entries {
            index.extend_from_slice(&e.offset.to_le_bytes());
            index.extend_from_slice(&e.len.to_le_bytes());
            index.extend_from_slice(&e.games.to_le_bytes());
        }
        for end in [&self.lead, &self.tail] {
            index.extend_from_slice(&(end.len() as u32).to_le_bytes());
            index.extend_from_slice(end);
        }
        let mut numbers = self.offset.to_le_bytes().to_vec();
        numbers.extend_from_slice(&self.games.to_le_bytes());
        let mut crc = crc32fast::Hasher::new();
        crc.update(&index);
        crc.update(&numbers);
        index.extend_from_slice(&crc.finalize().to_le_bytes());
        index.extend_from_slice(&numbers);
        index.extend_from_slice(FOOTER_MAGIC);
        self.w.write_all(&index)?;
        self.w.flush()?;
        Ok(self.w)
    }
}

/// Reads an archive: its header, index and blocks.
pub struct ArchiveReader<R> {
    r: R,
    header: Header,
    codec: Box<dyn GameCodec>,
    entries: Vec<BlockEntry>,
    /// The input's lead and tail (format 4 with its index).
    ends: Option<Ends>,
    /// Why the index could not be used, if it could not (the entries then
    /// come from a scan of the blocks).
    index_error: Option<String>,
    /// Games before each block.
    first_game: Vec<u64>,
}

impl<R: Read + Seek> ArchiveReader<R> {
    /// Opens an archive and reads its index. When the index is missing or
    /// damaged (a truncated file), the blocks are found by scanning and
    /// [`ArchiveReader::index_error`] says why.
    ///
    /// # Errors
    ///
    /// Not an archive, an unsupported version, a codec or model this library
    /// does not have, a damaged header, an I/O error.
    pub fn open(mut r: R) -> Result<ArchiveReader<R>, ArchiveError> {
        r.seek(SeekFrom::Start(0))?;
        let (header, header_len) = Header::read(&mut r)?;
        let codec = header.codec()?;
        let file_len = r.seek(SeekFrom::End(0))?;
        let (entries, ends, index_error) =
            match read_index(&mut r, header_len, file_len, header.version) {
                Ok((entries, ends)) => (entries, ends, None),
                Err(reason) => (
                    scan_blocks(&mut r, header_len, file_len)?,
                    None,
                    Some(reason),
                ),
            };
        let mut first_game = Vec::with_capacity(entries.len());
        let mut total = 0u64;
        for e in &entries {
            first_game.push(total);
            total += u64::from(e.games);
        }
        Ok(ArchiveReader {
            r,
            header,
            codec,
            entries,
            ends,
            index_error,
            first_game,
        })
    }

    /// A writer of this archive's games as the file they came from (see
    /// [`TextWriter`]).
    pub(crate) fn text_writer<W: Write>(&self, w: W) -> TextWriter<W> {
        TextWriter::new(w, self.ends.clone())
    }

    /// The archive's header.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// The blocks, from the index (or a scan).
    pub fn blocks(&self) -> &[BlockEntry] {
        &self.entries
    }

    /// Why the index could not be used, if it could not.
    pub fn index_error(&self) -> Option<&str> {
        self.index_error.as_deref()
    }

    /// Games in the archive (in the blocks found, when the index is damaged).
    pub fn games(&self) -> u64 {
        self.first_game.last().copied().unwrap_or(0)
            + self.entries.last().map_or(0, |e| u64::from(e.games))
    }

    /// The number of the first game of block `i` (0-based), 1-based.
    pub fn first_game(&self, block: usize) -> u64 {
        self.first_game[block] + 1
    }

    /// Block `i` (0-based), checked against the checksum of its stored
    /// bytes; its text is checked when it is decoded ([`decode_games`]).
    ///
    /// # Errors
    ///
    /// [`ArchiveError::Damaged`] naming the block (1-based), or an I/O error.
    pub fn read_block(&mut self, i: usize) -> Result<Block, ArchiveError> {
        let e = self.entries[i];
        let damaged = |reason: &str| ArchiveError::Damaged {
            block: i as u64 + 1,
            reason: reason.into(),
        };
        self.r.seek(SeekFrom::Start(e.offset))?;
        let mut frame = [0u8; BLOCK_HEADER_LEN as usize];
        read_exact_or(&mut self.r, &mut frame, damaged("truncated"))?;
        if &frame[..4] != BLOCK_MAGIC {
            return Err(damaged("bad block marker"));
        }
        let len = u32::from_le_bytes(frame[4..8].try_into().expect("4"));
        let games = u32::from_le_bytes(frame[8..12].try_into().expect("4"));
        let crc = u32::from_le_bytes(frame[12..16].try_into().expect("4"));
        if len != e.len || games != e.games {
            return Err(damaged("block frame does not match the index"));
        }
        let mut payload = vec![0u8; len as usize];
        read_exact_or(&mut self.r, &mut payload, damaged("truncated"))?;
        if crc32fast::hash(&payload) != crc {
            return Err(damaged("checksum mismatch"));
        }
        let text_crc = if self.header.version >= CHECKED_VERSION {
            let at = payload
                .len()
                .checked_sub(4)
                .ok_or_else(|| damaged("no text checksum"))?;
            let crc = u32::from_le_bytes(payload[at..].try_into().expect("4"));
            payload.truncate(at);
            Some(crc)
        } else {
            None
        };
        Ok(Block {
            index: i,
            payload,
            text_crc,
        })
    }

    /// The move codec of the archive.
    pub fn codec(&self) -> &dyn GameCodec {
        self.codec.as_ref()
    }

    /// The text of game `number` (1-based): canonical, or verbatim. Reads
    /// one block and decodes it up to that game: the text checksum, which
    /// covers the whole block, is not checked (see
    /// [`ArchiveReader::game_checked`]).
    ///
    /// # Errors
    ///
    /// [`ArchiveError::NoSuchGame`], or the block is damaged.
    pub fn game(&mut self, number: u64) -> Result<Vec<u8>, ArchiveError> {
        let (i, local) = self.locate(number)?;
        let block = self.read_block(i)?;
        decode_one(
            self.codec.as_ref(),
            &block,
            local,
            block::Want::Text,
            |d| match d {
                block::Decoded::Text(t) => Some(t),
                _ => None,
            },
        )
    }

    /// [`ArchiveReader::game`] that decodes the game's whole block and checks
    /// its text against the stored checksum (format 4): slower, by the
    /// games after this one in its block.
    ///
    /// # Errors
    ///
    /// [`ArchiveError::NoSuchGame`], or the block is damaged.
    pub fn game_checked(&mut self, number: u64) -> Result<Vec<u8>, ArchiveError> {
        let (i, local) = self.locate(number)?;
        let block = self.read_block(i)?;
        let mut text = None;
        decode_games(self.codec.as_ref(), &block, &|_| true, &mut |g, t| {
            if g == local {
                text = Some(t);
            }
        })?;
        text.ok_or_else(|| ArchiveError::Damaged {
            block: i as u64 + 1,
            reason: "game missing from its block".into(),
        })
    }

    /// The block (0-based) of game `number` and its place there.
    fn locate(&self, number: u64) -> Result<(usize, usize), ArchiveError> {
        let games = self.games();
        if number == 0 || number > games {
            return Err(ArchiveError::NoSuchGame { number, games });
        }
        let i = self.first_game.partition_point(|&f| f < number) - 1;
        Ok((i, (number - 1 - self.first_game[i]) as usize))
    }
}

/// A block read from an archive: its payload and the checksum of the text
/// it decodes to.
#[derive(Clone, Debug)]
pub struct Block {
    index: usize,
    payload: Vec<u8>,
    text_crc: Option<u32>,
}

impl Block {
    /// Block `index` (0-based) with `payload` and no text checksum, as
    /// formats 1 to 3 store it (for tests and fuzzing).
    #[cfg(any(test, feature = "fuzzing"))]
    pub(crate) fn unchecked(payload: Vec<u8>, index: usize) -> Block {
        Block {
            index,
            payload,
            text_crc: None,
        }
    }

    /// The payload: the number of games and the columns.
    pub(crate) fn payload(&self) -> &[u8] {
        &self.payload
    }
}

/// The bytes of the input that belong to no game, which format 4 keeps.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Ends {
    /// A byte order mark and blank lines before the first game.
    pub lead: Vec<u8>,
    /// The whitespace after the last game.
    pub tail: Vec<u8>,
}

/// Writes decompressed games as the file they came from: the lead first,
/// then the games, with the whitespace that ends the last one replaced by
/// the tail. Without [`Ends`] (formats 1 to 3, a lost index) the games are
/// written as they are.
pub(crate) struct TextWriter<W: Write> {
    w: W,
    ends: Option<Ends>,
    /// Whitespace written last, held until more text follows.
    pending: Vec<u8>,
    started: bool,
}

impl<W: Write> TextWriter<W> {
    /// A writer to `w` with the input's `ends`.
    pub(crate) fn new(w: W, ends: Option<Ends>) -> TextWriter<W> {
        TextWriter {
            w,
            ends,
            pending: Vec::new(),
            started: false,
        }
    }

    fn start(&mut self) -> io::Result<()> {
        if !self.started {
            self.started = true;
            if let Some(ends) = &self.ends {
                self.w.write_all(&ends.lead)?;
            }
        }
        Ok(())
    }

    /// Writes the text of one or more games.
    ///
    /// # Errors
    ///
    /// An I/O error of the output.
    pub(crate) fn write_games(&mut self, text: &[u8]) -> io::Result<()> {
        self.start()?;
        if self.ends.is_none() {
            return self.w.write_all(text);
        }
        let end = text.len() - trailing_whitespace(text);
        if end > 0 {
            self.w.write_all(&self.pending)?;
            self.pending.clear();
            self.w.write_all(&text[..end])?;
        }
        self.pending.extend_from_slice(&text[end..]);
        Ok(())
    }

    /// Writes the tail (in place of the last whitespace) and flushes.
    ///
    /// # Errors
    ///
    /// An I/O error of the output.
    pub(crate) fn finish(mut self) -> io::Result<W> {
        self.start()?;
        match &self.ends {
            Some(ends) => self.w.write_all(&ends.tail)?,
            None => self.w.write_all(&self.pending)?,
        }
        self.w.flush()?;
        Ok(self.w)
    }
}

fn read_index(
    r: &mut (impl Read + Seek),
    header_len: u64,
    file_len: u64,
    version: u8,
) -> Result<(Vec<BlockEntry>, Option<Ends>), String> {
    let io = |e: io::Error| e.to_string();
    if file_len < header_len + FOOTER_LEN {
        return Err("no footer".into());
    }
    r.seek(SeekFrom::Start(file_len - FOOTER_LEN)).map_err(io)?;
    let mut footer = [0u8; FOOTER_LEN as usize];
    r.read_exact(&mut footer).map_err(io)?;
    if &footer[16..] != FOOTER_MAGIC {
        return Err("no footer".into());
    }
    let index_offset = u64::from_le_bytes(footer[..8].try_into().expect("8"));
    let index_end = file_len - FOOTER_LEN;
    if index_offset < header_len || index_offset.saturating_add(12) > index_end {
        return Err("bad index offset".into());
    }
    let mut index = vec![0u8; (index_end - index_offset) as usize];
    r.seek(SeekFrom::Start(index_offset)).map_err(io)?;
    r.read_exact(&mut index).map_err(io)?;
    let (body, crc) = index.split_at(index.len() - 4);
    let checked = version >= CHECKED_VERSION;
    let mut hasher = crc32fast::Hasher::new();
    hasher.update(body);
    if checked {
        // The footer's index offset and game count.
        hasher.update(&footer[..16]);
    }
    if hasher.finalize() != u32::from_le_bytes(crc.try_into().expect("4")) {
        return Err("index checksum mismatch".into());
    }
    if &body[..4] != INDEX_MAGIC {
        return Err("bad index marker".into());
    }
    let n = u32::from_le_bytes(body[4..8].try_into().expect("4")) as usize;
    let entries_end = n.saturating_mul(16).saturating_add(8);
    let (entry_bytes, mut rest) = if checked {
        if body.len() < entries_end {
            return Err("bad index length".into());
        }
        (&body[8..entries_end], &body[entries_end..])
    } else {
        if body.len() != entries_end {
            return Err("bad index length".into());
        }
        (&body[8..], &[][..])
    };
    let ends = if checked {
        let mut take_end = || -> Result<Vec<u8>, String> {
            let (len, after) = rest.split_at_checked(4).ok_or("bad index length")?;
            let len = u32::from_le_bytes(len.try_into().expect("4")) as usize;
            let (bytes, after) = after.split_at_checked(len).ok_or("bad index length")?;
            rest = after;
            Ok(bytes.to_vec())
        };
        let lead = take_end()?;
        let tail = take_end()?;
        if !rest.is_empty() {
            return Err("bad index length".into());
        }
        Some(Ends { lead, tail })
    } else {
        None
    };
    let mut expected = header_len;
    let entries: Vec<BlockEntry> = entry_bytes
        .chunks_exact(16)
        .map(|c| BlockEntry {
            offset: u64::from_le_bytes(c[..8].try_into().expect("8")),
            len: u32::from_le_bytes(c[8..12].try_into().expect("4")),
            games: u32::from_le_bytes(c[12..].try_into().expect("4")),
        })
        .collect();
    for e in &entries {
        if e.offset != expected || e.len > MAX_PAYLOAD {
            return Err("index does not match the blocks".into());
        }
        expected = e.offset + BLOCK_HEADER_LEN + u64::from(e.len);
    }
    if expected != index_offset {
        return Err("index does not match the blocks".into());
    }
    let games = u64::from_le_bytes(footer[8..16].try_into().expect("8"));
    if checked && games != entries.iter().map(|e| u64::from(e.games)).sum::<u64>() {
        return Err("footer game count does not match the index".into());
    }
    Ok((entries, ends))
}

/// Finds blocks by walking their frames from the header on, stopping at the
/// first frame that is not a block.
fn scan_blocks(
    r: &mut (impl Read + Seek),
    header_len: u64,
    file_len: u64,
) -> Result<Vec<BlockEntry>, ArchiveError> {
    let mut entries = Vec::new();
    let mut offset = header_len;
    while offset + BLOCK_HEADER_LEN <= file_len {
        r.seek(SeekFrom::Start(offset))?;
        let mut frame = [0u8; BLOCK_HEADER_LEN as usize];
        r.read_exact(&mut frame)?;
        if &frame[..4] != BLOCK_MAGIC {
            break;
        }
        let len = u32::from_le_bytes(frame[4..8].try_into().expect("4"));
        let games = u32::from_le_bytes(frame[8..12].try_into().expect("4"));
        if len > MAX_PAYLOAD || offset + BLOCK_HEADER_LEN + u64::from(len) > file_len {
            break;
        }
        entries.push(BlockEntry { offset, len, games });
        offset += BLOCK_HEADER_LEN + u64::from(len);
    }
    Ok(entries)
}

/// Decodes the games of `block` for which `want` is true, giving their text
/// (canonical or verbatim) to `sink` with their index in the block. When
/// every game is wanted, their text is checked against the block's text
/// checksum (format 4) before the call returns.
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
    let damaged = |reason| ArchiveError::Damaged {
        block: block.index as u64 + 1,
        reason,
    };
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
        if let block::Decoded::Text(t) = d {
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

/// A game's tags, for listing: `Ok(tags)` for a stored game, `Err(text)` for
/// a verbatim one.
pub type GameTags = Result<Vec<(Vec<u8>, Vec<u8>)>, Vec<u8>>;

/// The tags of every game of a block, without checking the block's text.
/// Moves are decoded only where the archive stores an `ECO` or `Opening`
/// tag as the value the moves give (format 6): `codec` is the archive's
/// ([`ArchiveReader::codec`]).
///
/// # Errors
///
/// [`ArchiveError::Damaged`] when the payload does not decode.
pub fn block_tags(codec: &dyn GameCodec, block: &Block) -> Result<Vec<GameTags>, ArchiveError> {
    tags_of(codec, block, block::Want::Tags)
}

/// A game as data, decoded without writing its text and reading it back:
/// its tags, its mainline's moves and the clock after each. What the Python
/// package's rows and Arrow batches are made of.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct GameRecord {
    /// The tag pairs in their order (values unescaped, `ECO` and `Opening`
    /// filled in where the moves give them).
    pub tags: Vec<(Vec<u8>, Vec<u8>)>,
    /// Where the game starts: its `FEN` tag's position, or the standard one.
    pub start: shakmaty::Chess,
    /// The mainline's moves.
    pub moves: Vec<shakmaty::Move>,
    /// After each mainline move, the last `[%clk …]` reading in the
    /// comments that follow it, in milliseconds ([`crate::pgn::clock_millis`]).
    pub clocks: Vec<Option<u64>>,
}

impl GameRecord {
    /// The record of a game from its parsed events.
    pub(crate) fn of(
        tags: Vec<(Vec<u8>, Vec<u8>)>,
        start: shakmaty::Chess,
        events: &[text::Event],
    ) -> GameRecord {
        let (mut moves, mut clocks) = (Vec::new(), Vec::new());
        let mut depth = 0usize;
        for e in events {
            match e {
                text::Event::Open => depth += 1,
                text::Event::Close => depth = depth.saturating_sub(1),
                text::Event::Move(m) if depth == 0 => {
                    moves.push(*m);
                    clocks.push(None);
                }
                text::Event::Comment(c) if depth == 0 => {
                    if let (Some(ms), Some(last)) = (crate::pgn::clock_millis(c), clocks.last_mut())
                    {
                        *last = Some(ms);
                    }
                }
                _ => {}
            }
        }
        GameRecord {
            tags,
            start,
            moves,
            clocks,
        }
    }
}

/// A game's record: `Ok(record)` for a stored game, `Err(text)` for one
/// stored verbatim (its exact text, for a lenient reader).
pub type GameRow = Result<GameRecord, Vec<u8>>;

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
/// let game = rows[0].as_ref().unwrap();
/// assert_eq!((game.moves.len(), game.clocks.clone()), (2, vec![Some(180_000), Some(179_000)]));
/// ```
pub fn decode_records(
    codec: &dyn GameCodec,
    block: &Block,
    want: &dyn Fn(usize) -> bool,
    sink: &mut dyn FnMut(usize, GameRow),
) -> Result<usize, ArchiveError> {
    let want = |g| {
        if want(g) {
            block::Want::Record
        } else {
            block::Want::Skip
        }
    };
    block::decode_block(codec, &block.payload, &want, &mut |g, d| {
        if let block::Decoded::Record(r) = d {
            sink(g, r);
        }
    })
    .map_err(|reason| ArchiveError::Damaged {
        block: block.index as u64 + 1,
        reason,
    })
}

/// The tags of game `local` (0-based) of a block, as [`block_tags`] gives
/// them: the moves of that game alone are decoded (its first plies, where
/// the archive stores an `ECO` or `Opening` tag as the value the moves
/// give), and the games after it are not read.
///
/// # Errors
///
/// [`ArchiveError::Damaged`] when the payload does not decode or has no
/// such game.
///
/// ```
/// use chesspack::archive::{self, ArchiveReader, Options};
///
/// let pgn = "[White \"a\"]\n\n1. e4 *\n\n[White \"b\"]\n\n1. d4 *\n";
/// let mut packed = Vec::new();
/// archive::compress(pgn.as_bytes(), &mut packed, &chesspack::game::Index, &Options::default()).unwrap();
/// let mut r = ArchiveReader::open(std::io::Cursor::new(packed)).unwrap();
/// let block = r.read_block(0).unwrap();
/// let tags = archive::game_tags(r.codec(), &block, 1).unwrap().unwrap();
/// assert!(tags.contains(&(b"White".to_vec(), b"b".to_vec())));
/// ```
pub fn game_tags(
    codec: &dyn GameCodec,
    block: &Block,
    local: usize,
) -> Result<GameTags, ArchiveError> {
    decode_one(codec, block, local, block::Want::Tags, |d| match d {
        block::Decoded::Tags(t) => Some(t),
        _ => None,
    })
}

/// Decodes game `local` of `block` as `want` asks, and `pick`s what it
/// gives; the games after it are not read, those before it skipped.
fn decode_one<T>(
    codec: &dyn GameCodec,
    block: &Block,
    local: usize,
    want: block::Want,
    pick: impl Fn(block::Decoded) -> Option<T>,
) -> Result<T, ArchiveError> {
    let damaged = |reason| ArchiveError::Damaged {
        block: block.index as u64 + 1,
        reason,
    };
    let mut got = None;
    let wants = |g| if g == local { want } else { block::Want::Skip };
    block::decode_block_until(
        codec,
        &block.payload,
        &wants,
        &mut |_, d| got = pick(d),
        local,
    )
    .map_err(damaged)?;
    got.ok_or_else(|| damaged("game missing from its block".into()))
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

fn tags_of(
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
    .map_err(|reason| ArchiveError::Damaged {
        block: block.index as u64 + 1,
        reason,
    })?;
    Ok(out)
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
}

impl Default for Options {
    /// 4096 games or 4 MiB of text a block, zstd level 15: on 30 MB of
    /// master games, level 17 spends 10% more instructions compressing (the
    /// whole archive, `index` codec), and its archives of the whole master
    /// and lichess files (`model`) are 0.16% smaller; level 19 takes 12–19%
    /// longer than 17 again.
    fn default() -> Options {
        Options {
            block_games: 4096,
            block_bytes: 4 << 20,
            level: 15,
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
    for chunk in ChunkReader::new(input) {
        let chunk = chunk?;
        if chunk.number == 1 {
            ends.lead.clone_from(&chunk.lead);
        }
        let end = chunk.bytes.len() - trailing_whitespace(&chunk.bytes);
        ends.tail = chunk.bytes[end..].to_vec();
        games.extend_from_slice(&canonical_game(&chunk));
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
