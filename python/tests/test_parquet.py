"""Parquet with chesspack moves (issue 43, item 3): typed tags, moves as
records, clocks as integers; the DuckDB and Polars recipes decode the moves
the archive holds."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import chesspack
import chesspack.parquet as cp
from conftest import SAMPLE


@pytest.fixture(scope="module")
def parquet(tmp_path_factory):
    out = tmp_path_factory.mktemp("parquet") / "games.parquet"
    assert cp.to_parquet(SAMPLE, out)["games"] == 37
    return out


def archive_moves(tmp_path_factory):
    path = tmp_path_factory.mktemp("chpk") / "s.chpk"
    chesspack.compress(SAMPLE, path)
    a = chesspack.Archive(path)
    t = pa.Table.from_batches([a.read_block(b) for b in range(len(a.blocks()))])
    return dict(zip(t["game"].to_pylist(), t["moves"].to_pylist())), t


def test_the_layout_is_typed_and_the_moves_decode(parquet, tmp_path_factory):
    t = pq.read_table(parquet)
    assert t.schema.field("WhiteElo").type == pa.int16()
    assert t.schema.field("UTCDate").type == pa.date32()
    assert t.schema.field("WhiteRatingDiff").type == pa.int16()
    assert t.schema.field("moves").type == pa.binary()
    assert t.schema.field("clocks").type == pa.list_(pa.int32())
    moves, archive = archive_moves(tmp_path_factory)
    decoded = cp.decode_moves(*(t[c] for c in cp.DECODE_COLUMNS)).to_pylist()
    for game, d, uncoded in zip(t["game"].to_pylist(), decoded, t["uncoded_moves"].to_pylist()):
        assert (d if d is not None else uncoded) == moves[game]
    # The clocks in seconds are the archive's milliseconds (lichess's are
    # whole seconds).
    ms = dict(zip(archive["game"].to_pylist(), archive["clocks"].to_pylist()))
    for game, secs in zip(t["game"].to_pylist(), t["clocks"].to_pylist()):
        assert [None if c is None else c * 1000 for c in secs or []] == (ms[game] or [])
    # King of the Hill is not chess: its moves stay text.
    koth = t.filter(pa.compute.equal(t["Variant"], "King of the Hill"))
    assert koth["moves"].null_count == 1 and koth["uncoded_moves"][0].as_py()[-1] == "Ke5#"
    first = t.slice(0, 1).to_pylist()[0]
    assert first["WhiteRatingDiff"] == 7 and str(first["UTCDate"]) == "2022-05-26"


def test_duckdb_decodes_the_moves_in_sql(parquet, tmp_path_factory):
    duckdb = pytest.importorskip("duckdb")
    con = duckdb.connect()
    cp.register_duckdb(con)
    rows = con.sql(
        f"select game, decode_moves(moves, WhiteElo, BlackElo, TimeControl, FEN, clocks) "
        f"from '{parquet}' where WhiteElo > 2000 and moves is not null order by game"
    ).fetchall()
    moves, _ = archive_moves(tmp_path_factory)
    assert len(rows) > 10
    assert all(m == moves[g] for g, m in rows)
    # A query of tags alone.
    assert con.sql(f"select count(*) from '{parquet}' where TimeControl = '60+0'").fetchall()[0][0] > 0


def test_polars_decodes_the_moves(parquet):
    pl = pytest.importorskip("polars")
    df = pl.read_parquet(parquet).filter(pl.col("moves").is_not_null())
    out = df.select(
        pl.struct(cp.DECODE_COLUMNS).map_batches(cp.decode_struct, return_dtype=pl.List(pl.String)).alias("m")
    )
    assert out.height == df.height and out["m"][0][0] == "e4"
