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
