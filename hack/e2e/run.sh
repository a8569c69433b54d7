#!/usr/bin/env bash
# What `make test-e2e` runs once the binaries are built: the images, a
# one-node cluster, the end-to-end tests of test/e2e against it, and the
# teardown, on success, failure or interrupt, with a check that nothing of
# the cluster is left.
#
#   K8S_BIN=... ENVTEST_BIN=... HELM=... PROMETHEUS=... hack/e2e/run.sh
#
# E2E_RUN picks tests (go test -run); E2E_KEEP=1 leaves the cluster running
# after the tests for a look around (then: hack/e2e/cluster.sh down).
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
cd "$repo"
: "${K8S_BIN:?}" "${ENVTEST_BIN:?}" "${HELM:?}" "${PROMETHEUS:?}"
export K8S_BIN ENVTEST_BIN
: "${E2E_DIR:=$repo/bin/e2e}"
export E2E_LOG_DIR=${E2E_LOG_DIR:-$E2E_DIR/logs}
cluster=$repo/hack/e2e/cluster.sh

if [[ $EUID -ne 0 ]]; then
	echo "make test-e2e runs a kubelet and containerd: it needs root" >&2
	exit 1
fi

# One cluster per machine: its addresses and directories are fixed. A second
# run (another checkout on a shared machine) waits its turn rather than fail.
exec 9>/run/servicewatch-e2e.lock
if ! flock -n 9; then
	echo ">> e2e: another make test-e2e is running on this machine; waiting for it (lock /run/servicewatch-e2e.lock, up to ${E2E_LOCK_WAIT:-3600}s)" >&2
	if ! flock -w "${E2E_LOCK_WAIT:-3600}" 9; then
		echo "another make test-e2e still holds /run/servicewatch-e2e.lock" >&2
		exit 1
	fi
fi

t0=$SECONDS
teardown() {
	local rc=$?
	trap - EXIT INT TERM
	if [[ "${E2E_KEEP:-}" == 1 && $rc -eq 0 ]]; then
		echo ">> e2e: E2E_KEEP=1: the cluster stays up; $("$cluster" env | grep KUBECONFIG)"
		exit 0
	fi
	echo ">> e2e: tearing the cluster down"
	"$cluster" down || rc=1
	"$cluster" check || rc=1
	echo ">> e2e: done in $((SECONDS - t0))s, exit $rc; logs in $E2E_LOG_DIR"
	exit "$rc"
}
trap teardown EXIT
trap 'echo ">> e2e: interrupted" >&2; exit 130' INT TERM

# A run killed outright (SIGKILL) leaves its cluster behind: clear it first.
"$cluster" down
rm -rf "$E2E_LOG_DIR"
mkdir -p "$E2E_LOG_DIR"

hack/e2e/images.sh "$E2E_DIR"
"$cluster" up "$E2E_DIR"
eval "$("$cluster" env)"
export HELM PROMETHEUS E2E_REPO=$repo

echo ">> e2e: go test -tags e2e ./test/e2e"
go test -tags e2e -count=1 -timeout 30m -v ${E2E_RUN:+-run "$E2E_RUN"} ./test/e2e 2>&1 | tee "$E2E_LOG_DIR/go-test.log"
