#!/usr/bin/env bash
# Every option that `jail --help` (and its subcommands' --help) lists is in the man page, and no
# other: man_covers_help.sh JAIL MANPAGE
set -euo pipefail
jail=$1
manpage=$2
rendered=$(groff -man -Tascii -P-cbou "$manpage")
help=$(
  "$jail" --help
  "$jail" doctor --help
  "$jail" explain --help
  "$jail" diff --help
  "$jail" policy learn --help
  for sub in explain bpf diff import export; do "$jail" policy "$sub" --help; done
  "$jail" rootfs build --help
  "$jail" rootfs check --help
  for sub in changes commit undo discard sessions; do "$jail" "$sub" --help; done
  "$jail" export-oci --help  # its own flag, --bundle, is named in its usage line
)
missing=0
for option in $(grep -oE -- '--[a-z][a-z-]+' <<<"$help" | sort -u); do
  if ! grep -qF -- "$option" <<<"$rendered"; then
    echo "jail --help lists $option, the man page does not"
    missing=1
  fi
done
# And no option in the man page that jail does not have.
for option in $(grep -oE -- '--[a-z][a-z-]+' <<<"$rendered" | sort -u); do
  if ! grep -qF -- "$option" <<<"$help"; then
    echo "the man page documents $option, jail --help does not list it"
    missing=1
  fi
done
exit $missing
