//! One block of games, stored as columns ([`COLUMNS`]): the number of
//! games, then each column as a method byte, its raw and stored lengths
//! and its bytes (stored, or compressed by zstd, xz or PPMd, whichever is
//! smallest). A method byte's upper bits say what the block holds (the
//! marks of `tag-values`, whether `layout` and `engine-fields` columns
//! follow, whether the last game goes on in the next block); one without
//! the bits it must have is an error: until the first release there is one
//! format (`docs/format.md`, byte by byte).
//!
//! A game whose movetext is moves alone is one event (`E_LINE`) with the
//! codec's self-ending stream, instead of an event per move with a stream
//! that the move count ends.

use crate::pgn::ChunkReader;

mod annotations;
mod fields;
mod layout;
mod lengths;

mod read;
mod write;

pub(crate) use read::{Decoded, Keep, Want, decode_block, decode_block_with, last_game_continues};
#[cfg(feature = "train")]
pub(crate) use write::engine_comment_prior;
pub(crate) use write::{compress_xz, encode_block};

/// The hash of the engine-comment fields' prior this library ships (the
/// header's table hash covers it).
pub(crate) fn fields_prior_hash() -> u64 {
    fields::FieldPrior::embedded_hash()
}

/// The columns of a block, in storage order.
pub const COLUMNS: [&str; N_COLUMNS] = [
    "kind",
    "verbatim",
    "tag-names",
    "tag-sequence",
    "tag-values",
    "events",
    "moves",
    "move-lengths",
    "comments",
    "clocks",
    "evals",
    "eval-text",
    "tag-numbers",
    "layout",
    "engine-fields",
];

const N_COLUMNS: usize = 15;

const KIND: usize = 0;
const VERBATIM: usize = 1;
const TAG_NAMES: usize = 2;
const TAG_SEQ: usize = 3;
const TAG_VALUES: usize = 4;
const EVENTS: usize = 5;
const MOVES: usize = 6;
const MOVE_LENGTHS: usize = 7;
const COMMENTS: usize = 8;
const CLOCKS: usize = 9;
const EVALS: usize = 10;
const EVAL_TEXT: usize = 11;
/// The numbers of the tag values' marks, range-coded.
const TAG_NUMBERS: usize = 12;
/// Each parsed game's layout ([`layout::Layout`]), which
/// gives the input's bytes back from the canonical text.
const LAYOUT: usize = 13;
/// The fields of each game's engine comments
/// ([`fields::FieldCoder`]), a stream per game after its length.
const ENGINE: usize = 14;

/// Column method bit of `kind`: the block has a `layout` column, after
/// `tag-numbers`; blocks without it give canonical text.
const METHOD_LAYOUT: u8 = 2;

/// Column method bit of `kind`: the block has an `engine-fields` column,
/// after `layout` or `tag-numbers`.
const METHOD_ENGINE: u8 = 4;

/// Column method bit of `kind`: the block names openings (the `ECO` and
/// `Opening` tags the moves give, the labels and their priors) by
/// lichess's opening table (every block has it).
const METHOD_LICHESS_OPENINGS: u8 = 8;

/// The bits of the `tag-values` column's method that every block has:
/// every mark but the opening's label ([`Marks::Ids`](super::tags::Marks::Ids)).
const METHOD_MARKS: u8 = 2;
const METHOD_PLAYER_MARKS: u8 = 4;
const METHOD_OPENING_MARKS: u8 = 8;
const METHOD_TIME_MARKS: u8 = 16;
const METHOD_ID_MARKS: u8 = 32;
/// The method bits of the `tag-values` column that every block has.
const TAG_VALUE_MARKS: u8 =
    METHOD_MARKS | METHOD_PLAYER_MARKS | METHOD_OPENING_MARKS | METHOD_TIME_MARKS | METHOD_ID_MARKS;

/// The bits of the `tag-values` column's method, both or neither, of a
/// block whose games' first `ECO` or `Opening` tag that the moves give
/// comes with the opening's label in the `tag-numbers` column, coded with
/// the prior of the game's rating band, and whose mainline moves are coded
/// knowing it ([`Marks::BandLabels`](super::tags::Marks::BandLabels)).
const METHOD_LABEL_MARKS: u8 = 64;
const METHOD_BAND_LABEL_MARKS: u8 = 128;

/// Column method bit of `move-lengths` (every block has it): the lengths
/// are coded with [`LengthCoder`](lengths::LengthCoder).
const METHOD_CODED_LENGTHS: u8 = 2;

/// Column method bit of `clocks` and `evals` (every block has it): the
/// streams are coded with contexts (see the `annotations` module).
const METHOD_ANNOTATION_CONTEXTS: u8 = 2;

/// Column method bit of `verbatim`: the block's last game goes on in the
/// next block, whose first games are pieces of it.
const METHOD_CONTINUES: u8 = 2;
/// Column method bit of `moves`: each game's streams are padded with zero
/// bits to a whole byte, so that the games of a block that repeat an
/// earlier one's moves repeat its bytes, and the column is compressed
/// (issue 69: engine matches without a book).
const METHOD_ALIGNED: u8 = 2;

/// Column method bit of `verbatim`: the column holds its texts without
/// their lengths, and cutting it into games as [`ChunkReader`] cuts input
/// gives them (a block stored as text whose games cut so; the writer
/// checks that they do).
const METHOD_RECUT: u8 = 4;

/// The lengths of the games that [`ChunkReader`] cuts `text` into, where it
/// cuts all of it into whole games; `None` where it cuts a piece or keeps
/// a lead.
fn recut_lengths(text: &[u8]) -> Option<Vec<usize>> {
    let mut lengths = Vec::new();
    for chunk in ChunkReader::new(text) {
        let chunk = chunk.ok()?;
        if chunk.cut || chunk.more || !chunk.lead.is_empty() {
            return None;
        }
        lengths.push(chunk.bytes.len());
    }
    Some(lengths)
}

/// The largest raw column a decoder accepts (a block holds at most a few
/// megabytes of games and one over-long chunk).
const MAX_COLUMN: u64 = 256 << 20;

/// The first byte of a column compressed with PPMd var. H (zstd's frames
/// start with `0x28`, xz's streams with `0xfd`); its order and the log2 of
/// its model's memory follow, then the stream.
const PPMD_MARK: u8 = b'P';
/// The PPMd order of text columns: 6 and 7 compress an annotated
/// collection best (5 is 0.5% larger, 8 and up no smaller).
const PPMD_ORDER: u8 = 6;
/// The model's memory, as log2 of bytes: 16 times the column (PPMd then
/// never restarts its model on a block's text), from 1 to 16 MiB; a reader
/// refuses any other.
const PPMD_MEMORY_LOGS: std::ops::RangeInclusive<u8> = 20..=24;

// Event codes.
const E_END: u8 = 0;
const E_MOVE: u8 = 1;
const E_COMMENT: u8 = 2;
const E_CLK: u8 = 3;
const E_EVAL_CLK: u8 = 4;
const E_EVAL: u8 = 5;
const E_NAG: u8 = 6;
const E_OPEN: u8 = 7;
const E_CLOSE: u8 = 8;
/// The outcome token equals the `Result` tag, then the game ends.
const E_RESULT_AS_TAG: u8 = 9;
/// `E_OUTCOME + i`: outcome `text::OUTCOMES[i]`, then the game ends.
const E_OUTCOME: u8 = 10;
/// The first event of a game whose movetext is its mainline's moves alone
///: the moves, as many as the codec's self-ending stream holds
/// ([`GameCodec::encode`](crate::game::GameCodec::encode) rather than [`GameCodec::encode_counted`](crate::game::GameCodec::encode_counted)); then
/// the game's end.
const E_LINE: u8 = 14;
/// The result token that follows starts a line of its own.
const E_RESULT_LINE: u8 = 15;
/// The first event of a game whose movetext is its mainline's moves, each
/// followed by one clock or evaluation comment (lichess's exports), then
/// its result or end. A pattern byte follows: `3 × a + b`, where
/// `a` is the comments' kind after every move but the last and `b` after
/// the last, kinds 0 to 2 for [`E_CLK`], [`E_EVAL_CLK`] and [`E_EVAL`].
/// The ply count is in the `move-lengths` stream, before the moves' length
/// ([`LengthCoder`](lengths::LengthCoder)). The reader spells the events
/// out: a move and the comment kind, as many times as the plies.
const E_ANNOTATED: u8 = 16;

/// A null move: the line's moves so far end, and its moves
/// after it are a line of their own, from the position after it (in the
/// order of the game's `(` and null moves).
const E_NULL: u8 = 17;
/// `E_OUTCOME_SPELLED + i`: outcome `text::OUTCOMES[4 + i]` (another tool's
/// spelling), then the game ends.
const E_OUTCOME_SPELLED: u8 = 18;
/// An engine comment: its template is the next text of the
/// `comments` column, its fields are in the game's `engine-fields` stream.
const E_ENGINE_NEW: u8 = 23;
/// An engine comment whose template is that of the same side's last engine
/// comment in the game.
const E_ENGINE_SAME: u8 = 24;
/// A clock comment as chess.com writes it, `[%clk H:MM:SS]` (issue 69):
/// its reading is the next of the `clocks` stream.
const E_CLK_COMPACT: u8 = 25;
/// [`E_CLK_COMPACT`] with a tenth of a second, `[%clk H:MM:SS.d]`: the
/// tenth follows the reading in the `clocks` stream.
const E_CLK_TENTHS: u8 = 26;
/// The pattern byte of [`E_ANNOTATED`] whose comments are all
/// [`E_CLK_COMPACT`] (`+ 1`: all [`E_CLK_TENTHS`]).
const PATTERN_COMPACT: u8 = 9;

/// The pattern byte of [`E_ANNOTATED`] for comments of kind `every` after
/// every move but the last and of kind `last` after the last.
fn annotated_pattern(every: u8, last: u8) -> u8 {
    (every - E_CLK) * 3 + (last - E_CLK)
}

/// The events an [`E_ANNOTATED`] game of `plies` plies and pattern byte
/// `pattern` stands for, up to its end.
fn spell_annotated(pattern: u8, plies: usize) -> Result<Vec<u8>, String> {
    if pattern > PATTERN_COMPACT + 1 || plies == 0 {
        return Err("bad annotated line".into());
    }
    let (every, last) = match pattern.checked_sub(PATTERN_COMPACT) {
        Some(k) => (E_CLK_COMPACT + k, E_CLK_COMPACT + k),
        None => (E_CLK + pattern / 3, E_CLK + pattern % 3),
    };
    let mut events = Vec::with_capacity(2 * plies + 2);
    for _ in 1..plies {
        events.extend_from_slice(&[E_MOVE, every]);
    }
    events.extend_from_slice(&[E_MOVE, last]);
    Ok(events)
}

/// Whether event code `b` (not a glyph's number) ends a game.
fn ends_game(b: u8) -> bool {
    b == E_END
        || (E_RESULT_AS_TAG..E_OUTCOME + 4).contains(&b)
        || (E_OUTCOME_SPELLED..E_OUTCOME_SPELLED + 5).contains(&b)
}

/// The event code of outcome `text::OUTCOMES[o]`.
fn outcome_code(o: u8) -> u8 {
    if o < 4 {
        E_OUTCOME + o
    } else {
        E_OUTCOME_SPELLED + o - 4
    }
}

/// The outcome (index in `text::OUTCOMES`) that event `code` ends a game
/// with.
fn outcome_of(code: u8) -> Option<u8> {
    match code {
        c if (E_OUTCOME..E_OUTCOME + 4).contains(&c) => Some(c - E_OUTCOME),
        c if (E_OUTCOME_SPELLED..E_OUTCOME_SPELLED + 5).contains(&c) => {
            Some(c - E_OUTCOME_SPELLED + 4)
        }
        _ => None,
    }
}

/// Sizes and verbatim games of one encoded block.
#[derive(Clone, Debug, Default)]
pub struct BlockReport {
    /// Games in the block.
    pub games: u64,
    /// Input bytes of the games.
    pub input_bytes: u64,
    /// Raw bytes of each column, in [`COLUMNS`] order.
    pub raw: [u64; N_COLUMNS],
    /// Stored bytes of each column, in [`COLUMNS`] order.
    pub stored: [u64; N_COLUMNS],
    /// Games stored verbatim: (game number, category, detail).
    pub verbatim: Vec<(u64, &'static str, String)>,
    /// Blocks stored as their games' text, compressed, because their
    /// columns came to more.
    pub text_blocks: u64,
}

impl BlockReport {
    /// Adds the counts of `other` to these.
    pub(crate) fn add(&mut self, other: &BlockReport) {
        self.games += other.games;
        self.input_bytes += other.input_bytes;
        for i in 0..COLUMNS.len() {
            self.raw[i] += other.raw[i];
            self.stored[i] += other.stored[i];
        }
        self.verbatim.extend(other.verbatim.iter().cloned());
        self.text_blocks += other.text_blocks;
    }
}

/// One encoded block, ready to be written.
#[derive(Clone, Debug)]
pub(crate) struct EncodedBlock {
    /// The payload (the block frame is added by the archive writer).
    pub payload: Vec<u8>,
    /// What went where.
    pub report: BlockReport,
    /// CRC-32 of the text that decoding the block gives back (the games'
    /// canonical or verbatim text, in order).
    pub text_crc: u32,
    /// The first chunk's [`Chunk::lead`](crate::pgn::Chunk::lead).
    pub lead: Vec<u8>,
    /// The whitespace that ends the last chunk (the end of the input when
    /// this is the last block).
    pub tail: Vec<u8>,
    /// Each game's record (its tags, where it starts and its mainline's
    /// moves; `None` for a game stored verbatim), where the caller asked
    /// for them (for the search section).
    pub records: Vec<Option<crate::archive::GameRecord>>,
    /// The bytes of zstd -1 of the block's text (what the floor and the
    /// search section are weighed by).
    pub quick: u64,
}

pub(crate) use crate::le::{take_leb as get_varint, write_leb as put_varint};

fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

fn unzigzag(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

/// `kind` of a parsed game whose lines all end with CR LF: its
/// canonical text is written with CR LF line ends ([`to_crlf`]). A parsed
/// game's kind is this bit, or 0, plus its layout bits
/// ([`ParsedGame::layout`](crate::pgn::strict::ParsedGame::layout))
/// times [`KIND_LAYOUT`]; a verbatim game's kind is 1.
const KIND_CRLF: u8 = 2;
/// The unit of a parsed game's layout bits in its `kind`.
const KIND_LAYOUT: u8 = 4;
/// `kind` of a verbatim piece that goes on with the text of the game
/// before it (in this block, or the last of the block before): a game
/// text longer than 8 MiB is stored in pieces. It is no game
/// of its own: blocks count the games that start in them.
const KIND_PIECE: u8 = 3;
/// `kind` of a game that parses, stored as its text in the `verbatim`
/// column: the games of a block that its columns would store in more bytes
/// than its text compressed (the floor, [`write::encode_block`]). Read, it
/// is parsed again, and gives tags and records as a parsed game does.
const KIND_TEXT: u8 = 5;

/// Whether every line of `bytes` ends with CR LF (and one does).
pub(crate) fn is_crlf(bytes: &[u8]) -> bool {
    let mut any = false;
    for (i, &b) in bytes.iter().enumerate() {
        if b == b'\n' {
            if i == 0 || bytes[i - 1] != b'\r' {
                return false;
            }
            any = true;
        }
    }
    any
}

/// `kind` bit of a parsed game whose lines end with CR alone (no LF in its
/// text): it is parsed, and its layout found, with LF for CR
/// ([`lf_text`]), and its text written so is given CR for LF.
const KIND_CR: u8 = 64;

/// `text` with LF for CR where its lines end with CR alone (it holds a CR
/// and no LF), else `None`.
pub(crate) fn lf_text(text: &[u8]) -> Option<Vec<u8>> {
    (text.contains(&b'\r') && !text.contains(&b'\n')).then(|| swap_line_ends(text, b'\r', b'\n'))
}

/// `text` with `to` for every `from`.
pub(super) fn swap_line_ends(text: &[u8], from: u8, to: u8) -> Vec<u8> {
    text.iter()
        .map(|&b| if b == from { to } else { b })
        .collect()
}

/// `text` with a CR before every LF that lacks one (a comment's own CR LF
/// stays as it is).
pub(crate) fn to_crlf(text: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len() + text.len() / 16);
    for (i, &b) in text.iter().enumerate() {
        if b == b'\n' && (i == 0 || text[i - 1] != b'\r') {
            out.push(b'\r');
        }
        out.push(b);
    }
    out
}

/// The length of the run of ASCII whitespace that ends `bytes`.
pub(crate) fn trailing_whitespace(bytes: &[u8]) -> usize {
    bytes
        .iter()
        .rev()
        .take_while(|b| b.is_ascii_whitespace())
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_and_zigzag() {
        let mut v = Vec::new();
        for x in [0, 1, 127, 128, 300, u64::MAX] {
            put_varint(&mut v, x);
        }
        let mut r = v.as_slice();
        for x in [0, 1, 127, 128, 300, u64::MAX] {
            assert_eq!(get_varint(&mut r).unwrap(), x);
        }
        for x in [0i64, -1, 1, i64::MIN, i64::MAX] {
            assert_eq!(unzigzag(zigzag(x)), x);
        }
    }

    #[test]
    fn annotated_lines_spell_out_their_events() {
        let pattern = annotated_pattern(E_EVAL_CLK, E_CLK);
        assert_eq!(
            spell_annotated(pattern, 3).unwrap(),
            [E_MOVE, E_EVAL_CLK, E_MOVE, E_EVAL_CLK, E_MOVE, E_CLK]
        );
        let one = annotated_pattern(E_EVAL, E_EVAL);
        assert_eq!(spell_annotated(one, 1).unwrap(), [E_MOVE, E_EVAL]);
        // chess.com's clocks (issue 69).
        assert_eq!(
            spell_annotated(PATTERN_COMPACT + 1, 2).unwrap(),
            [E_MOVE, E_CLK_TENTHS, E_MOVE, E_CLK_TENTHS]
        );
        // Damaged patterns and counts are errors.
        assert!(spell_annotated(PATTERN_COMPACT + 2, 3).is_err());
        assert!(spell_annotated(pattern, 0).is_err());
    }
}
