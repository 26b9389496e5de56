//! Issue 27: no input loses data. Damaged archives, interrupted and failed
//! writes, hostile PGN and bad positions, through the command line.

use std::process::Output;

use shakmaty::{Chess, Position, san::SanPlus};

use super::{big_input, chesspack, compressed_sample, ok, scratch, spawn};

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A failure that is not a crash: status 1 or 3, a message, no panic.
fn clean_failure(out: &Output, what: &str) {
    let e = stderr(out);
    assert!(
        matches!(out.status.code(), Some(1 | 3)),
        "{what}: status {:?}\n{e}",
        out.status
    );
    assert!(e.starts_with("chesspack: "), "{what}: {e}");
    assert!(!e.contains("panicked"), "{what}: {e}");
}

#[test]
fn damaged_archives_never_give_wrong_games_with_status_0() {
    let good = compressed_sample(
        "reliability-damage",
        "good.chpk",
        &["--codec", "index", "--block-games", "5"],
    );
    let dir = good.parent().unwrap();
    let packed = std::fs::read(&good).unwrap();
    let blocks = chesspack::archive::ArchiveReader::open(std::io::Cursor::new(&packed))
        .unwrap()
        .blocks()
        .to_vec();
    assert_eq!(blocks.len(), 8);
    let bad = dir.join("bad.chpk");
    let bad_path = bad.to_str().unwrap().to_owned();
    let commands: [Vec<&str>; 6] = [
        vec!["decompress", &bad_path],
        vec!["verify", &bad_path],
        vec!["list", &bad_path],
        vec!["get", &bad_path, "1", "37"],
        vec!["get", "--check", &bad_path, "12"],
        vec!["classify", &bad_path],
    ];
    // What each command prints for the intact archive.
    std::fs::write(&bad, &packed).unwrap();
    let intact: Vec<Vec<u8>> = commands
        .iter()
        .map(|c| ok(&chesspack(c)).into_bytes())
        .collect();

    let mut cases: Vec<(String, Vec<u8>, Option<usize>)> = Vec::new();
    // Single flipped bytes over the whole file (every byte is under some
    // checksum), each tagged with the block it falls in.
    for at in (0..packed.len()).step_by(packed.len() / 150 + 1) {
        let mut d = packed.clone();
        d[at] ^= 0x20;
        let block = blocks.iter().position(|b| {
            (b.offset as usize..(b.offset + 16) as usize + b.len as usize).contains(&at)
        });
        cases.push((format!("flip at {at}"), d, block));
    }
    for cut in (1..packed.len()).step_by(packed.len() / 60 + 1) {
        cases.push((format!("cut at {cut}"), packed[..cut].to_vec(), None));
    }
    for garbage in [&b"\n"[..], b"CHPKEND\n", &[0u8; 1000]] {
        let mut d = packed.clone();
        d.extend_from_slice(garbage);
        cases.push((format!("{} bytes appended", garbage.len()), d, None));
    }
    assert!(cases.len() > 200, "{}", cases.len());

    for (what, data, block) in &cases {
        std::fs::write(&bad, data).unwrap();
        for (c, expected) in commands.iter().zip(&intact) {
            let out = chesspack(c);
            let what = format!("{what}, {}", c.join(" "));
            if out.status.success() {
                assert!(
                    &out.stdout == expected,
                    "{what}: other output with status 0"
                );
                continue;
            }
            clean_failure(&out, &what);
            // Damage inside a block is reported with its number by the
            // commands that read every block.
            if let (Some(b), "decompress" | "verify" | "list") = (block, c[0]) {
                let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), stderr(&out));
                assert!(text.contains(&format!("block {}", b + 1)), "{what}: {text}");
            }
        }
    }
}

#[test]
fn output_is_never_the_input_and_interrupted_writes_leave_no_output() {
    let dir = scratch("reliability-writes");
    let pgn = dir.join("g.pgn");
    std::fs::copy(
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../samples/lichess-sample.pgn"
        ),
        &pgn,
    )
    .unwrap();
    let p = pgn.to_str().unwrap();
    for args in [
        vec!["compress", p, "-o", p],
        vec!["compress", p, "-o", p, "-f"],
    ] {
        let out = chesspack(&args);
        clean_failure(&out, &args.join(" "));
        assert!(stderr(&out).contains("same file"), "{}", stderr(&out));
    }
    let chpk = format!("{p}.chpk");
    ok(&chesspack(&["compress", p]));
    let out = chesspack(&["decompress", &chpk, "-o", &chpk, "-f"]);
    clean_failure(&out, "decompress onto itself");
    assert_eq!(
        std::fs::read(&pgn).unwrap(),
        std::fs::read(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../samples/lichess-sample.pgn"
        ))
        .unwrap()
    );
    assert!(chesspack::archive::ArchiveReader::open(std::fs::File::open(&chpk).unwrap()).is_ok());

    // Killed midway: nothing under the final name.
    let big = big_input(&dir, 400);
    let out_path = dir.join("big.chpk");
    let mut child = spawn(&[
        "compress",
        big.to_str().unwrap(),
        "-o",
        out_path.to_str().unwrap(),
        "-T",
        "1",
    ]);
    std::thread::sleep(std::time::Duration::from_millis(300));
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(!out_path.exists(), "a killed compress left its output");

    // A reader that closes the pipe early: status 141, quietly (issue 44).
    let out = super::with_stdout_closed(&["decompress", &chpk]);
    assert_eq!(out.status.code(), Some(141), "{}", stderr(&out));
    assert_eq!(stderr(&out), "");
}

/// The lichess layout of a game of `plies` random legal moves (seeded).
fn random_game(seed: u64, plies: usize) -> String {
    let mut pos = Chess::default();
    let mut state = seed.max(1);
    let mut text = String::from("[Event \"random\"]\n[Result \"*\"]\n\n");
    for ply in 0..plies {
        let moves = pos.legal_moves();
        if moves.is_empty() {
            break;
        }
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        // Sorted by UCI text: legal_moves() order is not a format.
        let mut ucis: Vec<_> = moves
            .iter()
            .map(|m| (m.to_uci(shakmaty::CastlingMode::Standard).to_string(), *m))
            .collect();
        ucis.sort_by(|a, b| a.0.cmp(&b.0));
        let m = ucis[(state % ucis.len() as u64) as usize].1;
        if ply % 2 == 0 {
            text.push_str(&format!("{}. ", ply / 2 + 1));
        }
        text.push_str(&SanPlus::from_move_and_play_unchecked(&mut pos, m).to_string());
        text.push(' ');
    }
    text.push_str("*\n\n");
    text
}

/// Compresses `text`, checks that decompressing gives it back byte for
/// byte and that stderr names `warn` (when given); returns the summary.
fn round_trip(name: &str, text: &[u8], warn: Option<&str>) -> String {
    let dir = scratch(&format!("hostile-{name}"));
    let pgn = dir.join("in.pgn");
    std::fs::write(&pgn, text).unwrap();
    let started = std::time::Instant::now();
    let out = chesspack(&["compress", pgn.to_str().unwrap(), "--codec", "fast"]);
    let summary = ok(&out) + &stderr(&out);
    if let Some(w) = warn {
        assert!(summary.contains(w), "{name}: {summary}");
    }
    let out = chesspack(&["decompress", &format!("{}.chpk", pgn.display())]);
    ok(&out);
    assert!(out.stdout == text, "{name}: not byte for byte");
    // A guard against a hang, not a speed target.
    assert!(started.elapsed().as_secs() < 120, "{name}");
    summary
}

/// Two ordinary games around `odd`, all in the lichess layout.
fn among_games(odd: &[u8]) -> Vec<u8> {
    let mut text = random_game(1, 40).into_bytes();
    text.extend_from_slice(odd);
    text.extend_from_slice(random_game(2, 41).as_bytes());
    text
}

#[test]
fn hostile_pgn_empty_input() {
    round_trip("empty", b"", None);
}

#[test]
fn hostile_pgn_binary_data() {
    let mut state = 7u64;
    let bytes: Vec<u8> = (0..100_000)
        .map(|_| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 56) as u8
        })
        .collect();
    round_trip("binary", &among_games(&bytes), None);
}

#[test]
fn hostile_pgn_a_50_mb_line() {
    let mut odd = b"[Event \"long\"]\n\n1. e4 ".to_vec();
    odd.extend(std::iter::repeat_n(b'x', 50 << 20));
    odd.extend_from_slice(b"\n\n");
    round_trip("long-line", &among_games(&odd), Some("verbatim"));
}

#[test]
fn hostile_pgn_10000_nested_variations() {
    let mut odd = String::from("[Event \"nested\"]\n\n1. e4");
    for _ in 0..10_000 {
        odd.push_str(" (1. d4");
    }
    odd.push_str(&")".repeat(10_000));
    odd.push_str(" 1... e5 *\n\n");
    // Not the canonical layout (`(1. d4 (1. d4` is), so compare with it.
    let text = among_games(odd.as_bytes());
    let canonical = chesspack::archive::canonical(&text[..]).unwrap();
    round_trip("nested", &canonical, None);
}

#[test]
fn hostile_pgn_megabyte_comments_and_non_utf8_bytes() {
    let mut odd = b"[Event \"\xff\xfe bytes\"]\n\n1. e4 {".to_vec();
    odd.extend(std::iter::repeat_n(b'c', 1 << 20));
    odd.extend_from_slice(b"\xc3\x28} 1... e5 *\n\n");
    round_trip("comments", &among_games(&odd), None);
}

#[test]
fn hostile_pgn_crlf_and_a_byte_order_mark() {
    let mut text = b"\xef\xbb\xbf".to_vec();
    text.extend_from_slice(random_game(3, 60).replace('\n', "\r\n").as_bytes());
    text.extend_from_slice(random_game(4, 60).replace('\n', "\r\n").as_bytes());
    round_trip("crlf-bom", &text, None);
}

#[test]
fn hostile_pgn_600_move_games() {
    let text = [random_game(5, 1200), random_game(6, 1201)].concat();
    assert!(text.contains(" 600. "));
    round_trip("600-moves", text.as_bytes(), None);
}

#[test]
fn hostile_pgn_an_illegal_move_in_one_game_of_many() {
    let mut text = Vec::new();
    for i in 0..50 {
        text.extend_from_slice(random_game(10 + i, 30).as_bytes());
    }
    text.extend_from_slice(b"[Event \"bad\"]\n\n1. e4 e5 2. Ke3 *\n\n");
    for i in 0..50 {
        text.extend_from_slice(random_game(100 + i, 30).as_bytes());
    }
    let summary = round_trip("illegal", &text, Some("game 51"));
    assert!(
        summary.contains("101 games") && summary.contains("illegal move"),
        "{summary}"
    );
}

#[test]
fn hostile_pgn_an_illegal_fen_tag() {
    let odd = b"[Event \"fen\"]\n[SetUp \"1\"]\n[FEN \"8/8/8/8/8/8/8/8 w - - 0 1\"]\n\n1. e4 *\n\n";
    round_trip("fen", &among_games(odd), Some("game 2"));
}

#[test]
fn hostile_pgn_unsupported_variants() {
    let odd = b"[Event \"atomic\"]\n[Variant \"Atomic\"]\n\n1. e4 e5 *\n\n";
    round_trip("variant", &among_games(odd), Some("unsupported variant"));
}

#[test]
fn positions_invalid_fens_and_random_bytes_give_clear_errors() {
    let codecs = [
        "usenet82",
        "kingspawns",
        "arith",
        "packed",
        "position-model",
    ];
    for codec in codecs {
        for fen in [
            "",
            "not a fen",
            "8/8/8/8/8/8/8/8 w - - 0 1",
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR x KQkq - 0 1",
            "kkkkkkkk/8/8/8/8/8/8/KKKKKKKK w - - 0 1",
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq e3 0 1",
        ] {
            let out = chesspack(&["fen", "encode", "--codec", codec, fen]);
            clean_failure(&out, &format!("{codec} encode {fen:?}"));
        }
        let mut state = 99u64;
        for len in [1, 3, 8, 20, 40] {
            let hex: String = (0..len)
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    format!("{:02x}", state as u8)
                })
                .collect();
            let out = chesspack(&["fen", "decode", "--codec", codec, &hex]);
            if out.status.success() {
                // A valid position: it encodes again.
                let fen = String::from_utf8(out.stdout).unwrap();
                ok(&chesspack(&["fen", "encode", "--codec", codec, fen.trim()]));
            } else {
                clean_failure(&out, &format!("{codec} decode {hex}"));
            }
        }
    }
    // A position file with bad lines keeps them and names them.
    let dir = scratch("positions-bad");
    let epd = dir.join("p.epd");
    let text =
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq -\nnot a fen\n8/8/8/8/8/8/8/8 w - -\n";
    std::fs::write(&epd, text).unwrap();
    let out = chesspack(&["compress", epd.to_str().unwrap()]);
    let summary = ok(&out) + &stderr(&out);
    assert!(summary.contains("lines 2, 3"), "{summary}");
    let out = chesspack(&["decompress", &format!("{}.chpk", epd.display())]);
    assert_eq!(ok(&out), text);
}

/// Issue 69, D4: a flipped byte of the magic is a damaged archive to every
/// command (never PGN, never read as if intact): each says so and names
/// `--skip-damaged`, which reads it from the copy of its header.
#[test]
fn regression_issue_69_d4_every_command_says_an_archive_is_damaged() {
    let good = compressed_sample("issue-69-d4", "good.chpk", &["--block-games", "8"]);
    let dir = good.parent().unwrap();
    let good_path = good.to_str().unwrap();
    let mut packed = std::fs::read(&good).unwrap();
    packed[2] ^= 0x01;
    // Named as anything: the bytes say what it is.
    for name in ["damaged.chpk", "damaged.pgn", "damaged"] {
        let bad = dir.join(name);
        std::fs::write(&bad, &packed).unwrap();
        let bad = bad.to_str().unwrap();
        for c in [
            vec!["decompress"],
            vec!["list"],
            vec!["get", "3"],
            vec!["classify"],
        ] {
            let what = format!("{} {name}", c.join(" "));
            let mut args = c.clone();
            args.insert(1, bad);
            let out = chesspack(&args);
            clean_failure(&out, &what);
            assert!(out.stdout.is_empty() || c[0] != "classify", "{what}");
            let e = stderr(&out);
            assert!(
                e.contains("header is damaged") && e.contains("--skip-damaged"),
                "{what}: {e}"
            );
            let mut skip = c.clone();
            skip.insert(1, "--skip-damaged");
            skip.insert(2, bad);
            let mut intact = c.clone();
            intact.insert(1, good_path);
            let out = chesspack(&skip);
            assert_eq!(ok(&out), ok(&chesspack(&intact)), "{what}");
            assert!(stderr(&out).contains("copy of the header"), "{what}");
        }
        let out = chesspack(&["verify", bad]);
        assert!(String::from_utf8_lossy(&out.stdout).contains("damaged: header"));
    }
}

/// Issue 69, D4 (the commands that read text): `stats`, `explain` and
/// `classify` read an archive, a binpack, FEN lines or a CSV of positions
/// as PGN, reported games of no plies (one a few hundred bytes of an
/// archive) and exited 0; `index` called an archive of positions "not a
/// chesspack archive". Each now says what the file is, names it, and
/// prints no rows.
#[test]
fn regression_issue_69_d4_commands_that_read_games_say_what_a_file_is() {
    let games = compressed_sample("issue-69-d4-text", "games.chpk", &[]);
    let dir = games.parent().unwrap();
    let path = |name: &str| dir.join(name).to_str().unwrap().to_owned();
    let fen = "8/8/8/8/8/8/8/K1k5 w - - 0 1";
    std::fs::write(path("p.epd"), format!("{fen}\n")).unwrap();
    std::fs::write(
        path("q.csv"),
        format!("PuzzleId,FEN,Moves\n00008,{fen},a1a2\n"),
    )
    .unwrap();
    std::fs::write(path("t.plain"), format!("fen {fen}\nmove a1a2\n")).unwrap();
    let binpack = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../chesspack/tests/fixtures/training/selfplay.binpack"
    );
    std::fs::copy(binpack, path("t.binpack")).unwrap();
    ok(&chesspack(&[
        "compress",
        &path("p.epd"),
        "-o",
        &path("p.chpk"),
    ]));
    // Named as text: the first bytes say what it is.
    std::fs::copy(&games, path("games.pgn")).unwrap();
    let cases = [
        ("games.chpk", "stats", "a chesspack archive"),
        ("games.pgn", "stats", "a chesspack archive"),
        ("games.chpk", "explain", "a chesspack archive"),
        ("p.chpk", "stats", "a chesspack archive"),
        ("p.chpk", "index", "an archive of positions"),
        ("p.epd", "stats", "positions (FEN or EPD lines)"),
        ("p.epd", "explain", "positions (FEN or EPD lines)"),
        ("p.epd", "classify", "a file of positions"),
        ("q.csv", "stats", "a CSV with a FEN column"),
        ("q.csv", "classify", "a file of positions"),
        ("t.plain", "stats", "engine training data (.plain)"),
        ("t.binpack", "explain", "engine training data (a binpack)"),
        ("t.binpack", "classify", "engine training data"),
    ];
    for (name, command, says) in cases {
        let file = path(name);
        let what = format!("{command} {name}");
        let mut args = vec![command];
        match command {
            "stats" => args.extend(["--codec", "index"]),
            "explain" => args.extend(["--game", "3"]),
            _ => {}
        }
        args.push(&file);
        let out = chesspack(&args);
        clean_failure(&out, &what);
        assert!(out.stdout.is_empty(), "{what}");
        let e = stderr(&out);
        assert!(e.contains(says) && e.contains(&file), "{what}: {e}");
    }
    // `stats --positions` reads positions, not an archive of them.
    let out = chesspack(&["stats", "--positions", &path("p.chpk")]);
    clean_failure(&out, "stats --positions p.chpk");
    assert!(stderr(&out).contains("a chesspack archive"));
    assert!(
        ok(&chesspack(&[
            "stats",
            "--positions",
            "--codec",
            "packed",
            &path("p.epd")
        ]))
        .contains("packed")
    );
    // Text is still text.
    let out = chesspack(&["stats", "--codec", "index", "samples/lichess-sample.pgn"]);
    assert!(ok(&out).contains("index"));
}
