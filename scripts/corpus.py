#!/usr/bin/env python3
"""Round trips a corpus of other projects' PGN files through chesspack
(issue 44): each file compressed with the CLI, decompressed, and compared
with its input byte for byte and, game by game, as python-chess reads both
(tags, moves, variations, comments and glyphs).

    python3 scripts/corpus.py DIR [CHESSPACK]

DIR holds the files (every file in it is tried); CHESSPACK is the CLI
(default target/release/chesspack). Needs python-chess (`pip install
chess`). Prints a table of the files' games: byte-identical files,
semantically equal games, different games, errors, and games stored
verbatim with why.
"""

import collections
import io
import pathlib
import re
import subprocess
import sys
import tempfile

import chess.pgn


def games_of(text):
    """Every game python-chess reads from `text`, as comparable tuples."""
    out = []
    stream = io.StringIO(text)
    while True:
        try:
            game = chess.pgn.read_game(stream)
        except Exception as e:  # python-chess gave up: compare the error
            out.append(("error", type(e).__name__))
            break
        if game is None:
            break
        exporter = chess.pgn.StringExporter(headers=False, variations=True, comments=True)
        out.append((tuple(game.headers.items()), game.accept(exporter), tuple(map(str, game.errors))))
    return out


def main():
    corpus = pathlib.Path(sys.argv[1])
    cli = sys.argv[2] if len(sys.argv) > 2 else "target/release/chesspack"
    totals = collections.Counter()
    why = collections.Counter()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for path in sorted(p for p in corpus.iterdir() if p.is_file()):
            packed = pathlib.Path(tmp) / "x.chpk"
            c = subprocess.run([cli, "compress", "-f", "-v", "-o", packed, path], capture_output=True, text=True)
            if c.returncode != 0:
                totals["errors"] += 1
                rows.append((path.name, "compress failed: " + c.stderr.strip()[-200:]))
                continue
            d = subprocess.run([cli, "decompress", "-c", packed], capture_output=True)
            if d.returncode != 0:
                totals["errors"] += 1
                rows.append((path.name, "decompress failed"))
                continue
            data = path.read_bytes()
            games = int(re.search(r"(\d+) games?,", c.stderr).group(1))
            verbatim = re.search(r"(\d+) games? stored verbatim", c.stderr)
            verbatim = int(verbatim.group(1)) if verbatim else 0
            for n, category in re.findall(r"^\s+(\d+) (.+?) \(e\.g\.", c.stderr, re.M):
                why[category] += int(n)
            totals["files"] += 1
            totals["games"] += games
            totals["verbatim"] += verbatim
            if d.stdout == data:
                totals["identical files"] += 1
                totals["identical games"] += games
                continue
            a = games_of(data.decode("utf-8", "replace"))
            b = games_of(d.stdout.decode("utf-8", "replace"))
            same = sum(x == y for x, y in zip(a, b))
            different = max(len(a), len(b)) - same
            totals["equal games"] += same
            totals["different games"] += different
            if different:
                rows.append((path.name, f"{different} games differ as python-chess reads them"))
    print("| files | games | byte-identical files (their games) | semantically equal games "
          "(other files) | different | errors | stored verbatim |")
    print("|---|---|---|---|---|---|---|")
    print(f"| {totals['files']} | {totals['games']} | {totals['identical files']} "
          f"({totals['identical games']}) | {totals['equal games']} | {totals['different games']} "
          f"| {totals['errors']} | {totals['verbatim']} |")
    if why:
        print("\nstored verbatim, by why:")
        for category, n in why.most_common():
            print(f"  {n:6} {category}")
    for name, what in rows:
        print(f"{name}: {what}")


if __name__ == "__main__":
    main()
