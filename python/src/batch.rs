//! Batches: Arrow columns of games coded on all cores, the GIL released.
//!
//! Input columns come through the Arrow PyCapsule interface
//! (`__arrow_c_array__` / `__arrow_c_stream__`: pyarrow, Polars, DuckDB,
//! nanoarrow), read in place; a bad row gives a null and an entry in the
//! error list, never an exception that loses the batch.

use std::sync::Arc;

use arrow_array::{
    Array, ArrayRef, BinaryArray, BinaryViewArray, LargeBinaryArray, LargeListArray, ListArray,
    builder::{BinaryBuilder, LargeBinaryBuilder, ListBuilder, StringBuilder},
    cast::AsArray,
};
use arrow_schema::{DataType, Field};
use chesspack::{
    game::GameCodec,
    pgn::{Notation, notate},
    record,
};
use pyo3::{exceptions::PyTypeError, prelude::*};
use pyo3_arrow::{PyArray, PyChunkedArray, input::AnyArray};

use crate::{game_codec, start_of};

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(encode_games, m)?)?;
    m.add_function(wrap_pyfunction!(decode_games, m)?)?;
    Ok(())
}

/// One game of an input column.
enum Game<'a> {
    Movetext(&'a str),
    Moves(Vec<&'a str>),
}

/// A string argument of a batch: one value for every row, or a value (or
/// null) a row. The starts are one: a FEN, null for the standard position.
enum Column {
    One(Option<String>),
    Each(Vec<Option<String>>),
}

type Starts = Column;

impl Column {
    fn from_py(value: Option<&Bound<'_, PyAny>>, what: &str) -> PyResult<Column> {
        let Some(value) = value else {
            return Ok(Column::One(None));
        };
        if value.is_none() {
            return Ok(Column::One(None));
        }
        if let Ok(s) = value.extract::<String>() {
            return Ok(Column::One(Some(s)));
        }
        let chunks = value.extract::<AnyArray>()?.into_chunked_array()?;
        let mut out = Vec::new();
        for chunk in chunks.chunks() {
            out.extend(
                strings(chunk.as_ref(), what)?
                    .into_iter()
                    .map(|s| s.map(str::to_owned)),
            );
        }
        Ok(Column::Each(out))
    }

    fn get(&self, row: usize) -> Option<&str> {
        match self {
            Column::One(s) => s.as_deref(),
            Column::Each(v) => v.get(row).and_then(|s| s.as_deref()),
        }
    }

    fn check_len(&self, rows: usize, what: &str) -> PyResult<()> {
        match self {
            Column::Each(v) if v.len() != rows => Err(pyo3::exceptions::PyValueError::new_err(
                format!("{what} has {} rows, the games {rows}", v.len()),
            )),
            _ => Ok(()),
        }
    }
}

/// What `model` reads its context from, for a batch's games: their tags
/// by name (ratings, time control) and their clocks.
struct Tags {
    tags: Vec<(String, Column)>,
    /// A list of readings a game (null: none), when given.
    clocks: Option<Vec<Option<Vec<Option<f64>>>>>,
}

impl Tags {
    fn from_py(
        tags: Option<Vec<(String, Bound<'_, PyAny>)>>,
        clocks: Option<&Bound<'_, PyAny>>,
        clock_unit: &str,
        rows: usize,
    ) -> PyResult<Tags> {
        let per_second = match clock_unit {
            "s" => 1.0,
            "ms" => 1000.0,
            u => {
                return Err(pyo3::exceptions::PyValueError::new_err(format!(
                    "clock_unit must be \"s\" or \"ms\", not {u:?}"
                )));
            }
        };
        let mut out = Vec::new();
        for (name, value) in tags.unwrap_or_default() {
            let column = Column::from_py(Some(&value), &name)?;
            column.check_len(rows, &name)?;
            out.push((name, column));
        }
        let clocks = match clocks.filter(|c| !c.is_none()) {
            None => None,
            Some(c) => {
                let chunks = c.extract::<AnyArray>()?.into_chunked_array()?;
                let mut all = Vec::with_capacity(rows);
                for chunk in chunks.chunks() {
                    all.extend(clock_lists(chunk.as_ref(), per_second)?);
                }
                if all.len() != rows {
                    return Err(pyo3::exceptions::PyValueError::new_err(format!(
                        "clocks has {} rows, the games {rows}",
                        all.len()
                    )));
                }
                Some(all)
            }
        };
        Ok(Tags { tags: out, clocks })
    }

    /// The codec for row `row` in the context of its tags and clocks, for
    /// codecs that read one (`None`: use the codec as it is).
    ///
    /// # Errors
    ///
    /// A clock reading that is not a number of seconds (negative, not
    /// finite, 2^32 or more).
    fn codec(
        &self,
        codec: &dyn GameCodec,
        row: usize,
    ) -> Result<Option<Box<dyn GameCodec>>, chesspack::Error> {
        let clocks = self.clocks.as_ref().and_then(|c| c[row].as_ref());
        if self.tags.is_empty() && clocks.is_none() {
            return Ok(None);
        }
        let mut context = chesspack::model::GameContext::from_tags(
            self.tags
                .iter()
                .filter_map(|(name, c)| c.get(row).map(|v| (name, v))),
        );
        if let Some(clocks) = clocks {
            let seconds = clocks
                .iter()
                .enumerate()
                .map(|(ply, c)| match c {
                    None => Ok(None),
                    // Whole seconds, as int() gives them.
                    Some(c) if c.is_finite() && (0.0..4_294_967_296.0).contains(c) => {
                        Ok(Some(*c as u32))
                    }
                    Some(c) => Err(chesspack::Error::InvalidData(format!(
                        "clock reading {c} after ply {} is not a number of seconds",
                        ply + 1
                    ))),
                })
                .collect::<Result<Vec<_>, _>>()?;
            context = context.with_clocks(seconds);
        }
        Ok(Some(codec.in_context(&context)))
    }
}

/// The lists of a clock column in seconds: numbers (whole or not) of
/// `per_second` units, nulls allowed.
fn clock_lists(a: &dyn Array, per_second: f64) -> PyResult<Vec<Option<Vec<Option<f64>>>>> {
    let lists = |a: &dyn Array,
                 values: &dyn Array,
                 offsets: &dyn Fn(usize) -> (usize, usize)|
     -> PyResult<Vec<Option<Vec<Option<f64>>>>> {
        let values: Vec<Option<f64>> = numbers(values)?
            .into_iter()
            .map(|v| v.map(|v| v / per_second))
            .collect();
        Ok((0..a.len())
            .map(|i| {
                a.is_valid(i).then(|| {
                    let (s, e) = offsets(i);
                    values[s..e].to_vec()
                })
            })
            .collect())
    };
    match a.data_type() {
        DataType::Null => Ok(vec![None; a.len()]),
        DataType::List(_) => {
            let l: &ListArray = a.as_list::<i32>();
            let o = l.value_offsets();
            lists(a, l.values().as_ref(), &|i| {
                (o[i] as usize, o[i + 1] as usize)
            })
        }
        DataType::LargeList(_) => {
            let l: &LargeListArray = a.as_list::<i64>();
            let o = l.value_offsets();
            lists(a, l.values().as_ref(), &|i| {
                (o[i] as usize, o[i + 1] as usize)
            })
        }
        t => Err(PyTypeError::new_err(format!(
            "clocks: expected a list of numbers a game, not {t}"
        ))),
    }
}

/// The values of a numeric column, as `f64` (null values as `None`).
fn numbers(a: &dyn Array) -> PyResult<Vec<Option<f64>>> {
    use arrow_array::types::{
        Float32Type, Float64Type, Int8Type, Int16Type, Int32Type, Int64Type, UInt8Type, UInt16Type,
        UInt32Type, UInt64Type,
    };
    macro_rules! column {
        ($t:ty) => {
            a.as_primitive::<$t>()
                .iter()
                .map(|v| v.map(|v| v as f64))
                .collect()
        };
    }
    Ok(match a.data_type() {
        DataType::Int8 => column!(Int8Type),
        DataType::Int16 => column!(Int16Type),
        DataType::Int32 => column!(Int32Type),
        DataType::Int64 => column!(Int64Type),
        DataType::UInt8 => column!(UInt8Type),
        DataType::UInt16 => column!(UInt16Type),
        DataType::UInt32 => column!(UInt32Type),
        DataType::UInt64 => column!(UInt64Type),
        DataType::Float32 => column!(Float32Type),
        DataType::Float64 => column!(Float64Type),
        DataType::Null => vec![None; a.len()],
        t => {
            return Err(PyTypeError::new_err(format!(
                "clocks: expected numbers of seconds, not {t}"
            )));
        }
    })
}

/// The values of a string column (null rows as `None`).
fn strings<'a>(a: &'a dyn Array, what: &str) -> PyResult<Vec<Option<&'a str>>> {
    Ok(match a.data_type() {
        DataType::Utf8 => a.as_string::<i32>().iter().collect(),
        DataType::LargeUtf8 => a.as_string::<i64>().iter().collect(),
        DataType::Utf8View => a.as_string_view().iter().collect(),
        DataType::Null => vec![None; a.len()],
        t => {
            return Err(PyTypeError::new_err(format!(
                "{what}: expected a column of strings, not {t}"
            )));
        }
    })
}

/// The games of a column: movetext strings, or lists of SAN/UCI strings.
fn games(a: &dyn Array) -> PyResult<Vec<Option<Game<'_>>>> {
    fn lists<'a>(
        a: &'a dyn Array,
        n: usize,
        values: &'a dyn Array,
        offsets: impl Fn(usize) -> (usize, usize),
    ) -> PyResult<Vec<Option<Game<'a>>>> {
        let values = strings(values, "moves")?;
        Ok((0..n)
            .map(|i| {
                a.is_valid(i).then(|| {
                    let (s, e) = offsets(i);
                    Game::Moves(values[s..e].iter().map(|v| v.unwrap_or("")).collect())
                })
            })
            .collect())
    }
    match a.data_type() {
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View | DataType::Null => {
            Ok(strings(a, "games")?
                .into_iter()
                .map(|s| s.map(Game::Movetext))
                .collect())
        }
        DataType::List(_) => {
            let l: &ListArray = a.as_list::<i32>();
            let o = l.value_offsets();
            lists(a, l.len(), l.values().as_ref(), |i| {
                (o[i] as usize, o[i + 1] as usize)
            })
        }
        DataType::LargeList(_) => {
            let l: &LargeListArray = a.as_list::<i64>();
            let o = l.value_offsets();
            lists(a, l.len(), l.values().as_ref(), |i| {
                (o[i] as usize, o[i + 1] as usize)
            })
        }
        t => Err(PyTypeError::new_err(format!(
            "games: expected movetext strings or lists of SAN/UCI strings, not {t}"
        ))),
    }
}

/// The values of a binary column.
fn binaries(a: &dyn Array) -> PyResult<Vec<Option<&[u8]>>> {
    Ok(match a.data_type() {
        DataType::Binary => a
            .as_any()
            .downcast_ref::<BinaryArray>()
            .map(|b| b.iter().collect())
            .unwrap_or_default(),
        DataType::LargeBinary => a
            .as_any()
            .downcast_ref::<LargeBinaryArray>()
            .map(|b| b.iter().collect())
            .unwrap_or_default(),
        DataType::BinaryView => a
            .as_any()
            .downcast_ref::<BinaryViewArray>()
            .map(|b| b.iter().collect())
            .unwrap_or_default(),
        DataType::Null => vec![None; a.len()],
        t => {
            return Err(PyTypeError::new_err(format!(
                "records: expected a binary column, not {t}"
            )));
        }
    })
}

/// Runs `f` on `threads` threads (all cores when `None`), on the library's
/// pools ([`chesspack::Pipeline::install`]).
pub(crate) fn on_pool<T: Send>(threads: Option<usize>, f: impl FnOnce() -> T + Send) -> T {
    let mut pipeline = chesspack::Pipeline::default();
    pipeline.threads = threads.map_or(0, |n| n.max(1));
    pipeline.install(f)
}

type Errors = Vec<(usize, String)>;

/// The result column: one array when the input was one array, a chunked
/// array when it was a stream or chunked.
fn output<'py>(
    py: Python<'py>,
    chunks: Vec<ArrayRef>,
    single: bool,
) -> PyResult<Bound<'py, PyAny>> {
    if single && chunks.len() == 1 {
        let a = chunks.into_iter().next().expect("one chunk");
        let a = PyArray::from_array_ref(a).into_pyobject(py)?;
        return py.import("pyarrow")?.getattr("array")?.call1((a,));
    }
    let field = Arc::new(Field::new(
        "",
        chunks
            .first()
            .map_or(DataType::Binary, |c| c.data_type().clone()),
        true,
    ));
    PyChunkedArray::try_new(chunks, field)?.into_pyarrow(py)
}

/// encode_games(games, codec="model", start=None, threads=None, tags=None, clocks=None, clock_unit="s") -> (array, errors)
///
/// Game records of a column of games (movetext strings, or lists of
/// SAN/UCI strings); null rows stay null, bad rows become null with an
/// entry (row, message) in `errors`. `tags`: (name, string or string
/// column) pairs, the games' tags that `model` reads its context from;
/// `clocks`: a column of lists of numbers, the time on the clock of the
/// side that moved after each ply (nulls where none) in `clock_unit`
/// (`"s"` or `"ms"`, as archive rows give them), its clock context.
#[pyfunction]
#[pyo3(signature = (games, codec = "model", start = None, threads = None, tags = None, clocks = None, clock_unit = "s"))]
// Its arguments are the Python function's keywords.
#[allow(clippy::too_many_arguments)]
fn encode_games<'py>(
    py: Python<'py>,
    games: AnyArray,
    codec: &str,
    start: Option<&Bound<'py, PyAny>>,
    threads: Option<usize>,
    tags: Option<Vec<(String, Bound<'py, PyAny>)>>,
    clocks: Option<&Bound<'py, PyAny>>,
    clock_unit: &str,
) -> PyResult<(Bound<'py, PyAny>, Errors)> {
    let single = matches!(games, AnyArray::Array(_));
    let codec = game_codec(codec)?;
    let starts = Starts::from_py(start, "start")?;
    let chunked = games.into_chunked_array()?;
    let rows: usize = chunked.chunks().iter().map(|c| c.len()).sum();
    starts.check_len(rows, "start")?;
    let tags = Tags::from_py(tags, clocks, clock_unit, rows)?;
    let (chunks, errors) = py.detach(|| {
        on_pool(threads, || {
            encode_chunks(codec.as_ref(), chunked.chunks(), &starts, &tags)
        })
    });
    let chunks = chunks?;
    Ok((output(py, chunks, single)?, errors))
}

/// Runs `f` on every row that is not null, on the pool; a row whose `f`
/// fails becomes a null, with an entry (row, message) in `errors`.
fn code_rows<R: Sync, T: Send>(
    rows: &[Option<R>],
    base: usize,
    errors: &mut Errors,
    f: impl Fn(usize, &R) -> Result<T, chesspack::Error> + Sync,
) -> Vec<Option<T>> {
    // On the pool `on_pool` installed.
    let coded: Vec<Option<Result<T, String>>> =
        chesspack::Pipeline::default().map(rows.iter().enumerate().collect(), |(i, r)| {
            r.as_ref()
                .map(|r| f(base + i, r).map_err(|e| e.to_string()))
        });
    coded
        .into_iter()
        .enumerate()
        .map(|(i, r)| match r {
            None => None,
            Some(Ok(v)) => Some(v),
            Some(Err(e)) => {
                errors.push((base + i, e));
                None
            }
        })
        .collect()
}

fn encode_chunks(
    codec: &dyn GameCodec,
    chunks: &[ArrayRef],
    starts: &Starts,
    tags: &Tags,
) -> (PyResult<Vec<ArrayRef>>, Errors) {
    let mut out = Vec::with_capacity(chunks.len());
    let mut errors = Vec::new();
    let mut base = 0;
    for chunk in chunks {
        let rows = match games(chunk.as_ref()) {
            Ok(r) => r,
            Err(e) => return (Err(e), errors),
        };
        let values = code_rows(&rows, base, &mut errors, |row, g| {
            let in_context = tags.codec(codec, row)?;
            encode_one(in_context.as_deref().unwrap_or(codec), g, starts.get(row))
        });
        let large = matches!(
            chunk.data_type(),
            DataType::LargeUtf8 | DataType::LargeList(_)
        );
        let array: ArrayRef = if large {
            let mut b = LargeBinaryBuilder::new();
            for v in values {
                b.append_option(v);
            }
            Arc::new(b.finish())
        } else {
            let mut b = BinaryBuilder::new();
            for v in values {
                b.append_option(v);
            }
            Arc::new(b.finish())
        };
        out.push(array);
        base += chunk.len();
    }
    (Ok(out), errors)
}

fn encode_one(
    codec: &dyn GameCodec,
    g: &Game<'_>,
    start: Option<&str>,
) -> Result<Vec<u8>, chesspack::Error> {
    let start = start_of(start)?;
    let moves = match g {
        Game::Movetext(t) => chesspack::pgn::movetext_moves(t.as_bytes(), &start)?,
        Game::Moves(l) => chesspack::pgn::text_moves(l, &start)?,
    };
    record::encode_game(codec, &start, &moves)
}

/// decode_games(records, codec=None, start=None, output="san", threads=None, tags=None, clocks=None, clock_unit="s") -> (array, errors)
///
/// The moves of a column of game records: lists of SAN (`output="san"`)
/// or UCI (`"uci"`) strings, or movetext strings (`"movetext"`); `tags` and
/// `clocks` as the records were encoded with.
#[pyfunction]
#[pyo3(signature = (records, codec = None, start = None, output = "san", threads = None, tags = None, clocks = None, clock_unit = "s"))]
// Its arguments are the Python function's keywords.
#[allow(clippy::too_many_arguments)]
fn decode_games<'py>(
    py: Python<'py>,
    records: AnyArray,
    codec: Option<&str>,
    start: Option<&Bound<'py, PyAny>>,
    output: &str,
    threads: Option<usize>,
    tags: Option<Vec<(String, Bound<'py, PyAny>)>>,
    clocks: Option<&Bound<'py, PyAny>>,
    clock_unit: &str,
) -> PyResult<(Bound<'py, PyAny>, Errors)> {
    let notation: Notation = output.parse().map_err(|_| {
        pyo3::exceptions::PyValueError::new_err(format!(
            "output must be \"san\", \"uci\" or \"movetext\", not {output:?}"
        ))
    })?;
    if let Some(c) = codec {
        game_codec(c)?;
    }
    let single = matches!(records, AnyArray::Array(_));
    let starts = Starts::from_py(start, "start")?;
    let chunked = records.into_chunked_array()?;
    let rows: usize = chunked.chunks().iter().map(|c| c.len()).sum();
    starts.check_len(rows, "start")?;
    let tags = Tags::from_py(tags, clocks, clock_unit, rows)?;
    let codecs = chesspack::game::codecs();
    let (chunks, errors) = py.detach(|| {
        on_pool(threads, || {
            decode_chunks(&codecs, codec, chunked.chunks(), &starts, &tags, notation)
        })
    });
    let chunks = chunks?;
    self::output(py, chunks, single).map(|a| (a, errors))
}

fn decode_chunks(
    codecs: &[Box<dyn GameCodec>],
    want: Option<&str>,
    chunks: &[ArrayRef],
    starts: &Starts,
    tags: &Tags,
    notation: Notation,
) -> (PyResult<Vec<ArrayRef>>, Errors) {
    let mut out = Vec::with_capacity(chunks.len());
    let mut errors = Vec::new();
    let mut base = 0;
    for chunk in chunks {
        let rows = match binaries(chunk.as_ref()) {
            Ok(r) => r,
            Err(e) => return (Err(e), errors),
        };
        let values = code_rows(&rows, base, &mut errors, |row, r| {
            decode_one(codecs, want, r, starts.get(row), tags, row, notation)
        });
        let array: ArrayRef = if notation == Notation::Movetext {
            let mut b = StringBuilder::new();
            for v in values {
                b.append_option(v.map(|mut s| s.pop().unwrap_or_default()));
            }
            Arc::new(b.finish())
        } else {
            let mut b = ListBuilder::new(StringBuilder::new());
            for v in values {
                match v {
                    Some(moves) => {
                        for m in moves {
                            b.values().append_value(m);
                        }
                        b.append(true);
                    }
                    None => b.append(false),
                }
            }
            Arc::new(b.finish())
        };
        out.push(array);
        base += chunk.len();
    }
    (Ok(out), errors)
}

fn decode_one(
    codecs: &[Box<dyn GameCodec>],
    want: Option<&str>,
    data: &[u8],
    start: Option<&str>,
    tags: &Tags,
    row: usize,
    notation: Notation,
) -> Result<Vec<String>, chesspack::Error> {
    let name = record::game_codec_name(data)?;
    if let Some(w) = want
        && w != name
    {
        return Err(chesspack::Error::InvalidData(format!(
            "game record of codec {name:?}, not {w:?}"
        )));
    }
    let codec = codecs
        .iter()
        .find(|c| c.name() == name)
        .ok_or_else(|| chesspack::Error::UnknownCodec(name.to_owned()))?;
    let start = start_of(start)?;
    let in_context = tags.codec(codec.as_ref(), row)?;
    let codec = in_context.as_deref().unwrap_or(codec.as_ref());
    let moves = record::decode_game(codec, &start, data)?;
    Ok(notate(&start, &moves, notation))
}
