//! Archives from Python: random access to games and blocks, and whole-file
//! compress, decompress and verify on all cores with the GIL released.

use std::{
    fs::File,
    io::{self, BufRead, BufReader, BufWriter, Read, Write},
    ops::ControlFlow,
    path::{Path, PathBuf},
    sync::{
        Arc, Mutex,
        atomic::{AtomicU64, Ordering},
    },
};

use chesspack::{
    archive::{self, ArchiveError, ArchiveReader, pipeline::Pipeline},
    files,
    game::GameCodec,
    pgn::ChunkReader,
};
use pyo3::{
    exceptions::{
        PyFileExistsError, PyFileNotFoundError, PyIndexError, PyOSError, PyPermissionError,
    },
    prelude::*,
    types::PyDict,
};
use pyo3_arrow::PyRecordBatch;

use crate::{DecodeError, positions, rows};

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Archive>()?;
    m.add_function(wrap_pyfunction!(compress, m)?)?;
    m.add_function(wrap_pyfunction!(decompress, m)?)?;
    m.add_function(wrap_pyfunction!(verify, m)?)?;
    m.add_function(wrap_pyfunction!(empty_rows, m)?)?;
    m.add_function(wrap_pyfunction!(empty_positions, m)?)?;
    m.add_function(wrap_pyfunction!(release_memory, m)?)?;
    m.add_function(wrap_pyfunction!(split_pgn, m)?)?;
    Ok(())
}

/// split_pgn(src, dst_dir, games, prefix="part") -> list[str]
///
/// Cuts a PGN file (`.pgn` or `.pgn.zst`) into parts of `games` games each,
/// written byte for byte as `dst_dir/PREFIX-NNNNN.pgn`, so that one large
/// file (a lichess month is one `.pgn.zst`) can be compressed by many tasks.
/// Returns the parts' paths in order.
#[pyfunction]
#[pyo3(signature = (src, dst_dir, games, prefix = "part"))]
fn split_pgn(
    py: Python<'_>,
    src: PathBuf,
    dst_dir: PathBuf,
    games: usize,
    prefix: &str,
) -> PyResult<Vec<String>> {
    let (input, _, _) = open_input(&src)?;
    std::fs::create_dir_all(&dst_dir).map_err(|e| io_err(&dst_dir, e))?;
    py.detach(|| {
        let mut parts = Vec::new();
        let mut out: Option<BufWriter<File>> = None;
        let mut in_part = 0;
        for chunk in ChunkReader::new(input) {
            let chunk = chunk.map_err(|e| io_err(&src, e))?;
            if out.is_none() || in_part == games.max(1) {
                if let Some(mut w) = out.take() {
                    w.flush().map_err(|e| io_err(&dst_dir, e))?;
                }
                let path = dst_dir.join(format!("{prefix}-{:05}.pgn", parts.len()));
                let file = File::create(&path).map_err(|e| io_err(&path, e))?;
                out = Some(BufWriter::with_capacity(1 << 20, file));
                parts.push(path.display().to_string());
                in_part = 0;
            }
            let w = out.as_mut().expect("a part is open");
            w.write_all(&chunk.bytes).map_err(|e| io_err(&dst_dir, e))?;
            in_part += 1;
        }
        if let Some(mut w) = out.take() {
            w.flush().map_err(|e| io_err(&dst_dir, e))?;
        }
        Ok(parts)
    })
}

/// empty_rows(pgn=False) -> pyarrow.RecordBatch
///
/// A record batch of no games with the columns of `Archive.read_block`.
#[pyfunction]
#[pyo3(signature = (pgn = false))]
fn empty_rows(py: Python<'_>, pgn: bool) -> PyResult<Bound<'_, PyAny>> {
    let texts: &[Vec<u8>] = &[];
    let batch = rows::batch(0, &[], pgn.then_some(texts))
        .map_err(|e| DecodeError::new_err(e.to_string()))?;
    PyRecordBatch::new(batch).into_pyarrow(py)
}

/// empty_positions(columns=None) -> pyarrow.RecordBatch
///
/// A record batch of no rows with the columns of `Archive.positions`.
#[pyfunction]
#[pyo3(signature = (columns = None))]
fn empty_positions(py: Python<'_>, columns: Option<Vec<String>>) -> PyResult<Bound<'_, PyAny>> {
    let columns = positions::columns(columns)?;
    let batch = arrow_array::RecordBatch::new_empty(Arc::new(positions::schema(&columns)));
    PyRecordBatch::new(batch).into_pyarrow(py)
}

/// release_memory()
///
/// Gives the C library's free memory back to the system (`malloc_trim`
/// with glibc; nothing elsewhere): what a loop over blocks frees, the
/// allocator would otherwise keep.
#[pyfunction]
fn release_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        unsafe extern "C" {
            fn malloc_trim(pad: usize) -> i32;
        }
        // SAFETY: malloc_trim only returns free memory to the system.
        unsafe {
            malloc_trim(0);
        }
    }
}

/// The Python exception for an archive error, naming the file.
pub(crate) fn archive_err(path: &str, e: ArchiveError) -> PyErr {
    match e {
        ArchiveError::Io(io) => PyOSError::new_err(format!("{path}: {io}")),
        ArchiveError::Codec(e) => crate::to_py(e),
        ArchiveError::Settings(why) => pyo3::exceptions::PyValueError::new_err(why),
        e => DecodeError::new_err(format!("{path}: {e}")),
    }
}

/// Python's exception for an I/O error of `kind` (`FileNotFoundError`,
/// `PermissionError`, `FileExistsError`, else `OSError`) with `msg`.
fn os_error(kind: io::ErrorKind, msg: String) -> PyErr {
    match kind {
        io::ErrorKind::NotFound => PyFileNotFoundError::new_err(msg),
        io::ErrorKind::PermissionDenied => PyPermissionError::new_err(msg),
        io::ErrorKind::AlreadyExists => PyFileExistsError::new_err(msg),
        _ => PyOSError::new_err(msg),
    }
}

/// `e`, an error about `path`, as Python's exception of its kind.
pub(crate) fn io_err(path: &Path, e: io::Error) -> PyErr {
    os_error(e.kind(), format!("{}: {e}", path.display()))
}

/// An error of the library's file handling (`files`), which names the file.
fn file_err(e: io::Error) -> PyErr {
    os_error(e.kind(), e.to_string())
}

/// Where an archive's bytes come from: a local file, or a Python file
/// object (fsspec's, for `s3://` and the like), read a range at a time.
pub(crate) trait Source: Read + io::Seek + Send {}
impl<T: Read + io::Seek + Send> Source for T {}

type Reader = ArchiveReader<BufReader<Box<dyn Source>>>;

/// A Python binary file object as `Read + Seek`: each read is one `read(n)`
/// call (with the GIL taken for it), each seek one `seek(offset, whence)`.
pub(crate) struct PyFile(pub(crate) Py<PyAny>);

impl Read for PyFile {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        Python::attach(|py| {
            let data = self
                .0
                .call_method1(py, "read", (buf.len(),))
                .map_err(|e| io::Error::other(e.to_string()))?;
            let bytes: &[u8] = data
                .extract(py)
                .map_err(|e| io::Error::other(format!("read() gave no bytes: {e}")))?;
            let n = bytes.len().min(buf.len());
            buf[..n].copy_from_slice(&bytes[..n]);
            Ok(n)
        })
    }
}

impl io::Seek for PyFile {
    fn seek(&mut self, pos: io::SeekFrom) -> io::Result<u64> {
        let (offset, whence) = match pos {
            io::SeekFrom::Start(n) => (n as i64, 0),
            io::SeekFrom::Current(n) => (n, 1),
            io::SeekFrom::End(n) => (n, 2),
        };
        Python::attach(|py| {
            self.0
                .call_method1(py, "seek", (offset, whence))
                .and_then(|r| r.extract::<u64>(py))
                .map_err(|e| io::Error::other(e.to_string()))
        })
    }
}

/// A `.chpk` archive opened for reading: games by number (0-based here),
/// their tags, and whole blocks as Arrow record batches.
#[pyclass(frozen, module = "chesspack._native")]
pub struct Archive {
    path: String,
    reader: Mutex<Reader>,
    codec: Box<dyn GameCodec>,
    /// 0-based number of each block's first game.
    first: Vec<u64>,
    games: u64,
    /// The tags of every game of the block whose tags were asked for
    /// last: a loop over `tags(i)` decodes each block's tags once
    /// (issue 56), not a block's start again for each game.
    tags_of_block: Mutex<Option<(usize, Arc<Vec<archive::GameTags>>)>>,
}

impl Archive {
    fn lock(&self) -> std::sync::MutexGuard<'_, Reader> {
        // A panic while the lock was held cannot leave the reader in a state
        // that a seek does not reset.
        self.reader.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn payload(&self, block: usize) -> PyResult<archive::Block> {
        let n = self.first.len();
        if block >= n {
            return Err(PyIndexError::new_err(format!(
                "block {block} out of range (the archive has {n} blocks)"
            )));
        }
        self.lock()
            .read_block(block)
            .map_err(|e| archive_err(&self.path, e))
    }

    fn index(&self, i: i64) -> PyResult<u64> {
        let n = self.games as i64;
        let j = if i < 0 { i + n } else { i };
        if j < 0 || j >= n {
            return Err(PyIndexError::new_err(format!(
                "game {i} out of range (the archive holds {n} games)"
            )));
        }
        Ok(j as u64)
    }

    /// The texts of the games of a block, decoded with the GIL released: a
    /// game longer than 8 MiB whole, with its pieces in the blocks after.
    fn texts(&self, py: Python<'_>, payload: &archive::Block) -> PyResult<Vec<Vec<u8>>> {
        let codec = self.codec.as_ref();
        py.detach(|| -> Result<_, ArchiveError> {
            let mut texts: Vec<Vec<u8>> = Vec::new();
            archive::decode_games(
                codec,
                payload,
                &|_| true,
                &mut |g, t| match texts.get_mut(g) {
                    Some(text) => text.extend_from_slice(&t),
                    // The block's first pieces go on with a game of the block before.
                    None if g == archive::CONTINUED => {}
                    None => texts.push(t),
                },
            )?;
            if let Some(last) = texts.last_mut() {
                self.lock()
                    .rest_of_game(payload, &mut |t| last.extend_from_slice(&t))?;
            }
            Ok(texts)
        })
        .map_err(|e| archive_err(&self.path, e))
    }
}

#[pymethods]
impl Archive {
    /// Archive(path, recover=False)
    ///
    /// Opens an archive. A missing or damaged index (a truncated file) is a
    /// DecodeError unless `recover` is true: then the blocks found by
    /// scanning are read and `index_error` says why.
    #[new]
    #[pyo3(signature = (path, recover = false, file = None))]
    fn new(path: PathBuf, recover: bool, file: Option<Py<PyAny>>) -> PyResult<Archive> {
        let name = path.display().to_string();
        let source: Box<dyn Source> = match file {
            // A file object opened by the Python side (fsspec): `path` names it.
            Some(f) => Box::new(PyFile(f)),
            None => Box::new(File::open(&path).map_err(|e| io_err(&path, e))?),
        };
        let reader =
            ArchiveReader::open(BufReader::new(source)).map_err(|e| archive_err(&name, e))?;
        if let (Some(why), false) = (reader.index_error(), recover) {
            return Err(DecodeError::new_err(format!(
                "{name}: archive index is missing or damaged ({why}); the file may be truncated (recover=True reads the {} blocks found)",
                reader.blocks().len()
            )));
        }
        let codec = reader.header().codec().map_err(|e| archive_err(&name, e))?;
        let first = (0..reader.blocks().len())
            .map(|b| reader.first_game(b) - 1)
            .collect();
        Ok(Archive {
            path: name,
            games: reader.games(),
            codec,
            first,
            reader: Mutex::new(reader),
            tags_of_block: Mutex::new(None),
        })
    }

    fn __len__(&self) -> usize {
        self.games as usize
    }

    /// The archive's path.
    #[getter]
    fn path(&self) -> &str {
        &self.path
    }

    /// The move codec the archive was written with.
    #[getter]
    fn codec(&self) -> &'static str {
        self.codec.name()
    }

    /// The archive's format version.
    #[getter]
    fn version(&self) -> u8 {
        self.lock().header().version
    }

    /// The hash of the codec's model (0 for codecs without one).
    #[getter]
    fn model_hash(&self) -> u64 {
        self.lock().header().model_hash
    }

    /// Why the index could not be used (opened with recover=True), or None.
    #[getter]
    fn index_error(&self) -> Option<String> {
        self.lock().index_error().map(str::to_owned)
    }

    /// blocks() -> list[tuple[int, int, int, int, int]]
    ///
    /// Per block: (block, offset, length, first_game, games); games are
    /// numbered from 0.
    fn blocks(&self) -> Vec<(usize, u64, u32, u64, u32)> {
        self.lock()
            .blocks()
            .iter()
            .enumerate()
            .map(|(i, b)| (i, b.offset, b.len, self.first[i], b.games))
            .collect()
    }

    /// game(i) -> bytes
    ///
    /// The PGN text of game `i` (0-based; negative counts from the end), as
    /// `decompress` writes it. Reads and decodes one block, up to the game.
    fn game_bytes(&self, py: Python<'_>, i: i64) -> PyResult<Vec<u8>> {
        let number = self.index(i)? + 1;
        py.detach(|| self.lock().game(number))
            .map_err(|e| archive_err(&self.path, e))
    }

    /// tags(i) -> list[tuple[str, str]]
    ///
    /// The tag pairs of game `i` in their order, without decoding moves
    /// (but the first plies of a game whose `ECO` or `Opening` tag the
    /// archive stores as what the moves give). The first call for a block
    /// reads the tags of all its games, which the next calls for that block
    /// take: a loop over `tags(i)` costs the same for every `i`.
    fn tags(&self, py: Python<'_>, i: i64) -> PyResult<Vec<(String, String)>> {
        let j = self.index(i)?;
        let block = self.first.partition_point(|&f| f <= j) - 1;
        let local = (j - self.first[block]) as usize;
        let cached = self
            .tags_of_block
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_ref()
            .filter(|(b, _)| *b == block)
            .map(|(_, t)| Arc::clone(t));
        let all = match cached {
            Some(t) => t,
            None => {
                let payload = self.payload(block)?;
                let codec = self.codec.as_ref();
                let t = Arc::new(
                    py.detach(|| archive::block_tags(codec, &payload))
                        .map_err(|e| archive_err(&self.path, e))?,
                );
                *self.tags_of_block.lock().unwrap_or_else(|p| p.into_inner()) =
                    Some((block, Arc::clone(&t)));
                t
            }
        };
        let tags = all
            .get(local)
            .ok_or_else(|| PyIndexError::new_err(format!("game {i}: not in its block's tags")))?;
        // A verbatim game's as the library reads them leniently.
        Ok(tags
            .tags
            .iter()
            .map(|(k, v)| {
                (
                    chesspack::pgn::text(k).into_owned(),
                    chesspack::pgn::text(v).into_owned(),
                )
            })
            .collect())
    }

    /// game_text(i) -> str
    ///
    /// [`game_bytes`](Self::game_bytes) as text, by the library's one rule
    /// (`chesspack::pgn::text`: UTF-8, else Latin-1).
    fn game_text(&self, py: Python<'_>, i: i64) -> PyResult<String> {
        Ok(chesspack::pgn::text(&self.game_bytes(py, i)?).into_owned())
    }

    /// block_games(block) -> list[str]
    ///
    /// The PGN texts of every game of a block (0-based), by the library's
    /// one rule (`chesspack::pgn::text`).
    fn block_games(&self, py: Python<'_>, block: usize) -> PyResult<Vec<String>> {
        let payload = self.payload(block)?;
        Ok(self
            .texts(py, &payload)?
            .iter()
            .map(|t| chesspack::pgn::text(t).into_owned())
            .collect())
    }

    /// read_block(block, pgn=False, columns=None) -> pyarrow.RecordBatch
    ///
    /// The games of a block as rows: game (0-based number), the tag
    /// columns, other_tags, moves (SAN), clocks (ms), opening_eco,
    /// opening_name and opening_ply (the opening as lichess names it, from
    /// the moves, with or without tags), and pgn when asked; or only
    /// `columns`, in that order. Moves and clocks are decoded straight into
    /// columns (no PGN written and read back; `pgn` writes it); columns of
    /// tags alone decode no moves (but the first plies of games whose `ECO`
    /// or `Opening` the moves give, or whose opening the archive does not
    /// store, when those columns are asked for).
    #[pyo3(signature = (block, pgn = false, columns = None))]
    fn read_block<'py>(
        &self,
        py: Python<'py>,
        block: usize,
        pgn: bool,
        columns: Option<Vec<String>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let pgn = pgn
            || columns
                .as_ref()
                .is_some_and(|c| c.iter().any(|c| c == "pgn"));
        let schema = rows::schema(pgn);
        if let Some(cols) = &columns
            && let Some(bad) = cols.iter().find(|c| schema.index_of(c).is_err())
        {
            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                "no column {bad:?} (columns: {:?})",
                schema.fields().iter().map(|f| f.name()).collect::<Vec<_>>()
            )));
        }
        let wants = |name: &str| columns.as_ref().is_none_or(|c| c.iter().any(|c| c == name));
        let payload = self.payload(block)?;
        let codec = self.codec.as_ref();
        let first = self.first[block];
        // The `pgn` column needs the texts; its rows are read from them.
        let texts = if pgn {
            Some(self.texts(py, &payload)?)
        } else {
            None
        };
        let batch = py
            .detach(|| -> Result<_, ArchiveError> {
                let rows: Vec<rows::Row> = if let Some(t) = &texts {
                    t.iter().map(|t| rows::read(t)).collect()
                } else if wants("moves") || wants("clocks") {
                    let mut rows = Vec::new();
                    archive::decode_records(codec, &payload, &|_| true, &mut |_, r| rows.push(r))?;
                    // A verbatim game longer than 8 MiB goes on in the next blocks.
                    if let Some(archive::GameRow::Text(text)) = rows.last_mut() {
                        self.lock()
                            .rest_of_game(&payload, &mut |t| text.extend_from_slice(&t))?;
                    }
                    chesspack::Pipeline::default().map(rows, rows::Row::of)
                } else {
                    let tags = if wants("ECO") || wants("Opening") {
                        archive::block_tags(codec, &payload)?
                    } else {
                        archive::block_tags_not_given(&payload)?
                    };
                    let mut rows: Vec<rows::Row> = tags
                        .into_iter()
                        .map(|t| rows::Row::of_tags(t.tags))
                        .collect();
                    // Openings where the block stores them decode no moves.
                    if ["opening_eco", "opening_name", "opening_ply"]
                        .iter()
                        .any(|c| wants(c))
                    {
                        let openings = archive::block_openings(
                            codec,
                            &payload,
                            chesspack::opening::OpeningTable::lichess(),
                        )?;
                        for (row, o) in rows.iter_mut().zip(openings) {
                            row.opening = rows::opening_of(o);
                        }
                    }
                    rows
                };
                Ok(rows::batch(first, &rows, texts.as_deref()))
            })
            .map_err(|e| archive_err(&self.path, e))?
            .map_err(|e| DecodeError::new_err(e.to_string()))?;
        let batch = match &columns {
            None => batch,
            Some(cols) => {
                let at: Vec<usize> = cols
                    .iter()
                    .map(|c| batch.schema().index_of(c))
                    .collect::<Result<_, _>>()
                    .map_err(|e| DecodeError::new_err(e.to_string()))?;
                batch
                    .project(&at)
                    .map_err(|e| DecodeError::new_err(e.to_string()))?
            }
        };
        PyRecordBatch::new(batch).into_pyarrow(py)
    }

    /// search(query, explore=False) -> (pyarrow.RecordBatch, dict)
    ///
    /// `chesspack find` (or, with `explore`, `chesspack explore`) with the
    /// query's keys (`fen`, `moves`, `sub_fen`, `material`, `imbalance`,
    /// `white`, `black`, `player`, `min_elo`, `max_elo`, `result`,
    /// `from_date`, `to_date`, `event`, `eco`, `speed`, `threads`): the
    /// games found (or the moves from the position) and how the archive was
    /// searched.
    #[pyo3(signature = (query, explore = false))]
    fn search<'py>(
        &self,
        py: Python<'py>,
        query: &Bound<'py, PyDict>,
        explore: bool,
    ) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>)> {
        let mut q = crate::search::query(query)?;
        q.explore = explore;
        let found = py
            .detach(|| chesspack::search::find(std::slice::from_mut(&mut *self.lock()), &q))
            .map_err(|e| archive_err(&self.path, e))?;
        let how = how(py, &found)?;
        let batch = if explore {
            crate::search::moves_batch(py, &found.moves)?
        } else {
            crate::search::hits_batch(py, &found.hits)?
        };
        Ok((batch, how))
    }

    /// positions(block, columns=None, threads=None) -> (pyarrow.RecordBatch, list[int])
    ///
    /// Every position of the mainlines of block `block`'s games before a
    /// move, as rows of `columns` (the defaults when None), decoded with
    /// the GIL released on `threads` threads (all cores when None); and the
    /// numbers of the games skipped (stored verbatim).
    #[pyo3(signature = (block, columns = None, threads = None))]
    fn positions<'py>(
        &self,
        py: Python<'py>,
        block: usize,
        columns: Option<Vec<String>>,
        threads: Option<usize>,
    ) -> PyResult<(Bound<'py, PyAny>, Vec<u64>)> {
        let columns = positions::columns(columns)?;
        let payload = self.payload(block)?;
        let codec = self.codec.as_ref();
        let first = self.first[block];
        let mut rows = py
            .detach(|| {
                let decode =
                    || chesspack::datasets::rows::block_positions(codec, &payload, first, &columns);
                crate::batch::on_pool(threads, decode)
            })
            .map_err(|e| archive_err(&self.path, e))?;
        let skipped = std::mem::take(&mut rows.skipped);
        let batch = positions::batch(rows).map_err(|e| DecodeError::new_err(e.to_string()))?;
        Ok((PyRecordBatch::new(batch).into_pyarrow(py)?, skipped))
    }
}

/// How a search went, as a dict: `scanned` (no usable search index),
/// `index_error`, `decoded` and `not_searched` games.
fn how<'py>(py: Python<'py>, found: &chesspack::search::Found) -> PyResult<Bound<'py, PyAny>> {
    let d = pyo3::types::PyDict::new(py);
    d.set_item("scanned", found.scanned)?;
    d.set_item("index_error", found.index_error.clone())?;
    d.set_item("decoded", found.decoded)?;
    d.set_item("not_searched", found.not_searched)?;
    d.set_item("reached", found.reached)?;
    d.set_item("eco", found.opening.map(|o| o.eco))?;
    d.set_item("opening", found.opening.map(|o| o.name))?;
    Ok(d.into_any())
}

/// Counts the bytes read through it.
struct Counting<R> {
    inner: R,
    count: Arc<AtomicU64>,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.count.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

/// Opens an input in any compression format ([`files::decoder`]); its size
/// and a counter of the raw bytes read.
fn open_input(path: &Path) -> PyResult<(Box<dyn BufRead + Send>, u64, Arc<AtomicU64>)> {
    let file = File::open(path).map_err(|e| io_err(path, e))?;
    let size = file.metadata().map(|m| m.len()).unwrap_or(0);
    let count = Arc::new(AtomicU64::new(0));
    let raw = Counting {
        inner: file,
        count: count.clone(),
    };
    let reader = files::decoder(raw).map_err(|e| io_err(path, e))?;
    Ok((reader, size, count))
}

/// A [`files::Output`] to `dst`: written under a temporary name and given
/// its name only when complete, never over an existing file unless
/// `overwrite`.
fn create_output(dst: &Path, overwrite: bool) -> PyResult<files::Output> {
    files::Output::create(dst, overwrite).map_err(|e| match e.kind() {
        io::ErrorKind::AlreadyExists => file_err(io::Error::new(
            e.kind(),
            format!("{e} (overwrite=True replaces it)"),
        )),
        _ => file_err(e),
    })
}

/// Commits `out`, its errors as Python's.
fn commit(out: files::Output) -> PyResult<()> {
    out.commit().map_err(file_err)
}

/// The library's pipeline with `threads` workers (one a core when `None`).
fn pipeline(threads: Option<usize>) -> Pipeline {
    let mut pipeline = Pipeline::default();
    pipeline.threads = threads.unwrap_or(0);
    pipeline
}

/// A progress callback's error kept, to be raised, and the run stopped.
fn stop_on_error(r: PyResult<()>, stopped: &mut Option<PyErr>) -> ControlFlow<()> {
    match r {
        Ok(()) => ControlFlow::Continue(()),
        Err(e) => {
            *stopped = Some(e);
            ControlFlow::Break(())
        }
    }
}

/// Calls `progress(done, total)` with the GIL, if given; its exception
/// stops the work.
fn tick(progress: Option<&Py<PyAny>>, done: u64, total: u64) -> PyResult<()> {
    if let Some(p) = progress {
        Python::attach(|py| p.call1(py, (done, total)).map(|_| ()))?;
    }
    Ok(())
}

/// compress(src, dst, codec=None, threads=None, level=None, block_games=None, overwrite=False, progress=None, derive_eco=False, no_index=False, index_squares=False, index_memory=0) -> dict
///
/// Compresses any chess file the library reads (`chesspack::files::compress`
/// by the file's kind): PGN, positions, engine training data.
/// `progress(done, total)` is called with input bytes as blocks are
/// written. `derive_eco`: a game's `ECO` tag alone is worked out from its
/// first moves when read (`archive::Openings::Named`). Returns the report:
/// kind, codec, items and their unit (with the same count under `games`,
/// `positions` or `lines`), input and output bytes, the games stored
/// verbatim (number, category, detail) and the position lines kept as text.
/// `no_index`: a game archive without its search index; `index_squares`:
/// with each game's squares in it (`files::Settings::index_squares`);
/// `index_memory`: the most bytes building it may take (0: the library's
/// 4 GiB), past which the archive is written without it and the report's
/// `index_left_out` says why (else `None`).
#[pyfunction]
#[pyo3(signature = (src, dst, codec = None, threads = None, level = None, block_games = None, overwrite = false, progress = None, derive_eco = false, no_index = false, index_squares = false, index_memory = 0))]
#[allow(clippy::too_many_arguments)]
fn compress<'py>(
    py: Python<'py>,
    src: PathBuf,
    dst: PathBuf,
    codec: Option<String>,
    threads: Option<usize>,
    level: Option<i32>,
    block_games: Option<usize>,
    overwrite: bool,
    progress: Option<Py<PyAny>>,
    derive_eco: bool,
    no_index: bool,
    index_squares: bool,
    index_memory: u64,
) -> PyResult<Bound<'py, PyDict>> {
    if src == dst {
        return Err(PyOSError::new_err(format!(
            "{}: input and output are the same file",
            src.display()
        )));
    }
    let kind = files::Kind::of_path(&src).map_err(file_err)?;
    let mut settings = files::Settings::default();
    settings.codec = codec;
    settings.pipeline = pipeline(threads);
    settings.archive.level = level.unwrap_or(settings.archive.level);
    settings.archive.block_games = block_games.unwrap_or(settings.archive.block_games);
    if derive_eco {
        settings.archive.openings = archive::Openings::Named;
    }
    settings.no_index = no_index;
    settings.index_squares = index_squares;
    settings.index_memory = index_memory;
    let (input, total, count) = open_input(&src)?;
    let mut out = create_output(&dst, overwrite)?;
    let name = src.display().to_string();
    let report = py.detach(|| -> PyResult<files::Report> {
        let mut stopped = None;
        let report = files::compress(kind, input, &mut out, &settings, &mut |_| {
            stop_on_error(
                tick(progress.as_ref(), count.load(Ordering::Relaxed), total),
                &mut stopped,
            )
        });
        let report = report.map_err(|e| stopped.take().unwrap_or_else(|| archive_err(&name, e)))?;
        tick(progress.as_ref(), total, total)?;
        Ok(report)
    })?;
    commit(out)?;
    let d = PyDict::new(py);
    d.set_item("kind", format!("{:?}", report.kind).to_lowercase())?;
    d.set_item("codec", &report.codec)?;
    d.set_item("items", report.items)?;
    d.set_item("unit", report.unit())?;
    d.set_item(format!("{}s", report.unit()), report.items)?;
    d.set_item("input_bytes", report.input_bytes)?;
    d.set_item("output_bytes", report.output_bytes)?;
    d.set_item("index_left_out", &report.index_left_out)?;
    d.set_item(
        "verbatim_lines",
        report.positions.as_ref().map_or(0, |p| p.verbatim),
    )?;
    d.set_item(
        "verbatim",
        report
            .games
            .verbatim
            .iter()
            .map(|(n, c, detail)| (*n, *c, detail.clone()))
            .collect::<Vec<_>>(),
    )?;
    Ok(d)
}

/// decompress(src, dst, threads=None, overwrite=False, progress=None) -> int
///
/// Writes the file an archive of any kind was made from
/// (`chesspack::files::decompress`); returns the number of games (or
/// positions, or lines). `progress(done, total)` counts stored bytes.
#[pyfunction]
#[pyo3(signature = (src, dst, threads = None, overwrite = false, progress = None))]
fn decompress(
    py: Python<'_>,
    src: PathBuf,
    dst: PathBuf,
    threads: Option<usize>,
    overwrite: bool,
    progress: Option<Py<PyAny>>,
) -> PyResult<u64> {
    if src == dst {
        return Err(PyOSError::new_err(format!(
            "{}: input and output are the same file",
            src.display()
        )));
    }
    let name = src.display().to_string();
    let file = File::open(&src).map_err(|e| io_err(&src, e))?;
    let mut settings = files::Settings::default();
    settings.pipeline = pipeline(threads);
    let mut out = create_output(&dst, overwrite)?;
    let items = py.detach(|| -> PyResult<u64> {
        let mut stopped = None;
        let report = files::decompress(BufReader::new(file), &mut out, &settings, &mut |p| {
            let total = p.total_bytes.unwrap_or_default();
            stop_on_error(tick(progress.as_ref(), p.bytes, total), &mut stopped)
        });
        let report = report.map_err(|e| stopped.take().unwrap_or_else(|| archive_err(&name, e)))?;
        Ok(report.items)
    })?;
    commit(out)?;
    Ok(items)
}

/// verify(src, threads=None) -> dict
///
/// Checks every block of an archive against its checksum and decodes it.
/// Returns ok (bool), version, codec, blocks, games and the problems found
/// (a list of messages naming the block).
#[pyfunction]
#[pyo3(signature = (src, threads = None))]
fn verify<'py>(
    py: Python<'py>,
    src: PathBuf,
    threads: Option<usize>,
) -> PyResult<Bound<'py, PyDict>> {
    let name = src.display().to_string();
    let file = File::open(&src).map_err(|e| io_err(&src, e))?;
    let mut reader =
        ArchiveReader::open(BufReader::new(file)).map_err(|e| archive_err(&name, e))?;
    let header = reader.header().clone();
    let games = reader.games();
    let n = reader.blocks().len();
    let problems = py.detach(|| -> PyResult<Vec<String>> {
        let report = pipeline(threads)
            .verify(&mut reader, &mut |_| ControlFlow::Continue(()))
            .map_err(|e| archive_err(&name, e))?;
        Ok(report.problems)
    })?;
    let d = PyDict::new(py);
    d.set_item("ok", problems.is_empty())?;
    d.set_item("version", header.version)?;
    d.set_item("codec", header.codec)?;
    d.set_item("model_hash", header.model_hash)?;
    d.set_item("blocks", n)?;
    d.set_item("games", games)?;
    d.set_item("problems", problems)?;
    Ok(d)
}
