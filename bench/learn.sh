#!/usr/bin/env bash
# Learn mode's cost on a syscall-heavy program: bare, under `jail --` (default policy, enforced
# in the kernel) and under `jail policy learn` (every syscall reported to the supervisor and
# continued), interleaved; medians, the ratios learn/enforce and learn/bare, and how learn
# mode's extra time grows with the number of calls (it must grow linearly, not worse).
#
#   bash bench/learn.sh                  # from bench/run.sh, or alone with JAIL_BIN set
#   LEARN_CALLS=20000 LEARN_REPS=9 bash bench/learn.sh
set -euo pipefail

bench_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$bench_dir/lib.sh"
jail=$JAIL_BIN
small=${LEARN_CALLS:-10000}  # loop iterations of the small workload; the large one is 4×
reps=${LEARN_REPS:-7}

# The workload: N iterations of getppid, fstat and a 1-byte read — three syscalls that each
# cost well under a microsecond bare, so the per-call overhead of each mode dominates. Raw
# syscall() so libc caches nothing. Compiled next to the build, again only when this changed.
mkdir -p "$build/bench"
workload=$build/bench/learn_workload
if [[ ! -x $workload || ${BASH_SOURCE[0]} -nt $workload ]]; then
  cc -O2 -Wall -Wextra -Werror -x c -o "$workload" - <<'EOF'
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
int main(int argc, char** argv) {
  long n = argc > 1 ? atol(argv[1]) : 1000;
  int fd = open("/dev/zero", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 1;
  char c;
  struct stat st;
  for (long i = 0; i < n; ++i) {
    syscall(SYS_getppid);
    if (fstat(fd, &st) != 0 || read(fd, &c, 1) != 1) return 1;
  }
  return 0;
}
EOF
fi

# The workload runs from its own directory, which jail shows the tool as its cwd.
cd "$build/bench"
now_ns() { date +%s%N; }
# Runs one mode once and prints its wall time in ms; a failed run aborts the benchmark.
time_ms() {
  local mode=$1 n=$2 start end
  start=$(now_ns)
  case $mode in
    bare) ./learn_workload "$n" ;;
    enforce) "$jail" -- ./learn_workload "$n" ;;
    learn) "$jail" policy learn -o "$build/bench/learned.policy" -- ./learn_workload "$n" 2>/dev/null ;;
  esac
  end=$(now_ns)
  echo $(((end - start) / 1000))
}
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

declare -A samples
modes=(bare enforce learn)
sizes=("$small" $((small * 4)))
for ((r = 0; r < reps; r++)); do
  # Rotate the order each repetition so no mode always runs right after another.
  for ((k = 0; k < ${#modes[@]}; k++)); do
    mode=${modes[(k + r) % ${#modes[@]}]}
    for n in "${sizes[@]}"; do samples[$mode.$n]+="$(time_ms "$mode" "$n") "; done
  done
done

declare -A med
for mode in "${modes[@]}"; do
  for n in "${sizes[@]}"; do
    med[$mode.$n]=$(tr ' ' '\n' <<<"${samples[$mode.$n]}" | grep . | median)
  done
done

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
# The load matters as much as jail: each notified call is two wake-ups between the tool and the
# supervisor, cheap on a busy CPU and dear on an idle one in a VM: jail of 2026-11-29 measured
# 7.8 µs per call at load 6.5 that day and 43-45 µs at rest on 2026-12-07.
printf 'learn: %d repetitions, interleaved; median wall time in ms (µs precision); %s\n' "$reps" \
  "$(load_line)"
printf '%-28s %12s %12s %12s %14s %14s\n' "workload" "bare" "enforce" "learn" "learn/enforce" "learn/bare"
for n in "${sizes[@]}"; do
  printf '%-28s %12.1f %12.1f %12.1f %14s %14s\n' "$((n * 3)) syscalls" \
    "$(awk -v v="${med[bare.$n]}" 'BEGIN { print v / 1000 }')" \
    "$(awk -v v="${med[enforce.$n]}" 'BEGIN { print v / 1000 }')" \
    "$(awk -v v="${med[learn.$n]}" 'BEGIN { print v / 1000 }')" \
    "$(ratio "${med[learn.$n]}" "${med[enforce.$n]}")" "$(ratio "${med[learn.$n]}" "${med[bare.$n]}")"
done
# Bounded: learn mode's extra time over enforce, per syscall, at both sizes. Linear growth keeps
# it constant (ratio ≈ 1); a cost that grows with what was already recorded would push it up.
big=${sizes[1]}
per_call() { awk -v l="$1" -v e="$2" -v n="$3" 'BEGIN { printf "%.2f", (l - e) / (n * 3) }'; }
pc_small=$(per_call "${med[learn.$small]}" "${med[enforce.$small]}" "$small")
pc_big=$(per_call "${med[learn.$big]}" "${med[enforce.$big]}" "$big")
printf 'learn mode extra per syscall: %s µs at %d calls, %s µs at %d calls (ratio %s; linear ≈ 1.00)\n' \
  "$pc_small" $((small * 3)) "$pc_big" $((big * 3)) "$(ratio "$pc_big" "$pc_small")"
