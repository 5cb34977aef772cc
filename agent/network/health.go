package network

import (
	"fmt"
	"net"

	"github.com/vishvananda/netlink"
)

// CheckHost reports whether the node's pod network is in place: the bridge
// exists, is up and holds the gateway address. A nil error means ready;
// EnsureHost repairs what is missing.
func (m *Manager) CheckHost() error {
	br, err := bridgeByName(m.cfg.BridgeName)
	if err != nil {
		if isNotFound(err) {
			return fmt.Errorf("bridge %s is missing", m.cfg.BridgeName)
		}
		return err
	}
	if br.Attrs().Flags&net.FlagUp == 0 {
		return fmt.Errorf("bridge %s is down", m.cfg.BridgeName)
	}
	addrs, err := netlink.AddrList(br, netlink.FAMILY_V4)
	if err != nil {
		return fmt.Errorf("list addresses of bridge %s: %w", m.cfg.BridgeName, err)
	}
	for _, a := range addrs {
		if a.IPNet.String() == m.cfg.gateway.String() {
			return nil
		}
	}
	return fmt.Errorf("bridge %s lacks the gateway address %s", m.cfg.BridgeName, m.cfg.gateway)
}
