//! The distribution of `position-model` bits per position on the held-out
//! 5% of position files (EPD/FEN lines or CSV with the FEN in the second
//! column, `.zst` too), as an SVG histogram:
//! `cargo run --release --example position_histogram FILE... > histogram.svg`

use std::{
    fmt::Write as _,
    io::{BufRead, BufReader, Read},
};

use chesspack::{
    holdout,
    position::{self, PositionCodec, PositionModel},
};

const BIN: usize = 4; // bits per bar
const MAX_BITS: usize = 168; // x axis

fn main() {
    let files: Vec<String> = std::env::args().skip(1).collect();
    assert!(!files.is_empty(), "usage: position_histogram FILE...");
    let bins = MAX_BITS / BIN;
    let mut series = Vec::new();
    for path in &files {
        let file = std::fs::File::open(path).expect("file");
        let input: Box<dyn Read> = if path.ends_with(".zst") {
            Box::new(zstd::Decoder::new(file).expect("zstd"))
        } else {
            Box::new(file)
        };
        let mut counts = vec![0u64; bins];
        let (mut n, mut sum, mut max) = (0u64, 0u64, 0usize);
        for line in BufReader::new(input).lines() {
            let line = line.expect("readable file");
            let fen = if line.contains(',') {
                line.split(',').nth(1).unwrap_or("")
            } else {
                line.as_str()
            };
            let Ok(pos) = position::parse_fen(fen) else {
                continue; // a header or a comment
            };
            if !holdout::is_held_out(position::to_epd(&pos).as_bytes()) {
                continue;
            }
            let bits = PositionModel.encode(&pos).expect("encodable").len();
            counts[(bits / BIN).min(bins - 1)] += 1;
            n += 1;
            sum += bits as u64;
            max = max.max(bits);
        }
        let name = std::path::Path::new(path)
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("")
            .to_string();
        series.push((name, counts, n, sum as f64 / n.max(1) as f64, max));
    }
    let (w, h, left, bottom, top) = (720.0, 420.0, 50.0, 40.0, 30.0);
    let share = |c: u64, n: u64| 100.0 * c as f64 / n.max(1) as f64;
    let ymax = series
        .iter()
        .flat_map(|(_, c, n, _, _)| c.iter().map(move |&x| share(x, *n)))
        .fold(0.0f64, f64::max)
        .ceil()
        .max(1.0);
    let x = |b: f64| left + (w - left - 20.0) * b / MAX_BITS as f64;
    let y = |p: f64| top + (h - top - bottom) * (1.0 - p / ymax);
    let bound = position::rank::BITS;
    let mut svg = String::new();
    let _ = write!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="12">"#
    );
    let _ = write!(svg, r#"<rect width="{w}" height="{h}" fill="white"/>"#);
    let step = if ymax > 20.0 { 5 } else { 2 };
    for p in (0..=ymax as u32).step_by(step) {
        let yy = y(f64::from(p));
        let _ = write!(
            svg,
            r##"<line x1="{left}" x2="{}" y1="{yy}" y2="{yy}" stroke="#ddd"/><text x="{}" y="{}" text-anchor="end">{p}%</text>"##,
            w - 20.0,
            left - 6.0,
            yy + 4.0
        );
    }
    for b in (0..=MAX_BITS).step_by(20) {
        let _ = write!(
            svg,
            r#"<text x="{}" y="{}" text-anchor="middle">{b}</text>"#,
            x(b as f64),
            h - bottom + 16.0
        );
    }
    let _ = write!(
        svg,
        r##"<line x1="{0}" x2="{0}" y1="{top}" y2="{1}" stroke="#c00" stroke-dasharray="4 3"/><text x="{2}" y="{3}" fill="#c00" text-anchor="end">guaranteed maximum: {4}</text>"##,
        x(bound as f64),
        h - bottom,
        x(bound as f64) - 4.0,
        top + 12.0,
        bound
    );
    let _ = write!(
        svg,
        r#"<text x="{}" y="{}" text-anchor="middle">bits per position (position-model, bins of {BIN} bits, held-out positions)</text>"#,
        (w + left) / 2.0,
        h - 6.0
    );
    let _ = write!(
        svg,
        r#"<text x="14" y="{}" transform="rotate(-90 14 {})" text-anchor="middle">share of positions</text>"#,
        h / 2.0,
        h / 2.0
    );
    let colours = ["#2060c0", "#e08020", "#20a040", "#888"];
    for (i, (name, counts, n, mean, max)) in series.iter().enumerate() {
        let colour = colours[i % colours.len()];
        let mut points = format!("{:.1},{:.1} ", x(0.0), y(0.0));
        for (b, &c) in counts.iter().enumerate() {
            let (x0, x1, yy) = (
                x((b * BIN) as f64),
                x(((b + 1) * BIN) as f64),
                y(share(c, *n)),
            );
            let _ = write!(points, "{x0:.1},{yy:.1} {x1:.1},{yy:.1} ");
        }
        let _ = write!(points, "{:.1},{:.1}", x(MAX_BITS as f64), y(0.0));
        let _ = write!(
            svg,
            r#"<polyline fill="none" stroke="{colour}" stroke-width="2" points="{points}"/><text x="{}" y="{}" fill="{colour}" text-anchor="end">{name}: {n} positions, mean {mean:.1}, max {max}</text>"#,
            x(bound as f64) - 8.0,
            top + 30.0 + 16.0 * i as f64
        );
    }
    svg.push_str("</svg>\n");
    print!("{svg}");
}
