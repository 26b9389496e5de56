#!/usr/bin/env bash
# Read speed of two builds side by side, in one run (issue 40): the move
# model's plies a second on one core (`stats --holdout --threads 1`),
# `decompress` on one and two threads (of archives written with the
# default codec and with `fast`) and listings of the tags that the
# moves give (`ECO`, `Opening`), each best of ROUNDS runs, the
# builds alternating so that a noisy machine slows both alike.
#
#   bash benches/read-speed.sh BASE_BINARY NEW_BINARY [DATA_DIR] [ROUNDS]
#
# DATA_DIR holds lichess-accounts.pgn.zst and masters-pgnmentor.pgn.zst
# (default ../shared/data/train). The archives that `decompress` reads are
# written by BASE, so that both builds read the same bytes; the listing
# reads each build's own archive (a format may store what the listing
# needs), and the script prints both archives' sizes.
set -euo pipefail
base=$1 new=$2
data=${3:-"$(dirname "$0")/../../shared/data/train"}
rounds=${4:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The first games of each file (zstd stops early: `|| true`): a lichess export with clocks (several
# blocks) and master games (one block).
zstd -dc "$data/lichess-accounts.pgn.zst" | awk '/^\[Event /{n++} n>10000{exit} {print}' > "$work/lichess.pgn" || true
zstd -dc "$data/masters-pgnmentor.pgn.zst" | awk '/^\[Event /{n++} n>2000{exit} {print}' > "$work/masters.pgn" || true

best() { sort -n | head -1; }
secs() { /usr/bin/time -f %e "$@" 2>&1 >/dev/null | tail -1; }

echo "| what | base | new | new / base |"
echo "|---|---|---|---|"
# Each file's archive with the default codec (`model`), and with `fast`
# (larger, for archives read far more often than written).
for f in lichess masters lichess.fast masters.fast; do
    pgn=$work/${f%.fast}.pgn
    codec=model
    [[ $f == *.fast ]] && codec=fast
    "$base" compress -q -f --codec "$codec" "$pgn" -o "$work/$f.chpk"
    mb=$(stat -c %s "$pgn")
    for t in 1 2; do
        declare -A s=()
        for _ in $(seq "$rounds"); do
            for b in base new; do
                bin=${!b}
                s[$b]+="$(secs "$bin" decompress -T "$t" -f "$work/$f.chpk" -o "$work/out.pgn") "
            done
        done
        sb=$(tr ' ' '\n' <<<"${s[base]}" | grep . | best)
        sn=$(tr ' ' '\n' <<<"${s[new]}" | grep . | best)
        awk -v f="${f%.fast}" -v c="$codec" -v t="$t" -v mb="$mb" -v b="$sb" -v n="$sn" 'BEGIN {
            printf "| decompress %s%s, %d thread%s, MB/s of PGN | %.1f | %.1f | %.2f |\n",
                f, (c == "fast" ? " (`fast` archive)" : ""), t, (t > 1 ? "s" : ""), mb / 1e6 / b, mb / 1e6 / n, b / n }'
    done
done
# Listing the tags that the moves give (`ECO`, `Opening`) on one thread,
# each build from its own archive.
games=$(grep -c '^\[Event ' "$work/lichess.pgn")
"$new" compress -q -f "$work/lichess.pgn" -o "$work/lichess.new.chpk"
declare -A l=()
for _ in $(seq "$rounds"); do
    for b in base new; do
        bin=${!b}
        archive=$work/lichess.chpk
        [[ $b == new ]] && archive=$work/lichess.new.chpk
        l[$b]+="$(secs env RAYON_NUM_THREADS=1 "$bin" list "$archive" --tags WhiteElo,ECO,Opening) "
    done
done
awk -v b="$(stat -c %s "$work/lichess.chpk")" -v n="$(stat -c %s "$work/lichess.new.chpk")" 'BEGIN {
    printf "| archive of the lichess games, bytes | %d | %d | %.4f |\n", b, n, n / b }'
lb=$(tr ' ' '\n' <<<"${l[base]}" | grep . | best)
ln=$(tr ' ' '\n' <<<"${l[new]}" | grep . | best)
awk -v g="$games" -v b="$lb" -v n="$ln" 'BEGIN {
    printf "| list --tags WhiteElo,ECO,Opening, one thread, games/s | %d | %d | %.2f |\n", g / b, g / n, b / n }'
# The same listing of master games, which carry an `ECO` tag alone: each
# game's first plies are decoded (BASE's archive for both).
games=$(grep -c '^\[Event ' "$work/masters.pgn")
declare -A m=()
for _ in $(seq "$rounds"); do
    for b in base new; do
        bin=${!b}
        m[$b]+="$(secs env RAYON_NUM_THREADS=1 "$bin" list "$work/masters.chpk" --tags WhiteElo,ECO,Opening) "
    done
done
mb=$(tr ' ' '\n' <<<"${m[base]}" | grep . | best)
mn=$(tr ' ' '\n' <<<"${m[new]}" | grep . | best)
awk -v g="$games" -v b="$mb" -v n="$mn" 'BEGIN {
    printf "| list --tags WhiteElo,ECO,Opening, masters, one thread, games/s | %d | %d | %.2f |\n", g / b, g / n, b / n }'
# The move model on the held-out games among the lichess file's first 20,000.
declare -A enc=() dec=()
for _ in $(seq "$rounds"); do
    for b in base new; do
        bin=${!b}
        read -r e d < <("$bin" stats --holdout --codec model --threads 1 --limit 20000 "$data/lichess-accounts.pgn.zst" 2>/dev/null |
            awk '$1 == "model" {print $7, $8}')
        [[ ${enc[$b]:-0} -lt $e ]] && enc[$b]=$e
        [[ ${dec[$b]:-0} -lt $d ]] && dec[$b]=$d
    done
done
awk -v be="${enc[base]}" -v ne="${enc[new]}" -v bd="${dec[base]}" -v nd="${dec[new]}" 'BEGIN {
    printf "| model encode, plies/s, one core | %d | %d | %.2f |\n", be, ne, ne / be
    printf "| model decode, plies/s, one core | %d | %d | %.2f |\n", bd, nd, nd / bd }'
