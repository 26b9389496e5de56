//! `chesspack fen encode|decode`.

use anyhow::{Result, bail};
use chesspack::{Bits, position};
use clap::Subcommand;

#[derive(Subcommand, Debug)]
pub enum FenCommand {
    /// Print a position's bits (hex) and their count, in one codec or all.
    Encode {
        /// Position codec; all of them when left out.
        #[arg(long)]
        codec: Option<String>,
        /// The position, as FEN or EPD (quote it).
        fen: String,
    },
    /// Print the position that hex bits decode to.
    Decode {
        /// Position codec.
        #[arg(long)]
        codec: String,
        /// Exact number of bits; when left out, the lengths the hex allows
        /// are tried from the longest down.
        #[arg(long)]
        bits: Option<usize>,
        /// The bits, as hex.
        hex: String,
    },
}

pub fn run(cmd: FenCommand) -> Result<()> {
    match cmd {
        FenCommand::Encode { codec, fen } => {
            let pos = position::parse_fen(&fen)?;
            let codecs = match codec {
                Some(name) => vec![position::codec(&name)?],
                None => position::codecs(),
            };
            for c in codecs {
                match c.encode(&pos) {
                    Ok(bits) => {
                        outln!("{:<14} {:>4} bits  {}", c.name(), bits.len(), bits.to_hex())
                    }
                    Err(e) => outln!("{:<12} error: {e}", c.name()),
                }
            }
            Ok(())
        }
        FenCommand::Decode { codec, bits, hex } => {
            let c = position::codec(&codec)?;
            let hex = hex.trim().trim_start_matches("0x");
            let max = hex.len() / 2 * 8;
            let lengths: Vec<usize> = match bits {
                Some(n) => vec![n],
                None => (max.saturating_sub(7)..=max).rev().collect(),
            };
            let mut last = None;
            for n in lengths {
                match Bits::from_hex(hex, n).and_then(|b| c.decode(&b)) {
                    Ok(pos) => {
                        outln!("{}", position::to_fen(&pos));
                        return Ok(());
                    }
                    Err(e) => last = Some(e),
                }
            }
            match last {
                Some(e) => bail!("cannot decode: {e}"),
                None => bail!("no bits to decode"),
            }
        }
    }
}
