//! Encode and decode speed of every codec on the sample games and positions
//! shipped in `samples/`.

use std::hint::black_box;

use chesspack::{game, pgn::GameReader, position};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

fn games(c: &mut Criterion) {
    let pgn = include_str!("../../../samples/lichess-sample.pgn");
    let games: Vec<_> = GameReader::new(pgn.as_bytes()).flatten().collect();
    let plies: u64 = games.iter().map(|g| g.moves.len() as u64).sum();
    let mut group = c.benchmark_group("game");
    group.throughput(Throughput::Elements(plies));
    for codec in game::codecs() {
        let encoded: Vec<_> = games
            .iter()
            .map(|g| codec.encode(&g.start, &g.moves).unwrap())
            .collect();
        group.bench_function(format!("{}/encode", codec.name()), |b| {
            b.iter(|| {
                for g in &games {
                    black_box(codec.encode(&g.start, &g.moves).unwrap());
                }
            })
        });
        group.bench_function(format!("{}/decode", codec.name()), |b| {
            b.iter(|| {
                for (g, bits) in games.iter().zip(&encoded) {
                    black_box(codec.decode(&g.start, bits).unwrap());
                }
            })
        });
    }
    group.finish();
}

fn positions(c: &mut Criterion) {
    let csv = include_str!("../../../samples/puzzles-sample.csv");
    let positions: Vec<_> = csv
        .lines()
        .skip(1)
        .filter_map(|l| l.split(',').nth(1))
        .filter_map(|fen| position::parse_fen(fen).ok())
        .collect();
    let mut group = c.benchmark_group("position");
    group.throughput(Throughput::Elements(positions.len() as u64));
    for codec in position::codecs() {
        let encoded: Vec<_> = positions.iter().map(|p| codec.encode(p).unwrap()).collect();
        group.bench_function(format!("{}/encode", codec.name()), |b| {
            b.iter(|| {
                for p in &positions {
                    black_box(codec.encode(p).unwrap());
                }
            })
        });
        group.bench_function(format!("{}/decode", codec.name()), |b| {
            b.iter(|| {
                for bits in &encoded {
                    black_box(codec.decode(bits).unwrap());
                }
            })
        });
    }
    group.finish();
}

criterion_group!(benches, games, positions);
criterion_main!(benches);
