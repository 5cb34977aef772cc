package agent

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/orch/orch/agent/node"
	"github.com/orch/orch/agent/overlay"
	"github.com/orch/orch/internal/hostnames"
)

// Config is what `orch agent` (or an embedding `orch server`) runs with.
type Config struct {
	ServerURL  string   // --join / --server
	Token      string   // --token
	TokenFile  string   // --token-file
	DataDir    string   // --data-dir (default /var/lib/orch)
	NodeName   string   // --node-name (default hostname)
	NodeIP     string   // --node-ip (default: default-route source address)
	NodeLabels []string // key=value
	NodeTaints []string // key=value:Effect
	// ContainerRuntimeEndpoint is an existing containerd socket; empty runs
	// a managed containerd.
	ContainerRuntimeEndpoint string
	// PrivateRegistry is the registries.yaml (mirrors, plain-HTTP
	// registries, TLS, credentials; k3s's format). Default /etc/orch/registries.yaml.
	PrivateRegistry string
	KubeletPort     int
	// SyncFrequency is how often every pod is re-synced (default 1m).
	SyncFrequency time.Duration
	// EvictionHard overrides kubelet's hard eviction thresholds the
	// pressure conditions are computed from (--eviction-hard,
	// "nodefs.available<10%,..."; see node.ParseThresholds).
	EvictionHard string
	// PodsPerShim is how many pods share one containerd shim (0: the
	// runtime's default, runtime.DefaultPodsPerShim).
	PodsPerShim int
	Debug       bool
	// IngressHTTPPort and IngressHTTPSPort are where the built-in Ingress
	// controller listens on every address of the node (the CLI's defaults
	// are 80 and 443); 0 turns a port off.
	IngressHTTPPort, IngressHTTPSPort int
	// Ready, when set, is called once the node is registered and its host
	// network is set up, before pods start (the CLI tells systemd).
	Ready func()

	// Cluster settings the agent needs (the server's defaults).
	ClusterCIDR   string // 10.42.0.0/16
	ClusterDNS    string // 10.43.0.10
	ClusterDomain string // cluster.local
	// NetworkBackend connects the nodes' pod subnets: vxlan (default) or host-gw.
	NetworkBackend string

	// Host-global names. Unset ones derive from DataDir (internal/hostnames):
	// the defaults below for /var/lib/orch, suffixed names for any other data
	// dir so two instances can run side by side. Tests set them (hidden
	// flags) to run beside a live orch.
	BridgeName         string // orch0
	ContainerdStateDir string // /run/orch/containerd (managed containerd)
	ContainerdNS       string // orch
	CgroupRoot         string // orch
	NetnsPrefix        string // orch-
	ChainPrefix        string // ORCH- (iptables chains <prefix>POSTROUTING, <prefix>FORWARD)
	FIFODir            string // /run/orch/fifo
	VXLANDevice        string // orch.1 (VNI 1 in every instance)
}

// Defaults fills unset fields with orch's defaults.
func (c *Config) Defaults() {
	def := func(s *string, v string) {
		if *s == "" {
			*s = v
		}
	}
	def(&c.DataDir, hostnames.DefaultDataDir)
	def(&c.PrivateRegistry, "/etc/orch/registries.yaml")
	if c.NodeName == "" {
		h, _ := os.Hostname()
		c.NodeName = strings.ToLower(h)
	}
	if c.KubeletPort == 0 {
		c.KubeletPort = 10250
	}
	def(&c.ClusterCIDR, "10.42.0.0/16")
	def(&c.ClusterDNS, "10.43.0.10")
	def(&c.ClusterDomain, "cluster.local")
	n := hostnames.For(c.DataDir)
	def(&c.BridgeName, n.Bridge)
	def(&c.ContainerdStateDir, n.ContainerdStateDir)
	def(&c.ContainerdNS, "orch") // each instance has its own containerd
	def(&c.CgroupRoot, n.CgroupRoot)
	def(&c.NetnsPrefix, n.NetnsPrefix)
	def(&c.ChainPrefix, n.ChainPrefix)
	def(&c.FIFODir, n.FIFODir)
	def(&c.VXLANDevice, n.VXLANDevice)
}

// token returns the join token from Token or TokenFile.
func (c *Config) token() (string, error) {
	if c.Token != "" {
		return c.Token, nil
	}
	if c.TokenFile == "" {
		return "", fmt.Errorf("a join token is required: --token or --token-file")
	}
	b, err := os.ReadFile(c.TokenFile)
	if err != nil {
		return "", fmt.Errorf("reading --token-file: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}

// Validate checks what Run needs.
func (c *Config) Validate() error {
	if c.ServerURL == "" {
		return fmt.Errorf("--join (the server URL, e.g. https://server:6443) is required")
	}
	if !strings.HasPrefix(c.ServerURL, "https://") {
		return fmt.Errorf("--join %q: the server URL must start with https://", c.ServerURL)
	}
	if c.Token == "" && c.TokenFile == "" {
		return fmt.Errorf("a join token is required: --token or --token-file")
	}
	if _, err := overlay.ParseBackend(c.NetworkBackend); err != nil {
		return err
	}
	if _, err := node.ParseThresholds(c.EvictionHard); err != nil {
		return fmt.Errorf("--eviction-hard: %w", err)
	}
	if c.PodsPerShim < 0 {
		return fmt.Errorf("--pods-per-shim: %d: must be 1 or more", c.PodsPerShim)
	}
	return nil
}
