"""Smoke test of an installed chesspack wheel (python/ci.sh runs it in a
fresh virtual environment where no Rust toolchain is on PATH): records,
a PGN archive and a training-data archive, from the repository's samples.

    python python/tests/wheel_smoke.py
"""

import os
import shutil
import sys
import tempfile

import chesspack

root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
record = chesspack.encode_game(["e4", "e5", "Nf3"])
assert chesspack.decode_game(record) == ["e4", "e5", "Nf3"]

tmp = tempfile.mkdtemp()
pgn = os.path.join(tmp, "sample.pgn")
shutil.copy(os.path.join(root, "samples", "lichess-sample.pgn"), pgn)
report = chesspack.compress(pgn)
archive = chesspack.Archive(pgn + ".chpk")
assert len(archive) == report["games"] == 37, report
chesspack.decompress(pgn + ".chpk", os.path.join(tmp, "back.pgn"))
assert open(os.path.join(tmp, "back.pgn"), "rb").read() == open(pgn, "rb").read()

binpack = os.path.join(tmp, "selfplay.binpack")
shutil.copy(os.path.join(root, "crates", "chesspack", "tests", "fixtures", "training", "selfplay.binpack"), binpack)
chesspack.compress(binpack)
rows = chesspack.TrainingArchive(binpack + ".chpk").numpy(0)
assert rows["board"].shape == (3000, 64)
shutil.rmtree(tmp)
print(f"chesspack {chesspack.__version__} from {os.path.dirname(chesspack.__file__)}: ok", file=sys.stderr)
