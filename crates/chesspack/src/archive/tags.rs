//! Tag values as the `tag-values` column stores them: each value in full,
//! or a short mark that says where the decoder finds it among the values
//! before it in the block.
//!
//! Marks (the first byte of a stored value; the column keeps each tag
//! name's values together, in game order, each ended by a nul):
//!
//! * [`REPEAT`]: the previous value of the same tag name (format 2 on);
//! * [`ESCAPE`]: the value follows (it begins with a mark byte);
//! * [`RECENT`] `i`: for `White` and `Black`, the `i`-th most recently seen
//!   player name (`i` from 1, over both tags; format 3);
//! * [`PLAYER_ELO`]: for `WhiteElo` and `BlackElo`, the last Elo seen in
//!   the block of the player whom this game's `White` or `Black` tag, given
//!   before it, names (format 3);
//! * [`NEXT_DATE`] `d`: for `Date`, the previous `Date` of the block plus
//!   `d` days (1 to 250), both `YYYY.MM.DD` dates (format 3);
//! * [`NEXT_ROUND`] `rest`: for `Round`, the number that begins the
//!   previous `Round` of the block plus one, then `rest` (`"4.2"` after
//!   `"3.7"` is [`NEXT_ROUND`] `".2"`; format 3);
//! * [`PREDICTED`]: for `ECO` and `Opening`, the value that the game's
//!   moves give ([`OpeningTable::predict`](crate::opening::OpeningTable::predict)
//!   with the built-in table); the decoder fills it in once it has decoded
//!   the moves. It changes no state: [`REPEAT`] after it means the value
//!   before it (format 6);
//! * [`TIME_STEP`] `d`: for `UTCTime` and `Time`, the previous value of the
//!   same tag plus `d` seconds (a signed decimal number, around the clock),
//!   both `HH:MM:SS` times (format 7);
//! * [`DIFF_FROM_ELOS`]: for `WhiteRatingDiff` and `BlackRatingDiff`, the
//!   player's Elo in the last game before this one in the block that gives
//!   it, minus this game's: a player's games listed newest first, as lichess
//!   exports them (format 7);
//! * [`MIRROR_DIFF`]: for those, the other side's rating change in this
//!   game, negated (format 7);
//! * [`ELO_STEP`] `d`: for `WhiteElo` and `BlackElo`, the player's last Elo
//!   in the block plus `d`, a signed decimal number below 1000 in size
//!   (`+6`, `-12`; format 7).
//!
//! Master game files list each player's games together: the players, their
//! ratings and the days of a tournament repeat, which zstd alone stores in
//! a few bytes each and the marks in less than one.

use std::{
    collections::HashMap,
    hash::{BuildHasherDefault, Hasher},
};

/// FNV-1a for the player names of a block: std's SipHash was a tenth of
/// `get`'s time, and names come from the block, which holds at most a few
/// thousand games.
struct Fnv(u64);

impl Default for Fnv {
    fn default() -> Fnv {
        Fnv(crate::holdout::FNV_BASIS)
    }
}

impl Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        self.0 = crate::holdout::fnv1a_from(self.0, bytes);
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
/// `NEXT_DATE d`: the previous date plus `d` days.
const NEXT_DATE: u8 = 5;
/// `NEXT_ROUND rest`: the previous round's number plus one, then `rest`.
const NEXT_ROUND: u8 = 6;

/// The value the moves give (`ECO`, `Opening`).
const PREDICTED: u8 = 7;
/// `TIME_STEP d`: the previous time plus `d` seconds.
const TIME_STEP: u8 = 8;
/// The player's previous Elo minus this game's.
const DIFF_FROM_ELOS: u8 = 9;
/// The other side's rating change, negated.
const MIRROR_DIFF: u8 = 10;
/// `ELO_STEP d`: the player's last Elo plus `d` (`+6`, `-12`).
const ELO_STEP: u8 = 11;

/// Seconds in a day, around which [`TIME_STEP`] counts.
const DAY: i64 = 24 * 3600;

/// Player names that [`RECENT`] reaches.
const RECENT_NAMES: usize = 64;
/// The largest day step of [`NEXT_DATE`].
const MAX_DAYS: i64 = 250;

/// Which marks a `tag-values` column uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Marks {
    /// None: every value in full (format 1).
    None,
    /// [`REPEAT`] and [`ESCAPE`] (format 2).
    Repeat,
    /// Those of players, ratings, dates and rounds too (format 3).
    Players,
    /// Those and [`PREDICTED`] (format 6).
    Openings,
    /// All of them: [`TIME_STEP`], [`DIFF_FROM_ELOS`], [`MIRROR_DIFF`]
    /// and [`ELO_STEP`] too (format 7).
    Times,
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
}

impl Role {
    fn of(name: &[u8]) -> Role {
        match name {
            b"White" => Role::Player(0),
            b"Black" => Role::Player(1),
            b"WhiteElo" => Role::Elo(0),
            b"BlackElo" => Role::Elo(1),
            b"Date" => Role::Date,
            b"Round" => Role::Round,
            b"ECO" => Role::Opening(0),
            b"Opening" => Role::Opening(1),
            b"UTCTime" | b"Time" => Role::Time,
            b"WhiteRatingDiff" => Role::Diff(0),
            b"BlackRatingDiff" => Role::Diff(1),
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
    /// The last value of each tag name.
    last: Vec<Option<Vec<u8>>>,
    /// Player names, most recent first.
    recent: Vec<Vec<u8>>,
    /// Each player's last Elo.
    elo: HashMap<Vec<u8>, Vec<u8>, BuildHasherDefault<Fnv>>,
    /// This game's `White` and `Black` values so far.
    players: [Option<Vec<u8>>; 2],
    /// For each side of this game so far, the player's Elo in the block
    /// before this game's minus this game's.
    elo_changes: [Option<i64>; 2],
    /// This game's rating changes so far.
    diffs: [Option<i64>; 2],
}

impl TagState {
    /// A state without tag names, with `marks`.
    pub(crate) fn new(marks: Marks) -> TagState {
        TagState {
            marks,
            roles: Vec::new(),
            last: Vec::new(),
            recent: Vec::new(),
            elo: HashMap::default(),
            players: [None, None],
            elo_changes: [None, None],
            diffs: [None, None],
        }
    }

    /// Adds the tag name of the next id.
    pub(crate) fn add_name(&mut self, name: &[u8]) {
        self.roles.push(match Role::of(name) {
            Role::Time | Role::Diff(_) if self.marks < Marks::Times => Role::Other,
            _ if self.marks < Marks::Players => Role::Other,
            role => role,
        });
        self.last.push(None);
    }

    /// Starts a game.
    pub(crate) fn start_game(&mut self) {
        self.players = [None, None];
        self.elo_changes = [None, None];
        self.diffs = [None, None];
    }

    /// Appends `value` of tag `id` to `out`, as a mark where one applies
    /// (not the nul that ends it).
    pub(crate) fn encode(&mut self, id: usize, value: &[u8], out: &mut Vec<u8>) {
        if self.marks == Marks::None {
            out.extend_from_slice(value);
            return;
        }
        let marked = match self.roles[id] {
            Role::Player(_) => self.recent.iter().position(|n| n == value).map(|i| {
                out.extend_from_slice(&[RECENT, i as u8 + 1]);
            }),
            Role::Elo(side) => {
                let last = self.players[side].as_ref().and_then(|p| self.elo.get(p));
                if last.is_some_and(|e| e.as_slice() == value) {
                    out.push(PLAYER_ELO);
                    Some(())
                } else if self.marks >= Marks::Times {
                    // A step from the player's last Elo, written back the same.
                    last.and_then(|l| Some(number(value)? - number(l)?))
                        .filter(|&d| d.abs() < 1000)
                        .map(|d| {
                            out.push(ELO_STEP);
                            out.extend_from_slice(&signed(d));
                        })
                } else {
                    None
                }
            }
            Role::Date => self.last[id]
                .as_deref()
                .and_then(|last| days_between(last, value))
                .map(|d| out.extend_from_slice(&[NEXT_DATE, d])),
            Role::Round => self.last[id]
                .as_deref()
                .and_then(next_round)
                .and_then(|n| value.strip_prefix(n.as_slice()))
                .filter(|rest| !rest.first().is_some_and(u8::is_ascii_digit))
                .map(|rest| {
                    out.push(NEXT_ROUND);
                    out.extend_from_slice(rest);
                }),
            Role::Time => self.last[id]
                .as_deref()
                .and_then(|last| Some(seconds(value)? - seconds(last)?))
                .map(|d| {
                    // Around the clock: -43199 to 43200 seconds.
                    let d = (d + DAY / 2 - 1).rem_euclid(DAY) - DAY / 2 + 1;
                    out.push(TIME_STEP);
                    out.extend_from_slice(d.to_string().as_bytes());
                }),
            Role::Diff(side) => {
                let mark = if self.elo_changes[side].is_some_and(|c| value == signed(c)) {
                    Some(DIFF_FROM_ELOS)
                } else if self.diffs[1 - side].is_some_and(|d| value == signed(-d)) {
                    Some(MIRROR_DIFF)
                } else {
                    None
                };
                mark.map(|m| out.push(m))
            }
            Role::Other | Role::Opening(_) => None,
        }
        .is_some();
        if !marked {
            if self.last[id].as_deref() == Some(value) {
                out.push(REPEAT);
            } else {
                if value.first().is_some_and(|&b| self.is_mark(b)) {
                    out.push(ESCAPE);
                }
                out.extend_from_slice(value);
            }
        }
        self.update(id, value);
    }

    /// Whether tag `id` (`ECO` or `Opening`) can be stored as the value
    /// the moves give.
    pub(crate) fn predicts(&self, id: usize) -> Option<usize> {
        match self.roles[id] {
            Role::Opening(k) if self.marks >= Marks::Openings => Some(k),
            _ => None,
        }
    }

    /// Appends the mark of the value the moves give, for a tag that
    /// [`predicts`](TagState::predicts) (no state changes).
    pub(crate) fn encode_predicted(&self, out: &mut Vec<u8>) {
        out.push(PREDICTED);
    }

    /// `Some(0)` (`ECO`) or `Some(1)` (`Opening`) when tag `id` is stored
    /// as the value the moves give, which the caller fills in; the state
    /// does not change.
    ///
    /// # Errors
    ///
    /// The mark on another tag.
    pub(crate) fn predicted(&self, id: usize, stored: &[u8]) -> Result<Option<usize>, String> {
        if self.marks < Marks::Openings || stored != [PREDICTED] {
            return Ok(None);
        }
        match self.roles.get(id) {
            Some(&Role::Opening(k)) => Ok(Some(k)),
            _ => Err("an opening mark on another tag".into()),
        }
    }

    /// The value of tag `id` stored as `stored`.
    pub(crate) fn decode(&mut self, id: usize, stored: &[u8]) -> Result<&[u8], String> {
        let role = *self.roles.get(id).ok_or("tag id out of range")?;
        // The value is built in the buffer of the last value of its name,
        // where it stays: a game that is skipped costs no allocation.
        let last = self.last[id].take();
        let had_last = last.is_some();
        let mut value = last.unwrap_or_default();
        if let Err(e) = self.build(role, stored, had_last, &mut value) {
            // Untouched: the state stays as it was.
            self.last[id] = had_last.then_some(value);
            return Err(e);
        }
        self.update_others(id, &value);
        Ok(self.last[id].insert(value))
    }

    /// Turns `value`, the last value of its name (empty when `had_last` is
    /// false), into the value that `stored` codes; on an error it is left
    /// as it was.
    fn build(
        &self,
        role: Role,
        stored: &[u8],
        had_last: bool,
        value: &mut Vec<u8>,
    ) -> Result<(), String> {
        match *stored {
            _ if self.marks == Marks::None => replace(value, stored),
            [REPEAT] if had_last => {}
            [REPEAT] => return Err("a tag value repeats nothing".into()),
            [ESCAPE, ref rest @ ..] => replace(value, rest),
            [RECENT, i] if matches!(role, Role::Player(_)) => {
                let name = self
                    .recent
                    .get(usize::from(i).wrapping_sub(1))
                    .ok_or("a player mark points past the names seen")?;
                replace(value, name);
            }
            [ELO_STEP, ref rest @ ..]
                if self.marks >= Marks::Times && matches!(role, Role::Elo(_)) =>
            {
                let side = usize::from(role == Role::Elo(1));
                let last = self.players[side]
                    .as_ref()
                    .and_then(|p| self.elo.get(p))
                    .and_then(|e| number(e))
                    .ok_or("an Elo step without the player's Elo")?;
                let d = parse_signed(rest)
                    .filter(|d| d.abs() < 1000)
                    .ok_or("an Elo step that is not a step")?;
                *value = (last + d).to_string().into_bytes();
            }
            [PLAYER_ELO] if self.marks >= Marks::Players => match role {
                Role::Elo(side) => {
                    let elo = self.players[side]
                        .as_ref()
                        .and_then(|p| self.elo.get(p))
                        .ok_or("an Elo mark without the player's Elo")?;
                    replace(value, elo);
                }
                _ => return Err("an Elo mark on another tag".into()),
            },
            [NEXT_DATE, d] if role == Role::Date => {
                if !had_last {
                    return Err("a date mark without a date".into());
                }
                *value =
                    add_days(value, d).ok_or("a date mark after a value that is not a date")?;
            }
            [NEXT_ROUND, ref rest @ ..] if role == Role::Round => {
                if !had_last {
                    return Err("a round mark without a round".into());
                }
                let mut v =
                    next_round(value).ok_or("a round mark after a round without a number")?;
                v.extend_from_slice(rest);
                *value = v;
            }
            [TIME_STEP, ref rest @ ..] if role == Role::Time => {
                let last = had_last
                    .then(|| seconds(value))
                    .flatten()
                    .ok_or("a time mark after a value that is not a time")?;
                let d: i64 = std::str::from_utf8(rest)
                    .ok()
                    .and_then(|r| r.parse().ok())
                    .filter(|d: &i64| d.abs() <= DAY)
                    .ok_or("a time mark without a step")?;
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
            _ => replace(value, stored),
        }
        Ok(())
    }

    fn is_mark(&self, b: u8) -> bool {
        match self.marks {
            Marks::None => false,
            Marks::Repeat => matches!(b, REPEAT | ESCAPE),
            Marks::Players => (REPEAT..=NEXT_ROUND).contains(&b),
            Marks::Openings => (REPEAT..=PREDICTED).contains(&b),
            Marks::Times => (REPEAT..=ELO_STEP).contains(&b),
        }
    }

    fn update(&mut self, id: usize, value: &[u8]) {
        if self.last[id].as_deref() != Some(value) {
            set(&mut self.last[id], value);
        }
        self.update_others(id, value);
    }

    /// [`update`](TagState::update) but for the last value of the name.
    fn update_others(&mut self, id: usize, value: &[u8]) {
        match self.roles[id] {
            Role::Player(side) => {
                match self.recent.iter().position(|n| n == value) {
                    Some(i) => self.recent[..=i].rotate_right(1),
                    None => {
                        // The name that drops out lends its buffer.
                        let mut name = if self.recent.len() == RECENT_NAMES {
                            self.recent.pop().unwrap_or_default()
                        } else {
                            Vec::new()
                        };
                        replace(&mut name, value);
                        self.recent.insert(0, name);
                    }
                }
                set(&mut self.players[side], value);
            }
            Role::Elo(side) => {
                if let Some(p) = &self.players[side] {
                    let before = self.elo.get(p);
                    self.elo_changes[side] = before
                        .and_then(|b| Some(number(b)? - number(value)?))
                        .filter(|_| self.marks >= Marks::Times);
                    if before.map(Vec::as_slice) != Some(value) {
                        self.elo.insert(p.clone(), value.to_vec());
                    }
                }
            }
            Role::Diff(side) => {
                self.diffs[side] = parse_signed(value);
            }
            Role::Date | Role::Round | Role::Time | Role::Other | Role::Opening(_) => {}
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
    format!(
        "{:02}:{:02}:{:02}",
        seconds / 3600,
        seconds / 60 % 60,
        seconds % 60
    )
    .into_bytes()
}

/// A decimal number of up to nine digits without leading zeros (an Elo).
fn number(text: &[u8]) -> Option<i64> {
    let ok = (1..=9).contains(&text.len())
        && text.iter().all(u8::is_ascii_digit)
        && (text.len() == 1 || text[0] != b'0');
    ok.then(|| std::str::from_utf8(text).ok()?.parse().ok())
        .flatten()
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
    (0..=9999)
        .contains(&y)
        .then(|| format!("{y:04}.{m:02}.{d:02}").into_bytes())
}

/// `d` when `next` is `last` plus `d` days, 1 to [`MAX_DAYS`].
fn days_between(last: &[u8], next: &[u8]) -> Option<u8> {
    let d = day_number(next)? - day_number(last)?;
    (1..=MAX_DAYS).contains(&d).then_some(d as u8)
}

/// `last` plus `d` days.
fn add_days(last: &[u8], d: u8) -> Option<Vec<u8>> {
    if !(1..=MAX_DAYS).contains(&i64::from(d)) {
        return None;
    }
    date_of(day_number(last)? + i64::from(d))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_step_by_days_across_months_and_leap_years() {
        assert_eq!(days_between(b"2014.03.01", b"2014.03.02"), Some(1));
        assert_eq!(days_between(b"2016.02.28", b"2016.03.01"), Some(2));
        assert_eq!(days_between(b"2015.02.28", b"2015.03.01"), Some(1));
        assert_eq!(days_between(b"1999.12.31", b"2000.01.01"), Some(1));
        assert_eq!(days_between(b"2014.03.02", b"2014.03.01"), None);
        assert_eq!(days_between(b"2014.03.01", b"2014.03.01"), None);
        assert_eq!(days_between(b"2014.03.??", b"2014.03.02"), None);
        assert_eq!(days_between(b"2015.02.28", b"2015.02.29"), None);
        assert_eq!(days_between(b"2014.01.01", b"2015.01.01"), None);
        assert_eq!(
            add_days(b"2016.02.28", 2).as_deref(),
            Some(&b"2016.03.01"[..])
        );
        assert_eq!(add_days(b"9999.12.31", 1), None);
        assert_eq!(add_days(b"2016.02.28", 0), None);
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
        let mut names: Vec<&str> = Vec::new();
        let mut enc = TagState::new(marks);
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
                enc.encode(id, value.as_bytes(), &mut out);
                stored.push((id, out));
            }
        }
        let mut dec = TagState::new(marks);
        for n in &names {
            dec.add_name(n.as_bytes());
        }
        let mut items = stored.iter();
        let mut size = 0;
        for game in games {
            dec.start_game();
            for &(_, value) in *game {
                let (id, s) = items.next().unwrap();
                size += s.len();
                assert_eq!(dec.decode(*id, s).unwrap(), value.as_bytes());
            }
        }
        size
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
        assert_eq!(round_trip(Marks::None, games), full);
        let repeat = round_trip(Marks::Repeat, games);
        let players = round_trip(Marks::Players, games);
        assert!(
            players < repeat && repeat < full + 2,
            "{players} {repeat} {full}"
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
        let openings = round_trip(Marks::Openings, &games);
        let times = round_trip(Marks::Times, &games);
        // Two time steps, an Elo step and two rating-change marks: 6 bytes.
        assert!(times + 6 <= openings, "{times} {openings}");
    }

    #[test]
    fn bad_marks_are_errors() {
        let mut dec = TagState::new(Marks::Players);
        for n in ["White", "WhiteElo", "Date", "Event"] {
            dec.add_name(n.as_bytes());
        }
        dec.start_game();
        assert!(dec.decode(0, &[RECENT, 1]).is_err());
        assert!(dec.decode(1, &[PLAYER_ELO]).is_err());
        assert!(dec.decode(2, &[NEXT_DATE, 1]).is_err());
        assert!(dec.decode(3, &[REPEAT]).is_err());
        assert!(dec.decode(3, &[RECENT, 1]).is_err());
        assert!(dec.decode(4, b"x").is_err());
        assert_eq!(dec.decode(2, b"2000.01.01").unwrap(), b"2000.01.01");
        assert!(dec.decode(2, &[NEXT_DATE, 0]).is_err());
        assert_eq!(dec.decode(2, &[NEXT_DATE, 31]).unwrap(), b"2000.02.01");
        assert!(dec.decode(3, &[NEXT_ROUND]).is_err());
        let mut dec = TagState::new(Marks::Players);
        dec.add_name(b"Round");
        assert!(dec.decode(0, &[NEXT_ROUND]).is_err());
        assert_eq!(dec.decode(0, b"?").unwrap(), b"?");
        assert!(dec.decode(0, &[NEXT_ROUND]).is_err());
        assert_eq!(dec.decode(0, b"99.1").unwrap(), b"99.1");
        assert_eq!(dec.decode(0, &[NEXT_ROUND, b'.', b'3']).unwrap(), b"100.3");
    }
}
