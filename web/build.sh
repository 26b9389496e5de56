#!/usr/bin/env bash
# Builds the page's WebAssembly into web/pkg/ (ignored by git):
#   bash web/build.sh            # then: python3 -m http.server -d web 8000
# Needs the wasm32 target, clang (zstd's C code compiled to wasm) and
# wasm-bindgen-cli of the same version as the wasm-bindgen crate;
# web/ci.sh installs all three on a fresh machine.
set -euo pipefail
cd "$(dirname "$0")"

WASM_BINDGEN_VERSION=$(sed -n 's/^wasm-bindgen = "=\(.*\)"$/\1/p' Cargo.toml)
missing=()
rustup target list --installed 2>/dev/null | grep -qx wasm32-unknown-unknown ||
    missing+=("the wasm32 target: rustup target add wasm32-unknown-unknown")
command -v clang >/dev/null ||
    missing+=("clang, to compile zstd for wasm: apt-get install clang lld")
[[ "$(wasm-bindgen --version 2>/dev/null)" == "wasm-bindgen $WASM_BINDGEN_VERSION" ]] ||
    missing+=("wasm-bindgen-cli $WASM_BINDGEN_VERSION: cargo install wasm-bindgen-cli --version $WASM_BINDGEN_VERSION")
if ((${#missing[@]})); then
    echo "web/build.sh: cannot build the page; missing:" >&2
    printf '  - %s\n' "${missing[@]}" >&2
    exit 2
fi

# zstd-sys builds its C sources with clang for wasm32.
export CC_wasm32_unknown_unknown=clang AR_wasm32_unknown_unknown=llvm-ar
command -v llvm-ar >/dev/null || export AR_wasm32_unknown_unknown=ar
cargo build --profile wasm --locked --target wasm32-unknown-unknown -p chesspack-web
wasm-bindgen --target web --no-typescript --out-dir pkg \
    ../target/wasm32-unknown-unknown/wasm/chesspack_web.wasm
cp ../samples/lichess-sample.pgn pkg/sample.pgn
ls -l pkg/*.wasm | awk '{print "web/build.sh: " $NF ", " $5 " bytes"}'
