//! The commands of PGN comments: lichess's clock and evaluation comments,
//! split into their numbers and written back byte for byte (what archives
//! code as numbers), and a lenient `%clk` reading for clock columns.

/// A lichess clock or eval comment, split into its numbers.
#[derive(Debug, PartialEq)]
pub(crate) struct Annotation<'a> {
    pub(crate) eval: Option<&'a [u8]>,
    pub(crate) clock: Option<u32>,
}

fn format_clock(seconds: u32, out: &mut Vec<u8>) {
    use std::io::Write as _;
    let _ = write!(
        out,
        "[%clk {}:{:02}:{:02}]",
        seconds / 3600,
        seconds / 60 % 60,
        seconds % 60
    );
}

pub(crate) fn format_annotation(eval: Option<&[u8]>, clock: Option<u32>, out: &mut Vec<u8>) {
    out.push(b' ');
    if let Some(e) = eval {
        out.extend_from_slice(b"[%eval ");
        out.extend_from_slice(e);
        out.extend_from_slice(b"] ");
    }
    if let Some(c) = clock {
        format_clock(c, out);
        out.push(b' ');
    }
}

/// Splits ` [%eval E] [%clk H:MM:SS] ` (either part optional, exactly as
/// lichess writes it); `None` for any other comment.
pub(crate) fn parse_annotation(c: &[u8]) -> Option<Annotation<'_>> {
    let mut rest = c.strip_prefix(b" ")?;
    let mut eval = None;
    if let Some(r) = rest.strip_prefix(b"[%eval ") {
        let end = r.iter().position(|&b| b == b']')?;
        let e = &r[..end];
        if e.is_empty() || !e.iter().all(|b| b.is_ascii_graphic()) {
            return None;
        }
        eval = Some(e);
        rest = r[end + 1..].strip_prefix(b" ")?;
    }
    let mut clock = None;
    if let Some(r) = rest.strip_prefix(b"[%clk ") {
        let end = r.iter().position(|&b| b == b']')?;
        clock = Some(hms_seconds(&r[..end])?);
        rest = r[end + 1..].strip_prefix(b" ")?;
    }
    if !rest.is_empty() || (eval.is_none() && clock.is_none()) {
        return None;
    }
    // Only what formats back to the same bytes.
    let mut again = Vec::with_capacity(c.len());
    format_annotation(eval, clock, &mut again);
    (again == c).then_some(Annotation { eval, clock })
}

/// The clock reading of a comment that archives store as a clock (a
/// lichess `[%clk H:MM:SS]` comment, alone or after an eval, or a
/// chess.com one), in seconds: the readings that make a game's clock
/// context.
pub(crate) fn clock_of_comment(c: &[u8]) -> Option<u32> {
    parse_annotation(c)
        .and_then(|a| a.clock)
        .or_else(|| parse_compact_clock(c).map(|(s, _)| s))
}

/// Splits a clock comment as chess.com writes it, `[%clk H:MM:SS]` or
/// `[%clk H:MM:SS.d]` with nothing around it, into its seconds and its
/// tenth (where written); `None` for any other comment, or one that would
/// not be written back the same.
pub(crate) fn parse_compact_clock(c: &[u8]) -> Option<(u32, Option<u8>)> {
    let r = c.strip_prefix(b"[%clk ")?.strip_suffix(b"]")?;
    let (hms, tenth) = match r {
        [hms @ .., b'.', d] if d.is_ascii_digit() => (hms, Some(d - b'0')),
        _ => (r, None),
    };
    let seconds = hms_seconds(hms)?;
    let mut again = Vec::with_capacity(c.len());
    format_compact_clock(seconds, tenth, &mut again);
    (again == c).then_some((seconds, tenth))
}

/// The seconds of a clock's `H:MM:SS` (fewer than 1000 hours); `None` for
/// any other text.
fn hms_seconds(hms: &[u8]) -> Option<u32> {
    let s = std::str::from_utf8(hms).ok()?;
    let mut parts = s.split(':');
    let (h, m, sec) = (parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some() {
        return None;
    }
    let (h, m, sec): (u32, u32, u32) = (h.parse().ok()?, m.parse().ok()?, sec.parse().ok()?);
    (m < 60 && sec < 60 && h < 1000).then_some(h * 3600 + m * 60 + sec)
}

/// Writes a chess.com clock comment ([`parse_compact_clock`]).
pub(crate) fn format_compact_clock(seconds: u32, tenth: Option<u8>, out: &mut Vec<u8>) {
    format_clock(seconds, out);
    if let Some(t) = tenth {
        out.pop();
        out.extend_from_slice(&[b'.', b'0' + t, b']']);
    }
}

/// The reading of the first `[%clk H:MM:SS]` or `[%clk H:MM:SS.f]` command
/// in a comment (the bytes between its braces), in milliseconds: what a
/// clock column holds. Lenient, as people write it: any whitespace after
/// `%clk`, line ends included (as python-chess reads it), any number of
/// `:` parts, up to three decimals. (The rows of an archive give these
/// readings as their `clocks` column.)
pub(crate) fn clock_millis(comment: &[u8]) -> Option<u64> {
    let at = comment
        .windows(5)
        .position(|w| w.starts_with(b"%clk") && w[4].is_ascii_whitespace())?;
    let rest = &comment[at + 5..];
    let rest = &rest[rest.iter().position(|b| !b.is_ascii_whitespace())?..];
    let end = rest
        .iter()
        .position(|&b| !(b.is_ascii_digit() || b == b':' || b == b'.'))
        .unwrap_or(rest.len());
    let text = std::str::from_utf8(&rest[..end]).ok()?;
    let (hms, frac) = text.split_once('.').unwrap_or((text, ""));
    let mut secs: u64 = 0;
    for part in hms.split(':') {
        secs = secs.checked_mul(60)?.checked_add(part.parse().ok()?)?;
    }
    let mut ms = 0u64;
    let mut scale = 100;
    for d in frac.bytes().take(3) {
        // A second `.` is no reading.
        ms += u64::from(d.checked_sub(b'0').filter(|d| *d <= 9)?) * scale;
        scale /= 10;
    }
    secs.checked_mul(1000)?.checked_add(ms)
}

/// An engine evaluation as lichess writes it: centipawns (`0.17`, `-1.0`)
/// or mate in n (`#3`, `#-2`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ExactEval {
    Centipawns(i64),
    Mate(i64),
}

/// Writes `e` as lichess does ([`parse_eval`] reads it back).
pub(crate) fn format_eval(e: ExactEval, out: &mut Vec<u8>) {
    use std::io::Write as _;
    match e {
        ExactEval::Mate(n) => {
            let _ = write!(out, "#{n}");
        }
        ExactEval::Centipawns(cp) => {
            let sign = if cp < 0 { "-" } else { "" };
            let a = cp.unsigned_abs();
            let (int, frac) = (a / 100, a % 100);
            let _ = if frac % 10 == 0 {
                write!(out, "{sign}{int}.{}", frac / 10)
            } else {
                write!(out, "{sign}{int}.{frac:02}")
            };
        }
    }
}

/// The evaluation `text` stands for, if it formats back to the same bytes.
pub(crate) fn parse_eval(text: &[u8]) -> Option<ExactEval> {
    let s = std::str::from_utf8(text).ok()?;
    let e = if let Some(m) = s.strip_prefix('#') {
        ExactEval::Mate(
            m.parse()
                .ok()
                .filter(|n: &i64| n.unsigned_abs() < 1 << 20)?,
        )
    } else {
        let (neg, body) = match s.strip_prefix('-') {
            Some(b) => (true, b),
            None => (false, s),
        };
        let (int, frac) = body.split_once('.')?;
        let int: i64 = int.parse().ok().filter(|&i| i < 1 << 30)?;
        let frac_v: i64 = match frac.len() {
            1 => frac.parse::<i64>().ok()? * 10,
            2 => frac.parse().ok()?,
            _ => return None,
        };
        let cp = int * 100 + frac_v;
        ExactEval::Centipawns(if neg { -cp } else { cp })
    };
    let mut again = Vec::new();
    format_eval(e, &mut again);
    (again == text).then_some(e)
}

/// An engine evaluation from a `[%eval …]` command: White's view, as
/// lichess and python-chess write it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Eval {
    /// A score in centipawns (`[%eval 0.29]` is 29).
    Centipawns(i32),
    /// Mate in this many moves (`[%eval #-3]` is -3: Black mates; 0: the
    /// side to move is mated).
    Mate(i32),
}

/// The first valid `[%eval …]` command of a comment, read as python-chess
/// reads it: `[%eval` and one whitespace, then `#` and a signed number of
/// moves, or a signed number of pawns with at most ten digits before the
/// point and one or two after, then an optional `,depth`, then `]`.
/// Centipawns are exact (no floating point): `0.29` is 29, `1.5` is 150.
///
/// (Examples: `mod examples` below.)
pub(crate) fn eval_of_comment(comment: &[u8]) -> Option<Eval> {
    let mut from = 0;
    while let Some(at) = comment[from..].windows(6).position(|w| w == b"[%eval") {
        let start = from + at + 6;
        if let Some(e) = eval_at(&comment[start..]) {
            return Some(e);
        }
        from = start;
    }
    None
}

/// The evaluation that `rest` (the bytes after `[%eval`) spells, if it is
/// a valid one.
fn eval_at(rest: &[u8]) -> Option<Eval> {
    let (&space, rest) = rest.split_first()?;
    if !space.is_ascii_whitespace() && space != 0x0b {
        return None;
    }
    let digits = |s: &[u8]| s.iter().take_while(|b| b.is_ascii_digit()).count();
    let (eval, rest) = if let Some(r) = rest.strip_prefix(b"#") {
        let (negative, r) = sign(r);
        let n = digits(r);
        if n == 0 {
            return None;
        }
        let moves: i32 = std::str::from_utf8(&r[..n]).ok()?.parse().ok()?;
        (Eval::Mate(if negative { -moves } else { moves }), &r[n..])
    } else {
        let (negative, r) = sign(rest);
        let whole = digits(r);
        let (frac, used) = match r.get(whole) {
            Some(b'.') => {
                let f = digits(&r[whole + 1..]);
                if whole > 10 || (f == 0 && whole == 0) || (f > 2 && whole == 0) {
                    return None;
                }
                // `\d{1,10}\.` alone where more than two decimals follow.
                let f = if f > 2 { 0 } else { f };
                (&r[whole + 1..whole + 1 + f], whole + 1 + f)
            }
            _ => {
                if whole == 0 || whole > 10 {
                    return None;
                }
                (&r[..0], whole)
            }
        };
        let mut cp: i64 = std::str::from_utf8(&r[..whole]).ok()?.parse().unwrap_or(0) * 100;
        for (i, d) in frac.iter().enumerate() {
            cp += i64::from(d - b'0') * if i == 0 { 10 } else { 1 };
        }
        let cp = i32::try_from(if negative { -cp } else { cp }).ok()?;
        (Eval::Centipawns(cp), &r[used..])
    };
    let rest = match rest.strip_prefix(b",") {
        Some(r) => {
            let n = digits(r);
            if n == 0 {
                return None;
            }
            &r[n..]
        }
        None => rest,
    };
    rest.starts_with(b"]").then_some(eval)
}

/// A leading `+` or `-`: whether it is `-`, and the rest.
fn sign(s: &[u8]) -> (bool, &[u8]) {
    match s.first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    }
}

#[cfg(test)]
mod examples {
    use super::*;

    #[test]
    fn clock_millis_reads_the_first_clock() {
        assert_eq!(clock_millis(b" [%clk 0:03:00] "), Some(180_000));
        assert_eq!(
            clock_millis(b"[%eval 0.3] [%clk 1:00:02.5]"),
            Some(3_602_500)
        );
        assert_eq!(clock_millis(b"[%clk\n1:30:52]"), Some(5_452_000));
        assert_eq!(clock_millis(b" a comment "), None);
        assert_eq!(clock_millis(b"[%clk 0:00:01.2.3]"), None);
    }

    #[test]
    fn eval_of_comment_reads_the_first_eval() {
        assert_eq!(
            eval_of_comment(b" [%eval 0.29] [%clk 0:03:00] "),
            Some(Eval::Centipawns(29))
        );
        assert_eq!(
            eval_of_comment(b"[%eval -1.5,20]"),
            Some(Eval::Centipawns(-150))
        );
        assert_eq!(eval_of_comment(b"[%eval #-3]"), Some(Eval::Mate(-3)));
        assert_eq!(
            eval_of_comment(b"[%eval 0.123] [%eval 7]"),
            Some(Eval::Centipawns(700))
        );
        assert_eq!(eval_of_comment(b"good move"), None);
    }
}
