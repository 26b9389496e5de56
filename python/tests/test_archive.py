"""Archives: random access, blocks, rows, compress/decompress/verify."""

from __future__ import annotations

import os
import shutil

import pyarrow as pa
import pytest

import chesspack
from conftest import PUZZLES, ROOT, SAMPLE, read_games


def split_games(text: str) -> list[str]:
    """Canonical archive text, one game a string (games end with a blank
    line after the movetext)."""
    games, cur, in_moves = [], [], False
    for line in text.splitlines(keepends=True):
        cur.append(line)
        if line.strip() and not line.startswith("["):
            in_moves = True
        elif line.strip() == "" and in_moves:
            games.append("".join(cur))
            cur, in_moves = [], False
    if cur:
        games.append("".join(cur))
    return games


def test_random_access_matches_decompress(archive_path, decompressed):
    a = chesspack.Archive(archive_path)
    assert len(a) == 37
    assert a.codec == "model" and a.version == 19 and a.model_hash != 0
    # The last game (King of the Hill) is kept verbatim, with the file's one
    # final line feed.
    assert decompressed.endswith("0-1\n") and a[36].endswith("0-1\n")
    assert "".join(a) == decompressed
    assert "".join(a[i] for i in range(len(a))) == decompressed
    assert a[-1] == a[36] and a[1:3] == [a[1], a[2]]
    with pytest.raises(IndexError):
        a[37]


def test_blocks_cover_the_games(archive_path):
    a = chesspack.Archive(archive_path)
    blocks = a.blocks()
    assert len(blocks) == 5
    assert [b["first_game"] for b in blocks] == [0, 8, 16, 24, 32]
    assert sum(b["games"] for b in blocks) == len(a)
    assert blocks[1]["offset"] > blocks[0]["offset"] + blocks[0]["length"] - 1
    assert "".join(a.block_games(1)) == "".join(a[8:16])


def test_tags_and_rows_agree_with_python_chess(archive_path, decompressed):
    a = chesspack.Archive(archive_path)
    games = read_games(decompressed)
    table = a.to_arrow(pgn=True)
    assert table.num_rows == len(a) == len(games)
    rows = table.to_pylist()
    for i, (g, row) in enumerate(zip(games, rows)):
        assert row["game"] == i
        tags = a.tags(i)
        for k, v in tags.items():
            assert g.headers[k] == v
        # Issue 26: ECO and Opening tags that the archive stores as what the
        # moves give come back from the moves.
        for k in ("ECO", "Opening"):
            assert tags.get(k) == (g.headers[k] if k in g.headers else None)
        assert row["White"] == g.headers.get("White")
        elo = g.headers.get("WhiteElo")
        assert row["WhiteElo"] == (int(elo) if elo and elo.isdigit() else None)
        assert row["pgn"] == a[i]
        if g.headers.get("Variant") not in (None, "Standard", "Chess960", "From Position"):
            continue
        b, sans, clocks = g.board(), [], []
        for node in g.mainline():
            sans.append(b.san(node.move))
            b.push(node.move)
            c = node.clock()
            clocks.append(None if c is None else round(c * 1000))
        assert [m.rstrip("+#") for m in row["moves"]] == [s.rstrip("+#") for s in sans]
        assert row["clocks"] == (clocks if any(c is not None for c in clocks) else None)


def test_issue_40_rows_straight_from_the_archive_equal_rows_of_the_text(archive_path):
    """Rows decoded straight into columns (no PGN written and parsed) are
    the rows the PGN text gives, and a selection of columns is those
    columns, tags alone decoding no moves."""
    a = chesspack.Archive(archive_path)
    for b in range(len(a.blocks())):
        from_text = a.read_block(b, pgn=True)
        straight = a.read_block(b)
        assert straight.num_rows == from_text.num_rows > 0
        assert straight.to_pylist() == from_text.drop_columns(["pgn"]).to_pylist()
        for cols in (["White", "ECO", "Opening"], ["game", "WhiteElo"], ["clocks", "Site"], ["pgn"]):
            sel = a.read_block(b, columns=cols)
            assert sel.schema.names == cols
            assert sel.to_pylist() == from_text.select(cols).to_pylist()
    with pytest.raises(ValueError, match="no column"):
        a.read_block(0, columns=["nope"])


def test_issue_40_the_archive_is_an_arrow_stream(archive_path):
    """An archive is an Arrow stream (PyCapsule interface), a block at a
    time, with the rows of to_arrow; Polars reads its reader."""
    import polars as pl

    a = chesspack.Archive(archive_path)
    table = a.to_arrow()
    assert pa.table(a).equals(table)
    assert pl.from_arrow(a.to_reader()).height == len(a)
    reader = a.to_reader(columns=["game", "White", "ECO"])
    assert reader.schema.names == ["game", "White", "ECO"]
    assert reader.read_all().to_pylist() == table.select(["game", "White", "ECO"]).to_pylist()


def test_issue_40_a_fast_archive_reads_the_same_rows(tmp_path):
    """An archive written with `fast` (larger, decoded five to six times
    faster) gives every row and the text that a `model` archive
    of the same games gives, and its header names its codec."""
    model, fast = tmp_path / "model.chpk", tmp_path / "fast.chpk"
    chesspack.compress(SAMPLE, model, threads=1, block_games=8)
    chesspack.compress(SAMPLE, fast, "fast", threads=1, block_games=8)
    a, f = chesspack.Archive(model), chesspack.Archive(fast)
    assert (a.codec, f.codec) == ("model", "fast")
    assert os.path.getsize(fast) > os.path.getsize(model)
    rows = f.to_arrow().to_pylist()
    assert rows == a.to_arrow().to_pylist() and sum(len(r["moves"]) for r in rows) > 1000
    texts = [tmp_path / "m.pgn", tmp_path / "f.pgn"]
    for p, t in zip((model, fast), texts):
        chesspack.decompress(p, t)
    assert texts[0].read_bytes() == texts[1].read_bytes() == SAMPLE.read_bytes()


def test_python_chess_games(archive_path):
    a = chesspack.Archive(archive_path)
    g = a.game(0)
    assert g.headers["White"] == a.tags(0)["White"]
    assert len(list(a.games())) == len(a)


def test_verify_and_damage(archive_path, tmp_path):
    r = chesspack.verify(archive_path)
    assert r["ok"] and r["games"] == 37 and r["blocks"] == 5 and r["problems"] == []
    data = bytearray(archive_path.read_bytes())
    a = chesspack.Archive(archive_path)
    b = a.blocks()[2]
    data[b["offset"] + 20] ^= 0x55
    bad = tmp_path / "bad.chpk"
    bad.write_bytes(data)
    r = chesspack.verify(bad)
    assert not r["ok"] and "block 3" in r["problems"][0]
    damaged = chesspack.Archive(bad)
    assert damaged[0] == a[0]
    with pytest.raises(chesspack.DecodeError, match="block 3"):
        damaged[17]
    with pytest.raises(chesspack.DecodeError, match="block 3"):
        chesspack.decompress(bad, tmp_path / "out.pgn")
    assert not (tmp_path / "out.pgn").exists()
    assert not any(p.name.endswith(".tmp") for p in tmp_path.iterdir())
    # Truncated: no index; recover=True reads the blocks found.
    cut = tmp_path / "cut.chpk"
    cut.write_bytes(archive_path.read_bytes()[: a.blocks()[3]["offset"] + 5])
    with pytest.raises(chesspack.DecodeError, match="index"):
        chesspack.Archive(cut)
    rec = chesspack.Archive(cut, recover=True)
    assert len(rec) == 24 and rec.index_error
    assert rec[23] == a[23]
    # Not an archive.
    with pytest.raises(chesspack.DecodeError, match="not a chesspack archive"):
        chesspack.Archive(SAMPLE)
    with pytest.raises(OSError):
        chesspack.Archive(tmp_path / "missing.chpk")


def test_compress_options_progress_and_overwrite(tmp_path):
    src = tmp_path / "s.pgn"
    shutil.copy(SAMPLE, src)
    calls = []
    r = chesspack.compress(src, codec="index", threads=1, progress=lambda d, t: calls.append((d, t)))
    assert r["games"] == 37 and r["output_bytes"] == os.path.getsize(str(src) + ".chpk")
    assert [v[1] for v in r["verbatim"]] == ["unsupported variant"]
    assert calls and calls[-1][0] == calls[-1][1] == os.path.getsize(src)
    with pytest.raises(FileExistsError):
        chesspack.compress(src)
    chesspack.compress(src, overwrite=True, progress=True)
    assert chesspack.Archive(str(src) + ".chpk").codec == "model"
    with pytest.raises(OSError, match="same file"):
        chesspack.compress(src, src)

    class Bar:
        total = None
        n = 0

        def update(self, k):
            self.n += k

    bar = Bar()
    out = tmp_path / "back.pgn"
    chesspack.decompress(str(src) + ".chpk", out, progress=bar)
    assert bar.n == bar.total > 0
    assert out.read_text() == "".join(chesspack.Archive(str(src) + ".chpk"))


def test_regression_issue_40_eco_tags_alone_keep_their_opening(tmp_path):
    # The sample's games with an `ECO` tag alone, as master games have.
    src = tmp_path / "eco.pgn"
    src.write_text("".join(l for l in SAMPLE.read_text().splitlines(keepends=True) if not l.startswith("[Opening ")))
    kept, derived = tmp_path / "kept.chpk", tmp_path / "derived.chpk"
    chesspack.compress(src, kept, threads=1)
    chesspack.compress(src, derived, threads=1, derive_eco=True)
    assert kept.read_bytes() != derived.read_bytes()
    rows = [chesspack.Archive(p).read_block(0, columns=["ECO"]).column("ECO").to_pylist() for p in (kept, derived)]
    assert rows[0] == rows[1] and sum(1 for v in rows[0] if v) > 20
    texts = [tmp_path / "k.pgn", tmp_path / "d.pgn"]
    for p, t in zip((kept, derived), texts):
        chesspack.decompress(p, t)
    assert texts[0].read_bytes() == texts[1].read_bytes()


def test_zst_input_and_positions(tmp_path):
    zstd = pytest.importorskip("zstandard")
    src = tmp_path / "s.pgn.zst"
    src.write_bytes(zstd.ZstdCompressor().compress(SAMPLE.read_bytes()))
    chesspack.compress(src, tmp_path / "z.chpk")
    assert len(chesspack.Archive(tmp_path / "z.chpk")) == 37
    r = chesspack.compress(PUZZLES, tmp_path / "p.chpk")
    assert r["lines"] == 201 and r["unit"] == "line"  # the header among them
    assert chesspack.decompress(tmp_path / "p.chpk", tmp_path / "p.csv") == 201
    assert (tmp_path / "p.csv").read_bytes() == PUZZLES.read_bytes()


def test_issue_41_every_compressed_input_the_command_line_reads(tmp_path):
    # gzip, bzip2 and xz from Python's standard library, as the CLI reads
    # them (files::decoder, told by the first bytes).
    import bz2
    import gzip
    import lzma

    text = SAMPLE.read_bytes()
    for ext, pack in [("gz", gzip.compress), ("bz2", bz2.compress), ("xz", lzma.compress)]:
        src = tmp_path / f"s.pgn.{ext}"
        src.write_bytes(pack(text))
        chesspack.compress(src, tmp_path / f"{ext}.chpk")
        chesspack.decompress(tmp_path / f"{ext}.chpk", tmp_path / f"{ext}.pgn")
        assert len(chesspack.Archive(tmp_path / f"{ext}.chpk")) == 37
    assert (tmp_path / "gz.pgn").read_bytes() == (tmp_path / "xz.pgn").read_bytes()
    positions = tmp_path / "p.csv.gz"
    positions.write_bytes(gzip.compress(PUZZLES.read_bytes()))
    assert chesspack.compress(positions, tmp_path / "pg.chpk")["lines"] == 201


def test_regression_issue_44_a_missing_file_is_file_not_found(tmp_path):
    for call in [
        lambda: chesspack.Archive(tmp_path / "nosuch.chpk"),
        lambda: chesspack.compress(tmp_path / "nosuch.pgn", tmp_path / "x.chpk"),
        lambda: chesspack.decompress(tmp_path / "nosuch.chpk", tmp_path / "x.pgn"),
    ]:
        with pytest.raises(FileNotFoundError, match="nosuch"):
            call()


def test_regression_issue_44_an_archive_is_not_compressed_again(archive_path, tmp_path):
    with pytest.raises(ValueError, match="already a chesspack archive"):
        chesspack.compress(archive_path, tmp_path / "again.chpk")
    assert not (tmp_path / "again.chpk").exists()


def test_errors_are_exceptions_not_crashes(tmp_path):
    src = tmp_path / "x.pgn"
    src.write_bytes(b"\x00\xff garbage \n[Event \"x\"]\n\n1. e4 e5 *\n")
    chesspack.compress(src, tmp_path / "x.chpk")
    text = (tmp_path / "x.pgn").read_bytes()
    chesspack.decompress(tmp_path / "x.chpk", tmp_path / "y.pgn")
    assert b"1. e4 e5 *" in (tmp_path / "y.pgn").read_bytes()
    with pytest.raises(chesspack.UnknownCodec):
        chesspack.compress(src, tmp_path / "z.chpk", codec="nope")
    assert text


def test_regression_issue_44_a_game_longer_than_8_mib_is_one_game(tmp_path):
    """A 300 MB game on one line was 37 games of 8 MiB; a game text longer
    than 8 MiB is now one game in pieces across blocks, whole in every
    read: its text, its row, its tags, the iteration."""
    moves = "".join(f"{n}. Nf3 Nf6 {n + 1}. Ng1 Ng8 " for n in range(1, 1_200_000, 2))
    big = '[Event "Marathon"]\n[White "A"]\n\n' + moves + "*\n\n"
    small = '[Event "Small"]\n\n1. e4 e5 *\n\n'
    src = tmp_path / "big.pgn"
    src.write_text(small + big + small)
    assert src.stat().st_size > 16 << 20
    chesspack.compress(src, tmp_path / "big.chpk", codec="index")
    a = chesspack.Archive(tmp_path / "big.chpk")
    assert len(a) == 3 and len(a.blocks()) >= 3
    assert a[1] == big and a[2] == small
    assert a.tags(1)["Event"] == "Marathon"
    assert list(a) == [small, big, small]
    rows = [r for b in range(len(a.blocks())) for r in a.read_block(b, pgn=True).to_pylist()]
    assert [r["game"] for r in rows] == [0, 1, 2]
    assert rows[1]["pgn"] == big and rows[1]["Event"] == "Marathon"
    events = [r["Event"] for b in range(len(a.blocks())) for r in a.read_block(b, columns=["Event"]).to_pylist()]
    assert events == ["Small", "Marathon", "Small"]
    straight = [r for b in range(len(a.blocks())) for r in a.read_block(b).to_pylist()]
    assert [(r["game"], r["Event"]) for r in straight] == [(0, "Small"), (1, "Marathon"), (2, "Small")]


def test_issue_56_bytes_that_are_not_utf8_show_alike_everywhere(tmp_path):
    """A name in Latin-1 (an older database's) reads the same in a[i],
    game(i), tags(i) and the Arrow columns: UTF-8 where the bytes are UTF-8,
    else Latin-1; raw(i) and decompress give the input's bytes back."""
    src = tmp_path / "latin1.pgn"
    data = (
        b'[White "M\xfcller"]\n[Black "Bj\xc3\xb6rk"]\n[Result "1-0"]\n\n1.e4 e5 2.Qh5?! Nc6 3.Bc4 Nf6\n4.Qxf7# 1-0\n\n'
        b'[White "\xe9t\xe9"]\n[Black "b"]\n[Result "*"]\n\n1. d4 { caf\xe9 } *\n'
    )
    src.write_bytes(data)
    packed = tmp_path / "latin1.chpk"
    chesspack.compress(src, packed, threads=1)
    a = chesspack.Archive(packed)
    assert a.raw(0) + a.raw(1) == data
    assert a.tags(0)["White"] == "Müller" and a.tags(0)["Black"] == "Björk"
    assert a.tags(1)["White"] == "été"
    assert 'White "Müller"' in a[0] and "café" in a[1]
    assert a.game(0).headers["White"] == "Müller"
    rows = a.to_arrow(pgn=True).to_pylist()
    assert [r["White"] for r in rows] == ["Müller", "été"]
    assert rows[1]["pgn"] == a[1]
    out = tmp_path / "back.pgn"
    chesspack.decompress(packed, out)
    assert out.read_bytes() == data


def test_issue_56_a_loop_over_tags_reads_each_block_once(archive_path):
    """tags(i) in a loop gives each game's tags, the same as the Arrow
    columns, from any block in any order."""
    a = chesspack.Archive(archive_path)
    table = a.to_arrow(columns=["game", "White", "Black", "Result"]).to_pylist()
    order = list(range(len(a)))[::-1] + list(range(len(a)))
    for i in order:
        t = a.tags(i)
        row = table[i]
        assert (t.get("White"), t.get("Black"), t.get("Result")) == (row["White"], row["Black"], row["Result"])


def test_issue_57_classify_opening_names_games_as_lichess_does():
    import chess

    najdorf = "1. e4 c5 2. Nf3 d6 3. d4 cxd4 4. Nxd4 Nf6 5. Nc3 a6"
    expected = chesspack.Opening("B90", "Sicilian Defense: Najdorf Variation", 10)
    assert chesspack.classify_opening(najdorf) == expected
    board = chess.Board()
    for san in najdorf.split():
        if not san.endswith("."):
            board.push_san(san)
    assert chesspack.classify_opening(board) == expected
    assert chesspack.classify_opening(list(board.move_stack)) == expected
    assert chesspack.classify_opening([m.uci() for m in board.move_stack]) == expected
    # Transpositions count: the Italian Game from 1. Nf3.
    italian = chesspack.classify_opening("1. Nf3 Nc6 2. e4 e5 3. Bc4")
    assert italian == ("C50", "Italian Game", 5)
    # A game from another position, or no move: none.
    after_e4 = chess.Board()
    after_e4.push_san("e4")
    assert chesspack.classify_opening(["e5"], start=after_e4) is None
    assert chesspack.classify_opening([]) is None
    with pytest.raises(chesspack.IllegalMove):
        chesspack.classify_opening("1. e5")


def test_issue_57_rows_have_the_opening_with_or_without_tags(archive_path, decompressed):
    a = chesspack.Archive(archive_path)
    games = read_games(decompressed)
    expected = []
    for g in games:
        board = g.board()
        standard = board.fen() == chess_start() and g.headers.get("Variant", "Standard") == "Standard"
        o = chesspack.classify_opening(list(g.mainline_moves()), start=board) if standard else None
        expected.append(None if o is None else (o.eco, o.name, o.ply))
    assert sum(e is not None for e in expected) >= 30
    cols = ["opening_eco", "opening_name", "opening_ply"]
    for table in (a.to_arrow(), a.to_arrow(columns=cols), a.to_arrow(pgn=True)):
        got = [
            None if r["opening_eco"] is None else (r["opening_eco"], r["opening_name"], r["opening_ply"])
            for r in table.select(cols).to_pylist()
        ]
        assert got == expected
    # Games without the tags get the columns too.
    untagged = "".join(
        line for line in decompressed.splitlines(keepends=True) if not line.startswith(("[ECO ", "[Opening "))
    )
    src = archive_path.parent / "untagged.pgn"
    src.write_text(untagged)
    path = archive_path.parent / "untagged.chpk"
    chesspack.compress(src, path, overwrite=True)
    rows = chesspack.Archive(path).to_arrow(columns=cols + ["ECO"]).to_pylist()
    assert all(r["ECO"] is None for r in rows)
    assert [None if r["opening_eco"] is None else (r["opening_eco"], r["opening_name"], r["opening_ply"]) for r in rows] == expected


def chess_start() -> str:
    import chess

    return chess.STARTING_FEN


def test_regression_issue_67_one_entry_point_for_every_kind(tmp_path):
    # The library tells the kind (as the command line does): games,
    # positions and engine training data, each with its own unit and
    # default codec, and each given back whole.
    training = ROOT / "crates" / "chesspack" / "tests" / "fixtures" / "training"
    cases = [
        (SAMPLE, "game", "model"),
        (PUZZLES, "line", "position-model"),
        (training / "selfplay.binpack", "position", "fast"),
    ]
    for src, unit, codec in cases:
        out = tmp_path / (src.name + ".chpk")
        r = chesspack.compress(src, out, threads=1)
        assert (r["unit"], r["codec"]) == (unit, codec), src.name
        assert r[unit + "s"] == r["items"] > 0
        assert r["output_bytes"] == out.stat().st_size
        assert r["input_bytes"] == src.stat().st_size
        back = tmp_path / ("back-" + src.name)
        assert chesspack.decompress(out, back) == r["items"]
        assert back.read_bytes() == src.read_bytes(), src.name
    # A binpack's moves by another codec, as asked.
    r = chesspack.compress(training / "selfplay.binpack", tmp_path / "b.chpk", "brisk", threads=1)
    assert r["codec"] == "brisk"
