#!/bin/sh
# install.sh: install orch as a service, k3s style.
#
#   curl -sfL <release-host>/install.sh | sh -                            # a server
#   curl -sfL <release-host>/install.sh | ORCH_URL=https://srv:6443 ORCH_TOKEN=K10... sh -   # an agent
#   curl -sfL <release-host>/install.sh | INSTALL_ORCH_EXEC="server --cluster-init" sh -
#   ./scripts/install.sh                                                  # from a checkout
#
# It downloads the release binary for this machine's arch and its
# sha256sum-<arch>.txt, verifies the checksum before anything on the box is
# changed, installs the binary, orch-killall.sh and orch-uninstall.sh,
# installs containerd and runc from the distribution when they are missing,
# checks the kernel (orch check-config), writes /etc/orch/config.yaml when
# absent, and writes, enables and starts a systemd unit (Type=notify) or,
# on Alpine, an OpenRC service. Run again with nothing changed it changes
# nothing and does not restart the service.
#
# Where the binary comes from, first match wins:
#   INSTALL_ORCH_SKIP_DOWNLOAD=true  the binary already in the bin dir (air gap)
#   ORCH_BINARY=<file>               a local file
#   ORCH_RELEASE_URL set             a release host (docs/releases.md)
#   a checkout with go in PATH       built from the checkout this script is in
#   otherwise                        the default release host
#
# Environment (k3s's names, K3S -> ORCH):
#   ORCH_RELEASE_URL            release host, <base>/<version>/<asset> and
#                               <base>/channels/<channel> (default $DEFAULT_RELEASE_URL)
#   INSTALL_ORCH_VERSION        version to install (default: the channel's)
#   INSTALL_ORCH_CHANNEL        channel (default stable)
#   INSTALL_ORCH_BIN_DIR        where orch and the scripts go (default /usr/local/bin)
#   INSTALL_ORCH_SKIP_DOWNLOAD  true: install no binary, use the one in the bin dir
#   INSTALL_ORCH_EXEC           command and flags: "server --cluster-init",
#                               "agent", or flags only (for the default command)
#   ORCH_URL, ORCH_TOKEN, ORCH_TOKEN_FILE
#                               the server to join: an agent by default
#   INSTALL_ORCH_NAME           service name orch-<name> (default orch / orch-agent)
#   INSTALL_ORCH_SKIP_ENABLE    true: do not enable the service
#   INSTALL_ORCH_SKIP_START     true: do not start it
#   INSTALL_ORCH_SYMLINK        auto (default: kubectl and ctr links to orch
#                               where no such command exists), skip, or force
#   INSTALL_ORCH_SKIP_DEPS      true: do not install containerd/runc
#   INSTALL_ORCH_INIT           auto (default), systemd, openrc or none
#   INSTALL_ORCH_SYSTEMD        true or false: the same as INIT systemd / none
#   ORCH_ROOT                   install under this root instead of / (tests);
#                               calls no systemctl or package manager
#   ORCH_ARCH                   the machine name uname -m would print (tests)
set -eu

DEFAULT_RELEASE_URL=https://github.com/orch/orch/releases/download

info() { printf '[INFO]  %s\n' "$*" >&2; }
fatal() { printf '[ERROR] %s\n' "$*" >&2; exit 1; }

ROOT="${ORCH_ROOT:-}"
BIN_DIR="${INSTALL_ORCH_BIN_DIR:-${ORCH_BIN_DIR:-/usr/local/bin}}"
CONFIG_DIR="$ROOT/etc/orch"
UNIT_DIR="$ROOT/etc/systemd/system"
INIT_DIR="$ROOT/etc/init.d"
TMP_DIR=""
CHANGED=""

cleanup() { if [ -n "$TMP_DIR" ]; then rm -rf "$TMP_DIR"; fi; }
trap cleanup EXIT
trap 'exit 1' INT TERM

is_true() { [ "${1:-false}" = true ]; }

# setup_mode sets CMD (server or agent), ARGS (the rest of
# INSTALL_ORCH_EXEC) and SERVICE from the environment.
setup_mode() {
	# shellcheck disable=SC2086 # INSTALL_ORCH_EXEC is a word list
	set -- ${INSTALL_ORCH_EXEC:-}
	case "${1:-}" in
	server | agent) CMD=$1; shift ;;
	*) if [ -n "${ORCH_URL:-}" ]; then CMD=agent; else CMD=server; fi ;;
	esac
	ARGS="$*"
	if [ "$CMD" = agent ]; then
		[ -n "${ORCH_URL:-}" ] || fatal "an agent needs ORCH_URL (https://server:6443)"
		[ -n "${ORCH_TOKEN:-}${ORCH_TOKEN_FILE:-}" ] || fatal "an agent needs ORCH_TOKEN or ORCH_TOKEN_FILE"
	fi
	if [ -n "${ORCH_URL:-}" ]; then
		case "$ORCH_URL" in https://*) ;; *) fatal "ORCH_URL must be an https:// URL, got $ORCH_URL" ;; esac
	fi
	case "${ORCH_TOKEN:-}${ORCH_URL:-}${ORCH_TOKEN_FILE:-}" in
	*[!A-Za-z0-9:._~+/=@%\[\]-]*) fatal "ORCH_URL, ORCH_TOKEN or ORCH_TOKEN_FILE holds characters unsafe for an environment file" ;;
	esac
	case "$ARGS" in *[\"\'\\\$\`]*) fatal "INSTALL_ORCH_EXEC may not hold quotes, backslashes, \$ or backquotes: $ARGS" ;; esac
	if [ -n "${INSTALL_ORCH_NAME:-}" ]; then
		case "$INSTALL_ORCH_NAME" in *[!a-z0-9-]* | -*) fatal "INSTALL_ORCH_NAME must be lower-case letters, digits and -: $INSTALL_ORCH_NAME" ;; esac
		SERVICE="orch-$INSTALL_ORCH_NAME"
	elif [ "$CMD" = agent ]; then
		SERVICE=orch-agent
	else
		SERVICE=orch
	fi
}

# setup_init picks the service manager: systemd, openrc or none
# (INSTALL_ORCH_INIT; INSTALL_ORCH_SYSTEMD=true/false as before).
setup_init() {
	INIT=${INSTALL_ORCH_INIT:-auto}
	case "${INSTALL_ORCH_SYSTEMD:-auto}" in
	true) INIT=systemd ;;
	false) [ "$INIT" != auto ] || INIT=none ;;
	auto) ;;
	*) fatal "INSTALL_ORCH_SYSTEMD must be auto, true or false" ;;
	esac
	case "$INIT" in
	systemd | openrc | none) ;;
	auto)
		INIT=none
		if [ -d /run/systemd/system ] && command -v systemctl >/dev/null 2>&1; then
			INIT=systemd
		elif command -v openrc-run >/dev/null 2>&1 || [ -x /sbin/openrc-run ]; then
			INIT=openrc
		fi
		;;
	*) fatal "INSTALL_ORCH_INIT must be auto, systemd, openrc or none" ;;
	esac
}

# setup_arch sets ARCH (amd64, arm64, arm) and SUFFIX (the binary's name
# suffix on the release host).
setup_arch() {
	arch=${ORCH_ARCH:-$(uname -m)}
	case "$arch" in
	x86_64 | amd64) ARCH=amd64; SUFFIX="" ;;
	aarch64 | arm64)
		if [ "$(getconf LONG_BIT 2>/dev/null || echo 64)" = 32 ]; then
			ARCH=arm; SUFFIX=-armhf
		else
			ARCH=arm64; SUFFIX=-arm64
		fi
		;;
	arm*) ARCH=arm; SUFFIX=-armhf ;;
	*) fatal "unsupported architecture $arch (orch releases are for amd64, arm64 and armv7)" ;;
	esac
}

# checkout_dir prints the source tree this script belongs to, if any.
checkout_dir() {
	case "$0" in */install.sh) ;; *) return 0 ;; esac
	dir=$(CDPATH='' cd -- "$(dirname -- "$0")/.." 2>/dev/null && pwd) || return 0
	if [ -f "$dir/go.mod" ] && grep -q '^module github.com/orch/orch$' "$dir/go.mod"; then
		printf '%s\n' "$dir"
	fi
}

download() {
	if command -v curl >/dev/null 2>&1; then
		curl -sfL -o "$1" "$2"
	elif command -v wget >/dev/null 2>&1; then
		wget -qO "$1" "$2"
	else
		fatal "neither curl nor wget found"
	fi
}

# resolve_version sets VERSION from INSTALL_ORCH_VERSION or the channel.
resolve_version() {
	if [ -n "${INSTALL_ORCH_VERSION:-}" ]; then
		VERSION=$INSTALL_ORCH_VERSION
	else
		channel=${INSTALL_ORCH_CHANNEL:-stable}
		download "$TMP_DIR/channel" "$RELEASE_URL/channels/$channel" ||
			fatal "cannot read channel $channel at $RELEASE_URL/channels/$channel"
		VERSION=$(head -n 1 "$TMP_DIR/channel" | tr -d '\r')
	fi
	case "$VERSION" in
	"" | *[!A-Za-z0-9._+-]*) fatal "bad version '$VERSION'" ;;
	esac
}

# download_release fetches and verifies the binary; nothing on the box is
# touched until the checksum matches.
download_release() {
	RELEASE_URL=${ORCH_RELEASE_URL:-$DEFAULT_RELEASE_URL}
	RELEASE_URL=${RELEASE_URL%/}
	resolve_version
	bin="orch$SUFFIX"
	info "downloading orch $VERSION ($ARCH) from $RELEASE_URL"
	download "$TMP_DIR/sha256sum.txt" "$RELEASE_URL/$VERSION/sha256sum-$ARCH.txt" ||
		fatal "download of $RELEASE_URL/$VERSION/sha256sum-$ARCH.txt failed"
	download "$TMP_DIR/orch" "$RELEASE_URL/$VERSION/$bin" ||
		fatal "download of $RELEASE_URL/$VERSION/$bin failed"
	want=$(awk -v f="$bin" '$2 == f || $2 == "*" f { print $1; exit }' "$TMP_DIR/sha256sum.txt")
	[ -n "$want" ] || fatal "sha256sum-$ARCH.txt has no line for $bin"
	got=$(sha256_of "$TMP_DIR/orch")
	[ "$got" = "$want" ] || fatal "checksum mismatch for $bin: got $got, sha256sum-$ARCH.txt says $want; nothing was installed"
	info "verified sha256 $got"
}

sha256_of() {
	if command -v sha256sum >/dev/null 2>&1; then
		sha256sum "$1" | cut -d' ' -f1
	elif command -v shasum >/dev/null 2>&1; then
		shasum -a 256 "$1" | cut -d' ' -f1
	else
		fatal "no sha256sum or shasum to verify the download"
	fi
}

# obtain_binary leaves the binary to install in $TMP_DIR/orch, or sets
# SKIP_BINARY when the one in the bin dir is to be used.
obtain_binary() {
	TMP_DIR=$(mktemp -d "${TMPDIR:-/tmp}/orch-install.XXXXXX")
	SKIP_BINARY=""
	src=$(checkout_dir)
	if is_true "${INSTALL_ORCH_SKIP_DOWNLOAD:-}"; then
		[ -x "$ROOT$BIN_DIR/orch" ] || fatal "INSTALL_ORCH_SKIP_DOWNLOAD=true but $ROOT$BIN_DIR/orch is not an executable"
		info "using the binary already at $BIN_DIR/orch"
		SKIP_BINARY=true
		return
	elif [ -n "${ORCH_BINARY:-}" ]; then
		[ -f "$ORCH_BINARY" ] || fatal "ORCH_BINARY=$ORCH_BINARY is not a file"
		info "using binary $ORCH_BINARY"
		cp "$ORCH_BINARY" "$TMP_DIR/orch"
	elif [ -z "${ORCH_RELEASE_URL:-}" ] && [ -n "$src" ] && command -v go >/dev/null 2>&1; then
		info "building orch from $src"
		# shellcheck disable=SC2046 # the flags are words
		(cd "$src" && CGO_ENABLED=0 go build $(sh scripts/lib/go-build-flags.sh) -ldflags "-s -w" -o "$TMP_DIR/orch" .) ||
			fatal "go build failed in $src"
	else
		download_release
	fi
	chmod 0755 "$TMP_DIR/orch"
}

# put installs file $1 as $2 with mode $3 when its content or mode differs,
# and records the change in CHANGED.
put() {
	if [ -f "$2" ] && cmp -s "$1" "$2" && [ "$(stat -c %a "$2")" = "${3#0}" ]; then
		rm -f "$1"
		return 1
	fi
	chmod "$3" "$1"
	mv -f "$1" "$2"
	CHANGED="$CHANGED $2"
	info "wrote $2"
}

install_binary() {
	[ -z "$SKIP_BINARY" ] || return 0
	mkdir -p "$ROOT$BIN_DIR"
	cp "$TMP_DIR/orch" "$ROOT$BIN_DIR/.orch.tmp.$$"
	put "$ROOT$BIN_DIR/.orch.tmp.$$" "$ROOT$BIN_DIR/orch" 0755 || info "$BIN_DIR/orch is up to date"
}

# create_symlinks links kubectl and ctr to orch (INSTALL_ORCH_SYMLINK).
create_symlinks() {
	mode=${INSTALL_ORCH_SYMLINK:-auto}
	case "$mode" in auto | skip | force) ;; *) fatal "INSTALL_ORCH_SYMLINK must be auto, skip or force" ;; esac
	[ "$mode" != skip ] || return 0
	for cmd in kubectl ctr; do
		link="$ROOT$BIN_DIR/$cmd"
		if [ "$cmd" = ctr ] && ! "$ROOT$BIN_DIR/orch" ctr --help >/dev/null 2>&1; then
			continue
		fi
		if [ -L "$link" ] && [ "$(readlink "$link")" = "$BIN_DIR/orch" ]; then
			continue
		fi
		if [ "$mode" = auto ] && { [ -e "$link" ] || [ -L "$link" ] || { [ -z "$ROOT" ] && command -v "$cmd" >/dev/null 2>&1; }; }; then
			info "skipping the $cmd symlink: $cmd already exists (INSTALL_ORCH_SYMLINK=force replaces it)"
			continue
		fi
		ln -sf "$BIN_DIR/orch" "$link"
		info "symlinked $BIN_DIR/$cmd to orch"
	done
}

write_config() {
	mkdir -p "$CONFIG_DIR"
	cfg="$CONFIG_DIR/config.yaml"
	if [ -e "$cfg" ]; then
		return
	fi
	(
		umask 077
		cat >"$cfg.tmp.$$" <<'CONFIG'
# orch configuration, read by `orch server` and `orch agent`.
# Keys are the command-line flag names; flags given on the command line win.
# Files in /etc/orch/config.yaml.d/*.yaml are merged over this one in order.
# Examples (defaults shown):
# data-dir: /var/lib/orch
# write-kubeconfig-mode: "0600"
# tls-san:
#   - orch.example.com
CONFIG
	)
	put "$cfg.tmp.$$" "$cfg" 0600
}

# install_deps installs containerd and runc from the distribution when the
# agent would need them and they are missing.
install_deps() {
	is_true "${INSTALL_ORCH_SKIP_DEPS:-}" && return 0
	[ -z "$ROOT" ] || return 0
	case " $ARGS " in *" --container-runtime-endpoint"*) return 0 ;; esac
	if [ "$CMD" = server ]; then
		case " $ARGS " in *" --disable-agent "*) return 0 ;; esac
	fi
	missing=""
	command -v containerd >/dev/null 2>&1 || missing="$missing containerd"
	command -v runc >/dev/null 2>&1 || missing="$missing runc"
	[ -n "$missing" ] || return 0
	info "installing$missing from the distribution"
	if command -v apt-get >/dev/null 2>&1; then
		apt_install "$missing"
	elif command -v dnf >/dev/null 2>&1; then
		# shellcheck disable=SC2086
		dnf install -y -q $missing || fatal "dnf install$missing failed (on RHEL, add a repository with containerd first)"
	elif command -v apk >/dev/null 2>&1; then
		# shellcheck disable=SC2086
		apk add --no-cache $missing >/dev/null || fatal "apk add$missing failed (containerd is in Alpine's community repository)"
	else
		fatal "containerd and runc are missing and no apt-get, dnf or apk was found: install them first"
	fi
	stop_distro_containerd "$missing"
}

# apt_install installs packages $1 without starting their services
# (policy-rc.d, Debian's switch for that): orch runs its own containerd,
# and the distribution's would leave state in /run/containerd,
# /var/lib/containerd, /opt/containerd and /etc/cni. The first try uses
# what apt has cached (an offline box); then apt-get update.
apt_install() {
	policy=/usr/sbin/policy-rc.d
	made_policy=""
	if [ ! -e "$policy" ]; then
		printf '#!/bin/sh\n# written by orch install.sh while it installs packages\nexit 101\n' >"$policy"
		chmod 0755 "$policy"
		made_policy=true
	fi
	# shellcheck disable=SC2086 # a list of packages
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $1 >/dev/null 2>&1 ||
		{ apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $1 >/dev/null; } ||
		{ [ -z "$made_policy" ] || rm -f "$policy"; fatal "apt-get install$1 failed"; }
	[ -z "$made_policy" ] || rm -f "$policy"
}

# stop_distro_containerd: orch runs its own containerd; the distribution's
# service, when this script installed it, would only cost memory.
stop_distro_containerd() {
	case "$1" in *containerd*) ;; *) return 0 ;; esac
	if [ "$INIT" = systemd ]; then
		systemctl disable --now containerd.service >/dev/null 2>&1 || true
	elif [ "$INIT" = openrc ]; then
		rc-service containerd stop >/dev/null 2>&1 || true
		rc-update del containerd default >/dev/null 2>&1 || true
	fi
	wants=/etc/systemd/system/multi-user.target.wants/containerd.service
	if [ "$INIT" != systemd ] && [ -L "$wants" ]; then
		# Debian's postinst enables the systemd unit even without systemd:
		# what systemctl disable would remove.
		rm -f "$wants"
	fi
	info "orch runs its own containerd: the distribution's containerd service is disabled"
}

# write_env_file stores the join settings, readable by root only.
write_env_file() {
	f=$1
	(
		umask 077
		: >"$f.tmp.$$"
		for v in ORCH_URL ORCH_TOKEN ORCH_TOKEN_FILE; do
			eval "val=\${$v:-}"
			# shellcheck disable=SC2154 # val is set by the eval above
			[ -n "$val" ] && printf '%s=%s\n' "$v" "$val" >>"$f.tmp.$$"
		done
		if [ "$CMD" = server ] && [ -n "${ORCH_URL:-}" ]; then
			printf 'ORCH_SERVER=%s\n' "$ORCH_URL" >>"$f.tmp.$$"
		fi
	)
	put "$f.tmp.$$" "$f" 0600 || true
}

exec_line() { printf '%s\n' "$BIN_DIR/orch $CMD${ARGS:+ $ARGS}"; }

write_systemd_unit() {
	mkdir -p "$UNIT_DIR"
	write_env_file "$UNIT_DIR/$SERVICE.service.env"
	unit="$UNIT_DIR/$SERVICE.service"
	cat >"$unit.tmp.$$" <<UNIT
[Unit]
Description=orch $CMD: a small Kubernetes-compatible cluster
Documentation=https://github.com/orch/orch
Wants=network-online.target
After=network-online.target

[Install]
WantedBy=multi-user.target

[Service]
Type=notify
EnvironmentFile=-/etc/default/%N
EnvironmentFile=-/etc/systemd/system/%N.service.env
KillMode=process
Delegate=yes
LimitNOFILE=1048576
LimitNPROC=infinity
LimitCORE=infinity
TasksMax=infinity
TimeoutStartSec=0
Restart=always
RestartSec=5s
ExecStartPre=-/sbin/modprobe br_netfilter
ExecStartPre=-/sbin/modprobe overlay
ExecStart=$(exec_line)
UNIT
	put "$unit.tmp.$$" "$unit" 0644 || true
}

write_openrc_script() {
	mkdir -p "$INIT_DIR" "$CONFIG_DIR"
	write_env_file "$CONFIG_DIR/$SERVICE.env"
	script="$INIT_DIR/$SERVICE"
	# shellcheck disable=SC2016 # $RC_SVCNAME etc. are expanded by OpenRC
	{
		printf '#!/sbin/openrc-run\n# written by orch'"'"'s install.sh\n'
		printf 'description="orch %s: a small Kubernetes-compatible cluster"\n' "$CMD"
		printf 'command=%s\n' "$BIN_DIR/orch"
		printf 'command_args="%s"\n' "$CMD${ARGS:+ $ARGS}"
		cat <<'OPENRC'
supervisor=supervise-daemon
respawn_delay=5
respawn_max=0
output_log="/var/log/${RC_SVCNAME}.log"
error_log="/var/log/${RC_SVCNAME}.log"
pidfile="/run/${RC_SVCNAME}.pid"

depend() {
	after network-online
	want cgroups
}

start_pre() {
	ulimit -n 1048576 2>/dev/null || ulimit -n "$(ulimit -H -n)" 2>/dev/null || true
	modprobe br_netfilter 2>/dev/null || true
	modprobe overlay 2>/dev/null || true
	if [ -f "/etc/orch/${RC_SVCNAME}.env" ]; then
		set -a
		. "/etc/orch/${RC_SVCNAME}.env"
		set +a
	fi
}
OPENRC
	} >"$script.tmp.$$"
	put "$script.tmp.$$" "$script" 0755 || true
}

# start_service enables and starts the service; with nothing changed and
# the service running it does nothing.
start_service() {
	if [ -n "$ROOT" ]; then
		info "ORCH_ROOT is set: not starting anything"
		return
	fi
	case "$INIT" in
	systemd) start_systemd ;;
	openrc) start_openrc ;;
	esac
}

start_systemd() {
	[ -z "$CHANGED" ] || systemctl daemon-reload
	if ! is_true "${INSTALL_ORCH_SKIP_ENABLE:-}"; then
		systemctl enable "$SERVICE.service" >/dev/null 2>&1 || fatal "systemctl enable $SERVICE failed"
	fi
	is_true "${INSTALL_ORCH_SKIP_START:-}" && return 0
	if [ -z "$CHANGED" ] && systemctl is-active --quiet "$SERVICE.service"; then
		info "$SERVICE.service is running and nothing changed: not restarting it"
		return
	fi
	info "starting $SERVICE.service (returns when orch is ready)"
	systemctl restart "$SERVICE.service" || fatal "$SERVICE.service did not start: journalctl -u $SERVICE"
	info "$SERVICE.service is running"
}

start_openrc() {
	if ! is_true "${INSTALL_ORCH_SKIP_ENABLE:-}"; then
		rc-update add "$SERVICE" default >/dev/null
	fi
	is_true "${INSTALL_ORCH_SKIP_START:-}" && return 0
	if [ -z "$CHANGED" ] && rc-service "$SERVICE" status >/dev/null 2>&1; then
		info "$SERVICE is running and nothing changed: not restarting it"
		return
	fi
	rc-service "$SERVICE" restart || fatal "$SERVICE did not start: see /var/log/$SERVICE.log"
}

# write_script writes an executable script $1 whose lines after the
# shebang are $2 (its defaults) and whose body is the output of the
# functions named in $3. A changed script does not restart the service.
write_script() {
	{
		printf '#!/bin/sh\n# %s, written by orch'"'"'s install.sh.\n%s\n' "${1##*/}" "$2"
		for body in $3; do "$body"; done
	} >"$1.tmp.$$"
	keep=$CHANGED
	put "$1.tmp.$$" "$1" 0755 || true
	CHANGED=$keep
}

# check_host prints `orch check-config`; failures are reported, not fatal.
check_host() {
	[ -z "$ROOT" ] || return 0
	"$BIN_DIR/orch" check-config >&2 ||
		info "some kernel checks failed (fixes above); orch may not run until they are fixed"
}

write_scripts() {
	case "$BIN_DIR" in *"'"*) fatal "INSTALL_ORCH_BIN_DIR with a single quote is not supported: $BIN_DIR" ;; esac
	services="orch orch-agent"
	case " $services " in *" $SERVICE "*) ;; *) services="$services $SERVICE" ;; esac
	write_script "$ROOT$BIN_DIR/orch-killall.sh" "ORCH_DEFAULT_BIN='$BIN_DIR/orch'
ORCH_DEFAULT_SERVICES='$services'" "names_body killall_body"
	write_script "$ROOT$BIN_DIR/orch-uninstall.sh" "ORCH_DEFAULT_BIN_DIR='$BIN_DIR'
ORCH_DEFAULT_BIN='$BIN_DIR/orch'
ORCH_DEFAULT_SERVICES='$services'" "names_body uninstall_body"
}

# names_body is shared by both scripts: the instance's names come from
# the environment, else from `orch host-names` (which reads the data dir
# from ORCH_DATA_DIR or /etc/orch/config.yaml and derives the rest), else
# the defaults.
names_body() {
	cat <<'NAMES'
set -u
BIN="${ORCH_BIN:-$ORCH_DEFAULT_BIN}"

# load_names sets each ORCH_* name `orch host-names` prints that the
# environment does not set already.
load_names() {
	[ -x "$BIN" ] || return 0
	ln_out=$("$BIN" host-names 2>/dev/null) || return 0
	ln_ifs=$IFS
	IFS='
'
	set -f
	for ln_line in $ln_out; do
		ln_name=${ln_line%%=*}
		case "$ln_name" in
		ORCH_DATA_DIR | ORCH_RUN_DIR | ORCH_BRIDGE | ORCH_DNS_LINK | ORCH_VXLAN_DEVICE | ORCH_NETNS_PREFIX | ORCH_CHAIN_PREFIX | ORCH_CGROUP_ROOT | ORCH_SERVICES) ;;
		*) continue ;;
		esac
		eval "ln_set=\${$ln_name+x}"
		# shellcheck disable=SC2154 # ln_set is set by the eval above
		[ -n "$ln_set" ] || eval "$ln_line" # quoted by orch host-names
	done
	set +f
	IFS=$ln_ifs
}

# implicit_data_dir is the data dir of an orch started without
# --data-dir or ORCH_DATA_DIR: config.yaml's, else the default.
implicit_data_dir() {
	d=""
	[ -x "$BIN" ] && d=$(env -u ORCH_DATA_DIR "$BIN" host-names 2>/dev/null | sed -n "s/^ORCH_DATA_DIR=//p" | tr -d "'")
	printf '%s\n' "${d:-/var/lib/orch}"
}
load_names
NAMES
}

killall_body() {
	cat <<'KILLALL'
# Stops orch and removes what it put on the host: its services, processes,
# the managed containerd with its shims and containers, pod mounts, pod
# network namespaces, orch0, the VXLAN device, orch-dns, the ORCH- iptables
# chains and orch's cgroups. Only orch's own names are touched and every
# step may run again. The names are those `orch host-names` prints for
# the data dir (ORCH_DATA_DIR, else /etc/orch/config.yaml's, else
# /var/lib/orch), so `ORCH_DATA_DIR=/srv/orch2 orch-killall.sh` cleans a
# second instance and leaves the first alone. Each is overridable:
#   ORCH_DATA_DIR      /var/lib/orch      ORCH_RUN_DIR      /run/orch
#   ORCH_BRIDGE        orch0              ORCH_DNS_LINK     orch-dns
#   ORCH_VXLAN_DEVICE  orch.1             ORCH_NETNS_DIR    /run/netns
#   ORCH_NETNS_PREFIX  orch-              ORCH_CHAIN_PREFIX ORCH-
#   ORCH_CGROUP_ROOT   orch               ORCH_SERVICES     "orch orch-agent"
#   ORCH_BIN           the orch binary whose processes are killed
DATA_DIR="${ORCH_DATA_DIR:-/var/lib/orch}"
RUN_DIR="${ORCH_RUN_DIR:-/run/orch}"
BRIDGE="${ORCH_BRIDGE-orch0}"
DNS_LINK="${ORCH_DNS_LINK-orch-dns}"
VXLAN_DEVICE="${ORCH_VXLAN_DEVICE-orch.1}"
NETNS_DIR="${ORCH_NETNS_DIR:-/run/netns}"
NETNS_PREFIX="${ORCH_NETNS_PREFIX:-orch-}"
CHAIN_PREFIX="${ORCH_CHAIN_PREFIX:-ORCH-}"
CGROUP_ROOT="${ORCH_CGROUP_ROOT:-orch}"
SERVICES="${ORCH_SERVICES-$ORCH_DEFAULT_SERVICES}"
IMPLICIT_DATA_DIR=$(implicit_data_dir)

if [ "$(id -u)" != 0 ]; then
	echo "orch-killall.sh: run as root" >&2
	exit 1
fi
for v in "$DATA_DIR" "$RUN_DIR" "$NETNS_DIR"; do
	case "$v" in /?*) ;; *) echo "orch-killall.sh: $v is not an absolute path" >&2; exit 1 ;; esac
done
case "$CGROUP_ROOT" in "" | */* | . | ..) echo "orch-killall.sh: bad ORCH_CGROUP_ROOT" >&2; exit 1 ;; esac

stop_services() {
	for s in $SERVICES; do
		if command -v systemctl >/dev/null 2>&1 && systemctl list-unit-files "$s.service" >/dev/null 2>&1; then
			systemctl stop "$s.service" 2>/dev/null || true
		fi
		if [ -x "/etc/init.d/$s" ] && command -v rc-service >/dev/null 2>&1; then
			rc-service "$s" stop >/dev/null 2>&1 || true
		fi
	done
}

# data_dir_of prints the data dir of orch process $1: its --data-dir
# (-d) flag, else its ORCH_DATA_DIR, else the implicit one; so a second
# instance's processes are not this one's, even from the same binary.
data_dir_of() {
	d=$({ tr '\0' '\n' <"/proc/$1/cmdline"; } 2>/dev/null | awk '
		prev { print; exit } /^--data-dir=/ { sub(/^--data-dir=/, ""); print; exit } /^(--data-dir|-d)$/ { prev = 1 }')
	[ -n "$d" ] || d=$({ tr '\0' '\n' <"/proc/$1/environ"; } 2>/dev/null | sed -n 's/^ORCH_DATA_DIR=//p' | head -n 1)
	[ -n "$d" ] || d=$IMPLICIT_DATA_DIR
	printf '%s\n' "${d%/}"
}

# ours tells whether process $1 is orch's: the orch binary, a process
# naming the run dir (containerd, shims), or one in orch's cgroups.
ours() {
	[ "$1" = "$$" ] && return 1
	if [ -n "$BIN" ]; then
		case "$(readlink "/proc/$1/exe" 2>/dev/null)" in
		"$BIN" | "$BIN (deleted)") [ "$(data_dir_of "$1")" = "${DATA_DIR%/}" ] && return 0 ;;
		esac
	fi
	if { tr '\0' '\n' <"/proc/$1/cmdline"; } 2>/dev/null | grep -q -F -e "$RUN_DIR/"; then
		return 0
	fi
	awk -v r="/$CGROUP_ROOT" '{ p = $0; sub(/^[^:]*:[^:]*:/, "", p); if (p == r || index(p, r "/") == 1) f = 1 }
		END { exit !f }' "/proc/$1/cgroup" 2>/dev/null
}

kill_procs() {
	i=0
	while [ "$i" -lt 30 ]; do
		found=""
		for d in /proc/[0-9]*; do
			pid=${d#/proc/}
			if ours "$pid"; then
				found="$found $pid"
			fi
		done
		[ -z "$found" ] && return 0
		# shellcheck disable=SC2086 # a list of pids
		kill -9 $found 2>/dev/null || true
		sleep 0.2 2>/dev/null || sleep 1
		i=$((i + 1))
	done
	echo "orch-killall.sh: processes still alive:$found" >&2
}

# mounts_under prints the mount points under the given directories,
# deepest first.
mounts_under() {
	awk -v dirs="$*" 'BEGIN { n = split(dirs, d, " ") }
		{ for (i = 1; i <= n; i++) if (index($5, d[i]) == 1) { print length($5) " " $5; break } }' /proc/self/mountinfo |
		sort -rn | cut -d' ' -f2- | uniq
}

unmount_all() {
	for m in $(mounts_under "$DATA_DIR/" "$RUN_DIR/" "$NETNS_DIR/$NETNS_PREFIX"); do
		umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || echo "orch-killall.sh: cannot unmount $m" >&2
	done
	for m in $(mounts_under "$RUN_DIR"); do
		[ "$m" = "$RUN_DIR" ] && { umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true; }
	done
}

remove_netns() {
	for f in "$NETNS_DIR/$NETNS_PREFIX"*; do
		[ -e "$f" ] || continue
		rm -f "$f"
	done
}

link_exists() { ip link show "$1" >/dev/null 2>&1; }

remove_links() {
	command -v ip >/dev/null 2>&1 || { echo "orch-killall.sh: ip not found, links left" >&2; return 0; }
	if [ -n "$BRIDGE" ] && link_exists "$BRIDGE"; then
		for l in $(ip -o link show master "$BRIDGE" 2>/dev/null | awk -F': ' '{ sub(/@.*/, "", $2); print $2 }'); do
			ip link delete "$l" 2>/dev/null || true
		done
	fi
	for l in "$BRIDGE" "$DNS_LINK" "$VXLAN_DEVICE"; do
		if [ -n "$l" ] && link_exists "$l"; then
			ip link delete "$l" || echo "orch-killall.sh: cannot delete link $l" >&2
		fi
	done
}

# clean_table removes the chains named $CHAIN_PREFIX* from one table, the
# rules of other chains that jump to them and those that match orch's
# bridge as their interface. Its variables are prefixed
# ct_: POSIX sh has no locals.
clean_table() {
	ct_cmd=$1 ct_table=$2
	rules=$("$ct_cmd-save" -t "$ct_table" 2>/dev/null) || return 0
	printf '%s\n' "$rules" | grep -F -e "$CHAIN_PREFIX" -e " $BRIDGE " | grep '^-A ' | while IFS= read -r rule; do
		chain=$(printf '%s\n' "$rule" | cut -d' ' -f2)
		case "$chain" in "$CHAIN_PREFIX"*) continue ;; esac
		case "$rule" in
		*" -j $CHAIN_PREFIX"* | *" -g $CHAIN_PREFIX"*) ;;
		*" -i $BRIDGE "* | *" -o $BRIDGE "*) [ -n "$BRIDGE" ] || continue ;;
		*) continue ;;
		esac
		# iptables-save quotes comments the way sh does, except that it
		# writes ' as \' inside the double quotes.
		rule=$(printf '%s\n' "$rule" | sed "s/\\\\'/'/g")
		if eval "set -- ${rule#-A }"; then
			"$ct_cmd" -w -t "$ct_table" -D "$@" 2>/dev/null || true
		fi
	done
	chains=$(printf '%s\n' "$rules" | awk -v p=":$CHAIN_PREFIX" 'index($1, p) == 1 { print substr($1, 2) }')
	for ct_chain in $chains; do "$ct_cmd" -w -t "$ct_table" -F "$ct_chain" 2>/dev/null || true; done
	for ct_chain in $chains; do "$ct_cmd" -w -t "$ct_table" -X "$ct_chain" 2>/dev/null || echo "orch-killall.sh: $ct_cmd -t $ct_table -X $ct_chain failed" >&2; done
}

remove_chains() {
	cmds=""
	for c in iptables-legacy iptables-nft ip6tables-legacy ip6tables-nft; do
		command -v "$c-save" >/dev/null 2>&1 && cmds="$cmds $c"
	done
	if [ -z "$cmds" ]; then
		for c in iptables ip6tables; do
			command -v "$c-save" >/dev/null 2>&1 && cmds="$cmds $c"
		done
	fi
	for c in $cmds; do
		for t in filter nat mangle raw; do clean_table "$c" "$t"; done
	done
}

remove_cgroups() {
	awk '{ split($0, a, " - "); split(a[2], f, " "); if (f[1] == "cgroup" || f[1] == "cgroup2") print $5 }' /proc/self/mountinfo |
		while IFS= read -r mnt; do
		dir="$mnt/$CGROUP_ROOT"
		[ -d "$dir" ] || continue
		i=0
		while [ -d "$dir" ] && [ "$i" -lt 20 ]; do
			find "$dir" -depth -type d -exec rmdir {} \; 2>/dev/null
			[ -d "$dir" ] && sleep 0.1 2>/dev/null
			i=$((i + 1))
		done
		if [ -d "$dir" ]; then echo "orch-killall.sh: cannot remove cgroup $dir" >&2; fi
	done
}

# remove_stale_shim_sockets: containerd 1.6/1.7 shims listen in
# /run/containerd/s whatever the daemon's state dir; a shim killed above
# leaves its socket file. Only sockets nobody listens on are removed.
remove_stale_shim_sockets() {
	dir=/run/containerd/s
	[ -d "$dir" ] || return 0
	live=$(awk 'NR > 1 && NF >= 8 { print $8 }' /proc/net/unix)
	for f in "$dir"/*; do
		[ -S "$f" ] || continue
		printf '%s\n' "$live" | grep -q -x -F -e "$f" || rm -f "$f"
	done
	rmdir "$dir" 2>/dev/null || true
	rmdir /run/containerd 2>/dev/null || true
}

# release_netns_dir unmounts and removes the network namespace directory
# when orch's were the last namespaces in it (ip netns mounts it on first
# use; nothing else is left there).
release_netns_dir() {
	[ -d "$NETNS_DIR" ] || return 0
	[ -z "$(ls -A "$NETNS_DIR" 2>/dev/null)" ] || return 0
	# ip netns bind-mounts the directory on itself, sometimes twice.
	i=0
	while [ "$i" -lt 3 ] && mounts_under "$NETNS_DIR" | grep -q -x -F -e "$NETNS_DIR"; do
		umount "$NETNS_DIR" 2>/dev/null || umount -l "$NETNS_DIR" 2>/dev/null || true
		i=$((i + 1))
	done
	rmdir "$NETNS_DIR" 2>/dev/null || true
}

remove_run_dir() {
	if [ -n "$(mounts_under "$RUN_DIR/")" ]; then
		echo "orch-killall.sh: mounts left under $RUN_DIR, not removing it" >&2
		return 0
	fi
	rm -rf "$RUN_DIR"
}

stop_services
kill_procs
unmount_all
remove_netns
release_netns_dir
remove_links
remove_chains
remove_cgroups
remove_run_dir
remove_stale_shim_sockets
exit 0
KILLALL
}

uninstall_body() {
	cat <<'UNINSTALL'
# Runs orch-killall.sh, then removes orch's units and their .env files,
# the binary and its symlinks, /etc/orch, the data dir, the run dir and
# this script. Every step may run again. Overridable (tests):
#   ORCH_ROOT       a root directory prefixed to every installed path
#   ORCH_BIN_DIR    where orch, its symlinks and these scripts live
#   ORCH_DATA_DIR, ORCH_RUN_DIR, ORCH_SERVICES and the orch-killall.sh names
ROOT="${ORCH_ROOT:-}"
BIN_DIR="${ORCH_BIN_DIR:-$ORCH_DEFAULT_BIN_DIR}"
DATA_DIR="${ORCH_DATA_DIR:-/var/lib/orch}"
RUN_DIR="${ORCH_RUN_DIR:-/run/orch}"
SERVICES="${ORCH_SERVICES-$ORCH_DEFAULT_SERVICES}"
UNIT_DIR="$ROOT/etc/systemd/system"

if [ "$(id -u)" != 0 ]; then
	echo "orch-uninstall.sh: run as root" >&2
	exit 1
fi

if [ -x "$ROOT$BIN_DIR/orch-killall.sh" ]; then
	ORCH_BIN="${ORCH_BIN:-$BIN_DIR/orch}" "$ROOT$BIN_DIR/orch-killall.sh"
fi

if [ -z "$ROOT" ] && command -v systemctl >/dev/null 2>&1; then
	for s in $SERVICES; do
		systemctl disable "$s.service" >/dev/null 2>&1 || true
		systemctl reset-failed "$s.service" >/dev/null 2>&1 || true
	done
fi
if [ -z "$ROOT" ] && command -v rc-update >/dev/null 2>&1; then
	for s in $SERVICES; do
		if [ -e "/etc/init.d/$s" ]; then rc-update del "$s" default >/dev/null 2>&1 || true; fi
	done
fi
for s in $SERVICES; do
	rm -f "$UNIT_DIR/$s.service" "$UNIT_DIR/$s.service.env" "$ROOT/etc/init.d/$s" "$ROOT/var/log/$s.log"
done
if [ -z "$ROOT" ] && command -v systemctl >/dev/null 2>&1; then
	systemctl daemon-reload >/dev/null 2>&1 || true
fi

# Symlinks to orch (kubectl, crictl, ctr) in the bin dir, then the binary.
for l in "$ROOT$BIN_DIR"/*; do
	[ -L "$l" ] || continue
	case "$(readlink "$l")" in "$BIN_DIR/orch" | orch) rm -f "$l" ;; esac
done
rm -f "$ROOT$BIN_DIR/orch"

# Never rm -rf across a mount: a hostPath bind mount would lose its files.
for d in "$ROOT$DATA_DIR" "$ROOT$RUN_DIR"; do
	if awk -v d="$d/" 'index($5 "/", d) == 1 { f = 1 } END { exit !f }' /proc/self/mountinfo; then
		echo "orch-uninstall.sh: $d still has mounts, not removing it" >&2
	else
		rm -rf "$d"
	fi
done
rm -rf "$ROOT/etc/orch"
rm -f "$ROOT$BIN_DIR/orch-killall.sh" "$ROOT$BIN_DIR/orch-uninstall.sh"
echo "orch uninstalled"
UNINSTALL
}

main() {
	if [ -z "$ROOT" ] && [ "$(id -u)" != 0 ]; then
		fatal "run as root (or set ORCH_ROOT to install under a directory)"
	fi
	setup_mode
	setup_init
	setup_arch
	obtain_binary
	install_deps
	install_binary
	create_symlinks
	write_scripts
	check_host
	write_config
	case "$INIT" in
	systemd) write_systemd_unit ;;
	openrc) write_openrc_script ;;
	none) info "no systemd or OpenRC: start it yourself with: $(exec_line)" ;;
	esac
	start_service
}

main "$@"
