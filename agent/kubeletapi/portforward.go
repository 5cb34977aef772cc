package kubeletapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	gwebsocket "github.com/gorilla/websocket"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/httpstream"
	"k8s.io/apimachinery/pkg/util/httpstream/spdy"
	portforwardconsts "k8s.io/apimachinery/pkg/util/portforward"
	"k8s.io/client-go/tools/portforward"
)

// servePortForward answers /portForward/{ns}/{pod}: SPDY
// (portforward.k8s.io), or SPDY tunneled in WebSocket binary messages
// (subprotocol SPDY/3.1+portforward.k8s.io, kubectl's default since 1.31).
func (s *Server) servePortForward(w http.ResponseWriter, r *http.Request) {
	ns, name := r.PathValue("ns"), r.PathValue("pod")
	pod, ok := s.cfg.PodLookup(ns, name)
	if !ok {
		writeErr(w, &httpError{http.StatusNotFound, "NotFound", fmt.Sprintf("pod %q not found in namespace %q on this node", name, ns)})
		return
	}
	if pod.IP == "" {
		writeErr(w, badRequest(fmt.Sprintf("pod %s has no IP yet", name)))
		return
	}
	streamCh := make(chan httpstream.Stream, 1)
	var conn httpstream.Connection
	if isTunnelRequest(r) {
		conn = s.tunnelUpgrade(w, r, streamCh)
	} else {
		if _, err := httpstream.Handshake(r, w, []string{portforwardconsts.PortForwardV1Name}); err != nil {
			return // Handshake answered the client
		}
		conn = spdy.NewResponseUpgrader().UpgradeResponse(w, r, streamReceived(streamCh))
	}
	if conn == nil {
		return
	}
	defer conn.Close()
	conn.SetIdleTimeout(streamIdleTimeout)
	h := &pfHandler{log: s.log.With(zap.String("pod", ns+"/"+name)), conn: conn, streams: streamCh,
		pairs: map[string]*pfPair{}, ip: pod.IP}
	h.run()
}

func isTunnelRequest(r *http.Request) bool {
	if !strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
		return false
	}
	for _, p := range gwebsocket.Subprotocols(r) {
		if p == portforwardconsts.WebsocketsSPDYTunnelingPortForwardV1 {
			return true
		}
	}
	return false
}

// tunnelUpgrade accepts the WebSocket and runs a SPDY server session inside
// it (what upstream's streamtunnel.go does on the API server, here on the node).
func (s *Server) tunnelUpgrade(w http.ResponseWriter, r *http.Request, streamCh chan httpstream.Stream) httpstream.Connection {
	up := gwebsocket.Upgrader{
		CheckOrigin:  func(*http.Request) bool { return true },
		Subprotocols: []string{portforwardconsts.WebsocketsSPDYTunnelingPortForwardV1},
	}
	ws, err := up.Upgrade(w, r, nil)
	if err != nil {
		s.log.Debug("port-forward websocket upgrade", zap.Error(err))
		return nil // Upgrade answered the client
	}
	tc := portforward.NewTunnelingConnection("server", ws)
	conn, err := spdy.NewServerConnection(tc, streamReceived(streamCh))
	if err != nil {
		s.log.Debug("port-forward spdy in websocket", zap.Error(err))
		tc.Close()
		return nil
	}
	return conn
}

// streamReceived checks a new stream's headers and hands it on.
func streamReceived(out chan httpstream.Stream) httpstream.NewStreamHandler {
	return func(st httpstream.Stream, _ <-chan struct{}) error {
		ps := st.Headers().Get(corev1.PortHeader)
		port, err := strconv.ParseUint(ps, 10, 16)
		if err != nil || port < 1 {
			return fmt.Errorf("%q header must be a port number, not %q", corev1.PortHeader, ps)
		}
		if t := st.Headers().Get(corev1.StreamType); t != corev1.StreamTypeError && t != corev1.StreamTypeData {
			return fmt.Errorf("invalid stream type %q", t)
		}
		out <- st
		return nil
	}
}

// pfHandler pairs data and error streams by requestID and forwards each pair
// to the pod's IP (the kubelet's httpStreamHandler).
type pfHandler struct {
	log     *zap.Logger
	conn    httpstream.Connection
	streams chan httpstream.Stream
	mu      sync.Mutex
	pairs   map[string]*pfPair
	ip      string
}

type pfPair struct {
	data, errs httpstream.Stream
	complete   chan struct{}
}

func (h *pfHandler) run() {
	for {
		select {
		case <-h.conn.CloseChan():
			return
		case st := <-h.streams:
			h.add(st)
		}
	}
}

func (h *pfHandler) add(st httpstream.Stream) {
	id := st.Headers().Get(corev1.PortForwardRequestIDHeader)
	typ := st.Headers().Get(corev1.StreamType)
	if id == "" { // old clients: IDs follow from stream identifiers
		n := int(st.Identifier())
		if typ == corev1.StreamTypeData {
			n -= 2
		}
		id = strconv.Itoa(n)
	}
	h.mu.Lock()
	p, ok := h.pairs[id]
	if !ok {
		p = &pfPair{complete: make(chan struct{})}
		h.pairs[id] = p
		go h.expire(id, p)
	}
	dup := (typ == corev1.StreamTypeData && p.data != nil) || (typ == corev1.StreamTypeError && p.errs != nil)
	if !dup && typ == corev1.StreamTypeData {
		p.data = st
	} else if !dup {
		p.errs = st
	}
	complete := !dup && p.data != nil && p.errs != nil
	h.mu.Unlock()
	if dup {
		h.log.Debug("duplicate port-forward stream", zap.String("request", id), zap.String("type", typ))
		_ = st.Reset()
		return
	}
	if complete {
		close(p.complete)
		go h.forward(p)
	}
}

func (h *pfHandler) expire(id string, p *pfPair) {
	t := time.NewTimer(streamCreationTimeout)
	defer t.Stop()
	select {
	case <-t.C:
		h.mu.Lock()
		if p.errs != nil {
			fmt.Fprintf(p.errs, "timed out waiting for the data and error streams of request %s", id)
		}
		h.mu.Unlock()
	case <-p.complete:
	}
	h.mu.Lock()
	delete(h.pairs, id)
	h.mu.Unlock()
	h.conn.RemoveStreams(streamsOf(p)...)
}

func streamsOf(p *pfPair) []httpstream.Stream {
	var out []httpstream.Stream
	if p.data != nil {
		out = append(out, p.data)
	}
	if p.errs != nil {
		out = append(out, p.errs)
	}
	return out
}

func (h *pfHandler) forward(p *pfPair) {
	defer p.data.Close()
	defer p.errs.Close()
	port := p.data.Headers().Get(corev1.PortHeader)
	if err := forwardTCP(context.Background(), net.JoinHostPort(h.ip, port), p.data); err != nil {
		h.log.Debug("port-forward", zap.String("port", port), zap.Error(err))
		fmt.Fprintf(p.errs, "error forwarding port %s to pod IP %s: %v", port, h.ip, err)
		_ = p.data.Reset()
		_ = p.errs.Reset()
	}
}

// forwardTCP copies between stream and a TCP connection to addr until the
// pod side ends; the client's end of input half-closes the connection.
func forwardTCP(ctx context.Context, addr string, stream io.ReadWriter) error {
	d := net.Dialer{Timeout: 10 * time.Second}
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	defer c.Close()
	go func() {
		_, _ = io.Copy(c, stream)
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.CloseWrite()
		}
	}()
	if _, err := io.Copy(stream, c); err != nil && !errors.Is(err, net.ErrClosed) {
		return fmt.Errorf("copy from pod: %w", err)
	}
	return nil
}
