package datastore

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/hashicorp/raft"
)

// Connection kinds: the first byte a dialler writes on a peer connection
// says whether raft's transport or the forwarding service (writes, read
// index and membership requests from other servers) gets it.
const (
	connRaft    byte = 'R'
	connForward byte = 'F'
)

// tlsStreamLayer is raft's stream layer over mutual TLS on TCP. Accept
// hands raft only the connections that announced themselves as raft's;
// forwarding connections go to the forward handler.
type tlsStreamLayer struct {
	net.Listener
	advertise net.Addr
	client    *tls.Config
	raftConns chan net.Conn
	forward   func(net.Conn) // set before the first Accept
	done      chan struct{}
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
	return &tlsStreamLayer{Listener: ln, advertise: adv, client: client,
		raftConns: make(chan net.Conn), done: make(chan struct{})}, nil
}

// serve accepts connections and sorts them by their first byte until the
// listener closes. Each connection is sorted on its own goroutine so a slow
// or silent peer cannot hold up the others.
func (s *tlsStreamLayer) serve() {
	defer close(s.done)
	for {
		c, err := s.Listener.Accept()
		if err != nil {
			return
		}
		go s.sort(c)
	}
}

func (s *tlsStreamLayer) sort(c net.Conn) {
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	var kind [1]byte
	if _, err := io.ReadFull(c, kind[:]); err != nil {
		_ = c.Close()
		return
	}
	_ = c.SetReadDeadline(time.Time{})
	switch {
	case kind[0] == connRaft:
		select {
		case s.raftConns <- c:
		case <-s.done:
			_ = c.Close()
		}
	case kind[0] == connForward && s.forward != nil:
		s.forward(c)
	default:
		_ = c.Close()
	}
}

// Accept implements net.Listener for raft: the next raft connection.
func (s *tlsStreamLayer) Accept() (net.Conn, error) {
	select {
	case c := <-s.raftConns:
		return c, nil
	case <-s.done:
		return nil, net.ErrClosed
	}
}

// dialKind dials a peer and announces the connection's kind.
func (s *tlsStreamLayer) dialKind(address string, timeout time.Duration, kind byte) (net.Conn, error) {
	d := &net.Dialer{Timeout: timeout}
	conn, err := tls.DialWithDialer(d, "tcp", address, s.client)
	if err != nil {
		return nil, fmt.Errorf("raft transport: dial %s: %w", address, err)
	}
	_ = conn.SetWriteDeadline(time.Now().Add(timeout))
	if _, err := conn.Write([]byte{kind}); err != nil {
		_ = conn.Close()
		return nil, fmt.Errorf("raft transport: dial %s: %w", address, err)
	}
	_ = conn.SetWriteDeadline(time.Time{})
	return conn, nil
}

// Addr implements net.Listener with the advertised address.
func (s *tlsStreamLayer) Addr() net.Addr { return s.advertise }

// Dial implements raft.StreamLayer.
func (s *tlsStreamLayer) Dial(address raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	return s.dialKind(string(address), timeout, connRaft)
}
