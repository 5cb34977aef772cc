#!/bin/sh
# install-etcd.sh: install etcd (Debian 12's etcd-server package, etcd 3.4)
# for the tests of orch's external-etcd datastore (datastore/etcdstore,
# test/integration etcd tests). Optional: orch itself never needs etcd.
# Run as root; idempotent; the tests run it when `etcd` is not on PATH.
# The package's systemd unit is not started (tests run their own etcd).
set -eu
if command -v etcd >/dev/null 2>&1; then
	exit 0
fi
# Test packages run in parallel: one installer at a time.
exec 9>/var/lock/orch-install-etcd.lock
flock 9
if command -v etcd >/dev/null 2>&1; then
	exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt_get() { apt-get -o DPkg::Lock::Timeout=300 "$@"; }
if ! apt_get install -y --no-install-recommends etcd-server; then
	apt_get update
	apt_get install -y --no-install-recommends etcd-server
fi
# On a host with systemd the package starts its own etcd on 2379: stop it.
if command -v systemctl >/dev/null 2>&1; then
	systemctl disable --now etcd >/dev/null 2>&1 || true
fi
command -v etcd >/dev/null 2>&1
