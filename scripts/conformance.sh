#!/usr/bin/env bash
# conformance.sh runs the upstream Kubernetes v1.37.1 [Conformance] specs
# (tools/conformance: e2e.test, ginkgo, kubectl and the test images, built
# from source and cached in ~/.cache/orch-conformance) against a throw-away
# orch cluster of scripts/testcluster.sh: node 1 runs `orch server
# --disable-agent` and an `orch agent`, nodes 2..N an agent each, every
# node in its own network namespace on a private bridge.
#
#   scripts/conformance.sh [--nodes N] [--focus REGEX] [--no-serial] [--keep] [-- run.sh args]
#
# A parallel pass of the [Conformance] specs without [Serial]/[Disruptive]
# is followed by a serial pass of the [Serial] ones (run.sh --serial). The
# The kit's read-only registry serves the test images on the host's end of
# the cluster's private bridge during the run, and the agents mirror
# registry.k8s.io to it, so specs that pull with imagePullPolicy Always pass.
# JUnit/JSON reports and summary land in $CACHE/runs/<date>-<N>n; the
# markdown table for docs/conformance.md is printed at the end (and kept
# as table.md there). The cluster is removed afterwards unless --keep.
# Needs root; what is missing (containerd, runc, Go, debootstrap, jq, gcc) is installed by install-deps.sh.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
KIT=$ROOT/tools/conformance
CACHE=${ORCH_CONFORMANCE_CACHE:-$HOME/.cache/orch-conformance}
NODES=${CONFORMANCE_NODES:-1} FOCUS="" SERIAL=1 KEEP=0 EXTRA=() REGISTRY_PORT=15000
die() { echo "conformance: $*" >&2; exit 2; }
log() { echo "[conformance $(date +%H:%M:%S)] $*" >&2; }
while [ $# -gt 0 ]; do
	case $1 in
	--nodes) NODES=$2; shift 2 ;;
	--focus) FOCUS=$2; shift 2 ;;
	--no-serial) SERIAL=0; shift ;;
	--keep) KEEP=1; shift ;;
	--) shift; EXTRA=("$@"); break ;;
	-h | --help) sed -n '2,17p' "$0"; exit 0 ;;
	*) die "unknown option $1 (see --help)" ;;
	esac
done
[ "$(id -u)" = 0 ] || die "run as root (the cluster needs network namespaces, cgroups and iptables)"

# deps: what the cluster needs (containerd, runc, iptables, ...: install-deps.sh) and the kit's own tools.
deps() {
	EXTRA_PACKAGES="debootstrap jq" sh "$ROOT/scripts/install-deps.sh" >/dev/null
}

# build: the kit's binaries (the Go build cache makes a rebuild cheap), its
# images once (they are reproducible; IMAGES=1 rebuilds), and orch.
build() {
	"$KIT/build.sh" bins
	if [ "${IMAGES:-0}" = 1 ] || ! ls "$CACHE"/images/*.tar >/dev/null 2>&1; then
		"$KIT/build.sh" images
	fi
	ORCH=$OUT/orch # per run: runs from several checkouts may share $CACHE
	COMMIT=$(cd "$ROOT" && git rev-parse --short HEAD)$(cd "$ROOT" && git diff --quiet HEAD || echo "+changes")
	# shellcheck disable=SC2046 # the flags are words
	(cd "$ROOT" && CGO_ENABLED=0 go build $("$ROOT/scripts/lib/go-build-flags.sh") -o "$ORCH" .)
}

ID=cf$(head -c2 /dev/urandom | od -An -tx1 | tr -d ' \n')
cleanup() {
	if ((KEEP)); then
		log "cluster kept: KUBECONFIG=$KUBECONFIG; remove it with scripts/testcluster.sh down --name $ID"
		return
	fi
	"$ROOT/scripts/testcluster.sh" down --name "$ID" >/dev/null 2>&1 || true
}

main() {
	deps
	OUT=$CACHE/runs/$(date +%Y%m%d-%H%M%S)-${NODES}n-$ID
	mkdir -p "$OUT"
	build
	trap cleanup EXIT
	log "starting a $NODES-node cluster ($ID)"
	# The agents pull registry.k8s.io from the kit's read-only registry on the
	# host's end of the private bridge (specs with imagePullPolicy Always).
	eval "$("$ROOT/scripts/testcluster.sh" up --name "$ID" --nodes "$NODES" --backend vxlan --binary "$ORCH" \
		--registry-port "$REGISTRY_PORT")"
	local args=(-k "$KUBECONFIG" -o "$OUT" -p "${CONFORMANCE_PROCS:-4}" --registry "$BRIDGE_IP:$REGISTRY_PORT") i
	for i in $(seq 1 "$NODES"); do args+=(-i "$DIR/n$i/agent/images"); done
	((SERIAL)) && args+=(--serial)
	[ -z "$FOCUS" ] || args+=(-f "$FOCUS")
	local rc=0
	"$KIT/run.sh" "${args[@]}" ${EXTRA[@]+-- "${EXTRA[@]}"} || rc=$?
	"$KIT/table.sh" "$OUT/report.json" "$NODES" "$COMMIT" >"$OUT/table.md" || true
	cat "$OUT/table.md"
	cp -r "$DIR/logs" "$OUT/orch-logs" 2>/dev/null || true
	log "results in $OUT (rc $rc)"
	return "$rc"
}
main
