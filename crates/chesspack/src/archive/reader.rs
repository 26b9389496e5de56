//! Reading an archive: the header, the index, blocks by number and games
//! by number; and the text writer that gives decompressed games the ends
//! of the file they came from.

use super::*;

/// Reads an archive: its header, index and blocks.
pub struct ArchiveReader<R> {
    pub(super) r: R,
    pub(super) header: Header,
    pub(super) codec: Box<dyn GameCodec>,
    pub(super) entries: Vec<BlockEntry>,
    /// The input's lead and tail (`None` where the index is lost).
    pub(super) ends: Option<Ends>,
    /// Why the index could not be used, if it could not (the entries then
    /// come from a scan of the blocks).
    pub(super) index_error: Option<String>,
    /// Why the header could not be read, where its copy in the index was
    /// read instead.
    pub(super) header_error: Option<String>,
    /// Games before each block.
    pub(super) first_game: Vec<u64>,
    /// The search section's offset and length, where there is one.
    pub(super) section: Option<(u64, u64)>,
    /// The search section as read, kept between queries (a layer above
    /// says what it is: see [`ArchiveReader::kept_section`]).
    pub(super) kept: Option<std::sync::Arc<dyn std::any::Any + Send + Sync>>,
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
        let read = Header::read(&mut r);
        let file_len = r.seek(SeekFrom::End(0))?;
        // A damaged header is read from its copy in the index.
        let (header, header_len, header_error) = match read {
            Ok((header, len)) => (header, len, None),
            Err(
                e @ (ArchiveError::Io(_)
                | ArchiveError::Header(_)
                | ArchiveError::NotAnArchive
                | ArchiveError::UnsupportedVersion(_)),
            ) => match header_from_index(&mut r, file_len) {
                Some((header, len)) => (header, len, Some(e.to_string())),
                None => return Err(e),
            },
            Err(e) => return Err(e),
        };
        let codec = header.codec()?;
        let (entries, ends, section, index_error) = match read_index(&mut r, header_len, file_len) {
            Ok((entries, ends, section)) => (entries, Some(ends), section, None),
            Err(reason) => (
                scan_blocks(&mut r, header_len, file_len)?,
                None,
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
            header_error,
            first_game,
            section,
            kept: None,
        })
    }

    /// Whether the archive has a search section (written by `compress`
    /// unless `--no-index` or for fewer than 32 games, added by `chesspack
    /// index`): queries on an archive without one decode every game
    /// ([`crate::search`]).
    ///
    /// ```
    /// use chesspack::{archive::ArchiveReader, files};
    ///
    /// let go = &mut |_: &_| std::ops::ControlFlow::Continue(());
    /// let mut settings = files::Settings::default();
    /// let sample = concat!(env!("CARGO_MANIFEST_DIR"), "/../../samples/lichess-sample.pgn");
    /// let sample = std::fs::read_to_string(sample).unwrap();
    /// // Its games' tags and movetexts, each ending with a blank line.
    /// let parts: Vec<&str> = sample.split_inclusive("\n\n").collect();
    /// for (games, no_index, indexed) in [(32, false, true), (32, true, false), (31, false, false)] {
    ///     let pgn = parts[..2 * games].concat();
    ///     settings.no_index = no_index;
    ///     let mut packed = Vec::new();
    ///     files::compress(files::Kind::Games, pgn.as_bytes(), &mut packed, &settings, go).unwrap();
    ///     let archive = ArchiveReader::open(std::io::Cursor::new(packed)).unwrap();
    ///     assert_eq!(archive.has_search_section(), indexed);
    /// }
    /// ```
    pub fn has_search_section(&self) -> bool {
        self.section.is_some()
    }

    /// The length of the archive's search section (`chesspack index`,
    /// [`crate::search`]); `None` where it has none (or its index is
    /// damaged).
    pub(crate) fn section_len(&self) -> Option<u64> {
        self.section.map(|(_, len)| len)
    }

    /// `len` bytes of the archive's search section from `at` (from its
    /// start), unchecked: a query reads the parts it needs.
    ///
    /// # Errors
    ///
    /// A range past the section's end, an I/O error, or a file shorter
    /// than its index says.
    pub(crate) fn section_range(&mut self, at: u64, len: usize) -> Result<Vec<u8>, ArchiveError> {
        let Some((offset, size)) = self.section else {
            return Err(ArchiveError::Index("no search section".into()));
        };
        if at.checked_add(len as u64).is_none_or(|end| end > size) {
            return Err(ArchiveError::Index("past the search section's end".into()));
        }
        self.r.seek(SeekFrom::Start(offset + at))?;
        let mut bytes = vec![0u8; len];
        self.r.read_exact(&mut bytes)?;
        Ok(bytes)
    }

    /// The search section as a layer above read it (with
    /// [`ArchiveReader::section_range`]) and kept, if it is a `T`: queries
    /// on an open archive read it once.
    pub(crate) fn kept_section<T: std::any::Any + Send + Sync>(&self) -> Option<std::sync::Arc<T>> {
        self.kept.clone()?.downcast().ok()
    }

    /// Keeps `section` for [`ArchiveReader::kept_section`].
    pub(crate) fn keep_section(
        &mut self,
        section: std::sync::Arc<dyn std::any::Any + Send + Sync>,
    ) {
        self.kept = Some(section);
    }

    /// Where the blocks end: the offset of the search section, or of the
    /// index where there is none.
    pub(crate) fn blocks_end(&self) -> u64 {
        self.entries
            .last()
            .map_or(self.header.to_bytes().len() as u64, |e| {
                e.offset + BLOCK_HEADER_LEN + u64::from(e.len)
            })
    }

    /// Why the header could not be read, where it was read from its copy
    /// in the index instead.
    pub fn header_error(&self) -> Option<&str> {
        self.header_error.as_deref()
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
        let len = crate::le::u32_at(&frame, 4);
        let games = crate::le::u32_at(&frame, 8);
        let crc = crate::le::u32_at(&frame, 12);
        if len != e.len || games != e.games {
            return Err(damaged("block frame does not match the index"));
        }
        let mut payload = vec![0u8; len as usize];
        read_exact_or(&mut self.r, &mut payload, damaged("truncated"))?;
        if crc32fast::hash(&payload) != crc {
            return Err(damaged("checksum mismatch"));
        }
        let at = payload
            .len()
            .checked_sub(4)
            .ok_or_else(|| damaged("no text checksum"))?;
        let text_crc = Some(crate::le::u32_at(&payload, at));
        payload.truncate(at);
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
    /// [`ArchiveReader::write_game`]). A game longer than 8 MiB that goes
    /// on in the next blocks is read from them too.
    ///
    /// # Errors
    ///
    /// [`ArchiveError::NoSuchGame`], or the block is damaged.
    pub fn game(&mut self, number: u64) -> Result<Vec<u8>, ArchiveError> {
        let mut text = Vec::new();
        self.write_game(number, false, &mut text)?;
        Ok(text)
    }

    /// Writes the text of game `number` (1-based) to `out`, as
    /// [`ArchiveReader::game`] gives it, a piece at a time: a game longer
    /// than 8 MiB is never whole in memory. With `check`, the game's whole
    /// block is decoded and its text checked against the stored checksum
    /// before any of it is written: slower, by the games after
    /// this one in its block.
    ///
    /// # Errors
    ///
    /// [`ArchiveError::NoSuchGame`], a damaged block, or an I/O error of
    /// `out`.
    ///
    /// ```
    /// use chesspack::archive::{self, ArchiveReader, Options};
    ///
    /// let pgn = "1. e4 *\n\n1. d4 *\n";
    /// let mut packed = Vec::new();
    /// archive::compress(pgn.as_bytes(), &mut packed, &chesspack::game::Index, &Options::default()).unwrap();
    /// let mut r = ArchiveReader::open(std::io::Cursor::new(packed)).unwrap();
    /// let mut out = Vec::new();
    /// r.write_game(2, true, &mut out).unwrap();
    /// assert_eq!(out, b"1. d4 *\n");
    /// ```
    pub fn write_game(
        &mut self,
        number: u64,
        check: bool,
        out: &mut dyn Write,
    ) -> Result<(), ArchiveError> {
        let (i, local) = self.locate(number)?;
        let block = self.read_block(i)?;
        let mut found = false;
        if check {
            let mut text = Vec::new();
            decode_games(self.codec.as_ref(), &block, &|_| true, &mut |g, t| {
                if g == local {
                    found = true;
                    text.extend_from_slice(&t);
                }
            })?;
            out.write_all(&text)?;
        } else {
            let mut written = Ok(());
            decode_one(
                self.codec.as_ref(),
                &block,
                local,
                block::Want::Text,
                &mut |d| {
                    if let (true, block::Decoded::Text(t) | block::Decoded::Piece(t)) =
                        (written.is_ok(), d)
                    {
                        found = true;
                        written = out.write_all(&t);
                    }
                },
            )?;
            written?;
        }
        if !found {
            return Err(ArchiveError::Damaged {
                block: i as u64 + 1,
                reason: "game missing from its block".into(),
            });
        }
        if local + 1 == self.entries[i].games as usize {
            let mut written = Ok(());
            self.rest_of_game(&block, &mut |t| {
                if written.is_ok() {
                    written = out.write_all(&t);
                }
            })?;
            written?;
        }
        Ok(())
    }

    /// Gives `sink` the rest of the text of `block`'s last game, from the
    /// pieces at the start of the blocks after it, when that game is longer
    /// than 8 MiB and goes on there (a method bit of the block, format
    /// 10); nothing otherwise. Each block read is checked as
    /// [`ArchiveReader::read_block`] checks it.
    ///
    /// # Errors
    ///
    /// A block is damaged, or the archive ends before the game does.
    pub fn rest_of_game(
        &mut self,
        block: &Block,
        sink: &mut dyn FnMut(Vec<u8>),
    ) -> Result<(), ArchiveError> {
        let mut continues = block.last_game_continues();
        let mut i = block.index;
        while continues {
            i += 1;
            let damaged = |reason: &str| ArchiveError::Damaged {
                block: i as u64 + 1,
                reason: reason.into(),
            };
            if i >= self.entries.len() {
                return Err(damaged(
                    "the game that the block before goes on with is missing",
                ));
            }
            let next = self.read_block(i)?;
            let wants = |g| {
                if g == CONTINUED {
                    block::Want::Text
                } else {
                    block::Want::Skip
                }
            };
            let mut pieces = 0;
            block::decode_block_with(
                self.codec.as_ref(),
                &next.payload,
                &wants,
                None,
                &mut |g, d| {
                    if let (CONTINUED, block::Decoded::Piece(t)) = (g, d) {
                        pieces += 1;
                        sink(t);
                    }
                },
                0,
            )
            .map_err(|reason| damaged(&reason))?;
            if pieces == 0 {
                return Err(damaged(
                    "the game that the block before goes on with is missing",
                ));
            }
            // A block of pieces alone may go on again.
            continues = self.entries[i].games == 0 && next.last_game_continues();
        }
        Ok(())
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
    pub(crate) index: usize,
    pub(super) payload: Vec<u8>,
    pub(super) text_crc: Option<u32>,
}

impl Block {
    /// The error of this block's payload not decoding, for `reason`.
    pub(crate) fn damaged(&self, reason: String) -> ArchiveError {
        ArchiveError::Damaged {
            block: self.index as u64 + 1,
            reason,
        }
    }

    /// Block `index` (0-based) with `payload` and no text checksum (for
    /// tests and fuzzing of payloads).
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

    /// Whether the block's last game is a text longer than 8 MiB that goes
    /// on at the start of the next block (see
    /// [`ArchiveReader::rest_of_game`] and [`CONTINUED`]).
    pub(crate) fn last_game_continues(&self) -> bool {
        block::last_game_continues(&self.payload)
    }
}

/// The bytes of the input that belong to no game, which the index keeps.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Ends {
    /// A byte order mark and blank lines before the first game.
    pub lead: Vec<u8>,
    /// The whitespace after the last game.
    pub tail: Vec<u8>,
}

/// Writes decompressed games as the file they came from: the lead first,
/// then the games, with the whitespace that ends the last one replaced by
/// the tail. Without [`Ends`] (a lost index) the games are written as they
/// are.
pub(crate) struct TextWriter<W: Write> {
    pub(super) w: W,
    pub(super) ends: Option<Ends>,
    /// Whitespace written last, held until more text follows.
    pub(super) pending: Vec<u8>,
    pub(super) started: bool,
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
