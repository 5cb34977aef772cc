package servers

import (
	"context"
	"path/filepath"
	"strconv"
	"time"

	"github.com/orch/orch/tools/bench/internal/proc"
)

// StartOrch runs `orch server --disable-agent` with its data in dir on
// loopback ports and waits for /readyz (authenticated with the admin
// kubeconfig the server writes).
// A non-empty pprofAddr (loopback host:port) turns on orch's pprof endpoint.
func StartOrch(ctx context.Context, dir, bin, pprofAddr string) (*Server, error) {
	apiPort, err := freePort()
	if err != nil {
		return nil, err
	}
	raftPort, err := freePort()
	if err != nil {
		return nil, err
	}
	kubeconfig := filepath.Join(dir, "orch.yaml")
	logPath := filepath.Join(dir, "orch.log")
	args := []string{"server",
		"--data-dir", filepath.Join(dir, "data"),
		"--bind-address", "127.0.0.1",
		"--advertise-address", "127.0.0.1",
		"--https-listen-port", strconv.Itoa(apiPort),
		"--raft-port", strconv.Itoa(raftPort),
		"--write-kubeconfig", kubeconfig,
		"--disable-agent",
	}
	if pprofAddr != "" {
		args = append(args, "--pprof-address", pprofAddr)
	}
	p, err := proc.Start("orch", logPath, bin, args...)
	if err != nil {
		return nil, err
	}
	s := &Server{Name: "orch", Kubeconfig: kubeconfig, Procs: []*proc.Proc{p}}
	s.Ready, err = waitReady(ctx, kubeconfig, logPath, p, p.Started, 2*time.Minute)
	return s, err
}

// PprofAddr returns a free loopback host:port for orch's pprof endpoint.
func PprofAddr() (string, error) {
	port, err := freePort()
	if err != nil {
		return "", err
	}
	return hostPort(port), nil
}
