#!/usr/bin/env bash
# The old name of bench/run, kept so existing instructions keep working.
exec bash "$(dirname "${BASH_SOURCE[0]}")/run" "$@"
