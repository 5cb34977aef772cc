#!/bin/sh
# install-deps.sh: install what orch's build and test suite need on Debian 12
# (run as root; idempotent). Debian packages are installed only when missing,
# after a single `apt-get update`. When `go` is missing or older than go.mod
# wants, the Go toolchain is installed into $GO_INSTALL_DIR from the Go module
# proxy (module golang.org/toolchain, checked against sum.golang.org by the
# go command), using Debian's go 1.19 unpacked in a temporary directory only
# as the downloader; nothing Go-related is installed through apt.
#
# Environment:
#   GO_VERSION      wanted Go version (default: from go.mod next to this script)
#   GO_INSTALL_DIR  where the toolchain goes (default /usr/local/go)
#   GO_BIN_DIR      where go/gofmt symlinks go (default /usr/local/bin)
#   GOPROXY         module proxy (default https://proxy.golang.org)
#   EXTRA_PACKAGES  more Debian packages to ensure
set -eu

PACKAGES="ca-certificates git make gcc iproute2 iptables containerd runc busybox-static procps psmisc curl docker-registry skopeo strace zstd"
GO_INSTALL_DIR="${GO_INSTALL_DIR:-/usr/local/go}"
GO_BIN_DIR="${GO_BIN_DIR:-/usr/local/bin}"
BOOTSTRAP_GO_PKG="golang-1.19-go"

log() { printf 'install-deps: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

here=$(CDPATH='' cd -- "$(dirname -- "$0")" && pwd)
installed_pkgs=""
installed_go=""
tmp=""
cleanup() { if [ -n "$tmp" ]; then rm -rf "$tmp"; fi; }
trap cleanup EXIT
trap 'exit 1' INT TERM

# wanted_go_version prints the highest of go.mod's `go` and `toolchain` lines.
wanted_go_version() {
	if [ -n "${GO_VERSION:-}" ]; then
		printf '%s\n' "${GO_VERSION#go}"
		return
	fi
	mod="$here/../go.mod"
	[ -f "$mod" ] || die "no go.mod at $mod; set GO_VERSION"
	awk '$1 == "go" || $1 == "toolchain" { sub(/^go/, "", $2); print $2 }' "$mod" | sort -V | tail -n 1
}

# version_ge A B: true when version A >= version B.
version_ge() {
	[ "$(printf '%s\n%s\n' "$1" "$2" | sort -V | head -n 1)" = "$2" ]
}

# go_version_of GO prints the version of the go binary GO, or nothing.
go_version_of() {
	if [ -n "$1" ] && [ -x "$1" ]; then
		GOTOOLCHAIN=local "$1" env GOVERSION 2>/dev/null | sed -n 's/^go\([0-9][0-9.]*\).*/\1/p'
	fi
}

missing_packages() {
	for p in $PACKAGES ${EXTRA_PACKAGES:-}; do
		if ! dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$'; then
			printf '%s\n' "$p"
		fi
	done
}

go_arch() {
	case "$(dpkg --print-architecture)" in
	amd64) echo amd64 ;; arm64) echo arm64 ;; armhf | armel) echo armv6l ;;
	i386) echo 386 ;; ppc64el) echo ppc64le ;; s390x) echo s390x ;; riscv64) echo riscv64 ;;
	*) die "unsupported architecture $(dpkg --print-architecture)" ;;
	esac
}

apt_updated=0
apt_update_once() {
	if [ "$apt_updated" = 0 ]; then
		log "apt-get update"
		apt-get update >&2
		apt_updated=1
	fi
}

install_packages() {
	missing=$(missing_packages | tr '\n' ' ')
	if [ -z "${missing% }" ]; then
		log "Debian packages already installed"
		return
	fi
	apt_update_once
	log "installing: $missing"
	# shellcheck disable=SC2086 # word splitting of the package list is intended
	DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $missing >&2
	installed_pkgs="${missing% }"
	# Debian's docker-registry (used by the image-pull tests, which start
	# their own on loopback) enables a registry on :5000 on every address
	# where systemd runs; orch's test machines must not serve one.
	if command -v systemctl >/dev/null 2>&1 && [ -d /run/systemd/system ]; then
		systemctl disable --now docker-registry.service >/dev/null 2>&1 || true
	fi
}

# ensure_go installs Go when neither PATH nor GO_INSTALL_DIR has one new enough.
ensure_go() {
	want=$(wanted_go_version)
	path_go=$(command -v go 2>/dev/null || true)
	have=$(go_version_of "$path_go")
	if [ -n "$have" ] && version_ge "$have" "$want"; then
		log "go $have at $path_go satisfies go.mod ($want)"
		return
	fi
	local_have=$(go_version_of "$GO_INSTALL_DIR/bin/go")
	if [ -z "$local_have" ] || ! version_ge "$local_have" "$want"; then
		log "go ${have:-missing} is older than $want: installing go$want into $GO_INSTALL_DIR"
		download_go "$want"
		installed_go="go$want in $GO_INSTALL_DIR"
	fi
	mkdir -p "$GO_BIN_DIR"
	ln -sfn "$GO_INSTALL_DIR/bin/go" "$GO_BIN_DIR/go"
	ln -sfn "$GO_INSTALL_DIR/bin/gofmt" "$GO_BIN_DIR/gofmt"
	log "linked $GO_BIN_DIR/go -> $GO_INSTALL_DIR/bin/go"
}

# download_go VERSION fetches golang.org/toolchain@v0.0.1-goVERSION.linux-ARCH
# with a bootstrap go and moves it into GO_INSTALL_DIR.
download_go() {
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/orch-deps.XXXXXX")
	chmod 0755 "$tmp"
	mkdir "$tmp/deb"
	chown _apt "$tmp/deb" 2>/dev/null || true # apt downloads as _apt
	apt_update_once
	(cd "$tmp/deb" && apt-get download "$BOOTSTRAP_GO_PKG" >&2)
	dpkg-deb -x "$tmp"/deb/"$BOOTSTRAP_GO_PKG"_*.deb "$tmp/boot"
	boot=$(ls -d "$tmp"/boot/usr/lib/go-*/bin/go)
	arch=$(go_arch) || exit 1
	mod="golang.org/toolchain@v0.0.1-go$1.linux-$arch"
	log "downloading $mod with $("$boot" version)"
	mkdir "$tmp/work"
	(cd "$tmp/work" && env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME="$tmp" \
		GOPATH="$tmp/gopath" GOFLAGS=-modcacherw GOTOOLCHAIN=local \
		GOPROXY="${GOPROXY:-https://proxy.golang.org}" GOSUMDB="${GOSUMDB:-sum.golang.org}" \
		"$boot" mod download -json "$mod") >"$tmp/dl.json"
	dir=$(sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p' "$tmp/dl.json")
	sum=$(sed -n 's/^[[:space:]]*"Sum": "\(.*\)",$/\1/p' "$tmp/dl.json")
	if [ -z "$dir" ] || [ ! -d "$dir" ]; then
		die "download of $mod failed"
	fi
	log "verified $mod $sum"
	install_go_tree "$dir" "$1"
}

# install_go_tree DIR VERSION replaces GO_INSTALL_DIR with DIR's toolchain.
install_go_tree() {
	new="$GO_INSTALL_DIR.new.$$"
	rm -rf "$new"
	mkdir -p "$(dirname -- "$GO_INSTALL_DIR")"
	cp -R "$1" "$new"
	chmod -R u+w,go-w,a+rX "$new"
	# module zips carry no file modes: make the commands executable again
	find "$new/bin" "$new/pkg/tool" -type f -exec chmod 0755 {} +
	got=$(go_version_of "$new/bin/go")
	[ "$got" = "$2" ] || die "installed toolchain reports go$got, want go$2"
	if [ -e "$GO_INSTALL_DIR" ]; then
		mv "$GO_INSTALL_DIR" "$GO_INSTALL_DIR.old.$$"
	fi
	mv "$new" "$GO_INSTALL_DIR"
	rm -rf "$GO_INSTALL_DIR.old.$$"
}

main() {
	[ "$(id -u)" = 0 ] || die "run as root"
	command -v apt-get >/dev/null 2>&1 || die "apt-get not found: Debian 12 is expected"
	install_packages
	ensure_go
	echo "install-deps: Debian packages installed: ${installed_pkgs:-none}"
	echo "install-deps: Go toolchain installed: ${installed_go:-none}"
}

main "$@"
