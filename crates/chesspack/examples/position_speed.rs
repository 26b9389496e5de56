//! `position-model` encode and decode speed on one core, as the best of
//! many short rounds (a noisy machine slows some rounds, never speeds one
//! up): `cargo run --release --example position_speed FILE [ROUNDS]`, FILE
//! with one EPD/FEN per line or a CSV with the FEN in the second column.

use std::{
    io::{BufRead, BufReader},
    time::Instant,
};

use chesspack::position::{self, PositionCodec, PositionModel};

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args.next().expect("usage: position_speed FILE [ROUNDS]");
    let rounds: usize = args.next().map_or(30, |r| r.parse().expect("rounds"));
    let file = std::fs::File::open(&path).expect("file");
    let positions: Vec<_> = BufReader::new(file)
        .lines()
        .map(|l| l.expect("readable file"))
        .filter_map(|line| {
            let fen = if line.contains(',') {
                line.split(',').nth(1).unwrap_or("").to_string()
            } else {
                line
            };
            position::parse_fen(&fen).ok()
        })
        .collect();
    let codec = PositionModel;
    let streams: Vec<_> = positions
        .iter()
        .map(|p| codec.encode(p).expect("encodes"))
        .collect();
    let (mut enc, mut dec) = (f64::MAX, f64::MAX);
    for _ in 0..rounds {
        let t = Instant::now();
        let mut bits = 0;
        for p in &positions {
            bits += codec.encode(p).expect("encodes").len();
        }
        enc = enc.min(t.elapsed().as_secs_f64());
        let t = Instant::now();
        for s in &streams {
            std::hint::black_box(codec.decode(s).expect("decodes"));
        }
        dec = dec.min(t.elapsed().as_secs_f64());
        std::hint::black_box(bits);
    }
    let n = positions.len() as f64;
    println!(
        "{} positions, best of {rounds}: encode {:.0} pos/s, decode {:.0} pos/s",
        positions.len(),
        n / enc,
        n / dec
    );
}
