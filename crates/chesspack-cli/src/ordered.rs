//! Work on worker threads, results in input order: the calling thread reads
//! the next items while the workers code the ones before (a batch at a time
//! left both idle in turn: the reader while the batch was coded, a worker
//! while the other finished the batch's last block).

use std::{
    collections::BTreeMap,
    sync::{Mutex, mpsc},
};

use anyhow::Result;

/// Runs `work` on every item of `items` on `threads` worker threads and
/// hands the results to `sink` in the order of the items. At most `window`
/// items are read and not yet handed to `sink`, which bounds memory. The
/// first error (reading an item or in `sink`) stops the run and is
/// returned.
pub fn run<J, R>(
    threads: usize,
    window: usize,
    items: impl Iterator<Item = Result<J>>,
    work: impl Fn(J) -> R + Sync,
    mut sink: impl FnMut(R) -> Result<()>,
) -> Result<()>
where
    J: Send,
    R: Send,
{
    let window = window.max(1);
    let (job_tx, job_rx) = mpsc::channel::<(usize, J)>();
    let job_rx = Mutex::new(job_rx);
    let (done_tx, done_rx) = mpsc::channel::<(usize, R)>();
    std::thread::scope(|s| {
        // Owned here, so that every way out of this closure closes the job
        // channel before the scope waits for the workers.
        let job_tx = job_tx;
        for _ in 0..threads.max(1) {
            let done_tx = done_tx.clone();
            let (job_rx, work) = (&job_rx, &work);
            s.spawn(move || {
                loop {
                    // The lock is held only while waiting for a job.
                    let job = job_rx.lock().map(|rx| rx.recv());
                    let Ok(Ok((i, j))) = job else { break };
                    if done_tx.send((i, work(j))).is_err() {
                        break;
                    }
                }
            });
        }
        drop(done_tx);
        let mut items = items.fuse();
        let (mut sent, mut handed) = (0usize, 0usize);
        let mut ready = BTreeMap::new();
        loop {
            while sent < handed + window {
                match items.next() {
                    Some(Ok(j)) => {
                        // Workers stay until the job channel closes.
                        let _ = job_tx.send((sent, j));
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
                match done_rx.recv() {
                    Ok((i, r)) => {
                        ready.insert(i, r);
                    }
                    Err(_) => return Err(anyhow::anyhow!("a worker thread stopped")),
                }
            }
            let r = ready.remove(&handed).expect("the result just waited for");
            handed += 1;
            sink(r)?;
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_come_in_order_and_errors_stop_the_run() {
        for threads in [1, 2, 5] {
            let mut out = Vec::new();
            run(
                threads,
                3,
                (0..100u64).map(Ok),
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
        let items = (0..10u64).map(|i| {
            if i == 6 {
                Err(anyhow::anyhow!("bad item"))
            } else {
                Ok(i)
            }
        });
        let err = run(2, 2, items, |i| i, |_| Ok(())).unwrap_err();
        assert_eq!(err.to_string(), "bad item");
        let mut seen = 0;
        let err = run(
            2,
            4,
            (0..10u64).map(Ok),
            |i| i,
            |i| {
                seen += 1;
                if i == 3 {
                    anyhow::bail!("sink error")
                }
                Ok(())
            },
        )
        .unwrap_err();
        assert_eq!((err.to_string(), seen), ("sink error".into(), 4));
    }
}
