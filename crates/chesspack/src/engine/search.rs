//! Alpha-beta search with quiescence, to a fixed depth. Single-threaded, no
//! transposition table, no clock: the result depends only on the position
//! and the depth.

use shakmaty::{Chess, Move, MoveList, Position, Role};

use super::{eval::evaluate, eval::evaluate_lazy, eval::piece_square, eval::see_value, see::see};
use crate::order::{Order, key};

/// The score of being mated now; mate in `n` plies scores `MATE - n`.
pub const MATE: i32 = 30_000;
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

/// Sorts `moves` for search: by ordering score, then canonically. With
/// `good_tactical_only`, keeps only the captures and queen promotions that
/// do not lose material (quiescence search).
fn sort_for_search(
    pos: &Chess,
    moves: &mut MoveList,
    killers: &[Option<Move>; 2],
    good_tactical_only: bool,
) {
    let mut keyed: Vec<(i32, u32, Move)> = moves
        .iter()
        .filter(|m| !good_tactical_only || is_tactical(m))
        .map(|m| (order_score(pos, m, killers), m))
        .filter(|&(s, _)| !good_tactical_only || s >= GOOD_TACTICAL)
        .map(|(s, m)| (-s, key(*m, Order::Thesis), *m))
        .collect();
    keyed.sort_unstable_by_key(|&(s, k, _)| (s, k));
    moves.clear();
    moves.extend(keyed.into_iter().map(|(_, _, m)| m));
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
        depth: u32,
        ply: usize,
        mut alpha: i32,
        beta: i32,
    ) -> i32 {
        if depth == 0 || self.nodes >= self.budget {
            return self.qsearch(pos, ply, alpha, beta, 0);
        }
        self.nodes += 1;
        let mut moves = pos.legal_moves();
        if moves.is_empty() {
            return if pos.is_check() {
                -MATE + ply as i32
            } else {
                0
            };
        }
        let slot = ply.min(MAX_PLY - 1);
        let killers = self.killers[slot];
        sort_for_search(pos, &mut moves, &killers, false);
        let mut best = -INFINITY;
        for m in moves {
            let mut child = pos.clone();
            child.play_unchecked(m);
            let v = -self.negamax(&child, depth - 1, ply + 1, -beta, -alpha);
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
        ply: usize,
        mut alpha: i32,
        beta: i32,
        qdepth: u32,
    ) -> i32 {
        self.nodes += 1;
        let in_check = pos.is_check();
        let mut best;
        let mut moves;
        if in_check {
            moves = pos.legal_moves();
            if moves.is_empty() {
                return -MATE + ply as i32;
            }
            if qdepth >= MAX_QDEPTH || self.nodes >= self.budget {
                return evaluate(pos);
            }
            best = -INFINITY;
            let slot = ply.min(MAX_PLY - 1);
            let killers = self.killers[slot];
            sort_for_search(pos, &mut moves, &killers, false);
        } else {
            // Stand pat first: a side that need not move is not stalemated
            // here, a simplification every quiescence search makes.
            best = evaluate_lazy(pos, alpha, beta);
            if best >= beta || qdepth >= MAX_QDEPTH || self.nodes >= self.budget {
                return best;
            }
            moves = pos.legal_moves();
            if moves.is_empty() {
                return 0;
            }
            alpha = alpha.max(best);
            sort_for_search(pos, &mut moves, &[None, None], true);
        }
        for m in moves {
            let mut child = pos.clone();
            child.play_unchecked(m);
            let v = -self.qsearch(&child, ply + 1, -beta, -alpha, qdepth + 1);
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
