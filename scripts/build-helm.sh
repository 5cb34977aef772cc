#!/bin/sh
# build-helm.sh: build the upstream Helm v3 CLI pinned in tools/helm (a
# separate Go module; `tool helm.sh/helm/v3/cmd/helm`) as a static binary,
# cached by the hash of its go.mod and go.sum. Prints the binary path on
# stdout; everything else goes to stderr.
#
# Environment:
#   ORCH_CACHE_DIR  cache root (default /var/cache/orch)
#   FORCE=1         rebuild even when the cached binary exists
set -eu

log() { printf 'build-helm: %s\n' "$*" >&2; }

here=$(CDPATH='' cd -- "$(dirname -- "$0")" && pwd)
src=$(CDPATH='' cd -- "$here/../tools/helm" && pwd)

. "$here/lib/cached-go-build.sh"

ver=$(awk '$1 == "helm.sh/helm/v3" { print $2 }' "$src/go.mod")
[ -n "$ver" ] || { log "helm.sh/helm/v3 missing from $src/go.mod"; exit 1; }
ldflags="-s -w -X helm.sh/helm/v3/internal/version.version=$ver -X helm.sh/helm/v3/internal/version.gitTreeState=clean"

cached_go_build helm "$src" "$ldflags" helm.sh/helm/v3/cmd/helm
