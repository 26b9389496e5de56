//! Average bits per ply against move number for the `index`, `fast` and
//! `model` codecs on held-out games, as an SVG plot:
//! `cargo run --release --example bits_by_ply FILE.pgn[.zst] GAMES > plot.svg`

use std::{
    fmt::Write as _,
    io::{BufReader, Read},
};

use chesspack::{
    game::{self, GameCodec},
    holdout,
    pgn::GameReader,
};

const MOVES: usize = 80; // full moves on the x axis

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args.next().expect("usage: bits_by_ply FILE GAMES");
    let games: usize = args.next().map_or(1000, |n| n.parse().expect("a number"));
    let file = std::fs::File::open(&path).expect("file");
    let input: Box<dyn Read> = if path.ends_with(".zst") {
        Box::new(zstd::Decoder::new(file).expect("zstd"))
    } else {
        Box::new(file)
    };
    let codecs: Vec<Box<dyn GameCodec>> = ["index", "fast", "model"]
        .iter()
        .map(|n| game::codec(n).expect("codec"))
        .collect();
    let mut sums = vec![vec![0f64; MOVES]; codecs.len()];
    let mut counts = vec![0u64; MOVES];
    let mut used = 0;
    for g in GameReader::new(BufReader::new(input)).flatten() {
        if !holdout::is_held_out(&holdout::game_key(&g)) {
            continue;
        }
        for (c, codec) in codecs.iter().enumerate() {
            // In the game's context (ratings, time control), as archives code it.
            let codec = codec.in_context(&g.context());
            let costs = codec.explain(&g.start, &g.moves).expect("legal game");
            for (ply, cost) in costs.iter().enumerate().take(2 * MOVES) {
                sums[c][ply / 2] += cost.bits;
                if c == 0 {
                    counts[ply / 2] += 1;
                }
            }
        }
        used += 1;
        if used == games {
            break;
        }
    }
    let (w, h, left, bottom, top) = (720.0, 420.0, 50.0, 40.0, 30.0);
    let ymax = 7.0;
    let x = |m: usize| left + (w - left - 20.0) * m as f64 / (MOVES - 1) as f64;
    let y = |b: f64| top + (h - top - bottom) * (1.0 - b / ymax);
    let mut svg = String::new();
    let _ = write!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="12">"#
    );
    let _ = write!(svg, r#"<rect width="{w}" height="{h}" fill="white"/>"#);
    for b in 0..=7 {
        let yy = y(f64::from(b));
        let _ = write!(
            svg,
            r##"<line x1="{left}" x2="{}" y1="{yy}" y2="{yy}" stroke="#ddd"/><text x="{}" y="{}" text-anchor="end">{b}</text>"##,
            w - 20.0,
            left - 6.0,
            yy + 4.0
        );
    }
    for m in (0..MOVES).step_by(10) {
        let _ = write!(
            svg,
            r#"<text x="{}" y="{}" text-anchor="middle">{}</text>"#,
            x(m),
            h - bottom + 16.0,
            m + 1
        );
    }
    let _ = write!(
        svg,
        r#"<text x="{}" y="{}" text-anchor="middle">move number (bits per ply averaged over white's and black's move; {used} held-out games of {})</text>"#,
        (w + left) / 2.0,
        h - 6.0,
        std::path::Path::new(&path)
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("")
    );
    let _ = write!(
        svg,
        r#"<text x="14" y="{}" transform="rotate(-90 14 {})" text-anchor="middle">bits per ply</text>"#,
        h / 2.0,
        h / 2.0
    );
    let colours = ["#888", "#e08020", "#2060c0"];
    for (c, codec) in codecs.iter().enumerate() {
        let mut points = String::new();
        for m in 0..MOVES {
            if counts[m] >= 20 {
                let _ = write!(
                    points,
                    "{:.1},{:.1} ",
                    x(m),
                    y(sums[c][m] / counts[m] as f64)
                );
            }
        }
        let _ = write!(
            svg,
            r#"<polyline fill="none" stroke="{}" stroke-width="2" points="{points}"/><text x="{}" y="{}" fill="{}">{}</text>"#,
            colours[c],
            w - 120.0,
            top + 16.0 * c as f64 + 4.0,
            colours[c],
            codec.name()
        );
    }
    svg.push_str("</svg>\n");
    print!("{svg}");
}
