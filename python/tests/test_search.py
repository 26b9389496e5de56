"""Issue 68: Archive.find and Archive.explore against python-chess replaying
every game of the shipped sample."""

import collections
import functools
import io
import json
import os

import chess
import chess.pgn
import chess.polyglot
import pytest

import chesspack

SAMPLE = os.path.join(os.path.dirname(__file__), "..", "..", "samples", "lichess-sample.pgn")


@functools.cache
def games():
    """Every game of the sample python-chess reads, with its boards (read
    once: the tests replay them many times)."""
    out = []
    with open(SAMPLE, encoding="utf-8") as f:
        text = f.read()
    f = io.StringIO(text)
    while (game := chess.pgn.read_game(f)) is not None:
        board = game.board()
        boards = [board.copy()]
        for m in game.mainline_moves():
            board.push(m)
            boards.append(board.copy())
        out.append((game, boards))
    return out


@pytest.fixture(
    scope="module",
    params=[(False, False), (True, False), (False, True)],
    ids=["index", "no-index", "index-squares"],
)
def archive(request, tmp_path_factory):
    """The sample's archive, and whether it is searched without an index:
    with the index, without it, and with the games' squares in it."""
    no_index, squares = request.param
    d = tmp_path_factory.mktemp("search")
    src = d / "sample.pgn"
    src.write_bytes(open(SAMPLE, "rb").read())
    out = d / ("plain.chpk" if no_index else "squares.chpk" if squares else "indexed.chpk")
    chesspack.compress(str(src), str(out), no_index=no_index, index_squares=squares)
    return chesspack.Archive(str(out)), no_index


def how(table):
    return json.loads(table.schema.metadata[b"chesspack.search"])


def searched(game):
    """Whether chesspack searches the game: a variant it does not play is
    stored verbatim."""
    return game.headers.get("Variant", "Standard") in ("Standard", "Chess960", "From Position")


@functools.cache
def keys():
    """python-chess's Zobrist hash of every board of every game."""
    return [[chess.polyglot.zobrist_hash(b) for b in boards] for _, boards in games()]


@functools.cache
def first_plies_by_key():
    """For each key of [`keys`], the first ply of each searched game there."""
    by_key = collections.defaultdict(dict)
    for i, ((game, _), ks) in enumerate(zip(games(), keys())):
        if searched(game):
            for ply, k in enumerate(ks):
                by_key[k].setdefault(i, ply)
    return by_key


def first_plies(pred):
    found = {}
    for i, (game, boards) in enumerate(games()):
        if not searched(game):
            continue
        for ply, b in enumerate(boards):
            if pred(b):
                found[i] = ply
                break
    return found


def test_issue_68_positions_found_as_python_chess_finds_them(archive):
    a, plain = archive
    boards = [b for _, bs in games()[:10] for b in bs[::7]]
    for board in boards[:25]:
        want = first_plies_by_key().get(chess.polyglot.zobrist_hash(board), {})
        t = a.find(fen=board)
        assert dict(zip(t.column("game").to_pylist(), t.column("ply").to_pylist())) == want, board.fen()
        assert how(t)["scanned"] == plain


def test_issue_68_material_and_sub_fen(archive):
    a, _ = archive
    game, boards = games()[3]
    late = boards[-1]
    mat = "".join(
        "K" + "".join(chess.piece_symbol(p).upper() * len(late.pieces(p, c)) for p in (5, 4, 3, 2, 1))
        for c in (chess.WHITE, chess.BLACK)
    )
    counts = lambda b: [len(b.pieces(p, c)) for c in (True, False) for p in range(1, 6)]
    want = first_plies(lambda b: counts(b) == counts(late))
    t = a.find(material=mat)
    assert dict(zip(t.column("game").to_pylist(), t.column("ply").to_pylist())) == want
    squares = list(late.piece_map())[:3]
    pattern = {sq: late.piece_at(sq) for sq in squares}
    sub = chess.Board(None)
    for sq, p in pattern.items():
        sub.set_piece_at(sq, p)
    want = first_plies(lambda b: all(b.piece_at(sq) == p for sq, p in pattern.items()))
    t = a.find(sub_fen=sub.board_fen())
    assert dict(zip(t.column("game").to_pylist(), t.column("ply").to_pylist())) == want


def test_issue_68_explore_counts_the_moves_python_chess_counts(archive):
    a, _ = archive
    for line in ([], ["e2e4"], ["d2d4", "d7d5"]):
        board = chess.Board()
        for u in line:
            board.push_uci(u)
        key = chess.polyglot.zobrist_hash(board)
        want = collections.Counter()
        for (game, boards), ks in zip(games(), keys()):
            if not searched(game):
                continue
            moves = list(game.mainline_moves())
            for ply, b in enumerate(boards):
                if ks[ply] == key:
                    if ply < len(moves):
                        want[b.san(moves[ply])] += 1
                    break
        t = a.explore(moves=line)
        assert dict(zip(t.column("san").to_pylist(), t.column("games").to_pylist())) == dict(want)


def test_issue_68_filters_and_bad_queries(archive):
    a, _ = archive
    t = a.find(white="a", result="1-0")
    for g in t.column("game").to_pylist():
        tags = a.tags(g)
        assert "a" in tags["White"].lower() and tags["Result"] == "1-0"
    with pytest.raises(ValueError, match="not a legal move"):
        a.find(moves="e4 e4")
    with pytest.raises(ValueError, match="bad FEN"):
        a.find(fen="not a fen")


def test_issue_68_the_opening_filter_and_column(archive):
    """`opening` finds the games whose `Opening` tag holds the text, any
    case, and the table gives each game's opening."""
    a, _ = archive
    want = {
        i: game.headers["Opening"]
        for i, (game, _) in enumerate(games())
        if searched(game) and "sicilian" in game.headers.get("Opening", "").lower()
    }
    assert want
    t = a.find(opening="SICILIAN")
    got = dict(zip(t.column("game").to_pylist(), t.column("opening").to_pylist()))
    assert got == want
    every = a.find(moves="e4")
    for g, o in zip(every.column("game").to_pylist(), every.column("opening").to_pylist()):
        assert o == games()[g][0].headers["Opening"]


def test_regression_issue_68_an_index_past_its_memory_is_left_out(tmp_path):
    """Past the memory it may take, the index is left out, the report says
    why, and the archive is the one without an index."""
    src = tmp_path / "sample.pgn"
    src.write_bytes(open(SAMPLE, "rb").read())
    small, plain, full = (tmp_path / n for n in ("small.chpk", "plain.chpk", "full.chpk"))
    report = chesspack.compress(str(src), str(small), index_memory=8192)
    assert "would take more than 8.0 KiB" in report["index_left_out"]
    chesspack.compress(str(src), str(plain), no_index=True)
    assert small.read_bytes() == plain.read_bytes()
    assert chesspack.compress(str(src), str(full))["index_left_out"] is None
    assert full.read_bytes() != plain.read_bytes()
