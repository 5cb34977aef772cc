package pki

import (
	"net"
	"time"

	"go.uber.org/zap"
)

// Options say which names the certificates must carry.
type Options struct {
	// Hostname is added as a DNS SAN; empty means os.Hostname().
	Hostname string
	// AdvertiseAddress is the address other hosts use to reach this server
	// (an IP or a DNS name); empty means none.
	AdvertiseAddress string
	// BindAddress is the address the API and peer listeners bind to; when
	// it is a specific IP (not empty, 0.0.0.0 or ::) the certificates carry
	// it instead of every interface address, since no other address
	// reaches the listeners — and interfaces coming and going on the host
	// then do not re-issue them.
	BindAddress string
	// TLSSANs are extra names (IPs or DNS names), like k3s --tls-san.
	TLSSANs []string
	// ClusterDomain is the cluster DNS domain; empty means cluster.local.
	ClusterDomain string
	// ServiceCIDR holds the `kubernetes` Service IP (its first address);
	// empty means 10.43.0.0/16.
	ServiceCIDR string
	// Logger receives what the package does (never key material); nil
	// means no logging.
	Logger *zap.Logger

	// LeafValidity is the lifetime of the leaf certificates issued here;
	// 0 means one year. A seam for tests of renewal.
	LeafValidity time.Duration

	// Now returns the current time; nil means time.Now. A seam for tests.
	Now func() time.Time
	// HostIPs lists the host's addresses; nil means all interface
	// addresses. A seam for tests.
	HostIPs func() ([]net.IP, error)
}

func (o Options) now() time.Time {
	if o.Now != nil {
		return o.Now()
	}
	return time.Now()
}

func (o Options) hostIPs() ([]net.IP, error) {
	if o.HostIPs != nil {
		return o.HostIPs()
	}
	return interfaceIPs()
}

func (o Options) logger() *zap.Logger {
	if o.Logger != nil {
		return o.Logger
	}
	return zap.NewNop()
}
