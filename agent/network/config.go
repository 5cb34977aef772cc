package network

import (
	"fmt"
	"net"
	"strings"
)

// Defaults for a node (k3s-compatible where sensible).
const (
	DefaultBridge      = "orch0"
	DefaultNetnsDir    = "/run/netns"
	DefaultNetnsPrefix = "orch-"
	DefaultNATChain    = "ORCH-POSTROUTING"
	DefaultFilterChain = "ORCH-FORWARD"
	DefaultClusterCIDR = "10.42.0.0/16"
	// PodInterface is the name of the pod's interface inside its namespace.
	PodInterface = "eth0"
)

// Config describes the node's pod network. Zero fields take the defaults.
type Config struct {
	// BridgeName is the node bridge (default orch0).
	BridgeName string
	// PodCIDR is the node's pod subnet, e.g. 10.42.0.0/24; its first address
	// is the bridge gateway. Required.
	PodCIDR string
	// ClusterCIDR holds every node's PodCIDR (default 10.42.0.0/16).
	ClusterCIDR string
	// IPAMDir is where allocated IPs are persisted. Required.
	IPAMDir string
	// NetnsDir holds the pod namespaces' bind mounts (default /run/netns).
	NetnsDir string
	// NetnsPrefix starts each pod namespace's name (default "orch-").
	NetnsPrefix string
	// NATChain and FilterChain are orch's iptables chains.
	NATChain, FilterChain string
	// MTU of pod interfaces; 0 takes the MTU of the default route's link.
	MTU int
	// IPTablesPath overrides backend detection (e.g. "iptables-legacy").
	IPTablesPath string
	// HostPortPrefix starts the names of the hostPort chains (<prefix>HOSTPORTS,
	// <prefix>HOSTPORTS-MASQ, <prefix>HP-<hash>, <prefix>HM-<hash>; at most 14
	// characters). Default: NATChain without its POSTROUTING suffix, else "ORCH-".
	HostPortPrefix string
}

// parsed is a validated Config.
type parsed struct {
	Config
	podNet     *net.IPNet
	clusterNet *net.IPNet
	gateway    *net.IPNet // gateway IP with the podCIDR mask
}

func (c Config) withDefaults() Config {
	def := func(s *string, v string) {
		if *s == "" {
			*s = v
		}
	}
	def(&c.BridgeName, DefaultBridge)
	def(&c.ClusterCIDR, DefaultClusterCIDR)
	def(&c.NetnsDir, DefaultNetnsDir)
	def(&c.NetnsPrefix, DefaultNetnsPrefix)
	def(&c.NATChain, DefaultNATChain)
	def(&c.FilterChain, DefaultFilterChain)
	if p, ok := strings.CutSuffix(c.NATChain, "POSTROUTING"); ok && p != "" {
		def(&c.HostPortPrefix, p)
	}
	def(&c.HostPortPrefix, "ORCH-")
	return c
}

func (c Config) parse() (*parsed, error) {
	c = c.withDefaults()
	if c.IPAMDir == "" {
		return nil, fmt.Errorf("network config: IPAMDir is required")
	}
	if len(c.BridgeName) > 15 {
		return nil, fmt.Errorf("network config: bridge name %q is longer than 15 characters", c.BridgeName)
	}
	if len(c.NATChain) > 28 || len(c.FilterChain) > 28 {
		return nil, fmt.Errorf("network config: chain names %q/%q must be at most 28 characters", c.NATChain, c.FilterChain)
	}
	if len(c.HostPortPrefix) > 14 {
		return nil, fmt.Errorf("network config: hostPort chain prefix %q (from --iptables-chain-prefix) must be at most 14 characters", c.HostPortPrefix)
	}
	_, podNet, err := net.ParseCIDR(c.PodCIDR)
	if err != nil || podNet.IP.To4() == nil {
		return nil, fmt.Errorf("network config: podCIDR %q is not an IPv4 CIDR", c.PodCIDR)
	}
	_, clusterNet, err := net.ParseCIDR(c.ClusterCIDR)
	if err != nil || clusterNet.IP.To4() == nil {
		return nil, fmt.Errorf("network config: clusterCIDR %q is not an IPv4 CIDR", c.ClusterCIDR)
	}
	gw := make(net.IP, 4)
	copy(gw, podNet.IP.To4())
	gw[3]++
	return &parsed{Config: c, podNet: podNet, clusterNet: clusterNet,
		gateway: &net.IPNet{IP: gw, Mask: podNet.Mask}}, nil
}
