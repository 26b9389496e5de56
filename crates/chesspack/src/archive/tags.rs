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
//!   before it (format 6).
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
    /// All of them: [`PREDICTED`] too (format 6).
    Openings,
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
        }
    }

    /// Adds the tag name of the next id.
    pub(crate) fn add_name(&mut self, name: &[u8]) {
        self.roles.push(if self.marks >= Marks::Players {
            Role::of(name)
        } else {
            Role::Other
        });
        self.last.push(None);
    }

    /// Starts a game.
    pub(crate) fn start_game(&mut self) {
        self.players = [None, None];
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
            Role::Elo(side) => self.players[side]
                .as_ref()
                .and_then(|p| self.elo.get(p))
                .filter(|e| e.as_slice() == value)
                .map(|_| out.push(PLAYER_ELO)),
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
                if let Some(p) = &self.players[side]
                    && self.elo.get(p).map(Vec::as_slice) != Some(value)
                {
                    self.elo.insert(p.clone(), value.to_vec());
                }
            }
            Role::Date | Role::Round | Role::Other | Role::Opening(_) => {}
        }
    }
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
