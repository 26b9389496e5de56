//! Fitting what the codecs ship with through the one door,
//! `chesspack::train::fit` (the `train` feature).

use std::path::{Path, PathBuf};

use chesspack::train::{Fit, Note, fit};

fn sample(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../samples")
        .join(name)
}

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("train-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Fits `what` on `files` into `dir/out`: the paths written, the lines
/// said, the rows given and whether every progress was finished.
fn run(what: &Fit, files: &[PathBuf], out: &Path) -> (Vec<PathBuf>, Vec<String>, Vec<String>) {
    let (mut lines, mut rows, mut open) = (Vec::new(), Vec::new(), false);
    let written = fit(what, files, out, &mut |note| match note {
        Note::Progress { what, done, total } => {
            assert!(!what.is_empty());
            assert!(total.is_none_or(|t| done <= t), "{done} of {total:?}");
            open = true;
        }
        Note::Finished => open = false,
        Note::Line(l) => lines.push(l),
        Note::Row(r) => rows.push(r),
        _ => {}
    })
    .unwrap();
    assert!(!open, "a progress left open");
    (written, lines, rows)
}

/// Issue 67: the CLI only parses `chesspack train`'s arguments; the fits
/// are the library's, deterministic, and write what they say they wrote.
#[test]
fn regression_issue_67_every_fit_is_one_call_of_the_library() {
    let dir = scratch("all");
    let pgn = sample("lichess-sample.pgn");
    let csv = sample("puzzles-sample.csv");

    let out = dir.join("arith.rs");
    let (written, lines, _) = run(&Fit::Arith, std::slice::from_ref(&csv), &out);
    assert_eq!(written, std::slice::from_ref(&out));
    let text = std::fs::read_to_string(&out).unwrap();
    // 200 puzzles, about 5% held out.
    let trained: u64 = lines[0]
        .strip_prefix("Fitted on ")
        .and_then(|l| l.split(' ').next())
        .unwrap()
        .parse()
        .unwrap();
    assert!((170..200).contains(&trained), "{}", lines[0]);
    assert!(text.contains(&lines[0]), "the provenance is in the source");

    let out = dir.join("prior.txt");
    let (_, lines, _) = run(
        &Fit::OpeningPrior { bands: false },
        std::slice::from_ref(&pgn),
        &out,
    );
    let counts: u64 = std::fs::read_to_string(&out)
        .unwrap()
        .lines()
        .map(|l| l.parse::<u64>().unwrap())
        .sum();
    assert!(lines[0].contains(&format!("the openings of {counts} training games")));

    let out = dir.join("model").join("weights.bin");
    std::fs::create_dir_all(out.parent().unwrap()).unwrap();
    let model = Fit::Model {
        limit: 100,
        book_limit: 100,
        epochs: 1,
        hidden: 4,
        hidden_rate: 0.02,
        quick: false,
        not_in_book: Vec::new(),
    };
    let (written, lines, _) = run(&model, std::slice::from_ref(&pgn), &out);
    assert_eq!(written, [out.with_file_name("book.bin"), out.clone()]);
    assert!(lines.iter().any(|l| l.starts_with("held out, all files: ")));
    assert_eq!(&std::fs::read(&out).unwrap()[..4], b"CPKM");
    // The same games give the same bytes.
    let first = std::fs::read(&out).unwrap();
    run(&model, std::slice::from_ref(&pgn), &out);
    assert_eq!(std::fs::read(&out).unwrap(), first);

    let out = dir.join("openings.bin");
    let (written, _, rows) = run(
        &Fit::Openings { min_games: 2 },
        std::slice::from_ref(&pgn),
        &out,
    );
    assert_eq!(written, [out.clone(), dir.join("openings-positions.txt")]);
    assert!(rows[0].starts_with("held-out games with both tags"));
    assert!(rows[1].starts_with("lichess-sample.pgn\t"), "{rows:?}");
}

/// Bad input is an error naming it; more hidden units than the model
/// holds are refused before anything is read.
#[test]
fn fits_refuse_what_they_cannot_do() {
    let dir = scratch("errors");
    let missing = dir.join("missing.pgn");
    let err = fit(
        &Fit::Engine { limit: 10 },
        std::slice::from_ref(&missing),
        &dir.join("out.rs"),
        &mut |_| {},
    )
    .unwrap_err();
    assert!(err.to_string().contains("missing.pgn"), "{err}");
    let model = Fit::Model {
        limit: 1,
        book_limit: 1,
        epochs: 1,
        hidden: 100_000,
        hidden_rate: 0.02,
        quick: true,
        not_in_book: Vec::new(),
    };
    let err = fit(&model, &[missing], &dir.join("w.bin"), &mut |_| {}).unwrap_err();
    assert!(err.to_string().contains("hidden units"), "{err}");
    let bad = dir.join("bad.tsv");
    std::fs::write(&bad, "eco\tname\tpgn\nA00\tx\t1. e5\n").unwrap();
    let err = fit(
        &Fit::Openings { min_games: 2 },
        &[bad],
        &dir.join("t.bin"),
        &mut |_| {},
    )
    .unwrap_err();
    assert!(!err.to_string().is_empty());
    assert!(!dir.join("t.bin").exists(), "nothing written on an error");
}
