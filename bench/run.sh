#!/usr/bin/env bash
# Runs every benchmark in bench/: each bench/*.sh except this one, in name order, one after
# the other (never two at once: they would measure each other). Builds jail first if needed.
#
#   bash bench/run.sh            # all of them
#   bash bench/run.sh stream     # only those whose file name contains "stream"
#
# JAIL_BUILD_DIR (default: build/ at the top of the repository) is where jail is built and
# where benchmarks put anything they compile; each benchmark finds the binary in $JAIL_BIN.
set -euo pipefail

bench_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(dirname "$bench_dir")
build=${JAIL_BUILD_DIR:-$repo/build}

if [[ ! -f $build/CMakeCache.txt ]]; then
  cmake -S "$repo" -B "$build"
fi
# Incremental: does nothing when jail is up to date.
cmake --build "$build" --target jail -j"$(nproc)" >/dev/null

export JAIL_BUILD_DIR=$build
export JAIL_BIN=$build/jail

echo "# jail benchmarks, $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "# $(uname -srm), $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
echo "# jail $(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo '(no git)')"

failed=()
ran=0
for script in "$bench_dir"/*.sh; do
  name=$(basename "$script" .sh)
  [[ $name == run ]] && continue
  [[ $# -gt 0 && $name != *"$1"* ]] && continue
  echo
  echo "## $name"
  ran=$((ran + 1))
  if ! bash "$script"; then
    failed+=("$name")
  fi
done

echo
if [[ $ran -eq 0 ]]; then
  echo "no benchmark matched '${1:-}'" >&2
  exit 2
fi
if [[ ${#failed[@]} -gt 0 ]]; then
  echo "failed: ${failed[*]}" >&2
  exit 1
fi
echo "$ran benchmark(s) done"
