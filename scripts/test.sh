#!/usr/bin/env bash
# The whole test suite: install, build, run every test with ctest, then the ASan+UBSan subset
# (scripts/sanitizers.sh --subset). Both always run; the script fails if either failed.
# SKIP_SANITIZERS=1 leaves the sanitizer subset out. TEST_JOBS sets ctest's parallelism.
# The time of each phase is printed at the end (CONTRIBUTING.md keeps today's figures).
set -euo pipefail
cd "$(dirname "$0")/.."
phases=()
phase() {  # phase NAME COMMAND...: runs COMMAND, records its time, keeps going on failure
  local name="$1" start rc=0
  shift
  start=$(date +%s)
  "$@" || rc=$?
  phases+=("$(printf '%-18s %5d s  exit %d' "${name}" $(($(date +%s) - start)) "${rc}")")
  return "${rc}"
}
run_ctest() { (cd build && ctest --output-on-failure --timeout 600 -j"${TEST_JOBS:-2}" "$@"); }

phase install bash scripts/install-deps.sh
phase build bash scripts/build.sh
rc=0
phase tests run_ctest "$@" || rc=$?
if [[ "${SKIP_SANITIZERS:-0}" != 1 ]]; then
  phase sanitizers bash scripts/sanitizers.sh --subset || rc=$((rc ? rc : 1))
fi
echo "scripts/test.sh: phases"
printf '  %s\n' "${phases[@]}"
exit "${rc}"
