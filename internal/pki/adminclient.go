package pki

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"path/filepath"
)

// AdminClientTLS is the TLS configuration of an admin client of a running
// server, from the CA and admin certificate in its TLS directory
// (<data-dir>/server/tls): what `orch etcd-snapshot save` and
// `orch secrets-encrypt` use.
func AdminClientTLS(tlsDir string) (*tls.Config, error) {
	caPath := filepath.Join(tlsDir, CACertFile)
	caPEM, err := os.ReadFile(caPath)
	if err != nil {
		return nil, fmt.Errorf("reading the cluster CA (is --data-dir the server's, and are you root?): %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return nil, fmt.Errorf("%s holds no PEM certificate", caPath)
	}
	cert, err := tls.LoadX509KeyPair(filepath.Join(tlsDir, AdminCertFile), filepath.Join(tlsDir, AdminKeyFile))
	if err != nil {
		return nil, fmt.Errorf("loading the admin client certificate: %w", err)
	}
	return &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: pool, Certificates: []tls.Certificate{cert}}, nil
}
