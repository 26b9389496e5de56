//! `position-model`: a learned model of real positions, range-coded.
//!
//! The stream codes, in this order: the white king's square (a learned
//! distribution), the black king's square given the white king's, then the
//! other 62 squares a1, b1, …, h8: for each, *occupied or empty* and, when
//! occupied, which of 13 symbols it holds (a piece of either colour but a
//! king, a rook with a castling right of either colour, the pawn that can be
//! taken en passant). Both are log-linear models over sparse features of what
//! is already decoded: the square, its decoded neighbours (alone and the
//! north and west ones jointly) and their occupancy pattern, the pawns already seen on its file and the adjacent
//! ones, its offset from either king, and the material seen so far (queens,
//! rooks, knights, bishops by square colour, pawns, pieces). The side to
//! move comes last and costs nothing when a king is in check or a pawn can
//! be taken en passant.
//!
//! Inference is integer-only, so every machine and build produces the same
//! bits: weights in 1/1024 nats (16 bits each, so that the tables stay in
//! the caches); the occupancy logit summed in 32 bits and turned into a
//! frequency by a table built from the integer exp table of
//! [`crate::model::weights_of`] and [`crate::coder::quantize_fast`]; the 13
//! piece logits summed in saturating 16-bit lanes, weighed by that exp table
//! cut to 24 bits and scaled to `1 << 24` with one division (stream version
//! 4; vector registers where the machine has them, the same integers
//! everywhere). The coder's tables fold some rows into others when the
//! model loads (integer sums, so the logits are the same; a folded weight
//! that does not fit 16 bits is an error) and sum the material rows once
//! per placed piece.
//!
//! The length of the stream selects the fallback: a position that the
//! model would code in [`super::rank::BITS`] (157) bits or more is written
//! as its rank in [`super::rank`] instead, exactly 157 bits long, so that
//! no position of standard chess takes more than 157 bits and the model's
//! streams pay nothing for the escape. (Every container of these streams
//! records their length in bits, as it must for any range-coded stream.)

use shakmaty::{Bitboard, Chess, Color, Piece, Position, Rank, Role, Square};
use wide::{i16x16, u16x16, u32x16};

use super::{assemble_board, ep_pawn};
use crate::{
    Bits, Error,
    coder::{Decoder, Encoder, quantize_fast},
    model::{SCALE, file_hash, weights_into},
};

const MAGIC: &[u8; 4] = b"CPPM";
const VERSION: u32 = 4;
const MODEL_FILE: &[u8] = include_bytes!("model.bin");

/// Width of a weight row: lane 0 is the occupancy logit, lanes 1..=13 the
/// logits of the 13 piece symbols.
pub const LANES: usize = 16;
/// The number of piece symbols of an occupied square.
pub const PIECES: usize = 13;
const EP: usize = 12;
const CASTLE_WHITE: usize = 10;
const CASTLE_BLACK: usize = 11;

/// Context symbols: 0 empty, 1–6 white pawn … king, 7–12 black, 13 off the
/// board.
const OFF: usize = 13;
const CTX: usize = 14;

// Feature blocks: (name, rows).
const F_SQ: usize = 0;
const F_N: usize = F_SQ + 64;
const F_W: usize = F_N + 64 * CTX;
const F_DIAG: usize = F_W + 64 * CTX;
const F_COLUMN: usize = F_DIAG + CTX * CTX * 8;
const F_PAWN_FILES: usize = F_COLUMN + CTX * CTX * 8;
const F_WK: usize = F_PAWN_FILES + 16 * 64;
const F_BK: usize = F_WK + 49 * 8;
const F_MAJORS: usize = F_BK + 49 * 8;
const F_MINORS: usize = F_MAJORS + 81;
const F_PAWNS: usize = F_MINORS + 288;
const F_PIECES: usize = F_PAWNS + 81 * 8;
const F_OCCUPANCY: usize = F_PIECES + 15 * 8;
const F_FILE_RAY: usize = F_OCCUPANCY + 729;
const F_RANK_RAY: usize = F_FILE_RAY + 64 * CTX;
const F_DIAG_RAYS: usize = F_RANK_RAY + 64 * CTX;
const F_NW_JOINT: usize = F_DIAG_RAYS + CTX * CTX * 8;
/// The number of weight rows.
pub const ROWS: usize = F_NW_JOINT + CTX * CTX * 64;
/// Features active at each square.
pub const ACTIVE: usize = 17;
/// The first features of [`Scan::context`] (square, north and west
/// neighbour), which the coder's tables fold into the pawn-file and the
/// north × west rows of the same square: integer sums, so the same logits
/// from 14 lookups instead of 17.
const MERGED: usize = 3;
/// The feature rows the coder looks up for each square.
const CODED: usize = ACTIVE - MERGED;
/// The features of [`Scan::context`] at `MATERIAL..MATERIAL + 4`: the
/// material seen so far, which changes only when a piece is placed (and with
/// the rank and the square colour), so the coder sums their occupancy
/// weights once per change. (The order of the features is the order of the
/// trainer's floating-point sums, so it stays as the shipped model was
/// trained.)
const MATERIAL: usize = 8;
/// A power of two above [`ROWS`]: the coder's tables have this many rows, so
/// that a row index masked with `ROWS_CAP - 1` needs no bounds check.
const ROWS_CAP: usize = 1 << 16;
const _: () = assert!(ROWS <= ROWS_CAP);

/// The model: king-square counts, one weight row per feature value and the
/// side-to-move counts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PositionWeights {
    /// Counts of the white king's square.
    pub white_king: Vec<u32>,
    /// Counts of the black king's square by white king square, 64 × 64.
    pub black_king: Vec<u32>,
    /// `ROWS × LANES` weights, 1/1024 nats.
    pub rows: Vec<i32>,
    /// Counts of white and black to move, when nothing forces it.
    pub turn: [u32; 2],
}

/// Frequencies and rows, ready to code.
#[derive(Debug)]
struct Tables {
    white_king: Vec<u32>,
    black_king: Vec<Vec<u32>>,
    /// Lane 0 of each row: the occupancy weights (16 bits halve the table
    /// and its cache footprint).
    occupancy: Box<[i16; ROWS_CAP]>,
    /// Lanes 1..=13 of each row, moved to 0..13: the piece weights.
    pieces: Box<[[i16; LANES]; ROWS_CAP]>,
    turn: Vec<u32>,
    /// `exp(−i/64)` in 24-bit fixed point (the move model's exp table
    /// shifted), for the piece symbols.
    piece_exp: Box<[u32; PIECE_EXP_LEN]>,
    hash: u64,
}

impl PositionWeights {
    /// Reads a model file.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidData`] for a bad magic, version or size.
    pub fn from_bytes(bytes: &[u8]) -> Result<PositionWeights, Error> {
        let bad = |what: &str| Error::InvalidData(format!("position model file: {what}"));
        if bytes.len() < 8 || &bytes[..4] != MAGIC {
            return Err(bad("bad magic"));
        }
        let version = u32::from_le_bytes(bytes[4..8].try_into().expect("4 bytes"));
        if version != VERSION {
            return Err(bad(&format!("version {version}, expected {VERSION}")));
        }
        let words: Vec<u32> = bytes[8..]
            .chunks(4)
            .map(|c| c.try_into().map(u32::from_le_bytes))
            .collect::<Result<_, _>>()
            .map_err(|_| bad("truncated"))?;
        if words.len() != 64 + 64 * 64 + ROWS * LANES + 2 {
            return Err(bad("wrong size"));
        }
        let (white_king, rest) = words.split_at(64);
        let (black_king, rest) = rest.split_at(64 * 64);
        let (rows, turn) = rest.split_at(ROWS * LANES);
        Ok(PositionWeights {
            white_king: white_king.to_vec(),
            black_king: black_king.to_vec(),
            rows: rows.iter().map(|&w| w as i32).collect(),
            turn: [turn[0], turn[1]],
        })
    }

    /// The model file bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(8 + 4 * (64 + 4096 + self.rows.len() + self.turn.len()));
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&VERSION.to_le_bytes());
        for w in self.white_king.iter().chain(&self.black_king) {
            out.extend_from_slice(&w.to_le_bytes());
        }
        for w in &self.rows {
            out.extend_from_slice(&w.to_le_bytes());
        }
        for w in &self.turn {
            out.extend_from_slice(&w.to_le_bytes());
        }
        out
    }

    /// The model shipped in the library.
    ///
    /// ```
    /// let w = chesspack::position::PositionWeights::embedded();
    /// assert_eq!(w.rows.len(), chesspack::position::ROWS * chesspack::position::LANES);
    /// ```
    pub fn embedded() -> &'static PositionWeights {
        static EMBEDDED: std::sync::OnceLock<PositionWeights> = std::sync::OnceLock::new();
        EMBEDDED.get_or_init(|| {
            PositionWeights::from_bytes(MODEL_FILE).expect("embedded position model")
        })
    }

    /// The hash that identifies this model ([`file_hash`] of its file).
    pub fn hash(&self) -> u64 {
        file_hash(&self.to_bytes())
    }

    /// The bits the model part of `position-model` takes for each of
    /// `positions` with these weights (no escape), for training reports.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidData`] for a model of the wrong size.
    pub fn model_bits(&self, positions: &[Chess]) -> Result<Vec<usize>, Error> {
        let t = self.tables()?;
        positions
            .iter()
            .map(|p| encode_model(p, &t).map(|b| b.len()))
            .collect()
    }

    fn tables(&self) -> Result<Tables, Error> {
        let freqs = |counts: &[u32]| -> Vec<u32> {
            let w: Vec<u64> = counts.iter().map(|&c| u64::from(c) + 1).collect();
            let mut f = Vec::new();
            quantize_fast(&w, &mut f);
            f
        };
        if self.white_king.len() != 64
            || self.black_king.len() != 64 * 64
            || self.rows.len() != ROWS * LANES
        {
            return Err(Error::InvalidData(
                "position model of the wrong size".into(),
            ));
        }
        if self.rows.iter().any(|&w| i16::try_from(w).is_err()) {
            return Err(Error::InvalidData(
                "position model weight out of range".into(),
            ));
        }
        // Built on the heap: the piece table (1 MB) would not fit a
        // thread's stack in a debug build.
        let mut occupancy: Box<[i16; ROWS_CAP]> = vec![0; ROWS_CAP]
            .into_boxed_slice()
            .try_into()
            .expect("ROWS_CAP rows");
        let mut pieces: Box<[[i16; LANES]; ROWS_CAP]> = vec![[0; LANES]; ROWS_CAP]
            .into_boxed_slice()
            .try_into()
            .expect("ROWS_CAP rows");
        // Each row with the rows folded into it: the square's row into its
        // pawn-file rows, the square's north and west rows into its
        // north × west rows.
        let row = |i: usize| &self.rows[i * LANES..(i + 1) * LANES];
        for i in 0..ROWS {
            let folded: &[usize] = if (F_PAWN_FILES..F_PAWN_FILES + 16 * 64).contains(&i) {
                &[(i - F_PAWN_FILES) % 64][..]
            } else if i >= F_NW_JOINT {
                let (nw, sq) = ((i - F_NW_JOINT) / 64, (i - F_NW_JOINT) % 64);
                &[F_N + sq * CTX + nw / CTX, F_W + sq * CTX + nw % CTX][..]
            } else {
                &[]
            };
            let mut sum = [0i32; LANES];
            for &j in std::iter::once(&i).chain(folded) {
                for (s, &w) in sum.iter_mut().zip(row(j)) {
                    *s += w;
                }
            }
            let narrow = |w: i32| {
                i16::try_from(w)
                    .map_err(|_| Error::InvalidData("position model weight out of range".into()))
            };
            occupancy[i] = narrow(sum[0])?;
            for (r, &w) in pieces[i].iter_mut().zip(&sum[1..=PIECES]) {
                *r = narrow(w)?;
            }
        }
        let black_king = (0..64)
            .map(|wk| {
                // Squares next to the white king (and its own) are impossible.
                let near = shakmaty::attacks::king_attacks(Square::new(wk as u32))
                    .with(Square::new(wk as u32));
                let w: Vec<u64> = (0..64)
                    .map(|bk| {
                        if near.contains(Square::new(bk)) {
                            0
                        } else {
                            u64::from(self.black_king[wk * 64 + bk as usize]) + 1
                        }
                    })
                    .collect();
                // Impossible squares keep the minimum frequency of 1 that
                // quantize_fast gives every symbol; decoding one is an error.
                let mut f = Vec::new();
                quantize_fast(&w, &mut f);
                f
            })
            .collect();
        Ok(Tables {
            white_king: freqs(&self.white_king),
            black_king,
            occupancy,
            pieces,
            turn: freqs(&self.turn),
            piece_exp: Box::new(std::array::from_fn(|i| {
                crate::model::exp_table()
                    .get(i)
                    .map_or(0, |&e| (e >> 16) as u32)
            })),
            hash: self.hash(),
        })
    }
}

fn tables() -> &'static Tables {
    static TABLES: std::sync::OnceLock<Tables> = std::sync::OnceLock::new();
    TABLES.get_or_init(|| {
        PositionWeights::embedded()
            .tables()
            .expect("embedded position model")
    })
}

/// The symbol a square holds in the coded stream (`None` for empty or a
/// king), by the rules above.
fn piece_symbol(p: Piece) -> usize {
    let r = p.role as usize - 1; // pawn 0 … queen 4
    r + if p.color == Color::Black { 5 } else { 0 }
}

fn symbol_piece(s: usize) -> Piece {
    const ROLES: [Role; 5] = [
        Role::Pawn,
        Role::Knight,
        Role::Bishop,
        Role::Rook,
        Role::Queen,
    ];
    match s {
        0..=4 => Piece {
            color: Color::White,
            role: ROLES[s],
        },
        5..=9 => Piece {
            color: Color::Black,
            role: ROLES[s - 5],
        },
        CASTLE_WHITE => Color::White.rook(),
        CASTLE_BLACK => Color::Black.rook(),
        // EP: the colour follows from the rank, see `Scan::place`.
        _ => Color::White.pawn(),
    }
}

fn ctx_of(p: Piece) -> u8 {
    p.role as u8 + if p.color == Color::Black { 6 } else { 0 }
}

/// Width of the padded board: two border columns on the west, one on the
/// east, so that every neighbour a context reads is at a fixed offset.
const PAD_WIDTH: usize = 11;

/// `PAD[sq]`: the index of `sq` in the padded board (two border rows
/// below rank 1), whose border cells read [`OFF`].
const PAD: [u8; 64] = {
    let mut t = [0u8; 64];
    let mut sq = 0;
    while sq < 64 {
        t[sq] = ((sq / 8 + 2) * PAD_WIDTH + sq % 8 + 2) as u8;
        sq += 1;
    }
    t
};

const fn clamp3(d: i32) -> i32 {
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
const KING_OFFSET: [[u16; 64]; 64] = {
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
const EMPTY_CELLS: [u8; 128] = {
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
const PATTERN: [(usize, usize); 6] = [
    (1, 243),
    (2, 81),
    (PAD_WIDTH + 1, 27),
    (PAD_WIDTH, 9),
    (PAD_WIDTH - 1, 3),
    (2 * PAD_WIDTH, 1),
];

/// `OFF_PATTERN[sq]`: the part of square `sq`'s occupancy pattern that its
/// neighbours off the board make (class 2 each; empty is 0, a piece 1).
const OFF_PATTERN: [u16; 64] = {
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
const PIECE_PATTERN: [u16; 64] = {
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

/// What the coder knows while it walks the board.
struct Scan {
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
    ep_seen: bool,
    /// The last piece coded on each file, rank, diagonal (file − rank + 7)
    /// and anti-diagonal (file + rank); 0 for none yet.
    file_last: [u8; 8],
    rank_last: [u8; 8],
    diag_last: [u8; 16],
    anti_last: [u8; 16],
    /// The rows of the material features, as far as they do not depend on
    /// the square: majors, minors (without the square colour), pawns and
    /// pieces (without the rank); updated when a piece is placed.
    majors: usize,
    minors: usize,
    pawns: usize,
    pieces: usize,
}

impl Scan {
    fn new(wk: Square, bk: Square) -> Scan {
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
            ep_seen: false,
            file_last: [0; 8],
            rank_last: [0; 8],
            diag_last: [0; 16],
            anti_last: [0; 16],
            majors: 0,
            minors: 0,
            pawns: 0,
            pieces: 0,
        };
        scan.update_material();
        scan
    }

    fn update_material(&mut self) {
        self.update_majors();
        self.update_minors();
        self.update_pawns();
        self.update_pieces();
    }

    fn update_majors(&mut self) {
        let c3 = |x: u8| usize::from(x.min(2));
        self.majors = F_MAJORS
            + ((c3(self.seen[5]) * 3 + c3(self.seen[11])) * 3 + c3(self.seen[4])) * 3
            + c3(self.seen[10]);
    }

    fn update_minors(&mut self) {
        let c3 = |x: u8| usize::from(x.min(2));
        let bishops = usize::from(self.bishops);
        self.minors = F_MINORS + ((c3(self.seen[2]) * 3 + c3(self.seen[8])) * 16 + bishops) * 2;
    }

    fn update_pawns(&mut self) {
        self.pawns =
            F_PAWNS + (usize::from(self.seen[1].min(8)) * 9 + usize::from(self.seen[7].min(8))) * 8;
    }

    fn update_pieces(&mut self) {
        self.pieces = F_PIECES + usize::from(self.piece_count.min(14)) * 8;
    }

    /// The feature rows of square `sq`; the first [`MERGED`] are folded
    /// into later ones in the coder's tables.
    #[inline]
    fn context(&self, sq: usize) -> [u16; ACTIVE] {
        let sq = sq & 63;
        let p = usize::from(PAD[sq]);
        let at = |d: usize| usize::from(self.cells[p.wrapping_sub(d) & 127]);
        let mut rows = [0u16; ACTIVE];
        rows[..MERGED].copy_from_slice(&[
            (F_SQ + sq) as u16,
            (F_N + sq * CTX + at(PAD_WIDTH)) as u16,
            (F_W + sq * CTX + at(1)) as u16,
        ]);
        rows[MERGED..].copy_from_slice(&self.coded_rows(sq));
        rows
    }

    /// The feature rows of square `sq` that the coder's tables keep: those
    /// of [`Scan::context`] after the first [`MERGED`].
    #[inline(always)]
    fn coded_rows(&self, sq: usize) -> [u16; CODED] {
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
        let light = (f + rank) % 2;
        let r = |x: usize| x as u16;
        [
            r(F_DIAG + (nw * CTX + ne) * 8 + rank),
            r(F_COLUMN + (n * CTX + nn) * 8 + rank),
            self.file_rows[f] + sq as u16,
            F_WK as u16 + KING_OFFSET[self.wk as usize & 63][sq],
            F_BK as u16 + KING_OFFSET[self.bk as usize & 63][sq],
            r(self.majors),
            r(self.minors + light),
            r(self.pawns + rank),
            r(self.pieces + rank),
            r(F_OCCUPANCY + pattern),
            r(F_FILE_RAY + sq * CTX + usize::from(self.file_last[f])),
            r(F_RANK_RAY + sq * CTX + usize::from(self.rank_last[rank])),
            r(F_DIAG_RAYS
                + (usize::from(self.diag_last[(f + 7 - rank) & 15]) * CTX
                    + usize::from(self.anti_last[(f + rank) & 15]))
                    * 8
                + rank),
            r(F_NW_JOINT + (n * CTX + w) * 64 + sq),
        ]
    }

    /// Which of the six neighbours of padded cell `p` in [`PATTERN`] hold a
    /// piece: bit 0 two north, bits 1–3 north-west, north, north-east,
    /// bits 4–5 two west, west.
    #[inline(always)]
    fn neighbour_bits(&self, p: usize) -> usize {
        // Bits 0, 10–12 and 20–21 of the window are the neighbours.
        let window = (self.occupied >> (p.wrapping_sub(2 * PAD_WIDTH) & 127)) as u32;
        ((window & 1) | (window >> 9 & 0b1110) | (window >> 16 & 0b11_0000)) as usize
    }

    /// The piece symbols possible on square `sq`.
    fn mask(&self, sq: usize) -> u16 {
        let rank = sq / 8;
        let mut mask: u16 = (1 << PIECES) - 1;
        if rank == 0 || rank == 7 {
            mask &= !(1 | 1 << 5);
        }
        if rank != 0 || self.wk.rank() != Rank::First || self.castles[0] >= 2 {
            mask &= !(1 << CASTLE_WHITE);
        }
        if rank != 7 || self.bk.rank() != Rank::Eighth || self.castles[1] >= 2 {
            mask &= !(1 << CASTLE_BLACK);
        }
        if (rank != 3 && rank != 4) || self.ep_seen {
            mask &= !(1 << EP);
        }
        mask
    }

    /// `F_PAWN_FILES + 64 ×` the class of file `f`: pawns of either colour
    /// on it and on the adjacent files.
    fn file_row(&self, f: usize) -> u16 {
        let bit = 1u8 << f;
        let adj = (bit << 1) | (bit >> 1);
        let class = u16::from(self.white_pawn_files & bit != 0)
            | u16::from(self.black_pawn_files & bit != 0) << 1
            | u16::from(self.white_pawn_files & adj != 0) << 2
            | u16::from(self.black_pawn_files & adj != 0) << 3;
        F_PAWN_FILES as u16 + class * 64
    }

    /// The context symbol on `sq`.
    fn cell(&self, sq: usize) -> u8 {
        self.cells[usize::from(PAD[sq & 63])]
    }

    fn mark(&mut self, sq: usize, c: u8) {
        let (f, r) = (sq % 8, sq / 8);
        self.file_last[f] = c;
        self.rank_last[r] = c;
        self.diag_last[f + 7 - r] = c;
        self.anti_last[f + r] = c;
    }

    /// Records symbol `s` (a piece symbol) on `sq`; returns the piece.
    #[inline(always)]
    fn place(&mut self, sq: usize, s: usize) -> Piece {
        let rank = sq / 8;
        let piece = if s == EP {
            self.ep_seen = true;
            if rank == 3 {
                Color::White.pawn()
            } else {
                Color::Black.pawn()
            }
        } else {
            symbol_piece(s)
        };
        if s == CASTLE_WHITE {
            self.castles[0] += 1;
        } else if s == CASTLE_BLACK {
            self.castles[1] += 1;
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

/// Sums the occupancy weights of a square's features but the material ones,
/// which `material` sums (see [`material_occupancy`]).
#[inline]
fn occupancy_logit(weights: &[i16; ROWS_CAP], active: &[u16; CODED], material: i32) -> i32 {
    active[..MATERIAL - MERGED]
        .iter()
        .chain(&active[MATERIAL - MERGED + 4..])
        .fold(material, |sum, &r| {
            sum + i32::from(weights[usize::from(r) & (ROWS_CAP - 1)])
        })
}

/// The occupancy weights of the material features on `rank`, on dark and
/// on light squares.
fn material_occupancy(weights: &[i16; ROWS_CAP], scan: &Scan, rank: usize) -> [i32; 2] {
    let w = |r: usize| i32::from(weights[r & (ROWS_CAP - 1)]);
    let base = w(scan.majors) + w(scan.pawns + rank) + w(scan.pieces + rank);
    [base + w(scan.minors), base + w(scan.minors + 1)]
}

/// A [`Scan`] as the encoder and the decoder walk it: the occupancy
/// frequencies of each square, with the material weights summed once per
/// placed piece or rank.
struct CoderScan<'t> {
    scan: Scan,
    t: &'t Tables,
    occ: &'static [u32],
    material: [i32; 2],
    stale: bool,
}

impl<'t> CoderScan<'t> {
    fn new(t: &'t Tables, wk: Square, bk: Square) -> CoderScan<'t> {
        CoderScan {
            scan: Scan::new(wk, bk),
            t,
            occ: occupancy_table(),
            material: [0; 2],
            stale: true,
        }
    }

    /// The context rows of `sq` and its frequencies of empty and occupied;
    /// `None` for a king's square. Squares come in order, a1 to h8.
    #[inline(always)]
    fn square(&mut self, sq: usize) -> Option<([u16; CODED], [u32; 2])> {
        if self.stale || sq.is_multiple_of(8) {
            self.material = material_occupancy(&self.t.occupancy, &self.scan, sq / 8);
            self.stale = false;
        }
        if sq == self.scan.wk as usize || sq == self.scan.bk as usize {
            self.scan.mark(sq, self.scan.cell(sq));
            return None;
        }
        let rows = self.scan.coded_rows(sq);
        let material = self.material[(sq + sq / 8) % 2];
        let logit = occupancy_logit(&self.t.occupancy, &rows, material);
        Some((rows, occupancy(self.occ, logit)))
    }

    /// The frequencies of the piece symbols on `sq` (mask `mask`), whose
    /// context is `rows`.
    #[inline(always)]
    fn pieces(&self, rows: &[u16; CODED], mask: u16) -> PieceFreqs {
        PieceFreqs::new(&self.t.piece_exp, &piece_logits(&self.t.pieces, rows), mask)
    }

    /// Records symbol `s` on `sq` (see [`Scan::place`]).
    #[inline(always)]
    fn place(&mut self, sq: usize, s: usize) -> Piece {
        self.stale = true;
        self.scan.place(sq, s)
    }
}

/// Sums the piece weight rows of a square's features, saturating at the
/// ends of 16 bits (±32 nats; in this order, so that every machine gets the
/// same sums).
#[inline]
fn piece_logits(rows: &[[i16; LANES]; ROWS_CAP], active: &[u16; CODED]) -> [i16; LANES] {
    let mut sum = [0i16; LANES];
    for &r in active {
        let row = &rows[usize::from(r) & (ROWS_CAP - 1)];
        for (s, &w) in sum.iter_mut().zip(row) {
            *s = s.saturating_add(w);
        }
    }
    sum
}

/// Range of occupancy logits the model distinguishes (±16 nats).
const OCC_RANGE: i32 = 16 * SCALE;

/// Frequency of *occupied* by occupancy logit, in steps of 1/64 nat
/// (integer-only, from the exp table of the move model).
fn occupancy_table() -> &'static [u32] {
    static TABLE: std::sync::OnceLock<Vec<u32>> = std::sync::OnceLock::new();
    TABLE.get_or_init(|| {
        let (mut w, mut f) = (Vec::new(), Vec::new());
        (0..=(2 * OCC_RANGE) / 16)
            .map(|i| {
                weights_into(&[0, i * 16 - OCC_RANGE], &mut w);
                quantize_fast(&w, &mut f);
                f[1]
            })
            .collect()
    })
}

/// Frequencies of empty and occupied for an occupancy logit.
fn occupancy(table: &[u32], logit: i32) -> [u32; 2] {
    let i = (logit.clamp(-OCC_RANGE, OCC_RANGE) + OCC_RANGE) >> 4;
    let occupied = table[i as usize];
    [(1 << 24) - occupied, occupied]
}

/// Length of [`Tables::piece_exp`]: one entry for every difference of 16-bit
/// logits in steps of 1/64 nat, so that no index needs clamping
/// (`exp(−i/64)` reaches 0 in 24-bit fixed point, the coder's precision,
/// before `i` = 1,070; the entries above are 0).
const PIECE_EXP_LEN: usize = 4096;

/// The frequency of each of the 13 piece symbols (0 for those the mask
/// rules out, ≥ 1 for the others, summing to `1 << 24`; lanes 13 to 15 are
/// 0): one division ([`div_floor`]), no allocation, no branch per symbol, in
/// vector registers.
struct PieceFreqs {
    freqs: [u32; LANES],
}

/// `1 << s` in lane `s`.
const LANE_BITS: [u16; LANES] = {
    let mut t = [0u16; LANES];
    let mut s = 0;
    while s < LANES {
        t[s] = 1 << s;
        s += 1;
    }
    t
};

impl PieceFreqs {
    /// In vector registers (SSE2 on x86-64, NEON on aarch64, plain arrays
    /// elsewhere: the same integers everywhere, see the test against
    /// `reference`).
    #[inline(always)]
    fn new(exp: &[u32; PIECE_EXP_LEN], logits: &[i16; LANES], mask: u16) -> PieceFreqs {
        const LAST: u16 = PIECE_EXP_LEN as u16 - 1;
        let bits = u16x16::new(LANE_BITS);
        // All ones where the mask allows the symbol.
        let keep = (u16x16::splat(mask) & bits).simd_eq(bits);
        // The symbols the mask rules out count as the lowest logit.
        let masked = keep
            .cast_signed()
            .select(i16x16::new(*logits), i16x16::splat(i16::MIN));
        let best = masked.reduce_max();
        // Steps of 1/64 nat below the best (< 4096); the table's last entry
        // (weight 0) for the symbols the mask rules out.
        let diff: u16x16 = (i16x16::splat(best) - masked).cast_unsigned();
        let d = (diff >> 4u32) | (!keep & u16x16::splat(LAST));
        // Weights exp(logit − best) in 24-bit fixed point: the best gets
        // 2^24, so the sum of 13 is in [2^24, 2^28).
        let steps = d.to_array();
        let w = u32x16::new(std::array::from_fn(|s| exp[usize::from(steps[s] & LAST)]));
        let sum = w.reduce_add();
        // The first symbol of the highest weight gets the rounding remainder.
        let top = (d.simd_eq(u16x16::ZERO).to_bitmask().trailing_zeros() & 15) as usize;
        let free = (1u32 << 24) - mask.count_ones();
        // scale < 2^32 (sum ≥ 2^24 > free); frequency = w · scale / 2^32.
        let scale = div_floor(u64::from(free) << 32, sum.max(1)) as u32;
        // Minus all ones: plus 1 for each symbol the mask allows.
        let bits32 = u32x16::new(LANE_BITS.map(u32::from));
        let keep32 = (u32x16::splat(u32::from(mask)) & bits32).simd_eq(bits32);
        let mut freqs = (w.mul_keep_high(u32x16::splat(scale)) - keep32).to_array();
        let assigned: u32 = freqs.iter().sum();
        freqs[top] += (1u32 << 24) - assigned;
        PieceFreqs { freqs }
    }

    /// The same frequencies in scalar code.
    #[cfg(test)]
    fn reference(exp: &[u32; PIECE_EXP_LEN], logits: &[i16; LANES], mask: u16) -> PieceFreqs {
        let mut freqs = [0u32; LANES];
        let allowed = |s: usize| mask >> s & 1 == 1;
        let Some(best) = (0..LANES).filter(|&s| allowed(s)).map(|s| logits[s]).max() else {
            freqs[0] = 1 << 24;
            return PieceFreqs { freqs };
        };
        let w: Vec<u32> = (0..LANES)
            .map(|s| {
                let d = usize::from((best as i32 - logits[s] as i32) as u16 >> 4);
                if allowed(s) { exp[d] } else { 0 }
            })
            .collect();
        let sum: u64 = w.iter().map(|&x| u64::from(x)).sum();
        let free = (1u64 << 24) - u64::from(mask.count_ones());
        let scale = (free << 32) / sum;
        for s in 0..LANES {
            freqs[s] = ((u64::from(w[s]) * scale) >> 32) as u32 + u32::from(allowed(s));
        }
        // Within 1/64 nat of the best: the weight of the best.
        let top = (0..LANES)
            .find(|&s| allowed(s) && (best as i32 - logits[s] as i32) >> 4 == 0)
            .unwrap_or(0);
        freqs[top] += (1 << 24) - freqs.iter().sum::<u32>();
        PieceFreqs { freqs }
    }
}

/// `⌊n / d⌋` for `n < 2^56`, `d ≥ 1` and a quotient below `2^32`,
/// exactly, by a floating-point estimate corrected in integers: a 64-bit
/// integer division waits some 40 to 90 cycles on the x86-64 cores this
/// runs on, a double division about 14. `d` is exact in a double and `n`
/// within a relative 2^-53, so the estimate is within one of the quotient,
/// and the two corrections make the result the integer quotient whatever
/// the rounding: the same on every machine.
#[inline(always)]
fn div_floor(n: u64, d: u32) -> u64 {
    debug_assert!(n < 1 << 56 && n / u64::from(d.max(1)) < 1 << 32);
    let d = u64::from(d);
    let mut q = (n as f64 / d as f64) as u64;
    if q * d > n {
        q -= 1;
    } else if n - q * d >= d {
        q += 1;
    }
    q
}

/// The symbol of every square as the model codes it (`None`: empty or king).
fn symbols_of(pos: &Chess) -> [Option<usize>; 64] {
    let mut symbols: [Option<usize>; 64] = [None; 64];
    let board = pos.board();
    for color in Color::ALL {
        for role in [
            Role::Pawn,
            Role::Knight,
            Role::Bishop,
            Role::Rook,
            Role::Queen,
        ] {
            let s = piece_symbol(Piece { color, role });
            for sq in board.by_piece(Piece { color, role }) {
                symbols[sq as usize & 63] = Some(s);
            }
        }
    }
    for sq in pos.castles().castling_rights() {
        symbols[sq as usize] = Some(if sq.rank() == Rank::First {
            CASTLE_WHITE
        } else {
            CASTLE_BLACK
        });
    }
    if let Some((_, pawn)) = ep_pawn(pos) {
        symbols[pawn as usize] = Some(EP);
    }
    symbols
}

/// Whether the side to move follows from the board: `Some(color)` when a
/// pawn can be taken en passant or a king is in check.
fn forced_turn(board: &shakmaty::Board, ep: Option<Color>) -> Result<Option<Color>, Error> {
    if let Some(pawn_color) = ep {
        return Ok(Some(!pawn_color));
    }
    let attacked = |color: Color| {
        board
            .king_of(color)
            .is_some_and(|k| board.attacks_to(k, !color, board.occupied()).any())
    };
    match (attacked(Color::White), attacked(Color::Black)) {
        (true, true) => Err(Error::InvalidData("both kings in check".into())),
        (true, false) => Ok(Some(Color::White)),
        (false, true) => Ok(Some(Color::Black)),
        (false, false) => Ok(None),
    }
}

/// The squares of the white and the black king.
fn kings(board: &shakmaty::Board) -> Result<(Square, Square), Error> {
    let king = |color: Color| {
        board
            .king_of(color)
            .ok_or_else(|| Error::InvalidPosition(format!("no {color} king")))
    };
    Ok((king(Color::White)?, king(Color::Black)?))
}

/// Whether the side to move of `pos` follows from its board and en-passant
/// pawn (see [`forced_turn`]).
fn turn_is_forced(pos: &Chess) -> Result<bool, Error> {
    // The en-passant pawn belongs to the side that just moved.
    let ep = ep_pawn(pos).map(|_| !pos.turn());
    forced_turn(pos.board(), ep).map(|t| t.is_some())
}

/// One training or coding event: the features of a square, the symbols
/// possible on it (0 when it is empty) and its symbol.
pub(crate) struct Event {
    rows: [u16; ACTIVE],
    mask: u16,
    symbol: Option<usize>,
}

/// Walks the board of `pos` in coding order, calling `f` for each square
/// (the kings' squares aside); stops at the first error.
#[allow(clippy::needless_range_loop)] // sq indexes the board and the scan
fn walk(pos: &Chess, mut f: impl FnMut(&Event) -> Result<(), Error>) -> Result<(), Error> {
    let board = pos.board();
    let (wk, bk) = kings(board)?;
    let symbols = symbols_of(pos);
    let mut scan = Scan::new(wk, bk);
    for sq in 0..64 {
        if sq == wk as usize || sq == bk as usize {
            scan.mark(sq, scan.cell(sq));
            continue;
        }
        let rows = scan.context(sq);
        let symbol = symbols[sq];
        // Only an occupied square needs its mask.
        let mask = symbol.map_or(0, |_| scan.mask(sq));
        if let Some(s) = symbol
            && mask >> s & 1 == 0
        {
            return Err(Error::Unrepresentable(format!(
                "symbol {s} not possible on {}",
                Square::new(sq as u32)
            )));
        }
        f(&Event { rows, mask, symbol })?;
        if let Some(s) = symbol {
            scan.place(sq, s);
        }
    }
    Ok(())
}

#[allow(clippy::needless_range_loop)] // sq indexes the board and the scan
fn encode_model(pos: &Chess, t: &Tables) -> Result<Bits, Error> {
    let board = pos.board();
    let (wk, bk) = kings(board)?;
    let mut enc = Encoder::new();
    enc.encode_frequencies(wk as usize, &t.white_king)?;
    enc.encode_frequencies(bk as usize, &t.black_king[wk as usize])?;
    let symbols = symbols_of(pos);
    let mut scan = CoderScan::new(t, wk, bk);
    for sq in 0..64 {
        let Some((rows, [empty, occupied])) = scan.square(sq) else {
            continue;
        };
        let Some(s) = symbols[sq] else {
            enc.encode_interval(0, empty)?;
            continue;
        };
        let mask = scan.scan.mask(sq);
        if mask >> s & 1 == 0 {
            return Err(Error::Unrepresentable(format!(
                "symbol {s} not possible on {}",
                Square::new(sq as u32)
            )));
        }
        enc.encode_interval(empty, occupied)?;
        enc.encode_frequencies(s, &scan.pieces(&rows, mask).freqs[..PIECES])?;
        scan.place(sq, s);
    }
    if !turn_is_forced(pos)? {
        enc.encode_frequencies(usize::from(pos.turn() == Color::Black), &t.turn)?;
    }
    Ok(enc.finish())
}

#[allow(clippy::needless_range_loop)] // sq indexes the board and the scan
fn decode_model(bits: &Bits, t: &Tables) -> Result<Chess, Error> {
    let mut dec = Decoder::new(bits);
    let wk = dec.decode_frequencies(&t.white_king)?;
    let bk = dec.decode_frequencies(&t.black_king[wk])?;
    let (wk, bk) = (Square::new(wk as u32), Square::new(bk as u32));
    // The board's bitboards, one bit set per square (`Board::set_piece_at`
    // would clear the square in all eight first).
    let mut by_role = shakmaty::ByRole::<Bitboard>::default();
    let mut by_color = shakmaty::ByColor::<Bitboard>::default();
    by_role.king = Bitboard::from(wk) | Bitboard::from(bk);
    by_color.white = Bitboard::from(wk);
    by_color.black = Bitboard::from(bk);
    let mut scan = CoderScan::new(t, wk, bk);
    let mut castling = Bitboard::EMPTY;
    let mut ep = None;
    for sq in 0..64 {
        let Some((rows, [empty, occupied])) = scan.square(sq) else {
            continue;
        };
        debug_assert_eq!(empty + occupied, 1 << 24);
        if !dec.decode_bit(empty)? {
            continue;
        }
        let p = scan.pieces(&rows, scan.scan.mask(sq));
        let s = dec.decode_frequencies(&p.freqs[..PIECES])?;
        let piece = scan.place(sq, s);
        let square = Square::new(sq as u32);
        if s == CASTLE_WHITE || s == CASTLE_BLACK {
            castling.add(square);
        }
        if s == EP {
            ep = Some((square, piece.color));
        }
        by_role.get_mut(piece.role).add(square);
        by_color.get_mut(piece.color).add(square);
    }
    let board = shakmaty::Board::try_from_bitboards(by_role, by_color)
        .map_err(|e| Error::InvalidData(e.to_string()))?;
    let turn = match forced_turn(&board, ep.map(|(_, c)| c))? {
        Some(c) => c,
        None => Color::from_white(dec.decode_frequencies(&t.turn)? == 0),
    };
    let ep_square = ep
        .map(|(sq, color)| Square::from_coords(sq.file(), color.fold_wb(Rank::Third, Rank::Sixth)));
    assemble_board(board, turn, castling, ep_square)
}

/// `position-model`: see the module documentation.
///
/// ```
/// use chesspack::position::{PositionCodec, PositionModel, parse_fen, to_epd};
///
/// let pos = parse_fen("r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4").unwrap();
/// let bits = PositionModel.encode(&pos).unwrap();
/// assert!(bits.len() < 64);
/// assert_eq!(to_epd(&PositionModel.decode(&bits).unwrap()), to_epd(&pos));
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct PositionModel;

impl PositionModel {
    /// The hash of the embedded model, which archives record.
    pub fn model_hash(&self) -> u64 {
        tables().hash
    }
}

impl super::PositionCodec for PositionModel {
    fn name(&self) -> &'static str {
        "position-model"
    }

    fn description(&self) -> &'static str {
        "learned log-linear model of real positions, range-coded; ≤ 157 bits for any legal position"
    }

    fn encode(&self, pos: &Chess) -> Result<Bits, Error> {
        let bits = encode_model(pos, tables())?;
        let rank_len = super::rank::BITS as usize;
        if bits.len() < rank_len {
            return Ok(bits);
        }
        match super::rank::rank(pos) {
            Ok(r) => Ok(r),
            // Not a reachable position (too many promotions for the
            // captures): the model's stream, however long, but never
            // exactly as long as a rank (a trailing zero changes nothing,
            // the decoder reads zeros past the end).
            Err(_) if bits.len() == rank_len => {
                let mut w = crate::bits::BitWriter::new();
                w.write_bits(&bits);
                w.write_bit(false);
                Ok(w.finish())
            }
            Err(_) => Ok(bits),
        }
    }

    fn decode(&self, bits: &Bits) -> Result<Chess, Error> {
        if bits.len() == super::rank::BITS as usize {
            return super::rank::unrank_bits(&mut bits.reader());
        }
        decode_model(bits, tables())
    }
}

/// Fits [`PositionWeights`] on positions: king counts by counting, rows by
/// AdaGrad on the log loss of every square, in the order positions come.
#[derive(Debug)]
pub struct PositionTrainer {
    white_king: Vec<u32>,
    black_king: Vec<u32>,
    turn: [u32; 2],
    w: Vec<[f32; LANES]>,
    g: Vec<[f32; LANES]>,
    rate: f32,
    loss: f64,
    positions: u64,
}

impl Default for PositionTrainer {
    fn default() -> Self {
        PositionTrainer::new()
    }
}

impl PositionTrainer {
    /// An untrained model with AdaGrad's step size `rate`.
    pub fn with_rate(rate: f32) -> PositionTrainer {
        PositionTrainer {
            rate,
            ..PositionTrainer::new()
        }
    }

    /// An untrained model.
    pub fn new() -> PositionTrainer {
        PositionTrainer {
            white_king: vec![0; 64],
            black_king: vec![0; 64 * 64],
            turn: [0; 2],
            w: vec![[0.0; LANES]; ROWS],
            g: vec![[1e-6; LANES]; ROWS],
            rate: 0.1,
            loss: 0.0,
            positions: 0,
        }
    }

    /// Counts the king squares and side to move of `pos` (one pass).
    pub fn count(&mut self, pos: &Chess) {
        if let Ok((wk, bk)) = kings(pos.board()) {
            self.white_king[wk as usize] += 1;
            self.black_king[wk as usize * 64 + bk as usize] += 1;
        }
        if let Ok(false) = turn_is_forced(pos) {
            self.turn[usize::from(pos.turn() == Color::Black)] += 1;
        }
    }

    /// One gradient step on every square of `pos`; returns its cost in
    /// bits under the weights before the step.
    pub fn step(&mut self, pos: &Chess) -> f64 {
        let mut bits = 0.0;
        let (w, g, rate) = (&mut self.w, &mut self.g, self.rate);
        let _ = walk(pos, |ev| {
            let mut l = [0f32; LANES];
            for &r in &ev.rows {
                for (a, b) in l.iter_mut().zip(&w[usize::from(r)]) {
                    *a += b;
                }
            }
            let mut grad = [0f32; LANES];
            // Occupancy: logistic.
            let p = 1.0 / (1.0 + (-l[0]).exp());
            let y = if ev.symbol.is_some() { 1.0 } else { 0.0 };
            grad[0] = p - y;
            bits -= f64::from(if y > 0.5 { p } else { 1.0 - p })
                .max(1e-12)
                .log2();
            if let Some(s) = ev.symbol {
                let max = (0..PIECES)
                    .filter(|&i| ev.mask >> i & 1 == 1)
                    .map(|i| l[1 + i])
                    .fold(f32::MIN, f32::max);
                let mut z = 0.0;
                let mut e = [0f32; PIECES];
                for i in 0..PIECES {
                    if ev.mask >> i & 1 == 1 {
                        e[i] = (l[1 + i] - max).exp();
                        z += e[i];
                    }
                }
                for i in 0..PIECES {
                    if ev.mask >> i & 1 == 1 {
                        grad[1 + i] = e[i] / z - if i == s { 1.0 } else { 0.0 };
                    }
                }
                bits -= f64::from(e[s] / z).max(1e-12).log2();
            }
            for &r in &ev.rows {
                let (wr, gr) = (&mut w[usize::from(r)], &mut g[usize::from(r)]);
                for k in 0..=PIECES {
                    if grad[k] != 0.0 {
                        gr[k] += grad[k] * grad[k];
                        wr[k] -= rate * grad[k] / gr[k].sqrt();
                    }
                }
            }
            Ok(())
        });
        self.loss += bits;
        self.positions += 1;
        bits
    }

    /// Average bits per position (boards only) of the steps so far, and
    /// resets the tally.
    pub fn take_loss(&mut self) -> f64 {
        let avg = self.loss / self.positions.max(1) as f64;
        self.loss = 0.0;
        self.positions = 0;
        avg
    }

    /// The model in fixed point.
    pub fn weights(&self) -> PositionWeights {
        PositionWeights {
            white_king: self.white_king.clone(),
            black_king: self.black_king.clone(),
            rows: self
                .w
                .iter()
                .flat_map(|r| {
                    r.iter().map(|&x| {
                        (x * SCALE as f32)
                            .round()
                            .clamp(f32::from(i16::MIN), f32::from(i16::MAX))
                            as i32
                    })
                })
                .collect(),
            turn: self.turn,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn symbols_round_trip() {
        for s in 0..10 {
            assert_eq!(piece_symbol(symbol_piece(s)), s);
        }
    }

    #[test]
    fn piece_frequencies_match_scalar_code() {
        let t = tables();
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = || crate::coder::tests::xorshift(&mut state);
        for i in 0..20_000 {
            let r = next();
            // Logits near each other, spread out, and at both ends of 16 bits.
            let spread = [64, 4096, 65536][i % 3];
            let mut logits: [i16; LANES] =
                std::array::from_fn(|_| ((next() % spread) as i64 - (spread / 2) as i64) as i16);
            if i % 7 == 0 {
                logits[(r % 13) as usize] = if r & 1 == 0 { i16::MAX } else { i16::MIN };
            }
            let mask = match i % 5 {
                0 => (1 << PIECES) - 1,
                1 => ((1 << PIECES) - 1) & !(1 | 1 << 5),
                _ => (r >> 16) as u16 & ((1 << PIECES) - 1),
            };
            let fast = PieceFreqs::new(&t.piece_exp, &logits, mask).freqs;
            assert_eq!(
                fast,
                PieceFreqs::reference(&t.piece_exp, &logits, mask).freqs
            );
            if mask != 0 {
                assert_eq!(fast.iter().sum::<u32>(), 1 << 24);
                for (s, &f) in fast.iter().enumerate() {
                    assert_eq!(f > 0, mask >> s & 1 == 1, "{mask:#x} {s}");
                }
            }
        }
    }

    #[test]
    fn div_floor_is_the_integer_quotient() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for i in 0..200_000u64 {
            crate::coder::tests::xorshift(&mut x);
            // Divisors of 1 to 32 bits, quotients below 2^32 and 2^56 / d.
            let d = 1 + (x >> (32 + i % 32)) as u32;
            let q = (x.rotate_left(23) >> 32).min(((1 << 56) - 1) / u64::from(d) - 1);
            let n = q * u64::from(d);
            // Quotients just at, below and above an integer.
            let n = match i % 3 {
                0 => n,
                1 => n.saturating_sub(1),
                _ => n + u64::from(d) - 1,
            };
            assert_eq!(div_floor(n, d), n / u64::from(d), "{n} / {d}");
        }
        for (n, d) in [
            (0, 1),
            ((1 << 32) - 1, 1),
            ((1 << 56) - 1, u32::MAX),
            (1 << 55, 1 << 24),
        ] {
            assert_eq!(div_floor(n, d), n / u64::from(d));
        }
    }

    #[test]
    fn piece_logits_saturate() {
        let mut rows: Box<[[i16; LANES]; ROWS_CAP]> = vec![[0; LANES]; ROWS_CAP]
            .into_boxed_slice()
            .try_into()
            .unwrap();
        rows[1] = [30_000; LANES];
        rows[2] = [-30_000; LANES];
        let mut active = [0u16; CODED];
        active[0] = 1;
        active[1] = 1;
        assert_eq!(piece_logits(&rows, &active)[0], i16::MAX);
        active[2] = 2;
        // Saturated, then lowered: not the wrapped sum 30_000.
        assert_eq!(piece_logits(&rows, &active)[0], i16::MAX - 30_000);
    }

    #[test]
    fn coder_rows_are_the_unfolded_context() {
        let pos = crate::position::parse_fen(
            "r1bq1rk1/pp2nppp/2n1p3/3pP3/1b1P4/2NB1N2/PP3PPP/R1BQK2R w KQ d6 0 9",
        )
        .unwrap();
        let (wk, bk) = kings(pos.board()).unwrap();
        let symbols = symbols_of(&pos);
        let mut scan = Scan::new(wk, bk);
        for (sq, symbol) in symbols.iter().enumerate() {
            assert_eq!(scan.coded_rows(sq)[..], scan.context(sq)[MERGED..], "{sq}");
            if let Some(s) = symbol {
                scan.place(sq, *s);
            }
        }
    }

    #[test]
    fn feature_rows_in_range() {
        let pos = Chess::default();
        walk(&pos, |ev| {
            assert!(ev.rows.iter().all(|&r| usize::from(r) < ROWS));
            Ok(())
        })
        .unwrap();
    }
}
