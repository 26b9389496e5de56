"""Shared fixtures: the repository's samples, a multi-block archive of the
lichess sample, and (for the Spark tests) a local Spark session."""

from __future__ import annotations

import io
import os
import shutil
from pathlib import Path

import chess.pgn
import pytest

import chesspack

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "samples" / "lichess-sample.pgn"
PUZZLES = ROOT / "samples" / "puzzles-sample.csv"
SHARED = ROOT.parent / "shared" / "data"


def read_games(text: str) -> list[chess.pgn.Game]:
    """Every game python-chess reads from a PGN text."""
    games = []
    f = io.StringIO(text)
    while (g := chess.pgn.read_game(f)) is not None:
        games.append(g)
    return games


@pytest.fixture(scope="session")
def sample_games() -> list[chess.pgn.Game]:
    """The sample's games in standard chess or Chess960 (not King of the Hill)."""
    games = read_games(SAMPLE.read_text())
    return [g for g in games if g.headers.get("Variant", "Standard") in ("Standard", "Chess960", "From Position")]


@pytest.fixture(scope="session")
def archive_path(tmp_path_factory) -> Path:
    """The lichess sample compressed into blocks of 8 games (5 blocks)."""
    d = tmp_path_factory.mktemp("archive")
    out = d / "sample.chpk"
    chesspack.compress(SAMPLE, out, block_games=8)
    return out


@pytest.fixture(scope="session")
def decompressed(archive_path, tmp_path_factory) -> str:
    out = tmp_path_factory.mktemp("text") / "sample.pgn"
    chesspack.decompress(archive_path, out)
    return out.read_text()


def java_ok() -> bool:
    return shutil.which("java") is not None or bool(os.environ.get("JAVA_HOME"))


@pytest.fixture(scope="module")
def s3(tmp_path_factory):
    """A bucket on a local S3 server, the credentials in the environment
    (the standard AWS_* variables), and the sample's archive in it."""
    moto_server = pytest.importorskip("moto.server", reason="moto[server] is not installed (pip install ./python[test])")
    import boto3

    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0)
    server.start()
    host, port = server.get_host_and_port()
    endpoint = f"http://{host}:{port}"
    env = {
        "AWS_ENDPOINT_URL": endpoint,
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
    }
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    boto3.client("s3").create_bucket(Bucket="games")
    local = tmp_path_factory.mktemp("s3") / "sample.chpk"
    chesspack.compress(SAMPLE, local, block_games=8)
    boto3.client("s3").upload_file(str(local), "games", "month/sample.chpk")
    # A bigger archive: the sample 40 times, 64 games a block.
    pgn = local.parent / "big.pgn"
    pgn.write_text(SAMPLE.read_text() * 40)
    big = local.parent / "big.chpk"
    chesspack.compress(pgn, big, block_games=64)
    boto3.client("s3").upload_file(str(big), "games", "month/big.chpk")
    yield {"endpoint": endpoint, "local": local, "big": big, "url": "s3://games/month/sample.chpk"}
    for k, v in old.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v
    server.stop()
