package cli

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"time"

	ucli "github.com/urfave/cli/v2"

	"github.com/orch/orch/server"
)

func serverFlags() []ucli.Flag {
	s := func(name, value, usage string, aliases ...string) ucli.Flag {
		return &ucli.StringFlag{Name: name, Value: value, Usage: usage, Aliases: aliases, EnvVars: envVars(name)}
	}
	i := func(name string, value int, usage string) ucli.Flag {
		return &ucli.IntFlag{Name: name, Value: value, Usage: usage, EnvVars: envVars(name)}
	}
	return append([]ucli.Flag{
		configFlag(), debugFlag(),
		s("data-dir", "/var/lib/orch", "folder for state", "d"),
		s("bind-address", "0.0.0.0", "address the API server listens on"),
		i("https-listen-port", 6443, "API server port"),
		s("advertise-address", "", "address other nodes use to reach this server (default: bind address or default-route address)"),
		&ucli.StringSliceFlag{Name: "tls-san", EnvVars: envVars("tls-san"), Usage: "extra host names or IPs in the serving certificate"},
		s("write-kubeconfig", "/etc/orch/orch.yaml", "where the admin kubeconfig is written", "o"),
		s("write-kubeconfig-mode", "0600", "file mode of the written kubeconfig (octal)"),
		s("token", "", "shared secret nodes use to join (generated when empty); with --server, the cluster's K10... token", "t"),
		s("token-file", "", "file holding the token (instead of --token)"),
		s("agent-token", "", "secret that joins agents but not servers (kept in <data-dir>/server/agent-token; give every server the same)"),
		s("agent-token-file", "", "file holding the agent token (instead of --agent-token)"),
		&ucli.BoolFlag{Name: "cluster-init", EnvVars: envVars("cluster-init"),
			Usage: "start a new cluster that more servers can join (every orch server without --server can be joined)"},
		&ucli.BoolFlag{Name: "remove", EnvVars: envVars("remove"),
			Usage: "take this server out of its cluster's Raft membership (on the leader's side too) and exit"},
		s("server", "", "join the cluster of this server as another control-plane server (https://host:6443; needs --token)", "join"),
		s("cluster-cidr", "10.42.0.0/16", "pod network"),
		s("service-cidr", "10.43.0.0/16", "service ClusterIP range"),
		s("service-node-port-range", "30000-32767", "NodePort range"),
		s("cluster-dns", "10.43.0.10", "cluster DNS service IP"),
		s("cluster-domain", "cluster.local", "cluster DNS domain"),
		s("network-backend", "vxlan", "how the nodes' pod subnets are connected (this server's agent): vxlan or host-gw"),
		&ucli.BoolFlag{Name: "disable-agent", EnvVars: envVars("disable-agent"), Usage: "do not run an agent for this server's own node"},
		&ucli.BoolFlag{Name: "disable-scheduler", EnvVars: envVars("disable-scheduler"), Usage: "do not run the scheduler (pods are bound by someone else)"},
		&ucli.BoolFlag{Name: "disable-controller-manager", EnvVars: envVars("disable-controller-manager"),
			Usage: "do not run the controllers (workloads, GC, node lifecycle, endpoints, volumes, node IPAM)"},
		s("node-name", "", "name of this server's node (default: hostname)"),
		&ucli.StringSliceFlag{Name: "node-label", EnvVars: envVars("node-label"), Usage: "label of this server's node (key=value)"},
		&ucli.StringSliceFlag{Name: "node-taint", EnvVars: envVars("node-taint"), Usage: "taint of this server's node (key=value:Effect)"},
		evictionHardFlag(), podsPerShimFlag(),
		ingressHTTPPortFlag(), ingressHTTPSPortFlag(),
		i("kubelet-port", 10250, "port of this server's agent API (logs, exec, port-forward)"),
		s("container-runtime-endpoint", "", "containerd socket of this server's agent (default: a managed containerd)"),
		s("private-registry", "/etc/orch/registries.yaml", "registries.yaml of this server's agent (k3s format)"),
		i("raft-port", 6444, "port of the datastore's Raft transport (mutual TLS)"),
		&ucli.DurationFlag{Name: "cert-renew-check", Hidden: true, Usage: "how often leaf certificates are checked for renewal (tests; default 12h)"},
		&ucli.DurationFlag{Name: "leaf-cert-validity", Hidden: true, Usage: "lifetime of issued leaf certificates (tests; default one year)"},
		i("default-watch-cache-size", 1000, "events kept for watch resume; older resourceVersions get 410 Gone"),
		&ucli.DurationFlag{Name: "node-monitor-grace-period", Value: 40 * time.Second, EnvVars: envVars("node-monitor-grace-period"),
			Usage: "how long a node's Lease may go unrenewed before the node is Ready=Unknown and its pods are evicted"},
		&ucli.DurationFlag{Name: "horizontal-pod-autoscaler-sync-period", Value: 15 * time.Second,
			EnvVars: envVars("horizontal-pod-autoscaler-sync-period"), Usage: "how often each HorizontalPodAutoscaler is reconciled"},
		&ucli.DurationFlag{Name: "event-ttl", Value: time.Hour, EnvVars: envVars("event-ttl"), Usage: "how long Events are kept"},
		&ucli.BoolFlag{Name: "secrets-encryption", EnvVars: envVars("secrets-encryption"),
			Usage: "encrypt Secrets at rest (key in <data-dir>/server/cred/encryption-config.json; see orch secrets-encrypt)"},
		&ucli.StringSliceFlag{Name: "disable", EnvVars: envVars("disable"),
			Usage: "do not apply this manifest of <data-dir>/server/manifests (file name without extension; repeatable); metrics-server also turns off the built-in metrics.k8s.io, ingress the built-in Ingress controller"},
		&ucli.StringFlag{Name: "pprof-address", EnvVars: envVars("pprof-address"), Hidden: true,
			Usage: "serve net/http/pprof on this loopback address (profiling only)"},
	}, datastoreFlags()...)
}

func serverCommand(ctx context.Context) *ucli.Command {
	return &ucli.Command{
		Name:   "server",
		Usage:  "run the control plane: API server, datastore, scheduler and controllers",
		Flags:  append(append(serverFlags(), snapshotServerFlags()...), logFlags()...),
		Before: func(c *ucli.Context) error { return applyConfigFile(c, DefaultConfigPath) },
		Action: func(c *ucli.Context) error {
			cfg, err := serverConfig(c)
			if err != nil {
				return err
			}
			log, closeLog, err := openLogger(c)
			if err != nil {
				return err
			}
			defer closeLog()
			ready, done := systemdNotifier(ctx, "orch server", log)
			defer done()
			cfg.Ready = ready
			return server.Run(ctx, cfg, log)
		},
	}
}

func serverConfig(c *ucli.Context) (server.Config, error) {
	mode, err := strconv.ParseUint(c.String("write-kubeconfig-mode"), 8, 32)
	if err != nil {
		return server.Config{}, fmt.Errorf("--write-kubeconfig-mode %q is not an octal file mode", c.String("write-kubeconfig-mode"))
	}
	return server.Config{
		DataDir:                  c.String("data-dir"),
		BindAddress:              c.String("bind-address"),
		HTTPSListenPort:          c.Int("https-listen-port"),
		AdvertiseAddress:         c.String("advertise-address"),
		TLSSANs:                  c.StringSlice("tls-san"),
		WriteKubeconfig:          c.String("write-kubeconfig"),
		WriteKubeconfigMode:      os.FileMode(mode),
		Token:                    c.String("token"),
		TokenFile:                c.String("token-file"),
		AgentToken:               c.String("agent-token"),
		AgentTokenFile:           c.String("agent-token-file"),
		ClusterInit:              c.Bool("cluster-init"),
		JoinServer:               c.String("server"),
		Remove:                   c.Bool("remove"),
		ClusterCIDR:              c.String("cluster-cidr"),
		ServiceCIDR:              c.String("service-cidr"),
		ServiceNodePortRange:     c.String("service-node-port-range"),
		ClusterDNS:               c.String("cluster-dns"),
		ClusterDomain:            c.String("cluster-domain"),
		DisableAgent:             c.Bool("disable-agent"),
		DisableScheduler:         c.Bool("disable-scheduler"),
		DisableControllerManager: c.Bool("disable-controller-manager"),
		NodeName:                 c.String("node-name"),
		NodeLabels:               c.StringSlice("node-label"),
		NodeTaints:               c.StringSlice("node-taint"),
		NetworkBackend:           c.String("network-backend"),
		KubeletPort:              c.Int("kubelet-port"),
		EvictionHard:             c.String("eviction-hard"),
		PodsPerShim:              c.Int("pods-per-shim"),
		IngressHTTPPort:          c.Int("ingress-http-port"),
		IngressHTTPSPort:         c.Int("ingress-https-port"),
		ContainerRuntimeEndpoint: c.String("container-runtime-endpoint"),
		PrivateRegistry:          c.String("private-registry"),
		RaftPort:                 c.Int("raft-port"),
		Datastore:                datastoreConfig(c),
		DefaultWatchCacheSize:    c.Int("default-watch-cache-size"),
		EventTTL:                 c.Duration("event-ttl"),
		NodeMonitorGracePeriod:   c.Duration("node-monitor-grace-period"),
		HPASyncPeriod:            c.Duration("horizontal-pod-autoscaler-sync-period"),
		PprofAddress:             c.String("pprof-address"),
		CertRenewCheck:           c.Duration("cert-renew-check"),
		LeafValidity:             c.Duration("leaf-cert-validity"),
		Debug:                    c.Bool("debug"),
		Snapshots:                snapshotServerConfig(c),
		SecretsEncryption:        c.Bool("secrets-encryption"),
		Disable:                  c.StringSlice("disable"),
	}, nil
}
