//! Files as every front end meets them: inputs in any compression format,
//! telling what a file holds, and outputs that appear only when complete.
//!
//! The command line, the Python package and the web page all use these, so
//! they accept the same inputs and write outputs the same way.
//!
//! ```
//! use std::io::Read;
//! use chesspack::files::{self, Kind};
//!
//! let packed = zstd::encode_all(&b"1. e4 e5 *\n"[..], 3).unwrap();
//! let mut text = String::new();
//! files::decoder(&packed[..]).unwrap().read_to_string(&mut text).unwrap();
//! assert_eq!(text, "1. e4 e5 *\n");
//! assert_eq!(Kind::of("games.pgn", text.as_bytes()), Kind::Games);
//! assert_eq!(Kind::of("puzzles.csv.zst", &packed), Kind::Positions);
//! ```

mod convert;

pub use convert::{
    Lines, Opened, Report, Settings, TrainingFormat, classify, compress, decompress, open,
};

use std::{
    fs::{self, File},
    io::{self, BufRead, BufReader, BufWriter, Read, Write},
    path::{Path, PathBuf},
    sync::{Mutex, MutexGuard},
};

/// What a file holds, told by its first bytes and then its name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Kind {
    /// A `.chpk` archive of games.
    GameArchive,
    /// An archive of positions.
    PositionArchive,
    /// Positions: FEN or EPD lines, or a CSV with a `FEN` column (`.csv`,
    /// `.epd`, `.fen`, also compressed).
    Positions,
    /// PGN text, or anything else: read as games.
    Games,
    /// Stockfish's engine training data (`.binpack`, also compressed, or
    /// a file that starts with a binpack chunk).
    Binpack,
    /// An archive of engine training data ([`crate::datasets::training`]).
    TrainingArchive,
    /// nnue-pytorch's `.plain` training data (also compressed).
    Plain,
    /// viriformat games, the viridithas engine's training data (`.vf`,
    /// `.viri`, `.viriformat`, also compressed).
    Viriformat,
}

impl Kind {
    /// The kind of a file named `name` whose first bytes (up to 8 are
    /// enough) are `head`.
    ///
    /// An archive is told by its magic bytes, and also where one of them
    /// is damaged (a byte changed; the three archives' magics differ in
    /// three or more): such a file is opened as the archive it is, whose
    /// reader says what is damaged, never read as PGN. A file named
    /// `.chpk` is a game archive whatever its first bytes.
    pub fn of(name: &str, head: &[u8]) -> Kind {
        let archives = [
            (crate::archive::MAGIC, Kind::GameArchive),
            (crate::datasets::positions::MAGIC, Kind::PositionArchive),
            (crate::datasets::training::MAGIC, Kind::TrainingArchive),
        ];
        for (magic, kind) in archives {
            let differ = magic.iter().zip(head).filter(|(a, b)| a != b).count();
            if head.len() >= magic.len() && differ <= 1 {
                return kind;
            }
        }
        if head.starts_with(crate::binpack::CHUNK_MAGIC) {
            return Kind::Binpack;
        }
        let name = name.to_ascii_lowercase();
        if name.ends_with(".chpk") {
            return Kind::GameArchive;
        }
        let name = COMPRESSED
            .iter()
            .find_map(|(ext, _)| name.strip_suffix(ext))
            .unwrap_or(&name);
        if [".csv", ".epd", ".fen"].iter().any(|e| name.ends_with(e)) {
            Kind::Positions
        } else if name.ends_with(".binpack") {
            Kind::Binpack
        } else if name.ends_with(".plain") {
            Kind::Plain
        } else if [".vf", ".viri", ".viriformat"]
            .iter()
            .any(|e| name.ends_with(e))
        {
            Kind::Viriformat
        } else {
            Kind::Games
        }
    }

    /// The kind of the file at `path`, by its first bytes and its name.
    ///
    /// # Errors
    ///
    /// An error opening or reading the file, naming it.
    pub fn of_path(path: &Path) -> io::Result<Kind> {
        let mut head = [0u8; 8];
        let mut n = 0;
        let mut file = File::open(path).map_err(|e| {
            io::Error::new(e.kind(), format!("cannot open {}: {e}", path.display()))
        })?;
        while n < head.len() {
            match file.read(&mut head[n..]) {
                Ok(0) => break,
                Ok(k) => n += k,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    return Err(io::Error::new(
                        e.kind(),
                        format!("cannot read {}: {e}", path.display()),
                    ));
                }
            }
        }
        Ok(Kind::of(&path.to_string_lossy(), &head[..n]))
    }
}

/// The compressed formats an input may come in: their file name endings and
/// first bytes.
const COMPRESSED: [(&str, &[u8]); 4] = [
    (".zst", &[0x28, 0xb5, 0x2f, 0xfd]),
    (".gz", &[0x1f, 0x8b]),
    (".bz2", b"BZh"),
    (".xz", &[0xfd, b'7', b'z', b'X', b'Z', 0]),
];

/// `raw` decompressed when it is zstd, gzip, bzip2 or xz (told by its
/// first bytes, so stdin works too; files of several members or frames, as
/// parallel compressors write them, are read whole), or as it is.
///
/// gzip, bzip2 and xz need the `compression` feature (on by default);
/// without it such input is an error that names the format.
///
/// # Errors
///
/// A read error of the first bytes, or a compressed format that this build
/// cannot read.
pub fn decoder<'a>(raw: impl Read + Send + 'a) -> io::Result<Box<dyn BufRead + Send + 'a>> {
    let mut raw = BufReader::with_capacity(1 << 16, raw);
    let head = loop {
        match raw.fill_buf() {
            Ok(head) => break head,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
    };
    let format = COMPRESSED
        .iter()
        .position(|(_, magic)| head.starts_with(magic));
    let buffered = |r: Box<dyn Read + Send + 'a>| -> Box<dyn BufRead + Send + 'a> {
        Box::new(BufReader::with_capacity(1 << 16, r))
    };
    Ok(match format {
        Some(0) => buffered(Box::new(zstd::Decoder::with_buffer(raw)?)),
        #[cfg(feature = "compression")]
        Some(1) => buffered(Box::new(flate2::bufread::MultiGzDecoder::new(raw))),
        #[cfg(feature = "compression")]
        Some(2) => buffered(Box::new(bzip2::bufread::MultiBzDecoder::new(raw))),
        #[cfg(feature = "compression")]
        Some(3) => buffered(Box::new(liblzma::bufread::XzDecoder::new_multi_decoder(
            raw,
        ))),
        #[cfg(not(feature = "compression"))]
        Some(i) => {
            return Err(io::Error::new(
                io::ErrorKind::Unsupported,
                format!(
                    "{} input needs chesspack's `compression` feature",
                    &COMPRESSED[i].0[1..]
                ),
            ));
        }
        _ => Box::new(raw),
    })
}

/// The temporary files of outputs being written, for
/// [`remove_temporaries`].
static TEMPORARY: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

fn temporary() -> MutexGuard<'static, Vec<PathBuf>> {
    TEMPORARY.lock().unwrap_or_else(|p| p.into_inner())
}

/// Removes the temporary files of every [`Output`] not yet committed: for a
/// signal handler, before the process exits without unwinding.
pub fn remove_temporaries() {
    for tmp in temporary().drain(..) {
        let _ = fs::remove_file(tmp);
    }
}

/// A file written under a temporary name beside it (`.NAME.PID.tmp`) and
/// given its name only by [`Output::commit`]: readers never see half a
/// file, and a failed or interrupted run leaves none. A device or pipe
/// (`/dev/null`, a fifo) is written in place.
///
/// ```
/// use std::io::Write;
/// use chesspack::files::Output;
///
/// let dir = std::env::temp_dir().join(format!("chesspack-doc-{}", std::process::id()));
/// std::fs::create_dir_all(&dir).unwrap();
/// let path = dir.join("out.pgn");
/// let mut out = Output::create(&path, false).unwrap();
/// out.write_all(b"1. e4 *\n").unwrap();
/// assert!(!path.exists());
/// out.commit().unwrap();
/// assert_eq!(std::fs::read(&path).unwrap(), b"1. e4 *\n");
/// assert!(Output::create(&path, false).is_err());
/// std::fs::remove_dir_all(&dir).unwrap();
/// ```
#[derive(Debug)]
pub struct Output {
    /// `None` once committed.
    w: Option<BufWriter<File>>,
    /// The temporary file; `None` for a device or pipe.
    tmp: Option<PathBuf>,
    path: PathBuf,
    overwrite: bool,
    /// Stale temporary files removed by `create`.
    removed: Vec<PathBuf>,
}

impl Output {
    /// An output to `path`, which must not exist unless `overwrite`.
    ///
    /// Temporary files that runs of processes no longer alive left beside
    /// `path` (killed, or a power cut) are removed first.
    ///
    /// # Errors
    ///
    /// [`io::ErrorKind::AlreadyExists`] when `path` exists and not
    /// `overwrite`; an error creating the temporary file. Messages name
    /// `path`.
    pub fn create(path: &Path, overwrite: bool) -> io::Result<Output> {
        let named = |e: io::Error| {
            io::Error::new(e.kind(), format!("cannot create {}: {e}", path.display()))
        };
        if let Ok(meta) = fs::metadata(path) {
            if !meta.is_file() && !meta.is_dir() {
                let file = fs::OpenOptions::new()
                    .write(true)
                    .open(path)
                    .map_err(named)?;
                return Ok(Output {
                    w: Some(BufWriter::new(file)),
                    tmp: None,
                    path: path.to_owned(),
                    overwrite,
                    removed: Vec::new(),
                });
            }
            if !overwrite {
                return Err(io::Error::new(
                    io::ErrorKind::AlreadyExists,
                    format!("{} exists", path.display()),
                ));
            }
        }
        let name = path.file_name().ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{} is not a file name", path.display()),
            )
        })?;
        let removed = sweep_stale(path, name);
        let mut tmp_name = std::ffi::OsString::from(".");
        tmp_name.push(name);
        tmp_name.push(format!(".{}.tmp", std::process::id()));
        let tmp = path.with_file_name(tmp_name);
        temporary().push(tmp.clone());
        let file = File::create(&tmp).map_err(|e| {
            temporary().retain(|t| *t != tmp);
            named(e)
        })?;
        Ok(Output {
            w: Some(BufWriter::with_capacity(1 << 20, file)),
            tmp: Some(tmp),
            path: path.to_owned(),
            overwrite,
            removed,
        })
    }

    /// The temporary files that runs no longer alive had left beside the
    /// output, which [`Output::create`] removed (for a message).
    pub fn removed(&self) -> &[PathBuf] {
        &self.removed
    }

    /// Writes out what is buffered, syncs the file and gives it its name:
    /// over an existing file only with `overwrite` (a file that appeared
    /// meanwhile is kept otherwise).
    ///
    /// # Errors
    ///
    /// A write, sync or rename error, or [`io::ErrorKind::AlreadyExists`];
    /// messages name the output. The temporary file is removed either way.
    pub fn commit(mut self) -> io::Result<()> {
        let named = |e: io::Error, what: &str| {
            io::Error::new(
                e.kind(),
                format!("cannot {what} {}: {e}", self.path.display()),
            )
        };
        let w = self.w.take().expect("open until committed");
        let Some(tmp) = self.tmp.take() else {
            return w
                .into_inner()
                .map(drop)
                .map_err(|e| named(e.into_error(), "write"));
        };
        let done = (|| {
            let file = w.into_inner().map_err(|e| named(e.into_error(), "write"))?;
            file.sync_all().map_err(|e| named(e, "write"))?;
            drop(file);
            if self.overwrite {
                fs::rename(&tmp, &self.path).map_err(|e| named(e, "create"))
            } else {
                // A hard link never replaces a file.
                match fs::hard_link(&tmp, &self.path) {
                    Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Err(io::Error::new(
                        e.kind(),
                        format!("{} appeared while writing it; kept it", self.path.display()),
                    )),
                    r => r.map_err(|e| named(e, "create")),
                }
            }
        })();
        let _ = fs::remove_file(&tmp);
        temporary().retain(|t| *t != tmp);
        done
    }
}

impl Write for Output {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let path = &self.path;
        self.w
            .as_mut()
            .expect("open until committed")
            .write(buf)
            .map_err(|e| io::Error::new(e.kind(), format!("cannot write {}: {e}", path.display())))
    }

    fn flush(&mut self) -> io::Result<()> {
        let path = &self.path;
        self.w
            .as_mut()
            .expect("open until committed")
            .flush()
            .map_err(|e| io::Error::new(e.kind(), format!("cannot write {}: {e}", path.display())))
    }
}

impl Drop for Output {
    fn drop(&mut self) {
        // Not committed: the run failed.
        if let Some(tmp) = self.tmp.take() {
            self.w = None;
            let _ = fs::remove_file(&tmp);
            temporary().retain(|t| *t != tmp);
        }
    }
}

/// Whether process `pid` runs; `true` where that cannot be told, so that
/// nothing of a live process is removed.
fn process_alive(pid: u32) -> bool {
    if cfg!(target_os = "linux") {
        Path::new("/proc").join(pid.to_string()).exists()
    } else {
        true
    }
}

/// Removes `.NAME.PID.tmp` files beside `path` that processes no longer
/// running left behind; returns them.
fn sweep_stale(path: &Path, name: &std::ffi::OsStr) -> Vec<PathBuf> {
    let mut removed = Vec::new();
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let Ok(entries) = fs::read_dir(dir) else {
        return removed;
    };
    let prefix = format!(".{}.", name.to_string_lossy());
    for entry in entries.flatten() {
        let file = entry.file_name();
        let file = file.to_string_lossy();
        let Some(pid) = file
            .strip_prefix(&prefix)
            .and_then(|r| r.strip_suffix(".tmp"))
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        if pid != std::process::id() && !process_alive(pid) && fs::remove_file(entry.path()).is_ok()
        {
            removed.push(entry.path());
        }
    }
    removed
}

#[cfg(test)]
mod tests {
    use std::io::Read;

    use super::*;

    fn read_all(data: &[u8]) -> io::Result<Vec<u8>> {
        let mut out = Vec::new();
        decoder(data)?.read_to_end(&mut out)?;
        Ok(out)
    }

    /// The PGN and FEN readers refuse an archive by the bytes every
    /// archive's magic begins with.
    #[test]
    fn every_archive_magic_starts_with_the_tell_the_text_readers_refuse() {
        for magic in [
            &crate::archive::MAGIC[..],
            &crate::datasets::positions::MAGIC[..],
            &crate::datasets::training::MAGIC[..],
        ] {
            assert!(magic.starts_with(crate::pgn::ARCHIVE_TELL), "{magic:?}");
            let games: Vec<_> = crate::pgn::GameReader::new(magic).collect();
            assert!(matches!(&games[..], [Err(e)] if e.reason.contains("chesspack archive")));
            let lines: Vec<_> = crate::position::fen_lines(magic).collect();
            assert!(lines[0].is_err(), "{magic:?}");
        }
        // A binpack by its first chunk's magic.
        assert_eq!(crate::pgn::BINPACK_TELL, crate::binpack::CHUNK_MAGIC);
        // Text that only starts like one is read.
        let games: Vec<_> = crate::pgn::GameReader::new(&b"CHP"[..]).collect();
        assert!(
            games
                .iter()
                .all(|g| !matches!(g, Err(e) if e.reason.contains("archive")))
        );
    }

    #[test]
    fn every_format_decodes_by_its_first_bytes() {
        let text = b"[Event \"?\"]\n\n1. e4 *\n".repeat(50);
        assert_eq!(read_all(&text).unwrap(), text);
        assert_eq!(read_all(b"").unwrap(), b"");
        let zst = zstd::encode_all(&text[..], 3).unwrap();
        assert_eq!(read_all(&zst).unwrap(), text);
        // Two frames, as parallel compressors write them.
        let two = [zst.clone(), zst].concat();
        assert_eq!(read_all(&two).unwrap(), text.repeat(2));
        #[cfg(feature = "compression")]
        {
            let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            gz.write_all(&text).unwrap();
            let gz = gz.finish().unwrap();
            assert_eq!(
                read_all(&[gz.clone(), gz].concat()).unwrap(),
                text.repeat(2)
            );
            let mut bz = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::fast());
            bz.write_all(&text).unwrap();
            assert_eq!(read_all(&bz.finish().unwrap()).unwrap(), text);
            let mut xz = liblzma::write::XzEncoder::new(Vec::new(), 1);
            xz.write_all(&text).unwrap();
            assert_eq!(read_all(&xz.finish().unwrap()).unwrap(), text);
        }
    }

    #[test]
    fn damaged_compressed_input_is_an_error() {
        let zst = zstd::encode_all(&b"1. e4 *\n".repeat(100)[..], 3).unwrap();
        assert!(read_all(&zst[..zst.len() / 2]).is_err());
        #[cfg(feature = "compression")]
        assert!(read_all(&[0x1f, 0x8b, 0, 1, 2]).is_err());
    }

    #[test]
    fn kinds_come_from_magic_bytes_then_names() {
        assert_eq!(Kind::of("x.pgn", crate::archive::MAGIC), Kind::GameArchive);
        assert_eq!(
            Kind::of("x.csv", crate::datasets::positions::MAGIC),
            Kind::PositionArchive
        );
        for name in [
            "a.csv",
            "a.EPD",
            "a.fen.zst",
            "a.csv.gz",
            "a.epd.xz",
            "a.fen.bz2",
        ] {
            assert_eq!(Kind::of(name, b"rnbqkbnr"), Kind::Positions, "{name}");
        }
        for name in ["a.pgn", "a.pgn.zst", "-", "a.csv.7z", "csv"] {
            assert_eq!(Kind::of(name, b"[Event"), Kind::Games, "{name}");
        }
        // A damaged magic is still its archive (issue 69, D4); two bytes
        // changed are not; a `.chpk` name is a game archive.
        for (magic, kind) in [
            (crate::archive::MAGIC, Kind::GameArchive),
            (crate::datasets::positions::MAGIC, Kind::PositionArchive),
            (crate::datasets::training::MAGIC, Kind::TrainingArchive),
        ] {
            for at in 0..8 {
                let mut head = *magic;
                head[at] ^= 0x04;
                assert_eq!(Kind::of("x.pgn", &head), kind, "{at}");
                head[(at + 1) % 8] ^= 0x04;
                assert_eq!(Kind::of("x.pgn", &head), Kind::Games, "{at}");
            }
            assert_eq!(Kind::of("x.pgn", &magic[..7]), Kind::Games);
        }
        assert_eq!(Kind::of("x.CHPK", b"[Event"), Kind::GameArchive);
        let dir = std::env::temp_dir().join(format!("chesspack-kind-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join("a.pgn"), crate::datasets::positions::MAGIC).unwrap();
        fs::write(dir.join("b.csv"), b"").unwrap();
        assert_eq!(
            Kind::of_path(&dir.join("a.pgn")).unwrap(),
            Kind::PositionArchive
        );
        assert_eq!(Kind::of_path(&dir.join("b.csv")).unwrap(), Kind::Positions);
        let err = Kind::of_path(&dir.join("none")).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::NotFound);
        assert!(err.to_string().contains("none"), "{err}");
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn outputs_appear_when_committed_and_vanish_when_dropped() {
        let dir = std::env::temp_dir().join(format!("chesspack-files-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let path = dir.join("a.chpk");
        let listing = || {
            let mut names: Vec<String> = fs::read_dir(&dir)
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            names.sort();
            names
        };
        let mut out = Output::create(&path, false).unwrap();
        out.write_all(b"half").unwrap();
        assert_eq!(listing().len(), 1);
        assert!(listing()[0].starts_with(".a.chpk."), "{:?}", listing());
        drop(out);
        assert!(listing().is_empty());
        let mut out = Output::create(&path, false).unwrap();
        out.write_all(b"whole").unwrap();
        out.commit().unwrap();
        assert_eq!(listing(), ["a.chpk"]);
        let err = Output::create(&path, false).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::AlreadyExists);
        // A file that appears while writing is kept.
        let out = Output::create(&dir.join("b"), false).unwrap();
        fs::write(dir.join("b"), b"theirs").unwrap();
        assert!(out.commit().is_err());
        assert_eq!(fs::read(dir.join("b")).unwrap(), b"theirs");
        let mut out = Output::create(&path, true).unwrap();
        out.write_all(b"again").unwrap();
        out.commit().unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"again");
        // A stale temporary file of a process that no longer runs goes.
        fs::write(dir.join(".c.4000000000.tmp"), b"").unwrap();
        let out = Output::create(&dir.join("c"), false).unwrap();
        assert_eq!(out.removed(), [dir.join(".c.4000000000.tmp")]);
        drop(out);
        assert_eq!(listing(), ["a.chpk", "b"]);
        remove_temporaries();
        fs::remove_dir_all(&dir).unwrap();
    }
}
