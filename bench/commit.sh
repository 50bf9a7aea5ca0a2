#!/usr/bin/env bash
# What `jail commit` costs against copying the same files: a project of COMMIT_FILES small files
# in 100 directories, every file rewritten in a dry run, then committed (drift check, journal,
# backups, atomic renames, one sync) and undone. The baseline is `cp -a` of the same new tree
# into an empty directory, in the same run, on the same filesystem, followed by one `sync -f`:
# like a commit's renames, it makes a new inode for every file (writing over existing files in
# place, cp makes none, and a commit cannot: the old content is its backup).
#
#   bash bench/commit.sh                 # from bench/run, or alone with JAIL_BIN set
#   COMMIT_FILES=20000 COMMIT_ROUNDS=5 bash bench/commit.sh
set -euo pipefail

bench_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$bench_dir/lib.sh"
files=${COMMIT_FILES:-10000}
rounds=${COMMIT_ROUNDS:-3}

work=$(mktemp -d /var/tmp/jail-bench-commit.XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/project" "$work/sessions" "$work/new"
chmod 700 "$work/sessions"
per_dir=$((files / 100))
for d in $(seq 0 99); do
  mkdir "$work/project/d$d" "$work/new/d$d"
  for f in $(seq 1 "$per_dir"); do
    echo "original $d/$f" >"$work/project/d$d/f$f"
    echo "rewritten $d/$f" >"$work/new/d$d/f$f"
  done
done

"$JAIL_BIN" -q --no-cwd --dry-run --session-dir "$work/sessions" \
  --bind "$work/project:/p" --ro-bind "$work/new:/new" -- cp -r /new/. /p/
id=$(ls "$work/sessions")
now_ms() { date +%s%3N; }

echo "commit of $files rewritten files ($((files / per_dir)) directories), $rounds rounds; $(load_line)"
commit_ms=() undo_ms=() copy_ms=()
for _ in $(seq 1 "$rounds"); do
  start=$(now_ms)
  "$JAIL_BIN" commit --session-dir "$work/sessions" "$id" 2>/dev/null
  commit_ms+=($(($(now_ms) - start)))
  start=$(now_ms)
  "$JAIL_BIN" undo --session-dir "$work/sessions" "$id" 2>/dev/null
  undo_ms+=($(($(now_ms) - start)))
  rm -rf "$work/copy"
  sync -f "$work"
  start=$(now_ms)
  cp -a "$work/new" "$work/copy"
  sync -f "$work/copy"
  copy_ms+=($(($(now_ms) - start)))
done
commit=$(median "${commit_ms[@]}")
undo=$(median "${undo_ms[@]}")
copy=$(median "${copy_ms[@]}")
printf '%-28s %8s ms  %9s files/s\n' "jail commit (median)" "$commit" "$((files * 1000 / (commit > 0 ? commit : 1)))"
printf '%-28s %8s ms  %9s files/s\n' "jail undo (median)" "$undo" "$((files * 1000 / (undo > 0 ? undo : 1)))"
printf '%-28s %8s ms  %9s files/s\n' "cp -a + sync (median)" "$copy" "$((files * 1000 / (copy > 0 ? copy : 1)))"
awk -v c="$commit" -v b="$copy" 'BEGIN { printf "commit / cp -a ratio: %.2f\n", (b > 0 ? c / b : 0) }'
