//! Speed of a game archive's position rows on one core: `cargo run
//! --release --example position_rows_speed ARCHIVE [ROUNDS] [COLUMNS]`.
//! Decodes every block ROUNDS times three ways and prints positions a
//! second for each (the best round): the games' records alone (moves,
//! clocks, tags: what the rows are made from), the default rows, and the
//! rows of COLUMNS (comma-separated, default `uci,fen`).

use std::time::Instant;

use chesspack::{
    archive::{ArchiveReader, decode_records},
    datasets::rows::{Column, block_positions},
};

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args
        .next()
        .expect("usage: position_rows_speed ARCHIVE [ROUNDS] [COLUMNS]");
    let rounds: usize = args.next().map_or(3, |n| n.parse().expect("a number"));
    let extra: Vec<Column> = args
        .next()
        .unwrap_or_else(|| "uci,fen".into())
        .split(',')
        .map(|c| Column::from_name(c).expect("a column"))
        .collect();
    let file = std::fs::File::open(&path).expect("archive");
    let mut r = ArchiveReader::open(std::io::BufReader::new(file)).expect("archive");
    let blocks: Vec<_> = (0..r.blocks().len())
        .map(|i| (r.first_game(i) - 1, r.read_block(i).expect("block")))
        .collect();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .expect("pool");
    let defaults = Column::defaults();
    pool.install(|| {
        let mut positions = 0usize;
        let mut best = [f64::MAX; 3];
        for _ in 0..rounds {
            let t = Instant::now();
            let mut n = 0;
            for (_, b) in &blocks {
                decode_records(r.codec(), b, &|_| true, &mut |_, row| {
                    if let chesspack::archive::GameRow::Record(g) = row {
                        n += g.moves.len();
                    }
                })
                .expect("decode");
            }
            best[0] = best[0].min(t.elapsed().as_secs_f64());
            positions = n;
            for (k, columns) in [(1, &defaults), (2, &extra)] {
                let t = Instant::now();
                let mut m = 0;
                for (first, b) in &blocks {
                    m += block_positions(r.codec(), b, *first, columns)
                        .expect("rows")
                        .rows;
                }
                best[k] = best[k].min(t.elapsed().as_secs_f64());
                assert_eq!(m, positions);
            }
        }
        let names = ["records", "default rows", "extra"];
        for (name, secs) in names.iter().zip(best) {
            println!(
                "{name:>14}: {positions} positions in {secs:.3} s = {:.0} positions/s",
                positions as f64 / secs
            );
        }
    });
}
