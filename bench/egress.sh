#!/usr/bin/env bash
# What jail's egress proxy (--net-allow) costs a download: EGRESS_MB (default 100) MB fetched
# with curl from a local HTTP server, through the proxy (`--net-allow api.test:8080`) against
# `--net host` (the same server, reached directly), interleaved over EGRESS_ROUNDS (default 15)
# rounds. The server (tests/integration/egress_server.py) sits on 192.0.2.1 in a network and
# mount namespace this script makes for itself, with a private /etc/hosts naming it: nothing of
# the host's network is used. curl's own speed_download is the figure, so jail's start-up is not
# in it. Goal: proxied / host >= 0.80.
#
#   bench/run egress            # or: JAIL_BIN=build/jail bash bench/egress.sh
set -euo pipefail

bench_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$bench_dir/lib.sh"

if [[ -z ${EGRESS_BENCH_INSIDE:-} ]]; then
  if [[ $(id -u) != 0 ]]; then
    echo "egress: needs root, to make the benchmark's own network namespace; not measured" >&2
    exit 2
  fi
  EGRESS_BENCH_INSIDE=1 exec unshare --net --mount --propagation private bash "$0" "$@"
fi

megabytes=${EGRESS_MB:-100}
rounds=${EGRESS_ROUNDS:-15}
bytes=$((megabytes * 1024 * 1024))
work=$(mktemp -d /var/tmp/jail-bench-egress.XXXXXX)
server_pid=
cleanup() {
  if [[ -n $server_pid ]]; then
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  # The private hosts file is mounted over /etc/hosts here: busy until unmounted.
  umount /etc/hosts 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

ip link set lo up
for address in 192.0.2.1 192.0.2.2 169.254.169.254 10.11.12.13; do
  ip addr add "$address/32" dev lo
done
printf '127.0.0.1 localhost\n192.0.2.1 api.test\n' >"$work/hosts"
mount --bind "$work/hosts" /etc/hosts
mkfifo "$work/server-in"
python3 "$repo/tests/integration/egress_server.py" <"$work/server-in" >"$work/server-out" &
server_pid=$!
exec {keep_open}>"$work/server-in"
for _ in $(seq 1 100); do
  grep -q ready "$work/server-out" 2>/dev/null && break
  sleep 0.1
done

# download URL JAIL_FLAGS... -- CURL_OPTIONS...: the speed (bytes/s) of one download in a jail
download() {
  local url=$1 flags=()
  shift
  while [[ $1 != -- ]]; do
    flags+=("$1")
    shift
  done
  shift
  "$JAIL_BIN" -q --no-cwd "${flags[@]}" -- curl -sS -o /dev/null -w '%{speed_download}' "$@" "$url"
}

# compare LABEL [CURL_OPTION...]: both variants, interleaved, and their ratio.
compare() {
  local label=$1 host=() proxied=()
  shift
  local ratios=()
  for _ in $(seq 1 "$rounds"); do
    host+=("$(download "http://192.0.2.1:8080/bytes/$bytes" --net host -- "$@")")
    proxied+=("$(download "http://api.test:8080/bytes/$bytes" --net-allow api.test:8080 -- "$@")")
    ratios+=("$(echo "${proxied[-1]} / ${host[-1]}" | bc -l)")
  done
  local host_median proxied_median
  host_median=$(median "${host[@]}")
  proxied_median=$(median "${proxied[@]}")
  printf '%-44s %8.0f MB/s\n' "$label, --net host (median)" "$(echo "$host_median / 1048576" | bc -l)"
  printf '%-44s %8.0f MB/s\n' "$label, --net-allow (median)" "$(echo "$proxied_median / 1048576" | bc -l)"
  awk -v p="$proxied_median" -v h="$host_median" -v l="$label" -v r="$(median "${ratios[@]}")" \
    'BEGIN { printf "ratio proxied/host, %s: %.2f of the medians, %.2f median of paired rounds (goal >= 0.80)\n", l, (h > 0 ? p / h : 0), r }'
}

echo "egress: ${megabytes} MB download with curl, ${rounds} rounds; $(load_line)"
# Loopback at full speed: every byte crosses two TCP connections instead of one, on CPUs that
# also run the server and curl, so this is the proxy's worst case.
compare "loopback"
# A 1 Gbit/s link (curl's own rate limit), where the network, not the CPU, is the bound.
compare "at 1 Gbit/s" --limit-rate 119M
exec {keep_open}>&-
