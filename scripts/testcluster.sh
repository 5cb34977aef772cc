#!/usr/bin/env bash
# testcluster.sh builds an N-node orch cluster on one machine, for tests:
# a test bridge on the host and one network namespace per node, joined to
# the bridge by a veth, each running its own orch processes and managed
# containerd inside its namespace. Node 1 runs `orch server` and an
# `orch agent`; nodes 2..N run `orch agent --join https://<node 1>:6443`.
# With --servers S (S > 1) nodes 1..S each run an `orch server` (node 1 with
# --cluster-init, the others with --server https://<node 1>:6443), data dir
# $DIR/s<I>, log $DIR/logs/server-n<I>.log; --no-agents starts no agent.
#
#   scripts/testcluster.sh up   --name ID [--nodes 3] [--subnet K] [--backend vxlan|host-gw]
#                               [--binary orch] [--image busybox.tar]... [--cluster-cidr 10.42.0.0/16]
#                               [--registry-port P]   # agents pull registry.k8s.io from http://<bridge IP>:P
#                               [--servers S] [--no-agents] [--server-arg ARG]...  # ARG: extra server flag
#   scripts/testcluster.sh stop-node --name ID --node I   # kill node I's orch processes and containers
#   scripts/testcluster.sh down --name ID                 # remove everything; idempotent
#
# Fault injection on server nodes (for test/reliability):
#   kill-server  --name ID --node I             # SIGKILL node I's orch server; prints KILLED_AT=<unix ns>
#   start-server --name ID --node I             # start it again with the same arguments
#   partition    --name ID --node I [--from J,K] # DROP all traffic between node I and nodes J,K
#                                                # (default: every other node), inside the netns
#   heal         --name ID                      # remove every partition rule
#   slow-disk    --name ID --node I [--delay-ms 200]  # delay every fsync/fdatasync of node I's server
#   fast-disk    --name ID [--node I]           # end the delay (all nodes without --node)
# The kernel here has no device-mapper (no dm-delay), so slow-disk is a
# syscall-level delay: `strace -e inject=fsync,fdatasync:delay_enter=...`
# attached to the server process, the same wait a slow fsync would cause.
#
# ID is 1-6 lowercase letters/digits; every host-global name derives from it:
#   bridge otc<ID> (10.199.K.1/24, K from --subnet or the first free one),
#   netns otc-<ID>-n<I> (node IP 10.199.K.<10+I>, veth otc<ID>v<I>),
#   cgroup root and containerd namespace otc-<ID>-n<I>, pod netns otc<ID>n<I>-*,
#   state under /run/orch-tc-<ID>/n<I>, data under ${TMPDIR:-/tmp}/orch-tc-<ID>.
# The bridge is a private L2 segment: no route, NAT or forwarding leads
# anywhere else. Inside a node, the pod bridge orch0 and the ORCH- chains are
# private to its namespace.
#
# Processes run under `nsenter --net` (not `ip netns exec`, which remounts
# /sys and so hides the cgroup hierarchies the agent and runc need).
# `up` prints shell variables (DIR, SERVER, KUBECONFIG, NODE_<I>_IP, ...);
# it leaves the cluster half-built on failure: run `down` after it always.
set -euo pipefail

die() { echo "testcluster: $*" >&2; exit 1; }

cmd=${1:-}
[ -n "$cmd" ] || die "usage: $0 up|down|stop-node --name ID ..."
shift
ID="" NODES=3 SUBNET="" BACKEND=vxlan BIN="" CLUSTER_CIDR=10.42.0.0/16 NODE="" IMAGES=() REGISTRY_PORT=""
SERVERS="" NO_AGENTS="" SERVER_ARGS=() FROM="" DELAY_MS=200
while [ $# -gt 0 ]; do
	case "$1" in
	--name) ID=$2; shift 2 ;;
	--nodes) NODES=$2; shift 2 ;;
	--subnet) SUBNET=$2; shift 2 ;;
	--backend) BACKEND=$2; shift 2 ;;
	--binary) BIN=$2; shift 2 ;;
	--image) IMAGES+=("$2"); shift 2 ;;
	--cluster-cidr) CLUSTER_CIDR=$2; shift 2 ;;
	--node) NODE=$2; shift 2 ;;
	--registry-port) REGISTRY_PORT=$2; shift 2 ;;
	--servers) SERVERS=$2; shift 2 ;;
	--no-agents) NO_AGENTS=1; shift ;;
	--server-arg) SERVER_ARGS+=("$2"); shift 2 ;;
	--from) FROM=$2; shift 2 ;;
	--delay-ms) DELAY_MS=$2; shift 2 ;;
	*) die "unknown argument $1" ;;
	esac
done
[[ "$ID" =~ ^[a-z0-9]{1,6}$ ]] || die "--name must be 1-6 lowercase letters or digits"
if ! [[ "$NODES" =~ ^[1-9]$ ]]; then die "--nodes must be 1..9"; fi
[ "$(id -u)" = 0 ] || die "run as root"

BR=otc$ID
DIR=${TMPDIR:-/tmp}/orch-tc-$ID
RUN=/run/orch-tc-$ID
FWD_RULE=(-i "$BR" -o "$BR" -m comment --comment "orch testcluster $ID" -j ACCEPT)
netns_name() { echo "otc-$ID-n$1"; }
veth_name() { echo "otc${ID}v$1"; }
cg_root() { echo "otc-$ID-n$1"; }
pod_prefix() { echo "otc${ID}n$1-"; }
node_name() { echo "tc-$ID-n$1"; }

# free_subnet prints the first K in 1..250 with nothing in 10.199.K.0/24.
free_subnet() {
	local k
	for k in $(seq 1 250); do
		if [ -z "$(ip -4 route show root "10.199.$k.0/24")" ] &&
			[ -z "$(ip -4 addr show to "10.199.$k.0/24")" ]; then
			echo "$k"
			return
		fi
	done
	die "no free 10.199.K.0/24 subnet"
}

node_ip() { echo "10.199.$(cat "$DIR/subnet").$((10 + $1))"; }

# run_in I NAME ARGS... starts an orch process in node I's netns, in its
# own session, logging to $DIR/logs/NAME.log; its pid goes to $DIR/pids/NAME.
run_in() {
	local i=$1 name=$2
	shift 2
	setsid nsenter --net="/run/netns/$(netns_name "$i")" -- "$BIN" "$@" \
		</dev/null >"$DIR/logs/$name.log" 2>&1 &
	echo $! >"$DIR/pids/$name"
}

agent_args() {
	local i=$1
	echo agent --config "$DIR/config.yaml" --join "https://$(node_ip 1):6443" \
		--token-file "$(srv_dir 1)/server/token" --data-dir "$DIR/n$i" --node-name "$(node_name "$i")" \
		--node-ip "$(node_ip "$i")" --cluster-cidr "$CLUSTER_CIDR" --network-backend "$BACKEND" \
		--private-registry "$DIR/registries.yaml" \
		--containerd-state-dir "$RUN/n$i/containerd" --fifo-dir "$RUN/n$i/fifo" \
		--containerd-namespace "$(cg_root "$i")" --cgroup-root "$(cg_root "$i")" \
		--netns-prefix "$(pod_prefix "$i")" --sync-frequency 5s --debug \
		--bridge-name orch0 --iptables-chain-prefix ORCH- --vxlan-device orch.1 \
		--eviction-hard 'nodefs.available<1%,imagefs.available<1%'
}

# registries is the agents' registries.yaml: empty, or with --registry-port
# a mirror of registry.k8s.io on the host's end of the private bridge (a
# registry the caller runs there, such as the conformance kit's).
registries() {
	[ -n "$REGISTRY_PORT" ] || return 0
	printf 'mirrors:\n  registry.k8s.io:\n    endpoint:\n      - "http://10.199.%s.1:%s"\n' "$SUBNET" "$REGISTRY_PORT"
}

# wait_tcp HOST PORT SECONDS waits until a TCP connect succeeds.
wait_tcp() {
	local n=0
	until (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null; do
		n=$((n + 1))
		[ $n -lt $(($3 * 5)) ] || return 1
		sleep 0.2
	done
}

# servers prints how many server nodes the cluster has (1: today's layout,
# names "server"; more: "server-n<I>", data dirs s<I>).
servers() {
	if [ -n "$SERVERS" ]; then echo "$SERVERS"; elif [ -s "$DIR/servers" ]; then cat "$DIR/servers"; else echo 1; fi
}
srv_name() { if [ "$(servers)" = 1 ]; then echo server; else echo "server-n$1"; fi; }
srv_dir() { if [ "$(servers)" = 1 ]; then echo "$DIR/server"; else echo "$DIR/s$1"; fi; }

# server_args I [init] prints node I's server arguments, one a line; "init"
# adds --cluster-init to node 1 of a multi-server cluster (first start only).
server_args() {
	local i=$1 a
	printf '%s\n' server --config "$DIR/config.yaml" --data-dir "$(srv_dir "$i")" --bind-address 0.0.0.0 \
		--advertise-address "$(node_ip "$i")" --https-listen-port 6443 --raft-port 6444 --disable-agent \
		--cluster-cidr "$CLUSTER_CIDR" --node-monitor-grace-period 20s
	if [ "$i" = 1 ]; then
		printf '%s\n' --write-kubeconfig "$DIR/kubeconfig.yaml" --write-kubeconfig-mode 0600
		[ "${2:-}" != init ] || [ "$(servers)" = 1 ] || echo --cluster-init
	else
		# Each server writes an admin kubeconfig: into its own data dir,
		# not the default /etc/orch/orch.yaml of the host.
		printf '%s\n' --server "https://$(node_ip 1):6443" --token-file "$(srv_dir 1)/server/token" \
			--write-kubeconfig "$(srv_dir "$i")/kubeconfig.yaml" --write-kubeconfig-mode 0600
	fi
	while IFS= read -r a; do [ -z "$a" ] || printf '%s\n' "$a"; done <"$DIR/server-args"
}

# start_server I [init] starts node I's server and waits until it listens.
start_server() {
	local i=$1 args
	mapfile -t args < <(server_args "$i" "${2:-}")
	run_in "$i" "$(srv_name "$i")" "${args[@]}"
	wait_tcp "$(node_ip "$i")" 6443 90 ||
		die "server $i did not listen on $(node_ip "$i"):6443 (see $DIR/logs/$(srv_name "$i").log)"
}

# start_servers starts node 1's server, waits for its token and kubeconfig,
# then starts the other servers one by one.
start_servers() {
	local i n=0
	start_server 1 init
	until [ -s "$(srv_dir 1)/server/token" ] && [ -s "$DIR/kubeconfig.yaml" ]; do
		n=$((n + 1))
		[ $n -lt 300 ] || die "the server wrote no token/kubeconfig (see $DIR/logs/$(srv_name 1).log)"
		sleep 0.2
	done
	# The written kubeconfig names 127.0.0.1 (the server's own netns); the
	# host reaches the server at node 1's address.
	sed "s#server: https://[^ ]*#server: https://$(node_ip 1):6443#" "$DIR/kubeconfig.yaml" >"$DIR/admin.yaml"
	chmod 0600 "$DIR/admin.yaml"
	for i in $(seq 2 "$(servers)"); do
		start_server "$i"
	done
}

up() {
	[ -x "$BIN" ] || BIN=$(command -v orch) || die "--binary is required (no orch in PATH)"
	[ ! -e "$DIR" ] || die "$DIR exists: run down --name $ID first"
	[ -n "$SERVERS" ] || SERVERS=1
	if ! [[ "$SERVERS" =~ ^[1-9]$ ]] || [ "$SERVERS" -gt "$NODES" ]; then die "--servers must be 1..--nodes"; fi
	mkdir -p "$DIR/logs" "$DIR/pids" "$RUN"
	chmod 0700 "$DIR"
	: >"$DIR/config.yaml"
	echo "$NODES" >"$DIR/nodes"
	echo "$SERVERS" >"$DIR/servers"
	BIN=$(realpath "$BIN")
	echo "$BIN" >"$DIR/binary"
	printf '%s\n' ${SERVER_ARGS[@]+"${SERVER_ARGS[@]}"} >"$DIR/server-args"
	[ -n "$SUBNET" ] || SUBNET=$(free_subnet)
	echo "$SUBNET" >"$DIR/subnet"
	registries >"$DIR/registries.yaml"
	ip link add "$BR" type bridge
	ip addr add "10.199.$SUBNET.1/24" dev "$BR"
	ip link set "$BR" up
	# Bridged frames between the nodes pass the host's FORWARD chain when
	# br_netfilter is loaded; a DROP policy (e.g. Docker's) would cut them.
	if command -v iptables >/dev/null && [ "$(iptables -w -S FORWARD 2>/dev/null | head -n1)" != "-P FORWARD ACCEPT" ]; then
		iptables -w -I FORWARD "${FWD_RULE[@]}"
	fi
	local i
	for i in $(seq 1 "$NODES"); do
		local ns veth
		ns=$(netns_name "$i") veth=$(veth_name "$i")
		ip netns add "$ns"
		ip link add "$veth" type veth peer name eth0 netns "$ns"
		ip link set "$veth" master "$BR" up
		ip -n "$ns" addr add "$(node_ip "$i")/24" dev eth0
		ip -n "$ns" link set eth0 up
		ip -n "$ns" link set lo up
		mkdir -p "$DIR/n$i/agent/images" "$RUN/n$i"
		local img
		for img in "${IMAGES[@]}"; do
			cp "$img" "$DIR/n$i/agent/images/"
		done
	done
	start_servers
	for i in $(seq 1 "$NODES"); do
		[ -z "$NO_AGENTS" ] || break
		# shellcheck disable=SC2046 # agent_args prints words without spaces
		run_in "$i" "agent-n$i" $(agent_args "$i")
	done
	echo "DIR=$DIR"
	echo "SERVER=https://$(node_ip 1):6443"
	echo "KUBECONFIG=$DIR/admin.yaml"
	echo "SERVERS=$(servers)"
	echo "TOKEN_FILE=$(srv_dir 1)/server/token"
	for i in $(seq 1 "$(servers)"); do
		echo "SERVER_${i}_IP=$(node_ip "$i")"
		echo "SERVER_${i}_URL=https://$(node_ip "$i"):6443"
		echo "SERVER_${i}_DIR=$(srv_dir "$i")"
		echo "SERVER_${i}_LOG=$DIR/logs/$(srv_name "$i").log"
	done
	echo "SUBNET=$SUBNET"
	echo "BRIDGE_IP=10.199.$SUBNET.1"
	for i in $(seq 1 "$NODES"); do
		echo "NODE_${i}_NAME=$(node_name "$i")"
		echo "NODE_${i}_IP=$(node_ip "$i")"
		echo "NODE_${i}_NETNS=$(netns_name "$i")"
	done
}

# node_pids I lists the pids of node I: in its netns or a pod netns of it,
# in its cgroups, or with its state dirs on the command line.
node_pids() {
	local i=$1 f inodes=()
	for f in "/run/netns/$(netns_name "$i")" /run/netns/"$(pod_prefix "$i")"*; do
		[ -e "$f" ] && inodes+=("$(stat -L -c %i "$f" 2>/dev/null || true)")
	done
	{
		if [ ${#inodes[@]} -gt 0 ]; then
			stat -L -c '%i %n' /proc/[0-9]*/ns/net 2>/dev/null | awk -v want=" ${inodes[*]} " \
				'index(want, " " $1 " ") { split($2, p, "/"); print p[3] }'
		fi
		grep -l -F "/$(cg_root "$i")/" /proc/[0-9]*/cgroup 2>/dev/null | cut -d/ -f3
		# "[/]": the patterns must not match grep's own command line.
		grep -l -a -e "[/]${RUN#/}/n$i/" -e "[/]${DIR#/}/n$i/" /proc/[0-9]*/cmdline 2>/dev/null | cut -d/ -f3
	} | sort -u | grep -v -x -e "$$" -e "$BASHPID" || true
}

# kill_node I SIGKILLs node I's orch processes and everything node_pids
# finds, until none is left.
kill_node() {
	local i=$1 pid f pids
	stop_slow "$i"
	for f in "$DIR/pids/agent-n$i" "$DIR/pids/$(srv_name "$i")"; do
		# Only nodes 1..servers run a server (with one server, srv_name is
		# "server" whatever the node).
		[ "$i" -le "$(servers)" ] || [ "$f" = "$DIR/pids/agent-n$i" ] || continue
		if [ -s "$f" ]; then
			pid=$(cat "$f")
			kill -KILL -- "-$pid" 2>/dev/null || true
			kill -KILL "$pid" 2>/dev/null || true
		fi
	done
	for _ in $(seq 1 30); do
		pids=$(node_pids "$i")
		[ -n "$pids" ] || return 0
		# shellcheck disable=SC2086
		kill -KILL $pids 2>/dev/null || true
		sleep 0.2
	done
	echo "testcluster: node $i: processes still alive after SIGKILL: $(node_pids "$i" | tr '\n' ' ')" >&2
}

# unmount_under PREFIX... lazily unmounts every mount point under the
# prefixes, deepest first.
unmount_under() {
	local p m
	for p in "$@"; do
		awk -v p="$p" 'index($5, p) == 1 { print length($5) " " $5 }' /proc/self/mountinfo
	done | sort -rn | cut -d' ' -f2- | while read -r m; do
		umount -l "$m" 2>/dev/null || true
	done
}

# rm_cgroups ROOT removes ROOT's tree in every mounted cgroup hierarchy.
rm_cgroups() {
	local mnt d n
	awk '{ for (j = 6; j < NF; j++) if ($j == "-") { if ($(j+1) == "cgroup" || $(j+1) == "cgroup2") print $5; break } }' \
		/proc/self/mountinfo | while read -r mnt; do
		[ -d "$mnt/$1" ] || continue
		find "$mnt/$1" -depth -type d 2>/dev/null | while read -r d; do
			for n in $(seq 1 20); do
				rmdir "$d" 2>/dev/null && break
				[ -d "$d" ] || break
				sleep 0.05
			done
		done
	done
}

# clean_node I removes node I: processes, mounts, pod netns, cgroups.
clean_node() {
	local i=$1 f
	kill_node "$i"
	unmount_under "$RUN/n$i/" "$DIR/n$i/" "/run/netns/$(pod_prefix "$i")"
	for f in /run/netns/"$(pod_prefix "$i")"*; do
		[ -e "$f" ] && rm -f "$f"
	done
	rm_cgroups "$(cg_root "$i")"
}

stop_node() {
	[[ "$NODE" =~ ^[0-9]+$ ]] || die "--node I is required"
	clean_node "$NODE"
}

down() {
	local n=9 i
	[ -s "$DIR/nodes" ] && n=$(cat "$DIR/nodes")
	for i in $(seq 1 "$n"); do
		stop_slow "$i"
		heal_node "$i"
	done
	for i in $(seq 1 "$n"); do
		clean_node "$i"
	done
	for i in $(seq 1 "$n"); do
		ip netns delete "$(netns_name "$i")" 2>/dev/null || true
		ip link delete "$(veth_name "$i")" 2>/dev/null || true
	done
	ip link delete "$BR" 2>/dev/null || true
	if command -v iptables >/dev/null; then
		while iptables -w -D FORWARD "${FWD_RULE[@]}" 2>/dev/null; do :; done
	fi
	unmount_under "$RUN/" "$DIR/"
	rm -rf "$RUN" "$DIR"
}

# --- fault injection on server nodes ---

need_server_node() {
	[[ "$NODE" =~ ^[1-9]$ ]] || die "--node I is required"
	[ -s "$DIR/nodes" ] || die "no cluster $ID (no $DIR/nodes)"
	[ "$NODE" -le "$(servers)" ] || die "node $NODE runs no server (--servers $(servers))"
}

# server_pid I prints the pid of node I's live server, or nothing.
server_pid() {
	local f
	f="$DIR/pids/$(srv_name "$1")"
	[ -s "$f" ] && kill -0 "$(cat "$f")" 2>/dev/null && cat "$f"
	return 0
}

kill_server() {
	need_server_node
	local pid n=0
	stop_slow "$NODE"
	pid=$(server_pid "$NODE")
	[ -n "$pid" ] || return 0
	kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true
	echo "KILLED_AT=$(date +%s%N)" # when the signal went out (the exit takes a while longer)
	while kill -0 "$pid" 2>/dev/null; do
		n=$((n + 1))
		[ $n -lt 100 ] || die "server $NODE (pid $pid) still alive after SIGKILL"
		sleep 0.05
	done
}

start_server_cmd() {
	need_server_node
	[ -z "$(server_pid "$NODE")" ] || die "server $NODE is running (pid $(server_pid "$NODE"))"
	BIN=$(cat "$DIR/binary")
	start_server "$NODE"
}

PART_CHAIN=OTC-PART
# in_ns I CMD... runs CMD in node I's netns.
in_ns() {
	local i=$1
	shift
	nsenter --net="/run/netns/$(netns_name "$i")" -- "$@"
}

# drop_between I IP adds DROP rules for IP (both directions) in node I's netns.
drop_between() {
	local i=$1 ip=$2 dir
	in_ns "$i" iptables -w -N "$PART_CHAIN" 2>/dev/null || true
	for dir in INPUT OUTPUT; do
		in_ns "$i" iptables -w -C "$dir" -j "$PART_CHAIN" 2>/dev/null ||
			in_ns "$i" iptables -w -I "$dir" -j "$PART_CHAIN"
	done
	for dir in -s -d; do
		in_ns "$i" iptables -w -C "$PART_CHAIN" "$dir" "$ip" -j DROP 2>/dev/null ||
			in_ns "$i" iptables -w -A "$PART_CHAIN" "$dir" "$ip" -j DROP
	done
}

partition() {
	[[ "$NODE" =~ ^[1-9]$ ]] || die "--node I is required"
	[ -s "$DIR/nodes" ] || die "no cluster $ID (no $DIR/nodes)"
	local n j peers=()
	n=$(cat "$DIR/nodes")
	if [ -n "$FROM" ]; then
		IFS=, read -r -a peers <<<"$FROM"
	else
		for j in $(seq 1 "$n"); do [ "$j" = "$NODE" ] || peers+=("$j"); done
	fi
	for j in "${peers[@]}"; do
		[[ "$j" =~ ^[1-9]$ ]] && [ "$j" -le "$n" ] && [ "$j" != "$NODE" ] || die "bad --from node $j"
		drop_between "$NODE" "$(node_ip "$j")"
		drop_between "$j" "$(node_ip "$NODE")"
	done
}

# heal_node I removes node I's partition chain (and the jumps to it).
heal_node() {
	local i=$1 dir
	[ -e "/run/netns/$(netns_name "$i")" ] || return 0
	in_ns "$i" iptables -w -F "$PART_CHAIN" 2>/dev/null || return 0
	for dir in INPUT OUTPUT; do
		while in_ns "$i" iptables -w -D "$dir" -j "$PART_CHAIN" 2>/dev/null; do :; done
	done
	in_ns "$i" iptables -w -X "$PART_CHAIN" 2>/dev/null || true
}

heal() {
	local n=9 i
	[ -s "$DIR/nodes" ] && n=$(cat "$DIR/nodes")
	for i in $(seq 1 "$n"); do heal_node "$i"; done
}

slow_disk() {
	need_server_node
	[[ "$DELAY_MS" =~ ^[0-9]+$ ]] || die "--delay-ms must be a number"
	command -v strace >/dev/null || die "strace is missing (apt-get install strace)"
	local pid spid
	pid=$(server_pid "$NODE")
	[ -n "$pid" ] || die "server $NODE is not running"
	stop_slow "$NODE"
	# -f with -p attaches every thread; only fsync and fdatasync are traced
	# (and delayed), the output is discarded.
	setsid strace -qq -f -o /dev/null -p "$pid" -e trace=fsync,fdatasync \
		-e inject=fsync,fdatasync:delay_enter=$((DELAY_MS * 1000)) </dev/null >"$DIR/logs/slow-n$NODE.log" 2>&1 &
	spid=$!
	echo "$spid" >"$DIR/pids/slow-n$NODE"
	sleep 0.5
	kill -0 "$spid" 2>/dev/null || die "strace could not attach to $pid (see $DIR/logs/slow-n$NODE.log)"
}

# stop_slow I detaches node I's fsync delay, if any.
stop_slow() {
	local f="$DIR/pids/slow-n$1" pid n=0
	[ -s "$f" ] || return 0
	pid=$(cat "$f")
	kill -TERM "$pid" 2>/dev/null || true
	while kill -0 "$pid" 2>/dev/null; do
		n=$((n + 1))
		if [ $n -ge 100 ]; then
			kill -KILL "$pid" 2>/dev/null || true
			break
		fi
		sleep 0.05
	done
	rm -f "$f"
}

fast_disk() {
	local n=9 i
	if [ -n "$NODE" ]; then
		stop_slow "$NODE"
		return
	fi
	[ -s "$DIR/nodes" ] && n=$(cat "$DIR/nodes")
	for i in $(seq 1 "$n"); do stop_slow "$i"; done
}

case "$cmd" in
up) up ;;
down) down ;;
stop-node) stop_node ;;
kill-server) kill_server ;;
start-server) start_server_cmd ;;
partition) partition ;;
heal) heal ;;
slow-disk) slow_disk ;;
fast-disk) fast_disk ;;
*) die "unknown command $cmd (up, down, stop-node, kill-server, start-server, partition, heal, slow-disk, fast-disk)" ;;
esac
