#!/usr/bin/env bash
# Every relative link in the top-level docs names a file that exists in the repository, so a
# page that is moved or renamed fails a test instead of leaving readers a dead link.
#
# Checked: README.md, CONTRIBUTING.md, SECURITY.md, CHANGELOG.md and docs/*.md. A link is [text](target) or
# ![alt](target); a target may end in #anchor (the anchor itself is not checked). Skipped:
# http(s) links, pure #anchors, and links inside code (fenced blocks and `spans`), which are
# examples, not links. A target is taken from the linking file's directory, or from the
# repository's root when it starts with '/', as GitHub takes it; one that leads out of the
# repository is broken too.
#
# Prints each broken link as FILE: LINK and exits 1; otherwise prints how many links it checked
# and exits 0. Runs from any directory: the repository is found from this script's own path.
set -euo pipefail

repo=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/../.." && pwd -P)

shopt -s nullglob
files=("$repo/README.md" "$repo/CONTRIBUTING.md" "$repo/SECURITY.md" "$repo/CHANGELOG.md" "$repo"/docs/*.md)

checked=0
broken=0

# One "FILE<TAB>TARGET" line per link, code left out. awk rather than a bash loop: one process
# for every file instead of one per line.
list_links() {
  awk '
    FNR == 1 { fence = 0 }
    /^[ \t]*(```|~~~)/ { fence = !fence; next }
    fence { next }
    {
      line = $0
      gsub(/`[^`]*`/, "", line)
      while (match(line, /\]\([^)]*\)/)) {
        print FILENAME "\t" substr(line, RSTART + 2, RLENGTH - 3)
        line = substr(line, RSTART + RLENGTH)
      }
    }
  ' "$@"
}

for file in "${files[@]:0:3}"; do
  if [[ ! -f $file ]]; then
    echo "${file#"$repo"/}: the file itself is missing"
    broken=$((broken + 1))
  fi
done

existing=()
for file in "${files[@]}"; do
  [[ -f $file ]] && existing+=("$file")
done

while IFS=$'\t' read -r file link; do
  target=$link
  # <path with spaces> and [text](path "title") forms: the path alone.
  if [[ $target == \<*\>* ]]; then
    target=${target#<}
    target=${target%%>*}
  else
    target=${target%% *}
  fi
  case $target in
    http://* | https://* | \#*) continue ;;
  esac
  checked=$((checked + 1))
  path=${target%%#*}
  path=${path%%\?*}
  path=${path//%20/ }
  if [[ -z $path ]]; then
    resolved=""
  elif [[ $path == /* ]]; then
    resolved=$(realpath -m -- "$repo$path")
  else
    resolved=$(realpath -m -- "$(dirname -- "$file")/$path")
  fi
  if [[ -z $resolved || ! -e $resolved || ($resolved != "$repo" && $resolved != "$repo"/*) ]]; then
    echo "${file#"$repo"/}: $link"
    broken=$((broken + 1))
  fi
done < <(((${#existing[@]} > 0)) && list_links "${existing[@]}")

if ((broken > 0)); then
  echo "$broken broken link(s) of $checked checked"
  exit 1
fi
echo "checked $checked relative links in ${#existing[@]} files: all resolve"
