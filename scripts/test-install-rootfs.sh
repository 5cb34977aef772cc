#!/bin/sh
# test-install-rootfs.sh [systemd|openrc]: make (once) the Debian 12 root
# file system that `make test-install` (test/install) boots in
# systemd-nspawn containers, and print its path. It holds systemd and dbus
# (or, for openrc, sysvinit-core and OpenRC with supervise-daemon: the init
# system of Alpine, which cannot be downloaded here), iproute2, iptables,
# curl and procps, not containerd: the containerd and runc packages are only
# downloaded into apt's cache, so the installer's apt-get install works on
# a box without network, as on a real one with a warm cache.
# Installs debootstrap and systemd-container (systemd-nspawn) when missing.
#
# Environment:
#   ORCH_TEST_ROOTFS_DIR  cache dir (default /var/cache/orch/test-install)
#   DEBIAN_MIRROR         default http://deb.debian.org/debian
set -eu

dir="${ORCH_TEST_ROOTFS_DIR:-/var/cache/orch/test-install}"
flavour="${1:-systemd}"
case "$flavour" in
systemd) rootfs="$dir/debian-bookworm"; init_pkgs="systemd,systemd-sysv,dbus" ;;
openrc) rootfs="$dir/debian-bookworm-openrc"; init_pkgs="sysvinit-core" ;; # + openrc below
*) echo "usage: $0 [systemd|openrc]" >&2; exit 2 ;;
esac
mirror="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"

log() { printf 'test-install-rootfs: %s\n' "$*" >&2; }

need=""
command -v debootstrap >/dev/null 2>&1 || need="$need debootstrap"
command -v systemd-nspawn >/dev/null 2>&1 || need="$need systemd-container"
if [ -n "$need" ]; then
	log "installing$need"
	apt-get update -q >/dev/null
	# shellcheck disable=SC2086 # a list of packages
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $need >/dev/null
fi

if [ ! -d "$rootfs" ]; then
	mkdir -p "$dir"
	tmp="$rootfs.tmp.$$"
	trap 'rm -rf "$tmp"' EXIT
	log "debootstrap bookworm into $rootfs (about a minute)"
	debootstrap --variant=minbase \
		--include="$init_pkgs,iproute2,iptables,ca-certificates,curl,kmod,procps" \
		bookworm "$tmp" "$mirror" >"$dir/debootstrap-$flavour.log" 2>&1 || { tail -20 "$dir/debootstrap-$flavour.log" >&2; exit 1; }
	cp /etc/resolv.conf "$tmp/etc/resolv.conf"
	if [ "$flavour" = openrc ]; then
		# debootstrap resolves sysvinit-core's rc to sysv-rc, which
		# conflicts with openrc: apt replaces it afterwards.
		DEBIAN_FRONTEND=noninteractive chroot "$tmp" apt-get install -y -q --no-install-recommends openrc >/dev/null
	fi
	[ ! -e "$tmp/debootstrap" ] || { echo "debootstrap did not finish: see $tmp/debootstrap" >&2; exit 1; }
	chroot "$tmp" apt-get install --download-only -y -q --no-install-recommends containerd runc >/dev/null
	rm -f "$tmp/etc/hostname"
	mv "$tmp" "$rootfs"
	trap - EXIT
fi
printf '%s\n' "$rootfs"
