//! Decoding speed of one codec on one core: `cargo run --release --example
//! decode_speed FILE.pgn CODEC [ROUNDS]`. Encodes every game once, then
//! decodes them all ROUNDS times and prints plies a second (in each game's
//! context, as archives code it).

use std::time::Instant;

use chesspack::{game, pgn::GameReader};

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args
        .next()
        .expect("usage: decode_speed FILE CODEC [ROUNDS]");
    let name = args.next().expect("a codec");
    let rounds: usize = args.next().map_or(3, |n| n.parse().expect("a number"));
    let file = std::fs::File::open(&path).expect("file");
    let codec = game::codec(&name).expect("codec");
    let mut coded = Vec::new();
    let mut plies = 0;
    for g in GameReader::new(std::io::BufReader::new(file)).flatten() {
        let c = codec.in_context(&g.context());
        if let Ok(bits) = c.encode_counted(&g.start, &g.moves) {
            plies += g.moves.len();
            coded.push((c, g.start, bits, g.moves.len()));
        }
    }
    for _ in 0..rounds {
        let t = Instant::now();
        for (c, start, bits, n) in &coded {
            let moves = c.decode_counted(start, bits, *n).expect("decodes");
            assert_eq!(moves.len(), *n);
        }
        let s = t.elapsed().as_secs_f64();
        println!(
            "{name}: {plies} plies in {s:.3} s, {:.0} plies/s",
            plies as f64 / s
        );
    }
}
