use shakmaty::{Chess, Move, Position};

use super::{GameCodec, PlyCost, decode_to_end, illegal, san};
use crate::{
    Bits, Error,
    bits::{BitWriter, ceil_log2},
    order::{Order, ThesisMoves, sorted_moves},
};

/// `index`: the thesis' position-dependent coding. The legal moves are sorted
/// in [`Order::Thesis`] and the index of the move played is written in
/// `ceil(log2 n)` bits; a forced move costs nothing.
///
/// Where the game ends: a decoder that knows the stream's exact length can
/// decode until the bits run out, except for forced moves at the very end,
/// which leave no trace. So the stream starts with the number `k` of forced
/// plies after the last unforced one, as Elias gamma of `k + 1` (1 bit when
/// `k = 0`), instead of the full ply count (11 bits for 80 plies).
///
/// ```
/// use chesspack::game::{GameCodec, Index};
/// use shakmaty::{Chess, Square, Move, Role};
///
/// let e4 = Move::Normal { role: Role::Pawn, from: Square::E2, capture: None, to: Square::E4, promotion: None };
/// let bits = Index.encode(&Chess::default(), &[e4]).unwrap();
/// assert_eq!(bits.len(), 1 + 5); // no trailing forced move, then 5 bits for one of 20 moves
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct Index;

impl GameCodec for Index {
    fn name(&self) -> &'static str {
        "index"
    }

    fn description(&self) -> &'static str {
        "index among the canonically sorted legal moves in ceil(log2 n) bits (thesis)"
    }

    fn encode(&self, start: &Chess, moves: &[Move]) -> Result<Bits, Error> {
        let mut body = BitWriter::new();
        let mut trailing_forced = 0u64;
        let mut pos = start.clone();
        // Counted by origin square: no list of moves to key and rank.
        let mut thesis = ThesisMoves::default();
        for (ply, &m) in moves.iter().enumerate() {
            thesis.fill(&pos);
            let index = thesis.index_of(m).ok_or_else(|| illegal(ply, m, &pos))?;
            let legal = thesis.len();
            body.write(index as u64, ceil_log2(legal as u64));
            trailing_forced = if legal == 1 { trailing_forced + 1 } else { 0 };
            pos.play_unchecked(m);
        }
        let mut w = BitWriter::new();
        w.write_gamma(trailing_forced + 1);
        w.write_bits(&body.finish());
        Ok(w.finish())
    }

    fn decode(&self, start: &Chess, bits: &Bits) -> Result<Vec<Move>, Error> {
        // No list of moves: the move at an index is found by counting the
        // moves of each origin square (as `pick` does with a list).
        let mut thesis = ThesisMoves::default();
        decode_to_end(start, &mut bits.reader(), |pos, ply, r| {
            thesis.fill(pos);
            let index = match thesis.len() {
                0 => return Err(Error::InvalidData(format!("no legal move at ply {ply}"))),
                1 => 0,
                n => {
                    if r.remaining() == 0 {
                        return Err(Error::InvalidData(
                            "trailing forced move is not forced".into(),
                        ));
                    }
                    r.read(ceil_log2(n as u64))? as usize
                }
            };
            thesis
                .nth(index)
                .ok_or_else(|| Error::InvalidData(format!("move index {index} out of range")))
        })
    }

    fn explain(&self, start: &Chess, moves: &[Move]) -> Result<Vec<PlyCost>, Error> {
        let mut out = Vec::with_capacity(moves.len());
        let mut pos = start.clone();
        for (ply, &m) in moves.iter().enumerate() {
            let legal = sorted_moves(&pos, Order::Thesis);
            let rank = legal
                .iter()
                .position(|o| *o == m)
                .ok_or_else(|| illegal(ply, m, &pos))?;
            out.push(PlyCost {
                san: san(&pos, m),
                legal: legal.len(),
                rank: Some(rank),
                bits: f64::from(ceil_log2(legal.len() as u64)),
            });
            pos.play_unchecked(m);
        }
        Ok(out)
    }
}
