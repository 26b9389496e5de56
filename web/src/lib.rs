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
    archive::{self, ArchiveReader},
    files,
    game::{self, GameCodec},
    model::{self, GameContext},
    pgn::{Chunk, ChunkReader, Game, GameReader},
    position,
    search::{self, Query},
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
fn chunks(pgn: &[u8]) -> impl Iterator<Item = Result<Chunk, String>> + '_ {
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

/// The most games a page of [`Archive::find`] gives.
pub const MAX_PAGE: usize = 500;

/// An archive opened in memory: its games listed by their tags, any one
/// read alone (the archive's random access), and searched by position
/// (`chesspack::search`, the section read once and kept while the archive
/// is open).
#[wasm_bindgen]
pub struct Archive {
    reader: ArchiveReader<Cursor<Vec<u8>>>,
    bytes: usize,
    /// The games of the last query, so that its pages cost nothing.
    last: Option<Kept>,
}

/// The games a query found, kept for its pages.
struct Kept {
    /// The query, as JSON text (its keys sorted).
    query: String,
    /// The games by number, and how they were found.
    hits: Vec<search::Hit>,
    how: Value,
    /// The order of the pages: a sort and the games' places in `hits`.
    sort: String,
    order: Vec<usize>,
}

/// A [`Query`] from the page's JSON object: one of `fen`, `moves`,
/// `sub_fen` (text, several separated by `;` or new lines: any of them),
/// `material`, `imbalance`, and the filters `white`, `black`, `player`,
/// `min_elo`, `max_elo`, `result`, `from`, `to`, `event`, `eco`, `opening`, `speed`,
/// as `chesspack find` takes them. Empty text is no filter.
///
/// # Errors
///
/// A message naming a field of the wrong type.
pub fn query_of(v: &Value) -> Result<Query, String> {
    let text = |name: &str| -> Result<Option<String>, String> {
        match &v[name] {
            Value::Null => Ok(None),
            Value::String(s) if s.trim().is_empty() => Ok(None),
            Value::String(s) => Ok(Some(s.trim().to_owned())),
            Value::Number(n) => Ok(Some(n.to_string())),
            other => Err(format!("{name}: {other} is not text")),
        }
    };
    let number = |name: &str| -> Result<Option<u32>, String> {
        text(name)?
            .map(|t| {
                t.parse::<u32>()
                    .map_err(|_| format!("{name}: {t:?} is not a whole number"))
            })
            .transpose()
    };
    let mut q = Query::default();
    q.fen = text("fen")?;
    q.moves = text("moves")?;
    q.sub_fen = text("sub_fen")?
        .map(|s| {
            s.split([';', '\n'])
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    q.material = text("material")?;
    q.imbalance = text("imbalance")?;
    q.white = text("white")?;
    q.black = text("black")?;
    q.player = text("player")?;
    q.min_elo = number("min_elo")?;
    q.max_elo = number("max_elo")?;
    q.result = text("result")?;
    q.from = text("from")?;
    q.to = text("to")?;
    q.event = text("event")?;
    q.eco = text("eco")?;
    q.opening = text("opening")?;
    q.speed = text("speed")?;
    // One thread in the browser.
    q.threads = 1;
    Ok(q)
}

/// How a search went: `{reached, scanned, decoded, not_searched,
/// index_error}` (`scanned`: every game decoded, for want of a search
/// section).
fn how(found: &search::Found) -> Value {
    json!({
        "reached": found.reached,
        "scanned": found.scanned,
        "decoded": found.decoded,
        "not_searched": found.not_searched,
        "index_error": found.index_error,
    })
}

impl Archive {
    /// Opens the archive in `bytes`. A damaged search section is no error
    /// (queries then decode every game and say why).
    ///
    /// # Errors
    ///
    /// A message naming what is wrong with its header or block index.
    pub fn open(bytes: Vec<u8>) -> Result<Archive, String> {
        let size = bytes.len();
        let reader = ArchiveReader::open(Cursor::new(bytes)).map_err(|e| e.to_string())?;
        if let Some(why) = reader.index_error() {
            return Err(format!("damaged block index: {why}"));
        }
        Ok(Archive {
            reader,
            bytes: size,
            last: None,
        })
    }

    /// What the archive is: `{codec, games, bytes, indexed}` (`indexed`:
    /// it has a search section; without one every query decodes every
    /// game).
    pub fn info(&self) -> Value {
        json!({
            "codec": self.reader.codec().name(),
            "games": self.reader.games(),
            "bytes": self.bytes,
            "indexed": self.reader.has_search_section(),
        })
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
                list.push(match &t.verbatim {
                    // A game stored verbatim: what the PGN reader makes of it.
                    Some(text) => entry(number, parse(text)),
                    None => {
                        let tag = |n: &str| t.get(n).map(|v| v.into_owned());
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

    /// The opening explorer from the position of `query` (the start where
    /// it names none; see [`query_of`]) with its filters, as `chesspack
    /// explore --json` gives it: `{moves: [{san, uci, games, white,
    /// draws, black, mean_rating, last_game, best_game, eco, opening}],
    /// eco, opening, reached, scanned, decoded, not_searched,
    /// index_error}` (the position's opening as `explore` names it above
    /// its table; each move's, that of the position after it). With `games`, the
    /// games that reached the position are kept from the same search for
    /// [`Archive::find`] of the same query (the page's list).
    ///
    /// # Errors
    ///
    /// A message for a query that does not parse or a damaged block.
    pub fn explore(&mut self, query: &Value, games: bool) -> Result<Value, String> {
        let mut q = query_of(query)?;
        q.explore = true;
        q.games = games;
        let mut found =
            search::find(std::slice::from_mut(&mut self.reader), &q).map_err(|e| e.to_string())?;
        if games {
            self.last = Some(Kept {
                query: query.to_string(),
                hits: std::mem::take(&mut found.hits),
                how: how(&found),
                sort: "number".into(),
                order: Vec::new(),
            });
        }
        let game = |g: Option<(usize, u64)>| g.map(|(_, n)| n);
        let moves: Vec<Value> = found
            .moves
            .iter()
            .map(|m| {
                json!({
                    "san": m.san, "uci": m.uci, "games": m.games,
                    "white": m.white, "draws": m.draws, "black": m.black,
                    "mean_rating": m.mean_rating,
                    "last_game": game(m.last_game), "best_game": game(m.best_game),
                    "eco": m.opening.map(|o| o.eco), "opening": m.opening.map(|o| o.name),
                })
            })
            .collect();
        let mut v = how(&found);
        v["moves"] = json!(moves);
        v["eco"] = json!(found.opening.map(|o| o.eco));
        v["opening"] = json!(found.opening.map(|o| o.name));
        Ok(v)
    }

    /// The games that `query` finds ([`query_of`]: a position, sub-FENs,
    /// a material or an imbalance, or the filters alone), `limit` (at
    /// most [`MAX_PAGE`]) from `offset`, in the order `sort` names:
    /// `number`, `date` (newest first) or `rating` (highest mean rating
    /// first). The answer is kept (as is that of [`Archive::explore`],
    /// which finds the games too), so that the next page of the same query
    /// costs nothing: `{total, offset, games: [{game, ply, white, black,
    /// white_elo, black_elo, result, date, event, eco}], reached, scanned,
    /// decoded, not_searched, index_error}`.
    ///
    /// # Errors
    ///
    /// A message for a query that does not parse, an unknown sort or a
    /// damaged block.
    pub fn find(
        &mut self,
        query: &Value,
        sort: &str,
        offset: usize,
        limit: usize,
    ) -> Result<Value, String> {
        let key = query.to_string();
        if self.last.as_ref().is_none_or(|k| k.query != key) {
            let found = search::find(std::slice::from_mut(&mut self.reader), &query_of(query)?)
                .map_err(|e| e.to_string())?;
            let how = how(&found);
            self.last = Some(Kept {
                query: key,
                hits: found.hits,
                how,
                sort: String::new(),
                order: Vec::new(),
            });
        }
        let kept = self.last.as_mut().expect("kept above");
        let sort = if sort.is_empty() { "number" } else { sort };
        if kept.sort != sort || kept.order.len() != kept.hits.len() {
            let hits = &kept.hits;
            let mut order: Vec<usize> = (0..hits.len()).collect();
            match sort {
                "number" => {}
                // `??` sorts before digits: unknown dates last.
                "date" => order.sort_by(|&a, &b| hits[b].date.cmp(&hits[a].date).then(a.cmp(&b))),
                "rating" => {
                    order.sort_by(|&a, &b| hits[b].rating.cmp(&hits[a].rating).then(a.cmp(&b)))
                }
                other => return Err(format!("unknown sort {other:?}: number, date or rating")),
            }
            kept.sort = sort.to_owned();
            kept.order = order;
        }
        let (hits, how) = (&kept.hits, &kept.how);
        let page: Vec<Value> = kept
            .order
            .iter()
            .skip(offset)
            .take(limit.min(MAX_PAGE))
            .map(|&i| {
                let h = &hits[i];
                json!({
                    "game": h.game, "ply": h.ply, "white": &*h.white, "black": &*h.black,
                    "white_elo": h.white_elo, "black_elo": h.black_elo, "result": h.result,
                    "date": &*h.date, "event": &*h.event, "eco": &*h.eco,
                    "opening": &*h.opening,
                })
            })
            .collect();
        let mut v = how.clone();
        v["total"] = json!(hits.len());
        v["offset"] = json!(offset);
        v["games"] = json!(page);
        Ok(v)
    }
}

/// The position `fen` for a board the user moves on: `{fen, turn, check,
/// outcome, legal: [{uci, san}]}`, its legal moves in UCI (castling as
/// the king's two-square move) and SAN, `outcome` `1-0`, `0-1`,
/// `1/2-1/2` or null.
///
/// # Errors
///
/// A message when `fen` is not a legal position of standard chess.
pub fn position_moves(fen: &str) -> Result<Value, String> {
    let pos = position::parse_fen(fen.trim()).map_err(|e| e.to_string())?;
    let legal: Vec<Value> = pos
        .legal_moves()
        .iter()
        .map(|&m| {
            json!({
                "uci": m.to_uci(shakmaty::CastlingMode::Standard).to_string(),
                "san": SanPlus::from_move(pos.clone(), m).to_string(),
            })
        })
        .collect();
    let outcome = pos.outcome().known().map(|o| o.to_string());
    Ok(json!({
        "fen": fen_of(&pos),
        "turn": if pos.turn() == shakmaty::Color::White { "w" } else { "b" },
        "check": pos.is_check(),
        "outcome": outcome,
        "legal": legal,
    }))
}

/// The move `mv` (UCI or SAN) played in `fen`: `{fen, san, uci}`, the FEN
/// after it.
///
/// # Errors
///
/// A message when `fen` is not a legal position or `mv` not a legal move
/// in it.
pub fn play(fen: &str, mv: &str) -> Result<Value, String> {
    let mut pos = position::parse_fen(fen.trim()).map_err(|e| e.to_string())?;
    let m = mv
        .parse::<UciMove>()
        .ok()
        .and_then(|u| u.to_move(&pos).ok())
        .or_else(|| {
            mv.parse::<SanPlus>()
                .ok()
                .and_then(|s| s.san.to_move(&pos).ok())
        })
        .ok_or_else(|| format!("{mv:?} is not a legal move in {fen}"))?;
    let san = SanPlus::from_move_and_play_unchecked(&mut pos, m).to_string();
    Ok(json!({
        "fen": fen_of(&pos),
        "san": san,
        "uci": m.to_uci(shakmaty::CastlingMode::Standard).to_string(),
    }))
}

#[wasm_bindgen]
impl Archive {
    /// [`Archive::open`].
    #[wasm_bindgen(constructor)]
    pub fn open_js(bytes: Vec<u8>) -> Result<Archive, JsError> {
        Archive::open(bytes).map_err(js)
    }

    /// [`Archive::info`] as JSON text.
    #[wasm_bindgen(js_name = info)]
    pub fn info_js(&self) -> String {
        self.info().to_string()
    }

    /// [`Archive::list`] as JSON text.
    #[wasm_bindgen(js_name = list)]
    pub fn list_js(&mut self) -> Result<String, JsError> {
        self.list().map(|v| v.to_string()).map_err(js)
    }

    /// [`Archive::game`] as text, by chesspack's one rule
    /// ([`chesspack::pgn::text`]: a game that is not UTF-8 is read as
    /// Latin-1, no byte replaced).
    #[wasm_bindgen(js_name = game)]
    pub fn game_js(&mut self, number: u32) -> Result<String, JsError> {
        self.game(u64::from(number))
            .map(|t| chesspack::pgn::text(&t).into_owned())
            .map_err(js)
    }

    /// [`Archive::explore`]: the query and the answer as JSON text.
    #[wasm_bindgen(js_name = explore)]
    pub fn explore_js(&mut self, query: &str, games: bool) -> Result<String, JsError> {
        let q: Value = serde_json::from_str(query).map_err(|e| JsError::new(&e.to_string()))?;
        self.explore(&q, games).map(|v| v.to_string()).map_err(js)
    }

    /// [`Archive::find`]: the query and the answer as JSON text.
    #[wasm_bindgen(js_name = find)]
    pub fn find_js(
        &mut self,
        query: &str,
        sort: &str,
        offset: u32,
        limit: u32,
    ) -> Result<String, JsError> {
        let q: Value = serde_json::from_str(query).map_err(|e| JsError::new(&e.to_string()))?;
        self.find(&q, sort, offset as usize, limit as usize)
            .map(|v| v.to_string())
            .map_err(js)
    }
}

/// [`position_moves`] as JSON text.
#[wasm_bindgen(js_name = positionMoves)]
pub fn position_moves_js(fen: &str) -> Result<String, JsError> {
    position_moves(fen).map(|v| v.to_string()).map_err(js)
}

/// [`play`] as JSON text.
#[wasm_bindgen(js_name = play)]
pub fn play_js(fen: &str, mv: &str) -> Result<String, JsError> {
    play(fen, mv).map(|v| v.to_string()).map_err(js)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &[u8] = include_bytes!("../../samples/lichess-sample.pgn");
    const START: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

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

    /// Issue 67: the page shows a game's text by chesspack's one rule: a
    /// game in Latin-1 (an older database's names) loses no byte.
    #[test]
    fn regression_issue_67_a_latin_1_game_is_shown_by_the_one_rule() {
        let latin1 = b"[White \"M\xfcller\"]\n[Black \"S\xf6rensen\"]\n\n1. e4 e5 *\n";
        let mut a = Archive::open(compress_bytes(latin1, "model").unwrap()).unwrap();
        let shown = a.game_js(1).unwrap();
        assert!(
            shown.contains("M\u{fc}ller") && shown.contains("S\u{f6}rensen"),
            "{shown}"
        );
        assert!(!shown.contains('\u{fffd}'));
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

    /// Issue 70: the page's explorer and games list are the library's
    /// search, with the filters, paging and sorting the page asks for.
    #[test]
    fn regression_issue_70_explorer_and_games_of_a_position() {
        let bytes = compress_bytes(SAMPLE, "model").unwrap();
        let mut a = Archive::open(bytes.clone()).unwrap();
        assert_eq!(a.info()["games"], a.reader.games());
        let start = a.explore(&json!({}), true).unwrap();
        assert_eq!(start["scanned"], false);
        let moves = start["moves"].as_array().unwrap();
        let games: u64 = moves.iter().map(|m| m["games"].as_u64().unwrap()).sum();
        // Games from the start with a move (the sample has FEN starts too).
        let from_start = a.find(&json!({"fen": START}), "", 0, 1).unwrap();
        assert_eq!(json!(games), from_start["total"]);
        assert_eq!(start["reached"], from_start["total"]);
        // The most played first move, played, reaches as many games.
        let first = &moves[0];
        let after = play(START, first["uci"].as_str().unwrap()).unwrap();
        assert_eq!(after["san"], first["san"]);
        let found = a
            .find(&json!({"fen": after["fen"]}), "number", 0, 2)
            .unwrap();
        assert_eq!(found["total"], first["games"]);
        assert_eq!(
            found["games"].as_array().unwrap().len(),
            2.min(first["games"].as_u64().unwrap()) as usize
        );
        assert_eq!(found["games"][0]["ply"], 1);
        // The second page follows the first.
        let all = a
            .find(&json!({"fen": after["fen"]}), "number", 0, 500)
            .unwrap();
        let page = a
            .find(&json!({"fen": after["fen"]}), "number", 1, 1)
            .unwrap();
        assert_eq!(page["games"][0], all["games"][1]);
        // Newest first.
        let by_date = a.find(&json!({}), "date", 0, 500).unwrap();
        let dates: Vec<&str> = by_date["games"]
            .as_array()
            .unwrap()
            .iter()
            .map(|g| g["date"].as_str().unwrap())
            .collect();
        assert!(dates.windows(2).all(|w| w[0] >= w[1]), "{dates:?}");
        // Every game but those stored verbatim (which no query reads).
        let listed = by_date["total"].as_u64().unwrap() + by_date["not_searched"].as_u64().unwrap();
        assert_eq!(listed, a.reader.games());
        // A filter narrows the explorer and the games alike.
        let rated = json!({"min_elo": "2000"});
        let explored = a.explore(&rated, false).unwrap();
        let n: u64 = explored["moves"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["games"].as_u64().unwrap())
            .sum();
        let rated_start = json!({"min_elo": "2000", "fen": START});
        assert_eq!(json!(n), a.find(&rated_start, "", 0, 1).unwrap()["total"]);
        assert!(n < a.reader.games());
        // Material and sub-FEN queries give games too.
        let kings = a
            .find(
                &json!({"sub_fen": "8/8/8/8/8/8/8/4K3; 8/8/8/8/8/8/8/6K1"}),
                "",
                0,
                500,
            )
            .unwrap();
        assert!(kings["total"].as_u64().unwrap() > 0);
        // The explorer's games are the list's, from its one search.
        let mut fresh = Archive::open(bytes.clone()).unwrap();
        for q in [
            json!({"fen": after["fen"]}),
            json!({"fen": START, "player": "a"}),
        ] {
            let explored = a.explore(&q, true).unwrap();
            let listed = a.find(&q, "rating", 0, 500).unwrap();
            assert_eq!(listed["total"], explored["reached"]);
            assert_eq!(
                listed["games"],
                fresh.find(&q, "rating", 0, 500).unwrap()["games"]
            );
        }
        // Bad queries are messages.
        assert!(
            a.explore(&json!({"fen": "not a fen"}), false)
                .unwrap_err()
                .contains("FEN")
        );
        assert!(
            a.find(&json!({"min_elo": "high"}), "", 0, 1)
                .unwrap_err()
                .contains("min_elo")
        );
        assert!(
            a.find(&json!({}), "colour", 0, 1)
                .unwrap_err()
                .contains("sort")
        );
        // An archive without a search section opens, and its queries scan.
        let mut plain = Vec::new();
        let mut settings = files::Settings::default();
        settings.no_index = true;
        files::compress(
            files::Kind::Games,
            SAMPLE,
            &mut plain,
            &settings,
            &mut |_| std::ops::ControlFlow::Continue(()),
        )
        .unwrap();
        let mut b = Archive::open(plain).unwrap();
        assert_eq!(
            (a.info()["indexed"].clone(), b.info()["indexed"].clone()),
            (json!(true), json!(false))
        );
        let scanned = b.explore(&json!({}), true).unwrap();
        assert_eq!(scanned["scanned"], true);
        assert_eq!(scanned["moves"], start["moves"]);
    }

    #[test]
    fn the_board_gives_legal_moves_and_plays_them() {
        let p = position_moves(START).unwrap();
        assert_eq!(p["legal"].as_array().unwrap().len(), 20);
        assert_eq!(p["turn"], "w");
        let e4 = play(START, "e2e4").unwrap();
        assert_eq!(e4["san"], "e4");
        assert_eq!(
            play(e4["fen"].as_str().unwrap(), "c5").unwrap()["uci"],
            "c7c5"
        );
        assert!(
            play(START, "e2e5")
                .unwrap_err()
                .contains("not a legal move")
        );
        let castle = "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1";
        let castling = position_moves(castle).unwrap();
        let ucis: Vec<&str> = castling["legal"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["uci"].as_str().unwrap())
            .collect();
        assert!(ucis.contains(&"e1g1") && ucis.contains(&"e1c1"));
        let mate = "rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3";
        assert_eq!(position_moves(mate).unwrap()["outcome"], "0-1");
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
