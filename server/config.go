package server

import (
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/orch/orch/agent/node"
	"github.com/orch/orch/server/snapshots"
)

// Config is everything `orch server` needs, built by internal/cli from flags,
// ORCH_* environment variables and the config file. Defaults follow k3s.
type Config struct {
	DataDir             string
	BindAddress         string
	HTTPSListenPort     int
	AdvertiseAddress    string
	TLSSANs             []string
	WriteKubeconfig     string
	WriteKubeconfigMode os.FileMode
	Token               string
	TokenFile           string // --token-file: read Token from here
	// AgentToken (--agent-token, or read from AgentTokenFile) joins agents
	// but not servers; "" = agents use the server token or bootstrap tokens.
	AgentToken     string
	AgentTokenFile string
	// CertRenewCheck is how often the leaf certificates are checked for
	// renewal (0 = every 12 h) and LeafValidity their lifetime (0 = one
	// year): hidden flags, seams for tests of renewal.
	CertRenewCheck time.Duration
	LeafValidity   time.Duration
	// ClusterInit is k3s's flag for the first server of an HA cluster. Every
	// orch server bootstraps a Raft cluster that others can join, so it only
	// documents intent; it conflicts with JoinServer.
	ClusterInit bool
	// JoinServer (--server) is the URL of a server of the cluster this
	// server joins as another Raft voter and API server.
	JoinServer string
	// Remove (--remove) takes this server out of the Raft cluster and exits.
	Remove               bool
	ClusterCIDR          string
	ServiceCIDR          string
	ServiceNodePortRange string
	ClusterDNS           string
	ClusterDomain        string
	DisableAgent         bool
	// Ready, when set, is called once the API serves and the kubeconfig is
	// written (the CLI tells systemd: Type=notify).
	Ready func()
	// DisableScheduler and DisableControllerManager leave those loops to
	// someone else (k3s's flags of the same names).
	DisableScheduler         bool
	DisableControllerManager bool
	// Settings of the server's own agent (as `orch agent` flags).
	NodeName                 string
	NodeLabels               []string
	NodeTaints               []string
	NetworkBackend           string // vxlan or host-gw
	KubeletPort              int
	EvictionHard             string // kubelet's --eviction-hard
	PodsPerShim              int    // pods per containerd shim (agent/runtime)
	ContainerRuntimeEndpoint string
	PrivateRegistry          string
	RaftPort                 int
	Datastore                DatastoreConfig // external etcd (backend.go)
	DefaultWatchCacheSize    int
	EventTTL                 time.Duration
	// NodeMonitorGracePeriod: a node whose Lease is older gets Ready=Unknown.
	NodeMonitorGracePeriod time.Duration
	PprofAddress           string
	Debug                  bool
	// Snapshots: --etcd-snapshot-* and --cluster-reset flags.
	Snapshots snapshots.Config
	// HPASyncPeriod is how often each HorizontalPodAutoscaler is reconciled
	// (--horizontal-pod-autoscaler-sync-period, default 15s).
	HPASyncPeriod time.Duration
	// SecretsEncryption encrypts Secrets at rest (k3s's --secrets-encryption).
	SecretsEncryption bool
	// Disable (--disable) names manifests in <data-dir>/server/manifests,
	// by file name without extension, that are not applied (server/deploy);
	// "ingress" also turns off the built-in Ingress controller
	// (server/ingress.go).
	Disable []string
	// IngressHTTPPort and IngressHTTPSPort: the built-in Ingress controller
	// of this server's agent (0: off; the CLI's defaults are 80 and 443).
	IngressHTTPPort, IngressHTTPSPort int
}

// Parsed holds the validated network settings derived from Config.
type Parsed struct {
	Bind         net.IP
	Advertise    net.IP
	ClusterCIDR  *net.IPNet
	ServiceCIDR  *net.IPNet
	ClusterDNS   net.IP
	NodePortBase int
	NodePortSize int
}

// Parse validates the config and returns the derived network settings.
// Every error names the flag at fault.
func (c *Config) Parse() (*Parsed, error) {
	p := &Parsed{}
	var err error
	if p.Bind = net.ParseIP(c.BindAddress); p.Bind == nil {
		return nil, fmt.Errorf("--bind-address %q is not an IP address", c.BindAddress)
	}
	if c.HTTPSListenPort < 1 || c.HTTPSListenPort > 65535 {
		return nil, fmt.Errorf("--https-listen-port %d is out of range 1-65535", c.HTTPSListenPort)
	}
	if c.RaftPort < 1 || c.RaftPort > 65535 || c.RaftPort == c.HTTPSListenPort {
		return nil, fmt.Errorf("--raft-port %d must be in 1-65535 and differ from --https-listen-port", c.RaftPort)
	}
	if p.Advertise, err = advertiseIP(c.AdvertiseAddress, p.Bind); err != nil {
		return nil, err
	}
	if _, p.ClusterCIDR, err = net.ParseCIDR(c.ClusterCIDR); err != nil {
		return nil, fmt.Errorf("--cluster-cidr: %w", err)
	}
	if _, p.ServiceCIDR, err = net.ParseCIDR(c.ServiceCIDR); err != nil {
		return nil, fmt.Errorf("--service-cidr: %w", err)
	}
	if p.ClusterDNS = net.ParseIP(c.ClusterDNS); p.ClusterDNS == nil || !p.ServiceCIDR.Contains(p.ClusterDNS) {
		return nil, fmt.Errorf("--cluster-dns %q must be an IP inside --service-cidr %s", c.ClusterDNS, c.ServiceCIDR)
	}
	if p.NodePortBase, p.NodePortSize, err = parsePortRange(c.ServiceNodePortRange); err != nil {
		return nil, fmt.Errorf("--service-node-port-range: %w", err)
	}
	if _, err := node.ParseThresholds(c.EvictionHard); err != nil {
		return nil, fmt.Errorf("--eviction-hard: %w", err)
	}
	if c.PodsPerShim < 0 {
		return nil, fmt.Errorf("--pods-per-shim: %d: must be 1 or more", c.PodsPerShim)
	}
	if err := c.checkJoin(); err != nil {
		return nil, err
	}
	if err := c.readAgentToken(); err != nil {
		return nil, err
	}
	if c.WriteKubeconfigMode&^0o777 != 0 {
		return nil, fmt.Errorf("--write-kubeconfig-mode %o is not a file permission", c.WriteKubeconfigMode)
	}
	return p, nil
}

// advertiseIP returns the address other nodes and the `kubernetes` Service
// use: the flag, else the bind address when specific, else the host's
// default-route address (falling back to loopback).
func advertiseIP(flag string, bind net.IP) (net.IP, error) {
	if flag != "" {
		ip := net.ParseIP(flag)
		if ip == nil {
			return nil, fmt.Errorf("--advertise-address %q is not an IP address", flag)
		}
		return ip, nil
	}
	if !bind.IsUnspecified() {
		return bind, nil
	}
	return defaultRouteIP(), nil
}

// defaultRouteIP finds the source address of the default route without
// sending anything (a UDP "connect" only selects a route).
func defaultRouteIP() net.IP {
	conn, err := net.Dial("udp4", "192.0.2.1:9") // TEST-NET-1; no packet is sent
	if err != nil {
		return net.IPv4(127, 0, 0, 1)
	}
	defer conn.Close()
	return conn.LocalAddr().(*net.UDPAddr).IP
}

func parsePortRange(s string) (base, size int, err error) {
	lo, hi, ok := strings.Cut(s, "-")
	if !ok {
		return 0, 0, fmt.Errorf("%q is not of the form low-high", s)
	}
	l, err1 := strconv.Atoi(lo)
	h, err2 := strconv.Atoi(hi)
	if err1 != nil || err2 != nil || l < 1 || h > 65535 || l > h {
		return 0, 0, fmt.Errorf("%q is not a valid port range", s)
	}
	return l, h - l + 1, nil
}

// checkJoin validates --server, --token/--token-file and --cluster-init, and
// reads the token file into Token.
func (c *Config) checkJoin() error {
	if c.TokenFile != "" {
		if c.Token != "" {
			return fmt.Errorf("--token and --token-file are mutually exclusive")
		}
		b, err := os.ReadFile(c.TokenFile)
		if err != nil {
			return fmt.Errorf("--token-file: %w", err)
		}
		c.Token = strings.TrimSpace(string(b))
	}
	if c.JoinServer == "" {
		return nil
	}
	if c.ClusterInit {
		return fmt.Errorf("--cluster-init starts a new cluster; it cannot be combined with --server %s", c.JoinServer)
	}
	if !strings.HasPrefix(c.JoinServer, "https://") {
		return fmt.Errorf("--server %q must be an https:// URL", c.JoinServer)
	}
	if c.Token == "" {
		return fmt.Errorf("--server needs the cluster's token (--token or --token-file, from <data-dir>/server/token of a server)")
	}
	return nil
}
