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
mapfile -t sources < <(find jail policies runner rootfs tests examples bench fuzz \
  -type f \( -name '*.cpp' -o -name '*.hpp' -o -name '*.c' -o -name '*.h' \) | sort)
if ((${#sources[@]} == 0)); then
  echo "no sources found under $root" >&2
  exit 1
fi
unformatted=()
for file in "${sources[@]}"; do
  if ! clang-format --dry-run --Werror "$file" >/dev/null 2>&1; then unformatted+=("$file"); fi
done
echo "checked ${#sources[@]} files with $(clang-format --version)"
if ((${#unformatted[@]} > 0)); then
  printf 'not clang-formatted: %s\n' "${unformatted[@]}"
  echo "fix: clang-format -i ${unformatted[*]}"
  exit 1
fi
