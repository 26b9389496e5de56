//! Cutting PGN text into the byte ranges of single games.
//!
//! A game is its tag lines, then its movetext lines up to a blank line or a
//! tag line (outside a `{ }` comment), then the blank lines after it. Tag
//! lines after a blank line that ends tag lines with no movetext start the
//! next game: a game may be tags alone (issue 44). A blank line inside
//! movetext that has no result yet, followed by more movetext that is not
//! a new game's first move (`1.` after moves), does not end the game:
//! Crafty writes its analysis so (issue 44). The cut
//! is made on raw bytes, before any parsing, so that a game that cannot be
//! parsed can be stored exactly as it was.

use std::io::{BufRead, Read};

/// The largest game text kept in one piece. Longer text (a file with no
/// blank lines, say) is cut into pieces of this size, which are stored
/// verbatim and come back concatenated.
pub(crate) const MAX_CHUNK: usize = 8 << 20;

/// The text of one game as it was in the input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Chunk {
    /// 1-based number of the game in its input.
    pub number: u64,
    /// 1-based line of the input where the game starts.
    pub line: u64,
    /// The bytes, with the blank lines that follow the game.
    pub bytes: Vec<u8>,
    /// Whether the chunk is a piece of an over-long text (stored verbatim).
    pub cut: bool,
    /// Whether the chunk is a piece that goes on with the game of the chunk
    /// before it (which has the same [`Chunk::number`]).
    pub continues: bool,
    /// Whether the game's text goes on in the next chunk.
    pub more: bool,
    /// The bytes before the first game that belong to no game: a byte order
    /// mark and blank lines at the start of the input (at most
    /// `MAX_CHUNK` of them are kept). Empty for every other chunk.
    pub lead: Vec<u8>,
}

/// Reads [`Chunk`]s from PGN text.
///
/// Whitespace before the first game and a byte order mark at the start are
/// not part of any chunk: they are the first chunk's [`Chunk::lead`].
///
/// ```
/// use chesspack::pgn::ChunkReader;
///
/// let pgn = "[White \"a\"]\n\n1. e4 { two\n\nlines } e5 1-0\n\n\n[White \"b\"]\n1. d4 *\n";
/// let chunks: Vec<_> = ChunkReader::new(pgn.as_bytes()).collect::<Result<_, _>>().unwrap();
/// assert_eq!(chunks.len(), 2);
/// assert_eq!(chunks[0].bytes, b"[White \"a\"]\n\n1. e4 { two\n\nlines } e5 1-0\n\n\n");
/// assert_eq!((chunks[1].number, chunks[1].line), (2, 8));
///
/// let bom = ChunkReader::new(&b"\xef\xbb\xbf\n1. e4 *\n"[..]).next().unwrap().unwrap();
/// assert_eq!((&bom.lead[..], &bom.bytes[..]), (&b"\xef\xbb\xbf\n"[..], &b"1. e4 *\n"[..]));
/// ```
pub struct ChunkReader<R> {
    input: R,
    line: Vec<u8>,
    /// A line read but not yet placed in a chunk.
    pending: bool,
    line_number: u64,
    games: u64,
    started: bool,
    done: bool,
    /// Whether the previous chunk was cut, so this one is a piece too.
    cutting: bool,
    /// Whether the last line read ended with a line feed.
    line_complete: bool,
    /// The byte that ends a line: a line feed, or a carriage return where
    /// the input's first bytes (its first buffer) hold a CR and no LF (a
    /// file with CR line ends, as classic Mac OS wrote them).
    line_end: u8,
    /// The length of the last chunk: room for the next one (up to 64 KiB),
    /// which is most times about as long, so that its lines are not
    /// appended into a doubling series of buffers.
    last_len: usize,
    /// The bytes before the first game, until it is given out.
    lead: Vec<u8>,
}

impl<R: BufRead> ChunkReader<R> {
    /// Reads chunks from `input`.
    pub fn new(input: R) -> ChunkReader<R> {
        ChunkReader {
            input,
            line: Vec::new(),
            pending: false,
            line_number: 0,
            games: 0,
            started: false,
            done: false,
            cutting: false,
            line_complete: true,
            line_end: b'\n',
            last_len: 0,
            lead: Vec::new(),
        }
    }

    /// The bytes before the first game that no chunk has given out: once
    /// the reader is done, the whole of an input that holds no game (blank
    /// lines, a byte order mark), which the archive keeps as its lead.
    pub(crate) fn lead(&self) -> &[u8] {
        &self.lead
    }

    fn read_line(&mut self) -> std::io::Result<bool> {
        if self.pending {
            self.pending = false;
            return Ok(true);
        }
        self.line.clear();
        if !self.started {
            let first = self.input.fill_buf()?;
            if first.contains(&b'\r') && !first.contains(&b'\n') {
                self.line_end = b'\r';
            }
        }
        let n = Read::take(&mut self.input, MAX_CHUNK as u64)
            .read_until(self.line_end, &mut self.line)?;
        if n == 0 {
            return Ok(false);
        }
        if self.line_complete {
            self.line_number += 1;
        }
        self.line_complete = self.line.last() == Some(&self.line_end);
        if !self.started {
            self.started = true;
            if self.line.starts_with(b"\xef\xbb\xbf") {
                self.lead.extend(self.line.drain(..3));
            }
        }
        Ok(true)
    }
}

/// Whether a movetext line starts with a game's first move number (`1.`).
fn starts_a_game(line: &[u8]) -> bool {
    line.trim_ascii_start().starts_with(b"1.")
}

/// Whether the last token of a line is a result.
fn ends_with_result(line: &[u8]) -> bool {
    let last = line
        .trim_ascii_end()
        .rsplit(|b| b.is_ascii_whitespace())
        .next()
        .unwrap_or_default();
    super::strict::OUTCOMES.iter().any(|o| o.as_bytes() == last)
}

fn is_blank(line: &[u8]) -> bool {
    line.iter().all(u8::is_ascii_whitespace)
}

fn is_tag_line(line: &[u8]) -> bool {
    line.iter()
        .find(|b| !b.is_ascii_whitespace())
        .is_some_and(|&b| b == b'[')
}

/// Updates whether a `{ }` comment is open at the end of `line`. A `;`
/// comment runs to the end of the line and hides braces.
fn scan_comment(line: &[u8], mut open: bool) -> bool {
    for &b in line {
        match (open, b) {
            (true, b'}') => open = false,
            (false, b'{') => open = true,
            (false, b';') => return false,
            _ => {}
        }
    }
    open
}

impl<R: BufRead> Iterator for ChunkReader<R> {
    type Item = std::io::Result<Chunk>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let mut bytes = Vec::with_capacity((self.last_len + self.last_len / 4).min(1 << 16));
        let mut first_line = 0;
        let mut has_movetext = false;
        // A blank line after tag lines, before any movetext.
        let mut tags_ended = false;
        let mut ending = false;
        let mut in_comment = false;
        // Whether the last movetext line ended with a result token, and
        // whether a movetext line began with something other than a
        // comment (moves, most likely).
        let (mut result_seen, mut has_moves) = (false, false);
        loop {
            match self.read_line() {
                Ok(true) => {}
                Ok(false) => {
                    self.done = true;
                    break;
                }
                Err(e) => {
                    self.done = true;
                    return Some(Err(e));
                }
            }
            let line = &self.line;
            // Blank lines before the first game (a cut piece keeps them).
            if bytes.is_empty() && is_blank(line) && !self.cutting {
                if self.games == 0 && self.lead.len() + line.len() <= MAX_CHUNK {
                    self.lead.extend_from_slice(line);
                }
                continue;
            }
            if !bytes.is_empty() && !in_comment {
                let blank = is_blank(line);
                let tag = is_tag_line(line);
                let new_game = result_seen || (has_moves && starts_a_game(line));
                if ending && !blank && !tag && !new_game {
                    // Movetext goes on after a blank line.
                    ending = false;
                } else if (ending && !blank) || ((has_movetext || tags_ended) && tag) {
                    self.pending = true;
                    break;
                }
                if blank && has_movetext {
                    ending = true;
                }
                if blank && !has_movetext {
                    tags_ended = true;
                }
            }
            if bytes.is_empty() {
                first_line = self.line_number;
            }
            if bytes.len() + line.len() > MAX_CHUNK {
                self.pending = true;
                let continues = std::mem::replace(&mut self.cutting, true);
                if !continues {
                    self.games += 1;
                }
                return Some(Ok(Chunk {
                    number: self.games,
                    line: first_line,
                    bytes,
                    cut: true,
                    continues,
                    more: true,
                    lead: std::mem::take(&mut self.lead),
                }));
            }
            let movetext = !in_comment && !is_blank(line) && !is_tag_line(line);
            has_movetext |= movetext;
            // Tag lines may hold braces in their values.
            if in_comment || !is_tag_line(line) {
                in_comment = scan_comment(line, in_comment);
            }
            if movetext {
                has_moves |= !line.trim_ascii_start().starts_with(b"{");
            }
            if movetext && !in_comment {
                result_seen = ends_with_result(line);
            }
            bytes.extend_from_slice(line);
        }
        if bytes.is_empty() {
            return None;
        }
        // Lines were appended one by one: without this, a block of chunks
        // held up to twice its text in memory.
        bytes.shrink_to_fit();
        self.last_len = bytes.len();
        let continues = std::mem::take(&mut self.cutting);
        if !continues {
            self.games += 1;
        }
        Some(Ok(Chunk {
            number: self.games,
            line: first_line,
            bytes,
            cut: continues,
            continues,
            more: false,
            lead: std::mem::take(&mut self.lead),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cut(text: &[u8]) -> Vec<Vec<u8>> {
        ChunkReader::new(text)
            .map(|c| c.unwrap().bytes)
            .collect::<Vec<_>>()
    }

    #[test]
    fn games_without_blank_lines_between() {
        let text = b"[A \"1\"]\n1. e4 *\n[A \"2\"]\n1. d4 *";
        assert_eq!(
            cut(text),
            [&b"[A \"1\"]\n1. e4 *\n"[..], b"[A \"2\"]\n1. d4 *"]
        );
    }

    #[test]
    fn bom_and_leading_blank_lines_are_the_lead() {
        let text = b"\xef\xbb\xbf\r\n\r\n1. e4 *\r\n\r\n";
        assert_eq!(cut(text), [&b"1. e4 *\r\n\r\n"[..]]);
        let chunk = ChunkReader::new(&text[..]).next().unwrap().unwrap();
        assert_eq!(chunk.lead, b"\xef\xbb\xbf\r\n\r\n");
    }

    #[test]
    fn lines_that_end_with_cr_alone_are_lines() {
        let text = b"[White \"a\"]\r\r1. e4 *\r\r[White \"b\"]\r\r1. d4 *\r";
        assert_eq!(
            cut(text),
            [
                &b"[White \"a\"]\r\r1. e4 *\r\r"[..],
                &b"[White \"b\"]\r\r1. d4 *\r"[..]
            ]
        );
        // A CR inside a file of LF line ends is no line end.
        assert_eq!(cut(b"1. e4 {a\rb} *\n\n1. d4 *\n").len(), 2);
        assert_eq!(cut(b"1. e4 {a\r\r[b} *\n").len(), 1);
    }

    #[test]
    fn blank_line_after_a_cut_piece_is_kept() {
        // The line that does not fit a piece is blank: the next piece
        // starts with it.
        let mut text = vec![b'{'];
        text.extend(std::iter::repeat_n(b'x', MAX_CHUNK - 2));
        text.extend_from_slice(b"\n\n}\n");
        let chunks: Vec<_> = ChunkReader::new(&text[..]).map(|c| c.unwrap()).collect();
        assert!(chunks.len() > 1 && chunks.iter().all(|c| c.cut));
        let joined: Vec<u8> = chunks.iter().flat_map(|c| c.bytes.clone()).collect();
        assert_eq!(joined, text);
    }

    #[test]
    fn tag_like_line_inside_comment() {
        let text = b"1. e4 {\n[%clk 0:01:00] } e5\n\n1. d4 *\n";
        assert_eq!(
            cut(text),
            [&b"1. e4 {\n[%clk 0:01:00] } e5\n\n"[..], b"1. d4 *\n"]
        );
    }

    #[test]
    fn movetext_goes_on_after_a_blank_line_without_a_result() {
        // Crafty's analysis: blank lines inside the movetext. A result, a
        // tag line or a new game's first move ends the game there.
        let text = b"{comment}\n\n1. e4 e5\n\n2. Nf3 *\n\n1. d4 d5\n\n1. c4 1-0\n\n2. Nf3 *\n\n[A \"b\"]\n";
        assert_eq!(
            cut(text),
            [
                &b"{comment}\n\n1. e4 e5\n\n2. Nf3 *\n\n"[..],
                b"1. d4 d5\n\n",
                b"1. c4 1-0\n\n",
                b"2. Nf3 *\n\n",
                b"[A \"b\"]\n"
            ]
        );
    }

    #[test]
    fn long_text_is_cut_in_pieces() {
        let text = vec![b'x'; MAX_CHUNK + 10];
        let chunks: Vec<_> = ChunkReader::new(&text[..]).map(|c| c.unwrap()).collect();
        assert_eq!(chunks.len(), 2);
        assert!(chunks[0].cut && chunks[1].cut);
        assert_eq!(chunks[0].bytes.len() + chunks[1].bytes.len(), text.len());
        // One game in two pieces (issue 44).
        assert_eq!((chunks[0].number, chunks[1].number), (1, 1));
        assert_eq!((chunks[0].continues, chunks[0].more), (false, true));
        assert_eq!((chunks[1].continues, chunks[1].more), (true, false));
    }
}
