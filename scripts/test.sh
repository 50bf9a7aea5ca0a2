#!/usr/bin/env bash
# The whole test suite: install, build, run every test with ctest, then the ASan+UBSan subset
# (scripts/sanitizers.sh --subset). Both always run; the script fails if either failed.
# SKIP_SANITIZERS=1 leaves the sanitizer subset out (it adds about 20 minutes on 2 cores).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
rc=0
(cd build && ctest --output-on-failure --timeout 600 -j1 "$@") || rc=$?
if [[ "${SKIP_SANITIZERS:-0}" != 1 ]]; then
  bash scripts/sanitizers.sh --subset || rc=$((rc ? rc : 1))
fi
exit "${rc}"
