//! The static evaluation: material and piece-square tables tapered by game
//! phase, pawn structure, mobility and king shelter. Integer arithmetic only.

use shakmaty::{
    Bitboard, Board, CastlingSide, Chess, Color, Move, Position, Role, Square,
    attacks::{bishop_attacks, knight_attacks, queen_attacks, rook_attacks},
};

/// Material values for the middlegame and the endgame, in centipawns, by
/// role (pawn, knight, bishop, rook, queen, king).
const MATERIAL_MG: [i32; 6] = [90, 320, 330, 480, 950, 0];
const MATERIAL_EG: [i32; 6] = [110, 300, 320, 520, 950, 0];

/// Phase weight of each role; a full board is 24.
const PHASE: [i32; 6] = [0, 1, 1, 2, 4, 0];
const MAX_PHASE: i32 = 24;

/// Mobility weights (middlegame, endgame) per reachable square beyond a
/// baseline, for knight, bishop, rook, queen.
const MOBILITY: [(i32, i32, i32); 4] = [(4, 4, 4), (5, 5, 6), (2, 4, 6), (1, 2, 12)];

/// Passed pawn bonus by relative rank (0 = first rank).
const PASSED_MG: [i32; 8] = [0, 5, 8, 15, 30, 55, 90, 0];
const PASSED_EG: [i32; 8] = [0, 10, 15, 30, 55, 95, 150, 0];

/// Twice the distance from the centre: 2 on d4/e4/d5/e5, 14 on a corner.
const fn centre_distance(sq: usize) -> i32 {
    let f = (sq % 8) as i32;
    let r = (sq / 8) as i32;
    let df = if 2 * f - 7 < 0 { 7 - 2 * f } else { 2 * f - 7 };
    let dr = if 2 * r - 7 < 0 { 7 - 2 * r } else { 2 * r - 7 };
    (df + dr) / 2
}

/// Piece-square value of `role` index `ri` on `sq` (white's view), middlegame
/// and endgame. Simple formulas: centralisation, pawn advance, king shelter.
const fn pst(ri: usize, sq: usize) -> (i32, i32) {
    let f = (sq % 8) as i32;
    let r = (sq / 8) as i32;
    let cd = centre_distance(sq); // 1 (centre) ..= 7 (corner)
    match ri {
        0 => {
            // Pawns: advance, central pawns on ranks 3-5.
            let centre = if (f == 3 || f == 4) && r >= 2 && r <= 4 {
                12 + 4 * (r - 2)
            } else if (f == 2 || f == 5) && r >= 2 && r <= 4 {
                4
            } else {
                0
            };
            let mg = if r == 0 || r == 7 {
                0
            } else {
                (r - 1) * 4 + centre + if r == 6 { 40 } else { 0 }
            };
            let eg = if r == 0 || r == 7 {
                0
            } else {
                (r - 1) * (r - 1) * 4
            };
            (mg, eg)
        }
        1 => (30 - 10 * cd - if r == 0 { 10 } else { 0 }, 20 - 8 * cd),
        2 => (15 - 4 * cd - if r == 0 { 8 } else { 0 }, 10 - 4 * cd),
        3 => {
            let seventh = if r == 6 { 20 } else { 0 };
            let central = if f >= 2 && f <= 5 { 5 } else { 0 };
            (seventh + central, if r == 6 { 15 } else { 0 })
        }
        4 => (5 - 2 * cd - if r == 0 { 0 } else { 2 }, 10 - 4 * cd),
        _ => {
            let mg = if r == 0 {
                if f <= 2 || f >= 6 { 20 } else { 0 }
            } else if r == 1 {
                -10
            } else {
                -30 - 10 * (r - 2)
            };
            (mg, 30 - 10 * cd)
        }
    }
}

const fn build_tables() -> [[(i32, i32); 64]; 6] {
    let mut t = [[(0, 0); 64]; 6];
    let mut ri = 0;
    while ri < 6 {
        let mut sq = 0;
        while sq < 64 {
            let (mg, eg) = pst(ri, sq);
            let (fm, fe) = super::fitted::FITTED[ri][sq];
            t[ri][sq] = (mg + fm + MATERIAL_MG[ri], eg + fe + MATERIAL_EG[ri]);
            sq += 1;
        }
        ri += 1;
    }
    t
}

/// Material plus piece-square value by role index and square (white's view).
static TABLES: [[(i32, i32); 64]; 6] = build_tables();

const FILE_A: u64 = 0x0101_0101_0101_0101;
const FILE_H: u64 = FILE_A << 7;

fn pawn_attack_span(pawns: u64, color: Color) -> u64 {
    match color {
        Color::White => ((pawns << 7) & !FILE_H) | ((pawns << 9) & !FILE_A),
        Color::Black => ((pawns >> 9) & !FILE_H) | ((pawns >> 7) & !FILE_A),
    }
}

/// Files adjacent to `file` (not including it).
const fn adjacent_files(file: u32) -> u64 {
    let f = FILE_A << file;
    ((f << 1) & !FILE_A) | ((f >> 1) & !FILE_H)
}

/// Squares strictly ahead of `sq` from `color`'s view on files `files`.
const fn ahead(sq: u32, white: bool, files: u64) -> u64 {
    let r = sq / 8;
    let ranks = if white {
        if r == 7 { 0 } else { u64::MAX << (8 * (r + 1)) }
    } else if r == 0 {
        0
    } else {
        u64::MAX >> (8 * (8 - r))
    };
    ranks & files
}

/// Per colour (white, black) and square: squares ahead on the same file,
/// and ahead on the same and adjacent files.
const fn spans() -> [[(u64, u64); 64]; 2] {
    let mut t = [[(0, 0); 64]; 2];
    let mut c = 0;
    while c < 2 {
        let mut sq = 0;
        while sq < 64 {
            let file = FILE_A << (sq % 8);
            let adj = adjacent_files(sq % 8);
            t[c][sq as usize] = (ahead(sq, c == 0, file), ahead(sq, c == 0, file | adj));
            sq += 1;
        }
        c += 1;
    }
    t
}

static SPANS: [[(u64, u64); 64]; 2] = spans();

fn role_index(role: Role) -> usize {
    role as usize - 1
}

/// The material and piece-square value of a piece, for incremental use in
/// move ordering: (middlegame, endgame) from white's view for white pieces.
pub(crate) fn piece_square(color: Color, role: Role, sq: Square) -> (i32, i32) {
    let s = match color {
        Color::White => usize::from(sq),
        Color::Black => usize::from(sq) ^ 56,
    };
    TABLES[role_index(role)][s]
}

#[cfg(any(feature = "train", test))]
/// The game phase: 24 with all pieces on the board, 0 with only pawns and
/// kings.
pub(crate) fn phase(board: &Board) -> i32 {
    let p = board.knights().count() as i32 * PHASE[1]
        + board.bishops().count() as i32 * PHASE[2]
        + board.rooks().count() as i32 * PHASE[3]
        + board.queens().count() as i32 * PHASE[4];
    p.min(MAX_PHASE)
}

/// Every square strictly behind (from `color`'s side: below for white) a
/// square of `bb`, on the same file.
fn behind(bb: u64, color: Color) -> u64 {
    match color {
        Color::White => {
            let mut x = bb >> 8;
            x |= x >> 8;
            x |= x >> 16;
            x | x >> 32
        }
        Color::Black => {
            let mut x = bb << 8;
            x |= x << 8;
            x |= x << 16;
            x | x << 32
        }
    }
}

/// The pawn-structure terms of `color`'s pawns, (middlegame, endgame):
/// isolated (−10/−15 each), doubled (one of its own pawns ahead on the
/// file: −10/−20), else passed (no enemy pawn ahead on its file or the
/// adjacent ones: the bonus of its rank); for all pawns at once.
fn pawn_structure(our_pawns: u64, their_pawns: u64, color: Color) -> (i32, i32) {
    // The files holding one of our pawns as an 8-bit set, and those of
    // them with no neighbour in it.
    let mut files = our_pawns;
    files |= files >> 32;
    files |= files >> 16;
    files |= files >> 8;
    let files = files & 0xff;
    let lonely = files & !((files << 1) | (files >> 1)) & 0xff;
    let isolated = (our_pawns & lonely.wrapping_mul(FILE_A)).count_ones() as i32;
    // Doubled: behind one of ours. Passed: behind none of theirs on the
    // file or the adjacent ones.
    let doubled = our_pawns & behind(our_pawns, color);
    let blocked = behind(their_pawns, color);
    let blocked = blocked | ((blocked << 1) & !FILE_A) | ((blocked >> 1) & !FILE_H);
    let passed = our_pawns & !doubled & !blocked;
    let d = doubled.count_ones() as i32;
    let (mut mg, mut eg) = (-10 * isolated - 10 * d, -15 * isolated - 20 * d);
    for sq in Bitboard(passed) {
        let rel = match color {
            Color::White => u32::from(sq) / 8,
            Color::Black => 7 - u32::from(sq) / 8,
        } as usize;
        mg += PASSED_MG[rel];
        eg += PASSED_EG[rel];
    }
    (mg, eg)
}

/// Material and piece-square values, white's minus black's, (middlegame,
/// endgame), and the game phase before its cap: what a move changes by a
/// few table entries, so that the search carries it from a position to the
/// next ([`Material::after`]) instead of summing every piece at every node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Material {
    mg: i32,
    eg: i32,
    phase: i32,
}

impl Material {
    /// The sums over every piece of `board`.
    pub(crate) fn of(board: &Board) -> Material {
        let mut m = Material {
            mg: 0,
            eg: 0,
            phase: 0,
        };
        for color in Color::ALL {
            let us = board.by_color(color);
            for role in Role::ALL {
                for sq in board.by_role(role) & us {
                    m.add(color, role, sq, 1);
                }
            }
        }
        m
    }

    /// Adds (`sign` 1) or removes (−1) a piece.
    fn add(&mut self, color: Color, role: Role, sq: Square, sign: i32) {
        let (mg, eg) = piece_square(color, role, sq);
        let signed = color.fold_wb(sign, -sign);
        self.mg += signed * mg;
        self.eg += signed * eg;
        self.phase += sign * PHASE[role_index(role)];
    }

    /// The sums after `m` is played in `pos`.
    pub(crate) fn after(mut self, pos: &Chess, m: Move) -> Material {
        let c = pos.turn();
        match m {
            Move::Normal {
                role,
                from,
                capture,
                to,
                promotion,
            } => {
                self.add(c, role, from, -1);
                if let Some(victim) = capture {
                    self.add(!c, victim, to, -1);
                }
                self.add(c, promotion.unwrap_or(role), to, 1);
            }
            Move::EnPassant { from, to } => {
                self.add(c, Role::Pawn, from, -1);
                self.add(
                    !c,
                    Role::Pawn,
                    Square::from_coords(to.file(), from.rank()),
                    -1,
                );
                self.add(c, Role::Pawn, to, 1);
            }
            Move::Castle { king, rook } => {
                let side = CastlingSide::from_queen_side(rook < king);
                self.add(c, Role::King, king, -1);
                self.add(c, Role::Rook, rook, -1);
                self.add(c, Role::King, side.king_to(c), 1);
                self.add(c, Role::Rook, side.rook_to(c), 1);
            }
            Move::Put { role, to } => self.add(c, role, to, 1),
        }
        self
    }
}

/// One side's terms but material, piece-square values (see [`Material`])
/// and mobility, (middlegame, endgame).
fn side(board: &Board, color: Color) -> (i32, i32) {
    let us = board.by_color(color);
    let them = board.by_color(!color);
    let our_pawns = (board.pawns() & us).0;
    let their_pawns = (board.pawns() & them).0;
    let (mut mg, mut eg) = (0, 0);

    // Pawn structure.
    let ci = usize::from(color == Color::Black);
    let (pm, pe) = pawn_structure(our_pawns, their_pawns, color);
    mg += pm;
    eg += pe;

    // Bishop pair.
    if (board.bishops() & us).count() >= 2 {
        mg += 30;
        eg += 50;
    }

    // Rooks on open and half-open files.
    for sq in board.rooks() & us {
        let file = FILE_A << (u32::from(sq) % 8);
        if file & our_pawns == 0 {
            mg += if file & their_pawns == 0 { 20 } else { 10 };
        }
    }

    // King shelter: own pawns in front of the king.
    if let Some(k) = board.king_of(color) {
        let shield = SPANS[ci][usize::from(k)].1 & our_pawns;
        let near = shield
            & match color {
                Color::White => 0xFFFF_u64 << (8 * (u32::from(k) / 8 + 1)).min(63),
                Color::Black => {
                    let r = u32::from(k) / 8;
                    if r >= 2 {
                        0xFFFF_u64 << (8 * (r - 2))
                    } else {
                        0xFF
                    }
                }
            };
        mg += 8 * near.count_ones().min(3) as i32;
    }
    (mg, eg)
}

/// One side's mobility, (middlegame, endgame): squares reachable by its
/// knights, bishops, rooks and queens, not counting squares held by its own
/// pieces or attacked by the opponent's pawns.
fn mobility(board: &Board, color: Color) -> (i32, i32) {
    let us = board.by_color(color);
    let occupied = board.occupied();
    let their_pawns = (board.pawns() & board.by_color(!color)).0;
    let (mut mg, mut eg) = (0, 0);
    let their_pawn_attacks = pawn_attack_span(their_pawns, !color);
    let allowed = !us.0 & !their_pawn_attacks;
    for (i, role) in [Role::Knight, Role::Bishop, Role::Rook, Role::Queen]
        .into_iter()
        .enumerate()
    {
        for sq in board.by_role(role) & us {
            let att = match role {
                Role::Knight => knight_attacks(sq),
                Role::Bishop => bishop_attacks(sq, occupied),
                Role::Rook => rook_attacks(sq, occupied),
                _ => queen_attacks(sq, occupied),
            }
            .0;
            let n = (att & allowed).count_ones() as i32;
            let (wm, we, base) = MOBILITY[i];
            mg += wm * (n - base);
            eg += we * (n - base);
        }
    }
    (mg, eg)
}

#[cfg(test)]
/// The static evaluation of `pos` in centipawns from the side to move's view.
///
/// Tapered: a middlegame and an endgame score are blended by the material on
/// the board. Integer arithmetic only, so it is the same on every machine.
///
/// ```
/// use chesspack::engine::evaluate;
/// use shakmaty::{Chess, fen::Fen, CastlingMode};
///
/// assert!(evaluate(&Chess::default()).abs() < 30);
/// let up_a_queen: Chess = "4k3/8/8/8/8/8/8/3QK3 w - - 0 1".parse::<Fen>().unwrap()
///     .into_position(CastlingMode::Standard).unwrap();
/// assert!(evaluate(&up_a_queen) > 800);
/// ```
pub(crate) fn evaluate(pos: &Chess) -> i32 {
    evaluate_with(pos, Material::of(pos.board()))
}

/// [`evaluate`] of `pos`, whose [`Material`] is `material`.
pub(crate) fn evaluate_with(pos: &Chess, material: Material) -> i32 {
    evaluate_lazy(pos, material, -LAZY_OFF, LAZY_OFF)
}

/// Larger than any lazy margin check can reach: no shortcut.
const LAZY_OFF: i32 = 1_000_000;
/// How far mobility can plausibly move the score.
const LAZY_MARGIN: i32 = 150;

/// [`evaluate`] of `pos`, whose [`Material`] is `material`, except that
/// when the score without mobility lies more than a margin outside
/// `(alpha, beta)` that score is returned: a bound the search cannot use
/// anyway, at a third of the cost.
pub(crate) fn evaluate_lazy(pos: &Chess, material: Material, alpha: i32, beta: i32) -> i32 {
    let board = pos.board();
    let phase = material.phase.min(MAX_PHASE);
    let taper = |mg: i32, eg: i32| (mg * phase + eg * (MAX_PHASE - phase)) / MAX_PHASE;
    let sign = match pos.turn() {
        Color::White => 1,
        Color::Black => -1,
    };
    let tempo = 10;
    let (wm, we) = side(board, Color::White);
    let (bm, be) = side(board, Color::Black);
    let (wm, we) = (wm + material.mg, we + material.eg);
    let lazy = sign * taper(wm - bm, we - be) + tempo;
    if lazy - LAZY_MARGIN >= beta || lazy + LAZY_MARGIN <= alpha {
        return lazy;
    }
    let (wmm, wme) = mobility(board, Color::White);
    let (bmm, bme) = mobility(board, Color::Black);
    sign * taper(wm - bm + wmm - bmm, we - be + wme - bme) + tempo
}

/// Value of a role for exchanges and move ordering, in centipawns.
pub(crate) const fn see_value(role: Role) -> i32 {
    match role {
        Role::Pawn => 100,
        Role::Knight => 320,
        Role::Bishop => 330,
        Role::Rook => 500,
        Role::Queen => 950,
        Role::King => 20_000,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::{CastlingMode, fen::Fen};

    fn pos(fen: &str) -> Chess {
        fen.parse::<Fen>()
            .unwrap()
            .into_position(CastlingMode::Standard)
            .unwrap()
    }

    /// The pawn-structure terms pawn by pawn, as the evaluator first
    /// computed them.
    fn pawn_structure_by_pawn(our_pawns: u64, their_pawns: u64, color: Color) -> (i32, i32) {
        let ci = usize::from(color == Color::Black);
        let (mut mg, mut eg) = (0, 0);
        for sq in Bitboard(our_pawns) {
            let file = u32::from(sq) % 8;
            let (front, passed_span) = SPANS[ci][usize::from(sq)];
            if our_pawns & adjacent_files(file) == 0 {
                mg -= 10;
                eg -= 15;
            }
            if front & our_pawns != 0 {
                mg -= 10;
                eg -= 20;
            } else if passed_span & their_pawns == 0 {
                let rel = match color {
                    Color::White => u32::from(sq) / 8,
                    Color::Black => 7 - u32::from(sq) / 8,
                } as usize;
                mg += PASSED_MG[rel];
                eg += PASSED_EG[rel];
            }
        }
        (mg, eg)
    }

    #[test]
    fn pawn_structure_matches_the_pawn_by_pawn_terms() {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let pawn_squares = 0x00ff_ffff_ffff_ff00u64;
        for i in 0..20_000 {
            let mut r = || crate::hash::xorshift(&mut x);
            // Sparse and dense pawn sets, overlapping or not (the terms do
            // not care whether a square holds pawns of both colours).
            let (a, b) = if i % 2 == 0 {
                (r() & r() & pawn_squares, r() & r() & pawn_squares)
            } else {
                (r() & r() & r() & pawn_squares, r() & pawn_squares)
            };
            for color in [Color::White, Color::Black] {
                assert_eq!(
                    pawn_structure(a, b, color),
                    pawn_structure_by_pawn(a, b, color),
                    "{a:016x} {b:016x} {color:?}"
                );
            }
        }
    }

    #[test]
    fn material_after_a_move_is_the_material_of_the_next_position() {
        // Every legal move of the positions of random games, from starts
        // with castling on both wings (Chess960 too), en passant and
        // promotions at hand.
        let starts = [
            (
                "r3k2r/pPp2ppp/8/3pP3/8/8/PPPP1PpP/R3K2R w KQkq d6 0 1",
                CastlingMode::Standard,
            ),
            (
                "nrbkqbrn/pppppppp/8/8/8/8/PPPPPPPP/NRBKQBRN w KQkq - 0 1",
                CastlingMode::Chess960,
            ),
            ("rk5r/8/8/8/8/8/8/RK5R w KQkq - 0 1", CastlingMode::Chess960),
            (
                "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
                CastlingMode::Standard,
            ),
        ];
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut checked = 0;
        for (fen, mode) in starts {
            for _ in 0..if cfg!(debug_assertions) { 8 } else { 40 } {
                let mut p: Chess = fen.parse::<Fen>().unwrap().into_position(mode).unwrap();
                for _ in 0..150 {
                    let moves = p.legal_moves();
                    if moves.is_empty() {
                        break;
                    }
                    let material = Material::of(p.board());
                    for &m in &moves {
                        let mut next = p.clone();
                        next.play_unchecked(m);
                        assert_eq!(material.after(&p, m), Material::of(next.board()), "{m:?}");
                        checked += 1;
                    }
                    let r = crate::hash::xorshift(&mut x) as usize;
                    p.play_unchecked(moves[r % moves.len()]);
                }
            }
        }
        assert!(checked > 10_000);
    }

    #[test]
    fn phase_is_the_material_phase() {
        for fen in [
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
            "4k3/8/8/8/8/8/8/QQQQKQQQ w - - 0 1",
            "4k3/8/8/8/8/8/8/4K3 w - - 0 1",
        ] {
            let board = pos(fen).board().clone();
            assert_eq!(Material::of(&board).phase.min(MAX_PHASE), phase(&board));
        }
    }

    #[test]
    fn symmetric() {
        // A position and its colour-mirrored twin evaluate the same for the
        // side to move.
        let a = pos("r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4");
        let b = pos("rnbqk2r/pppp1ppp/5n2/2b1p3/4P3/2N2N2/PPPP1PPP/R1BQKB1R b KQkq - 4 4");
        assert_eq!(evaluate(&a), evaluate(&b));
    }

    #[test]
    fn passed_pawns_count() {
        let passed = pos("4k3/8/8/3P4/8/8/8/4K3 w - - 0 1");
        let blocked = pos("4k3/3p4/8/3P4/8/8/8/4K3 w - - 0 1");
        assert!(evaluate(&passed) > evaluate(&blocked) + 60);
    }
}
