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

# write_script writes an executable script $1 whose first line after the
# shebang is $2 (its defaults) and whose body is the output of $3.
write_script() {
	{
		printf '#!/bin/sh\n# %s, written by orch'"'"'s install.sh.\n%s\n' "${1##*/}" "$2"
		"$3"
	} >"$1.tmp.$$"
	chmod 0755 "$1.tmp.$$"
	mv -f "$1.tmp.$$" "$1"
	info "wrote $1"
}

# check_host prints `orch check-config`; failures are reported, not fatal.
check_host() {
	[ -z "$ROOT" ] || return 0
	"$BIN_DIR/orch" check-config >&2 ||
		info "some kernel checks failed (fixes above); orch may not run until they are fixed"
}

write_scripts() {
	case "$BIN_DIR" in *"'"*) fatal "ORCH_BIN_DIR with a single quote is not supported: $BIN_DIR" ;; esac
	write_script "$ROOT$BIN_DIR/orch-killall.sh" "ORCH_DEFAULT_BIN='$BIN_DIR/orch'" killall_body
	write_script "$ROOT$BIN_DIR/orch-uninstall.sh" "ORCH_DEFAULT_BIN_DIR='$BIN_DIR'" uninstall_body
}

killall_body() {
	cat <<'KILLALL'
# Stops orch and removes what it put on the host: its services, processes,
# the managed containerd with its shims and containers, pod mounts, pod
# network namespaces, orch0, the VXLAN device, orch-dns, the ORCH- iptables
# chains and orch's cgroups. Only orch's own names are touched and every
# step may run again. The names are overridable so a test can point the
# script at one test instance:
#   ORCH_DATA_DIR      /var/lib/orch      ORCH_RUN_DIR      /run/orch
#   ORCH_BRIDGE        orch0              ORCH_DNS_LINK     orch-dns
#   ORCH_VXLAN_DEVICE  orch.1             ORCH_NETNS_DIR    /run/netns
#   ORCH_NETNS_PREFIX  orch-              ORCH_CHAIN_PREFIX ORCH-
#   ORCH_CGROUP_ROOT   orch               ORCH_SERVICES     "orch orch-agent"
#   ORCH_BIN           the orch binary whose processes are killed
set -u

DATA_DIR="${ORCH_DATA_DIR:-/var/lib/orch}"
RUN_DIR="${ORCH_RUN_DIR:-/run/orch}"
BRIDGE="${ORCH_BRIDGE-orch0}"
DNS_LINK="${ORCH_DNS_LINK-orch-dns}"
VXLAN_DEVICE="${ORCH_VXLAN_DEVICE-orch.1}"
NETNS_DIR="${ORCH_NETNS_DIR:-/run/netns}"
NETNS_PREFIX="${ORCH_NETNS_PREFIX:-orch-}"
CHAIN_PREFIX="${ORCH_CHAIN_PREFIX:-ORCH-}"
CGROUP_ROOT="${ORCH_CGROUP_ROOT:-orch}"
SERVICES="${ORCH_SERVICES-orch orch-agent}"
BIN="${ORCH_BIN:-$ORCH_DEFAULT_BIN}"

if [ "$(id -u)" != 0 ]; then
	echo "orch-killall.sh: run as root" >&2
	exit 1
fi
for v in "$DATA_DIR" "$RUN_DIR" "$NETNS_DIR"; do
	case "$v" in /?*) ;; *) echo "orch-killall.sh: $v is not an absolute path" >&2; exit 1 ;; esac
done
case "$CGROUP_ROOT" in "" | */* | . | ..) echo "orch-killall.sh: bad ORCH_CGROUP_ROOT" >&2; exit 1 ;; esac

stop_services() {
	command -v systemctl >/dev/null 2>&1 || return 0
	for s in $SERVICES; do
		if systemctl list-unit-files "$s.service" >/dev/null 2>&1; then
			systemctl stop "$s.service" 2>/dev/null || true
		fi
	done
}

# ours tells whether process $1 is orch's: the orch binary, a process
# naming the run dir (containerd, shims), or one in orch's cgroups.
ours() {
	[ "$1" = "$$" ] && return 1
	if [ -n "$BIN" ]; then
		case "$(readlink "/proc/$1/exe" 2>/dev/null)" in "$BIN" | "$BIN (deleted)") return 0 ;; esac
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

# clean_table removes the chains named $CHAIN_PREFIX* from one table and
# the rules of other chains that jump to them. Its variables are prefixed
# ct_: POSIX sh has no locals.
clean_table() {
	ct_cmd=$1 ct_table=$2
	rules=$("$ct_cmd-save" -t "$ct_table" 2>/dev/null) || return 0
	printf '%s\n' "$rules" | grep -F -e "$CHAIN_PREFIX" | grep '^-A ' | while IFS= read -r rule; do
		chain=$(printf '%s\n' "$rule" | cut -d' ' -f2)
		case "$chain" in "$CHAIN_PREFIX"*) continue ;; esac
		case "$rule" in *" -j $CHAIN_PREFIX"* | *" -g $CHAIN_PREFIX"*) ;; *) continue ;; esac
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
remove_links
remove_chains
remove_cgroups
remove_run_dir
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
set -u

ROOT="${ORCH_ROOT:-}"
BIN_DIR="${ORCH_BIN_DIR:-$ORCH_DEFAULT_BIN_DIR}"
DATA_DIR="${ORCH_DATA_DIR:-/var/lib/orch}"
RUN_DIR="${ORCH_RUN_DIR:-/run/orch}"
SERVICES="${ORCH_SERVICES-orch orch-agent}"
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
for s in $SERVICES; do
	rm -f "$UNIT_DIR/$s.service" "$UNIT_DIR/$s.service.env" "$ROOT/etc/init.d/$s"
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
	obtain_binary
	install_binary
	write_scripts
	check_host
	write_config
	if systemd_wanted; then
		write_unit
		start_service
	else
		info "systemd not found: start it yourself with: $BIN_DIR/orch $CMD"
	fi
}

main "$@"
