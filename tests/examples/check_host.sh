#!/usr/bin/env bash
# Runs an example plugin host and checks what it printed.
#   check_host.sh answers|timeout HOST [HOST-ARGS...]
# answers: every request answered by the jailed plugin, which then exited 0.
# timeout: the plugin hangs on its last request and the jail's --timeout ends it.
set -uo pipefail
mode=$1
shift
output=$("$@" 2>&1)
status=$?
printf '%s\n' "$output"
echo "--- the host exited with $status"

failed=0
expect() {
  if ! grep -qF -- "$1" <<<"$output"; then
    echo "MISSING from the output: $1"
    failed=1
  fi
}

# The plugin's answers, as the plugin (examples/plugin_host/plugin.py) computes them.
expect '<- {"id":1,"result":5}'
expect '<- {"id":2,"result":"JAILED PLUGINS"}'
expect '<- {"id":3,"result":4}'
expect '"can_read_shadow":false'
expect '"home_files":[]'
expect 'plugin stderr: plugin: ready'
case $mode in
  answers)
    expect 'answered 4 of 4 requests'
    expect '"outcome":"exited","exit_code":0'
    expect 'plugin stderr: plugin: stdin closed, bye'
    [[ $status == 0 ]] || { echo "the host should exit 0"; failed=1; }
    ;;
  timeout)
    expect '-> {"id":5,"method":"sleep","params":[3600]}'
    expect 'answered 4 of 5 requests'
    expect '"outcome":"timeout"'
    expect '"limit_hit":"wall_time"'
    [[ $status == 1 ]] || { echo "the host should exit 1"; failed=1; }
    ;;
  *)
    echo "unknown mode $mode"
    exit 2
    ;;
esac
exit $failed
