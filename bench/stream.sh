#!/usr/bin/env bash
# Streaming throughput on pipes: plain cat, jail -- cat (pipes handed to the tool) and
# jail --max-output -- cat (the supervisor relays stdout), and cat | cat for reference,
# interleaved; medians and ratios to plain cat.
#
#   bash bench/stream.sh                 # from bench/run.sh, or alone with JAIL_BIN set
#   STREAM_MIB=256 STREAM_REPS=9 bash bench/stream.sh
set -euo pipefail

bench_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$bench_dir/lib.sh"

driver=$(build_driver stream -pthread)
exec "$driver" --jail "$JAIL_BIN" --mib "${STREAM_MIB:-512}" --reps "${STREAM_REPS:-7}"
