"""Training-data archives (issue 42): a binpack in, back byte for byte, and
its positions as Arrow / NumPy training rows."""

from __future__ import annotations

import os

import pytest

import chesspack

FIXTURE = os.path.join(
    os.path.dirname(__file__), "..", "..", "crates", "chesspack", "tests", "fixtures", "training", "selfplay.binpack"
)


@pytest.fixture
def archive(tmp_path):
    src = tmp_path / "selfplay.binpack"
    src.write_bytes(open(FIXTURE, "rb").read())
    report = chesspack.compress(src)
    assert report["positions"] == 3000 and report["codec"] == "fast"
    return tmp_path / "selfplay.binpack.chpk"


def test_a_binpack_comes_back_byte_for_byte(archive, tmp_path):
    back = tmp_path / "back.binpack"
    assert chesspack.decompress(archive, back) == 3000
    assert back.read_bytes() == open(FIXTURE, "rb").read()


def test_training_rows_as_arrow_and_numpy(archive):
    import chess

    t = chesspack.TrainingArchive(archive)
    assert len(t) == 3000 and t.blocks == 1
    batch = t.read_block(0)
    assert batch.num_rows == 3000
    assert batch.schema.names == [
        "board", "turn", "castling", "ep", "rule50", "ply", "score", "result", "from", "to", "promotion",
    ]
    rows = t.numpy(0)
    assert rows["board"].shape == (3000, 64)
    # The first row is the first chain's stem; its move is legal there and
    # the next row is the position after it.
    pieces = " PNBRQKpnbrqk"
    board = chess.Board(None)
    for sq, p in enumerate(rows["board"][0]):
        if p:
            board.set_piece_at(sq, chess.Piece.from_symbol(pieces[p]))
    board.turn = bool(rows["turn"][0] == 0)
    board.castling_rights = 0
    for bit, sq in enumerate([chess.H1, chess.A1, chess.H8, chess.A8]):
        if rows["castling"][0] >> bit & 1:
            board.castling_rights |= chess.BB_SQUARES[sq]
    move = chess.Move(int(rows["from"][0]), int(rows["to"][0]))
    if board.is_castling(move):
        # binpack's castling goes to the rook's square.
        move = board.find_move(move.from_square, chess.square(6 if move.to_square % 8 == 7 else 2, move.to_square // 8))
    assert move in board.legal_moves
    board.push(move)
    after = [0] * 64
    for sq, piece in board.piece_map().items():
        after[sq] = pieces.index(piece.symbol())
    assert list(rows["board"][1]) == after
    assert rows["ply"][1] == rows["ply"][0] + 1
    assert rows["result"][1] == -rows["result"][0]
    assert sum(b.num_rows for b in t) == 3000


def test_issue_42_shuffled_rows_are_every_row_once(archive):
    t = chesspack.TrainingArchive(archive)
    rows = [r for b in t for r in b.to_pylist()]
    key = lambda r: (tuple(r["board"]), r["ply"], r["score"], r["from"], r["to"])  # noqa: E731
    shuffled = [r for b in t.shuffled(seed=1, batch_size=1000) for r in b.to_pylist()]
    assert sorted(map(key, shuffled)) == sorted(map(key, rows))
    assert [key(r) for r in shuffled] != [key(r) for r in rows]
    batches = list(t.shuffled(seed=1, batch_size=1000))
    assert [b.num_rows for b in batches] == [1000, 1000, 1000]
    again = [r for b in t.shuffled(seed=1, batch_size=1000) for r in b.to_pylist()]
    assert again == shuffled
    other = [r for b in t.shuffled(seed=2, batch_size=1000) for r in b.to_pylist()]
    assert other != shuffled
    with pytest.raises(ValueError):
        next(t.shuffled(window=0))


def test_bad_training_archives_name_the_file(archive, tmp_path):
    bad = tmp_path / "bad.chpk"
    data = bytearray(archive.read_bytes())
    data[200] ^= 0x40
    bad.write_bytes(bytes(data))
    t = chesspack.TrainingArchive(bad)
    with pytest.raises(chesspack.DecodeError, match="bad.chpk: block 1"):
        t.read_block(0)
    with pytest.raises(IndexError):
        t.read_block(5)
    with pytest.raises(chesspack.DecodeError):
        chesspack.TrainingArchive(FIXTURE)
    with pytest.raises(ValueError, match="already a chesspack archive"):
        chesspack.compress(archive, tmp_path / "again.chpk")


def test_plain_text_in_and_out(tmp_path):
    import zstandard

    z = open(FIXTURE.replace("selfplay.binpack", "selfplay.plain.zst"), "rb").read()
    text = zstandard.ZstdDecompressor().decompressobj().decompress(z).decode()
    src = tmp_path / "sp.plain"
    src.write_text(text)
    assert chesspack.compress(src)["positions"] == 3000
    t = chesspack.TrainingArchive(str(src) + ".chpk")
    assert t.plain(0) == text


def test_viriformat_in_and_out(tmp_path):
    # The fixture's chains as viriformat games, written by the `viriformat`
    # crate (examples/binpack_to_viriformat.rs).
    vf = open(FIXTURE.replace("selfplay.binpack", "selfplay.vf"), "rb").read()
    src = tmp_path / "sp.vf"
    src.write_bytes(vf)
    assert chesspack.compress(src)["positions"] == 2996
    t = chesspack.TrainingArchive(str(src) + ".chpk")
    assert b"".join(t.viriformat(b) for b in range(t.blocks)) == vf
    marlin = b"".join(t.marlinformat(b) for b in range(t.blocks))
    assert len(marlin) == 32 * 2996
    rows = t.numpy(0)
    # White's scores in the games, the side to move's in the rows: the
    # first game's first two plies (scores at bytes 34 and 38; this game
    # starts with Black to move).
    first, second = (int.from_bytes(vf[at : at + 2], "little", signed=True) for at in (34, 38))
    assert list(rows["turn"][:2]) == [1, 0]
    assert (rows["score"][0], rows["score"][1]) == (-first, second)
    # The records' scores are White's again (bytes 28-29 of each).
    assert int.from_bytes(marlin[28:30], "little", signed=True) == first
