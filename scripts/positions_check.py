#!/usr/bin/env python3
"""Checks `Archive.positions` against python-chess (issue 59): every row of
every held-out game of a file, as python-chess replays the same game.

    python3 scripts/positions_check.py FILE.pgn[.zst] [CHESSPACK] [--all]

The file is compressed with the CLI (`--codec fast`; default
target/release/chesspack) into a temporary archive. Its held-out games
(`chesspack::holdout`: FNV-1a of the start FEN and the UCI moves divisible
by 20; `--all`: every game) are read back as text from the archive,
replayed in python-chess, and each position's row compared column by
column: board, turn, castling, en passant (where a capture is legal),
rule50, ply, the move (from, to with castling as the rook's square,
promotion, UCI), the FEN, result, ratings, time control, the clock before
the move and the evaluation of the position. Prints the games and rows
compared, the first differences, the games skipped (stored verbatim) and
the time python-chess took against chesspack's rows for the same games.
Needs python-chess, pyarrow and the chesspack package.
"""

from __future__ import annotations

import io
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import chess
import chess.pgn

import chesspack

COLUMNS = chesspack.POSITION_COLUMNS + ["uci", "fen"]


def fnv1a(data: bytes) -> int:
    """64-bit FNV-1a, as `chesspack::hash::fnv1a`."""
    h = 0xCBF29CE484222325
    for b in data:
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def held_out(start_fen: str, ucis: list[str]) -> bool:
    """Whether `chesspack::holdout` holds the game out."""
    key = " ".join([start_fen, *ucis]) if ucis else start_fen
    return fnv1a(key.encode()) % 20 == 0


def _time_control(tag: str | None) -> tuple[int | None, int | None]:
    if tag is None:
        return None, None
    base, _, inc = tag.strip().partition("+")
    try:
        return int(base), int(inc or "0")
    except ValueError:
        return None, None


def _number(tag: str | None) -> int | None:
    try:
        return int(tag.strip()) if tag is not None else None
    except ValueError:
        return None


def board_codes(board: chess.Board) -> list[int]:
    """The 64 piece codes of a position's `board` column (a1 first; 0
    empty, 1-6 White's pawn to king, 7-12 Black's)."""
    squares = [0] * 64
    for sq, piece in board.piece_map().items():
        squares[sq] = piece.piece_type + (0 if piece.color == chess.WHITE else 6)
    return squares


def reference_rows(game: chess.pgn.Game, number: int) -> list[dict[str, Any]]:
    """The rows of `game` (game `number` of its archive) as python-chess
    gives them, with the same names and codes as `Archive.positions`."""
    board = game.board()
    nodes = list(game.mainline())
    headers = game.headers
    white_result = {"1-0": 1, "0-1": -1, "1/2-1/2": 0}.get(headers.get("Result", "*"))
    base, increment = _time_control(headers.get("TimeControl"))
    clocks = [n.clock() for n in nodes]
    any_clock = any(c is not None for c in clocks)
    rows = []
    for i, node in enumerate(nodes):
        move = node.move
        squares = board_codes(board)
        castling = 0
        for bit, (color, king_side) in enumerate(
            [(chess.WHITE, True), (chess.WHITE, False), (chess.BLACK, True), (chess.BLACK, False)]
        ):
            has = board.has_kingside_castling_rights if king_side else board.has_queenside_castling_rights
            castling |= int(has(color)) << bit
        if i >= 2:
            clock = clocks[i - 2]
        else:
            clock = float(base) if any_clock and base is not None else None
        ev = nodes[i - 1].eval() if i >= 1 else None
        to = board._to_chess960(move).to_square if board.is_castling(move) else move.to_square
        turn_white = board.turn == chess.WHITE
        rows.append(
            {
                "board": squares,
                "turn": 0 if turn_white else 1,
                "castling": castling,
                "ep": board.ep_square if board.has_legal_en_passant() else 64,
                "rule50": board.halfmove_clock,
                "ply": board.ply(),
                "from": move.from_square,
                "to": to,
                "promotion": move.promotion or 0,
                "uci": board.uci(move),
                "fen": board.fen(),
                "game": number,
                "result": None if white_result is None else (white_result if turn_white else -white_result),
                "WhiteElo": _number(headers.get("WhiteElo")),
                "BlackElo": _number(headers.get("BlackElo")),
                "base": base,
                "increment": increment,
                "clock": clock,
                "eval": ev.white().score() if ev is not None else None,
                "mate": ev.white().mate() if ev is not None and ev.white().is_mate() else None,
            }
        )
        board.push(move)
    return rows


def differences(ours: list[dict[str, Any]], theirs: list[dict[str, Any]]) -> list[str]:
    """What differs between two lists of rows (empty when they agree)."""
    if len(ours) != len(theirs):
        return [f"{len(ours)} rows against python-chess's {len(theirs)}"]
    out = []
    for i, (a, b) in enumerate(zip(ours, theirs)):
        for k, v in b.items():
            w = a.get(k)
            same = (w is None) == (v is None) and (
                w is None or (abs(w - v) < 1e-3 if k == "clock" else w == v)
            )
            if not same:
                out.append(f"row {i} (ply {b['ply']}) {k}: {w!r}, python-chess {v!r}")
    return out


def check_archive(archive: chesspack.Archive, every: bool = False, limit: int = 5) -> dict[str, Any]:
    """Compares the rows of the archive's held-out games (every game with
    `every`) with python-chess's; returns the counts, the first `limit`
    differences and the seconds each side took for those games."""
    report: dict[str, Any] = {"games": 0, "rows": 0, "different": 0, "skipped": 0, "examples": []}
    ours_seconds = theirs_seconds = 0.0
    for b in range(len(archive.blocks())):
        skipped: list[int] = []
        t = time.perf_counter()
        batch = archive.positions(b, COLUMNS, skipped)
        ours_seconds += time.perf_counter() - t
        table = batch.to_pylist()
        report["skipped"] += len(skipped)
        by_game: dict[int, list[dict[str, Any]]] = {}
        for row in table:
            by_game.setdefault(row["game"], []).append(row)
        for g, rows in by_game.items():
            if not every and not held_out(rows[0]["fen"], [r["uci"] for r in rows]):
                continue
            t = time.perf_counter()
            game = chess.pgn.read_game(io.StringIO(archive[g]))
            theirs = reference_rows(game, g)
            theirs_seconds += time.perf_counter() - t
            report["games"] += 1
            report["rows"] += len(theirs)
            diff = differences(rows, theirs)
            if diff:
                report["different"] += 1
                if len(report["examples"]) < limit:
                    report["examples"].append((g, diff[:3]))
    report["chesspack_seconds_all_rows"] = round(ours_seconds, 3)
    report["python_chess_seconds"] = round(theirs_seconds, 3)
    return report


def main() -> int:
    args = [a for a in sys.argv[1:] if a != "--all"]
    if not args:
        print(__doc__)
        return 2
    src = Path(args[0])
    cli = args[1] if len(args) > 1 else "target/release/chesspack"
    with tempfile.TemporaryDirectory() as d:
        out = Path(d) / "a.chpk"
        subprocess.run([cli, "compress", "-q", "--codec", "fast", "-o", str(out), str(src)], check=True)
        report = check_archive(chesspack.Archive(out), every="--all" in sys.argv)
    print(f"{src.name}: {report['games']} games, {report['rows']} rows compared with python-chess; "
          f"{report['different']} games differ; {report['skipped']} games skipped (stored verbatim)")
    print(f"  python-chess took {report['python_chess_seconds']} s for those games; "
          f"chesspack {report['chesspack_seconds_all_rows']} s for the rows of every game (with uci and fen)")
    for g, diff in report["examples"]:
        print(f"  game {g}: " + "; ".join(diff))
    return 1 if report["different"] else 0


if __name__ == "__main__":
    sys.exit(main())
