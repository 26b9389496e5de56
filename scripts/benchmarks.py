#!/usr/bin/env python3
"""Makes the tables of docs/benchmarks.md again: the move codecs on
held-out games, `model` by rating band, and whole files against zstd and
xz, each with the command that measured it.

    python3 scripts/benchmarks.py [DATA] [CHESSPACK] > docs/benchmarks-new.md

DATA: the data folder (default ../shared/data/train); CHESSPACK: the
binary (default target/release/chesspack). Needs `xz` and `zstd` on PATH.
Speeds are of one thread (`--threads 1`); the machine's CPU and the
vector path the move models used (AVX-512, AVX2 or plain; set
CHESSPACK_VECTORS=avx2 to hold them to AVX2) head the output. A whole run
takes hours on two cores (compressing masters-pgnmentor with `model` and
`xz -9e` alone take most of one); `--quick` runs the held-out tables only.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BANDS = ["<1000", "1000-1400", "1400-1800", "1800-2200", "2200+", "unrated"]


def run(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, check=True, capture_output=True, **kw)


def cpu() -> str:
    try:
        for line in open("/proc/cpuinfo", encoding="utf-8"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown CPU"


def stats(binary: str, path: str, codecs: str) -> list[dict]:
    out = run([binary, "stats", "--holdout", "--json", "--threads", "1", "--codec", codecs, path]).stdout
    return [json.loads(line) for line in out.decode().splitlines() if line.strip()]


def size_of(cmd: list[str], data: bytes) -> int:
    return len(run(cmd, input=data).stdout)


def main() -> int:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    quick = "--quick" in sys.argv
    data = args[0] if args else os.path.join(ROOT, "..", "shared", "data", "train")
    binary = args[1] if len(args) > 1 else os.path.join(ROOT, "target", "release", "chesspack")
    files = {
        "masters": os.path.join(data, "masters-pgnmentor.pgn.zst"),
        "online": os.path.join(data, "lichess-accounts.pgn.zst"),
        "broad": os.path.join(data, "online-broad.pgn.zst"),
    }
    codecs = "model,brisk,fast,radix,index"
    print("# Benchmarks\n")
    print(f"Made by `scripts/benchmarks.py` on {time.strftime('%Y-%m-%d')}: {cpu()}, one thread.\n")
    rows = {}
    for name in ("masters", "online"):
        for r in stats(binary, files[name], codecs):
            rows.setdefault(r["codec"], {})[name] = r
    first = next(iter(rows.values()))["online"]
    print(f"Move models' vector path: {first.get('vectors', '?')}.\n")
    print("## Move codecs on held-out games\n")
    print(f"`chesspack stats --holdout --json --threads 1 --codec {codecs} FILE`\n")
    print("| codec | master games, bits/ply | online games, bits/ply | encode / decode plies/s (online) |")
    print("|---|---|---|---|")
    for codec, by in rows.items():
        m, o = by["masters"], by["online"]
        print(
            f"| `{codec}` | {m['bits_per_ply']:.2f} | {o['bits_per_ply']:.2f} | "
            f"{o['encode_plies_per_s'] / 1e3:,.0f} k / {o['decode_plies_per_s'] / 1e3:,.0f} k |"
        )
    print("\n## `model` by the players' mean rating\n")
    print("`chesspack stats --holdout --json --threads 1 --codec model FILE` (`by_rating`)\n")
    print("| file | " + " | ".join(BANDS) + " | all |")
    print("|---|" + "---|" * (len(BANDS) + 1))
    for name in ("broad", "online", "masters"):
        r = stats(binary, files[name], "model")[0]
        cells = []
        for band in BANDS:
            b = r.get("by_rating", {}).get(band)
            cells.append(f"{b['bits_per_ply']:.2f}" if b and b.get("plies") else "—")
        print(f"| {name} | " + " | ".join(cells) + f" | {r['bits_per_ply']:.2f} |")
    if quick:
        return 0
    print("\n## Whole files\n")
    print("`chesspack compress FILE` against `zstd -19` and `xz -9e` of the PGN\n")
    print("| file | PGN | `zstd -19` | `xz -9e` | `.chpk` | of xz |")
    print("|---|---|---|---|---|---|")
    for name in ("online", "masters"):
        pgn = run(["zstd", "-dc", files[name]]).stdout
        with tempfile.TemporaryDirectory() as d:
            src = os.path.join(d, "in.pgn")
            open(src, "wb").write(pgn)
            run([binary, "compress", "-q", src, "-o", os.path.join(d, "out.chpk")])
            chpk = os.path.getsize(os.path.join(d, "out.chpk"))
        zst = size_of(["zstd", "-19", "-c"], pgn)
        xz = size_of(["xz", "-9e", "-c"], pgn)
        print(f"| {name} | {len(pgn) / 1e6:.1f} MB | {zst / 1e6:.2f} MB | {xz / 1e6:.2f} MB | {chpk / 1e6:.2f} MB | {chpk / xz:.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
