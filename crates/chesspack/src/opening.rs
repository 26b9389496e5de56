//! Opening names and ECO codes from the moves, as lichess gives them.
//!
//! Lichess names the opening of every game (`[ECO "C20"]`,
//! `[Opening "King's Pawn Game"]`) from its moves and one public table,
//! lichess-org/chess-openings (CC0): the deepest position of the game's
//! first 40 plies that the table lists, while at least 20 pieces are on the
//! board, matching positions (board, side to move, castling rights, en
//! passant square where a capture there is legal) so that transpositions
//! count. [`OpeningTable::lichess`] is that table, at the commit its
//! positions file names, and [`OpeningTable::classify`] its rule:
//!
//! ```
//! use chesspack::opening::OpeningTable;
//! use shakmaty::{Chess, Position, san::San};
//!
//! let mut pos = Chess::default();
//! let mut moves = Vec::new();
//! for san in ["e4", "c5", "Nf3", "d6", "d4", "cxd4", "Nxd4", "Nf6", "Nc3", "a6", "Be3"] {
//!     let m = san.parse::<San>().unwrap().to_move(&pos).unwrap();
//!     pos.play_unchecked(m);
//!     moves.push(m);
//! }
//! let named = OpeningTable::lichess().classify(&Chess::default(), &moves).unwrap();
//! assert_eq!(named.eco, "B90");
//! assert_eq!(named.name, "Sicilian Defense: Najdorf Variation, English Attack");
//! assert_eq!(named.ply, 11);
//! ```
//!
//! An archive that knows the same table stores only the games whose tags
//! differ from what the moves give.
//!
//! File format (version 1): magic `CPKE`, version (u32), maximum ply (u32),
//! the length of the labels (u32) and the number of positions (u32); the
//! labels, each `eco` TAB `name` LF; then the positions in ascending hash
//! order, each its hash (u64) and its label's index (u32). Version 2 has
//! the least number of pieces (u32) after the maximum ply, and after the
//! positions the ply of the table's line to each (u8). All integers
//! little-endian.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use shakmaty::san::San;
use shakmaty::{Bitboard, Chess, Color, Move, Position, Role, Square};

use crate::{Error, hash::fnv1a, model::book::position_hash};

/// Magic bytes of an opening table file.
pub(crate) const MAGIC: &[u8; 4] = b"CPKE";
const VERSION: u32 = 1;
/// The version with the least number of pieces and the lines' plies.
const VERSION_LINES: u32 = 2;
const HEADER: usize = 20;
const ENTRY: usize = 12;

/// Only positions this early in a game name its opening.
pub(crate) const MAX_PLY: usize = 40;
/// Lichess's rule: a position with fewer pieces on the board, and every
/// later one, names no opening.
pub(crate) const MIN_PIECES: u32 = 20;

/// Lichess's table (lichess-org/chess-openings, CC0), written by
/// `chesspack train openings` from its TSV files.
static LICHESS: &[u8] = include_bytes!("openings-lichess.bin");
/// The positions lichess's table lists, one EPD line each in its order
/// (ascending hash), which [`Walk`] reads to stop early; written by
/// `chesspack train openings` beside the table.
static LICHESS_POSITIONS: &str = include_str!("openings-lichess-positions.txt");

/// An opening: its ECO code and name, as lichess's tags give them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Opening<'a> {
    /// The ECO code (`C20`).
    pub eco: &'a str,
    /// The name (`King's Pawn Game`).
    pub name: &'a str,
}

/// A game's opening as [`OpeningTable::classify`] names it: the ECO code,
/// the name and the ply of the named position.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Named<'a> {
    /// The ECO code (`B90`).
    pub eco: &'a str,
    /// The name (`Sicilian Defense: Najdorf Variation`).
    pub name: &'a str,
    /// The ply after which the game stood on the named position (1 after
    /// White's first move).
    pub ply: usize,
}

/// Positions and the opening each one names.
pub struct OpeningTable {
    /// ECO code and name of each label.
    labels: Vec<(String, String)>,
    /// (position hash, label), in ascending hash order.
    entries: Vec<(u64, u32)>,
    /// The ply of the table's line to each position (version 2), or none.
    plies: Vec<u8>,
    max_ply: usize,
    /// Positions with fewer pieces name nothing (0 for version 1).
    min_pieces: u32,
    hash: u64,
    /// The shipped files beside a shipped table.
    shipped: Option<Shipped>,
}

/// What the library ships beside one of its tables: its positions (for
/// [`Walk`] and [`Aim`]) and the priors archives code labels with.
struct Shipped {
    positions: &'static str,
    bands: &'static str,
    reach: OnceLock<Option<Reach>>,
    band_priors: OnceLock<Option<BandPriors>>,
}

impl std::fmt::Debug for OpeningTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "OpeningTable({} positions, {} openings, {:016x})",
            self.entries.len(),
            self.labels.len(),
            self.hash
        )
    }
}

impl PartialEq for OpeningTable {
    fn eq(&self, other: &OpeningTable) -> bool {
        self.labels == other.labels
            && self.entries == other.entries
            && self.plies == other.plies
            && self.max_ply == other.max_ply
            && self.min_pieces == other.min_pieces
    }
}

impl Eq for OpeningTable {}

impl OpeningTable {
    /// Lichess's opening table (lichess-org/chess-openings, CC0, at the
    /// commit `docs/openings.md` names), which names openings as lichess
    /// does and which archives use.
    ///
    /// ```
    /// use chesspack::opening::OpeningTable;
    ///
    /// let table = OpeningTable::lichess();
    /// assert!(table.len() > 3000);
    /// assert_eq!(table.hash(), OpeningTable::lichess().hash());
    /// ```
    pub fn lichess() -> &'static OpeningTable {
        static TABLE: OnceLock<OpeningTable> = OnceLock::new();
        TABLE.get_or_init(|| {
            OpeningTable::from_bytes(LICHESS)
                .expect("the shipped table is valid")
                .shipped_with(LICHESS_POSITIONS, BUILTIN_LICHESS_BAND_PRIORS)
        })
    }

    fn shipped_with(mut self, positions: &'static str, bands: &'static str) -> OpeningTable {
        self.shipped = Some(Shipped {
            positions,
            bands,
            reach: OnceLock::new(),
            band_priors: OnceLock::new(),
        });
        self
    }

    fn new(
        labels: Vec<(String, String)>,
        mut entries: Vec<(u64, u32)>,
        lines: Option<Vec<u8>>,
    ) -> OpeningTable {
        // (hash, label, ply), one a position: the first of each hash.
        let plies = lines.unwrap_or_default();
        let mut rows: Vec<(u64, u32, u8)> = entries
            .drain(..)
            .enumerate()
            .map(|(i, (h, l))| (h, l, plies.get(i).copied().unwrap_or(0)))
            .collect();
        rows.sort_by_key(|r| r.0);
        rows.dedup_by_key(|r| r.0);
        let versioned = !plies.is_empty();
        let mut table = OpeningTable {
            labels,
            entries: rows.iter().map(|r| (r.0, r.1)).collect(),
            plies: if versioned {
                rows.iter().map(|r| r.2).collect()
            } else {
                Vec::new()
            },
            max_ply: MAX_PLY,
            min_pieces: if versioned { MIN_PIECES } else { 0 },
            hash: 0,
            shipped: None,
        };
        table.hash = fnv1a(&table.to_bytes());
        table
    }

    /// The opening that position `pos` names, if the table lists it
    /// (whatever the number of pieces on its board).
    ///
    /// ```
    /// use chesspack::opening::OpeningTable;
    /// use shakmaty::{Chess, Position, san::San};
    ///
    /// let mut pos = Chess::default();
    /// for san in ["e4", "e5", "Nf3", "Nc6", "Bb5"] {
    ///     let m = san.parse::<San>().unwrap().to_move(&pos).unwrap();
    ///     pos.play_unchecked(m);
    /// }
    /// let o = OpeningTable::lichess().get(&pos).unwrap();
    /// assert_eq!((o.eco, o.name), ("C60", "Ruy Lopez"));
    /// ```
    pub fn get(&self, pos: &Chess) -> Option<Opening<'_>> {
        self.label_at(pos).and_then(|l| self.label(l))
    }

    /// The label (opening) that position `pos` names, if the table lists
    /// it.
    fn label_at(&self, pos: &Chess) -> Option<u32> {
        self.index_at(pos).map(|i| self.entries[i].1)
    }

    /// The index of position `pos` in the table, if it lists it.
    fn index_at(&self, pos: &Chess) -> Option<usize> {
        let hash = position_hash(pos);
        self.entries.binary_search_by_key(&hash, |e| e.0).ok()
    }

    /// The opening of label `label`, if the table has one.
    pub(crate) fn label(&self, label: u32) -> Option<Opening<'_>> {
        let (eco, name) = self.labels.get(label as usize)?;
        Some(Opening { eco, name })
    }

    /// The label that says the table names no opening (lichess writes `?`
    /// for both tags then), one past the openings, for a table of version
    /// 2; `None` for a table of version 1.
    pub(crate) fn none_label(&self) -> Option<u32> {
        (!self.plies.is_empty()).then_some(self.labels.len() as u32)
    }

    /// The opening of label `label`, or `?` for both tags for the
    /// [`none_label`](OpeningTable::none_label).
    pub(crate) fn label_or_none(&self, label: u32) -> Option<Opening<'_>> {
        if Some(label) == self.none_label() {
            return Some(Opening {
                eco: "?",
                name: "?",
            });
        }
        self.label(label)
    }

    /// Whether `pos` has too few pieces for the table's rule: it and every
    /// later position name nothing.
    fn too_few_pieces(&self, pos: &Chess) -> bool {
        (pos.board().occupied().count() as u32) < self.min_pieces
    }

    /// The label of the opening [`OpeningTable::classify`] finds, and the
    /// ply of its position.
    pub(crate) fn predict_label(&self, start: &Chess, moves: &[Move]) -> Option<(u32, usize)> {
        if position_hash(start) != position_hash(&Chess::default()) {
            return None;
        }
        let mut pos = start.clone();
        let mut found = None;
        for (ply, &m) in moves.iter().take(self.max_ply).enumerate() {
            if !pos.is_legal(m) {
                break;
            }
            pos.play_unchecked(m);
            if self.too_few_pieces(&pos) {
                break;
            }
            if let Some(l) = self.label_at(&pos) {
                found = Some((l, ply + 1));
            }
        }
        found
    }

    /// The opening of a game from the standard start: that of the deepest
    /// of its first 40 positions that the table lists (for lichess's table,
    /// among those with at least 20 pieces on the board). `None` when it
    /// lists none, or the game starts elsewhere.
    pub(crate) fn predict(&self, start: &Chess, moves: &[Move]) -> Option<Opening<'_>> {
        self.predict_label(start, moves)
            .and_then(|(l, _)| self.label(l))
    }

    /// A game's opening, as lichess names it with this table: the deepest
    /// position of the game's first 40 plies that the table lists, while
    /// at least 20 pieces are on the board, with the ply it stood there.
    /// `None` when the table lists none of them, or the game does not start
    /// from the standard position (lichess names no opening then). Moves
    /// after an illegal one are not looked at.
    ///
    /// ```
    /// use chesspack::opening::OpeningTable;
    /// use shakmaty::{Chess, Position, san::San};
    ///
    /// // The table's line is 1. e4 e5 2. Nf3 Nc6 3. Bc4 h6: transpositions
    /// // count.
    /// let mut pos = Chess::default();
    /// let mut moves = Vec::new();
    /// for san in ["Nf3", "Nc6", "e4", "e5", "Bc4", "h6"] {
    ///     let m = san.parse::<San>().unwrap().to_move(&pos).unwrap();
    ///     pos.play_unchecked(m);
    ///     moves.push(m);
    /// }
    /// let named = OpeningTable::lichess().classify(&Chess::default(), &moves).unwrap();
    /// assert_eq!(
    ///     (named.eco, named.name, named.ply),
    ///     ("C50", "Italian Game: Anti-Fried Liver Defense", 6)
    /// );
    /// ```
    pub fn classify(&self, start: &Chess, moves: &[Move]) -> Option<Named<'_>> {
        let (label, ply) = self.predict_label(start, moves)?;
        let o = self.label(label)?;
        Some(Named {
            eco: o.eco,
            name: o.name,
            ply,
        })
    }

    /// The opening that the table names for the first game of `text` (a
    /// PGN game's text, as a game stored verbatim or a file gives it), or
    /// `None` where the text holds no game that parses or the table names
    /// none.
    ///
    /// ```
    /// use chesspack::opening::OpeningTable;
    ///
    /// let table = OpeningTable::lichess();
    /// let o = table.classify_text(b"1. e4 e5 2. Nf3 Nc6 3. Bb5 *").unwrap();
    /// assert_eq!((o.eco, o.name, o.ply), ("C60", "Ruy Lopez", 5));
    /// assert!(table.classify_text(b"not pgn").is_none());
    /// ```
    pub fn classify_text(&self, text: &[u8]) -> Option<Named<'_>> {
        let game = crate::pgn::GameReader::new(text).next()?.ok()?;
        self.classify(&game.start, &game.moves)
    }

    /// A walk along a game from `start` that finds what
    /// [`OpeningTable::classify`] finds and says when no later move can
    /// change it (see [`Walk`]).
    pub(crate) fn walk(&'static self, start: &Chess) -> Walk {
        let standard = position_hash(start) == position_hash(&Chess::default());
        // A shipped table's positions, to stop early; another table's walk
        // looks at every one of the first `max_ply` plies.
        let reach = self.reach();
        Walk {
            table: self,
            pos: start.clone(),
            plies: if standard { 0 } else { self.max_ply },
            found: None,
            reach,
            candidates: reach.map_or_else(Candidates::none, |r| {
                with_filterings(self.hash, |f| f.all(r.len()))
            }),
        }
    }

    /// The signatures of a shipped table's positions, or `None` for
    /// another table or when its positions file does not match it.
    fn reach(&self) -> Option<&Reach> {
        let s = self.shipped.as_ref()?;
        s.reach
            .get_or_init(|| Reach::new(self, s.positions))
            .as_ref()
    }

    /// The priors by rating band that archives code a label with.
    pub(crate) fn band_priors(&self) -> Option<&BandPriors> {
        let s = self.shipped.as_ref()?;
        s.band_priors
            .get_or_init(|| BandPriors::new(self, s.bands))
            .as_ref()
    }

    /// The plies of the table's lines to the positions of `label`, least
    /// first, without repeats (none for a table of version 1).
    pub(crate) fn line_plies(&self, label: u32) -> &[u8] {
        self.reach()
            .and_then(|r| r.line_plies.get(label as usize))
            .map_or(&[], Vec::as_slice)
    }

    #[cfg(feature = "train")]
    /// The positions the table lists, one EPD line each in the table's
    /// order, as found in `games` (start, moves): the file that the shipped
    /// table has beside it (`openings-positions.txt`), which lets a reader
    /// stop decoding a game's moves once no listed position is reachable.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidData`] saying how many listed positions no game
    /// reaches (then the file cannot be made from these games).
    pub(crate) fn positions_in(
        &self,
        games: impl IntoIterator<Item = (Chess, Vec<Move>)>,
    ) -> Result<String, Error> {
        let mut found: HashMap<u64, String> = HashMap::new();
        for (start, moves) in games {
            let mut pos = start;
            if position_hash(&pos) != position_hash(&Chess::default()) {
                continue;
            }
            for &m in moves.iter().take(self.max_ply) {
                if !pos.is_legal(m) {
                    break;
                }
                pos.play_unchecked(m);
                let h = position_hash(&pos);
                if !found.contains_key(&h) && self.entries.binary_search_by_key(&h, |e| e.0).is_ok()
                {
                    let epd =
                        shakmaty::fen::Epd::from_position(&pos, shakmaty::EnPassantMode::Legal);
                    found.insert(h, epd.to_string());
                }
            }
        }
        let missing = self.entries.len() - found.len();
        if missing > 0 {
            return Err(Error::InvalidData(format!(
                "{missing} of the table's {} positions are in none of the games",
                self.entries.len()
            )));
        }
        Ok(self
            .entries
            .iter()
            .map(|(h, _)| found[h].clone() + "\n")
            .collect())
    }

    /// Positions the table lists.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the table lists no position.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    #[cfg(feature = "train")]
    /// The distinct openings (ECO code and name) the table names.
    pub fn openings(&self) -> usize {
        self.labels()
    }

    /// The number of labels: [`OpeningTable::label`] gives an opening
    /// for each below it.
    pub(crate) fn labels(&self) -> usize {
        self.labels.len()
    }

    /// The FNV-1a hash of the table's file, which archives record.
    pub fn hash(&self) -> u64 {
        self.hash
    }

    /// The table from lichess's opening TSV files (`eco`, `name`, `pgn`
    /// columns with a header line; the files concatenated in order, `a.tsv`
    /// to `e.tsv`), with lichess's rule: each line names the position its
    /// moves reach; where several lines reach one position, the last of
    /// them names it (lichess keys its table by position, later lines
    /// replacing earlier ones); at least 20 pieces.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidData`] naming the line: a missing column, a move
    /// that is not legal SAN, a tab or line feed in a name, a line of more
    /// than 255 plies.
    ///
    /// ```
    /// use chesspack::opening::OpeningTable;
    ///
    /// let tsv = "eco\tname\tpgn\nA00\tPolish Opening\t1. b4\nA00\tPolish Opening: Outflank Variation\t1. b4 c6\n";
    /// let table = OpeningTable::from_tsv(tsv).unwrap();
    /// assert_eq!(table.len(), 2);
    /// ```
    pub fn from_tsv(text: &str) -> Result<OpeningTable, Error> {
        let (labels, rows) = tsv_lines(text)?;
        let mut entries = Vec::with_capacity(rows.len());
        let mut plies = Vec::with_capacity(rows.len());
        // The last line of a position wins: a stable sort of the lines in
        // reverse keeps it first, and `new` keeps the first of each.
        for &(hash, label, ply, _) in rows.iter().rev() {
            entries.push((hash, label));
            plies.push(ply);
        }
        let mut order: Vec<usize> = (0..entries.len()).collect();
        order.sort_by_key(|&i| entries[i].0);
        let entries = order.iter().map(|&i| entries[i]).collect();
        let plies = order.iter().map(|&i| plies[i]).collect();
        Ok(OpeningTable::new(labels, entries, Some(plies)))
    }

    #[cfg(feature = "train")]
    /// The positions file of a table made by [`OpeningTable::from_tsv`]
    /// from `text`: each listed position as EPD, one a line, in the
    /// table's order.
    ///
    /// # Errors
    ///
    /// As [`OpeningTable::from_tsv`].
    pub(crate) fn tsv_positions(&self, text: &str) -> Result<String, Error> {
        let (_, rows) = tsv_lines(text)?;
        let epds: HashMap<u64, String> = rows.into_iter().map(|r| (r.0, r.3)).collect();
        self.entries
            .iter()
            .map(|(h, _)| {
                epds.get(h)
                    .map(|e| e.clone() + "\n")
                    .ok_or_else(|| Error::InvalidData("a position of no line".into()))
            })
            .collect()
    }

    /// The table file's bytes.
    pub(crate) fn to_bytes(&self) -> Vec<u8> {
        let mut text = Vec::new();
        for (eco, name) in &self.labels {
            text.extend_from_slice(eco.as_bytes());
            text.push(b'\t');
            text.extend_from_slice(name.as_bytes());
            text.push(b'\n');
        }
        let lines = !self.plies.is_empty() || self.min_pieces > 0;
        let mut out = MAGIC.to_vec();
        let mut head = vec![
            if lines { VERSION_LINES } else { VERSION },
            self.max_ply as u32,
        ];
        if lines {
            head.push(self.min_pieces);
        }
        head.extend([text.len() as u32, self.entries.len() as u32]);
        for n in head {
            out.extend_from_slice(&n.to_le_bytes());
        }
        out.extend_from_slice(&text);
        for &(hash, label) in &self.entries {
            out.extend_from_slice(&hash.to_le_bytes());
            out.extend_from_slice(&label.to_le_bytes());
        }
        if lines {
            out.extend_from_slice(&self.plies);
        }
        out
    }

    /// A table from its file's bytes, checked (sizes, order, labels).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidData`] for a malformed file.
    pub(crate) fn from_bytes(bytes: &[u8]) -> Result<OpeningTable, Error> {
        let bad = |what: &str| Error::InvalidData(format!("opening table: {what}"));
        let u32_at = |i: usize| crate::le::u32_at(bytes, i);
        if bytes.len() < HEADER || &bytes[..4] != MAGIC {
            return Err(bad("not a chesspack opening table"));
        }
        let lines = match u32_at(4) {
            VERSION => false,
            VERSION_LINES if bytes.len() >= HEADER + 4 => true,
            _ => return Err(bad("unknown version")),
        };
        let max_ply = u32_at(8) as usize;
        let (min_pieces, at) = if lines { (u32_at(12), 16) } else { (0, 12) };
        let header = at + 8;
        let text_len = u32_at(at) as usize;
        let n = u32_at(at + 4) as usize;
        let per = ENTRY as u64 + u64::from(lines);
        if bytes.len() as u64 != (header + text_len) as u64 + n as u64 * per {
            return Err(bad("wrong length"));
        }
        let text = std::str::from_utf8(&bytes[header..header + text_len])
            .map_err(|_| bad("labels are not utf-8"))?;
        let mut labels = Vec::new();
        if !text.is_empty() {
            for line in text
                .strip_suffix('\n')
                .ok_or_else(|| bad("bad labels"))?
                .split('\n')
            {
                let (eco, name) = line.split_once('\t').ok_or_else(|| bad("bad label"))?;
                labels.push((eco.to_owned(), name.to_owned()));
            }
        }
        let entries_end = header + text_len + n * ENTRY;
        let mut entries = Vec::with_capacity(n);
        for chunk in bytes[header + text_len..entries_end].chunks_exact(ENTRY) {
            let hash = crate::le::u64_at(chunk, 0);
            let label = crate::le::u32_at(chunk, 8);
            if entries.last().is_some_and(|&(h, _)| h >= hash) || label as usize >= labels.len() {
                return Err(bad("positions out of order or labels out of bounds"));
            }
            entries.push((hash, label));
        }
        let plies = bytes[entries_end..].to_vec();
        if plies.contains(&0) {
            return Err(bad("a line of no plies"));
        }
        Ok(OpeningTable {
            labels,
            entries,
            plies,
            max_ply,
            min_pieces,
            hash: fnv1a(bytes),
            shipped: None,
        })
    }
}

/// The lines of lichess's opening TSV files: the labels in the order first
/// met, and each line's position hash, label, ply and EPD.
#[allow(clippy::type_complexity)]
fn tsv_lines(text: &str) -> Result<(Vec<(String, String)>, Vec<(u64, u32, u8, String)>), Error> {
    let mut labels: Vec<(String, String)> = Vec::new();
    let mut ids: HashMap<(String, String), u32> = HashMap::new();
    let mut rows = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let bad = |what: String| Error::InvalidData(format!("opening line {}: {what}", n + 1));
        if line.is_empty() || line.starts_with("eco\t") {
            continue;
        }
        let mut cols = line.split('\t');
        let (Some(eco), Some(name), Some(pgn)) = (cols.next(), cols.next(), cols.next()) else {
            return Err(bad("expected the columns eco, name and pgn".into()));
        };
        let mut pos = Chess::default();
        let mut ply = 0u32;
        for token in pgn.split_whitespace() {
            if token.ends_with('.') {
                continue;
            }
            let m = token
                .parse::<San>()
                .ok()
                .and_then(|san| san.to_move(&pos).ok())
                .ok_or_else(|| bad(format!("{token:?} is not a legal move")))?;
            pos.play_unchecked(m);
            ply += 1;
        }
        let ply = u8::try_from(ply)
            .ok()
            .filter(|&p| p > 0)
            .ok_or_else(|| bad("a line of no moves, or more than 255".into()))?;
        let key = (eco.to_owned(), name.to_owned());
        let next = labels.len() as u32;
        let id = *ids.entry(key.clone()).or_insert_with(|| {
            labels.push(key);
            next
        });
        let epd = shakmaty::fen::Epd::from_position(&pos, shakmaty::EnPassantMode::Legal);
        rows.push((position_hash(&pos), id, ply, epd.to_string()));
    }
    Ok((labels, rows))
}

/// What a position can still become, as far as the opening table is
/// concerned: what no move takes back. A listed position is out of reach
/// when it has castling rights the game has lost, more of a side's pieces
/// of some kind than the game has (pawns aside, a promotion can make any),
/// more pawns, or pawns that the game's pawns of their side cannot reach
/// one each (a pawn only goes forward, and a file aside a rank).
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
struct Signature {
    /// Each side's pawns.
    pawns: [Bitboard; 2],
    /// Each side's pawns, knights, bishops, rooks and queens.
    counts: [[u8; 5]; 2],
    castles: Bitboard,
}

impl Signature {
    fn of(pos: &Chess) -> Signature {
        let board = pos.board();
        let mut counts = [[0u8; 5]; 2];
        for (side, c) in [Color::White, Color::Black].into_iter().enumerate() {
            for (r, role) in [
                Role::Pawn,
                Role::Knight,
                Role::Bishop,
                Role::Rook,
                Role::Queen,
            ]
            .into_iter()
            .enumerate()
            {
                counts[side][r] = (board.by_color(c) & board.by_role(role)).count() as u8;
            }
        }
        Signature {
            pawns: [board.pawns() & board.white(), board.pawns() & board.black()],
            counts,
            castles: pos.castles().castling_rights(),
        }
    }

    /// The squares each side's pawns can reach: [`Signature::may_reach`]'s
    /// `reachable`, the same for every listed position.
    fn reachable(&self, cones: &[[Bitboard; 64]; 2]) -> [Bitboard; 2] {
        let mut out = [Bitboard::EMPTY; 2];
        for ((out, pawns), cones) in out.iter_mut().zip(&self.pawns).zip(cones) {
            for sq in *pawns {
                *out |= cones[usize::from(sq)];
            }
        }
        out
    }

    /// Whether a game at `self` may still reach `listed` (never false
    /// when it can); `reachable` is [`Signature::reachable`] of `self`.
    /// With `exact`, the pawns are matched one to one ([`pawns_match`]);
    /// without, only each listed pawn's square is checked.
    fn may_reach(
        &self,
        listed: &Signature,
        reachable: &[Bitboard; 2],
        cones: &[[Bitboard; 64]; 2],
        exact: bool,
    ) -> bool {
        // The cheapest tests that rule out most positions first: castling
        // rights, then pawns on squares that no pawn of the game reaches.
        if (listed.castles & !self.castles).any()
            || (listed.pawns[0] & !reachable[0]).any()
            || (listed.pawns[1] & !reachable[1]).any()
        {
            return false;
        }
        for (((have, want), (pawns, listed_pawns)), cones) in self
            .counts
            .iter()
            .zip(&listed.counts)
            .zip(self.pawns.iter().zip(&listed.pawns))
            .zip(cones)
        {
            if want[0] > have[0] {
                return false;
            }
            // Pawns to spare for promotions.
            let spare = i32::from(have[0] - want[0]);
            let missing: i32 = have[1..]
                .iter()
                .zip(&want[1..])
                .map(|(&h, &w)| (i32::from(w) - i32::from(h)).max(0))
                .sum();
            if missing > spare {
                return false;
            }
            if exact && !pawns_match(*pawns, *listed_pawns, cones) {
                return false;
            }
        }
        true
    }
}

/// Whether each pawn of `want` can come from a pawn of `have` of its own
/// (a pawn of one side, where `cones` are that side's): a matching of the
/// two sets of at most 8 squares, found by augmenting paths.
fn pawns_match(have: Bitboard, want: Bitboard, cones: &[Bitboard; 64]) -> bool {
    if (want & !have).is_empty() {
        // Each pawn is where one stands.
        return true;
    }
    let mut ours = [Square::A1; 8];
    let mut n = 0;
    for sq in have.into_iter().take(8) {
        ours[n] = sq;
        n += 1;
    }
    let ours = &ours[..n];
    /// Gives listed pawn `t` a pawn of ours, moving others along.
    fn augment(
        t: Square,
        ours: &[Square],
        cones: &[Bitboard; 64],
        seen: &mut u8,
        owner: &mut [Option<Square>; 8],
    ) -> bool {
        for (o, &sq) in ours.iter().enumerate() {
            if *seen & (1 << o) == 0 && cones[usize::from(sq)].contains(t) {
                *seen |= 1 << o;
                if owner[o].is_none_or(|other| augment(other, ours, cones, seen, owner)) {
                    owner[o] = Some(t);
                    return true;
                }
            }
        }
        false
    }
    let mut owner = [None; 8];
    want.into_iter()
        .all(|t| augment(t, ours, cones, &mut 0, &mut owner))
}

/// [`Walk`] matches pawns one to one ([`pawns_match`]) when at most this
/// many candidates are left.
const EXACT_BELOW: usize = 16;

/// The signatures of the shipped table's positions.
struct Reach {
    /// Each position's EPD line (the table's order).
    epds: Vec<&'static str>,
    /// Each position's signature and pieces, made from its line when first
    /// asked for ([`Reach::listed`]): a game's [`Aim`] looks at its
    /// label's few, and parsing all 3,807 cost a query that decodes one
    /// game 21.5 M instructions (issue 68).
    listed: Box<[OnceLock<Option<Listed>>]>,
    /// Each position's hash (the table's order).
    hashes: Vec<u64>,
    /// The positions of each label.
    by_label: Vec<Vec<u32>>,
    /// The plies of the lines to each label's positions, least first,
    /// without repeats ([`OpeningTable::line_plies`], asked for each game
    /// an archive's block names by its label).
    line_plies: Vec<Vec<u8>>,
    /// For each side and square, the squares a pawn there can reach.
    cones: [[Bitboard; 64]; 2],
}

/// A board's pieces, one bitboard a colour and role.
fn pieces(board: &shakmaty::Board) -> [Bitboard; 12] {
    let mut out = [Bitboard::EMPTY; 12];
    for (i, c) in [Color::White, Color::Black].into_iter().enumerate() {
        for (r, role) in Role::ALL.into_iter().enumerate() {
            out[i * 6 + r] = board.by_color(c) & board.by_role(role);
        }
    }
    out
}

/// How far apart two boards are: the pieces of each colour and role that
/// stand on one and not the other, counted on both.
fn distance(a: &[Bitboard; 12], b: &[Bitboard; 12]) -> u32 {
    a.iter().zip(b).map(|(x, y)| (*x ^ *y).count() as u32).sum()
}

/// A listed position's signature and pieces (one bitboard a colour and
/// role).
struct Listed {
    signature: Signature,
    board: [Bitboard; 12],
}

impl Reach {
    /// The reach of `table`'s positions, whose EPD lines (one each, in the
    /// table's order) are `epds`; `None` where the lines are not as many
    /// as the positions. Each line is parsed when first asked for, and
    /// one that does not give its position's hash gives none
    /// ([`Reach::listed`]): [`Reach::check`] parses them all.
    fn new(table: &OpeningTable, epds: &'static str) -> Option<Reach> {
        let lines: Vec<&'static str> = epds.lines().collect();
        if lines.len() != table.entries.len() {
            return None;
        }
        let mut by_label = vec![Vec::new(); table.labels.len()];
        for (i, &(_, label)) in table.entries.iter().enumerate() {
            by_label.get_mut(label as usize)?.push(i as u32);
        }
        let listed = lines.iter().map(|_| OnceLock::new()).collect();
        let hashes = table.entries.iter().map(|e| e.0).collect();
        let mut cones = [[Bitboard::EMPTY; 64]; 2];
        for from in Square::ALL {
            for to in Square::ALL {
                let ahead = i32::from(u8::from(to.rank())) - i32::from(u8::from(from.rank()));
                let aside =
                    (i32::from(u8::from(to.file())) - i32::from(u8::from(from.file()))).abs();
                if ahead >= aside {
                    cones[0][usize::from(from)].add(to);
                }
                if -ahead >= aside {
                    cones[1][usize::from(from)].add(to);
                }
            }
        }
        let line_plies = by_label
            .iter()
            .map(|ps| {
                let mut plies: Vec<u8> = ps
                    .iter()
                    .filter_map(|&i| table.plies.get(i as usize).copied())
                    .collect();
                plies.sort_unstable();
                plies.dedup();
                plies
            })
            .collect();
        Some(Reach {
            epds: lines,
            listed,
            hashes,
            by_label,
            line_plies,
            cones,
        })
    }

    /// The number of listed positions.
    fn len(&self) -> usize {
        self.hashes.len()
    }

    /// Listed position `i`, parsed from its line the first time; `None`
    /// where the line does not parse to a position with the table's hash
    /// for it (not so for the shipped table: a test checks every line).
    fn listed(&self, i: usize) -> Option<&Listed> {
        self.listed[i]
            .get_or_init(|| {
                let pos: Chess = shakmaty::fen::Epd::from_ascii(self.epds[i].as_bytes())
                    .ok()?
                    .into_position(shakmaty::CastlingMode::Standard)
                    .ok()?;
                (position_hash(&pos) == self.hashes[i]).then(|| Listed {
                    signature: Signature::of(&pos),
                    board: pieces(pos.board()),
                })
            })
            .as_ref()
    }

    /// Whether every line gives its listed position.
    #[cfg(test)]
    fn check(&self) -> bool {
        (0..self.len()).all(|i| self.listed(i).is_some())
    }
}

/// A game's walk through the table: [`OpeningTable::predict`] a move at a
/// time, which knows when no later move can change its answer, so that a
/// reader decodes only the plies the answer needs (issue 40). With the
/// shipped table, a listed position leaves the walk's candidates once the
/// game cannot reach it ([`Signature`]: castling rights, material and
/// pawns, which no move takes back), and the walk is over when none is
/// left; it is over too after the table's first plies, and at once for a
/// game that does not start from the standard position.
pub(crate) struct Walk {
    table: &'static OpeningTable,
    pos: Chess,
    /// Plies played (the table's `max_ply` for a game it does not name,
    /// and once a position has too few pieces).
    plies: usize,
    /// The label of the deepest listed position so far, and its ply.
    found: Option<(u32, usize)>,
    reach: Option<&'static Reach>,
    /// Listed positions the game may still reach (with `reach`).
    candidates: Candidates,
}

/// A set of listed positions a game may still reach, shared by the walks
/// of the games that came to it, with its number in the thread's
/// [`Filterings`] of that generation.
#[derive(Clone)]
struct Candidates {
    positions: Arc<[u32]>,
    id: u32,
    generation: u64,
}

impl Candidates {
    fn none() -> Candidates {
        Candidates {
            positions: Arc::new([]),
            id: u32::MAX,
            generation: u64::MAX,
        }
    }
}

/// The walks' filterings, kept for the thread's next games (issue 40):
/// the listed positions a game may still reach after a move depend only
/// on those it could reach before and on its new [`Signature`], and games
/// share their first moves. A filtering met before is a look-up. When
/// the sets kept hold more than [`Filterings::LIMIT`] positions in all,
/// everything is dropped and a new generation starts (a walk of an
/// earlier generation filters for itself).
#[derive(Default)]
struct Filterings {
    generation: u64,
    /// The sets met, by number, and the numbers by set.
    sets: Vec<Arc<[u32]>>,
    ids: HashMap<Arc<[u32]>, u32>,
    /// The set after a filtering: by the set before and the signature
    /// (whether pawns are matched one to one depends on the set's size).
    next: HashMap<(u32, Signature), u32>,
    /// The positions of every set kept.
    size: usize,
}

thread_local! {
    /// Each table's filterings, by the table's hash.
    static FILTERINGS: std::cell::RefCell<Vec<(u64, Filterings)>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Runs `f` on the thread's filterings of the table whose hash is `table`.
fn with_filterings<T>(table: u64, f: impl FnOnce(&mut Filterings) -> T) -> T {
    FILTERINGS.with_borrow_mut(|all| {
        let i = match all.iter().position(|(h, _)| *h == table) {
            Some(i) => i,
            None => {
                all.push((table, Filterings::default()));
                all.len() - 1
            }
        };
        f(&mut all[i].1)
    })
}

impl Filterings {
    /// Positions kept at most (4 bytes each).
    const LIMIT: usize = 1 << 20;

    /// The set of all `n` listed positions.
    fn all(&mut self, n: usize) -> Candidates {
        if self.size > Filterings::LIMIT {
            *self = Filterings {
                generation: self.generation + 1,
                ..Filterings::default()
            };
        }
        self.intern((0..n as u32).collect())
    }

    fn intern(&mut self, positions: Vec<u32>) -> Candidates {
        let positions: Arc<[u32]> = positions.into();
        let id = match self.ids.get(&positions) {
            Some(&id) => id,
            None => {
                let id = self.sets.len() as u32;
                self.size += positions.len();
                self.sets.push(positions.clone());
                self.ids.insert(positions.clone(), id);
                id
            }
        };
        Candidates {
            positions: self.sets[id as usize].clone(),
            id,
            generation: self.generation,
        }
    }

    /// What `kept` keeps of `from`'s positions, where that depends only
    /// on `signature` and on `from`'s size: looked up where this filtering
    /// was met before.
    fn filter(
        &mut self,
        from: &Candidates,
        signature: Signature,
        kept: impl FnOnce(&[u32]) -> Vec<u32>,
    ) -> Candidates {
        if from.generation != self.generation {
            return Candidates {
                positions: kept(&from.positions).into(),
                ..Candidates::none()
            };
        }
        let key = (from.id, signature);
        if let Some(&id) = self.next.get(&key) {
            return Candidates {
                positions: self.sets[id as usize].clone(),
                id,
                generation: self.generation,
            };
        }
        let to = self.intern(kept(&from.positions));
        self.next.insert(key, to.id);
        to
    }
}

impl Walk {
    /// Whether a later move may change the opening.
    pub(crate) fn goes_on(&self) -> bool {
        self.plies < self.table.max_ply
            && (self.reach.is_none() || !self.candidates.positions.is_empty())
    }

    /// Plays `m`, the game's next move; an illegal one ends the walk, as it
    /// ends [`OpeningTable::predict`].
    pub(crate) fn play(&mut self, m: Move) {
        if !self.goes_on() {
            return;
        }
        if !self.pos.is_legal(m) {
            self.plies = self.table.max_ply;
            return;
        }
        let castles = self.pos.castles().castling_rights();
        self.pos.play_unchecked(m);
        self.plies += 1;
        if self.table.too_few_pieces(&self.pos) {
            self.plies = self.table.max_ply;
            return;
        }
        if let Some(l) = self.table.label_at(&self.pos) {
            self.found = Some((l, self.plies));
        }
        if let Some(reach) = self.reach
            && (m.is_capture()
                || m.role() == Role::Pawn
                || self.pos.castles().castling_rights() != castles)
        {
            let now = Signature::of(&self.pos);
            // Matching the pawns one to one costs more than the rest: it
            // is kept for the last few candidates, whose dropping ends
            // the walk.
            let exact = self.candidates.positions.len() <= EXACT_BELOW;
            self.candidates = with_filterings(self.table.hash, |f| {
                f.filter(&self.candidates, now, |from| {
                    let reachable = now.reachable(&reach.cones);
                    from.iter()
                        .copied()
                        .filter(|&i| {
                            reach.listed(i as usize).is_some_and(|l| {
                                now.may_reach(&l.signature, &reachable, &reach.cones, exact)
                            })
                        })
                        .collect()
                })
            });
        }
    }

    /// The opening so far: the game's, once [`Walk::goes_on`] is false.
    pub(crate) fn opening(&self) -> Option<Opening<'static>> {
        self.found.and_then(|(l, _)| self.table.label(l))
    }

    /// The opening so far with the ply of its position, as
    /// [`OpeningTable::classify`] gives it.
    pub(crate) fn named(&self) -> Option<Named<'static>> {
        let (l, ply) = self.found?;
        let o = self.table.label(l)?;
        Some(Named {
            eco: o.eco,
            name: o.name,
            ply,
        })
    }
}

/// The score (in the move models' 1/1024 nats) that [`Aim`] adds to a
/// move that brings the game nearer a position of its opening: ln 32.
const AIM_BONUS: i32 = 3549;
/// The score [`Aim`] takes from a move after which no position of the
/// opening can be reached: enough for the least frequency.
const AIM_PENALTY: i32 = 1 << 16;

/// A game's way to its opening: the archive stores the
/// opening's label before the moves, so the mainline's moves are coded
/// knowing that the game reaches a listed position of that label. Until it
/// has, a move that may no longer reach any ([`Signature`]) is all but
/// ruled out, and one that brings the board nearer one (fewer pieces out
/// of place) is made 32 times likelier. Only with the shipped table.
#[derive(Clone, Debug)]
pub(crate) struct Aim {
    /// The label's positions (indices in the shipped table's order).
    targets: &'static [u32],
    /// Those positions, parsed ([`Reach::listed`]) when the aim is made,
    /// not at each move.
    listed: Vec<&'static Listed>,
    reach: &'static Reach,
    /// Whether the game has reached one of them: then moves are left as
    /// the model scores them.
    reached: bool,
}

impl std::fmt::Debug for Listed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Listed({:?})", self.board)
    }
}

impl std::fmt::Debug for Reach {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Reach({} positions)", self.len())
    }
}

impl Aim {
    /// The way to label `label` of `table`, a shipped table; `None` for a
    /// label it does not have (or when its positions file does not match
    /// it).
    pub(crate) fn new(table: &'static OpeningTable, label: u32) -> Option<Aim> {
        let reach = table.reach()?;
        let targets = reach.by_label.get(label as usize)?;
        (!targets.is_empty()).then(|| Aim {
            targets,
            listed: targets
                .iter()
                .filter_map(|&t| reach.listed(t as usize))
                .collect(),
            reach,
            reached: false,
        })
    }

    /// Sees `pos`, the mainline's next position (each of them, from the
    /// start, in order, by encoder and decoder alike); returns whether the
    /// moves from it are to be [adjusted](Aim::adjust): not once the game
    /// has reached a position of the opening.
    pub(crate) fn visit(&mut self, pos: &Chess) -> bool {
        if !self.reached {
            let hash = position_hash(pos);
            self.reached = self
                .targets
                .iter()
                .any(|&t| self.reach.hashes[t as usize] == hash);
        }
        !self.reached
    }

    /// Changes `scores`, the model's scores of the `legal` moves of `pos`,
    /// as the aim has it (see [`Aim`]), where [`Aim::visit`] says so.
    pub(crate) fn adjust(&self, pos: &Chess, legal: &[Move], scores: &mut [i32]) {
        let r = self.reach;
        let nearest = |board: &shakmaty::Board| {
            let b = pieces(board);
            self.listed
                .iter()
                .map(|l| distance(&b, &l.board))
                .min()
                .unwrap_or(0)
        };
        let now = nearest(pos.board());
        // Whether a signature may still reach a target, for the signatures
        // met so far: moves share them (a piece moved without a capture
        // leaves the position's own; captures of one kind of piece by
        // pieces give one), and the test matches pawns one to one.
        let mut met = [(Signature::default(), false); 16];
        let mut n_met = 0;
        for (&m, score) in legal.iter().zip(scores.iter_mut()) {
            let mut after = pos.clone();
            after.play_unchecked(m);
            let sig = Signature::of(&after);
            let open = match met[..n_met].iter().find(|(s, _)| *s == sig) {
                Some(&(_, open)) => open,
                None => {
                    let reachable = sig.reachable(&r.cones);
                    let open = self
                        .listed
                        .iter()
                        .any(|l| sig.may_reach(&l.signature, &reachable, &r.cones, true));
                    if n_met < met.len() {
                        met[n_met] = (sig, open);
                        n_met += 1;
                    }
                    open
                }
            };
            if !open {
                *score = score.saturating_sub(AIM_PENALTY);
            } else if nearest(after.board()) < now {
                *score = score.saturating_add(AIM_BONUS);
            }
        }
    }
}

/// How likely each label (opening) is as a game's: a binary tree over the
/// labels with a fixed chance at each node, from counts of training games
/// (`openings-prior.txt`, one count a label in the table's order, written
/// by `chesspack train opening-prior`), each count plus one: one of
/// [`BandPriors`].
pub(crate) struct LabelPrior {
    /// The tree's depth: labels are numbers of this many bits.
    depth: u32,
    /// The chance of a 0 bit at each node (heap order from 1), in 2048ths.
    p0: Vec<u16>,
    labels: u32,
}

impl LabelPrior {
    /// The prior of `counts` (one a label of `table`, each plus one).
    fn of_counts(table: &OpeningTable, counts: &[u64]) -> Option<LabelPrior> {
        let labels = table.labels.len() + usize::from(table.none_label().is_some());
        if counts.len() != labels || counts.is_empty() {
            return None;
        }
        let labels = counts.len() as u32;
        let depth = (labels - 1).max(1).ilog2() + 1;
        let leaves = 1usize << depth;
        // Subtree sums, heap order: node i has children 2i and 2i + 1.
        let mut sums = vec![0u64; 2 * leaves];
        for (i, &c) in counts.iter().enumerate() {
            sums[leaves + i] = c + 1;
        }
        for i in (1..leaves).rev() {
            sums[i] = sums[2 * i] + sums[2 * i + 1];
        }
        let p0 = (0..leaves)
            .map(|i| {
                if i == 0 || sums[i] == 0 {
                    return 1024;
                }
                (sums[2 * i] * 2048).div_ceil(sums[i]).clamp(1, 2047) as u16
            })
            .collect();
        Some(LabelPrior { depth, p0, labels })
    }

    /// Codes `label` into `out`.
    pub(crate) fn encode(&self, label: u32, out: &mut crate::coder::BinaryEncoder) {
        let mut node = 1usize;
        for i in (0..self.depth).rev() {
            let bit = label >> i & 1 == 1;
            out.encode_bit(
                &mut crate::coder::BitModel::fixed(u32::from(self.p0[node])),
                bit,
            );
            node = 2 * node + usize::from(bit);
        }
    }

    /// Decodes a label from `input`; `None` for a number past the labels
    /// (damaged data).
    pub(crate) fn decode(&self, input: &mut crate::coder::BinaryDecoder<'_>) -> Option<u32> {
        let mut node = 1usize;
        let mut label = 0u32;
        for _ in 0..self.depth {
            let bit =
                input.decode_bit(&mut crate::coder::BitModel::fixed(u32::from(self.p0[node])));
            label = label << 1 | u32::from(bit);
            node = 2 * node + usize::from(bit);
        }
        (label < self.labels).then_some(label)
    }
}

/// The hash that archives record of `table` and a prior's file `text`
/// together: FNV-1a of the table's hash (8 bytes LE) and the file.
fn prior_hash(table: &OpeningTable, text: &str) -> u64 {
    let mut bytes = table.hash().to_le_bytes().to_vec();
    bytes.extend_from_slice(text.as_bytes());
    fnv1a(&bytes)
}

/// The number of rating bands ([`rating_band`]) that archives have a label
/// prior each for.
pub(crate) const RATING_BANDS: usize = 5;

/// A game's rating band from its players' Elos (the mean of both, or the
/// one given): below 1400, 1400–1799, 1800–2199, 2200 and up, or 4 for
/// neither.
pub(crate) fn rating_band(elos: [Option<i64>; 2]) -> usize {
    let elo = match elos {
        [Some(w), Some(b)] => (w + b) / 2,
        [Some(e), None] | [None, Some(e)] => e,
        [None, None] => return 4,
    };
    match elo {
        ..1400 => 0,
        1400..1800 => 1,
        1800..2200 => 2,
        _ => 3,
    }
}

/// A label prior for each rating band ([`rating_band`]): an archive
/// codes a game's label with that of the band its `WhiteElo` and
/// `BlackElo` tags before the label give (`openings-prior-bands.txt`: a
/// line a label in the table's order, a count a band on each, written by
/// `chesspack train opening-prior --bands`).
pub(crate) struct BandPriors {
    bands: Vec<LabelPrior>,
    hash: u64,
}

/// The priors by rating band of lichess's table.
static BUILTIN_LICHESS_BAND_PRIORS: &str = include_str!("openings-lichess-prior-bands.txt");

impl BandPriors {
    fn new(table: &OpeningTable, text: &str) -> Option<BandPriors> {
        // The counts read a byte at a time: `str::parse` on the words of
        // the 3,330 lines cost every process that decodes a game 6.7 M
        // instructions (issue 68).
        let mut rows: Vec<[u64; RATING_BANDS]> = Vec::new();
        for line in text.lines() {
            let mut row = [0u64; RATING_BANDS];
            let mut words = 0;
            let mut in_word = false;
            for &b in line.as_bytes() {
                if b.is_ascii_digit() {
                    if !in_word {
                        words += 1;
                        in_word = true;
                    }
                    let count = row.get_mut(words - 1)?;
                    *count = count.checked_mul(10)?.checked_add(u64::from(b - b'0'))?;
                } else if b.is_ascii_whitespace() {
                    in_word = false;
                } else {
                    return None;
                }
            }
            if words != RATING_BANDS {
                return None;
            }
            rows.push(row);
        }
        let hash = prior_hash(table, text);
        let bands = (0..RATING_BANDS)
            .map(|b| {
                let counts: Vec<u64> = rows.iter().map(|r| r[b]).collect();
                LabelPrior::of_counts(table, &counts)
            })
            .collect::<Option<Vec<_>>>()?;
        Some(BandPriors { bands, hash })
    }

    /// The prior of rating band `band` ([`rating_band`]).
    pub(crate) fn band(&self, band: usize) -> &LabelPrior {
        &self.bands[band.min(RATING_BANDS - 1)]
    }

    /// The hash of the table and the priors' file together, which archive
    /// headers record (with more).
    pub(crate) fn hash(&self) -> u64 {
        self.hash
    }
}

/// How often each opening of the shipped table is the opening
/// ([`OpeningTable::predict`]) of the games `games` (start, moves): the
/// counts of a prior (one count a line in the table's order of
/// openings), and the number of games counted (those the table names an
/// opening of).
#[cfg(feature = "train")]
pub(crate) fn opening_prior(games: impl IntoIterator<Item = (Chess, Vec<Move>)>) -> (String, u64) {
    let table = OpeningTable::lichess();
    let mut counts = vec![0u64; table.labels.len()];
    for (start, moves) in games {
        if let Some((l, _)) = table.predict_label(&start, &moves) {
            counts[l as usize] += 1;
        }
    }
    let text = counts.iter().map(|c| format!("{c}\n")).collect();
    (text, counts.iter().sum())
}

/// [`opening_prior`] by rating band: how often each opening of the shipped
/// table is the opening of the games `games` (their players' Elos, start,
/// moves) of each band (below 1400, 1400–1799, 1800–2199, 2200 and up, no
/// Elo: the mean of both, or the one given), one line a label with a count
/// a band (`openings-lichess-prior-bands.txt`, which archives code each
/// game's opening with), and the number of games counted.
#[cfg(feature = "train")]
pub(crate) fn opening_prior_bands(
    games: impl IntoIterator<Item = ([Option<i64>; 2], Chess, Vec<Move>)>,
) -> (String, u64) {
    let table = OpeningTable::lichess();
    let none = table.none_label();
    let mut counts = vec![[0u64; RATING_BANDS]; table.labels.len() + usize::from(none.is_some())];
    let mut counted = 0;
    for (elos, start, moves) in games {
        // Games the table names no opening of count for the label that
        // says so.
        if let Some(l) = table.predict_label(&start, &moves).map(|p| p.0).or(none) {
            counts[l as usize][rating_band(elos)] += 1;
            counted += 1;
        }
    }
    let text = counts
        .iter()
        .map(|c| {
            let c: Vec<String> = c.iter().map(u64::to_string).collect();
            c.join(" ") + "\n"
        })
        .collect();
    (text, counted)
}

/// Builds an [`OpeningTable`] from games that carry `ECO` and `Opening`
/// tags.
#[cfg(feature = "train")]
#[derive(Default)]
pub(crate) struct TableBuilder {
    labels: Vec<(String, String)>,
    ids: HashMap<(String, String), u32>,
    /// Each game's position hashes and label.
    games: Vec<(Vec<u64>, u32)>,
}

#[cfg(feature = "train")]
impl TableBuilder {
    /// Adds a game from the standard start with its tags (others, and
    /// games whose tags are `?` or empty, are left out).
    pub(crate) fn add(&mut self, start: &Chess, moves: &[Move], eco: &str, name: &str) {
        if position_hash(start) != position_hash(&Chess::default())
            || [eco, name].iter().any(|t| t.is_empty() || *t == "?")
        {
            return;
        }
        let key = (eco.to_owned(), name.to_owned());
        let next = self.labels.len() as u32;
        let label = *self.ids.entry(key.clone()).or_insert_with(|| {
            self.labels.push(key);
            next
        });
        let mut pos = start.clone();
        let mut hashes = Vec::with_capacity(MAX_PLY);
        for &m in moves.iter().take(MAX_PLY) {
            if !pos.is_legal(m) {
                break;
            }
            pos.play_unchecked(m);
            let h = position_hash(&pos);
            // A position repeated within the game counts once.
            if hashes.contains(&h) {
                continue;
            }
            hashes.push(h);
        }
        self.games.push((hashes, label));
    }

    /// Games added.
    pub(crate) fn games(&self) -> usize {
        self.games.len()
    }

    /// The table. For each opening (ECO code and name), the deepest
    /// position that the most of its games reached is listed, then the same
    /// among its games that do not reach that one, while at least
    /// `min_games` games reach it; a position listed for two openings names
    /// the one more games reached. Then a position is dropped when more
    /// training games would be named wrong than right through it.
    pub(crate) fn finish(self, min_games: u32) -> OpeningTable {
        let min_games = min_games.max(1);
        let mut by_label: Vec<Vec<usize>> = vec![Vec::new(); self.labels.len()];
        for (i, (_, label)) in self.games.iter().enumerate() {
            by_label[*label as usize].push(i);
        }
        // (hash, games, label) candidates.
        let mut candidates: Vec<(u64, u32, u32)> = Vec::new();
        for (label, games) in by_label.iter().enumerate() {
            let mut remaining = games.clone();
            while remaining.len() >= min_games as usize {
                let mut counts: HashMap<u64, (u32, usize)> = HashMap::new();
                for &g in &remaining {
                    for (depth, &h) in self.games[g].0.iter().enumerate() {
                        let c = counts.entry(h).or_insert((0, depth));
                        c.0 += 1;
                        c.1 = c.1.min(depth);
                    }
                }
                let Some((&h, &(n, _))) = counts
                    .iter()
                    .max_by_key(|&(&h, &(n, depth))| (n, depth, std::cmp::Reverse(h)))
                else {
                    break;
                };
                if n < min_games {
                    break;
                }
                candidates.push((h, n, label as u32));
                remaining.retain(|&g| !self.games[g].0.contains(&h));
            }
        }
        // One label a position: the one most games reached it with.
        candidates.sort_unstable_by_key(|&(h, n, label)| (h, std::cmp::Reverse(n), label));
        candidates.dedup_by_key(|c| c.0);
        let mut entries: HashMap<u64, u32> = candidates.iter().map(|&(h, _, l)| (h, l)).collect();
        // Drop positions that name more training games wrong than right.
        let mut tally: HashMap<u64, (u32, u32)> = HashMap::new();
        for (hashes, label) in &self.games {
            if let Some(h) = hashes.iter().rev().find(|h| entries.contains_key(h)) {
                let t = tally.entry(*h).or_default();
                if entries[h] == *label {
                    t.0 += 1;
                } else {
                    t.1 += 1;
                }
            }
        }
        entries.retain(|h, _| tally.get(h).is_some_and(|&(right, wrong)| right >= wrong));
        // Only labels that some position names, in the order first seen.
        let mut used: Vec<u32> = entries.values().copied().collect();
        used.sort_unstable();
        used.dedup();
        let mut remap = vec![u32::MAX; self.labels.len()];
        for (new, &old) in used.iter().enumerate() {
            remap[old as usize] = new as u32;
        }
        let labels = used
            .iter()
            .map(|&old| self.labels[old as usize].clone())
            .collect();
        let entries = entries
            .into_iter()
            .map(|(h, l)| (h, remap[l as usize]))
            .collect();
        OpeningTable::new(labels, entries, None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rating_bands_split_at_1400_1800_and_2200() {
        for (elos, band) in [
            ([Some(1399), None], 0),
            ([None, Some(1400)], 1),
            ([Some(1500), Some(2099)], 1),
            ([Some(1500), Some(2100)], 2),
            ([Some(2199), Some(2200)], 2),
            ([Some(2200), Some(2201)], 3),
            ([Some(2850), Some(2850)], 3),
            ([None, None], 4),
        ] {
            assert_eq!(rating_band(elos), band, "{elos:?}");
        }
        // Each band's prior codes every label back.
        let table = OpeningTable::lichess();
        let priors = table
            .band_priors()
            .expect("the shipped priors match the table");
        for band in 0..RATING_BANDS {
            let mut enc = crate::coder::BinaryEncoder::new();
            for l in 0..table.labels.len() as u32 {
                priors.band(band).encode(l, &mut enc);
            }
            let all = enc.finish();
            let mut dec = crate::coder::BinaryDecoder::new(&all);
            for l in 0..table.labels.len() as u32 {
                assert_eq!(priors.band(band).decode(&mut dec), Some(l));
            }
        }
    }

    /// Issue 68: the priors' counts read a byte at a time are those that
    /// `str::parse` reads, and a line that is not five counts is refused.
    #[test]
    fn regression_issue_68_band_priors_read_as_parse_reads_them() {
        let table = OpeningTable::lichess();
        let priors = table.band_priors().expect("the shipped priors");
        let rows: Vec<Vec<u64>> = BUILTIN_LICHESS_BAND_PRIORS
            .lines()
            .map(|l| l.split_whitespace().map(|c| c.parse().unwrap()).collect())
            .collect();
        for band in 0..RATING_BANDS {
            let counts: Vec<u64> = rows.iter().map(|r| r[band]).collect();
            let prior = LabelPrior::of_counts(table, &counts).unwrap();
            assert_eq!(priors.band(band).p0, prior.p0, "band {band}");
        }
        let lines = BUILTIN_LICHESS_BAND_PRIORS.lines().count();
        let with = |last: &str| {
            let mut text: String = BUILTIN_LICHESS_BAND_PRIORS
                .lines()
                .take(lines - 1)
                .flat_map(|l| [l, "\n"])
                .collect();
            text.push_str(last);
            BandPriors::new(table, &text)
        };
        assert!(with(" 1\t2 3  4 5 ").is_some());
        for bad in [
            "1 2 3 4",
            "1 2 3 4 5 6",
            "1 2 3 4 x",
            "1 2 -3 4 5",
            "",
            "1 2 3 4 99999999999999999999",
        ] {
            assert!(with(bad).is_none(), "{bad:?}");
        }
    }

    #[test]
    fn an_aim_never_rules_out_the_moves_to_the_opening_and_they_cost_less() {
        let table = OpeningTable::lichess();
        aim_keeps_the_way(table);
        assert!(Aim::new(OpeningTable::lichess(), u32::MAX).is_none());
    }

    fn aim_keeps_the_way(table: &'static OpeningTable) {
        use crate::game::{GameCodec, ModelCodec};
        let pgn = "1. e4 c5 2. Nf3 d6 3. d4 cxd4 4. Nxd4 Nf6 5. Nc3 a6 6. Be2 e5 *\n\n\
                   1. d4 Nf6 2. c4 e6 3. Nc3 Bb4 4. e3 O-O 5. Bd3 d5 *\n\n\
                   1. Nf3 d5 2. g3 Nf6 3. Bg2 c6 4. O-O Bg4 *\n";
        let (mut plain, mut aimed) = (0, 0);
        for game in crate::pgn::GameReader::new(pgn.as_bytes()) {
            let g = game.unwrap();
            let (label, _) = table.predict_label(&g.start, &g.moves).unwrap();
            // Before the game reaches its opening, its moves keep it in reach.
            let mut aim = Aim::new(table, label).unwrap();
            let mut pos = g.start.clone();
            for &m in &g.moves {
                if aim.visit(&pos) {
                    let legal = pos.legal_moves();
                    let mut scores = vec![0; legal.len()];
                    aim.adjust(&pos, &legal, &mut scores);
                    let i = legal.iter().position(|&x| x == m).unwrap();
                    assert!(scores[i] >= 0, "{m:?} ruled out");
                }
                pos.play_unchecked(m);
            }
            for codec in [ModelCodec::fast(), ModelCodec::new()] {
                let to = codec.aimed_at(table, label).unwrap();
                let bits = to.encode_counted(&g.start, &g.moves).unwrap();
                assert_eq!(
                    to.decode_counted(&g.start, &bits, g.moves.len()).unwrap(),
                    g.moves
                );
                plain += codec.encode_counted(&g.start, &g.moves).unwrap().len();
                aimed += bits.len();
            }
        }
        assert!(aimed + 12 < plain, "{aimed} bits aimed, {plain} not");
    }

    #[test]
    fn bytes_round_trip_and_damage_is_an_error() {
        let table = OpeningTable::from_tsv("eco\tname\tpgn\nA00\tPolish Opening\t1. b4\n").unwrap();
        let bytes = table.to_bytes();
        let back = OpeningTable::from_bytes(&bytes).unwrap();
        assert_eq!(back, table);
        assert_eq!(back.hash(), fnv1a(&bytes));
        for cut in 0..bytes.len() {
            assert!(OpeningTable::from_bytes(&bytes[..cut]).is_err());
        }
        // A line of no plies (version 2), a label out of bounds (version 1).
        let mut bad = bytes.clone();
        *bad.last_mut().unwrap() = 0;
        assert!(OpeningTable::from_bytes(&bad).is_err());
        let v1 = OpeningTable::new(table.labels.clone(), table.entries.clone(), None);
        let bytes = v1.to_bytes();
        assert_eq!(OpeningTable::from_bytes(&bytes).unwrap(), v1);
        assert_eq!(crate::le::u32_at(&bytes, 4), VERSION);
        let mut bad = bytes.clone();
        *bad.last_mut().unwrap() = 9;
        assert!(OpeningTable::from_bytes(&bad).is_err());
    }

    /// Lichess's rule (issue 57): a position with fewer than the table's
    /// least number of pieces, and every later one, names nothing.
    #[test]
    fn regression_issue_57_positions_with_too_few_pieces_name_nothing() {
        let mut table = OpeningTable::from_tsv(
            "eco\tname\tpgn\nB01\tScandinavian Defense\t1. e4 d5\n\
             B01\tScandinavian Defense: Main Line\t1. e4 d5 2. exd5\n\
             B01\tScandinavian Defense: Queen\t1. e4 d5 2. exd5 Qxd5 3. Nc3\n",
        )
        .unwrap();
        let game = crate::pgn::GameReader::new(&b"1. e4 d5 2. exd5 Qxd5 3. Nc3 *"[..])
            .next()
            .unwrap()
            .unwrap();
        let named = |t: &OpeningTable| {
            t.classify(&game.start, &game.moves)
                .map(|o| (o.name.to_owned(), o.ply))
        };
        let queen = ("Scandinavian Defense: Queen".to_owned(), 5);
        assert_eq!(named(&table), Some(queen));
        // 31 pieces after 2. exd5, 30 after 2... Qxd5.
        table.min_pieces = 31;
        let main_line = ("Scandinavian Defense: Main Line".to_owned(), 3);
        assert_eq!(named(&table), Some(main_line));
        table.min_pieces = 32;
        assert_eq!(named(&table), Some(("Scandinavian Defense".to_owned(), 2)));
        // A table that lists the same position twice names it by its last
        // line, as lichess's does.
        let twice =
            OpeningTable::from_tsv("eco\tname\tpgn\nC20\tFirst\t1. e4 e5\nC20\tSecond\t1. e4 e5\n")
                .unwrap();
        let game = crate::pgn::GameReader::new(&b"1. e4 e5 *"[..])
            .next()
            .unwrap()
            .unwrap();
        let o = twice.classify(&game.start, &game.moves).unwrap();
        assert_eq!((o.name, o.ply), ("Second", 2));
    }

    #[test]
    fn tsv_errors_name_the_line() {
        let e = OpeningTable::from_tsv("eco\tname\tpgn\nA00\tX\t1. e5\n").unwrap_err();
        assert!(e.to_string().contains("line 2"), "{e}");
        assert!(OpeningTable::from_tsv("A00\tX\n").is_err());
    }

    #[test]
    fn builtin_tables_load() {
        assert_eq!(OpeningTable::lichess().hash(), fnv1a(LICHESS));
        assert_eq!(OpeningTable::lichess().min_pieces, MIN_PIECES);
    }
}

/// The examples of crate-private items, run as unit tests.
#[cfg(test)]
mod examples {
    #[test]
    fn example_opening() {
        use crate::opening::OpeningTable;
        use shakmaty::{Chess, Position, san::San};

        let table = OpeningTable::from_tsv(
            "eco\tname\tpgn\nC20\tKing's Pawn Game\t1. e4 e5\nC40\tKing's Knight Opening\t1. e4 e5 2. Nf3\n",
        )
        .unwrap();
        let mut pos = Chess::default();
        let mut moves = Vec::new();
        for san in ["e4", "e5", "Nf3", "Nc6", "Bc4"] {
            let m = san.parse::<San>().unwrap().to_move(&pos).unwrap();
            pos.play_unchecked(m);
            moves.push(m);
        }
        let opening = table.predict(&Chess::default(), &moves).unwrap();
        assert_eq!(
            (opening.eco, opening.name),
            ("C40", "King's Knight Opening")
        );
        assert_eq!(
            table.predict(&Chess::default(), &moves[..2]).unwrap().eco,
            "C20"
        );
        assert!(table.predict(&Chess::default(), &moves[..1]).is_none());
    }
}

/// Issue 40: the walk that lets a reader stop decoding early.
#[cfg(test)]
mod walk_tests {
    use super::*;

    /// The positions file matches the shipped table position for position
    /// (or no walk would stop early).
    #[test]
    fn the_shipped_positions_are_the_tables() {
        let table = OpeningTable::lichess();
        let reach = table.reach().expect("the positions file matches the table");
        assert_eq!(reach.len(), table.entries.len());
        assert!(reach.check(), "every line gives its position");
        // A file for another table is refused: lines too many, or a line
        // of another position.
        let other = OpeningTable::from_tsv("eco\tname\tpgn\nA00\tPolish Opening\t1. b4\n").unwrap();
        assert!(Reach::new(&other, LICHESS_POSITIONS).is_none());
        let wrong = Reach::new(
            &other,
            "rnbqkbnr/pppppppp/8/8/1P6/8/P1PPPPPP/RNBQKBNR w KQkq -\n",
        )
        .unwrap();
        assert!(!wrong.check());
        assert!(wrong.listed(0).is_none());
        let right = Reach::new(
            &other,
            "rnbqkbnr/pppppppp/8/8/1P6/8/P1PPPPPP/RNBQKBNR b KQkq -\n",
        )
        .unwrap();
        assert!(right.check());
    }

    /// A listed position's pawns each need a pawn of the game's own that
    /// can reach its square: distinct pawns, found by augmenting paths.
    #[test]
    fn pawns_are_matched_one_to_one() {
        use Square::*;
        let cones = OpeningTable::lichess()
            .reach()
            .expect("the shipped reach")
            .cones;
        let bb = |squares: &[Square]| squares.iter().fold(Bitboard::EMPTY, |b, &s| b.with(s));
        let white = |have: &[Square], want: &[Square]| pawns_match(bb(have), bb(want), &cones[0]);
        assert!(white(&[D2, E2], &[D4, E4]));
        assert!(
            !white(&[E4], &[D4]),
            "no pawn goes aside without going forward"
        );
        assert!(!white(&[D2], &[D4, E4]), "one pawn cannot be two");
        // d2 to d4 and e2 takes on d3: the first pawn tried for d3 (d2)
        // must give way.
        assert!(white(&[D2, E2], &[D3, D4]));
        assert!(white(&[C2, D2], &[D3, D4]));
        assert!(
            !white(&[D2, E3], &[D3, E2]),
            "e3 cannot go back to e2, nor d2 aside"
        );
        let black = |have: &[Square], want: &[Square]| pawns_match(bb(have), bb(want), &cones[1]);
        assert!(black(&[D7, E7], &[D5, E6]));
        assert!(!black(&[D5], &[D6]));
    }

    /// Random games, biased to the moves of listed positions: each ply
    /// picks, half the time, a move to a listed position.
    fn biased_games(table: &'static OpeningTable, n: usize) -> Vec<Vec<Move>> {
        crate::testing::games_toward(
            0x9e37_79b9_7f4a_7c15,
            n,
            60,
            |p| table.get(p).is_some(),
            |g, state| g % 3 == 0 || crate::hash::xorshift(state) % 10 < 7,
        )
    }

    /// A walk's filterings are the same kept or worked out: walks of a
    /// generation of filterings that has gone filter for themselves, and
    /// give, move by move, the candidates of a walk that finds the
    /// filterings kept (its second time) or keeps them (its first).
    #[test]
    fn regression_issue_40_kept_filterings_are_the_filterings() {
        let table = OpeningTable::lichess();
        kept_filterings(table);
    }

    fn kept_filterings(table: &'static OpeningTable) {
        let h = table.hash;
        let new_generation = || {
            with_filterings(h, |f| {
                *f = Filterings {
                    generation: f.generation + 1,
                    ..Filterings::default()
                }
            })
        };
        let (mut kept, mut steps) = (0, 0);
        for moves in biased_games(table, 2000) {
            // `alone` filters for itself: its generation goes.
            let mut alone = table.walk(&Chess::default());
            new_generation();
            let mut first = table.walk(&Chess::default());
            let mut again = table.walk(&Chess::default());
            for &m in &moves {
                if !alone.goes_on() {
                    break;
                }
                for w in [&mut alone, &mut first] {
                    w.play(m);
                }
                let before = with_filterings(h, |f| f.sets.len());
                again.play(m);
                kept += usize::from(with_filterings(h, |f| f.sets.len()) == before);
                steps += 1;
                assert_eq!(alone.candidates.positions, first.candidates.positions);
                assert_eq!(alone.candidates.positions, again.candidates.positions);
                assert_eq!(alone.goes_on(), again.goes_on());
                assert_ne!(
                    alone.candidates.generation,
                    with_filterings(h, |f| f.generation)
                );
                assert_eq!(again.candidates.id, first.candidates.id);
            }
            assert_eq!(alone.named(), table.classify(&Chess::default(), &moves));
        }
        assert_eq!(kept, steps);
    }

    /// The walk finds what `predict` finds, on every game (random games
    /// that go from listed position to listed position most of the time,
    /// so that a position dropped while still reachable would show), and
    /// stops before the table's 40 plies on most of them.
    #[test]
    fn the_walk_finds_what_predict_finds() {
        let table = OpeningTable::lichess();
        walk_finds_what_predict_finds(table);
    }

    fn walk_finds_what_predict_finds(table: &'static OpeningTable) {
        let (mut stopped_early, mut games) = (0, 0);
        for (g, moves) in biased_games(table, 3000).into_iter().enumerate() {
            let mut walk = table.walk(&Chess::default());
            let mut played = 0;
            for &m in &moves {
                if !walk.goes_on() {
                    break;
                }
                walk.play(m);
                played += 1;
            }
            assert_eq!(
                walk.named(),
                table.classify(&Chess::default(), &moves),
                "game {g}"
            );
            games += 1;
            stopped_early += usize::from(played < MAX_PLY);
        }
        assert!(stopped_early > games / 2, "{stopped_early} of {games}");
    }
}

/// The examples of the training code, run as unit tests (the items are
/// crate-private: `train::fit` is their public door).
#[cfg(all(test, feature = "train"))]
mod train_examples {
    #[test]
    fn example_opening_prior() {
        use crate::opening::opening_prior;
        use crate::pgn::GameReader;

        let pgn = b"1. e4 e5 2. Nf3 Nc6 *\n\n1. d4 d5 *\n\n[FEN \"4k3/8/8/8/8/8/8/4K3 w - - 0 1\"]\n\n*\n";
        let games = GameReader::new(&pgn[..])
            .map(|g| g.unwrap())
            .map(|g| (g.start, g.moves));
        let (text, counted) = opening_prior(games);
        assert_eq!(counted, 2);
        assert_eq!(
            text.lines().map(|l| l.parse::<u64>().unwrap()).sum::<u64>(),
            2
        );
    }

    #[test]
    fn example_opening_prior_bands() {
        use crate::opening::opening_prior_bands;
        use crate::pgn::GameReader;

        let pgn =
            b"[WhiteElo \"2500\"]\n[BlackElo \"2400\"]\n\n1. e4 e5 2. Nf3 Nc6 *\n\n1. d4 d5 *\n";
        let games = GameReader::new(&pgn[..]).map(|g| g.unwrap()).map(|g| {
            let elo = |t: &str| g.tag(t).and_then(|v| v.parse().ok());
            (
                [elo("WhiteElo"), elo("BlackElo")],
                g.start.clone(),
                g.moves.clone(),
            )
        });
        let (text, counted) = opening_prior_bands(games);
        assert_eq!(counted, 2);
        let sums = text.lines().fold([0u64; 5], |mut s, l| {
            for (s, c) in s.iter_mut().zip(l.split(' ')) {
                *s += c.parse::<u64>().unwrap();
            }
            s
        });
        assert_eq!(sums, [0, 0, 0, 1, 1]);
    }

    #[test]
    fn example_table_builder() {
        use crate::opening::TableBuilder;
        use crate::pgn::GameReader;

        let pgn = "[ECO \"B00\"]\n[Opening \"King's Pawn Game\"]\n\n1. e4 Nc6 *\n\n\
                   [ECO \"B00\"]\n[Opening \"King's Pawn Game\"]\n\n1. e4 Nc6 2. d4 *\n\n\
                   [ECO \"C20\"]\n[Opening \"King's Pawn Game\"]\n\n1. e4 e5 *\n";
        let mut b = TableBuilder::default();
        for game in GameReader::new(pgn.as_bytes()) {
            let game = game.unwrap();
            b.add(
                &game.start,
                &game.moves,
                game.tag("ECO").unwrap(),
                game.tag("Opening").unwrap(),
            );
        }
        let table = b.finish(2);
        // 1. e4 Nc6: two games, both B00; 1. e4 leads to two openings.
        assert_eq!(table.len(), 1);
        let game = GameReader::new(&b"1. e4 Nc6 2. Nf3 *"[..])
            .next()
            .unwrap()
            .unwrap();
        assert_eq!(table.classify(&game.start, &game.moves).unwrap().eco, "B00");
    }
}
