//! Records: one game's moves, or one position, as self-contained bytes.
//!
//! A codec's stream is a bit string of exact length ([`Bits`]); a record
//! makes it a byte string that names its codec and model, so that a column
//! of a table (Arrow, Parquet, a database) can hold one game or position a
//! value and each decodes on its own.
//!
//! # Format (version 2)
//!
//! * byte 0, the tag: `0x30 + id` for a game record, `0x20 + id` for a
//!   position record, where `id` is the codec's number in `GAME_CODECS` or
//!   `POSITION_CODECS`;
//! * byte 1, the model check: the low byte of the codec's model hash
//!   ([`GameCodec::model_hash`], `PositionModel::model_hash`; 0 for codecs
//!   without a model), so that a record written with another model is
//!   refused (255 times in 256 for one record, surely for a column);
//! * a game record only, byte 2, the context check: the low byte of a hash
//!   of the game's start position and of the context its codec coded in
//!   ([`GameCodec::context_hash`]: ratings, time control, clocks, for
//!   `model`), so that a record decoded from another start or in another
//!   context is refused ([`Error::OtherContext`]) rather than decoded to
//!   another game (issue 44);
//! * the stream's bits, then a 1 bit, then 0 bits up to the byte's end (the
//!   stream's length is where the last 1 bit is).
//!
//! Version 1 game records (tag `0x10 + id`, no context check) still decode.
//! The start position and the context are not stored (as in the codecs): a
//! caller keeps the tags (and the FEN of a game from another start) beside
//! the record and decodes with them. A record of the `model` codec costs 3
//! bytes + about 2.7 bits a ply + 1 to 8 bits of end mark.
//!
//! ```
//! use chesspack::{game, pgn, record};
//! use shakmaty::Chess;
//!
//! let start = Chess::default();
//! let moves = pgn::movetext_moves(b"1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 *", &start).unwrap();
//! let codec = game::codec("model").unwrap();
//! let bytes = record::encode_game(codec.as_ref(), &start, &moves).unwrap();
//! assert_eq!(record::game_codec_name(&bytes).unwrap(), "model");
//! assert_eq!(record::decode_game(codec.as_ref(), &start, &bytes).unwrap(), moves);
//! // Another codec refuses the record, and so does another start.
//! assert!(record::decode_game(&game::Index, &start, &bytes).is_err());
//! let other = chesspack::position::parse_fen("4k3/8/8/8/8/8/4P3/4K3 w - - 0 1").unwrap();
//! assert_eq!(
//!     record::decode_game(codec.as_ref(), &other, &bytes),
//!     Err(chesspack::Error::OtherContext)
//! );
//! ```

use shakmaty::{Chess, Move, Position};

use crate::{
    Bits, Error,
    bits::BitWriter,
    game::GameCodec,
    position::{PositionCodec, PositionModel},
};

/// The game codecs by record id: a codec's id is its index here. Ids are
/// part of the format: new codecs go at the end.
pub(crate) const GAME_CODECS: [&str; 8] = [
    "squares",
    "index",
    "radix",
    "engine-huffman",
    "engine-arith",
    "model",
    "fast",
    "brisk",
];

/// The position codecs by record id, as [`GAME_CODECS`].
pub(crate) const POSITION_CODECS: [&str; 5] = [
    "usenet82",
    "kingspawns",
    "arith",
    "packed",
    "position-model",
];

/// Game records of version 1 (no context check).
const GAME_TAG_V1: u8 = 0x10;
const GAME_TAG: u8 = 0x30;
const POSITION_TAG: u8 = 0x20;

/// Encodes `moves` played from `start` as a game record.
///
/// # Errors
///
/// [`Error::IllegalMove`] when a move is not legal where it is played,
/// [`Error::UnknownCodec`] for a codec without a record id.
pub fn encode_game(codec: &dyn GameCodec, start: &Chess, moves: &[Move]) -> Result<Vec<u8>, Error> {
    let tag = GAME_TAG + id_of(&GAME_CODECS, codec.name())?;
    let bits = codec.encode(start, moves)?;
    Ok(seal(
        &[
            tag,
            check_byte(codec.model_hash()),
            context_check(codec, start),
        ],
        &bits,
    ))
}

/// The name of the game codec that wrote a record.
///
/// # Errors
///
/// [`Error::InvalidData`] when `data` is not a game record.
///
/// ```
/// assert_eq!(chesspack::record::game_codec_name(&[0x35, 0, 0, 0x80]).unwrap(), "model");
/// assert_eq!(chesspack::record::game_codec_name(&[0x15, 0, 0x80]).unwrap(), "model");
/// assert!(chesspack::record::game_codec_name(&[0x25, 0, 0x80]).is_err());
/// ```
pub fn game_codec_name(data: &[u8]) -> Result<&'static str, Error> {
    match data.first() {
        Some(&tag) if (GAME_TAG_V1..POSITION_TAG).contains(&tag) => {
            name_of(data, GAME_TAG_V1, &GAME_CODECS, "game")
        }
        _ => name_of(data, GAME_TAG, &GAME_CODECS, "game"),
    }
}

/// Decodes a game record written by `codec` for a game from `start`. A
/// record holds one byte of the model's hash: a record of other weights
/// (before a model update) is refused.
///
/// `codec` must be in the game's context ([`GameCodec::in_context`]) and
/// `start` the game's start, as they were when the record was written.
///
/// # Errors
///
/// [`Error::InvalidData`] when `data` is not a record of `codec` and its
/// model, or its stream does not decode;
/// [`Error::OtherContext`] when it was written from another start or in
/// another context (version 2); any error of the codec's decoder.
pub fn decode_game(codec: &dyn GameCodec, start: &Chess, data: &[u8]) -> Result<Vec<Move>, Error> {
    let v1 = data
        .first()
        .is_some_and(|t| (GAME_TAG_V1..POSITION_TAG).contains(t));
    let bits = if v1 {
        open(
            data,
            GAME_TAG_V1,
            &GAME_CODECS,
            "game",
            codec.name(),
            &[check_byte(codec.model_hash())],
        )?
    } else {
        let checks = [check_byte(codec.model_hash()), context_check(codec, start)];
        open(data, GAME_TAG, &GAME_CODECS, "game", codec.name(), &checks)?
    };
    codec.decode(start, &bits)
}

/// Encodes a position as a position record.
///
/// # Errors
///
/// [`Error::Unrepresentable`] when the codec cannot write the position,
/// [`Error::UnknownCodec`] for a codec without a record id.
///
/// ```
/// use chesspack::{position, record};
///
/// let pos = position::parse_fen("8/8/8/4k3/8/8/8/4K2R w K - 0 1").unwrap();
/// let codec = position::codec("position-model").unwrap();
/// let bytes = record::encode_position(codec.as_ref(), &pos).unwrap();
/// let back = record::decode_position(codec.as_ref(), &bytes).unwrap();
/// assert_eq!(position::to_epd(&back), "8/8/8/4k3/8/8/8/4K2R w K -");
/// ```
pub fn encode_position(codec: &dyn PositionCodec, pos: &Chess) -> Result<Vec<u8>, Error> {
    let tag = POSITION_TAG + id_of(&POSITION_CODECS, codec.name())?;
    let bits = codec.encode(pos)?;
    Ok(seal(&[tag, position_check(codec.name())], &bits))
}

/// The name of the position codec that wrote a record.
///
/// # Errors
///
/// [`Error::InvalidData`] when `data` is not a position record.
pub fn position_codec_name(data: &[u8]) -> Result<&'static str, Error> {
    name_of(data, POSITION_TAG, &POSITION_CODECS, "position")
}

/// Decodes a position record written by `codec`.
///
/// # Errors
///
/// [`Error::InvalidData`] when `data` is not a record of `codec`, any error
/// of the codec's decoder.
pub fn decode_position(codec: &dyn PositionCodec, data: &[u8]) -> Result<Chess, Error> {
    let bits = open(
        data,
        POSITION_TAG,
        &POSITION_CODECS,
        "position",
        codec.name(),
        &[position_check(codec.name())],
    )?;
    codec.decode(&bits)
}

fn check_byte(hash: u64) -> u8 {
    (hash & 0xff) as u8
}

/// The context check of a game record: the start position (its EPD and
/// castling mode) and the codec's context.
fn context_check(codec: &dyn GameCodec, start: &Chess) -> u8 {
    let mut b = crate::position::to_epd(start).into_bytes();
    b.push(u8::from(
        start.castles().mode() == shakmaty::CastlingMode::Chess960,
    ));
    b.extend_from_slice(&codec.context_hash().to_le_bytes());
    check_byte(crate::hash::fnv1a(&b))
}

fn position_check(name: &str) -> u8 {
    if name == "position-model" {
        check_byte(PositionModel.model_hash())
    } else {
        0
    }
}

fn id_of(names: &[&str], name: &str) -> Result<u8, Error> {
    names
        .iter()
        .position(|&n| n == name)
        .map(|i| i as u8)
        .ok_or_else(|| Error::UnknownCodec(crate::error::cut(name)))
}

fn name_of(
    data: &[u8],
    base: u8,
    names: &[&'static str],
    kind: &str,
) -> Result<&'static str, Error> {
    let tag = *data
        .first()
        .ok_or_else(|| Error::InvalidData(format!("empty {kind} record")))?;
    tag.checked_sub(base)
        .and_then(|id| names.get(usize::from(id)))
        .copied()
        .ok_or_else(|| Error::InvalidData(format!("not a {kind} record (tag byte {tag:#04x})")))
}

/// The record: `head` (the tag and the checks), the bits, the end mark.
fn seal(head: &[u8], bits: &Bits) -> Vec<u8> {
    let mut w = BitWriter::new();
    for &b in head {
        w.write(u64::from(b), 8);
    }
    w.write_bits(bits);
    w.write_bit(true);
    let padded = w.len().next_multiple_of(8);
    w.write(0, (padded - w.len()) as u32);
    w.finish().as_bytes().to_vec()
}

fn open(
    data: &[u8],
    base: u8,
    names: &[&'static str],
    kind: &str,
    want: &str,
    checks: &[u8],
) -> Result<Bits, Error> {
    let name = name_of(data, base, names, kind)?;
    if name != want {
        return Err(Error::InvalidData(format!(
            "{kind} record of codec {name:?}, not {want:?}"
        )));
    }
    let (&last, body) = match data.get(1 + checks.len()..) {
        Some(rest) => rest
            .split_last()
            .ok_or_else(|| Error::InvalidData(format!("{kind} record has no end mark")))?,
        None => return Err(Error::Truncated),
    };
    let check = checks[0];
    if data[1] != check {
        return Err(Error::InvalidData(format!(
            "{kind} record was written with another model of {name:?} (check byte {:#04x}, this model's {check:#04x})",
            data[1]
        )));
    }
    if checks.get(1).is_some_and(|&c| data[2] != c) {
        return Err(Error::OtherContext);
    }
    if last == 0 {
        return Err(Error::InvalidData(format!("{kind} record has no end mark")));
    }
    let len = body.len() * 8 + 7 - last.trailing_zeros() as usize;
    let mut bytes = Vec::with_capacity(body.len() + 1);
    bytes.extend_from_slice(body);
    bytes.push(last);
    Bits::from_bytes(bytes, len)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{game, pgn, position};

    fn sample() -> (Chess, Vec<Move>) {
        let start = Chess::default();
        let moves =
            pgn::movetext_moves(b"1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 4. Ba4 Nf6 5. O-O *", &start)
                .unwrap();
        (start, moves)
    }

    #[test]
    fn ids_follow_the_codec_lists() {
        let games: Vec<_> = game::codecs().iter().map(|c| c.name()).collect();
        assert_eq!(games, GAME_CODECS);
        let positions: Vec<_> = position::codecs().iter().map(|c| c.name()).collect();
        assert_eq!(positions, POSITION_CODECS);
    }

    #[test]
    fn every_game_codec_round_trips() {
        let (start, moves) = sample();
        for codec in game::codecs() {
            let bytes = encode_game(codec.as_ref(), &start, &moves).unwrap();
            assert_eq!(game_codec_name(&bytes).unwrap(), codec.name());
            assert_eq!(decode_game(codec.as_ref(), &start, &bytes).unwrap(), moves);
        }
        // The empty game.
        let bytes = encode_game(&game::Index, &start, &[]).unwrap();
        assert!(
            decode_game(&game::Index, &start, &bytes)
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn golden_index_record() {
        // Version 2: tag 0x31 (index), model check 0, the context check
        // (the start position's), then the index stream and its end mark.
        let (start, moves) = sample();
        let bits = game::Index.encode(&start, &moves).unwrap();
        let bytes = encode_game(&game::Index, &start, &moves).unwrap();
        assert_eq!(&bytes[..2], &[0x31, 0x00]);
        assert_eq!(bytes.len(), 3 + (bits.len() + 1).div_ceil(8));
        let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(hex, "3100b4ad572b426e3e");
        // The same game's version 1 record still decodes.
        let v1 = [0x11, 0x00, 0xad, 0x57, 0x2b, 0x42, 0x6e, 0x3e];
        assert_eq!(game_codec_name(&v1).unwrap(), "index");
        assert_eq!(decode_game(&game::Index, &start, &v1).unwrap(), moves);
    }

    #[test]
    fn damaged_records_are_errors() {
        let (start, moves) = sample();
        let codec = game::codec("model").unwrap();
        let bytes = encode_game(codec.as_ref(), &start, &moves).unwrap();
        // Another model (check byte), another codec, no end mark, too short.
        let mut other = bytes.clone();
        other[1] ^= 1;
        assert!(
            decode_game(codec.as_ref(), &start, &other)
                .unwrap_err()
                .to_string()
                .contains("another model")
        );
        let mut ended = bytes.clone();
        *ended.last_mut().unwrap() = 0;
        assert!(decode_game(codec.as_ref(), &start, &ended).is_err());
        for n in 0..4 {
            assert!(decode_game(codec.as_ref(), &start, &bytes[..n]).is_err());
        }
        assert!(decode_game(&game::Index, &start, &bytes).is_err());
        // Garbage never panics.
        let mut x = 7u64;
        for _ in 0..2000 {
            let n = (crate::hash::xorshift(&mut x) % 40) as usize;
            let mut data: Vec<u8> = (0..n)
                .map(|_| crate::hash::xorshift(&mut x) as u8)
                .collect();
            if let Some(b) = data.first_mut() {
                *b = [0x10, 0x30][usize::from(*b & 1)] + (*b % 7);
            }
            if let Ok(name) = game_codec_name(&data) {
                if name.starts_with("engine") {
                    continue;
                }
                let c = game::codec(name).unwrap();
                if data.len() > 1 {
                    data[1] = check_byte(c.model_hash());
                }
                let _ = decode_game(c.as_ref(), &start, &data);
            }
        }
    }

    /// Issue 44: a game record decoded from another start or in another
    /// context (ratings, time control, clocks: the tags its writer had) is
    /// refused, not decoded to another game; in its own it decodes. Over
    /// random games and pairs of contexts, a wrong context gets through only
    /// where the 8-bit check collides (1 in 256), and then no game comes
    /// back that the test does not see.
    #[test]
    fn regression_issue_44_records_decode_only_in_their_context() {
        use crate::model::{GameContext, TimeControl};
        let mut x = 44u64;
        let context = |x: &mut u64| {
            let r = crate::hash::xorshift(x);
            let elo = |v: u64| (!v.is_multiple_of(3)).then_some(800 + (v % 1900) as u16);
            let mut c = GameContext::new()
                .with_ratings(elo(r), elo(r >> 16))
                .with_time_control(match (r >> 32) % 3 {
                    0 => None,
                    1 => Some(TimeControl::Unlimited),
                    _ => Some(TimeControl::Clock {
                        base: 60 * ((r >> 40) % 30) as u32,
                        increment: ((r >> 48) % 5) as u32,
                    }),
                });
            if r >> 60 == 0 {
                c = c.with_clocks(vec![Some(((r >> 8) % 600) as u32); 4]);
            }
            c
        };
        let starts = [
            Chess::default(),
            position::parse_fen("r3k2r/pppppppp/8/8/8/8/PPPPPPPP/R3K2R w KQkq - 0 1").unwrap(),
            position::parse_fen("4k3/1P4P1/8/3pP3/8/8/1p4p1/4K3 w - d6 0 1").unwrap(),
        ];
        let random_game = |start: &Chess, x: &mut u64| {
            let mut pos = start.clone();
            let mut moves = Vec::new();
            for _ in 0..(crate::hash::xorshift(x) % 40) {
                let legal = pos.legal_moves();
                if legal.is_empty() {
                    break;
                }
                let m = legal[(crate::hash::xorshift(x) % legal.len() as u64) as usize];
                pos.play_unchecked(m);
                moves.push(m);
            }
            moves
        };
        let model = game::codec("model").unwrap();
        let (mut refused, mut collided, mut trials) = (0, 0, 0);
        for i in 0..300 {
            let start = &starts[i % starts.len()];
            let moves = random_game(start, &mut x);
            let (a, b) = (context(&mut x), context(&mut x));
            let (in_a, in_b) = (model.in_context(&a), model.in_context(&b));
            let bytes = encode_game(in_a.as_ref(), start, &moves).unwrap();
            assert_eq!(decode_game(in_a.as_ref(), start, &bytes).unwrap(), moves);
            // Another start: refused, whatever the codec.
            let other = &starts[(i + 1) % starts.len()];
            assert_eq!(
                decode_game(in_a.as_ref(), other, &bytes),
                Err(Error::OtherContext)
            );
            let index = encode_game(&game::Index, start, &moves).unwrap();
            assert_eq!(
                decode_game(&game::Index, other, &index),
                Err(Error::OtherContext)
            );
            if a == b {
                continue;
            }
            trials += 1;
            match decode_game(in_b.as_ref(), start, &bytes) {
                Err(Error::OtherContext) => refused += 1,
                _ => {
                    assert_eq!(
                        context_check(in_a.as_ref(), start),
                        context_check(in_b.as_ref(), start)
                    );
                    collided += 1;
                }
            }
        }
        assert!(
            trials > 200 && refused + collided == trials,
            "{refused} {collided} {trials}"
        );
        assert!(collided <= 4, "{collided} of {trials}");
    }

    /// A record of weights that a retrained model replaced (here
    /// 1f35452aa3620076, check byte 0x76) is refused, with no context and
    /// in one: until the first release the library keeps no earlier
    /// weights.
    #[test]
    fn regression_issue_26_records_of_earlier_models_are_refused() {
        use crate::model::{GameContext, TimeControl};
        let start = Chess::default();
        let codec = game::codec("model").unwrap();
        let ctx = GameContext::new()
            .with_ratings(Some(1200), Some(1350))
            .with_time_control(Some(TimeControl::Clock {
                base: 300,
                increment: 3,
            }));
        let in_context = codec.in_context(&ctx);
        for (c, hex) in [
            (codec.as_ref(), "1576a043c4ecb018"),
            (in_context.as_ref(), "15768d154dd4153ea6736f4b"),
        ] {
            let data = crate::bits::Bits::from_hex(hex, hex.len() * 4).unwrap();
            assert!(decode_game(c, &start, data.as_bytes()).is_err(), "{hex}");
        }
        let data = [
            0x15, 0x76, 0x8d, 0x15, 0x4d, 0xd4, 0x15, 0x3e, 0xa6, 0x73, 0x6f, 0x4b,
        ];
        assert!(decode_game(game::codec("fast").unwrap().as_ref(), &start, &data).is_err());
    }

    #[test]
    fn positions_round_trip() {
        let pos = position::parse_fen("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1").unwrap();
        for codec in position::codecs() {
            let bytes = encode_position(codec.as_ref(), &pos).unwrap();
            assert_eq!(position_codec_name(&bytes).unwrap(), codec.name());
            let back = decode_position(codec.as_ref(), &bytes).unwrap();
            assert_eq!(position::to_epd(&back), position::to_epd(&pos));
            assert!(game_codec_name(&bytes).is_err());
        }
    }
}
