#!/usr/bin/env bash
# testcluster.sh builds an N-node orch cluster on one machine, for tests:
# a test bridge on the host and one network namespace per node, joined to
# the bridge by a veth, each running its own orch processes and managed
# containerd inside its namespace. Node 1 runs `orch server` and an
# `orch agent`; nodes 2..N run `orch agent --join https://<node 1>:6443`.
#
#   scripts/testcluster.sh up   --name ID [--nodes 3] [--subnet K] [--backend vxlan|host-gw]
#                               [--binary orch] [--image busybox.tar]... [--cluster-cidr 10.42.0.0/16]
#                               [--registry-port P]   # agents pull registry.k8s.io from http://<bridge IP>:P
#   scripts/testcluster.sh stop-node --name ID --node I   # kill node I's orch processes and containers
#   scripts/testcluster.sh down --name ID                 # remove everything; idempotent
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
		--token-file "$DIR/server/server/token" --data-dir "$DIR/n$i" --node-name "$(node_name "$i")" \
		--node-ip "$(node_ip "$i")" --cluster-cidr "$CLUSTER_CIDR" --network-backend "$BACKEND" \
		--private-registry "$DIR/registries.yaml" \
		--containerd-state-dir "$RUN/n$i/containerd" --fifo-dir "$RUN/n$i/fifo" \
		--containerd-namespace "$(cg_root "$i")" --cgroup-root "$(cg_root "$i")" \
		--netns-prefix "$(pod_prefix "$i")" --sync-frequency 5s --debug \
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

up() {
	[ -x "$BIN" ] || BIN=$(command -v orch) || die "--binary is required (no orch in PATH)"
	[ ! -e "$DIR" ] || die "$DIR exists: run down --name $ID first"
	mkdir -p "$DIR/logs" "$DIR/pids" "$RUN"
	chmod 0700 "$DIR"
	: >"$DIR/config.yaml"
	echo "$NODES" >"$DIR/nodes"
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
	run_in 1 server server --config "$DIR/config.yaml" --data-dir "$DIR/server" --bind-address 0.0.0.0 \
		--advertise-address "$(node_ip 1)" --https-listen-port 6443 --raft-port 6444 \
		--write-kubeconfig "$DIR/kubeconfig.yaml" --write-kubeconfig-mode 0600 --disable-agent \
		--cluster-cidr "$CLUSTER_CIDR" --node-monitor-grace-period 20s
	wait_tcp "$(node_ip 1)" 6443 60 || die "the server did not listen on $(node_ip 1):6443 (see $DIR/logs/server.log)"
	local n=0
	until [ -s "$DIR/server/server/token" ] && [ -s "$DIR/kubeconfig.yaml" ]; do
		n=$((n + 1))
		[ $n -lt 300 ] || die "the server wrote no token/kubeconfig (see $DIR/logs/server.log)"
		sleep 0.2
	done
	# The written kubeconfig names 127.0.0.1 (the server's own netns); the
	# host reaches the server at node 1's address.
	sed "s#server: https://[^ ]*#server: https://$(node_ip 1):6443#" "$DIR/kubeconfig.yaml" >"$DIR/admin.yaml"
	chmod 0600 "$DIR/admin.yaml"
	for i in $(seq 1 "$NODES"); do
		# shellcheck disable=SC2046 # agent_args prints words without spaces
		run_in "$i" "agent-n$i" $(agent_args "$i")
	done
	echo "DIR=$DIR"
	echo "SERVER=https://$(node_ip 1):6443"
	echo "KUBECONFIG=$DIR/admin.yaml"
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
	for f in "$DIR/pids/agent-n$i" "$DIR/pids/server"; do
		[ "$i" = 1 ] || [ "$f" != "$DIR/pids/server" ] || continue
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

case "$cmd" in
up) up ;;
down) down ;;
stop-node) stop_node ;;
*) die "unknown command $cmd (up, down, stop-node)" ;;
esac
