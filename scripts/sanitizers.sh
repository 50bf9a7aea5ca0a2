#!/usr/bin/env bash
# The project built with AddressSanitizer + UndefinedBehaviorSanitizer (gcc) in its own build
# directory, then its tests run there. Any sanitizer report fails the run: ASan aborts on the
# first error, UBSan is made fatal with -fno-sanitize-recover.
#
#   bash scripts/sanitizers.sh [--subset] [BUILD_DIR] [-- CTEST_ARGS...]
#
# Full (default, BUILD_DIR build-asan): every target, then the unit, policy and integration
# tests. More than 40 minutes of build on 2 cores, so CI does not run it.
# --subset (BUILD_DIR build-asan-subset; what scripts/test.sh runs in CI): only libjail, the
# policy library, the `jail` executable and the GoogleTest programs that test those libraries
# in-process (jail_unit_tests, policy_tests, runner_tests), then those tests plus a smoke run of
# the instrumented `jail` executable. The integration, rootfs and security suites are left out:
# their test programs and probes would double the build, and the jail they drive is covered by
# the smoke run and by the in-process launch tests of jail_unit_tests.
#
# JOBS sets the build parallelism (default: nproc). The tests run with -j1 because some create
# cgroups and time jails. ccache is used when installed (CMakeLists.txt).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
subset=0
if [[ "${1:-}" == "--subset" ]]; then
  subset=1
  shift
fi
build="${root}/build-asan"
((subset)) && build="${root}/build-asan-subset"
if [[ $# -gt 0 && "$1" != "--" ]]; then
  build="$1"
  shift
fi
[[ "${1:-}" == "--" ]] && shift
jobs="${JOBS:-$(nproc)}"
mode="full"
((subset)) && mode="subset"

# C++ only: the C sources are the probes, which run inside jails whose environment is cleared,
# so no ASAN_OPTIONS reach them and LeakSanitizer's ptrace at exit is killed by the policy.
# CMake passes CMAKE_CXX_FLAGS to the link of C++ targets, so no linker flags are needed.
# -g1: line tables are all a sanitizer's stack trace needs, at a fraction of -g's compile time.
# -O0: a TU compiles in ~60 % of -O1's time under ASan (runner/doctor.cpp: 24 s against 40 s),
# and the tests, which run in ~2 minutes, are what pays for it. The Debug build type's own "-g"
# would come after these flags and win, so it is emptied.
flags="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer -g1 -O0"
export CCACHE_BASEDIR="${root}"
start=$(date +%s)
cmake -S "${root}" -B "${build}" -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="" \
  -DCMAKE_C_FLAGS="" -DCMAKE_CXX_FLAGS="${flags}" -DCMAKE_EXE_LINKER_FLAGS="" >/dev/null
if ((subset)); then
  # Named targets only: their dependencies (jail_core, jail_policies, jail_rootfs, the CLI
  # pieces) come along, the probes, examples and the other test programs do not.
  cmake --build "${build}" -j"${jobs}" --target jail jail_unit_tests policy_tests runner_tests
else
  cmake --build "${build}" -j"${jobs}"
fi
built=$(date +%s)
echo "sanitizers.sh (${mode}): built in $((built - start)) s"

# detect_leaks=0: jail and its forked children end through _exit/execve on purpose (the child
# side never frees), so LeakSanitizer would report by design; memory errors and UB are the aim.
export ASAN_OPTIONS="abort_on_error=1:detect_leaks=0:strict_string_checks=1:detect_stack_use_after_return=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
# Instrumented code runs 2-3x slower: the tests' upper time bounds widen by this factor.
export JAIL_TEST_TIME_SCALE="${JAIL_TEST_TIME_SCALE:-3}"
cd "${build}"
rc=0
if ((subset)); then
  # The tests discovered from the programs built above. Programs not built are listed by ctest
  # as <target>_NOT_BUILT; they and the add_test entries of other suites are excluded. The
  # egress fuzz harnesses are such entries: clang builds them with ASan and UBSan of their own,
  # and the tests phase has run them (here they took 102 of 214 s).
  ctest --output-on-failure --timeout 600 -j1 \
    -E '_NOT_BUILT|^(security|examples|rootfs)\.|^egress\.fuzz_|^cgroup_v2_vm$' "$@" || rc=$?
  bash "${root}/scripts/sanitizers-smoke.sh" "${build}/jail" || rc=$((rc ? rc : 1))
else
  # The unit, policy and integration tests; the security, vm and example suites have their own
  # runs (the VM boots a kernel, the examples install the package).
  ctest --output-on-failure --timeout 600 -j1 -E '^(security\.|examples\.|cgroup_v2_vm$)' "$@" ||
    rc=$?
fi
echo "sanitizers.sh (${mode}): tests ran in $(($(date +%s) - built)) s (exit ${rc})"
exit "${rc}"
