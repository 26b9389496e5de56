#!/usr/bin/env bash
# Runs every fuzz target for SECONDS (default 60) each, one after another,
# growing its corpus in fuzz/corpus/TARGET/ (commit what it adds: cargo test
# replays the corpora). Needs a nightly toolchain and cargo-fuzz
# (`rustup toolchain install nightly && cargo install cargo-fuzz`).
#
#   bash fuzz/run.sh [SECONDS] [TARGET...]
#
# Exit status: 0 when no target found anything; 1 otherwise (the crash
# inputs are in fuzz/artifacts/TARGET/, and the log names them).
set -uo pipefail
cd "$(dirname "$0")/.."

seconds=${1:-60}
shift || true
if ! [[ "$seconds" =~ ^[0-9]+$ ]]; then
    echo "usage: bash fuzz/run.sh [SECONDS] [TARGET...]" >&2
    exit 2
fi
if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
    echo "fuzz/run.sh: needs cargo-fuzz and a nightly toolchain:" >&2
    echo "  rustup toolchain install nightly && cargo install cargo-fuzz" >&2
    exit 2
fi
if [ $# -gt 0 ]; then
    targets=("$@")
else
    mapfile -t targets < <(ls fuzz/fuzz_targets | sed 's/\.rs$//')
fi

# zstd's optimal parser (levels 16+, and lower levels on small inputs)
# reads a local table of function pointers in ZSTD_selectBtGetAllMatches
# (zstd_opt.c), which AddressSanitizer reports as a stack use after scope
# whatever ASAN_OPTIONS say: the targets that compress run without a
# sanitizer (the library is safe Rust; panics and overflows still stop
# them), the decoders with AddressSanitizer (issue 42's fuzzing).

failed=()
for t in "${targets[@]}"; do
    mkdir -p "fuzz/corpus/$t"
    before=$(ls "fuzz/corpus/$t" | wc -l)
    echo "== $t: ${seconds}s (corpus: $before inputs)"
    sanitizer=()
    case "$t" in compress_*) sanitizer=(--sanitizer none) ;; esac
    if cargo +nightly fuzz run "${sanitizer[@]}" "$t" "fuzz/corpus/$t" -- \
        -max_total_time="$seconds" -print_final_stats=1 >"target/fuzz-$t.log" 2>&1; then
        after=$(ls "fuzz/corpus/$t" | wc -l)
        runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "target/fuzz-$t.log" | grep -o '[0-9]*$')
        echo "   ok: ${runs:-?} runs, corpus $before -> $after"
    else
        echo "   FOUND SOMETHING (log: target/fuzz-$t.log)"
        grep -E 'Test unit written|panicked|ERROR' "target/fuzz-$t.log" | head -5
        failed+=("$t")
    fi
done
if [ ${#failed[@]} -gt 0 ]; then
    echo "fuzz/run.sh: ${failed[*]} found crashes"
    exit 1
fi
echo "fuzz/run.sh: ${#targets[@]} targets, nothing found"
