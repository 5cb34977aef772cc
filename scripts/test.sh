#!/usr/bin/env bash
# Runs orch's whole test suite: unit tests, client-go integration tests against
# real `orch server` processes, the kubectl smoke suite and the crash test.
# Run as root on Debian; installs what it needs first (scripts/install-deps.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

if [ "$(id -u)" != 0 ]; then
	echo "scripts/test.sh: run as root (the agent tests program netns, iptables and cgroups)" >&2
	exit 1
fi

"$root/scripts/install-deps.sh" >&2
# install-deps.sh puts a Go toolchain in one of these when the host has none.
export PATH="$PATH:/usr/local/go/bin:/usr/lib/go/bin:/root/go/bin"
export ORCH_CACHE_DIR="${ORCH_CACHE_DIR:-/var/cache/orch}"

echo "== building orch and kubectl" >&2
bin=$(mktemp -d /tmp/orch-test-bin.XXXXXX)
trap 'rm -rf "$bin"' EXIT
# shellcheck disable=SC2046 # the flags are words
CGO_ENABLED=0 go build $("$root/scripts/lib/go-build-flags.sh") -o "$bin/orch" .
export ORCH_BINARY="$bin/orch"
ORCH_KUBECTL=$("$root/scripts/build-kubectl.sh")
export ORCH_KUBECTL

echo "== go vet" >&2
go vet ./...

echo "== go test" >&2
go test -count=1 -timeout 25m -p 2 ./...
