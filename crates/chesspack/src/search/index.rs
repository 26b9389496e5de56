//! The search section: built from the games' records while an archive is
//! written (or from its blocks, `chesspack index`), read back for queries.
//!
//! It holds, for an archive of `n` games:
//!
//! * the **opening tree**: every line of moves from the standard start
//!   that two or more games share, in preorder (a node's move and its
//!   number of children);
//! * for each game, where it **leaves** the tree (the deepest shared node
//!   on its line) and the move it plays there, so that the games that
//!   reached a node are a range of games sorted by that node;
//! * for each game, its **changes of state** ([`super::state`]: home
//!   pawns leaving, pieces taken, promotions), early ones and later ones
//!   ([`EARLY_TAKES`]), the plies of those of material, and the files of
//!   its pawns after those that leave few pieces ([`state::keeps_files`]);
//! * for each game, the tags that queries filter on: players, ratings,
//!   result, date, event, ECO and speed;
//! * where it was built with them ([`IndexBuilder::new`]), for
//!   each game the squares each piece of each side stood on in its
//!   mainline after its node.
//!
//! Each column is a zstd frame, or its bytes where zstd does not make it
//! smaller; a CRC-32 covers the directory and one each group of columns.

use std::{
    collections::HashMap,
    sync::{Arc, OnceLock},
};

use shakmaty::{
    Board, Chess, Color, EnPassantMode, Move, Piece, Position, Role, Square, zobrist::Zobrist64,
};

use super::state::{self, State};
use crate::archive::{
    ArchiveError, GameRecord,
    pipeline::{SectionBuilder, Summarize},
};
use crate::opening::OpeningTable;
use crate::threads;

/// The section's first bytes.
pub(crate) const MAGIC: &[u8; 4] = b"CPKS";
/// The section's layout version.
pub(crate) const VERSION: u8 = 17;
/// A game with no node: not from the standard start, or stored verbatim.
pub(crate) const NONE: u32 = u32::MAX;
/// No move.
pub(crate) const NO_MOVE: u16 = u16::MAX;

/// A game's flags: from the standard start, with a node. A game with no
/// flag is from another start (Chess960, a FEN): its states are its
/// start's ([`START_STATES`]) with its changes from ply 0 applied.
pub(crate) const INDEXED: u8 = 1;
/// Stored as text: no moves are known.
pub(crate) const TEXT: u8 = 2;
/// From another start with more of a piece than a [`State`] counts
/// ([`State::counts_fit`]: no game of chess has so many): no states, so
/// every query decodes it.
pub(crate) const UNSTATED: u8 = 4;

/// Whether a game of `flags` is from another start than the standard one
/// with its states in the section.
#[inline]
pub(crate) const fn from_another_start(flags: u8) -> bool {
    flags == 0
}

/// The key a position is found by: the board, the side to move, castling
/// rights and an en passant square only where the capture is legal (so
/// that transpositions meet), as the opening table keys positions.
pub(crate) fn key(pos: &Chess) -> u64 {
    pos.zobrist_hash::<Zobrist64>(EnPassantMode::Legal).0
}

/// Plays `m` in `pos`, whose [`key`] is `before`, and gives the key after
/// it: updated from `before` where shakmaty can (a move that changes no
/// castling right and leaves no en passant square: most), else made
/// again. The builder keys every position of every game after it leaves
/// the tree.
fn play_keyed(pos: &mut Chess, before: u64, m: Move) -> u64 {
    let updated = pos.update_zobrist_hash(Zobrist64(before), m, EnPassantMode::Legal);
    pos.play_unchecked(m);
    updated.map_or_else(|| key(pos), |z| z.0)
}

/// The key a tree stores a move by: unique among a position's moves.
pub(crate) fn move_key(m: Move) -> u16 {
    crate::order::key(m, crate::order::Order::SquareIndex) as u16
}

/// What `cell` holds, read by `read` on first use (an error stays one).
fn first_use<T>(
    cell: &OnceLock<Result<T, String>>,
    read: impl FnOnce() -> Result<T, String>,
) -> Result<&T, String> {
    cell.get_or_init(read).as_ref().map_err(Clone::clone)
}

/// A node's state, and the castling rights ended on the way to it (as
/// [`State::end_castling`] keeps them): the tree's moves tell when a
/// side's last right ends.
pub(crate) type NodeState = (State, u8);

/// The state at the tree's root: the start's, no castling right ended.
pub(crate) fn root_state() -> NodeState {
    (State::of(&Chess::default()), 0)
}

/// The squares a move key ([`move_key`]) names: from, to; `None` where
/// it names no square.
fn key_squares(k: u16) -> Option<(Square, Square)> {
    let squares = u32::from(k >> 3);
    (squares / 64 < 64).then(|| (Square::new(squares / 64), Square::new(squares % 64)))
}

/// The legal move of `pos` with key `k`: made from the key and the board,
/// then checked (no list of legal moves is made).
pub(crate) fn move_of(pos: &Chess, k: u16) -> Option<Move> {
    made_move(pos, k).filter(|&m| pos.is_legal(m))
}

/// The move of `pos` with key `k` as the key and the board make it, not
/// checked for legality: for the builder, whose keys are of moves it
/// played (a section's keys are checked, [`move_of`]). Checking was 2% of
/// `chesspack index`'s instructions (issue 68).
fn made_move(pos: &Chess, k: u16) -> Option<Move> {
    let promotion = match k & 7 {
        0 => None,
        1 => Some(Role::Knight),
        2 => Some(Role::Bishop),
        3 => Some(Role::Rook),
        4 => Some(Role::Queen),
        _ => return None,
    };
    let (from, to) = key_squares(k)?;
    let board = pos.board();
    let piece = board.piece_at(from).filter(|p| p.color == pos.turn())?;
    let target = board.piece_at(to);
    let m = if piece.role == Role::King
        && target.is_some_and(|t| t.color == pos.turn() && t.role == Role::Rook)
    {
        Move::Castle {
            king: from,
            rook: to,
        }
    } else if piece.role == Role::Pawn
        && target.is_none()
        && from.file() != to.file()
        && promotion.is_none()
    {
        Move::EnPassant { from, to }
    } else {
        Move::Normal {
            role: piece.role,
            from,
            capture: target.map(|t| t.role),
            to,
            promotion,
        }
    };
    (move_key(m) == k).then_some(m)
}

/// Whether `pos` is the standard start (castling and all).
pub(crate) fn is_standard_start(pos: &Chess) -> bool {
    key(pos) == key(&Chess::default()) && pos.fullmoves().get() == 1
}

/// The tags a query filters on, of one game.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Meta {
    pub white: Arc<str>,
    pub black: Arc<str>,
    pub event: Arc<str>,
    pub eco: Arc<str>,
    pub opening: Arc<str>,
    pub numbers: Numbers,
}

/// The tags a query filters on that are numbers, of one game.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Numbers {
    /// 0 unknown, 1 White won, 2 drawn, 3 Black won.
    pub result: u8,
    pub white_elo: u16,
    pub black_elo: u16,
    /// `yyyymmdd`, unknown parts 0.
    pub date: u32,
    /// [`SPEEDS`] index plus one, 0 unknown.
    pub speed: u8,
}

impl Numbers {
    /// The mean of both players' ratings, or the one given (`None`:
    /// neither): what a query's rating bounds look at.
    pub(crate) fn rating(&self) -> Option<u32> {
        match (self.white_elo, self.black_elo) {
            (0, 0) => None,
            (w, 0) => Some(u32::from(w)),
            (0, b) => Some(u32::from(b)),
            (w, b) => Some((u32::from(w) + u32::from(b)) / 2),
        }
    }
}

/// lichess's speeds, by a game's estimated time (base + 40 × increment).
pub(crate) const SPEEDS: [&str; 6] = [
    "ultrabullet",
    "bullet",
    "blitz",
    "rapid",
    "classical",
    "correspondence",
];

fn speed_of(tc: &str) -> u8 {
    let tc = tc.trim();
    if tc == "-" {
        return 6;
    }
    let first = tc.split(':').next().unwrap_or("");
    let (base, inc) = first.split_once('+').unwrap_or((first, "0"));
    let (Ok(base), Ok(inc)) = (base.parse::<u64>(), inc.parse::<u64>()) else {
        return 0;
    };
    let t = base.saturating_add(inc.saturating_mul(40));
    match t {
        0..30 => 1,
        30..180 => 2,
        180..480 => 3,
        480..1500 => 4,
        _ => 5,
    }
}

/// A date `yyyy.mm.dd` (or with `-` or `/`; `??` parts unknown) as
/// `yyyymmdd`, unknown parts 0.
pub(crate) fn date_of(text: &str) -> u32 {
    let mut parts = text.trim().split(['.', '-', '/']);
    let mut n = 0u32;
    for (width, most) in [(10_000u32, 9999u32), (100, 12), (100, 31)] {
        let v = parts
            .next()
            .and_then(|p| p.parse::<u32>().ok())
            .filter(|&v| v <= most)
            .unwrap_or(0);
        n = n * width + v;
    }
    n
}

fn result_of(text: &str) -> u8 {
    match text.trim() {
        "1-0" => 1,
        "1/2-1/2" => 2,
        "0-1" => 3,
        _ => 0,
    }
}

impl Meta {
    /// The tags of a game's record. A game without an `ECO` tag gets the
    /// one its moves give in lichess's table, and where `opening`, one
    /// without an `Opening` tag gets the name they give (a search without
    /// the index names only the games it finds: [`Meta::opening_of`]).
    pub(crate) fn of(record: &GameRecord, opening: bool) -> Meta {
        let mut meta = Meta::default();
        let mut date = None;
        for (name, value) in &record.tags {
            let v = String::from_utf8_lossy(value);
            match name.as_slice() {
                b"White" => meta.white = v.into(),
                b"Black" => meta.black = v.into(),
                b"Event" => meta.event = v.into(),
                b"ECO" => meta.eco = v.into(),
                b"Opening" => meta.opening = v.into(),
                b"Result" => meta.numbers.result = result_of(&v),
                b"WhiteElo" => meta.numbers.white_elo = v.trim().parse().unwrap_or(0),
                b"BlackElo" => meta.numbers.black_elo = v.trim().parse().unwrap_or(0),
                b"Date" => date = date.or(Some(date_of(&v))),
                b"UTCDate" => date = Some(date.filter(|&d| d != 0).unwrap_or(date_of(&v))),
                b"TimeControl" => meta.numbers.speed = speed_of(&v),
                _ => {}
            }
        }
        meta.numbers.date = date.unwrap_or(0);
        if (meta.eco.is_empty() || (opening && meta.opening.is_empty()))
            && let Some(named) = OpeningTable::lichess().classify(&record.start, &record.moves)
        {
            if meta.eco.is_empty() {
                meta.eco = named.eco.into();
            }
            if meta.opening.is_empty() {
                meta.opening = named.name.into();
            }
        }
        meta
    }

    /// The name of a game's opening as [`Meta::of`] gives it where asked.
    pub(crate) fn opening_of(&self, record: &GameRecord) -> Arc<str> {
        if !self.opening.is_empty() {
            return self.opening.clone();
        }
        OpeningTable::lichess()
            .classify(&record.start, &record.moves)
            .map_or_else(|| self.opening.clone(), |named| named.name.into())
    }
}

/// What the section keeps of a game, made from its record on a worker:
/// its tags (`None`: stored verbatim), its mainline's move keys and
/// changes with their plies, and its start where that is not the standard
/// one.
pub(crate) struct Summary {
    meta: Option<Meta>,
    /// The start of a game from another position (`None` for the
    /// standard start).
    start: Option<Box<Chess>>,
    moves: Vec<u16>,
    changes: Vec<(u8, u16)>,
    /// The pawns' files after the changes of material whose state keeps
    /// them ([`state::keeps_files`]), with their plies.
    files: Vec<(u16, u16)>,
}

/// The pieces in the order of the section's columns of squares: White's
/// pawn to king, then Black's.
pub(crate) const PIECES: [Piece; 12] = {
    let mut out = [Piece {
        color: Color::White,
        role: Role::Pawn,
    }; 12];
    let mut i = 0;
    while i < 12 {
        out[i] = Piece {
            color: if i < 6 { Color::White } else { Color::Black },
            role: Role::ALL[i % 6],
        };
        i += 1;
    }
    out
};

/// Where the section's squares of a game are cut into parts: each column
/// keeps the squares of the positions after the game's node up to the
/// first of these plies, then those up to the next, and so on to its end.
/// A pattern must stand in one part at once, so a game whose pieces stood
/// on its squares only across a cut is not decoded, and one whose pieces
/// did so only before a cut is decoded no further.
///
/// Issue 68, on 40 MB of master games (61,016 games) and 20 sub-FENs,
/// against the squares kept whole: one cut at 40 plies (of 30, 40, 50 and
/// 60 the best) left 16% fewer games to decode and the median query 25%
/// faster, for 46% more bytes of squares; cuts at 30 and 60, 21% fewer
/// games and 37% faster for 79% more; at 20, 40 and 60, 25% fewer and 38%
/// faster for 109% more.
pub(crate) const SQUARES_CUTS: [u32; 2] = [30, 60];

/// The number of parts of a game's squares ([`SQUARES_CUTS`]).
pub(crate) const SQUARES_PARTS: usize = SQUARES_CUTS.len() + 1;

/// The squares of each of [`PIECES`] on `board`.
pub(crate) fn piece_squares(board: &Board) -> [u64; 12] {
    PIECES.map(|p| board.by_piece(p).0)
}

impl Summary {
    /// The summary of a game's record.
    pub(crate) fn of(record: Option<&GameRecord>) -> Summary {
        let Some(record) = record else {
            return Summary {
                meta: None,
                start: None,
                moves: Vec::new(),
                changes: Vec::new(),
                files: Vec::new(),
            };
        };
        let mut s = Summary {
            meta: Some(Meta::of(record, true)),
            start: (!is_standard_start(&record.start)).then(|| Box::new(record.start.clone())),
            moves: Vec::new(),
            changes: Vec::new(),
            files: Vec::new(),
        };
        let mut pos = record.start.clone();
        let mut state = State::of(&pos);
        for (i, &m) in record.moves.iter().enumerate() {
            // A record's moves are legal: decoded from the legal moves, or
            // parsed; a game whose mainline has a null move, which a
            // record would leave out, comes as text. So the mover alone
            // is checked, where a move after a left-out null would be the
            // other side's: checking every move's legality was 1% of
            // `chesspack index`'s instructions.
            if m.from()
                .is_some_and(|from| pos.board().color_at(from) != Some(pos.turn()))
            {
                break;
            }
            debug_assert!(pos.is_legal(m), "a record's move is not legal");
            let code = state::change(&pos, m);
            let ply = (i + 1).min(usize::from(u16::MAX)) as u16;
            if code != 0 {
                s.changes.push((code, ply));
            }
            s.moves.push(move_key(m));
            let could_castle = state::can_castle(&pos);
            pos.play_unchecked(m);
            state.apply(code);
            if state::changes_material(code) && state::keeps_files(&state) {
                s.files.push((ply, state::pawn_files(pos.board())));
            }
            // A side's castling gone, after the move's own change.
            for lost in state::castling_codes(could_castle, state::can_castle(&pos)) {
                s.changes.push((lost, ply));
                state.apply(lost);
            }
        }
        s
    }

    /// The summaries of a block's records.
    fn of_block(records: Vec<Option<GameRecord>>) -> Box<dyn std::any::Any + Send> {
        Box::new(
            records
                .iter()
                .map(|r| Summary::of(r.as_ref()))
                .collect::<Vec<_>>(),
        )
    }
}

/// A game as the builder keeps it until the tree is made.
struct Game {
    flags: u8,
    /// The start of a game from another position.
    start: Option<Box<Chess>>,
    meta: [u32; 5],
    numbers: Numbers,
    /// Its moves' keys and changes (with their plies), in the builder's
    /// `moves` and `changes`.
    moves: std::ops::Range<usize>,
    changes: std::ops::Range<usize>,
    files: std::ops::Range<usize>,
}

/// The tree, made: in preorder each node's move, number of children and
/// change (the root's: none); each game's last node, the move it plays
/// there and that node's depth.
struct Tree {
    moves: Vec<u16>,
    children: Vec<u32>,
    codes: Vec<u8>,
    exits: Vec<u32>,
    exit_moves: Vec<u16>,
    depths: Vec<usize>,
}

/// A stretch where a game comes back to the tree after it left it: at
/// `ply` its position is `node`'s (the first node in preorder with that
/// position), and it follows the tree's moves from there down to `end` (a
/// descendant, or `node` itself), where it plays `next` ([`NO_MOVE`]: the
/// game ends there).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Reentry {
    pub ply: u32,
    pub node: u32,
    pub end: u32,
    pub next: u16,
}

/// The made tree's shape for the builder: each node's subtree end and
/// its position's key; the first node of each key.
struct Made {
    end: Vec<u32>,
    by_key: crate::hash::ByHash<u32>,
}

impl Made {
    fn of(tree: &Tree) -> Made {
        let n = tree.moves.len();
        let mut end = vec![0u32; n];
        let mut by_key = crate::hash::ByHash::with_capacity_and_hasher(n, Default::default());
        // (node, position, its key, children left); a node's subtree ends
        // where its last child's does.
        let start = Chess::default();
        let start_key = key(&start);
        by_key.insert(start_key, 0);
        let mut stack: Vec<(usize, Chess, u64, u32)> =
            vec![(0, start, start_key, tree.children[0])];
        let mut next = 1usize;
        while let Some((x, pos, k, left)) = stack.last_mut() {
            if *left == 0 {
                end[*x] = next as u32;
                stack.pop();
                continue;
            }
            *left -= 1;
            let mut p = pos.clone();
            let k = match made_move(&p, tree.moves[next]) {
                Some(m) => play_keyed(&mut p, *k, m),
                None => *k,
            };
            by_key.entry(k).or_insert(next as u32);
            stack.push((next, p, k, tree.children[next]));
            next += 1;
        }
        Made { end, by_key }
    }

    /// The child of node `x` by move key `mv`.
    fn child(&self, tree: &Tree, x: u32, mv: u16) -> Option<u32> {
        let mut c = x + 1;
        while c < self.end[x as usize] {
            if tree.moves[c as usize] == mv {
                return Some(c);
            }
            c = self.end[c as usize];
        }
        None
    }
}

/// Where a game comes back to the tree after it leaves it, and the
/// squares each of [`PIECES`] stood on after it left it (where the section
/// keeps them; else none).
type AfterNode = (Vec<Reentry>, Option<Box<[[u64; 12]; SQUARES_PARTS]>>);

impl IndexBuilder {
    /// Where game `g` comes back to the tree after it leaves it, and where
    /// its pieces stood in the positions after its node (those at its node
    /// and before are the tree's, which a query walks). A game from
    /// another start has no node: where it comes to the tree and where its
    /// pieces stood are from its start on, ply 0 (the start) included.
    fn reentries_of(&self, g: usize, tree: &Tree, shape: &Made) -> AfterNode {
        let mut out: Vec<Reentry> = Vec::new();
        let mut squares = self.squares.then(|| Box::new([[0u64; 12]; SQUARES_PARTS]));
        let game = &self.games[g];
        let moves = self.moves_of(g);
        let depth = tree.depths[g];
        let mut pos = match (&game.start, game.flags) {
            (Some(start), _) => Chess::clone(start),
            (None, INDEXED) if depth < moves.len() => Chess::default(),
            _ => return (out, squares),
        };
        let mut now = key(&pos);
        // On the tree at a node, in a stretch that started at `out.last()`.
        let mut on: Option<u32> = None;
        // The position after `ply` plies, after the game's node: its
        // squares, and the tree again where a node has it.
        let mut at = |ply: usize, pos: &Chess, now: u64, on: &mut Option<u32>, k: u16| {
            if let Some(squares) = squares.as_deref_mut() {
                let part = &mut squares[SQUARES_CUTS.iter().filter(|&&c| ply > c as usize).count()];
                for (sq, now) in part.iter_mut().zip(piece_squares(pos.board())) {
                    *sq |= now;
                }
            }
            if let Some(x) = *on {
                if let Some(c) = shape.child(tree, x, k) {
                    *on = Some(c);
                    return;
                }
                let last = out.last_mut().expect("a stretch is open");
                (last.end, last.next) = (x, k);
                *on = None;
            }
            if let Some(&n) = shape.by_key.get(&now) {
                out.push(Reentry {
                    ply: ply as u32,
                    node: n,
                    end: n,
                    next: NO_MOVE,
                });
                *on = Some(n);
            }
        };
        if game.start.is_some() {
            at(0, &pos, now, &mut on, NO_MOVE);
        }
        for (i, &k) in moves.iter().enumerate() {
            let Some(m) = made_move(&pos, k) else { break };
            now = play_keyed(&mut pos, now, m);
            let ply = i + 1;
            if ply > depth {
                at(ply, &pos, now, &mut on, k);
            }
        }
        if let Some(x) = on {
            let last = out.last_mut().expect("a stretch is open");
            (last.end, last.next) = (x, NO_MOVE);
        }
        (out, squares)
    }

    fn moves_of(&self, g: usize) -> &[u16] {
        &self.moves[self.games[g].moves.clone()]
    }

    fn changes_of(&self, g: usize) -> &[(u8, u16)] {
        &self.changes[self.games[g].changes.clone()]
    }

    /// The change of game `g`'s move to `ply` ([`state::change`]), 0 for
    /// none: not the castling rights it ends, which the tree's moves give.
    fn change_at(&self, g: usize, ply: usize) -> u8 {
        let changes = self.changes_of(g);
        let at = changes.partition_point(|&(_, p)| usize::from(p) < ply);
        changes[at..]
            .iter()
            .take_while(|&&(_, p)| usize::from(p) == ply)
            .find(|&&(c, _)| !state::is_castling(c))
            .map_or(0, |&(c, _)| c)
    }
}

/// A node of the tree while it is built: a node that one game alone has
/// reached keeps that game (its line below is the game's own) until a
/// second game comes.
struct Node {
    mv: u16,
    count: u32,
    first_child: u32,
    next_sibling: u32,
    only: u32,
    /// The game that first came here: its change on the move here is the
    /// node's.
    first: u32,
}

/// Builds the search section from the games' records, block by block.
pub(crate) struct IndexBuilder {
    games: Vec<Game>,
    moves: Vec<u16>,
    changes: Vec<(u8, u16)>,
    files: Vec<(u16, u16)>,
    names: HashMap<String, u32>,
    name_list: Vec<String>,
    /// The bytes of the names in `name_list`.
    name_bytes: usize,
    /// The games from another start.
    starts: usize,
    /// Whether the section keeps each game's squares.
    squares: bool,
    /// The most memory the builder may take ([`IndexBuilder::limit`]).
    memory: u64,
    /// Where it would take more: the games it had held when it let them
    /// go, and those it has been given in all since the first.
    over: Option<(u64, u64)>,
}

/// The memory the search section's builder takes at most by default:
/// [`IndexBuilder::limit`] says how it is counted. It counts about 800
/// bytes a master game, so this is about five million of them.
pub(crate) const DEFAULT_MEMORY: u64 = 4 << 30;

/// How many times the bytes an [`IndexBuilder`] holds for its games it
/// takes at its peak, while it makes the section from them (the tree, the
/// columns raw and packed). Measured with `compress` (issue 68): from the
/// first 50 MB of the masters file to all of it (75,421 to 380,608
/// games), the process's peak grew by 1.65 times the held bytes, plus
/// about 64 MB that does not grow with the games (with `--no-index`, 74
/// MB in all); online-broad and a lichess account's export fit the same
/// line within 15 MB. Two leaves a margin.
const PEAK_PER_HELD: u64 = 2;

/// The bytes an [`IndexBuilder`] counts that it holds for each game, game
/// from another start, move, change, pawns' files and name (beside the
/// name's bytes): their sizes on a 64-bit machine, fixed so that the
/// count is the same on every platform.
const HELD_BYTES: [usize; 6] = [96, 136, 2, 4, 4, 64];

/// The bytes an [`IndexBuilder`] that keeps the games' squares counts for
/// each game beside [`HELD_BYTES`]: the squares' columns, made when the
/// section is (`chesspack index --squares` of the masters file peaked at
/// 683 MB against 386 MB without: 780 bytes a game, half of it counted
/// here and doubled by [`PEAK_PER_HELD`]).
const SQUARES_HELD: usize = 390;

impl IndexBuilder {
    /// An empty builder; where `squares`, its section keeps, for each
    /// game, the squares each piece stood on in each part of the game
    /// ([`SQUARES_CUTS`]; about twice as many bytes again as the rest of
    /// the section): a sub-FEN, and a position many games could come to,
    /// then decode only the games whose pieces stood on its squares in one
    /// part.
    pub(crate) fn new(squares: bool) -> IndexBuilder {
        let mut b = IndexBuilder {
            games: Vec::new(),
            moves: Vec::new(),
            changes: Vec::new(),
            files: Vec::new(),
            names: HashMap::new(),
            name_list: Vec::new(),
            name_bytes: 0,
            starts: 0,
            squares,
            memory: DEFAULT_MEMORY,
            over: None,
        };
        b.name("");
        b
    }

    /// The builder, taking at most `memory` bytes (0: [`DEFAULT_MEMORY`]).
    ///
    /// The memory is worked out from what it holds, never asked of the
    /// system, so that whether an archive gets its section is the same on
    /// every machine: [`PEAK_PER_HELD`] times the bytes of its games'
    /// moves, changes, pawns' files, starts and tags' names, and of its
    /// record of each game. Past that it lets every game go
    /// ([`IndexBuilder::over`]) and makes no section.
    pub(crate) fn limit(mut self, memory: u64) -> IndexBuilder {
        self.memory = if memory == 0 { DEFAULT_MEMORY } else { memory };
        self
    }

    /// Where the games would take more memory than the builder's limit:
    /// the games it had held then, as an error.
    pub(crate) fn over(&self) -> Option<ArchiveError> {
        self.over.map(|(games, _)| ArchiveError::IndexMemory {
            memory: self.memory,
            games,
        })
    }

    /// Where `games` would take more memory than the builder's limit by
    /// their records alone ([`HELD_BYTES`]' first), before any is given:
    /// the game by which they would, as an error.
    pub(crate) fn over_before(&self, games: u64) -> Option<ArchiveError> {
        let each = PEAK_PER_HELD * HELD_BYTES[0] as u64;
        (games.saturating_mul(each) > self.memory).then(|| ArchiveError::IndexMemory {
            memory: self.memory,
            games: self.memory / each + 1,
        })
    }

    /// Where the games took more memory than the builder's limit, why it
    /// made no section, for [`crate::files::Report::index_left_out`].
    pub(crate) fn left_out(&self) -> Option<String> {
        let (_, given) = self.over?;
        Some(format!(
            "{}; the archive's {given} games were written without it",
            self.over()?
        ))
    }

    /// The memory that the builder's games would take at its peak
    /// ([`IndexBuilder::limit`]), by [`HELD_BYTES`]: the same on every
    /// platform.
    fn peak(&self) -> u64 {
        let [game, start, mv, change, files, name] = HELD_BYTES;
        let held = game * self.games.len()
            + start * self.starts
            + mv * self.moves.len()
            + change * self.changes.len()
            + files * self.files.len()
            // Each name twice (the map's key and the list's), and its
            // `String`s and the map's entry.
            + 2 * self.name_bytes
            + name * self.name_list.len()
            + if self.squares {
                SQUARES_HELD * self.games.len()
            } else {
                0
            };
        PEAK_PER_HELD * held as u64
    }

    fn name(&mut self, s: &str) -> u32 {
        if let Some(&i) = self.names.get(s) {
            return i;
        }
        let i = self.name_list.len() as u32;
        self.names.insert(s.to_owned(), i);
        self.name_list.push(s.to_owned());
        self.name_bytes += s.len();
        i
    }

    /// The opening's number in its column ([`OPENING`]): a name of
    /// lichess's table is its label, any other (an `Opening` tag of its
    /// own, none) a name, after the labels ([`table_label`]).
    fn opening(&mut self, name: &str) -> u32 {
        match table_label(name) {
            Some(label) => label,
            None => table_labels() + self.name(name),
        }
    }

    /// Adds a game's summary.
    pub(crate) fn add_summary(&mut self, s: Summary) {
        if let Some((_, given)) = &mut self.over {
            *given += 1;
            return;
        }
        self.add(s);
        // Weighed every 1,024 games, and once they are all given
        // ([`IndexBuilder::weigh`]): the limit is passed by at most that
        // many games' bytes before the builder lets them go.
        if self.games.len().is_multiple_of(1024) {
            self.weigh();
        }
    }

    /// Lets every game go where they would take more memory than the
    /// builder's limit ([`IndexBuilder::over`]).
    pub(crate) fn weigh(&mut self) {
        if self.over.is_none() && self.peak() > self.memory {
            let held = self.games.len() as u64;
            *self = IndexBuilder {
                over: Some((held, held)),
                ..IndexBuilder::new(self.squares).limit(self.memory)
            };
        }
    }

    fn add(&mut self, s: Summary) {
        let Some(meta) = s.meta else {
            self.games.push(Game {
                flags: TEXT,
                start: None,
                meta: [0; 5],
                numbers: Numbers::default(),
                moves: 0..0,
                changes: 0..0,
                files: 0..0,
            });
            return;
        };
        let ids = [
            self.name(&meta.white),
            self.name(&meta.black),
            self.name(&meta.event),
            self.name(&meta.eco),
            self.opening(&meta.opening),
        ];
        let mut game = Game {
            flags: 0,
            start: None,
            meta: ids,
            numbers: meta.numbers,
            moves: self.moves.len()..self.moves.len(),
            changes: self.changes.len()..self.changes.len(),
            files: self.files.len()..self.files.len(),
        };
        match s.start {
            None => game.flags = INDEXED,
            Some(start) if State::counts_fit(start.board()) => {
                self.starts += 1;
                game.start = Some(start);
            }
            Some(_) => game.flags = UNSTATED,
        }
        if game.flags != UNSTATED {
            self.moves.extend_from_slice(&s.moves);
            self.changes.extend_from_slice(&s.changes);
            self.files.extend_from_slice(&s.files);
            game.moves.end = self.moves.len();
            game.changes.end = self.changes.len();
            game.files.end = self.files.len();
        }
        self.games.push(game);
    }

    /// The tree of the games' lines (nodes that two or more games reach,
    /// in preorder): each node's move and children, and each game's last
    /// node and the move it plays there.
    fn tree(&self) -> Tree {
        let mut nodes = vec![Node {
            mv: NO_MOVE,
            count: 0,
            first_child: NONE,
            next_sibling: NONE,
            only: NONE,
            first: NONE,
        }];
        let child = |nodes: &Vec<Node>, n: u32, mv: u16| {
            let mut c = nodes[n as usize].first_child;
            while c != NONE && nodes[c as usize].mv != mv {
                c = nodes[c as usize].next_sibling;
            }
            (c != NONE).then_some(c)
        };
        let add_child = |nodes: &mut Vec<Node>, n: u32, mv: u16, only: u32| {
            let id = nodes.len() as u32;
            let next = nodes[n as usize].first_child;
            nodes.push(Node {
                mv,
                count: 1,
                first_child: NONE,
                next_sibling: next,
                only,
                first: only,
            });
            nodes[n as usize].first_child = id;
        };
        for (g, game) in self.games.iter().enumerate() {
            if game.flags & INDEXED == 0 {
                continue;
            }
            // Entering node `n` at depth `d`: a game that was alone there
            // goes on below it.
            let enter = |nodes: &mut Vec<Node>, n: u32, d: usize| {
                nodes[n as usize].count += 1;
                let only = std::mem::replace(&mut nodes[n as usize].only, NONE);
                if only != NONE
                    && let Some(&mv) = self.moves_of(only as usize).get(d)
                {
                    add_child(nodes, n, mv, only);
                }
            };
            let mut n = 0u32;
            enter(&mut nodes, 0, 0);
            for (d, &mv) in self.moves_of(g).iter().enumerate() {
                match child(&nodes, n, mv) {
                    Some(c) => {
                        enter(&mut nodes, c, d + 1);
                        n = c;
                    }
                    None => {
                        add_child(&mut nodes, n, mv, g as u32);
                        break;
                    }
                }
            }
        }
        // Preorder of the nodes two games reach, children by move.
        let mut order = vec![NONE; nodes.len()];
        let (mut moves, mut children, mut codes) = (Vec::new(), Vec::new(), Vec::new());
        let mut stack = vec![(0u32, 0usize)];
        while let Some((n, depth)) = stack.pop() {
            order[n as usize] = moves.len() as u32;
            moves.push(nodes[n as usize].mv);
            let first = nodes[n as usize].first;
            codes.push(if first == NONE {
                0
            } else {
                self.change_at(first as usize, depth)
            });
            let mut kids = Vec::new();
            let mut c = nodes[n as usize].first_child;
            while c != NONE {
                if nodes[c as usize].count >= 2 {
                    kids.push(c);
                }
                c = nodes[c as usize].next_sibling;
            }
            kids.sort_by_key(|&c| nodes[c as usize].mv);
            children.push(kids.len() as u32);
            stack.extend(kids.iter().rev().map(|&c| (c, depth + 1)));
        }
        let (mut exits, mut exit_moves, mut depths) = (Vec::new(), Vec::new(), Vec::new());
        for (g, game) in self.games.iter().enumerate() {
            if game.flags & INDEXED == 0 {
                exits.push(NONE);
                exit_moves.push(NO_MOVE);
                depths.push(0);
                continue;
            }
            let mut n = 0u32;
            let mut d = 0;
            let moves = self.moves_of(g);
            while let Some(&mv) = moves.get(d) {
                match child(&nodes, n, mv).filter(|&c| nodes[c as usize].count >= 2) {
                    Some(c) => n = c,
                    None => break,
                }
                d += 1;
            }
            exits.push(order[n as usize]);
            exit_moves.push(moves.get(d).copied().unwrap_or(NO_MOVE));
            depths.push(d);
        }
        Tree {
            moves,
            children,
            codes,
            exits,
            exit_moves,
            depths,
        }
    }

    /// Where each game comes back to the tree after it leaves it, and its
    /// squares after its node where the section keeps them (on the rayon
    /// pool where the `parallel` feature builds one: the order of the
    /// answer is the games').
    fn reentries(&self, tree: &Tree) -> Vec<AfterNode> {
        let made = Made::of(tree);
        let one = |g: usize| self.reentries_of(g, tree, &made);
        #[cfg(feature = "parallel")]
        {
            use rayon::prelude::*;
            (0..self.games.len()).into_par_iter().map(one).collect()
        }
        #[cfg(not(feature = "parallel"))]
        (0..self.games.len()).map(one).collect()
    }

    /// Game `g`'s columns past its node (at ply `depth`; a game from
    /// another start from ply 0): its changes of state (which say how each
    /// pawn left home) and their plies, its pawns' files and where it comes
    /// back to the tree.
    fn stretches_into(
        &self,
        cols: &mut [Vec<u8>],
        (plies, first_files): (&mut [Vec<u8>; PLY_STREAMS], &mut Vec<u8>),
        g: usize,
        depth: usize,
        reentries: &[Reentry],
    ) {
        let game = &self.games[g];
        // The changes after the game leaves the tree: those before are
        // its nodes'.
        let after: Vec<(u8, u16)> = self
            .changes_of(g)
            .iter()
            .copied()
            .filter(|&(_, ply)| usize::from(ply) > depth)
            .collect();
        // Its early changes, up to the one that takes the (EARLY_TAKES +
        // 1)th piece, then the rest, each ended by a 0 byte.
        let early = early_changes(after.iter().map(|&(code, _)| code));
        cols[CHANGES].extend(after[..early].iter().map(|&(code, _)| code));
        cols[CHANGES].push(0);
        cols[LATER_CHANGES].extend(after[early..].iter().map(|&(code, _)| code));
        cols[LATER_CHANGES].push(0);
        // The plies of the changes of material (pieces taken,
        // promotions), each from the last (the first from the node), in
        // the stream of its context ([`ply_stream`]).
        let mut last = depth as u64;
        let mut before = None;
        for &(code, ply) in &after {
            if state::changes_material(code) {
                let step = u64::from(ply) - last;
                put_varint(&mut plies[ply_stream(before, code)], step);
                before = Some((code, step));
                last = u64::from(ply);
            }
        }
        // The pawns' files of its stretches that keep them.
        let files = &self.files[game.files.clone()];
        let files = files.iter().filter(|&&(ply, _)| usize::from(ply) > depth);
        put_varint(&mut cols[PAWN_FILE_COUNTS], files.clone().count() as u64);
        // The first apart (with the other games' first), each other from
        // the one before (most stretches end by a trade of pieces, and
        // the files stay).
        let mut last: Option<u16> = None;
        for &(_, f) in files {
            match last {
                None => first_files.extend_from_slice(&f.to_le_bytes()),
                Some(l) => cols[PAWN_FILES].extend_from_slice(&(f ^ l).to_le_bytes()),
            }
            last = Some(f);
        }
        // Where it comes back to the tree: each ply from the last
        // (the first from its node, or for a game from another start, one
        // more than its ply: it may be its start's), the node, how far
        // down it goes.
        put_varint(&mut cols[REENTRY_COUNTS], reentries.len() as u64);
        let shift = u32::from(game.start.is_some());
        let mut last = depth as u32;
        for r in reentries {
            put_varint(&mut cols[REENTRY_PLIES], u64::from(r.ply + shift - last));
            last = r.ply + shift;
            cols[REENTRY_NODES].extend_from_slice(&r.node.to_le_bytes());
            put_varint(&mut cols[REENTRY_ENDS], u64::from(r.end - r.node));
            cols[REENTRY_NEXT].extend_from_slice(&r.next.to_le_bytes());
        }
    }

    /// The section's bytes.
    pub(crate) fn bytes(&self) -> Vec<u8> {
        // The columns of the games' tags need no tree: they are packed
        // while the tree is made (on one thread: a second on the masters
        // file) and the games are followed back onto it (the same bytes
        // either way: each column is packed alone).
        let ((nodes, mut cols, mut packed), (tag_cols, tag_packed)) = threads::join(
            || {
                let (nodes, cols) = self.tree_columns();
                let packed = pack_columns(cols.iter().enumerate().collect());
                (nodes, cols, packed)
            },
            || {
                let cols = self.tag_columns();
                let packed = pack_columns(TAG_COLUMNS.into_iter().zip(&cols).collect());
                (cols, packed)
            },
        );
        for ((i, col), z) in TAG_COLUMNS.into_iter().zip(tag_cols).zip(tag_packed) {
            cols[i] = col;
            packed[i] = z;
        }
        let mut out = MAGIC.to_vec();
        out.push(VERSION);
        put_varint(&mut out, self.games.len() as u64);
        put_varint(&mut out, nodes as u64);
        // The directory (each column's lengths, each group's CRC) and its
        // checksum, then the frames: a query reads the directory and the
        // groups of columns it needs.
        for (col, z) in cols.iter().zip(&packed) {
            put_varint(&mut out, col.len() as u64);
            put_varint(&mut out, z.len() as u64);
        }
        for group in Group::ALL {
            let frames = packed[group.columns()].concat();
            out.extend_from_slice(&crc32fast::hash(&frames).to_le_bytes());
        }
        let crc = crc32fast::hash(&out);
        out.extend_from_slice(&crc.to_le_bytes());
        for z in &packed {
            out.extend_from_slice(z);
        }
        out
    }

    /// The columns of the games' tags ([`TAG_COLUMNS`], in that order),
    /// which need no tree.
    fn tag_columns(&self) -> Vec<Vec<u8>> {
        let mut cols: Vec<Vec<u8>> = vec![Vec::new(); COLUMNS];
        for game in &self.games {
            cols[FLAGS].push(game.flags);
            let n = game.numbers;
            cols[RESULTS].push(n.result);
            cols[SPEED].push(n.speed);
            cols[WHITE_ELO].extend_from_slice(&n.white_elo.to_le_bytes());
            cols[BLACK_ELO].extend_from_slice(&n.black_elo.to_le_bytes());
            cols[DATES].extend_from_slice(&n.date.to_le_bytes());
            for (i, id) in game.meta[..3].iter().enumerate() {
                cols[WHITE + i].extend_from_slice(&id.to_le_bytes());
            }
        }
        for n in &self.name_list {
            cols[NAMES].extend_from_slice(n.as_bytes());
            cols[NAMES].push(0);
        }
        // Dates compress better a byte plane at a time.
        cols[DATES] = planes(&cols[DATES], 4);
        TAG_COLUMNS
            .iter()
            .map(|&i| std::mem::take(&mut cols[i]))
            .collect()
    }

    /// The number of the tree's nodes and every column (those of
    /// [`TAG_COLUMNS`] empty): the tree, the games' nodes, what they do
    /// after them and where they come back to the tree.
    fn tree_columns(&self) -> (usize, Vec<Vec<u8>>) {
        let tree = self.tree();
        let reentries = self.reentries(&tree);
        let Tree {
            moves,
            children,
            codes,
            exits,
            exit_moves,
            depths,
        } = tree;
        let mut cols: Vec<Vec<u8>> = vec![Vec::new(); COLUMNS];
        let mut plies: [Vec<u8>; PLY_STREAMS] = Default::default();
        let mut first_files = Vec::new();
        for m in &moves[1..] {
            cols[NODE_MOVES].extend_from_slice(&m.to_le_bytes());
        }
        cols[NODE_CHANGES].extend_from_slice(&codes[1..]);
        for &c in &children {
            put_varint(&mut cols[NODE_CHILDREN], u64::from(c));
        }
        for g in 0..self.games.len() {
            cols[EXITS].extend_from_slice(&exits[g].to_le_bytes());
            cols[EXIT_MOVES].extend_from_slice(&exit_moves[g].to_le_bytes());
            let streams = (&mut plies, &mut first_files);
            self.stretches_into(&mut cols, streams, g, depths[g], &reentries[g].0);
            if let Some(start) = &self.games[g].start {
                let state = State::of(start);
                cols[START_STATES].extend_from_slice(&state.bits().to_le_bytes());
            }
        }
        // The games' ECO codes and openings in the order of their nodes:
        // the games of a line mostly share theirs (masters-pgnmentor's
        // ECO codes: 518,857 bytes packed in the games' order, 93,152 so).
        let by_exit = by_node(&exits, moves.len());
        for g in node_order(&by_exit, &exits) {
            let meta = &self.games[g as usize].meta;
            cols[ECO].extend_from_slice(&meta[3].to_le_bytes());
            cols[OPENING].extend_from_slice(&meta[4].to_le_bytes());
        }
        // The plies' streams, each after the lengths of all.
        for stream in &plies {
            put_varint(&mut cols[MATERIAL_PLIES], stream.len() as u64);
        }
        cols[MATERIAL_PLIES].extend(plies.concat());
        // The games' first pawns' files, then the others.
        first_files.append(&mut cols[PAWN_FILES]);
        cols[PAWN_FILES] = first_files;
        // Node numbers compress better a byte plane at a time.
        for col in [EXITS, REENTRY_NODES] {
            cols[col] = planes(&cols[col], 4);
        }
        cols[START_STATES] = planes(&cols[START_STATES], 8);
        // Each piece's squares after the games' nodes, a byte plane (a
        // rank) at a time.
        if self.squares {
            for i in 0..PIECES.len() {
                for part in 0..SQUARES_PARTS {
                    let words: Vec<u8> = reentries
                        .iter()
                        .flat_map(|(_, s)| s.as_ref().map_or(0, |s| s[part][i]).to_le_bytes())
                        .collect();
                    cols[SQUARES + i].extend(planes(&words, 8));
                }
            }
        }
        (moves.len(), cols)
    }
}

/// The columns of the games' tags, which the builder makes without the
/// tree ([`IndexBuilder::tag_columns`]).
const TAG_COLUMNS: [usize; 10] = [
    FLAGS,
    RESULTS,
    SPEED,
    WHITE_ELO,
    BLACK_ELO,
    DATES,
    WHITE,
    WHITE + 1,
    WHITE + 2,
    NAMES,
];

/// Each of `cols` (column number, bytes) packed ([`pack`], with
/// [`LEAN`]'s search for its columns), at once where rayon gives threads.
fn pack_columns(cols: Vec<(usize, &Vec<u8>)>) -> Vec<Vec<u8>> {
    let one = |&(i, c): &(usize, &Vec<u8>)| pack(c, LEAN.contains(&i), chunk_of(i));
    #[cfg(feature = "parallel")]
    {
        use rayon::prelude::*;
        cols.par_iter().map(one).collect()
    }
    #[cfg(not(feature = "parallel"))]
    cols.iter().map(one).collect()
}

impl SectionBuilder for IndexBuilder {
    fn summarize(&self) -> Summarize {
        Summary::of_block
    }

    fn add_block(&mut self, games: u64, summary: Option<Box<dyn std::any::Any + Send>>) {
        match summary.map(|s| s.downcast::<Vec<Summary>>()) {
            Some(Ok(summaries)) => {
                for s in *summaries {
                    self.add_summary(s);
                }
            }
            // A block not summarized: only once the builder has let its
            // games go ([`SectionBuilder::summarizing`]).
            _ => {
                debug_assert!(self.over.is_some(), "a block not summarized");
                if let Some((_, given)) = &mut self.over {
                    *given += games;
                }
            }
        }
    }

    /// Not once the games are let go ([`IndexBuilder::over`]).
    fn summarizing(&self) -> bool {
        self.over.is_none()
    }

    /// The section, or nothing for an archive of fewer than
    /// [`MIN_GAMES`] games (`chesspack index` writes one for any) or one
    /// whose games take more memory than the builder's limit
    /// ([`IndexBuilder::over`]).
    fn finish(&mut self) -> Vec<u8> {
        self.weigh();
        if self.games.len() < MIN_GAMES || self.over.is_some() {
            return Vec::new();
        }
        self.bytes()
    }

    /// A section with the squares was asked for: kept whatever its size.
    fn asked(&self) -> bool {
        self.squares
    }
}

/// The fewest games `compress` writes a search section for. A query
/// decodes so few games in a few hundredths of a second (31 games of the
/// sample: 19–28 ms, against 6–15 ms with the section), and the section
/// would make small files much larger: by its fixed cost (about 160
/// bytes) larger than `xz -9e` of them, and by 74% for those 31 games
/// (issue 69).
pub(crate) const MIN_GAMES: usize = 32;

// The columns, in groups read when a query first needs them: the tree and
// the games' numbers (every query), the stretches back on the tree, the
// changes of state, their plies and the pawns' files, the names, the
// squares.
const NODE_MOVES: usize = 0;
const NODE_CHILDREN: usize = 1;
const NODE_CHANGES: usize = 2;
const FLAGS: usize = 3;
const EXITS: usize = 4;
const EXIT_MOVES: usize = 5;
const RESULTS: usize = 6;
const SPEED: usize = 7;
const WHITE_ELO: usize = 8;
const BLACK_ELO: usize = 9;
const DATES: usize = 10;
const REENTRY_COUNTS: usize = 11;
const REENTRY_PLIES: usize = 12;
const REENTRY_NODES: usize = 13;
const REENTRY_ENDS: usize = 14;
const REENTRY_NEXT: usize = 15;
/// Each game's changes after its node up to the one that takes its
/// ([`EARLY_TAKES`] + 1)th piece, then a 0 byte (no change is 0): its
/// early changes.
const CHANGES: usize = 16;
/// The start's [`State`] of each game from another start.
const START_STATES: usize = 17;
/// Each game's changes after its early ones, then a 0 byte.
const LATER_CHANGES: usize = 18;
const MATERIAL_PLIES: usize = 19;
const PAWN_FILE_COUNTS: usize = 20;
const PAWN_FILES: usize = 21;
/// Then `BLACK`, `EVENT` and `ECO`: ids into `NAMES`, and `OPENING`
/// (ECO's and the opening's in the order of the games' nodes:
/// [`node_order`]).
const WHITE: usize = 22;
const ECO: usize = WHITE + 3;
/// The `Opening` tag, or the name the moves give in lichess's table
/// (since section version 16): the label of a name of the table (most
/// games'), else [`table_labels`] plus the name's id into `NAMES`, so
/// that the table's names cost no bytes of names (as names they took 22
/// KB of masters-pgnmentor's section, and 13% of the section of a file of
/// 387 master games).
const OPENING: usize = WHITE + 4;
const NAMES: usize = 27;
/// A column for each of [`PIECES`] (empty where the section has none).
const SQUARES: usize = 28;
const COLUMNS: usize = 40;

/// The labels of lichess's opening table ([`OpeningTable::lichess`]):
/// the numbers below it in the [`OPENING`] column are labels.
pub(crate) fn table_labels() -> u32 {
    OpeningTable::lichess().labels() as u32
}

/// The label of lichess's table named `name` (the first of those that
/// share it: the name is what is kept).
fn table_label(name: &str) -> Option<u32> {
    static BY_NAME: OnceLock<HashMap<&'static str, u32>> = OnceLock::new();
    BY_NAME
        .get_or_init(|| {
            let table = OpeningTable::lichess();
            let mut by_name = HashMap::new();
            for label in 0..table_labels() {
                if let Some(o) = table.label(label) {
                    by_name.entry(o.name).or_insert(label);
                }
            }
            by_name
        })
        .get(name)
        .copied()
}

/// The pieces that a game's early changes ([`CHANGES`]) take after its
/// node (or its start) and that a query may look for without its later
/// ones: those end with the change that takes one more, after which the
/// game has fewer men than a position with at most this many gone (from
/// the 32 of a start) has. Positions of moves 5 to 15 mostly have no more
/// gone, and a game's early changes are 37% of the change codes' bytes on
/// the masters file, for 53 KB more section (0.4%) than the codes with a
/// count a game (issue 68; 1: 23% of the bytes, 7 KB more; 4: 44%, 131
/// KB).
pub(crate) const EARLY_TAKES: usize = 3;

/// How many of `codes` (a game's changes after its node, in order) are
/// its early ones: up to the one that takes its ([`EARLY_TAKES`] + 1)th
/// piece, or all of them.
fn early_changes(codes: impl IntoIterator<Item = u8>) -> usize {
    let mut taken = 0;
    let mut n = 0;
    for c in codes {
        n += 1;
        taken += usize::from(state::takes(c));
        if taken > EARLY_TAKES {
            break;
        }
    }
    n
}

/// A group of columns, read at once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Group {
    /// Read when the section is opened.
    Head,
    Reentries,
    /// The early changes of state: every query that is not a position of
    /// the tree.
    Changes,
    /// The later changes: a query whose position a game may come to
    /// after it has taken [`EARLY_TAKES`] + 1 pieces past its node (one
    /// with fewer men than the start less that: a material, a sub-FEN,
    /// a position with more pieces gone). A group of its own since
    /// section version 15: a position of one game at move 10 read all
    /// 8 MB of the masters file's change codes, where its 3 MB of early
    /// ones decide (issue 68).
    LaterChanges,
    /// The plies of the changes of material and the pawns' files: a
    /// material, and a position whose state keeps its pawns' files. A
    /// group of their own since section version 10: a middlegame position
    /// read 3.3 MB of them with its 4.8 MB of changes on the masters file
    /// (issue 68).
    Plies,
    Names,
    Squares,
}

impl Group {
    /// Every group, in the order declared (their CRCs' order; the head's
    /// first, then those read later).
    const ALL: [Group; 7] = [
        Group::Head,
        Group::Reentries,
        Group::Changes,
        Group::LaterChanges,
        Group::Plies,
        Group::Names,
        Group::Squares,
    ];

    fn columns(self) -> std::ops::Range<usize> {
        match self {
            Group::Head => 0..REENTRY_COUNTS,
            Group::Reentries => REENTRY_COUNTS..CHANGES,
            Group::Changes => CHANGES..LATER_CHANGES,
            Group::LaterChanges => LATER_CHANGES..MATERIAL_PLIES,
            Group::Plies => MATERIAL_PLIES..WHITE,
            Group::Names => WHITE..SQUARES,
            Group::Squares => SQUARES..COLUMNS,
        }
    }

    fn of(col: usize) -> Group {
        match col {
            c if c < REENTRY_COUNTS => Group::Head,
            c if c < CHANGES => Group::Reentries,
            c if c < LATER_CHANGES => Group::Changes,
            c if c < MATERIAL_PLIES => Group::LaterChanges,
            c if c < WHITE => Group::Plies,
            c if c < SQUARES => Group::Names,
            _ => Group::Squares,
        }
    }

    /// The place of a group read later in [`Index`]'s `lazy` (the head
    /// is read at once: none).
    fn slot(self) -> Option<usize> {
        self.number().checked_sub(1)
    }

    /// The group's place in [`Group::ALL`] (the order it is declared in),
    /// and of its CRC in the directory.
    fn number(self) -> usize {
        self as usize
    }
}

/// A column's place in the section: its length unpacked, where its frame
/// is from the section's start, and the frame's length (the same as `raw`:
/// the column's bytes as they are).
#[derive(Clone, Debug)]
struct ColumnAt {
    raw: usize,
    at: u64,
    stored: usize,
}

/// Where the section's columns lie, and each group's CRC-32 (of its
/// frames, in [`Group::ALL`]'s order).
#[derive(Clone, Debug)]
struct Directory {
    columns: Vec<ColumnAt>,
    crcs: [u32; Group::ALL.len()],
}

/// Why a search section is not read.
#[derive(Debug)]
pub(crate) enum Unreadable {
    /// Its layout's version is not this build's: an archive indexed by
    /// another chesspack.
    Version(u8),
    /// What is wrong with a damaged section (or why it did not read).
    Damaged(String),
}

impl From<String> for Unreadable {
    fn from(why: String) -> Unreadable {
        Unreadable::Damaged(why)
    }
}

impl From<&str> for Unreadable {
    fn from(why: &str) -> Unreadable {
        Unreadable::Damaged(why.into())
    }
}

impl std::fmt::Display for Unreadable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unreadable::Version(v) => write!(
                f,
                "search section version {v} is not supported: this chesspack reads version \
                 {VERSION} only (`chesspack index` rebuilds it)"
            ),
            Unreadable::Damaged(why) => write!(f, "damaged search section: {why}"),
        }
    }
}

/// Reads `len` bytes of the section from `at` (from its start).
pub(crate) type Fetch<'a> = dyn FnMut(u64, usize) -> Result<Vec<u8>, String> + 'a;

/// The most bytes a section's directory takes: magic, version, two
/// varints, a raw and a stored length a column, a CRC a group, and its CRC.
const DIRECTORY_MAX: usize = 5 + 2 * 10 + COLUMNS * (10 + 10) + Group::ALL.len() * 4 + 4;

/// `width`-byte numbers a byte plane at a time: every number's first
/// byte, then every second byte...
fn planes(b: &[u8], width: usize) -> Vec<u8> {
    (0..width)
        .flat_map(|k| b.iter().skip(k).step_by(width).copied())
        .collect()
}

/// The 4-byte numbers of [`planes`] back.
fn unplanes(b: &[u8]) -> Vec<u32> {
    let n = b.len() / 4;
    let (p0, rest) = b.split_at(n);
    let (p1, rest) = rest.split_at(n);
    let (p2, p3) = rest.split_at(n);
    (0..n)
        .map(|i| u32::from_le_bytes([p0[i], p1[i], p2[i], p3[i]]))
        .collect()
}

/// The 8-byte numbers of [`planes`] back.
fn unplanes_u64(b: &[u8]) -> Vec<u64> {
    let n = b.len() / 8;
    (0..n)
        .map(|i| u64::from_le_bytes(std::array::from_fn(|k| b[k * n + i])))
        .collect()
}

pub(crate) use crate::le::{take_leb as get_varint, write_leb as put_varint};

/// The search section, read: the tree, the games' nodes and the tags that
/// are numbers at once; the names and the changes of state when a query
/// first needs them (an explorer needs neither).
#[derive(Debug)]
pub(crate) struct Index {
    pub games: usize,
    /// Each node's move key (the root's is [`NO_MOVE`]), the end of its
    /// subtree in preorder, its depth.
    pub node_move: Vec<u16>,
    pub node_end: Vec<u32>,
    pub node_depth: Vec<u16>,
    pub node_parent: Vec<u32>,
    /// The change of state that each node's move makes (0: none).
    pub node_change: Vec<u8>,
    pub flags: Vec<u8>,
    pub exits: Vec<u32>,
    pub exit_moves: Vec<u16>,
    /// The games' numbers, unpacked when first looked at.
    numbers: NumberColumns,
    /// Each column's place and each group's CRC, and the frames of the
    /// groups read later ([`Group::slot`]), checked when read.
    directory: Directory,
    lazy: [OnceLock<Result<Vec<u8>, String>>; Group::ALL.len() - 1],
    /// Whether frames are checked against their CRCs (not when fuzzing).
    checked: bool,
    names: OnceLock<Result<Names, String>>,
    changes: OnceLock<Result<Changes, String>>,
    later: OnceLock<Result<Run, String>>,
    material_plies: OnceLock<Result<MaterialPlies, String>>,
    pawn_files: OnceLock<Result<PawnFiles, String>>,
    /// The files where each node's line may have put a pawn on its third
    /// rank ([`state::third_rank`]), made on first use.
    node_third: OnceLock<Vec<u16>>,
    reentries: OnceLock<Result<Reentries, String>>,
    /// Each piece's squares, by game ([`PIECES`]), read on first use.
    squares: [OnceLock<Result<Vec<u64>, String>>; 12],
}

/// The games' numbers (columns 6-10: results, speeds, ratings, dates) as
/// stored, unpacked a frame at a time as games are looked at
/// ([`NUMBER_CHUNK`]), or all at once for a query that looks at most
/// games' ([`Index::ready_numbers`]).
#[derive(Debug)]
struct NumberColumns {
    games: usize,
    /// The five columns' stored bytes, in order.
    stored: Vec<u8>,
    /// Each column's frames in `stored` (start, length); none for a column
    /// stored as it is.
    frames: [Vec<(usize, usize)>; 5],
    /// Where each column starts in `stored`, and its unpacked length.
    at: [usize; 5],
    raw: [usize; 5],
    /// Each frame, unpacked when first looked at (`None`: it did not
    /// read, and `damage` says why).
    parts: [Vec<OnceLock<Option<Vec<u8>>>>; 5],
    damage: OnceLock<String>,
    whole: OnceLock<Result<WholeNumbers, String>>,
}

/// Every game's numbers, unpacked.
#[derive(Debug)]
struct WholeNumbers {
    results: Vec<u8>,
    speeds: Vec<u8>,
    white_elo: Vec<u16>,
    black_elo: Vec<u16>,
    dates: Vec<u32>,
}

impl NumberColumns {
    /// The numbers' columns of a section of `games` games, from the head
    /// group's `frames`: their lengths and frames checked, nothing
    /// unpacked.
    fn read(frames: &[u8], columns: &[ColumnAt], games: usize) -> Result<NumberColumns, String> {
        let first = columns[*NUMBER_COLUMNS.start()].at;
        let from = (first - columns[0].at) as usize;
        let last = &columns[*NUMBER_COLUMNS.end()];
        let stored = frames[from..(last.at - columns[0].at) as usize + last.stored].to_vec();
        let mut numbers = NumberColumns {
            games,
            stored,
            frames: Default::default(),
            at: [0; 5],
            raw: [0; 5],
            parts: Default::default(),
            damage: OnceLock::new(),
            whole: OnceLock::new(),
        };
        for (i, col) in NUMBER_COLUMNS.enumerate() {
            let c = &columns[col];
            let width = match col {
                WHITE_ELO | BLACK_ELO => 2,
                DATES => 4,
                _ => 1,
            };
            if c.raw != width * games {
                return Err(format!("column {col} has the wrong length"));
            }
            let at = (c.at - first) as usize;
            numbers.at[i] = at;
            numbers.raw[i] = c.raw;
            if c.stored != c.raw {
                let bytes = &numbers.stored[at..at + c.stored];
                let runs = frame_runs(bytes, c.raw, NUMBER_CHUNK)?;
                let mut start = at;
                numbers.frames[i] = runs
                    .iter()
                    .map(|r| {
                        start += r.len();
                        (start - r.len(), r.len())
                    })
                    .collect();
                numbers.parts[i] = (0..runs.len()).map(|_| OnceLock::new()).collect();
            }
        }
        Ok(numbers)
    }

    /// Byte `i` of column `c` (of [`NUMBER_COLUMNS`], from 0), its frame
    /// unpacked where it is not yet: 0 where it does not read (`damage`
    /// says so).
    fn byte(&self, c: usize, i: usize) -> u8 {
        if self.frames[c].is_empty() {
            return self.stored.get(self.at[c] + i).copied().unwrap_or(0);
        }
        let k = i / NUMBER_CHUNK;
        let part = self.parts[c].get(k).and_then(|part| {
            part.get_or_init(|| {
                let (at, len) = self.frames[c][k];
                let raw = NUMBER_CHUNK.min(self.raw[c] - k * NUMBER_CHUNK);
                unpack_frame(&self.stored[at..at + len], raw)
                    .map_err(|why| self.damage.get_or_init(|| why))
                    .ok()
            })
            .as_ref()
        });
        part.and_then(|p| p.get(i % NUMBER_CHUNK))
            .copied()
            .unwrap_or(0)
    }

    /// Game `g`'s numbers.
    #[inline]
    fn game(&self, g: usize) -> Numbers {
        match self.whole.get() {
            Some(Ok(w)) => Numbers {
                result: w.results[g],
                white_elo: w.white_elo[g],
                black_elo: w.black_elo[g],
                date: w.dates[g],
                speed: w.speeds[g],
            },
            _ => self.game_by_frames(g),
        }
    }

    /// [`NumberColumns::game`] from its frames.
    #[inline(never)]
    fn game_by_frames(&self, g: usize) -> Numbers {
        let word = |c: usize| u16::from_le_bytes([self.byte(c, 2 * g), self.byte(c, 2 * g + 1)]);
        let n = self.games;
        Numbers {
            result: self.byte(0, g),
            speed: self.byte(1, g),
            white_elo: word(2),
            black_elo: word(3),
            date: u32::from_le_bytes([0, 1, 2, 3].map(|k| self.byte(4, k * n + g))),
        }
    }

    /// Every game's numbers, unpacked on first use.
    fn whole(&self) -> Result<&WholeNumbers, String> {
        first_use(&self.whole, || {
            let column = |c: usize| {
                let at = self.at[c];
                let stored = match self.frames[c].last() {
                    Some(&(start, len)) => start + len - at,
                    None => self.raw[c],
                };
                unpack(&self.stored[at..at + stored], self.raw[c], NUMBER_CHUNK)
            };
            let words = |b: Vec<u8>| -> Vec<u16> {
                b.chunks_exact(2)
                    .map(|w| u16::from_le_bytes([w[0], w[1]]))
                    .collect()
            };
            let ((results, speeds), ((white_elo, black_elo), dates)) = threads::join(
                || threads::join(|| column(0), || column(1)),
                || {
                    threads::join(
                        || threads::join(|| column(2).map(words), || column(3).map(words)),
                        || column(4).map(|d| unplanes(&d)),
                    )
                },
            );
            Ok(WholeNumbers {
                results: results?,
                speeds: speeds?,
                white_elo: white_elo?,
                black_elo: black_elo?,
                dates: dates?,
            })
        })
    }
}

/// Where the games come back to the tree after they leave it: the
/// columns as stored (the nodes out of their byte planes), read through
/// at each query by [`Index::reentry_hits`].
#[derive(Debug)]
struct Reentries {
    /// A varint a game: how many.
    counts: Vec<u8>,
    /// Varints: each ply from the last (the first from the game's node).
    plies: Vec<u8>,
    nodes: Vec<u32>,
    /// Varints: how far down from its node each goes.
    ends: Vec<u8>,
    next: Vec<u16>,
}

/// What [`Index::reentry_hits`] looks for, shared by the halves of the
/// games that it reads at once.
struct Look<'a> {
    r: &'a Reentries,
    /// The matched nodes and those above them, a bit a node.
    above: &'a [u64],
    matched: &'a [usize],
    next_moves: bool,
}

/// Where a run of games starts (or ends) in the stretches' columns: its
/// first game, and the byte, stretch or varint where its stretches start
/// in each column.
#[derive(Clone, Copy)]
struct Cursor {
    game: usize,
    counts: usize,
    stretch: usize,
    plies: usize,
    ends: usize,
}

/// The byte after the first `n` varints of `data` (0 for none); `None`
/// where it has fewer.
fn after_varints(data: &[u8], n: usize) -> Option<usize> {
    if n == 0 {
        return Some(0);
    }
    let mut left = n;
    for (at, &b) in data.iter().enumerate() {
        if b < 0x80 {
            left -= 1;
            if left == 0 {
                return Some(at + 1);
            }
        }
    }
    None
}

/// The names of the section: White, Black, Event, ECO of each game, as
/// ids into the names.
#[derive(Debug)]
pub(crate) struct Names {
    pub ids: [Vec<u32>; 5],
    /// The names, each ended by a NUL byte, and where each starts (one
    /// more: the end).
    text: Vec<u8>,
    starts: Vec<u32>,
    /// Each name as a shared string, made when first asked for: a query
    /// that finds one game makes five, not every name of the archive.
    shared: Vec<OnceLock<Arc<str>>>,
    /// Each name of lichess's table as a shared string, the same way.
    labels: Vec<OnceLock<Arc<str>>>,
}

impl Names {
    /// How many names there are.
    pub(crate) fn len(&self) -> usize {
        self.shared.len()
    }

    /// Name `i` (bytes that are no UTF-8 replaced).
    pub(crate) fn text(&self, i: usize) -> std::borrow::Cow<'_, str> {
        let (from, to) = (self.starts[i] as usize, self.starts[i + 1] as usize);
        String::from_utf8_lossy(&self.text[from..to - 1])
    }

    /// Name `i` as a string shared by every game that has it.
    pub(crate) fn shared(&self, i: usize) -> Arc<str> {
        self.shared[i].get_or_init(|| self.text(i).into()).clone()
    }

    /// Game `g`'s names: White, Black, Event, ECO, opening.
    pub(crate) fn of_game(&self, g: usize) -> [Arc<str>; 5] {
        let opening = match self.opening(g) {
            Ok(name) => self.shared(name),
            Err(label) => self.labels[label]
                .get_or_init(|| {
                    let name = OpeningTable::lichess().label(label as u32);
                    name.map_or("", |o| o.name).into()
                })
                .clone(),
        };
        let [white, black, event, eco] = [0, 1, 2, 3].map(|i| self.shared(self.ids[i][g] as usize));
        [white, black, event, eco, opening]
    }

    /// Game `g`'s opening: its name's id, or (`Err`) its label in
    /// lichess's table ([`OPENING`]).
    pub(crate) fn opening(&self, g: usize) -> Result<usize, usize> {
        let id = self.ids[4][g] as usize;
        id.checked_sub(self.labels.len()).ok_or(id)
    }
}

/// The games' early changes of state after their nodes (from their
/// start for games from another start), and those games' start states.
#[derive(Debug)]
struct Changes {
    early: Run,
    /// The games from another start, in order, and their start states.
    from: Vec<u32>,
    starts: Vec<State>,
}

/// A run of change codes for each game, each ended by a 0 byte.
#[derive(Debug)]
struct Run {
    /// Game `g`'s codes: from `at[g]` to the byte before `at[g + 1]`.
    at: Vec<u32>,
    codes: Vec<u8>,
}

impl Run {
    /// The runs of `games` games in `codes`, checked: a valid code is no
    /// multiple of 126 below 254 (252 and 253: a side's castling gone),
    /// and 0 ends a run. The ends are found, and the codes checked, a
    /// [`CHUNK`] a worker.
    fn read(codes: Vec<u8>, games: usize) -> Result<Run, String> {
        if u32::try_from(codes.len()).is_err() {
            return Err("too many changes".into());
        }
        let chunk = |(k, part): (usize, &[u8])| -> Result<Vec<u32>, String> {
            let bad = part
                .iter()
                .fold(0u8, |bad, &c| bad | u8::from(c == 126) | u8::from(c >= 254));
            if bad != 0 {
                return Err("a bad change".into());
            }
            let mut ends = Vec::with_capacity(part.len() / 8);
            ends_in(part, k * CHUNK + 1, &mut ends);
            Ok(ends)
        };
        #[cfg(feature = "parallel")]
        let ends: Vec<Vec<u32>> = {
            use rayon::prelude::*;
            codes
                .par_chunks(CHUNK)
                .enumerate()
                .map(chunk)
                .collect::<Result<_, _>>()?
        };
        #[cfg(not(feature = "parallel"))]
        let ends: Vec<Vec<u32>> = codes
            .chunks(CHUNK)
            .enumerate()
            .map(chunk)
            .collect::<Result<_, _>>()?;
        let mut at = Vec::with_capacity(games + 1);
        at.push(0);
        for e in ends {
            at.extend_from_slice(&e);
        }
        if at.len() != games + 1 || at[games] as usize != codes.len() {
            return Err("the changes do not add up".into());
        }
        Ok(Run { at, codes })
    }

    /// Game `g`'s codes.
    #[inline]
    fn of(&self, g: usize) -> &[u8] {
        &self.codes[self.at[g] as usize..self.at[g + 1] as usize - 1]
    }
}

/// Where each 0 byte of `part` is, plus `base`, into `ends`: eight bytes
/// a word, each 0 byte found by its high bit (exactly: no carry from one
/// byte reaches the next). Most words hold one or two (a game has nine
/// early changes on average): `memchr` stops at each, which took twice
/// as many instructions (issue 68).
fn ends_in(part: &[u8], base: usize, ends: &mut Vec<u32>) {
    const LOW: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    let mut words = part.chunks_exact(8);
    let mut at = base;
    for w in &mut words {
        let x = u64::from_le_bytes(w.try_into().expect("eight bytes"));
        let mut zeros = !(((x & LOW).wrapping_add(LOW)) | x | LOW);
        while zeros != 0 {
            ends.push((at + (zeros.trailing_zeros() / 8) as usize) as u32);
            zeros &= zeros - 1;
        }
        at += 8;
    }
    for (i, &c) in words.remainder().iter().enumerate() {
        if c == 0 {
            ends.push((at + i) as u32);
        }
    }
}

/// A game's changes after its node: its early ones, then its later ones
/// where they are read.
type Codes<'a> =
    std::iter::Copied<std::iter::Chain<std::slice::Iter<'a, u8>, std::slice::Iter<'a, u8>>>;

impl Changes {
    /// The start state of game `g`, from another start.
    fn start(&self, g: usize) -> Result<State, String> {
        self.from
            .binary_search(&(g as u32))
            .map(|i| self.starts[i])
            .map_err(|_| format!("game {} has no start state", g + 1))
    }
}

/// The plies of the games' changes of material, read only where a query
/// needs them (a material or an imbalance: a position query does not).
#[derive(Debug)]
struct MaterialPlies {
    /// The plies, in order: game `g`'s from `at[g]`.
    at: Vec<u32>,
    plies: Vec<u16>,
}

/// The pawns' files of the games' stretches that keep them
/// ([`state::keeps_files`]), read only for a position whose state keeps
/// them.
#[derive(Debug)]
struct PawnFiles {
    /// Game `g`'s from `at[g]` to `at[g + 1]`.
    at: Vec<u32>,
    files: Vec<u16>,
}

/// Each byte's kind as a change: 0 not one, 1 home pawns alone, 2 a change
/// of material.
const CHANGE_KIND: [u8; 256] = {
    let mut kinds = [0u8; 256];
    let mut c = 0;
    while c < 256 {
        if state::valid(c as u8) {
            kinds[c] = if state::changes_material(c as u8) {
                2
            } else {
                1
            };
        }
        c += 1;
    }
    kinds
};

/// The streams of the plies of material ([`ply_stream`]).
const PLY_STREAMS: usize = 7;

/// The stream (of [`PLY_STREAMS`]) that a game's change of material
/// `code` keeps its ply in, by the game's change of material `before` it
/// (its code and its ply from the one before that): by whether the same
/// side made the one before (the plies between are then even, else odd)
/// and how far that one was from its own before (1, a piece taken back at
/// once; 2; 3 or more), the other side's first; the first of a game in
/// the last. Each stream packs better alone, and in this order:
/// masters-pgnmentor's plies 2,061,627 → 1,554,492 bytes (issue 68).
fn ply_stream(before: Option<(u8, u64)>, code: u8) -> usize {
    let black = |c: u8| c >= 126;
    match before {
        None => PLY_STREAMS - 1,
        Some((c, step)) => step.clamp(1, 3) as usize - 1 + 3 * usize::from(black(c) == black(code)),
    }
}

fn u16s(b: &[u8]) -> Vec<u16> {
    b.chunks_exact(2)
        .map(|c| u16::from_le_bytes([c[0], c[1]]))
        .collect()
}

fn u32s(b: &[u8]) -> Vec<u32> {
    b.chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// Reads and checks a section's directory (`len` bytes of section, for an
/// archive of `games` games): the number of games, of the tree's nodes,
/// and where each column lies.
fn read_directory(
    fetch: &mut Fetch<'_>,
    len: u64,
    games: u64,
    checked: bool,
) -> Result<(usize, usize, Directory), Unreadable> {
    let head = fetch(
        0,
        usize::try_from(len)
            .unwrap_or(usize::MAX)
            .min(DIRECTORY_MAX),
    )?;
    let mut data = head
        .strip_prefix(MAGIC.as_slice())
        .ok_or("bad search section marker")?;
    let (&version, rest) = data.split_first().ok_or("truncated")?;
    if version != VERSION {
        return Err(Unreadable::Version(version));
    }
    data = rest;
    let n = get_varint(&mut data)?;
    if n != games {
        return Err(format!("it indexes {n} games, the archive has {games}").into());
    }
    let n = n as usize;
    let nodes = get_varint(&mut data)? as usize;
    if nodes == 0 || nodes > 1 << 31 {
        return Err("bad tree size".into());
    }
    let mut columns = Vec::with_capacity(COLUMNS);
    for _ in 0..COLUMNS {
        // A column of at most 1 GiB (32-bit targets too).
        let raw = usize::try_from(get_varint(&mut data)?)
            .ok()
            .filter(|&r| r <= 1 << 30)
            .ok_or("a column too large")?;
        let stored = usize::try_from(get_varint(&mut data)?)
            .ok()
            .filter(|&s| s as u64 <= len)
            .ok_or("truncated")?;
        columns.push(ColumnAt { raw, at: 0, stored });
    }
    let mut crcs = [0; Group::ALL.len()];
    for crc in &mut crcs {
        *crc = crate::le::u32_at(data.get(..4).ok_or("truncated")?, 0);
        data = &data[4..];
    }
    let directory = head.len() - data.len();
    let crc = crate::le::u32_at(data.get(..4).ok_or("truncated")?, 0);
    if checked && crc32fast::hash(&head[..directory]) != crc {
        return Err("checksum mismatch".into());
    }
    let mut at = directory as u64 + 4;
    for c in &mut columns {
        c.at = at;
        at += c.stored as u64;
    }
    if at != len {
        return Err("the columns do not fill the section".into());
    }
    Ok((n, nodes, Directory { columns, crcs }))
}

/// Columns by number, unpacked (empty where not).
type Unpacked<T> = Vec<Vec<T>>;

/// The head group's columns that every query needs but the tree's child
/// counts (unpacked beside them, [`Index::read`]), unpacked from its
/// `frames`, at once where rayon gives threads (each alone: the same bytes
/// either way): bytes by column, and those of 16-bit numbers straight into
/// their vectors (the tree's moves after the root's).
fn unpack_head(
    frames: &[u8],
    columns: &[ColumnAt],
    n: usize,
    nodes: usize,
) -> Result<(Unpacked<u8>, Unpacked<u16>), String> {
    let bytes = frames;
    let columns_at = &columns;
    let frame = move |col: usize| {
        let c = &columns_at[col];
        let from = (c.at - columns_at[0].at) as usize;
        (&bytes[from..from + c.stored], c.raw)
    };
    // The columns every query needs, unpacked at once where rayon
    // gives threads (each alone: the same bytes either way); those of
    // 16-bit numbers straight into their vectors (the tree's moves
    // after the root's). The games' numbers are unpacked when a query
    // looks at them ([`Numbers`]).
    let wanted = [NODE_CHANGES, FLAGS, EXITS];
    let words = [(NODE_MOVES, 1, nodes - 1), (EXIT_MOVES, 0, n)];
    let one = |&col: &usize| {
        let (z, raw) = frame(col);
        unpack(z, raw, CHUNK).map(|c| (col, c))
    };
    let word = |&(col, lead, count): &(usize, usize, usize)| {
        let (z, raw) = frame(col);
        unpack_words(z, raw, lead, count).map(|c| (col, c))
    };
    #[cfg(feature = "parallel")]
    let (unpacked, unpacked_words) = {
        use rayon::prelude::*;
        rayon::join(
            || wanted.par_iter().map(one).collect::<Result<Vec<_>, _>>(),
            || words.par_iter().map(word).collect::<Result<Vec<_>, _>>(),
        )
    };
    #[cfg(not(feature = "parallel"))]
    let (unpacked, unpacked_words) = (
        wanted.iter().map(one).collect::<Result<Vec<_>, _>>(),
        words.iter().map(word).collect::<Result<Vec<_>, _>>(),
    );
    let mut got: Vec<Vec<u8>> = vec![Vec::new(); COLUMNS];
    for (col, c) in unpacked? {
        got[col] = c;
    }
    let mut got_words: Vec<Vec<u16>> = vec![Vec::new(); COLUMNS];
    for (col, c) in unpacked_words? {
        got_words[col] = c;
    }
    Ok((got, got_words))
}

impl Index {
    /// Reads a section of `len` bytes for an archive of `games` games by
    /// `fetch`: its directory (checked against its CRC) and the columns
    /// every query needs (each checked against its own); the other
    /// groups are read by [`Index::load`]. A damaged section is an
    /// error, never a wrong answer.
    pub(crate) fn read(fetch: &mut Fetch<'_>, len: u64, games: u64) -> Result<Index, Unreadable> {
        Index::read_checked(fetch, len, games, true)
    }

    /// [`Index::read`], checking the CRCs where `checked` (fuzzing reads
    /// what a CRC would refuse).
    pub(crate) fn read_checked(
        fetch: &mut Fetch<'_>,
        len: u64,
        games: u64,
        checked: bool,
    ) -> Result<Index, Unreadable> {
        let (n, nodes, directory) = read_directory(fetch, len, games, checked)?;
        let frames = read_group(fetch, &directory, Group::Head, checked)?;
        // The tree's shape (ends, depths and parents from the child
        // counts: one pass in order, 7 ms on the masters file) made on one
        // thread while the other columns unpack and the games' nodes are
        // checked on the other (and on both once the shape is made).
        let tree = || -> Result<_, String> {
            let c = &directory.columns[NODE_CHILDREN];
            let from = (c.at - directory.columns[0].at) as usize;
            let children = unpack(&frames[from..from + c.stored], c.raw, CHUNK)?;
            tree_shape(&children, nodes)
        };
        let games = || -> Result<_, String> {
            let (mut got, mut got_words) = unpack_head(&frames, &directory.columns, n, nodes)?;
            let mut column = |col: usize, size: usize, count: usize| {
                let c = std::mem::take(&mut got[col]);
                (c.len() == size * count)
                    .then_some(c)
                    .ok_or_else(|| format!("column {col} has the wrong length"))
            };
            let node_changes = column(NODE_CHANGES, 1, nodes - 1)?;
            let flags = column(FLAGS, 1, n)?;
            let mut node_move = std::mem::take(&mut got_words[NODE_MOVES]);
            node_move[0] = NO_MOVE;
            let exit_moves = std::mem::take(&mut got_words[EXIT_MOVES]);
            let numbers = NumberColumns::read(&frames, &directory.columns, n)?;
            let node_change = || {
                if node_changes
                    .iter()
                    .any(|&c| c != 0 && (!state::valid(c) || state::is_castling(c)))
                {
                    return Err("a bad change".to_owned());
                }
                // The root's change (none) first.
                let mut node_change = Vec::with_capacity(nodes);
                node_change.push(0);
                node_change.extend_from_slice(&node_changes);
                Ok(node_change)
            };
            let exits = std::mem::take(&mut got[EXITS]);
            let (node_change, exits) =
                threads::join(node_change, || game_nodes(&exits, &flags, nodes));
            let (node_change, exits) = (node_change?, exits?);
            Ok((node_move, node_change, flags, exits, exit_moves, numbers))
        };
        let (tree, games) = threads::join(tree, games);
        let (node_end, node_depth, node_parent) = tree?;
        let (node_move, node_change, flags, exits, exit_moves, numbers) = games?;
        Ok(Index {
            games: n,
            node_move,
            node_end,
            node_depth,
            node_parent,
            node_change,
            flags,
            exit_moves,
            exits,
            numbers,
            directory,
            lazy: Default::default(),
            checked,
            names: OnceLock::new(),
            changes: OnceLock::new(),
            later: OnceLock::new(),
            material_plies: OnceLock::new(),
            pawn_files: OnceLock::new(),
            node_third: OnceLock::new(),
            reentries: OnceLock::new(),
            squares: Default::default(),
        })
    }

    /// Reads `group`'s columns by `fetch` where they are not read yet
    /// (each checked against its CRC); a group that did not read stays an
    /// error.
    pub(crate) fn load(&self, group: Group, fetch: &mut Fetch<'_>) -> Result<(), String> {
        let Some(slot) = group.slot() else {
            return Ok(());
        };
        self.lazy[slot]
            .get_or_init(|| read_group(fetch, &self.directory, group, self.checked))
            .as_ref()
            .map(|_| ())
            .map_err(Clone::clone)
    }

    /// Column `col` of a group read by [`Index::load`], unpacked.
    fn lazy_column(&self, col: usize) -> Result<Vec<u8>, String> {
        let group = Group::of(col);
        let frames = group
            .slot()
            .and_then(|slot| self.lazy[slot].get())
            .ok_or("a column of the section that was not read")?
            .as_ref()
            .map_err(Clone::clone)?;
        let columns = &self.directory.columns;
        let (first, c) = (&columns[group.columns().start], &columns[col]);
        let from = (c.at - first.at) as usize;
        unpack(&frames[from..from + c.stored], c.raw, CHUNK)
    }

    /// Unpacks the stretches back on the tree (read by [`Index::load`]),
    /// for [`Index::reentry_hits`] to come.
    pub(crate) fn ready_reentries(&self) -> Result<(), String> {
        first_use(&self.reentries, || self.read_reentries()).map(|_| ())
    }

    /// The games that come back to the tree at one of the `matched` nodes
    /// after they leave it: for each game with no ply in `hit` yet, the
    /// first ply where it does (into `hit`) and, with `next_moves`, the
    /// move it plays there (into `next`). One pass through the columns;
    /// a stretch is looked at closely only where its first node is on
    /// the way to a matched node.
    pub(crate) fn reentry_hits(
        &self,
        matched: &[usize],
        hit: &mut [u32],
        next: &mut [u16],
        next_moves: bool,
    ) -> Result<(), String> {
        let r = first_use(&self.reentries, || self.read_reentries())?;
        let tree = self.node_move.len();
        // The matched nodes and the nodes above them.
        let mut above = vec![0u64; tree.div_ceil(64)];
        for &x in matched {
            let mut n = x as u32;
            while n != NONE && (n as usize) < tree {
                above[n as usize / 64] |= 1 << (n % 64);
                n = self.node_parent[n as usize];
            }
        }
        let games = self.exits.len();
        if hit.len() != games || next.len() != games {
            return Err("the re-entries do not add up".into());
        }
        let look = Look {
            r,
            above: &above,
            matched,
            next_moves,
        };
        let all = Cursor {
            game: 0,
            counts: 0,
            stretch: 0,
            plies: 0,
            ends: 0,
        };
        let end = Cursor {
            game: games,
            counts: r.counts.len(),
            stretch: r.nodes.len(),
            plies: r.plies.len(),
            ends: r.ends.len(),
        };
        // Two halves of the games at once where the pool has threads
        // (masters-pgnmentor: 270,000 stretches, 7-10 ms alone), the
        // second from where the first's stretches end in each column.
        if games < 4096 || threads::parallel_threads() < 2 {
            return self.reentries_between(&look, all, end, hit, next);
        }
        let mut counts = r.counts.as_slice();
        let mut stretches = 0usize;
        for _ in 0..games / 2 {
            stretches = stretches.saturating_add(get_varint(&mut counts)? as usize);
        }
        let after =
            |data: &[u8]| after_varints(data, stretches).ok_or("the re-entries do not add up");
        let half = Cursor {
            game: games / 2,
            counts: r.counts.len() - counts.len(),
            stretch: stretches,
            plies: after(&r.plies)?,
            ends: after(&r.ends)?,
        };
        let (hit_a, hit_b) = hit.split_at_mut(half.game);
        let (next_a, next_b) = next.split_at_mut(half.game);
        let (a, b) = threads::join(
            || self.reentries_between(&look, all, half, hit_a, next_a),
            || self.reentries_between(&look, half, end, hit_b, next_b),
        );
        a.and(b)
    }

    /// [`Index::reentry_hits`] of the games from `from` to `to` (where
    /// each column's stretches of those games start and end), `hit` and
    /// `next` being theirs alone.
    fn reentries_between(
        &self,
        look: &Look<'_>,
        start: Cursor,
        stop: Cursor,
        hit: &mut [u32],
        next: &mut [u16],
    ) -> Result<(), String> {
        let (r, above, matched) = (look.r, look.above, look.matched);
        let tree = self.node_move.len();
        let (mut p, mut e, mut i) = (start.plies, start.ends, start.stretch);
        let mut counts = &r.counts[start.counts..stop.counts];
        for g in start.game..stop.game {
            let exit = self.exits[g];
            let k = get_varint(&mut counts)? as usize;
            let from = from_another_start(self.flags[g]);
            if k == 0 {
                continue;
            }
            if exit == NONE && !from {
                return Err("re-entries of a game without a node".into());
            }
            // The plies from the node's depth; a game from another start's
            // from one before its start (its start may be on the tree).
            // The depth is looked up only for a game found: a read from
            // anywhere in the nodes' depths for every game with a stretch
            // was half of this pass (masters-pgnmentor).
            let shift = u64::from(from);
            let depth = || {
                if from {
                    0
                } else {
                    u64::from(self.node_depth[exit as usize])
                }
            };
            let mut steps = 0u64;
            let h = g - start.game;
            for _ in 0..k {
                let node = *r.nodes[..stop.stretch].get(i).ok_or("too few re-entries")? as usize;
                let step =
                    crate::le::read_leb(&r.plies[..stop.plies], &mut p).ok_or("truncated")?;
                let down = crate::le::read_leb(&r.ends[..stop.ends], &mut e).ok_or("truncated")?;
                i += 1;
                if step == 0 || node >= tree {
                    return Err("a bad re-entry".into());
                }
                steps = steps.saturating_add(step);
                if hit[h] != u32::MAX || above[node / 64] & (1 << (node % 64)) == 0 {
                    continue;
                }
                let end = (node as u64).saturating_add(down);
                if end >= u64::from(self.node_end[node]) {
                    return Err("a bad re-entry".into());
                }
                let end = end as usize;
                // The nodes from `node` down to `end`, in the order the
                // game comes to them: the shallowest at it first.
                let on_path = matched
                    .iter()
                    .filter(|&&x| node <= x && x <= end && end < self.node_end[x] as usize)
                    .min_by_key(|&&x| self.node_depth[x]);
                let Some(&x) = on_path else { continue };
                let ply = (depth().saturating_add(steps) - shift).saturating_add(u64::from(
                    self.node_depth[x].saturating_sub(self.node_depth[node]),
                ));
                hit[h] = u32::try_from(ply).map_err(|_| "a bad re-entry")?;
                if look.next_moves {
                    next[h] = if x == end {
                        r.next[i - 1]
                    } else {
                        // The child of `x` on the way down to `end`.
                        let mut c = x + 1;
                        while self.node_end[c] as usize <= end {
                            c = self.node_end[c] as usize;
                        }
                        self.node_move[c]
                    };
                }
            }
        }
        if i != stop.stretch || !counts.is_empty() || p != stop.plies || e != stop.ends {
            return Err("the re-entries do not add up".into());
        }
        Ok(())
    }

    fn read_reentries(&self) -> Result<Reentries, String> {
        // The five columns unpacked at once where the pool has threads.
        let col = |c: usize| self.lazy_column(c);
        let ((nodes, next), (counts, (plies, ends))) = threads::join(
            || (col(REENTRY_NODES), col(REENTRY_NEXT)),
            || {
                threads::join(
                    || col(REENTRY_COUNTS),
                    || threads::join(|| col(REENTRY_PLIES), || col(REENTRY_ENDS)),
                )
            },
        );
        let (nodes, next) = (nodes?, next?);
        if nodes.len() % 4 != 0 || next.len() * 2 != nodes.len() {
            return Err("the re-entries do not add up".into());
        }
        Ok(Reentries {
            counts: counts?,
            plies: plies?,
            nodes: unplanes(&nodes),
            ends: ends?,
            next: u16s(&next),
        })
    }

    /// The state at node `c`, a child of the node whose state is `parent`:
    /// its move's change applied and the castling rights its squares end.
    #[inline]
    pub(crate) fn child_state(&self, (mut s, mut ended): NodeState, c: usize) -> NodeState {
        if self.node_change[c] != 0 {
            s.apply(self.node_change[c]);
        }
        if let Some((from, to)) = key_squares(self.node_move[c]) {
            s.end_castling(&mut ended, from, to);
        }
        (s, ended)
    }

    /// The names, read on first use.
    pub(crate) fn names(&self) -> Result<&Names, String> {
        first_use(&self.names, || self.read_names())
    }

    fn read_names(&self) -> Result<Names, String> {
        // The names and the five columns of ids unpacked at once where
        // rayon gives threads.
        let names = || -> Result<(Vec<u8>, Vec<u32>), String> {
            let mut text = self.lazy_column(NAMES)?;
            // Each ends with a NUL byte (the last one is put back where
            // the column lacks it, as the names were split before).
            if text.last().is_some_and(|&b| b != 0) {
                text.push(0);
            }
            let mut starts = Vec::with_capacity(text.len() / 8 + 2);
            starts.push(0);
            starts.extend(
                text.iter()
                    .enumerate()
                    .filter(|&(_, &b)| b == 0)
                    .map(|(i, _)| i as u32 + 1),
            );
            Ok((text, starts))
        };
        // Each column of ids, with its largest.
        let ids = |col: usize| -> Result<(Vec<u32>, u32), String> {
            let c = self.lazy_column(col)?;
            if c.len() != 4 * self.games {
                return Err(format!("column {col} has the wrong length"));
            }
            let ids = u32s(&c);
            let most = ids.iter().fold(0, |m, &i| m.max(i));
            Ok((ids, most))
        };
        let columns = [WHITE, WHITE + 1, WHITE + 2, ECO, OPENING];
        // The games in their nodes' order, which ECO's and the opening's
        // columns follow, sorted while the columns are unpacked.
        let sorted = || by_node(&self.exits, self.node_move.len());
        #[cfg(feature = "parallel")]
        let ((names, by_exit), ids) = {
            use rayon::prelude::*;
            rayon::join(
                || rayon::join(names, sorted),
                || columns.par_iter().map(|&c| ids(c)).collect::<Vec<_>>(),
            )
        };
        #[cfg(not(feature = "parallel"))]
        let ((names, by_exit), ids) = ((names(), sorted()), columns.map(ids).to_vec());
        let (text, starts) = names?;
        let count = starts.len() - 1;
        let labels = table_labels();
        let mut got = Vec::with_capacity(5);
        for (c, ids) in ids.into_iter().enumerate() {
            let (ids, most) = ids?;
            // The opening's numbers are the table's labels, then names.
            let past = count as u64 + if c == 4 { u64::from(labels) } else { 0 };
            if u64::from(most) >= past {
                return Err("a name id is out of range".into());
            }
            got.push(ids);
        }
        // ECO's and the opening's ids are in the order of the games'
        // nodes: put back in the games' order, each on a thread.
        let in_games_order = |stored: Vec<u32>| {
            let mut ids = vec![0u32; self.games];
            for (g, id) in node_order(&by_exit, &self.exits).zip(stored) {
                ids[g as usize] = id;
            }
            ids
        };
        let (eco, opening) = (std::mem::take(&mut got[3]), std::mem::take(&mut got[4]));
        (got[3], got[4]) = threads::join(|| in_games_order(eco), || in_games_order(opening));
        let ids: [Vec<u32>; 5] = got.try_into().map_err(|_| "five columns of names")?;
        Ok(Names {
            ids,
            text,
            starts,
            shared: (0..count).map(|_| OnceLock::new()).collect(),
            labels: (0..labels).map(|_| OnceLock::new()).collect(),
        })
    }

    /// The changes, read on first use.
    fn changes(&self) -> Result<&Changes, String> {
        first_use(&self.changes, || self.read_changes())
    }

    fn read_changes(&self) -> Result<Changes, String> {
        let from: Vec<u32> = (0..self.games as u32)
            .filter(|&g| from_another_start(self.flags[g as usize]))
            .collect();
        let starts = self.lazy_column(START_STATES)?;
        if starts.len() != 8 * from.len() {
            return Err(format!("column {START_STATES} has the wrong length"));
        }
        let starts = unplanes_u64(&starts)
            .into_iter()
            .map(|bits| State::from_bits(bits).ok_or("a bad start state"))
            .collect::<Result<Vec<_>, _>>()?;
        let early = Run::read(self.lazy_column(CHANGES)?, self.games)?;
        for (g, (&exit, &flags)) in self.exits.iter().zip(&self.flags).enumerate() {
            if exit == NONE && !from_another_start(flags) && !early.of(g).is_empty() {
                return Err("changes of a game without a node".into());
            }
        }
        Ok(Changes {
            early,
            from,
            starts,
        })
    }

    /// The later changes, read on first use.
    fn later(&self) -> Result<&Run, String> {
        first_use(&self.later, || {
            Run::read(self.lazy_column(LATER_CHANGES)?, self.games)
        })
    }

    /// Game `g`'s changes after its node (from its start, for a game from
    /// another start): its early ones, then its later ones where they
    /// were read (by this query or one before it); and whether more may
    /// follow them: its later ones not read, where its early ones end with
    /// the piece taken that ends them.
    #[inline]
    fn codes(&self, g: usize) -> Result<(Codes<'_>, bool), String> {
        let early = self.changes()?.early.of(g);
        let (later, open): (&[u8], bool) = match self.later.get() {
            Some(later) => (later.as_ref().map_err(Clone::clone)?.of(g), false),
            None => (
                &[],
                early.last().is_some_and(|&c| state::takes(c))
                    && early.iter().filter(|&&c| state::takes(c)).count() > EARLY_TAKES,
            ),
        };
        Ok((early.iter().chain(later).copied(), open))
    }

    /// The plies of the changes of material, read on first use.
    fn material_plies(&self) -> Result<&MaterialPlies, String> {
        first_use(&self.material_plies, || self.read_material_plies())
    }

    fn read_material_plies(&self) -> Result<MaterialPlies, String> {
        self.later()?;
        let material = self.lazy_column(MATERIAL_PLIES)?;
        // The streams' lengths, then the streams.
        let mut rest = material.as_slice();
        let mut lengths = [0usize; PLY_STREAMS];
        for n in &mut lengths {
            *n = usize::try_from(get_varint(&mut rest)?).map_err(|_| "a stream out of range")?;
        }
        let mut streams: [&[u8]; PLY_STREAMS] = [&[]; PLY_STREAMS];
        for (stream, &n) in streams.iter_mut().zip(&lengths) {
            if n > rest.len() {
                return Err("the plies' streams do not add up".into());
            }
            (*stream, rest) = rest.split_at(n);
        }
        if !rest.is_empty() {
            return Err("the plies' streams do not add up".into());
        }
        let mut at_of = Vec::with_capacity(self.games + 1);
        let mut plies = Vec::with_capacity(material.len());
        at_of.push(0);
        for (g, &exit) in self.exits.iter().enumerate() {
            let mut ply = if exit == NONE {
                0
            } else {
                u64::from(self.node_depth[exit as usize])
            };
            let mut before = None;
            for c in self.codes(g)?.0 {
                if CHANGE_KIND[usize::from(c)] == 2 {
                    let stream = &mut streams[ply_stream(before, c)];
                    let step = get_varint(stream)?;
                    before = Some((c, step));
                    ply = ply.saturating_add(step);
                    plies.push(u16::try_from(ply).map_err(|_| "a ply out of range")?);
                }
            }
            at_of.push(plies.len() as u32);
        }
        if streams.iter().any(|s| !s.is_empty()) {
            return Err("the changes do not add up".into());
        }
        Ok(MaterialPlies { at: at_of, plies })
    }

    /// The pawns' files, read on first use.
    fn pawn_files(&self) -> Result<&PawnFiles, String> {
        first_use(&self.pawn_files, || self.read_pawn_files())
    }

    fn read_pawn_files(&self) -> Result<PawnFiles, String> {
        let counts = self.lazy_column(PAWN_FILE_COUNTS)?;
        let bytes = self.lazy_column(PAWN_FILES)?;
        if bytes.len() % 2 != 0 {
            return Err("the pawn files do not add up".into());
        }
        let words = u16s(&bytes);
        let mut counts = counts.as_slice();
        let mut at = Vec::with_capacity(self.games + 1);
        let (mut n, mut firsts) = (0usize, 0usize);
        at.push(0);
        for _ in 0..self.games {
            let count = get_varint(&mut counts)? as usize;
            firsts += usize::from(count > 0);
            n = n
                .checked_add(count)
                .filter(|&n| n <= words.len())
                .ok_or("the pawn files do not add up")?;
            at.push(n as u32);
        }
        if n != words.len() || !counts.is_empty() {
            return Err("the pawn files do not add up".into());
        }
        // Each game's first from the games' first, each other from the
        // one before.
        let (first, mut rest) = (words[..firsts].iter(), words[firsts..].iter());
        let mut files = Vec::with_capacity(n);
        for (w, &f) in at.windows(2).filter(|w| w[1] > w[0]).zip(first) {
            files.push(f);
            for _ in w[0] + 1..w[1] {
                let step = rest.next().ok_or("the pawn files do not add up")?;
                files.push(step ^ files[files.len() - 1]);
            }
        }
        Ok(PawnFiles { at, files })
    }

    /// The files where each node's line may have put a pawn on its third
    /// rank (its changes say: [`state::third_rank`]).
    fn node_third(&self) -> &[u16] {
        self.node_third.get_or_init(|| {
            let mut third = vec![0u16; self.node_move.len()];
            for i in 1..self.node_move.len() {
                let parent = self.node_parent[i] as usize;
                third[i] = third[parent] | state::third_rank(self.node_change[i]);
            }
            third
        })
    }

    /// Whether the section keeps each game's squares
    /// ([`IndexBuilder::new`]).
    pub(crate) fn has_squares(&self) -> bool {
        self.directory.columns[SQUARES].raw > 0
    }

    /// The squares that piece `i` of [`PIECES`] stood on in each game
    /// after its node, a part at a time ([`SQUARES_CUTS`]): game `g`'s in
    /// part `k` at `k × games + g` (the [`Group::Squares`] read), unpacked
    /// on first use.
    pub(crate) fn squares(&self, i: usize) -> Result<&[u64], String> {
        first_use(&self.squares[i], || {
            let planes = self.lazy_column(SQUARES + i)?;
            if planes.len() != 8 * SQUARES_PARTS * self.games {
                return Err(format!("column {} has the wrong length", SQUARES + i));
            }
            Ok(planes
                .chunks(8 * self.games.max(1))
                .flat_map(unplanes_u64)
                .collect())
        })
        .map(Vec::as_slice)
    }

    /// Game `g`'s tags that are numbers.
    #[inline]
    pub(crate) fn numbers(&self, g: usize) -> Numbers {
        self.numbers.game(g)
    }

    /// Unpacks every game's numbers at once (on the rayon pool where the
    /// `parallel` feature builds one): for a query that looks at most
    /// games' ([`Index::numbers`] unpacks a frame at a time otherwise).
    pub(crate) fn ready_numbers(&self) -> Result<(), String> {
        self.numbers.whole().map(|_| ())
    }

    /// Whether a frame of the numbers that [`Index::numbers`] unpacked did
    /// not read (it then gave zeros): a damaged section.
    pub(crate) fn numbers_damage(&self) -> Result<(), String> {
        match self.numbers.damage.get() {
            Some(why) => Err(why.clone()),
            None => Ok(()),
        }
    }

    /// The position at node `n`, made from `pos` at node `top` above it
    /// by the tree's moves, each made from its key; `None` where a move is
    /// not legal (a damaged tree). `path` is scratch.
    pub(crate) fn position_at(
        &self,
        n: usize,
        top: usize,
        pos: &Chess,
        path: &mut Vec<u16>,
    ) -> Option<Chess> {
        path.clear();
        let mut x = n;
        while x != top {
            path.push(self.node_move[x]);
            x = *self.node_parent.get(x)? as usize;
        }
        let mut pos = pos.clone();
        for &k in path.iter().rev() {
            let m = move_of(&pos, k)?;
            pos.play_unchecked(m);
        }
        Some(pos)
    }

    /// The position of game `g` after the move it plays where it leaves
    /// the tree (`None` where it plays none there), that ply, and whether
    /// that move changes the state.
    pub(crate) fn after_exit(&self, g: usize) -> Option<(Chess, u32, bool)> {
        let exit = self.exits[g];
        if exit == NONE || self.exit_moves[g] == NO_MOVE {
            return None;
        }
        let mut pos = self.position_at(exit as usize, 0, &Chess::default(), &mut Vec::new())?;
        let m = move_of(&pos, self.exit_moves[g])?;
        let changes = state::change(&pos, m) != 0;
        pos.play_unchecked(m);
        Some((pos, u32::from(self.node_depth[exit as usize]) + 1, changes))
    }

    /// Reads what [`Index::states`] needs (and [`Index::states_with_plies`]
    /// where `plies`), so that threads may then share it: the games'
    /// later changes too where `later` (without them a game whose early
    /// changes end with a piece taken may have more: [`Index::states`]).
    pub(crate) fn read_states(
        &self,
        plies: bool,
        files: bool,
        third: bool,
        later: bool,
    ) -> Result<(), String> {
        // Where the nodes' lines may have put pawns on their third rank is
        // made while the changes unpack (the nodes' states are the tree
        // walk's).
        let nodes = || {
            if third {
                self.node_third();
            }
        };
        // The early and the later changes unpacked at once.
        let (early, later) = threads::join(
            || threads::join(nodes, || self.changes()).1.map(|_| ()),
            || {
                if later || plies {
                    self.later().map(|_| ())
                } else {
                    Ok(())
                }
            },
        );
        early?;
        later?;
        if plies {
            self.material_plies()?;
        }
        if files {
            self.pawn_files()?;
        }
        Ok(())
    }

    /// [`Index::states`], each with the files where game `g` may have put
    /// a pawn on its third rank so far (its node's line's and its own:
    /// [`state::third_rank`]).
    #[inline]
    pub(crate) fn states_with_third<'a>(
        &'a self,
        g: usize,
        walked: &'a [u64],
    ) -> Result<(impl Iterator<Item = (State, u16)> + 'a, bool), String> {
        // A game from another start may have pawns on their third rank
        // from its start: any file.
        let mut third = match self.exits[g] {
            NONE => u16::MAX,
            exit => self.node_third()[exit as usize],
        };
        let (states, open) = self.states_with_codes(g, walked)?;
        Ok((
            states.map(move |(s, code)| {
                third |= state::third_rank(code);
                (s, third)
            }),
            open,
        ))
    }

    /// [`Index::states`], each with its pawns' files where the section
    /// keeps them: those of the stretch since the last change of material,
    /// where its state keeps them ([`state::keeps_files`]); the first (the
    /// state where the game leaves the tree) has none.
    #[inline]
    pub(crate) fn states_with_files<'a>(
        &'a self,
        g: usize,
        walked: &'a [u64],
    ) -> Result<(impl Iterator<Item = (State, Option<u16>)> + 'a, bool), String> {
        let files = self.pawn_files()?;
        let kept = &files.files[files.at[g] as usize..files.at[g + 1] as usize];
        let mut kept = kept.iter();
        let mut now = None;
        let (states, open) = self.states_with_codes(g, walked)?;
        Ok((
            states.map(move |(s, code)| {
                if CHANGE_KIND[usize::from(code)] == 2 {
                    // A damaged section that keeps too few gives none:
                    // the game is then decoded.
                    now = if state::keeps_files(&s) {
                        kept.next().copied()
                    } else {
                        None
                    };
                }
                (s, now)
            }),
            open,
        ))
    }

    /// The states of game `g` from where it leaves the tree (for a game
    /// from another start, from its start), in order: the first, at its
    /// node, from `walked` (each node's [`State::bits`] that the query's
    /// walk of the tree reached); and whether more may follow them (its
    /// later changes not read, where its early ones end with a piece
    /// taken: [`EARLY_TAKES`]).
    #[inline]
    pub(crate) fn states<'a>(
        &'a self,
        g: usize,
        walked: &'a [u64],
    ) -> Result<(impl Iterator<Item = State> + 'a, bool), String> {
        let (states, open) = self.states_with_codes(g, walked)?;
        Ok((states.map(|(s, _)| s), open))
    }

    /// [`Index::states`], each with the change that made it (the first,
    /// where the game leaves the tree, 0).
    #[inline]
    fn states_with_codes<'a>(
        &'a self,
        g: usize,
        walked: &'a [u64],
    ) -> Result<(impl Iterator<Item = (State, u8)> + 'a, bool), String> {
        let changes = self.changes()?;
        let mut s = match self.exits[g] {
            NONE => changes.start(g)?,
            exit => walked
                .get(exit as usize)
                .and_then(|&bits| State::from_bits(bits))
                .ok_or("a node that the walk did not reach")?,
        };
        let (codes, open) = self.codes(g)?;
        Ok((
            std::iter::once((s, 0)).chain(codes.map(move |c| {
                s.apply(c);
                (s, c)
            })),
            open,
        ))
    }

    /// [`Index::states`], each with the first ply after the node with its
    /// material: the ply of the change of material that made it, or the
    /// ply after the node (for a game from another start, its start: 0).
    #[inline]
    pub(crate) fn states_with_plies<'a>(
        &'a self,
        g: usize,
        walked: &'a [u64],
    ) -> Result<(impl Iterator<Item = (State, u32)> + 'a, bool), String> {
        let material = self.material_plies()?;
        let mut since = match self.exits[g] {
            NONE => 0,
            exit => u32::from(self.node_depth[exit as usize]) + 1,
        };
        let mut m = material.at[g] as usize;
        let (states, open) = self.states_with_codes(g, walked)?;
        Ok((
            states.map(move |(s, code)| {
                if CHANGE_KIND[usize::from(code)] == 2 {
                    since = u32::from(material.plies[m]);
                    m += 1;
                }
                (s, since)
            }),
            open,
        ))
    }
}

/// Each node's subtree end, depth and parent.
type Shape = (Vec<u32>, Vec<u16>, Vec<u32>);

/// The tree's [`Shape`], from the children of each node in preorder.
fn tree_shape(children: &[u8], nodes: usize) -> Result<Shape, String> {
    let mut node_end = vec![0u32; nodes];
    // Written in order: pushed, not filled first.
    let mut node_depth = Vec::with_capacity(nodes);
    let mut node_parent = Vec::with_capacity(nodes);
    // (node, children left) from the root down: a node stays while it has
    // children to come, or its last child's subtree is not done.
    let mut stack: Vec<(u32, u32)> = Vec::with_capacity(256);
    let mut at = 0;
    for i in 0..nodes {
        // Counts under 128 (nearly all) are one byte.
        let kids = match children.get(at) {
            Some(&b) if b < 0x80 => {
                at += 1;
                u32::from(b)
            }
            _ => crate::le::read_leb(children, &mut at)
                .and_then(|k| u32::try_from(k).ok())
                .ok_or("the tree's children do not read")?,
        };
        match stack.last_mut() {
            Some(top) => {
                top.1 -= 1;
                node_parent.push(top.0);
            }
            None if i > 0 => return Err("the tree has more than one root".into()),
            None => node_parent.push(NONE),
        }
        node_depth.push(stack.len() as u16);
        let end = i as u32 + 1;
        if kids > 0 {
            if stack.len() >= usize::from(u16::MAX) {
                return Err("the tree is too deep".into());
            }
            stack.push((i as u32, kids));
            continue;
        }
        // A leaf ends every subtree whose last child it ends.
        node_end[i] = end;
        while let Some(&(n, 0)) = stack.last() {
            node_end[n as usize] = end;
            stack.pop();
        }
    }
    if !stack.is_empty() || at != children.len() {
        return Err("the tree's children do not add up".into());
    }
    Ok((node_end, node_depth, node_parent))
}

/// The games' nodes from their byte planes ([`EXITS`]), each checked
/// against the game's flags (a node for a game the tree indexes, none for
/// another, and no node past the tree's `nodes`) a run of [`NODES_RUN`]
/// games a worker: on one thread the check ended the masters section's
/// reading alone, while the other thread had made the tree's shape
/// (issue 68). A bad game gives the first one's number.
fn game_nodes(planes: &[u8], flags: &[u8], nodes: usize) -> Result<Vec<u32>, String> {
    let n = flags.len();
    if planes.len() != 4 * n {
        return Err(format!("column {EXITS} has the wrong length"));
    }
    let exits = unplanes(planes);
    let run = |(r, out): (usize, &[u32])| -> Result<(), String> {
        let from = r * NODES_RUN;
        let to = from + out.len();
        for (i, (&e, &f)) in out.iter().zip(&flags[from..to]).enumerate() {
            if !matches!(f, 0 | INDEXED | TEXT | UNSTATED)
                || (e == NONE) == (f == INDEXED)
                || (e != NONE && e as usize >= nodes)
            {
                return Err(format!("game {}'s node is wrong", from + i + 1));
            }
        }
        Ok(())
    };
    #[cfg(feature = "parallel")]
    let checked: Vec<Result<(), String>> = {
        use rayon::prelude::*;
        exits.par_chunks(NODES_RUN).enumerate().map(run).collect()
    };
    #[cfg(not(feature = "parallel"))]
    let checked: Vec<Result<(), String>> = exits.chunks(NODES_RUN).enumerate().map(run).collect();
    checked.into_iter().collect::<Result<(), String>>()?;
    Ok(exits)
}

/// The games a worker of [`game_nodes`] checks.
const NODES_RUN: usize = 1 << 15;

/// Every game, those with a node sorted by it and those without after
/// them, each in the games' order where the key is the same: the order of
/// the ECO column ([`ECO`]).
/// `by_exit` is [`by_node`]'s.
fn node_order<'a>(by_exit: &'a [u32], exits: &'a [u32]) -> impl Iterator<Item = u32> + 'a {
    let without = exits.iter().enumerate().filter(|&(_, &e)| e == NONE);
    by_exit
        .iter()
        .copied()
        .chain(without.map(|(g, _)| g as u32))
}

/// The games with a node (checked by [`game_nodes`]), sorted by it.
fn by_node(exits: &[u32], nodes: usize) -> Vec<u32> {
    // The games by node: counted, then placed (a counting sort).
    let mut first = vec![0u32; nodes + 1];
    for &e in exits {
        if e != NONE {
            first[e as usize + 1] += 1;
        }
    }
    for i in 0..nodes {
        first[i + 1] += first[i];
    }
    // Each game at its node's next place.
    let mut by_exit = vec![0u32; first[nodes] as usize];
    for (g, &e) in exits.iter().enumerate() {
        if e != NONE {
            let at = &mut first[e as usize];
            by_exit[*at as usize] = g as u32;
            *at += 1;
        }
    }
    by_exit
}

/// The frames of `group`'s columns, read by `fetch` and checked against
/// the group's CRC where `checked`.
fn read_group(
    fetch: &mut Fetch<'_>,
    directory: &Directory,
    group: Group,
    checked: bool,
) -> Result<Vec<u8>, String> {
    let cols = &directory.columns[group.columns()];
    let (first, last) = (&cols[0], &cols[cols.len() - 1]);
    let len = usize::try_from(last.at + last.stored as u64 - first.at).map_err(|_| "truncated")?;
    let bytes = fetch(first.at, len)?;
    if bytes.len() != len {
        return Err("truncated".into());
    }
    if checked && crc32fast::hash(&bytes) != directory.crcs[group.number()] {
        let columns = group.columns();
        return Err(format!(
            "columns {}-{} checksum mismatch",
            columns.start,
            columns.end - 1
        ));
    }
    Ok(bytes)
}

/// A frame of `count` 16-bit numbers (`raw` bytes unpacked), unpacked
/// after `lead` zeros.
fn unpack_words(frame: &[u8], raw: usize, lead: usize, count: usize) -> Result<Vec<u16>, String> {
    if raw != 2 * count {
        return Err("a column has the wrong length".into());
    }
    let mut words = vec![0u16; lead + count];
    let out: &mut [u8] = bytemuck::cast_slice_mut(&mut words[lead..]);
    let n = if frame.len() == raw {
        // Stored as it is.
        out.copy_from_slice(frame);
        raw
    } else {
        unzstd(frame, out)?
    };
    if n != raw {
        return Err("a column has the wrong length".into());
    }
    for w in &mut words[lead..] {
        *w = u16::from_le(*w);
    }
    Ok(words)
}

/// The columns of varints and of files that zstd packs smaller and about
/// four times faster with a short search (`pack`'s `lean`): 36 KB fewer
/// for the plies of material on masters-pgnmentor, 5 KB for the files;
/// the other columns are larger so.
const LEAN: [usize; 2] = [MATERIAL_PLIES, PAWN_FILES];

/// The most bytes of a column that one zstd frame holds: a longer column
/// is a run of frames, unpacked at once where rayon gives threads.
const CHUNK: usize = 1 << 20;

/// The most bytes of a frame of the games' numbers (columns 6-10): a
/// query that finds a few games unpacks their frames alone. On
/// masters-pgnmentor the explorer at a position of one game took 3-5 ms
/// less (of about 50) than with the whole columns unpacked, for 47 KB
/// more section (0.3%) (issue 68).
const NUMBER_CHUNK: usize = 1 << 14;

/// The games' numbers' columns, in order.
const NUMBER_COLUMNS: std::ops::RangeInclusive<usize> = RESULTS..=DATES;

/// The most bytes of a frame of column `col`.
fn chunk_of(col: usize) -> usize {
    if NUMBER_COLUMNS.contains(&col) {
        NUMBER_CHUNK
    } else {
        CHUNK
    }
}

/// A column's frames: zstd (level 19; where `lean`, with the search of
/// [`LEAN`]'s columns) of each [`CHUNK`] of it (at once
/// where rayon gives threads: the change codes' 8 chunks took 4.3 s one
/// after the other, longer than all the other columns), or its bytes as
/// they are where zstd does not make them smaller (a small archive's
/// columns: a frame costs 9 bytes or more).
fn pack(col: &[u8], lean: bool, chunk: usize) -> Vec<u8> {
    let one = |chunk: &[u8]| {
        let mut z = zstd::bulk::Compressor::new(19).ok()?;
        if lean {
            use zstd::zstd_safe::CParameter::{ChainLog, HashLog, SearchLog, TargetLength};
            for p in [SearchLog(2), ChainLog(16), HashLog(16), TargetLength(32)] {
                z.set_parameter(p).ok()?;
            }
        }
        z.compress(chunk).ok()
    };
    #[cfg(feature = "parallel")]
    let frames: Option<Vec<Vec<u8>>> = {
        use rayon::prelude::*;
        col.par_chunks(chunk).map(one).collect()
    };
    #[cfg(not(feature = "parallel"))]
    let frames: Option<Vec<Vec<u8>>> = col.chunks(chunk).map(one).collect();
    frames
        .map(|frames| frames.concat())
        .filter(|z| z.len() < col.len())
        .unwrap_or_else(|| col.to_vec())
}

/// A column's frames, unpacked and of the length `raw` it says (frames of
/// that length are the column as it is): each [`CHUNK`] of it but the
/// last a frame of its own, unpacked on the rayon pool where the
/// `parallel` feature builds one.
fn unpack(frames: &[u8], raw: usize, chunk: usize) -> Result<Vec<u8>, String> {
    if frames.len() == raw {
        return Ok(frames.to_vec());
    }
    let runs = frame_runs(frames, raw, chunk)?;
    let mut col = vec![0u8; raw];
    let one = |(frame, out): (&&[u8], &mut [u8])| -> Result<(), String> {
        let n = unzstd(frame, out)?;
        if n != out.len() {
            return Err("a column has the wrong length".into());
        }
        Ok(())
    };
    #[cfg(feature = "parallel")]
    {
        use rayon::prelude::*;
        runs.par_iter()
            .zip(col.par_chunks_mut(chunk))
            .try_for_each(one)?;
    }
    #[cfg(not(feature = "parallel"))]
    runs.iter().zip(col.chunks_mut(chunk)).try_for_each(one)?;
    Ok(col)
}

/// The frames of a column of `raw` bytes unpacked, each `chunk` of it
/// but the last a frame of its own: an error where there are not as
/// many.
fn frame_runs(frames: &[u8], raw: usize, chunk: usize) -> Result<Vec<&[u8]>, String> {
    let mut runs = Vec::with_capacity(raw.div_ceil(chunk));
    let mut at = 0;
    while at < frames.len() {
        let len = zstd::zstd_safe::find_frame_compressed_size(&frames[at..])
            .map_err(|_| "a column's frames do not read")?;
        runs.push(&frames[at..at + len]);
        at += len;
    }
    if runs.len() != raw.div_ceil(chunk).max(1) {
        return Err("a column has the wrong length".into());
    }
    Ok(runs)
}

/// Unpacks zstd `frames` into `out`: the bytes unpacked. Each thread
/// keeps its decompressor (making one costs about as much as unpacking
/// 16 KiB).
fn unzstd(frames: &[u8], out: &mut [u8]) -> Result<usize, String> {
    thread_local! {
        static DECOMPRESSOR: std::cell::RefCell<Option<zstd::bulk::Decompressor<'static>>> =
            const { std::cell::RefCell::new(None) };
    }
    DECOMPRESSOR.with(|d| {
        let mut d = d.borrow_mut();
        if d.is_none() {
            *d = Some(zstd::bulk::Decompressor::new().map_err(|e| e.to_string())?);
        }
        let d = d.as_mut().ok_or("no decompressor")?;
        d.decompress_to_buffer(frames, out)
            .map_err(|e| e.to_string())
    })
}

/// A frame of `raw` bytes unpacked, or why not.
fn unpack_frame(frame: &[u8], raw: usize) -> Result<Vec<u8>, String> {
    let mut out = vec![0u8; raw];
    let n = unzstd(frame, &mut out)?;
    if n != raw {
        return Err("a column has the wrong length".into());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each change of material's ply goes to the stream of its context:
    /// a game's first to the last stream; the others by the step before
    /// (1, 2, 3 or more) and whether the same side made the change before,
    /// every stream in use. Two plies of the same side's changes are an
    /// even number apart, of the two sides' an odd number: the streams by
    /// side keep steps of one parity each.
    #[test]
    fn regression_issue_68_the_plies_of_material_are_kept_by_their_context() {
        let (white_takes, black_takes) = (1u8, 126 + 1);
        assert!(state::changes_material(white_takes) && state::changes_material(black_takes));
        assert_eq!(ply_stream(None, black_takes), PLY_STREAMS - 1);
        let mut used = vec![ply_stream(None, white_takes)];
        for step in 1..=5u64 {
            for (before, code) in [(white_takes, black_takes), (white_takes, white_takes)] {
                let s = ply_stream(Some((before, step)), code);
                let same = before == code;
                assert_eq!(s, step.min(3) as usize - 1 + 3 * usize::from(same));
                used.push(s);
            }
        }
        // A damaged step of 0 picks a stream, never panics.
        assert!(ply_stream(Some((black_takes, 0)), white_takes) < PLY_STREAMS);
        used.sort_unstable();
        used.dedup();
        assert_eq!(used, (0..PLY_STREAMS).collect::<Vec<_>>());
    }

    /// The openings' column writes a name of lichess's table as a label
    /// that reads back as that name, below the table's labels (3,329
    /// openings: its `eco` and `name` pairs), and any other name after
    /// them.
    #[test]
    fn an_opening_of_the_table_is_its_label() {
        let table = OpeningTable::lichess();
        assert_eq!(table_labels(), 3329);
        for label in 0..table_labels() {
            let name = table.label(label).unwrap().name;
            let kept = table_label(name).unwrap();
            assert!(kept <= label);
            assert_eq!(table.label(kept).unwrap().name, name);
        }
        let mut builder = IndexBuilder::new(false);
        assert_eq!(
            builder.opening("Sicilian Defense"),
            table_label("Sicilian Defense").unwrap()
        );
        assert_eq!(builder.opening(""), table_labels());
        assert_eq!(builder.opening("My Own Line"), table_labels() + 1);
    }

    /// The builder counts what it holds by the sizes of a 64-bit machine.
    #[cfg(target_pointer_width = "64")]
    #[test]
    fn the_held_bytes_are_the_sizes_of_what_the_builder_holds() {
        use std::mem::size_of;
        assert_eq!(
            HELD_BYTES,
            [
                size_of::<Game>(),
                size_of::<Chess>(),
                size_of::<u16>(),
                size_of::<(u8, u16)>(),
                size_of::<(u16, u16)>(),
                2 * size_of::<String>() + 16,
            ]
        );
    }

    /// Issue 68: a game's early changes end with the one that takes its
    /// fourth piece after its node.
    #[test]
    fn regression_issue_68_early_changes_end_with_the_fourth_piece_taken() {
        // White's e-pawn two steps; takes a knight; promotes to a queen
        // taking nothing; castles no more; Black takes a knight; White
        // takes a bishop; Black's e-pawn two steps; White's a-pawn takes a
        // knight (the fourth); White takes a knight.
        let codes = [78, 2, 120, 252, 128, 3, 204, 8, 2];
        assert!(codes.iter().all(|&c| state::valid(c)));
        let taken: Vec<bool> = codes.iter().map(|&c| state::takes(c)).collect();
        assert_eq!(
            taken,
            [false, true, false, false, true, true, false, true, true]
        );
        assert_eq!(early_changes(codes), 8);
        assert_eq!(early_changes(codes[..7].iter().copied()), 7);
        assert_eq!(early_changes([]), 0);
    }

    /// Issue 68: the games' nodes, checked a run a worker, come back in
    /// order, and a bad one gives the first bad game whichever run a
    /// worker finished first.
    #[test]
    fn regression_issue_68_game_nodes_are_checked_by_runs_and_the_first_bad_is_named() {
        let n = 3 * NODES_RUN + 5;
        let nodes = 1000;
        let exits: Vec<u32> = (0..n as u32)
            .map(|g| if g % 7 == 0 { NONE } else { g % nodes as u32 })
            .collect();
        let flags: Vec<u8> = exits
            .iter()
            .enumerate()
            .map(|(g, &e)| match (e, g % 2) {
                (NONE, 0) => TEXT,
                (NONE, _) => UNSTATED,
                _ => INDEXED,
            })
            .collect();
        let planes = |exits: &[u32]| {
            planes(
                &exits
                    .iter()
                    .flat_map(|e| e.to_le_bytes())
                    .collect::<Vec<_>>(),
                4,
            )
        };
        for threads in [1, 2, 3] {
            let got =
                crate::threads::install(threads, || game_nodes(&planes(&exits), &flags, nodes));
            assert_eq!(got.as_ref(), Ok(&exits), "{threads} threads");
            let mut bad = exits.clone();
            bad[2 * NODES_RUN + 3] = nodes as u32;
            bad[NODES_RUN + 1] = NONE;
            let got = crate::threads::install(threads, || game_nodes(&planes(&bad), &flags, nodes));
            assert_eq!(got, Err(format!("game {}'s node is wrong", NODES_RUN + 2)));
        }
        assert!(game_nodes(&planes(&exits)[1..], &flags, nodes).is_err());
    }

    /// A group's number is its place among all of them.
    #[test]
    fn groups_are_numbered_in_their_order() {
        for (i, g) in Group::ALL.into_iter().enumerate() {
            assert_eq!(g.number(), i, "{g:?}");
        }
    }

    /// Bytes from a small alphabet, as the columns' (zstd packs them).
    fn column_bytes(len: usize, seed: u64) -> Vec<u8> {
        let mut rng = seed;
        (0..len)
            .map(|_| {
                rng ^= rng << 13;
                rng ^= rng >> 7;
                rng ^= rng << 17;
                (rng % 7) as u8
            })
            .collect()
    }

    /// A long column is a run of frames that unpacks to its bytes; a
    /// length that is not its own, or frames cut short, give an error.
    #[test]
    fn a_long_column_is_packed_a_frame_a_chunk() {
        for chunk in [CHUNK, NUMBER_CHUNK] {
            let col = column_bytes(2 * chunk + 12_345, 0x2545_f491_4f6c_dd1d);
            let frames = pack(&col, false, chunk);
            assert!(frames.len() < col.len());
            // Three frames, each unpacking to its chunk.
            let first = zstd::zstd_safe::find_frame_compressed_size(&frames).unwrap();
            assert!(first < frames.len());
            assert_eq!(frame_runs(&frames, col.len(), chunk).unwrap().len(), 3);
            assert_eq!(unpack(&frames, col.len(), chunk).unwrap(), col);
            for raw in [col.len() - 1, col.len() + 1, chunk, 4 * chunk] {
                assert!(unpack(&frames, raw, chunk).is_err(), "{raw}");
            }
            for cut in [1, first, frames.len() - 1] {
                assert!(unpack(&frames[..cut], col.len(), chunk).is_err(), "{cut}");
            }
            // A short column is one frame.
            let short = &col[..1000];
            assert_eq!(
                unpack(&pack(short, true, chunk), short.len(), chunk).unwrap(),
                short
            );
        }
    }

    /// The byte after `n` varints, where a run of games' stretches starts
    /// in a column of varints (the second half read at once with the first).
    #[test]
    fn the_byte_after_n_varints_ends_the_nth() {
        let mut data = Vec::new();
        let mut ends = vec![0];
        for v in [0u64, 1, 127, 128, 300, 1 << 40, 5] {
            let mut v = v;
            while v >= 0x80 {
                data.push(v as u8 | 0x80);
                v >>= 7;
            }
            data.push(v as u8);
            ends.push(data.len());
        }
        for (n, &end) in ends.iter().enumerate() {
            assert_eq!(after_varints(&data, n), Some(end), "{n}");
        }
        assert_eq!(after_varints(&data, ends.len()), None);
        assert_eq!(after_varints(&data[..data.len() - 1], 7), None);
    }

    /// The games' numbers, frames of [`NUMBER_CHUNK`]: the same read a
    /// frame at a time as all at once, and a frame that does not unpack
    /// is damage, never a number.
    #[test]
    fn numbers_read_by_frames_are_the_numbers() {
        // Enough games that each column is several frames; the speeds
        // column as it is (zstd does not make it smaller).
        let games = 3 * NUMBER_CHUNK + 1_000;
        let cols = [
            column_bytes(games, 1),
            (0..games).map(|g| (g % 251) as u8).collect::<Vec<u8>>(),
            column_bytes(2 * games, 3),
            column_bytes(2 * games, 4),
            column_bytes(4 * games, 5),
        ];
        let mut stored = Vec::new();
        let mut columns: Vec<ColumnAt> = (0..COLUMNS)
            .map(|_| ColumnAt {
                raw: 0,
                at: 0,
                stored: 0,
            })
            .collect();
        for (i, c) in cols.iter().enumerate() {
            let packed = if i == 1 {
                c.clone()
            } else {
                pack(c, false, NUMBER_CHUNK)
            };
            columns[RESULTS + i] = ColumnAt {
                raw: c.len(),
                at: stored.len() as u64,
                stored: packed.len(),
            };
            stored.extend_from_slice(&packed);
        }
        let lazy = NumberColumns::read(&stored, &columns, games).unwrap();
        let whole = NumberColumns::read(&stored, &columns, games).unwrap();
        whole.whole().unwrap();
        for g in (0..games).step_by(97).chain([games - 1]) {
            let (a, b) = (lazy.game(g), whole.game(g));
            assert_eq!(
                (a.result, a.speed, a.white_elo, a.black_elo, a.date),
                (b.result, b.speed, b.white_elo, b.black_elo, b.date),
                "{g}"
            );
            assert_eq!((a.result, a.speed), (cols[0][g], cols[1][g]));
            let date = [0, 1, 2, 3].map(|k| cols[4][k * games + g]);
            assert_eq!(a.date, u32::from_le_bytes(date));
        }
        assert!(lazy.damage.get().is_none());
        // A length that is not the games' is refused.
        assert!(NumberColumns::read(&stored, &columns, games + 1).is_err());
        // The dates' second frame replaced by a frame of other bytes (past a
        // CRC, as a fuzzer's are): the frame is damage, where it is read
        // a frame at a time and all at once.
        let (at, len) = lazy.frames[4][1];
        let mut bad = stored[..at].to_vec();
        bad.extend_from_slice(&zstd::bulk::compress(&[1; 100], 19).unwrap());
        bad.extend_from_slice(&stored[at + len..]);
        columns[DATES].stored = bad.len() - columns[DATES].at as usize;
        let damaged = NumberColumns::read(&bad, &columns, games).unwrap();
        // The dates are byte planes: the first plane's bytes of the first
        // games are in its first frame, the others in later frames.
        for g in 0..NUMBER_CHUNK {
            damaged.game(g);
        }
        assert!(damaged.damage.get().is_none(), "its other frames read");
        let g = NUMBER_CHUNK + 5;
        assert_eq!(damaged.game(g).date & 0xff, 0);
        assert!(damaged.damage.get().is_some());
        let whole = NumberColumns::read(&bad, &columns, games).unwrap();
        assert!(whole.whole().is_err());
    }

    /// The key after a move, updated from the key before where shakmaty
    /// can, is the key made from the position after: after every legal
    /// move of random games, and of positions where a move castles, takes
    /// en passant, takes a rook on its corner or promotes.
    #[test]
    fn a_key_played_on_is_the_key_of_the_position_after() {
        let mut positions = crate::testing::random_game_positions(0x6b65, 60, 160);
        positions.extend(crate::testing::fen_positions(&[
            // Castling both ways; a bishop that takes a rook on its corner.
            "r3k2r/pppq1pBp/2n1bn2/3pp3/3PP3/2N1BN2/PPPQ1PP1/R3K2R w KQkq - 0 1",
            "r3k2r/p1pq1ppp/2n1bn2/3pp3/3PP3/2N1BN2/PPPQ1PPP/R3K2R b KQkq - 0 1",
            // En passant: legal, and a square that no pawn can take on.
            "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3",
            "rnbqkbnr/ppppp1pp/8/8/5p2/8/PPPPPPPP/RNBQKBNR w KQkq - 0 3",
            // Promotions, by a push and by taking a rook on its corner.
            "r3k2r/1P4P1/8/8/8/8/1p4p1/R3K2R w KQkq - 0 1",
            "r3k2r/1P4P1/8/8/8/8/1p4p1/R3K2R b KQkq - 0 1",
        ]));
        for pos in &positions {
            let before = key(pos);
            for m in pos.legal_moves() {
                let mut played = pos.clone();
                let got = play_keyed(&mut played, before, m);
                assert_eq!(got, key(&played), "{m:?} in {:?}", pos.board());
            }
        }
    }

    /// A move made from its key and the board is the legal move with that
    /// key, and no other key makes a move: in random games and in
    /// positions with castling both ways, en passant and promotions.
    #[test]
    fn a_move_from_its_key_is_the_legal_move_with_that_key() {
        let mut positions = crate::testing::random_game_positions(0x5eed, 40, 120);
        positions.extend(crate::testing::fen_positions(&[
            "r3k2r/pppq1ppp/2n1bn2/3pp3/3PP3/2N1BN2/PPPQ1PPP/R3K2R w KQkq - 0 1",
            "r3k2r/pppq1ppp/2n1bn2/3pp3/3PP3/2N1BN2/PPPQ1PPP/R3K2R b KQkq - 0 1",
            "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3",
            "4k3/1P4P1/8/8/8/8/1p4p1/R3K2R w KQ - 0 1",
            "r3k3/1P4P1/8/8/8/8/1p4p1/4K3 b q - 0 1",
        ]));
        for pos in &positions {
            let legal = pos.legal_moves();
            for &m in &legal {
                assert_eq!(move_of(pos, move_key(m)), Some(m), "{m:?}");
            }
            let keys: std::collections::HashSet<u16> = legal.iter().map(|&m| move_key(m)).collect();
            for k in (0..=u16::MAX).step_by(7).filter(|k| !keys.contains(k)) {
                assert_eq!(move_of(pos, k), None, "key {k}");
            }
        }
    }
}
