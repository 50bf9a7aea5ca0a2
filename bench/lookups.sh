#!/usr/bin/env bash
# The cost of recording path lookups (`jail rootfs check`, Spec::lookups): `ls -lR` over a bound
# tree in a shell root, under `jail --rootfs` (lookups decided in the kernel) and under
# `jail rootfs check` (each lookup a round trip to the supervisor), interleaved; medians, the
# ratio check/plain, and the extra time per lookup.
#
#   bench/run lookups                    # or alone: bash bench/lookups.sh
#   LOOKUPS_TREE=/usr/share LOOKUPS_REPS=9 bash bench/lookups.sh
set -euo pipefail

bench_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$bench_dir/lib.sh"
jail=$JAIL_BIN
tree=${LOOKUPS_TREE:-/usr/share/doc}
reps=${LOOKUPS_REPS:-7}

# Under /var/tmp: the jail's /tmp is its own tmpfs. Removed on every exit.
work=$(mktemp -d /var/tmp/jail-bench-lookups-XXXXXX)
trap 'rm -rf "$work"' EXIT
"$jail" rootfs build "$work/root" --recipe shell >/dev/null
run_args=(--ro-bind "$tree:/tmp/tree" -- ls -lR /tmp/tree)

now_ns() { date +%s%N; }
time_us() {
  local start end
  start=$(now_ns)
  case $1 in
    plain) "$jail" --rootfs "$work/root" "${run_args[@]}" >/dev/null ;;
    check) "$jail" rootfs check "$work/root" --status-file "$work/status.json" "${run_args[@]}" >/dev/null ;;
  esac
  end=$(now_ns)
  echo $(((end - start) / 1000))
}
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

plain="" check=""
for ((r = 0; r < reps; r++)); do
  if ((r % 2)); then plain+="$(time_us plain) "; check+="$(time_us check) "
  else check+="$(time_us check) "; plain+="$(time_us plain) "; fi
done
p=$(tr ' ' '\n' <<<"$plain" | grep . | median)
c=$(tr ' ' '\n' <<<"$check" | grep . | median)
# Every lookup the supervisor saw: listed, past the limit, unreadable or under the jail's mounts.
lookups=$(python3 -c 'import json,sys; l=json.load(open(sys.argv[1]))["lookups"]; print(len(l["paths"])+l["beyond_limit"]+l["unreadable"]+l["under_jail_mounts"])' "$work/status.json")
printf 'lookups: ls -lR %s, %d repetitions, interleaved; median wall time; %s\n' "$tree" "$reps" "$(load_line)"
printf '%-10s %12s %12s %12s %22s\n' "lookups" "plain ms" "check ms" "check/plain" "extra per lookup µs"
awk -v n="$lookups" -v p="$p" -v c="$c" \
  'BEGIN { printf "%-10d %12.1f %12.1f %12.2f %22.2f\n", n, p / 1000, c / 1000, c / p, (c - p) / n }'
