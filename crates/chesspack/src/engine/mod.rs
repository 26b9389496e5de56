//! An embedded chess engine that scores every legal move: the thesis'
//! external engine (Crafty), brought inside the program.
//!
//! * [`evaluate`] — static evaluation: material and piece-square tables
//!   tapered by game phase (hand-written terms plus terms fitted on played
//!   games, see `fit::PieceSquareFit`), pawn structure (isolated, doubled,
//!   passed pawns), mobility, king shelter, bishop pair, rooks on open
//!   files.
//! * [`see`] — static exchange evaluation ([`see_unanswered`] where nothing can answer).
//! * [`score_moves`] — a fail-soft alpha-beta search with quiescence search
//!   and move ordering (exchange value, killer moves, piece-square gain) of
//!   every legal move to a fixed depth.
//!
//! Scores are part of the `engine-*` file formats, so the engine is
//! deterministic by construction: integer arithmetic only, single-threaded,
//! no transposition table (so no dependence on a hash size), no clock, and
//! its state starts empty for every position. Work is bounded by a node
//! budget ([`NODE_BUDGET`]), counted the same way everywhere. The same position and depth
//! give the same scores in every build on every machine; a golden test pins
//! them.

mod eval;
#[cfg(feature = "train")]
pub(crate) mod fit;
mod fitted;
mod search;
mod see;

#[cfg(test)]
pub(crate) use search::MATE;
pub(crate) use see::{see, see_unanswered};

use eval::Material;
use search::{INFINITY, Searcher};
use shakmaty::{Chess, Move, Position};

use crate::order::{Order, sorted_moves};

/// The deepest search [`score_moves`] accepts.
pub(crate) const MAX_DEPTH: u8 = 7;

/// Nodes per position at depth 0; each ply of depth multiplies it by 8.
/// Beyond it the search only evaluates (see the module docs). Typical
/// positions use a few percent of it.
pub(crate) const NODE_BUDGET: u64 = 20_000;

/// Moves whose score falls this far (in centipawns) below the best one found
/// so far are searched with a window that ends there: their score is then an
/// upper bound. The engine codecs clamp score deficits at the same value
/// ([`crate::game::engine_codec::MAX_DEFICIT`]), so the bound costs nothing.
pub(crate) const MARGIN: i32 = 90;

/// Every legal move of `pos` in [`Order::Thesis`] with its score in
/// centipawns from the mover's side, after a search `depth` plies deep below
/// the move (0: quiescence search only), and the number of nodes searched.
///
/// The first move searched (the best by the search's move ordering) and every move
/// within [`MARGIN`] of the best so far get exact scores; the others get
/// upper bounds. Mate scores are `MATE - plies` (mate given) and their
/// negation.
pub(crate) fn score_moves(pos: &Chess, depth: u8) -> (Vec<(Move, i32)>, u64) {
    let depth = u32::from(depth.min(MAX_DEPTH));
    let moves = sorted_moves(pos, Order::Thesis);
    let mut searcher = Searcher::new();
    searcher.budget = NODE_BUDGET << (3 * depth);
    let children: Vec<Chess> = moves
        .iter()
        .map(|&m| {
            let mut c = pos.clone();
            c.play_unchecked(m);
            c
        })
        .collect();
    if depth == 0 {
        let scores = children
            .iter()
            .map(|c| -searcher.qsearch(c, Material::of(c.board()), 1, -INFINITY, INFINITY, 0));
        let scored = moves.iter().copied().zip(scores).collect();
        return (scored, searcher.nodes);
    }
    let mut scores = vec![0; moves.len()];
    let mut best = -INFINITY;
    for i in search::root_order(pos, &moves) {
        let alpha = if best == -INFINITY {
            -INFINITY
        } else {
            best - MARGIN
        };
        let child = &children[i];
        let material = Material::of(child.board());
        let v = -searcher.negamax(child, material, depth, 1, -INFINITY, -alpha);
        scores[i] = v;
        best = best.max(v);
    }
    (moves.into_iter().zip(scores).collect(), searcher.nodes)
}

#[cfg(test)]
/// The engine's choice: the best-scoring move (the first in [`Order::Thesis`]
/// among equals) and its score; `None` when there is no legal move.
///
/// ```
/// use chesspack::engine::best_move;
/// use shakmaty::{Chess, Position, fen::Fen, CastlingMode, san::San};
///
/// // A hanging rook.
/// let pos: Chess = "4k3/8/8/3r4/8/8/8/3QK3 w - - 0 1"
///     .parse::<Fen>().unwrap().into_position(CastlingMode::Standard).unwrap();
/// let (m, _) = best_move(&pos, 1).unwrap();
/// assert_eq!(San::from_move(&pos, m).to_string(), "Qxd5");
/// ```
pub(crate) fn best_move(pos: &Chess, depth: u8) -> Option<(Move, i32)> {
    let (scored, _) = score_moves(pos, depth);
    let mut best: Option<(Move, i32)> = None;
    for (m, v) in scored {
        if best.is_none_or(|(_, b)| v > b) {
            best = Some((m, v));
        }
    }
    best
}

/// Bumped whenever the evaluator or search changes its scores, so that
/// [`model_hash`] changes with them.
pub(crate) const ENGINE_VERSION: u32 = 2;

/// A hash of the engine's version and fitted tables: what an archive of an
/// engine codec records so that a different engine refuses it.
pub(crate) fn model_hash() -> u64 {
    let mut bytes = ENGINE_VERSION.to_le_bytes().to_vec();
    for role in fitted::FITTED {
        for (mg, eg) in role {
            bytes.extend_from_slice(&mg.to_le_bytes());
            bytes.extend_from_slice(&eg.to_le_bytes());
        }
    }
    crate::hash::fnv1a(&bytes)
}

#[cfg(test)]
mod tests;

/// The examples of crate-private items, run as unit tests.
#[cfg(test)]
mod examples {
    #[test]
    fn example_score_moves() {
        use crate::engine::{MATE, score_moves};
        use shakmaty::{CastlingMode, Chess, fen::Fen, san::San};

        // Scholar's mate: Qxf7 is mate in one.
        let pos: Chess = "r1bqkb1r/pppp1ppp/2n2n2/4p2Q/2B1P3/8/PPPP1PPP/RNB1K1NR w KQkq - 4 4"
            .parse::<Fen>()
            .unwrap()
            .into_position(CastlingMode::Standard)
            .unwrap();
        let (scored, _nodes) = score_moves(&pos, 1);
        let best = scored.iter().max_by_key(|(_, v)| *v).unwrap();
        assert_eq!(San::from_move(&pos, best.0).to_string(), "Qxf7");
        assert_eq!(best.1, MATE - 1);
    }

    #[test]
    fn example_model_hash() {
        assert_eq!(crate::engine::model_hash(), crate::engine::model_hash());
    }
}
