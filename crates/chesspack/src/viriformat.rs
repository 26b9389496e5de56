//! viriformat and marlinformat: the training data of the viridithas and
//! Black Marlin engines (read by the bullet trainer), read and written by
//! chesspack's own implementation (tested against the `viriformat`
//! crate's).
//!
//! A marlinformat position is 32 bytes: the occupied squares (u64), a
//! 4-bit code per occupied square in square order (the piece type from the
//! pawn, 0, to the king, 5; 6 a rook that may still castle; bit 3 set for
//! black), the side to move (top bit) and en-passant square (64: none),
//! the 50-move counter (u8), the move number (u16), a score (i16), the
//! result (0 black wins, 1 draw, 2 white wins) and a spare byte. A
//! viriformat file is games: each a marlinformat start position, then
//! (move, score) pairs of u16 and i16 and four zero bytes. A move is its
//! origin and target squares (6 bits each; castling as the king onto its
//! rook), the promotion piece (2 bits from the knight) and its type (2
//! bits: 1 en passant, 2 castling, 3 promotion). Scores are White's. All
//! integers little-endian.
//!
//! chesspack keeps these as binpack chains ([`crate::binpack`]): a game is
//! a chain, its scores and result turned to the side to move's, its move
//! number to a ply. [`read_games`] accepts only what comes back byte for
//! byte from that ([`write_game`]), and names the game where it does not.

use std::num::NonZeroU32;

use shakmaty::{
    Bitboard, Board, CastlingMode, Chess, Color, EnPassantMode, FromSetup, Move, Position, Role,
    Setup, Square,
};

use crate::{
    Error,
    binpack::{MoveKind, PlainEntry, move_fields},
};

/// Bytes of a marlinformat position.
pub(crate) const BOARD: usize = 32;
/// Piece code of a rook that may still castle.
const UNMOVED_ROOK: u8 = 6;

/// One viriformat game: where it starts, its result, and each move with
/// White's score of the position it is played from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Game {
    pub(crate) start: Chess,
    /// 0 black wins, 1 draw, 2 white wins.
    pub(crate) wdl: u8,
    pub(crate) moves: Vec<Move>,
    pub(crate) scores: Vec<i16>,
}

/// The marlinformat bytes of `pos` with White's score `score` and the
/// result `wdl` (the spare byte 0). The en-passant square is written where
/// a pawn of the side to move stands beside the pawn that just moved two
/// squares, as viridithas's boards keep it.
pub(crate) fn pack_board(pos: &Chess, score: i16, wdl: u8) -> [u8; BOARD] {
    let board = pos.board();
    let occupied = board.occupied();
    let castles = pos.castles().castling_rights();
    let mut out = [0u8; BOARD];
    out[..8].copy_from_slice(&occupied.0.to_le_bytes());
    for (i, sq) in occupied.into_iter().enumerate() {
        let piece = board.piece_at(sq).expect("occupied");
        let mut code = piece.role as u8 - 1;
        if piece.role == Role::Rook && castles.contains(sq) {
            code = UNMOVED_ROOK;
        }
        code |= u8::from(piece.color.is_black()) << 3;
        out[8 + i / 2] |= if i % 2 == 0 { code } else { code << 4 };
    }
    let ep = pos
        .ep_square(EnPassantMode::PseudoLegal)
        .map_or(64, u8::from);
    out[24] = u8::from(pos.turn().is_black()) << 7 | ep;
    out[25] = pos.halfmoves().min(255) as u8;
    out[26..28]
        .copy_from_slice(&(pos.fullmoves().get().min(u32::from(u16::MAX)) as u16).to_le_bytes());
    out[28..30].copy_from_slice(&score.to_le_bytes());
    out[30] = wdl;
    out
}

/// The position of marlinformat bytes, its score, result and spare byte.
///
/// # Errors
///
/// [`Error::InvalidPosition`]: a piece code of 7, more than 32 pieces, a
/// move number of 0, a result other than 0, 1 or 2, or a position
/// shakmaty refuses (castling other than standard chess's among them).
pub(crate) fn unpack_board(b: &[u8; BOARD]) -> Result<(Chess, i16, u8, u8), Error> {
    let bad = |why: &str| Error::InvalidPosition(why.to_owned());
    let occupied = Bitboard(u64::from_le_bytes(b[..8].try_into().expect("8 bytes")));
    if occupied.count() > 32 {
        return Err(bad("more than 32 pieces"));
    }
    let mut board = Board::empty();
    let mut castles = Bitboard::EMPTY;
    for (i, sq) in occupied.into_iter().enumerate() {
        let byte = b[8 + i / 2];
        let code = if i % 2 == 0 { byte & 15 } else { byte >> 4 };
        let color = Color::from_white(code & 8 == 0);
        let role = match code & 7 {
            UNMOVED_ROOK => {
                castles.add(sq);
                Role::Rook
            }
            7 => return Err(bad("piece code 7")),
            t => Role::ALL[usize::from(t)],
        };
        board.set_piece_at(sq, role.of(color));
    }
    let ep = match b[24] & 0x7f {
        64 => None,
        sq @ 0..64 => Some(Square::new(u32::from(sq))),
        _ => return Err(bad("en-passant square out of range")),
    };
    let fullmoves = NonZeroU32::new(u32::from(u16::from_le_bytes([b[26], b[27]])))
        .ok_or_else(|| bad("move number 0 (chesspack keeps the ply, which needs it)"))?;
    let wdl = b[30];
    if wdl > 2 {
        return Err(bad("a result other than 0, 1 or 2"));
    }
    let setup = Setup {
        board,
        promoted: Bitboard::EMPTY,
        pockets: None,
        turn: Color::from_white(b[24] & 0x80 == 0),
        castling_rights: castles,
        ep_square: ep,
        remaining_checks: None,
        halfmoves: u32::from(b[25]),
        fullmoves,
    };
    let pos = Chess::from_setup(setup, CastlingMode::Standard)
        .map_err(|e| Error::InvalidPosition(e.to_string()))?;
    Ok((pos, i16::from_le_bytes([b[28], b[29]]), wdl, b[31]))
}

/// A move as viriformat packs it.
pub(crate) fn pack_move(m: Move) -> u16 {
    let (kind, from, to, promo) = move_fields(m);
    let kind = match kind {
        MoveKind::Normal => 0,
        MoveKind::EnPassant => 1,
        MoveKind::Castle => 2,
        MoveKind::Promotion => 3,
    };
    u16::from(from) | u16::from(to) << 6 | promo << 12 | kind << 14
}

/// The games of a viriformat file.
///
/// # Errors
///
/// [`Error::InvalidData`] naming the game (from 1) and its byte offset: a
/// truncated game, a bad start position, an illegal move, a game without
/// moves (a binpack chain has at least one), or a game that would not come
/// back byte for byte from [`write_game`] (a score or spare byte in its
/// start position, an en-passant square viridithas would not write,
/// promotion bits on a move that is not a promotion).
pub(crate) fn read_games(data: &[u8]) -> Result<Vec<Game>, Error> {
    let mut games = Vec::new();
    let mut at = 0;
    let mut written = Vec::new();
    while at < data.len() {
        let n = games.len() + 1;
        let err =
            |why: String| Error::InvalidData(format!("viriformat game {n} (byte {at}): {why}"));
        let head: &[u8; BOARD] = data
            .get(at..at + BOARD)
            .and_then(|s| s.try_into().ok())
            .ok_or_else(|| err("truncated start position".into()))?;
        let (start, _, wdl, _) = unpack_board(head).map_err(|e| err(e.to_string()))?;
        // The start as chesspack keeps it (a binpack stem: en passant
        // where a capture is legal).
        let start = Chess::from_setup(start.to_setup(EnPassantMode::Legal), CastlingMode::Standard)
            .map_err(|e| err(e.to_string()))?;
        let mut pos = start.clone();
        let (mut moves, mut scores) = (Vec::new(), Vec::new());
        let mut p = at + BOARD;
        loop {
            let pair = data
                .get(p..p + 4)
                .ok_or_else(|| err(format!("truncated at ply {}", moves.len() + 1)))?;
            p += 4;
            if pair == [0; 4] {
                break;
            }
            let raw = u16::from_le_bytes([pair[0], pair[1]]);
            let m = pos
                .legal_moves()
                .into_iter()
                .find(|&m| pack_move(m) == raw)
                .ok_or_else(|| {
                    err(format!(
                        "ply {}: move {raw:#06x} is not legal",
                        moves.len() + 1
                    ))
                })?;
            pos.play_unchecked(m);
            moves.push(m);
            scores.push(i16::from_le_bytes([pair[2], pair[3]]));
        }
        if moves.is_empty() {
            return Err(err("no moves (a binpack chain holds at least one)".into()));
        }
        let game = Game {
            start,
            wdl,
            moves,
            scores,
        };
        written.clear();
        write_game(&game, &mut written);
        if let Some(k) = written.iter().zip(&data[at..p]).position(|(a, b)| a != b) {
            return Err(err(format!(
                "byte {k} would not come back the same ({:#04x}, not {:#04x}): chesspack writes a start position's score and spare byte as 0, the en-passant square where an enemy pawn stands beside the pawn that moved, and no promotion bits on other moves",
                written[k],
                data[at + k]
            )));
        }
        games.push(game);
        at = p;
    }
    Ok(games)
}

/// Appends the viriformat bytes of `game`.
pub(crate) fn write_game(game: &Game, out: &mut Vec<u8>) {
    out.extend_from_slice(&pack_board(&game.start, 0, game.wdl));
    for (&m, &s) in game.moves.iter().zip(&game.scores) {
        out.extend_from_slice(&pack_move(m).to_le_bytes());
        out.extend_from_slice(&s.to_le_bytes());
    }
    out.extend_from_slice(&[0; 4]);
}

/// The binpack entries of `games`, one chain each: scores and results
/// turned to the side to move's, the ply from the move number.
///
/// # Errors
///
/// [`Error::InvalidData`] naming the game whose ply is beyond a binpack's
/// 14 bits.
pub(crate) fn entries_of(games: &[Game]) -> Result<Vec<PlainEntry>, Error> {
    let mut out = Vec::with_capacity(games.iter().map(|g| g.moves.len()).sum());
    for (n, g) in games.iter().enumerate() {
        let ply = (g.start.fullmoves().get() - 1) * 2 + u32::from(g.start.turn().is_black());
        if ply + g.moves.len() as u32 >= 1 << 14 {
            return Err(Error::InvalidData(format!(
                "viriformat game {}: ply {ply} is beyond a binpack's",
                n + 1
            )));
        }
        let mut pos = g.start.clone();
        let white_result = i16::from(g.wdl) - 1;
        for (i, (&m, &s)) in g.moves.iter().zip(&g.scores).enumerate() {
            let white = pos.turn().is_white();
            out.push(PlainEntry {
                pos: pos.clone(),
                mv: m,
                score: if white { s } else { s.wrapping_neg() },
                ply: (ply + i as u32) as u16,
                result: if white { white_result } else { -white_result },
                new_chain: i == 0,
            });
            pos.play_unchecked(m);
        }
    }
    Ok(out)
}

/// The viriformat game of a binpack chain (its stem and plies), or why it
/// has none: a result the format cannot hold.
pub(crate) fn game_of(chain: &crate::binpack::Chain) -> Result<Game, Error> {
    let stm_result = match chain.result & 3 {
        0 => 0,
        1 => -1,
        2 => 1,
        _ => return Err(Error::InvalidData("a result of -2".into())),
    };
    let white = chain.pos.turn().is_white();
    let white_result = if white { stm_result } else { -stm_result };
    let mut pos = chain.pos.clone();
    let mut scores = Vec::with_capacity(chain.scores.len());
    for (&m, &s) in chain.moves.iter().zip(&chain.scores) {
        scores.push(if pos.turn().is_white() {
            s
        } else {
            s.wrapping_neg()
        });
        pos.play_unchecked(m);
    }
    // The move number from the stem's ply, as the binpack keeps it.
    let mut setup = chain.pos.to_setup(EnPassantMode::Always);
    setup.fullmoves = NonZeroU32::new(u32::from(chain.ply / 2) + 1).expect("at least 1");
    let start = Chess::from_setup(setup, CastlingMode::Standard)
        .map_err(|e| Error::InvalidPosition(e.to_string()))?;
    Ok(Game {
        start,
        wdl: (white_result + 1) as u8,
        moves: chain.moves.clone(),
        scores,
    })
}

/// Appends the marlinformat positions of `game`: one for each move, with
/// its score and the game's result, as viriformat's own splitting writes
/// them.
pub(crate) fn write_positions(game: &Game, out: &mut Vec<u8>) {
    let mut pos = game.start.clone();
    for (&m, &s) in game.moves.iter().zip(&game.scores) {
        out.extend_from_slice(&pack_board(&pos, s, game.wdl));
        pos.play_unchecked(m);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The example game of viriformat's specification (its README), White
    /// winning by e4 e5 Qh5 Ke7 Qxe5 mate. The README's dump writes the
    /// piece codes high nibble first (`6124 5216`: rook, knight, …); its
    /// code, the reference, and the `viriformat` crate's tests
    /// (`tests/it/training.rs`) put the first square's code in the low
    /// nibble, as here.
    const SPEC_EXAMPLE: &str = "ffff0000 0000ffff 16422561 00000000 88888888 9ecaade9 40 00 0100 0000 02 00 \
                                0c070a00 34091400 c309e2ff 3c0dff7f 2709ff7f 00000000";

    fn spec_bytes() -> Vec<u8> {
        let hex: String = SPEC_EXAMPLE.split_whitespace().collect();
        (0..hex.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
            .collect()
    }

    #[test]
    fn the_specification_example_reads_and_writes_back() {
        let bytes = spec_bytes();
        let games = read_games(&bytes).unwrap();
        assert_eq!(games.len(), 1);
        let g = &games[0];
        assert_eq!(g.start, Chess::default());
        assert_eq!(g.wdl, 2);
        let san: Vec<String> = {
            let mut pos = g.start.clone();
            g.moves
                .iter()
                .map(|&m| {
                    let s = shakmaty::san::San::from_move(&pos, m).to_string();
                    pos.play_unchecked(m);
                    s
                })
                .collect()
        };
        assert_eq!(san, ["e4", "e5", "Qh5", "Ke7", "Qxe5"]);
        assert_eq!(g.scores, [10, 20, -30, 32767, 32767]);
        let mut back = Vec::new();
        write_game(g, &mut back);
        assert_eq!(back, bytes);
    }

    #[test]
    fn castling_en_passant_and_promotion_pack_as_the_specification_says() {
        let pos: Chess =
            crate::position::parse_fen("r3k2r/1P6/8/3pP3/8/8/8/R3K2R w KQkq d6 0 1").unwrap();
        let find = |uci: &str| {
            uci.parse::<shakmaty::uci::UciMove>()
                .unwrap()
                .to_move(&pos)
                .unwrap()
        };
        // e1g1: the king onto the h1 rook (7), castling type 2.
        assert_eq!(pack_move(find("e1g1")), 4 | 7 << 6 | 2 << 14);
        assert_eq!(pack_move(find("e5d6")), 36 | 43 << 6 | 1 << 14);
        assert_eq!(pack_move(find("b7a8q")), 49 | 56 << 6 | 3 << 12 | 3 << 14);
        assert_eq!(pack_move(find("b7b8n")), 49 | 57 << 6 | 3 << 14);
        let packed = pack_board(&pos, -5, 1);
        // Rooks that may castle are code 6; d6 is the en-passant square.
        assert_eq!(packed[8] & 15, UNMOVED_ROOK);
        assert_eq!(packed[24], 43);
        let (back, score, wdl, extra) = unpack_board(&packed).unwrap();
        assert_eq!((back, score, wdl, extra), (pos, -5, 1, 0));
    }

    #[test]
    fn bad_games_name_the_game_and_byte() {
        let mut bytes = spec_bytes();
        bytes.extend_from_slice(&spec_bytes()[..40]);
        let e = read_games(&bytes).unwrap_err().to_string();
        assert!(
            e.contains("game 2 (byte 56)") && e.contains("truncated"),
            "{e}"
        );
        let mut bytes = spec_bytes();
        bytes[32] = 0x0d; // e2e4 → f2e4: not a move.
        let e = read_games(&bytes).unwrap_err().to_string();
        assert!(e.contains("game 1") && e.contains("ply 1"), "{e}");
        let mut bytes = spec_bytes();
        bytes[28] = 7; // a score in the start position
        let e = read_games(&bytes).unwrap_err().to_string();
        assert!(e.contains("would not come back"), "{e}");
        let mut bytes = spec_bytes();
        bytes[30] = 3;
        assert!(read_games(&bytes).is_err());
        assert!(read_games(&spec_bytes()[..32]).is_err());
        let mut no_moves = spec_bytes()[..32].to_vec();
        no_moves.extend_from_slice(&[0; 4]);
        assert!(
            read_games(&no_moves)
                .unwrap_err()
                .to_string()
                .contains("no moves")
        );
    }

    #[test]
    fn a_game_becomes_a_chain_and_back() {
        let games = read_games(&spec_bytes()).unwrap();
        let entries = entries_of(&games).unwrap();
        assert_eq!(entries.len(), 5);
        // Black's scores and results are its own.
        assert_eq!(
            entries
                .iter()
                .map(|e| (e.score, e.result, e.ply))
                .collect::<Vec<_>>(),
            [
                (10, 1, 0),
                (-20, -1, 1),
                (-30, 1, 2),
                (-32767, -1, 3),
                (32767, 1, 4)
            ]
        );
        let binpack = crate::binpack::binpack_of(&entries);
        let chunk = &binpack[8..];
        let items = crate::binpack::parse_chunk(chunk);
        let [crate::binpack::Item::Chain(chain, _)] = &items[..] else {
            panic!("one chain: {items:?}");
        };
        assert_eq!(game_of(chain).unwrap(), games[0]);
    }
}
