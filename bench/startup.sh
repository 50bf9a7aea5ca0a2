#!/usr/bin/env bash
# Start-up: `jail -- /bin/true` with full default isolation against bare exec, unshare, bwrap with
# every namespace, and nsjail/firejail when installed; interleaved rounds, medians and spread,
# ratios. Goal: jail <= 0.8x bwrap while doing more (seccomp filter, cgroup with limits).
#
#   bash bench/startup.sh              # from bench/run, or alone with JAIL_BIN set
#   STARTUP_RUNS=60 bash bench/startup.sh
set -euo pipefail

bench_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$bench_dir/lib.sh"
runs=${STARTUP_RUNS:-40}
driver=$(build_driver spawn)

variants=(bare /bin/true)
variants+=(:: "unshare -Urpfn --mount-proc" unshare -Urpfn --mount-proc /bin/true)
if command -v bwrap >/dev/null; then
  variants+=(:: "bwrap (all namespaces)" bwrap "${bwrap_all[@]}" /bin/true)
else
  echo "bwrap: not installed (bench/run installs it); not measured"
fi
# As root jail also makes a cgroup with limits: the full default isolation a plugin host gets.
limits=()
[[ $(id -u) == 0 ]] && limits=(--memory 256M --pids 64)
variants+=(:: "jail (default policy, cgroup)" "$JAIL_BIN" -q --no-cwd "${limits[@]}" -- /bin/true)
if command -v nsjail >/dev/null; then
  variants+=(:: "nsjail" nsjail -Mo --quiet -R /usr -R /lib -R /lib64 -R /bin -- /bin/true)
else
  echo "nsjail: not installed (no Debian package); not measured"
fi
if command -v firejail >/dev/null; then
  variants+=(:: "firejail --noprofile" firejail --quiet --noprofile --net=none /bin/true)
else
  echo "firejail: not installed; not measured"
fi

echo "start-up of /bin/true, $runs interleaved rounds, $(load_line)"
out=$("$driver" rounds "$runs" "${variants[@]}")
echo "$out"
jail_ms=$(awk '/^jail/ {print $(NF-5)}' <<<"$out")
bwrap_ms=$(awk '/^bwrap/ {print $(NF-5)}' <<<"$out")
jail_cpu=$(awk '/^jail/ {print $(NF-2)}' <<<"$out")
bwrap_cpu=$(awk '/^bwrap/ {print $(NF-2)}' <<<"$out")
if [[ -n $bwrap_ms && -n $jail_ms ]]; then
  printf 'ratio jail/bwrap: wall %.2fx, cpu %.2fx (goal <= 0.80x)\n' \
    "$(bc -l <<<"$jail_ms / $bwrap_ms")" "$(bc -l <<<"$jail_cpu / $bwrap_cpu")"
fi
echo "where jail's time goes (jail --trace-timing, one run):"
"$JAIL_BIN" -q --no-cwd "${limits[@]}" --trace-timing -- /bin/true 2>&1 | sed 's/^/  /'
