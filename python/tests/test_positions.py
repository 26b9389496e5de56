"""Every position of an archive's games as rows (issue 59): the rows
against python-chess replaying the same games, columns, NumPy, the
shuffled loader and its workers, and the PyTorch example of the docs."""

from __future__ import annotations

import re
import sys

import chess
import numpy as np
import pyarrow as pa
import pytest

import chesspack

from conftest import ROOT, SAMPLE

sys.path.insert(0, str(ROOT / "scripts"))
import positions_check  # noqa: E402


def test_issue_59_every_row_equals_python_chess(archive_path):
    report = positions_check.check_archive(chesspack.Archive(archive_path), every=True)
    assert report["different"] == 0, report["examples"]
    # Every game but the King of the Hill one, which is skipped.
    assert report["games"] == 36 and report["skipped"] == 1
    assert report["rows"] > 2500


@pytest.mark.parametrize("codec", ["fast", "brisk"])
def test_issue_59_a_fast_archive_gives_the_same_rows(archive_path, tmp_path, codec):
    other = tmp_path / f"{codec}.chpk"
    chesspack.compress(SAMPLE, other, codec=codec, block_games=5)
    a = pa.Table.from_batches([chesspack.Archive(archive_path).positions(b) for b in range(5)])
    f = chesspack.Archive(other)
    assert f.codec == codec
    b = pa.Table.from_batches([f.positions(i) for i in range(len(f.blocks()))])
    assert a.equals(b)


def test_issue_59_columns_and_skipped_games(archive_path):
    a = chesspack.Archive(archive_path)
    assert chesspack.POSITION_COLUMNS[:6] == ["board", "turn", "castling", "ep", "rule50", "ply"]
    assert "fen" not in chesspack.POSITION_COLUMNS
    skipped: list[int] = []
    rows = [a.positions(b, ["game", "uci", "Event", "fen"], skipped) for b in range(5)]
    assert rows[0].schema.names == ["game", "uci", "Event", "fen"]
    first = rows[0].slice(0, 1).to_pylist()[0]
    assert first["uci"] == "e2e4" and first["Event"] == "Rated Bullet game"
    assert first["fen"] == "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"
    # The King of the Hill game.
    assert len(skipped) == 1 and "King of the Hill" in a[skipped[0]]
    assert skipped[0] not in set(pa.concat_arrays([r.column("game") for r in rows]).to_pylist())
    with pytest.raises(ValueError, match="no position column"):
        a.positions(0, ["borad"])


def test_issue_59_numpy_without_copies(archive_path):
    a = chesspack.Archive(archive_path)
    batch = a.positions(0)
    arrays = a.numpy(0)
    assert arrays["board"].shape == (batch.num_rows, 64) and arrays["board"].dtype == np.uint8
    assert not arrays["board"].flags.owndata
    assert arrays["board"][0].tolist() == batch.column("board")[0].as_py()
    assert isinstance(arrays["eval"], np.ma.MaskedArray)
    assert arrays["eval"].mask.sum() == batch.column("eval").null_count
    assert np.ma.asarray(arrays["clock"]).compressed().tolist() == pytest.approx(
        [c for c in batch.column("clock").to_pylist() if c is not None]
    )


def _pairs(batches) -> list[tuple[int, int]]:
    out = []
    for b in batches:
        out.extend(zip(b.column("game").to_pylist(), b.column("ply").to_pylist()))
    return out


def test_issue_59_shuffled_workers_read_every_position_once(archive_path):
    a = chesspack.Archive(archive_path)
    every = _pairs(a.positions(b) for b in range(5))
    assert len(set(every)) == len(every)
    shares = [a.iter_positions(100, seed=7, buffer=300, worker=(i, 2)) for i in range(2)]
    got = [_pairs(s) for s in shares]
    assert sorted(got[0] + got[1]) == sorted(every)
    assert set(shares[0].blocks()).isdisjoint(shares[1].blocks())
    assert shares[0].positions + shares[1].positions == len(every)
    # Deterministic for a seed, another order for another seed, and shuffled.
    assert _pairs(a.iter_positions(100, seed=7, buffer=300, worker=(0, 2))) == got[0]
    again = _pairs(a.iter_positions(100, seed=8, buffer=300))
    assert sorted(again) == sorted(every) and again != every
    sizes = [b.num_rows for b in a.iter_positions(100, seed=8, buffer=300)]
    assert set(sizes[:-1]) == {100}
    # In order without shuffling.
    assert _pairs(a.iter_positions(128, shuffle=False)) == every
    with pytest.raises(ValueError, match="seed"):
        a.iter_positions(worker=(0, 2))
    with pytest.raises(ValueError, match="worker"):
        a.iter_positions(seed=1, worker=(2, 2))


def _pytorch_example() -> dict:
    doc = (ROOT / "docs" / "positions-for-training.md").read_text()
    code = re.search(r"```python\n(.*?)```", doc, re.S).group(1)
    scope: dict = {}
    exec(compile(code, "positions-for-training.md", "exec"), scope)
    return scope


def test_issue_59_the_pytorch_example_runs_with_numpy_alone(archive_path):
    scope = _pytorch_example()
    total = sum(b.num_rows for b in chesspack.Archive(archive_path).iter_positions(shuffle=False))
    assert scope["train_one_epoch"](str(archive_path)) == total


def test_regression_issue_69_d1_the_pytorch_example_gives_every_row_its_own_board(archive_path):
    # The example's batches are slices of a shuffled table: each (board,
    # side to move, move) it gives is one of the archive's rows, each once.
    scope = _pytorch_example()
    got = []
    for x, side, target in scope["Positions"](str(archive_path), batch_size=100):
        assert x.shape == (len(target), 64)
        got += [(b.astype(np.uint8).tobytes(), int(s), int(t)) for b, s, t in zip(x, side, target)]
    a = chesspack.Archive(archive_path)
    want = []
    for b in range(len(a.blocks())):
        rows = a.numpy(b)
        target = rows["from"].astype(np.int64) * 64 + rows["to"]
        want += [(x.tobytes(), int(s), int(t)) for x, s, t in zip(rows["board"], rows["turn"], target)]
    assert sorted(got) == sorted(want)


def test_regression_issue_69_d1_numpy_batches_are_their_rows_in_one_type(archive_path):
    # Every board of every batch is the one python-chess sets up from the
    # row's FEN, and a column has the same type in every batch, with or
    # without nulls in it.
    a = chesspack.Archive(archive_path)
    columns = ["board", "clock", "eval", "ply", "fen"]
    types = set()
    boards = 0
    for arrays in a.iter_positions(64, seed=5, buffer=200, columns=columns).numpy():
        assert arrays["board"].shape == (len(arrays["fen"]), 64)
        for board, fen in zip(arrays["board"], arrays["fen"]):
            assert board.tolist() == positions_check.board_codes(chess.Board(fen)), fen
            boards += 1
        types.add(tuple((k, type(v)) for k, v in arrays.items()))
    assert boards == sum(a.positions(b).num_rows for b in range(len(a.blocks())))
    assert len(types) == 1, types
    kinds = dict(types.pop())
    assert kinds["clock"] is np.ma.MaskedArray and kinds["eval"] is np.ma.MaskedArray
    assert kinds["ply"] is np.ndarray and kinds["board"] is np.ndarray
