#!/usr/bin/env bash
# A fresh clone has nothing beside it: no test, script or build file may name a path outside the
# repository (a sibling directory beside the checkout, or this machine's own checkout path).
# Paths inside a jail (/work/tool.sh in a test's Spec) are not host paths and are not matched.
# Prints each offending line and exits 1; else says how many files it read.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "${root}"
# The sibling's name is spelled in two pieces, so this file does not name it either.
sibling="sha""red"
pattern="\\.\\./${sibling}|/work/(main|${sibling})\\b|(PROJECT|CMAKE)_SOURCE_DIR\\}/\\.\\.(/|\$)|\\\$\\(dirname[^)]*\\)/\\.\\./\\.\\./\\.\\."
files=()
while IFS= read -r -d '' f; do files+=("$f"); done < <(
  git ls-files -z -- tests scripts fuzz bench examples .ci cmake CMakeLists.txt '*/CMakeLists.txt' 2>/dev/null ||
    find tests scripts fuzz bench examples .ci cmake -type f -print0)
self="tests/repo/self_contained.sh"
hits=0
for f in "${files[@]}"; do
  [[ "$f" == "${self}" || ! -f "$f" ]] && continue
  if grep -nEH "${pattern}" "$f"; then hits=$((hits + 1)); fi
done
if ((hits)); then
  echo "self_contained.sh: ${hits} file(s) name a path outside the repository (above);" \
    "put the file in the repository or read it from the installed system" >&2
  exit 1
fi
echo "self_contained.sh: ${#files[@]} files name no path outside the repository"
