//! `compress`, `decompress`, `get`, `list` and `verify`: the `.chpk` archive.

use std::{
    collections::BTreeMap,
    fs::File,
    io::{self, Cursor, IsTerminal, Read, Seek, Write},
    ops::ControlFlow,
    path::Path,
    time::Instant,
};

use anyhow::{Context, Result, bail};
use chesspack::{
    archive::{self, ArchiveReader, COLUMNS, pipeline::Pipeline},
    files,
};
use clap::Args;

use crate::{codecs, input};

/// Options of `chesspack compress`.
#[derive(Args, Debug, Clone)]
pub struct CompressArgs {
    /// PGN inputs: files (`.zst`, `.gz`, `.bz2`, `.xz` are decompressed),
    /// each to its own INPUT.chpk, or `-` (or none) for stdin; or position
    /// files (`.epd`, `.fen`, `.csv` with a FEN column), whose positions are
    /// stored with `position-model`.
    #[arg(value_name = "INPUT")]
    inputs: Vec<String>,
    /// The input being compressed (one of `inputs`).
    #[arg(skip)]
    input: String,
    /// Write the archive to stdout.
    #[arg(short = 'c', long)]
    stdout: bool,
    /// Keep the input (accepted as zstd and xz take it: chesspack never
    /// deletes its input).
    #[arg(short, long)]
    keep: bool,
    /// Print no summary.
    #[arg(short, long)]
    quiet: bool,
    /// Read the input as a position file whatever its name.
    #[arg(long)]
    positions: bool,
    /// Output archive (`-` for stdout); default: INPUT.chpk, stdout for stdin.
    #[arg(short, long)]
    output: Option<String>,
    /// Overwrite the output if it exists.
    #[arg(short, long)]
    force: bool,
    /// Move codec (`chesspack codecs` lists them; default `model`, and
    /// `fast` for a binpack, which also takes `model`). `fast` archives of
    /// games are 12–34% larger and decompress five to six times faster: for
    /// archives read far more often than written.
    #[arg(long)]
    codec: Option<String>,
    #[command(flatten)]
    engine: codecs::EngineOpts,
    /// zstd level of the text columns (1-22).
    #[arg(short, long, default_value_t = archive::Options::default().level, value_parser = clap::value_parser!(i32).range(1..=22))]
    level: i32,
    /// Worker threads (default: all cores).
    #[arg(short = 'T', long)]
    threads: Option<usize>,
    /// The most games in one block. Smaller blocks make a game that a
    /// search must decode faster to reach (1024: the explorer off the tree
    /// about twice as fast on online games) and the archive larger (1024:
    /// its games about 4% larger).
    #[arg(long, default_value_t = archive::Options::default().block_games)]
    block_games: usize,
    /// The most PGN text in one block, in KiB.
    #[arg(long, default_value_t = archive::Options::default().block_bytes >> 10)]
    block_kib: usize,
    /// Keep the opening of a game with an `ECO` tag alone (master games)
    /// out of the archive: it is worked out from the game's first moves
    /// when read. Archives of master games ~0.7% smaller; listing their
    /// `ECO` ~10 times slower.
    #[arg(long)]
    derive_eco: bool,
    /// Print the bytes of each column.
    #[arg(short, long)]
    verbose: bool,
    /// Leave the search index out (`find` and `explore` then decode every
    /// game; `chesspack index` adds it later). It is left out of an archive
    /// of fewer than 32 games anyway.
    #[arg(long)]
    no_index: bool,
    /// Keep each game's squares, where each piece stood, in the search
    /// index (as `chesspack index --squares`): sub-FENs, and positions that
    /// many games could come to, are much faster, and the index about
    /// three times as large.
    #[arg(long, conflicts_with = "no_index")]
    index_squares: bool,
    /// The most memory that building the search index may take (MiB, or
    /// with K, M or G; 0: 4G, about five million master games): past it
    /// the archive is written without the index, with a warning. Worked
    /// out from the games, so the archive is the same on every machine.
    #[arg(long, value_name = "SIZE", default_value = "0", value_parser = crate::input::memory_size, conflicts_with = "no_index")]
    index_memory: u64,
}

/// Options of `chesspack decompress`.
#[derive(Args, Debug)]
pub struct DecompressArgs {
    /// The archive (`-` for stdin).
    input: String,
    /// Output PGN (default: stdout).
    #[arg(short, long, conflicts_with = "stdout")]
    output: Option<String>,
    /// Write to stdout (the default; for the habit of `xz -dc`).
    #[arg(short = 'c', long)]
    stdout: bool,
    /// Overwrite the output if it exists.
    #[arg(short, long)]
    force: bool,
    /// Leave out damaged blocks (reported on stderr) instead of stopping.
    #[arg(long)]
    skip_damaged: bool,
    /// Worker threads (default: all cores).
    #[arg(short = 'T', long)]
    threads: Option<usize>,
    /// Of an archive of engine training data: write nnue-pytorch's `.plain`
    /// text instead of the binpack.
    #[arg(long, conflicts_with_all = ["viriformat", "marlinformat"])]
    plain: bool,
    /// Of an archive of engine training data: write viriformat games (a
    /// chain each; the input's bytes for an archive of viriformat).
    #[arg(long, conflicts_with = "marlinformat")]
    viriformat: bool,
    /// Of an archive of engine training data: write marlinformat
    /// positions (32 bytes each).
    #[arg(long)]
    marlinformat: bool,
}

/// Options of `chesspack get`.
#[derive(Args, Debug)]
pub struct GetArgs {
    /// The archive (of games, or of positions: then the numbers are lines).
    input: String,
    /// Game numbers (1-based), printed in the order given.
    #[arg(required = true)]
    numbers: Vec<u64>,
    /// Read an archive whose index is damaged from the blocks found (exit
    /// status 3: games may be missing).
    #[arg(long)]
    skip_damaged: bool,
    /// Decode each game's whole block and check its text against the
    /// block's text checksum (slower: a block holds up to 4096 games).
    #[arg(long)]
    check: bool,
}

/// Options of `chesspack list`.
#[derive(Args, Debug)]
pub struct ListArgs {
    /// The archive (of games; of positions: a line number and the line).
    input: String,
    /// Tags to show, comma-separated.
    #[arg(long, default_value = "White,Black,Result,Date", value_delimiter = ',')]
    tags: Vec<String>,
    /// List an archive whose index is damaged from the blocks found (exit
    /// status 3: games may be missing).
    #[arg(long)]
    skip_damaged: bool,
}

/// Options of `chesspack classify`.
#[derive(Args, Debug)]
pub struct ClassifyArgs {
    /// PGN (`.zst`, `.gz`, `.bz2`, `.xz` too) or a game archive; `-` for
    /// stdin.
    input: String,
    /// Classify an archive whose index is damaged from the blocks found
    /// (exit status 3: games may be missing).
    #[arg(long)]
    skip_damaged: bool,
    /// Name openings by another version of lichess's table: its TSV files
    /// (`a.tsv` to `e.tsv` of lichess-org/chess-openings, in that order,
    /// comma-separated) instead of the one built in. Archives are then
    /// decoded move by move.
    #[arg(long, value_delimiter = ',', value_name = "TSV")]
    openings: Vec<String>,
}

/// Options of `chesspack verify`.
#[derive(Args, Debug)]
pub struct VerifyArgs {
    /// The archive.
    input: String,
    /// Worker threads (default: all cores).
    #[arg(short = 'T', long)]
    threads: Option<usize>,
}

/// The library's pipeline with `threads` workers (one a core when left
/// out).
fn pipeline(threads: Option<usize>) -> Pipeline {
    let mut pipeline = Pipeline::default();
    pipeline.threads = threads.unwrap_or(0);
    pipeline
}

/// Data that a command left out (damaged blocks skipped, a truncated
/// archive read as far as it goes): `main` exits with [`DATA_LOST`].
#[derive(Debug)]
pub struct DataLost(pub String);

impl std::fmt::Display for DataLost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for DataLost {}

/// The exit status of a run that wrote what it could but left data out.
pub const DATA_LOST: u8 = 3;

/// `n` and `word`, with an `s` unless `n` is 1.
fn plural(n: u64, word: &str) -> String {
    if n == 1 {
        word.to_owned()
    } else {
        format!("{word}s")
    }
}

/// Removes the temporary outputs on SIGINT, SIGTERM and SIGHUP, then exits
/// with 128 + 2 (the shell's status for an interrupted command).
pub fn clean_up_on_signals() {
    let _ = ctrlc::set_handler(|| {
        files::remove_temporaries();
        eprintln!("chesspack: interrupted");
        std::process::exit(130);
    });
}

/// An output file ([`files::Output`]: written under a temporary name and
/// given its name when complete) or stdout; its write errors name it.
enum Output {
    Stdout(io::Stdout),
    File(files::Output),
}

/// A writer whose errors name the output (a [`files::Output`] names its
/// own).
struct Named<'a> {
    w: &'a mut dyn Write,
    name: Option<&'a str>,
}

impl Named<'_> {
    fn stdout<'a>(w: &'a mut io::StdoutLock<'static>) -> Named<'a> {
        Named {
            w,
            name: Some("stdout"),
        }
    }

    fn name_error(&self, e: io::Error) -> io::Error {
        match self.name {
            Some(name) => io::Error::new(e.kind(), format!("cannot write {name}: {e}")),
            None => e,
        }
    }
}

impl Write for Named<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.w.write(buf).map_err(|e| self.name_error(e))
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.w.write_all(buf).map_err(|e| self.name_error(e))
    }

    fn flush(&mut self) -> io::Result<()> {
        self.w.flush().map_err(|e| self.name_error(e))
    }
}

/// `e`, with the option that overwrites when it is about an existing file.
fn overwrite_hint(e: io::Error) -> anyhow::Error {
    if e.kind() == io::ErrorKind::AlreadyExists {
        anyhow::anyhow!("{e} (use -f to overwrite)")
    } else {
        e.into()
    }
}

impl Output {
    fn create(path: Option<&str>, force: bool, binary: bool) -> Result<Output> {
        match path {
            None | Some("-") => {
                if binary && io::stdout().is_terminal() {
                    bail!("refusing to write an archive to a terminal (use -o FILE)");
                }
                Ok(Output::Stdout(io::stdout()))
            }
            Some(p) => {
                let out = files::Output::create(Path::new(p), force).map_err(overwrite_hint)?;
                for stale in out.removed() {
                    eprintln!(
                        "chesspack: removed {}, left by an interrupted run",
                        stale.display()
                    );
                }
                Ok(Output::File(out))
            }
        }
    }

    fn writer(&mut self) -> Named<'_> {
        match self {
            Output::Stdout(s) => Named {
                w: s,
                name: Some("stdout"),
            },
            Output::File(f) => Named { w: f, name: None },
        }
    }

    fn commit(self) -> Result<()> {
        match self {
            Output::Stdout(mut s) => s.flush().context("cannot write stdout"),
            Output::File(f) => f.commit().map_err(overwrite_hint),
        }
    }
}

/// Where `compress` writes: `-o`, else IN.chpk, else stdout for stdin.
fn compress_output(args: &CompressArgs) -> Result<Option<String>> {
    let output = match &args.output {
        Some(o) => Some(o.clone()),
        None if args.input == "-" => None,
        None => Some(format!("{}.chpk", args.input)),
    };
    if args.input != "-" && output.as_deref() == Some(args.input.as_str()) {
        bail!("input and output are the same file");
    }
    Ok(output)
}

pub fn compress(args: &CompressArgs) -> Result<()> {
    let inputs = if args.inputs.is_empty() {
        vec!["-".to_owned()]
    } else {
        args.inputs.clone()
    };
    if inputs.len() > 1 && (args.output.is_some() || args.stdout) {
        bail!(
            "{} inputs and one output: leave out -o/-c to write each to INPUT.chpk",
            inputs.len()
        );
    }
    for input in inputs {
        let mut one = args.clone();
        one.input = input;
        if args.stdout {
            one.output = Some("-".to_owned());
        }
        compress_one(&one)?;
    }
    Ok(())
}

/// The library's settings of `compress` and `decompress`'s arguments.
fn settings(threads: Option<usize>) -> files::Settings {
    let mut settings = files::Settings::default();
    settings.pipeline = pipeline(threads);
    settings
}

fn compress_one(args: &CompressArgs) -> Result<()> {
    let kind = if args.positions {
        files::Kind::Positions
    } else if args.input == "-" {
        files::Kind::Games
    } else {
        files::Kind::of_path(Path::new(&args.input))?
    };
    let mut settings = settings(args.threads);
    settings.codec.clone_from(&args.codec);
    settings.engine = args.engine.params()?;
    settings.force = args.force;
    settings.archive.block_games = args.block_games;
    settings.archive.block_bytes = args.block_kib.saturating_mul(1024);
    settings.archive.level = args.level;
    settings.no_index = args.no_index;
    settings.index_squares = args.index_squares;
    settings.index_memory = args.index_memory;
    if args.derive_eco {
        settings.archive.openings = archive::Openings::Named;
    }
    let output = compress_output(args)?;
    let pb = input::progress(None, "compressing");
    let reader = input::open(&args.input, &pb)?;
    let mut out = Output::create(output.as_deref(), args.force, true)?;
    let started = Instant::now();
    let report = files::compress(kind, reader, out.writer(), &settings, &mut |_| {
        ControlFlow::Continue(())
    })
    .map_err(|e| match e {
        archive::ArchiveError::AlreadyAnArchive => anyhow::anyhow!(
            "{} is already a chesspack archive (`chesspack decompress` reads it; -f compresses it anyway)",
            args.input
        ),
        e => anyhow::Error::new(e).context(format!("cannot compress {}", args.input)),
    })?;
    pb.finish_and_clear();
    out.commit()?;
    report_compress(args, &report, started.elapsed().as_secs_f64());
    Ok(())
}

/// What `compress` did, on stderr: a line for games, positions or engine
/// training data, the games stored verbatim, with `-v` each column's bytes.
fn report_compress(args: &CompressArgs, report: &files::Report, secs: f64) {
    if let Some(p) = &report.positions
        && let Some(&first) = p.not_utf8.first()
    {
        // A warning: shown even with -q.
        let n = p.not_utf8.len() as u64;
        eprintln!(
            "warning: {}: {n} {} not UTF-8, kept byte for byte (first: line {first})",
            args.input,
            if n == 1 { "line is" } else { "lines are" }
        );
    }
    if let Some(why) = &report.index_left_out {
        // A warning: shown even with -q.
        eprintln!(
            "warning: {}: {why} (--index-memory raises the limit; `chesspack index --memory` adds the index later)",
            args.input
        );
    }
    if args.quiet {
        return;
    }
    let (read, written) = (report.input_bytes, report.output_bytes);
    let mb_s = read as f64 / 1e6 / secs.max(1e-9);
    if let Some(p) = &report.positions {
        let kept: Vec<String> = p.kept.iter().take(5).map(u64::to_string).collect();
        eprintln!(
            "{} {}: {} {} in {} bits ({:.2} bits/position), {} {} kept as text{}; {secs:.1} s",
            p.lines,
            plural(p.lines, "line"),
            p.positions,
            plural(p.positions, "position"),
            p.position_bits,
            p.position_bits as f64 / p.positions.max(1) as f64,
            p.verbatim,
            plural(p.verbatim, "line"),
            if kept.is_empty() {
                String::new()
            } else {
                format!(
                    " (headers, comments or positions that are not valid: line{} {}{})",
                    if kept.len() > 1 { "s" } else { "" },
                    kept.join(", "),
                    if p.verbatim > kept.len() as u64 {
                        ", ..."
                    } else {
                        ""
                    }
                )
            },
        );
        return;
    }
    if let Some(r) = &report.training {
        let positions = r.positions.max(1) as f64;
        eprintln!(
            "chesspack: {} {} in {} {}, {} → {} bytes ({:.2}% of the input, {:.2} bits/position: moves {:.2}, scores {:.2}), {mb_s:.1} MB/s",
            r.positions,
            plural(r.positions, "position"),
            r.chains,
            plural(r.chains, "chain"),
            r.bytes_in,
            r.bytes_out,
            100.0 * r.bytes_out as f64 / r.bytes_in.max(1) as f64,
            8.0 * r.bytes_out as f64 / positions,
            r.move_bits as f64 / positions,
            r.score_bits as f64 / positions,
        );
        if r.kept_bytes > 0 {
            eprintln!(
                "chesspack: {} {} kept as they are (chains chesspack does not write back the same; they come back byte for byte)",
                r.kept_bytes,
                plural(r.kept_bytes, "byte")
            );
        }
        return;
    }
    let (total, codec) = (&report.games, &report.codec);
    if total.input_bytes == 0 {
        // No ratio of nothing.
        eprintln!("chesspack: empty input, {written} bytes of archive, codec {codec}");
    } else {
        eprintln!(
            "chesspack: {} {}, {} → {} bytes ({:.2}% of the input, {:.1} bytes/game), codec {codec}, {mb_s:.1} MB/s",
            total.games,
            plural(total.games, "game"),
            total.input_bytes,
            written,
            100.0 * written as f64 / total.input_bytes as f64,
            written as f64 / total.games.max(1) as f64,
        );
    }
    if !total.verbatim.is_empty() {
        let mut by: BTreeMap<&str, (u64, &str, u64)> = BTreeMap::new();
        for (number, category, detail) in &total.verbatim {
            let e = by.entry(category).or_insert((0, detail, *number));
            e.0 += 1;
        }
        eprintln!(
            "chesspack: {} {} stored verbatim ({} back byte for byte):",
            total.verbatim.len(),
            plural(total.verbatim.len() as u64, "game"),
            if total.verbatim.len() == 1 {
                "it comes"
            } else {
                "they come"
            }
        );
        for (category, (count, detail, number)) in by {
            eprintln!("  {count:>8} {category} (e.g. game {number}: {detail})");
        }
    }
    if total.text_blocks > 0 {
        eprintln!(
            "chesspack: {} {} stored as the games' text, compressed: their columns came to more",
            total.text_blocks,
            plural(total.text_blocks, "block")
        );
    }
    if args.verbose {
        eprintln!(
            "{:<14} {:>14} {:>14} {:>8}",
            "column", "raw bytes", "stored bytes", "share"
        );
        let stored: u64 = total.stored.iter().sum();
        for (i, name) in COLUMNS.iter().enumerate() {
            eprintln!(
                "{:<14} {:>14} {:>14} {:>7.1}%",
                name,
                total.raw[i],
                total.stored[i],
                100.0 * total.stored[i] as f64 / stored.max(1) as f64
            );
        }
    }
}

/// Opens a chesspack archive of any kind (`-`: stdin, read into memory)
/// as the library tells it.
fn open_any(path: &str) -> Result<files::Opened<Box<dyn ReadSeek>>> {
    files::open(read_seek(path)?).with_context(|| format!("cannot read {path}"))
}

/// Opens an archive of games (`-`: stdin, read into memory); any other
/// archive is an error that says what reads it.
pub(crate) fn open_archive(path: &str) -> Result<ArchiveReader<Box<dyn ReadSeek>>> {
    match open_any(path)? {
        files::Opened::Games(reader) => Ok(reader),
        files::Opened::Positions(_) => bail!(
            "{path} is an archive of positions: `chesspack get` and `list` give its lines, `decompress` its file"
        ),
        _ => Err(training_data(path)),
    }
}

/// The error of a command that reads games or lines, given an archive of
/// engine training data.
fn training_data(path: &str) -> anyhow::Error {
    anyhow::anyhow!(
        "{path} is an archive of engine training data: `chesspack decompress` gives its binpack back, and the Python package reads its rows"
    )
}

pub(crate) trait ReadSeek: Read + Seek + Send {}
impl<T: Read + Seek + Send> ReadSeek for T {}

pub fn decompress(args: &DecompressArgs) -> Result<()> {
    // `-c`: stdout, which is also the default.
    let output = args.output.as_deref().filter(|_| !args.stdout);
    if args.input != "-" && output == Some(args.input.as_str()) {
        bail!("input and output are the same file");
    }
    let mut settings = settings(args.threads);
    settings.pipeline.skip_damaged = args.skip_damaged;
    settings.training = if args.plain {
        files::TrainingFormat::Plain
    } else if args.viriformat {
        files::TrainingFormat::Viriformat
    } else if args.marlinformat {
        files::TrainingFormat::Marlinformat
    } else {
        files::TrainingFormat::Binpack
    };
    let input = read_seek(&args.input)?;
    let mut out = Output::create(output, args.force, false)?;
    let pb = input::progress(None, "decompressing");
    let report = files::decompress(input, out.writer(), &settings, &mut |p| {
        if let Some(total) = p.total_bytes {
            input::set_total(&pb, total);
        }
        pb.set_position(p.bytes);
        ControlFlow::Continue(())
    })
    .map_err(|e| damage_hint(e, &args.input, "decompress"))?;
    pb.finish_and_clear();
    out.commit()?;
    if let Some(why) = &report.header_error {
        eprintln!(
            "chesspack: {}: archive header is damaged ({why}); read the copy of the header in the index",
            args.input
        );
    }
    for d in &report.damaged {
        eprintln!(
            "chesspack: skipping {} (games {}-{})",
            d.error,
            d.first_game,
            d.first_game + d.games - 1
        );
    }
    if report.lost_data() {
        let damaged = report.damaged.len() as u64;
        let damaged_games: u64 = report.damaged.iter().map(|d| d.games).sum();
        let games = report.items;
        return Err(
            DataLost(format!(
                "{}: {games} {} written, {damaged_games} {} of {damaged} damaged {} left out{}",
                args.input,
                plural(games, "game"),
                plural(damaged_games, "game"),
                plural(damaged, "block"),
                match &report.index_error {
                    Some(why) => format!(
                        ", and any games after the last whole block (the index is lost: {why})"
                    ),
                    None => String::new(),
                }
            ))
            .into(),
        );
    }
    Ok(())
}

/// An archive's error with what `--skip-damaged` would do about it.
fn damage_hint(e: archive::ArchiveError, input: &str, what: &str) -> anyhow::Error {
    let hint = match &e {
        archive::ArchiveError::Header(_) => {
            " (--skip-damaged reads the archive with the copy of its header in the index)"
        }
        archive::ArchiveError::Index(_) => " (--skip-damaged reads the blocks found)",
        _ => "",
    };
    anyhow::Error::new(e).context(format!("cannot {what} {input}{hint}"))
}

/// A file (`-`: stdin, read into memory) to read and seek.
fn read_seek(path: &str) -> Result<Box<dyn ReadSeek>> {
    Ok(if path == "-" {
        let mut buf = Vec::new();
        io::stdin().read_to_end(&mut buf)?;
        Box::new(Cursor::new(buf))
    } else {
        Box::new(io::BufReader::new(
            File::open(path).with_context(|| format!("cannot open {path}"))?,
        ))
    })
}

/// Refuses an archive whose header or index is damaged, or with
/// `--skip-damaged` says on stderr what is read instead; returns whether
/// games may be lost (a damaged index). Every command that reads games
/// from an archive asks this, so that they agree (issue 69, D4).
pub(crate) fn check_damage(
    reader: &ArchiveReader<Box<dyn ReadSeek>>,
    input: &str,
    skip: bool,
) -> Result<bool> {
    if let Some(why) = reader.header_error() {
        let msg = format!("{input}: archive header is damaged ({why})");
        if !skip {
            bail!(
                "{msg} (--skip-damaged reads the archive with the copy of its header in the index)"
            );
        }
        eprintln!("chesspack: {msg}; reading the copy of the header in the index");
    }
    let Some(why) = reader.index_error() else {
        return Ok(false);
    };
    let msg =
        format!("{input}: archive index is missing or damaged ({why}); the file may be truncated");
    let found = format!(
        "{} {} found",
        reader.blocks().len(),
        plural(reader.blocks().len() as u64, "block")
    );
    if !skip {
        bail!("{msg} (--skip-damaged reads the {found})");
    }
    eprintln!("chesspack: {msg}; reading the {found}");
    Ok(true)
}

pub fn get(args: &GetArgs) -> Result<()> {
    let mut reader = match open_any(&args.input)? {
        files::Opened::Games(reader) => reader,
        files::Opened::Positions(lines) => return get_lines(args, &lines),
        _ => return Err(training_data(&args.input)),
    };
    let recovering = check_damage(&reader, &args.input, args.skip_damaged)?;
    let mut lock = io::stdout().lock();
    let mut stdout = Named::stdout(&mut lock);
    for &n in &args.numbers {
        // A piece at a time: a game longer than 8 MiB is never whole in memory.
        reader
            .write_game(n, args.check, &mut stdout)
            .with_context(|| format!("cannot get game {n} from {}", args.input))?;
    }
    stdout.flush()?;
    recovered(recovering, &args.input)
}

/// `get` of a position archive: the lines asked for.
fn get_lines(args: &GetArgs, lines: &files::Lines) -> Result<()> {
    let mut lock = io::stdout().lock();
    let mut stdout = Named::stdout(&mut lock);
    for &n in &args.numbers {
        let line = (n as usize)
            .checked_sub(1)
            .and_then(|i| lines.get(i))
            .with_context(|| {
                format!(
                    "cannot get line {n} from {}: it holds {} {}",
                    args.input,
                    lines.len(),
                    plural(lines.len() as u64, "line")
                )
            })?;
        stdout.write_all(line)?;
        stdout.write_all(b"\n")?;
    }
    Ok(stdout.flush()?)
}

/// After output read without the archive's index: [`DataLost`].
fn recovered(recovering: bool, input: &str) -> Result<()> {
    if recovering {
        return Err(DataLost(format!(
            "{input}: read without its index; games after the last whole block are lost"
        ))
        .into());
    }
    Ok(())
}

pub fn list(args: &ListArgs) -> Result<()> {
    let mut reader = match open_any(&args.input)? {
        files::Opened::Games(reader) => reader,
        files::Opened::Positions(lines) => {
            let mut lock = io::stdout().lock();
            let mut stdout = Named::stdout(&mut lock);
            writeln!(stdout, "line\ttext")?;
            for (i, line) in lines.iter().enumerate() {
                let line = chesspack::pgn::text(line).replace('\t', " ");
                writeln!(stdout, "{}\t{line}", i + 1)?;
            }
            return Ok(stdout.flush()?);
        }
        _ => return Err(training_data(&args.input)),
    };
    let recovering = check_damage(&reader, &args.input, args.skip_damaged)?;
    let mut lock = io::stdout().lock();
    let mut stdout = Named::stdout(&mut lock);
    writeln!(stdout, "game\t{}", args.tags.join("\t"))?;
    let clean = |s: &str| s.replace(['\t', '\n', '\r'], " ");
    for b in 0..reader.blocks().len() {
        let block = reader.read_block(b)?;
        // The moves are decoded only for ECO and Opening tags that they give.
        let tags = if args.tags.iter().any(|t| t == "ECO" || t == "Opening") {
            archive::block_tags(reader.codec(), &block)?
        } else {
            archive::block_tags_not_given(&block)?
        };
        for (g, t) in tags.iter().enumerate() {
            let mut line = format!("{}", reader.first_game(b) + g as u64);
            for name in &args.tags {
                line.push('\t');
                line.push_str(&clean(t.get(name).as_deref().unwrap_or("")));
            }
            writeln!(stdout, "{line}")?;
        }
    }
    stdout.flush()?;
    recovered(recovering, &args.input)
}

/// One row of `classify`: the game's number and its opening, if any.
fn opening_row(
    out: &mut impl Write,
    game: u64,
    named: Option<chesspack::opening::Named<'_>>,
) -> io::Result<()> {
    match named {
        Some(o) => writeln!(out, "{game}\t{}\t{}\t{}", o.eco, o.name, o.ply),
        None => writeln!(out, "{game}\t\t\t"),
    }
}

/// The head of `classify`'s table.
const CLASSIFY_HEAD: &str = "game\tECO\tOpening\tply";

pub fn classify(args: &ClassifyArgs) -> Result<()> {
    let path = args.input.as_str();
    let other = if args.openings.is_empty() {
        None
    } else {
        let mut text = String::new();
        for path in &args.openings {
            text +=
                &std::fs::read_to_string(path).with_context(|| format!("cannot read {path}"))?;
            text.push('\n');
        }
        Some(chesspack::opening::OpeningTable::from_tsv(&text)?)
    };
    let table = other
        .as_ref()
        .unwrap_or_else(|| chesspack::opening::OpeningTable::lichess());
    let mut settings = files::Settings::default();
    settings.pipeline.skip_damaged = args.skip_damaged;
    let mut lock = io::stdout().lock();
    let mut stdout = io::BufWriter::new(Named::stdout(&mut lock));
    // The table's head with its first row: an archive refused as damaged
    // prints nothing.
    let mut named = 0u64;
    let mut started = false;
    let mut row = |game: u64, o: Option<chesspack::opening::Named<'_>>| -> io::Result<()> {
        if !started {
            writeln!(stdout, "{CLASSIFY_HEAD}")?;
            started = true;
        }
        named += u64::from(o.is_some());
        opening_row(&mut stdout, game, o)
    };
    let pb = input::progress(None, "classifying");
    let name = if path == "-" { "" } else { path };
    let report = files::classify(
        name,
        read_seek(path)?,
        table,
        &settings,
        &mut row,
        &mut |p| {
            if let Some(total) = p.total_bytes {
                input::set_total(&pb, total);
            }
            pb.set_position(p.bytes);
            ControlFlow::Continue(())
        },
    )
    .map_err(|e| damage_hint(e, path, "classify"))?;
    pb.finish_and_clear();
    if !started {
        writeln!(stdout, "{CLASSIFY_HEAD}")?;
    }
    stdout.flush()?;
    drop(stdout);
    if let Some(why) = &report.header_error {
        eprintln!(
            "chesspack: {path}: archive header is damaged ({why}); read the copy of the header in the index"
        );
    }
    let skipped = report.games.verbatim.len() as u64;
    if skipped > 0 {
        eprintln!(
            "{path}: {skipped} {} could not be read as standard chess (no opening named)",
            plural(skipped, "game")
        );
    }
    // The count where someone watches: a pipe gets the table alone.
    let games = report.items;
    if io::stderr().is_terminal() {
        eprintln!(
            "{games} {}, {named} with an opening named",
            plural(games, "game")
        );
    }
    recovered(report.index_error.is_some(), path)
}

pub fn verify(args: &VerifyArgs) -> Result<()> {
    let mut reader = match open_any(&args.input)? {
        files::Opened::Games(reader) => reader,
        files::Opened::Positions(lines) => {
            let lines = lines.len() as u64;
            outln!(
                "{}: position archive, {lines} {}",
                args.input,
                plural(lines, "line")
            );
            outln!("ok: every block passes its checksum and decodes");
            return Ok(());
        }
        _ => return Err(training_data(&args.input)),
    };
    let header = reader.header().clone();
    outln!(
        "{}: format {}, codec {} (model {:016x}), {} {}, {} {}",
        args.input,
        header.version,
        header.codec,
        header.model_hash,
        reader.blocks().len(),
        plural(reader.blocks().len() as u64, "block"),
        reader.games(),
        plural(reader.games(), "game"),
    );
    let pb = input::progress(None, "verifying");
    let report = pipeline(args.threads)
        .verify(&mut reader, &mut |p| {
            if let Some(total) = p.total_bytes {
                input::set_total(&pb, total);
            }
            pb.set_position(p.bytes);
            ControlFlow::Continue(())
        })
        .with_context(|| format!("cannot verify {}", args.input))?;
    pb.finish_and_clear();
    let problems = report.problems;
    if problems.is_empty() {
        outln!(
            "ok: every block passes its checksums and decodes to the input's bytes (each block's checksum is of its games' text as it was read)"
        );
        Ok(())
    } else {
        for p in &problems {
            outln!("damaged: {p}");
        }
        bail!(
            "{}: {} found",
            args.input,
            plural(problems.len() as u64, "problem")
        )
    }
}
