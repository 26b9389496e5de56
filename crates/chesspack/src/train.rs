//! Fitting what the codecs ship with (`chesspack train`): the move models
//! and the opening book, the opening table and its prior, the position
//! model and tables, the engine's piece-square values and the prior of
//! engine comments. Behind the `train` feature: the runtime library does
//! not carry it.
//!
//! [`fit`] reads the files, fits what [`Fit`] names, writes it and says
//! how it went through [`Note`]s; a front end turns its arguments into a
//! [`Fit`] and shows the notes. Every fit is deterministic and leaves out
//! the held-out games and positions ([`crate::holdout`]).
//!
//! ```
//! use chesspack::train::{Fit, Note, fit};
//!
//! let dir = std::env::temp_dir().join(format!("chesspack-train-doc-{}", std::process::id()));
//! std::fs::create_dir_all(&dir).unwrap();
//! let pgn = dir.join("games.pgn");
//! std::fs::write(&pgn, "1. e4 e5 2. Nf3 Nc6 *\n\n1. d4 d5 *\n").unwrap();
//! let mut lines = Vec::new();
//! let written = fit(&Fit::OpeningPrior { bands: false }, &[pgn], &dir.join("prior.txt"), &mut |n| {
//!     if let Note::Line(l) = n {
//!         lines.push(l);
//!     }
//! })
//! .unwrap();
//! assert_eq!(written, [dir.join("prior.txt")]);
//! assert!(lines[0].contains("the openings of"));
//! std::fs::remove_dir_all(&dir).unwrap();
//! ```

use std::{
    collections::BTreeMap,
    io::{self, BufRead, Read},
    path::{Path, PathBuf},
    sync::{
        Arc,
        atomic::{AtomicU64, Ordering},
    },
};

use shakmaty::{Chess, Move, MoveList, Position};

use crate::{
    engine::fit::PieceSquareFit,
    hash::fnv1a,
    holdout,
    model::{
        FeatureSet, GameContext, MAX_HIDDEN,
        book::{BookBuilder, MAX_PLY as BOOK_MAX_PLY},
        fast::{FastWeights, N_FAST_FEATURES},
        train::Trainer,
    },
    opening::{OpeningTable, TableBuilder, opening_prior, opening_prior_bands},
    pgn::{self, Game, GameReader, SkippedGame},
    position::{self, arith::ArithTables, model_codec::train::PositionTrainer},
};

/// What [`fit`] fits, with its settings: one of `chesspack train`'s
/// subcommands.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum Fit {
    /// The `arith` position codec's per-square symbol frequencies, from
    /// position files (EPD, FEN, or a CSV with a `FEN` column), written as
    /// the Rust source of `position/arith_tables.rs`.
    Arith,
    /// The `position-model` codec, from position files and positions
    /// sampled from PGN games (`.pgn`, `.pgn.zst`); reports its bits on the
    /// held-out part of each file after each epoch.
    Position {
        /// Positions sampled from each training game (a held-out game
        /// gives one).
        per_game: u64,
        /// Passes over the training positions.
        epochs: u32,
        /// AdaGrad's step size.
        rate: f32,
    },
    /// The data-driven piece-square terms of the engine's evaluation, from
    /// PGN games, written as the Rust source of `engine/fitted.rs`.
    Engine {
        /// Games read from each file (held-out ones counted).
        limit: u64,
    },
    /// The `model` codec's move model (or `brisk`'s, with `quick`) from PGN
    /// games, and the opening book (`book.bin` beside the output); reports
    /// its cost on held-out games by file and rating band.
    Model {
        /// Games read from each file (held-out ones counted).
        limit: u64,
        /// Games of each file the book counts (held-out ones left out); at
        /// least `limit`.
        book_limit: u64,
        /// Passes over the training games.
        epochs: u32,
        /// Hidden units (0: a linear model), at most 256.
        hidden: usize,
        /// AdaGrad's step size for the hidden layer.
        hidden_rate: f32,
        /// The `brisk` codec's features (no static exchange, checks,
        /// mobility or threats) instead of the `model` codec's.
        quick: bool,
        /// Files whose games train the weights but are not counted in the
        /// book.
        not_in_book: Vec<PathBuf>,
    },
    /// The opening table that archives predict `ECO` and `Opening` tags
    /// with, from PGN games that carry both tags or from lichess's opening
    /// TSV files (not both), and the positions it lists
    /// (`NAME-positions.txt` beside it); reports how many held-out games
    /// of the PGN files it names right, as [`Note::Row`]s.
    Openings {
        /// A position is listed when at least this many training games
        /// reached it (PGN input).
        min_games: u32,
    },
    /// The prior of archives' engine-comment fields (TCEC's `d=, mt=,
    /// pv=`, cutechess-cli's `+0.35/20 1.2s`), from PGN games.
    EngineComments {
        /// Keep the models of a number's place used at least this often.
        min_uses: u32,
    },
    /// How often each opening of the shipped table is a game's: the prior
    /// that archives code each game's opening with.
    OpeningPrior {
        /// Count by the players' rating band, a column a band.
        bands: bool,
    },
    /// The `fast` codec's model (piece × origin × target and capture
    /// weights), from PGN games.
    Fast {
        /// Games read from each file.
        limit: u64,
        /// Passes over the training games.
        epochs: u32,
    },
}

/// What [`fit`] says as it goes.
#[derive(Debug)]
#[non_exhaustive]
pub enum Note<'a> {
    /// The work on `what` is at `done` of `total`: bytes of a file read, or
    /// games or positions of an epoch.
    Progress {
        /// A file's name, or the epoch.
        what: &'a str,
        /// Done so far.
        done: u64,
        /// All of it, when known.
        total: Option<u64>,
    },
    /// The work of the last [`Note::Progress`] is over.
    Finished,
    /// A line for the person waiting (what was read, losses, what was
    /// written).
    Line(String),
    /// A line of the result (the held-out table of [`Fit::Openings`]).
    Row(String),
}

/// Fits `what` on `files`, writes it to `output` (and what goes beside it),
/// saying how it goes through `note`; returns the paths written.
///
/// # Errors
///
/// A file that cannot be read or written, an opening TSV file that does not
/// parse, or more than 256 hidden units.
pub fn fit(
    what: &Fit,
    files: &[PathBuf],
    output: &Path,
    note: &mut dyn FnMut(Note<'_>),
) -> io::Result<Vec<PathBuf>> {
    let mut run = Run {
        note,
        written: Vec::new(),
    };
    match what {
        Fit::Arith => arith(&mut run, files, output)?,
        &Fit::Position {
            per_game,
            epochs,
            rate,
        } => position_model(&mut run, files, output, (per_game, epochs, rate))?,
        &Fit::Engine { limit } => engine(&mut run, files, output, limit)?,
        Fit::Model {
            limit,
            book_limit,
            epochs,
            hidden,
            hidden_rate,
            quick,
            not_in_book,
        } => {
            if *hidden > MAX_HIDDEN {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("at most {MAX_HIDDEN} hidden units"),
                ));
            }
            let set = if *quick {
                FeatureSet::Quick
            } else {
                FeatureSet::Full
            };
            let settings = ModelSettings {
                limit: *limit,
                book_limit: (*book_limit).max(*limit),
                epochs: *epochs,
                trainer: Trainer::with_hidden(*hidden, *hidden_rate).with_feature_set(set),
            };
            model(&mut run, (files, not_in_book), output, settings)?;
        }
        &Fit::Openings { min_games } => openings(&mut run, files, output, min_games)?,
        &Fit::EngineComments { min_uses } => engine_comments(&mut run, files, output, min_uses)?,
        &Fit::OpeningPrior { bands } => prior(&mut run, files, output, bands)?,
        &Fit::Fast { limit, epochs } => fast(&mut run, files, output, limit, epochs)?,
    }
    Ok(run.written)
}

/// A fit under way: where it says how it goes, what it wrote.
struct Run<'n> {
    note: &'n mut dyn FnMut(Note<'_>),
    written: Vec<PathBuf>,
}

impl Run<'_> {
    /// Says `text`, a [`Note::Line`] a line.
    fn line(&mut self, text: String) {
        for line in text.lines() {
            (self.note)(Note::Line(line.to_owned()));
        }
    }

    fn progress(&mut self, what: &str, done: u64, total: Option<u64>) {
        (self.note)(Note::Progress { what, done, total });
    }

    fn finished(&mut self) {
        (self.note)(Note::Finished);
    }

    fn write(&mut self, path: &Path, bytes: &[u8]) -> io::Result<()> {
        std::fs::write(path, bytes).map_err(|e| {
            io::Error::new(e.kind(), format!("cannot write {}: {e}", path.display()))
        })?;
        self.written.push(path.to_owned());
        Ok(())
    }

    /// Opens `path` (any compression [`crate::files::decoder`] reads), its
    /// bytes read counted in the returned counter.
    fn open(&mut self, path: &Path) -> io::Result<(Box<dyn BufRead + Send>, Counter)> {
        let file = std::fs::File::open(path).map_err(|e| {
            io::Error::new(e.kind(), format!("cannot open {}: {e}", path.display()))
        })?;
        let counter = Counter {
            read: Arc::default(),
            total: file.metadata().ok().map(|m| m.len()),
            name: file_name(path),
        };
        let counted = CountRead {
            inner: file,
            read: Arc::clone(&counter.read),
        };
        Ok((crate::files::decoder(counted)?, counter))
    }

    fn show(&mut self, counter: &Counter) {
        let done = counter.read.load(Ordering::Relaxed);
        self.progress(&counter.name, done, counter.total);
    }

    /// Calls `f` with each of the first `limit` games of `path` (or the
    /// reason it was skipped).
    fn games(
        &mut self,
        path: &Path,
        limit: u64,
        mut f: impl FnMut(Result<Game, SkippedGame>),
    ) -> io::Result<()> {
        let (reader, counter) = self.open(path)?;
        for (i, game) in GameReader::new(reader).take(limit as usize).enumerate() {
            if i % 1024 == 0 {
                self.show(&counter);
            }
            f(game);
        }
        self.finished();
        Ok(())
    }

    /// Calls `f` with every valid position of a position file and whether
    /// it is held out (by EPD); returns the number of invalid lines
    /// skipped.
    fn positions(&mut self, path: &Path, mut f: impl FnMut(Chess, bool)) -> io::Result<u64> {
        let (reader, counter) = self.open(path)?;
        let mut skipped = 0;
        for (i, line) in position::fen_lines(reader).enumerate() {
            if i % 4096 == 0 {
                self.show(&counter);
            }
            let Ok(pos) = position::parse_fen(&line?.1) else {
                skipped += 1;
                continue;
            };
            let held = holdout::is_held_out(position::to_epd(&pos).as_bytes());
            f(pos, held);
        }
        self.finished();
        Ok(skipped)
    }
}

/// The bytes read of a file, for its progress.
struct Counter {
    read: Arc<AtomicU64>,
    total: Option<u64>,
    name: String,
}

/// Counts the bytes that pass.
struct CountRead<R> {
    inner: R,
    read: Arc<AtomicU64>,
}

impl<R: Read> Read for CountRead<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

fn file_name(path: &Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

fn is_held(game: &Game) -> bool {
    holdout::is_held_out(&holdout::game_key(game))
}

fn invalid(e: impl std::error::Error + Send + Sync + 'static) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, e)
}

fn engine(run: &mut Run, files: &[PathBuf], output: &Path, limit: u64) -> io::Result<()> {
    let mut fit = PieceSquareFit::default();
    let (mut trained, mut held, mut skipped) = (0u64, 0u64, 0u64);
    let mut names = Vec::new();
    for path in files {
        run.games(path, limit, |game| match game {
            Err(_) => skipped += 1,
            Ok(g) if is_held(&g) => held += 1,
            Ok(g) => {
                let mut pos = g.start.clone();
                for &m in &g.moves {
                    fit.add(&pos, m);
                    pos.play_unchecked(m);
                }
                trained += 1;
            }
        })?;
        names.push(format!("the first {limit} games of {}", file_name(path)));
    }
    let provenance = format!(
        "Fitted on {trained} games from {} ({held} held out, {skipped} skipped).",
        names.join(" and ")
    );
    run.write(output, fit.to_rust(&provenance).as_bytes())?;
    run.line(format!("{provenance}\nwrote {}", output.display()));
    Ok(())
}

fn engine_comments(
    run: &mut Run,
    files: &[PathBuf],
    output: &Path,
    min_uses: u32,
) -> io::Result<()> {
    let mut input = Vec::new();
    for path in files {
        let (mut reader, counter) = run.open(path)?;
        run.show(&counter);
        reader.read_to_end(&mut input)?;
        run.finished();
        input.push(b'\n');
    }
    let (file, used, held) = crate::archive::engine_comment_prior(&input[..], min_uses)?;
    run.write(output, &file)?;
    run.line(format!(
        "wrote {} ({} bytes): the engine comments of {used} games ({held} held out)",
        output.display(),
        file.len()
    ));
    Ok(())
}

fn prior(run: &mut Run, files: &[PathBuf], output: &Path, bands: bool) -> io::Result<()> {
    let mut games = Vec::new();
    let mut held = 0u64;
    for path in files {
        run.games(path, u64::MAX, |game| match game {
            Err(_) => {}
            Ok(g) if is_held(&g) => held += 1,
            Ok(g) => {
                let elo = |t: &str| g.tag(t).and_then(|v| v.parse::<i64>().ok());
                games.push(([elo("WhiteElo"), elo("BlackElo")], g.start, g.moves));
            }
        })?;
    }
    let (text, counted) = if bands {
        opening_prior_bands(games)
    } else {
        opening_prior(games.into_iter().map(|(_, start, moves)| (start, moves)))
    };
    run.write(output, text.as_bytes())?;
    run.line(format!(
        "wrote {}: the openings of {counted} training games ({held} held out)",
        output.display()
    ));
    Ok(())
}

fn is_tsv(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "tsv")
}

fn openings(run: &mut Run, files: &[PathBuf], output: &Path, min_games: u32) -> io::Result<()> {
    // Each PGN file's held-out games with both tags.
    let mut held: Vec<(String, Vec<Game>)> = Vec::new();
    let both = |g: &Game| g.tag("ECO").is_some() && g.tag("Opening").is_some();
    let mut tsv = String::new();
    let table = if files.iter().any(|f| is_tsv(f)) {
        // Lichess's table from its TSV files; PGN files beside them are
        // only checked.
        for path in files.iter().filter(|f| is_tsv(f)) {
            tsv += &std::fs::read_to_string(path).map_err(|e| {
                io::Error::new(e.kind(), format!("cannot read {}: {e}", path.display()))
            })?;
            tsv.push('\n');
        }
        for path in files.iter().filter(|f| !is_tsv(f)) {
            let mut kept = Vec::new();
            run.games(path, u64::MAX, |g| {
                kept.extend(g.ok().filter(|g| both(g) && is_held(g)));
            })?;
            held.push((file_name(path), kept));
        }
        OpeningTable::from_tsv(&tsv).map_err(invalid)?
    } else {
        let mut b = TableBuilder::default();
        let mut skipped = 0u64;
        for path in files {
            let mut kept = Vec::new();
            run.games(path, u64::MAX, |game| {
                let Ok(g) = game else {
                    skipped += 1;
                    return;
                };
                match (g.tag("ECO"), g.tag("Opening")) {
                    (Some(_), Some(_)) if is_held(&g) => kept.push(g),
                    (Some(eco), Some(name)) => b.add(&g.start, &g.moves, eco, name),
                    _ => {}
                }
            })?;
            held.push((file_name(path), kept));
        }
        run.line(format!(
            "{} training games with ECO and Opening tags ({skipped} skipped as malformed)",
            b.games()
        ));
        b.finish(min_games)
    };
    let bytes = table.to_bytes();
    run.write(output, &bytes)?;
    run.line(format!(
        "wrote {}: {} positions, {} openings, {} bytes, hash {:016x}",
        output.display(),
        table.len(),
        table.openings(),
        bytes.len(),
        table.hash()
    ));
    // The listed positions themselves, which readers of the shipped table
    // use to stop decoding a game's moves early (issue 40): from the lines,
    // or from the games again.
    let stem = output
        .file_stem()
        .map_or("openings".into(), |s| s.to_string_lossy().into_owned());
    let positions = output.with_file_name(stem + "-positions.txt");
    let text = if tsv.is_empty() {
        let mut games = Vec::new();
        for path in files {
            run.games(path, u64::MAX, |g| {
                games.extend(g.ok().map(|g| (g.start, g.moves)));
            })?;
        }
        table.positions_in(games).map_err(invalid)?
    } else {
        table.tsv_positions(&tsv).map_err(invalid)?
    };
    run.write(&positions, text.as_bytes())?;
    run.line(format!("wrote {}", positions.display()));
    if !held.is_empty() {
        held_out_openings(run, &table, &held);
    }
    Ok(())
}

/// The table's names of each file's held-out games against their tags, and
/// the commonest disagreements, as [`Note::Row`]s.
fn held_out_openings(run: &mut Run, table: &OpeningTable, held: &[(String, Vec<Game>)]) {
    let mut row = |line: String| (run.note)(Note::Row(line));
    row("held-out games with both tags (`?` for none): file, games, both tags right, ECO right, name right, none named".into());
    // The commonest disagreements: (tags, classification), games.
    let mut wrong: BTreeMap<(String, String), u64> = BTreeMap::new();
    for (file, games) in held {
        let (mut both, mut eco_ok, mut name_ok, mut none) = (0u64, 0u64, 0u64, 0u64);
        for g in games {
            let (Some(eco), Some(name)) = (g.tag("ECO"), g.tag("Opening")) else {
                continue;
            };
            let o = table.classify(&g.start, &g.moves);
            let (e, n) = o.map_or(("?", "?"), |o| (o.eco, o.name));
            none += u64::from(o.is_none());
            eco_ok += u64::from(e == eco);
            name_ok += u64::from(n == name);
            both += u64::from(e == eco && n == name);
            if e != eco || n != name {
                *wrong
                    .entry((format!("{eco} {name}"), format!("{e} {n}")))
                    .or_default() += 1;
            }
        }
        let pct = |n: u64| 100.0 * n as f64 / games.len().max(1) as f64;
        row(format!(
            "{file}\t{}\t{:.2}%\t{:.2}%\t{:.2}%\t{:.1}%",
            games.len(),
            pct(both),
            pct(eco_ok),
            pct(name_ok),
            pct(none)
        ));
    }
    let mut wrong: Vec<_> = wrong.into_iter().collect();
    wrong.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    if !wrong.is_empty() {
        row("commonest disagreements: games, the game's tags, the classification".into());
    }
    for ((tags, ours), n) in wrong.iter().take(25) {
        row(format!("{n}\t{tags}\t{ours}"));
    }
}

fn arith(run: &mut Run, files: &[PathBuf], output: &Path) -> io::Result<()> {
    let mut tables = ArithTables::default();
    let (mut trained, mut held, mut skipped) = (0u64, 0u64, 0u64);
    let mut names = Vec::new();
    for path in files {
        skipped += run.positions(path, |pos, is_held| {
            if is_held {
                held += 1;
            } else {
                tables.add(&pos);
                trained += 1;
            }
        })?;
        names.push(file_name(path));
    }
    let provenance = format!(
        "Fitted on {trained} positions of {} ({held} held out, {skipped} invalid skipped).",
        names.join(", ")
    );
    run.write(output, tables.to_rust(&provenance).as_bytes())?;
    run.line(format!("{provenance}\nwrote {}", output.display()));
    Ok(())
}

fn is_pgn(path: &Path) -> bool {
    let p = path.to_string_lossy().to_ascii_lowercase();
    p.ends_with(".pgn") || p.ends_with(".pgn.zst")
}

/// Positions sampled from the games of a PGN file: `per_game` plies of
/// each training game and one of each held-out game, chosen by the game's
/// hash.
fn sample_games(
    run: &mut Run,
    path: &Path,
    per_game: u64,
    (train, held): (&mut Vec<Chess>, &mut Vec<Chess>),
) -> io::Result<()> {
    run.games(path, u64::MAX, |game| {
        let Ok(game) = game else { return };
        let key = holdout::game_key(&game);
        let hash = fnv1a(&key);
        let is_held = holdout::is_held_out(&key);
        let plies = game.moves.len() as u64 + 1;
        let picks: Vec<u64> = if is_held {
            vec![(hash >> 8) % plies]
        } else {
            (0..per_game)
                .map(|i| (hash.rotate_left(13 * i as u32 + 5) >> 3) % plies)
                .collect()
        };
        let mut pos = game.start.clone();
        for ply in 0..plies {
            for _ in picks.iter().filter(|&&p| p == ply) {
                if is_held {
                    held.push(pos.clone());
                } else {
                    train.push(pos.clone());
                }
            }
            if let Some(&m) = game.moves.get(ply as usize) {
                pos.play_unchecked(m);
            }
        }
    })
}

fn position_model(
    run: &mut Run,
    files: &[PathBuf],
    output: &Path,
    (per_game, epochs, rate): (u64, u32, f32),
) -> io::Result<()> {
    let mut train = Vec::new();
    let mut held: Vec<(String, Vec<Chess>)> = Vec::new();
    let mut skipped = 0u64;
    for path in files {
        let mut h = Vec::new();
        if is_pgn(path) {
            sample_games(run, path, per_game, (&mut train, &mut h))?;
        } else {
            skipped += run.positions(path, |pos, is_held| {
                if is_held {
                    h.push(pos);
                } else {
                    train.push(pos);
                }
            })?;
        }
        held.push((file_name(path), h));
    }
    // A fixed shuffle (xorshift), so that files mix and runs repeat.
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    for i in (1..train.len()).rev() {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        train.swap(i, (state % (i as u64 + 1)) as usize);
    }
    run.line(format!(
        "{} training positions, {} held out, {skipped} invalid skipped",
        train.len(),
        held.iter().map(|(_, h)| h.len()).sum::<usize>()
    ));
    let mut trainer = PositionTrainer::with_rate(rate);
    for pos in &train {
        trainer.count(pos);
    }
    for epoch in 1..=epochs {
        let what = format!("epoch {epoch}");
        for (i, pos) in train.iter().enumerate() {
            trainer.step(pos);
            if i % 4096 == 0 {
                run.progress(&what, i as u64, Some(train.len() as u64));
            }
        }
        run.finished();
        let loss = trainer.take_loss();
        let weights = trainer.weights();
        let mut report = Vec::new();
        for (name, h) in &held {
            let bits = weights.model_bits(h).map_err(invalid)?;
            let sum: usize = bits.iter().sum();
            report.push(format!(
                "{name} {:.2}",
                sum as f64 / bits.len().max(1) as f64
            ));
        }
        run.line(format!(
            "epoch {epoch}: training {loss:.2} bits/board; held-out bits/position: {}",
            report.join(", ")
        ));
    }
    let weights = trainer.weights();
    run.write(output, &weights.to_bytes())?;
    run.line(format!(
        "wrote {} (hash {:016x})",
        output.display(),
        weights.hash()
    ));
    Ok(())
}

/// The first `limit` items of each list, interleaved one by one.
fn interleave<T>(per_file: Vec<Vec<T>>, limit: u64) -> Vec<T> {
    let mut iters: Vec<_> = per_file
        .into_iter()
        .map(|f| f.into_iter().take(limit as usize))
        .collect();
    let mut games = Vec::new();
    loop {
        let before = games.len();
        for f in &mut iters {
            games.extend(f.next());
        }
        if games.len() == before {
            return games;
        }
    }
}

/// Games by file.
type PerFile = Vec<Vec<Game>>;

/// The training games and the held-out games of each file (among its
/// first `limit`), and how many games were skipped.
fn load_per_file(
    run: &mut Run,
    files: &[PathBuf],
    limit: u64,
) -> io::Result<(PerFile, PerFile, u64)> {
    let mut per_file = Vec::new();
    let mut held_out = Vec::new();
    let mut skipped = 0u64;
    for path in files {
        let (mut games, mut held) = (Vec::new(), Vec::new());
        run.games(path, limit, |game| match game {
            Err(_) => skipped += 1,
            Ok(g) if is_held(&g) => held.push(g),
            Ok(g) => games.push(g),
        })?;
        per_file.push(games);
        held_out.push(held);
    }
    Ok((per_file, held_out, skipped))
}

/// Runs `epochs` passes of `step` over the plies of `games`, halving the
/// linear weights' rate after each (the hidden layer's stays: halving it
/// measured worse, 2.759 against 2.749 held-out bits/ply on a small run).
fn run_epochs(
    run: &mut Run,
    games: &[Game],
    epochs: u32,
    trainer: &mut Trainer,
    step: impl Fn(&mut Trainer, usize, &Chess, &[Move], Move) -> f64,
) {
    for epoch in 1..=epochs {
        let what = format!("epoch {epoch}");
        let (mut bits, mut plies) = (0f64, 0u64);
        for (gi, g) in games.iter().enumerate() {
            if gi % 256 == 0 {
                run.progress(&what, gi as u64, Some(games.len() as u64));
            }
            let mut pos = g.start.clone();
            for (i, &m) in g.moves.iter().enumerate() {
                bits += step(trainer, gi, &pos, &g.moves[..i], m);
                plies += 1;
                pos.play_unchecked(m);
            }
        }
        run.finished();
        run.line(format!(
            "epoch {epoch}: {:.3} bits/ply on {} training games ({plies} plies)",
            bits / plies.max(1) as f64,
            games.len()
        ));
        trainer.rate *= 0.5;
    }
}

/// Reports the ideal cost (no end symbols) of each file's held-out games
/// in bits/ply under integer `scores`, as the codecs quantise them, by
/// file and rating band.
fn report_held_out(
    run: &mut Run,
    files: &[PathBuf],
    held_out: &PerFile,
    scores: impl Fn(&GameContext, &Chess, &[Move]) -> (MoveList, Vec<i32>),
) {
    let (mut all_bits, mut all_plies) = (0f64, 0u64);
    let mut freqs = Vec::new();
    for (i, (path, games)) in files.iter().zip(held_out).enumerate() {
        if files[..i].contains(path) {
            // A file named twice weighs twice in training, not here.
            continue;
        }
        let (mut bits, mut plies) = (0f64, 0u64);
        // (games, plies, bits) by rating band.
        let mut bands = [(0u64, 0u64, 0f64); pgn::RATING_BANDS.len()];
        for g in games {
            let mut pos = g.start.clone();
            let game_bits = bits;
            let context = g.context();
            for (i, &m) in g.moves.iter().enumerate() {
                let (legal, s) = scores(&context, &pos, &g.moves[..i]);
                if legal.len() > 1 {
                    let k = legal.iter().position(|&x| x == m).unwrap_or_default();
                    bits += move_bits(&s, k, &mut freqs);
                }
                plies += 1;
                pos.play_unchecked(m);
            }
            let band = &mut bands[pgn::rating_band(g.mean_rating())];
            band.0 += 1;
            band.1 += g.moves.len() as u64;
            band.2 += bits - game_bits;
        }
        run.line(format!(
            "held out, {}: {:.3} bits/ply on {} games ({plies} plies, no end symbols)",
            file_name(path),
            bits / plies.max(1) as f64,
            games.len()
        ));
        let by_band: Vec<String> = pgn::RATING_BANDS
            .iter()
            .zip(&bands)
            .filter(|(_, b)| b.0 > 0)
            .map(|(name, &(n, p, b))| format!("{name} {:.3} ({n} games)", b / p.max(1) as f64))
            .collect();
        run.line(format!("  by rating: {}", by_band.join(", ")));
        all_bits += bits;
        all_plies += plies;
    }
    run.line(format!(
        "held out, all files: {:.3} bits/ply ({all_plies} plies)",
        all_bits / all_plies.max(1) as f64
    ));
}

/// The cost in bits of the move at `index` among moves of integer `scores`
/// (1/1024 nats), as the `model` and `fast` codecs quantise them (no end
/// symbol); `freqs` is a buffer.
fn move_bits(scores: &[i32], index: usize, freqs: &mut Vec<u32>) -> f64 {
    crate::coder::quantize_fast(&crate::model::weights_of(scores), freqs);
    f64::from(crate::coder::PRECISION) - f64::from(freqs[index]).log2()
}

fn fast(
    run: &mut Run,
    files: &[PathBuf],
    output: &Path,
    limit: u64,
    epochs: u32,
) -> io::Result<()> {
    let (per_file, held_out, skipped) = load_per_file(run, files, limit)?;
    let games = interleave(per_file, u64::MAX);
    let mut trainer = Trainer::with_features(N_FAST_FEATURES);
    run_epochs(run, &games, epochs, &mut trainer, |t, _, pos, h, m| {
        t.step_fast(pos, h, m)
    });
    let weights = FastWeights::from_values(trainer.fixed_point()).map_err(invalid)?;
    run.write(output, &weights.to_bytes())?;
    report_held_out(run, files, &held_out, |_, pos, h| weights.scores(pos, h));
    run.line(format!(
        "{skipped} games skipped\nwrote {} (model hash {:016x})",
        output.display(),
        weights.hash()
    ));
    Ok(())
}

/// [`Fit::Model`]'s numbers, and its trainer.
struct ModelSettings {
    limit: u64,
    book_limit: u64,
    epochs: u32,
    trainer: Trainer,
}

fn model(
    run: &mut Run,
    (book_files, not_in_book): (&[PathBuf], &[PathBuf]),
    output: &Path,
    settings: ModelSettings,
) -> io::Result<()> {
    let ModelSettings {
        limit,
        book_limit,
        epochs,
        mut trainer,
    } = settings;
    let files: Vec<PathBuf> = book_files.iter().chain(not_in_book).cloned().collect();
    // The held-out games are those among the first `limit` of each file
    // (more for the book would only read further).
    let (mut per_file, held_out, skipped) = load_per_file(run, &files, limit.max(book_limit))?;
    let held_out: PerFile = held_out
        .into_iter()
        .map(|f| f.into_iter().filter(|g| g.number <= limit).collect())
        .collect();
    // Each training game with whether the book counted it.
    let extra: PerFile = per_file
        .split_off(book_files.len().min(per_file.len()))
        .into_iter()
        .map(|f| f.into_iter().filter(|g| g.number <= limit).collect())
        .collect();
    let book_games = interleave(per_file, book_limit);
    let main: Vec<_> = book_games
        .iter()
        .filter(|g| g.number <= limit)
        .cloned()
        .collect();
    // The main files' games in their interleaved order, the others
    // interleaved with them game by game; and whether the book counted each.
    let flags: Vec<Vec<bool>> = std::iter::once(vec![true; main.len()])
        .chain(extra.iter().map(|l| vec![false; l.len()]))
        .collect();
    let games = interleave(std::iter::once(main).chain(extra).collect(), u64::MAX);
    let in_book = interleave(flags, u64::MAX);
    // The opening book, from the training games' early positions.
    let mut builder = BookBuilder::default();
    for g in &book_games {
        let mut pos = g.start.clone();
        for &m in g.moves.iter().take(BOOK_MAX_PLY) {
            builder.add(&pos, m);
            pos.play_unchecked(m);
        }
    }
    let book = builder.finish();
    let book_path = output.with_file_name("book.bin");
    run.write(&book_path, &book.to_bytes())?;
    run.line(format!(
        "opening book: {} positions, wrote {}",
        book.len(),
        book_path.display()
    ));
    // Each game's ratings and time control, which the model reads.
    let contexts: Vec<_> = games.iter().map(Game::context).collect();
    run_epochs(run, &games, epochs, &mut trainer, |t, g, pos, h, m| {
        t.set_game(&contexts[g]);
        t.step_with(pos, h, m, Some(&book), in_book[g])
    });
    let weights = trainer.weights();
    run.write(output, &weights.to_bytes())?;
    report_held_out(run, &files, &held_out, |g, pos, h| {
        weights.scores_in(pos, h, &book, g)
    });
    run.line(format!(
        "{skipped} games skipped\nwrote {} (model hash {:016x})",
        output.display(),
        weights.hash()
    ));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn example_move_bits() {
        let mut freqs = Vec::new();
        let even = move_bits(&[0; 4], 2, &mut freqs);
        assert!((even - 2.0).abs() < 1e-6);
    }

    #[test]
    fn example_engine_comment_prior() {
        let pgn = b"1. e4 {d=20, mt=100, pv=e4 e5 Nf3} e5 {d=19, mt=90, pv=e5 Nf3} *\n";
        let (file, used, _) = crate::archive::engine_comment_prior(&pgn[..], 1).unwrap();
        assert_eq!((&file[..4], used), (&b"CPKC"[..], 1));
    }

    #[test]
    fn interleave_takes_the_first_of_each() {
        assert_eq!(
            interleave(vec![vec![1, 2, 3], vec![10], vec![20, 21]], 2),
            [1, 10, 20, 2, 21]
        );
    }
}
