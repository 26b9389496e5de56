#!/usr/bin/env python3
"""Engine self-play for chesspack's training-data archives (issue 42).

Plays Stockfish against itself at a fixed node count from random openings
and writes each position with the engine's score, the move played, the ply
and the game's result, as nnue-pytorch's `.plain` text (`fen`, `move`,
`score`, `ply`, `result`, `e` lines) and as PGN with `[%eval]` comments.
`chesspack-binpack-tools` (crates/chesspack/examples/binpack.rs) turns the
`.plain` file into a binpack with the `sfbinpack` crate.

    python3 scripts/selfplay.py --games 2000 --nodes 5000 --seed 1 \
        --plain selfplay.plain --pgn selfplay.pgn

Needs python-chess (`pip install chess`) and a `stockfish` on PATH (Debian's
package: `apt-get install stockfish`).
"""

import argparse
import random
import sys

import chess
import chess.engine
import chess.pgn

MATE = 32000


def score_of(info, turn):
    pov = info["score"].pov(turn)
    if pov.is_mate():
        m = pov.mate()
        return (MATE - 2 * abs(m)) * (1 if m > 0 else -1)
    return max(-MATE + 1000, min(MATE - 1000, pov.score()))


def play(engine, rng, nodes, max_plies):
    board = chess.Board()
    for _ in range(rng.randint(4, 9)):
        moves = list(board.legal_moves)
        if not moves:
            break
        board.push(rng.choice(moves))
    if board.is_game_over():
        return None
    start = board.copy()
    rows = []
    while not board.is_game_over() and len(rows) < max_plies:
        result = engine.play(board, chess.engine.Limit(nodes=nodes), info=chess.engine.INFO_SCORE)
        if result.move is None or "score" not in result.info:
            break
        rows.append((board.fen(), result.move, score_of(result.info, board.turn), board.ply()))
        board.push(result.move)
    outcome = board.outcome()
    winner = outcome.winner if outcome else None
    return start, board, rows, winner


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=100)
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--max-plies", type=int, default=400)
    ap.add_argument("--plain", required=True)
    ap.add_argument("--pgn", required=True)
    ap.add_argument("--engine", default="stockfish")
    a = ap.parse_args()
    rng = random.Random(a.seed)
    engine = chess.engine.SimpleEngine.popen_uci(a.engine)
    engine.configure({"Threads": 1, "Hash": 16})
    n = 0
    with open(a.plain, "w") as plain, open(a.pgn, "w") as pgn:
        while n < a.games:
            game = play(engine, rng, a.nodes, a.max_plies)
            if game is None or not game[2]:
                continue
            start, board, rows, winner = game
            for fen, move, score, ply in rows:
                turn = chess.WHITE if fen.split()[1] == "w" else chess.BLACK
                result = 0 if winner is None else (1 if winner == turn else -1)
                plain.write(f"fen {fen}\nmove {move.uci()}\nscore {score}\nply {ply}\nresult {result}\ne\n")
            g = chess.pgn.Game()
            g.headers["Event"] = "chesspack self-play"
            g.headers["Round"] = str(n + 1)
            g.headers["White"] = g.headers["Black"] = f"Stockfish {a.nodes} nodes"
            g.headers["Result"] = board.result(claim_draw=True) if board.is_game_over() else "*"
            g.setup(start)
            node = g
            for _, move, score, _ in rows:
                node = node.add_variation(move)
            print(g, file=pgn, end="\n\n")
            n += 1
            if n % 50 == 0:
                print(f"{n} games", file=sys.stderr, flush=True)
    engine.quit()


if __name__ == "__main__":
    main()
