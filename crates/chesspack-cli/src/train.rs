//! `chesspack train`: fit the tables the codecs embed.

use std::collections::BTreeMap;

use anyhow::{Context, Result};
use chesspack::{
    holdout,
    pgn::{self, GameReader},
    position,
    train::{OpeningTable, PieceSquareFit, TableBuilder},
};
use clap::Subcommand;
use shakmaty::Position;

use crate::input;

#[derive(Subcommand, Debug)]
pub enum TrainCommand {
    /// Fit the per-square symbol frequencies of the `arith` position codec on
    /// position files (EPD, FEN or puzzle CSV, `.zst` too), leaving out the
    /// held-out 5%, and write them as Rust source.
    Arith {
        /// Where to write the tables
        /// (crates/chesspack/src/position/arith_tables.rs to ship them).
        #[arg(short, long)]
        output: String,
        /// Position files.
        #[arg(required = true)]
        files: Vec<String>,
    },
    /// Fit the `position-model` codec on position files (EPD, FEN or puzzle
    /// CSV) and positions sampled from PGN games (`.pgn`, `.pgn.zst`),
    /// leaving out the held-out 5% (positions by EPD, games by moves), and
    /// write the model file; then report its bits on the held-out part of
    /// each file.
    Position {
        /// Where to write the model
        /// (crates/chesspack/src/position/model.bin to ship it).
        #[arg(short, long)]
        output: String,
        /// Positions sampled from each training game (held-out games give
        /// one).
        #[arg(long, default_value_t = 3)]
        per_game: u64,
        /// Passes over the training positions.
        #[arg(long, default_value_t = 2)]
        epochs: u32,
        /// AdaGrad's step size.
        #[arg(long, default_value_t = 0.1)]
        rate: f32,
        /// Position and PGN files (a file named twice counts twice).
        #[arg(required = true)]
        files: Vec<String>,
    },
    /// Fit the data-driven piece-square terms of the engine's evaluation on
    /// PGN files (`.zst` too), leaving out the held-out 5% of games, and
    /// write them as Rust source.
    Engine {
        /// Where to write the terms
        /// (crates/chesspack/src/engine/fitted.rs to ship them).
        #[arg(short, long)]
        output: String,
        /// Read at most this many games of each file (held-out ones
        /// included in the count).
        #[arg(long, default_value_t = 20_000)]
        limit: u64,
        /// PGN files.
        #[arg(required = true)]
        files: Vec<String>,
    },
    /// Fit the `model` codec's move model on PGN files (`.zst` too), leaving
    /// out the held-out 5% of games, and write the model file; then report
    /// its cost on held-out games of the same files.
    Model {
        /// Where to write the model
        /// (crates/chesspack/src/model/weights.bin to ship it); the opening
        /// book goes to book.bin beside it.
        #[arg(short, long)]
        output: String,
        /// Read at most this many games of each file (held-out ones
        /// included in the count).
        #[arg(long, default_value_t = 400_000)]
        limit: u64,
        /// Count the opening book on the first this many games of each
        /// file (held-out ones left out; by default all); at least
        /// `--limit`.
        #[arg(long, default_value_t = 1_000_000)]
        book_limit: u64,
        /// Passes over the training games.
        #[arg(long, default_value_t = 3)]
        epochs: u32,
        /// Hidden units (0: a linear model).
        #[arg(long, default_value_t = 256)]
        hidden: usize,
        /// AdaGrad's step size for the hidden layer.
        #[arg(long, default_value_t = 0.02)]
        hidden_rate: f32,
        /// The move features: `full` (the `model` codec's) or `quick`
        /// (the `brisk` codec's: no static exchange, checks, mobility or
        /// threats).
        #[arg(long, default_value = "full", value_parser = ["full", "quick"])]
        features: String,
        /// PGN files whose games train the weights but are not counted in
        /// the opening book (so that the book, which the engine codecs
        /// share, stays as the main files make it).
        #[arg(long, value_delimiter = ',')]
        not_in_book: Vec<String>,
        /// PGN files.
        #[arg(required = true)]
        files: Vec<String>,
    },
    /// Build the opening table that archives predict `ECO` and `Opening`
    /// tags with, from PGN files whose games carry them (leaving out the
    /// held-out 5%) or from lichess's opening TSV files; then report how
    /// many held-out games of the PGN files it names right.
    Openings {
        /// Where to write the table
        /// (crates/chesspack/src/openings-lichess.bin to ship lichess's).
        #[arg(short, long)]
        output: String,
        /// A position is listed when at least this many training games
        /// reached it (PGN input).
        #[arg(long, default_value_t = chesspack::train::MIN_GAMES)]
        min_games: u32,
        /// PGN files (`.zst` too), or lichess opening tables (`.tsv`, the
        /// columns eco, name and pgn); not both.
        #[arg(required = true)]
        files: Vec<String>,
    },
    /// Build the prior of archives' engine-comment fields (TCEC's `d=, mt=,
    /// pv=`, cutechess-cli's `+0.35/20 1.2s`): the models that coding the
    /// engine comments of PGN games in turn leaves (leaving out the
    /// held-out 5%), which each archived game's fields start from.
    EngineComments {
        /// Where to write the prior
        /// (crates/chesspack/src/archive/block/fields.bin to ship it).
        #[arg(short, long)]
        output: String,
        /// Keep the models of a number's place used at least this often.
        #[arg(long, default_value_t = 2000)]
        min_uses: u32,
        /// PGN files (`.zst` too).
        #[arg(required = true)]
        files: Vec<String>,
    },
    /// Count how often each opening of the shipped table is a game's, in
    /// PGN files (leaving out the held-out 5%): the prior that archives
    /// code each game's opening with.
    OpeningPrior {
        /// Where to write the counts (with `--bands`,
        /// crates/chesspack/src/openings-lichess-prior-bands.txt to ship
        /// them).
        #[arg(short, long)]
        output: String,
        /// Count by the players' rating band (the mean Elo below 1400,
        /// 1400-1799, 1800-2199, 2200 and up, none), one line a label and a
        /// column a band: the priors archives code openings with.
        #[arg(long)]
        bands: bool,
        /// PGN files (`.zst` too).
        #[arg(required = true)]
        files: Vec<String>,
    },
    /// Fit the `fast` codec's model (piece × origin × target and capture
    /// weights) on PGN files, leaving out the held-out 5% of games.
    Fast {
        /// Where to write the model
        /// (crates/chesspack/src/model/fast.bin to ship it).
        #[arg(short, long)]
        output: String,
        /// Read at most this many games of each file.
        #[arg(long, default_value_t = 80_000)]
        limit: u64,
        /// Passes over the training games.
        #[arg(long, default_value_t = 2)]
        epochs: u32,
        /// PGN files.
        #[arg(required = true)]
        files: Vec<String>,
    },
}

pub fn run(cmd: TrainCommand) -> Result<()> {
    match cmd {
        TrainCommand::Model {
            output,
            limit,
            book_limit,
            epochs,
            hidden,
            hidden_rate,
            features,
            not_in_book,
            files,
        } => model(
            &output,
            limit,
            book_limit.max(limit),
            epochs,
            (hidden, hidden_rate, &features),
            (&files, &not_in_book),
        ),
        TrainCommand::Fast {
            output,
            limit,
            epochs,
            files,
        } => fast(&output, limit, epochs, &files),
        TrainCommand::Arith { output, files } => arith(&output, &files),
        TrainCommand::Openings {
            output,
            min_games,
            files,
        } => openings(&output, min_games, &files),
        TrainCommand::OpeningPrior {
            output,
            bands,
            files,
        } => opening_prior(&output, bands, &files),
        TrainCommand::EngineComments {
            output,
            min_uses,
            files,
        } => engine_comments(&output, min_uses, &files),
        TrainCommand::Position {
            output,
            per_game,
            epochs,
            rate,
            files,
        } => position_model(&output, per_game, epochs, rate, &files),
        TrainCommand::Engine {
            output,
            limit,
            files,
        } => engine(&output, limit, &files),
    }
}

fn file_name(path: &str) -> String {
    std::path::Path::new(path)
        .file_name()
        .map_or_else(|| path.to_owned(), |n| n.to_string_lossy().into_owned())
}

fn engine(output: &str, limit: u64, files: &[String]) -> Result<()> {
    let mut fit = PieceSquareFit::default();
    let (mut trained, mut held, mut skipped) = (0u64, 0u64, 0u64);
    let mut names = Vec::new();
    for path in files {
        let pb = input::progress(None, path);
        let reader = input::open(path, &pb)?;
        for game in GameReader::new(reader).take(limit as usize) {
            let Ok(game) = game else {
                skipped += 1;
                continue;
            };
            if holdout::is_held_out(&holdout::game_key(&game)) {
                held += 1;
                continue;
            }
            let mut pos = game.start.clone();
            for &m in &game.moves {
                fit.add(&pos, m);
                pos.play_unchecked(m);
            }
            trained += 1;
        }
        pb.finish_and_clear();
        names.push(format!("the first {limit} games of {}", file_name(path)));
    }
    let provenance = format!(
        "Fitted on {trained} games from {} ({held} held out, {skipped} skipped).",
        names.join(" and ")
    );
    std::fs::write(output, fit.to_rust(&provenance))
        .with_context(|| format!("cannot write {output}"))?;
    eprintln!("{provenance}\nwrote {output}");
    Ok(())
}

fn engine_comments(output: &str, min_uses: u32, files: &[String]) -> Result<()> {
    let mut input = Vec::new();
    for path in files {
        let pb = input::progress(None, path);
        std::io::Read::read_to_end(&mut input::open(path, &pb)?, &mut input)
            .with_context(|| format!("cannot read {path}"))?;
        pb.finish_and_clear();
        input.push(b'\n');
    }
    let (file, used, held) = chesspack::train::engine_comment_prior(&input[..], min_uses)
        .context("cannot read the games")?;
    std::fs::write(output, &file).with_context(|| format!("cannot write {output}"))?;
    eprintln!(
        "wrote {output} ({} bytes): the engine comments of {used} games ({held} held out)",
        file.len()
    );
    Ok(())
}

fn opening_prior(output: &str, bands: bool, files: &[String]) -> Result<()> {
    let mut games = Vec::new();
    let mut held = 0u64;
    for path in files {
        let pb = input::progress(None, path);
        for g in GameReader::new(input::open(path, &pb)?).flatten() {
            if holdout::is_held_out(&holdout::game_key(&g)) {
                held += 1;
            } else {
                let elo = |t: &str| g.tag(t).and_then(|v| v.parse::<i64>().ok());
                games.push(([elo("WhiteElo"), elo("BlackElo")], g.start, g.moves));
            }
        }
        pb.finish_and_clear();
    }
    let (text, counted) = if bands {
        chesspack::train::opening_prior_bands(games)
    } else {
        chesspack::train::opening_prior(games.into_iter().map(|(_, start, moves)| (start, moves)))
    };
    std::fs::write(output, text).with_context(|| format!("cannot write {output}"))?;
    eprintln!("wrote {output}: the openings of {counted} training games ({held} held out)");
    Ok(())
}

fn openings(output: &str, min_games: u32, files: &[String]) -> Result<()> {
    let tsv = files.iter().filter(|f| f.ends_with(".tsv")).count();
    // Each PGN file's held-out games with both tags.
    let mut held: Vec<(String, Vec<pgn::Game>)> = Vec::new();
    let mut tsv_text = String::new();
    let pgn_files: Vec<&String> = files.iter().filter(|f| !f.ends_with(".tsv")).collect();
    let table = if tsv > 0 {
        // Lichess's table from its TSV files; PGN files beside them are
        // only checked.
        for path in files.iter().filter(|f| f.ends_with(".tsv")) {
            tsv_text +=
                &std::fs::read_to_string(path).with_context(|| format!("cannot read {path}"))?;
            tsv_text.push('\n');
        }
        for path in &pgn_files {
            let pb = input::progress(None, path);
            let kept = GameReader::new(input::open(path, &pb)?)
                .flatten()
                .filter(|g| g.tag("ECO").is_some() && g.tag("Opening").is_some())
                .filter(|g| holdout::is_held_out(&holdout::game_key(g)))
                .collect();
            pb.finish_and_clear();
            held.push((file_name(path), kept));
        }
        OpeningTable::from_tsv(&tsv_text)?
    } else {
        let mut b = TableBuilder::default();
        let mut skipped = 0u64;
        for path in files {
            let pb = input::progress(None, path);
            let mut kept = Vec::new();
            for game in GameReader::new(input::open(path, &pb)?) {
                let Ok(g) = game else {
                    skipped += 1;
                    continue;
                };
                let (Some(eco), Some(name)) = (g.tag("ECO"), g.tag("Opening")) else {
                    continue;
                };
                if holdout::is_held_out(&holdout::game_key(&g)) {
                    kept.push(g);
                } else {
                    b.add(&g.start, &g.moves, eco, name);
                }
            }
            pb.finish_and_clear();
            held.push((file_name(path), kept));
        }
        eprintln!(
            "{} training games with ECO and Opening tags ({skipped} skipped as malformed)",
            b.games()
        );
        b.finish(min_games)
    };
    let bytes = table.to_bytes();
    std::fs::write(output, &bytes).with_context(|| format!("cannot write {output}"))?;
    eprintln!(
        "wrote {output}: {} positions, {} openings, {} bytes, hash {:016x}",
        table.len(),
        table.openings(),
        bytes.len(),
        table.hash()
    );
    // The listed positions themselves, which readers of the shipped table
    // use to stop decoding a game's moves early (issue 40): from the lines,
    // or from the games again.
    let positions = std::path::Path::new(output).with_file_name(
        std::path::Path::new(output)
            .file_stem()
            .map_or("openings".into(), |s| s.to_string_lossy().into_owned())
            + "-positions.txt",
    );
    if tsv > 0 {
        std::fs::write(&positions, table.tsv_positions(&tsv_text)?)
            .with_context(|| format!("cannot write {}", positions.display()))?;
        eprintln!("wrote {}", positions.display());
    } else {
        let mut games = Vec::new();
        for path in files {
            let pb = input::progress(None, path);
            games.extend(
                GameReader::new(input::open(path, &pb)?)
                    .flatten()
                    .map(|g| (g.start, g.moves)),
            );
            pb.finish_and_clear();
        }
        let text = table.positions_in(games)?;
        std::fs::write(&positions, text)
            .with_context(|| format!("cannot write {}", positions.display()))?;
        eprintln!("wrote {}", positions.display());
    }
    if held.is_empty() {
        return Ok(());
    }
    outln!(
        "held-out games with both tags (`?` for none): file, games, both tags right, ECO right, name right, none named"
    );
    // The commonest disagreements: (tags, classification), games.
    let mut wrong: BTreeMap<(String, String), u64> = BTreeMap::new();
    for (name_of_file, games_held) in &held {
        let (mut both, mut eco_ok, mut name_ok, mut none) = (0u64, 0u64, 0u64, 0u64);
        let games = games_held.len() as u64;
        for g in games_held {
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
        let pct = |n: u64| 100.0 * n as f64 / games.max(1) as f64;
        outln!(
            "{name_of_file}\t{games}\t{:.2}%\t{:.2}%\t{:.2}%\t{:.1}%",
            pct(both),
            pct(eco_ok),
            pct(name_ok),
            pct(none)
        );
    }
    let mut wrong: Vec<_> = wrong.into_iter().collect();
    wrong.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    if !wrong.is_empty() {
        outln!("commonest disagreements: games, the game's tags, the classification");
    }
    for ((tags, ours), n) in wrong.iter().take(25) {
        outln!("{n}\t{tags}\t{ours}");
    }
    Ok(())
}

/// Calls `f` with every valid position of a position file and whether it is
/// held out (by EPD); returns the number of invalid lines skipped.
fn read_positions(path: &str, mut f: impl FnMut(shakmaty::Chess, bool)) -> Result<u64> {
    let mut skipped = 0;
    let pb = input::progress(None, path);
    for item in input::fen_lines(input::open(path, &pb)?) {
        let (_, fen) = item?;
        let Ok(pos) = position::parse_fen(&fen) else {
            skipped += 1;
            continue;
        };
        let is_held = holdout::is_held_out(position::to_epd(&pos).as_bytes());
        f(pos, is_held);
    }
    pb.finish_and_clear();
    Ok(skipped)
}

fn arith(output: &str, files: &[String]) -> Result<()> {
    let mut tables = chesspack::train::ArithTables::default();
    let (mut trained, mut held, mut skipped) = (0u64, 0u64, 0u64);
    let mut names = Vec::new();
    for path in files {
        skipped += read_positions(path, |pos, is_held| {
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
    std::fs::write(output, tables.to_rust(&provenance))
        .with_context(|| format!("cannot write {output}"))?;
    eprintln!("{provenance}\nwrote {output}");
    Ok(())
}

fn is_pgn(path: &str) -> bool {
    let p = path.to_ascii_lowercase();
    p.ends_with(".pgn") || p.ends_with(".pgn.zst")
}

/// Positions sampled from the games of a PGN file: `per_game` plies of each
/// training game and one of each held-out game, chosen by the game's hash.
fn sample_games(
    path: &str,
    per_game: u64,
    train: &mut Vec<shakmaty::Chess>,
    held: &mut Vec<shakmaty::Chess>,
) -> Result<()> {
    let pb = input::progress(None, path);
    for game in GameReader::new(input::open(path, &pb)?).flatten() {
        let key = holdout::game_key(&game);
        let hash = chesspack::train::fnv1a(&key);
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
    }
    pb.finish_and_clear();
    Ok(())
}

fn position_model(
    output: &str,
    per_game: u64,
    epochs: u32,
    rate: f32,
    files: &[String],
) -> Result<()> {
    let mut train = Vec::new();
    let mut held: Vec<(String, Vec<shakmaty::Chess>)> = Vec::new();
    let mut skipped = 0u64;
    for path in files {
        let mut h = Vec::new();
        if is_pgn(path) {
            sample_games(path, per_game, &mut train, &mut h)?;
        } else {
            skipped += read_positions(path, |pos, is_held| {
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
    eprintln!(
        "{} training positions, {} held out, {skipped} invalid skipped",
        train.len(),
        held.iter().map(|(_, h)| h.len()).sum::<usize>()
    );
    let mut trainer = chesspack::train::PositionTrainer::with_rate(rate);
    for pos in &train {
        trainer.count(pos);
    }
    for epoch in 0..epochs {
        let pb = input::progress(Some(train.len() as u64), &format!("epoch {}", epoch + 1));
        for (i, pos) in train.iter().enumerate() {
            trainer.step(pos);
            if i % 4096 == 0 {
                pb.set_position(i as u64);
            }
        }
        pb.finish_and_clear();
        let loss = trainer.take_loss();
        let weights = trainer.weights();
        let report: Vec<String> = held
            .iter()
            .map(|(name, h)| -> Result<String> {
                let bits = weights.model_bits(h)?;
                let sum: usize = bits.iter().sum();
                Ok(format!(
                    "{name} {:.2}",
                    sum as f64 / bits.len().max(1) as f64
                ))
            })
            .collect::<Result<_>>()?;
        eprintln!(
            "epoch {}: training {loss:.2} bits/board; held-out bits/position: {}",
            epoch + 1,
            report.join(", ")
        );
    }
    let weights = trainer.weights();
    std::fs::write(output, weights.to_bytes()).with_context(|| format!("cannot write {output}"))?;
    eprintln!("wrote {output} (hash {:016x})", weights.hash());
    Ok(())
}

/// The training games of `files` (the first `limit` of each, interleaved
/// game by game) and their held-out games, by file.
fn load_games(
    files: &[String],
    limit: u64,
) -> Result<(
    Vec<chesspack::pgn::Game>,
    Vec<Vec<chesspack::pgn::Game>>,
    u64,
)> {
    let (per_file, held_out, skipped) = load_per_file(files, limit)?;
    Ok((interleave(per_file, u64::MAX), held_out, skipped))
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
type PerFile = Vec<Vec<chesspack::pgn::Game>>;

/// The training games and the held-out games of each file (among its
/// first `limit`), and how many games were skipped.
fn load_per_file(files: &[String], limit: u64) -> Result<(PerFile, PerFile, u64)> {
    let mut per_file = Vec::new();
    let mut held_out = Vec::new();
    let mut skipped = 0u64;
    for path in files {
        let pb = input::progress(None, path);
        let mut games = Vec::new();
        let mut held = Vec::new();
        for game in GameReader::new(input::open(path, &pb)?).take(limit as usize) {
            let Ok(game) = game else {
                skipped += 1;
                continue;
            };
            if holdout::is_held_out(&holdout::game_key(&game)) {
                held.push(game);
            } else {
                games.push(game);
            }
        }
        pb.finish_and_clear();
        per_file.push(games);
        held_out.push(held);
    }
    Ok((per_file, held_out, skipped))
}

/// Runs `epochs` passes of `step` over the plies of `games`, halving the
/// linear weights' rate after each (the hidden layer's stays: halving it
/// measured worse, 2.759 against 2.749 held-out bits/ply on a small run).
fn run_epochs(
    games: &[chesspack::pgn::Game],
    epochs: u32,
    trainer: &mut chesspack::train::Trainer,
    step: impl Fn(
        &mut chesspack::train::Trainer,
        usize,
        &shakmaty::Chess,
        &[shakmaty::Move],
        shakmaty::Move,
    ) -> f64,
) {
    for epoch in 0..epochs {
        let pb = input::progress(Some(games.len() as u64), &format!("epoch {}", epoch + 1));
        let (mut bits, mut plies) = (0f64, 0u64);
        for (gi, g) in games.iter().enumerate() {
            let mut pos = g.start.clone();
            for (i, &m) in g.moves.iter().enumerate() {
                bits += step(trainer, gi, &pos, &g.moves[..i], m);
                plies += 1;
                pos.play_unchecked(m);
            }
            pb.inc(1);
        }
        pb.finish_and_clear();
        eprintln!(
            "epoch {}: {:.3} bits/ply on {} training games ({plies} plies)",
            epoch + 1,
            bits / plies.max(1) as f64,
            games.len()
        );
        trainer.rate *= 0.5;
    }
}

/// Reports the ideal cost (no end symbols) of each file's held-out games
/// in bits/ply under integer `scores`, as the codecs quantise them.
fn report_held_out(
    files: &[String],
    held_out: &PerFile,
    scores: impl Fn(
        &chesspack::model::GameContext,
        &shakmaty::Chess,
        &[shakmaty::Move],
    ) -> (shakmaty::MoveList, Vec<i32>),
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
                    let k = legal.iter().position(|&x| x == m).expect("legal move");
                    bits += chesspack::train::move_bits(&s, k, &mut freqs);
                }
                plies += 1;
                pos.play_unchecked(m);
            }
            let band = &mut bands[pgn::rating_band(g.mean_rating())];
            band.0 += 1;
            band.1 += g.moves.len() as u64;
            band.2 += bits - game_bits;
        }
        eprintln!(
            "held out, {}: {:.3} bits/ply on {} games ({plies} plies, no end symbols)",
            file_name(path),
            bits / plies.max(1) as f64,
            games.len()
        );
        let by_band: Vec<String> = pgn::RATING_BANDS
            .iter()
            .zip(&bands)
            .filter(|(_, b)| b.0 > 0)
            .map(|(name, &(n, p, b))| format!("{name} {:.3} ({n} games)", b / p.max(1) as f64))
            .collect();
        eprintln!("  by rating: {}", by_band.join(", "));
        all_bits += bits;
        all_plies += plies;
    }
    eprintln!(
        "held out, all files: {:.3} bits/ply ({all_plies} plies)",
        all_bits / all_plies.max(1) as f64
    );
}

fn fast(output: &str, limit: u64, epochs: u32, files: &[String]) -> Result<()> {
    use chesspack::train::{FastWeights, N_FAST_FEATURES, Trainer};
    let (games, held_out, skipped) = load_games(files, limit)?;
    let mut trainer = Trainer::with_features(N_FAST_FEATURES);
    run_epochs(&games, epochs, &mut trainer, |t, _, pos, h, m| {
        t.step_fast(pos, h, m)
    });
    let weights = FastWeights::from_values(trainer.fixed_point())?;
    std::fs::write(output, weights.to_bytes()).with_context(|| format!("cannot write {output}"))?;
    report_held_out(files, &held_out, |_, pos, h| weights.scores(pos, h));
    eprintln!(
        "{skipped} games skipped\nwrote {output} (model hash {:016x})",
        weights.hash()
    );
    Ok(())
}

fn model(
    output: &str,
    limit: u64,
    book_limit: u64,
    epochs: u32,
    (hidden, hidden_rate, features): (usize, f32, &str),
    (book_files, not_in_book): (&[String], &[String]),
) -> Result<()> {
    use chesspack::train::{self, Trainer};
    let files: Vec<String> = book_files.iter().chain(not_in_book).cloned().collect();
    // The held-out games are those among the first `limit` of each file
    // (more for the book would only read further).
    let (mut per_file, held_out, skipped) = load_per_file(&files, limit.max(book_limit))?;
    let held_out: Vec<Vec<_>> = held_out
        .into_iter()
        .map(|f| f.into_iter().filter(|g| g.number <= limit).collect())
        .collect();
    // Each training game with whether the book counted it.
    let mut counted: PerFile = Vec::new();
    let mut extra: PerFile = Vec::new();
    for (i, f) in per_file.drain(..).enumerate() {
        if i < book_files.len() {
            counted.push(f);
        } else {
            extra.push(f.into_iter().filter(|g| g.number <= limit).collect());
        }
    }
    let book_games = interleave(counted, book_limit);
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
    let mut builder = train::BookBuilder::default();
    for g in &book_games {
        let mut pos = g.start.clone();
        for &m in g.moves.iter().take(train::BOOK_MAX_PLY) {
            builder.add(&pos, m);
            pos.play_unchecked(m);
        }
    }
    let book = builder.finish();
    let book_path = std::path::Path::new(output).with_file_name("book.bin");
    std::fs::write(&book_path, book.to_bytes())
        .with_context(|| format!("cannot write {}", book_path.display()))?;
    eprintln!(
        "opening book: {} positions, wrote {}",
        book.len(),
        book_path.display()
    );
    anyhow::ensure!(
        hidden <= train::MAX_HIDDEN,
        "at most {} hidden units",
        train::MAX_HIDDEN
    );
    let set = match features {
        "quick" => chesspack::model::FeatureSet::Quick,
        _ => chesspack::model::FeatureSet::Full,
    };
    let mut trainer = Trainer::with_hidden(hidden, hidden_rate).with_feature_set(set);
    // Each game's ratings and time control, which the model reads.
    let contexts: Vec<_> = games.iter().map(|g| g.context()).collect();
    run_epochs(&games, epochs, &mut trainer, |t, g, pos, h, m| {
        t.set_game(&contexts[g]);
        t.step_with(pos, h, m, Some(&book), in_book[g])
    });
    let weights = trainer.weights();
    std::fs::write(output, weights.to_bytes()).with_context(|| format!("cannot write {output}"))?;
    report_held_out(&files, &held_out, |g, pos, h| {
        weights.scores_in(pos, h, &book, g)
    });
    eprintln!(
        "{skipped} games skipped\nwrote {output} (model hash {:016x})",
        weights.hash()
    );
    Ok(())
}
