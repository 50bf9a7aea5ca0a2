#!/usr/bin/env bash
# What jail's egress proxy (--net-allow) costs a download: EGRESS_MB (default 100) MB fetched
# with curl from a local HTTP server, through the proxy (`--net-allow api.test:8080`) against
# `--net host` (the same server, reached directly), interleaved over EGRESS_ROUNDS (default 5)
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
rounds=${EGRESS_ROUNDS:-5}
bytes=$((megabytes * 1024 * 1024))
work=$(mktemp -d /var/tmp/jail-bench-egress.XXXXXX)
server_pid=
cleanup() {
  [[ -n $server_pid ]] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
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

# speed (bytes/s) of one download in a jail with the given flags
download() {
  local url=$1
  shift
  "$JAIL_BIN" -q --no-cwd "$@" -- curl -sS -o /dev/null -w '%{speed_download}' "$url"
}

echo "egress: ${megabytes} MB download with curl, ${rounds} rounds; $(load_line)"
host=() proxied=()
for _ in $(seq 1 "$rounds"); do
  host+=("$(download "http://192.0.2.1:8080/bytes/$bytes" --net host)")
  proxied+=("$(download "http://api.test:8080/bytes/$bytes" --net-allow api.test:8080)")
done
host_median=$(median "${host[@]}")
proxied_median=$(median "${proxied[@]}")
printf '%-34s %8.0f MB/s\n' "--net host (median)" "$(echo "$host_median / 1048576" | bc -l)"
printf '%-34s %8.0f MB/s\n' "--net-allow, proxied (median)" "$(echo "$proxied_median / 1048576" | bc -l)"
awk -v p="$proxied_median" -v h="$host_median" \
  'BEGIN { printf "ratio proxied/host: %.2f (goal >= 0.80)\n", (h > 0 ? p / h : 0) }'
exec {keep_open}>&-
