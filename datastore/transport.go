package datastore

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/hashicorp/raft"
)

// tlsStreamLayer is raft's stream layer over mutual TLS on TCP.
type tlsStreamLayer struct {
	net.Listener
	advertise net.Addr
	client    *tls.Config
}

var _ raft.StreamLayer = (*tlsStreamLayer)(nil)

// newTLSStreamLayer listens on bind with server (client certificates
// required) and dials peers with client.
func newTLSStreamLayer(bind, advertise string, server, client *tls.Config) (*tlsStreamLayer, error) {
	if server == nil || client == nil {
		return nil, errors.New("raft transport: ServerTLS and ClientTLS are required")
	}
	server = server.Clone()
	server.ClientAuth = tls.RequireAndVerifyClientCert
	if server.MinVersion < tls.VersionTLS12 {
		server.MinVersion = tls.VersionTLS12
	}
	ln, err := tls.Listen("tcp", bind, server)
	if err != nil {
		return nil, fmt.Errorf("raft transport: listen on %s: %w", bind, err)
	}
	var adv net.Addr = ln.Addr()
	if advertise != "" {
		a, err := net.ResolveTCPAddr("tcp", advertise)
		if err != nil {
			_ = ln.Close()
			return nil, fmt.Errorf("raft transport: advertise address %q: %w", advertise, err)
		}
		adv = a
	}
	if tcp, ok := adv.(*net.TCPAddr); ok && tcp.IP.IsUnspecified() {
		_ = ln.Close()
		return nil, fmt.Errorf("raft transport: advertise address %s is not routable; set AdvertiseAddr", adv)
	}
	return &tlsStreamLayer{Listener: ln, advertise: adv, client: client}, nil
}

// Addr implements net.Listener with the advertised address.
func (s *tlsStreamLayer) Addr() net.Addr { return s.advertise }

// Dial implements raft.StreamLayer.
func (s *tlsStreamLayer) Dial(address raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	d := &net.Dialer{Timeout: timeout}
	conn, err := tls.DialWithDialer(d, "tcp", string(address), s.client)
	if err != nil {
		return nil, fmt.Errorf("raft transport: dial %s: %w", address, err)
	}
	return conn, nil
}
