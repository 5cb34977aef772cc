#!/bin/sh
# install.sh: install orch as a service, k3s style:
#
#   curl -sfL https://<host>/install.sh | sh -                     # server
#   curl -sfL ... | ORCH_URL=https://srv:6443 ORCH_TOKEN=K10... sh -   # agent
#   ./scripts/install.sh                                          # from a checkout
#
# The binary comes from, in order: ORCH_BINARY (a local file); a build of the
# source tree this script sits in (when run from a checkout with go in PATH);
# ORCH_RELEASE_URL (downloaded with curl). It is installed as
# $ORCH_BIN_DIR/orch. /etc/orch/config.yaml is written when absent. When
# systemd runs, the unit orch.service (`orch server`) or, with ORCH_URL and
# ORCH_TOKEN, orch-agent.service (`orch agent`) is written, enabled and
# (re)started.
#
# Environment:
#   ORCH_BINARY               path of an orch binary to install
#   ORCH_RELEASE_URL          URL of a release binary (only used as last resort)
#   ORCH_URL, ORCH_TOKEN      join an existing server as an agent
#   ORCH_BIN_DIR              default /usr/local/bin
#   ORCH_ROOT                 install under this root instead of / (tests);
#                             implies no systemctl calls
#   INSTALL_ORCH_EXEC         extra arguments for the service command
#   INSTALL_ORCH_SYSTEMD      auto (default), true or false: write the unit?
#   INSTALL_ORCH_SKIP_ENABLE  true: do not enable the service
#   INSTALL_ORCH_SKIP_START   true: do not (re)start the service
set -eu

info() { printf '[INFO]  %s\n' "$*" >&2; }
fatal() { printf '[ERROR] %s\n' "$*" >&2; exit 1; }

ROOT="${ORCH_ROOT:-}"
BIN_DIR="${ORCH_BIN_DIR:-/usr/local/bin}"
CONFIG_DIR="$ROOT/etc/orch"
UNIT_DIR="$ROOT/etc/systemd/system"
TMP_DIR=""

cleanup() { if [ -n "$TMP_DIR" ]; then rm -rf "$TMP_DIR"; fi; }
trap cleanup EXIT
trap 'exit 1' INT TERM

setup_mode() {
	if [ -n "${ORCH_URL:-}" ] || [ -n "${ORCH_TOKEN:-}" ]; then
		[ -n "${ORCH_URL:-}" ] || fatal "ORCH_TOKEN is set but ORCH_URL is not"
		[ -n "${ORCH_TOKEN:-}" ] || fatal "ORCH_URL is set but ORCH_TOKEN is not"
		case "$ORCH_URL" in https://*) ;; *) fatal "ORCH_URL must be an https:// URL, got $ORCH_URL" ;; esac
		case "$ORCH_TOKEN$ORCH_URL" in
		*[!A-Za-z0-9:._~+/=@%\[\]-]*) fatal "ORCH_URL or ORCH_TOKEN holds characters unsafe for a systemd EnvironmentFile" ;;
		esac
		CMD=agent
		SERVICE=orch-agent
	else
		CMD=server
		SERVICE=orch
	fi
}

# checkout_dir prints the source tree this script belongs to, if any.
checkout_dir() {
	case "$0" in */install.sh) ;; *) return 0 ;; esac
	dir=$(CDPATH='' cd -- "$(dirname -- "$0")/.." 2>/dev/null && pwd) || return 0
	if [ -f "$dir/go.mod" ] && grep -q '^module github.com/orch/orch$' "$dir/go.mod"; then
		printf '%s\n' "$dir"
	fi
}

# obtain_binary leaves the binary to install in $TMP_DIR/orch.
obtain_binary() {
	TMP_DIR=$(mktemp -d "${TMPDIR:-/tmp}/orch-install.XXXXXX")
	src=$(checkout_dir)
	if [ -n "${ORCH_BINARY:-}" ]; then
		[ -f "$ORCH_BINARY" ] || fatal "ORCH_BINARY=$ORCH_BINARY is not a file"
		info "using binary $ORCH_BINARY"
		cp "$ORCH_BINARY" "$TMP_DIR/orch"
	elif [ -n "$src" ] && command -v go >/dev/null 2>&1; then
		info "building orch from $src"
		(cd "$src" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$TMP_DIR/orch" .) ||
			fatal "go build failed in $src"
	elif [ -n "${ORCH_RELEASE_URL:-}" ]; then
		info "downloading $ORCH_RELEASE_URL"
		curl -sfL -o "$TMP_DIR/orch" "$ORCH_RELEASE_URL" || fatal "download of $ORCH_RELEASE_URL failed"
	else
		fatal "no binary: set ORCH_BINARY or ORCH_RELEASE_URL, or run from a checkout with go installed"
	fi
	chmod 0755 "$TMP_DIR/orch"
}

install_binary() {
	dest="$ROOT$BIN_DIR/orch"
	mkdir -p "$ROOT$BIN_DIR"
	cp "$TMP_DIR/orch" "$dest.tmp.$$"
	chmod 0755 "$dest.tmp.$$"
	mv -f "$dest.tmp.$$" "$dest"
	info "installed $dest"
}

write_config() {
	mkdir -p "$CONFIG_DIR"
	cfg="$CONFIG_DIR/config.yaml"
	if [ -e "$cfg" ]; then
		info "keeping existing $cfg"
		return
	fi
	(
		umask 077
		cat >"$cfg.tmp.$$" <<'CONFIG'
# orch configuration, read by `orch server` and `orch agent`.
# Keys are the command-line flag names; flags given on the command line win.
# Examples (defaults shown):
# data-dir: /var/lib/orch
# write-kubeconfig-mode: "0600"
# tls-san:
#   - orch.example.com
CONFIG
	)
	chmod 0600 "$cfg.tmp.$$"
	mv -f "$cfg.tmp.$$" "$cfg"
	info "wrote $cfg"
}

systemd_wanted() {
	case "${INSTALL_ORCH_SYSTEMD:-auto}" in
	true) return 0 ;;
	false) return 1 ;;
	auto) [ -d /run/systemd/system ] && command -v systemctl >/dev/null 2>&1 ;;
	*) fatal "INSTALL_ORCH_SYSTEMD must be auto, true or false" ;;
	esac
}

# write_env_file stores the join settings of an agent, readable by root only.
write_env_file() {
	env_file="$UNIT_DIR/$SERVICE.service.env"
	(
		umask 077
		: >"$env_file.tmp.$$"
		if [ "$CMD" = agent ]; then
			printf 'ORCH_URL=%s\nORCH_TOKEN=%s\n' "$ORCH_URL" "$ORCH_TOKEN" >"$env_file.tmp.$$"
		fi
	)
	chmod 0600 "$env_file.tmp.$$"
	mv -f "$env_file.tmp.$$" "$env_file"
}

write_unit() {
	mkdir -p "$UNIT_DIR"
	write_env_file
	after="network-online.target"
	if [ "$CMD" = agent ]; then
		after="$after containerd.service"
	fi
	exec_start="$BIN_DIR/orch $CMD${INSTALL_ORCH_EXEC:+ $INSTALL_ORCH_EXEC}"
	unit="$UNIT_DIR/$SERVICE.service"
	cat >"$unit.tmp.$$" <<UNIT
[Unit]
Description=orch $CMD: a small Kubernetes-compatible cluster
Wants=$after
After=$after

[Install]
WantedBy=multi-user.target

[Service]
Type=exec
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
ExecStart=$exec_start
UNIT
	chmod 0644 "$unit.tmp.$$"
	mv -f "$unit.tmp.$$" "$unit"
	info "wrote $unit"
}

start_service() {
	if [ -n "$ROOT" ] || ! command -v systemctl >/dev/null 2>&1 || [ ! -d /run/systemd/system ]; then
		info "not calling systemctl (no running systemd or ORCH_ROOT set)"
		return
	fi
	systemctl daemon-reload
	if [ "${INSTALL_ORCH_SKIP_ENABLE:-false}" != true ]; then
		systemctl enable "$SERVICE.service" >/dev/null
		info "enabled $SERVICE.service"
	fi
	if [ "${INSTALL_ORCH_SKIP_START:-false}" != true ]; then
		systemctl restart "$SERVICE.service"
		info "started $SERVICE.service"
	fi
}

main() {
	if [ -z "$ROOT" ] && [ "$(id -u)" != 0 ]; then
		fatal "run as root (or set ORCH_ROOT to install under a directory)"
	fi
	setup_mode
	obtain_binary
	install_binary
	write_config
	if systemd_wanted; then
		write_unit
		start_service
	else
		info "systemd not found: start it yourself with: $BIN_DIR/orch $CMD"
	fi
}

main "$@"
