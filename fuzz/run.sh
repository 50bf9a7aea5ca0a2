#!/usr/bin/env bash
# Builds the libFuzzer harnesses with clang (-fsanitize=fuzzer,address,undefined) in
# build-fuzz/ and runs each for SECONDS, starting from the seed corpus in fuzz/corpus/<name>
# (for the policy parser also the shipped policies). A crash, leak, sanitizer report or
# timeout fails the run; its reproducer is left in build-fuzz/artifacts/<name>/.
#
#   bash fuzz/run.sh SECONDS [HARNESS...]     harnesses: policy_parser oci_import run_options profile
#                                             egress_request egress_client_hello egress_allow_entry
#                                             egress_handshake_watch
#
# Exit 77 (ctest's skip) when clang is not installed. Longer runs: fuzz/run.sh 3600.
# FUZZ_BUILD_DIR, FUZZ_OPT (-O1) and JOBS (nproc) set where and how the harnesses are built.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
seconds="${1:?usage: fuzz/run.sh SECONDS [HARNESS...]}"
shift
harnesses=("$@")
[[ ${#harnesses[@]} -eq 0 ]] && harnesses=(policy_parser oci_import run_options profile egress_request
  egress_client_hello egress_allow_entry egress_handshake_watch)
build="${FUZZ_BUILD_DIR:-${root}/build-fuzz}"

if ! command -v clang++ >/dev/null || ! command -v clang >/dev/null; then
  echo "fuzz/run.sh: clang is not installed (apt-get install clang); skipping" >&2
  exit 77
fi

# One configure and build at a time: ctest runs one harness per test.
exec 9>"${build}.lock"
flock 9
# FUZZ_OPT: -O1 for real fuzzing; the suite's 20-s smoke runs take -O0, which builds in less time
# than the runs would gain back.
flags="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined -g1 ${FUZZ_OPT:--O1}"
if [[ ! -f "${build}/CMakeCache.txt" ]]; then
  CC=clang CXX=clang++ cmake -S "${root}/fuzz" -B "${build}" -DCMAKE_BUILD_TYPE=None \
    -DCMAKE_C_FLAGS="${flags}" -DCMAKE_CXX_FLAGS="${flags}" \
    -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" >/dev/null
fi
targets=()
for h in "${harnesses[@]}"; do targets+=("fuzz_${h}"); done
cmake --build "${build}" -j"${JOBS:-$(nproc)}" --target "${targets[@]}"
flock -u 9

status=0
for h in "${harnesses[@]}"; do
  corpus="${build}/corpus/${h}"  # grows between runs; the seeds stay in the repository
  artifacts="${build}/artifacts/${h}"
  mkdir -p "${corpus}" "${artifacts}"
  seeds=("${root}/fuzz/corpus/${h}")
  [[ "${h}" == policy_parser ]] && seeds+=("${root}/policies/shipped")
  dict=()
  [[ -f "${root}/fuzz/${h}.dict" ]] && dict=(-dict="${root}/fuzz/${h}.dict")
  echo "fuzz/run.sh: ${h} for ${seconds} s"
  work="$(mktemp -d)"  # run_options may create files named by fuzzed flags
  set +e
  (cd "${work}" && ASAN_OPTIONS="detect_leaks=1:abort_on_error=0" \
    "${build}/fuzz_${h}" -max_total_time="${seconds}" -timeout=10 -rss_limit_mb=2048 \
    -max_len=8192 -print_final_stats=1 -artifact_prefix="${artifacts}/" "${dict[@]}" \
    "${corpus}" "${seeds[@]}" 2>&1 | tail -n 40)
  rc=${PIPESTATUS[0]}
  set -e
  rm -rf "${work}"
  if [[ ${rc} -ne 0 ]]; then
    echo "fuzz/run.sh: ${h} FAILED (exit ${rc}); reproducer in ${artifacts}/" >&2
    status=1
  fi
done
exit "${status}"
