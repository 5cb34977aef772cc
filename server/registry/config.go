package registry

import (
	"fmt"
	"net"

	utilnet "k8s.io/apimachinery/pkg/util/net"
)

// Config holds the cluster-wide settings some strategies need.
type Config struct {
	// ServiceCIDR is the range Service ClusterIPs are allocated from (default 10.43.0.0/16).
	ServiceCIDR *net.IPNet
	// NodePortRange is the range NodePorts are allocated from (default 30000-32767).
	NodePortRange utilnet.PortRange
	// ClusterDomain is the DNS domain of the cluster (default cluster.local).
	ClusterDomain string
}

// DefaultConfig returns orch's defaults: service CIDR 10.43.0.0/16, NodePorts
// 30000-32767, domain cluster.local.
func DefaultConfig() Config {
	_, cidr, _ := net.ParseCIDR("10.43.0.0/16")
	return Config{
		ServiceCIDR:   cidr,
		NodePortRange: utilnet.PortRange{Base: 30000, Size: 2768},
		ClusterDomain: "cluster.local",
	}
}

// withDefaults fills unset fields of c from DefaultConfig.
func (c Config) withDefaults() Config {
	d := DefaultConfig()
	if c.ServiceCIDR == nil {
		c.ServiceCIDR = d.ServiceCIDR
	}
	if c.NodePortRange.Size == 0 {
		c.NodePortRange = d.NodePortRange
	}
	if c.ClusterDomain == "" {
		c.ClusterDomain = d.ClusterDomain
	}
	return c
}

// Validate reports a configuration the allocators cannot work with.
func (c Config) Validate() error {
	c = c.withDefaults()
	ones, bits := c.ServiceCIDR.Mask.Size()
	if bits-ones < 2 {
		return fmt.Errorf("service CIDR %s: too small, need at least a /%d", c.ServiceCIDR, bits-2)
	}
	if c.NodePortRange.Base < 1 || c.NodePortRange.Base+c.NodePortRange.Size-1 > 65535 {
		return fmt.Errorf("node port range %s: out of 1-65535", c.NodePortRange.String())
	}
	return nil
}
