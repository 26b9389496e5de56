//! Static exchange evaluation: the material outcome of the captures on one
//! square, each side recapturing with its least valuable piece while that
//! pays.

use shakmaty::{Bitboard, Chess, Color, Move, Position, Role, Square, attacks};

use super::eval::see_value;

/// The least valuable piece of `color` among `attackers`.
fn least_valuable(pos: &Chess, attackers: Bitboard) -> Option<(Square, Role)> {
    let board = pos.board();
    for role in Role::ALL {
        if let Some(sq) = (attackers & board.by_role(role)).first() {
            return Some((sq, role));
        }
    }
    None
}

/// What `m` brings to its exchange: its origin and target, the value of
/// the piece that stands on the target after it, and what it gains at once
/// (its capture, and a promotion's gain over the pawn). `None` for
/// castling and drops, whose exchange is 0.
fn opening(m: Move) -> Option<(Square, Square, i32, i32)> {
    match m {
        Move::Normal {
            role,
            from,
            capture,
            to,
            promotion,
        } => {
            let captured = capture.map_or(0, see_value);
            let (value, bonus) = match promotion {
                Some(p) => (see_value(p), see_value(p) - see_value(Role::Pawn)),
                None => (see_value(role), 0),
            };
            Some((from, to, value, captured + bonus))
        }
        Move::EnPassant { from, to } => {
            Some((from, to, see_value(Role::Pawn), see_value(Role::Pawn)))
        }
        _ => None,
    }
}

/// The squares a move leaves empty: its origin, and the captured pawn's
/// square of an en passant capture.
fn occupied_after(pos: &Chess, m: Move, from: Square) -> Bitboard {
    let occupied = pos.board().occupied().without(from);
    match m {
        // The captured pawn stands beside the target square.
        Move::EnPassant { to, .. } => occupied.without(Square::from_coords(to.file(), from.rank())),
        _ => occupied,
    }
}

/// The exchange's value from the gains of its first `depth + 1`
/// captures, each side stopping where going on would cost it.
fn settle(gains: &mut [i32], mut depth: usize) -> i32 {
    while depth > 0 {
        gains[depth - 1] = -(-gains[depth - 1]).max(gains[depth]);
        depth -= 1;
    }
    gains[0]
}

/// The static exchange value of `m` for the side playing it, in centipawns:
/// what it captures minus what it loses if the opponent recaptures on the
/// target square, and so on, each side stopping when going on would cost it.
pub(crate) fn see(pos: &Chess, m: Move) -> i32 {
    let Some((from, to, mut piece_value, first_gain)) = opening(m) else {
        return 0;
    };
    let board = pos.board();
    let mut occupied = occupied_after(pos, m, from);
    // Both sides' attackers of the target, looked up once and kept from one
    // capture to the next: a capture can only open a line through the
    // square it leaves, so only the sliders behind it are looked up again
    // (the same attackers as `board.attacks_to(to, color, occupied) &
    // occupied` at every step).
    let (diagonal, straight) = (board.bishops_and_queens(), board.rooks_and_queens());
    let mut attackers = ((attacks::rook_attacks(to, occupied) & straight)
        | (attacks::bishop_attacks(to, occupied) & diagonal)
        | (attacks::knight_attacks(to) & board.knights())
        | (attacks::king_attacks(to) & board.kings())
        | (attacks::pawn_attacks(Color::White, to) & board.pawns() & board.black())
        | (attacks::pawn_attacks(Color::Black, to) & board.pawns() & board.white()))
        & occupied;
    let mut gains = [0i32; 40];
    gains[0] = first_gain;
    let mut depth = 0;
    let mut color: Color = !pos.turn();
    while let Some((sq, role)) = least_valuable(pos, attackers & board.by_color(color)) {
        if role == Role::King && (attackers & board.by_color(!color)).any() {
            // The king cannot capture into a defended square.
            break;
        }
        depth += 1;
        if depth >= gains.len() {
            break;
        }
        // Capturing the piece that just moved there.
        gains[depth] = piece_value - gains[depth - 1];
        piece_value = see_value(role);
        occupied = occupied.without(sq);
        // What stood behind the capturer on its line to the target (a
        // king's line: never a slider of the other side in a legal
        // position, but looked up all the same).
        if matches!(role, Role::Pawn | Role::Bishop | Role::Queen | Role::King) {
            attackers |= attacks::bishop_attacks(to, occupied) & diagonal;
        }
        if matches!(role, Role::Rook | Role::Queen | Role::King) {
            attackers |= attacks::rook_attacks(to, occupied) & straight;
        }
        attackers &= occupied;
        color = !color;
    }
    settle(&mut gains, depth)
}

/// [`see`] of a move that nothing can answer, without working out the
/// exchange: a normal move (not en passant, which empties a second square,
/// nor castling) from and to squares that no enemy piece attacks
/// (`their_attacks`, in the position before it) gains what it captures and
/// what it promotes to. No line opens onto its target either: an enemy
/// slider whose line to it runs through its origin attacks the origin.
/// `None` for other moves.
#[inline]
pub(crate) fn see_unanswered(m: Move, their_attacks: Bitboard) -> Option<i32> {
    let Move::Normal {
        role,
        from,
        capture,
        to,
        promotion,
    } = m
    else {
        return None;
    };
    if their_attacks.contains(to) || their_attacks.contains(from) {
        return None;
    }
    let captured = capture.map_or(0, see_value);
    let bonus = promotion.map_or(0, |p| see_value(p) - see_value(Role::Pawn));
    debug_assert!(promotion.is_none() || role == Role::Pawn);
    Some(captured + bonus)
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::{CastlingMode, fen::Fen, san::San};

    fn see_of(fen: &str, san: &str) -> i32 {
        let pos: Chess = fen
            .parse::<Fen>()
            .unwrap()
            .into_position(CastlingMode::Standard)
            .unwrap();
        let m = san.parse::<San>().unwrap().to_move(&pos).unwrap();
        see(&pos, m)
    }

    /// The exchange as it was worked out before (issue 40): every side's
    /// attackers looked up again after each capture.
    fn see_by_attacks_to(pos: &Chess, m: Move) -> i32 {
        let Some((from, to, mut piece_value, first_gain)) = opening(m) else {
            return 0;
        };
        let board = pos.board();
        let mut occupied = occupied_after(pos, m, from);
        let mut gains = [0i32; 40];
        gains[0] = first_gain;
        let mut depth = 0;
        let mut color: Color = !pos.turn();
        loop {
            let attackers = board.attacks_to(to, color, occupied) & occupied;
            let Some((sq, role)) = least_valuable(pos, attackers) else {
                break;
            };
            if role == Role::King && (board.attacks_to(to, !color, occupied) & occupied).any() {
                break;
            }
            depth += 1;
            if depth >= gains.len() {
                break;
            }
            gains[depth] = piece_value - gains[depth - 1];
            piece_value = see_value(role);
            occupied = occupied.without(sq);
            color = !color;
        }
        settle(&mut gains, depth)
    }

    /// The attackers kept across captures give every exchange the value
    /// that looking them all up again gives: every move of the positions
    /// of random games (x-rays behind pawns, bishops, rooks, queens and
    /// kings, en passant, promotions), and of crowded positions.
    #[test]
    fn regression_issue_40_kept_attackers_agree_with_looking_them_up() {
        let mut positions = crate::testing::random_game_positions(0x5851_f42d_4c95_7f2d, 200, 200);
        positions.extend(crate::testing::fen_positions(&[
            "3rk3/3q4/8/3p4/8/3Q4/3R4/3RK3 w - - 0 1",
            "4k3/8/2b5/3p4/4B3/5Q2/8/4K3 w - - 0 1",
            "1k6/8/8/3r4/8/3K4/3R4/3r4 w - - 0 1",
            "r3k2r/pPp2ppp/8/3pP3/2B5/1Q6/P1P2PpP/R3K2R w KQkq d6 0 1",
            "4k3/8/8/2pP4/1B6/8/8/4K3 w - c6 0 1",
        ]));
        let mut moves = 0;
        for pos in &positions {
            for m in pos.legal_moves() {
                assert_eq!(
                    see(pos, m),
                    see_by_attacks_to(pos, m),
                    "{m:?} in {:?}",
                    pos.board()
                );
                moves += 1;
            }
        }
        assert!(moves > 500_000, "{moves}");
    }

    #[test]
    fn exchanges() {
        // An undefended pawn; a defended one.
        assert_eq!(see_of("4k3/8/8/3p4/4P3/8/8/4K3 w - - 0 1", "exd5"), 100);
        assert_eq!(see_of("4k3/8/4p3/3p4/4P3/8/8/4K3 w - - 0 1", "exd5"), 0);
        // A rook behind a rook wins the exchange on d5 (x-ray); alone it loses.
        assert_eq!(see_of("3rk3/8/8/3p4/8/8/3R4/3RK3 w - - 0 1", "Rxd5"), 100);
        assert_eq!(see_of("3rk3/8/8/3p4/8/8/3R4/4K3 w - - 0 1", "Rxd5"), -400);
        // A quiet move onto a square a pawn attacks loses the piece.
        assert_eq!(see_of("4k3/4p3/8/8/4N3/8/8/4K3 w - - 0 1", "Nc3"), 0);
        assert_eq!(see_of("4k3/4p3/8/8/4N3/8/8/4K3 w - - 0 1", "Nd6+"), -320);
        // The king may not recapture on a defended square.
        assert_eq!(see_of("4k3/8/8/8/8/8/2Kp1n2/8 b - - 0 1", "d1=Q+"), 850);
        assert_eq!(see_of("4k3/8/8/8/8/8/2Kp4/8 b - - 0 1", "d1=Q+"), -100);
    }
}

/// The examples of crate-private items, run as unit tests.
#[cfg(test)]
mod examples {
    #[test]
    fn example_see_see() {
        use crate::engine::see;
        use shakmaty::{CastlingMode, Chess, fen::Fen, san::San};

        // The knight on d5 is defended by a pawn: Qxd5 loses the queen for a knight.
        let pos: Chess = "4k3/8/4p3/3n4/8/8/8/3QK3 w - - 0 1"
            .parse::<Fen>()
            .unwrap()
            .into_position(CastlingMode::Standard)
            .unwrap();
        let qxd5 = "Qxd5".parse::<San>().unwrap().to_move(&pos).unwrap();
        assert_eq!(see(&pos, qxd5), 320 - 950);
    }

    #[test]
    fn example_see_see_unanswered() {
        use crate::engine::{see, see_unanswered};
        use shakmaty::{Bitboard, Chess, Position};

        let pos = Chess::default();
        let them = Bitboard::from_rank(shakmaty::Rank::Sixth);
        for m in pos.legal_moves() {
            assert_eq!(see_unanswered(m, them), Some(see(&pos, m)));
        }
    }
}
