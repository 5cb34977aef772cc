#!/usr/bin/env bash
# release.sh (`make release`): build orch's release assets, laid out like a
# GitHub release so that any plain HTTP server serving $DIST is a release
# host for scripts/install.sh (docs/releases.md):
#
#   $DIST/install.sh                          the installer (curl .../install.sh | sh -)
#   $DIST/channels/<channel>                  one line: the version the channel names
#   $DIST/<version>/orch                      linux/amd64
#   $DIST/<version>/orch-arm64                linux/arm64
#   $DIST/<version>/orch-armhf                linux/arm, GOARM=7
#   $DIST/<version>/orch-airgap-images-<arch>.tar.zst
#   $DIST/<version>/sha256sum-<arch>.txt      sha256sum format: binary + bundle
#   $DIST/<version>/orch-images.txt           the images in the bundles (one a line)
#   $DIST/<version>/install.sh
#
# <arch> is amd64, arm64 or arm, as k3s names its assets. The binaries are
# static (CGO_ENABLED=0) and stripped (-trimpath -s -w), with version, commit
# and build date set by -X. The air-gap bundle holds the images orch's own
# default set-up needs: none today (no pause container, DNS, local-path
# storage and service proxy are built in), so it is a valid OCI image layout
# with an empty index, which the agent imports as "no images".
#
# Environment:
#   VERSION           release version (default: git describe --tags --always
#                     --dirty; v0.0.0-<sha>[-dirty] when there is no tag)
#   COMMIT            git commit (default: git rev-parse HEAD, -dirty if modified)
#   DIST              output directory (default: dist)
#   RELEASE_ARCHS     subset of "amd64 arm64 arm" (default: all three)
#   RELEASE_CHANNELS  channels to point at VERSION (default: "stable latest";
#                     empty: none)
#   GO                go command (default: go)
#   SOURCE_DATE_EPOCH build date and bundle mtimes (default: now / commit time)
set -euo pipefail
cd "$(dirname "$0")/.."

GO="${GO:-go}"
DIST="${DIST:-dist}"
RELEASE_ARCHS="${RELEASE_ARCHS:-amd64 arm64 arm}"
RELEASE_CHANNELS="${RELEASE_CHANNELS-stable latest}"
PKG=github.com/orch/orch/internal/version
KUBECTL_LDFLAGS=$(scripts/lib/kubectl-ldflags.sh)
# The images the default set-up needs, per arch, as files of an OCI layout
# (none today; see docs/releases.md before adding any).
AIRGAP_IMAGES=()

log() { printf 'release: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

# default_version prints git describe's answer, v0.0.0-<sha>[-dirty] when no
# tag is reachable.
default_version() {
	local d
	d=$(git describe --tags --always --dirty 2>/dev/null) || die "not a git checkout: set VERSION"
	case "$d" in
	v[0-9]*) printf '%s\n' "$d" ;;
	*) printf 'v0.0.0-%s\n' "$d" ;;
	esac
}

default_commit() {
	local c
	c=$(git rev-parse HEAD 2>/dev/null) || { echo unknown; return; }
	if [ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ]; then
		c="$c-dirty"
	fi
	printf '%s\n' "$c"
}

# need_zstd installs zstd with apt-get when it is missing and we may.
need_zstd() {
	command -v zstd >/dev/null 2>&1 && return 0
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
		log "zstd missing: apt-get install -y zstd"
		DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends zstd >&2 ||
			{ apt-get update >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends zstd >&2; } ||
			die "could not install zstd with apt-get"
		return 0
	fi
	die "zstd is needed for the air-gap bundles: install it (apt-get install zstd) and re-run"
}

# asset_name prints the binary's file name for arch, as k3s names them.
asset_name() {
	case "$1" in
	amd64) echo orch ;;
	arm64) echo orch-arm64 ;;
	arm) echo orch-armhf ;;
	*) die "unknown arch $1 (want amd64, arm64 or arm)" ;;
	esac
}

# build_binary arch out: a static, stripped orch for linux/arch.
build_binary() {
	local arch=$1 out=$2 goarm="" flags
	[ "$arch" = arm ] && goarm=7
	flags=$(GO="$GO" scripts/lib/go-build-flags.sh)
	log "building linux/$arch${goarm:+ GOARM=$goarm} -> $out"
	# shellcheck disable=SC2086 # the flags are words
	CGO_ENABLED=0 GOOS=linux GOARCH="$arch" GOARM="$goarm" "$GO" build -buildvcs=false $flags \
		-ldflags "-s -w -X $PKG.Version=$VERSION -X $PKG.GitCommit=$COMMIT -X $PKG.BuildDate=$BUILD_DATE $KUBECTL_LDFLAGS" \
		-o "$out" .
}

# build_bundle out: the air-gap bundle, an OCI image layout tar (zstd).
# Reproducible: sorted names, fixed owner, modes and mtime.
build_bundle() {
	local out=$1 layout
	layout=$(mktemp -d "$TMP/layout.XXXXXX")
	mkdir -p "$layout/blobs/sha256"
	printf '{"imageLayoutVersion":"1.0.0"}\n' >"$layout/oci-layout"
	printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json","manifests":[]}\n' \
		>"$layout/index.json"
	[ "${#AIRGAP_IMAGES[@]}" = 0 ] || die "AIRGAP_IMAGES is not empty: teach build_bundle to add them"
	tar -C "$layout" --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$EPOCH" \
		--mode=u=rwX,go=rX --format=ustar -cf - oci-layout index.json blobs | zstd -q -19 -o "$out"
}

# release_arch dir arch: binary, bundle and checksums of one arch in dir.
release_arch() {
	local dir=$1 arch=$2 bin bundle
	bin=$(asset_name "$arch")
	bundle="orch-airgap-images-$arch.tar.zst"
	build_binary "$arch" "$dir/$bin"
	chmod 0755 "$dir/$bin"
	build_bundle "$dir/$bundle"
	(cd "$dir" && sha256sum "$bin" "$bundle" >"sha256sum-$arch.txt")
}

main() {
	VERSION="${VERSION:-$(default_version)}"
	COMMIT="${COMMIT:-$(default_commit)}"
	case "$VERSION" in
	*[!A-Za-z0-9._+-]* | "" | .*) die "VERSION $VERSION: use letters, digits and . _ + - only" ;;
	esac
	EPOCH="${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}"
	BUILD_DATE=$(date -u -d "@${SOURCE_DATE_EPOCH:-$(date +%s)}" +%Y-%m-%dT%H:%M:%SZ)
	local arch
	for arch in $RELEASE_ARCHS; do asset_name "$arch" >/dev/null; done
	command -v "$GO" >/dev/null 2>&1 || die "$GO not found"
	need_zstd

	mkdir -p "$DIST"
	TMP=$(mktemp -d "$DIST/.release.XXXXXX")
	trap 'rm -rf "$TMP"' EXIT
	local stage="$TMP/$VERSION"
	mkdir -p "$stage"
	for arch in $RELEASE_ARCHS; do
		release_arch "$stage" "$arch"
	done
	: >"$stage/orch-images.txt"
	if [ "${#AIRGAP_IMAGES[@]}" != 0 ]; then printf '%s\n' "${AIRGAP_IMAGES[@]}" >"$stage/orch-images.txt"; fi
	cp scripts/install.sh "$stage/install.sh"
	chmod 0755 "$stage" "$stage/install.sh"
	chmod 0644 "$stage"/*.txt "$stage"/*.tar.zst

	# Publish: the version dir first, then the installer and channels that
	# point at it, so a reader never sees a channel naming a missing release.
	rm -rf "${DIST:?}/$VERSION"
	mv "$stage" "$DIST/$VERSION"
	cp "$DIST/$VERSION/install.sh" "$TMP/install.sh" && mv "$TMP/install.sh" "$DIST/install.sh"
	local ch
	for ch in $RELEASE_CHANNELS; do
		mkdir -p "$DIST/channels"
		printf '%s\n' "$VERSION" >"$TMP/$ch" && mv "$TMP/$ch" "$DIST/channels/$ch"
	done
	log "release $VERSION (commit $COMMIT) in $DIST/$VERSION${RELEASE_CHANNELS:+, channels: $RELEASE_CHANNELS}"
	ls -l "$DIST/$VERSION" >&2
}

main "$@"
