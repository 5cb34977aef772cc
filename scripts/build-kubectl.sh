#!/bin/sh
# build-kubectl.sh: build the upstream kubectl pinned in tools/kubectl (a
# separate Go module) as a static binary, cached by the hash of its go.mod and
# go.sum. Prints the binary path on stdout; everything else goes to stderr.
#
# Environment:
#   ORCH_CACHE_DIR  cache root (default /var/cache/orch)
#   KUBECTL_OUT     explicit output path (skips the cache naming)
#   FORCE=1         rebuild even when the cached binary exists
set -eu

log() { printf 'build-kubectl: %s\n' "$*" >&2; }

here=$(CDPATH='' cd -- "$(dirname -- "$0")" && pwd)
src="$here/../tools/kubectl"
src=$(CDPATH='' cd -- "$src" && pwd)

. "$here/lib/cached-go-build.sh"

# kubectl reports the Kubernetes version matching its module version
# (k8s.io/kubectl v0.37.2 -> v1.37.2), as upstream's release builds do.
kver=$(awk '$1 == "k8s.io/kubectl" { print $2 }' "$src/go.mod")
[ -n "$kver" ] || { log "k8s.io/kubectl missing from $src/go.mod"; exit 1; }
gitver="v1.${kver#v0.}"
minor=$(echo "$gitver" | cut -d. -f2)
vpkg=k8s.io/component-base/version
ldflags="-s -w -X $vpkg.gitVersion=$gitver -X $vpkg.gitMajor=1 -X $vpkg.gitMinor=$minor \
-X $vpkg.gitTreeState=clean -X $vpkg.buildDate=1970-01-01T00:00:00Z"
ldflags="$ldflags $(echo "$ldflags" | sed 's|k8s.io/component-base/version|k8s.io/client-go/pkg/version|g')"

cached_go_build kubectl "$src" "$ldflags" . "${KUBECTL_OUT:-}"
