//! Rook attacks from small tables (hyperbola quintessence along the file, a
//! 512-byte table along the rank), for the move generation that runs once a
//! ply in the `index` codec.
//!
//! shakmaty's rook attacks come from a magic table of about 800 kB: in the
//! archive, with zstd's tables beside it in the cache, the loads from it
//! were the most expensive instructions of the `index` codec's move
//! generation. These give the same bitboards (tested against shakmaty on
//! every square and many occupancies). shakmaty's bishop table is 41 kB
//! and stays. (shakmaty has the same method behind a feature, which
//! pgn-reader's default features switch off.)

use shakmaty::{Bitboard, Piece, Role, Square};

/// The squares of the file of each square, without the square.
const FILES: [u64; 64] = {
    let mut t = [0; 64];
    let mut sq = 0;
    while sq < 64 {
        t[sq] = (0x0101_0101_0101_0101u64 << (sq % 8)) & !(1 << sq);
        sq += 1;
    }
    t
};

/// `RANK[file][inner]`: the squares a rook on `file` attacks along its
/// rank when `inner` holds the occupancy of files b to g (bit 0 = b).
const RANK: [[u8; 64]; 8] = {
    let mut t = [[0; 64]; 8];
    let mut file = 0;
    while file < 8 {
        let mut inner = 0;
        while inner < 64 {
            let occupied = (inner as u32) << 1;
            let mut attacks = 0u8;
            let mut f = file + 1;
            while f < 8 {
                attacks |= 1 << f;
                if occupied & (1 << f) != 0 {
                    break;
                }
                f += 1;
            }
            let mut f = file;
            while f > 0 {
                f -= 1;
                attacks |= 1 << f;
                if occupied & (1 << f) != 0 {
                    break;
                }
            }
            t[file][inner] = attacks;
            inner += 1;
        }
        file += 1;
    }
    t
};

/// A rook's attacks from `sq` with `occupied` squares: what
/// [`shakmaty::attacks::rook_attacks`] gives.
#[inline]
pub(crate) fn rook_attacks(sq: Square, occupied: Bitboard) -> Bitboard {
    let sq = sq as usize & 63;
    // Along the file: one square a rank, so a byte swap reverses it.
    let file = FILES[sq];
    let o = occupied.0 & file;
    let up = o.wrapping_sub(1u64 << sq);
    let down = o.swap_bytes().wrapping_sub(1u64 << (sq ^ 56));
    let file = (up ^ down.swap_bytes()) & file;
    let shift = sq & 56;
    let rank = u64::from(RANK[sq & 7][((occupied.0 >> (shift + 1)) & 63) as usize]) << shift;
    Bitboard(file | rank)
}

/// A queen's attacks from `sq` with `occupied` squares.
#[inline]
pub(crate) fn queen_attacks(sq: Square, occupied: Bitboard) -> Bitboard {
    rook_attacks(sq, occupied) | shakmaty::attacks::bishop_attacks(sq, occupied)
}

/// The attacks of `piece` from `sq` with `occupied` squares: what
/// [`shakmaty::attacks::attacks`] gives, rooks and queens from here.
#[inline]
pub(crate) fn attacks(sq: Square, piece: Piece, occupied: Bitboard) -> Bitboard {
    match piece.role {
        Role::Rook => rook_attacks(sq, occupied),
        Role::Queen => queen_attacks(sq, occupied),
        _ => shakmaty::attacks::attacks(sq, piece, occupied),
    }
}

#[cfg(test)]
mod tests {
    use shakmaty::attacks;

    use super::*;

    #[test]
    fn same_attacks_as_shakmaty() {
        // Every square, the empty and full boards and a stream of random
        // occupancies, sparse and dense.
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || crate::hash::xorshift(&mut state);
        for i in 0..20_000 {
            let occupied = Bitboard(match i {
                0 => 0,
                1 => !0,
                _ if i % 3 == 0 => next() & next(),
                _ if i % 3 == 1 => next() & next() & next(),
                _ => next() | next(),
            });
            for sq in Square::ALL {
                assert_eq!(
                    rook_attacks(sq, occupied),
                    attacks::rook_attacks(sq, occupied),
                    "{sq:?} {occupied:?}"
                );
                for piece in shakmaty::Color::ALL
                    .into_iter()
                    .flat_map(|color| Role::ALL.map(|role| Piece { color, role }))
                {
                    assert_eq!(
                        attacks(sq, piece, occupied),
                        attacks::attacks(sq, piece, occupied)
                    );
                }
            }
        }
    }
}
