use shakmaty::{Chess, Move, Position, Role, Square};

use super::{GameCodec, PlyCost, san, walk};
use crate::{Bits, Error, bits::BitWriter, order::target};

/// `squares`: the thesis' compact correspondence notation — from-square and
/// to-square in 6 + 6 bits, plus 2 bits for the promotion piece (knight,
/// bishop, rook, queen) only when the move promotes. Castling is written as
/// the king taking its own rook. The stream needs no ply count: it ends where
/// the bits end.
///
/// ```
/// use chesspack::game::{GameCodec, Squares};
/// use shakmaty::{Chess, Square, Move, Role};
///
/// let e4 = Move::Normal { role: Role::Pawn, from: Square::E2, capture: None, to: Square::E4, promotion: None };
/// let bits = Squares.encode(&Chess::default(), &[e4]).unwrap();
/// assert_eq!(bits.len(), 12);
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct Squares;

fn promo_code(role: Role) -> u64 {
    match role {
        Role::Knight => 0,
        Role::Bishop => 1,
        Role::Rook => 2,
        _ => 3,
    }
}

impl GameCodec for Squares {
    fn name(&self) -> &'static str {
        "squares"
    }

    fn description(&self) -> &'static str {
        "from and to square, 6 + 6 bits a ply, 2 more for a promotion (thesis, 12 bits/move)"
    }

    fn encode(&self, start: &Chess, moves: &[Move]) -> Result<Bits, Error> {
        let mut w = BitWriter::new();
        walk(start, moves, |_, _, m| {
            w.write(m.from().map_or(0, u64::from), 6);
            w.write(u64::from(target(m)), 6);
            if let Some(p) = m.promotion() {
                w.write(promo_code(p), 2);
            }
        })?;
        Ok(w.finish())
    }

    fn decode(&self, start: &Chess, bits: &Bits) -> Result<Vec<Move>, Error> {
        let mut r = bits.reader();
        let mut pos = start.clone();
        let mut moves = Vec::with_capacity(bits.len() / 12);
        while r.remaining() > 0 {
            let from = Square::new(r.read(6)? as u32);
            let to = Square::new(r.read(6)? as u32);
            let legal = pos.legal_moves();
            let mut candidates = legal
                .iter()
                .filter(|m| m.from() == Some(from) && target(**m) == to);
            let first = *candidates.next().ok_or_else(|| {
                Error::InvalidData(format!("no legal move {from}{to} at ply {}", moves.len()))
            })?;
            let m = if first.is_promotion() {
                let code = r.read(2)?;
                *legal
                    .iter()
                    .find(|m| {
                        m.from() == Some(from)
                            && target(**m) == to
                            && m.promotion().map(promo_code) == Some(code)
                    })
                    .ok_or_else(|| Error::InvalidData("invalid promotion piece".into()))?
            } else {
                first
            };
            pos.play_unchecked(m);
            moves.push(m);
        }
        Ok(moves)
    }

    fn explain(&self, start: &Chess, moves: &[Move]) -> Result<Vec<PlyCost>, Error> {
        let mut out = Vec::with_capacity(moves.len());
        walk(start, moves, |pos, _, m| {
            out.push(PlyCost {
                san: san(pos, m),
                legal: pos.legal_moves().len(),
                rank: None,
                bits: if m.is_promotion() { 14.0 } else { 12.0 },
            });
        })?;
        Ok(out)
    }
}
