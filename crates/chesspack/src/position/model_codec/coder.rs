//! Integer inference and the range-coded stream: the coder's folded
//! tables ([`CoderScan`]), the logits of the piece tree, and encoding and
//! decoding a whole board.

use shakmaty::{Bitboard, Chess, Color, Piece, Position, Rank, Square};

use super::{
    BLACK_NODES, BOARD_ROWS, CASTLE_BLACK, CASTLE_WHITE, EP, LEAF, NODES, ROWS_CAP, TREE, Tables,
    features::Scan, forced_turn, kings, symbols_of, turn_is_forced,
};
use crate::{
    Bits, Error,
    coder::{Decoder, Encoder, quantize_fast},
    model::{SCALE, weights_into},
    position::assemble_board,
};

/// Sums the occupancy weights of a square's features but the material ones,
/// which `material` sums (see [`material_occupancy`]).
#[inline]
pub(super) fn occupancy_logit(
    weights: &[i16; ROWS_CAP],
    active: &[u16; BOARD_ROWS],
    material: i32,
) -> i32 {
    active.iter().fold(material, |sum, &r| {
        sum + i32::from(weights[usize::from(r) & (ROWS_CAP - 1)])
    })
}

/// The occupancy weights of the material features on `rank`, on dark and
/// on light squares.
pub(super) fn material_occupancy(weights: &[i16; ROWS_CAP], scan: &Scan, rank: usize) -> [i32; 2] {
    let w = |r: usize| i32::from(weights[r & (ROWS_CAP - 1)]);
    let base = w(scan.majors) + w(scan.pawns + rank) + w(scan.pieces + rank);
    [base + w(scan.minors), base + w(scan.minors + 1)]
}

/// A [`Scan`] as the encoder and the decoder walk it: the occupancy
/// frequencies of each square, with the material weights summed once per
/// placed piece or rank.
pub(super) struct CoderScan<'t> {
    pub(super) scan: Scan,
    t: &'t Tables,
    occ: &'static [u32],
    material: [i32; 2],
    stale: bool,
    /// The kings' squares, as a bitboard.
    kings: u64,
}

impl<'t> CoderScan<'t> {
    pub(super) fn new(t: &'t Tables, wk: Square, bk: Square) -> CoderScan<'t> {
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
    pub(super) fn encode_piece(
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
    pub(super) fn decode_piece(
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
    pub(super) fn place(&mut self, sq: usize, s: usize) -> Piece {
        self.stale = true;
        self.scan.place(sq, s)
    }
}

/// Sums the piece-tree weight rows (one of the two tables) of a square's
/// features, the board rows then the material rows, saturating at the ends
/// of 16 bits (±32 nats; in this order, so that every machine gets the same
/// sums).
#[inline(always)]
pub(super) fn piece_logits<const N: usize>(
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
pub(super) const OCC_RANGE: i32 = 16 * SCALE;

/// Frequency of the 0 outcome (empty, the left side of a node) by the
/// logit of the 1 outcome, in steps of 1/64 nat (integer-only, from the exp
/// table of the move model); always in `1..1 << 24`.
pub(super) fn occupancy_table() -> &'static [u32] {
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
pub(super) fn zero_frequency(table: &[u32], logit: i32) -> u32 {
    let i = (logit.clamp(-OCC_RANGE, OCC_RANGE) + OCC_RANGE) >> 4;
    table[i as usize]
}

#[allow(clippy::needless_range_loop)] // sq indexes the board and the scan
pub(super) fn encode_model(pos: &Chess, t: &Tables) -> Result<Bits, Error> {
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
pub(super) fn decode_model(bits: &Bits, t: &Tables) -> Result<Chess, Error> {
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
