#!/usr/bin/env bash
# Builds the images of the end-to-end cluster as OCI archives, without a
# registry or a Docker engine: static Go binaries put into images made
# `from scratch` by buildah, written as oci-archive: files for
# `ctr images import`.
#
#   hack/e2e/images.sh OUT_DIR
#
# Images (name in the archive -> what it runs):
#   servicewatch:dev                the manager, as the Dockerfile builds it
#   servicewatch-e2e/fakecloud:e2e  the fake cloud, and /probe for the tests
#                                   (also their CloudEvents receiver)
#   servicewatch-e2e/pause:e2e      the Pod sandbox (containerd's sandbox_image)
#   servicewatch:<commit, 7 digits> the manager of the release before v1beta1
#                                   (hack/e2e/previous.sh), which the upgrade
#                                   test upgrades from
#
# The manager image is the Dockerfile's: /manager built with CGO_ENABLED=0
# -trimpath -ldflags="-s -w", a CA bundle, USER 65532:65532, ENTRYPOINT
# /manager (distroless/static-debian12:nonroot is those and tzdata, which the
# manager does not use). An archive is rebuilt only when its binaries change.
set -euo pipefail
out=${1:?usage: images.sh OUT_DIR}
repo=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$out/bin"

echo ">> e2e: building the static binaries of the images"
(cd "$repo" && CGO_ENABLED=0 GOTOOLCHAIN=local go build -trimpath -ldflags="-s -w" -o "$out/bin/" \
	./cmd/manager ./cmd/fakecloud ./hack/e2e/probe ./hack/e2e/pause)

# buildah keeps its layers in a scratch store of its own, removed on exit, so
# nothing of the build stays in /var/lib/containers.
store=$(mktemp -d "$out/buildah.XXXXXX")
trap 'buildah --root "$store/root" --runroot "$store/run" --storage-driver vfs rm --all >/dev/null 2>&1 || true; rm -rf "$store"' EXIT
bah() { buildah --root "$store/root" --runroot "$store/run" --storage-driver vfs "$@"; }

# image NAME ARCHIVE USER ENTRYPOINT BINARY...: an image of binaries of
# $out/bin.
image() { image_from "$out/bin" "$@"; }

# image_from DIR NAME ARCHIVE USER ENTRYPOINT BINARY...: an image of
# binaries of DIR.
image_from() {
	local dir=$1 name=$2 archive=$3 user=$4 entrypoint=$5
	shift 5
	local sum
	sum=$(cd "$dir" && sha256sum "$@" /etc/ssl/certs/ca-certificates.crt | sha256sum | cut -d' ' -f1)
	sum="$sum $name $user $entrypoint"
	if [[ -f "$out/$archive" && "$(cat "$out/$archive.sum" 2>/dev/null)" == "$sum" ]]; then
		echo ">> e2e: image $name is current ($archive)"
		return
	fi
	echo ">> e2e: building image $name ($archive)"
	local ctr
	ctr=$(bah from scratch)
	local b
	for b in "$@"; do
		bah copy --chmod 0755 "$ctr" "$dir/$b" "/$b" >/dev/null
	done
	bah copy --chmod 0644 "$ctr" /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt >/dev/null
	bah config --user "$user" --entrypoint "[\"$entrypoint\"]" --cmd '' \
		--label org.opencontainers.image.source=servicewatch-e2e "$ctr"
	rm -f "$out/$archive" "$out/$archive.sum"
	bah commit --quiet --format oci "$ctr" "oci-archive:$out/$archive.tmp:$name" >/dev/null
	mv "$out/$archive.tmp" "$out/$archive"
	echo "$sum" >"$out/$archive.sum"
	bah rm "$ctr" >/dev/null
}

image docker.io/library/servicewatch:dev manager.tar 65532:65532 /manager manager
image localhost/servicewatch-e2e/fakecloud:e2e fakecloud.tar 65532:65532 /fakecloud fakecloud probe
image localhost/servicewatch-e2e/pause:e2e pause.tar 65535:65535 /pause pause

# The previous manager, tagged apart from today's: the upgrade test installs
# it with the previous chart, then upgrades both.
previous=$(tr -d '[:space:]' <"$repo/test/e2e/testdata/upgrade/COMMIT")
"$repo/hack/e2e/previous.sh" manager "$out/previous"
image_from "$out/previous" "docker.io/library/servicewatch:${previous:0:7}" manager-previous.tar 65532:65532 /manager manager
