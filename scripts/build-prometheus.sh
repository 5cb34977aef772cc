#!/bin/sh
# build-prometheus.sh: build the upstream Prometheus server pinned in
# tools/prometheus (a separate Go module; `tool
# github.com/prometheus/prometheus/cmd/prometheus`) as a static binary,
# cached by the hash of its go.mod and go.sum, for the e2e scrape test
# (test/e2e TestPrometheus). Prints the binary path on stdout; everything
# else goes to stderr. Debian's `prometheus` package cannot serve: it is
# built without kubernetes_sd_configs (tools/prometheus/README.md).
#
# Environment:
#   ORCH_CACHE_DIR  cache root (default /var/cache/orch)
#   FORCE=1         rebuild even when the cached binary exists
set -eu

log() { printf 'build-prometheus: %s\n' "$*" >&2; }

here=$(CDPATH='' cd -- "$(dirname -- "$0")" && pwd)
src=$(CDPATH='' cd -- "$here/../tools/prometheus" && pwd)

. "$here/lib/cached-go-build.sh"

ver=$(awk '$1 == "github.com/prometheus/prometheus" { print $2 }' "$src/go.mod")
[ -n "$ver" ] || { log "github.com/prometheus/prometheus missing from $src/go.mod"; exit 1; }
ldflags="-s -w -X github.com/prometheus/common/version.Version=$ver -X github.com/prometheus/common/version.Branch=orch-tools"

cached_go_build prometheus "$src" "$ldflags" github.com/prometheus/prometheus/cmd/prometheus
