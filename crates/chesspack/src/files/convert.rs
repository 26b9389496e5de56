//! One way in: [`compress`] any chess file by its [`Kind`] and
//! [`decompress`] any chesspack archive, with one [`Settings`] and one
//! [`Report`]. The command line, the Python package and the web page call
//! these; none of them chooses a codec by name or a path by file kind.

use std::io::{self, BufRead, Read, Seek, Write};

use super::Kind;
use crate::{
    archive::{
        self, ArchiveError, ArchiveReader, BlockReport, Options,
        pipeline::{Damaged, OnProgress, Pipeline, Progress},
    },
    datasets::{
        self,
        positions::PositionReport,
        training::{self, TrainingReader, TrainingReport},
    },
    game::{
        self, ModelCodec,
        engine_codec::{EngineParams, STREAM_DEPTH_LIMIT},
    },
    opening::{Named, OpeningTable},
};

/// What an archive of engine training data decompresses to.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum TrainingFormat {
    /// The binpack it was made from, byte for byte.
    #[default]
    Binpack,
    /// nnue-pytorch's `.plain` text.
    Plain,
    /// viridithas's viriformat games.
    Viriformat,
    /// bullet's marlinformat positions.
    Marlinformat,
}

/// How [`compress`] and [`decompress`] work: the codec by name, threads,
/// the archive's blocks and level, what to do with an archive as input or
/// with damage.
///
/// ```
/// let mut settings = chesspack::files::Settings::default();
/// settings.codec = Some("fast".into());
/// settings.pipeline.threads = 1;
/// assert_eq!(settings.archive.level, 15);
/// ```
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct Settings {
    /// The move codec ([`game::codec_with`]); `None`: `model` for games,
    /// `fast` for engine training data (`model`, `brisk` or `fast`).
    pub codec: Option<String>,
    /// The engine codecs' parameters.
    pub engine: EngineParams,
    /// Worker threads (0: one a core) and, when decompressing, whether
    /// damaged blocks, a damaged index or header are left out or read from
    /// their copies instead of stopping the run.
    pub pipeline: Pipeline,
    /// A game archive's blocks, zstd level (position archives' too) and
    /// openings.
    pub archive: Options,
    /// Compress an archive as if it were PGN text instead of refusing it.
    pub force: bool,
    /// What an archive of engine training data decompresses to.
    pub training: TrainingFormat,
    /// Leave the search index ([`crate::search`]) out of a game archive
    /// (it is left out of one of fewer than 32 games anyway: a query
    /// decodes them as fast as it reads an index, which would cost more
    /// bytes than their moves).
    pub no_index: bool,
    /// Keep in the search index, for each game, the squares each piece
    /// stood on (in three parts of the game): sub-FENs, and positions that
    /// many games' states allow, then decode only the games whose pieces
    /// stood on their squares in one part; the index grows about three
    /// times (see docs/search.md).
    pub index_squares: bool,
    /// The most memory, in bytes, that building the search index may take
    /// (0: 4 GiB, about five million master games): past it the archive
    /// is written without the index, which [`Report::index_left_out`]
    /// says. The memory is worked out from the games, never asked of the
    /// system, so an input gives the same archive on every machine.
    pub index_memory: u64,
}

/// What [`compress`] or [`decompress`] did, for any kind of file.
#[derive(Debug)]
#[non_exhaustive]
pub struct Report {
    /// What the input is (compress) or the archive holds (decompress):
    /// [`Kind::Games`], [`Kind::Positions`], [`Kind::Binpack`] and the like.
    pub kind: Kind,
    /// The move or position codec's name.
    pub codec: String,
    /// Games, positions of engine training data, or lines of a position
    /// file ([`Report::unit`]).
    pub items: u64,
    /// Bytes read and written.
    pub input_bytes: u64,
    /// Bytes written.
    pub output_bytes: u64,
    /// Games: the summed block reports (games stored verbatim, each
    /// column's bytes).
    pub games: BlockReport,
    /// Position files: lines kept as text, bits.
    pub positions: Option<PositionReport>,
    /// Engine training data: chains, bits of moves and scores.
    pub training: Option<TrainingReport>,
    /// Decompress: blocks left out as damaged, in order.
    pub damaged: Vec<Damaged>,
    /// Decompress: why the header was read from its copy in the index.
    pub header_error: Option<String>,
    /// Decompress: why the index was missing or damaged (the blocks were
    /// found by a scan, and games after the last whole block are lost).
    pub index_error: Option<String>,
    /// Compress: why the search index was left out of an archive that
    /// would have had one ([`Settings::index_memory`]).
    pub index_left_out: Option<String>,
}

impl Report {
    fn new(kind: Kind) -> Report {
        Report {
            kind,
            codec: String::new(),
            items: 0,
            input_bytes: 0,
            output_bytes: 0,
            games: BlockReport::default(),
            positions: None,
            training: None,
            damaged: Vec::new(),
            header_error: None,
            index_error: None,
            index_left_out: None,
        }
    }

    /// What [`Report::items`] counts: `game`, `position` or `line`.
    pub fn unit(&self) -> &'static str {
        match self.kind {
            Kind::Positions | Kind::PositionArchive => "line",
            Kind::Binpack | Kind::Plain | Kind::Viriformat | Kind::TrainingArchive => "position",
            _ => "game",
        }
    }

    /// Whether a decompress left anything out (damaged blocks, or games
    /// after the last whole block where the index was lost).
    pub fn lost_data(&self) -> bool {
        !self.damaged.is_empty() || self.index_error.is_some()
    }
}

/// Counts the bytes read where others can see them.
struct Tallied<'a, T> {
    inner: T,
    bytes: &'a std::sync::atomic::AtomicU64,
}

impl<T: Read> Read for Tallied<'_, T> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.bytes
            .fetch_add(n as u64, std::sync::atomic::Ordering::Relaxed);
        Ok(n)
    }
}

/// Counts the bytes that pass.
struct Counted<T> {
    inner: T,
    bytes: u64,
}

impl<T: Read> Read for Counted<T> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.bytes += n as u64;
        Ok(n)
    }
}

impl<T: BufRead> BufRead for Counted<T> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        self.inner.fill_buf()
    }

    fn consume(&mut self, n: usize) {
        self.bytes += n as u64;
        self.inner.consume(n);
    }
}

impl<T: Write> Write for Counted<T> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.bytes += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// Compresses `input`, a file of kind `kind` ([`Kind::of_path`]; PGN for
/// anything that is not positions or engine training data), into an
/// archive on `output`: games with the codec `settings` names on its
/// pipeline's threads, positions with `position-model`, engine training
/// data with `fast` (or `model`, `brisk`). `progress` is called after each
/// block of games.
///
/// ```
/// use chesspack::files::{self, Kind, Settings};
///
/// let pgn = b"[Result \"1-0\"]\n\n1. e4 e5 2. Qh5 Nc6 3. Bc4 Nf6 4. Qxf7# 1-0\n";
/// let mut packed = Vec::new();
/// let report = files::compress(Kind::Games, &pgn[..], &mut packed, &Settings::default(), &mut |_| {
///     std::ops::ControlFlow::Continue(())
/// })
/// .unwrap();
/// assert_eq!((report.items, report.unit(), report.codec.as_str()), (1, "game", "model"));
/// assert_eq!(report.output_bytes, packed.len() as u64);
///
/// let fens = b"8/8/8/4k3/8/8/8/4K3 w - - 0 1\n";
/// let mut packed = Vec::new();
/// let report = files::compress(Kind::Positions, &fens[..], &mut packed, &Settings::default(), &mut |_| {
///     std::ops::ControlFlow::Continue(())
/// })
/// .unwrap();
/// assert_eq!((report.items, report.unit()), (1, "line"));
/// ```
///
/// Input given as [`Kind::Games`] whose first bytes are an archive's or a
/// binpack's (standard input, a file named otherwise) is taken as what
/// they say.
///
/// # Errors
///
/// [`ArchiveError::AlreadyAnArchive`] for an archive unless
/// [`Settings::force`]; [`ArchiveError::Codec`] for a codec that is not
/// there, [`ArchiveError::Settings`] for an engine depth that archives do
/// not decode; an I/O error or [`ArchiveError::Stopped`].
pub fn compress(
    kind: Kind,
    mut input: impl BufRead,
    output: impl Write,
    settings: &Settings,
    progress: OnProgress<'_>,
) -> Result<Report, ArchiveError> {
    // Games by default (stdin, a name that says nothing) whose first bytes
    // say what they are: an archive, a binpack.
    let kind = match kind {
        Kind::Games => {
            let head = input.fill_buf()?;
            Kind::of("", &head[..head.len().min(8)])
        }
        _ => kind,
    };
    let archived = matches!(
        kind,
        Kind::GameArchive | Kind::PositionArchive | Kind::TrainingArchive
    );
    if archived && !settings.force {
        return Err(ArchiveError::AlreadyAnArchive);
    }
    let mut input = Counted {
        inner: input,
        bytes: 0,
    };
    let mut output = Counted {
        inner: output,
        bytes: 0,
    };
    let mut report = Report::new(if archived { Kind::Games } else { kind });
    match report.kind {
        Kind::Positions => {
            let r = datasets::positions::compress(&mut input, &mut output, settings.archive.level)?;
            report.codec = "position-model".into();
            report.items = r.lines;
            report.positions = Some(r);
        }
        Kind::Binpack | Kind::Plain | Kind::Viriformat => {
            let codec = ModelCodec::named(settings.codec.as_deref().unwrap_or("fast"))?;
            let threads = settings.pipeline.threads;
            let r = if kind == Kind::Viriformat {
                training::compress_viriformat(&mut input, &mut output, &codec, threads)
            } else {
                training::compress(&mut input, &mut output, &codec, threads)
            }?;
            report.codec = crate::game::GameCodec::name(&codec).into();
            report.items = r.positions;
            report.training = Some(r);
        }
        _ => {
            let name = settings.codec.as_deref().unwrap_or("model");
            let codec = game::codec_with(name, &settings.engine)?;
            if name.starts_with("engine-") && settings.engine.depth > STREAM_DEPTH_LIMIT {
                // Archives decode with the default codec, which refuses
                // deeper streams (see `EngineCodec`).
                return Err(ArchiveError::Settings(format!(
                    "engine depth {} is deeper than archives decode (at most {STREAM_DEPTH_LIMIT})",
                    settings.engine.depth
                )));
            }
            let mut index = (!settings.no_index).then(|| {
                crate::search::IndexBuilder::new(settings.index_squares)
                    .limit(settings.index_memory)
            });
            let r = settings.pipeline.compress(
                &mut input,
                &mut output,
                codec.as_ref(),
                &settings.archive,
                index
                    .as_mut()
                    .map(|b| b as &mut dyn archive::pipeline::SectionBuilder),
                progress,
            )?;
            report.codec = codec.name().into();
            report.items = r.games;
            report.games = r;
            report.index_left_out = index.and_then(|b| b.left_out());
        }
    }
    report.input_bytes = input.bytes;
    report.output_bytes = output.bytes;
    Ok(report)
}

/// Decompresses the chesspack archive `input` (of any kind: games,
/// positions, engine training data, told by its first bytes) onto
/// `output`: the file it was made from, or for engine training data the
/// format [`Settings::training`] names. `progress` is called after each
/// block of games.
///
/// A game archive whose header is damaged is read from the header's copy,
/// and one whose index is lost from its blocks, only with
/// [`Pipeline::skip_damaged`], which leaves damaged blocks out too: the
/// report says what.
///
/// ```
/// use chesspack::files::{self, Kind, Settings};
///
/// let pgn = b"1. d4 d5 *\n";
/// let mut packed = Vec::new();
/// let go = &mut |_: &_| std::ops::ControlFlow::Continue(());
/// files::compress(Kind::Games, &pgn[..], &mut packed, &Settings::default(), go).unwrap();
/// let mut text = Vec::new();
/// let report = files::decompress(std::io::Cursor::new(&packed), &mut text, &Settings::default(), go).unwrap();
/// assert_eq!((text.as_slice(), report.kind, report.items), (&pgn[..], Kind::GameArchive, 1));
/// ```
///
/// # Errors
///
/// [`ArchiveError::NotAnArchive`] for anything else; the first damaged
/// block, a damaged header ([`ArchiveError::Header`]) or index
/// ([`ArchiveError::Index`]) unless skipped; an I/O error or
/// [`ArchiveError::Stopped`].
pub fn decompress(
    mut input: impl Read + Seek,
    output: impl Write,
    settings: &Settings,
    progress: OnProgress<'_>,
) -> Result<Report, ArchiveError> {
    let mut head = [0u8; 8];
    let n = read_head(&mut input, &mut head)?;
    input.seek(io::SeekFrom::Start(0))?;
    let kind = Kind::of("", &head[..n]);
    if settings.training != TrainingFormat::Binpack && kind != Kind::TrainingArchive {
        return Err(ArchiveError::Settings(
            "plain text, viriformat and marlinformat are for archives of engine training data"
                .into(),
        ));
    }
    let mut output = Counted {
        inner: output,
        bytes: 0,
    };
    let mut report = Report::new(kind);
    match kind {
        Kind::PositionArchive => {
            report.codec = "position-model".into();
            report.items = datasets::positions::decompress(input, &mut output)?;
        }
        Kind::TrainingArchive => {
            report.items = decompress_training(input, &mut output, settings)?;
        }
        _ => {
            let mut reader = ArchiveReader::open(input)?;
            report.header_error = reader.header_error().map(str::to_owned);
            if let Some(why) = &report.header_error
                && !settings.pipeline.skip_damaged
            {
                return Err(ArchiveError::Header(why.clone()));
            }
            report.codec = reader.codec().name().into();
            let r = settings
                .pipeline
                .decompress(&mut reader, &mut output, progress)?;
            report.items = r.games;
            report.damaged = r.damaged;
            report.index_error = r.index_error;
        }
    }
    report.output_bytes = output.bytes;
    Ok(report)
}

/// A chesspack archive opened as what it holds ([`open`]).
#[non_exhaustive]
pub enum Opened<R> {
    /// Games, read by the archive's reader (which says where its header or
    /// index is damaged: [`ArchiveReader::header_error`],
    /// [`ArchiveReader::index_error`]).
    Games(ArchiveReader<R>),
    /// Positions: the archive's text, every block decoded and checked, by
    /// lines.
    Positions(Lines),
    /// Engine training data: [`decompress`] gives its binpack back, and
    /// the Python package reads its rows.
    Training,
}

/// The lines of a text without their line ends (LF or CR LF), as
/// [`open`] gives a position archive's: line `i` (0-based) is its
/// `i + 1`-th position.
#[derive(Clone, Debug)]
pub struct Lines {
    text: Vec<u8>,
    /// Where each line starts, and one past the last line's end.
    starts: Vec<usize>,
}

impl Lines {
    fn of(text: Vec<u8>) -> Lines {
        let mut starts = vec![0];
        starts.extend(
            text.iter()
                .enumerate()
                .filter(|&(_, &b)| b == b'\n')
                .map(|(i, _)| i + 1),
        );
        // A text that does not end a line has one more.
        if starts.last() != Some(&text.len()) {
            starts.push(text.len() + 1);
        }
        Lines { text, starts }
    }

    /// How many lines there are.
    pub fn len(&self) -> usize {
        self.starts.len() - 1
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Line `i` (0-based) without its line end.
    pub fn get(&self, i: usize) -> Option<&[u8]> {
        let (&start, &next) = (self.starts.get(i)?, self.starts.get(i + 1)?);
        let line = &self.text[start..(next - 1).min(self.text.len())];
        Some(line.strip_suffix(b"\r").unwrap_or(line))
    }

    /// Every line in order.
    pub fn iter(&self) -> impl Iterator<Item = &[u8]> {
        (0..self.len()).filter_map(|i| self.get(i))
    }
}

/// Opens the chesspack archive `input` as what it holds (told by its
/// first bytes, a damaged magic byte included, as [`Kind::of`] tells
/// them): the front ends' one way to read an archive, so that every
/// command agrees on what a file is.
///
/// ```
/// use chesspack::files::{self, Kind, Opened, Settings};
/// use std::io::Cursor;
///
/// let go = &mut |_: &_| std::ops::ControlFlow::Continue(());
/// let mut packed = Vec::new();
/// let fens = b"8/8/8/4k3/8/8/8/4K2R w K - 0 1\r\n8/8/8/8/8/8/8/K1k5 b - - 0 1\n";
/// files::compress(Kind::Positions, &fens[..], &mut packed, &Settings::default(), go).unwrap();
/// let Ok(Opened::Positions(lines)) = files::open(Cursor::new(&packed)) else { panic!() };
/// assert_eq!(lines.len(), 2);
/// assert_eq!(lines.get(1), Some(&b"8/8/8/8/8/8/8/K1k5 b - - 0 1"[..]));
///
/// let mut games = Vec::new();
/// files::compress(Kind::Games, &b"1. e4 *\n"[..], &mut games, &Settings::default(), go).unwrap();
/// let Ok(Opened::Games(reader)) = files::open(Cursor::new(&games)) else { panic!() };
/// assert_eq!(reader.games(), 1);
/// assert!(files::open(Cursor::new(b"1. e4 *\n")).is_err());
/// ```
///
/// # Errors
///
/// [`ArchiveError::NotAnArchive`] for anything else; a position archive
/// with a damaged block; an I/O error. A game archive whose header or
/// index is damaged opens (its reader says so).
pub fn open<R: Read + Seek>(mut input: R) -> Result<Opened<R>, ArchiveError> {
    let mut head = [0u8; 8];
    let n = read_head(&mut input, &mut head)?;
    input.seek(io::SeekFrom::Start(0))?;
    match Kind::of("", &head[..n]) {
        Kind::GameArchive => Ok(Opened::Games(ArchiveReader::open(input)?)),
        Kind::PositionArchive => {
            let mut text = Vec::new();
            datasets::positions::decompress(input, &mut text)?;
            Ok(Opened::Positions(Lines::of(text)))
        }
        Kind::TrainingArchive => Ok(Opened::Training),
        _ => Err(ArchiveError::NotAnArchive),
    }
}

/// The opening `table` names for each game of `input`, in order: a game
/// archive's games, or PGN (also compressed), told by the first bytes and
/// the file's `name` as [`Kind::of`] tells them (`""` for stdin: a file
/// named `.chpk` is an archive, damaged or not, never PGN).
/// `row` gets each game's number (from 1, as `get` numbers them) and its
/// opening, if any; `progress` the bytes read so far (of the archive's
/// blocks, or of the PGN as stored) and their total.
///
/// A game archive whose header or index is damaged is refused unless
/// [`Pipeline::skip_damaged`]: then the report says why
/// ([`Report::header_error`], [`Report::index_error`]) and the blocks
/// found are read. PGN games that are not standard chess get no opening
/// and are listed in the report's [`BlockReport::verbatim`] with why.
///
/// ```
/// use chesspack::{files::{self, Settings}, opening::OpeningTable};
/// use std::{io::Cursor, ops::ControlFlow};
///
/// let pgn = b"1. e4 c5 *\n\n1. e4 e5 2. Kf3 *\n";
/// let mut rows = Vec::new();
/// let report = files::classify(
///     "games.pgn",
///     Cursor::new(&pgn[..]),
///     OpeningTable::lichess(),
///     &Settings::default(),
///     &mut |game, opening| {
///         rows.push((game, opening.map(|o| o.eco)));
///         Ok(())
///     },
///     &mut |_| ControlFlow::Continue(()),
/// )
/// .unwrap();
/// assert_eq!(rows, [(1, Some("B20")), (2, None)]);
/// assert_eq!((report.items, report.games.verbatim.len()), (2, 1));
/// ```
///
/// # Errors
///
/// A position or training archive (they hold no games); a damaged
/// archive as above, or a damaged block; an error of `row` or of reading;
/// [`ArchiveError::Stopped`].
pub fn classify<'t, R: Read + Seek + Send>(
    name: &str,
    mut input: R,
    table: &'t OpeningTable,
    settings: &Settings,
    row: &mut dyn FnMut(u64, Option<Named<'t>>) -> io::Result<()>,
    progress: OnProgress<'_>,
) -> Result<Report, ArchiveError> {
    let total = input.seek(io::SeekFrom::End(0))?;
    input.seek(io::SeekFrom::Start(0))?;
    let mut head = [0u8; 8];
    let n = read_head(&mut input, &mut head)?;
    input.seek(io::SeekFrom::Start(0))?;
    let kind = Kind::of(name, &head[..n]);
    let mut report = Report::new(kind);
    let mut tick = |report: &Report, blocks: usize, bytes: u64| match progress(&Progress {
        blocks,
        games: report.items,
        bytes,
        total_bytes: Some(total),
    }) {
        std::ops::ControlFlow::Continue(()) => Ok(()),
        std::ops::ControlFlow::Break(()) => Err(ArchiveError::Stopped),
    };
    match kind {
        Kind::PositionArchive => Err(ArchiveError::Settings(
            "an archive of positions: it holds no games to classify".into(),
        )),
        Kind::TrainingArchive => Err(ArchiveError::Settings(
            "an archive of engine training data: it holds no games to classify".into(),
        )),
        Kind::Positions => Err(ArchiveError::Settings(
            "a file of positions: it holds no games to classify".into(),
        )),
        Kind::Binpack | Kind::Plain | Kind::Viriformat => Err(ArchiveError::Settings(
            "engine training data: it holds no games to classify".into(),
        )),
        Kind::GameArchive => {
            let mut reader = ArchiveReader::open(input)?;
            report.header_error = reader.header_error().map(str::to_owned);
            report.index_error = reader.index_error().map(str::to_owned);
            if !settings.pipeline.skip_damaged {
                if let Some(why) = &report.header_error {
                    return Err(ArchiveError::Header(why.clone()));
                }
                if let Some(why) = &report.index_error {
                    return Err(ArchiveError::Index(why.clone()));
                }
            }
            report.codec = reader.codec().name().into();
            let mut bytes = 0;
            for b in 0..reader.blocks().len() {
                let block = reader.read_block(b)?;
                for (g, o) in archive::block_openings(reader.codec(), &block, table)?
                    .into_iter()
                    .enumerate()
                {
                    row(reader.first_game(b) + g as u64, o)?;
                    report.items += 1;
                }
                bytes += u64::from(reader.blocks()[b].len);
                tick(&report, b + 1, bytes)?;
            }
            Ok(report)
        }
        _ => {
            let read = std::sync::atomic::AtomicU64::new(0);
            let bytes = || read.load(std::sync::atomic::Ordering::Relaxed);
            let counted = Tallied {
                inner: input,
                bytes: &read,
            };
            for game in crate::pgn::GameReader::new(super::decoder(counted)?) {
                let opening = match &game {
                    Ok(g) => table.classify(&g.start, &g.moves),
                    Err(skipped) => {
                        let why = skipped.reason.clone();
                        report.games.verbatim.push((skipped.number, "skipped", why));
                        None
                    }
                };
                report.items += 1;
                row(report.items, opening)?;
                if report.items.is_multiple_of(1024) {
                    tick(&report, 0, bytes())?;
                }
            }
            report.input_bytes = bytes();
            tick(&report, 0, bytes())?;
            Ok(report)
        }
    }
}

/// The first bytes of `input`, as many as there are up to `head`'s size.
fn read_head(input: &mut impl Read, head: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < head.len() {
        match input.read(&mut head[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// An archive of engine training data as [`Settings::training`] says;
/// returns its positions.
fn decompress_training(
    input: impl Read + Seek,
    mut output: impl Write,
    settings: &Settings,
) -> Result<u64, ArchiveError> {
    if settings.training == TrainingFormat::Binpack {
        return training::decompress(input, output, settings.pipeline.threads);
    }
    let mut reader = TrainingReader::open(io::BufReader::new(input))?;
    for b in 0..reader.blocks() {
        let bytes = match settings.training {
            TrainingFormat::Plain => reader.rows(b)?.to_plain().into_bytes(),
            TrainingFormat::Viriformat => reader.viriformat(b)?,
            _ => reader.marlinformat(b)?,
        };
        output.write_all(&bytes)?;
    }
    output.flush()?;
    Ok(reader.positions())
}
