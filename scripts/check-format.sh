#!/usr/bin/env bash
# Every C and C++ source of the project is as clang-format (.clang-format) writes it. Prints the
# files that are not, and how to fix them; exits 1 if there are any.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
if ! command -v clang-format >/dev/null; then
  echo "clang-format is not installed (scripts/install-deps.sh installs it)" >&2
  exit 1
fi
mapfile -t sources < <(find jail policies runner rootfs egress tests examples bench fuzz \
  -type f \( -name '*.cpp' -o -name '*.hpp' -o -name '*.c' -o -name '*.h' \) | sort)
if ((${#sources[@]} == 0)); then
  echo "no sources found under $root" >&2
  exit 1
fi
echo "checking ${#sources[@]} files with $(clang-format --version)"
# One run over every file; each of its complaints starts with "FILE:LINE:COL:".
if report=$(clang-format --dry-run --Werror "${sources[@]}" 2>&1); then exit 0; fi
mapfile -t unformatted < <(grep -oE '^[^:]+\.(cpp|hpp|c|h):[0-9]+:' <<<"$report" | cut -d: -f1 | sort -u)
if ((${#unformatted[@]} == 0)); then
  echo "$report"  # clang-format failed for another reason: say it
  exit 1
fi
printf 'not clang-formatted: %s\n' "${unformatted[@]}"
echo "fix: clang-format -i ${unformatted[*]}"
exit 1
