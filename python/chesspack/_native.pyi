"""Type stubs of the native module (Rust, PyO3). Use the wrappers in
``chesspack`` (they take python-chess objects and Python lists too)."""

from typing import Any, Callable, Optional

import pyarrow as pa

__version__: str

class ChesspackError(ValueError): ...
class DecodeError(ChesspackError): ...
class IllegalMove(ChesspackError): ...
class InvalidPosition(ChesspackError): ...
class UnknownCodec(ChesspackError): ...

def encode_game(
    moves: str | list[str],
    codec: str = "model",
    start: Optional[str] = None,
    tags: Optional[list[tuple[str, str]]] = None,
) -> bytes: ...
def decode_game(
    data: bytes,
    codec: Optional[str] = None,
    start: Optional[str] = None,
    uci: bool = False,
    tags: Optional[list[tuple[str, str]]] = None,
) -> list[str]: ...
def record_codec(data: bytes) -> str: ...
def encode_position(fen: str, codec: str = "position-model") -> bytes: ...
def decode_position(data: bytes, codec: Optional[str] = None) -> str: ...
def codecs() -> tuple[list[str], list[str]]: ...
def classify_opening(moves: str | list[str], start: Optional[str] = None) -> Optional[tuple[str, str, int]]: ...
def encode_games(
    games: Any,
    codec: str = "model",
    start: Any = None,
    threads: Optional[int] = None,
    tags: Optional[list[tuple[str, Any]]] = None,
    clocks: Any = None,
    clock_unit: str = "s",
) -> tuple[pa.Array | pa.ChunkedArray, list[tuple[int, str]]]: ...
def decode_games(
    records: Any,
    codec: Optional[str] = None,
    start: Any = None,
    output: str = "san",
    threads: Optional[int] = None,
    tags: Optional[list[tuple[str, Any]]] = None,
    clocks: Any = None,
    clock_unit: str = "s",
) -> tuple[pa.Array | pa.ChunkedArray, list[tuple[int, str]]]: ...
def compress(
    src: str,
    dst: str,
    codec: Optional[str] = None,
    threads: Optional[int] = None,
    level: Optional[int] = None,
    block_games: Optional[int] = None,
    overwrite: bool = False,
    progress: Optional[Callable[[int, int], None]] = None,
    derive_eco: bool = False,
    no_index: bool = False,
) -> dict[str, Any]: ...
def decompress(
    src: str,
    dst: str,
    threads: Optional[int] = None,
    overwrite: bool = False,
    progress: Optional[Callable[[int, int], None]] = None,
) -> int: ...
def verify(src: str, threads: Optional[int] = None) -> dict[str, Any]: ...
def empty_rows(pgn: bool = False) -> pa.RecordBatch: ...
def split_pgn(src: str, dst_dir: str, games: int, prefix: str = "part") -> list[str]: ...

class Archive:
    def __init__(self, path: str, recover: bool = False, file: object = None) -> None: ...
    def __len__(self) -> int: ...
    @property
    def path(self) -> str: ...
    @property
    def codec(self) -> str: ...
    @property
    def version(self) -> int: ...
    @property
    def model_hash(self) -> int: ...
    @property
    def index_error(self) -> Optional[str]: ...
    def blocks(self) -> list[tuple[int, int, int, int, int]]: ...
    def game_bytes(self, i: int) -> bytes: ...
    def game_text(self, i: int) -> str: ...
    def tags(self, i: int) -> list[tuple[str, str]]: ...
    def block_games(self, block: int) -> list[str]: ...
    def find(
        self,
        fen: str | None = None,
        moves: str | None = None,
        sub_fen: list[str] = ...,
        material: str | None = None,
        imbalance: str | None = None,
        white: str | None = None,
        black: str | None = None,
        player: str | None = None,
        min_elo: int | None = None,
        max_elo: int | None = None,
        result: str | None = None,
        from_date: str | None = None,
        to_date: str | None = None,
        event: str | None = None,
        eco: str | None = None,
        speed: str | None = None,
        threads: int | None = None,
    ) -> tuple[pa.RecordBatch, dict[str, Any]]: ...
    def explore(
        self,
        fen: str | None = None,
        moves: str | None = None,
        white: str | None = None,
        black: str | None = None,
        player: str | None = None,
        min_elo: int | None = None,
        max_elo: int | None = None,
        result: str | None = None,
        from_date: str | None = None,
        to_date: str | None = None,
        event: str | None = None,
        eco: str | None = None,
        speed: str | None = None,
        threads: int | None = None,
    ) -> tuple[pa.RecordBatch, dict[str, Any]]: ...
    def read_block(self, block: int, pgn: bool = False) -> pa.RecordBatch: ...

class TrainingArchive:
    def __init__(self, path: str) -> None: ...
    def __len__(self) -> int: ...
    @property
    def blocks(self) -> int: ...
    def read_block(self, block: int) -> pa.RecordBatch: ...
    def plain(self, block: int) -> str: ...
