#!/usr/bin/env bash
# Many jails: MANY_TOTAL (default 500) launches of `jail -- /bin/true` (default policy, a cgroup
# with limits as root), 1 and 2 at a time, against bwrap with every namespace; launches per
# second, CPU per launch, and the largest peak RSS of a launch (for jail: its supervisor).
set -euo pipefail

bench_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$bench_dir/lib.sh"
total=${MANY_TOTAL:-500}
driver=$(build_driver spawn)

limits=()
[[ $(id -u) == 0 ]] && limits=(--memory 256M --pids 64)
variants=()
if command -v bwrap >/dev/null; then
  variants+=("bwrap (all namespaces)" bwrap "${bwrap_all[@]}" /bin/true ::)
else
  echo "bwrap: not installed (bench/run installs it); jail measured alone"
fi
variants+=("jail (default policy, cgroup)" "$JAIL_BIN" -q --no-cwd "${limits[@]}" -- /bin/true)

for parallel in 1 2; do
  echo "$total launches, $parallel at a time, $(load_line)"
  "$driver" many "$total" "$parallel" "${variants[@]}"
done
