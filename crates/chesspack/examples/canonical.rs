//! Prints the canonical text of a PGN file (what `chesspack decompress`
//! of its archive gives): `cargo run --example canonical FILE`.

use std::{fs::File, io::BufReader, io::Write};

fn main() -> std::io::Result<()> {
    let path = std::env::args().nth(1).expect("usage: canonical FILE");
    let text = chesspack::archive::canonical(BufReader::new(File::open(path)?))?;
    std::io::stdout().write_all(&text)
}
