//! Who plays and how fast: what the move model reads from a game's tags
//! besides its moves.

use std::sync::Arc;

/// The context of a game that the `model` codec conditions its moves on:
/// both players' ratings and the time control, read from the game's tags
/// (`WhiteElo`, `BlackElo`, `TimeControl`), and the clock readings of its
/// mainline (lichess's `[%clk]` comments, [`GameContext::with_clocks`]).
/// Any part may be missing; a game without tags has the
/// [default](GameContext::default) context, all unknown.
///
/// An encoder and its decoder must use the same context: the archive reads
/// it from the tags and the clock comments, which it decodes before the
/// moves.
///
/// ```
/// use chesspack::model::{GameContext, TimeControl};
///
/// let ctx = GameContext::from_tags([
///     ("WhiteElo", "1512"),
///     ("BlackElo", "?"),
///     ("TimeControl", "180+2"),
/// ]);
/// assert_eq!(ctx.white_elo, Some(1512));
/// assert_eq!(ctx.black_elo, None);
/// assert_eq!(ctx.time_control, Some(TimeControl::Clock { base: 180, increment: 2 }));
/// assert_eq!(GameContext::from_tags::<&str, &str>([]), GameContext::default());
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct GameContext {
    /// White's rating (`WhiteElo`), when it is a number from 1 to 4999.
    pub white_elo: Option<u16>,
    /// Black's rating (`BlackElo`), likewise.
    pub black_elo: Option<u16>,
    /// The time control (`TimeControl`).
    pub time_control: Option<TimeControl>,
    /// The mover's clock in seconds after each ply of the mainline, from
    /// the start the moves are coded from (empty: no clocks).
    clocks: Option<Arc<[Option<u32>]>>,
}

/// A game's time control, as a PGN `TimeControl` tag gives it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TimeControl {
    /// `base+increment`, in seconds (`base` alone: no increment).
    Clock {
        /// Seconds on each clock at the start.
        base: u32,
        /// Seconds added after each move.
        increment: u32,
    },
    /// `-`: no clock (correspondence).
    Unlimited,
}

/// Upper edges of the rating bands the model distinguishes: band 0 is
/// unknown, band `i + 1` is below `RATING_EDGES[i]`, the last band is at
/// or above the last edge.
const RATING_EDGES: [u16; 10] = [800, 1000, 1200, 1400, 1600, 1800, 2000, 2200, 2400, 2600];
/// The number of rating bands, unknown included.
pub(crate) const RATING_CLASSES: usize = RATING_EDGES.len() + 2;
/// The number of time-control classes, unknown included.
pub(crate) const SPEED_CLASSES: usize = 7;
/// Upper edges, in seconds, of the clock classes the model distinguishes:
/// class 0 is unknown, class `i + 1` is below `CLOCK_EDGES[i]`, the last
/// class at or above the last edge.
const CLOCK_EDGES: [u32; 6] = [5, 10, 20, 40, 80, 160];
/// The number of clock classes, unknown included.
pub(crate) const CLOCK_CLASSES: usize = CLOCK_EDGES.len() + 2;

impl GameContext {
    /// A context with both ratings and the time control unknown (as
    /// [`GameContext::default`]).
    pub const fn new() -> GameContext {
        GameContext {
            white_elo: None,
            black_elo: None,
            time_control: None,
            clocks: None,
        }
    }

    /// This context with the players' ratings.
    ///
    /// ```
    /// use chesspack::model::GameContext;
    ///
    /// let ctx = GameContext::new().with_ratings(Some(2100), None);
    /// assert_eq!((ctx.white_elo, ctx.black_elo), (Some(2100), None));
    /// ```
    #[must_use]
    pub const fn with_ratings(mut self, white: Option<u16>, black: Option<u16>) -> GameContext {
        self.white_elo = white;
        self.black_elo = black;
        self
    }

    /// This context with a time control.
    #[must_use]
    pub const fn with_time_control(mut self, time_control: Option<TimeControl>) -> GameContext {
        self.time_control = time_control;
        self
    }

    /// This context with the clock readings of the mainline: `clocks[i]`
    /// is the clock, in seconds, of the side that played ply `i` (from 0)
    /// right after it, as a `[%clk]` comment after the move gives it.
    /// Only the mainline's moves are coded in it: a variation's are coded
    /// without clocks.
    ///
    /// ```
    /// use chesspack::model::GameContext;
    ///
    /// let ctx = GameContext::new().with_clocks(vec![Some(60), Some(59), None]);
    /// assert_ne!(ctx, GameContext::new());
    /// assert_eq!(ctx.without_clocks(), GameContext::new());
    /// assert_eq!(GameContext::new().with_clocks(vec![None]), GameContext::new());
    /// ```
    #[must_use]
    pub fn with_clocks(mut self, clocks: Vec<Option<u32>>) -> GameContext {
        self.clocks = clocks.iter().any(Option::is_some).then(|| clocks.into());
        self
    }

    /// The clock readings of the mainline (see [`GameContext::with_clocks`];
    /// empty when there are none).
    pub(crate) fn clocks(&self) -> &[Option<u32>] {
        self.clocks.as_deref().unwrap_or(&[])
    }

    /// A hash of everything in this context (FNV-1a over a fixed layout,
    /// the same on every machine): what a game record checks its context
    /// against.
    pub(crate) fn fingerprint(&self) -> u64 {
        let mut b = Vec::with_capacity(16 + 4 * self.clocks().len());
        for elo in [self.white_elo, self.black_elo] {
            b.extend_from_slice(&elo.map_or(0, |e| e + 1).to_le_bytes());
        }
        match self.time_control {
            None => b.push(0),
            Some(TimeControl::Unlimited) => b.push(1),
            Some(TimeControl::Clock { base, increment }) => {
                b.push(2);
                b.extend_from_slice(&base.to_le_bytes());
                b.extend_from_slice(&increment.to_le_bytes());
            }
        }
        for c in self.clocks() {
            b.extend_from_slice(&c.map_or(u32::MAX, |c| c.min(u32::MAX - 1)).to_le_bytes());
        }
        crate::hash::fnv1a(&b)
    }

    /// This context without clock readings (for the moves of a variation).
    #[must_use]
    pub fn without_clocks(&self) -> GameContext {
        GameContext {
            clocks: None,
            ..self.clone()
        }
    }

    /// The context that a game's tag pairs give (names matched exactly, as
    /// PGN writes them; values that do not parse are unknown).
    pub fn from_tags<N, V>(tags: impl IntoIterator<Item = (N, V)>) -> GameContext
    where
        N: AsRef<[u8]>,
        V: AsRef<[u8]>,
    {
        let mut ctx = GameContext::new();
        for (name, value) in tags {
            let value = value.as_ref();
            match name.as_ref() {
                b"WhiteElo" => ctx.white_elo = parse_rating(value),
                b"BlackElo" => ctx.black_elo = parse_rating(value),
                b"TimeControl" => ctx.time_control = TimeControl::parse(value),
                _ => {}
            }
        }
        ctx
    }

    /// The clock class of the side to move and of its opponent after
    /// `plies` plies of the mainline: their clocks after their last moves
    /// (the base time before their first, when the time control gives
    /// it); class 0 (unknown) in a game without clocks.
    pub(crate) fn clock_classes(&self, plies: usize) -> (usize, usize) {
        let Some(clocks) = &self.clocks else {
            return (0, 0);
        };
        let base = match self.time_control {
            Some(TimeControl::Clock { base, .. }) => Some(base),
            _ => None,
        };
        let after = |back: usize| match plies.checked_sub(back) {
            Some(i) => clocks.get(i).copied().flatten(),
            None => base,
        };
        let class = |c: Option<u32>| {
            c.map_or(0, |c| {
                1 + CLOCK_EDGES.iter().filter(|&&edge| c >= edge).count()
            })
        };
        (class(after(2)), class(after(1)))
    }

    /// The rating band of the side to move (`white`: white is to move) and
    /// of its opponent, and the time-control class: the model's context
    /// inputs.
    pub(crate) fn classes(&self, white: bool) -> (usize, usize, usize) {
        let (mover, opponent) = if white {
            (self.white_elo, self.black_elo)
        } else {
            (self.black_elo, self.white_elo)
        };
        (
            rating_class(mover),
            rating_class(opponent),
            self.time_control.map_or(0, TimeControl::class),
        )
    }
}

fn parse_rating(value: &[u8]) -> Option<u16> {
    std::str::from_utf8(value)
        .ok()?
        .trim()
        .parse::<u16>()
        .ok()
        .filter(|r| (1..5000).contains(r))
}

fn rating_class(elo: Option<u16>) -> usize {
    elo.map_or(0, |r| {
        1 + RATING_EDGES.iter().filter(|&&edge| r >= edge).count()
    })
}

impl TimeControl {
    /// Parses a `TimeControl` tag value: `base+increment`, `base` or `-`
    /// (`None` for anything else, such as `?` or the moves/seconds form).
    ///
    /// ```
    /// use chesspack::model::TimeControl;
    ///
    /// assert_eq!(TimeControl::parse(b"60+0"), Some(TimeControl::Clock { base: 60, increment: 0 }));
    /// assert_eq!(TimeControl::parse(b"600"), Some(TimeControl::Clock { base: 600, increment: 0 }));
    /// assert_eq!(TimeControl::parse(b"-"), Some(TimeControl::Unlimited));
    /// assert_eq!(TimeControl::parse(b"?"), None);
    /// ```
    pub fn parse(value: &[u8]) -> Option<TimeControl> {
        let text = std::str::from_utf8(value).ok()?.trim();
        if text == "-" {
            return Some(TimeControl::Unlimited);
        }
        let (base, increment) = text.split_once('+').unwrap_or((text, "0"));
        let number = |s: &str| {
            (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
                .then(|| s.parse::<u32>().ok())
                .flatten()
        };
        Some(TimeControl::Clock {
            base: number(base)?,
            increment: number(increment)?,
        })
    }

    /// The class the model distinguishes, by the estimated game length
    /// `base + 40 × increment` as lichess reckons it: 1 ultrabullet (under
    /// 30 s), 2 bullet (under 3 min), 3 blitz (under 8 min), 4 rapid (under
    /// 25 min), 5 classical, 6 no clock.
    fn class(self) -> usize {
        match self {
            TimeControl::Unlimited => 6,
            TimeControl::Clock { base, increment } => {
                let estimate = u64::from(base) + 40 * u64::from(increment);
                match estimate {
                    0..30 => 1,
                    30..180 => 2,
                    180..480 => 3,
                    480..1500 => 4,
                    _ => 5,
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes() {
        let ctx = GameContext::new()
            .with_ratings(Some(799), Some(2600))
            .with_time_control(TimeControl::parse(b"180+0"));
        assert_eq!(ctx.classes(true), (1, 11, 3));
        assert_eq!(ctx.classes(false), (11, 1, 3));
        assert_eq!(GameContext::new().classes(true), (0, 0, 0));
        assert_eq!(rating_class(Some(1000)), 3);
        assert_eq!(rating_class(Some(4999)), RATING_CLASSES - 1);
        for (tc, class) in [
            ("15+0", 1),
            ("60+1", 2),
            ("120+1", 2),
            ("180+0", 3),
            ("600+5", 4),
            ("1800+30", 5),
        ] {
            assert_eq!(
                TimeControl::parse(tc.as_bytes()).unwrap().class(),
                class,
                "{tc}"
            );
        }
        assert!(TimeControl::class(TimeControl::Unlimited) < SPEED_CLASSES);
        for bad in ["", "+", "40/7200:3600", "1+", "x+1", "99999999999+0"] {
            assert_eq!(TimeControl::parse(bad.as_bytes()), None, "{bad}");
        }
        for bad in ["0", "5000", "-3", "1500.5", ""] {
            assert_eq!(parse_rating(bad.as_bytes()), None, "{bad}");
        }
    }
}
