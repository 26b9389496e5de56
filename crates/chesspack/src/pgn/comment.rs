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
        let s = std::str::from_utf8(&r[..end]).ok()?;
        let mut parts = s.split(':');
        let (h, m, sec) = (parts.next()?, parts.next()?, parts.next()?);
        let h: u32 = h.parse().ok()?;
        let m: u32 = m.parse().ok()?;
        let sec: u32 = sec.parse().ok()?;
        if m >= 60 || sec >= 60 || h >= 1000 {
            return None;
        }
        clock = Some(h * 3600 + m * 60 + sec);
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
/// lichess `[%clk H:MM:SS]` comment, alone or after an eval), in seconds:
/// the readings that make a game's clock context.
pub(crate) fn clock_of_comment(c: &[u8]) -> Option<u32> {
    parse_annotation(c).and_then(|a| a.clock)
}

/// The reading of the first `[%clk H:MM:SS]` or `[%clk H:MM:SS.f]` command
/// in a comment (the bytes between its braces), in milliseconds: what a
/// clock column holds. Lenient, as people write it: spaces after `%clk`,
/// any number of `:` parts, up to three decimals.
///
/// ```
/// use chesspack::pgn::clock_millis;
///
/// assert_eq!(clock_millis(b" [%clk 0:03:00] "), Some(180_000));
/// assert_eq!(clock_millis(b"[%eval 0.3] [%clk 1:00:02.5]"), Some(3_602_500));
/// assert_eq!(clock_millis(b" a comment "), None);
/// assert_eq!(clock_millis(b"[%clk 0:00:01.2.3]"), None);
/// ```
pub fn clock_millis(comment: &[u8]) -> Option<u64> {
    let at = comment.windows(5).position(|w| w == b"%clk ")?;
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
