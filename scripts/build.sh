#!/usr/bin/env bash
# Configures and builds jail into build/ (the jail binary ends up at build/jail).
#   bash scripts/build.sh [TARGET...]    every target by default; `jail` for the executable only
# BUILD_TYPE=RelWithDebInfo keeps debug info (Release, the default, has none: faster to build).
set -euo pipefail
cd "$(dirname "$0")/.."
# ccache keys on paths relative to the checkout, so another clone of the same tree hits too.
export CCACHE_BASEDIR="${PWD}"
cmake -S . -B build -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-Release}" >/dev/null
targets=()
[[ $# -gt 0 ]] && targets=(--target "$@")
cmake --build build -j"$(nproc)" "${targets[@]}"
