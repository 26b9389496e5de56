//! The library's thread pools, in one place: a file's blocks in order
//! ([`ordered`]), the front ends' parallel work on a pool kept for the
//! thread that asks ([`install`], [`map`]), and whether the work nested in
//! a block (its games) may spread over the current pool
//! ([`parallel_threads`], [`on_this_thread`]). Work inside a pool (a
//! block's games, a search section's columns) is split by rayon's
//! parallel iterators where it is done, on the pool it runs on.
//!
//! Everything here runs on rayon's pools; with one thread, without the
//! `parallel` feature, or where no threads can be had (WebAssembly), it
//! runs on the calling thread. What decides bits never depends on it: each
//! game is coded on one thread, and results come back in order.
//! [`crate::archive::pipeline::Pipeline`] is the public face of it.

/// The worker threads that `threads` asks for (0: one a core).
pub(crate) fn workers(threads: usize) -> usize {
    if threads > 0 {
        threads
    } else {
        std::thread::available_parallelism().map_or(1, usize::from)
    }
}

/// Runs `f` with its parallel work on `threads` threads, this one among
/// them (0: rayon's pool, one thread a core). The pool is kept for the
/// next call on this thread (a new pool a call would start threads, each
/// with its own allocator arena); where no threads can be had, `f` runs
/// here.
pub(crate) fn install<T: Send>(threads: usize, f: impl FnOnce() -> T + Send) -> T {
    #[cfg(feature = "parallel")]
    {
        thread_local! {
            static POOL: std::cell::RefCell<Option<(usize, rayon::ThreadPool)>> =
                const { std::cell::RefCell::new(None) };
        }
        if threads == 0 {
            return f();
        }
        POOL.with(|cell| {
            let mut cell = cell.borrow_mut();
            if cell.as_ref().is_none_or(|(k, _)| *k != threads) {
                // A thread joins one pool for good: another size gets a
                // pool of its own threads, for this call.
                let first = cell.is_none();
                let builder = rayon::ThreadPoolBuilder::new().num_threads(threads);
                let builder = if first {
                    builder.use_current_thread()
                } else {
                    builder
                };
                let Ok(pool) = builder.build() else {
                    return f();
                };
                if !first {
                    return pool.install(f);
                }
                *cell = Some((threads, pool));
            }
            match cell.as_ref() {
                Some((_, pool)) => pool.install(f),
                None => f(),
            }
        })
    }
    #[cfg(not(feature = "parallel"))]
    {
        let _ = threads;
        f()
    }
}

/// `f` of every item, in their order, worked out on `threads` threads
/// ([`install`]; inside an installed pool, on that pool).
pub(crate) fn map<T: Send, R: Send>(
    threads: usize,
    items: Vec<T>,
    f: impl Fn(T) -> R + Sync + Send,
) -> Vec<R> {
    #[cfg(feature = "parallel")]
    {
        use rayon::prelude::*;
        install(threads, || items.into_par_iter().map(f).collect())
    }
    #[cfg(not(feature = "parallel"))]
    {
        let _ = threads;
        items.into_iter().map(f).collect()
    }
}

/// Runs `work` on every item on `threads` workers and hands the results to
/// `sink` on this thread, in the items' order, with at most two items a
/// worker read and not yet handed on; with one thread, all of it on this
/// thread (no thread is started, and [`parallel_threads`] is 1 inside).
/// The first error (reading an item, or of `sink`) stops the run: it is
/// returned once the items in flight are done. A worker's panic is raised
/// again on this thread.
#[cfg(feature = "parallel")]
pub(crate) fn ordered<J: Send, R: Send, E>(
    threads: usize,
    mut items: impl Iterator<Item = Result<J, E>>,
    work: impl Fn(J) -> R + Sync,
    mut sink: impl FnMut(R) -> Result<(), E>,
) -> Result<(), E> {
    use std::{collections::BTreeMap, panic, sync::mpsc};

    let pool = if threads > 1 {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .ok()
    } else {
        None
    };
    let Some(pool) = pool else {
        // One thread, or no threads to be had (WebAssembly): all of it
        // here, the games of a block too.
        return on_this_thread(|| items.try_for_each(|j| sink(work(j?))));
    };
    let window = 2 * threads;
    let (done_tx, done_rx) = mpsc::channel();
    let work = &work;
    pool.in_place_scope(|scope| {
        let (mut sent, mut handed) = (0usize, 0usize);
        let mut ready = BTreeMap::new();
        let mut items = items.by_ref().fuse();
        loop {
            while sent < handed + window {
                match items.next() {
                    Some(Ok(j)) => {
                        let (i, tx) = (sent, done_tx.clone());
                        // A panic is handed back, and raised again here.
                        scope.spawn(move |_| {
                            let r = panic::catch_unwind(panic::AssertUnwindSafe(|| work(j)));
                            let _ = tx.send((i, r));
                        });
                        sent += 1;
                    }
                    Some(Err(e)) => return Err(e),
                    None => break,
                }
            }
            if handed == sent {
                return Ok(());
            }
            while !ready.contains_key(&handed) {
                let (i, r) = done_rx.recv().expect("a worker holds a sender");
                ready.insert(i, r);
            }
            match ready.remove(&handed).expect("the result just waited for") {
                Ok(r) => sink(r)?,
                Err(p) => panic::resume_unwind(p),
            }
            handed += 1;
        }
    })
}

/// [`ordered`] without the `parallel` feature: all on this thread.
#[cfg(not(feature = "parallel"))]
pub(crate) fn ordered<J, R, E>(
    _threads: usize,
    mut items: impl Iterator<Item = Result<J, E>>,
    work: impl Fn(J) -> R,
    mut sink: impl FnMut(R) -> Result<(), E>,
) -> Result<(), E> {
    items.try_for_each(|j| sink(work(j?)))
}

/// `a()` and `b()`, at once on the current pool where the `parallel`
/// feature builds one (rayon's `join`), else one after the other.
pub(crate) fn join<RA: Send, RB: Send>(
    a: impl FnOnce() -> RA + Send,
    b: impl FnOnce() -> RB + Send,
) -> (RA, RB) {
    #[cfg(feature = "parallel")]
    {
        rayon::join(a, b)
    }
    #[cfg(not(feature = "parallel"))]
    {
        (a(), b())
    }
}

/// The threads that work nested in a block (its games) may spread over:
/// the current rayon pool's (the global pool's outside one), or one inside
/// [`on_this_thread`] or without the `parallel` feature.
pub(crate) fn parallel_threads() -> usize {
    #[cfg(feature = "parallel")]
    if !ON_THIS_THREAD.get() {
        return rayon::current_num_threads();
    }
    1
}

thread_local! {
    static ON_THIS_THREAD: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `f` with every block it decodes decoded on this thread alone (a
/// pipeline of one thread, the fuzz targets): no thread is started.
#[cfg(any(test, feature = "parallel", feature = "fuzzing"))]
pub(crate) fn on_this_thread<R>(f: impl FnOnce() -> R) -> R {
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            ON_THIS_THREAD.set(self.0);
        }
    }
    let _restore = Restore(ON_THIS_THREAD.replace(true));
    f()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_come_in_order_and_errors_stop_the_run() {
        for threads in [1, 2, 5] {
            let mut out = Vec::new();
            ordered(
                threads,
                (0..100u64).map(Ok::<_, String>),
                |i| {
                    // Later items finish first.
                    std::thread::sleep(std::time::Duration::from_micros(100 - i));
                    i * i
                },
                |r| {
                    out.push(r);
                    Ok(())
                },
            )
            .unwrap();
            assert_eq!(out, (0..100u64).map(|i| i * i).collect::<Vec<_>>());
        }
        let items = (0..10u64).map(|i| if i == 6 { Err("bad item") } else { Ok(i) });
        assert_eq!(ordered(2, items, |i| i, |_| Ok(())), Err("bad item"));
        let mut seen = 0;
        let stopped = ordered(
            2,
            (0..10u64).map(Ok),
            |i| i,
            |i| {
                seen += 1;
                if i == 3 { Err("stopped") } else { Ok(()) }
            },
        );
        assert_eq!((stopped, seen), (Err("stopped"), 4));
    }

    #[test]
    fn a_worker_panic_reaches_the_caller() {
        let caught = std::panic::catch_unwind(|| {
            let _ = ordered(
                2,
                (0..10u64).map(Ok::<_, ()>),
                |i| {
                    assert!(i != 5, "item five");
                    i
                },
                |_| Ok(()),
            );
        });
        assert!(caught.is_err());
    }

    #[test]
    fn one_thread_keeps_nested_work_here() {
        let mut inside = 0;
        ordered(
            1,
            [Ok::<_, ()>(())].into_iter(),
            |()| parallel_threads(),
            |n| {
                inside = n;
                Ok(())
            },
        )
        .unwrap();
        assert_eq!(inside, 1);
        assert_eq!(map(2, vec![1, 2, 3], |n| n * n), [1, 4, 9]);
        assert_eq!(install(2, || 6 * 7), 42);
    }
}
