//! Entry points of the fuzz targets, shared with the tests that replay their
//! seed corpora. Not a stable interface.

use shakmaty::Chess;

use crate::{Bits, game, position};

/// Runs the fuzz target named `target` (as in fuzz/fuzz_targets/) on
/// `data`: it must not panic. `decode_X` decodes a stream with the game or
/// position codec `X` (`-` written `_`); what decodes must re-encode to the
/// same moves or position.
///
/// # Panics
///
/// On an unknown target, and wherever a target finds a bug.
pub fn run(target: &str, data: &[u8]) {
    match target {
        "read_pgn" => read_pgn(data),
        "read_archive" => read_archive(data),
        "read_search_index" => crate::search::fuzz_section(data),
        "compress_pgn" => compress_pgn(data),
        "decode_record" => decode_record(data),
        "read_training" => read_training(data),
        "compress_binpack" => compress_binpack(data),
        "compress_viriformat" => compress_viriformat(data),
        _ => {
            let name = target
                .strip_prefix("decode_")
                .unwrap_or_else(|| panic!("unknown fuzz target {target}"))
                .replace('_', "-");
            if game::codec(&name).is_ok() {
                decode_game(&name, data);
            } else {
                decode_position(&name, data);
            }
        }
    }
}

/// A training-data block payload decoded as is (no checksum), then the
/// bytes opened as an archive.
fn read_training(data: &[u8]) {
    use crate::datasets::training;
    let _ = training::decode_block(
        data,
        &crate::game::ModelCodec::fast(),
        1,
        Some(&mut Vec::new()),
        Some(&mut |_| {}),
    );
    if let Ok(mut r) = training::TrainingReader::open(std::io::Cursor::new(data)) {
        for b in 0..r.blocks() {
            let _ = r.rows(b);
            let _ = r.viriformat(b);
            let _ = r.marlinformat(b);
        }
    }
}

/// Any bytes read as viriformat games: an error, or an archive whose games
/// come back byte for byte.
fn compress_viriformat(data: &[u8]) {
    use crate::datasets::training;
    let mut packed = Vec::new();
    if training::compress_viriformat(data, &mut packed, &crate::game::ModelCodec::fast(), 1)
        .is_err()
    {
        return;
    }
    let mut r = training::TrainingReader::open(std::io::Cursor::new(&packed)).expect("opens");
    let mut back = Vec::new();
    for b in 0..r.blocks() {
        back.extend(r.viriformat(b).expect("decodes"));
    }
    assert_eq!(back, data);
}

/// Any bytes compressed as a binpack come back byte for byte; `.plain`
/// text (bytes that start with `fen `) compresses or gives an error, and
/// what compresses decompresses.
fn compress_binpack(data: &[u8]) {
    use crate::datasets::training;
    let codec = crate::game::ModelCodec::fast();
    let mut packed = Vec::new();
    let plain = data.starts_with(b"fen ");
    match training::compress(data, &mut packed, &codec, 1) {
        Ok(_) => {}
        Err(_) if plain => return,
        Err(e) => panic!("bytes that are not .plain text compress: {e}"),
    }
    let mut back = Vec::new();
    training::decompress(std::io::Cursor::new(&packed), &mut back, 1).expect("decompresses");
    if !plain {
        assert_eq!(back, data);
    }
}

/// Splits fuzz input into a bit length and bits: the first two bytes give how
/// many bits of the rest to use.
fn bits_of(data: &[u8]) -> Bits {
    let (head, rest) = data.split_at(data.len().min(2));
    let mut len = head.iter().fold(0usize, |a, &b| a << 8 | usize::from(b));
    len = len.min(rest.len() * 8);
    Bits::from_bytes(rest.to_vec(), len).unwrap_or_default()
}

/// Decodes `data` with the game codec `name` from the start position; a
/// successful decode must re-encode to the same moves.
fn decode_game(name: &str, data: &[u8]) {
    let codec = game::codec(name).expect("known codec");
    let start = Chess::default();
    if let Ok(moves) = codec.decode(&start, &bits_of(data)) {
        let again = codec
            .encode(&start, &moves)
            .expect("decoded moves are legal");
        assert_eq!(
            codec
                .decode(&start, &again)
                .expect("re-encoded game decodes"),
            moves
        );
    }
}

/// Decodes `data` with the position codec `name`; a successful decode must
/// re-encode to a stream that decodes to the same position.
fn decode_position(name: &str, data: &[u8]) {
    let codec = position::codec(name).expect("known codec");
    if let Ok(pos) = codec.decode(&bits_of(data)) {
        let again = codec
            .encode(&pos)
            .expect("decoded positions are representable");
        let back = codec.decode(&again).expect("re-encoded position decodes");
        assert_eq!(position::to_epd(&back), position::to_epd(&pos));
    }
}

/// Reads `data` as PGN and round-trips every game through every game codec.
fn read_pgn(data: &[u8]) {
    let _ = crate::pgn::clock_millis(data);
    for game in crate::pgn::GameReader::new(data).flatten() {
        for codec in game::codecs() {
            let bits = codec
                .encode(&game.start, &game.moves)
                .expect("legal game encodes");
            assert_eq!(
                codec.decode(&game.start, &bits).expect("decodes"),
                game.moves
            );
        }
    }
}

/// Reads `data` as an archive and as a block payload: decoding may fail,
/// never panic, and every game that decodes is text.
fn read_archive(data: &[u8]) {
    // On this thread alone: a fuzz target starts no threads.
    crate::threads::on_this_thread(|| read_archive_here(data));
}

fn read_archive_here(data: &[u8]) {
    use crate::archive;
    if let Ok(mut r) = archive::ArchiveReader::open(std::io::Cursor::new(data)) {
        for b in 0..r.blocks().len() {
            if let Ok(block) = r.read_block(b) {
                let _ = archive::decode_games(r.codec(), &block, &|_| true, &mut |_, _| {});
                let _ = archive::decode_records(r.codec(), &block, &|_| true, &mut |_, _| {});
                // A query's decode: each mainline until its tenth ply.
                let _ = archive::decode_mainlines_until(
                    r.codec(),
                    &block,
                    &|_| true,
                    &|_, p: &shakmaty::Chess| shakmaty::Position::fullmoves(p).get() < 6,
                    &mut |_, _| {},
                    usize::MAX,
                );
                let _ = archive::block_tags(r.codec(), &block);
                let _ = archive::block_tags_not_given(&block);
                let _ = archive::block_openings(
                    r.codec(),
                    &block,
                    crate::opening::OpeningTable::lichess(),
                );
                let mut columns = crate::datasets::rows::Column::defaults();
                columns.extend([
                    crate::datasets::rows::Column::Uci,
                    crate::datasets::rows::Column::Fen,
                ]);
                let _ = crate::datasets::rows::block_positions(r.codec(), &block, 0, &columns);
            }
        }
        for row in r.positions().take(1 << 12) {
            let _ = row;
        }
        let games = r.games();
        for n in [1, games / 2, games] {
            let _ = r.game(n);
            let _ = r.write_game(n, true, &mut std::io::sink());
        }
        let mut out = r.text_writer(Vec::new());
        let _ = out.write_games(b"1. e4 *\n\n");
        let _ = out.finish();
    }
    let block = archive::Block::unchecked(data.to_vec(), 0);
    let _ = archive::decode_games(&game::Index, &block, &|_| true, &mut |_, _| {});
    let _ = archive::decode_games(&game::Radix, &block, &|g| g % 2 == 0, &mut |_, _| {});
    let _ = archive::decode_records(&game::Index, &block, &|g| g % 3 != 1, &mut |_, _| {});
    let _ = archive::decode_mainlines_until(
        &game::Index,
        &block,
        &|g| g % 2 == 1,
        &|_, _: &shakmaty::Chess| true,
        &mut |_, _| {},
        usize::MAX,
    );
    let _ = archive::block_tags(&game::Index, &block);
    let _ = archive::block_tags_not_given(&block);
    let _ = archive::block_openings(
        &game::Index,
        &block,
        crate::opening::OpeningTable::lichess(),
    );
    let _ = crate::datasets::rows::block_positions(
        &game::Index,
        &block,
        0,
        &crate::datasets::rows::Column::defaults(),
    );
}

/// Compresses `data` as PGN into an archive and checks that it decompresses
/// to `data`, byte for byte (issue 56).
fn compress_pgn(data: &[u8]) {
    use crate::archive;
    let options = archive::Options {
        block_games: 3,
        level: 1,
        ..Default::default()
    };
    // `fast` (whose blocks store openings) for half the inputs,
    // by their length.
    let fast = game::ModelCodec::fast();
    let codec: &dyn game::GameCodec = if data.len() % 2 == 1 {
        &fast
    } else {
        &game::Index
    };
    let mut packed = Vec::new();
    archive::compress(data, &mut packed, codec, &options).expect("compresses");
    let mut out = Vec::new();
    archive::decompress(std::io::Cursor::new(&packed), &mut out).expect("decompresses");
    assert!(out == data, "the input's bytes come back");
}

/// Reads `data` as a game record and as a position record (the Python
/// package's single values and Arrow columns): decoding may fail, never
/// panic, and a record that decodes re-encodes to the same bytes.
fn decode_record(data: &[u8]) {
    use crate::record;
    let start = Chess::default();
    if let Ok(name) = record::game_codec_name(data) {
        let codec = game::codec(name).expect("record ids name codecs");
        if let Ok(moves) = record::decode_game(codec.as_ref(), &start, data) {
            let again = record::encode_game(codec.as_ref(), &start, &moves)
                .expect("decoded moves are legal");
            assert_eq!(
                record::decode_game(codec.as_ref(), &start, &again)
                    .expect("re-encoded record decodes"),
                moves
            );
        }
    }
    if let Ok(name) = record::position_codec_name(data) {
        let codec = position::codec(name).expect("record ids name codecs");
        if let Ok(pos) = record::decode_position(codec.as_ref(), data) {
            let again = record::encode_position(codec.as_ref(), &pos)
                .expect("decoded positions are representable");
            let back =
                record::decode_position(codec.as_ref(), &again).expect("re-encoded record decodes");
            assert_eq!(position::to_epd(&back), position::to_epd(&pos));
        }
    }
}

/// Replays the fuzz targets' seed corpora (fuzz/corpus/TARGET/*) and checks
/// that the decoders survive arbitrary bytes.
#[cfg(test)]
mod tests {
    use std::{fs, path::Path};

    fn replay(target: &str, run: impl Fn(&[u8])) {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../fuzz/corpus")
            .join(target);
        let entries = fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        let mut n = 0;
        for entry in entries {
            let data = fs::read(entry.unwrap().path()).unwrap();
            run(&data);
            n += 1;
        }
        assert!(n > 0, "empty corpus {target}");
    }

    #[test]
    fn game_decoder_corpora() {
        // Every game codec has a corpus.
        for codec in crate::record::GAME_CODECS {
            replay(&format!("decode_{}", codec.replace('-', "_")), |d| {
                super::decode_game(codec, d)
            });
        }
    }

    #[test]
    fn position_decoder_corpora() {
        // Every position codec has a corpus (`position-model` was not
        // replayed before issue 41).
        for codec in crate::record::POSITION_CODECS {
            replay(&format!("decode_{}", codec.replace('-', "_")), |d| {
                super::decode_position(codec, d)
            });
        }
    }

    #[test]
    fn record_corpus() {
        replay("decode_record", super::decode_record);
    }

    #[test]
    fn pgn_reader_corpus() {
        replay("read_pgn", super::read_pgn);
    }

    #[test]
    fn every_target_runs_by_name() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/fuzz_targets");
        for entry in fs::read_dir(dir).unwrap() {
            let name = entry.unwrap().file_name().into_string().unwrap();
            super::run(name.strip_suffix(".rs").unwrap(), b"");
        }
    }

    /// Issue 5: fuzzing decode_model found a stream whose re-encoding the
    /// decoder refused as "too short" (the encoder trims trailing zero bits,
    /// so a stream's length does not bound what it holds); kept in the corpus
    /// as regression-issue-5-trailing-zeros.
    #[test]
    fn regression_issue_5_model_streams_shorter_than_their_information() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../fuzz/corpus/decode_model/regression-issue-5-trailing-zeros");
        super::decode_game("model", &fs::read(path).unwrap());
    }

    #[test]
    fn archive_corpora() {
        replay("read_archive", super::read_archive);
        replay("compress_pgn", super::compress_pgn);
    }

    /// Issue 68: a search section's reader and the queries on it survive
    /// its corpus, every byte of its seed flipped, and every cut.
    #[test]
    fn regression_issue_68_damaged_search_sections_never_panic() {
        replay("read_search_index", crate::search::fuzz_section);
        let seed = fs::read(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../fuzz/corpus/read_search_index/sample"),
        )
        .unwrap();
        // A seed of another version would stop at its version byte: it is
        // the section of the shipped sample followed by the games of
        // `tests/fixtures/archive/other-starts.pgn` (Chess960 and FENs,
        // whose start states are read too), with the games' squares so
        // that their columns are read too: `cargo run --example
        // fuzz_seeds` writes it.
        assert_eq!(
            seed[4],
            crate::search::SECTION_VERSION,
            "replace the seed with a section of this version"
        );
        for i in 0..seed.len() {
            for bit in [0x01, 0x80] {
                let mut d = seed.clone();
                d[i] ^= bit;
                crate::search::fuzz_section(&d);
            }
            crate::search::fuzz_section(&seed[..i]);
        }
    }

    #[test]
    fn training_corpora() {
        replay("read_training", super::read_training);
        replay("compress_binpack", super::compress_binpack);
        replay("compress_viriformat", super::compress_viriformat);
    }

    #[test]
    fn damaged_archives_never_panic() {
        // Every single-byte change of a block payload (checksums would catch
        // them in an archive; here the block decoder meets them), and every
        // truncation of the archive.
        let text = fs::read(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/archive/annotated.pgn"),
        )
        .unwrap();
        let mut packed = Vec::new();
        crate::archive::compress(
            &text[..],
            &mut packed,
            &crate::game::Radix,
            &Default::default(),
        )
        .unwrap();
        let r = crate::archive::ArchiveReader::open(std::io::Cursor::new(&packed)).unwrap();
        let b = r.blocks()[0];
        let payload = &packed[b.offset as usize + 16..][..b.len as usize];
        for i in 0..payload.len() {
            for flip in [0x01, 0x80] {
                let mut damaged = payload.to_vec();
                damaged[i] ^= flip;
                super::read_archive(&damaged);
            }
        }
        for i in 0..packed.len() {
            super::read_archive(&packed[..i]);
        }
    }

    #[test]
    fn pseudo_random_bytes_never_panic() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        for len in 0..400usize {
            let data: Vec<u8> = (0..len % 60)
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    state as u8
                })
                .collect();
            for codec in ["squares", "index", "radix", "model", "brisk", "fast"] {
                super::decode_game(codec, &data);
            }
            for codec in ["usenet82", "kingspawns", "arith", "packed"] {
                super::decode_position(codec, &data);
            }
            super::read_pgn(&data);
            super::read_archive(&data);
            super::compress_pgn(&data);
            super::read_training(&data);
            super::compress_binpack(&data);
            if len % 20 == 0 && len % 60 < 8 {
                // The engine decoders search every position, and garbage can
                // decode to long games: a few short inputs only here (the fuzz
                // targets take any).
                super::decode_game("engine-huffman", &data);
            }
        }
    }
}
