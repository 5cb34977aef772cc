package dns

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"syscall"
	"time"

	"github.com/miekg/dns"
	"go.uber.org/zap"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
)

// Config is what the DNS server needs.
type Config struct {
	Client kubernetes.Interface
	// Informers, when set, is the agent's shared factory the Services and
	// EndpointSlices come from (else the server watches them itself).
	Informers     informers.SharedInformerFactory
	ClusterDNS    string // the address served (--cluster-dns, 10.43.0.10)
	ClusterDomain string // cluster.local
	// LinkName is the dummy interface the agent puts ClusterDNS on and
	// removes at the end; empty leaves interfaces alone (the address must
	// exist already, e.g. a loopback address in tests).
	LinkName string
	Port     int // 53
	// ResolvConf holds the upstream nameservers (default /etc/resolv.conf).
	ResolvConf string
	// Upstreams (host:port) replace ResolvConf's nameservers when set.
	Upstreams []string
	Timeout   time.Duration // per forwarded query (default 2s)
	Logger    *zap.Logger
}

// Server answers DNS on ClusterDNS:Port over UDP and TCP.
type Server struct {
	cfg   Config
	ip    net.IP
	log   *zap.Logger
	cache *Cache
	h     *handler
	ready chan struct{}
}

// New checks cfg and registers the cache's informers; Run serves.
func New(cfg Config) (*Server, error) {
	if cfg.Client == nil || cfg.Logger == nil {
		return nil, errors.New("dns: Client and Logger are required")
	}
	ip := net.ParseIP(cfg.ClusterDNS)
	if ip == nil {
		return nil, fmt.Errorf("dns: cluster DNS %q is not an IP address", cfg.ClusterDNS)
	}
	if cfg.ClusterDomain == "" {
		cfg.ClusterDomain = "cluster.local"
	}
	if cfg.Port == 0 {
		cfg.Port = 53
	}
	if cfg.ResolvConf == "" {
		cfg.ResolvConf = "/etc/resolv.conf"
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = 2 * time.Second
	}
	c, err := NewCache(cfg.Client, cfg.Informers)
	if err != nil {
		return nil, err
	}
	ups := &upstreams{path: cfg.ResolvConf, fixed: cfg.Upstreams, exclude: []net.IP{ip}}
	h := &handler{zone: newZone(cfg.ClusterDomain, ip, c), fwd: newForwarder(ups, cfg.Timeout),
		log: cfg.Logger, timeout: 2 * cfg.Timeout}
	return &Server{cfg: cfg, ip: ip, log: cfg.Logger, cache: c, h: h, ready: make(chan struct{})}, nil
}

// Ready is closed once the server listens and its cache is synced.
func (s *Server) Ready() <-chan struct{} { return s.ready }

// Run puts the address on the dummy interface, syncs the cache and serves
// until ctx ends; then it stops serving and removes the interface.
func (s *Server) Run(ctx context.Context) error {
	if s.cfg.LinkName != "" {
		if err := EnsureLink(s.cfg.LinkName, s.ip); err != nil {
			return fmt.Errorf("dns: %w", err)
		}
		defer func() {
			if err := RemoveLink(s.cfg.LinkName); err != nil {
				s.log.Warn("removing the DNS interface", zap.Error(err))
			}
		}()
	}
	addr := net.JoinHostPort(s.ip.String(), strconv.Itoa(s.cfg.Port))
	pc, ln, err := s.listen(ctx, addr)
	if err != nil {
		return err
	}
	defer s.serve(ctx, &dns.Server{PacketConn: pc, Handler: s.h})()
	defer s.serve(ctx, &dns.Server{Listener: ln, Handler: s.h})()
	defer s.cache.Shutdown()
	if err := s.cache.Start(ctx); err != nil {
		return fmt.Errorf("dns: %w", err)
	}
	s.h.synced.Store(true)
	close(s.ready)
	s.log.Info("cluster DNS serving", zap.String("addr", addr), zap.String("domain", s.cfg.ClusterDomain),
		zap.String("interface", s.cfg.LinkName))
	<-ctx.Done()
	return nil
}

// serve runs srv until the returned func shuts it down.
func (s *Server) serve(ctx context.Context, srv *dns.Server) func() {
	started, done := make(chan struct{}), make(chan struct{})
	srv.NotifyStartedFunc = func() { close(started) }
	go func() {
		defer close(done)
		if err := srv.ActivateAndServe(); err != nil && ctx.Err() == nil {
			s.log.Error("DNS server stopped", zap.Error(err))
		}
	}()
	return func() {
		select {
		case <-started:
			_ = srv.Shutdown()
		case <-done:
		}
		<-done
	}
}

// listen binds UDP and TCP on addr, retrying while another process holds
// the port (e.g. a second agent on the same host during tests).
func (s *Server) listen(ctx context.Context, addr string) (net.PacketConn, net.Listener, error) {
	delay := time.Second
	for {
		pc, ln, err := bind(addr)
		if err == nil {
			return pc, ln, nil
		}
		if !errors.Is(err, syscall.EADDRINUSE) {
			return nil, nil, fmt.Errorf("dns: %w", err)
		}
		s.log.Warn("the cluster DNS address is in use; retrying", zap.String("addr", addr),
			zap.Duration("in", delay), zap.Error(err))
		select {
		case <-ctx.Done():
			return nil, nil, fmt.Errorf("dns: listening on %s: %w", addr, ctx.Err())
		case <-time.After(delay):
		}
		delay = min(2*delay, 30*time.Second)
	}
}

func bind(addr string) (net.PacketConn, net.Listener, error) {
	pc, err := net.ListenPacket("udp", addr)
	if err != nil {
		return nil, nil, fmt.Errorf("listen udp %s: %w", addr, err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		_ = pc.Close()
		return nil, nil, fmt.Errorf("listen tcp %s: %w", addr, err)
	}
	return pc, ln, nil
}
