#!/usr/bin/env python3
"""Issue 68's benchmark: `chesspack find` beside Scoutfish on the same games.

    scripts/search_bench.py --pgn games.pgn --archive games.chpk \
        --scoutfish /tmp/sf/scoutfish/src/scoutfish [--python-chess] [--threads 1 2]

The PGN must be plain text (Scoutfish reads it); `scoutfish make` is run
on it when its .scout index is missing. Queries, drawn with a fixed seed
from the archive's own games (`chesspack get`): 100 positions (the start,
positions of real games from ply 1 to the end, one that no game reaches),
20 materials and 20 sub-FENs. For each query: the set of games of
`chesspack find --json` against Scoutfish's (a position is Scoutfish's
full-board `sub-fen` with its `material` and `stm`; castling and en
passant rights do not count there, so a difference there is listed) and, with --python-chess,
against python-chess replaying every game; and the times of both (wall
clock, one process a query, index loading included), median and slowest.
Writes a JSON report to stdout and a table to stderr.
"""

import argparse
import bisect
import io
import json
import os
import random
import statistics
import subprocess
import sys
import time

import chess
import chess.pgn
import chess.polyglot


def run(cmd, stdin=None):
    t = time.perf_counter()
    p = subprocess.run(cmd, input=stdin, capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"{cmd}: {p.stderr}")
    return p.stdout, time.perf_counter() - t


def game_offsets(pgn):
    """Offsets of each game's first tag: a `[` line after a line that is
    no tag, or after a blank line (a game with tags and no moves is
    followed by the next game's tags after a blank line)."""
    offsets = []
    prev_tag = False
    ofs = 0
    with open(pgn, "rb") as f:
        for line in f:
            is_tag = line.startswith(b"[")
            if is_tag and not prev_tag:
                offsets.append(ofs)
            prev_tag = is_tag
            ofs += len(line)
    return offsets


def game_at(offsets, ofs):
    """The number (from 1) of the game that Scoutfish's offset `ofs` points
    at: a line break before the game (any blank lines between games
    included), or the game's own first byte (the file's start)."""
    i = bisect.bisect_right(offsets, ofs)
    return i if i > 0 and offsets[i - 1] == ofs else i + 1


def material(board):
    s = ""
    for color in (chess.WHITE, chess.BLACK):
        s += "K"
        for p in (chess.QUEEN, chess.ROOK, chess.BISHOP, chess.KNIGHT, chess.PAWN):
            s += chess.piece_symbol(p).upper() * len(board.pieces(p, color))
    return s


def sub_fen(board, squares):
    b = chess.Board(None)
    for sq in squares:
        b.set_piece_at(sq, board.piece_at(sq))
    return b.board_fen()


def game_boards(cp, archive, number):
    """The boards of game `number` of `archive` from its start to its end
    (`chesspack get`, replayed by python-chess); None for a game that
    does not read or starts from a FEN."""
    text, _ = run([cp, "get", archive, str(number)])
    game = chess.pgn.read_game(io.StringIO(text))
    if game is None or game.headers.get("FEN"):
        return None
    board = game.board()
    boards = [board.copy()]
    for m in game.mainline_moves():
        board.push(m)
        boards.append(board.copy())
    return boards


def queries(cp, archive, games, seed):
    rng = random.Random(seed)
    positions, materials, subs = [chess.Board()], [], []
    while len(positions) < 99 or len(materials) < 20 or len(subs) < 20:
        n = rng.randrange(1, games + 1)
        boards = game_boards(cp, archive, n)
        if boards is None or len(boards) < 2:
            continue
        kind = len(positions) % 4
        if kind == 0:
            ply = rng.randrange(1, min(len(boards), 12))
        elif kind == 1:
            ply = rng.randrange(min(10, len(boards) - 1), min(len(boards), 31))
        else:
            ply = rng.randrange(1, len(boards))
        if len(positions) < 99:
            positions.append(boards[ply])
        late = boards[rng.randrange(len(boards) // 2, len(boards))]
        if len(materials) < 20:
            materials.append(material(late))
        if len(subs) < 20:
            pieces = list(late.piece_map())
            rng.shuffle(pieces)
            subs.append(sub_fen(late, pieces[: rng.choice((2, 3, 4))]))
    # A position no game reaches.
    positions.append(chess.Board("8/8/3k4/8/8/3K4/8/R6R w - - 0 1"))
    return positions, materials, subs


def chesspack_find(cp, archive, args, threads):
    out, t = run([cp, "find", archive, "--json", "-T", str(threads)] + args)
    return {json.loads(l)["game"]: json.loads(l)["ply"] for l in out.splitlines()}, t


def scout(sf, scout_file, offsets, rule, threads):
    cmd = f"setoption name threads value {threads}\nscout {scout_file} {json.dumps(rule)}\nquit\n"
    out, t = run([sf], stdin=cmd)
    start = out.index("{")
    data = json.loads(out[start : out.rindex("}") + 1])
    games = {}
    for m in data["matches"]:
        g = game_at(offsets, m["ofs"])
        games[g] = m["ply"][0]
    return games, t


# The `Variant` tags of chess games (lichess's and PGN's spellings).
CHESS = {"standard", "chess", "chess960", "chess 960", "fischerandom", "from position"}


def python_chess(pgn, positions, materials, subs):
    """First ply of every query in every game, by python-chess."""
    # A query drawn twice is answered for each time.
    keys, mats = {}, {}
    for i, b in enumerate(positions):
        keys.setdefault(chess.polyglot.zobrist_hash(b), []).append(i)
    for i, m in enumerate(materials):
        mats.setdefault(m, []).append(i)
    patterns = [chess.Board(s + " w - - 0 1") for s in subs]
    pat_maps = [p.piece_map() for p in patterns]
    hit_pos = [dict() for _ in positions]
    hit_mat = [dict() for _ in materials]
    hit_sub = [dict() for _ in subs]
    with open(pgn, encoding="utf-8", errors="replace") as f:
        number = 0
        while True:
            game = chess.pgn.read_game(f)
            if game is None:
                break
            number += 1
            if game.headers.get("Variant", "Standard").lower() not in CHESS:
                # chesspack keeps other variants' games as text and does
                # not search them (it says how many).
                continue
            board = game.board()
            ply = 0
            moves = list(game.mainline_moves())
            while True:
                for i in keys.get(chess.polyglot.zobrist_hash(board), ()):
                    if number not in hit_pos[i]:
                        hit_pos[i][number] = ply
                for j in mats.get(material(board), ()):
                    if number not in hit_mat[j]:
                        hit_mat[j][number] = ply
                for k, pm in enumerate(pat_maps):
                    if number not in hit_sub[k] and all(board.piece_at(sq) == pc for sq, pc in pm.items()):
                        hit_sub[k][number] = ply
                if ply == len(moves):
                    break
                board.push(moves[ply])
                ply += 1
    return hit_pos, hit_mat, hit_sub


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pgn", required=True)
    ap.add_argument("--archive", required=True)
    ap.add_argument("--scoutfish", required=True)
    ap.add_argument("--chesspack", default="target/release/chesspack")
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--seed", type=int, default=68)
    ap.add_argument("--python-chess", action="store_true")
    ap.add_argument("--sub-fens", type=int, default=20, help="how many of the 20 sub-FENs to time")
    a = ap.parse_args()
    scout_file = os.path.splitext(a.pgn)[0] + ".scout"
    if not os.path.exists(scout_file):
        _, t = run([a.scoutfish, "make", a.pgn])
        print(f"scoutfish make: {t:.1f} s", file=sys.stderr)
    offsets = game_offsets(a.pgn)
    positions, materials, subs = queries(a.chesspack, a.archive, len(offsets), a.seed)
    ref = python_chess(a.pgn, positions, materials, subs) if a.python_chess else None
    cases = []
    for i, b in enumerate(positions):
        # A full board is a sub-FEN: with the material too, that board
        # exactly (Scoutfish's README).
        rule = {"sub-fen": b.board_fen(), "material": material(b), "stm": "white" if b.turn else "black"}
        cases.append(("position", i, ["--fen", b.fen()], rule))
    for i, m in enumerate(materials):
        cases.append(("material", i, ["--material", m], {"material": m}))
    for i, s in enumerate(subs[: a.sub_fens]):
        cases.append(("sub-fen", i, ["--sub-fen", s], {"sub-fen": s}))
    report = {"games": len(offsets), "archive_bytes": os.path.getsize(a.archive),
              "scout_bytes": os.path.getsize(scout_file), "pgn_bytes": os.path.getsize(a.pgn),
              "queries": []}
    for kind, i, cp_args, rule in cases:
        row = {"kind": kind, "query": cp_args[1], "times": {}}
        for th in a.threads:
            got, t_cp = chesspack_find(a.chesspack, a.archive, cp_args, th)
            sf, t_sf = scout(a.scoutfish, scout_file, offsets, rule, th)
            row["times"][th] = {"chesspack": t_cp, "scoutfish": t_sf}
        row["games"] = len(got)
        # Scoutfish's full-board rule ignores castling and en passant rights.
        row["only_chesspack"] = sorted(set(got) - set(sf))[:5]
        row["only_scoutfish"] = sorted(set(sf) - set(got))[:5]
        row["same_games"] = set(got) == set(sf)
        row["same_plies"] = all(got[g] == sf[g] for g in set(got) & set(sf))
        if ref is not None:
            want = ref[("position", "material", "sub-fen").index(kind)][i]
            row["python_chess_same"] = want == got
        report["queries"].append(row)
        t = row["times"][a.threads[-1]]
        print(f"{kind} {i}: {row['games']} games, same as scoutfish {row['same_games']}, "
              f"chesspack {t['chesspack']:.2f} s, scoutfish {t['scoutfish']:.2f} s", file=sys.stderr, flush=True)
    for kind in ("position", "material", "sub-fen"):
        rows = [r for r in report["queries"] if r["kind"] == kind]
        if not rows:
            continue
        for th in a.threads:
            cp_t = [r["times"][th]["chesspack"] for r in rows]
            sf_t = [r["times"][th]["scoutfish"] for r in rows]
            line = (f"{kind:8} T={th}: chesspack median {statistics.median(cp_t)*1000:.0f} ms, slowest "
                    f"{max(cp_t)*1000:.0f} ms; scoutfish median {statistics.median(sf_t)*1000:.0f} ms, "
                    f"slowest {max(sf_t)*1000:.0f} ms")
            print(line, file=sys.stderr)
            report.setdefault("summary", []).append(line)
        same = sum(r["same_games"] for r in rows)
        line = f"{kind:8}: {same}/{len(rows)} same games as scoutfish"
        if ref is not None:
            line += f", {sum(r['python_chess_same'] for r in rows)}/{len(rows)} same games and plies as python-chess"
        print(line, file=sys.stderr)
        report["summary"].append(line)
    json.dump(report, sys.stdout, indent=1)


if __name__ == "__main__":
    main()
