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

/// The footer and the index's bytes (without their CRC), checked: the
/// footer's marker, an index offset from `min_offset` on, the CRC (of the
/// index and the footer's offset and game count) and the index marker.
fn index_bytes(
    r: &mut (impl Read + Seek),
    min_offset: u64,
    file_len: u64,
) -> Result<([u8; FOOTER_LEN as usize], Vec<u8>), String> {
    let io = |e: io::Error| e.to_string();
    if file_len < min_offset + FOOTER_LEN {
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
    if index_offset < min_offset || index_offset.saturating_add(12) > index_end {
        return Err("bad index offset".into());
    }
    let mut index = vec![0u8; (index_end - index_offset) as usize];
    r.seek(SeekFrom::Start(index_offset)).map_err(io)?;
    r.read_exact(&mut index).map_err(io)?;
    let crc = index.split_off(index.len() - 4);
    let mut hasher = crc32fast::Hasher::new();
    hasher.update(&index);
    // The footer's index offset and game count.
    hasher.update(&footer[..16]);
    if hasher.finalize() != crate::le::u32_at(&crc, 0) {
        return Err("index checksum mismatch".into());
    }
    if &index[..4] != INDEX_MAGIC {
        return Err("bad index marker".into());
    }
    Ok((footer, index))
}

/// The index's block entries (at `body[8..]`, as many as `body[4..8]` says)
/// and the rest of the index after them.
fn entries_and_rest(body: &[u8]) -> Result<(&[u8], &[u8]), String> {
    let n = crate::le::u32_at(body, 4) as usize;
    let entries_end = n.saturating_mul(16).saturating_add(8);
    if body.len() < entries_end {
        return Err("bad index length".into());
    }
    Ok((&body[8..entries_end], &body[entries_end..]))
}

/// One of the index's ends (a `u32` length and the bytes) from the front
/// of `rest`.
fn take_end<'a>(rest: &mut &'a [u8]) -> Result<&'a [u8], String> {
    let (len, after) = rest.split_at_checked(4).ok_or("bad index length")?;
    let len = crate::le::u32_at(len, 0) as usize;
    let (bytes, after) = after.split_at_checked(len).ok_or("bad index length")?;
    *rest = after;
    Ok(bytes)
}

/// What the index says: where the blocks are, the file's ends, and the
/// search section's offset and length where the archive has one.
pub(super) type IndexParts = (Vec<BlockEntry>, Ends, Option<(u64, u64)>);

pub(super) fn read_index(
    r: &mut (impl Read + Seek),
    header_len: u64,
    file_len: u64,
) -> Result<IndexParts, String> {
    let (footer, body) = index_bytes(r, header_len, file_len)?;
    let mut index_offset = crate::le::u64_at(&footer, 0);
    let (entry_bytes, mut rest) = entries_and_rest(&body)?;
    let lead = take_end(&mut rest)?.to_vec();
    let tail = take_end(&mut rest)?.to_vec();
    // The header's copy, read by [`header_from_index`].
    take_end(&mut rest)?;
    // The search section, between the blocks and the index, where there
    // is one: its offset and length.
    let section = if rest.is_empty() {
        None
    } else {
        let at = take_end(&mut rest)?;
        if at.len() != 16 {
            return Err("bad index length".into());
        }
        let (offset, len) = (crate::le::u64_at(at, 0), crate::le::u64_at(at, 8));
        if offset.checked_add(len) != Some(index_offset) {
            return Err("bad search section offset".into());
        }
        index_offset = offset;
        Some((offset, len))
    };
    if !rest.is_empty() {
        return Err("bad index length".into());
    }
    let ends = Ends { lead, tail };
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
    if games != entries.iter().map(|e| u64::from(e.games)).sum::<u64>() {
        return Err("footer game count does not match the index".into());
    }
    Ok((entries, ends, section))
}

/// The header from the copy in the index, for an archive whose
/// header is damaged: the header and its length, or `None` where the
/// footer, the index or the copy is missing or damaged. [`read_index`]
/// then checks the index against the blocks.
pub(super) fn header_from_index(
    r: &mut (impl Read + Seek),
    file_len: u64,
) -> Option<(Header, u64)> {
    let (_, body) = index_bytes(r, 0, file_len).ok()?;
    let (_, mut rest) = entries_and_rest(&body).ok()?;
    // The lead, the tail, then the copy.
    take_end(&mut rest).ok()?;
    take_end(&mut rest).ok()?;
    let mut copy = take_end(&mut rest).ok()?;
    let (header, len) = Header::read(&mut copy).ok()?;
    copy.is_empty().then_some((header, len))
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
