//! An enumerative code for positions: the escape of `position-model`, with
//! a proven worst case.
//!
//! Positions are numbered 0 … N − 1 in a fixed order and written as their
//! number in [`BITS`] bits. The numbered set contains every position of
//! standard chess whose material is reachable, after J. Tromp's counting
//! (ChessPositionRanking): per side at most 8 pawns plus promoted pieces
//! (queens beyond 1, rooks, bishops and knights beyond 2), and a side's
//! promotions at most the captures made plus the opponent's pawns captured
//! (a pawn passes the pawn opposite it only through a capture). Inside that
//! set: the side to move; the number of castling rooks of each colour (0–2,
//! on their back rank) and an en-passant pawn (on its fourth rank); then
//! the *material key* of each colour (pawns, men other than pawns, promoted
//! men); then the squares of the en-passant pawn, the castling rooks, the
//! white and black pawns (ranks 2–7), the other men, which of them are
//! white, and the sequence of their types. Each step is a mixed-radix digit
//! whose radix is the number of choices, so the number of a position is
//! below the size N of the set, which is below 2^157 (`size_is_below_2_157`
//! computes it).

use std::sync::OnceLock;

use shakmaty::{Bitboard, Chess, Color, Piece, Position, Rank, Role, Square};

use super::{Cells, assemble, cells_of, ep_pawn};
use crate::{
    Bits, Error,
    bits::{BitReader, BitWriter},
};

/// The width of a rank in bits: every position's number is below `2^BITS`.
pub const BITS: u32 = 157;

/// An unsigned integer of 256 bits, little-endian 64-bit limbs: just the
/// operations ranking needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
struct U256([u64; 4]);

impl Ord for U256 {
    fn cmp(&self, o: &U256) -> std::cmp::Ordering {
        // Most significant limb first.
        self.0.iter().rev().cmp(o.0.iter().rev())
    }
}

impl PartialOrd for U256 {
    fn partial_cmp(&self, o: &U256) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}

impl U256 {
    const ZERO: U256 = U256([0; 4]);

    fn from_u64(v: u64) -> U256 {
        U256([v, 0, 0, 0])
    }

    fn add(self, o: U256) -> U256 {
        let mut r = [0u64; 4];
        let mut carry = 0u128;
        for (i, slot) in r.iter_mut().enumerate() {
            let s = u128::from(self.0[i]) + u128::from(o.0[i]) + carry;
            *slot = s as u64;
            carry = s >> 64;
        }
        U256(r)
    }

    fn sub(self, o: U256) -> U256 {
        let mut r = [0u64; 4];
        let mut borrow = 0i128;
        for (i, slot) in r.iter_mut().enumerate() {
            let mut d = i128::from(self.0[i]) - i128::from(o.0[i]) - borrow;
            borrow = 0;
            if d < 0 {
                d += 1 << 64;
                borrow = 1;
            }
            *slot = d as u64;
        }
        U256(r)
    }

    fn mul(self, m: u64) -> U256 {
        let mut r = [0u64; 4];
        let mut carry = 0u128;
        for (i, slot) in r.iter_mut().enumerate() {
            let p = u128::from(self.0[i]) * u128::from(m) + carry;
            *slot = p as u64;
            carry = p >> 64;
        }
        U256(r)
    }

    /// `(self / d, self % d)`.
    fn divmod(self, d: u64) -> (U256, u64) {
        let mut q = [0u64; 4];
        let mut rem = 0u128;
        for i in (0..4).rev() {
            let cur = (rem << 64) | u128::from(self.0[i]);
            q[i] = (cur / u128::from(d)) as u64;
            rem = cur % u128::from(d);
        }
        (U256(q), rem as u64)
    }

    #[cfg(test)]
    fn bits(self) -> u32 {
        (0..4)
            .rev()
            .find(|&i| self.0[i] != 0)
            .map_or(0, |i| 64 * i as u32 + 64 - self.0[i].leading_zeros())
    }
}

fn binomial(n: u32, k: u32) -> u64 {
    static TABLE: OnceLock<Vec<[u64; 65]>> = OnceLock::new();
    let t = TABLE.get_or_init(|| {
        let mut t = vec![[0u64; 65]; 65];
        for n in 0..65 {
            t[n][0] = 1;
            for k in 1..=n {
                t[n][k] = t[n - 1][k - 1] + if k < n { t[n - 1][k] } else { 0 };
            }
        }
        t
    });
    if k > n { 0 } else { t[n as usize][k as usize] }
}

/// The men of one colour other than pawns: king, queens, rooks (without
/// castling rooks), bishops, knights.
type Men = [u32; 5];

fn multinomial(counts: &Men) -> u64 {
    let mut left: u32 = counts.iter().sum();
    let mut r = 1u64;
    for &c in counts {
        r *= binomial(left, c);
        left -= c;
    }
    r
}

fn promotions(men: &Men, castling_rooks: u32) -> u32 {
    let [_, q, r, b, n] = *men;
    q.saturating_sub(1)
        + (r + castling_rooks).saturating_sub(2)
        + b.saturating_sub(2)
        + n.saturating_sub(2)
}

/// The armies of one colour with `men` men and `proms` promotions, in a
/// fixed order (for `castling_rooks` fixed rooks).
fn armies(men: u32, proms: u32, castling_rooks: u32) -> impl Iterator<Item = Men> {
    (0..=9u32).flat_map(move |q| {
        (0..=10u32).flat_map(move |r| {
            (0..=10u32).flat_map(move |b| {
                (0..=10u32).filter_map(move |n| {
                    let army = [1, q, r, b, n];
                    (1 + q + r + b + n == men && promotions(&army, castling_rooks) == proms)
                        .then_some(army)
                })
            })
        })
    })
}

/// The number of type sequences of `men` men with `proms` promotions.
fn sequences(men: u32, proms: u32, castling_rooks: u32) -> u64 {
    static TABLE: OnceLock<Vec<u64>> = OnceLock::new();
    let t = TABLE.get_or_init(|| {
        let mut t = vec![0u64; 3 * 17 * 9];
        for cr in 0..3 {
            for m in 1..17 {
                for p in 0..9 {
                    t[(cr * 17 + m) * 9 + p] = armies(m as u32, p as u32, cr as u32)
                        .map(|a| multinomial(&a))
                        .sum();
                }
            }
        }
        t
    });
    if men == 0 || men > 16 || proms > 8 {
        return 0;
    }
    t[((castling_rooks * 17 + men) * 9 + proms) as usize]
}

/// What is fixed before the material: side to move, castling rooks of each
/// colour, an en-passant pawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Class {
    black_to_move: bool,
    castling: [u32; 2],
    ep: bool,
}

fn classes() -> impl Iterator<Item = Class> {
    [false, true].into_iter().flat_map(|black_to_move| {
        (0..3).flat_map(move |cw| {
            (0..3).flat_map(move |cb| {
                [false, true].into_iter().map(move |ep| Class {
                    black_to_move,
                    castling: [cw, cb],
                    ep,
                })
            })
        })
    })
}

impl Class {
    /// En-passant pawns of each colour (the side not to move owns it).
    fn ep_pawns(&self) -> [u32; 2] {
        match (self.ep, self.black_to_move) {
            (false, _) => [0, 0],
            (true, true) => [1, 0],
            (true, false) => [0, 1],
        }
    }
}

/// The material key of one colour: free pawns, men, promotions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Key {
    pawns: u32,
    men: u32,
    proms: u32,
}

fn keys(castling_rooks: u32, ep_pawns: u32) -> Vec<Key> {
    let mut out = Vec::new();
    for pawns in 0..=8 - ep_pawns {
        for proms in 0..=8 - ep_pawns - pawns {
            for men in 1..=16 {
                if sequences(men, proms, castling_rooks) > 0 {
                    out.push(Key { pawns, men, proms });
                }
            }
        }
    }
    out
}

/// The number of positions of a class with these keys (0 when Tromp's
/// promotion bound fails).
fn count(c: &Class, w: &Key, b: &Key) -> U256 {
    let [ew, eb] = c.ep_pawns();
    let [cw, cb] = c.castling;
    let ep = u32::from(c.ep);
    let on_board = w.pawns + b.pawns + ep + w.men + b.men + cw + cb;
    if on_board > 32 {
        return U256::ZERO;
    }
    let captures = 32 - on_board;
    let white_pawns_lost = 8 - w.pawns - ew - w.proms;
    let black_pawns_lost = 8 - b.pawns - eb - b.proms;
    if w.proms > captures + black_pawns_lost || b.proms > captures + white_pawns_lost {
        return U256::ZERO;
    }
    let pawn_squares = 48 - ep;
    let free = 64 - ep - cw - cb - w.pawns - b.pawns;
    let men = w.men + b.men;
    if men > free {
        return U256::ZERO;
    }
    U256::from_u64(if c.ep { 8 } else { 1 })
        .mul(binomial(8, cw))
        .mul(binomial(8, cb))
        .mul(binomial(pawn_squares, w.pawns))
        .mul(binomial(pawn_squares - w.pawns, b.pawns))
        .mul(binomial(free, men))
        .mul(binomial(men, w.men))
        .mul(sequences(w.men, w.proms, cw))
        .mul(sequences(b.men, b.proms, cb))
}

/// The number of positions of each class.
fn class_sizes() -> &'static Vec<U256> {
    static SIZES: OnceLock<Vec<U256>> = OnceLock::new();
    SIZES.get_or_init(|| {
        let white: Vec<(Class, U256)> = classes()
            .filter(|c| !c.black_to_move)
            .map(|c| {
                let [ew, eb] = c.ep_pawns();
                let (wk, bk) = (keys(c.castling[0], ew), keys(c.castling[1], eb));
                let mut total = U256::ZERO;
                for w in &wk {
                    for b in &bk {
                        total = total.add(count(&c, w, b));
                    }
                }
                (c, total)
            })
            .collect();
        // Black to move mirrors white to move with the colours swapped.
        classes()
            .map(|c| {
                let mirror = Class {
                    black_to_move: false,
                    castling: [c.castling[1], c.castling[0]],
                    ep: c.ep,
                };
                white
                    .iter()
                    .find(|(m, _)| *m == if c.black_to_move { mirror } else { c })
                    .map_or(U256::ZERO, |(_, n)| *n)
            })
            .collect()
    })
}

/// The size of the numbered set.
#[cfg(test)]
fn size() -> U256 {
    class_sizes().iter().fold(U256::ZERO, |a, &b| a.add(b))
}

/// Colex rank of the positions `chosen` (sorted) among `0..n`.
fn subset_rank(chosen: &[u32]) -> u64 {
    chosen
        .iter()
        .enumerate()
        .map(|(i, &p)| binomial(p, i as u32 + 1))
        .sum()
}

/// The `k` positions among `0..n` with colex rank `r`.
fn subset_unrank(mut r: u64, n: u32, k: u32) -> Vec<u32> {
    let mut out = vec![0; k as usize];
    let mut top = n;
    for i in (0..k).rev() {
        let mut p = top;
        while p > 0 && binomial(p - 1, i + 1) > r {
            p -= 1;
        }
        // p - 1 is the largest position with binomial(p - 1, i + 1) ≤ r.
        let pos = p.saturating_sub(1);
        out[i as usize] = pos;
        r -= binomial(pos, i + 1);
        top = pos;
    }
    out
}

/// Rank of a sequence of types (0 king … 4 knight) among the sequences with
/// the same men and promotions: the armies before its own, then its rank
/// among the arrangements of its army.
fn sequence_rank(seq: &[u32], castling_rooks: u32) -> Result<u64, Error> {
    let mut army: Men = [0; 5];
    for &t in seq {
        army[t as usize] += 1;
    }
    let men = seq.len() as u32;
    let proms = promotions(&army, castling_rooks);
    let before: u64 = armies(men, proms, castling_rooks)
        .take_while(|a| *a != army)
        .map(|a| multinomial(&a))
        .sum();
    let mut left = army;
    let mut r = 0u64;
    for &t in seq {
        for smaller in 0..t {
            if left[smaller as usize] > 0 {
                let mut l = left;
                l[smaller as usize] -= 1;
                r += multinomial(&l);
            }
        }
        left[t as usize] -= 1;
    }
    Ok(before + r)
}

fn sequence_unrank(
    mut r: u64,
    men: u32,
    proms: u32,
    castling_rooks: u32,
) -> Result<Vec<u32>, Error> {
    let mut army = None;
    for a in armies(men, proms, castling_rooks) {
        let m = multinomial(&a);
        if r < m {
            army = Some(a);
            break;
        }
        r -= m;
    }
    let mut left = army.ok_or_else(|| Error::InvalidData("bad rank".into()))?;
    let mut seq = Vec::with_capacity(men as usize);
    for _ in 0..men {
        let mut chosen = None;
        for t in 0..5 {
            if left[t] == 0 {
                continue;
            }
            let mut l = left;
            l[t] -= 1;
            let m = multinomial(&l);
            if r < m {
                chosen = Some(t);
                left = l;
                break;
            }
            r -= m;
        }
        seq.push(chosen.ok_or_else(|| Error::InvalidData("bad rank".into()))? as u32);
    }
    Ok(seq)
}

const TYPES: [Role; 5] = [
    Role::King,
    Role::Queen,
    Role::Rook,
    Role::Bishop,
    Role::Knight,
];

fn type_of(role: Role) -> u32 {
    TYPES.iter().position(|&r| r == role).unwrap_or(0) as u32
}

fn pawn_squares() -> impl Iterator<Item = u32> {
    8..56
}

/// The digits of a position: (radix, digit) pairs, most significant first,
/// after the class and keys.
struct Parts {
    class: Class,
    keys: [Key; 2],
    digits: Vec<(u64, u64)>,
}

/// The castling rooks of each side (as many as their rights): their
/// digits, their squares taken and emptied.
fn castling_rooks(
    pos: &Chess,
    taken: &mut Bitboard,
    cells: &mut Cells,
    digits: &mut Vec<(u64, u64)>,
) -> Result<[u32; 2], Error> {
    let mut castling = [0u32; 2];
    for (i, color) in [Color::White, Color::Black].into_iter().enumerate() {
        let rank = color.fold_wb(Rank::First, Rank::Eighth);
        let rooks: Vec<u32> = pos
            .castles()
            .castling_rights()
            .into_iter()
            .filter(|sq| sq.rank() == rank)
            .map(|sq| sq.file() as u32)
            .collect();
        if rooks.len() > 2 {
            return Err(Error::Unrepresentable(
                "not rankable: castling rights".into(),
            ));
        }
        castling[i] = rooks.len() as u32;
        digits.push((binomial(8, castling[i]), subset_rank(&rooks)));
        for f in rooks {
            let sq = Square::from_coords(shakmaty::File::new(f), rank);
            taken.add(sq);
            cells[sq as usize] = None;
        }
    }
    Ok(castling)
}

fn parts(pos: &Chess) -> Result<Parts, Error> {
    let unrankable = |what: &str| Error::Unrepresentable(format!("not rankable: {what}"));
    let mut cells: Cells = cells_of(pos.board());
    let black_to_move = pos.turn() == Color::Black;
    let mut taken = Bitboard::EMPTY;
    let mut digits = Vec::new();
    // En passant.
    let ep = ep_pawn(pos).map(|(_, p)| p);
    if let Some(p) = ep {
        digits.push((8, u64::from(p.file() as u32)));
        taken.add(p);
        cells[p as usize] = None;
    }
    let castling = castling_rooks(pos, &mut taken, &mut cells, &mut digits)?;
    let class = Class {
        black_to_move,
        castling,
        ep: ep.is_some(),
    };
    // Pawns, white then black, among the free squares of ranks 2–7.
    let mut pawns = [0u32; 2];
    for (i, color) in [Color::White, Color::Black].into_iter().enumerate() {
        let free: Vec<u32> = pawn_squares()
            .filter(|&s| !taken.contains(Square::new(s)))
            .collect();
        let mut chosen = Vec::new();
        for (j, &s) in free.iter().enumerate() {
            if cells[s as usize] == Some(color.pawn()) {
                chosen.push(j as u32);
            }
        }
        pawns[i] = chosen.len() as u32;
        digits.push((binomial(free.len() as u32, pawns[i]), subset_rank(&chosen)));
        for &j in &chosen {
            let s = free[j as usize];
            taken.add(Square::new(s));
            cells[s as usize] = None;
        }
    }
    if cells.iter().flatten().any(|p| p.role == Role::Pawn) {
        return Err(unrankable("pawn on a back rank"));
    }
    // The other men.
    let free: Vec<u32> = (0..64)
        .filter(|&s| !taken.contains(Square::new(s)))
        .collect();
    let mut occupied = Vec::new();
    let mut colors = Vec::new();
    let mut seqs: [Vec<u32>; 2] = [Vec::new(), Vec::new()];
    for (j, &s) in free.iter().enumerate() {
        if let Some(p) = cells[s as usize] {
            occupied.push(j as u32);
            let i = usize::from(p.color == Color::Black);
            if i == 0 {
                colors.push((occupied.len() - 1) as u32);
            }
            seqs[i].push(type_of(p.role));
        }
    }
    let men = occupied.len() as u32;
    let white_men = seqs[0].len() as u32;
    digits.push((binomial(free.len() as u32, men), subset_rank(&occupied)));
    digits.push((binomial(men, white_men), subset_rank(&colors)));
    let [ew, eb] = class.ep_pawns();
    let mut keys = [Key {
        pawns: 0,
        men: 0,
        proms: 0,
    }; 2];
    for i in 0..2 {
        let mut army: Men = [0; 5];
        for &t in &seqs[i] {
            army[t as usize] += 1;
        }
        if army[0] != 1 {
            return Err(unrankable("not one king"));
        }
        let proms = promotions(&army, castling[i]);
        let ep_pawn = [ew, eb][i];
        if pawns[i] + ep_pawn + proms > 8 {
            return Err(unrankable("too many promoted pieces"));
        }
        keys[i] = Key {
            pawns: pawns[i],
            men: seqs[i].len() as u32,
            proms,
        };
        digits.push((
            sequences(keys[i].men, proms, castling[i]),
            sequence_rank(&seqs[i], castling[i])?,
        ));
    }
    if count(&class, &keys[0], &keys[1]) == U256::ZERO {
        return Err(unrankable("more promotions than captures allow"));
    }
    Ok(Parts {
        class,
        keys,
        digits,
    })
}

/// The number of `pos` in the ranking, as [`BITS`] bits.
///
/// ```
/// use chesspack::position::{rank, to_epd};
/// use shakmaty::Chess;
///
/// let bits = rank::rank(&Chess::default()).unwrap();
/// assert_eq!(bits.len(), rank::BITS as usize);
/// let back = rank::unrank(&bits).unwrap();
/// assert_eq!(to_epd(&back), to_epd(&Chess::default()));
/// ```
///
/// # Errors
///
/// [`Error::Unrepresentable`] for positions outside the numbered set: more
/// promoted pieces than the captures on the board allow, or castling rights
/// for more than two rooks of a colour.
pub fn rank(pos: &Chess) -> Result<Bits, Error> {
    let p = parts(pos)?;
    let mut offset = U256::ZERO;
    let sizes = class_sizes();
    let mut found = false;
    for (i, c) in classes().enumerate() {
        if c == p.class {
            found = true;
            break;
        }
        offset = offset.add(sizes[i]);
    }
    if !found {
        return Err(Error::Unrepresentable("no class".into()));
    }
    let [ew, eb] = p.class.ep_pawns();
    'keys: for w in keys(p.class.castling[0], ew) {
        for b in keys(p.class.castling[1], eb) {
            if w == p.keys[0] && b == p.keys[1] {
                break 'keys;
            }
            offset = offset.add(count(&p.class, &w, &b));
        }
    }
    let mut within = U256::ZERO;
    for &(radix, digit) in &p.digits {
        within = within.mul(radix).add(U256::from_u64(digit));
    }
    let number = offset.add(within);
    let mut w = BitWriter::new();
    for i in (0..BITS).rev() {
        w.write_bit(number.0[(i / 64) as usize] >> (i % 64) & 1 == 1);
    }
    Ok(w.finish())
}

/// The position that [`rank`] numbered as `bits` ([`BITS`] bits).
///
/// ```
/// use chesspack::position::rank::{rank, unrank};
///
/// let pos = shakmaty::Chess::default();
/// assert_eq!(unrank(&rank(&pos).unwrap()).unwrap(), pos);
/// ```
///
/// # Errors
///
/// [`Error::InvalidData`] for a number past the set or one that names no
/// legal position; [`Error::Truncated`] for too few bits.
pub fn unrank(bits: &Bits) -> Result<Chess, Error> {
    unrank_bits(&mut bits.reader())
}

/// [`unrank`] from a reader, which it leaves after the number.
pub(crate) fn unrank_bits(r: &mut BitReader<'_>) -> Result<Chess, Error> {
    let mut number = U256::ZERO;
    for _ in 0..BITS {
        number = number.mul(2).add(U256::from_u64(u64::from(r.read_bit()?)));
    }
    let bad = || Error::InvalidData("position number out of range".into());
    let sizes = class_sizes();
    let mut class = None;
    for (i, c) in classes().enumerate() {
        if number < sizes[i] {
            class = Some(c);
            break;
        }
        number = number.sub(sizes[i]);
    }
    let class = class.ok_or_else(bad)?;
    let [ew, eb] = class.ep_pawns();
    let mut found = None;
    'keys: for w in keys(class.castling[0], ew) {
        for b in keys(class.castling[1], eb) {
            let n = count(&class, &w, &b);
            if number < n {
                found = Some((w, b));
                break 'keys;
            }
            number = number.sub(n);
        }
    }
    let (wk, bk) = found.ok_or_else(bad)?;
    let ep = u32::from(class.ep);
    let [cw, cb] = class.castling;
    let free_men = 64 - ep - cw - cb - wk.pawns - bk.pawns;
    let men = wk.men + bk.men;
    let radices = [
        if class.ep { 8 } else { 1 },
        binomial(8, cw),
        binomial(8, cb),
        binomial(48 - ep, wk.pawns),
        binomial(48 - ep - wk.pawns, bk.pawns),
        binomial(free_men, men),
        binomial(men, wk.men),
        sequences(wk.men, wk.proms, cw),
        sequences(bk.men, bk.proms, cb),
    ];
    let mut digits = [0u64; 9];
    for i in (0..9).rev() {
        let (q, d) = number.divmod(radices[i]);
        digits[i] = d;
        number = q;
    }

    let mut cells: Cells = [None; 64];
    let mut taken = Bitboard::EMPTY;
    let mut ep_square = None;
    let mover = if class.black_to_move {
        Color::Black
    } else {
        Color::White
    };
    if class.ep {
        let them = !mover;
        let file = shakmaty::File::new(digits[0] as u32);
        let sq = Square::from_coords(file, them.fold_wb(Rank::Fourth, Rank::Fifth));
        cells[sq as usize] = Some(them.pawn());
        taken.add(sq);
        ep_square = Some(Square::from_coords(
            file,
            them.fold_wb(Rank::Third, Rank::Sixth),
        ));
    }
    let mut castling = Bitboard::EMPTY;
    for (i, color) in [Color::White, Color::Black].into_iter().enumerate() {
        let rank = color.fold_wb(Rank::First, Rank::Eighth);
        for f in subset_unrank(digits[1 + i], 8, class.castling[i]) {
            let sq = Square::from_coords(shakmaty::File::new(f), rank);
            cells[sq as usize] = Some(color.rook());
            castling.add(sq);
            taken.add(sq);
        }
    }
    for (i, (color, key)) in [(Color::White, wk), (Color::Black, bk)]
        .into_iter()
        .enumerate()
    {
        let free: Vec<u32> = pawn_squares()
            .filter(|&s| !taken.contains(Square::new(s)))
            .collect();
        for j in subset_unrank(digits[3 + i], free.len() as u32, key.pawns) {
            let s = free[j as usize];
            cells[s as usize] = Some(color.pawn());
            taken.add(Square::new(s));
        }
    }
    let free: Vec<u32> = (0..64)
        .filter(|&s| !taken.contains(Square::new(s)))
        .collect();
    let occupied = subset_unrank(digits[5], free.len() as u32, men);
    let whites = subset_unrank(digits[6], men, wk.men);
    let seqs = [
        sequence_unrank(digits[7], wk.men, wk.proms, cw)?,
        sequence_unrank(digits[8], bk.men, bk.proms, cb)?,
    ];
    let mut next = [0usize; 2];
    for (j, &o) in occupied.iter().enumerate() {
        let i = usize::from(!whites.contains(&(j as u32)));
        let color = if i == 0 { Color::White } else { Color::Black };
        let t = seqs[i][next[i]];
        next[i] += 1;
        cells[free[o as usize] as usize] = Some(Piece {
            color,
            role: TYPES[t as usize],
        });
    }
    assemble(&cells, mover, castling, ep_square)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn size_is_below_2_157() {
        let n = size();
        assert!(n.bits() <= BITS, "{} bits", n.bits());
        assert!(
            n.bits() > BITS - 1,
            "{} bits: BITS could be smaller",
            n.bits()
        );
    }

    #[test]
    fn subsets_round_trip() {
        for (n, k) in [(8, 2), (48, 8), (20, 0), (5, 5)] {
            for r in [0, 1, binomial(n, k) / 2, binomial(n, k) - 1] {
                if r >= binomial(n, k) {
                    continue;
                }
                let s = subset_unrank(r, n, k);
                assert_eq!(subset_rank(&s), r, "{n} {k} {r}");
                assert!(s.iter().all(|&p| p < n));
            }
        }
    }

    #[test]
    fn u256_arithmetic() {
        let a = U256::from_u64(u64::MAX)
            .mul(u64::MAX)
            .add(U256::from_u64(7));
        assert!(U256([0, 1, 0, 0]) > U256([u64::MAX, 0, 0, 0]));
        let (q, r) = a.divmod(u64::MAX);
        assert_eq!((q, r), (U256::from_u64(u64::MAX), 7));
        assert_eq!(a.sub(U256::from_u64(7)).add(U256::from_u64(7)), a);
    }
}
