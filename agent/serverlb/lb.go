package serverlb

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"sync"
	"time"

	"go.uber.org/zap"
)

// dialTimeout bounds the connect to one server before the next is tried.
const dialTimeout = 3 * time.Second

// Balancer dials the current API server and fails over to the others.
type Balancer struct {
	log     *zap.Logger
	dialer  net.Dialer
	mu      sync.Mutex
	join    string   // the --join address: always kept
	servers []string // host:port; servers[0] is the current one
	conns   map[string]map[*conn]struct{}
	state   string // where the server list is kept across restarts ("" = nowhere)
}

// New returns a Balancer that starts with the server at join (host:port).
func New(join string, log *zap.Logger) *Balancer {
	return &Balancer{log: log, join: join, servers: []string{join}, conns: map[string]map[*conn]struct{}{}}
}

// Servers returns the known servers, the current one first.
func (b *Balancer) Servers() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.servers)
}

// SetServers replaces the known servers (host:port) keeping the join
// address and the current server.
func (b *Balancer) SetServers(addrs []string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	next := []string{b.servers[0]}
	for _, a := range append(slices.Clone(addrs), b.join) {
		if !slices.Contains(next, a) {
			next = append(next, a)
		}
	}
	if slices.Equal(next, b.servers) {
		return
	}
	b.log.Info("API servers", zap.Strings("servers", next))
	b.servers = next
	if b.state != "" {
		if err := writeState(b.state, next); err != nil {
			b.log.Warn("keeping the API server list", zap.Error(err))
		}
	}
}

// Persist keeps the server list in path from now on and adds the servers
// an earlier run kept there, so an agent that restarts while the --join
// server is down still finds the others.
func (b *Balancer) Persist(path string) {
	kept := readState(path)
	b.mu.Lock()
	b.state = path
	b.mu.Unlock()
	if len(kept) > 0 {
		b.SetServers(kept)
	}
}

func readState(path string) []string {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var servers []string
	if json.Unmarshal(data, &servers) != nil {
		return nil
	}
	return servers
}

func writeState(path string, servers []string) error {
	data, err := json.Marshal(servers)
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// DialContext connects to the current server, else to the next reachable
// one, which becomes current. The address asked for is ignored: every
// server answers for the cluster.
func (b *Balancer) DialContext(ctx context.Context, network, _ string) (net.Conn, error) {
	var errs []error
	for _, addr := range b.Servers() {
		dctx, cancel := context.WithTimeout(ctx, dialTimeout)
		c, err := b.dialer.DialContext(dctx, network, addr)
		cancel()
		if err == nil {
			b.use(addr)
			return b.track(addr, c), nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	return nil, fmt.Errorf("no API server reachable: %w", errors.Join(errs...))
}

// use makes addr the current server.
func (b *Balancer) use(addr string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.servers[0] == addr {
		return
	}
	i := slices.Index(b.servers, addr)
	if i < 0 {
		return
	}
	old := b.servers[0]
	b.servers = append([]string{addr}, slices.Delete(slices.Clone(b.servers), i, i+1)...)
	b.log.Info("API server failover", zap.String("from", old), zap.String("to", addr))
}

// failOver makes the next server current and closes the connections to
// the old one, so requests and watches reconnect to the new one.
func (b *Balancer) failOver(bad string) {
	b.mu.Lock()
	if b.servers[0] != bad || len(b.servers) < 2 {
		b.mu.Unlock()
		return
	}
	b.servers = slices.Concat(b.servers[1:], []string{bad})
	next := b.servers[0]
	conns := b.conns[bad]
	b.conns[bad] = nil
	b.mu.Unlock()
	b.log.Warn("API server not ready; failing over", zap.String("from", bad), zap.String("to", next))
	for c := range conns {
		_ = c.Conn.Close()
	}
}

// Run checks the current server with ready every interval while there is
// another to fail over to, until ctx ends.
func (b *Balancer) Run(ctx context.Context, interval time.Duration, ready func(ctx context.Context, addr string) error) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		servers := b.Servers()
		if len(servers) < 2 {
			continue
		}
		cctx, cancel := context.WithTimeout(ctx, interval)
		err := ready(cctx, servers[0])
		cancel()
		if err != nil && ctx.Err() == nil {
			b.log.Debug("API server readiness check failed", zap.String("server", servers[0]), zap.Error(err))
			b.failOver(servers[0])
		}
	}
}

// conn is a connection the balancer can close on failover.
type conn struct {
	net.Conn
	b    *Balancer
	addr string
	once sync.Once
}

func (b *Balancer) track(addr string, c net.Conn) net.Conn {
	tc := &conn{Conn: c, b: b, addr: addr}
	b.mu.Lock()
	if b.conns[addr] == nil {
		b.conns[addr] = map[*conn]struct{}{}
	}
	b.conns[addr][tc] = struct{}{}
	b.mu.Unlock()
	return tc
}

// Close implements net.Conn and forgets the connection.
func (c *conn) Close() error {
	c.once.Do(func() {
		c.b.mu.Lock()
		delete(c.b.conns[c.addr], c)
		c.b.mu.Unlock()
	})
	return c.Conn.Close()
}
