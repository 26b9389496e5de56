//! A fixed, documented split of data into training and held-out parts.
//!
//! An item (a game, a position) is held out when the 64-bit FNV-1a hash of
//! its key is divisible by 20: 5% of the data, the same on every machine.
//! Training commands skip held-out items; `chesspack stats --holdout` keeps
//! only them, so that figures are measured on data a model never saw.

use crate::hash::fnv1a;

/// Whether the item with this key is held out.
///
/// ```
/// let held = (0..10_000).filter(|i| chesspack::holdout::is_held_out(i.to_string().as_bytes())).count();
/// assert!((400..600).contains(&held));
/// ```
pub fn is_held_out(key: &[u8]) -> bool {
    fnv1a(key).is_multiple_of(20)
}

/// The key of a game: its start FEN and moves in UCI.
pub fn game_key(game: &crate::pgn::Game) -> Vec<u8> {
    line_key(&game.start, &game.moves)
}

/// The key of a game from `start` whose mainline is `moves`.
pub(crate) fn line_key(start: &shakmaty::Chess, moves: &[shakmaty::Move]) -> Vec<u8> {
    use shakmaty::{EnPassantMode, Position, fen::Fen, uci::UciMove};
    let mut key = Fen::from_position(start, EnPassantMode::Legal).to_string();
    let mode = start.castles().mode();
    for m in moves {
        key.push(' ');
        key.push_str(&UciMove::from_move(*m, mode).to_string());
    }
    key.into_bytes()
}
