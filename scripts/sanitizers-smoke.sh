#!/usr/bin/env bash
# Runs an ASan+UBSan-built `jail` executable through its main paths (help, a run as root and as
# an unprivileged caller, limits in a cgroup, a timeout, status JSON, the policy tools), so
# a sanitizer report in the executable's parent side fails the subset run of
# scripts/sanitizers.sh. The caller sets ASAN_OPTIONS/UBSAN_OPTIONS; a report aborts jail, which
# shows as a wrong exit code or missing output here, with the report on stderr above it.
#
#   bash scripts/sanitizers-smoke.sh PATH/TO/jail
set -uo pipefail
jail="$1"
work="$(mktemp -d /var/tmp/jail-asan-smoke.XXXXXX)"
chmod 755 "${work}"
trap 'rm -rf "${work}"' EXIT
failed=0

# check NAME EXPECTED_EXIT COMMAND...: runs COMMAND, compares its exit code.
check() {
  local name="$1" want="$2"
  shift 2
  local got=0
  "$@" >"${work}/out" 2>"${work}/err" || got=$?
  if [[ "${got}" == "${want}" ]]; then
    echo "smoke: ${name}: ok (exit ${got})"
  else
    echo "smoke: ${name}: FAILED (exit ${got}, expected ${want})"
    sed 's/^/  stdout: /' "${work}/out" | head -20
    sed 's/^/  stderr: /' "${work}/err" | head -60
    failed=1
  fi
}
# expect NAME TEXT: the last command's stdout holds TEXT.
expect() {
  if grep -qF -- "$2" "${work}/out"; then
    echo "smoke: $1: ok"
  else
    echo "smoke: $1: FAILED (stdout lacks '$2')"
    sed 's/^/  stdout: /' "${work}/out" | head -20
    failed=1
  fi
}

check help 0 "${jail}" --help
expect help-text "--policy"
check root-echo 0 "${jail}" --no-cwd -- /bin/sh -c 'echo inside-uid-$(id -u)'
expect root-echo-output "inside-uid-"
check exit-code 7 "${jail}" --no-cwd -- /bin/sh -c 'exit 7'
check limits 0 "${jail}" --no-cwd --memory 64M --pids 32 --timeout 20s -- /bin/true
check status-file 0 "${jail}" --no-cwd --status-file "${work}/status.json" -- /bin/true
if grep -q '"exit_code": *0' "${work}/status.json"; then
  echo "smoke: status-json: ok"
else
  echo "smoke: status-json: FAILED"; cat "${work}/status.json"; failed=1
fi
check timeout 0 sh -c "'${jail}' --no-cwd --timeout 1s --kill-grace 1s -- /bin/sleep 30; test \$? -ne 0"
check unprivileged 0 setpriv --reuid=65534 --regid=65534 --clear-groups \
  "${jail}" --no-cwd -- /bin/sh -c 'echo unpriv-$(id -u)'
expect unprivileged-output "unpriv-"
check policy-check 0 "${jail}" policy check default
check policy-explain 0 "${jail}" policy explain default
exit "${failed}"
