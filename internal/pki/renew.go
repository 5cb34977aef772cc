package pki

import (
	"context"
	"crypto/tls"
	"fmt"
	"sync"
	"time"

	"go.uber.org/zap"
)

// Names of the leaf certificates a Bundle renews (their file base names in
// the TLS directory; FrontProxyClientName lives in front-proxy/).
const (
	LeafServing = "serving"
	LeafPeer    = "peer"
	LeafAdmin   = "admin"
)

// DefaultRenewCheck is how often KeepRenewed looks at the leaf
// certificates: a timer, twice a day.
const DefaultRenewCheck = 12 * time.Hour

// leaf is one leaf certificate of the bundle with what is needed to issue
// it again.
type leaf struct {
	name string
	dir  string
	ca   *keyPair
	spec leafSpec
	kp   *keyPair
}

// leafSet holds the bundle's leaves; renewal swaps a leaf's key pair under
// the lock and TLS handshakes read the current one.
type leafSet struct {
	mu     sync.RWMutex
	leaves []*leaf
}

func (s *leafSet) add(l *leaf) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.leaves = append(s.leaves, l)
}

// get returns the current key pair of the named leaf.
func (s *leafSet) get(name string) *keyPair {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, l := range s.leaves {
		if l.name == name {
			return l.kp
		}
	}
	panic("pki: no leaf certificate " + name) // programming error: names are constants
}

// serverCert is a tls.Config.GetCertificate serving the current leaf.
func (s *leafSet) serverCert(name string) func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	return func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
		c := tlsCert(s.get(name))
		return &c, nil
	}
}

// clientCert is a tls.Config.GetClientCertificate presenting the current leaf.
func (s *leafSet) clientCert(name string) func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
	return func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
		c := tlsCert(s.get(name))
		return &c, nil
	}
}

// dueForRenewal is the renewal decision: a leaf is renewed once it has
// less than renewBefore (90 days) left at now, or has expired.
func dueForRenewal(notAfter, now time.Time) bool {
	return notAfter.Sub(now) < renewBefore
}

// RenewDue issues again, from the cluster CA, every leaf certificate that
// is within 90 days of expiry at the bundle's clock, writes it to its
// files and makes the TLS configurations of the bundle use it at the next
// handshake. The subject, names and usages stay; the key is new. It
// returns the names of the renewed leaves.
func (b *Bundle) RenewDue() ([]string, error) {
	now := b.now()
	b.leaves.mu.Lock()
	defer b.leaves.mu.Unlock()
	var renewed []string
	for _, l := range b.leaves.leaves {
		if !dueForRenewal(l.kp.cert.NotAfter, now) {
			continue
		}
		kp, err := l.ca.issue(now, l.spec, nil)
		if err != nil {
			return renewed, fmt.Errorf("renewing the %s certificate: %w", l.name, err)
		}
		if err := writePair(l.certPath(), l.keyPath(), kp); err != nil {
			return renewed, fmt.Errorf("renewing the %s certificate: %w", l.name, err)
		}
		b.log.Info("renewed certificate", zap.String("name", l.name), zap.Time("oldNotAfter", l.kp.cert.NotAfter),
			zap.Time("notAfter", kp.cert.NotAfter))
		l.kp = kp
		renewed = append(renewed, l.name)
	}
	return renewed, nil
}

func (l *leaf) certPath() string { return l.dir + "/" + l.name + ".crt" }
func (l *leaf) keyPath() string  { return l.dir + "/" + l.name + ".key" }

// KeepRenewed calls RenewDue every `every` (DefaultRenewCheck when 0) until
// ctx ends, and onRenew (may be nil) with the names renewed, e.g. to write
// the admin kubeconfig again. A failure is logged and retried at the next
// check.
func (b *Bundle) KeepRenewed(ctx context.Context, every time.Duration, onRenew func(names []string)) {
	if every <= 0 {
		every = DefaultRenewCheck
	}
	t := time.NewTimer(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		names, err := b.RenewDue()
		if err != nil {
			b.log.Error("renewing certificates", zap.Error(err))
		}
		if len(names) > 0 && onRenew != nil {
			onRenew(names)
		}
		t.Reset(every)
	}
}

// FrontProxyClientCertificate is a tls.Config.GetClientCertificate
// presenting the current (renewed) front-proxy client certificate.
func (b *Bundle) FrontProxyClientCertificate() func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
	return b.leaves.clientCert(FrontProxyClientName)
}

// RenewingClientCert issues a client certificate CN=cn, O=orgs (like
// IssueClientCert, kept only in memory) and returns a
// tls.Config.GetClientCertificate that presents it and issues a new one
// once it is within 90 days of expiry at the bundle's clock: for the
// server's own clients that live as long as the process (the kubelet client).
func (b *Bundle) RenewingClientCert(cn string, orgs []string) (func(*tls.CertificateRequestInfo) (*tls.Certificate, error), error) {
	spec, err := clientSpec(cn, orgs)
	if err != nil {
		return nil, err
	}
	var mu sync.Mutex
	cur, err := b.ca.issue(b.now(), spec, nil)
	if err != nil {
		return nil, err
	}
	return func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
		mu.Lock()
		defer mu.Unlock()
		if now := b.now(); dueForRenewal(cur.cert.NotAfter, now) {
			kp, err := b.ca.issue(now, spec, nil)
			if err != nil {
				return nil, fmt.Errorf("renewing the %s client certificate: %w", cn, err)
			}
			b.log.Info("renewed client certificate", zap.String("cn", cn), zap.Time("notAfter", kp.cert.NotAfter))
			cur = kp
		}
		c := tlsCert(cur)
		return &c, nil
	}, nil
}
