#!/usr/bin/env bash
# The main job on a fresh machine: install, build, run examples/hello.py inside a jail.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
exec build/jail -- python3 examples/hello.py
