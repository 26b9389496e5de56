#!/usr/bin/env python3
"""Engine games with cutechess-cli's (or TCEC's) comments, for issue 60.

Plays Debian's Stockfish against itself (two strengths) from a few random
book plies and writes PGN as cutechess-cli does: `{book}` after book moves,
`{+0.35/20 1.2s}` (score in pawns from the mover's side or `+M7`/`-M7`,
search depth, time) after each engine move, and the adjudication text
(`{White mates}`, `{Draw by 3-fold repetition}`, ...) after the last one.
With `--style tcec` each engine move gets a comment in the form of TCEC's
archives instead: `{d=12, sd=18, mt=31, tl=59969, s=612903, n=19000,
pv=e4 e5 Nf3, tb=0, h=0.3, ph=0.0, wv=0.35, R50=50, Rd=-11, Rr=-11,
mb=+0+0+0+0+0,}` (depth, selective depth, move time and time left in ms,
nodes a second, nodes, the principal variation from the position before
the move, tablebase hits, hash use, ponder hits, the score from white's
side, moves left to the fifty-move rule, draw and resign counters,
material balance). Neither cutechess-cli nor fastchess is packaged by
Debian or PyPI, so python-chess's engine module plays the games.

    python3 scripts/cutechess_games.py --games 100 --seed 1 > cutechess.pgn
    python3 scripts/cutechess_games.py --games 4 --style tcec > tcec-style.pgn

Needs python-chess (`pip install chess`) and `stockfish` on PATH (Debian:
`apt-get install stockfish`, which installs it in /usr/games).
"""

import argparse
import datetime
import random
import shutil
import sys

import chess
import chess.engine
import chess.pgn


def seconds(ms):
    """cutechess-cli's time: seconds with up to three significant digits."""
    s = ms / 1000.0
    return f"{s:.3g}"


def score_text(score):
    if score.is_mate():
        m = score.mate()
        return f"{'+' if m > 0 else '-'}M{abs(m)}"
    return f"{score.score() / 100:+.2f}"


def ending(board):
    outcome = board.outcome(claim_draw=True)
    if outcome is None:
        return None, None
    t = outcome.termination
    if t == chess.Termination.CHECKMATE:
        return outcome.result(), ("White mates" if outcome.winner else "Black mates")
    names = {
        chess.Termination.STALEMATE: "Draw by stalemate",
        chess.Termination.INSUFFICIENT_MATERIAL: "Draw by insufficient mating material",
        chess.Termination.THREEFOLD_REPETITION: "Draw by 3-fold repetition",
        chess.Termination.FIVEFOLD_REPETITION: "Draw by 3-fold repetition",
        chess.Termination.FIFTY_MOVES: "Draw by fifty moves rule",
        chess.Termination.SEVENTYFIVE_MOVES: "Draw by fifty moves rule",
    }
    return outcome.result(), names.get(t, "Draw")


def movetext(game, result):
    """The movetext as cutechess-cli writes it: `{comment}` without inner
    spaces, no `1...` after a comment, lines wrapped at 80 columns."""
    tokens = []
    board = game.board()
    for node in game.mainline():
        if board.turn == chess.WHITE:
            tokens.append(f"{board.fullmove_number}.")
        tokens.append(board.san(node.move))
        board.push(node.move)
        if node.comment:
            tokens.append("{" + node.comment + "}")
    tokens.append(result)
    lines, line = [], ""
    for t in tokens:
        if line and len(line) + 1 + len(t) > 80:
            lines.append(line)
            line = t
        else:
            line = f"{line} {t}" if line else t
    lines.append(line)
    return "\n".join(lines)


def tcec_comment(before, move, info, left, rd_rr):
    """A TCEC-style comment for `move` played in `before` (a board)."""
    pv = info.get("pv") or [move]
    board = before.copy()
    sans = []
    for m in pv:
        if not board.is_legal(m):
            break
        sans.append(board.san(m))
        board.push(m)
    after = before.copy()
    after.push(move)
    score = info.get("score")
    white = score.white() if score is not None else chess.engine.Cp(0)
    wv = f"M{abs(white.mate())}" if white.is_mate() else f"{white.score() / 100:.2f}"
    ms = int(info.get("time", 0) * 1000)
    nodes = info.get("nodes", 0)
    nps = info.get("nps", 0)
    r50 = 50 - (after.halfmove_clock + 1) // 2
    bal = ""
    for piece in [chess.PAWN, chess.KNIGHT, chess.BISHOP, chess.ROOK, chess.QUEEN]:
        d = len(after.pieces(piece, chess.WHITE)) - len(after.pieces(piece, chess.BLACK))
        bal += f"{d:+d}"
    return (
        f"d={info.get('depth', 0)}, sd={info.get('seldepth', 0)}, mt={ms}, tl={left}, "
        f"s={nps}, n={nodes}, pv={' '.join(sans)}, tb={info.get('tbhits', 0)}, "
        f"h={info.get('hashfull', 0) / 10:.1f}, ph=0.0, wv={wv}, R50={r50}, "
        f"Rd={rd_rr[0]}, Rr={rd_rr[1]}, mb={bal},"
    )


def play(
    engines, names, rng, nodes, round_no, start, style="cutechess",
    book=True, movetime=None, diverge=None, report_time=None,
):
    """One game; `diverge` (a ply, or None) is where one search gets a
    few more nodes, so that a game of deterministic engines parts from the
    others there."""
    board = chess.Board()
    game = chess.pgn.Game()
    node = game
    for _ in range(rng.randint(2, 8) if book else 0):
        moves = list(board.legal_moves)
        if not moves:
            break
        m = rng.choice(moves)
        board.push(m)
        node = node.add_variation(m)
        node.comment = "book"
    result, text = None, None
    # TCEC's clocks: 60 s and 1 s a move for each side.
    left = [60000, 60000]
    while result is None and board.ply() < 300:
        side = 0 if board.turn == chess.WHITE else 1
        engine = engines[side]
        extra = rng.randint(1, nodes[side] // 10) if board.ply() == diverge else 0
        limit = (
            chess.engine.Limit(time=movetime / 1000)
            if movetime
            else chess.engine.Limit(nodes=nodes[side] + extra)
        )
        # A new game for the engine (`ucinewgame`: its hash cleared), so
        # that a search depends on the position and its limit alone.
        res = engine.play(board, limit, info=chess.engine.INFO_ALL, game=round_no)
        info = res.info
        before = board.copy()
        board.push(res.move)
        node = node.add_variation(res.move)
        score = info.get("score")
        depth = info.get("depth", 0)
        ms = int(info.get("time", 0) * 1000)
        if report_time is not None:
            # cutechess reports the time a move took; engines stopped by a
            # fixed time mostly take just that.
            ms = report_time if rng.random() < 0.9 else report_time + rng.randint(1, 5)
        if style == "tcec":
            left[side] = left[side] - ms + 1000
            node.comment = tcec_comment(before, res.move, info, left[side], (-11, -11))
        else:
            mover = not board.turn
            pov = score.pov(mover) if score is not None else chess.engine.Cp(0)
            node.comment = f"{score_text(pov)}/{depth} {seconds(ms)}s"
        result, text = ending(board)
    if result is None:
        result, text = "1/2-1/2", "Draw by adjudication"
    if text:
        sep = " " if style == "tcec" else ", "
        node.comment += f"{sep}{text}" if node.comment else text
    h = game.headers
    h["Event"] = "chesspack engine games"
    h["Site"] = "?"
    h["Date"] = start.strftime("%Y.%m.%d")
    h["Round"] = str(round_no)
    h["White"], h["Black"] = names
    h["Result"] = result
    h["PlyCount"] = str(board.ply())
    h["TimeControl"] = "60+1" if style == "tcec" else "inf"
    h["Termination"] = "adjudication" if "adjudication" in text else "normal"
    return game


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=100)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--nodes", type=int, nargs=2, default=[20000, 8000])
    ap.add_argument("--style", choices=["cutechess", "tcec"], default="cutechess")
    # Deterministic engines without a book (as in a cutechess match with
    # no openings file): every game starts the same way and parts where a
    # search's time runs out differently, so games repeat in part.
    ap.add_argument("--no-book", action="store_true", help="no random book plies")
    ap.add_argument("--movetime", type=int, help="milliseconds a move instead of --nodes")
    ap.add_argument(
        "--diverge", type=float, default=None,
        help="share of games (with --no-book and --nodes) where one search, at a random "
        "ply, gets a few more nodes: the others repeat an earlier game",
    )
    ap.add_argument(
        "--report-time", type=int, default=None,
        help="milliseconds written as each move's time (9 moves in 10; a few more otherwise)",
    )
    args = ap.parse_args()
    path = shutil.which("stockfish") or "/usr/games/stockfish"
    rng = random.Random(args.seed)
    engines = [chess.engine.SimpleEngine.popen_uci(path) for _ in range(2)]
    start = datetime.datetime(2026, 11, 28)
    try:
        for i in range(args.games):
            # Colours alternate; names say which strength played white.
            if i % 2 == 0:
                order, nodes = engines, args.nodes
            else:
                order, nodes = engines[::-1], args.nodes[::-1]
            names = [f"Stockfish 15.1 {n} nodes" for n in nodes]
            if args.movetime:
                names = [f"Stockfish 15.1 {k}" for k in ("A", "B")[:: 1 if i % 2 == 0 else -1]]
            game = play(
                order, names, rng, nodes, i + 1, start, args.style,
                book=not args.no_book, movetime=args.movetime,
                diverge=(
                    rng.randint(0, 80)
                    if args.diverge is not None and rng.random() < args.diverge
                    else None
                ),
                report_time=args.report_time,
            )
            tags = "".join(f'[{k} "{v}"]\n' for k, v in game.headers.items())
            print(tags + "\n" + movetext(game, game.headers["Result"]), end="\n\n")
            sys.stdout.flush()
    finally:
        for e in engines:
            e.quit()


if __name__ == "__main__":
    main()
