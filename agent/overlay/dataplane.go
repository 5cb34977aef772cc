package overlay

import (
	"errors"
	"fmt"
	"net"

	"github.com/vishvananda/netlink"
	"go.uber.org/zap"
	"golang.org/x/sys/unix"
)

// dataplane programs one network namespace through a netlink handle.
type dataplane struct {
	h   *netlink.Handle
	cfg *parsed
	log *zap.Logger
}

// ensureVXLAN creates or fixes the VXLAN device and returns it (up, with
// the podCIDR's .0/32 and MTU = underlay - 50). A device with other
// VNI/port/local address is re-created.
func (d *dataplane) ensureVXLAN() (netlink.Link, error) {
	under, err := d.underlay()
	if err != nil {
		return nil, err
	}
	mtu := under.Attrs().MTU - vxlanOverhead
	link, err := d.h.LinkByName(d.cfg.Device)
	if err == nil && !d.vxlanMatches(link, under) {
		d.log.Info("re-creating the VXLAN device", zap.String("device", d.cfg.Device))
		if err := d.h.LinkDel(link); err != nil && !isNotFound(err) {
			return nil, fmt.Errorf("deleting VXLAN device %s: %w", d.cfg.Device, err)
		}
		err = netlink.LinkNotFoundError{}
	}
	if err != nil {
		if !isNotFound(err) {
			return nil, fmt.Errorf("looking up VXLAN device %s: %w", d.cfg.Device, err)
		}
		if link, err = d.createVXLAN(under, mtu); err != nil {
			return nil, err
		}
	}
	if link.Attrs().MTU != mtu {
		if err := d.h.LinkSetMTU(link, mtu); err != nil {
			return nil, fmt.Errorf("setting MTU of %s: %w", d.cfg.Device, err)
		}
	}
	gw := &net.IPNet{IP: gatewayOf(d.cfg.podNet), Mask: net.CIDRMask(32, 32)}
	if err := d.ensureOnlyAddr(link, gw); err != nil {
		return nil, err
	}
	if err := d.h.LinkSetUp(link); err != nil {
		return nil, fmt.Errorf("setting %s up: %w", d.cfg.Device, err)
	}
	return d.h.LinkByIndex(link.Attrs().Index)
}

func (d *dataplane) vxlanMatches(link netlink.Link, under netlink.Link) bool {
	v, ok := link.(*netlink.Vxlan)
	return ok && v.VxlanId == d.cfg.VNI && v.Port == d.cfg.Port && v.SrcAddr.Equal(d.cfg.NodeIP) &&
		!v.Learning && v.VtepDevIndex == under.Attrs().Index
}

func (d *dataplane) createVXLAN(under netlink.Link, mtu int) (netlink.Link, error) {
	v := &netlink.Vxlan{LinkAttrs: netlink.LinkAttrs{Name: d.cfg.Device, MTU: mtu},
		VxlanId: d.cfg.VNI, VtepDevIndex: under.Attrs().Index, SrcAddr: d.cfg.NodeIP, Port: d.cfg.Port, Learning: false}
	if err := d.h.LinkAdd(v); err != nil && !errors.Is(err, unix.EEXIST) {
		return nil, fmt.Errorf("creating VXLAN device %s (VNI %d, port %d): %w", d.cfg.Device, d.cfg.VNI, d.cfg.Port, err)
	}
	link, err := d.h.LinkByName(d.cfg.Device)
	if err != nil {
		return nil, fmt.Errorf("looking up VXLAN device %s: %w", d.cfg.Device, err)
	}
	d.log.Info("created the VXLAN device", zap.String("device", d.cfg.Device), zap.Int("vni", d.cfg.VNI),
		zap.Int("mtu", mtu), zap.Stringer("mac", link.Attrs().HardwareAddr))
	return link, nil
}

// underlay is the link holding the node IP.
func (d *dataplane) underlay() (netlink.Link, error) {
	addrs, err := d.h.AddrList(nil, netlink.FAMILY_V4)
	if err != nil {
		return nil, fmt.Errorf("listing addresses: %w", err)
	}
	for _, a := range addrs {
		if a.IP.Equal(d.cfg.NodeIP) {
			return d.h.LinkByIndex(a.LinkIndex)
		}
	}
	return nil, fmt.Errorf("no interface holds the node IP %s", d.cfg.NodeIP)
}

func (d *dataplane) ensureOnlyAddr(link netlink.Link, want *net.IPNet) error {
	addrs, err := d.h.AddrList(link, netlink.FAMILY_V4)
	if err != nil {
		return fmt.Errorf("listing addresses of %s: %w", link.Attrs().Name, err)
	}
	found := false
	for _, a := range addrs {
		if a.IPNet.String() == want.String() {
			found = true
			continue
		}
		if err := d.h.AddrDel(link, &a); err != nil && !isNotFound(err) {
			return fmt.Errorf("removing address %s from %s: %w", a.IPNet, link.Attrs().Name, err)
		}
	}
	if found {
		return nil
	}
	if err := d.h.AddrAdd(link, &netlink.Addr{IPNet: want}); err != nil && !errors.Is(err, unix.EEXIST) {
		return fmt.Errorf("adding %s to %s: %w", want, link.Attrs().Name, err)
	}
	return nil
}

// removeVXLAN deletes the VXLAN device (its FDB, neighbours and routes go
// with it).
func (d *dataplane) removeVXLAN() error {
	link, err := d.h.LinkByName(d.cfg.Device)
	if err != nil {
		if isNotFound(err) {
			return nil
		}
		return fmt.Errorf("looking up %s: %w", d.cfg.Device, err)
	}
	if err := d.h.LinkDel(link); err != nil && !isNotFound(err) {
		return fmt.Errorf("deleting %s: %w", d.cfg.Device, err)
	}
	return nil
}

func isNotFound(err error) bool {
	var nf netlink.LinkNotFoundError
	return errors.As(err, &nf) || errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENODEV) || errors.Is(err, unix.ESRCH)
}
