//! The layout of a game's text (issue 56): what turns the
//! canonical text back into the input's bytes.
//!
//! A parsed game is written canonically (one tag a line, a blank line, the
//! movetext on one line, `1. e4 e5`, glyphs as `$n`). Real files differ
//! from that in layout alone, and mostly in a few regular ways, so a game's
//! layout is a [`Style`] that predicts its text from the canonical one,
//! then a [`Patch`] of whatever the style did not predict:
//!
//! * **wrap**: the movetext wrapped greedily at `W` columns (a line break
//!   in place of a space wherever the next token would pass column `W`),
//!   as the PGN standard's export format (`W` = 79), TWIC and python-chess
//!   write it;
//! * **compact numbers**: `1.e4 e5 2.Nf3` and `1...e5`, the move glued to
//!   its number (ChessBase, pgnmentor);
//! * **glyphs as symbols**: `$1` to `$6` written `!`, `?`, `!!`, `??`,
//!   `!?`, `?!` and glued to the move (lichess's database dumps);
//! * **the result's separator**: the whitespace before the result token
//!   (`41.c7  1-0`, or a blank line before it);
//! * **the trailer**: the whitespace after the game (the blank lines
//!   between games, or none at the end of a file).
//!
//! The patch is a byte diff from the styled text (with CR LF line ends
//! where the game's kind says so) to the input: hunks of bytes deleted and
//! inserted, each after a run of bytes kept. A game whose text the style
//! predicts has an empty patch; one written canonically (a lichess API
//! export) is the single byte 0 in the `layout` column.
//!
//! Layout record, per parsed game: a flags byte ([`WRAP`], [`COMPACT`],
//! [`GLYPHS`], [`RESULT_SEP`], [`TRAILER`], [`PATCH`]), then in that
//! order the width (varint), the result's separator and the trailer (each a
//! varint length and the bytes) and the patch (a varint count of hunks, each
//! the varint lengths kept, deleted and inserted, then the inserted bytes).

use super::{get_varint, put_varint};
use crate::pgn::strict::OUTCOMES;

/// Flag: the movetext is wrapped at a width (a varint follows).
const WRAP: u64 = 1;
/// Flag: move numbers are glued to their moves (`1.e4`, `1...e5`).
const COMPACT: u64 = 2;
/// Flag: glyphs `$1` to `$6` are written as symbols glued to the move.
const GLYPHS: u64 = 4;
/// Flag: the whitespace before the result is given.
const RESULT_SEP: u64 = 8;
/// Flag: the whitespace after the game is given.
const TRAILER: u64 = 16;
/// Flag: a patch follows.
const PATCH: u64 = 32;
/// Flag: a move number stays on the line of its move.
const NUMBER_KEPT: u64 = 64;
/// Flag: the wrap breaks a line before a move number once it reaches the
/// width ([`Wrap::Fill`]), not before what would pass it.
const FILL: u64 = 128;
/// Flag: a comment stays on the line of the move before it.
const COMMENT_KEPT: u64 = 256;
/// Flag: a black move's number is not repeated after a comment.
const NO_BLACK_NUMBERS: u64 = 512;
/// Flag: a mate is written `+`, as a check.
const MATE_AS_CHECK: u64 = 1024;
/// Flag: a line that the wrap breaks ends with the space it broke at
/// (`e5 \n2. Nf3`: lines with a trailing space, as some engines' PGN has
/// them).
const SPACE_AT_BREAK: u64 = 2048;
/// Flag: move numbers count from 1 where the game's `FEN` starts at a
/// later move (fastchess and cutechess write them so).
const NUMBERS_FROM_ONE: u64 = 4096;
/// Every flag there is.
const FLAGS: u64 = 8191;

/// The largest wrap width, result separator, trailer, and hunk count or
/// length a decoder accepts (a block holds a few megabytes of text).
const MAX_LEN: u64 = 64 << 20;

/// How the movetext is cut into lines.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Wrap {
    /// One line.
    #[default]
    None,
    /// A line break in place of a space wherever the next unit would pass
    /// column `W` (the PGN standard's export format, `W` = 79).
    Fit(u32),
    /// A line break before a move number once the line holds `T` bytes or
    /// more (pgnmentor's files, `T` = 72).
    Fill(u32),
}

/// The regular part of a game's layout: how its text is predicted from the
/// canonical text.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Style {
    pub wrap: Wrap,
    /// Move numbers glued to their moves.
    pub compact: bool,
    /// Glyphs `$1` to `$6` as symbols glued to the move.
    pub glyphs: bool,
    /// A move number stays on its move's line.
    pub number_kept: bool,
    /// A comment stays on the line of the move before it.
    pub comment_kept: bool,
    /// A black move's number is not repeated after a comment.
    pub no_black_numbers: bool,
    /// A mate written `+`, as a check.
    pub mate_as_check: bool,
    /// A line the wrap breaks ends with a space.
    pub space_at_break: bool,
    /// Move numbers count from 1, whatever move the game starts at.
    pub numbers_from_one: bool,
    /// The whitespace before the result token, where it is not the
    /// canonical one.
    pub result_sep: Option<Vec<u8>>,
    /// The whitespace after the game, where it is not `\n\n`.
    pub trailer: Option<Vec<u8>>,
}

/// One change of a [`Patch`]: after `keep` bytes of the styled text, `del`
/// bytes of it are left out and `ins` put in their place.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Hunk {
    keep: usize,
    del: usize,
    ins: Vec<u8>,
}

/// What the style did not predict.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Patch {
    hunks: Vec<Hunk>,
}

/// A game's layout: its style and its patch.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Layout {
    pub style: Style,
    patch: Patch,
}

/// The glyphs that [`Style::glyphs`] writes as symbols, by NAG number.
const SYMBOLS: [&[u8]; 7] = [b"", b"!", b"?", b"!!", b"??", b"!?", b"?!"];

/// Where the movetext of a canonical text starts: after the tags' blank
/// line (tag values hold no line feed), or at 0 for a game without tags.
fn movetext_start(canonical: &[u8]) -> usize {
    if canonical.first() != Some(&b'[') {
        return 0;
    }
    canonical
        .windows(2)
        .position(|w| w == b"\n\n")
        .map_or(canonical.len(), |p| p + 2)
}

/// Whether `token` (after any `(`) is a move number: digits and dots.
fn is_number(token: &[u8]) -> bool {
    let t = token.trim_ascii_start();
    let t = &t[t.iter().take_while(|&&b| b == b'(').count()..];
    let digits = t.iter().take_while(|b| b.is_ascii_digit()).count();
    digits > 0 && t.len() > digits && t[digits..].iter().all(|&b| b == b'.')
}

/// The number of the first move number of a movetext (`9.`, `9...` or
/// `9.e4`), outside comments.
fn first_number(movetext: &[u8]) -> Option<u64> {
    let mut depth = 0usize;
    for token in movetext.split(|&b| b == b' ' || b == b'\n') {
        let t = &token[token.iter().take_while(|&&b| b == b'(').count()..];
        let digits = t.iter().take_while(|b| b.is_ascii_digit()).count();
        // `9.`, `9...`, and `9.e4` where numbers are glued to moves.
        if depth == 0 && digits > 0 && t.get(digits) == Some(&b'.') {
            return std::str::from_utf8(&t[..digits]).ok()?.parse().ok();
        }
        depth += token.iter().filter(|&&b| b == b'{').count();
        depth = depth.saturating_sub(token.iter().filter(|&&b| b == b'}').count());
    }
    None
}

/// Appends move number `token` less `shift` (its `(`s and dots kept).
fn renumbered(token: &[u8], shift: u64, out: &mut Vec<u8>) {
    let open = token.iter().take_while(|&&b| b == b'(').count();
    let digits = token[open..]
        .iter()
        .take_while(|b| b.is_ascii_digit())
        .count();
    let n = std::str::from_utf8(&token[open..open + digits])
        .ok()
        .and_then(|d| d.parse::<u64>().ok());
    match n {
        Some(n) if n > shift => {
            out.extend_from_slice(&token[..open]);
            out.extend_from_slice((n - shift).to_string().as_bytes());
            out.extend_from_slice(&token[open + digits..]);
        }
        _ => out.extend_from_slice(token),
    }
}

/// The symbol of a canonical glyph token (`$6`, or `$6)` before a
/// variation's end); what follows it is `token[2..]`.
fn symbol(token: &[u8]) -> Option<&'static [u8]> {
    let [b'$', d @ b'1'..=b'6', rest @ ..] = token else {
        return None;
    };
    rest.iter()
        .all(|&b| b == b')')
        .then_some(SYMBOLS[usize::from(d - b'0')])
}

/// The separator before a unit of movetext.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Sep<'a> {
    /// A space where the line may break.
    Break,
    /// Given whitespace (a line feed, the result's separator, nothing
    /// before the first unit).
    Given(&'a [u8]),
}

/// Whether a unit begins with a move number (after any `(`).
fn numbered(unit: &[u8]) -> bool {
    let t = &unit[unit.iter().take_while(|&&b| b == b'(').count()..];
    let digits = t.iter().take_while(|b| b.is_ascii_digit()).count();
    digits > 0 && t.get(digits) == Some(&b'.')
}

/// Calls `f` with each unit of a canonical movetext in `style` (tokens
/// that no line break parts) and the separator before it. A comment is one
/// token; tokens are separated by the canonical text's single spaces and
/// line feeds. One buffer holds the unit being made.
fn for_units<'a>(movetext: &'a [u8], style: &'a Style, f: &mut dyn FnMut(Sep<'a>, &[u8])) {
    let n = movetext.len();
    // What move numbers lose where they count from 1: the first one's
    // number less one.
    let shift = if style.numbers_from_one {
        first_number(movetext).map_or(0, |m| m.saturating_sub(1))
    } else {
        0
    };
    let mut unit: Vec<u8> = Vec::with_capacity(64);
    let mut sep = Sep::Given(b"");
    // What the token before was: a move number, a comment.
    let (mut after_number, mut after_comment, mut first) = (false, false, true);
    let mut i = 0;
    while i < n {
        let sep_start = i;
        while i < n && matches!(movetext[i], b' ' | b'\n') {
            i += 1;
        }
        if i >= n {
            break;
        }
        let start = i;
        while i < n && !matches!(movetext[i], b' ' | b'\n') {
            if movetext[i] == b'{' {
                i += movetext[i..]
                    .iter()
                    .position(|&b| b == b'}')
                    .unwrap_or(n - i - 1);
            }
            i += 1;
        }
        let token = &movetext[start..i];
        let number = is_number(token);
        if style.no_black_numbers && after_comment && number && token.ends_with(b"...") {
            after_comment = false;
            continue;
        }
        let glyph = if style.glyphs { symbol(token) } else { None };
        let comment = token.starts_with(b"{");
        let glue: Option<&[u8]> = if glyph.is_some() || (after_number && style.compact) {
            Some(b"")
        } else if (after_number && style.number_kept) || (comment && style.comment_kept) {
            Some(b" ")
        } else {
            None
        };
        match glue {
            Some(g) if !first => unit.extend_from_slice(g),
            _ => {
                if !first {
                    f(sep, &unit);
                }
                unit.clear();
                let s = &movetext[sep_start..start];
                let result = !first && i == n && OUTCOMES.iter().any(|o| o.as_bytes() == token);
                sep = match &style.result_sep {
                    _ if first => Sep::Given(b""),
                    Some(given) if result => Sep::Given(given),
                    _ if s == b" " => Sep::Break,
                    _ => Sep::Given(s),
                };
            }
        }
        match glyph {
            Some(g) => {
                unit.extend_from_slice(g);
                unit.extend_from_slice(&token[2..]);
            }
            None if style.mate_as_check && !comment && token.contains(&b'#') => {
                unit.extend(token.iter().map(|&b| if b == b'#' { b'+' } else { b }));
            }
            None if number && shift > 0 => renumbered(token, shift, &mut unit),
            None => unit.extend_from_slice(token),
        }
        first = false;
        after_number = number;
        after_comment = comment;
    }
    if !first {
        f(sep, &unit);
    }
}

/// The units of a canonical movetext in `style`, each with the separator
/// before it (see [`for_units`]).
fn units<'a>(movetext: &'a [u8], style: &'a Style) -> Vec<(Sep<'a>, Vec<u8>)> {
    let mut out = Vec::new();
    for_units(movetext, style, &mut |sep, unit| {
        out.push((sep, unit.to_vec()))
    });
    out
}

/// The column after `bytes` written at column `col`.
fn column_after(col: usize, bytes: &[u8]) -> usize {
    match bytes.iter().rposition(|&b| b == b'\n') {
        Some(p) => bytes.len() - p - 1,
        None => col + bytes.len(),
    }
}

/// Whether `wrap` breaks the line at column `col` before `unit` with the
/// separator `sep` (a space or given spaces).
fn breaks(wrap: Wrap, col: usize, sep: usize, unit: &[u8]) -> bool {
    match wrap {
        Wrap::None => false,
        Wrap::Fit(w) => col > 0 && col + sep + unit.len() > w as usize,
        Wrap::Fill(t) => col > 0 && col >= t as usize && numbered(unit),
    }
}

/// Writes units, cut into lines by `wrap`.
struct Render<'o> {
    out: &'o mut Vec<u8>,
    wrap: Wrap,
    /// A space before each line break the wrap makes.
    space: bool,
    col: usize,
}

impl Render<'_> {
    /// Writes `unit` after the separator `sep`.
    fn unit(&mut self, sep: Sep<'_>, unit: &[u8]) {
        match sep {
            Sep::Break => {
                if breaks(self.wrap, self.col, 1, unit) {
                    self.line_break();
                } else {
                    self.out.push(b' ');
                    self.col += 1;
                }
            }
            Sep::Given(s) => {
                if !s.is_empty()
                    && !s.contains(&b'\n')
                    && breaks(self.wrap, self.col, s.len(), unit)
                {
                    self.line_break();
                } else {
                    self.out.extend_from_slice(s);
                    self.col = column_after(self.col, s);
                }
            }
        }
        self.out.extend_from_slice(unit);
        self.col = column_after(self.col, unit);
    }

    /// A line break of the wrap's.
    fn line_break(&mut self) {
        if self.space {
            self.out.push(b' ');
        }
        self.out.push(b'\n');
        self.col = 0;
    }
}

/// Writes a canonical text (line feeds alone) in `style`.
pub(crate) fn styled(canonical: &[u8], style: &Style) -> Vec<u8> {
    let start = movetext_start(canonical);
    let end = canonical.len() - super::trailing_whitespace(canonical);
    let mut out = Vec::with_capacity(canonical.len() + 16);
    if start >= end {
        // Tags alone.
        out.extend_from_slice(&canonical[..end]);
    } else {
        out.extend_from_slice(&canonical[..start]);
        let mut render = Render {
            out: &mut out,
            wrap: style.wrap,
            space: style.space_at_break,
            col: 0,
        };
        for_units(&canonical[start..end], style, &mut |sep, unit| {
            render.unit(sep, unit)
        });
    }
    match &style.trailer {
        Some(t) => out.extend_from_slice(t),
        None => out.extend_from_slice(&canonical[end..]),
    }
    out
}

/// The widths that give `original` (the movetext, line feeds alone) from
/// `units`: `(fit, fill)`, each the range of widths that break the lines
/// where `original` breaks them, `None` where `original` is not `units`
/// with some spaces made line breaks.
#[allow(clippy::type_complexity)]
fn widths(
    units: &[(Sep<'_>, Vec<u8>)],
    original: &[u8],
) -> Option<(Option<(usize, usize)>, Option<(usize, usize)>)> {
    let (mut fit, mut fill) = ((1usize, usize::MAX), (1usize, usize::MAX));
    let mut fill_ok = true;
    let (mut p, mut col) = (0usize, 0usize);
    for (sep, unit) in units {
        let sep_len = match sep {
            Sep::Break => Some(1),
            Sep::Given(s) if !s.is_empty() && s.iter().all(|&b| b == b' ') => Some(s.len()),
            Sep::Given(s) => {
                if original.get(p..p + s.len()) != Some(s) {
                    return None;
                }
                p += s.len();
                col = column_after(col, s);
                None
            }
        };
        if let Some(len) = sep_len {
            let broke = match original.get(p) {
                Some(b'\n') => true,
                Some(b' ')
                    if original
                        .get(p..p + len)
                        .is_some_and(|s| s.iter().all(|&b| b == b' ')) =>
                {
                    false
                }
                _ => return None,
            };
            if col > 0 {
                let need = col + len + unit.len();
                if broke {
                    fit.1 = fit.1.min(need - 1);
                } else {
                    fit.0 = fit.0.max(need);
                }
                if numbered(unit) {
                    if broke {
                        fill.1 = fill.1.min(col);
                    } else {
                        fill.0 = fill.0.max(col + 1);
                    }
                } else if broke {
                    fill_ok = false;
                }
            } else if broke {
                return None;
            }
            if broke {
                p += 1;
                col = 0;
            } else {
                p += len;
                col += len;
            }
        }
        if original.get(p..p + unit.len()) != Some(&unit[..]) {
            return None;
        }
        p += unit.len();
        col = column_after(col, unit);
    }
    if p != original.len() {
        return None;
    }
    let range = |r: (usize, usize)| (r.0 <= r.1).then_some(r);
    Some((range(fit), range(fill).filter(|_| fill_ok)))
}

/// The width to write in a `range`: the previous game's where it fits,
/// else a common one, else the range's least.
fn pick(range: (usize, usize), previous: Option<u32>) -> u32 {
    let inside = |w: usize| range.0 <= w && w <= range.1;
    let w = previous
        .map(|w| w as usize)
        .filter(|&w| inside(w))
        .or_else(|| {
            [79, 80, 72, 78, 75, 70, 100, 255]
                .into_iter()
                .find(|&w| inside(w))
        })
        .unwrap_or(range.0);
    u32::try_from(w.min(u32::MAX as usize)).unwrap_or(u32::MAX)
}

/// `text` with CR LF line ends where `crlf` (see [`super::to_crlf`]).
fn line_ends(text: Vec<u8>, crlf: bool) -> Vec<u8> {
    if crlf { super::to_crlf(&text) } else { text }
}

impl Patch {
    /// The patch from `from` to `to`: the common start and end kept, a byte
    /// diff (Myers) of what lies between.
    fn between(from: &[u8], to: &[u8]) -> Patch {
        if from == to {
            return Patch::default();
        }
        let prefix = from.iter().zip(to).take_while(|(a, b)| a == b).count();
        let suffix = from[prefix..]
            .iter()
            .rev()
            .zip(to[prefix..].iter().rev())
            .take_while(|(a, b)| a == b)
            .count();
        let (a, b) = (
            &from[prefix..from.len() - suffix],
            &to[prefix..to.len() - suffix],
        );
        let mut hunks: Vec<Hunk> = Vec::new();
        // Position in `from` after the last hunk.
        let mut at = 0usize;
        let mut push = |hunks: &mut Vec<Hunk>, pos: usize, del: usize, ins: &[u8]| {
            let pos = prefix + pos;
            match hunks.last_mut() {
                Some(h) if pos == at => {
                    h.del += del;
                    h.ins.extend_from_slice(ins);
                }
                _ => hunks.push(Hunk {
                    keep: pos - at,
                    del,
                    ins: ins.to_vec(),
                }),
            }
            at = pos + del;
        };
        // Long middles are diffed as one replacement: Myers' cost grows
        // with their length times the edits.
        if a.len().saturating_mul(b.len()) > 1 << 26 {
            push(&mut hunks, 0, a.len(), b);
            return Patch { hunks };
        }
        for op in similar::capture_diff_slices(similar::Algorithm::Myers, a, b) {
            match op {
                similar::DiffOp::Equal { .. } => {}
                similar::DiffOp::Delete {
                    old_index, old_len, ..
                } => push(&mut hunks, old_index, old_len, &[]),
                similar::DiffOp::Insert {
                    old_index,
                    new_index,
                    new_len,
                } => push(&mut hunks, old_index, 0, &b[new_index..new_index + new_len]),
                similar::DiffOp::Replace {
                    old_index,
                    old_len,
                    new_index,
                    new_len,
                } => push(
                    &mut hunks,
                    old_index,
                    old_len,
                    &b[new_index..new_index + new_len],
                ),
            }
        }
        Patch { hunks }
    }

    /// `text` patched; an error where the patch does not fit it.
    fn apply(&self, text: Vec<u8>) -> Result<Vec<u8>, String> {
        if self.hunks.is_empty() {
            return Ok(text);
        }
        let mut out = Vec::with_capacity(text.len() + 64);
        let mut at = 0usize;
        for h in &self.hunks {
            let kept = at
                .checked_add(h.keep)
                .filter(|&k| k <= text.len())
                .ok_or("layout patch past the text")?;
            let end = kept
                .checked_add(h.del)
                .filter(|&e| e <= text.len())
                .ok_or("layout patch past the text")?;
            out.extend_from_slice(&text[at..kept]);
            out.extend_from_slice(&h.ins);
            at = end;
        }
        out.extend_from_slice(&text[at..]);
        Ok(out)
    }
}

/// The layout that gives `original` back from `canonical` (the game's
/// canonical text with line feeds alone, as [`crate::pgn::strict::write`]
/// gives it), with CR LF line ends where `crlf`; `previous` is the style of
/// the block's game before, tried first. Every layout it gives is checked
/// to give `original` back; `None` where the patch does not (a fault in the
/// diff), and the writer then stores the game verbatim.
pub(crate) fn find(
    canonical: &[u8],
    original: &[u8],
    crlf: bool,
    previous: &Style,
) -> Option<Layout> {
    let check = |style: &Style| line_ends(styled(canonical, style), crlf) == original;
    let plain = |style: Style| {
        Some(Layout {
            style,
            patch: Patch::default(),
        })
    };
    let canonical_is_original = if crlf {
        super::to_crlf(canonical) == original
    } else {
        canonical == original
    };
    if canonical_is_original {
        // The previous game's style where it gives the same text: a file's
        // records stay the same bytes (a short game that no wrap breaks,
        // a game without numbers to glue).
        if *previous != Style::default() && check(previous) {
            return plain(previous.clone());
        }
        return Some(Layout::default());
    }
    let lf = without_cr(original, crlf);
    let ws = super::trailing_whitespace(&lf);
    let body = &lf[..lf.len() - ws];
    let canonical_ws = super::trailing_whitespace(canonical);
    let canonical_body = &canonical[..canonical.len() - canonical_ws];
    let trailer = (lf[lf.len() - ws..] != canonical[canonical_body.len()..])
        .then(|| lf[lf.len() - ws..].to_vec());
    let result_sep = result_separator(body, canonical_body);
    // The previous game's style first: files keep one.
    let style = Style {
        result_sep: result_sep.clone(),
        trailer: trailer.clone(),
        ..previous.clone()
    };
    if check(&style) {
        return plain(style);
    }
    // The movetext outside comments tells numbers and glyphs.
    let start = movetext_start(canonical);
    let movetext = body
        .get(start..)
        .filter(|_| body.get(..start) == canonical.get(..start));
    let canonical_movetext = &canonical_body[start.min(canonical_body.len())..];
    let mut style = Style {
        result_sep,
        trailer,
        ..told_style(
            canonical_movetext,
            movetext,
            movetext.unwrap_or(&body[body.len().min(start)..]),
        )
    };
    // Lines that end with a space (`e5 \n`): the wrap is told without it.
    let unspaced = movetext.and_then(unspaced);
    style.space_at_break = unspaced.is_some();
    if let Some(movetext) = unspaced.as_deref().or(movetext)
        && let Some(found) = wrapped(canonical_movetext, movetext, &style, previous, &check)
    {
        return plain(found);
    }
    let best = line_ends(styled(canonical, &style), crlf);
    let patch = Patch::between(&best, original);
    (patch.apply(best).as_deref() == Ok(original)).then_some(Layout { style, patch })
}

/// `text` without the CR of its CR LF line ends, where `crlf`.
fn without_cr(text: &[u8], crlf: bool) -> std::borrow::Cow<'_, [u8]> {
    if !crlf {
        return text.into();
    }
    text.iter()
        .enumerate()
        .filter(|&(i, &b)| !(b == b'\r' && text.get(i + 1) == Some(&b'\n')))
        .map(|(_, &b)| b)
        .collect::<Vec<u8>>()
        .into()
}

/// The white space before the result of `body` where it is not the
/// canonical text's (`canonical_body`), the game ends with a result and a
/// token comes before it.
fn result_separator(body: &[u8], canonical_body: &[u8]) -> Option<Vec<u8>> {
    OUTCOMES.iter().find_map(|o| {
        let o = o.as_bytes();
        let before = body.strip_suffix(o)?;
        let c_before = canonical_body.strip_suffix(o)?;
        let sep = &before[before.len() - super::trailing_whitespace(before)..];
        let c_sep = &c_before[c_before.len() - super::trailing_whitespace(c_before)..];
        // A line feed where the canonical text has a space is a wrap's.
        let wrapped = sep == b"\n" && c_sep == b" ";
        (sep != c_sep
            && !wrapped
            && !sep.is_empty()
            && before.len() > sep.len()
            && !c_sep.is_empty())
        .then(|| sep.to_vec())
    })
}

/// The style that a movetext's numbers, glyphs and mates tell, against the
/// canonical text's (`movetext`: the input's movetext where its tags are
/// the canonical ones; `read`: the bytes to read them from), without a
/// wrap.
fn told_style(canonical_movetext: &[u8], movetext: Option<&[u8]>, read: &[u8]) -> Style {
    let (mut depth, mut prev) = (0usize, b' ');
    let (mut compact, mut glyphs, mut black_numbers, mut mates) = (false, false, 0usize, 0usize);
    for &b in read {
        match b {
            b'{' => depth += 1,
            b'}' => depth = depth.saturating_sub(1),
            b'!' | b'?' if depth == 0 => glyphs = true,
            b'.' if depth == 0 && prev == b'.' => black_numbers += 1,
            b'#' if depth == 0 => mates += 1,
            c if depth == 0 && prev == b'.' && c.is_ascii_alphabetic() => compact = true,
            _ => {}
        }
        prev = b;
    }
    let canonical_black = canonical_movetext.windows(2).filter(|w| w == b"..").count();
    // `#` outside comments.
    let canonical_mates = canonical_movetext
        .iter()
        .scan(0usize, |depth, &b| {
            match b {
                b'{' => *depth += 1,
                b'}' => *depth = depth.saturating_sub(1),
                _ => {}
            }
            Some(b == b'#' && *depth == 0)
        })
        .filter(|&m| m)
        .count();
    Style {
        wrap: Wrap::None,
        compact,
        glyphs,
        number_kept: false,
        comment_kept: false,
        no_black_numbers: black_numbers < canonical_black,
        mate_as_check: mates < canonical_mates,
        space_at_break: false,
        // A game from a FEN whose numbers start at 1 in the input.
        numbers_from_one: first_number(canonical_movetext).is_some_and(|n| n > 1)
            && movetext.and_then(first_number) == Some(1),
        result_sep: None,
        trailer: None,
    }
}

/// `movetext` without the space at the end of each of its lines, where
/// every line but the last ends with one.
fn unspaced(movetext: &[u8]) -> Option<Vec<u8>> {
    let breaks = movetext.iter().filter(|&&b| b == b'\n').count();
    if breaks == 0 || movetext.windows(2).filter(|w| *w == b" \n").count() != breaks {
        return None;
    }
    let mut out = Vec::with_capacity(movetext.len());
    for (i, &b) in movetext.iter().enumerate() {
        if !(b == b' ' && movetext.get(i + 1) == Some(&b'\n')) {
            out.push(b);
        }
    }
    Some(out)
}

/// The first of `style` with a wrap (or none) and a way of breaking
/// numbers and comments that `check` finds gives the text back, from the
/// widths that `movetext`'s lines tell; `previous`'s first.
fn wrapped(
    canonical_movetext: &[u8],
    movetext: &[u8],
    style: &Style,
    previous: &Style,
    check: &dyn Fn(&Style) -> bool,
) -> Option<Style> {
    let mut kinds = vec![(false, false), (true, false), (false, true), (true, true)];
    kinds.sort_by_key(|&k| k != (previous.number_kept, previous.comment_kept));
    let broken = movetext.contains(&b'\n');
    let (prev_fit, prev_fill) = match previous.wrap {
        Wrap::Fit(w) => (Some(w), None),
        Wrap::Fill(t) => (None, Some(t)),
        Wrap::None => (None, None),
    };
    for (number_kept, comment_kept) in kinds {
        let candidate = Style {
            number_kept,
            comment_kept,
            ..style.clone()
        };
        let Some((fit, fill)) = widths(&units(canonical_movetext, &candidate), movetext) else {
            continue;
        };
        let mut wraps = Vec::new();
        if !broken && previous.wrap == Wrap::None {
            wraps.push(Wrap::None);
        }
        let fill = fill.map(|r| Wrap::Fill(pick(r, prev_fill)));
        let fit = fit.map(|r| Wrap::Fit(pick(r, prev_fit)));
        if prev_fill.is_some() {
            wraps.extend(fill.into_iter().chain(fit));
        } else {
            wraps.extend(fit.into_iter().chain(fill));
        }
        if !broken {
            wraps.push(Wrap::None);
        }
        for wrap in wraps {
            let c = Style {
                wrap,
                ..candidate.clone()
            };
            if check(&c) {
                return Some(c);
            }
        }
    }
    None
}

impl Layout {
    /// The text of the game whose canonical text (line feeds alone) is
    /// `canonical`, with CR LF line ends where `crlf`.
    pub(crate) fn apply(&self, canonical: &[u8], crlf: bool) -> Result<Vec<u8>, String> {
        let text = if self.style == Style::default() {
            canonical.to_vec()
        } else {
            styled(canonical, &self.style)
        };
        self.patch.apply(line_ends(text, crlf))
    }

    /// Appends the layout's record to `out`.
    pub(crate) fn encode(&self, out: &mut Vec<u8>) {
        let s = &self.style;
        let flag = |on: bool, f: u64| if on { f } else { 0 };
        let flags = flag(s.wrap != Wrap::None, WRAP)
            | flag(matches!(s.wrap, Wrap::Fill(_)), FILL)
            | flag(s.compact, COMPACT)
            | flag(s.glyphs, GLYPHS)
            | flag(s.number_kept, NUMBER_KEPT)
            | flag(s.comment_kept, COMMENT_KEPT)
            | flag(s.no_black_numbers, NO_BLACK_NUMBERS)
            | flag(s.mate_as_check, MATE_AS_CHECK)
            | flag(s.space_at_break, SPACE_AT_BREAK)
            | flag(s.numbers_from_one, NUMBERS_FROM_ONE)
            | flag(s.result_sep.is_some(), RESULT_SEP)
            | flag(s.trailer.is_some(), TRAILER)
            | flag(!self.patch.hunks.is_empty(), PATCH);
        put_varint(out, flags);
        if let Wrap::Fit(w) | Wrap::Fill(w) = s.wrap {
            put_varint(out, u64::from(w));
        }
        for bytes in [&s.result_sep, &s.trailer].into_iter().flatten() {
            put_varint(out, bytes.len() as u64);
            out.extend_from_slice(bytes);
        }
        if !self.patch.hunks.is_empty() {
            put_varint(out, self.patch.hunks.len() as u64);
            for h in &self.patch.hunks {
                put_varint(out, h.keep as u64);
                put_varint(out, h.del as u64);
                put_varint(out, h.ins.len() as u64);
                out.extend_from_slice(&h.ins);
            }
        }
    }

    /// Reads a layout's record from the front of `data`.
    pub(crate) fn decode(data: &mut &[u8]) -> Result<Layout, String> {
        let flags = get_varint(data)?;
        if flags & !FLAGS != 0 || (flags & FILL != 0 && flags & WRAP == 0) {
            return Err(format!("unknown layout flags {flags}"));
        }
        let len = |data: &mut &[u8]| -> Result<usize, String> {
            let v = get_varint(data)?;
            if v > MAX_LEN {
                return Err("implausible layout length".into());
            }
            Ok(v as usize)
        };
        let bytes = |data: &mut &[u8], n: usize| -> Result<Vec<u8>, String> {
            let (b, rest) = data.split_at_checked(n).ok_or("layout column ends early")?;
            *data = rest;
            Ok(b.to_vec())
        };
        let on = |f: u64| flags & f != 0;
        let mut style = Style {
            compact: on(COMPACT),
            glyphs: on(GLYPHS),
            number_kept: on(NUMBER_KEPT),
            comment_kept: on(COMMENT_KEPT),
            no_black_numbers: on(NO_BLACK_NUMBERS),
            mate_as_check: on(MATE_AS_CHECK),
            space_at_break: on(SPACE_AT_BREAK),
            numbers_from_one: on(NUMBERS_FROM_ONE),
            ..Style::default()
        };
        if on(WRAP) {
            let w = u32::try_from(len(data)?).map_err(|_| "implausible width")?;
            style.wrap = if on(FILL) {
                Wrap::Fill(w)
            } else {
                Wrap::Fit(w)
            };
        }
        if on(RESULT_SEP) {
            let n = len(data)?;
            style.result_sep = Some(bytes(data, n)?);
        }
        if on(TRAILER) {
            let n = len(data)?;
            style.trailer = Some(bytes(data, n)?);
        }
        let mut patch = Patch::default();
        if on(PATCH) {
            let count = len(data)?;
            if count > data.len() {
                return Err("layout column ends early".into());
            }
            for _ in 0..count {
                let keep = len(data)?;
                let del = len(data)?;
                let n = len(data)?;
                let ins = bytes(data, n)?;
                patch.hunks.push(Hunk { keep, del, ins });
            }
        }
        Ok(Layout { style, patch })
    }

    /// Whether the game's text is its canonical text.
    /// Whether the style wraps the movetext.
    pub(crate) fn wraps(&self) -> bool {
        self.style.wrap != Wrap::None
    }

    /// Whether a patch follows the style.
    pub(crate) fn patched(&self) -> bool {
        !self.patch.hunks.is_empty()
    }

    #[cfg(test)]
    pub(crate) fn is_canonical(&self) -> bool {
        *self == Layout::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(canonical: &str, original: &str) -> Layout {
        let crlf = super::super::is_crlf(original.as_bytes());
        let layout = find(
            canonical.as_bytes(),
            original.as_bytes(),
            crlf,
            &Style::default(),
        )
        .unwrap();
        let mut record = Vec::new();
        layout.encode(&mut record);
        let mut r = record.as_slice();
        let back = Layout::decode(&mut r).unwrap();
        assert!(r.is_empty());
        assert_eq!(back, layout);
        assert_eq!(
            String::from_utf8(back.apply(canonical.as_bytes(), crlf).unwrap()).unwrap(),
            original
        );
        layout
    }

    #[test]
    fn styles_predict_common_layouts() {
        let c = "[A \"b\"]\n\n1. e4 e5 2. Nf3 $6 Nc6 3. Bb5 a6 1-0\n\n";
        // Canonical: the single zero byte.
        assert!(round_trip(c, c).is_canonical());
        let compact = round_trip(c, "[A \"b\"]\n\n1.e4 e5 2.Nf3 $6 Nc6 3.Bb5 a6 1-0\n\n");
        assert!(compact.style.compact && compact.patch.hunks.is_empty());
        let glyphs = round_trip(c, "[A \"b\"]\n\n1. e4 e5 2. Nf3?! Nc6 3. Bb5 a6 1-0\n\n");
        assert!(glyphs.style.glyphs && glyphs.patch.hunks.is_empty());
        // (The result on a line of its own is the canonical text's, as the
        // reader finds it.)
        let on_its_line = "[A \"b\"]\n\n1. e4 e5 2. Nf3 $6 Nc6 3. Bb5 a6\n1-0\n\n";
        let wrapped = round_trip(
            on_its_line,
            "[A \"b\"]\n\n1. e4 e5 2. Nf3 $6\nNc6 3. Bb5 a6\n1-0\n\n",
        );
        assert_eq!(wrapped.style.wrap, Wrap::Fit(18));
        assert!(wrapped.patch.hunks.is_empty());
        let sep = round_trip(c, "[A \"b\"]\n\n1.e4 e5 2.Nf3 $6 Nc6 3.Bb5 a6  1-0\n\n\n");
        assert_eq!(sep.style.result_sep.as_deref(), Some(&b"  "[..]));
        assert_eq!(sep.style.trailer.as_deref(), Some(&b"\n\n\n"[..]));
        assert!(sep.patch.hunks.is_empty());
        let crlf = round_trip(
            c,
            "[A \"b\"]\r\n\r\n1.e4 e5 2.Nf3 $6 Nc6\r\n3.Bb5 a6 1-0\r\n\r\n",
        );
        assert!(crlf.patch.hunks.is_empty());
        // Numbers on their moves' lines, breaks before numbers once a
        // line is full, comments on their moves' lines, mates as checks,
        // black numbers not repeated.
        let c = "1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 4. Ba4 Nf6 *\n\n";
        let kept = round_trip(c, "1. e4 e5 2. Nf3 Nc6 3.\nBb5 a6 4. Ba4 Nf6 *\n\n");
        assert_eq!(kept.style.wrap, Wrap::Fit(22));
        let c2 = "1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 4. Ba4 Nf6 5. O-O Be7 *\n\n";
        let kept = round_trip(
            c2,
            "1. e4 e5 2. Nf3\nNc6 3. Bb5 a6\n4. Ba4 Nf6\n5. O-O Be7 *\n\n",
        );
        assert!(kept.style.number_kept && kept.patch.hunks.is_empty());
        let fill = round_trip(c, "1.e4 e5 2.Nf3\nNc6 3.Bb5 a6\n4.Ba4 Nf6 *\n\n");
        assert!(fill.patch.hunks.is_empty());
        let fill = round_trip(c, "1.e4 e5 2.Nf3 Nc6\n3.Bb5 a6\n4.Ba4 Nf6 *\n\n");
        assert_eq!(fill.style.wrap, Wrap::Fill(8));
        let c =
            "1. e4 { a long comment } 1... e5 { another } 2. Qh5 Nc6 3. Bc4 Nf6 4. Qxf7# 1-0\n\n";
        let engine = round_trip(
            c,
            "1. e4 { a long comment } e5 { another }\n2. Qh5 Nc6 3. Bc4 Nf6 4. Qxf7+ 1-0\n\n",
        );
        let s = &engine.style;
        assert!(s.no_black_numbers && s.mate_as_check && engine.patch.hunks.is_empty());
        // Anything else is patched.
        round_trip(c, "[A  \"b\"]\n\t1. e4 e5 2. Nf3 $6 Nc6 3. Bb5 a6 1-0");
        round_trip(c, " 1...e4 { x }");
        round_trip("1. e4 *\n\n", "");
    }

    #[test]
    fn damaged_records_are_errors() {
        let layout = find(b"1. e4 *\n\n", b"1.e4  *\n", false, &Style::default()).unwrap();
        let mut record = Vec::new();
        layout.encode(&mut record);
        for cut in 0..record.len() {
            let mut r = &record[..cut];
            assert!(Layout::decode(&mut r).is_err(), "{cut}");
        }
        let mut bad = &[0xffu8, 0x7f][..];
        assert!(Layout::decode(&mut bad).is_err());
        // A patch past the text.
        let far = Layout {
            style: Style::default(),
            patch: Patch {
                hunks: vec![Hunk {
                    keep: 100,
                    del: 1,
                    ins: vec![],
                }],
            },
        };
        assert!(far.apply(b"1. e4 *\n\n", false).is_err());
    }
}
