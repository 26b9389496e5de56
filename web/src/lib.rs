//! chesspack in the browser: what the page in `web/` calls, compiled to
//! WebAssembly by `web/build.sh`.
//!
//! Every function takes text or bytes and returns JSON text (or bytes), so
//! that the page needs no glue beyond `JSON.parse`. The functions without
//! the `wasm_bindgen` wrappers ([`games`], [`analyse`], [`fen_bits`], …) are
//! plain Rust, tested natively by `cargo test --workspace`; the browser test (`web/tests/page.mjs`) checks that the
//! wasm build gives the same bytes and bits as the native CLI.

use std::io::Cursor;

use chesspack::{
    archive::{self, ArchiveReader, ChunkReader},
    files,
    game::{self, GameCodec},
    model::{self, GameContext},
    pgn::{Game, GameReader},
    position,
};
use serde_json::{Value, json};
use shakmaty::{Chess, EnPassantMode, Move, Position, fen::Fen, san::SanPlus, uci::UciMove};
use wasm_bindgen::prelude::*;

/// The most games [`games`] and [`Archive::games`] list (the page shows a
/// list, not a database).
pub const MAX_LISTED: usize = 5_000;

/// The game codecs, default first: `[{name, description}]`.
pub fn codec_list() -> Value {
    let mut codecs = game::codecs();
    codecs.sort_by_key(|c| c.name() != "model");
    let games: Vec<Value> = codecs
        .iter()
        .map(|c| json!({"name": c.name(), "description": c.description()}))
        .collect();
    let positions: Vec<Value> = position::codecs()
        .iter()
        .map(|c| json!({"name": c.name(), "description": c.description()}))
        .collect();
    json!({"games": games, "positions": positions})
}

/// The games of a PGN text, a chunk each (the archive's cut into games; a
/// game longer than 8 MiB by its first piece alone).
fn chunks(pgn: &[u8]) -> impl Iterator<Item = Result<archive::Chunk, String>> + '_ {
    ChunkReader::new(pgn)
        .filter(|c| !c.as_ref().is_ok_and(|c| c.continues))
        .map(|c| c.map_err(|e| e.to_string()))
}

/// The game in `chunk`, parsed.
fn parse(chunk: &[u8]) -> Result<Game, String> {
    match GameReader::new(chunk).next() {
        Some(Ok(g)) => Ok(g),
        Some(Err(e)) => Err(e.reason),
        None => Err("no moves or tags".to_owned()),
    }
}

/// The list entry of a game: its number, the usual tags, its plies or why
/// it cannot be read.
fn entry(number: u64, game: Result<Game, String>) -> Value {
    match game {
        Ok(g) => {
            let tag = |n: &str| g.tag(n).unwrap_or("?").to_owned();
            json!({
                "number": number,
                "white": tag("White"), "black": tag("Black"), "result": tag("Result"),
                "event": tag("Event"), "date": tag("Date"),
                "white_elo": g.tag("WhiteElo"), "black_elo": g.tag("BlackElo"),
                "plies": g.moves.len(),
                "tags": g.tags.len(),
            })
        }
        Err(e) => json!({"number": number, "error": e}),
    }
}

/// The games of `pgn`, at most [`MAX_LISTED`]: `{games: [{number, white,
/// black, result, event, date, white_elo, black_elo, plies, tags} or
/// {number, error}], more}` (`tags`: how many; text that is not PGN reads as
/// a game without tags or moves).
pub fn games(pgn: &[u8]) -> Value {
    let mut list = Vec::new();
    let mut more = false;
    for (i, chunk) in chunks(pgn).enumerate() {
        if list.len() == MAX_LISTED {
            more = true;
            break;
        }
        let number = i as u64 + 1;
        list.push(entry(number, chunk.and_then(|c| parse(&c.bytes))));
    }
    json!({"games": list, "more": more})
}

/// The model's three likeliest moves in `pos` after `history`:
/// `[{san, uci, p}]`, p from the model's weights (the coder's frequencies
/// round them to 24 bits).
fn top3(pos: &Chess, history: &[Move], context: &GameContext) -> Vec<Value> {
    model::predict(pos, history, context)
        .into_iter()
        .take(3)
        .map(|(m, p)| {
            json!({
                "san": SanPlus::from_move(pos.clone(), m).to_string(),
                "uci": UciMove::from_standard(m).to_string(),
                "p": p,
            })
        })
        .collect()
}

fn fen_of(pos: &Chess) -> String {
    Fen::from_position(pos, EnPassantMode::Legal).to_string()
}

/// Game `number` (1-based) of `pgn` move by move in `codec`, with the
/// model's predictions and the game's size in every codec:
///
/// `{number, tags: [[name, value]], start, plies: [{san, uci, fen, bits,
/// legal, rank}], top3: [[{san, uci, p}]] (one list a position, the last
/// after the final move), codec, stream_bits, text_bytes, zstd_bytes,
/// sizes: [{codec, bits}]}`.
///
/// `fen` is the position after the ply; `stream_bits` the length of the
/// codec's whole stream (its end included); `text_bytes` the game's PGN
/// text as it stands in `pgn` and `zstd_bytes` that text alone at zstd
/// level 19.
///
/// # Errors
///
/// A message when there is no such game, the game cannot be read (an
/// illegal move, a bad FEN), or the codec is unknown.
pub fn analyse(pgn: &[u8], number: u64, codec: &str) -> Result<Value, String> {
    let chunk = chunks(pgn)
        .nth(number.checked_sub(1).ok_or("games are numbered from 1")? as usize)
        .ok_or_else(|| format!("there is no game {number}"))??;
    let game = parse(&chunk.bytes).map_err(|e| format!("game {number}: {e}"))?;
    // Every codec in the game's context (ratings, time control), as the
    // archive and `chesspack explain` code it.
    let context = game.context();
    let in_context = |c: Box<dyn GameCodec>| c.in_context(&context);
    let coder = in_context(game::codec(codec).map_err(|e| e.to_string())?);
    let costs = coder
        .explain(&game.start, &game.moves)
        .map_err(|e| format!("game {number}: {e}"))?;
    let mut pos = game.start.clone();
    let mut plies = Vec::with_capacity(game.moves.len());
    let mut predictions = Vec::with_capacity(game.moves.len() + 1);
    for (i, (&m, cost)) in game.moves.iter().zip(&costs).enumerate() {
        predictions.push(top3(&pos, &game.moves[..i], &context));
        let uci = UciMove::from_standard(m).to_string();
        pos.play_unchecked(m);
        plies.push(json!({
            "san": cost.san, "uci": uci, "fen": fen_of(&pos),
            "bits": cost.bits, "legal": cost.legal, "rank": cost.rank,
        }));
    }
    predictions.push(top3(&pos, &game.moves, &context));
    let mut sizes = Vec::new();
    let mut stream_bits = 0;
    for c in game::codecs().into_iter().map(in_context) {
        let bits = c
            .encode(&game.start, &game.moves)
            .map_err(|e| e.to_string())?
            .len();
        if c.name() == coder.name() {
            stream_bits = bits;
        }
        sizes.push(json!({"codec": c.name(), "bits": bits}));
    }
    let zstd_bytes = zstd::bulk::compress(&chunk.bytes, 19)
        .map_err(|e| e.to_string())?
        .len();
    Ok(json!({
        "number": number,
        "tags": game.tags,
        "start": fen_of(&game.start),
        "plies": plies,
        "top3": predictions,
        "codec": coder.name(),
        "stream_bits": stream_bits,
        "text_bytes": chunk.bytes.len(),
        "zstd_bytes": zstd_bytes,
        "sizes": sizes,
    }))
}

/// The bits of the position `fen` in every position codec: `{fen, codecs:
/// [{codec, bits} or {codec, error}]}`, `fen` as read back.
///
/// # Errors
///
/// A message when `fen` is not a legal position of standard chess.
pub fn fen_bits(fen: &str) -> Result<Value, String> {
    let pos = position::parse_fen(fen.trim()).map_err(|e| e.to_string())?;
    let codecs: Vec<Value> = position::codecs()
        .iter()
        .map(|c| match c.encode(&pos) {
            Ok(bits) => json!({"codec": c.name(), "bits": bits.len()}),
            Err(e) => json!({"codec": c.name(), "error": e.to_string()}),
        })
        .collect();
    Ok(json!({"fen": position::to_fen(&pos), "codecs": codecs}))
}

/// The most text [`unpack`] gives (a page holds a sample, not a month of
/// lichess).
pub const MAX_UNPACKED: u64 = 256 << 20;

/// The bytes of a file as the command line reads it
/// ([`chesspack::files::decoder`]: a `.zst` download unpacked, other bytes
/// as they are), at most [`MAX_UNPACKED`].
///
/// # Errors
///
/// A message when the data is damaged, in a format this build does not
/// read, or unpacks to more.
pub fn unpack(bytes: &[u8]) -> Result<Vec<u8>, String> {
    use std::io::Read;
    let mut out = Vec::new();
    files::decoder(bytes)
        .and_then(|d| d.take(MAX_UNPACKED + 1).read_to_end(&mut out))
        .map_err(|e| format!("cannot unpack the file: {e}"))?;
    if out.len() as u64 > MAX_UNPACKED {
        return Err(format!(
            "the file unpacks to more than {} MiB: open part of it",
            MAX_UNPACKED >> 20
        ));
    }
    Ok(out)
}

/// Whether `bytes` start as a `.chpk` archive does.
pub fn is_archive_bytes(bytes: &[u8]) -> bool {
    files::Kind::of("", bytes) == files::Kind::GameArchive
}

/// Compresses `bytes` (PGN, positions or engine training data, told as
/// `chesspack compress` tells them: `files::compress`) into an archive with
/// `codec` (empty: the kind's default) and the default options.
///
/// # Errors
///
/// A message for an unknown codec or an archive given to compress (the
/// input itself cannot fail: an unreadable game is kept verbatim).
pub fn compress_bytes(bytes: &[u8], codec: &str) -> Result<Vec<u8>, String> {
    let mut settings = files::Settings::default();
    settings.codec = (!codec.is_empty()).then(|| codec.to_owned());
    let mut out = Vec::new();
    let kind = files::Kind::of("", &bytes[..bytes.len().min(8)]);
    files::compress(kind, bytes, &mut out, &settings, &mut |_| {
        std::ops::ControlFlow::Continue(())
    })
    .map_err(|e| e.to_string())?;
    Ok(out)
}

/// The file an archive of any kind was made from (`files::decompress`).
///
/// # Errors
///
/// A message naming what is damaged.
pub fn decompress_bytes(bytes: &[u8]) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    files::decompress(
        Cursor::new(bytes),
        &mut out,
        &files::Settings::default(),
        &mut |_| std::ops::ControlFlow::Continue(()),
    )
    .map_err(|e| e.to_string())?;
    Ok(out)
}

fn js(e: String) -> JsError {
    JsError::new(&e)
}

/// [`codec_list`] as JSON text.
#[wasm_bindgen(js_name = codecs)]
pub fn codecs_js() -> String {
    codec_list().to_string()
}

/// [`games`] as JSON text.
#[wasm_bindgen(js_name = games)]
pub fn games_js(pgn: &str) -> String {
    games(pgn.as_bytes()).to_string()
}

/// [`analyse`] as JSON text.
#[wasm_bindgen(js_name = analyse)]
pub fn analyse_js(pgn: &str, number: u32, codec: &str) -> Result<String, JsError> {
    analyse(pgn.as_bytes(), u64::from(number), codec)
        .map(|v| v.to_string())
        .map_err(js)
}

/// [`fen_bits`] as JSON text.
#[wasm_bindgen(js_name = fenBits)]
pub fn fen_bits_js(fen: &str) -> Result<String, JsError> {
    fen_bits(fen).map(|v| v.to_string()).map_err(js)
}

/// [`is_archive_bytes`].
#[wasm_bindgen(js_name = isArchive)]
pub fn is_archive_js(bytes: &[u8]) -> bool {
    is_archive_bytes(bytes)
}

/// [`unpack`].
#[wasm_bindgen(js_name = unpack)]
pub fn unpack_js(bytes: &[u8]) -> Result<Vec<u8>, JsError> {
    unpack(bytes).map_err(js)
}

/// [`compress_bytes`].
#[wasm_bindgen(js_name = compress)]
pub fn compress_js(pgn: &[u8], codec: &str) -> Result<Vec<u8>, JsError> {
    compress_bytes(pgn, codec).map_err(js)
}

/// [`decompress_bytes`].
#[wasm_bindgen(js_name = decompress)]
pub fn decompress_js(bytes: &[u8]) -> Result<Vec<u8>, JsError> {
    decompress_bytes(bytes).map_err(js)
}

/// An archive opened in memory: its games listed by their tags, any one
/// read alone (the archive's random access).
#[wasm_bindgen]
pub struct Archive {
    reader: ArchiveReader<Cursor<Vec<u8>>>,
}

impl Archive {
    /// Opens the archive in `bytes`.
    ///
    /// # Errors
    ///
    /// A message naming what is wrong with its header, index or footer.
    pub fn open(bytes: Vec<u8>) -> Result<Archive, String> {
        let reader = ArchiveReader::open(Cursor::new(bytes)).map_err(|e| e.to_string())?;
        if let Some(why) = reader.index_error() {
            return Err(format!("damaged index: {why}"));
        }
        Ok(Archive { reader })
    }

    /// The archive's games, at most [`MAX_LISTED`], as [`games`] lists
    /// them (plies are not known without decoding, so absent), with the
    /// archive's codec and game count: `{codec, total, games, more}`.
    ///
    /// # Errors
    ///
    /// A message naming the damaged block.
    pub fn list(&mut self) -> Result<Value, String> {
        let mut list = Vec::new();
        let mut more = false;
        'blocks: for b in 0..self.reader.blocks().len() {
            let first = self.reader.first_game(b);
            let block = self.reader.read_block(b).map_err(|e| e.to_string())?;
            let tags =
                archive::block_tags(self.reader.codec(), &block).map_err(|e| e.to_string())?;
            for (i, t) in tags.into_iter().enumerate() {
                if list.len() == MAX_LISTED {
                    more = true;
                    break 'blocks;
                }
                let number = first + i as u64;
                list.push(match t {
                    Ok(tags) => {
                        let tag = |n: &str| {
                            tags.iter()
                                .find(|(k, _)| k == n.as_bytes())
                                .map(|(_, v)| String::from_utf8_lossy(v).into_owned())
                        };
                        json!({
                            "number": number,
                            "white": tag("White").unwrap_or_else(|| "?".into()),
                            "black": tag("Black").unwrap_or_else(|| "?".into()),
                            "result": tag("Result").unwrap_or_else(|| "?".into()),
                            "event": tag("Event").unwrap_or_else(|| "?".into()),
                            "date": tag("Date").unwrap_or_else(|| "?".into()),
                            "white_elo": tag("WhiteElo"), "black_elo": tag("BlackElo"),
                        })
                    }
                    Err(verbatim) => entry(number, parse(&verbatim)),
                });
            }
        }
        Ok(json!({
            "codec": self.reader.codec().name(),
            "total": self.reader.games(),
            "games": list,
            "more": more,
        }))
    }

    /// The text of game `number` (1-based), decoded alone.
    ///
    /// # Errors
    ///
    /// A message for a game the archive does not hold or a damaged block.
    pub fn game(&mut self, number: u64) -> Result<Vec<u8>, String> {
        self.reader.game(number).map_err(|e| e.to_string())
    }
}

#[wasm_bindgen]
impl Archive {
    /// [`Archive::open`].
    #[wasm_bindgen(constructor)]
    pub fn open_js(bytes: Vec<u8>) -> Result<Archive, JsError> {
        Archive::open(bytes).map_err(js)
    }

    /// [`Archive::list`] as JSON text.
    #[wasm_bindgen(js_name = list)]
    pub fn list_js(&mut self) -> Result<String, JsError> {
        self.list().map(|v| v.to_string()).map_err(js)
    }

    /// [`Archive::game`] as text (lossy where the game is not UTF-8).
    #[wasm_bindgen(js_name = game)]
    pub fn game_js(&mut self, number: u32) -> Result<String, JsError> {
        self.game(u64::from(number))
            .map(|t| String::from_utf8_lossy(&t).into_owned())
            .map_err(js)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &[u8] = include_bytes!("../../samples/lichess-sample.pgn");

    #[test]
    fn analyse_agrees_with_the_codec_and_the_model() {
        let v = analyse(SAMPLE, 1, "model").unwrap();
        let plies = v["plies"].as_array().unwrap();
        assert!(plies.len() > 10);
        assert_eq!(v["top3"].as_array().unwrap().len(), plies.len() + 1);
        // The first position: the model's likeliest moves sum to at most 1
        // and come best first.
        let top: Vec<f64> = v["top3"][0]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["p"].as_f64().unwrap())
            .collect();
        assert_eq!(top.len(), 3);
        assert!(top.windows(2).all(|w| w[0] >= w[1]) && top.iter().sum::<f64>() <= 1.0);
        // The per-move costs add up to about the stream (the coder's end).
        let sum: f64 = plies.iter().map(|p| p["bits"].as_f64().unwrap()).sum();
        let stream = v["stream_bits"].as_u64().unwrap() as f64;
        assert!((sum - stream).abs() < 40.0, "{sum} {stream}");
        let sizes = v["sizes"].as_array().unwrap();
        assert_eq!(sizes.len(), game::codecs().len());
        let model = sizes.iter().find(|s| s["codec"] == "model").unwrap();
        assert_eq!(model["bits"].as_u64().unwrap() as f64, stream);
        assert!(v["zstd_bytes"].as_u64().unwrap() < v["text_bytes"].as_u64().unwrap());
    }

    #[test]
    fn bad_input_is_a_message() {
        assert!(analyse(SAMPLE, 0, "model").unwrap_err().contains("from 1"));
        assert!(
            analyse(SAMPLE, 100_000, "model")
                .unwrap_err()
                .contains("no game")
        );
        assert!(analyse(SAMPLE, 1, "zip").unwrap_err().contains("zip"));
        let illegal = b"[White \"a\"]\n\n1. e4 e5 2. Ke3 *\n";
        assert!(
            analyse(illegal, 1, "model")
                .unwrap_err()
                .starts_with("game 1")
        );
        assert!(fen_bits("not a fen").is_err());
        assert!(Archive::open(b"CHPK\r\n\x1a\nnonsense".to_vec()).is_err());
        let listed = games(b"\x00\x01 binary");
        assert!(listed["games"].as_array().unwrap().len() <= 1);
    }

    #[test]
    fn archives_open_list_and_give_games_back() {
        let bytes = compress_bytes(SAMPLE, "model").unwrap();
        assert!(is_archive_bytes(&bytes));
        assert_eq!(decompress_bytes(&bytes).unwrap(), SAMPLE);
        let mut a = Archive::open(bytes).unwrap();
        let list = a.list().unwrap();
        let listed = games(SAMPLE);
        assert_eq!(list["total"], listed["games"].as_array().unwrap().len());
        assert_eq!(list["games"][2]["white"], listed["games"][2]["white"]);
        let third = a.game(3).unwrap();
        let v = analyse(&third, 1, "index").unwrap();
        assert_eq!(
            v["plies"].as_array().unwrap().len(),
            listed["games"][2]["plies"]
        );
    }

    /// Issue 67: the page compresses and opens every kind of file through
    /// the library's one entry point, as the command line does.
    #[test]
    fn regression_issue_67_every_kind_through_the_one_entry_point() {
        let puzzles = include_bytes!("../../samples/puzzles-sample.csv");
        let binpack =
            include_bytes!("../../crates/chesspack/tests/fixtures/training/selfplay.binpack");
        for input in [SAMPLE, &puzzles[..], &binpack[..]] {
            let packed = compress_bytes(input, "").unwrap();
            assert_eq!(decompress_bytes(&packed).unwrap(), input);
            assert!(compress_bytes(&packed, "").is_err(), "an archive again");
        }
        assert!(compress_bytes(SAMPLE, "zip").unwrap_err().contains("zip"));
    }

    #[test]
    fn zst_downloads_unpack() {
        let packed = zstd::bulk::compress(SAMPLE, 3).unwrap();
        assert_eq!(unpack(&packed).unwrap(), SAMPLE);
        assert_eq!(unpack(SAMPLE).unwrap(), SAMPLE);
        assert!(
            unpack(&packed[..packed.len() / 2])
                .unwrap_err()
                .contains("unpack")
        );
    }

    #[test]
    fn every_position_codec_is_measured() {
        let v = fen_bits("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1").unwrap();
        let codecs = v["codecs"].as_array().unwrap();
        assert_eq!(codecs.len(), position::codecs().len());
        let usenet = codecs.iter().find(|c| c["codec"] == "usenet82").unwrap();
        // As `chesspack fen encode` gives it (the browser test compares all).
        assert_eq!(usenet["bits"], 155);
    }
}
