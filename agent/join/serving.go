package join

import (
	"crypto/ecdsa"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"path/filepath"
	"slices"
	"time"

	serverjoin "github.com/orch/orch/server/join"
)

// ServingTLS returns the serving certificate and key as a tls.Certificate
// (Leaf set) for the kubelet API listener, e.g.
// tls.Config{Certificates: []tls.Certificate{cert}}.
func (c *Credentials) ServingTLS() (tls.Certificate, error) {
	if len(c.ServingCertPEM) == 0 || len(c.ServingKeyPEM) == 0 {
		return tls.Certificate{}, fmt.Errorf("join: %w in the credentials of %q", ErrNoServingCertificate, c.NodeName)
	}
	pair, err := tls.X509KeyPair(c.ServingCertPEM, c.ServingKeyPEM)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("join: serving certificate and key: %w", err)
	}
	if pair.Leaf == nil {
		if pair.Leaf, err = x509.ParseCertificate(pair.Certificate[0]); err != nil {
			return tls.Certificate{}, fmt.Errorf("join: parse serving certificate: %w", err)
		}
	}
	return pair, nil
}

// canonicalNodeIPs checks the wanted node IPs and returns them as a sorted
// set (IPv4 in 4-byte form), so that they compare with a certificate's.
func canonicalNodeIPs(ips []net.IP) ([]net.IP, error) {
	addrs := make([]netip.Addr, 0, len(ips))
	for i, ip := range ips {
		a, ok := netip.AddrFromSlice(ip)
		if !ok {
			return nil, fmt.Errorf("%w: NodeIPs[%d] %v is malformed", ErrInvalidNodeIP, i, ip)
		}
		a = a.Unmap()
		if a.IsUnspecified() || a.IsMulticast() {
			return nil, fmt.Errorf("%w: NodeIPs[%d] %s is unspecified or multicast", ErrInvalidNodeIP, i, a)
		}
		addrs = append(addrs, a)
	}
	if len(addrs) > serverjoin.MaxNodeIPs {
		return nil, fmt.Errorf("%w: %d node IPs, at most %d", ErrInvalidNodeIP, len(addrs), serverjoin.MaxNodeIPs)
	}
	slices.SortFunc(addrs, func(x, y netip.Addr) int { return x.Compare(y) })
	addrs = slices.Compact(addrs)
	out := make([]net.IP, len(addrs))
	for i, a := range addrs {
		out[i] = net.IP(a.AsSlice())
	}
	return out, nil
}

func ipStrings(ips []net.IP) []string {
	out := make([]string, len(ips))
	for i, ip := range ips {
		out[i] = ip.String()
	}
	return out
}

// checkServing verifies that the serving certificate matches its key,
// chains to the CA for server auth with the node name, is for
// system:node:<nodeName> and carries exactly wantIPs (canonical). It fills
// ServingNotAfter and NodeIPs.
func checkServing(c *Credentials, nodeName string, wantIPs []net.IP, now time.Time) error {
	pair, err := c.ServingTLS()
	if err != nil {
		return err
	}
	if _, ok := pair.PrivateKey.(*ecdsa.PrivateKey); !ok {
		return errors.New("serving key is not ECDSA")
	}
	cert := pair.Leaf
	pool, err := caPool(c.CAPEM)
	if err != nil {
		return fmt.Errorf("CA: %w", err)
	}
	_, err = cert.Verify(x509.VerifyOptions{DNSName: nodeName, Roots: pool, CurrentTime: now,
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}})
	if err != nil {
		return fmt.Errorf("serving certificate does not verify against the CA for %q: %w", nodeName, err)
	}
	if want := serverjoin.NodeUserPrefix + nodeName; cert.Subject.CommonName != want {
		return fmt.Errorf("serving certificate is for %q, want %q", cert.Subject.CommonName, want)
	}
	got, err := canonicalNodeIPs(cert.IPAddresses)
	if err != nil || !slices.Equal(ipStrings(got), ipStrings(wantIPs)) {
		return fmt.Errorf("serving certificate has IPs %v, want %v", ipStrings(cert.IPAddresses), ipStrings(wantIPs))
	}
	c.ServingNotAfter, c.NodeIPs = cert.NotAfter, got
	return nil
}

// loadStoredServing adds the stored serving certificate to creds, or says
// why a new join is needed (missing, unusable, expiring or other IPs).
func loadStoredServing(o Options, creds *Credentials, read func(string) []byte) string {
	creds.ServingCertPEM, creds.ServingKeyPEM = read(ServingCertFile), read(ServingKeyFile)
	creds.ServingCertPath, creds.ServingKeyPath = filepath.Join(o.Dir, ServingCertFile), filepath.Join(o.Dir, ServingKeyFile)
	if creds.ServingCertPEM == nil || creds.ServingKeyPEM == nil {
		return "no stored serving certificate"
	}
	if err := checkServing(creds, o.NodeName, o.NodeIPs, o.Now()); err != nil {
		return "stored serving certificate unusable: " + err.Error()
	}
	if o.Now().Add(o.RenewBefore).After(creds.ServingNotAfter) {
		return fmt.Sprintf("stored serving certificate expires at %s", creds.ServingNotAfter.UTC().Format(time.RFC3339))
	}
	return ""
}
