//! Every position of a game archive's games as Arrow rows (issue 59):
//! `chesspack::datasets::rows` turned into record batches without copies
//! of the non-null columns.

use std::sync::Arc;

use arrow_array::{
    ArrayRef, FixedSizeListArray, Float32Array, Int8Array, Int32Array, Int64Array, RecordBatch,
    StringArray, UInt8Array, UInt32Array,
};
use arrow_buffer::{Buffer, NullBuffer, OffsetBuffer, ScalarBuffer};
use arrow_schema::{ArrowError, DataType, Field, Schema};
use chesspack::datasets::rows::{Column, PositionRows, Texts};
use pyo3::{exceptions::PyValueError, prelude::*};

/// The columns named by `names` (`None`: the defaults).
pub fn columns(names: Option<Vec<String>>) -> PyResult<Vec<Column>> {
    let Some(names) = names else {
        return Ok(Column::defaults());
    };
    let mut out = Vec::with_capacity(names.len());
    for n in names {
        let c = Column::from_name(&n).ok_or_else(|| {
            let known: Vec<String> = Column::defaults()
                .iter()
                .chain(&[Column::Uci, Column::Fen])
                .map(|c| c.name().to_owned())
                .collect();
            PyValueError::new_err(format!(
                "no position column {n:?} (columns: {known:?}, or a tag's name, which starts with an upper-case letter)"
            ))
        })?;
        if out.contains(&c) {
            return Err(PyValueError::new_err(format!(
                "column {n:?} asked for twice"
            )));
        }
        out.push(c);
    }
    Ok(out)
}

fn texts(t: Texts) -> Result<ArrayRef, ArrowError> {
    let nulls = (!t.valid.is_empty()).then(|| NullBuffer::from(t.valid));
    Ok(Arc::new(StringArray::try_new(
        OffsetBuffer::new(ScalarBuffer::from(t.offsets)),
        Buffer::from_vec(t.data),
        nulls,
    )?))
}

/// The Arrow type of each column.
fn data_type(c: &Column) -> DataType {
    match c {
        Column::Board => {
            DataType::FixedSizeList(Arc::new(Field::new("item", DataType::UInt8, false)), 64)
        }
        Column::Rule50 | Column::Ply => DataType::UInt32,
        Column::Uci | Column::Fen | Column::Tag(_) => DataType::Utf8,
        Column::Game => DataType::Int64,
        Column::Result => DataType::Int8,
        Column::WhiteElo
        | Column::BlackElo
        | Column::Base
        | Column::Increment
        | Column::Eval
        | Column::Mate => DataType::Int32,
        Column::Clock => DataType::Float32,
        _ => DataType::UInt8,
    }
}

/// Whether a column may hold nulls.
fn nullable(c: &Column) -> bool {
    matches!(
        c,
        Column::Result
            | Column::WhiteElo
            | Column::BlackElo
            | Column::Base
            | Column::Increment
            | Column::Clock
            | Column::Eval
            | Column::Mate
            | Column::Tag(_)
    )
}

/// The schema of rows of `columns`.
pub fn schema(columns: &[Column]) -> Schema {
    Schema::new(
        columns
            .iter()
            .map(|c| Field::new(c.name(), data_type(c), nullable(c)))
            .collect::<Vec<_>>(),
    )
}

fn ints<T: Copy>(v: Vec<Option<T>>, to: impl Fn(T) -> i32) -> ArrayRef {
    Arc::new(v.into_iter().map(|x| x.map(&to)).collect::<Int32Array>())
}

/// The rows as a record batch, their columns in the order asked for.
pub fn batch(mut rows: PositionRows) -> Result<RecordBatch, ArrowError> {
    let schema = Arc::new(schema(&rows.columns));
    let mut tags = std::mem::take(&mut rows.tags).into_iter();
    let columns = std::mem::take(&mut rows.columns);
    let mut arrays: Vec<ArrayRef> = Vec::with_capacity(columns.len());
    for c in &columns {
        let a: ArrayRef = match c {
            Column::Board => Arc::new(FixedSizeListArray::try_new(
                Arc::new(Field::new("item", DataType::UInt8, false)),
                64,
                Arc::new(UInt8Array::from(std::mem::take(&mut rows.board))),
                None,
            )?),
            Column::Turn => Arc::new(UInt8Array::from(std::mem::take(&mut rows.turn))),
            Column::Castling => Arc::new(UInt8Array::from(std::mem::take(&mut rows.castling))),
            Column::Ep => Arc::new(UInt8Array::from(std::mem::take(&mut rows.ep))),
            Column::Rule50 => Arc::new(UInt32Array::from(std::mem::take(&mut rows.rule50))),
            Column::Ply => Arc::new(UInt32Array::from(std::mem::take(&mut rows.ply))),
            Column::From => Arc::new(UInt8Array::from(std::mem::take(&mut rows.from))),
            Column::To => Arc::new(UInt8Array::from(std::mem::take(&mut rows.to))),
            Column::Promotion => Arc::new(UInt8Array::from(std::mem::take(&mut rows.promotion))),
            Column::Uci => texts(std::mem::take(&mut rows.uci))?,
            Column::Fen => texts(std::mem::take(&mut rows.fen))?,
            Column::Game => Arc::new(Int64Array::from(
                std::mem::take(&mut rows.game)
                    .into_iter()
                    .map(|g| g as i64)
                    .collect::<Vec<_>>(),
            )),
            Column::Result => Arc::new(Int8Array::from(std::mem::take(&mut rows.result))),
            Column::WhiteElo => ints(std::mem::take(&mut rows.white_elo), |x| x as i32),
            Column::BlackElo => ints(std::mem::take(&mut rows.black_elo), |x| x as i32),
            Column::Base => ints(std::mem::take(&mut rows.base), |x| x as i32),
            Column::Increment => ints(std::mem::take(&mut rows.increment), |x| x as i32),
            Column::Eval => ints(std::mem::take(&mut rows.eval), |x| x),
            Column::Mate => ints(std::mem::take(&mut rows.mate), |x| x),
            Column::Clock => Arc::new(
                std::mem::take(&mut rows.clock)
                    .into_iter()
                    .map(|ms| ms.map(|ms| ms as f32 / 1000.0))
                    .collect::<Float32Array>(),
            ),
            Column::Tag(_) => match tags.next() {
                Some((_, t)) => texts(t)?,
                None => return Err(ArrowError::SchemaError("a tag column is missing".into())),
            },
            _ => return Err(ArrowError::SchemaError(format!("column {}", c.name()))),
        };
        arrays.push(a);
    }
    RecordBatch::try_new_with_options(
        schema,
        arrays,
        &arrow_array::RecordBatchOptions::new().with_row_count(Some(rows.rows)),
    )
}
