//! The block reader: the columns decompressed and the games rebuilt from
//! their events, whole or only as far as the caller wants.

use shakmaty::{Chess, Move, Position};
use std::collections::HashMap;

use super::{
    CLOCKS, COLUMNS, COMMENTS, E_ANNOTATED, E_CLK, E_CLK_COMPACT, E_CLK_TENTHS, E_CLOSE, E_COMMENT,
    E_END, E_ENGINE_NEW, E_ENGINE_SAME, E_EVAL, E_EVAL_CLK, E_LINE, E_MOVE, E_NAG, E_NULL, E_OPEN,
    E_RESULT_AS_TAG, E_RESULT_LINE, ENGINE, EVAL_TEXT, EVALS, EVENTS, KIND, KIND_CR, KIND_CRLF,
    KIND_LAYOUT, KIND_PIECE, KIND_TEXT, LAYOUT, MAX_COLUMN, METHOD_ALIGNED,
    METHOD_ANNOTATION_CONTEXTS, METHOD_BAND_LABEL_MARKS, METHOD_CODED_LENGTHS, METHOD_CONTINUES,
    METHOD_ENGINE, METHOD_LABEL_MARKS, METHOD_LAYOUT, METHOD_LICHESS_OPENINGS, METHOD_RECUT,
    MOVE_LENGTHS, MOVES, PPMD_MARK, PPMD_MEMORY_LOGS, TAG_NAMES, TAG_NUMBERS, TAG_SEQ,
    TAG_VALUE_MARKS, TAG_VALUES, VERBATIM,
    annotations::{
        ClockCoder, ClockModel, EvalCoder, EvalState, format_annotation, format_compact_clock,
        format_eval, time_control,
    },
    ends_game,
    fields::{self, FieldCoder, Walk},
    get_varint,
    layout::Layout,
    lengths::Lengths,
    lf_text, outcome_of, recut_lengths, spell_annotated, swap_line_ends, to_crlf,
};
use crate::{
    Bits,
    archive::{
        GameRecord, GameRow, GameTags,
        tags::{Marks, TagState},
    },
    bits::BitWriter,
    coder::BinaryDecoder,
    game::GameCodec,
    model::GameContext,
    opening::{Named, OpeningTable},
    pgn::strict::{self as text, Event, ParsedGame},
};

/// The columns of a stored block, decompressed.
struct Stored {
    games: usize,
    data: Vec<Vec<u8>>,
    /// The marks of the `tag-values` column.
    tag_marks: Marks,
    /// Whether the block has a `layout` column.
    layouts: bool,
    /// Whether its `verbatim` column is texts without lengths
    /// ([`METHOD_RECUT`]).
    recut: bool,
    /// Whether each game's move streams end on a whole byte
    /// ([`METHOD_ALIGNED`]).
    aligned: bool,
}

/// The magic bytes of an xz stream: a compressed column that starts with
/// them is xz, else zstd.
const XZ_MAGIC: &[u8] = &[0xfd, b'7', b'z', b'X', b'Z', 0];

/// A writer that refuses more than `left` bytes.
struct Bounded {
    out: Vec<u8>,
    left: usize,
}

impl std::io::Write for Bounded {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if buf.len() > self.left {
            return Err(std::io::Error::other("longer than its length"));
        }
        self.left -= buf.len();
        self.out.extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// An xz column of `raw` bytes: a stream that would give more is an error
/// as soon as it does. Read with liblzma where the `compression` feature
/// builds it (faster), else in pure Rust ([`decompress_xz_rust`]: the
/// browser); the bytes are the same.
#[cfg(feature = "compression")]
fn decompress_xz(bytes: &[u8], raw: usize) -> Result<Vec<u8>, String> {
    use std::io::Write;
    let mut dec = liblzma::write::XzDecoder::new(Bounded {
        out: Vec::with_capacity(raw),
        left: raw,
    });
    dec.write_all(bytes)
        .and_then(|()| dec.finish())
        .map(|b| b.out)
        .map_err(|e| format!("xz: {e}"))
}

#[cfg(not(feature = "compression"))]
use self::decompress_xz_rust as decompress_xz;

/// [`decompress_xz`] in pure Rust (lzma-rs).
#[cfg(any(test, not(feature = "compression")))]
fn decompress_xz_rust(bytes: &[u8], raw: usize) -> Result<Vec<u8>, String> {
    let mut out = Bounded {
        out: Vec::with_capacity(raw),
        left: raw,
    };
    lzma_rs::xz_decompress(&mut &bytes[..], &mut out).map_err(|e| format!("xz: {e}"))?;
    Ok(out.out)
}

/// A PPMd column of `raw` bytes ([`PPMD_MARK`], order, memory, stream).
/// Its order and memory must be those a writer picks from; a stream that
/// the decoder cannot follow (the block's CRC keeps damage out, a fuzzer
/// does not) is an error, never a panic.
fn decompress_ppmd(bytes: &[u8], raw: usize) -> Result<Vec<u8>, String> {
    let [PPMD_MARK, order, memory_log, stream @ ..] = bytes else {
        return Err("ppmd: truncated".into());
    };
    if !(2..=16).contains(order) || !PPMD_MEMORY_LOGS.contains(memory_log) {
        return Err(format!(
            "ppmd: order {order}, memory 2^{memory_log} not written"
        ));
    }
    let decode = || -> std::io::Result<Vec<u8>> {
        let mut d = ppmd_rust::Ppmd7Decoder::new(stream, u32::from(*order), 1 << memory_log)
            .map_err(std::io::Error::other)?;
        let mut out = vec![0; raw];
        std::io::Read::read_exact(&mut d, &mut out)?;
        Ok(out)
    };
    match std::panic::catch_unwind(decode) {
        Ok(Ok(out)) => Ok(out),
        Ok(Err(e)) => Err(format!("ppmd: {e}")),
        Err(_) => Err("ppmd: a stream the model cannot follow".into()),
    }
}

fn read_columns(mut payload: &[u8]) -> Result<Stored, String> {
    let games = get_varint(&mut payload)?;
    if games > 1 << 24 {
        return Err(format!("implausible game count {games}"));
    }
    let mut data = Vec::with_capacity(COLUMNS.len());
    let mut tag_marks = Marks::Ids;
    let mut layouts = false;
    let mut engine = false;
    let mut recut = false;
    let mut aligned = false;
    // The bits that a column's method byte must have, and those it may.
    let ids = TAG_VALUE_MARKS;
    let labels = ids | METHOD_LABEL_MARKS | METHOD_BAND_LABEL_MARKS;
    for (i, name) in COLUMNS.iter().enumerate() {
        if (i == LAYOUT && !layouts) || (i == ENGINE && !engine) {
            // A block without layouts or engine comments has no such column.
            data.push(Vec::new());
            continue;
        }
        let (&method, rest) = payload.split_first().ok_or("missing columns")?;
        payload = rest;
        let unknown = || format!("column {name}: unknown method {method}");
        let (required, optional) = match i {
            TAG_VALUES => (ids, labels),
            MOVE_LENGTHS => (METHOD_CODED_LENGTHS, 0),
            MOVES => (0, METHOD_ALIGNED),
            CLOCKS | EVALS => (METHOD_ANNOTATION_CONTEXTS, 0),
            KIND => (METHOD_LICHESS_OPENINGS, METHOD_LAYOUT | METHOD_ENGINE),
            // Whether the last game goes on in the next block: see
            // [`last_game_continues`].
            VERBATIM => (0, METHOD_CONTINUES | METHOD_RECUT),
            _ => (0, 0),
        };
        if method & required != required {
            return Err(unknown());
        }
        let bits = method & (required | optional);
        match i {
            TAG_VALUES if bits == labels => tag_marks = Marks::BandLabels,
            TAG_VALUES if bits != ids => return Err(unknown()),
            KIND => {
                layouts = method & METHOD_LAYOUT != 0;
                engine = method & METHOD_ENGINE != 0;
            }
            VERBATIM => recut = method & METHOD_RECUT != 0,
            MOVES => aligned = method & METHOD_ALIGNED != 0,
            _ => {}
        }
        let method = method & !bits;
        let raw = get_varint(&mut payload)?;
        let stored = get_varint(&mut payload)?;
        if raw > MAX_COLUMN || stored > payload.len() as u64 {
            return Err(format!("column {name}: bad length"));
        }
        let (bytes, rest) = payload.split_at(stored as usize);
        payload = rest;
        let column = match method {
            0 if stored == raw => Ok(bytes.to_vec()),
            1 if bytes.first() == Some(&PPMD_MARK) => decompress_ppmd(bytes, raw as usize),
            1 if bytes.starts_with(XZ_MAGIC) => decompress_xz(bytes, raw as usize),
            1 => zstd::bulk::decompress(bytes, raw as usize).map_err(|e| e.to_string()),
            _ => return Err(format!("column {name}: unknown method {method}")),
        }
        .map_err(|e| format!("column {name}: {e}"))?;
        if column.len() as u64 != raw {
            return Err(format!("column {name}: wrong length"));
        }
        data.push(column);
    }
    if !payload.is_empty() {
        return Err("trailing bytes after the columns".into());
    }
    Ok(Stored {
        games: games as usize,
        data,
        tag_marks,
        layouts,
        recut,
        aligned,
    })
}

/// Whether the last game of the block with `payload` goes on in the next
/// block (a game text longer than 8 MiB, stored in pieces). Only
/// the first two columns' headers are read; a payload too short to tell
/// gives `false`, and decoding it gives the error.
pub(crate) fn last_game_continues(mut payload: &[u8]) -> bool {
    let mut verbatim_method = || -> Result<u8, String> {
        get_varint(&mut payload)?;
        let (_, rest) = payload.split_first().ok_or("missing columns")?;
        payload = rest;
        get_varint(&mut payload)?;
        let stored = get_varint(&mut payload)?;
        let rest = usize::try_from(stored)
            .ok()
            .and_then(|s| payload.get(s..))
            .ok_or("bad length")?;
        Ok(*rest.first().ok_or("missing columns")?)
    };
    verbatim_method().is_ok_and(|m| m & METHOD_CONTINUES != 0)
}

/// Cursor over a column of terminated items.
fn take_until<'a>(data: &mut &'a [u8], end: u8, what: &str) -> Result<&'a [u8], String> {
    let i = data
        .iter()
        .position(|&b| b == end)
        .ok_or_else(|| format!("{what} column ends early"))?;
    let item = &data[..i];
    *data = &data[i + 1..];
    Ok(item)
}

/// What to do with a game while a block is decoded.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Want {
    /// Skip it.
    Skip,
    /// Its tags only (the mainline is decoded for tags that the moves
    /// give).
    Tags,
    /// Its tags, without those that the moves give.
    TagsNotGiven,
    /// Its text.
    Text,
    /// Its tags, mainline moves and clocks, without its text.
    Record,
    /// Its opening, as lichess names it ([`OpeningTable::lichess`]): from
    /// the label where the block stores it with its ply, else
    /// from the mainline's first plies, as far as they can change it.
    Opening,
    /// Its opening where the block stores it, else [`Decoded::NeedsMoves`]:
    /// no clocks or evaluations are decoded, so only in a pass where every
    /// game is wanted so.
    OpeningStored,
    /// Its start and mainline moves up to its first null move, as far as
    /// the decode's [`Keep`] lets them go ([`decode_block_with`]): a game
    /// stored as text gives its record, or its text where it does not
    /// parse.
    Mainline,
}

/// Whether a [`Want::Mainline`] decode of a game (its index in the block)
/// goes on past a position of its mainline: once it says no, one more
/// move is decoded (the move played there) and the game's decoding stops.
pub(crate) type Keep<'k> = dyn Fn(usize, &Chess) -> bool + Sync + 'k;

/// A decoded game.
pub(crate) enum Decoded {
    /// The canonical text, or the verbatim text.
    Text(Vec<u8>),
    /// Tags (`None` for a verbatim game: its text is given).
    Tags(GameTags),
    /// The game as data (its text for a verbatim game).
    Record(GameRow),
    /// Its opening as lichess names it, if any ([`Want::Opening`]).
    Opening(Option<Named<'static>>),
    /// Its opening is not stored: its moves are needed
    /// ([`Want::OpeningStored`]).
    NeedsMoves,
    /// Its start and the mainline's moves decoded ([`Want::Mainline`]).
    Mainline(Chess, Vec<Move>),
    /// A piece of a verbatim text longer than 8 MiB, which goes on with the
    /// text given last for the same game. Given for any `want`
    /// but [`Want::Skip`]; the pieces that open a block go on with the last
    /// game of the block before, and come with the game index
    /// [`CONTINUED`](crate::archive::CONTINUED).
    Piece(Vec<u8>),
}

/// Decodes the games of a block that `want` asks for, in order, calling
/// `sink(index in block, game)`; returns the number of games. Games are
/// numbered from 0 in the block, the pieces of a long game
/// ([`Decoded::Piece`]) having their game's number.
pub(crate) fn decode_block(
    codec: &dyn GameCodec,
    payload: &[u8],
    want: &dyn Fn(usize) -> Want,
    sink: &mut dyn FnMut(usize, Decoded),
) -> Result<usize, String> {
    decode_block_with(codec, payload, want, None, sink, usize::MAX)
}

/// [`decode_block`] that stops after game `last` (0-based): the games after
/// it are neither decoded nor checked (`get` of one game decodes, on
/// average, half a block); the games wanted as [`Want::Mainline`] decode
/// as far as `keep` lets them.
pub(crate) fn decode_block_with(
    codec_of_block: &dyn GameCodec,
    payload: &[u8],
    want: &dyn Fn(usize) -> Want,
    keep: Option<&Keep<'_>>,
    sink: &mut dyn FnMut(usize, Decoded),
    last: usize,
) -> Result<usize, String> {
    let stored = read_columns(payload)?;
    let mut c = Cursors::new(&stored)?;
    // Pieces of a game are no games of their own.
    let games = stored.data[KIND]
        .iter()
        .filter(|&&k| k != KIND_PIECE)
        .count();
    let mut queue = Queue::new(codec_of_block, keep, sink, games);
    let engine_block = !stored.data[ENGINE].is_empty();
    // After the last game whose tags are wanted (its text, its record, its
    // tags or its opening), the games wanted for their mainlines and those
    // skipped read only the tags that moves are decoded with. (A block of
    // engine comments decodes some skipped games whole.)
    let end = games.min(last.saturating_add(1));
    if !engine_block {
        c.skim_from = (0..end)
            .rev()
            .find(|&k| !matches!(want(k), Want::Skip | Want::Mainline))
            .map_or(0, |k| k + 1);
    }
    // Evaluations are read for text and records alone (moves are not
    // coded from them): where no game up to the last wants either, their
    // stream is left unread.
    c.evals_unread = !(0..end).any(|k| whole(want(k)));
    // The group of the last game looked at, and the last game of the group
    // whose text or record is wanted: the games with engine comments of
    // its group before it are decoded for the numbers that its engine
    // comments may be coded from ([`fields::FIELD_GROUP`]).
    let mut wanted_whole: (usize, Option<usize>) = (usize::MAX, None);
    // Games read so far are decoded and given to the sink before an error
    // in a later one is returned, as when each is decoded in turn.
    let read = (|| -> Result<(), String> {
        // Games started so far.
        let mut started = 0usize;
        for _ in 0..stored.games {
            let game_kind = *c.kind.next().ok_or("kind column ends early")?;
            if game_kind == KIND_PIECE {
                let text = c.verbatim_text()?;
                let owner = started.checked_sub(1).unwrap_or(crate::archive::CONTINUED);
                if want(owner) != Want::Skip {
                    queue.ready(owner, Decoded::Piece(text.to_vec()));
                }
                continue;
            }
            let g = started;
            if g > last {
                return Ok(());
            }
            started += 1;
            let w = want(g);
            let group = g / fields::FIELD_GROUP;
            if engine_block && w == Want::Skip && wanted_whole.0 != group {
                let end = ((group + 1) * fields::FIELD_GROUP)
                    .min(games)
                    .min(last.saturating_add(1));
                wanted_whole = (group, (g + 1..end).rev().find(|&k| whole(want(k))));
            }
            let reference =
                w == Want::Skip && wanted_whole.0 == group && wanted_whole.1.is_some_and(|k| k > g);
            if game_kind == 1 || game_kind == KIND_TEXT {
                let text = c.verbatim_text()?;
                if let Some(d) = verbatim_decoded(w, text, game_kind == KIND_TEXT)? {
                    queue.ready(g, d);
                }
            } else if game_kind & 1 != 0
                || (game_kind & !KIND_CR) / KIND_LAYOUT > text::LAYOUTS
                || game_kind & (KIND_CR | KIND_CRLF) == KIND_CR | KIND_CRLF
            {
                return Err(format!("unknown game kind {game_kind}"));
            } else {
                c.parsed_game(g, (w, reference), game_kind, &mut queue)?;
            }
        }
        c.check_end()
    })();
    queue.flush()?;
    read.map(|()| games)
}

/// What `w` asks of a game stored as `text`: verbatim, or, where `parsed`,
/// a game that parses ([`KIND_TEXT`]), whose tags and record are read from
/// its text.
fn verbatim_decoded(w: Want, text: &[u8], parsed: bool) -> Result<Option<Decoded>, String> {
    let unparsed =
        |u: text::Unparsed| format!("a game stored as text does not parse: {}", u.detail);
    // Read as the writer read it: lines that end with CR alone with LF.
    let lf = if parsed { lf_text(text) } else { None };
    let read = lf.as_deref().unwrap_or(text);
    // A mainline wanted: the record, which has it.
    let w = if w == Want::Mainline { Want::Record } else { w };
    Ok(Some(match w {
        Want::Skip => return Ok(None),
        Want::Text => Decoded::Text(text.to_vec()),
        Want::Record if parsed => {
            let game = text::parse(read).map_err(unparsed)?;
            if null_in_mainline(&game.events) {
                // As a parsed game's: its text.
                Decoded::Record(GameRow::Text(text.to_vec()))
            } else {
                Decoded::Record(GameRow::Record(GameRecord::of(
                    game.tags,
                    game.start,
                    &game.events,
                )))
            }
        }
        Want::Record => Decoded::Record(GameRow::Text(text.to_vec())),
        Want::Tags | Want::TagsNotGiven if parsed => Decoded::Tags(GameTags {
            tags: text::tags_of(read).map_err(unparsed)?,
            verbatim: None,
        }),
        Want::Tags | Want::TagsNotGiven => Decoded::Tags(GameTags {
            tags: crate::pgn::read_written(text, false).tags,
            verbatim: Some(text.to_vec()),
        }),
        Want::Opening | Want::OpeningStored => Decoded::Opening(verbatim_opening(read)),
        Want::Mainline => unreachable!("read as a record"),
    }))
}

/// Whether a null move is among the mainline's `events`.
fn null_in_mainline(events: &[Event]) -> bool {
    let mut depth = 0usize;
    for e in events {
        match e {
            Event::Open => depth += 1,
            Event::Close => depth = depth.saturating_sub(1),
            Event::Null if depth == 0 => return true,
            _ => {}
        }
    }
    false
}

/// Cursors over a block's columns, moved on game by game.
struct Cursors<'a> {
    /// Tag names, and the values of each, in game order.
    names: Vec<&'a [u8]>,
    values: Vec<std::vec::IntoIter<&'a [u8]>>,
    time_control: Option<usize>,
    tag_state: TagState,
    /// The first game from which on no game's tags are wanted, only moves:
    /// the tags that moves are not decoded with are skimmed
    /// ([`TagState::skim`]).
    skim_from: usize,
    /// Whether the evaluations' stream is left unread (no game of the
    /// pass wants its text or record).
    evals_unread: bool,
    has_tag_numbers: bool,
    tag_numbers: BinaryDecoder<'a>,
    kind: std::slice::Iter<'a, u8>,
    verbatim: &'a [u8],
    /// The lengths of its texts, where the `verbatim` column has none.
    recut: Option<std::vec::IntoIter<usize>>,
    seq: &'a [u8],
    events: &'a [u8],
    moves: Bits,
    move_pos: usize,
    /// Whether each game's move streams end on a whole byte.
    aligned: bool,
    move_lengths: Lengths<'a>,
    comments: &'a [u8],
    has_layouts: bool,
    layouts: &'a [u8],
    engine: &'a [u8],
    clocks: BinaryDecoder<'a>,
    evals: BinaryDecoder<'a>,
    annotation_coders: AnnotationCoders<'a>,
    /// The clocks' model of the game being read, kept from game to game.
    clock_model: ClockModel,
    /// The last `TimeControl` value read and what it gives
    /// ([`time_control`]): most games of a block repeat it.
    last_time_control: (Vec<u8>, (i64, i64)),
}

/// A parsed game's tags as its block stores them.
#[derive(Default)]
struct StoredTags {
    /// Tags (for a skipped game none).
    tags: Vec<(Vec<u8>, Vec<u8>)>,
    /// The first `TimeControl` of the game, as the writer's clock model
    /// takes it ([`time_control`]; a game with two read the
    /// last before issue 26's fuzzing found it: such a game's clocks did
    /// not decode).
    time_control: Option<(i64, i64)>,
    /// Tags the moves give: (index in `tags`, 0 for ECO or 1 for Opening).
    predicted: Vec<(usize, usize)>,
    /// The opening's label, where the block codes it, and the ply of its
    /// position.
    label: Option<u32>,
    label_ply: Option<usize>,
}

impl<'a> Cursors<'a> {
    fn new(stored: &'a Stored) -> Result<Cursors<'a>, String> {
        let d = &stored.data;
        if d[KIND].len() != stored.games {
            return Err("kind column does not match the game count".into());
        }
        // Tag names and values, split by name.
        let names: Vec<&[u8]> = if d[TAG_NAMES].is_empty() {
            Vec::new()
        } else {
            d[TAG_NAMES]
                .strip_suffix(b"\n")
                .ok_or("bad tag names")?
                .split(|&b| b == b'\n')
                .collect()
        };
        let mut tag_state = TagState::new(stored.tag_marks);
        for name in &names {
            tag_state.add_name(name);
        }
        let mut counts = vec![0usize; names.len()];
        let mut seq = d[TAG_SEQ].as_slice();
        while !seq.is_empty() {
            let id = get_varint(&mut seq)?;
            if id > 0 {
                *counts
                    .get_mut(id as usize - 1)
                    .ok_or("tag id out of range")? += 1;
            }
        }
        let mut values = Vec::with_capacity(names.len());
        let mut rest = d[TAG_VALUES].as_slice();
        for &count in &counts {
            let mut v: Vec<&[u8]> = Vec::with_capacity(count);
            for _ in 0..count {
                v.push(take_until(&mut rest, 0, "tag value")?);
            }
            values.push(v.into_iter());
        }
        Ok(Cursors {
            time_control: names.iter().position(|&n| n == b"TimeControl"),
            names,
            values,
            tag_state,
            skim_from: usize::MAX,
            evals_unread: false,
            has_tag_numbers: !d[TAG_NUMBERS].is_empty(),
            tag_numbers: BinaryDecoder::new(&d[TAG_NUMBERS]),
            kind: d[KIND].iter(),
            verbatim: &d[VERBATIM],
            recut: if stored.recut {
                let lengths =
                    recut_lengths(&d[VERBATIM]).ok_or("a text that does not cut into games")?;
                Some(lengths.into_iter())
            } else {
                None
            },
            seq: &d[TAG_SEQ],
            events: &d[EVENTS],
            moves: Bits::from_bytes(d[MOVES].clone(), d[MOVES].len() * 8)
                .map_err(|e| e.to_string())?,
            move_pos: 0,
            aligned: stored.aligned,
            move_lengths: Lengths::new(&d[MOVE_LENGTHS]),
            comments: &d[COMMENTS],
            has_layouts: stored.layouts,
            layouts: &d[LAYOUT],
            engine: &d[ENGINE],
            clocks: BinaryDecoder::new(&d[CLOCKS]),
            evals: BinaryDecoder::new(&d[EVALS]),
            annotation_coders: AnnotationCoders {
                clocks: ClockCoder::new(),
                evals: EvalCoder::new(),
                eval_text: &d[EVAL_TEXT],
            },
            clock_model: ClockModel::new(b""),
            last_time_control: (Vec::new(), time_control(b"")),
        })
    }

    /// The next text of the `verbatim` column.
    fn verbatim_text(&mut self) -> Result<&'a [u8], String> {
        let Some(lengths) = &mut self.recut else {
            return take_counted(&mut self.verbatim, "verbatim");
        };
        let len = lengths.next().ok_or("verbatim column ends early")?;
        let (text, rest) = self.verbatim.split_at(len.min(self.verbatim.len()));
        self.verbatim = rest;
        Ok(text)
    }

    /// Reads a parsed game's columns and gives what `w` asks of it to
    /// `queue`, now or once its moves are decoded; a skipped game that is a
    /// `reference` is decoded whole, without giving it, for the numbers of
    /// its engine comments (a later game's may be coded from them).
    fn parsed_game(
        &mut self,
        g: usize,
        (w, reference): (Want, bool),
        game_kind: u8,
        queue: &mut Queue<'_, 'a>,
    ) -> Result<(), String> {
        let w = if reference { Want::Text } else { w };
        // The layout of its text.
        let layout = if self.has_layouts {
            let l = Layout::decode(&mut self.layouts)?;
            matches!(w, Want::Text | Want::Record).then_some(l)
        } else {
            None
        };
        let StoredTags {
            mut tags,
            time_control: game_time_control,
            predicted,
            label,
            label_ply,
        } = self.tags(w, g >= self.skim_from)?;
        let game_events = self.game_events()?;
        self.clock_model
            .reset(game_time_control.unwrap_or_else(|| time_control(b"")));
        // Tags that the moves give need the moves.
        let tags_alone = w == Want::TagsNotGiven || (w == Want::Tags && predicted.is_empty());
        if tags_alone {
            queue.ready(
                g,
                Decoded::Tags(GameTags {
                    tags: std::mem::take(&mut tags),
                    verbatim: None,
                }),
            );
        }
        // The opening where the block stores it with its ply.
        // (`Some(None)`: the label that says the table names none.)
        let stored_opening = matches!(w, Want::Opening | Want::OpeningStored)
            .then(|| stored_opening(self.tag_state.openings(), label, label_ply))
            .flatten();
        if let Some(o) = stored_opening {
            queue.ready(g, Decoded::Opening(o));
        } else if w == Want::OpeningStored {
            queue.ready(g, Decoded::NeedsMoves);
        }
        // Tags the moves give, and an opening not stored, need the
        // mainline's first plies.
        let tags_from_moves = (w == Want::Tags && !predicted.is_empty())
            || (w == Want::Opening && stored_opening.is_none())
            || w == Want::Mainline;
        // The whole game: its text, or its record.
        let whole = matches!(w, Want::Text | Want::Record);
        // (None for a game skipped: no allocation.)
        let plies = if whole || tags_from_moves {
            segment_plies(&game_events)?
        } else {
            Vec::new()
        };
        // Clocks and evaluations before moves: their streams follow the
        // events alone, and the mainline's readings are part of its moves'
        // context. (None in a pass that wants stored openings alone.)
        let Annotations {
            mainline_clocks,
            clocks,
            evals,
        } = self.annotations(w, &game_events, plies.first().copied(), whole)?;
        // This game's comments and lines in the other columns: kept for
        // its text, the mainline alone for tags that the moves give.
        let (comments, segments, engine_comments) =
            game_comments(&game_events, &mut self.comments, whole)?;
        let (fields, flags) = self.engine_fields(engine_comments)?;
        let group = g / fields::FIELD_GROUP;
        if engine_comments && !whole {
            queue.incomplete(group, g);
        }
        let lines = self.lines(segments, whole, tags_from_moves)?;
        if reference && !engine_comments {
            return Ok(());
        }
        if whole || tags_from_moves {
            queue.pending(
                g,
                PendingGame {
                    at: g,
                    want: w,
                    kind: game_kind,
                    layout,
                    tags,
                    predicted,
                    label,
                    openings: self.tag_state.openings(),
                    events: game_events,
                    plies,
                    mainline_clocks,
                    clocks,
                    evals,
                    comments,
                    fields,
                    lines,
                    own: !reference,
                    engine: engine_comments,
                    from_table: flags & fields::FROM_TABLE != 0,
                    alone: flags & fields::ALONE != 0,
                    group,
                },
            )?;
        }
        Ok(())
    }

    /// The next game's clock readings and evaluations (its `events`; the
    /// mainline's `plies` where they are counted), for its text too where
    /// `whole`: none in a pass that wants stored openings alone.
    fn annotations(
        &mut self,
        w: Want,
        events: &[u8],
        plies: Option<usize>,
        whole: bool,
    ) -> Result<Annotations, String> {
        if w == Want::OpeningStored {
            return Ok(Annotations::default());
        }
        read_annotations(
            events,
            &mut self.clock_model,
            &mut self.annotation_coders,
            (&mut self.clocks, &mut self.evals),
            plies.unwrap_or(0),
            (whole, !self.evals_unread),
        )
    }

    /// The streams of the next game's engine comments' fields (none where
    /// it has not `any`), and its flags ([`fields::FROM_TABLE`],
    /// [`fields::ALONE`]).
    fn engine_fields(&mut self, any: bool) -> Result<([&'a [u8]; 2], u8), String> {
        if !any {
            return Ok(([&[][..], &[]], 0));
        }
        let head = get_varint(&mut self.engine)?;
        let flags = (head & 3) as u8;
        if flags & fields::ALONE != 0 {
            if head != u64::from(fields::ALONE | fields::FROM_TABLE) {
                return Err("engine-fields column: a game from its table alone has streams".into());
            }
            return Ok(([&[][..], &[]], flags));
        }
        let main = take_len(&mut self.engine, head >> 2, "engine-fields")?;
        let times = take_counted(&mut self.engine, "engine-fields")?;
        Ok(([main, times], flags))
    }

    /// The next game's tags: all that `w` asks for (for a skipped game
    /// none), and those that its other columns are read with; where
    /// `skim`, only those that its moves are decoded with, and the others
    /// are skimmed ([`TagState::skim`]).
    fn tags(&mut self, w: Want, skim: bool) -> Result<StoredTags, String> {
        let mut t = StoredTags::default();
        self.tag_state.start_game();
        loop {
            let id = get_varint(&mut self.seq)?;
            if id == 0 {
                return Ok(t);
            }
            let i = id as usize - 1;
            let stored_value = self
                .values
                .get_mut(i)
                .and_then(Iterator::next)
                .ok_or("tag values end early")?;
            let name = self.names[i];
            if let Some(k) = self.tag_state.labelled(i, stored_value)? {
                if t.label.is_none() {
                    if !self.has_tag_numbers {
                        return Err("an opening label without a tag-numbers column".into());
                    }
                    let l = self.tag_state.decode_label(&mut self.tag_numbers)?;
                    t.label = Some(l);
                    t.label_ply = self.tag_state.decode_ply(l, &mut self.tag_numbers)?;
                }
                if matches!(w, Want::Tags | Want::Text | Want::Record) {
                    let o = t
                        .label
                        .and_then(|l| self.tag_state.openings().label_or_none(l))
                        .ok_or("a bad opening label")?;
                    let value = if k == 0 { o.eco } else { o.name };
                    t.tags.push((name.to_vec(), value.as_bytes().to_vec()));
                }
            } else if let Some(k) = self.tag_state.predicted(i, stored_value)? {
                if !matches!(w, Want::Skip | Want::TagsNotGiven) {
                    t.predicted.push((t.tags.len(), k));
                    t.tags.push((name.to_vec(), Vec::new()));
                }
            } else if skim && !self.tag_state.is_read_by_moves(i) {
                self.tag_state
                    .skim(i, stored_value, &mut self.tag_numbers)?;
            } else {
                let value = self
                    .tag_state
                    .decode(i, stored_value, &mut self.tag_numbers)?;
                if Some(i) == self.time_control && t.time_control.is_none() {
                    let (last, parsed) = &mut self.last_time_control;
                    if last.as_slice() != value {
                        *parsed = time_control(value);
                        last.clear();
                        last.extend_from_slice(value);
                    }
                    t.time_control = Some(*parsed);
                }
                if w != Want::Skip {
                    t.tags.push((name.to_vec(), value.to_vec()));
                }
            }
        }
    }

    /// The next game's events, an annotated line's spelled out.
    fn game_events(&mut self) -> Result<std::borrow::Cow<'a, [u8]>, String> {
        let end = self
            .events
            .iter()
            .enumerate()
            .scan(false, |after_nag, (i, &b)| {
                // A glyph's number and an annotated line's pattern are no
                // events.
                let is_end = !*after_nag && ends_game(b);
                *after_nag = !*after_nag && (b == E_NAG || (i == 0 && b == E_ANNOTATED));
                Some((i, is_end))
            })
            .find(|&(_, e)| e)
            .map(|(i, _)| i)
            .ok_or("events column ends early")?;
        let (stored_events, rest) = self.events.split_at(end + 1);
        self.events = rest;
        // An annotated line's ply count is read from its moves' lengths.
        Ok(if stored_events.first() == Some(&E_ANNOTATED) {
            let pattern = *stored_events.get(1).ok_or("bad annotated line")?;
            let mut all = spell_annotated(pattern, self.move_lengths.plies()?)?;
            all.extend_from_slice(&stored_events[2..]);
            all.into()
        } else {
            stored_events.into()
        })
    }

    /// The moves of the next game's `segments` lines: all where the game
    /// is `whole`, the mainline alone for tags `from_moves`, else none.
    fn lines(
        &mut self,
        segments: usize,
        whole: bool,
        from_moves: bool,
    ) -> Result<Vec<Bits>, String> {
        let mut lines = Vec::new();
        for s in 0..segments {
            let len = self.move_lengths.next(s > 0)?;
            let end = self
                .move_pos
                .checked_add(len)
                .ok_or("move length overflow")?;
            if whole || (s == 0 && from_moves) {
                if end > self.moves.len() {
                    return Err("moves column ends early".into());
                }
                lines.push(slice_bits(&self.moves, self.move_pos, len));
            }
            self.move_pos = end;
        }
        if self.aligned {
            self.move_pos = self.move_pos.next_multiple_of(8);
        }
        Ok(lines)
    }

    /// Checks, after the block's last game, that every column was read to
    /// its end.
    fn check_end(&mut self) -> Result<(), String> {
        if self.clocks.overrun() || self.evals.overrun() {
            return Err("clock or evaluation stream ends early".into());
        }
        if self.has_tag_numbers && self.tag_numbers.overrun() {
            return Err("tag-numbers column ends early".into());
        }
        if self.move_lengths.overrun() {
            return Err("move-lengths column does not match the games".into());
        }
        if self.kind.next().is_some()
            || !self.verbatim.is_empty()
            || !self.seq.is_empty()
            || !self.events.is_empty()
            || !self.layouts.is_empty()
            || !self.engine.is_empty()
        {
            return Err("columns hold more than the game count".into());
        }
        Ok(())
    }
}

/// The next item of a column of `varint` lengths and bytes.
fn take_counted<'a>(column: &mut &'a [u8], name: &str) -> Result<&'a [u8], String> {
    let len = get_varint(column)?;
    take_len(column, len, name)
}

/// The next `len` bytes of `column`.
fn take_len<'a>(column: &mut &'a [u8], len: u64, name: &str) -> Result<&'a [u8], String> {
    if len > column.len() as u64 {
        return Err(format!("{name} column ends early"));
    }
    let (item, rest) = column.split_at(len as usize);
    *column = rest;
    Ok(item)
}

/// The opening of a game whose block stores it with its ply (`Some(None)`:
/// the label that says the table names none).
fn stored_opening(
    openings: &'static OpeningTable,
    label: Option<u32>,
    ply: Option<usize>,
) -> Option<Option<Named<'static>>> {
    let l = label?;
    if Some(l) == openings.none_label() {
        return Some(None);
    }
    let o = openings.label(l)?;
    Some(Some(Named {
        eco: o.eco,
        name: o.name,
        ply: ply?,
    }))
}

/// The opening of a game stored verbatim, as lichess names it: `None`
/// where its text is no game that parses, or names none.
fn verbatim_opening(text: &[u8]) -> Option<Named<'static>> {
    OpeningTable::lichess().classify_text(text)
}

/// A game whose columns are read and whose moves are still to decode:
/// what [`finish`] needs to give its text (or its tags, where the moves
/// give some), on any thread.
struct PendingGame<'a> {
    /// Its index in the block.
    at: usize,
    /// [`Want::Text`], [`Want::Record`], [`Want::Tags`], [`Want::Opening`]
    /// or [`Want::Mainline`].
    want: Want,
    kind: u8,
    /// The layout of its text, for its text.
    layout: Option<Layout>,
    tags: Vec<(Vec<u8>, Vec<u8>)>,
    /// Tags the moves give: (index in `tags`, 0 for ECO or 1 for Opening).
    predicted: Vec<(usize, usize)>,
    /// The opening's label that the mainline's moves are coded knowing.
    label: Option<u32>,
    /// The opening table of the block.
    openings: &'static OpeningTable,
    events: std::borrow::Cow<'a, [u8]>,
    /// The number of moves of each line.
    plies: Vec<usize>,
    mainline_clocks: Vec<Option<u32>>,
    clocks: std::vec::IntoIter<Reading>,
    evals: EvalTexts,
    comments: Vec<&'a [u8]>,
    /// The streams of its engine comments' fields: all but times, times.
    fields: [&'a [u8]; 2],
    /// The moves of each line (the mainline alone for tags).
    lines: Vec<Bits>,
    /// Whether it is given to the sink (else decoded for the numbers of
    /// its engine comments alone).
    own: bool,
    /// Whether it has engine comments, whether their numbers are coded
    /// from those of its group's earlier games (or repeat an earlier
    /// game's), and its group.
    engine: bool,
    from_table: bool,
    alone: bool,
    group: usize,
}

/// Decodes the moves of a game whose columns are read and gives its text
/// (or its tags).
fn finish(
    codec_of_block: &dyn GameCodec,
    keep: Option<&Keep<'_>>,
    game: PendingGame<'_>,
    table: &mut fields::FieldTable,
) -> Result<Decoded, String> {
    match prepare(codec_of_block, keep, game)? {
        Stage::Done(d) => Ok(d),
        Stage::Replay(p) => replay(*p, table),
    }
}

/// A game on its way: decoded, or its mainline decoded and its text still
/// to replay ([`replay`]).
// As `Gathered`: mostly decoded games, a block at a time.
#[allow(clippy::large_enum_variant)]
enum Stage<'a> {
    Done(Decoded),
    Replay(Box<Prepared<'a>>),
}

/// A game whose mainline's moves are decoded: what [`replay`] needs (the
/// game without its lines, plies and mainline clocks, which `segments`
/// took).
struct Prepared<'a> {
    game: PendingGame<'a>,
    start: Chess,
    segments: Segments,
    mainline: std::vec::IntoIter<Move>,
}

/// The first stage of [`finish`]: the moves of a game's mainline (the most
/// of a game's time), on any thread.
fn prepare<'a>(
    codec_of_block: &dyn GameCodec,
    keep: Option<&Keep<'_>>,
    mut game: PendingGame<'a>,
) -> Result<Stage<'a>, String> {
    if matches!(game.want, Want::Tags | Want::Opening) {
        return finish_opening(codec_of_block, game).map(Stage::Done);
    }
    if game.want == Want::Mainline {
        return finish_mainline(codec_of_block, keep, game).map(Stage::Done);
    }
    let start = text::start_of(&game.tags).map_err(|u| u.detail)?;
    let context = context_of(&game.tags);
    let clocks = std::mem::take(&mut game.mainline_clocks);
    let mut segments = Segments {
        variation: codec_of_block.in_context(&context),
        mainline: mainline_codec(codec_of_block, context, clocks, game.openings, game.label)?,
        plies: std::mem::take(&mut game.plies),
        lines: std::mem::take(&mut game.lines).into_iter(),
        next: 0,
        to_end: game.events.first() == Some(&E_LINE),
    };
    let mainline = segments.read(&start)?;
    if !game.predicted.is_empty() {
        let opening = game.openings.predict(&start, mainline.as_slice());
        fill_openings(&mut game.tags, &game.predicted, opening)?;
    }
    if game.want == Want::Record && is_plain(&game.events) {
        // No text to write: the record straight from the readings.
        let PendingGame {
            tags,
            events,
            clocks,
            evals,
            ..
        } = game;
        return plain_record(tags, start, mainline.collect(), &events, clocks, evals)
            .map(|r| Stage::Done(Decoded::Record(r)));
    }
    Ok(Stage::Replay(Box::new(Prepared {
        game,
        start,
        segments,
        mainline,
    })))
}

/// The second stage of [`finish`]: the game's events replayed into its
/// text (or record), its engine comments' numbers coded from `table` where
/// they are, which then holds the game's.
fn replay(p: Prepared<'_>, table: &mut fields::FieldTable) -> Result<Decoded, String> {
    let Prepared {
        game,
        start,
        mut segments,
        mainline,
    } = p;
    let PendingGame {
        want,
        kind,
        layout,
        tags,
        events,
        mut clocks,
        mut evals,
        comments,
        fields,
        engine,
        from_table,
        alone,
        ..
    } = game;
    // Engine comments: the positions of their lines, the mainline's
    // moves, each side's last template and their fields.
    let coder = |table| {
        let coder = FieldCoder::new(&start, mainline.as_slice()).with_table(table, from_table);
        if alone { coder.alone() } else { coder }
    };
    let engine = engine.then(|| EngineComments::new(coder(std::mem::take(table)), fields));
    let mut replay = Replay {
        segs: vec![mainline],
        // Positions are followed only where a variation needs its start,
        // a line goes on after a null move or engine comments stand.
        variations: events.contains(&E_OPEN) || events.contains(&E_NULL) || engine.is_some(),
        board: Walk::new(&start),
        engine,
        out: Vec::with_capacity(events.len()),
        outcome: None,
        result_on_new_line: false,
        null_in_mainline: false,
    };
    let mut comments = comments.into_iter();
    let mut annotation = Vec::new();
    let mut i = 0;
    while i < events.len() {
        let code = events[i];
        i += 1;
        match code {
            E_NAG => {
                let n = *events.get(i).ok_or("nag missing")?;
                i += 1;
                replay.out.push(Event::Nag(n));
            }
            E_COMMENT => {
                let c = comments.next().ok_or("comment column ends early")?;
                replay.out.push(Event::Comment(c.to_vec()));
            }
            E_ENGINE_NEW | E_ENGINE_SAME => {
                let e = replay
                    .engine
                    .as_mut()
                    .ok_or("an engine comment without its fields")?;
                let new = if code == E_ENGINE_NEW {
                    Some(comments.next().ok_or("comment column ends early")?)
                } else {
                    None
                };
                let c = e.comment(&replay.board, new)?;
                replay.out.push(Event::Comment(c));
            }
            E_CLK | E_EVAL | E_EVAL_CLK | E_CLK_COMPACT | E_CLK_TENTHS => {
                let (eval, clock) = next_reading(code, &mut clocks, &mut evals)?;
                annotation.clear();
                match clock {
                    Some((seconds, tenth)) if code >= E_CLK_COMPACT => {
                        format_compact_clock(seconds, tenth, &mut annotation);
                    }
                    _ => format_annotation(eval, clock.map(|c| c.0), &mut annotation),
                }
                replay.out.push(Event::Comment(annotation.clone()));
            }
            E_RESULT_LINE if i < events.len() && events[i] != E_END => {
                replay.result_on_new_line = true;
            }
            E_RESULT_AS_TAG => replay.outcome = Some(result_tag(&tags)?),
            _ => replay.structure(code, i == 1, &mut segments)?,
        }
    }
    if let Some(e) = &mut replay.engine {
        *table = e.coder.take_table(true);
    }
    replay.finish(tags, start, want, kind, layout)
}

/// [`finish`] of a game whose tags that the moves give, or whose opening,
/// are wanted: the mainline's first plies, as far as the opening table
/// reaches.
fn finish_opening(
    codec_of_block: &dyn GameCodec,
    game: PendingGame<'_>,
) -> Result<Decoded, String> {
    let (line, mut game) = Mainline::of(codec_of_block, game)?;
    // Only as far as a move may still change the opening: lichess's for an
    // opening, the block's for its tags.
    let opening = game.want == Want::Opening;
    let table = if opening {
        OpeningTable::lichess()
    } else {
        game.openings
    };
    let mut walk = table.walk(&line.start);
    let mut played = 0;
    let prefix = line
        .codec
        .decode_prefix(&line.start, &line.bits, line.counted, &mut |moves| {
            for &m in &moves[played..] {
                walk.play(m);
            }
            played = moves.len();
            walk.goes_on()
        })
        .map_err(|e| e.to_string())?;
    // The moves after the last question (the game's last ones).
    for &m in &prefix[played..] {
        walk.play(m);
    }
    if opening {
        return Ok(Decoded::Opening(walk.named()));
    }
    fill_openings(&mut game.tags, &game.predicted, walk.opening())?;
    Ok(Decoded::Tags(GameTags {
        tags: game.tags,
        verbatim: None,
    }))
}

/// [`finish`] of a game whose mainline is wanted: its moves up to its
/// first null move, as far as `keep` lets them go (and one move more).
fn finish_mainline(
    codec_of_block: &dyn GameCodec,
    keep: Option<&Keep<'_>>,
    game: PendingGame<'_>,
) -> Result<Decoded, String> {
    let at = game.at;
    let (line, _) = Mainline::of(codec_of_block, game)?;
    let mut pos = line.start.clone();
    let mut played = 0;
    // The number of moves after which `keep` said no.
    let mut stop: Option<usize> = None;
    let moves = line
        .codec
        .decode_prefix(&line.start, &line.bits, line.counted, &mut |moves| {
            if let Some(n) = stop {
                return moves.len() <= n;
            }
            let Some(keep) = keep else { return true };
            for &m in &moves[played..] {
                pos.play_unchecked(m);
            }
            played = moves.len();
            if !keep(at, &pos) {
                stop = Some(moves.len());
            }
            true
        })
        .map_err(|e| e.to_string())?;
    Ok(Decoded::Mainline(line.start, moves))
}

/// A game's mainline, ready to decode: its start, its codec (in the game's
/// context, aimed at its opening where the block stores its label), its
/// stream, and its number of moves where the stream does not run to its
/// end.
struct Mainline {
    start: Chess,
    codec: Box<dyn GameCodec>,
    bits: Bits,
    counted: Option<usize>,
}

impl Mainline {
    /// `game`'s mainline, and the rest of `game` (its moves and clocks
    /// taken).
    fn of<'a>(
        codec_of_block: &dyn GameCodec,
        mut game: PendingGame<'a>,
    ) -> Result<(Mainline, PendingGame<'a>), String> {
        let bits = std::mem::take(&mut game.lines)
            .into_iter()
            .next()
            .ok_or("moves column ends early")?;
        let start = text::start_of(&game.tags).map_err(|u| u.detail)?;
        let codec = mainline_codec(
            codec_of_block,
            context_of(&game.tags),
            std::mem::take(&mut game.mainline_clocks),
            game.openings,
            game.label,
        )?;
        let counted = (game.events.first() != Some(&E_LINE)).then_some(game.plies[0]);
        let mainline = Mainline {
            start,
            codec,
            bits,
            counted,
        };
        Ok((mainline, game))
    }
}

/// A game's context, as the writer took it from the same tags (codecs
/// whose model does not read it ignore it).
fn context_of(tags: &[(Vec<u8>, Vec<u8>)]) -> GameContext {
    GameContext::from_tags(tags.iter().map(|(k, v)| (k, v)))
}

/// The codec of a game's mainline: in its context with its clocks, and
/// aimed at its opening where the block stores its label (its moves were
/// coded knowing it).
fn mainline_codec(
    codec: &dyn GameCodec,
    context: GameContext,
    clocks: Vec<Option<u32>>,
    openings: &'static OpeningTable,
    label: Option<u32>,
) -> Result<Box<dyn GameCodec>, String> {
    let in_context = codec.in_context(&context.with_clocks(clocks));
    match label {
        Some(l) => in_context
            .aimed_at(openings, l)
            .ok_or_else(|| "an opening label for a codec that cannot aim at it".into()),
        None => Ok(in_context),
    }
}

/// The outcome that a game's `Result` tag gives.
fn result_tag(tags: &[(Vec<u8>, Vec<u8>)]) -> Result<u8, String> {
    let tag = tags
        .iter()
        .find(|(k, _)| k == b"Result")
        .map(|(_, v)| v.as_slice());
    let o = text::OUTCOMES
        .iter()
        .position(|o| Some(o.as_bytes()) == tag)
        .ok_or("result tag is not a result")?;
    Ok(o as u8)
}

/// The move streams of a game's lines, decoded one at a time as its
/// events open them.
struct Segments {
    mainline: Box<dyn GameCodec>,
    variation: Box<dyn GameCodec>,
    /// The number of moves of each line.
    plies: Vec<usize>,
    lines: std::vec::IntoIter<Bits>,
    next: usize,
    /// Whether the mainline is decoded to its stream's end (its events
    /// start with `E_LINE`).
    to_end: bool,
}

impl Segments {
    /// The moves of the next line, from `start`.
    fn read(&mut self, start: &Chess) -> Result<std::vec::IntoIter<Move>, String> {
        let n = *self
            .plies
            .get(self.next)
            .ok_or("more lines than the events say")?;
        let first = self.next == 0;
        let codec = if first {
            &self.mainline
        } else {
            &self.variation
        };
        let bits = self.lines.next().ok_or("more lines than the events say")?;
        self.next += 1;
        let decoded = if first && self.to_end {
            codec.decode(start, &bits)
        } else {
            codec.decode_counted(start, &bits, n)
        };
        Ok(decoded.map_err(|e| e.to_string())?.into_iter())
    }
}

/// A game's events replayed into the events of its text: its lines'
/// moves, the positions that its variations start from, and where its
/// engine comments stand.
struct Replay<'f> {
    /// The moves of the open lines, the innermost last.
    segs: Vec<std::vec::IntoIter<Move>>,
    /// Whether positions are followed: only where a variation needs its
    /// start, a line goes on after a null move or an engine comment's
    /// fields refer to the position.
    variations: bool,
    /// The positions of the open lines.
    board: Walk,
    engine: Option<EngineComments<'f>>,
    out: Vec<Event>,
    outcome: Option<u8>,
    result_on_new_line: bool,
    /// A record's mainline is moves from the start: a game with a null
    /// move in its mainline gives its text instead, as a game stored
    /// verbatim does.
    null_in_mainline: bool,
}

impl Replay<'_> {
    fn play(&mut self, m: Move) {
        if self.variations {
            self.board.play(m);
        }
        self.out.push(Event::Move(m));
    }

    /// An event of the game's structure (`first`: its first event): a move
    /// or the whole mainline, a null move, a variation's start or end, the
    /// end or a result.
    fn structure(&mut self, code: u8, first: bool, segments: &mut Segments) -> Result<(), String> {
        match code {
            E_LINE if first => {
                while let Some(m) = self.segs[0].next() {
                    self.play(m);
                }
            }
            E_MOVE => {
                let m = self
                    .segs
                    .last_mut()
                    .and_then(Iterator::next)
                    .ok_or("fewer moves than the events say")?;
                self.play(m);
            }
            E_NULL => {
                if self.segs.pop().is_none_or(|mut s| s.next().is_some()) {
                    return Err("more moves than the events say".into());
                }
                self.null_in_mainline |= self.segs.is_empty();
                let after = self.board.null().ok_or("a null move in check")?;
                self.segs.push(segments.read(&after)?);
                self.out.push(Event::Null);
            }
            E_OPEN => {
                let start = self.board.open();
                self.segs.push(segments.read(&start)?);
                self.out.push(Event::Open);
            }
            E_CLOSE => {
                if self.segs.len() < 2 {
                    return Err("unmatched variation end".into());
                }
                if self.segs.pop().is_some_and(|mut s| s.next().is_some()) {
                    return Err("more moves than the events say".into());
                }
                self.board.close();
                self.out.push(Event::Close);
            }
            E_END => {}
            c => match outcome_of(c) {
                Some(o) => self.outcome = Some(o),
                None => return Err(format!("unknown event {c}")),
            },
        }
        Ok(())
    }

    /// The game replayed: its record, or its text in its layout.
    fn finish(
        mut self,
        tags: Vec<(Vec<u8>, Vec<u8>)>,
        start: Chess,
        want: Want,
        kind: u8,
        layout: Option<Layout>,
    ) -> Result<Decoded, String> {
        if self.segs.len() != 1 || self.segs.pop().is_some_and(|mut s| s.next().is_some()) {
            return Err("moves and events disagree".into());
        }
        if self.engine.as_ref().is_some_and(|e| {
            e.dec[0].overrun()
                || if e.no_times {
                    e.coder.timed > 0
                } else {
                    e.dec[1].overrun()
                }
        }) {
            return Err("engine-fields stream ends early".into());
        }
        if self
            .engine
            .as_ref()
            .is_some_and(|e| !e.coder.repeated_all())
        {
            return Err("fewer numbers than the game repeated".into());
        }
        if want == Want::Record && !self.null_in_mainline {
            let record = GameRecord::of(tags, start, &self.out);
            return Ok(Decoded::Record(GameRow::Record(record)));
        }
        let game = ParsedGame {
            tags,
            start,
            events: self.out,
            outcome: self.outcome,
            result_on_new_line: self.result_on_new_line,
            layout: (kind & !KIND_CR) / KIND_LAYOUT,
        };
        let mut out = Vec::new();
        text::write(&game, &mut out);
        if let Some(layout) = layout {
            out = layout.apply(&out, kind & KIND_CRLF != 0)?;
        } else if kind & KIND_CRLF != 0 {
            out = to_crlf(&out);
        }
        if kind & KIND_CR != 0 {
            out = swap_line_ends(&out, b'\n', b'\r');
        }
        Ok(if want == Want::Record {
            Decoded::Record(GameRow::Text(out))
        } else {
            Decoded::Text(out)
        })
    }
}

/// The evaluation text and clock reading of annotation event `code`
/// (`E_CLK`, `E_EVAL` or `E_EVAL_CLK`), the next of their streams.
fn next_reading<'e>(
    code: u8,
    clocks: &mut std::vec::IntoIter<Reading>,
    evals: &'e mut EvalTexts,
) -> Result<(Option<&'e [u8]>, Option<Reading>), String> {
    let eval = if matches!(code, E_EVAL | E_EVAL_CLK) {
        Some(evals.next().ok_or("evaluation events disagree")?)
    } else {
        None
    };
    let clock = if code == E_EVAL {
        None
    } else {
        Some(clocks.next().ok_or("clock events disagree")?)
    };
    Ok((eval, clock))
}

/// Whether a game's events are moves of the mainline alone, with glyphs,
/// clock and evaluation readings and its result: no comments, variations
/// or null moves (a lichess game), whose record needs no text.
fn is_plain(events: &[u8]) -> bool {
    let mut i = 0;
    while i < events.len() {
        match events[i] {
            E_NAG => i += 1,
            E_LINE if i == 0 => {}
            E_MOVE | E_CLK | E_EVAL | E_EVAL_CLK | E_CLK_COMPACT | E_CLK_TENTHS | E_END
            | E_RESULT_LINE | E_RESULT_AS_TAG => {}
            c if outcome_of(c).is_some() => {}
            _ => return false,
        }
        i += 1;
    }
    true
}

/// The record of a game whose events are plain ([`is_plain`]): its moves
/// and the first clock reading and evaluation after each, as
/// [`GameRecord::of`] reads them from the comments that the text would
/// have.
fn plain_record(
    tags: Vec<(Vec<u8>, Vec<u8>)>,
    start: Chess,
    moves: Vec<Move>,
    events: &[u8],
    mut clocks: std::vec::IntoIter<Reading>,
    mut evals: EvalTexts,
) -> Result<GameRow, String> {
    let n = moves.len();
    let (mut clock_after, mut eval_after) = (vec![None; n], vec![None; n]);
    let mut played = 0usize;
    let mut comment = Vec::new();
    let mut i = 0;
    while i < events.len() {
        let code = events[i];
        i += 1;
        match code {
            E_LINE => played = n,
            E_MOVE => played += 1,
            E_NAG => i += 1,
            E_CLK | E_EVAL | E_EVAL_CLK | E_CLK_COMPACT | E_CLK_TENTHS => {
                let (eval, clock) = next_reading(code, &mut clocks, &mut evals)?;
                let Some(at) = played.checked_sub(1) else {
                    continue;
                };
                if let (Some((c, tenth)), Some(slot @ None)) = (clock, clock_after.get_mut(at)) {
                    *slot = Some(u64::from(c) * 1000 + u64::from(tenth.unwrap_or(0)) * 100);
                }
                if let (Some(e), Some(slot @ None)) = (eval, eval_after.get_mut(at)) {
                    // As the comment's text would be read.
                    comment.clear();
                    format_annotation(Some(e), None, &mut comment);
                    *slot = crate::pgn::eval_of_comment(&comment);
                }
            }
            _ => {}
        }
    }
    if played != n {
        return Err("moves and events disagree".into());
    }
    Ok(GameRow::Record(GameRecord {
        tags,
        start,
        moves,
        clocks: clock_after,
        evals: eval_after,
    }))
}

/// What a game's engine comments are decoded with.
struct EngineComments<'a> {
    coder: FieldCoder,
    /// The streams of all fields but times, and of times.
    dec: [BinaryDecoder<'a>; 2],
    /// Whether the game's stream of times is empty (no time is coded).
    no_times: bool,
    /// Each side's last template.
    last: [Option<Vec<u8>>; 2],
    fields: Vec<fields::Field>,
}

impl<'a> EngineComments<'a> {
    /// The decoder of a game's `fields` streams with `coder`.
    fn new(coder: FieldCoder, fields: [&'a [u8]; 2]) -> EngineComments<'a> {
        EngineComments {
            coder,
            dec: fields.map(BinaryDecoder::new_short),
            no_times: fields[1].is_empty(),
            last: [None, None],
            fields: Vec::new(),
        }
    }

    /// The text of the next engine comment at the position of `board`,
    /// whose template is `new` or the same side's last one.
    fn comment(&mut self, board: &Walk, new: Option<&[u8]>) -> Result<Vec<u8>, String> {
        let at = board.at();
        let side = at.side;
        if let Some(t) = new {
            self.last[side] = Some(t.to_vec());
        }
        let template = self.last[side]
            .as_deref()
            .ok_or("an engine comment repeats no template")?;
        self.fields.clear();
        self.coder
            .code(&mut self.dec, template, &at, &mut self.fields)?;
        let mut text = Vec::with_capacity(template.len() * 2);
        fields::render(template, &self.fields, &at, &mut text)?;
        Ok(text)
    }
}

/// The comments of a game, from the `comments` column (kept when `keep`:
/// texts and engine comments' templates, in order), its number of lines,
/// from its events, and whether it has engine comments.
fn game_comments<'a>(
    events: &[u8],
    comments: &mut &'a [u8],
    keep: bool,
) -> Result<(Vec<&'a [u8]>, usize, bool), String> {
    let mut kept = Vec::new();
    let mut segments = 1;
    let mut engine = false;
    let mut i = 0;
    while i < events.len() {
        match events[i] {
            E_NAG => i += 1,
            E_OPEN | E_NULL => segments += 1,
            E_ENGINE_SAME => engine = true,
            E_COMMENT | E_ENGINE_NEW => {
                engine |= events[i] == E_ENGINE_NEW;
                let c = take_until(comments, b'}', "comment")?;
                if keep {
                    kept.push(c);
                }
            }
            _ => {}
        }
        i += 1;
    }
    Ok((kept, segments, engine))
}

/// The decoded games of a block on their way to the sink, in order. Games
/// whose moves are to decode are decoded at once on one thread, or, where
/// the block is decoded in parallel, gathered and decoded on the current
/// rayon pool's threads when the block's columns are read ([`Queue::flush`]):
/// each game's moves are a stream of their own, so the games of one block
/// decode on several cores. The games of a group whose engine comments'
/// numbers a later game's are coded from decode in turn, on one thread
/// ([`fields::FIELD_GROUP`]).
struct Queue<'s, 'a> {
    codec: &'s dyn GameCodec,
    keep: Option<&'s Keep<'s>>,
    sink: &'s mut dyn FnMut(usize, Decoded),
    parallel: bool,
    /// Games gathered for a parallel decode, in order.
    gathered: Vec<(usize, Gathered<'a>)>,
    /// The numbers of the engine comments of the current group's games
    /// decoded so far, one at a time.
    table: (usize, fields::FieldTable),
    /// The first game of each group with engine comments that was not
    /// decoded whole: a later game coded from its group's table cannot be.
    incomplete: HashMap<usize, usize>,
}

// `Ready` is mostly tags, gathered a block at a time: a box each would be
// an allocation per game for no gain.
#[allow(clippy::large_enum_variant)]
enum Gathered<'a> {
    Ready(Decoded),
    Pending(Box<PendingGame<'a>>),
}

impl<'s, 'a> Queue<'s, 'a> {
    fn new(
        codec: &'s dyn GameCodec,
        keep: Option<&'s Keep<'s>>,
        sink: &'s mut dyn FnMut(usize, Decoded),
        games: usize,
    ) -> Self {
        Queue {
            codec,
            keep,
            sink,
            // A block of one game has nothing to share out.
            parallel: games > 1 && crate::threads::parallel_threads() > 1,
            gathered: Vec::new(),
            table: (usize::MAX, fields::FieldTable::default()),
            incomplete: HashMap::new(),
        }
    }

    /// Game `g` of `group`, which has engine comments, is not decoded
    /// whole.
    fn incomplete(&mut self, group: usize, g: usize) {
        self.incomplete.entry(group).or_insert(g);
    }

    fn ready(&mut self, g: usize, d: Decoded) {
        if self.parallel {
            self.gathered.push((g, Gathered::Ready(d)));
        } else {
            (self.sink)(g, d);
        }
    }

    fn pending(&mut self, g: usize, game: PendingGame<'a>) -> Result<(), String> {
        if self.parallel {
            self.gathered.push((g, Gathered::Pending(Box::new(game))));
            return Ok(());
        }
        if game.engine && self.table.0 != game.group {
            self.table = (game.group, fields::FieldTable::default());
        }
        let own = game.own;
        let d = finish_in_group(
            self.codec,
            self.keep,
            (g, game),
            &mut self.table.1,
            &self.incomplete,
        )?;
        if own {
            (self.sink)(g, d);
        }
        Ok(())
    }

    /// Decodes the gathered games and gives them to the sink in order, up
    /// to the first that does not decode, whose error it returns.
    fn flush(&mut self) -> Result<(), String> {
        let gathered = std::mem::take(&mut self.gathered);
        for (g, own, d) in finish_all(self.codec, self.keep, gathered, &self.incomplete) {
            let d = d?;
            if own {
                (self.sink)(g, d);
            }
        }
        Ok(())
    }
}

/// Whether `want` decodes a game's engine comments.
fn whole(want: Want) -> bool {
    matches!(want, Want::Text | Want::Record)
}

/// Whether game `g`'s engine comments are coded from numbers of its
/// group's games that were not decoded whole (`incomplete`).
fn missing_earlier(g: usize, game: &PendingGame<'_>, incomplete: &HashMap<usize, usize>) -> bool {
    game.engine
        && game.from_table
        && whole(game.want)
        && incomplete.get(&game.group).is_some_and(|&i| i < g)
}

/// The error of a game for which [`missing_earlier`].
const MISSING_EARLIER: &str = "a game's engine comments need earlier games that were not decoded";

/// [`finish`] of game `g`, the next of its group after those whose engine
/// comments' numbers are in `table`; an error where [`missing_earlier`].
fn finish_in_group(
    codec: &dyn GameCodec,
    keep: Option<&Keep<'_>>,
    (g, game): (usize, PendingGame<'_>),
    table: &mut fields::FieldTable,
    incomplete: &HashMap<usize, usize>,
) -> Result<Decoded, String> {
    if missing_earlier(g, &game, incomplete) {
        return Err(MISSING_EARLIER.into());
    }
    finish(codec, keep, game, table)
}

/// The gathered games (with their place) in tasks: one for each group's
/// games with engine comments up to its last coded from the group's
/// table, whose texts are replayed in turn; one for every other game.
#[allow(clippy::type_complexity)]
fn tasks_of(gathered: Vec<(usize, Gathered<'_>)>) -> Vec<Vec<(usize, (usize, Gathered<'_>))>> {
    let in_chain = |item: &Gathered<'_>| match item {
        Gathered::Pending(p) if p.engine && whole(p.want) => Some((p.group, p.from_table)),
        _ => None,
    };
    let mut chain_end: HashMap<usize, usize> = HashMap::new();
    for (i, (_, item)) in gathered.iter().enumerate() {
        if let Some((group, true)) = in_chain(item) {
            chain_end.insert(group, i);
        }
    }
    let mut tasks: Vec<Vec<(usize, (usize, Gathered<'_>))>> = Vec::new();
    let mut chain_task: HashMap<usize, usize> = HashMap::new();
    for (i, item) in gathered.into_iter().enumerate() {
        match in_chain(&item.1) {
            Some((group, _)) if chain_end.get(&group).is_some_and(|&e| i <= e) => {
                let t = *chain_task.entry(group).or_insert_with(|| {
                    tasks.push(Vec::new());
                    tasks.len() - 1
                });
                tasks[t].push((i, item));
            }
            _ => tasks.push(vec![(i, item)]),
        }
    }
    tasks
}

/// Finishes the gathered games on the current rayon pool: (game, whether
/// it is given, what it decodes to), in order. Every game's mainline is
/// decoded first, a game a task (the most of a game's time); then each
/// task of [`tasks_of`] replays its games' texts in turn.
fn finish_all(
    codec: &dyn GameCodec,
    keep: Option<&Keep<'_>>,
    gathered: Vec<(usize, Gathered<'_>)>,
    incomplete: &HashMap<usize, usize>,
) -> Vec<(usize, bool, Result<Decoded, String>)> {
    let tasks = tasks_of(gathered);
    let stage = |(i, (g, item))| {
        let (own, stage) = match item {
            Gathered::Ready(d) => (true, Ok(Stage::Done(d))),
            Gathered::Pending(game) if missing_earlier(g, &game, incomplete) => {
                (game.own, Err(MISSING_EARLIER.to_string()))
            }
            Gathered::Pending(game) => (game.own, prepare(codec, keep, *game)),
        };
        (i, g, own, stage)
    };
    let replay_task = |task: Vec<(usize, usize, bool, Result<Stage<'_>, String>)>| {
        let mut table = fields::FieldTable::default();
        let mut out = Vec::with_capacity(task.len());
        for (i, g, own, stage) in task {
            let d = stage.and_then(|s| match s {
                Stage::Done(d) => Ok(d),
                Stage::Replay(p) => replay(*p, &mut table),
            });
            let failed = d.is_err();
            out.push((i, (g, own, d)));
            // The games after it in the task would decode from a wrong
            // table: the block stops at its error anyway.
            if failed {
                break;
            }
        }
        out
    };
    #[cfg(feature = "parallel")]
    let mut done: Vec<_> = {
        use rayon::prelude::*;
        // One game, then one task, at a time: a game takes milliseconds.
        let staged: Vec<Vec<_>> = tasks
            .into_par_iter()
            .with_max_len(1)
            .map(|t| t.into_par_iter().with_max_len(1).map(stage).collect())
            .collect();
        staged
            .into_par_iter()
            .with_max_len(1)
            .flat_map_iter(replay_task)
            .collect()
    };
    #[cfg(not(feature = "parallel"))]
    let mut done: Vec<_> = tasks
        .into_iter()
        .flat_map(|t| replay_task(t.into_iter().map(stage).collect()))
        .collect();
    done.sort_unstable_by_key(|&(i, _)| i);
    // Games after a failed one in its task are missing: the error comes
    // first, in order.
    done.into_iter().map(|(_, d)| d).collect()
}

/// The clock and evaluation coders of a block and its evaluations kept as
/// text.
struct AnnotationCoders<'a> {
    clocks: ClockCoder,
    evals: EvalCoder,
    eval_text: &'a [u8],
}

/// A clock reading: its seconds, and its tenth where chess.com's spelling
/// writes one.
type Reading = (u32, Option<u8>);

/// A game's clock readings and evaluations (by default none: not decoded).
#[derive(Default)]
struct Annotations {
    /// The clock after each mainline ply, where a reading follows it.
    mainline_clocks: Vec<Option<u32>>,
    /// Every reading, in stream order.
    clocks: std::vec::IntoIter<Reading>,
    /// Every evaluation's text, in stream order.
    evals: EvalTexts,
}

/// Evaluation texts, one after the other.
#[derive(Default)]
struct EvalTexts {
    bytes: Vec<u8>,
    ends: std::vec::IntoIter<usize>,
    start: usize,
}

impl EvalTexts {
    fn next(&mut self) -> Option<&[u8]> {
        let end = self.ends.next()?;
        let text = &self.bytes[self.start..end];
        self.start = end;
        Some(text)
    }
}

/// Decodes a game's clock readings and evaluations, walking its events:
/// the mainline's readings (`plies` of them, by the ply they follow) and,
/// where `texts_too` (a game's text or record is wanted), every reading
/// and evaluation in stream order; a game skipped or wanted for its
/// mainline alone only moves the streams on, no evaluation written out,
/// and the evaluations' stream is not read at all where not `evals_too`
/// (no later game of the pass wants them).
fn read_annotations(
    events: &[u8],
    model: &mut ClockModel,
    coders: &mut AnnotationCoders<'_>,
    (clocks, evals): (&mut BinaryDecoder<'_>, &mut BinaryDecoder<'_>),
    plies: usize,
    (texts_too, evals_too): (bool, bool),
) -> Result<Annotations, String> {
    let mut values = Vec::new();
    let mut mainline = vec![None; plies];
    let mut eval_state = EvalState::default();
    let mut texts = Vec::new();
    let mut ends = Vec::new();
    let (mut depth, mut ply) = (0usize, 0usize);
    let mut i = 0;
    while i < events.len() {
        match events[i] {
            E_NAG => i += 1,
            E_MOVE => {
                model.on_move();
                ply += usize::from(depth == 0);
            }
            E_NULL => model.on_move(),
            E_OPEN => {
                model.on_open();
                depth += 1;
            }
            E_CLOSE => {
                model.on_close();
                depth = depth.saturating_sub(1);
            }
            code @ (E_CLK_COMPACT | E_CLK_TENTHS) => {
                let c = model.decode(&mut coders.clocks, clocks)?;
                let tenth = if code == E_CLK_TENTHS {
                    Some(coders.clocks.decode_tenth(clocks)?)
                } else {
                    None
                };
                if depth == 0
                    && let Some(slot) = ply.checked_sub(1).and_then(|p| mainline.get_mut(p))
                {
                    *slot = Some(c);
                }
                if texts_too {
                    values.push((c, tenth));
                }
            }
            code @ (E_CLK | E_EVAL | E_EVAL_CLK) => {
                if code != E_CLK && evals_too {
                    let white = model.side() == 0;
                    match coders.evals.decode(evals, &mut eval_state, white)? {
                        Some(e) if texts_too => format_eval(e, &mut texts),
                        Some(_) => {}
                        None => {
                            let text = take_until(&mut coders.eval_text, b']', "evaluation text")?;
                            if texts_too {
                                texts.extend_from_slice(text);
                            }
                        }
                    }
                    if texts_too {
                        ends.push(texts.len());
                    }
                }
                if code != E_EVAL {
                    let c = model.decode(&mut coders.clocks, clocks)?;
                    if depth == 0
                        && let Some(slot) = ply.checked_sub(1).and_then(|p| mainline.get_mut(p))
                    {
                        *slot = Some(c);
                    }
                    if texts_too {
                        values.push((c, None));
                    }
                }
            }
            _ => {}
        }
        i += 1;
    }
    Ok(Annotations {
        mainline_clocks: mainline,
        clocks: values.into_iter(),
        evals: EvalTexts {
            bytes: texts,
            ends: ends.into_iter(),
            start: 0,
        },
    })
}

/// Fills in the `ECO` (0) and `Opening` (1) tags at the `predicted`
/// places of `tags` with what the moves give.
fn fill_openings(
    tags: &mut [(Vec<u8>, Vec<u8>)],
    predicted: &[(usize, usize)],
    opening: Option<crate::opening::Opening<'_>>,
) -> Result<(), String> {
    if predicted.is_empty() {
        return Ok(());
    }
    let o = opening.ok_or("an opening tag is marked as given by moves that give none")?;
    for &(t, k) in predicted {
        tags[t].1 = if k == 0 { o.eco } else { o.name }.as_bytes().to_vec();
    }
    Ok(())
}

/// The number of moves of each line of a game (the mainline, then each
/// variation in the order its `(` appears), from its events.
fn segment_plies(events: &[u8]) -> Result<Vec<usize>, String> {
    let mut plies = vec![0usize];
    let mut open = vec![0usize];
    let mut i = 0;
    while i < events.len() {
        match events[i] {
            E_NAG => i += 1,
            E_MOVE => plies[*open.last().ok_or("unmatched variation end")?] += 1,
            E_NULL => {
                plies.push(0);
                *open.last_mut().ok_or("unmatched variation end")? = plies.len() - 1;
            }
            E_OPEN => {
                plies.push(0);
                open.push(plies.len() - 1);
            }
            E_CLOSE => {
                if open.len() < 2 {
                    return Err("unmatched variation end".into());
                }
                open.pop();
            }
            _ => {}
        }
        i += 1;
    }
    Ok(plies)
}

/// Bits `start..start + len` of `bits`.
fn slice_bits(bits: &Bits, start: usize, len: usize) -> Bits {
    let mut w = BitWriter::new();
    let bytes = bits.as_bytes();
    let mut i = start;
    let end = start + len;
    // Whole bytes where aligned, bit by bit elsewhere.
    while i < end && !i.is_multiple_of(8) {
        w.write_bit(bytes[i / 8] >> (7 - i % 8) & 1 == 1);
        i += 1;
    }
    while i + 8 <= end {
        w.write(u64::from(bytes[i / 8]), 8);
        i += 8;
    }
    while i < end {
        w.write_bit(bytes[i / 8] >> (7 - i % 8) & 1 == 1);
        i += 1;
    }
    w.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// xz streams of liblzma (the `liblzma` crate, the reference) read
    /// back with liblzma and with lzma-rs, in every check; a stream longer
    /// than its column is an error.
    #[cfg(feature = "compression")]
    #[test]
    fn xz_columns_of_liblzma_read_back() {
        let data: Vec<u8> = (0..20_000u32).map(|i| (i * 7 % 251) as u8).collect();
        for check in [liblzma::stream::Check::None, liblzma::stream::Check::Crc64] {
            let stream = liblzma::stream::Stream::new_easy_encoder(6, check).unwrap();
            let mut enc = liblzma::write::XzEncoder::new_stream(Vec::new(), stream);
            std::io::Write::write_all(&mut enc, &data).unwrap();
            let xz = enc.finish().unwrap();
            assert!(xz.starts_with(XZ_MAGIC));
            for read in [decompress_xz, decompress_xz_rust] {
                assert_eq!(read(&xz, data.len()).unwrap(), data);
                assert!(read(&xz, data.len() - 1).is_err());
                assert!(read(&xz[..xz.len() / 2], data.len()).is_err());
            }
        }
    }

    /// A PPMd text column reads back; damage (a stream cut short, any
    /// byte changed, an order or memory no writer picks) is an error or
    /// other bytes of the column's length, never a panic; and PPMd is
    /// what a column of prose is stored with.
    #[test]
    fn ppmd_columns_read_back_and_damage_is_an_error() {
        let words = [
            "the", "knight", "defends", "pawn", "on", "f7", "and", "attacks", "e5.",
        ];
        let mut seed = 17u64;
        let data: Vec<u8> = (0..3000)
            .flat_map(|_| {
                seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
                [words[(seed >> 33) as usize % 9].as_bytes(), b" "].concat()
            })
            .collect();
        let packed = super::super::write::compress_ppmd(&data).unwrap();
        assert_eq!(&packed[..2], &[PPMD_MARK, super::super::PPMD_ORDER]);
        assert_eq!(decompress_ppmd(&packed, data.len()).unwrap(), data);
        for cut in [0, 1, 2, 3, 5] {
            assert!(decompress_ppmd(&packed[..cut], data.len()).is_err());
        }
        for (at, value) in [(1, 1), (1, 17), (2, 19), (2, 25)] {
            let mut bad = packed.clone();
            bad[at] = value;
            assert!(decompress_ppmd(&bad, data.len()).is_err(), "{at} {value}");
        }
        for at in (3..packed.len()).step_by(7) {
            let mut bad = packed.clone();
            bad[at] ^= 0x5a;
            if let Ok(back) = decompress_ppmd(&bad, data.len()) {
                assert_eq!(back.len(), data.len());
            }
        }
        let column = super::super::write::compress_column(&data, 19, false, true).unwrap();
        assert_eq!(column.first(), Some(&PPMD_MARK));
    }
}
