//! Sparse binary features of a move in its position.

use shakmaty::{
    Bitboard, Chess, Color, Move, Piece, Position, Role, Square,
    attacks::{self, pawn_attacks},
};

use super::{
    GameContext,
    book::{Entry, MIN_TOTAL, move_key},
    context::{CLOCK_CLASSES, RATING_CLASSES, SPEED_CLASSES},
};
use crate::engine::{see, see_unanswered};

const PHASES: usize = 3;
// Feature groups: (offset, size).
const TO: usize = 0; // phase × role × square
const FROM: usize = TO + PHASES * 6 * 64;
const CAPTURE: usize = FROM + PHASES * 6 * 64; // victim × attacker
const SEE: usize = CAPTURE + 6 * 6; // capture? × bucket
const CHECK: usize = SEE + 2 * 5; // role
const RECAPTURE: usize = CHECK + 6; // role
const FROM_ATTACKED: usize = RECAPTURE + 6; // role
const FROM_ATTACKED_LESSER: usize = FROM_ATTACKED + 6; // role
const TO_ATTACKED_PAWN: usize = FROM_ATTACKED_LESSER + 6; // role
const TO_ATTACKED: usize = TO_ATTACKED_PAWN + 6; // role
const TO_DEFENDED: usize = TO_ATTACKED + 6; // role
const TO_ATTACKED_LESSER: usize = TO_DEFENDED + 6; // role
const CASTLE: usize = TO_ATTACKED_LESSER + 6; // side
const PROMOTION: usize = CASTLE + 2; // role
const KING_DISTANCE: usize = PROMOTION + 6; // role × distance
const SAME_PIECE: usize = KING_DISTANCE + 6 * 8; // role
const EVASION: usize = SAME_PIECE + 6; // king / capture / block
const PASSED_PUSH: usize = EVASION + 3; // relative rank
const HANGING_CAPTURE: usize = PASSED_PUSH + 8; // victim undefended × victim role
const THREATENED_ESCAPE: usize = HANGING_CAPTURE + 6; // moving an attacked piece to a safe square, role
const BOOK: usize = THREATENED_ESCAPE + 6; // confidence × share bucket
const FROM_TO: usize = BOOK + 3 * 11; // relative from × to, pieces
const NEAR_LAST: usize = FROM_TO + 64 * 64; // role × distance to their last target
const MOBILITY: usize = NEAR_LAST + 6 * 8; // role × attacked squares from the target / 2
const THREATS: usize = MOBILITY + 6 * 8; // role × attacked enemy pieces worth more or undefended (0, 1, 2+)
const UNDO: usize = THREATS + 6 * 3; // role: back to where our last move came from
const CASTLING_LOST: usize = UNDO + 6; // king or rook move giving up castling rights
/// The number of features.
pub(crate) const N_FEATURES: usize = CASTLING_LOST + 2;
/// The most features a move has.
pub(crate) const MAX_ACTIVE: usize = 32;

/// The features of one move.
#[derive(Clone, Debug)]
pub(crate) struct Features {
    active: [u16; MAX_ACTIVE],
    len: usize,
}

impl Default for Features {
    fn default() -> Features {
        Features {
            active: [0; MAX_ACTIVE],
            len: 0,
        }
    }
}

impl Features {
    /// The indices of the features that are on.
    pub(crate) fn active(&self) -> &[u16] {
        &self.active[..self.len]
    }

    /// Every slot, the active features first ([`Features::active`]) and
    /// then whatever the rest holds.
    pub(crate) fn all(&self) -> &[u16; MAX_ACTIVE] {
        &self.active
    }

    fn push(&mut self, i: usize) {
        debug_assert!(i < N_FEATURES);
        self.push_index(i);
    }

    pub(crate) fn push_index(&mut self, i: usize) {
        self.active[self.len] = i as u16;
        self.len += 1;
    }

    #[cfg(any(test, feature = "train"))]
    pub(crate) fn clear(&mut self) {
        self.len = 0;
    }
}

fn role_index(r: Role) -> usize {
    r as usize - 1
}

/// The move features a model reads: every one, or all but those that
/// cost most to work out (a quicker, less exact model).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum FeatureSet {
    /// Every feature (the `model` codec's).
    #[default]
    Full,
    /// Every feature but the static exchange and what the moved piece
    /// attacks from its target (check, mobility, threats): the features
    /// that each legal move pays for with an exchange or an attack map of
    /// its own (the `brisk` codec's).
    Quick,
}

/// What is computed once per position for the features of all its moves.
pub(crate) struct Context<'a> {
    /// Which features [`Context::features`] gives.
    set: FeatureSet,
    /// The opening book's counts here, with the total.
    book: Option<(Entry<'a>, u32)>,
    /// A move whose one count is left out (the move being trained on).
    exclude: Option<u16>,
    us: Color,
    phase: usize,
    /// Squares attacked by the opponent: by pawns, by any piece, and by
    /// pieces less valuable than each of our roles.
    their_pawn_attacks: Bitboard,
    their_attacks: Bitboard,
    their_lesser: [Bitboard; 6],
    /// Squares attacked by our pieces at least once and at least twice.
    ours_once: Bitboard,
    ours_twice: Bitboard,
    their_king: Square,
    /// Their pieces but the king: what a threat can hit.
    their_pieces: Bitboard,
    /// Their pieces worth more than each of our roles, or undefended: a
    /// piece of that role attacking one threatens it.
    threatened_by: [Bitboard; 6],
    /// Where our last move came from.
    our_last_from: Option<Square>,
    /// Our castling rooks' squares (rights still held).
    our_castling: Bitboard,
    /// Target square of the opponent's last move and of our last move.
    their_last: Option<Square>,
    our_last: Option<Square>,
    checkers: Bitboard,
    their_pawns: Bitboard,
    /// The squares a move of ours must leave to uncover a check: the first
    /// piece on each line from their king (every square if one of our
    /// sliders already reaches it, which no legal position has).
    uncovers: Bitboard,
}

fn value(r: Role) -> u32 {
    match r {
        Role::Pawn => 1,
        Role::Knight | Role::Bishop => 3,
        Role::Rook => 5,
        Role::Queen => 9,
        Role::King => 100,
    }
}

/// What every piece of a position attacks, worked out once for both the
/// move features ([`Context`]) and the hidden layer's inputs ([`Inputs`]).
pub(crate) struct Attacks {
    /// The squares the side to move's pieces (0) and the opponent's (1)
    /// attack, by role.
    by_role: [[Bitboard; 6]; 2],
    /// The squares at least two of the side to move's pieces attack.
    ours_twice: Bitboard,
}

impl Attacks {
    /// The attacks of the pieces of `pos`.
    pub(crate) fn of(pos: &Chess) -> Attacks {
        let board = pos.board();
        let us = pos.turn();
        let occ = board.occupied();
        let mut by_role = [[Bitboard::EMPTY; 6]; 2];
        let (mut once, mut twice) = (Bitboard::EMPTY, Bitboard::EMPTY);
        for sq in occ {
            let piece = board.piece_at(sq).expect("occupied");
            let a = attacks::attacks(sq, piece, occ);
            let side = usize::from(piece.color != us);
            by_role[side][role_index(piece.role)] |= a;
            if side == 0 {
                twice |= once & a;
                once |= a;
            }
        }
        Attacks {
            by_role,
            ours_twice: twice,
        }
    }

    /// Every square the pieces of `side` (0: the side to move) attack.
    fn all(&self, side: usize) -> Bitboard {
        self.by_role[side]
            .iter()
            .fold(Bitboard::EMPTY, |a, &b| a | b)
    }
}

impl<'a> Context<'a> {
    /// The context of `pos`, reached by `history` (oldest first), with the
    /// book's entry for `pos`. `exclude` leaves one count of that move out
    /// of the entry (training on a game the book was counted from).
    #[cfg(any(test, feature = "train"))]
    pub(crate) fn new(
        pos: &Chess,
        history: &[Move],
        book: Option<Entry<'a>>,
        exclude: Option<Move>,
    ) -> Context<'a> {
        Context::with_attacks(pos, history, book, exclude, &Attacks::of(pos))
    }

    /// [`Context::new`] with the position's [`Attacks`].
    pub(crate) fn with_attacks(
        pos: &Chess,
        history: &[Move],
        book: Option<Entry<'a>>,
        exclude: Option<Move>,
        attacked: &Attacks,
    ) -> Context<'a> {
        let exclude = exclude.map(move_key);
        let book = book.and_then(|e| {
            let total = e.total - u32::from(exclude.is_some());
            (total >= MIN_TOTAL).then_some((e, total))
        });
        let board = pos.board();
        let us = pos.turn();
        let them = !us;
        let occ = board.occupied();
        let by_role = attacked.by_role[1];
        let their_attacks = attacked.all(1);
        let mut their_lesser = [Bitboard::EMPTY; 6];
        for r in Role::ALL {
            let mut b = Bitboard::EMPTY;
            for other in Role::ALL {
                if value(other) < value(r) {
                    b |= by_role[role_index(other)];
                }
            }
            their_lesser[role_index(r)] = b;
        }
        let (once, twice) = (attacked.all(0), attacked.ours_twice);
        let material: u32 = [Role::Knight, Role::Bishop, Role::Rook, Role::Queen]
            .iter()
            .map(|&r| {
                board.by_role(r).count() as u32
                    * match r {
                        Role::Queen => 4,
                        Role::Rook => 2,
                        _ => 1,
                    }
            })
            .sum();
        let phase = match material {
            20.. => 0,
            10..=19 => 1,
            _ => 2,
        };
        let n = history.len();
        let their_king = board.king_of(them).unwrap_or(Square::E1);
        let threatened_by = Role::ALL.map(|r| {
            let mut b = board.by_color(them) & !their_attacks;
            for other in Role::ALL {
                if value(other) > value(r) {
                    b |= board.by_color(them) & board.by_role(other);
                }
            }
            b
        });
        let lines = (
            attacks::bishop_attacks(their_king, occ),
            attacks::rook_attacks(their_king, occ),
        );
        let ours = board.by_color(us);
        let uncovers = if (lines.0 & (board.bishops() | board.queens()) & ours).any()
            || (lines.1 & (board.rooks() | board.queens()) & ours).any()
        {
            Bitboard::FULL
        } else {
            lines.0 | lines.1
        };
        Context {
            set: FeatureSet::Full,
            book,
            exclude,
            us,
            phase,
            their_pawn_attacks: by_role[0],
            their_attacks,
            their_lesser,
            ours_once: once,
            ours_twice: twice,
            their_king,
            their_pieces: board.by_color(them).without(their_king),
            threatened_by,
            our_last_from: n.checked_sub(2).and_then(|i| history[i].from()),
            our_castling: pos.castles().castling_rights() & board.by_color(us),
            their_last: n.checked_sub(1).map(|i| target(history[i])),
            our_last: n.checked_sub(2).map(|i| target(history[i])),
            checkers: pos.checkers(),
            their_pawns: board.by_piece(Piece {
                color: them,
                role: Role::Pawn,
            }),
            uncovers,
        }
    }

    /// This context giving the features of `set`.
    pub(crate) fn with_set(self, set: FeatureSet) -> Context<'a> {
        Context { set, ..self }
    }

    fn relative(&self, sq: Square) -> usize {
        match self.us {
            Color::White => usize::from(sq),
            Color::Black => usize::from(sq) ^ 56,
        }
    }

    /// Fills `f` with the features of `m`, a legal move of `pos` (the
    /// position this context was made for).
    pub(crate) fn features(&self, pos: &Chess, m: Move, f: &mut Features) {
        f.len = 0;
        let role = m.role();
        let r = role_index(role);
        let to = target(m);
        let from = m.from().unwrap_or(to);
        if let Some(book) = self.book_feature(m) {
            f.push(book);
        }
        f.push(TO + (self.phase * 6 + r) * 64 + self.relative(to));
        f.push(FROM + (self.phase * 6 + r) * 64 + self.relative(from));

        if role != Role::Pawn {
            f.push(FROM_TO + self.relative(from) * 64 + self.relative(to));
        }
        if let Some(last) = self.their_last {
            f.push(NEAR_LAST + r * 8 + distance(to, last));
        }
        if let Move::Castle { king, rook } = m {
            f.push(CASTLE + usize::from(rook.file() > king.file()));
            return;
        }
        let capture = m.capture();
        if let Some(victim) = capture {
            f.push(CAPTURE + role_index(victim) * 6 + r);
            if !self.their_attacks.contains(to) {
                f.push(HANGING_CAPTURE + role_index(victim));
            }
        }
        let full = self.set == FeatureSet::Full;
        // What the moved piece attacks from its target (a pawn's attacks
        // do not depend on the board, so en passant's second empty square
        // does not matter): the full set's.
        let mut after = Bitboard::EMPTY;
        if full {
            f.push(SEE + usize::from(capture.is_some()) * 5 + self.see_bucket(pos, m));
            let occ = pos.board().occupied().without(from).with(to);
            after = attacks::attacks(
                to,
                Piece {
                    color: self.us,
                    role: m.promotion().unwrap_or(role),
                },
                occ,
            );
            if self.gives_check(pos, m, after) {
                f.push(CHECK + r);
            }
        }
        if capture.is_some() && self.their_last == Some(to) {
            f.push(RECAPTURE + r);
        }
        let from_attacked = self.their_attacks.contains(from);
        if from_attacked {
            f.push(FROM_ATTACKED + r);
        }
        let from_lesser = self.their_lesser[r].contains(from);
        if from_lesser {
            f.push(FROM_ATTACKED_LESSER + r);
        }
        let to_attacked = self.their_attacks.contains(to);
        if self.their_pawn_attacks.contains(to) {
            f.push(TO_ATTACKED_PAWN + r);
        }
        if to_attacked {
            f.push(TO_ATTACKED + r);
        }
        if self.their_lesser[r].contains(to) {
            f.push(TO_ATTACKED_LESSER + r);
        }
        // A piece attacks the square of its legal move (the line to it is
        // open); a pawn only that of a capture.
        let mover_attacks_to = role != Role::Pawn || pawn_attacks(self.us, from).contains(to);
        debug_assert_eq!(
            mover_attacks_to,
            self.attacks_from(pos, role, from).contains(to)
        );
        let defended = if mover_attacks_to {
            self.ours_twice.contains(to)
        } else {
            self.ours_once.contains(to)
        };
        if defended {
            f.push(TO_DEFENDED + r);
        }
        if (from_attacked || from_lesser) && !to_attacked {
            f.push(THREATENED_ESCAPE + r);
        }
        if let Some(p) = m.promotion() {
            f.push(PROMOTION + role_index(p));
        }
        f.push(KING_DISTANCE + r * 8 + distance(to, self.their_king));
        if full {
            self.reach_features(pos, role, to, after, f);
        }
        if self.our_last_from == Some(to) {
            f.push(UNDO + r);
        }
        if self.our_castling.any()
            && let Some(lost) = self.castling_lost(role, from)
        {
            f.push(CASTLING_LOST + lost);
        }
        if self.our_last == Some(from) {
            f.push(SAME_PIECE + r);
        }
        if self.checkers.any() {
            f.push(EVASION + self.evasion_kind(role, capture.is_some(), to));
        }
        if role == Role::Pawn
            && capture.is_none()
            && let Some(rank) = self.passed_rank(to)
        {
            f.push(PASSED_PUSH + rank);
        }
    }

    /// The full set's features of what the piece of `role` moved to `to`
    /// attacks from there (`after`): its mobility and threats.
    #[inline]
    fn reach_features(
        &self,
        pos: &Chess,
        role: Role,
        to: Square,
        after: Bitboard,
        f: &mut Features,
    ) {
        let r = role_index(role);
        if matches!(role, Role::Knight | Role::Bishop | Role::Rook | Role::Queen) {
            let reach = (after & !pos.board().by_color(self.us)).count();
            f.push(MOBILITY + r * 8 + (reach / 2).min(7));
        }
        // Threats: enemy pieces the moved piece attacks that are worth
        // more than it or undefended (the king excluded).
        let targets = after & self.their_pieces.without(to) & self.threatened_by[r];
        f.push(THREATS + r * 3 + (targets.count()).min(2));
    }

    /// How a move of `role` to `to` answers a check: the king moves, the
    /// checker is taken (`capture`), or another move.
    #[inline]
    fn evasion_kind(&self, role: Role, capture: bool, to: Square) -> usize {
        if role == Role::King {
            0
        } else if capture && self.checkers.contains(to) {
            1
        } else {
            2
        }
    }

    /// The castling a move of `role` from `from` gives up: all (a king's
    /// move) or one side's (a rook's from its square).
    #[inline]
    fn castling_lost(&self, role: Role, from: Square) -> Option<usize> {
        if role == Role::King {
            Some(0)
        } else if role == Role::Rook && self.our_castling.contains(from) {
            Some(1)
        } else {
            None
        }
    }

    /// The book feature of `m`: its share of the book position's games and
    /// how many games the position has.
    #[inline]
    fn book_feature(&self, m: Move) -> Option<usize> {
        let (entry, total) = self.book?;
        let k = move_key(m);
        let count = entry
            .count(k)
            .saturating_sub(u32::from(self.exclude == Some(k)));
        let share = if count == 0 {
            10
        } else {
            let mut b = 0;
            while b < 9 && count << (b + 1) <= total {
                b += 1;
            }
            b
        };
        let confidence = match total {
            ..50 => 0,
            50..500 => 1,
            _ => 2,
        };
        Some(BOOK + confidence * 11 + share)
    }

    /// The bucket of `m`'s static exchange evaluation.
    #[inline]
    fn see_bucket(&self, pos: &Chess, m: Move) -> usize {
        let s = see_unanswered(m, self.their_attacks).unwrap_or_else(|| see(pos, m));
        match s {
            ..-200 => 0,
            -200..0 => 1,
            0 => 2,
            1..200 => 3,
            _ => 4,
        }
    }

    /// The squares a piece of the mover's of `role` on `from` attacks.
    fn attacks_from(&self, pos: &Chess, role: Role, from: Square) -> Bitboard {
        match role {
            Role::Pawn => pawn_attacks(self.us, from),
            _ => attacks::attacks(
                from,
                Piece {
                    color: self.us,
                    role,
                },
                pos.board().occupied(),
            ),
        }
    }

    /// The mover's rank of `to` where a pawn that moves there is passed:
    /// no enemy pawn ahead on this or the adjacent files.
    #[inline]
    fn passed_rank(&self, to: Square) -> Option<usize> {
        let file = u32::from(to.file());
        let mut ahead = 0u64;
        for f in file.saturating_sub(1)..=(file + 1).min(7) {
            ahead |= 0x0101_0101_0101_0101u64 << f;
        }
        let rank = u32::from(to.rank()) as usize;
        let below = |ranks: usize| {
            (1u64 << (8 * ranks).min(63)).wrapping_sub(1) | if ranks >= 8 { u64::MAX } else { 0 }
        };
        let in_front = match self.us {
            Color::White => Bitboard(ahead & !below(rank + 1)),
            Color::Black => Bitboard(ahead & below(rank)),
        };
        if (in_front & self.their_pawns).any() {
            return None;
        }
        Some(if self.us == Color::White {
            rank
        } else {
            7 - rank
        })
    }
}

/// The number of inputs of the hidden layer that the position gives (see
/// [`Inputs`]): what models before the game context had.
pub(crate) const POSITION_INPUTS: usize = 12 * 64 + 64 + 4 + 2 * 64 + 1;

/// Where the context inputs start: the mover's rating band, the
/// opponent's, the time-control class ([`GameContext`]).
const CONTEXT: usize = POSITION_INPUTS;

/// The number of inputs of the hidden layer of models with the game
/// context but neither the earlier moves nor the clocks (weights
/// 1f42d4b148375afd).
pub(crate) const CONTEXT_INPUTS: usize = CONTEXT + 2 * RATING_CLASSES + SPEED_CLASSES;

/// Where the earlier moves' inputs start: the target square of the side
/// to move's own last move, then of the opponent's move before its last.
const EARLIER: usize = CONTEXT_INPUTS;

/// Where the clock inputs start: the clock class of the side to move, then
/// of its opponent ([`GameContext::with_clocks`]).
const CLOCKS: usize = EARLIER + 2 * 64;

/// The number of inputs of the hidden layer: the position's, the game
/// context's, the earlier moves', then the clocks'.
pub(crate) const N_INPUTS: usize = CLOCKS + 2 * CLOCK_CLASSES;

/// The most inputs a position has (every square occupied, the last
/// move's target, four castling rights, pieces en prise, check, the
/// three context inputs, the two earlier moves' targets and the two
/// clocks).
pub(crate) const MAX_INPUTS: usize = 64 + 1 + 4 + 64 + 1 + 3 + 2 + 2;

/// The sparse inputs of the model's hidden layer for one position (see
/// [`Inputs::new`]).
#[derive(Clone, Debug)]
pub(crate) struct Inputs {
    active: [u16; MAX_INPUTS],
    len: usize,
}

impl Inputs {
    #[cfg(any(test, feature = "train"))]
    /// The inputs of `pos` reached by `history`, seen from the side to
    /// move: every piece (ours or theirs × role × square, the board
    /// flipped for black), the target square of the opponent's last move,
    /// and the castling rights held (ours, theirs × king side, queen side),
    /// pieces en prise and check; then an unknown game context (see
    /// [`Inputs::in_context`]); then the target squares of the side to
    /// move's own last move and of the opponent's move before its last;
    /// then the clock classes of the side to move and of its opponent
    /// (unknown without clocks).
    pub(crate) fn new(pos: &Chess, history: &[Move]) -> Inputs {
        Inputs::in_context(pos, history, &GameContext::new())
    }

    /// [`Inputs::new`] in a game's context: the rating band of the side to
    /// move, of its opponent, and the time-control class, each one input
    /// (band 0: unknown).
    #[cfg(any(test, feature = "train"))]
    pub(crate) fn in_context(pos: &Chess, history: &[Move], game: &GameContext) -> Inputs {
        Inputs::with_attacks(pos, history, game, &Attacks::of(pos))
    }

    /// [`Inputs::in_context`] with the position's [`Attacks`].
    pub(crate) fn with_attacks(
        pos: &Chess,
        history: &[Move],
        game: &GameContext,
        attacked: &Attacks,
    ) -> Inputs {
        let mut out = Inputs {
            active: [0; MAX_INPUTS],
            len: 0,
        };
        let mut push = |i: usize| {
            debug_assert!(i < N_INPUTS);
            out.active[out.len] = i as u16;
            out.len += 1;
        };
        let us = pos.turn();
        let flip = if us == Color::White { 0 } else { 56 };
        let board = pos.board();
        for sq in board.occupied() {
            let piece = board.piece_at(sq).expect("occupied");
            let side = usize::from(piece.color != us);
            push((side * 6 + role_index(piece.role)) * 64 + (usize::from(sq) ^ flip));
        }
        if let Some(&m) = history.last() {
            push(12 * 64 + (usize::from(target(m)) ^ flip));
        }
        let rights = pos.castles().castling_rights();
        for (i, color) in [us, !us].into_iter().enumerate() {
            let king_file = board.king_of(color).map_or(shakmaty::File::E, |k| k.file());
            let rooks = rights & board.by_color(color) & Bitboard::from_rank(color.backrank());
            for (j, king_side) in [true, false].into_iter().enumerate() {
                if rooks
                    .into_iter()
                    .any(|sq| (sq.file() > king_file) == king_side)
                {
                    push(12 * 64 + 64 + i * 2 + j);
                }
            }
        }
        // Pieces en prise: attacked and undefended, or attacked by a
        // lesser piece; ours, then theirs.
        let attacks_by = &attacked.by_role;
        for side in 0..2 {
            let enemy = attacks_by[1 - side];
            let (all_enemy, all_own) = (attacked.all(1 - side), attacked.all(side));
            let color = if side == 0 { us } else { !us };
            for sq in board.by_color(color) & all_enemy {
                let role = board.role_at(sq).expect("occupied");
                if role == Role::King {
                    continue;
                }
                let lesser = Role::ALL
                    .iter()
                    .filter(|&&r| value(r) < value(role))
                    .fold(Bitboard::EMPTY, |a, &r| a | enemy[role_index(r)]);
                if !all_own.contains(sq) || lesser.contains(sq) {
                    push(12 * 64 + 64 + 4 + side * 64 + (usize::from(sq) ^ flip));
                }
            }
        }
        if pos.checkers().any() {
            push(POSITION_INPUTS - 1);
        }
        let (mover, opponent, speed) = game.classes(us == Color::White);
        push(CONTEXT + mover);
        push(CONTEXT + RATING_CLASSES + opponent);
        push(CONTEXT + 2 * RATING_CLASSES + speed);
        for (i, back) in [2, 3].into_iter().enumerate() {
            if let Some(&m) = history.len().checked_sub(back).map(|j| &history[j]) {
                push(EARLIER + i * 64 + (usize::from(target(m)) ^ flip));
            }
        }
        let (mover, opponent) = game.clock_classes(history.len());
        push(CLOCKS + mover);
        push(CLOCKS + CLOCK_CLASSES + opponent);
        out
    }

    /// The indices of the inputs that are on, below [`N_INPUTS`].
    pub(crate) fn active(&self) -> &[u16] {
        &self.active[..self.len]
    }
}

impl Context<'_> {
    /// Whether `m` (not castling) checks the enemy king, directly or by
    /// discovery.
    /// `after`: what the moved piece attacks from its target.
    #[inline]
    fn gives_check(&self, pos: &Chess, m: Move, after: Bitboard) -> bool {
        let board = pos.board();
        let (Some(from), to) = (m.from(), m.to()) else {
            return false;
        };
        let king = self.their_king;
        if after.contains(king) {
            return true;
        }
        // A line to the king opens only where the move empties its first
        // square (en passant empties two).
        if !self.uncovers.contains(from) && !m.is_en_passant() {
            return false;
        }
        let mut occ = board.occupied().without(from).with(to);
        if m.is_en_passant() {
            occ = occ.without(Square::from_coords(to.file(), from.rank()));
        }
        let ours = board.by_color(self.us).without(from);
        let diagonal = (board.bishops() | board.queens()) & ours;
        let straight = (board.rooks() | board.queens()) & ours;
        (attacks::bishop_attacks(king, occ) & diagonal).any()
            || (attacks::rook_attacks(king, occ) & straight).any()
    }
}

/// The king's distance between two squares: the larger of their file and
/// rank distances.
#[inline]
fn distance(a: Square, b: Square) -> usize {
    let (a, b) = (usize::from(a), usize::from(b));
    (a & 7).abs_diff(b & 7).max((a >> 3).abs_diff(b >> 3))
}

/// The destination of a move (the rook's square for castling).
fn target(m: Move) -> Square {
    crate::order::target(m)
}

#[cfg(test)]
mod tests {
    use shakmaty::{CastlingMode, fen::Fen, san::San};

    use super::*;

    /// Where the shortcut gives a move's static exchange value, the
    /// evaluation gives the same: every move of the positions of random
    /// games, and of positions with lines through the mover.
    #[test]
    fn unanswered_moves_exchange_what_they_take() {
        let mut positions = crate::testing::random_game_positions(0x2545_f491_4f6c_dd1d, 40, 120);
        positions.extend(crate::testing::fen_positions(&[
            // A rook on a file behind our rook; a bishop's diagonal through a knight.
            "r3k3/8/8/8/R7/8/8/4K3 w - - 0 1",
            "4k3/8/8/1b6/8/3N4/8/4K3 w - - 0 1",
            "4k3/8/8/8/q2NK3/8/8/8 w - - 0 1",
            // Captures and promotions nothing answers, and one a line opens onto.
            "1n2k3/P7/8/3p4/4P3/8/8/4K3 w - - 0 1",
            "r3k3/8/8/8/p7/8/R7/4K3 w - - 0 1",
        ]));
        let (mut shortcuts, mut moves) = (0, 0);
        for pos in &positions {
            let ctx = Context::new(pos, &[], None, None);
            for m in pos.legal_moves() {
                moves += 1;
                if let Some(s) = see_unanswered(m, ctx.their_attacks) {
                    shortcuts += 1;
                    assert_eq!(see(pos, m), s, "{m:?} in {:?}", pos.board());
                }
            }
        }
        assert!(
            positions.len() > 3000 && shortcuts > moves / 4,
            "{shortcuts} of {moves}"
        );
    }

    /// The quick set is the full set without the static exchange, check,
    /// mobility and threat features, in the same order: every move of the
    /// positions of random games, with the last moves as history.
    #[test]
    fn quick_features_are_the_full_ones_without_the_costly_groups() {
        let costly = |i: usize| {
            (SEE..SEE + 10).contains(&i)
                || (CHECK..CHECK + 6).contains(&i)
                || (MOBILITY..MOBILITY + 6 * 8).contains(&i)
                || (THREATS..THREATS + 6 * 3).contains(&i)
        };
        let positions = crate::testing::random_game_positions(0x0bad_cafe_f00d_d00d, 20, 100);
        let (mut full_f, mut quick_f) = (Features::default(), Features::default());
        let (mut dropped, mut kept) = (0, 0);
        for pos in &positions {
            let full = Context::new(pos, &[], None, None);
            let quick = Context::new(pos, &[], None, None).with_set(FeatureSet::Quick);
            for m in pos.legal_moves() {
                full.features(pos, m, &mut full_f);
                quick.features(pos, m, &mut quick_f);
                let expected: Vec<u16> = full_f
                    .active()
                    .iter()
                    .copied()
                    .filter(|&i| !costly(usize::from(i)))
                    .collect();
                assert_eq!(quick_f.active(), expected, "{m:?} in {:?}", pos.board());
                dropped += full_f.len - quick_f.len;
                kept += quick_f.len;
            }
        }
        // Every move but castling has a static exchange feature.
        assert!(dropped > kept / 10, "{dropped} dropped, {kept} kept");
    }

    fn setup(fen: &str, san: &str) -> (Chess, Move) {
        let pos: Chess = fen
            .parse::<Fen>()
            .unwrap()
            .into_position(CastlingMode::Standard)
            .unwrap();
        let m = san.parse::<San>().unwrap().to_move(&pos).unwrap();
        (pos, m)
    }

    fn has(fen: &str, san: &str, history: &[Move], group: usize, size: usize) -> bool {
        let (pos, m) = setup(fen, san);
        let ctx = Context::new(&pos, history, None, None);
        let mut f = Features::default();
        ctx.features(&pos, m, &mut f);
        f.active()
            .iter()
            .any(|&i| (group..group + size).contains(&usize::from(i)))
    }

    /// The check feature is whether the move checks, by shakmaty's rules:
    /// every move but castling of the positions of random games, and of
    /// positions with discovered checks, en passant and promotions.
    #[test]
    fn gives_check_agrees_with_the_rules() {
        let mut positions = crate::testing::random_game_positions(0x9e37_79b9_7f4a_7c15, 60, 160);
        positions.extend(crate::testing::fen_positions(&[
            // En passant uncovering a rook's check, and a bishop's.
            "8/8/8/k2pP2R/8/8/8/4K3 w - d6 0 1",
            "8/8/8/3pP3/8/8/1k6/4K2B w - d6 0 1",
            "7k/8/8/3pP3/8/8/8/B3K3 w - d6 0 1",
            // Promotions that check, and a pawn leaving a bishop's line.
            "3k4/1P6/8/8/8/8/8/4K3 w - - 0 1",
            "k7/8/8/8/8/5P2/8/4K2B w - - 0 1",
            "4k3/8/8/8/4N3/8/8/4RK2 w - - 0 1",
        ]));
        let (mut checks, mut moves) = (0, 0);
        for pos in &positions {
            let ctx = Context::new(pos, &[], None, None);
            for m in pos.legal_moves() {
                if m.is_castle() {
                    continue;
                }
                let (from, to) = (m.from().unwrap(), m.to());
                let piece = Piece {
                    color: pos.turn(),
                    role: m.promotion().unwrap_or(m.role()),
                };
                let after =
                    attacks::attacks(to, piece, pos.board().occupied().without(from).with(to));
                let mut next = pos.clone();
                next.play_unchecked(m);
                let want = next.is_check();
                assert_eq!(
                    ctx.gives_check(pos, m, after),
                    want,
                    "{m:?} in {:?}",
                    pos.board()
                );
                moves += 1;
                checks += usize::from(want);
            }
        }
        assert!(
            checks > 500 && moves > 50_000,
            "{checks} checks of {moves} moves"
        );
    }

    #[test]
    fn checks_direct_and_discovered() {
        // Direct: Bb5+ checks the king on e8.
        assert!(has("4k3/8/8/8/8/8/8/4KB2 w - - 0 1", "Bb5", &[], CHECK, 6));
        assert!(!has("4k3/8/8/8/8/8/8/4KB2 w - - 0 1", "Bc4", &[], CHECK, 6));
        // Discovered: the knight leaves the rook's file.
        assert!(has(
            "4k3/8/8/8/4N3/8/8/4RK2 w - - 0 1",
            "Nc3",
            &[],
            CHECK,
            6
        ));
    }

    #[test]
    fn passed_pawn_pushes_and_captures() {
        assert!(has(
            "4k3/8/8/8/8/8/P7/4K3 w - - 0 1",
            "a4",
            &[],
            PASSED_PUSH,
            8
        ));
        assert!(!has(
            "4k3/1p6/8/8/8/8/P7/4K3 w - - 0 1",
            "a4",
            &[],
            PASSED_PUSH,
            8
        ));
        // Black's pawn on h2 is passed too (ranks counted from black's side).
        assert!(has(
            "4k3/7p/8/8/8/8/8/4K3 b - - 0 1",
            "h5",
            &[],
            PASSED_PUSH,
            8
        ));
        assert!(has(
            "4k3/8/8/3p4/4P3/8/8/4K3 w - - 0 1",
            "exd5",
            &[],
            CAPTURE,
            36
        ));
    }

    #[test]
    fn position_inputs() {
        let inputs = |fen: &str, history: &[Move]| {
            let pos: Chess = fen
                .parse::<Fen>()
                .unwrap()
                .into_position(CastlingMode::Standard)
                .unwrap();
            Inputs::new(&pos, history).active().to_vec()
        };
        let en_prise = 12 * 64 + 64 + 4;
        // White's knight on d4 attacked by the pawn on e5: ours en prise;
        // nothing of black's hangs; no castling rights, no check.
        let w = inputs("4k3/8/8/4p3/3N4/8/8/4K3 w - - 0 1", &[]);
        assert!(w.contains(&((en_prise + 27) as u16)));
        assert_eq!(w.len(), 4 + 1 + 3 + 2);
        // The same seen from black (board flipped, sides swapped): the
        // knight is theirs and en prise, on d5 from black's side.
        let b = inputs("4k3/8/8/4p3/3N4/8/8/4K3 b - - 0 1", &[]);
        assert!(b.contains(&((en_prise + 64 + (27 ^ 56)) as u16)));
        assert!(
            b.contains(&((64 * 6 + 64 + (27 ^ 56)) as u16)),
            "their knight"
        );
        // Castling rights, ours then theirs, king side first; check.
        let c = inputs("r3k3/8/8/8/8/8/8/4K2R w Kq - 0 1", &[]);
        assert!(c.contains(&((12 * 64 + 64) as u16)));
        assert!(c.contains(&((12 * 64 + 64 + 3) as u16)));
        let check = inputs("4k3/8/8/8/8/8/8/4KR2 b - - 0 1", &[]);
        assert!(!check.contains(&((POSITION_INPUTS - 1) as u16)));
        let check = inputs("4k3/8/8/8/8/8/8/3K1R2 w - - 0 1", &[]);
        assert!(!check.contains(&((POSITION_INPUTS - 1) as u16)));
        let check = inputs("4k3/8/8/8/8/8/8/3KR3 b - - 0 1", &[]);
        assert!(check.contains(&((POSITION_INPUTS - 1) as u16)));
        // The opponent's last target.
        let (pos, e4) = setup(
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
            "e4",
        );
        let mut after = pos.clone();
        after.play_unchecked(e4);
        let last = Inputs::new(&after, &[e4]);
        assert!(last.active().contains(&((12 * 64 + (28 ^ 56)) as u16)));
    }

    #[test]
    fn earlier_moves_inputs() {
        // After 1. e4 e5 2. Nf3, black to move: its own last move went to
        // e5, the opponent's move before its last to e4 (board flipped).
        let mut pos = Chess::default();
        let mut history = Vec::new();
        for san in ["e4", "e5", "Nf3"] {
            let m = san.parse::<San>().unwrap().to_move(&pos).unwrap();
            pos.play_unchecked(m);
            history.push(m);
        }
        let e4 = usize::from(shakmaty::Square::E4);
        let e5 = usize::from(shakmaty::Square::E5);
        let active = Inputs::new(&pos, &history);
        let earlier: Vec<usize> = active
            .active()
            .iter()
            .map(|&i| usize::from(i))
            .filter(|i| (EARLIER..CLOCKS).contains(i))
            .collect();
        assert_eq!(earlier, [EARLIER + (e5 ^ 56), EARLIER + 64 + (e4 ^ 56)]);
        assert!(earlier.iter().all(|&i| i < N_INPUTS));
        // One move of history gives neither.
        assert!(
            Inputs::new(&pos, &history[2..])
                .active()
                .iter()
                .all(|&i| !(EARLIER..CLOCKS).contains(&usize::from(i)))
        );
    }

    #[test]
    fn context_inputs() {
        use crate::model::TimeControl;
        let rated = GameContext::new()
            .with_ratings(Some(1500), Some(2500))
            .with_time_control(TimeControl::parse(b"180+2"));
        let (pos, e4) = setup(
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
            "e4",
        );
        let ctx = |mover: usize, opponent: usize, speed: usize| {
            [
                (CONTEXT + mover) as u16,
                (CONTEXT + RATING_CLASSES + opponent) as u16,
                (CONTEXT + 2 * RATING_CLASSES + speed) as u16,
            ]
        };
        // White (1500: band 5) to move against 2500 (band 10), blitz (3).
        let has =
            |inputs: &Inputs, want: [u16; 3]| want.iter().all(|i| inputs.active().contains(i));
        let white = Inputs::in_context(&pos, &[], &rated);
        assert!(has(&white, ctx(5, 10, 3)));
        // After 1. e4 the mover is black: the bands swap.
        let mut after = pos.clone();
        after.play_unchecked(e4);
        let black = Inputs::in_context(&after, &[e4], &rated);
        assert!(has(&black, ctx(10, 5, 3)));
        // Unknown context: band 0 of each.
        assert!(has(&Inputs::new(&pos, &[]), ctx(0, 0, 0)));
        assert!(white.active().iter().all(|&i| usize::from(i) < N_INPUTS));
    }

    #[test]
    fn clock_inputs() {
        use crate::model::TimeControl;
        let (pos, e4) = setup(
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
            "e4",
        );
        let clocks = |mover: usize, opponent: usize| {
            [
                (CLOCKS + mover) as u16,
                (CLOCKS + CLOCK_CLASSES + opponent) as u16,
            ]
        };
        let bullet = GameContext::new().with_time_control(TimeControl::parse(b"60+0"));
        // No clock readings: unknown, even with a time control.
        let none = Inputs::in_context(&pos, &[], &bullet);
        assert!(none.active().ends_with(&clocks(0, 0)));
        // Before the first moves, the base time (60 s: class 5, under 80);
        // after 1. e4 {58 s}, black (its base time) to move against 58 s.
        let timed = bullet.with_clocks(vec![Some(58)]);
        assert!(
            Inputs::in_context(&pos, &[], &timed)
                .active()
                .ends_with(&clocks(5, 5))
        );
        let mut after = pos.clone();
        after.play_unchecked(e4);
        let black = Inputs::in_context(&after, &[e4], &timed.clone().with_clocks(vec![Some(4)]));
        // 4 s on white's clock: class 1 (under 5).
        assert!(black.active().ends_with(&clocks(5, 1)));
        // Without a time control the first readings are unknown.
        let bare = GameContext::new().with_clocks(vec![Some(200)]);
        assert!(
            Inputs::in_context(&after, &[e4], &bare)
                .active()
                .ends_with(&clocks(0, 7))
        );
    }

    #[test]
    fn every_move_fits() {
        // The most features a move can have stay within MAX_ACTIVE, and
        // every index is in range (the debug assertion in push).
        let (pos, _) = setup(
            "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
            "Qxf6",
        );
        let history = pos.legal_moves().to_vec();
        let ctx = Context::new(&pos, &history, None, None);
        let mut f = Features::default();
        for m in pos.legal_moves() {
            ctx.features(&pos, m, &mut f);
            assert!(f.active().iter().all(|&i| usize::from(i) < N_FEATURES));
        }
    }
}

/// The examples of crate-private items, run as unit tests.
#[cfg(test)]
mod examples {
    #[test]
    fn example_features_inputs_new() {
        use crate::model::Inputs;
        let inputs = Inputs::new(&shakmaty::Chess::default(), &[]);
        assert_eq!(inputs.active().len(), 32 + 4 + 3 + 2);
    }

    #[test]
    fn example_features_inputs_in_context() {
        use crate::model::{GameContext, Inputs};

        let pos = shakmaty::Chess::default();
        let rated = GameContext::new().with_ratings(Some(1500), Some(1700));
        assert_ne!(
            Inputs::in_context(&pos, &[], &rated).active(),
            Inputs::new(&pos, &[]).active()
        );
    }
}
