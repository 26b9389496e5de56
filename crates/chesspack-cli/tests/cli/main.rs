//! The command-line interface: output fields other tools rely on.

use std::process::{Command, Output};

mod reliability;

fn chesspack(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_chesspack"))
        .args(args)
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .output()
        .expect("runs")
}

/// Runs `chesspack args` with its stdout closed before it writes, as a
/// reader that stopped early (`| head`) leaves it.
fn with_stdout_closed(args: &[&str]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_chesspack"))
        .args(args)
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("runs");
    drop(child.stdout.take());
    child.wait_with_output().expect("runs")
}

fn json_lines(out: &Output) -> Vec<serde_json::Value> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("one json object per line"))
        .collect()
}

#[test]
fn stats_json_has_the_documented_fields() {
    let out = chesspack(&["stats", "--json", "samples/lichess-sample.pgn"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rows = json_lines(&out);
    let names: Vec<&str> = rows.iter().map(|r| r["codec"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "squares",
            "index",
            "radix",
            "engine-huffman",
            "engine-arith",
            "model",
            "fast",
            "brisk"
        ]
    );
    for r in &rows {
        for field in [
            "codec",
            "games",
            "plies",
            "bits",
            "bits_per_ply",
            "encode_plies_per_s",
            "decode_plies_per_s",
            "roundtrip_failures",
            "skipped_games",
        ] {
            assert!(r.get(field).is_some(), "{field} missing in {r}");
        }
        assert_eq!(r["games"], 36);
        assert_eq!(r["roundtrip_failures"], 0);
        assert_eq!(r["skipped_games"], 1);
        // Issue 26: the same games and bits again, by rating band.
        let bands = r["by_rating"].as_object().unwrap();
        let names: Vec<&str> = bands.keys().map(String::as_str).collect();
        for band in chesspack::pgn::RATING_BANDS {
            assert!(names.contains(&band), "{band} missing in {r}");
        }
        for field in ["games", "plies", "bits"] {
            let sum: u64 = bands.values().map(|b| b[field].as_u64().unwrap()).sum();
            assert_eq!(sum, r[field].as_u64().unwrap(), "{field} by rating in {r}");
        }
        assert_eq!(bands["1800-2200"]["games"], 31);
        if ["model", "brisk", "fast"].contains(&r["codec"].as_str().unwrap()) {
            for field in ["top1", "top2", "top3", "below_top3"] {
                assert!(r.get(field).is_some(), "{field} missing in {r}");
            }
        }
        if r["codec"].as_str().unwrap().starts_with("engine") {
            for field in ["top1", "top2", "top3", "below_top3", "depth", "k"] {
                assert!(r.get(field).is_some(), "{field} missing in {r}");
            }
            assert_eq!(r["k"], 80.0);
        }
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("game 37: unsupported variant \"King of the Hill\""),
        "{stderr}"
    );
}

/// Issue 58: `stats --json` names the vectors its speeds were measured
/// with, and `CHESSPACK_VECTORS` holds the move model to narrower ones
/// (to time the AVX2 and plain paths on one machine) with the same bits.
#[test]
fn regression_issue_58_stats_names_the_vectors_and_they_can_be_narrowed() {
    let run = |limit: Option<&str>| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_chesspack"));
        cmd.args([
            "stats",
            "--json",
            "--codec",
            "model",
            "samples/lichess-sample.pgn",
        ])
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
        match limit {
            Some(l) => cmd.env("CHESSPACK_VECTORS", l),
            None => cmd.env_remove("CHESSPACK_VECTORS"),
        };
        let out = cmd.output().expect("runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        json_lines(&out).remove(0)
    };
    let widest = run(None);
    let vectors = widest["vectors"].as_str().unwrap().to_owned();
    assert!(
        ["avx512", "avx2", "plain"].contains(&vectors.as_str()),
        "{vectors}"
    );
    let plain = run(Some("plain"));
    assert_eq!(plain["vectors"], "plain");
    assert_eq!(plain["bits"], widest["bits"]);
    let avx2 = run(Some("avx2"));
    let expected = if vectors == "plain" { "plain" } else { "avx2" };
    assert_eq!(avx2["vectors"], expected);
    assert_eq!(avx2["bits"], widest["bits"]);
    // Any other value sets no limit.
    assert_eq!(run(Some("avx1024"))["vectors"], vectors.as_str());
}

#[test]
fn stats_by_rating_prints_a_table_of_bands() {
    let out = chesspack(&[
        "stats",
        "--by-rating",
        "--codec",
        "index,fast",
        "samples/lichess-sample.pgn",
    ]);
    let text = ok(&out);
    let lines: Vec<&str> = text.lines().collect();
    let head = lines
        .iter()
        .position(|l| l.starts_with("bits/ply by rating"))
        .unwrap();
    // Only the bands that have games: the sample has none under 1000.
    assert!(
        lines[head].contains("1000-1400") && !lines[head].contains("<1000"),
        "{text}"
    );
    assert!(lines[head + 1].contains("31 / 2679"), "{text}");
    assert!(
        lines[head + 2].starts_with("index") && lines[head + 3].starts_with("fast"),
        "{text}"
    );
}

#[test]
fn stats_positions_json_has_the_documented_fields() {
    let out = chesspack(&[
        "stats",
        "--positions",
        "--json",
        "--codec",
        "usenet82,packed",
        "samples/puzzles-sample.csv",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rows = json_lines(&out);
    assert_eq!(rows.len(), 2);
    for r in &rows {
        for field in [
            "codec",
            "positions",
            "bits",
            "bits_per_position",
            "max_bits",
            "encode_positions_per_s",
            "decode_positions_per_s",
            "roundtrip_failures",
            "skipped",
        ] {
            assert!(r.get(field).is_some(), "{field} missing in {r}");
        }
        assert_eq!(r["positions"], 200);
    }
}

#[test]
fn stats_positions_rounds_time_again_but_count_once() {
    let run = |rounds: &str| {
        chesspack(&[
            "stats",
            "--positions",
            "--json",
            "--rounds",
            rounds,
            "--codec",
            "position-model",
            "samples/puzzles-sample.csv",
        ])
    };
    let (one, three) = (run("1"), run("3"));
    assert!(one.status.success() && three.status.success());
    let (one, three) = (&json_lines(&one)[0], &json_lines(&three)[0]);
    for field in ["positions", "bits", "max_bits", "roundtrip_failures"] {
        assert_eq!(one[field], three[field], "{field}");
    }
    assert_eq!(three["positions"], 200);
    assert!(!run("0").status.success(), "zero rounds refused");
}

/// Issue 44: a reader that closes the pipe early (`| head`) ends every
/// command quietly: no message, no panic (`verify` panicked in `println!`),
/// status 141 (or 0 when the command was done first).
#[test]
fn regression_issue_44_closed_pipes_end_quietly() {
    let chpk = compressed_sample("pipes", "s.chpk", &["--codec", "index"]);
    let chpk = chpk.to_str().unwrap();
    for args in [
        vec!["verify", chpk],
        vec!["list", chpk],
        vec!["decompress", chpk],
        vec!["get", chpk, "3"],
        vec!["codecs"],
        vec!["explain", "samples/lichess-sample.pgn"],
        vec!["stats", "samples/lichess-sample.pgn", "--codec", "index"],
    ] {
        let out = with_stdout_closed(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            matches!(out.status.code(), Some(0 | 141)),
            "{args:?}: {:?} {err}",
            out.status
        );
        assert!(
            !err.contains("panicked") && !err.contains("broken pipe"),
            "{args:?}: {err}"
        );
    }
}

/// Issue 44, item 8: a game on one line longer than 8 MiB was listed as
/// one empty row per 8 MiB piece. It is one game: counted once, one row
/// with its tags (read from its line), and `get` gives its whole text.
#[test]
fn regression_issue_44_a_long_game_on_one_line_is_one_row() {
    let dir = scratch("long-game");
    let pgn = dir.join("long.pgn");
    let mut big = b"[Event \"Marathon\"] [White \"A\"] [Black \"B\"] ".to_vec();
    let mut n = 1;
    while big.len() < 17 << 20 {
        big.extend_from_slice(format!("{n}. Nf3 Nf6 {}. Ng1 Ng8 ", n + 1).as_bytes());
        n += 2;
    }
    big.extend_from_slice(b"*\n\n");
    let small = b"[Event \"Small\"]\n\n1. e4 e5 *\n";
    std::fs::write(&pgn, [&big[..], small].concat()).unwrap();
    let chpk = dir.join("long.chpk");
    let (pgn, chpk) = (pgn.to_str().unwrap(), chpk.to_str().unwrap());
    let err = chesspack(&["compress", pgn, "-o", chpk, "--codec", "index"]);
    assert!(String::from_utf8_lossy(&err.stderr).contains("chesspack: 2 games,"));
    let list = ok(&chesspack(&["list", chpk, "--tags", "Event,White,Black"]));
    assert_eq!(
        list,
        "game\tEvent\tWhite\tBlack\n1\tMarathon\tA\tB\n2\tSmall\t\t\n"
    );
    let got = chesspack(&["get", chpk, "1"]);
    assert!(got.status.success() && got.stdout == big);
    assert!(ok(&chesspack(&["verify", chpk])).contains(", 2 games"));
}

/// Issue 44: compressing an archive is refused unless forced (it only
/// grows), as xz refuses its own files.
#[test]
fn regression_issue_44_an_archive_is_not_compressed_again() {
    let chpk = compressed_sample("again", "s.chpk", &["--codec", "index"]);
    let out = chesspack(&["compress", chpk.to_str().unwrap()]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("is already a chesspack archive"), "{err}");
    assert!(!chpk.with_extension("chpk.chpk").exists());
    ok(&chesspack(&["compress", "-f", chpk.to_str().unwrap()]));
    assert!(chpk.with_extension("chpk.chpk").exists());
}

#[test]
fn stats_limit_and_bad_games() {
    let dir = scratch("bad-games");
    let file = dir.join("bad.pgn");
    std::fs::write(
        &file,
        "1. e4 e5 *\n\n1. e4 e5 2. Ke3 *\n\nthis is not pgn\n\n1. d4 *\n",
    )
    .unwrap();
    let out = chesspack(&[
        "stats",
        "--json",
        "--codec",
        "index",
        file.to_str().unwrap(),
    ]);
    assert!(out.status.success());
    let rows = json_lines(&out);
    assert_eq!(rows[0]["skipped_games"], 1);
    assert!(String::from_utf8_lossy(&out.stderr).contains("game 2: illegal move Ke3"));
    let out = chesspack(&[
        "stats",
        "--json",
        "--limit",
        "1",
        "--codec",
        "index",
        file.to_str().unwrap(),
    ]);
    assert_eq!(json_lines(&out)[0]["games"], 1);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn fen_encode_then_decode() {
    let fen = "r1bq1rk1/pp2nppp/2n1p3/3pP3/1b1P4/2NB1N2/PP3PPP/R1BQK2R w KQ d6 0 1";
    for codec in ["usenet82", "kingspawns", "arith", "packed"] {
        let out = chesspack(&["fen", "encode", "--codec", codec, fen]);
        assert!(out.status.success());
        let line = String::from_utf8(out.stdout).unwrap();
        let hex = line.split_whitespace().nth(3).unwrap().to_owned();
        let out = chesspack(&["fen", "decode", "--codec", codec, &hex]);
        assert_eq!(
            String::from_utf8(out.stdout).unwrap().trim(),
            fen,
            "{codec}"
        );
    }
    let out = chesspack(&["fen", "encode", "not a fen"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("invalid position"));
}

#[test]
fn codecs_and_explain() {
    let out = chesspack(&["codecs"]);
    let text = String::from_utf8(out.stdout).unwrap();
    for name in [
        "squares",
        "index",
        "radix",
        "usenet82",
        "kingspawns",
        "arith",
        "packed",
    ] {
        assert!(text.contains(name), "{name}");
    }
    let out = chesspack(&["explain", "--codec", "index", "samples/lichess-sample.pgn"]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("1.e4"), "{text}");
    assert!(text.contains("bits/ply"), "{text}");
}

/// A fresh directory for one test's files.
/// A fresh directory for test `name`, under cargo's temporary directory for
/// tests (`target/tmp`): each run replaces the last one's, and nothing
/// piles up in the system's temporary directory (issue 44).
fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("cli-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The sample compressed into a fresh directory (`scratch(name)`) with
/// `args` (`index` codec and 10-game blocks, say): the archive's path.
fn compressed_sample(name: &str, file: &str, args: &[&str]) -> std::path::PathBuf {
    let chpk = scratch(name).join(file);
    let mut all = vec![
        "compress",
        "samples/lichess-sample.pgn",
        "-o",
        chpk.to_str().unwrap(),
    ];
    all.extend_from_slice(args);
    ok(&chesspack(&all));
    chpk
}

fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn archive_commands_round_trip_the_sample() {
    let dir = scratch("archive");
    let chpk = dir.join("sample.chpk");
    let chpk = chpk.to_str().unwrap();
    let sample = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../samples/lichess-sample.pgn"
    ))
    .unwrap();

    let out = chesspack(&[
        "compress",
        "samples/lichess-sample.pgn",
        "-o",
        chpk,
        "--block-games",
        "10",
        "-v",
    ]);
    ok(&out);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("37 games"), "{err}");
    assert!(err.contains("1 game stored verbatim"), "{err}");
    assert!(err.contains("unsupported variant"), "{err}");
    assert!(err.contains("moves"), "{err}");

    // Archives decode engine streams of depth 3 at most: deeper ones are
    // refused before anything is written.
    let deep = chesspack(&[
        "compress",
        "samples/lichess-sample.pgn",
        "-o",
        chpk,
        "-f",
        "--codec",
        "engine-huffman",
        "--depth",
        "4",
    ]);
    assert!(!deep.status.success());
    assert!(String::from_utf8_lossy(&deep.stderr).contains("engine depth 4 is deeper"));

    // No overwriting without -f, and no temporary file left behind.
    let again = chesspack(&["compress", "samples/lichess-sample.pgn", "-o", chpk]);
    assert!(!again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr).contains("exists (use -f to overwrite)"));
    ok(&chesspack(&[
        "compress",
        "samples/lichess-sample.pgn",
        "-o",
        chpk,
        "-f",
        "--block-games",
        "10",
    ]));
    let names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["sample.chpk"]);

    // The sample is in the canonical layout already: it comes back exactly.
    let out = chesspack(&["decompress", chpk]);
    ok(&out);
    assert!(out.stdout == sample);

    let second = sample.split(|&b| b == b'\n').collect::<Vec<_>>();
    let out = ok(&chesspack(&["get", chpk, "2", "37"]));
    assert!(
        out.starts_with("[Event \"Rated Bullet game\"]\n[Site \"https://lichess.org/M7JqE6U0\"]")
    );
    assert!(out.contains("[Variant \"King of the Hill\"]"));
    assert!(second.len() > 10);

    let out = ok(&chesspack(&["list", chpk, "--tags", "White,Result"]));
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 38);
    assert_eq!(lines[0], "game\tWhite\tResult");
    assert_eq!(lines[1], "1\tjishanshaikh4\t1-0");
    assert!(lines[37].starts_with("37\t"));

    let out = ok(&chesspack(&["verify", chpk]));
    assert!(out.contains("4 blocks, 37 games"), "{out}");
    assert!(out.contains("ok: every block"), "{out}");

    let bad = chesspack(&["get", chpk, "38"]);
    assert!(!bad.status.success());
    assert!(
        String::from_utf8_lossy(&bad.stderr)
            .contains("game 38 is not in the archive (it holds games 1 to 37)")
    );
}

#[test]
fn damaged_archives_are_reported_by_block() {
    let dir = scratch("damaged");
    let chpk = dir.join("d.chpk");
    let path = chpk.to_str().unwrap();
    ok(&chesspack(&[
        "compress",
        "samples/lichess-sample.pgn",
        "-o",
        path,
        "--block-games",
        "10",
    ]));
    let mut bytes = std::fs::read(&chpk).unwrap();
    // A byte in the middle of the file lies in the second block or later.
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x55;
    std::fs::write(&chpk, &bytes).unwrap();

    let out = chesspack(&["verify", path]);
    assert!(!out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("damaged: block"), "{text}");
    assert!(text.contains("checksum mismatch"), "{text}");

    let out = chesspack(&["decompress", path]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("checksum mismatch"));

    let out = chesspack(&["decompress", path, "--skip-damaged"]);
    // Issue 29: games left out exit with status 3.
    assert_eq!(out.status.code(), Some(3));
    let games = String::from_utf8_lossy(&out.stdout)
        .matches("[Event ")
        .count();
    assert!((27..37).contains(&games), "{games}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("skipping block"));

    // A truncated file: a clear error, and the whole blocks with --skip-damaged.
    std::fs::write(&chpk, &bytes[..bytes.len() - 100]).unwrap();
    let out = chesspack(&["decompress", path]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("may be truncated"));
}

#[test]
fn compress_reads_stdin_and_writes_stdout() {
    use std::io::Write as _;
    let mut child = Command::new(env!("CARGO_BIN_EXE_chesspack"))
        .args(["compress", "-", "-o", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"1.e4 e5 2.Qh5 Nc6 3.Bc4 Nf6 4.Qxf7# 1-0\n")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    ok(&out);
    assert!(out.stdout.starts_with(b"CHPK\r\n\x1a\n"));

    let mut child = Command::new(env!("CARGO_BIN_EXE_chesspack"))
        .args(["decompress", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(&out.stdout).unwrap();
    let back = child.wait_with_output().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&back.stdout),
        "1.e4 e5 2.Qh5 Nc6 3.Bc4 Nf6 4.Qxf7# 1-0\n"
    );
}

/// Input from stdin is told by its first bytes, as a file is: an archive
/// piped to `compress` is refused as one given by name is (it was
/// compressed again as PGN), and a binpack is engine training data.
#[test]
fn regression_issue_67_stdin_is_told_by_its_first_bytes() {
    use std::io::Write as _;
    let piped = |args: &[&str], input: &[u8]| {
        let mut child = Command::new(env!("CARGO_BIN_EXE_chesspack"))
            .args(args)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let input = input.to_vec();
        let writer = std::thread::spawn(move || stdin.write_all(&input));
        let out = child.wait_with_output().unwrap();
        let _ = writer.join();
        out
    };
    let chpk = compressed_sample("stdin-kind", "s.chpk", &["--codec", "index"]);
    let out = piped(&["compress", "-c", "-"], &std::fs::read(&chpk).unwrap());
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("already a chesspack archive"), "{err}");
    assert!(out.stdout.is_empty());
    let binpack = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../chesspack/tests/fixtures/training/selfplay.binpack"
    ))
    .unwrap();
    let packed = piped(&["compress", "-q", "-c", "-"], &binpack);
    let packed = {
        ok(&packed);
        packed.stdout
    };
    // The archive of engine training data that the file by name gives.
    let by_name = chesspack(&[
        "compress",
        "-q",
        "-c",
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../chesspack/tests/fixtures/training/selfplay.binpack"
        ),
    ]);
    assert!(packed.starts_with(b"CHPKTRN"));
    ok(&by_name);
    assert!(packed == by_name.stdout);
    let back = piped(&["decompress", "-"], &packed);
    ok(&back);
    assert!(back.stdout == binpack);
}

/// Issue 4: `-o /dev/null` once renamed a temporary file over the device.
/// Devices and pipes are written in place.
#[cfg(unix)]
#[test]
fn regression_issue_4_output_to_a_device_is_written_in_place() {
    use std::os::unix::fs::FileTypeExt as _;
    let dir = scratch("devnull");
    let chpk = dir.join("s.chpk");
    let path = chpk.to_str().unwrap();
    ok(&chesspack(&[
        "compress",
        "samples/lichess-sample.pgn",
        "-o",
        path,
    ]));
    ok(&chesspack(&["decompress", path, "-o", "/dev/null"]));
    ok(&chesspack(&[
        "compress",
        "samples/lichess-sample.pgn",
        "-o",
        "/dev/null",
    ]));
    let meta = std::fs::metadata("/dev/null").unwrap();
    assert!(meta.file_type().is_char_device());
}

/// A PGN file of the sample repeated `times` times, in `dir`.
fn big_input(dir: &std::path::Path, times: usize) -> std::path::PathBuf {
    let sample = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../samples/lichess-sample.pgn"
    ))
    .unwrap();
    let path = dir.join("big.pgn");
    std::fs::write(&path, sample.repeat(times)).unwrap();
    path
}

fn temporaries(dir: &std::path::Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect()
}

fn spawn(args: &[&str]) -> std::process::Child {
    Command::new(env!("CARGO_BIN_EXE_chesspack"))
        .args(args)
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("runs")
}

/// Issue 29, item 1: SIGINT or SIGTERM during `compress` removes the
/// temporary output, and a run after a SIGKILL sweeps what it left.
#[test]
fn regression_issue_29_interrupted_runs_leave_no_temporary_file() {
    let dir = scratch("interrupt");
    let input = big_input(&dir, 150);
    let out = dir.join("out.chpk");
    for signal in ["-INT", "-TERM"] {
        let child = spawn(&[
            "compress",
            input.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
            "-T",
            "1",
        ]);
        std::thread::sleep(std::time::Duration::from_millis(700));
        assert_eq!(temporaries(&dir).len(), 1, "writing under a temporary name");
        let killed = Command::new("kill")
            .args([signal, &child.id().to_string()])
            .status()
            .unwrap();
        assert!(killed.success());
        let result = child.wait_with_output().unwrap();
        assert!(!result.status.success());
        // Issue 44: it says why it stopped.
        assert!(
            String::from_utf8_lossy(&result.stderr).contains("interrupted"),
            "{signal}"
        );
        assert_eq!(temporaries(&dir), Vec::<String>::new(), "{signal}");
        assert!(!out.exists());
    }
    // A process killed with SIGKILL leaves its file; the next run removes
    // it (the process is dead) and says so.
    let dead = Command::new("true").spawn().unwrap();
    let pid = dead.id();
    let _ = dead.wait_with_output();
    let stale = dir.join(format!(".out.chpk.{pid}.tmp"));
    std::fs::write(&stale, b"partial").unwrap();
    let result = chesspack(&[
        "compress",
        "samples/lichess-sample.pgn",
        "-o",
        out.to_str().unwrap(),
        "--codec",
        "index",
    ]);
    ok(&result);
    assert!(!stale.exists());
    assert!(String::from_utf8_lossy(&result.stderr).contains("left by an interrupted run"));
}

/// Issue 29, item 4: a file created under the output's name while
/// `compress` runs (without `-f`) is kept, not replaced.
#[test]
fn regression_issue_29_no_overwrite_check_is_not_raced() {
    let dir = scratch("race");
    let input = big_input(&dir, 60);
    let out = dir.join("out.chpk");
    let child = spawn(&[
        "compress",
        input.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "-T",
        "1",
    ]);
    std::thread::sleep(std::time::Duration::from_millis(400));
    std::fs::write(&out, b"precious").unwrap();
    let result = child.wait_with_output().unwrap();
    assert!(!result.status.success());
    assert!(String::from_utf8_lossy(&result.stderr).contains("appeared while writing"));
    assert_eq!(std::fs::read(&out).unwrap(), b"precious");
    assert_eq!(temporaries(&dir), Vec::<String>::new());
}

/// Issue 29, items 2 and 7: output that leaves games out exits with status
/// 3 and says how many; `get` and `list` refuse a damaged index unless
/// `--skip-damaged`, as `decompress` does.
#[test]
fn regression_issue_29_data_left_out_exits_with_status_3() {
    let dir = scratch("lost");
    let chpk = dir.join("d.chpk");
    let path = chpk.to_str().unwrap();
    ok(&chesspack(&[
        "compress",
        "samples/lichess-sample.pgn",
        "-o",
        path,
        "--block-games",
        "10",
        "--codec",
        "index",
    ]));
    let good = std::fs::read(&chpk).unwrap();
    let mut bytes = good.clone();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x55;
    std::fs::write(&chpk, &bytes).unwrap();
    let out = chesspack(&["decompress", path, "--skip-damaged"]);
    assert_eq!(out.status.code(), Some(3));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("games written") && err.contains("left out"),
        "{err}"
    );

    // Truncated: no index.
    std::fs::write(&chpk, &good[..good.len() - 100]).unwrap();
    for cmd in [&["list", path][..], &["get", path, "1"][..]] {
        let out = chesspack(cmd);
        assert_eq!(out.status.code(), Some(1), "{cmd:?}");
        assert!(String::from_utf8_lossy(&out.stderr).contains("--skip-damaged"));
        let mut with = cmd.to_vec();
        with.push("--skip-damaged");
        let out = chesspack(&with);
        assert_eq!(out.status.code(), Some(3), "{with:?}");
        assert!(String::from_utf8_lossy(&out.stderr).contains("reading the"));
        assert!(!out.stdout.is_empty());
    }
}

/// Issue 29, item 3: `verify`, `list` and `get` read position archives.
#[test]
fn regression_issue_29_every_command_reads_position_archives() {
    let dir = scratch("positions");
    let chpk = dir.join("p.chpk");
    let path = chpk.to_str().unwrap();
    ok(&chesspack(&[
        "compress",
        "samples/puzzles-sample.csv",
        "-o",
        path,
    ]));
    let text = ok(&chesspack(&["verify", path]));
    assert!(text.contains("201 lines") && text.contains("ok:"), "{text}");
    let csv = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../samples/puzzles-sample.csv"
    ))
    .unwrap();
    let second = csv.lines().nth(1).unwrap();
    assert_eq!(ok(&chesspack(&["get", path, "2"])), format!("{second}\n"));
    let list = ok(&chesspack(&["list", path]));
    assert_eq!(list.lines().count(), 202);
    assert!(list.lines().nth(2).unwrap().starts_with("2\t"));
    let out = chesspack(&["get", path, "999"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("201 lines"));
}

/// Issue 29, item 8: a read error (a truncated `.zst`) fails `stats`.
#[test]
fn regression_issue_29_stats_fails_on_a_read_error() {
    let dir = scratch("stats-read");
    let sample = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../samples/lichess-sample.pgn"
    ))
    .unwrap();
    let packed = zstd::encode_all(&sample[..], 3).unwrap();
    let cut = dir.join("cut.pgn.zst");
    std::fs::write(&cut, &packed[..packed.len() / 2]).unwrap();
    let out = chesspack(&["stats", "--codec", "index", cut.to_str().unwrap()]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("read error"));
}

/// Issue 29, item 5: a position file with a line that is not UTF-8 is
/// compressed (that line verbatim, named in a warning) and comes back byte
/// for byte.
#[test]
fn regression_issue_29_position_files_keep_lines_that_are_not_utf8() {
    let dir = scratch("not-utf8");
    let epd = dir.join("p.epd");
    let text = b"8/8/8/4k3/8/8/4K3/7R w - - bm Rh5;\n\xff\xfe odd bytes\nr3k2r/8/8/8/8/8/8/R3K2R w KQkq -\n".to_vec();
    std::fs::write(&epd, &text).unwrap();
    let chpk = dir.join("p.chpk");
    let out = chesspack(&[
        "compress",
        epd.to_str().unwrap(),
        "-o",
        chpk.to_str().unwrap(),
    ]);
    ok(&out);
    assert!(String::from_utf8_lossy(&out.stderr).contains("first: line 2"));
    let back = chesspack(&["decompress", chpk.to_str().unwrap()]);
    assert!(back.status.success());
    assert_eq!(back.stdout, text);
}

/// Issue 29, item 9: zstd's and xz's habits: stdin when no input is named,
/// `-c`, `-k`, `-q`, several inputs each to its own archive, `-d`, and
/// `.gz`, `.bz2` and `.xz` inputs decompressed rather than stored as bytes.
#[test]
fn regression_issue_29_xz_and_zstd_habits() {
    use std::io::Write;

    let dir = scratch("habits");
    let sample = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../samples/lichess-sample.pgn"
    ))
    .unwrap();
    let reference = dir.join("ref.chpk");
    let reference = reference.to_str().unwrap();
    ok(&chesspack(&[
        "compress",
        "samples/lichess-sample.pgn",
        "-o",
        reference,
        "--codec",
        "index",
    ]));
    let expected = ok(&chesspack(&["decompress", reference]));
    // Issue 44: `-dc` and `decompress -c`, as xz and zstd take them.
    assert_eq!(ok(&chesspack(&["-dc", reference])), expected);
    assert_eq!(ok(&chesspack(&["decompress", "-c", reference])), expected);

    // No input: stdin to stdout.
    let mut child = Command::new(env!("CARGO_BIN_EXE_chesspack"))
        .args(["compress", "--codec", "index", "-q"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(&sample).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stderr.is_empty(), "-q prints no summary");
    let piped = dir.join("piped.chpk");
    std::fs::write(&piped, &out.stdout).unwrap();
    // -d decompresses.
    assert_eq!(ok(&chesspack(&["-d", piped.to_str().unwrap()])), expected);

    // Several inputs, compressed formats, -k accepted.
    let plain = dir.join("a.pgn");
    std::fs::write(&plain, &sample).unwrap();
    let gz = dir.join("b.pgn.gz");
    let mut w = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    w.write_all(&sample).unwrap();
    std::fs::write(&gz, w.finish().unwrap()).unwrap();
    let bz = dir.join("c.pgn.bz2");
    let mut w = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::default());
    w.write_all(&sample).unwrap();
    std::fs::write(&bz, w.finish().unwrap()).unwrap();
    let xz = dir.join("d.pgn.xz");
    let mut w = liblzma::write::XzEncoder::new(Vec::new(), 6);
    w.write_all(&sample).unwrap();
    std::fs::write(&xz, w.finish().unwrap()).unwrap();
    let names: Vec<String> = [&plain, &gz, &bz, &xz]
        .iter()
        .map(|p| p.to_str().unwrap().to_owned())
        .collect();
    let mut args = vec!["compress", "-k", "--codec", "index"];
    args.extend(names.iter().map(String::as_str));
    ok(&chesspack(&args));
    for n in &names {
        let text = ok(&chesspack(&["decompress", &format!("{n}.chpk")]));
        assert_eq!(text, expected, "{n}");
        assert!(std::path::Path::new(n).exists(), "the input is kept");
    }
    // -c: to stdout; one output for several inputs is refused.
    let out = chesspack(&["compress", "-c", "--codec", "index", &names[0]]);
    assert!(out.status.success());
    assert!(out.stdout.starts_with(b"CHPK"));
    let out = chesspack(&["compress", "-c", &names[0], &names[1]]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("2 inputs and one output"));
}

/// Flips a byte of the first block's stored bytes and writes a matching
/// CRC-32; the first such mutation that decodes to other text.
fn mutation_past_the_block_crc(packed: &[u8]) -> Vec<u8> {
    let r = chesspack::archive::ArchiveReader::open(std::io::Cursor::new(packed)).unwrap();
    let e = r.blocks()[0];
    let (start, end) = (
        e.offset as usize + 16,
        (e.offset + 16) as usize + e.len as usize,
    );
    for at in start..end {
        let mut bad = packed.to_vec();
        bad[at] ^= 0x10;
        let mut crc = flate2::Crc::new();
        crc.update(&bad[start..end]);
        bad[start - 4..start].copy_from_slice(&crc.sum().to_le_bytes());
        let mut out = Vec::new();
        if let Err(e) = chesspack::archive::decompress(std::io::Cursor::new(&bad), &mut out)
            && e.to_string().contains("decoded text does not match")
        {
            return bad;
        }
    }
    panic!("no mutation decodes to other text");
}

#[test]
fn regression_issue_29_decoded_text_and_footer_are_checked() {
    let chpk = compressed_sample(
        "text-check",
        "t.chpk",
        &["--codec", "index", "--block-games", "10"],
    );
    let path = chpk.to_str().unwrap();
    let packed = std::fs::read(&chpk).unwrap();
    let out = chesspack(&["verify", path]);
    assert!(ok(&out).contains("decodes to the input's bytes"));

    std::fs::write(&chpk, mutation_past_the_block_crc(&packed)).unwrap();
    let out = chesspack(&["verify", path]);
    assert!(!out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("damaged: block 1: decoded text does not match its checksum"),
        "{text}"
    );
    let out = chesspack(&["decompress", path]);
    assert!(!out.status.success() && out.stdout.is_empty());
    assert!(String::from_utf8_lossy(&out.stderr).contains("block 1: decoded text"));
    let out = chesspack(&["get", path, "1", "--check"]);
    assert!(!out.status.success() && out.stdout.is_empty());
    // Games of the other blocks are not touched.
    ok(&chesspack(&["get", path, "11", "--check"]));

    // Any bit of the footer's index offset and game count.
    for at in [packed.len() - 24, packed.len() - 9] {
        let mut bad = packed.clone();
        bad[at] ^= 1;
        std::fs::write(&chpk, &bad).unwrap();
        let out = chesspack(&["verify", path]);
        assert!(!out.status.success());
        assert!(String::from_utf8_lossy(&out.stdout).contains("damaged: index"));
    }
}

#[test]
fn regression_issue_29_byte_order_mark_ends_and_result_line_are_kept() {
    let dir = scratch("byte-exact");
    let pgn = dir.join("export.pgn");
    // A byte order mark, a result on its own line after a comment, and the
    // single final line feed of a lichess export.
    let mut text = b"\xef\xbb\xbf".to_vec();
    text.extend_from_slice(b"[Event \"a\"]\n[Result \"*\"]\n\n1. e4 { a comment }\n*\n\n");
    let sample = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../samples/lichess-sample.pgn"
    );
    text.extend_from_slice(&std::fs::read(sample).unwrap());
    assert!(text.ends_with(b"0-1\n"));
    std::fs::write(&pgn, &text).unwrap();
    ok(&chesspack(&["compress", pgn.to_str().unwrap()]));
    let out = chesspack(&["decompress", &format!("{}.chpk", pgn.to_str().unwrap())]);
    ok(&out);
    assert!(out.stdout == text, "not byte for byte");
}

#[test]
fn regression_issue_29_messages_name_the_file_once_and_cut_long_arguments() {
    let chpk = compressed_sample("messages", "m.chpk", &[]);
    let path = chpk.to_str().unwrap();
    let stderr = |out: &Output| String::from_utf8_lossy(&out.stderr).into_owned();
    // A full disk: the output is named, the OS text said once.
    for args in [
        vec!["decompress", path, "-o", "/dev/full"],
        vec!["compress", "samples/puzzles-sample.csv", "-o", "/dev/full"],
    ] {
        let out = chesspack(&args);
        assert!(!out.status.success());
        let e = stderr(&out);
        assert!(e.contains("cannot write /dev/full: "), "{e}");
        assert_eq!(e.matches("No space left on device").count(), 1, "{e}");
    }
    for args in [vec!["get", path, "1"], vec!["list", path]] {
        let out = Command::new(env!("CARGO_BIN_EXE_chesspack"))
            .args(&args)
            .stdout(std::fs::File::create("/dev/full").unwrap())
            .output()
            .unwrap();
        assert!(!out.status.success());
        assert!(
            stderr(&out).contains("cannot write stdout: "),
            "{}",
            stderr(&out)
        );
    }
    // The output's own name, not its temporary one.
    let out = chesspack(&[
        "compress",
        "samples/lichess-sample.pgn",
        "-o",
        "/nonexistent/x.chpk",
    ]);
    let e = stderr(&out);
    assert!(
        e.contains("cannot create /nonexistent/x.chpk: ") && !e.contains(".tmp"),
        "{e}"
    );
    // Long arguments are cut.
    let long = "x".repeat(5000);
    for args in [
        vec!["fen", "encode", long.as_str()],
        vec![
            "stats",
            "--codec",
            long.as_str(),
            "samples/lichess-sample.pgn",
        ],
    ] {
        let out = chesspack(&args);
        assert!(!out.status.success());
        let e = stderr(&out);
        assert!(e.len() < 300 && e.contains("(5000 bytes)"), "{e}");
    }
}

/// Issue 42: a binpack (also zstd-compressed) becomes a training-data
/// archive and comes back byte for byte; game commands name what it is.
#[test]
fn binpacks_compress_and_come_back() {
    let dir = scratch("binpack");
    let fixture = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../chesspack/tests/fixtures/training/selfplay.binpack"
    );
    let binpack = std::fs::read(fixture).unwrap();
    let zst = dir.join("selfplay.binpack.zst");
    std::fs::write(&zst, zstd::encode_all(&binpack[..], 3).unwrap()).unwrap();
    let out = chesspack(&["compress", zst.to_str().unwrap()]);
    ok(&out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("3000 positions in 21 chains"), "{stderr}");
    let archive = dir.join("selfplay.binpack.zst.chpk");
    let back = dir.join("back.binpack");
    ok(&chesspack(&[
        "decompress",
        archive.to_str().unwrap(),
        "-o",
        back.to_str().unwrap(),
    ]));
    assert_eq!(std::fs::read(&back).unwrap(), binpack);
    let listed = chesspack(&["list", archive.to_str().unwrap()]);
    assert!(!listed.status.success());
    assert!(String::from_utf8_lossy(&listed.stderr).contains("engine training data"));
    let again = chesspack(&["compress", archive.to_str().unwrap(), "-o", "/dev/null"]);
    assert!(String::from_utf8_lossy(&again.stderr).contains("already a chesspack archive"));
}

/// Issue 42: viriformat games in, the same bytes out with `decompress
/// --viriformat`; marlinformat records of any training archive; a bad game
/// named.
#[test]
fn viriformat_compresses_and_comes_back() {
    let dir = scratch("viriformat");
    let fixture = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../chesspack/tests/fixtures/training/selfplay.vf"
    );
    let vf = std::fs::read(fixture).unwrap();
    let input = dir.join("selfplay.vf");
    std::fs::write(&input, &vf).unwrap();
    let out = chesspack(&["compress", input.to_str().unwrap()]);
    ok(&out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("2996 positions in 23 chains"), "{stderr}");
    let archive = dir.join("selfplay.vf.chpk");
    let back = dir.join("back.vf");
    ok(&chesspack(&[
        "decompress",
        "--viriformat",
        archive.to_str().unwrap(),
        "-o",
        back.to_str().unwrap(),
    ]));
    assert_eq!(std::fs::read(&back).unwrap(), vf);
    let marlin = chesspack(&["decompress", "--marlinformat", archive.to_str().unwrap()]);
    ok(&marlin);
    assert_eq!(marlin.stdout.len(), 32 * 2996);
    let mut bad = vf.clone();
    bad[40] ^= 0x3f; // the first game's second move
    std::fs::write(&input, &bad).unwrap();
    let out = chesspack(&["compress", "-f", input.to_str().unwrap()]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("viriformat game 1 (byte 0): ply 3"),
        "{stderr}"
    );
}

/// Issue 42: nnue-pytorch `.plain` text in (also compressed), the same
/// text out with `decompress --plain`.
#[test]
fn plain_training_text_compresses_and_comes_back() {
    let dir = scratch("plain");
    let fixture = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../chesspack/tests/fixtures/training/selfplay.plain.zst"
    );
    let input = dir.join("selfplay.plain.zst");
    std::fs::copy(fixture, &input).unwrap();
    ok(&chesspack(&["compress", input.to_str().unwrap()]));
    let archive = dir.join("selfplay.plain.zst.chpk");
    let back = dir.join("back.plain");
    ok(&chesspack(&[
        "decompress",
        "--plain",
        archive.to_str().unwrap(),
        "-o",
        back.to_str().unwrap(),
    ]));
    let text = zstd::decode_all(&std::fs::read(fixture).unwrap()[..]).unwrap();
    assert_eq!(std::fs::read(&back).unwrap(), text);
    // The binpack it holds is the one Stockfish's writer makes.
    let binpack = dir.join("back.binpack");
    ok(&chesspack(&[
        "decompress",
        archive.to_str().unwrap(),
        "-o",
        binpack.to_str().unwrap(),
    ]));
    let reference = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../chesspack/tests/fixtures/training/selfplay.binpack"
    );
    assert_eq!(
        std::fs::read(binpack).unwrap(),
        std::fs::read(reference).unwrap()
    );
}

/// Three lichess games (`ECO`, `Opening` and moves) written by `fast` in
/// format 12, which this chesspack refuses (issue 67).
const ARCHIVE_V12: &str = concat!(
    "4348504b0d0a1a0a0c04666173741d26dcfff80f67f37462f12c3db5bd9336e65ee443504b42d100",
    "000004000000f25d9352040004040000000000000000101045434f0a4f70656e696e670a46454e0a",
    "000d0d01020001020001020003010200fe5e5e1200120012004332300012004b696e672773205061",
    "776e2047616d650001000100726e62716b626e722f70707070317070702f382f3470332f3450332f",
    "382f50505050315050502f524e42514b424e522077204b516b71202d20302032000008080e0d0e0d",
    "0e0d0e0d00020267d202080800080c6ae95c662c0000000205050000000000020505000000000000",
    "0000000a0a00b7e497f811b5dde100fc0637ef43504b49010000002200000000000000d100000004",
    "00000000000000020000000a0a610d2621030100000000000004000000000000004348504b454e44",
    "0a",
);

/// Issue 56: `verify` says what it checked (the input's bytes); a
/// wrapped, compact file comes back byte for byte; a flipped header byte
/// needs `--skip-damaged` and then loses nothing. Issue 67: an archive of
/// format 12 is refused by its version.
#[test]
fn regression_issue_56_verify_says_what_it_checked() {
    let dir = scratch("issue-56");
    let pgn = dir.join("wrapped.pgn");
    let text = "[White \"a\"]\n[Result \"1-0\"]\n\n1.e4 e5 2.Nf3 Nc6 3.Bb5 a6\n4.Ba4 Nf6 5.O-O Be7  1-0\n\n";
    std::fs::write(&pgn, text).unwrap();
    let chpk = dir.join("wrapped.chpk");
    ok(&chesspack(&[
        "compress",
        "-f",
        pgn.to_str().unwrap(),
        "-o",
        chpk.to_str().unwrap(),
    ]));
    let out = ok(&chesspack(&["verify", chpk.to_str().unwrap()]));
    assert!(
        out.contains(&format!("format {}", chesspack::archive::FORMAT_VERSION))
            && out.contains("decodes to the input's bytes"),
        "{out}"
    );
    assert_eq!(
        ok(&chesspack(&["decompress", chpk.to_str().unwrap()])),
        text
    );

    let old = dir.join("v12.chpk");
    let hex = ARCHIVE_V12;
    let bytes: Vec<u8> = (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
        .collect();
    std::fs::write(&old, &bytes).unwrap();
    // One format (issue 67): every command refuses it by its version.
    for c in ["verify", "decompress", "list", "classify"] {
        let out = chesspack(&[c, old.to_str().unwrap()]);
        assert!(!out.status.success(), "{c}");
        let e = String::from_utf8_lossy(&out.stderr);
        assert!(
            e.contains("archive format version 12 is not supported"),
            "{c}: {e}"
        );
    }

    let mut damaged = std::fs::read(&chpk).unwrap();
    damaged[9] ^= 0x20;
    let bad = dir.join("bad-header.chpk");
    std::fs::write(&bad, &damaged).unwrap();
    let out = chesspack(&["decompress", bad.to_str().unwrap()]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--skip-damaged"));
    let out = chesspack(&["verify", bad.to_str().unwrap()]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("damaged: header"));
    let out = chesspack(&["decompress", "--skip-damaged", bad.to_str().unwrap()]);
    assert_eq!(ok(&out), text);
}

/// Issue 57: `chesspack classify` prints a row for every game (with or
/// without tags, variants and games from a FEN with empty columns), the
/// same for the PGN, its archive and stdin, and takes another version of
/// lichess's table.
#[test]
fn regression_issue_57_classify_names_every_game() {
    let pgn = ok(&chesspack(&["classify", "samples/lichess-sample.pgn"]));
    let rows: Vec<&str> = pgn.lines().collect();
    assert_eq!(rows[0], "game\tECO\tOpening\tply");
    assert_eq!(rows.len(), 38);
    assert_eq!(rows[1], "1\tA45\tIndian Defense: Omega Gambit\t3");
    assert_eq!(rows[37], "37\t\t\t", "King of the Hill: none");
    let chpk = compressed_sample("classify", "sample.chpk", &[]);
    assert_eq!(ok(&chesspack(&["classify", chpk.to_str().unwrap()])), pgn);
    let piped = Command::new(env!("CARGO_BIN_EXE_chesspack"))
        .args(["classify", "-"])
        .stdin(std::fs::File::open(&chpk).unwrap())
        .output()
        .unwrap();
    assert_eq!(ok(&piped), pgn);
    // Another table: one line, named by it or not at all.
    let dir = scratch("classify-table");
    let tsv = dir.join("a.tsv");
    std::fs::write(&tsv, "eco\tname\tpgn\nA45\tQueen's Pawn\t1. d4\n").unwrap();
    let other = ok(&chesspack(&[
        "classify",
        "--openings",
        tsv.to_str().unwrap(),
        chpk.to_str().unwrap(),
    ]));
    // Game 1 starts 1. e4, game 2 1. d4.
    assert_eq!(other.lines().nth(1), Some("1\t\t\t"));
    assert_eq!(other.lines().nth(2), Some("2\tA45\tQueen's Pawn\t1"));
    assert!(
        other
            .lines()
            .skip(1)
            .all(|l| l.ends_with("\tA45\tQueen's Pawn\t1") || l.ends_with("\t\t\t"))
    );
}

/// Issue 69, D2: an input of no game (blank lines, a byte order mark, an
/// empty file) comes back byte for byte, and `verify` says so truthfully.
#[test]
fn regression_issue_69_d2_an_input_of_whitespace_comes_back() {
    let dir = scratch("issue-69-d2");
    let inputs: [&[u8]; 6] = [
        b"\n",
        b"\xef\xbb\xbf",
        b"\xef\xbb\xbf\r\n\r\n",
        b" \t\n\n  \n",
        b"",
        b"\n\n1. e4 e5 *\n\n\n",
    ];
    for (i, text) in inputs.iter().enumerate() {
        let pgn = dir.join(format!("{i}.pgn"));
        std::fs::write(&pgn, text).unwrap();
        let chpk = dir.join(format!("{i}.chpk"));
        let (p, c) = (pgn.to_str().unwrap(), chpk.to_str().unwrap());
        ok(&chesspack(&["compress", "-f", p, "-o", c]));
        let out = chesspack(&["decompress", c]);
        ok(&out);
        assert_eq!(out.stdout, *text, "input {i}");
        assert!(ok(&chesspack(&["verify", c])).contains("decodes to the input's bytes"));
    }
}

/// Issue 67: `compress` and `decompress` are the library's one entry point
/// (`files::compress`, `files::decompress`) for every kind of file: the
/// command line writes the same archive bytes as the library and gives the
/// input back.
#[test]
fn regression_issue_67_the_cli_compresses_every_kind_as_the_library_does() {
    use chesspack::files::{self, Kind, Settings};
    let dir = scratch("issue-67-kinds");
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    for (path, name) in [
        ("samples/lichess-sample.pgn", "g.pgn"),
        ("samples/puzzles-sample.csv", "p.csv"),
        (
            "crates/chesspack/tests/fixtures/training/selfplay.binpack",
            "t.binpack",
        ),
        (
            "crates/chesspack/tests/fixtures/training/selfplay.vf",
            "t.vf",
        ),
    ] {
        let input = std::fs::read(format!("{root}/{path}")).unwrap();
        let src = dir.join(name);
        std::fs::write(&src, &input).unwrap();
        let chpk = dir.join(format!("{name}.chpk"));
        ok(&chesspack(&[
            "compress",
            "-f",
            "-q",
            src.to_str().unwrap(),
            "-o",
            chpk.to_str().unwrap(),
        ]));
        let mut expected = Vec::new();
        files::compress(
            Kind::of(name, &input[..8]),
            &input[..],
            &mut expected,
            &Settings::default(),
            &mut |_| std::ops::ControlFlow::Continue(()),
        )
        .unwrap();
        assert!(std::fs::read(&chpk).unwrap() == expected, "{name}");
        let args: &[&str] = if name.ends_with(".vf") {
            &["decompress", "--viriformat"]
        } else {
            &["decompress"]
        };
        let out = chesspack(&[args, &[chpk.to_str().unwrap()]].concat());
        ok(&out);
        assert!(out.stdout == input, "{name}");
    }
}

/// Issue 68: `find --json` gives `game` and `ply` as `get` numbers games,
/// the same with and without the search index (and after `index`), and
/// `explore --json` counts what `find` finds; `--pgn` gives the games.
#[test]
fn issue_68_find_and_explore_json() {
    let dir = std::env::temp_dir().join(format!("chesspack-find-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (indexed, plain) = (dir.join("i.chpk"), dir.join("p.chpk"));
    let (indexed, plain) = (indexed.to_str().unwrap(), plain.to_str().unwrap());
    let sample = "samples/lichess-sample.pgn";
    assert!(
        chesspack(&["compress", "-q", "-f", sample, "-o", indexed])
            .status
            .success()
    );
    let no_index = ["compress", "-q", "-f", "--no-index", sample, "-o", plain];
    assert!(chesspack(&no_index).status.success());
    let find = |archive: &str, query: &[&str]| {
        let mut args = vec!["find", archive, "--json"];
        args.extend_from_slice(query);
        let out = chesspack(&args);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        let rows: Vec<(u64, u64)> = json_lines(&out)
            .iter()
            .map(|v| (v["game"].as_u64().unwrap(), v["ply"].as_u64().unwrap()))
            .collect();
        (rows, stderr)
    };
    let (rows, how) = find(indexed, &["--moves", "d4 c5"]);
    assert!(how.contains("search index"), "{how}");
    assert_eq!(
        rows.iter().map(|r| r.1).collect::<Vec<_>>(),
        vec![2; rows.len()]
    );
    assert!(!rows.is_empty());
    let (scanned, how) = find(plain, &["--moves", "d4 c5"]);
    assert!(how.contains("no search index"), "{how}");
    assert_eq!(rows, scanned);
    // The games are those `get` gives.
    for &(game, _) in &rows {
        let out = chesspack(&["get", indexed, &game.to_string()]);
        let text = String::from_utf8_lossy(&out.stdout);
        // The movetext without its comments and black's move numbers.
        let mut moves = String::new();
        let mut depth = 0;
        for c in text.chars() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                _ if depth == 0 => moves.push(c),
                _ => {}
            }
        }
        let moves = moves
            .replace("1...", "")
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        assert!(moves.contains("1. d4 c5"), "game {game}: {moves}");
    }
    // `--opening`: the games whose `Opening` tag holds the text, any case,
    // with the index and without.
    let sample_text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../samples/lichess-sample.pgn"
    ))
    .unwrap();
    let sicilian = sample_text
        .split("[Event ")
        .skip(1)
        .enumerate()
        // (The sample's King of the Hill game is stored verbatim: not
        // searched.)
        .filter(|(_, g)| g.contains("[Opening \"Sicilian") && !g.contains("[Variant \"King"))
        .map(|(i, _)| i as u64 + 1)
        .collect::<Vec<_>>();
    let (rows, _) = find(indexed, &["--opening", "SICILIAN"]);
    assert!(!rows.is_empty());
    assert_eq!(rows.iter().map(|r| r.0).collect::<Vec<_>>(), sicilian);
    assert_eq!(find(plain, &["--opening", "sicilian"]).0, rows);
    let pgn = chesspack(&["find", indexed, "--moves", "d4 c5", "--pgn"]);
    assert_eq!(
        String::from_utf8_lossy(&pgn.stdout)
            .matches("[Event ")
            .count(),
        rows.len()
    );
    // `index` gives the plain archive the same section (and replaces it
    // with the same again, saying nothing with `-q`).
    let said = chesspack(&["index", plain]);
    assert!(said.status.success() && !said.stderr.is_empty());
    let quiet = chesspack(&["index", "-q", plain]);
    assert!(
        quiet.status.success() && quiet.stderr.is_empty(),
        "{quiet:?}"
    );
    assert_eq!(
        std::fs::read(plain).unwrap(),
        std::fs::read(indexed).unwrap()
    );
    // With the games' squares: `index --squares` writes what `compress
    // --index-squares` does, a larger section with the same answers.
    let squares = dir.join("s.chpk");
    let squares = squares.to_str().unwrap();
    let with = [
        "compress",
        "-q",
        "-f",
        "--index-squares",
        sample,
        "-o",
        squares,
    ];
    assert!(chesspack(&with).status.success());
    assert!(std::fs::metadata(squares).unwrap().len() > std::fs::metadata(plain).unwrap().len());
    let sub_fen = ["--sub-fen", "8/8/8/8/3P4/8/8/8"];
    assert_eq!(find(squares, &sub_fen).0, find(plain, &sub_fen).0);
    assert!(
        chesspack(&["index", "-q", "--squares", plain])
            .status
            .success()
    );
    assert_eq!(
        std::fs::read(plain).unwrap(),
        std::fs::read(squares).unwrap()
    );
    // The explorer after 1. d4 counts c5 as often as `find` finds it.
    let out = chesspack(&["explore", indexed, "--moves", "d4", "--json"]);
    let moves = json_lines(&out);
    let c5 = moves
        .iter()
        .find(|m| m["san"] == "c5")
        .expect("c5 is played");
    assert_eq!(c5["games"].as_u64().unwrap(), rows.len() as u64);
    for field in [
        "uci",
        "white",
        "draws",
        "black",
        "mean_rating",
        "last_game",
        "best_game",
        "eco",
        "opening",
    ] {
        assert!(c5.get(field).is_some(), "{field}");
    }
    // 1. d4 c5 is the Old Benoni in lichess's table; the table names the
    // position above its moves.
    assert_eq!(c5["opening"], "Benoni Defense: Old Benoni");
    let out = chesspack(&["explore", indexed, "--moves", "d4 c5", "-q"]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(text.lines().next(), Some("A43 Benoni Defense: Old Benoni"));
    // A bad query is a usage error naming what is wrong.
    let out = chesspack(&["find", indexed, "--moves", "e4 e4"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a legal move"));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Building the search index takes at most the memory given: `compress`
/// past it writes the archive without the index, says so (even with
/// `-q`) and succeeds; `index` past it fails and leaves the archive as it
/// was.
#[test]
fn regression_issue_68_the_index_memory_is_bounded() {
    let dir = std::env::temp_dir().join(format!("chesspack-memory-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (small, plain) = (dir.join("s.chpk"), dir.join("p.chpk"));
    let (small, plain) = (small.to_str().unwrap(), plain.to_str().unwrap());
    let sample = "samples/lichess-sample.pgn";
    let out = chesspack(&[
        "compress",
        "-q",
        "--index-memory",
        "8K",
        sample,
        "-o",
        small,
    ]);
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(
            "warning: samples/lichess-sample.pgn: the search index would take more than 8.0 KiB"
        ) && stderr.contains("--index-memory"),
        "{stderr}"
    );
    let no_index = ["compress", "-q", "--no-index", sample, "-o", plain];
    assert!(chesspack(&no_index).status.success());
    assert_eq!(std::fs::read(small).unwrap(), std::fs::read(plain).unwrap());
    // The sample is small enough for the default.
    let out = chesspack(&["compress", "-q", "-f", sample, "-o", small]);
    assert!(out.status.success() && out.stderr.is_empty());
    let before = std::fs::read(plain).unwrap();
    let out = chesspack(&["index", "--memory", "8K", plain]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("cannot index") && stderr.contains("would take more than"),
        "{stderr}"
    );
    assert_eq!(std::fs::read(plain).unwrap(), before);
    assert!(
        chesspack(&["index", "--memory", "1G", plain])
            .status
            .success()
    );
    assert_eq!(std::fs::read(small).unwrap(), std::fs::read(plain).unwrap());
    assert!(
        !chesspack(&["index", "--memory", "lots", plain])
            .status
            .success()
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Issue 69: every exit status the command line gives is listed in its
/// help, and a usage error is status 2.
#[test]
fn regression_issue_69_exit_statuses_are_listed_in_the_help() {
    let help = String::from_utf8_lossy(&chesspack(&["--help"]).stdout).into_owned();
    for status in [
        "0 done",
        "1 an error",
        "2 a usage error",
        "3 written with data left out",
        "141",
    ] {
        assert!(help.contains(status), "{status}: {help}");
    }
    assert_eq!(
        chesspack(&["compress", "--no-such-flag"]).status.code(),
        Some(2)
    );
}

/// Issue 67: `chesspack train` parses its arguments and shows what the
/// library's fit says: the tables written, its lines on stderr, the
/// held-out table of the openings on stdout; a missing file is an error
/// that names it.
#[test]
fn regression_issue_67_train_shows_the_library_s_fit() {
    let dir = scratch("train");
    let out = dir.join("arith.rs");
    let run = chesspack(&[
        "train",
        "arith",
        "-o",
        out.to_str().unwrap(),
        "samples/puzzles-sample.csv",
    ]);
    ok(&run);
    let said = String::from_utf8_lossy(&run.stderr);
    assert!(said.starts_with("Fitted on "), "{said}");
    assert!(said.contains(&format!("wrote {}", out.display())), "{said}");
    let first = said.lines().next().unwrap();
    assert!(std::fs::read_to_string(&out).unwrap().contains(first));

    let table = dir.join("openings.bin");
    let run = chesspack(&[
        "train",
        "openings",
        "-o",
        table.to_str().unwrap(),
        "samples/lichess-sample.pgn",
    ]);
    let stdout = ok(&run);
    assert!(
        stdout.starts_with("held-out games with both tags"),
        "{stdout}"
    );
    assert!(dir.join("openings-positions.txt").exists());

    let run = chesspack(&[
        "train",
        "engine",
        "-o",
        dir.join("e.rs").to_str().unwrap(),
        "no-such-file.pgn",
    ]);
    assert!(!run.status.success());
    assert!(String::from_utf8_lossy(&run.stderr).contains("no-such-file.pgn"));
}

/// `find --json` writes its rows without `json!` (issue 68: 380,604 rows
/// took 0.93 s that way): names that need escaping and the archive's
/// name where several are searched come back as JSON parsers read them.
#[test]
fn issue_68_find_json_rows_are_json() {
    let dir = std::env::temp_dir().join(format!("chesspack-find-json-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let pgn = dir.join("names.pgn");
    std::fs::write(
        &pgn,
        "[Event \"Tab\there \\\"quoted\\\"\"]\n[White \"O\\\"Kelly \\\\ Ré\"]\n[Black \"Ян\"]\n[Result \"1-0\"]\n[WhiteElo \"2400\"]\n[Date \"1950.01.02\"]\n[ECO \"C20\"]\n\n1. e4 e5 1-0\n",
    )
    .unwrap();
    let archive = dir.join("names.chpk");
    let (pgn, archive) = (pgn.to_str().unwrap(), archive.to_str().unwrap());
    assert!(
        chesspack(&["compress", "-q", "-f", pgn, "-o", archive])
            .status
            .success()
    );
    for archives in [&[archive][..], &[archive, archive]] {
        let mut args = vec!["find"];
        args.extend_from_slice(archives);
        args.extend_from_slice(&["--moves", "e4", "--json", "-q"]);
        let rows = json_lines(&chesspack(&args));
        assert_eq!(rows.len(), archives.len());
        let want = serde_json::json!({
            "game": 1, "ply": 1, "white": "O\"Kelly \\ Ré", "black": "Ян", "white_elo": 2400,
            "black_elo": 0, "result": "1-0", "date": "1950.01.02",
            "event": "Tab\there \"quoted\"", "eco": "C20",
        });
        for row in rows {
            let mut row = row.clone();
            if archives.len() > 1 {
                assert_eq!(row["archive"], archive);
                row.as_object_mut().unwrap().remove("archive");
            }
            assert_eq!(row, want);
        }
    }
}
