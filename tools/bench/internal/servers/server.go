package servers

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"time"

	"github.com/orch/orch/tools/bench/internal/proc"
)

// Server is a running server under test.
type Server struct {
	Name       string
	Kubeconfig string
	Procs      []*proc.Proc // in start order; stopped in reverse
	// Endpoints are the kubeconfigs of every API server of a cluster
	// (StartOrchCluster), in start order; empty for a single server.
	Endpoints []string
	apiPorts  []int // of Endpoints, to find the leader
	// Ready is the time from starting the first process to /readyz OK.
	Ready time.Duration
}

// Kubeconfigs returns Endpoints, or just Kubeconfig for a single server.
func (s *Server) Kubeconfigs() []string {
	if len(s.Endpoints) > 0 {
		return s.Endpoints
	}
	return []string{s.Kubeconfig}
}

// Stop stops every process, last started first.
func (s *Server) Stop() error {
	var errs []error
	for i := len(s.Procs) - 1; i >= 0; i-- {
		errs = append(errs, s.Procs[i].Stop(15*time.Second))
	}
	return errors.Join(errs...)
}

// RSSKiB returns the resident set size of each process group and their sum.
func (s *Server) RSSKiB() (map[string]int64, int64, error) {
	by := map[string]int64{}
	var total int64
	for _, p := range s.Procs {
		rss, err := p.GroupRSSKiB()
		if err != nil {
			return nil, 0, err
		}
		by[p.Name] = rss
		total += rss
	}
	return by, total, nil
}

// CPUSeconds returns the summed user+system CPU time of the processes.
func (s *Server) CPUSeconds() (float64, error) {
	var total float64
	for _, p := range s.Procs {
		c, err := p.CPUSeconds()
		if err != nil {
			return 0, err
		}
		total += c
	}
	return total, nil
}

// Alive returns an error if any process has exited.
func (s *Server) Alive() error {
	for _, p := range s.Procs {
		if exited, err := p.Exited(); exited {
			return fmt.Errorf("%s exited: %v", p.Name, err)
		}
	}
	return nil
}

// freePort asks the kernel for an unused loopback port.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func hostPort(port int) string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(port)) }

// waitTCP waits until something accepts connections on addr.
func waitTCP(ctx context.Context, addr string, p *proc.Proc, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if exited, err := p.Exited(); exited {
			return fmt.Errorf("%s exited before listening on %s: %v", p.Name, addr, err)
		}
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
	return fmt.Errorf("%s: nothing listening on %s after %s", p.Name, addr, timeout)
}

// tail returns the last n bytes of a log file, for error messages.
func tail(path string, n int64) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return ""
	}
	off := max(0, st.Size()-n)
	buf := make([]byte, st.Size()-off)
	if _, err := f.ReadAt(buf, off); err != nil {
		return ""
	}
	return string(buf)
}
