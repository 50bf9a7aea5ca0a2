#!/usr/bin/env bash
# Runs the security suite and prints its containment table: probe, mode, expected, observed,
# contained. Exit status is the suite's.   bash tests/security/table.sh [BUILD_DIR] [GTEST_ARGS...]
set -uo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="${1:-${root}/build}"
shift || true
log="$(mktemp)"
"${build}/security_tests" --gtest_brief=1 "$@" >"${log}" 2>&1
rc=$?
echo "| probe | mode | expected | observed | contained |"
echo "|---|---|---|---|---|"
grep -E '^\| ' "${log}"
grep -E '^\[  (FAILED|PASSED|SKIPPED) ' "${log}"
rm -f "${log}"
exit "${rc}"
