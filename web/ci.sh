#!/usr/bin/env bash
# The web page on a fresh machine: installs what it needs (the wasm32
# target, clang for zstd's C code, wasm-bindgen-cli, Debian's chromium and
# zstd, playwright-core from npm), builds the page (web/build.sh) and runs
# the browser test (web/tests/page.mjs) against the native CLI of
# target/release. The web crate is a member of the main workspace: its
# fmt, clippy and native unit tests run with the workspace's.
#
# Run from anywhere: bash web/ci.sh
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TERM_COLOR=never

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

echo "[${SECONDS}s] == web: tools"
need=()
command -v clang >/dev/null || need+=(clang lld llvm)
command -v chromium >/dev/null || need+=(chromium)
command -v zstd >/dev/null || need+=(zstd)
if ((${#need[@]})); then
    as_root apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi
rustup target list --installed | grep -qx wasm32-unknown-unknown ||
    rustup target add wasm32-unknown-unknown
version=$(sed -n 's/^wasm-bindgen = "=\(.*\)"$/\1/p' web/Cargo.toml)
if [[ "$(wasm-bindgen --version 2>/dev/null)" != "wasm-bindgen $version" ]]; then
    cargo install -q wasm-bindgen-cli --version "$version"
fi
(cd web/tests && npm ci --no-audit --no-fund --silent)

echo "[${SECONDS}s] == web: build (web/build.sh)"
bash web/build.sh

echo "[${SECONDS}s] == web: browser test (headless chromium)"
[ -x target/release/chesspack ] || cargo build --release --locked -q -p chesspack-cli
node web/tests/page.mjs
echo "[${SECONDS}s] == web: done"
