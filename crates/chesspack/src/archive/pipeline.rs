//! Whole archives on several cores: compress, decompress and verify, in
//! order, with a thread count, a progress callback and a report. The
//! library's one way in ([`crate::files::compress`] and
//! [`crate::files::decompress`]) runs on it, and every front end verifies
//! with it: none drives blocks of its own.
//!
//! Blocks are read (or cut from the input) on the calling thread while a
//! pool of worker threads codes the ones before them, and come back to the
//! calling thread in their order; at most two blocks a thread are in flight,
//! which bounds memory. The games of one block decode on the same pool
//! ([`decode_games`]), so one block (a file of master games) spreads over
//! the cores too. With one thread, or without the `parallel` feature, every
//! step runs on the calling thread.
//!
//! ```
//! use chesspack::archive::{ArchiveReader, pipeline::Pipeline};
//! use chesspack::files::{self, Kind, Settings};
//!
//! let pgn = "[Result \"1-0\"]\n\n1. f3 e5 2. g4 Qh4# 0-1\n";
//! let mut settings = Settings::default();
//! settings.codec = Some("index".into());
//! settings.pipeline.threads = 2;
//! let go = &mut |_: &_| std::ops::ControlFlow::Continue(());
//! let mut packed = Vec::new();
//! let written = files::compress(Kind::Games, pgn.as_bytes(), &mut packed, &settings, go).unwrap();
//! assert_eq!(written.items, 1);
//! let mut reader = ArchiveReader::open(std::io::Cursor::new(packed)).unwrap();
//! let checked = settings.pipeline.verify(&mut reader, go).unwrap();
//! assert_eq!((checked.games, checked.problems.len()), (1, 0));
//! ```

use std::{
    io::{BufRead, Read, Seek, Write},
    ops::ControlFlow,
};

use super::{
    ArchiveError, ArchiveReader, ArchiveWriter, BlockReport, Options, compress_xz, decode_games,
    encode_block,
};
use crate::{archive::GameRecord, game::GameCodec, pgn::ChunkReader, threads};

/// How a run of the pipeline goes: its worker threads and what it does with
/// damaged blocks.
#[derive(Clone, Copy, Debug, Default)]
#[non_exhaustive]
pub struct Pipeline {
    /// Worker threads; 0 for one a core.
    pub threads: usize,
    /// Decompress: leave damaged blocks (and a missing index) out, listed in
    /// the report, instead of stopping at the first.
    pub skip_damaged: bool,
}

/// Where a run is, for a progress display: given to the progress callback
/// after each block, in order.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Progress {
    /// Blocks done.
    pub blocks: usize,
    /// Games done.
    pub games: u64,
    /// Bytes done: of the input's PGN when compressing, of the archive's
    /// stored blocks when reading.
    pub bytes: u64,
    /// The bytes of the whole run, when known (reading).
    pub total_bytes: Option<u64>,
}

/// A block that decompressing left out ([`Pipeline::skip_damaged`]).
#[derive(Debug)]
#[non_exhaustive]
pub struct Damaged {
    /// The block (0-based).
    pub block: usize,
    /// The number of its first game (1-based) and its number of games.
    pub first_game: u64,
    /// Its games, all left out.
    pub games: u64,
    /// Why.
    pub error: ArchiveError,
}

/// What decompressing did.
#[derive(Debug, Default)]
#[non_exhaustive]
pub(crate) struct ReadReport {
    /// Games written.
    pub games: u64,
    /// Blocks written.
    pub blocks: usize,
    /// Blocks left out, in order.
    pub damaged: Vec<Damaged>,
    /// Why the index was missing or damaged, if it was (the blocks were
    /// found by a scan).
    pub index_error: Option<String>,
}

/// What verifying found.
#[derive(Debug, Default)]
#[non_exhaustive]
pub struct VerifyReport {
    /// Games decoded.
    pub games: u64,
    /// Blocks checked.
    pub blocks: usize,
    /// What is wrong, one message a problem naming its block (or the
    /// index); none when the archive is whole.
    pub problems: Vec<String>,
}

/// What a worker makes of the records of a block's games for a
/// [`SectionBuilder`] (`None`: a game stored verbatim).
pub(crate) type Summarize = fn(Vec<Option<GameRecord>>) -> Box<dyn std::any::Any + Send>;

/// What builds a section that the archive keeps after its blocks (the
/// search index) from the games' records, block by block in order, while
/// the archive is written: the workers summarize each block's records,
/// the builder takes the summaries in order.
pub(crate) trait SectionBuilder {
    /// The function the workers summarize a block's records with.
    fn summarize(&self) -> Summarize;
    /// A block's summary, in order: `None` for a block of `games` games
    /// that the workers did not summarize, since the builder no longer
    /// wanted summaries ([`SectionBuilder::summarizing`]).
    fn add_block(&mut self, games: u64, summary: Option<Box<dyn std::any::Any + Send>>);
    /// Whether the builder still wants the blocks' summaries: once it has
    /// let its games go (the search index past its memory), the workers
    /// neither keep the blocks' records nor summarize them.
    fn summarizing(&self) -> bool {
        true
    }
    /// The section's bytes.
    fn finish(&mut self) -> Vec<u8>;
    /// Whether the section was asked for beyond the default, and is kept
    /// whatever its size (not weighed against xz of the input).
    fn asked(&self) -> bool {
        false
    }
}

/// The most input whose search section [`Pipeline::compress`] always
/// weighs against xz of the input: xz -9e of 512 KiB takes about 0.3 s.
const SMALL_INPUT: usize = 512 << 10;

/// The most input whose search section [`Pipeline::compress`] weighs
/// against xz of the input where the archive with it comes to more than
/// half of zstd -1 of the blocks' text (xz -9e seldom takes less, and the
/// blocks' floor assumes the same; real games' archives with their
/// sections come to a quarter or less): xz -9e of 8 MiB takes about 5 s,
/// and such a file (opening lines, games of a few plies) compresses in
/// about that time. A larger input keeps its section.
const KEPT_INPUT: usize = 8 << 20;

/// The bytes of frame an archive may take beyond xz of its text (issue
/// 69's bound).
const XZ_SLACK: u64 = 250;

/// An input whose bytes are kept while there are at most [`KEPT_INPUT`]
/// of them (`None` past that).
struct Kept<R> {
    inner: R,
    kept: Option<Vec<u8>>,
}

impl<R> Kept<R> {
    fn keep(kept: &mut Option<Vec<u8>>, bytes: &[u8]) {
        if let Some(k) = kept {
            if k.len() + bytes.len() > KEPT_INPUT {
                *kept = None;
            } else {
                k.extend_from_slice(bytes);
            }
        }
    }
}

impl<R: BufRead> Read for Kept<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        Kept::<R>::keep(&mut self.kept, &buf[..n]);
        Ok(n)
    }
}

impl<R: BufRead> BufRead for Kept<R> {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        self.inner.fill_buf()
    }

    fn consume(&mut self, n: usize) {
        if self.kept.is_some() {
            // The bytes consumed are those the last `fill_buf` gave.
            match self.inner.fill_buf() {
                Ok(buf) if buf.len() >= n => Kept::<R>::keep(&mut self.kept, &buf[..n]),
                _ => self.kept = None,
            }
        }
        self.inner.consume(n);
    }
}

/// A progress callback: [`ControlFlow::Break`] stops the run, which then
/// returns [`ArchiveError::Stopped`].
pub(crate) type OnProgress<'a> = &'a mut dyn FnMut(&Progress) -> ControlFlow<()>;

impl Pipeline {
    /// A pipeline on `threads` worker threads (0: one a core) that stops
    /// at damage.
    pub(crate) fn with_threads(threads: usize) -> Pipeline {
        Pipeline {
            threads,
            skip_damaged: false,
        }
    }

    /// The worker threads a run uses.
    pub(crate) fn worker_threads(&self) -> usize {
        threads::workers(self.threads)
    }

    /// Runs `f` with its parallel work (a block's games, the rows of its
    /// positions) on `threads` threads, this one among them (0: rayon's
    /// pool, one thread a core). The pool is kept for the next call on
    /// this thread (a new pool a call would start threads, each with its
    /// own allocator arena); where no threads can be had (WebAssembly),
    /// `f` runs here.
    ///
    /// ```
    /// use chesspack::Pipeline;
    ///
    /// let mut pipeline = Pipeline::default();
    /// pipeline.threads = 2;
    /// assert_eq!(pipeline.install(|| 6 * 7), 42);
    /// ```
    pub fn install<T: Send>(&self, f: impl FnOnce() -> T + Send) -> T {
        threads::install(self.threads, f)
    }

    /// `f` of every item, in their order, worked out on this pipeline's
    /// threads ([`Pipeline::install`]; inside an installed pool, on that
    /// pool): the front ends' parallel work (rows of a table, games of a
    /// measurement) without threads of their own.
    ///
    /// ```
    /// use chesspack::Pipeline;
    ///
    /// let mut pipeline = Pipeline::default();
    /// pipeline.threads = 2;
    /// assert_eq!(pipeline.map(vec![1, 2, 3], |n| n * n), [1, 4, 9]);
    /// ```
    pub fn map<T: Send, R: Send>(&self, items: Vec<T>, f: impl Fn(T) -> R + Sync + Send) -> Vec<R> {
        threads::map(self.threads, items, f)
    }

    /// Compresses PGN text into an archive, blocks cut as `options` says
    /// and coded on the workers; returns the summed block reports.
    ///
    /// # Errors
    ///
    /// An I/O error of the input or output, or [`ArchiveError::Stopped`].
    pub(crate) fn compress(
        &self,
        input: impl BufRead,
        output: impl Write,
        codec: &dyn GameCodec,
        options: &Options,
        mut section: Option<&mut dyn SectionBuilder>,
        progress: OnProgress<'_>,
    ) -> Result<BlockReport, ArchiveError> {
        let summarize = section.as_ref().map(|s| s.summarize());
        // Whether the workers keep each block's records and summarize them:
        // until the section's builder no longer wants them, so that
        // compressing a file whose index is left out costs what
        // `--no-index` does from there on. The archive's bytes are the
        // same either way.
        let summarizing = std::sync::atomic::AtomicBool::new(summarize.is_some());
        let mut writer = ArchiveWriter::new(output, codec)?;
        let mut total = BlockReport::default();
        let mut done = Progress::default();
        // zstd -1 of the blocks' text, all told.
        let mut quick = 0;
        // The input's bytes are kept only where a section is to be weighed.
        let mut input = Kept {
            inner: input,
            kept: section.as_ref().is_some_and(|s| !s.asked()).then(Vec::new),
        };
        let mut chunks = ChunkReader::new(&mut input);
        let blocks = Blocks::new(chunks.by_ref(), options.block_games, options.block_bytes)
            .map(|b| b.map_err(ArchiveError::Io));
        self.ordered(
            blocks,
            |b| {
                let records = summarizing.load(std::sync::atomic::Ordering::Relaxed);
                let mut block = encode_block(codec, &b, options.level, options.openings, records);
                let summary = summarize
                    .filter(|_| records)
                    .map(|f| f(std::mem::take(&mut block.records)));
                (block, summary)
            },
            |(block, summary)| {
                writer.write_block(&block)?;
                if let Some(s) = section.as_deref_mut() {
                    s.add_block(block.report.games, summary);
                    if !s.summarizing() {
                        summarizing.store(false, std::sync::atomic::Ordering::Relaxed);
                    }
                }
                total.add(&block.report);
                quick += block.quick;
                done.blocks += 1;
                done.games += block.report.games;
                done.bytes += block.report.input_bytes;
                step(progress, &done)
            },
        )?;
        if writer.entries.is_empty() {
            // An input of no game: its whitespace is all there is to keep.
            writer.lead = chunks.lead().to_vec();
        }
        drop(chunks);
        if let Some(s) = section {
            writer.section = s.finish();
            // An input whose section would make the archive larger than
            // xz of its text (issue 69: a file of opening lines, where the
            // games cost a few bytes each) is left without one: its games
            // decode in about the time a section is read, and `chesspack
            // index` adds one. Weighed where the input is small, or where
            // the archive with it comes near xz's likely size.
            let trailer = 64 + 32 * writer.entries.len() as u64;
            let with = writer.offset + writer.section.len() as u64 + trailer;
            if let Some(text) = input.kept.take()
                && !writer.section.is_empty()
                && (text.len() <= SMALL_INPUT || with * 2 > quick)
                && let Some(xz) = compress_xz(&text)
                && with > xz.len() as u64 + XZ_SLACK
            {
                writer.section.clear();
            }
        }
        writer.finish()?;
        Ok(total)
    }

    /// Writes the PGN text of every block of `reader` to `output`, blocks
    /// decoded on the workers.
    ///
    /// # Errors
    ///
    /// The first damaged block ([`ArchiveError::Damaged`]) or a missing
    /// index ([`ArchiveError::Index`]) unless [`Pipeline::skip_damaged`];
    /// an I/O error; [`ArchiveError::Stopped`].
    pub(crate) fn decompress<R: Read + Seek>(
        &self,
        reader: &mut ArchiveReader<R>,
        output: impl Write,
        progress: OnProgress<'_>,
    ) -> Result<ReadReport, ArchiveError> {
        let mut report = ReadReport {
            index_error: reader.index_error().map(str::to_owned),
            ..ReadReport::default()
        };
        if let Some(why) = &report.index_error
            && !self.skip_damaged
        {
            return Err(ArchiveError::Index(why.clone()));
        }
        let codec = reader.header().codec()?;
        let codec = codec.as_ref();
        let entries = reader.blocks().to_vec();
        let first_games: Vec<u64> = (0..entries.len()).map(|b| reader.first_game(b)).collect();
        let mut done = Progress {
            total_bytes: Some(entries.iter().map(|e| u64::from(e.len)).sum()),
            ..Progress::default()
        };
        let mut writer = reader.text_writer(output);
        // The payloads are read on this thread (the reader is not shared).
        let payloads = (0..entries.len()).map(|b| Ok((b, reader.read_block(b))));
        self.ordered(
            payloads,
            |(b, payload)| {
                let text = payload.and_then(|p| {
                    let mut text = Vec::with_capacity(p.payload().len() * 6);
                    decode_games(codec, &p, &|_| true, &mut |_, t| text.extend_from_slice(&t))?;
                    Ok(text)
                });
                (b, text)
            },
            |(b, text)| {
                let games = u64::from(entries[b].games);
                match text {
                    Ok(t) => {
                        writer.write_games(&t)?;
                        report.games += games;
                        report.blocks += 1;
                    }
                    Err(error) if self.skip_damaged => report.damaged.push(Damaged {
                        block: b,
                        first_game: first_games[b],
                        games,
                        error,
                    }),
                    Err(e) => return Err(e),
                }
                done.blocks += 1;
                done.games += games;
                done.bytes += u64::from(entries[b].len);
                step(progress, &done)
            },
        )?;
        writer.finish()?;
        Ok(report)
    }

    /// Checks every block of `reader` against its checksums and decodes
    /// it, blocks on the workers; the problems are in the report.
    ///
    /// # Errors
    ///
    /// An archive without a codec this library has, or
    /// [`ArchiveError::Stopped`].
    pub fn verify<R: Read + Seek>(
        &self,
        reader: &mut ArchiveReader<R>,
        progress: OnProgress<'_>,
    ) -> Result<VerifyReport, ArchiveError> {
        let mut report = VerifyReport::default();
        if let Some(why) = reader.header_error() {
            report
                .problems
                .push(format!("header: {why} (its copy in the index was read)"));
        }
        if let Some(why) = reader.index_error() {
            report
                .problems
                .push(format!("index: {why} (the file may be truncated)"));
        }
        let codec = reader.header().codec()?;
        let codec = codec.as_ref();
        let entries = reader.blocks().to_vec();
        let mut done = Progress {
            total_bytes: Some(entries.iter().map(|e| u64::from(e.len)).sum()),
            ..Progress::default()
        };
        let payloads = (0..entries.len()).map(|b| Ok((b, reader.read_block(b))));
        self.ordered(
            payloads,
            |(b, payload)| {
                let games =
                    payload.and_then(|p| decode_games(codec, &p, &|_| true, &mut |_, _| {}));
                (b, games)
            },
            |(b, games)| {
                match games {
                    Ok(g) if g as u64 == u64::from(entries[b].games) => report.games += g as u64,
                    Ok(_) => report.problems.push(format!(
                        "block {}: game count differs from the index",
                        b + 1
                    )),
                    Err(e) => report.problems.push(e.to_string()),
                }
                report.blocks += 1;
                done.blocks += 1;
                done.games += u64::from(entries[b].games);
                done.bytes += u64::from(entries[b].len);
                step(progress, &done)
            },
        )?;
        Ok(report)
    }

    /// Runs `work` on every item on the workers and hands the results to
    /// `sink` on this thread, in the items' order, with at most two items
    /// a worker read and not yet handed on; with one thread, all of it on
    /// this thread (no thread is started). The first error (reading an
    /// item, or of `sink`) stops the run: it is returned once the items in
    /// flight are done.
    pub(crate) fn ordered<J, R>(
        &self,
        items: impl Iterator<Item = Result<J, ArchiveError>>,
        work: impl Fn(J) -> R + Sync,
        sink: impl FnMut(R) -> Result<(), ArchiveError>,
    ) -> Result<(), ArchiveError>
    where
        J: Send,
        R: Send,
    {
        threads::ordered(self.worker_threads(), items, work, sink)
    }
}

/// Calls the progress callback; a break stops the run.
fn step(progress: OnProgress<'_>, done: &Progress) -> Result<(), ArchiveError> {
    match progress(done) {
        ControlFlow::Continue(()) => Ok(()),
        ControlFlow::Break(()) => Err(ArchiveError::Stopped),
    }
}

/// Groups chunks into blocks of at most `max_games` games and about
/// `max_bytes` of text (a block ends with the chunk that reaches it).
pub(crate) struct Blocks<I> {
    chunks: I,
    max_games: usize,
    max_bytes: usize,
}

impl<I> Blocks<I> {
    /// Groups `chunks`.
    pub(crate) fn new(chunks: I, max_games: usize, max_bytes: usize) -> Blocks<I> {
        Blocks {
            chunks,
            max_games: max_games.max(1),
            max_bytes: max_bytes.max(1),
        }
    }
}

impl<I: Iterator<Item = std::io::Result<crate::pgn::Chunk>>> Iterator for Blocks<I> {
    type Item = std::io::Result<Vec<crate::pgn::Chunk>>;

    fn next(&mut self) -> Option<Self::Item> {
        let mut block = Vec::new();
        let mut bytes = 0;
        while block.len() < self.max_games && bytes < self.max_bytes {
            match self.chunks.next() {
                None => break,
                Some(Err(e)) => return Some(Err(e)),
                Some(Ok(chunk)) => {
                    bytes += chunk.bytes.len();
                    block.push(chunk);
                }
            }
        }
        (!block.is_empty()).then_some(Ok(block))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A section builder that wants the summaries of its first block
    /// alone, and counts what it is given.
    #[derive(Default)]
    struct FirstBlock {
        /// (games, whether summarized) of each block, in order.
        blocks: Vec<(u64, bool)>,
    }

    impl SectionBuilder for FirstBlock {
        fn summarize(&self) -> Summarize {
            |records| Box::new(records.len())
        }
        fn add_block(&mut self, games: u64, summary: Option<Box<dyn std::any::Any + Send>>) {
            if let Some(s) = &summary {
                assert_eq!(s.downcast_ref::<usize>(), Some(&(games as usize)));
            }
            self.blocks.push((games, summary.is_some()));
        }
        fn finish(&mut self) -> Vec<u8> {
            Vec::new()
        }
        fn summarizing(&self) -> bool {
            self.blocks.is_empty()
        }
    }

    /// Issue 68: once the search index is past its memory, the workers
    /// neither keep the records of the blocks still to come nor summarize
    /// them, and the archive is the same.
    #[test]
    fn regression_issue_68_blocks_are_not_summarized_once_the_section_is_let_go() {
        let pgn = "1. e4 e5 *\n\n".repeat(40);
        let options = Options {
            block_games: 4,
            ..Options::default()
        };
        let mut section = FirstBlock::default();
        let (mut with, mut without) = (Vec::new(), Vec::new());
        let pipeline = Pipeline::with_threads(2);
        let go_on = &mut |_: &Progress| std::ops::ControlFlow::Continue(());
        let codec = crate::game::Radix;
        pipeline
            .compress(
                pgn.as_bytes(),
                &mut with,
                &codec,
                &options,
                Some(&mut section),
                go_on,
            )
            .unwrap();
        pipeline
            .compress(pgn.as_bytes(), &mut without, &codec, &options, None, go_on)
            .unwrap();
        assert_eq!(with, without);
        assert_eq!(section.blocks.len(), 10);
        assert_eq!(section.blocks.iter().map(|b| b.0).sum::<u64>(), 40);
        assert!(section.blocks[0].1);
        // Blocks already on the workers when the first was given may come
        // summarized; none after them.
        let later = section.blocks.iter().skip(1).skip_while(|b| b.1).count();
        assert!(later >= 10 - 1 - 2 * 2, "{:?}", section.blocks);
        assert!(
            section
                .blocks
                .iter()
                .skip(1)
                .skip_while(|b| b.1)
                .all(|b| !b.1)
        );
    }
}

/// The examples of crate-private items, run as unit tests.
#[cfg(test)]
mod examples {
    #[test]
    fn example_chunk_blocks() {
        use crate::{archive::pipeline::Blocks, pgn::ChunkReader};

        let pgn = "1. e4 *\n\n1. d4 *\n\n1. c4 *\n";
        let blocks: Vec<_> = Blocks::new(ChunkReader::new(pgn.as_bytes()), 2, 1 << 20)
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(blocks.iter().map(Vec::len).collect::<Vec<_>>(), [2, 1]);
    }
}
