//! Helpers: random legal games and positions, Chess960 starts.

use chesspack::order::{Order, sorted_moves};
use proptest::prelude::*;
use shakmaty::{CastlingMode, Chess, Move, Position, fen::Fen};

/// The Chess960 start position with Scharnagl number `n` (0..960).
pub fn chess960(n: u32) -> Chess {
    let mut rank: [Option<char>; 8] = [None; 8];
    let mut n = n % 960;
    rank[(2 * (n % 4) + 1) as usize] = Some('b');
    n /= 4;
    rank[(2 * (n % 4)) as usize] = Some('b');
    n /= 4;
    let empty = |rank: &[Option<char>; 8]| -> Vec<usize> {
        (0..8).filter(|&i| rank[i].is_none()).collect()
    };
    let q = (n % 6) as usize;
    n /= 6;
    let e = empty(&rank);
    rank[e[q]] = Some('q');
    let knights = [
        (0, 1),
        (0, 2),
        (0, 3),
        (0, 4),
        (1, 2),
        (1, 3),
        (1, 4),
        (2, 3),
        (2, 4),
        (3, 4),
    ];
    let (a, b) = knights[n as usize];
    let e = empty(&rank);
    rank[e[a]] = Some('n');
    rank[e[b]] = Some('n');
    let e = empty(&rank);
    rank[e[0]] = Some('r');
    rank[e[1]] = Some('k');
    rank[e[2]] = Some('r');
    let black: String = rank.iter().map(|c| c.unwrap()).collect();
    let white = black.to_ascii_uppercase();
    let files: Vec<char> = [e[0], e[2]]
        .iter()
        .map(|&i| (b'a' + i as u8) as char)
        .collect();
    let castling = format!(
        "{}{}{}{}",
        files[1].to_ascii_uppercase(),
        files[0].to_ascii_uppercase(),
        files[1],
        files[0]
    );
    let fen = format!("{black}/pppppppp/8/8/8/8/PPPPPPPP/{white} w {castling} - 0 1");
    Fen::from_ascii(fen.as_bytes())
        .unwrap()
        .into_position(CastlingMode::Chess960)
        .unwrap()
}

/// FEN starts that make special moves likely: castling both ways, en
/// passant, promotions and under-promotions, checks.
pub const FEN_STARTS: &[&str] = &[
    "r3k2r/pppppppp/8/8/8/8/PPPPPPPP/R3K2R w KQkq - 0 1",
    "4k3/1P4P1/8/3pP3/8/8/1p4p1/4K3 w - d6 0 1",
    "r3k2r/P6P/8/8/8/8/p6p/R3K2R b KQkq - 0 1",
    "8/2P5/8/8/8/8/5p2/k1K5 w - - 0 1",
    "kBQQQQQQ/BR5Q/Q6Q/Q6Q/Q6Q/Q6Q/Q6Q/KQQQQQQQ w - - 0 1",
    "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3",
];

/// A start position: standard, Chess960, or one of [`FEN_STARTS`].
pub fn start(kind: u32) -> Chess {
    match kind % 4 {
        0 => Chess::default(),
        1 => chess960(kind / 4),
        _ => {
            let fen = FEN_STARTS[(kind / 4) as usize % FEN_STARTS.len()];
            chesspack::pgn::start_position(None, Some(fen)).unwrap()
        }
    }
}

/// A xorshift generator: repeatable random numbers for tests.
pub struct Rng(pub u64);

impl Rng {
    /// A generator for `seed`, mixed so that near seeds give far streams.
    pub fn seeded(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1)
    }
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    /// The next number's top 31 bits.
    pub fn next_u32(&mut self) -> u32 {
        (self.next() >> 33) as u32
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Plays a game from `start` where `choices` pick the moves; a special move
/// (castling, en passant, promotion) is preferred when one is legal and the
/// choice is divisible by 3.
pub fn play(start: &Chess, choices: &[u32]) -> Vec<Move> {
    let mut pos = start.clone();
    let mut moves = Vec::new();
    for &c in choices {
        let legal = sorted_moves(&pos, Order::Thesis);
        if legal.is_empty() {
            break;
        }
        let special: Vec<Move> = legal
            .iter()
            .copied()
            .filter(|m| m.is_castle() || m.is_en_passant() || m.is_promotion())
            .collect();
        let m = if c % 3 == 0 && !special.is_empty() {
            special[(c / 3) as usize % special.len()]
        } else {
            legal[c as usize % legal.len()]
        };
        pos.play_unchecked(m);
        moves.push(m);
    }
    moves
}

/// Strategy: a start position and the moves of a random legal game from it.
pub fn arb_game() -> impl Strategy<Value = (Chess, Vec<Move>)> {
    (any::<u32>(), prop::collection::vec(any::<u32>(), 0..160)).prop_map(|(kind, choices)| {
        let start = start(kind);
        let moves = play(&start, &choices);
        (start, moves)
    })
}

/// Strategy: a legal position reached by a random game (castling rights,
/// en-passant squares and promotions included).
pub fn arb_position() -> impl Strategy<Value = Chess> {
    arb_game().prop_filter_map("standard material", |(start, moves)| {
        let mut pos = start;
        for m in moves {
            pos.play_unchecked(m);
        }
        // Position codecs take strictly legal positions.
        chesspack::position::parse_fen(&chesspack::position::to_fen(&pos)).ok()
    })
}

/// Game `number` of `r` with its block's text checked
/// ([`ArchiveReader::write_game`](chesspack::archive::ArchiveReader::write_game) with `check`).
pub fn game_checked<R: std::io::Read + std::io::Seek>(
    r: &mut chesspack::archive::ArchiveReader<R>,
    number: u64,
) -> Result<Vec<u8>, chesspack::archive::ArchiveError> {
    let mut text = Vec::new();
    r.write_game(number, true, &mut text)?;
    Ok(text)
}

/// The size of `text` compressed by liblzma at preset 9 extreme (`xz -9e`).
pub fn xz_size(text: &[u8]) -> usize {
    use std::io::Write;
    let stream =
        liblzma::stream::Stream::new_easy_encoder(9 | 0x8000_0000, liblzma::stream::Check::Crc64);
    let mut w = liblzma::write::XzEncoder::new_stream(Vec::new(), stream.unwrap());
    w.write_all(text).unwrap();
    w.finish().unwrap().len()
}

/// The lines of lichess's opening table kept as a fixture
/// (`tests/fixtures/openings-lines.tsv`: `eco`, `name`, `pgn`, with a
/// header line).
pub fn openings_lines() -> String {
    let path = format!(
        "{}/tests/fixtures/openings-lines.tsv",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(path).unwrap()
}
