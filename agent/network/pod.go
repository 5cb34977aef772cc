package network

import (
	"context"
	"errors"
	"fmt"
	"net"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"go.uber.org/zap"
)

// PodNet names the pod whose network is set up.
type PodNet struct {
	ID        string // pod UID; names everything created for the pod
	Name      string
	Namespace string
	Hostname  string // recorded for the runtime; the UTS namespace is not ours
	// Ports are the pod's host ports (ports[].hostPort), DNATed to the pod
	// like the CNI portmap plugin does.
	Ports []PortMapping
}

// PodNetStatus is the result of SetupPod.
type PodNetStatus struct {
	ID        string
	NetnsPath string
	Interface string     // eth0
	IP        *net.IPNet // pod address with the podCIDR mask
	Gateway   net.IP
	HostVeth  string
	MAC       net.HardwareAddr
	Hostname  string
}

// undo is a stack of rollback steps.
type undo []func()

func (u *undo) push(f func()) { *u = append(*u, f) }
func (u undo) run() {
	for i := len(u) - 1; i >= 0; i-- {
		u[i]()
	}
}

func (m *Manager) step(name string) error {
	if m.stepHook == nil {
		return nil
	}
	return m.stepHook(name)
}

// SetupPod creates (or completes) the pod's network: its namespace, a veth
// pair with eth0 inside holding the allocated IP, the host end on the bridge
// with hairpin on, lo up and a default route via the gateway. Calling it
// again for a set-up pod returns the same status. On failure everything this
// call created is removed again. EnsureBridge must have run before.
func (m *Manager) SetupPod(ctx context.Context, pod PodNet) (_ *PodNetStatus, err error) {
	if pod.ID == "" {
		return nil, fmt.Errorf("setup pod network: empty pod ID")
	}
	log := m.log.With(zap.String("pod", pod.Namespace+"/"+pod.Name), zap.String("uid", pod.ID))
	var rollback undo
	defer func() {
		if err != nil {
			log.Warn("pod network setup failed; rolling back", zap.Error(err))
			rollback.run()
		}
	}()
	ip, err := m.allocate(pod.ID, &rollback)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	nsPath := m.NetnsPath(pod.ID)
	created, err := ensureNetns(nsPath)
	if err != nil {
		return nil, err
	}
	if created {
		rollback.push(func() { _ = removeNetns(nsPath) })
	}
	if err := m.step("netns"); err != nil {
		return nil, err
	}
	st, err := m.plumb(pod, nsPath, ip, &rollback)
	if err != nil {
		return nil, err
	}
	if err := m.setupHostPorts(pod, ip); err != nil {
		return nil, fmt.Errorf("pod host ports: %w", err)
	}
	log.Debug("pod network ready", zap.Stringer("ip", st.IP), zap.String("netns", nsPath))
	return st, nil
}

func (m *Manager) allocate(id string, rollback *undo) (net.IP, error) {
	_, had, err := m.ipam.Get(id)
	if err != nil {
		return nil, err
	}
	ip, err := m.ipam.Allocate(id)
	if err != nil {
		return nil, fmt.Errorf("allocate pod IP: %w", err)
	}
	if !had {
		rollback.push(func() { _ = m.ipam.Release(id) })
	}
	return ip, m.step("ipam")
}

// plumb creates the veth pair and configures both ends.
func (m *Manager) plumb(pod PodNet, nsPath string, ip net.IP, rollback *undo) (*PodNetStatus, error) {
	ns, err := netns.GetFromPath(nsPath)
	if err != nil {
		return nil, fmt.Errorf("open netns %s: %w", nsPath, err)
	}
	defer ns.Close()
	h, err := netlink.NewHandleAt(ns)
	if err != nil {
		return nil, fmt.Errorf("netlink in %s: %w", nsPath, err)
	}
	defer h.Close()
	host, err := m.ensureVeth(pod.ID, ns, h, rollback)
	if err != nil {
		return nil, err
	}
	if err := m.attachToBridge(host); err != nil {
		return nil, err
	}
	if err := m.step("bridge"); err != nil {
		return nil, err
	}
	addr := &net.IPNet{IP: ip, Mask: m.cfg.podNet.Mask}
	mac, err := m.configurePodSide(h, addr)
	if err != nil {
		return nil, err
	}
	if err := m.step("pod-interface"); err != nil {
		return nil, err
	}
	return &PodNetStatus{ID: pod.ID, NetnsPath: nsPath, Interface: PodInterface, IP: addr,
		Gateway: m.cfg.gateway.IP, HostVeth: host.Attrs().Name, MAC: mac, Hostname: pod.Hostname}, nil
}

// ensureVeth returns the host end of the pod's veth pair, creating the pair
// unless the host end exists and its peer is eth0 in the pod namespace.
func (m *Manager) ensureVeth(id string, ns netns.NsHandle, h *netlink.Handle, rollback *undo) (netlink.Link, error) {
	name := HostVethName(id)
	if host, err := netlink.LinkByName(name); err == nil {
		if _, perr := h.LinkByName(PodInterface); perr == nil {
			return host, nil
		}
		// A host end whose peer is not in the namespace is a leftover.
		if err := netlink.LinkDel(host); err != nil && !isNotFound(err) {
			return nil, fmt.Errorf("delete stale veth %s: %w", name, err)
		}
	} else if !isNotFound(err) {
		return nil, fmt.Errorf("look up veth %s: %w", name, err)
	}
	la := netlink.NewLinkAttrs()
	la.Name = name
	la.MTU = m.mtu
	veth := &netlink.Veth{LinkAttrs: la, PeerName: PodInterface, PeerNamespace: netlink.NsFd(int(ns))}
	if err := netlink.LinkAdd(veth); err != nil {
		return nil, fmt.Errorf("create veth %s/%s: %w", name, PodInterface, err)
	}
	rollback.push(func() { _ = deleteLink(name) })
	host, err := netlink.LinkByName(name)
	if err != nil {
		return nil, fmt.Errorf("look up new veth %s: %w", name, err)
	}
	return host, m.step("veth")
}

func (m *Manager) attachToBridge(host netlink.Link) error {
	name := host.Attrs().Name
	br, err := bridgeByName(m.cfg.BridgeName)
	if err != nil {
		return err
	}
	if host.Attrs().MasterIndex != br.Attrs().Index {
		if err := netlink.LinkSetMaster(host, br); err != nil {
			return fmt.Errorf("attach %s to %s: %w", name, m.cfg.BridgeName, err)
		}
	}
	if err := netlink.LinkSetHairpin(host, true); err != nil {
		return fmt.Errorf("hairpin on %s: %w", name, err)
	}
	if err := netlink.LinkSetUp(host); err != nil {
		return fmt.Errorf("set %s up: %w", name, err)
	}
	return nil
}

// configurePodSide sets lo and eth0 up, eth0's address and the default route
// inside the pod namespace, and returns eth0's MAC.
func (m *Manager) configurePodSide(h *netlink.Handle, addr *net.IPNet) (net.HardwareAddr, error) {
	lo, err := h.LinkByName("lo")
	if err != nil {
		return nil, fmt.Errorf("pod lo: %w", err)
	}
	if err := h.LinkSetUp(lo); err != nil {
		return nil, fmt.Errorf("set pod lo up: %w", err)
	}
	eth, err := h.LinkByName(PodInterface)
	if err != nil {
		return nil, fmt.Errorf("pod %s: %w", PodInterface, err)
	}
	if err := h.AddrReplace(eth, &netlink.Addr{IPNet: addr}); err != nil {
		return nil, fmt.Errorf("set pod address %s: %w", addr, err)
	}
	if err := h.LinkSetUp(eth); err != nil {
		return nil, fmt.Errorf("set pod %s up: %w", PodInterface, err)
	}
	def := &net.IPNet{IP: net.IPv4zero.To4(), Mask: net.CIDRMask(0, 32)}
	route := &netlink.Route{LinkIndex: eth.Attrs().Index, Dst: def, Gw: m.cfg.gateway.IP}
	if err := h.RouteReplace(route); err != nil {
		return nil, fmt.Errorf("pod default route via %s: %w", m.cfg.gateway.IP, err)
	}
	return eth.Attrs().HardwareAddr, nil
}

// TeardownPod removes the pod's veth pair, namespace and IP. It is
// idempotent: a pod whose network is already gone is success. The IP is
// released only once the veth and namespace are gone, so the allocation
// stays as the record (see PodIDs) from which a later retry finds the pod.
// ctx is accepted for the runtime's call chain; no step blocks.
func (m *Manager) TeardownPod(ctx context.Context, podID string) error {
	if podID == "" {
		return fmt.Errorf("teardown pod network: empty pod ID")
	}
	err := errors.Join(m.teardownHostPorts(podID), deleteLink(HostVethName(podID)), removeNetns(m.NetnsPath(podID)))
	if err == nil {
		if rerr := m.ipam.Release(podID); rerr != nil {
			err = fmt.Errorf("release pod IP: %w", rerr)
		}
	}
	if err != nil {
		return fmt.Errorf("teardown pod %s network: %w", podID, err)
	}
	return nil
}

// PodIDs lists the pods that hold network state on this node (their IP
// allocations), for garbage collection: tear down those no longer wanted.
func (m *Manager) PodIDs() ([]string, error) {
	list, err := m.ipam.List()
	if err != nil {
		return nil, err
	}
	ids := make([]string, 0, len(list))
	for _, a := range list {
		ids = append(ids, a.Owner)
	}
	return ids, nil
}

// deleteLink deletes a link by name; a missing link is success.
func deleteLink(name string) error {
	l, err := netlink.LinkByName(name)
	if isNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("look up %s: %w", name, err)
	}
	if err := netlink.LinkDel(l); err != nil && !isNotFound(err) {
		return fmt.Errorf("delete %s: %w", name, err)
	}
	return nil
}
