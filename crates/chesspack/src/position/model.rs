//! `position-model`: a learned model of real positions, range-coded.
//!
//! The stream codes, in this order: the white king's square (a learned
//! distribution), the black king's square given the white king's, then the
//! other 62 squares a1, b1, …, h8: for each, *occupied or empty* and, when
//! occupied, which of 13 symbols it holds (a piece of either colour but a
//! king, a rook with a castling right of either colour, the pawn that can be
//! taken en passant), as a path down a binary tree of 12 decisions
//! ([`TREE`]: pawn or piece, which colour, minor or major, …; a decision
//! that the square's rank or the board already rules out costs nothing).
//! Every decision is a logistic model over sparse features of what is
//! already decoded: the square, its decoded neighbours (alone and the north
//! and west ones jointly) and their occupancy pattern, the last piece on its
//! file and on its rank, the pawns already seen on its file and the adjacent
//! ones, its offset from either king, and the material seen so far (queens,
//! rooks, knights, bishops by square colour, pawns, pieces). The side to
//! move comes last and costs nothing when a king is in check or a pawn can
//! be taken en passant.
//!
//! Inference is integer-only, so every machine and build produces the same
//! bits: weights in 1/1024 nats (16 bits each, so that the tables stay in
//! the caches); the occupancy logit summed in 32 bits, the tree's logits in
//! saturating 16-bit lanes, and each logit turned into the frequencies of a
//! binary decision by one table built from the integer exp table of
//! [`crate::model::weights_of`] and [`crate::coder::quantize_fast`] (model
//! version 5). The coder's tables fold some rows into others when the model
//! loads (integer sums, so the logits are the same; a folded weight that
//! does not fit 16 bits is an error) and sum the material rows once per
//! placed piece.
//!
//! The length of the stream selects the fallback: a position that the
//! model would code in [`super::rank::BITS`] (157) bits or more is written
//! as its rank in [`super::rank`] instead, exactly 157 bits long, so that
//! no position of standard chess takes more than 157 bits and the model's
//! streams pay nothing for the escape. (Every container of these streams
//! records their length in bits, as it must for any range-coded stream.)

use shakmaty::{Bitboard, Chess, Color, Piece, Position, Rank, Role, Square};

use super::{assemble_board, ep_pawn};
use crate::{
    Bits, Error,
    coder::{Decoder, Encoder, Model, quantize_fast},
    model::{SCALE, file_hash, weights_into},
};

const MAGIC: &[u8; 4] = b"CPPM";
const VERSION: u32 = 5;
const MODEL_FILE: &[u8] = include_bytes!("model.bin");

/// Width of a weight row: lane 0 is the occupancy logit, lanes 1..=12 the
/// logits of the 12 binary decisions of the piece tree ([`NODES`]).
pub const LANES: usize = 16;
/// The number of piece symbols of an occupied square.
pub const PIECES: usize = 13;
/// The number of binary decisions (inner nodes) of the tree that picks one
/// of the [`PIECES`] symbols.
pub const NODES: usize = 12;
/// The first node of [`TREE`] that only black pieces reach: the nodes from
/// here on have their own weight table.
const BLACK_NODES: usize = 8;
/// A child in [`TREE`] at or above `LEAF` is the symbol `child − LEAF`.
const LEAF: u8 = 16;

/// The piece tree: for each inner node, the symbols of its left (bit 0) and
/// right (bit 1) subtrees and the two children. Pawn-like or piece; the
/// en-passant pawn or a plain one; a plain pawn's colour; a piece's colour;
/// minor or major; knight or bishop; queen or rook; a plain rook or one
/// with a castling right. A node one of whose subtrees the square's mask
/// rules out costs nothing.
const TREE: [(u16, u16, u8, u8); NODES] = {
    const fn set(symbols: &[usize]) -> u16 {
        let mut m = 0;
        let mut i = 0;
        while i < symbols.len() {
            m |= 1 << symbols[i];
            i += 1;
        }
        m
    }
    const L: u8 = LEAF;
    [
        (
            set(&[0, 5, EP]),
            set(&[1, 2, 3, 4, 6, 7, 8, 9, 10, 11]),
            1,
            3,
        ),
        (set(&[0, 5]), set(&[EP]), 2, L + EP as u8),
        (set(&[0]), set(&[5]), L, L + 5),
        (set(&[1, 2, 3, 4, 10]), set(&[6, 7, 8, 9, 11]), 4, 8),
        (set(&[1, 2]), set(&[3, 4, 10]), 5, 6),
        (set(&[1]), set(&[2]), L + 1, L + 2),
        (set(&[4]), set(&[3, 10]), L + 4, 7),
        (
            set(&[3]),
            set(&[CASTLE_WHITE]),
            L + 3,
            L + CASTLE_WHITE as u8,
        ),
        (set(&[6, 7]), set(&[8, 9, 11]), 9, 10),
        (set(&[6]), set(&[7]), L + 6, L + 7),
        (set(&[9]), set(&[8, 11]), L + 9, 11),
        (
            set(&[8]),
            set(&[CASTLE_BLACK]),
            L + 8,
            L + CASTLE_BLACK as u8,
        ),
    ]
};
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
const F_NW_JOINT: usize = F_RANK_RAY + 64 * CTX;
/// The number of weight rows.
pub const ROWS: usize = F_NW_JOINT + CTX * CTX * 64;
/// Features active at each square.
pub const ACTIVE: usize = 16;
/// The first features of [`Scan::context`] (square, north and west
/// neighbour), which the coder's tables fold into the pawn-file and the
/// north × west rows of the same square: integer sums, so the same logits
/// from 14 lookups instead of 17.
const MERGED: usize = 3;
/// The feature rows the coder looks up for each square.
const CODED: usize = ACTIVE - MERGED;
/// The coded rows that do not count material (see [`Scan::board_rows`]).
const BOARD_ROWS: usize = CODED - 4;
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
    /// The kings' squares (cumulative frequencies: a binary search finds
    /// the square, not a walk over 64 frequencies).
    white_king: Model,
    black_king: Vec<Model>,
    /// Lane 0 of each row: the occupancy weights (16 bits halve the table
    /// and its cache footprint).
    occupancy: Box<[i16; ROWS_CAP]>,
    /// Lanes 1..=8 of each row, moved to 0..8: the weights of the piece
    /// tree's nodes that pawns and white pieces need.
    pieces: Box<[[i16; BLACK_NODES]; ROWS_CAP]>,
    /// Lanes 9..=12, moved to 0..4: the nodes of black pieces, which only
    /// they need (the two tables are half the cache footprint of one).
    black: Box<[[i16; NODES - BLACK_NODES]; ROWS_CAP]>,
    turn: Vec<u32>,
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
        let mut pieces: Box<[[i16; BLACK_NODES]; ROWS_CAP]> = vec![[0; BLACK_NODES]; ROWS_CAP]
            .into_boxed_slice()
            .try_into()
            .expect("ROWS_CAP rows");
        let mut black: Box<[[i16; NODES - BLACK_NODES]; ROWS_CAP]> =
            vec![[0; NODES - BLACK_NODES]; ROWS_CAP]
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
            for (r, &w) in pieces[i].iter_mut().zip(&sum[1..=BLACK_NODES]) {
                *r = narrow(w)?;
            }
            for (r, &w) in black[i].iter_mut().zip(&sum[BLACK_NODES + 1..=NODES]) {
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
                Model::from_frequencies(f)
            })
            .collect::<Result<_, _>>()?;
        Ok(Tables {
            white_king: Model::from_frequencies(freqs(&self.white_king))?,
            black_king,
            occupancy,
            pieces,
            black,
            turn: freqs(&self.turn),
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

/// The piece symbols possible on each rank: no pawn on the first and the
/// last, a rook with a castling right only there, the en-passant pawn only
/// on the fourth and the fifth.
const RANK_MASK: [u16; 8] = {
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
    fn coded_rows(&self, sq: usize) -> [u16; CODED] {
        let (b, m) = (self.board_rows(sq), self.material_rows(sq));
        [
            b[0], b[1], b[2], b[3], b[4], m[0], m[1], m[2], m[3], b[5], b[6], b[7], b[8],
        ]
    }

    /// The coded feature rows of square `sq` but the material ones: what
    /// every square needs, empty or not.
    #[inline(always)]
    fn board_rows(&self, sq: usize) -> [u16; BOARD_ROWS] {
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
    /// once per change ([`material_occupancy`]).
    #[inline(always)]
    fn material_rows(&self, sq: usize) -> [u16; 4] {
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
    fn neighbour_bits(&self, p: usize) -> usize {
        // Bits 0, 10–12 and 20–21 of the window are the neighbours.
        let window = (self.occupied >> (p.wrapping_sub(2 * PAD_WIDTH) & 127)) as u32;
        ((window & 1) | (window >> 9 & 0b1110) | (window >> 16 & 0b11_0000)) as usize
    }

    /// The piece symbols possible on square `sq`.
    #[inline(always)]
    fn mask(&self, sq: usize) -> u16 {
        RANK_MASK[sq / 8 % 8] & !self.ruled_out
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
    }

    /// Records symbol `s` (a piece symbol) on `sq`; returns the piece.
    #[inline(always)]
    fn place(&mut self, sq: usize, s: usize) -> Piece {
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

/// Sums the occupancy weights of a square's features but the material ones,
/// which `material` sums (see [`material_occupancy`]).
#[inline]
fn occupancy_logit(weights: &[i16; ROWS_CAP], active: &[u16; BOARD_ROWS], material: i32) -> i32 {
    active.iter().fold(material, |sum, &r| {
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
    /// The kings' squares, as a bitboard.
    kings: u64,
}

impl<'t> CoderScan<'t> {
    fn new(t: &'t Tables, wk: Square, bk: Square) -> CoderScan<'t> {
        CoderScan {
            scan: Scan::new(wk, bk),
            t,
            occ: occupancy_table(),
            material: [0; 2],
            stale: true,
            kings: 1 << (wk as u32 & 63) | 1 << (bk as u32 & 63),
        }
    }

    /// The board rows of `sq` ([`Scan::board_rows`]) and the frequency of
    /// *empty*; `None` for a king's square. Squares come in order, a1 to h8.
    #[inline(always)]
    fn square(&mut self, sq: usize) -> Option<([u16; BOARD_ROWS], u32)> {
        if self.stale || sq.is_multiple_of(8) {
            self.material = material_occupancy(&self.t.occupancy, &self.scan, sq / 8);
            self.stale = false;
        }
        if self.kings >> (sq & 63) & 1 == 1 {
            self.scan.mark(sq, self.scan.cell(sq));
            return None;
        }
        let rows = self.scan.board_rows(sq);
        let material = self.material[(sq + sq / 8) % 2];
        let logit = occupancy_logit(&self.t.occupancy, &rows, material);
        Some((rows, zero_frequency(self.occ, logit)))
    }

    /// Walks [`TREE`] from the root for square `sq`, whose board rows are
    /// `rows` and whose mask is `mask` (not 0), to the symbol it ends on: at
    /// each node that the mask leaves open, `side` gets the node's right
    /// set and the frequency of its left side and says which side to take
    /// (and codes it); at the others the side is the one the mask allows.
    #[inline(always)]
    fn walk_tree(
        &self,
        sq: usize,
        rows: &[u16; BOARD_ROWS],
        mask: u16,
        mut side: impl FnMut(u16, u32) -> Result<bool, Error>,
    ) -> Result<usize, Error> {
        let material = self.scan.material_rows(sq);
        let mut logits = piece_logits(&self.t.pieces, rows, &material);
        let mut node = 0;
        loop {
            if node == BLACK_NODES {
                logits[..NODES - BLACK_NODES].copy_from_slice(&piece_logits(
                    &self.t.black,
                    rows,
                    &material,
                ));
            }
            let (left, right, left_child, right_child) = TREE[node];
            let right_side = if left & mask == 0 {
                true
            } else if right & mask == 0 {
                false
            } else {
                side(
                    right,
                    zero_frequency(self.occ, i32::from(logits[node % BLACK_NODES])),
                )?
            };
            let child = if right_side { right_child } else { left_child };
            if child >= LEAF {
                return Ok(usize::from(child - LEAF));
            }
            node = usize::from(child & 15);
        }
    }

    /// Encodes piece symbol `s` (allowed by `mask`) on square `sq`, whose
    /// board rows are `rows`: one binary decision for each node of
    /// [`TREE`] on its path that the mask leaves open.
    #[inline(always)]
    fn encode_piece(
        &self,
        enc: &mut Encoder,
        sq: usize,
        rows: &[u16; BOARD_ROWS],
        mask: u16,
        s: usize,
    ) -> Result<(), Error> {
        let end = self.walk_tree(sq, rows, mask, |right, zero| {
            let right_side = right >> s & 1 == 1;
            enc.encode_bit_unchecked(right_side, zero);
            Ok(right_side)
        })?;
        debug_assert_eq!(end, s);
        Ok(())
    }

    /// Decodes the piece symbol on square `sq`, whose board rows are
    /// `rows` and whose mask is `mask` (not 0), down [`TREE`].
    #[inline(always)]
    fn decode_piece(
        &self,
        dec: &mut Decoder,
        sq: usize,
        rows: &[u16; BOARD_ROWS],
        mask: u16,
    ) -> Result<usize, Error> {
        self.walk_tree(sq, rows, mask, |_, zero| dec.decode_bit_unchecked(zero))
    }

    /// Records symbol `s` on `sq` (see [`Scan::place`]).
    #[inline(always)]
    fn place(&mut self, sq: usize, s: usize) -> Piece {
        self.stale = true;
        self.scan.place(sq, s)
    }
}

/// Sums the piece-tree weight rows (one of the two tables) of a square's
/// features, the board rows then the material rows, saturating at the ends
/// of 16 bits (±32 nats; in this order, so that every machine gets the same
/// sums).
#[inline(always)]
fn piece_logits<const N: usize>(
    rows: &[[i16; N]; ROWS_CAP],
    board: &[u16; BOARD_ROWS],
    material: &[u16; 4],
) -> [i16; N] {
    let mut sum = [0i16; N];
    let mut add = |r: u16| {
        let row = &rows[usize::from(r) & (ROWS_CAP - 1)];
        for (s, &w) in sum.iter_mut().zip(row) {
            *s = s.saturating_add(w);
        }
    };
    for &r in board {
        add(r);
    }
    for &r in material {
        add(r);
    }
    sum
}

/// Range of the logits of binary decisions (occupied, or the right side
/// of a node of the piece tree) that the model distinguishes (±16 nats).
const OCC_RANGE: i32 = 16 * SCALE;

/// Frequency of the 0 outcome (empty, the left side of a node) by the
/// logit of the 1 outcome, in steps of 1/64 nat (integer-only, from the exp
/// table of the move model); always in `1..1 << 24`.
fn occupancy_table() -> &'static [u32] {
    static TABLE: std::sync::OnceLock<Vec<u32>> = std::sync::OnceLock::new();
    TABLE.get_or_init(|| {
        let (mut w, mut f) = (Vec::new(), Vec::new());
        (0..=(2 * OCC_RANGE) / 16)
            .map(|i| {
                weights_into(&[0, i * 16 - OCC_RANGE], &mut w);
                quantize_fast(&w, &mut f);
                f[0]
            })
            .collect()
    })
}

/// The frequency of the 0 outcome of a binary decision whose logit (of
/// the 1 outcome) is `logit`.
#[inline(always)]
fn zero_frequency(table: &[u32], logit: i32) -> u32 {
    let i = (logit.clamp(-OCC_RANGE, OCC_RANGE) + OCC_RANGE) >> 4;
    table[i as usize]
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
    enc.encode(wk as usize, &t.white_king)?;
    enc.encode(bk as usize, &t.black_king[wk as usize & 63])?;
    let symbols = symbols_of(pos);
    let mut scan = CoderScan::new(t, wk, bk);
    for sq in 0..64 {
        let Some((rows, empty)) = scan.square(sq) else {
            continue;
        };
        let Some(s) = symbols[sq] else {
            enc.encode_bit_unchecked(false, empty);
            continue;
        };
        let mask = scan.scan.mask(sq);
        if mask >> s & 1 == 0 {
            return Err(Error::Unrepresentable(format!(
                "symbol {s} not possible on {}",
                Square::new(sq as u32)
            )));
        }
        enc.encode_bit_unchecked(true, empty);
        scan.encode_piece(&mut enc, sq, &rows, mask, s)?;
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
    let wk = dec.decode(&t.white_king)?;
    let bk = dec.decode(&t.black_king[wk & 63])?;
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
        let Some((rows, empty)) = scan.square(sq) else {
            continue;
        };
        if !dec.decode_bit_unchecked(empty)? {
            continue;
        }
        // Never 0 (pieces are possible everywhere), so the tree ends on a
        // symbol the mask allows.
        let s = scan.decode_piece(&mut dec, sq, &rows, scan.scan.mask(sq))?;
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
                // Logistic at each node of the piece tree the mask leaves open.
                let mut node = 0;
                loop {
                    let (left, right, left_child, right_child) = TREE[node];
                    let right_side = right >> s & 1 == 1;
                    if left & ev.mask != 0 && right & ev.mask != 0 {
                        let p = 1.0 / (1.0 + (-l[1 + node]).exp());
                        let y = if right_side { 1.0 } else { 0.0 };
                        grad[1 + node] = p - y;
                        bits -= f64::from(if right_side { p } else { 1.0 - p })
                            .max(1e-12)
                            .log2();
                    }
                    let child = if right_side { right_child } else { left_child };
                    if child >= LEAF {
                        break;
                    }
                    node = usize::from(child);
                }
            }
            for &r in &ev.rows {
                let (wr, gr) = (&mut w[usize::from(r)], &mut g[usize::from(r)]);
                for k in 0..=NODES {
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
    fn piece_logits_saturate() {
        let mut rows: Box<[[i16; BLACK_NODES]; ROWS_CAP]> = vec![[0; BLACK_NODES]; ROWS_CAP]
            .into_boxed_slice()
            .try_into()
            .unwrap();
        rows[1] = [30_000; BLACK_NODES];
        rows[2] = [-30_000; BLACK_NODES];
        let mut board = [0u16; BOARD_ROWS];
        board[0] = 1;
        board[1] = 1;
        assert_eq!(piece_logits(&rows, &board, &[0; 4])[0], i16::MAX);
        // Saturated, then lowered: not the wrapped sum 30_000.
        assert_eq!(
            piece_logits(&rows, &board, &[2, 0, 0, 0])[0],
            i16::MAX - 30_000
        );
    }

    /// The symbols of the subtree under a child of [`TREE`].
    fn subtree(child: u8) -> u16 {
        if child >= LEAF {
            1 << (child - LEAF)
        } else {
            let (l, r, _, _) = TREE[usize::from(child)];
            l | r
        }
    }

    #[test]
    fn piece_tree_holds_every_symbol_once() {
        // Each node's sets are its subtrees', disjoint, and the root holds
        // all 13 symbols; every node is reached from the root once.
        let mut reached = [0; NODES];
        for (node, &(left, right, left_child, right_child)) in TREE.iter().enumerate() {
            assert_eq!(left, subtree(left_child), "node {node}");
            assert_eq!(right, subtree(right_child), "node {node}");
            assert_eq!(left & right, 0, "node {node}");
            for c in [left_child, right_child] {
                if c < LEAF {
                    assert!(usize::from(c) > node, "node {node}");
                    reached[usize::from(c)] += 1;
                }
            }
        }
        assert_eq!(TREE[0].0 | TREE[0].1, (1 << PIECES) - 1);
        assert_eq!(reached[1..], [1; NODES - 1]);
        // The nodes with their own table are those of black pieces.
        for (node, &(left, right, _, _)) in TREE.iter().enumerate() {
            let white_or_pawn = (left | right) & !(0b11_1110_0000 | 1 << CASTLE_BLACK) != 0;
            assert_eq!(node >= BLACK_NODES, !white_or_pawn, "node {node}");
        }
    }

    #[test]
    fn piece_tree_codes_every_symbol_under_every_mask() {
        // Every symbol a mask allows, on logits of both signs and at the
        // ends of the range: encoded, then decoded the same, and a node
        // that the mask decides costs nothing.
        let mut tables = PositionWeights::embedded().tables().unwrap();
        let rows = [0u16; BOARD_ROWS];
        for (i, logit) in [0i16, 700, -700, i16::MAX, i16::MIN]
            .into_iter()
            .enumerate()
        {
            tables.pieces[0] = [logit; BLACK_NODES];
            tables.black[0] = [logit; NODES - BLACK_NODES];
            let mut coder = CoderScan::new(&tables, Square::E1, Square::E8);
            coder.scan.majors = 0;
            coder.scan.minors = 0;
            coder.scan.pawns = 0;
            coder.scan.pieces = 0;
            for mask in [
                RANK_MASK[0],
                RANK_MASK[3],
                RANK_MASK[5],
                RANK_MASK[7],
                0b1_1110,
            ] {
                for s in (0..PIECES).filter(|s| mask >> s & 1 == 1) {
                    let mut enc = Encoder::new();
                    coder.encode_piece(&mut enc, 0, &rows, mask, s).unwrap();
                    let bits = enc.finish();
                    let mut dec = Decoder::new(&bits);
                    assert_eq!(
                        coder.decode_piece(&mut dec, 0, &rows, mask).unwrap(),
                        s,
                        "logit {i}, mask {mask:#b}"
                    );
                }
                // A mask of one symbol: nothing to code.
                let mut enc = Encoder::new();
                coder.encode_piece(&mut enc, 0, &rows, 1 << 4, 4).unwrap();
                assert_eq!(enc.finish().len(), 0);
            }
        }
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
