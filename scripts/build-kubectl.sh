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

if ! command -v go >/dev/null 2>&1; then
	log "go not found in PATH (run scripts/install-deps.sh)"
	exit 1
fi

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

# The cache key is the module's go.sum and go.mod (plus the link flags, so a
# change of build recipe does not reuse an old binary).
hash=$(printf '%s\n' "$ldflags" | cat "$src/go.sum" "$src/go.mod" - | sha256sum | cut -d" " -f1)
cache="${ORCH_CACHE_DIR:-/var/cache/orch}"
out="${KUBECTL_OUT:-$cache/kubectl-$hash}"

if [ -x "$out" ] && [ "${FORCE:-0}" != 1 ]; then
	log "reusing $out"
	printf '%s\n' "$out"
	exit 0
fi

mkdir -p "$(dirname -- "$out")"
tmp="$out.tmp.$$"
trap 'rm -f "$tmp"' EXIT INT TERM
start=$(date +%s)
log "building kubectl from $src into $out"
(
	cd "$src"
	CGO_ENABLED=0 GOFLAGS="${GOFLAGS:-} -mod=readonly" \
		go build -trimpath -buildvcs=false -ldflags "$ldflags" -o "$tmp" .
)
mv -f "$tmp" "$out"
trap - EXIT INT TERM
log "built in $(($(date +%s) - start))s"
printf '%s\n' "$out"
