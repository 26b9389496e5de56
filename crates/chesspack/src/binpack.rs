//! Stockfish's `.binpack` training data, read and written by chesspack's own
//! implementation (tested against the `sfbinpack` crate's).
//!
//! A binpack is a sequence of chunks (`BINP`, the chunk's size as a u32 LE,
//! the chunk's bytes). A chunk holds chains: a 32-byte stem (the packed
//! position, its move, score, ply and result, and the 50-move counter), a
//! ply count (u16 BE) and that many more plies as movetext, whose bits give
//! each move as the index of the moving piece and of its destination among
//! pseudo-legal ones, and each score as the change from the negated previous
//! score in a variable-length code.
//!
//! [`parse_chunk`] cuts a chunk into [`Item`]s: chains it can read and write
//! back to the same bytes ([`Chain`]), and bytes it keeps as they are
//! (chains it cannot read or would not write back the same, and whatever
//! follows a chain it cannot find the end of). [`Chain::write`] writes a
//! chain; [`Chain::entries`] gives its positions with their move, score, ply
//! and result.

use shakmaty::{
    Bitboard, Board, CastlingMode, Chess, Color, EnPassantMode, FromSetup, Move, Position, Rank,
    Role, Setup, Square, attacks,
};

use crate::Error;

/// The bytes that open every chunk.
pub(crate) const CHUNK_MAGIC: &[u8; 4] = b"BINP";
/// A stem's size in bytes.
const STEM: usize = 32;

/// A chain that writes back to the bytes it was read from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Chain {
    /// The stem's position, as packed (its en-passant square is the stem's,
    /// even where no capture is legal).
    pub(crate) pos: Chess,
    /// The stem's ply (14 bits).
    pub(crate) ply: u16,
    /// The stem's result field (2 bits: 0 draw, 1 loss, 2 win, 3 -2).
    pub(crate) result: u8,
    /// The stem's 50-move counter.
    pub(crate) rule50: u16,
    /// The stem's move, then each later ply's.
    pub(crate) moves: Vec<Move>,
    /// The score of each move's position.
    pub(crate) scores: Vec<i16>,
}

/// A piece of a chunk.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Item<'a> {
    /// A chain, and its bytes.
    Chain(Chain, &'a [u8]),
    /// Bytes kept as they are.
    Raw(&'a [u8]),
}

/// Splits a binpack into its chunks' bytes.
#[cfg(test)]
pub(crate) fn chunks(data: &[u8]) -> Result<Vec<&[u8]>, Error> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < data.len() {
        let head = data
            .get(at..at + 8)
            .ok_or_else(|| Error::InvalidData(format!("chunk {}: truncated header", out.len())))?;
        if &head[..4] != CHUNK_MAGIC {
            return Err(Error::InvalidData(format!(
                "chunk {}: no BINP magic at byte {at}",
                out.len()
            )));
        }
        let size = crate::le::u32_at(head, 4) as usize;
        let body = data.get(at + 8..at + 8 + size).ok_or_else(|| {
            Error::InvalidData(format!(
                "chunk {}: {size} bytes announced, {} there",
                out.len(),
                data.len() - at - 8
            ))
        })?;
        out.push(body);
        at += 8 + size;
    }
    Ok(out)
}

/// Appends a chunk holding `body` to `out`.
pub(crate) fn write_chunk(body: &[u8], out: &mut Vec<u8>) -> Result<(), Error> {
    let size = u32::try_from(body.len())
        .map_err(|_| Error::InvalidData("binpack chunk over 4 GiB".into()))?;
    out.extend_from_slice(CHUNK_MAGIC);
    out.extend_from_slice(&size.to_le_bytes());
    out.extend_from_slice(body);
    Ok(())
}

/// Cuts a chunk into chains and raw bytes, in order.
pub(crate) fn parse_chunk(chunk: &[u8]) -> Vec<Item<'_>> {
    let mut items = Vec::new();
    let mut at = 0;
    let mut written = Vec::new();
    // The reference reader reads a chain wherever a stem and a count fit.
    while at + STEM + 2 <= chunk.len() {
        match read_chain(&chunk[at..]) {
            Ok((chain, len)) => {
                let bytes = &chunk[at..at + len];
                written.clear();
                chain.write(&mut written);
                if written == bytes {
                    items.push(Item::Chain(chain, bytes));
                } else {
                    items.push(Item::Raw(bytes));
                }
                at += len;
            }
            Err(_) => break,
        }
    }
    if at < chunk.len() {
        items.push(Item::Raw(&chunk[at..]));
    }
    items
}

/// Reads the chain at the start of `data`: the chain and its length.
pub(crate) fn read_chain(data: &[u8]) -> Result<(Chain, usize), Error> {
    let stem = data.get(..STEM).ok_or(Error::Truncated)?;
    let (pos, first) = unpack_stem(stem)?;
    let score = unsigned_to_signed(u16::from_be_bytes([stem[26], stem[27]]));
    let pr = u16::from_be_bytes([stem[28], stem[29]]);
    let rule50 = u16::from_be_bytes([stem[30], stem[31]]);
    let count = data
        .get(STEM..STEM + 2)
        .map(|c| u16::from_be_bytes([c[0], c[1]]))
        .ok_or(Error::Truncated)?;
    let mut moves = Vec::with_capacity(usize::from(count) + 1);
    let mut scores = Vec::with_capacity(usize::from(count) + 1);
    moves.push(first);
    scores.push(score);
    let text = &data[STEM + 2..];
    let mut bits = BitReader { data: text, at: 0 };
    let mut p = pos.clone();
    let mut last = score;
    for ply in 0..count {
        p.play_unchecked(*moves.last().expect("a move"));
        let m = read_move(&p, &mut bits)
            .map_err(|e| Error::InvalidData(format!("movetext ply {}: {e}", ply + 1)))?;
        let delta = unsigned_to_signed(bits.read_vle16()?);
        let s = last.wrapping_neg().wrapping_add(delta);
        moves.push(m);
        scores.push(s);
        last = s;
    }
    let len = STEM + 2 + bits.at.div_ceil(8);
    Ok((
        Chain {
            pos,
            ply: pr & 0x3FFF,
            result: (pr >> 14) as u8,
            rule50,
            moves,
            scores,
        },
        len,
    ))
}

impl Chain {
    /// Appends the chain's bytes (stem, count, movetext) to `out`.
    pub(crate) fn write(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&pack_position(&self.pos));
        out.extend_from_slice(&pack_move(self.moves[0]).to_be_bytes());
        out.extend_from_slice(&signed_to_unsigned(self.scores[0]).to_be_bytes());
        let pr = (self.ply & 0x3FFF) | u16::from(self.result & 3) << 14;
        out.extend_from_slice(&pr.to_be_bytes());
        out.extend_from_slice(&self.rule50.to_be_bytes());
        let count = self.moves.len() - 1;
        out.extend_from_slice(&(count as u16).to_be_bytes());
        let mut bits = BitWriter { out, used: 0 };
        let mut p = self.pos.clone();
        for i in 1..self.moves.len() {
            p.play_unchecked(self.moves[i - 1]);
            write_move(&p, self.moves[i], &mut bits);
            let delta = self.scores[i].wrapping_sub(self.scores[i - 1].wrapping_neg());
            bits.write_vle16(signed_to_unsigned(delta));
        }
    }
}

/// One position of nnue-pytorch's `.plain` text.
#[derive(Clone, Debug)]
pub(crate) struct PlainEntry {
    pub(crate) pos: Chess,
    pub(crate) mv: Move,
    pub(crate) score: i16,
    pub(crate) ply: u16,
    pub(crate) result: i16,
    /// Whether the entry starts a chain whatever came before (a game of
    /// viriformat; `.plain` entries follow on where they can).
    pub(crate) new_chain: bool,
}

/// The entries of a `.plain` text (`fen`, `move`, `score`, `ply`, `result`
/// lines, each entry ended by `e`); errors name the line.
pub(crate) fn parse_plain(text: &str) -> Result<Vec<PlainEntry>, Error> {
    let mut out = Vec::new();
    let (mut fen, mut mv, mut score, mut ply, mut result) = (None, None, None, None, None);
    for (i, line) in text.lines().enumerate() {
        let bad = |why: &str| Error::InvalidData(format!("line {}: {why}: {line:?}", i + 1));
        let line = line.trim_end_matches('\r');
        if line.trim().is_empty() {
            continue;
        }
        let (key, value) = line.split_once(' ').unwrap_or((line, ""));
        match key {
            "fen" => {
                let pos = crate::position::parse_fen(value).map_err(|e| bad(&e.to_string()))?;
                fen = Some(pos);
            }
            "move" => mv = Some((value.trim().to_owned(), i + 1)),
            "score" => score = Some(value.trim().parse::<i16>().map_err(|_| bad("bad score"))?),
            "ply" => ply = Some(value.trim().parse::<u16>().map_err(|_| bad("bad ply"))?),
            "result" => result = Some(value.trim().parse::<i16>().map_err(|_| bad("bad result"))?),
            "e" => {
                let (Some(pos), Some((uci, at)), Some(score), Some(ply), Some(result)) = (
                    fen.take(),
                    mv.take(),
                    score.take(),
                    ply.take(),
                    result.take(),
                ) else {
                    return Err(bad(
                        "an entry without all of fen, move, score, ply and result",
                    ));
                };
                if ply >= 1 << 14 || !(-2..=1).contains(&result) {
                    return Err(bad("ply or result out of the binpack's range"));
                }
                let m = uci
                    .parse::<shakmaty::uci::UciMove>()
                    .ok()
                    .and_then(|u| u.to_move(&pos).ok())
                    .ok_or_else(|| {
                        Error::InvalidData(format!("line {at}: not a legal move: {uci:?}"))
                    })?;
                out.push(PlainEntry {
                    pos,
                    mv: m,
                    score,
                    ply,
                    result,
                    new_chain: false,
                });
            }
            _ => return Err(bad("unknown line")),
        }
    }
    if fen.is_some() || mv.is_some() {
        return Err(Error::InvalidData("the last entry has no `e` line".into()));
    }
    Ok(out)
}

/// The binpack of `entries`, as the reference writer cuts it: an entry
/// that continues the previous one (the position after its move, the next
/// ply, the result negated) extends its chain; a chunk ends before the
/// first stem after 1 MiB.
pub(crate) fn binpack_of(entries: &[PlainEntry]) -> Vec<u8> {
    const CHUNK: usize = 1 << 20;
    let fen = |p: &Chess| shakmaty::fen::Fen::from_position(p, EnPassantMode::Legal).to_string();
    let mut out = Vec::new();
    let mut body = Vec::new();
    let mut chain: Option<Chain> = None;
    let mut last: Option<(&PlainEntry, String)> = None;
    for e in entries {
        let continues = !e.new_chain
            && last.as_ref().is_some_and(|(prev, after)| {
                prev.result == -e.result
                    && prev.ply.wrapping_add(1) == e.ply
                    && *after == fen(&e.pos)
            });
        if continues {
            let c = chain.as_mut().expect("a chain");
            c.moves.push(e.mv);
            c.scores.push(e.score);
        } else {
            if let Some(c) = chain.take() {
                c.write(&mut body);
            }
            if body.len() >= CHUNK {
                write_chunk(&body, &mut out).expect("a chunk under 4 GiB");
                body.clear();
            }
            let mut pos = e.pos.clone();
            // The stem's clocks: its ply and 50-move counter.
            let mut setup = pos.to_setup(EnPassantMode::Legal);
            setup.fullmoves =
                std::num::NonZeroU32::new(u32::from(e.ply / 2) + 1).expect("at least 1");
            if let Ok(p) = Chess::from_setup(setup, CastlingMode::Standard) {
                pos = p;
            }
            chain = Some(Chain {
                rule50: pos.halfmoves().min(u32::from(u16::MAX)) as u16,
                pos,
                ply: e.ply,
                result: (signed_to_unsigned(e.result) & 3) as u8,
                moves: vec![e.mv],
                scores: vec![e.score],
            });
        }
        let mut after = e.pos.clone();
        after.play_unchecked(e.mv);
        last = Some((e, fen(&after)));
    }
    if let Some(c) = chain.take() {
        c.write(&mut body);
    }
    if !body.is_empty() {
        write_chunk(&body, &mut out).expect("a chunk under 4 GiB");
    }
    out
}

/// The stem's position and move.
fn unpack_stem(stem: &[u8]) -> Result<(Chess, Move), Error> {
    let pr = u16::from_be_bytes([stem[28], stem[29]]);
    let rule50 = u16::from_be_bytes([stem[30], stem[31]]);
    let pos = unpack_position(&stem[..24], pr & 0x3FFF, rule50)?;
    let mv = unpack_move(&pos, u16::from_be_bytes([stem[24], stem[25]]))?;
    Ok((pos, mv))
}

/// The position packed in `packed` (24 bytes), with a stem's ply and
/// 50-move counter.
pub(crate) fn unpack_position(packed: &[u8], ply: u16, rule50: u16) -> Result<Chess, Error> {
    let stem = packed.get(..24).ok_or(Error::Truncated)?;
    let occupied = Bitboard(u64::from_be_bytes(stem[..8].try_into().expect("8 bytes")));
    if occupied.count() > 32 {
        return Err(Error::InvalidPosition("more than 32 pieces".into()));
    }
    let mut board = Board::empty();
    let mut castles = Bitboard::EMPTY;
    let mut ep = None;
    let mut turn = Color::White;
    for (i, sq) in occupied.into_iter().enumerate() {
        let byte = stem[8 + i / 2];
        let nibble = if i % 2 == 0 { byte & 15 } else { byte >> 4 };
        let piece = match nibble {
            0..=11 => Role::ALL[usize::from(nibble >> 1)].of(Color::from_white(nibble & 1 == 0)),
            12 => {
                if sq.rank() == Rank::Fourth {
                    ep = sq.offset(-8);
                    Color::White.pawn()
                } else {
                    ep = sq.offset(8);
                    Color::Black.pawn()
                }
            }
            13 | 14 => {
                let color = Color::from_white(nibble == 13);
                castles.add(match (color, sq == color.fold_wb(Square::A1, Square::A8)) {
                    (_, true) => sq,
                    (c, false) => c.fold_wb(Square::H1, Square::H8),
                });
                color.rook()
            }
            _ => {
                turn = Color::Black;
                Color::Black.king()
            }
        };
        board.set_piece_at(sq, piece);
    }
    let setup = Setup {
        board,
        promoted: Bitboard::EMPTY,
        pockets: None,
        turn,
        castling_rights: castles,
        ep_square: ep,
        remaining_checks: None,
        halfmoves: u32::from(rule50),
        fullmoves: std::num::NonZeroU32::new(u32::from(ply / 2) + 1).expect("at least 1"),
    };
    Chess::from_setup(setup, CastlingMode::Standard)
        .map_err(|e| Error::InvalidPosition(format!("stem: {e}")))
}

/// The 24 bytes of a packed position.
pub(crate) fn pack_position(pos: &Chess) -> [u8; 24] {
    let board = pos.board();
    let occupied = board.occupied();
    let mut out = [0; 24];
    out[..8].copy_from_slice(&occupied.0.to_be_bytes());
    let ep = pos.ep_square(EnPassantMode::Always);
    let castles = pos.castles().castling_rights();
    for (i, sq) in occupied.into_iter().enumerate() {
        let piece = board.piece_at(sq).expect("occupied");
        let mut nibble = (piece.role as u8 - 1) << 1 | u8::from(piece.color.is_black());
        if piece.role == Role::Pawn
            && ep.is_some_and(|ep| sq.offset(piece.color.fold_wb(-8, 8)) == Some(ep))
            && sq.rank() == piece.color.fold_wb(Rank::Fourth, Rank::Fifth)
        {
            nibble = 12;
        } else if piece.role == Role::Rook && castles.contains(sq) {
            nibble = piece.color.fold_wb(13, 14);
        } else if piece == Color::Black.king() && pos.turn() == Color::Black {
            nibble = 15;
        }
        out[8 + i / 2] |= if i % 2 == 0 { nibble } else { nibble << 4 };
    }
    out
}

/// What the training formats' packed moves hold of a move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MoveKind {
    Normal,
    Promotion,
    Castle,
    EnPassant,
}

/// A move's kind, origin, target (a castling king's rook) and promotion
/// piece counted from the knight (0 when none), as binpack and viriformat
/// pack them.
pub(crate) fn move_fields(m: Move) -> (MoveKind, Square, Square, u16) {
    match m {
        Move::Normal {
            from,
            to,
            promotion: None,
            ..
        } => (MoveKind::Normal, from, to, 0),
        Move::Normal {
            from,
            to,
            promotion: Some(p),
            ..
        } => (MoveKind::Promotion, from, to, p as u16 - 2),
        Move::Castle { king, rook } => (MoveKind::Castle, king, rook, 0),
        Move::EnPassant { from, to } => (MoveKind::EnPassant, from, to, 0),
        Move::Put { .. } => unreachable!("no drops in standard chess"),
    }
}

/// A move as the stem packs it: type (2 bits), from, to (6 bits each),
/// promotion (2 bits from the knight).
fn pack_move(m: Move) -> u16 {
    let (kind, from, to, promo) = move_fields(m);
    let kind = match kind {
        MoveKind::Normal => 0,
        MoveKind::Promotion => 1,
        MoveKind::Castle => 2,
        MoveKind::EnPassant => 3,
    };
    kind << 14 | u16::from(from) << 8 | u16::from(to) << 2 | promo
}

/// The legal move of `pos` that `packed` names.
fn unpack_move(pos: &Chess, packed: u16) -> Result<Move, Error> {
    let from = Square::new(u32::from(packed >> 8 & 63));
    let to = Square::new(u32::from(packed >> 2 & 63));
    let m = match packed >> 14 {
        0 | 1 => Move::Normal {
            role: pos.board().role_at(from).ok_or_else(|| bad_move(packed))?,
            from,
            capture: pos.board().role_at(to),
            to,
            promotion: (packed >> 14 == 1).then(|| Role::ALL[usize::from(packed & 3) + 1]),
        },
        2 => Move::Castle {
            king: from,
            rook: to,
        },
        _ => Move::EnPassant { from, to },
    };
    if pos.is_legal(m) && pack_move(m) == packed {
        Ok(m)
    } else {
        Err(bad_move(packed))
    }
}

fn bad_move(packed: u16) -> Error {
    Error::InvalidData(format!("stem move {packed:#06x} is not legal"))
}

/// The number of bits that index one of `n` things (0 for one).
fn used_bits(n: u32) -> u32 {
    if n <= 1 {
        0
    } else {
        32 - (n - 1).leading_zeros()
    }
}

/// The number of squares of `bb` below `sq`.
fn below(bb: Bitboard, sq: Square) -> u32 {
    (bb & Bitboard((1u64 << u32::from(sq)) - 1)).count() as u32
}

/// The `n`th (from 0) square of `bb`.
fn nth(bb: Bitboard, n: u32) -> Option<Square> {
    bb.into_iter().nth(n as usize)
}

/// The en-passant square the movetext's pawn moves may go to.
fn ep_target(pos: &Chess) -> Option<Square> {
    pos.ep_square(EnPassantMode::Legal)
}

/// A pawn's destinations: captures (the en-passant square included),
/// pushes.
fn pawn_destinations(pos: &Chess, from: Square) -> Bitboard {
    let turn = pos.turn();
    let board = pos.board();
    let mut targets = board.by_color(!turn);
    if let Some(ep) = ep_target(pos) {
        targets.add(ep);
    }
    let mut dest = attacks::pawn_attacks(turn, from) & targets;
    let forward = turn.fold_wb(8, -8);
    if let Some(one) = from.offset(forward)
        && !board.occupied().contains(one)
    {
        dest.add(one);
        if from.rank() == turn.fold_wb(Rank::Second, Rank::Seventh)
            && let Some(two) = one.offset(forward)
            && !board.occupied().contains(two)
        {
            dest.add(two);
        }
    }
    dest
}

/// The number of castling rights of the side to move.
fn own_castles(pos: &Chess) -> u32 {
    (pos.castles().castling_rights()
        & Bitboard::from_rank(pos.turn().fold_wb(Rank::First, Rank::Eighth)))
    .count() as u32
}

fn read_move(pos: &Chess, bits: &mut BitReader<'_>) -> Result<Move, Error> {
    let turn = pos.turn();
    let board = pos.board();
    let ours = board.by_color(turn);
    let id = bits.read(used_bits(ours.count() as u32))?;
    let from = nth(ours, id).ok_or_else(|| Error::InvalidData("no such piece".into()))?;
    let role = board.role_at(from).expect("our piece");
    let normal = |to: Square, promotion: Option<Role>| Move::Normal {
        role,
        from,
        capture: board.role_at(to),
        to,
        promotion,
    };
    let no_square = || Error::InvalidData("no such square".into());
    let m = match role {
        Role::Pawn => {
            let dest = pawn_destinations(pos, from);
            let n = dest.count() as u32;
            if from.rank() == turn.fold_wb(Rank::Seventh, Rank::Second) {
                let id = bits.read(used_bits(n * 4))?;
                let to = nth(dest, id / 4).ok_or_else(no_square)?;
                normal(to, Some(Role::ALL[(id % 4) as usize + 1]))
            } else {
                let id = bits.read(used_bits(n))?;
                let to = nth(dest, id).ok_or_else(no_square)?;
                if Some(to) == ep_target(pos) {
                    Move::EnPassant { from, to }
                } else {
                    normal(to, None)
                }
            }
        }
        Role::King => {
            let dest = attacks::king_attacks(from) & !ours;
            let n = dest.count() as u32;
            let id = bits.read(used_bits(n + own_castles(pos)))?;
            if id >= n {
                let back = turn.fold_wb(Square::A1, Square::A8);
                let long = id == n && pos.castles().castling_rights().contains(back);
                let rook = if long {
                    back
                } else {
                    turn.fold_wb(Square::H1, Square::H8)
                };
                Move::Castle { king: from, rook }
            } else {
                normal(nth(dest, id).expect("id < n"), None)
            }
        }
        _ => {
            let dest = attacks::attacks(from, role.of(turn), board.occupied()) & !ours;
            let id = bits.read(used_bits(dest.count() as u32))?;
            normal(nth(dest, id).ok_or_else(no_square)?, None)
        }
    };
    if pos.is_legal(m) {
        Ok(m)
    } else {
        Err(Error::InvalidData(format!(
            "{} is not legal",
            m.to_uci(CastlingMode::Standard)
        )))
    }
}

fn write_move(pos: &Chess, m: Move, bits: &mut BitWriter<'_>) {
    let turn = pos.turn();
    let board = pos.board();
    let ours = board.by_color(turn);
    let from = m.from().expect("not a drop");
    bits.write(below(ours, from), used_bits(ours.count() as u32));
    match m.role() {
        Role::Pawn => {
            let dest = pawn_destinations(pos, from);
            let n = dest.count() as u32;
            let id = below(dest, m.to());
            if let Some(p) = m.promotion() {
                bits.write(id * 4 + (p as u32 - 2), used_bits(n * 4));
            } else {
                bits.write(id, used_bits(n));
            }
        }
        Role::King => {
            let dest = attacks::king_attacks(from) & !ours;
            let n = dest.count() as u32;
            let id = match m {
                Move::Castle { rook, .. } => {
                    let long_right = pos
                        .castles()
                        .castling_rights()
                        .contains(turn.fold_wb(Square::A1, Square::A8));
                    let short = rook.file() > m.from().expect("a king").file();
                    n - 1 + u32::from(long_right) + u32::from(short)
                }
                _ => below(dest, m.to()),
            };
            bits.write(id, used_bits(n + own_castles(pos)));
        }
        role => {
            let dest = attacks::attacks(from, role.of(turn), board.occupied()) & !ours;
            bits.write(below(dest, m.to()), used_bits(dest.count() as u32));
        }
    }
}

/// The format's signed numbers: the sign in the lowest bit.
fn unsigned_to_signed(r: u16) -> i16 {
    let mut v = r.rotate_right(1);
    if v & 0x8000 != 0 {
        v ^= 0x7FFF;
    }
    v as i16
}

fn signed_to_unsigned(a: i16) -> u16 {
    let mut r = a as u16;
    if r & 0x8000 != 0 {
        r ^= 0x7FFF;
    }
    r.rotate_left(1)
}

/// The movetext's bits, high bit first.
struct BitReader<'a> {
    data: &'a [u8],
    /// Bits read.
    at: usize,
}

impl BitReader<'_> {
    fn read(&mut self, n: u32) -> Result<u32, Error> {
        let mut v = 0;
        for _ in 0..n {
            let byte = *self.data.get(self.at / 8).ok_or(Error::Truncated)?;
            v = v << 1 | u32::from(byte >> (7 - self.at % 8) & 1);
            self.at += 1;
        }
        Ok(v)
    }

    fn read_vle16(&mut self) -> Result<u16, Error> {
        let mut v: u32 = 0;
        let mut shift = 0;
        loop {
            let block = self.read(5)?;
            if shift < 16 {
                v |= (block & 15) << shift;
            }
            if block & 16 == 0 {
                return Ok(v as u16);
            }
            shift += 4;
            if shift >= 16 {
                return Err(Error::InvalidData("score code too long".into()));
            }
        }
    }
}

struct BitWriter<'a> {
    out: &'a mut Vec<u8>,
    /// Bits used in the last byte (0: a new byte comes next).
    used: u32,
}

impl BitWriter<'_> {
    fn write(&mut self, v: u32, n: u32) {
        for i in (0..n).rev() {
            if self.used == 0 {
                self.out.push(0);
            }
            let bit = (v >> i & 1) as u8;
            *self.out.last_mut().expect("a byte") |= bit << (7 - self.used);
            self.used = (self.used + 1) % 8;
        }
    }

    fn write_vle16(&mut self, mut v: u16) {
        loop {
            let more = v > 15;
            self.write(u32::from(v & 15) | u32::from(more) << 4, 5);
            v >>= 4;
            if v == 0 {
                break;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signed_numbers_map_both_ways() {
        for v in [0i16, 1, -1, 2, -2, 300, -300, i16::MAX, i16::MIN] {
            assert_eq!(unsigned_to_signed(signed_to_unsigned(v)), v);
        }
        // The sign in the lowest bit.
        assert_eq!(signed_to_unsigned(1), 2);
        assert_eq!(signed_to_unsigned(-1), 1);
    }

    #[test]
    fn indexes_take_the_bits_of_their_range() {
        assert_eq!(
            [0, 1, 2, 3, 4, 5, 16, 17].map(used_bits),
            [0, 0, 1, 2, 2, 3, 4, 5]
        );
    }

    #[test]
    fn a_chain_writes_back_to_its_bytes() {
        // 1. e4 e5 2. Nf3 from the start, scores 20, -25, 30.
        let start = Chess::default();
        let mut moves = Vec::new();
        let mut pos = start.clone();
        for uci in ["e2e4", "e7e5", "g1f3"] {
            let m = uci
                .parse::<shakmaty::uci::UciMove>()
                .unwrap()
                .to_move(&pos)
                .unwrap();
            pos.play_unchecked(m);
            moves.push(m);
        }
        let chain = Chain {
            pos: start,
            ply: 0,
            result: 2,
            rule50: 0,
            moves,
            scores: vec![20, -25, 30],
        };
        let mut bytes = Vec::new();
        chain.write(&mut bytes);
        let (back, len) = read_chain(&bytes).unwrap();
        assert_eq!((back, len), (chain, bytes.len()));
        let items = parse_chunk(&bytes);
        assert!(matches!(items.as_slice(), [Item::Chain(_, b)] if *b == bytes.as_slice()));
    }

    #[test]
    fn chunks_need_their_magic_and_size() {
        let mut file = Vec::new();
        write_chunk(b"abc", &mut file).unwrap();
        assert_eq!(chunks(&file).unwrap(), [b"abc"]);
        assert!(
            chunks(&file[..10])
                .unwrap_err()
                .to_string()
                .contains("chunk 0")
        );
        assert!(chunks(b"BINX\0\0\0\0").is_err());
    }

    #[test]
    fn what_is_not_a_chain_is_kept() {
        // A stem of zeros: no kings, not a position.
        let items = parse_chunk(&[0; 40]);
        assert_eq!(items, [Item::Raw(&[0; 40])]);
        // 64 occupied squares: more pieces than a stem holds (fuzzing,
        // issue 42).
        let mut stem = [0u8; 40];
        stem[..8].fill(0xff);
        assert_eq!(parse_chunk(&stem), [Item::Raw(&stem)]);
    }
}
