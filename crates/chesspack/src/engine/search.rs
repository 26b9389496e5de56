//! Alpha-beta search with quiescence, to a fixed depth. Single-threaded, no
//! transposition table, no clock: the result depends only on the position
//! and the depth.

use arrayvec::ArrayVec;
use shakmaty::{
    Bitboard, Chess, Move, MoveList, Position, Rank, Role, Square,
    attacks::{self, bishop_attacks, king_attacks, pawn_attacks, rook_attacks},
};

use super::{
    eval::{Material, evaluate_lazy, evaluate_with, piece_square, see_value},
    see::see,
};
use crate::order::{Order, key};

/// The score of being mated now; mate in `n` plies scores `MATE - n`.
pub(crate) const MATE: i32 = 30_000;
/// Larger than any score.
pub(crate) const INFINITY: i32 = 32_000;
/// How many plies of captures quiescence search follows at most.
const MAX_QDEPTH: u32 = 10;
/// Plies with killer-move slots.
const MAX_PLY: usize = 32;

/// A search over one root position. Its state (killer moves, node count)
/// starts empty for every root, so scores depend on nothing else.
#[derive(Debug)]
pub(crate) struct Searcher {
    pub nodes: u64,
    /// Past this many nodes every node is a leaf (static evaluation): a
    /// deterministic bound on the work per position, which only wild
    /// positions (many queens, long capture chains) ever reach.
    pub budget: u64,
    killers: [[Option<Move>; 2]; MAX_PLY],
}

fn is_tactical(m: &Move) -> bool {
    m.is_capture() || m.promotion() == Some(Role::Queen)
}

/// Ordering score, higher first: winning and equal captures by exchange
/// value, queen promotions, killers, quiet moves by piece-square gain, then
/// losing captures.
fn order_score(pos: &Chess, m: &Move, killers: &[Option<Move>; 2]) -> i32 {
    if is_tactical(m) {
        let s = see(pos, *m);
        let victim = m.capture().map_or(0, see_value);
        if s >= 0 {
            return GOOD_TACTICAL + s * 16 + victim / 8;
        }
        return -1_000_000 + s;
    }
    if killers[0] == Some(*m) {
        return 900_000;
    }
    if killers[1] == Some(*m) {
        return 899_999;
    }
    match *m {
        Move::Normal {
            role,
            from,
            to,
            promotion: None,
            ..
        } => {
            let color = pos.turn();
            piece_square(color, role, to).0 - piece_square(color, role, from).0
        }
        Move::Castle { .. } => 30,
        _ => -500, // under-promotions
    }
}

/// Scores at and above this are captures and queen promotions that do not
/// lose material.
const GOOD_TACTICAL: i32 = 1_000_000;

/// Moves in search order, as indexes into a move list with their sort keys.
type SearchOrder = ArrayVec<(i32, u32, u8), 256>;

/// Puts the moves of `moves` in search order into `order`: by ordering
/// score, then canonically. With `good_tactical_only`, keeps only the
/// captures and queen promotions that do not lose material (quiescence
/// search). A fixed-size list as long as a MoveList: no allocation and no
/// copy of the moves per node.
fn search_order(
    pos: &Chess,
    moves: &MoveList,
    killers: &[Option<Move>; 2],
    good_tactical_only: bool,
    order: &mut SearchOrder,
) {
    for (i, m) in moves.iter().enumerate() {
        if good_tactical_only && !is_tactical(m) {
            continue;
        }
        let s = order_score(pos, m, killers);
        if good_tactical_only && s < GOOD_TACTICAL {
            continue;
        }
        order.push((-s, key(*m, Order::Thesis), i as u8));
    }
    // Keys are unique, so the index never decides.
    order.sort_unstable();
}

/// The legal captures and queen promotions of `pos` (which must not be in
/// check): the moves quiescence search tries, generated without the quiet
/// moves, in no particular order. The same set as the tactical moves of
/// `legal_moves()` (tested).
fn tactical_moves(pos: &Chess) -> MoveList {
    let board = pos.board();
    let turn = pos.turn();
    let them = board.by_color(!turn);
    let ours = board.by_color(turn);
    let occupied = board.occupied();
    let mut moves = MoveList::new();
    if pos.maybe_ep_square().is_some() {
        moves.extend(pos.en_passant_moves());
    }
    let Some(king) = board.king_of(turn) else {
        return moves;
    };
    // Not in check, so a move is illegal only when it uncovers one of
    // their sliders on the king: the moving piece leaves `from`, a piece
    // (the captured one, not attacking any more) stands on `to`.
    let rooks = (board.rooks() | board.queens()) & them;
    let bishops = (board.bishops() | board.queens()) & them;
    let exposes = |from: Square, to: Square| {
        let occ = occupied.without(from).with(to);
        let attackers = (rook_attacks(king, occ) & rooks) | (bishop_attacks(king, occ) & bishops);
        attackers.without(to).any()
    };
    let last = Bitboard::from_rank(turn.fold_wb(Rank::Eighth, Rank::First));
    for from in board.pawns() & ours {
        for to in pawn_attacks(turn, from) & them {
            if exposes(from, to) {
                continue;
            }
            let capture = board.role_at(to);
            if last.contains(to) {
                for promotion in [Role::Queen, Role::Rook, Role::Bishop, Role::Knight] {
                    moves.push(Move::Normal {
                        role: Role::Pawn,
                        from,
                        capture,
                        to,
                        promotion: Some(promotion),
                    });
                }
            } else {
                moves.push(Move::Normal {
                    role: Role::Pawn,
                    from,
                    capture,
                    to,
                    promotion: None,
                });
            }
        }
        // A push to the last rank, promoting to a queen.
        let push = Bitboard::from(from).shift(turn.fold_wb(8, -8)) & last & !occupied;
        if let Some(to) = push.first()
            && !exposes(from, to)
        {
            moves.push(Move::Normal {
                role: Role::Pawn,
                from,
                capture: None,
                to,
                promotion: Some(Role::Queen),
            });
        }
    }
    for from in (board.knights() | board.bishops() | board.rooks() | board.queens()) & ours {
        let Some(piece) = board.piece_at(from) else {
            continue;
        };
        for to in attacks::attacks(from, piece, occupied) & them {
            if !exposes(from, to) {
                moves.push(Move::Normal {
                    role: piece.role,
                    from,
                    capture: board.role_at(to),
                    to,
                    promotion: None,
                });
            }
        }
    }
    for to in king_attacks(king) & them {
        if board
            .attacks_to(to, !turn, occupied.without(king))
            .is_empty()
        {
            moves.push(Move::Normal {
                role: Role::King,
                from: king,
                capture: board.role_at(to),
                to,
                promotion: None,
            });
        }
    }
    moves
}

/// Whether `pos` (not in check) has a legal move: a safe king step, else
/// any move at all.
fn has_legal_move(pos: &Chess) -> bool {
    let board = pos.board();
    let turn = pos.turn();
    if let Some(king) = board.king_of(turn) {
        let occupied = board.occupied().without(king);
        for to in king_attacks(king) & !board.by_color(turn) {
            if board.attacks_to(to, !turn, occupied).is_empty() {
                return true;
            }
        }
    }
    !pos.legal_moves().is_empty()
}

/// The order in which the root moves are searched: indexes into `moves`,
/// best first by the move-ordering score, then canonically.
pub(crate) fn root_order(pos: &Chess, moves: &[Move]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..moves.len()).collect();
    let scores: Vec<i32> = moves
        .iter()
        .map(|m| order_score(pos, m, &[None, None]))
        .collect();
    order.sort_by_key(|&i| (-scores[i], i));
    order
}

impl Searcher {
    pub(crate) fn new() -> Searcher {
        Searcher {
            nodes: 0,
            budget: u64::MAX,
            killers: [[None; 2]; MAX_PLY],
        }
    }

    /// Fail-soft negamax: the exact score when it lies in `(alpha, beta)`,
    /// else a bound on the same side of the window.
    pub(crate) fn negamax(
        &mut self,
        pos: &Chess,
        material: Material,
        depth: u32,
        ply: usize,
        mut alpha: i32,
        beta: i32,
    ) -> i32 {
        if depth == 0 || self.nodes >= self.budget {
            return self.qsearch(pos, material, ply, alpha, beta, 0);
        }
        self.nodes += 1;
        let moves = pos.legal_moves();
        if moves.is_empty() {
            return if pos.is_check() {
                -MATE + ply as i32
            } else {
                0
            };
        }
        let slot = ply.min(MAX_PLY - 1);
        let killers = self.killers[slot];
        let mut order = SearchOrder::new();
        search_order(pos, &moves, &killers, false, &mut order);
        let mut best = -INFINITY;
        for &(_, _, i) in &order {
            let m = moves[usize::from(i)];
            let mut child = pos.clone();
            child.play_unchecked(m);
            let v = -self.negamax(
                &child,
                material.after(pos, m),
                depth - 1,
                ply + 1,
                -beta,
                -alpha,
            );
            if v > best {
                best = v;
                if v > alpha {
                    alpha = v;
                    if alpha >= beta {
                        if !is_tactical(&m) && self.killers[slot][0] != Some(m) {
                            self.killers[slot][1] = self.killers[slot][0];
                            self.killers[slot][0] = Some(m);
                        }
                        break;
                    }
                }
            }
        }
        best
    }

    /// Quiescence search: the static evaluation, improved by captures that
    /// do not lose material and queen promotions; every move when in check.
    pub(crate) fn qsearch(
        &mut self,
        pos: &Chess,
        material: Material,
        ply: usize,
        mut alpha: i32,
        beta: i32,
        qdepth: u32,
    ) -> i32 {
        self.nodes += 1;
        let in_check = pos.is_check();
        let mut best;
        let moves;
        let mut order = SearchOrder::new();
        if in_check {
            moves = pos.legal_moves();
            if moves.is_empty() {
                return -MATE + ply as i32;
            }
            if qdepth >= MAX_QDEPTH || self.nodes >= self.budget {
                return evaluate_with(pos, material);
            }
            best = -INFINITY;
            let slot = ply.min(MAX_PLY - 1);
            let killers = self.killers[slot];
            search_order(pos, &moves, &killers, false, &mut order);
        } else {
            // Stand pat first: a side that need not move is not stalemated
            // here, a simplification every quiescence search makes.
            best = evaluate_lazy(pos, material, alpha, beta);
            if best >= beta || qdepth >= MAX_QDEPTH || self.nodes >= self.budget {
                return best;
            }
            moves = tactical_moves(pos);
            if moves.is_empty() && !has_legal_move(pos) {
                return 0;
            }
            alpha = alpha.max(best);
            search_order(pos, &moves, &[None, None], true, &mut order);
        }
        for &(_, _, i) in &order {
            let m = moves[usize::from(i)];
            let mut child = pos.clone();
            child.play_unchecked(m);
            let v = -self.qsearch(
                &child,
                material.after(pos, m),
                ply + 1,
                -beta,
                -alpha,
                qdepth + 1,
            );
            if v > best {
                best = v;
                if v > alpha {
                    alpha = v;
                    if alpha >= beta {
                        break;
                    }
                }
            }
        }
        best
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::xorshift;
    use shakmaty::{CastlingMode, fen::Fen};

    /// The tactical moves of `legal_moves()`, sorted by key.
    fn expected(pos: &Chess) -> Vec<u32> {
        let mut keys: Vec<u32> = pos
            .legal_moves()
            .iter()
            .filter(|m| is_tactical(m))
            .map(|m| key(*m, Order::Thesis))
            .collect();
        keys.sort_unstable();
        keys
    }

    fn generated(pos: &Chess) -> Vec<u32> {
        let mut keys: Vec<u32> = tactical_moves(pos)
            .iter()
            .map(|m| key(*m, Order::Thesis))
            .collect();
        keys.sort_unstable();
        keys
    }

    #[test]
    fn tactical_moves_are_the_legal_tactical_moves() {
        // Pins along files, ranks and diagonals, en passant uncovering a
        // rank, promotions by capture and by push, king captures of
        // defended and undefended pieces, stalemate.
        for fen in [
            "4k3/8/8/8/8/8/4r3/4K3 w - - 0 1",
            "4k3/4r3/8/8/8/4B3/8/4K3 w - - 0 1",
            "4k3/8/8/1b6/8/3N4/8/5K2 w - - 0 1",
            "7k/8/8/K2pP2r/8/8/8/8 w - d6 0 1",
            "1n2k3/P7/8/8/8/8/8/4K3 w - - 0 1",
            "rn2k3/1P6/8/8/8/8/8/4K3 w - - 0 1",
            "4k3/8/8/8/8/8/3pp3/4K3 w - - 0 1",
            "k7/2Q5/8/8/8/8/8/1K6 b - - 0 1",
        ] {
            let pos: Chess = fen
                .parse::<Fen>()
                .unwrap()
                .into_position(CastlingMode::Standard)
                .unwrap();
            assert_eq!(generated(&pos), expected(&pos), "{fen}");
            assert_eq!(has_legal_move(&pos), !pos.legal_moves().is_empty(), "{fen}");
        }
        // Positions of random games.
        let mut x = 0x1234_5678_9abc_def1u64;
        let mut checked = 0;
        for _ in 0..if cfg!(debug_assertions) { 60 } else { 400 } {
            let mut pos = Chess::default();
            for _ in 0..200 {
                let moves = pos.legal_moves();
                if moves.is_empty() {
                    break;
                }
                if !pos.is_check() {
                    assert_eq!(
                        generated(&pos),
                        expected(&pos),
                        "{}",
                        Fen::from_position(&pos, shakmaty::EnPassantMode::Legal)
                    );
                    assert!(has_legal_move(&pos));
                    checked += 1;
                }
                // Prefer captures, so that games reach sparse boards.
                let captures: Vec<&Move> = moves.iter().filter(|m| m.is_capture()).collect();
                let r = xorshift(&mut x) as usize;
                let m = if !captures.is_empty() && r.is_multiple_of(3) {
                    *captures[r / 3 % captures.len()]
                } else {
                    moves[r % moves.len()]
                };
                pos.play_unchecked(m);
            }
        }
        assert!(checked > 5_000);
    }
}
