//! The error type of the library.

/// Everything that can go wrong while encoding or decoding.
///
/// Messages are lower-case and name what was wrong, so that a caller can
/// prefix them with the game, line or block they came from.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The data ended before the decoder was done.
    #[error("unexpected end of data")]
    Truncated,
    /// The data is not a valid stream of the codec.
    #[error("invalid data: {0}")]
    InvalidData(String),
    /// A move to encode is not legal in its position.
    #[error("illegal move at ply {ply}: {uci}")]
    IllegalMove {
        /// The 0-based ply of the move.
        ply: usize,
        /// The move in UCI notation.
        uci: String,
    },
    /// A move given as text (SAN or UCI) is not legal, or not a move, where
    /// it is played.
    #[error("illegal or unreadable move {text:?} at ply {ply}")]
    UnreadableMove {
        /// The 0-based ply of the move.
        ply: usize,
        /// The move's text (cut after 64 characters, see `cut`).
        text: String,
    },
    /// The position cannot be written by the chosen scheme.
    #[error("cannot represent position: {0}")]
    Unrepresentable(String),
    /// A FEN or a decoded board is not a valid position.
    #[error("invalid position: {0}")]
    InvalidPosition(String),
    /// A game's `Variant` tag names a variant the codecs do not play.
    #[error("unsupported variant {0:?}")]
    UnsupportedVariant(String),
    /// A game's `FEN` tag is not a position of its variant.
    #[error("invalid fen {fen:?}: {reason}")]
    InvalidFen {
        /// The tag's value (cut after 64 characters, see `cut`).
        fen: String,
        /// Why it is not a position.
        reason: String,
    },
    /// A game record was coded from another start position or in another
    /// game context (ratings, time control, clocks) than the one it is
    /// decoded in: decoding it would give another game.
    #[error(
        "game record was coded from another start position or in another game context (ratings, time control, clocks): decode it with the tags and start it was written with"
    )]
    OtherContext,
    /// No codec has that name (cut after 64 characters, see `cut`).
    #[error("unknown codec {0:?}")]
    UnknownCodec(String),
}

/// `text` for an error message: whole up to 64 characters, else its first
/// 48 and a note of its length, so that a long argument (a whole file given
/// as a FEN, say) does not bury the message.
pub(crate) fn cut(text: &str) -> String {
    if text.chars().count() <= 64 {
        return text.to_owned();
    }
    let head: String = text.chars().take(48).collect();
    format!("{head}... ({} bytes)", text.len())
}

/// The examples of crate-private items, run as unit tests.
#[cfg(test)]
mod examples {
    #[test]
    fn example_cut() {
        assert_eq!(crate::error::cut("e4"), "e4");
        assert_eq!(
            crate::error::cut(&"x".repeat(500)),
            format!("{}... (500 bytes)", "x".repeat(48))
        );
    }
}
