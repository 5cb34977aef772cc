package overlay

import (
	"fmt"
	"net"

	"go.uber.org/zap"
	"k8s.io/client-go/kubernetes"
)

// Backends.
const (
	BackendVXLAN  = "vxlan"
	BackendHostGW = "host-gw"
)

// Defaults (flannel's).
const (
	DefaultDevice = "orch.1"
	DefaultVNI    = 1
	DefaultPort   = 8472
	// vxlanOverhead is what VXLAN encapsulation adds (IPv4 outer header).
	vxlanOverhead = 50
	// RouteProtocol marks the routes orch programs (rtnetlink protocol
	// number; unassigned in /etc/iproute2/rt_protos).
	RouteProtocol = 0x6f
)

// Node annotations the agent publishes.
const (
	AnnotationBackend  = "orch.io/network-backend"
	AnnotationVXLANMAC = "orch.io/vxlan-mac"
)

// Config is one node's overlay.
type Config struct {
	// Backend is vxlan (default) or host-gw.
	Backend  string
	NodeName string
	// NodeIP is this node's InternalIP (the VXLAN local address).
	NodeIP net.IP
	// PodCIDR is this node's pod subnet.
	PodCIDR string
	// Device is the VXLAN device name (default orch.1).
	Device string
	VNI    int // default 1
	Port   int // default 8472
	Client kubernetes.Interface
	Log    *zap.Logger
}

// ParseBackend checks a --network-backend value ("" is vxlan).
func ParseBackend(s string) (string, error) {
	switch s {
	case "", BackendVXLAN:
		return BackendVXLAN, nil
	case BackendHostGW:
		return BackendHostGW, nil
	}
	return "", fmt.Errorf("--network-backend %q: must be %s or %s", s, BackendVXLAN, BackendHostGW)
}

// parsed is a validated Config.
type parsed struct {
	Config
	podNet *net.IPNet
}

func (c Config) parse() (*parsed, error) {
	b, err := ParseBackend(c.Backend)
	if err != nil {
		return nil, err
	}
	c.Backend = b
	if c.Device == "" {
		c.Device = DefaultDevice
	}
	if c.VNI == 0 {
		c.VNI = DefaultVNI
	}
	if c.Port == 0 {
		c.Port = DefaultPort
	}
	if len(c.Device) > 15 {
		return nil, fmt.Errorf("overlay: device name %q is longer than 15 characters", c.Device)
	}
	if c.NodeIP.To4() == nil {
		return nil, fmt.Errorf("overlay: node IP %v is not IPv4", c.NodeIP)
	}
	_, podNet, err := net.ParseCIDR(c.PodCIDR)
	if err != nil || podNet.IP.To4() == nil {
		return nil, fmt.Errorf("overlay: podCIDR %q is not an IPv4 CIDR", c.PodCIDR)
	}
	if c.NodeName == "" || c.Client == nil {
		return nil, fmt.Errorf("overlay: node name and client are required")
	}
	if c.Log == nil {
		c.Log = zap.NewNop()
	}
	return &parsed{Config: c, podNet: podNet}, nil
}
