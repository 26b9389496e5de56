//! Archives of position files: EPD, FEN lists and CSV files with a `FEN`
//! column (the lichess puzzle database), stored line for line.
//!
//! Each line whose FEN comes back exactly from the decoded position (board,
//! side, castling, legal en-passant square as lichess writes them, then the
//! line's own clocks or EPD operations) has its position coded by
//! [`PositionModel`]; the text around it (CSV columns, EPD operations,
//! clocks) goes to a zstd-compressed text column. Any other line is kept
//! verbatim in that column. Decompression gives the file back byte for byte.
//!
//! Layout: the magic `CHPKPOS\n`, a format version byte, the codec name
//! (length byte + bytes), the model hash (u64 LE), a CRC-32 of those; then
//! blocks of up to `BLOCK_LINES` lines: `CPPB`, payload length, line count,
//! CRC-32 of the payload (u32 LE each), payload; then `CHPKEND\n`. A payload
//! is the zstd frame of: the lines' kinds (1 byte each), the position streams'
//! bit lengths (LEB128), the streams (whole bytes each), the text column.

use std::io::{self, BufRead, Read, Write};

use crate::archive::ArchiveError;
use crate::le::{read_leb, write_leb};
use crate::{
    Bits,
    position::{PositionCodec, PositionModel, parse_fen, to_epd},
};

/// The magic bytes of a position archive.
pub(crate) const MAGIC: &[u8; 8] = crate::archive::POSITIONS_MAGIC;
/// The position archive format version this library writes and reads.
pub(crate) const VERSION: u8 = 1;
/// Lines per block.
pub(crate) const BLOCK_LINES: usize = 1 << 16;
const END: &[u8; 8] = b"CHPKEND\n";
const CODEC: &str = "position-model";

/// What compressing a position file did ([`crate::files::compress`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct PositionReport {
    /// Lines read.
    pub lines: u64,
    /// Lines whose position went through the codec.
    pub positions: u64,
    /// Bits of those positions.
    pub position_bits: u64,
    /// Lines kept as text (headers, comments, FENs that do not come back
    /// exactly, invalid positions).
    pub verbatim: u64,
    /// 1-based numbers of the lines that are not UTF-8 (kept verbatim).
    pub not_utf8: Vec<u64>,
    /// 1-based numbers of the first lines kept as text (at most
    /// `KEPT_LINES`; [`PositionReport::verbatim`] counts them all).
    pub kept: Vec<u64>,
}

/// The most line numbers [`PositionReport::kept`] lists.
pub(crate) const KEPT_LINES: usize = 64;

/// Where the FEN is in a line.
#[derive(Clone, Copy, Debug)]
enum Layout {
    /// The whole line up to the first four (EPD) or six (FEN) fields.
    Leading,
    /// Comma-separated column `n`.
    Column(usize),
}

/// Splits `line` into (prefix, FEN text, suffix), or `None`.
fn split(line: &str, layout: Layout) -> Option<(usize, usize)> {
    match layout {
        Layout::Column(n) => {
            let mut start = 0;
            for _ in 0..n {
                start += line[start..].find(',')? + 1;
            }
            let end = line[start..].find(',').map_or(line.len(), |e| start + e);
            // The EPD fields of the column; clocks stay in the text.
            let (_, four) = split(&line[start..end], Layout::Leading)?;
            Some((start, start + four))
        }
        Layout::Leading => {
            // Four space-separated fields: board, side, castling, en passant.
            let mut end = 0;
            for i in 0..4 {
                let rest = &line[end..];
                let skip = if i == 0 { 0 } else { 1 };
                if i > 0 && !rest.starts_with(' ') {
                    return None;
                }
                let field = &rest[skip..];
                let len = field.find([' ', '\r']).unwrap_or(field.len());
                if len == 0 {
                    return None;
                }
                end += skip + len;
            }
            Some((0, end))
        }
    }
}

/// The four EPD fields of `fen`'s position if they render back as `fen`.
fn code_fen(fen: &str) -> Option<Bits> {
    let pos = parse_fen(fen).ok()?;
    (to_epd(&pos) == fen)
        .then(|| PositionModel.encode(&pos).ok())
        .flatten()
}

fn header() -> Vec<u8> {
    let mut h = MAGIC.to_vec();
    h.push(VERSION);
    h.push(CODEC.len() as u8);
    h.extend_from_slice(CODEC.as_bytes());
    h.extend_from_slice(&PositionModel.model_hash().to_le_bytes());
    let crc = crc32fast::hash(&h);
    h.extend_from_slice(&crc.to_le_bytes());
    h
}

fn encode_block(
    lines: &[Vec<u8>],
    layout: Option<Layout>,
    level: i32,
    report: &mut PositionReport,
) -> io::Result<Vec<u8>> {
    let mut kinds = Vec::with_capacity(lines.len());
    let mut lengths = Vec::new();
    let mut streams = Vec::new();
    let mut text = Vec::new();
    for bytes in lines {
        report.lines += 1;
        // A line that is not UTF-8 is kept verbatim, byte for byte.
        let text_line = std::str::from_utf8(bytes).ok();
        if text_line.is_none() {
            report.not_utf8.push(report.lines);
        }
        let coded = layout.zip(text_line).and_then(|(l, line)| {
            let (a, b) = split(line, l)?;
            let bits = code_fen(&line[a..b])?;
            Some((a, b, bits))
        });
        let line = bytes;
        match coded {
            Some((a, b, bits)) => {
                kinds.push(1u8);
                write_leb(&mut lengths, bits.len() as u64);
                streams.extend_from_slice(bits.as_bytes());
                report.positions += 1;
                report.position_bits += bits.len() as u64;
                text.extend_from_slice(&line[..a]);
                text.push(b'\n');
                text.extend_from_slice(&line[b..]);
                text.push(b'\n');
            }
            None => {
                kinds.push(0u8);
                report.verbatim += 1;
                if report.kept.len() < KEPT_LINES {
                    report.kept.push(report.lines);
                }
                text.extend_from_slice(line);
                text.push(b'\n');
            }
        }
    }
    let mut raw = Vec::new();
    for part in [&kinds, &lengths, &streams] {
        write_leb(&mut raw, part.len() as u64);
        raw.extend_from_slice(part);
    }
    raw.extend_from_slice(&text);
    zstd::bulk::compress(&raw, level)
}

/// Compresses a position file (`input`: EPD, FEN lines or CSV with a `FEN`
/// column, recognised from its first line) into a position archive.
///
/// ```
/// use chesspack::files::{self, Kind, Settings};
///
/// let go = &mut |_: &_| std::ops::ControlFlow::Continue(());
/// let text = "PuzzleId,FEN,Rating\nx1,8/8/8/4k3/8/8/4K3/7R w - - 0 1,900\n";
/// let mut archive = Vec::new();
/// let report = files::compress(Kind::Positions, text.as_bytes(), &mut archive, &Settings::default(), go).unwrap();
/// let report = report.positions.unwrap();
/// assert_eq!((report.positions, report.verbatim), (1, 1));
/// let mut back = Vec::new();
/// files::decompress(std::io::Cursor::new(&archive), &mut back, &Settings::default(), go).unwrap();
/// assert_eq!(back, text.as_bytes());
///
/// // A line that is not UTF-8 is kept byte for byte, and named.
/// let odd = b"8/8/8/4k3/8/8/4K3/7R w - -\n\xff\xfe junk\n";
/// let mut archive = Vec::new();
/// let report = files::compress(Kind::Positions, &odd[..], &mut archive, &Settings::default(), go).unwrap();
/// assert_eq!(report.positions.unwrap().not_utf8, [2]);
/// let mut back = Vec::new();
/// files::decompress(std::io::Cursor::new(&archive), &mut back, &Settings::default(), go).unwrap();
/// assert_eq!(back, odd);
/// ```
///
/// # Errors
///
/// [`ArchiveError::Io`] when reading or writing fails or the input is not
/// UTF-8.
pub(crate) fn compress(
    input: impl BufRead,
    mut output: impl Write,
    level: i32,
) -> Result<PositionReport, ArchiveError> {
    output.write_all(&header())?;
    let mut report = PositionReport::default();
    let mut layout = None;
    let mut first = true;
    let mut lines = Vec::with_capacity(1024);
    let mut ends_with_newline = true;
    let mut input = input;
    loop {
        let mut line = Vec::new();
        let n = input.read_until(b'\n', &mut line)?;
        let done = n == 0;
        if !done {
            ends_with_newline = line.ends_with(b"\n");
            if ends_with_newline {
                line.pop();
            }
            if first {
                first = false;
                let head = String::from_utf8_lossy(&line);
                let fields: Vec<&str> = head.split(',').collect();
                layout = Some(
                    match fields
                        .iter()
                        .position(|f| f.trim().eq_ignore_ascii_case("fen"))
                    {
                        Some(c) if fields.len() > 1 => Layout::Column(c),
                        _ => Layout::Leading,
                    },
                );
            }
            lines.push(line);
        }
        if lines.len() == BLOCK_LINES || (done && !lines.is_empty()) {
            let payload = encode_block(&lines, layout, level, &mut report)?;
            output.write_all(b"CPPB")?;
            output.write_all(&(payload.len() as u32).to_le_bytes())?;
            output.write_all(&(lines.len() as u32).to_le_bytes())?;
            output.write_all(&crc32fast::hash(&payload).to_le_bytes())?;
            output.write_all(&payload)?;
            lines.clear();
        }
        if done {
            break;
        }
    }
    output.write_all(&[u8::from(ends_with_newline)])?;
    output.write_all(END)?;
    output.flush()?;
    Ok(report)
}

fn decode_block(
    payload: &[u8],
    count: usize,
    block: u64,
    out: &mut Vec<u8>,
) -> Result<(), ArchiveError> {
    let damaged = |reason: &str| ArchiveError::Damaged {
        block,
        reason: reason.to_owned(),
    };
    let raw = zstd::bulk::decompress(payload, 1 << 30).map_err(|e| damaged(&e.to_string()))?;
    let mut at = 0;
    let part = |at: &mut usize| -> Result<&[u8], ArchiveError> {
        let n = read_leb(&raw, at).ok_or_else(|| damaged("truncated column"))? as usize;
        let s = raw
            .get(*at..at.saturating_add(n))
            .ok_or_else(|| damaged("truncated column"))?;
        *at += n;
        Ok(s)
    };
    let kinds = part(&mut at)?;
    let lengths = part(&mut at)?;
    let streams = part(&mut at)?;
    let text = &raw[at..];
    if kinds.len() != count {
        return Err(damaged("line count"));
    }
    let mut fields = text.split(|&b| b == b'\n');
    let (mut li, mut si) = (0, 0);
    for (i, &kind) in kinds.iter().enumerate() {
        let mut field = || {
            fields
                .next()
                .ok_or_else(|| damaged("text column too short"))
        };
        if i > 0 {
            out.push(b'\n');
        }
        match kind {
            0 => out.extend_from_slice(field()?),
            1 => {
                let len =
                    read_leb(lengths, &mut li).ok_or_else(|| damaged("bit lengths"))? as usize;
                let bytes = streams
                    .get(si..si + len.div_ceil(8))
                    .ok_or_else(|| damaged("streams"))?;
                si += len.div_ceil(8);
                let bits =
                    Bits::from_bytes(bytes.to_vec(), len).map_err(|e| damaged(&e.to_string()))?;
                let pos = PositionModel
                    .decode(&bits)
                    .map_err(|e| damaged(&format!("line {}: {e}", i + 1)))?;
                out.extend_from_slice(field()?);
                out.extend_from_slice(to_epd(&pos).as_bytes());
                out.extend_from_slice(field()?);
            }
            _ => return Err(damaged("bad line kind")),
        }
    }
    Ok(())
}

/// Decompresses a position archive; returns the number of lines.
///
/// # Errors
///
/// [`ArchiveError::NotAnArchive`], a damaged header, a model mismatch
/// ([`ArchiveError::CodecMismatch`]), a damaged block (named by number) or a
/// truncated file ([`ArchiveError::Index`]).
pub(crate) fn decompress(
    mut input: impl Read,
    mut output: impl Write,
) -> Result<u64, ArchiveError> {
    let mut data = Vec::new();
    input.read_to_end(&mut data)?;
    let own = header();
    if !data.starts_with(MAGIC) {
        return Err(ArchiveError::NotAnArchive);
    }
    if data.get(8) != Some(&VERSION) {
        return Err(ArchiveError::UnsupportedVersion(
            data.get(8).copied().unwrap_or(0),
        ));
    }
    let name_len = usize::from(
        *data
            .get(9)
            .ok_or_else(|| ArchiveError::Header("truncated".into()))?,
    );
    let header_len = 10 + name_len + 8 + 4;
    let h = data
        .get(..header_len)
        .ok_or_else(|| ArchiveError::Header("truncated".into()))?;
    let crc = crate::le::u32_at(h, header_len - 4);
    if crc32fast::hash(&h[..header_len - 4]) != crc {
        return Err(ArchiveError::Header("checksum mismatch".into()));
    }
    if h != own.as_slice() {
        return Err(ArchiveError::CodecMismatch {
            name: String::from_utf8_lossy(&h[10..10 + name_len]).into_owned(),
            hash: crate::le::u64_at(h, 10 + name_len),
            have: format!(
                " (this chesspack has {CODEC} with model {:016x})",
                PositionModel.model_hash()
            ),
        });
    }
    let mut at = header_len;
    let mut lines = 0u64;
    let mut block = 0u64;
    let mut out = Vec::new();
    loop {
        let rest = &data[at..];
        if rest.len() == 9 && &rest[1..] == END {
            if rest[0] == 1 && lines > 0 {
                output.write_all(b"\n")?;
            }
            break;
        }
        block += 1;
        if rest.len() < 16 || &rest[..4] != b"CPPB" {
            return Err(ArchiveError::Index(format!(
                "block {block} or the end marker is missing"
            )));
        }
        let word = |i: usize| crate::le::u32_at(rest, i) as usize;
        let (len, count, crc) = (word(4), word(8), word(12) as u32);
        let payload = rest
            .get(16..16 + len)
            .ok_or_else(|| ArchiveError::Index(format!("block {block} is truncated")))?;
        if crc32fast::hash(payload) != crc {
            return Err(ArchiveError::Damaged {
                block,
                reason: "checksum mismatch".into(),
            });
        }
        out.clear();
        if lines > 0 {
            out.push(b'\n');
        }
        decode_block(payload, count, block, &mut out)?;
        output.write_all(&out)?;
        lines += count as u64;
        at += 16 + len;
    }
    output.flush()?;
    Ok(lines)
}
