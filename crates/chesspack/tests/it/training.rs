//! Training-data archives (issue 42): binpacks back byte for byte, rows
//! checked against the format's reference reader (the `sfbinpack` crate).

use std::io::Cursor;

use chesspack::datasets::training::{Rows, TrainingReader};
use chesspack::files::{self, Kind, Settings};
use sfbinpack::{CompressedTrainingDataEntryReader, TrainingDataEntry};

const FIXTURE: &[u8] = include_bytes!("../fixtures/training/selfplay.binpack");
const GOLDEN: &[u8] = include_bytes!("../fixtures/training/selfplay.train.golden");

/// `files::compress` of engine training data (a binpack or `.plain` text)
/// with `codec` on `threads` threads.
fn compress_with(
    input: &[u8],
    codec: &str,
    threads: usize,
) -> Result<Vec<u8>, chesspack::archive::ArchiveError> {
    let mut settings = Settings::default();
    settings.codec = Some(codec.into());
    settings.pipeline.threads = threads;
    let mut out = Vec::new();
    files::compress(Kind::Binpack, input, &mut out, &settings, &mut |_| {
        std::ops::ControlFlow::Continue(())
    })?;
    Ok(out)
}

fn compress(binpack: &[u8]) -> Vec<u8> {
    compress_with(binpack, "fast", 2).expect("compresses")
}

fn decompress(archive: &[u8]) -> Result<Vec<u8>, chesspack::archive::ArchiveError> {
    let mut settings = Settings::default();
    settings.pipeline.threads = 2;
    let mut out = Vec::new();
    files::decompress(Cursor::new(archive), &mut out, &settings, &mut |_| {
        std::ops::ControlFlow::Continue(())
    })?;
    Ok(out)
}

fn rows(archive: &[u8]) -> Rows {
    let mut reader = TrainingReader::open(Cursor::new(archive)).expect("opens");
    let mut all = Rows::default();
    for b in 0..reader.blocks() {
        let r = reader.rows(b).expect("decodes");
        all.board.extend(r.board);
        all.turn.extend(r.turn);
        all.castling.extend(r.castling);
        all.ep.extend(r.ep);
        all.rule50.extend(r.rule50);
        all.ply.extend(r.ply);
        all.score.extend(r.score);
        all.result.extend(r.result);
        all.from.extend(r.from);
        all.to.extend(r.to);
        all.promotion.extend(r.promotion);
    }
    all
}

/// The reference reader's entries.
fn reference(binpack: &[u8]) -> Vec<TrainingDataEntry> {
    let mut reader =
        CompressedTrainingDataEntryReader::new(Cursor::new(binpack.to_vec())).expect("a binpack");
    let mut out = Vec::new();
    while reader.has_next() {
        out.push(reader.next());
    }
    out
}

/// The number of rows that differ from the reference reader's entries.
fn differences(rows: &Rows, entries: &[TrainingDataEntry]) -> usize {
    use sfbinpack::chess::{castling_rights::CastlingRights, coords::Square};
    assert_eq!(rows.turn.len(), entries.len());
    let mut wrong = 0;
    for (i, e) in entries.iter().enumerate() {
        let board: Vec<u8> = (0..64)
            .map(|sq| {
                let p = e.pos.piece_at(Square::new(sq));
                match p.id() {
                    12 => 0,
                    id => (id >> 1) + 1 + 6 * (id & 1),
                }
            })
            .collect();
        let rights = e.pos.castling_rights();
        let castling = [
            CastlingRights::WHITE_KING_SIDE,
            CastlingRights::WHITE_QUEEN_SIDE,
            CastlingRights::BLACK_KING_SIDE,
            CastlingRights::BLACK_QUEEN_SIDE,
        ]
        .iter()
        .enumerate()
        .map(|(bit, &r)| u8::from(rights.contains(r)) << bit)
        .sum::<u8>();
        let promotion = match e.mv.promoted_piece().id() {
            12 => 0,
            id => (id >> 1) + 1,
        };
        let same = rows.board[i * 64..(i + 1) * 64] == board[..]
            && rows.turn[i] == e.pos.side_to_move() as u8
            && rows.castling[i] == castling
            && u32::from(rows.ep[i]) == e.pos.ep_square().index()
            && rows.rule50[i] == e.pos.rule50_counter()
            && rows.ply[i] == e.ply
            && rows.score[i] == e.score
            && i16::from(rows.result[i]) == e.result
            && u32::from(rows.from[i]) == e.mv.from().index()
            && u32::from(rows.to[i]) == e.mv.to().index()
            && rows.promotion[i] == promotion;
        if !same {
            if wrong < 5 {
                eprintln!("row {i} differs from {e}");
            }
            wrong += 1;
        }
    }
    wrong
}

#[test]
fn training_archives_give_the_binpack_back_byte_for_byte() {
    let archive = compress(FIXTURE);
    assert!(
        archive.len() < FIXTURE.len() * 4 / 5,
        "{} bytes",
        archive.len()
    );
    assert_eq!(decompress(&archive).unwrap(), FIXTURE);
}

#[test]
fn rows_match_the_reference_reader() {
    let entries = reference(FIXTURE);
    assert_eq!(entries.len(), 3000);
    let rows = rows(&compress(FIXTURE));
    assert_eq!(differences(&rows, &entries), 0);
    // The fixture has castling and promotions.
    assert!(rows.promotion.iter().any(|&p| p != 0));
    assert!(rows.castling.iter().any(|&c| c != 0));
}

#[test]
fn the_training_archive_format_is_pinned() {
    assert_eq!(
        compress(FIXTURE),
        GOLDEN,
        "the golden archive's bytes changed"
    );
    assert_eq!(decompress(GOLDEN).unwrap(), FIXTURE);
}

/// The self-play binpack of ../shared/data, where it is (not in CI), and
/// the binpacks that `CHESSPACK_BINPACKS` names (paths separated by `:`).
#[test]
fn the_shared_self_play_binpack_reads_as_the_reference_reads_it() {
    let shared = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/data/train/selfplay-sf15-5000n.binpack");
    let mut paths = vec![shared];
    if let Ok(more) = std::env::var("CHESSPACK_BINPACKS") {
        paths.extend(more.split(':').map(std::path::PathBuf::from));
    }
    for path in paths {
        let Ok(binpack) = std::fs::read(&path) else {
            eprintln!("skipped: no {}", path.display());
            continue;
        };
        let archive = compress(&binpack);
        assert_eq!(decompress(&archive).unwrap(), binpack);
        let entries = reference(&binpack);
        assert_eq!(
            differences(&rows(&archive), &entries),
            0,
            "{}",
            path.display()
        );
        eprintln!(
            "{}: {} entries, 0 differences",
            path.display(),
            entries.len()
        );
    }
}

#[test]
fn bytes_that_are_not_chains_come_back_as_they_are() {
    // A chain whose movetext padding is not zero, and bytes after the last
    // chunk that are no chunk at all.
    let mut odd = FIXTURE.to_vec();
    let body_end = 8 + u32::from_le_bytes(odd[4..8].try_into().unwrap()) as usize;
    assert_eq!(body_end, odd.len(), "one chunk");
    odd[body_end - 1] |= 1;
    odd.extend_from_slice(b"BINP\x10\x00\x00\x00not a chunk");
    let archive = compress(&odd);
    assert_eq!(decompress(&archive).unwrap(), odd);
    assert!(archive.len() < odd.len());
}

#[test]
fn damaged_training_archives_give_errors_naming_the_block() {
    let archive = compress(FIXTURE);
    // Truncated anywhere: an error, never a panic.
    for len in (0..archive.len()).step_by(97) {
        let e = decompress(&archive[..len]).unwrap_err().to_string();
        assert!(!e.is_empty());
    }
    // A flipped byte in the block: its checksum names it.
    let mut bad = archive.clone();
    bad[200] ^= 0x40;
    let e = decompress(&bad).unwrap_err().to_string();
    assert!(e.contains("block 1"), "{e}");
}

#[test]
fn an_empty_binpack_is_an_empty_archive() {
    let archive = compress(b"");
    assert_eq!(decompress(&archive).unwrap(), b"");
    let reader = TrainingReader::open(Cursor::new(&archive)).unwrap();
    assert_eq!((reader.blocks(), reader.positions()), (0, 0));
}

#[test]
fn the_model_codec_makes_smaller_training_archives() {
    let small = compress_with(FIXTURE, "model", 1).unwrap();
    assert!(small.len() < compress(FIXTURE).len());
    assert_eq!(decompress(&small).unwrap(), FIXTURE);
    assert_eq!(differences(&rows(&small), &reference(FIXTURE)), 0);
}

/// The fixture's positions as nnue-pytorch `.plain` text (what
/// `scripts/selfplay.py` wrote and `sfbinpack` turned into the fixture).
fn fixture_plain() -> String {
    let z = include_bytes!("../fixtures/training/selfplay.plain.zst");
    String::from_utf8(zstd::decode_all(&z[..]).unwrap()).unwrap()
}

#[test]
fn plain_text_becomes_the_binpack_the_reference_writer_makes() {
    let plain = fixture_plain();
    let archive = compress(plain.as_bytes());
    assert_eq!(decompress(&archive).unwrap(), FIXTURE);
    assert_eq!(rows(&archive).to_plain(), plain);
}

#[test]
fn bad_plain_text_names_the_line() {
    let plain = fixture_plain();
    let mut lines: Vec<&str> = plain.lines().collect();
    lines[7] = "move e2e5";
    let e = compress_with(lines.join("\n").as_bytes(), "fast", 1)
        .unwrap_err()
        .to_string();
    assert!(e.contains("line 8"), "{e}");
    let e = compress_with(&b"fen 8/8/8/8/8/8/8/8 w - - 0 1\ne\n"[..], "fast", 1).unwrap_err();
    assert!(e.to_string().contains("line 1"), "{e}");
}

/// The fixture's chains as viriformat games, written by the `viriformat`
/// crate (viridithas's own writer) by `examples/binpack_to_viriformat`.
const FIXTURE_VF: &[u8] = include_bytes!("../fixtures/training/selfplay.vf");

fn fixture_viriformat() -> Vec<u8> {
    FIXTURE_VF.to_vec()
}

#[test]
fn viriformat_comes_back_byte_for_byte_as_the_reference_writes_it() {
    use viriformat::dataformat::{Filter, Game};
    let vf = fixture_viriformat();
    let mut archive = Vec::new();
    let mut settings = Settings::default();
    settings.pipeline.threads = 2;
    let report = files::compress(
        Kind::Viriformat,
        &vf[..],
        &mut archive,
        &settings,
        &mut |_| std::ops::ControlFlow::Continue(()),
    )
    .unwrap()
    .training
    .unwrap();
    let positions = report.positions;
    assert!(positions > 2_900, "{positions}");
    assert!(
        archive.len() * 2 < vf.len(),
        "{} bytes of archive for {} of viriformat",
        archive.len(),
        vf.len()
    );
    let as_format = |format| {
        let mut settings = chesspack::files::Settings::default();
        settings.training = format;
        let mut out = Vec::new();
        chesspack::files::decompress(Cursor::new(&archive), &mut out, &settings, &mut |_| {
            std::ops::ControlFlow::Continue(())
        })
        .map(|_| out)
    };
    let back = as_format(chesspack::files::TrainingFormat::Viriformat).unwrap();
    let marlin = as_format(chesspack::files::TrainingFormat::Marlinformat).unwrap();
    assert!(back == vf, "the viriformat bytes differ");
    // The positions as the crate cuts its games into marlinformat records.
    let mut input = std::io::BufReader::new(&vf[..]);
    let mut expected = Vec::new();
    let mut games = 0;
    while !input.buffer().is_empty() || std::io::BufRead::fill_buf(&mut input).unwrap() != b"" {
        let g = Game::deserialise_from(&mut input, Vec::new()).unwrap();
        g.splat_to_marlinformat(
            |p| {
                expected.extend_from_slice(&p.as_bytes());
                Ok(())
            },
            &Filter::UNRESTRICTED,
        )
        .unwrap();
        games += 1;
    }
    assert_eq!(report.chains, games);
    assert_eq!(marlin.len() as u64, 32 * positions);
    assert!(marlin == expected, "the marlinformat records differ");
    // The rows are the binpack's: the scores and results the side to move's.
    let kept: Vec<_> = reference(FIXTURE)
        .into_iter()
        .filter(|e| e.pos.rule50_counter() < 100)
        .collect();
    assert_eq!(differences(&rows(&archive), &kept), 0);
}

#[test]
fn viriformat_that_would_not_come_back_names_the_game() {
    let mut vf = fixture_viriformat();
    let games = |vf: &[u8]| {
        let mut out = Vec::new();
        files::compress(
            Kind::Viriformat,
            vf,
            &mut out,
            &Settings::default(),
            &mut |_| std::ops::ControlFlow::Continue(()),
        )
        .map(|_| out)
    };
    // A score in the second game's start position (the spare fields
    // chesspack writes as 0).
    let second = {
        let mut at = 32;
        while vf[at..at + 4] != [0; 4] {
            at += 4;
        }
        at + 4
    };
    vf[second + 28] = 1;
    let e = games(&vf).unwrap_err().to_string();
    assert!(
        e.contains(&format!("viriformat game 2 (byte {second})")),
        "{e}"
    );
    let e = games(&vf[..second + 10]).unwrap_err().to_string();
    assert!(e.contains("game 2") && e.contains("truncated"), "{e}");
    // A binpack's chains that are not all viriformat: kept bytes.
    let mut binpack = FIXTURE.to_vec();
    binpack.extend_from_slice(b"not a chunk");
    let packed = compress(&binpack);
    let last = TrainingReader::open(Cursor::new(&packed)).unwrap().blocks() - 1;
    let mut settings = chesspack::files::Settings::default();
    settings.training = chesspack::files::TrainingFormat::Viriformat;
    let e = chesspack::files::decompress(
        Cursor::new(&packed),
        &mut Vec::new(),
        &settings,
        &mut |_| std::ops::ControlFlow::Continue(()),
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains(&format!("block {}", last + 1)) && e.contains("kept"),
        "{e}"
    );
}
