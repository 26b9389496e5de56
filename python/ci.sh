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

echo "== python: cargo fmt and clippy of the extension"
(cd python && cargo fmt -- --check && cargo clippy --release --locked --all-targets -- -D warnings)

echo "== python: virtual environment and package"
venv="$root/target/py-ci"
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
fi
"$venv/bin/python" -m pip install -q --upgrade pip
"$venv/bin/python" -m pip install -q "./python[test,spark]" zstandard
"$venv/bin/python" -c "import chesspack; print('chesspack', chesspack.__version__)"

echo "== python: Java for Spark"
if ! command -v java >/dev/null 2>&1; then
    if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openjdk-17-jre-headless >/dev/null \
            || echo "python: could not install Java; the Spark tests will be skipped"
    else
        echo "python: no Java and no apt-get as root; the Spark tests will be skipped"
    fi
fi
command -v java >/dev/null 2>&1 && java -version 2>&1 | head -1

echo "== python: pytest (package, batches, archives, doctests)"
"$venv/bin/python" -m pytest -q -p no:cacheprovider --rootdir "$root/python" --doctest-modules \
    "$root/python/tests" --ignore "$root/python/tests/test_spark.py" --pyargs chesspack

echo "== python: Spark tests (local[2])"
if command -v java >/dev/null 2>&1; then
    "$venv/bin/python" -m pytest -q -p no:cacheprovider --rootdir "$root/python" "$root/python/tests/test_spark.py"
else
    echo "python: SKIPPED the Spark tests: no Java (Spark needs Java 17 or 21; apt-get install openjdk-17-jre-headless)"
fi
