package pki

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"slices"
)

// ErrNotPeer means a TLS peer presented a certificate of the cluster CA that
// is not a Raft peer certificate (for example a node or admin certificate).
var ErrNotPeer = errors.New("certificate is not an orch peer certificate")

// ServerTLSConfig is the configuration of the HTTPS API server: TLS 1.2+ and
// the serving certificate (read at each handshake, so a renewed one is
// served at once). Client certificates are requested but verified by
// the API server's authenticator (server/auth), as kube-apiserver does, so a
// certificate from a foreign CA gets an HTTP 401 Status rather than a TLS
// alert, and bearer tokens remain possible. ClientCAs only hints clients
// which certificate to send.
func (b *Bundle) ServerTLSConfig() *tls.Config {
	return &tls.Config{
		MinVersion: tls.VersionTLS12,
		// Certificates stays empty so every handshake asks GetCertificate.
		GetCertificate: b.leaves.serverCert(LeafServing),
		ClientAuth:     tls.RequestClientCert,
		ClientCAs:      b.CAPool(),
		NextProtos:     []string{"h2", "http/1.1"},
	}
}

// PeerServerTLS is the listening side of the Raft transport: mutual TLS
// that only admits peer certificates of the cluster CA.
func (b *Bundle) PeerServerTLS() *tls.Config {
	return &tls.Config{
		MinVersion:       tls.VersionTLS12,
		GetCertificate:   b.leaves.serverCert(LeafPeer),
		ClientAuth:       tls.RequireAndVerifyClientCert,
		ClientCAs:        b.CAPool(),
		VerifyConnection: verifyPeerConnection,
	}
}

// PeerClientTLS is the dialling side of the Raft transport. Peers are
// dialled by IP; the name checked is PeerServerName, which every peer
// certificate carries, so any address works.
func (b *Bundle) PeerClientTLS() *tls.Config {
	return &tls.Config{
		MinVersion:           tls.VersionTLS12,
		GetClientCertificate: b.leaves.clientCert(LeafPeer),
		RootCAs:              b.CAPool(),
		ServerName:           PeerServerName,
		VerifyConnection:     verifyPeerConnection,
	}
}

// verifyPeerConnection runs after the standard chain verification and
// rejects certificates of the CA that were not issued to Raft peers.
func verifyPeerConnection(cs tls.ConnectionState) error {
	if len(cs.PeerCertificates) == 0 {
		return fmt.Errorf("no peer certificate: %w", ErrNotPeer)
	}
	return checkPeerCert(cs.PeerCertificates[0])
}

func checkPeerCert(c *x509.Certificate) error {
	if !slices.Contains(c.Subject.Organization, PeerOrganization) ||
		!slices.Contains(c.ExtKeyUsage, x509.ExtKeyUsageServerAuth) ||
		!slices.Contains(c.ExtKeyUsage, x509.ExtKeyUsageClientAuth) {
		return fmt.Errorf("subject %q: %w", c.Subject.String(), ErrNotPeer)
	}
	return nil
}
