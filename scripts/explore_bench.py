#!/usr/bin/env python3
"""Issue 68's explorer target: `chesspack explore` at the start position and
at positions of plies 10-30, one process a query and in one open archive.

    scripts/explore_bench.py --archive games.chpk --chesspack target/release/chesspack \
        [--threads 2] [--positions 24] [--plies 10 30] [--seed 1030] [--fens FILE]

Positions are drawn with a fixed seed from the archive's own games
(`chesspack get`, replayed by python-chess): a ply from the range of each
game long enough. `--fens FILE` reads them instead (a FEN a line).

Each position is explored twice, and each time is the faster of two rounds:
- by the CLI, one process a query (`explore --json`; wall clock, the section
  read from the file each time);
- in one open archive (the Python package's `Archive`, as the web page and
  any long-lived process use it: the section is read once, by a first query
  at the start position, which is reported on its own), where the package
  imports.

Writes a JSON report to stdout and a table to stderr: median, slowest and
how many are within 50 ms, and for each position the games it reaches and
the games decoded (from the CLI's report).
"""

import argparse
import json
import random
import re
import statistics
import subprocess
import sys
import time

from search_bench import game_boards


def draw(cp, archive, n, lo, hi, seed):
    """`n` FENs at plies `lo`..`hi` of games drawn from `archive` (numbers
    up to the games that the start position reaches)."""
    games = cli(cp, archive, None, 1)[1]
    rng = random.Random(seed)
    fens = []
    while len(fens) < n:
        boards = game_boards(cp, archive, rng.randrange(1, games + 1))
        if boards is None or len(boards) <= lo:
            continue
        fens.append(boards[rng.randrange(lo, min(len(boards) - 1, hi) + 1)].fen())
    return fens


def cli(cp, archive, fen, threads):
    """Wall-clock ms of one `explore` process, games reached and decoded."""
    cmd = [cp, "explore", archive, "--json", "-T", str(threads)]
    if fen:
        cmd += ["--fen", fen]
    t = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True)
    ms = (time.perf_counter() - t) * 1000
    if p.returncode != 0:
        raise SystemExit(f"{cmd}: {p.stderr}")
    # The line that reports the search (a line on games stored verbatim
    # may follow it).
    lines = [l for l in p.stderr.splitlines() if " in " in l and "decoded" in l]
    report = lines[-1] if lines else ""
    reached = re.search(r"(\d+) games?", report)
    decoded = re.search(r"(\d+) decoded", report)
    return (
        ms,
        int(reached.group(1)) if reached else None,
        int(decoded.group(1)) if decoded else None,
    )


def summary(times):
    return {
        "median_ms": round(statistics.median(times), 1),
        "slowest_ms": round(max(times), 1),
        "within_50_ms": sum(t <= 50 for t in times),
        "of": len(times),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--archive", required=True)
    ap.add_argument("--chesspack", default="chesspack")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--positions", type=int, default=24)
    ap.add_argument("--plies", type=int, nargs=2, default=(10, 30))
    ap.add_argument("--seed", type=int, default=1030)
    ap.add_argument("--fens", help="a file of FENs, one a line, instead of drawing them")
    args = ap.parse_args()
    if args.fens:
        with open(args.fens) as f:
            fens = [line.strip() for line in f if line.strip()]
    else:
        fens = draw(args.chesspack, args.archive, args.positions, *args.plies, args.seed)
    queries = [None] + fens
    rows = []
    for fen in queries:
        runs = [cli(args.chesspack, args.archive, fen, args.threads) for _ in range(2)]
        ms = min(r[0] for r in runs)
        rows.append({"fen": fen or "start", "cli_ms": round(ms, 1), "games": runs[0][1],
                     "decoded": runs[0][2]})
    report = {"archive": args.archive, "threads": args.threads, "rows": rows}
    try:
        import chesspack
    except ImportError:
        chesspack = None
        print("the chesspack package does not import: no open-archive times", file=sys.stderr)
    if chesspack is not None:
        archive = chesspack.Archive(args.archive)
        t = time.perf_counter()
        archive.explore(threads=args.threads)
        report["open_first_query_ms"] = round((time.perf_counter() - t) * 1000, 1)
        for row, fen in zip(rows, queries):
            best = float("inf")
            for _ in range(2):
                t = time.perf_counter()
                archive.explore(fen=fen, threads=args.threads)
                best = min(best, (time.perf_counter() - t) * 1000)
            row["open_ms"] = round(best, 1)
    report["cli"] = summary([r["cli_ms"] for r in rows])
    if chesspack is not None:
        report["open"] = summary([r["open_ms"] for r in rows])
    json.dump(report, sys.stdout, indent=1)
    print(file=sys.stdout)
    err = sys.stderr
    print(f"{'position':<72} {'games':>6} {'decoded':>7} {'cli ms':>7} {'open ms':>7}", file=err)
    for r in rows:
        print(f"{r['fen']:<72} {r['games'] or 0:>6} {r['decoded'] or 0:>7} "
              f"{r['cli_ms']:>7} {r.get('open_ms', '-'):>7}", file=err)
    for kind in ("cli", "open"):
        if kind in report:
            s = report[kind]
            print(f"{kind}: median {s['median_ms']} ms, slowest {s['slowest_ms']} ms, "
                  f"{s['within_50_ms']}/{s['of']} within 50 ms", file=err)
    if "open_first_query_ms" in report:
        print(f"open archive: first query (the start, section read) "
              f"{report['open_first_query_ms']} ms", file=err)


if __name__ == "__main__":
    main()
