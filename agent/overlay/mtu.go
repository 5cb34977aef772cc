package overlay

import (
	"fmt"
	"net"

	"github.com/vishvananda/netlink"
)

// PodMTU is the MTU pod interfaces should have on this node: the MTU of
// the link holding nodeIP, less the VXLAN overhead with the vxlan backend
// (as flannel's subnet.env FLANNEL_MTU). Without it pods send 1500-byte
// packets into the 1450-byte VXLAN device and depend on path MTU discovery.
// 0 (the caller's default) when nodeIP is on the loopback device, whose
// 65536 is more than a veth can take.
func PodMTU(backend string, nodeIP net.IP) (int, error) {
	b, err := ParseBackend(backend)
	if err != nil {
		return 0, err
	}
	h, err := netlink.NewHandle()
	if err != nil {
		return 0, fmt.Errorf("netlink handle: %w", err)
	}
	defer h.Close()
	return podMTUAt(h, b, nodeIP)
}

// podMTUAt is PodMTU in the network namespace of h.
func podMTUAt(h *netlink.Handle, b string, nodeIP net.IP) (int, error) {
	d := &dataplane{h: h, cfg: &parsed{Config: Config{NodeIP: nodeIP}}}
	under, err := d.underlay()
	if err != nil {
		return 0, err
	}
	if under.Attrs().Flags&net.FlagLoopback != 0 {
		return 0, nil
	}
	if b == BackendVXLAN {
		return under.Attrs().MTU - vxlanOverhead, nil
	}
	return under.Attrs().MTU, nil
}
