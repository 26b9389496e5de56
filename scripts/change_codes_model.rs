//! How small a search section's change codes get with a model that knows
//! each game's state, and how long they then take to decode: the
//! measurement behind docs/search.md, *What 0.75× of the archive would
//! take*. A standalone program (no crate, no dependency):
//!
//! ```sh
//! scripts/section_floor.py ARCHIVE.chpk --quick --dump /tmp/columns
//! rustc -O --edition 2024 scripts/change_codes_model.rs -o /tmp/change_codes_model
//! /tmp/change_codes_model /tmp/columns
//! ```
//!
//! Each game's changes after its node (column 16, then column 18) are
//! coded as binary decisions with the LZMA scheme's adaptive bits (the
//! archive's own `coder::binary`, written again here): whether the game's
//! changes end, whether a side loses its last castling right (and which,
//! where both could), the side that moves, whether it takes and the role
//! taken as a rank among the roles the other side still has, whether it
//! promotes (only where it has pawns) and to what, and the home square its
//! move leaves as a rank among the pawns still there. The state starts at
//! the game's node (the tree's changes from the start) and is made as the
//! codes are decoded, as a query would. Every game's codes are decoded
//! back and checked. It prints each column's symbols, the model's bytes and
//! the best of five decodings on one thread.

use std::fs;
use std::time::Instant;

/// The range coder's renormalisation threshold.
const TOP: u32 = 1 << 24;

/// A binary adaptive probability of a 0 bit in 2048ths, moved 1/32 of the
/// way towards each bit.
type Bit = u16;

fn update(p: &mut Bit, bit: bool) {
    if bit {
        *p -= *p >> 5;
    } else {
        *p += (2048 - *p) >> 5;
    }
}

/// Codes a bit (the encoder) or reads one (the decoder, `bit` unused).
trait Coder {
    fn bit(&mut self, p: &mut Bit, bit: bool) -> bool;
}

struct Encoder {
    low: u64,
    range: u32,
    cache: u8,
    pending: u64,
    out: Vec<u8>,
}

impl Encoder {
    fn new() -> Encoder {
        Encoder {
            low: 0,
            range: u32::MAX,
            cache: 0,
            pending: 1,
            out: Vec::new(),
        }
    }

    fn shift(&mut self) {
        if (self.low as u32) < 0xFF00_0000 || (self.low >> 32) != 0 {
            let carry = (self.low >> 32) as u8;
            let mut byte = self.cache;
            loop {
                self.out.push(byte.wrapping_add(carry));
                byte = 0xFF;
                self.pending -= 1;
                if self.pending == 0 {
                    break;
                }
            }
            self.cache = (self.low >> 24) as u8;
        }
        self.pending += 1;
        self.low = (self.low & 0x00FF_FFFF) << 8;
    }

    fn finish(mut self) -> Vec<u8> {
        for _ in 0..5 {
            self.shift();
        }
        self.out
    }
}

/// The share of `range` that a 0 bit of probability `p` takes.
fn bound(range: u32, p: Bit) -> u32 {
    (range >> 11) * u32::from(p)
}

/// Narrows `range` to `bit`'s share and updates `p` (what both coders do);
/// returns the bound between the shares.
fn narrow(range: &mut u32, p: &mut Bit, bit: bool) -> u32 {
    let at = bound(*range, *p);
    *range = if bit { *range - at } else { at };
    update(p, bit);
    at
}

impl Coder for Encoder {
    fn bit(&mut self, p: &mut Bit, bit: bool) -> bool {
        let at = narrow(&mut self.range, p, bit);
        if bit {
            self.low += u64::from(at);
        }
        while self.range < TOP {
            self.range <<= 8;
            self.shift();
        }
        bit
    }
}

struct Decoder<'a> {
    data: &'a [u8],
    pos: usize,
    range: u32,
    code: u32,
}

impl Decoder<'_> {
    fn new(data: &[u8]) -> Decoder<'_> {
        // The encoder's first byte is always 0.
        let mut d = Decoder {
            data,
            pos: 1,
            range: u32::MAX,
            code: 0,
        };
        for _ in 0..4 {
            d.code = (d.code << 8) | u32::from(d.byte());
        }
        d
    }

    fn byte(&mut self) -> u8 {
        let b = self.data.get(self.pos).copied().unwrap_or(0);
        self.pos += 1;
        b
    }
}

impl Coder for Decoder<'_> {
    fn bit(&mut self, p: &mut Bit, _: bool) -> bool {
        let bit = self.code >= bound(self.range, *p);
        let at = narrow(&mut self.range, p, bit);
        if bit {
            self.code -= at;
        }
        while self.range < TOP {
            self.range <<= 8;
            self.code = (self.code << 8) | u32::from(self.byte());
        }
        bit
    }
}

/// What a game cannot undo (as the section's `State`): its home pawns (bits
/// 0-7 White's, 8-15 Black's), each side's men by role (pawn to queen),
/// each side's castling gone, and the castling rights left (for the tree).
#[derive(Clone, Copy)]
struct State {
    home: u16,
    men: [[i8; 5]; 2],
    castling_gone: [bool; 2],
    rights: u8,
}

const START: State = State {
    home: 0xFFFF,
    men: [[8, 2, 2, 2, 1], [8, 2, 2, 2, 1]],
    castling_gone: [false; 2],
    rights: 15,
};

/// The home square's bit a code empties (docs/format.md, *Search section*).
fn vacated(code: u8) -> Option<usize> {
    let black = code >= 126;
    let c = code % 126;
    if !(6..102).contains(&c) {
        return None;
    }
    let bit = usize::from(c / 6 - 1);
    Some(if c.is_multiple_of(6) && (bit >= 8) != black {
        bit ^ 8
    } else {
        bit
    })
}

fn apply(s: &mut State, code: u8) {
    if code == 0 {
        return;
    }
    if code >= 252 {
        s.castling_gone[usize::from(code - 252)] = true;
        return;
    }
    let side = usize::from(code >= 126);
    let c = usize::from(code % 126);
    if let Some(role) = (c % 6).checked_sub(1) {
        s.men[1 - side][role] -= 1;
    }
    if c >= 102 {
        s.men[side][0] -= 1;
        s.men[side][(c - 102) / 6 + 1] += 1;
    }
    if let Some(bit) = vacated(code) {
        s.home &= !(1 << bit);
    }
}

/// The castling rights a move from or to `square` ends.
fn castling_of(square: usize) -> u8 {
    match square {
        4 => 3,
        7 => 1,
        0 => 2,
        60 => 12,
        63 => 4,
        56 => 8,
        _ => 0,
    }
}

/// The adaptive bits, by what each decides and its context.
struct Model {
    end: Vec<Bit>,
    castling: Vec<Bit>,
    castling_side: Bit,
    side: Vec<Bit>,
    takes: Vec<Bit>,
    role: Vec<Bit>,
    promotes: Vec<Bit>,
    promotion: Vec<Bit>,
    leaves: Vec<Bit>,
    how: Vec<Bit>,
    file: Vec<Bit>,
}

impl Model {
    fn new() -> Model {
        let bits = |n| vec![1024; n];
        Model {
            end: bits(256),
            castling: bits(256),
            castling_side: 1024,
            side: bits(256),
            takes: bits(2 * 256),
            role: bits(2 * 8 * 8),
            promotes: bits(4),
            promotion: bits(8),
            leaves: bits(2 * 7 * 256),
            how: bits(2 * 4),
            file: bits(2 * 3 * 8 * 8),
        }
    }
}

/// A rank below `n` (the wanted one where encoding) as bits down a tree of
/// halves.
fn rank<C: Coder>(c: &mut C, bits: &mut [Bit], n: usize, want: usize) -> usize {
    let (mut lo, mut hi, mut node) = (0, n, 1usize);
    while hi - lo > 1 {
        let mid = (lo + hi) / 2;
        let b = c.bit(&mut bits[node.min(7)], want >= mid);
        node = node * 2 + usize::from(b);
        if b {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    lo
}

/// Codes change `x` (0: the game's end) in state `s` after change `prev`;
/// decoding, returns the change read.
fn code<C: Coder>(c: &mut C, m: &mut Model, s: &State, prev: u8, x: u8) -> u8 {
    let pv = usize::from(prev);
    if c.bit(&mut m.end[pv], x == 0) {
        return 0;
    }
    let can = [!s.castling_gone[0], !s.castling_gone[1]];
    if (can[0] || can[1]) && c.bit(&mut m.castling[pv], x >= 252) {
        if can[0] && can[1] {
            return 252 + u8::from(c.bit(&mut m.castling_side, x == 253));
        }
        return if can[0] { 252 } else { 253 };
    }
    let side = usize::from(c.bit(&mut m.side[pv], (126..252).contains(&x)));
    let other = 1 - side;
    let xc = usize::from(x % 126);
    // The role taken, a rank among the other side's roles left.
    let mut left = [0; 5];
    let mut n = 0;
    for role in 0..5 {
        if s.men[other][role] > 0 {
            left[n] = role;
            n += 1;
        }
    }
    let mut taken = 0;
    if n > 0 && c.bit(&mut m.takes[side * 256 + pv], xc % 6 != 0) {
        let want = left[..n].iter().position(|&r| r + 1 == xc % 6).unwrap_or(0);
        let at = (side * 8 + n) * 8;
        taken = left[rank(c, &mut m.role[at..at + 8], n, want)] + 1;
    }
    if s.men[side][0] > 0
        && c.bit(
            &mut m.promotes[usize::from(taken > 0) * 2 + side],
            xc >= 102,
        )
    {
        let want = xc.saturating_sub(102) / 6;
        let mut role = 0;
        for k in 0..2 {
            let b = c.bit(
                &mut m.promotion[side * 4 + k * 2 + (role & 1)],
                (want >> (1 - k)) & 1 == 1,
            );
            role = role * 2 + usize::from(b);
        }
        return (side * 126 + 102 + 6 * role + taken) as u8;
    }
    // The home square left: the side's own by one step or a capture from
    // it (0), its own by two steps, written as the other side's (1), or
    // the other side's pawn taken there (2); then the file, a rank among
    // those still at home.
    let (own, theirs) = if side == 0 {
        (s.home & 0xFF, s.home >> 8)
    } else {
        (s.home >> 8, s.home & 0xFF)
    };
    let can_take_home = taken == 1 && theirs != 0;
    let mut left_square = 0;
    if (own != 0 || can_take_home)
        && c.bit(
            &mut m.leaves[(side * 7 + taken) * 256 + pv],
            (6..102).contains(&xc),
        )
    {
        let (want_how, want_file) = match (xc / 6).checked_sub(1) {
            Some(bit) if xc < 102 => {
                let mine = (bit >= 8) == (side == 1);
                (
                    if mine {
                        0
                    } else if taken == 0 {
                        1
                    } else {
                        2
                    },
                    bit & 7,
                )
            }
            _ => (0, 0),
        };
        let how = if own == 0 {
            2
        } else if taken == 0 {
            usize::from(c.bit(&mut m.how[side * 4], want_how == 1))
        } else if can_take_home && c.bit(&mut m.how[side * 4 + 1], want_how == 2) {
            2
        } else {
            0
        };
        let set = if how == 2 { theirs } else { own };
        let mut files = [0; 8];
        let mut nf = 0;
        for f in 0..8 {
            if set & (1 << f) != 0 {
                files[nf] = f;
                nf += 1;
            }
        }
        let want = files[..nf]
            .iter()
            .position(|&f| f == want_file)
            .unwrap_or(0);
        let at = ((side * 3 + how) * 8 + nf.min(7)) * 8;
        let file = files[rank(c, &mut m.file[at..at + 8], nf, want)];
        left_square = file + 8 * if how == 0 { side } else { other } + 1;
    }
    (side * 126 + left_square * 6 + taken) as u8
}

fn varints(b: &[u8]) -> Vec<u64> {
    let (mut out, mut x, mut shift) = (Vec::new(), 0u64, 0);
    for &y in b {
        x |= u64::from(y & 127) << shift;
        shift += 7;
        if y < 128 {
            out.push(x);
            (x, shift) = (0, 0);
        }
    }
    out
}

/// Each game's codes (0 ends a game's).
fn games(b: &[u8]) -> Vec<Vec<u8>> {
    b.split(|&x| x == 0)
        .take(b.iter().filter(|&&x| x == 0).count())
        .map(<[u8]>::to_vec)
        .collect()
}

fn main() {
    let dir = std::env::args()
        .nth(1)
        .expect("usage: change_codes_model DIR (columns from section_floor.py --dump)");
    let column = |i: usize| fs::read(format!("{dir}/{i}.bin")).expect("a column");
    let children = varints(&column(1));
    let node_codes = column(2);
    let moves: Vec<u16> = column(0)
        .chunks(2)
        .map(|c| u16::from_le_bytes([c[0], c[1]]))
        .collect();
    let flags = column(3);
    let planes = column(4);
    let games_n = flags.len();
    let node_of: Vec<usize> = (0..games_n)
        .map(|g| {
            (0..4)
                .map(|j| usize::from(planes[g + j * games_n]) << (8 * j))
                .sum()
        })
        .collect();
    // Each node's state, in preorder.
    let mut states = vec![START; children.len()];
    let mut stack = vec![(0, children[0])];
    for v in 1..children.len() {
        while stack.last().expect("a parent").1 == 0 {
            stack.pop();
        }
        let top = stack.last_mut().expect("a parent");
        top.1 -= 1;
        let mut s = states[top.0];
        apply(&mut s, node_codes[v - 1]);
        let key = usize::from(moves[v - 1]) / 8;
        s.rights &= !(castling_of(key / 64) | castling_of(key % 64));
        s.castling_gone = [s.rights & 3 == 0, s.rights & 12 == 0];
        states[v] = s;
        stack.push((v, children[v]));
    }
    let early = games(&column(16));
    let later = games(&column(18));
    // Indexed games only (flags 1): the others have no node.
    let indexed: Vec<usize> = (0..games_n).filter(|&g| flags[g] == 1).collect();
    // The later changes start from the state after the early ones.
    for (name, part, after_early) in [
        ("early changes", &early, false),
        ("later changes", &later, true),
    ] {
        let starts: Vec<State> = indexed
            .iter()
            .map(|&g| {
                let mut s = states[node_of[g]];
                if after_early {
                    early[g].iter().for_each(|&x| apply(&mut s, x));
                }
                s
            })
            .collect();
        let symbols: usize = indexed.iter().map(|&g| part[g].len() + 1).sum();
        let (mut enc, mut m) = (Encoder::new(), Model::new());
        for (i, &g) in indexed.iter().enumerate() {
            let (mut s, mut prev) = (starts[i], 0);
            for &x in part[g].iter().chain([0].iter()) {
                code(&mut enc, &mut m, &s, prev, x);
                apply(&mut s, x);
                prev = x;
            }
        }
        let bytes = enc.finish();
        let mut best = f64::MAX;
        for round in 0..5 {
            let t = Instant::now();
            let (mut dec, mut m) = (Decoder::new(&bytes), Model::new());
            for (i, &g) in indexed.iter().enumerate() {
                let (mut s, mut prev, mut k) = (starts[i], 0, 0);
                loop {
                    let x = code(&mut dec, &mut m, &s, prev, 0);
                    if round == 0 {
                        assert_eq!(part[g].get(k).copied().unwrap_or(0), x, "game {g}");
                    }
                    if x == 0 {
                        break;
                    }
                    apply(&mut s, x);
                    (prev, k) = (x, k + 1);
                }
            }
            best = best.min(t.elapsed().as_secs_f64());
        }
        println!(
            "{name}: {symbols} symbols, {} bytes, decoded in {:.1} ms ({:.1} ns a symbol)",
            bytes.len(),
            best * 1e3,
            best * 1e9 / symbols as f64
        );
    }
}
