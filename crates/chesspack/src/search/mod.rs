//! Finding games by position: every game that reached a position (by FEN
//! or by moves, transpositions included), the moves played from it with
//! their results (an opening explorer), games by material, imbalance or
//! pieces on squares (a sub-FEN), all with filters on players, ratings,
//! result, dates, event, ECO and speed.
//!
//! An archive written by `compress` has a search section (unless it holds
//! fewer than 32 games; [`index`] adds one to an archive without): an
//! opening tree of the lines that games share, where each game leaves it, each game's changes of state (home
//! pawns leaving, pieces taken, promotions, with their plies) and the tags
//! queries filter on. A query walks the tree for the games that reached a
//! position on a shared line, and decodes only the games whose state
//! could hold the position after they left it; a material query decodes
//! nothing. An archive without a section (or with a damaged one) is
//! searched by decoding every game, and the answer says so.
//!
//! ```
//! use chesspack::{files, search};
//!
//! let pgn = "[White \"a\"]\n[Black \"b\"]\n[Result \"1-0\"]\n\n1. e4 c5 2. Nf3 d6 1-0\n\n\
//!            [White \"c\"]\n[Black \"d\"]\n[Result \"0-1\"]\n\n1. Nf3 c5 2. e4 Nc6 0-1\n\n";
//! // Eight times. (`compress` writes no search section for fewer than 32
//! // games, nor where it would make a small archive larger than xz of its
//! // text, as here: the games are then decoded, with the same answers.)
//! let pgn = pgn.repeat(8);
//! let mut packed = Vec::new();
//! let go = &mut |_: &_| std::ops::ControlFlow::Continue(());
//! files::compress(files::Kind::Games, pgn.as_bytes(), &mut packed, &Default::default(), go).unwrap();
//! let archive = chesspack::archive::ArchiveReader::open(std::io::Cursor::new(packed)).unwrap();
//! let mut archives = [archive];
//!
//! // 1. e4 c5 2. Nf3 and 1. Nf3 c5 2. e4 meet.
//! let mut query = search::Query::default();
//! query.moves = Some("e4 c5 Nf3".into());
//! let found = search::find(&mut archives, &query).unwrap();
//! let hits: Vec<_> = found.hits.iter().map(|h| (h.game, h.ply)).collect();
//! assert_eq!((hits.len(), &hits[..2]), (16, &[(1, 3), (2, 3)][..]));
//!
//! query.explore = true;
//! let explored = search::find(&mut archives, &query).unwrap();
//! let moves: Vec<_> = explored.moves.iter().map(|m| (m.san.as_str(), m.games, m.white)).collect();
//! assert_eq!(moves, [("Nc6", 8, 0), ("d6", 8, 8)]);
//! // Openings as lichess's table names them.
//! let named = explored.opening.unwrap();
//! assert_eq!((named.eco, named.name), ("B27", "Sicilian Defense"));
//! assert_eq!(explored.moves[1].opening.unwrap().name, "Sicilian Defense: Modern Variations");
//! ```

mod index;
mod state;

use std::{
    collections::{BTreeMap, HashMap},
    io::{Read, Seek},
    sync::Arc,
};

use shakmaty::{
    Board, CastlingMode, Chess, Color, Move, Position,
    san::{San, SanPlus},
    uci::UciMove,
};

pub(crate) use self::index::IndexBuilder;
/// The search section's version (the fuzz seed's test checks its seed).
#[cfg(test)]
pub(crate) use self::index::VERSION as SECTION_VERSION;
use self::{
    index::{
        Fetch, Group, INDEXED, Index, Meta, NO_MOVE, Names, Numbers, SPEEDS, TEXT, Unreadable, key,
        move_key, move_of,
    },
    state::{Pattern, State},
};
use crate::archive::{
    ArchiveError, ArchiveReader, Block, GameRow, decode_mainlines_until, decode_records,
    decode_records_until,
    pipeline::{OnProgress, Pipeline, Progress},
};
use crate::opening::{Opening, OpeningTable};
use crate::threads;

/// What to look for: one of a position (`fen` or `moves`), sub-FENs,
/// a material or an imbalance, or none (the filters alone), and the
/// filters. Text fields are as the command line takes them.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct Query {
    /// A position by FEN (the board, side to move, castling and en passant
    /// count; the move counters do not).
    pub fen: Option<String>,
    /// A position by moves from the standard start, in SAN or UCI,
    /// separated by spaces (move numbers allowed): `"e4 c5 Nf3"`.
    pub moves: Option<String>,
    /// Pieces on squares, as a FEN's board with the other squares empty:
    /// a position matches where it has all of one's pieces on their
    /// squares (a list: any of them).
    pub sub_fen: Vec<String>,
    /// Exactly this material, as Scoutfish writes it: `KRPKR` (White's
    /// pieces, then Black's, each from its king) or `RP v R`.
    pub material: Option<String>,
    /// White's pieces less Black's by role, as Scoutfish writes it:
    /// `Q v RR`, `v PP` (White two pawns down).
    pub imbalance: Option<String>,
    /// A player of White, of Black, of either: a part of the name, any
    /// case.
    pub white: Option<String>,
    /// See [`Query::white`].
    pub black: Option<String>,
    /// See [`Query::white`].
    pub player: Option<String>,
    /// The least and most rating: the mean of both players' (or the one
    /// given); a game without a rating does not pass.
    pub min_elo: Option<u32>,
    /// See [`Query::min_elo`].
    pub max_elo: Option<u32>,
    /// `1-0`, `0-1` or `1/2-1/2`.
    pub result: Option<String>,
    /// The first and last date (`yyyy.mm.dd`, `yyyy-mm-dd`, `yyyy.mm` or
    /// `yyyy`); a game without a date does not pass.
    pub from: Option<String>,
    /// See [`Query::from`].
    pub to: Option<String>,
    /// A part of the `Event` tag, any case.
    pub event: Option<String>,
    /// The start of the ECO code (`B90`, `B9`, `B`): the game's `ECO` tag
    /// or, without one, what its moves give in lichess's table.
    pub eco: Option<String>,
    /// A part of the opening's name, any case (`najdorf`): the game's
    /// `Opening` tag or, without one, what its moves give in lichess's
    /// table (`Sicilian Defense: Najdorf Variation`).
    pub opening: Option<String>,
    /// lichess's speed by the `TimeControl` tag: `ultrabullet`, `bullet`,
    /// `blitz`, `rapid`, `classical` or `correspondence`.
    pub speed: Option<String>,
    /// Worker threads that decode games (0: one a core).
    pub threads: usize,
    /// The opening explorer: also count the moves played from the
    /// position ([`Found::moves`]).
    pub explore: bool,
    /// With [`Query::explore`]: also give the games ([`Found::hits`]), as
    /// the same query without `explore` gives them, from the one search.
    pub games: bool,
}

/// A game that reached what was looked for.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Hit {
    /// Which archive of those searched (from 0).
    pub archive: usize,
    /// The game's number in the archive, from 1, as `get` numbers games.
    pub game: u64,
    /// The first ply where it was reached: 0 is the game's start, 1 after
    /// White's first move. For a query of the filters alone, 0.
    pub ply: u32,
    /// Tags: `White`, `Black`, `Event`, `ECO` and `Opening` (or what the
    /// moves give in lichess's table), `Result` (empty where unknown), the
    /// date as `yyyy.mm.dd` with `??` for what is unknown, the ratings (0:
    /// none). The names are shared with the search section's table of
    /// names (a hit costs no copy).
    pub white: Arc<str>,
    /// See [`Hit::white`].
    pub black: Arc<str>,
    /// See [`Hit::white`].
    pub event: Arc<str>,
    /// See [`Hit::white`].
    pub eco: Arc<str>,
    /// See [`Hit::white`].
    pub opening: Arc<str>,
    /// See [`Hit::white`].
    pub result: &'static str,
    /// See [`Hit::white`]. (Shared by the hits of the same day.)
    pub date: Arc<str>,
    /// See [`Hit::white`].
    pub white_elo: u16,
    /// See [`Hit::white`].
    pub black_elo: u16,
    /// The mean of both ratings, or the one given (0: neither), as
    /// [`Query::min_elo`] and [`Query::max_elo`] look at it.
    pub rating: u16,
}

/// What [`find`] found, and how.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct Found {
    /// The games, by number (with [`Query::explore`], only where
    /// [`Query::games`] asks for them).
    pub hits: Vec<Hit>,
    /// How many games were found (with [`Query::explore`], those that
    /// reached the position, the games that ended there included).
    pub reached: u64,
    /// Whether every game was decoded: the archive has no search section,
    /// or a damaged one ([`Found::index_error`]).
    pub scanned: bool,
    /// Why the search section could not be used.
    pub index_error: Option<String>,
    /// Games decoded to confirm a match.
    pub decoded: u64,
    /// Games stored verbatim (text the reader does not parse as a game,
    /// which no query reads): not searched.
    pub not_searched: u64,
    /// With [`Query::explore`]: the moves from the position, most played
    /// first.
    pub moves: Vec<MoveStats>,
    /// With [`Query::explore`]: the opening of the position in lichess's
    /// table ([`OpeningTable::lichess`]): by moves, that of the last
    /// position on the way that the table names (as `classify` names a
    /// game); by FEN, the position's own, where the table names it.
    pub opening: Option<Opening<'static>>,
}

/// A move played from the position, with what followed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct MoveStats {
    /// The move in SAN and UCI.
    pub san: String,
    /// See [`MoveStats::san`].
    pub uci: String,
    /// Games that played it (from their first time in the position).
    pub games: u64,
    /// Those White won, drew, Black won (the rest have no result).
    pub white: u64,
    /// See [`MoveStats::white`].
    pub draws: u64,
    /// See [`MoveStats::white`].
    pub black: u64,
    /// The mean rating of the player who made the move, over the games
    /// with one.
    pub mean_rating: Option<u32>,
    /// The most recent game (by date, then archive and number) and the
    /// one with the highest mean rating: the archive (from 0) and the
    /// game's number in it.
    pub last_game: Option<(usize, u64)>,
    /// See [`MoveStats::last_game`].
    pub best_game: Option<(usize, u64)>,
    /// The opening of the position after the move, where lichess's table
    /// ([`OpeningTable::lichess`]) names that position.
    pub opening: Option<Opening<'static>>,
}

/// A move's stats while they are counted: the rating sum and count of
/// its movers, the latest game (date, archive, number) and the best (mean
/// rating, archive, number).
type Tally = (
    MoveStats,
    u64,
    u64,
    Option<(u32, usize, u64)>,
    Option<(u32, usize, u64)>,
);

/// What is looked for.
enum Target {
    Any,
    /// The position's key, its board, its state, its pawns' files, and the
    /// files of its pawns on their third rank, which came there from home
    /// by one step or a capture ([`state::third_rank_files`]).
    Position {
        key: u64,
        board: Board,
        state: State,
        files: u16,
        third: u16,
    },
    /// The material (its home pawns none).
    Material(State),
    Imbalance([i8; 5]),
    /// Sub-FENs (any of them), and the files of pawns on their third rank
    /// that every pattern has ([`state::third_rank_files`]): a game shows none
    /// before its changes could have put a pawn there.
    Patterns(Vec<Pattern>, u16),
}

fn bad(what: impl Into<String>) -> ArchiveError {
    ArchiveError::Settings(what.into())
}

/// The position that `query` names, if it names one.
fn position_of(query: &Query) -> Result<Option<Chess>, ArchiveError> {
    Ok(position_and_line(query)?.map(|(pos, _)| pos))
}

/// The position that `query` names, if it names one, and the moves from
/// the start to it (none for a FEN).
fn position_and_line(query: &Query) -> Result<Option<(Chess, Vec<Move>)>, ArchiveError> {
    if let Some(fen) = &query.fen {
        // As a game's `FEN` tag is read (castling rights that only Chess960
        // gives; more material than a game can have, whose games are
        // stored and searched too).
        return crate::pgn::start_position(None, Some(fen))
            .map(|pos| Some((pos, Vec::new())))
            .map_err(|e| match e {
                crate::Error::InvalidFen { reason, .. } => {
                    bad(format!("bad FEN {fen:?}: {reason}"))
                }
                e => bad(format!("bad FEN {fen:?}: {e}")),
            });
    }
    let Some(moves) = &query.moves else {
        return Ok(None);
    };
    let mut pos = Chess::default();
    let mut line = Vec::new();
    for token in moves.split_whitespace() {
        // Move numbers: `1.`, `1...`, `12.e4`.
        let token = token.trim_start_matches(|c: char| c.is_ascii_digit() || c == '.');
        if token.is_empty() {
            continue;
        }
        let m = token
            .parse::<SanPlus>()
            .ok()
            .and_then(|s| s.san.to_move(&pos).ok())
            .or_else(|| {
                token
                    .parse::<UciMove>()
                    .ok()
                    .and_then(|u| u.to_move(&pos).ok())
            })
            .ok_or_else(|| {
                bad(format!(
                    "{token:?} is not a legal move after {moves:?} so far"
                ))
            })?;
        pos.play_unchecked(m);
        line.push(m);
    }
    Ok(Some((pos, line)))
}

fn target_of(query: &Query) -> Result<Target, ArchiveError> {
    let given = [
        query.fen.is_some() || query.moves.is_some(),
        !query.sub_fen.is_empty(),
        query.material.is_some(),
        query.imbalance.is_some(),
    ];
    if given.iter().filter(|&&g| g).count() > 1 || (query.fen.is_some() && query.moves.is_some()) {
        return Err(bad(
            "give one of a FEN, moves, sub-FENs, a material or an imbalance",
        ));
    }
    if let Some(pos) = position_of(query)? {
        return Ok(Target::of_position(&pos));
    }
    if let Some(m) = &query.material {
        return state::parse_material(m)
            .map(|m| Target::Material(State::new(0, m)))
            .ok_or_else(|| bad(format!("bad material {m:?}: write it as KRPKR or RP v R")));
    }
    if let Some(m) = &query.imbalance {
        return state::parse_imbalance(m)
            .map(Target::Imbalance)
            .ok_or_else(|| bad(format!("bad imbalance {m:?}: write it as Q v RR")));
    }
    if !query.sub_fen.is_empty() {
        let patterns = query
            .sub_fen
            .iter()
            .map(|s| Pattern::parse(s).ok_or_else(|| bad(format!("bad sub-FEN {s:?}"))))
            .collect::<Result<Vec<_>, ArchiveError>>()?;
        let third = patterns
            .iter()
            .map(|p| state::third_rank_files(&p.board))
            .reduce(|a, b| a & b)
            .unwrap_or(0);
        return Ok(Target::Patterns(patterns, third));
    }
    Ok(Target::Any)
}

impl Target {
    /// Position `pos`.
    fn of_position(pos: &Chess) -> Target {
        let state = State::of(pos);
        Target::Position {
            key: key(pos),
            board: pos.board().clone(),
            state,
            files: state::pawn_files(pos.board()),
            third: state::third_rank_files(pos.board()),
        }
    }

    /// The files where a game must have put a pawn on its third rank (by
    /// one step from home or a capture from home: [`state::third_rank`])
    /// to be at what is looked for.
    #[inline]
    fn third(&self) -> u16 {
        match self {
            Target::Position { third, .. } | Target::Patterns(_, third) => *third,
            _ => 0,
        }
    }

    /// Whether a game whose stretch at the position's state has `mark`
    /// (the pawns' files where the position's state keeps them, else the
    /// files where its pawns may have come to their third rank) could be
    /// at what is looked for.
    #[inline]
    fn fits(&self, mark: Option<u16>) -> bool {
        match (mark, self.kept_files()) {
            (None, _) => true,
            (Some(files), Some(want)) => files == want,
            (Some(third), None) => third & self.third() == self.third(),
        }
    }

    /// The pawns' files of a position whose state the section keeps them
    /// for ([`state::keeps_files`]).
    #[inline]
    fn kept_files(&self) -> Option<u16> {
        match self {
            Target::Position { state, files, .. } if state::keeps_files(state) => Some(*files),
            _ => None,
        }
    }

    /// Whether position `pos` is what is looked for.
    fn matches(&self, pos: &Chess) -> bool {
        match self {
            Target::Any => true,
            Target::Position { key: k, state, .. } => {
                pos.board().occupied().count() == state_pieces(state) && key(pos) == *k
            }
            Target::Material(m) => State::of(pos).same_material(*m),
            Target::Imbalance(d) => state::imbalance_of(&State::of(pos).material()) == *d,
            Target::Patterns(ps, _) => ps.iter().any(|p| p.matches(pos.board())),
        }
    }

    /// Whether a game in state `s` could be at what is looked for.
    #[inline]
    fn possible(&self, s: &State) -> bool {
        match self {
            Target::Any => true,
            Target::Position { state, .. } => s == state,
            Target::Material(m) => s.same_material(*m),
            Target::Imbalance(d) => state::imbalance_of(&s.material()) == *d,
            Target::Patterns(ps, _) => ps.iter().any(|p| p.possible(s)),
        }
    }

    /// Whether a game in state `s` could still come to what is looked for
    /// (home pawns never come back; pieces only by promotion).
    #[inline]
    fn could_follow(&self, s: &State) -> bool {
        match self {
            Target::Position { state, .. } => s.can_reach(state),
            Target::Material(m) => s.can_reach(m),
            Target::Patterns(ps, _) => ps.iter().any(|p| s.can_reach(&p.least)),
            _ => true,
        }
    }

    /// Whether a game may come to what is looked for after its early
    /// changes ([`index::EARLY_TAKES`]): whether it may have as few men as
    /// a game has after them (32 at most where it leaves the tree, less
    /// the pieces they take).
    fn after_early_changes(&self) -> bool {
        match self {
            Target::Position { state, .. } => state_pieces(state) + index::EARLY_TAKES < 32,
            _ => true,
        }
    }

    /// Whether the state alone decides (no position need be looked at).
    fn by_state(&self) -> bool {
        matches!(
            self,
            Target::Any | Target::Material(_) | Target::Imbalance(_)
        )
    }
}

/// The number of pieces on a board in state `s` (kings included).
fn state_pieces(s: &State) -> usize {
    2 + s
        .material()
        .iter()
        .flatten()
        .map(|&n| usize::from(n))
        .sum::<usize>()
}

/// The filters, read.
struct Filter {
    white: Option<String>,
    black: Option<String>,
    player: Option<String>,
    min_elo: Option<u32>,
    max_elo: Option<u32>,
    result: Option<u8>,
    from: Option<u32>,
    to: Option<u32>,
    event: Option<String>,
    eco: Option<String>,
    opening: Option<String>,
    speed: Option<u8>,
}

/// A date bound: `yyyy`, `yyyy.mm` or `yyyy.mm.dd`; `last` fills what is
/// not given with its end.
fn date_bound(text: &str, last: bool) -> Result<u32, ArchiveError> {
    let parts: Vec<&str> = text.trim().split(['.', '-', '/']).collect();
    let num = |i: usize, most: u32| -> Result<Option<u32>, ArchiveError> {
        parts
            .get(i)
            .map(|p| {
                p.parse::<u32>()
                    .ok()
                    .filter(|&v| v <= most)
                    .ok_or_else(|| bad(format!("bad date {text:?}: write yyyy.mm.dd")))
            })
            .transpose()
    };
    let year = num(0, 9999)?.ok_or_else(|| bad(format!("bad date {text:?}")))?;
    let month = num(1, 12)?.unwrap_or(if last { 12 } else { 1 });
    let day = num(2, 31)?.unwrap_or(if last { 31 } else { 1 });
    Ok(year * 10_000 + month * 100 + day)
}

impl Filter {
    fn of(q: &Query) -> Result<Filter, ArchiveError> {
        let lower = |s: &Option<String>| s.as_ref().map(|s| s.trim().to_lowercase());
        let result = q
            .result
            .as_deref()
            .map(|r| match r.trim() {
                "1-0" => Ok(1),
                "1/2-1/2" | "1/2" | "draw" => Ok(2),
                "0-1" => Ok(3),
                other => Err(bad(format!("bad result {other:?}: 1-0, 0-1 or 1/2-1/2"))),
            })
            .transpose()?;
        let speed = q
            .speed
            .as_deref()
            .map(|s| {
                let s = s.trim().to_lowercase();
                SPEEDS
                    .iter()
                    .position(|&n| n == s)
                    .map(|i| i as u8 + 1)
                    .ok_or_else(|| bad(format!("bad speed {s:?}: one of {}", SPEEDS.join(", "))))
            })
            .transpose()?;
        Ok(Filter {
            white: lower(&q.white),
            black: lower(&q.black),
            player: lower(&q.player),
            min_elo: q.min_elo,
            max_elo: q.max_elo,
            result,
            from: q
                .from
                .as_deref()
                .map(|d| date_bound(d, false))
                .transpose()?,
            to: q.to.as_deref().map(|d| date_bound(d, true)).transpose()?,
            event: lower(&q.event),
            eco: q.eco.as_ref().map(|e| e.trim().to_uppercase()),
            opening: lower(&q.opening),
            speed,
        })
    }

    fn passes(&self, m: &Meta) -> bool {
        self.passes_names([&m.white, &m.black, &m.event, &m.eco, &m.opening])
            && self.passes_numbers(&m.numbers)
    }

    /// The filters on names: of White, Black, Event, ECO and the opening.
    fn passes_names(&self, [white, black, event, eco, opening]: [&str; 5]) -> bool {
        let has = |name: &str, part: &Option<String>| {
            part.as_ref()
                .is_none_or(|p| name.to_lowercase().contains(p.as_str()))
        };
        if !has(white, &self.white)
            || !has(black, &self.black)
            || !has(event, &self.event)
            || !has(opening, &self.opening)
        {
            return false;
        }
        if let Some(p) = &self.player
            && !white.to_lowercase().contains(p.as_str())
            && !black.to_lowercase().contains(p.as_str())
        {
            return false;
        }
        self.eco
            .as_ref()
            .is_none_or(|e| eco.to_uppercase().starts_with(e.as_str()))
    }

    /// The filters on numbers: ratings, result, speed, dates.
    fn passes_numbers(&self, m: &Numbers) -> bool {
        if self.min_elo.is_some() || self.max_elo.is_some() {
            let Some(elo) = m.rating() else {
                return false;
            };
            if self.min_elo.is_some_and(|e| elo < e) || self.max_elo.is_some_and(|e| elo > e) {
                return false;
            }
        }
        if self.result.is_some_and(|r| r != m.result) || self.speed.is_some_and(|s| s != m.speed) {
            return false;
        }
        if (self.from.is_some() || self.to.is_some()) && m.date / 10_000 == 0 {
            return false;
        }
        !(self.from.is_some_and(|d| m.date < d) || self.to.is_some_and(|d| m.date > d))
    }

    /// Whether no filter is given.
    fn is_empty(&self) -> bool {
        !self.names_filtered() && !self.numbers_filtered()
    }

    /// Whether a filter looks at the games' numbers: ratings, result,
    /// dates, speed.
    fn numbers_filtered(&self) -> bool {
        self.min_elo.is_some()
            || self.max_elo.is_some()
            || self.result.is_some()
            || self.from.is_some()
            || self.to.is_some()
            || self.speed.is_some()
    }

    fn names_filtered(&self) -> bool {
        self.white.is_some()
            || self.black.is_some()
            || self.player.is_some()
            || self.event.is_some()
            || self.eco.is_some()
            || self.opening.is_some()
    }

    /// Whether game `g` of the index passes: its names through `names`
    /// (each name id's bits: matches the White, Black, player, event, ECO,
    /// opening filter), its numbers straight from the columns.
    fn passes_index(&self, ix: &Index, g: usize, names: Option<(&[u8], &Names)>) -> bool {
        if let Some((names, n)) = names {
            let [w, b, e, eco] = [0, 1, 2, 3].map(|i| names[n.ids[i][g] as usize]);
            // The table's labels' bits after the names'.
            let o = names[n.opening(g).unwrap_or_else(|label| n.len() + label)];
            let ok = (self.white.is_none() || w & 1 != 0)
                && (self.black.is_none() || b & 2 != 0)
                && (self.player.is_none() || (w | b) & 4 != 0)
                && (self.event.is_none() || e & 8 != 0)
                && (self.eco.is_none() || eco & 16 != 0)
                && (self.opening.is_none() || o & 32 != 0);
            if !ok {
                return false;
            }
        }
        !self.numbers_filtered() || self.passes_numbers(&ix.numbers(g))
    }

    /// Each name's bits for [`Filter::passes_index`], then those of the
    /// openings of lichess's table (the opening filter's alone).
    fn name_bits(&self, names: &Names) -> Vec<u8> {
        let has = |name: &str, part: &Option<String>| {
            part.as_ref()
                .is_some_and(|p| name.to_lowercase().contains(p.as_str()))
        };
        let table = crate::opening::OpeningTable::lichess();
        let labels = (0..index::table_labels()).map(|l| {
            let name = table.label(l).map_or("", |o| o.name);
            u8::from(has(name, &self.opening)) << 5
        });
        (0..names.len())
            .map(|i| {
                let n = &*names.text(i);
                u8::from(has(n, &self.white))
                    | u8::from(has(n, &self.black)) << 1
                    | u8::from(has(n, &self.player)) << 2
                    | u8::from(has(n, &self.event)) << 3
                    | u8::from(
                        self.eco
                            .as_ref()
                            .is_some_and(|e| n.to_uppercase().starts_with(e.as_str())),
                    ) << 4
                    | u8::from(has(n, &self.opening)) << 5
            })
            .chain(labels)
            .collect()
    }
}
/// Reads `data` as a search section (its checksums not checked) and runs
/// queries of each kind on it alone: for the fuzz target
/// `read_search_index`. Whatever the bytes, no panic.
#[cfg(any(test, feature = "fuzzing"))]
pub(crate) fn fuzz_section(data: &[u8]) {
    let mut fetch = |at: u64, len: usize| -> Result<Vec<u8>, String> {
        let at = usize::try_from(at).map_err(|_| "far")?;
        data.get(at..at.saturating_add(len))
            .map(<[u8]>::to_vec)
            .ok_or_else(|| "past the end".into())
    };
    // The number of games the section says.
    let games = data
        .get(5..)
        .and_then(|mut rest| index::get_varint(&mut rest).ok())
        .unwrap_or(0);
    let Ok(ix) = Index::read_checked(&mut fetch, data.len() as u64, games, false) else {
        return;
    };
    // The numbers a frame at a time, before the filter's pass unpacks
    // them all.
    for g in 0..ix.games {
        let _ = ix.numbers(g);
    }
    let _ = ix.numbers_damage();
    let q = Query {
        player: Some("a".into()),
        min_elo: Some(2000),
        ..Query::default()
    };
    let filter = Filter::of(&q).expect("a valid filter");
    for target in [
        target_of(&Query::default()),
        target_of(&Query {
            moves: Some("e4 c5".into()),
            ..Query::default()
        }),
        target_of(&Query {
            material: Some("KRPKR".into()),
            ..Query::default()
        }),
        // An endgame: its pawns' files are read.
        target_of(&Query {
            fen: Some("8/4k3/4rp2/6p1/6P1/4RP2/4K3/8 w - - 0 1".into()),
            ..Query::default()
        }),
        // Every piece, pawns one step from home: how pawns left is read.
        target_of(&Query {
            fen: Some("rnbqkbnr/pp2pppp/2p5/3p4/3P4/2P5/PP2PPPP/RNBQKBNR w KQkq - 0 3".into()),
            ..Query::default()
        }),
        target_of(&Query {
            sub_fen: vec!["8/8/8/8/4P3/8/8/8".into()],
            ..Query::default()
        }),
    ] {
        let target = target.expect("a valid query");
        for next_moves in [false, true] {
            let _ = from_index(
                &ix,
                &target,
                &filter,
                next_moves,
                &mut 0,
                &mut fetch,
                Sink::Keep(&mut Vec::new(), 0),
            );
        }
    }
    if ix.load(Group::Names, &mut fetch).is_ok()
        && let Ok(n) = ix.names()
    {
        for g in 0..ix.games.min(3) {
            let _ = n.of_game(g);
        }
    }
    // The squares, read by a query only where many games are left.
    if ix.has_squares() && ix.load(Group::Squares, &mut fetch).is_ok() {
        for i in 0..12 {
            let _ = ix.squares(i);
        }
    }
}

/// A game's first ply at what is looked for, and the move it played
/// there: the game replayed while its moves are legal (a null move in the
/// mainline ends what is searched).
fn first_match(start: &Chess, moves: &[Move], target: &Target) -> Option<(u32, Option<Move>)> {
    let mut pos = start.clone();
    for ply in 0..=moves.len() {
        let next = moves.get(ply).copied().filter(|&m| pos.is_legal(m));
        if target.matches(&pos) {
            return Some((ply as u32, next));
        }
        pos.play_unchecked(next?);
    }
    None
}

/// A game found: its number from 0, ply, the move it played there (where
/// known), its tags that are numbers and its names (White, Black, Event,
/// ECO, opening; `None` until a query that gives them needs them).
struct Found0 {
    archive: u32,
    game: u32,
    ply: u32,
    next: Option<u16>,
    numbers: Numbers,
    /// Boxed: an explorer from the start keeps one a game, mostly
    /// without names (small is fast: 36 bytes, not 104). A game found in
    /// the index has none here but [`Found0::named`]: its names are read
    /// from the section when its hit is made.
    names: Option<Box<[Arc<str>; 5]>>,
    /// Whether the game's names are the search section's (read, and found
    /// whole, before the game was kept).
    named: bool,
}

impl Found0 {
    /// A game found in the index, its names not yet read.
    fn indexed(ix: &Index, game: usize, ply: u32, next: Option<u16>) -> Found0 {
        Found0 {
            archive: 0,
            game: game as u32,
            ply,
            next,
            numbers: ix.numbers(game),
            names: None,
            named: false,
        }
    }
}

fn result_text(r: u8) -> &'static str {
    ["", "1-0", "1/2-1/2", "0-1"][usize::from(r.min(3))]
}

fn date_text(d: u32) -> String {
    // One allocation a hit: `yyyy.mm.dd`, `?` for each digit of a part
    // that is unknown (0).
    let mut out = String::with_capacity(10);
    for (i, (v, width)) in [(d / 10_000, 4u32), (d / 100 % 100, 2), (d % 100, 2)]
        .into_iter()
        .enumerate()
    {
        if i > 0 {
            out.push('.');
        }
        for k in (0..width).rev() {
            out.push(if v == 0 {
                '?'
            } else {
                char::from(b'0' + (v / 10u32.pow(k) % 10) as u8)
            });
        }
    }
    out
}

/// The archive's search section (`None` where it has none), or why it
/// could not be read.
type SectionRead = (Option<Index>, Option<String>);

/// Reads the archive's search section, once: the archive keeps what was
/// read for its next query.
fn read_index<R: Read + Seek>(archive: &mut ArchiveReader<R>) -> Arc<SectionRead> {
    if let Some(kept) = archive.kept_section::<SectionRead>() {
        return kept;
    }
    let Some(len) = archive.section_len() else {
        let read = Arc::new((None, None));
        archive.keep_section(read.clone());
        return read;
    };
    let games = archive.games();
    let mut io_error = None;
    let mut fetch = |at: u64, n: usize| {
        archive.section_range(at, n).map_err(|e| {
            let why = e.to_string();
            io_error = Some(why.clone());
            why
        })
    };
    let read: SectionRead = match Index::read(&mut fetch, len, games) {
        Ok(index) => (Some(index), None),
        // An I/O error may pass: the next query reads again.
        Err(Unreadable::Damaged(why)) if io_error.is_some() => {
            return Arc::new((None, Some(format!("search section unreadable: {why}"))));
        }
        Err(why) => (None, Some(why.to_string())),
    };
    let read = Arc::new(read);
    archive.keep_section(read.clone());
    read
}

/// Searches `archives` for `query`: every game that passes the filters
/// and reaches what the query names, by archive and number, with the
/// first ply where it does. With [`Query::explore`], the opening
/// explorer: every move played from the position that the query names
/// (the standard start where it names none) by those games, counted from
/// each game's first time in the position: games, results, the mover's
/// mean rating, the latest and the highest-rated game; most played first
/// ([`Found::moves`]; [`Found::hits`] is then empty: the games are those
/// of the same query without `explore`).
///
/// # Errors
///
/// [`ArchiveError::Settings`] for a query that does not parse (a bad FEN,
/// an illegal move, a bad date) or that explores from no position (a
/// material, an imbalance or sub-FENs); a damaged block that a query must
/// decode. A damaged search section is no error: the games are decoded
/// instead, and [`Found::index_error`] says why.
pub fn find<R: Read + Seek>(
    archives: &mut [ArchiveReader<R>],
    query: &Query,
) -> Result<Found, ArchiveError> {
    if query.explore {
        return explore(archives, query);
    }
    let target = target_of(query)?;
    let filter = Filter::of(query)?;
    let (found, mut report) =
        search_all(archives, &target, &filter, query.threads, false, true, None)?;
    report.hits = hits_of(archives, found);
    report.reached = report.hits.len() as u64;
    Ok(report)
}

/// The hits of the games found, in their order: their names are shared
/// with the search sections' tables of names, each date with the other
/// games of that day (380,608 games from the start position, one
/// allocation a game fewer).
fn hits_of<R: Read + Seek>(archives: &mut [ArchiveReader<R>], found: Vec<Found0>) -> Vec<Hit> {
    let none: Arc<str> = Arc::from("");
    // Each archive's names, where its games found in the index have them
    // (read before any was kept).
    let sections: Vec<Arc<SectionRead>> = if found.iter().any(|f| f.named) {
        archives.iter_mut().map(read_index).collect()
    } else {
        Vec::new()
    };
    let tables: Vec<Option<&index::Names>> = sections
        .iter()
        .map(|s| s.0.as_ref().and_then(|ix| ix.names().ok()))
        .collect();
    let mut dates: HashMap<u32, Arc<str>> = HashMap::new();
    found
        .into_iter()
        .map(|mut f| {
            let table = tables.get(f.archive as usize).copied().flatten();
            let names = match (f.names.take(), table) {
                (Some(n), _) => *n,
                (None, Some(t)) if f.named => t.of_game(f.game as usize),
                _ => std::array::from_fn(|_| none.clone()),
            };
            let date = dates
                .entry(f.numbers.date)
                .or_insert_with(|| date_text(f.numbers.date).into())
                .clone();
            hit_of(&f, names, date)
        })
        .collect()
}

/// The hit of game `f`, with its names (White, Black, Event, ECO,
/// opening) and its date as text.
fn hit_of(f: &Found0, names: [Arc<str>; 5], date: Arc<str>) -> Hit {
    let [white, black, event, eco, opening] = names;
    Hit {
        archive: f.archive as usize,
        game: u64::from(f.game) + 1,
        ply: f.ply,
        result: result_text(f.numbers.result),
        date,
        white,
        black,
        event,
        eco,
        opening,
        white_elo: f.numbers.white_elo,
        black_elo: f.numbers.black_elo,
        rating: f.numbers.rating().map_or(0, |r| r as u16),
    }
}

/// [`find`] with [`Query::explore`].
fn explore<R: Read + Seek>(
    archives: &mut [ArchiveReader<R>],
    query: &Query,
) -> Result<Found, ArchiveError> {
    let (pos, line) = match position_and_line(query)? {
        Some(found) => found,
        None if matches!(target_of(query)?, Target::Any) => (Chess::default(), Vec::new()),
        None => {
            return Err(bad(
                "the explorer starts from a position: give a FEN or moves",
            ));
        }
    };
    let target = Target::of_position(&pos);
    let filter = Filter::of(query)?;
    let mover = pos.turn();
    let mut tallies = Tallies::new(mover);
    // With the games, each is kept (and named) and counted after; without,
    // each is counted as it is found, and none is kept.
    let (found, mut report) = if query.games {
        search_all(archives, &target, &filter, query.threads, true, true, None)?
    } else {
        search_all(
            archives,
            &target,
            &filter,
            query.threads,
            true,
            false,
            Some(&mut tallies),
        )?
    };
    if query.games {
        for f in &found {
            tallies.add(f);
        }
        report.hits = hits_of(archives, found);
    }
    report.reached = tallies.reached;
    let openings = OpeningTable::lichess();
    report.opening = if query.fen.is_some() {
        openings.get(&pos)
    } else {
        openings
            .classify(&Chess::default(), &line)
            .map(|n| Opening {
                eco: n.eco,
                name: n.name,
            })
    };
    let by_move = tallies.by_move;
    let mut moves = Vec::new();
    for (k, (mut stats, sum, rated, latest, best)) in by_move {
        let m =
            move_of(&pos, k).ok_or_else(|| bad("a game's move is not legal in the position"))?;
        stats.san = San::from_move(&pos, m).to_string();
        stats.uci = m.to_uci(CastlingMode::Standard).to_string();
        stats.mean_rating = (rated > 0).then(|| (sum / rated) as u32);
        stats.last_game = latest.map(|l| (l.1, l.2));
        stats.best_game = best.map(|b| (b.1, b.2));
        let mut after = pos.clone();
        after.play_unchecked(m);
        stats.opening = openings.get(&after);
        moves.push(stats);
    }
    moves.sort_by(|a, b| b.games.cmp(&a.games).then_with(|| a.san.cmp(&b.san)));
    report.moves = moves;
    Ok(report)
}

/// The games at `target` that pass `filter` in each archive, by archive
/// and number (with their names where `names`), and the report without
/// its hits; with `tallies`, each game is counted there as it is found,
/// and none is kept.
fn search_all<R: Read + Seek>(
    archives: &mut [ArchiveReader<R>],
    target: &Target,
    filter: &Filter,
    threads: usize,
    next_moves: bool,
    names: bool,
    mut tallies: Option<&mut Tallies>,
) -> Result<(Vec<Found0>, Found), ArchiveError> {
    let mut all = Vec::new();
    let mut report = Found::default();
    for (i, archive) in archives.iter_mut().enumerate() {
        let how = How {
            archive: i as u32,
            threads,
            next_moves,
            names,
        };
        let (mut found, r) = search(archive, target, filter, how, tallies.as_deref_mut())?;
        if all.is_empty() {
            all = found;
        } else {
            all.append(&mut found);
        }
        report.scanned |= r.scanned;
        report.decoded += r.decoded;
        report.not_searched += r.not_searched;
        if let Some(why) = r.index_error {
            report.index_error = Some(match report.index_error.take() {
                Some(before) => format!("{before}; archive {}: {why}", i + 1),
                None if i == 0 => why,
                None => format!("archive {}: {why}", i + 1),
            });
        }
    }
    Ok((all, report))
}

/// How one archive is searched: its number among the archives, the
/// threads that decode its games, whether each game's move at the target
/// is wanted, and whether its names are.
#[derive(Clone, Copy)]
struct How {
    archive: u32,
    threads: usize,
    next_moves: bool,
    names: bool,
}

/// The explorer's counts by move, added to as games are found: the order
/// does not matter (the latest and the best game are maxima), so a search
/// can count each game as it finds it instead of keeping a found game each
/// (the explorer from the start finds every game).
struct Tallies {
    mover: Color,
    /// A slot a move key, in a flat table: one look-up a game.
    slot: Vec<u16>,
    by_move: Vec<(u16, Tally)>,
    /// The games at the position, with a move there or without.
    reached: u64,
}

impl Tallies {
    fn new(mover: Color) -> Tallies {
        Tallies {
            mover,
            slot: vec![u16::MAX; 1 << 16],
            by_move: Vec::new(),
            reached: 0,
        }
    }

    /// The tally of move `k`, made where there is none.
    fn of(&mut self, k: u16) -> &mut Tally {
        let s = &mut self.slot[usize::from(k)];
        if *s == u16::MAX {
            *s = self.by_move.len() as u16;
            self.by_move.push((k, Tally::default()));
        }
        &mut self.by_move[usize::from(*s)].1
    }

    /// Counts game `f`.
    fn add(&mut self, f: &Found0) {
        self.add_game(f.archive, f.game, f.next, &f.numbers);
    }

    /// Counts game `game` (from 0) of archive `archive`, which plays
    /// `next` at the position (`None`: it ends there), with its numbers.
    #[inline]
    fn add_game(&mut self, archive: u32, game: u32, next: Option<u16>, numbers: &Numbers) {
        self.reached += 1;
        let Some(k) = next else { return };
        let elo = match self.mover {
            Color::White => numbers.white_elo,
            Color::Black => numbers.black_elo,
        };
        let (archive, game) = (archive as usize, u64::from(game) + 1);
        let mean = (u32::from(numbers.white_elo) + u32::from(numbers.black_elo)) / 2;
        let e = self.of(k);
        e.0.games += 1;
        match numbers.result {
            1 => e.0.white += 1,
            2 => e.0.draws += 1,
            3 => e.0.black += 1,
            _ => {}
        }
        if elo > 0 {
            e.1 += u64::from(elo);
            e.2 += 1;
        }
        latest(&mut e.3, (numbers.date, archive, game));
        best(&mut e.4, (mean, archive, game));
    }

    /// Adds `other`'s counts.
    fn merge(&mut self, other: Tallies) {
        self.reached += other.reached;
        for (k, t) in other.by_move {
            let e = self.of(k);
            e.0.games += t.0.games;
            e.0.white += t.0.white;
            e.0.draws += t.0.draws;
            e.0.black += t.0.black;
            e.1 += t.1;
            e.2 += t.2;
            if let Some(l) = t.3 {
                latest(&mut e.3, l);
            }
            if let Some(b) = t.4 {
                best(&mut e.4, b);
            }
        }
    }
}

/// The latest game: the greatest (date, archive, game).
fn latest(kept: &mut Option<(u32, usize, u64)>, new: (u32, usize, u64)) {
    if kept.is_none_or(|l| l <= new) {
        *kept = Some(new);
    }
}

/// The best game: the highest mean rating, the first game of those.
fn best(kept: &mut Option<(u32, usize, u64)>, new: (u32, usize, u64)) {
    if kept.is_none_or(|b| b.0 < new.0 || (b.0 == new.0 && (new.1, new.2) < (b.1, b.2))) {
        *kept = Some(new);
    }
}

/// The games at `target` that pass `filter`, by number (with their names
/// where `how.names`), and the report without its hits; with `tallies`,
/// each game is counted there and none is kept.
fn search<R: Read + Seek>(
    archive: &mut ArchiveReader<R>,
    target: &Target,
    filter: &Filter,
    how: How,
    tallies: Option<&mut Tallies>,
) -> Result<(Vec<Found0>, Found), ArchiveError> {
    let read = read_index(archive);
    let (index, mut index_error) = (&read.0, read.1.clone());
    // A column that does not read is a damaged section: every game is
    // decoded instead.
    let mut not_searched = 0;
    // The groups of columns a query needs are read from the archive when
    // it first needs them.
    let mut fetch = |at: u64, n: usize| archive.section_range(at, n).map_err(|e| e.to_string());
    // This archive's counts, added to `tallies` once its search is done (a
    // section found damaged halfway is searched again by decoding).
    let mut counted = tallies.as_ref().map(|t| Tallies::new(t.mover));
    let mut kept: Vec<Found0> = Vec::new();
    let answer = index.as_ref().and_then(|ix| {
        if counted.is_none() {
            // Room for every game: pages not written are never touched,
            // and growing copies it all again.
            kept.reserve(ix.games);
        }
        let sink = match &mut counted {
            Some(t) => Sink::Count(t, how.archive),
            None => Sink::Keep(&mut kept, how.archive),
        };
        from_index(
            ix,
            target,
            filter,
            how.next_moves,
            &mut not_searched,
            &mut fetch,
            sink,
        )
        .and_then(|candidates| {
            // The numbers of the games to decode, unpacked where they are
            // not yet: a frame that does not read is a damaged section,
            // found before anything is decoded (as one that the games found
            // looked at).
            if candidates.games.len() > FEW_FOUND {
                ix.ready_numbers()?;
            } else {
                for &g in &candidates.games {
                    ix.numbers(g);
                }
            }
            ix.numbers_damage()?;
            // The names of the games found, where they are given (those
            // of the games to decode too: a name that does not read means
            // a damaged section, found before anything is decoded).
            if how.names && (!kept.is_empty() || !candidates.games.is_empty()) {
                ix.load(Group::Names, &mut fetch)?;
                ix.names()?;
                for f in &mut kept {
                    f.named = true;
                }
            }
            Ok(candidates)
        })
        .map_err(|why| index_error = Some(format!("damaged search section: {why}")))
        .ok()
    });
    let scanning = answer.is_none();
    if scanning {
        kept.clear();
        counted = tallies.as_ref().map(|t| Tallies::new(t.mover));
    }
    let mut report = Found {
        scanned: scanning,
        index_error,
        not_searched: if scanning { 0 } else { not_searched },
        ..Found::default()
    };
    let candidates = answer.unwrap_or_else(|| Candidates {
        games: (0..archive.games() as usize).collect(),
        until: Vec::new(),
    });
    let threads = how.threads;
    let decoded = if let Some(ix) = index.as_ref().filter(|_| !scanning) {
        let mut decoded = decode_mainlines(archive, ix, &candidates, target, threads)?;
        if how.names {
            // The names were read before the games were decoded.
            for f in &mut decoded.0 {
                f.named = true;
            }
        }
        decoded
    } else {
        decode_candidates(archive, &candidates.games, target, threads, filter)?
    };
    report.decoded = decoded.1;
    report.not_searched += decoded.2;
    if let (Some(mut t), Some(all)) = (counted, tallies) {
        for mut f in decoded.0 {
            f.archive = how.archive;
            t.add(&f);
        }
        all.merge(t);
        return Ok((Vec::new(), report));
    }
    kept.extend(decoded.0.into_iter().map(|mut f| {
        f.archive = how.archive;
        f
    }));
    if !kept.is_sorted_by_key(|f| f.game) {
        kept.sort_by_key(|f| f.game);
    }
    Ok((kept, report))
}

/// The most games that the tree finds for which a query unpacks the
/// frames of their numbers alone ([`Index::numbers`]), not every game's
/// at once: a few dozen games spread over the archive reach most frames
/// (masters-pgnmentor: 16,384 games a frame of results).
const FEW_FOUND: usize = 64;

/// The games a query decodes, in the archive's order.
struct Candidates {
    games: Vec<usize>,
    /// Those of `games`, in order, that can only be at what is looked for
    /// up to a ply of [`index::SQUARES_CUTS`] (their pieces' squares after
    /// it rule it out), with that ply: decoded no further.
    until: Vec<(usize, u32)>,
}

/// A position's ply, counted from a game's start at move 1 with White to
/// move (the start of every game the search section indexes).
fn ply_of(pos: &Chess) -> u32 {
    (pos.fullmoves().get() - 1) * 2 + u32::from(pos.turn().is_black())
}

/// What the search section answers on its own: the games found (in the
/// tree, or by their state alone) and the games to decode; games stored
/// as text are counted in `not_searched`.
fn from_index(
    ix: &Index,
    target: &Target,
    filter: &Filter,
    next_moves: bool,
    not_searched: &mut u64,
    fetch: &mut Fetch<'_>,
    mut sink: Sink<'_>,
) -> Result<Candidates, String> {
    let mut candidates: Vec<usize> = Vec::new();
    if filter.names_filtered() {
        ix.load(Group::Names, fetch)?;
    }
    let names = filter.names_filtered().then(|| ix.names()).transpose()?;
    let bits = names.map(|n| filter.name_bits(n));
    let names = bits.as_deref().zip(names);
    let filtered = !filter.is_empty();
    let mut hit = vec![u32::MAX; ix.games];
    let mut next = vec![NO_MOVE; ix.games];
    // The nodes whose state could still come to the target: a game that
    // leaves the tree at another never does (a bit a node, so that most
    // games are ruled out without their states).
    let mut reachable = vec![0u64; ix.node_move.len().div_ceil(64)];
    // The state of each node the walk reaches ([`State::bits`]), where a
    // game that leaves the tree there starts its states.
    let mut walked = vec![0u64; ix.node_move.len()];
    let matched = tree_walk(ix, target, (&mut reachable, &mut walked));
    // A position of the tree: every game that reaches it is on the tree
    // there, on its own line or where it comes back to the tree.
    let on_tree = matches!(target, Target::Position { .. }) && !matched.is_empty();
    // Material decides, and its plies give where: read only then.
    let by_plies = target.by_state() && !next_moves;
    // More than a few games found.
    let many = |hit: &[u32]| {
        hit.iter()
            .filter(|&&h| h != u32::MAX)
            .nth(FEW_FOUND)
            .is_some()
    };
    // The games below the nodes found (one pass through the games) and
    // then every game's numbers where they are to be looked at whole (the
    // filters look at them, a material's plies, or more than a few games
    // are found on the tree), on one thread; on the other, the stretches
    // back on the tree, for a position of the tree that is not the root's
    // (whose games are all below it but those from another start).
    let stretches = on_tree && matched.first() != Some(&0);
    if stretches {
        ix.load(Group::Reentries, fetch)?;
    }
    // The numbers are looked at whole whatever is found: also at the
    // start position, where every game is found below the root, unpacked
    // while the games are.
    let numbers_whole = filter.numbers_filtered() || by_plies;
    let every_game = on_tree && matched.first() == Some(&0) && ix.games > FEW_FOUND;
    // Unpacked beside the games where that is known now (a thread that
    // waited for the other's unpacking would leave it alone at it).
    let numbers_now = !stretches && (numbers_whole || every_game);
    let (numbers, unpacked) = threads::join(
        || {
            games_below(ix, &matched, &mut hit, &mut next, next_moves);
            if !numbers_now && (numbers_whole || (on_tree && many(&hit))) {
                ix.ready_numbers()?;
            }
            Ok::<_, String>(())
        },
        || {
            if stretches {
                ix.ready_reentries()
            } else if numbers_now {
                ix.ready_numbers()
            } else {
                Ok(())
            }
        },
    );
    numbers?;
    unpacked?;
    // The stretches matter only for games not found on their own line
    // (at the start, none but those from another start).
    let pending = || {
        (0..ix.games).any(|g| {
            hit[g] == u32::MAX && (ix.flags[g] == INDEXED || index::from_another_start(ix.flags[g]))
        })
    };
    // Games after their nodes are ruled out by their states: none where
    // the tree found every game (the filters alone: every game at the
    // root), whose states are then not read.
    let by_states = !on_tree && pending();
    // Every game's numbers at once where the filters look at them or the
    // games found are many (the tree's, or a material's); else the
    // frames of the games found alone, as they are found.
    let mut whole = numbers_whole || (!by_states && many(&hit));
    if on_tree {
        if pending() {
            ix.load(Group::Reentries, fetch)?;
            // The numbers unpacked on the pool while the stretches are
            // read through, where the tree's games are many already.
            let (reentries, numbers) = threads::join(
                || ix.reentry_hits(&matched, &mut hit, &mut next, next_moves),
                || if whole { ix.ready_numbers() } else { Ok(()) },
            );
            reentries?;
            numbers?;
            whole = !whole && many(&hit);
        }
    } else if by_states {
        ix.load(Group::Changes, fetch)?;
    }
    // A game's later changes, where it could come to what is looked for
    // after its early ones (all of them for the plies of a material).
    let later = by_states && (by_plies || target.after_early_changes());
    if later {
        ix.load(Group::LaterChanges, fetch)?;
    }
    if whole {
        ix.ready_numbers()?;
    }
    // What each game's columns say, worked out on the pool where its
    // changes of state are read (most games' work), then handed on in the
    // games' order.
    let verdict = |g: usize| -> Result<Verdict, String> {
        if ix.flags[g] & TEXT != 0 {
            return Ok(Verdict::Text);
        }
        if filtered && !filter.passes_index(ix, g, names) {
            return Ok(Verdict::Out);
        }
        if hit[g] != u32::MAX {
            return Ok(Verdict::Hit);
        }
        let from = index::from_another_start(ix.flags[g]);
        if !from && ix.flags[g] != INDEXED {
            // From a start whose state the section does not keep.
            return Ok(Verdict::Decode);
        }
        if on_tree {
            // Not on the tree there, nor where it comes back to it.
            return Ok(Verdict::Out);
        }
        if !from {
            let exit = ix.exits[g] as usize;
            if reachable[exit / 64] & (1 << (exit % 64)) == 0 {
                return Ok(Verdict::Out);
            }
        }
        settle_after_node(ix, target, g, (by_plies, next_moves, from), &walked)
    };
    let hit_of = |g: usize| {
        let next = (next[g] != NO_MOVE).then_some(next[g]);
        Found0::indexed(ix, g, hit[g], next)
    };
    if on_tree && let Sink::Count(tallies, archive) = &mut sink {
        // The explorer at a position of the tree counts every game found
        // there (all of them at the start): counted a range of games a
        // thread, the counts added up in the games' order (a tally is
        // sums, and the latest and best games by their dates, ratings
        // and numbers: the same whichever thread counted them). On the
        // masters file the count was a fifth of the explorer's work at
        // the start (issue 68).
        let archive = *archive;
        let parts = in_ranges(ix.games, |games| -> Result<_, String> {
            let (mut part, mut texts, mut decode) = (Tallies::new(tallies.mover), 0, Vec::new());
            for g in games {
                match verdict(g)? {
                    Verdict::Text => texts += 1,
                    // Counted as it is, without the record a kept game
                    // has: at the start position a third of the count's
                    // instructions (issue 68).
                    Verdict::Hit => {
                        let next = (next[g] != NO_MOVE).then_some(next[g]);
                        part.add_game(archive, g as u32, next, &ix.numbers(g));
                    }
                    Verdict::Decode => decode.push(g),
                    Verdict::Out | Verdict::At(_) => {}
                }
            }
            Ok((part, texts, decode))
        })?;
        for (part, texts, decode) in parts {
            tallies.merge(part);
            *not_searched += texts;
            candidates.extend(decode);
        }
        return by_squares(ix, target, candidates, fetch);
    }
    let mut take = |g: usize, v: Verdict| {
        let found = match v {
            Verdict::Text => {
                *not_searched += 1;
                return;
            }
            Verdict::Out => return,
            Verdict::Hit => hit_of(g),
            Verdict::At(ply) => Found0::indexed(ix, g, ply, None),
            Verdict::Decode => {
                candidates.push(g);
                return;
            }
        };
        sink.give(found);
    };
    if on_tree {
        for g in 0..ix.games {
            take(g, verdict(g)?);
        }
    } else {
        // The columns the workers share, read here first (the plies and
        // the pawns' files only where they are looked at).
        let files = target.kept_files().is_some();
        if by_states {
            if by_plies || files {
                ix.load(Group::Plies, fetch)?;
            }
            ix.read_states(by_plies, files, target.third() != 0, later)?;
        }
        for (g, v) in settled(ix.games, verdict)? {
            take(g, v);
        }
    }
    by_squares(ix, target, candidates, fetch)
}

/// A query reads the squares the pieces stood on (where the section keeps
/// them) to rule out games left to decode where those games, times this,
/// are at least the archive's games times the columns it would read (one
/// a piece it has): reading a column costs in proportion to the
/// archive's games, decoding a game that a search finds costs most of a
/// block. On the masters file (380,608 games) that is 115 games for a
/// position with all twelve pieces: one that leaves 71–76 games to decode
/// took 0.15 s without reading its twelve columns and 0.19 s with them,
/// one that leaves 162 0.22 s and 0.19 s; on online-broad (108,321
/// games) 33: 61 and 91 games took 0.12 s a process without the squares
/// and 0.07 s with them, 14 games 0.07 s either way (issue 68).
const GAMES_PER_CANDIDATE: u64 = 40_000;

/// Of the games to decode (`candidates`), those whose pieces stood, in
/// one part of their mainline after their node ([`index::SQUARES_CUTS`]),
/// on every square where a board looked for has them (a game at it at its
/// node or before is found on the tree, and is no candidate), each with
/// the last ply of its last such part where a later part follows: where
/// the section keeps the squares and enough games are left to pay for
/// reading them. A game from another start whose states the section does
/// not keep is kept.
fn by_squares(
    ix: &Index,
    target: &Target,
    candidates: Vec<usize>,
    fetch: &mut Fetch<'_>,
) -> Result<Candidates, String> {
    let all = |games| Candidates {
        games,
        until: Vec::new(),
    };
    let boards: Vec<[u64; 12]> = match target {
        Target::Position { board, .. } => vec![index::piece_squares(board)],
        Target::Patterns(ps, _) => ps.iter().map(|p| index::piece_squares(&p.board)).collect(),
        _ => return Ok(all(candidates)),
    };
    // Only the columns of the pieces some board has, unpacked at once.
    let pieces: Vec<usize> = (0..12)
        .filter(|&i| boards.iter().any(|b| b[i] != 0))
        .collect();
    // In u64: the products pass 32 bits (the web page's usize).
    let worth =
        candidates.len() as u64 * GAMES_PER_CANDIDATE >= pieces.len() as u64 * ix.games as u64;
    if !ix.has_squares() || !worth {
        return Ok(all(candidates));
    }
    ix.load(Group::Squares, fetch)?;
    #[cfg(feature = "parallel")]
    let columns: Vec<Result<&[u64], String>> = {
        use rayon::prelude::*;
        pieces.par_iter().map(|&i| ix.squares(i)).collect()
    };
    #[cfg(not(feature = "parallel"))]
    let columns: Vec<Result<&[u64], String>> = pieces.iter().map(|&i| ix.squares(i)).collect();
    let columns = columns.into_iter().collect::<Result<Vec<_>, _>>()?;
    // Whether the game's pieces stood on a board's squares in the part of
    // its moves whose squares are the `w`th of each column.
    let stood = |w: usize| {
        boards.iter().any(|b| {
            pieces
                .iter()
                .zip(&columns)
                .all(|(&i, col)| col[w] & b[i] == b[i])
        })
    };
    let mut kept = all(Vec::new());
    for g in candidates {
        let from = index::from_another_start(ix.flags[g]);
        if !from && ix.flags[g] != INDEXED {
            kept.games.push(g);
            continue;
        }
        let Some(last) = (0..index::SQUARES_PARTS)
            .rev()
            .find(|&k| stood(k * ix.games + g))
        else {
            continue;
        };
        kept.games.push(g);
        // A game from another start is decoded to its end: its parts are
        // cut at plies from its start, the decoder's cuts at move numbers.
        if let Some(&cut) = index::SQUARES_CUTS.get(last)
            && !from
        {
            kept.until.push((g, cut));
        }
    }
    Ok(kept)
}

/// What the search section says of one game.
#[derive(Clone, Copy)]
enum Verdict {
    /// Stored as text: not searched.
    Text,
    /// Not at what is looked for (or filtered out).
    Out,
    /// Found on the tree (its ply in `hit`).
    Hit,
    /// Found after the tree, at this ply.
    At(u32),
    /// To decode.
    Decode,
}

/// Game `g` after it leaves the tree (`from`: a game from another start,
/// from its start): does a state it comes to hold what is looked for? The
/// first (the state where it leaves, or its start's) or a later one. (The
/// plies of the changes of material only where the state decides.) A
/// position and a material are compared as numbers (most of a query's
/// time where few games are ruled out at their nodes: an endgame, a
/// material).
fn settle_after_node(
    ix: &Index,
    target: &Target,
    g: usize,
    (by_plies, next_moves, from): (bool, bool, bool),
    walked: &[u64],
) -> Result<Verdict, String> {
    let game = (g, walked);
    let settled = match target {
        Target::Position { state: t, .. } => {
            settle_states(ix, target, game, by_plies, |s| s.can_reach(t), |s| s == t)?
        }
        Target::Material(m) => settle_states(
            ix,
            target,
            game,
            by_plies,
            |s| s.can_reach(m),
            |s| s.same_material(*m),
        )?,
        _ => settle_states(
            ix,
            target,
            game,
            by_plies,
            |s| target.could_follow(s),
            |s| target.possible(s),
        )?,
    };
    // Its states read could still come to it, and more may follow.
    let Some((first, later, since)) = settled else {
        return Ok(Verdict::Decode);
    };
    if !first && !later {
        return Ok(Verdict::Out);
    }
    let by_state = target.by_state() && !next_moves;
    if from {
        // Where the state decides, its first such state's ply (its
        // start's: 0); else what its start is, the section does not say.
        return Ok(match (by_state, first) {
            (false, _) => Verdict::Decode,
            (true, true) => Verdict::At(0),
            (true, false) => Verdict::At(since),
        });
    }
    if later && by_state {
        // Material decides: the ply of the change of material that made
        // it (the state where the game leaves the tree is the tree's).
        return Ok(Verdict::At(since));
    }
    // The position after it leaves the tree (the tree's line replayed):
    // made once, for either use below.
    let position_target = matches!(target, Target::Position { .. });
    let exit = (!later || position_target)
        .then(|| ix.after_exit(g))
        .flatten();
    if !later {
        // Only the state where it leaves: the ply after is known from
        // the tree and the move it plays there.
        let Some((pos, ply, changes)) = &exit else {
            return Ok(Verdict::Out);
        };
        if *changes {
            return Ok(Verdict::Out);
        }
        if !next_moves && target.matches(pos) {
            return Ok(Verdict::At(*ply));
        }
    }
    // Where its pawns cannot go on to the position's (nor its bishops) it
    // never comes to it: its positions up to there are the tree's.
    if let Target::Position { board, .. } = target
        && let Some((pos, _, _)) = &exit
        && !state::can_advance(pos.board(), board)
    {
        return Ok(Verdict::Out);
    }
    Ok(Verdict::Decode)
}

/// [`settle`] of game `g`'s states after its node, with the plies of its
/// changes of material (`by_plies`) or the marks that the target needs;
/// `None` where the states read could all still come to what is looked
/// for, none is at it, and more may follow them (its later changes not
/// read: [`Index::states`]).
#[inline]
fn settle_states(
    ix: &Index,
    target: &Target,
    (g, walked): (usize, &[u64]),
    by_plies: bool,
    could: impl Fn(&State) -> bool,
    possible: impl Fn(&State) -> bool,
) -> Result<Option<(bool, bool, u32)>, String> {
    let ((first, later, since, through), open) = if by_plies {
        let (states, open) = ix.states_with_plies(g, walked)?;
        let states = states.map(|(s, p)| (s, p, None));
        (settle(target, states, could, possible), open)
    } else if target.kept_files().is_some() {
        let (states, open) = ix.states_with_files(g, walked)?;
        let states = states.map(|(s, f)| (s, 0, f));
        (settle(target, states, could, possible), open)
    } else if target.third() != 0 {
        let (states, open) = ix.states_with_third(g, walked)?;
        let states = states.map(|(s, m)| (s, 0, Some(m)));
        (settle(target, states, could, possible), open)
    } else {
        let (states, open) = ix.states(g, walked)?;
        let states = states.map(|s| (s, 0, None));
        (settle(target, states, could, possible), open)
    };
    Ok((!(open && through && !later)).then_some((first, later, since)))
}

/// The games below `n` whose verdict `f` is not [`Verdict::Out`], with
/// it, in order: on the rayon pool where the `parallel` feature builds
/// one, in runs of games so that each worker reads its games' columns in
/// order. Off the tree most games are out by their node alone: a verdict
/// for each of the masters file's 380,608 games was a vector of 3 MB,
/// gone through on one thread (issue 68).
fn settled(
    n: usize,
    f: impl Fn(usize) -> Result<Verdict, String> + Sync,
) -> Result<Vec<(usize, Verdict)>, String> {
    let kept = |g: usize| match f(g) {
        Ok(Verdict::Out) => None,
        v => Some(v.map(|v| (g, v))),
    };
    #[cfg(feature = "parallel")]
    {
        use rayon::prelude::*;
        (0..n)
            .into_par_iter()
            .with_min_len(4096)
            .filter_map(kept)
            .collect()
    }
    #[cfg(not(feature = "parallel"))]
    {
        (0..n).filter_map(kept).collect()
    }
}

/// The games in `0..n`, split into a range a thread
/// ([`threads::parallel_threads`]: one where there is one thread, or the
/// games are few), each given to `f`: its answers in the ranges' order.
fn in_ranges<T: Send>(
    n: usize,
    f: impl Fn(std::ops::Range<usize>) -> Result<T, String> + Sync,
) -> Result<Vec<T>, String> {
    #[cfg(feature = "parallel")]
    {
        use rayon::prelude::*;
        let parts = if n < 4096 {
            1
        } else {
            threads::parallel_threads().max(1)
        };
        let step = n.div_ceil(parts).max(1);
        (0..parts)
            .into_par_iter()
            .map(|i| f(i * step..((i + 1) * step).min(n)))
            .collect()
    }
    #[cfg(not(feature = "parallel"))]
    {
        Ok(vec![f(0..n)?])
    }
}

/// Where a search of the index gives the games it finds: kept, in the
/// games' order, or counted by the explorer (with the archive's number).
enum Sink<'a> {
    Keep(&'a mut Vec<Found0>, u32),
    Count(&'a mut Tallies, u32),
}

impl Sink<'_> {
    fn give(&mut self, mut f: Found0) {
        match self {
            Sink::Keep(kept, archive) => {
                f.archive = *archive;
                kept.push(f);
            }
            Sink::Count(tallies, archive) => {
                f.archive = *archive;
                tallies.add(&f);
            }
        }
    }
}

/// Whether, of a game's `states` after it leaves the tree (each with the
/// first ply of its material, and a mark where the section has one: its
/// pawns' files, or the files where its pawns may have come to their third
/// rank), the first could hold `target`, whether a later one could, that
/// later one's ply, and whether every state was looked at without one
/// (each could still come to the target);
/// the states after one that cannot come to the target are not looked at.
/// `could` says whether a state could still come to the target, and
/// `possible` whether a state could hold it.
#[inline]
fn settle(
    target: &Target,
    states: impl Iterator<Item = (State, u32, Option<u16>)>,
    could: impl Fn(&State) -> bool,
    possible: impl Fn(&State) -> bool,
) -> (bool, bool, u32, bool) {
    let mut first = false;
    for (i, (s, from, mark)) in states.enumerate() {
        if !could(&s) {
            return (first, false, 0, false);
        }
        if possible(&s) && target.fits(mark) {
            if i > 0 {
                return (first, true, from, false);
            }
            first = true;
        }
    }
    (first, false, 0, true)
}

/// A node of the tree at what is looked for: its subtree and depth, and
/// its children, for the move each game below it played there.
struct Below {
    node: usize,
    end: usize,
    depth: u32,
    kids: Vec<usize>,
}

impl Below {
    fn of(ix: &Index, node: usize) -> Below {
        let end = ix.node_end[node] as usize;
        let mut kids = Vec::new();
        let mut c = node + 1;
        while c < end {
            kids.push(c);
            c = ix.node_end[c] as usize;
        }
        Below {
            node,
            end,
            depth: u32::from(ix.node_depth[node]),
            kids,
        }
    }

    /// Game `g` (below this node) is here, unless it is at a shallower
    /// node: its ply (into `hit`) and, with `next_moves`, its move from
    /// here (into `next`).
    fn hit(&self, ix: &Index, g: usize, hit: &mut u32, next: &mut u16, next_moves: bool) {
        if *hit <= self.depth {
            return;
        }
        *hit = self.depth;
        if next_moves {
            let e = ix.exits[g] as usize;
            *next = if e == self.node {
                ix.exit_moves[g]
            } else {
                let i = self.kids.partition_point(|&c| c <= e) - 1;
                ix.node_move[self.kids[i]]
            };
        }
    }
}

/// The nodes of the opening tree at what is looked for (for a position,
/// the nodes at it: the answer), each node the walk reaches marked in
/// `reachable` with its state in `walked`. Positions are made only where
/// the target needs them; a subtree whose state cannot come to the
/// target is left.
fn tree_walk(
    ix: &Index,
    target: &Target,
    (reachable, walked): (&mut [u64], &mut [u64]),
) -> Vec<usize> {
    let positions = !target.by_state();
    let mut matched = Vec::new();
    // The positions made so far (a node and its position): a node's
    // position is made only where its state may hold what is looked for,
    // from the nearest such node above it (on the masters file, a
    // position of move 12 visits 92,389 nodes, 50 of them with its state).
    let mut known: Vec<(usize, Option<Chess>)> = vec![(0, Some(Chess::default()))];
    let mut path = Vec::new();
    // Each node to visit, its state and the place in `known` of the
    // nearest node above it (or itself) with a position.
    let mut stack = vec![(0usize, index::root_state(), 0usize)];
    while let Some((n, node_state, mut anchor)) = stack.pop() {
        let s = node_state.0;
        if !target.could_follow(&s) {
            continue;
        }
        reachable[n / 64] |= 1 << (n % 64);
        walked[n] = s.bits();
        if target.possible(&s) {
            let found = if positions {
                let (top, from) = &known[anchor];
                let pos = from
                    .as_ref()
                    .and_then(|from| ix.position_at(n, *top, from, &mut path));
                let found = pos.as_ref().is_some_and(|p| target.matches(p));
                known.push((n, pos));
                anchor = known.len() - 1;
                found
            } else {
                true
            };
            if found {
                matched.push(n);
                if !matches!(target, Target::Position { .. }) {
                    continue;
                }
                // A position may come again below (pieces moved there
                // and back): games that come back to the tree there
                // reach it too.
            }
        }
        let end = ix.node_end[n] as usize;
        let mut c = n + 1;
        while c < end {
            stack.push((c, ix.child_state(node_state, c), anchor));
            c = ix.node_end[c] as usize;
        }
    }
    matched
}

/// The games below the nodes found (`matched`), each at the shallowest
/// of them above its node: one pass through the games' nodes. The
/// subtrees that no other found node holds are disjoint ranges of nodes;
/// where there are more than two, a bit a node marks them, so that a game
/// is looked up among them only where its node is in one. On the masters
/// file a position of 17 to 80 nodes took 6-8 ms of the explorer's 45-60
/// sorting the games by node first, and one of 5 nodes 5 ms checking each
/// game against each node (issue 68).
fn games_below(ix: &Index, matched: &[usize], hit: &mut [u32], next: &mut [u16], next_moves: bool) {
    let mut tops = matched.to_vec();
    tops.sort_unstable();
    // In preorder a node's subtree is a range that holds those of the
    // nodes below it: the outermost found node is the shallowest.
    let mut outer: Vec<Below> = Vec::new();
    for n in tops {
        if outer.last().is_none_or(|b| n >= b.end) {
            outer.push(Below::of(ix, n));
        }
    }
    let at = |e: usize| {
        let i = outer.partition_point(|b| b.node <= e);
        i.checked_sub(1).map(|i| &outer[i]).filter(|b| e < b.end)
    };
    // No bits for one or two subtrees: the look-up is as short.
    let mut inside = Vec::new();
    if outer.len() > 2 {
        inside = vec![0u64; ix.node_move.len().div_ceil(64)];
        for b in &outer {
            let mut n = b.node;
            while n < b.end {
                if n % 64 == 0 && n + 64 <= b.end {
                    inside[n / 64] = u64::MAX;
                    n += 64;
                } else {
                    inside[n / 64] |= 1 << (n % 64);
                    n += 1;
                }
            }
        }
    }
    let marked =
        |e: usize| inside.is_empty() || inside.get(e / 64).is_some_and(|w| w >> (e % 64) & 1 != 0);
    // A run of games a worker: each game's ply and move are its own. At
    // the start position, where every game is below the root, this pass
    // took 6 ms of the masters file's 43 ms explorer on one thread while
    // the other waited (issue 68).
    let run = |(r, (hit, next)): (usize, (&mut [u32], &mut [u16]))| {
        let from = r * BELOW_RUN;
        for (i, (hit, next)) in hit.iter_mut().zip(next).enumerate() {
            let g = from + i;
            let e = ix.exits[g] as usize;
            if marked(e)
                && let Some(b) = at(e)
            {
                b.hit(ix, g, hit, next, next_moves);
            }
        }
    };
    #[cfg(feature = "parallel")]
    {
        use rayon::prelude::*;
        hit.par_chunks_mut(BELOW_RUN)
            .zip(next.par_chunks_mut(BELOW_RUN))
            .enumerate()
            .for_each(run);
    }
    #[cfg(not(feature = "parallel"))]
    hit.chunks_mut(BELOW_RUN)
        .zip(next.chunks_mut(BELOW_RUN))
        .enumerate()
        .for_each(run);
}

/// The games a worker of [`games_below`] takes at once (as many as the
/// explorer counts a thread at least: the tests' archives of 5,000 games
/// have two runs).
const BELOW_RUN: usize = 1 << 12;

/// The candidates' blocks, each with its games wanted (by index in the
/// block, to the game's number from 0).
fn candidate_blocks<R: Read + Seek>(
    archive: &ArchiveReader<R>,
    candidates: &[usize],
) -> Vec<(usize, HashMap<usize, usize>)> {
    let mut by_block: BTreeMap<usize, HashMap<usize, usize>> = BTreeMap::new();
    // The first game of each block, from 0.
    let starts: Vec<u64> = (0..archive.blocks().len())
        .map(|b| archive.first_game(b) - 1)
        .collect();
    for &game in candidates {
        let b = starts.partition_point(|&s| s <= game as u64) - 1;
        by_block
            .entry(b)
            .or_default()
            .insert(game - starts[b] as usize, game);
    }
    by_block.into_iter().collect()
}

/// What a block's decoding found: the games, and how many were decoded
/// and how many are stored as text.
type BlockFinds = (Vec<Found0>, u64, u64);

/// Runs `decode` on the blocks of the candidates, on `threads` workers, and
/// gathers what it finds, in the order of the blocks. `decode` takes a
/// block, its games wanted (index in the block to number in the archive)
/// and the codec.
fn decode_blocks<R: Read + Seek>(
    archive: &mut ArchiveReader<R>,
    candidates: &[usize],
    threads: usize,
    decode: impl Fn(
        &Block,
        &HashMap<usize, usize>,
        &dyn crate::GameCodec,
    ) -> Result<BlockFinds, ArchiveError>
    + Sync,
) -> Result<BlockFinds, ArchiveError> {
    let jobs = candidate_blocks(archive, candidates);
    let mut all: BlockFinds = (Vec::new(), 0, 0);
    if jobs.is_empty() {
        // No codec made, no workers started: most queries of a position
        // of the tree.
        return Ok(all);
    }
    let codec = archive.header().codec()?;
    let codec = codec.as_ref();
    let payloads = jobs
        .into_iter()
        .map(|(b, want)| archive.read_block(b).map(|block| (block, want)));
    Pipeline::with_threads(threads).ordered(
        payloads,
        |(block, want)| decode(&block, &want, codec),
        |r| {
            let (found, decoded, text) = r?;
            all.0.extend(found);
            all.1 += decoded;
            all.2 += text;
            Ok(())
        },
    )?;
    Ok(all)
}

/// Decodes the mainlines of the candidates that the search section could
/// not settle, block by block on the workers, each only until it is at
/// what is looked for (and the move it plays there), its state rules it
/// out or, for those of [`Candidates::until`], it is at their cut: the
/// games found (their names not yet read), the games decoded and
/// those stored as text.
fn decode_mainlines<R: Read + Seek>(
    archive: &mut ArchiveReader<R>,
    ix: &Index,
    candidates: &Candidates,
    target: &Target,
    threads: usize,
) -> Result<BlockFinds, ArchiveError> {
    decode_blocks(archive, &candidates.games, threads, |block, want, codec| {
        let mut finds: BlockFinds = (Vec::new(), 0, 0);
        let until = want.keys().max().copied().unwrap_or(0);
        // The games of the block that can only be at it up to a cut.
        let cuts: HashMap<usize, u32> = want
            .iter()
            .filter_map(|(&i, g)| {
                let at = candidates.until.binary_search_by_key(g, |&(g, _)| g);
                at.ok().map(|at| (i, candidates.until[at].1))
            })
            .collect();
        let keep = |i: usize, pos: &Chess| {
            cuts.get(&i).is_none_or(|&cut| ply_of(pos) < cut)
                && !target.matches(pos)
                && target.could_follow(&State::of(pos))
        };
        decode_mainlines_until(
            codec,
            block,
            &|g| want.contains_key(&g),
            &keep,
            &mut |g, mainline| {
                let Some(&game) = want.get(&g) else { return };
                let Some((start, moves)) = mainline else {
                    finds.2 += 1;
                    return;
                };
                finds.1 += 1;
                if let Some((ply, m)) = first_match(&start, &moves, target) {
                    finds
                        .0
                        .push(Found0::indexed(ix, game, ply, m.map(move_key)));
                }
            },
            until,
        )?;
        Ok(finds)
    })
}

/// Decodes every game (an archive without a usable search section), block
/// by block on the workers, and looks at their plies and tags: the games
/// found that pass `filter`, the games decoded, and the games stored
/// verbatim.
fn decode_candidates<R: Read + Seek>(
    archive: &mut ArchiveReader<R>,
    candidates: &[usize],
    target: &Target,
    threads: usize,
    filter: &Filter,
) -> Result<BlockFinds, ArchiveError> {
    decode_blocks(archive, candidates, threads, |block, want, codec| {
        let mut finds: BlockFinds = (Vec::new(), 0, 0);
        let until = want.keys().max().copied().unwrap_or(0);
        decode_records_until(
            codec,
            block,
            &|g| want.contains_key(&g),
            &mut |g, row| {
                let Some(&game) = want.get(&g) else { return };
                let GameRow::Record(record) = row else {
                    finds.2 += 1;
                    return;
                };
                finds.1 += 1;
                let meta = Meta::of(&record, filter.opening.is_some());
                if !filter.passes(&meta) {
                    return;
                }
                if let Some((ply, m)) = first_match(&record.start, &record.moves, target) {
                    let opening = meta.opening_of(&record);
                    finds.0.push(Found0 {
                        archive: 0,
                        game: game as u32,
                        ply,
                        next: m.map(move_key),
                        numbers: meta.numbers,
                        names: Some(Box::new([
                            meta.white, meta.black, meta.event, meta.eco, opening,
                        ])),
                        named: false,
                    });
                }
            },
            until,
        )?;
        Ok(finds)
    })
}

/// Adds a search section to the archive in `file` (replacing the one it
/// has), built from its games decoded on `threads` workers (0: one a
/// core), with each game's squares where `squares` says
/// ([`Settings::index_squares`](crate::files::Settings)), taking at most
/// `memory` bytes to build (0: 4 GiB; as
/// [`Settings::index_memory`](crate::files::Settings) counts them);
/// returns the section's size in bytes. `progress` is called after
/// each block with the stored bytes read so far and in all
/// ([`Progress::total_bytes`](crate::archive::pipeline::Progress)).
///
/// # Errors
///
/// A damaged archive (a damaged header, index or block: `decompress
/// --skip-damaged` reads what is left), an I/O error,
/// [`ArchiveError::IndexMemory`] as soon as the games would take more
/// memory than `memory` (the archive is left as it was), or
/// [`ArchiveError::Stopped`] where `progress` stops the run.
pub fn index(
    file: &mut std::fs::File,
    threads: usize,
    squares: bool,
    memory: u64,
    progress: OnProgress<'_>,
) -> Result<u64, ArchiveError> {
    let mut archive = ArchiveReader::open(&mut *file)?;
    if let Some(why) = archive.index_error().or(archive.header_error()) {
        return Err(ArchiveError::Index(why.to_owned()));
    }
    let codec = archive.header().codec()?;
    let codec = codec.as_ref();
    let mut builder = IndexBuilder::new(squares).limit(memory);
    let counts: Vec<usize> = archive.blocks().iter().map(|e| e.games as usize).collect();
    // An archive of more games than their records alone could take is
    // refused before any is decoded.
    if let Some(e) = builder.over_before(counts.iter().sum::<usize>() as u64) {
        return Err(e);
    }
    let sizes: Vec<u64> = archive.blocks().iter().map(|e| u64::from(e.len)).collect();
    let mut done = Progress {
        total_bytes: Some(sizes.iter().sum()),
        ..Progress::default()
    };
    let payloads = (0..counts.len()).map(|b| archive.read_block(b).map(|block| (b, block)));
    let pipeline = Pipeline::with_threads(threads);
    pipeline.ordered(
        payloads,
        |(b, block)| {
            let mut rows = Vec::new();
            decode_records(codec, &block, &|_| true, &mut |_, row| {
                rows.push(index::Summary::of(match &row {
                    GameRow::Record(r) => Some(r),
                    GameRow::Text(_) => None,
                }));
            })?;
            if rows.len() != counts[b] {
                return Err(ArchiveError::Damaged {
                    block: b as u64 + 1,
                    reason: "its games do not decode to the number it holds".into(),
                });
            }
            Ok((b, rows))
        },
        |rows| {
            let (b, rows) = rows?;
            done.games += rows.len() as u64;
            for s in rows {
                builder.add_summary(s);
            }
            if let Some(e) = builder.over() {
                return Err(e);
            }
            done.blocks += 1;
            done.bytes += sizes[b];
            match progress(&done) {
                std::ops::ControlFlow::Continue(()) => Ok(()),
                std::ops::ControlFlow::Break(()) => Err(ArchiveError::Stopped),
            }
        },
    )?;
    builder.weigh();
    if let Some(e) = builder.over() {
        return Err(e);
    }
    drop(archive);
    let bytes = builder.bytes();
    let len = bytes.len() as u64;
    crate::archive::replace_section(file, bytes)?;
    Ok(len)
}

#[cfg(test)]
mod tests {
    #[test]
    fn dates_are_written_with_question_marks_for_what_is_unknown() {
        use super::date_text;
        assert_eq!(date_text(20_210_723), "2021.07.23");
        assert_eq!(date_text(19_990_000), "1999.??.??");
        assert_eq!(date_text(0), "????.??.??");
        assert_eq!(date_text(8_000_105), "0800.01.05");
        assert_eq!(date_text(20_211_200), "2021.12.??");
    }
}
