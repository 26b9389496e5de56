//! Tag values as the `tag-values` column stores them: each value in full,
//! or a short mark that says where the decoder finds it among the values
//! before it in the block.
//!
//! Marks (the first byte of a stored value; the column keeps each tag
//! name's values together, in game order, each ended by a nul):
//!
//! * [`REPEAT`]: the previous value of the same tag name;
//! * [`ESCAPE`]: the value follows (it begins with a mark byte);
//! * [`RECENT`] `i`: for `White` and `Black`, the `i`-th most recently seen
//!   player name (`i` from 1, over both tags);
//! * [`PLAYER_ELO`]: for `WhiteElo` and `BlackElo`, the last Elo seen in
//!   the block of the player whom this game's `White` or `Black` tag, given
//!   before it, names;
//! * [`NEXT_ROUND`] `rest`: for `Round`, the number that begins the
//!   previous `Round` of the block plus one, then `rest` (`"4.2"` after
//!   `"3.7"` is [`NEXT_ROUND`] `".2"`);
//! * [`PREDICTED`]: for `ECO` and `Opening`, the value that the game's
//!   moves give ([`OpeningTable::predict`](crate::opening::OpeningTable::predict)
//!   with the built-in table); the decoder fills it in once it has decoded
//!   the moves. It changes no state: [`REPEAT`] after it means the value
//!   before it;
//! * [`TIME_STEP`]: for `UTCTime` and `Time`, the previous value of the
//!   same tag plus `d` seconds (around the clock), both `HH:MM:SS` times;
//! * [`DIFF_FROM_ELOS`]: for `WhiteRatingDiff` and `BlackRatingDiff`, the
//!   player's Elo in the last game before this one in the block that gives
//!   it, minus this game's: a player's games listed newest first, as lichess
//!   exports them;
//! * [`MIRROR_DIFF`]: for those, the other side's rating change in this
//!   game, negated;
//! * [`ELO_STEP`]: for `WhiteElo` and `BlackElo`, the player's last Elo
//!   in the block plus `d`, below 1000 in size;
//! * [`ELO_NEAR`]: for those, the other side's Elo in this game if given,
//!   else the other player's last Elo in the block, else the block's last
//!   Elo, plus `d` (a new opponent is paired near the player's rating);
//! * [`DIFF_STEP`]: for `WhiteRatingDiff` and `BlackRatingDiff`, the other
//!   side's change in this game, negated, plus `d` (plus `d` alone when the
//!   other is not known yet);
//! * [`DATE_STEP`]: for `Date` and `UTCDate`, the previous value of the
//!   same tag plus `d` days, back or forth;
//! * [`DATE_AS_GAME`]: for those, this game's first date (`UTCDate` after
//!   `Date`);
//! * [`RECENT_VALUE`]: for dates and for tags without a rule of their own
//!   (`Event`, `Termination`, `TimeControl`, an `Opening` that the moves do
//!   not give...), the `k`-th most recent of the last
//!   [`RECENT_VALUES`] different values of the same tag name (`k` from 1: 0
//!   is [`REPEAT`]);
//! * [`LICHESS_ID`]: for `Site`, `https://lichess.org/` and a game id of
//!   eight letters and digits, the id being a number below 62^8 in the
//!   `tag-numbers` column, 48 bits as they are (the random id of every
//!   lichess game, which zstd kept in 6.3 bytes).
//!
//! The numbers `d` and `k` of the marks are not in the column: they
//! are coded in the `tag-numbers` column, in the order the values come, with
//! adaptive binary probabilities of their own for each kind of mark
//! ([`TagNumbers`]): decimal text through zstd cost about 1.4 times as
//! many bytes (the times, Elos and rating changes of a lichess account's
//! games, docs/archive.md).
//!
//! Master game files list each player's games together: the players, their
//! ratings and the days of a tournament repeat, which zstd alone stores in
//! a few bytes each and the marks in less than one.

use std::{collections::HashMap, hash::BuildHasherDefault};

use crate::coder::{BinaryDecoder, BinaryEncoder, BitModel, decode_low, encode_low};
use crate::opening::OpeningTable;
use crate::pgn::strict::push_digits;

/// Each player's last Elo (its text) by name, for a block's tags: the
/// names and texts in one buffer, found by their names' hashes. A map of
/// owned names and texts cost two allocations a new player and two frees
/// at the block's end: on online games, where most players of a block are
/// new, 4% of the instructions of a search that decodes games (issue 68).
/// The hashes are those of this process alone: they decide nothing that
/// is stored.
#[derive(Debug, Default)]
struct PlayerElos {
    /// The last entry of each name's hash; the entries of a hash are
    /// chained by [`EloEntry::before`].
    by_hash: HashMap<u64, usize, BuildHasherDefault<crate::hash::KeyHasher>>,
    entries: Vec<EloEntry>,
    /// The entries' names and Elos.
    bytes: Vec<u8>,
}

/// A player of [`PlayerElos`]: where its name and Elo are in the buffer.
#[derive(Debug)]
struct EloEntry {
    name: std::ops::Range<usize>,
    elo: std::ops::Range<usize>,
    /// The entry before it with the same hash, if any.
    before: Option<usize>,
}

impl PlayerElos {
    fn hash(name: &[u8]) -> u64 {
        // FNV over words, its high bits brought down (the map indexes by
        // the low ones).
        let h = crate::hash::file_hash(name) ^ name.len() as u64;
        let h = (h ^ (h >> 31)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        h ^ (h >> 29)
    }

    /// The entry of player `name`.
    fn find(&self, name: &[u8]) -> Option<usize> {
        let mut at = self.by_hash.get(&Self::hash(name)).copied();
        while let Some(i) = at {
            let e = &self.entries[i];
            if self.bytes[e.name.clone()] == *name {
                return Some(i);
            }
            at = e.before;
        }
        None
    }

    /// The last Elo of player `name`.
    fn get(&self, name: &[u8]) -> Option<&[u8]> {
        self.find(name).map(|i| self.elo(i))
    }

    fn elo(&self, entry: usize) -> &[u8] {
        &self.bytes[self.entries[entry].elo.clone()]
    }

    /// Makes `elo` the Elo of `entry`: in its room where it fits.
    fn set(&mut self, entry: usize, elo: &[u8]) {
        let e = &mut self.entries[entry];
        if elo.len() <= e.elo.len() {
            let start = e.elo.start;
            self.bytes[start..start + elo.len()].copy_from_slice(elo);
            e.elo = start..start + elo.len();
        } else {
            let start = self.bytes.len();
            self.bytes.extend_from_slice(elo);
            e.elo = start..self.bytes.len();
        }
    }

    /// Adds player `name` (not there yet) with Elo `elo`.
    fn insert(&mut self, name: &[u8], elo: &[u8]) {
        let start = self.bytes.len();
        self.bytes.extend_from_slice(name);
        self.bytes.extend_from_slice(elo);
        let i = self.entries.len();
        let before = self.by_hash.insert(Self::hash(name), i);
        self.entries.push(EloEntry {
            name: start..start + name.len(),
            elo: start + name.len()..self.bytes.len(),
            before,
        });
    }
}

/// The previous value of the same tag name.
const REPEAT: u8 = 1;
/// The value follows, whatever its first byte.
const ESCAPE: u8 = 2;
/// `RECENT i`: the `i`-th most recent player name.
const RECENT: u8 = 3;
/// The player's last Elo.
const PLAYER_ELO: u8 = 4;
/// Mark 5 is no mark: a date is a [`DATE_STEP`].
/// `NEXT_ROUND rest`: the previous round's number plus one, then `rest`.
const NEXT_ROUND: u8 = 6;

/// The value the moves give (`ECO`, `Opening`).
const PREDICTED: u8 = 7;
/// `TIME_STEP`: the previous time plus `d` seconds.
const TIME_STEP: u8 = 8;
/// The player's previous Elo minus this game's.
const DIFF_FROM_ELOS: u8 = 9;
/// The other side's rating change, negated.
const MIRROR_DIFF: u8 = 10;
/// `ELO_STEP`: the player's last Elo plus `d`.
const ELO_STEP: u8 = 11;
/// `ELO_NEAR`: an Elo near this game's other one, plus `d`
/// ([`TagState::elo_reference`]).
const ELO_NEAR: u8 = 12;
/// `DIFF_STEP`: the other side's rating change, negated, plus `d`.
const DIFF_STEP: u8 = 13;
/// `DATE_STEP`: the previous date plus `d` days.
const DATE_STEP: u8 = 14;
/// `DATE_AS_GAME`: this game's first date.
const DATE_AS_GAME: u8 = 15;
/// `RECENT_VALUE`: the `k`-th most recent different value of the tag.
const RECENT_VALUE: u8 = 16;
/// `LICHESS_ID`: a lichess game's URL, its id a number.
const LICHESS_ID: u8 = 17;
/// The opening's value that the game's label gives: the first
/// such mark of a game comes with its label in the `tag-numbers` column.
const LABELLED: u8 = 18;

/// What a lichess game's URL begins with ([`LICHESS_ID`]).
const LICHESS_URL: &[u8] = b"https://lichess.org/";
/// The digits of a lichess game id, in the order of their values.
const ID_DIGITS: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
/// The bits of a lichess game id's number (62^8 < 2^48).
const ID_BITS: u32 = 48;
/// Characters of a lichess game id.
const ID_LENGTH: usize = 8;

/// The number of a lichess game's URL (`https://lichess.org/` and eight
/// letters and digits), if `value` is one.
fn lichess_id(value: &[u8]) -> Option<u64> {
    let id = value.strip_prefix(LICHESS_URL)?;
    if id.len() != ID_LENGTH {
        return None;
    }
    id.iter().try_fold(0u64, |n, &c| {
        let d = ID_DIGITS.iter().position(|&x| x == c)?;
        Some(n * 62 + d as u64)
    })
}

/// The URL of the lichess game id numbered `n` (below 62^8).
fn lichess_url(mut n: u64, out: &mut Vec<u8>) -> Result<(), String> {
    let mut id = [0u8; ID_LENGTH];
    for c in id.iter_mut().rev() {
        *c = ID_DIGITS[(n % 62) as usize];
        n /= 62;
    }
    if n != 0 {
        return Err("a lichess game id out of range".into());
    }
    out.clear();
    out.extend_from_slice(LICHESS_URL);
    out.extend_from_slice(&id);
    Ok(())
}

/// Different values of a tag name that [`RECENT_VALUE`] reaches (8 cost
/// 488 bytes more on a lichess account's 47,245 games and 3.6 kB on
/// 380,608 master games, for 1.3% fewer instructions in `get`).
const RECENT_VALUES: usize = 16;
/// The largest Elo step of [`ELO_STEP`] (larger ones are [`ELO_NEAR`]).
const MAX_ELO_STEP: i64 = 1000;

/// Seconds in a day, around which [`TIME_STEP`] counts.
const DAY: i64 = 24 * 3600;

/// A step of `d` seconds around the clock: -43199 to 43200.
fn around_the_clock(d: i64) -> i64 {
    (d + DAY / 2 - 1).rem_euclid(DAY) - DAY / 2 + 1
}

/// Player names that [`RECENT`] reaches.
const RECENT_NAMES: usize = 64;

/// Which marks a `tag-values` column uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Marks {
    /// Every mark but [`LABELLED`]: [`REPEAT`], [`ESCAPE`], those of
    /// players, ratings, dates and rounds, [`PREDICTED`], [`TIME_STEP`],
    /// [`DIFF_FROM_ELOS`], [`MIRROR_DIFF`], [`ELO_STEP`], [`ELO_NEAR`],
    /// [`DIFF_STEP`], [`DATE_STEP`], [`DATE_AS_GAME`], [`RECENT_VALUE`] and
    /// [`LICHESS_ID`], with numbers in the `tag-numbers` column: a block
    /// whose codec does not aim at openings.
    Ids,
    /// Those and [`LABELLED`], with the opening's label coded in the
    /// `tag-numbers` column at a game's first such mark, with the prior of
    /// the game's rating band (`opening::rating_band` of the `WhiteElo`
    /// and `BlackElo` values before it in the game): the tags of the
    /// opening need no moves, and the moves are coded knowing it.
    BandLabels,
}

/// What a tag name's values are, for the marks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    Other,
    /// A player's name: `White` (0) or `Black` (1).
    Player(usize),
    /// The Elo of the player of the same side.
    Elo(usize),
    Date,
    Round,
    /// `ECO` (0) or `Opening` (1).
    Opening(usize),
    /// `UTCTime` or `Time`.
    Time,
    /// The rating change of the player of the same side.
    Diff(usize),
    /// `Site`: a lichess game's URL, or as [`Role::Other`].
    Site,
}

impl Role {
    fn of(name: &[u8]) -> Role {
        match name {
            b"White" => Role::Player(0),
            b"Black" => Role::Player(1),
            b"WhiteElo" => Role::Elo(0),
            b"BlackElo" => Role::Elo(1),
            b"Date" | b"UTCDate" => Role::Date,
            b"Round" => Role::Round,
            b"ECO" => Role::Opening(0),
            b"Opening" => Role::Opening(1),
            b"UTCTime" | b"Time" => Role::Time,
            b"WhiteRatingDiff" => Role::Diff(0),
            b"BlackRatingDiff" => Role::Diff(1),
            b"Site" => Role::Site,
            _ => Role::Other,
        }
    }
}

/// The values seen so far in a block, which marks refer to; the encoder and
/// the decoder keep the same one, value by value in game order.
#[derive(Debug)]
pub(crate) struct TagState {
    marks: Marks,
    roles: Vec<Role>,
    /// Whether a game's moves are decoded with each tag's values, or with
    /// values coded from them ([`TagState::skim`]).
    read_by_moves: Vec<bool>,
    /// The last value of each tag name.
    last: Vec<Option<Vec<u8>>>,
    /// Player names, most recent first.
    // A ring: a new name goes in front without moving the others (an
    // insert at the front of a vector moved 64 names a new player).
    recent: std::collections::VecDeque<Vec<u8>>,
    /// Each player's last Elo.
    elo: PlayerElos,
    /// This game's `White` and `Black` values so far.
    players: [Option<Vec<u8>>; 2],
    /// For each side of this game so far, the player's Elo in the block
    /// before this game's minus this game's.
    elo_changes: [Option<i64>; 2],
    /// This game's rating changes so far.
    diffs: [Option<i64>; 2],
    /// The last Elo of the block, any player's.
    last_elo: Option<i64>,
    /// This game's Elos so far.
    elos: [Option<i64>; 2],
    /// This game's first date, when `has_game_date`; the buffer
    /// stays from game to game.
    game_date: Vec<u8>,
    has_game_date: bool,
    /// The last [`RECENT_VALUES`] different values of each tag name, most
    /// recent first (tags of [`Role::Other`], [`Role::Opening`]
    /// and [`Role::Date`]).
    values: Vec<Vec<Vec<u8>>>,
    /// The probabilities of the numbers of the marks.
    numbers: TagNumbers,
    /// Whether a number was coded.
    coded: bool,
    /// The opening table the block names openings by (lichess's).
    openings: &'static OpeningTable,
    /// Whether the ply of a game's opening is one of its lines', and which.
    ply_is_line: BitModel,
    ply_line: [BitModel; 8],
}

/// Where a decoded value stands in its tag's list of recent names or
/// values, as its mark tells ([`TagState::build`]).
#[derive(Clone, Copy, Debug)]
enum Listed {
    /// At this place (a [`RECENT`] or [`RECENT_VALUE`] mark).
    At(usize),
    /// Not there: a value written out is one that the writer did not find
    /// in the same list (it would have written a mark).
    No,
    /// Not known: looked for.
    Unknown,
}

impl Listed {
    /// The place, looked for with `find` where it is not known.
    fn or_find(self, find: impl FnOnce() -> Option<usize>) -> Option<usize> {
        match self {
            Listed::At(i) => Some(i),
            Listed::No => None,
            Listed::Unknown => find(),
        }
    }
}

/// The adaptive probabilities of the numbers of the marks, one set a
/// kind of mark (for [`RECENT_VALUE`], one a tag name).
#[derive(Debug)]
pub(crate) struct TagNumbers {
    time: Number,
    elo_step: Number,
    elo_near: Number,
    diff: Number,
    date: Number,
    recent: Vec<Number>,
}

impl TagNumbers {
    fn new() -> TagNumbers {
        TagNumbers {
            time: Number::new(),
            elo_step: Number::new(),
            elo_near: Number::new(),
            diff: Number::new(),
            date: Number::new(),
            recent: Vec::new(),
        }
    }
}

/// The probabilities of one kind of number: its size's bit length, the bit
/// below the leading one, then (for signed numbers other than 0) its sign;
/// the bits below are even.
#[derive(Clone, Debug)]
struct Number {
    lengths: Vec<BitModel>,
    first: Vec<BitModel>,
    sign: BitModel,
}

/// The largest size of a number (a time step is below a day, an Elo below
/// 10^9).
const MAX_NUMBER: u64 = 1 << 40;

impl Number {
    fn new() -> Number {
        Number {
            lengths: vec![BitModel::warm(); 64],
            first: vec![BitModel::warm(); 64],
            sign: BitModel::warm(),
        }
    }

    fn encode(&mut self, enc: &mut BinaryEncoder, d: i64) {
        let v = d.unsigned_abs() + 1;
        let n = 63 - v.leading_zeros();
        enc.encode_tree(&mut self.lengths, 6, n);
        if n > 0 {
            enc.encode_bit(&mut self.first[n as usize], v >> (n - 1) & 1 == 1);
            encode_low(enc, v, n - 1);
        }
        if d != 0 {
            enc.encode_bit(&mut self.sign, d < 0);
        }
    }

    fn decode(&mut self, dec: &mut BinaryDecoder<'_>) -> Result<i64, String> {
        let n = dec.decode_tree(&mut self.lengths, 6);
        let v = if n == 0 {
            1
        } else {
            let top = u64::from(dec.decode_bit(&mut self.first[n as usize]));
            (1u64 << n) | top << (n - 1) | decode_low(dec, n - 1)
        };
        let size = v - 1;
        if size >= MAX_NUMBER {
            return Err("a tag number out of range".into());
        }
        let size = size as i64;
        Ok(if size != 0 && dec.decode_bit(&mut self.sign) {
            -size
        } else {
            size
        })
    }
}

impl TagState {
    /// A state without tag names, with `marks`.
    pub(crate) fn new(marks: Marks) -> TagState {
        TagState {
            marks,
            roles: Vec::new(),
            read_by_moves: Vec::new(),
            last: Vec::new(),
            recent: std::collections::VecDeque::new(),
            elo: PlayerElos::default(),
            players: [None, None],
            elo_changes: [None, None],
            diffs: [None, None],
            last_elo: None,
            elos: [None, None],
            game_date: Vec::new(),
            has_game_date: false,
            values: Vec::new(),
            numbers: TagNumbers::new(),
            coded: false,
            openings: OpeningTable::lichess(),
            ply_is_line: BitModel::warm(),
            ply_line: [BitModel::default(); 8],
        }
    }

    /// This state naming openings by `table`.
    pub(crate) fn with_openings(mut self, table: &'static OpeningTable) -> TagState {
        self.openings = table;
        self
    }

    /// The opening table the block names openings by.
    pub(crate) fn openings(&self) -> &'static OpeningTable {
        self.openings
    }

    /// Adds the tag name of the next id.
    pub(crate) fn add_name(&mut self, name: &[u8]) {
        let role = Role::of(name);
        // The model's context (the Elos, which players' names and Elos
        // code), the clocks' time control and the start position.
        self.read_by_moves.push(
            matches!(role, Role::Player(_) | Role::Elo(_))
                || name == b"TimeControl"
                || name.eq_ignore_ascii_case(b"FEN")
                || name.eq_ignore_ascii_case(b"Variant"),
        );
        self.roles.push(role);
        self.last.push(None);
        self.values.push(Vec::new());
        self.numbers.recent.push(Number::new());
    }

    /// Starts a game.
    pub(crate) fn start_game(&mut self) {
        self.players = [None, None];
        self.elo_changes = [None, None];
        self.diffs = [None, None];
        self.has_game_date = false;
        self.elos = [None, None];
    }

    /// Appends `value` of tag `id` to `out`, as a mark where one applies
    /// (not the nul that ends it), and the mark's number to `numbers`.
    pub(crate) fn encode(
        &mut self,
        id: usize,
        value: &[u8],
        out: &mut Vec<u8>,
        numbers: &mut BinaryEncoder,
    ) {
        // A mark and its number.
        let mark: Option<(u8, Option<i64>)> = match self.roles[id] {
            Role::Player(_) => self.recent.iter().position(|n| n == value).map(|i| {
                out.extend_from_slice(&[RECENT, i as u8 + 1]);
                (0, None)
            }),
            Role::Elo(side) => {
                let last = self.players[side].as_ref().and_then(|p| self.elo.get(p));
                let v = number(value);
                if last == Some(value) {
                    Some((PLAYER_ELO, None))
                } else if let Some(v) = v {
                    last.and_then(number)
                        .map(|l| v - l)
                        .filter(|d| d.abs() < MAX_ELO_STEP)
                        .map(|d| (ELO_STEP, Some(d)))
                        .or_else(|| self.elo_reference(side).map(|r| (ELO_NEAR, Some(v - r))))
                } else {
                    None
                }
            }
            Role::Date => {
                if self.has_game_date && self.game_date == value {
                    Some((DATE_AS_GAME, None))
                } else if let Some(k) = self.recent_value(id, value) {
                    Some((RECENT_VALUE, Some(k)))
                } else {
                    self.last[id]
                        .as_deref()
                        .and_then(|last| Some(day_number(value)? - day_number(last)?))
                        .filter(|&d| d != 0)
                        .map(|d| (DATE_STEP, Some(d)))
                }
            }
            Role::Round => self.last[id]
                .as_deref()
                .and_then(next_round)
                .and_then(|n| value.strip_prefix(n.as_slice()))
                .filter(|rest| !rest.first().is_some_and(u8::is_ascii_digit))
                .map(|rest| {
                    out.push(NEXT_ROUND);
                    out.extend_from_slice(rest);
                    (0, None)
                }),
            Role::Time => self.last[id]
                .as_deref()
                .and_then(|last| Some(around_the_clock(seconds(value)? - seconds(last)?)))
                .filter(|&d| d != 0)
                .map(|d| (TIME_STEP, Some(d))),
            Role::Diff(side) => {
                let v = parse_signed(value);
                if self.elo_changes[side].is_some() && self.elo_changes[side] == v {
                    Some((DIFF_FROM_ELOS, None))
                } else if self.diffs[1 - side].is_some_and(|d| v == Some(-d)) {
                    Some((MIRROR_DIFF, None))
                } else {
                    v.map(|v| (DIFF_STEP, Some(v - self.diff_reference(side))))
                }
            }
            Role::Site if let Some(n) = lichess_id(value) => {
                out.push(LICHESS_ID);
                self.coded = true;
                encode_low(numbers, n, ID_BITS);
                Some((0, None))
            }
            Role::Other | Role::Opening(_) | Role::Site => self
                .recent_value(id, value)
                .map(|k| (RECENT_VALUE, Some(k))),
        };
        match mark {
            // Written above.
            Some((0, _)) => {}
            Some((m, d)) => {
                out.push(m);
                if let Some(d) = d {
                    self.coded = true;
                    let coder = self.number_coder(m, id);
                    coder.encode(numbers, d);
                }
            }
            None if self.last[id].as_deref() == Some(value) => out.push(REPEAT),
            None => {
                if value.first().is_some_and(|&b| self.is_mark(b)) {
                    out.push(ESCAPE);
                }
                out.extend_from_slice(value);
            }
        }
        self.update(id, value);
    }

    /// The Elo that an [`ELO_NEAR`] on `side` steps from: the other side's
    /// in this game, else the other player's last one, else the block's
    /// last (players are paired near their ratings).
    fn elo_reference(&self, side: usize) -> Option<i64> {
        self.elos[1 - side]
            .or_else(|| {
                let p = self.players[1 - side].as_ref()?;
                number(self.elo.get(p)?)
            })
            .or(self.last_elo)
    }

    /// The rating change that a [`DIFF_STEP`] on `side` steps from: the
    /// other side's change in this game, negated, else 0. (The change that
    /// the other player's Elos give, where it is not given yet, was tried:
    /// it cost 900 bytes more on a lichess account's 47,245 games.)
    fn diff_reference(&self, side: usize) -> i64 {
        -self.diffs[1 - side].unwrap_or(0)
    }

    /// Whether [`encode`](TagState::encode) has coded a number: a block
    /// without one stores an empty `tag-numbers` column.
    pub(crate) fn coded_numbers(&self) -> bool {
        self.coded
    }

    /// `k` when `value` is the `k`-th most recent different value of tag
    /// `id`, from 1 ([`RECENT_VALUE`]; 0 is [`REPEAT`]).
    fn recent_value(&self, id: usize, value: &[u8]) -> Option<i64> {
        self.values[id]
            .iter()
            .position(|v| v == value)
            .filter(|&k| k > 0)
            .map(|k| k as i64)
    }

    /// The probabilities of the number of mark `m` on tag `id`.
    fn number_coder(&mut self, m: u8, id: usize) -> &mut Number {
        let n = &mut self.numbers;
        match m {
            TIME_STEP => &mut n.time,
            ELO_STEP => &mut n.elo_step,
            ELO_NEAR => &mut n.elo_near,
            DIFF_STEP => &mut n.diff,
            DATE_STEP => &mut n.date,
            _ => &mut n.recent[id],
        }
    }

    /// Whether tag `id` (`ECO` or `Opening`) can be stored as the value
    /// the moves give.
    pub(crate) fn predicts(&self, id: usize) -> Option<usize> {
        match self.roles[id] {
            Role::Opening(k) => Some(k),
            _ => None,
        }
    }

    /// Appends the mark of the value the moves give, for a tag that
    /// [`predicts`](TagState::predicts) (no state changes).
    pub(crate) fn encode_predicted(&self, out: &mut Vec<u8>) {
        out.push(PREDICTED);
    }

    /// Whether the tags may carry the opening's label ([`Marks::BandLabels`]).
    pub(crate) fn codes_labels(&self) -> bool {
        self.marks == Marks::BandLabels
    }

    /// Appends the mark of the value the game's label gives, for a tag
    /// that [`predicts`](TagState::predicts) in a block that
    /// [`codes_labels`](TagState::codes_labels) (no state changes).
    pub(crate) fn encode_labelled(&self, out: &mut Vec<u8>) {
        out.push(LABELLED);
    }

    /// `Some(0)` (`ECO`) or `Some(1)` (`Opening`) when tag `id` is stored
    /// as the value the game's label gives; the state does not change.
    ///
    /// # Errors
    ///
    /// The mark on another tag.
    pub(crate) fn labelled(&self, id: usize, stored: &[u8]) -> Result<Option<usize>, String> {
        self.opening_mark(id, stored, LABELLED, Marks::BandLabels)
            .map_err(|()| "an opening label mark on another tag".into())
    }

    /// Codes the opening's `label` into `numbers` (the `tag-numbers`
    /// column), with a game's first [`LABELLED`] mark.
    pub(crate) fn encode_label(&mut self, label: u32, numbers: &mut BinaryEncoder) {
        self.label_prior()
            .expect("a block that codes labels has the prior")
            .encode(label, numbers);
        self.coded = true;
    }

    /// The prior that this game's label is coded with: that of the game's
    /// rating band so far.
    fn label_prior(&self) -> Option<&'static crate::opening::LabelPrior> {
        self.openings
            .band_priors()
            .map(|p| p.band(crate::opening::rating_band(self.elos)))
    }

    /// Codes the ply of the position that names the game's opening, `ply`
    /// (1 to 40), after its label, where the block's table knows the plies
    /// of its lines: mostly it is the ply of one of the lines
    /// of the label.
    pub(crate) fn encode_ply(&mut self, label: u32, ply: usize, numbers: &mut BinaryEncoder) {
        let lines = self.openings.line_plies(label);
        if lines.is_empty() {
            return;
        }
        let at = lines.iter().position(|&p| usize::from(p) == ply);
        numbers.encode_bit(&mut self.ply_is_line, at.is_some());
        match at {
            Some(i) if lines.len() > 1 => {
                let n = usize::BITS - (lines.len() - 1).leading_zeros();
                numbers.encode_tree(&mut self.ply_line, n.min(3), i.min(7) as u32);
                if i >= 7 {
                    numbers.encode_direct((i - 7) as u32, 8);
                }
            }
            Some(_) => {}
            None => numbers.encode_direct(ply as u32 - 1, 6),
        }
    }

    /// Decodes the ply that [`encode_ply`](TagState::encode_ply) coded, or
    /// `None` where the block's table does not code plies.
    ///
    /// # Errors
    ///
    /// A ply out of the table's range (damaged data).
    pub(crate) fn decode_ply(
        &mut self,
        label: u32,
        numbers: &mut BinaryDecoder<'_>,
    ) -> Result<Option<usize>, String> {
        let lines = self.openings.line_plies(label);
        if lines.is_empty() {
            return Ok(None);
        }
        let ply = if numbers.decode_bit(&mut self.ply_is_line) {
            let i = if lines.len() > 1 {
                let n = usize::BITS - (lines.len() - 1).leading_zeros();
                let i = numbers.decode_tree(&mut self.ply_line, n.min(3)) as usize;
                if i >= 7 {
                    7 + numbers.decode_direct(8) as usize
                } else {
                    i
                }
            } else {
                0
            };
            usize::from(*lines.get(i).ok_or("a bad opening ply")?)
        } else {
            numbers.decode_direct(6) as usize + 1
        };
        if ply > crate::opening::MAX_PLY {
            return Err("a bad opening ply".into());
        }
        Ok(Some(ply))
    }

    /// Decodes an opening's label from `numbers`, as
    /// [`encode_label`](TagState::encode_label) coded it.
    ///
    /// # Errors
    ///
    /// A label the table does not have (damaged data).
    pub(crate) fn decode_label(&self, numbers: &mut BinaryDecoder<'_>) -> Result<u32, String> {
        self.label_prior()
            .and_then(|p| p.decode(numbers))
            .ok_or_else(|| "a bad opening label".into())
    }

    /// `Some(0)` (`ECO`) or `Some(1)` (`Opening`) when tag `id` is stored
    /// as the value the moves give, which the caller fills in; the state
    /// does not change.
    ///
    /// # Errors
    ///
    /// The mark on another tag.
    pub(crate) fn predicted(&self, id: usize, stored: &[u8]) -> Result<Option<usize>, String> {
        self.opening_mark(id, stored, PREDICTED, Marks::Ids)
            .map_err(|()| "an opening mark on another tag".into())
    }

    /// `Some(k)` for tag `id`, an opening tag (`k`: 0 `ECO`, 1 `Opening`),
    /// stored as `mark` in a block with the marks `since` or later; `Err`
    /// for the mark on another tag.
    fn opening_mark(
        &self,
        id: usize,
        stored: &[u8],
        mark: u8,
        since: Marks,
    ) -> Result<Option<usize>, ()> {
        if self.marks < since || stored != [mark] {
            return Ok(None);
        }
        match self.roles.get(id) {
            Some(&Role::Opening(k)) => Ok(Some(k)),
            _ => Err(()),
        }
    }

    /// The value of tag `id` stored as `stored`, with the mark's number from
    /// `numbers`.
    pub(crate) fn decode(
        &mut self,
        id: usize,
        stored: &[u8],
        numbers: &mut BinaryDecoder<'_>,
    ) -> Result<&[u8], String> {
        let role = *self.roles.get(id).ok_or("tag id out of range")?;
        // The value is built in the buffer of the last value of its name,
        // where it stays: a game that is skipped costs no allocation.
        let last = self.last[id].take();
        let had_last = last.is_some();
        let mut value = last.unwrap_or_default();
        let listed = match self.build(role, id, stored, had_last, &mut value, numbers) {
            Ok(at) => at,
            Err(e) => {
                // Untouched: the state stays as it was.
                self.last[id] = had_last.then_some(value);
                return Err(e);
            }
        };
        self.update_others(id, &value, listed);
        Ok(self.last[id].insert(value))
    }

    /// Whether a game's moves are decoded with the values of tag `id`, or
    /// with values coded from them: the players' names and Elos (the
    /// model's context), `TimeControl` (the clocks'), `FEN` and
    /// `Variant` (the start).
    pub(crate) fn is_read_by_moves(&self, id: usize) -> bool {
        self.read_by_moves.get(id).copied().unwrap_or(true)
    }

    /// Reads past the value of tag `id` stored as `stored`, a tag that a
    /// game's moves are not decoded with ([`TagState::is_read_by_moves`];
    /// [`TagState::decode`] the others): the numbers of its mark are taken
    /// from `numbers`, which codes them in turn with every other tag's,
    /// and nothing else is made or kept. The tag's last and recent values
    /// go stale, so a decode that skims a tag once asks for no value of it
    /// after (a decode that wants the moves of games alone, not their
    /// tags).
    ///
    /// # Errors
    ///
    /// A mark that its tag cannot have, or a bad number (damaged data).
    pub(crate) fn skim(
        &mut self,
        id: usize,
        stored: &[u8],
        numbers: &mut BinaryDecoder<'_>,
    ) -> Result<(), String> {
        debug_assert!(
            self.read_by_moves.get(id) != Some(&true),
            "a tag that moves read"
        );
        let role = *self.roles.get(id).ok_or("tag id out of range")?;
        match *stored {
            [DIFF_STEP] if matches!(role, Role::Diff(_)) => {
                self.numbers.diff.decode(numbers)?;
            }
            [DATE_STEP] if role == Role::Date => {
                self.numbers.date.decode(numbers)?;
            }
            [LICHESS_ID] if role == Role::Site => {
                decode_low(numbers, ID_BITS);
            }
            [RECENT_VALUE]
                if matches!(
                    role,
                    Role::Other | Role::Opening(_) | Role::Date | Role::Site
                ) =>
            {
                self.numbers.recent[id].decode(numbers)?;
            }
            [TIME_STEP] if role == Role::Time => {
                self.numbers.time.decode(numbers)?;
            }
            // The marks without numbers that such a tag may have.
            [REPEAT] | [ESCAPE, ..] => {}
            [DATE_AS_GAME] if role == Role::Date => {}
            [NEXT_ROUND, ..] if role == Role::Round => {}
            [DIFF_FROM_ELOS | MIRROR_DIFF] if matches!(role, Role::Diff(_)) => {}
            [b, ..] if self.is_mark(b) => return Err(format!("bad tag value mark {b}")),
            _ => {}
        }
        Ok(())
    }

    /// Turns `value`, the last value of its name (empty when `had_last` is
    /// false), into the value that `stored` codes, and says where in its
    /// list of recent names or values it is, where the mark says; on an
    /// error it is left as it was.
    fn build(
        &mut self,
        role: Role,
        id: usize,
        stored: &[u8],
        had_last: bool,
        value: &mut Vec<u8>,
        numbers: &mut BinaryDecoder<'_>,
    ) -> Result<Listed, String> {
        let mut at = Listed::Unknown;
        match *stored {
            [REPEAT] if had_last => {}
            [REPEAT] => return Err("a tag value repeats nothing".into()),
            [ESCAPE, ref rest @ ..] => {
                replace(value, rest);
                at = Listed::No;
            }
            [RECENT, i] if matches!(role, Role::Player(_)) => {
                let name = self
                    .recent
                    .get(usize::from(i).wrapping_sub(1))
                    .ok_or("a player mark points past the names seen")?;
                replace(value, name);
                at = Listed::At(usize::from(i) - 1);
            }
            [mark @ (ELO_STEP | ELO_NEAR)] if matches!(role, Role::Elo(_)) => {
                let elo = self.coded_elo(mark, usize::from(role == Role::Elo(1)), numbers)?;
                value.clear();
                push_digits(value, elo.unsigned_abs(), 1);
            }
            [DIFF_STEP] if matches!(role, Role::Diff(_)) => {
                let side = usize::from(role == Role::Diff(1));
                let d = self.numbers.diff.decode(numbers)?;
                *value = signed(self.diff_reference(side) + d);
            }
            [DATE_AS_GAME] if role == Role::Date => {
                if !self.has_game_date {
                    return Err("a date mark without a date in the game".into());
                }
                replace(value, &self.game_date);
            }
            [DATE_STEP] if role == Role::Date => {
                let day = had_last
                    .then(|| day_number(value))
                    .flatten()
                    .ok_or("a date step after a value that is not a date")?;
                let d = self.numbers.date.decode(numbers)?;
                *value = date_of(day + d).ok_or("a date step out of range")?;
            }
            [LICHESS_ID] if role == Role::Site => {
                lichess_url(decode_low(numbers, ID_BITS), value)?;
            }
            [RECENT_VALUE]
                if matches!(
                    role,
                    Role::Other | Role::Opening(_) | Role::Date | Role::Site
                ) =>
            {
                let k = self.numbers.recent[id].decode(numbers)?;
                let v = usize::try_from(k)
                    .ok()
                    .filter(|&k| k > 0)
                    .and_then(|k| self.values[id].get(k))
                    .ok_or("a recent-value mark points past the values seen")?;
                replace(value, v);
                at = usize::try_from(k).map_or(Listed::Unknown, Listed::At);
            }
            [PLAYER_ELO] => match role {
                Role::Elo(side) => {
                    let elo = self.players[side]
                        .as_ref()
                        .and_then(|p| self.elo.get(p))
                        .ok_or("an Elo mark without the player's Elo")?;
                    replace(value, elo);
                }
                _ => return Err("an Elo mark on another tag".into()),
            },
            [NEXT_ROUND, ref rest @ ..] if role == Role::Round => {
                if !had_last {
                    return Err("a round mark without a round".into());
                }
                let mut v =
                    next_round(value).ok_or("a round mark after a round without a number")?;
                v.extend_from_slice(rest);
                *value = v;
            }
            [TIME_STEP] if role == Role::Time => {
                let last = had_last
                    .then(|| seconds(value))
                    .flatten()
                    .ok_or("a time mark after a value that is not a time")?;
                let d = self.numbers.time.decode(numbers)?;
                if d.abs() > DAY {
                    return Err("a time mark without a step".into());
                }
                *value = time_of((last + d).rem_euclid(DAY));
            }
            [mark @ (DIFF_FROM_ELOS | MIRROR_DIFF)] if matches!(role, Role::Diff(_)) => {
                let side = usize::from(role == Role::Diff(1));
                let change = if mark == DIFF_FROM_ELOS {
                    self.elo_changes[side].ok_or("a rating change mark without Elos")?
                } else {
                    -self.diffs[1 - side].ok_or("a rating change mark without the other")?
                };
                *value = signed(change);
            }
            [b, ..] if self.is_mark(b) => return Err(format!("bad tag value mark {b}")),
            _ => {
                replace(value, stored);
                at = Listed::No;
            }
        }
        Ok(at)
    }

    /// The Elo of side `side` that mark `mark` (`ELO_STEP` or `ELO_NEAR`)
    /// codes.
    fn coded_elo(
        &mut self,
        mark: u8,
        side: usize,
        numbers: &mut BinaryDecoder<'_>,
    ) -> Result<i64, String> {
        if mark == ELO_STEP {
            let last = self.players[side]
                .as_ref()
                .and_then(|p| self.elo.get(p))
                .and_then(number)
                .ok_or("an Elo step without the player's Elo")?;
            let d = self.numbers.elo_step.decode(numbers)?;
            if d.abs() >= MAX_ELO_STEP {
                return Err("an Elo step that is not a step".into());
            }
            let elo = last + d;
            if elo < 0 {
                return Err("an Elo step out of range".into());
            }
            return Ok(elo);
        }
        let last = self
            .elo_reference(side)
            .ok_or("an Elo mark without an Elo before")?;
        let elo = last + self.numbers.elo_near.decode(numbers)?;
        if !(0..1_000_000_000).contains(&elo) {
            return Err("an Elo mark out of range".into());
        }
        Ok(elo)
    }

    fn is_mark(&self, b: u8) -> bool {
        match self.marks {
            Marks::Ids => (REPEAT..=LICHESS_ID).contains(&b),
            Marks::BandLabels => (REPEAT..=LABELLED).contains(&b),
        }
    }

    fn update(&mut self, id: usize, value: &[u8]) {
        if self.last[id].as_deref() != Some(value) {
            set(&mut self.last[id], value);
        }
        self.update_others(id, value, Listed::Unknown);
    }

    /// [`update`](TagState::update) but for the last value of the name
    /// (`at`: where the value is in its list of recent names or values,
    /// where that is known; each is there once).
    fn update_others(&mut self, id: usize, value: &[u8], at: Listed) {
        let role = self.roles[id];
        match role {
            Role::Player(side) => {
                match at.or_find(|| self.recent.iter().position(|n| n == value)) {
                    Some(i) => {
                        if let Some(name) = self.recent.remove(i) {
                            self.recent.push_front(name);
                        }
                    }
                    None => {
                        // The name that drops out lends its buffer.
                        let mut name = if self.recent.len() == RECENT_NAMES {
                            self.recent.pop_back().unwrap_or_default()
                        } else {
                            Vec::new()
                        };
                        replace(&mut name, value);
                        self.recent.push_front(name);
                    }
                }
                set(&mut self.players[side], value);
            }
            Role::Elo(side) => {
                if let Some(p) = &self.players[side] {
                    // The player's Elo changed in its buffer where it had
                    // one.
                    match self.elo.find(p) {
                        Some(i) => {
                            self.elo_changes[side] = number(self.elo.elo(i))
                                .zip(number(value))
                                .map(|(b, v)| b - v);
                            self.elo.set(i, value);
                        }
                        None => {
                            self.elo_changes[side] = None;
                            self.elo.insert(p, value);
                        }
                    }
                }
                if let Some(elo) = number(value) {
                    self.last_elo = Some(elo);
                    self.elos[side] = Some(elo);
                }
            }
            Role::Other | Role::Opening(_) | Role::Date | Role::Site => {
                if role == Role::Date && !self.has_game_date {
                    replace(&mut self.game_date, value);
                    self.has_game_date = true;
                }
                let list = &mut self.values[id];
                if list.first().is_some_and(|v| v == value) {
                    // A repeat: the list stays as it is.
                    return;
                }
                match at.or_find(|| list.iter().position(|v| v == value)) {
                    Some(k) => list[..=k].rotate_right(1),
                    None => {
                        // The value that drops out lends its buffer.
                        let mut v = if list.len() == RECENT_VALUES {
                            list.pop().unwrap_or_default()
                        } else {
                            Vec::new()
                        };
                        replace(&mut v, value);
                        list.insert(0, v);
                    }
                }
            }
            Role::Diff(side) => {
                self.diffs[side] = parse_signed(value);
            }
            Role::Round | Role::Time => {}
        }
    }
}

/// The seconds since midnight of an `HH:MM:SS` time.
fn seconds(time: &[u8]) -> Option<i64> {
    let [h0, h1, b':', m0, m1, b':', s0, s1] = *time else {
        return None;
    };
    let two = |a: u8, b: u8| {
        (a.is_ascii_digit() && b.is_ascii_digit())
            .then(|| i64::from(a - b'0') * 10 + i64::from(b - b'0'))
    };
    let (h, m, s) = (two(h0, h1)?, two(m0, m1)?, two(s0, s1)?);
    (h < 24 && m < 60 && s < 60).then_some(h * 3600 + m * 60 + s)
}

/// The `HH:MM:SS` time of `seconds` since midnight (below a day).
fn time_of(seconds: i64) -> Vec<u8> {
    let mut out = Vec::with_capacity(8);
    push_digits(&mut out, (seconds / 3600).unsigned_abs(), 2);
    out.push(b':');
    push_digits(&mut out, (seconds / 60 % 60).unsigned_abs(), 2);
    out.push(b':');
    push_digits(&mut out, (seconds % 60).unsigned_abs(), 2);
    out
}

/// A decimal number of up to nine digits without leading zeros (an Elo).
fn number(text: &[u8]) -> Option<i64> {
    if !(1..=9).contains(&text.len()) || (text.len() > 1 && text[0] == b'0') {
        return None;
    }
    text.iter().try_fold(0i64, |n, &c| {
        c.is_ascii_digit().then(|| n * 10 + i64::from(c - b'0'))
    })
}

/// A rating change as lichess writes it: `+7`, `-12`, `+0`.
fn signed(n: i64) -> Vec<u8> {
    format!("{}{}", if n < 0 { '-' } else { '+' }, n.unsigned_abs()).into_bytes()
}

/// The number of a rating change that [`signed`] writes back the same.
fn parse_signed(text: &[u8]) -> Option<i64> {
    let (&sign, digits) = text.split_first()?;
    let n = number(digits)?;
    let n = match sign {
        b'+' => n,
        b'-' if n != 0 => -n,
        _ => return None,
    };
    Some(n)
}

/// Sets `slot` to `value`, in the buffer it holds where it holds one (the
/// state changes with most games: one allocation fewer each time).
fn set(slot: &mut Option<Vec<u8>>, value: &[u8]) {
    match slot {
        Some(v) => replace(v, value),
        None => *slot = Some(value.to_vec()),
    }
}

/// Makes `buffer` hold `bytes`, in the room it has.
fn replace(buffer: &mut Vec<u8>, bytes: &[u8]) {
    buffer.clear();
    buffer.extend_from_slice(bytes);
}

/// The decimal number that begins `round`, plus one (numbers of up to
/// nine digits, without leading zeros).
fn next_round(round: &[u8]) -> Option<Vec<u8>> {
    let digits = round.iter().take_while(|b| b.is_ascii_digit()).count();
    if digits == 0 || digits > 9 || (digits > 1 && round[0] == b'0') {
        return None;
    }
    let n: u64 = std::str::from_utf8(&round[..digits]).ok()?.parse().ok()?;
    Some((n + 1).to_string().into_bytes())
}

/// Days since 1970-01-01 of a `YYYY.MM.DD` date (a real day of the
/// proleptic Gregorian calendar), or `None`.
fn day_number(date: &[u8]) -> Option<i64> {
    let [y0, y1, y2, y3, b'.', m0, m1, b'.', d0, d1] = *date else {
        return None;
    };
    let digits = |ds: &[u8]| -> Option<i64> {
        ds.iter().try_fold(0i64, |acc, &c| {
            c.is_ascii_digit().then(|| acc * 10 + i64::from(c - b'0'))
        })
    };
    let (y, m, d) = (
        digits(&[y0, y1, y2, y3])?,
        digits(&[m0, m1])?,
        digits(&[d0, d1])?,
    );
    if !(1..=12).contains(&m) || d < 1 || d > days_in_month(y, m) {
        return None;
    }
    // Howard Hinnant's days_from_civil.
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    Some(era * 146_097 + doe - 719_468)
}

fn days_in_month(y: i64, m: i64) -> i64 {
    match m {
        2 if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// The `YYYY.MM.DD` date of a day number (years 0 to 9999 only).
fn date_of(days: i64) -> Option<Vec<u8>> {
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    (0..=9999).contains(&y).then(|| {
        let mut out = Vec::with_capacity(10);
        push_digits(&mut out, y.unsigned_abs(), 4);
        out.push(b'.');
        push_digits(&mut out, m.unsigned_abs(), 2);
        out.push(b'.');
        push_digits(&mut out, d.unsigned_abs(), 2);
        out
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 68: the players' Elos in one buffer give what a map of owned
    /// names gives, whatever the order of the players, the lengths of
    /// their names and of their Elos (an Elo longer than the one before it
    /// moves to the end of the buffer).
    #[test]
    fn regression_issue_68_player_elos_are_a_map_of_names() {
        let mut elos = PlayerElos::default();
        let mut reference: HashMap<Vec<u8>, Vec<u8>> = HashMap::new();
        let mut seed = 68u64;
        for step in 0..20_000u64 {
            seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            let name = format!(
                "p{}{}",
                (seed >> 33) % 3_000,
                "x".repeat((seed >> 20) as usize % 40)
            );
            let elo = if step % 7 == 0 {
                b"?".to_vec()
            } else {
                ((seed >> 40) % 100_000).to_string().into_bytes()
            };
            match elos.find(name.as_bytes()) {
                Some(i) => elos.set(i, &elo),
                None => elos.insert(name.as_bytes(), &elo),
            }
            reference.insert(name.into_bytes(), elo);
            if step % 1_000 == 0 {
                for (n, e) in &reference {
                    assert_eq!(elos.get(n), Some(e.as_slice()));
                }
                assert_eq!(elos.get(b"nobody"), None);
            }
        }
        assert_eq!(elos.entries.len(), reference.len());
    }

    #[test]
    fn numbers_are_those_written_back_the_same() {
        for (text, n) in [
            (&b"0"[..], Some(0)),
            (b"2155", Some(2155)),
            (b"999999999", Some(999_999_999)),
            (b"1000000000", None),
            (b"07", None),
            (b"", None),
            (b"21a5", None),
            (b"-5", None),
        ] {
            assert_eq!(number(text), n, "{}", String::from_utf8_lossy(text));
            if let Some(n) = n {
                assert_eq!(n.to_string().as_bytes(), text);
            }
        }
        assert_eq!(time_of(86_399), b"23:59:59");
        for (text, n) in [
            (&b"+7"[..], Some(7)),
            (b"-12", Some(-12)),
            (b"+0", Some(0)),
            (b"-0", None),
            (b"+07", None),
            (b"7", None),
            (b"+", None),
        ] {
            assert_eq!(parse_signed(text), n, "{}", String::from_utf8_lossy(text));
            if let Some(n) = n {
                assert_eq!(signed(n), text);
            }
        }
    }

    #[test]
    fn dates_step_by_days_across_months_and_leap_years() {
        let days = |a: &[u8], b: &[u8]| Some(day_number(b)? - day_number(a)?);
        assert_eq!(days(b"2014.03.01", b"2014.03.02"), Some(1));
        assert_eq!(days(b"2016.02.28", b"2016.03.01"), Some(2));
        assert_eq!(days(b"2015.02.28", b"2015.03.01"), Some(1));
        assert_eq!(days(b"1999.12.31", b"2000.01.01"), Some(1));
        assert_eq!(days(b"2014.03.02", b"2014.03.01"), Some(-1));
        assert_eq!(days(b"2014.01.01", b"2015.01.01"), Some(365));
        assert_eq!(days(b"2014.03.??", b"2014.03.02"), None);
        assert_eq!(days(b"2015.02.28", b"2015.02.29"), None);
        for day in
            (day_number(b"0000.01.01").unwrap()..day_number(b"9999.12.31").unwrap()).step_by(97)
        {
            let date = date_of(day).unwrap();
            assert_eq!(
                day_number(&date),
                Some(day),
                "{}",
                String::from_utf8_lossy(&date)
            );
        }
    }

    fn round_trip(marks: Marks, games: &[&[(&str, &str)]]) -> usize {
        stored_forms(marks, games).0
    }

    /// The bytes the values take, the tag-numbers column's included, and
    /// each value as the column stores it; after checking that they decode.
    fn stored_forms(marks: Marks, games: &[&[(&str, &str)]]) -> (usize, Vec<Vec<u8>>) {
        let mut names: Vec<&str> = Vec::new();
        let mut enc = TagState::new(marks);
        let mut numbers = BinaryEncoder::new();
        let mut stored = Vec::new();
        for game in games {
            enc.start_game();
            for &(name, value) in *game {
                let id = names.iter().position(|&n| n == name).unwrap_or_else(|| {
                    names.push(name);
                    enc.add_name(name.as_bytes());
                    names.len() - 1
                });
                let mut out = Vec::new();
                enc.encode(id, value.as_bytes(), &mut out, &mut numbers);
                stored.push((id, out));
            }
        }
        let mut dec = TagState::new(marks);
        for n in &names {
            dec.add_name(n.as_bytes());
        }
        let numbers = if enc.coded_numbers() {
            numbers.finish()
        } else {
            Vec::new()
        };
        let mut dec_numbers = BinaryDecoder::new(&numbers);
        let mut items = stored.iter();
        let mut size = numbers.len();
        for game in games {
            dec.start_game();
            for &(_, value) in *game {
                let (id, s) = items.next().unwrap();
                size += s.len();
                assert_eq!(
                    dec.decode(*id, s, &mut dec_numbers).unwrap(),
                    value.as_bytes()
                );
            }
        }
        assert!(numbers.is_empty() || !dec_numbers.overrun());
        // Skimmed, the tags that moves are decoded with come back the same
        // (the numbers of the others taken in turn: an Elo's would not).
        let mut skimmer = TagState::new(marks);
        for n in &names {
            skimmer.add_name(n.as_bytes());
        }
        let mut skim_numbers = BinaryDecoder::new(&numbers);
        let mut items = stored.iter();
        for game in games {
            skimmer.start_game();
            for &(name, value) in *game {
                let (id, s) = items.next().unwrap();
                if skimmer.is_read_by_moves(*id) {
                    let back = skimmer.decode(*id, s, &mut skim_numbers).unwrap();
                    assert_eq!(back, value.as_bytes(), "{name}");
                } else {
                    skimmer.skim(*id, s, &mut skim_numbers).unwrap();
                }
            }
        }
        (size, stored.into_iter().map(|(_, s)| s).collect())
    }

    #[test]
    fn marks_round_trip() {
        let games: &[&[(&str, &str)]] = &[
            &[
                ("White", "Tal"),
                ("Black", "\u{1}x"),
                ("WhiteElo", "2700"),
                ("Date", "1960.01.01"),
            ],
            &[
                ("Black", "Tal"),
                ("White", "\u{3}"),
                ("BlackElo", "2700"),
                ("Date", "1960.01.03"),
            ],
            &[
                ("BlackElo", "2710"),
                ("Black", "Tal"),
                ("White", "Botvinnik"),
                ("WhiteElo", "\u{4}"),
            ],
            &[
                ("White", "Tal"),
                ("WhiteElo", "2710"),
                ("Date", "1960.01.03"),
                ("Date", "\u{5}\u{1}"),
            ],
            &[
                ("White", ""),
                ("Black", ""),
                ("WhiteElo", ""),
                ("Date", ""),
                ("Round", "9.1"),
            ],
            &[
                ("Round", "10.2"),
                ("Round", "11"),
                ("Round", "123"),
                ("Round", "\u{6}"),
            ],
            &[
                ("Round", "07"),
                ("Round", "8"),
                ("Round", "9?"),
                ("Round", ""),
            ],
        ];
        let full: usize = games
            .iter()
            .flat_map(|g| g.iter())
            .map(|(_, v)| v.len())
            .sum();
        let marked = round_trip(Marks::Ids, games);
        assert!(marked < full, "{marked} {full}");
    }

    /// Issue 40: a game's label is coded with the prior of the
    /// rating band that its `WhiteElo` and `BlackElo` values before the
    /// label give, the same when encoding and decoding: the commonest
    /// opening of the 2200+ band costs less after master Elos (or one Elo
    /// of 2300) than after a beginner's, and Elos after the label do not
    /// count.
    #[test]
    fn regression_issue_40_labels_are_coded_with_their_rating_bands_prior() {
        let table = OpeningTable::lichess();
        let priors = table.band_priors().expect("the shipped priors");
        let labels = (0..).take_while(|&l| table.label(l).is_some()).count() as u32;
        let repeated = |band: usize, l: u32| {
            let mut enc = BinaryEncoder::new();
            for _ in 0..64 {
                priors.band(band).encode(l, &mut enc);
            }
            enc.finish().len()
        };
        let label = (0..labels).min_by_key(|&l| repeated(3, l)).unwrap();
        assert!(repeated(3, label) < repeated(0, label));
        type Tags<'a> = &'a [(&'a str, &'a str)];
        // Each game: its tags before the label, then after it.
        let games: [(Tags, Tags); 5] = [
            (&[("WhiteElo", "2650"), ("BlackElo", "2700")], &[]),
            (&[("WhiteElo", "1000"), ("BlackElo", "1100")], &[]),
            (&[("BlackElo", "2300")], &[]),
            (&[], &[]),
            (&[], &[("WhiteElo", "2650"), ("BlackElo", "2700")]),
        ];
        let names = ["WhiteElo", "BlackElo"];
        let id = |name: &str| names.iter().position(|&n| n == name).unwrap();
        // The tag-numbers column and the stored values of `games`, with
        // their labels or without.
        let code = |games: &[(Tags, Tags)], labels: bool| {
            let mut enc = TagState::new(Marks::BandLabels);
            for n in names {
                enc.add_name(n.as_bytes());
            }
            let mut numbers = BinaryEncoder::new();
            let mut stored = Vec::new();
            for (before, after) in games {
                enc.start_game();
                for &(n, v) in *before {
                    let mut out = Vec::new();
                    enc.encode(id(n), v.as_bytes(), &mut out, &mut numbers);
                    stored.push(out);
                }
                if labels {
                    enc.encode_label(label, &mut numbers);
                }
                for &(n, v) in *after {
                    let mut out = Vec::new();
                    enc.encode(id(n), v.as_bytes(), &mut out, &mut numbers);
                    stored.push(out);
                }
            }
            (numbers.finish(), stored)
        };
        let (numbers, stored) = code(&games, true);
        let mut dec = TagState::new(Marks::BandLabels);
        for n in names {
            dec.add_name(n.as_bytes());
        }
        let mut input = BinaryDecoder::new(&numbers);
        let mut stored = stored.iter();
        for (before, after) in &games {
            dec.start_game();
            for &(n, v) in *before {
                let s = stored.next().unwrap();
                assert_eq!(dec.decode(id(n), s, &mut input).unwrap(), v.as_bytes());
            }
            assert_eq!(dec.decode_label(&mut input).unwrap(), label);
            for &(n, v) in *after {
                let s = stored.next().unwrap();
                assert_eq!(dec.decode(id(n), s, &mut input).unwrap(), v.as_bytes());
            }
        }
        // What 200 labels cost in each game's context.
        let cost = |g: usize| {
            let many = vec![games[g]; 200];
            code(&many, true).0.len() - code(&many, false).0.len()
        };
        let near = |a: usize, b: usize| a.abs_diff(b) <= 2;
        let (masters, beginners, one, none, late) = (cost(0), cost(1), cost(2), cost(3), cost(4));
        // (Games without Elos are mostly old master games: their prior is
        // much like the 2200+ band's.)
        assert!(
            masters + 20 < beginners && none + 20 < beginners,
            "{masters} {beginners} {none}"
        );
        assert!(
            near(one, masters),
            "{one} {masters}: one Elo of 2300 is 2200+"
        );
        assert!(
            near(late, none),
            "{late} {none}: Elos after the label do not count"
        );
    }

    #[test]
    fn times_elos_and_rating_changes_step_from_the_game_before() {
        // A lichess account's games, newest first; then values that no step
        // gives: a time that is not a time, an Elo with a `?`, a change
        // written `+07`, values that begin with a mark byte.
        let game = |white, black, time, elos: [&'static str; 2], diffs: [&'static str; 2]| {
            vec![
                ("White", white),
                ("Black", black),
                ("UTCTime", time),
                ("WhiteElo", elos[0]),
                ("BlackElo", elos[1]),
                ("WhiteRatingDiff", diffs[0]),
                ("BlackRatingDiff", diffs[1]),
            ]
        };
        let games = [
            game("me", "x", "00:01:10", ["2155", "2212"], ["+7", "-7"]),
            game("y", "me", "23:58:30", ["2171", "2148"], ["-6", "+7"]),
            game("me", "z", "23:55:00", ["2148", "1990"], ["+0", "-0"]),
            game("me", "z", "12:00", ["1500?", "1990"], ["+07", "\u{9}"]),
            game("w", "me", "\u{8}1", ["2100", "\u{b}+3"], ["+3", "\u{a}"]),
        ];
        let games: Vec<&[(&str, &str)]> = games.iter().map(Vec::as_slice).collect();
        let (_, stored) = stored_forms(Marks::Ids, &games);
        // Seven values a game.
        let mark = |game: usize, tag: usize| stored[game * 7 + tag].as_slice();
        assert_eq!(mark(0, 4), [ELO_NEAR], "near the other side's Elo");
        assert_eq!(mark(0, 5), [DIFF_STEP], "a step from nothing");
        assert_eq!(mark(0, 6), [MIRROR_DIFF]);
        assert_eq!(mark(1, 1), [RECENT, 3], "after y and x");
        assert_eq!(mark(1, 2), [TIME_STEP], "back across midnight");
        assert_eq!(mark(1, 3), [ELO_NEAR], "near the other player's last");
        assert_eq!(mark(1, 4), [ELO_STEP]);
        assert_eq!(mark(1, 5), [DIFF_STEP]);
        assert_eq!(mark(1, 6), [DIFF_FROM_ELOS]);
        assert_eq!(mark(2, 3), [PLAYER_ELO]);
        assert_eq!(mark(3, 2), b"12:00", "not a time");
        assert_eq!(mark(3, 3), b"1500?", "not an Elo");
        assert_eq!(mark(3, 5), b"+07", "not as lichess writes a change");
        assert_eq!(mark(4, 2)[0], ESCAPE);
        assert_eq!(mark(4, 4)[0], ESCAPE);
        assert_eq!(mark(4, 6)[0], ESCAPE);
    }

    #[test]
    fn dates_and_other_tags_come_back_from_recent_values() {
        let game = |event, date, termination| {
            vec![
                ("Event", event),
                ("Date", date),
                ("UTCDate", date),
                ("Termination", termination),
            ]
        };
        let games = [
            game("Rated Bullet game", "2022.05.26", "Normal"),
            game("Rated Blitz game", "2022.05.26", "Time forfeit"),
            game("Rated Bullet game", "2022.05.20", "Normal"),
            game("\u{10}x", "2022.05.26", "Normal"),
            game("Rated Blitz game", "2022.05.2?", "Time forfeit"),
        ];
        let games: Vec<&[(&str, &str)]> = games.iter().map(Vec::as_slice).collect();
        let (_, stored) = stored_forms(Marks::Ids, &games);
        let mark = |game: usize, tag: usize| stored[game * 4 + tag].as_slice();
        assert_eq!(mark(0, 1), b"2022.05.26");
        assert_eq!(mark(0, 2), [DATE_AS_GAME]);
        assert_eq!(mark(1, 0), b"Rated Blitz game");
        assert_eq!(mark(1, 1), [REPEAT]);
        assert_eq!(mark(1, 2), [DATE_AS_GAME]);
        assert_eq!(mark(2, 0), [RECENT_VALUE]);
        assert_eq!(mark(2, 1), [DATE_STEP]);
        assert_eq!(mark(2, 3), [RECENT_VALUE]);
        assert_eq!(mark(3, 0)[0], ESCAPE);
        assert_eq!(mark(3, 1), [RECENT_VALUE]);
        assert_eq!(mark(3, 3), [REPEAT]);
        assert_eq!(mark(4, 0), [RECENT_VALUE], "two values back");
        assert_eq!(mark(4, 1), b"2022.05.2?");
        assert_eq!(mark(4, 2), [DATE_AS_GAME]);
    }

    /// A lichess game's `Site` URL is a mark and its id 48 bits of
    /// `tag-numbers`; other sites and ids that are not eight letters and
    /// digits stay text (or other marks), and a `Site` mark byte at the
    /// start of a value is escaped.
    #[test]
    fn lichess_game_urls_are_numbers() {
        let games: Vec<Vec<(&str, &str)>> = [
            "https://lichess.org/DWpef5hg",
            "https://lichess.org/M7JqE6U0",
            "https://lichess.org/00000000",
            "https://lichess.org/zzzzzzzz",
            "https://lichess.org/DWpef5h",
            "https://lichess.org/DWpef5h-",
            "https://example.org/DWpef5hg",
            "https://lichess.org/M7JqE6U0",
            "\u{11}x",
        ]
        .iter()
        // Elos coded as numbers after each id: skimmed ids out of step
        // would give other Elos.
        .zip([
            "1500", "1523", "1490", "1611", "1502", "1555", "1580", "1499", "1500",
        ])
        .map(|(&site, elo)| vec![("Site", site), ("WhiteElo", elo)])
        .collect();
        let games: Vec<&[(&str, &str)]> = games.iter().map(Vec::as_slice).collect();
        let (_, stored) = stored_forms(Marks::Ids, &games);
        let stored: Vec<_> = stored.into_iter().step_by(2).collect();
        for (i, s) in stored[..4].iter().enumerate() {
            assert_eq!(s, &[LICHESS_ID], "game {i}");
        }
        assert_eq!(stored[4], b"https://lichess.org/DWpef5h");
        assert_eq!(stored[5], b"https://lichess.org/DWpef5h-");
        assert_eq!(stored[6], b"https://example.org/DWpef5hg");
        assert_eq!(stored[7], [LICHESS_ID]);
        assert_eq!(stored[8], b"\x02\x11x");
        let mut none = BinaryDecoder::new(&[]);
        // An id number of 62^8 or more is an error.
        let mut enc = BinaryEncoder::new();
        encode_low(&mut enc, 62u64.pow(8), ID_BITS);
        let bytes = enc.finish();
        let mut dec = TagState::new(Marks::Ids);
        dec.add_name(b"Site");
        dec.start_game();
        assert!(
            dec.decode(0, &[LICHESS_ID], &mut BinaryDecoder::new(&bytes))
                .is_err()
        );
        // The mark on another tag is an error too.
        dec.add_name(b"Event");
        assert!(dec.decode(1, &[LICHESS_ID], &mut none).is_err());
    }

    #[test]
    fn marks_without_what_they_need_are_errors() {
        let mut none = BinaryDecoder::new(&[]);
        let mut dec = TagState::new(Marks::Ids);
        for n in ["WhiteElo", "Date", "Event", "UTCTime", "BlackRatingDiff"] {
            dec.add_name(n.as_bytes());
        }
        dec.start_game();
        assert!(dec.decode(0, &[ELO_NEAR], &mut none).is_err());
        assert!(dec.decode(0, &[ELO_STEP], &mut none).is_err());
        assert!(dec.decode(1, &[DATE_STEP], &mut none).is_err());
        assert!(dec.decode(1, &[DATE_AS_GAME], &mut none).is_err());
        assert!(dec.decode(2, &[RECENT_VALUE], &mut none).is_err());
        assert!(dec.decode(3, &[TIME_STEP], &mut none).is_err());
        assert!(dec.decode(2, &[DATE_AS_GAME], &mut none).is_err());
        assert!(dec.decode(2, &[ELO_NEAR], &mut none).is_err());
        // A step of zero from no change: "+0".
        assert_eq!(dec.decode(4, &[DIFF_STEP], &mut none).unwrap(), b"+0");
        // The label mark is a mark only where the block codes labels.
        let mut dec = TagState::new(Marks::Ids);
        dec.add_name(b"ECO");
        dec.start_game();
        assert_eq!(dec.decode(0, &[LABELLED], &mut none).unwrap(), [LABELLED]);
    }

    #[test]
    fn bad_marks_are_errors() {
        let mut none = BinaryDecoder::new(&[]);
        let mut dec = TagState::new(Marks::Ids);
        for n in ["White", "WhiteElo", "Date", "Event"] {
            dec.add_name(n.as_bytes());
        }
        dec.start_game();
        assert!(dec.decode(0, &[RECENT, 1], &mut none).is_err());
        assert!(dec.decode(1, &[PLAYER_ELO], &mut none).is_err());
        // Mark 5 is no mark.
        assert!(dec.decode(2, &[5, 1], &mut none).is_err());
        assert!(dec.decode(3, &[REPEAT], &mut none).is_err());
        assert!(dec.decode(3, &[RECENT, 1], &mut none).is_err());
        assert!(dec.decode(4, b"x", &mut none).is_err());
        assert_eq!(
            dec.decode(2, b"2000.01.01", &mut none).unwrap(),
            b"2000.01.01"
        );
        assert!(dec.decode(2, &[5, 31], &mut none).is_err());
        assert!(dec.decode(3, &[NEXT_ROUND], &mut none).is_err());
        let mut dec = TagState::new(Marks::Ids);
        dec.add_name(b"Round");
        assert!(dec.decode(0, &[NEXT_ROUND], &mut none).is_err());
        assert_eq!(dec.decode(0, b"?", &mut none).unwrap(), b"?");
        assert!(dec.decode(0, &[NEXT_ROUND], &mut none).is_err());
        assert_eq!(dec.decode(0, b"99.1", &mut none).unwrap(), b"99.1");
        assert_eq!(
            dec.decode(0, &[NEXT_ROUND, b'.', b'3'], &mut none).unwrap(),
            b"100.3"
        );
    }
}
