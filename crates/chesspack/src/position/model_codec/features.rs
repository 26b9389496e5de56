//! The sparse features of a square, from what the scan has decoded so far
//! ([`Scan`]), and the constant tables they are read from.

use shakmaty::{Color, Piece, Rank, Role, Square};

use super::{
    ACTIVE, BOARD_ROWS, CASTLE_BLACK, CASTLE_WHITE, CTX, EP, F_BK, F_COLUMN, F_DIAG, F_FILE_RAY,
    F_MAJORS, F_MINORS, F_N, F_NW_JOINT, F_OCCUPANCY, F_PAWN_FILES, F_PAWNS, F_PIECES, F_RANK_RAY,
    F_SQ, F_W, F_WK, MATERIAL, MERGED, OFF, PIECES, ctx_of, symbol_piece,
};

/// Width of the padded board: two border columns on the west, one on the
/// east, so that every neighbour a context reads is at a fixed offset.
pub(super) const PAD_WIDTH: usize = 11;

/// `PAD[sq]`: the index of `sq` in the padded board (two border rows
/// below rank 1), whose border cells read [`OFF`].
pub(super) const PAD: [u8; 64] = {
    let mut t = [0u8; 64];
    let mut sq = 0;
    while sq < 64 {
        t[sq] = ((sq / 8 + 2) * PAD_WIDTH + sq % 8 + 2) as u8;
        sq += 1;
    }
    t
};

pub(super) const fn clamp3(d: i32) -> i32 {
    if d < -3 {
        -3
    } else if d > 3 {
        3
    } else {
        d
    }
}

/// `KING_OFFSET[k][sq]`: the offset of `sq` from a king on `k` (each
/// coordinate clamped to ±3, 49 values) times 8, plus the rank of `sq`.
pub(super) const KING_OFFSET: [[u16; 64]; 64] = {
    let mut t = [[0u16; 64]; 64];
    let mut k = 0;
    while k < 64 {
        let mut sq = 0;
        while sq < 64 {
            let dx = clamp3((sq % 8) as i32 - (k % 8) as i32) + 3;
            let dy = clamp3((sq / 8) as i32 - (k / 8) as i32) + 3;
            t[k][sq] = ((dy * 7 + dx) * 8 + (sq / 8) as i32) as u16;
            sq += 1;
        }
        k += 1;
    }
    t
};

/// The padded board with no piece on it.
pub(super) const EMPTY_CELLS: [u8; 128] = {
    let mut t = [OFF as u8; 128];
    let mut sq = 0;
    while sq < 64 {
        t[PAD[sq] as usize] = 0;
        sq += 1;
    }
    t
};

/// The six neighbours of the occupancy pattern, as offsets below a cell of
/// the padded board, with their weights in the pattern's base-3 number:
/// west, two west, north-west, north, north-east, two north.
pub(super) const PATTERN: [(usize, usize); 6] = [
    (1, 243),
    (2, 81),
    (PAD_WIDTH + 1, 27),
    (PAD_WIDTH, 9),
    (PAD_WIDTH - 1, 3),
    (2 * PAD_WIDTH, 1),
];

/// `OFF_PATTERN[sq]`: the part of square `sq`'s occupancy pattern that its
/// neighbours off the board make (class 2 each; empty is 0, a piece 1).
pub(super) const OFF_PATTERN: [u16; 64] = {
    let mut t = [0u16; 64];
    let mut sq = 0;
    while sq < 64 {
        let p = PAD[sq] as usize;
        let mut i = 0;
        while i < 6 {
            if EMPTY_CELLS[p - PATTERN[i].0] == OFF as u8 {
                t[sq] += 2 * PATTERN[i].1 as u16;
            }
            i += 1;
        }
        sq += 1;
    }
    t
};

/// `PIECE_PATTERN[b]`: the part of an occupancy pattern that pieces make,
/// by the bits of [`Scan::neighbour_bits`].
pub(super) const PIECE_PATTERN: [u16; 64] = {
    // Bit i of b: the neighbour at PATTERN[NEIGHBOUR_BIT[i]].
    const NEIGHBOUR_BIT: [usize; 6] = [5, 2, 3, 4, 1, 0];
    let mut t = [0u16; 64];
    let mut b = 0;
    while b < 64 {
        let mut i = 0;
        while i < 6 {
            if b >> i & 1 == 1 {
                t[b] += PATTERN[NEIGHBOUR_BIT[i]].1 as u16;
            }
            i += 1;
        }
        b += 1;
    }
    t
};

/// The piece symbols possible on each rank: no pawn on the first and the
/// last, a rook with a castling right only there, the en-passant pawn only
/// on the fourth and the fifth.
pub(super) const RANK_MASK: [u16; 8] = {
    let all: u16 = (1 << PIECES) - 1;
    let special = 1 << CASTLE_WHITE | 1 << CASTLE_BLACK | 1 << EP;
    let mut t = [all & !special; 8];
    t[0] = all & !(1 | 1 << 5) & !(1 << CASTLE_BLACK | 1 << EP);
    t[7] = all & !(1 | 1 << 5) & !(1 << CASTLE_WHITE | 1 << EP);
    t[3] |= 1 << EP;
    t[4] |= 1 << EP;
    t
};

/// What the coder knows while it walks the board.
pub(super) struct Scan {
    /// Context symbol of each square at [`PAD`]`[sq]` (kings from the
    /// start, others once coded; 0 until then), [`OFF`] on the border.
    cells: [u8; 128],
    /// Bit `p` set where cell `p` of the padded board holds a piece.
    occupied: u128,
    wk: Square,
    bk: Square,
    /// `F_PAWN_FILES + 64 ×` the pawn-file class of each file.
    file_rows: [u16; 8],
    /// Count of each context symbol coded so far.
    seen: [u8; 16],
    /// Bishops seen: bit 0 white light, 1 white dark, 2 black light, 3
    /// black dark.
    bishops: u8,
    /// Knights, bishops, rooks and queens seen.
    piece_count: u8,
    white_pawn_files: u8,
    black_pawn_files: u8,
    castles: [u8; 2],
    /// The symbols that [`RANK_MASK`] allows but the board no longer
    /// does: a castling rook of a king off its back rank or whose two
    /// rooks are seen, a second en-passant pawn.
    ruled_out: u16,
    /// The last piece coded on each file and rank; 0 for none yet.
    file_last: [u8; 8],
    rank_last: [u8; 8],
    /// The rows of the material features, as far as they do not depend on
    /// the square: majors, minors (without the square colour), pawns and
    /// pieces (without the rank); updated when a piece is placed.
    pub(super) majors: usize,
    pub(super) minors: usize,
    pub(super) pawns: usize,
    pub(super) pieces: usize,
}

impl Scan {
    pub(super) fn new(wk: Square, bk: Square) -> Scan {
        let mut cells = EMPTY_CELLS;
        cells[usize::from(PAD[wk as usize & 63])] = 6;
        cells[usize::from(PAD[bk as usize & 63])] = 12;
        let mut scan = Scan {
            cells,
            occupied: 1 << PAD[wk as usize & 63] | 1 << PAD[bk as usize & 63],
            wk,
            bk,
            file_rows: [F_PAWN_FILES as u16; 8],
            seen: [0; 16],
            bishops: 0,
            piece_count: 0,
            white_pawn_files: 0,
            black_pawn_files: 0,
            castles: [0; 2],
            ruled_out: if wk.rank() == Rank::First {
                0
            } else {
                1 << CASTLE_WHITE
            } | if bk.rank() == Rank::Eighth {
                0
            } else {
                1 << CASTLE_BLACK
            },
            file_last: [0; 8],
            rank_last: [0; 8],
            majors: 0,
            minors: 0,
            pawns: 0,
            pieces: 0,
        };
        scan.update_material();
        scan
    }

    pub(super) fn update_material(&mut self) {
        self.update_majors();
        self.update_minors();
        self.update_pawns();
        self.update_pieces();
    }

    pub(super) fn update_majors(&mut self) {
        let c3 = |x: u8| usize::from(x.min(2));
        self.majors = F_MAJORS
            + ((c3(self.seen[5]) * 3 + c3(self.seen[11])) * 3 + c3(self.seen[4])) * 3
            + c3(self.seen[10]);
    }

    pub(super) fn update_minors(&mut self) {
        let c3 = |x: u8| usize::from(x.min(2));
        let bishops = usize::from(self.bishops);
        self.minors = F_MINORS + ((c3(self.seen[2]) * 3 + c3(self.seen[8])) * 16 + bishops) * 2;
    }

    pub(super) fn update_pawns(&mut self) {
        self.pawns =
            F_PAWNS + (usize::from(self.seen[1].min(8)) * 9 + usize::from(self.seen[7].min(8))) * 8;
    }

    pub(super) fn update_pieces(&mut self) {
        self.pieces = F_PIECES + usize::from(self.piece_count.min(14)) * 8;
    }

    /// The feature rows of square `sq`; the first [`MERGED`] are folded
    /// into later ones in the coder's tables. (The trainer reads them; the
    /// coder reads its tables, made from them.)
    #[inline]
    #[cfg_attr(not(feature = "train"), allow(dead_code))]
    pub(super) fn context(&self, sq: usize) -> [u16; ACTIVE] {
        let sq = sq & 63;
        let p = usize::from(PAD[sq]);
        let at = |d: usize| usize::from(self.cells[p.wrapping_sub(d) & 127]);
        let mut rows = [0u16; ACTIVE];
        rows[..MERGED].copy_from_slice(&[
            (F_SQ + sq) as u16,
            (F_N + sq * CTX + at(PAD_WIDTH)) as u16,
            (F_W + sq * CTX + at(1)) as u16,
        ]);
        let (b, m) = (self.board_rows(sq), self.material_rows(sq));
        rows[MERGED..MATERIAL].copy_from_slice(&b[..MATERIAL - MERGED]);
        rows[MATERIAL..MATERIAL + 4].copy_from_slice(&m);
        rows[MATERIAL + 4..].copy_from_slice(&b[MATERIAL - MERGED..]);
        rows
    }

    /// The feature rows of square `sq` that the coder's tables keep: those
    /// of [`Scan::context`] after the first [`MERGED`], as
    /// [`Scan::board_rows`] and [`Scan::material_rows`] give them.
    #[cfg(test)]
    pub(super) fn coded_rows(&self, sq: usize) -> [u16; super::CODED] {
        let (b, m) = (self.board_rows(sq), self.material_rows(sq));
        [
            b[0], b[1], b[2], b[3], b[4], m[0], m[1], m[2], m[3], b[5], b[6], b[7], b[8],
        ]
    }

    /// The coded feature rows of square `sq` but the material ones: what
    /// every square needs, empty or not.
    #[inline(always)]
    pub(super) fn board_rows(&self, sq: usize) -> [u16; BOARD_ROWS] {
        let sq = sq & 63;
        let (f, rank) = (sq % 8, sq / 8);
        let p = usize::from(PAD[sq]);
        // Neighbours at fixed offsets in the padded board: north, west,
        // north-west, north-east, two north.
        let at = |d: usize| usize::from(self.cells[p.wrapping_sub(d) & 127]);
        let (n, w, nw, ne, nn) = (
            at(PAD_WIDTH),
            at(1),
            at(PAD_WIDTH + 1),
            at(PAD_WIDTH - 1),
            at(2 * PAD_WIDTH),
        );
        let pattern = usize::from(OFF_PATTERN[sq] + PIECE_PATTERN[self.neighbour_bits(p)]);
        let r = |x: usize| x as u16;
        [
            r(F_DIAG + (nw * CTX + ne) * 8 + rank),
            r(F_COLUMN + (n * CTX + nn) * 8 + rank),
            self.file_rows[f] + sq as u16,
            F_WK as u16 + KING_OFFSET[self.wk as usize & 63][sq],
            F_BK as u16 + KING_OFFSET[self.bk as usize & 63][sq],
            r(F_OCCUPANCY + pattern),
            r(F_FILE_RAY + sq * CTX + usize::from(self.file_last[f])),
            r(F_RANK_RAY + sq * CTX + usize::from(self.rank_last[rank])),
            r(F_NW_JOINT + (n * CTX + w) * 64 + sq),
        ]
    }

    /// The rows of the material features of square `sq` (the material seen
    /// so far, with the rank and the square colour), which only an
    /// occupied square's piece needs one by one: the occupancy sums them
    /// once per change ([`material_occupancy`](super::coder::material_occupancy)).
    #[inline(always)]
    pub(super) fn material_rows(&self, sq: usize) -> [u16; 4] {
        let (rank, light) = (sq / 8 % 8, (sq % 8 + sq / 8) % 2);
        [
            self.majors as u16,
            (self.minors + light) as u16,
            (self.pawns + rank) as u16,
            (self.pieces + rank) as u16,
        ]
    }

    /// Which of the six neighbours of padded cell `p` in [`PATTERN`] hold a
    /// piece: bit 0 two north, bits 1–3 north-west, north, north-east,
    /// bits 4–5 two west, west.
    #[inline(always)]
    pub(super) fn neighbour_bits(&self, p: usize) -> usize {
        // Bits 0, 10–12 and 20–21 of the window are the neighbours.
        let window = (self.occupied >> (p.wrapping_sub(2 * PAD_WIDTH) & 127)) as u32;
        ((window & 1) | (window >> 9 & 0b1110) | (window >> 16 & 0b11_0000)) as usize
    }

    /// The piece symbols possible on square `sq`.
    #[inline(always)]
    pub(super) fn mask(&self, sq: usize) -> u16 {
        RANK_MASK[sq / 8 % 8] & !self.ruled_out
    }

    /// `F_PAWN_FILES + 64 ×` the class of file `f`: pawns of either colour
    /// on it and on the adjacent files.
    pub(super) fn file_row(&self, f: usize) -> u16 {
        let bit = 1u8 << f;
        let adj = (bit << 1) | (bit >> 1);
        let class = u16::from(self.white_pawn_files & bit != 0)
            | u16::from(self.black_pawn_files & bit != 0) << 1
            | u16::from(self.white_pawn_files & adj != 0) << 2
            | u16::from(self.black_pawn_files & adj != 0) << 3;
        F_PAWN_FILES as u16 + class * 64
    }

    /// The context symbol on `sq`.
    pub(super) fn cell(&self, sq: usize) -> u8 {
        self.cells[usize::from(PAD[sq & 63])]
    }

    pub(super) fn mark(&mut self, sq: usize, c: u8) {
        let (f, r) = (sq % 8, sq / 8);
        self.file_last[f] = c;
        self.rank_last[r] = c;
    }

    /// Records symbol `s` (a piece symbol) on `sq`; returns the piece.
    #[inline(always)]
    pub(super) fn place(&mut self, sq: usize, s: usize) -> Piece {
        let rank = sq / 8;
        let piece = if s == EP {
            self.ruled_out |= 1 << EP;
            if rank == 3 {
                Color::White.pawn()
            } else {
                Color::Black.pawn()
            }
        } else {
            symbol_piece(s)
        };
        if s == CASTLE_WHITE || s == CASTLE_BLACK {
            let side = usize::from(s == CASTLE_BLACK);
            self.castles[side] += 1;
            if self.castles[side] == 2 {
                self.ruled_out |= 1 << s;
            }
        }
        let c = ctx_of(piece);
        self.cells[usize::from(PAD[sq & 63])] = c;
        self.occupied |= 1 << PAD[sq & 63];
        self.mark(sq, c);
        self.seen[usize::from(c)] += 1;
        let f = sq % 8;
        match (piece.color, piece.role) {
            (color, Role::Pawn) => {
                if color == Color::White {
                    self.white_pawn_files |= 1 << f;
                } else {
                    self.black_pawn_files |= 1 << f;
                }
                for g in f.saturating_sub(1)..(f + 2).min(8) {
                    self.file_rows[g] = self.file_row(g);
                }
            }
            (color, Role::Bishop) => {
                let light = usize::from((f + rank) % 2 == 1);
                self.bishops |= 1 << (usize::from(color == Color::Black) * 2 + 1 - light);
            }
            _ => {}
        }
        // Only the material rows that count this piece change.
        match c {
            1 | 7 => self.update_pawns(),
            2 | 3 | 8 | 9 => {
                self.piece_count += 1;
                self.update_minors();
                self.update_pieces();
            }
            _ => {
                self.piece_count += 1;
                self.update_majors();
                self.update_pieces();
            }
        }
        piece
    }
}
