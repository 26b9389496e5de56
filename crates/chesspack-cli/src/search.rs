//! `chesspack find`, `explore` and `index`: argument parsing and printing
//! around `chesspack::search`.

use std::{
    fs::File,
    io::{self, Write},
    time::Instant,
};

use anyhow::{Context, Result};
use chesspack::{
    archive::ArchiveReader,
    search::{self, Query},
};
use clap::Args;
use serde_json::json;

use crate::archive::{ReadSeek, check_damage, open_archive};

/// What to look for and the filters, shared by `find` and `explore`.
#[derive(Args, Debug)]
pub struct QueryArgs {
    /// A position by FEN (transpositions match: the move counters do not
    /// count).
    #[arg(long, conflicts_with = "moves")]
    fen: Option<String>,
    /// A position by moves from the start, in SAN or UCI: "e4 c5 Nf3".
    #[arg(long)]
    moves: Option<String>,
    /// White's player (a part of the name, any case).
    #[arg(long)]
    white: Option<String>,
    /// Black's player.
    #[arg(long)]
    black: Option<String>,
    /// A player of either colour.
    #[arg(long)]
    player: Option<String>,
    /// The least mean rating of the two players.
    #[arg(long)]
    min_elo: Option<u32>,
    /// The most mean rating of the two players.
    #[arg(long)]
    max_elo: Option<u32>,
    /// The result: 1-0, 0-1 or 1/2-1/2.
    #[arg(long)]
    result: Option<String>,
    /// The first date (yyyy.mm.dd, yyyy.mm or yyyy).
    #[arg(long)]
    from: Option<String>,
    /// The last date.
    #[arg(long)]
    to: Option<String>,
    /// A part of the Event tag.
    #[arg(long)]
    event: Option<String>,
    /// The start of the ECO code (B90, B9, B).
    #[arg(long)]
    eco: Option<String>,
    /// A part of the opening's name, any case ("najdorf"): the Opening tag,
    /// or the name the moves give in lichess's table.
    #[arg(long)]
    opening: Option<String>,
    /// lichess's speed: ultrabullet, bullet, blitz, rapid, classical or
    /// correspondence.
    #[arg(long)]
    speed: Option<String>,
    /// Worker threads that decode games (default: all cores).
    #[arg(short = 'T', long)]
    threads: Option<usize>,
    /// Print one JSON object a line.
    #[arg(long)]
    json: bool,
    /// Print no summary (games found, time, how the archive was searched)
    /// on stderr.
    #[arg(short, long)]
    quiet: bool,
}

/// Options of `chesspack find`.
#[derive(Args, Debug)]
pub struct FindArgs {
    /// Archives to search.
    #[arg(value_name = "ARCHIVE", required = true)]
    archives: Vec<String>,
    #[command(flatten)]
    query: QueryArgs,
    /// Pieces on squares, as a FEN's board ("8/8/8/8/8/8/5PPP/6K1"); given
    /// again, any of them.
    #[arg(long)]
    sub_fen: Vec<String>,
    /// Exactly this material: KRPKR (White's pieces then Black's, each from
    /// its king) or "RP v R".
    #[arg(long)]
    material: Option<String>,
    /// White's pieces less Black's: "Q v RR".
    #[arg(long)]
    imbalance: Option<String>,
    /// Print the games themselves as PGN.
    #[arg(long, conflicts_with = "json")]
    pgn: bool,
}

/// Options of `chesspack explore`.
#[derive(Args, Debug)]
pub struct ExploreArgs {
    /// Archives to explore.
    #[arg(value_name = "ARCHIVE", required = true)]
    archives: Vec<String>,
    #[command(flatten)]
    query: QueryArgs,
}

/// Options of `chesspack index`.
#[derive(Args, Debug)]
pub struct IndexArgs {
    /// Archives to give a search index (replacing the one each has).
    #[arg(value_name = "ARCHIVE", required = true)]
    archives: Vec<String>,
    /// Worker threads (default: all cores).
    #[arg(short = 'T', long)]
    threads: Option<usize>,
    /// Print no summary (as `compress -q`).
    #[arg(short, long)]
    quiet: bool,
    /// Keep each game's squares, where each piece stood, in the index:
    /// sub-FENs, and positions that many games could come to, are much
    /// faster, and the index about three times as large.
    #[arg(long)]
    squares: bool,
    /// The most memory that building the index may take (MiB, or with K,
    /// M or G; 0: 4G, about five million master games): past it `index`
    /// stops with an error and leaves the archive as it was.
    #[arg(long, value_name = "SIZE", default_value = "0", value_parser = crate::input::memory_size)]
    memory: u64,
}

fn query_of(a: &QueryArgs) -> Query {
    let mut q = Query::default();
    q.fen.clone_from(&a.fen);
    q.moves.clone_from(&a.moves);
    q.white.clone_from(&a.white);
    q.black.clone_from(&a.black);
    q.player.clone_from(&a.player);
    q.min_elo = a.min_elo;
    q.max_elo = a.max_elo;
    q.result.clone_from(&a.result);
    q.from.clone_from(&a.from);
    q.to.clone_from(&a.to);
    q.event.clone_from(&a.event);
    q.eco.clone_from(&a.eco);
    q.opening.clone_from(&a.opening);
    q.speed.clone_from(&a.speed);
    q.threads = a.threads.unwrap_or(0);
    q
}

fn open_all(paths: &[String]) -> Result<Vec<ArchiveReader<Box<dyn ReadSeek>>>> {
    paths
        .iter()
        .map(|p| {
            let r = open_archive(p)?;
            check_damage(&r, p, false)?;
            Ok(r)
        })
        .collect()
}

/// What the search did, on stderr.
fn say_how(found: &search::Found, started: Instant) {
    let games = found.reached;
    let how = if found.scanned {
        "no search index: every game decoded (`chesspack index` adds one)"
    } else {
        "search index"
    };
    eprintln!(
        "chesspack: {games} {} in {:.3} s ({how}; {} decoded)",
        if games == 1 { "game" } else { "games" },
        started.elapsed().as_secs_f64(),
        found.decoded
    );
    if let Some(why) = &found.index_error {
        eprintln!("chesspack: {why}");
    }
    if found.not_searched > 0 {
        let n = found.not_searched;
        let what = if n == 1 {
            "game stored verbatim was"
        } else {
            "games stored verbatim were"
        };
        eprintln!("chesspack: {n} {what} not searched");
    }
}

pub fn find(args: &FindArgs) -> Result<()> {
    let mut query = query_of(&args.query);
    query.sub_fen.clone_from(&args.sub_fen);
    query.material.clone_from(&args.material);
    query.imbalance.clone_from(&args.imbalance);
    let mut archives = open_all(&args.archives)?;
    let started = Instant::now();
    let found = search::find(&mut archives, &query)?;
    let mut out = io::BufWriter::new(io::stdout().lock());
    let many = args.archives.len() > 1;
    if args.pgn {
        // The games, block by block.
        let mut by_archive: Vec<Vec<u64>> = vec![Vec::new(); archives.len()];
        for h in &found.hits {
            by_archive[h.archive].push(h.game);
        }
        for (reader, games) in archives.iter_mut().zip(&by_archive) {
            for &g in games {
                reader.write_game(g, false, &mut out)?;
            }
        }
    } else if args.query.json {
        // Written as `json!` would write the object (keys in order), without
        // making one a hit, into a buffer written out every 64 KiB: 380,608
        // hits at the start position took 0.93 s with `json!`, 0.36 s for
        // the table.
        let mut row = Vec::with_capacity(1 << 17);
        for h in &found.hits {
            row.push(b'{');
            if many {
                json_text(&mut row, "archive", &args.archives[h.archive]);
                row.push(b',');
            }
            json_text(&mut row, "black", &h.black);
            json_number(&mut row, ",\"black_elo\":", h.black_elo.into());
            json_text(&mut row, ",\"date", &h.date);
            json_text(&mut row, ",\"eco", &h.eco);
            json_text(&mut row, ",\"event", &h.event);
            json_number(&mut row, ",\"game\":", h.game);
            json_number(&mut row, ",\"ply\":", h.ply.into());
            json_text(&mut row, ",\"result", h.result);
            json_text(&mut row, ",\"white", &h.white);
            json_number(&mut row, ",\"white_elo\":", h.white_elo.into());
            row.extend_from_slice(b"}\n");
            if row.len() >= 1 << 16 {
                out.write_all(&row)?;
                row.clear();
            }
        }
        out.write_all(&row)?;
    } else {
        writeln!(
            out,
            "{}game\tply\tWhite\tBlack\tResult\tDate\tEvent",
            if many { "archive\t" } else { "" }
        )?;
        // A field's tabs and line breaks become spaces.
        let mut row = Vec::with_capacity(1 << 17);
        for h in &found.hits {
            if many {
                table_field(&mut row, &args.archives[h.archive], b'\t');
            }
            json_number(&mut row, "", h.game);
            json_number(&mut row, "\t", h.ply.into());
            row.push(b'\t');
            for (field, end) in [
                (&*h.white, b'\t'),
                (&*h.black, b'\t'),
                (h.result, b'\t'),
                (&*h.date, b'\t'),
                (&*h.event, b'\n'),
            ] {
                table_field(&mut row, field, end);
            }
            if row.len() >= 1 << 16 {
                out.write_all(&row)?;
                row.clear();
            }
        }
        out.write_all(&row)?;
    }
    out.flush()?;
    if !args.query.quiet {
        say_how(&found, started);
    }
    // The process ends after this: freeing what was read (tens of MB of
    // section and hits) would only cost time.
    std::mem::forget((archives, found));
    Ok(())
}

/// Appends `"key":"value"` to `row` (`key` may start with `,"` for a key
/// after the first; then its opening quote is there), the value escaped as
/// JSON escapes it.
fn json_text(row: &mut Vec<u8>, key: &str, value: &str) {
    if let Some(rest) = key.strip_prefix(',') {
        row.push(b',');
        row.extend_from_slice(rest.as_bytes());
    } else {
        row.push(b'"');
        row.extend_from_slice(key.as_bytes());
    }
    row.extend_from_slice(b"\":");
    if value.bytes().all(|b| b >= 0x20 && b != b'"' && b != b'\\') {
        row.push(b'"');
        row.extend_from_slice(value.as_bytes());
        row.push(b'"');
    } else {
        // Writing into a vector cannot fail.
        let _ = serde_json::to_writer(&mut *row, value);
    }
}

/// Appends `field` to `row` with its tabs and line breaks as spaces, then
/// `end`.
fn table_field(row: &mut Vec<u8>, field: &str, end: u8) {
    row.extend(field.bytes().map(|b| {
        if matches!(b, b'\t' | b'\n' | b'\r') {
            b' '
        } else {
            b
        }
    }));
    row.push(end);
}

/// Appends `key` (with its punctuation) and `n` in decimal to `row`.
fn json_number(row: &mut Vec<u8>, key: &str, n: u64) {
    row.extend_from_slice(key.as_bytes());
    row.extend_from_slice(itoa::Buffer::new().format(n).as_bytes());
}

pub fn explore(args: &ExploreArgs) -> Result<()> {
    let mut query = query_of(&args.query);
    query.explore = true;
    let mut archives = open_all(&args.archives)?;
    let started = Instant::now();
    let explored = search::find(&mut archives, &query)?;
    let mut out = io::BufWriter::new(io::stdout().lock());
    let total: u64 = explored.moves.iter().map(|m| m.games).sum();
    let pct = |n: u64, of: u64| {
        (1000 * n + of / 2)
            .checked_div(of)
            .map_or(0.0, |p| p as f64 / 10.0)
    };
    let game_ref = |g: Option<(usize, u64)>| {
        g.map(|(a, n)| {
            if archives.len() > 1 {
                format!("{}:{n}", args.archives[a])
            } else {
                n.to_string()
            }
        })
    };
    if args.query.json {
        for m in &explored.moves {
            let o = json!({
                "san": m.san, "uci": m.uci, "games": m.games,
                "white": m.white, "draws": m.draws, "black": m.black,
                "white_pct": pct(m.white, m.games), "draws_pct": pct(m.draws, m.games),
                "black_pct": pct(m.black, m.games), "mean_rating": m.mean_rating,
                "last_game": game_ref(m.last_game), "best_game": game_ref(m.best_game),
                "eco": m.opening.map(|o| o.eco), "opening": m.opening.map(|o| o.name),
            });
            writeln!(out, "{o}")?;
        }
    } else {
        if let Some(o) = explored.opening {
            writeln!(out, "{} {}", o.eco, o.name)?;
        }
        writeln!(
            out,
            "{:<8} {:>9} {:>6}  {:>6} {:>6} {:>6}  {:>6}  {:>9}  {:>9}  opening",
            "move", "games", "%", "white", "draw", "black", "rating", "latest", "best"
        )?;
        for m in &explored.moves {
            writeln!(
                out,
                "{:<8} {:>9} {:>5.1}%  {:>5.1}% {:>5.1}% {:>5.1}%  {:>6}  {:>9}  {:>9}  {}",
                m.san,
                m.games,
                pct(m.games, total),
                pct(m.white, m.games),
                pct(m.draws, m.games),
                pct(m.black, m.games),
                m.mean_rating.map_or("-".into(), |r| r.to_string()),
                game_ref(m.last_game).unwrap_or_default(),
                game_ref(m.best_game).unwrap_or_default(),
                m.opening
                    .map_or(String::new(), |o| format!("{} {}", o.eco, o.name))
            )?;
        }
    }
    out.flush()?;
    if !args.query.quiet {
        say_how(&explored, started);
    }
    // As in `find`: the process ends after this.
    std::mem::forget((archives, explored));
    Ok(())
}

pub fn index(args: &IndexArgs) -> Result<()> {
    for path in &args.archives {
        let started = Instant::now();
        let mut file = File::options()
            .read(true)
            .write(true)
            .open(path)
            .with_context(|| format!("cannot open {path}"))?;
        let before = file.metadata()?.len();
        let pb = crate::input::progress(None, "indexing");
        let bytes = search::index(
            &mut file,
            args.threads.unwrap_or(0),
            args.squares,
            args.memory,
            &mut |p| {
                if let Some(total) = p.total_bytes {
                    crate::input::set_total(&pb, total);
                }
                pb.set_position(p.bytes);
                std::ops::ControlFlow::Continue(())
            },
        )
        .with_context(|| format!("cannot index {path}"))?;
        pb.finish_and_clear();
        if args.quiet {
            continue;
        }
        let after = file.metadata()?.len();
        // Against the rest of the archive: a section replaced was part of
        // `before`.
        let rest = after.saturating_sub(bytes).max(1);
        eprintln!(
            "chesspack: {path}: search index of {bytes} bytes ({:.3}x the rest of the archive, {rest} bytes) in {:.2} s; {before} bytes before, {after} now",
            bytes as f64 / rest as f64,
            started.elapsed().as_secs_f64()
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A row's fields are written as `serde_json` writes them, names with
    /// quotes, backslashes, control bytes and other scripts among them, and
    /// the table's fields keep no tab or line break.
    #[test]
    fn rows_are_written_as_serde_json_writes_them() {
        for name in [
            "Carlsen, Magnus",
            "O\"Kelly",
            "Guyard\\Lemarchand",
            "tab\there",
            "line\nbreak\r",
            "\u{1}\u{7f}",
            "Непомнящий",
            "",
        ] {
            // (`json!`'s keys in order, as `find` writes its own.)
            let mut row = b"{".to_vec();
            json_text(&mut row, "eco", "B90");
            json_number(&mut row, ",\"game\":", 380_608);
            json_text(&mut row, ",\"white", name);
            row.push(b'}');
            let want = serde_json::json!({"white": name, "game": 380_608, "eco": "B90"});
            assert_eq!(row, serde_json::to_vec(&want).unwrap(), "{name:?}");
            let mut field = Vec::new();
            table_field(&mut field, name, b'\n');
            let text = String::from_utf8(field).unwrap();
            assert_eq!(text.matches(['\t', '\r', '\n']).count(), 1, "{name:?}");
            assert!(text.ends_with('\n'));
        }
        let mut row = Vec::new();
        json_number(&mut row, "", 0);
        json_number(&mut row, "\t", u64::MAX);
        assert_eq!(row, b"0\t18446744073709551615");
    }
}
