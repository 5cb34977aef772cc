package pki

import (
	"crypto/tls"
	"errors"
	"io"
	"net"
	"testing"
	"time"
)

// handshake runs one TLS exchange over loopback and returns the server's and
// the client's handshake errors.
func handshake(t *testing.T, serverCfg, clientCfg *tls.Config) (serverErr, clientErr error) {
	t.Helper()
	ln, err := tls.Listen("tcp", "127.0.0.1:0", serverCfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	done := make(chan error, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			done <- err
			return
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(10 * time.Second))
		if err := c.(*tls.Conn).Handshake(); err != nil {
			done <- err
			return
		}
		_, err = c.Write([]byte("x"))
		done <- err
	}()
	d := &net.Dialer{Timeout: 10 * time.Second}
	c, err := tls.DialWithDialer(d, "tcp", ln.Addr().String(), clientCfg)
	if err == nil {
		_ = c.SetDeadline(time.Now().Add(10 * time.Second))
		_, err = io.ReadFull(c, make([]byte, 1))
		_ = c.Close()
	}
	return <-done, err
}

func TestPeerMutualTLS(t *testing.T) {
	dir := t.TempDir()
	a := mustLoad(t, dir, testOpts(t))
	o := testOpts(t)
	o.Hostname = "other"
	peerB := mustLoad(t, t.TempDir(), o) // a different cluster CA
	if sErr, cErr := handshake(t, a.PeerServerTLS(), a.PeerClientTLS()); sErr != nil || cErr != nil {
		t.Fatalf("peer handshake: server %v, client %v", sErr, cErr)
	}

	adminAsPeer := a.PeerClientTLS()
	adminCert, err := tls.X509KeyPair(a.AdminCertPEM(), a.AdminKeyPEM())
	if err != nil {
		t.Fatal(err)
	}
	adminAsPeer.Certificates, adminAsPeer.GetClientCertificate = []tls.Certificate{adminCert}, nil
	if sErr, _ := handshake(t, a.PeerServerTLS(), adminAsPeer); !errors.Is(sErr, ErrNotPeer) {
		t.Errorf("admin certificate accepted by peer server: %v", sErr)
	}

	noCert := a.PeerClientTLS()
	noCert.Certificates, noCert.GetClientCertificate = nil, nil
	if sErr, _ := handshake(t, a.PeerServerTLS(), noCert); sErr == nil {
		t.Error("peer server accepted a client without a certificate")
	}
	if _, cErr := handshake(t, peerB.PeerServerTLS(), a.PeerClientTLS()); cErr == nil {
		t.Error("peer client trusted a server of another CA")
	}
	if sErr, _ := handshake(t, a.PeerServerTLS(), peerB.PeerClientTLS()); sErr == nil {
		t.Error("peer server trusted a client of another CA")
	}
	if _, cErr := handshake(t, a.ServerTLSConfig(), a.PeerClientTLS()); cErr == nil {
		t.Error("peer client accepted the API serving certificate")
	}
}

func TestServerTLSConfig(t *testing.T) {
	b := mustLoad(t, t.TempDir(), testOpts(t))
	cfg := b.ServerTLSConfig()
	if cfg.MinVersion != tls.VersionTLS12 || cfg.ClientAuth != tls.RequestClientCert {
		t.Fatalf("MinVersion %x ClientAuth %v", cfg.MinVersion, cfg.ClientAuth)
	}
	adminCert, err := tls.X509KeyPair(b.AdminCertPEM(), b.AdminKeyPEM())
	if err != nil {
		t.Fatal(err)
	}
	withCert := &tls.Config{RootCAs: b.CAPool(), ServerName: "localhost", Certificates: []tls.Certificate{adminCert}}
	if sErr, cErr := handshake(t, cfg, withCert); sErr != nil || cErr != nil {
		t.Fatalf("with client cert: server %v, client %v", sErr, cErr)
	}
	anonymous := &tls.Config{RootCAs: b.CAPool(), ServerName: "kubernetes.default.svc"}
	if sErr, cErr := handshake(t, b.ServerTLSConfig(), anonymous); sErr != nil || cErr != nil {
		t.Fatalf("without client cert: server %v, client %v", sErr, cErr)
	}
	old := &tls.Config{RootCAs: b.CAPool(), ServerName: "localhost", MaxVersion: tls.VersionTLS11}
	if _, cErr := handshake(t, b.ServerTLSConfig(), old); cErr == nil {
		t.Error("TLS 1.1 accepted")
	}
}
