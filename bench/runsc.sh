#!/usr/bin/env bash
# Start-up of a gVisor run: `jail --runtime runsc -- true` against `runsc do true`, interleaved
# in the same run so a noisy machine affects both alike. Goal: jail ≤ 1.1× runsc do.
# Also shown, not part of the goal: jail with --policy none (no filter, and so no debug log for
# denials), the share of the policy in what remains; and jail with the policy handed to runsc as
# an OCI profile (--oci-seccomp) instead of loaded by jail's loader inside the sandbox — what every
# run did before the loader, and what a run does when jail leaves the command to runsc to find
# (here: an empty PATH entry, which names the working directory, ahead of the usual ones).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
runs=${RUNSC_BENCH_RUNS:-31}
# Each start is measured on a machine at rest, as a person's single `jail --runtime runsc` is;
# back to back the passes move more (1.03-1.17x against 1.04-1.11x at rest; results.md has what
# is known of why). 0 measures back to back, the order turned round every run.
pause=${RUNSC_BENCH_PAUSE:-0.15}
if ! command -v runsc >/dev/null; then
  echo "runsc: not installed (apt-get install runsc); nothing measured" >&2
  exit 1
fi
if [[ $(id -u) != 0 ]]; then
  echo "runsc: needs root; nothing measured" >&2
  exit 1
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Every start gets the same stdio, none of it the caller's: runsc chowns the stdio it is handed
# to nobody (jail relays instead; `runsc do` would leave this terminal or /dev/null nobody's).
# stdin is a here-string (a pipe), stdout and stderr a file of our own.
exec 3>"$work/output"
# And no other open fd, as from a login shell: `runsc do` is faster when its caller leaks an fd
# numbered 64 or more (14 ms in a Python harness, 0-4 ms here; see results.md), so what the
# harness leaked decided which `runsc do` was measured. jail closes what it inherits anyway.
# (Those marked close-on-exec, like bash's own 255, reach no one.)
for fd in /proc/$$/fd/*; do
  fd=${fd##*/}
  flags=$(awk '/^flags:/ {print $2}' "/proc/$$/fdinfo/$fd" 2>/dev/null) || continue
  [[ -n $flags ]] && ((fd > 3 && !(8#$flags & 8#2000000))) && eval "exec $fd>&-"
done
now() { date +%s.%N; }
jail_times=()
bare_times=()
profile_times=()
runsc_times=()
# timed ARRAY COMMAND...: waits $pause, runs COMMAND, appends its wall time (seconds) to ARRAY.
timed() {
  local -n into=$1
  shift
  sleep "$pause"
  local t0 t1
  t0=$(now); "$@" <<<"" >&3 2>&3; t1=$(now)
  into+=("$(echo "$t1 - $t0" | bc -l)")
}
jail_start() { "$JAIL_BIN" --runtime runsc --no-cwd -q -- true; }
bare_start() { "$JAIL_BIN" --runtime runsc --policy none --no-cwd -q -- true; }
profile_start() {
  "$JAIL_BIN" --runtime runsc --env PATH=:/usr/local/bin:/usr/bin:/bin --no-cwd -q -- true
}
runsc_do_start() { (cd "$work" && exec runsc --root "$work/state" --network=none --ignore-cgroups do true); }
run_jail() { timed jail_times jail_start; }
run_bare() { timed bare_times bare_start; }
run_profile() { timed profile_times profile_start; }
run_runsc_do() { timed runsc_times runsc_do_start; }
# The order turns round every run, so that no kind always follows the same one.
for ((i = 0; i < runs; i++)); do
  if ((i % 2 == 0)); then
    run_jail; run_bare; run_profile; run_runsc_do
  else
    run_runsc_do; run_profile; run_bare; run_jail
  fi
done
j=$(median "${jail_times[@]}")
b=$(median "${bare_times[@]}")
p=$(median "${profile_times[@]}")
r=$(median "${runsc_times[@]}")
printf 'runsc start-up over %d interleaved runs, %ss apart (median seconds), %s\n' "$runs" "$pause" \
  "$(load_line)"
printf '  jail --runtime runsc -- true   %.3f\n' "$j"
printf '  ... with --policy none         %.3f\n' "$b"
printf '  ... policy as an OCI profile   %.3f\n' "$p"
printf '  runsc do true                  %.3f\n' "$r"
printf '  ratio jail/runsc-do            %.2fx (goal <= 1.10x)\n' "$(echo "$j / $r" | bc -l)"
printf '  ... as an OCI profile          %.2fx\n' "$(echo "$p / $r" | bc -l)"
# Each run's jail next to the runsc do that followed it: a machine that slows for a while slows
# both of a pair, so the median of the pairs' ratios moves less from pass to pass.
pair_ratios=()
for ((i = 0; i < runs; i++)); do
  pair_ratios+=("$(echo "${jail_times[i]} / ${runsc_times[i]}" | bc -l)")
done
printf '  median of paired ratios        %.2fx\n' "$(median "${pair_ratios[@]}")"
