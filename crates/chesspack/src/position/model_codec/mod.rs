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

use shakmaty::{Chess, Color, Piece, Position, Rank, Role, Square};

mod coder;
mod features;
#[cfg(feature = "train")]
pub(crate) mod train;

use coder::{decode_model, encode_model};
#[cfg(any(feature = "train", test))]
use features::Scan;

use super::ep_pawn;
use crate::{
    Bits, Error,
    coder::{Model, quantize_fast},
    hash::file_hash,
};

const MAGIC: &[u8; 4] = b"CPPM";
const VERSION: u32 = 5;
const MODEL_FILE: &[u8] = include_bytes!("../model.bin");

/// Width of a weight row: lane 0 is the occupancy logit, lanes 1..=12 the
/// logits of the 12 binary decisions of the piece tree ([`NODES`]).
pub(crate) const LANES: usize = 16;
/// The number of piece symbols of an occupied square.
pub(crate) const PIECES: usize = 13;
/// The number of binary decisions (inner nodes) of the tree that picks one
/// of the [`PIECES`] symbols.
pub(crate) const NODES: usize = 12;
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
pub(crate) const ROWS: usize = F_NW_JOINT + CTX * CTX * 64;
/// Features active at each square.
pub(crate) const ACTIVE: usize = 16;
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
#[cfg_attr(not(feature = "train"), allow(dead_code))]
const MATERIAL: usize = 8;
/// A power of two above [`ROWS`]: the coder's tables have this many rows, so
/// that a row index masked with `ROWS_CAP - 1` needs no bounds check.
const ROWS_CAP: usize = 1 << 16;
const _: () = assert!(ROWS <= ROWS_CAP);

/// The model: king-square counts, one weight row per feature value and the
/// side-to-move counts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct PositionWeights {
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
    pub(crate) fn from_bytes(bytes: &[u8]) -> Result<PositionWeights, Error> {
        let bad = |what: &str| Error::InvalidData(format!("position model file: {what}"));
        if bytes.len() < 8 || &bytes[..4] != MAGIC {
            return Err(bad("bad magic"));
        }
        let version = crate::le::u32_at(bytes, 4);
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
    pub(crate) fn to_bytes(&self) -> Vec<u8> {
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
    pub(crate) fn embedded() -> &'static PositionWeights {
        static EMBEDDED: std::sync::OnceLock<PositionWeights> = std::sync::OnceLock::new();
        EMBEDDED.get_or_init(|| {
            PositionWeights::from_bytes(MODEL_FILE).expect("embedded position model")
        })
    }

    /// The hash that identifies this model (`file_hash` of its file).
    pub(crate) fn hash(&self) -> u64 {
        file_hash(&self.to_bytes())
    }

    #[cfg(feature = "train")]
    /// The bits the model part of `position-model` takes for each of
    /// `positions` with these weights (no escape), for training reports.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidData`] for a model of the wrong size.
    pub(crate) fn model_bits(&self, positions: &[Chess]) -> Result<Vec<usize>, Error> {
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
#[cfg(any(feature = "train", test))]
#[cfg_attr(not(feature = "train"), allow(dead_code))]
pub(crate) struct Event {
    rows: [u16; ACTIVE],
    mask: u16,
    symbol: Option<usize>,
}

#[cfg(any(feature = "train", test))]
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
    pub(crate) fn model_hash(&self) -> u64 {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::coder::{Decoder, Encoder};
    use coder::*;
    use features::*;

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

/// The examples of crate-private items, run as unit tests.
#[cfg(test)]
mod examples {
    #[test]
    fn example_model_positionweights_embedded() {
        let w = super::PositionWeights::embedded();
        assert_eq!(w.rows.len(), super::ROWS * super::LANES);
    }
}
