package pki

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	"go.uber.org/zap"
)

// Front-proxy identity: the API server authenticates to aggregated API
// servers with a client certificate of a CA of its own (upstream's
// front-proxy-ca), kept in <tls-dir>/front-proxy/.
const (
	FrontProxyDir        = "front-proxy"
	FrontProxyClientName = "front-proxy-client"
)

// frontProxy is the front-proxy CA and client certificate.
type frontProxy struct {
	ca     *keyPair
	client *leaf
}

func loadOrCreateFrontProxy(dir string, now time.Time, validity time.Duration, log *zap.Logger) (*frontProxy, error) {
	fpDir := filepath.Join(dir, FrontProxyDir)
	if err := ensurePrivateDir(fpDir); err != nil {
		return nil, err
	}
	ca, err := loadOrCreateCA(fpDir, now, log.With(zap.String("ca", "front-proxy")))
	if err != nil {
		return nil, fmt.Errorf("front-proxy CA: %w", err)
	}
	spec := leafSpec{commonName: FrontProxyClientName, extUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, validity: validity}
	client, err := ensureLeaf(fpDir, FrontProxyClientName, ca, spec, now, log)
	if err != nil {
		return nil, fmt.Errorf("front-proxy client certificate: %w", err)
	}
	return &frontProxy{ca: ca, client: &leaf{name: FrontProxyClientName, dir: fpDir, ca: ca, spec: spec, kp: client}}, nil
}

// FrontProxyCAPEM is the front-proxy CA certificate (requestheader-client-ca-file).
func (b *Bundle) FrontProxyCAPEM() []byte { return slices.Clone(b.front.ca.certPEM) }

// FrontProxyClientCert is the client certificate (CN front-proxy-client) the
// API server presents to aggregated API servers.
func (b *Bundle) FrontProxyClientCert() (tls.Certificate, error) {
	kp := b.leaves.get(FrontProxyClientName)
	return tls.X509KeyPair(kp.certPEM, kp.keyPEM)
}
