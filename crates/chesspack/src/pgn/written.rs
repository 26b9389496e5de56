//! A game as its text writes it, read leniently: the one reader of games
//! that chesspack cannot parse (those stored verbatim), for their tags,
//! rows and lists.

use std::ops::ControlFlow;

use pgn_reader::{RawComment, RawTag, Reader, SanPlus, Skip, Visitor};

use super::clock_millis;

/// A game as its text writes it ([`read_written`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Written {
    /// The tag pairs in order, their values unescaped.
    pub tags: Vec<(Vec<u8>, Vec<u8>)>,
    /// The mainline's moves as written (SAN, check marks kept), legal or
    /// not.
    pub moves: Vec<String>,
    /// The first `%clk` reading after each mainline move, in milliseconds
    /// (as python-chess reads them).
    pub clocks: Vec<Option<u64>>,
}

/// The game at the start of `text` as it is written, read leniently: its
/// tags (with `movetext` false, only them), its mainline's moves as
/// written, legal or not, and their clock readings. Text that does not
/// read as PGN gives what was read before it. Only the first MiB is read
/// for the tags alone (a game text may be hundreds of megabytes).
///
/// ```
/// use chesspack::pgn::read_written;
///
/// // A game on one line with an escaped quote, and a move that is not
/// // legal (chesspack stores such a game verbatim).
/// let text = b"[Event \"A \\\"b\\\"\"] [White \"x\"]\n\n1. e4 { [%clk 0:03:00] } Ke3 *";
/// let game = read_written(text, true);
/// assert_eq!(game.tags[0], (b"Event".to_vec(), b"A \"b\"".to_vec()));
/// assert_eq!(game.moves, ["e4", "Ke3"]);
/// assert_eq!(game.clocks, [Some(180_000), None]);
/// assert!(read_written(text, false).moves.is_empty());
/// ```
pub fn read_written(text: &[u8], movetext: bool) -> Written {
    let text = if movetext {
        text
    } else {
        &text[..text.len().min(1 << 20)]
    };
    match Reader::new(text).read_game(&mut Lenient { movetext }) {
        Ok(Some(game)) => game,
        _ => Written::default(),
    }
}

/// The visitor of [`read_written`].
struct Lenient {
    movetext: bool,
}

impl Visitor for Lenient {
    type Tags = Vec<(Vec<u8>, Vec<u8>)>;
    type Movetext = Written;
    type Output = Written;

    fn begin_tags(&mut self) -> ControlFlow<Written, Self::Tags> {
        ControlFlow::Continue(Vec::new())
    }

    fn tag(
        &mut self,
        tags: &mut Self::Tags,
        name: &[u8],
        value: RawTag<'_>,
    ) -> ControlFlow<Written> {
        tags.push((name.to_vec(), value.decode().into_owned()));
        ControlFlow::Continue(())
    }

    fn begin_movetext(&mut self, tags: Self::Tags) -> ControlFlow<Written, Written> {
        let game = Written {
            tags,
            ..Written::default()
        };
        if self.movetext {
            ControlFlow::Continue(game)
        } else {
            ControlFlow::Break(game)
        }
    }

    fn san(&mut self, game: &mut Written, san: SanPlus) -> ControlFlow<Written> {
        game.moves.push(san.to_string());
        game.clocks.push(None);
        ControlFlow::Continue(())
    }

    fn comment(&mut self, game: &mut Written, comment: RawComment<'_>) -> ControlFlow<Written> {
        // The first reading after a move, as python-chess takes it.
        if let Some(last @ None) = game.clocks.last_mut() {
            *last = clock_millis(comment.as_bytes());
        }
        ControlFlow::Continue(())
    }

    fn begin_variation(&mut self, _game: &mut Written) -> ControlFlow<Written, Skip> {
        ControlFlow::Continue(Skip(true))
    }

    fn end_game(&mut self, game: Written) -> Written {
        game
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn get(text: &[u8], name: &str) -> Option<String> {
        read_written(text, false)
            .tags
            .into_iter()
            .find(|(k, _)| k == name.as_bytes())
            .map(|(_, v)| String::from_utf8(v).unwrap())
    }

    #[test]
    fn verbatim_tags_are_read_leniently() {
        let text = b"[White \"Tal, M\"]\n[Black \"x\"]\n\n1. e4 ; comment\n";
        assert_eq!(get(text, "White").as_deref(), Some("Tal, M"));
        assert_eq!(get(text, "Result"), None);
        // A game on one line (issue 44), an escaped quote.
        let line = b"[Event \"A \\\"b\\\"\"] [White \"x\"][Black \"y\"] 1. e4 *";
        assert_eq!(get(line, "Event").as_deref(), Some("A \"b\""));
        assert_eq!(get(line, "Black").as_deref(), Some("y"));
        assert_eq!(get(line, "Whi"), None);
        // Text that is not PGN has no tags; Latin-1 bytes stay as they are.
        assert!(
            read_written(b"This line is not PGN at all.\n\n", true)
                .tags
                .is_empty()
        );
        assert_eq!(
            read_written(b"[White \"M\xfcller\"]\n\n*", false).tags[0].1,
            b"M\xfcller"
        );
    }

    #[test]
    fn tags_alone_stop_at_the_movetext() {
        // A game of more than a MiB reads its tags from the first.
        let mut text = b"[White \"a\"]\n\n".to_vec();
        for _ in 0..200_000 {
            text.extend_from_slice(b"1. Nf3 Nf6 2. Ng1 Ng8 ");
        }
        assert_eq!(get(&text, "White").as_deref(), Some("a"));
        assert_eq!(read_written(&text, true).moves.len(), 800_000);
    }
}
