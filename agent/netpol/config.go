package netpol

import (
	"fmt"
	"time"

	"go.uber.org/zap"
	"k8s.io/client-go/kubernetes"
)

// Config is what the enforcer needs to know about its node.
type Config struct {
	// NodeName is this node: pods bound to it are enforced here.
	NodeName string
	// Prefix starts every chain name (default "ORCH-"; at most 14 characters).
	Prefix string
	// IPTables is the iptables command ("iptables-nft", "iptables-legacy",
	// "iptables"); empty detects the backend as package network does.
	IPTables string
	// Client reads Pods, Namespaces and NetworkPolicies.
	Client kubernetes.Interface
	// Log is named "netpol" by New.
	Log *zap.Logger
	// MinSyncPeriod is the shortest time between two syncs (default 500ms):
	// changes arriving faster are coalesced.
	MinSyncPeriod time.Duration
	// JumpCheckPeriod is how often the FORWARD jump's position is checked
	// (default 60s; 5s during the first two minutes, while the other
	// components insert their own jumps).
	JumpCheckPeriod time.Duration
}

const (
	defaultPrefix    = "ORCH-"
	maxChainName     = 28
	maxPrefix        = 14
	defaultMinSync   = 500 * time.Millisecond
	defaultJumpCheck = time.Minute
	startupJumpCheck = 5 * time.Second
	startupWindow    = 2 * time.Minute
)

func (c Config) withDefaults() Config {
	if c.Prefix == "" {
		c.Prefix = defaultPrefix
	}
	if c.MinSyncPeriod == 0 {
		c.MinSyncPeriod = defaultMinSync
	}
	if c.JumpCheckPeriod == 0 {
		c.JumpCheckPeriod = defaultJumpCheck
	}
	if c.Log == nil {
		c.Log = zap.NewNop()
	}
	return c
}

func (c Config) validate() error {
	if c.NodeName == "" {
		return fmt.Errorf("netpol config: NodeName is required")
	}
	if c.Client == nil {
		return fmt.Errorf("netpol config: Client is required")
	}
	if len(c.Prefix) > maxPrefix {
		return fmt.Errorf("netpol config: chain prefix %q is longer than %d characters", c.Prefix, maxPrefix)
	}
	return nil
}
