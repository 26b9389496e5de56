//! Opening inputs: files in any compression format and `-` for stdin, with a progress bar
//! on stderr when it is a terminal.

use std::{
    fs::File,
    io::{self, BufRead, IsTerminal, Read},
};

use anyhow::{Context, Result};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// A progress bar over the bytes of an input, hidden unless stderr is a
/// terminal: with per cent done and time left where the size is known
/// ([`set_total`]), else a spinner with the bytes so far.
pub fn progress(len: Option<u64>, what: &str) -> ProgressBar {
    let pb = ProgressBar::new_spinner();
    if !io::stderr().is_terminal() {
        pb.set_draw_target(ProgressDrawTarget::hidden());
    } else {
        pb.set_draw_target(ProgressDrawTarget::stderr());
    }
    if let Ok(style) = ProgressStyle::with_template("{spinner} {msg} {bytes} {bytes_per_sec}") {
        pb.set_style(style);
    }
    pb.set_message(what.to_owned());
    if let Some(len) = len {
        set_total(&pb, len);
    }
    pb
}

/// Gives `pb` its total: from then on it shows a bar, per cent done and
/// the time left.
pub fn set_total(pb: &ProgressBar, total: u64) {
    if pb.length() == Some(total) {
        return;
    }
    pb.set_length(total);
    let template =
        "{msg} [{bar:30}] {percent:>3}% {bytes}/{total_bytes} {bytes_per_sec} {eta} left";
    if let Ok(style) = ProgressStyle::with_template(template) {
        pb.set_style(style.progress_chars("=> "));
    }
}

/// Opens `path` (`-` is stdin), decompressing zstd, gzip, bzip2 and xz
/// ([`chesspack::files::decoder`]), counting raw bytes on `pb`.
pub fn open(path: &str, pb: &ProgressBar) -> Result<Box<dyn BufRead + Send>> {
    let raw: Box<dyn Read + Send> = if path == "-" {
        Box::new(io::stdin())
    } else {
        let file = File::open(path).with_context(|| format!("cannot open {path}"))?;
        if let Ok(meta) = file.metadata() {
            set_total(pb, meta.len());
        }
        Box::new(file)
    };
    chesspack::files::decoder(pb.wrap_read(raw)).with_context(|| format!("cannot read {path}"))
}

/// A size of memory as given on the command line: a number of MiB, or of
/// KiB, MiB or GiB with a suffix (`512K`, `64M`, `8G`; `KiB` and the like
/// too, in any case). 0 stands for the library's default.
pub fn memory_size(text: &str) -> Result<u64, String> {
    let t = text.trim().to_ascii_lowercase();
    let bare = t.strip_suffix("ib").or_else(|| t.strip_suffix('b'));
    let u = bare.unwrap_or(&t);
    let (digits, shift) = match u.as_bytes().last() {
        Some(b'k') => (&u[..u.len() - 1], 10),
        Some(b'm') => (&u[..u.len() - 1], 20),
        Some(b'g') => (&u[..u.len() - 1], 30),
        // A unit but no K, M or G (`8b`) reads as no number.
        _ if bare.is_some() => ("", 0),
        _ => (u, 20),
    };
    digits
        .trim()
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(1 << shift))
        .ok_or_else(|| format!("{text:?} is not a size (a number of MiB, or with K, M or G)"))
}

#[cfg(test)]
mod tests {
    #[test]
    fn memory_sizes_read_with_or_without_a_unit() {
        use super::memory_size;
        assert_eq!(memory_size("8G"), Ok(8 << 30));
        assert_eq!(memory_size("512k"), Ok(512 << 10));
        assert_eq!(memory_size("64MiB"), Ok(64 << 20));
        assert_eq!(memory_size("100"), Ok(100 << 20));
        assert_eq!(memory_size("0"), Ok(0));
        assert_eq!(memory_size("2 GB"), Ok(2 << 30));
        assert!(memory_size("lots").is_err());
        assert!(memory_size("8b").is_err());
        assert!(memory_size("-1G").is_err());
        assert!(memory_size("99999999999G").is_err());
    }
}
