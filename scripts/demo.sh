#!/usr/bin/env bash
# The main job on a fresh machine: install, build the `jail` executable (nothing else: the tests,
# fuzzers and examples are scripts/test.sh's), run examples/hello.py inside a jail.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh jail
exec build/jail -- python3 examples/hello.py
