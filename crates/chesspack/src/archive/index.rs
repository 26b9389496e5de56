//! The index at the end of an archive (where each block is, how many
//! games it holds) and the footer that finds it; without them, the blocks
//! found by walking their frames.

use super::*;

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

pub(super) fn read_index(
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
    let index_offset = crate::le::u64_at(&footer, 0);
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
    if hasher.finalize() != crate::le::u32_at(crc, 0) {
        return Err("index checksum mismatch".into());
    }
    if &body[..4] != INDEX_MAGIC {
        return Err("bad index marker".into());
    }
    let n = crate::le::u32_at(body, 4) as usize;
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
            let len = crate::le::u32_at(len, 0) as usize;
            let (bytes, after) = after.split_at_checked(len).ok_or("bad index length")?;
            rest = after;
            Ok(bytes.to_vec())
        };
        let lead = take_end()?;
        let tail = take_end()?;
        if version >= HEADER_COPY_VERSION {
            // The header's copy, read by [`header_from_index`].
            take_end()?;
        }
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
            offset: crate::le::u64_at(c, 0),
            len: crate::le::u32_at(c, 8),
            games: crate::le::u32_at(c, 12),
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
    let games = crate::le::u64_at(&footer, 8);
    if checked && games != entries.iter().map(|e| u64::from(e.games)).sum::<u64>() {
        return Err("footer game count does not match the index".into());
    }
    Ok((entries, ends))
}

/// The header from the copy in the index (format 13), for an archive whose
/// header is damaged: the header and its length, or `None` where the
/// footer, the index or the copy is missing or damaged.
pub(super) fn header_from_index(
    r: &mut (impl Read + Seek),
    file_len: u64,
) -> Option<(Header, u64)> {
    if file_len < FOOTER_LEN + 12 {
        return None;
    }
    r.seek(SeekFrom::Start(file_len - FOOTER_LEN)).ok()?;
    let mut footer = [0u8; FOOTER_LEN as usize];
    r.read_exact(&mut footer).ok()?;
    if &footer[16..] != FOOTER_MAGIC {
        return None;
    }
    let index_offset = crate::le::u64_at(&footer, 0);
    let index_end = file_len - FOOTER_LEN;
    if index_offset.saturating_add(12) > index_end {
        return None;
    }
    let mut index = vec![0u8; (index_end - index_offset) as usize];
    r.seek(SeekFrom::Start(index_offset)).ok()?;
    r.read_exact(&mut index).ok()?;
    let (body, crc) = index.split_at(index.len() - 4);
    let mut hasher = crc32fast::Hasher::new();
    hasher.update(body);
    hasher.update(&footer[..16]);
    if hasher.finalize() != crate::le::u32_at(crc, 0) || &body[..4] != INDEX_MAGIC {
        return None;
    }
    let n = crate::le::u32_at(body, 4) as usize;
    let mut rest = body.get(n.checked_mul(16)?.checked_add(8)?..)?;
    let mut ends = Vec::with_capacity(3);
    for _ in 0..3 {
        let (len, after) = rest.split_at_checked(4)?;
        let len = crate::le::u32_at(len, 0) as usize;
        let (bytes, after) = after.split_at_checked(len)?;
        ends.push(bytes);
        rest = after;
    }
    let mut copy = ends[2];
    let (header, len) = Header::read(&mut copy).ok()?;
    (header.version >= HEADER_COPY_VERSION && copy.is_empty()).then_some((header, len))
}

/// Finds blocks by walking their frames from the header on, stopping at the
/// first frame that is not a block.
pub(super) fn scan_blocks(
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
        let len = crate::le::u32_at(&frame, 4);
        let games = crate::le::u32_at(&frame, 8);
        if len > MAX_PAYLOAD || offset + BLOCK_HEADER_LEN + u64::from(len) > file_len {
            break;
        }
        entries.push(BlockEntry { offset, len, games });
        offset += BLOCK_HEADER_LEN + u64::from(len);
    }
    Ok(entries)
}
