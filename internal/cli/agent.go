package cli

import (
	"context"
	"time"

	ucli "github.com/urfave/cli/v2"

	"github.com/orch/orch/agent"
	"github.com/orch/orch/agent/runtime"
)

func agentFlags() []ucli.Flag {
	s := func(name, value, usage string, aliases ...string) *ucli.StringFlag {
		return &ucli.StringFlag{Name: name, Value: value, Usage: usage, Aliases: aliases, EnvVars: envVars(name)}
	}
	hidden := func(name, usage string) ucli.Flag {
		f := s(name, "", usage)
		f.Hidden = true
		return f
	}
	join := s("join", "", "URL of a server to join (https://server:6443)", "server", "s")
	join.EnvVars = append(envVars("join"), "ORCH_SERVER", "ORCH_URL")
	return []ucli.Flag{
		configFlag(), debugFlag(),
		join,
		s("token", "", "join token (K10<ca hash>::server:<secret>, the agent token K10...::node:<secret> or a bootstrap token K10...::<id>.<secret>)", "t"),
		s("token-file", "", "file holding the join token"),
		s("data-dir", "/var/lib/orch", "folder for state", "d"),
		s("node-name", "", "node name (default: hostname)"),
		s("node-ip", "", "IP address other nodes reach this node at (default: default-route source address)"),
		&ucli.StringSliceFlag{Name: "node-label", EnvVars: envVars("node-label"), Usage: "node label key=value (repeatable)"},
		&ucli.StringSliceFlag{Name: "node-taint", EnvVars: envVars("node-taint"), Usage: "node taint key=value:Effect (repeatable)"},
		s("container-runtime-endpoint", "", "containerd socket to use instead of the managed containerd"),
		&ucli.StringFlag{Name: "private-registry", Value: "/etc/orch/registries.yaml", EnvVars: envVars("private-registry"), Usage: "registries.yaml: mirrors, plain-HTTP registries, TLS and credentials (k3s format)"},
		&ucli.IntFlag{Name: "kubelet-port", Value: 10250, EnvVars: envVars("kubelet-port"), Usage: "port of the kubelet API (logs, exec, port-forward), reported in the Node"},
		&ucli.DurationFlag{Name: "sync-frequency", Value: time.Minute, EnvVars: envVars("sync-frequency"), Usage: "how often every pod is re-synced (configMap/secret volumes refreshed)"},
		evictionHardFlag(), podsPerShimFlag(),
		ingressHTTPPortFlag(), ingressHTTPSPortFlag(),
		s("cluster-cidr", "10.42.0.0/16", "pod network of the cluster (the server's --cluster-cidr)"),
		s("cluster-dns", "10.43.0.10", "cluster DNS service IP"),
		s("cluster-domain", "cluster.local", "cluster DNS domain"),
		s("network-backend", "vxlan", "how the nodes' pod subnets are connected: vxlan or host-gw (nodes on one L2 segment)"),
		hidden("bridge-name", "pod bridge (default orch0, or derived from --data-dir: see orch host-names; tests)"),
		hidden("containerd-state-dir", "state dir of the managed containerd (default /run/orch/containerd, or derived from --data-dir; tests)"),
		hidden("containerd-namespace", "containerd namespace (default orch; tests)"),
		hidden("cgroup-root", "parent cgroup (default orch, or derived from --data-dir; tests)"),
		hidden("netns-prefix", "pod network namespace prefix (default orch-, or derived from --data-dir; tests)"),
		hidden("iptables-chain-prefix", "iptables chain prefix (default ORCH-, or derived from --data-dir; tests)"),
		hidden("fifo-dir", "containers' stdio FIFOs (default /run/orch/fifo, or derived from --data-dir; tests)"),
		hidden("vxlan-device", "VXLAN device name (default orch.1, or derived from --data-dir; tests)"),
	}
}

// evictionHardFlag is kubelet's --eviction-hard, shared by `orch agent`
// and `orch server` (its own node).
func evictionHardFlag() ucli.Flag {
	return &ucli.StringFlag{Name: "eviction-hard", EnvVars: envVars("eviction-hard"),
		Usage: "hard eviction thresholds the node's pressure conditions use, kubelet's syntax (default memory.available<100Mi,nodefs.available<10%,imagefs.available<15%,nodefs.inodesFree<5%,imagefs.inodesFree<5%,pid.available<5%; a signal set to <0% is off)"}
}

// podsPerShimFlag is how many pods share a containerd shim, shared by
// `orch agent` and `orch server` (its own node).
func podsPerShimFlag() ucli.Flag {
	return &ucli.IntFlag{Name: "pods-per-shim", Value: runtime.DefaultPodsPerShim, EnvVars: envVars("pods-per-shim"),
		Usage: "pods whose containers share one containerd-shim-runc-v2 (about 3 MiB each); 1 is a shim per pod, as CRI runs them"}
}

func agentCommand(ctx context.Context) *ucli.Command {
	return &ucli.Command{
		Name:   "agent",
		Usage:  "run a worker node: join a server and run the pods bound to this node",
		Flags:  append(agentFlags(), logFlags()...),
		Before: func(c *ucli.Context) error { return applyConfigFile(c, DefaultConfigPath) },
		Action: func(c *ucli.Context) error {
			log, closeLog, err := openLogger(c)
			if err != nil {
				return err
			}
			defer closeLog()
			cfg := agentConfig(c)
			ready, done := systemdNotifier(ctx, "orch agent", log)
			defer done()
			cfg.Ready = ready
			return agent.Run(ctx, cfg, log)
		},
	}
}

func agentConfig(c *ucli.Context) agent.Config {
	return agent.Config{
		ServerURL: c.String("join"), Token: c.String("token"), TokenFile: c.String("token-file"),
		DataDir: c.String("data-dir"), NodeName: c.String("node-name"), NodeIP: c.String("node-ip"),
		NodeLabels: c.StringSlice("node-label"), NodeTaints: c.StringSlice("node-taint"),
		ContainerRuntimeEndpoint: c.String("container-runtime-endpoint"), KubeletPort: c.Int("kubelet-port"),
		PrivateRegistry: c.String("private-registry"), SyncFrequency: c.Duration("sync-frequency"),
		EvictionHard: c.String("eviction-hard"), PodsPerShim: c.Int("pods-per-shim"),
		IngressHTTPPort: c.Int("ingress-http-port"), IngressHTTPSPort: c.Int("ingress-https-port"),
		Debug: c.Bool("debug"), ClusterCIDR: c.String("cluster-cidr"), ClusterDNS: c.String("cluster-dns"),
		ClusterDomain: c.String("cluster-domain"), NetworkBackend: c.String("network-backend"), BridgeName: c.String("bridge-name"),
		ContainerdStateDir: c.String("containerd-state-dir"), ContainerdNS: c.String("containerd-namespace"),
		CgroupRoot: c.String("cgroup-root"), NetnsPrefix: c.String("netns-prefix"),
		ChainPrefix: c.String("iptables-chain-prefix"), FIFODir: c.String("fifo-dir"),
		VXLANDevice: c.String("vxlan-device"),
	}
}
