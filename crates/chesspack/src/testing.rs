//! Helpers of the library's unit tests: random games and positions. Nothing
//! outside `#[cfg(test)]` code uses them.

use crate::hash::xorshift;

/// The positions of `games` random games of at most `plies` plies each,
/// every position before a move, from the xorshift `seed` (tests).
pub(crate) fn random_game_positions(
    mut seed: u64,
    games: usize,
    plies: usize,
) -> Vec<shakmaty::Chess> {
    use shakmaty::Position;
    let mut positions = Vec::new();
    for _ in 0..games {
        let mut pos = shakmaty::Chess::default();
        for _ in 0..plies {
            let moves = pos.legal_moves();
            if moves.is_empty() {
                break;
            }
            positions.push(pos.clone());
            let i = xorshift(&mut seed) % moves.len() as u64;
            pos.play_unchecked(moves[i as usize]);
        }
    }
    positions
}

/// `games` random games of at most `plies` plies from the start, drawn
/// towards positions that `wanted` names (tests): at each ply, where some
/// moves lead to such a position and `prefer` (asked with the game's
/// number and the random state) says so, one of those moves, else any
/// legal move, each drawn from the xorshift `seed`.
pub(crate) fn games_toward(
    mut seed: u64,
    games: usize,
    plies: usize,
    wanted: impl Fn(&shakmaty::Chess) -> bool,
    mut prefer: impl FnMut(usize, &mut u64) -> bool,
) -> Vec<Vec<shakmaty::Move>> {
    use shakmaty::Position;
    (0..games)
        .map(|g| {
            let mut pos = shakmaty::Chess::default();
            let mut moves = Vec::new();
            for _ in 0..plies {
                let legal = pos.legal_moves();
                if legal.is_empty() {
                    break;
                }
                let toward: Vec<shakmaty::Move> = legal
                    .iter()
                    .copied()
                    .filter(|&m| {
                        let mut after = pos.clone();
                        after.play_unchecked(m);
                        wanted(&after)
                    })
                    .collect();
                let from = if !toward.is_empty() && prefer(g, &mut seed) {
                    &toward[..]
                } else {
                    &legal[..]
                };
                let m = from[(xorshift(&mut seed) % from.len() as u64) as usize];
                pos.play_unchecked(m);
                moves.push(m);
            }
            moves
        })
        .collect()
}

/// The positions of FENs with standard castling (tests).
pub(crate) fn fen_positions(fens: &[&str]) -> Vec<shakmaty::Chess> {
    fens.iter()
        .map(|fen| {
            fen.parse::<shakmaty::fen::Fen>()
                .expect("a FEN")
                .into_position(shakmaty::CastlingMode::Standard)
                .expect("a legal position")
        })
        .collect()
}
