#!/usr/bin/env bash
# The supervisor's own memory under abuse: jail's peak RSS while its tool floods denied calls
# (4 threads) and output (stdout and stderr), beyond jail's peak RSS around a quiet tool for the
# same time — what start-up costs is in both. Goal (issue 40): at most 4 MiB more.
#
#   bash bench/supervisor_memory.sh          # from bench/run, or alone with JAIL_BIN set
#   MEMORY_SECONDS=5 MEMORY_REPS=5 bash bench/supervisor_memory.sh
set -euo pipefail

bench_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$bench_dir/lib.sh"
jail=$JAIL_BIN
seconds=${MEMORY_SECONDS:-3}
reps=${MEMORY_REPS:-3}

mkdir -p "$build/bench"
flood=$build/bench/supervisor_flood
if [[ ! -x $flood || ${BASH_SOURCE[0]} -nt $flood ]]; then
  cc -O2 -Wall -Wextra -Werror -pthread -x c -o "$flood" - <<'EOF'
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
static void* deny(void* unused) {
  (void)unused;
  static const char name[] = "flood-flood-flood-flood";
  for (long i = 0;; ++i) syscall(SYS_sethostname, name, 1 + i % (sizeof name - 1));
  return NULL;
}
static void* shout(void* fd) {
  static char line[65536];
  memset(line, 'x', sizeof line);
  for (;;)
    if (write((int)(long)fd, line, sizeof line) < 0) return NULL;
}
int main(int argc, char** argv) {
  int seconds = argc > 1 ? atoi(argv[1]) : 3;
  pthread_t id;
  for (int i = 0; i < 4; ++i) pthread_create(&id, NULL, deny, NULL);
  pthread_create(&id, NULL, shout, (void*)1L);
  pthread_create(&id, NULL, shout, (void*)2L);
  sleep((unsigned)seconds);
  _exit(0);
}
EOF
fi

# peak_kib COMMAND...: jail's VmHWM (KiB) as last read before it exited.
peak_kib() {
  "$jail" "$@" >/dev/null 2>&1 &
  local pid=$! peak=0 now
  while now=$(awk '/^VmHWM:/ {print $2}' "/proc/$pid/status" 2>/dev/null) && [[ -n $now ]]; do
    peak=$now
    sleep 0.05
  done
  wait "$pid" || true
  echo "$peak"
}

quiet=() flooded=()
for ((i = 0; i < reps; ++i)); do
  quiet+=("$(peak_kib --no-cwd -- sleep "$seconds")")
  flooded+=("$(peak_kib --no-cwd --status-file "$build/bench/memory-status.json" \
    --ro-bind "$build/bench:/bench" -- /bench/supervisor_flood "$seconds")")
done
q=$(median "${quiet[@]}")
f=$(median "${flooded[@]}")
echo "supervisor memory: jail's peak RSS, median of $reps runs of ${seconds} s; $(load_line)"
echo "  quiet tool (sleep):                          ${q} KiB"
echo "  denial + output flood (4 + 2 threads):       ${f} KiB" \
  "($(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["denials"]["count"])' \
    "$build/bench/memory-status.json") denials answered in the last run)"
awk -v q="$q" -v f="$f" 'BEGIN {
  printf "  beyond the quiet run: %.0f KiB (goal at most 4096); ratio flood/quiet %.2f\n", f - q, f / q }'
