//! The scores of the positions that games share, kept from one game to the
//! next: the openings.
//!
//! A move's score is a function of the weights, the position, the last
//! three moves (their targets, and the origin of the side to move's last),
//! the game's classes (ratings, time control, the clocks at this ply) and
//! the moves scored. A [`Situation`] holds each of them exactly (not a
//! hash), and a slot the moves it scored, so a score found here is the one
//! the model would work out, integer for integer: the memo changes no bit
//! of any stream, whatever it holds.
//!
//! One memo serves every thread's decoders (a thread decoding a block
//! finds the openings another thread scored), one every thread's encoders
//! (so that `stats`, which decodes each game just after encoding it,
//! measures a decoder that found only other games' positions): each a
//! fixed number of slots, direct-mapped by the position's hash mixed with
//! the rest of the key, in shards that each have a lock. Only positions of
//! the opening book are kept (positions seen at least ten times in the
//! training games; positions met once would push them out), and only
//! looked for in the first [`PLIES`] plies of a game.

use std::sync::Mutex;

use shakmaty::{Chess, Color, EnPassantMode, Move, Position};

use super::GameContext;
use super::context::{CLOCK_CLASSES, RATING_CLASSES, SPEED_CLASSES};

/// Positions are looked for in the first `PLIES` plies of a game: later
/// ones are seldom in the book (measured: docs/reading.md).
pub(super) const PLIES: usize = 24;

/// Moves a kept position may have at most (opening positions have 20 to
/// 50).
const MOVES: usize = 56;

/// Slots in each shard, and shards: 2^16 slots of 384 bytes, 25 MB a
/// memo at most, allocated as shards are first used.
const SLOT_BITS: u32 = 16;
const SHARD_SLOTS: usize = 64;
const SHARDS: usize = (1 << SLOT_BITS) / SHARD_SLOTS;

// The classes fit their fields of `Situation::around`.
const _: () = assert!(RATING_CLASSES <= 16 && SPEED_CLASSES <= 8 && CLOCK_CLASSES <= 16);

/// Everything a position's scores depend on but the moves scored, packed
/// exactly: the occupied squares, each piece (4 bits, in square order),
/// the last moves' squares and the game's classes, the side to move, the
/// en passant square, the castling rights, the weights' id.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) struct Situation {
    key: [u64; 5],
    /// Where to look for it: the position's Zobrist hash mixed with the
    /// rest of the key.
    slot: usize,
}

impl Situation {
    /// The situation of `pos` (whose Zobrist hash is `hash`), reached by
    /// `history`, in a game of `game`, scored by the weights of id
    /// `model`. `None` where it does not pack (more than 32 pieces).
    pub(super) fn of(
        model: u64,
        hash: u64,
        pos: &Chess,
        history: &[Move],
        game: &GameContext,
    ) -> Option<Situation> {
        let board = pos.board();
        let occupied = board.occupied();
        if occupied.count() > 32 {
            return None;
        }
        let mut pieces = 0u128;
        for (i, sq) in occupied.into_iter().enumerate() {
            let p = board.piece_at(sq).expect("occupied");
            let code = u128::from(p.color == Color::Black) << 3 | p.role as u128;
            pieces |= code << (4 * i);
        }
        let n = history.len();
        let square = |back: usize, from: bool| -> u64 {
            let m = n.checked_sub(back).map(|i| history[i]);
            let sq = m.and_then(|m| {
                if from {
                    m.from()
                } else {
                    Some(crate::order::target(m))
                }
            });
            sq.map_or(64, |s| u64::from(u8::from(s)))
        };
        let (mover, opponent, speed) = game.classes(pos.turn() == Color::White);
        let (clock, their_clock) = game.clock_classes(n);
        let mut around = 0u64;
        for (v, bits) in [
            (square(1, false), 7),
            (square(2, false), 7),
            (square(2, true), 7),
            (square(3, false), 7),
            (mover as u64, 4),
            (opponent as u64, 4),
            (speed as u64, 3),
            (clock as u64, 4),
            (their_clock as u64, 4),
            (u64::from(pos.turn() == Color::Black), 1),
            (
                pos.ep_square(EnPassantMode::Legal)
                    .map_or(64, |s| u64::from(u8::from(s))),
                7,
            ),
        ] {
            around = around << bits | v;
        }
        // The rooks that may castle, on the first and last ranks.
        let rights = pos.castles().castling_rights().0;
        if rights & !0xff00_0000_0000_00ff != 0 {
            return None;
        }
        let castles = (rights & 0xff) | (rights >> 48);
        // Fibonacci hashing: every bit of the key moves the top bits.
        let mixed = (hash ^ around ^ model.rotate_left(32)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        Some(Situation {
            key: [
                occupied.0,
                pieces as u64,
                (pieces >> 64) as u64,
                around,
                model << 16 | castles,
            ],
            slot: (mixed >> (64 - SLOT_BITS)) as usize,
        })
    }
}

/// A kept position: its situation, its moves (each 16 bits: origin,
/// target, promotion, castling) and their scores, in the order scored.
#[derive(Clone, Copy)]
struct Slot {
    key: [u64; 5],
    n: usize,
    moves: [u16; MOVES],
    scores: [i32; MOVES],
}

const EMPTY: Slot = Slot {
    key: [0; 5],
    n: 0,
    moves: [0; MOVES],
    scores: [0; MOVES],
};

/// Which of the two memos a coder uses.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Memo {
    /// The encoders'.
    Encoder,
    /// The decoders'.
    Decoder,
}

/// The kept scores of every thread: the encoders', the decoders'.
static MEMOS: [[Mutex<Vec<Slot>>; SHARDS]; 2] =
    [const { [const { Mutex::new(Vec::new()) }; SHARDS] }; 2];

impl Memo {
    fn shard(self, situation: &Situation) -> &'static Mutex<Vec<Slot>> {
        &MEMOS[self as usize][situation.slot / SHARD_SLOTS]
    }
}

/// A move in 16 bits (its position known): `None` for a piece put on the
/// board, which no chess position has.
fn move_bits(m: &Move) -> Option<u16> {
    let (from, to) = (m.from()?, crate::order::target(*m));
    let promotion = m.promotion().map_or(0, |r| r as u16);
    let castle = u16::from(m.is_castle());
    Some(u16::from(from) | u16::from(to) << 6 | promotion << 12 | castle << 15)
}

/// The scores of `moves` in `situation`, into `out`, if `memo` keeps
/// them.
pub(super) fn get(memo: Memo, situation: &Situation, moves: &[Move], out: &mut Vec<i32>) -> bool {
    // A poisoned lock only means that another thread panicked: a slot is
    // written whole, with one assignment.
    let slots = memo
        .shard(situation)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    let Some(slot) = slots.get(situation.slot % SHARD_SLOTS) else {
        return false;
    };
    if slot.key != situation.key
        || slot.n != moves.len()
        || !slot.moves[..slot.n]
            .iter()
            .zip(moves)
            .all(|(&b, m)| move_bits(m) == Some(b))
    {
        return false;
    }
    out.clear();
    out.extend_from_slice(&slot.scores[..slot.n]);
    true
}

/// Keeps the scores of `moves` in `situation` in `memo` (if it has at
/// most [`MOVES`] moves).
pub(super) fn put(memo: Memo, situation: &Situation, moves: &[Move], scores: &[i32]) {
    let n = moves.len();
    if n > MOVES || scores.len() != n {
        return;
    }
    let mut slot = Slot {
        key: situation.key,
        n,
        ..EMPTY
    };
    for ((b, m), (s, &score)) in slot
        .moves
        .iter_mut()
        .zip(moves)
        .zip(slot.scores.iter_mut().zip(scores))
    {
        let Some(bits) = move_bits(m) else {
            return;
        };
        *b = bits;
        *s = score;
    }
    let mut slots = memo
        .shard(situation)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    if slots.is_empty() {
        slots.resize(SHARD_SLOTS, EMPTY);
    }
    slots[situation.slot % SHARD_SLOTS] = slot;
}

#[cfg(test)]
mod tests {
    use shakmaty::{Chess, Move, Position, san::San};

    use super::*;
    use crate::model::{GameContext, TimeControl, Weights, embedded_book};

    /// Games that stay in the book as long as they can: at each ply a
    /// random move among those that lead to a position of the book's.
    fn book_games(seed: u64, games: usize) -> Vec<Vec<Move>> {
        let book = embedded_book();
        crate::testing::games_toward(
            seed,
            games,
            PLIES + 4,
            |p| book.get(p).is_some(),
            |_, _| true,
        )
    }

    fn san_line(sans: &[&str]) -> Vec<Move> {
        let mut pos = Chess::default();
        sans.iter()
            .map(|s| {
                let m = s.parse::<San>().unwrap().to_move(&pos).unwrap();
                pos.play_unchecked(m);
                m
            })
            .collect()
    }

    /// The scores of every position of `moves` in `game`, with the memo
    /// (asked twice: kept, then found) and without; how many positions
    /// the memo may keep (the book's, in the first plies) and how many
    /// were found.
    fn check_game(moves: &[Move], game: &GameContext, memo: Memo) -> (usize, usize) {
        let (w, book) = (Weights::embedded(), embedded_book());
        let mut pos = Chess::default();
        let (mut fresh, mut kept) = (Vec::new(), Vec::new());
        let (mut kept_ones, mut found) = (0, 0);
        for (ply, &m) in moves.iter().enumerate() {
            let legal = pos.legal_moves();
            let history = &moves[..ply];
            w.scores_into(&pos, history, &legal, book, game, None, &mut fresh);
            for _ in 0..2 {
                kept.clear();
                w.scores_into(&pos, history, &legal, book, game, Some(memo), &mut kept);
                assert_eq!(kept, fresh, "ply {ply} of {moves:?} in {game:?}");
            }
            let hash = book::position_hash(&pos);
            if ply < PLIES && legal.len() <= MOVES && book.get_hash(hash).is_some() {
                kept_ones += 1;
                let s = Situation::of(w.hidden.id, hash, &pos, history, game).unwrap();
                found += usize::from(get(memo, &s, &legal, &mut kept));
            }
            pos.play_unchecked(m);
        }
        (kept_ones, found)
    }

    use crate::model::book;

    /// The memo gives the scores the model works out, in every context
    /// and after every history: the same positions met in other
    /// contexts (ratings, time control, clocks) and by other move orders
    /// are scored again, not found.
    #[test]
    fn regression_issue_40_kept_scores_are_the_models() {
        let games = book_games(7, 12);
        let contexts = [
            GameContext::new(),
            GameContext::new().with_ratings(Some(1500), Some(2100)),
            GameContext::new().with_ratings(Some(2100), Some(1500)),
            GameContext::new().with_ratings(Some(1500), Some(1500)),
            GameContext::new()
                .with_ratings(Some(1500), Some(2100))
                .with_time_control(TimeControl::parse(b"180+2")),
            GameContext::new()
                .with_time_control(TimeControl::parse(b"180+2"))
                .with_clocks((0..40).map(|i| Some(180 - i)).collect()),
            GameContext::new()
                .with_time_control(TimeControl::parse(b"180+2"))
                .with_clocks((0..40).map(|i| Some(9 - i / 5)).collect()),
            // White short of time, black not.
            GameContext::new()
                .with_time_control(TimeControl::parse(b"180+2"))
                .with_clocks(
                    (0..40)
                        .map(|i| Some(if i % 2 == 0 { 9 } else { 180 }))
                        .collect(),
                ),
        ];
        let (mut kept, mut found) = (0, 0);
        let mut count = |(k, f)| {
            kept += k;
            found += f;
        };
        for memo in [Memo::Decoder, Memo::Encoder] {
            for game in &contexts {
                for moves in &games {
                    count(check_game(moves, game, memo));
                }
            }
        }
        // Transpositions: the same positions after other last moves.
        for line in [
            &["Nf3", "d5", "d4", "Nf6", "c4", "e6"][..],
            &["d4", "d5", "Nf3", "Nf6", "c4", "e6"],
            &["d4", "Nf6", "c4", "e6", "Nf3", "d5"],
            &["c4", "e6", "Nf3", "d5", "d4", "Nf6"],
        ] {
            count(check_game(
                &san_line(line),
                &GameContext::new(),
                Memo::Decoder,
            ));
        }
        let mut variants = 0;
        // The same positions after other last moves, each differing from
        // the game's in one of the squares that count: the target of the
        // last move, of the one before (or its origin), of the one before
        // that.
        for moves in &games {
            // The game's last position of the book's (past its third
            // ply), where the memo keeps scores.
            let mut pos = Chess::default();
            let mut deepest = None;
            for (ply, &m) in moves.iter().enumerate().take(PLIES) {
                if ply >= 3 && embedded_book().get(&pos).is_some() {
                    deepest = Some((ply, pos.clone()));
                }
                pos.play_unchecked(m);
            }
            let Some((n, pos)) = deepest else {
                continue;
            };
            variants += 1;
            let legal = pos.legal_moves();
            let (w, book, game) = (Weights::embedded(), embedded_book(), GameContext::new());
            let (mut fresh, mut kept) = (Vec::new(), Vec::new());
            for (back, origin) in [(0, false), (1, false), (2, false), (2, true), (3, false)] {
                let mut history = moves[..n].to_vec();
                if back > 0 {
                    let m = &mut history[n - back];
                    let (from, to) = (m.from().unwrap(), crate::order::target(*m));
                    let next = |s: shakmaty::Square| s.offset(1).unwrap_or(shakmaty::Square::A1);
                    // Another origin that the piece can go back to: the
                    // model reads it where a move goes back.
                    let back_to = legal.iter().map(|l| l.to()).find(|&t| {
                        legal.iter().any(|l| l.from() == Some(to) && l.to() == t) && t != from
                    });
                    *m = Move::Normal {
                        role: m.role(),
                        from: if origin {
                            back_to.unwrap_or(next(from))
                        } else {
                            from
                        },
                        capture: None,
                        to: if origin { to } else { next(to) },
                        promotion: None,
                    };
                }
                w.scores_into(&pos, &history, &legal, book, &game, None, &mut fresh);
                for _ in 0..2 {
                    kept.clear();
                    w.scores_into(
                        &pos,
                        &history,
                        &legal,
                        book,
                        &game,
                        Some(Memo::Decoder),
                        &mut kept,
                    );
                    assert_eq!(kept, fresh, "{back} {origin} {moves:?}");
                }
            }
        }
        assert!(variants >= 10, "{variants} games with variants");
        // The book's positions are found again once kept (all but those
        // whose slots other tests' games took in between).
        assert!(
            kept > 1000 && found * 10 > kept * 9,
            "{found} of {kept} found"
        );
    }

    /// What the situation holds: each of these changes it.
    #[test]
    fn situations_differ_by_what_the_scores_depend_on() {
        let moves = san_line(&["e4", "e5", "Nf3", "Nc6"]);
        let mut pos = Chess::default();
        for &m in &moves {
            pos.play_unchecked(m);
        }
        let hash = book::position_hash(&pos);
        let of = |model, history: &[Move], game: &GameContext| {
            Situation::of(model, hash, &pos, history, game).unwrap()
        };
        let base = GameContext::new();
        let reference = of(1, &moves, &base);
        assert_eq!(reference, of(1, &moves, &base));
        assert_ne!(reference, of(2, &moves, &base));
        // Only the last three moves count (and their number, for the
        // clocks).
        assert_eq!(reference, of(1, &moves[1..], &base));
        let shorter = &moves[2..];
        assert_ne!(reference, of(1, shorter, &base));
        let rated = base.clone().with_ratings(Some(1200), None);
        assert_ne!(reference, of(1, &moves, &rated));
        let timed = base.clone().with_time_control(TimeControl::parse(b"60+0"));
        assert_ne!(reference, of(1, &moves, &timed));
        let clocked = timed
            .clone()
            .with_clocks(vec![Some(60), Some(60), Some(59), Some(3)]);
        assert_ne!(of(1, &moves, &timed), of(1, &moves, &clocked));
        // The side to move, the castling rights and the en passant
        // square, with the same pieces.
        let positions = crate::testing::fen_positions(&[
            "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3",
            "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq - 0 3",
            "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w Kkq - 0 3",
            "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR b KQkq - 0 3",
        ]);
        let situations: Vec<Situation> = positions
            .iter()
            .map(|p| Situation::of(1, book::position_hash(p), p, &[], &base).unwrap())
            .collect();
        for (i, a) in situations.iter().enumerate() {
            for b in &situations[i + 1..] {
                assert_ne!(a.key, b.key);
            }
        }
    }
}
