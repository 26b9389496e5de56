//! `Archive.find` and `Archive.explore`: `chesspack::search` queries as
//! Arrow record batches.

use std::sync::Arc;

use arrow_array::{ArrayRef, RecordBatch, StringArray, UInt16Array, UInt32Array, UInt64Array};
use arrow_schema::{DataType, Field, Schema};
use chesspack::search::{self, Query};
use pyo3::{
    exceptions::{PyTypeError, PyValueError},
    prelude::*,
    types::PyDict,
};
use pyo3_arrow::PyRecordBatch;

/// The query of a dict of keyword arguments; an unknown key is an error.
pub(crate) fn query(d: &Bound<'_, PyDict>) -> PyResult<Query> {
    let mut q = Query::default();
    for (k, v) in d.iter() {
        let key: String = k.extract()?;
        if v.is_none() {
            continue;
        }
        match key.as_str() {
            "fen" => q.fen = Some(v.extract()?),
            "moves" => q.moves = Some(v.extract()?),
            "sub_fen" => q.sub_fen = v.extract()?,
            "material" => q.material = Some(v.extract()?),
            "imbalance" => q.imbalance = Some(v.extract()?),
            "white" => q.white = Some(v.extract()?),
            "black" => q.black = Some(v.extract()?),
            "player" => q.player = Some(v.extract()?),
            "min_elo" => q.min_elo = Some(v.extract()?),
            "max_elo" => q.max_elo = Some(v.extract()?),
            "result" => q.result = Some(v.extract()?),
            "from_date" => q.from = Some(v.extract()?),
            "to_date" => q.to = Some(v.extract()?),
            "event" => q.event = Some(v.extract()?),
            "eco" => q.eco = Some(v.extract()?),
            "opening" => q.opening = Some(v.extract()?),
            "speed" => q.speed = Some(v.extract()?),
            "threads" => q.threads = v.extract()?,
            other => {
                return Err(PyTypeError::new_err(format!(
                    "unknown query argument {other:?}"
                )));
            }
        }
    }
    Ok(q)
}

/// The games found, one row each: `game` from 0 as `Archive` numbers them.
pub(crate) fn hits_batch<'py>(
    py: Python<'py>,
    hits: &[search::Hit],
) -> PyResult<Bound<'py, PyAny>> {
    let text = |f: fn(&search::Hit) -> &str| -> ArrayRef {
        Arc::new(StringArray::from_iter_values(hits.iter().map(f)))
    };
    let schema = Schema::new(vec![
        Field::new("game", DataType::UInt64, false),
        Field::new("ply", DataType::UInt32, false),
        Field::new("white", DataType::Utf8, false),
        Field::new("black", DataType::Utf8, false),
        Field::new("white_elo", DataType::UInt16, true),
        Field::new("black_elo", DataType::UInt16, true),
        Field::new("result", DataType::Utf8, true),
        Field::new("date", DataType::Utf8, false),
        Field::new("event", DataType::Utf8, false),
        Field::new("eco", DataType::Utf8, false),
        Field::new("opening", DataType::Utf8, false),
    ]);
    let elo = |f: fn(&search::Hit) -> u16| -> ArrayRef {
        Arc::new(UInt16Array::from_iter(
            hits.iter().map(|h| Some(f(h)).filter(|&e| e > 0)),
        ))
    };
    let columns: Vec<ArrayRef> = vec![
        Arc::new(UInt64Array::from_iter_values(
            hits.iter().map(|h| h.game - 1),
        )),
        Arc::new(UInt32Array::from_iter_values(hits.iter().map(|h| h.ply))),
        text(|h| &h.white),
        text(|h| &h.black),
        elo(|h| h.white_elo),
        elo(|h| h.black_elo),
        Arc::new(StringArray::from_iter(
            hits.iter()
                .map(|h| Some(h.result).filter(|r| !r.is_empty())),
        )),
        text(|h| &h.date),
        text(|h| &h.event),
        text(|h| &h.eco),
        text(|h| &h.opening),
    ];
    let batch = RecordBatch::try_new(Arc::new(schema), columns)
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    PyRecordBatch::new(batch).into_pyarrow(py)
}

/// The explorer's moves, one row each, most played first.
pub(crate) fn moves_batch<'py>(
    py: Python<'py>,
    moves: &[search::MoveStats],
) -> PyResult<Bound<'py, PyAny>> {
    let count = |f: fn(&search::MoveStats) -> u64| -> ArrayRef {
        Arc::new(UInt64Array::from_iter_values(moves.iter().map(f)))
    };
    let game = |f: fn(&search::MoveStats) -> Option<(usize, u64)>| -> ArrayRef {
        Arc::new(UInt64Array::from_iter(
            moves.iter().map(|m| f(m).map(|(_, g)| g - 1)),
        ))
    };
    let schema = Schema::new(vec![
        Field::new("san", DataType::Utf8, false),
        Field::new("uci", DataType::Utf8, false),
        Field::new("games", DataType::UInt64, false),
        Field::new("white", DataType::UInt64, false),
        Field::new("draws", DataType::UInt64, false),
        Field::new("black", DataType::UInt64, false),
        Field::new("mean_rating", DataType::UInt32, true),
        Field::new("last_game", DataType::UInt64, true),
        Field::new("best_game", DataType::UInt64, true),
        Field::new("eco", DataType::Utf8, true),
        Field::new("opening", DataType::Utf8, true),
    ]);
    let columns: Vec<ArrayRef> = vec![
        Arc::new(StringArray::from_iter_values(moves.iter().map(|m| &m.san))),
        Arc::new(StringArray::from_iter_values(moves.iter().map(|m| &m.uci))),
        count(|m| m.games),
        count(|m| m.white),
        count(|m| m.draws),
        count(|m| m.black),
        Arc::new(UInt32Array::from_iter(moves.iter().map(|m| m.mean_rating))),
        game(|m| m.last_game),
        game(|m| m.best_game),
        Arc::new(StringArray::from_iter(
            moves.iter().map(|m| m.opening.map(|o| o.eco)),
        )),
        Arc::new(StringArray::from_iter(
            moves.iter().map(|m| m.opening.map(|o| o.name)),
        )),
    ];
    let batch = RecordBatch::try_new(Arc::new(schema), columns)
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    PyRecordBatch::new(batch).into_pyarrow(py)
}
