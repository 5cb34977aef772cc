package overlay

import (
	"errors"
	"fmt"

	"github.com/vishvananda/netlink"
	"go.uber.org/zap"
	"golang.org/x/sys/unix"
)

// apply makes the host match want: entries for peers that left are
// removed (routes first), the wanted ones added or replaced. link is the
// VXLAN device, nil for host-gw.
func (d *dataplane) apply(link netlink.Link, want Desired) error {
	var errs []error
	errs = append(errs, d.pruneRoutes(want.Routes))
	if link != nil {
		errs = append(errs, d.pruneNeighs(link, want.Neighs), d.pruneFDB(link, want.FDB))
		for _, f := range want.FDB {
			errs = append(errs, d.setFDB(link, f))
		}
		for _, n := range want.Neighs {
			errs = append(errs, d.setNeigh(link, n))
		}
	}
	for _, r := range want.Routes {
		errs = append(errs, d.setRoute(link, r))
	}
	return errors.Join(errs...)
}

// ourRoutes lists the main-table routes carrying orch's protocol.
func (d *dataplane) ourRoutes() ([]netlink.Route, error) {
	rs, err := d.h.RouteListFiltered(netlink.FAMILY_V4, &netlink.Route{Protocol: RouteProtocol, Table: unix.RT_TABLE_MAIN},
		netlink.RT_FILTER_PROTOCOL|netlink.RT_FILTER_TABLE)
	if err != nil {
		return nil, fmt.Errorf("listing routes: %w", err)
	}
	return rs, nil
}

func (d *dataplane) pruneRoutes(want []Route) error {
	rs, err := d.ourRoutes()
	if err != nil {
		return err
	}
	keep := map[string]bool{}
	for _, r := range want {
		keep[r.Dst.String()] = true
	}
	var errs []error
	for _, r := range rs {
		if r.Dst != nil && keep[r.Dst.String()] {
			continue
		}
		d.log.Info("removing route", zap.Stringer("dst", r.Dst), zap.Stringer("via", r.Gw))
		if err := d.h.RouteDel(&r); err != nil && !errors.Is(err, unix.ESRCH) {
			errs = append(errs, fmt.Errorf("deleting route %s: %w", r.Dst, err))
		}
	}
	return errors.Join(errs...)
}

func (d *dataplane) setRoute(link netlink.Link, r Route) error {
	nr := &netlink.Route{Dst: r.Dst, Gw: r.Gw, Protocol: RouteProtocol, Table: unix.RT_TABLE_MAIN}
	if link != nil {
		nr.LinkIndex = link.Attrs().Index
	}
	if r.OnLink {
		nr.Flags = int(netlink.FLAG_ONLINK)
	}
	if err := d.h.RouteReplace(nr); err != nil {
		return fmt.Errorf("route %s via %s: %w", r.Dst, r.Gw, err)
	}
	return nil
}

// pruneFDB removes the device's FDB entries with a remote address that are
// not wanted (the kernel's own entries have none).
func (d *dataplane) pruneFDB(link netlink.Link, want []FDBEntry) error {
	ns, err := d.h.NeighList(link.Attrs().Index, unix.AF_BRIDGE)
	if err != nil {
		return fmt.Errorf("listing FDB of %s: %w", link.Attrs().Name, err)
	}
	keep := map[string]bool{}
	for _, f := range want {
		keep[f.MAC.String()+"|"+f.Dst.String()] = true
	}
	var errs []error
	for _, n := range ns {
		if n.IP == nil || keep[n.HardwareAddr.String()+"|"+n.IP.String()] {
			continue
		}
		if err := d.h.NeighDel(&n); err != nil && !errors.Is(err, unix.ENOENT) {
			errs = append(errs, fmt.Errorf("deleting FDB entry %s -> %s: %w", n.HardwareAddr, n.IP, err))
		}
	}
	return errors.Join(errs...)
}

func (d *dataplane) setFDB(link netlink.Link, f FDBEntry) error {
	err := d.h.NeighSet(&netlink.Neigh{LinkIndex: link.Attrs().Index, Family: unix.AF_BRIDGE,
		State: netlink.NUD_PERMANENT, Flags: netlink.NTF_SELF, IP: f.Dst, HardwareAddr: f.MAC})
	if err != nil {
		return fmt.Errorf("FDB entry %s -> %s: %w", f.MAC, f.Dst, err)
	}
	return nil
}

func (d *dataplane) pruneNeighs(link netlink.Link, want []NeighEntry) error {
	ns, err := d.h.NeighList(link.Attrs().Index, netlink.FAMILY_V4)
	if err != nil {
		return fmt.Errorf("listing neighbours of %s: %w", link.Attrs().Name, err)
	}
	keep := map[string]bool{}
	for _, n := range want {
		keep[n.IP.String()+"|"+n.MAC.String()] = true
	}
	var errs []error
	for _, n := range ns {
		if keep[n.IP.String()+"|"+n.HardwareAddr.String()] {
			continue
		}
		if err := d.h.NeighDel(&n); err != nil && !errors.Is(err, unix.ENOENT) {
			errs = append(errs, fmt.Errorf("deleting neighbour %s: %w", n.IP, err))
		}
	}
	return errors.Join(errs...)
}

func (d *dataplane) setNeigh(link netlink.Link, n NeighEntry) error {
	err := d.h.NeighSet(&netlink.Neigh{LinkIndex: link.Attrs().Index, Family: netlink.FAMILY_V4,
		State: netlink.NUD_PERMANENT, Type: unix.RTN_UNICAST, IP: n.IP, HardwareAddr: n.MAC})
	if err != nil {
		return fmt.Errorf("neighbour %s -> %s: %w", n.IP, n.MAC, err)
	}
	return nil
}

// Teardown removes the VXLAN device and every route orch's overlay
// programmed in the handle's namespace (nil: the current one).
func Teardown(h *netlink.Handle, device string) error {
	if h == nil {
		var err error
		if h, err = netlink.NewHandle(); err != nil {
			return fmt.Errorf("netlink handle: %w", err)
		}
		defer h.Close()
	}
	if device == "" {
		device = DefaultDevice
	}
	d := &dataplane{h: h, cfg: &parsed{Config: Config{Device: device}}, log: zap.NewNop()}
	return errors.Join(d.pruneRoutes(nil), d.removeVXLAN())
}
