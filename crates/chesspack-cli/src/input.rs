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
