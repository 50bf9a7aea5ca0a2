#!/usr/bin/env bash
# Streaming throughput on pipes: plain cat, jail -- cat (pipes handed to the tool) and
# jail --max-output -- cat (the supervisor relays stdout), and cat | cat for reference,
# interleaved; medians and ratios to plain cat.
#
#   bash bench/stream.sh                 # from bench/run.sh, or alone with JAIL_BIN set
#   STREAM_MIB=256 STREAM_REPS=9 bash bench/stream.sh
set -euo pipefail

bench_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(dirname "$bench_dir")
build=${JAIL_BUILD_DIR:-$repo/build}
jail=${JAIL_BIN:-$build/jail}
if [[ ! -x $jail ]]; then
  echo "stream: no jail binary at $jail (run bench/run.sh, which builds it)" >&2
  exit 2
fi

# The driver is one C++ file; compiled next to the build, again only when it changed.
driver=$build/bench/stream
if [[ ! -x $driver || $bench_dir/stream.cpp -nt $driver ]]; then
  mkdir -p "$build/bench"
  c++ -std=c++20 -O2 -Wall -Wextra -Werror -pthread -o "$driver" "$bench_dir/stream.cpp"
fi

exec "$driver" --jail "$jail" --mib "${STREAM_MIB:-512}" --reps "${STREAM_REPS:-7}"
