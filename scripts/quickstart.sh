#!/usr/bin/env bash
# One command from a fresh Debian machine (as root) to a running single-node
# cluster: installs what orch needs, builds orch from this checkout into
# /usr/local/bin and runs `orch server` in the foreground (Ctrl-C stops it).
# Extra arguments are passed to `orch server`.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(id -u)" != 0 ]; then
	echo "scripts/quickstart.sh: run as root" >&2
	exit 1
fi
./scripts/install-deps.sh >&2
export PATH="$PATH:/usr/local/go/bin:/usr/lib/go/bin"
echo "== building orch" >&2
# shellcheck disable=SC2046 # the flags are words
make build OUT=bin >&2 || CGO_ENABLED=0 go build $(scripts/lib/go-build-flags.sh) -o bin/orch .
install -m 0755 bin/orch /usr/local/bin/orch
echo "== starting orch server (kubeconfig: /etc/orch/orch.yaml)" >&2
exec /usr/local/bin/orch server "$@"
