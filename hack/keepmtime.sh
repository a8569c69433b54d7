#!/usr/bin/env bash
# Usage: hack/keepmtime.sh PATH... -- COMMAND [ARG...]
#
# Runs COMMAND, then gives back their old modification time to the files
# and directories under each PATH that COMMAND rewrote with the same
# content. The generators of make manifests and make generate rewrite every
# file they own; go test's cache takes a file read by a test as changed
# when its modification time is new, so without this `make test` would run
# every test that reads a CRD or walks the source tree again.
set -euo pipefail

paths=()
while [[ $# -gt 0 && "$1" != "--" ]]; do
	paths+=("$1")
	shift
done
[[ $# -gt 1 ]] || { echo "usage: $0 PATH... -- COMMAND [ARG...]" >&2; exit 2; }
shift

snapshot=$(mktemp -d)
trap 'rm -rf "$snapshot"' EXIT
for p in "${paths[@]}"; do
	if [[ -e "$p" ]]; then
		mkdir -p "$snapshot/$(dirname "$p")"
		cp -a "$p" "$snapshot/$p"
	fi
done

"$@"

# Files first, then directories deepest first: giving a file its time back
# does not touch its directory's.
(cd "$snapshot" && find . -type f) | while IFS= read -r f; do
	if [[ -f "$f" ]] && cmp -s "$snapshot/$f" "$f"; then
		touch -r "$snapshot/$f" "$f"
	fi
done
(cd "$snapshot" && find . -mindepth 1 -type d | sort -r) | while IFS= read -r d; do
	if [[ -d "$d" ]] && [[ "$(cd "$snapshot/$d" && ls -A)" == "$(cd "$d" && ls -A)" ]]; then
		touch -r "$snapshot/$d" "$d"
	fi
done
