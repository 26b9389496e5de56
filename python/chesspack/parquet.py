"""Games as Parquet with chesspack moves (issue 43): tags as typed columns,
the moves as a chesspack record (binary, a few bytes a game), the clocks as
a list of integers; SQL engines filter on the tags without touching the
moves, and decode them with :func:`decode_moves` where a query asks.

>>> import chesspack.parquet, tempfile, os, pyarrow.parquet as pq
>>> out = os.path.join(tempfile.mkdtemp(), "games.parquet")
>>> chesspack.parquet.to_parquet("samples/lichess-sample.pgn", out)["games"]
37
>>> t = pq.read_table(out, columns=["White", "WhiteElo", "moves"])
>>> t["WhiteElo"].type, t["moves"].type
(DataType(int16), DataType(binary))

DuckDB, with a vectorised Arrow UDF::

    con = duckdb.connect()
    chesspack.parquet.register_duckdb(con)
    con.sql("select decode_moves(moves, WhiteElo, BlackElo, TimeControl, FEN, clocks) "
            "from 'games.parquet' where WhiteElo > 2000")

Polars::

    df.select(pl.struct(chesspack.parquet.DECODE_COLUMNS).map_batches(
        chesspack.parquet.decode_struct, return_dtype=pl.List(pl.String)))
"""

from __future__ import annotations

import datetime
import os
import tempfile
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from . import Archive, DecodeError, compress, decode_games, encode_games

#: The columns :func:`decode_moves` reads, in its argument order.
DECODE_COLUMNS = ["moves", "WhiteElo", "BlackElo", "TimeControl", "FEN", "clocks"]

# Tags stored as strings (dictionary-encoded by Parquet), in this order.
_TEXT = [
    "Event", "Site", "Round", "White", "Black", "Result", "WhiteTitle", "BlackTitle",
    "ECO", "Opening", "TimeControl", "Termination", "Variant", "FEN",
]


# The Variant tags of games chesspack codes (no tag: chess).
_PLAYED = {None, "Standard", "standard", "normal", "Chess960", "chess960", "From Position", "fromPosition"}


def _typed(values: pa.Array, parse: Any, type: pa.DataType) -> tuple[pa.Array, pa.Array]:
    """``values`` (strings) parsed into ``type`` by ``parse`` (a value, or
    ``None``/``ValueError`` for a text it does not hold), and the texts that
    did not parse (else null): they go back into ``other_tags``."""
    out, rest = [], []
    for v in values.to_pylist():
        x = None
        if v is not None:
            try:
                x = parse(v)
            except ValueError:
                x = None
        out.append(x)
        rest.append(v if x is None and v is not None else None)
    return pa.array(out, type), pa.array(rest, pa.string())


def _date(v: str) -> datetime.date:
    """A PGN date (``2024.01.31``; ``????.??.??`` is not one)."""
    y, m, d = (int(x) for x in v.split("."))
    return datetime.date(y, m, d)


def _time(v: str) -> datetime.time:
    """A PGN time (``13:24:36``)."""
    h, m, s = (int(x) for x in v.split(":"))
    return datetime.time(h, m, s)


def _diff(v: str) -> int | None:
    """A rating change (``+7``, ``-12``) that int16 holds and writes back
    as the same text."""
    n = int(v)
    same = f"{n:+d}" == v or (n == 0 and v in ("0", "+0", "-0"))
    return n if same and -32768 <= n < 32768 else None


def _table(batch: pa.RecordBatch, codec: str) -> pa.Table:
    """One block's games as the Parquet layout's columns."""
    cols: dict[str, pa.Array] = {"game": batch["game"]}
    kept: list[tuple[str, pa.Array]] = []
    for name in ["Date", "UTCDate"]:
        cols[name], rest = _typed(batch[name], _date, pa.date32())
        kept.append((name, rest))
    cols["UTCTime"], rest = _typed(batch["UTCTime"], _time, pa.time32("s"))
    kept.append(("UTCTime", rest))
    for name in ["WhiteElo", "BlackElo"]:
        elo = batch[name]
        fits = pc.and_(pc.greater_equal(elo, -32768), pc.less(elo, 32768))
        cols[name] = pc.if_else(fits, elo, None).cast(pa.int16())
    for name in ["WhiteRatingDiff", "BlackRatingDiff"]:
        cols[name], rest = _typed(batch[name], _diff, pa.int16())
        kept.append((name, rest))
    for name in _TEXT:
        cols[name] = batch[name]
    # Tags the typed columns cannot hold go back into other_tags.
    other = batch["other_tags"].to_pylist()
    for name, rest in kept:
        for i, v in enumerate(rest.to_pylist()):
            if v is not None:
                other[i] = [(name, v)] + list(other[i])
    cols["other_tags"] = pa.array(other, batch.schema.field("other_tags").type)
    # Whole seconds (lichess's [%clk] precision): the deltas of seconds pack
    # into a few bits; a game with a finer clock keeps its milliseconds.
    clocks = batch["clocks"].to_pylist()
    whole = [c is None or all(x is None or x % 1000 == 0 for x in c) for c in clocks]
    cols["clocks"] = pa.array(
        [[None if x is None else x // 1000 for x in c] if c is not None and w else None for c, w in zip(clocks, whole)],
        pa.list_(pa.int32()),
    )
    cols["clocks_ms"] = pa.array([None if w else c for c, w in zip(clocks, whole)], pa.list_(pa.int32()))
    # The record's context: the tags and the clocks that :func:`decode_moves`
    # is given back.
    tags = {"WhiteElo": batch["WhiteElo"], "BlackElo": batch["BlackElo"], "TimeControl": batch["TimeControl"]}
    # Variants other than chess and Chess960 (King of the Hill, crazyhouse…)
    # are not coded: their moves stay text in `uncoded_moves`.
    other = [v not in _PLAYED for v in batch["Variant"].to_pylist()]
    moves = pa.array(
        [None if o else m for o, m in zip(other, batch["moves"].to_pylist())], pa.list_(pa.string())
    )
    records, errors = encode_games(
        moves, codec, start=batch["FEN"], tags=tags, clocks=cols["clocks"], clock_unit="s", return_errors=True,
    )
    cols["moves"] = records
    bad = {row for row, _ in errors} | {i for i, o in enumerate(other) if o}
    cols["uncoded_moves"] = pa.array(
        [m if i in bad else None for i, m in enumerate(batch["moves"].to_pylist())],
        pa.list_(pa.string()),
    )
    return pa.table(cols)


def to_parquet(
    src: str | os.PathLike[str],
    out: str | os.PathLike[str],
    *,
    codec: str = "model",
    compression: str = "zstd",
    compression_level: int = 9,
) -> dict[str, Any]:
    """Writes the games of ``src`` (a ``.chpk`` archive, or a PGN file,
    compressed into a temporary archive first) to the Parquet file ``out``,
    a row group per archive block.

    Columns: ``game`` (the archive's number), ``Date`` and ``UTCDate``
    (date32), ``UTCTime`` (time32[s]), ``WhiteElo``, ``BlackElo``,
    ``WhiteRatingDiff``, ``BlackRatingDiff`` (int16), the other usual tags as
    strings, ``other_tags`` (a map: every other tag, and the date, time or
    rating-change texts the typed columns cannot hold, such as
    ``????.??.??``), ``moves`` (a chesspack game record in the game's context:
    ratings, time control, clocks, start), ``clocks`` (whole seconds on the
    clock of the side that moved, after each ply; null for a game with a
    finer clock, whose ``clocks_ms`` holds milliseconds) and ``uncoded_moves``: the SAN moves of the games no record can
    hold (variants chesspack does not play, whose ``moves`` is null), else
    null. Returns the games and bytes written.
    """
    src, out = os.fspath(src), os.fspath(out)
    with tempfile.TemporaryDirectory() as tmp:
        path = src
        try:
            archive = Archive(src)
        except DecodeError:
            path = os.path.join(tmp, "games.chpk")
            compress(src, path, codec)
            archive = Archive(path)
        writer = None
        games = 0
        try:
            for b in range(len(archive.blocks())):
                table = _table(archive.read_block(b), codec)
                if writer is None:
                    writer = pq.ParquetWriter(
                        out, table.schema, compression=compression,
                        compression_level=compression_level,
                        use_dictionary=[c for c in table.column_names if c in _TEXT],
                        column_encoding={"clocks.list.element": "DELTA_BINARY_PACKED", "game": "DELTA_BINARY_PACKED"},
                    )
                writer.write_table(table)
                games += table.num_rows
        finally:
            if writer is not None:
                writer.close()
    return {"games": games, "output_bytes": os.path.getsize(out)}


def decode_moves(
    moves: Any, white_elo: Any, black_elo: Any, time_control: Any, fen: Any, clocks: Any, output: str = "san"
) -> pa.Array:
    """The moves of a column of records written by :func:`to_parquet`
    (``output``: ``"san"``, ``"uci"`` or ``"movetext"``), given the columns
    that were their context (:data:`DECODE_COLUMNS`): a vectorised UDF."""
    tags = {"WhiteElo": white_elo, "BlackElo": black_elo, "TimeControl": time_control}
    return decode_games(moves, start=fen, tags=tags, clocks=clocks, clock_unit="s", output=output)


def decode_struct(s: Any) -> Any:
    """:func:`decode_moves` of a struct column of :data:`DECODE_COLUMNS`
    (Polars: ``pl.struct(DECODE_COLUMNS).map_batches(decode_struct,
    return_dtype=pl.List(pl.String))``)."""
    import polars as pl

    table = s.struct.unnest().to_arrow()
    return pl.from_arrow(decode_moves(*(table[c] for c in DECODE_COLUMNS)))


def register_duckdb(con: Any, name: str = "decode_moves") -> None:
    """Registers :func:`decode_moves` with a DuckDB connection as the SQL
    function ``name(moves, WhiteElo, BlackElo, TimeControl, FEN, clocks)``,
    an Arrow UDF (a batch at a time), returning a list of SAN moves."""
    import duckdb

    def udf(moves, white, black, tc, fen, clocks):  # type: ignore[no-untyped-def]
        return decode_moves(moves, white, black, tc, fen, clocks)

    con.create_function(
        name,
        udf,
        ["BLOB", "SMALLINT", "SMALLINT", "VARCHAR", "VARCHAR", "INTEGER[]"],
        "VARCHAR[]",
        type="arrow",
        null_handling="special",
        side_effects=False,
    )
    del duckdb
