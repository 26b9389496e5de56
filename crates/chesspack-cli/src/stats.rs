//! `chesspack stats`: sizes, speeds and round trips of every codec.

use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, bail};
use chesspack::{
    game::{
        EngineCodec, GameCodec,
        engine_codec::{self as engine, EngineParams, ScoredPly},
    },
    holdout,
    pgn::{self, Game, GameReader},
    position::{self, PositionCodec},
};
use clap::Args;
use serde_json::json;

use crate::{
    codecs::{self, EngineOpts},
    input,
};

#[derive(Args, Debug)]
pub struct StatsArgs {
    /// Codecs to run, comma-separated; all of the kind when left out.
    #[arg(long, value_delimiter = ',')]
    codec: Vec<String>,
    /// Print one JSON object per codec instead of a table.
    #[arg(long)]
    json: bool,
    /// Also print bits/ply by the players' mean rating (`<1000`,
    /// `1000-1400`, `1400-1800`, `1800-2200`, `2200+`, `unrated`); `--json`
    /// always has them, as `by_rating`.
    #[arg(long)]
    by_rating: bool,
    /// Code every game as if its tags gave neither ratings nor a time
    /// control and it had no clocks (what `model` costs blind to who plays
    /// and how fast).
    #[arg(long)]
    no_context: bool,
    /// Code every game as if it had no clock comments (`%clk`), with its
    /// ratings and time control (what the clocks are worth).
    #[arg(long)]
    no_clocks: bool,
    /// Stop after this many games (or positions), skipped ones included.
    #[arg(long)]
    limit: Option<u64>,
    /// Read positions (EPD or FEN lines, or CSV with a FEN column) instead of games.
    #[arg(long)]
    positions: bool,
    /// Keep only the held-out 5% (see `chesspack::holdout`): figures for
    /// data the built-in tables and models were not fitted on.
    #[arg(long)]
    holdout: bool,
    /// Engine codecs: find the k that minimises the total size of the input
    /// games and use it (the thesis' per-archive k). Keeps the games in
    /// memory.
    #[arg(long)]
    tune_k: bool,
    /// Worker threads for the games (each game is coded on one thread);
    /// all cores when left out.
    #[arg(long)]
    threads: Option<usize>,
    /// Positions: time each batch of 1,024 positions this many times and
    /// keep the fastest (other processes only ever slow a round down; every
    /// round gives the same bits).
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=100))]
    rounds: u32,
    #[command(flatten)]
    engine: EngineOpts,
    /// PGN, EPD or CSV files, `.zst` compressed or not; `-` is stdin.
    #[arg(required = true)]
    files: Vec<String>,
}

pub fn run(args: &StatsArgs) -> Result<()> {
    if args.positions {
        positions(args)
    } else {
        // The games coded on `--threads` threads: the library's pool.
        let mut pipeline = chesspack::Pipeline::default();
        pipeline.threads = args.threads.map_or(0, |n| n.max(1));
        pipeline.install(|| games(args))
    }
}

#[derive(Default)]
struct GameTally {
    games: u64,
    plies: u64,
    bits: u64,
    encode: Duration,
    decode: Duration,
    failures: u64,
    /// Plies whose move was the model's 1st, 2nd, 3rd choice, or lower.
    ranks: Option<[u64; 4]>,
    /// (games, plies, bits) by [`pgn::RATING_BANDS`].
    bands: [(u64, u64, u64); pgn::RATING_BANDS.len()],
}

fn rate(count: u64, time: Duration) -> f64 {
    let s = time.as_secs_f64();
    if s > 0.0 { count as f64 / s } else { 0.0 }
}

fn ratio(a: u64, b: u64) -> f64 {
    if b > 0 { a as f64 / b as f64 } else { 0.0 }
}

/// What one codec did with one game.
struct GameResult {
    bits: u64,
    encode: Duration,
    decode: Duration,
    /// A warning when the game failed.
    failure: Option<String>,
    ranks: Option<[u64; 4]>,
}

/// What of a game's context to code it in.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Context {
    /// Ratings, time control and clocks, as the archive does.
    All,
    /// Ratings and time control.
    NoClocks,
    /// None.
    Blind,
}

/// Encodes and decodes `game` in `context`.
fn run_game(codec: &dyn GameCodec, game: &Game, context: Context) -> GameResult {
    let t0 = Instant::now();
    let in_context = match context {
        Context::All => Some(codec.in_context(&game.context())),
        Context::NoClocks => Some(codec.in_context(&game.context().without_clocks())),
        Context::Blind => None,
    };
    let codec = in_context.as_deref().unwrap_or(codec);
    let encoded = codec.encode_ranked(&game.start, &game.moves);
    let encode = t0.elapsed();
    let (bits, ranks) = match encoded {
        Ok(r) => r,
        Err(e) => {
            return GameResult {
                bits: 0,
                encode,
                decode: Duration::ZERO,
                failure: Some(format!("{} cannot encode: {e}", codec.name())),
                ranks: None,
            };
        }
    };
    let ranks = ranks.map(|r| {
        let mut h = [0u64; 4];
        for rank in r {
            h[rank.min(3)] += 1;
        }
        h
    });
    let t1 = Instant::now();
    let decoded = codec.decode(&game.start, &bits);
    let decode = t1.elapsed();
    let failure = (decoded.as_ref() != Ok(&game.moves))
        .then(|| format!("{} round trip failed", codec.name()));
    GameResult {
        bits: bits.len() as u64,
        encode,
        decode,
        failure,
        ranks,
    }
}

/// Games are read in batches of this many and coded in parallel.
const BATCH: usize = 64;

fn games(args: &StatsArgs) -> Result<()> {
    let mut codecs = codecs::game_codecs(&args.codec, &args.engine)?;
    let mut tallies: Vec<GameTally> = codecs.iter().map(|_| GameTally::default()).collect();
    let mut skipped = 0u64;
    let mut seen = 0u64;
    let mut batch: Vec<(Game, String)> = Vec::with_capacity(BATCH);
    // With --tune-k every game is kept: k is tuned on all of them first.
    let mut kept: Vec<(Game, String)> = Vec::new();
    let context = if args.no_context {
        Context::Blind
    } else if args.no_clocks {
        Context::NoClocks
    } else {
        Context::All
    };
    let process =
        |batch: &[(Game, String)], codecs: &[Box<dyn GameCodec>], tallies: &mut [GameTally]| {
            // On the pool `run` installed.
            let results: Vec<Vec<GameResult>> =
                chesspack::Pipeline::default().map(batch.iter().collect(), |(g, _)| {
                    codecs
                        .iter()
                        .map(|c| run_game(c.as_ref(), g, context))
                        .collect()
                });
            for ((game, path), per_codec) in batch.iter().zip(results) {
                for (t, r) in tallies.iter_mut().zip(per_codec) {
                    t.encode += r.encode;
                    t.decode += r.decode;
                    if let Some(msg) = r.failure {
                        eprintln!("warning: {path}: game {}: {msg}", game.number);
                        t.failures += 1;
                        continue;
                    }
                    t.games += 1;
                    t.plies += game.moves.len() as u64;
                    t.bits += r.bits;
                    let band = &mut t.bands[pgn::rating_band(game.mean_rating())];
                    band.0 += 1;
                    band.1 += game.moves.len() as u64;
                    band.2 += r.bits;
                    if let Some(h) = r.ranks {
                        let acc = t.ranks.get_or_insert([0; 4]);
                        for (a, b) in acc.iter_mut().zip(h) {
                            *a += b;
                        }
                    }
                }
            }
        };
    'files: for path in &args.files {
        let pb = input::progress(None, path);
        let reader = input::open(path, &pb)?;
        for result in GameReader::new(reader) {
            if args.limit.is_some_and(|l| seen >= l) {
                break 'files;
            }
            seen += 1;
            let game = match result {
                Ok(g) => g,
                // A read error (a truncated `.zst`, a disk error) ends the
                // input: figures over part of it would pass for the whole.
                Err(e) if e.reason.starts_with("read error") => {
                    pb.finish_and_clear();
                    anyhow::bail!("{path}: {e}");
                }
                Err(e) => {
                    pb.suspend(|| eprintln!("warning: {path}: {e} (skipped)"));
                    skipped += 1;
                    continue;
                }
            };
            if args.holdout && !holdout::is_held_out(&holdout::game_key(&game)) {
                continue;
            }
            if args.tune_k {
                kept.push((game, path.clone()));
                continue;
            }
            batch.push((game, path.clone()));
            if batch.len() == BATCH {
                pb.suspend(|| process(&batch, &codecs, &mut tallies));
                batch.clear();
            }
        }
        pb.finish_and_clear();
    }
    let mut tuned: Vec<Option<u16>> = vec![None; codecs.len()];
    if args.tune_k {
        tune(args, &kept, &mut codecs, &mut tuned)?;
        let pb = input::progress(Some(kept.len() as u64), "coding");
        for chunk in kept.chunks(BATCH) {
            process(chunk, &codecs, &mut tallies);
            pb.inc(chunk.len() as u64);
        }
        pb.finish_and_clear();
    } else {
        process(&batch, &codecs, &mut tallies);
    }
    let share = |t: &GameTally, i: usize| t.ranks.map(|r| ratio(r[i], t.plies));
    if args.json {
        for ((codec, t), tuned_k) in codecs.iter().zip(&tallies).zip(&tuned) {
            let mut obj = json!({
                "codec": codec.name(),
                "games": t.games,
                "plies": t.plies,
                "bits": t.bits,
                "bits_per_ply": ratio(t.bits, t.plies),
                "bits_per_game": ratio(t.bits, t.games),
                "encode_plies_per_s": rate(t.plies, t.encode),
                "decode_plies_per_s": rate(t.plies, t.decode),
                "roundtrip_failures": t.failures,
                "skipped_games": skipped,
                "by_rating": by_rating(t),
                "vectors": chesspack::model::vectors(),
            });
            if t.ranks.is_some() {
                obj["top1"] = json!(share(t, 0));
                obj["top2"] = json!(share(t, 1));
                obj["top3"] = json!(share(t, 2));
                obj["below_top3"] = json!(share(t, 3));
            }
            if codec.as_engine().is_some() {
                let p = args.engine.params()?;
                obj["depth"] = json!(p.depth);
                let k = tuned_k.unwrap_or(p.k_tenths);
                obj["k"] = json!(f64::from(k) / 10.0);
            }
            outln!("{obj}");
        }
    } else {
        outln!(
            "{:<15} {:>8} {:>10} {:>12} {:>8} {:>9} {:>11} {:>11} {:>6} {:>6} {:>6} {:>6} {:>8} {:>7}",
            "codec",
            "games",
            "plies",
            "bits",
            "bits/ply",
            "bits/game",
            "enc ply/s",
            "dec ply/s",
            "top1",
            "top2",
            "top3",
            "other",
            "failures",
            "skipped"
        );
        let pct =
            |v: Option<f64>| v.map_or_else(|| "-".to_owned(), |v| format!("{:.1}%", v * 100.0));
        for (codec, t) in codecs.iter().zip(&tallies) {
            outln!(
                "{:<15} {:>8} {:>10} {:>12} {:>8.3} {:>9.1} {:>11.0} {:>11.0} {:>6} {:>6} {:>6} {:>6} {:>8} {:>7}",
                codec.name(),
                t.games,
                t.plies,
                t.bits,
                ratio(t.bits, t.plies),
                ratio(t.bits, t.games),
                rate(t.plies, t.encode),
                rate(t.plies, t.decode),
                pct(share(t, 0)),
                pct(share(t, 1)),
                pct(share(t, 2)),
                pct(share(t, 3)),
                t.failures,
                skipped
            );
        }
        if codecs.iter().any(|c| c.as_engine().is_some()) {
            let p = args.engine.params()?;
            let ks: Vec<String> = codecs
                .iter()
                .zip(&tuned)
                .filter(|(c, _)| c.as_engine().is_some())
                .map(|(c, k)| {
                    format!(
                        "{} k = {}",
                        c.name(),
                        f64::from(k.unwrap_or(p.k_tenths)) / 10.0
                    )
                })
                .collect();
            outln!("engine depth {}, {}", p.depth, ks.join(", "));
        }
        if args.by_rating {
            rating_table(&codecs, &tallies)?;
        }
    }
    if tallies.iter().any(|t| t.failures > 0) {
        bail!("round trip failures");
    }
    Ok(())
}

/// The `by_rating` object of `--json`: `{band: {games, plies, bits,
/// bits_per_ply}}` for every band of [`pgn::RATING_BANDS`].
fn by_rating(t: &GameTally) -> serde_json::Value {
    let mut obj = serde_json::Map::new();
    for (name, &(games, plies, bits)) in pgn::RATING_BANDS.iter().zip(&t.bands) {
        obj.insert(
            (*name).to_owned(),
            json!({
                "games": games,
                "plies": plies,
                "bits": bits,
                "bits_per_ply": ratio(bits, plies),
            }),
        );
    }
    serde_json::Value::Object(obj)
}

/// `--by-rating`: bits/ply of each codec by rating band, with the games
/// and plies of each band (every codec sees the same games, failures
/// aside).
fn rating_table(codecs: &[Box<dyn GameCodec>], tallies: &[GameTally]) -> Result<()> {
    let Some(first) = tallies.first() else {
        return Ok(());
    };
    let used: Vec<usize> = (0..pgn::RATING_BANDS.len())
        .filter(|&b| first.bands[b].0 > 0)
        .collect();
    outln!();
    let mut head = format!("{:<18}", "bits/ply by rating");
    let mut counts = format!("{:<18}", "games / plies");
    for &b in &used {
        head.push_str(&format!(" {:>16}", pgn::RATING_BANDS[b]));
        counts.push_str(&format!(
            " {:>16}",
            format!("{} / {}", first.bands[b].0, first.bands[b].1)
        ));
    }
    outln!("{head}");
    outln!("{counts}");
    for (codec, t) in codecs.iter().zip(tallies) {
        let mut row = format!("{:<18}", codec.name());
        for &b in &used {
            let (_, plies, bits) = t.bands[b];
            row.push_str(&format!(" {:>16.3}", ratio(bits, plies)));
        }
        outln!("{row}");
    }
    Ok(())
}

/// `--tune-k`: scores every kept game once, finds the best k for each
/// engine codec and replaces it with one using that k.
fn tune(
    args: &StatsArgs,
    games: &[(Game, String)],
    codecs: &mut [Box<dyn GameCodec>],
    tuned: &mut [Option<u16>],
) -> Result<()> {
    if !codecs.iter().any(|c| c.as_engine().is_some()) {
        return Ok(());
    }
    let params = args.engine.params()?;
    let pb = input::progress(Some(games.len() as u64), "scoring for --tune-k");
    let scored: Vec<ScoredPly> = chesspack::Pipeline::default()
        .map(games.iter().collect(), |(g, _)| {
            let s = engine::score_game(&g.start, &g.moves, params).unwrap_or_default();
            pb.inc(1);
            s
        })
        .into_iter()
        .flatten()
        .collect();
    pb.finish_and_clear();
    for (codec, k) in codecs.iter_mut().zip(tuned.iter_mut()) {
        if let Some(coding) = codec.as_engine().map(EngineCodec::coding) {
            // The k that makes the streams smallest, their headers counted.
            let best = engine::tune_k_for_games(&scored, coding, games.len(), params);
            eprintln!(
                "{}: tuned k = {} on {} positions",
                codec.name(),
                f64::from(best) / 10.0,
                scored.len()
            );
            *k = Some(best);
            *codec = Box::new(EngineCodec::with_params(
                coding,
                EngineParams {
                    k_tenths: best,
                    ..params
                },
            ));
        }
    }
    Ok(())
}

#[derive(Default)]
struct PositionTally {
    positions: u64,
    bits: u64,
    max_bits: u64,
    encode: Duration,
    decode: Duration,
    failures: u64,
    unrepresentable: u64,
    /// Whether the codec has coded a position (its model loaded).
    warm: bool,
}

/// Positions timed together: each codec encodes a batch, then decodes it.
/// Timing each call had the decoder find in the first-level cache the table
/// rows that the encoder had just read for the same position (10–15% too
/// fast against any real use), and read the clock around every call.
const POSITION_BATCH: usize = 1024;

/// Encodes and decodes `batch` (line, position, EPD) with every codec and
/// adds the results to `tallies`: the fastest of `rounds` timings, the bits
/// of the last round (every round codes the same). Each codec codes one position untimed before its
/// first batch, so that loading its model (milliseconds for
/// `position-model`) does not count as coding time.
fn run_positions(
    codecs: &[Box<dyn PositionCodec>],
    tallies: &mut [PositionTally],
    batch: &[(u64, shakmaty::Chess, String)],
    rounds: u32,
    path: &str,
    pb: &indicatif::ProgressBar,
) {
    let mut encoded = Vec::with_capacity(batch.len());
    let mut decoded = Vec::with_capacity(batch.len());
    for (codec, t) in codecs.iter().zip(tallies) {
        if !t.warm
            && let Some((_, pos, _)) = batch.first()
        {
            if let Ok(bits) = codec.encode(pos) {
                std::hint::black_box(codec.decode(&bits).ok());
            }
            t.warm = true;
        }
        let (mut encode, mut decode) = (Duration::MAX, Duration::MAX);
        for _ in 0..rounds {
            encoded.clear();
            decoded.clear();
            let t0 = Instant::now();
            encoded.extend(batch.iter().map(|(_, pos, _)| codec.encode(pos)));
            encode = encode.min(t0.elapsed());
            let t1 = Instant::now();
            decoded.extend(
                encoded
                    .iter()
                    .map(|e| e.as_ref().ok().map(|b| codec.decode(b))),
            );
            decode = decode.min(t1.elapsed());
        }
        t.encode += encode;
        t.decode += decode;
        for (((line, _, epd), e), d) in batch.iter().zip(&encoded).zip(&decoded) {
            let bits = match e {
                Ok(bits) => bits,
                Err(e) => {
                    pb.suspend(|| eprintln!("warning: {path}: line {line}: {}: {e}", codec.name()));
                    t.unrepresentable += 1;
                    continue;
                }
            };
            t.positions += 1;
            t.bits += bits.len() as u64;
            t.max_bits = t.max_bits.max(bits.len() as u64);
            let back = d.as_ref().and_then(|d| d.as_ref().ok());
            if back.map(position::to_epd).as_ref() != Some(epd) {
                pb.suspend(|| {
                    eprintln!(
                        "warning: {path}: line {line}: {} round trip failed",
                        codec.name()
                    )
                });
                t.failures += 1;
            }
        }
    }
}

fn positions(args: &StatsArgs) -> Result<()> {
    let codecs: Vec<Box<dyn PositionCodec>> = if args.codec.is_empty() {
        position::codecs()
    } else {
        args.codec
            .iter()
            .map(|n| position::codec(n))
            .collect::<Result<_, _>>()?
    };
    let mut tallies: Vec<PositionTally> = codecs.iter().map(|_| PositionTally::default()).collect();
    let mut skipped = 0u64;
    let mut seen = 0u64;
    let mut batch = Vec::with_capacity(POSITION_BATCH);
    'files: for path in &args.files {
        let pb = input::progress(None, path);
        let reader = input::open(path, &pb)?;
        for item in chesspack::position::fen_lines(reader) {
            if args.limit.is_some_and(|l| seen >= l) {
                run_positions(&codecs, &mut tallies, &batch, args.rounds, path, &pb);
                pb.finish_and_clear();
                break 'files;
            }
            seen += 1;
            let (line, fen) = item.with_context(|| format!("cannot read {path}"))?;
            let pos = match position::parse_fen(&fen) {
                Ok(p) => p,
                Err(e) => {
                    pb.suspend(|| eprintln!("warning: {path}: line {line}: {e} (skipped)"));
                    skipped += 1;
                    continue;
                }
            };
            let epd = position::to_epd(&pos);
            if args.holdout && !holdout::is_held_out(epd.as_bytes()) {
                continue;
            }
            batch.push((line, pos, epd));
            if batch.len() == POSITION_BATCH {
                run_positions(&codecs, &mut tallies, &batch, args.rounds, path, &pb);
                batch.clear();
            }
        }
        run_positions(&codecs, &mut tallies, &batch, args.rounds, path, &pb);
        batch.clear();
        pb.finish_and_clear();
    }
    if args.json {
        for (codec, t) in codecs.iter().zip(&tallies) {
            outln!(
                "{}",
                json!({
                    "codec": codec.name(),
                    "positions": t.positions,
                    "bits": t.bits,
                    "bits_per_position": ratio(t.bits, t.positions),
                    "max_bits": t.max_bits,
                    "encode_positions_per_s": rate(t.positions, t.encode),
                    "decode_positions_per_s": rate(t.positions, t.decode),
                    "roundtrip_failures": t.failures,
                    "unrepresentable": t.unrepresentable,
                    "skipped": skipped,
                })
            );
        }
    } else {
        outln!(
            "{:<12} {:>9} {:>12} {:>9} {:>6} {:>12} {:>12} {:>8} {:>7} {:>8}",
            "codec",
            "positions",
            "bits",
            "bits/pos",
            "max",
            "enc pos/s",
            "dec pos/s",
            "failures",
            "unrepr",
            "skipped"
        );
        for (codec, t) in codecs.iter().zip(&tallies) {
            outln!(
                "{:<12} {:>9} {:>12} {:>9.2} {:>6} {:>12.0} {:>12.0} {:>8} {:>7} {:>8}",
                codec.name(),
                t.positions,
                t.bits,
                ratio(t.bits, t.positions),
                t.max_bits,
                rate(t.positions, t.encode),
                rate(t.positions, t.decode),
                t.failures,
                t.unrepresentable,
                skipped
            );
        }
    }
    if tallies.iter().any(|t| t.failures > 0) {
        bail!("round trip failures");
    }
    Ok(())
}
