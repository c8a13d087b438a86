#!/usr/bin/env bash
# Builds the web explorer into web/dist (static files: index.html, simtlab.js, simtlab_bg.wasm).
# Serve it with `python3 -m http.server -d web/dist 8080` and open http://localhost:8080
# (`?workload=NAME&scale=tiny&run` opens on a workload and runs it).
# Needs the wasm32 target and the wasm-bindgen CLI of the version Cargo.toml pins:
#   rustup target add wasm32-unknown-unknown
#   cargo install wasm-bindgen-cli --version 0.2.130
set -euo pipefail
cd "$(dirname "$0")/.."

# PROFILE=dev builds faster (a larger, slower module): for trying changes
profile="${PROFILE:-release}"
# the library as a cdylib (the native build keeps its rlib only: no extra shared library there),
# without the command line's crates (`gui` brings the plots and paper values)
cargo rustc --lib --crate-type cdylib --target wasm32-unknown-unknown --profile "$profile" --no-default-features --features gui
target="${CARGO_TARGET_DIR:-target}"
out_dir="$profile"
if [ "$profile" = dev ]; then out_dir=debug; fi # cargo writes the dev profile under debug/
rm -rf web/dist
wasm-bindgen --target web --no-typescript --out-dir web/dist --out-name simtlab \
  "$target/wasm32-unknown-unknown/$out_dir/simtlab.wasm"
cp web/index.html web/dist/
echo "built web/dist ($(du -sh web/dist | cut -f1)); serve it with: python3 -m http.server -d web/dist 8080"
