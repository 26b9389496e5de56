#!/usr/bin/env python3
"""Positions as rows from a game archive (issue 59): speed on one core,
python-chess replaying the same games, and a shuffled epoch with two
workers (positions given, each exactly once, and peak memory).

    python python/benchmarks/positions_bench.py ARCHIVE [ARCHIVE...] [--epoch ARCHIVE] [--buffer N] [--no-keys] [--python-chess N]

For each ARCHIVE: positions a second of `Archive.positions` on one thread
(`threads=1`), best of three passes, with the default columns, with `uci`
and with `fen`; and python-chess replaying the first N games (default
300) of the archive into the same default rows. `--epoch` runs one
shuffled epoch of `iter_positions` with two worker processes (a shuffle
buffer of N positions, default 131072) and prints their peak resident
memory and the largest proportional set size sampled (shared pages count
half in each); `--no-keys` keeps no key of the rows (no check that each
is given once), for the loader's own memory.
"""

from __future__ import annotations

import io
import multiprocessing
import resource
import sys
import time

import numpy as np

import chesspack


def rows_per_second(archive: chesspack.Archive, columns: list[str] | None, rounds: int = 3) -> tuple[int, float]:
    best = float("inf")
    n = 0
    for _ in range(rounds):
        t = time.perf_counter()
        n = sum(archive.positions(b, columns, threads=1).num_rows for b in range(len(archive.blocks())))
        best = min(best, time.perf_counter() - t)
    return n, n / best


def python_chess_per_second(archive: chesspack.Archive, games: int) -> float:
    import chess.pgn

    sys.path.insert(0, "scripts")
    from positions_check import reference_rows

    texts = [archive[i] for i in range(min(games, len(archive)))]
    t = time.perf_counter()
    n = 0
    for i, text in enumerate(texts):
        n += len(reference_rows(chess.pgn.read_game(io.StringIO(text)), i))
    return n / (time.perf_counter() - t)


def _worker(path: str, i: int, queue: multiprocessing.Queue, buffer: int, keep: bool = True) -> None:
    archive = chesspack.Archive(path)
    it = archive.iter_positions(4096, seed=1, buffer=buffer, worker=(i, 2), columns=None, threads=1)
    keys = []
    pss = 0.0
    t = time.perf_counter()
    for k, batch in enumerate(it.numpy()):
        key = batch["game"] * 65536 + batch["ply"]
        keys.append(key if keep else key[:0])
        if k % 8 == 0:
            pss = max(pss, _pss_mb())
    seconds = time.perf_counter() - t
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    queue.put((i, np.concatenate(keys) if keys else np.zeros(0, np.int64), rss_mb, pss, seconds, len(it.skipped)))


def _pss_mb() -> float:
    """The proportional set size: pages shared with the other worker (the
    libraries, the model in the extension) count half."""
    for line in open("/proc/self/smaps_rollup"):
        if line.startswith("Pss:"):
            return int(line.split()[1]) / 1024
    return 0.0


def epoch(path: str, buffer: int, keep: bool = True) -> None:
    total = sum(b["games"] for b in chesspack.Archive(path).blocks())
    ctx = multiprocessing.get_context("spawn")
    queue: multiprocessing.Queue = ctx.Queue()
    workers = [ctx.Process(target=_worker, args=(path, i, queue, buffer, keep)) for i in range(2)]
    for w in workers:
        w.start()
    results = [queue.get() for _ in workers]
    for w in workers:
        w.join()
    keys = np.concatenate([r[1] for r in results])
    unique = len(np.unique(keys))
    if not keep:
        print(f"epoch of {path}, 2 workers, buffer {buffer}, keys not kept:")
        for i, _, rss, pss, seconds, _ in sorted(results, key=lambda r: r[0]):
            print(f"  worker {i}: {seconds:.1f} s, peak RSS {rss:.0f} MB, largest PSS sampled {pss:.0f} MB")
        print(f"  together: peak RSS {sum(r[2] for r in results):.0f} MB, PSS {sum(r[3] for r in results):.0f} MB")
        return
    every = sum(chesspack.Archive(path).positions(b, ["game"]).num_rows for b in range(len(chesspack.Archive(path).blocks())))
    print(f"epoch of {path} ({total} games), 2 workers, seed 1, buffer {buffer}:")
    for i, k, rss, pss, seconds, skipped in sorted(results, key=lambda r: r[0]):
        print(f"  worker {i}: {len(k)} positions in {seconds:.1f} s, peak RSS {rss:.0f} MB, "
              f"largest PSS sampled {pss:.0f} MB (its keys {k.nbytes / 2**20:.0f} MB), {skipped} games skipped")
    print(f"  together: peak RSS {sum(r[2] for r in results):.0f} MB, PSS {sum(r[3] for r in results):.0f} MB")
    print(f"  {len(keys)} positions given, {unique} distinct, {every} in the archive: "
          f"{'each exactly once' if len(keys) == unique == every else 'NOT each once'}")


def main() -> int:
    args = sys.argv[1:]
    games = 300
    if "--python-chess" in args:
        k = args.index("--python-chess")
        games = int(args[k + 1])
        del args[k : k + 2]
    buffer = 1 << 17
    if "--buffer" in args:
        k = args.index("--buffer")
        buffer = int(args[k + 1])
        del args[k : k + 2]
    keep = "--no-keys" not in args
    args = [a for a in args if a != "--no-keys"]
    epoch_path = None
    if "--epoch" in args:
        k = args.index("--epoch")
        epoch_path = args[k + 1]
        del args[k : k + 2]
    for path in args:
        a = chesspack.Archive(path)
        print(f"{path} (codec {a.codec}, {len(a.blocks())} blocks):")
        for name, columns in [("default", None), ("+uci", chesspack.POSITION_COLUMNS + ["uci"]),
                              ("+fen", chesspack.POSITION_COLUMNS + ["fen"])]:
            n, rate = rows_per_second(a, columns)
            print(f"  {name:>8}: {n} positions, {rate:,.0f} positions/s on one thread")
        print(f"  python-chess replaying {games} games into the same rows: {python_chess_per_second(a, games):,.0f} positions/s")
    if epoch_path:
        epoch(epoch_path, buffer, keep)
    return 0


if __name__ == "__main__":
    sys.exit(main())
