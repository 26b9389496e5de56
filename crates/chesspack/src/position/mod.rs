//! Position codecs: board, side to move, castling rights (Chess960 too) and a
//! legal en-passant square to bits and back.
//!
//! Positions are [`Chess`] values, validated by shakmaty (two kings, no pawns
//! on the back ranks, standard material, consistent castling rights and
//! checks). The halfmove clock and fullmove number are not stored: decoded
//! positions have 0 and 1. An en-passant square is kept only when an
//! en-passant capture is legal, as lichess writes FENs.

pub(crate) mod arith;
mod kingspawns;
pub(crate) mod model_codec;
mod packed;
pub mod rank;
mod usenet82;

pub use arith::Arith;
pub use kingspawns::KingsPawns;
pub use model_codec::PositionModel;
pub use packed::Packed;
pub use usenet82::Usenet82;

use shakmaty::{
    Bitboard, Board, CastlingMode, Chess, Color, EnPassantMode, FromSetup, Piece, Position, Role,
    Square,
    fen::{Epd, Fen},
};

use crate::{Bits, Error};

/// A codec for single positions.
///
/// ```
/// use chesspack::position::{PositionCodec, Usenet82, parse_fen, to_epd};
///
/// let pos = parse_fen("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1").unwrap();
/// let bits = Usenet82.encode(&pos).unwrap();
/// assert_eq!(to_epd(&Usenet82.decode(&bits).unwrap()), to_epd(&pos));
/// ```
pub trait PositionCodec: Send + Sync {
    /// The codec's name, as the CLI takes it.
    fn name(&self) -> &'static str;
    /// One line saying what the codec does.
    fn description(&self) -> &'static str;
    /// Encodes `pos`.
    ///
    /// # Errors
    ///
    /// [`Error::Unrepresentable`] when the scheme cannot write the position.
    fn encode(&self, pos: &Chess) -> Result<Bits, Error>;
    /// Decodes a position.
    ///
    /// # Errors
    ///
    /// Any error but a panic on data that is not a stream of this codec.
    fn decode(&self, bits: &Bits) -> Result<Chess, Error>;
}

/// Every position codec, in the order `chesspack codecs` lists them.
///
/// ```
/// let names: Vec<_> = chesspack::position::codecs().iter().map(|c| c.name()).collect();
/// assert_eq!(names, ["usenet82", "kingspawns", "arith", "packed", "position-model"]);
/// ```
pub fn codecs() -> Vec<Box<dyn PositionCodec>> {
    vec![
        Box::new(Usenet82),
        Box::new(KingsPawns),
        Box::new(Arith),
        Box::new(Packed),
        Box::new(PositionModel),
    ]
}

/// The position codec called `name`.
///
/// ```
/// assert!(chesspack::position::codec("packed").is_ok());
/// assert!(chesspack::position::codec("nope").is_err());
/// ```
pub fn codec(name: &str) -> Result<Box<dyn PositionCodec>, Error> {
    codecs()
        .into_iter()
        .find(|c| c.name() == name)
        .ok_or_else(|| Error::UnknownCodec(crate::error::cut(name)))
}

/// Parses a FEN or the first four fields of an EPD line into a legal
/// position. Castling rights may be standard, X-FEN or Shredder-FEN.
///
/// ```
/// use chesspack::position::parse_fen;
///
/// assert!(parse_fen("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1").is_ok());
/// assert!(parse_fen("8/8/8/8/8/8/8/8 w - -").is_err());
/// assert!(parse_fen("not a fen").is_err());
/// ```
///
/// # Errors
///
/// [`Error::InvalidPosition`] naming what is wrong.
pub fn parse_fen(text: &str) -> Result<Chess, Error> {
    let text = text.trim();
    let fields: Vec<&str> = text.split_ascii_whitespace().collect();
    let parsed = if fields.len() >= 6
        && fields[4].parse::<u32>().is_ok()
        && fields[5].parse::<u32>().is_ok()
    {
        Fen::from_ascii(fields[..6].join(" ").as_bytes()).map(Fen::into_setup)
    } else if fields.len() >= 4 {
        Epd::from_ascii(fields[..4].join(" ").as_bytes()).map(Epd::into_setup)
    } else {
        Fen::from_ascii(text.as_bytes()).map(Fen::into_setup)
    };
    let setup = parsed
        .map_err(|e| Error::InvalidPosition(format!("{e}: {:?}", crate::error::cut(text))))?;
    Chess::from_setup(setup, CastlingMode::Chess960)
        .map_err(|e| Error::InvalidPosition(e.to_string()))
}

/// The FEN strings of a position file, with their line numbers (from 1):
/// EPD or FEN lines, or a CSV whose header names a `FEN` column (as
/// lichess's puzzles); blank lines, lines starting with `#` and a byte
/// order mark are left out.
///
/// ```
/// use chesspack::position::fen_lines;
///
/// let csv = "PuzzleId,FEN,Moves\n00008,8/8/8/8/8/8/8/K1k5 w - - 0 1,a1a2\n";
/// let fens: Vec<_> = fen_lines(csv.as_bytes()).map(Result::unwrap).collect();
/// assert_eq!(fens, [(2, "8/8/8/8/8/8/8/K1k5 w - - 0 1".to_owned())]);
/// let epd = "# a comment\n\n8/8/8/8/8/8/8/K1k5 w - -\n";
/// let fens: Vec<_> = fen_lines(epd.as_bytes()).map(Result::unwrap).collect();
/// assert_eq!(fens, [(3, "8/8/8/8/8/8/8/K1k5 w - -".to_owned())]);
/// ```
///
/// # Errors
///
/// A read error of `reader`, as an item; a chesspack archive (told by its
/// first bytes) as one error first.
pub fn fen_lines(
    reader: impl std::io::BufRead,
) -> impl Iterator<Item = std::io::Result<(u64, String)>> {
    let mut column: Option<Option<usize>> = None;
    reader.lines().enumerate().filter_map(move |(i, line)| {
        let line = match line {
            Ok(l) => l,
            Err(e) => return Some(Err(e)),
        };
        if i == 0 && line.as_bytes().starts_with(crate::pgn::ARCHIVE_TELL) {
            return Some(Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "a chesspack archive, not positions text (`chesspack decompress` gives its positions)",
            )));
        }
        let line = line.trim_start_matches('\u{feff}').trim();
        if column.is_none() {
            let header: Vec<&str> = line.split(',').map(str::trim).collect();
            let fen = header.iter().position(|h| h.eq_ignore_ascii_case("fen"));
            column = Some(fen);
            if fen.is_some() {
                return None;
            }
        }
        if line.is_empty() || line.starts_with('#') {
            return None;
        }
        let fen = match column.flatten() {
            Some(c) => line.split(',').nth(c).unwrap_or("").to_owned(),
            None => line.to_owned(),
        };
        Some(Ok((i as u64 + 1, fen)))
    })
}

/// The four fields a position codec preserves (board, side to move,
/// castling, legal en-passant square), as an EPD string.
///
/// ```
/// use chesspack::position::{parse_fen, to_epd};
///
/// // e3 is dropped: no black pawn can take en passant.
/// let pos = parse_fen("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 1").unwrap();
/// assert_eq!(to_epd(&pos), "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq -");
/// ```
pub fn to_epd(pos: &Chess) -> String {
    Epd::from_position(pos, EnPassantMode::Legal).to_string()
}

/// The position as a full FEN (halfmove clock and fullmove number included).
pub fn to_fen(pos: &Chess) -> String {
    Fen::from_position(pos, EnPassantMode::Legal).to_string()
}

/// Content of the 64 squares, a1 = 0 … h8 = 63.
pub(crate) type Cells = [Option<Piece>; 64];

pub(crate) fn cells_of(board: &Board) -> Cells {
    std::array::from_fn(|i| board.piece_at(Square::new(i as u32)))
}

/// Builds and validates a position from decoded parts; `ep` is the square a
/// pawn may capture on, and must be legal.
pub(crate) fn assemble(
    cells: &Cells,
    turn: Color,
    castling_rights: Bitboard,
    ep: Option<Square>,
) -> Result<Chess, Error> {
    let mut board = Board::empty();
    for (i, cell) in cells.iter().enumerate() {
        if let Some(piece) = cell {
            board.set_piece_at(Square::new(i as u32), *piece);
        }
    }
    assemble_board(board, turn, castling_rights, ep)
}

/// [`assemble`] from a board.
pub(crate) fn assemble_board(
    board: Board,
    turn: Color,
    castling_rights: Bitboard,
    ep: Option<Square>,
) -> Result<Chess, Error> {
    let mut setup = shakmaty::Setup::empty();
    setup.board = board;
    setup.turn = turn;
    setup.castling_rights = castling_rights;
    setup.ep_square = ep;
    let pos = Chess::from_setup(setup, CastlingMode::Chess960)
        .map_err(|e| Error::InvalidPosition(e.to_string()))?;
    if ep.is_some() && pos.ep_square(EnPassantMode::Legal) != ep {
        return Err(Error::InvalidData(
            "en-passant square without a legal capture".into(),
        ));
    }
    Ok(pos)
}

/// The square of the pawn that can be taken en passant, when a capture is legal.
pub(crate) fn ep_pawn(pos: &Chess) -> Option<(Square, Square)> {
    let ep = pos.ep_square(EnPassantMode::Legal)?;
    let pawn = Square::from_coords(
        ep.file(),
        pos.turn()
            .fold_wb(shakmaty::Rank::Fifth, shakmaty::Rank::Fourth),
    );
    Some((ep, pawn))
}

/// The back rank of `color` (rank 1 for white).
pub(crate) fn back_rank(color: Color) -> shakmaty::Rank {
    color.fold_wb(shakmaty::Rank::First, shakmaty::Rank::Eighth)
}

pub(crate) fn king_square(cells: &Cells, color: Color) -> Result<Square, Error> {
    let mut kings = cells.iter().enumerate().filter(|(_, c)| {
        **c == Some(Piece {
            color,
            role: Role::King,
        })
    });
    let (i, _) = kings
        .next()
        .ok_or_else(|| Error::InvalidPosition(format!("no {color} king")))?;
    if kings.next().is_some() {
        return Err(Error::InvalidPosition(format!(
            "more than one {color} king"
        )));
    }
    Ok(Square::new(i as u32))
}

/// Reads the two 6-bit king squares (white first) that `usenet82` and
/// `kingspawns` start with, and a board holding just the kings.
pub(crate) fn read_kings(
    r: &mut crate::bits::BitReader<'_>,
) -> Result<(Square, Square, Cells), Error> {
    let wk = Square::new(r.read(6)? as u32);
    let bk = Square::new(r.read(6)? as u32);
    if wk == bk {
        return Err(Error::InvalidData("both kings on one square".into()));
    }
    let mut cells: Cells = [None; 64];
    cells[wk as usize] = Some(Piece {
        color: Color::White,
        role: Role::King,
    });
    cells[bk as usize] = Some(Piece {
        color: Color::Black,
        role: Role::King,
    });
    Ok((wk, bk, cells))
}
