# Shared by the benchmarks (sourced, not run): where jail and the drivers are, and the baselines.
# Not a benchmark itself: bench/run skips it.

bench_dir=${bench_dir:-$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)}
repo=$(dirname "$bench_dir")
build=${JAIL_BUILD_DIR:-$repo/build}
JAIL_BIN=${JAIL_BIN:-$build/jail}
if [[ ! -x $JAIL_BIN ]]; then
  echo "no jail binary at $JAIL_BIN (run bench/run, which builds it)" >&2
  exit 2
fi

# build_driver NAME [LIBS...]: compiles bench/NAME.cpp (C++) or bench/NAME.c (C) into
# $build/bench/NAME, again only when the source changed; prints the path.
build_driver() {
  local name=$1 out=$build/bench/$1 src
  shift
  mkdir -p "$build/bench"
  if [[ -f $bench_dir/$name.cpp ]]; then
    src=$bench_dir/$name.cpp
    [[ -x $out && $out -nt $src ]] || c++ -std=c++20 -O2 -Wall -Wextra -Werror -o "$out" "$src" "$@"
  else
    src=$bench_dir/$name.c
    [[ -x $out && $out -nt $src ]] || cc -std=c11 -O2 -Wall -Wextra -Werror -o "$out" "$src" "$@"
  fi
  echo "$out"
}

# median VALUE...: the median of its arguments.
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

load_line() {
  echo "load average $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs"
}

# bwrap with every namespace it can make (user, mount, pid, net, ipc, uts, cgroup), a read-only
# /usr and the usual merged-/usr links, its own /proc, /dev and /tmp: the closest bwrap gets to
# jail's default root.
bwrap_all=(--unshare-all --unshare-user --die-with-parent --new-session
  --ro-bind /usr /usr --symlink usr/bin /bin --symlink usr/lib /lib --symlink usr/lib64 /lib64
  --symlink usr/sbin /sbin --proc /proc --dev /dev --tmpfs /tmp)
