//! A strict reader of one game's PGN text and the canonical writer.
//!
//! The reader accepts only what the canonical writer can give back: anything
//! it does not understand (a `;` or `%` comment, an unknown token, an illegal
//! move, an unsupported variant) is an error, and the archive then stores the
//! game's text verbatim. What canonical output changes is only layout: see
//! [`crate::archive`].

use shakmaty::{
    Bitboard, Chess, Color, Move, Position, Role, Square, attacks,
    san::{San, SanPlus},
};

use crate::{pgn::start_position, slide};

/// The most plies (of all its lines) of a game the reader parses: the
/// decoders' own limit, [`crate::game::MAX_PLIES`] (`game`'s tests check
/// that they agree; `pgn` is below `game`).
pub(crate) const MAX_PLIES: u64 = 20_000;

/// One item of a game's movetext, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Event {
    /// The next move of the current line.
    Move(Move),
    /// A null move (`--`, or `0000` in UCI movetext): the other side to
    /// move, nothing moved.
    Null,
    /// A numeric annotation glyph (`$n`, or `!`, `?` and their pairs).
    Nag(u8),
    /// A `{ }` comment: the bytes between the braces.
    Comment(Vec<u8>),
    /// `(`: a variation replacing the last move of the current line.
    Open,
    /// `)`.
    Close,
}

/// The result token that ends a movetext: PGN's four, then
/// the spellings of other tools, with an en dash or a `½`.
pub(crate) const OUTCOMES: [&str; 9] = [
    "1-0",
    "0-1",
    "1/2-1/2",
    "*",
    "1\u{2013}0",
    "0\u{2013}1",
    "\u{bd}-\u{bd}",
    "\u{bd}\u{2013}\u{bd}",
    "1/2\u{2013}1/2",
];

/// [`ParsedGame::layout`] bit: the moves are written in UCI (`e2e4`,
/// `e7e8q`, `0000`), not SAN.
pub(crate) const LAYOUT_UCI: u8 = 1;
/// [`ParsedGame::layout`] bit: a black move's number is written `5. ...`
/// (Crafty), not `5...`.
pub(crate) const LAYOUT_SPACED_DOTS: u8 = 2;
/// [`ParsedGame::layout`] bit: the movetext has no move numbers.
pub(crate) const LAYOUT_UNNUMBERED: u8 = 4;
/// [`ParsedGame::layout`] bit: a game of tags alone, with no movetext
/// (not even a result).
pub(crate) const LAYOUT_NO_MOVETEXT: u8 = 8;
/// The [`ParsedGame::layout`] bits there are.
pub(crate) const LAYOUTS: u8 = 15;

/// A game as the archive stores it.
#[derive(Clone, Debug)]
pub(crate) struct ParsedGame {
    /// Tag names and (unescaped) values in order.
    pub tags: Vec<(Vec<u8>, Vec<u8>)>,
    pub start: Chess,
    pub events: Vec<Event>,
    /// Index into [`OUTCOMES`].
    pub outcome: Option<u8>,
    /// Whether the result token starts a line of its own (after a move,
    /// comment or other token): canonical output then puts a line feed
    /// before it instead of a space.
    pub result_on_new_line: bool,
    /// How the movetext spells moves and their numbers:
    /// [`LAYOUT_UCI`], [`LAYOUT_SPACED_DOTS`] and [`LAYOUT_UNNUMBERED`]
    /// bits, 0 for the canonical SAN with numbers.
    pub layout: u8,
}

/// The position after a null move in `pos`: the other side to move, no
/// en passant square, the half-move clock and (after Black) the move
/// number counted on, as a move would. `None` where the side to move is in
/// check (its king could be taken).
pub(crate) fn after_null(pos: &Chess) -> Option<Chess> {
    let mode = pos.castles().mode();
    let mut setup = pos.to_setup(shakmaty::EnPassantMode::Legal);
    if setup.turn == Color::Black {
        setup.fullmoves = setup.fullmoves.saturating_add(1);
    }
    setup.halfmoves = setup.halfmoves.saturating_add(1);
    setup.swap_turn();
    shakmaty::FromSetup::from_setup(setup, mode).ok()
}

/// Whether `token` has the shape of a UCI move: from and to squares and
/// perhaps a promotion letter, or `0000`.
pub(crate) fn uci_shaped(token: &[u8]) -> bool {
    let square = |f: u8, r: u8| (b'a'..=b'h').contains(&f) && (b'1'..=b'8').contains(&r);
    match token {
        b"0000" => true,
        [f1, r1, f2, r2, rest @ ..] => {
            square(*f1, *r1) && square(*f2, *r2) && matches!(rest, [] | [b'q' | b'r' | b'b' | b'n'])
        }
        _ => false,
    }
}

/// The legal move in `pos` that `token` spells in long algebraic: a
/// piece's letter or none, the square it leaves, `-`, `x` or nothing, the
/// square it goes to (the king's for castling, or its rook's in Chess960),
/// a promotion's letter in either case with or without `=`, and a check or
/// mate sign or annotation glyphs (`+`, `#`, `!`, `?`); `None` where it is
/// not one or names no legal move, or more than one.
fn long_algebraic(token: &[u8], pos: &Chess) -> Option<Move> {
    let square = |f: u8, r: u8| {
        ((b'a'..=b'h').contains(&f) && (b'1'..=b'8').contains(&r)).then(|| {
            shakmaty::Square::from_coords(
                shakmaty::File::new(u32::from(f - b'a')),
                shakmaty::Rank::new(u32::from(r - b'1')),
            )
        })
    };
    let end = token
        .iter()
        .rposition(|b| !b"+#!?".contains(b))
        .map_or(0, |i| i + 1);
    let mut t = &token[..end];
    let role = match t.first() {
        Some(&c @ (b'K' | b'Q' | b'R' | b'B' | b'N' | b'P')) => {
            t = &t[1..];
            Some(Role::from_char(char::from(c.to_ascii_lowercase()))?)
        }
        _ => None,
    };
    let [f1, r1, rest @ ..] = t else { return None };
    let from = square(*f1, *r1)?;
    let rest = match rest {
        [b'-' | b'x' | b':', rest @ ..] => rest,
        _ => rest,
    };
    let [f2, r2, rest @ ..] = rest else {
        return None;
    };
    let to = square(*f2, *r2)?;
    let promotion = match rest {
        [] => None,
        [b'=', c] | [c] => Some(Role::from_char(char::from(c.to_ascii_lowercase()))?),
        _ => return None,
    };
    let mut found = None;
    for m in pos.legal_moves() {
        let target = match m {
            Move::Castle { king, rook } => {
                let standard = shakmaty::uci::UciMove::from_standard(m);
                let king_to = match standard {
                    shakmaty::uci::UciMove::Normal { to, .. } => to,
                    _ => continue,
                };
                if king != from || (to != king_to && to != rook) {
                    continue;
                }
                to
            }
            _ => m.to(),
        };
        if m.from() != Some(from)
            || target != to
            || m.promotion() != promotion
            || role.is_some_and(|r| r != m.role())
        {
            continue;
        }
        if found.is_some() {
            return None;
        }
        found = Some(m);
    }
    found
}

/// Why a game's text is stored verbatim: a category and a detail.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Unparsed {
    pub category: &'static str,
    pub detail: String,
}

fn fail<T>(category: &'static str, detail: impl Into<String>) -> Result<T, Unparsed> {
    Err(Unparsed {
        category,
        detail: detail.into(),
    })
}

/// The start position from the tags `Variant` and `FEN`.
pub(crate) fn start_of(tags: &[(Vec<u8>, Vec<u8>)]) -> Result<Chess, Unparsed> {
    let get = |name: &str| {
        tags.iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name.as_bytes()))
            .map(|(_, v)| String::from_utf8_lossy(v).into_owned())
    };
    start_position(get("Variant").as_deref(), get("FEN").as_deref()).map_err(|e| {
        let category = match e {
            crate::Error::UnsupportedVariant(_) => "unsupported variant",
            _ => "invalid fen",
        };
        Unparsed {
            category,
            detail: e.to_string(),
        }
    })
}

fn is_delimiter(b: u8) -> bool {
    b.is_ascii_whitespace() || matches!(b, b'{' | b'}' | b'(' | b')' | b';' | b'$' | b'!' | b'?')
}

/// The value of a tag line whose value holds quotes nobody escaped, from
/// `start` (after its opening quote) to the line's last `"]`, and where
/// that `]` is; `None` where the line does not end so. Backslash escapes
/// are read as in any value.
fn unescaped_value(text: &[u8], start: usize) -> Option<(Vec<u8>, usize)> {
    let line_end = text[start..]
        .iter()
        .position(|&b| matches!(b, b'\n' | b'\r'))
        .map_or(text.len(), |p| start + p);
    let line = text[start..line_end].trim_ascii_end();
    let close = line.strip_suffix(b"\"]")?;
    let mut value = Vec::with_capacity(close.len());
    let mut k = 0;
    while let Some(&b) = close.get(k) {
        match (b, close.get(k + 1)) {
            (0, _) => return None,
            (b'\\', next) => {
                let (c, len) = unescape(next);
                value.push(c);
                k += len;
            }
            _ => {
                value.push(b);
                k += 1;
            }
        }
    }
    Some((value, start + close.len() + 1))
}

/// The byte that a backslash before `next` stands for in a tag value, and
/// how many bytes the two take: `\\` and `\"` escape, a backslash before
/// anything else is itself (`[Black "Guyard\Lemarchand"]`), as python-chess
/// and Scoutfish read it (the layout gives the bytes back).
fn unescape(next: Option<&u8>) -> (u8, usize) {
    match next {
        Some(&c @ (b'\\' | b'"')) => (c, 2),
        _ => (b'\\', 1),
    }
}

/// Whether `rest`, the text after a game's result, holds comments alone
/// (`;` to the line's end, `{ }`) and whitespace.
fn is_trailer(mut rest: &[u8]) -> bool {
    loop {
        // White space, and NUL bytes (a file padded after its last result).
        let blank = rest
            .iter()
            .take_while(|&&b| b.is_ascii_whitespace() || b == 0)
            .count();
        rest = &rest[blank..];
        match rest.first() {
            None => return true,
            Some(b';') => {
                let end = rest.iter().position(|&b| b == b'\n').unwrap_or(rest.len());
                rest = &rest[end..];
            }
            Some(b'{') => match rest.iter().position(|&b| b == b'}') {
                Some(end) => rest = &rest[end + 1..],
                None => return false,
            },
            Some(_) => return false,
        }
    }
}

/// Reads one game.
pub(crate) fn parse(text: &[u8]) -> Result<ParsedGame, Unparsed> {
    let mut i = skip_ws(text, 0);
    let tags = parse_tags(text, &mut i)?;
    let start = start_of(&tags)?;
    let n = text.len();
    let mut reader = Movetext {
        // A move takes 4 bytes of movetext or more (`e4 ` and its number);
        // longer texts grow as they go.
        events: Vec::with_capacity((n.saturating_sub(i) / 4).min(4096)),
        line: Line {
            pos: start.clone(),
            before_last: None,
        },
        stack: Vec::new(),
        ply: 0,
        numbers: 0,
        spaced_dots: false,
        uci: 0,
        // The position before the last move is kept only where a
        // variation may start from it (a `(` anywhere in the movetext).
        variations: text[i.min(n)..].contains(&b'('),
    };
    let mut outcome = None;
    let mut result_on_new_line = false;
    loop {
        i = skip_ws(text, i);
        if i >= n {
            break;
        }
        let line_start = i == 0 || text[i - 1] == b'\n';
        if outcome.is_some() {
            // Comments after the result (`; { Game Nr. 7 }`, as Arena and
            // TCEC write them) end the game as python-chess reads it; the
            // layout keeps their bytes. Anything else is no game.
            if is_trailer(&text[i..]) {
                break;
            }
            return fail("syntax", "text after the result");
        }
        match text[i] {
            b'%' if line_start => return fail("escape", "% escape line"),
            b';' => {
                // A comment to the line's end, as the PGN standard has it
                // (python-chess drops it): the bytes after `;`, written
                // between braces; the layout gives back its `;` and line
                // end. One that holds a `}` could not be written so: the
                // game is stored as text.
                let end = text[i..]
                    .iter()
                    .position(|&b| matches!(b, b'\n' | b'\r'))
                    .map_or(n, |p| i + p);
                let comment = &text[i + 1..end];
                if comment.contains(&b'}') {
                    return fail("escape", "; comment with a }");
                }
                reader.events.push(Event::Comment(comment.to_vec()));
                i = end;
            }
            b'{' => {
                let Some(end) = text[i + 1..].iter().position(|&b| b == b'}') else {
                    return fail("syntax", "unterminated comment");
                };
                reader
                    .events
                    .push(Event::Comment(text[i + 1..i + 1 + end].to_vec()));
                i += end + 2;
            }
            b'}' => return fail("syntax", "unmatched }"),
            b'(' => {
                reader.open()?;
                i += 1;
            }
            b')' => {
                reader.close()?;
                i += 1;
            }
            b'$' | b'!' | b'?' => {
                let (nag, len) = nag_at(&text[i..])?;
                reader.events.push(Event::Nag(nag));
                i += len;
            }
            _ => {
                let end = text[i..]
                    .iter()
                    .position(|&b| is_delimiter(b))
                    .map_or(n, |p| i + p);
                let token = &text[i..end];
                i = end;
                // A result that NUL bytes may follow (two games of the
                // masters file: python-chess and Scoutfish read the
                // result): the NULs are left for the trailer.
                let nuls = token.iter().rev().take_while(|&&b| b == 0).count();
                let result = &token[..token.len() - nuls];
                if let Some(o) = OUTCOMES.iter().position(|o| o.as_bytes() == result) {
                    i = end - nuls;
                    outcome = Some(o as u8);
                    // The separator before the result, when a token came
                    // before it: a line break or not.
                    result_on_new_line = !reader.events.is_empty()
                        && text[..i - result.len()]
                            .iter()
                            .rev()
                            .take_while(|b| b.is_ascii_whitespace())
                            .any(|&b| b == b'\n');
                    continue;
                }
                reader.word(token)?;
            }
        }
    }
    let layout = reader.layout(tags.is_empty(), outcome.is_some())?;
    Ok(ParsedGame {
        tags,
        start,
        events: reader.events,
        outcome,
        result_on_new_line,
        layout,
    })
}

/// The tags of the game of `text`, read as [`parse`] reads them, without
/// its movetext.
pub(crate) fn tags_of(text: &[u8]) -> Result<Vec<Tag>, Unparsed> {
    parse_tags(text, &mut skip_ws(text, 0))
}

/// The index of the first byte from `i` on that is no white space.
fn skip_ws(text: &[u8], mut i: usize) -> usize {
    while i < text.len() && text[i].is_ascii_whitespace() {
        i += 1;
    }
    i
}

/// A tag's name and value.
type Tag = (Vec<u8>, Vec<u8>);

/// Reads the tags that start at `*i` (white space skipped before them),
/// and the white space after them.
fn parse_tags(text: &[u8], i: &mut usize) -> Result<Vec<Tag>, Unparsed> {
    let n = text.len();
    // Room for the seven-tag roster and a few more.
    let mut tags = Vec::with_capacity(16);
    while *i < n && text[*i] == b'[' {
        *i = skip_ws(text, *i + 1);
        let name_start = *i;
        while *i < n && !text[*i].is_ascii_whitespace() && !matches!(text[*i], b'"' | b']' | b'[') {
            *i += 1;
        }
        let name = text[name_start..*i].to_vec();
        if name.is_empty() {
            return fail("syntax", "tag without a name");
        }
        while *i < n && matches!(text[*i], b' ' | b'\t') {
            *i += 1;
        }
        if *i >= n || text[*i] != b'"' {
            return fail("syntax", "tag without a quoted value");
        }
        let value_start = *i + 1;
        // A value that a backslash ends (`[White "a\"]`) reads as
        // unterminated: it runs to the line's last `"]` too.
        let (mut value, end) = match tag_value(text, value_start) {
            Err(e) => match unescaped_value(text, value_start) {
                Some((v, end)) => (v, end - 1),
                None => return Err(e),
            },
            ok => ok?,
        };
        *i = end + 1;
        while *i < n && matches!(text[*i], b' ' | b'\t') {
            *i += 1;
        }
        if *i >= n || text[*i] != b']' {
            // Quotes inside a value that nobody escaped (`[Annotator "Lopez
            // "Battle Royale""]`): the value runs to the line's last `"]`,
            // as python-chess reads it; the layout gives the bytes back.
            let Some((v, end)) = unescaped_value(text, value_start) else {
                return fail("syntax", "tag not closed by ]");
            };
            value = v;
            *i = end;
        }
        *i = skip_ws(text, *i + 1);
        tags.push((name, value));
    }
    Ok(tags)
}

/// The value of a quoted tag value that starts at `i` (after its `"`),
/// its escapes read, and the index of its closing `"`.
fn tag_value(text: &[u8], mut i: usize) -> Result<(Vec<u8>, usize), Unparsed> {
    let mut value = Vec::new();
    loop {
        // A run of plain bytes at once: one allocation for most values.
        let run = text[i..]
            .iter()
            .position(|c| matches!(c, b'"' | b'\\' | b'\n' | b'\r' | 0))
            .map_or(text.len(), |p| i + p);
        value.extend_from_slice(&text[i..run]);
        i = run;
        match text.get(i) {
            None | Some(b'\n' | b'\r' | 0) => return fail("syntax", "unterminated tag value"),
            Some(b'"') => return Ok((value, i)),
            Some(b'\\') => {
                let (c, len) = unescape(text.get(i + 1));
                value.push(c);
                i += len;
            }
            Some(&c) => {
                value.push(c);
                i += 1;
            }
        }
    }
}

/// The glyph that `text` starts with (`$14`, `!`, `?!`, …) and its length.
fn nag_at(text: &[u8]) -> Result<(u8, usize), Unparsed> {
    if text[0] == b'$' {
        let digits = text[1..].iter().take_while(|b| b.is_ascii_digit()).count();
        let nag = std::str::from_utf8(&text[1..1 + digits])
            .ok()
            .and_then(|s| s.parse::<u8>().ok());
        return match nag {
            Some(nag) => Ok((nag, 1 + digits)),
            None => fail("syntax", "bad nag"),
        };
    }
    Ok(match (text[0], text.get(1)) {
        (b'!', Some(b'!')) => (3, 2),
        (b'?', Some(b'?')) => (4, 2),
        (b'!', Some(b'?')) => (5, 2),
        (b'?', Some(b'!')) => (6, 2),
        (b'!', _) => (1, 1),
        _ => (2, 1),
    })
}

/// A line of moves as it is read.
struct Line {
    pos: Chess,
    before_last: Option<Chess>,
}

/// A game's movetext as it is read: its events, the line being read and
/// the lines it is a variation of, and what its layout is told from.
struct Movetext {
    events: Vec<Event>,
    line: Line,
    stack: Vec<Line>,
    ply: usize,
    /// Move numbers, `5. ...` numbers, and moves in UCI among all moves.
    numbers: usize,
    spaced_dots: bool,
    uci: usize,
    /// Whether the position before the last move is kept.
    variations: bool,
}

impl Movetext {
    fn open(&mut self) -> Result<(), Unparsed> {
        let Some(before) = self.line.before_last.clone() else {
            return fail("syntax", "variation before any move");
        };
        let line = Line {
            pos: before,
            before_last: None,
        };
        self.stack.push(std::mem::replace(&mut self.line, line));
        self.events.push(Event::Open);
        Ok(())
    }

    fn close(&mut self) -> Result<(), Unparsed> {
        let Some(parent) = self.stack.pop() else {
            return fail("syntax", "unmatched )");
        };
        self.line = parent;
        self.events.push(Event::Close);
        Ok(())
    }

    /// A word of the movetext that is no result: a move number, a move, or
    /// both glued together.
    fn word(&mut self, mut token: &[u8]) -> Result<(), Unparsed> {
        // A move number, possibly glued to the move (not UCI's null move
        // `0000`).
        let digits = token.iter().take_while(|b| b.is_ascii_digit()).count();
        let castle_with_zeros = token.starts_with(b"0-0");
        if digits > 0 && !castle_with_zeros && token != b"0000" {
            let dots = token[digits..].iter().take_while(|&&b| b == b'.').count();
            self.numbers += 1;
            if digits + dots == token.len() {
                return Ok(());
            }
            if dots == 0 {
                return fail(
                    "syntax",
                    format!("unknown token {:?}", String::from_utf8_lossy(token)),
                );
            }
            token = &token[digits + dots..];
        }
        // Dots apart from their number: Crafty's `5. ... Qd6`, or glued to
        // the move (`5. ...Qd6`).
        let dots = token.iter().take_while(|&&b| b == b'.').count();
        if dots == token.len() {
            self.spaced_dots = true;
            return Ok(());
        }
        let event = self.move_event(&token[dots..])?;
        // The move (or null move, found legal) played.
        if self.variations {
            self.line.before_last = Some(self.line.pos.clone());
        }
        match event {
            Event::Move(m) => self.line.pos.play_unchecked(m),
            _ => {
                if let Some(after) = after_null(&self.line.pos) {
                    self.line.pos = after;
                }
            }
        }
        self.events.push(event);
        self.ply += 1;
        if self.ply as u64 > MAX_PLIES {
            return fail("too long", "more plies than a decoder accepts");
        }
        Ok(())
    }

    /// The move (or null move) that `token` spells in the line's position,
    /// in UCI or SAN.
    fn move_event(&mut self, token: &[u8]) -> Result<Event, Unparsed> {
        let pos = &self.line.pos;
        // A move in UCI (`g1f3`, `e7e8q`, `0000`): a fully disambiguated
        // pawn move in SAN (`e2e4`) is the same move.
        if uci_shaped(token)
            && let Ok(u) = shakmaty::uci::UciMove::from_ascii(token)
        {
            let event = match u {
                shakmaty::uci::UciMove::Null => after_null(pos).is_some().then_some(Event::Null),
                _ => u.to_move(pos).ok().map(Event::Move),
            };
            if let Some(event) = event {
                self.uci += 1;
                return Ok(event);
            }
        }
        let owned;
        let mut token = token;
        if token.starts_with(b"0-0") {
            owned = token
                .iter()
                .map(|&b| if b == b'0' { b'O' } else { b })
                .collect::<Vec<u8>>();
            token = &owned;
        }
        let Ok(san) = SanPlus::from_ascii(token) else {
            // Long algebraic (`b2-b3`, `Ng1f3`, `d7d8R`, `d2e3+`), as
            // pgn-extract writes it and python-chess reads it.
            if let Some(m) = long_algebraic(token, pos) {
                return Ok(Event::Move(m));
            }
            return fail(
                "syntax",
                format!("unknown token {:?}", String::from_utf8_lossy(token)),
            );
        };
        let ply = self.ply + 1;
        if san.san == San::Null {
            if after_null(pos).is_none() {
                return fail("illegal move", format!("null move in check at ply {ply}"));
            }
            return Ok(Event::Null);
        }
        match san_to_move(san.san, pos) {
            Ok(m) => Ok(Event::Move(m)),
            // A capture without its `x` in long algebraic (`Qd1d4`).
            Err(_) => long_algebraic(token, pos)
                .map(Event::Move)
                .ok_or_else(|| Unparsed {
                    category: "illegal move",
                    detail: format!("illegal move {san} at ply {ply}"),
                }),
        }
    }

    /// The layout bits of the game read (`no_tags`: it has none; `result`:
    /// its movetext ends with one).
    fn layout(&self, no_tags: bool, result: bool) -> Result<u8, Unparsed> {
        if !self.stack.is_empty() {
            return fail("syntax", "unclosed variation");
        }
        let mut layout = 0;
        if self.events.is_empty() && !result {
            // Tags alone: a game of its own (issue 44), written without a
            // movetext line.
            if no_tags {
                return fail("syntax", "no tags and no movetext");
            }
            layout |= LAYOUT_NO_MOVETEXT;
        }
        if self.ply > 0 && self.uci == self.ply {
            layout |= LAYOUT_UCI;
        }
        if self.spaced_dots {
            layout |= LAYOUT_SPACED_DOTS;
        }
        if self.ply > 0 && self.numbers == 0 {
            layout |= LAYOUT_UNNUMBERED;
        }
        Ok(layout)
    }
}

/// Writes `game` in the canonical layout.
pub(crate) fn write(game: &ParsedGame, out: &mut Vec<u8>) {
    // About what is written (a move and its number take at most 8 bytes
    // most times): one allocation instead of a doubling series.
    let tags: usize = game.tags.iter().map(|(k, v)| k.len() + v.len() + 6).sum();
    let events: usize = game
        .events
        .iter()
        .map(|e| match e {
            Event::Comment(text) => text.len() + 3,
            _ => 8,
        })
        .sum();
    out.reserve(tags + events + 16);
    for (name, value) in &game.tags {
        out.push(b'[');
        out.extend_from_slice(name);
        out.extend_from_slice(b" \"");
        for &b in value {
            if b == b'\\' || b == b'"' {
                out.push(b'\\');
            }
            out.push(b);
        }
        out.extend_from_slice(b"\"]\n");
    }
    if !game.tags.is_empty() {
        out.push(b'\n');
    }
    if game.layout & LAYOUT_NO_MOVETEXT != 0 {
        return;
    }
    let variations = game.events.iter().any(|e| matches!(e, Event::Open));
    let mut w = MovetextWriter::new(&game.start, out, variations);
    w.layout = game.layout;
    for event in &game.events {
        w.event(event);
    }
    if let Some(o) = game.outcome {
        if game.result_on_new_line {
            w.out.push(b'\n');
            w.first = true;
        }
        w.token(OUTCOMES[usize::from(o)].as_bytes());
    }
    out.extend_from_slice(b"\n\n");
}

/// Writes movetext tokens one at a time, tracking positions for SAN and
/// move numbers.
pub(crate) struct MovetextWriter<'a> {
    out: &'a mut Vec<u8>,
    lines: Vec<(Chess, Option<Chess>)>,
    need_number: bool,
    first: bool,
    after_open: bool,
    /// Whether variations may follow, so that each line keeps the position
    /// before its last move (where a variation starts).
    variations: bool,
    /// [`ParsedGame::layout`]'s bits.
    layout: u8,
}

impl<'a> MovetextWriter<'a> {
    /// A writer from `start`; `variations` tells whether the events hold
    /// any.
    pub(crate) fn new(start: &Chess, out: &'a mut Vec<u8>, variations: bool) -> MovetextWriter<'a> {
        MovetextWriter {
            out,
            lines: vec![(start.clone(), None)],
            need_number: true,
            first: true,
            after_open: false,
            variations,
            layout: 0,
        }
    }

    /// A move's number where it is written, before the move or null move
    /// played in `pos`.
    fn number(out: &mut Vec<u8>, pos: &Chess, need_number: bool, layout: u8) {
        let number = u64::from(pos.fullmoves().get());
        if layout & LAYOUT_UNNUMBERED != 0 {
        } else if pos.turn() == Color::White {
            push_digits(out, number, 1);
            out.extend_from_slice(b". ");
        } else if need_number {
            push_digits(out, number, 1);
            out.extend_from_slice(if layout & LAYOUT_SPACED_DOTS != 0 {
                b". ... "
            } else {
                b"... "
            });
        }
    }

    fn space(&mut self) {
        if !self.first && !self.after_open {
            self.out.push(b' ');
        }
        self.first = false;
        self.after_open = false;
    }

    fn token(&mut self, token: &[u8]) {
        self.space();
        self.out.extend_from_slice(token);
    }

    /// The position where the next move of the current line is played.
    pub(crate) fn position(&self) -> &Chess {
        &self.lines[self.lines.len() - 1].0
    }

    pub(crate) fn event(&mut self, event: &Event) {
        use std::io::Write as _;
        match event {
            Event::Move(m) => {
                self.space();
                let (pos, before) = self.lines.last_mut().expect("a line");
                Self::number(self.out, pos, self.need_number, self.layout);
                if self.variations {
                    *before = Some(pos.clone());
                }
                if self.layout & LAYOUT_UCI != 0 {
                    let uci = m.to_uci(pos.castles().mode());
                    let _ = write!(self.out, "{uci}");
                    pos.play_unchecked(*m);
                } else {
                    push_san(self.out, san_and_play(pos, *m));
                }
                self.need_number = false;
            }
            Event::Null => {
                self.space();
                let (pos, before) = self.lines.last_mut().expect("a line");
                Self::number(self.out, pos, self.need_number, self.layout);
                self.out
                    .extend_from_slice(if self.layout & LAYOUT_UCI != 0 {
                        b"0000"
                    } else {
                        b"--"
                    });
                // Read null moves are legal; a position left as it was
                // otherwise.
                if let Some(after) = after_null(pos) {
                    if self.variations {
                        *before = Some(pos.clone());
                    }
                    *pos = after;
                }
                self.need_number = false;
            }
            Event::Nag(nag) => {
                self.space();
                let _ = write!(self.out, "${nag}");
                self.need_number = true;
            }
            Event::Comment(text) => {
                self.space();
                self.out.push(b'{');
                self.out.extend_from_slice(text);
                self.out.push(b'}');
                self.need_number = true;
            }
            Event::Open => {
                self.space();
                self.out.push(b'(');
                let before = self.lines.last().and_then(|l| l.1.clone());
                let before = before.unwrap_or_else(|| self.position().clone());
                self.lines.push((before, None));
                self.after_open = true;
                self.need_number = true;
            }
            Event::Close => {
                self.out.push(b')');
                if self.lines.len() > 1 {
                    self.lines.pop();
                }
                self.need_number = true;
            }
        }
    }
}

/// Appends `n` in decimal, with zeros before it to `width` digits (what
/// `format!("{n:0width$}")` writes, without its machinery: move numbers,
/// and the dates, times and Elos that tag marks give, are written often).
pub(crate) fn push_digits(out: &mut Vec<u8>, n: u64, width: usize) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    let mut n = n;
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    for _ in digits.len() - i..width {
        out.push(b'0');
    }
    out.extend_from_slice(&digits[i..]);
}

/// The legal move that `san` names in `pos`: what
/// [`shakmaty::san::San::to_move`] returns, found from the attack tables
/// where the side to move is not in check and the SAN is a plain piece or
/// pawn move (most moves), without listing candidate moves; the rest (and
/// any SAN that does not name exactly one move that way) goes to shakmaty,
/// which also words the errors.
fn san_to_move(san: San, pos: &Chess) -> Result<Move, shakmaty::san::SanError> {
    quiet_san_to_move(pos, san).map_or_else(|| san.to_move(pos), Ok)
}

/// [`san_to_move`]'s fast path: `Some` only for the one legal move that a
/// plain SAN ([`San::Normal`]) names, when the side to move is not in check.
fn quiet_san_to_move(pos: &Chess, san: San) -> Option<Move> {
    let San::Normal {
        role,
        file,
        rank,
        capture,
        to,
        promotion,
    } = san
    else {
        return None;
    };
    let board = pos.board();
    let turn = pos.turn();
    let (us, them, occupied) = (pos.us(), pos.them(), board.occupied());
    let king = board.king_of(turn)?;
    if us.contains(to) || capture != them.contains(to) || pos.checkers().any() {
        return None;
    }
    let last_rank = to.rank() == turn.fold_wb(shakmaty::Rank::Eighth, shakmaty::Rank::First);
    let mut from_set = match role {
        Role::King => {
            if promotion.is_some()
                || !attacks::king_attacks(king).contains(to)
                || board.attacks_to(to, !turn, occupied).any()
            {
                return None;
            }
            Bitboard::from(king)
        }
        Role::Pawn => {
            // En passant, and promotions that the SAN gets wrong or to a
            // piece no pawn becomes: shakmaty.
            if matches!(promotion, Some(Role::Pawn | Role::King)) {
                return None;
            }
            if Some(to) == pos.maybe_ep_square() || promotion.is_some() != last_rank {
                return None;
            }
            let pawns = board.pawns() & us;
            if capture {
                attacks::pawn_attacks(!turn, to) & pawns
            } else {
                let back = |sq: Square| sq.offset(turn.fold_wb(-8, 8));
                let one = back(to)?;
                if pawns.contains(one) {
                    Bitboard::from(one)
                } else if !occupied.contains(one)
                    && one.rank() == turn.fold_wb(shakmaty::Rank::Third, shakmaty::Rank::Sixth)
                    && let Some(two) = back(one)
                    && pawns.contains(two)
                {
                    Bitboard::from(two)
                } else {
                    return None;
                }
            }
        }
        _ => {
            if promotion.is_some() {
                return None;
            }
            let piece = shakmaty::Piece { color: turn, role };
            // The squares a piece of this kind attacks `to` from.
            board.by_piece(piece) & slide::attacks(to, piece, occupied)
        }
    };
    if let Some(f) = file {
        from_set &= Bitboard::from_file(f);
    }
    if let Some(r) = rank {
        from_set &= Bitboard::from_rank(r);
    }
    // Pinned pieces stay on their king's line (a king is never pinned).
    if role != Role::King {
        for pinned in crate::order::pinned(pos, king) & from_set {
            if !attacks::aligned(pinned, to, king) {
                from_set.discard(pinned);
            }
        }
    }
    let from = from_set.single_square()?;
    Some(Move::Normal {
        role,
        from,
        capture: board.role_at(to),
        to,
        promotion,
    })
}

/// The SAN of legal move `m` in `pos`: [`shakmaty::san::San::from_move`],
/// which lists the legal moves of the same role to the same square to tell
/// the piece apart, except where no other piece of that role attacks the
/// square at all (most moves), so that there is nothing to tell apart.
fn san_of(pos: &Chess, m: Move) -> shakmaty::san::San {
    if let Move::Normal {
        role,
        from,
        capture,
        to,
        promotion: None,
    } = m
        && role != shakmaty::Role::Pawn
    {
        let board = pos.board();
        let piece = shakmaty::Piece {
            color: pos.turn(),
            role,
        };
        let rivals =
            board.by_piece(piece).without(from) & slide::attacks(to, piece, board.occupied());
        if rivals.is_empty() {
            return shakmaty::san::San::Normal {
                role,
                file: None,
                rank: None,
                capture: capture.is_some(),
                to,
                promotion: None,
            };
        }
    }
    shakmaty::san::San::from_move(pos, m)
}

/// The SAN of legal move `m` in `pos`, which then plays it: what
/// [`SanPlus::from_move_and_play_unchecked`] gives, but the legal moves
/// that tell mate from check are generated only when the move gives check.
pub(crate) fn san_and_play(pos: &mut Chess, m: Move) -> SanPlus {
    let san = san_of(pos, m);
    pos.play_unchecked(m);
    let suffix = pos.checkers().any().then(|| {
        if !king_can_step(pos) && pos.legal_moves().is_empty() {
            shakmaty::san::Suffix::Checkmate
        } else {
            shakmaty::san::Suffix::Check
        }
    });
    SanPlus { san, suffix }
}

/// Whether the king of the side to move (in check) has a square to step
/// to (not castling): most checks, where no list of legal moves is needed
/// to tell check from mate.
fn king_can_step(pos: &Chess) -> bool {
    let board = pos.board();
    let turn = pos.turn();
    let Some(king) = board.king_of(turn) else {
        return false;
    };
    // Without the king, so that a slider's line goes through its square.
    let occupied = board.occupied().without(king);
    (attacks::king_attacks(king) & !pos.us())
        .into_iter()
        .any(|to| board.attacks_to(to, !turn, occupied).is_empty())
}

/// Appends the SAN of a move with its suffix: what
/// [`SanPlus::append_ascii_to`] writes, a byte at a time into a small
/// buffer instead of the vector.
fn push_san(out: &mut Vec<u8>, san: SanPlus) {
    let mut buf = [0u8; 10];
    let mut n = 0;
    let mut put = |b: u8| {
        buf[n] = b;
        n += 1;
    };
    match san.san {
        San::Normal {
            role,
            file,
            rank,
            capture,
            to,
            promotion,
        } => {
            if role != Role::Pawn {
                put(role.upper_char() as u8);
            }
            if let Some(file) = file {
                put(file.char() as u8);
            }
            if let Some(rank) = rank {
                put(rank.char() as u8);
            }
            if capture {
                put(b'x');
            }
            put(to.file().char() as u8);
            put(to.rank().char() as u8);
            if let Some(promotion) = promotion {
                put(b'=');
                put(promotion.upper_char() as u8);
            }
        }
        other => {
            // Castling, drops and null moves: rare.
            other.append_ascii_to(out);
        }
    }
    if let Some(suffix) = san.suffix {
        put(suffix.char() as u8);
    }
    // A suffix after castling goes after the castling text.
    out.extend_from_slice(&buf[..n]);
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
    /// After each mainline move, the first `[%clk …]` reading in the
    /// comments that follow it (as python-chess reads them, joined), in
    /// milliseconds (`pgn::clock_millis`).
    pub clocks: Vec<Option<u64>>,
    /// After each mainline move, the first `[%eval …]` in the comments
    /// that follow it (`pgn::eval_of_comment`): the evaluation of
    /// the position the move gives.
    pub evals: Vec<Option<crate::pgn::Eval>>,
}

impl GameRecord {
    /// The record of a game from its parsed events.
    pub(crate) fn of(
        tags: Vec<(Vec<u8>, Vec<u8>)>,
        start: shakmaty::Chess,
        events: &[Event],
    ) -> GameRecord {
        let (mut moves, mut clocks, mut evals) = (Vec::new(), Vec::new(), Vec::new());
        let mut depth = 0usize;
        for e in events {
            match e {
                Event::Open => depth += 1,
                Event::Close => depth = depth.saturating_sub(1),
                Event::Move(m) if depth == 0 => {
                    moves.push(*m);
                    clocks.push(None);
                    evals.push(None);
                }
                Event::Comment(c) if depth == 0 => {
                    if let Some(last @ None) = clocks.last_mut() {
                        *last = crate::pgn::clock_millis(c);
                    }
                    if let Some(last @ None) = evals.last_mut() {
                        *last = crate::pgn::eval_of_comment(c);
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
            evals,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_in_decimal() {
        for n in [0, 1, 9, 10, 99, 100, 12_345, u64::from(u32::MAX), u64::MAX] {
            let mut out = Vec::new();
            push_digits(&mut out, n, 1);
            assert_eq!(out, n.to_string().as_bytes());
        }
        for (n, width, text) in [
            (0, 1, &b"0"[..]),
            (7, 2, b"07"),
            (2155, 1, b"2155"),
            (5, 4, b"0005"),
        ] {
            let mut out = b"x".to_vec();
            push_digits(&mut out, n, width);
            assert_eq!(&out[1..], text);
        }
    }

    /// `san_and_play` writes what shakmaty's `SanPlus` does, checks and
    /// mates included, in random games.
    #[test]
    fn san_and_play_agrees_with_shakmaty() {
        let mut seed = 11u64;
        let (mut checks, mut mates) = (0, 0);
        for _ in 0..100 {
            let mut pos = Chess::default();
            for _ in 0..200 {
                let moves = pos.legal_moves();
                if moves.is_empty() {
                    break;
                }
                for &m in &moves {
                    let mut a = pos.clone();
                    let mut b = pos.clone();
                    let ours = san_and_play(&mut a, m);
                    let theirs = SanPlus::from_move_and_play_unchecked(&mut b, m);
                    assert_eq!(ours, theirs);
                    let (mut ours_text, mut theirs_text) = (Vec::new(), Vec::new());
                    push_san(&mut ours_text, ours);
                    theirs.append_ascii_to(&mut theirs_text);
                    assert_eq!(ours_text, theirs_text);
                    assert_eq!(a, b);
                    checks += usize::from(ours.suffix.is_some());
                    mates += usize::from(ours.suffix == Some(shakmaty::san::Suffix::Checkmate));
                }
                seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
                pos.play_unchecked(moves[(seed >> 33) as usize % moves.len()]);
            }
        }
        assert!(checks > 100 && mates > 0, "{checks} checks, {mates} mates");
    }

    /// Long algebraic as pgn-extract writes it: each spelling of one legal
    /// move names it, castling by the king's or the rook's square,
    /// promotions in either case; what names no legal move names none.
    #[test]
    fn long_algebraic_names_the_one_legal_move() {
        use shakmaty::{fen::Fen, uci::UciMove};
        let at = |fen: &str| -> Chess {
            Fen::from_ascii(fen.as_bytes())
                .unwrap()
                .into_position(shakmaty::CastlingMode::Standard)
                .unwrap()
        };
        let uci = |pos: &Chess, token: &str| {
            long_algebraic(token.as_bytes(), pos).map(|m| UciMove::from_standard(m).to_string())
        };
        let start = Chess::default();
        for (token, want) in [
            ("e2e4", Some("e2e4")),
            ("e2-e4", Some("e2e4")),
            ("Pe2-e4", Some("e2e4")),
            ("Ng1f3", Some("g1f3")),
            ("Ng1-f3+", Some("g1f3")),
            ("g1f3!?", Some("g1f3")),
            ("Bg1f3", None),
            ("e2e5", None),
            ("e2", None),
            ("e2-e4-", None),
        ] {
            assert_eq!(uci(&start, token).as_deref(), want, "{token}");
        }
        let castle = at("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1");
        assert_eq!(uci(&castle, "e1g1").as_deref(), Some("e1g1"));
        assert_eq!(uci(&castle, "Ke1-c1").as_deref(), Some("e1c1"));
        assert_eq!(uci(&castle, "e1h1").as_deref(), Some("e1g1"));
        let promote = at("8/3P4/8/8/8/8/k7/4K3 w - - 0 1");
        assert_eq!(uci(&promote, "d7d8R").as_deref(), Some("d7d8r"));
        assert_eq!(uci(&promote, "d7-d8=q+").as_deref(), Some("d7d8q"));
        assert_eq!(uci(&promote, "d7d8"), None);
        let capture = at("4k3/8/8/3p4/4P3/8/8/4K3 w - - 0 1");
        assert_eq!(uci(&capture, "e4xd5").as_deref(), Some("e4d5"));
        assert_eq!(uci(&capture, "e4:d5").as_deref(), Some("e4d5"));
    }

    /// `san_to_move` resolves every SAN as shakmaty does: the SAN of each
    /// legal move, without its disambiguation, with the capture mark
    /// flipped, with other promotions, and pieces of every kind sent to
    /// every square, in random games (pins, checks, en passant included).
    #[test]
    fn san_to_move_agrees_with_shakmaty() {
        let mut seed = 7u64;
        let mut fast = 0;
        for _ in 0..60 {
            let mut pos = Chess::default();
            for _ in 0..160 {
                let moves = pos.legal_moves();
                if moves.is_empty() {
                    break;
                }
                let check = |san: San| {
                    assert_eq!(
                        san_to_move(san, &pos).ok(),
                        san.to_move(&pos).ok(),
                        "{san} in {}",
                        shakmaty::fen::Fen::from_position(&pos, shakmaty::EnPassantMode::Legal)
                    );
                };
                for &m in &moves {
                    let san = San::from_move(&pos, m);
                    check(san);
                    fast += usize::from(quiet_san_to_move(&pos, san).is_some());
                    if let San::Normal {
                        role,
                        file,
                        rank,
                        capture,
                        to,
                        promotion,
                    } = san
                    {
                        let plain = San::Normal {
                            role,
                            file: None,
                            rank: None,
                            capture,
                            to,
                            promotion,
                        };
                        check(plain);
                        check(San::Normal {
                            role,
                            file,
                            rank,
                            capture: !capture,
                            to,
                            promotion,
                        });
                        for p in [
                            None,
                            Some(Role::Knight),
                            Some(Role::Queen),
                            Some(Role::King),
                        ] {
                            check(San::Normal {
                                role,
                                file,
                                rank,
                                capture,
                                to,
                                promotion: p,
                            });
                        }
                        check(San::Normal {
                            role,
                            file: Some(to.file()),
                            rank,
                            capture,
                            to,
                            promotion,
                        });
                    }
                }
                for role in Role::ALL {
                    for to in Square::ALL {
                        for capture in [false, true] {
                            check(San::Normal {
                                role,
                                file: None,
                                rank: None,
                                capture,
                                to,
                                promotion: None,
                            });
                        }
                    }
                }
                seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
                pos.play_unchecked(moves[(seed >> 33) as usize % moves.len()]);
            }
        }
        assert!(fast > 10_000, "{fast}");
    }

    fn canonical(text: &str) -> String {
        let game = parse(text.as_bytes()).unwrap();
        let mut out = Vec::new();
        write(&game, &mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn layout() {
        assert_eq!(
            canonical(
                "[Event \"a \\\"b\\\" \\\\\"]\r\n\r\n1.e4 e5!? 2.Nf3 {x} Nc6 (2...Nf6 $1 (2...d6)) 3.Bb5 a6 1-0\r\n"
            ),
            "[Event \"a \\\"b\\\" \\\\\"]\n\n1. e4 e5 $5 2. Nf3 {x} 2... Nc6 (2... Nf6 $1 (2... d6)) 3. Bb5 a6 1-0\n\n"
        );
    }

    #[test]
    fn castling_with_zeros_and_checks() {
        assert_eq!(
            canonical("1. e4 e5 2. Bc4 Nc6 3. Qh5 Nf6 4. Qxf7 *"),
            "1. e4 e5 2. Bc4 Nc6 3. Qh5 Nf6 4. Qxf7# *\n\n"
        );
        assert_eq!(
            canonical("1. e4 e5 2. Nf3 Nf6 3. Bc4 Bc5 4. 0-0 0-0"),
            "1. e4 e5 2. Nf3 Nf6 3. Bc4 Bc5 4. O-O O-O\n\n"
        );
    }

    #[test]
    fn a_semicolon_comment_runs_to_the_line_end() {
        let game = parse(b"1. e4 ; the king's {pawn\r\ne5 ;\n2. Nf3 *").unwrap();
        assert_eq!(game.events.len(), 5);
        assert!(matches!(&game.events[1], Event::Comment(c) if c == b" the king's {pawn"));
        assert!(matches!(&game.events[3], Event::Comment(c) if c.is_empty()));
        assert_eq!(game.outcome, Some(3));
    }

    #[test]
    fn rejects_what_it_cannot_give_back() {
        for (text, category) in [
            ("1. e4 ; a } note\n e5 *", "escape"),
            ("1. e4\n% escape\n e5 *", "escape"),
            ("1. e4 e5 2. Kf3 *", "illegal move"),
            ("hello world", "syntax"),
            ("1. e4 (1. d4", "syntax"),
            ("1. e4 e5 1-0 e6", "syntax"),
            ("( e4 )", "syntax"),
            ("[Variant \"Atomic\"]\n\n1. e4 *", "unsupported variant"),
            ("[FEN \"8/8/8 w - -\"]\n\n*", "invalid fen"),
            ("[A \"x\n\n*", "syntax"),
            ("1. e4 {open", "syntax"),
        ] {
            assert_eq!(
                parse(text.as_bytes()).unwrap_err().category,
                category,
                "{text}"
            );
        }
        // A backslash that escapes nothing is itself (issue 68).
        let tags = parse(b"[A \"x\\n\"]\n\n*").unwrap().tags;
        assert_eq!(tags, [(b"A".to_vec(), b"x\\n".to_vec())]);
    }
}
