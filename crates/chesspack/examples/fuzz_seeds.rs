//! Writes seed corpora for the fuzz targets from the shipped samples:
//! `cargo run --example fuzz_seeds` (from the repository root).
//!
//! A seed is two bytes of bit length (big-endian) followed by the bits, as
//! `chesspack::fuzzing` reads them.

use std::{fs, path::Path};

use chesspack::{Bits, archive, files, game, pgn::GameReader, position};

fn seed(bits: &Bits) -> Vec<u8> {
    let mut out = (bits.len().min(0xffff) as u16).to_be_bytes().to_vec();
    out.extend_from_slice(bits.as_bytes());
    out
}

fn main() -> std::io::Result<()> {
    let root = Path::new("fuzz/corpus");
    let pgn = fs::read_to_string("samples/lichess-sample.pgn")?;
    let games: Vec<_> = GameReader::new(pgn.as_bytes())
        .flatten()
        .filter(|g| g.tag("Variant").is_none_or(|v| v == "Standard"))
        .take(8)
        .collect();
    for codec in game::codecs() {
        let dir = root.join(format!("decode_{}", codec.name().replace('-', "_")));
        fs::create_dir_all(&dir)?;
        for (i, g) in games.iter().enumerate() {
            let n = g.moves.len().min(12 + 10 * i);
            let bits = codec
                .encode(&g.start, &g.moves[..n])
                .expect("sample games are legal");
            fs::write(dir.join(format!("game{i}")), seed(&bits))?;
        }
        fs::write(dir.join("empty"), [])?;
    }
    let csv = fs::read_to_string("samples/puzzles-sample.csv")?;
    let positions: Vec<_> = csv
        .lines()
        .skip(1)
        .filter_map(|l| l.split(',').nth(1))
        .filter_map(|f| position::parse_fen(f).ok())
        .take(8)
        .chain([shakmaty::Chess::default()])
        .collect();
    for codec in position::codecs() {
        let dir = root.join(format!("decode_{}", codec.name().replace('-', "_")));
        fs::create_dir_all(&dir)?;
        for (i, p) in positions.iter().enumerate() {
            fs::write(
                dir.join(format!("pos{i}")),
                seed(&codec.encode(p).expect("legal")),
            )?;
        }
        fs::write(dir.join("empty"), [])?;
    }
    // Records: a game record of each codec but the slow engine ones, and a
    // position record of each position codec.
    let dir = root.join("decode_record");
    fs::create_dir_all(&dir)?;
    for codec in game::codecs() {
        if codec.name().starts_with("engine") {
            continue;
        }
        let g = &games[0];
        let bytes = chesspack::record::encode_game(codec.as_ref(), &g.start, &g.moves[..20])
            .expect("sample games are legal");
        fs::write(dir.join(format!("game-{}", codec.name())), bytes)?;
    }
    for codec in position::codecs() {
        let bytes =
            chesspack::record::encode_position(codec.as_ref(), &positions[0]).expect("legal");
        fs::write(dir.join(format!("position-{}", codec.name())), bytes)?;
    }
    fs::write(dir.join("empty"), [])?;
    let dir = root.join("read_pgn");
    fs::create_dir_all(&dir)?;
    for (i, chunk) in pgn.split("\n\n[Event").take(6).enumerate() {
        let text = if i == 0 {
            chunk.to_owned()
        } else {
            format!("[Event{chunk}")
        };
        fs::write(dir.join(format!("game{i}")), text)?;
    }
    fs::write(
        dir.join("broken"),
        "[Event \"x\"\n1. e4 {unterminated (1. d4 ))) e5 Ke3 *\n[FEN \"8/8 w\"]\n\n1. e4",
    )?;

    // Archives: small ones of the sample and the fixtures, and their block
    // payloads on their own (the fuzz target decodes input both ways).
    let fixtures = Path::new("crates/chesspack/tests/fixtures/archive");
    let dir = root.join("compress_pgn");
    fs::create_dir_all(&dir)?;
    let archive_dir = root.join("read_archive");
    fs::create_dir_all(&archive_dir)?;
    let first_games: String = pgn
        .split("\n\n[Event")
        .take(3)
        .collect::<Vec<_>>()
        .join("\n\n[Event");
    let mut inputs = vec![("sample".to_owned(), first_games.into_bytes())];
    for name in ["annotated.pgn", "broken.pgn", "bom-crlf.pgn", "players.pgn"] {
        inputs.push((name.replace(".pgn", ""), fs::read(fixtures.join(name))?));
    }
    // A match whose games repeat earlier ones, numbers and all: games coded
    // from their group's table, times by ply, repeats stored alone.
    let engines = fs::read_to_string(fixtures.join("engine-cutechess.pgn"))?;
    let engines: Vec<String> = engines
        .split("\n[Event ")
        .enumerate()
        .map(|(i, g)| match i {
            0 => format!("{}\n\n", g.trim_end()),
            _ => format!("[Event {}\n\n", g.trim_end()),
        })
        .collect();
    let repeated = [0, 1, 0, 2, 1, 0].map(|i| engines[i].as_str()).concat();
    inputs.push(("engine-match".to_owned(), repeated.into_bytes()));
    for (name, text) in &inputs {
        fs::write(dir.join(name), text)?;
        let mut options = archive::Options::default();
        // The match in one block, so that its games repeat within it.
        options.block_games = if name == "engine-match" { 8 } else { 2 };
        let mut packed = Vec::new();
        archive::compress(&text[..], &mut packed, &game::Radix, &options).expect("compresses");
        let r = archive::ArchiveReader::open(std::io::Cursor::new(&packed)).expect("opens");
        let first = r.blocks()[0];
        let payload = &packed[first.offset as usize + 16..][..first.len as usize];
        fs::write(archive_dir.join(format!("{name}-payload")), payload)?;
        fs::write(archive_dir.join(name), &packed)?;
    }

    // A search section: the sample's, followed by the games from other
    // starts (Chess960, FENs: their start states), with the games' squares
    // so that every column is read; from `CPKS` to the end of its frames.
    let dir = root.join("read_search_index");
    fs::create_dir_all(&dir)?;
    let text = [
        pgn.as_bytes(),
        &fs::read(fixtures.join("other-starts.pgn"))?,
    ]
    .concat();
    let mut settings = files::Settings::default();
    settings.index_squares = true;
    let mut packed = Vec::new();
    files::compress(
        files::Kind::Games,
        &text[..],
        &mut packed,
        &settings,
        &mut |_| std::ops::ControlFlow::Continue(()),
    )
    .expect("compresses");
    let at = packed
        .windows(4)
        .position(|w| w == b"CPKS")
        .expect("a search section");
    let len = packed[at..]
        .windows(4)
        .position(|w| w == b"CPKI")
        .expect("the index after it");
    fs::write(dir.join("sample"), &packed[at..at + len])?;
    Ok(())
}
