"""chesspack on Apache Spark (PySpark 4.x).

Reading: a Python data source, one row per game, one task per archive
block::

    import chesspack.spark
    chesspack.spark.register(spark)
    df = spark.read.format("chesspack").load("games/*.chpk")
    df = spark.read.format("chesspack").option("pgn", "true").load("month/")

Columns: ``file``, ``game`` (0-based number in its archive), the tag columns
(Event, Site, Date, Round, White, Black, Result, UTCDate, UTCTime, WhiteElo
and BlackElo as integers, WhiteRatingDiff, BlackRatingDiff, WhiteTitle,
BlackTitle, ECO, Opening, TimeControl, Termination, Variant, FEN),
``other_tags`` (a map of every other tag), ``moves`` (SAN strings),
``clocks`` (milliseconds from ``%clk``, null when the game has none) and,
with ``option("pgn", "true")``, ``pgn``: the game's text as
``chesspack decompress`` writes it.

``option("rows", "positions")`` reads a row per position instead: every
position of each game's mainline before a move, with the move and the
game's context (:meth:`chesspack.Archive.positions`: ``board`` as 64
bytes, ``turn``, ``castling``, ``ep``, ``rule50``, ``ply``, ``from``,
``to``, ``promotion``, ``game``, ``result``, ``WhiteElo``, ``BlackElo``,
``base``, ``increment``, ``clock``, ``eval``, ``mate``; with
``option("columns", …)`` those asked for, ``uci``, ``fen`` or any tag), so
that a cluster filters positions by rating or time control and writes them
out (Parquet). Unsigned columns come as Spark's signed ones (bytes and
integers: every value fits). ``option("columns", "White,WhiteElo")``
reads ``file`` and those columns alone: columns of tags alone decode no
moves (Spark's Python data sources cannot prune columns themselves, so a
query that needs no moves says so here). Paths are local or on a file
system every executor mounts (NFS, a FUSE-mounted bucket), or URLs that
fsspec opens (``s3://bucket/prefix/``, ``gs://``, ``abfs://``, ``hdfs://``,
``https://``), read a range at a time, with credentials taken the standard
way (``AWS_ENDPOINT_URL``, ``AWS_ACCESS_KEY_ID``… in the executors'
environment) or given as options: ``option("storage.endpoint_url", URL)``,
``option("storage.key", …)``, or ``option("storage_options", JSON)``.

Writing a DataFrame: ``df.write.format("chesspack").mode("overwrite").save(DIR)``
writes one ``.chpk`` shard a partition (``part-NNNNN-JOB.chpk``), each under
``DIR/_temporary`` until every task has succeeded, then moved into place (a
failed job leaves no shard, only a mark ``_temporary/JOB/_aborted`` that
its cancelled tasks look for and the next successful job removes); ``DIR`` may be a URL (``s3://bucket/prefix``,
with the same ``storage.*`` options as reading); ``mode("append")`` adds shards, ``overwrite``
replaces the directory's shards. The DataFrame has the data source's
columns (tags, ``other_tags``, ``moves``, ``clocks``; or ``pgn``, used as
it is), or a ``movetext`` column and tag columns (the lichess Parquet
layout). Options: ``codec`` (default ``model``), ``level`` (zstd, default
15).

Writing files: :func:`compress_files` (a directory or glob of ``.pgn``/``.pgn.zst``
files, one task and one shard a file) and :func:`compress_parquet` (the
lichess Parquet layout: a ``movetext`` column and tag columns, one shard a
partition) write a directory of ``.chpk`` shards; from the shell::

    python -m chesspack.spark compress IN OUT [--parquet] [--codec model]

Columns: :func:`encode_movetext` and :func:`decode_moves` are pandas UDFs
(a compact binary ``moves`` column from a ``movetext`` column, and SAN
back); :func:`with_moves` does the same through ``mapInArrow`` without
pandas.
"""

from __future__ import annotations

import argparse
import glob
import os
import shutil
import sys
import tempfile
from typing import Any, Iterator, Mapping, Sequence

import pyarrow as pa

from pyspark.sql.datasource import (
    DataSource,
    DataSourceArrowWriter,
    DataSourceReader,
    InputPartition,
    WriterCommitMessage,
)

import chesspack
from chesspack import _native

__all__ = [
    "ChesspackDataSource",
    "compress_files",
    "compress_parquet",
    "decode_moves",
    "encode_movetext",
    "register",
    "with_moves",
]


def arrow_schema(pgn: bool = False, columns: Sequence[str] | None = None) -> pa.Schema:
    """The Arrow schema of the data source's rows: ``file``, then every
    column (with ``pgn`` if asked) or ``columns`` in their order."""
    rows = _native.empty_rows(pgn or "pgn" in (columns or [])).schema
    fields = list(rows) if columns is None else [rows.field(c) for c in columns]
    return pa.schema([pa.field("file", pa.string(), False)] + fields)


def _spark_type(t: pa.DataType) -> pa.DataType:
    """A position column's type as Spark takes it: signed, lists not of a
    fixed size."""
    if pa.types.is_fixed_size_list(t):
        return pa.list_(_spark_type(t.value_type))
    if t == pa.uint8():
        return pa.int8()
    if t == pa.uint32():
        return pa.int32()
    return t


def positions_schema(columns: Sequence[str] | None = None) -> pa.Schema:
    """The Arrow schema of the data source's rows with
    ``option("rows", "positions")``: ``file``, then the position columns
    (the defaults, or ``columns``) in Spark's types."""
    rows = _native.empty_positions(list(columns) if columns is not None else None).schema
    fields = [pa.field(f.name, _spark_type(f.type), f.nullable) for f in rows]
    return pa.schema([pa.field("file", pa.string(), False)] + fields)


def _positions(options: Mapping[str, str]) -> bool:
    """Whether the ``rows`` option asks for positions."""
    rows = str(options.get("rows", "games")).strip().lower()
    if rows not in ("games", "positions"):
        raise ValueError(f'chesspack data source: option rows is "games" or "positions", not {rows!r}')
    return rows == "positions"


def _schema(options: Mapping[str, str]) -> pa.Schema:
    """The Arrow schema that the options give."""
    if _positions(options):
        spec = options.get("columns")
        return positions_schema(None if spec is None else _names(spec))
    return arrow_schema(_flag(options.get("pgn")), _columns(options))


def _names(spec: Any) -> list[str]:
    """The names of a comma-separated ``columns`` option."""
    return [c.strip() for c in str(spec).split(",") if c.strip()]


def _columns(options: Mapping[str, str]) -> list[str] | None:
    """The ``columns`` option as a list (``None``: every column)."""
    spec = options.get("columns")
    if spec is None:
        return None
    names = _names(spec)
    known = set(_native.empty_rows(True).schema.names)
    unknown = [c for c in names if c not in known]
    if unknown or not names:
        raise ValueError(
            f"chesspack data source: unknown columns {unknown or spec!r}; known: {sorted(known)}"
        )
    return names


def _storage_options(options: Mapping[str, str]) -> dict[str, Any]:
    """The fsspec options of a URL path: ``option("storage_options", JSON)``
    and every ``option("storage.NAME", value)``."""
    import json

    out: dict[str, Any] = json.loads(options.get("storage_options") or "{}")
    for k, v in options.items():
        if k.lower().startswith("storage."):
            out[k[len("storage.") :]] = v
    return out


def _paths(spec: str, storage_options: Mapping[str, Any] | None = None) -> list[str]:
    """Archives named by a path, a directory (its ``*.chpk`` files) or a
    glob; several separated by commas."""
    out: list[str] = []
    for part in (p.strip() for p in spec.split(",")):
        if not part:
            continue
        if part.startswith("file://"):
            part = part[len("file://") :]
        if chesspack._is_url(part):
            out.extend(_remote_paths(part, storage_options))
            continue
        if os.path.isdir(part):
            found = sorted(glob.glob(os.path.join(part, "*.chpk")))
        elif any(c in part for c in "*?["):
            found = sorted(glob.glob(part))
        else:
            found = [part]
        if not found:
            raise FileNotFoundError(f"no chesspack archive matches {part!r}")
        out.extend(found)
    return out


def _remote_paths(url: str, storage_options: Mapping[str, Any] | None = None) -> list[str]:
    """The archives a URL names (``s3://bucket/prefix/``: its ``*.chpk``
    objects; a glob; one object), through fsspec, with their scheme."""
    import fsspec

    fs, _, (path,) = fsspec.get_fs_token_paths(url, storage_options=dict(storage_options or {}))
    if any(c in path for c in "*?["):
        found = fs.glob(path)
    elif url.endswith("/") or fs.isdir(path):
        found = fs.glob(path.rstrip("/") + "/*.chpk")
    else:
        found = [path]
    if not found:
        raise FileNotFoundError(f"no chesspack archive matches {url!r}")
    return sorted(fs.unstrip_protocol(p) for p in found)


class BlockPartition(InputPartition):
    """Blocks ``first .. first + count`` of one archive."""

    def __init__(self, path: str, first: int, count: int) -> None:
        super().__init__((path, first, count))
        self.path = path
        self.first = first
        self.count = count


class ChesspackDataSource(DataSource):
    """``spark.read.format("chesspack")``: options ``path`` (set by
    ``load``), ``pgn`` (``"true"`` adds the text), ``blocksPerPartition``
    (default 1: a task a block of up to 4,096 games)."""

    @classmethod
    def name(cls) -> str:
        return "chesspack"

    def schema(self) -> Any:
        from pyspark.sql.pandas.types import from_arrow_schema

        return from_arrow_schema(_schema(self.options))

    def reader(self, schema: Any) -> "ChesspackReader":
        return ChesspackReader(self.options, schema)

    def writer(self, schema: Any, overwrite: bool) -> "ChesspackWriter":
        return ChesspackWriter(self.options, schema, overwrite)


def _flag(v: Any) -> bool:
    return str(v).strip().lower() in ("1", "true", "yes") if v is not None else False


class ChesspackReader(DataSourceReader):
    def __init__(self, options: dict[str, str], schema: Any) -> None:
        spec = options.get("path") or options.get("paths")
        if not spec:
            raise ValueError('chesspack data source: give a path: spark.read.format("chesspack").load(PATH)')
        self.storage = _storage_options(options)
        self.paths = _paths(spec, self.storage)
        self.positions = _positions(options)
        self.pgn = _flag(options.get("pgn"))
        self.schema = _schema(options)
        self.columns = None if self.positions else _columns(options)
        self.per = max(1, int(options.get("blocksPerPartition", "1")))
        names = [f.name for f in schema.fields]
        expected = self.schema.names
        if names != expected:
            raise ValueError(f"chesspack data source: the schema is fixed: {expected}, not {names}")

    def partitions(self) -> list[BlockPartition]:
        parts = []
        for p in self.paths:
            n = len(chesspack.Archive(p, storage_options=self.storage).blocks())
            for first in range(0, n, self.per):
                parts.append(BlockPartition(p, first, min(self.per, n - first)))
        return parts

    def read(self, partition: BlockPartition) -> Iterator[pa.RecordBatch]:
        import chesspack as cp

        archive = cp.Archive(partition.path, storage_options=self.storage)
        schema = self.schema
        for b in range(partition.first, partition.first + partition.count):
            if self.positions:
                # A task a core: Spark runs the tasks side by side.
                batch = archive.positions(b, schema.names[1:], threads=1)
                columns = [c.cast(f.type) for c, f in zip(batch.columns, list(schema)[1:])]
            else:
                columns = list(archive.read_block(b, self.pgn, self.columns).columns)
            n = len(columns[0]) if columns else 0
            file = pa.array([partition.path] * n, pa.string())
            yield pa.RecordBatch.from_arrays([file] + columns, schema=schema)


class ShardMessage(WriterCommitMessage):
    """What a write task made: its shard under ``_temporary`` (``None``
    for an empty partition) and how many games it holds."""

    def __init__(self, temp: str | None, games: int) -> None:
        self.temp = temp
        self.games = games


_SEVEN = ["Event", "Site", "Date", "Round", "White", "Black", "Result"]
# Columns of the data source that are not tags.
_NOT_TAGS = {
    "file",
    "game",
    "other_tags",
    "moves",
    "clocks",
    "pgn",
    "movetext",
    "opening_eco",
    "opening_name",
    "opening_ply",
}


def _clock(ms: int) -> str:
    """A ``[%clk]`` reading: ``h:mm:ss`` (and tenths or finer when there
    are)."""
    s, frac = divmod(ms, 1000)
    text = f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}"
    return text + (f".{frac:03d}".rstrip("0") if frac else "")


def _pgn_of_game(row: dict[str, Any], names: list[str]) -> str:
    """The PGN text of one row of the data source's columns."""
    if row.get("pgn"):
        return row["pgn"].rstrip("\n") + "\n\n"
    tags = [(n, row[n]) for n in _SEVEN if n in names and row[n] is not None]
    tags += [(n, row[n]) for n in names if n not in _NOT_TAGS and n not in _SEVEN and row[n] is not None]
    other = row.get("other_tags") or []
    tags += list(other.items()) if isinstance(other, dict) else list(other)
    out = [f'[{n} "{str(v).replace(chr(92), chr(92) * 2).replace(chr(34), chr(92) + chr(34))}"]\n' for n, v in tags]
    out.append("\n")
    if "movetext" in names and "moves" not in names:
        out.append((row["movetext"] or "*").strip())
        return "".join(out) + "\n\n"
    fen = row.get("FEN")
    fields = fen.split() if fen else []
    black = len(fields) > 1 and fields[1] == "b"
    number = int(fields[5]) if len(fields) > 5 and fields[5].isdigit() else 1
    clocks = row.get("clocks") or []
    words, commented = [], True
    for i, san in enumerate(row.get("moves") or []):
        if not black:
            words.append(f"{number}. {san}")
        elif commented or i == 0:
            words.append(f"{number}... {san}")
        else:
            words.append(san)
        commented = i < len(clocks) and clocks[i] is not None
        if commented:
            words.append(f"{{ [%clk {_clock(clocks[i])}] }}")
        if black:
            number += 1
        black = not black
    words.append(row.get("Result") or "*")
    return "".join(out) + " ".join(words) + "\n\n"


class ChesspackWriter(DataSourceArrowWriter):
    """``df.write.format("chesspack").save(DIR)``: a shard a partition,
    committed when the job succeeds."""

    def __init__(self, options: dict[str, str], schema: Any, overwrite: bool) -> None:
        import uuid

        path = options.get("path")
        if not path:
            raise ValueError('chesspack data source: give a path: df.write.format("chesspack").save(PATH)')
        names = [f.name for f in schema.fields]
        if "pgn" not in names and "moves" not in names and "movetext" not in names:
            raise ValueError(f"chesspack data source: the DataFrame needs a moves, movetext or pgn column: {names}")
        # A URL (s3://bucket/prefix/): shards are uploaded under
        # `_temporary` keys and moved into place on commit.
        self.remote = chesspack._is_url(path)
        self.dst = path.rstrip("/") if self.remote else os.path.abspath(path)
        self.storage_options = _storage_options(options)
        self.overwrite = overwrite
        self.codec = options.get("codec", "model")
        self.level = int(options.get("level", "15"))
        self.job = uuid.uuid4().hex[:12]

    def write(self, iterator: Iterator[pa.RecordBatch]) -> ShardMessage:
        from pyspark import TaskContext

        import chesspack as cp

        ctx = TaskContext.get()
        part = ctx.partitionId() if ctx else 0
        attempt = ctx.attemptNumber() if ctx else 0
        name = f"part-{part:05d}-{attempt}.chpk"
        if self.remote:
            temp_dir = tempfile.mkdtemp(prefix="chesspack-")
        else:
            temp_dir = os.path.join(self.dst, "_temporary", self.job)
            os.makedirs(temp_dir, exist_ok=True)
        games = 0
        with tempfile.NamedTemporaryFile("w", suffix=".pgn", delete=False, encoding="utf-8") as pgn:
            for batch in iterator:
                names = batch.schema.names
                for row in batch.to_pylist():
                    pgn.write(_pgn_of_game(row, names))
                    games += 1
        try:
            if games == 0:
                return ShardMessage(None, 0)
            # Written under a name no reader or clean-up takes for a shard,
            # then published under `_temporary` unless the job was aborted
            # meanwhile.
            out = os.path.join(temp_dir, name + ".partial")
            cp.compress(pgn.name, out, self.codec, threads=1, level=self.level, overwrite=True)
            if self._aborted():
                os.unlink(out)
                return ShardMessage(None, games)
            if self.remote:
                fs, dst = _fs_path(self.dst, self.storage_options)
                published = f"{dst}/_temporary/{self.job}/{name}"
                fs.put(out, published)
            else:
                published = os.path.join(temp_dir, name)
                os.replace(out, published)
            # A task that outlived its failed job (Spark does not wait for
            # the tasks it cancels) may publish after the job's abort has
            # cleaned up: the abort marks the job first, so such a task
            # sees the mark here and takes its shard back.
            if self._aborted():
                if self.remote:
                    fs.rm(published)
                else:
                    os.unlink(published)
                return ShardMessage(None, games)
        finally:
            os.unlink(pgn.name)
            if self.remote:
                shutil.rmtree(temp_dir, ignore_errors=True)
        return ShardMessage(published, games)

    def commit(self, messages: list[ShardMessage | None]) -> None:
        if self.remote:
            fs, dst = _fs_path(self.dst, self.storage_options)
            if self.overwrite:
                for old in fs.glob(f"{dst}/part-*.chpk"):
                    fs.rm(old)
            for m in messages:
                if m is not None and m.temp is not None:
                    part = m.temp.rsplit("/", 1)[1].split("-")[1]
                    fs.mv(m.temp, f"{dst}/part-{part}-{self.job}.chpk")
        else:
            if self.overwrite:
                for old in glob.glob(os.path.join(self.dst, "part-*.chpk")):
                    os.remove(old)
            for m in messages:
                if m is not None and m.temp is not None:
                    name = os.path.basename(m.temp).split("-")[1]
                    os.replace(m.temp, os.path.join(self.dst, f"part-{name}-{self.job}.chpk"))
        self._remove_temporary(self.job)
        # What earlier aborted jobs left (their marks, and any shard of a
        # task killed between publishing and looking for the mark) goes too.
        for job in self._aborted_jobs():
            self._remove_temporary(job)

    def abort(self, messages: list[ShardMessage | None]) -> None:
        # Mark first, then clean: a task that publishes after the clean-up
        # finds the mark and removes its own shard.
        if self.remote:
            fs, _ = _fs_path(self.dst, self.storage_options)
            fs.pipe(self._mark(), b"")
        else:
            os.makedirs(os.path.dirname(self._mark()), exist_ok=True)
            open(self._mark(), "wb").close()
        self._remove_temporary(self.job, keep_mark=True)

    def _mark(self) -> str:
        """Where an aborted job leaves its mark."""
        if self.remote:
            _, dst = _fs_path(self.dst, self.storage_options)
            return f"{dst}/_temporary/{self.job}/{_ABORTED}"
        return os.path.join(self.dst, "_temporary", self.job, _ABORTED)

    def _aborted(self) -> bool:
        """Whether the job has been aborted (asked of the storage, not of a
        cached listing)."""
        if not self.remote:
            return os.path.exists(self._mark())
        fs, dst = _fs_path(self.dst, self.storage_options)
        fs.invalidate_cache(f"{dst}/_temporary/{self.job}")
        return bool(fs.exists(self._mark()))

    def _aborted_jobs(self) -> list[str]:
        """The jobs under ``_temporary`` that were aborted."""
        if self.remote:
            fs, dst = _fs_path(self.dst, self.storage_options)
            fs.invalidate_cache(f"{dst}/_temporary")
            marks = fs.glob(f"{dst}/_temporary/*/{_ABORTED}")
        else:
            marks = glob.glob(os.path.join(self.dst, "_temporary", "*", _ABORTED))
        return [m.replace("\\", "/").rsplit("/", 2)[1] for m in marks]

    def _remove_temporary(self, job: str, keep_mark: bool = False) -> None:
        """Removes what job ``job`` left under ``_temporary``: everything,
        or all but its abort mark (``keep_mark``)."""
        if self.remote:
            fs, dst = _fs_path(self.dst, self.storage_options)
            fs.invalidate_cache(f"{dst}/_temporary/{job}")
            for key in fs.glob(f"{dst}/_temporary/{job}/*"):
                if not (keep_mark and key.endswith("/" + _ABORTED)):
                    fs.rm(key)
            return
        temp_dir = os.path.join(self.dst, "_temporary", job)
        if not keep_mark:
            shutil.rmtree(temp_dir, ignore_errors=True)
            _remove_if_empty(os.path.join(self.dst, "_temporary"))
            return
        for entry in os.listdir(temp_dir):
            if entry != _ABORTED:
                try:
                    os.unlink(os.path.join(temp_dir, entry))
                except OSError:
                    pass


# The mark an aborted write job leaves under ``_temporary/JOB/``.
_ABORTED = "_aborted"


def _remove_if_empty(path: str) -> None:
    try:
        os.rmdir(path)
    except OSError:
        pass


def register(spark: Any) -> None:
    """Registers the ``chesspack`` data source with a Spark session."""
    spark.dataSource.register(ChesspackDataSource)


# --- writing -------------------------------------------------------------


def _inputs(spec: str, storage_options: Mapping[str, Any] | None = None) -> list[str]:
    if chesspack._is_url(spec):
        import fsspec

        fs, _, (path,) = fsspec.get_fs_token_paths(spec, storage_options=dict(storage_options or {}))
        if any(c in path for c in "*?["):
            remote = fs.glob(path)
        else:
            remote = [p for p in fs.ls(path, detail=False) if p.endswith((".pgn", ".pgn.zst"))] if fs.isdir(path) else [path]
        if not remote:
            raise FileNotFoundError(f"no .pgn or .pgn.zst object matches {spec!r}")
        return sorted(fs.unstrip_protocol(p) for p in remote)
    if os.path.isdir(spec):
        found = [
            os.path.join(spec, f)
            for f in sorted(os.listdir(spec))
            if f.endswith((".pgn", ".pgn.zst"))
        ]
    else:
        found = sorted(glob.glob(spec))
    if not found:
        raise FileNotFoundError(f"no .pgn or .pgn.zst file matches {spec!r}")
    return [os.path.abspath(f) for f in found]


def _shard_name(src: str) -> str:
    base = os.path.basename(src)
    for ext in (".zst", ".pgn"):
        if base.endswith(ext):
            base = base[: -len(ext)]
    return base + ".chpk"


def _destination(dst: str) -> tuple[str, bool]:
    """A jobs' output directory and whether it is a URL: a local one is made
    (absolute); a URL is kept, without a trailing slash."""
    if chesspack._is_url(dst):
        return dst.rstrip("/"), True
    dst = os.path.abspath(dst)
    os.makedirs(dst, exist_ok=True)
    return dst, False


def _fs_path(url: str, storage_options: Mapping[str, Any] | None) -> tuple[Any, str]:
    """fsspec's file system of a URL and the URL's path on it (no scheme, no
    trailing slash)."""
    import fsspec

    fs, _, (path,) = fsspec.get_fs_token_paths(url, storage_options=dict(storage_options or {}))
    return fs, path.rstrip("/")


def compress_files(
    spark: Any,
    src: str,
    dst: str,
    codec: str = "model",
    level: int = 15,
    overwrite: bool = False,
    split_games: int | None = None,
    storage_options: Mapping[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """Compresses every ``.pgn``/``.pgn.zst`` file of a directory (or a
    glob) into a ``.chpk`` shard of the same name in ``dst``, one Spark task
    a file. ``src`` and ``dst`` may be URLs (``s3://bucket/prefix/``): each
    task downloads its file and uploads its shard under a temporary key,
    moved into place when complete (``storage_options`` for fsspec). With ``split_games``, the driver first cuts each file into
    parts of that many games (``dst/_parts``, removed afterwards: a
    ``.zst`` stream cannot be split by byte ranges; with a URL ``dst``,
    cut from a local copy and uploaded there) and each part becomes a
    task and a shard (``NAME-NNNNN.chpk``). Returns a report a shard: file,
    shard, games, input and output bytes, games stored verbatim."""
    files = _inputs(src, storage_options)
    dst, remote = _destination(dst)
    options = dict(storage_options or {})
    parts_dir = None
    # A URL destination: the parts go under `dst/_parts/` keys, which the
    # tasks read, and are deleted afterwards.
    parts_url = f"{dst}/_parts" if remote else None
    if split_games:
        parts_dir = tempfile.mkdtemp(prefix="chesspack-parts-") if remote else os.path.join(dst, "_parts")
        parts = []
        for f in files:
            name = _shard_name(f)[: -len(".chpk")]
            # A file on object storage is cut from a local copy.
            with chesspack._Local(f, options, output=False) as local:
                parts.extend(_native.split_pgn(local, parts_dir, split_games, name))
        if parts_url is not None:
            fs, root = _fs_path(parts_url, options)
            for p in parts:
                fs.put(p, f"{root}/{os.path.basename(p)}")
            parts = [f"{parts_url}/{os.path.basename(p)}" for p in parts]
        files = parts

    def one(path: str) -> dict[str, Any]:
        import chesspack as cp

        out = f"{dst}/{_shard_name(path)}" if remote else os.path.join(dst, _shard_name(path))
        r = cp.compress(path, out, codec, threads=1, level=level, overwrite=overwrite, storage_options=options)
        return {
            "file": path,
            "shard": out,
            "games": r["games"],
            "input_bytes": r["input_bytes"],
            "output_bytes": r["output_bytes"],
            "verbatim": len(r["verbatim"]),
        }

    sc = spark.sparkContext
    try:
        return sc.parallelize(files, len(files)).map(one).collect()
    finally:
        if parts_dir:
            shutil.rmtree(parts_dir, ignore_errors=True)
            if parts_url is not None:
                fs, root = _fs_path(parts_url, options)
                for key in fs.glob(f"{root}/*"):
                    fs.rm(key)


def _pgn_of_rows(batch: pa.RecordBatch, movetext: str) -> bytes:
    """PGN text of rows in the lichess Parquet layout: every other column
    that holds a value becomes a tag, in column order."""
    cols = batch.schema.names
    data = batch.to_pydict()
    out = []
    for i in range(batch.num_rows):
        for c in cols:
            if c == movetext:
                continue
            v = data[c][i]
            if v is None:
                continue
            v = str(v).replace("\\", "\\\\").replace('"', '\\"')
            out.append(f'[{c} "{v}"]\n')
        out.append("\n")
        out.append((data[movetext][i] or "*").strip())
        out.append("\n\n")
    return "".join(out).encode("utf-8")


def compress_parquet(
    spark: Any,
    src: str,
    dst: str,
    codec: str = "model",
    level: int = 15,
    movetext: str = "movetext",
    partitions: int | None = None,
    storage_options: Mapping[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """Compresses Parquet files in the lichess layout (a ``movetext``
    column, the other columns tags) into ``.chpk`` shards, one a Spark
    partition (``part-NNNNN.chpk`` in ``dst``). ``dst`` may be a URL
    (``s3://bucket/prefix``): each shard is uploaded under a temporary key
    and moved into place when complete (``storage_options`` for fsspec).
    Returns a report a shard."""
    df = spark.read.parquet(src)
    if movetext not in df.columns:
        raise ValueError(f"{src}: no {movetext!r} column (columns: {df.columns})")
    if partitions:
        df = df.repartition(partitions)
    dst, remote = _destination(dst)
    options = dict(storage_options or {})
    report_schema = (
        "shard string, games long, input_bytes long, output_bytes long, verbatim long"
    )

    def shard(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        from pyspark import TaskContext

        import chesspack as cp

        index = TaskContext.get().partitionId()
        out = f"{dst}/part-{index:05d}.chpk" if remote else os.path.join(dst, f"part-{index:05d}.chpk")
        with tempfile.NamedTemporaryFile(suffix=".pgn", delete=False) as tmp:
            n = 0
            for batch in batches:
                tmp.write(_pgn_of_rows(batch, movetext))
                n += batch.num_rows
        try:
            if n == 0:
                return
            r = cp.compress(tmp.name, out, codec, threads=1, level=level, overwrite=True, storage_options=options)
        finally:
            os.unlink(tmp.name)
        yield pa.RecordBatch.from_pylist(
            [
                {
                    "shard": out,
                    "games": r["games"],
                    "input_bytes": r["input_bytes"],
                    "output_bytes": r["output_bytes"],
                    "verbatim": len(r["verbatim"]),
                }
            ]
        )

    return [r.asDict() for r in df.mapInArrow(shard, report_schema).collect()]


# --- columns -------------------------------------------------------------


def _context(tags: Mapping[str, Any] | None, clocks: Any) -> Any:
    """One struct column of a UDF's context (``None`` when there is none):
    field ``t0``, ``t1``... for the tags in order, ``clocks`` for the
    clocks. Names are Spark column names or columns."""
    from pyspark.sql import functions as F

    def col(c: Any) -> Any:
        return F.col(c) if isinstance(c, str) else c

    fields = [col(c).alias(f"t{i}") for i, c in enumerate((tags or {}).values())]
    if clocks is not None:
        fields.append(col(clocks).alias("clocks"))
    return F.struct(*fields) if fields else None


def _arrow_of_series(s: Any) -> pa.Array:
    """A pandas series (of a context column) as Arrow: integers that pandas
    made floats for their nulls become integers again."""
    import pyarrow.compute as pc

    arr = pa.array(s, from_pandas=True)
    if pa.types.is_floating(arr.type):
        arr = pc.cast(arr, pa.int64(), safe=False)
    return arr


def _context_args(names: list[str], ctx: Any, clocks: bool) -> tuple[Any, Any]:
    """The tags and clocks arguments of the batch functions from a UDF's
    context frame."""
    tags = {n: _arrow_of_series(ctx[f"t{i}"]) for i, n in enumerate(names)} if names else None
    clock_column = None
    if clocks:
        clock_column = pa.array(
            [None if c is None else [None if x is None or x != x else x for x in c] for c in ctx["clocks"]]
        )
    return tags, clock_column


def encode_movetext(
    col: Any,
    codec: str = "model",
    *,
    tags: Mapping[str, Any] | None = None,
    clocks: Any = None,
    clock_unit: str = "s",
) -> Any:
    """A pandas UDF: a column of movetext strings (or arrays of SAN/UCI
    strings) to game records (binary; null where a game is not legal).

    ``tags``: the tags that ``model`` reads its context from, by tag name,
    each a column or column name (``{"WhiteElo": "WhiteElo", "BlackElo":
    "BlackElo", "TimeControl": "TimeControl"}``, as the ``chesspack`` data
    source names them); ``clocks``: a column of arrays of clock readings in
    ``clock_unit`` (``"ms"`` for the data source's ``clocks``). Decode with
    the same (:func:`decode_moves`): neither is stored."""
    import pandas as pd
    from pyspark.sql.functions import pandas_udf


    names = list(tags or {})
    ctx = _context(tags, clocks)
    # The UDF is pickled for the workers: it may hold no column.
    timed = clocks is not None

    def arrow(s: Any) -> pa.Array:
        arr = pa.array(s, from_pandas=True)
        if pa.types.is_list(arr.type) or pa.types.is_large_list(arr.type):
            arr = arr.cast(pa.list_(pa.string()))
        return arr

    if ctx is None:

        def encode(s):
            out, _errors = _native.encode_games(arrow(s), codec, None, 1)
            return out.to_pandas()

        # Real annotations (this module's are strings): Spark reads the
        # UDF's kind from them.
        encode.__annotations__ = {"s": pd.Series, "return": pd.Series}
        return pandas_udf("binary")(encode)(col)

    def encode_in_context(s, c):
        t, k = _context_args(names, c, timed)
        out, _errors = chesspack.encode_games(
            arrow(s), codec, threads=1, return_errors=True, tags=t, clocks=k, clock_unit=clock_unit
        )
        return out.to_pandas()

    encode_in_context.__annotations__ = {"s": pd.Series, "c": pd.DataFrame, "return": pd.Series}
    return pandas_udf("binary")(encode_in_context)(col, ctx)


def decode_moves(
    col: Any,
    output: str = "san",
    *,
    tags: Mapping[str, Any] | None = None,
    clocks: Any = None,
    clock_unit: str = "s",
) -> Any:
    """A pandas UDF: a column of game records to arrays of SAN (or UCI)
    strings, or to movetext strings with ``output="movetext"``; ``tags``,
    ``clocks`` and ``clock_unit`` as the records were encoded with."""
    import pandas as pd
    from pyspark.sql.functions import pandas_udf


    kind = "string" if output == "movetext" else "array<string>"
    names = list(tags or {})
    ctx = _context(tags, clocks)
    # The UDF is pickled for the workers: it may hold no column.
    timed = clocks is not None

    if ctx is None:

        def decode(s):
            arr = pa.array(s, type=pa.binary(), from_pandas=True)
            out, _errors = _native.decode_games(arr, None, None, output, 1)
            return out.to_pandas()

        decode.__annotations__ = {"s": pd.Series, "return": pd.Series}
        return pandas_udf(kind)(decode)(col)

    def decode_in_context(s, c):
        t, k = _context_args(names, c, timed)
        arr = pa.array(s, type=pa.binary(), from_pandas=True)
        out, _errors = chesspack.decode_games(
            arr, output=output, threads=1, return_errors=True, tags=t, clocks=k, clock_unit=clock_unit
        )
        return out.to_pandas()

    decode_in_context.__annotations__ = {"s": pd.Series, "c": pd.DataFrame, "return": pd.Series}
    return pandas_udf(kind)(decode_in_context)(col, ctx)


def with_moves(
    df: Any,
    movetext: str = "movetext",
    moves: str = "moves",
    codec: str = "model",
    *,
    tags: Sequence[str] = (),
    clocks: str | None = None,
    clock_unit: str = "s",
) -> Any:
    """``df`` with a binary column ``moves`` of game records coded from its
    ``movetext`` column, through ``mapInArrow`` (no pandas). ``tags``: names
    of ``df``'s columns that hold the tags of the same names that ``model``
    reads (``("WhiteElo", "BlackElo", "TimeControl")``); ``clocks``: the
    name of a column of arrays of clock readings in ``clock_unit``."""
    from pyspark.sql.types import BinaryType, StructField, StructType


    schema = StructType(df.schema.fields + [StructField(moves, BinaryType(), True)])
    names = list(tags)

    def add(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for b in batches:
            if names or clocks is not None:
                out, _errors = chesspack.encode_games(
                    b.column(movetext),
                    codec,
                    threads=1,
                    return_errors=True,
                    tags={n: b.column(n) for n in names} or None,
                    clocks=None if clocks is None else b.column(clocks),
                    clock_unit=clock_unit,
                )
            else:
                out, _errors = _native.encode_games(b.column(movetext), codec, None, 1)
            yield pa.RecordBatch.from_arrays(
                list(b.columns) + [out], names=b.schema.names + [moves]
            )

    return df.mapInArrow(add, schema)


# --- command line --------------------------------------------------------


def _session(master: str | None) -> Any:
    from pyspark.sql import SparkSession

    # Local workers run this interpreter, which has chesspack installed.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    b = SparkSession.builder.appName("chesspack")
    if master:
        b = b.master(master)
    return b.getOrCreate()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m chesspack.spark",
        description="chesspack jobs on Apache Spark",
    )
    sub = p.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("compress", help="PGN files or lichess Parquet to a directory of .chpk shards")
    c.add_argument("input", help="a directory or glob of .pgn/.pgn.zst files, or Parquet with --parquet")
    c.add_argument("output", help="the directory of shards")
    c.add_argument("--parquet", action="store_true", help="the input is Parquet with a movetext column")
    c.add_argument("--codec", default="model")
    c.add_argument("--level", type=int, default=15, help="zstd level of the text columns")
    c.add_argument("--partitions", type=int, help="Parquet: shards to write (a repartition)")
    c.add_argument(
        "--split-games", type=int, help="PGN: cut each file into parts of this many games, a task and a shard each"
    )
    c.add_argument("--master", help="Spark master (default: as spark-submit or the session says)")
    c.add_argument("--overwrite", action="store_true")
    args = p.parse_args(argv)
    spark = _session(args.master)
    register(spark)
    if args.parquet:
        report = compress_parquet(
            spark, args.input, args.output, args.codec, args.level, partitions=args.partitions
        )
    else:
        report = compress_files(
            spark, args.input, args.output, args.codec, args.level, args.overwrite, args.split_games
        )
    games = sum(r["games"] for r in report)
    inb = sum(r["input_bytes"] for r in report)
    outb = sum(r["output_bytes"] for r in report)
    for r in report:
        print(f"{r['shard']}\t{r['games']} games\t{r['input_bytes']} -> {r['output_bytes']} bytes")
    print(
        f"{len(report)} shards, {games} games, {inb} -> {outb} bytes"
        + (f" ({outb / inb:.3f})" if inb else ""),
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
