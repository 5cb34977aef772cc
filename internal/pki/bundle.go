package pki

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	"go.uber.org/zap"
)

// File names inside the TLS directory.
const (
	CACertFile      = "ca.crt"
	CAKeyFile       = "ca.key"
	ServingCertFile = "serving.crt"
	ServingKeyFile  = "serving.key"
	PeerCertFile    = "peer.crt"
	PeerKeyFile     = "peer.key"
	AdminCertFile   = "admin.crt"
	AdminKeyFile    = "admin.key"
)

// Identities baked into the certificates.
const (
	AdminUser         = "system:admin"
	AdminGroup        = "system:masters"
	ServingCommonName = "orch-apiserver"
	PeerCommonName    = "orch-peer"
	PeerOrganization  = "system:orch-peers"
	PeerServerName    = "orch-peer" // DNS SAN of every peer cert; PeerClientTLS verifies it
	certFileMode      = 0o644
	keyFileMode       = 0o600
)

// ErrCAIncomplete means only one of ca.crt and ca.key exists: orch refuses
// to make a new CA over half of an old one.
var ErrCAIncomplete = errors.New("cluster CA is incomplete")

// Bundle is the loaded TLS material of one server.
type Bundle struct {
	dir  string
	now  func() time.Time
	ca   *keyPair
	pool *x509.CertPool
	// leaves are the serving, peer, admin and front-proxy client
	// certificates, renewed in place while the server runs (renew.go).
	leaves *leafSet
	front  *frontProxy
	sans   SANs
	log    *zap.Logger
}

// LoadOrCreate loads the TLS material in dir (<data-dir>/server/tls),
// creating the CA on first start and (re)issuing leaf certificates that are
// missing, invalid, within 90 days of expiry or whose SANs changed.
func LoadOrCreate(dir string, opts Options) (*Bundle, error) {
	log := opts.logger()
	if err := ensurePrivateDir(dir); err != nil {
		return nil, err
	}
	now := opts.now()
	ca, err := loadOrCreateCA(dir, now, log)
	if err != nil {
		return nil, err
	}
	sans, err := WantedSANs(opts)
	if err != nil {
		return nil, err
	}
	b := &Bundle{dir: dir, now: opts.now, ca: ca, pool: x509.NewCertPool(), sans: sans, leaves: &leafSet{}, log: log}
	b.pool.AddCert(ca.cert)
	peerSANs := sans
	peerSANs.DNSNames = append(slices.Clone(sans.DNSNames), PeerServerName)
	specs := []struct {
		name string
		spec leafSpec
	}{
		{LeafServing, leafSpec{commonName: ServingCommonName, dnsNames: sans.DNSNames, ips: sans.IPs,
			extUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}},
		{LeafPeer, leafSpec{commonName: PeerCommonName, orgs: []string{PeerOrganization},
			dnsNames: sansOf(peerSANs.DNSNames, nil).DNSNames, ips: sans.IPs,
			extUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}}},
		{LeafAdmin, leafSpec{commonName: AdminUser, orgs: []string{AdminGroup},
			extUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}},
	}
	for _, s := range specs {
		s.spec.validity = opts.LeafValidity
		kp, err := ensureLeaf(dir, s.name, ca, s.spec, now, log)
		if err != nil {
			return nil, err
		}
		b.leaves.add(&leaf{name: s.name, dir: dir, ca: ca, spec: s.spec, kp: kp})
	}
	if b.front, err = loadOrCreateFrontProxy(dir, now, opts.LeafValidity, log); err != nil {
		return nil, err
	}
	b.leaves.add(b.front.client)
	return b, nil
}

func loadOrCreateCA(dir string, now time.Time, log *zap.Logger) (*keyPair, error) {
	certPath, keyPath := filepath.Join(dir, CACertFile), filepath.Join(dir, CAKeyFile)
	certPEM, err := readOptional(certPath)
	if err != nil {
		return nil, err
	}
	keyPEM, err := readOptional(keyPath)
	if err != nil {
		return nil, err
	}
	switch {
	case certPEM == nil && keyPEM == nil:
		ca, err := newCA(now)
		if err != nil {
			return nil, err
		}
		if err := writePair(certPath, keyPath, ca); err != nil {
			return nil, err
		}
		log.Info("created cluster CA", zap.String("cert", certPath), zap.Time("notAfter", ca.cert.NotAfter))
		return ca, nil
	case certPEM == nil || keyPEM == nil:
		return nil, fmt.Errorf("%w: need both %s and %s in %s", ErrCAIncomplete, CACertFile, CAKeyFile, dir)
	}
	ca, err := parseKeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("load cluster CA from %s: %w", dir, err)
	}
	if !ca.cert.IsCA {
		return nil, fmt.Errorf("load cluster CA: %s is not a CA certificate: %w", certPath, ErrInvalidPEM)
	}
	if now.After(ca.cert.NotAfter) {
		log.Error("cluster CA has expired", zap.Time("notAfter", ca.cert.NotAfter))
	}
	return ca, nil
}

// writePair writes the key first: a crash in between leaves a cert/key
// mismatch that the next start detects and repairs.
func writePair(certPath, keyPath string, kp *keyPair) error {
	if err := writeFileAtomic(keyPath, kp.keyPEM, keyFileMode); err != nil {
		return err
	}
	return writeFileAtomic(certPath, kp.certPEM, certFileMode)
}

// ensureLeaf loads <name>.crt/.key and re-issues them when needed.
func ensureLeaf(dir, name string, ca *keyPair, spec leafSpec, now time.Time, log *zap.Logger) (*keyPair, error) {
	certPath, keyPath := filepath.Join(dir, name+".crt"), filepath.Join(dir, name+".key")
	reason, err := leafReissueReason(certPath, keyPath, ca, spec, now)
	if err != nil {
		return nil, err
	}
	if reason == "" {
		certPEM, _ := readOptional(certPath)
		keyPEM, _ := readOptional(keyPath)
		return parseKeyPair(certPEM, keyPEM)
	}
	kp, err := ca.issue(now, spec, nil)
	if err != nil {
		return nil, err
	}
	if err := writePair(certPath, keyPath, kp); err != nil {
		return nil, err
	}
	log.Info("issued certificate", zap.String("name", name), zap.String("reason", reason),
		zap.Strings("dnsNames", spec.dnsNames), zap.Strings("ips", ipStrings(spec.ips)),
		zap.Time("notAfter", kp.cert.NotAfter))
	return kp, nil
}

// leafReissueReason says why the leaf must be issued again ("" = keep it).
func leafReissueReason(certPath, keyPath string, ca *keyPair, spec leafSpec, now time.Time) (string, error) {
	certPEM, err := readOptional(certPath)
	if err != nil {
		return "", err
	}
	keyPEM, err := readOptional(keyPath)
	if err != nil {
		return "", err
	}
	if certPEM == nil || keyPEM == nil {
		return "missing", nil
	}
	kp, err := parseKeyPair(certPEM, keyPEM)
	if err != nil {
		return "unreadable: " + err.Error(), nil
	}
	c := kp.cert
	switch {
	case !verifiedBy(c, ca.cert, now, spec.extUsage[0]):
		return "not valid for the cluster CA", nil
	case c.NotAfter.Sub(now) < renewBefore:
		return "expires within 90 days", nil
	case c.Subject.CommonName != spec.commonName || !slices.Equal(c.Subject.Organization, spec.orgs):
		return "subject changed", nil
	case !slices.Equal(c.ExtKeyUsage, spec.extUsage):
		return "key usage changed", nil
	case !sansOf(c.DNSNames, c.IPAddresses).Equal(sansOf(spec.dnsNames, spec.ips)):
		return "SANs changed", nil
	}
	return "", nil
}

// Dir is the directory the bundle was loaded from.
func (b *Bundle) Dir() string { return b.dir }

// CAPool returns a pool holding the cluster CA.
func (b *Bundle) CAPool() *x509.CertPool { return b.pool.Clone() }

// CACert returns the cluster CA certificate.
func (b *Bundle) CACert() *x509.Certificate { return b.ca.cert }

// CAPEM returns the PEM encoding of the cluster CA certificate.
func (b *Bundle) CAPEM() []byte { return slices.Clone(b.ca.certPEM) }

// ServingSANs returns the SANs of the serving certificate.
func (b *Bundle) ServingSANs() SANs { return b.sans }

// AdminCertPEM returns the system:admin client certificate.
func (b *Bundle) AdminCertPEM() []byte { return slices.Clone(b.leaves.get(LeafAdmin).certPEM) }

// AdminKeyPEM returns the system:admin client key. Never log it.
func (b *Bundle) AdminKeyPEM() []byte { return slices.Clone(b.leaves.get(LeafAdmin).keyPEM) }

func tlsCert(kp *keyPair) tls.Certificate {
	return tls.Certificate{Certificate: [][]byte{kp.cert.Raw}, PrivateKey: kp.key, Leaf: kp.cert}
}
