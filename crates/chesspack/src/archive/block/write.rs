//! The block writer: games parsed into events and spread over the columns.

use shakmaty::{Chess, Move};

use super::{
    BlockReport, CLOCKS, COMMENTS, E_ANNOTATED, E_CLK, E_CLK_COMPACT, E_CLK_TENTHS, E_CLOSE,
    E_COMMENT, E_END, E_ENGINE_NEW, E_ENGINE_SAME, E_EVAL, E_EVAL_CLK, E_LINE, E_MOVE, E_NAG,
    E_NULL, E_OPEN, E_RESULT_AS_TAG, E_RESULT_LINE, ENGINE, EVAL_TEXT, EVALS, EVENTS, EncodedBlock,
    KIND, KIND_CR, KIND_CRLF, KIND_LAYOUT, KIND_PIECE, KIND_TEXT, LAYOUT, METHOD_ALIGNED,
    METHOD_ANNOTATION_CONTEXTS, METHOD_BAND_LABEL_MARKS, METHOD_CODED_LENGTHS, METHOD_CONTINUES,
    METHOD_ENGINE, METHOD_LABEL_MARKS, METHOD_LAYOUT, METHOD_LICHESS_OPENINGS, METHOD_RECUT,
    MOVE_LENGTHS, MOVES, N_COLUMNS, PATTERN_COMPACT, PPMD_MARK, PPMD_MEMORY_LOGS, PPMD_ORDER,
    TAG_NAMES, TAG_NUMBERS, TAG_SEQ, TAG_VALUE_MARKS, TAG_VALUES, VERBATIM, annotated_pattern,
    annotations::{
        ClockCoder, ClockModel, EvalCoder, EvalState, parse_annotation, parse_compact_clock,
        parse_eval, tag,
    },
    ends_game,
    fields::{self, FieldCoder, Walk},
    is_crlf,
    layout::{self, Style},
    lengths::LengthCoder,
    lf_text, outcome_code, put_varint, recut_lengths, trailing_whitespace,
};
use crate::{
    archive::{
        Openings,
        tags::{Marks, TagState},
    },
    bits::BitWriter,
    coder::BinaryEncoder,
    game::GameCodec,
    model::GameContext,
    opening::{Opening, OpeningTable},
    pgn::{
        Chunk,
        strict::{self as text, Event, ParsedGame, Unparsed},
    },
};

struct Columns {
    data: [Vec<u8>; N_COLUMNS],
    moves: BitWriter,
    /// The same streams, each game's padded to a whole byte
    /// ([`METHOD_ALIGNED`]).
    aligned_moves: BitWriter,
    length_coder: LengthCoder,
    lengths: BinaryEncoder,
    clock_coder: ClockCoder,
    clocks: BinaryEncoder,
    eval_coder: EvalCoder,
    evals: BinaryEncoder,
    tag_names: Vec<Vec<u8>>,
    /// Values of each tag name, in game order, each ended by a nul, as
    /// `tag_state` marks them.
    tag_values: Vec<Vec<u8>>,
    tag_state: TagState,
    /// The numbers of the marks.
    tag_numbers: BinaryEncoder,
    /// Which games' openings are kept (where `tag_state` codes labels).
    openings: Openings,
    /// A block stored as its games' text (the floor): xz is tried on its
    /// text however well zstd does.
    text: bool,
    /// Whether its `verbatim` column is the text alone ([`METHOD_RECUT`]).
    recut: bool,
    /// The games added so far (pieces aside), and the engine comments'
    /// numbers of the current group's games ([`fields::FIELD_GROUP`]).
    games: usize,
    table: fields::FieldTable,
    table_group: usize,
    /// The players (either colour) of the group's last game whose engine
    /// comments' numbers were coded.
    taught: Option<u64>,
}

impl Columns {
    /// Columns of a block whose tags mark `marks`, keeping the openings
    /// that `openings` says.
    fn new(marks: Marks, openings: Openings) -> Columns {
        Columns {
            data: Default::default(),
            moves: BitWriter::new(),
            aligned_moves: BitWriter::new(),
            length_coder: LengthCoder::new(),
            lengths: BinaryEncoder::new(),
            clock_coder: ClockCoder::new(),
            clocks: BinaryEncoder::new(),
            eval_coder: EvalCoder::new(),
            evals: BinaryEncoder::new(),
            tag_names: Vec::new(),
            tag_values: Vec::new(),
            tag_state: TagState::new(marks).with_openings(OpeningTable::lichess()),
            tag_numbers: BinaryEncoder::new(),
            openings,
            text: false,
            recut: false,
            games: 0,
            table: fields::FieldTable::default(),
            table_group: 0,
            taught: None,
        }
    }

    fn tag_id(&mut self, name: &[u8]) -> usize {
        if let Some(i) = self.tag_names.iter().position(|n| n == name) {
            return i;
        }
        self.tag_names.push(name.to_vec());
        self.tag_values.push(Vec::new());
        self.tag_state.add_name(name);
        self.tag_names.len() - 1
    }

    fn add_verbatim(&mut self, bytes: &[u8], kind: u8) {
        self.games += usize::from(kind != KIND_PIECE);
        self.data[KIND].push(kind);
        put_varint(&mut self.data[VERBATIM], bytes.len() as u64);
        self.data[VERBATIM].extend_from_slice(bytes);
    }

    /// Adds a game; on an error (from the codec) nothing was added.
    fn add_game(
        &mut self,
        game: &ParsedGame,
        codec_of_block: &dyn GameCodec,
    ) -> Result<(), Unparsed> {
        // Moves first, as they alone can fail.
        let segments = segments_of(game)?;
        // A game of moves alone: its stream says how many.
        let line =
            !game.events.is_empty() && game.events.iter().all(|e| matches!(e, Event::Move(_)));
        let (start, mainline) = (&segments[0].0, segments[0].1.as_slice());
        let opening = self.opening_of(game, start, mainline);
        let table = self.tag_state.openings();
        let encoded = encode_segments(
            codec_of_block,
            game,
            &segments,
            (table, opening.label),
            line,
        )?;

        // Engine comments: their templates and the game's stream of their
        // fields, coded before anything is added.
        if self.games / fields::FIELD_GROUP != self.table_group {
            self.table.clear();
            self.table_group = self.games / fields::FIELD_GROUP;
            self.taught = None;
        }
        let engine = engine_comments(game, mainline, &mut self.table, &mut self.taught);
        let events = self.events_of(game, line, engine.as_ref().map(|(t, _, _)| t.iter()));
        self.add_tags(game, &opening);
        // A mainline each of whose moves one clock or evaluation comment
        // follows, the same kind after all but the last: its
        // ply count before its lengths, its events as one.
        let annotated = annotated_line(&events);
        if let Some((plies, _)) = annotated {
            self.length_coder
                .encode_plies(&mut self.lengths, plies as u64);
        }
        for (i, bits) in encoded.iter().enumerate() {
            self.length_coder
                .encode(&mut self.lengths, i > 0, bits.len() as u64);
            self.moves.write_bits(bits);
            self.aligned_moves.write_bits(bits);
        }
        self.aligned_moves.align();
        match annotated {
            Some((plies, pattern)) => {
                self.data[EVENTS].extend_from_slice(&[E_ANNOTATED, pattern]);
                self.data[EVENTS].extend_from_slice(&events[2 * plies..]);
            }
            None => self.data[EVENTS].extend_from_slice(&events),
        }
        if let Some((_, streams, flags)) = engine {
            // The first stream's length says whether the game is coded
            // from its group's table, or from it alone (no streams).
            put_varint(
                &mut self.data[ENGINE],
                (streams[0].len() as u64) << 2 | u64::from(flags),
            );
            if flags & fields::ALONE == 0 {
                self.data[ENGINE].extend_from_slice(&streams[0]);
                put_varint(&mut self.data[ENGINE], streams[1].len() as u64);
                self.data[ENGINE].extend_from_slice(&streams[1]);
            }
        }
        self.games += 1;
        self.data[KIND].push(game.layout * KIND_LAYOUT);
        Ok(())
    }

    /// How the block codes the opening of `game`, whose mainline is
    /// `mainline` from `start`.
    fn opening_of(&self, game: &ParsedGame, start: &Chess, mainline: &[Move]) -> GameOpening {
        // ECO and Opening tags that the mainline's moves give, and the
        // opening's label, which the decoder reads before the moves and
        // codes them knowing.
        let table = self.tag_state.openings();
        let predicted = game
            .tags
            .iter()
            .any(|(k, _)| k == b"ECO" || k == b"Opening")
            .then(|| table.predict_label(start, mainline))
            .flatten();
        // A game that the table names no opening of has a label that says
        // so where the table has one: lichess writes `?`.
        let (label, ply) = match predicted {
            Some((l, ply)) => (Some(l), ply),
            None => (table.none_label(), 0),
        };
        let labelled = label.and_then(|l| table.label_or_none(l));
        // A label where the game's `Opening` tag is the one it gives (a
        // lichess export), and with `Openings::Every` where its `ECO` tag
        // is; otherwise the tags keep the mark of what the moves give.
        let label = label.filter(|_| {
            self.tag_state.codes_labels()
                && game.tags.iter().any(|(k, v)| {
                    (k == b"Opening" || self.openings == Openings::Every)
                        && names_tag(labelled, k, v)
                })
        });
        GameOpening {
            label,
            ply,
            // The tags stored as the label's, or else as what the moves
            // give.
            opening: if label.is_some() {
                labelled
            } else {
                predicted.and_then(|(l, _)| table.label(l))
            },
        }
    }

    /// The game's events as the `events` column codes them; its comments,
    /// clocks and evaluations are added to their columns (`line`: a game of
    /// moves alone; `templates`: its engine comments').
    fn events_of(
        &mut self,
        game: &ParsedGame,
        line: bool,
        mut templates: Option<std::slice::Iter<'_, Template>>,
    ) -> Vec<u8> {
        let mut events = Vec::with_capacity(game.events.len() + 2);
        let mut clocks = ClockModel::new(tag(&game.tags, b"TimeControl").unwrap_or(b""));
        let mut eval_state = EvalState::default();
        if line {
            events.push(E_LINE);
        }
        for event in game.events.iter().filter(|_| !line) {
            match event {
                Event::Move(_) => {
                    clocks.on_move();
                    events.push(E_MOVE);
                }
                Event::Null => {
                    clocks.on_move();
                    events.push(E_NULL);
                }
                Event::Nag(n) => events.extend_from_slice(&[E_NAG, *n]),
                Event::Comment(c) => events.push(match parse_annotation(c) {
                    Some(a) => {
                        if let Some(e) = a.eval {
                            let value = parse_eval(e);
                            if value.is_none() {
                                self.data[EVAL_TEXT].extend_from_slice(e);
                                self.data[EVAL_TEXT].push(b']');
                            }
                            let white = clocks.side() == 0;
                            self.eval_coder
                                .encode(&mut self.evals, &mut eval_state, white, value);
                        }
                        if let Some(clock) = a.clock {
                            clocks.encode(&mut self.clock_coder, &mut self.clocks, clock);
                        }
                        match (a.eval, a.clock) {
                            (Some(_), Some(_)) => E_EVAL_CLK,
                            (None, Some(_)) => E_CLK,
                            _ => E_EVAL,
                        }
                    }
                    None => match parse_compact_clock(c) {
                        Some((seconds, tenth)) => {
                            clocks.encode(&mut self.clock_coder, &mut self.clocks, seconds);
                            match tenth {
                                Some(t) => {
                                    self.clock_coder.encode_tenth(&mut self.clocks, t);
                                    E_CLK_TENTHS
                                }
                                None => E_CLK_COMPACT,
                            }
                        }
                        None => self.comment(c, templates.as_mut().and_then(Iterator::next)),
                    },
                }),
                Event::Open => {
                    clocks.on_open();
                    events.push(E_OPEN);
                }
                Event::Close => {
                    clocks.on_close();
                    events.push(E_CLOSE);
                }
            }
        }
        let result_tag = tag(&game.tags, b"Result");
        if game.result_on_new_line && game.outcome.is_some() {
            events.push(E_RESULT_LINE);
        }
        events.push(match game.outcome {
            None => E_END,
            Some(o) if result_tag == Some(text::OUTCOMES[usize::from(o)].as_bytes()) => {
                E_RESULT_AS_TAG
            }
            Some(o) => outcome_code(o),
        });
        events
    }

    /// The event of a comment that is no clock or evaluation, whose engine
    /// template is `template`; its text or template goes to `comments`.
    fn comment(&mut self, c: &[u8], template: Option<&Template>) -> u8 {
        let (text, event) = match template {
            Some(Some((_, true))) => return E_ENGINE_SAME,
            Some(Some((template, false))) => (template.as_slice(), E_ENGINE_NEW),
            _ => (c, E_COMMENT),
        };
        self.data[COMMENTS].extend_from_slice(text);
        self.data[COMMENTS].push(b'}');
        event
    }

    /// Adds the game's tags, its ECO and Opening tags as the marks of
    /// `opening`.
    fn add_tags(&mut self, game: &ParsedGame, opening: &GameOpening) {
        self.tag_state.start_game();
        let mut unsent = opening.label;
        for (name, value) in &game.tags {
            let id = self.tag_id(name);
            put_varint(&mut self.data[TAG_SEQ], id as u64 + 1);
            let column = &mut self.tag_values[id];
            if self.tag_state.predicts(id).is_some() && names_tag(opening.opening, name, value) {
                if opening.label.is_some() {
                    self.tag_state.encode_labelled(column);
                } else {
                    self.tag_state.encode_predicted(column);
                }
                // The label with the game's first such mark.
                if let Some(l) = unsent.take() {
                    self.tag_state.encode_label(l, &mut self.tag_numbers);
                    self.tag_state
                        .encode_ply(l, opening.ply, &mut self.tag_numbers);
                }
            } else {
                self.tag_state
                    .encode(id, value, column, &mut self.tag_numbers);
            }
            column.push(0);
        }
        put_varint(&mut self.data[TAG_SEQ], 0);
    }
}

/// How a block codes a game's opening.
struct GameOpening {
    /// The label it codes, which the mainline's moves are coded knowing.
    label: Option<u32>,
    /// The ply of the label's position.
    ply: usize,
    /// The opening whose ECO and Opening tags are stored as marks.
    opening: Option<Opening<'static>>,
}

/// Whether tag `name` with `value` is the ECO or the name of `opening`.
fn names_tag(opening: Option<Opening<'_>>, name: &[u8], value: &[u8]) -> bool {
    opening.is_some_and(|o| {
        (name == b"ECO" && o.eco.as_bytes() == value)
            || (name == b"Opening" && o.name.as_bytes() == value)
    })
}

/// The lines of a game's moves, each from the position where it starts:
/// the mainline, then each variation in the order its `(` appears; a null
/// move ends its line's segment, and the line goes on in a new one.
fn segments_of(game: &ParsedGame) -> Result<Vec<(Chess, Vec<Move>)>, Unparsed> {
    let mut segments = vec![(game.start.clone(), Vec::with_capacity(game.events.len()))];
    let mut open: Vec<usize> = vec![0];
    let mut lines = Walk::new(&game.start);
    // Positions are followed only to start variations and go on after null
    // moves.
    let variations = game
        .events
        .iter()
        .any(|e| matches!(e, Event::Open | Event::Null));
    for event in &game.events {
        match event {
            Event::Move(m) => {
                segments[open[open.len() - 1]].1.push(*m);
                if variations {
                    lines.play(*m);
                }
            }
            Event::Null => {
                let after = lines.null().ok_or_else(|| Unparsed {
                    category: "illegal move",
                    detail: "null move in check".into(),
                })?;
                segments.push((after, Vec::new()));
                *open.last_mut().expect("a line is open") = segments.len() - 1;
            }
            Event::Open => {
                let start = lines.open();
                segments.push((start, Vec::new()));
                open.push(segments.len() - 1);
            }
            Event::Close => {
                lines.close();
                open.pop();
            }
            _ => {}
        }
    }
    Ok(segments)
}

/// The move streams of a game's `segments` (`line`: a game of moves
/// alone, whose stream says how many). The mainline is coded in the
/// context of the players' ratings, the time control and its clocks,
/// which the decoder reads before the moves, and knowing the opening's
/// `label` of `table`.
fn encode_segments(
    codec_of_block: &dyn GameCodec,
    game: &ParsedGame,
    segments: &[(Chess, Vec<Move>)],
    (table, label): (&'static OpeningTable, Option<u32>),
    line: bool,
) -> Result<Vec<crate::Bits>, Unparsed> {
    let context = GameContext::from_tags(game.tags.iter().map(|(k, v)| (k, v)));
    let variation_codec = codec_of_block.in_context(&context);
    let mut mainline_codec = codec_of_block
        .in_context(&context.with_clocks(mainline_clocks(&game.events, segments[0].1.len())));
    if let Some(l) = label {
        mainline_codec = mainline_codec
            .aimed_at(table, l)
            .expect("a block that codes labels has a codec that aims");
    }
    let mut encoded = Vec::with_capacity(segments.len());
    for (i, (start, moves)) in segments.iter().enumerate() {
        let codec = if i == 0 {
            &mainline_codec
        } else {
            &variation_codec
        };
        let bits = if line {
            codec.encode(start, moves)
        } else {
            codec.encode_counted(start, moves)
        };
        encoded.push(bits.map_err(|e| Unparsed {
            category: "codec",
            detail: e.to_string(),
        })?);
    }
    Ok(encoded)
}

/// A comment's template, and whether it is the same side's last one.
type Template = Option<(Vec<u8>, bool)>;

/// The engine comments of a game whose mainline's moves (up to its first
/// null move) are `mainline`: for each comment that is no clock or
/// evaluation, in order, its template where it is an engine comment
/// ([`fields`]), the streams of their fields (the times' second, empty
/// where there are none) and their flags ([`fields::FROM_TABLE`]: coded
/// from `table`, what the group's earlier games wrote, which gets the
/// game's; [`fields::ALONE`]); `None` where the game has none. `taught`:
/// the players of the group's last game whose numbers were coded.
fn engine_comments(
    game: &ParsedGame,
    mainline: &[Move],
    table: &mut fields::FieldTable,
    taught: &mut Option<u64>,
) -> Option<(Vec<Template>, [Vec<u8>; 2], u8)> {
    let plain = |e: &Event| matches!(e, Event::Comment(c) if !is_reading(c));
    if !game.events.iter().any(plain) {
        return None;
    }
    let coder = FieldCoder::new(&game.start, mainline);
    // Coded from the table where it has numbers at enough of the game's
    // positions, or where the same two players' last game was (a match:
    // its models go on from that game's): a game that waits for its
    // group's earlier games decodes with them, on one thread (TCEC's
    // games, paired by opening, seldom share more than the book).
    let hits = coder.table_hits(table);
    let players = players_of(game);
    let from_table = (hits >= fields::TABLE_HITS && hits * 4 >= mainline.len())
        || taught.is_some_and(|t| Some(t) == players);
    let mut coder = coder.with_table(std::mem::take(table), from_table);
    let coded = code_engine_comments(game, &mut coder);
    // A game that repeats the numbers of the group's latest game of the
    // same mainline (engines that replay a game, numbers and all) is
    // stored as that alone: its streams would cost bytes each time.
    let alone = coded.is_some() && coder.repeats_earlier();
    if alone {
        coder = coder.alone();
    }
    // Where its comments are stored as text, the table goes on without its
    // numbers, as the reader's does.
    *table = coder.take_table(coded.is_some());
    if coded.is_some() {
        *taught = players;
    }
    let flags = if alone {
        fields::FROM_TABLE | fields::ALONE
    } else if from_table {
        fields::FROM_TABLE
    } else {
        0
    };
    coded.map(|(templates, streams)| {
        let streams = if alone { Default::default() } else { streams };
        (templates, streams, flags)
    })
}

/// The players of `game` in either colour (a hash of its `White` and
/// `Black` tags, in order of their bytes); `None` without both.
fn players_of(game: &ParsedGame) -> Option<u64> {
    let white = tag(&game.tags, b"White")?;
    let black = tag(&game.tags, b"Black")?;
    let (a, b) = if white <= black {
        (white, black)
    } else {
        (black, white)
    };
    let h = crate::hash::fnv1a(a);
    Some(crate::hash::fnv1a_from(crate::hash::fnv1a_from(h, &[0]), b))
}

/// [`engine_comments`] with `coder`.
fn code_engine_comments(
    game: &ParsedGame,
    coder: &mut FieldCoder,
) -> Option<(Vec<Template>, [Vec<u8>; 2])> {
    let mut walk = Walk::new(&game.start);
    let mut enc = [BinaryEncoder::new(), BinaryEncoder::new()];
    let mut last: [Option<Vec<u8>>; 2] = [None, None];
    let mut templates = Vec::new();
    let mut any = false;
    for event in &game.events {
        match event {
            Event::Move(m) => walk.play(*m),
            Event::Null => {
                walk.null()?;
            }
            Event::Open => {
                walk.open();
            }
            Event::Close => walk.close(),
            Event::Comment(c) if !is_reading(c) => {
                let at = walk.at();
                let Some((template, mut fields)) = fields::split(c, &at, coder) else {
                    templates.push(None);
                    continue;
                };
                coder.code(&mut enc, &template, &at, &mut fields).ok()?;
                let same = last[at.side].as_ref() == Some(&template);
                last[at.side] = Some(template.clone());
                templates.push(Some((template, same)));
                any = true;
            }
            _ => {}
        }
    }
    let timed = coder.timed > 0;
    any.then(|| {
        let [main, times] = enc;
        let times = if timed {
            times.finish_short()
        } else {
            Vec::new()
        };
        (templates, [main.finish_short(), times])
    })
}

/// The marks a block coded by `codec` uses: the opening's label too,
/// coded with the prior of the game's rating band, where the
/// codec aims at it ([`GameCodec::aimed_at`]) and the library has the
/// priors.
pub(crate) fn block_marks(codec: &dyn GameCodec) -> Marks {
    let table: &'static OpeningTable = OpeningTable::lichess();
    if table.band_priors().is_some() && codec.aimed_at(table, 0).is_some() {
        Marks::BandLabels
    } else {
        Marks::Ids
    }
}

/// The ply count and the pattern byte of an annotated line
/// ([`E_ANNOTATED`]), from a game's `events` as the writer spells them: a
/// move and one clock or evaluation comment, of one kind after all moves
/// but the last, as many times as the plies (at least one), then the
/// result or end codes alone.
fn annotated_line(events: &[u8]) -> Option<(usize, u8)> {
    let is_kind = |k: u8| {
        matches!(
            k,
            E_CLK | E_EVAL_CLK | E_EVAL | E_CLK_COMPACT | E_CLK_TENTHS
        )
    };
    let plies = events
        .chunks_exact(2)
        .take_while(|pair| pair[0] == E_MOVE && is_kind(pair[1]))
        .count();
    let ends = |&b: &u8| b == E_RESULT_LINE || ends_game(b);
    if plies == 0 || !events[2 * plies..].iter().all(ends) {
        return None;
    }
    // The comment kind after ply `i`.
    let kind = |i: usize| events[2 * i + 1];
    let (every, last) = (kind(0), kind(plies - 1));
    if (1..plies - 1).any(|i| kind(i) != every) {
        return None;
    }
    let compact = |k: u8| k >= E_CLK_COMPACT;
    if compact(every) || compact(last) {
        // chess.com's clocks: one kind all through.
        return (every == last).then(|| (plies, PATTERN_COMPACT + every - E_CLK_COMPACT));
    }
    Some((plies, annotated_pattern(every, last)))
}

/// Whether comment `c` is a clock or evaluation reading, which the
/// `clocks` and `evals` columns store (lichess's, or chess.com's clock).
fn is_reading(c: &[u8]) -> bool {
    parse_annotation(c).is_some() || parse_compact_clock(c).is_some()
}

/// The clock after each of the `plies` mainline moves of a game's events,
/// where a clock comment (as the `clocks` column stores it) follows it.
pub(super) fn mainline_clocks(events: &[Event], plies: usize) -> Vec<Option<u32>> {
    let mut clocks = vec![None; plies];
    let (mut depth, mut ply) = (0usize, 0usize);
    for event in events {
        match event {
            Event::Move(_) if depth == 0 => ply += 1,
            Event::Open => depth += 1,
            Event::Close => depth = depth.saturating_sub(1),
            Event::Comment(c) if depth == 0 && ply > 0 => {
                if let (Some(clock), Some(slot)) = (
                    crate::pgn::comment::clock_of_comment(c),
                    clocks.get_mut(ply - 1),
                ) {
                    *slot = Some(clock);
                }
            }
            _ => {}
        }
    }
    clocks
}

/// The prior of engine comments' fields (`fields.bin`) from the games of
/// `input` but the held-out ones ([`crate::holdout`]): the models that
/// coding their engine comments in turn leaves, with the places of
/// numbers used at least `min_uses` times. Returns the file and the
/// numbers of games used and held out.
#[cfg(feature = "train")]
pub(crate) fn engine_comment_prior<R: std::io::BufRead>(
    input: R,
    min_uses: u32,
) -> std::io::Result<(Vec<u8>, u64, u64)> {
    let mut builder = fields::PriorBuilder::new();
    let (mut used, mut held) = (0, 0);
    for chunk in crate::pgn::ChunkReader::new(input) {
        let chunk = chunk?;
        let Ok(game) = text::parse(&chunk.bytes) else {
            continue;
        };
        let mainline: Vec<Move> = game
            .events
            .iter()
            .scan(0usize, |depth, e| {
                match e {
                    Event::Open => *depth += 1,
                    Event::Close => *depth = depth.saturating_sub(1),
                    Event::Null if *depth == 0 => return None,
                    _ => {}
                }
                Some((*depth, e))
            })
            .filter_map(|(d, e)| match e {
                Event::Move(m) if d == 0 => Some(*m),
                _ => None,
            })
            .collect();
        if crate::holdout::is_held_out(&crate::holdout::line_key(&game.start, &mainline)) {
            held += 1;
            continue;
        }
        let mut coder = builder.coder(&game.start, &mainline);
        if code_engine_comments(&game, &mut coder).is_some() {
            used += 1;
        }
        builder.keep(coder);
    }
    Ok((builder.finish(min_uses), used, held))
}

/// A column compressed with zstd at `level`, or with xz where that is
/// smaller, or, for a column of `text` (comments, games stored as text),
/// with PPMd where that is smaller still: `None` where none makes it
/// smaller. xz and PPMd are tried where zstd leaves more than 1/64 of the
/// column, or `always`.
pub(super) fn compress_column(
    data: &[u8],
    level: i32,
    always: bool,
    text: bool,
) -> Option<Vec<u8>> {
    let zstd = compress_zstd(data, level).ok();
    // A column that zstd takes below 1/64 of its size is left to it: xz
    // would save a few bytes at most, and its match finder is slowest on
    // such repetitive data (seconds for a few MiB).
    let repetitive = !always && zstd.as_ref().is_some_and(|z| z.len() * 64 < data.len());
    let xz = if repetitive { None } else { compress_xz(data) };
    let ppmd = if repetitive || !text {
        None
    } else {
        compress_ppmd(data)
    };
    [zstd, xz, ppmd]
        .into_iter()
        .flatten()
        .min_by_key(Vec::len)
        .filter(|c| c.len() < data.len())
}

/// A column of text compressed with PPMd var. H ([`PPMD_MARK`], its order
/// and memory, the stream): natural language (annotators' comments) in
/// 0.79 of xz -9e's bytes, at about 12 MB/s each way. Not tried below
/// 32 bytes or above [`PPMD_MAX`].
pub(super) fn compress_ppmd(data: &[u8]) -> Option<Vec<u8>> {
    if !(32..=PPMD_MAX).contains(&data.len()) {
        return None;
    }
    let memory_log = (data
        .len()
        .saturating_mul(16)
        .next_power_of_two()
        .trailing_zeros() as u8)
        .clamp(*PPMD_MEMORY_LOGS.start(), *PPMD_MEMORY_LOGS.end());
    let head = vec![PPMD_MARK, PPMD_ORDER, memory_log];
    let mut encoder =
        ppmd_rust::Ppmd7Encoder::new(head, u32::from(PPMD_ORDER), 1 << memory_log).ok()?;
    std::io::Write::write_all(&mut encoder, data).ok()?;
    encoder.finish(false).ok()
}

/// The largest text column that PPMd is tried on: a block's text (4 MiB
/// by default), not the 8 MiB pieces of a longer game.
const PPMD_MAX: usize = 4 << 20;

/// The smallest column that xz is tried on: below it, xz's stream header
/// and index (about 60 bytes) outweigh what it could save over zstd.
#[cfg(feature = "compression")]
const XZ_MIN: usize = 512;
/// The largest: a block's columns (4 MiB of text a block by default), not
/// the 8 MiB pieces of a longer game, on which xz's match finder spends
/// seconds and its tables memory for nothing that zstd does not find.
#[cfg(feature = "compression")]
const XZ_MAX: usize = 4 << 20;

/// A column compressed with xz (liblzma's preset 9 extreme, its dictionary
/// no larger than the column and at most 2 MiB: the encoder takes about
/// 11 times its dictionary, so 23 MB at most on each thread).
#[cfg(feature = "compression")]
pub(crate) fn compress_xz(data: &[u8]) -> Option<Vec<u8>> {
    if !(XZ_MIN..=XZ_MAX).contains(&data.len()) {
        return None;
    }
    /// liblzma's `LZMA_PRESET_EXTREME` (`xz -e`).
    const EXTREME: u32 = 0x8000_0000;
    let mut options = liblzma::stream::LzmaOptions::new_preset(9 | EXTREME).ok()?;
    options.dict_size(
        (data.len() as u32)
            .next_power_of_two()
            .clamp(1 << 12, 1 << 26),
    );
    let mut filters = liblzma::stream::Filters::new();
    filters.lzma2(&options);
    let stream =
        liblzma::stream::Stream::new_stream_encoder(&filters, liblzma::stream::Check::None).ok()?;
    let mut out = Vec::with_capacity(data.len() / 4 + 128);
    let mut encoder = liblzma::write::XzEncoder::new_stream(&mut out, stream);
    std::io::Write::write_all(&mut encoder, data).ok()?;
    encoder.finish().ok()?;
    Some(out)
}

/// Without the `compression` feature (liblzma), columns are not tried
/// with xz; they still read.
#[cfg(not(feature = "compression"))]
pub(crate) fn compress_xz(_: &[u8]) -> Option<Vec<u8>> {
    None
}

/// A column compressed with zstd at `level`. A column of more than 1 MiB
/// (the pieces of a game text longer than 8 MiB, long comments) is
/// compressed with a window and match tables of at most 1 MiB: zstd's
/// tables at levels 10 and up reach 60 MB for an 8 MiB column, on each
/// thread, which the bound on memory does not allow.
fn compress_zstd(data: &[u8], level: i32) -> std::io::Result<Vec<u8>> {
    const LARGE_LOG: u32 = 20;
    if data.len() <= 1 << LARGE_LOG {
        return zstd::bulk::compress(data, level);
    }
    let mut c = zstd::bulk::Compressor::new(level)?;
    for p in [
        zstd::stream::raw::CParameter::WindowLog(LARGE_LOG),
        zstd::stream::raw::CParameter::HashLog(LARGE_LOG),
        zstd::stream::raw::CParameter::ChainLog(LARGE_LOG),
    ] {
        c.set_parameter(p)?;
    }
    c.compress(data)
}

/// Encodes the games of `chunks` into one block; zstd at `level` for the
/// text columns; the openings of the games that `openings` says.
pub(crate) fn encode_block(
    codec: &dyn GameCodec,
    chunks: &[Chunk],
    level: i32,
    openings: Openings,
    records: bool,
) -> EncodedBlock {
    let mut cols = Columns::new(block_marks(codec), openings);
    let mut game_records = Vec::new();
    // Each chunk's kind where the block is stored as text.
    let mut kinds = Vec::with_capacity(chunks.len());
    // Pieces that go on with a game are no games of their own.
    let mut report = BlockReport {
        games: chunks.iter().filter(|c| !c.continues).count() as u64,
        ..BlockReport::default()
    };
    let mut text_crc = crc32fast::Hasher::new();
    let mut canonical = Vec::new();
    // The style of the last game with one, which the next tries first.
    let mut style = Style::default();
    for chunk in chunks {
        report.input_bytes += chunk.bytes.len() as u64;
        text_crc.update(&chunk.bytes);
        if chunk.continues {
            cols.add_verbatim(&chunk.bytes, KIND_PIECE);
            kinds.push(KIND_PIECE);
            continue;
        }
        let added = cols.add_text(chunk, codec, &mut style, &mut canonical);
        kinds.push(if added.is_ok() { KIND_TEXT } else { 1 });
        match added {
            Ok(game) if records => game_records.push(Some(crate::archive::GameRecord::of(
                game.tags,
                game.start,
                &game.events,
            ))),
            Ok(_) => {}
            Err(u) => {
                if records {
                    game_records.push(None);
                }
                report.verbatim.push((chunk.number, u.category, u.detail));
                cols.add_verbatim(&chunk.bytes, 1);
            }
        }
    }
    let continues = chunks.last().is_some_and(|c| c.more);
    let mut payload = cols.payload(chunks.len(), continues, level, &mut report);
    let text = chunks.iter().fold(Vec::new(), |mut t, c| {
        t.extend_from_slice(&c.bytes);
        t
    });
    let quick = zstd::bulk::compress(&text, 1).map_or(text.len(), |q| q.len());
    if let Some((text, text_report)) =
        as_text(chunks, text, quick, &kinds, continues, level, payload.len())
    {
        payload = text;
        report.raw = text_report.raw;
        report.stored = text_report.stored;
        report.text_blocks = 1;
    }
    let lead = chunks.first().map(|c| c.lead.clone()).unwrap_or_default();
    let tail = chunks.last().map_or(&[][..], |c| {
        let end = c.bytes.len() - trailing_whitespace(&c.bytes);
        &c.bytes[end..]
    });
    EncodedBlock {
        payload,
        report,
        text_crc: text_crc.finalize(),
        lead,
        tail: tail.to_vec(),
        records: game_records,
        quick: quick as u64,
    }
}

/// The `moves` column with each game's streams padded to a whole byte
/// (`aligned`), compressed, where that is smaller than the column
/// (`plain` bytes): games that repeat an earlier one's moves (engines
/// without a book). A quick zstd -1 says first whether to try.
fn aligned_moves(aligned: &[u8], plain: usize, level: i32) -> Option<Vec<u8>> {
    let quick = zstd::bulk::compress(aligned, 1).ok()?;
    if quick.len() * 10 > plain * 9 {
        return None;
    }
    compress_zstd(aligned, level)
        .ok()
        .filter(|c| c.len() < plain)
}

/// The floor: the block of `chunks` (their `text`, `quick` bytes in zstd
/// -1) as its games' text alone (`kinds`: [`KIND_TEXT`] for a game that
/// parses, 1 for one stored verbatim, [`KIND_PIECE`]), one column
/// compressed with zstd or xz, where that is smaller than `coded`, the size
/// of its payload in columns. Tried only where the columns come to more
/// than half of zstd -1 of the text: columns store games at a tenth of that
/// or less, and xz takes time.
fn as_text(
    chunks: &[Chunk],
    text: Vec<u8>,
    quick: usize,
    kinds: &[u8],
    continues: bool,
    level: i32,
    coded: usize,
) -> Option<(Vec<u8>, BlockReport)> {
    if coded * 2 <= quick {
        return None;
    }
    // No tags are stored: any marks will do.
    let mut cols = Columns::new(Marks::Ids, Openings::Every);
    cols.text = true;
    // The text alone where cutting it gives the games again: the lengths
    // of its games cost xz bytes that xz of the text does not spend.
    let lengths = chunks.iter().map(|c| c.bytes.len()).collect::<Vec<_>>();
    if chunks.iter().all(|c| !c.cut && !c.continues && !c.more)
        && recut_lengths(&text) == Some(lengths)
    {
        cols.recut = true;
        cols.data[KIND] = kinds.to_vec();
        cols.data[VERBATIM] = text;
    } else {
        for (chunk, &kind) in chunks.iter().zip(kinds) {
            cols.add_verbatim(&chunk.bytes, kind);
        }
    }
    let mut report = BlockReport::default();
    let payload = cols.payload(chunks.len(), continues, level, &mut report);
    (payload.len() < coded).then_some((payload, report))
}

impl Columns {
    /// Adds the game of `chunk` parsed, with the layout that gives its
    /// bytes back (`style`: the last game's, tried first; `canonical`: a
    /// buffer); a game whose parts do not fit the columns (a codec error, a
    /// NUL in a tag value) is not added, and its error is returned.
    fn add_text(
        &mut self,
        chunk: &Chunk,
        codec: &dyn GameCodec,
        style: &mut Style,
        canonical: &mut Vec<u8>,
    ) -> Result<ParsedGame, Unparsed> {
        if chunk.cut {
            return Err(Unparsed {
                category: "too long",
                detail: "game text longer than 8 MiB".into(),
            });
        }
        // Lines that end with CR alone are read with LF.
        let lf = lf_text(&chunk.bytes);
        let bytes = lf.as_deref().unwrap_or(&chunk.bytes);
        let mut game = text::parse(bytes)?;
        if game.tags.iter().any(|(_, v)| v.contains(&0)) {
            return Err(Unparsed {
                category: "syntax",
                detail: "nul byte in a tag value".into(),
            });
        }
        // The layout that gives the input's bytes back, checked before the
        // game is added.
        canonical.clear();
        text::write(&game, canonical);
        let crlf = is_crlf(bytes);
        let mut layout = layout::find(canonical, bytes, crlf, style).ok_or_else(|| Unparsed {
            category: "layout",
            detail: "the layout does not give the text back".into(),
        })?;
        // A result that a wrap put on a line of its own: the wrap says so,
        // and the events need not (one code less in a game of a wrapped
        // file, where a result starts a line by chance).
        if game.result_on_new_line && layout.wraps() {
            canonical.clear();
            game.result_on_new_line = false;
            text::write(&game, canonical);
            match layout::find(canonical, bytes, crlf, style) {
                Some(l) if l.wraps() && !l.patched() => layout = l,
                _ => game.result_on_new_line = true,
            }
        }
        self.add_game(&game, codec)?;
        let kind = self.data[KIND].last_mut().expect("a game was added");
        if crlf {
            *kind |= KIND_CRLF;
        }
        if lf.is_some() {
            *kind |= KIND_CR;
        }
        if layout.style != Style::default() {
            style.clone_from(&layout.style);
        }
        layout.encode(&mut self.data[LAYOUT]);
        Ok(game)
    }

    /// The block's payload: its game count (`games`, pieces included) and
    /// its columns, the text columns compressed at `level` (`continues`:
    /// its last game goes on in the next block). Their sizes go to
    /// `report`.
    fn payload(
        mut self,
        games: usize,
        continues: bool,
        level: i32,
        report: &mut BlockReport,
    ) -> Vec<u8> {
        // A block whose games are all canonical needs no layout column.
        let layouts = self.data[LAYOUT].iter().any(|&b| b != 0);
        let engine = !self.data[ENGINE].is_empty();
        let labels = self.tag_state.codes_labels();
        let mut names = Vec::new();
        for n in &self.tag_names {
            names.extend_from_slice(n);
            names.push(b'\n');
        }
        self.data[TAG_NAMES] = names;
        self.data[TAG_VALUES] = self.tag_values.concat();
        self.data[MOVES] = self.moves.finish().as_bytes().to_vec();
        let aligned_raw = self.aligned_moves.finish();
        let mut aligned = aligned_moves(aligned_raw.as_bytes(), self.data[MOVES].len(), level);
        let moves_aligned = aligned.is_some();
        if moves_aligned {
            self.data[MOVES] = aligned_raw.as_bytes().to_vec();
        }
        self.data[MOVE_LENGTHS] = self.lengths.finish();
        self.data[CLOCKS] = self.clocks.finish();
        self.data[EVALS] = self.evals.finish();
        if self.tag_state.coded_numbers() {
            self.data[TAG_NUMBERS] = self.tag_numbers.finish();
        }
        let mut payload = Vec::new();
        put_varint(&mut payload, games as u64);
        for (i, data) in self.data.iter().enumerate() {
            if (i == LAYOUT && !layouts) || (i == ENGINE && !engine) {
                continue;
            }
            report.raw[i] = data.len() as u64;
            let coded = matches!(
                i,
                MOVES | MOVE_LENGTHS | CLOCKS | EVALS | TAG_NUMBERS | ENGINE
            );
            let compressed = if data.is_empty() {
                None
            } else if i == MOVES {
                aligned.take()
            } else if i == ENGINE {
                // Each game's stream starts from the same prior: games that
                // repeat an earlier one's comments repeat its bytes.
                compress_zstd(data, level)
                    .ok()
                    .filter(|c| c.len() < data.len())
            } else if coded {
                None
            } else {
                compress_column(data, level, self.text, matches!(i, COMMENTS | VERBATIM))
            };
            let (method, stored) = match &compressed {
                Some(c) => (1u8, c.as_slice()),
                None => (0u8, data.as_slice()),
            };
            payload.push(
                method
                    | match i {
                        TAG_VALUES if labels => {
                            TAG_VALUE_MARKS | METHOD_LABEL_MARKS | METHOD_BAND_LABEL_MARKS
                        }
                        TAG_VALUES => TAG_VALUE_MARKS,
                        MOVE_LENGTHS => METHOD_CODED_LENGTHS,
                        MOVES if moves_aligned => METHOD_ALIGNED,
                        CLOCKS | EVALS => METHOD_ANNOTATION_CONTEXTS,
                        VERBATIM => {
                            (if continues { METHOD_CONTINUES } else { 0 })
                                | if self.recut { METHOD_RECUT } else { 0 }
                        }
                        KIND => {
                            METHOD_LICHESS_OPENINGS
                                | if layouts { METHOD_LAYOUT } else { 0 }
                                | if engine { METHOD_ENGINE } else { 0 }
                        }
                        _ => 0,
                    },
            );
            put_varint(&mut payload, data.len() as u64);
            put_varint(&mut payload, stored.len() as u64);
            payload.extend_from_slice(stored);
            report.stored[i] = stored.len() as u64;
        }
        payload
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The writer's xz columns decode with liblzma (the `liblzma` crate),
    /// the reference, and with zstd chosen where that is smaller.
    #[cfg(feature = "compression")]
    #[test]
    fn xz_columns_decode_with_liblzma() {
        let data: Vec<u8> = (0..50_000u32)
            .map(|i| b"knight |a|yes|rook   |"[(i as usize * 7 + i as usize / 97) % 22])
            .collect();
        let xz = compress_xz(&data).unwrap();
        let mut dec = liblzma::write::XzDecoder::new(Vec::new());
        std::io::Write::write_all(&mut dec, &xz).unwrap();
        assert_eq!(dec.finish().unwrap(), data);
        // Too short a column to try.
        assert!(compress_xz(&data[..100]).is_none());
        let best = compress_column(&data, 15, false, false).unwrap();
        assert!(best.len() <= xz.len());
    }

    #[test]
    fn annotated_lines_are_found_in_the_events() {
        let pattern = annotated_pattern;
        let m = E_MOVE;
        for (events, found) in [
            (
                &[m, E_CLK, E_RESULT_AS_TAG][..],
                Some((1, pattern(E_CLK, E_CLK))),
            ),
            (
                &[m, E_CLK, m, E_CLK, m, E_CLK, E_END],
                Some((3, pattern(E_CLK, E_CLK))),
            ),
            (
                &[
                    m,
                    E_EVAL_CLK,
                    m,
                    E_EVAL_CLK,
                    m,
                    E_CLK,
                    E_RESULT_LINE,
                    outcome_code(0),
                ],
                Some((3, pattern(E_EVAL_CLK, E_CLK))),
            ),
            (
                &[m, E_EVAL, m, E_CLK, E_END],
                Some((2, pattern(E_EVAL, E_CLK))),
            ),
            // A kind that changes before the last move.
            (&[m, E_EVAL_CLK, m, E_CLK, m, E_CLK, E_END], None),
            (&[m, E_CLK, m, E_EVAL_CLK, m, E_CLK, E_END], None),
            // Anything else: a glyph, a comment, a move without one, a
            // variation, moves alone, no moves.
            (&[m, E_CLK, E_NAG, 1, E_END], None),
            (&[m, E_CLK, m, E_COMMENT, E_END], None),
            (&[m, E_CLK, m, E_END], None),
            (&[m, E_CLK, E_OPEN, m, E_CLK, E_CLOSE, E_END], None),
            (&[E_LINE, E_END], None),
            (&[E_RESULT_AS_TAG], None),
        ] {
            assert_eq!(annotated_line(events), found, "{events:?}");
        }
    }
}
