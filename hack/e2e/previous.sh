#!/usr/bin/env bash
# The release before v1beta1, which test/e2e/upgrade_test.go installs and then
# upgrades to today's chart: its commit is test/e2e/testdata/upgrade/COMMIT,
# its chart is kept under test/e2e/testdata/upgrade/chart (committed, so the
# test reads exactly what that release shipped), and its manager is built
# from the commit's own source, taken from git.
#
#   hack/e2e/previous.sh chart         rewrite the kept chart from git
#   hack/e2e/previous.sh manager DIR   build the previous manager into DIR/manager
#
# The manager is built like today's (hack/e2e/images.sh), from
# `git archive COMMIT`, once per commit: DIR/commit names what DIR/manager
# was built from. A clone without the commit (a shallow one) cannot build
# it: that is an error saying how to fetch it, never a skipped test.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
data=$repo/test/e2e/testdata/upgrade
commit=$(tr -d '[:space:]' <"$data/COMMIT")
# What to remove on exit, whether the build succeeded or not.
scratch=
trap 'if [[ -n "$scratch" ]]; then rm -rf "$scratch"; fi' EXIT

have_commit() {
	if ! git -C "$repo" cat-file -e "$commit^{commit}" 2>/dev/null; then
		cat >&2 <<-EOM
		e2e: this clone lacks commit $commit, the release before v1beta1 that the
		upgrade test installs (test/e2e/testdata/upgrade/COMMIT); a shallow clone?
		Fetch it, then run again:
		    git fetch --unshallow    # or: git fetch origin $commit
		EOM
		exit 1
	fi
}

chart() {
	have_commit
	scratch=$(mktemp -d)
	git -C "$repo" archive "$commit" charts/servicewatch | tar -x -C "$scratch"
	rm -rf "$data/chart"
	mv "$scratch/charts/servicewatch" "$data/chart"
	echo ">> e2e: $data/chart is the chart of $commit"
}

manager() {
	local dir=${1:?usage: previous.sh manager DIR}
	if [[ -x "$dir/manager" && "$(cat "$dir/commit" 2>/dev/null)" == "$commit" ]]; then
		echo ">> e2e: the manager of $commit is built ($dir/manager)"
		return
	fi
	have_commit
	echo ">> e2e: building the manager of $commit (the release before v1beta1)"
	mkdir -p "$dir"
	dir=$(cd "$dir" && pwd)
	scratch=$(mktemp -d "$dir/src.XXXXXX")
	git -C "$repo" archive "$commit" go.mod go.sum api cmd internal | tar -x -C "$scratch"
	rm -f "$dir/manager" "$dir/commit"
	(cd "$scratch" && CGO_ENABLED=0 GOTOOLCHAIN=local go build -trimpath -ldflags="-s -w" -o "$dir/manager.tmp" ./cmd/manager)
	mv "$dir/manager.tmp" "$dir/manager"
	echo "$commit" >"$dir/commit"
}

case "${1:-}" in
chart) chart ;;
manager) manager "${2:-}" ;;
*)
	echo "usage: $0 chart | manager DIR" >&2
	exit 2
	;;
esac
