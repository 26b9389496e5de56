"""chesspack: chess games (PGN) and positions (FEN) in as few bits as
information theory allows, without losing anything.

Single games and positions become *records*: self-contained bytes that name
their codec and model (about 2 bytes + 2.7 bits a ply with the default
``model`` codec). Columns of games go through Arrow (pyarrow, Polars, DuckDB)
and are coded on all cores with the GIL released. Whole PGN files become
``.chpk`` archives with random access to every game.

>>> import chesspack
>>> data = chesspack.encode_game(["e4", "e5", "Nf3", "Nc6"])
>>> chesspack.decode_game(data)
['e4', 'e5', 'Nf3', 'Nc6']
"""

from __future__ import annotations

import io
import os
import warnings
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Mapping, NamedTuple, Sequence

from . import _native
from ._native import (
    ChesspackError,
    DecodeError,
    IllegalMove,
    InvalidPosition,
    UnknownCodec,
)

if TYPE_CHECKING:  # pragma: no cover
    import chess
    import chess.pgn
    import pyarrow as pa

__version__: str = _native.__version__

__all__ = [
    "Archive",
    "ChesspackError",
    "ChesspackWarning",
    "DecodeError",
    "IllegalMove",
    "InvalidPosition",
    "TrainingArchive",
    "Opening",
    "POSITION_COLUMNS",
    "PositionIterator",
    "UnknownCodec",
    "classify_opening",
    "codecs",
    "compress",
    "decode_game",
    "decode_games",
    "decode_position",
    "decompress",
    "encode_game",
    "encode_games",
    "encode_position",
    "record_codec",
    "to_parquet",
    "verify",
]


class ChesspackWarning(UserWarning):
    """Rows of a batch that could not be coded (their values are null)."""


def codecs() -> dict[str, list[str]]:
    """The codec names: ``{"games": [...], "positions": [...]}``."""
    games, positions = _native.codecs()
    return {"games": list(games), "positions": list(positions)}


def record_codec(data: bytes) -> str:
    """The name of the codec that wrote a game or position record."""
    return _native.record_codec(bytes(data))


def _is_url(path: Any) -> bool:
    """Whether ``path`` names a file by a scheme other than ``file://``
    (``s3://``, ``gs://``, ``abfs://``, ``hdfs://``, ``https://``…)."""
    import re

    return isinstance(path, str) and bool(re.match(r"^[A-Za-z][A-Za-z0-9+.-]+://", path)) and not path.startswith(
        "file://"
    )


def _remote(path: Any, storage_options: Mapping[str, Any] | None) -> tuple[str, Any]:
    """A name and an open binary file object for a URL (through fsspec,
    reading only the ranges asked for: the footer, the index, the blocks) or
    a file object; a local path and ``None`` otherwise."""
    if hasattr(path, "read") and hasattr(path, "seek"):
        return str(getattr(path, "path", None) or getattr(path, "name", None) or "<file>"), path
    if isinstance(path, str) and path.startswith("file://"):
        path = path[len("file://"):]
    if _is_url(path):
        try:
            import fsspec
        except ImportError as e:  # pragma: no cover
            raise ImportError(f"{path}: paths with a scheme need fsspec (pip install 'chesspack[cloud]')") from e
        fs, _, (p,) = fsspec.get_fs_token_paths(path, storage_options=dict(storage_options or {}))
        return path, fs.open(p, "rb", cache_type="none")
    return os.fspath(path), None


class _Local:
    """A local path for a path or URL: a URL's object is downloaded to a
    temporary file for reading (``output=False``), or written to one that is
    uploaded under a temporary key and moved into place when complete
    (``output=True``: an object appears whole or not at all)."""

    def __init__(self, path: Any, storage_options: Mapping[str, Any] | None, output: bool, overwrite: bool = True):
        self.url = os.fspath(path) if not isinstance(path, str) else path
        self.remote = _is_url(self.url)
        self.options = dict(storage_options or {})
        self.output = output
        self.overwrite = overwrite
        self.tmp: str | None = None

    def __enter__(self) -> str:
        if not self.remote:
            return self.url[len("file://"):] if self.url.startswith("file://") else self.url
        import tempfile

        import fsspec

        self.fs, _, (self.path,) = fsspec.get_fs_token_paths(self.url, storage_options=self.options)
        if self.output and not self.overwrite and self.fs.exists(self.path):
            raise FileExistsError(f"{self.url}: exists (overwrite=True replaces it)")
        self.dir = tempfile.mkdtemp(prefix="chesspack-")
        self.tmp = os.path.join(self.dir, os.path.basename(self.path.rstrip("/")) or "object")
        if not self.output:
            self.fs.get(self.path, self.tmp)
        return self.tmp

    def __exit__(self, kind: Any, *rest: Any) -> None:
        if not self.remote:
            return
        import shutil
        import uuid

        try:
            if self.output and kind is None:
                staging = f"{self.path}.{uuid.uuid4().hex}.tmp"
                self.fs.put(self.tmp, staging)
                try:
                    self.fs.mv(staging, self.path)
                finally:
                    if self.fs.exists(staging):
                        self.fs.rm(staging)
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)


def _fen(start: Any) -> str | None:
    """A FEN from ``None``, a FEN string or a ``chess.Board``."""
    if start is None or isinstance(start, str):
        return start
    fen = getattr(start, "fen", None)
    if callable(fen):
        # Shredder-FEN keeps Chess960 castling rights unambiguous.
        if getattr(start, "chess960", False):
            return start.fen(shredder=True)
        return start.fen()
    raise TypeError(f"start must be None, a FEN string or a chess.Board, not {type(start).__name__}")


def _move_text(m: Any) -> str:
    if isinstance(m, str):
        return m
    uci = getattr(m, "uci", None)
    if callable(uci):
        return uci()
    raise TypeError(f"a move must be a SAN or UCI string or a chess.Move, not {type(m).__name__}")


class Opening(NamedTuple):
    """A game's opening as lichess names it: its ECO code, its name and the
    ply (half-move) after which the game stood on the named position."""

    eco: str
    name: str
    ply: int


def classify_opening(game: Any, start: Any = None) -> Opening | None:
    """The opening of a game as lichess names it, from lichess's own opening
    table (lichess-org/chess-openings, CC0): the deepest position of the
    game's first 40 plies that the table lists, while at least 20 pieces
    stand, transpositions included. ``game`` is a ``chess.Board`` (its move
    stack from its root), a movetext string or a list of SAN/UCI moves or
    ``chess.Move`` (from ``start``, a FEN or a ``chess.Board``; the
    standard position by default). ``None`` when no listed position is
    reached, or the game starts elsewhere. Raises :class:`IllegalMove` for
    a move that is not legal.

    >>> classify_opening("1. e4 c5 2. Nf3 d6 3. d4 cxd4 4. Nxd4 Nf6 5. Nc3 a6")
    Opening(eco='B90', name='Sicilian Defense: Najdorf Variation', ply=10)
    """
    stack = getattr(game, "move_stack", None)
    if stack is not None:
        root = game.root()
        fen = root.fen(shredder=True) if getattr(root, "chess960", False) else root.fen()
        found = _native.classify_opening([m.uci() for m in stack], fen)
    else:
        moves = game if isinstance(game, str) else [_move_text(m) for m in game]
        found = _native.classify_opening(moves, _fen(start))
    return None if found is None else Opening(*found)


def encode_game(
    moves: str | Iterable[Any],
    codec: str = "model",
    start: Any = None,
    *,
    tags: Mapping[str, Any] | None = None,
    clocks: Iterable[float | None] | None = None,
) -> bytes:
    """Encodes one game as a record.

    ``moves`` is a movetext string (``"1. e4 e5 2. Nf3 *"``, comments and
    variations allowed and left out) or a sequence of moves as SAN strings,
    UCI strings or ``chess.Move`` objects. ``start`` is the start position:
    ``None`` (standard), a FEN (Chess960 too) or a ``chess.Board``. ``tags``
    is the game's PGN tags (a dict, or a ``chess.pgn.Headers``): ``model``
    codes the moves knowing ``WhiteElo``, ``BlackElo`` and ``TimeControl``.
    ``clocks`` is the clock of the side that moved after each ply, in
    seconds (``None`` where unknown; ``node.clock()`` of python-chess): the
    time each player has left. Comments in a movetext, ``[%clk]`` ones
    included, are left out: pass clocks here. Neither the start, the tags
    nor the clocks are stored: pass the same ones to :func:`decode_game`.

    Raises :class:`IllegalMove` naming the first move that is not legal.

    >>> import chess
    >>> b = chess.Board()
    >>> moves = [b.push_san(s) for s in ["d4", "d5", "c4"]]
    >>> decode_game(encode_game(moves))
    ['d4', 'd5', 'c4']
    >>> tags = {"WhiteElo": 1850, "BlackElo": "1790", "TimeControl": "180+2"}
    >>> decode_game(encode_game("1. e4 e5", tags=tags), tags=tags)
    ['e4', 'e5']
    >>> record = encode_game("1. e4 e5", tags=tags, clocks=[179, 180])
    >>> decode_game(record, tags=tags, clocks=[179, 180])
    ['e4', 'e5']
    """
    pairs = _tag_pairs(tags)
    secs = _clocks(clocks)
    if isinstance(moves, (str, bytes)):
        text = moves.decode() if isinstance(moves, bytes) else moves
        return _native.encode_game(text, codec, _fen(start), pairs, secs)
    return _native.encode_game([_move_text(m) for m in moves], codec, _fen(start), pairs, secs)


def _clocks(clocks: Iterable[float | None] | None) -> list[int | None] | None:
    """Clock readings as whole seconds (lichess's ``[%clk]`` precision)."""
    if clocks is None:
        return None
    return [None if c is None else int(c) for c in clocks]


def _tag_pairs(tags: Mapping[str, Any] | None) -> list[tuple[str, str]] | None:
    """A game's tags as (name, value) strings."""
    if tags is None:
        return None
    return [(str(k), str(v)) for k, v in tags.items() if v is not None]


def _tag_columns(tags: Mapping[str, Any] | None) -> list[tuple[str, Any]] | None:
    """A batch's tags as (name, value) pairs: one string for every game, or
    a column of strings (numbers are written out, nulls stay null)."""
    if tags is None:
        return None
    import pyarrow as pa
    import pyarrow.compute as pc

    out = []
    for name, value in tags.items():
        if value is None:
            continue
        if isinstance(value, (str, int)):
            out.append((str(name), str(value)))
            continue
        if isinstance(value, (pa.Array, pa.ChunkedArray)):
            pass
        elif hasattr(value, "__arrow_c_array__"):
            value = pa.array(value)
        elif hasattr(value, "__arrow_c_stream__"):
            value = pa.chunked_array(value)
        else:
            value = pa.array([None if v is None else str(v) for v in value], pa.string())
        if not (pa.types.is_string(value.type) or pa.types.is_large_string(value.type)):
            value = pc.cast(value, pa.string())
        out.append((str(name), value))
    return out


def decode_game(
    data: bytes,
    codec: str | None = None,
    start: Any = None,
    *,
    uci: bool = False,
    as_board: bool = False,
    tags: Mapping[str, Any] | None = None,
    clocks: Iterable[float | None] | None = None,
) -> Any:
    """Decodes a game record into its moves: SAN strings (UCI with
    ``uci=True``), or a ``chess.Board`` with the moves on its stack
    (``as_board=True``). ``start``, ``tags`` and ``clocks`` as the record
    was encoded with.

    ``codec``, when given, must be the record's codec. Raises
    :class:`DecodeError` for bytes that are not such a record.

    >>> board = decode_game(encode_game("1. e4 c5 2. Nf3"), as_board=True)
    >>> board.fen()
    'rnbqkbnr/pp1ppppp/8/2p5/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 1 2'
    """
    fen = _fen(start)
    pairs = _tag_pairs(tags)
    secs = _clocks(clocks)
    if not as_board:
        return _native.decode_game(bytes(data), codec, fen, uci, pairs, secs)
    board = _board(start)
    for u in _native.decode_game(bytes(data), codec, fen, True, pairs, secs):
        board.push_uci(u)
    return board


def _board(start: Any) -> "chess.Board":
    """A board at ``start``: a copy of a ``chess.Board`` (its Chess960 flag
    kept), or a FEN read as Chess960 when its castling field names rook
    files or standard castling cannot hold it."""
    import chess

    if start is None:
        return chess.Board()
    if not isinstance(start, str):
        return start.copy(stack=False)
    fields = start.split()
    shredder = len(fields) > 2 and any(c in "ABCDEFGHabcdefgh" for c in fields[2])
    if not shredder:
        board = chess.Board(start)
        if board.is_valid() and board.castling_rights == board.clean_castling_rights():
            return board
    return chess.Board(start, chess960=True)


def encode_position(fen: Any, codec: str = "position-model") -> bytes:
    """Encodes a position (a FEN, or a ``chess.Board``) as a record.

    The codecs store the board, side to move, castling rights and a legal
    en-passant square; clocks are not stored.

    >>> decode_position(encode_position("8/8/8/4k3/8/8/8/4K2R w K - 0 1"))
    '8/8/8/4k3/8/8/8/4K2R w K - 0 1'
    """
    return _native.encode_position(_fen(fen), codec)


def decode_position(data: bytes, codec: str | None = None) -> str:
    """The FEN of a position record (halfmove clock 0, move number 1)."""
    return _native.decode_position(bytes(data), codec)


def _arrow_input(values: Any) -> Any:
    """An object with the Arrow PyCapsule interface: Arrow arrays, chunked
    arrays, Polars series and DuckDB results pass as they are (no copy),
    Python sequences become pyarrow arrays."""
    if hasattr(values, "__arrow_c_array__") or hasattr(values, "__arrow_c_stream__"):
        return values
    import pyarrow as pa

    values = list(values)
    # Texts, or lists of moves: the first game says which the column holds.
    first = next((v for v in values if v is not None), None)
    texts = first is None or isinstance(first, (str, bytes))
    for row, v in enumerate(values):
        is_text = isinstance(v, (str, bytes))
        if v is not None and (is_text != texts or not (is_text or hasattr(v, "__iter__"))):
            raise TypeError(f"row {row}: a game is a movetext string or a list of moves, not {type(v).__name__}")
    if not texts:
        values = [None if v is None else [_move_text(m) for m in v] for v in values]
    return pa.array(values)


def _report(errors: list[tuple[int, str]], what: str) -> None:
    """Warns of the rows a batch left null."""
    if errors:
        row, msg = errors[0]
        n = len(errors)
        noun = what if n != 1 else what[:-1]
        warnings.warn(
            f"{n} {noun} could not be coded and {'is' if n == 1 else 'are'} null "
            f"(first: row {row}: {msg}); return_errors=True lists them",
            ChesspackWarning,
            stacklevel=3,
        )


def encode_games(
    games: Any,
    codec: str = "model",
    *,
    start: Any = None,
    threads: int | None = None,
    return_errors: bool = False,
    tags: Mapping[str, Any] | None = None,
    clocks: Any = None,
    clock_unit: str = "s",
) -> Any:
    """Encodes a column of games into a column of records, on all cores.

    ``games``: movetext strings, or lists of SAN/UCI strings (or
    ``chess.Move`` objects), as a pyarrow array or chunked array, a Polars
    series, anything with the Arrow PyCapsule interface (read without a
    copy), or a Python list. ``start``: ``None``, one FEN for every game, or a
    column of FENs (null: the standard position). ``tags``: the games' tags
    that ``model`` reads, by name, each one value for every game or a column
    (strings or numbers, nulls allowed), e.g. ``{"WhiteElo": df["WhiteElo"],
    "BlackElo": df["BlackElo"], "TimeControl": df["TimeControl"]}``.
    ``clocks``: the games' clocks, a column of lists of numbers (seconds on
    the clock of the side that moved after each ply, as lichess's
    ``[%clk]`` comments give them; nulls where none), which ``model`` reads
    too (time pressure); ``clock_unit="ms"`` for milliseconds, as the
    ``clocks`` column of :meth:`Archive.to_arrow` and the Spark reader holds
    them. Pass the same tags and clocks to :func:`decode_games`: neither is
    stored.

    Returns a ``pyarrow.BinaryArray`` (a ``ChunkedArray`` for chunked
    input). A game that cannot be coded gives a null and a
    :class:`ChesspackWarning`; with ``return_errors=True`` the result is
    ``(array, [(row, message), ...])`` instead.

    >>> arr = encode_games(["1. e4 e5 2. Nf3", "1. d4 d5", "1. e4 e5 2. Ke3"], return_errors=True)
    >>> arr[0].null_count, arr[1]
    (1, [(2, 'illegal or unreadable move "Ke3" at ply 2')])
    """
    if start is not None and not isinstance(start, str) and not hasattr(start, "fen"):
        start = _arrow_input(start)
    else:
        start = _fen(start)
    out, errors = _native.encode_games(
        _arrow_input(games), codec, start, threads, _tag_columns(tags), _clock_column(clocks), clock_unit
    )
    if return_errors:
        return out, errors
    _report(errors, "games")
    return out


def decode_games(
    records: Any,
    codec: str | None = None,
    *,
    start: Any = None,
    output: str = "san",
    threads: int | None = None,
    return_errors: bool = False,
    tags: Mapping[str, Any] | None = None,
    clocks: Any = None,
    clock_unit: str = "s",
) -> Any:
    """Decodes a column of game records, on all cores.

    ``output``: ``"san"`` or ``"uci"`` (a list array of moves), or
    ``"movetext"`` (strings like ``"1. e4 e5 2. Nf3"``). ``codec``, when
    given, must be every record's codec; otherwise each record names its
    own. ``start``, ``tags`` and ``clocks`` as the records were encoded with. Bad
    records give nulls, as in :func:`encode_games`.

    >>> decode_games(encode_games(["1. e4 e5"]), output="movetext").to_pylist()
    ['1. e4 e5']
    """
    if start is not None and not isinstance(start, str) and not hasattr(start, "fen"):
        start = _arrow_input(start)
    else:
        start = _fen(start)
    out, errors = _native.decode_games(
        _arrow_input(records), codec, start, output, threads, _tag_columns(tags), _clock_column(clocks), clock_unit
    )
    if return_errors:
        return out, errors
    _report(errors, "records")
    return out


def _clock_column(clocks: Any) -> Any:
    """A batch's clocks as an Arrow list column (``None``: none)."""
    if clocks is None:
        return None
    if hasattr(clocks, "__arrow_c_array__") or hasattr(clocks, "__arrow_c_stream__"):
        return clocks
    import pyarrow as pa

    return pa.array([None if c is None else list(c) for c in clocks])


def _progress(progress: Any, desc: str) -> tuple[Callable[[int, int], None] | None, Callable[[], None]]:
    """A ``(done, total)`` callback and a closer from ``progress``: ``None``,
    ``True`` (a tqdm bar), a tqdm-compatible bar (``update``/``total``) or a
    callable."""
    if progress is None or progress is False:
        return None, lambda: None
    if progress is True:
        from tqdm.auto import tqdm

        progress = tqdm(unit="B", unit_scale=True, desc=desc)
        owned = True
    else:
        owned = False
    if hasattr(progress, "update") and hasattr(progress, "total"):
        bar = progress
        seen = [0]

        def cb(done: int, total: int) -> None:
            if total and bar.total != total:
                bar.total = total
            bar.update(done - seen[0])
            seen[0] = done

        return cb, (bar.close if owned else (lambda: None))
    if callable(progress):
        return progress, lambda: None
    raise TypeError("progress must be None, True, a tqdm bar or a callable(done, total)")


def compress(
    src: str | os.PathLike[str],
    dst: str | os.PathLike[str] | None = None,
    codec: str | None = None,
    *,
    threads: int | None = None,
    level: int | None = None,
    block_games: int | None = None,
    overwrite: bool = False,
    progress: Any = None,
    storage_options: Mapping[str, Any] | None = None,
    derive_eco: bool = False,
    no_index: bool = False,
    index_squares: bool = False,
    index_memory: int = 0,
) -> dict[str, Any]:
    """Compresses a PGN file (``.pgn``, also ``.zst``, ``.gz``, ``.bz2`` or
    ``.xz``) into a ``.chpk`` archive (default name: ``src`` + ``.chpk``),
    a position file (``.csv``/``.epd``/``.fen``) into a position archive,
    or engine training data (``.binpack``, ``.plain``, viriformat) into a
    training archive, on all cores, as ``chesspack compress`` does: the
    library tells the kind. ``codec``: ``model`` for games and ``fast``
    for training data unless given. ``level`` (zstd, 1-22) and ``block_games`` are
    the library's defaults (15, 4096) unless given.

    The output is written under a temporary name and appears only when
    complete; an existing file is kept unless ``overwrite``. ``src`` and
    ``dst`` may be URLs (``s3://…``, through fsspec; ``storage_options`` for
    its file system): the input is downloaded, and the output uploaded under
    a temporary key and moved into place when complete. ``progress``:
    ``True`` for a tqdm bar, a tqdm bar, or ``callable(done, total)`` over
    input bytes. A game whose ``ECO`` tag alone (master games) is the one
    its moves give keeps its opening in the archive, so that reading its
    ``ECO`` decodes no moves; ``derive_eco=True`` works it out from the
    game's first moves when read instead (archives of master games ~0.7%
    smaller). A game archive has a search index (:meth:`Archive.find`)
    unless ``no_index``; ``index_squares=True`` keeps in it the squares
    each piece of each game stood on, so that sub-FENs (and positions many
    games could come to) decode only the games whose pieces stood on their
    squares, for an index about three times as large. ``index_memory``:
    the most bytes building the index may take (0: 4 GiB, about five
    million master games), worked out from the games so that the archive
    is the same on every machine; past it the archive is written without
    the index, and the report's ``index_left_out`` says why (else
    ``None``). Returns the report: ``kind``, ``codec``, ``items`` and their
    ``unit`` (``game``, ``position`` or ``line``; the same count is under
    ``games``, ``positions`` or ``lines``), input and output bytes, the
    games stored verbatim (number, category, detail) and the position
    lines kept as text (``verbatim_lines``).
    """
    src = os.fspath(src)
    dst = os.fspath(dst) if dst is not None else src + ".chpk"
    cb, close = _progress(progress, "compressing")
    try:
        with _Local(src, storage_options, False) as s, _Local(dst, storage_options, True, overwrite) as d:
            return _native.compress(
                s, d, codec, threads, level, block_games, overwrite, cb, derive_eco, no_index, index_squares, index_memory
            )
    finally:
        close()


def decompress(
    src: str | os.PathLike[str],
    dst: str | os.PathLike[str],
    *,
    threads: int | None = None,
    overwrite: bool = False,
    progress: Any = None,
    storage_options: Mapping[str, Any] | None = None,
) -> int:
    """Writes the PGN text (or position file) of an archive to ``dst``;
    returns the number of games (or lines). URLs as in :func:`compress`."""
    cb, close = _progress(progress, "decompressing")
    try:
        with _Local(src, storage_options, False) as s, _Local(dst, storage_options, True, overwrite) as d:
            return _native.decompress(s, d, threads, overwrite, cb)
    finally:
        close()


def verify(
    src: str | os.PathLike[str], *, threads: int | None = None, storage_options: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """Checks every block of an archive (checksum, then a full decode); a
    URL's object is downloaded first.

    Returns ``{"ok", "version", "codec", "model_hash", "blocks", "games",
    "problems"}``; ``problems`` lists messages naming each damaged block.
    """
    with _Local(os.fspath(src), storage_options, False) as s:
        return _native.verify(s, threads)


class Archive(Sequence):
    """A ``.chpk`` archive opened for reading.

    ``len(archive)`` games, numbered from 0; ``archive[i]`` is the PGN text
    of game ``i`` as ``decompress`` writes it (slices give lists);
    iteration reads a block at a time. ``recover=True`` opens a file whose
    index is missing (a truncated file) from the blocks found.

    >>> import tempfile, os
    >>> d = tempfile.mkdtemp()
    >>> p = os.path.join(d, "g.pgn")
    >>> _ = open(p, "w").write('[White "Tal"]\\n\\n1. e4 e5 2. Nf3 1-0\\n')
    >>> _ = compress(p)
    >>> a = Archive(p + ".chpk")
    >>> len(a), a.tags(0)
    (1, {'White': 'Tal'})
    >>> print(a[0], end="")
    [White "Tal"]
    <BLANKLINE>
    1. e4 e5 2. Nf3 1-0
    """

    def __init__(
        self,
        path: str | os.PathLike[str] | Any,
        recover: bool = False,
        storage_options: Mapping[str, Any] | None = None,
    ) -> None:
        name, file = _remote(path, storage_options)
        self._file = file
        self._a = _native.Archive(name, recover, file)

    @property
    def path(self) -> str:
        """The archive's path."""
        return self._a.path

    @property
    def codec(self) -> str:
        """The move codec the archive was written with."""
        return self._a.codec

    @property
    def version(self) -> int:
        """The archive format version."""
        return self._a.version

    @property
    def model_hash(self) -> int:
        """The hash of the codec's model (0 for codecs without one)."""
        return self._a.model_hash

    @property
    def index_error(self) -> str | None:
        """Why the index could not be used (``recover=True``), or None."""
        return self._a.index_error

    def __len__(self) -> int:
        return len(self._a)

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        return self._a.game_text(i)

    def __iter__(self) -> Iterator[str]:
        for b in range(len(self._a.blocks())):
            yield from self._a.block_games(b)

    def __repr__(self) -> str:
        return f"Archive({self.path!r}: {len(self)} games, codec {self.codec})"

    def raw(self, i: int) -> bytes:
        """Game ``i``'s text as the input had it, byte for byte (``a[i]``
        is the same as text: UTF-8, or Latin-1 where it is not UTF-8)."""
        return self._a.game_bytes(i)

    def game(self, i: int) -> "chess.pgn.Game":
        """Game ``i`` as a ``chess.pgn.Game`` (python-chess)."""
        import chess.pgn

        return chess.pgn.read_game(io.StringIO(self[i]))

    def games(self) -> Iterator["chess.pgn.Game"]:
        """Every game as a ``chess.pgn.Game``, a block at a time."""
        import chess.pgn

        for text in self:
            yield chess.pgn.read_game(io.StringIO(text))

    def tags(self, i: int) -> dict[str, str]:
        """The tags of game ``i``, without decoding its moves (but its first
        plies where the archive stores ``ECO`` or ``Opening`` as what the
        moves give); milliseconds, whatever the block."""
        return dict(self._a.tags(i))

    def blocks(self) -> list[dict[str, int]]:
        """The blocks: index, offset, length (stored bytes), first_game
        (0-based) and games. Each decodes on its own."""
        return [
            {"block": b, "offset": o, "length": n, "first_game": f, "games": g}
            for (b, o, n, f, g) in self._a.blocks()
        ]

    def block_games(self, block: int) -> list[str]:
        """The PGN texts of the games of one block."""
        return self._a.block_games(block)

    def read_block(
        self, block: int, pgn: bool = False, columns: list[str] | None = None
    ) -> "pa.RecordBatch":
        """The games of one block as an Arrow record batch: ``game``
        (0-based), the tag columns (``WhiteElo``/``BlackElo`` as integers),
        ``other_tags`` (a map), ``moves`` (SAN), ``clocks`` (milliseconds,
        from ``%clk``; null without clocks), ``opening_eco``,
        ``opening_name`` and ``opening_ply`` (the opening as lichess names
        it, from the moves, whether or not the game has ``ECO``/``Opening``
        tags: :func:`classify_opening`) and ``pgn`` when asked; or only
        ``columns``, in that order. Moves and clocks are decoded straight
        into columns; columns of tags alone decode no moves (but the first
        plies of a game whose ``ECO``/``Opening`` the moves give in an
        archive that left them to the moves: ``compress(derive_eco=True)``;
        and for the opening columns, of a game whose opening the archive
        does not store: one whose ``Opening`` tag is not lichess's of
        today)."""
        return self._a.read_block(block, pgn, columns)

    def find(
        self,
        fen: "str | chess.Board | None" = None,
        moves: "str | Sequence[str] | None" = None,
        sub_fen: "str | Sequence[str] | None" = None,
        material: str | None = None,
        imbalance: str | None = None,
        **filters: Any,
    ) -> "pa.Table":
        """The games that reach a position (``fen``, or ``moves`` from the
        start in SAN or UCI: transpositions match), a ``sub_fen`` (pieces on
        squares; a list: any of them), a ``material`` (``"KRPKR"``) or an
        ``imbalance`` (``"Q v RR"``), and pass the filters, as ``chesspack
        find`` finds them: a table of ``game`` (numbered from 0, as
        ``archive[i]``), ``ply`` (of the first time), ``white``, ``black``,
        ``white_elo``, ``black_elo``, ``result``, ``date``, ``event``,
        ``eco``, ``opening`` (the ``Opening`` tag, or the name the moves give
        in lichess's table).

        Filters: ``white``, ``black``, ``player`` (a part of the name),
        ``min_elo``, ``max_elo`` (the players' mean), ``result``
        (``"1-0"``...), ``from_date``, ``to_date`` (``"2020.01.31"``,
        ``"2020"``), ``event``, ``eco`` (a start: ``"B9"``), ``opening`` (a
        part of the name, any case: ``"najdorf"``), ``speed``
        (``"blitz"``...), and ``threads``. How the archive was searched is
        in the table's metadata, ``b"chesspack.search"`` (JSON:
        ``scanned`` where it has no search index, ``decoded`` games...).

        >>> import tempfile, os
        >>> d = tempfile.mkdtemp()
        >>> p = os.path.join(d, "g.pgn")
        >>> _ = open(p, "w").write('1. e4 c5 2. Nf3 1-0\\n\\n1. Nf3 c5 2. e4 0-1\\n')
        >>> _ = compress(p)
        >>> t = Archive(p + ".chpk").find(moves="e4 c5 Nf3")
        >>> t.column("game").to_pylist(), t.column("ply").to_pylist()
        ([0, 1], [3, 3])
        """
        if isinstance(sub_fen, str):
            sub_fen = [sub_fen]
        query = dict(
            fen=_fen_of(fen), moves=_moves_of(moves), sub_fen=list(sub_fen or []),
            material=material, imbalance=imbalance, **filters,
        )
        return _with_how(*self._a.search(query))

    def explore(
        self,
        fen: "str | chess.Board | None" = None,
        moves: "str | Sequence[str] | None" = None,
        **filters: Any,
    ) -> "pa.Table":
        """The opening explorer, as ``chesspack explore``: every move played
        from the position (the start where none is given) by the games that
        pass the filters (those of :meth:`find`), most played first: ``san``,
        ``uci``, ``games``, ``white``, ``draws``, ``black`` (wins, draws,
        losses), ``mean_rating`` of the player who moved, ``last_game`` and
        ``best_game`` (the most recent and the highest-rated, numbered from
        0), ``eco`` and ``opening`` of the position after the move where
        lichess's opening table names it. The games that reached the
        position are :meth:`find`'s; the table's metadata
        (``chesspack.search``) names the position's own opening (``eco``,
        ``opening``: by moves, the last position on the way that the table
        names).

        >>> import tempfile, os
        >>> d = tempfile.mkdtemp()
        >>> p = os.path.join(d, "g.pgn")
        >>> _ = open(p, "w").write('1. e4 e5 1-0\\n\\n1. e4 c5 0-1\\n\\n1. d4 d5 1-0\\n')
        >>> _ = compress(p)
        >>> t = Archive(p + ".chpk").explore(moves="e4")
        >>> t.column("san").to_pylist(), t.column("games").to_pylist()
        (['c5', 'e5'], [1, 1])
        >>> t.column("opening").to_pylist()
        ['Sicilian Defense', "King's Pawn Game"]
        """
        query = dict(fen=_fen_of(fen), moves=_moves_of(moves), **filters)
        return _with_how(*self._a.search(query, explore=True))

    def to_arrow(self, pgn: bool = False, columns: list[str] | None = None) -> "pa.Table":
        """Every game as one Arrow table (see :meth:`read_block`)."""
        return self.to_reader(pgn, columns).read_all()

    def to_reader(
        self, pgn: bool = False, columns: list[str] | None = None
    ) -> "pa.RecordBatchReader":
        """Every game as an Arrow stream, a block a batch, each block
        decoded when the stream reaches it (see :meth:`read_block`)."""
        import pyarrow as pa

        schema = _native.empty_rows(pgn or "pgn" in (columns or [])).schema
        if columns is not None:
            schema = pa.schema([schema.field(c) for c in columns])
        blocks = range(len(self._a.blocks()))
        return pa.RecordBatchReader.from_batches(
            schema, (self.read_block(b, pgn, columns) for b in blocks)
        )

    def positions(
        self,
        block: int,
        columns: list[str] | None = None,
        skipped: list[int] | None = None,
        threads: int | None = None,
    ) -> "pa.RecordBatch":
        """Every position of block ``block``'s games as a
        ``pyarrow.RecordBatch``: one row for each position of a game's
        mainline before a move is played, decoded in Rust from the archive
        (no PGN in between) with the GIL released, on ``threads`` threads
        (all cores when None). Only ``columns`` are worked out, in that
        order; the defaults (:data:`POSITION_COLUMNS`) leave out ``uci``,
        ``fen`` and tags.

        The position, in :class:`TrainingArchive`'s names and codes:
        ``board`` (64 pieces, squares a1 = 0 … h8 = 63; 0 empty, 1–6 white
        pawn, knight, bishop, rook, queen, king, 7–12 black), ``turn`` (0
        white, 1 black), ``castling`` (bits: white short, white long, black
        short, black long), ``ep`` (the en-passant square where a capture
        there is legal, else 64), ``rule50``, ``ply`` (the game ply, as
        python-chess's ``board.ply()``). The move played: ``from``, ``to``
        (the rook's square for castling), ``promotion`` (2 knight … 5
        queen, else 0), and ``uci`` when asked. The game: ``game`` (its
        number, from 0), ``result`` (for the side to move: 1, 0, -1; null
        for ``*``), ``WhiteElo``, ``BlackElo``, ``base`` and ``increment``
        (the ``TimeControl`` in seconds), and any tag by its name (text).
        Per move: ``clock`` (seconds the side to move has left before the
        move: its ``[%clk]`` after its previous move, the base before its
        first; null without readings), ``eval`` (the evaluation of the
        row's position in centipawns, White's view: the ``[%eval]`` after
        the move before it) and ``mate`` (the same as moves to mate,
        positive when White mates). ``fen`` when asked.

        Games stored verbatim (variants, text that does not parse, a null
        move in the mainline) give no rows: their numbers are appended to
        ``skipped`` when it is a list. Games from a ``FEN`` tag give rows
        from it.
        """
        batch, missed = self._a.positions(block, columns, threads)
        if skipped is not None:
            skipped.extend(missed)
        return batch

    def numpy(self, block: int, columns: list[str] | None = None, threads: int | None = None) -> dict[str, Any]:
        """The rows of :meth:`positions` as NumPy arrays, without copies:
        ``board`` as an ``(n, 64)`` array; a column with nulls as a masked
        array over the same values (``clock``, ``eval``, ``mate``,
        ``result`` and the tags' numbers); text columns (``uci``, ``fen``,
        tags) as object arrays, which are copies."""
        return _numpy(self.positions(block, columns, threads=threads))

    def iter_positions(
        self,
        batch_size: int = 4096,
        shuffle: bool = True,
        seed: int | None = None,
        buffer: int = 1 << 17,
        worker: tuple[int, int] = (0, 1),
        columns: list[str] | None = None,
        threads: int | None = None,
    ) -> "PositionIterator":
        """Every position of the archive (:meth:`positions`) as record
        batches of ``batch_size`` rows, for training: a
        :class:`PositionIterator`.

        With ``shuffle``, the blocks are read in an order drawn from
        ``seed``, and their rows are mixed through a buffer of ``buffer``
        rows before they are given (positions of one game are spread over
        that many); the same ``seed`` gives the same batches. Pass
        ``seed + epoch`` for a new order each epoch.

        ``worker=(i, n)`` gives worker ``i`` of ``n`` every ``n``-th block
        of that order, so that ``n`` workers (PyTorch ``DataLoader``
        workers, or ranks times workers) read every position exactly once
        between them. Several workers that shuffle need the same ``seed``.
        """
        return PositionIterator(self, batch_size, shuffle, seed, buffer, worker, columns, threads)

    def __arrow_c_stream__(self, requested_schema: object = None) -> object:
        """The Arrow PyCapsule stream of every game (:meth:`to_reader`), a
        block at a time, for readers of that interface (``pa.table(archive)``;
        Polars iterates an archive as its texts: ``pl.from_arrow(
        archive.to_reader())``)."""
        return self.to_reader().__arrow_c_stream__(requested_schema)


POSITION_COLUMNS: list[str] = list(_native.empty_positions().schema.names)
"""The default columns of :meth:`Archive.positions`; ``uci``, ``fen``
and any tag by its name may be asked for too."""


def _fen_of(fen: Any) -> str | None:
    return fen if fen is None or isinstance(fen, str) else fen.fen()


def _moves_of(moves: Any) -> str | None:
    if moves is None or isinstance(moves, str):
        return moves
    return " ".join(str(m) for m in moves)


def _with_how(batch: "pa.RecordBatch", how: dict[str, Any]) -> "pa.Table":
    """A table of `batch` with how the search went in its metadata."""
    import json

    import pyarrow as pa

    table = pa.Table.from_batches([batch])
    return table.replace_schema_metadata({b"chesspack.search": json.dumps(how).encode()})


def _numpy(batch: "pa.RecordBatch") -> dict[str, Any]:
    """A batch's columns as NumPy arrays, without copies of numbers.

    A batch may be a slice of a larger one (the iterators' batches are):
    every column is read from its own offset. A column that the schema
    says may hold nulls is a masked array in every batch, with or without
    nulls, so that code written for one batch works for the next."""
    import numpy as np
    import pyarrow as pa

    out: dict[str, Any] = {}
    for field, column in zip(batch.schema, batch.columns):
        if pa.types.is_fixed_size_list(column.type):
            # `values` is the whole parent's; `flatten` is this slice's.
            out[field.name] = column.flatten().to_numpy().reshape(-1, column.type.list_size)
        elif pa.types.is_string(column.type):
            out[field.name] = column.to_numpy(zero_copy_only=False)
        elif not field.nullable:
            out[field.name] = column.to_numpy()
        else:
            dtype = column.type.to_pandas_dtype()
            data = column.buffers()[1]
            data = np.frombuffer(data, dtype=dtype) if data is not None else np.zeros(0, dtype)
            values = data[column.offset : column.offset + len(column)]
            mask = column.is_null().to_numpy(zero_copy_only=False)
            out[field.name] = np.ma.masked_array(values, mask=mask)
    return out


def _release_memory() -> None:
    """Gives the memory that Arrow's allocator and the C library's keep
    after a block back to the system: without it a loader's resident
    memory is about 1.8 times what it holds."""
    import pyarrow as pa

    pa.default_memory_pool().release_unused()
    _native.release_memory()


def _take_rows(table: "pa.Table", rows: Any) -> "pa.Table":
    """The rows `rows` (NumPy indices) of `table` (of one chunk a column). Arrow's
    take of a fixed-size list goes through an index per value (64 a board,
    8 bytes each: 7 times the board's memory); NumPy's takes the rows."""
    import pyarrow as pa
    import pyarrow.compute as pc

    indices = pa.array(rows)
    columns = []
    for column in table.columns:
        c = column.chunk(0) if column.num_chunks == 1 else column.combine_chunks()
        if pa.types.is_fixed_size_list(c.type) and c.null_count == 0 and c.offset == 0:
            values = c.values.to_numpy(zero_copy_only=False).reshape(-1, c.type.list_size)[rows]
            c = pa.FixedSizeListArray.from_arrays(pa.array(values.reshape(-1)), type=c.type)
        else:
            c = pc.take(c, indices)
        columns.append(c)
    return pa.Table.from_arrays(columns, schema=table.schema)


class PositionIterator:
    """The batches of :meth:`Archive.iter_positions`: iterate it (each
    iteration reads its share of the archive once more, in the same order
    for the same seed). ``skipped`` lists the games that gave no rows
    (stored verbatim) in the last pass, ``positions`` counts the rows
    given so far in it."""

    def __init__(
        self,
        archive: Archive,
        batch_size: int,
        shuffle: bool,
        seed: int | None,
        buffer: int,
        worker: tuple[int, int],
        columns: list[str] | None,
        threads: int | None,
    ) -> None:
        i, n = worker
        if n < 1 or not 0 <= i < n:
            raise ValueError(f"worker must be (i, n) with 0 <= i < n, not {worker!r}")
        if batch_size < 1 or buffer < 0:
            raise ValueError("batch_size must be at least 1 and buffer at least 0")
        if shuffle and n > 1 and seed is None:
            raise ValueError("workers that shuffle need one seed, so that they share one order of blocks")
        if shuffle and seed is None:
            import numpy as np

            seed = int(np.random.SeedSequence().generate_state(1)[0])
        self._archive = archive
        self._batch_size = batch_size
        self._shuffle = shuffle
        self._seed = seed
        self._buffer = buffer
        self._worker = (i, n)
        self._columns = columns
        self._threads = threads
        self.skipped: list[int] = []
        self.positions = 0

    def blocks(self) -> list[int]:
        """The blocks this worker reads, in order."""
        import numpy as np

        count = len(self._archive.blocks())
        order = np.random.default_rng(self._seed).permutation(count) if self._shuffle else np.arange(count)
        i, n = self._worker
        return [int(b) for b in order[i::n]]

    def __iter__(self) -> Iterator["pa.RecordBatch"]:
        import numpy as np
        import pyarrow as pa

        self.skipped = []
        self.positions = 0
        size = self._batch_size
        rng = np.random.default_rng([self._seed or 0, *self._worker])
        # The pool: batches not given yet. Each block that fills it past
        # `buffer` rows gives all but `buffer` of them, drawn at random;
        # the rest are copied once and wait (about twice the pool at most
        # in memory).
        pool: list[pa.RecordBatch] = []
        rows = 0
        for b in self.blocks():
            batch = self._archive.positions(b, self._columns, self.skipped, self._threads)
            pool.append(batch)
            rows += batch.num_rows
            if self._shuffle and rows < self._buffer + size:
                continue
            table = pa.Table.from_batches(pool, schema=batch.schema).combine_chunks()
            pool = []
            if self._shuffle:
                give = (rows - self._buffer) // size * size
                order = rng.permutation(rows)
                out = _take_rows(table, order[:give])
                rest = _take_rows(table, order[give:])
            else:
                give = rows // size * size
                out = table.slice(0, give).combine_chunks()
                rest = table.slice(give).combine_chunks()
            del table
            pool = rest.to_batches() if rest.num_rows else []
            rows = rest.num_rows
            del rest
            yield from self._pieces(out, size)
            del out
            _release_memory()
        if rows:
            table = pa.Table.from_batches(pool).combine_chunks()
            pool = []
            if self._shuffle:
                table = _take_rows(table, rng.permutation(rows))
            yield from self._pieces(table.combine_chunks(), size)

    def _pieces(self, table: "pa.Table", size: int) -> Iterator["pa.RecordBatch"]:
        for piece in table.to_batches(max_chunksize=size):
            self.positions += piece.num_rows
            yield piece

    def numpy(self) -> Iterator[dict[str, Any]]:
        """The same batches as dicts of NumPy arrays (see :meth:`Archive.numpy`)."""
        for batch in self:
            yield _numpy(batch)

    def __repr__(self) -> str:
        i, n = self._worker
        return f"PositionIterator({self._archive.path!r}, worker {i} of {n}, batch_size {self._batch_size})"


class TrainingArchive:
    """An archive of engine training data, made by ``compress`` from a
    Stockfish ``.binpack`` (``decompress`` gives the binpack back byte for
    byte).

    ``len(archive)`` positions in ``archive.blocks`` blocks (the binpack's
    chunks); ``read_block(b)`` decodes one block to a ``pyarrow.RecordBatch``
    of training rows, iteration reads them in order, and ``numpy(b)`` gives
    the same columns as NumPy arrays (``board`` as an ``(n, 64)`` array).

    Columns: ``board`` (64 pieces a position, squares a1 = 0 … h8 = 63;
    0 empty, 1–6 white pawn, knight, bishop, rook, queen, king, 7–12 black),
    ``turn`` (0 white, 1 black), ``castling`` (bits: white short, white
    long, black short, black long), ``ep`` (the en-passant square, 64 for
    none), ``rule50``, ``ply``, ``score`` (centipawns, side to move),
    ``result`` (1, 0, -1, side to move), and the move played: ``from``,
    ``to`` (the rook's square for castling, as binpack has it) and
    ``promotion`` (2 knight … 5 queen, else 0).
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self._a = _native.TrainingArchive(os.fspath(path))

    def __len__(self) -> int:
        return len(self._a)

    @property
    def blocks(self) -> int:
        """The number of blocks."""
        return self._a.blocks

    def read_block(self, block: int) -> "pa.RecordBatch":
        """The training rows of block ``block`` (from 0; negative from the
        end), decoded with the GIL released."""
        return self._a.read_block(block)

    def __iter__(self) -> Iterator["pa.RecordBatch"]:
        for b in range(self.blocks):
            yield self.read_block(b)

    def shuffled(
        self, seed: int | None = None, window: int = 8, batch_size: int = 8192
    ) -> Iterator["pa.RecordBatch"]:
        """Every row once, in a random order, as batches of ``batch_size``
        rows: the blocks in a random order, ``window`` blocks at a time
        decoded and their rows shuffled together (a trainer's shuffle
        buffer: rows of one chain, which follow each other in the archive,
        are spread over ``window`` blocks' worth of rows). The same
        ``seed`` gives the same order."""
        import numpy as np
        import pyarrow as pa

        if window < 1 or batch_size < 1:
            raise ValueError("window and batch_size must be at least 1")
        rng = np.random.default_rng(seed)
        order = rng.permutation(self.blocks)
        for at in range(0, len(order), window):
            table = pa.Table.from_batches([self.read_block(int(b)) for b in order[at : at + window]])
            table = table.take(pa.array(rng.permutation(table.num_rows)))
            yield from table.combine_chunks().to_batches(max_chunksize=batch_size)

    def plain(self, block: int) -> str:
        """The positions of block ``block`` as nnue-pytorch ``.plain`` text."""
        return self._a.plain(block)

    def viriformat(self, block: int) -> bytes:
        """The chains of block ``block`` as viriformat games (the viridithas
        engine's training data: White's scores and results); the bytes they
        were made from for an archive of viriformat."""
        return self._a.viriformat(block)

    def marlinformat(self, block: int) -> bytes:
        """The positions of block ``block`` as 32-byte marlinformat records."""
        return self._a.marlinformat(block)

    def numpy(self, block: int) -> dict[str, Any]:
        """The rows of block ``block`` as NumPy arrays, without copies."""
        return _numpy(self.read_block(block))

    def __repr__(self) -> str:
        return repr(self._a)


def to_parquet(src: str | os.PathLike[str], out: str | os.PathLike[str], **options: Any) -> dict[str, Any]:
    """Writes the games of an archive or PGN file as Parquet with chesspack
    moves: :func:`chesspack.parquet.to_parquet`, where the layout, the
    options and the SQL recipes are."""
    from .parquet import to_parquet as write

    return write(src, out, **options)
