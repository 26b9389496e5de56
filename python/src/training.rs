//! Archives of engine training data (issue 42): binpacks in, training rows
//! out as Arrow record batches, decoded with the GIL released.

use std::{fs::File, io::BufReader, path::PathBuf, sync::Arc};

use arrow_array::{
    ArrayRef, FixedSizeListArray, Int8Array, Int16Array, RecordBatch, UInt8Array, UInt16Array,
};
use arrow_schema::{DataType, Field, Schema};
use chesspack::{
    archive::ArchiveError,
    datasets::training::{Rows, TrainingReader},
};
use pyo3::{exceptions::PyIndexError, prelude::*, types::PyBytes};
use pyo3_arrow::PyRecordBatch;

use crate::archive::{archive_err, io_err};

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<TrainingArchive>()?;
    Ok(())
}

/// TrainingArchive(path)
///
/// An archive of engine training data (made by `compress` from a
/// `.binpack`, `.plain` text or viriformat games): its blocks of positions as Arrow record batches of training
/// rows (`board`: 64 pieces a position, 0 empty, 1–6 white pawn to king,
/// 7–12 black; `turn`; `castling`; `ep` (64: none); `rule50`; `ply`;
/// `score`; `result`; `from`, `to`, `promotion` of the move played).
#[pyclass(module = "chesspack._native")]
pub struct TrainingArchive {
    reader: std::sync::Mutex<TrainingReader<BufReader<File>>>,
    path: String,
    blocks: usize,
    positions: u64,
}

#[pymethods]
impl TrainingArchive {
    #[new]
    fn new(path: PathBuf) -> PyResult<TrainingArchive> {
        let file = File::open(&path).map_err(|e| io_err(&path, e))?;
        let name = path.display().to_string();
        let reader =
            TrainingReader::open(BufReader::new(file)).map_err(|e| archive_err(&name, e))?;
        Ok(TrainingArchive {
            blocks: reader.blocks(),
            positions: reader.positions(),
            reader: std::sync::Mutex::new(reader),
            path: name,
        })
    }

    /// The number of positions.
    fn __len__(&self) -> usize {
        self.positions as usize
    }

    /// The number of blocks (binpack chunks).
    #[getter]
    fn blocks(&self) -> usize {
        self.blocks
    }

    /// read_block(block) -> pyarrow.RecordBatch
    ///
    /// The training rows of block `block` (from 0; negative from the end).
    fn read_block<'py>(&self, py: Python<'py>, block: isize) -> PyResult<Bound<'py, PyAny>> {
        let n = self.blocks as isize;
        let b = if block < 0 { block + n } else { block };
        if !(0..n).contains(&b) {
            return Err(PyIndexError::new_err(format!(
                "block {block} is not in the archive ({} blocks)",
                self.blocks
            )));
        }
        let rows = py.detach(|| {
            let mut reader = self.reader.lock().unwrap_or_else(|e| e.into_inner());
            reader.rows(b as usize)
        });
        let rows = rows.map_err(|e| archive_err(&self.path, e))?;
        let batch =
            to_batch(rows).map_err(|e| pyo3::exceptions::PyValueError::new_err(e.to_string()))?;
        PyRecordBatch::new(batch).into_pyarrow(py)
    }

    /// plain(block) -> str
    ///
    /// Block `block`'s positions as nnue-pytorch `.plain` text.
    fn plain(&self, py: Python<'_>, block: usize) -> PyResult<String> {
        self.with_block(py, block, |r, b| r.rows(b).map(|rows| rows.to_plain()))
    }

    /// viriformat(block) -> bytes
    ///
    /// Block `block`'s chains as viriformat games (White's scores).
    fn viriformat<'py>(&self, py: Python<'py>, block: usize) -> PyResult<Bound<'py, PyBytes>> {
        let bytes = self.with_block(py, block, |r, b| r.viriformat(b))?;
        Ok(PyBytes::new(py, &bytes))
    }

    /// marlinformat(block) -> bytes
    ///
    /// Block `block`'s positions as 32-byte marlinformat records.
    fn marlinformat<'py>(&self, py: Python<'py>, block: usize) -> PyResult<Bound<'py, PyBytes>> {
        let bytes = self.with_block(py, block, |r, b| r.marlinformat(b))?;
        Ok(PyBytes::new(py, &bytes))
    }

    fn __repr__(&self) -> String {
        format!(
            "TrainingArchive({:?}: {} positions in {} blocks)",
            self.path, self.positions, self.blocks
        )
    }
}

impl TrainingArchive {
    /// What `read` makes of block `block` (checked to be in the archive),
    /// with the GIL released.
    fn with_block<T: Send>(
        &self,
        py: Python<'_>,
        block: usize,
        read: impl FnOnce(&mut TrainingReader<BufReader<File>>, usize) -> Result<T, ArchiveError> + Send,
    ) -> PyResult<T> {
        if block >= self.blocks {
            return Err(PyIndexError::new_err(format!(
                "block {block} is not in the archive ({} blocks)",
                self.blocks
            )));
        }
        py.detach(|| {
            let mut reader = self.reader.lock().unwrap_or_else(|e| e.into_inner());
            read(&mut reader, block)
        })
        .map_err(|e| archive_err(&self.path, e))
    }
}

fn to_batch(rows: Rows) -> Result<RecordBatch, arrow_schema::ArrowError> {
    let square = Arc::new(Field::new("item", DataType::UInt8, false));
    let board = FixedSizeListArray::try_new(
        square.clone(),
        64,
        Arc::new(UInt8Array::from(rows.board)),
        None,
    )?;
    let columns: Vec<(&str, ArrayRef)> = vec![
        ("board", Arc::new(board)),
        ("turn", Arc::new(UInt8Array::from(rows.turn))),
        ("castling", Arc::new(UInt8Array::from(rows.castling))),
        ("ep", Arc::new(UInt8Array::from(rows.ep))),
        ("rule50", Arc::new(UInt16Array::from(rows.rule50))),
        ("ply", Arc::new(UInt16Array::from(rows.ply))),
        ("score", Arc::new(Int16Array::from(rows.score))),
        ("result", Arc::new(Int8Array::from(rows.result))),
        ("from", Arc::new(UInt8Array::from(rows.from))),
        ("to", Arc::new(UInt8Array::from(rows.to))),
        ("promotion", Arc::new(UInt8Array::from(rows.promotion))),
    ];
    let schema = Schema::new(
        columns
            .iter()
            .map(|(name, a)| Field::new(*name, a.data_type().clone(), false))
            .collect::<Vec<_>>(),
    );
    RecordBatch::try_new(
        Arc::new(schema),
        columns.into_iter().map(|(_, a)| a).collect(),
    )
}
