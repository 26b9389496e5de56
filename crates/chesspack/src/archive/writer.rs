//! Writing an archive: the header, the blocks in order, the index and the
//! footer.

use super::*;

/// Writes an archive: the header, then blocks in order, then the index.
pub(crate) struct ArchiveWriter<W: Write> {
    pub(super) w: W,
    pub(super) offset: u64,
    pub(super) entries: Vec<BlockEntry>,
    pub(super) games: u64,
    /// The first block's lead and the last block's tail.
    pub(super) lead: Vec<u8>,
    pub(super) tail: Vec<u8>,
    /// The header's bytes, copied into the index.
    pub(super) header: Vec<u8>,
    /// The search section, written after the blocks (empty: none).
    pub(crate) section: Vec<u8>,
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
            openings_hash: pinned_openings_hash(),
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
            header,
            section: Vec::new(),
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
        let section_at = self.offset;
        if !self.section.is_empty() {
            self.w.write_all(&self.section)?;
            self.offset += self.section.len() as u64;
        }
        let mut index = INDEX_MAGIC.to_vec();
        index.extend_from_slice(&(self.entries.len() as u32).to_le_bytes());
        for e in &self.entries {
            index.extend_from_slice(&e.offset.to_le_bytes());
            index.extend_from_slice(&e.len.to_le_bytes());
            index.extend_from_slice(&e.games.to_le_bytes());
        }
        // A copy of the header, which a reader uses when the header is
        // damaged.
        for end in [&self.lead, &self.tail, &self.header] {
            index.extend_from_slice(&(end.len() as u32).to_le_bytes());
            index.extend_from_slice(end);
        }
        if !self.section.is_empty() {
            index.extend_from_slice(&16u32.to_le_bytes());
            index.extend_from_slice(&section_at.to_le_bytes());
            index.extend_from_slice(&(self.section.len() as u64).to_le_bytes());
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

/// Puts `section` as the search section of the archive in `file`
/// (replacing the one it has): the blocks stay as they are, the file is
/// cut after them and the section, the index and the footer written
/// anew. An empty `section` leaves the archive without one.
///
/// # Errors
///
/// Not an archive of this format, a damaged header or index (which
/// `decompress --skip-damaged` can still read), or an I/O error.
pub(crate) fn replace_section(
    file: &mut std::fs::File,
    section: Vec<u8>,
) -> Result<(), ArchiveError> {
    let reader = ArchiveReader::open(&mut *file)?;
    if let Some(why) = reader.index_error().or(reader.header_error()) {
        return Err(ArchiveError::Index(why.to_owned()));
    }
    let end = reader.blocks_end();
    let ends = reader.ends.clone().unwrap_or_default();
    let entries = reader.entries.clone();
    let games = reader.games();
    let header = reader.header().to_bytes();
    drop(reader);
    file.set_len(end)?;
    file.seek(SeekFrom::Start(end))?;
    let writer = ArchiveWriter {
        w: io::BufWriter::new(&mut *file),
        offset: end,
        entries,
        games,
        lead: ends.lead,
        tail: ends.tail,
        header,
        section,
    };
    writer.finish()?;
    file.sync_all()?;
    Ok(())
}
