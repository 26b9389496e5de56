//! The native part of the `chesspack` Python package: single games and
//! positions as records (`chesspack::record`), Arrow batches coded on all
//! cores with the GIL released, and archives.
//!
//! The Python package (`python/chesspack/`) wraps these functions with
//! python-chess conversions, progress bars and docstrings; this module takes
//! and gives plain values (strings, bytes, Arrow arrays).

use chesspack::pgn::Notation;
use pyo3::{create_exception, exceptions::PyValueError, prelude::*, types::PyBytes};
use shakmaty::Chess;

mod archive;
mod batch;
mod positions;
mod rows;
mod search;
mod training;

create_exception!(
    chesspack,
    ChesspackError,
    PyValueError,
    "Base class of chesspack's errors (a ValueError)."
);
create_exception!(
    chesspack,
    DecodeError,
    ChesspackError,
    "Bytes that are not a valid stream, record or archive (damaged, truncated, another codec or model)."
);
create_exception!(
    chesspack,
    IllegalMove,
    ChesspackError,
    "A move that is not legal, or not a move, where it is played."
);
create_exception!(
    chesspack,
    InvalidPosition,
    ChesspackError,
    "A FEN that is not a legal position, or a position a codec cannot write."
);
create_exception!(
    chesspack,
    UnknownCodec,
    ChesspackError,
    "No codec has that name."
);

/// The Python exception for a library error.
pub(crate) fn to_py(e: chesspack::Error) -> PyErr {
    use chesspack::Error as E;
    let msg = e.to_string();
    match e {
        E::IllegalMove { .. } | E::UnreadableMove { .. } => IllegalMove::new_err(msg),
        E::InvalidPosition(_) | E::Unrepresentable(_) => InvalidPosition::new_err(msg),
        E::UnknownCodec(_) => UnknownCodec::new_err(msg),
        _ => DecodeError::new_err(msg),
    }
}

/// The start position of a game: standard when `fen` is `None`; a FEN in
/// standard, X-FEN or Shredder-FEN castling, read with standard castling
/// when it allows (UCI castling as `e1g1`), else, or when the castling
/// field names rook files, as Chess960 (`e1h1`).
pub(crate) fn start_of(fen: Option<&str>) -> Result<Chess, chesspack::Error> {
    match fen {
        None => Ok(Chess::default()),
        Some(f) if f.trim().is_empty() => Ok(Chess::default()),
        // Shredder-FEN castling files (`HAha`, as python-chess writes a
        // Chess960 board) ask for Chess960.
        Some(f)
            if f.split_ascii_whitespace()
                .nth(2)
                .is_some_and(|c| c.bytes().any(|b| matches!(b, b'A'..=b'H' | b'a'..=b'h'))) =>
        {
            chesspack::position::parse_fen(f)
        }
        Some(f) => chesspack::pgn::start_position(None, Some(f))
            .or_else(|_| chesspack::position::parse_fen(f)),
    }
}

/// A game codec by name, with the error Python sees.
pub(crate) fn game_codec(name: &str) -> PyResult<Box<dyn chesspack::game::GameCodec>> {
    chesspack::game::codec(name).map_err(to_py)
}

/// `codec` in the context that a game's tags give (ratings, time control)
/// and its clock after each ply (seconds), for codecs that read it
/// (`model`).
fn in_context_with_clocks<N: AsRef<[u8]>, V: AsRef<[u8]>>(
    codec: Box<dyn chesspack::game::GameCodec>,
    tags: impl IntoIterator<Item = (N, V)>,
    clocks: Vec<Option<u32>>,
) -> Box<dyn chesspack::game::GameCodec> {
    let context = chesspack::model::GameContext::from_tags(tags).with_clocks(clocks);
    codec.in_context(&context)
}

/// The moves of a game given as a movetext string or as a list of SAN/UCI
/// strings.
#[derive(FromPyObject)]
enum MovesIn {
    Text(String),
    List(Vec<String>),
}

/// Moves of a game, as one movetext or a list of SAN/UCI moves, from `start`.
pub(crate) fn moves_of(
    moves: &MovesIn,
    start: &Chess,
) -> Result<Vec<shakmaty::Move>, chesspack::Error> {
    match moves {
        MovesIn::Text(t) => chesspack::pgn::movetext_moves(t.as_bytes(), start),
        MovesIn::List(l) => chesspack::pgn::text_moves(l, start),
    }
}

/// encode_game(moves, codec="model", start=None, tags=None) -> bytes
///
/// A game record: the moves (a movetext string, or a list of SAN/UCI
/// strings) played from `start` (a FEN, or the standard position), coded
/// in the context of the game's `tags` (name, value pairs: `model` reads
/// WhiteElo, BlackElo and TimeControl) and `clocks` (seconds on the
/// mover's clock after each ply, or None).
#[pyfunction]
#[pyo3(signature = (moves, codec = "model", start = None, tags = None, clocks = None))]
fn encode_game<'py>(
    py: Python<'py>,
    moves: MovesIn,
    codec: &str,
    start: Option<&str>,
    tags: Option<Vec<(String, String)>>,
    clocks: Option<Vec<Option<u32>>>,
) -> PyResult<Bound<'py, PyBytes>> {
    let codec = in_context_with_clocks(
        game_codec(codec)?,
        tags.unwrap_or_default(),
        clocks.unwrap_or_default(),
    );
    let bytes = py.detach(|| {
        let start = start_of(start)?;
        let moves = moves_of(&moves, &start)?;
        chesspack::record::encode_game(codec.as_ref(), &start, &moves)
    });
    Ok(PyBytes::new(py, &bytes.map_err(to_py)?))
}

/// decode_game(data, codec=None, start=None, uci=False, tags=None, clocks=None) -> list[str]
///
/// The moves of a game record, as SAN (or UCI) strings; `tags` and
/// `clocks` as the record was encoded with.
#[pyfunction]
#[pyo3(signature = (data, codec = None, start = None, uci = false, tags = None, clocks = None))]
fn decode_game(
    py: Python<'_>,
    data: &[u8],
    codec: Option<&str>,
    start: Option<&str>,
    uci: bool,
    tags: Option<Vec<(String, String)>>,
    clocks: Option<Vec<Option<u32>>>,
) -> PyResult<Vec<String>> {
    let name = chesspack::record::game_codec_name(data).map_err(to_py)?;
    if let Some(c) = codec {
        game_codec(c)?;
        if c != name {
            return Err(DecodeError::new_err(format!(
                "invalid data: game record of codec {name:?}, not {c:?}"
            )));
        }
    }
    let codec = in_context_with_clocks(
        game_codec(name)?,
        tags.unwrap_or_default(),
        clocks.unwrap_or_default(),
    );
    py.detach(|| {
        let start = start_of(start)?;
        let moves = chesspack::record::decode_game(codec.as_ref(), &start, data)?;
        Ok(chesspack::pgn::notate(
            &start,
            &moves,
            if uci { Notation::Uci } else { Notation::San },
        ))
    })
    .map_err(to_py)
}

/// record_codec(data) -> str
///
/// The name of the codec that wrote a game or position record.
#[pyfunction]
fn record_codec(data: &[u8]) -> PyResult<&'static str> {
    chesspack::record::game_codec_name(data)
        .or_else(|_| chesspack::record::position_codec_name(data))
        .map_err(|_| {
            DecodeError::new_err(match data.first() {
                Some(b) => format!("invalid data: not a chesspack record (tag byte {b:#04x})"),
                None => "invalid data: empty record".to_owned(),
            })
        })
}

/// encode_position(fen, codec="position-model") -> bytes
#[pyfunction]
#[pyo3(signature = (fen, codec = "position-model"))]
fn encode_position<'py>(py: Python<'py>, fen: &str, codec: &str) -> PyResult<Bound<'py, PyBytes>> {
    let c = chesspack::position::codec(codec).map_err(to_py)?;
    let pos = chesspack::position::parse_fen(fen).map_err(to_py)?;
    let bytes = chesspack::record::encode_position(c.as_ref(), &pos).map_err(to_py)?;
    Ok(PyBytes::new(py, &bytes))
}

/// decode_position(data, codec=None) -> str
///
/// The position of a position record as a FEN (halfmove clock 0, move 1:
/// the codecs store board, side to move, castling and en passant).
#[pyfunction]
#[pyo3(signature = (data, codec = None))]
fn decode_position(data: &[u8], codec: Option<&str>) -> PyResult<String> {
    let name = chesspack::record::position_codec_name(data).map_err(to_py)?;
    let c = chesspack::position::codec(codec.unwrap_or(name)).map_err(to_py)?;
    let pos = chesspack::record::decode_position(c.as_ref(), data).map_err(to_py)?;
    Ok(chesspack::position::to_fen(&pos))
}

/// codecs() -> (list[str], list[str])
///
/// The game codecs and the position codecs, by name.
#[pyfunction]
fn codecs() -> (Vec<&'static str>, Vec<&'static str>) {
    (
        chesspack::game::codecs().iter().map(|c| c.name()).collect(),
        chesspack::position::codecs()
            .iter()
            .map(|c| c.name())
            .collect(),
    )
}

/// classify_opening(moves, start=None) -> tuple[str, str, int] | None
///
/// The opening of a game as lichess names it (its opening table,
/// lichess-org/chess-openings): the ECO code, the name and the ply of the
/// named position, or None (no listed position, or a game from another
/// start). `moves` as for encode_game.
#[pyfunction]
#[pyo3(signature = (moves, start = None))]
fn classify_opening(
    py: Python<'_>,
    moves: MovesIn,
    start: Option<&str>,
) -> PyResult<Option<(String, String, usize)>> {
    py.detach(|| {
        let start = start_of(start)?;
        let moves = moves_of(&moves, &start)?;
        Ok(chesspack::opening::OpeningTable::lichess()
            .classify(&start, &moves)
            .map(|o| (o.eco.to_owned(), o.name.to_owned(), o.ply)))
    })
    .map_err(to_py)
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("ChesspackError", py.get_type::<ChesspackError>())?;
    m.add("DecodeError", py.get_type::<DecodeError>())?;
    m.add("IllegalMove", py.get_type::<IllegalMove>())?;
    m.add("InvalidPosition", py.get_type::<InvalidPosition>())?;
    m.add("UnknownCodec", py.get_type::<UnknownCodec>())?;
    m.add_function(wrap_pyfunction!(encode_game, m)?)?;
    m.add_function(wrap_pyfunction!(decode_game, m)?)?;
    m.add_function(wrap_pyfunction!(record_codec, m)?)?;
    m.add_function(wrap_pyfunction!(encode_position, m)?)?;
    m.add_function(wrap_pyfunction!(decode_position, m)?)?;
    m.add_function(wrap_pyfunction!(codecs, m)?)?;
    m.add_function(wrap_pyfunction!(classify_opening, m)?)?;
    batch::register(m)?;
    archive::register(m)?;
    training::register(m)?;
    Ok(())
}
