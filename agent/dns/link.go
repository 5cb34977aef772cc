package dns

import (
	"errors"
	"fmt"
	"hash/fnv"
	"net"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// DefaultLinkName is the dummy interface holding the cluster DNS IP when the
// pod bridge has its default name.
const DefaultLinkName = "orch-dns"

// LinkName is the dummy interface name for a pod bridge: orch-dns for the
// default orch0, else <bridge>-dns (shortened with a hash to fit 15
// characters), so tests running their own bridge never touch orch-dns.
func LinkName(bridge string) string {
	if bridge == "" || bridge == "orch0" {
		return DefaultLinkName
	}
	const suffix, maxLen = "-dns", 15
	if len(bridge)+len(suffix) <= maxLen {
		return bridge + suffix
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(bridge))
	return fmt.Sprintf("%s%04x%s", bridge[:maxLen-len(suffix)-4], h.Sum32()&0xffff, suffix)
}

// EnsureLink makes the interface name exist, be up and hold ip as a host
// address (/32 or /128). It is a dummy interface, or, on kernels built
// without the dummy driver, a bridge without ports (which holds a local
// address just as well). It is idempotent.
func EnsureLink(name string, ip net.IP) error {
	link, err := ensureHolder(name)
	if err != nil {
		return err
	}
	bits := 32
	if ip.To4() == nil {
		bits = 128
	}
	addr := &netlink.Addr{IPNet: &net.IPNet{IP: ip, Mask: net.CIDRMask(bits, bits)}}
	if bits == 128 {
		addr.Flags = unix.IFA_F_NODAD // usable at once, no duplicate address detection
	}
	if err := netlink.AddrReplace(link, addr); err != nil {
		return fmt.Errorf("add %s to %s: %w", ip, name, err)
	}
	if err := netlink.LinkSetUp(link); err != nil {
		return fmt.Errorf("set %s up: %w", name, err)
	}
	return nil
}

// ensureHolder returns the interface name, creating it when missing.
func ensureHolder(name string) (netlink.Link, error) {
	link, err := netlink.LinkByName(name)
	if err == nil {
		if !isHolder(link) {
			return nil, fmt.Errorf("link %s exists and is a %s, not orch's DNS interface", name, link.Type())
		}
		return link, nil
	}
	var nf netlink.LinkNotFoundError
	if !errors.As(err, &nf) {
		return nil, fmt.Errorf("look up %s: %w", name, err)
	}
	la := netlink.NewLinkAttrs()
	la.Name = name
	err = netlink.LinkAdd(&netlink.Dummy{LinkAttrs: la})
	if errors.Is(err, unix.EOPNOTSUPP) { // no dummy driver in this kernel
		err = netlink.LinkAdd(&netlink.Bridge{LinkAttrs: la})
	}
	if err != nil && !errors.Is(err, unix.EEXIST) {
		return nil, fmt.Errorf("create interface %s: %w", name, err)
	}
	if link, err = netlink.LinkByName(name); err != nil {
		return nil, fmt.Errorf("look up %s: %w", name, err)
	}
	return link, nil
}

// isHolder says whether link can be orch's DNS interface: a dummy, or a
// bridge without ports.
func isHolder(link netlink.Link) bool {
	switch link.Type() {
	case "dummy":
		return true
	case "bridge":
		links, err := netlink.LinkList()
		if err != nil {
			return false
		}
		for _, l := range links {
			if l.Attrs().MasterIndex == link.Attrs().Index {
				return false
			}
		}
		return true
	}
	return false
}

// RemoveLink deletes the dummy interface; a missing one is fine.
func RemoveLink(name string) error {
	link, err := netlink.LinkByName(name)
	if err != nil {
		var nf netlink.LinkNotFoundError
		if errors.As(err, &nf) {
			return nil
		}
		return fmt.Errorf("look up %s: %w", name, err)
	}
	if !isHolder(link) {
		return fmt.Errorf("link %s is a %s, not orch's DNS interface: not deleting it", name, link.Type())
	}
	if err := netlink.LinkDel(link); err != nil {
		return fmt.Errorf("delete %s: %w", name, err)
	}
	return nil
}
