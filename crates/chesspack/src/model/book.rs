//! The opening prior: how often each move was played in positions frequent
//! in the training games, keyed by Zobrist hash.
//!
//! File format (`book.bin`, version 2), read in place without parsing (so
//! that opening an archive costs no time): magic `CPKO`, version (u32),
//! number of positions `n` (u32), number of moves `m` (u32); then `n`
//! position records of 20 bytes in ascending hash order — hash (u64), times
//! seen (u32), index of its first move (u32), number of moves (u16), two
//! zero bytes; then `m` move records of 6 bytes in key order within each
//! position — canonical key ([`crate::order::key`], thesis order; u16) and
//! count (u32). All little-endian.

use std::borrow::Cow;
#[cfg(feature = "train")]
use std::collections::HashMap;

use shakmaty::{Chess, EnPassantMode, Move, Position, zobrist::Zobrist64};

use crate::{
    Error,
    le::{u16_at, u32_at, u64_at, uint_at},
    order::{Order, key},
};

/// Magic bytes of a book file.
pub(crate) const MAGIC: &[u8; 4] = b"CPKO";
const VERSION: u32 = 2;
/// Positions seen fewer times are left out of a book.
pub(crate) const MIN_TOTAL: u32 = 10;
/// Only positions this early in a game are counted.
#[cfg(feature = "train")]
pub(crate) const MAX_PLY: usize = 40;

const HEADER: usize = 16;
const POSITION: usize = 20;
const MOVE: usize = 6;

/// Move counts of one position.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Entry<'a> {
    /// Move records (6 bytes each, in key order).
    moves: &'a [u8],
    /// Times the position was seen.
    pub total: u32,
}

impl Entry<'_> {
    /// The count of the move with key `k`.
    /// Asks for the entry's move counts to be brought into the cache.
    #[inline]
    pub(crate) fn prefetch(&self) {
        crate::simd::prefetch(self.moves);
    }

    pub(crate) fn count(&self, k: u16) -> u32 {
        let (mut lo, mut hi) = (0, self.moves.len() / MOVE);
        while lo < hi {
            let mid = (lo + hi) / 2;
            let mk = u16_at(self.moves, mid * MOVE);
            if mk == k {
                return u32_at(self.moves, mid * MOVE + 2);
            }
            if mk < k {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        0
    }
}

/// The book: move counts of frequent positions, over the file's bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Book {
    bytes: Cow<'static, [u8]>,
    positions: usize,
    moves: usize,
    /// For each value of a hash's top [`INDEX_BITS`] bits, the first
    /// position whose hash has that value or more (and the count last): a
    /// look-up searches a handful of positions, not the whole list, whose
    /// probes missed the caches (issue 40).
    index: Cow<'static, [u32]>,
}

/// The hash bits [`Book::index`] goes by: 2^16 + 1 entries, 256 KB.
const INDEX_BITS: u32 = 16;

/// The number of [`Book::index`]'s entries.
pub(crate) const INDEX_LEN: usize = (1 << INDEX_BITS) + 1;

/// Fills `index` ([`Book::index`], [`INDEX_LEN`] entries) from the
/// first `positions` sorted hashes of the book file `bytes`: at run time
/// for a book read from bytes, and when the library is compiled for the
/// embedded one ([`const_index`]).
const fn fill_index(bytes: &[u8], positions: usize, index: &mut [u32]) {
    const { assert!(INDEX_BITS == 16) };
    let (mut bucket, mut next) = (0, 0);
    while bucket < INDEX_LEN {
        // A hash's top 16 bits are its last two bytes.
        while next < positions && uint_at(bytes, HEADER + next * POSITION + 6, 2) < bucket as u64 {
            next += 1;
        }
        index[bucket] = next as u32;
        bucket += 1;
    }
}

/// [`Book::index`] of the first `positions` hashes of the book file
/// `bytes`.
fn index_of(bytes: &[u8], positions: usize) -> Vec<u32> {
    let mut index = vec![0u32; INDEX_LEN];
    fill_index(bytes, positions, &mut index);
    index
}

/// [`index_of`] of the well-formed book file `bytes`, worked out when the
/// library is compiled, for the embedded book ([`Book::embedded`]). Made
/// at first use instead, it and the file's check faulted in the 1.7 MB of
/// positions that a look-up then touches a few pages of: `get` of a game
/// took 14.8 against 12.6 ms, an explorer query that decodes one game
/// 66.7 against 63.7 (medians of 25 processes in turn; issue 68). Worked
/// out by the compiler it adds about 1.2 s to a build of the library, and
/// its 256 KB to the binary (the WebAssembly: 13.72 → 13.98 MB).
pub(crate) const fn const_index(bytes: &[u8]) -> [u32; INDEX_LEN] {
    let mut index = [0u32; INDEX_LEN];
    fill_index(bytes, uint_at(bytes, 8, 4) as usize, &mut index);
    index
}

impl Default for Book {
    /// The empty book.
    fn default() -> Book {
        let mut bytes = MAGIC.to_vec();
        for x in [VERSION, 0, 0] {
            bytes.extend_from_slice(&x.to_le_bytes());
        }
        Book {
            index: index_of(&bytes, 0).into(),
            bytes: bytes.into(),
            positions: 0,
            moves: 0,
        }
    }
}

/// The hash a book keys a position by.
pub(crate) fn position_hash(pos: &Chess) -> u64 {
    pos.zobrist_hash::<Zobrist64>(EnPassantMode::Legal).0
}

/// The key a book stores a move by.
pub(crate) fn move_key(m: Move) -> u16 {
    key(m, Order::Thesis) as u16
}

impl Book {
    /// The entry of `pos`, if the book has it.
    pub(crate) fn get(&self, pos: &Chess) -> Option<Entry<'_>> {
        self.get_hash(position_hash(pos))
    }

    /// Asks for what [`Book::get_hash`] reads first for `hash`, its
    /// index entry, to be brought into the cache: the book's look-ups
    /// miss the caches, so a caller that knows the hash early asks ahead.
    #[inline]
    pub(crate) fn prefetch_index(&self, hash: u64) {
        let bucket = (hash >> (64 - INDEX_BITS)) as usize;
        crate::simd::prefetch(&self.index[bucket..=bucket + 1]);
    }

    /// Asks for the position that [`Book::get_hash`] probes first for
    /// `hash` (reading its index entry, best asked for with
    /// [`Book::prefetch_index`] a little before).
    #[inline]
    pub(crate) fn prefetch_position(&self, hash: u64) {
        let bucket = (hash >> (64 - INDEX_BITS)) as usize;
        let (lo, hi) = (self.index[bucket] as usize, self.index[bucket + 1] as usize);
        if lo < hi {
            let at = HEADER + (lo + hi) / 2 * POSITION;
            crate::simd::prefetch(&self.bytes[at..at + POSITION]);
        }
    }

    /// The entry of the position with `hash`, if the book has it.
    pub(crate) fn get_hash(&self, hash: u64) -> Option<Entry<'_>> {
        let b = &self.bytes;
        let bucket = (hash >> (64 - INDEX_BITS)) as usize;
        let (mut lo, mut hi) = (self.index[bucket] as usize, self.index[bucket + 1] as usize);
        while lo < hi {
            let mid = (lo + hi) / 2;
            let at = HEADER + mid * POSITION;
            let h = u64_at(b, at);
            if h == hash {
                let total = u32_at(b, at + 8);
                let first = u32_at(b, at + 12) as usize;
                let len = usize::from(u16_at(b, at + 16));
                let start = HEADER + self.positions * POSITION + first * MOVE;
                return Some(Entry {
                    moves: &b[start..start + len * MOVE],
                    total,
                });
            }
            if h < hash {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        None
    }

    #[cfg(any(test, feature = "train"))]
    /// Positions in the book.
    pub(crate) fn len(&self) -> usize {
        self.positions
    }

    /// A book over a file's bytes, checked once (sizes, order, bounds).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidData`] for a malformed file.
    pub(crate) fn from_bytes(bytes: impl Into<Cow<'static, [u8]>>) -> Result<Book, Error> {
        let bytes = bytes.into();
        let bad = |what: &str| Error::InvalidData(format!("book file: {what}"));
        if bytes.len() < HEADER || &bytes[..4] != MAGIC {
            return Err(bad("not a chesspack book"));
        }
        if u32_at(&bytes, 4) != VERSION {
            return Err(bad("unknown version"));
        }
        let positions = u32_at(&bytes, 8) as usize;
        let moves = u32_at(&bytes, 12) as usize;
        if bytes.len() as u64 != HEADER as u64 + positions as u64 * 20 + moves as u64 * 6 {
            return Err(bad("wrong length"));
        }
        let mut prev = None;
        for i in 0..positions {
            let at = HEADER + i * POSITION;
            let h = u64_at(&bytes, at);
            let first = u32_at(&bytes, at + 12) as u64;
            let len = u64::from(u16_at(&bytes, at + 16));
            if prev.is_some_and(|p| p >= h) || first + len > moves as u64 {
                return Err(bad("positions out of order or out of bounds"));
            }
            prev = Some(h);
        }
        let index = index_of(&bytes, positions).into();
        Ok(Book {
            bytes,
            positions,
            moves,
            index,
        })
    }

    /// The book of the embedded file `bytes`, with its index made when the
    /// library was compiled ([`const_index`]), unchecked: in debug builds
    /// (the tests) it is checked to be [`Book::from_bytes`]'s.
    pub(crate) fn embedded(bytes: &'static [u8], index: &'static [u32]) -> Book {
        let book = Book {
            bytes: bytes.into(),
            positions: u32_at(bytes, 8) as usize,
            moves: u32_at(bytes, 12) as usize,
            index: index.into(),
        };
        if cfg!(debug_assertions) {
            assert_eq!(
                Book::from_bytes(bytes).as_ref(),
                Ok(&book),
                "the embedded book"
            );
        }
        book
    }

    #[cfg(feature = "train")]
    /// The book file bytes.
    pub(crate) fn to_bytes(&self) -> Vec<u8> {
        self.bytes.to_vec()
    }
}

#[cfg(feature = "train")]
/// Counts moves of training games into a [`Book`].
#[derive(Default)]
pub(crate) struct BookBuilder {
    counts: HashMap<u64, HashMap<u16, u32>>,
}

#[cfg(feature = "train")]
impl BookBuilder {
    /// Counts `m` played in `pos`.
    pub(crate) fn add(&mut self, pos: &Chess, m: Move) {
        *self
            .counts
            .entry(position_hash(pos))
            .or_default()
            .entry(move_key(m))
            .or_default() += 1;
    }

    /// The book of the positions seen at least `MIN_TOTAL` times.
    pub(crate) fn finish(self) -> Book {
        let mut hashes: Vec<_> = self
            .counts
            .iter()
            .filter(|(_, m)| m.values().sum::<u32>() >= MIN_TOTAL)
            .map(|(&h, _)| h)
            .collect();
        hashes.sort_unstable();
        let mut positions = Vec::new();
        let mut moves = Vec::new();
        let mut n_moves = 0u32;
        for &h in &hashes {
            let mut ms: Vec<(u16, u32)> = self.counts[&h].iter().map(|(&k, &c)| (k, c)).collect();
            ms.sort_unstable();
            let total: u32 = ms.iter().map(|&(_, c)| c).sum();
            positions.extend_from_slice(&h.to_le_bytes());
            positions.extend_from_slice(&total.to_le_bytes());
            positions.extend_from_slice(&n_moves.to_le_bytes());
            positions.extend_from_slice(&(ms.len() as u16).to_le_bytes());
            positions.extend_from_slice(&[0, 0]);
            for (k, c) in ms {
                moves.extend_from_slice(&k.to_le_bytes());
                moves.extend_from_slice(&c.to_le_bytes());
                n_moves += 1;
            }
        }
        let mut bytes = MAGIC.to_vec();
        bytes.extend_from_slice(&VERSION.to_le_bytes());
        bytes.extend_from_slice(&(hashes.len() as u32).to_le_bytes());
        bytes.extend_from_slice(&n_moves.to_le_bytes());
        bytes.extend_from_slice(&positions);
        bytes.extend_from_slice(&moves);
        Book::from_bytes(bytes).expect("a well-formed book")
    }
}

#[cfg(test)]
mod index_tests {
    use super::*;

    /// Issue 40: the index finds every position of the shipped book, and
    /// no hash that it does not hold, as the search over all did.
    #[test]
    fn the_index_finds_every_position_and_no_other() {
        let book = crate::model::embedded_book();
        assert!(book.len() > 80_000);
        let hashes: Vec<u64> = (0..book.len())
            .map(|i| u64_at(&book.bytes, HEADER + i * POSITION))
            .collect();
        for (i, &hash) in hashes.iter().enumerate() {
            assert!(book.get_hash(hash).is_some(), "position {i}");
            for other in [hash.wrapping_add(1), hash.wrapping_sub(1), hash ^ (1 << 63)] {
                if hashes.binary_search(&other).is_err() {
                    assert!(book.get_hash(other).is_none());
                }
            }
        }
        assert!(Book::default().get_hash(0).is_none());
        assert!(book.get(&Chess::default()).is_some());
    }
}

/// The examples of crate-private items, run as unit tests.
#[cfg(all(test, feature = "train"))]
mod examples {
    #[test]
    fn example_book_bookbuilder() {
        use crate::model::book::{BookBuilder, MIN_TOTAL, move_key};
        use shakmaty::{Chess, san::San};

        let pos = Chess::default();
        let e4 = "e4".parse::<San>().unwrap().to_move(&pos).unwrap();
        let mut b = BookBuilder::default();
        for _ in 0..MIN_TOTAL {
            b.add(&pos, e4);
        }
        let book = b.finish();
        let entry = book.get(&pos).unwrap();
        assert_eq!(
            (entry.total, entry.count(move_key(e4)), entry.count(0)),
            (MIN_TOTAL, MIN_TOTAL, 0)
        );
        assert_eq!(
            crate::model::book::Book::from_bytes(book.to_bytes()).unwrap(),
            book
        );
    }
}
