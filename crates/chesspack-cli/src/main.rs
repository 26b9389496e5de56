//! The `chesspack` command-line tool.

/// `println!` that returns I/O errors (a closed pipe ends the program
/// quietly) instead of panicking.
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        writeln!(std::io::stdout(), $($arg)*)?
    }};
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
mod alloc;
mod archive;
mod codecs;
mod explain;
mod fen;
mod input;
mod search;
mod stats;
mod train;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[global_allocator]
static ALLOCATOR: alloc::HugeLarge = alloc::HugeLarge;

/// Store chess games and positions in as few bits as information theory allows.
#[derive(Parser, Debug)]
#[command(
    name = "chesspack",
    version,
    about,
    long_about = None,
    after_help = "Exit status: 0 done; 1 an error (named on stderr); 2 a usage error (bad \
                  arguments); 3 written with data left out (damaged blocks skipped); 141 the \
                  reader of the output stopped early (`| head`)."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Compress a PGN file (or .pgn.zst, or stdin) into a .chpk archive.
    Compress(archive::CompressArgs),
    /// Give back the PGN text of an archive.
    Decompress(archive::DecompressArgs),
    /// Print games of an archive by number, reading one block each.
    Get(archive::GetArgs),
    /// Print a table of the tags of every game of an archive.
    List(archive::ListArgs),
    /// Check every block of an archive and report.
    Verify(archive::VerifyArgs),
    /// Name every game's opening as lichess does (its opening table,
    /// lichess-org/chess-openings): a table of the game, `ECO`, `Opening`
    /// and the ply of the named position.
    Classify(archive::ClassifyArgs),
    /// Find games by position (FEN or moves, transpositions included),
    /// sub-FEN, material or imbalance, and by tags: a table of game
    /// number, ply and tags.
    Find(search::FindArgs),
    /// The opening explorer: every move played from a position, with
    /// games, results and mean rating.
    Explore(search::ExploreArgs),
    /// Add a search index to archives written with --no-index (or
    /// replace theirs).
    Index(search::IndexArgs),
    /// List every game and position codec.
    Codecs,
    /// Encode or decode one position.
    #[command(subcommand)]
    Fen(fen::FenCommand),
    /// Encode and decode every game (or position) of the inputs with every
    /// codec, check the round trip and report sizes and speeds.
    Stats(stats::StatsArgs),
    /// Show ply by ply what a game costs in a codec.
    Explain(explain::ExplainArgs),
    /// Fit the static tables or models the codecs embed.
    #[command(subcommand)]
    Train(train::TrainCommand),
}

/// Two malloc arenas for all threads. glibc gives each thread its own, and
/// the blocks that one thread reads and others code and free left them
/// fragmented: compressing 132 MB of lichess games on two threads peaked at
/// 60 MB with the default arenas and 29 MB with one. With one, though, the
/// reader and both workers queued for its lock (compressing the masters
/// file: 0.7 s of system time against 0.2 s with two, decompressing it 1.0
/// against 0.3 s); with two, the lichess `.pgn.zst` compresses (`model`) in 171 MB
/// instead of 165 MB (201 MB with the default arenas).
fn limit_malloc_arenas() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets a parameter of the allocator; no other
    // thread exists yet.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 2);
    }
}

/// Exit status when the output pipe closed early: 128 + SIGPIPE, what a
/// shell reports for a tool that SIGPIPE ended.
const BROKEN_PIPE: u8 = 141;

fn main() -> ExitCode {
    limit_malloc_arenas();
    archive::clean_up_on_signals();
    // `chesspack -d FILE`, as `zstd -d` and `xz -d`.
    let mut argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if argv.get(1).is_some_and(|a| a == "-d") {
        argv[1] = "decompress".into();
    } else if argv.get(1).is_some_and(|a| a == "-dc" || a == "-cd") {
        // `chesspack -dc FILE`, as `xz -dc`.
        argv[1] = "decompress".into();
        argv.insert(2, "-c".into());
    }
    let cli = Cli::parse_from(argv);
    let result = match cli.command {
        Command::Compress(args) => archive::compress(&args),
        Command::Decompress(args) => archive::decompress(&args),
        Command::Get(args) => archive::get(&args),
        Command::List(args) => archive::list(&args),
        Command::Verify(args) => archive::verify(&args),
        Command::Classify(args) => archive::classify(&args),
        Command::Find(args) => search::find(&args),
        Command::Explore(args) => search::explore(&args),
        Command::Index(args) => search::index(&args),
        Command::Codecs => codecs(),
        Command::Fen(cmd) => fen::run(cmd),
        Command::Stats(args) => stats::run(&args),
        Command::Explain(args) => explain::run(&args),
        Command::Train(cmd) => train::run(cmd),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // A reader that stopped early (`| head`): the output is not
            // whole, which the status says as SIGPIPE's would, and quietly,
            // as xz, zstd and grep end there (issue 44).
            let broken = |io: &std::io::Error| io.kind() == std::io::ErrorKind::BrokenPipe;
            if e.chain().any(|c| {
                c.downcast_ref::<std::io::Error>().is_some_and(broken)
                    || matches!(c.downcast_ref(), Some(chesspack::archive::ArchiveError::Io(io)) if broken(io))
            }) {
                return ExitCode::from(BROKEN_PIPE);
            }
            eprintln!("chesspack: {e:#}");
            if e.downcast_ref::<archive::DataLost>().is_some() {
                return ExitCode::from(archive::DATA_LOST);
            }
            ExitCode::FAILURE
        }
    }
}

fn codecs() -> anyhow::Result<()> {
    outln!("game codecs:");
    for c in chesspack::game::codecs() {
        outln!("  {:<12} {}", c.name(), c.description());
    }
    outln!("position codecs:");
    for c in chesspack::position::codecs() {
        outln!("  {:<12} {}", c.name(), c.description());
    }
    Ok(())
}
