//! Bits, hit rates and speed of the engine's move scoring at one depth, on
//! held-out games: `cargo run --release --example engine_probe -- FILE.pgn.zst GAMES DEPTH [nobook]`.
use std::time::Instant;

use chesspack::{
    game::engine_codec::{Coding, EngineParams, cost, score_game, tune_k},
    pgn::GameReader,
};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let path = &args[1];
    let n: usize = args[2].parse().unwrap();
    let depth: u8 = args[3].parse().unwrap();
    let params = EngineParams {
        depth,
        book: args.get(4).is_none_or(|a| a != "nobook"),
        ..EngineParams::default()
    };
    let f = std::fs::File::open(path).unwrap();
    let r = zstd::Decoder::new(f).unwrap();
    let games: Vec<_> = GameReader::new(r)
        .filter_map(Result::ok)
        .filter(|g| chesspack::holdout::is_held_out(&chesspack::holdout::game_key(g)))
        .take(n)
        .collect();
    let plies: usize = games.iter().map(|g| g.moves.len()).sum();
    let t = Instant::now();
    let mut scored = Vec::new();
    for g in &games {
        scored.extend(score_game(&g.start, &g.moves, params).unwrap());
    }
    let el = t.elapsed().as_secs_f64();
    let mut hits = [0usize; 4];
    for p in &scored {
        hits[p.rank(params.k_tenths).min(3)] += 1;
    }
    let nf = scored.len() as f64;
    println!(
        "depth {depth}: {plies} plies ({} unforced) {:.0} plies/s; top1 {:.3} top2 {:.3} top3 {:.3} other {:.3}",
        scored.len(),
        plies as f64 / el,
        hits[0] as f64 / nf,
        hits[1] as f64 / nf,
        hits[2] as f64 / nf,
        hits[3] as f64 / nf
    );
    for coding in [Coding::Huffman, Coding::Arith] {
        let k = tune_k(&scored, coding);
        println!(
            "  {coding:?}: k=80 {:.3} bits/ply; tuned k={} {:.3}",
            cost(&scored, coding, 800) / plies as f64,
            f64::from(k) / 10.0,
            cost(&scored, coding, k) / plies as f64
        );
    }
}
