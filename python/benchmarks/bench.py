"""Measures the Python package against the Rust CLI and python-chess, in one
run, and prints a Markdown table (also written as JSON with --json).

    python python/benchmarks/bench.py [--games 20000] [--spark] [--json out.json]

* batch rates: ``encode_games``/``decode_games`` with one and two threads on
  the first N standard games of lichess-accounts, against
  ``chesspack stats --codec model --threads 1`` on the same games;
* bytes a game: the records' ``moves`` column, the ``movetext`` text, and
  both as zstd-compressed Parquet;
* python-chess reading the same games from ``.pgn.zst`` (games/s);
* with ``--spark``: the shard job (``compress_files`` with ``split_games``)
  and a full read through the data source on ``local[2]``, over
  masters-pgnmentor.pgn.zst.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import chess.pgn
import pyarrow as pa
import pyarrow.parquet as pq
import zstandard

import chesspack

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python" / "tests"))
from test_archive import split_games  # noqa: E402  (the tests' game splitter)

DATA = ROOT.parent / "shared" / "data" / "train"
CLI = ROOT / "target" / "release" / "chesspack"


def first_games(path: Path, n: int) -> list[str]:
    with open(path, "rb") as f:
        text = zstandard.ZstdDecompressor().stream_reader(f).read(max(40_000_000, n * 2500))
    out = []
    for g in split_games(text.decode("utf-8", "replace")):
        if '[Variant "' in g and '[Variant "Standard"]' not in g or '[FEN "' in g:
            continue
        out.append(g)
        if len(out) == n:
            break
    return out


def best(f, rounds=3):
    """The fastest of `rounds` timings, and f's result."""
    t, r = None, None
    for _ in range(rounds):
        s = time.perf_counter()
        r = f()
        e = time.perf_counter() - s
        t = e if t is None else min(t, e)
    return t, r


def batch_figures(games: list[str]) -> dict:
    movetexts = pa.array([g.strip().split("\n\n", 1)[1].strip() for g in games])
    tmp = Path(tempfile.mkdtemp())
    pgn = tmp / "games.pgn"
    pgn.write_text("".join(games))
    cli = json.loads(
        subprocess.run(
            [str(CLI), "stats", "--codec", "model", "--threads", "1", "--json", str(pgn)],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
    )
    plies = cli["plies"]
    out = {"games": len(games), "plies": plies, "cli_encode_plies_s": cli["encode_plies_per_s"],
           "cli_decode_plies_s": cli["decode_plies_per_s"], "cli_bits_per_ply": cli["bits_per_ply"]}
    for threads in (1, 2):
        t, records = best(lambda: chesspack.encode_games(movetexts, threads=threads))
        out[f"py_encode_{threads}t_s"] = t
        out[f"py_encode_{threads}t_plies_s"] = plies / t
        out[f"py_encode_{threads}t_games_s"] = len(games) / t
        t, _ = best(lambda: chesspack.decode_games(records, threads=threads))
        out[f"py_decode_{threads}t_plies_s"] = plies / t
        out[f"py_decode_{threads}t_games_s"] = len(games) / t
    assert records.null_count == 0
    # Bytes a game: the column, the text, and both as zstd Parquet.
    out["moves_bytes_per_game"] = (records.nbytes - 4 * (len(records) + 1)) / len(games)
    out["movetext_bytes_per_game"] = (movetexts.nbytes - 4 * (len(movetexts) + 1)) / len(games)
    for name, col in (("moves", records), ("movetext", movetexts)):
        p = tmp / f"{name}.parquet"
        pq.write_table(pa.table({name: col}), p, compression="zstd", compression_level=9)
        out[f"{name}_parquet_zstd_bytes_per_game"] = os.path.getsize(p) / len(games)
    # python-chess reading the same games from .pgn.zst.
    zst = tmp / "games.pgn.zst"
    zst.write_bytes(zstandard.ZstdCompressor(level=19).compress(pgn.read_bytes()))

    def pychess():
        with open(zst, "rb") as f:
            stream = io.TextIOWrapper(zstandard.ZstdDecompressor().stream_reader(f), encoding="utf-8")
            n = 0
            while chess.pgn.read_game(stream) is not None:
                n += 1
        return n

    t, n = best(pychess, rounds=1)
    out["python_chess_games_s"] = n / t
    shutil.rmtree(tmp)
    return out


def spark_figures(split: int) -> dict:
    from pyspark.sql import SparkSession, functions as F

    import chesspack.spark as cs

    os.environ["PYSPARK_PYTHON"] = sys.executable
    spark = (
        SparkSession.builder.master("local[2]").appName("chesspack-bench")
        .config("spark.ui.enabled", "false").getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    cs.register(spark)
    tmp = Path(tempfile.mkdtemp())
    src = tmp / "in"
    src.mkdir()
    os.symlink(DATA / "masters-pgnmentor.pgn.zst", src / "masters.pgn.zst")
    s = time.perf_counter()
    report = cs.compress_files(spark, str(src), str(tmp / "shards"), split_games=split)
    t_compress = time.perf_counter() - s
    games = sum(r["games"] for r in report)
    s = time.perf_counter()
    df = spark.read.format("chesspack").load(str(tmp / "shards"))
    row = df.agg(F.count("*").alias("g"), F.sum(F.size("moves")).alias("p")).collect()[0]
    t_read = time.perf_counter() - s
    spark.stop()
    out = {
        "spark_shards": len(report),
        "spark_games": games,
        "spark_compress_s": t_compress,
        "spark_compress_games_s": games / t_compress,
        "spark_read_s": t_read,
        "spark_read_games_s": row["g"] / t_read,
        "spark_read_plies": row["p"],
        "spark_input_bytes": sum(r["input_bytes"] for r in report),
        "spark_output_bytes": sum(r["output_bytes"] for r in report),
    }
    shutil.rmtree(tmp)
    return out


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--games", type=int, default=20000)
    p.add_argument("--spark", action="store_true")
    p.add_argument("--split", type=int, default=16384, help="games a Spark task")
    p.add_argument("--json")
    args = p.parse_args()
    fig = batch_figures(first_games(DATA / "lichess-accounts.pgn.zst", args.games))
    if args.spark:
        fig |= spark_figures(args.split)
    if args.json:
        Path(args.json).write_text(json.dumps(fig, indent=1))
    print(f"games {fig['games']}, plies {fig['plies']}, model {fig['cli_bits_per_ply']:.3f} bits/ply")
    print("| what | plies/s | games/s | vs CLI, one core |")
    print("|---|---|---|---|")
    g = fig["games"] / fig["plies"]
    print(f"| CLI `stats` encode, 1 thread | {fig['cli_encode_plies_s']:,.0f} | {fig['cli_encode_plies_s'] * g:,.0f} | 1.00 |")
    for t in (1, 2):
        r = fig[f"py_encode_{t}t_plies_s"]
        print(f"| `encode_games`, {t} thread(s) | {r:,.0f} | {r * g:,.0f} | {r / fig['cli_encode_plies_s']:.2f} |")
    print(f"| CLI `stats` decode, 1 thread | {fig['cli_decode_plies_s']:,.0f} | {fig['cli_decode_plies_s'] * g:,.0f} | 1.00 |")
    for t in (1, 2):
        r = fig[f"py_decode_{t}t_plies_s"]
        print(f"| `decode_games`, {t} thread(s) | {r:,.0f} | {r * g:,.0f} | {r / fig['cli_decode_plies_s']:.2f} |")
    print(f"| python-chess reading .pgn.zst | | {fig['python_chess_games_s']:,.0f} | |")
    print()
    print("| bytes a game | raw column | Parquet, zstd |")
    print("|---|---|---|")
    print(f"| `movetext` text | {fig['movetext_bytes_per_game']:.1f} | {fig['movetext_parquet_zstd_bytes_per_game']:.1f} |")
    print(f"| `moves` records | {fig['moves_bytes_per_game']:.1f} | {fig['moves_parquet_zstd_bytes_per_game']:.1f} |")
    if args.spark:
        print()
        print(
            f"Spark local[2], masters: compress {fig['spark_games']} games into {fig['spark_shards']} shards "
            f"in {fig['spark_compress_s']:.1f} s ({fig['spark_compress_games_s']:,.0f} games/s; "
            f"{fig['spark_input_bytes']:,} -> {fig['spark_output_bytes']:,} bytes); read back through the data source "
            f"in {fig['spark_read_s']:.1f} s ({fig['spark_read_games_s']:,.0f} games/s, {fig['spark_read_plies']:,} plies)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
