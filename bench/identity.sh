#!/usr/bin/env bash
# What a root caller's identity costs at start-up: the jail's own host ids (a lock on one byte of
# /run/jail/id-slots), bind sources opened in the parent, and each bind idmapped (a user
# namespace made per bound directory's owner, then mount_setattr). Interleaved rounds of
# `jail -- /bin/true` with no bind, one bind and four binds of two owners; the ratios against
# no bind are the idmap's share. Run as root (an unprivileged caller has no slot and no idmap;
# its run is measured too when the nobody user exists, for comparison).
#
#   bash bench/identity.sh                # from bench/run, or alone with JAIL_BIN set
#   IDENTITY_RUNS=60 bash bench/identity.sh
#   IDENTITY_BEFORE_BIN=/path/to/older/jail bash bench/identity.sh   # adds its rows, for a
#                                                                    # before/after in one run
set -euo pipefail

bench_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$bench_dir/lib.sh"
runs=${IDENTITY_RUNS:-40}
driver=$(build_driver spawn)
if [[ $(id -u) != 0 ]]; then
  echo "identity: a root caller's cost; run as root"
  exit 0
fi

dirs=$(mktemp -d /var/tmp/jail-bench-identity.XXXXXX)
trap 'rm -rf "$dirs"' EXIT
mkdir -p "$dirs"/a "$dirs"/b "$dirs"/c "$dirs"/d
chown 65534:65534 "$dirs"/c "$dirs"/d
chmod 755 "$dirs"

base=("$JAIL_BIN" -q --no-cwd)
variants=(bare /bin/true)
variants+=(:: "jail, no bind" "${base[@]}" -- /bin/true)
variants+=(:: "jail, 1 bind" "${base[@]}" --ro-bind "$dirs/a:/a" -- /bin/true)
variants+=(:: "jail, 4 binds, 2 owners" "${base[@]}" --ro-bind "$dirs/a:/a" --bind "$dirs/b:/b"
  --ro-bind "$dirs/c:/c" --bind "$dirs/d:/d" -- /bin/true)
if [[ -n ${IDENTITY_BEFORE_BIN:-} ]]; then
  before=("$IDENTITY_BEFORE_BIN" -q --no-cwd)
  variants+=(:: "before, no bind" "${before[@]}" -- /bin/true)
  variants+=(:: "before, 1 bind" "${before[@]}" --ro-bind "$dirs/a:/a" -- /bin/true)
  variants+=(:: "before, 4 binds, 2 owners" "${before[@]}" --ro-bind "$dirs/a:/a" --bind
    "$dirs/b:/b" --ro-bind "$dirs/c:/c" --bind "$dirs/d:/d" -- /bin/true)
fi
if id nobody >/dev/null 2>&1; then
  variants+=(:: "jail as nobody, 1 bind" setpriv --reuid 65534 --regid 65534 --clear-groups
    "${base[@]}" --ro-bind "$dirs/c:/c" -- /bin/true)
fi

echo "start-up with a root caller's own ids and idmapped binds, $runs interleaved rounds, $(load_line)"
out=$("$driver" rounds "$runs" "${variants[@]}")
echo "$out"
none=$(awk '/^jail, no bind/ {print $(NF-5)}' <<<"$out")
median_of() { awk -v n="$1" 'index($0, n) == 1 {print $(NF-5)}' <<<"$out"; }
for name in "jail, 1 bind" "jail, 4 binds, 2 owners"; do
  ms=$(median_of "$name")
  [[ -n $ms && -n $none ]] && printf 'ratio %s / no bind: %.2fx (+%.2f ms)\n' "$name" \
    "$(bc -l <<<"$ms / $none")" "$(bc -l <<<"$ms - $none")"
done
if [[ -n ${IDENTITY_BEFORE_BIN:-} ]]; then
  for shape in "no bind" "1 bind" "4 binds, 2 owners"; do
    now=$(median_of "jail, $shape")
    then_ms=$(median_of "before, $shape")
    [[ -n $now && -n $then_ms ]] && printf 'ratio after / before, %s: %.2fx (%+.2f ms)\n' \
      "$shape" "$(bc -l <<<"$now / $then_ms")" "$(bc -l <<<"$now - $then_ms")"
  done
fi
