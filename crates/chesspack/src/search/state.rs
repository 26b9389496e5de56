//! What a game cannot undo: the pawns still on their home squares, the
//! material and each side's castling. A position can only be reached
//! while a game's state is the position's own, so a game's list of state
//! changes (one byte and a ply each) tells which plies of it could hold a
//! position, a material or a pattern without decoding its moves.

use shakmaty::{Bitboard, Board, Chess, Color, File, Move, Position, Rank, Role, Square};

/// The roles that count as material, in the order of [`State::material`].
const ROLES: [Role; 5] = [
    Role::Pawn,
    Role::Knight,
    Role::Bishop,
    Role::Rook,
    Role::Queen,
];

/// The pawns on their home squares, each side's pieces by role and
/// whether each side can no longer castle, in one word: bits 0–7 White's
/// pawns on a2–h2, 8–15 Black's on a7–h7, then a nibble a count, White's
/// pawns to queens from bit 16 and Black's from bit 36 (a side has at most
/// ten of a role: two and eight promoted), then bit 56 where White has no
/// castling right left and 57 where Black has none. A change of state
/// ([`change`], [`castling_codes`]) is then one addition
/// ([`State::apply`]), and two states are compared as numbers: a query
/// looks at millions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct State(u64);

/// Where each side's counts start in a [`State`].
const COUNTS: [u32; 2] = [16, 36];

/// The bits of a [`State`]'s counts.
const MATERIAL_BITS: u64 = ((1 << 40) - 1) << 16;

/// Where a [`State`]'s bits of the sides that can no longer castle start:
/// White's, then Black's.
const CASTLES: u32 = 56;

/// The change codes of a side's last castling right gone: White's, then
/// Black's (after the move's other change, [`change`], if it makes one).
/// A side keeps its castling until its king moves and until both its
/// rooks have left (or been taken on) their home squares: most games lose
/// it by castling.
pub(crate) const CASTLING_CODES: u8 = 252;

/// The castling rights that a move from or to each square ends (bit 0
/// White's king side, 1 its queen side, 2 and 3 Black's): the kings' and
/// the rooks' home squares.
const CASTLING_SQUARES: [u8; 64] = {
    let mut squares = [0u8; 64];
    // e1, h1, a1; e8, h8, a8.
    squares[4] = 0b0011;
    squares[7] = 0b0001;
    squares[0] = 0b0010;
    squares[60] = 0b1100;
    squares[63] = 0b0100;
    squares[56] = 0b1000;
    squares
};

/// Whether each side, White then Black, has a castling right left in
/// `pos`.
pub(crate) fn can_castle(pos: &Chess) -> [bool; 2] {
    Color::ALL.map(|c| pos.castles().has_color(c))
}

/// The change codes ([`CASTLING_CODES`]) of the sides that could castle
/// before a move (`before`, as [`can_castle`] gives it) and can no longer
/// after it (`after`).
pub(crate) fn castling_codes(before: [bool; 2], after: [bool; 2]) -> impl Iterator<Item = u8> {
    (0..2u8)
        .filter(move |&i| before[usize::from(i)] && !after[usize::from(i)])
        .map(|i| CASTLING_CODES + i)
}

/// Whether `code` says a side can no longer castle ([`CASTLING_CODES`]).
#[inline]
pub(crate) const fn is_castling(code: u8) -> bool {
    code == CASTLING_CODES || code == CASTLING_CODES + 1
}

/// The home squares' bit of `sq` for `color`'s pawns, if it is one.
fn home_bit(color: Color, sq: Square) -> Option<u16> {
    let rank = match color {
        Color::White => Rank::Second,
        Color::Black => Rank::Seventh,
    };
    (sq.rank() == rank).then(|| {
        let file = sq.file() as u16;
        1 << (file + if color == Color::White { 0 } else { 8 })
    })
}

/// A side's index into [`State::material`]: White 0, Black 1.
fn side(color: Color) -> usize {
    match color {
        Color::White => 0,
        Color::Black => 1,
    }
}

fn role_index(role: Role) -> Option<usize> {
    ROLES.iter().position(|&r| r == role)
}

impl State {
    /// The state of the home pawns `home` and the counts `material` (by
    /// side, pawn to queen; a count above 15 is 15: no game has one), with
    /// no castling rights: every game's state can reach it as far as they
    /// go, so that a material or a pattern says nothing of them.
    pub(crate) fn new(home: u16, material: [[u8; 5]; 2]) -> State {
        let mut word = u64::from(home) | 0b11 << CASTLES;
        for (side, counts) in material.iter().enumerate() {
            for (r, &n) in counts.iter().enumerate() {
                word |= u64::from(n.min(15)) << (COUNTS[side] + 4 * r as u32);
            }
        }
        State(word)
    }

    /// The state of a board (no castling rights: [`State::new`]).
    pub(crate) fn of_board(board: &Board) -> State {
        let mut home = 0u16;
        for color in Color::ALL {
            let rank = match color {
                Color::White => Bitboard::from_rank(Rank::Second),
                Color::Black => Bitboard::from_rank(Rank::Seventh),
            };
            for sq in board.by_piece(Role::Pawn.of(color)) & rank {
                home |= home_bit(color, sq).unwrap_or(0);
            }
        }
        let mut material = [[0u8; 5]; 2];
        for color in Color::ALL {
            for (i, role) in ROLES.iter().enumerate() {
                material[side(color)][i] = board.by_piece(role.of(color)).count() as u8;
            }
        }
        State::new(home, material)
    }

    /// The state of a position, its castling rights with it.
    pub(crate) fn of(pos: &Chess) -> State {
        let mut state = State::of_board(pos.board());
        for (i, color) in Color::ALL.into_iter().enumerate() {
            if pos.castles().has_color(color) {
                state.0 &= !(1 << (CASTLES + i as u32));
            }
        }
        state
    }

    /// The state as the search section stores it: its word.
    pub(crate) fn bits(self) -> u64 {
        self.0
    }

    /// The state of a word the search section stores ([`State::bits`]),
    /// or `None` where bits above the castling bits are set.
    pub(crate) fn from_bits(bits: u64) -> Option<State> {
        (bits >> (CASTLES + 2) == 0).then_some(State(bits))
    }

    /// Whether a game from `board` keeps its counts exact in a [`State`]:
    /// each side has at most 15 pawns, and at most 15 of each other role
    /// with every pawn promoted to it. Every game of chess does (a side
    /// has at most ten of a role), but a FEN read despite too much
    /// material may not.
    pub(crate) fn counts_fit(board: &Board) -> bool {
        Color::ALL.into_iter().all(|color| {
            let pawns = board.by_piece(Role::Pawn.of(color)).count();
            pawns <= 15
                && ROLES[1..]
                    .iter()
                    .all(|r| board.by_piece(r.of(color)).count() + pawns <= 15)
        })
    }

    /// The sides that can no longer castle: bit 0 White, bit 1 Black.
    #[inline]
    pub(crate) fn castling_gone(self) -> u8 {
        ((self.0 >> CASTLES) & 0b11) as u8
    }

    /// The state after a move of the tree from `from` to `to` (its other
    /// change is a code: [`State::apply`]), where `ended` holds the
    /// castling rights ended on the way there (bits as
    /// [`CASTLING_SQUARES`]'s), which it updates: a right ends with the
    /// first move from or to its king's or its rook's home square (a
    /// castling move's squares are its king's and its rook's).
    #[inline]
    pub(crate) fn end_castling(&mut self, ended: &mut u8, from: Square, to: Square) {
        *ended |= CASTLING_SQUARES[from as usize] | CASTLING_SQUARES[to as usize];
        let white = u64::from(*ended & 0b0011 == 0b0011);
        let black = u64::from(*ended & 0b1100 == 0b1100);
        self.0 |= (white | black << 1) << CASTLES;
    }

    /// The pawns on their home squares (bits 0–7: White's a2–h2, 8–15:
    /// Black's a7–h7).
    #[inline]
    pub(crate) fn home(self) -> u16 {
        self.0 as u16
    }

    /// How many of role `r` (pawn 0 to queen 4) side `side` (White 0,
    /// Black 1) has.
    #[inline]
    pub(crate) fn count(self, side: usize, r: usize) -> u8 {
        ((self.0 >> (COUNTS[side] + 4 * r as u32)) & 15) as u8
    }

    /// Each side's pieces by role, pawn to queen.
    pub(crate) fn material(self) -> [[u8; 5]; 2] {
        [0, 1].map(|side| [0, 1, 2, 3, 4].map(|r| self.count(side, r)))
    }

    /// Whether `other` has the same pieces (whatever its home pawns).
    #[inline]
    pub(crate) fn same_material(self, other: State) -> bool {
        (self.0 ^ other.0) & MATERIAL_BITS == 0
    }

    /// Whether a game in this state could still reach state `to`: home
    /// pawns never come back, nor do castling rights, pawns never grow in
    /// number, and a piece is only gained by promoting a pawn.
    #[inline]
    pub(crate) fn can_reach(&self, to: &State) -> bool {
        if self.home() & to.home() != to.home() || self.castling_gone() & !to.castling_gone() != 0 {
            return false;
        }
        for shift in COUNTS {
            let (from, to) = (self.0 >> shift, to.0 >> shift);
            let n = |w: u64, r: u32| ((w >> (4 * r)) & 15) as i32;
            let spare = n(from, 0) - n(to, 0);
            let short: i32 = (1..5).map(|r| (n(to, r) - n(from, r)).max(0)).sum();
            if short > spare {
                return false;
            }
        }
        true
    }

    /// The state after the change that `code` ([`change`]) says: one
    /// addition (a change takes away what it empties and takes, and adds
    /// what it promotes to; in a game's own changes no count goes below
    /// zero nor above 15, and no home bit goes that is not there).
    #[inline]
    pub(crate) fn apply(&mut self, code: u8) {
        self.0 = self.0.wrapping_add(DELTAS[usize::from(code)]);
    }
}

/// What each change code adds to a [`State`] (as a number modulo 2⁶⁴): 0
/// for a byte that is no change.
const DELTAS: [u64; 256] = {
    let mut deltas = [0u64; 256];
    deltas[CASTLING_CODES as usize] = 1 << CASTLES;
    deltas[CASTLING_CODES as usize + 1] = 1 << (CASTLES + 1);
    let mut code = 0;
    while code < 252 {
        if code % 126 != 0 {
            let black = code >= 126;
            let (us, them) = if black { (1, 0) } else { (0, 1) };
            let mut delta = 0u64;
            if let Some(bit) = vacated(code as u8) {
                delta = delta.wrapping_sub(1 << bit);
            }
            let (captured, promoted) = decode((code % 126) as u8);
            if let Some(r) = captured {
                delta = delta.wrapping_sub(1 << (COUNTS[them] + 4 * r as u32));
            }
            if let Some(r) = promoted {
                delta = delta.wrapping_sub(1 << COUNTS[us]);
                delta = delta.wrapping_add(1 << (COUNTS[us] + 4 * r as u32));
            }
            deltas[code] = delta;
        }
        code += 1;
    }
    deltas
};

/// The change of state that move `m` makes in `pos` as one byte, 0 for
/// none: a home square left (its bit plus one, 0 for none: 17 values)
/// times 6 plus the role taken (0 none, then pawn to queen); or, for a
/// promotion, 102 plus 6 times the new role (0 knight to 3 queen) plus the
/// role taken; plus 126 where Black moves. A pawn pushed two steps from
/// its home square is written with the bit of the other side's home
/// square on its file and nothing taken, which no move makes otherwise (a
/// move leaves the other side's home square only by taking a pawn there):
/// the code says how each pawn left home.
pub(crate) fn change(pos: &Chess, m: Move) -> u8 {
    let mover = pos.turn();
    let code = change_of(mover, m);
    if code == 0 || mover == Color::White {
        code
    } else {
        code + 126
    }
}

fn change_of(mover: Color, m: Move) -> u8 {
    let captured = m.capture().and_then(role_index).map_or(0, |r| r + 1);
    if let Some(p) = m.promotion().and_then(role_index) {
        return (102 + 6 * (p - 1) + captured) as u8;
    }
    let mut vacated = 0;
    if let Some(from) = m.from()
        && m.role() == Role::Pawn
        && let Some(bit) = home_bit(mover, from)
    {
        let two = from.rank().distance(m.to().rank()) == 2;
        // Two steps: the other side's bit of the file.
        vacated = (bit.trailing_zeros() as usize ^ if two { 8 } else { 0 }) + 1;
    }
    if !m.is_en_passant()
        && m.capture() == Some(Role::Pawn)
        && let Some(bit) = home_bit(!mover, m.to())
    {
        // One move leaves at most one home square: a pawn taken on its
        // home square is taken by a piece, never by a pawn from its own.
        vacated = bit.trailing_zeros() as usize + 1;
    }
    (vacated * 6 + captured) as u8
}

/// A change's role taken and role promoted to (indexes into [`ROLES`]),
/// from its code less the 126 of Black's moves.
const fn decode(code: u8) -> (Option<usize>, Option<usize>) {
    let code = code as usize;
    let captured = (code % 6).checked_sub(1);
    if code >= 102 {
        return (captured, Some((code - 102) / 6 + 1));
    }
    (captured, None)
}

/// The home bit that change `code` empties, if any: the bit it is written
/// with, or for a pawn pushed two steps (written with the other side's
/// bit and nothing taken) its own side's bit of that file.
const fn vacated(code: u8) -> Option<u32> {
    let black = code >= 126;
    let c = code % 126;
    if c >= 102 || c < 6 {
        return None;
    }
    let bit = (c / 6 - 1) as u32;
    Some(if c.is_multiple_of(6) && (bit >= 8) != black {
        bit ^ 8
    } else {
        bit
    })
}

/// Whether change `code` changes the material (a piece taken, a
/// promotion), not only the home pawns or the castling rights.
pub(crate) const fn changes_material(code: u8) -> bool {
    let c = code % 126;
    !is_castling(code) && (c >= 102 || !c.is_multiple_of(6))
}

/// Whether change `code` takes a piece (its side's men one fewer for
/// good: a promotion that takes nothing keeps their number).
#[inline]
pub(crate) const fn takes(code: u8) -> bool {
    !is_castling(code) && !(code % 126).is_multiple_of(6)
}

/// Whether `code` is a change a move can make: a move's own ([`change`])
/// or a side's castling gone ([`CASTLING_CODES`]).
pub(crate) const fn valid(code: u8) -> bool {
    is_castling(code) || (!code.is_multiple_of(126) && code < CASTLING_CODES)
}

/// The files that each side's pawns stand on: bits 0–7 White's (a to h),
/// 8–15 Black's. They stay the same from one change of material to the
/// next: only a capture or a promotion takes a pawn off its file.
pub(crate) fn pawn_files(board: &Board) -> u16 {
    files_of(
        board.by_piece(Role::Pawn.of(Color::White)),
        board.by_piece(Role::Pawn.of(Color::Black)),
    )
}

/// The files of White's squares `white` (bits 0–7) and Black's `black`
/// (bits 8–15).
fn files_of(white: Bitboard, black: Bitboard) -> u16 {
    let mut files = 0u16;
    for (shift, squares) in [(0, white), (8, black)] {
        for sq in squares {
            files |= 1 << (shift + sq.file() as u16);
        }
    }
    files
}

/// The most pieces (pawns and kings aside) that a state has where the
/// search section keeps its pawns' files: endgames, which many games come
/// to late with the same material, and which their pawns' files tell
/// apart without decoding them.
pub(crate) const FILES_PIECES: u32 = 4;

/// Whether the search section keeps the pawns' files of a game's stretch
/// in state `s` (from a change of material to the next).
#[inline]
pub(crate) fn keeps_files(s: &State) -> bool {
    // Each side's counts of knights to queens (not of pawns), a byte
    // each, then added up.
    let pieces = |side: usize| {
        let w = (s.0 >> (COUNTS[side] + 4)) & 0xffff;
        let bytes = (w & 0x0f0f) + ((w >> 4) & 0x0f0f);
        (bytes & 0xff) + (bytes >> 8)
    };
    pieces(0) + pieces(1) <= u64::from(FILES_PIECES)
}

/// The files where change `code` may put a pawn on its third rank (bits
/// as the home squares': 0–7 White's, 8–15 Black's): the file of a pawn
/// pushed one step from home, the two beside a pawn that takes from home
/// (one of them: the code does not say which); 0 for none. A pawn comes
/// to its third rank from its home square alone, so the files of a
/// board's pawns on their third rank ([`third_rank_files`]) are among those
/// of its game's changes so far.
#[inline]
pub(crate) fn third_rank(code: u8) -> u16 {
    THIRD_RANK[usize::from(code)]
}

/// [`third_rank`] of each change code: looked up for every change of
/// every game that a query with a pawn on its third rank looks at.
const THIRD_RANK: [u16; 256] = {
    let mut table = [0u16; 256];
    let mut code = 0;
    while code < 252 {
        let black = code >= 126;
        let (captured, promoted) = decode((code % 126) as u8);
        if let (Some(bit), None) = (vacated(code as u8), promoted) {
            // Written with its own bit: one step (two steps are written
            // with the other side's).
            let written = (code % 126 / 6 - 1) as u32;
            if captured.is_none() && bit == written {
                table[code] = 1 << bit;
            } else if captured.is_some() && (bit >= 8) == black {
                // A capture from the mover's home square (not a pawn
                // taken on its home square: the other side's bit), to a
                // file beside its own.
                let file = 1u16 << (bit & 7);
                table[code] = (((file << 1) | (file >> 1)) & 0xff) << (bit & 8);
            }
        }
        code += 1;
    }
    table
};

/// The home bits of the files of `board`'s pawns on their third rank
/// (White's rank 3, Black's rank 6): each came there from a home square,
/// by one step or by a capture ([`third_rank`]).
pub(crate) fn third_rank_files(board: &Board) -> u16 {
    files_of(
        board.by_piece(Role::Pawn.of(Color::White)) & Bitboard::from_rank(Rank::Third),
        board.by_piece(Role::Pawn.of(Color::Black)) & Bitboard::from_rank(Rank::Sixth),
    )
}

/// Whether a game at `from` could come to `to` without taking a piece or
/// promoting a pawn, as a game does whose material is the same at both:
/// then no pawn leaves its file and each only goes forward, one after
/// another on a file (none jumps another of its side), so each side's
/// pawns on a file are as many in both and, from the nearest its home
/// rank on, each at `to` as far as or further than at `from`; and each
/// bishop keeps the colour of its squares. A game left the tree at `from`
/// (its node's position and the move it played there) and is not at `to`
/// where this says no: it need not be decoded.
pub(crate) fn can_advance(from: &Board, to: &Board) -> bool {
    if from.material() != to.material() {
        // A piece taken or a promotion between: pawns may change files.
        return true;
    }
    let dark = Bitboard::DARK_SQUARES;
    for color in Color::ALL {
        let bishops = |b: &Board| (b.by_piece(Role::Bishop.of(color)) & dark).count();
        if bishops(from) != bishops(to) {
            return false;
        }
        let (a, b) = (
            from.by_piece(Role::Pawn.of(color)),
            to.by_piece(Role::Pawn.of(color)),
        );
        for file in File::ALL {
            let on = |p: Bitboard| p & Bitboard::from_file(file);
            let (a, b) = (on(a), on(b));
            if a.count() != b.count() {
                return false;
            }
            // From the home rank's side: White's from rank 1, Black's
            // from rank 8 (squares in order, then reversed).
            let ranks = |p: Bitboard| p.into_iter().map(|sq| sq.rank() as u8);
            let behind = match color {
                Color::White => ranks(a).zip(ranks(b)).any(|(x, y)| y < x),
                Color::Black => ranks(a).rev().zip(ranks(b).rev()).any(|(x, y)| y > x),
            };
            if behind {
                return false;
            }
        }
    }
    true
}

/// Material as Scoutfish writes it: White's pieces then Black's, each
/// side from its king (`KRPKR`, `KQPPKQ`); kings may be left out where the
/// sides are split by a `v` (`RP v R`).
pub(crate) fn parse_material(text: &str) -> Option<[[u8; 5]; 2]> {
    let text: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    let upper = text.to_ascii_uppercase();
    let (white, black) = if let Some((w, b)) = upper.split_once('V') {
        (w.to_owned(), b.to_owned())
    } else {
        let rest = upper.strip_prefix('K')?;
        let at = rest.find('K')?;
        (rest[..at].to_owned(), rest[at + 1..].to_owned())
    };
    let mut m = [[0u8; 5]; 2];
    for (side, letters) in [white, black].iter().enumerate() {
        let letters = letters.strip_prefix('K').unwrap_or(letters);
        for ch in letters.chars() {
            let role = Role::from_char(ch.to_ascii_lowercase())?;
            let r = role_index(role)?;
            m[side][r] = m[side][r].checked_add(1)?;
        }
    }
    Some(m)
}

/// An imbalance as Scoutfish writes it, White's extra pieces `v` Black's
/// (`Q v RR`, `v PP`): the difference of the two sides' pieces by role.
pub(crate) fn parse_imbalance(text: &str) -> Option<[i8; 5]> {
    let text: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    let upper = text.to_ascii_uppercase();
    let (white, black) = upper.split_once('V')?;
    let mut d = [0i8; 5];
    for (sign, letters) in [(1i8, white), (-1, black)] {
        for ch in letters.chars() {
            let r = role_index(Role::from_char(ch.to_ascii_lowercase())?)?;
            d[r] = d[r].checked_add(sign)?;
        }
    }
    Some(d)
}

/// The difference of the sides' material by role, White's less Black's.
pub(crate) fn imbalance_of(material: &[[u8; 5]; 2]) -> [i8; 5] {
    let mut d = [0i8; 5];
    for r in 0..5 {
        d[r] = material[0][r] as i8 - material[1][r] as i8;
    }
    d
}

/// A sub-FEN: pieces on squares, the other squares anything (a full FEN's
/// board is one too).
#[derive(Clone, Debug)]
pub(crate) struct Pattern {
    pub board: Board,
    /// The least state that shows it: its pieces, its pawns on their home
    /// squares.
    pub least: State,
    /// The home squares' bits of the pawns that must have gone: those
    /// where the pattern has another piece.
    gone: u16,
}

impl Pattern {
    /// Parses the board part of a FEN (what follows a space is ignored).
    pub(crate) fn parse(text: &str) -> Option<Pattern> {
        let board_part = text.split_whitespace().next()?;
        let board: Board = board_part.parse().ok()?;
        let mut gone = 0;
        for (sq, piece) in board.iter() {
            for color in Color::ALL {
                if piece != Role::Pawn.of(color) {
                    gone |= home_bit(color, sq).unwrap_or(0);
                }
            }
        }
        Some(Pattern {
            least: State::of_board(&board),
            board,
            gone,
        })
    }

    /// Whether `board` has the pattern's pieces on its squares.
    pub(crate) fn matches(&self, board: &Board) -> bool {
        self.board
            .iter()
            .all(|(sq, piece)| board.piece_at(sq) == Some(piece))
    }

    /// Whether a game in state `s` could show the pattern: at least its
    /// pieces, its pawns on home squares still there, its other pieces on
    /// home squares where those pawns have gone.
    pub(crate) fn possible(&self, s: &State) -> bool {
        let need = &self.least;
        for c in 0..2 {
            for r in 0..5 {
                if s.count(c, r) < need.count(c, r) {
                    return false;
                }
            }
        }
        s.home() & need.home() == need.home() && s.home() & self.gone == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::{san::San, uci::UciMove};

    /// Issue 68: a change takes a piece exactly where it takes one from
    /// the other side's count (a promotion that takes nothing, a pawn
    /// leaving home and a castling byte take none).
    #[test]
    fn a_change_takes_where_the_other_side_has_one_fewer() {
        for code in 0..=255u8 {
            if !valid(code) {
                continue;
            }
            let them = if code >= 126 && !is_castling(code) {
                COUNTS[0]
            } else {
                COUNTS[1]
            };
            let start = State::new(0xffff, [[5; 5]; 2]);
            let mut after = start;
            after.apply(code);
            let fewer = (0..5).any(|r| {
                let n = |s: State| (s.0 >> (them + 4 * r)) & 15;
                n(after) < n(start)
            });
            assert_eq!(takes(code), fewer && !is_castling(code), "{code}");
        }
    }

    /// The home bit that change `code` pushes one step, if it does.
    fn pushed_home(code: u8) -> Option<u16> {
        Some(third_rank(code)).filter(|&bits| bits != 0 && decode(code % 126).0.is_none())
    }

    /// The files beside a pawn that `code` moves off home by a capture.
    fn captured_from_home(code: u8) -> u16 {
        if decode(code % 126).0.is_some() {
            third_rank(code)
        } else {
            0
        }
    }

    fn play(pos: &mut Chess, m: Move) -> u8 {
        let c = change(pos, m);
        pos.play_unchecked(m);
        c
    }

    /// `state` after move `m` of `pos`: its change and the castling rights
    /// it ends, as the builder adds them; the move's own change.
    fn play_all(pos: &mut Chess, state: &mut State, m: Move) -> u8 {
        let before = can_castle(pos);
        let code = play(pos, m);
        state.apply(code);
        for lost in castling_codes(before, can_castle(pos)) {
            assert!(valid(lost) && !changes_material(lost));
            state.apply(lost);
        }
        code
    }

    #[test]
    fn changes_replay_the_state_of_real_moves() {
        let mut pos = Chess::default();
        let mut state = State::of(&pos);
        let line = [
            "e4", "d5", "exd5", "Qxd5", "Nc3", "Qa5", "d4", "c6", "Bc4", "Bf5", "Bxf7+", "Kxf7",
        ];
        for san in line {
            let m = san.parse::<San>().unwrap().to_move(&pos).unwrap();
            let code = play_all(&mut pos, &mut state, m);
            assert!(code == 0 || valid(code));
            assert_eq!(state, State::of(&pos), "{san}");
        }
        // Kxf7 ended Black's castling.
        assert_eq!(state.castling_gone(), 0b10);
        // A promotion with a capture.
        let mut pos: Chess = "rn2k3/1P6/8/8/8/8/8/4K3 w - - 0 1"
            .parse::<shakmaty::fen::Fen>()
            .unwrap()
            .into_position(shakmaty::CastlingMode::Standard)
            .unwrap();
        let mut state = State::of(&pos);
        let m = "b7a8q".parse::<UciMove>().unwrap().to_move(&pos).unwrap();
        let code = play(&mut pos, m);
        state.apply(code);
        assert_eq!(state, State::of(&pos));
    }

    /// Random games (every legal move in turn likely: captures on home
    /// squares, promotions, en passant): each change added to the state
    /// gives the state of the board after the move.
    #[test]
    fn a_change_added_is_the_state_of_the_next_board() {
        let mut seed = 68u64;
        let mut next = move |n: usize| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) as usize % n
        };
        let mut promotions = 0;
        for _ in 0..300 {
            let mut pos = Chess::default();
            let mut state = State::of(&pos);
            let (mut by_squares, mut ended) = (state, 0u8);
            let mut third = 0;
            for _ in 0..300 {
                let mut moves: Vec<Move> = pos.legal_moves().into_iter().collect();
                if moves.is_empty() {
                    break;
                }
                moves.sort_by_key(|m| (m.from(), m.to(), m.promotion()));
                let m = moves[next(moves.len())];
                promotions += usize::from(m.is_promotion());
                let code = play_all(&mut pos, &mut state, m);
                assert!(code == 0 || valid(code));
                assert_eq!(state, State::of(&pos), "{m:?}");
                by_squares.apply(code);
                by_squares.end_castling(&mut ended, m.from().unwrap(), m.to());
                assert_eq!(by_squares, state, "{m:?}");
                third |= third_rank(code);
                let on_third = third_rank_files(pos.board());
                assert_eq!(on_third & third, on_third, "{m:?}");
            }
        }
        assert!(promotions > 10, "{promotions}");
    }

    /// A side can no longer castle once its king has moved or both its
    /// rooks have left (or been taken on) their home squares, and never
    /// again; the game's codes and the tree's moves by their squares say
    /// so alike; a material or a pattern ([`State::new`]) says nothing of
    /// it.
    #[test]
    fn castling_ends_once_and_never_comes_back() {
        let gone_after = |line: &[&str]| {
            let mut pos = Chess::default();
            let mut state = State::of(&pos);
            let (mut by_squares, mut ended) = (state, 0u8);
            let mut gone = Vec::new();
            for san in line {
                let m = san.parse::<San>().unwrap().to_move(&pos).unwrap();
                let code = play_all(&mut pos, &mut state, m);
                assert_eq!(state, State::of(&pos), "{san}");
                by_squares.apply(code);
                by_squares.end_castling(&mut ended, m.from().unwrap(), m.to());
                assert_eq!(by_squares, state, "{san}");
                gone.push(state.castling_gone());
            }
            gone
        };
        // O-O: White's; Rb8 and back: Black keeps its king side; Kf8:
        // Black's.
        let line = [
            "e4", "e5", "Nf3", "Nc6", "Bc4", "Bc5", "O-O", "Nf6", "d3", "Rb8", "Bg5", "Ra8",
            "Bxf6", "Kf8",
        ];
        assert_eq!(
            gone_after(&line),
            [0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 0b11]
        );
        // A rook taken at home, then the other rook's move: Black's.
        let line = [
            "b3", "g5", "Bb2", "Nf6", "Bxf6", "e6", "Bxh8", "Nc6", "e3", "Rb8",
        ];
        assert_eq!(gone_after(&line), [0, 0, 0, 0, 0, 0, 0, 0, 0, 0b10]);
        let start = State::of(&Chess::default());
        let mut castled = start;
        castled.apply(CASTLING_CODES);
        assert!(start.can_reach(&castled));
        assert!(!castled.can_reach(&start));
        assert!(castled.same_material(start));
        assert!(castled.can_reach(&State::new(start.home(), start.material())));
        for code in [CASTLING_CODES, CASTLING_CODES + 1] {
            assert!(valid(code) && is_castling(code) && !changes_material(code));
            assert_eq!(third_rank(code), 0);
        }
        assert!(!valid(CASTLING_CODES + 2) && !valid(255));
    }

    #[test]
    fn a_state_reaches_only_what_can_follow_it() {
        let start = State::of(&Chess::default());
        let mut material = start.material();
        material[1][1] -= 1;
        let later = State::new(start.home() & !1, material);
        assert!(start.can_reach(&later));
        assert!(!later.can_reach(&start));
    }

    #[test]
    fn pawns_files_are_kept_in_endgames() {
        let pos: Chess = "8/4k3/4rp2/6p1/6P1/4RP2/4K3/8 w - - 0 1"
            .parse::<shakmaty::fen::Fen>()
            .unwrap()
            .into_position(shakmaty::CastlingMode::Standard)
            .unwrap();
        // White's f and g pawns, Black's f and g.
        assert_eq!(pawn_files(pos.board()), 0b0110_0000_0110_0000);
        assert!(keeps_files(&State::of(&pos)));
        assert!(!keeps_files(&State::of(&Chess::default())));
        assert_eq!(pawn_files(Chess::default().board()), 0xffff);
    }

    #[test]
    fn third_rank_files_are_those_of_the_pawns_there() {
        let mut pos = Chess::default();
        let mut single = 0;
        let mut state = State::of(&pos);
        for san in ["d3", "e5", "e4", "d6", "c3", "c5"] {
            let m = san.parse::<San>().unwrap().to_move(&pos).unwrap();
            let code = play(&mut pos, m);
            state.apply(code);
            // Each code says how its pawn left home.
            let one = m.from().unwrap().rank().distance(m.to().rank()) == 1;
            assert_eq!(pushed_home(code).is_some(), one, "{san}");
            single |= pushed_home(code).unwrap_or(0);
        }
        assert_eq!(state, State::of(&pos));
        // d3, c3 and d6 came by one step; e4, e5 and c5 by two.
        assert_eq!(third_rank_files(pos.board()), single);
        assert_eq!(single, 0b1000_0000_1100);
        // A piece's move is no push.
        let code = change(&pos, "Qa4".parse::<San>().unwrap().to_move(&pos).unwrap());
        assert_eq!(pushed_home(code), None);
        assert_eq!(captured_from_home(code), 0);
    }

    #[test]
    fn the_home_moves_table_is_the_codes_decoded() {
        for code in 0..=255u8 {
            let (captured, promoted) = decode(code % 126);
            let vacated = vacated(code);
            let black = code >= 126;
            // Written with the mover's own bit: one step.
            let written = (code % 126 / 6).checked_sub(1).map(u32::from);
            let pushed = match (vacated, captured, promoted) {
                (Some(bit), None, None) if valid(code) && written == Some(bit) => Some(1u16 << bit),
                _ => None,
            };
            assert_eq!(pushed_home(code), pushed, "{code}");
            if let (Some(bit), None, None) = (vacated, captured, promoted) {
                // A push empties its own side's home square.
                assert_eq!(bit >= 8, black, "{code}");
            }
            let from_home = match (vacated, captured, promoted) {
                (Some(bit), Some(_), None) if valid(code) && (bit >= 8) == black => {
                    let file = bit % 8;
                    let side = if black { 8 } else { 0 };
                    [file.checked_sub(1), Some(file + 1).filter(|&f| f < 8)]
                        .into_iter()
                        .flatten()
                        .fold(0u16, |bits, f| bits | 1 << (f + side))
                }
                _ => 0,
            };
            assert_eq!(captured_from_home(code), from_home, "{code}");
        }
    }

    #[test]
    fn the_third_rank_is_reached_by_one_step_or_a_capture_from_home() {
        // e3 (White's e2 one step), then b2xc3 (White takes from home: a
        // or c), then d3, ...d6 (Black's d7 one step) and ...c5 (two
        // steps: written with White's c2).
        assert_eq!(third_rank(5 * 6), 1 << 4);
        assert_eq!(third_rank(2 * 6 + 1), 0b101);
        assert_eq!(third_rank(4 * 6), 1 << 3);
        assert_eq!(third_rank(126 + 12 * 6), 1 << 11);
        assert_eq!(third_rank(126 + 3 * 6), 0);
        // An a or h pawn that takes from home has one file beside it.
        assert_eq!(third_rank(6 + 1), 0b10);
        assert_eq!(third_rank(8 * 6 + 1), 0b100_0000);
        let mut state = State::of(&Chess::default());
        state.apply(126 + 3 * 6);
        assert_eq!(state.home(), !(1 << 10));
    }

    #[test]
    fn a_capture_from_home_is_told_by_its_side() {
        let last_code = |line: &[&str]| {
            let mut pos = Chess::default();
            line.iter().fold(0, |_, san| {
                let m = san.parse::<San>().unwrap().to_move(&pos).unwrap();
                play(&mut pos, m)
            })
        };
        // White's b pawn takes on c3 from b2, its home square.
        assert_eq!(
            last_code(&["e4", "d5", "Nc3", "d4", "Nf3", "dxc3", "bxc3"]),
            2 * 6 + 1
        );
        assert_eq!(captured_from_home(2 * 6 + 1), 0b101);
        // Black's e pawn takes on d6 from e7.
        let code = last_code(&["d4", "a6", "d5", "a5", "d6", "exd6"]);
        assert_eq!(captured_from_home(code), 0b10_1000 << 8);
        // Black's d pawn takes on c3 from d4 (no home square).
        let code = last_code(&["e4", "d5", "Nc3", "d4", "Nf3", "dxc3"]);
        assert_eq!(captured_from_home(code), 0);
        // A pawn taken on its home square by a piece marks neither side.
        let code = last_code(&["e4", "e5", "Qh5", "Nc6", "Qxf7+"]);
        assert_eq!(captured_from_home(code), 0);
        // Nor does a push.
        assert_eq!(captured_from_home(last_code(&["e4"])), 0);
    }

    /// Issue 68: a game comes to each of its later positions of the same
    /// material (pawns forward on their files, bishops on their colours),
    /// and the check refuses some of its earlier ones (pawns gone back)
    /// and a bishop of the other colour.
    #[test]
    fn regression_issue_68_a_game_can_advance_to_its_later_positions() {
        let positions = crate::testing::random_game_positions(68, 60, 100);
        let mut games: Vec<Vec<Chess>> = Vec::new();
        for p in positions {
            if p.board() == Chess::default().board() && p.turn() == Color::White {
                games.push(Vec::new());
            }
            games.last_mut().unwrap().push(p);
        }
        let (mut pairs, mut refused) = (0, 0);
        for game in &games {
            for (i, a) in game.iter().enumerate() {
                for b in &game[i + 1..] {
                    if a.board().material() != b.board().material() {
                        continue;
                    }
                    pairs += 1;
                    assert!(
                        can_advance(a.board(), b.board()),
                        "{} to {}",
                        a.board(),
                        b.board()
                    );
                    refused += usize::from(!can_advance(b.board(), a.board()));
                }
            }
        }
        assert!(
            pairs > 10_000 && refused > 1_000,
            "{pairs} pairs, {refused} refused"
        );
        let board = |fen: &str| fen.parse::<Board>().unwrap();
        let start = Board::default();
        // A pawn back, a pawn on the other file, a bishop on the other colour.
        let e4 = board("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR");
        let e3 = board("rnbqkbnr/pppppppp/8/8/8/4P3/PPPP1PPP/RNBQKBNR");
        let d3 = board("rnbqkbnr/pppppppp/8/8/8/3P4/PPP1PPPP/RNBQKBNR");
        assert!(can_advance(&start, &e4) && can_advance(&e3, &e4));
        assert!(!can_advance(&e4, &e3) && !can_advance(&e3, &d3));
        let light = board("rnbqkbnr/pppppppp/8/8/8/4P3/PPPPBPPP/RNBQK1NR");
        let dark = board("rnbqkbnr/pppppppp/8/8/5B2/4P3/PPPP1PPP/RNBQK1NR");
        assert_eq!(light.material(), dark.material());
        assert!(!can_advance(&light, &dark));
        // Black's pawns go down the board.
        let e5 = board("rnbqkbnr/pppp1ppp/8/4p3/8/8/PPPPPPPP/RNBQKBNR");
        assert!(can_advance(&start, &e5) && !can_advance(&e5, &start));
        // With a piece taken between, anything may follow.
        let taken = board("rnbqkbnr/pppp1ppp/8/8/8/8/PPPPPPPP/RNBQKBNR");
        assert!(can_advance(&e5, &taken) && can_advance(&taken, &e5));
    }

    #[test]
    fn material_and_imbalances_read_as_scoutfish_writes_them() {
        let m = parse_material("KRPKR").unwrap();
        assert_eq!(m, [[1, 0, 0, 1, 0], [0, 0, 0, 1, 0]]);
        assert_eq!(parse_material("RP v R"), Some(m));
        assert_eq!(parse_imbalance("Q v RR"), Some([0, 0, 0, -2, 1]));
        assert_eq!(parse_material("KXK"), None);
        assert_eq!(parse_imbalance("QRR"), None);
    }
}
