//! The opening prior: how often each move was played in positions frequent
//! in the training games, keyed by Zobrist hash.
//!
//! File format (`book.bin`): magic `CPKO`, version (u32), number of
//! positions (u32), then per position in ascending hash order its hash
//! (u64), total count (u32), number of moves (u16) and per move its
//! canonical key ([`crate::order::key`], thesis order; u16) and count (u32).
//! All little-endian.

use std::collections::HashMap;

/// One position of a book: hash, first move, number of moves, total.
type Slot = (u64, u32, u16, u32);

use shakmaty::{Chess, EnPassantMode, Move, Position, zobrist::Zobrist64};

use crate::{
    Error,
    order::{Order, key},
};

/// Magic bytes of a book file.
pub const MAGIC: &[u8; 4] = b"CPKO";
const VERSION: u32 = 1;
/// Positions seen fewer times are left out of a book.
pub const MIN_TOTAL: u32 = 10;
/// Only positions this early in a game are counted.
pub const MAX_PLY: usize = 40;

/// Move counts of one position.
#[derive(Clone, Copy, Debug)]
pub struct Entry<'a> {
    /// (move key, count), in key order.
    pub moves: &'a [(u16, u32)],
    /// Times the position was seen.
    pub total: u32,
}

impl Entry<'_> {
    /// The count of the move with key `k`.
    pub fn count(&self, k: u16) -> u32 {
        self.moves
            .binary_search_by_key(&k, |&(m, _)| m)
            .map_or(0, |i| self.moves[i].1)
    }
}

/// The book: move counts of frequent positions.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Book {
    /// Sorted by hash (binary search: loading is one pass, no hashing).
    index: Vec<Slot>,
    moves: Vec<(u16, u32)>,
}

/// The hash a book keys a position by.
pub fn position_hash(pos: &Chess) -> u64 {
    pos.zobrist_hash::<Zobrist64>(EnPassantMode::Legal).0
}

/// The key a book stores a move by.
pub fn move_key(m: Move) -> u16 {
    key(m, Order::Thesis) as u16
}

impl Book {
    /// The entry of `pos`, if the book has it.
    pub fn get(&self, pos: &Chess) -> Option<Entry<'_>> {
        let hash = position_hash(pos);
        let i = self.index.binary_search_by_key(&hash, |s| s.0).ok()?;
        let (_, start, len, total) = self.index[i];
        Some(Entry {
            moves: &self.moves[start as usize..start as usize + usize::from(len)],
            total,
        })
    }

    /// Positions in the book.
    pub fn len(&self) -> usize {
        self.index.len()
    }

    /// Whether the book is empty.
    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    /// Reads a book file.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidData`] for a malformed file.
    pub fn from_bytes(bytes: &[u8]) -> Result<Book, Error> {
        let bad = || Error::InvalidData("book file is malformed".into());
        if bytes.len() < 12 || &bytes[..4] != MAGIC {
            return Err(bad());
        }
        if u32::from_le_bytes(bytes[4..8].try_into().expect("4")) != VERSION {
            return Err(Error::InvalidData("book file version".into()));
        }
        let n = u32::from_le_bytes(bytes[8..12].try_into().expect("4")) as usize;
        let mut rest = &bytes[12..];
        let mut take = |k: usize| -> Result<&[u8], Error> {
            if rest.len() < k {
                return Err(bad());
            }
            let (a, b) = rest.split_at(k);
            rest = b;
            Ok(a)
        };
        let mut book = Book::default();
        book.index.reserve(n.min(bytes.len() / 14));
        for _ in 0..n {
            let hash = u64::from_le_bytes(take(8)?.try_into().expect("8"));
            let total = u32::from_le_bytes(take(4)?.try_into().expect("4"));
            let len = u16::from_le_bytes(take(2)?.try_into().expect("2"));
            let start = book.moves.len() as u32;
            for _ in 0..len {
                let k = u16::from_le_bytes(take(2)?.try_into().expect("2"));
                let c = u32::from_le_bytes(take(4)?.try_into().expect("4"));
                book.moves.push((k, c));
            }
            if book.index.last().is_some_and(|s| s.0 >= hash) {
                return Err(bad()); // not in ascending hash order
            }
            book.index.push((hash, start, len, total));
        }
        if !rest.is_empty() {
            return Err(bad());
        }
        Ok(book)
    }

    /// The book file bytes (positions in hash order, so the bytes depend
    /// only on the counts).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = MAGIC.to_vec();
        out.extend_from_slice(&VERSION.to_le_bytes());
        out.extend_from_slice(&(self.index.len() as u32).to_le_bytes());
        for &(h, start, len, total) in &self.index {
            out.extend_from_slice(&h.to_le_bytes());
            out.extend_from_slice(&total.to_le_bytes());
            out.extend_from_slice(&len.to_le_bytes());
            for &(k, c) in &self.moves[start as usize..start as usize + usize::from(len)] {
                out.extend_from_slice(&k.to_le_bytes());
                out.extend_from_slice(&c.to_le_bytes());
            }
        }
        out
    }
}

/// Counts moves of training games into a [`Book`].
///
/// ```
/// use chesspack::model::book::{BookBuilder, MIN_TOTAL};
/// use shakmaty::{Chess, Position, san::San};
///
/// let pos = Chess::default();
/// let e4 = "e4".parse::<San>().unwrap().to_move(&pos).unwrap();
/// let mut b = BookBuilder::default();
/// for _ in 0..MIN_TOTAL {
///     b.add(&pos, e4);
/// }
/// let book = b.finish();
/// assert_eq!(book.get(&pos).unwrap().total, MIN_TOTAL);
/// assert_eq!(book.get(&pos).unwrap().count(chesspack::model::book::move_key(e4)), MIN_TOTAL);
/// ```
#[derive(Default)]
pub struct BookBuilder {
    counts: HashMap<u64, HashMap<u16, u32>>,
}

impl BookBuilder {
    /// Counts `m` played in `pos`.
    pub fn add(&mut self, pos: &Chess, m: Move) {
        *self
            .counts
            .entry(position_hash(pos))
            .or_default()
            .entry(move_key(m))
            .or_default() += 1;
    }

    /// The book of the positions seen at least [`MIN_TOTAL`] times.
    pub fn finish(self) -> Book {
        let mut hashes: Vec<_> = self
            .counts
            .iter()
            .filter(|(_, m)| m.values().sum::<u32>() >= MIN_TOTAL)
            .map(|(&h, _)| h)
            .collect();
        hashes.sort_unstable();
        let mut book = Book::default();
        for h in hashes {
            let mut moves: Vec<(u16, u32)> =
                self.counts[&h].iter().map(|(&k, &c)| (k, c)).collect();
            moves.sort_unstable();
            let total = moves.iter().map(|&(_, c)| c).sum();
            let start = book.moves.len() as u32;
            book.index.push((h, start, moves.len() as u16, total));
            book.moves.extend(moves);
        }
        book
    }
}
