package network

import (
	"fmt"
	"path/filepath"
	"sync"

	"github.com/coreos/go-iptables/iptables"
	"go.uber.org/zap"

	"github.com/orch/orch/agent/ipam"
)

// Manager sets up the node's bridge, masquerade rules and pod networks.
type Manager struct {
	log  *zap.Logger
	cfg  *parsed
	ipam *ipam.Store
	mtu  int
	ipt  *iptables.IPTables
	// hpMu serialises host-port rule changes: teardown deletes jumps by
	// rule number.
	hpMu sync.Mutex
	// hpDone remembers each pod's programmed host-port rules, so a re-sync
	// of the pod runs no iptables command.
	hpDone map[string]string
	// stepHook, when set (tests only), runs after each pod setup step and
	// fails the setup with its error, to exercise rollback.
	stepHook func(step string) error
}

// New validates cfg, opens the IP allocator and picks the iptables backend.
// It changes nothing on the host.
func New(log *zap.Logger, cfg Config) (*Manager, error) {
	p, err := cfg.parse()
	if err != nil {
		return nil, err
	}
	store, err := ipam.New(p.IPAMDir, p.podNet)
	if err != nil {
		return nil, fmt.Errorf("open ipam: %w", err)
	}
	path := p.IPTablesPath
	if path == "" {
		path = DetectIPTables(log)
	}
	ipt, err := iptables.New(iptables.Path(path))
	if err != nil {
		store.Close()
		return nil, fmt.Errorf("iptables (%s): %w", path, err)
	}
	mtu := p.MTU
	if mtu == 0 {
		mtu = defaultMTU()
	}
	log.Info("pod network", zap.String("bridge", p.BridgeName), zap.Stringer("podCIDR", p.podNet),
		zap.Stringer("clusterCIDR", p.clusterNet), zap.Int("mtu", mtu), zap.String("iptables", path))
	return &Manager{log: log, cfg: p, ipam: store, mtu: mtu, ipt: ipt}, nil
}

// Close releases the allocator's file handle. Host state is left in place.
func (m *Manager) Close() error { return m.ipam.Close() }

// IPAM exposes the allocator (for listing and garbage collection).
func (m *Manager) IPAM() ipam.Interface { return m.ipam }

// NetnsPath is the bind mount of the pod's network namespace, which every
// container of the pod joins.
func (m *Manager) NetnsPath(podID string) string {
	return filepath.Join(m.cfg.NetnsDir, m.netnsName(podID))
}

// EnsureHost prepares the node: sysctls, bridge with the gateway address and
// the masquerade/forward rules. It is idempotent.
func (m *Manager) EnsureHost() error {
	if err := EnsureHostSysctls(m.log); err != nil {
		return err
	}
	if _, err := EnsureBridge(m.log, m.cfg.BridgeName, m.cfg.gateway); err != nil {
		return err
	}
	if err := m.EnsureMasquerade(m.cfg.ClusterCIDR, m.cfg.PodCIDR); err != nil {
		return err
	}
	m.hpMu.Lock()
	defer m.hpMu.Unlock()
	return m.EnsureHostPortChains()
}
