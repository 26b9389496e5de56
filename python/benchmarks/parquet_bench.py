"""Parquet with chesspack moves against the Hugging Face layout of the
lichess database (tags as columns, the movetext as text, zstd), on a PGN
file and its archive (issue 43, item 3).

    python python/benchmarks/parquet_bench.py GAMES.pgn GAMES.chpk OUTDIR
"""

import os
import re
import sys
import time

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

import chesspack.parquet as cp

TAG = re.compile(r'^\[(\w+) "(.*)"\]$')
INTS = ["WhiteElo", "BlackElo", "WhiteRatingDiff", "BlackRatingDiff"]
HF = [
    "Event", "Site", "White", "Black", "Result", "WhiteTitle", "BlackTitle", "WhiteElo", "BlackElo",
    "WhiteRatingDiff", "BlackRatingDiff", "UTCDate", "UTCTime", "ECO", "Opening", "Termination",
    "TimeControl", "movetext",
]


def hf_table(pgn):
    """The games as the Hugging Face dataset lays them out."""
    cols = {c: [] for c in HF}
    tags, moves = {}, []

    def flush():
        if not tags and not moves:
            return
        for c in HF[:-1]:
            v = tags.get(c)
            if c in INTS:
                try:
                    v = int(v) if v is not None else None
                except ValueError:
                    v = None
            cols[c].append(v)
        cols["movetext"].append(" ".join(moves))

    with open(pgn, encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            m = TAG.match(line)
            if m:
                if moves:
                    flush()
                    tags, moves = {}, []
                tags[m.group(1)] = m.group(2)
            elif line.strip():
                moves.append(line.strip())
    flush()
    types = {c: pa.int32() if c in INTS else pa.string() for c in HF}
    return pa.table({c: pa.array(v, types[c]) for c, v in cols.items()})


def rchar():
    """Bytes this process has read so far (Linux's /proc/self/io)."""
    with open("/proc/self/io") as f:
        for line in f:
            if line.startswith("rchar"):
                return int(line.split()[1])
    return 0


def timed(con, sql):
    before = rchar()
    t = time.perf_counter()
    r = con.sql(sql).fetchall()
    return time.perf_counter() - t, r, rchar() - before


def main():
    pgn, chpk, outdir = sys.argv[1:4]
    os.makedirs(outdir, exist_ok=True)
    ours = os.path.join(outdir, "chesspack.parquet")
    hf = os.path.join(outdir, "hf.parquet")
    t = time.perf_counter()
    r = cp.to_parquet(chpk, ours)
    print(f"to_parquet: {r['games']} games in {time.perf_counter() - t:.1f} s")
    table = hf_table(pgn)
    pq.write_table(table, hf, compression="zstd")
    games = r["games"]
    sizes = {"PGN": os.path.getsize(pgn), ".chpk": os.path.getsize(chpk),
             "Hugging Face layout (zstd)": os.path.getsize(hf), "chesspack Parquet": os.path.getsize(ours)}
    for k, v in sizes.items():
        print(f"{k:28} {v:>12,} bytes {v / games:8.1f} bytes/game")
    print(f"chesspack Parquet / HF layout: {sizes['chesspack Parquet'] / sizes['Hugging Face layout (zstd)']:.3f}")
    meta = pq.ParquetFile(ours).metadata
    by = {}
    for g in range(meta.num_row_groups):
        for c in range(meta.num_columns):
            col = meta.row_group(g).column(c)
            by[col.path_in_schema] = by.get(col.path_in_schema, 0) + col.total_compressed_size
    print("chesspack Parquet columns:", ", ".join(f"{k} {v / games:.1f}" for k, v in sorted(by.items(), key=lambda x: -x[1])[:8]), "bytes/game")
    con = duckdb.connect()
    cp.register_duckdb(con)
    con.sql("select 1").fetchall()
    for name, path in [("HF", hf), ("chesspack", ours)]:
        secs, res, read = timed(con, f"select count(*), avg(WhiteElo) from '{path}' where TimeControl = '180+0'")
        print(f"tags-only query on {name}: {secs:.3f} s, {read:,} bytes read {res}")
    print(f"(the moves column of the chesspack file holds {by['moves']:,} bytes)")
    secs, res, read = timed(con, f"select count(*), sum(len(decode_moves(moves, WhiteElo, BlackElo, TimeControl, FEN, clocks))) from '{ours}' where WhiteElo > 2000")
    print(f"query decoding the moves of WhiteElo > 2000 (chesspack): {secs:.2f} s, {read:,} bytes read {res}")
    secs, res, read = timed(con, f"select count(*), sum(len(movetext)) from '{hf}' where WhiteElo > 2000")
    print(f"the same games' movetext (HF): {secs:.3f} s, {read:,} bytes read {res}")


if __name__ == "__main__":
    main()
