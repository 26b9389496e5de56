#!/usr/bin/env python3
"""Positions of PGN games with lichess `[%eval]` comments as nnue-pytorch
`.plain` training data (issue 42's test data from human games): each
position of the mainline whose evaluation is known (the comment after the
move that reached it; the start position's from the first eval-free
context is unknown and skipped), with the move played there, the
evaluation from the side to move in centipawns (mate in N: ±(32000 - 2N)),
the ply and the game's result from the side to move.

    python3 scripts/evals_to_plain.py games.pgn.zst out.plain --games 2000

Then `cargo run --release -p chesspack --example plain_to_binpack --
out.plain out.binpack` writes it as a binpack with `sfbinpack`.
"""

import argparse
import io
import sys

import chess
import chess.pgn

MATE = 32000


def fnv1a(data):
    h = 0xCBF29CE484222325
    for b in data:
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def held_out(game):
    """chesspack::holdout::is_held_out of the game's key: its start FEN and
    its moves in UCI."""
    key = game.board().fen() + "".join(" " + m.uci() for m in game.mainline_moves())
    return fnv1a(key.encode()) % 20 == 0


def open_text(path):
    if path.endswith(".zst"):
        import subprocess

        p = subprocess.Popen(["zstd", "-dc", path], stdout=subprocess.PIPE)
        return io.TextIOWrapper(p.stdout, encoding="utf-8", errors="replace")
    return open(path, encoding="utf-8", errors="replace")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("pgn")
    ap.add_argument("plain")
    ap.add_argument("--games", type=int, default=1000, help="games with evaluations to write")
    ap.add_argument(
        "--held-out",
        action="store_true",
        help="only the games of chesspack's held-out 5%% (chesspack::holdout), which no model saw",
    )
    a = ap.parse_args()
    text = open_text(a.pgn)
    written = positions = held = 0
    with open(a.plain, "w") as out:
        while written < a.games:
            game = chess.pgn.read_game(text)
            if game is None:
                break
            if game.headers.get("Variant", "Standard") not in ("Standard", "standard"):
                continue
            result = {"1-0": 1, "0-1": -1, "1/2-1/2": 0}.get(game.headers.get("Result"))
            if result is None:
                continue
            board = game.board()
            if a.held_out:
                if not held_out(game):
                    continue
                held += 1
            node = game
            evals = []  # (fen, move, score from the side to move, ply)
            known = None  # the evaluation of the current position, white's view
            for child in node.mainline():
                move = child.move
                if known is not None:
                    pov = known.pov(board.turn)
                    if pov.is_mate():
                        m = pov.mate()
                        score = (MATE - 2 * abs(m)) * (1 if m > 0 else -1)
                    else:
                        score = max(-MATE + 1000, min(MATE - 1000, pov.score()))
                    evals.append((board.fen(), move.uci(), score, board.ply(), board.turn))
                board.push(move)
                known = child.eval()
            if not evals:
                continue
            for fen, uci, score, ply, turn in evals:
                r = result if turn == chess.WHITE else -result
                out.write(f"fen {fen}\nmove {uci}\nscore {score}\nply {ply}\nresult {r}\ne\n")
            written += 1
            positions += len(evals)
    print(f"{written} games, {positions} positions" + (f" ({held} held-out games read)" if a.held_out else ""), file=sys.stderr)


if __name__ == "__main__":
    main()
