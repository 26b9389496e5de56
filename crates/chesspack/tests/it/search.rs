//! Issue 68: finding games by position, material, sub-FEN and tags, and
//! the explorer, checked against a replay of the games as they were
//! written, with and without the search index.

use std::{
    collections::{BTreeMap, BTreeSet, HashMap},
    io::Cursor,
    ops::ControlFlow,
};

use crate::common::Rng;
use chesspack::{
    archive::ArchiveReader,
    files::{self, Kind, Settings},
    opening::OpeningTable,
    search::{self, Query},
};
use shakmaty::{
    Bitboard, Board, CastlingMode, Chess, Color, EnPassantMode, Move, Piece, Position, Role,
    fen::Fen,
    san::{San, SanPlus},
    zobrist::Zobrist64,
};

/// A game as written: its tags, start and moves.
struct Game {
    start: Chess,
    fen: Option<String>,
    moves: Vec<Move>,
    white: String,
    black: String,
    white_elo: u32,
    black_elo: u32,
    result: &'static str,
    date: String,
}

const OPENINGS: &[&str] = &[
    "e4 c5 Nf3 d6 d4 cxd4 Nxd4 Nf6 Nc3 a6",
    "Nf3 c5 e4 d6 d4 cxd4 Nxd4 Nf6 Nc3 g6",
    "d4 Nf6 c4 e6 Nc3 Bb4",
    "c4 e6 d4 Nf6 Nc3 Bb4 Qc2",
    "e4 e5 Nf3 Nc6 Bb5 a6 Ba4 Nf6",
    "e4 e5 Nf3 Nc6 Bc4",
    "d4 d5 c4 e6 Nc3 Nf6",
    "",
];

const FENS: &[&str] = &[
    "r3k2r/pppppppp/8/8/8/8/PPPPPPPP/R3K2R w KQkq - 0 1",
    "4k3/1P4P1/8/3pP3/8/8/1p4p1/4K3 w - d6 0 1",
];

/// Games from shared openings (transpositions among them) that go on at
/// random, taking pieces often so that endgames are reached; some from a
/// FEN.
fn games(n: usize, seed: u64) -> Vec<Game> {
    let mut rng = Rng(seed);
    let names = ["Carlsen", "Caruana", "Ding", "Firouzja", "Nepo", "So"];
    let results = ["1-0", "0-1", "1/2-1/2", "*"];
    (0..n)
        .map(|i| {
            let fen = (i % 23 == 5).then(|| FENS[i % FENS.len()].to_owned());
            let start = chesspack::pgn::start_position(None, fen.as_deref()).unwrap();
            let mut pos = start.clone();
            let mut moves = Vec::new();
            if fen.is_none() {
                for san in OPENINGS[rng.below(OPENINGS.len())].split_whitespace() {
                    let m = san.parse::<San>().unwrap().to_move(&pos).unwrap();
                    pos.play_unchecked(m);
                    moves.push(m);
                }
            }
            let plies = 10 + rng.below(110);
            play_on(&mut pos, &mut moves, plies, &mut rng);
            Game {
                start,
                fen,
                moves,
                white: names[rng.below(names.len())].into(),
                black: names[rng.below(names.len())].into(),
                white_elo: 2400 + rng.below(400) as u32,
                black_elo: 2400 + rng.below(400) as u32,
                result: results[rng.below(results.len())],
                date: format!(
                    "{}.{:02}.{:02}",
                    2015 + rng.below(10),
                    1 + rng.below(12),
                    1 + rng.below(28)
                ),
            }
        })
        .collect()
}

/// Random moves from `pos` onto `moves` until it has `plies` of them or
/// the game is over, taking pieces often.
fn play_on(pos: &mut Chess, moves: &mut Vec<Move>, plies: usize, rng: &mut Rng) {
    while moves.len() < plies {
        let legal = pos.legal_moves();
        if legal.is_empty() {
            break;
        }
        let captures: Vec<Move> = legal.iter().copied().filter(|m| m.is_capture()).collect();
        let m = if !captures.is_empty() && rng.below(10) < 7 {
            captures[rng.below(captures.len())]
        } else {
            legal[rng.below(legal.len())]
        };
        pos.play_unchecked(m);
        moves.push(m);
    }
}

fn pgn_of(games: &[Game]) -> String {
    let mut out = String::new();
    for (i, g) in games.iter().enumerate() {
        out += &format!(
            "[Event \"Test {}\"]\n[Date \"{}\"]\n[White \"{}\"]\n[Black \"{}\"]\n[Result \"{}\"]\n[WhiteElo \"{}\"]\n[BlackElo \"{}\"]\n",
            i % 3,
            g.date,
            g.white,
            g.black,
            g.result,
            g.white_elo,
            g.black_elo
        );
        if g.start.castles().mode() == CastlingMode::Chess960 {
            out += "[Variant \"Chess960\"]\n";
        }
        if let Some(f) = &g.fen {
            out += &format!("[SetUp \"1\"]\n[FEN \"{f}\"]\n");
        }
        out += "\n";
        let mut pos = g.start.clone();
        for (ply, &m) in g.moves.iter().enumerate() {
            let number = pos.fullmoves().get();
            if pos.turn() == Color::White {
                out += &format!("{number}. ");
            } else if ply == 0 {
                out += &format!("{number}... ");
            }
            out += &SanPlus::from_move_and_play_unchecked(&mut pos, m).to_string();
            out += " ";
        }
        out += g.result;
        out += "\n\n";
    }
    out
}

fn pack(pgn: &str, no_index: bool) -> Vec<u8> {
    let mut settings = pack_settings();
    settings.no_index = no_index;
    let out = compressed(pgn, &settings);
    if no_index { out } else { with_index(out) }
}

/// The settings [`pack`] compresses with: two threads, blocks of 40 games.
fn pack_settings() -> Settings {
    let mut settings = Settings::default();
    settings.pipeline.threads = 2;
    settings.archive.block_games = 40;
    settings
}

/// `pgn` compressed with `settings`.
fn compressed(pgn: &str, settings: &Settings) -> Vec<u8> {
    compressed_with_report(pgn, settings).0
}

/// `pgn` compressed with `settings`, and what `compress` reported.
fn compressed_with_report(pgn: &str, settings: &Settings) -> (Vec<u8>, files::Report) {
    let mut out = Vec::new();
    let report = files::compress(Kind::Games, pgn.as_bytes(), &mut out, settings, &mut |_| {
        ControlFlow::Continue(())
    })
    .unwrap();
    (out, report)
}

/// `archive` with a search section, added by [`search::index`] where
/// `compress` wrote none (an archive of fewer than 32 games).
fn with_index(archive: Vec<u8>) -> Vec<u8> {
    indexed_with(archive, false)
}

/// [`with_index`], the section with each game's squares where `squares`.
fn indexed_with(archive: Vec<u8>, squares: bool) -> Vec<u8> {
    if ArchiveReader::open(Cursor::new(&archive))
        .unwrap()
        .has_search_section()
    {
        return archive;
    }
    let (indexed, out) = index_file(&archive, squares, 0);
    indexed.unwrap();
    out
}

/// What [`search::index`] on a file of `archive` gives, with each game's
/// squares where `squares`, taking at most `memory`; and the file after.
fn index_file(
    archive: &[u8],
    squares: bool,
    memory: u64,
) -> (Result<u64, chesspack::archive::ArchiveError>, Vec<u8>) {
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let path =
        std::env::temp_dir().join(format!("chesspack-small-{}-{n}.chpk", std::process::id()));
    std::fs::write(&path, archive).unwrap();
    let mut file = std::fs::File::options()
        .read(true)
        .write(true)
        .open(&path)
        .unwrap();
    let indexed = search::index(&mut file, 1, squares, memory, &mut |_| {
        ControlFlow::Continue(())
    });
    drop(file);
    let out = std::fs::read(&path).unwrap();
    std::fs::remove_file(&path).unwrap();
    (indexed, out)
}

fn key(pos: &Chess) -> u64 {
    pos.zobrist_hash::<Zobrist64>(EnPassantMode::Legal).0
}

/// Each game's positions, replayed.
fn positions(g: &Game) -> Vec<Chess> {
    let mut pos = g.start.clone();
    let mut out = vec![pos.clone()];
    for &m in &g.moves {
        pos.play_unchecked(m);
        out.push(pos.clone());
    }
    out
}

fn material(board: &Board) -> String {
    let mut s = String::new();
    for color in [Color::White, Color::Black] {
        s.push('K');
        for role in [
            Role::Queen,
            Role::Rook,
            Role::Bishop,
            Role::Knight,
            Role::Pawn,
        ] {
            for _ in 0..board.by_piece(role.of(color)).count() {
                s.push(role.upper_char());
            }
        }
    }
    s
}

/// The expected (game, ply) of a predicate on positions, over the games
/// that pass `keep`.
fn expected(
    games: &[Game],
    keep: impl Fn(&Game) -> bool,
    hit: impl Fn(&Chess) -> bool,
) -> BTreeSet<(u64, u32)> {
    let mut out = BTreeSet::new();
    for (i, g) in games.iter().enumerate() {
        if !keep(g) {
            continue;
        }
        if let Some(ply) = positions(g).iter().position(&hit) {
            out.insert((i as u64 + 1, ply as u32));
        }
    }
    out
}

/// What `find` finds in `archive`, which is searched through its index
/// where `indexed`.
fn found_in(archive: &[u8], indexed: bool, q: &Query) -> (BTreeSet<(u64, u32)>, search::Found) {
    let (got, f) = find_in(archive, q);
    assert_eq!(f.scanned, !indexed, "{:?}", f.index_error);
    (got, f)
}

/// What `find` finds in `archive` (its games and plies), however it
/// searched it.
fn find_in(archive: &[u8], q: &Query) -> (BTreeSet<(u64, u32)>, search::Found) {
    let mut archives = [ArchiveReader::open(Cursor::new(archive)).unwrap()];
    let f = search::find(&mut archives, q).unwrap();
    (f.hits.iter().map(|h| (h.game, h.ply)).collect(), f)
}

/// The archives with and without an index, and the games.
fn fixture() -> (Vec<Game>, Vec<u8>, Vec<u8>) {
    let games = games(300, 0x9e37_79b9_7f4a_7c15);
    let pgn = pgn_of(&games);
    (games, pack(&pgn, false), pack(&pgn, true))
}

#[test]
fn issue_68_positions_are_found_as_a_replay_finds_them() {
    let (games, indexed, plain) = fixture();
    let mut rng = Rng(7);
    let mut queries: Vec<Chess> = vec![Chess::default()];
    // From real games at many plies, and one that no game reached.
    for _ in 0..60 {
        let g = &games[rng.below(games.len())];
        let ps = positions(g);
        let ply = [0, 2, 3, 4, 6, 9, 12, 20, 30, 50, ps.len() - 1][rng.below(11)].min(ps.len() - 1);
        queries.push(ps[ply].clone());
    }
    queries.push(
        "8/8/8/8/8/8/8/K6k w - - 0 1"
            .parse::<Fen>()
            .unwrap()
            .into_position(CastlingMode::Standard)
            .unwrap(),
    );
    let mut seen_transposition = false;
    for pos in &queries {
        let k = key(pos);
        let want = expected(&games, |_| true, |p| key(p) == k);
        let fen = Fen::from_position(pos, EnPassantMode::Legal).to_string();
        let mut q = Query::default();
        q.fen = Some(fen.clone());
        let (got, report) = found_in(&indexed, true, &q);
        assert_eq!(got, want, "{fen}");
        assert!(!report.scanned);
        let (scanned, report) = found_in(&plain, false, &q);
        assert_eq!(scanned, want, "{fen} without the index");
        assert!(report.scanned);
        seen_transposition |= fen.starts_with("rnbqkb1r/1p2pppp/p2p1n2/8/3NP3/2N5");
    }
    // 1. e4 c5 2. Nf3 d6 and 1. Nf3 c5 2. e4 d6 meet.
    let mut q = Query::default();
    q.moves = Some("1. e4 c5 2. Nf3 d6".into());
    let (got, _) = found_in(&indexed, true, &q);
    let from_e4 = got
        .iter()
        .filter(|&&(g, _)| games[g as usize - 1].moves[0].to().to_string() == "e4")
        .count();
    assert!(
        from_e4 > 0 && from_e4 < got.len(),
        "both move orders: {got:?}"
    );
    let _ = seen_transposition;
}

/// Asserts that the games found at sub-FEN `pattern`, with the index and
/// without, are a replay's; gives the report with the index.
fn sub_fen_found_as_replayed(
    games: &[Game],
    indexed: &[u8],
    plain: &[u8],
    pattern: &Board,
) -> search::Found {
    let has = |p: &Chess| {
        pattern
            .iter()
            .all(|(sq, pc)| p.board().piece_at(sq) == Some(pc))
    };
    let want = expected(games, |_| true, has);
    let mut q = Query::default();
    q.sub_fen = vec![pattern.board_fen().to_string()];
    let (got, report) = found_in(indexed, true, &q);
    assert_eq!(got, want, "{:?}", q.sub_fen);
    assert_eq!(
        found_in(plain, false, &q).0,
        want,
        "{:?} without the index",
        q.sub_fen
    );
    report
}

#[test]
fn issue_68_materials_imbalances_and_sub_fens_are_found_as_a_replay_finds_them() {
    let (games, indexed, plain) = fixture();
    let mut rng = Rng(11);
    for _ in 0..20 {
        let g = &games[rng.below(games.len())];
        let ps = positions(g);
        let board = ps[rng.below(ps.len())].board().clone();
        // Material.
        let m = material(&board);
        let want = expected(&games, |_| true, |p| material(p.board()) == m);
        let mut q = Query::default();
        q.material = Some(m.clone());
        assert_eq!(found_in(&indexed, true, &q).0, want, "{m}");
        assert_eq!(found_in(&plain, false, &q).0, want, "{m} without the index");
        // A sub-FEN of three of the board's pieces.
        let mut sub = Board::empty();
        let squares: Vec<_> = board.occupied().into_iter().collect();
        for _ in 0..3 {
            let sq = squares[rng.below(squares.len())];
            sub.set_piece_at(sq, board.piece_at(sq).unwrap());
        }
        sub_fen_found_as_replayed(&games, &indexed, &plain, &sub);
    }
    // An imbalance: White a rook up for a knight... as the positions have it.
    let diff = |b: &Board, r: Role| {
        b.by_piece(r.of(Color::White)).count() as i32
            - b.by_piece(r.of(Color::Black)).count() as i32
    };
    let want = expected(
        &games,
        |_| true,
        |p| {
            let b = p.board();
            diff(b, Role::Rook) == 1
                && diff(b, Role::Knight) == -1
                && [Role::Pawn, Role::Bishop, Role::Queen]
                    .iter()
                    .all(|&r| diff(b, r) == 0)
        },
    );
    let mut q = Query::default();
    q.imbalance = Some("R v N".into());
    assert_eq!(found_in(&indexed, true, &q).0, want);
    assert_eq!(found_in(&plain, false, &q).0, want);
}

#[test]
fn issue_68_filters_select_the_games_a_replay_selects() {
    let (games, indexed, plain) = fixture();
    type Keep = Box<dyn Fn(&Game) -> bool>;
    let cases: Vec<(Query, Keep)> = vec![
        {
            let mut q = Query::default();
            q.player = Some("car".into());
            (
                q,
                Box::new(|g: &Game| g.white.starts_with("Car") || g.black.starts_with("Car")),
            )
        },
        {
            let mut q = Query::default();
            q.white = Some("ding".into());
            q.result = Some("1-0".into());
            (
                q,
                Box::new(|g: &Game| g.white == "Ding" && g.result == "1-0"),
            )
        },
        {
            let mut q = Query::default();
            q.min_elo = Some(2500);
            q.max_elo = Some(2650);
            (
                q,
                Box::new(|g: &Game| (2500..=2650).contains(&((g.white_elo + g.black_elo) / 2))),
            )
        },
        {
            let mut q = Query::default();
            q.from = Some("2018.03".into());
            q.to = Some("2020".into());
            (
                q,
                Box::new(|g: &Game| {
                    g.date.as_str() >= "2018.03.01" && g.date.as_str() <= "2020.12.31"
                }),
            )
        },
        {
            let mut q = Query::default();
            q.moves = Some("e4".into());
            q.black = Some("so".into());
            (q, Box::new(|g: &Game| g.black == "So"))
        },
        {
            // The opening lichess's table names (the games have no
            // `Opening` tag), in any case.
            let mut q = Query::default();
            q.opening = Some("NAJDORF".into());
            (
                q,
                Box::new(|g: &Game| {
                    OpeningTable::lichess()
                        .classify(&g.start, &g.moves)
                        .is_some_and(|o| o.name.contains("Najdorf"))
                }),
            )
        },
    ];
    for (q, keep) in cases {
        let want = if q.moves.is_some() {
            let mut e4 = Chess::default();
            e4.play_unchecked(San::from_ascii(b"e4").unwrap().to_move(&e4).unwrap());
            let k = key(&e4);
            expected(&games, keep, |p| key(p) == k)
        } else {
            // The filters alone: every game that passes, at its start.
            expected(&games, keep, |_| true)
        };
        assert_eq!(found_in(&indexed, true, &q).0, want, "{q:?}");
        assert_eq!(
            found_in(&plain, false, &q).0,
            want,
            "{q:?} without the index"
        );
    }
}

/// The opening filter and the hits' openings: the `Opening` tag where a
/// game has one, else what its moves give in lichess's table, with the
/// index and without.
#[test]
fn issue_68_the_opening_is_the_tag_or_what_the_moves_give() {
    let mut pgn = String::new();
    for i in 0..40 {
        let tag = if i % 2 == 0 {
            "[Opening \"My Own Line\"]\n"
        } else {
            ""
        };
        pgn += &format!(
            "[White \"W{i}\"]\n{tag}[Result \"*\"]\n\n1. e4 c5 2. Nf3 d6 3. d4 cxd4 4. Nxd4 Nf6 5. Nc3 a6 6. Be3 *\n\n"
        );
    }
    let (indexed, plain) = (pack(&pgn, false), pack(&pgn, true));
    for (archive, with_index) in [(&indexed, true), (&plain, false)] {
        let mut q = Query::default();
        q.moves = Some("e4 c5 Nf3 d6 d4 cxd4 Nxd4 Nf6 Nc3 a6".into());
        let (_, f) = found_in(archive, with_index, &q);
        let openings: Vec<&str> = f.hits.iter().map(|h| &*h.opening).collect();
        let want: Vec<&str> = (0..40)
            .map(|i| {
                if i % 2 == 0 {
                    "My Own Line"
                } else {
                    "Sicilian Defense: Najdorf Variation, English Attack"
                }
            })
            .collect();
        assert_eq!(openings, want, "index: {with_index}");
        q.opening = Some("own line".into());
        let (got, _) = found_in(archive, with_index, &q);
        assert_eq!(got, (1..=40).step_by(2).map(|g| (g, 10)).collect());
        q.opening = Some("english attack".into());
        q.explore = true;
        let (_, f) = found_in(archive, with_index, &q);
        assert_eq!(f.reached, 20);
        assert_eq!(f.moves.iter().map(|m| m.games).sum::<u64>(), 20);
    }
}

#[test]
fn issue_68_the_explorer_counts_the_moves_a_replay_counts() {
    let (games, indexed, plain) = fixture();
    for line in [
        "",
        "e4",
        "e4 c5 Nf3",
        "d4 Nf6 c4 e6 Nc3",
        "e4 e5 Nf3 Nc6 Bb5 a6",
    ] {
        let mut pos = Chess::default();
        for san in line.split_whitespace() {
            let m = san.parse::<San>().unwrap().to_move(&pos).unwrap();
            pos.play_unchecked(m);
        }
        let k = key(&pos);
        // (san) -> (games, white wins)
        let mut want: BTreeMap<String, (u64, u64)> = BTreeMap::new();
        for g in &games {
            let ps = positions(g);
            if let Some(ply) = ps.iter().position(|p| key(p) == k)
                && let Some(&m) = g.moves.get(ply)
            {
                let e = want
                    .entry(San::from_move(&ps[ply], m).to_string())
                    .or_default();
                e.0 += 1;
                e.1 += u64::from(g.result == "1-0");
            }
        }
        let mut q = Query::default();
        q.moves = Some(line.into());
        q.explore = true;
        for archive in [&indexed, &plain] {
            let mut archives = [ArchiveReader::open(Cursor::new(archive)).unwrap()];
            let e = search::find(&mut archives, &q).unwrap();
            let got: BTreeMap<String, (u64, u64)> = e
                .moves
                .iter()
                .map(|m| (m.san.clone(), (m.games, m.white)))
                .collect();
            assert_eq!(got, want, "{line:?}");
            let counts: Vec<u64> = e.moves.iter().map(|m| m.games).collect();
            assert!(counts.windows(2).all(|w| w[0] >= w[1]), "most played first");
            assert!(e.hits.is_empty(), "no games unless asked for");
        }
    }
}

/// The explorer names openings as lichess's table does (its own TSV lines,
/// `openings-lines.tsv`): after each line's moves but the last, the row
/// of its last move names the line's opening, and after all of them the
/// position is that opening; with the index and without.
#[test]
fn regression_issue_68_the_explorer_names_the_openings_of_lichess_lines() {
    let text = crate::common::openings_lines();
    let lines: Vec<(&str, &str, &str)> = text
        .lines()
        .skip(1)
        .map(|l| {
            let c: Vec<&str> = l.split('\t').collect();
            (c[0], c[1], c[2])
        })
        .collect();
    // Each line twice, so that the tree has it.
    let pgn: String = lines
        .iter()
        .flat_map(|l| [l, l])
        .map(|(_, _, moves)| format!("[Result \"*\"]\n\n{moves} *\n\n"))
        .collect();
    let (indexed, plain) = (pack(&pgn, false), pack(&pgn, true));
    for (eco, name, moves) in &lines {
        let sans: Vec<&str> = moves
            .split_whitespace()
            .filter(|t| !t.ends_with('.'))
            .collect();
        let (last, before) = sans.split_last().unwrap();
        for (archive, with_index) in [(&indexed, true), (&plain, false)] {
            let mut q = Query::default();
            q.explore = true;
            q.moves = Some(before.join(" "));
            let (_, f) = found_in(archive, with_index, &q);
            let san = last.trim_end_matches(['+', '#']);
            let row = f.moves.iter().find(|m| m.san == san).unwrap();
            let o = row.opening.unwrap();
            assert_eq!((o.eco, o.name), (*eco, *name), "{moves}");
            q.moves = Some(sans.join(" "));
            let (_, f) = found_in(archive, with_index, &q);
            let o = f.opening.unwrap();
            assert_eq!((o.eco, o.name), (*eco, *name), "{moves}");
        }
    }
    // By FEN, the position's own name, and none where the table has none.
    let mut q = Query::default();
    q.explore = true;
    q.fen = Some("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1".into());
    let (_, f) = found_in(&indexed, true, &q);
    let o = f.opening.unwrap();
    assert_eq!((o.eco, o.name), ("B00", "King's Pawn Game"));
    q.fen = Some("4k3/8/8/8/8/8/4P3/4K3 w - - 0 1".into());
    assert!(found_in(&indexed, true, &q).1.opening.is_none());
}

/// Issue 70: the explorer gives the games that reached the position from
/// its one search (the web page's table and list), as `find` gives them.
#[test]
fn issue_70_the_explorer_gives_the_games_of_find() {
    let (_, indexed, plain) = fixture();
    for line in ["", "e4", "e4 c5 Nf3", "d4 Nf6 c4 e6 Nc3"] {
        for archive in [&indexed, &plain] {
            let mut archives = [ArchiveReader::open(Cursor::new(archive)).unwrap()];
            let mut q = Query::default();
            q.moves = Some(line.into());
            q.min_elo = Some(1500);
            let found = search::find(&mut archives, &q).unwrap();
            q.explore = true;
            q.games = true;
            let explored = search::find(&mut archives, &q).unwrap();
            assert_eq!(explored.hits, found.hits, "{line:?}");
            assert_eq!(explored.reached, found.reached);
            assert!(!explored.moves.is_empty());
        }
    }
}

#[test]
fn issue_68_index_adds_the_section_that_compress_writes() {
    let (_, indexed, plain) = fixture();
    let dir = std::env::temp_dir().join(format!("chesspack-index-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("plain.chpk");
    std::fs::write(&path, &plain).unwrap();
    let mut file = std::fs::File::options()
        .read(true)
        .write(true)
        .open(&path)
        .unwrap();
    let mut seen = Vec::new();
    search::index(&mut file, 2, false, 0, &mut |p| {
        seen.push((p.blocks, p.bytes, p.total_bytes));
        ControlFlow::Continue(())
    })
    .unwrap();
    // Issue 69: a progress a block, up to the stored bytes in all.
    let (blocks, bytes, total) = *seen.last().unwrap();
    assert!(blocks > 1 && Some(bytes) == total, "{seen:?}");
    assert!(seen.windows(2).all(|w| w[0].1 < w[1].1));
    drop(file);
    assert_eq!(
        std::fs::read(&path).unwrap(),
        indexed,
        "the same bytes as compress writes"
    );
    // Again: the section is replaced, not added.
    let mut file = std::fs::File::options()
        .read(true)
        .write(true)
        .open(&path)
        .unwrap();
    search::index(&mut file, 1, false, 0, &mut |_| ControlFlow::Continue(())).unwrap();
    drop(file);
    assert_eq!(std::fs::read(&path).unwrap(), indexed);
    // The games read as before.
    let mut a = Vec::new();
    chesspack::decompress(Cursor::new(&indexed), &mut a).unwrap();
    let mut b = Vec::new();
    chesspack::decompress(Cursor::new(&plain), &mut b).unwrap();
    assert_eq!(a, b);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Building the index takes at most the memory it is given, counted from
/// the games (the same on every machine): past it `compress` writes the
/// archive that `--no-index` writes and says why, and `index` stops with
/// an error and leaves the archive as it was.
#[test]
fn regression_issue_68_an_index_past_its_memory_is_left_out_not_built() {
    let (_, indexed, plain) = fixture();
    let pgn = pgn_of(&games(300, 0x9e37_79b9_7f4a_7c15));
    let pack_in = |memory: u64| {
        let mut settings = pack_settings();
        settings.index_memory = memory;
        let (out, report) = compressed_with_report(&pgn, &settings);
        (out, report.index_left_out)
    };
    let (out, why) = pack_in(100_000);
    assert_eq!(out, plain, "the archive without its index");
    let why = why.expect("the report says why");
    assert!(
        why.contains("more than 97.7 KiB")
            && why.contains("the archive's 300 games were written without it"),
        "{why}"
    );
    assert_eq!(pack_in(1 << 30), (indexed, None));
    // `index` gives the error before it writes anything.
    let (indexed, after) = index_file(&plain, false, 100_000);
    assert_eq!(after, plain);
    let e = indexed.unwrap_err();
    assert!(
        matches!(
            e,
            chesspack::archive::ArchiveError::IndexMemory {
                memory: 100_000,
                games: 300,
                ..
            }
        ),
        "{e:?}"
    );
    assert_eq!(
        e.to_string(),
        "the search index would take more than 97.7 KiB of memory by game 300 of the archive"
    );
    // Where the games' records alone (192 bytes a game as counted) would
    // take more, before any game is decoded.
    let (indexed, after) = index_file(&plain, false, 10_000);
    assert_eq!(after, plain);
    assert!(
        matches!(
            indexed,
            Err(chesspack::archive::ArchiveError::IndexMemory {
                memory: 10_000,
                games: 53,
                ..
            })
        ),
        "{indexed:?}"
    );
}

#[test]
fn issue_68_a_damaged_index_gives_no_wrong_answer() {
    let (_, indexed, plain) = fixture();
    // The index's entry for the section: a length and 16 bytes.
    let section = indexed.len() - plain.len() - 20;
    // A position of the tree, a material and a player: between them they
    // read every group of columns (each group is checked against its CRCs
    // when a query first reads it).
    let mut queries = [Query::default(), Query::default(), Query::default()];
    queries[0].moves = Some("e4 c5 Nf3 d6".into());
    queries[1].material = Some("KRPKR".into());
    queries[2].white = Some("a".into());
    let wants: Vec<_> = queries
        .iter()
        .map(|q| found_in(&plain, false, q).0)
        .collect();
    assert!(!wants[0].is_empty());
    // The section sits where the plain archive's index starts.
    let reader = ArchiveReader::open(Cursor::new(&plain)).unwrap();
    let last = reader.blocks().last().unwrap();
    let at = last.offset as usize + 16 + last.len as usize;
    let mut rng = Rng(3);
    for _ in 0..60 {
        let mut bad = indexed.clone();
        let i = at + rng.below(section);
        bad[i] ^= 1 << rng.below(8);
        let mut noticed = 0;
        for (q, want) in queries.iter().zip(&wants) {
            let (got_set, got) = find_in(&bad, q);
            assert_eq!(&got_set, want, "byte {i} flipped, {q:?}");
            assert_eq!(got.scanned, got.index_error.is_some(), "byte {i}");
            noticed += usize::from(got.scanned);
        }
        assert!(noticed > 0, "byte {i} flipped: no query noticed");
        // The games still read.
        let mut text = Vec::new();
        chesspack::decompress(Cursor::new(&bad), &mut text).unwrap();
    }
}

/// The bytes of an archive with a search section, pinned: a change of the
/// section's layout replaces this golden (docs/format.md, *Search section*).
const GOLDEN_INDEXED: &str = concat!(
    "4348504b0d0a1a0a1305696e6465780000000000000000dcce8077b38e926262c27ee943504b4231",
    "01000004000000784eb29d040a04040000000000000000333357686974650a426c61636b0a526573",
    "756c740a5768697465456c6f0a446174650a56617269616e740a53657455700a46454e0a00151501",
    "02030405000102030001020300010203060708003f9301800128b52ffd2093bd0300b2071a184077",
    "0ebd57ff63564d4f05da966e0713f734e23886e7aca6efc993ce6f8b9c39ce475a9c68919e0a21d5",
    "abf656db575dfb3e1b09086219f38487eea16826cec8415c78533ed33e256a5fca6f9ab59a1876cb",
    "03798b81dca5985f2cb340ad39474d07e42f4b592504006e16b98cc1cd60002e140008080e090e09",
    "0e090e09001212acd842917196856ab360aea1276d49be6120020a0a001402ad1b074b11b7000000",
    "000205050000000000020505000000000000000000000000060600000010010af01e21ab43504b53",
    "11040406060404030304041010080804040404080808081010040401010404010102021111080804",
    "040a0a04040000101010101010101010102d2d6020601c601f6015601560156023601e6020601760",
    "1760173dbcf78d762788a42c11aaac1cdf44210fed58dd80af21926ba9d8f6f67ec384e0181065a8",
    "0c010101004e900001010100030003ff000000ff000000ff000000ff5867a80c5073ffff02010300",
    "00000000dc0a0000000000000000000000000000250000002d000000330000000100000000010000",
    "0303000000005867c6487f00904ec64800d802c9fc004e9c00ffff28228122120000000000000001",
    "00000002010304000000000100000002000000040000000700000002000000010000000500000004",
    "0000000000000000000000000000000000000003000000030000000600000000000000040500001e",
    "040000ae040000010d000000416e616e64004361726c73656e004235300054616c00426f7476696e",
    "6e696b0042333100466973636865720028b52ffd2060bd00008800000000efffefff000000001818",
    "101000010019054b28b52ffd20609d00006802020281000000002020204000010030812f28b52ffd",
    "2060b50000702424242400040000020000000400020005d081811628b52ffd2060650000308181a1",
    "420000010037812228b52ffd206065000030080808080000010037812228b52ffd20606500003010",
    "1050100000010037812228b52ffd2060d500009000080000000404041008084400f3fffbff000200",
    "01a08dc11528b52ffd2060ad0000680020044000000000424240810002000452d2e00a28b52ffd20",
    "60bd000078000400000000000000002424242400020004927ae00a28b52ffd206075000030008181",
    "8142000200049286800d28b52ffd2060750000300008080808000200049286800d28b52ffd206075",
    "0000300010101010000200049286800d43504b490100000023000000000000003101000004000000",
    "00000000010000000a230000004348504b0d0a1a0a1305696e6465780000000000000000dcce8077",
    "b38e926262c27ee9100000006401000000000000bc020000000000002bab7dc42004000000000000",
    "04000000000000004348504b454e440a",
);

#[test]
fn issue_68_golden_archive_with_an_index() {
    let pgn = "[White \"Anand\"]\n[Black \"Carlsen\"]\n[Result \"1/2-1/2\"]\n[WhiteElo \"2780\"]\n[Date \"2013.11.09\"]\n\n1. e4 c5 2. Nf3 d6 3. d4 cxd4 1/2-1/2\n\n\
               [White \"Carlsen\"]\n[Black \"Anand\"]\n[Result \"1-0\"]\n\n1. Nf3 c5 2. e4 d6 3. d4 Nf6 1-0\n\n\
               [White \"Tal\"]\n[Black \"Botvinnik\"]\n[Result \"0-1\"]\n\n1. e4 c5 2. Nf3 Nc6 3. Bb5 g6 4. Bxc6 dxc6 5. O-O 0-1\n\n\
               [White \"Fischer\"]\n[Black \"Tal\"]\n[Result \"*\"]\n[Variant \"Chess960\"]\n[SetUp \"1\"]\n[FEN \"nrbqkbrn/pppppppp/8/8/8/8/PPPPPPPP/NRBQKBRN w KQkq - 0 1\"]\n\n1. e4 e5 2. Ng3 Ng6 3. Bc4 Bc5 *\n";
    let mut settings = Settings::default();
    settings.codec = Some("index".into());
    settings.pipeline.threads = 1;
    let mut packed = Vec::new();
    files::compress(
        Kind::Games,
        pgn.as_bytes(),
        &mut packed,
        &settings,
        &mut |_| ControlFlow::Continue(()),
    )
    .unwrap();
    // Issue 69: `compress` writes no section for three games; `index`
    // adds the one that it writes for more (here with the games' squares,
    // so that every column is pinned).
    assert!(
        !ArchiveReader::open(Cursor::new(&packed))
            .unwrap()
            .has_search_section()
    );
    let packed = indexed_with(packed, true);
    let hex: String = packed.iter().map(|b| format!("{b:02x}")).collect();
    if std::env::var_os("CHESSPACK_PRINT_GOLDEN").is_some() {
        println!("{hex}");
    }
    assert_eq!(
        hex, GOLDEN_INDEXED,
        "the format changed: replace the golden"
    );
    let mut text = Vec::new();
    chesspack::decompress(Cursor::new(&packed), &mut text).unwrap();
    assert_eq!(text, pgn.as_bytes());
    let mut q = Query::default();
    q.moves = Some("e4 c5 Nf3 d6".into());
    let (got, _) = found_in(&packed, true, &q);
    assert_eq!(got, BTreeSet::from([(1, 4), (2, 4)]));
    let mut q = Query::default();
    q.material = Some("KQRRBNNPPPPPPPPKQRRBBNPPPPPPPP".into());
    assert_eq!(found_in(&packed, true, &q).0, BTreeSet::from([(3, 8)]));
    // After 5. O-O White can no longer castle (a change of state); the
    // board after 4...dxc6 with White's castling gone is no game's.
    let mut q = Query::default();
    q.moves = Some("e4 c5 Nf3 Nc6 Bb5 g6 Bxc6 dxc6 O-O".into());
    assert_eq!(found_in(&packed, true, &q).0, BTreeSet::from([(3, 9)]));
    let mut q = Query::default();
    q.fen = Some("r1bqkbnr/pp2pp1p/2p3p1/2p5/4P3/5N2/PPPP1PPP/RNBQK2R w kq - 0 5".into());
    assert_eq!(found_in(&packed, true, &q).0, BTreeSet::new());
    q.fen = Some("r1bqkbnr/pp2pp1p/2p3p1/2p5/4P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 0 5".into());
    assert_eq!(found_in(&packed, true, &q).0, BTreeSet::from([(3, 8)]));
    // The Chess960 game, from its start's state.
    let mut q = Query::default();
    q.fen = Some("nrbqkbr1/pppp1ppp/6n1/4p3/4P3/6N1/PPPP1PPP/NRBQKBR1 w KQkq - 2 3".into());
    assert_eq!(found_in(&packed, true, &q).0, BTreeSet::from([(4, 4)]));
}

/// The varint at `bytes[*i..]`, `i` moved past it.
fn varint_at(bytes: &[u8], i: &mut usize) -> usize {
    let (mut v, mut shift) = (0usize, 0);
    loop {
        let b = bytes[*i];
        *i += 1;
        v |= usize::from(b & 0x7f) << shift;
        shift += 7;
        if b < 0x80 {
            return v;
        }
    }
}

/// The search section of an indexed archive: where it starts, its length,
/// where each column's unpacked length (a varint) is in its directory, and
/// where the directory's checksum is.
fn section_columns(indexed: &[u8], plain: &[u8]) -> (usize, usize, Vec<usize>, usize) {
    let reader = ArchiveReader::open(Cursor::new(plain)).unwrap();
    let last = reader.blocks().last().unwrap();
    let at = last.offset as usize + 16 + last.len as usize;
    let len = indexed.len() - plain.len() - 20;
    let varint = |i: &mut usize| varint_at(indexed, i);
    let mut i = at + 5;
    varint(&mut i);
    varint(&mut i);
    let mut columns = Vec::new();
    let mut frames = 0;
    // The directory: the section's 40 columns, then a CRC for each of
    // their seven groups.
    for _ in 0..40 {
        columns.push(i);
        varint(&mut i);
        frames += varint(&mut i);
    }
    i += 7 * 4;
    assert_eq!(i + 4 + frames, at + len, "the frames fill the section");
    (at, len, columns, i)
}

#[test]
fn issue_68_a_column_read_on_first_use_that_does_not_read_gives_no_wrong_answer() {
    let (games, _, plain) = fixture();
    // With the games' squares: every column has bytes.
    let indexed = pack_with_squares(&pgn_of(&games));
    let (at, _, columns, directory_end) = section_columns(&indexed, &plain);
    let mut queries = [
        Query::default(),
        Query::default(),
        Query::default(),
        Query::default(),
        Query::default(),
        Query::default(),
    ];
    queries[0].moves = Some("e4 c5 Nf3 d6".into());
    queries[1].material = Some("KRPKR".into());
    queries[2].white = Some("a".into());
    // An endgame, whose pawns' files are read.
    queries[3].fen = Some(endgames(&games)[0].0.clone());
    // A position with a pawn one step from home, whose games' changes
    // say how their pawns left home.
    let pushing = pushing_games(1, 68);
    queries[4].fen =
        Some(Fen::from_position(&positions(&pushing[0])[10], EnPassantMode::Legal).to_string());
    // Any of twelve patterns, each piece on a square far from its side
    // (few games found on the tree, most left to decode): every column
    // of squares is read.
    queries[5].sub_fen = [
        "K7/8/8/8/8/8/8/8",
        "7Q/8/8/8/8/8/8/8",
        "R7/8/8/8/8/8/8/8",
        "7B/8/8/8/8/8/8/8",
        "N7/8/8/8/8/8/8/8",
        "8/P7/8/8/8/8/8/8",
        "8/8/8/8/8/8/8/k7",
        "8/8/8/8/8/8/8/7q",
        "8/8/8/8/8/8/8/r7",
        "8/8/8/8/8/8/8/7b",
        "8/8/8/8/8/8/8/n7",
        "8/8/8/8/8/8/7p/8",
    ]
    .map(String::from)
    .to_vec();
    // What a replay finds, once (the queries decode the plain archive's
    // every game).
    let wants: Vec<_> = queries
        .iter()
        .map(|q| found_in(&plain, false, q).0)
        .collect();
    // Every column: those that every query reads, and the stretches, the
    // changes and their plies and the names, read when a query first
    // needs them; the directory's and the frame's checksums pass.
    for (column, &raw_at) in columns.iter().enumerate() {
        let mut bad = indexed.clone();
        // One less for its unpacked length (a varint of the same size).
        let before = bad[raw_at];
        if before & 0x7f == 0 {
            continue;
        }
        bad[raw_at] -= 1;
        let end = directory_end;
        let crc = crc32fast::hash(&bad[at..end]);
        bad[end..end + 4].copy_from_slice(&crc.to_le_bytes());
        let mut noticed = 0;
        for (q, want) in queries.iter().zip(&wants) {
            let (got_set, got) = find_in(&bad, q);
            assert_eq!(&got_set, want, "column {column}, {q:?}");
            assert_eq!(got.scanned, got.index_error.is_some());
            noticed += usize::from(got.scanned);
        }
        // A query that reads the column says so (a query that does not
        // read it answers from the others).
        assert!(noticed > 0, "column {column}");
    }
}

/// Where each column's frames are in an indexed archive (`plain`: the same
/// without its section).
fn column_frames(indexed: &[u8], plain: &[u8]) -> Vec<std::ops::Range<usize>> {
    let (_, _, columns, directory_end) = section_columns(indexed, plain);
    // Each column's frames, from the end of the directory's checksum.
    let mut at = directory_end + 4;
    let mut frames = Vec::new();
    for &i in &columns {
        let mut i = i;
        varint_at(indexed, &mut i);
        let stored = varint_at(indexed, &mut i);
        frames.push(at..at + stored);
        at += stored;
    }
    frames
}

/// `n` games from the standard start (of [`games`] with `seed`), their
/// archive with its section and without, and where each column's frames
/// are in the first.
fn standard_with_frames(
    n: usize,
    seed: u64,
) -> (Vec<Game>, Vec<u8>, Vec<u8>, Vec<std::ops::Range<usize>>) {
    let games: Vec<Game> = games(n, seed)
        .into_iter()
        .filter(|g| g.fen.is_none())
        .collect();
    let pgn = pgn_of(&games);
    let (indexed, plain) = (pack(&pgn, false), pack(&pgn, true));
    let frames = column_frames(&indexed, &plain);
    (games, indexed, plain, frames)
}

/// Issue 68: a game's early changes (up to the fourth piece it takes
/// after its node) decide a position with at most three pieces gone, and
/// its query reads no later ones: with those damaged it answers from the
/// index, the games of a replay, while the early ones damaged show that it
/// reads them. A position with more pieces gone, and a material, read the
/// later ones, and say so where they are damaged.
#[test]
fn regression_issue_68_a_position_with_few_pieces_gone_reads_the_early_changes_alone() {
    let (games, indexed, plain, frames) = standard_with_frames(160, 0x7e1e);
    let damaged = |column: usize| {
        assert!(!frames[column].is_empty(), "column {column}");
        let mut bad = indexed.clone();
        bad[frames[column].start + frames[column].len() / 2] ^= 0x10;
        bad
    };
    // Column 16: the early changes; 18: the later ones.
    let (bad_early, bad_later) = (damaged(16), damaged(18));
    let query = |pos: &Chess| {
        let mut q = Query::default();
        q.fen = Some(Fen::from_position(pos, EnPassantMode::Legal).to_string());
        q
    };
    // Positions past each game's twelfth ply: most are its own (off the
    // tree), some with three pieces gone or fewer, some with more.
    let (mut few, mut more) = (Vec::new(), Vec::new());
    for g in &games {
        for pos in positions(g).iter().skip(12).step_by(9) {
            let gone = 32 - pos.board().occupied().count();
            if gone <= 3 { &mut few } else { &mut more }.push(query(pos));
        }
    }
    assert!(
        few.len() >= 20 && more.len() >= 20,
        "{} {}",
        few.len(),
        more.len()
    );
    // A few of each (each query below replays every game).
    let (few, more) = (&few[..20], &more[..20]);
    let find = |archive: &[u8], q: &Query| {
        let (got, f) = find_in(archive, q);
        (got, f.scanned)
    };
    let mut read_early = 0;
    for q in few {
        let want = found_in(&plain, false, q).0;
        assert_eq!(find(&bad_later, q), (want.clone(), false), "{q:?}");
        let (got, scanned) = find(&bad_early, q);
        assert_eq!(got, want, "{q:?}");
        read_early += usize::from(scanned);
    }
    assert!(read_early > 0, "no position read the early changes");
    let mut read_later = 0;
    for q in more {
        let want = found_in(&plain, false, q).0;
        let (got, scanned) = find(&bad_later, q);
        assert_eq!(got, want, "{q:?}");
        read_later += usize::from(scanned);
    }
    assert!(read_later > 0, "no position read the later changes");
    let mut q = Query::default();
    q.material = Some("KRPKR".into());
    assert!(find(&bad_later, &q).1, "a material reads the later changes");
}

#[test]
fn regression_issue_68_a_query_of_tags_alone_reads_no_changes_of_state() {
    // The filters alone find every game at the tree's root: the changes of
    // state, which would rule games out, are not read (on the masters file
    // a query of a player took 111 ms, 62 of them reading them). A damaged
    // group of changes shows it: such a query still answers from the
    // index, a material reads them and says the section is damaged.
    let (_, indexed, plain, frames) = standard_with_frames(120, 0x7a65);
    // Column 16: the games' early changes.
    assert!(!frames[16].is_empty());
    let mut bad = indexed.clone();
    bad[frames[16].start + frames[16].len() / 2] ^= 0x10;
    let mut q = Query::default();
    q.white = Some("Carlsen".into());
    let want = found_in(&plain, false, &q).0;
    assert!(!want.is_empty());
    assert_eq!(found_in(&bad, true, &q).0, want);
    let mut q = Query::default();
    q.material = Some("KRPKR".into());
    let mut archives = [ArchiveReader::open(Cursor::new(&bad)).unwrap()];
    let got = search::find(&mut archives, &q).unwrap();
    assert!(got.scanned, "the damage is read by a material");
}

/// Endgame positions of the games (four pieces or fewer besides kings and
/// pawns, late in games from the standard start) as FENs, each with the
/// number of games that come to its material and home pawns: those a
/// search that did not know the pawns' files would decode.
fn endgames(games: &[Game]) -> Vec<(String, usize)> {
    // Material and the pawns on their home squares.
    let state = |p: &Chess| {
        let b = p.board();
        let home = (b.pawns() & b.white() & shakmaty::Bitboard::from_rank(shakmaty::Rank::Second))
            | (b.pawns() & b.black() & shakmaty::Bitboard::from_rank(shakmaty::Rank::Seventh));
        (material(b), home)
    };
    let pieces =
        |p: &Chess| (p.board().occupied() & !p.board().pawns() & !p.board().kings()).count();
    let mut out = Vec::new();
    for g in games.iter().filter(|g| g.fen.is_none()) {
        let ps = positions(g);
        let Some(pos) = ps
            .iter()
            .rev()
            .find(|p| pieces(p) <= 4 && p.board().pawns().any())
        else {
            continue;
        };
        let want = state(pos);
        let reach = games
            .iter()
            .filter(|h| positions(h).iter().any(|p| state(p) == want))
            .count();
        out.push((
            Fen::from_position(pos, EnPassantMode::Legal).to_string(),
            reach,
        ));
    }
    // Those that most games come to the material of first.
    out.sort_by_key(|&(_, reach)| std::cmp::Reverse(reach));
    out
}

/// Checks that `find` at `pos` gives the games and plies of a replay of
/// `games`, with the index and without; the games decoded with it.
fn found_as_replayed(games: &[Game], indexed: &[u8], plain: &[u8], pos: &Chess) -> u64 {
    let k = key(pos);
    let want = expected(games, |_| true, |p| key(p) == k);
    let fen = Fen::from_position(pos, EnPassantMode::Legal).to_string();
    let mut q = Query::default();
    q.fen = Some(fen.clone());
    let (got, report) = found_in(indexed, true, &q);
    assert_eq!(got, want, "{fen}");
    assert_eq!(
        found_in(plain, false, &q).0,
        want,
        "{fen} without the index"
    );
    report.decoded
}

/// Games whose sides each push their c, d and e pawns one or two steps
/// and make two knight moves, in an order of their own, then play on at
/// random: all come to the same material and home pawns, by many lines.
fn pushing_games(n: usize, seed: u64) -> Vec<Game> {
    let mut rng = Rng(seed);
    let mut out = Vec::new();
    while out.len() < n {
        let mut plans: [Vec<String>; 2] = [Vec::new(), Vec::new()];
        for (side, plan) in plans.iter_mut().enumerate() {
            let (one, two) = if side == 0 { ('3', '4') } else { ('6', '5') };
            for file in ['c', 'd', 'e'] {
                plan.push(format!(
                    "{file}{}",
                    if rng.below(2) == 0 { one } else { two }
                ));
            }
            plan.push("N".into());
            plan.push("N".into());
            for i in (1..plan.len()).rev() {
                plan.swap(i, rng.below(i + 1));
            }
        }
        let mut pos = Chess::default();
        let mut moves = Vec::new();
        let mut ok = true;
        for i in 0..10 {
            let step = &plans[i % 2][i / 2];
            let legal = pos.legal_moves();
            let m = if step == "N" {
                let quiet: Vec<Move> = legal
                    .iter()
                    .copied()
                    .filter(|m| m.role() == Role::Knight && !m.is_capture())
                    .collect();
                quiet.get(rng.below(quiet.len().max(1))).copied()
            } else {
                step.parse::<San>().ok().and_then(|s| s.to_move(&pos).ok())
            };
            let Some(m) = m.filter(|m| !m.is_capture()) else {
                ok = false;
                break;
            };
            pos.play_unchecked(m);
            moves.push(m);
        }
        if !ok {
            continue;
        }
        for _ in 0..rng.below(30) {
            let legal = pos.legal_moves();
            if legal.is_empty() {
                break;
            }
            let m = legal[rng.below(legal.len())];
            pos.play_unchecked(m);
            moves.push(m);
        }
        out.push(Game {
            start: Chess::default(),
            fen: None,
            moves,
            white: "Anand".into(),
            black: "Carlsen".into(),
            white_elo: 2700,
            black_elo: 2750,
            result: "*",
            date: "2020.01.01".into(),
        });
    }
    out
}

#[test]
fn regression_issue_68_openings_are_told_apart_by_pawns_pushed_one_step() {
    // Where every piece is on the board, a pawn on its third rank came
    // there by one step: of the games that come to a position's material
    // and home pawns, those that pushed that pawn two steps are ruled out
    // without decoding them, and the games found are a replay's.
    let games = pushing_games(400, 0x5eed_0068);
    let pgn = pgn_of(&games);
    let (indexed, plain) = (pack(&pgn, false), pack(&pgn, true));
    let (mut decoded, mut queries) = (0, 0);
    for g in games.iter().step_by(10) {
        decoded += found_as_replayed(&games, &indexed, &plain, &positions(g)[10]);
        queries += 1;
    }
    // Every game comes to each position's material and home pawns: a
    // search that did not know how the pawns left home would decode most
    // of them at every query.
    assert!(
        decoded * 4 < queries * games.len() as u64,
        "{decoded} decoded in {queries} queries of {} games",
        games.len()
    );
}

/// A board's material (each side's pawns to queens) and the pawns on their
/// home squares: what a game cannot undo, as the search section keeps it.
fn material_and_home(board: &Board) -> ([[usize; 5]; 2], u64) {
    let roles = [
        Role::Pawn,
        Role::Knight,
        Role::Bishop,
        Role::Rook,
        Role::Queen,
    ];
    let mut material = [[0; 5]; 2];
    for (side, color) in [Color::White, Color::Black].into_iter().enumerate() {
        for (i, role) in roles.into_iter().enumerate() {
            material[side][i] = board.by_piece(role.of(color)).count();
        }
    }
    let home = (board.by_piece(Role::Pawn.of(Color::White))
        & shakmaty::Bitboard::from_rank(shakmaty::Rank::Second))
        | (board.by_piece(Role::Pawn.of(Color::Black))
            & shakmaty::Bitboard::from_rank(shakmaty::Rank::Seventh));
    (material, home.0)
}

#[test]
fn regression_issue_68_middlegames_are_told_apart_by_pawns_pushed_one_step() {
    // After a capture, a pawn on its third rank still came there by one
    // step, unless a pawn of its side took from its home square: the games
    // that come to a position's material and home pawns but pushed that
    // pawn two steps are ruled out without decoding them (the slowest
    // positions of online games were such: move 7, a pawn each traded).
    let games = pushing_games(400, 0x5eed_0681);
    let pgn = pgn_of(&games);
    let (indexed, plain) = (pack(&pgn, false), pack(&pgn, true));
    let (mut decoded, mut reach, mut queries) = (0, 0, 0);
    for g in &games {
        // The first position after a capture, before any pawn took from
        // its home square, with a pawn on its third rank.
        let all = positions(g);
        let Some(at) = (11..all.len()).find(|&p| {
            let (before, after) = (&all[..p], &all[p]);
            let taken =
                material_and_home(after.board()).0 != material_and_home(before[0].board()).0;
            let from_home = g.moves[..p].iter().any(|m| {
                m.role() == Role::Pawn
                    && m.is_capture()
                    && matches!(
                        m.from().map(|f| f.rank()),
                        Some(shakmaty::Rank::Second | shakmaty::Rank::Seventh)
                    )
            });
            let third = (after.board().by_piece(Role::Pawn.of(Color::White))
                & shakmaty::Bitboard::from_rank(shakmaty::Rank::Third))
            .any()
                || (after.board().by_piece(Role::Pawn.of(Color::Black))
                    & shakmaty::Bitboard::from_rank(shakmaty::Rank::Sixth))
                .any();
            taken && !from_home && third
        }) else {
            continue;
        };
        let state = material_and_home(all[at].board());
        reach += games
            .iter()
            .filter(|h| {
                positions(h)
                    .iter()
                    .any(|p| material_and_home(p.board()) == state)
            })
            .count() as u64;
        decoded += found_as_replayed(&games, &indexed, &plain, &all[at]);
        queries += 1;
        if queries == 40 {
            break;
        }
    }
    assert!(queries >= 20, "{queries}");
    // (A search that ruled games out by their pushes only while every
    // piece was on the board decoded every game that came to the state.)
    assert!(
        decoded * 2 < reach,
        "{decoded} decoded of {reach} that come to the state in {queries} queries"
    );
}

#[test]
fn regression_issue_68_sub_fens_with_a_pawn_on_its_third_rank_rule_games_out_by_their_changes() {
    // A pawn comes to its third rank from its home square alone: by one
    // step, or by a capture to the file beside. A game whose changes
    // made neither on the pattern's file is ruled out without decoding
    // it; the games found are a replay's (those that took from home onto
    // the file included: the games play on at random after their pushes).
    let games = pushing_games(400, 0x5eed_0683);
    let pgn = pgn_of(&games);
    let (indexed, plain) = (pack(&pgn, false), pack(&pgn, true));
    let mut by_capture = 0;
    for (pawn, sub) in [
        (shakmaty::Square::D3, "8/8/8/8/8/3P4/8/8"),
        (shakmaty::Square::C6, "8/8/2p5/8/8/8/8/8"),
        (shakmaty::Square::E3, "8/8/8/8/8/4P3/8/4K3"),
    ] {
        let report = sub_fen_found_as_replayed(&games, &indexed, &plain, &sub.parse().unwrap());
        // The games none of whose pawns of the pattern's side left home
        // by one step on its file or by a capture from a file beside it
        // (a pawn's move from its home rank to the pattern's is its
        // side's): never decoded.
        let home = if pawn.rank() == shakmaty::Rank::Third {
            shakmaty::Rank::Second
        } else {
            shakmaty::Rank::Seventh
        };
        let near = |m: &Move| {
            m.role() == Role::Pawn
                && m.to().rank() == pawn.rank()
                && m.from().is_some_and(|from| {
                    from.rank() == home
                        && if m.is_capture() {
                            from.file().distance(pawn.file()) == 1
                        } else {
                            from.file() == pawn.file()
                        }
                })
        };
        let never = games.iter().filter(|g| !g.moves.iter().any(near)).count() as u64;
        by_capture += games
            .iter()
            .filter(|g| {
                g.moves
                    .iter()
                    .any(|m| m.is_capture() && m.to() == pawn && m.role() == Role::Pawn)
            })
            .count();
        assert!(never * 4 > games.len() as u64, "{sub}: {never} never near");
        assert!(
            report.decoded <= games.len() as u64 - never,
            "{sub}: {} decoded, {never} of {} never near",
            report.decoded,
            games.len()
        );
    }
    // Some pawns came to the squares by a capture (from home or later).
    assert!(by_capture > 0);
}

/// `pgn` packed with the squares each piece stood on in its index.
fn pack_with_squares(pgn: &str) -> Vec<u8> {
    let mut settings = Settings::default();
    settings.index_squares = true;
    settings.pipeline.threads = 2;
    settings.archive.block_games = 40;
    compressed(pgn, &settings)
}

/// Where each piece of each side stood in some positions of a game.
type Stood = HashMap<Piece, Bitboard>;

/// The squares each piece of each side stood on in a game's mainline: in
/// the positions up to ply 30, at plies 31–60 and after ply 60 (the
/// section's three parts).
fn squares_stood_on(g: &Game) -> [Stood; 3] {
    let mut out: [Stood; 3] = Default::default();
    for (ply, p) in positions(g).iter().enumerate() {
        let part = usize::from(ply > 30) + usize::from(ply > 60);
        for (sq, piece) in p.board() {
            *out[part].entry(piece).or_default() |= Bitboard::from_square(sq);
        }
    }
    out
}

#[test]
fn regression_issue_68_squares_kept_in_the_index_rule_games_out_before_decoding() {
    // With `index_squares`, a sub-FEN (and a position) that leaves many
    // games to decode decodes only those whose pieces stood on every
    // square where the pattern has them in one part of the game (up to
    // ply 30, to 60, after it; those only in an earlier part decoded no
    // further): the same games found, fewer decoded, and never one that a
    // replay's squares rule out.
    let (games, indexed, plain) = fixture();
    let squares = pack_with_squares(&pgn_of(&games));
    assert!(squares.len() > indexed.len(), "the squares take bytes");
    let stood: Vec<_> = games.iter().map(squares_stood_on).collect();
    let mut rng = Rng(68);
    let (mut with, mut without, mut filtered, mut split) = (0, 0, 0, 0);
    for _ in 0..30 {
        let g = &games[rng.below(games.len())];
        let ps = positions(g);
        let board = ps[rng.below(ps.len())].board().clone();
        let mut sub = Board::empty();
        let occupied: Vec<_> = board.occupied().into_iter().collect();
        for _ in 0..2 {
            let sq = occupied[rng.below(occupied.len())];
            sub.set_piece_at(sq, board.piece_at(sq).unwrap());
        }
        let report = sub_fen_found_as_replayed(&games, &squares, &plain, &sub);
        let mut q = Query::default();
        q.sub_fen = vec![sub.board_fen().to_string()];
        let before = found_in(&indexed, true, &q).1.decoded;
        // The games whose pieces stood on the pattern's squares in one
        // part of their moves, and those from a FEN (no node: always
        // decoded); and those that stood on them at some ply, the parts
        // taken together.
        let on = |parts: &[&Stood]| {
            sub.iter().all(|(sq, p)| {
                parts
                    .iter()
                    .any(|s| s.get(&p).is_some_and(|b| b.contains(sq)))
            })
        };
        let count = |pass: &dyn Fn(&[Stood; 3]) -> bool| {
            stood
                .iter()
                .zip(&games)
                .filter(|(s, g)| g.fen.is_some() || pass(s))
                .count() as u64
        };
        let passing = count(&|parts| parts.iter().any(|p| on(&[p])));
        let anywhere = count(&|[a, b, c]| on(&[a, b, c]));
        let fen = sub.board_fen();
        assert!(report.decoded <= before, "{fen}");
        if before >= 64 {
            filtered += 1;
            assert!(
                report.decoded <= passing,
                "{fen}: {} decoded, {passing} stood on its squares in one part",
                report.decoded
            );
            split += anywhere - passing;
        }
        with += report.decoded;
        without += before;
    }
    assert!(filtered >= 10, "{filtered} sub-FENs left 64 games or more");
    // The cuts rule games out: their pieces stood on the squares, but
    // only across them.
    assert!(
        split > 0,
        "no game stood on a pattern's squares across the cut"
    );
    assert!(
        with * 2 < without,
        "{with} decoded, {without} without the squares"
    );
}

#[test]
fn regression_issue_68_endgames_are_told_apart_by_their_pawns_files() {
    // Many games come to the same endgame material late: its pawns' files
    // (kept where few pieces are left) rule most of them out without
    // decoding them, and the games found are a replay's.
    let (games, indexed, plain) = fixture();
    let ends = endgames(&games);
    assert!(ends.len() >= 20, "{}", ends.len());
    let (mut decoded, mut reach) = (0, 0);
    for (fen, n) in &ends[..20] {
        let pos = fen
            .parse::<Fen>()
            .unwrap()
            .into_position::<Chess>(CastlingMode::Standard)
            .unwrap();
        decoded += found_as_replayed(&games, &indexed, &plain, &pos);
        reach += *n as u64;
    }
    assert!(
        decoded * 2 < reach,
        "{decoded} decoded of {reach} that come to the material"
    );
}

/// Starts that are not the standard position: Chess960 arrays (castling
/// with rooks off the corners), a position of the fixture's openings
/// (after 1. e4 e5 2. Nf3, which the tree has), a middlegame and an
/// endgame; and a FEN with more of a piece than a state counts (eight
/// queens and eight pawns: no game of chess, read despite too much
/// material), which every query decodes.
const OTHER_STARTS: &[(&str, bool)] = &[
    (
        "nrbqkbrn/pppppppp/8/8/8/8/PPPPPPPP/NRBQKBRN w KQkq - 0 1",
        true,
    ),
    (
        "rkrbbnqn/pppppppp/8/8/8/8/PPPPPPPP/RKRBBNQN w KQkq - 0 1",
        true,
    ),
    (
        "bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9",
        true,
    ),
    (
        "rnbqkbnr/pppp1ppp/8/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 1 2",
        false,
    ),
    (
        "r1bq1rk1/pp2bppp/2n1pn2/3p4/2PP4/2N1PN2/PP3PPP/R2QKB1R w KQ - 0 9",
        false,
    ),
    ("8/5k2/8/3p4/3P4/8/5K2/4R3 w - - 0 40", false),
    (TOO_MUCH, false),
];

/// The start of [`OTHER_STARTS`] with too much material.
const TOO_MUCH: &str = "k7/8/8/8/8/4K3/PPPPPPPP/QQQQQQQQ w - - 0 1";

/// `n` games from [`OTHER_STARTS`], played on at random.
fn from_other_starts(n: usize, seed: u64) -> Vec<Game> {
    let mut rng = Rng(seed);
    (0..n)
        .map(|i| {
            let (fen, chess960) = OTHER_STARTS[i % OTHER_STARTS.len()];
            let variant = chess960.then_some("Chess960");
            let start = chesspack::pgn::start_position(variant, Some(fen)).unwrap();
            let (mut pos, mut moves) = (start.clone(), Vec::new());
            play_on(&mut pos, &mut moves, 10 + rng.below(80), &mut rng);
            Game {
                start,
                fen: Some(fen.to_owned()),
                moves,
                white: "Fischer".into(),
                black: "Random".into(),
                white_elo: 2500,
                black_elo: 2500,
                result: "*",
                date: "2026.12.02".into(),
            }
        })
        .collect()
}

#[test]
fn regression_issue_68_games_from_another_start_are_settled_by_their_states() {
    // Games from another start (Chess960, a FEN) keep their start's state
    // and all their changes in the section, and where they come to the
    // tree: a query decodes them only where their states allow what it
    // looks for, not at every query (section version 12).
    let mut games = games(160, 0x5eed_0960);
    let others = from_other_starts(112, 0x0960_5eed);
    let unstated = others
        .iter()
        .filter(|g| g.fen.as_deref() == Some(TOO_MUCH))
        .count() as u64;
    let stated = others.len() as u64 - unstated;
    games.extend(others);
    let pgn = pgn_of(&games);
    let (indexed, plain) = (pack(&pgn, false), pack(&pgn, true));
    // Positions of the standard games from ply 4 on (most on the tree),
    // and endgames.
    let mut targets: Vec<Chess> = Vec::new();
    for g in games.iter().filter(|g| g.fen.is_none()).take(24) {
        let ps = positions(g);
        targets.push(ps[(4 + targets.len()) % ps.len()].clone());
    }
    let ends: Vec<Chess> = endgames(&games)
        .iter()
        .take(6)
        .map(|(fen, _)| {
            fen.parse::<Fen>()
                .unwrap()
                .into_position(CastlingMode::Standard)
                .unwrap()
        })
        .collect();
    let queries = (targets.len() + ends.len()) as u64;
    let mut decoded = 0;
    for pos in targets.iter().chain(&ends) {
        decoded += found_as_replayed(&games, &indexed, &plain, pos);
    }
    // Before, each query decoded every one of them; now only those whose
    // start has too much material for a state.
    let decoded = decoded - queries * unstated;
    assert!(
        decoded * 8 < queries * stated,
        "{decoded} games decoded by {queries} queries, {stated} from another start"
    );
    // Their own positions are found, at their start and later, Chess960
    // castling and too much material included (a query's FEN is read as a
    // game's `FEN` tag is).
    for g in games.iter().filter(|g| g.fen.is_some()).take(14) {
        let ps = positions(g);
        for ply in [0, 3, ps.len() - 1] {
            found_as_replayed(&games, &indexed, &plain, &ps[ply.min(ps.len() - 1)]);
        }
    }
    // A start that the tree has is found there without decoding: its
    // games come to the tree at ply 0.
    let after = "rnbqkbnr/pppp1ppp/8/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 1 2";
    let mut q = Query::default();
    q.fen = Some(after.into());
    let (got, report) = found_in(&indexed, true, &q);
    let from_there = games
        .iter()
        .enumerate()
        .filter(|(_, g)| g.fen.as_deref() == Some(after))
        .map(|(i, _)| (i as u64 + 1, 0))
        .collect::<BTreeSet<_>>();
    assert!(!from_there.is_empty());
    assert!(got.is_superset(&from_there), "{got:?}");
    assert_eq!(report.decoded, unstated);
    // A material is settled by the states alone: its ply is that of the
    // change that made it, or the start's.
    for material in ["KRPKP", "KRKP", "KQRRBBNNPPPPPPPPKQRRBBNNPPPPPPPP"] {
        let mut q = Query::default();
        q.material = Some(material.into());
        let want = expected(&games, |_| true, |p| self::material(p.board()) == material);
        let (got, report) = found_in(&indexed, true, &q);
        assert_eq!(got, want, "{material}");
        assert_eq!(report.decoded, unstated, "{material}");
    }
}

#[test]
fn issue_68_a_section_of_another_version_is_reported_and_the_games_are_decoded() {
    // An archive indexed by a build of another section version: the query
    // says so and how to mend it, and decodes every game instead.
    let (_, indexed, _) = fixture();
    let at = indexed
        .windows(4)
        .position(|w| w == b"CPKS")
        .expect("a search section");
    let mut older = indexed.clone();
    older[at + 4] -= 1;
    let mut q = Query::default();
    q.moves = Some("e4 c5 Nf3 d6".into());
    let (got, report) = found_in(&older, false, &q);
    let why = report.index_error.unwrap();
    let version = format!("search section version {} is not supported", older[at + 4]);
    assert!(
        why.contains(&version) && why.contains("`chesspack index`"),
        "{why}"
    );
    assert!(!why.contains("damaged"), "{why}");
    assert!(!got.is_empty());
    assert_eq!(got, found_in(&indexed, true, &q).0);
}

#[test]
fn issue_68_queries_on_one_open_archive_answer_as_on_a_fresh_one() {
    // The archive keeps its search section between queries (Python's
    // `Archive`, the web page): each answer is the one a fresh reader
    // gives, in any order of queries of every kind.
    let (_, indexed, _) = fixture();
    let mut queries = vec![Query::default(); 6];
    queries[0].moves = Some("e4 c5 Nf3 d6".into());
    queries[1].material = Some("KRPKR".into());
    queries[2].white = Some("a".into());
    queries[3].sub_fen = vec!["8/8/8/8/4P3/8/8/8".into()];
    queries[4].explore = true;
    queries[5].moves = Some("d4".into());
    queries[5].explore = true;
    let mut open = [ArchiveReader::open(Cursor::new(&indexed)).unwrap()];
    for round in 0..2 {
        for q in &queries {
            let kept = search::find(&mut open, q).unwrap();
            let mut fresh = [ArchiveReader::open(Cursor::new(&indexed)).unwrap()];
            let want = search::find(&mut fresh, q).unwrap();
            assert_eq!(kept.hits, want.hits, "round {round}, {q:?}");
            assert_eq!(kept.moves, want.moves, "round {round}, {q:?}");
            assert_eq!(kept.decoded, want.decoded, "round {round}, {q:?}");
            assert!(!kept.scanned);
        }
    }
}

/// Issue 68: games that leave the opening tree and come back to it later
/// (a transposition into a shared line, pieces moved out and back) are
/// found where they come back, from the index alone, with the ply and the
/// move they play there, as decoding every game finds them.
#[test]
fn issue_68_games_that_come_back_to_the_tree_are_found_without_decoding() {
    let lines = [
        "1. e4 e5 2. Nf3 Nc6 3. Bc4 Bc5 4. c3 Nf6",
        "1. e4 e5 2. Nf3 Nc6 3. Bc4 Bc5 4. c3 Nf6",
        // Into the shared line at ply 4, along it for two plies.
        "1. Nf3 Nc6 2. e4 e5 3. Bc4 Bc5 4. d3 d6",
        // Back to the start at ply 4 (a node's position), then along the
        // shared line to ply 9.
        "1. Nh3 Nh6 2. Ng1 Ng8 3. e4 e5 4. Nf3 Nc6 5. Bc4 Nf6",
        // A shared line that comes to the start again, then 1. e4 e5.
        "1. Nc3 Nc6 2. Nb1 Nb8 3. e4 e5 4. Nf3 d6",
        "1. Nc3 Nc6 2. Nb1 Nb8 3. e4 e5 4. Nf3 d6",
    ];
    let pgn: String = lines
        .iter()
        .enumerate()
        .map(|(i, l)| format!("[White \"w{i}\"]\n[Black \"b{i}\"]\n[Result \"*\"]\n\n{l} *\n\n"))
        .collect();
    let (indexed, plain) = (pack(&pgn, false), pack(&pgn, true));
    let cases: [(&str, &[(u64, u32)]); 4] = [
        ("e4 e5 Nf3 Nc6", &[(1, 4), (2, 4), (3, 4), (4, 8)]),
        ("e4 e5 Nf3 Nc6 Bc4", &[(1, 5), (2, 5), (3, 5), (4, 9)]),
        ("e4 e5", &[(1, 2), (2, 2), (4, 6), (5, 6), (6, 6)]),
        ("", &[(1, 0), (2, 0), (3, 0), (4, 0), (5, 0), (6, 0)]),
    ];
    for (line, want) in cases {
        let mut q = Query::default();
        q.moves = Some(line.into());
        let (got, report) = found_in(&indexed, true, &q);
        assert_eq!(got, want.iter().copied().collect(), "{line:?}");
        assert_eq!(report.decoded, 0, "{line:?}: from the index alone");
        assert_eq!(found_in(&plain, false, &q).0, got, "{line:?} decoded");
        q.explore = true;
        let moves = |archive: &[u8]| {
            let mut archives = [ArchiveReader::open(Cursor::new(archive)).unwrap()];
            let e = search::find(&mut archives, &q).unwrap();
            let m: Vec<(String, u64)> = e.moves.iter().map(|m| (m.san.clone(), m.games)).collect();
            (m, e.decoded)
        };
        let (explored, decoded) = moves(&indexed);
        assert_eq!(decoded, 0, "{line:?}: the explorer from the index alone");
        assert_eq!(explored, moves(&plain).0, "{line:?}: the explorer");
    }
    // After 1. e4 e5 2. Nf3 Nc6 3. Bc4: Bc5 three times, Nf6 once (the
    // game that came back at the start).
    let mut q = Query::default();
    q.moves = Some("e4 e5 Nf3 Nc6 Bc4".into());
    q.explore = true;
    let mut archives = [ArchiveReader::open(Cursor::new(&indexed)).unwrap()];
    let e = search::find(&mut archives, &q).unwrap();
    let got: Vec<(&str, u64)> = e.moves.iter().map(|m| (m.san.as_str(), m.games)).collect();
    assert_eq!(got, [("Bc5", 3), ("Nf6", 1)]);
}

/// Issue 68: the section keeps the games' ECO codes in the order of their
/// nodes (section version 14: the games of a line mostly share theirs, and
/// the column packs 5.6 times smaller on masters-pgnmentor); each game's is
/// still its own, in the hits and in a filter, as decoding the games gives
/// them (the games from a FEN, which have no node, among them).
#[test]
fn regression_issue_68_eco_codes_kept_by_node_are_each_games_own() {
    let (games, indexed, plain) = fixture();
    assert!(games.iter().any(|g| g.fen.is_some()));
    let every = Query::default();
    let ecos = |archive: &[u8], indexed: bool| -> Vec<(u64, String)> {
        let (_, f) = found_in(archive, indexed, &every);
        f.hits.iter().map(|h| (h.game, h.eco.to_string())).collect()
    };
    let got = ecos(&indexed, true);
    assert_eq!(got.len(), games.len());
    assert_eq!(got, ecos(&plain, false));
    let distinct: BTreeSet<&str> = got.iter().map(|(_, e)| e.as_str()).collect();
    assert!(distinct.len() >= 5, "{distinct:?}");
    // (An empty filter is none: the games from a FEN have no ECO.)
    for eco in distinct.into_iter().filter(|e| !e.is_empty()) {
        let mut q = Query::default();
        q.eco = Some(eco.into());
        let want: BTreeSet<(u64, u32)> = got
            .iter()
            .filter(|(_, e)| e == eco)
            .map(|&(g, _)| (g, 0))
            .collect();
        assert_eq!(found_in(&indexed, true, &q).0, want, "{eco}");
    }
}

/// Issue 68: the stretches back on the tree are read in two halves of the
/// games at once (over 4,096 games, where the pool has two threads): the
/// games of either half, and those at the cut, are found at their plies
/// from the index alone, as one pass through the stretches finds them.
#[test]
fn regression_issue_68_stretches_read_in_two_halves_find_every_game() {
    let lines = [
        "1. e4 e5 2. Nf3 Nc6 3. Bc4 Bc5 4. c3 Nf6",
        "1. Nf3 Nc6 2. e4 e5 3. Bc4 Bc5 4. d3 d6",
        "1. Nh3 Nh6 2. Ng1 Ng8 3. e4 e5 4. Nf3 Nc6 5. Bc4 Nf6",
        "1. Nc3 Nc6 2. Nb1 Nb8 3. e4 e5 4. Nf3 d6",
        "1. d4 d5 2. c4 e6",
    ];
    let games = 5_000;
    let pgn: String = (0..games)
        .map(|i| {
            let l = lines[i % lines.len()];
            format!("[White \"w{i}\"]\n[Black \"b{i}\"]\n[Result \"*\"]\n\n{l} *\n\n")
        })
        .collect();
    let indexed = pack(&pgn, false);
    // Each line's ply at each position: none where it does not come there.
    let cases: [(&str, [Option<u32>; 5]); 3] = [
        ("e4 e5 Nf3 Nc6", [Some(4), Some(4), Some(8), None, None]),
        ("e4 e5 Nf3 Nc6 Bc4", [Some(5), Some(5), Some(9), None, None]),
        ("e4 e5", [Some(2), None, Some(6), Some(6), None]),
    ];
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .unwrap();
    for (line, plies) in cases {
        let want: BTreeSet<(u64, u32)> = (0..games)
            .filter_map(|i| plies[i % lines.len()].map(|p| (i as u64 + 1, p)))
            .collect();
        let mut q = Query::default();
        q.moves = Some(line.into());
        q.threads = 2;
        let (got, report) = pool.install(|| found_in(&indexed, true, &q));
        assert_eq!(report.decoded, 0, "{line:?}: from the index alone");
        assert_eq!(got, want, "{line:?}");
    }
}

/// Issue 69: games that repeat. A match of engines without a book repeats
/// earlier games' moves and comments: each game's move streams are padded
/// to a byte, so the columns find the repeats, and a game whose numbers
/// repeat an earlier game's of the same moves is stored as that alone
/// (0.51 of `xz -9e` here; 0.56 before format 19; 10.3 times before
/// either). Where the
/// columns would still come to more than the text compressed (a lichess
/// game 200 times: its clocks are range-coded), the block is stored as its
/// text, the floor: never more than xz -9e and the archive's frame. Either
/// way the games are parsed games: their tags, and found by position with
/// and without the index.
#[test]
fn regression_issue_69_a_block_is_never_larger_than_xz_of_its_text() {
    let games_of = |text: &str| -> Vec<String> {
        text.split("[Event ")
            .skip(1)
            .map(|g| format!("[Event {}", g.trim_end()))
            .collect()
    };
    let engines = games_of(include_str!("../fixtures/archive/engine-cutechess.pgn"));
    let lichess = games_of(include_str!("../../../../samples/lichess-sample.pgn"));
    assert_eq!(engines.len(), 4);
    // 120 games, each one of the four with its own round; the first
    // lichess game 200 times.
    let pick = |round: usize| (round * 7 + round / 5) % 4;
    let with_round = |g: &str, round: usize| match g.find("[Round \"") {
        Some(at) => {
            let end = at + 8 + g[at + 8..].find('"').unwrap();
            format!("{}{round}{}\n\n", &g[..at + 8], &g[end..])
        }
        None => {
            let line = g.find('\n').unwrap();
            format!("{}\n[Round \"{round}\"]{}\n\n", &g[..line], &g[line..])
        }
    };
    let matches: String = (1..=120)
        .map(|r| with_round(&engines[pick(r)], r))
        .collect();
    let repeated: String = (1..=200).map(|r| with_round(&lichess[0], r)).collect();
    let first_moves = |g: &str| -> String {
        let movetext = &g[g.find("\n\n").unwrap()..];
        movetext
            .split_whitespace()
            .filter(|t| !t.contains('.') && !t.starts_with('{') && !t.ends_with('}'))
            .filter(|t| !t.starts_with('[') && !t.ends_with(']'))
            .take(5)
            .collect::<Vec<_>>()
            .join(" ")
    };
    let cases = [
        (&matches, 120, first_moves(&engines[0]), false),
        (&repeated, 200, first_moves(&lichess[0]), true),
    ];
    for (pgn, games, line, as_text) in cases {
        // In blocks of the default size: one.
        let pack = |no_index: bool| {
            let mut settings = Settings::default();
            settings.no_index = no_index;
            let mut out = Vec::new();
            let bytes = pgn.as_bytes();
            let report = files::compress(Kind::Games, bytes, &mut out, &settings, &mut |_| {
                ControlFlow::Continue(())
            })
            .unwrap();
            (out, report.games)
        };
        let ((indexed, _), (plain, report)) = (pack(false), pack(true));
        assert_eq!(report.text_blocks, u64::from(as_text));
        let xz = crate::common::xz_size(pgn.as_bytes());
        assert!(plain.len() <= xz + 250, "{} against xz {xz}", plain.len());
        // With the search section too: the repeated game's (870 KB of
        // text, 2,053 bytes stored, xz 2,020) would take it to 2,901, and
        // is left out; the matches keep theirs.
        assert!(
            indexed.len() <= xz + 250,
            "{} against xz {xz}",
            indexed.len()
        );
        let has_section = ArchiveReader::open(Cursor::new(&indexed))
            .unwrap()
            .has_search_section();
        assert_eq!(has_section, !as_text);
        if !as_text {
            assert!(
                plain.len() * 10 <= xz * 7,
                "{} against xz {xz}",
                plain.len()
            );
        }
        // Tags as parsed games give them.
        let mut r = ArchiveReader::open(Cursor::new(&plain)).unwrap();
        let block = r.read_block(0).unwrap();
        let tags = chesspack::archive::block_tags(r.codec(), &block).unwrap();
        assert_eq!(tags.len(), games);
        for (i, t) in tags.iter().enumerate() {
            assert!(t.verbatim.is_none(), "a parsed game");
            let round = (i + 1).to_string();
            assert!(t.tags.contains(&(b"Round".to_vec(), round.into_bytes())));
        }
        // The games of the first one's opening, found as a replay finds
        // them.
        let want: BTreeSet<(u64, u32)> = (1..=games)
            .filter(|&r| as_text || pick(r) == 0)
            .map(|r| (r as u64, 5))
            .collect();
        let mut q = Query::default();
        q.moves = Some(line.clone());
        for (archive, is_indexed) in [(&indexed, has_section), (&plain, false)] {
            let (got, _) = found_in(archive, is_indexed, &q);
            assert_eq!(got, want, "{line}: indexed {is_indexed}");
        }
    }
}

/// Issue 69: a one-game file came out 524 bytes with the search section
/// where `xz -9e` took 232: `compress` writes none for fewer than 32 games
/// (16 before a 17-game cutechess file came out 0.72 of xz with its
/// section, 0.45 without), whose queries decode them and give the same
/// games.
#[test]
fn regression_issue_69_small_archives_are_searched_without_a_section() {
    let games = games(32, 0x69);
    for n in [1, 15, 16, 31, 32] {
        let pgn = pgn_of(&games[..n]);
        let (packed, plain) = (pack_default(&pgn, false), pack_default(&pgn, true));
        let indexed = n >= 32;
        assert_eq!(packed.len() > plain.len(), indexed, "{n} games");
        let mut q = Query::default();
        q.moves = Some("e4".into());
        let mut e4 = Chess::default();
        e4.play_unchecked("e4".parse::<San>().unwrap().to_move(&e4).unwrap());
        let want = expected(&games[..n], |_| true, |p| key(p) == key(&e4));
        assert_eq!(found_in(&packed, indexed, &q).0, want, "{n} games");
        assert_eq!(
            found_in(&with_index(packed), true, &q).0,
            want,
            "{n} games, indexed"
        );
    }
}

/// `pgn` compressed with the default settings (but for `no_index`).
fn pack_default(pgn: &str, no_index: bool) -> Vec<u8> {
    let mut settings = Settings::default();
    settings.no_index = no_index;
    compressed(pgn, &settings)
}

/// Issue 68, section version 13: the games' numbers (results, ratings,
/// dates) are frames of 16 KiB, and a query that finds a few games
/// unpacks only theirs. On an archive whose ratings and dates are several
/// frames each, the numbers of a game found alone (its last position),
/// and of every game found by a filter (all frames at once), are its tags.
#[test]
fn regression_issue_68_the_numbers_of_a_few_games_found_are_their_tags() {
    let mut games = games(8_400, 0x5eed_0013);
    for g in &mut games {
        // Short games: the test is about the numbers, not the moves.
        let plies = g.moves.len().min(24);
        g.moves.truncate(plies);
    }
    let mut settings = Settings::default();
    settings.codec = Some("index".into());
    settings.pipeline.threads = 2;
    let archive = compressed(&pgn_of(&games), &settings);
    let archive = with_index(archive);
    let numbers = |h: &search::Hit| (h.white_elo, h.black_elo, h.result, h.date.to_string());
    let tags = |g: &Game| {
        (
            g.white_elo as u16,
            g.black_elo as u16,
            if g.result == "*" { "" } else { g.result },
            g.date.clone(),
        )
    };
    // Games spread over the archive, each found by its last position
    // where no other game has it.
    let mut last: HashMap<u64, usize> = HashMap::new();
    for g in &games {
        *last.entry(key(positions(g).last().unwrap())).or_default() += 1;
    }
    let mut checked = 0;
    for (i, g) in games.iter().enumerate().step_by(211) {
        let end = positions(g).pop().unwrap();
        if last[&key(&end)] > 1 || g.fen.is_some() {
            continue;
        }
        let mut q = Query::default();
        q.fen = Some(Fen::from_position(&end, EnPassantMode::Legal).to_string());
        let (found, f) = found_in(&archive, true, &q);
        let hit = f.hits.iter().find(|h| h.game == i as u64 + 1);
        assert!(hit.is_some(), "game {} at {found:?}", i + 1);
        assert_eq!(numbers(hit.unwrap()), tags(g), "game {}", i + 1);
        checked += 1;
    }
    assert!(checked >= 20, "{checked} games checked");
    // A filter looks at every game's numbers: all frames at once.
    let mut q = Query::default();
    q.min_elo = Some(2600);
    let (_, f) = found_in(&archive, true, &q);
    let want: Vec<_> = games
        .iter()
        .filter(|g| (g.white_elo + g.black_elo) / 2 >= 2600)
        .map(tags)
        .collect();
    let got: Vec<_> = f.hits.iter().map(numbers).collect();
    assert_eq!(got, want);
}

#[test]
fn regression_issue_68_games_with_a_null_move_are_not_searched_with_or_without_the_index() {
    // A game whose mainline has a null move comes to the builder as text
    // (its record would leave the null out), so it is not searched, and
    // says so, with the index as without it; the builder, which no longer
    // checks each move's legality, sees only the other games' records.
    let mut pgn = String::new();
    for i in 0..40 {
        let moves = match i % 4 {
            0 => "1. e4 e5 2. -- Nc6 3. Nf3 Nf6",
            1 => "1. e4 e5 2. Nf3 -- 3. Bc4 Nc6",
            2 => "1. d4 -- -- d5 2. c4 e6",
            _ => "1. e4 e5 2. Nf3 Nc6 3. Bb5 a6",
        };
        pgn += &format!(
            "[Event \"Nulls\"]\n[White \"A{i}\"]\n[Black \"B\"]\n[Result \"*\"]\n\n{moves} *\n\n"
        );
    }
    let indexed = pack(&pgn, false);
    let plain = pack(&pgn, true);
    // The games without a null move (every fourth) that reach each.
    let every_fourth: BTreeSet<u64> = (1..=40).filter(|n| n % 4 == 0).collect();
    let cases = [
        // After 1. e4 e5, and 2. Nf3.
        (
            "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2",
            &every_fourth,
        ),
        (
            "rnbqkbnr/pppp1ppp/8/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 1 2",
            &every_fourth,
        ),
        // After 1. d4: only games with a null move.
        (
            "rnbqkbnr/pppppppp/8/8/3P4/8/PPP1PPPP/RNBQKBNR b KQkq - 0 1",
            &BTreeSet::new(),
        ),
        // After 1. e4 e5 2. Nf3 Nc6 3. Bb5 a6.
        (
            "r1bqkbnr/1ppp1ppp/p1n5/1B2p3/4P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 0 4",
            &every_fourth,
        ),
    ];
    for (fen, want) in cases {
        let mut q = Query::default();
        q.fen = Some(fen.to_owned());
        let (with, f) = found_in(&indexed, true, &q);
        let (without, g) = found_in(&plain, false, &q);
        assert_eq!(with, without, "{fen}");
        let got: BTreeSet<u64> = with.iter().map(|&(game, _)| game).collect();
        assert_eq!(&got, want, "{fen}");
        assert_eq!((f.not_searched, g.not_searched), (30, 30), "{fen}");
    }
}

/// `games` games of a few short lines, with results, ratings and dates
/// that repeat: for the tests of work split among threads.
fn lines_games(games: usize) -> String {
    let lines = [
        "1. e4 e5 2. Nf3 Nc6",
        "1. e4 c5 2. Nf3 d6",
        "1. d4 d5 2. c4 e6",
        "1. e4 e5 2. Nf3 Nf6",
        "1. Nf3 d5",
        "1. e4 c5 2. Nc3",
        "1. d4 Nf6",
    ];
    let results = ["1-0", "0-1", "1/2-1/2", "*"];
    (0..games)
        .map(|i| {
            let l = lines[(i * 5 + i / 7) % lines.len()];
            let r = results[(i / 3) % results.len()];
            let (we, be) = (2000 + (i * 37) % 700, 2000 + (i * 53) % 700);
            let date = format!("20{:02}.{:02}.01", 10 + i % 13, 1 + (i / 13) % 12);
            format!(
                "[White \"w{i}\"]\n[Black \"b{i}\"]\n[Date \"{date}\"]\n[Result \"{r}\"]\n[WhiteElo \"{we}\"]\n[BlackElo \"{be}\"]\n\n{l} {r}\n\n"
            )
        })
        .collect()
}

/// The games at the position after the moves `line` in `archive` (with
/// `explore`, the explorer's counts there), searched on a pool of
/// `threads` threads.
fn on_pool(archive: &[u8], threads: usize, line: &str, explore: bool) -> search::Found {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap();
    let mut q = Query::default();
    q.moves = Some(line.into());
    q.explore = explore;
    q.threads = threads;
    pool.install(|| {
        let mut archives = [ArchiveReader::open(Cursor::new(archive)).unwrap()];
        search::find(&mut archives, &q).unwrap()
    })
}

#[test]
fn regression_issue_68_the_explorer_counts_a_range_of_games_a_thread() {
    // At a position of the tree the explorer counts the games a range a
    // thread (4,096 games or more) and adds the counts up: the same moves,
    // results, ratings, latest and best games as one thread counting, and
    // as decoding every game. Dates and ratings repeat across the ranges,
    // so that the latest and best games are decided by their numbers too.
    let pgn = lines_games(5_000);
    let indexed = pack(&pgn, false);
    let plain = pack(&pgn, true);
    let explore =
        |archive: &[u8], threads: usize, line: &str| on_pool(archive, threads, line, true);
    for line in ["", "e4", "e4 e5 Nf3"] {
        let two = explore(&indexed, 2, line);
        assert!(!two.scanned && two.decoded == 0, "{line:?}: from the index");
        assert!(two.moves.len() >= 2, "{line:?}: {:?}", two.moves);
        assert_eq!(two.moves, explore(&indexed, 1, line).moves, "{line:?}");
        let decoded = explore(&plain, 2, line);
        assert!(decoded.scanned, "{line:?}");
        assert_eq!(two.moves, decoded.moves, "{line:?}");
    }
}

#[test]
fn regression_issue_68_the_games_below_a_node_are_found_a_run_a_thread() {
    // The games below the nodes at a position are found a run of 4,096
    // games a worker (each game's ply and next move its own), and the
    // numbers unpacked beside them at the start position: every game and
    // ply as one thread finds them and as decoding every game does, at
    // the start (every game below the root: both runs), after a move and
    // deeper; the explorer's counts too, where its games' numbers are
    // unpacked while they are found.
    let pgn = lines_games(5_000);
    let indexed = pack(&pgn, false);
    let plain = pack(&pgn, true);
    let hits =
        |f: &search::Found| -> Vec<(u64, u32)> { f.hits.iter().map(|h| (h.game, h.ply)).collect() };
    for (line, ply) in [("", 0), ("e4", 1), ("e4 c5", 2), ("e4 e5 Nf3", 3)] {
        let two = on_pool(&indexed, 2, line, false);
        assert!(!two.scanned && two.decoded == 0, "{line:?}: from the index");
        assert!(two.hits.iter().all(|h| h.ply == ply), "{line:?}");
        let decoded = on_pool(&plain, 2, line, false);
        assert!(decoded.scanned, "{line:?}");
        assert_eq!(hits(&two), hits(&decoded), "{line:?}");
        assert_eq!(
            hits(&two),
            hits(&on_pool(&indexed, 1, line, false)),
            "{line:?}"
        );
        let want = on_pool(&plain, 2, line, true).moves;
        assert_eq!(on_pool(&indexed, 2, line, true).moves, want, "{line:?}");
        assert_eq!(on_pool(&indexed, 1, line, true).moves, want, "{line:?}");
    }
    assert_eq!(on_pool(&indexed, 2, "", false).hits.len(), 5_000);
}

#[test]
fn regression_issue_68_a_position_at_many_nodes_finds_each_game_at_its_first_time_there() {
    // The position after 1. Nf3 Nf6 2. Nc3 Nc6 is at a node of each of its
    // four move orders (disjoint subtrees), again below them where the
    // knights go back and out (a node inside a found node's subtree), and
    // on stretches of games that come to it off their own lines. The
    // games below the nodes found are found in one pass through the games
    // (a bit a node where there are more than two subtrees): each at its
    // first time there, with the move it played, as decoding every game
    // finds them.
    let orders = [
        "Nf3 Nf6 Nc3 Nc6",
        "Nc3 Nc6 Nf3 Nf6",
        "Nf3 Nc6 Nc3 Nf6",
        "Nc3 Nf6 Nf3 Nc6",
    ];
    let tails = [
        "e4 e5",
        "d4 d5",
        "Ng1 Ng8 Nf3 Nf6 e4",
        "Nb1 Nb8 Nc3 Nc6 d4",
        "g3 g6",
    ];
    // Alone on their lines after a shared start, then to the position.
    let strays = [
        "Nf3 Nf6 Ng1 Ng8 Nc3 Nc6 Nf3 Nf6 e3",
        "Nc3 Nc6 Nb1 Nb8 Nf3 Nf6 Nc3 Nc6 a3",
        "Nf3 Nc6 Ng1 Nb8 Nc3 Nf6 Nf3 Nc6 h3",
    ];
    let mut lines: Vec<String> = Vec::new();
    for o in orders {
        for t in tails {
            lines.push(format!("{o} {t}"));
        }
    }
    lines.extend(strays.iter().map(|s| s.to_string()));
    let results = ["1-0", "0-1", "1/2-1/2"];
    let games = 240;
    let pgn: String = (0..games)
        .map(|i| {
            let l = &lines[i % lines.len()];
            let r = results[i % results.len()];
            let moves: Vec<&str> = l.split(' ').collect();
            let text: Vec<String> = moves
                .chunks(2)
                .enumerate()
                .map(|(n, m)| format!("{}. {}", n + 1, m.join(" ")))
                .collect();
            format!(
                "[White \"w{i}\"]\n[Black \"b{i}\"]\n[Result \"{r}\"]\n[WhiteElo \"{}\"]\n[BlackElo \"2100\"]\n\n{} {r}\n\n",
                2000 + i,
                text.join(" ")
            )
        })
        .collect();
    let indexed = pack(&pgn, false);
    let plain = pack(&pgn, true);
    let mut q = Query::default();
    q.moves = Some("Nf3 Nf6 Nc3 Nc6".into());
    for threads in [1, 2] {
        q.threads = threads;
        q.explore = false;
        let (found, f) = found_in(&indexed, true, &q);
        assert_eq!(f.decoded, 0, "found on the tree");
        let (scanned, _) = found_in(&plain, false, &q);
        assert_eq!(found.len(), games, "every game comes to it");
        assert_eq!(found, scanned, "{threads} threads");
        // The strays come to it at ply 8, the others at ply 4.
        assert!(found.iter().any(|&(_, ply)| ply == 8));
        q.explore = true;
        let (_, explored) = found_in(&indexed, true, &q);
        let (_, decoded) = found_in(&plain, false, &q);
        assert_eq!(explored.moves, decoded.moves, "{threads} threads");
        assert_eq!(explored.moves.len(), 8, "{:?}", explored.moves);
    }
}
