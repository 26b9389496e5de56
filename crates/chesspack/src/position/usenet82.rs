use shakmaty::{Bitboard, Chess, Color, Piece, Position, Rank, Role, Square};

use super::{
    Cells, PositionCodec, assemble, back_rank, cells_of, ep_pawn, king_square, read_kings,
};
use crate::{Bits, Error, bits::BitWriter};

/// `usenet82`: the 1982 Usenet scheme.
///
/// Layout: white king square (6 bits), black king square (6 bits), the other
/// 62 squares from a1 to h8 with the prefix code empty `0`, pawn `1c0`,
/// knight `1c100`, bishop `1c101`, rook `1c110`, queen `1c111` (`c` = 1 for
/// black), then one side-to-move bit (1 = black).
///
/// Castling and en passant are folded into the board with impossible pieces:
///
/// * a rook that keeps a castling right is written as a pawn of the opposite
///   colour on its own back rank (a black pawn on rank 1 is a white castling
///   rook). The rook's square names the right, so Chess960 rights need
///   nothing more;
/// * a pawn that can be taken en passant (only when the capture is legal) is
///   exchanged with the square of its file on its own back rank: a white pawn
///   on rank 1 or a black pawn on rank 8. The exchange is made on the whole
///   board, kings included, before the kings' squares are written, so a king
///   standing on that back-rank square is written on the pawn's square and the
///   pawn on the king's; the decoder undoes the exchange first and interprets
///   castling markers second, so a castling rook carried off by the exchange
///   comes back too.
///
/// Cost: `75 + 2p + 4q` bits for `p` pawns and `q` other non-king pieces
/// (a castling rook costs 3 bits instead of 5, an en-passant exchange nothing),
/// so 163 bits for the start position less 2 per castling right, and
/// `163 + 2·promotions − 2·captured pawns − 4·captured pieces` in general.
/// The worst case is therefore 163 bits without promotions, at most 179 bits
/// with up to 8 promotions (the proof is the formula: each promotion adds 2
/// bits, each capture removes at least 2), and 195 bits as an absolute bound
/// for 30 non-king pieces.
///
/// ```
/// use chesspack::position::{PositionCodec, Usenet82};
/// use shakmaty::Chess;
///
/// // The source's 163 bits count the start board with plain rooks; its own
/// // castling rule writes the four castling rooks as 3-bit pawn markers.
/// assert_eq!(Usenet82.encode(&Chess::default()).unwrap().len(), 163 - 4 * 2);
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct Usenet82;

fn write_piece(w: &mut BitWriter, piece: Option<Piece>) {
    match piece {
        None => w.write_bit(false),
        Some(Piece { color, role }) => {
            w.write_bit(true);
            w.write_bit(color == Color::Black);
            match role {
                Role::Pawn => w.write_bit(false),
                Role::Knight => w.write(0b100, 3),
                Role::Bishop => w.write(0b101, 3),
                Role::Rook => w.write(0b110, 3),
                Role::Queen => w.write(0b111, 3),
                Role::King => unreachable!("kings are written by square"),
            }
        }
    }
}

impl PositionCodec for Usenet82 {
    fn name(&self) -> &'static str {
        "usenet82"
    }

    fn description(&self) -> &'static str {
        "1982 Usenet: king squares, prefix code per square, castling and e.p. folded into the board"
    }

    fn encode(&self, pos: &Chess) -> Result<Bits, Error> {
        let mut cells = cells_of(pos.board());
        for sq in pos.castles().castling_rights() {
            if let Some(piece) = cells[sq as usize] {
                cells[sq as usize] = Some(Piece {
                    color: !piece.color,
                    role: Role::Pawn,
                });
            }
        }
        if let Some((_, pawn)) = ep_pawn(pos) {
            let home = Square::from_coords(pawn.file(), back_rank(!pos.turn()));
            cells.swap(pawn as usize, home as usize);
        }
        let wk = king_square(&cells, Color::White)?;
        let bk = king_square(&cells, Color::Black)?;
        let mut w = BitWriter::new();
        w.write(wk as u64, 6);
        w.write(bk as u64, 6);
        for sq in Square::ALL {
            if sq != wk && sq != bk {
                write_piece(&mut w, cells[sq as usize]);
            }
        }
        w.write_bit(pos.turn() == Color::Black);
        Ok(w.finish())
    }

    fn decode(&self, bits: &Bits) -> Result<Chess, Error> {
        let mut r = bits.reader();
        let (wk, bk, mut cells) = read_kings(&mut r)?;
        for sq in Square::ALL {
            if sq == wk || sq == bk {
                continue;
            }
            if r.read_bit()? {
                let color = Color::from_white(!r.read_bit()?);
                let role = if !r.read_bit()? {
                    Role::Pawn
                } else {
                    match r.read(2)? {
                        0 => Role::Knight,
                        1 => Role::Bishop,
                        2 => Role::Rook,
                        _ => Role::Queen,
                    }
                };
                cells[sq as usize] = Some(Piece { color, role });
            }
        }
        let turn = Color::from_white(!r.read_bit()?);
        if r.remaining() != 0 {
            return Err(Error::InvalidData("trailing bits".into()));
        }
        unfold(cells, turn)
    }
}

/// Undoes the en-passant exchange, then turns castling markers into rooks.
pub(crate) fn unfold(mut cells: Cells, turn: Color) -> Result<Chess, Error> {
    let is_ep_marker = |sq: Square, p: Option<Piece>| {
        p.is_some_and(|p| p.role == Role::Pawn && sq.rank() == back_rank(p.color))
    };
    let markers: Vec<Square> = Square::ALL
        .into_iter()
        .filter(|&sq| is_ep_marker(sq, cells[sq as usize]))
        .collect();
    let ep = match markers[..] {
        [] => None,
        [home] => {
            let color = if home.rank() == Rank::First {
                Color::White
            } else {
                Color::Black
            };
            if color == turn {
                return Err(Error::InvalidData(
                    "en-passant pawn of the side to move".into(),
                ));
            }
            let pawn = Square::from_coords(home.file(), color.fold_wb(Rank::Fourth, Rank::Fifth));
            cells.swap(pawn as usize, home as usize);
            Some(Square::from_coords(
                home.file(),
                color.fold_wb(Rank::Third, Rank::Sixth),
            ))
        }
        _ => return Err(Error::InvalidData("more than one en-passant pawn".into())),
    };
    let mut castling = Bitboard::EMPTY;
    for sq in Square::ALL {
        if let Some(p) = cells[sq as usize]
            && p.role == Role::Pawn
            && sq.rank() == back_rank(!p.color)
        {
            cells[sq as usize] = Some(Piece {
                color: !p.color,
                role: Role::Rook,
            });
            castling.add(sq);
        }
    }
    assemble(&cells, turn, castling, ep)
}
