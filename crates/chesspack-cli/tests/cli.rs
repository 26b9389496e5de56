//! The command-line interface: output fields other tools rely on.

use std::process::{Command, Output};

fn chesspack(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_chesspack"))
        .args(args)
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .output()
        .expect("runs")
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
            "engine-arith"
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
fn stats_limit_and_bad_games() {
    let dir = std::env::temp_dir().join(format!("chesspack-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
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
