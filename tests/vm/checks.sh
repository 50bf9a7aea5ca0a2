#!/bin/sh
# The checks of the cgroup-v2 VM test (busybox sh, as root, inside the VM; see init.sh).
# One line per check: "PASS name: detail" or "FAIL name: detail", then "N passed, M failed".
#
# Every jail run starts alone in a fresh cgroup beside /sys/fs/cgroup/init.scope, with memory,
# pids and cpu available but not enabled — what `systemd-run --scope -p Delegate=yes jail …`
# gives a caller on a systemd host. jail has to move itself into a leaf, enable the controllers,
# put the tool in its own cgroup and leave the scope as it found it.
CG=/sys/fs/cgroup
passed=0
failed=0
scopes=0
scope_trouble=""

pass() { echo "PASS $1: $2"; passed=$((passed + 1)); }
fail() { echo "FAIL $1: $2"; failed=$((failed + 1)); }

# Centiseconds since boot (no floats, no %N in busybox date).
now_cs() {
  read -r up _ </proc/uptime
  echo "${up%.*}${up#*.}"
}

# field NAME FILE: a top-level scalar of jail's one-line JSON status ("" when absent).
field() {
  [ -f "$2" ] || return 0
  grep -o "\"$1\":[^,}]*" "$2" | head -1 | cut -d: -f2- | tr -d '" '
}

# One line of what went wrong: the status' error, else jail's stderr.
why() {
  err_msg=""
  [ -f "$st" ] && err_msg=$(grep -o '"message":"[^"]*"' "$st" | head -1 | cut -d: -f2- | tr -d '"')
  [ -n "$err_msg" ] || err_msg=$(grep -v '^$' "$err" 2>/dev/null | head -2 | tr '\n' ' ' | cut -c1-300)
  echo "${err_msg:-no message}"
}

# run_jail NAME [jail options] -- COMMAND…: runs jail alone in a fresh delegated scope with a
# status file. Sets rc, st, out, err and cs (the run's wall time in centiseconds, seen from here).
# A run that hangs is killed after 90 s so the other checks still run.
run_jail() {
  name=$1
  shift
  scopes=$((scopes + 1))
  scope=$CG/check-$scopes.scope
  mkdir "$scope"
  st=/tmp/$name.status.json
  out=/tmp/$name.out
  err=/tmp/$name.err
  rm -f "$st"
  t0=$(now_cs)
  timeout -s KILL 90 sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' sh "$scope" \
    jail --no-cwd --status-file "$st" "$@" >"$out" 2>"$err"
  rc=$?
  cs=$(($(now_cs) - t0))
  left_as_found "$scope"
}

# The caller's cgroup must be left as jail found it: no controllers enabled, no child, removable.
left_as_found() {
  subtree=$(cat "$1/cgroup.subtree_control" 2>/dev/null)
  [ -z "$subtree" ] || scope_trouble="$scope_trouble ${1#"$CG"/} kept subtree_control '$subtree';"
  if ! rmdir "$1" 2>/dev/null; then
    scope_trouble="$scope_trouble ${1#"$CG"/} not removable ($(ls -d "$1"/*/ 2>/dev/null | tr '\n' ' '));"
  fi
}

secs() { awk -v cs="$1" 'BEGIN { printf "%.2f s", cs / 100 }'; }

summary() { # the fields every detail line shows
  echo "exit $rc, outcome $(field outcome "$st" | grep . || echo none), limit_hit $(field limit_hit "$st" | grep . || echo none), $(secs "$cs")"
}

# --- doctor -----------------------------------------------------------------------------------------
jail doctor --format json >/tmp/doctor.json 2>/tmp/doctor.err
doctor_rc=$?
layout=$(grep -o '"layout": *"[^"]*"' /tmp/doctor.json | head -1 | cut -d: -f2 | tr -d '" ')
finding=$(awk '/"cgroups": *\{/ { c = 1 } c && /"finding"/ { sub(/^ *"finding": *"/, ""); sub(/",?$/, ""); print; exit }' /tmp/doctor.json)
if [ "$layout" = v2 ]; then
  pass doctor "jail doctor says layout v2 (doctor exit $doctor_rc): $finding"
else
  fail doctor "jail doctor says layout '$layout', not v2 (exit $doctor_rc): ${finding:-$(head -2 /tmp/doctor.err | tr '\n' ' ')}"
fi

# --- a run with no limits ---------------------------------------------------------------------------
run_jail no-limits -- /bin/busybox sh -c 'echo hello from the jail; cat /proc/self/cgroup'
if [ "$rc" = 0 ] && grep -q '^hello from the jail$' "$out" && [ "$(field outcome "$st")" = exited ]; then
  pass no-limits "$(summary), tool's cgroup $(grep '^0::' "$out" | cut -c4-), peak $(field peak_memory_bytes "$st") bytes"
else
  fail no-limits "$(summary): $(why)"
fi

# --- memory: a bomb under --memory 64M is OOM-killed ------------------------------------------------
ooms_before=$(dmesg | grep -c 'Memory cgroup out of memory')
run_jail memory --memory 64M -- /bin/busybox awk 'BEGIN { s = "0123456789abcdef"; while (1) s = s s }'
ooms=$(($(dmesg | grep -c 'Memory cgroup out of memory') - ooms_before))
peak=$(field peak_memory_bytes "$st")
if [ "$rc" = 137 ] && [ "$(field outcome "$st")" = oom ] && [ "${peak:-0}" -gt 0 ] &&
  [ "${peak:-0}" -le $((64 << 20)) ]; then
  pass memory "$(summary), peak $peak bytes (limit $((64 << 20))), kernel memcg OOM kills: $ooms"
else
  fail memory "want exit 137, outcome oom, 0 < peak <= 64 MiB; got $(summary), peak ${peak:-?}, kernel memcg OOM kills: $ooms: $(why)"
fi

# --- pids: a fork bomb under --pids 32 is contained --------------------------------------------------
# The tool tries 200 background processes and says how many it got; ash exits when fork fails.
run_jail pids --pids 32 --timeout 60s -- /bin/busybox sh -c \
  'i=0; while [ $i -lt 200 ]; do sleep 20 & i=$((i + 1)); echo $i; done'
forked=$(tail -1 "$out")
t0=$(now_cs)
alive=$(sh -c 'echo alive' 2>&1)
after=$(($(now_cs) - t0))
limit=$(field limit_hit "$st")
if [ "${forked:-0}" -lt 200 ] && [ "$rc" != 0 ] && { [ "$limit" = pids ] || [ "$(field outcome "$st")" = exited ]; } &&
  [ "$rc" != 124 ] && [ "$rc" != 125 ] && [ "$alive" = alive ] && [ "$cs" -lt 3000 ]; then
  pass pids "$(summary), the tool got ${forked:-0} of 200 processes, the VM forks again after $(secs "$after")"
else
  fail pids "want fewer than 200 processes and the tool failing or limit_hit pids; got $(summary), ${forked:-0} processes: $(why)"
fi

# --- cpu: a spin under --cpus 0.5 for 2 s gets about half a core ------------------------------------
run_jail cpu --cpus 0.5 --timeout 30s -- /bin/busybox sh -c \
  'read -r u _ </proc/uptime; end=$((${u%.*}${u#*.} + 200));
   while read -r u _ </proc/uptime && [ "${u%.*}${u#*.}" -lt $end ]; do :; done'
user=$(field cpu_user_ms "$st")
sys=$(field cpu_sys_ms "$st")
wall=$(field wall_ms "$st")
ratio=$(awk -v u="${user:-0}" -v s="${sys:-0}" -v w="${wall:-0}" 'BEGIN { if (w > 0) printf "%.2f", (u + s) / w; else print "none" }')
if [ "$rc" = 0 ] && [ "$ratio" != none ] && awk -v r="$ratio" 'BEGIN { exit !(r >= 0.3 && r <= 0.7) }'; then
  pass cpu "$(summary), cpu ${user} ms user + ${sys} ms sys over ${wall} ms wall = ${ratio} of a core"
else
  fail cpu "want exit 0 and 0.3..0.7 of a core; got $(summary), cpu ${user:-?} ms user + ${sys:-?} ms sys over ${wall:-?} ms wall = $ratio: $(why)"
fi

# --- timeout: sleep 100 under --timeout 1s ends by 1 s + the 2 s grace ------------------------------
# wall_ms is jail's own measure of the tool's run; seen from outside, jail's setup under software
# emulation adds up to a few seconds more.
between() { awk -v v="${1:-x}" -v lo="$2" -v hi="$3" 'BEGIN { exit !(v ~ /^[0-9.]+$/ && v >= lo && v <= hi) }'; }
run_jail timeout --timeout 1s -- /bin/sleep 100
wall=$(field wall_ms "$st")
if [ "$rc" = 124 ] && [ "$(field outcome "$st")" = timeout ] && between "$wall" 950 3000 && [ "$cs" -le 600 ]; then
  pass timeout "$(summary), wall_ms $wall (1 s + grace allows 3000)"
else
  fail timeout "want exit 124, outcome timeout, wall_ms 1000..3000; got $(summary), wall_ms ${wall:-none}: $(why)"
fi

# --- timeout: a tool that ignores SIGTERM is killed after the grace ---------------------------------
run_jail timeout-ignores-term --timeout 1s -- /bin/busybox sh -c 'trap "" TERM; sleep 100; echo woke'
wall=$(field wall_ms "$st")
if [ "$rc" = 124 ] && [ "$(field outcome "$st")" = timeout ] && between "$wall" 2900 4000 && [ "$cs" -le 800 ] &&
  ! grep -q woke "$out"; then
  pass timeout-ignores-term "$(summary), wall_ms $wall (1 s + 2 s grace, then SIGKILL)"
else
  fail timeout-ignores-term "want exit 124, outcome timeout, wall_ms 3000..4000; got $(summary), wall_ms ${wall:-none}: $(why)"
fi

# --- fail closed: a limit asked for where jail cannot enable controllers -----------------------------
# Run straight from init.scope, which holds other processes (this shell, init): the kernel's
# no-internal-process rule forbids enabling controllers there, and jail must not move others.
st=/tmp/crowded.status.json
err=/tmp/crowded.err
rm -f "$st"
t0=$(now_cs)
timeout -s KILL 90 jail --no-cwd --status-file "$st" --memory 64M -- /bin/true >/dev/null 2>"$err"
rc=$?
cs=$(($(now_cs) - t0))
if [ "$rc" = 125 ] && [ "$(field outcome "$st")" = setup_error ]; then
  pass crowded-cgroup "$(summary): $(why)"
else
  fail crowded-cgroup "want exit 125 and outcome setup_error; got $(summary): $(why)"
fi

# --- --cgroup-parent: the jail's cgroup goes under the cgroup named --------------------------------
# Run from the crowded init.scope, but under an empty cgroup of the caller's choosing; the
# parent's memory.events counts its descendants' OOM kills, which shows where the jail was.
mkdir $CG/jails.slice
st=/tmp/cgroup-parent.status.json
err=/tmp/cgroup-parent.err
rm -f "$st"
t0=$(now_cs)
timeout -s KILL 90 jail --no-cwd --status-file "$st" --cgroup-parent /jails.slice --memory 64M -- \
  /bin/busybox awk 'BEGIN { s = "0123456789abcdef"; while (1) s = s s }' >/dev/null 2>"$err"
rc=$?
cs=$(($(now_cs) - t0))
kills=$(awk '$1 == "oom_kill" { print $2 }' $CG/jails.slice/memory.events)
scope_before=$scope_trouble
left_as_found $CG/jails.slice
if [ "$rc" = 137 ] && [ "$(field outcome "$st")" = oom ] && [ "${kills:-0}" -ge 1 ] &&
  [ "$scope_trouble" = "$scope_before" ]; then
  pass cgroup-parent "$(summary), oom_kill $kills in /jails.slice/memory.events, /jails.slice left as found"
else
  fail cgroup-parent "want exit 137, outcome oom counted in /jails.slice; got $(summary), oom_kill ${kills:-?}:${scope_trouble#"$scope_before"} $(why)"
fi

# --- the limits as the kernel holds them, then the caller's SIGTERM -----------------------------------
# While the tool sleeps, read the jail's cgroup files; then SIGTERM jail as a caller would: the
# signal reaches the tool and jail still removes everything.
scopes=$((scopes + 1))
scope=$CG/check-$scopes.scope
mkdir "$scope"
st=/tmp/sigterm.status.json
err=/tmp/sigterm.err
rm -f "$st"
# busybox timeout execs its program in place, so $! is jail's pid.
timeout -s KILL 60 sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' sh "$scope" \
  jail --no-cwd --status-file "$st" --memory 64M --pids 16 --cpus 0.5 -- /bin/sleep 100 >/dev/null 2>"$err" &
jail_pid=$!
# Wait (at most 10 s) until the tool runs in the jail's cgroup.
sleeping() {
  for pid in $(cat "$scope"/jail-[0-9]*/cgroup.procs 2>/dev/null); do
    [ "$(cat /proc/"$pid"/comm 2>/dev/null)" = sleep ] && return 0
  done
  return 1
}
waited=0
while ! sleeping && [ $waited -lt 200 ]; do
  usleep 50000
  waited=$((waited + 1))
done
group=$(ls -d "$scope"/jail-[0-9]*/ 2>/dev/null | head -1)
files="memory.max=$(cat "$group/memory.max" 2>/dev/null) memory.swap.max=$(cat "$group/memory.swap.max" 2>/dev/null)"
files="$files pids.max=$(cat "$group/pids.max" 2>/dev/null) cpu.max=$(cat "$group/cpu.max" 2>/dev/null | tr ' ' /)"
if [ "$files" = "memory.max=67108864 memory.swap.max=0 pids.max=16 cpu.max=50000/100000" ]; then
  pass limits-written "--memory 64M --pids 16 --cpus 0.5 in ${group#"$CG"/}: $files"
else
  fail limits-written "want memory.max=67108864 memory.swap.max=0 pids.max=16 cpu.max=50000/100000 in ${group:-no jail cgroup}; got $files"
fi
t0=$(now_cs)
kill -TERM $jail_pid
wait $jail_pid
rc=$?
cs=$(($(now_cs) - t0))
scope_before=$scope_trouble
left_as_found "$scope"
if [ "$rc" = 143 ] && [ "$(field outcome "$st")" = signaled ] && [ "$(field signal "$st")" = 15 ] &&
  [ "$scope_trouble" = "$scope_before" ]; then
  pass caller-sigterm "SIGTERM to jail once the tool ran (after $(secs $((waited * 5)))): $(summary) after the signal, signal 15, scope left as found"
else
  fail caller-sigterm "want exit 143, outcome signaled by 15, scope left as found; got $(summary), signal $(field signal "$st"):${scope_trouble#"$scope_before"} $(why)"
fi

# --- many runs of every kind leave nothing behind ---------------------------------------------------
codes=""
round=0
while [ $round -lt 3 ]; do
  round=$((round + 1))
  run_jail repeat-ok -- /bin/true
  codes="$codes $rc"
  run_jail repeat-oom --memory 32M -- /bin/busybox awk 'BEGIN { s = "0123456789abcdef"; while (1) s = s s }'
  codes="$codes $rc"
  run_jail repeat-timeout --timeout 1s -- /bin/sleep 100
  codes="$codes $rc"
  run_jail repeat-pids --pids 8 -- /bin/busybox sh -c 'i=0; while [ $i -lt 50 ]; do sleep 5 & i=$((i + 1)); done'
  codes="$codes $rc"
  run_jail repeat-not-found --memory 64M -- /no/such/program
  codes="$codes $rc"
done
left=$(find $CG -type d -name 'jail-*' 2>/dev/null | tr '\n' ' ')
want=" 0 137 124 2 127 0 137 124 2 127 0 137 124 2 127"
if [ "$codes" = "$want" ] && [ -z "$left" ]; then
  pass repeated-runs "15 runs (exited, oom, timeout, pids, not found) x3 gave exit codes$codes; no jail-* cgroup left"
else
  fail repeated-runs "want exit codes$want and nothing left; got$codes; left: ${left:-none}"
fi

# --- cleanup: nothing of jail's is left in the cgroup tree -------------------------------------------
left=$(find $CG -type d -name 'jail-*' 2>/dev/null | tr '\n' ' ')
subtree_init=$(cat $CG/init.scope/cgroup.subtree_control)
if [ -z "$left" ] && [ -z "$scope_trouble" ] && [ -z "$subtree_init" ]; then
  pass cleanup "no jail-* cgroup under $CG after $scopes runs in scopes; every scope left as found and removed"
else
  fail cleanup "left: ${left:-none};${scope_trouble:- scopes fine;} init.scope subtree_control '${subtree_init}'"
fi

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
