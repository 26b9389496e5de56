//! Streaming PGN reading: games as a start position and mainline moves.
//!
//! Memory does not grow with the input: games are read one at a time with
//! pgn-reader's fixed buffer. A game that cannot be used (an illegal or
//! ambiguous move, a bad FEN, an unsupported variant, broken syntax) comes out
//! as a [`SkippedGame`] naming its number and the reason, and reading goes on.

use std::{io::Read, ops::ControlFlow};

use pgn_reader::{RawTag, Reader, SanPlus, Skip, Visitor};
use shakmaty::{
    CastlingMode, Chess, FromSetup, Move, Position,
    fen::Fen,
    san::{San, SanPlus as SanWithSuffix},
    uci::UciMove,
};

use crate::Error;

pub(crate) mod comment;
pub use comment::Eval;
pub(crate) use comment::clock_millis;
pub(crate) use comment::eval_of_comment;
mod chunk;
pub use chunk::{Chunk, ChunkReader};
pub(crate) mod strict;
mod written;
pub use written::{Written, read_written};

/// One game: its tags, start position and mainline moves.
#[derive(Clone, Debug)]
pub struct Game {
    /// 1-based number of the game in its input.
    pub number: u64,
    /// Tag pairs in input order.
    pub tags: Vec<(String, String)>,
    /// The start position (standard, from a `FEN` tag, or Chess960).
    pub start: Chess,
    /// The mainline moves.
    pub moves: Vec<Move>,
    /// The clock after each mainline move, in seconds, where a lichess
    /// `[%clk H:MM:SS]` comment follows it (empty when none does).
    pub clocks: Vec<Option<u32>>,
}

impl Game {
    /// The value of tag `name`, if present.
    ///
    /// ```
    /// use chesspack::pgn::GameReader;
    ///
    /// let g = GameReader::new(&b"[White \"Tal\"]\n\n1. e4 *"[..]).next().unwrap().unwrap();
    /// assert_eq!(g.tag("White"), Some("Tal"));
    /// ```
    pub fn tag(&self, name: &str) -> Option<&str> {
        self.tags
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// The game's context for the `model` codec: ratings and time control
    /// from its tags, and its clocks.
    ///
    /// ```
    /// use chesspack::pgn::GameReader;
    ///
    /// let pgn = "[WhiteElo \"1850\"]\n[TimeControl \"60+0\"]\n\n1. e4 { [%clk 0:01:00] } 1... e5 *\n";
    /// let game = GameReader::new(pgn.as_bytes()).next().unwrap().unwrap();
    /// assert_eq!(game.context().white_elo, Some(1850));
    /// assert_eq!(game.context().black_elo, None);
    /// // The clock after 1. e4; none after 1... e5.
    /// let clocks = game.context().without_clocks().with_clocks(vec![Some(60), None]);
    /// assert_eq!(game.context(), clocks);
    /// ```
    pub fn context(&self) -> crate::model::GameContext {
        let mut clocks = self.clocks.clone();
        clocks.resize(self.moves.len(), None);
        crate::model::GameContext::from_tags(self.tags.iter().map(|(k, v)| (k, v)))
            .with_clocks(clocks)
    }

    /// The players' mean rating: the mean of `WhiteElo` and `BlackElo`
    /// where both are numbers, the one that is when only one is, `None`
    /// when neither is (lichess writes `?` for an unrated player).
    ///
    /// ```
    /// use chesspack::pgn::GameReader;
    ///
    /// let pgn = b"[WhiteElo \"1500\"]\n[BlackElo \"1700\"]\n\n1. e4 *";
    /// let g = GameReader::new(&pgn[..]).next().unwrap().unwrap();
    /// assert_eq!(g.mean_rating(), Some(1600));
    /// ```
    pub fn mean_rating(&self) -> Option<u32> {
        let elo = |name| {
            self.tag(name)
                .and_then(|v| v.trim().parse::<u32>().ok())
                .filter(|&r| r > 0 && r < 5000)
        };
        match (elo("WhiteElo"), elo("BlackElo")) {
            (Some(w), Some(b)) => Some((w + b) / 2),
            (Some(r), None) | (None, Some(r)) => Some(r),
            (None, None) => None,
        }
    }
}

/// The rating bands that `chesspack stats` and `train` report by, from the
/// players' [`Game::mean_rating`]; `UNRATED` for games without ratings.
pub const RATING_BANDS: [&str; 6] = [
    "<1000",
    "1000-1400",
    "1400-1800",
    "1800-2200",
    "2200+",
    "unrated",
];

/// The index of the unrated band in [`RATING_BANDS`].
pub(crate) const UNRATED: usize = 5;

/// The index in [`RATING_BANDS`] of a game with mean rating `rating`.
///
/// ```
/// use chesspack::pgn::{RATING_BANDS, rating_band};
///
/// assert_eq!(RATING_BANDS[rating_band(Some(999))], "<1000");
/// assert_eq!(RATING_BANDS[rating_band(Some(1400))], "1400-1800");
/// assert_eq!(RATING_BANDS[rating_band(None)], "unrated");
/// ```
pub fn rating_band(rating: Option<u32>) -> usize {
    match rating {
        None => UNRATED,
        Some(r) if r < 1000 => 0,
        Some(r) if r < 1400 => 1,
        Some(r) if r < 1800 => 2,
        Some(r) if r < 2200 => 3,
        Some(_) => 4,
    }
}

/// A game that was not read, and why.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("game {number}: {reason}")]
#[non_exhaustive]
pub struct SkippedGame {
    /// 1-based number of the game in its input.
    pub number: u64,
    /// What was wrong, in lower case.
    pub reason: String,
}

/// Reads games from PGN text.
///
/// Yields `Ok(Game)`, `Err(SkippedGame)` for a game that cannot be used, and
/// stops at the end of input. An I/O error of the underlying reader (other
/// than malformed text) is reported once as a skipped game, then reading
/// stops.
///
/// ```
/// use chesspack::pgn::GameReader;
///
/// let pgn = "1. e4 e5 *\n\n1. e4 e5 2. Kf3 *\n\n[Variant \"Atomic\"]\n\n1. e4 *\n";
/// let results: Vec<_> = GameReader::new(pgn.as_bytes()).collect();
/// assert_eq!(results.len(), 3);
/// assert_eq!(results[0].as_ref().unwrap().moves.len(), 2);
/// assert!(results[1].as_ref().unwrap_err().reason.contains("illegal move Kf3"));
/// assert!(results[2].as_ref().unwrap_err().reason.contains("unsupported variant"));
/// ```
///
/// What is not PGN text (a chesspack archive, a binpack, FEN lines) is not
/// read as games: the first is an error that says what it is, and reading
/// stops.
///
/// ```
/// use chesspack::pgn::GameReader;
///
/// let archive = b"CHPK\r\n\x1a\n\x00\x01";
/// let results: Vec<_> = GameReader::new(&archive[..]).collect();
/// assert_eq!(results.len(), 1);
/// assert!(results[0].as_ref().unwrap_err().reason.contains("chesspack archive"));
/// ```
pub struct GameReader<R> {
    reader: Reader<Sniffed<R>>,
    visitor: GameVisitor,
    done: bool,
}

impl<R: Read> GameReader<R> {
    /// Reads games from `input`.
    pub fn new(input: R) -> GameReader<R> {
        GameReader {
            reader: Reader::new(Sniffed {
                inner: input,
                head: Vec::new(),
                read: false,
                refused: None,
                at: 0,
            }),
            visitor: GameVisitor {
                number: 0,
                in_game: false,
            },
            done: false,
        }
    }
}

impl<R: Read> Iterator for GameReader<R> {
    type Item = Result<Game, SkippedGame>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        match self.reader.read_game(&mut self.visitor) {
            Ok(Some(result)) => Some(result),
            Ok(None) => {
                self.done = true;
                None
            }
            Err(e) => {
                // After malformed text (InvalidData) the reader resynchronises
                // and the game it was in is lost and counted; any other I/O
                // error ends reading.
                let malformed = e.kind() == std::io::ErrorKind::InvalidData;
                self.done = !malformed;
                if !self.visitor.in_game {
                    self.visitor.number += 1;
                }
                self.visitor.in_game = false;
                Some(Err(SkippedGame {
                    number: self.visitor.number,
                    reason: if malformed {
                        format!("malformed pgn: {e}")
                    } else {
                        format!("read error: {e}")
                    },
                }))
            }
        }
    }
}

/// How every chesspack archive's magic bytes begin (game, position and
/// training archives alike).
pub(crate) const ARCHIVE_TELL: &[u8; 4] = b"CHPK";

/// How a binpack of engine training data begins (its first chunk's magic,
/// `binpack::CHUNK_MAGIC`).
pub(crate) const BINPACK_TELL: &[u8; 4] = b"BINP";

/// What a file whose first bytes are `head` holds where that is not PGN
/// text: a chesspack archive or a binpack (by their magic bytes), FEN or
/// EPD lines, nnue-pytorch's `.plain` training data, or a CSV with a FEN
/// column (a first line that starts with a board, or with `fen` and a
/// board; a header that names a `FEN` column over a board: no PGN starts
/// so).
fn not_pgn(head: &[u8]) -> Option<&'static str> {
    if head.starts_with(ARCHIVE_TELL) {
        return Some("a chesspack archive, not pgn text (`chesspack decompress` gives its games)");
    }
    if head.starts_with(BINPACK_TELL) {
        return Some("engine training data (a binpack), not pgn text");
    }
    let text = head.strip_prefix("\u{feff}".as_bytes()).unwrap_or(head);
    let mut lines = text
        .split(|&b| b == b'\n')
        .map(<[u8]>::trim_ascii)
        .filter(|l| !l.is_empty());
    let line = lines.next()?;
    let mut words = line
        .split(u8::is_ascii_whitespace)
        .filter(|w| !w.is_empty());
    let first = words.next()?;
    if is_board(first) {
        return Some("positions (FEN or EPD lines), not pgn text");
    }
    if first == b"fen" && words.next().is_some_and(is_board) {
        return Some("engine training data (.plain), not pgn text");
    }
    let column = line
        .split(|&b| b == b',')
        .position(|f| f.trim_ascii().eq_ignore_ascii_case(b"fen"))?;
    let field = lines.next()?.split(|&b| b == b',').nth(column)?;
    let board = field.trim_ascii().split(u8::is_ascii_whitespace).next()?;
    is_board(board).then_some("positions (a CSV with a FEN column), not pgn text")
}

/// Whether `w` is a FEN board: eight ranks of pieces and digits.
fn is_board(w: &[u8]) -> bool {
    w.split(|&b| b == b'/').count() == 8
        && w.split(|&b| b == b'/').all(|rank| {
            !rank.is_empty() && rank.iter().all(|b| b"12345678pnbrqkPNBRQK".contains(b))
        })
}

/// How many bytes of an input [`not_pgn`] looks at: the first lines of
/// FEN, CSV or `.plain` data fit.
const HEAD: usize = 512;

/// The input of a [`GameReader`], whose first bytes are looked at before
/// any is parsed: what is not PGN text (issue 69: `stats` and `explain`
/// read an archive, a binpack or FEN lines as PGN, and reported games of
/// no plies) is an error.
struct Sniffed<R> {
    inner: R,
    head: Vec<u8>,
    /// Whether `head` was read.
    read: bool,
    /// What the input is where it is not PGN: every read is then an error.
    refused: Option<&'static str>,
    /// How many bytes of `head` were given out.
    at: usize,
}

impl<R: Read> Read for Sniffed<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if !self.read {
            self.head.resize(HEAD, 0);
            let mut n = 0;
            while n < HEAD {
                match self.inner.read(&mut self.head[n..]) {
                    Ok(0) => break,
                    Ok(k) => n += k,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(e),
                }
            }
            self.head.truncate(n);
            self.refused = not_pgn(&self.head);
            self.read = true;
        }
        if let Some(what) = self.refused {
            return Err(std::io::Error::new(std::io::ErrorKind::InvalidInput, what));
        }
        if self.at < self.head.len() {
            let k = (self.head.len() - self.at).min(buf.len());
            buf[..k].copy_from_slice(&self.head[self.at..self.at + k]);
            self.at += k;
            return Ok(k);
        }
        self.inner.read(buf)
    }
}

struct GameVisitor {
    number: u64,
    /// Whether the current game's number was already counted by `begin_tags`.
    in_game: bool,
}

struct Tags {
    tags: Vec<(String, String)>,
}

struct Movetext {
    game: Game,
    pos: Chess,
}

type Output = Result<Game, SkippedGame>;

/// PGN bytes as text, the one rule chesspack shows them by (issue 56): bytes
/// that are UTF-8 are read as UTF-8; a value that is not (a name in
/// Latin-1 from an older database) is read as Latin-1 (ISO 8859-1), each
/// byte one character, so that no byte is lost or replaced. `list`, the
/// Python package's tags, texts and Arrow columns all use it.
///
/// ```
/// use chesspack::pgn::text;
///
/// assert_eq!(text("Müller".as_bytes()), "Müller");
/// assert_eq!(text(b"M\xfcller"), "Müller");
/// ```
pub fn text(bytes: &[u8]) -> std::borrow::Cow<'_, str> {
    match std::str::from_utf8(bytes) {
        Ok(s) => s.into(),
        Err(_) => bytes
            .iter()
            .map(|&b| char::from(b))
            .collect::<String>()
            .into(),
    }
}

/// The start position described by a game's `Variant` and `FEN` tags.
///
/// ```
/// use chesspack::pgn::start_position;
///
/// assert!(start_position(None, None).is_ok());
/// assert!(start_position(Some("Chess960"), Some("bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9")).is_ok());
/// assert!(start_position(Some("Crazyhouse"), None).is_err());
/// // Chess960 without a FEN: the standard array, in Chess960's castling
/// // (its UCI castling is the king onto its rook).
/// let pos = start_position(Some("Chess960"), None).unwrap();
/// assert!(shakmaty::Position::castles(&pos).mode().is_chess960());
/// ```
///
/// # Errors
///
/// [`Error::UnsupportedVariant`] or [`Error::InvalidFen`].
pub fn start_position(variant: Option<&str>, fen: Option<&str>) -> Result<Chess, Error> {
    let chess960 = match variant.map(|v| v.trim().to_ascii_lowercase()) {
        None => false,
        // `normal`: TCEC's word for standard chess (issue 44).
        Some(v)
            if v.is_empty()
                || v == "standard"
                || v == "chess"
                || v == "normal"
                || v == "from position" =>
        {
            false
        }
        Some(v) if v == "chess960" || v == "fischerandom" || v == "chess 960" => true,
        Some(_) => {
            return Err(Error::UnsupportedVariant(crate::error::cut(
                variant.unwrap_or(""),
            )));
        }
    };
    let Some(fen) = fen else {
        if chess960 {
            return Chess::from_setup(shakmaty::Setup::initial(), CastlingMode::Chess960)
                .map_err(|e| Error::InvalidPosition(e.to_string()));
        }
        return Ok(Chess::default());
    };
    let invalid = |reason: String| Error::InvalidFen {
        fen: crate::error::cut(fen),
        reason,
    };
    let setup = Fen::from_ascii(fen.trim().as_bytes())
        .map_err(|e| invalid(e.to_string()))?
        .into_setup();
    let modes = if chess960 {
        &[CastlingMode::Chess960][..]
    } else {
        &[CastlingMode::Standard, CastlingMode::Chess960][..]
    };
    let mut last = String::new();
    for &mode in modes {
        match Chess::from_setup(setup.clone(), mode) {
            Ok(pos) => return Ok(pos),
            Err(e) => match e.ignore_too_much_material() {
                Ok(pos) => return Ok(pos),
                Err(e) => last = e.to_string(),
            },
        }
    }
    Err(invalid(last))
}

impl Visitor for GameVisitor {
    type Tags = Tags;
    type Movetext = Movetext;
    type Output = Output;

    fn begin_tags(&mut self) -> ControlFlow<Output, Tags> {
        self.number += 1;
        self.in_game = true;
        ControlFlow::Continue(Tags { tags: Vec::new() })
    }

    fn tag(&mut self, tags: &mut Tags, name: &[u8], value: RawTag<'_>) -> ControlFlow<Output> {
        tags.tags.push((
            String::from_utf8_lossy(name).into_owned(),
            value.decode_utf8_lossy().into_owned(),
        ));
        ControlFlow::Continue(())
    }

    fn begin_movetext(&mut self, tags: Tags) -> ControlFlow<Output, Movetext> {
        let get = |name: &str| {
            tags.tags
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case(name))
                .map(|(_, v)| v.as_str())
        };
        match start_position(get("Variant"), get("FEN")) {
            Ok(start) => ControlFlow::Continue(Movetext {
                pos: start.clone(),
                game: Game {
                    number: self.number,
                    tags: tags.tags,
                    start,
                    moves: Vec::new(),
                    clocks: Vec::new(),
                },
            }),
            Err(e) => {
                self.in_game = false;
                ControlFlow::Break(Err(SkippedGame {
                    number: self.number,
                    reason: e.to_string(),
                }))
            }
        }
    }

    fn san(&mut self, movetext: &mut Movetext, san_plus: SanPlus) -> ControlFlow<Output> {
        match san_plus.san.to_move(&movetext.pos) {
            Ok(m) => {
                movetext.pos.play_unchecked(m);
                movetext.game.moves.push(m);
                ControlFlow::Continue(())
            }
            Err(e) => {
                self.in_game = false;
                ControlFlow::Break(Err(SkippedGame {
                    number: self.number,
                    reason: format!(
                        "illegal move {san_plus} at ply {} ({e})",
                        movetext.game.moves.len() + 1
                    ),
                }))
            }
        }
    }

    fn begin_variation(&mut self, _movetext: &mut Movetext) -> ControlFlow<Output, Skip> {
        ControlFlow::Continue(Skip(true))
    }

    fn comment(
        &mut self,
        movetext: &mut Movetext,
        comment: pgn_reader::RawComment<'_>,
    ) -> ControlFlow<Output> {
        let game = &mut movetext.game;
        if let Some(clock) = comment::clock_of_comment(comment.as_bytes())
            && !game.moves.is_empty()
        {
            game.clocks.resize(game.moves.len(), None);
            game.clocks[game.moves.len() - 1] = Some(clock);
        }
        ControlFlow::Continue(())
    }

    fn end_game(&mut self, movetext: Movetext) -> Output {
        self.in_game = false;
        Ok(movetext.game)
    }
}

/// The moves played from `start` as movetext: numbered SAN, `1. e4 e5 2.
/// Nf3`, from the start's move number (`5... Nc6` when Black moves
/// first), without a result; [`movetext_moves`] reads it back.
///
/// ```
/// use chesspack::pgn::{movetext, movetext_moves};
/// use shakmaty::{Chess, fen::Fen, CastlingMode};
///
/// let start = Chess::default();
/// let moves = movetext_moves(b"1. e4 e5 2. Nf3 Nc6 3. Bb5", &start).unwrap();
/// assert_eq!(movetext(&start, &moves), "1. e4 e5 2. Nf3 Nc6 3. Bb5");
/// let black: Chess = "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 2 5"
///     .parse::<Fen>().unwrap().into_position(CastlingMode::Standard).unwrap();
/// let moves = movetext_moves(b"5... Nf6 6. Nc3", &black).unwrap();
/// assert_eq!(movetext(&black, &moves), "5... Nf6 6. Nc3");
/// ```
pub fn movetext(start: &Chess, moves: &[Move]) -> String {
    let mut out = String::with_capacity(moves.len() * 6);
    let mut pos = start.clone();
    for (i, &m) in moves.iter().enumerate() {
        if !out.is_empty() {
            out.push(' ');
        }
        let number = pos.fullmoves().get();
        if pos.turn().is_white() {
            out.push_str(&format!("{number}. "));
        } else if i == 0 {
            out.push_str(&format!("{number}... "));
        }
        out.push_str(&SanWithSuffix::from_move_and_play_unchecked(&mut pos, m).to_string());
    }
    out
}

/// How [`notate`] writes moves: each in SAN (with `+` and `#`), each in
/// UCI, or all as one [`movetext`]. Parsed from its name (`"san"`,
/// `"uci"`, `"movetext"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Notation {
    /// `Nf3`, `exd5`, `O-O`, `Qh5#`.
    San,
    /// `g1f3`, `e4d5`, `e1g1` (Chess960: `e1h1`).
    Uci,
    /// `1. e4 e5 2. Nf3`, one string.
    Movetext,
}

impl std::str::FromStr for Notation {
    type Err = Error;

    fn from_str(name: &str) -> Result<Notation, Error> {
        match name {
            "san" => Ok(Notation::San),
            "uci" => Ok(Notation::Uci),
            "movetext" => Ok(Notation::Movetext),
            o => Err(Error::InvalidData(format!(
                "a notation is \"san\", \"uci\" or \"movetext\", not {o:?}"
            ))),
        }
    }
}

/// `moves` played from `start`, written in `notation`: a string a move, or
/// for [`Notation::Movetext`] one string.
///
/// ```
/// use chesspack::pgn::{Notation, movetext_moves, notate};
/// use shakmaty::Chess;
///
/// let start = Chess::default();
/// let moves = movetext_moves(b"1. e4 e5 2. Qh5 Nc6 3. Bc4 Nf6 4. Qxf7#", &start).unwrap();
/// assert_eq!(notate(&start, &moves[..3], Notation::San), ["e4", "e5", "Qh5"]);
/// assert_eq!(notate(&start, &moves, Notation::San)[6], "Qxf7#");
/// assert_eq!(notate(&start, &moves[..2], Notation::Uci), ["e2e4", "e7e5"]);
/// assert_eq!(notate(&start, &moves[..3], "movetext".parse().unwrap()), ["1. e4 e5 2. Qh5"]);
/// assert!("lan".parse::<Notation>().is_err());
/// ```
pub fn notate(start: &Chess, moves: &[Move], notation: Notation) -> Vec<String> {
    if notation == Notation::Movetext {
        return vec![movetext(start, moves)];
    }
    let mut pos = start.clone();
    let mode = pos.castles().mode();
    moves
        .iter()
        .map(|&m| {
            if notation == Notation::Uci {
                let s = UciMove::from_move(m, mode).to_string();
                pos.play_unchecked(m);
                s
            } else {
                SanWithSuffix::from_move_and_play_unchecked(&mut pos, m).to_string()
            }
        })
        .collect()
}

/// The mainline moves of a movetext (`1. e4 e5 2. Nf3 {comment} (2. f4) Nc6
/// 1-0`, as the lichess database's `movetext` column holds), played from
/// `start`. Comments, glyphs, variations and the result are read and left
/// out; tags before the movetext are skipped.
///
/// ```
/// use chesspack::pgn::movetext_moves;
/// use shakmaty::Chess;
///
/// let start = Chess::default();
/// let text = b"1. e4 { [%clk 0:03:00] } 1... e5 2. Nf3 $1 (2. f4 exf4) 2... Nc6 1-0";
/// assert_eq!(movetext_moves(text, &start).unwrap().len(), 4);
/// assert!(movetext_moves(b"1. e4 e5 2. Ke3 *", &start).is_err());
/// ```
///
/// # Errors
///
/// [`Error::UnreadableMove`] for a move that is not legal where it is
/// played, [`Error::InvalidData`] for text that is not one game's movetext.
pub fn movetext_moves(text: &[u8], start: &Chess) -> Result<Vec<Move>, Error> {
    let mut reader = Reader::new(text);
    let mut visitor = MovetextVisitor {
        start: start.clone(),
    };
    let malformed = |e: std::io::Error| Error::InvalidData(format!("malformed movetext: {e}"));
    let moves = reader
        .read_game(&mut visitor)
        .map_err(malformed)?
        .unwrap_or_else(|| Ok(Vec::new()))?;
    if reader.read_game(&mut visitor).map_err(malformed)?.is_some() {
        return Err(Error::InvalidData(
            "movetext holds more than one game".into(),
        ));
    }
    Ok(moves)
}

/// One move given as SAN (`Nf3`, `O-O`, `exd8=Q+`) or UCI (`g1f3`, `e1g1` or
/// `e1h1` for castling, `e7e8q`), played at 0-based `ply` of a game in
/// `pos`.
///
/// # Errors
///
/// [`Error::UnreadableMove`] when the text is neither a legal SAN nor a
/// legal UCI move.
pub(crate) fn text_move(pos: &Chess, text: &str, ply: usize) -> Result<Move, Error> {
    let bad = || Error::UnreadableMove {
        ply,
        text: crate::error::cut(text),
    };
    let t = text.trim();
    let b = t.as_bytes();
    let looks_uci = (4..=5).contains(&b.len())
        && matches!(b[0], b'a'..=b'h')
        && matches!(b[1], b'1'..=b'8')
        && matches!(b[2], b'a'..=b'h')
        && matches!(b[3], b'1'..=b'8');
    if looks_uci
        && let Ok(uci) = t.parse::<UciMove>()
        && let Ok(m) = uci.to_move(pos)
    {
        return Ok(m);
    }
    // SAN, with its check suffix and any `!`/`?` glyphs.
    let t = t.trim_end_matches(['!', '?']);
    let san = t
        .parse::<SanWithSuffix>()
        .map(|s| s.san)
        .or_else(|_| t.parse::<San>())
        .map_err(|_| bad())?;
    san.to_move(pos).map_err(|_| bad())
}

/// The moves of a game given one by one as SAN or UCI (`text_move`),
/// played from `start`.
///
/// ```
/// use chesspack::pgn::text_moves;
/// use shakmaty::Chess;
///
/// let moves = text_moves(["e4", "e7e5", "Nf3"], &Chess::default()).unwrap();
/// assert_eq!(moves.len(), 3);
/// ```
///
/// # Errors
///
/// [`Error::UnreadableMove`] naming the first move that is not legal.
pub fn text_moves<S: AsRef<str>>(
    texts: impl IntoIterator<Item = S>,
    start: &Chess,
) -> Result<Vec<Move>, Error> {
    let mut pos = start.clone();
    let mut moves = Vec::new();
    for (ply, t) in texts.into_iter().enumerate() {
        let m = text_move(&pos, t.as_ref(), ply)?;
        pos.play_unchecked(m);
        moves.push(m);
    }
    Ok(moves)
}

struct MovetextVisitor {
    start: Chess,
}

struct MovetextState {
    pos: Chess,
    moves: Vec<Move>,
}

impl Visitor for MovetextVisitor {
    type Tags = ();
    type Movetext = MovetextState;
    type Output = Result<Vec<Move>, Error>;

    fn begin_tags(&mut self) -> ControlFlow<Self::Output, ()> {
        ControlFlow::Continue(())
    }

    fn begin_movetext(&mut self, _tags: ()) -> ControlFlow<Self::Output, MovetextState> {
        ControlFlow::Continue(MovetextState {
            pos: self.start.clone(),
            moves: Vec::new(),
        })
    }

    fn san(&mut self, state: &mut MovetextState, san_plus: SanPlus) -> ControlFlow<Self::Output> {
        match san_plus.san.to_move(&state.pos) {
            Ok(m) => {
                state.pos.play_unchecked(m);
                state.moves.push(m);
                ControlFlow::Continue(())
            }
            Err(_) => ControlFlow::Break(Err(Error::UnreadableMove {
                ply: state.moves.len(),
                text: san_plus.to_string(),
            })),
        }
    }

    fn begin_variation(&mut self, _state: &mut MovetextState) -> ControlFlow<Self::Output, Skip> {
        ControlFlow::Continue(Skip(true))
    }

    fn end_game(&mut self, state: MovetextState) -> Self::Output {
        Ok(state.moves)
    }
}

/// The examples of crate-private items, run as unit tests.
#[cfg(test)]
mod examples {
    #[test]
    fn example_text_move() {
        use crate::pgn::text_move;
        use shakmaty::Chess;

        let pos = Chess::default();
        assert_eq!(
            text_move(&pos, "Nf3", 0).unwrap(),
            text_move(&pos, "g1f3", 0).unwrap()
        );
        assert!(text_move(&pos, "Nf4", 0).is_err());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 69: what is not PGN is told by its first bytes, and nothing
    /// that PGN may start with is.
    #[test]
    fn regression_issue_69_only_what_is_not_pgn_is_refused() {
        let refused = [
            (&b"CHPK\r\n\x1a\n"[..], "chesspack archive"),
            (b"BINP\x10\0\0\0", "binpack"),
            (b"8/8/8/8/8/8/8/K1k5 w - -\n", "FEN or EPD"),
            (
                b"\xef\xbb\xbf\n\n rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1\n",
                "FEN",
            ),
            (b"fen 8/8/8/8/8/8/8/K1k5 w - - 0 1\nmove a1a2\n", ".plain"),
            (
                b"PuzzleId,FEN,Moves\n00008,8/8/8/8/8/8/8/K1k5 w - - 0 1,a1a2\n",
                "CSV",
            ),
        ];
        for (head, what) in refused {
            let why = not_pgn(head).unwrap_or_default();
            assert!(why.contains(what), "{head:?}: {why}");
            let games: Vec<_> = GameReader::new(head).collect();
            assert!(
                matches!(&games[..], [Err(e)] if e.reason.contains(what)),
                "{head:?}"
            );
        }
        let read = [
            &b""[..],
            b"\n\n",
            b"[Event \"8/8/8/8/8/8/8/K1k5\"]\n\n1. e4 *\n",
            b"1. e4 e5 *\n",
            b"{ 8/8/8/8/8/8/8/K1k5 } 1. e4 *\n",
            b"% 8/8/8/8/8/8/8/K1k5\n1. e4 *\n",
            b"Games,FEN\n1. e4 *\n",
            b"8/8/8/8/8/8/8 is not a board\n",
            b"CHP",
        ];
        for head in read {
            assert_eq!(not_pgn(head), None, "{head:?}");
        }
        // A long input comes through whole after its head is looked at.
        let pgn = "[Event \"x\"]\n\n1. e4 e5 2. Nf3 *\n\n".repeat(100);
        let games: Vec<_> = GameReader::new(pgn.as_bytes()).collect();
        assert_eq!(games.len(), 100);
        assert!(
            games
                .iter()
                .all(|g| g.as_ref().is_ok_and(|g| g.moves.len() == 3))
        );
    }
}
