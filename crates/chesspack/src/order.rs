//! Canonical orders of the legal moves of a position.
//!
//! shakmaty's `legal_moves()` order is an implementation detail: it may change
//! between releases, so it is never used as a symbol. Every codec that numbers
//! moves sorts them by one of the keys here, which depend only on the moves.
//!
//! Castling moves are keyed as "king takes own rook" (`e1h1` for white's
//! short castling in standard chess), which no other move can be, so keys are
//! unique in Chess960 too, where the king may not move or may land on a square
//! another king move reaches.

use shakmaty::{Chess, Move, Position, Role, Square};

/// A total order of moves.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Order {
    /// The thesis' order: from-square file, from-square rank, to-square file,
    /// to-square rank, promotion piece (none, knight, bishop, rook, queen).
    Thesis,
    /// The Q&A answer's order: from-square index, then to-square index, then
    /// promotion, with squares numbered `x + 8y` (a1 = 0, b1 = 1, …, h8 = 63).
    SquareIndex,
}

/// The destination used for ordering and for the `squares` codec: the rook's
/// square for castling moves, else the move's target.
///
/// ```
/// use chesspack::order::target;
/// use shakmaty::{Move, Square};
///
/// let castle = Move::Castle { king: Square::E1, rook: Square::H1 };
/// assert_eq!(target(castle), Square::H1);
/// ```
pub fn target(m: Move) -> Square {
    match m {
        Move::Castle { rook, .. } => rook,
        other => other.to(),
    }
}

fn promotion_key(m: Move) -> u32 {
    match m.promotion() {
        None => 0,
        Some(Role::Knight) => 1,
        Some(Role::Bishop) => 2,
        Some(Role::Rook) => 3,
        Some(Role::Queen) => 4,
        Some(_) => 5, // king promotion (antichess); unreachable in chess
    }
}

/// The sort key of a move in an order: unique among the legal moves of any
/// position.
///
/// ```
/// use chesspack::order::{key, Order};
/// use shakmaty::{Move, Role, Square};
///
/// let a3 = Move::Normal { role: Role::Pawn, from: Square::A2, capture: None, to: Square::A3, promotion: None };
/// let na3 = Move::Normal { role: Role::Knight, from: Square::B1, capture: None, to: Square::A3, promotion: None };
/// assert!(key(a3, Order::Thesis) < key(na3, Order::Thesis));
/// assert!(key(na3, Order::SquareIndex) < key(a3, Order::SquareIndex));
/// ```
pub fn key(m: Move, order: Order) -> u32 {
    let from = m.from().map_or(64, u32::from);
    let to = u32::from(target(m));
    let promo = promotion_key(m);
    match order {
        Order::Thesis => {
            let (ff, fr) = (from % 8, from / 8);
            let (tf, tr) = (to % 8, to / 8);
            ((((ff * 9 + fr) * 8 + tf) * 8 + tr) << 3) | promo
        }
        Order::SquareIndex => (((from * 64) + to) << 3) | promo,
    }
}

/// The legal moves of `pos` sorted by `order`.
///
/// ```
/// use chesspack::order::{sorted_moves, Order};
/// use shakmaty::{Chess, san::San};
///
/// let pos = Chess::default();
/// let moves = sorted_moves(&pos, Order::Thesis);
/// let sans: Vec<String> = moves.iter().map(|m| San::from_move(&pos, *m).to_string()).collect();
/// assert_eq!(sans[..4], ["a3", "a4", "Na3", "Nc3"]);
/// ```
pub fn sorted_moves(pos: &Chess, order: Order) -> shakmaty::MoveList {
    sort(pos.legal_moves(), order)
}

/// `moves` sorted by `order`. Keys are computed once and sorted as plain
/// integers (key and position packed in one `u32`), which is several times
/// faster than comparing moves by key.
pub fn sort(moves: shakmaty::MoveList, order: Order) -> shakmaty::MoveList {
    // Keys are below 2^16 and a move list holds at most 270 moves (the most
    // a legal position has), below 2^10.
    let mut packed = [0u32; 272];
    let packed = &mut packed[..moves.len()];
    for (i, (p, m)) in packed.iter_mut().zip(&moves).enumerate() {
        *p = (key(*m, order) << 10) | i as u32;
    }
    packed.sort_unstable();
    packed.iter().map(|p| moves[(p & 0x3ff) as usize]).collect()
}

/// The index of `m` among the legal moves of `pos` in `order`, with the
/// number of legal moves; `None` when `m` is not legal.
///
/// ```
/// use chesspack::order::{index_of, Order};
/// use shakmaty::{Chess, uci::UciMove};
///
/// let pos = Chess::default();
/// let e4 = "e2e4".parse::<UciMove>().unwrap().to_move(&pos).unwrap();
/// assert_eq!(index_of(&pos, e4, Order::SquareIndex), Some((13, 20)));
/// ```
pub fn index_of(pos: &Chess, m: Move, order: Order) -> Option<(usize, usize)> {
    let moves = pos.legal_moves();
    if !moves.contains(&m) {
        return None;
    }
    let k = key(m, order);
    let below = moves.iter().filter(|o| key(**o, order) < k).count();
    Some((below, moves.len()))
}
