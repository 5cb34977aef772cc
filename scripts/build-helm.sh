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

command -v go >/dev/null 2>&1 || { log "go not found in PATH (run scripts/install-deps.sh)"; exit 1; }

ver=$(awk '$1 == "helm.sh/helm/v3" { print $2 }' "$src/go.mod")
[ -n "$ver" ] || { log "helm.sh/helm/v3 missing from $src/go.mod"; exit 1; }
ldflags="-s -w -X helm.sh/helm/v3/internal/version.version=$ver -X helm.sh/helm/v3/internal/version.gitTreeState=clean"

hash=$(printf '%s\n' "$ldflags" | cat "$src/go.sum" "$src/go.mod" - | sha256sum | cut -d" " -f1)
cache="${ORCH_CACHE_DIR:-/var/cache/orch}"
out="$cache/helm-$hash"

if [ -x "$out" ] && [ "${FORCE:-0}" != 1 ]; then
	log "reusing $out"
	printf '%s\n' "$out"
	exit 0
fi

mkdir -p "$cache"
tmp="$out.tmp.$$"
trap 'rm -f "$tmp"' EXIT INT TERM
start=$(date +%s)
log "building helm $ver from $src into $out"
(
	cd "$src"
	CGO_ENABLED=0 GOFLAGS="${GOFLAGS:-} -mod=readonly" \
		go build -trimpath -buildvcs=false -ldflags "$ldflags" -o "$tmp" helm.sh/helm/v3/cmd/helm
)
mv -f "$tmp" "$out"
trap - EXIT INT TERM
log "built in $(($(date +%s) - start))s"
printf '%s\n' "$out"
