#!/usr/bin/env bash
# Syscall overhead: a getppid + read loop (C, bench/syscall.c) and the same in Python
# (bench/syscall.py), outside any jail, in jail with the default policy, in jail with a policy
# that puts a condition on `read` (bench/read-condition.policy), in jail with a policy that
# allows everything (bench/allow-all.policy: what any filter costs) and in jail with no filter at
# all, and bwrap loading a small libseccomp filter (bench/seccomp_export.c) for comparison;
# interleaved repetitions, median CPU time per iteration (measured inside the process: start-up
# and time spent waiting for a busy CPU excluded), ratios to outside. Goal: default policy
# <= 1.05x outside.
#
#   SYSCALL_REPS=9 SYSCALL_ITERATIONS=2000000 bash bench/syscall.sh
set -euo pipefail

bench_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$bench_dir/lib.sh"
reps=${SYSCALL_REPS:-7}
iterations=${SYSCALL_ITERATIONS:-1000000}
py_iterations=${SYSCALL_PY_ITERATIONS:-200000}
driver=$(build_driver syscall)
drivers=$(dirname "$driver")
filter=$(mktemp)
trap 'rm -f "$filter"' EXIT
"$(build_driver seccomp_export -lseccomp)" >"$filter"

jail=("$JAIL_BIN" -q --no-cwd --ro-bind "$drivers:/bench" --ro-bind "$bench_dir:/src")
names=("outside" "jail, default policy" "jail, condition on read" "jail, allow-all policy"
  "jail --policy none")
prefixes=("" "${jail[*]} --" "${jail[*]} --policy $bench_dir/read-condition.policy --"
  "${jail[*]} --policy $bench_dir/allow-all.policy --" "${jail[*]} --policy none --")
# The same kernel filter entry without jail: bwrap loading a small libseccomp filter.
if command -v bwrap >/dev/null; then
  names+=("bwrap + libseccomp filter")
  prefixes+=("bwrap ${bwrap_all[*]} --ro-bind $drivers /bench --ro-bind $bench_dir /src --seccomp 9")
fi


# measure LABEL INSIDE_CMD OUTSIDE_CMD: every variant once per repetition, rotating the order.
measure() {
  local label=$1 inside=$2 outside=$3
  local -A times=()
  local n=${#names[@]}
  for ((r = 0; r < reps; r++)); do
    for ((k = 0; k < n; k++)); do
      local v=$(((k + r) % n)) value
      if [[ $v == 0 ]]; then
        value=$($outside)
      else
        # Paths contain no spaces (checked below), so word splitting is what we want here.
        value=$(${prefixes[$v]} $inside 9<"$filter")
      fi
      times[$v]+="$value "
    done
  done
  echo "$label: CPU ns per iteration (getppid + read), median of $reps, $(load_line)"
  local base
  base=$(median ${times[0]})
  for ((v = 0; v < n; v++)); do
    local m
    m=$(median ${times[$v]})
    printf '  %-28s %9.1f ns  %6.3fx\n' "${names[$v]}" "$m" "$(bc -l <<<"$m / $base")"
  done
}

if [[ "$drivers$bench_dir$JAIL_BIN" == *" "* ]]; then
  echo "syscall: paths with spaces are not supported here" >&2
  exit 2
fi
measure "C loop ($iterations iterations)" "/bench/syscall $iterations" "$driver $iterations"
measure "Python loop ($py_iterations iterations)" "python3 /src/syscall.py $py_iterations" \
  "python3 $bench_dir/syscall.py $py_iterations"
