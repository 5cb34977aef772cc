package network

import (
	"errors"
	"fmt"
	"net"

	"github.com/vishvananda/netlink"
	"go.uber.org/zap"
	"golang.org/x/sys/unix"
)

// EnsureBridge makes sure the bridge name exists, is up and holds gateway
// (for example 10.42.0.1/24) as its only IPv4 address, and that its ports
// have hairpin mode on. It is idempotent; a bridge it created is deleted
// again when a later step fails.
func EnsureBridge(log *zap.Logger, name string, gateway *net.IPNet) (*netlink.Bridge, error) {
	br, created, err := ensureBridgeLink(name)
	if err != nil {
		return nil, err
	}
	if err := configureBridge(log, br, gateway); err != nil {
		if created {
			_ = netlink.LinkDel(br)
		}
		return nil, err
	}
	if created {
		log.Info("created bridge", zap.String("bridge", name), zap.Stringer("gateway", gateway))
	}
	return br, nil
}

func ensureBridgeLink(name string) (*netlink.Bridge, bool, error) {
	if br, err := bridgeByName(name); err == nil || !isNotFound(err) {
		return br, false, err
	}
	la := netlink.NewLinkAttrs()
	la.Name = name
	err := netlink.LinkAdd(&netlink.Bridge{LinkAttrs: la})
	created := err == nil
	if err != nil && !errors.Is(err, unix.EEXIST) {
		return nil, false, fmt.Errorf("create bridge %s: %w", name, err)
	}
	br, err := bridgeByName(name)
	return br, created, err
}

func bridgeByName(name string) (*netlink.Bridge, error) {
	l, err := netlink.LinkByName(name)
	if err != nil {
		return nil, fmt.Errorf("look up bridge %s: %w", name, err)
	}
	br, ok := l.(*netlink.Bridge)
	if !ok {
		return nil, fmt.Errorf("link %s exists and is a %s, not a bridge", name, l.Type())
	}
	return br, nil
}

// pinMAC sets the bridge's MAC address to the one it has. Until a MAC is
// set explicitly the kernel gives a bridge the lowest MAC of its ports, so
// deleting the pod whose veth has it changes the gateway's MAC under every
// other pod on the node: their ARP entries point nowhere until they expire
// (~30 s without the gateway; test/multinode's DNS lookups timed out so).
// Setting it marks the address as set; an existing bridge keeps its MAC.
func pinMAC(br *netlink.Bridge) error {
	mac := br.Attrs().HardwareAddr
	if len(mac) == 0 {
		return nil
	}
	if err := netlink.LinkSetHardwareAddr(br, mac); err != nil {
		return fmt.Errorf("pin the MAC address of bridge %s: %w", br.Attrs().Name, err)
	}
	return nil
}

func configureBridge(log *zap.Logger, br *netlink.Bridge, gateway *net.IPNet) error {
	name := br.Attrs().Name
	if err := ensureOnlyAddr(log, br, gateway); err != nil {
		return err
	}
	if err := netlink.LinkSetUp(br); err != nil {
		return fmt.Errorf("set bridge %s up: %w", name, err)
	}
	if err := pinMAC(br); err != nil {
		return err
	}
	links, err := netlink.LinkList()
	if err != nil {
		return fmt.Errorf("list links: %w", err)
	}
	for _, l := range links {
		if l.Attrs().MasterIndex == br.Attrs().Index {
			if err := netlink.LinkSetHairpin(l, true); err != nil {
				return fmt.Errorf("hairpin on %s port %s: %w", name, l.Attrs().Name, err)
			}
		}
	}
	return nil
}

// ensureOnlyAddr adds want to link and removes any other IPv4 address.
func ensureOnlyAddr(log *zap.Logger, link netlink.Link, want *net.IPNet) error {
	name := link.Attrs().Name
	addrs, err := netlink.AddrList(link, netlink.FAMILY_V4)
	if err != nil {
		return fmt.Errorf("list addresses of %s: %w", name, err)
	}
	have := false
	for _, a := range addrs {
		if a.IPNet.String() == want.String() {
			have = true
			continue
		}
		if err := netlink.AddrDel(link, &a); err != nil {
			return fmt.Errorf("remove address %s from %s: %w", a.IPNet, name, err)
		}
		log.Info("replaced bridge address", zap.String("bridge", name), zap.Stringer("old", a.IPNet))
	}
	if have {
		return nil
	}
	err = netlink.AddrAdd(link, &netlink.Addr{IPNet: want})
	if err != nil && !errors.Is(err, unix.EEXIST) {
		return fmt.Errorf("add address %s to %s: %w", want, name, err)
	}
	return nil
}

func isNotFound(err error) bool {
	var nf netlink.LinkNotFoundError
	return errors.As(err, &nf)
}

// defaultMTU is the MTU of the link of the host's IPv4 default route, or
// 1500 when there is none.
func defaultMTU() int {
	routes, err := netlink.RouteList(nil, netlink.FAMILY_V4)
	if err != nil {
		return 1500
	}
	for _, r := range routes {
		if (r.Dst == nil || r.Dst.IP.IsUnspecified()) && r.LinkIndex > 0 {
			if l, err := netlink.LinkByIndex(r.LinkIndex); err == nil && l.Attrs().MTU > 0 {
				return l.Attrs().MTU
			}
		}
	}
	return 1500
}
