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

use shakmaty::{Bitboard, Board, CastlingSide, Chess, Move, Position, Rank, Role, Square, attacks};

use crate::slide;

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
pub(crate) fn target(m: Move) -> Square {
    match m {
        Move::Castle { rook, .. } => rook,
        other => other.to(),
    }
}

/// The key's promotion part: none 0, knight 1, bishop 2, rook 3, queen 4,
/// anything else 5 (a king or pawn: not in chess).
#[inline]
pub(crate) fn promotion_key(promotion: Option<Role>) -> u32 {
    PROMOTION_KEY[promotion.map_or(0, |r| r as usize)]
}

/// The sort key of a move in an order: unique among the legal moves of any
/// position.
#[inline]
pub(crate) fn key(m: Move, order: Order) -> u32 {
    // Castling: king and rook square; a drop: origin 64.
    let from = m.from().map_or(64, usize::from);
    let to = usize::from(m.to());
    let promo = promotion_key(m.promotion());
    match order {
        Order::Thesis => THESIS_FROM[from & 127] | THESIS_TO[to & 63] | promo,
        Order::SquareIndex => (((from as u32 * 64) + to as u32) << 3) | promo,
    }
}

/// The bucket of a key (below 64: keys are below 2^16), in key order: the
/// moves from two origin squares in the thesis order. Decoders that look
/// for the move at a rank or a cumulative frequency walk the buckets first.
#[inline]
pub(crate) fn key_bucket(key: u32) -> usize {
    (key >> 10) as usize & 63
}

/// [`promotion_key`] by `role as usize` (pawn 1 … king 6), 0 for none.
const PROMOTION_KEY: [u32; 7] = [0, 5, 1, 2, 3, 4, 5];

/// The thesis key's origin part, `(file · 9 + rank) << 9`, by square (64:
/// a drop, rank 8 of file a; padded to 128 entries for an index masked
/// without a bounds check).
pub(crate) const THESIS_FROM: [u32; 128] = {
    let mut t = [0; 128];
    let mut sq = 0;
    while sq < 65 {
        let (ff, fr) = (sq as u32 % 8, sq as u32 / 8);
        t[sq] = (ff * 9 + fr) << 9;
        sq += 1;
    }
    t
};

/// The thesis key's target part, `(file · 8 + rank) << 3`, by square.
pub(crate) const THESIS_TO: [u32; 64] = {
    let mut t = [0; 64];
    let mut sq = 0;
    while sq < 64 {
        t[sq] = ((sq as u32 % 8) * 8 + sq as u32 / 8) << 3;
        sq += 1;
    }
    t
};

/// The thesis key of a move without promotion by `from · 64 + to`: the
/// sum of [`THESIS_FROM`] and [`THESIS_TO`] in one look.
pub(crate) static THESIS_KEY: [u32; 4096] = {
    let mut t = [0; 4096];
    let mut i = 0;
    while i < 4096 {
        t[i] = THESIS_FROM[i >> 6] | THESIS_TO[i & 63];
        i += 1;
    }
    t
};

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
pub(crate) fn sort(mut moves: shakmaty::MoveList, order: Order) -> shakmaty::MoveList {
    sort_in_place(&mut moves, order);
    moves
}

/// [`sort`] in place.
pub(crate) fn sort_in_place(moves: &mut shakmaty::MoveList, order: Order) {
    // Keys are below 2^16 and a move list holds at most 270 moves (the most
    // a legal position has), below 2^10.
    let mut packed = [0u32; 272];
    let packed = &mut packed[..moves.len()];
    for (i, (p, m)) in packed.iter_mut().zip(moves.iter()).enumerate() {
        *p = (key(*m, order) << 10) | i as u32;
    }
    packed.sort_unstable();
    let original = moves.clone();
    for (slot, p) in moves.iter_mut().zip(packed.iter()) {
        *slot = original[(p & 0x3ff) as usize];
    }
}

/// The index of `m` among the legal moves of `pos` in `order`, with the
/// number of legal moves; `None` when `m` is not legal (1. e4 is the 14th
/// of 20 by square index: a unit test below).
pub(crate) fn index_of(pos: &Chess, m: Move, order: Order) -> Option<(usize, usize)> {
    let moves = pos.legal_moves();
    // One pass: the moves with smaller keys, and one with the same key
    // (keys are unique among legal moves), which must be `m`.
    let k = key(m, order);
    let (mut below, mut same) = (0, usize::MAX);
    for (i, &o) in moves.iter().enumerate() {
        let ko = key(o, order);
        below += usize::from(ko < k);
        if ko == k {
            same = i;
        }
    }
    // Compared once: a move that is not legal can share a legal one's key.
    (moves.get(same) == Some(&m)).then_some((below, moves.len()))
}

/// `TRANSPOSED[sq]`: the square's place in the thesis order of squares
/// (file, then rank): `file · 8 + rank`. Its own inverse.
const TRANSPOSED: [u8; 64] = {
    let mut t = [0; 64];
    let mut sq = 0;
    while sq < 64 {
        t[sq] = ((sq % 8) * 8 + sq / 8) as u8;
        sq += 1;
    }
    t
};

/// The pieces of the side to move of `pos` that are pinned to its king
/// (on `king`): each alone between the king and an enemy slider on its line.
pub(crate) fn pinned(pos: &Chess, king: Square) -> Bitboard {
    let board = pos.board();
    let snipers = (attacks::rook_attacks(king, Bitboard::EMPTY) & board.rooks_and_queens())
        | (attacks::bishop_attacks(king, Bitboard::EMPTY) & board.bishops_and_queens());
    let mut pinned = Bitboard::EMPTY;
    for sniper in snipers & pos.them() {
        let between = attacks::between(king, sniper) & board.occupied();
        if !between.more_than_one() {
            pinned |= between & pos.us();
        }
    }
    pinned
}

/// The promotion pieces in key order ([`promotion_key`] 1 to 4).
const PROMOTIONS: [Role; 4] = [Role::Knight, Role::Bishop, Role::Rook, Role::Queen];

/// The legal moves of a position in the thesis order ([`Order::Thesis`]),
/// held as a set of targets for each origin square instead of a list: the
/// index of a move is the number of legal moves from the origins before
/// its own (by file, then rank) plus the moves from its origin to targets
/// before its own, so nothing is listed, keyed or sorted. A pawn's targets
/// on the last rank are four moves each (knight, bishop, rook, queen); a
/// king's targets include the rooks it may castle with (castling is keyed
/// as the king taking its rook); a pawn's include the en-passant square
/// when the capture is legal. The same indexes as [`index_of`] and [`nth`]
/// with [`Order::Thesis`], for about 40% fewer instructions a ply in the
/// `index` codec.
///
/// Out of check the targets come from attack tables (shakmaty's, and
/// small ones of this crate for rooks and queens), pins (a pinned piece
/// stays on the line of its king) and safe king squares;
/// castling and en passant from shakmaty's own generators; in check from
/// its legal moves.
#[derive(Clone, Debug)]
pub(crate) struct ThesisMoves {
    /// The board the moves are played on (moves are built from it).
    board: Board,
    /// The pieces of the side to move.
    us: Bitboard,
    /// The targets of each origin (only those in `origins` are read; the
    /// others are empty, so that a refill clears only the last origins).
    targets: [Bitboard; 64],
    /// The squares with at least one legal move from them.
    origins: Bitboard,
    /// The origins whose moves are promotions (four moves a target).
    promoting: Bitboard,
    /// The number of moves from each origin (only those in `origins` are
    /// read).
    counts: [u8; 64],
    len: usize,
}

impl Default for ThesisMoves {
    /// No moves (an empty board), to [`fill`](ThesisMoves::fill).
    fn default() -> ThesisMoves {
        ThesisMoves {
            board: Board::empty(),
            us: Bitboard::EMPTY,
            targets: [Bitboard::EMPTY; 64],
            origins: Bitboard::EMPTY,
            promoting: Bitboard::EMPTY,
            counts: [0; 64],
            len: 0,
        }
    }
}

impl ThesisMoves {
    /// The legal moves of `pos`.
    #[cfg(test)]
    pub(crate) fn new(pos: &Chess) -> ThesisMoves {
        let mut moves = ThesisMoves::default();
        moves.fill(pos);
        moves
    }

    /// Replaces these moves with the legal moves of `pos`: what
    /// [`ThesisMoves::new`] gives, without building a new set (the move
    /// coders refill one set a ply).
    pub(crate) fn fill(&mut self, pos: &Chess) {
        for from in self.origins {
            self.targets[from as usize & 63] = Bitboard::EMPTY;
        }
        self.board = pos.board().clone();
        self.us = pos.us();
        self.origins = Bitboard::EMPTY;
        self.promoting = Bitboard::EMPTY;
        self.len = 0;
        let turn = pos.turn();
        let Some(king) = self.board.king_of(turn) else {
            return;
        };
        if pos.checkers().any() {
            for m in pos.legal_moves() {
                if let Some(from) = m.from() {
                    self.add(from, Bitboard::from(target(m)));
                    if m.is_promotion() {
                        self.promoting.add(from);
                    }
                }
            }
        } else {
            self.quiet(pos, king);
        }
        for from in self.origins {
            let n = self.targets[from as usize & 63].count();
            // At most 27 targets, or 4 × 3 promoting ones: below 256.
            let n = if self.promoting.contains(from) {
                4 * n
            } else {
                n
            };
            self.counts[from as usize & 63] = n as u8;
            self.len += n;
        }
    }

    /// The targets of a position whose side to move is not in check.
    fn quiet(&mut self, pos: &Chess, king: Square) {
        let board = pos.board();
        let turn = pos.turn();
        let (us, them, occupied) = (pos.us(), pos.them(), board.occupied());
        let pinned = pinned(pos, king);
        // Each kind of piece by its bitboard: no lookup of the role.
        let free = !us;
        let pin = |from: Square, targets: Bitboard| {
            if pinned.contains(from) {
                targets & attacks::ray(king, from)
            } else {
                targets
            }
        };
        for from in board.knights() & us & !pinned {
            self.add(from, attacks::knight_attacks(from) & free);
        }
        for from in board.bishops() & us {
            self.add(
                from,
                pin(from, attacks::bishop_attacks(from, occupied) & free),
            );
        }
        for from in board.rooks() & us {
            self.add(from, pin(from, slide::rook_attacks(from, occupied) & free));
        }
        for from in board.queens() & us {
            self.add(from, pin(from, slide::queen_attacks(from, occupied) & free));
        }
        let step = turn.fold_wb(8, -8);
        let push_rank = Bitboard::from_rank(turn.fold_wb(Rank::Third, Rank::Sixth));
        let promoting = Bitboard::from_rank(turn.fold_wb(Rank::Seventh, Rank::Second));
        for from in board.pawns() & us {
            let mut targets = attacks::pawn_attacks(turn, from) & them;
            if let Some(one) = from.offset(step)
                && !occupied.contains(one)
            {
                targets.add(one);
                if push_rank.contains(one)
                    && let Some(two) = one.offset(step)
                    && !occupied.contains(two)
                {
                    targets.add(two);
                }
            }
            let targets = pin(from, targets);
            if targets.any() {
                self.add(from, targets);
                if promoting.contains(from) {
                    self.promoting.add(from);
                }
            }
        }
        // Out of check, so the king hides no square from a slider.
        let (rooks, bishops) = (
            board.rooks_and_queens() & them,
            board.bishops_and_queens() & them,
        );
        let (knights, pawns) = (board.knights() & them, board.pawns() & them);
        let their_king = board.kings() & them;
        let mut safe = Bitboard::EMPTY;
        for to in attacks::king_attacks(king) & !us {
            let attacked = (attacks::knight_attacks(to) & knights).any()
                || (attacks::pawn_attacks(turn, to) & pawns).any()
                || (attacks::king_attacks(to) & their_king).any()
                || (attacks::bishop_attacks(to, occupied) & bishops).any()
                || (slide::rook_attacks(to, occupied) & rooks).any();
            if !attacked {
                safe.add(to);
            }
        }
        self.add(king, safe);
        let castles = pos.castles();
        for side in [CastlingSide::KingSide, CastlingSide::QueenSide] {
            // shakmaty's first test, before it lists the move: a right
            // and nothing on the way.
            if castles.rook(turn, side).is_some()
                && (castles.path(turn, side) & occupied).is_empty()
            {
                for m in pos.castling_moves(side) {
                    self.add(king, Bitboard::from(target(m)));
                }
            }
        }
        if pos.maybe_ep_square().is_some() {
            for m in pos.en_passant_moves() {
                if let Some(from) = m.from() {
                    self.add(from, Bitboard::from(m.to()));
                }
            }
        }
    }

    fn add(&mut self, from: Square, targets: Bitboard) {
        if targets.any() {
            self.targets[from as usize & 63] |= targets;
            self.origins.add(from);
        }
    }

    /// The number of legal moves from `from` (an origin).
    fn count(&self, from: Square) -> usize {
        usize::from(self.counts[from as usize & 63])
    }

    /// The number of legal moves.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The index of `m` in the thesis order of the legal moves; `None` when
    /// `m` is not legal.
    pub(crate) fn index_of(&self, m: Move) -> Option<usize> {
        let from = m.from()?;
        let to = target(m);
        if !self.origins.contains(from) || !self.targets[from as usize & 63].contains(to) {
            return None;
        }
        let place = |sq: Square| TRANSPOSED[sq as usize & 63];
        // The origins before `from`: below it once transposed.
        let before: usize = (self.origins.flip_diagonal() & Bitboard((1u64 << place(from)) - 1))
            .into_iter()
            .map(|p| usize::from(self.counts[TRANSPOSED[p as usize & 63] as usize]))
            .sum();
        // The origin's targets before `to`: below it once transposed.
        let below = Bitboard((1u64 << place(to)) - 1);
        let earlier = (self.targets[from as usize & 63].flip_diagonal() & below).count();
        let (index, promotion) = if self.promoting.contains(from) {
            let p = promotion_key(m.promotion()) as usize;
            if !(1..=4).contains(&p) {
                return None;
            }
            (before + 4 * earlier + p - 1, p - 1)
        } else {
            (before + earlier, 0)
        };
        // Compared once: an illegal move can share a legal one's squares.
        (self.build(from, to, promotion) == m).then_some(index)
    }

    /// The move at `index` in the thesis order; `None` past the last.
    pub(crate) fn nth(&self, mut index: usize) -> Option<Move> {
        if index >= self.len {
            return None;
        }
        // Origins in thesis order: the transposed bitboard's bits, low first.
        for place in self.origins.flip_diagonal() {
            let from = Square::new(u32::from(TRANSPOSED[place as usize & 63]));
            let count = self.count(from);
            if index >= count {
                index -= count;
                continue;
            }
            let per_target = if self.promoting.contains(from) { 4 } else { 1 };
            let to = self.targets[from as usize & 63]
                .flip_diagonal()
                .into_iter()
                .nth(index / per_target)?;
            let to = Square::new(u32::from(TRANSPOSED[to as usize & 63]));
            return Some(self.build(from, to, index % per_target));
        }
        None
    }

    /// The move from `from` to `to` (the rook for castling) of the legal
    /// ones, with promotion `PROMOTIONS[promotion]` where `from` promotes.
    fn build(&self, from: Square, to: Square, promotion: usize) -> Move {
        let board = &self.board;
        let role = board.role_at(from).unwrap_or(Role::Pawn);
        if role == Role::King && self.us.contains(to) {
            Move::Castle {
                king: from,
                rook: to,
            }
        } else if role == Role::Pawn && from.file() != to.file() && !board.occupied().contains(to) {
            Move::EnPassant { from, to }
        } else {
            Move::Normal {
                role,
                from,
                capture: board.role_at(to),
                to,
                promotion: self
                    .promoting
                    .contains(from)
                    .then(|| PROMOTIONS[promotion & 3]),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Checks [`ThesisMoves`] against the sorted legal moves of `pos`:
    /// every index both ways, the count, and moves that are not legal; a
    /// new set and `reused` refilled (it held the previous position's).
    fn check_thesis_moves(pos: &Chess, reused: &mut ThesisMoves) {
        reused.fill(pos);
        check_thesis_set(pos, &ThesisMoves::new(pos));
        check_thesis_set(pos, reused);
    }

    fn check_thesis_set(pos: &Chess, moves: &ThesisMoves) {
        let sorted = sorted_moves(pos, Order::Thesis);
        let fen = shakmaty::fen::Fen::from_position(pos, shakmaty::EnPassantMode::Legal);
        assert_eq!(moves.len(), sorted.len(), "{fen}");
        for (i, &m) in sorted.iter().enumerate() {
            assert_eq!(moves.nth(i), Some(m), "{fen} {i}");
            assert_eq!(moves.index_of(m), Some(i), "{fen} {m:?}");
        }
        assert_eq!(moves.nth(sorted.len()), None);
        // Not legal: the other side's moves, other promotions, captures
        // that are not.
        if let Ok(other) = pos.clone().swap_turn() {
            for m in other.legal_moves() {
                if !sorted.contains(&m) {
                    assert_eq!(moves.index_of(m), None, "{fen} {m:?}");
                }
            }
        }
        for &m in &sorted {
            if let Move::Normal {
                role,
                from,
                capture,
                to,
                promotion,
            } = m
            {
                for other in [None, Some(Role::King), Some(Role::Pawn), Some(Role::Queen)] {
                    let wrong = Move::Normal {
                        role,
                        from,
                        capture,
                        to,
                        promotion: other,
                    };
                    if !sorted.contains(&wrong) {
                        assert_eq!(moves.index_of(wrong), None, "{fen} {wrong:?}");
                    }
                }
                let wrong = Move::Normal {
                    role,
                    from,
                    capture: Some(Role::Queen),
                    to,
                    promotion,
                };
                if !sorted.contains(&wrong) {
                    assert_eq!(moves.index_of(wrong), None, "{fen} {wrong:?}");
                }
            }
        }
    }

    #[test]
    fn thesis_moves_are_the_sorted_legal_moves() {
        use shakmaty::{CastlingMode, fen::Fen};
        // Pins, en passant (also one that would expose the king), checks,
        // promotions, castling through attacked squares, Chess960.
        let mut reused = ThesisMoves::default();
        let fens = [
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
            "8/8/8/KPp4r/8/8/8/7k w - c6 0 1",
            "8/8/8/1k6/2Pp4/8/8/3K4 b - c3 0 1",
            "4k3/8/8/8/1b6/8/3P4/4K3 w - - 0 1",
            "4k3/4r3/8/8/8/8/4B3/4K3 w - - 0 1",
            "r3k2r/1P6/8/8/8/8/6p1/R3K2R w KQkq - 0 1",
            "r3k2r/8/8/8/8/5b2/8/R3K2R w KQkq - 0 1",
            "4k3/8/8/8/8/8/3q4/4K3 w - - 0 1",
            "3rk3/8/8/8/8/8/8/R3K3 w Q - 0 1",
            "1r2k1r1/8/8/8/8/8/8/1R2K1R1 w GBgb - 0 1",
            "rk6/8/8/8/8/8/8/RK5R w HAa - 0 1",
            "2r1k3/1P6/8/8/8/8/8/4K3 w - - 0 1",
            "4k3/8/8/2b5/8/8/5P2/6K1 w - - 0 1",
        ];
        for fen in fens {
            let pos: Chess = fen
                .parse::<Fen>()
                .unwrap()
                .into_position(CastlingMode::Chess960)
                .unwrap();
            check_thesis_moves(&pos, &mut reused);
        }
        // Random games from the start and from Chess960 starts.
        let mut x = 0x2545_f491_4f6c_dd1du64;
        for game in 0..300 {
            let mut pos = if game % 3 == 0 {
                let fen = [
                    "bqnbrkrn/pppppppp/8/8/8/8/PPPPPPPP/BQNBRKRN w GEge - 0 1",
                    "rkrnbbqn/pppppppp/8/8/8/8/PPPPPPPP/RKRNBBQN w CAca - 0 1",
                    "nrkbbqrn/pppppppp/8/8/8/8/PPPPPPPP/NRKBBQRN w GBgb - 0 1",
                ][game % 9 / 3];
                fen.parse::<Fen>()
                    .unwrap()
                    .into_position(CastlingMode::Chess960)
                    .unwrap()
            } else {
                Chess::default()
            };
            for _ in 0..250 {
                check_thesis_moves(&pos, &mut reused);
                let legal = pos.legal_moves();
                if legal.is_empty() {
                    break;
                }
                let r = crate::hash::xorshift(&mut x) as usize;
                // Prefer captures and pawn moves now and then, so that games
                // reach promotions and bare kings.
                let pick = legal
                    .iter()
                    .copied()
                    .filter(|m| m.is_capture() || m.role() == Role::Pawn)
                    .nth(r % 7)
                    .filter(|_| r.is_multiple_of(3))
                    .unwrap_or(legal[r % legal.len()]);
                pos.play_unchecked(pick);
            }
        }
    }

    /// The key tables give the documented formula (issue 5's speed work
    /// replaced the arithmetic by tables).
    #[test]
    fn keys_follow_the_formula() {
        for from in 0..64u32 {
            for to in 0..64u32 {
                let m = Move::Normal {
                    role: Role::Queen,
                    from: Square::new(from),
                    capture: None,
                    to: Square::new(to),
                    promotion: None,
                };
                let (ff, fr, tf, tr) = (from % 8, from / 8, to % 8, to / 8);
                let thesis = (((ff * 9 + fr) * 8 + tf) * 8 + tr) << 3;
                assert_eq!(key(m, Order::Thesis), thesis);
                assert_eq!(key(m, Order::SquareIndex), (from * 64 + to) << 3);
            }
        }
        let keys: Vec<u32> = [
            None,
            Some(Role::Knight),
            Some(Role::Bishop),
            Some(Role::Rook),
            Some(Role::Queen),
            Some(Role::King),
            Some(Role::Pawn),
        ]
        .into_iter()
        .map(promotion_key)
        .collect();
        assert_eq!(keys, [0, 1, 2, 3, 4, 5, 5]);
        let drop = Move::Put {
            role: Role::Knight,
            to: Square::C3,
        };
        assert_eq!(key(drop, Order::Thesis), (((8 * 8) + 2) * 8 + 2) << 3);
        assert_eq!(key(drop, Order::SquareIndex), (64 * 64 + 18) << 3);
    }
}

/// The examples of crate-private items, run as unit tests.
#[cfg(test)]
mod examples {
    #[test]
    fn example_target() {
        use crate::order::target;
        use shakmaty::{Move, Square};

        let castle = Move::Castle {
            king: Square::E1,
            rook: Square::H1,
        };
        assert_eq!(target(castle), Square::H1);
    }

    #[test]
    fn example_key() {
        use crate::order::{Order, key};
        use shakmaty::{Move, Role, Square};

        let a3 = Move::Normal {
            role: Role::Pawn,
            from: Square::A2,
            capture: None,
            to: Square::A3,
            promotion: None,
        };
        let na3 = Move::Normal {
            role: Role::Knight,
            from: Square::B1,
            capture: None,
            to: Square::A3,
            promotion: None,
        };
        assert!(key(a3, Order::Thesis) < key(na3, Order::Thesis));
        assert!(key(na3, Order::SquareIndex) < key(a3, Order::SquareIndex));
    }

    #[test]
    fn example_sort_in_place() {
        use crate::order::{Order, sort_in_place, sorted_moves};
        use shakmaty::{Chess, Position};

        let pos = Chess::default();
        let mut moves = pos.legal_moves();
        sort_in_place(&mut moves, Order::SquareIndex);
        assert_eq!(moves, sorted_moves(&pos, Order::SquareIndex));
    }

    #[test]
    fn example_thesismoves() {
        use crate::order::{Order, ThesisMoves, index_of};
        use shakmaty::{Chess, uci::UciMove};

        let pos = Chess::default();
        let moves = ThesisMoves::new(&pos);
        let e4 = "e2e4".parse::<UciMove>().unwrap().to_move(&pos).unwrap();
        assert_eq!(moves.len(), 20);
        assert_eq!(
            moves.index_of(e4),
            index_of(&pos, e4, Order::Thesis).map(|(i, _)| i)
        );
        assert_eq!(moves.nth(moves.index_of(e4).unwrap()), Some(e4));
    }

    #[test]
    fn example_index_of() {
        use crate::order::{Order, index_of};
        use shakmaty::{Chess, uci::UciMove};

        let pos = Chess::default();
        let e4 = "e2e4".parse::<UciMove>().unwrap().to_move(&pos).unwrap();
        assert_eq!(index_of(&pos, e4, Order::SquareIndex), Some((13, 20)));
    }

    #[test]
    fn example_thesismoves_fill() {
        use crate::order::ThesisMoves;
        use shakmaty::{Chess, Position, uci::UciMove};

        let mut pos = Chess::default();
        let mut moves = ThesisMoves::new(&pos);
        let e4 = "e2e4".parse::<UciMove>().unwrap().to_move(&pos).unwrap();
        pos.play_unchecked(e4);
        moves.fill(&pos);
        assert_eq!(moves.len(), 20);
    }
}
