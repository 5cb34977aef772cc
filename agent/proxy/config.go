package proxy

import (
	"fmt"
	"net"
	"time"

	"k8s.io/client-go/informers"
)

// Config is what the proxy needs to know about its node.
type Config struct {
	// NodeName is this node: endpoints on it are local (traffic policy Local).
	NodeName string
	// Prefix starts every chain name (default "ORCH-"; at most 14 characters).
	Prefix string
	// ClusterCIDR holds the pod IPs; traffic to a ClusterIP from outside it is
	// masqueraded. Empty disables that masquerade.
	ClusterCIDR string
	// BridgeName is the pod bridge; route_localnet is turned on for it so
	// localhost NodePorts reach pods. Empty skips that.
	BridgeName string
	// Informers, when set, is the agent's shared factory the Services and
	// EndpointSlices come from (else the proxy watches them itself).
	Informers informers.SharedInformerFactory
	// IPTables is the iptables command ("iptables-nft", "iptables-legacy",
	// "iptables"); empty detects the backend as package network does.
	IPTables string
	// MinSyncPeriod is the shortest time between two syncs (default 1s):
	// changes arriving faster are coalesced.
	MinSyncPeriod time.Duration
	// SyncPeriod is the full resync period for safety (default 1h).
	SyncPeriod time.Duration
	// MasqMark is the fwmark bit of packets to masquerade (default 0x4000,
	// kube-proxy's).
	MasqMark uint32
}

const (
	defaultPrefix     = "ORCH-"
	maxChainName      = 28
	maxPrefix         = 14
	defaultMasqMark   = 0x4000
	defaultMinSync    = time.Second
	defaultSyncPeriod = time.Hour
)

func (c Config) withDefaults() Config {
	if c.Prefix == "" {
		c.Prefix = defaultPrefix
	}
	if c.MinSyncPeriod == 0 {
		c.MinSyncPeriod = defaultMinSync
	}
	if c.SyncPeriod == 0 {
		c.SyncPeriod = defaultSyncPeriod
	}
	if c.MasqMark == 0 {
		c.MasqMark = defaultMasqMark
	}
	return c
}

func (c Config) validate() error {
	if c.NodeName == "" {
		return fmt.Errorf("proxy config: NodeName is required")
	}
	if len(c.Prefix) > maxPrefix {
		return fmt.Errorf("proxy config: chain prefix %q is longer than %d characters", c.Prefix, maxPrefix)
	}
	if c.ClusterCIDR != "" {
		if _, _, err := net.ParseCIDR(c.ClusterCIDR); err != nil {
			return fmt.Errorf("proxy config: cluster CIDR %q: %w", c.ClusterCIDR, err)
		}
	}
	if c.MasqMark&(c.MasqMark-1) != 0 {
		return fmt.Errorf("proxy config: masquerade mark %#x must be a single bit", c.MasqMark)
	}
	return nil
}
