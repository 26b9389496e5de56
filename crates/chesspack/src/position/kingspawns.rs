use shakmaty::{Bitboard, Chess, Color, File, Piece, Position, Rank, Role, Square};

use super::{Cells, PositionCodec, assemble, back_rank, cells_of, king_square, read_kings};
use crate::{
    Bits, Error,
    bits::{BitReader, BitWriter},
};

/// `kingspawns`: the "HuffmanSimpleKingsPawnOptimal" scheme.
///
/// Layout: 1 bit choosing row (0) or column (1) pawn flags; white king (6
/// bits); black king (6 bits); 6 bits flagging which of ranks 2–7 hold pawns,
/// or 8 bits flagging which files do; then for every square a1..h8 but the
/// kings': 1 bit piece/empty; for a piece 1 colour bit (1 = black); if the
/// square may hold a pawn (its rank or file is flagged, and it is on ranks
/// 2–7) 1 bit pawn/not; if not a pawn 2 bits rook `00`, bishop `01`, knight
/// `10`, queen `11`. The encoder writes both variants and keeps the shorter.
///
/// The source leaves out the rest of the state; it is added after the board,
/// each part costing nothing when the board rules it out:
///
/// * side to move: 1 bit (1 = black);
/// * castling: for each colour whose king stands on its back rank, and each
///   side of that king with `r` ≥ 1 rooks of that colour on the back rank, the
///   choice among "no right" and each of those rooks (a-file first) in a
///   truncated binary code of `r + 1` values (1 bit for a single rook);
/// * en passant: the files where a legal en-passant capture would be possible
///   given the board (a pawn of the side not to move on its fourth rank with
///   empty squares behind it and a capture that is legal) are the candidates;
///   the choice among "none" and each candidate takes a truncated binary code
///   of `candidates + 1` values (nothing in almost every position).
///
/// ```
/// use chesspack::position::{KingsPawns, PositionCodec};
/// use shakmaty::Chess;
///
/// // 1 + 12 + 6 + 32 + 16·3 + 14·4, then side to move and four castling bits
/// assert_eq!(KingsPawns.encode(&Chess::default()).unwrap().len(), 155 + 1 + 4);
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct KingsPawns;

fn pawn_possible(sq: Square, columns: bool, flags: u8) -> bool {
    let rank = sq.rank() as u32;
    (1..=6).contains(&rank)
        && if columns {
            flags & (1 << sq.file() as u32) != 0
        } else {
            flags & (1 << (rank - 1)) != 0
        }
}

fn role_code(role: Role) -> u64 {
    match role {
        Role::Rook => 0,
        Role::Bishop => 1,
        Role::Knight => 2,
        _ => 3,
    }
}

/// Rooks of `color` on its back rank on one side of the king, a-file first.
fn castling_candidates(cells: &Cells, color: Color, king: Square) -> [Vec<Square>; 2] {
    let mut sides = [Vec::new(), Vec::new()];
    if king.rank() != back_rank(color) {
        return sides;
    }
    for file in File::ALL {
        let sq = Square::from_coords(file, back_rank(color));
        if cells[sq as usize]
            == Some(Piece {
                color,
                role: Role::Rook,
            })
            && file != king.file()
        {
            sides[usize::from(file > king.file())].push(sq);
        }
    }
    sides
}

/// Squares where an en-passant capture could be legal with this board.
fn ep_candidates(cells: &Cells, turn: Color, castling: Bitboard) -> Vec<Square> {
    let them = !turn;
    let mut out = Vec::new();
    for file in File::ALL {
        let pawn = Square::from_coords(file, them.fold_wb(Rank::Fourth, Rank::Fifth));
        let ep = Square::from_coords(file, them.fold_wb(Rank::Third, Rank::Sixth));
        let origin = Square::from_coords(file, them.fold_wb(Rank::Second, Rank::Seventh));
        if cells[pawn as usize]
            == Some(Piece {
                color: them,
                role: Role::Pawn,
            })
            && cells[ep as usize].is_none()
            && cells[origin as usize].is_none()
            && assemble(cells, turn, castling, Some(ep)).is_ok()
        {
            out.push(ep);
        }
    }
    out
}

fn encode_board(pos: &Chess, cells: &Cells, wk: Square, bk: Square, columns: bool) -> BitWriter {
    let pawns = pos.board().pawns();
    let mut flags = 0u8;
    for sq in pawns {
        flags |= if columns {
            1 << sq.file() as u32
        } else {
            1 << (sq.rank() as u32).saturating_sub(1)
        };
    }
    let mut w = BitWriter::new();
    w.write_bit(columns);
    w.write(wk as u64, 6);
    w.write(bk as u64, 6);
    w.write(u64::from(flags), if columns { 8 } else { 6 });
    for sq in Square::ALL {
        if sq == wk || sq == bk {
            continue;
        }
        match cells[sq as usize] {
            None => w.write_bit(false),
            Some(Piece { color, role }) => {
                w.write_bit(true);
                w.write_bit(color == Color::Black);
                if pawn_possible(sq, columns, flags) {
                    w.write_bit(role == Role::Pawn);
                }
                if role != Role::Pawn {
                    w.write(role_code(role), 2);
                }
            }
        }
    }
    w
}

/// Side to move, castling and en passant: the same for both variants.
fn encode_state(pos: &Chess, cells: &Cells, wk: Square, bk: Square) -> Bits {
    let mut w = BitWriter::new();
    w.write_bit(pos.turn() == Color::Black);
    let rights = pos.castles().castling_rights();
    for (color, king) in [(Color::White, wk), (Color::Black, bk)] {
        for side in castling_candidates(cells, color, king) {
            if !side.is_empty() {
                let choice = side
                    .iter()
                    .position(|sq| rights.contains(*sq))
                    .map_or(0, |i| i + 1);
                w.write_truncated(choice as u64, side.len() as u64 + 1);
            }
        }
    }
    let candidates = ep_candidates(cells, pos.turn(), rights);
    if !candidates.is_empty() {
        let ep = pos.ep_square(shakmaty::EnPassantMode::Legal);
        let choice = candidates
            .iter()
            .position(|sq| Some(*sq) == ep)
            .map_or(0, |i| i + 1);
        w.write_truncated(choice as u64, candidates.len() as u64 + 1);
    }
    w.finish()
}

fn read_role(r: &mut BitReader<'_>) -> Result<Role, Error> {
    Ok(match r.read(2)? {
        0 => Role::Rook,
        1 => Role::Bishop,
        2 => Role::Knight,
        _ => Role::Queen,
    })
}

impl PositionCodec for KingsPawns {
    fn name(&self) -> &'static str {
        "kingspawns"
    }

    fn description(&self) -> &'static str {
        "kings, then pawn rows or columns flagged, then a small code per square (Huffman scheme)"
    }

    fn encode(&self, pos: &Chess) -> Result<Bits, Error> {
        let cells = cells_of(pos.board());
        let wk = king_square(&cells, Color::White)?;
        let bk = king_square(&cells, Color::Black)?;
        let rows = encode_board(pos, &cells, wk, bk, false);
        let columns = encode_board(pos, &cells, wk, bk, true);
        let mut w = if columns.len() < rows.len() {
            columns
        } else {
            rows
        };
        w.write_bits(&encode_state(pos, &cells, wk, bk));
        Ok(w.finish())
    }

    fn decode(&self, bits: &Bits) -> Result<Chess, Error> {
        let mut r = bits.reader();
        let columns = r.read_bit()?;
        let (wk, bk, mut cells) = read_kings(&mut r)?;
        let flags = r.read(if columns { 8 } else { 6 })? as u8;
        for sq in Square::ALL {
            if sq == wk || sq == bk || !r.read_bit()? {
                continue;
            }
            let color = Color::from_white(!r.read_bit()?);
            let role = if pawn_possible(sq, columns, flags) && r.read_bit()? {
                Role::Pawn
            } else {
                read_role(&mut r)?
            };
            cells[sq as usize] = Some(Piece { color, role });
        }
        let turn = Color::from_white(!r.read_bit()?);
        let mut castling = Bitboard::EMPTY;
        for (color, king) in [(Color::White, wk), (Color::Black, bk)] {
            for side in castling_candidates(&cells, color, king) {
                if !side.is_empty() {
                    let choice = r.read_truncated(side.len() as u64 + 1)? as usize;
                    if choice > 0 {
                        castling.add(side[choice - 1]);
                    }
                }
            }
        }
        let candidates = ep_candidates(&cells, turn, castling);
        let mut ep = None;
        if !candidates.is_empty() {
            let choice = r.read_truncated(candidates.len() as u64 + 1)? as usize;
            if choice > 0 {
                ep = Some(candidates[choice - 1]);
            }
        }
        if r.remaining() != 0 {
            return Err(Error::InvalidData("trailing bits".into()));
        }
        assemble(&cells, turn, castling, ep)
    }
}
