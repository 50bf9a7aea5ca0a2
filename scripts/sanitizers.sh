#!/usr/bin/env bash
# The project built with AddressSanitizer + UndefinedBehaviorSanitizer (gcc) in its own build
# directory, then the unit, policy and integration tests run there. Any sanitizer report fails
# the run: ASan aborts on the first error, UBSan is made fatal with -fno-sanitize-recover.
#
#   bash scripts/sanitizers.sh [BUILD_DIR] [-- CTEST_ARGS...]
#
# BUILD_DIR defaults to build-asan at the top of the repository. JOBS sets the build
# parallelism (default: nproc). The tests run with -j1 because integration tests create
# cgroups and time jails.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${root}/build-asan"
if [[ $# -gt 0 && "$1" != "--" ]]; then
  build="$1"
  shift
fi
[[ "${1:-}" == "--" ]] && shift
jobs="${JOBS:-$(nproc)}"

# C++ only: the C sources are the probes, which run inside jails whose environment is cleared,
# so no ASAN_OPTIONS reach them and LeakSanitizer's ptrace at exit is killed by the policy.
# CMake passes CMAKE_CXX_FLAGS to the link of C++ targets, so no linker flags are needed.
flags="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer -g -O1"
start=$(date +%s)
cmake -S "${root}" -B "${build}" -DCMAKE_BUILD_TYPE=Debug \
  -DCMAKE_C_FLAGS="" -DCMAKE_CXX_FLAGS="${flags}" -DCMAKE_EXE_LINKER_FLAGS="" >/dev/null
cmake --build "${build}" -j"${jobs}"
built=$(date +%s)
echo "sanitizers.sh: built in $((built - start)) s"

# detect_leaks=0: jail and its forked children end through _exit/execve on purpose (the child
# side never frees), so LeakSanitizer would report by design; memory errors and UB are the aim.
export ASAN_OPTIONS="abort_on_error=1:detect_leaks=0:strict_string_checks=1:detect_stack_use_after_return=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
cd "${build}"
# The unit, policy and integration tests; the security, vm and example suites have their own
# runs (the VM boots a kernel, the examples install the package).
set +e
ctest --output-on-failure --timeout 600 -j1 -E '^(security\.|examples\.|cgroup_v2_vm$)' "$@"
rc=$?
set -e
echo "sanitizers.sh: tests ran in $(($(date +%s) - built)) s (exit ${rc})"
exit "${rc}"
