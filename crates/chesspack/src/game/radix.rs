use num_bigint::BigUint;
use shakmaty::{Chess, Move, Position};

use super::{GameCodec, MAX_PLIES, PlyCost, illegal, read_count, san};
use crate::{
    Bits, Error,
    bits::{BitReader, BitWriter},
    order::{Order, index_of, sorted_moves},
};

/// `radix`: the whole game as one mixed-radix integer
/// `g = m0 + n0·(m1 + n1·(m2 + …))`, where `m_i` is the index of ply `i` in
/// [`Order::SquareIndex`] among `n_i` legal moves.
///
/// The decoder must know where the game ends. Both ways the source allows are
/// implemented and the encoder keeps the shorter, spending one flag bit:
///
/// * flag `0`: a count, then `g` with radices `n_i`. Knowing the stream's
///   length, the decoder takes digits until `g` is 0; only plies whose digit
///   is 0 after the last nonzero one (index 0, or a forced move) are then
///   unaccounted for, so their number `k` is stored (Elias gamma of `k + 1`:
///   1 bit when the last move is not the first in its list) instead of the
///   full ply count (11 bits for 80 plies);
/// * flag `1`: no count, but every position gets an extra "end" digit: radices
///   are `n_i + 1`, and the last digit is the end symbol `n_k` of the final
///   position (free when the game ends in mate or stalemate, where `n_k = 0`).
///
/// The end symbol costs about `log2(1 + 1/n)` bits a ply (≈ 0.05 at 30 moves)
/// plus the final symbol, so it only wins for short games that end in mate or
/// stalemate (where the end symbol is free); the count wins otherwise (a
/// forced move costs a full bit with the end symbol). In both, `g` is written
/// with its minimal number of bits as the rest of the stream.
///
/// ```
/// use chesspack::game::{GameCodec, Radix};
/// use shakmaty::Chess;
///
/// let bits = Radix.encode(&Chess::default(), &[]).unwrap();
/// assert_eq!(Radix.decode(&Chess::default(), &bits).unwrap(), []);
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct Radix;

fn digits(start: &Chess, moves: &[Move]) -> Result<(Vec<(u64, u64)>, u64), Error> {
    let mut pos = start.clone();
    let mut digits = Vec::with_capacity(moves.len());
    for (ply, &m) in moves.iter().enumerate() {
        let (index, n) =
            index_of(&pos, m, Order::SquareIndex).ok_or_else(|| illegal(ply, m, &pos))?;
        digits.push((index as u64, n as u64));
        pos.play_unchecked(m);
    }
    Ok((digits, pos.legal_moves().len() as u64))
}

/// Horner's scheme from the most significant digit.
fn compose(digits: impl DoubleEndedIterator<Item = (u64, u64)>) -> BigUint {
    let mut g = BigUint::ZERO;
    for (d, radix) in digits.rev() {
        g *= radix;
        g += d;
    }
    g
}

fn write_int(w: &mut BitWriter, g: &BigUint) {
    let n = g.bits();
    for i in (0..n).rev() {
        w.write_bit(g.bit(i));
    }
}

fn read_int(r: &mut BitReader<'_>) -> Result<BigUint, Error> {
    let n = r.remaining();
    let mut bytes = vec![0u8; n.div_ceil(8)];
    // Right-align the bits in big-endian bytes.
    let offset = bytes.len() * 8 - n;
    for i in 0..n {
        if r.read_bit()? {
            let j = offset + i;
            bytes[j / 8] |= 0x80 >> (j % 8);
        }
    }
    Ok(BigUint::from_bytes_be(&bytes))
}

fn divmod(g: &mut BigUint, radix: u64) -> u64 {
    let d = &*g % radix;
    *g /= radix;
    d.try_into().unwrap_or(0)
}

impl GameCodec for Radix {
    fn name(&self) -> &'static str {
        "radix"
    }

    fn description(&self) -> &'static str {
        "the whole game as one mixed-radix integer of legal-move indexes (Q&A answer)"
    }

    fn encode(&self, start: &Chess, moves: &[Move]) -> Result<Bits, Error> {
        let (digits, final_moves) = digits(start, moves)?;

        let mut counted = BitWriter::new();
        counted.write_bit(false);
        let trailing_zeros = digits.iter().rev().take_while(|(d, _)| *d == 0).count();
        counted.write_gamma(trailing_zeros as u64 + 1);
        write_int(&mut counted, &compose(digits.iter().copied()));

        let mut ended = BitWriter::new();
        ended.write_bit(true);
        let with_end = digits
            .iter()
            .map(|&(d, n)| (d, n + 1))
            .chain(std::iter::once((final_moves, final_moves + 1)));
        write_int(&mut ended, &compose(with_end));

        // With the end symbol, a game ending in mate or stalemate (end digit 0)
        // whose last moves have digit 0 would leave g = 0 before its end, and
        // the decoder could not tell garbage from it without playing on; such
        // games take the count instead.
        let end_allowed = final_moves > 0 || digits.last().is_none_or(|&(d, _)| d != 0);
        Ok(if end_allowed && ended.len() < counted.len() {
            ended
        } else {
            counted
        }
        .finish())
    }

    fn decode(&self, start: &Chess, bits: &Bits) -> Result<Vec<Move>, Error> {
        let mut r = bits.reader();
        let with_end = r.read_bit()?;
        let mut trailing_zeros = if with_end { 0 } else { read_count(&mut r)? };
        let mut g = read_int(&mut r)?;
        let mut pos = start.clone();
        let mut moves = Vec::new();
        loop {
            if !with_end && g == BigUint::ZERO {
                if trailing_zeros == 0 {
                    break;
                }
                trailing_zeros -= 1;
            }
            if moves.len() as u64 > MAX_PLIES {
                return Err(Error::InvalidData("game too long".into()));
            }
            let legal = sorted_moves(&pos, Order::SquareIndex);
            let n = legal.len() as u64;
            let d = if with_end {
                if g == BigUint::ZERO && n > 0 {
                    // The most significant digit is nonzero: the end symbol
                    // n > 0, or the last move's digit (see `encode`).
                    return Err(Error::InvalidData("game without end symbol".into()));
                }
                let d = divmod(&mut g, n + 1);
                if d == n {
                    break;
                }
                d
            } else if n == 0 {
                return Err(Error::InvalidData(format!(
                    "no legal move at ply {}",
                    moves.len()
                )));
            } else {
                divmod(&mut g, n)
            };
            let m = legal[d as usize];
            pos.play_unchecked(m);
            moves.push(m);
        }
        if g != BigUint::ZERO {
            return Err(Error::InvalidData("integer larger than the game".into()));
        }
        Ok(moves)
    }

    fn explain(&self, start: &Chess, moves: &[Move]) -> Result<Vec<PlyCost>, Error> {
        let mut out = Vec::with_capacity(moves.len());
        let mut pos = start.clone();
        for (ply, &m) in moves.iter().enumerate() {
            let (index, n) =
                index_of(&pos, m, Order::SquareIndex).ok_or_else(|| illegal(ply, m, &pos))?;
            out.push(PlyCost {
                san: san(&pos, m),
                legal: n,
                rank: Some(index),
                bits: (n as f64).log2(),
            });
            pos.play_unchecked(m);
        }
        Ok(out)
    }
}
