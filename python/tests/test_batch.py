"""Batches: Arrow columns in and out, nulls and errors per row, threads."""

from __future__ import annotations

import io
import os

import chess.pgn
import pyarrow as pa
import pytest

import chesspack
from conftest import SHARED, read_games


def sans_of(g: chess.pgn.Game) -> list[str]:
    b, out = g.board(), []
    for m in g.mainline_moves():
        out.append(b.san(m))
        b.push(m)
    return out


def movetext_of(g: chess.pgn.Game) -> str:
    exporter = chess.pgn.StringExporter(headers=False, variations=True, comments=True)
    return g.accept(exporter)


def starts_of(games):
    return [g.headers.get("FEN") for g in games]


def test_movetext_column_round_trips(sample_games):
    texts = pa.array([movetext_of(g) for g in sample_games])
    starts = pa.array(starts_of(sample_games))
    records, errors = chesspack.encode_games(texts, start=starts, return_errors=True)
    assert errors == []
    assert isinstance(records, pa.BinaryArray)
    back = chesspack.decode_games(records, start=starts)
    assert back.to_pylist() == [sans_of(g) for g in sample_games]


def test_list_columns_python_lists_and_moves(sample_games):
    games = [g for g in sample_games if "FEN" not in g.headers]
    lists = [sans_of(g) for g in games]
    a = chesspack.encode_games(lists)
    b = chesspack.encode_games(pa.array(lists, pa.large_list(pa.string())))
    c = chesspack.encode_games([list(g.mainline_moves()) for g in games])
    assert a.to_pylist() == b.to_pylist() == c.to_pylist()
    assert b.type == pa.large_binary()
    uci = chesspack.decode_games(a, output="uci").to_pylist()
    assert uci == [[m.uci() for m in g.mainline_moves()] for g in games]


def test_nulls_and_errors_per_row():
    games = pa.array(["1. e4 e5", None, "1. e4 e5 2. Ke3", "1. d4 {ok} d5 *", "1. e4 e5 2. -- Nc6"])
    with pytest.warns(chesspack.ChesspackWarning, match="2 games could not be coded"):
        out = chesspack.encode_games(games)
    assert [v is None for v in out.to_pylist()] == [False, True, True, False, True]
    out, errors = chesspack.encode_games(games, return_errors=True)
    assert [row for row, _ in errors] == [2, 4]
    assert "Ke3" in errors[0][1]
    records = pa.array([out[0].as_py(), b"\x15\x00", None, b"junk"], pa.binary())
    dec, errors = chesspack.decode_games(records, return_errors=True)
    assert dec.to_pylist()[0] == ["e4", "e5"]
    assert dec.to_pylist()[2] is None
    assert [row for row, _ in errors] == [1, 3]


def test_chunked_polars_and_movetext_output():
    polars = pytest.importorskip("polars")
    s = polars.Series("movetext", ["1. e4 e5 2. Nf3", "1. c4 c5"])
    out = chesspack.encode_games(s)
    assert isinstance(out, pa.ChunkedArray)
    chunked = pa.chunked_array([["1. e4 e5 2. Nf3"], ["1. c4 c5"]])
    out2 = chesspack.encode_games(chunked)
    assert out2.num_chunks == 2
    assert out.to_pylist() == out2.to_pylist()
    text = chesspack.decode_games(out2, output="movetext")
    assert text.to_pylist() == ["1. e4 e5 2. Nf3", "1. c4 c5"]
    # A Polars column of records decodes without pyarrow conversion.
    back = chesspack.decode_games(polars.Series("moves", out.to_pylist(), dtype=polars.Binary))
    assert back.to_pylist() == [["e4", "e5", "Nf3"], ["c4", "c5"]]


def test_start_as_black_to_move_numbers_movetext():
    fen = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"
    out = chesspack.encode_games(["e5 2. Nf3"], start=fen)
    assert chesspack.decode_games(out, start=fen, output="movetext").to_pylist() == ["1... e5 2. Nf3"]


def test_wrong_types_and_lengths():
    with pytest.raises(TypeError):
        chesspack.encode_games(pa.array([1, 2]))
    with pytest.raises(ValueError, match="start has 1 rows"):
        chesspack.encode_games(pa.array(["1. e4", "1. d4"]), start=pa.array([None], pa.string()))
    with pytest.raises(ValueError, match="output must be"):
        chesspack.decode_games(pa.array([b""]), output="pgn")


def test_threads_give_the_same_bytes(sample_games):
    texts = pa.array([movetext_of(g) for g in sample_games] * 3)
    starts = pa.array(starts_of(sample_games) * 3)
    one = chesspack.encode_games(texts, start=starts, threads=1)
    two = chesspack.encode_games(texts, start=starts, threads=2)
    assert one.equals(two)


LICHESS = SHARED / "train" / "lichess-accounts.pgn.zst"


@pytest.mark.skipif(not LICHESS.exists(), reason="../shared/data is not present")
def test_first_5000_lichess_games_round_trip(tmp_path):
    """The first 5,000 standard games of lichess-accounts round-trip through
    encode_games/decode_games and through an Archive with 0 differences
    (python-chess reads the reference moves)."""
    zstd = pytest.importorskip("zstandard")
    from test_archive import split_games

    with open(LICHESS, "rb") as f:
        reader = zstd.ZstdDecompressor().stream_reader(f)
        text = reader.read(40_000_000).decode("utf-8", "replace")
    games = []
    for g in split_games(text)[:-1]:
        if '[Variant "' in g and '[Variant "Standard"]' not in g or '[FEN "' in g:
            continue
        games.append(g)
        if len(games) == 5000:
            break
    assert len(games) == 5000
    movetexts = [g.strip().split("\n\n", 1)[1].strip() for g in games]
    sans = [sans_of(chess.pgn.read_game(io.StringIO(g))) for g in games]
    records, errors = chesspack.encode_games(pa.array(movetexts), return_errors=True)
    assert errors == []
    assert chesspack.decode_games(records).to_pylist() == sans
    pgn = tmp_path / "first.pgn"
    pgn.write_text("".join(games))
    chesspack.compress(pgn, tmp_path / "first.chpk")
    a = chesspack.Archive(tmp_path / "first.chpk")
    assert len(a) == 5000
    moves = a.to_arrow().column("moves").to_pylist()
    assert [[m.rstrip("+#") for m in ms] for ms in moves] == [[s.rstrip("+#") for s in ss] for ss in sans]


def test_issue_26_tags_give_model_its_context(sample_games):
    """Ratings and time controls, as one value or as columns of strings or
    numbers, change `model`'s records; the same tags decode them, each row
    in its own context; records of the single-game API agree."""
    games = [g for g in sample_games if "FEN" not in g.headers][:8]
    sans = [sans_of(g) for g in games]
    white = [int(g.headers["WhiteElo"]) if g.headers.get("WhiteElo", "?").isdigit() else None for g in games]
    black = pa.array([g.headers.get("BlackElo") for g in games], pa.string())
    tc = [g.headers.get("TimeControl") for g in games]
    tags = {"WhiteElo": pa.array(white, pa.int64()), "BlackElo": black, "TimeControl": tc}
    plain = chesspack.encode_games(sans)
    rated = chesspack.encode_games(sans, tags=tags)
    assert rated.to_pylist() != plain.to_pylist()
    assert chesspack.decode_games(rated, tags=tags).to_pylist() == sans
    for i, g in enumerate(games):
        one = chesspack.encode_game(sans[i], tags=g.headers)
        assert one == rated[i].as_py()
        assert chesspack.decode_game(one, tags=g.headers) == sans[i]
    # One value for every row; a column of the wrong length is refused.
    same = chesspack.encode_games(sans, tags={"WhiteElo": 1500, "BlackElo": "1500"})
    assert chesspack.decode_games(same, tags={"WhiteElo": "1500", "BlackElo": 1500}).to_pylist() == sans
    with pytest.raises(ValueError, match="WhiteElo has 2 rows"):
        chesspack.encode_games(sans, tags={"WhiteElo": [1500, 1600]})
    # Codecs without a context ignore the tags.
    assert chesspack.encode_games(sans, "index", tags=tags).to_pylist() == chesspack.encode_games(sans, "index").to_pylist()


def test_issue_26_clocks_give_model_time_pressure(sample_games):
    """The clock after each ply (python-chess's node.clock()) is part of
    `model`'s context: records with clocks differ from records without,
    and decode with the same clocks; as the archive codes them."""
    timed = [g for g in sample_games if "FEN" not in g.headers and g.next() and g.next().clock() is not None][:5]
    assert timed
    for g in timed:
        sans = sans_of(g)
        clocks = [node.clock() for node in g.mainline()]
        with_clocks = chesspack.encode_game(sans, tags=g.headers, clocks=clocks)
        without = chesspack.encode_game(sans, tags=g.headers)
        assert with_clocks != without
        assert chesspack.decode_game(with_clocks, tags=g.headers, clocks=clocks) == sans
        assert chesspack.decode_game(with_clocks, tags=g.headers, clocks=clocks, uci=True)[0] == g.next().move.uci()


def test_issue_26_batch_clocks_give_model_time_pressure(sample_games, tmp_path):
    """encode_games/decode_games take the clocks as a list column (seconds,
    or milliseconds as archive rows hold them): each row codes as the
    single-game API codes it with the same clocks; a bad reading is that
    row's error, not a silent change of context."""
    games = [g for g in sample_games if "FEN" not in g.headers][:8]
    assert any(g.next() and g.next().clock() is not None for g in games)
    sans = [sans_of(g) for g in games]
    full = [[node.clock() for node in g.mainline()] for g in games]
    clocks = list(full)
    clocks[1] = None  # a game without clocks
    tags = {"WhiteElo": [g.headers.get("WhiteElo") for g in games], "TimeControl": [g.headers.get("TimeControl") for g in games]}
    timed = chesspack.encode_games(sans, tags=tags, clocks=clocks)
    assert timed.to_pylist() != chesspack.encode_games(sans, tags=tags).to_pylist()
    for i, g in enumerate(games):
        one = chesspack.encode_game(sans[i], tags={k: v[i] for k, v in tags.items() if v[i] is not None}, clocks=clocks[i])
        assert one == timed[i].as_py(), i
    assert chesspack.decode_games(timed, tags=tags, clocks=clocks).to_pylist() == sans
    # Milliseconds, as an archive's rows give them: the same records.
    ms = pa.array([None if c is None else [None if x is None else round(x * 1000) for x in c] for c in clocks], pa.list_(pa.int64()))
    assert chesspack.encode_games(sans, tags=tags, clocks=ms, clock_unit="ms").to_pylist() == timed.to_pylist()
    src = tmp_path / "timed.pgn"
    src.write_text("\n\n".join(str(g) for g in games) + "\n")
    archive = chesspack.compress(src, tmp_path / "timed.chpk")
    rows = chesspack.Archive(tmp_path / "timed.chpk").to_arrow()
    assert archive["games"] == len(games)
    from_rows = chesspack.encode_games(rows["moves"], tags=tags, clocks=rows["clocks"], clock_unit="ms")
    assert from_rows.to_pylist() == chesspack.encode_games(sans, tags=tags, clocks=full).to_pylist()
    # A negative reading is the row's error; the others code.
    bad = list(clocks)
    bad[0] = [-3.0] + bad[0][1:] if bad[0] else [-3.0]
    out, errors = chesspack.encode_games(sans, tags=tags, clocks=bad, return_errors=True)
    assert [row for row, _ in errors] == [0]
    assert "clock reading -3 after ply 1" in errors[0][1]
    assert out.to_pylist()[1:] == timed.to_pylist()[1:]
    with pytest.raises(ValueError, match="clocks has 1 rows"):
        chesspack.encode_games(sans, clocks=[[60]])
    with pytest.raises(ValueError, match="clock_unit"):
        chesspack.encode_games(sans, clocks=clocks, clock_unit="min")
