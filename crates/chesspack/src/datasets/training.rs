//! Archives of engine training data: Stockfish's `.binpack` files, stored
//! as moves coded by a move model and scores coded by an adaptive model of
//! the change from the previous score, given back byte for byte.
//!
//! Each binpack chunk is one block. Its chains (a stem position, then the
//! plies played from it, each with the engine's score) are coded as
//! - the stem's position by `position-model`, or its 24 packed bytes where
//!   that would not give them back;
//! - every move, the stem's first, by the archive's move codec (`fast`),
//!   one range-coded stream a block;
//! - every score by `ScoreCoder`, one adaptive binary stream a block;
//! - the ply, result, 50-move counter and ply count as LEB128 numbers in a
//!   zstd-compressed column.
//!
//! Whatever chesspack cannot read or would not write back the same (a
//! chain with an illegal move, a non-standard bit pattern, bytes that are
//! not a chunk) is kept as it is, so decompressing gives the input back
//! byte for byte, and the reference reader reads the same entries.
//!
//! Layout: the magic `CHPKTRN\n`, a format version byte, the move codec's
//! name (length byte + bytes), its model hash (u64 LE), a CRC-32 of those;
//! then blocks: `CPTB`, payload length, positions, CRC-32 of the payload
//! (u32 LE each), payload; then the index (`CPTI`, block count u32, each
//! block's offset and positions as u64 LE), the index's offset (u64 LE) and
//! `CHPKTEND`. A payload is a kind byte (0: a chunk; 1: bytes that follow
//! no chunk header), then the LEB128 lengths of its sections and the
//! sections: the zstd-compressed column of numbers, the stem positions'
//! bits, the moves' range-coded stream, the scores' binary stream, and the
//! zstd-compressed bytes kept as they are.

use std::io::{self, Read, Seek, SeekFrom, Write};

use shakmaty::{CastlingMode, Chess, EnPassantMode, Move, Position};

use crate::archive::ArchiveError;
use crate::le::{read_leb, write_leb};
use crate::{
    Bits,
    binpack::{self, Chain, Item},
    coder::{BinaryDecoder, BinaryEncoder, BitModel, Decoder, Encoder},
    game::{GameCodec, ModelCodec},
    position::{PositionCodec, PositionModel},
    viriformat,
};

/// The magic bytes of a training-data archive.
pub(crate) const MAGIC: &[u8; 8] = crate::archive::TRAINING_MAGIC;
/// The training-data archive format version this library writes and reads.
const VERSION: u8 = 1;
const END: &[u8; 8] = b"CHPKTEND";
const BLOCK: &[u8; 4] = b"CPTB";
const INDEX: &[u8; 4] = b"CPTI";
/// zstd level of the numbers and kept bytes (the game archives' default:
/// 19 gained nothing on these small columns).
const LEVEL: i32 = 15;
/// The most bytes a block's sections may claim when read back.
const MAX_SECTION: usize = 1 << 31;

/// What compressing engine training data did ([`crate::files::compress`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct TrainingReport {
    /// Bytes read.
    pub bytes_in: u64,
    /// Bytes written.
    pub bytes_out: u64,
    /// Blocks written (binpack chunks, and bytes after the last one).
    pub blocks: u64,
    /// Chains coded.
    pub chains: u64,
    /// Positions coded (each chain's stem and plies).
    pub positions: u64,
    /// Bytes kept as they are.
    pub kept_bytes: u64,
    /// Bits of the coded moves.
    pub move_bits: u64,
    /// Bits of the coded scores.
    pub score_bits: u64,
    /// Bytes of everything else: stems, numbers, headers, the index.
    pub other_bytes: u64,
}

impl TrainingReport {
    fn add(&mut self, other: &TrainingReport) {
        self.blocks += other.blocks;
        self.chains += other.chains;
        self.positions += other.positions;
        self.kept_bytes += other.kept_bytes;
        self.move_bits += other.move_bits;
        self.score_bits += other.score_bits;
    }
}

fn header(codec: &ModelCodec) -> Vec<u8> {
    let mut h = MAGIC.to_vec();
    h.push(VERSION);
    let name = codec.name();
    h.push(name.len() as u8);
    h.extend_from_slice(name.as_bytes());
    h.extend_from_slice(&codec.model_hash().to_le_bytes());
    let crc = crc32fast::hash(&h);
    h.extend_from_slice(&crc.to_le_bytes());
    h
}

/// The codec a header names, where this library has its model.
fn codec_named(name: &[u8], hash: u64) -> Option<ModelCodec> {
    match name {
        b"fast" => Some(ModelCodec::fast()).filter(|c| c.model_hash() == hash),
        b"brisk" => Some(ModelCodec::brisk()).filter(|c| c.model_hash() == hash),
        b"model" => ModelCodec::with_model_hash(hash),
        _ => None,
    }
}

/// Compresses a binpack with the move codec `codec` (`fast`, the default
/// of the command line, or `model`: smaller, slower), `threads` chunks at a
/// time on the rayon pool (0: one a core).
///
/// Input that starts with `fen ` is nnue-pytorch's `.plain` text (`fen`,
/// `move`, `score`, `ply`, `result`, `e` lines): it is written as a binpack
/// first, cut into chains and chunks as Stockfish's writer cuts them (a
/// position that follows from the previous one's move, at the next ply,
/// with the result negated, continues its chain), and the archive holds
/// that binpack.
///
/// # Errors
///
/// Reading or writing fails (`.plain` text that does not read is an
/// [`io::ErrorKind::InvalidData`] error naming the line); a move the codec
/// cannot code (a bug).
pub(crate) fn compress(
    mut input: impl Read,
    output: impl Write,
    codec: &ModelCodec,
    threads: usize,
) -> Result<TrainingReport, ArchiveError> {
    let mut head = Vec::with_capacity(4);
    (&mut input).take(4).read_to_end(&mut head)?;
    if head == b"fen " {
        let mut text = String::from_utf8(head).expect("ascii");
        input.read_to_string(&mut text)?;
        let binpack = binpack::binpack_of(&binpack::parse_plain(&text).map_err(invalid)?);
        compress_binpack(&mut io::Cursor::new(binpack), output, codec, threads)
    } else {
        compress_binpack(
            &mut io::Cursor::new(head).chain(input),
            output,
            codec,
            threads,
        )
    }
}

/// An error of the input's data as an I/O error of kind `InvalidData`.
fn invalid(e: crate::Error) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, e.to_string())
}

/// Compresses viriformat games (the viridithas engine's training data) as
/// [`compress`] does a binpack: each game becomes a binpack chain, its
/// scores and result the side to move's ([`TrainingReader::viriformat`]
/// writes the games back byte for byte).
///
/// Front ends reach it through [`crate::files::compress`]:
///
/// ```
/// use chesspack::{datasets::training, files::{self, Kind, Settings}};
///
/// // 1. e4 (+10 for White) e5 (+20), a draw.
/// let mut vf = vec![0xff, 0xff, 0, 0, 0, 0, 0xff, 0xff, 0x16, 0x42, 0x25, 0x61, 0, 0, 0, 0];
/// vf.extend([0x88, 0x88, 0x88, 0x88, 0x9e, 0xca, 0xad, 0xe9, 0x40, 0, 1, 0, 0, 0, 1, 0]);
/// vf.extend([0x0c, 0x07, 10, 0, 0x34, 0x09, 20, 0, 0, 0, 0, 0]);
/// let mut archive = Vec::new();
/// let go = &mut |_: &_| std::ops::ControlFlow::Continue(());
/// let r = files::compress(Kind::Viriformat, &vf[..], &mut archive, &Settings::default(), go).unwrap();
/// let r = r.training.unwrap();
/// assert_eq!((r.chains, r.positions), (1, 2));
/// let mut reader = training::TrainingReader::open(std::io::Cursor::new(archive)).unwrap();
/// assert_eq!(reader.viriformat(0).unwrap(), vf);
/// assert_eq!(reader.rows(0).unwrap().score, [10, -20]);
/// ```
///
/// # Errors
///
/// Games chesspack cannot keep byte for byte are an
/// [`io::ErrorKind::InvalidData`] error naming the game and its byte
/// offset (a truncated game, an illegal move, a start position with a
/// score, Chess960 castling); reading or writing fails.
pub(crate) fn compress_viriformat(
    mut input: impl Read,
    output: impl Write,
    codec: &ModelCodec,
    threads: usize,
) -> Result<TrainingReport, ArchiveError> {
    let mut data = Vec::new();
    input.read_to_end(&mut data)?;
    let games = viriformat::read_games(&data).map_err(invalid)?;
    let binpack = binpack::binpack_of(&viriformat::entries_of(&games).map_err(invalid)?);
    let mut report = compress_binpack(&mut io::Cursor::new(binpack), output, codec, threads)?;
    report.bytes_in = data.len() as u64;
    Ok(report)
}

/// [`compress`] of a binpack.
fn compress_binpack(
    input: &mut dyn Read,
    mut output: impl Write,
    codec: &ModelCodec,
    threads: usize,
) -> Result<TrainingReport, ArchiveError> {
    let mut report = TrainingReport::default();
    let h = header(codec);
    output.write_all(&h)?;
    let mut at = h.len() as u64;
    let mut index = Vec::new();
    // The chunks coded on the pipeline's workers, written in order.
    let mut input = input;
    let pieces = std::iter::from_fn(|| {
        next_piece(&mut input)
            .map_err(ArchiveError::from)
            .transpose()
    });
    crate::archive::pipeline::Pipeline::with_threads(threads).ordered(
        pieces,
        |piece| (encode_block(&piece, codec), piece.bytes_in),
        |(encoded, bytes_in)| {
            let (bytes, r) = encoded?;
            report.bytes_in += bytes_in;
            index.push((at, r.positions));
            output.write_all(&bytes)?;
            at += bytes.len() as u64;
            report.add(&r);
            Ok(())
        },
    )?;
    let mut tail = INDEX.to_vec();
    tail.extend_from_slice(&(index.len() as u32).to_le_bytes());
    for (offset, positions) in &index {
        tail.extend_from_slice(&offset.to_le_bytes());
        tail.extend_from_slice(&positions.to_le_bytes());
    }
    tail.extend_from_slice(&at.to_le_bytes());
    tail.extend_from_slice(END);
    output.write_all(&tail)?;
    output.flush()?;
    report.bytes_out = at + tail.len() as u64;
    // Kept bytes are stored compressed: the rest is at least 0.
    report.other_bytes = report
        .bytes_out
        .saturating_sub((report.move_bits + report.score_bits).div_ceil(8))
        .saturating_sub(report.kept_bytes);
    Ok(report)
}

/// A chunk's body, or bytes that follow no chunk header.
struct Piece {
    chunk: bool,
    bytes: Vec<u8>,
    bytes_in: u64,
}

/// The next chunk of `input`, or what is left of it where no chunk starts.
fn next_piece(input: &mut impl Read) -> io::Result<Option<Piece>> {
    let mut head = Vec::with_capacity(8);
    input.by_ref().take(8).read_to_end(&mut head)?;
    if head.is_empty() {
        return Ok(None);
    }
    if head.len() == 8 && &head[..4] == binpack::CHUNK_MAGIC {
        let size = u64::from(crate::le::u32_at(&head, 4));
        let mut body = Vec::new();
        input.by_ref().take(size).read_to_end(&mut body)?;
        if body.len() as u64 == size {
            return Ok(Some(Piece {
                chunk: true,
                bytes_in: size + 8,
                bytes: body,
            }));
        }
        head.extend_from_slice(&body);
    }
    input.read_to_end(&mut head)?;
    Ok(Some(Piece {
        chunk: false,
        bytes_in: head.len() as u64,
        bytes: head,
    }))
}

/// Codes one block: its bytes (block header included) and what it holds.
fn encode_block(
    piece: &Piece,
    codec: &ModelCodec,
) -> Result<(Vec<u8>, TrainingReport), ArchiveError> {
    let mut r = TrainingReport {
        blocks: 1,
        ..TrainingReport::default()
    };
    let mut numbers = Vec::new();
    let mut stems = crate::bits::BitWriter::new();
    let mut kept = Vec::new();
    let mut moves = Encoder::new();
    let mut scores = BinaryEncoder::new();
    let mut coder = ScoreCoder::new();
    if piece.chunk {
        for item in binpack::parse_chunk(&piece.bytes) {
            match item {
                Item::Chain(chain, _) => {
                    numbers.push(0);
                    encode_chain(
                        &chain,
                        codec,
                        &mut numbers,
                        &mut stems,
                        &mut kept,
                        &mut moves,
                        &mut scores,
                        &mut coder,
                    )?;
                    r.chains += 1;
                    r.positions += chain.moves.len() as u64;
                }
                Item::Raw(bytes) => {
                    numbers.push(1);
                    write_leb(&mut numbers, bytes.len() as u64);
                    kept.extend_from_slice(bytes);
                    r.kept_bytes += bytes.len() as u64;
                }
            }
        }
    } else {
        kept.extend_from_slice(&piece.bytes);
        r.kept_bytes += piece.bytes.len() as u64;
    }
    let moves = moves.finish();
    let scores = scores.finish();
    r.move_bits = moves.len() as u64;
    r.score_bits = scores.len() as u64 * 8;
    let stems = stems.finish();
    let numbers = zstd::bulk::compress(&numbers, LEVEL)?;
    let kept_z = zstd::bulk::compress(&kept, LEVEL)?;
    let mut payload = vec![u8::from(!piece.chunk)];
    for len in [
        numbers.len(),
        stems.as_bytes().len(),
        moves.as_bytes().len(),
        scores.len(),
        kept_z.len(),
    ] {
        write_leb(&mut payload, len as u64);
    }
    write_leb(&mut payload, stems.len() as u64);
    write_leb(&mut payload, moves.len() as u64);
    payload.extend_from_slice(&numbers);
    payload.extend_from_slice(stems.as_bytes());
    payload.extend_from_slice(moves.as_bytes());
    payload.extend_from_slice(&scores);
    payload.extend_from_slice(&kept_z);
    let mut out = BLOCK.to_vec();
    out.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    out.extend_from_slice(&(r.positions as u32).to_le_bytes());
    out.extend_from_slice(&crc32fast::hash(&payload).to_le_bytes());
    out.extend_from_slice(&payload);
    Ok((out, r))
}

#[allow(clippy::too_many_arguments)]
fn encode_chain(
    chain: &Chain,
    codec: &ModelCodec,
    numbers: &mut Vec<u8>,
    stems: &mut crate::bits::BitWriter,
    kept: &mut Vec<u8>,
    moves: &mut Encoder,
    scores: &mut BinaryEncoder,
    coder: &mut ScoreCoder,
) -> Result<(), ArchiveError> {
    write_leb(numbers, chain.moves.len() as u64 - 1);
    write_leb(numbers, u64::from(chain.ply));
    numbers.push(chain.result);
    write_leb(numbers, u64::from(chain.rule50));
    match stem_bits(chain) {
        Some(bits) => {
            numbers.push(0);
            write_leb(numbers, bits.len() as u64);
            stems.write_bits(&bits);
        }
        None => {
            numbers.push(1);
            let mut packed = Vec::with_capacity(34);
            chain.write(&mut packed);
            kept.extend_from_slice(&packed[..24]);
        }
    }
    codec
        .encode_into(&chain.pos, &chain.moves, moves)
        .map_err(|e| ArchiveError::Header(format!("move codec: {e}")))?;
    let mut state = ScoreState::default();
    for (&m, &s) in chain.moves.iter().zip(&chain.scores) {
        coder.encode(scores, &state, s);
        state.played(m, s);
    }
    Ok(())
}

/// The stem's position as `position-model` codes it, where that gives the
/// same packed bytes back.
fn stem_bits(chain: &Chain) -> Option<Bits> {
    let bits = PositionModel.encode(&chain.pos).ok()?;
    let back = stem_position(&bits, chain.ply, chain.rule50).ok()?;
    (binpack::pack_position(&back) == binpack::pack_position(&chain.pos)
        && back.ep_square(EnPassantMode::Always) == chain.pos.ep_square(EnPassantMode::Always))
    .then_some(bits)
}

/// The stem position coded as `bits`, with the stem's clocks.
fn stem_position(bits: &Bits, ply: u16, rule50: u16) -> Result<Chess, String> {
    let pos = PositionModel.decode(bits).map_err(|e| e.to_string())?;
    let mut setup = pos.to_setup(EnPassantMode::Always);
    setup.halfmoves = u32::from(rule50);
    setup.fullmoves = std::num::NonZeroU32::new(u32::from(ply / 2) + 1).expect("at least 1");
    shakmaty::FromSetup::from_setup(setup, CastlingMode::Standard).map_err(|e| e.to_string())
}

/// The score model's state along one chain.
#[derive(Default)]
struct ScoreState {
    /// The previous score (0 at a stem).
    prev: i32,
    /// Scores seen in this chain.
    seen: usize,
    /// Whether the last move was a capture.
    capture: bool,
    /// The last changes (from the negated score before), newest at
    /// `seen % 8`.
    changes: [i32; 8],
}

/// Score contexts of the change's bit length: the size of the previous
/// score (5) × whether the move since was a capture (2) × the previous
/// change's bit length (8) × the mean bit length of the last 8 changes (8)
/// × the phase of the chain (4); one more for stems.
const LENGTH_CONTEXTS: usize = 5 * 2 * 8 * 8 * 4 + 1;
/// Sign contexts: the previous change's sign (3) × the change's length (19)
/// × the size of the previous score (5).
const SIGN_CONTEXTS: usize = 3 * 19 * 5;

/// The bit length of `v`'s size, at most `max`.
fn size_bucket(v: u32, max: usize) -> usize {
    ((32 - v.leading_zeros()) as usize).min(max)
}

impl ScoreState {
    /// After the move `m`, whose position's score was `score`.
    fn played(&mut self, m: Move, score: i16) {
        let s = i32::from(score);
        if self.seen > 0 {
            self.changes[self.seen % 8] = s + self.prev;
        }
        self.prev = s;
        self.seen += 1;
        self.capture = m.is_capture();
    }

    fn last_change(&self) -> i32 {
        if self.seen > 1 {
            self.changes[(self.seen - 1) % 8]
        } else {
            0
        }
    }

    fn score_size(&self) -> usize {
        match self.prev.unsigned_abs() {
            0..30 => 0,
            30..100 => 1,
            100..300 => 2,
            300..1000 => 3,
            _ => 4,
        }
    }

    fn length_context(&self) -> usize {
        if self.seen == 0 {
            return LENGTH_CONTEXTS - 1;
        }
        let known = (self.seen - 1).min(8);
        let mean = if known == 0 {
            0
        } else {
            let sum: u32 = (0..known)
                .map(|i| self.changes[(self.seen - 1 - i) % 8].unsigned_abs())
                .sum();
            sum / known as u32
        };
        let phase = (self.seen / 40).min(3);
        ((((self.score_size() * 2 + usize::from(self.capture)) * 8
            + size_bucket(self.last_change().unsigned_abs(), 7))
            * 8
            + size_bucket(mean, 7))
            * 4)
            + phase
    }

    fn sign_context(&self, n: u32) -> usize {
        let sign = match self.last_change().signum() {
            -1 => 0,
            0 => 1,
            _ => 2,
        };
        (sign * 19 + n as usize) * 5 + self.score_size()
    }
}

/// The bits below the top one of an `n`-bit change: how many are coded
/// by a tree of adaptive bits, how many as they are.
fn mantissa(n: u32) -> (u32, u32) {
    let below = n - 1;
    (below.min(5), below.saturating_sub(5))
}

/// Codes each score as its change from the negated previous score (the
/// stem's from 0): the change's bit length by context, its sign, its first
/// bit below the top one by length, and the rest as they are.
struct ScoreCoder {
    lengths: Vec<BitModel>,
    signs: Vec<BitModel>,
    first: Vec<BitModel>,
}

impl ScoreCoder {
    fn new() -> ScoreCoder {
        ScoreCoder {
            lengths: vec![BitModel::warm(); LENGTH_CONTEXTS * 32],
            signs: vec![BitModel::warm(); SIGN_CONTEXTS],
            first: vec![BitModel::warm(); 32 * 8 * 64],
        }
    }

    fn encode(&mut self, enc: &mut BinaryEncoder, state: &ScoreState, score: i16) {
        let ctx = state.length_context();
        let change = i32::from(score) + state.prev;
        let v = change.unsigned_abs();
        let n = 32 - v.leading_zeros();
        enc.encode_tree(&mut self.lengths[ctx * 32..(ctx + 1) * 32], 5, n);
        if n > 0 {
            enc.encode_bit(&mut self.signs[state.sign_context(n)], change < 0);
            if n > 1 {
                let (tree, low) = mantissa(n);
                let f = (n as usize * 8 + size_bucket(state.last_change().unsigned_abs(), 7)) * 64;
                let top = (v >> low) & ((1 << tree) - 1);
                enc.encode_tree(&mut self.first[f..f + 64], tree, top);
                if low > 0 {
                    enc.encode_direct(v & ((1 << low) - 1), low);
                }
            }
        }
    }

    fn decode(&mut self, dec: &mut BinaryDecoder<'_>, state: &ScoreState) -> Option<i16> {
        let ctx = state.length_context();
        let n = dec.decode_tree(&mut self.lengths[ctx * 32..(ctx + 1) * 32], 5);
        if n > 18 {
            return None;
        }
        let mut v = 0u32;
        let mut negative = false;
        if n > 0 {
            negative = dec.decode_bit(&mut self.signs[state.sign_context(n)]);
            v = 1;
            if n > 1 {
                let (tree, low) = mantissa(n);
                let f = (n as usize * 8 + size_bucket(state.last_change().unsigned_abs(), 7)) * 64;
                v = v << tree | dec.decode_tree(&mut self.first[f..f + 64], tree);
                if low > 0 {
                    v = v << low | dec.decode_direct(low);
                }
            }
        }
        let change = if negative { -(v as i32) } else { v as i32 };
        i16::try_from(change - state.prev).ok()
    }
}

/// A piece of a decoded block, as [`decode_block`] hands it on.
pub(crate) enum Part<'a> {
    /// A chain.
    Chain(&'a Chain),
    /// This many bytes kept as they are (no chain).
    Kept(usize),
}

/// A payload's kind byte, its seven section lengths (the five sections'
/// bytes, then the stems' and the moves' bits) and its five sections.
type Sections<'a> = (u8, [usize; 7], [&'a [u8]; 5]);

/// The [`Sections`] of `payload`.
fn sections_of(payload: &[u8]) -> Result<Sections<'_>, &'static str> {
    let kind = *payload.first().ok_or("empty block")?;
    let mut at = 1;
    let mut lens = [0usize; 7];
    for l in &mut lens {
        *l = read_leb(payload, &mut at)
            .filter(|&v| v < MAX_SECTION as u64)
            .ok_or("section lengths are damaged")? as usize;
    }
    let mut sections = [&payload[..0]; 5];
    for (s, &len) in sections.iter_mut().zip(&lens[..5]) {
        *s = payload.get(at..at + len).ok_or("a section is truncated")?;
        at += len;
    }
    Ok((kind, lens, sections))
}

/// What a block decodes to: the binpack bytes it came from, and, when asked
/// for, each of its chains and kept pieces in order, to `each`.
pub(crate) fn decode_block(
    payload: &[u8],
    codec: &ModelCodec,
    block: u64,
    mut chunk: Option<&mut Vec<u8>>,
    mut each: Option<&mut dyn FnMut(Part<'_>)>,
) -> Result<u64, ArchiveError> {
    let damaged = |reason: String| ArchiveError::Damaged { block, reason };
    let (kind, lens, sections) = sections_of(payload).map_err(|e| damaged(e.into()))?;
    let numbers = unzstd(sections[0]).map_err(|e| damaged(format!("numbers: {e}")))?;
    let kept = unzstd(sections[4]).map_err(|e| damaged(format!("kept bytes: {e}")))?;
    if kind == 1 {
        if let Some(out) = chunk.as_deref_mut() {
            out.extend_from_slice(&kept);
        }
        if let Some(each) = each.as_deref_mut() {
            each(Part::Kept(kept.len()));
        }
        return Ok(0);
    }
    let stems = Bits::from_bytes(sections[1].to_vec(), lens[5])
        .map_err(|e| damaged(format!("stems: {e}")))?;
    let mut stems = stems.reader();
    let move_bits = Bits::from_bytes(sections[2].to_vec(), lens[6])
        .map_err(|e| damaged(format!("moves: {e}")))?;
    let mut moves = Decoder::new(&move_bits);
    let mut scores = BinaryDecoder::new(sections[3]);
    let mut coder = ScoreCoder::new();
    let mut body = Vec::new();
    let (mut n, mut k) = (0usize, 0usize);
    let mut positions = 0u64;
    let mut chain_moves = Vec::new();
    let mut chains = 0u64;
    while n < numbers.len() {
        let item = numbers[n];
        n += 1;
        let num = |n: &mut usize| {
            read_leb(&numbers, n).ok_or_else(|| damaged("numbers are truncated".into()))
        };
        if item == 1 {
            let len = num(&mut n)? as usize;
            let bytes = kept
                .get(k..k + len)
                .ok_or_else(|| damaged("kept bytes are truncated".into()))?;
            body.extend_from_slice(bytes);
            k += len;
            if let Some(each) = each.as_deref_mut() {
                each(Part::Kept(len));
            }
            continue;
        }
        chains += 1;
        let chain_error = |e: String| damaged(format!("chain {chains}: {e}"));
        let plies = num(&mut n)? as usize + 1;
        if plies > 1 << 16 {
            return Err(chain_error("too many plies".into()));
        }
        let ply = u16::try_from(num(&mut n)?).map_err(|_| chain_error("bad ply".into()))?;
        let result = *numbers
            .get(n)
            .ok_or_else(|| chain_error("truncated".into()))?;
        n += 1;
        let rule50 = u16::try_from(num(&mut n)?).map_err(|_| chain_error("bad counter".into()))?;
        let stem_kind = *numbers
            .get(n)
            .ok_or_else(|| chain_error("truncated".into()))?;
        n += 1;
        let pos = if stem_kind == 0 {
            let len = num(&mut n)? as usize;
            let mut bits = crate::bits::BitWriter::new();
            for _ in 0..len {
                bits.write_bit(stems.read_bit().map_err(|e| chain_error(e.to_string()))?);
            }
            stem_position(&bits.finish(), ply, rule50).map_err(chain_error)?
        } else {
            let packed = kept
                .get(k..k + 24)
                .ok_or_else(|| chain_error("stem bytes are truncated".into()))?;
            k += 24;
            binpack::unpack_position(packed, ply, rule50).map_err(|e| chain_error(e.to_string()))?
        };
        chain_moves.clear();
        codec
            .decode_from(&pos, plies, &mut moves, &mut chain_moves)
            .map_err(|e| chain_error(e.to_string()))?;
        let mut chain_scores = Vec::with_capacity(plies);
        let mut state = ScoreState::default();
        for &m in &chain_moves {
            let s = coder
                .decode(&mut scores, &state)
                .ok_or_else(|| chain_error("score out of range".into()))?;
            chain_scores.push(s);
            state.played(m, s);
        }
        if scores.overrun() {
            return Err(chain_error("the scores are truncated".into()));
        }
        let chain = Chain {
            pos,
            ply,
            result: result & 3,
            rule50,
            moves: std::mem::take(&mut chain_moves),
            scores: chain_scores,
        };
        if chunk.is_some() {
            chain.write(&mut body);
        }
        if let Some(each) = each.as_deref_mut() {
            each(Part::Chain(&chain));
        }
        positions += plies as u64;
        chain_moves = chain.moves;
    }
    if let Some(out) = chunk {
        binpack::write_chunk(&body, out).map_err(|e| damaged(e.to_string()))?;
    }
    Ok(positions)
}

/// A zstd frame's bytes, growing the buffer as they come (a damaged size
/// field allocates nothing), at most [`MAX_SECTION`].
fn unzstd(frame: &[u8]) -> io::Result<Vec<u8>> {
    let mut out = Vec::new();
    zstd::stream::read::Decoder::new(frame)?
        .take(MAX_SECTION as u64 + 1)
        .read_to_end(&mut out)?;
    if out.len() > MAX_SECTION {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "section too large",
        ));
    }
    Ok(out)
}

/// Training rows: one entry per position, in the archive's order, as
/// columns.
///
/// Squares are numbered a1 = 0 … h8 = 63. Pieces are 0 (empty), 1–6 white
/// pawn, knight, bishop, rook, queen, king, 7–12 black ones.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Rows {
    /// 64 pieces a position, square by square.
    pub board: Vec<u8>,
    /// 0 white to move, 1 black.
    pub turn: Vec<u8>,
    /// Castling rights: bit 0 white short, 1 white long, 2 black short,
    /// 3 black long.
    pub castling: Vec<u8>,
    /// The en-passant square where a capture there is legal, else 64.
    pub ep: Vec<u8>,
    /// The 50-move counter.
    pub rule50: Vec<u16>,
    /// The game ply.
    pub ply: Vec<u16>,
    /// The engine's score in centipawns, from the side to move.
    pub score: Vec<i16>,
    /// The game's result from the side to move: 1 win, 0 draw, -1 loss.
    pub result: Vec<i8>,
    /// The move's origin square.
    pub from: Vec<u8>,
    /// The move's target square (the rook's for castling, as binpack).
    pub to: Vec<u8>,
    /// The promotion piece (2 knight … 5 queen), else 0.
    pub promotion: Vec<u8>,
}

impl Rows {
    /// The rows as nnue-pytorch's `.plain` text: for each, `fen` (the FEN,
    /// its move number from the ply), `move` (UCI, castling as the king's
    /// two-square move), `score`, `ply`, `result` and `e` lines.
    ///
    /// ```
    /// use chesspack::datasets::training;
    /// use chesspack::files::{self, Kind, Settings};
    ///
    /// let plain = "fen rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1\nmove e2e4\nscore 20\nply 0\nresult 0\ne\n";
    /// let mut archive = Vec::new();
    /// let go = &mut |_: &_| std::ops::ControlFlow::Continue(());
    /// files::compress(Kind::Plain, plain.as_bytes(), &mut archive, &Settings::default(), go).unwrap();
    /// let mut reader = training::TrainingReader::open(std::io::Cursor::new(archive)).unwrap();
    /// assert_eq!(reader.rows(0).unwrap().to_plain(), plain);
    /// ```
    pub fn to_plain(&self) -> String {
        const PIECES: &[u8; 13] = b" PNBRQKpnbrqk";
        let mut out = String::with_capacity(self.turn.len() * 100);
        for i in 0..self.turn.len() {
            let board = &self.board[i * 64..(i + 1) * 64];
            out.push_str("fen ");
            for rank in (0..8).rev() {
                let mut empty = 0;
                for file in 0..8 {
                    match board[rank * 8 + file] {
                        0 => empty += 1,
                        p => {
                            if empty > 0 {
                                out.push(char::from(b'0' + empty));
                                empty = 0;
                            }
                            out.push(char::from(PIECES[usize::from(p.min(12))]));
                        }
                    }
                }
                if empty > 0 {
                    out.push(char::from(b'0' + empty));
                }
                if rank > 0 {
                    out.push('/');
                }
            }
            out.push_str(if self.turn[i] == 0 { " w " } else { " b " });
            let c = self.castling[i];
            if c == 0 {
                out.push('-');
            }
            for (bit, ch) in ['K', 'Q', 'k', 'q'].into_iter().enumerate() {
                if c >> bit & 1 == 1 {
                    out.push(ch);
                }
            }
            out.push(' ');
            match self.ep[i] {
                64.. => out.push('-'),
                sq => out.push_str(&square_name(sq)),
            }
            let (from, mut to) = (self.from[i], self.to[i]);
            let mover = board[usize::from(from)];
            let king = mover == 6 || mover == 12;
            let rook = board[usize::from(to)];
            if king && (rook == 4 || rook == 10) && (rook > 6) == (mover > 6) {
                // binpack's castling: the king onto its rook.
                to = (to & !7) | if to > from { 6 } else { 2 };
            }
            let promo = match self.promotion[i] {
                2 => "n",
                3 => "b",
                4 => "r",
                5 => "q",
                _ => "",
            };
            out.push_str(&format!(
                " {} {}\nmove {}{}{promo}\nscore {}\nply {}\nresult {}\ne\n",
                self.rule50[i],
                self.ply[i] / 2 + 1,
                square_name(from),
                square_name(to),
                self.score[i],
                self.ply[i],
                self.result[i],
            ));
        }
        out
    }

    fn push_chain(&mut self, chain: &Chain) {
        let mut pos = chain.pos.clone();
        let mut result = unsigned_result(chain.result);
        let n = chain.moves.len();
        self.board.reserve(n * 64);
        for (i, (&m, &s)) in chain.moves.iter().zip(&chain.scores).enumerate() {
            let ep = if i == 0 {
                pos.ep_square(EnPassantMode::Always)
            } else {
                pos.ep_square(EnPassantMode::Legal)
            };
            self.board
                .extend_from_slice(&crate::datasets::rows::Mailbox::of(&pos).0);
            self.turn.push(u8::from(pos.turn().is_black()));
            let rights = pos.castles().castling_rights();
            let mut c = 0;
            for (bit, sq) in [
                shakmaty::Square::H1,
                shakmaty::Square::A1,
                shakmaty::Square::H8,
                shakmaty::Square::A8,
            ]
            .into_iter()
            .enumerate()
            {
                if rights.contains(sq) {
                    c |= 1 << bit;
                }
            }
            self.castling.push(c);
            self.ep.push(ep.map_or(64, u8::from));
            self.rule50.push(pos.halfmoves() as u16);
            self.ply.push(chain.ply.wrapping_add(i as u16));
            self.score.push(s);
            self.result.push(result as i8);
            self.from.push(m.from().map_or(0, u8::from));
            self.to.push(match m {
                Move::Castle { rook, .. } => u8::from(rook),
                _ => u8::from(m.to()),
            });
            self.promotion.push(m.promotion().map_or(0, |r| r as u8));
            pos.play_unchecked(m);
            result = -result;
        }
    }
}

fn square_name(sq: u8) -> String {
    format!("{}{}", char::from(b'a' + sq % 8), char::from(b'1' + sq / 8))
}

fn unsigned_result(raw: u8) -> i16 {
    match raw & 3 {
        0 => 0,
        1 => -1,
        2 => 1,
        _ => -2,
    }
}

/// Random access to a training-data archive: its blocks, as binpack chunks
/// or as [`Rows`].
#[derive(Debug)]
pub struct TrainingReader<R> {
    input: R,
    /// The archive's move codec.
    codec: ModelCodec,
    /// Each block's offset and positions.
    index: Vec<(u64, u64)>,
}

impl<R: Read + Seek> TrainingReader<R> {
    /// Opens an archive: checks its header and reads its index.
    ///
    /// # Errors
    ///
    /// [`ArchiveError::NotAnArchive`], [`ArchiveError::UnsupportedVersion`],
    /// [`ArchiveError::CodecMismatch`], a damaged header or index.
    pub fn open(mut input: R) -> Result<TrainingReader<R>, ArchiveError> {
        let mut h = vec![0u8; 10];
        let truncated = |_| ArchiveError::Header("truncated".into());
        input
            .read_exact(&mut h[..8])
            .map_err(|_| ArchiveError::NotAnArchive)?;
        if !h.starts_with(MAGIC) {
            return Err(ArchiveError::NotAnArchive);
        }
        input.read_exact(&mut h[8..10]).map_err(truncated)?;
        if h[8] != VERSION {
            return Err(ArchiveError::UnsupportedVersion(h[8]));
        }
        let name_len = usize::from(h[9]);
        h.resize(10 + name_len + 12, 0);
        input.read_exact(&mut h[10..]).map_err(truncated)?;
        let header_len = h.len();
        if crc32fast::hash(&h[..header_len - 4]) != crate::le::u32_at(&h, header_len - 4) {
            return Err(ArchiveError::Header("checksum mismatch".into()));
        }
        let hash = crate::le::u64_at(&h, 10 + name_len);
        let codec = codec_named(&h[10..10 + name_len], hash).ok_or_else(|| {
            ArchiveError::CodecMismatch {
                name: String::from_utf8_lossy(&h[10..10 + name_len]).into_owned(),
                hash,
                have: format!(
                    " (this chesspack has fast with model {:016x} and model with {:016x})",
                    ModelCodec::fast().model_hash(),
                    ModelCodec::new().model_hash()
                ),
            }
        })?;
        let end = input.seek(SeekFrom::End(0))?;
        let index_error = |what: &str| ArchiveError::Index(what.into());
        if end < header_len as u64 + 16 {
            return Err(index_error("no footer"));
        }
        input.seek(SeekFrom::End(-16))?;
        let mut footer = [0u8; 16];
        input.read_exact(&mut footer)?;
        if &footer[8..] != END {
            return Err(index_error("no end marker"));
        }
        let index_at = crate::le::u64_at(&footer, 0);
        if index_at < header_len as u64 || index_at.checked_add(8).is_none_or(|i| i > end - 16) {
            return Err(index_error("bad index offset"));
        }
        input.seek(SeekFrom::Start(index_at))?;
        let mut raw = vec![0u8; (end - 16 - index_at) as usize];
        input.read_exact(&mut raw)?;
        if &raw[..4] != INDEX {
            return Err(index_error("no index marker"));
        }
        let count = crate::le::u32_at(&raw, 4) as usize;
        if raw.len() != 8 + count * 16 {
            return Err(index_error("index size"));
        }
        let index: Vec<(u64, u64)> = (0..count)
            .map(|i| {
                (
                    crate::le::u64_at(&raw, 8 + i * 16),
                    crate::le::u64_at(&raw, 16 + i * 16),
                )
            })
            .collect();
        if index
            .iter()
            .zip(index.iter().skip(1).map(|e| e.0).chain([index_at]))
            .any(|(&(at, _), next)| at >= next || at < header_len as u64)
        {
            return Err(index_error("block offsets out of order"));
        }
        Ok(TrainingReader {
            input,
            codec,
            index,
        })
    }

    /// The number of blocks.
    pub fn blocks(&self) -> usize {
        self.index.len()
    }

    /// The number of positions in the archive.
    pub fn positions(&self) -> u64 {
        self.index.iter().map(|e| e.1).sum()
    }

    fn payload(&mut self, block: usize) -> Result<Vec<u8>, ArchiveError> {
        let number = block as u64 + 1;
        let &(at, positions) = self
            .index
            .get(block)
            .ok_or_else(|| ArchiveError::Index(format!("no block {number}")))?;
        let next = self.index.get(block + 1).map(|e| e.0);
        self.input.seek(SeekFrom::Start(at))?;
        let mut head = [0u8; 16];
        self.input.read_exact(&mut head)?;
        let damaged = |reason: &str| ArchiveError::Damaged {
            block: number,
            reason: reason.into(),
        };
        if &head[..4] != BLOCK {
            return Err(damaged("no block marker"));
        }
        let len = u64::from(crate::le::u32_at(&head, 4));
        if next.is_some_and(|n| at + 16 + len != n)
            || u64::from(crate::le::u32_at(&head, 8)) != positions
        {
            return Err(damaged("block header disagrees with the index"));
        }
        // Read as it comes: a damaged length allocates nothing.
        let mut payload = Vec::new();
        (&mut self.input).take(len).read_to_end(&mut payload)?;
        if payload.len() as u64 != len {
            return Err(damaged("the block is truncated"));
        }
        if crc32fast::hash(&payload) != crate::le::u32_at(&head, 12) {
            return Err(damaged("checksum mismatch"));
        }
        Ok(payload)
    }

    /// Block `block`'s (from 0) positions as training rows.
    ///
    /// # Errors
    ///
    /// A damaged block ([`ArchiveError::Damaged`], naming the block and
    /// chain), or reading fails.
    pub fn rows(&mut self, block: usize) -> Result<Rows, ArchiveError> {
        let mut rows = Rows::default();
        self.decode_parts(block, &mut |part| {
            if let Part::Chain(c) = part {
                rows.push_chain(c);
            }
        })?;
        Ok(rows)
    }

    /// Decodes block `block` (from 0), handing each chain and kept piece
    /// to `each`.
    fn decode_parts(
        &mut self,
        block: usize,
        each: &mut dyn FnMut(Part<'_>),
    ) -> Result<(), ArchiveError> {
        let payload = self.payload(block)?;
        decode_block(&payload, &self.codec, block as u64 + 1, None, Some(each))?;
        Ok(())
    }

    /// Block `block`'s (from 0) chains as viriformat games, one a chain,
    /// scores and results turned to White's: the bytes of the games an
    /// archive made by `compress_viriformat` was made from.
    ///
    /// # Errors
    ///
    /// As [`TrainingReader::rows`]; and an [`io::ErrorKind::InvalidData`]
    /// error naming the block and chain where the block holds what
    /// viriformat cannot: bytes kept as they are, or a result of -2.
    pub fn viriformat(&mut self, block: usize) -> Result<Vec<u8>, ArchiveError> {
        self.games_as(block, viriformat::write_game)
    }

    /// Block `block`'s (from 0) positions as marlinformat records (32
    /// bytes each: the board, White's score, the result from White's
    /// side), as viriformat's own tools cut its games into positions.
    ///
    /// # Errors
    ///
    /// As [`TrainingReader::viriformat`].
    pub fn marlinformat(&mut self, block: usize) -> Result<Vec<u8>, ArchiveError> {
        self.games_as(block, viriformat::write_positions)
    }

    /// Each chain of block `block` as a viriformat game, written by `write`.
    fn games_as(
        &mut self,
        block: usize,
        write: fn(&viriformat::Game, &mut Vec<u8>),
    ) -> Result<Vec<u8>, ArchiveError> {
        let mut out = Vec::new();
        let mut problem = None;
        let mut chains = 0;
        self.decode_parts(block, &mut |part| {
            if problem.is_some() {
                return;
            }
            match part {
                Part::Chain(c) => {
                    chains += 1;
                    match viriformat::game_of(c) {
                        Ok(g) => write(&g, &mut out),
                        Err(e) => problem = Some(format!("chain {chains}: {e}")),
                    }
                }
                Part::Kept(n) => {
                    problem = Some(format!(
                        "{n} bytes after chain {chains} are kept as they are, not as chains"
                    ));
                }
            }
        })?;
        match problem {
            Some(why) => Err(ArchiveError::Io(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("block {}: {why}: no viriformat for it", block + 1),
            ))),
            None => Ok(out),
        }
    }
}

/// Decompresses a training-data archive to its binpack, `threads` blocks
/// at a time on the rayon pool (0: one a core); returns the number of
/// positions.
///
/// # Errors
///
/// As [`TrainingReader::open`] and [`TrainingReader::rows`].
pub(crate) fn decompress(
    input: impl Read + Seek,
    mut output: impl Write,
    threads: usize,
) -> Result<u64, ArchiveError> {
    let mut reader = TrainingReader::open(input)?;
    let (blocks, codec) = (reader.blocks(), reader.codec.clone());
    // The blocks decoded on the pipeline's workers, written in order.
    let payloads = (0..blocks).map(|b| reader.payload(b).map(|p| (b, p)));
    crate::archive::pipeline::Pipeline::with_threads(threads).ordered(
        payloads,
        |p| decode_one(&p, &codec),
        |chunk| Ok(output.write_all(&chunk?)?),
    )?;
    output.flush()?;
    Ok(reader.positions())
}

fn decode_one(
    (block, payload): &(usize, Vec<u8>),
    codec: &ModelCodec,
) -> Result<Vec<u8>, ArchiveError> {
    let mut out = Vec::new();
    decode_block(payload, codec, *block as u64 + 1, Some(&mut out), None)?;
    Ok(out)
}
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scores_come_back_from_their_changes() {
        let scores = [0i16, 15, -20, 31_000, -31_999, i16::MAX, i16::MIN, 7, -7, 0];
        let mut enc = BinaryEncoder::new();
        let mut coder = ScoreCoder::new();
        let mut state = ScoreState::default();
        let moves = [Move::Put {
            role: shakmaty::Role::Pawn,
            to: shakmaty::Square::A1,
        }; 10];
        for (&s, &m) in scores.iter().zip(&moves) {
            coder.encode(&mut enc, &state, s);
            state.played(m, s);
        }
        let bytes = enc.finish();
        let mut dec = BinaryDecoder::new(&bytes);
        let mut coder = ScoreCoder::new();
        let mut state = ScoreState::default();
        for (&s, &m) in scores.iter().zip(&moves) {
            assert_eq!(coder.decode(&mut dec, &state), Some(s));
            state.played(m, s);
        }
    }

    #[test]
    fn numbers_round_trip_as_leb128() {
        let mut out = Vec::new();
        for v in [0, 127, 128, 1 << 40] {
            write_leb(&mut out, v);
        }
        let mut at = 0;
        for v in [0, 127, 128, 1 << 40] {
            assert_eq!(read_leb(&out, &mut at), Some(v));
        }
        assert_eq!(read_leb(&out, &mut at), None);
    }
}
