#!/usr/bin/env python3
"""How small a search section's contents could be coded: each column's
bytes as stored (zstd -19 a MiB at a time), as zstd -19 packs it whole,
and an estimate of what a model would code it in, against the budget of
issue 68 (the section at 0.75 of the archive's other bytes).

    scripts/section_floor.py ARCHIVE.chpk [--quick] [--dump DIR]

The estimates are generous (lower than a coder would reach), so that a
total above the budget says no coding of these contents gets under it:

- the games' nodes, the stretches' nodes and the next moves: the order-0
  entropy of their values (a coder would also need the table of counts);
- the change codes, early and later: the static order-3 entropy of each
  game's sequence (the model's own cost, 270,000 contexts on master games,
  not counted), and the adaptive order-2 model's cost as a coder would
  reach it (`--quick` leaves that out: three minutes in Python);
- the pawns' files: the order-0 entropy of the first files and of the
  others' XORs;
- the ratings: each player's rating as "the same as this player's last"
  or its value, packed by zstd; the players: a move-to-front list of the
  names, its ranks and the new names' numbers packed by zstd (half of
  both counted a side);
- the plies of material: the order-0 entropy of the steps of each of
  their seven streams (by the change of material before);
- the other columns as zstd packs them whole.

It also times unpacking the change codes' frames as they are stored (the
best of five, one thread), which a query off the tree does now.

It reads the section's directory and frames (docs/format.md, *Search
section*) and needs the `zstandard` package. `--dump DIR` also writes
each column's raw bytes to DIR/N.bin (N: its number), which
scripts/change_codes_model.rs reads: a coder of the change codes that
knows each game's state, its bytes and its decoding time.
"""

import argparse
import collections
import io
import math
import os
import struct
import sys
import time

import zstandard

NAMES = [
    "node_moves", "node_children", "node_changes", "flags", "exits",
    "exit_moves", "results", "speed", "white_elo", "black_elo", "dates",
    "re_counts", "re_plies", "re_nodes", "re_ends", "re_next", "changes",
    "start_states", "later_changes", "material_plies", "pawn_file_counts",
    "pawn_files", "white", "black", "event", "eco", "opening", "names",
] + [f"squares{i}" for i in range(12)]

# What each part of the section is for (docs/search.md, *What 0.75× of the
# archive would take*).
PARTS = {
    "tree": ["node_moves", "node_children", "node_changes"],
    "games on the tree": ["flags", "exits", "exit_moves"],
    "numbers (explorer, filters)": ["results", "speed", "white_elo", "black_elo", "dates"],
    "stretches back on the tree": ["re_counts", "re_plies", "re_nodes", "re_ends", "re_next"],
    "change codes": ["changes", "start_states", "later_changes"],
    "plies of material": ["material_plies"],
    "pawns' files": ["pawn_file_counts", "pawn_files"],
    "names (filters, rows)": ["white", "black", "event", "eco", "opening", "names"],
}


def varint_at(b, at):
    """The varint at `at` of `b` and where the next byte is."""
    x = shift = 0
    while True:
        y = b[at]
        at += 1
        x |= (y & 127) << shift
        shift += 7
        if y < 128:
            return x, at


def columns(path):
    """The archive's bytes before its section, the section's games, each
    column's stored bytes and its raw bytes."""
    d = open(path, "rb").read()
    at = d.rfind(b"CPKS")
    if at < 0:
        sys.exit(f"{path}: no search section")
    p = at + 5

    def varint():
        nonlocal p
        x, p = varint_at(d, p)
        return x

    games = varint()
    varint()  # nodes
    lengths = [(varint(), varint()) for _ in NAMES]
    p += 4 * 7 + 4
    out, kept = [], []
    for raw, stored in lengths:
        b = d[p:p + stored]
        p += stored
        kept.append(b)
        if raw != stored:
            b = unpack(b)
        if len(b) != raw:
            sys.exit(f"{path}: a column does not unpack to its length")
        out.append(b)
    return at, games, kept, out


def unpack(frames):
    return zstandard.ZstdDecompressor().stream_reader(
        io.BytesIO(frames), read_across_frames=True).read()


def h0(values):
    n = len(values)
    return -sum(m * math.log2(m / n) for m in collections.Counter(values).values()) / 8


def unplanes(b, width):
    k = len(b) // width
    return [sum(b[i + j * k] << (8 * j) for j in range(width)) for i in range(k)]


def u16(b):
    return list(struct.unpack(f"<{len(b) // 2}H", b))


def varints(b):
    out, at = [], 0
    while at < len(b):
        x, at = varint_at(b, at)
        out.append(x)
    return out


def sequences(b):
    out, cur = [], []
    for x in b:
        if x == 0:
            out.append(cur)
            cur = []
        else:
            cur.append(x)
    return out


def static_order(seqs, order):
    counts = collections.defaultdict(collections.Counter)
    for s in seqs:
        ctx = (0,) * order
        for x in s + [0]:
            counts[ctx][x] += 1
            ctx = (ctx + (x,))[1:]
    bits = 0.0
    for c in counts.values():
        t = sum(c.values())
        bits -= sum(m * math.log2(m / t) for m in c.values())
    return bits / 8


def adaptive_order2(seqs, alpha=0.4):
    """An order-2 model blended down to order 0, learning as it codes."""
    order = 2
    cnts = [collections.defaultdict(collections.Counter) for _ in range(order + 1)]
    tots = [collections.Counter() for _ in range(order + 1)]
    bits = 0.0
    for s in seqs:
        hist = [0, 0]
        for x in s + [0]:
            p = 1 / 256
            ctxs = [tuple(hist[len(hist) - o:]) if o else () for o in range(order + 1)]
            for o, ctx in enumerate(ctxs):
                t, m, k = tots[o][ctx], cnts[o][ctx][x], len(cnts[o][ctx])
                esc = max(1, k) * alpha + 0.5
                p = (m + esc * p) / (t + esc)
            bits -= math.log2(p)
            for o, ctx in enumerate(ctxs):
                tots[o][ctx] += 1
                cnts[o][ctx][x] += 1
            hist.append(x)
    return bits / 8


def timed(f, *args):
    t = time.perf_counter()
    f(*args)
    return time.perf_counter() - t


def zstd(b):
    return len(zstandard.ZstdCompressor(level=19).compress(bytes(b))) if b else 0


def players_and_ratings(col):
    """zstd of the players as move-to-front ranks and new names, and of
    each rating as "this player's last" (1) or its value."""
    u32 = lambda b: list(struct.unpack(f"<{len(b) // 4}I", b))
    white, black = u32(col["white"]), u32(col["black"])
    elos = [u16(col["white_elo"]), u16(col["black_elo"])]
    last, same = {}, [[], []]
    for i in range(len(white)):
        for side, pid in enumerate((white[i], black[i])):
            e = elos[side][i]
            same[side].append(1 if e and e == last.get(pid) else (2 if e == 1 else e))
            if e:
                last[pid] = e
    ratings = [zstd(b"".join(x.to_bytes(2, "little") for x in s)) for s in same]
    order, ranks, new = [], bytearray(), bytearray()
    for pid in (x for pair in zip(white, black) for x in pair):
        try:
            i = order.index(pid)
            order.pop(i)
            r = i + 1
        except ValueError:
            r = 0
            new += pid.to_bytes(4, "little")
        order.insert(0, pid)
        del order[4000:]
        while r >= 128:
            ranks.append(r & 127 | 128)
            r >>= 7
        ranks.append(r)
    players = zstd(ranks) + zstd(new)
    return ratings, players


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("archive")
    ap.add_argument("--quick", action="store_true", help="no adaptive model of the change codes")
    ap.add_argument("--dump", metavar="DIR", help="write each column's raw bytes to DIR/N.bin")
    a = ap.parse_args()
    archive, games, frames, c = columns(a.archive)
    if a.dump:
        os.makedirs(a.dump, exist_ok=True)
        for i, b in enumerate(c):
            with open(os.path.join(a.dump, f"{i}.bin"), "wb") as f:
                f.write(b)
    kept = {n: len(f) for n, f in zip(NAMES, frames)}
    whole = {n: zstd(c[i]) for i, n in enumerate(NAMES)}
    est = dict(whole)
    col = {n: c[i] for i, n in enumerate(NAMES)}
    est["exits"] = h0(unplanes(col["exits"], 4))
    est["exit_moves"] = h0(u16(col["exit_moves"]))
    est["re_nodes"] = h0(unplanes(col["re_nodes"], 4))
    est["re_next"] = h0(u16(col["re_next"]))
    for n in ("re_counts", "re_plies", "re_ends"):
        est[n] = h0(varints(col[n]))
    early, later = sequences(col["changes"]), sequences(col["later_changes"])
    est["changes"], est["later_changes"] = static_order(early, 3), static_order(later, 3)
    firsts = sum(1 for x in varints(col["pawn_file_counts"]) if x)
    pf = col["pawn_files"]
    est["pawn_files"] = h0(u16(pf[:2 * firsts])) + h0(u16(pf[2 * firsts:]))
    # The plies of material: the seven streams' lengths, then the streams.
    mp = col["material_plies"]
    lengths, at = [], 0
    for _ in range(7):
        n, at = varint_at(mp, at)
        lengths.append(n)
    est["material_plies"] = 0
    for n in lengths:
        est["material_plies"] += h0(varints(mp[at:at + n])) if n else 0
        at += n
    (est["white_elo"], est["black_elo"]), players = players_and_ratings(col)
    est["white"] = est["black"] = players / 2
    est = {n: min(whole[n], est[n]) for n in NAMES}
    budget = 0.75 * archive
    print(f"archive (without its section) {archive:,} bytes, {games:,} games; 0.75x = {budget:,.0f}")
    print(f"{'part':30} {'stored':>12} {'zstd -19':>12} {'floor':>12}")
    for part, names in PARTS.items():
        k = sum(kept[n] for n in names)
        s = sum(whole[n] for n in names)
        e = sum(est[n] for n in names)
        print(f"{part:30} {k:12,} {s:12,} {e:12,.0f}")
    k, s, e = sum(kept.values()), sum(whole.values()), sum(est.values())
    print(f"{'section':30} {k:12,} {s:12,} {e:12,.0f}")
    print(f"{'against the archive':30} {k / archive:12.3f} {s / archive:12.3f} {e / archive:12.3f}")
    for n in ("changes", "later_changes"):
        f = frames[NAMES.index(n)]
        best = min(timed(unpack, f) for _ in range(5))
        print(f"{n}: {len(f):,} bytes stored, unpacked in {best * 1e3:.1f} ms (zstd, one thread)")
    names = sum(est[n] for n in PARTS["names (filters, rows)"])
    print(f"floor without the names: {e - names:,.0f} ({(e - names) / archive:.3f}x)")
    if not a.quick:
        adaptive = adaptive_order2(early) + adaptive_order2(later)
        floor = est["changes"] + est["later_changes"]
        print(f"change codes by an adaptive order-2 model: {adaptive:,.0f} "
              f"(their floor above: {floor:,.0f}); the floor with it "
              f"{(e - floor + adaptive) / archive:.3f}x, without the names "
              f"{(e - floor + adaptive - names) / archive:.3f}x")


if __name__ == "__main__":
    main()
