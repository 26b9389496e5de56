//! Every position of every game as rows, for training move models: the
//! board before each mainline move, the move played and the game's
//! context, decoded straight from an archive with no PGN in between.
//!
//! [`block_positions`] gives a block's positions as columns (what the
//! Python package's `Archive.positions` and the Spark source turn into
//! Arrow), only those asked for; [`ArchiveReader::positions`] gives every
//! position of an archive one at a time, with its [`Chess`] position.
//!
//! The codes are those of [`training::Rows`](crate::datasets::training::Rows):
//! squares a1 = 0 … h8 = 63; pieces 0 (empty), 1–6 white pawn, knight,
//! bishop, rook, queen, king, 7–12 black ones; castling bits 0 white
//! short, 1 white long, 2 black short, 3 black long; the en-passant square
//! only where a capture there is legal, else 64; a castling move's `to` is
//! its rook's square.
//!
//! Games stored verbatim (variants, text that does not parse, a null move
//! in the mainline) give no rows: they are counted in
//! [`PositionRows::skipped`]. Games from a `FEN` tag give rows from it.
//!
//! ```
//! use chesspack::{archive::{self, ArchiveReader, Options}, datasets::rows::{self, Column}};
//!
//! let pgn = "[WhiteElo \"1500\"]\n[TimeControl \"60+1\"]\n[Result \"1-0\"]\n\n\
//!            1. e4 { [%eval 0.3] [%clk 0:01:00] } e5 { [%clk 0:00:59] } 2. Nf3 { [%clk 0:00:58] } 1-0\n";
//! let mut packed = Vec::new();
//! archive::compress(pgn.as_bytes(), &mut packed, &chesspack::game::Index, &Options::default()).unwrap();
//! let mut r = ArchiveReader::open(std::io::Cursor::new(packed)).unwrap();
//! let block = r.read_block(0).unwrap();
//! let rows = rows::block_positions(r.codec(), &block, 0, &Column::defaults()).unwrap();
//! assert_eq!(rows.rows, 3);
//! assert_eq!(&rows.board[..8], &[4, 2, 3, 5, 6, 3, 2, 4]); // a1..h1: R N B Q K B N R
//! assert_eq!((rows.from[0], rows.to[0]), (12, 28)); // e2e4
//! assert_eq!(rows.result, [Some(1), Some(-1), Some(1)]); // the side to move's
//! assert_eq!(rows.white_elo[0], Some(1500));
//! // The mover's clock before each move: the base, then its last reading.
//! assert_eq!(rows.clock, [Some(60_000), Some(60_000), Some(60_000)]);
//! // The evaluation of each row's position: the one after the move before.
//! assert_eq!(rows.eval, [None, Some(30), None]);
//!
//! // One at a time, with the position itself.
//! let last = r.positions().last().unwrap().unwrap();
//! let uci = last.played.to_uci(shakmaty::CastlingMode::Standard).to_string();
//! assert_eq!((last.game, last.ply, uci.as_str()), (0, 2, "g1f3"));
//! ```

use std::io::{Read, Seek, Write};

use shakmaty::{
    CastlingSide, Chess, Color, EnPassantMode, Move, Piece, Position, Role, fen::Fen, uci::UciMove,
};

use crate::archive::{
    ArchiveError, ArchiveReader, Block, CONTINUED, GameRecord, GameRow, decode_records,
};
use crate::{game::GameCodec, model::TimeControl, pgn::Eval};

/// A column of position rows ([`block_positions`]).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Column {
    /// 64 pieces a position, square by square.
    Board,
    /// 0 White to move, 1 Black.
    Turn,
    /// Castling rights, a bit each.
    Castling,
    /// The en-passant square where a capture there is legal, else 64.
    Ep,
    /// The halfmove clock of the fifty-move rule.
    Rule50,
    /// The game ply (0 before White's first move; from a `FEN` tag, as its
    /// move number and side give it).
    Ply,
    /// The move's origin square.
    From,
    /// The move's target square (the rook's for castling).
    To,
    /// The promotion piece (2 knight … 5 queen), else 0.
    Promotion,
    /// The move in UCI (castling as the king's two-square move, or the
    /// king onto its rook in Chess960).
    Uci,
    /// The position as FEN (en passant as python-chess writes it: only
    /// where a capture is legal).
    Fen,
    /// The game's number in the archive, from 0.
    Game,
    /// The game's result for the side to move: 1 win, 0 draw, -1 loss;
    /// null for `*` or no `Result` tag.
    Result,
    /// The `WhiteElo` tag as a number.
    WhiteElo,
    /// The `BlackElo` tag as a number.
    BlackElo,
    /// The `TimeControl` tag's base time in seconds (`300` of `300+3`).
    Base,
    /// The `TimeControl` tag's increment in seconds (`3` of `300+3`).
    Increment,
    /// The time the side to move has left before the move: its reading
    /// after its last move (`[%clk]`), and the time control's base before
    /// its first move where the game has clock readings.
    Clock,
    /// The evaluation of the row's position in centipawns, White's view:
    /// the `[%eval]` after the move that led to it (null for a mate).
    Eval,
    /// The same as a mate in so many moves (positive: White mates).
    Mate,
    /// Any tag, by its name, as text (null where the game has none).
    Tag(String),
}

/// The names of the columns that are not tags, in their default order
/// (`uci` and `fen` are not among the defaults).
const NAMED: [(&str, Column); 20] = [
    ("board", Column::Board),
    ("turn", Column::Turn),
    ("castling", Column::Castling),
    ("ep", Column::Ep),
    ("rule50", Column::Rule50),
    ("ply", Column::Ply),
    ("from", Column::From),
    ("to", Column::To),
    ("promotion", Column::Promotion),
    ("game", Column::Game),
    ("result", Column::Result),
    ("WhiteElo", Column::WhiteElo),
    ("BlackElo", Column::BlackElo),
    ("base", Column::Base),
    ("increment", Column::Increment),
    ("clock", Column::Clock),
    ("eval", Column::Eval),
    ("mate", Column::Mate),
    ("uci", Column::Uci),
    ("fen", Column::Fen),
];

impl Column {
    /// The default columns: every one but `uci`, `fen` and tags.
    ///
    /// ```
    /// use chesspack::datasets::rows::Column;
    ///
    /// let names: Vec<_> = Column::defaults().iter().map(|c| c.name().to_owned()).collect();
    /// assert_eq!(names[..3], ["board", "turn", "castling"]);
    /// assert!(!names.contains(&"fen".to_owned()));
    /// ```
    pub fn defaults() -> Vec<Column> {
        NAMED[..18].iter().map(|(_, c)| c.clone()).collect()
    }

    /// The column's name (a tag's is its own).
    pub fn name(&self) -> &str {
        match self {
            Column::Tag(t) => t,
            c => NAMED
                .iter()
                .find(|(_, k)| k == c)
                .map_or("", |(name, _)| name),
        }
    }

    /// The column of a name: one of the names above, or a tag's, which
    /// starts with an upper-case letter. `None` for any other name (a typo
    /// of a column is no tag).
    ///
    /// ```
    /// use chesspack::datasets::rows::Column;
    ///
    /// assert_eq!(Column::from_name("rule50"), Some(Column::Rule50));
    /// assert_eq!(Column::from_name("Event"), Some(Column::Tag("Event".into())));
    /// assert_eq!(Column::from_name("borad"), None);
    /// ```
    pub fn from_name(name: &str) -> Option<Column> {
        if let Some((_, c)) = NAMED.iter().find(|(n, _)| *n == name) {
            return Some(c.clone());
        }
        name.starts_with(|c: char| c.is_ascii_uppercase())
            .then(|| Column::Tag(name.to_owned()))
    }
}

/// A column of texts, laid out as Arrow lays out strings: row `i` is
/// `data[offsets[i]..offsets[i + 1]]`; null where `valid` is false (an
/// empty `valid`: none is null).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Texts {
    /// The texts one after another (UTF-8).
    pub data: Vec<u8>,
    /// Where each text starts, and then where the last ends.
    pub offsets: Vec<i32>,
    /// Whether each row has a text (empty when every one has).
    pub valid: Vec<bool>,
}

impl Default for Texts {
    fn default() -> Texts {
        Texts {
            data: Vec::new(),
            offsets: vec![0],
            valid: Vec::new(),
        }
    }
}

impl Texts {
    /// Row `i`'s text (`None` where it is null or out of range).
    pub fn get(&self, i: usize) -> Option<&str> {
        if self.valid.get(i) == Some(&false) {
            return None;
        }
        let (a, b) = (*self.offsets.get(i)?, *self.offsets.get(i + 1)?);
        std::str::from_utf8(self.data.get(a as usize..b as usize)?).ok()
    }

    /// Ends the row whose text was written to `data`.
    fn end_row(&mut self) -> Result<(), String> {
        let end =
            i32::try_from(self.data.len()).map_err(|_| "a text column over 2 GiB".to_owned())?;
        self.offsets.push(end);
        if !self.valid.is_empty() {
            self.valid.push(true);
        }
        Ok(())
    }

    /// Adds `n` rows of `text`, or of nulls.
    fn push_n(&mut self, text: Option<&[u8]>, n: usize) -> Result<(), String> {
        for _ in 0..n {
            match text {
                Some(t) => {
                    self.data.extend_from_slice(t);
                    self.end_row()?;
                }
                None => {
                    if self.valid.is_empty() {
                        self.valid = vec![true; self.offsets.len() - 1];
                    }
                    self.offsets.push(*self.offsets.last().unwrap_or(&0));
                    self.valid.push(false);
                }
            }
        }
        Ok(())
    }
}

/// The positions of a block's games as columns: one row for each position
/// of each mainline before a move is played. Only the columns asked for
/// are filled; the others are empty.
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct PositionRows {
    /// The columns asked for, in their order.
    pub columns: Vec<Column>,
    /// The number of rows.
    pub rows: usize,
    /// 64 pieces a row ([`Column::Board`]).
    pub board: Vec<u8>,
    /// [`Column::Turn`].
    pub turn: Vec<u8>,
    /// [`Column::Castling`].
    pub castling: Vec<u8>,
    /// [`Column::Ep`].
    pub ep: Vec<u8>,
    /// [`Column::Rule50`].
    pub rule50: Vec<u32>,
    /// [`Column::Ply`].
    pub ply: Vec<u32>,
    /// [`Column::From`].
    pub from: Vec<u8>,
    /// [`Column::To`].
    pub to: Vec<u8>,
    /// [`Column::Promotion`].
    pub promotion: Vec<u8>,
    /// [`Column::Uci`].
    pub uci: Texts,
    /// [`Column::Fen`].
    pub fen: Texts,
    /// [`Column::Game`].
    pub game: Vec<u64>,
    /// [`Column::Result`].
    pub result: Vec<Option<i8>>,
    /// [`Column::WhiteElo`].
    pub white_elo: Vec<Option<u32>>,
    /// [`Column::BlackElo`].
    pub black_elo: Vec<Option<u32>>,
    /// [`Column::Base`].
    pub base: Vec<Option<u32>>,
    /// [`Column::Increment`].
    pub increment: Vec<Option<u32>>,
    /// [`Column::Clock`], in milliseconds.
    pub clock: Vec<Option<u64>>,
    /// [`Column::Eval`].
    pub eval: Vec<Option<i32>>,
    /// [`Column::Mate`].
    pub mate: Vec<Option<i32>>,
    /// Each [`Column::Tag`] asked for, in order: its name and texts.
    pub tags: Vec<(String, Texts)>,
    /// The games that gave rows (a game with no moves gives none).
    pub games: u64,
    /// The numbers (from 0) of the games stored verbatim, which give no
    /// rows: variants, text that does not parse, a null move in the
    /// mainline.
    pub skipped: Vec<u64>,
}

/// Which columns a [`PositionRows`] fills.
#[derive(Clone, Copy, Default)]
struct Wants {
    board: bool,
    turn: bool,
    castling: bool,
    ep: bool,
    rule50: bool,
    ply: bool,
    from: bool,
    to: bool,
    promotion: bool,
    uci: bool,
    fen: bool,
    game: bool,
    result: bool,
    white_elo: bool,
    black_elo: bool,
    base: bool,
    increment: bool,
    clock: bool,
    eval: bool,
    mate: bool,
}

impl Wants {
    fn of(columns: &[Column]) -> Wants {
        let mut w = Wants::default();
        for c in columns {
            match c {
                Column::Board => w.board = true,
                Column::Turn => w.turn = true,
                Column::Castling => w.castling = true,
                Column::Ep => w.ep = true,
                Column::Rule50 => w.rule50 = true,
                Column::Ply => w.ply = true,
                Column::From => w.from = true,
                Column::To => w.to = true,
                Column::Promotion => w.promotion = true,
                Column::Uci => w.uci = true,
                Column::Fen => w.fen = true,
                Column::Game => w.game = true,
                Column::Result => w.result = true,
                Column::WhiteElo => w.white_elo = true,
                Column::BlackElo => w.black_elo = true,
                Column::Base => w.base = true,
                Column::Increment => w.increment = true,
                Column::Clock => w.clock = true,
                Column::Eval => w.eval = true,
                Column::Mate => w.mate = true,
                Column::Tag(_) => {}
            }
        }
        w
    }

    /// Whether the rows need the positions themselves.
    fn positions(&self) -> bool {
        self.board || self.turn || self.castling || self.ep || self.rule50 || self.fen
    }
}

/// What a game's tags say that its rows hold.
#[derive(Clone, Copy, Debug, Default)]
struct Facts {
    /// The result for White: 1, 0 or -1.
    result: Option<i8>,
    white_elo: Option<u32>,
    black_elo: Option<u32>,
    base: Option<u32>,
    increment: Option<u32>,
    /// Whether the mainline has any clock reading.
    clocks: bool,
}

impl Facts {
    fn of(record: &GameRecord) -> Facts {
        let tag = |name: &[u8]| {
            record
                .tags
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.as_slice())
        };
        let number = |v: &[u8]| std::str::from_utf8(v).ok()?.trim().parse::<u32>().ok();
        let result = match tag(b"Result") {
            Some(b"1-0") => Some(1),
            Some(b"0-1") => Some(-1),
            Some(b"1/2-1/2") => Some(0),
            _ => None,
        };
        let (base, increment) = match tag(b"TimeControl").and_then(TimeControl::parse) {
            Some(TimeControl::Clock { base, increment }) => (Some(base), Some(increment)),
            _ => (None, None),
        };
        Facts {
            result,
            white_elo: tag(b"WhiteElo").and_then(number),
            black_elo: tag(b"BlackElo").and_then(number),
            base,
            increment,
            clocks: record.clocks.iter().any(Option::is_some),
        }
    }

    /// The result for the side to move of `pos`.
    fn result_for(&self, turn: Color) -> Option<i8> {
        self.result.map(|r| if turn.is_white() { r } else { -r })
    }

    /// The clock of the side to move before mainline move `i`, in
    /// milliseconds.
    fn clock_before(&self, record: &GameRecord, i: usize) -> Option<u64> {
        match i.checked_sub(2) {
            Some(j) => record.clocks.get(j).copied().flatten(),
            None if self.clocks => self.base.map(|b| u64::from(b) * 1000),
            None => None,
        }
    }
}

/// The evaluation of the position before mainline move `i`.
fn eval_before(record: &GameRecord, i: usize) -> Option<Eval> {
    record.evals.get(i.checked_sub(1)?).copied().flatten()
}

/// The game ply of `pos` (as python-chess counts it).
fn game_ply(pos: &Chess) -> u32 {
    let moves = pos.fullmoves().get().saturating_sub(1);
    moves.saturating_mul(2) + u32::from(pos.turn().is_black())
}

/// The castling bits of `pos`.
fn castling_bits(pos: &Chess) -> u8 {
    let castles = pos.castles();
    let mut c = 0;
    for (bit, (color, side)) in [
        (Color::White, CastlingSide::KingSide),
        (Color::White, CastlingSide::QueenSide),
        (Color::Black, CastlingSide::KingSide),
        (Color::Black, CastlingSide::QueenSide),
    ]
    .into_iter()
    .enumerate()
    {
        if castles.has(color, side) {
            c |= 1 << bit;
        }
    }
    c
}

/// A board as the `board` column (and training rows) have it, kept up to
/// date move by move.
pub(super) struct Mailbox(pub(super) [u8; 64]);

impl Mailbox {
    pub(super) fn of(pos: &Chess) -> Mailbox {
        let mut squares = [0; 64];
        for (sq, piece) in pos.board() {
            squares[usize::from(sq)] = code(piece);
        }
        Mailbox(squares)
    }

    /// Plays `m`, a legal move of `turn`.
    fn play(&mut self, m: &Move, turn: Color) {
        let s = &mut self.0;
        match *m {
            Move::Normal {
                role,
                from,
                to,
                promotion,
                ..
            } => {
                s[usize::from(from)] = 0;
                s[usize::from(to)] = code(Piece {
                    color: turn,
                    role: promotion.unwrap_or(role),
                });
            }
            Move::EnPassant { from, to } => {
                s[usize::from(from)] = 0;
                s[usize::from(to)] = code(Piece {
                    color: turn,
                    role: Role::Pawn,
                });
                s[usize::from(shakmaty::Square::from_coords(to.file(), from.rank()))] = 0;
            }
            Move::Castle { king, rook } => {
                let side = CastlingSide::from_queen_side(rook < king);
                s[usize::from(king)] = 0;
                s[usize::from(rook)] = 0;
                s[usize::from(side.king_to(turn))] = code(Piece {
                    color: turn,
                    role: Role::King,
                });
                s[usize::from(side.rook_to(turn))] = code(Piece {
                    color: turn,
                    role: Role::Rook,
                });
            }
            Move::Put { role, to } => {
                s[usize::from(to)] = code(Piece { color: turn, role });
            }
        }
    }
}

/// A piece's code in the `board` column.
fn code(piece: Piece) -> u8 {
    piece.role as u8 + if piece.color.is_white() { 0 } else { 6 }
}

/// A move's target square as the rows give it (a castling move's rook).
fn target(m: &Move) -> u8 {
    match m {
        Move::Castle { rook, .. } => u8::from(*rook),
        _ => u8::from(m.to()),
    }
}

impl PositionRows {
    fn new(columns: &[Column]) -> PositionRows {
        PositionRows {
            columns: columns.to_vec(),
            tags: columns
                .iter()
                .filter_map(|c| match c {
                    Column::Tag(t) => Some((t.clone(), Texts::default())),
                    _ => None,
                })
                .collect(),
            ..PositionRows::default()
        }
    }

    /// Makes room for `n` rows in the wanted columns.
    fn reserve(&mut self, w: &Wants, n: usize) {
        fn room<T>(v: &mut Vec<T>, n: usize, want: bool) {
            if want {
                v.reserve_exact(n);
            }
        }
        room(&mut self.board, n * 64, w.board);
        room(&mut self.turn, n, w.turn);
        room(&mut self.castling, n, w.castling);
        room(&mut self.ep, n, w.ep);
        room(&mut self.rule50, n, w.rule50);
        room(&mut self.ply, n, w.ply);
        room(&mut self.from, n, w.from);
        room(&mut self.to, n, w.to);
        room(&mut self.promotion, n, w.promotion);
        room(&mut self.uci.data, n * 4, w.uci);
        room(&mut self.uci.offsets, n, w.uci);
        room(&mut self.fen.data, n * 60, w.fen);
        room(&mut self.fen.offsets, n, w.fen);
        room(&mut self.game, n, w.game);
        room(&mut self.result, n, w.result);
        room(&mut self.white_elo, n, w.white_elo);
        room(&mut self.black_elo, n, w.black_elo);
        room(&mut self.base, n, w.base);
        room(&mut self.increment, n, w.increment);
        room(&mut self.clock, n, w.clock);
        room(&mut self.eval, n, w.eval);
        room(&mut self.mate, n, w.mate);
        for (_, t) in &mut self.tags {
            t.offsets.reserve_exact(n);
        }
    }

    /// Adds the rows of game `number`.
    fn push_game(&mut self, w: &Wants, number: u64, record: &GameRecord) -> Result<(), String> {
        let n = record.moves.len();
        let facts = Facts::of(record);
        self.games += 1;
        self.rows += n;
        fn repeat<T: Clone>(v: &mut Vec<T>, x: T, n: usize, want: bool) {
            if want {
                v.extend(std::iter::repeat_n(x, n));
            }
        }
        repeat(&mut self.game, number, n, w.game);
        repeat(&mut self.white_elo, facts.white_elo, n, w.white_elo);
        repeat(&mut self.black_elo, facts.black_elo, n, w.black_elo);
        repeat(&mut self.base, facts.base, n, w.base);
        repeat(&mut self.increment, facts.increment, n, w.increment);
        for (name, texts) in &mut self.tags {
            let value = record
                .tags
                .iter()
                .find(|(k, _)| k == name.as_bytes())
                .map(|(_, v)| v.as_slice());
            let value = value.map(|v| crate::pgn::text(v).into_owned());
            texts.push_n(value.as_deref().map(str::as_bytes), n)?;
        }
        if w.clock {
            self.clock
                .extend((0..n).map(|i| facts.clock_before(record, i)));
        }
        if w.eval || w.mate {
            for i in 0..n {
                let e = eval_before(record, i);
                if w.eval {
                    self.eval.push(match e {
                        Some(Eval::Centipawns(cp)) => Some(cp),
                        _ => None,
                    });
                }
                if w.mate {
                    self.mate.push(match e {
                        Some(Eval::Mate(m)) => Some(m),
                        _ => None,
                    });
                }
            }
        }
        for m in &record.moves {
            if w.from {
                self.from.push(m.from().map_or(0, u8::from));
            }
            if w.to {
                self.to.push(target(m));
            }
            if w.promotion {
                self.promotion.push(m.promotion().map_or(0, |r| r as u8));
            }
        }
        if !(w.positions() || w.result || w.ply || w.uci) {
            return Ok(());
        }
        let mode = record.start.castles().mode();
        let mut pos = record.start.clone();
        let mut ply = game_ply(&pos);
        let mut squares = Mailbox::of(&pos);
        for &m in &record.moves {
            if w.board {
                self.board.extend_from_slice(&squares.0);
                squares.play(&m, pos.turn());
            }
            if w.turn {
                self.turn.push(u8::from(pos.turn().is_black()));
            }
            if w.castling {
                self.castling.push(castling_bits(&pos));
            }
            if w.ep {
                self.ep
                    .push(pos.ep_square(EnPassantMode::Legal).map_or(64, u8::from));
            }
            if w.rule50 {
                self.rule50.push(pos.halfmoves());
            }
            if w.ply {
                self.ply.push(ply);
            }
            if w.result {
                self.result.push(facts.result_for(pos.turn()));
            }
            if w.fen {
                let _ = write!(
                    self.fen.data,
                    "{}",
                    Fen::from_position(&pos, EnPassantMode::Legal)
                );
                self.fen.end_row()?;
            }
            if w.uci {
                let _ = write!(self.uci.data, "{}", UciMove::from_move(m, mode));
                self.uci.end_row()?;
            }
            ply = ply.saturating_add(1);
            pos.play_unchecked(m);
        }
        Ok(())
    }
}

/// The positions of the games of `block` as columns ([`PositionRows`]):
/// only `columns` are worked out ([`Column::defaults`] for the usual
/// ones). `first_game` is the number (from 0) of the block's first game
/// ([`ArchiveReader::first_game`] less one: it counts from 1), for the
/// `game` column; `codec` is the
/// archive's ([`ArchiveReader::codec`]). The games' moves decode on the
/// current rayon pool.
///
/// # Errors
///
/// [`ArchiveError::Damaged`] when the payload does not decode.
pub fn block_positions(
    codec: &dyn GameCodec,
    block: &Block,
    first_game: u64,
    columns: &[Column],
) -> Result<PositionRows, ArchiveError> {
    let w = Wants::of(columns);
    let mut rows = PositionRows::new(columns);
    // The records first, so that every column is allocated once.
    let games = records(codec, block, first_game, &mut rows.skipped)?;
    rows.reserve(&w, games.iter().map(|(_, r)| r.moves.len()).sum());
    for (number, record) in &games {
        rows.push_game(&w, *number, record)
            .map_err(|reason| ArchiveError::Damaged {
                block: block.index as u64 + 1,
                reason,
            })?;
    }
    Ok(rows)
}

/// The records of the games of `block` with their numbers (its first
/// being `first_game`); the numbers of those stored verbatim, which give
/// no rows, go to `skipped`.
fn records(
    codec: &dyn GameCodec,
    block: &Block,
    first_game: u64,
    skipped: &mut Vec<u64>,
) -> Result<Vec<(u64, GameRecord)>, ArchiveError> {
    let mut games = Vec::new();
    decode_records(codec, block, &|_| true, &mut |g, row| {
        let number = first_game + g as u64;
        match row {
            GameRow::Record(record) => games.push((number, record)),
            GameRow::Text(_) if g != CONTINUED => skipped.push(number),
            GameRow::Text(_) => {}
        }
    })?;
    Ok(games)
}

/// One position of a game: the position before a mainline move, the move
/// played and the game's context ([`ArchiveReader::positions`]).
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct PositionRow {
    /// The game's number in the archive, from 0.
    pub game: u64,
    /// The game ply ([`Column::Ply`]).
    pub ply: u32,
    /// The position before the move.
    pub position: Chess,
    /// The move played.
    pub played: Move,
    /// The game's result for the side to move ([`Column::Result`]).
    pub result: Option<i8>,
    /// The `WhiteElo` tag.
    pub white_elo: Option<u32>,
    /// The `BlackElo` tag.
    pub black_elo: Option<u32>,
    /// The time control's base, in seconds.
    pub base: Option<u32>,
    /// The time control's increment, in seconds.
    pub increment: Option<u32>,
    /// The side to move's clock before the move, in milliseconds
    /// ([`Column::Clock`]).
    pub clock: Option<u64>,
    /// The evaluation of the position ([`Column::Eval`]).
    pub eval: Option<Eval>,
}

/// Every position of an archive's games, block by block
/// ([`ArchiveReader::positions`]).
pub struct Positions<'a, R> {
    reader: &'a mut ArchiveReader<R>,
    /// The next block to read.
    next_block: usize,
    /// The games of the block read, last first.
    games: Vec<(u64, GameRecord)>,
    /// The game being walked: its number, record, facts and position.
    game: Option<(u64, GameRecord, Facts, Chess, u32)>,
    /// The next move of that game.
    at: usize,
    skipped: Vec<u64>,
    failed: bool,
}

impl<R> Positions<'_, R> {
    /// The numbers (from 0) of the games skipped so far (stored verbatim:
    /// see [`PositionRows::skipped`]).
    pub fn skipped(&self) -> &[u64] {
        &self.skipped
    }
}

impl<R: Read + Seek> Iterator for Positions<'_, R> {
    type Item = Result<PositionRow, ArchiveError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if self.failed {
                return None;
            }
            if let Some((number, record, facts, pos, ply)) = &mut self.game
                && let Some(&m) = record.moves.get(self.at)
            {
                let i = self.at;
                self.at += 1;
                let row = PositionRow {
                    game: *number,
                    ply: *ply,
                    position: pos.clone(),
                    played: m,
                    result: facts.result_for(pos.turn()),
                    white_elo: facts.white_elo,
                    black_elo: facts.black_elo,
                    base: facts.base,
                    increment: facts.increment,
                    clock: facts.clock_before(record, i),
                    eval: eval_before(record, i),
                };
                *ply = ply.saturating_add(1);
                pos.play_unchecked(m);
                return Some(Ok(row));
            }
            if let Some((number, record)) = self.games.pop() {
                let facts = Facts::of(&record);
                let pos = record.start.clone();
                let ply = game_ply(&pos);
                self.game = Some((number, record, facts, pos, ply));
                self.at = 0;
                continue;
            }
            self.game = None;
            if self.next_block >= self.reader.blocks().len() {
                return None;
            }
            let b = self.next_block;
            self.next_block += 1;
            let first = self.reader.first_game(b) - 1;
            let read = self.reader.read_block(b).and_then(|block| {
                let mut games = records(self.reader.codec(), &block, first, &mut self.skipped)?;
                games.reverse();
                Ok(games)
            });
            match read {
                Ok(games) => self.games = games,
                Err(e) => {
                    self.failed = true;
                    return Some(Err(e));
                }
            }
        }
    }
}

impl<R: Read + Seek> ArchiveReader<R> {
    /// Every position of every game's mainline before a move, with the
    /// move played and the game's context, a block at a time (games stored
    /// verbatim give none: [`Positions::skipped`]). Stops after the first
    /// error.
    pub fn positions(&mut self) -> Positions<'_, R> {
        Positions {
            reader: self,
            next_block: 0,
            games: Vec::new(),
            game: None,
            at: 0,
            skipped: Vec::new(),
            failed: false,
        }
    }
}
