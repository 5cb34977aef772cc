#!/usr/bin/env bash
# Builds (or reuses from the cache) the baseline binaries and the bench tool.
# Prints three lines: KUBE_APISERVER=..., KINE=..., BENCH=...
# Cache: ${ORCH_CACHE_DIR:-/var/cache/orch}/bench/<key>/, key = sha256 of tools/bench/go.sum,
# the Go version and this script (its build flags), so a dependency bump rebuilds.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mod="$root/tools/bench"
cache_root="${ORCH_CACHE_DIR:-/var/cache/orch}/bench"
key="$( (cat "$mod/go.sum"; go env GOVERSION; cat "${BASH_SOURCE[0]}") | sha256sum | cut -c1-16)"
cache="$cache_root/$key"
mkdir -p "$cache"
# Drop binaries of other keys (older dependency sets); each set is ~250 MB.
find "$cache_root" -mindepth 1 -maxdepth 1 -type d ! -name "$key" -exec rm -rf {} +

log() { echo "bench/build: $*" >&2; }

# modver MODULE: the version of MODULE in tools/bench's build list.
modver() { (cd "$mod" && go list -m -f '{{.Version}}' "$1"); }

# build_cached NAME PKG CGO LDFLAGS: build PKG into $cache/NAME unless it is already there.
build_cached() {
  local name="$1" pkg="$2" cgo="$3" ldflags="$4" out="$cache/$1"
  if [[ -x "$out" ]]; then
    log "$name: cached at $out"
    return
  fi
  log "$name: building $pkg (CGO_ENABLED=$cgo) (kube-apiserver: ~8-35 min cold on 2 cores, seconds when Go's build cache is warm)"
  local start=$SECONDS
  (cd "$mod" && CGO_ENABLED="$cgo" go build -trimpath -ldflags="-s -w $ldflags" -o "$out.tmp" "$pkg")
  mv "$out.tmp" "$out"
  log "$name: built in $((SECONDS - start)) s"
}

kver="$(modver k8s.io/kubernetes)"
kminor="$(echo "$kver" | cut -d. -f2)"
vpkg=k8s.io/component-base/version
build_cached kube-apiserver k8s.io/kubernetes/cmd/kube-apiserver 0 \
  "-X $vpkg.gitVersion=$kver -X $vpkg.gitMajor=1 -X $vpkg.gitMinor=$kminor -X $vpkg.gitTreeState=clean"
kine_ld="-X github.com/k3s-io/kine/pkg/version.Version=$(modver github.com/k3s-io/kine)"
# kine with CGO uses mattn/go-sqlite3, the SQLite driver k3s ships.
if command -v gcc >/dev/null 2>&1; then
  build_cached kine github.com/k3s-io/kine 1 "$kine_ld"
else
  log "gcc not found: kine falls back to pure-Go modernc.org/sqlite"
  build_cached kine github.com/k3s-io/kine 0 "$kine_ld"
fi

# The bench tool itself is small; always rebuild it (seconds once deps are cached).
(cd "$mod" && CGO_ENABLED=0 go build -trimpath -o "$cache/bench" ./cmd/bench)

echo "KUBE_APISERVER=$cache/kube-apiserver"
echo "KINE=$cache/kine"
echo "BENCH=$cache/bench"
