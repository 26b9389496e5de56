"""Spark (local[2]): the data source against decompress, shard jobs, UDFs.

Skipped, with the reason, when PySpark or Java is missing; .ci/run installs
both."""

from __future__ import annotations

import shutil

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import chesspack
from conftest import SAMPLE, java_ok, read_games

pyspark = pytest.importorskip("pyspark", reason="pyspark is not installed (pip install ./python[spark])")
if not java_ok():
    pytest.skip("no Java: Spark needs Java 17 or later", allow_module_level=True)

import chesspack.spark as cs  # noqa: E402
from test_archive import split_games  # noqa: E402


@pytest.fixture(scope="module")
def spark():
    import os
    import sys

    from pyspark.sql import SparkSession

    # Workers run this interpreter (the one chesspack is installed in), not
    # whatever python3 comes first on PATH.
    os.environ["PYSPARK_PYTHON"] = sys.executable
    s = (
        SparkSession.builder.master("local[2]")
        .appName("chesspack-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .getOrCreate()
    )
    s.sparkContext.setLogLevel("ERROR")
    cs.register(s)
    yield s
    s.stop()


def test_data_source_gives_the_decompressed_games(spark, archive_path, decompressed):
    df = spark.read.format("chesspack").option("pgn", "true").load(str(archive_path))
    assert df.rdd.getNumPartitions() == 5
    rows = df.orderBy("game").collect()
    expected = split_games(decompressed)
    assert [r["pgn"] for r in rows] == expected
    a = chesspack.Archive(archive_path)
    assert [r["White"] for r in rows] == [a.tags(i).get("White") for i in range(len(a))]
    games = read_games(decompressed)
    for r, g in zip(rows, games):
        assert len(r["moves"]) == len(list(g.mainline_moves())) or g.headers.get("Variant") == "King of the Hill"
    assert set(cs.arrow_schema(True).names) == set(df.columns)
    assert dict(df.dtypes)["WhiteElo"] == "int"
    assert dict(df.dtypes)["clocks"] == "array<bigint>"


def test_issue_40_a_columns_option_reads_those_columns_alone(spark, archive_path):
    df = spark.read.format("chesspack").option("columns", "game, White,WhiteElo,ECO").load(str(archive_path))
    assert df.columns == ["file", "game", "White", "WhiteElo", "ECO"]
    a = chesspack.Archive(archive_path)
    rows = df.orderBy("game").collect()
    assert [r["White"] for r in rows] == [a.tags(i).get("White") for i in range(len(a))]
    assert [r["ECO"] for r in rows] == [a.tags(i).get("ECO") for i in range(len(a))]
    assert dict(df.dtypes)["WhiteElo"] == "int"
    with pytest.raises(Exception, match="unknown columns"):
        spark.read.format("chesspack").option("columns", "White,Nope").load(str(archive_path)).collect()


def test_issue_59_positions_as_rows_filtered_by_rating_and_written_out(spark, archive_path, tmp_path):
    a = chesspack.Archive(archive_path)
    every = pa.Table.from_batches([a.positions(b) for b in range(len(a.blocks()))])
    df = spark.read.format("chesspack").option("rows", "positions").load(str(archive_path))
    assert df.columns == ["file"] + chesspack.POSITION_COLUMNS
    assert df.count() == every.num_rows
    assert dict(df.dtypes)["board"] == "array<tinyint>"
    high = df.filter("WhiteElo >= 2000 AND base = 60").select("game", "ply", "board", "clock")
    expected = [
        (r["game"], r["ply"], r["board"], r["clock"])
        for r in every.to_pylist()
        if (r["WhiteElo"] or 0) >= 2000 and r["base"] == 60
    ]
    got = sorted((r["game"], r["ply"], list(r["board"]), r["clock"]) for r in high.collect())
    assert got == sorted(expected) and len(got) > 100
    # Written out as Parquet and read back.
    out = tmp_path / "positions"
    high.write.parquet(str(out))
    assert pq.read_table(str(out)).num_rows == len(expected)
    # Some columns, a tag and the move in UCI.
    few = spark.read.format("chesspack").option("rows", "positions").option("columns", "game,uci,Event")
    first = few.load(str(archive_path)).orderBy("game", "uci").first()
    assert first["Event"] is not None and len(first["uci"]) >= 4
    with pytest.raises(Exception, match="rows"):
        spark.read.format("chesspack").option("rows", "moves").load(str(archive_path)).count()


def test_directory_glob_and_blocks_per_partition(spark, archive_path, tmp_path):
    for name in ("a.chpk", "b.chpk"):
        shutil.copy(archive_path, tmp_path / name)
    df = spark.read.format("chesspack").option("blocksPerPartition", "2").load(str(tmp_path))
    assert df.rdd.getNumPartitions() == 6
    assert df.count() == 74
    assert df.select("file").distinct().count() == 2
    n = spark.read.format("chesspack").load(str(tmp_path / "*.chpk")).count()
    assert n == 74


def test_compress_files_job(spark, tmp_path):
    text = SAMPLE.read_text()
    games = split_games(text)
    src = tmp_path / "in"
    src.mkdir()
    (src / "one.pgn").write_text("".join(games[:20]))
    (src / "two.pgn").write_text("".join(games[20:]))
    report = cs.compress_files(spark, str(src), str(tmp_path / "out"))
    assert sorted(r["games"] for r in report) == [17, 20]
    df = spark.read.format("chesspack").option("pgn", "true").load(str(tmp_path / "out"))
    assert df.count() == 37
    back = "".join(
        r["pgn"] for r in df.orderBy("file", "game").collect()
    )
    one = chesspack.Archive(tmp_path / "out" / "one.chpk")
    two = chesspack.Archive(tmp_path / "out" / "two.chpk")
    assert back == "".join(one) + "".join(two)


def test_parquet_job_and_udfs(spark, tmp_path, sample_games):
    import chess.pgn

    rows = []
    for g in sample_games:
        if "FEN" in g.headers:
            continue
        mt = g.accept(chess.pgn.StringExporter(headers=False, variations=False, comments=True))
        rows.append({"Site": g.headers["Site"], "White": g.headers["White"], "Black": g.headers["Black"], "Result": g.headers["Result"], "movetext": mt})
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "lichess.parquet")
    report = cs.compress_parquet(spark, str(tmp_path / "lichess.parquet"), str(tmp_path / "shards"), partitions=2)
    assert sum(r["games"] for r in report) == len(rows)
    df = spark.read.format("chesspack").load(str(tmp_path / "shards"))
    assert df.count() == len(rows)

    from pyspark.sql import functions as F

    src = spark.read.parquet(str(tmp_path / "lichess.parquet"))
    coded = src.withColumn("moves", cs.encode_movetext(F.col("movetext")))
    coded = coded.withColumn("san", cs.decode_moves(F.col("moves")))
    got = {r["Site"]: (r["san"], r["moves"]) for r in coded.collect()}
    assert len(got) == len(rows)
    for r in rows:
        sans = chesspack.decode_games(chesspack.encode_games([r["movetext"]]))[0].as_py()
        assert got[r["Site"]][0] == sans
    via_arrow = cs.with_moves(src).collect()
    assert sorted(bytes(r["moves"]) for r in via_arrow) == sorted(bytes(v[1]) for v in got.values())
    text = coded.select(cs.decode_moves(F.col("moves"), output="movetext").alias("t")).collect()
    assert all(t["t"].startswith("1. ") for t in text)


def test_split_games_fans_one_file_out(spark, tmp_path):
    src = tmp_path / "in"
    src.mkdir()
    shutil.copy(SAMPLE, src / "all.pgn")
    report = cs.compress_files(spark, str(src), str(tmp_path / "out"), codec="index", split_games=10)
    assert [r["games"] for r in sorted(report, key=lambda r: r["shard"])] == [10, 10, 10, 7]
    assert not (tmp_path / "out" / "_parts").exists()
    df = spark.read.format("chesspack").option("pgn", "true").load(str(tmp_path / "out"))
    text = "".join(r["pgn"] for r in df.orderBy("file", "game").collect())
    ref = tmp_path / "ref.chpk"
    chesspack.compress(SAMPLE, ref, codec="index")
    assert text == "".join(chesspack.Archive(ref))


def test_issue_26_udfs_code_in_the_games_context(spark, archive_path):
    """with_moves, encode_movetext and decode_moves take the tags and clocks
    that model reads, as columns of the data source's rows (ratings as
    ints, clocks in ms): the records are those of the batch API with the
    same context, differ from records without it, and decode back."""
    from pyspark.sql import functions as F

    # Games from the standard start (a FEN game needs start= too).
    df = spark.read.format("chesspack").load(str(archive_path)).where((F.size("moves") > 0) & F.col("FEN").isNull())
    names = ("WhiteElo", "BlackElo", "TimeControl")
    rows = df.orderBy("game").collect()
    expected = chesspack.encode_games(
        [r["moves"] for r in rows],
        tags={n: [r[n] for r in rows] for n in names},
        clocks=pa.array([r["clocks"] for r in rows], pa.list_(pa.int64())),
        clock_unit="ms",
    ).to_pylist()
    assert expected != chesspack.encode_games([r["moves"] for r in rows]).to_pylist()
    with_context = cs.with_moves(df, movetext="moves", moves="records", tags=names, clocks="clocks", clock_unit="ms")
    assert [bytes(r["records"]) for r in with_context.orderBy("game").collect()] == expected
    tags = {n: n for n in names}
    coded = df.withColumn("records", cs.encode_movetext(F.col("moves"), tags=tags, clocks="clocks", clock_unit="ms"))
    coded = coded.withColumn("back", cs.decode_moves(F.col("records"), tags=tags, clocks=F.col("clocks"), clock_unit="ms"))
    got = coded.orderBy("game").collect()
    assert [bytes(r["records"]) for r in got] == expected
    # The rows keep SAN as the text wrote it (one game's text marks a mate
    # that is none): compare without check and mate marks.
    def bare(moves):
        return [m.rstrip("+#") for m in moves]

    assert [bare(r["back"]) for r in got] == [bare(r["moves"]) for r in rows]


def _games(df):
    """A DataFrame's games as comparable tuples (no file or game number)."""
    cols = [c for c in df.columns if c not in ("file", "game")]
    out = []
    for r in df.collect():
        d = r.asDict()
        d["other_tags"] = sorted((d.get("other_tags") or {}).items())
        out.append(tuple((c, d[c]) for c in cols))
    return sorted(out, key=repr)


def test_issue_43_a_dataframe_writes_back_as_shards(spark, archive_path, tmp_path):
    df = spark.read.format("chesspack").load(str(archive_path))
    out = tmp_path / "written"
    df.repartition(3).write.format("chesspack").mode("overwrite").save(str(out))
    shards = sorted(out.glob("part-*.chpk"))
    assert len(shards) == 3 and not (out / "_temporary").exists()
    back = spark.read.format("chesspack").load(str(out))
    assert back.count() == df.count()
    assert _games(back) == _games(df)
    # append adds shards; overwrite replaces them.
    df.limit(5).write.format("chesspack").mode("append").save(str(out))
    assert len(list(out.glob("part-*.chpk"))) > 3
    assert spark.read.format("chesspack").load(str(out)).count() == df.count() + 5
    df.limit(5).coalesce(1).write.format("chesspack").mode("overwrite").save(str(out))
    assert len(list(out.glob("part-*.chpk"))) == 1
    # Spark refuses the other modes for Python data sources, clearly.
    with pytest.raises(Exception, match="ErrorIfExists"):
        df.write.format("chesspack").mode("error").save(str(out))


def _eventually(get, ok, seconds=20.0):
    """What ``get`` returns once ``ok`` holds of it (a task cancelled with
    its job may still be cleaning up), or its last value after ``seconds``."""
    import time

    deadline = time.monotonic() + seconds
    while True:
        value = get()
        if ok(value) or time.monotonic() > deadline:
            return value
        time.sleep(0.2)


def test_issue_43_a_failed_write_leaves_no_shard(spark, archive_path, tmp_path):
    from pyspark.sql import functions as F

    df = spark.read.format("chesspack").load(str(archive_path))
    bad = df.withColumn("White", F.when(F.col("game") == 3, F.raise_error("boom")).otherwise(F.col("White")))
    out = tmp_path / "failed"
    with pytest.raises(Exception):
        bad.write.format("chesspack").mode("overwrite").save(str(out))
    left = _eventually(lambda: sorted(out.glob("**/*")), lambda fs: not [f for f in fs if f.suffix == ".chpk"])
    assert [f.name for f in left if f.is_file()] == ["_aborted"], left
    df.limit(5).coalesce(1).write.format("chesspack").mode("append").save(str(out))
    assert [f.name[:11] for f in out.iterdir()] == ["part-00000-"]


@pytest.mark.parametrize("where", ["local", "s3"])
def test_issue_43_a_task_that_outlives_its_aborted_job_takes_its_shard_back(where, s3, tmp_path):
    # What the CI run of edcfd9e saw: Spark aborted a failed job while the
    # other task was still uploading, and that task's shard stayed behind.
    # Here the task runs wholly after the abort (no Spark needed: the writer
    # is the data source's own object).
    import boto3

    schema = pa.schema([("White", pa.string()), ("movetext", pa.string())])
    batch = pa.RecordBatch.from_pylist([{"White": "a", "movetext": "1. e4 e5 *"}], schema=schema)
    if where == "local":
        options = {"path": str(tmp_path / "late")}
        listing = lambda: sorted(str(p.relative_to(tmp_path / "late")) for p in (tmp_path / "late").rglob("*") if p.is_file())  # noqa: E731
    else:
        options = {"path": "s3://games/late", "storage.endpoint_url": s3["endpoint"], "storage.key": "testing", "storage.secret": "testing"}
        listing = lambda: sorted(  # noqa: E731
            o["Key"][len("late/"):] for o in boto3.client("s3").list_objects_v2(Bucket="games", Prefix="late/").get("Contents", [])
        )
    from pyspark.sql.types import StringType, StructField, StructType

    spark_schema = StructType([StructField("White", StringType()), StructField("movetext", StringType())])
    writer = cs.ChesspackWriter(options, spark_schema, overwrite=False)
    writer.abort([None])
    message = writer.write(iter([batch]))
    assert message.temp is None and message.games == 1
    assert listing() == [f"_temporary/{writer.job}/_aborted"]
    # A later job commits its own shard and removes the aborted one's mark.
    later = cs.ChesspackWriter(options, spark_schema, overwrite=False)
    later.commit([later.write(iter([batch]))])
    assert listing() == [f"part-00000-{later.job}.chpk"]


def test_issue_43_the_lichess_parquet_layout_writes_too(spark, tmp_path):
    rows = [
        {"Event": "Rated Blitz game", "White": "a", "Black": "b", "Result": "1-0", "WhiteElo": 1500,
         "movetext": "1. e4 { [%clk 0:03:00] } 1... e5 { [%clk 0:03:00] } 2. Qh5 1-0"},
    ]
    out = tmp_path / "pq"
    spark.createDataFrame(rows).write.format("chesspack").mode("overwrite").save(str(out))
    back = spark.read.format("chesspack").load(str(out)).collect()
    assert len(back) == 1
    assert back[0]["moves"] == ["e4", "e5", "Qh5"] and back[0]["clocks"] == [180000, 180000, None]
    assert back[0]["WhiteElo"] == 1500


def test_issue_43_spark_reads_an_s3_prefix(spark, s3):
    pytest.importorskip("s3fs", reason="s3fs is not installed (pip install ./python[test])")
    # The executors' Python workers started before the server: its address
    # and credentials go as options.
    remote = (
        spark.read.format("chesspack")
        .option("columns", "White,WhiteElo")
        .option("storage.endpoint_url", s3["endpoint"])
        .option("storage.key", "testing")
        .option("storage.secret", "testing")
        .load("s3://games/month/")
    )
    local = spark.read.format("chesspack").option("columns", "White,WhiteElo").load(
        f"{s3['local']},{s3['big']}"
    )
    games = lambda df: sorted((r["White"] or "", r["WhiteElo"] or 0) for r in df.collect())  # noqa: E731
    assert games(remote) == games(local)
    assert remote.count() == 37 * 41
    assert {r["file"] for r in remote.select("file").distinct().collect()} == {
        "s3://games/month/big.chpk",
        "s3://games/month/sample.chpk",
    }


def test_issue_43_the_shard_job_runs_on_s3(spark, s3):
    import boto3

    boto3.client("s3").upload_file(str(SAMPLE), "games", "pgn/lichess-sample.pgn")
    options = {"endpoint_url": s3["endpoint"], "key": "testing", "secret": "testing"}
    report = cs.compress_files(spark, "s3://games/pgn/", "s3://games/shards", storage_options=options)
    assert [r["shard"] for r in report] == ["s3://games/shards/lichess-sample.chpk"]
    assert report[0]["games"] == 37
    keys = [o["Key"] for o in boto3.client("s3").list_objects_v2(Bucket="games", Prefix="shards/")["Contents"]]
    assert keys == ["shards/lichess-sample.chpk"]
    a = chesspack.Archive("s3://games/shards/lichess-sample.chpk", storage_options=options)
    assert a[0] == chesspack.Archive(s3["local"])[0]


def test_issue_43_a_dataframe_writes_to_s3(spark, archive_path, s3, tmp_path):
    import boto3

    opts = {"storage.endpoint_url": s3["endpoint"], "storage.key": "testing", "storage.secret": "testing"}

    def with_options(x):
        for k, v in opts.items():
            x = x.option(k, v)
        return x

    def keys(prefix):
        listing = boto3.client("s3").list_objects_v2(Bucket="games", Prefix=prefix)
        return sorted(o["Key"] for o in listing.get("Contents", []))

    df = spark.read.format("chesspack").load(str(archive_path))
    with_options(df.repartition(2).write.format("chesspack").mode("overwrite")).save("s3://games/written/")
    written = keys("written/")
    assert len(written) == 2, written
    assert all(k.startswith("written/part-") and k.endswith(".chpk") for k in written)
    back = with_options(spark.read.format("chesspack")).load("s3://games/written/")
    assert _games(back) == _games(df)
    # append adds shards; overwrite replaces them; a failed job leaves none.
    with_options(df.limit(5).write.format("chesspack").mode("append")).save("s3://games/written")
    assert len(keys("written/")) == 3
    with_options(df.limit(5).coalesce(1).write.format("chesspack").mode("overwrite")).save("s3://games/written")
    assert len(keys("written/")) == 1
    from pyspark.sql import functions as F

    bad = df.withColumn("White", F.when(F.col("game") == 3, F.raise_error("boom")).otherwise(F.col("White")))
    with pytest.raises(Exception):
        with_options(bad.write.format("chesspack").mode("append")).save("s3://games/failed")
    # Spark does not wait for the tasks it cancels: one may publish its shard
    # after the abort, see the job's mark and take the shard back.
    left = _eventually(lambda: keys("failed/"), lambda ks: not [k for k in ks if k.endswith(".chpk")])
    assert len(left) == 1 and left[0].startswith("failed/_temporary/") and left[0].endswith("/_aborted"), left
    # The next job to succeed there removes what the aborted one left.
    with_options(df.limit(5).write.format("chesspack").mode("append")).save("s3://games/failed")
    assert [k.split("/")[1][:11] for k in keys("failed/")] == ["part-00000-"]

    # The Parquet job writes its shards to S3 too.
    pq.write_table(pa.Table.from_pylist([{"White": "a", "Black": "b", "movetext": "1. e4 e5 2. Nf3 *"}]), tmp_path / "one.parquet")
    options = {"endpoint_url": s3["endpoint"], "key": "testing", "secret": "testing"}
    report = cs.compress_parquet(spark, str(tmp_path / "one.parquet"), "s3://games/pq", storage_options=options)
    assert [r["shard"] for r in report] == ["s3://games/pq/part-00000.chpk"]
    assert keys("pq/") == ["pq/part-00000.chpk"]
    a = chesspack.Archive("s3://games/pq/part-00000.chpk", storage_options=options)
    assert a[0].startswith('[White "a"]') and "1. e4 e5 2. Nf3 *" in a[0]


def test_issue_43_the_split_shard_job_runs_on_s3(spark, s3):
    import boto3

    boto3.client("s3").upload_file(str(SAMPLE), "games", "pgn-split/all.pgn")
    options = {"endpoint_url": s3["endpoint"], "key": "testing", "secret": "testing"}
    report = cs.compress_files(
        spark, "s3://games/pgn-split/", "s3://games/split", codec="index", split_games=10, storage_options=options
    )
    assert sorted((r["shard"], r["games"]) for r in report) == [
        (f"s3://games/split/all-{i:05d}.chpk", n) for i, n in enumerate([10, 10, 10, 7])
    ]
    listing = boto3.client("s3").list_objects_v2(Bucket="games", Prefix="split/")
    assert sorted(o["Key"] for o in listing["Contents"]) == [f"split/all-{i:05d}.chpk" for i in range(4)]
    games = [g for i in range(4) for g in chesspack.Archive(f"s3://games/split/all-{i:05d}.chpk", storage_options=options)]
    assert games == list(chesspack.Archive(s3["local"]))


def test_issue_57_the_data_source_names_every_games_opening(spark, archive_path):
    cols = "game,opening_eco,opening_name,opening_ply"
    df = spark.read.format("chesspack").option("columns", cols).load(str(archive_path))
    rows = df.orderBy("game").collect()
    expected = chesspack.Archive(archive_path).to_arrow(columns=cols.split(",")).to_pylist()
    assert [(r["opening_eco"], r["opening_name"], r["opening_ply"]) for r in rows] == [
        (e["opening_eco"], e["opening_name"], e["opening_ply"]) for e in expected
    ]
    assert sum(r["opening_eco"] is not None for r in rows) >= 30
    assert dict(df.dtypes)["opening_ply"] == "int"
