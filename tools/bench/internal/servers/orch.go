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
	var extra []string
	if pprofAddr != "" {
		extra = append(extra, "--pprof-address", pprofAddr)
	}
	o, err := startOrchProc("orch", dir, bin, extra...)
	if err != nil {
		return nil, err
	}
	s := &Server{Name: "orch", Kubeconfig: o.kubeconfig, Procs: []*proc.Proc{o.p}}
	s.Ready, err = waitReady(ctx, o.kubeconfig, o.logPath, o.p, o.p.Started, 2*time.Minute)
	return s, err
}

// orchProc is one started `orch server`.
type orchProc struct {
	p                   *proc.Proc
	kubeconfig, logPath string
	apiPort             int
}

// startOrchProc starts `orch server --disable-agent` named name with its
// data dir, kubeconfig and log in dir, on free loopback ports, with extra
// flags appended. It does not wait for readiness.
func startOrchProc(name, dir, bin string, extra ...string) (*orchProc, error) {
	apiPort, err := freePort()
	if err != nil {
		return nil, err
	}
	raftPort, err := freePort()
	if err != nil {
		return nil, err
	}
	o := &orchProc{kubeconfig: filepath.Join(dir, "orch.yaml"), logPath: filepath.Join(dir, "orch.log"), apiPort: apiPort}
	args := []string{"server",
		"--data-dir", filepath.Join(dir, "data"),
		"--bind-address", "127.0.0.1",
		"--advertise-address", "127.0.0.1",
		"--https-listen-port", strconv.Itoa(apiPort),
		"--raft-port", strconv.Itoa(raftPort),
		"--write-kubeconfig", o.kubeconfig,
		"--disable-agent",
	}
	o.p, err = proc.Start(name, o.logPath, bin, append(args, extra...)...)
	return o, err
}

// PprofAddr returns a free loopback host:port for orch's pprof endpoint.
func PprofAddr() (string, error) {
	port, err := freePort()
	if err != nil {
		return "", err
	}
	return hostPort(port), nil
}
